#!/usr/bin/env bash
# test_redis.sh: the project's Redis client against the dev stack's Redis
# (PING, binary SET/GET/DEL, versioned set; tests/integration/it_redis.c).
#
# Run by tests/integration/run.sh with the dev stack up and run/stack.env loaded.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD PW_REDIS_ADDR
bin=$PW_BUILD/tests/it_redis
need_bins "$bin"
"$bin"
