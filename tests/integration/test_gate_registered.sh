#!/usr/bin/env bash
# test_gate_registered.sh: registered wins, unregistered wins, waivers and a
# freeze, through the whole pipeline: pw-sim registered-win → perf.runs.v1 and
# perf.fleet-changes.v1 → pw-ingester → perf.points.v1 → pw-baseliner →
# pw-gate → perf.gate.verdicts.v1.
#
# Run by tests/integration/run.sh. The scenario (tools/simulator/scenarios/
# registered-win.scn) registers cl/7841830's −4% TPOT on chat-8b v6e-4 decode
# B64 with xla-rc-2026-06-17 and delivers it; makes rank-moe-110b's decode B64
# 4% faster unregistered; regresses chat-70b and code-34b decode B64 +5% under
# a live and an expired waiver; and swaps hosts of the v5e-8 cell chat-8b runs
# on (fleet change fc-2026-06-14-0031) three days before the RC. The replay is
# namespaced (pw-sim --namespace). It is played in two segments, before and
# from the fleet change, with the ingester and the baseliner caught up in
# between, so that the baseliner meets the event after every run measured
# before it whatever this machine's speed; the gate starts once both have
# caught up. Checks the GateVerdict on the topic and what the gate stored:
#   - chat-8b: VALIDATED_WIN; the six registered metrics validated, TPOT
#     about −4% against a registered −4%;
#   - rank-moe-110b decode B64: INVESTIGATE with an improvement alert routed
#     to the queue; the family still PASS;
#   - chat-70b: WAIVED by its live waiver (its id on the family's regressed
#     series); code-34b: BLOCKING, its expired waiver (stored with the
#     release) covering nothing;
#   - chat-8b's v5e-8 series: frozen by the baseliner (open freezes of the
#     event, exactly those series), reported FROZEN and never tested;
#   - every other series within noise or trend-only; the release BLOCKING;
#   - the validated win reaches the compiler team as a message: a pw-pager
#     reading the gate's verdict posts one validated_win notice for chat-8b,
#     severity info, route xla-compiler, owner compiler, to the webhook (and
#     pages nobody for the win).
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
ingester=$PW_BUILD/services/ingester/pw-ingester
baseliner=$PW_BUILD/services/baseliner/pw-baseliner
gate=$PW_BUILD/services/gate/pw-gate
sim=$PW_BUILD/tools/simulator/pw-sim
it=$PW_BUILD/tests/it_watcher
pager=$PW_BUILD/services/pager/pw-pager
need_bins "$ingester" "$baseliner" "$gate" "$sim" "$it" "$pager"
need_tools kcat protoc psql python3

scn=tools/simulator/scenarios/registered-win.scn
change_at=2026-06-14T00:30:00Z   # fleet_change fc-2026-06-14-0031 of the scenario
ns=gr$(date +%s%N | tail -c 9)
rel=xla-rc-2026-06-17.$ns
event=fc-2026-06-14-0031.$ns
work=$(mktemp -d "$PW_RUN_DIR/test_gate_registered.XXXXXX")
pipeline_harness test_gate_registered
. tests/integration/lib_gate.sh
on_exit() { psqlq -c "DELETE FROM perfwatch.spend_weights WHERE model LIKE '%.$ns'" >/dev/null 2>&1 || true; }
t_start=$SECONDS

gate_scenario_weights "$scn" test_gate_registered chat-8b=0.078 rank-moe-110b=0.05 chat-70b=0.03 code-34b=0.03

"$it" start-at-end "gr-ingester-$ns" perf.runs.v1 || fail "placing the ingester group"
"$it" start-at-end "gr-baseliner-$ns" perf.points.v1 perf.fleet-changes.v1 || fail "placing the baseliner group"
"$it" start-at-end "gr-gate-$ns" perf.gate.requests.v1 || fail "placing the gate group"
start() { # NAME BINARY
  PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="gr-$1-$ns" PW_GATE_POLL_INTERVAL=200ms PW_GATE_MIN_WAIT=45s \
    "$2" >"$work/$1.log" 2>&1 &
  pids+=($!)
}
caught_up() {
  "$it" wait "gr-ingester-$ns" 300 perf.runs.v1 || fail "pw-ingester did not catch up"
  "$it" wait "gr-baseliner-$ns" 300 perf.points.v1 || fail "pw-baseliner did not catch up on points"
  "$it" wait "gr-baseliner-$ns" 300 perf.fleet-changes.v1 || fail "pw-baseliner did not catch up on fleet changes"
}
start ingester "$ingester"
start baseliner "$baseliner"

