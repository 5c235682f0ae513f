#!/usr/bin/env bash
# test_pager_notices.sh: info notices through pw-pager (§8: a validated win
# is info to the compiler team, an infra-health finding info to infra; neither
# pages anyone nor counts against the false-page budget).
#
# A GateVerdict whose family "win.<ns>" the gate validated as a registered
# win (the gate raises no Alert for it) and two infra-health alerts of one
# fleet change go to a pager delivering to a real Alertmanager
# (deploy/dev/alertmanager.yml, its triage receiver pointed at this test's
# webhook) and to the generic webhook. Then: exactly two notices, each
# posted once to the webhook with severity "info" (validated_win to
# xla-compiler, infra_health to perf-infra), none as a page; Alertmanager
# holds both as severity="info" alerts routed to the "notices" receiver and
# notifies on-call of neither; no pages row and no budget charge; a
# redelivery of all three messages delivers nothing again.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc python3 curl prometheus-alertmanager
need_bins "$PW_BUILD/services/pager/pw-pager" "$PW_BUILD/tools/perfwatch"
pw=$PW_BUILD/tools/perfwatch
service_harness test_pager_notices pn

hook_start
am_start "s#http://127.0.0.1:1/unused#http://127.0.0.1:$hook_port/alertmanager#"

pages_before=$(q "SELECT count(*) FROM perfwatch.pages WHERE created_at > now() - interval '7 days'")
"$pw" group to-end "$ns-pager" perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 \
  perf.attributions.v1 perf.rollouts.v1 >/dev/null || fail "placing the group"
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-pager" PW_PAGER_TRIAGE_KEY="notices-test-key-$ns" \
  PW_PAGER_ALERTMANAGER_URL="$am" PW_PAGER_WEBHOOK_URL="http://127.0.0.1:$hook_port/hook" \
  "$PW_BUILD/services/pager/pw-pager" >"$work/pager.log" 2>&1 &
pid[pager]=$!
pager_joined "$work/pager.log" "${pid[pager]}"

now_us=$(($(date +%s) * 1000000))
produce() { # TOPIC KEY TYPE FILE
  protoc --encode="perfwatch.v1.$3" -I proto "proto/perfwatch/v1/$(basename "$4" .txt | cut -d- -f1).proto" \
    <"$4" >"$4.bin" || fail "encoding $4"
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t "$1" -k "$2" "$4.bin" || fail "producing $4"
}
key="win.$ns/hlo:1.$ns/v6e-4/decode.B64.s2048.int8"
cat >"$work/gate-verdict.txt" <<TXT
release_id: "rc-$ns" evaluation: 1 verdict: VERDICT_PASS candidate_build_id: "rc-$ns" baseline_release: "base-$ns"
families { family: "win.$ns" tier: TIER_TOP verdict: VERDICT_VALIDATED_WIN spend_share: 0.05 gated_series: 2 }
series { series_key: "$key/hbm_bw_util" family: "win.$ns" tier: TIER_TOP baseline_median: 0.6 candidate_median: 0.625
         baseline_n: 30 candidate_n: 5 unit: "ratio" delta_pct: 4.17 expected_delta_pct: 4.17 mde_pct: 1 q: 0.001
         verdict: VERDICT_VALIDATED_WIN }
series { series_key: "$key/tpot_p50_ms" family: "win.$ns" tier: TIER_TOP baseline_median: 3.9 candidate_median: 3.744
         baseline_n: 30 candidate_n: 5 unit: "ms" delta_pct: -4.0 expected_delta_pct: -4.0 mde_pct: 1 q: 0.001
         verdict: VERDICT_VALIDATED_WIN }
evaluated_unix_us: $now_us
TXT
infra() { # N CONFIG
  cat >"$work/alert-$1.txt" <<TXT
alert_id: "$ns-infra-$1" revision: 1 kind: ALERT_KIND_INFRA_HEALTH source: ALERT_SOURCE_WATCHER
created_unix_us: $((now_us + $1)) series_key: "cell.$ns/hlo:2/v5e-8/$2/tpot_p50_ms"
series { model: "cell.$ns" hlo_fingerprint: "hlo:2" platform: "v5e-8" config: "$2" metric: "tpot_p50_ms" }
delta { pct: 0.7 } verdict: VERDICT_FROZEN fleet_event_id: "fc-$ns" summary: "fleet change fc-$ns"
TXT
}
infra 1 decode.B64.s2048.int8
infra 2 decode.B8.s2048.int8
send_all() {
  produce perf.gate.verdicts.v1 "rc-$ns" GateVerdict "$work/gate-verdict.txt"
  produce perf.alerts.v1 "$ns-infra-1" Alert "$work/alert-1.txt"
  produce perf.alerts.v1 "$ns-infra-2" Alert "$work/alert-2.txt"
}
send_all

