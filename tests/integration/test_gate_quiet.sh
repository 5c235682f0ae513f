#!/usr/bin/env bash
# test_gate_quiet.sh: the release gate's false-positive check at the seed's
# scale, through the whole pipeline: pw-sim quiet-week → perf.runs.v1 →
# pw-ingester → perf.points.v1 → pw-baseliner → pw-gate → perf.gate.verdicts.v1.
#
# Run by tests/integration/run.sh. quiet-week at 13 models × 4 platforms × 6
# configs (312 benchmarks, ≈ 2,390 metric series; 12 models would give 2,208,
# too close to the seed's 2,160) for its five weeks of nightlies and the 5
# repeats of xla-rc-2026-06-07: nothing changes, so the gate must find
# nothing. The replay is namespaced (pw-sim --namespace), so its series,
# families and release are its own on a stack earlier tests used. The gate
# starts once the ingester and the baseliner have caught up (their consumer
# groups at the topics' ends), so the decision is taken on complete data and
# does not depend on how fast this machine is. Checks, on the GateVerdict on
# the topic and in PostgreSQL (gate_evaluations, gate_family_results,
# gate_series_results, alerts): at least 2,160 gated tests, every one the
# replay's own; no BLOCKING, no P1 family, the release PASS; every series
# within noise or trend-only; no alert. Prints the verdict counts and the
# gate's evaluation time (perfwatch_gate_evaluation_seconds: load, decide,
# store, publish) as information: the issue's target is < 1 s for 2,160.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
ingester=$PW_BUILD/services/ingester/pw-ingester
baseliner=$PW_BUILD/services/baseliner/pw-baseliner
gate=$PW_BUILD/services/gate/pw-gate
sim=$PW_BUILD/tools/simulator/pw-sim
it=$PW_BUILD/tests/it_watcher
need_bins "$ingester" "$baseliner" "$gate" "$sim" "$it"
need_tools kcat protoc psql python3 curl

scn=tools/simulator/scenarios/quiet-week.scn
scale=(--models 13)
min_tests=2160
ns=gq$(date +%s%N | tail -c 9)
rel=xla-rc-2026-06-07.$ns
work=$(mktemp -d "$PW_RUN_DIR/test_gate_quiet.XXXXXX")
pipeline_harness test_gate_quiet
. tests/integration/lib_gate.sh
# the families are this test's only: later requests naming none would gate them
on_exit() { psqlq -c "DELETE FROM perfwatch.spend_weights WHERE model LIKE '%.$ns'" >/dev/null 2>&1 || true; }
t_start=$SECONDS

count=$("$sim" count "$scn" "${scale[@]}")
want_samples=$(grep -o '"samples":[0-9]*' <<<"$count" | cut -d: -f2)
want_series=$(grep -o '"series":[0-9]*' <<<"$count" | cut -d: -f2)
echo "scenario: $count"

# the families, as the replay names them: the first 4 (built-in) models top
# tier, the synthetic ones tail (the two tiers' n and MDE both gated)
"$sim" dump "$scn" "${scale[@]}" --namespace "$ns" --limit "$want_series" |
  grep -o '"model":"[^"]*"' | sed 's/"model":"\(.*\)"/\1/' | awk '!seen[$0]++' >"$work/models.txt"
i=0
while read -r m; do
  if [ $i -lt 4 ]; then tier=top share=0.05; else tier=tail share=0.005; fi
  psqlq -c "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source)
            VALUES ('$m', $share, '$tier', 'test_gate_quiet')" >/dev/null
  i=$((i + 1))
done <"$work/models.txt"
[ "$i" -eq 13 ] || fail "expected 13 models in the replay, found $i"

# every group starts where its topics end now: earlier tests' messages are not ours
gate_groups_at_end "$ns" "$it"
gate_start ingester "$ingester" "$ns" 45s
gate_start baseliner "$baseliner" "$ns" 45s

t0=$SECONDS
"$sim" replay "$scn" "${scale[@]}" --namespace "$ns" --run-prefix "$ns-" >"$work/sim.json" 2>"$work/sim.log" ||
  fail "pw-sim replay failed"
