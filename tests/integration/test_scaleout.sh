#!/usr/bin/env bash
# test_scaleout.sh: scale-out through consumer groups. The worked example is
# replayed twice, each time in a namespace of its own (pw-sim --namespace,
# so the two replays make distinct series) and under a run prefix of its own:
#   single  one ingester and one baseliner (one consumer thread each);
#   scaled  two ingesters in one consumer group and two baselines in another.
# Checked: in the scaled round both instances of each service held partitions
# (from pw_kafka's assignment lines) and, when they log their totals at stop,
# both consumed; every run and sample of each replay is stored exactly once
# (tests/integration/lib_ingest.sh); the two rounds stored the same runs and
# samples (same counts, and the same (run, repeat, metric, value) set once
# the prefix and namespace are taken off); the same series; and the same
# latest baseline for every series (version, state, median, MAD, band, n,
# window), compared in SQL.
#
# The replay runs at full speed by default (PW_SCALEOUT_RATE runs/s, 0 = as
# fast as possible, batches of at most 20 ms). The baseliner's result depends
# on the order in which a series' points arrive (its outlier and excursion
# rules look at what came before); pw-sim keys runs by their series group
# (pw_runs_key, run.proto), so one series' runs lie on one perf.runs.v1
# partition, in the order they were sent, and one ingester reads them in that
# order whichever instance holds the partition. (Keyed by run id, as before,
# a series' runs lay on every partition, and at full speed one instance
# against two differed in 20 of 90 series' latest baselines, two one-instance
# rounds in 22: docs/operations.md, "Scaling out".) PW_SCALEOUT_RATE=40 is the
# paced case; PW_SCALEOUT_SCALED (default 2) sets the instances of the second
# round (1: two one-instance rounds); PW_SCALEOUT_RUNS_KEY=run_id replays
# with the old key (pw-sim --runs-key), to see the difference it makes.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR
sim=$PW_BUILD/tools/simulator/pw-sim
pw=$PW_BUILD/tools/perfwatch
need_bins "$sim" "$pw" "$PW_BUILD/services/ingester/pw-ingester" "$PW_BUILD/services/baseliner/pw-baseliner"
repo=$(cd "$(dirname "$0")/../.." && pwd)
. tests/integration/lib_ingest.sh
. tests/integration/lib_scaleout.sh

scn=$repo/tools/simulator/scenarios/worked-example.scn
rate=${PW_SCALEOUT_RATE:-0}
so_batch_ms=20
tag=so$$
work=$PW_RUN_DIR/it-scaleout-$$
mkdir -p "$work"
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
trap 'so_stop' EXIT