replay=("$sim" replay "$scn" --namespace "$ns" --run-prefix "$ns-")
"${replay[@]}" --until "$change_at" >"$work/sim1.json" 2>"$work/sim1.log" || fail "pw-sim replay (before the change) failed"
caught_up
"${replay[@]}" --since "$change_at" >"$work/sim2.json" 2>"$work/sim2.log" || fail "pw-sim replay (from the change) failed"
caught_up
echo "replayed: $(cat "$work/sim1.json") $(cat "$work/sim2.json")"
grep -q '"fleet_changes":1,"gate_requests":1' "$work/sim2.json" || fail "the second segment did not carry the fleet change and the request"
got=$(psqlq -c "SELECT count(*) FROM perfwatch.samples WHERE run_id LIKE '$ns-%'")
[ "$got" -eq "$want_samples" ] || fail "$got of $want_samples samples stored"
echo "ingested and baselined in $((SECONDS - t_start)) s: $got samples"

# the baseliner froze exactly chat-8b's v5e-8 series, and they are still frozen
frz=$(psqlq -c "SELECT count(*) || ' ' || count(*) FILTER (WHERE f.unfrozen_at IS NULL) || ' '
                       || count(*) FILTER (WHERE s.model <> 'chat-8b.$ns' OR s.platform <> 'v5e-8')
                  FROM perfwatch.freezes f JOIN perfwatch.series s USING (series_id) WHERE f.event_id = '$event'")
want_frozen=$(psqlq -c "SELECT count(DISTINCT p.series_id) FROM perfwatch.samples p JOIN perfwatch.series s USING (series_id)
                         WHERE p.run_id LIKE '$ns-%' AND s.model = 'chat-8b.$ns' AND s.platform = 'v5e-8'")
[ "$frz" = "$want_frozen $want_frozen 0" ] || fail "freezes of $event (all, open, outside chat-8b v5e-8): \"$frz\", want $want_frozen open"
echo "frozen by $event: $want_frozen series"

# the pager that tells the compiler team (its notices to a webhook standing in for the receiver)
"$it" start-at-end "gr-pager-$ns" perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 \
  perf.attributions.v1 perf.rollouts.v1 || fail "placing the pager group"
hook_port=$(free_port)
mkdir -p "$work/hook"
python3 - "$hook_port" "$work/hook" >"$work/hook.log" 2>&1 <<'PY' &
import http.server, json, os, sys
port, out = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(os.path.join(out, "%04d.json" % len(os.listdir(out))), "w") as f:
            json.dump(json.loads(body), f)
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
pids+=($!)
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="gr-pager-$ns" PW_PAGER_TRIAGE_KEY="registered-test-key-$ns" PW_PAGER_TICK=200ms \
  PW_PAGER_BUDGET_PER_WEEK=1000 PW_PAGER_ALERTMANAGER_URL="http://127.0.0.1:$(free_port)" \
  PW_PAGER_WEBHOOK_URL="http://127.0.0.1:$hook_port/hook" "$pager" >"$work/pager.log" 2>&1 &
pids+=($!)

t1=$SECONDS
start gate "$gate"
gate_pid=${pids[-1]}
gate_verdict "$rel" "$gate_pid" "$work/verdict.txt" 120
echo "verdict on the topic $((SECONDS - t1)) s after the gate started"
grep '^summary' "$work/verdict.txt" || true

# the topic and the stored rows must tell the same story
psqlq -F $'\t' -c "SELECT s.model, s.platform, s.config, s.metric, r.verdict, coalesce(r.delta_pct::text, ''),
                          r.expected_delta_pct, r.waiver_id, r.alert_id, (r.q IS NOT NULL)
                     FROM perfwatch.gate_series_results r JOIN perfwatch.series s USING (series_id)
                    WHERE r.release_id = '$rel' AND r.evaluation = 1" >"$work/series.tsv"
psqlq -F $'\t' -c "SELECT family, verdict, gated_series, regressed_series FROM perfwatch.gate_family_results
                    WHERE release_id = '$rel' AND evaluation = 1" >"$work/families.tsv"
psqlq -F $'\t' -c "SELECT status, verdict, tests FROM perfwatch.gate_evaluations
                    WHERE release_id = '$rel' AND evaluation = 1" >"$work/evaluation.tsv"
psqlq -F $'\t' -c "SELECT a.series_key, a.kind, a.routing, a.verdict FROM perfwatch.alerts a
                    WHERE a.release_id = '$rel'" >"$work/alerts.tsv"
psqlq -F $'\t' -c "SELECT waiver_id, model, expires_at < now() FROM perfwatch.waivers
                    WHERE release_id = '$rel' ORDER BY waiver_id" >"$work/waivers.tsv"

python3 - "$work" "$ns" <<'PY' || fail "the gate's verdict on registered-win is wrong (see $work)"
import sys, collections
sys.path.insert(0, "tests/integration")
from verdict_text import parse
work, ns = sys.argv[1], sys.argv[2]
sfx = "." + ns
def tsv(name):
    return [l.rstrip("\n").split("\t") for l in open(f"{work}/{name}") if l.strip()]

# the message on the topic
top, blocks = parse(f"{work}/verdict.txt")
tfam = {b["family"]: b.get("verdict") for b in blocks if b["kind"] == "families"}
tser = {b["series_key"]: b for b in blocks if b["kind"] == "series"}
assert top.get("verdict") == "VERDICT_BLOCKING", ("release on the topic", top.get("verdict"))
want_fam = {"chat-8b": "VALIDATED_WIN", "rank-moe-110b": "PASS", "chat-70b": "WAIVED", "code-34b": "BLOCKING"}
assert tfam == {m + sfx: "VERDICT_" + v for m, v in want_fam.items()}, ("families on the topic", tfam)

# what was stored
ev = tsv("evaluation.tsv")
assert len(ev) == 1 and ev[0][0] == "done" and ev[0][1] == "blocking", ("evaluation", ev)
fam = {r[0]: r for r in tsv("families.tsv")}
assert {f: r[1] for f, r in fam.items()} == {m + sfx: v.lower() for m, v in want_fam.items()}, ("stored families", fam)
S = {}
for m, plat, cfg, metric, verdict, delta, expected, waiver, alert, tested in tsv("series.tsv"):
    assert m.endswith(sfx), ("a series of another replay", m)
    S[(m[: -len(sfx)], plat, cfg, metric)] = dict(verdict=verdict, delta=float(delta) if delta else None,
        expected=float(expected), waiver=waiver, alert=alert, tested=tested == "t")
assert len(S) == len(tser), ("series on the topic and stored", len(tser), len(S))
assert int(top["tests"]) == int(ev[0][2]) == sum(1 for x in S.values() if x["tested"]), "test counts disagree"
def series(model, plat, cfg, metric):
    k = (model, plat, cfg, metric)
    assert k in S, ("missing series", k)
    return S[k]

# 1. the registered win: arrives as registered, the family VALIDATED_WIN
b64 = "decode.B64.s2048.int8"
registered = {"tpot_p50_ms": -4.0, "tpot_p99_ms": -4.0, "goodput_tok_s_chip": 4.17, "mfu": 4.17,
              "hbm_bw_util": 4.17, "cost_per_mtok_usd": -4.0}
for metric, pct in registered.items():
    x = series("chat-8b", "v6e-4", b64, metric)
    assert x["verdict"] == "validated_win" and x["expected"] == pct, (metric, x)
    assert abs(x["delta"] - pct) < 0.8, (metric, x)
win = S[("chat-8b", "v6e-4", b64, "tpot_p50_ms")]

# 2. unregistered 4% faster: investigate, an improvement alert to the queue
inv = series("rank-moe-110b", "v6e-4", b64, "tpot_p50_ms")
assert inv["verdict"] == "investigate" and -4.8 < inv["delta"] < -3.2 and inv["expected"] == 0, inv
for metric in ("goodput_tok_s_chip", "cost_per_mtok_usd"):
    assert series("rank-moe-110b", "v6e-4", b64, metric)["verdict"] == "investigate", metric
alerts = {(a[0], a[1], a[2]) for a in tsv("alerts.tsv")}
key_inv = [a for a in alerts if a[0].startswith("rank-moe-110b" + sfx + "/") and a[0].endswith("/v6e-4/" + b64 + "/tpot_p50_ms")]
assert key_inv and key_inv[0][1:] == ("improvement", "queue"), ("improvement alert", key_inv)
assert inv["alert"], "the investigate series names no alert"

# 3. waivers: the live one passes chat-70b, the expired one covers nothing
waivers = {w[0]: w for w in tsv("waivers.tsv")}
live, expired = "wv-2026-06-17-01" + sfx, "wv-2026-06-02-07" + sfx
assert waivers.get(live, [None, None, "?"])[1:] == ["chat-70b" + sfx, "f"], ("live waiver stored", waivers)
assert waivers.get(expired, [None, None, "?"])[1:] == ["code-34b" + sfx, "t"], ("expired waiver stored", waivers)
for metric in ("tpot_p50_ms", "goodput_tok_s_chip"):
    w = series("chat-70b", "v6e-4", b64, metric)
    assert w["verdict"] == "waived" and w["waiver"] == live and 4.2 < abs(w["delta"]) < 5.8, (metric, w)
    e = series("code-34b", "v6e-4", b64, metric)
    assert e["verdict"] == "blocking" and e["waiver"] == "" and e["alert"] and 4.2 < abs(e["delta"]) < 5.8, (metric, e)
assert int(fam["chat-70b" + sfx][3]) > 0 and int(fam["code-34b" + sfx][3]) > 0, "regressed counts"
assert any(a[0].startswith("code-34b" + sfx + "/") and a[1] == "regression" for a in alerts), "no regression alert for code-34b"
assert not any(a[0].startswith("chat-70b" + sfx + "/") for a in alerts), "a waived family raised an alert"

# 4. the freeze: every chat-8b v5e-8 series FROZEN and untested
frozen = [k for k in S if k[0] == "chat-8b" and k[1] == "v5e-8"]
assert frozen and all(S[k]["verdict"] == "frozen" and not S[k]["tested"] for k in frozen), [(k, S[k]["verdict"]) for k in frozen]

# 5. the series each change touches carry its verdict on every metric the
# step time moves (TTFT is prefill: untouched); everything else is quiet
moved = {"chat-8b": None, "rank-moe-110b": "investigate", "chat-70b": "waived", "code-34b": "blocking"}
bad = []
for k, x in S.items():
    model, plat, cfg, metric = k
    if k in frozen:
        continue
    # quiet: within noise, trend-only, or under-powered (nothing significant
    # from fewer runs than the series' noise needs, §4.5)
    quiet = {"pass", "trend", "under_powered"}
    want = quiet
    if plat == "v6e-4" and cfg == b64 and not metric.startswith("ttft"):
        want = {"validated_win"} if model == "chat-8b" and metric in registered else \
               {moved[model]} if moved[model] else quiet
    if x["verdict"] not in want:
        bad.append((k, x["verdict"], sorted(want)))
assert not bad, ("unexpected verdicts", bad)
c = collections.Counter(x["verdict"] for x in S.values())
print("families: %s" % {f[: -len(sfx)]: r[1] for f, r in fam.items()})
print("series verdicts: %s over %s tests" % (dict(c), top["tests"]))
print("registered win TPOT %+.2f%% (registered %+.1f%%); unregistered %+.2f%%; waived %+.2f%%, expired-waiver %+.2f%%; frozen %d"
      % (win["delta"], win["expected"], inv["delta"], S[("chat-70b", "v6e-4", b64, "tpot_p50_ms")]["delta"],
         S[("code-34b", "v6e-4", b64, "tpot_p50_ms")]["delta"], len(frozen)))
PY
# --- a waiver id is a waiver's name within its release: the same id on the next
# release waives that release too (it was dropped, ON CONFLICT (waiver_id)
# DO NOTHING, and the family stayed BLOCKING), and the same id sent again for
# one release with other content is refused with a dead letter naming it. The
# next RC reuses chat-70b's live waiver id for code-34b, which this RC left
# BLOCKING (chat-70b's waived shift is being accepted by the baseliner by now:
# its series are frozen while they re-baseline)
read -r cbuild ccl brel < <(psqlq -F ' ' -c "SELECT candidate_build_id, candidate_cl, baseline_release
                                            FROM perfwatch.gate_evaluations WHERE release_id = '$rel' AND evaluation = 1")
rel2=xla-rc-again.$ns
wid=wv-2026-06-17-01.$ns
gate_request() { # RELEASE EVALUATION OWNER: a GateRequest for code-34b with waiver $wid
  printf 'release_id: "%s"\nevaluation: %s\ncandidate { build_id: "%s" kind: BUILD_KIND_RC cl: "%s" release_id: "%s" }
baseline_release: "%s"\nfamilies: "code-34b.%s"\nfdr_q: 0.05\nrequested_unix_us: %s\ndeadline_unix_us: %s
waivers { waiver_id: "%s" model: "code-34b.%s" platform: "v6e-4" config: "decode.B64.s2048.int8" owner: "%s"
  approved_by: "code-34b-lead" reason: "the same waiver on the next RC" expires_unix_us: %s }\n' \
    "$1" "$2" "$cbuild" "$ccl" "$1" "$brel" "$ns" "$(date +%s)000000" "$(date +%s)000000" "$wid" "$ns" "$3" \
    "$(( $(date +%s) + 86400 ))000000" |
    protoc --encode=perfwatch.v1.GateRequest -I proto proto/perfwatch/v1/gate.proto >"$work/request-$2.bin" ||
    fail "encoding the request for $1"
  # a file argument is one message (stdin would be split at newline bytes)
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.gate.requests.v1 -k "$1" "$work/request-$2.bin" ||
    fail "publishing the request for $1"
}
gate_request "$rel2" 1 code-34b-serving
gate_verdict "$rel2" "$gate_pid" "$work/verdict2.txt" 60
w2=$(psqlq -c "SELECT string_agg(DISTINCT r.verdict || ' ' || r.waiver_id, ',') FROM perfwatch.gate_series_results r
                JOIN perfwatch.series s USING (series_id)
               WHERE r.release_id = '$rel2' AND s.platform = 'v6e-4' AND s.config = 'decode.B64.s2048.int8'
                 AND s.metric = 'tpot_p50_ms'")
[ "$w2" = "waived $wid" ] || fail "release $rel2 with waiver $wid (an id $rel used too): code-34b decode B64 TPOT is \"$w2\", want waived by it"
echo "the waiver id $wid of $rel, reused on $rel2, waives $rel2's code-34b: $w2"
gate_request "$rel2" 2 somebody-else
dl=""
for _ in $(seq 150); do
  dl=$(psqlq -c "SELECT reason || ': ' || detail FROM perfwatch.dead_letters
                  WHERE service = 'gate' AND convert_from(original_key, 'UTF8') = '$rel2'")
  [ -z "$dl" ] || break
  sleep 0.2
done
[[ $dl == "conflict: "*"waiver \"$wid\" is already stored for release \"$rel2\" with other content"* ]] ||
  fail "the same waiver id with another owner for $rel2: dead letter \"$dl\""
echo "the same id with another owner for $rel2 is dead-lettered: $dl"
# the validated win, as the compiler team receives it from the pager
deadline=$((SECONDS + 90))
until [ "$(psqlq -c "SELECT count(*) FROM perfwatch.pager_notices n JOIN perfwatch.pager_incidents i USING (incident_id)
                      WHERE i.pager_group = 'gr-pager-$ns' AND n.kind = 'validated_win'
                        AND n.webhook_delivered_at IS NOT NULL")" -ge 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "no validated_win notice delivered to the webhook within 90 s (pager log: $work/pager.log)"
  sleep 0.5
done
sleep 2 # a second notice of the win, or a page, would be posted within the pager's tick
python3 - "$work/hook" "$ns" <<'PY' || fail "the validated win's message to the compiler team (see $work/hook)"
import glob, json, sys
d, ns = sys.argv[1], sys.argv[2]
posts = [json.load(open(f)) for f in sorted(glob.glob(d + "/*.json"))]
wins = [p for p in posts if p.get("kind") == "validated_win"]
assert len(wins) == 1, f"want one validated_win notice, got {len(wins)}: {[p.get('summary') for p in wins]}"
w = wins[0]
assert w["route"] == "xla-compiler" and w["owner"] == "compiler" and w["severity"] == "info", w
assert "chat-8b." + ns in w["summary"] and "page_id" not in w, w
pages = [p for p in posts if "page_id" in p and "chat-8b." + ns in p.get("summary", "")]
assert not pages, f"the win was paged: {[p['summary'] for p in pages]}"
print("the compiler team's message: [%s to %s, owner %s] %s" % (w["severity"], w["route"], w["owner"], w["summary"]))
PY
echo "test_gate_registered: PASS ($((SECONDS - t_start)) s)"
