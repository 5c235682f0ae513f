#!/usr/bin/env bash
# test_pager.sh: the pager through the real stack. pw-sim replays the worked
# example (namespaced) into the ingester; the baseliner and the gate raise
# the RC's alerts, the bisector and `pw-sim answer` find the culprit, the
# attributor attributes; pw-pager consumes all five topics. Exactly ONE page
# for the event, whose payload matches artifact 3 (series, delta, the
# culprit cl/7841917 once the bisection arrived, owner hint compiler);
# Alertmanager (Debian's prometheus-alertmanager on a free port) shows
# one group for it. The pager is killed -9 between grouping and delivery
# (the page is stored, Alertmanager and the webhook are not up yet):
# restarted, it delivers the page once — not 0 and not 2 times — and a
# restart after the culprit joins pages nothing new. Headless Chromium opens
# the triage link and presses "false regression" in its form (the verdict is
# the form's POST: test_pager_triage.sh holds the page's safety). A table of
# bad inputs on the five topics is dead-lettered with its reason.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc python3 curl prometheus-alertmanager chromium
bins=("$PW_BUILD/services/ingester/pw-ingester" "$PW_BUILD/services/baseliner/pw-baseliner"
      "$PW_BUILD/services/gate/pw-gate" "$PW_BUILD/services/bisector/pw-bisector"
      "$PW_BUILD/services/attributor/pw-attributor" "$PW_BUILD/services/pager/pw-pager"
      "$PW_BUILD/tools/simulator/pw-sim" "$PW_BUILD/tools/perfwatch")
need_bins "${bins[@]}"
pw=${bins[7]}
sim=${bins[6]}
scn=tools/simulator/scenarios/worked-example.scn
service_harness test_pager pg
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# free ports, not fixed ones: a second stack's test_pager (another checkout's tests, a CI run
# beside a developer's) must not find its Alertmanager answering for it
am_port=${PW_TEST_PAGER_AM_PORT:-$(free_port)}
am=http://127.0.0.1:$am_port
hook_port=$(free_port)
pager_port=$(free_port) # fixed across restarts: the stored triage links name it
start() { # NAME: the pager on its fixed port (the stored triage links name it)
  local port=0
  [ "$1" != pager ] || port=$pager_port
  service_start "$1" PW_HTTP_PORT=$port PW_GATE_POLL_INTERVAL=200ms PW_GATE_MIN_WAIT=45s \
    PW_BISECTOR_TICK=200ms PW_PAGER_TICK=200ms PW_PAGER_TRIAGE_KEY="test-pager-key-$ns" \
    PW_PAGER_ALERTMANAGER_URL="$am" PW_PAGER_WEBHOOK_URL="http://127.0.0.1:$hook_port/hook" \
    PW_PAGER_DELIVER_BACKOFF=200ms PW_PAGER_DELIVER_BACKOFF_MAX=1s PW_PAGER_BUDGET_PER_WEEK=1000
}
joined() { service_joined "$1"; }
start_am() {
  prometheus-alertmanager --config.file=deploy/dev/alertmanager.yml --storage.path="$work/am" \
    --web.listen-address=127.0.0.1:$am_port --cluster.listen-address= \
    --log.level=warn >"$work/am.log" 2>&1 &
  pid[am]=$!
  for _ in $(seq 100); do curl -fsS "$am/-/ready" >/dev/null 2>&1 && return 0; sleep 0.1; done
  fail "alertmanager did not start"
}
start_hook() { # a generic webhook receiver: one line per POST (Idempotency-Key, page_id, version)
  python3 - "$hook_port" "$work/hook.txt" >"$work/hook.log" 2>&1 <<'PY' &
import http.server, json, sys
port, out = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with open(out, "a") as f:
            f.write("%s %s %d %s\n" % (self.headers.get("Idempotency-Key"), body["page_id"], body["version"],
                                      body["payload"]["bisection"]["culprit"] if body["payload"].get("bisection") else "-"))
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
  pid[hook]=$!
}
mine="p.payload->'series'->>'model' LIKE '%.$ns'"

# Every replay of the scenario has the same CLs: on a reused stack an earlier run's open incident
# (cl/7841885..cl/7841923, culprit cl/7841917) would be this event too. Close them first.
q "UPDATE perfwatch.pager_incidents SET open = false WHERE open" >/dev/null
q "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
     ('chat-8b.$ns', 0.078, 'top', 'it'), ('rank-moe-110b.$ns', 0.05, 'top', 'it')
   ON CONFLICT (model) DO NOTHING" >/dev/null
