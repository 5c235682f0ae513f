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
# Environment: PW_TEST_TIMEOUT (seconds per test, default 600),
# PW_INTEGRATION_SKIP (names left out of a run of all tests: `make test` runs
# SANITIZER_TESTS on the sanitizer build only), plus what stack.sh reads
# (PW_RUN_DIR, PW_DEV_PG_PORT, PW_DEV_REDIS_PORT).
#
# A sanitizer build (BUILD_DIR configured with -DPW_SANITIZE=ON, as `make
# asan` does) is recognised from its CMakeCache.txt: every process the stack
# and the tests start from it (services, pw-sim, perfwatch, pw-topics)
# stops at its first ASan or UBSan report and leaves a mark (and an ASan
# report's text) under run/integration/sanitizer/<test>/, and a test during
# which any process did so fails, whatever its exit status (a service that died of a report
# in the background may not fail the test by itself). Leaks are reported at
# a normal exit (a service stopped by SIGTERM returns from main); a process
# killed with -9 reports nothing. `make integration-test-asan` runs the
# subset that covers every service and the CLI (SANITIZER_TESTS in the
# Makefile).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
stack=$repo/deploy/dev/stack.sh

[ $# -ge 1 ] || { echo "usage: tests/integration/run.sh BUILD_DIR [NAME...]" >&2; exit 2; }
build=$1
shift
[ -d "$build" ] || { echo "integration: build folder \"$build\" does not exist" >&2; exit 2; }
build=$(cd "$build" && pwd)
sanitize=0
grep -qx 'PW_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null && sanitize=1
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
  for t in "$here"/test_*.sh; do
    n=${t##*/test_}
    n=${n%.sh}
    if [[ " ${PW_INTEGRATION_SKIP:-} " == *" $n "* ]]; then
      echo "integration: test_$n left to the sanitizer build's run (PW_INTEGRATION_SKIP)"
      continue
    fi
    tests+=("$t")
  done
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
run_dir=${PW_RUN_DIR:-$repo/run}
case $run_dir in /*) ;; *) run_dir=$PWD/$run_dir ;; esac
log_dir=$run_dir/integration
san_dir=$log_dir/sanitizer
# sanitize_env DIR: every process started from now on stops at its first
# sanitizer report, writes it to DIR/asan.<pid> (ASan, LeakSanitizer) or
# DIR/ubsan.<pid> (UBSan) and, dying of it, leaves DIR/died.<pid>
# (common/pw_sanitizer_hook.c)
sanitize_env() {
  mkdir -p "$1"
  export PW_SANITIZER_DIR=$1
  export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:disable_coredump=1:log_path=$1/asan"
  export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"
  export LSAN_OPTIONS="suppressions=$repo/tests/integration/lsan.supp:print_suppressions=0"
}
# sanitizer_reports DIR: prints the reports written in DIR; true if there were any
sanitizer_reports() {
  local f found=1
  for f in "$1"/died.* "$1"/asan.* "$1"/ubsan.*; do
    [ -s "$f" ] || continue
    found=0
    echo "--- $f"
    head -n 60 "$f"
  done
  return $found
}
if [ $sanitize -eq 1 ]; then
  rm -rf "$san_dir"
  # the canary: a report of each kind in a process must leave its mark and its text
  canary=$build/tests/sanitizer_canary
  [ -x "$canary" ] || { echo "integration: $canary not built" >&2; exit 2; }
  for kind in asan ubsan leak; do
    sanitize_env "$san_dir/canary-$kind"
    rc=0
    # (in a shell of its own, whose "Aborted" goes to /dev/null with the report)
    bash -c '"$0" "$1"; exit $?' "$canary" $kind >/dev/null 2>&1 || rc=$?
    case $kind in ubsan) text=ubsan ;; *) text=asan ;; esac
    if [ $rc -eq 0 ] || ! ls "$san_dir/canary-$kind"/died.* >/dev/null 2>&1 ||
      ! ls "$san_dir/canary-$kind"/$text.* >/dev/null 2>&1; then
      echo "integration: a $kind report is not seen (exit status $rc, $san_dir/canary-$kind holds:" \
        "$(ls "$san_dir/canary-$kind" | tr '\n' ' ')); sanitizer reports would go unnoticed" >&2
      exit 2
    fi
  done
  rm -rf "$san_dir"
  sanitize_env "$san_dir/stack"
  echo "integration: sanitizer build; reports are written under $san_dir"
fi
stack_up=1
if ! "$stack" start "$build" $fresh; then
  echo "integration: the dev stack did not start; no test ran" >&2
  stop_stack
  echo "integration: 0 passed, 0 failed"
  exit 1
fi

set -a
# shellcheck source=/dev/null
. "$run_dir/stack.env"
set +a
export PW_BUILD=$build
mkdir -p "$log_dir"

cd "$repo"
for t in "${tests[@]}"; do
  name=$(basename "$t" .sh)
  log=$log_dir/$name.log
  echo "integration: $name ..."
  start=$SECONDS
  rc=0
  [ $sanitize -eq 0 ] || sanitize_env "$san_dir/$name"
  timeout --kill-after=10 "$timeout_s" bash "$t" </dev/null >"$log" 2>&1 &
  test_pid=$!
  wait "$test_pid" || rc=$?
  test_pid=""
  took=$((SECONDS - start))
  if [ $sanitize -eq 1 ] && sanitizer_reports "$san_dir/$name" >>"$log"; then
    echo "Sanitizer: a process reported during $name (reports in $san_dir/$name)" >>"$log"
    [ $rc -ne 0 ] || rc=86
  fi
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
    echo "integration: PASS $name (${took} s)"
  else
    failed=$((failed + 1))
    failures+=("$name")
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
      why="timed out after ${timeout_s} s"
    elif [ $rc -eq 86 ]; then
      why="a sanitizer report"
    else
      why="exit status $rc"
    fi
    echo "integration: FAIL $name ($why, ${took} s); last lines of $log:"
    tail -n 40 "$log" | sed 's/^/    /'
  fi
done

stop_stack
# the stack's own processes (pw-topics, pw-migrate) report at their exit
if [ $sanitize -eq 1 ] && sanitizer_reports "$san_dir/stack" >"$log_dir/stack-sanitizer.log"; then
  failed=$((failed + 1))
  failures+=("stack-sanitizer")
  echo "integration: FAIL the dev stack's processes reported (see $log_dir/stack-sanitizer.log):"
  head -n 40 "$log_dir/stack-sanitizer.log" | sed 's/^/    /'
fi
# The reasons again at the end, where a truncated CI log still shows them.
for name in "${failures[@]}"; do
  grep -a -m 3 -E "FAIL|Assertion|Sanitizer" "$log_dir/$name.log" | cut -c1-400 | sed "s/^/integration: $name: /" || true
done
[ $failed -eq 0 ] || echo "integration: failed: ${failures[*]} (logs in $log_dir)"
echo "integration: $passed passed, $failed failed"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
