#!/usr/bin/env bash
# test_devbroker_restart.sh: a dev broker killed -9 and started again by
# `stack.sh start` comes back on the same ports (issue 19, item 5): the
# bootstrap list every service and pw-sim was configured with still reaches
# it, and a message goes through it end to end. What the broker held in
# memory before (messages, committed offsets) is gone: that is the dev
# broker's documented limit.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
. tests/integration/lib.sh
need_env PW_BUILD PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR

failures=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

bs=$PW_KAFKA_BOOTSTRAP_SERVERS
# perf.dlq.v1: a topic pw-devbroker creates at every start, consumed by no service yet
topic=perf.dlq.v1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pidfile=$PW_RUN_DIR/kafka/devbroker.pid
old=$(cat "$pidfile")
kill -9 "$old"
for _ in $(seq 50); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
kill -0 "$old" 2>/dev/null && fail "broker $old still alive after kill -9"
deploy/dev/stack.sh start "$PW_BUILD" >"$tmp/start.log" 2>&1 || fail "stack.sh start: $(tail -3 "$tmp/start.log")"
new=$(cat "$pidfile" 2>/dev/null || echo none)
[ "$new" != "$old" ] && ok "broker restarted (pid $old -> $new)" || fail "broker not restarted"
now=$(cat "$PW_RUN_DIR/kafka/bootstrap")
[ "$now" = "$bs" ] && ok "same bootstrap after the restart: $now" || fail "bootstrap moved: $bs -> $now"
grep -q "PW_KAFKA_BOOTSTRAP_SERVERS='$bs'" "$PW_RUN_DIR/stack.env" || fail "stack.env does not name $bs"

# a client configured before the restart (the old address) works against the new broker
token="restart-$$-$RANDOM"
echo "$token" | timeout 60 kcat -P -b "$bs" -t "$topic" -k devbroker-restart-selftest \
  >"$tmp/prod.log" 2>&1 && ok "produced to $bs after the restart" || fail "produce failed: $(tail -3 "$tmp/prod.log")"
got=$(timeout 30 kcat -C -b "$bs" -t "$topic" -o beginning -e -q 2>/dev/null || true)
grep -qx "$token" <<<"$got" && ok "consumed it back" || fail "message missing after the restart"

[ "$failures" = 0 ] && echo "test_devbroker_restart: ok"
exit $((failures > 0))