"$pw" group to-end "$ns-ingester" perf.runs.v1 >/dev/null &&
  "$pw" group to-end "$ns-baseliner" perf.points.v1 perf.fleet-changes.v1 >/dev/null &&
  "$pw" group to-end "$ns-gate" perf.gate.requests.v1 >/dev/null &&
  "$pw" group to-end "$ns-bisector" perf.alerts.v1 >/dev/null &&
  "$pw" group to-end "$ns-attributor" perf.alerts.v1 perf.bisections.v1 >/dev/null &&
  "$pw" group to-end "$ns-pager" perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 \
    perf.attributions.v1 perf.rollouts.v1 >/dev/null &&
  "$pw" group to-end "$ns-answer" perf.bisect.jobs.v1 >/dev/null ||
  fail "placing the groups at the topics' ends"
for s in ingester baseliner gate bisector attributor pager; do start $s; done
for s in ingester baseliner gate bisector attributor pager; do joined $s; done
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-answer" "$sim" answer "$scn" --namespace "$ns" >"$work/answer.log" 2>&1 &
pid[answer]=$!

# --- the replay; the page is raised, Alertmanager and the webhook are down ----------------
"$sim" replay "$scn" --namespace "$ns" --run-prefix "$ns-" >"$work/sim.json" 2>"$work/sim.log" ||
  fail "pw-sim replay failed"
deadline=$((SECONDS + 240))
until [ "$(q "SELECT count(*) FROM perfwatch.pages p WHERE $mine")" -ge 1 ]; do
  kill -0 "${pid[pager]}" 2>/dev/null || fail "pw-pager exited"
  [ $SECONDS -lt $deadline ] || fail "no page for the chat-8b.$ns event within 240 s"
  sleep 0.5
done
page=$(q "SELECT page_id FROM perfwatch.pages p WHERE $mine ORDER BY created_at LIMIT 1")
t_runs=$(q "SELECT extract(epoch FROM max(ingested_at)) FROM perfwatch.runs WHERE build_kind = 'rc' AND run_id LIKE '$ns-%'")
t_page=$(q "SELECT extract(epoch FROM created_at) FROM perfwatch.pages WHERE page_id = '$page'")
echo "test_pager: page $page raised $(python3 -c "print(round($t_page - $t_runs, 2))") s after the last candidate run was stored"
deadline=$((SECONDS + 30))
until [ "$(q "SELECT count(*) FROM perfwatch.pager_deliveries WHERE page_id = '$page' AND NOT ok")" -ge 2 ]; do
  [ $SECONDS -lt $deadline ] || fail "no failed delivery attempts while the receivers are down"
  sleep 0.2
done
kill -9 "${pid[pager]}"
wait "${pid[pager]}" 2>/dev/null || true
[ "$(q "SELECT delivery_status FROM perfwatch.pages WHERE page_id = '$page'")" = pending ] ||
  fail "the page is not pending at the kill"
echo "test_pager: killed -9 between grouping and delivery ($(q "SELECT count(*) FROM perfwatch.pager_deliveries WHERE page_id = '$page'") failed attempts recorded)"
start_am
start_hook
start pager
deadline=$((SECONDS + 60))
until [ "$(q "SELECT delivery_status FROM perfwatch.pages WHERE page_id = '$page'")" = delivered ]; do
  kill -0 "${pid[pager]}" 2>/dev/null || fail "pw-pager exited after the restart"
  [ $SECONDS -lt $deadline ] || fail "the page was not delivered 60 s after the restart"
  sleep 0.2
done
echo "test_pager: delivered after the restart: $(q "SELECT delivery_attempts || ' attempts, last ok ' || (SELECT max(attempted_at)::text FROM perfwatch.pager_deliveries WHERE page_id = '$page' AND ok) FROM perfwatch.pages WHERE page_id = '$page'")"

# --- the culprit joins the open incident --------------------------------------------------
deadline=$((SECONDS + 240))
until [ "$(q "SELECT p.payload->'bisection'->>'culprit' FROM perfwatch.pages p WHERE page_id = '$page'")" = cl/7841917 ]; do
  [ $SECONDS -lt $deadline ] || fail "the page has no culprit 240 s after delivery (bisection: $(q "SELECT status || ' ' || culprit FROM perfwatch.bisections WHERE bisection_id LIKE 'bs-chat-8b.$ns-%'"))"
  sleep 1
done
deadline=$((SECONDS + 120))
until [ "$(q "SELECT p.payload->>'owner_hint' FROM perfwatch.pages p WHERE page_id = '$page'")" = compiler ] &&
      [ "$(q "SELECT delivery_status FROM perfwatch.pages WHERE page_id = '$page'")" = delivered ]; do
  [ $SECONDS -lt $deadline ] || fail "owner hint $(q "SELECT p.payload->>'owner_hint' FROM perfwatch.pages p WHERE page_id = '$page'"), want compiler"
  sleep 0.5
