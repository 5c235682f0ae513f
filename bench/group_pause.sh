#!/usr/bin/env bash
# group_pause.sh: how long a consumer group stops storing when a member joins
# and when it leaves, on the dev broker, under two group settings measured in
# the same run:
#
#   reference  librdkafka's defaults: eager range,roundrobin assignment,
#              session.timeout.ms 45000, heartbeat.interval.ms 3000
#   perfwatch  the consumers' defaults (pw_consumer_new): session.timeout.ms
#              10000, heartbeat.interval.ms 1000 (assignment as the reference)
#
# Each round: one ingester (one worker) consumes a paced replay (quiet-week
# at --rate runs/s); a second ingester joins the group at 10 s and leaves
# (SIGTERM) at 40 s; the replay ends at about 70 s. The runs stored are
# counted every 0.25 s; a pause is the longest time the count did not grow
# while runs were still waiting on the broker, after the join and after the
# leave. Prints one JSON line per round and one with the ratio.
#
#   bench/group_pause.sh [BUILD_DIR]   (run by bench/run.sh with the stack up)
# Environment: PW_BENCH_RATE (runs/s, default 150), PW_BENCH_KEEP (set: keep the logs).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${PW_BUILD:-$repo/build}}
sim=$build/tools/simulator/pw-sim
ing=$build/services/ingester/pw-ingester
pw=$build/tools/perfwatch
rate=${PW_BENCH_RATE:-150}
for v in PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS; do
  [ -n "${!v:-}" ] || { echo "bench group_pause: $v is not set (start the dev stack)" >&2; exit 1; }
done
for b in "$sim" "$ing" "$pw"; do [ -x "$b" ] || { echo "bench group_pause: $b not built" >&2; exit 1; }; done
scn=$repo/tools/simulator/scenarios/quiet-week.scn
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -n "${PW_BENCH_KEEP:-}" ] && echo "bench group_pause: logs kept in $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT

stored() {
  psql "$PW_PG_DSN" -XAtq -c "SELECT count(*) FROM perfwatch.runs WHERE run_id LIKE '$1%'"
}

# round NAME PROPS...: one replay with a member joining and leaving; PROPS are
# VAR=value settings for both ingesters.
round() {
  local name=$1 tag prefix group t0 now n last=0 last_t since_grow pause_join=0 pause_leave=0 total
  shift
  tag="gp$$x$(date +%s)$name"
  prefix="$tag-"
  group="bench-$tag"
  "$pw" group to-end "$group" perf.runs.v1 >/dev/null
  env "$@" PW_HTTP_PORT=0 PW_INGEST_WORKERS=1 PW_KAFKA_GROUP_ID="$group" "$ing" >"$work/$name.a.log" 2>&1 &
  pids+=($!)
  until grep -q '"msg":"kafka partitions assigned' "$work/$name.a.log"; do sleep 0.1; done
  total=$((rate * 70))
  "$sim" replay "$scn" --models 130 --days 2 --repeats 3 --limit "$total" --rate "$rate" \
    --run-prefix "$prefix" >/dev/null 2>"$work/$name.sim.log" &
  local sim_pid=$!
  pids+=($sim_pid)
  t0=$(date +%s.%N)
  last_t=$t0
  local joined=0 left=0 b_pid=""
  while :; do
    now=$(date +%s.%N)
    local el
    el=$(awk -v a="$t0" -v b="$now" 'BEGIN { printf "%d", b - a }')
    if [ $joined -eq 0 ] && [ "$el" -ge 10 ]; then
      env "$@" PW_HTTP_PORT=0 PW_INGEST_WORKERS=1 PW_KAFKA_GROUP_ID="$group" "$ing" >"$work/$name.b.log" 2>&1 &
      b_pid=$!
      pids+=($b_pid)
      joined=1
    fi
    if [ $left -eq 0 ] && [ "$el" -ge 40 ]; then
      kill -TERM "$b_pid" 2>/dev/null || true
      left=1
    fi
    n=$(stored "$prefix")
    if [ "$n" -gt "$last" ]; then
      last=$n
      last_t=$now
    else
      since_grow=$(awk -v a="$last_t" -v b="$now" 'BEGIN { printf "%.2f", b - a }')
      # a pause counts only while the replay has published runs not yet stored
      if kill -0 "$sim_pid" 2>/dev/null || [ "$n" -lt "$total" ]; then
        if [ $left -eq 0 ]; then
          pause_join=$(awk -v a="$pause_join" -v b="$since_grow" 'BEGIN { print (b > a) ? b : a }')
        else
          pause_leave=$(awk -v a="$pause_leave" -v b="$since_grow" 'BEGIN { print (b > a) ? b : a }')
        fi
      fi
    fi
    [ "$n" -ge "$total" ] && [ $left -eq 1 ] && break
    [ "$el" -lt 240 ] || { echo "bench group_pause: $name: only $n of $total runs stored in 240 s" >&2; return 1; }
    sleep 0.25
  done
  local assigned_a assigned_b
  assigned_a=$(grep -c '"msg":"kafka partitions assigned' "$work/$name.a.log" || true)
  assigned_b=$(grep -c '"msg":"kafka partitions assigned' "$work/$name.b.log" || true)
  printf '{"bench":"group_pause","round":"%s","runs":%d,"rate":%d,"pause_after_join_s":%s,"pause_after_leave_s":%s,"assignments_first":%d,"assignments_second":%d}\n' \
    "$name" "$total" "$rate" "$pause_join" "$pause_leave" "$assigned_a" "$assigned_b"
  echo "$pause_join $pause_leave" >"$work/$name.result"
}

round reference PW_KAFKA_PARTITION_ASSIGNMENT_STRATEGY=range,roundrobin \
  PW_KAFKA_SESSION_TIMEOUT_MS=45000 PW_KAFKA_HEARTBEAT_INTERVAL_MS=3000
round perfwatch
read -r rj rl <"$work/reference.result"
read -r pj pl <"$work/perfwatch.result"
awk -v rj="$rj" -v rl="$rl" -v pj="$pj" -v pl="$pl" 'BEGIN {
  r = rj > rl ? rj : rl; p = pj > pl ? pj : pl
  printf "{\"bench\":\"group_pause\",\"longest_pause_reference_s\":%.2f,\"longest_pause_perfwatch_s\":%.2f,\"ratio\":%.3f}\n", r, p, (r > 0 ? p / r : 0)
}'
