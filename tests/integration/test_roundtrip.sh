#!/usr/bin/env bash
# test_roundtrip.sh: RunResult -> Kafka -> consumer loop -> PostgreSQL, with
# commit-after-transaction and idempotent redelivery (tests/integration/it_roundtrip.c).
#
# Run by tests/integration/run.sh with the dev stack up and run/stack.env
# loaded; passes when it_roundtrip prints no FAIL line and exits 0.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS
bin=$PW_BUILD/tests/it_roundtrip
need_bins "$bin"

"$bin" --runs 5
