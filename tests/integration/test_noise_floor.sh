#!/usr/bin/env bash
# test_noise_floor.sh: the noise floors of §4.2 re-derived on a schedule by
# pw-baseliner's tick (docs/baseliner.md "Noise floors, re-derived"),
# through pw-sim → perf.runs.v1 → pw-ingester → perfwatch.samples.
#
# Run by tests/integration/run.sh. quiet-week at 1 model × 1 platform × 1
# config (8 metric series), every nightly measured 4 times (--repeats 4: the
# repeats of one run are one build with no software change), replayed in
# three parts; between parts the baseliner runs with
# baseliner.noise_floor.every short enough to derive at once, and is stopped:
#   A. up to 2026-05-07: 3 nightlies, 12 runs a series — below the 5 groups
#      and 30 runs a floor needs: insufficient_data, no floor, nothing before;
#   B. up to 2026-05-20: 16 nightlies, 64 runs — derived, no previous floor;
#      the floor equals numpy/scipy's computation from the stored samples;
#   then pw-baseliner killed with -9 again and again while it derives every
#      300 ms: every derivation holds exactly its series (never a partial
#      one), the chain of derivations has no fork; a restart with every = 1 h
#      derives nothing more;
#   C. the rest (35 nightlies and the RC's 5 repeats: 36 groups, 145 runs) —
#      derived again, the previous floor named and unchanged (kept for
#      audit), the new one numpy's; `perfwatch noise-floors` (JSON and text,
#      --since) reports previous, new, change % and the n behind each.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
sim=$PW_BUILD/tools/simulator/pw-sim
cli=$PW_BUILD/tools/perfwatch
it=$PW_BUILD/tests/it_watcher
need_bins "$PW_BUILD/services/ingester/pw-ingester" "$PW_BUILD/services/baseliner/pw-baseliner" "$sim" "$cli" "$it"
need_tools psql python3
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import numpy, scipy' 2>/dev/null ||
  { echo "FAIL: /usr/bin/python3 with numpy and scipy is needed"; exit 1; }

service_harness test_noise_floor nf
scn=tools/simulator/scenarios/quiet-week.scn
scale=(--models 1 --platforms 1 --configs 1 --repeats 4)
t_start=$SECONDS

"$it" start-at-end "$ns-ingester" perf.runs.v1 || fail "placing the ingester group"
"$it" start-at-end "$ns-baseliner" perf.points.v1 perf.fleet-changes.v1 perf.changepoints.v1 \
  perf.gate.verdicts.v1 perf.triage.v1 || fail "placing the baseliner group"
service_start ingester
service_joined ingester

