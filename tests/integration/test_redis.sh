#!/usr/bin/env bash
# test_redis.sh: the project's Redis client against the dev stack's Redis
# (PING, binary SET/GET/DEL, versioned set; tests/integration/it_redis.c).
#
# Run by tests/integration/run.sh with the dev stack up and run/stack.env loaded.
set -euo pipefail

for v in PW_BUILD PW_REDIS_ADDR; do
  [ -n "${!v:-}" ] || { echo "FAIL: $v is not set; run me through tests/integration/run.sh"; exit 1; }
done
bin=$PW_BUILD/tests/it_redis
[ -x "$bin" ] || { echo "FAIL: $bin not built"; exit 1; }
"$bin"
