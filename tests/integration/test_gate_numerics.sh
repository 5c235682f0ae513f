#!/usr/bin/env bash
# test_gate_numerics.sh: §9's "faster but wrong" check through the pipeline:
# pw-sim faster-but-wrong → perf.runs.v1 → pw-ingester → perf.points.v1 →
# pw-baseliner → pw-gate → perf.gate.verdicts.v1, and bad numerics
# fingerprints dead-lettered by pw-ingester.
#
# Run by tests/integration/run.sh. The scenario (tools/simulator/scenarios/
# faster-but-wrong.scn) makes four models 4% faster on decode B64 v6e-4 in
# xla-rc-2026-06-17: chat-8b registered with the same numerics, code-34b
# registered with changed numerics, chat-70b unregistered with the same
# numerics, rank-moe-110b unregistered with changed numerics. Every simulated
# run carries a numerics fingerprint. Checks, on the topic and in what the gate
# stored and `perfwatch gate show` prints (text and JSON):
#   - chat-8b TPOT: VALIDATED_WIN, numerics "match"; chat-70b TPOT:
#     INVESTIGATE, numerics "match";
#   - code-34b and rank-moe-110b TPOT: BLOCKING with numerics_reason "numerics
#     changed: faster but wrong", numerics "mismatch" and the two (different)
#     fingerprints, which are those stored with the baseline's and the RC's
#     runs; both families BLOCKING;
# then sends copies of one run of the replay with a numerics fingerprint too long,
# in upper case, and not hex: each dead-lettered by the ingester with the
# field named in its detail, none stored.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
ingester=$PW_BUILD/services/ingester/pw-ingester
baseliner=$PW_BUILD/services/baseliner/pw-baseliner
gate=$PW_BUILD/services/gate/pw-gate
sim=$PW_BUILD/tools/simulator/pw-sim
it=$PW_BUILD/tests/it_watcher
pw=$PW_BUILD/tools/perfwatch
need_bins "$ingester" "$baseliner" "$gate" "$sim" "$it" "$pw"
need_tools kcat protoc psql python3

scn=tools/simulator/scenarios/faster-but-wrong.scn
ns=gn$(date +%s%N | tail -c 9)
rel=xla-rc-2026-06-17.$ns
work=$(mktemp -d "$PW_RUN_DIR/test_gate_numerics.XXXXXX")
pipeline_harness test_gate_numerics
. tests/integration/lib_gate.sh
on_exit() { psqlq -c "DELETE FROM perfwatch.spend_weights WHERE model LIKE '%.$ns'" >/dev/null 2>&1 || true; }
t_start=$SECONDS

gate_scenario_weights "$scn" test_gate_numerics chat-8b=0.078 code-34b=0.03 chat-70b=0.03 rank-moe-110b=0.05

gate_groups_at_end "gn-$ns" "$it"
gate_start ingester "$ingester" "gn-$ns" 45s
gate_start baseliner "$baseliner" "gn-$ns" 45s
"$sim" replay "$scn" --namespace "$ns" --run-prefix "$ns-" >"$work/sim.json" 2>"$work/sim.log" ||
  fail "pw-sim replay failed"
"$it" wait "gn-$ns-ingester" 300 perf.runs.v1 || fail "pw-ingester did not catch up"
"$it" wait "gn-$ns-baseliner" 300 perf.points.v1 || fail "pw-baseliner did not catch up on points"
got=$(psqlq -c "SELECT count(*) FROM perfwatch.samples WHERE run_id LIKE '$ns-%'")
[ "$got" -eq "$want_samples" ] || fail "$got of $want_samples samples stored"
nofp=$(psqlq -c "SELECT count(*) FROM perfwatch.runs WHERE run_id LIKE '$ns-%' AND numerics_fingerprint = ''")
[ "$nofp" = 0 ] || fail "$nofp simulated runs stored without their numerics fingerprint"
echo "ingested and baselined in $((SECONDS - t_start)) s: $got samples"

gate_start gate "$gate" "gn-$ns" 45s
gate_verdict "$rel" "${pids[2]}" "$work/verdict.txt" 180
grep '^summary' "$work/verdict.txt" || true
"$pw" gate show "$rel" >"$work/show.txt" || fail "perfwatch gate show failed"
"$pw" gate show "$rel" --json >"$work/show.json" || fail "perfwatch gate show --json failed"
# each model's fingerprints as stored: RC runs and the nightlies before the RC
psqlq -F $'\t' -c "SELECT model, build_kind, string_agg(DISTINCT numerics_fingerprint, ',')
                     FROM perfwatch.runs WHERE run_id LIKE '$ns-%' AND platform = 'v6e-4'
                      AND (build_kind = 'rc' OR finished_at < '2026-06-14')
                    GROUP BY 1, 2" >"$work/fps.tsv"

python3 - "$work" "$ns" <<'PY' || fail "the numerics check is wrong (see $work)"
import json, sys
sys.path.insert(0, "tests/integration")
from verdict_text import parse
work, ns = sys.argv[1], sys.argv[2]
sfx = "." + ns
reason = "numerics changed: faster but wrong"
fps = {}
for l in open(f"{work}/fps.tsv"):
    m, kind, f = l.rstrip("\n").split("\t")
    fps[(m[: -len(sfx)], kind)] = f
# the scenario: the same numerics for chat-8b and chat-70b, changed ones for the others
for m in ("chat-8b", "chat-70b"):
    assert fps[(m, "rc")] == fps[(m, "nightly")] and "," not in fps[(m, "rc")], (m, fps)
for m in ("code-34b", "rank-moe-110b"):
    assert fps[(m, "rc")] != fps[(m, "nightly")] and "," not in fps[(m, "rc")], (m, fps)

