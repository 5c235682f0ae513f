#!/usr/bin/env bash
# demo.sh: the script behind `make demo`, run as a list of numbered steps.
#
# At this stage it has one step: start the dev stack (deploy/dev/stack.sh)
# and say where each server listens, where the env file and the logs are, and
# how to stop it all. Later stages append steps to STEPS below (start the seven
# services, run the fleet simulator, show verdicts and pages); each step is a
# function that fails loudly, and the demo stops at the first failing step.
# The stack is left running at the end so that it can be explored.
#
#   tools/demo.sh BUILD_DIR
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
stack=$repo/deploy/dev/stack.sh

[ $# -eq 1 ] || { echo "usage: tools/demo.sh BUILD_DIR" >&2; exit 2; }
[ -d "$1" ] || { echo "demo: build folder \"$1\" does not exist; run make build" >&2; exit 2; }
build=$(cd "$1" && pwd)
run_dir=${PW_RUN_DIR:-$repo/run}
case $run_dir in /*) ;; *) run_dir=$PWD/$run_dir ;; esac

# Step 1: the dev stack, and the variables every later step and service reads.
step_stack() {
  "$stack" start "$build"
  set -a
  # shellcheck source=/dev/null
  . "$run_dir/stack.env"
  set +a
  echo
  echo "PostgreSQL  $PW_PG_DSN"
  echo "            psql \"$PW_PG_DSN\""
  echo "Redis       $PW_REDIS_ADDR"
  echo "            redis-cli -h ${PW_REDIS_ADDR%:*} -p ${PW_REDIS_ADDR##*:}"
  echo "Kafka       $PW_KAFKA_BOOTSTRAP_SERVERS  (dev broker: messages live in memory only)"
  echo "            kcat -L -b $PW_KAFKA_BOOTSTRAP_SERVERS"
  echo "env file    $run_dir/stack.env  (load with: set -a; . $run_dir/stack.env; set +a)"
  echo "logs        $run_dir/pg/postgres.log  $run_dir/redis/redis.log  $run_dir/kafka/devbroker.log"
  echo
  "$stack" status || true
}

STEPS=(
  "start the dev stack:step_stack"
)

total=${#STEPS[@]}
n=0
for s in "${STEPS[@]}"; do
  n=$((n + 1))
  title=${s%%:*}
  fn=${s##*:}
  echo "== demo step $n/$total: $title =="
  if ! "$fn"; then
    echo "demo: step $n ($title) failed" >&2
    echo "demo: the stack may be partly up; stop it with: make stack-stop" >&2
    exit 1
  fi
done
echo
echo "demo: done. The stack keeps running; stop it with: make stack-stop"
echo "      (or $stack stop)"

# ---------------------------------------------------------------------------
# Appended step (issue 4, fleet simulator and ingester): replay a scenario
# through the ingester and report what was stored. It runs after the steps
# above with the stack they started; the ingester it starts is stopped again
# at the end of the step (later stages run the services themselves).
# Environment: PW_DEMO_SCENARIO (default worked-example).
step_ingest() {
  local scn=$repo/tools/simulator/scenarios/${PW_DEMO_SCENARIO:-worked-example}.scn
  local sim=$build/tools/simulator/pw-sim ing=$build/services/ingester/pw-ingester
  [ -x "$sim" ] && [ -x "$ing" ] || { echo "demo: $sim or $ing not built" >&2; return 1; }
  set -a
  # shellcheck source=/dev/null
  . "$run_dir/stack.env"
  set +a
  local log=$run_dir/ingester.log q
  q() { psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
  PW_HTTP_PORT=0 "$ing" >"$log" 2>&1 &
  local ing_pid=$!
  echo "ingester    pid $ing_pid, log $log"
  local prefix
  prefix="demo-$(date +%s)-"
  "$sim" replay "$scn" --run-prefix "$prefix" --dup-every 50 --bad-every 100 || { kill "$ing_pid"; return 1; }
  local want
  want=$("$sim" count "$scn" | grep -o '"samples":[0-9]*' | cut -d: -f2)
  local deadline=$((SECONDS + 120)) got=0
  while got=$(q "SELECT count(*) FROM perfwatch.samples WHERE run_id LIKE '${prefix}%'"); [ "$got" -lt "$want" ]; do
    [ $SECONDS -lt $deadline ] || { echo "demo: only $got of $want samples stored" >&2; kill "$ing_pid"; return 1; }
    sleep 0.5
  done
  sleep 1
  echo
  echo "stored: $(q "SELECT count(*) FROM perfwatch.runs WHERE run_id LIKE '${prefix}%'") runs, $got samples,"\
       "$(q "SELECT count(*) FROM perfwatch.op_timings WHERE run_id LIKE '${prefix}%'") op timings,"\
       "$(q "SELECT count(DISTINCT series_id) FROM perfwatch.samples WHERE run_id LIKE '${prefix}%'") series;"\
       "dead letters: $(q "SELECT coalesce(string_agg(reason || ' ' || n, ', '), 'none') FROM (SELECT reason, count(*) n FROM perfwatch.dead_letters WHERE convert_from(original_key, 'UTF8') LIKE '${prefix}%' GROUP BY reason) x")"
  echo
  echo "TPOT p50 (ms) by series and build kind (median of the stored points):"
  psql "$PW_PG_DSN" -Xq -P pager=off -c "
    SELECT s.model, s.platform, s.config, p.build_kind,
           round(percentile_cont(0.5) WITHIN GROUP (ORDER BY p.value)::numeric, 3) AS median_ms,
           count(*) AS n
      FROM perfwatch.samples p JOIN perfwatch.series s USING (series_id)
     WHERE p.run_id LIKE '${prefix}%' AND s.metric = 'tpot_p50_ms'
     GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4 DESC"
  local port
  port=$(grep -o '"http_port":"[0-9]*"' "$log" | head -1 | grep -o '[0-9]*')
  echo "ingester /metrics:"
  curl -fsS "http://127.0.0.1:$port/metrics" | grep -E '^perfwatch_ingester_(runs|samples|duplicates|rejected|points|series)' || true
  kill -TERM "$ing_pid"
  wait "$ing_pid" 2>/dev/null || true
}

echo
echo "== demo step (appended): replay the ${PW_DEMO_SCENARIO:-worked-example} scenario through the ingester =="
if ! step_ingest; then
  echo "demo: the ingest step failed" >&2
  exit 1
fi
