#!/usr/bin/env bash
# test_ingest_hostile.sh: runs that once jammed or fooled the ingester (issue
# 19): a RunResult with a 1 MB model name is dead-lettered once — its
# DeadLetter on perf.dlq.v1 is cut to fit, with the payload's length — and the
# runs behind it are stored; a model name holding a NUL byte is dead-lettered
# (not stored shortened). Binaries: pw-sim, pw-ingester; protoc and kcat.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS
sim=$PW_BUILD/tools/simulator/pw-sim
ing=$PW_BUILD/services/ingester/pw-ingester
need_bins "$sim" "$ing"

prefix="it-hostile-$$-$(date +%s)-"
work=$(mktemp -d)
ing_pid=""
cleanup() {
  [ -z "$ing_pid" ] || { kill -TERM "$ing_pid" 2>/dev/null || true; wait "$ing_pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- ingester log (tail)"; tail -20 "$work/ing.log" | cut -c1-300 || true; exit 1; }

# the hostile runs, encoded by protoc: only as much of a run as reaches the check
big=$(head -c 1048576 /dev/zero | tr '\0' m)
printf 'run_id: "%sbig"\nkey { model: "%s" model_rev: "r" hlo_fingerprint: "hlo:1" firmware: "f" }\n' \
  "$prefix" "$big" >"$work/big.txt"
protoc --encode=perfwatch.v1.RunResult -I proto proto/perfwatch/v1/run.proto <"$work/big.txt" >"$work/big.bin" ||
  fail "protoc --encode of the big run failed"
printf 'run_id: "%snul"\nkey { model: "chat-8b\\000evil" }\n' "$prefix" >"$work/nul.txt"
protoc --encode=perfwatch.v1.RunResult -I proto proto/perfwatch/v1/run.proto <"$work/nul.txt" >"$work/nul.bin" ||
  fail "protoc --encode of the NUL run failed"
big_len=$(stat -c %s "$work/big.bin")

export PW_KAFKA_GROUP_ID="it-hostile-$$"
export PW_HTTP_PORT=0
# at the topic's end: earlier tests' hostile runs are not this test's
"$PW_BUILD/tools/perfwatch" group to-end "$PW_KAFKA_GROUP_ID" perf.runs.v1 >/dev/null || fail "placing the group at the topic's end"
"$ing" >"$work/ing.log" 2>&1 &
ing_pid=$!
sleep 3
kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.runs.v1 -k "${prefix}big" -X message.max.bytes=4000000 \
  "$work/big.bin" || fail "kcat could not send the big run"
kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.runs.v1 -k "${prefix}nul" "$work/nul.bin" ||
  fail "kcat could not send the NUL run"

# good runs behind them
cat >"$work/small.scn" <<SCN
scenario it-hostile
seed 5
start 2026-06-01
days 2
models chat-8b
platforms v6e-4
configs decode.B64.s2048.int8
SCN
count=$("$sim" count "$work/small.scn")
want=$(grep -o '"samples":[0-9]*' <<<"$count" | cut -d: -f2)
env -u PW_KAFKA_GROUP_ID "$sim" replay "$work/small.scn" --run-prefix "${prefix}ok-" >/dev/null

deadline=$((SECONDS + 120))
while :; do
  got=$(q "SELECT count(*) FROM perfwatch.samples WHERE run_id LIKE '${prefix}ok-%'")
  [ "$got" -ge "$want" ] && break
  [ $SECONDS -lt $deadline ] || fail "only $got of $want samples of the runs behind the big one after 120 s"
  kill -0 "$ing_pid" 2>/dev/null || fail "the ingester exited"
  sleep 0.5
done
echo "ok: the $want samples behind the 1 MB run are stored"
# the hostile runs may sit on partitions another worker reaches later
while [ "$(q "SELECT count(*) FROM perfwatch.dead_letters WHERE convert_from(original_key, 'UTF8') IN ('${prefix}big', '${prefix}nul')")" -lt 2 ]; do
  [ $SECONDS -lt $deadline ] || fail "the hostile runs are not dead-lettered after 120 s"
  kill -0 "$ing_pid" 2>/dev/null || fail "the ingester exited"
  sleep 0.5
done

dl=$(q "SELECT count(*) || ' ' || min(reason) FROM perfwatch.dead_letters WHERE convert_from(original_key, 'UTF8') = '${prefix}big'")
[ "$dl" = "1 oversize" ] || fail "dead letters of the big run: \"$dl\", want \"1 oversize\""
stored=$(q "SELECT length(original_payload) FROM perfwatch.dead_letters WHERE convert_from(original_key, 'UTF8') = '${prefix}big'")
[ "$stored" = "$big_len" ] || fail "the table holds $stored bytes of the big run, want all $big_len"
echo "ok: the 1 MB run is dead-lettered once (oversize), whole in perfwatch.dead_letters"
dl=$(q "SELECT count(*) || ' ' || min(reason) || ' ' || min(detail) FROM perfwatch.dead_letters WHERE convert_from(original_key, 'UTF8') = '${prefix}nul'")
[ "$dl" = "1 invalid_value field \"key.model\" contains a NUL byte" ] || fail "dead letters of the NUL run: \"$dl\""
n=$(q "SELECT count(*) FROM perfwatch.runs WHERE run_id IN ('${prefix}big', '${prefix}nul')")
[ "$n" = 0 ] || fail "$n hostile runs stored"
echo "ok: the NUL run is dead-lettered (invalid_value), nothing stored"

# on the topic: the big run's DeadLetter fits (under 1 MB), sent once
sizes=$(timeout 30 kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.dlq.v1 -o beginning -e -q -f '%S\n' 2>/dev/null || true)
cut_n=$(awk '$1 > 65536 && $1 < 80000' <<<"$sizes" | wc -l)
over=$(awk '$1 >= 1000000' <<<"$sizes" | wc -l)
[ "$over" = 0 ] || fail "$over dead letters over 1 MB on perf.dlq.v1"
[ "$cut_n" -ge 1 ] || fail "no cut dead letter (64 KiB of payload) on perf.dlq.v1: sizes $(echo $sizes | head -c 200)"
# Once, or once more per offset commit a rebalance refused (the batch is then
# redelivered, as at-least-once delivery means: one more send each, keyed by
# the run's source position); a batch retried over and over is the defect.
sent=$(grep -c "dead-lettered perf.runs.v1.*oversize: field ..key.model.. is ${#big} bytes" "$work/ing.log" || true)
refused=$(grep -c "offset commit failed" "$work/ing.log" || true)
[ "$sent" -ge 1 ] && [ "$sent" -le $((1 + refused)) ] ||
  fail "the big run was dead-lettered $sent times with $refused offset commits refused (a batch retried)"
echo "ok: its DeadLetter on perf.dlq.v1 is cut to fit and went out $sent time(s) ($refused commit(s) refused by a rebalance)"
echo "test_ingest_hostile: ok"