# round NAME N: replays the worked example with N ingesters and N baseliners
round() {
  local name=$1 n=$2 ns=$tag$1 prefix=$tag$1- i
  local gi=scaleout-$ns-ingester gb=scaleout-$ns-baseliner
  "$pw" group to-end "$gi" perf.runs.v1 >/dev/null
  "$pw" group to-end "$gb" perf.points.v1 perf.fleet-changes.v1 >/dev/null
  so_start ingester "$gi" "$n"
  so_start baseliner "$gb" "$n"
  so_wait_assigned ingester "$gi" "$n" 90 || { fail "$name: not every ingester got partitions in 90 s"; return 1; }
  so_wait_assigned baseliner "$gb" "$n" 90 || { fail "$name: not every baseliner got partitions in 90 s"; return 1; }
  local held=""
  for ((i = 0; i < n; i++)); do
    held+=" ingester#$i=$(so_held "$work/ingester.$gi.$i.log") baseliner#$i=$(so_held "$work/baseliner.$gb.$i.log")"
  done
  echo "$name: partitions held:$held"
  local t0=$SECONDS
  "$sim" replay "$scn" --namespace "$ns" --run-prefix "$prefix" --rate "$rate" --runs-key "${PW_SCALEOUT_RUNS_KEY:-series}" >"$work/sim.$name.log" 2>&1 ||
    { fail "$name: pw-sim replay failed"; tail -5 "$work/sim.$name.log"; return 1; }
  "$pw" group lag "$gi" --wait 300 perf.runs.v1 >/dev/null || { fail "$name: ingesters did not catch up in 300 s"; return 1; }
  "$pw" group lag "$gb" --wait 300 perf.points.v1 >/dev/null || { fail "$name: baseliners did not catch up in 300 s"; return 1; }
  echo "$name: replay consumed in $((SECONDS - t0)) s"
  # each member's lag on /metrics (perfwatch_kafka_consumer_lag) comes to 0
  # once its group has caught up, and the rebalances were cooperative: the
  # first member gave up only the partitions that moved to the second
  for ((i = 0; i < n; i++)); do
    for role in ingester baseliner; do
      local g=$gi topic=perf.runs.v1
      [ $role = baseliner ] && { g=$gb; topic=perf.points.v1; }
      local log=$work/$role.$g.$i.log port lag="" deadline=$((SECONDS + 30))
      port=$(grep -o '"msg":"serving /healthz /readyz /metrics on [^"]*' "$log" | tail -n 1 | grep -o '[0-9]*$')
      while :; do
        lag=$(curl -s "http://127.0.0.1:$port/metrics" | awk -v t="$topic" '$1 ~ /^perfwatch_kafka_consumer_lag\{/ && index($1, "topic=\"" t "\"") { s += $2; n++ } END { if (n) print s }')
        [ "$lag" != 0 ] || break
        [ $SECONDS -lt $deadline ] || break
        sleep 1
      done
      [ "$lag" = 0 ] && echo "$name: $role#$i perfwatch_kafka_consumer_lag on $topic: 0" ||
        fail "$name: $role#$i reports lag ${lag:-none} on $topic after its group caught up"
      if [ "$n" -gt 1 ]; then
        grep '"msg":"kafka partitions assigned' "$log" | grep -v '"protocol":"COOPERATIVE"' >/dev/null &&
          fail "$name: $role#$i had an assignment that was not cooperative"
      fi
    done
  done
  if [ "$n" -gt 1 ]; then
    local first=$work/ingester.$gi.0.log
    local kept
    kept=$(so_held_topic "$first" perf.runs.v1 | tr ',' '\n' | grep -c . || true)
    if grep -m 1 '"msg":"kafka partitions revoked' "$first" | grep '"partitions":"12"' >/dev/null; then
      fail "$name: the first ingester gave up all 12 partitions when the second joined (an eager rebalance)"
    else
      echo "$name: cooperative rebalance: the first ingester kept $kept of 12 partitions through the join"
    fi
  fi
  so_stop
  for ((i = 0; i < n; i++)); do
    for role in ingester baseliner; do
      local g=$gi
      [ $role = baseliner ] && g=$gb
      local log=$work/$role.$g.$i.log got
      got=$(grep -o '"msg":"stopped: [0-9]* batches, [0-9]* [a-z]*' "$log" | grep -o '[0-9]* [a-z]*$' || true)
      echo "$name: $role#$i held partitions: yes; at stop: ${got:-no totals line}"
      if [ -n "$got" ] && [ "${got%% *}" -eq 0 ] && [ "$n" -gt 1 ]; then
        fail "$name: $role#$i consumed nothing: the partitions were not shared"
      fi
    done
  done
}

round single 1
round scaled "${PW_SCALEOUT_SCALED:-2}"
[ $fails -eq 0 ] && pass "both instances of the ingester and of the baseliner held partitions and consumed"

a=${tag}single b=${tag}scaled
runs_a=$(q "SELECT count(*) FROM perfwatch.runs WHERE run_id LIKE '$a-%'")
samples_a=$(q "SELECT count(*) FROM perfwatch.samples WHERE run_id LIKE '$a-%'")
want=$("$sim" count "$scn" | grep -o '"runs":[0-9]*,"samples":[0-9]*')
echo "single: $runs_a runs, $samples_a samples; pw-sim count: $want"
[ "$want" = "\"runs\":$runs_a,\"samples\":$samples_a" ] && pass "single: every run and sample of the replay stored" ||
  fail "single: stored $runs_a runs, $samples_a samples; the replay has $want"
