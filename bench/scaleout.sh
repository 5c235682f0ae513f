#!/usr/bin/env bash
# scaleout.sh: throughput of the ingest pipeline with 1, 2 and 4 ingester and
# baseliner instances (one consumer thread each; one consumer group per
# service), on the dev stack, measured in the same run.
#
# Each round: a namespace of its own (pw-sim --namespace: new series), both
# groups positioned at the topics' ends, N ingesters and N baseliners started
# and waited for until every one holds partitions; then quiet-week with 8
# models (7,680 runs, 58,880 samples) is replayed at full speed. Timed from
# the replay's start (the consumers read while it produces):
#   replay_s    the replay published everything;
#   ingest_s    the ingesters' group has no lag (every run stored, its points
#               published): ingest runs/s = runs / ingest_s;
#   pipeline_s  then the baseliners' group has no lag either:
#               points/s = points the baseliners consumed / pipeline_s;
# lag is polled every 0.2 s. Ratios are against the N = 1 round of the same
# run. The replay, PostgreSQL, the broker and every instance share the
# machine's cores (2 on the development machine), so the figures say what
# more members buy on this machine, not on a cluster.
#
#   bench/scaleout.sh [BUILD_DIR]   (bench/run.sh runs it with the stack up)
# Environment: PW_BENCH_SCALE ("1 2 4"), PW_BENCH_KEEP (keep the logs),
# PW_BENCH_RUNS_KEY (pw-sim --runs-key: series, the default, or run_id).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
export PW_BUILD=${1:-${PW_BUILD:-$repo/build}}
sim=$PW_BUILD/tools/simulator/pw-sim
pw=$PW_BUILD/tools/perfwatch
for v in PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS; do
  [ -n "${!v:-}" ] || { echo "bench scaleout: $v is not set (start the dev stack)" >&2; exit 1; }
done
for b in "$sim" "$pw" "$PW_BUILD/services/ingester/pw-ingester" "$PW_BUILD/services/baseliner/pw-baseliner"; do
  [ -x "$b" ] || { echo "bench scaleout: $b not built" >&2; exit 1; }
done
scn=$repo/tools/simulator/scenarios/quiet-week.scn
work=$(mktemp -d)
# shellcheck source=../tests/integration/lib_scaleout.sh
. "$repo/tests/integration/lib_scaleout.sh"
cleanup() {
  so_stop
  [ -n "${PW_BENCH_KEEP:-}" ] && echo "bench scaleout: logs kept in $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
q() { psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
now() { date +%s.%N; }

runs_total=$("$sim" count "$scn" --models 8 | grep -o '"runs":[0-9]*' | cut -d: -f2)
results=()
for n in ${PW_BENCH_SCALE:-1 2 4}; do
  tag=bso$$n$n
  gi=bench-$tag-ingester gb=bench-$tag-baseliner
  "$pw" group to-end "$gi" perf.runs.v1 >/dev/null
  "$pw" group to-end "$gb" perf.points.v1 perf.fleet-changes.v1 >/dev/null
  so_start ingester "$gi" "$n"
  so_start baseliner "$gb" "$n"
  so_wait_assigned ingester "$gi" "$n" 120 && so_wait_assigned baseliner "$gb" "$n" 120 ||
    { echo "bench scaleout: N=$n: not every instance got partitions" >&2; exit 1; }
  sleep 2
  t0=$(now)
  "$sim" replay "$scn" --models 8 --namespace "$tag" --run-prefix "$tag-" --runs-key "${PW_BENCH_RUNS_KEY:-series}" >"$work/sim.$n.log" 2>&1
  ts=$(now)
  "$pw" group lag "$gi" --wait 900 perf.runs.v1 >/dev/null
  ti=$(now)
  "$pw" group lag "$gb" --wait 900 perf.points.v1 >/dev/null
  tb=$(now)
  so_stop
  stored=$(q "SELECT count(*) FROM perfwatch.runs WHERE run_id LIKE '$tag-%'")
  points=0
  for ((i = 0; i < n; i++)); do
    p=$(grep -o '"msg":"stopped: [0-9]* batches, [0-9]* points' "$work/baseliner.$gb.$i.log" | grep -o '[0-9]* points' | cut -d' ' -f1 || true)
    points=$((points + ${p:-0}))
  done
  [ "$stored" = "$runs_total" ] || { echo "bench scaleout: N=$n stored $stored of $runs_total runs" >&2; exit 1; }
  line=$(awk -v n="$n" -v r="$stored" -v p="$points" -v a="$t0" -v s="$ts" -v i="$ti" -v b="$tb" 'BEGIN {
    printf "%d %d %.2f %.2f %.1f %d %.2f %.1f", n, r, s - a, i - a, r / (i - a), p, b - a, p / (b - a) }')
  results+=("$line")
  read -r n_ r_ rs_ is_ ir_ p_ ps_ pr_ <<<"$line"
  printf '{"bench":"scaleout","instances":%s,"runs":%s,"replay_s":%s,"ingest_s":%s,"ingest_runs_per_s":%s,"points":%s,"pipeline_s":%s,"pipeline_points_per_s":%s}\n' \
    "$n_" "$r_" "$rs_" "$is_" "$ir_" "$p_" "$ps_" "$pr_"
done

echo
echo "instances | runs | replay s | ingest s | runs/s | vs 1 | points | pipeline s | points/s | vs 1"
echo "---|---|---|---|---|---|---|---|---|---"
read -r _ _ _ _ ir1 _ _ pr1 <<<"${results[0]}"
for line in "${results[@]}"; do
  read -r n r rs is ir p ps pr <<<"$line"
  awk -v n="$n" -v r="$r" -v rs="$rs" -v is="$is" -v ir="$ir" -v p="$p" -v ps="$ps" -v pr="$pr" -v ir1="$ir1" -v pr1="$pr1" 'BEGIN {
    printf "%d | %d | %.2f | %.2f | %.1f | %.2f | %d | %.2f | %.1f | %.2f\n", n, r, rs, is, ir, ir / ir1, p, ps, pr, pr / pr1 }'
done
echo "(cores: $(nproc); the replay, PostgreSQL, the broker and every instance share them; runs keyed by ${PW_BENCH_RUNS_KEY:-series}; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
