#!/usr/bin/env bash
# test_ingest_concurrent.sh: two ingesters write the same runs at the same
# time — what a redelivery across a rebalance does to one run key. Each is in
# its own consumer group, so each reads every run of the replay; between them
# every run, sample and op timing is stored exactly once, no run is
# dead-lettered, and every sample's series id is its run's series.
#
# Run by tests/integration/run.sh with the dev stack up (PW_PG_DSN,
# PW_KAFKA_BOOTSTRAP_SERVERS, PW_BUILD).
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS
sim=$PW_BUILD/tools/simulator/pw-sim
ing=$PW_BUILD/services/ingester/pw-ingester
it=$PW_BUILD/tests/it_watcher
need_bins "$sim" "$ing" "$it"

scn=tools/simulator/scenarios/quiet-week.scn
scale=(--models 40 --days 2 --repeats 3)
prefix="it-conc-$$-$(date +%s)-"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for l in "$work"/ing.*.log; do echo "--- $l (tail)"; tail -10 "$l"; done
  exit 1
}
json() { grep -o "\"$1\":[0-9.]*" <<<"$2" | head -1 | cut -d: -f2; }
. tests/integration/lib_ingest.sh
metric() { curl -fsS "http://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 == m { print $2 }'; }

count=$("$sim" count "$scn" "${scale[@]}")
want_runs=$(json runs "$count"); want_samples=$(json samples "$count")
export PW_HTTP_PORT=0
# Both groups start just before the replay and both ingesters after it, so
# that they read the same backlog in step and meet on the same run keys.
# (Runs keyed by run id, pw-sim --runs-key run_id, so that the dead-letter
# check below finds this test's runs by key prefix.)
for m in a b; do
  "$it" start-at-end "it-conc-$m-$$" perf.runs.v1 || fail "could not place group $m at the end of perf.runs.v1"
done
"$sim" replay "$scn" "${scale[@]}" --runs-key run_id --run-prefix "$prefix" >/dev/null 2>"$work/sim.log" || fail "replay failed"
for m in a b; do
  PW_KAFKA_GROUP_ID="it-conc-$m-$$" "$ing" >"$work/ing.$m.log" 2>&1 &
  pids+=($!)
done
ports=()
for m in a b; do
  deadline=$((SECONDS + 30))
  until p=$(grep -o '"http_port":"[0-9]*"' "$work/ing.$m.log" | head -1 | grep -o '[0-9]*'); do
    [ $SECONDS -lt $deadline ] || fail "ingester $m did not start"
    sleep 0.2
  done
  ports+=("$p")
done

# both have read every run when each counted it as stored or as a duplicate
seen() { echo $(( ${1:-0} + ${2:-0} )); }
deadline=$((SECONDS + 120))
for p in "${ports[@]}"; do
  until [ "$(seen "$(metric "$p" perfwatch_ingester_runs_accepted_total)" \
                  "$(metric "$p" perfwatch_ingester_duplicates_total)")" -ge "$want_runs" ]; do
    [ $SECONDS -lt $deadline ] || fail "an ingester saw fewer than $want_runs runs in 120 s"
    sleep 0.5
  done
done

stored_exactly_once "$prefix" "$want_runs" "$want_samples"
dl=$(q "SELECT count(*) FROM perfwatch.dead_letters WHERE convert_from(original_key, 'UTF8') LIKE '${prefix}%'")
[ "$dl" = "0" ] || fail "$dl runs dead-lettered: $(q "SELECT reason || ': ' || left(detail, 120) FROM perfwatch.dead_letters WHERE convert_from(original_key, 'UTF8') LIKE '${prefix}%' LIMIT 1")"
accepted=$(( $(metric "${ports[0]}" perfwatch_ingester_runs_accepted_total) + $(metric "${ports[1]}" perfwatch_ingester_runs_accepted_total) ))
[ "$accepted" = "$want_runs" ] || fail "the two ingesters counted $accepted runs stored, want $want_runs"
retried=$(cat "$work"/ing.*.log | grep -c "one run at a time" || true)
echo "ok: $want_runs runs, $want_samples samples stored once by two concurrent ingesters ($retried batches redone run by run), none dead-lettered"
echo "PASS"
