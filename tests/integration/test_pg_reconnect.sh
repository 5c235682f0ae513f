#!/usr/bin/env bash
# test_pg_reconnect.sh: a service whose tick comes once an hour gets its
# PostgreSQL connections cut between two ticks (what a PostgreSQL restart
# does to an idle connection). Its main thread must reconnect and publish its
# outbox on its own short period, not at the next tick: the log says the
# connection was re-established and /readyz is 200, while no input arrives.
# (test_faults once ended with the baseliner's /readyz 503, "outbox: main
# worker 0 cannot publish", for up to a minute after a PostgreSQL restart:
# the main thread published only at its noise-floor tick.)
#
# Run by tests/integration/run.sh with the dev stack up and run/stack.env loaded.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR
need_bins "$PW_BUILD/services/baseliner/pw-baseliner"
service_harness pg-reconnect pgrc
failures=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }

# its group at the topics' end: no input arrives, so only the main thread's own rounds can find the cut
"$PW_BUILD/tools/perfwatch" group to-end "$ns-baseliner" perf.points.v1 perf.fleet-changes.v1 perf.changepoints.v1 \
  perf.gate.verdicts.v1 perf.triage.v1 >/dev/null || fail "placing the baseliner's group at the topics' end"
service_start baseliner PW_BASELINER_NOISE_FLOOR_CHECK=1h PW_LOG_LEVEL=info
log=$work/baseliner.log
port=""
for _ in $(seq 300); do
  port=$(grep -o '"msg":"serving /healthz /readyz /metrics on [^"]*' "$log" | grep -o '[0-9]*$' || true)
  [ -z "$port" ] || [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/readyz")" != 200 ] || break
  kill -0 "${pid[baseliner]}" 2>/dev/null || fail "pw-baseliner exited"
  sleep 0.2
done
readyz() { curl -s -o "$work/readyz.txt" -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/readyz" || true; }
[ "$(readyz)" = 200 ] || fail "pw-baseliner not ready: $(cat "$work/readyz.txt")"
ok "pw-baseliner ready, its tick due again in an hour"

# this process's connections: its TCP client ports towards PostgreSQL
pg_port=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' <<<"$PW_PG_DSN")
ports=$(ss -tnpH state established "( dport = :$pg_port )" 2>/dev/null |
  grep "pid=${pid[baseliner]}," | awk '{print $3}' | sed 's/.*://' | paste -sd, || true)
[ -n "$ports" ] || fail "no PostgreSQL connection of pw-baseliner found with ss"
killed=$(q "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE client_port IN ($ports)) t")
[ "$killed" -ge 1 ] || fail "no backend terminated (client ports $ports)"
ok "terminated $killed backend(s) of pw-baseliner"

deadline=$((SECONDS + 60))
until grep -q '"msg":"outbox published again' "$log"; do
  [ $SECONDS -lt $deadline ] || { bad "the main thread did not publish its outbox again in 60 s with its tick an hour away"; break; }
  sleep 0.5
done
[ "$failures" -gt 0 ] || ok "the main thread found the cut, reconnected and published its outbox again between ticks"
grep -q '"msg":"postgresql connection re-established' "$log" || bad "no reconnection in the log"

code=""
for _ in $(seq 120); do code=$(readyz); [ "$code" = 200 ] && break; sleep 0.5; done
[ "$code" = 200 ] && ok "/readyz 200 again" || bad "/readyz $code 60 s after the cut: $(cat "$work/readyz.txt")"

[ "$failures" -eq 0 ] || { tail -20 "$log"; exit 1; }
echo "PASS"
