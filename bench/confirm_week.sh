#!/usr/bin/env bash
# confirm_week.sh: confirmation reruns over quiet weeks at the seed's scale
# (issue 17; services/bisector/confirm.h), through the stack: pw-ingester,
# pw-baseliner, pw-bisector and `pw-sim answer` as the build farm.
#
#   bench/confirm_week.sh BUILD_DIR [--models N --platforms N --configs N --days N]
#     default scale: 60 models x 2 platforms x 3 configs (the seed's gated
#     matrix, 360 nightly runs a day, 8 metrics each: 2,760 series), 42 days:
#     the baseliner gates a series from its 30th nightly (2026-06-02), so the
#     last 7 days (2026-06-08 .. 06-14) are a full quiet week under baselines
# Needs a running dev stack (deploy/dev/stack.sh start; PW_RUN_DIR etc.).
#
# quiet-week.scn (35 days, ~1% random 5-10 sigma infra outliers, nothing
# else moves) is replayed in daily segments after the first 28 days (so that
# the baseliner judges each nightly against the baseline of the days before,
# as in production), waiting for the bisector to take each day's alerts in.
# Prints, per data day, the runs the reruns used against bisector.confirm_budget
# (perfwatch.confirm_budget), the CONFIRM jobs and refusals, then the
# outcomes: a quiet week should confirm nothing (every rerun lands back in
# the band: infra), so no regression alert, hence no page, comes of it.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: bench/confirm_week.sh BUILD_DIR [--models N --platforms N --configs N]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
scale=("$@")
[ ${#scale[@]} -gt 0 ] || scale=(--models 60 --platforms 2 --configs 3 --days 42)
ndays=42
for ((i = 0; i < ${#scale[@]}; i++)); do [ "${scale[$i]}" != --days ] || ndays=${scale[$((i + 1))]}; done
run_dir=${PW_RUN_DIR:-$repo/run}
set -a
# shellcheck source=/dev/null
. "$run_dir/stack.env"
set +a
cd "$repo"
q() { psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
pw=$build/tools/perfwatch
sim=$build/tools/simulator/pw-sim
tag="cw$(date +%s | tail -c 7)"
work=$(mktemp -d "$run_dir/confirm_week.XXXXXX")
file=tools/simulator/scenarios/quiet-week.scn
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

"$pw" group to-end "$tag-ingester" perf.runs.v1 >/dev/null
"$pw" group to-end "$tag-baseliner" perf.points.v1 perf.fleet-changes.v1 >/dev/null
"$pw" group to-end "$tag-bisector" perf.alerts.v1 perf.compiler-cls.v1 >/dev/null
"$pw" group to-end "$tag-answer" perf.bisect.jobs.v1 >/dev/null
svcs=(ingester baseliner bisector)
for s in "${svcs[@]}"; do
  PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$tag-$s" PW_BISECTOR_TICK=500ms \
    "$build/services/$s/pw-$s" >>"$work/$s.log" 2>&1 &
  pids+=($!)
done
for s in "${svcs[@]}"; do
  deadline=$((SECONDS + 90))
  until grep -q '"msg":"kafka partitions assigned' "$work/$s.log"; do
    [ $SECONDS -lt $deadline ] || { echo "confirm_week: pw-$s did not join" >&2; exit 1; }
    sleep 0.2
  done
done
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$tag-answer" "$sim" answer "$file" "${scale[@]}" --namespace "$tag" \
  >"$work/answer.log" 2>&1 &
pids+=($!)
budget=$("$build/services/bisector/pw-bisector" --config-reference | awk -F'`' '/bisector.confirm_budget/ {print $4}')
repeats=$("$build/services/bisector/pw-bisector" --config-reference | awk -F'`' '/bisector.confirm_repeats/ {print $4}')
"$sim" count "$file" "${scale[@]}" >"$work/count.json"
echo "confirm_week: $(cat "$work/count.json")"
# caught up: the ingester, then the baseliner, then the bisector at their topics' ends
catch_up() {
  "$pw" group lag "$tag-ingester" --wait 900 perf.runs.v1 >/dev/null
  sleep 2
  "$pw" group lag "$tag-baseliner" --wait 900 perf.points.v1 >/dev/null
  sleep 2
  "$pw" group lag "$tag-bisector" --wait 300 perf.alerts.v1 >/dev/null
}
t0=$SECONDS
"$sim" replay "$file" "${scale[@]}" --namespace "$tag" --run-prefix "$tag-" --until 2026-06-01 \
  >>"$work/sim.json" 2>>"$work/sim.log"
catch_up
echo "confirm_week: 28 days in after $((SECONDS - t0)) s"
last=$(date -u -d "2026-05-04 + $ndays days" +%F)
week=$(date -u -d "$last - 7 days" +%F)
d=2026-06-01
while [[ $d < $last ]]; do
  next=$(date -u -d "$d + 1 day" +%F)
  "$sim" replay "$file" "${scale[@]}" --namespace "$tag" --run-prefix "$tag-" --since "$d" --until "$next" \
    >>"$work/sim.json" 2>>"$work/sim.log"
  catch_up
  d=$next
done
# the reruns answered and decided (a job's answers come back through the ingester)
deadline=$((SECONDS + 300))
while [ "$(q "SELECT count(*) FROM perfwatch.confirm_jobs WHERE model LIKE '%.$tag' AND status = 'pending'")" != 0 ]; do
  [ $SECONDS -lt $deadline ] || { echo "confirm_week: jobs still pending after 300 s" >&2; break; }
  sleep 2
done
echo "confirm_week: replayed and decided in $((SECONDS - t0)) s; budget $budget runs a day, $repeats repeats a job"
echo
echo "data day | outlier runs rerun (jobs) | rerun runs used / budget | refused"
q "SELECT b.day || ' | ' || b.jobs || ' | ' || b.runs_used || ' / $budget | ' || b.refused
   FROM perfwatch.confirm_budget b WHERE EXISTS (SELECT 1 FROM perfwatch.confirm_jobs j
   WHERE j.budget_day = b.day AND j.model LIKE '%.$tag') ORDER BY b.day"
echo
echo "quiet week ($week .. $(date -u -d "$last - 1 day" +%F)):"
q "SELECT 'jobs ' || count(*) || ', rerun runs ' || coalesce(sum(repeats), 0) || ', max a day ' ||
          coalesce((SELECT max(n) FROM (SELECT sum(repeats) n FROM perfwatch.confirm_jobs WHERE model LIKE '%.$tag'
          AND budget_day >= '$week' GROUP BY budget_day) x), 0)
   FROM perfwatch.confirm_jobs WHERE model LIKE '%.$tag' AND budget_day >= '$week'"
q "SELECT 'alerts by outcome: ' || coalesce(string_agg(o || ' ' || n, ', '), 'none') FROM (SELECT c.outcome o, count(*) n
   FROM perfwatch.confirm_alerts c JOIN perfwatch.confirm_jobs j USING (job_id) WHERE j.model LIKE '%.$tag'
   GROUP BY 1 ORDER BY 1) x"
q "SELECT 'confirmed regressions or improvements (would reach an owner): ' || count(*) FROM perfwatch.confirm_alerts c
   JOIN perfwatch.confirm_jobs j USING (job_id) WHERE j.model LIKE '%.$tag' AND c.outcome = 'reproduced'"
q "SELECT 'bisections started: ' || count(*) FROM perfwatch.bisections WHERE bisection_id LIKE '%.$tag-%'"