our="s.hlo_fingerprint LIKE '%.$ns'"
# replay PART ARGS...: publish that part and wait until the ingester stored it
replay() {
  local part=$1
  shift
  "$sim" replay "$scn" "${scale[@]}" --namespace "$ns" --run-prefix "$ns-" "$@" \
    >"$work/sim-$part.json" 2>"$work/sim-$part.log" || fail "pw-sim replay $part failed"
  "$it" wait "$ns-ingester" 180 perf.runs.v1 || fail "pw-ingester did not catch up ($part)"
}
latest() { psqlq -c "SELECT coalesce(max(derivation_id), 0) FROM perfwatch.noise_floor_derivations"; }
# derive EVERY: runs pw-baseliner (every EVERY, checked every 100 ms) until a
# derivation newer than the latest now is committed, then stops it; the id of
# the first such derivation (the first on the data replayed so far) in $d
derive() {
  local before deadline
  before=$(latest)
  service_start baseliner PW_BASELINER_NOISE_FLOOR_EVERY="$1" PW_BASELINER_NOISE_FLOOR_CHECK=100ms
  deadline=$((SECONDS + 120))
  while d=$(latest); [ "$d" -le "$before" ]; do
    kill -0 "${pid[baseliner]}" 2>/dev/null || fail "pw-baseliner exited"
    [ $SECONDS -lt $deadline ] || fail "no noise-floor derivation within 120 s"
    sleep 0.2
  done
  kill -TERM "${pid[baseliner]}"
  wait "${pid[baseliner]}" 2>/dev/null || true
  unset 'pid[baseliner]'
  d=$(psqlq -c "SELECT min(derivation_id) FROM perfwatch.noise_floor_derivations WHERE derivation_id > $before")
}
# rows D: our series' rows of derivation D: status n_groups n_samples floor previous
rows() {
  psqlq -F ' ' -c "SELECT f.status, f.n_groups, f.n_samples, coalesce(f.floor_pct::text, '-'),
                          coalesce(f.previous_derivation_id::text, '-')
                     FROM perfwatch.noise_floors f JOIN perfwatch.series s USING (series_id)
                    WHERE f.derivation_id = $1 AND $our ORDER BY s.series_key"
}
# numpy D: numpy/scipy's floor of each of our series from the stored samples
# (groups: one run's repeats, or one re-baseline job's runs; 90 days back from
# the series' newest sample), against derivation D's stored floor
numpy_check() {
  psqlq -F '|' -c "SELECT x.series_id, CASE WHEN x.rebaseline_job_id <> '' THEN 'j' || x.build_id || x.rebaseline_job_id
                                          ELSE 'r' || x.run_id END, x.value
                     FROM perfwatch.samples x JOIN perfwatch.series s USING (series_id)
                    WHERE $our AND x.measured_at >= (SELECT max(measured_at) FROM perfwatch.samples y
                                                      WHERE y.series_id = x.series_id) - interval '90 days'" >"$work/samples-$1.txt"
  psqlq -F '|' -c "SELECT f.series_id, coalesce(f.floor_pct::text, ''), f.n_groups, f.n_samples
                     FROM perfwatch.noise_floors f JOIN perfwatch.series s USING (series_id)
                    WHERE f.derivation_id = $1 AND $our" >"$work/floors-$1.txt"
  /usr/bin/python3 - "$work/samples-$1.txt" "$work/floors-$1.txt" <<'PY' || fail "derivation $1 differs from numpy/scipy"
import sys, itertools, collections
import numpy as np
from scipy.stats import norm
groups = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    sid, key, v = line.rstrip("\n").split("|")
    groups[sid][key].append(float(v))
scale = 1.0 / (np.sqrt(2.0) * norm.ppf(0.75))
checked = 0
for line in open(sys.argv[2]):
    sid, floor, ng, ns = line.rstrip("\n").split("|")
    gs = [g for g in groups[sid].values() if len(g) >= 2]
    pairs = [abs(a - b) / np.median(g) for g in gs for a, b in itertools.combinations(g, 2)]
    assert int(ng) == len(gs) and int(ns) == sum(map(len, gs)), (sid, ng, ns, len(gs))
    if floor:
        want = 100.0 * scale * np.median(pairs)
        assert abs(float(floor) - want) <= 1e-9 * want, (sid, floor, want)
        checked += 1
print("numpy/scipy agree on %d floors" % checked)
PY
}

# A: three nightlies: too little for a floor
replay A --until 2026-05-07
derive 100ms
dA=$d
rows "$dA" >"$work/rows-A.txt"
n=$(wc -l <"$work/rows-A.txt")
[ "$n" -eq 8 ] || fail "derivation $dA has $n rows for our 8 series"
bad=$(awk '!($1 == "insufficient_data" && $2 == 3 && $3 == 12 && $4 == "-" && $5 == "-")' "$work/rows-A.txt")
[ -z "$bad" ] || fail "part A: want insufficient_data, 3 groups, 12 runs, no floor: $bad"
echo "A: derivation $dA: 8 series insufficient_data (3 groups, 12 runs)"

# B: sixteen nightlies: a first floor
replay B --since 2026-05-07 --until 2026-05-20
derive 100ms
dB=$d
rows "$dB" >"$work/rows-B.txt"
bad=$(awk '!($1 == "derived" && $2 == 16 && $3 == 64 && $4 != "-" && $5 == "-")' "$work/rows-B.txt")
[ -z "$bad" ] && [ "$(wc -l <"$work/rows-B.txt")" -eq 8 ] || fail "part B: want 8 derived, 16 groups, 64 runs, no previous: $(cat "$work/rows-B.txt")"
numpy_check "$dB"
psqlq -c "SELECT f.series_id || ' ' || f.floor_pct FROM perfwatch.noise_floors f JOIN perfwatch.series s USING (series_id)
           WHERE f.derivation_id = $dB AND $our ORDER BY 1" >"$work/floors-B-saved.txt"