done
# a restart with the culprit known: the open incident is rebuilt, nothing new pages
kill -TERM "${pid[pager]}"; wait "${pid[pager]}" 2>/dev/null || true
start pager
joined pager
grep -q 'open incidents rebuilt' "$work/pager.log" || fail "the pager did not rebuild its incidents"
sleep 3
"$pw" group lag "$ns-pager" --wait 60 perf.alerts.v1 perf.bisections.v1 perf.attributions.v1 >/dev/null ||
  fail "the pager did not catch up"
n=$(q "SELECT count(*) FROM perfwatch.pages p WHERE $mine")
[ "$n" = 1 ] || fail "$n pages for the event, want exactly one: $(q "SELECT string_agg(page_id || ' ' || summary, '; ') FROM perfwatch.pages p WHERE $mine")"
q "SELECT payload FROM perfwatch.pages WHERE page_id = '$page'" >"$work/payload.json"
python3 - "$work/payload.json" "$ns" <<'PY' || fail "the page's payload is not artifact 3 (see $work/payload.json)"
import json, sys
d, ns = json.load(open(sys.argv[1])), sys.argv[2]
s = d["series"]
assert (s["model"], s["platform"], s["config"], s["metric"]) == ("chat-8b." + ns, "v6e-4", "decode.B64.s2048.int8", "tpot_p50_ms"), s
assert abs(d["baseline"]["median"] - 3.90) <= 0.03, d["baseline"]
assert abs(d["observed"]["median"] - 4.22) <= 0.04 and d["observed"]["n"] == 5, d["observed"]
assert abs(d["delta"]["pct"] - 8.2) <= 0.5, d["delta"]
assert d["delta"]["z_robust"] > 5 and d["delta"]["fdr_q"] < 0.05, d["delta"]
assert d["effect_gate"]["passed_min_effect"] is True, d["effect_gate"]
assert d["verdict"] == "BLOCKING" and d["page"] == "ml-perf-triage", (d["verdict"], d["page"])
assert d["bisection"]["culprit"] == "cl/7841917" and d["bisection"]["status"] == "done", d["bisection"]
assert d["bisection"]["verified_adjacent_clean"] is True, d["bisection"]
assert d["owner_hint"] == "compiler", d["owner_hint"]
corr = d["scope"]["correlated_series"]
assert any(c.startswith("chat-8b.%s/v6e-4/decode.B8" % ns) and ": +7." in c for c in corr), corr
assert any(c.startswith("rank-moe-110b.%s/" % ns) and ": +3." in c for c in corr), corr
assert not any(c.count("/") > 2 for c in (x.split(":")[0] for x in corr)), ("a metric's line in the scope", corr)
print("test_pager: payload: %s %+.1f%% %s, culprit %s, owner %s, correlated %s" % (
    s["config"], d["delta"]["pct"], d["verdict"], d["bisection"]["culprit"], d["owner_hint"], corr))
PY
summary=$(q "SELECT summary FROM perfwatch.pages WHERE page_id = '$page'")
# artifact 3's +8.2%, within the simulator's noise (the payload check above holds it to ±0.5)
[[ $summary =~ ^chat-8b\.$ns\ v6e-4\ TPOT\ \+8\.[0-9]%\ BLOCKING,\ culprit\ cl/7841917$ ]] || fail "summary \"$summary\""
echo "test_pager: $summary"

# --- delivered once: Alertmanager one group, the webhook each version once ------------------
sleep 2
python3 - "$am" "$page" <<'PY' || fail "alertmanager does not show one group with one alert for the page"
import json, sys, urllib.request
am, page = sys.argv[1], sys.argv[2]
groups = json.load(urllib.request.urlopen(am + "/api/v2/alerts/groups"))
mine = [g for g in groups if any(a["labels"].get("page_id") == page for a in g["alerts"])]
assert len(mine) == 1, groups
alerts = [a for a in mine[0]["alerts"] if a["labels"].get("page_id") == page]
assert len(alerts) == 1 and alerts[0]["status"]["state"] == "active", alerts
assert "culprit cl/7841917" in alerts[0]["annotations"]["summary"], alerts[0]["annotations"]
print("test_pager: alertmanager: one group (incident %s), one active alert: %s" % (
    mine[0]["labels"]["incident"], alerts[0]["annotations"]["summary"]))
