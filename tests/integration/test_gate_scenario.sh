#!/usr/bin/env bash
# test_gate_scenario.sh: the release gate at the end of the whole pipeline,
# driven by the fleet simulator's worked-example scenario (§6.3, artifact 7).
#
# Run by tests/integration/run.sh. Starts pw-ingester, pw-baseliner and
# pw-gate on the dev stack (fresh consumer groups), sets the spend weights of
# the scenario's two models, and replays tools/simulator/scenarios/
# worked-example.scn with pw-sim: 36 nightlies, the prod release, the RC's 5
# repeats and the GateRequest of xla-rc-2026-06-17 all go through
# perf.runs.v1 → ingester → perf.points.v1 → baseliner → gate. The gate
# compares the RC with the baseliner's window of nightlies (the scenario's
# release has no runs of its own). Checks the GateVerdict on
# perf.gate.verdicts.v1 and the stored results: chat-8b BLOCKING, decode B64
# TPOT +8.2% and decode B8 +7.4% regressed, prefill and every v5e-8 series
# within noise, rank-moe-110b's +3.1% blocking too (top tier, >= 3%). And
# the baseliner's infra-health alerts on the shifted B64 TPOT series: after
# the gate, eleven more nightlies at the shifted level are replayed (as
# `make demo` does): with the scenario's own five shifted nightlies they are
# one excursion — at most one bl-outlier alert on the shifted points, the
# others recorded in baseliner_excursion_points (some of the first five may
# arrive before the first baseline, interleaved by the ingester's workers,
# and join its window; the excursion then starts later).
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
bins=("$PW_BUILD/services/ingester/pw-ingester" "$PW_BUILD/services/baseliner/pw-baseliner"
      "$PW_BUILD/services/gate/pw-gate" "$PW_BUILD/tools/simulator/pw-sim" "$PW_BUILD/tools/perfwatch")
need_bins "${bins[@]}"
work=$(mktemp -d "$PW_RUN_DIR/test_gate_scenario.XXXXXX")
tag=$(date +%s%N | tail -c 9)
pipeline_harness test_gate_scenario
. tests/integration/lib_gate.sh
rel=xla-rc-2026-06-17

psqlq -c "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
          ('chat-8b', 0.078, 'top', 'it'), ('rank-moe-110b', 0.05, 'top', 'it')
          ON CONFLICT (model) DO UPDATE SET spend_share = EXCLUDED.spend_share, tier = EXCLUDED.tier"
start() { # NAME BINARY
  PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="it-scn-$1-$tag" PW_GATE_POLL_INTERVAL=200ms PW_GATE_MIN_WAIT=45s \
    "$2" >"$work/$1.log" 2>&1 &
  pids+=($!)
}
# the groups start at the topics' ends: what earlier tests left on the shared
# broker is not this test's work, and reading it raced the dev broker's
# retention (offsets reset past unread points)
for g in "ingester perf.runs.v1" "baseliner perf.points.v1 perf.fleet-changes.v1" \
         "gate perf.gate.requests.v1"; do
  read -r name topics <<<"$g"
  # shellcheck disable=SC2086 # topics is a list
  "${bins[4]}" group to-end "it-scn-$name-$tag" $topics >/dev/null || fail "placing the $name group"
done
start ingester "${bins[0]}"
start baseliner "${bins[1]}"
start gate "${bins[2]}"
"${bins[3]}" replay tools/simulator/scenarios/worked-example.scn >"$work/sim.json" 2>"$work/sim.log" \
  || fail "pw-sim replay failed"
cat "$work/sim.json"

gate_verdict "$rel" "${pids[2]}" "$work/verdict.txt"
grep -q '^verdict: VERDICT_BLOCKING' "$work/verdict.txt" || fail "release verdict is not BLOCKING"
grep '^summary' "$work/verdict.txt"

"${bins[4]}" gate show "$rel" >"$work/show.txt"
"${bins[4]}" gate show "$rel" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
f = {x["family"]: x for x in d["families"]}
assert d["tests"] >= 60, d["tests"]
chat = f["chat-8b"]
assert chat["verdict"] == "blocking", chat["verdict"]
assert f["rank-moe-110b"]["verdict"] == "blocking", f["rank-moe-110b"]["verdict"]
s = {(x["platform"], x["config"], x["metric"]): x for x in chat["series"]}
b64 = s[("v6e-4", "decode.B64.s2048.int8", "tpot_p50_ms")]
b8 = s[("v6e-4", "decode.B8.s2048.int8", "tpot_p50_ms")]
assert b64["verdict"] == "blocking" and 7.6 <= b64["delta_pct"] <= 8.8, b64
assert b8["verdict"] == "blocking" and 6.8 <= b8["delta_pct"] <= 8.2, b8
assert b64["baseline_n"] >= 30, b64["baseline_n"]
for (plat, cfg, metric), x in s.items():
    if plat == "v5e-8" or cfg.startswith("prefill"):
        assert x["verdict"] in ("pass", "trend", "quarantined", "under_powered"), (plat, cfg, metric, x["verdict"])
    # under-powered exactly when tested with fewer runs than the series needs (§4.5)
    if x["p"] is not None and x["required_n"] is not None:
        assert (x["verdict"] == "under_powered") == (x["verdict"] in ("pass", "under_powered") and
                                                     x["candidate_n"] < x["required_n"]), x
print("test_gate_scenario: B64 %+.2f%% B8 %+.2f%% over %d tests" % (b64["delta_pct"], b8["delta_pct"], d["tests"]))
' || fail "stored results do not match the worked example (see $work/show.txt)"
b64_key=chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms
scn=tools/simulator/scenarios/worked-example.scn
days=$(awk '$1 == "days" { print $2 }' "$scn")
since=$(date -u -d "$(awk '$1 == "start" { print $2 }' "$scn") + $days days" +%Y-%m-%dT00:00:00Z)
"${bins[3]}" replay "$scn" --days $((days + 11)) --since "$since" >>"$work/sim.json" 2>>"$work/sim.log" ||
  fail "pw-sim replay of the later nightlies failed"
# the ingester, then the baseliner, done with every run and point of the replay
"${bins[4]}" group lag "it-scn-ingester-$tag" --wait 120 perf.runs.v1 >/dev/null ||
  fail "the ingester did not catch up with perf.runs.v1"
"${bins[4]}" group lag "it-scn-baseliner-$tag" --wait 120 perf.points.v1 >/dev/null ||
  fail "the baseliner did not catch up with perf.points.v1"
kept=$(psqlq -c "SELECT count(*) FROM perfwatch.baseliner_excursion_points x JOIN perfwatch.series s
                 USING (series_id) WHERE s.series_key = '$b64_key' AND x.measured_at >= '$since'")
alerts=$(psqlq -c "SELECT count(*) FROM perfwatch.alerts a JOIN perfwatch.samples s ON a.alert_id =
                   'bl-outlier/' || s.series_id || '/' || s.run_id || '/' || s.repeat_index
                   WHERE a.series_key = '$b64_key' AND s.measured_at >= '2026-06-17'")
echo "test_gate_scenario: B64 TPOT series: $alerts bl-outlier alert(s), $kept excursion point(s)"
[ "$alerts" -le 1 ] || fail "B64 TPOT: $alerts bl-outlier alerts on the shifted nightlies, want at most 1 (one excursion)"
[ "$kept" -ge 9 ] || fail "B64 TPOT: $kept excursion points among the eleven later nightlies, want >= 9"
echo "test_gate_scenario: PASS"
