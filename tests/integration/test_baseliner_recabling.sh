#!/usr/bin/env bash
# test_baseliner_recabling.sh: the baseliner on the simulator's `recabling`
# scenario, through the whole pipeline: pw-sim → perf.runs.v1 and
# perf.fleet-changes.v1 → pw-ingester → perf.points.v1 → pw-baseliner.
#
# Run by tests/integration/run.sh. The scenario (tools/simulator/scenarios/
# recabling.scn): 45 nightlies of chat-8b and rank-moe-110b on v6e-4 (cell
# mtv5-c12) and v5e-8 (cell ord2-c07); fleet change fc-2026-06-03-0007
# recables mtv5-c12 on 2026-06-03 10:00 and every series on it moves 0.7%
# the worse way. The replay is namespaced and played in two segments, before
# and from the change, with the services caught up in between (so that the
# baseliner meets the event after every run measured before it, whatever
# this machine's speed); the baseliner's window is small (8 runs, 5 days, 2
# chip-sets) so that the re-baseline completes within the scenario's 11
# nightlies after the change. Checks:
#   - the event froze exactly the series measured on cell mtv5-c12, each
#     once, and none of the v5e-8 control;
#   - every frozen series unfroze, at the version after its frozen one;
#   - their new baselines sit 0.7% the worse way from the frozen ones: the
#     mean over the cell within 0.55–0.85%, each series within 0.2–1.3%;
#   - the v5e-8 series' baselines kept moving as before (active, never frozen).
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
ingester=$PW_BUILD/services/ingester/pw-ingester
baseliner=$PW_BUILD/services/baseliner/pw-baseliner
sim=$PW_BUILD/tools/simulator/pw-sim
pw=$PW_BUILD/tools/perfwatch
need_bins "$ingester" "$baseliner" "$sim" "$pw"
scn=tools/simulator/scenarios/recabling.scn
change_at=2026-06-03T10:00:00Z
ns=br$(date +%s%N | tail -c 9)
event=fc-2026-06-03-0007.$ns
work=$(mktemp -d "$PW_RUN_DIR/test_baseliner_recabling.XXXXXX")
pipeline_harness test_baseliner_recabling
pass() { echo "PASS: $*"; }

"$pw" group to-end "br-ingester-$ns" perf.runs.v1 >/dev/null || fail "placing the ingester group"
"$pw" group to-end "br-baseliner-$ns" perf.points.v1 perf.fleet-changes.v1 >/dev/null ||
  fail "placing the baseliner group"
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="br-ingester-$ns" "$ingester" >"$work/ingester.log" 2>&1 &
pids+=($!)
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="br-baseliner-$ns" PW_BASELINER_MIN_RUNS=8 PW_BASELINER_MIN_DAYS=5 \
  PW_BASELINER_MIN_CHIPSETS=2 "$baseliner" >"$work/baseliner.log" 2>&1 &
pids+=($!)
caught_up() {
  "$pw" group lag "br-ingester-$ns" --wait 120 perf.runs.v1 >/dev/null || fail "pw-ingester did not catch up"
  "$pw" group lag "br-baseliner-$ns" --wait 120 perf.points.v1 perf.fleet-changes.v1 >/dev/null ||
    fail "pw-baseliner did not catch up"
}
replay=("$sim" replay "$scn" --namespace "$ns" --run-prefix "$ns-")
"${replay[@]}" --until "$change_at" >"$work/sim1.json" 2>"$work/sim1.log" || fail "replay before the change"
caught_up
"${replay[@]}" --since "$change_at" >"$work/sim2.json" 2>"$work/sim2.log" || fail "replay from the change"
caught_up
grep -q '"fleet_changes":1' "$work/sim2.json" || fail "the second segment did not carry the fleet change"
echo "replayed: $(cat "$work/sim1.json") $(cat "$work/sim2.json")"

