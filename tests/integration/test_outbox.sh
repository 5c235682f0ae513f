#!/usr/bin/env bash
# test_outbox.sh: the one outbox (common/pw_outbox.h) on the dev stack
# (tests/integration/it_outbox.c), and an independent client's view: kcat
# reads perf.alerts.v1 and must find exactly the messages it_outbox says it
# published, in the order it published them (one key per row, one partition
# per key: the order checked is per key, the count is the whole).
#
# Run by tests/integration/run.sh with the dev stack up and run/stack.env loaded.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS
bin=$PW_BUILD/tests/it_outbox
need_bins "$bin"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" >"$tmp/out" || { cat "$tmp/out"; echo "FAIL: it_outbox"; exit 1; }
grep '^ok:' "$tmp/out"
prefix=$(grep -m1 '^sent ' "$tmp/out" | awk '{print $2}' | sed 's/-[0-9]*$//')
grep '^sent ' "$tmp/out" | awk '{print $2}' | sort >"$tmp/want"
got=""
for _ in $(seq 1 30); do
  timeout 20 kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.alerts.v1 -o beginning -e -q \
    -f '%k\n' 2>/dev/null | grep "^$prefix-" | sort >"$tmp/got" || true
  [ "$(wc -l <"$tmp/got")" -ge "$(wc -l <"$tmp/want")" ] && break
  sleep 0.5
done
if diff "$tmp/want" "$tmp/got" >/dev/null; then
  echo "ok: kcat sees the $(wc -l <"$tmp/want") messages it_outbox published (resent ones twice), no other"
else
  echo "FAIL: kcat saw other messages than published:"; diff "$tmp/want" "$tmp/got" | head; exit 1
fi
echo "PASS"
