#!/usr/bin/env bash
# test_baseliner_rebaseline.sh: a fleet-change freeze asks the executor for
# its re-baseline runs, and the frozen series are gated again within hours
# of simulated time (issue 17).
#
# Run by tests/integration/run.sh. The simulator's `recabling` scenario
# (tools/simulator/scenarios/recabling.scn: cell mtv5-c12 recabled on
# 2026-06-03 10:00, every series on it 0.7% the worse way) goes through
# pw-sim → pw-ingester → pw-baseliner with §4.2's window rules (30 runs, 5
# days, 3 chip-sets; the re-baseline of a frozen series needs no span of
# days, baseliner.rebaseline_min_days = 0). The replay stops at 13:00 of the
# change's day: no later nightly exists, so only the requested runs can
# complete the new windows. `pw-sim answer` answers the REBASELINE jobs.
# Checks:
#   - the freeze opened one request per frozen series, each with a job; one
#     job per run configuration, each once in the outbox (published), none
#     for the v5e-8 control; `perfwatch series show` prints the open request
#     (freeze age, runs missing);
#   - pw-baseliner is killed -9 after the request (jobs not yet answered),
#     and again while the answered runs are being folded in; after both
#     restarts no job is in the outbox twice, every job got its 30 runs
#     (each once), on >= 3 chip sets of the changed cell, nightly-kind,
#     stamped after the change;
#   - every frozen series unfroze at the version after its frozen one, its
#     new baseline from 30 runs on >= 3 chip-sets ending <= 4 h of data time
#     after the change (gated again), 0.7% the worse way from the frozen one
#     (mean over the cell 0.55-0.85%, each series 0.2-1.3%);
#   - `perfwatch series show` says the request is done, 0 runs missing.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools python3
sim=$PW_BUILD/tools/simulator/pw-sim
pw=$PW_BUILD/tools/perfwatch
need_bins "$PW_BUILD/services/ingester/pw-ingester" "$PW_BUILD/services/baseliner/pw-baseliner" "$sim" "$pw"
scn=tools/simulator/scenarios/recabling.scn
change_at=2026-06-03T10:00:00Z
stop_at=2026-06-03T13:00:00Z
service_harness test_baseliner_rebaseline rb
event=fc-2026-06-03-0007.$ns
pass() { echo "PASS: $*"; }

"$pw" group to-end "$ns-ingester" perf.runs.v1 >/dev/null &&
  "$pw" group to-end "$ns-baseliner" perf.points.v1 perf.fleet-changes.v1 >/dev/null &&
  "$pw" group to-end "$ns-answer" perf.bisect.jobs.v1 >/dev/null ||
  fail "placing the groups at the topics' ends"
service_start ingester
service_start baseliner
service_joined ingester
service_joined baseliner
caught_up() {
  "$pw" group lag "$ns-ingester" --wait 180 perf.runs.v1 >/dev/null || fail "pw-ingester did not catch up"
  "$pw" group lag "$ns-baseliner" --wait 180 perf.points.v1 perf.fleet-changes.v1 >/dev/null ||
    fail "pw-baseliner did not catch up"
}
replay=("$sim" replay "$scn" --namespace "$ns" --run-prefix "$ns-")
"${replay[@]}" --until "$change_at" >"$work/sim1.json" 2>"$work/sim1.log" || fail "replay before the change"
caught_up
"${replay[@]}" --since "$change_at" --until "$stop_at" >"$work/sim2.json" 2>"$work/sim2.log" ||
  fail "replay of the change"
caught_up
grep -q '"fleet_changes":1' "$work/sim2.json" || fail "the second segment did not carry the fleet change"

