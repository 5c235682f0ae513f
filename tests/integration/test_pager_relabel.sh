#!/usr/bin/env bash
# test_pager_relabel.sh: a page whose Alertmanager labels change leaves
# exactly one alert in a real Alertmanager.
#
# A watcher shift (+5%, top tier, no verdict) opens an incident that pages
# at severity "high"; once Alertmanager has it, the gate's BLOCKING alert of
# the same event (same family, overlapping CL range) joins it: the page is
# now "critical" with the release in its labels — to Alertmanager another
# alert. The pager posts the old label set resolved (endsAt now) with the new
# one, so Alertmanager holds exactly one alert for the incident (not the old
# one kept as a second, inhibited alert until it expires), critical and
# active, in one group.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc python3 curl prometheus-alertmanager
need_bins "$PW_BUILD/services/pager/pw-pager" "$PW_BUILD/tools/perfwatch"
pw=$PW_BUILD/tools/perfwatch
service_harness test_pager_relabel pl
am_start

q "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES ('chat.$ns', 0.05, 'top', 'it')
   ON CONFLICT (model) DO NOTHING" >/dev/null
"$pw" group to-end "$ns-pager" perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 \
  perf.attributions.v1 perf.rollouts.v1 >/dev/null || fail "placing the group"
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-pager" PW_PAGER_TRIAGE_KEY="relabel-test-key-$ns" PW_PAGER_BUDGET_PER_WEEK=1000 \
  PW_PAGER_ALERTMANAGER_URL="$am" "$PW_BUILD/services/pager/pw-pager" >"$work/pager.log" 2>&1 &
pid[pager]=$!
pager_joined "$work/pager.log" "${pid[pager]}"

now_us=$(($(date +%s) * 1000000))
alert() { # ID SOURCE VERDICT EXTRA
  printf 'alert_id: "%s-%s" revision: 1 kind: ALERT_KIND_REGRESSION source: %s created_unix_us: %s
series_key: "chat.%s/hlo:1/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"
series { model: "chat.%s" hlo_fingerprint: "hlo:1" platform: "v6e-4" config: "decode.B64.s2048.int8" metric: "tpot_p50_ms" }
baseline { median: 3.9 mad: 0.02 n: 30 } observed { median: 4.1 n: 5 }
delta { pct: 5.0 z_robust: 10 fdr_q: 0.001 } effect_gate { mde_pct: 1 passed_min_effect: true }
changepoint { nightly: "2026-06-17" cl_range_lo: "cl/100" cl_range_hi: "cl/120" n_cls: 20 }
verdict: %s %s' "$ns" "$1" "$2" "$now_us" "$ns" "$ns" "$3" "$4" |
    protoc --encode=perfwatch.v1.Alert -I proto proto/perfwatch/v1/alert.proto >"$work/$1.bin" || fail "encoding $1"
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.alerts.v1 -k "$ns-$1" "$work/$1.bin" || fail "producing $1"
}
alert watch ALERT_SOURCE_WATCHER VERDICT_UNSPECIFIED ''
page="pg-$ns-watch"
deadline=$((SECONDS + 30))
until [ "$(q "SELECT am_version || ' ' || severity FROM perfwatch.pages WHERE page_id = '$page'")" = "1 high" ]; do
  [ $SECONDS -lt $deadline ] || fail "the watcher's high page was not delivered: $(q "SELECT row_to_json(p) FROM (SELECT page_id, severity, version, am_version, last_error FROM perfwatch.pages WHERE page_id = '$page') p")"
  sleep 0.2
done
sleep 1.5 # Alertmanager's group_wait: the high alert is notified
alert gate ALERT_SOURCE_GATE VERDICT_BLOCKING "release_id: \"rc-$ns\""
deadline=$((SECONDS + 30))
until [ "$(q "SELECT severity || ' ' || (am_version = version) FROM perfwatch.pages WHERE page_id = '$page'")" = "critical true" ]; do
  [ $SECONDS -lt $deadline ] || fail "the critical form was not delivered: $(q "SELECT row_to_json(p) FROM (SELECT page_id, severity, version, am_version, last_error FROM perfwatch.pages WHERE page_id = '$page') p")"
  sleep 0.2
done
sleep 1.5
python3 - "$am" "inc-$ns-watch" <<'PY'
import json, sys, urllib.request
am, inc = sys.argv[1:]
alerts = json.load(urllib.request.urlopen(am + "/api/v2/alerts?filter=incident%3D%22" + inc + "%22"))
live = [a for a in alerts if a["status"]["state"] != "resolved"]
desc = [(a["labels"]["severity"], a["labels"].get("release"), a["status"]["state"]) for a in alerts]
assert len(live) == 1, f"want exactly one alert for the incident, got {desc}"
a = live[0]
assert a["labels"]["severity"] == "critical" and a["status"]["state"] == "active", desc
assert a["labels"]["release"].startswith("rc-"), a["labels"]
groups = [g for g in json.load(urllib.request.urlopen(am + "/api/v2/alerts/groups")) if g["labels"].get("incident") == inc]
assert len(groups) == 1 and len([x for x in groups[0]["alerts"] if x["status"]["state"] != "resolved"]) == 1, groups
print("test_pager_relabel: Alertmanager holds one alert for the incident: %s" % (desc,))
PY
grep -q 'labels changed, resolving the old label set' "$work/pager.log" || fail "the pager did not say it resolved the old labels"
echo "PASS: pager relabel"
