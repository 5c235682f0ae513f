#!/usr/bin/env bash
# test_kafka_loss.sh: a consumer group that falls behind the broker's
# retention loses messages, and the service says so instead of skipping them
# in silence: an error log "data loss", perfwatch_kafka_lost_messages_total
# on /metrics equal to what was deleted, /readyz 503 naming it.
#
# The ingester's group commits the end of perf.runs.v1 and the ingester is
# stopped; the topic's retention is shrunk to one 1 MiB segment
# (it_kafka_admin set-config) and ~4 MB are published into one partition, so
# that the broker's own retention (log.retention.check.interval.ms, 5 s on the
# dev stack) deletes segments the group has not read; the retention is then
# restored and the ingester started again. The partition's log now starts
# past the group's committed offset: librdkafka resets the position to the
# log's start, and the consumer loop must report the jump (common/pw_kafka.c,
# pw_consumer_loss).
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR PW_PG_DSN
need_bins "$PW_BUILD/services/ingester/pw-ingester" "$PW_BUILD/tests/it_kafka_admin" "$PW_BUILD/tools/perfwatch"
need_tools kcat curl
service_harness test_kafka_loss kl

bs=$PW_KAFKA_BOOTSTRAP_SERVERS
admin=$PW_BUILD/tests/it_kafka_admin
topic=perf.runs.v1
part=5
restore() { "$admin" set-config "$bs" "$topic" cleanup.policy=delete >/dev/null 2>&1 || true; }
on_exit_restore() { restore; service_cleanup; }
trap on_exit_restore EXIT

"$PW_BUILD/tools/perfwatch" group to-end "$ns-ingester" "$topic" >/dev/null || fail "group to-end"
read -r _ committed < <("$admin" watermarks "$bs" "$topic" "$part")
echo "test_kafka_loss: group $ns-ingester committed $topic [$part] at $committed (its end)"

# the ingester joins and leaves: the group's offsets are its own
service_start ingester PW_INGEST_WORKERS=1
service_joined ingester
kill -TERM "${pid[ingester]}"
wait "${pid[ingester]}" || true
unset 'pid[ingester]'

# retention down to one 1 MiB segment, then ~4 MB into the partition
"$admin" set-config "$bs" "$topic" cleanup.policy=delete segment.bytes=1048576 retention.bytes=1048576 ||
  fail "could not shrink the retention of $topic"
python3 -c 'import sys; line = "x" * 1000 + "\n"; sys.stdout.write(line * 4000)' |
  kcat -P -b "$bs" -t "$topic" -p "$part" -X linger.ms=20 -X acks=all 2>"$work/kcat.log" ||
  fail "producing into $topic [$part]: $(tail -n 3 "$work/kcat.log")"
deadline=$((SECONDS + 120))
while read -r lo hi < <("$admin" watermarks "$bs" "$topic" "$part"); [ "$lo" -le "$committed" ]; do
  [ $SECONDS -lt $deadline ] || fail "the broker kept $topic [$part] from $lo within 120 s (committed $committed)"
  sleep 1
done
restore
read -r lo hi < <("$admin" watermarks "$bs" "$topic" "$part")
want=$((lo - committed))
echo "test_kafka_loss: the broker's retention deleted $topic [$part] up to $lo (end $hi): $want message(s) the group never read"

# the ingester again: it must say what it lost
service_start ingester PW_INGEST_WORKERS=1
deadline=$((SECONDS + 120))
until grep -q '"msg":"data loss' "$work/ingester.log"; do
  kill -0 "${pid[ingester]}" 2>/dev/null || fail "pw-ingester exited"
  [ $SECONDS -lt $deadline ] || fail "no data-loss report within 120 s"
  sleep 0.5
done
line=$(grep -m 1 '"msg":"data loss' "$work/ingester.log")
echo "test_kafka_loss: the ingester logged: $(cut -c1-400 <<<"$line")"
grep -q '"level":"error"' <<<"$line" || fail "the data-loss line is not an error: $line"
grep -q "\"lost\":\"$want\"" <<<"$line" || fail "the data-loss line does not count $want: $line"
port=$(grep -o '"msg":"serving /healthz /readyz /metrics on [^"]*' "$work/ingester.log" | tail -n 1 | grep -o '[0-9]*$')
[ -n "$port" ] || fail "no HTTP port in the ingester's log"
metric=$(curl -s "http://127.0.0.1:$port/metrics" | grep '^perfwatch_kafka_lost_messages_total{' | grep "topic=\"$topic\"" || true)
echo "test_kafka_loss: /metrics: $metric"
[ "$(awk '{ print $2 }' <<<"$metric")" = "$want" ] || fail "perfwatch_kafka_lost_messages_total is not $want: $metric"
code=$(curl -s -o "$work/readyz.txt" -w '%{http_code}' "http://127.0.0.1:$port/readyz")
echo "test_kafka_loss: /readyz $code: $(cat "$work/readyz.txt")"
[ "$code" = 503 ] && grep -q "data loss" "$work/readyz.txt" || fail "/readyz is not 503 for the data loss"
echo "test_kafka_loss: PASS"
