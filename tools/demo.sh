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