top, blocks = parse(f"{work}/verdict.txt")
tfam = {b["family"][: -len(sfx)]: b["verdict"] for b in blocks if b["kind"] == "families"}
assert tfam == {"chat-8b": "VERDICT_VALIDATED_WIN", "chat-70b": "VERDICT_PASS",
                "code-34b": "VERDICT_BLOCKING", "rank-moe-110b": "VERDICT_BLOCKING"}, tfam
assert top["verdict"] == "VERDICT_BLOCKING", top
for m in ("code-34b", "rank-moe-110b"):
    assert f"{m}{sfx} (" in top["summary"] and f"series {reason})" in top["summary"], top["summary"]
tser = {b["series_key"]: b for b in blocks if b["kind"] == "series"}
def topic(model):
    k = [s for s in tser if s.startswith(model + sfx + "/") and s.endswith("/tpot_p50_ms")]
    assert len(k) == 1, (model, list(tser))
    return tser[k[0]]
show = json.load(open(f"{work}/show.json"))
jser = {}
for f in show["families"]:
    for s in f["series"]:
        jser[(f["family"][: -len(sfx)], s["metric"])] = s

want = {"chat-8b": ("VALIDATED_WIN", "match"), "chat-70b": ("INVESTIGATE", "match"),
        "code-34b": ("BLOCKING", "mismatch"), "rank-moe-110b": ("BLOCKING", "mismatch")}
for m, (v, n) in want.items():
    t, j = topic(m), jser[(m, "tpot_p50_ms")]
    assert t["verdict"] == "VERDICT_" + v and j["verdict"] == v.lower(), (m, t, j)
    assert t.get("numerics") == n == j["numerics"], (m, t, j)
    assert -4.8 < float(t["delta_pct"]) < -3.2, (m, t)
    base, cand = fps[(m, "nightly")], fps[(m, "rc")]
    assert t.get("baseline_numerics_fingerprint") == j["baseline_numerics_fingerprint"] == base, (m, t, base)
    assert t.get("candidate_numerics_fingerprint") == j["candidate_numerics_fingerprint"] == cand, (m, t, cand)
    if n == "mismatch":
        assert t.get("numerics_reason") == j["numerics_reason"] == reason, (m, t, j)
    else:
        assert "numerics_reason" not in t and j["numerics_reason"] == "", (m, t, j)

text = open(f"{work}/show.txt").read()
for m in ("code-34b", "rank-moe-110b"):
    line = f"    {reason}: baseline numerics {fps[(m, 'nightly')]}, candidate numerics {fps[(m, 'rc')]}"
    assert line in text, (m, line)
for m in ("chat-8b", "chat-70b"):
    assert f"    numerics match the baseline's ({fps[(m, 'nightly')]})" in text, m
print("numerics: %s" % {m: (topic(m)["verdict"], topic(m)["numerics"]) for m in want})
PY

# --- bad fingerprints: copies of one run of the replay (new run ids) with a bad
# numerics_fingerprint each; the ingester dead-letters each, naming the field
# (keys only: the payloads are binary)
read -r p o < <(kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.runs.v1 -o beginning -e -q -f '%p %o %k\n' 2>/dev/null |
  awk -v ns=".$ns/" 'index($3, ns) {print $1, $2; exit}' || true)
[ -n "${p:-}" ] || fail "no run of this replay on perf.runs.v1"
kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.runs.v1 -p "$p" -o "$o" -c 1 -e -q -f '%s' |
  protoc --decode=perfwatch.v1.RunResult -I proto proto/perfwatch/v1/run.proto >"$work/run.txt" ||
  fail "decoding a run"
grep -q '^numerics_fingerprint: "[0-9a-f]\{32\}"$' "$work/run.txt" || fail "the run carries no numerics fingerprint"
bad=( "$(printf '%0130d' 7)"  "3F9A1C0D5E7B2A46"  "sha256:3f9a1c0d5e7b2a460" )
want_detail=( 'field "numerics_fingerprint" is 130 characters'
              'field "numerics_fingerprint" has a character outside 0-9a-f at offset 1'
              'field "numerics_fingerprint" has a character outside 0-9a-f at offset 0' )
want_reason=( oversize invalid_value invalid_value )
for i in 0 1 2; do
  key="$ns-bad$i"
  sed -e "s/^run_id: \"[^\"]*\"/run_id: \"$key\"/" \
      -e "s/^numerics_fingerprint: .*/numerics_fingerprint: \"${bad[$i]}\"/" "$work/run.txt" |
    protoc --encode=perfwatch.v1.RunResult -I proto proto/perfwatch/v1/run.proto >"$work/bad$i.bin" ||
    fail "encoding bad run $i"
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.runs.v1 -k "$key" "$work/bad$i.bin" || fail "publishing bad run $i"
done
for i in 0 1 2; do
  key="$ns-bad$i" dl=""
  for _ in $(seq 300); do
    dl=$(psqlq -c "SELECT reason || ': ' || detail FROM perfwatch.dead_letters
                    WHERE service = 'ingester' AND convert_from(original_key, 'UTF8') = '$key'")
    [ -z "$dl" ] || break
    sleep 0.2
  done
  [[ $dl == "${want_reason[$i]}: "*"${want_detail[$i]}"* ]] ||
    fail "bad fingerprint ${bad[$i]:0:24}...: dead letter \"$dl\", want ${want_reason[$i]}: ${want_detail[$i]}"
  echo "dead-lettered: $dl"
done
stored=$(psqlq -c "SELECT count(*) FROM perfwatch.runs WHERE run_id LIKE '$ns-bad%'")
[ "$stored" = 0 ] || fail "$stored runs with a bad numerics fingerprint stored"
echo "test_gate_numerics: PASS ($((SECONDS - t_start)) s)"
