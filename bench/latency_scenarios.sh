#!/usr/bin/env bash
# latency_scenarios.sh: the watcher's detection latency per simulator
# scenario (issue 17), offline: `pw-sim dump SCENARIO --days 70` through
# bench_watch_latency with PELT alone (EARLY_K 0, before issue 17) and with
# the early rule (EARLY_K 3, the default). For each scenario and each run it
# prints the events by stage and, over the series that had one, the fewest
# and most nightlies from the first shifted nightly to the nightly that
# brought the first report; simulated hours are nightlies × 24 (one nightly
# a day). The confirmation rerun's latency is not here: it is measured on
# the dev stack (tests/integration/test_confirm.sh, docs/bisector.md).
#   bench/latency_scenarios.sh BUILD [SCENARIO...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
[ $# -ge 1 ] || { echo "usage: bench/latency_scenarios.sh BUILD [SCENARIO...]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] ||
  scenarios=(worked-example two-cl-interaction registered-win llvm-roll recabling transient-outlier quiet-week)
sim=$build/tools/simulator/pw-sim
bench=$build/bench/bench_watch_latency
printf '%-20s %-11s %7s %9s %12s %14s %7s\n' scenario detector series reports first_report first_report_h trend
for s in "${scenarios[@]}"; do
  for k in 0 3; do
    "$sim" dump "$repo/tools/simulator/scenarios/$s.scn" --days 70 | "$bench" "$k" - |
      awk -v s="$s" -v k="$k" '
        function day(b) { sub(/.*-nightly-/, "", b); gsub(/-/, " ", b); return mktime(b " 12 00 00") / 86400 }
        $1 == "event" {
          n = int(day($7) - day($5) + 0.5)
          if (!($2 in first) || n < first[$2]) first[$2] = n
          if ($3 == "trend") trend++
          reports++
        }
        END {
          lo = -1; hi = -1; series = 0
          for (key in first) { series++; if (lo < 0 || first[key] < lo) lo = first[key]; if (first[key] > hi) hi = first[key] }
          det = (k == 0) ? "PELT" : "early+PELT"
          if (series == 0) printf "%-20s %-11s %7d %9d %12s %14s %7d\n", s, det, 0, 0, "-", "-", trend
          else printf "%-20s %-11s %7d %9d %12s %14s %7d\n", s, det, series, reports, lo "-" hi, lo * 24 "-" hi * 24, trend
        }'
  done
done
