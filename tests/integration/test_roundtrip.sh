#!/usr/bin/env bash
# test_roundtrip.sh: RunResult -> Kafka -> consumer loop -> PostgreSQL, with
# commit-after-transaction and idempotent redelivery (tests/integration/it_roundtrip.c).
#
# Run by tests/integration/run.sh with the dev stack up and run/stack.env
# loaded; passes when it_roundtrip prints no FAIL line and exits 0.
set -euo pipefail

for v in PW_BUILD PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS; do
  [ -n "${!v:-}" ] || { echo "FAIL: $v is not set; run me through tests/integration/run.sh"; exit 1; }
done
bin=$PW_BUILD/tests/it_roundtrip
[ -x "$bin" ] || { echo "FAIL: $bin not built"; exit 1; }

"$bin" --runs 5
