#!/usr/bin/env bash
# test_canary_page.sh: the production canary's ROLLBACK paged through the
# pager (docs/pager.md, "Canary rollbacks"; seed §8).
#
# pw-sim canary publishes 12 h of live windows (chat-8b on TPU with a +1% TPOT
# regression injected, summarize-13b and chat-70b-gpu without) to pw-canary,
# whose decisions go on perf.rollouts.v1 to TWO pw-pager replicas of one
# deployment (one consumer group), first with Alertmanager and the webhook
# unreachable. One replica is killed -9 as soon as the canary recorded the
# rollback and started again; once the page is stored and its delivery has
# failed, both are killed -9 and started delivering to a real Alertmanager
# (its triage receiver pointed at this test's webhook) and to the generic
# webhook; then the decisions are published a second time (a redelivery).
# Then: exactly one page, for chat-8b (critical, ml-perf-triage,
# owner compiler, the canary's metric, effect, interval, windows and N−1
# artifact in its payload, equal to what pw-canary stored), none for the
# promoted families; one webhook post; one active alert in Alertmanager and
# one notification to on-call. Headless Chromium opens the page's triage
# link: the confidence-sequence plot is there with one estimate and one
# interval per tested window up to the decision (windows − pilot), its
# recomputation ends on the stored decision, and a screenshot of it is kept
# in the work folder. Triaged true, the page counts in the report card as a
# regression the gate missed. Last, bad rollout messages are dead-lettered with their
# reason.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc python3 curl prometheus-alertmanager chromium
bins=("$PW_BUILD/services/canary/pw-canary" "$PW_BUILD/services/pager/pw-pager" "$PW_BUILD/tools/simulator/pw-sim"
  "$PW_BUILD/tools/perfwatch")
need_bins "${bins[@]}"
sim=${bins[2]}
pw=${bins[3]}
service_harness test_canary_page cp
rollout="$ns"
key="canary-page-key-$ns"

hook_start
am_start "s#http://127.0.0.1:1/unused#http://127.0.0.1:$hook_port/alertmanager#"

"$pw" group to-end "$ns-canary" perf.canary.v1 >/dev/null || fail "placing the canary's group"
"$pw" group to-end "$ns-pager" perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 \
  perf.attributions.v1 perf.rollouts.v1 >/dev/null || fail "placing the pager's group"
service_start canary
# pager N: replica N of the deployment "$ns-pager", HTTP on its own port (replica 1 serves the links),
# delivering to $am_url and $hook_url
ports=("" "$(free_port)" "$(free_port)")
pager() {
  PW_HTTP_PORT=${ports[$1]} PW_KAFKA_GROUP_ID="$ns-pager" PW_PAGER_TRIAGE_KEY="$key" \
    PW_PAGER_TRIAGE_BASE_URL="http://127.0.0.1:${ports[1]}" PW_PAGER_ALERTMANAGER_URL="$am_url" \
    PW_PAGER_WEBHOOK_URL="$hook_url" PW_PAGER_DELIVER_BACKOFF=200ms PW_PAGER_DELIVER_BACKOFF_MAX=1s \
    "${bins[1]}" >>"$work/pager$1.log" 2>&1 &
  pid[pager$1]=$!
}
# first Alertmanager and the webhook are unreachable (nobody listens on these ports): a page is
# stored and cannot be delivered
am_url="http://127.0.0.1:$(free_port)"
hook_url="http://127.0.0.1:$(free_port)/hook"
pager 1
pager 2
service_joined canary
pager_joined "$work/pager1.log" "${pid[pager1]}"
pager_joined "$work/pager2.log" "${pid[pager2]}"

"$sim" canary --rollout "$rollout" --hours 12 >"$work/sim.json" 2>"$work/sim.log" || fail "pw-sim canary failed"
echo "test_canary_page: published $(cat "$work/sim.json")"

# replica 1 killed -9 as soon as the canary recorded the rollback (its decision on its way to the pagers)
deadline=$((SECONDS + 180))
until [ "$(q "SELECT count(*) FROM perfwatch.canary_families WHERE rollout_id = '$rollout' AND decision = 'ROLLBACK'")" = 1 ]; do
  kill -0 "${pid[canary]}" 2>/dev/null || fail "pw-canary exited"
  [ $SECONDS -lt $deadline ] || fail "the canary recorded no ROLLBACK within 180 s"
  sleep 0.05