PY
[ -s "$work/hook.txt" ] || fail "the webhook received nothing"
# (a reused stack may hold other tests' pages, which this pager delivers too: only ours count)
grep -F " $page " "$work/hook.txt" >"$work/hook-mine.txt" || fail "the webhook never received $page"
cat "$work/hook-mine.txt"
dups=$(cut -d' ' -f1 "$work/hook-mine.txt" | sort | uniq -d | wc -l)
[ "$dups" = 0 ] || fail "the webhook received a page version twice"
# the tick posts a page's newest version: versions that came and went between ticks are never sent;
# the first post after the restart is the page's first delivery
first=$(q "SELECT min(version) FROM perfwatch.pager_deliveries WHERE page_id = '$page' AND target = 'webhook' AND ok")
[ "$(grep -c " $page $first " "$work/hook-mine.txt")" = 1 ] || fail "the page's first delivery (v$first) did not arrive exactly once"
[ "$(q "SELECT count(*) FROM perfwatch.pager_deliveries WHERE page_id = '$page' AND target = 'webhook' AND ok")" = \
  "$(wc -l <"$work/hook-mine.txt")" ] || fail "the webhook received more or fewer posts than the pager recorded"
[ "$(grep -F "$ns" "$work/hook.txt" | cut -d' ' -f2 | sort -u)" = "$page" ] || fail "the webhook received another page of this event"
echo "test_pager: webhook: $(wc -l <"$work/hook-mine.txt") versions of $page, each once"
n=$(q "SELECT count(*) FROM perfwatch.pager_decisions d JOIN perfwatch.pages p USING (incident_id) WHERE $mine")
echo "test_pager: $n decisions recorded for the incident; incidents for the namespace: $(q "SELECT count(*) || ' (' || string_agg(action, ',') || ')' FROM perfwatch.pager_incidents WHERE family LIKE '%.$ns'")"

# --- the triage page in headless Chromium -------------------------------------------------------
url=$(q "SELECT triage_url FROM perfwatch.pages WHERE page_id = '$page'")
vlog() { q "SELECT count(*) FROM perfwatch.triage_verdict_log WHERE page_id = '$page'"; }
python3 tests/integration/cdp_click.py "$url" --expect-id payload --expect-id plot --expect-id opdiff \
  --expect-id bisectlog --expect-id btn-true --click btn-false --out "$work/click.txt" ||
  fail "chromium could not open the triage page and click \"false regression\""
[ "$(head -1 "$work/click.txt")" = 200 ] || fail "the verdict page answered $(head -1 "$work/click.txt")"
grep -q "recorded: false regression" "$work/click.txt" || fail "the verdict page does not say it recorded the verdict"
grep -q "culprit = cl/7841917" "$work/click.txt" || fail "the triage page has no bisection log naming the culprit"
grep -q "fusion.1423" "$work/click.txt" || fail "the triage page has no op diff"
[ "$(q "SELECT outcome FROM perfwatch.triage_verdicts WHERE page_id = '$page'")" = false_regression ] ||
  fail "no false_regression verdict in PostgreSQL"
[ "$(vlog)" = 1 ] || fail "$(vlog) verdicts logged, want 1"
deadline=$((SECONDS + 30))
until kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.triage.v1 -o beginning -e -q -f '%k\n' 2>/dev/null | grep -xF "$page" >/dev/null; do
  [ $SECONDS -lt $deadline ] || fail "no TriageVerdict for $page on perf.triage.v1"
  sleep 0.5
