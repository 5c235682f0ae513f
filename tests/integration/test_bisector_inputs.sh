#!/usr/bin/env bash
# test_bisector_inputs.sh: bad input at the bisector's and the attributor's
# doors, through the real stack. Truncated protobuf, garbage, a NUL byte in
# an id, invalid UTF-8, missing ids and absurd values are published on
# perf.alerts.v1, perf.compiler-cls.v1 and perf.bisections.v1; each becomes
# one dead letter per consuming service, with its reason, in
# perfwatch.dead_letters and on perf.dlq.v1. A follow-up alert (follow_up:
# true) for an unknown series is skipped by both, not dead-lettered and
# starts no bisection. Both services keep going: a good CL published after
# the bad ones is stored, and both are still running.
#
# (The bisector's step results are runs: they arrive through perf.runs.v1 and
# the ingester, whose door test_ingest_hostile.sh covers; the bisector
# consumes no runs topic itself.)
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc python3
bins=("$PW_BUILD/services/bisector/pw-bisector" "$PW_BUILD/services/attributor/pw-attributor"
      "$PW_BUILD/tools/perfwatch")
need_bins "${bins[@]}"
pw=${bins[2]}
service_harness test_bisector_inputs bi
start() { service_start "$1" PW_BISECTOR_TICK=500ms; }
joined() { service_joined "$1"; }
enc() { protoc --encode="perfwatch.v1.$1" -I proto "proto/perfwatch/v1/$2"; }
# patch FILE FROM TO: replaces the bytes FROM (python bytes literal) by TO, same length
patch() {
  python3 - "$1" "$2" "$3" <<'EOF'
import ast, sys
p, a, b = sys.argv[1], ast.literal_eval(sys.argv[2]), ast.literal_eval(sys.argv[3])
d = open(p, 'rb').read()
assert a in d and len(a) == len(b), (a, b)
open(p, 'wb').write(d.replace(a, b, 1))
EOF
}

"$pw" group to-end "$ns-bisector" perf.alerts.v1 perf.compiler-cls.v1 >/dev/null &&
  "$pw" group to-end "$ns-attributor" perf.alerts.v1 perf.bisections.v1 >/dev/null ||
  fail "placing the groups at the topics' ends"
for s in bisector attributor; do start $s; done
for s in bisector attributor; do joined $s; done