echo "replayed in $((SECONDS - t0)) s: $(cat "$work/sim.json")"
"$it" wait "$ns-ingester" 300 perf.runs.v1 || fail "pw-ingester did not catch up"
"$it" wait "$ns-baseliner" 300 perf.points.v1 || fail "pw-baseliner did not catch up"
got=$(psqlq -c "SELECT count(*) FROM perfwatch.samples WHERE run_id LIKE '$ns-%'")
[ "$got" -eq "$want_samples" ] || fail "$got of $want_samples samples stored"
echo "ingested and baselined in $((SECONDS - t0)) s: $got samples"
psqlq -c "SELECT 'baselines: ' || string_agg(state || ' ' || n, ', ') FROM (SELECT b.state, count(*) n
            FROM perfwatch.latest_baselines b JOIN perfwatch.series s USING (series_id)
           WHERE s.model LIKE '%.$ns' GROUP BY 1 ORDER BY 1) x"

# the gate sees the request only now, with every run and baseline in place
t1=$SECONDS
gate_start gate "$gate" "$ns" 45s
gate_verdict "$rel" "${pids[2]}" "$work/verdict.txt" 120
echo "verdict on the topic $((SECONDS - t1)) s after the gate started"
grep '^summary' "$work/verdict.txt" || true

# the message: release verdict, families, one line a series
python3 - "$work/verdict.txt" "$min_tests" "$ns" <<'PY' || fail "the GateVerdict on the topic is not quiet (see $work/verdict.txt)"
import sys, collections
sys.path.insert(0, "tests/integration")
from verdict_text import parse
path, min_tests, ns = sys.argv[1], int(sys.argv[2]), sys.argv[3]
top, blocks = parse(path)
fams = [b for b in blocks if b["kind"] == "families"]
series = [b for b in blocks if b["kind"] == "series"]
tests = int(top.get("tests", 0))
assert top.get("verdict") == "VERDICT_PASS", ("release verdict", top.get("verdict"))
assert tests >= min_tests, ("gated tests", tests)
assert len(fams) == 13, ("families", len(fams))
bad = [f["family"] for f in fams if f.get("verdict") in ("VERDICT_BLOCKING", "VERDICT_P1")]
assert not bad, ("blocking or P1 families", bad)
assert all(f["family"].endswith("." + ns) for f in fams), "a family of another replay"
assert all(f.get("verdict") == "VERDICT_PASS" for f in fams), [(f["family"], f.get("verdict")) for f in fams]
assert all(("/hlo:" in s["series_key"] and s["series_key"].split("/")[1].endswith("." + ns)) for s in series), "a series of another replay"
c = collections.Counter(s.get("verdict", "VERDICT_UNSPECIFIED") for s in series)
assert set(c) <= {"VERDICT_PASS", "VERDICT_TREND", "VERDICT_UNDER_POWERED"}, ("series verdicts", dict(c))
# §4.5 on the topic: an under-powered series has fewer runs than it needs, a
# passing one enough; a GPU series (b200-8) is certified at 4%, its tier's
# MDE below that is the canary's, and the summary says so
for s in series:
    n, need = int(s.get("candidate_n", 0)), int(s.get("required_n", 0))
    if s.get("verdict") == "VERDICT_UNDER_POWERED":
        assert n < need, ("under-powered with enough runs", s["series_key"], n, need)
    elif s.get("verdict") == "VERDICT_PASS" and need:
        assert n >= need, ("within noise with too few runs", s["series_key"], n, need)
    gpu = s["series_key"].split("/")[2].startswith("b200")
    assert float(s.get("mde_pct", 0)) == (4.0 if gpu else float(s.get("tier_mde_pct", 0))), s
assert "GPU series certified at MDE 4%: the 1-4% band is the production canary" in top.get("summary", ""), top.get("summary")
print("topic: release %s, %d tests, %d families all pass, series %s" % (top["verdict"], tests, len(fams), dict(c)))
PY

