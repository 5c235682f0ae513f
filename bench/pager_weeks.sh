#!/usr/bin/env bash
# pager_weeks.sh: pages per simulated week, per scenario, through the whole
# stack (ingester, baseliner, watcher, gate, bisector, attributor, pager, and
# `pw-sim answer` as the build farm), and the time from the last candidate
# run stored to the page.
#
#   bench/pager_weeks.sh BUILD_DIR [SCENARIO...]
#     default: quiet-week worked-example recabling registered-win two-cl-interaction
# Needs a running dev stack (deploy/dev/stack.sh start; PW_RUN_DIR etc. as for it).
#
# The services run once; the scenarios are replayed one after the other,
# each namespaced, and each is given until the pager has decided nothing new
# for PW_WEEKS_QUIET seconds (default 25; at most PW_WEEKS_MAX, 300). Every
# replay of the simulator uses the same CL numbers, so the open incidents of
# one scenario are closed before the next (else they would be one event).
# The budget is raised (pager.budget_per_week=1000) so that what is counted
# is what §8 routes to a page, not what an earlier run's pages left of the
# week's budget. Prints one line per scenario and a table at the end.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: bench/pager_weeks.sh BUILD_DIR [SCENARIO...]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(quiet-week worked-example recabling registered-win two-cl-interaction)
run_dir=${PW_RUN_DIR:-$repo/run}
set -a
# shellcheck source=/dev/null
. "$run_dir/stack.env"
set +a
cd "$repo"
q() { psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
pw=$build/tools/perfwatch
sim=$build/tools/simulator/pw-sim
tag="wk$(date +%s | tail -c 6)"
work=$(mktemp -d "$run_dir/pager_weeks.XXXXXX")
quiet=${PW_WEEKS_QUIET:-25}
max=${PW_WEEKS_MAX:-300}
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

svcs=(ingester baseliner watcher gate bisector attributor pager)
"$pw" group to-end "$tag-ingester" perf.runs.v1 >/dev/null
"$pw" group to-end "$tag-baseliner" perf.points.v1 perf.fleet-changes.v1 >/dev/null
"$pw" group to-end "$tag-watcher" perf.points.v1 perf.fleet-changes.v1 perf.baselines.v1 >/dev/null
"$pw" group to-end "$tag-gate" perf.gate.requests.v1 >/dev/null
"$pw" group to-end "$tag-bisector" perf.alerts.v1 perf.compiler-cls.v1 >/dev/null
"$pw" group to-end "$tag-attributor" perf.alerts.v1 perf.bisections.v1 >/dev/null
"$pw" group to-end "$tag-pager" perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 \
  perf.attributions.v1 perf.rollouts.v1 >/dev/null
"$pw" group to-end "$tag-answer" perf.bisect.jobs.v1 >/dev/null
start_svc() {
  PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$tag-$1" PW_GATE_MIN_WAIT=45s PW_GATE_POLL_INTERVAL=200ms \
    PW_BISECTOR_TICK=200ms PW_PAGER_TRIAGE_KEY="pager-weeks-$tag-key" PW_PAGER_BUDGET_PER_WEEK=1000 \
    "$build/services/$1/pw-$1" >>"$work/$1.log" 2>&1 &
}
for s in "${svcs[@]}"; do
  start_svc "$s"
  pids+=($!)
  [ "$s" != pager ] || pager_pid=$!
done
restarts=1
for s in "${svcs[@]}"; do
  deadline=$((SECONDS + 90))
  until grep -q '"msg":"kafka partitions assigned' "$work/$s.log"; do
    [ $SECONDS -lt $deadline ] || { echo "pager_weeks: pw-$s did not join" >&2; exit 1; }
    sleep 0.2
  done
done

results=()
for scn in "${scenarios[@]}"; do
  file=tools/simulator/scenarios/$scn.scn
  ns="$tag$(echo "$scn" | tr -cd 'a-z' | head -c 6)"
  days=$(awk '$1 == "days" {print $2}' "$file")
  # the pager keeps its open incidents in memory: it is restarted after they are closed
  kill -TERM "$pager_pid"; wait "$pager_pid" 2>/dev/null || true
  q "UPDATE perfwatch.pager_incidents SET open = false WHERE open" >/dev/null
  start_svc pager
  pager_pid=$!
  pids+=($pager_pid)
  deadline=$((SECONDS + 90))
  restarts=$((restarts + 1))
  until [ "$(grep -c '"msg":"kafka partitions assigned' "$work/pager.log")" -ge "$restarts" ]; do
    [ $SECONDS -lt $deadline ] || { echo "pager_weeks: pw-pager did not rejoin" >&2; exit 1; }
    sleep 0.2
  done
  # spend table as the gate tests set it: the replay's first four families top tier, the rest tail
  i=0
  while read -r m; do
    if [ $i -lt 4 ]; then share=0.05 tier=top; else share=0.005 tier=tail; fi
    q "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES ('$m', $share, '$tier', 'pager_weeks')
       ON CONFLICT (model) DO NOTHING" >/dev/null
    i=$((i + 1))
  done < <("$sim" dump "$file" --namespace "$ns" --limit 5000 2>/dev/null | grep -o '"model":"[^"]*"' |
           sed 's/"model":"\(.*\)"/\1/' | awk '!seen[$0]++')
  [ -z "${answer_pid:-}" ] || kill -TERM "$answer_pid" 2>/dev/null || true
  PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$tag-answer" "$sim" answer "$file" --namespace "$ns" >"$work/answer-$scn.log" 2>&1 &
  answer_pid=$!
  pids+=($answer_pid)
  t0=$SECONDS
  "$sim" replay "$file" --namespace "$ns" --run-prefix "$ns-" >"$work/sim-$scn.json" 2>"$work/sim-$scn.log"
  # quiescence: no new decision of this namespace's incidents for $quiet seconds
  last=-1 stable=0
  while [ $((SECONDS - t0)) -lt "$max" ]; do
    n=$(q "SELECT count(*) FROM perfwatch.pager_decisions d JOIN perfwatch.pager_incidents i USING (incident_id)
           WHERE i.family LIKE '%.$ns'")
    if [ "$n" = "$last" ]; then stable=$((stable + 2)); else stable=0; last=$n; fi
    [ $stable -ge "$quiet" ] && [ $((SECONDS - t0)) -ge 90 ] && break
    sleep 2
  done
  pages=$(q "SELECT count(*) FROM perfwatch.pages p JOIN perfwatch.pager_incidents i USING (incident_id) WHERE i.family LIKE '%.$ns'")
  incidents=$(q "SELECT count(*) FILTER (WHERE merged_into IS NULL) || ' incidents (' || coalesce(string_agg(DISTINCT action, ','), '') || '; '
                       || count(*) FILTER (WHERE merged_into IS NOT NULL) || ' folded), '
                       || (SELECT count(*) FROM perfwatch.pager_tickets t JOIN perfwatch.pager_incidents i USING (incident_id) WHERE i.family LIKE '%.$ns') || ' tickets, '
                       || (SELECT count(*) FROM perfwatch.pager_notices n JOIN perfwatch.pager_incidents i USING (incident_id) WHERE i.family LIKE '%.$ns') || ' info notices'
                  FROM perfwatch.pager_incidents WHERE family LIKE '%.$ns'")
  lat=$(q "SELECT coalesce(round(extract(epoch FROM min(p.created_at) - (SELECT max(ingested_at) FROM perfwatch.runs
             WHERE build_kind = 'rc' AND run_id LIKE '$ns-%'))::numeric, 2)::text, '-')
           FROM perfwatch.pages p JOIN perfwatch.pager_incidents i USING (incident_id) WHERE i.family LIKE '%.$ns'")
  per_week=$(python3 -c "print(round($pages * 7 / $days, 2))")
  summaries=$(q "SELECT coalesce(string_agg(p.summary, ' | '), '') FROM perfwatch.pages p JOIN perfwatch.pager_incidents i USING (incident_id) WHERE i.family LIKE '%.$ns'")
  line="$scn: $pages pages over $days simulated days = $per_week per week; $incidents; last candidate run -> page ${lat} s; $summaries"
  echo "pager_weeks: $line"
  results+=("$line")
done
echo
printf '%s\n' "${results[@]}"