stored_exactly_once "$a-" "$runs_a" "$samples_a" && pass "single: stored exactly once"
stored_exactly_once "$b-" "$runs_a" "$samples_a" && pass "scaled: the same counts, stored exactly once"

# the same (run, repeat, metric, value) once the prefix and namespace are off
diffs=$(q "WITH x AS (SELECT substr(run_id, length('$a-') + 1) AS r, repeat_index, metric, value, measured_at
                        FROM perfwatch.samples WHERE run_id LIKE '$a-%'),
             y AS (SELECT substr(run_id, length('$b-') + 1) AS r, repeat_index, metric, value, measured_at
                        FROM perfwatch.samples WHERE run_id LIKE '$b-%')
           SELECT (SELECT count(*) FROM (SELECT * FROM x EXCEPT SELECT * FROM y) d)
                + (SELECT count(*) FROM (SELECT * FROM y EXCEPT SELECT * FROM x) d)")
[ "$diffs" = 0 ] && pass "scaled stored the same samples as single (values and times)" || fail "$diffs samples differ between the rounds"

# the same series and the same latest baselines
series_a=$(q "SELECT count(*) FROM perfwatch.series WHERE model LIKE '%.$a'")
series_b=$(q "SELECT count(*) FROM perfwatch.series WHERE model LIKE '%.$b'")
[ "$series_a" = "$series_b" ] && [ "$series_a" -gt 0 ] && pass "the same $series_a series" || fail "series: $series_a vs $series_b"
cmp="WITH la AS (SELECT replace(series_key, '.$a', '') AS k, version, state, median, mad_n, band_lo, band_hi, sigma, n, days,
                        chip_sets, window_start, window_end FROM perfwatch.latest_baselines WHERE model LIKE '%.$a'),
          lb AS (SELECT replace(series_key, '.$b', '') AS k, version, state, median, mad_n, band_lo, band_hi, sigma, n, days,
                        chip_sets, window_start, window_end FROM perfwatch.latest_baselines WHERE model LIKE '%.$b')"
nb=$(q "$cmp SELECT count(*) FROM la")
nd=$(q "$cmp SELECT (SELECT count(*) FROM (SELECT * FROM la EXCEPT SELECT * FROM lb) d)
                  + (SELECT count(*) FROM (SELECT * FROM lb EXCEPT SELECT * FROM la) d)")
echo "latest baselines: $nb series in single, $(q "$cmp SELECT count(*) FROM lb") in scaled, $nd rows differ"
if [ "$nb" -gt 0 ] && [ "$nd" = 0 ]; then
  pass "the same latest baseline for all $nb series (version, state, median, MAD, band, n, window)"
else
  fail "latest baselines differ between one and two instances ($nd rows):"
  q "$cmp SELECT 'single', * FROM (SELECT * FROM la EXCEPT SELECT * FROM lb) d UNION ALL
          SELECT 'scaled', * FROM (SELECT * FROM lb EXCEPT SELECT * FROM la) d ORDER BY 2, 1 LIMIT 20"
fi
nv=$(q "SELECT count(*) FROM perfwatch.baselines b JOIN perfwatch.series s USING (series_id) WHERE s.model LIKE '%.$a'")
nvb=$(q "SELECT count(*) FROM perfwatch.baselines b JOIN perfwatch.series s USING (series_id) WHERE s.model LIKE '%.$b'")
[ "$nv" = "$nvb" ] && pass "the same number of baseline versions ($nv)" || fail "baseline versions: $nv vs $nvb"

if [ $fails -ne 0 ]; then
  echo "test_scaleout: $fails check(s) failed (logs in $work)"
  exit 1
fi
rm -rf "$work"
echo "test_scaleout: all checks passed"
