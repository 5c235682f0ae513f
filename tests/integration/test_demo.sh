#!/usr/bin/env bash
# test_demo.sh: `make demo`'s script on the dev stack, as a user runs it, and
# its honesty: it must end with every expected result and print on-call's page
# with its artifact-3 payload, with no Python traceback anywhere (an infra
# notice in on-call's folder once crashed step 8 while the demo still said
# "every expected result came out"); and a demo whose step fails must exit
# non-zero naming the step, not carry on.
set -euo pipefail
. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN PW_RUN_DIR
work=$(mktemp -d "$PW_RUN_DIR/test_demo.XXXXXX")
fail() { echo "test_demo: FAIL: $*"; exit 1; }

rc=0
tools/demo.sh "$PW_BUILD" </dev/null >"$work/demo.log" 2>&1 || rc=$?
echo "test_demo: demo exited $rc after $(grep -c '' "$work/demo.log") lines"
[ "$rc" = 0 ] || { tail -n 30 "$work/demo.log"; fail "the demo exited $rc"; }
! grep -q "Traceback" "$work/demo.log" || { grep -n -A5 "Traceback" "$work/demo.log"; fail "a traceback in the demo's output"; }
grep -q "^every expected result came out$" "$work/demo.log" || fail "no 'every expected result came out'"
grep -q "payload (artifact 3" "$work/demo.log" || fail "on-call's artifact-3 payload was not printed"
grep -q '"culprit": "cl/7841917"' "$work/demo.log" || fail "the printed payload has no culprit cl/7841917"
grep -q "^  ok       on-call: the page's artifact-3 payload printed" "$work/demo.log" || fail "the payload check did not pass"
grep -q "== what to look at next ==" "$work/demo.log" || fail "no next steps at the end"
echo "test_demo: ok: every result, the page and its payload, the next steps"

# a step that fails ends the demo, non-zero, naming the step
rc=0
PW_DEMO_SCENARIO=no-such-scenario tools/demo.sh "$PW_BUILD" </dev/null >"$work/fail.log" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "the demo of a missing scenario exited 0"
grep -q "^demo: step [0-9]*/[0-9]* (replay the no-such-scenario scenario) failed" "$work/fail.log" ||
  { tail -n 5 "$work/fail.log"; fail "the failing step is not named"; }
! grep -q "every expected result came out" "$work/fail.log" || fail "a failed demo claimed success"
echo "test_demo: ok: a failing step ends the demo with status $rc: $(grep '^demo: step' "$work/fail.log")"
rm -rf "$work"
echo "test_demo: PASS"