done
echo "test_pager: chromium clicked \"false regression\": verdict in PostgreSQL and on perf.triage.v1"
# a tampered link and an expired (correctly signed) one: 403, nothing recorded
exp_sig=$(python3 -c 'import hmac, hashlib, sys, time
e = int(time.time()) - 60
print(e, hmac.new(sys.argv[1].encode(), ("perfwatch-triage\n%s\nfalse\n%d" % (sys.argv[2], e)).encode(), hashlib.sha256).hexdigest())' \
  "test-pager-key-$ns" "$page")
base=${url%%/triage*}
for bad in "tampered ${url%?}$( [ "${url: -1}" = 0 ] && echo 1 || echo 0)" \
           "expired $base/triage?page=$page&action=false&exp=${exp_sig% *}&sig=${exp_sig#* }"; do
  read -r what link <<<"$bad"
  python3 tests/integration/cdp_click.py "$link" --expect-id refused --out "$work/$what.txt" ||
    fail "chromium: the $what link did not show the refusal page"
  [ "$(head -1 "$work/$what.txt")" = 403 ] || fail "the $what link answered $(head -1 "$work/$what.txt"), want 403"
  grep -q "$( [ $what = tampered ] && echo "signature does not match" || echo "has expired")" "$work/$what.txt" ||
    fail "the $what link's page does not say why"
  [ "$(vlog)" = 1 ] || fail "the $what link recorded a verdict"
  echo "test_pager: $what link refused (403): $(grep 'triage link' "$work/$what.txt" | grep -v refused | head -1)"
done
# the latest verdict wins, each is recorded
python3 tests/integration/cdp_click.py "$url" --click btn-true --out "$work/click2.txt" || fail "clicking \"true regression\""
[ "$(q "SELECT outcome FROM perfwatch.triage_verdicts WHERE page_id = '$page'")" = true_regression ] ||
  fail "the later verdict did not win"
[ "$(vlog)" = 2 ] || fail "$(vlog) verdicts logged, want 2"
curl -fsS "http://127.0.0.1:$pager_port/metrics" >"$work/metrics.txt" || fail "no /metrics"
grep -q '^perfwatch_pager_triage_verdicts_total{outcome="false_regression"} 1' "$work/metrics.txt" ||
  fail "perfwatch_pager_triage_verdicts_total{outcome=\"false_regression\"} is not 1"
echo "test_pager: the later \"true regression\" won; both verdicts logged"

# --- bad input on the five topics --------------------------------------------------------------
# the bisector and the attributor, which also consume perf.alerts.v1 / perf.bisections.v1 (each
# records its own dead letters: test_dead_letters.sh), and the gate are stopped: the pager alone
for s in bisector attributor gate; do kill -TERM "${pid[$s]}"; wait "${pid[$s]}" 2>/dev/null || true; unset "pid[$s]"; done
enc() { protoc --encode="perfwatch.v1.$1" -I proto "proto/perfwatch/v1/$2"; }
key="$ns-bad"
printf '\n\x05abc' >"$work/trunc.bin"            # a length-delimited field cut short
printf '\x0a\x03\xff\xfe\x41' >"$work/utf8.bin"   # field 1 (every message's id) with invalid UTF-8
printf 'kind: ALERT_KIND_REGRESSION source: ALERT_SOURCE_GATE' | enc Alert alert.proto >"$work/alert-noid.bin"
printf 'verdict: VERDICT_BLOCKING evaluation: 1' | enc GateVerdict gate.proto >"$work/gate-noid.bin"
printf 'series_key: "k" day: "2026-06-17"' | enc Changepoint changepoint.proto >"$work/cp-noid.bin"
printf 'alert_id: "a" culprit: "cl/5" status: BISECTION_STATUS_DONE' | enc Bisection bisect.proto >"$work/bs-noid.bin"
printf 'series_key: "k" owner_hint: "compiler"' | enc Attribution attribution.proto >"$work/at-noid.bin"
table="perf.alerts.v1 trunc decode_failed
perf.alerts.v1 utf8 invalid_value
perf.alerts.v1 alert-noid missing_field
perf.gate.verdicts.v1 trunc decode_failed
perf.gate.verdicts.v1 utf8 invalid_value
perf.gate.verdicts.v1 gate-noid missing_field
perf.changepoints.v1 trunc decode_failed
perf.changepoints.v1 utf8 invalid_value
perf.changepoints.v1 cp-noid missing_field
perf.bisections.v1 trunc decode_failed
perf.bisections.v1 utf8 invalid_value
perf.bisections.v1 bs-noid missing_field
perf.attributions.v1 trunc decode_failed
perf.attributions.v1 utf8 invalid_value
perf.attributions.v1 at-noid missing_field"
while read -r topic f _; do
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t "$topic" -k "$key-$f" "$work/$f.bin" || fail "producing $f"
done <<<"$table"
while read -r topic f reason; do
  deadline=$((SECONDS + 60))
  until got=$(q "SELECT reason || ' ' || detail FROM perfwatch.dead_letters WHERE service = 'pager'
                 AND source_topic = '$topic' AND original_key = convert_to('$key-$f', 'UTF8')") && [ -n "$got" ]; do
    [ $SECONDS -lt $deadline ] || fail "$f on $topic was not dead-lettered"
    sleep 0.3
  done
  [ "${got%% *}" = "$reason" ] || fail "$f on $topic: dead-lettered as \"$got\", want $reason"
  echo "test_pager: $topic $f -> $got"
done <<<"$table"
kill -0 "${pid[pager]}" 2>/dev/null || fail "pw-pager exited on bad input"
[ "$(q "SELECT count(*) FROM perfwatch.pages p WHERE $mine")" = 1 ] || fail "bad input changed the pages"
echo "test_pager: PASS"
