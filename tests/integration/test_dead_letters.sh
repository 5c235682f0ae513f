#!/usr/bin/env bash
# test_dead_letters.sh: every consumer records every dead letter in both
# places. The seven services run, each in its own group; one message whose
# identifying string holds invalid UTF-8 goes to each topic they consume.
# Every (topic, consuming service) pair must then have its row in
# perfwatch.dead_letters (reason invalid_value, the original key and payload
# verbatim) and its DeadLetter on perf.dlq.v1, service by service: a bad
# fleet change is recorded by the baseliner and by the watcher, a bad alert
# by the bisector, the attributor and the pager. Before pw_dlq_record the
# baseliner's letters reached perf.dlq.v1 only. Afterwards
# deploy/dlq-replay.sh --dry-run lists each message once however many
# services dead-lettered it.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat python3 xxd
services=(ingester baseliner gate watcher bisector attributor pager)
for s in "${services[@]}"; do need_bins "$PW_BUILD/services/$s/pw-$s"; done
need_bins "$PW_BUILD/tools/perfwatch"
pw=$PW_BUILD/tools/perfwatch
service_harness test_dead_letters dl

# topic, the string field that carries the bad bytes (field 1 is every
# message's id; a point's and a baseline's id is a number, their series_key
# is field 2), the services that consume it
table="perf.runs.v1 1 ingester
perf.points.v1 2 baseliner watcher
perf.fleet-changes.v1 1 baseliner watcher
perf.baselines.v1 2 watcher
perf.gate.requests.v1 1 gate
perf.gate.verdicts.v1 1 baseliner pager
perf.changepoints.v1 1 baseliner pager
perf.triage.v1 1 baseliner
perf.alerts.v1 1 bisector attributor pager
perf.compiler-cls.v1 1 bisector
perf.bisections.v1 1 attributor pager
perf.attributions.v1 1 pager"

# each group starts at the end of the topics its service consumes
declare -A topics_of=()
while read -r topic _ consumers; do
  for s in $consumers; do topics_of[$s]+=" $topic"; done
done <<<"$table"
for s in "${services[@]}"; do
  # shellcheck disable=SC2086 # the topic list is words
  "$pw" group to-end "$ns-$s" ${topics_of[$s]} >/dev/null || fail "placing $ns-$s at the end of${topics_of[$s]}"
done
for s in "${services[@]}"; do
  service_start "$s" PW_PAGER_TRIAGE_KEY="test-dead-letters-$ns" PW_PAGER_TICK=200ms PW_BISECTOR_TICK=200ms
done
for s in "${services[@]}"; do service_joined "$s"; done

# the hostile messages: field F, length-delimited, "\xff\xfeA" (no UTF-8 sequence starts with 0xff)
while read -r topic field _; do
  printf "\\x$(printf '%02x' $((field << 3 | 2)))\\x03\\xff\\xfe\\x41" >"$work/$topic.bin"
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t "$topic" -k "$ns-$topic" "$work/$topic.bin" ||
    fail "producing the bad message on $topic"
done <<<"$table"

# one row per (topic, consuming service), each with its reason and the original bytes
want=0
while read -r topic _ consumers; do
  for s in $consumers; do
    want=$((want + 1))
    deadline=$((SECONDS + 90))
    until got=$(q "SELECT reason || ' ' || encode(original_payload, 'hex') FROM perfwatch.dead_letters
                   WHERE service = '$s' AND source_topic = '$topic' AND original_key = convert_to('$ns-$topic', 'UTF8')") &&
          [ -n "$got" ]; do
      kill -0 "${pid[$s]}" 2>/dev/null || fail "pw-$s exited"
      [ $SECONDS -lt $deadline ] || fail "$s has no row in perfwatch.dead_letters for the bad message on $topic"
      sleep 0.3
    done
    [ "$got" = "invalid_value $(xxd -p "$work/$topic.bin")" ] ||
      fail "$s's row for $topic: \"$got\", want invalid_value and the payload verbatim"
    echo "test_dead_letters: $topic -> $s: row $got"
  done
done <<<"$table"
n=$(q "SELECT count(*) FROM perfwatch.dead_letters WHERE convert_from(original_key, 'UTF8') LIKE '$ns-%'")
[ "$n" = "$want" ] || fail "$n rows in perfwatch.dead_letters for this test's messages, want $want"

# the same letters on perf.dlq.v1: one per (topic, service), keyed by the original key
dlq_lines() {
  kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.dlq.v1 -o beginning -e -q -f '%k\n' 2>/dev/null | grep -c "^$ns-" || true
}
deadline=$((SECONDS + 60))
until n=$(dlq_lines) && [ "$n" -ge "$want" ]; do
  [ $SECONDS -lt $deadline ] || fail "$n dead letters of this test on perf.dlq.v1, want $want"
  sleep 1
done
[ "$n" = "$want" ] || fail "$n dead letters of this test on perf.dlq.v1, want $want"
echo "test_dead_letters: $want rows in perfwatch.dead_letters and $n DeadLetters on perf.dlq.v1, one per consumer"
for s in "${services[@]}"; do kill -0 "${pid[$s]}" 2>/dev/null || fail "pw-$s exited on bad input"; done

# a replay sends each message once, whichever services dead-lettered it
PW_PG_DSN=$PW_PG_DSN deploy/dlq-replay.sh --key-prefix "$ns-" --dry-run >"$work/replay.txt" ||
  fail "dlq-replay.sh --dry-run failed: $(cat "$work/replay.txt")"
topics=$(wc -l <<<"$table")
grep -q "^dlq-replay: $topics message(s) to replay$" "$work/replay.txt" ||
  fail "dlq-replay.sh would replay \"$(head -n 1 "$work/replay.txt")\", want $topics messages (one per topic)"
echo "test_dead_letters: dlq-replay.sh --dry-run lists the $topics messages once each"
echo "test_dead_letters: PASS"
