#!/usr/bin/env bash
# pager_scaleout.sh: how fast one and two pw-pager replicas of one deployment
# consume the same backlog, on the dev stack, measured in the same run.
#
# Each round: a namespace and consumer group of its own, placed at the
# topics' ends; tests/integration/pager_replay.py's replay (PW_BENCH_EVENTS
# RC events, 60 by default: their gate alerts and verdicts, the owners, the
# culprits; about 10 messages an event) produced while no pager runs; then N
# pagers start and are timed until the group has no lag (consume_s, from the
# processes' start: their joining the group is in it). Messages/s and the
# ratio against the N = 1 round; the pages made, which must be equal. The
# pagers post nowhere (no receiver): this is the consuming side only. The
# replicas handle messages one at a time under the deployment's lock
# (docs/pager.md, "Scale-out"), so two are expected to consume no faster than
# one: they buy availability. The broker, PostgreSQL and the pagers share the
# machine's cores (2 on the development machine).
#
#   bench/pager_scaleout.sh [BUILD_DIR]   (bench/run.sh runs it with the stack up)
# Environment: PW_BENCH_SCALE ("1 2"), PW_BENCH_EVENTS (60), PW_BENCH_KEEP (keep the logs).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
export PW_BUILD=${1:-${PW_BUILD:-$repo/build}}
pw=$PW_BUILD/tools/perfwatch
for v in PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS; do
  [ -n "${!v:-}" ] || { echo "bench pager_scaleout: $v is not set (start the dev stack)" >&2; exit 1; }
done
for b in "$pw" "$PW_BUILD/services/pager/pw-pager"; do
  [ -x "$b" ] || { echo "bench pager_scaleout: $b not built" >&2; exit 1; }
done
cd "$repo"
work=$(mktemp -d)
# shellcheck source=../tests/integration/lib_scaleout.sh
. "$repo/tests/integration/lib_scaleout.sh"
cleanup() {
  so_stop
  [ -n "${PW_BENCH_KEEP:-}" ] && echo "bench pager_scaleout: logs kept in $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
q() { psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
now() { date +%s.%N; }
topics="perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 perf.attributions.v1 perf.rollouts.v1"
events=${PW_BENCH_EVENTS:-60}

results=()
for n in ${PW_BENCH_SCALE:-1 2}; do
  ns=bps$$n$n
  group=bench-$ns-pager
  python3 tests/integration/pager_replay.py "$ns" x --spend-sql | q "$(cat)" >/dev/null
  "$pw" group to-end "$group" $topics >/dev/null
  msgs=0
  for phase in alerts attributions bisections; do
    m=$(python3 tests/integration/pager_replay.py "$ns" "$phase" --events "$events" --seed 7 --out "$work/replay.$n" |
      grep -o '[0-9]* messages' | cut -d' ' -f1)
    msgs=$((msgs + m))
  done
  so_env=(PW_PAGER_TRIAGE_KEY="bench-pager-scaleout-key" PW_PAGER_BUDGET_PER_WEEK=1000)
  t0=$(now)
  so_start pager "$group" "$n"
  deadline=$((SECONDS + 900))
  until "$pw" group lag "$group" $topics | grep -q '"lag":0}'; do
    for p in "${so_pids[@]}"; do
      kill -0 "$p" 2>/dev/null || { echo "bench pager_scaleout: a pager exited: $(tail -2 "$work"/pager.*.log)" >&2; exit 1; }
    done
    [ $SECONDS -lt $deadline ] || { echo "bench pager_scaleout: N=$n: still lagging after 900 s" >&2; exit 1; }
    sleep 0.2
  done
  t1=$(now)
  so_stop
  pages=$(q "SELECT count(*) FROM perfwatch.pages WHERE pager_group = '$group'")
  line=$(awk -v n="$n" -v m="$msgs" -v p="$pages" -v a="$t0" -v b="$t1" 'BEGIN { printf "%d %d %d %.2f %.1f", n, m, p, b - a, m / (b - a) }')
  results+=("$line")
  read -r n_ m_ p_ s_ r_ <<<"$line"
  printf '{"bench":"pager_scaleout","replicas":%s,"messages":%s,"pages":%s,"consume_s":%s,"messages_per_s":%s}\n' \
    "$n_" "$m_" "$p_" "$s_" "$r_"
done

echo
echo "replicas | messages | pages | consume s | messages/s | vs 1"
echo "---|---|---|---|---|---"
read -r _ _ p1 _ r1 <<<"${results[0]}"
for line in "${results[@]}"; do
  read -r n m p s r <<<"$line"
  awk -v n="$n" -v m="$m" -v p="$p" -v s="$s" -v r="$r" -v r1="$r1" 'BEGIN {
    printf "%d | %d | %d | %.2f | %.1f | %.2f\n", n, m, p, s, r, r / r1 }'
  [ "$p" = "$p1" ] || echo "bench pager_scaleout: $n replicas made $p pages, one made $p1" >&2
done
echo "(cores: $(nproc); the broker, PostgreSQL and every replica share them; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