# --- the messages ------------------------------------------------------------------------------
series='series { model: "chat-8b.NS" hlo_fingerprint: "hlo:9f31c2" platform: "v6e-4" config: "decode.B64.s2048.int8" metric: "tpot_p50_ms" }'
series=${series//NS/$ns}
sk="chat-8b.$ns/hlo:9f31c2/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"
good_alert() { # ALERT_ID [EXTRA]
  printf 'alert_id: "%s" revision: 1 kind: ALERT_KIND_REGRESSION source: ALERT_SOURCE_GATE series_key: "%s" %s
          baseline { median: 3.9 mad: 0.017 n: 30 } observed { median: 4.22 n: 5 release: "xla-rc-%s" }
          delta { abs: 0.32 pct: 8.2 } changepoint { cl_range_lo: "cl/7841885" cl_range_hi: "cl/7841923" } %s' \
    "$1" "$sk" "$series" "$ns" "${2:-}" | enc Alert alert.proto
}
# alerts
printf 'not a protobuf \377\377\377' >"$work/a_garbage.bin"
good_alert "$ns-trunc" >"$work/full.bin"
head -c $(( $(wc -c <"$work/full.bin") - 7 )) "$work/full.bin" >"$work/a_trunc.bin"
good_alert "$ns-nulXid" >"$work/a_nul.bin"
patch "$work/a_nul.bin" "b'nulXid'" "b'nul\\x00id'"
good_alert "$ns-utf8" >"$work/a_utf8.bin"
patch "$work/a_utf8.bin" "b'hlo:9f31c2'" "b'hlo:9f31c\\xc0'"
good_alert "" >"$work/a_noid.bin"
printf 'alert_id: "%s-absurd" revision: 1 kind: ALERT_KIND_REGRESSION source: ALERT_SOURCE_GATE series_key: "%s" %s baseline { median: 3.9 mad: -1 } observed { release: "xla-rc-%s" } delta { abs: inf }' \
  "$ns" "$sk" "$series" "$ns" | enc Alert alert.proto >"$work/a_absurd.bin"
good_alert "$ns-range" >"$work/a_range.bin"
patch "$work/a_range.bin" "b'cl/7841885'" "b'cl/7841999'"
good_alert "$ns-followup" 'follow_up: true follow_up_by: "bisector" bisection { bisection_id: "bs-x" status: "done" culprit: "cl/7841917" }' \
  >"$work/a_followup.bin"
# CLs
printf '\377\377\377\377' >"$work/c_garbage.bin"
printf 'cl: "cl/7841917" cl_number: 7841918 title: "t"' | enc CompilerCl compiler.proto >"$work/c_mismatch.bin"
printf 'cl: "cl/78419X7" cl_number: 7841917 title: "t"' | enc CompilerCl compiler.proto >"$work/c_nul.bin"
patch "$work/c_nul.bin" "b'cl/78419X7'" "b'cl/78419\\x007'"
printf 'cl: "cl/7841917" cl_number: 7841917 title: "fusion: capX"' | enc CompilerCl compiler.proto >"$work/c_utf8.bin"
patch "$work/c_utf8.bin" "b'capX'" "b'cap\\xff'"
printf 'cl: "cl/7841917" cl_number: 7841917 roll { upstream_repo: "llvm" upstream_commits: 4000000000 }' |
  enc CompilerCl compiler.proto >"$work/c_roll.bin"
printf 'cl: "cl/7841917" cl_number: 7841917 submitted_unix_us: -5' | enc CompilerCl compiler.proto >"$work/c_time.bin"
printf 'title: "no number"' | enc CompilerCl compiler.proto >"$work/c_noid.bin"
# bisections (the attributor's second input)
printf 'bisection_id: "%s-bX" alert_id: "a" series_key: "%s" %s culprit: "cl/7841917" status: BISECTION_STATUS_DONE' \
  "$ns" "$sk" "$series" | enc Bisection bisect.proto >"$work/b_nul.bin"
head -c 20 "$work/b_nul.bin" >"$work/b_trunc.bin"
patch "$work/b_nul.bin" "b'-bX'" "b'-b\\x00'"

# topic file service reason ("-": must not be dead-lettered by that service). The attributor
# needs no changepoint range and takes no effect size: it refuses a_absurd because it names no
# before side (no baseline window, changepoint range or baseline build: its door, attr_door.h)
# and a_range because its series is not stored.
table="perf.alerts.v1 a_garbage bisector decode_failed
perf.alerts.v1 a_garbage attributor decode_failed
perf.alerts.v1 a_trunc bisector decode_failed
perf.alerts.v1 a_trunc attributor decode_failed
perf.alerts.v1 a_nul bisector invalid_value
perf.alerts.v1 a_nul attributor invalid_value
perf.alerts.v1 a_utf8 bisector invalid_value
perf.alerts.v1 a_utf8 attributor invalid_value
perf.alerts.v1 a_noid bisector missing_field
perf.alerts.v1 a_noid attributor missing_field
perf.alerts.v1 a_absurd bisector invalid_value
perf.alerts.v1 a_absurd attributor missing_field
perf.alerts.v1 a_range bisector invalid_value
perf.alerts.v1 a_range attributor unknown_reference
perf.alerts.v1 a_followup bisector -
perf.alerts.v1 a_followup attributor -
perf.compiler-cls.v1 c_garbage bisector decode_failed
perf.compiler-cls.v1 c_mismatch bisector invalid_value
perf.compiler-cls.v1 c_nul bisector invalid_value
perf.compiler-cls.v1 c_utf8 bisector invalid_value
perf.compiler-cls.v1 c_roll bisector invalid_value
perf.compiler-cls.v1 c_time bisector invalid_value
perf.compiler-cls.v1 c_noid bisector missing_field
perf.bisections.v1 b_nul attributor invalid_value
perf.bisections.v1 b_trunc attributor decode_failed"
key="$ns-bad"
for f in $(awk '{print $1 ":" $2}' <<<"$table" | sort -u); do
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t "${f%%:*}" -k "$key-${f#*:}" "$work/${f#*:}.bin" ||
    fail "producing ${f#*:}"
done
# after the bad ones, a good CL: stored when the bisector kept going
goodcl=$((900000000 + $(date +%s) % 1000000))
printf 'cl: "cl/%s" cl_number: %s title: "after the bad ones %s" author: "it"' "$goodcl" "$goodcl" "$ns" |
  enc CompilerCl compiler.proto >"$work/c_good.bin"
kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.compiler-cls.v1 -k "cl/$goodcl" "$work/c_good.bin" ||
  fail "producing the good CL"

"$pw" group lag "$ns-bisector" --wait 60 perf.alerts.v1 perf.compiler-cls.v1 >/dev/null ||
  fail "the bisector did not consume its topics within 60 s"
"$pw" group lag "$ns-attributor" --wait 60 perf.alerts.v1 perf.bisections.v1 >/dev/null ||
  fail "the attributor did not consume its topics within 60 s"

# perfwatch.dead_letters is filled from perf.dlq.v1: wait for every expected letter first
want=$(grep -vc ' -$' <<<"$table")
deadline=$((SECONDS + 60))
until [ "$(q "SELECT count(*) FROM perfwatch.dead_letters WHERE service IN ('bisector', 'attributor')
              AND convert_from(original_key, 'UTF8') LIKE '$key-%'")" -ge "$want" ]; do
  [ $SECONDS -lt $deadline ] || break
  sleep 0.5
done
while read -r topic f svc reason; do
  got=$(q "SELECT reason || ' ' || detail FROM perfwatch.dead_letters WHERE service = '$svc'
           AND source_topic = '$topic' AND original_key = convert_to('$key-$f', 'UTF8')")
  if [ "$reason" = - ]; then
    [ -z "$got" ] || fail "$f on $topic: $svc dead-lettered it (\"$got\"), want it skipped"
    echo "test_bisector_inputs: $topic $f ($svc) -> skipped"
    continue
  fi
  [ -n "$got" ] || fail "$f on $topic was not dead-lettered by $svc"
  [ "$(wc -l <<<"$got")" = 1 ] || fail "$f on $topic: dead-lettered more than once by $svc"
  [ "${got%% *}" = "$reason" ] || fail "$f on $topic ($svc): dead-lettered as \"$got\", want $reason"
  echo "test_bisector_inputs: $topic $f ($svc) -> $got"
done <<<"$table"

# a range of CLs the CL feed has never carried (cl/1..cl/1000001) on a series the bisector
# knows: refused as unknown_reference for its CLs, before any build job is published
q "INSERT INTO perfwatch.series (model, hlo_fingerprint, platform, config, metric, unit, direction)
   VALUES ('chat-8b-known.$ns', 'hlo:9f31c2', 'v6e-4', 'decode.B64.s2048.int8', 'tpot_p50_ms', 'ms',
           'lower_is_better') ON CONFLICT DO NOTHING" >/dev/null
printf 'alert_id: "%s-unknowncl" revision: 1 kind: ALERT_KIND_REGRESSION source: ALERT_SOURCE_GATE
        series_key: "chat-8b-known.%s/hlo:9f31c2/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"
        series { model: "chat-8b-known.%s" hlo_fingerprint: "hlo:9f31c2" platform: "v6e-4" config: "decode.B64.s2048.int8" metric: "tpot_p50_ms" }
        baseline { median: 3.9 mad: 0.017 n: 30 } observed { median: 4.22 n: 5 release: "xla-rc-%s" }
        delta { abs: 0.32 pct: 8.2 } changepoint { cl_range_lo: "cl/1" cl_range_hi: "cl/1000001" }' \
  "$ns" "$ns" "$ns" "$ns" | enc Alert alert.proto >"$work/a_unknowncl.bin"
kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.alerts.v1 -k "$ns-unknowncl" "$work/a_unknowncl.bin" ||
  fail "producing the unknown-range alert"
got=""
for _ in $(seq 150); do
  got=$(q "SELECT reason || ': ' || detail FROM perfwatch.dead_letters WHERE service = 'bisector'
           AND original_key = convert_to('$ns-unknowncl', 'UTF8')")
  [ -z "$got" ] || break
  sleep 0.2
done
[[ $got == "unknown_reference: "*"cl/1 and cl/1000001 are not in the CL feed"* ]] ||
  fail "the bisector's dead letter of cl/1..cl/1000001 on a known series: \"$got\""
[ "$(q "SELECT count(*) FROM perfwatch.bisect_jobs WHERE bisection_id LIKE '%$ns%'")" = 0 ] ||
  fail "a build job was published for the unknown range"
echo "test_bisector_inputs: cl/1..cl/1000001 -> $got; no build job"

# the same letters on perf.dlq.v1, keyed by the original key
deadline=$((SECONDS + 30))
until n=$(kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.dlq.v1 -o beginning -e -q -f '%k\n' 2>/dev/null |
          grep -c "^$key-" || true) && [ "$n" -ge "$want" ]; do
  [ $SECONDS -lt $deadline ] || fail "$n dead letters of this test on perf.dlq.v1, want $want"
  sleep 1
done
[ "$n" = "$want" ] || fail "$n dead letters of this test on perf.dlq.v1, want $want"
echo "test_bisector_inputs: $n dead letters on perf.dlq.v1 and in perfwatch.dead_letters"

# the follow-up started nothing; both kept going
[ "$(q "SELECT count(*) FROM perfwatch.bisections WHERE bisection_id LIKE 'bs-chat-8b.$ns-%'")" = 0 ] ||
  fail "a bisection started from a follow-up or a bad alert"
[ "$(q "SELECT count(*) FROM perfwatch.attributions WHERE alert_id LIKE '$ns-%' AND alert_id <> '$ns-unknowncl'")" = 0 ] ||
  fail "an attribution from a follow-up or a bad alert"
[ "$(q "SELECT title FROM perfwatch.compiler_cls WHERE cl_number = $goodcl")" = "after the bad ones $ns" ] ||
  fail "the good CL after the bad ones was not stored"
[ "$(q "SELECT count(*) FROM perfwatch.compiler_cls WHERE cl_number IN (7841917, 7841918) AND title IN ('t', 'no number')")" = 0 ] ||
  fail "a bad CL was stored"
for s in bisector attributor; do kill -0 "${pid[$s]}" 2>/dev/null || fail "pw-$s exited on bad input"; done
echo "test_bisector_inputs: PASS"
