#!/usr/bin/env bash
# test_kafka_restart.sh: the dev stack's Kafka node killed -9 and started
# again by `stack.sh start` comes back on the same port, and keeps what it
# acknowledged: its log directory is on disk (run/kafka/data), so a message
# produced with acks=all before the kill, and a consumer group's committed
# offset, are both there after the restart; and a message goes through the
# restarted broker end to end with the bootstrap list every service and
# pw-sim were configured with. A service running through the outage answers
# /readyz 503 naming the broker within 15 s of the kill (its probe:
# service.kafka.down.after, 5 s) and 200 again once the broker is back.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
. tests/integration/lib.sh
need_env PW_BUILD PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR

failures=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

bs=$PW_KAFKA_BOOTSTRAP_SERVERS
topic=pw.restart.selftest.$$
tmp=$(mktemp -d)
gate_pid=""
trap '[ -z "$gate_pid" ] || { kill -TERM "$gate_pid" 2>/dev/null; wait "$gate_pid" 2>/dev/null; }; rm -rf "$tmp"' EXIT
"$PW_BUILD/tools/pw-topics" create --bootstrap "$bs" --topic "$topic:1" >"$tmp/topic.log" 2>&1 ||
  fail "creating $topic: $(tail -3 "$tmp/topic.log")"

# before the kill: one message acknowledged by the broker (acks=all), and a
# group that read it and committed its offset
before="before-$$-$RANDOM"
echo "$before" | timeout 60 kcat -P -b "$bs" -t "$topic" -k restart-selftest -X acks=all \
  -X enable.idempotence=true >"$tmp/prod1.log" 2>&1 || fail "produce before the kill: $(tail -3 "$tmp/prod1.log")"
group=pw-restart-selftest-$$
got=$(timeout 60 kcat -G "$group" -b "$bs" -X auto.offset.reset=earliest -X enable.auto.commit=true \
  -X auto.commit.interval.ms=100 -e -q "$topic" 2>"$tmp/cons1.log" || true)
grep -qx "$before" <<<"$got" && ok "a group read the message before the kill" || fail "group did not read it: $(tail -3 "$tmp/cons1.log")"

# a service through the outage: the gate, whose readiness is the runtime's
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="pw-restart-gate-$$" "$PW_BUILD/services/gate/pw-gate" >"$tmp/gate.log" 2>&1 &
gate_pid=$!
port=""
for _ in $(seq 200); do
  port=$(grep -o '"msg":"serving /healthz /readyz /metrics on [^"]*' "$tmp/gate.log" | grep -o '[0-9]*$' || true)
  [ -z "$port" ] || [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" != 200 ] || break
  sleep 0.2
done
readyz() { curl -s -o "$tmp/readyz.txt" -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/readyz" || true; }
[ "$(readyz)" = 200 ] && ok "pw-gate ready before the kill" || fail "pw-gate not ready before the kill: $(cat "$tmp/readyz.txt")"

pidfile=$PW_RUN_DIR/kafka/kafka.pid
old=$(cat "$pidfile")
kill -9 "$old"
t_kill=$SECONDS
code=""
while [ $((SECONDS - t_kill)) -lt 15 ]; do
  code=$(readyz)
  [ "$code" != 200 ] && break
  sleep 0.5
done
if [ "$code" = 503 ] && grep -q "kafka" "$tmp/readyz.txt"; then
  ok "pw-gate's /readyz 503 $((SECONDS - t_kill)) s after the kill: $(cat "$tmp/readyz.txt")"
else
  fail "pw-gate's /readyz stayed $code for 15 s with no broker: $(cat "$tmp/readyz.txt")"
fi
for _ in $(seq 100); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
kill -0 "$old" 2>/dev/null && fail "broker $old still alive after kill -9"
deploy/dev/stack.sh start "$PW_BUILD" >"$tmp/start.log" 2>&1 || fail "stack.sh start: $(tail -3 "$tmp/start.log")"
new=$(cat "$pidfile" 2>/dev/null || echo none)
[ "$new" != "$old" ] && ok "broker restarted (pid $old -> $new): $(grep -o 'answered metadata in [0-9.]* s' "$tmp/start.log")" ||
  fail "broker not restarted"
code=""
for _ in $(seq 120); do code=$(readyz); [ "$code" = 200 ] && break; sleep 0.5; done
[ "$code" = 200 ] && ok "pw-gate ready again after the restart" || fail "pw-gate not ready 60 s after the restart: $(cat "$tmp/readyz.txt")"
now=$(cat "$PW_RUN_DIR/kafka/bootstrap")
[ "$now" = "$bs" ] && ok "same bootstrap after the restart: $now" || fail "bootstrap moved: $bs -> $now"
grep -q "PW_KAFKA_BOOTSTRAP_SERVERS='$bs'" "$PW_RUN_DIR/stack.env" || fail "stack.env does not name $bs"

# what the broker acknowledged before the kill is still there
got=$(timeout 60 kcat -C -b "$bs" -t "$topic" -o beginning -e -q 2>/dev/null || true)
grep -qx "$before" <<<"$got" && ok "the message acknowledged before the kill survived it" ||
  fail "the message acknowledged before the kill is gone after the restart"

# a client configured before the restart (the old address) works against the new broker
after="after-$$-$RANDOM"
echo "$after" | timeout 60 kcat -P -b "$bs" -t "$topic" -k restart-selftest -X acks=all \
  >"$tmp/prod2.log" 2>&1 && ok "produced to $bs after the restart" || fail "produce failed: $(tail -3 "$tmp/prod2.log")"
# the group's committed offset survived too: it reads the new message only
got=$(timeout 60 kcat -G "$group" -b "$bs" -X auto.offset.reset=earliest -e -q "$topic" 2>"$tmp/cons2.log" || true)
if grep -qx "$after" <<<"$got" && ! grep -qx "$before" <<<"$got"; then
  ok "the group's committed offset survived: it read only the message produced after the restart"
else
  fail "after the restart the group read [$(tr '\n' ' ' <<<"$got")], want only $after"
fi

[ "$failures" = 0 ] && echo "test_kafka_restart: ok"
exit $((failures > 0))
