#!/usr/bin/env bash
# test_pager_event_size.sh: an event with more alerts than an incident keeps
# in memory (PW_PAGER_MAX_MEMBERS, 64) is still released as soon as the gate
# verdict naming all of them is in; its page does not wait for
# pager.page.hold_max (set to an hour here).
#
# One RC's 70 BLOCKING gate findings on chat-8b (one CL range: one event),
# produced straight onto perf.alerts.v1, then the GateVerdict naming all 70.
# Before: the alerts past the 64th were findings of the incident but not
# stored as its members, so the held page waited for them until hold_max
# (seen in test_faults: the worked example's page still pending at the end of
# the faulted run, when an early watcher alert had filled its incident).
#
# Run by tests/integration/run.sh with the dev stack up and run/stack.env loaded.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc
need_bins "$PW_BUILD/services/pager/pw-pager" "$PW_BUILD/tools/perfwatch"
service_harness test_pager_event_size pe
N=70
enc() { protoc --encode="perfwatch.v1.$1" -I proto "proto/perfwatch/v1/$2"; }
now_us=$(($(date +%s) * 1000000))
all=""
for i in $(seq -w 1 $N); do
  printf 'alert_id: "gate-rc-%s-e1-m%s" revision: 1 kind: ALERT_KIND_REGRESSION source: ALERT_SOURCE_GATE
created_unix_us: %s series_key: "chat-8b.%s/hlo:1/v6e-4/decode.B64.s2048.int8/m%s_ms"
series { model: "chat-8b.%s" hlo_fingerprint: "hlo:1" platform: "v6e-4" config: "decode.B64.s2048.int8" metric: "m%s_ms" }
baseline { median: 3.9 mad: 0.02 n: 30 } observed { median: 4.2 n: 5 release: "rc-%s" }
delta { pct: 5.%s z_robust: 10 fdr_q: 0.001 } effect_gate { mde_pct: 1 passed_min_effect: true }
changepoint { nightly: "2026-06-17" cl_range_lo: "cl/7841885" cl_range_hi: "cl/7841923" n_cls: 38 }
verdict: VERDICT_BLOCKING release_id: "rc-%s"' "$ns" "$i" "$now_us" "$ns" "$i" "$ns" "$i" "$ns" "$i" "$ns" |
    enc Alert alert.proto >"$work/alert-$i.bin" || fail "encoding alert $i"
  all+="series { series_key: \"chat-8b.$ns/hlo:1/v6e-4/decode.B64.s2048.int8/m${i}_ms\" family: \"chat-8b.$ns\" alert_id: \"gate-rc-$ns-e1-m$i\" verdict: VERDICT_BLOCKING } "
done
printf 'release_id: "rc-%s" evaluation: 1 verdict: VERDICT_BLOCKING candidate_build_id: "rc-%s" evaluated_unix_us: %s
families { family: "chat-8b.%s" verdict: VERDICT_BLOCKING spend_weighted_impact_pct: 0.64 } %s' \
  "$ns" "$ns" "$now_us" "$ns" "$all" | enc GateVerdict gate.proto >"$work/verdict.bin" || fail "encoding the verdict"

q "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES ('chat-8b.$ns', 0.078, 'top', 'it')
   ON CONFLICT (model) DO NOTHING" >/dev/null
group=$ns-pager
"$PW_BUILD/tools/perfwatch" group to-end "$group" perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 \
  perf.bisections.v1 perf.attributions.v1 perf.rollouts.v1 >/dev/null || fail "placing the group"
# Alertmanager's address answers nothing: the page's delivery is not what is checked, its release is
: >"$work/pager.log"
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID=$group PW_PAGER_TRIAGE_KEY="event-size-key-$ns" PW_PAGER_BUDGET_PER_WEEK=1000 \
  PW_PAGER_TICK=200ms PW_PAGER_PAGE_HOLD_MAX=1h PW_PAGER_ALERTMANAGER_URL="http://127.0.0.1:$(free_port)" \
  "$PW_BUILD/services/pager/pw-pager" >"$work/pager.log" 2>&1 &
pid[pager]=$!
pager_joined "$work/pager.log" "${pid[pager]}"

for i in $(seq -w 1 $N); do
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.alerts.v1 -k "$ns-$i" "$work/alert-$i.bin" || fail "producing alert $i"
done
# every alert consumed before the verdict arrives
deadline=$((SECONDS + 120))
until [ "$(q "SELECT count(*) FROM perfwatch.pager_parts WHERE part_key LIKE '%gate-rc-$ns-e1-m%'")" -ge $N ]; do
  [ $SECONDS -lt $deadline ] || fail "the pager did not consume the $N alerts in 120 s"
  sleep 0.5
done
held=$(q "SELECT count(*) FROM perfwatch.pages WHERE pager_group = '$group' AND hold_until IS NOT NULL")
[ "$held" = 1 ] || fail "expected the event's page held for its verdict, found $held held page(s)"
echo "ok: $N alerts consumed, one page held for the verdict"

kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.gate.verdicts.v1 -k "$ns-verdict" "$work/verdict.bin" ||
  fail "producing the verdict"
deadline=$((SECONDS + 90))
until grep -q '"msg":"page [^"]*: its event is complete' "$work/pager.log"; do
  [ $SECONDS -lt $deadline ] ||
    fail "the page was not released within 90 s of the verdict naming its $N alerts ($(q "SELECT count(*) FROM perfwatch.pager_incident_alerts ia JOIN perfwatch.pager_incidents i USING (incident_id) WHERE i.pager_group = '$group'") stored as findings of its incidents)"
  sleep 0.5
done
pages=$(q "SELECT count(*) FROM perfwatch.pages WHERE pager_group = '$group'")
[ "$pages" = 1 ] || fail "expected one page for the event, found $pages"
stored=$(q "SELECT count(DISTINCT ia.alert_id) FROM perfwatch.pager_incident_alerts ia
            JOIN perfwatch.pager_incidents i USING (incident_id) WHERE i.pager_group = '$group'")
[ "$stored" = $N ] || fail "expected the $N alerts stored as the event's findings, found $stored"
echo "ok: the page released when the verdict came: one page, its $N alerts stored as its findings"
echo "PASS"
