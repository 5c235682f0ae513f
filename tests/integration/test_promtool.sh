#!/usr/bin/env bash
# test_promtool.sh: checks the /healthz, /readyz and /metrics server end to end.
#
# Run by tests/integration/run.sh (which exports PW_BUILD), or by hand:
#   PW_BUILD=build bash tests/integration/test_promtool.sh
# It needs no dev stack. It starts $PW_BUILD/tests/it_metrics_server on a free
# 127.0.0.1 port (a stand-in service whose worker thread keeps updating a
# labelled counter, a labelled histogram and gauges), then checks: /healthz
# is 200 "ok"; /readyz is 503 with the reason until SIGUSR1, then 200;
# /metrics is 200 with Content-Type text/plain; version=0.0.4, holds every
# family, and `promtool check metrics` reports no problem; counters grow
# between scrapes; unknown paths are 404; SIGTERM stops the server with exit
# status 0 and, in a sanitizer build, no sanitizer report.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${PW_BUILD:-$repo/build}
bin=$build/tests/it_metrics_server

failures=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

[ -x "$bin" ] || { echo "FAIL: $bin not built (cmake --build $build --target it_metrics_server)"; exit 1; }
command -v promtool >/dev/null || { echo "FAIL: promtool not installed (Debian package prometheus)"; exit 1; }
command -v curl >/dev/null || { echo "FAIL: curl not installed"; exit 1; }

tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# Environment only: http.listen and http.port come from pw_config like any service.
PW_HTTP_LISTEN=127.0.0.1 PW_HTTP_PORT=0 "$bin" --max-seconds 120 >"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!

port=""
for _ in $(seq 100); do
  port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$tmp/stdout")
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "FAIL: it_metrics_server did not report a port; its stderr:"
  cat "$tmp/stderr"
  exit 1
fi
base=http://127.0.0.1:$port
ok "server listening on $base"

# fetch PATH -> sets code; body in $tmp/body, headers in $tmp/headers
fetch() {
  code=$(curl -sS --max-time 5 -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' "$base$1") || code=000
}

fetch /healthz
if [ "$code" = 200 ] && [ "$(cat "$tmp/body")" = ok ]; then ok "/healthz 200 ok"; else fail "/healthz: $code $(cat "$tmp/body")"; fi

fetch /readyz
if [ "$code" = 503 ] && grep -q '^not ready: waiting for SIGUSR1$' "$tmp/body"; then
  ok "/readyz 503 before ready: $(cat "$tmp/body")"
else
  fail "/readyz before ready: $code $(cat "$tmp/body")"
fi

kill -USR1 "$pid"
for _ in $(seq 50); do
  fetch /readyz
  [ "$code" = 200 ] && break
  sleep 0.1
done
if [ "$code" = 200 ] && [ "$(cat "$tmp/body")" = ready ]; then ok "/readyz 200 after SIGUSR1"; else fail "/readyz after SIGUSR1: $code $(cat "$tmp/body")"; fi

fetch /metrics
cp "$tmp/body" "$tmp/metrics1"
if [ "$code" = 200 ]; then ok "/metrics 200 ($(wc -l <"$tmp/metrics1") lines)"; else fail "/metrics: $code"; fi
if grep -qi '^content-type: text/plain; version=0\.0\.4' "$tmp/headers"; then
  ok "/metrics Content-Type text/plain; version=0.0.4"
else
  fail "/metrics Content-Type: $(grep -i '^content-type' "$tmp/headers" || echo none)"
fi
for fam in perfwatch_it_messages_total:counter perfwatch_it_batch_duration_seconds:histogram \
           perfwatch_it_consumer_lag_messages:gauge perfwatch_it_ready:gauge \
           perfwatch_metrics_series_dropped_total:counter; do
  name=${fam%%:*} type=${fam##*:}
  if grep -qx "# TYPE $name $type" "$tmp/metrics1"; then ok "family $name ($type)"; else fail "no \"# TYPE $name $type\" in /metrics"; fi
done
grep -q '^perfwatch_it_batch_duration_seconds_bucket{stage="decode",le="+Inf"} [0-9]' "$tmp/metrics1" \
  && ok "histogram has its +Inf bucket" || fail "no +Inf bucket for stage=decode"
grep -qF 'result="say \"hi\" \\ back\nslash"' "$tmp/metrics1" \
  && ok "label value escaped" || fail "escaped label value not found"
grep -qx 'perfwatch_it_ready 1' "$tmp/metrics1" && ok "ready gauge is 1" || fail "perfwatch_it_ready is not 1"

if promtool check metrics <"$tmp/metrics1" >"$tmp/promtool" 2>&1; then prc=0; else prc=$?; fi
if [ $prc -eq 0 ] && [ ! -s "$tmp/promtool" ]; then
  ok "promtool check metrics: no problems"
else
  fail "promtool check metrics (exit $prc):"
  sed 's/^/    /' "$tmp/promtool"
fi

# counters only grow: the ok/perf.runs.v1 series, scraped again a little later
sum_ok() { awk '/^perfwatch_it_messages_total\{topic="perf.runs.v1",result="ok"\} / { print $2 }' "$1"; }
sleep 0.3
fetch /metrics
cp "$tmp/body" "$tmp/metrics2"
a=$(sum_ok "$tmp/metrics1") b=$(sum_ok "$tmp/metrics2")
if [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { exit !(b > a) }'; then
  ok "counter grew between scrapes ($a -> $b)"
else
  fail "counter did not grow between scrapes (\"$a\" -> \"$b\")"
fi

fetch /no/such/path
[ "$code" = 404 ] && ok "unknown path 404" || fail "unknown path: $code"

kill -TERM "$pid"
if wait "$pid"; then src=0; else src=$?; fi
pid=""
[ $src -eq 0 ] && ok "SIGTERM: exit status 0" || fail "SIGTERM: exit status $src"
if grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:' "$tmp/stderr"; then
  fail "sanitizer report on stderr:"
  sed 's/^/    /' "$tmp/stderr" | head -40
else
  ok "no sanitizer report"
fi

if [ $failures -ne 0 ]; then
  echo "test_promtool: $failures check(s) failed"
  exit 1
fi
echo "test_promtool: all checks passed"
