#!/usr/bin/env bash
# test_ingest_crash.sh: kill -9 the ingester three times during a replay of
# more than 200,000 samples, restarting it each time; then PostgreSQL holds
# every produced sample exactly once and every series point was published at
# least once.
#
# The replay is quiet-week scaled to 60 models x 4 platforms x 6 configs, 7
# nightlies of 3 repeats (30,240 runs, 231,840 samples), with a unique run-id
# prefix. The simulator publishes in the background at a bounded rate so that
# the kills land while runs are still arriving, and again once the backlog is
# being drained. Run by tests/integration/run.sh (see test_ingest.sh for the
# environment and binaries).
set -euo pipefail

. tests/integration/lib.sh
. tests/integration/lib_ingest.sh
ingest_test_bins

scn=tools/simulator/scenarios/quiet-week.scn
scale=(--models 60 --days 7 --repeats 3)
prefix="it-crash-$$-$(date +%s)-"
work=$(mktemp -d)
ing_pid=""; sim_pid=""; pts_pid=""
cleanup() {
  [ -z "$pts_pid" ] || { kill -TERM "$pts_pid" 2>/dev/null || true; wait "$pts_pid" 2>/dev/null || true; }
  [ -z "$sim_pid" ] || { kill -TERM "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; }
  [ -z "$ing_pid" ] || { kill -TERM "$ing_pid" 2>/dev/null || true; wait "$ing_pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- ingester logs (tail)"; tail -5 "$work"/ing.*.log || true; exit 1; }
json() { grep -o "\"$1\":[0-9.]*" <<<"$2" | head -1 | cut -d: -f2; }
like="run_id LIKE '${prefix}%'"
stored() { q "SELECT count(*) FROM perfwatch.samples WHERE $like"; }

count=$("$sim" count "$scn" "${scale[@]}")
want_runs=$(json runs "$count"); want_samples=$(json samples "$count")
[ "$want_samples" -ge 200000 ] || fail "the replay holds only $want_samples samples"
echo "replaying $want_runs runs, $want_samples samples"

export PW_KAFKA_GROUP_ID="it-crash-$$"
export PW_HTTP_PORT=0
# a killed member holds its partitions until its session times out: keep that short
export PW_KAFKA_SESSION_TIMEOUT_MS=6000 PW_KAFKA_HEARTBEAT_INTERVAL_MS=1000
start_ingester() {
  "$ing" >"$work/ing.$1.log" 2>&1 &
  ing_pid=$!
}

# The dev broker keeps only the newest few MB of each partition, so the points
# are counted while they are produced, by a reader started before the replay.
"$pts" --prefix "$prefix" --expect "$want_samples" --timeout 400 >"$work/points.json" 2>"$work/points.log" &
pts_pid=$!
# ~4,000 runs/s: the replay lasts ~8 s, so the first kills hit a live stream
env -u PW_KAFKA_GROUP_ID "$sim" replay "$scn" "${scale[@]}" --run-prefix "$prefix" --rate 4000 \
  >"$work/replay.json" 2>"$work/sim.log" &
sim_pid=$!
start_ingester 0
for k in 1 2 3; do
  # kill once something of this replay is stored (and then a little later), mid-batch
  deadline=$((SECONDS + 90))
  floor=$(stored)
  while [ "$(stored)" -le "$floor" ]; do
    [ $SECONDS -lt $deadline ] || fail "no progress before kill $k"
    kill -0 "$ing_pid" 2>/dev/null || fail "the ingester exited before kill $k"
    sleep 0.2
  done
  sleep "0.$((RANDOM % 9 + 1))"
  at=$(stored)
  kill -KILL "$ing_pid"
  wait "$ing_pid" 2>/dev/null || true
  echo "kill -9 #$k with $at of $want_samples samples stored"
  start_ingester "$k"
done
wait "$sim_pid" || fail "the simulator failed: $(tail -3 "$work/sim.log")"
sim_pid=""
replay=$(cat "$work/replay.json")
[ "$(json samples "$replay")" = "$want_samples" ] || fail "replay: $replay"

deadline=$((SECONDS + 240))
while :; do
  got=$(stored)
  [ "$got" -ge "$want_samples" ] && break
  [ $SECONDS -lt $deadline ] || fail "only $got of $want_samples samples after the replay"
  kill -0 "$ing_pid" 2>/dev/null || fail "the restarted ingester exited"
  sleep 0.5
done
sleep 2

# exactly once: as many rows as produced, no key twice, nothing missing or orphaned
stored_exactly_once "$prefix" "$want_runs" "$want_samples"
echo "ok: $want_samples samples of $want_runs runs stored exactly once after 3 kills"

pts_rc=0; wait "$pts_pid" || pts_rc=$?
pts_pid=""
pt=$(cat "$work/points.json")
[ "$pts_rc" = 0 ] || fail "points: $pt $(tail -3 "$work/points.log")"
echo "ok: every series point published at least once: $pt"
echo "PASS"