mine="(incident_id LIKE 'inc-win-rc-$ns-%' OR incident_id LIKE 'inc-$ns-infra-%')"
deadline=$((SECONDS + 60))
until [ "$(q "SELECT count(*) FROM perfwatch.pager_notices WHERE $mine AND am_delivered_at IS NOT NULL
              AND webhook_delivered_at IS NOT NULL")" -ge 2 ]; do
  kill -0 "${pid[pager]}" 2>/dev/null || fail "pw-pager exited"
  [ $SECONDS -lt $deadline ] || fail "two delivered notices expected, have: $(q "SELECT string_agg(notice_id || ' ' || kind || ' am=' || coalesce(am_delivered_at::text, '-') || ' wh=' || coalesce(webhook_delivered_at::text, '-') || ' ' || last_error, '; ') FROM perfwatch.pager_notices WHERE $mine")"
  sleep 0.3
done
sleep 3 # Alertmanager's group_wait, and time for anything that should not happen
# the redelivery: the same three messages again
send_all
sleep 4

[ "$(q "SELECT count(*) FROM perfwatch.pager_notices WHERE $mine")" = 2 ] ||
  fail "notices: $(q "SELECT string_agg(notice_id, ', ') FROM perfwatch.pager_notices WHERE $mine")"
[ "$(q "SELECT count(*) FROM perfwatch.pages WHERE $mine")" = 0 ] || fail "an info finding was paged"
[ "$(q "SELECT count(*) FROM perfwatch.pages WHERE created_at > now() - interval '7 days'")" = "$pages_before" ] ||
  fail "the week's pages changed: the false-page budget was charged"
[ "$(q "SELECT count(DISTINCT incident_id) FROM perfwatch.pager_decisions WHERE $mine AND action = 'info'")" = 2 ] ||
  fail "info decisions: $(q "SELECT string_agg(incident_id || ':' || action, ', ') FROM perfwatch.pager_decisions WHERE $mine")"
[ "$(q "SELECT count(*) FROM perfwatch.pager_deliveries d JOIN perfwatch.pager_notices n USING (notice_id)
        WHERE $mine AND d.ok")" = 4 ] || fail "want 4 acknowledged deliveries (2 notices x Alertmanager, webhook)"

python3 - "$work/hook" "$am" "$ns" <<'PY'
import json, os, sys, urllib.request
hook, am, ns = sys.argv[1:]
# the stack may hold other tests' active pages, which this pager posts too: only this namespace's count
posts = [json.load(open(os.path.join(hook, f))) for f in sorted(os.listdir(hook))]
posts = [p for p in posts if ns in json.dumps(p["body"])]
oncall = [p for p in posts if p["path"] == "/alertmanager"]
assert not oncall, f"Alertmanager notified on-call of an info notice: {oncall}"
hook_posts = [p for p in posts if p["path"] == "/hook"]
assert len(hook_posts) == 2, f"want one webhook post per notice, got {[(p['key'], p['body'].get('kind')) for p in hook_posts]}"
by = {p["body"]["kind"]: p for p in hook_posts}
assert set(by) == {"validated_win", "infra_health"}, by.keys()
for k, p in by.items():
    b = p["body"]
    assert b["severity"] == "info" and p["key"] == b["notice_id"], b
    assert "page_id" not in b, f"a notice posted as a page: {b}"
w, i = by["validated_win"]["body"], by["infra_health"]["body"]
assert w["route"] == "xla-compiler" and w["owner"] == "compiler", w
assert w["summary"] == f"validated win: win.{ns} v6e-4 TPOT -4.0% VALIDATED_WIN", w["summary"]
assert w["payload"]["verdict"] == "VALIDATED_WIN" and w["payload"]["series"]["metric"] == "tpot_p50_ms", w["payload"]
assert i["route"] == "perf-infra" and i["owner"] == "infra", i
assert f"fleet change fc-{ns}" in i["summary"], i["summary"]
alerts = json.load(urllib.request.urlopen(am + "/api/v2/alerts?filter=alertname%3D%22PerfwatchNotice%22"))
mine = [a for a in alerts if ns in a["labels"]["notice_id"]]
assert len(mine) == 2, [a["labels"] for a in alerts]
for a in mine:
    assert a["labels"]["severity"] == "info", a["labels"]
    assert [r["name"] for r in a["receivers"]] == ["notices"], a["receivers"]
    assert a["status"]["state"] == "active", a["status"]
print("test_pager_notices: %s -> %s; %s -> %s; Alertmanager: 2 info alerts on the notices receiver, on-call notified of none"
      % (w["summary"], w["route"], i["summary"], i["route"]))
PY
echo "PASS: pager notices"