# --- the requests -------------------------------------------------------------------------
on_cell=$(q "SELECT count(DISTINCT p.series_id) FROM perfwatch.samples p JOIN perfwatch.runs r USING (run_id, repeat_index)
              WHERE p.run_id LIKE '$ns-%' AND r.cell = 'cell-mtv5-c12.$ns' AND r.finished_at < '$change_at'")
all=$(q "SELECT count(DISTINCT series_id) FROM perfwatch.samples WHERE run_id LIKE '$ns-%'")
[ "$on_cell" -gt 0 ] && [ "$on_cell" -lt "$all" ] || fail "the scenario put $on_cell of $all series on the cell"
had=$(q "SELECT count(*) FROM perfwatch.freezes WHERE event_id = '$event' AND frozen_version IS NOT NULL")
[ "$had" = "$on_cell" ] || fail "$had of $on_cell frozen series had a baseline before the change (30 nightlies)"
req=$(q "SELECT count(*) || ' ' || count(*) FILTER (WHERE job_id <> '' AND job_runs = 30 AND runs_needed = 30
                                               AND chip_sets_needed = 3 AND days_needed = 0 AND status = 'open')
                  || ' ' || count(DISTINCT job_id)
           FROM perfwatch.rebaseline_requests WHERE event_id = '$event'")
read -r nreq nreq_ok njobs <<<"$req"
configs=$(q "SELECT count(DISTINCT (s.model, s.hlo_fingerprint, s.platform, s.config)) FROM perfwatch.freezes f
              JOIN perfwatch.series s USING (series_id) WHERE f.event_id = '$event'")
[ "$nreq" = "$on_cell" ] && [ "$nreq_ok" = "$on_cell" ] && [ "$njobs" = "$configs" ] &&
  pass "the freeze opened $nreq requests (30 runs, 3 chip-sets, no days) sharing $njobs jobs, one per run configuration" ||
  fail "requests of $event (rows, well-formed, jobs): \"$req\", want $on_cell $on_cell $configs"
wait_for() { # SECONDS SQL WANT
  local deadline=$((SECONDS + $1))
  until [ "$(q "$2")" = "$3" ]; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}
wait_for 30 "SELECT count(*) FROM perfwatch.outbox WHERE service = 'baseliner' AND ref = '$event'
              AND topic = 'perf.bisect.jobs.v1' AND published_at IS NOT NULL" "$njobs" ||
  fail "the $njobs jobs were not published: $(q "SELECT count(*), count(published_at) FROM perfwatch.outbox WHERE service = 'baseliner' AND ref = '$event'")"
key=$(q "SELECT s.series_key FROM perfwatch.freezes f JOIN perfwatch.series s USING (series_id)
          WHERE f.event_id = '$event' AND s.metric = 'tpot_p50_ms' ORDER BY 1 LIMIT 1")
"$pw" series show "$key" >"$work/show1.json" || fail "series show $key"
python3 - "$work/show1.json" <<'EOF' || fail "series show while frozen: $(cat "$work/show1.json")"
import json, sys
v = json.load(open(sys.argv[1]))
r = v["rebaseline"]
assert v["state"] == "frozen", v["state"]
assert r["status"] == "open" and r["job_id"].startswith("rb-") and r["job_runs"] == 30, r
assert r["runs_needed"] == 30 and 0 < r["runs_missing"] <= 30 and r["runs_missing"] == 30 - r["runs_have"], r
assert r["freeze_age_s"] > 0 and r["frozen_since"] == "2026-06-03T10:00:00Z", r
EOF
pass "series show: frozen, request open, $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rebaseline"]; print(r["runs_missing"], "runs missing, frozen", round(r["freeze_age_s"]/86400), "days (wall)")' "$work/show1.json")"

# --- kill -9 between request and completion ------------------------------------------------
kill -9 "${pid[baseliner]}"
wait "${pid[baseliner]}" 2>/dev/null || true
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-answer" "$sim" answer "$scn" --namespace "$ns" >"$work/answer.log" 2>&1 &
pid[answer]=$!
wait_for 120 "SELECT count(*) FROM perfwatch.runs WHERE run_id LIKE 'rx-rb-$event-%'" "$((njobs * 30))" ||
  fail "answered runs stored: $(q "SELECT count(*) FROM perfwatch.runs WHERE run_id LIKE 'rx-rb-$event-%'"), want $((njobs * 30))"
caught_up_ingester() { "$pw" group lag "$ns-ingester" --wait 180 perf.runs.v1 >/dev/null || fail "pw-ingester did not catch up"; }
caught_up_ingester
service_start baseliner
# the second kill: as soon as the restarted baseliner has folded some of the runs in
deadline=$((SECONDS + 120))
mid=""
while [ $SECONDS -lt $deadline ]; do
  kill -0 "${pid[baseliner]}" 2>/dev/null || fail "pw-baseliner exited after the restart"
  mid=$(q "SELECT count(*) FILTER (WHERE b.state = 'frozen' AND b.window_n > 1) || ' ' || count(*) FILTER (WHERE b.state <> 'frozen')
            FROM perfwatch.rebaseline_requests r JOIN perfwatch.baseliner_series b USING (series_id) WHERE r.event_id = '$event'")
  [ "${mid%% *}" -gt 0 ] || [ "${mid##* }" -gt 0 ] && break
  sleep 0.05
done
kill -9 "${pid[baseliner]}"
wait "${pid[baseliner]}" 2>/dev/null || true
echo "test_baseliner_rebaseline: second kill -9 with (filling, unfrozen) = ($mid) of $on_cell"
service_start baseliner
wait_for 180 "SELECT count(*) FROM perfwatch.rebaseline_requests WHERE event_id = '$event' AND status = 'done'" "$on_cell" ||
  fail "$(q "SELECT count(*) FROM perfwatch.rebaseline_requests WHERE event_id = '$event' AND status = 'done'") of $on_cell requests done"
caught_up

# --- no double request, no lost run ---------------------------------------------------------
ob=$(q "SELECT count(*) || ' ' || count(DISTINCT message_key) FROM perfwatch.outbox
         WHERE service = 'baseliner' AND topic = 'perf.bisect.jobs.v1' AND ref = '$event'")
[ "$ob" = "$njobs $njobs" ] && pass "after two kills -9: each of the $njobs jobs once in the outbox" ||
  fail "outbox rows of $event (rows, distinct jobs): \"$ob\", want $njobs $njobs"
ctl=$(q "SELECT count(*) FROM perfwatch.rebaseline_requests r JOIN perfwatch.series s USING (series_id)
          WHERE s.model LIKE '%.$ns' AND s.platform <> 'v6e-4'")
[ "$ctl" = 0 ] || fail "$ctl requests for the v5e-8 control"
runs=$(q "SELECT count(*) || ' ' || count(*) FILTER (WHERE n = 30 AND reps = 30 AND sets >= 3 AND cells = 1 AND nightly AND after)
           FROM (SELECT run_id, count(*) n, count(DISTINCT repeat_index) reps, count(DISTINCT chip_set) sets,
                        count(DISTINCT cell) FILTER (WHERE cell = 'cell-mtv5-c12.$ns') cells,
                        bool_and(build_kind = 'nightly') nightly,
                        bool_and(started_at > '$change_at' AND finished_at <= timestamptz '$change_at' + interval '4 hours') after
                   FROM perfwatch.runs WHERE run_id LIKE 'rx-rb-$event-%' GROUP BY run_id) y")
read -r jobs_run jobs_ok <<<"$runs"
[ "$jobs_run" = "$njobs" ] && [ "$jobs_ok" = "$njobs" ] &&
  pass "every job answered with 30 nightly runs on >= 3 chip sets of the changed cell, within 4 h of the change" ||
  fail "answered jobs (all, well-formed): \"$runs\", want $njobs $njobs; $(q "SELECT run_id, count(*), count(DISTINCT chip_set) FROM perfwatch.runs WHERE run_id LIKE 'rx-rb-$event-%' GROUP BY 1 LIMIT 5")"

# --- gated again within hours, 0.7% above -----------------------------------------------------
unf=$(q "SELECT count(*) FILTER (WHERE f.unfrozen_version = f.frozen_version + 1 AND n.n = 30 AND n.chip_sets >= 3
                                   AND n.state = 'active')
          FROM perfwatch.freezes f JOIN perfwatch.baselines n ON n.series_id = f.series_id AND n.version = f.unfrozen_version
         WHERE f.event_id = '$event'")
[ "$unf" = "$on_cell" ] && pass "all $on_cell unfroze at the next version, from 30 runs on >= 3 chip-sets" ||
  fail "$unf of $on_cell unfroze at the next version from 30 runs: $(q "SELECT f.frozen_version, f.unfrozen_version, n.n, n.chip_sets, n.state FROM perfwatch.freezes f LEFT JOIN perfwatch.baselines n ON n.series_id = f.series_id AND n.version = f.unfrozen_version WHERE f.event_id = '$event' LIMIT 5")"
hours=$(q "SELECT round(avg(h)::numeric, 2) || ' ' || round(max(h)::numeric, 2) FROM (
             SELECT extract(epoch FROM n.window_end - timestamptz '$change_at') / 3600 h
               FROM perfwatch.freezes f JOIN perfwatch.baselines n ON n.series_id = f.series_id AND n.version = f.unfrozen_version
              WHERE f.event_id = '$event') x")
read -r h_mean h_max <<<"$hours"
awk -v m="$h_max" 'BEGIN { exit !(m > 0 && m <= 4) }' &&
  pass "gated again $h_mean h (mean), $h_max h (max) of simulated time after the change" ||
  fail "re-gated $h_mean h (mean) $h_max h (max) after the change, want <= 4 h"
psqlq -F ' ' -c "SELECT s.series_key, round((100 * (n.median / o.median - 1)
                          * CASE WHEN s.direction = 'lower_is_better' THEN 1 ELSE -1 END)::numeric, 3)
                   FROM perfwatch.freezes f JOIN perfwatch.series s USING (series_id)
                   JOIN perfwatch.baselines o ON o.series_id = f.series_id AND o.version = f.frozen_version
                   JOIN perfwatch.baselines n ON n.series_id = f.series_id AND n.version = f.unfrozen_version
                  WHERE f.event_id = '$event' ORDER BY 1" >"$work/shift.txt"
awk '{ s += $2; n++; if ($2 < lo || n == 1) lo = $2; if ($2 > hi || n == 1) hi = $2; if ($2 < 0.2 || $2 > 1.3) bad = bad " " $1 "=" $2 "%" }
     END { m = s / n; printf "mean %.3f%% over %d series (%.3f..%.3f%%)\n", m, n, lo, hi; if (n == 0 || m < 0.55 || m > 0.85 || bad != "") { print "off:" bad; exit 1 } }' \
  "$work/shift.txt" >"$work/shift.sum" && pass "new baselines 0.7% the worse way: $(head -1 "$work/shift.sum")" ||
  fail "shift of the new baselines: $(cat "$work/shift.sum")"

"$pw" series show "$key" >"$work/show2.json" || fail "series show $key"
python3 - "$work/show2.json" <<'EOF' || fail "series show after the re-baseline: $(cat "$work/show2.json")"
import json, sys
v = json.load(open(sys.argv[1]))
r = v["rebaseline"]
assert v["state"] == "active" and v["freeze"] is None, v["state"]
assert r["status"] == "done" and r["runs_missing"] == 0 and 0 < r["done_version"] <= v["baseline"]["version"], r
assert 0 < r["freeze_data_age_s"] <= 4 * 3600, r
EOF
pass "series show: active, request done, frozen $(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["rebaseline"]["freeze_data_age_s"]/3600, 2))' "$work/show2.json") h of data time"
echo "test_baseliner_rebaseline: PASS"