# what the gate stored
row=$(psqlq -c "SELECT status, verdict, tests, round(extract(epoch FROM evaluated_at - received_at)::numeric, 2)
                  FROM perfwatch.gate_evaluations WHERE release_id = '$rel' AND evaluation = 1")
IFS='|' read -r status verdict tests wait_s <<<"$row"
[ "$status" = done ] && [ "$verdict" = pass ] || fail "stored evaluation: \"$row\""
[ "$tests" -ge "$min_tests" ] || fail "only $tests gated tests stored (want >= $min_tests)"
fams=$(psqlq -c "SELECT count(*) || ' ' || count(*) FILTER (WHERE verdict = 'pass') || ' '
                        || count(*) FILTER (WHERE verdict IN ('blocking', 'p1'))
                   FROM perfwatch.gate_family_results WHERE release_id = '$rel' AND evaluation = 1")
[ "$fams" = "13 13 0" ] || fail "family results (all, pass, blocking or p1): $fams"
counts=$(psqlq -c "SELECT string_agg(verdict || ' ' || n, ', ' ORDER BY verdict) FROM (SELECT verdict, count(*) n
                     FROM perfwatch.gate_series_results WHERE release_id = '$rel' AND evaluation = 1 GROUP BY 1) x")
echo "stored series verdicts: $counts"
others=$(psqlq -c "SELECT count(*) FROM perfwatch.gate_series_results r JOIN perfwatch.series s USING (series_id)
                    WHERE r.release_id = '$rel' AND r.evaluation = 1
                      AND (r.verdict NOT IN ('pass', 'trend', 'under_powered') OR s.hlo_fingerprint NOT LIKE '%.$ns')")
[ "$others" -eq 0 ] || fail "$others stored series are neither pass, trend nor under-powered, or not of this replay ($counts)"
# §4.5: the required n the gate used is the one the baseliner published with the baseline
mismatch=$(psqlq -c "SELECT count(*) FROM perfwatch.gate_series_results r
                       JOIN perfwatch.baselines b ON b.series_id = r.series_id AND b.version = r.baseline_version
                      WHERE r.release_id = '$rel' AND r.evaluation = 1 AND r.q IS NOT NULL
                        AND r.required_n IS DISTINCT FROM
                            (CASE r.tier WHEN 'top' THEN b.required_n_top ELSE b.required_n_tail END)")
[ "$mismatch" -eq 0 ] || fail "$mismatch series were gated with another required n than their baseline published"
psqlq -c "SELECT 'under-powered by platform and tier (series: candidate runs < required n): ' ||
                 string_agg(platform || '/' || tier || ' ' || under || ' of ' || n || ' (n needed ' || lo || '-' || hi || ')', ', ')
            FROM (SELECT s.platform, r.tier, count(*) n, count(*) FILTER (WHERE r.verdict = 'under_powered') under,
                         min(r.required_n) lo, max(r.required_n) hi
                    FROM perfwatch.gate_series_results r JOIN perfwatch.series s USING (series_id)
                   WHERE r.release_id = '$rel' AND r.evaluation = 1 AND r.q IS NOT NULL
                   GROUP BY 1, 2 ORDER BY 1, 2) x"
echo "the gate's per-tier n table (pw-gate --power-table):"
"$gate" --power-table
tested=$(psqlq -c "SELECT count(*) FROM perfwatch.gate_series_results WHERE release_id = '$rel' AND evaluation = 1 AND q IS NOT NULL")
[ "$tested" -eq "$tests" ] || fail "$tested series carry a q-value, the release says $tests tests"
metric_series=$(psqlq -c "SELECT count(DISTINCT series_id) FROM perfwatch.samples WHERE run_id LIKE '$ns-%'")
stored=$(psqlq -c "SELECT count(*) FROM perfwatch.gate_series_results WHERE release_id = '$rel' AND evaluation = 1")
[ "$stored" -eq "$metric_series" ] || fail "$stored series results for $metric_series series the replay measured"
alerts=$(psqlq -c "SELECT count(*) FROM perfwatch.alerts WHERE release_id = '$rel'")
[ "$alerts" -eq 0 ] || fail "$alerts alerts raised on a quiet release"

port=$(grep -o '"msg":"serving /healthz /readyz /metrics on [^"]*' "$work/gate.log" | tail -1 | sed 's/.*://')
eval_s=$(curl -fsS "http://127.0.0.1:$port/metrics" |
  awk '/^perfwatch_gate_evaluation_seconds_sum/ {s = $2} /^perfwatch_gate_evaluation_seconds_count/ {n = $2}
       END {printf "%.3f s over %d evaluation(s)", s, n}')
echo "gate evaluation time (load + decide + store + publish) for $tests tests: $eval_s; request stored -> evaluated ${wait_s} s (target < 1 s for 2,160; information only)"
echo "test_gate_quiet: PASS: $tests gated tests, release pass, no BLOCKING/P1 family, no alert ($((SECONDS - t_start)) s)"
