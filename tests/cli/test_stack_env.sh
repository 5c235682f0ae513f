#!/usr/bin/env bash
# test_stack_env.sh: perfwatch run from a checkout finds the dev stack's
# run/stack.env by itself when the environment lacks its variables, says which
# file it read, and lets the environment win; where there is no such file it
# says so and what to do. $1 is the perfwatch binary.
set -euo pipefail
pw=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_stack_env: FAIL: $*"; exit 1; }
unset PW_PG_DSN PW_REDIS_ADDR PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR

mkdir -p "$tmp/checkout/run" "$tmp/checkout/services/gate" "$tmp/elsewhere"
# port 1: nothing listens, so the error names the DSN the file gave
cat >"$tmp/checkout/run/stack.env" <<'ENV'
# stack.env: written by deploy/dev/stack.sh start for the running dev stack.
PW_PG_DSN='host=127.0.0.1 port=1 dbname=perfwatch user=perfwatch connect_timeout=2'
PW_REDIS_ADDR='127.0.0.1:1'
PW_KAFKA_BOOTSTRAP_SERVERS='127.0.0.1:1'
PW_RUN_DIR='/nowhere'
ENV

rc=0
err=$(cd "$tmp/checkout/services/gate" && "$pw" gate show xla-rc-1 2>&1 >/dev/null) || rc=$?
grep -q "PW_PG_DSN, PW_REDIS_ADDR, PW_KAFKA_BOOTSTRAP_SERVERS, PW_RUN_DIR from $tmp/checkout/run/stack.env" <<<"$err" ||
  fail "from a subfolder of the checkout it did not say it read run/stack.env: $err"
grep -q "port 1 failed" <<<"$err" || fail "it did not use the file's PW_PG_DSN: $err"
echo "test_stack_env: ok: found $tmp/checkout/run/stack.env from services/gate"

err=$(cd "$tmp/checkout" && PW_PG_DSN='host=127.0.0.1 port=2 dbname=x user=y connect_timeout=2' \
        "$pw" gate show xla-rc-1 2>&1 >/dev/null) || true
grep -q "port 2 failed" <<<"$err" || fail "the environment's PW_PG_DSN did not win: $err"
! grep -q "PW_PG_DSN," <<<"$err" || fail "it claimed PW_PG_DSN from the file although the environment set it: $err"
echo "test_stack_env: ok: the environment wins over the file"

rc=0
err=$(cd "$tmp/elsewhere" && "$pw" gate show xla-rc-1 2>&1 >/dev/null) || rc=$?
[ "$rc" = 2 ] || fail "without a stack.env: exit $rc, want 2"
grep -q "PW_PG_DSN is not set, and no run/stack.env was found in $tmp/elsewhere or above" <<<"$err" &&
  grep -q "make stack-start" <<<"$err" || fail "without a stack.env the message does not say where it looked and what to do: $err"
echo "test_stack_env: ok: no stack.env: $(head -n 1 <<<"$err")"
echo "test_stack_env: PASS"