echo "B: derivation $dB: floors $(awk '{printf "%.3f%% ", $4}' "$work/rows-B.txt")"

# kill -9 while deriving every 300 ms: never a partial derivation, never a fork
for i in 1 2 3 4 5 6; do
  service_start baseliner PW_BASELINER_NOISE_FLOOR_EVERY=300ms PW_BASELINER_NOISE_FLOOR_CHECK=100ms
  sleep "1.$i"
  kill -KILL "${pid[baseliner]}" 2>/dev/null || true
  wait "${pid[baseliner]}" 2>/dev/null || true
  unset 'pid[baseliner]'
done
partial=$(psqlq -c "SELECT count(*) FROM perfwatch.noise_floor_derivations d
                     WHERE d.series_total <> (SELECT count(*) FROM perfwatch.noise_floors f WHERE f.derivation_id = d.derivation_id)
                        OR d.series_total <> d.series_derived + d.series_insufficient + d.series_invalid")
[ "$partial" -eq 0 ] || fail "$partial derivations are partial after kill -9"
forks=$(psqlq -c "SELECT count(*) FROM perfwatch.noise_floor_derivations d
                   WHERE d.follows <> coalesce((SELECT max(e.derivation_id) FROM perfwatch.noise_floor_derivations e
                                                 WHERE e.derivation_id < d.derivation_id), 0)")
[ "$forks" -eq 0 ] || fail "$forks derivations do not follow the one before"
dK=$(latest)
echo "kill -9 six times while deriving every 300 ms: derivations $dB..$dK, each whole"
# a restart within the period derives nothing
service_start baseliner PW_BASELINER_NOISE_FLOOR_EVERY=1h PW_BASELINER_NOISE_FLOOR_CHECK=100ms
deadline=$((SECONDS + 60))
until grep -q '"msg":"kafka partitions assigned' "$work/baseliner.log" 2>/dev/null &&
      [ "$(grep -c '"msg":"kafka partitions assigned' "$work/baseliner.log")" -ge 1 ]; do
  kill -0 "${pid[baseliner]}" 2>/dev/null || fail "pw-baseliner exited"
  [ $SECONDS -lt $deadline ] || fail "pw-baseliner did not join its group"
  sleep 0.2
done
sleep 2 # twenty checks of the schedule
kill -TERM "${pid[baseliner]}"
wait "${pid[baseliner]}" 2>/dev/null || true
unset 'pid[baseliner]'
[ "$(latest)" -eq "$dK" ] || fail "a restart within the period derived again ($dK -> $(latest))"

# C: the rest, the RC's five repeats included
replay C --since 2026-05-20
derive 100ms
dC=$d
rows "$dC" >"$work/rows-C.txt"
prevC=$(psqlq -c "SELECT max(derivation_id) FROM perfwatch.noise_floors f JOIN perfwatch.series s USING (series_id)
                   WHERE f.derivation_id < $dC AND f.status = 'derived' AND $our")
bad=$(awk -v p="$prevC" '!($1 == "derived" && $2 == 36 && $3 == 145 && $4 != "-" && $5 == p)' "$work/rows-C.txt")
[ -z "$bad" ] && [ "$(wc -l <"$work/rows-C.txt")" -eq 8 ] || fail "part C: want 8 derived, 36 groups, 145 runs, previous $prevC: $(cat "$work/rows-C.txt")"
numpy_check "$dC"
psqlq -c "SELECT f.series_id || ' ' || f.floor_pct FROM perfwatch.noise_floors f JOIN perfwatch.series s USING (series_id)
           WHERE f.derivation_id = $dB AND $our ORDER BY 1" | cmp -s - "$work/floors-B-saved.txt" ||
  fail "derivation $dB's floors changed"
echo "C: derivation $dC: floors $(awk '{printf "%.3f%% ", $4}' "$work/rows-C.txt")(previous: derivation $prevC)"

# the diff report
"$cli" noise-floors --json >"$work/report.json" || fail "perfwatch noise-floors failed"
"$cli" noise-floors --since 2000-01-01 --json >"$work/report-all.json" || fail "perfwatch noise-floors --since failed"
/usr/bin/python3 - "$work/report.json" "$work/report-all.json" "$ns" "$dC" "$dA" "$prevC" "$(latest)" <<'PY' || fail "perfwatch noise-floors --json is wrong"
import json, sys
rep, allrep, ns = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
dC, dA, prevC, last = map(int, sys.argv[4:8])
def ours(d):
    return [s for s in d["series"] if s["series_key"].split("/")[1].endswith("." + ns)]
def check(s, prev_id, prev_n):
    assert s["status"] == "derived" and s["previous_derivation_id"] == prev_id, s
    assert (s["n_groups"], s["n_samples"]) == (36, 145), s
    assert (s["previous_n_groups"], s["previous_n_samples"]) == prev_n, s
    want = (s["floor_pct"] - s["previous_floor_pct"]) / s["previous_floor_pct"] * 100
    assert abs(s["change_pct"] - want) <= 1e-6 * max(1, abs(want)), s
    assert s["floor_in_force_pct"] == s["floor_pct"], s
# without --since: the latest derivation alone
assert [d["derivation_id"] for d in rep["derivations"]] == [last], rep["derivations"]
assert len(ours(rep["derivations"][0])) == 8
for s in ours(rep["derivations"][0]):
    assert s["status"] == "derived" and (s["n_groups"], s["n_samples"]) == (36, 145), s
# --since: every derivation, in order; the first on part C's data against part B's floor
byid = {d["derivation_id"]: d for d in allrep["derivations"]}
ids = [d["derivation_id"] for d in allrep["derivations"]]
assert ids == sorted(ids) and dA in byid and dC in byid and last in byid, ids
c = ours(byid[dC])
assert len(c) == 8
for s in c:
    check(s, prevC, (16, 64))
a = ours(byid[dA])
assert len(a) == 8 and all(s["status"] == "insufficient_data" and s["floor_pct"] is None
                           and s["previous_floor_pct"] is None and s["change_pct"] is None
                           and s["floor_in_force_pct"] is None for s in a), a
for s in c:
    print("  %-66s %.4f%% (16/64) -> %.4f%% (36/145) %+.1f%%" % (s["series_key"], s["previous_floor_pct"], s["floor_pct"], s["change_pct"]))
PY
"$cli" noise-floors --text >"$work/report.txt" || fail "perfwatch noise-floors --text failed"
grep -q "^noise floors, derivation $(latest) at " "$work/report.txt" || fail "the text report has no header: $(head -3 "$work/report.txt")"
[ "$(grep -c "\.$ns/" "$work/report.txt")" -eq 8 ] || fail "the text report lacks our 8 series"
"$cli" noise-floors --since 2000-01-01 --text >"$work/report-all.txt" || fail "perfwatch noise-floors --since --text failed"
# derivation dC's block, up to the next header (other tests' series may share the stack)
awk -v h="noise floors, derivation $dC at " 'index($0, h) == 1 { on = 1; print; next }
     /^noise floors, derivation / { on = 0 } on' "$work/report-all.txt" >"$work/report-C.txt"
[ "$(grep "\.$ns/" "$work/report-C.txt" | grep -c "(16/64)")" -eq 8 ] ||
  fail "the text report of derivation $dC does not show the previous floor's 16 groups and 64 runs for our 8 series"
echo "perfwatch noise-floors --since 2000-01-01 --text, derivation $dC:"
sed -n 2p "$work/report-C.txt"
grep "\.$ns/" "$work/report-C.txt"
grep "not listed" "$work/report-C.txt" || true
set +e
"$cli" noise-floors --since 2026-13 >/dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "a bad --since exits $rc, want 2"
echo "test_noise_floor: PASS ($((SECONDS - t_start)) s)"
