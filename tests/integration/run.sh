#!/usr/bin/env bash
# run.sh: the integration-test driver behind `make integration-test`.
#
# It starts the dev stack (deploy/dev/stack.sh), loads run/stack.env, and runs
# every tests/integration/test_*.sh as its own bash process with a time limit.
# A test gets PW_PG_DSN, PW_REDIS_ADDR, PW_KAFKA_BOOTSTRAP_SERVERS, PW_RUN_DIR
# and PW_BUILD (the build folder, absolute) in its environment, runs from the
# checkout's root, and passes by exiting 0. The stack is always stopped at the
# end. The last line is exactly "integration: N passed, N failed"; the exit
# status is non-zero if any test failed or none ran.
#
#   tests/integration/run.sh BUILD_DIR [NAME...]
#     NAME: run only test_NAME.sh (e.g. devstack); default all.
# Environment: PW_TEST_TIMEOUT (seconds per test, default 600), plus what
# stack.sh reads (PW_RUN_DIR, PW_DEV_PG_PORT, PW_DEV_REDIS_PORT).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
stack=$repo/deploy/dev/stack.sh

[ $# -ge 1 ] || { echo "usage: tests/integration/run.sh BUILD_DIR [NAME...]" >&2; exit 2; }
build=$1
shift
[ -d "$build" ] || { echo "integration: build folder \"$build\" does not exist" >&2; exit 2; }
build=$(cd "$build" && pwd)
timeout_s=${PW_TEST_TIMEOUT:-600}
[[ $timeout_s =~ ^[0-9]+$ ]] || { echo "integration: invalid PW_TEST_TIMEOUT \"$timeout_s\"" >&2; exit 2; }

tests=()
if [ $# -gt 0 ]; then
  for n in "$@"; do
    t=$here/test_${n#test_}
    t=${t%.sh}.sh
    [ -f "$t" ] || { echo "integration: no test $t" >&2; exit 2; }
    tests+=("$t")
  done
else
  shopt -s nullglob
  tests=("$here"/test_*.sh)
  shopt -u nullglob
fi

stack_up=0
stop_stack() {
  [ $stack_up -eq 1 ] || return 0
  stack_up=0
  "$stack" stop || echo "integration: stack.sh stop failed; see $stack status" >&2
}
# A test runs in the background under `wait`, so that Ctrl-C or TERM reaches
# this script at once (timeout puts the test in its own process group); the
# handler ends the test, then the EXIT trap stops the stack.
test_pid=""
on_signal() {
  [ -z "$test_pid" ] || { kill -TERM "$test_pid" 2>/dev/null || true; wait "$test_pid" 2>/dev/null || true; }
  echo "integration: interrupted" >&2
  exit "$1"
}
trap stop_stack EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

passed=0
failed=0
failures=()

if [ ${#tests[@]} -eq 0 ]; then
  echo "integration: no tests/integration/test_*.sh found" >&2
  echo "integration: 0 passed, 0 failed"
  exit 1
fi

# A stack that is not running starts from empty databases, as in CI; a running
# one is reused (and, like any, stopped at the end).
fresh=--fresh
if { "$stack" status || true; } | grep -q " running "; then
  fresh=""
  echo "integration: reusing the running dev stack; it is stopped at the end"
fi
stack_up=1
if ! "$stack" start "$build" $fresh; then
  echo "integration: the dev stack did not start; no test ran" >&2
  stop_stack
  echo "integration: 0 passed, 0 failed"
  exit 1
fi

run_dir=${PW_RUN_DIR:-$repo/run}
case $run_dir in /*) ;; *) run_dir=$PWD/$run_dir ;; esac
set -a
# shellcheck source=/dev/null
. "$run_dir/stack.env"
set +a
export PW_BUILD=$build
log_dir=$run_dir/integration
mkdir -p "$log_dir"

cd "$repo"
for t in "${tests[@]}"; do
  name=$(basename "$t" .sh)
  log=$log_dir/$name.log
  echo "integration: $name ..."
  start=$SECONDS
  rc=0
  timeout --kill-after=10 "$timeout_s" bash "$t" </dev/null >"$log" 2>&1 &
  test_pid=$!
  wait "$test_pid" || rc=$?
  test_pid=""
  took=$((SECONDS - start))
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
    echo "integration: PASS $name (${took} s)"
  else
    failed=$((failed + 1))
    failures+=("$name")
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
      why="timed out after ${timeout_s} s"
    else
      why="exit status $rc"
    fi
    echo "integration: FAIL $name ($why, ${took} s); last lines of $log:"
    tail -n 40 "$log" | sed 's/^/    /'
  fi
done

stop_stack
# The reasons again at the end, where a truncated CI log still shows them.
for name in "${failures[@]}"; do
  grep -a -m 3 -E "FAIL|Assertion|Sanitizer" "$log_dir/$name.log" | cut -c1-400 | sed "s/^/integration: $name: /" || true
done
[ $failed -eq 0 ] || echo "integration: failed: ${failures[*]} (logs in $log_dir)"
echo "integration: $passed passed, $failed failed"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