# exactly the cell's series, each once; none of the control
on_cell=$(psqlq -c "SELECT count(DISTINCT p.series_id) FROM perfwatch.samples p JOIN perfwatch.runs r USING (run_id, repeat_index)
                     WHERE p.run_id LIKE '$ns-%' AND r.cell = 'cell-mtv5-c12.$ns' AND r.finished_at < '$change_at'")
all=$(psqlq -c "SELECT count(DISTINCT series_id) FROM perfwatch.samples WHERE run_id LIKE '$ns-%'")
frz=$(psqlq -c "SELECT count(*) || ' ' || count(DISTINCT f.series_id) || ' '
                       || count(*) FILTER (WHERE s.platform <> 'v6e-4') || ' '
                       || count(*) FILTER (WHERE f.series_id NOT IN (
                            SELECT p.series_id FROM perfwatch.samples p JOIN perfwatch.runs r USING (run_id, repeat_index)
                             WHERE p.run_id LIKE '$ns-%' AND r.cell = 'cell-mtv5-c12.$ns'))
                  FROM perfwatch.freezes f JOIN perfwatch.series s USING (series_id) WHERE f.event_id = '$event'")
[ "$on_cell" -gt 0 ] && [ "$on_cell" -lt "$all" ] || fail "the scenario put $on_cell of $all series on the cell"
[ "$frz" = "$on_cell $on_cell 0 0" ] && pass "the event froze exactly the $on_cell series of cell mtv5-c12, each once, none of the other $((all - on_cell))" ||
  fail "freezes of $event (rows, series, off v6e-4, off the cell): \"$frz\", want $on_cell"
other=$(psqlq -c "SELECT count(*) FROM perfwatch.freezes f JOIN perfwatch.series s USING (series_id)
                   WHERE s.model LIKE '%.$ns' AND f.event_id <> '$event'")
[ "$other" = 0 ] || fail "$other freezes of another event on this replay's series"

# unfrozen after the re-baseline, at the next version
unf=$(psqlq -c "SELECT count(*) FILTER (WHERE unfrozen_at IS NOT NULL AND unfrozen_version = frozen_version + 1)
                 FROM perfwatch.freezes WHERE event_id = '$event'")
[ "$unf" = "$on_cell" ] && pass "all $on_cell unfroze after their re-baseline, at the version after the frozen one" ||
  fail "$unf of $on_cell unfroze at the next version"
active=$(psqlq -c "SELECT count(*) FROM perfwatch.latest_baselines b JOIN perfwatch.series s USING (series_id)
                    WHERE s.model LIKE '%.$ns' AND b.state = 'active'")
[ "$active" = "$all" ] && pass "every series of the replay is active again ($all)" || fail "$active of $all series active"

# the new baselines: 0.7% the worse way
psqlq -F ' ' -c "SELECT s.series_key, round((100 * (n.median / o.median - 1)
                          * CASE WHEN s.direction = 'lower_is_better' THEN 1 ELSE -1 END)::numeric, 3)
                   FROM perfwatch.freezes f JOIN perfwatch.series s USING (series_id)
                   JOIN perfwatch.baselines o ON o.series_id = f.series_id AND o.version = f.frozen_version
                   JOIN perfwatch.baselines n ON n.series_id = f.series_id AND n.version = f.unfrozen_version
                  WHERE f.event_id = '$event' ORDER BY 1" >"$work/shift.txt"
awk '{ s += $2; n++; if ($2 < 0.2 || $2 > 1.3) bad = bad " " $1 "=" $2 "%" }
     END { m = s / n; printf "mean %.3f%% over %d series\n", m, n; if (n == 0 || m < 0.55 || m > 0.85 || bad != "") { print "off:" bad; exit 1 } }' \
  "$work/shift.txt" >"$work/shift.sum" && pass "new baselines 0.7% the worse way: $(head -1 "$work/shift.sum"), each within 0.2-1.3%" ||
  fail "shift of the new baselines: $(cat "$work/shift.sum")"
echo "test_baseliner_recabling: PASS"