done
kill -9 "${pid[pager1]}"
wait "${pid[pager1]}" 2>/dev/null || true
echo "test_canary_page: pager replica 1 killed -9 as the rollback was recorded; pages of the rollout so far:" \
  "$(q "SELECT count(*) FROM perfwatch.pages WHERE incident_id LIKE 'inc-rollback-$rollout-%'")"
pager 1

# the page stored, its delivery failing: both replicas killed -9, then started delivering for real
page_where="incident_id LIKE 'inc-rollback-$rollout-%'"
deadline=$((SECONDS + 120))
until [ "$(q "SELECT count(*) FROM perfwatch.pager_deliveries d JOIN perfwatch.pages p USING (page_id)
              WHERE $page_where AND NOT d.ok")" -ge 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "no failed delivery of a stored page within 120 s"
  sleep 0.2
done
for r in 1 2; do kill -9 "${pid[pager$r]}"; wait "${pid[pager$r]}" 2>/dev/null || true; done
echo "test_canary_page: both pager replicas killed -9 with the page stored and undelivered:" \
  "$(q "SELECT string_agg(page_id || ' ' || delivery_status || ' v' || version, ', ') FROM perfwatch.pages WHERE $page_where")"
am_url=$am
hook_url="http://127.0.0.1:$hook_port/hook"
pager 1
pager 2

settled() { q "SELECT count(*) FROM perfwatch.canary_families WHERE rollout_id = '$rollout' AND final AND windows = 432"; }
deadline=$((SECONDS + 180))
until [ "$(settled)" = 3 ]; do
  kill -0 "${pid[canary]}" 2>/dev/null || fail "pw-canary exited"
  [ $SECONDS -lt $deadline ] || fail "$(settled) of 3 families settled within 180 s"
  sleep 0.3
done
deadline=$((SECONDS + 60))
until [ "$(q "SELECT count(*) FROM perfwatch.outbox WHERE service = 'canary' AND published_at IS NULL")" = 0 ]; do
  [ $SECONDS -lt $deadline ] || fail "the canary's decisions left unpublished in its outbox"
  sleep 0.3
done
"$pw" group lag "$ns-pager" --wait 90 perf.rollouts.v1 >/dev/null || fail "the pagers did not take the decisions within 90 s"

deadline=$((SECONDS + 60))
until [ "$(q "SELECT count(*) FROM perfwatch.pages WHERE $page_where AND am_version = version AND webhook_version = version")" -ge 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "no delivered page within 60 s: $(q "SELECT string_agg(page_id || ' ' || delivery_status, ', ') FROM perfwatch.pages WHERE $page_where")"
  sleep 0.3
done

# --- the redelivery: every decision of the rollout published again ---------------------------------
kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.rollouts.v1 -o beginning -e -q -f '%k\n' 2>/dev/null |
  grep -c "^$rollout/" >"$work/ndecisions" || true
[ "$(cat "$work/ndecisions")" = 3 ] || fail "perf.rollouts.v1 holds $(cat "$work/ndecisions") decisions of the rollout, want 3"
kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.rollouts.v1 -o beginning -e -q -f '%k %p %o\n' 2>/dev/null |
  awk -v r="$rollout/" 'index($1, r) == 1' >"$work/decisions.txt"
while read -r k p o; do
  kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.rollouts.v1 -p "$p" -o "$o" -c 1 -e -q -f '%s' >"$work/again.bin" 2>/dev/null ||
    fail "reading $k"
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.rollouts.v1 -k "$k" "$work/again.bin" || fail "publishing $k again"
done <"$work/decisions.txt"
"$pw" group lag "$ns-pager" --wait 90 perf.rollouts.v1 >/dev/null || fail "the redelivered decisions were not taken within 90 s"
sleep 4 # a tick or two, and Alertmanager's group_wait: time for anything that should not happen

# --- exactly one page, the rolled-back family's ----------------------------------------------------
[ "$(q "SELECT count(*) FROM perfwatch.pages WHERE $page_where")" = 1 ] ||
  fail "pages of the rollout: $(q "SELECT string_agg(page_id, ', ') FROM perfwatch.pages WHERE $page_where")"
read -r page sev route owner version <<<"$(q "SELECT p.page_id || ' ' || p.severity || ' ' || p.route || ' ' || i.owner || ' ' || p.version
  FROM perfwatch.pages p JOIN perfwatch.pager_incidents i USING (incident_id) WHERE $page_where" | tr '|' ' ')"
[ "$page" = "pg-rollback-$rollout-chat-8b" ] || fail "the page is $page, want chat-8b's"
[ "$sev $route $owner $version" = "critical ml-perf-triage compiler 1" ] || fail "page $page: $sev $route $owner v$version"
[ "$(q "SELECT count(*) FROM perfwatch.pager_decisions WHERE $page_where")" = 1 ] || fail "the rollback was decided more than once"
echo "test_canary_page: one page, $page: $(q "SELECT summary FROM perfwatch.pages WHERE page_id = '$page'")"

q "SELECT payload FROM perfwatch.pages WHERE page_id = '$page'" >"$work/payload.json"
q "SELECT json_build_object('metric', metric, 'effect_pct', effect_pct, 'lo_pct', lo_pct, 'hi_pct', hi_pct,
     'windows', decision_windows, 'artifact', rollback_artifact, 'pilot', pilot_windows)
   FROM perfwatch.canary_families WHERE rollout_id = '$rollout' AND family = 'chat-8b'" >"$work/stored.json"
python3 - "$work/hook" "$am" "$page" "$work/payload.json" "$work/stored.json" "$rollout" <<'PY'
import json, os, sys, urllib.request
hook, am, page, payload, stored, rollout = sys.argv[1:]
p, s = json.load(open(payload)), json.load(open(stored))
c = p["canary"]
assert c["decision"] == "ROLLBACK" and c["family"] == "chat-8b" and c["rollout_id"] == rollout, c
assert c["metric"] == s["metric"] == "tpot", (c, s)
for k in ("effect_pct", "lo_pct", "hi_pct"):
    assert abs(c[k] - s[k]) < 1e-5 * max(1, abs(s[k])), (k, c[k], s[k])  # the payload keeps 6 digits
assert c["lo_pct"] <= c["effect_pct"] <= c["hi_pct"] and c["lo_pct"] > 0.5, c
assert c["windows"] == s["windows"] and c["rollback_artifact"] == s["artifact"] == "serving/chat-8b/xla-rc-2026-06-15.aot", (c, s)
assert p["severity"] == "critical" and p["page"] == "ml-perf-triage" and p["owner"] == "compiler", p
posts = [json.load(open(os.path.join(hook, f))) for f in sorted(os.listdir(hook))]
posts = [x for x in posts if rollout in json.dumps(x["body"])]
hooked = [x for x in posts if x["path"] == "/hook"]
assert len(hooked) == 1 and hooked[0]["key"] == page + "/v1", [(x["key"]) for x in hooked]
oncall = [x for x in posts if x["path"] == "/alertmanager"]
assert len(oncall) == 1, f"on-call notified {len(oncall)} times"
firing = [a for a in oncall[0]["body"]["alerts"] if a["status"] == "firing"]
assert [a["labels"]["page_id"] for a in firing] == [page], oncall[0]["body"]
alerts = json.load(urllib.request.urlopen(am + "/api/v2/alerts?filter=alertname%3D%22PerfwatchIncident%22"))
mine = [a for a in alerts if rollout in a["labels"].get("incident", "")]
assert len(mine) == 1 and mine[0]["labels"]["page_id"] == page and mine[0]["labels"]["severity"] == "critical", \
    [a["labels"] for a in mine]
assert mine[0]["labels"]["family"] == "chat-8b" and mine[0]["status"]["state"] == "active", mine[0]
print("test_canary_page: payload %s %+.3f%% [%+.3f%%, %+.3f%%] after %d windows, to %s (as pw-canary stored it);"
      " 1 webhook post, 1 notification to on-call, 1 active alert" %
      (c["metric"], c["effect_pct"], c["lo_pct"], c["hi_pct"], c["windows"], c["rollback_artifact"]))
PY

# --- the report card: a true rollback is a regression the gate missed, not one it caught --------
card() { q "SELECT caught || ' ' || missed FROM perfwatch.report_card_monthly WHERE month = date_trunc('month', now())"; }
read -r caught0 missed0 <<<"$(card)"
q "INSERT INTO perfwatch.triage_verdicts (page_id, outcome, routed_to, triager, decided_at)
   VALUES ('$page', 'true_regression', 'compiler', 'test', now())" >/dev/null
read -r caught1 missed1 <<<"$(card)"
[ "$caught1 $missed1" = "$caught0 $((missed0 + 1))" ] ||
  fail "report card after a true rollback: caught $caught0 -> $caught1, missed $missed0 -> $missed1 (want missed + 1)"
q "DELETE FROM perfwatch.triage_verdicts WHERE page_id = '$page'" >/dev/null
echo "test_canary_page: report card: the rollback triaged true counts as missed ($missed0 -> $missed1), caught stays $caught0"

# --- the triage page's plot, as Chromium renders it ------------------------------------------------
read -r dwin pilot <<<"$(q "SELECT decision_windows || ' ' || pilot_windows FROM perfwatch.canary_families
  WHERE rollout_id = '$rollout' AND family = 'chat-8b'")"
want=$((dwin - pilot))
url=$(q "SELECT triage_url FROM perfwatch.pages WHERE page_id = '$page'")
python3 tests/integration/cdp_click.py "$url" --expect-id canary-evidence --expect-id canary-plot --expect-id payload \
  --count "#canary-plot svg circle.cs-effect=$want" --count "#canary-plot svg line.cs-interval=$want" \
  --count "#canary-plot svg line.cs-tolerance=1" --count "#canary-plot svg line.cs-decision=1" \
  --count '#canary-recomputed[data-same="true"]=1' \
  --screenshot "canary-plot=$work/canary_plot.png" --out "$work/triage.txt" ||
  fail "chromium: the triage page's canary plot (want $want points)"
head -1 "$work/triage.txt" | grep -qx 200 || fail "the triage page answered $(head -1 "$work/triage.txt")"
[ -s "$work/canary_plot.png" ] || fail "no screenshot of the plot"
grep -q "serving/chat-8b/xla-rc-2026-06-15.aot" "$work/triage.txt" || fail "the triage page does not name the N-1 artifact"
echo "test_canary_page: chromium: the triage page plots $want tested windows of $dwin (pilot $pilot), recomputed to the stored decision; screenshot $work/canary_plot.png"

# --- bad rollout messages --------------------------------------------------------------------------
enc() { protoc --encode=perfwatch.v1.RolloutDecision -I proto proto/perfwatch/v1/canary.proto; }
printf '\n\x05abc' >"$work/trunc.bin"
printf '\x0a\x03\xff\xfe\x41' >"$work/utf8.bin"
printf 'family: "f" decision: ROLLOUT_DECISION_ROLLBACK' | enc >"$work/norollout.bin"
printf 'rollout_id: "%s-bad" family: "f"' "$ns" | enc >"$work/nodecision.bin"
printf 'rollout_id: "%s-bad" family: "f" decision: ROLLOUT_DECISION_ROLLBACK metric: CANARY_METRIC_TPOT effect_pct: 1 lo_pct: 0.5 hi_pct: 2 windows: 30' "$ns" |
  enc >"$work/noartifact.bin"
printf 'rollout_id: "%s-bad" family: "f" decision: ROLLOUT_DECISION_ROLLBACK metric: CANARY_METRIC_TPOT effect_pct: 3 lo_pct: 0.5 hi_pct: 2 windows: 30 rollback_artifact: "a"' "$ns" |
  enc >"$work/outside.bin"
table="trunc decode_failed
utf8 invalid_value
norollout missing_field
nodecision missing_field
noartifact missing_field
outside invalid_value"
while read -r f _; do
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.rollouts.v1 -k "$ns-bad-$f" "$work/$f.bin" || fail "producing $f"
done <<<"$table"
while read -r f reason; do
  deadline=$((SECONDS + 60))
  until got=$(q "SELECT reason || ' ' || detail FROM perfwatch.dead_letters WHERE service = 'pager'
                 AND source_topic = 'perf.rollouts.v1' AND original_key = convert_to('$ns-bad-$f', 'UTF8') LIMIT 1") && [ -n "$got" ]; do
    [ $SECONDS -lt $deadline ] || fail "$f on perf.rollouts.v1 was not dead-lettered"
    sleep 0.3
  done
  [ "${got%% *}" = "$reason" ] || fail "$f: dead-lettered as \"$got\", want $reason"
  echo "test_canary_page: perf.rollouts.v1 $f -> $got"
done <<<"$table"
[ "$(q "SELECT count(*) FROM perfwatch.pages WHERE incident_id LIKE 'inc-rollback-$ns-bad%'")" = 0 ] || fail "bad input paged"
echo "PASS: canary page"
