#!/usr/bin/env bash
# test_ingest.sh: simulator -> dev broker -> ingester -> PostgreSQL, then
# counts per series, the worked example's medians and op table as stored,
# duplicates dropped, bad runs dead-lettered, a new HLO fingerprint as a new
# series, and every series point on perf.points.v1.
#
# Run by tests/integration/run.sh with the dev stack up (PW_PG_DSN,
# PW_KAFKA_BOOTSTRAP_SERVERS, PW_BUILD). The runs of this test carry a unique
# run-id prefix, so other tests' data on the shared stack does not count.
# Its runs are keyed by run id (pw-sim --runs-key run_id, the key of
# producers before pw_runs_key; the ingester accepts any key), so that their
# dead letters are found by the key's prefix.
# Binaries: $PW_BUILD/tools/simulator/pw-sim, $PW_BUILD/services/ingester/pw-ingester,
# $PW_BUILD/tests/it_points (PW_SIM_BIN, PW_INGESTER_BIN, PW_IT_POINTS_BIN override);
# protoc and kcat (Debian protobuf-compiler, kcat) encode and send a BisectJob.
set -euo pipefail

. tests/integration/lib.sh
. tests/integration/lib_ingest.sh
ingest_test_bins

scn=tools/simulator/scenarios/worked-example.scn
prefix="it-ingest-$$-$(date +%s)-"
work=$(mktemp -d)
ing_pid=""; pts_pid=""; ans_pid=""
cleanup() {
  [ -z "$ans_pid" ] || { kill -TERM "$ans_pid" 2>/dev/null || true; wait "$ans_pid" 2>/dev/null || true; }
  [ -z "$pts_pid" ] || { kill -TERM "$pts_pid" 2>/dev/null || true; wait "$pts_pid" 2>/dev/null || true; }
  [ -z "$ing_pid" ] || { kill -TERM "$ing_pid" 2>/dev/null || true; wait "$ing_pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- ingester log (tail)"; tail -20 "$work/ing.log" || true; exit 1; }
json() { grep -o "\"$1\":[0-9.]*" <<<"$2" | head -1 | cut -d: -f2; }

export PW_KAFKA_GROUP_ID="it-ingest-$$"
export PW_HTTP_PORT=0
"$ing" >"$work/ing.log" 2>&1 &
ing_pid=$!

count=$("$sim" count "$scn")
want_runs=$(json runs "$count"); want_samples=$(json samples "$count")
# the dev broker keeps only the newest few MB of a partition: count points as they come
"$pts" --prefix "$prefix" --expect $((want_samples + 40)) --timeout 150 >"$work/points.json" 2>"$work/points.log" &
pts_pid=$!
replay=$(env -u PW_KAFKA_GROUP_ID "$sim" replay "$scn" --runs-key run_id --run-prefix "$prefix" --dup-every 50 --bad-every 100)
echo "replay: $replay"
[ "$(json runs "$replay")" = "$want_runs" ] || fail "replay sent $(json runs "$replay") runs, count said $want_runs"
dups_sent=$(json duplicates_sent "$replay"); bad_sent=$(json bad_sent "$replay")

# a second scenario: chat-8b retrained on day 3, a new fingerprint, hence new series
fp_a="hlo:it$$a"; fp_b="hlo:it$$b"
cat >"$work/rev.scn" <<SCN
scenario it-rev
seed 9
start 2026-06-01
days 5
models chat-8b
platforms v6e-4
configs decode.B64.s2048.int8
model_rev model=chat-8b rev=chat-8b@it-a fingerprint=$fp_a day=2026-06-01
model_rev model=chat-8b rev=chat-8b@it-b fingerprint=$fp_b day=2026-06-04
SCN
env -u PW_KAFKA_GROUP_ID "$sim" replay "$work/rev.scn" --runs-key run_id --run-prefix "${prefix}rev-" >/dev/null

deadline=$((SECONDS + 120))
like="run_id LIKE '${prefix}%'"
while :; do
  got=$(q "SELECT count(*) FROM perfwatch.samples WHERE $like AND run_id NOT LIKE '${prefix}rev-%'")
  [ "$got" -ge "$want_samples" ] && [ "$(q "SELECT count(*) FROM perfwatch.samples WHERE run_id LIKE '${prefix}rev-%'")" -ge 40 ] && break
  [ $SECONDS -lt $deadline ] || fail "only $got of $want_samples samples after 120 s"
  kill -0 "$ing_pid" 2>/dev/null || fail "the ingester exited"
  sleep 0.5
done
sleep 1   # let a late duplicate batch land, if any

runs=$(q "SELECT count(*) FROM perfwatch.runs WHERE $like AND run_id NOT LIKE '${prefix}rev-%'")
samples=$(q "SELECT count(*) FROM perfwatch.samples WHERE $like AND run_id NOT LIKE '${prefix}rev-%'")
[ "$runs" = "$want_runs" ] || fail "runs: $runs, want $want_runs ($dups_sent duplicates were sent)"
[ "$samples" = "$want_samples" ] || fail "samples: $samples, want $want_samples"
echo "ok: $runs runs and $samples samples stored once each ($dups_sent duplicate runs dropped)"

# counts per series: 12 series of runs, 90 metric series, 41 nightlies + 5 RC repeats each
per=$(q "SELECT count(DISTINCT series_id) || ' ' || min(c) || ' ' || max(c) FROM (SELECT series_id, count(*) c FROM perfwatch.samples WHERE $like AND run_id NOT LIKE '${prefix}rev-%' GROUP BY series_id) x")
[ "$per" = "90 46 46" ] || fail "per series (series min max): \"$per\", want \"90 46 46\""
echo "ok: 90 series with 46 points each"

# the worked example as stored (§6.3): 3.90 ms before, 4.22 ms in the RC
tpot() { q "SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY p.value)::numeric, 2)
  FROM perfwatch.samples p JOIN perfwatch.series s USING (series_id)
  WHERE p.run_id LIKE '${prefix}%' AND s.model = 'chat-8b' AND s.platform = 'v6e-4'
    AND s.config = 'decode.B64.s2048.int8' AND s.metric = 'tpot_p50_ms' AND $1"; }
before=$(tpot "p.build_kind = 'nightly' AND p.compiler_cl_number <= 7841885")
after=$(tpot "p.build_kind = 'rc'")
[ "$before" = "3.90" ] || fail "baseline TPOT median $before, want 3.90"
[ "$after" = "4.22" ] || fail "RC TPOT median $after, want 4.22"
v5e=$(q "SELECT count(DISTINCT s.hlo_fingerprint) FROM perfwatch.series s WHERE s.model = 'chat-8b' AND s.hlo_fingerprint = 'hlo:9f31c2ab'")
[ "$v5e" = "1" ] || fail "the worked example's fingerprint hlo:9f31c2ab is not a series"
echo "ok: chat-8b v6e-4 decode B64 TPOT p50 $before -> $after ms"

ops=$(q "SELECT string_agg(op_name, ',' ORDER BY op_name) FROM perfwatch.op_timings o
  JOIN perfwatch.runs r USING (run_id, repeat_index)
  WHERE r.run_id LIKE '${prefix}t1-%' AND r.model = 'chat-8b' AND r.platform = 'v6e-4'
    AND r.config = 'decode.B64.s2048.int8' AND r.repeat_index = 0")
[ "$ops" = "fusion.1423a,fusion.1423b,fusion.201,ppermute.77,softmax.88" ] || fail "RC op table: $ops"
echo "ok: RC op table $ops"

# bad runs: dead-lettered with their reason, never stored
dl=$(q "SELECT count(*) || ' ' || min(reason) || ' ' || max(reason) FROM perfwatch.dead_letters
  WHERE convert_from(original_key, 'UTF8') LIKE '${prefix}%'")
[ "$dl" = "$bad_sent invalid_value invalid_value" ] || fail "dead letters: \"$dl\", want \"$bad_sent invalid_value invalid_value\""
bad_stored=$(q "SELECT count(*) FROM perfwatch.samples WHERE $like AND value = 'NaN'")
[ "$bad_stored" = "0" ] || fail "$bad_stored NaN samples stored"
echo "ok: $bad_sent bad runs dead-lettered as invalid_value"

# a new HLO fingerprint starts a new series
fps=$(q "SELECT string_agg(s.hlo_fingerprint || ':' || c, ',' ORDER BY s.hlo_fingerprint) FROM
  (SELECT series_id, count(*) c FROM perfwatch.samples WHERE run_id LIKE '${prefix}rev-%' GROUP BY series_id) x
  JOIN perfwatch.series s USING (series_id) WHERE s.metric = 'tpot_p50_ms'")
[ "$fps" = "$fp_a:3,$fp_b:2" ] || fail "fingerprint series: \"$fps\", want \"$fp_a:3,$fp_b:2\""
echo "ok: new fingerprint, new series ($fps)"

# runs already stored arrive again: the same payloads are duplicates, other
# payloads under the same run ids are conflicts, dead-lettered; nothing changes
rev_like="run_id LIKE '${prefix}rev-%'"
rev_runs=$(q "SELECT count(*) FROM perfwatch.runs WHERE $rev_like")
rev_samples=$(q "SELECT count(*) FROM perfwatch.samples WHERE $rev_like")
# the values themselves, in one order (a float sum depends on the scan's order)
rev_values() { q "SELECT md5(string_agg(run_id || ':' || repeat_index || ':' || metric || '=' || value::text, ','
                   ORDER BY run_id, repeat_index, metric)) FROM perfwatch.samples WHERE $rev_like"; }
rev_sum=$(rev_values)
env -u PW_KAFKA_GROUP_ID "$sim" replay "$work/rev.scn" --runs-key run_id --run-prefix "${prefix}rev-" >/dev/null
env -u PW_KAFKA_GROUP_ID "$sim" replay "$work/rev.scn" --runs-key run_id --run-prefix "${prefix}rev-" --seed 10 >/dev/null
conflicts() { q "SELECT count(*) FROM perfwatch.dead_letters WHERE reason = 'conflict'
  AND convert_from(original_key, 'UTF8') LIKE '${prefix}rev-%'"; }
deadline=$((SECONDS + 60))
until [ "$(conflicts)" -ge "$rev_runs" ]; do
  [ $SECONDS -lt $deadline ] || fail "$(conflicts) of $rev_runs conflicting runs dead-lettered after 60 s"
  sleep 0.5
done
sleep 1
[ "$(conflicts)" = "$rev_runs" ] || fail "$(conflicts) conflicts dead-lettered, want $rev_runs"
[ "$(q "SELECT count(*) FROM perfwatch.runs WHERE $rev_like")" = "$rev_runs" ] || fail "runs changed on redelivery"
[ "$(q "SELECT count(*) FROM perfwatch.samples WHERE $rev_like")" = "$rev_samples" ] || fail "samples changed on redelivery"
[ "$(rev_values)" = "$rev_sum" ] || fail "stored values changed on redelivery"
echo "ok: $rev_runs stored runs redelivered as duplicates, then as $rev_runs conflicts dead-lettered"

# bisection: the simulator answers a BisectJob with runs of exactly that series at
# the build asked (here the culprit cherry-picked on the pre-range base), carrying its id
job="bj-${prefix}cp"
cat >"$work/job.txt" <<JOB
job_id: "$job"
purpose: BISECT_PURPOSE_VERIFY_CHERRY_PICK
series { model: "chat-8b" hlo_fingerprint: "hlo:9f31c2ab" platform: "v6e-4" config: "decode.B64.s2048.int8" metric: "tpot_p50_ms" }
cl: "cl/7841917"
cl_number: 7841917
base_cl: "cl/7841885"
cherry_picks: "cl/7841917"
repeats: 3
JOB
PW_KAFKA_GROUP_ID="it-answer-$$" "$sim" answer "$scn" >"$work/answer.log" 2>&1 &
ans_pid=$!
protoc --encode=perfwatch.v1.BisectJob -I proto proto/perfwatch/v1/bisect.proto <"$work/job.txt" >"$work/job.bin" \
  || fail "protoc --encode of the job failed"
kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.bisect.jobs.v1 -k "$job" "$work/job.bin" || fail "kcat -P failed"
deadline=$((SECONDS + 60))
until [ "$(q "SELECT count(*) FROM perfwatch.runs WHERE bisect_job_id = '$job'")" -ge 3 ]; do
  [ $SECONDS -lt $deadline ] || { fail "no runs for bisect job $job: $(tail -3 "$work/answer.log")"; }
  sleep 0.5
done
kill -TERM "$ans_pid" 2>/dev/null || true
wait "$ans_pid" 2>/dev/null || true
ans_pid=""
bj=$(q "SELECT count(*) || ' ' || min(r.build_id) || ' ' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY s.value)::numeric, 2)
  FROM perfwatch.runs r JOIN perfwatch.samples s USING (run_id, repeat_index)
  WHERE r.bisect_job_id = '$job' AND s.metric = 'tpot_p50_ms' AND r.config = 'decode.B64.s2048.int8'
    AND r.platform = 'v6e-4' AND r.build_kind = 'bisect'")
case "$bj" in
  "3 bisect@cl/7841885+7841917 4.2"[0-9]) ;;
  *) fail "bisect job runs: \"$bj\", want 3 runs of bisect@cl/7841885+7841917 at ~4.22 ms" ;;
esac
echo "ok: bisect job answered: $bj"

# metrics the ingester exposes
port=$(grep -o '"http_port":"[0-9]*"' "$work/ing.log" | head -1 | grep -o '[0-9]*')
# counters move when a batch's delivery reports are in, a moment after its commit
deadline=$((SECONDS + 30))
while metrics=$(curl -fsS "http://127.0.0.1:$port/metrics") || fail "GET /metrics failed"
      ! grep -qF 'perfwatch_ingester_rejected_total{reason="invalid_value"}' <<<"$metrics"; do
  [ $SECONDS -lt $deadline ] || break
  sleep 0.5
done
for m in perfwatch_ingester_runs_accepted_total perfwatch_ingester_duplicates_total \
         'perfwatch_ingester_rejected_total{reason="invalid_value"}' perfwatch_ingester_batch_seconds_count; do
  grep -qF "$m" <<<"$metrics" || fail "/metrics lacks $m: $(grep '^perfwatch_ingester' <<<"$metrics" | grep -v bucket)"
done
dup_metric=$(grep '^perfwatch_ingester_duplicates_total ' <<<"$metrics" | awk '{print $2}')
awk -v d="$dup_metric" -v s="$dups_sent" 'BEGIN { exit !(d >= s) }' || fail "duplicates_total $dup_metric < $dups_sent sent"
echo "ok: /metrics counts accepted, rejected by reason, duplicates ($dup_metric), batch latency"

# every point published, keyed by its series
pts_rc=0; wait "$pts_pid" || pts_rc=$?
pts_pid=""
pt=$(cat "$work/points.json")
[ "$pts_rc" = 0 ] || fail "points: $pt $(tail -3 "$work/points.log")"
echo "ok: points $pt"
echo "PASS"
