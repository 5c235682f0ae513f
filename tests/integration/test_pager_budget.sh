#!/usr/bin/env bash
# test_pager_budget.sh: the false-page budget through pw-pager. A synthetic
# week of 12 independent top-tier BLOCKING regressions (12 families, 12
# releases, spend impact 0.2–0.5% of fleet each) on perf.alerts.v1: the
# pager pages within the budget (pager.budget_per_week = 5, charged with
# this deployment's pages only: six pages of another deployment in the same
# week change nothing), the last pages saying the budget is under pressure,
# and queues the other 7 — none dropped: every one has an incident and a
# decision naming the budget. A 13th regression with a 1.5% spend impact
# still pages over budget (pager.budget_override_spend_pct = 1).
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc python3
need_bins "$PW_BUILD/services/pager/pw-pager" "$PW_BUILD/tools/perfwatch"
pw=$PW_BUILD/tools/perfwatch
ns="pb$(date +%s%N | tail -c 8)"
work=$(mktemp -d "$PW_RUN_DIR/test_pager_budget.XXXXXX")
pid=""
cleanup() { [ -z "$pid" ] || { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }; }
trap cleanup EXIT
fail() {
  echo "test_pager_budget: FAIL: $*" >&2
  tail -n 20 "$work/pager.log" >&2 || true
  exit 1
}
enc() { protoc --encode=perfwatch.v1.Alert -I proto proto/perfwatch/v1/alert.proto; }

# the budget is the deployment's (its group): another deployment's pages on this
# database (a test's, an earlier demo's; six here, more than the budget) charge
# their own rotation's budget, not this one's
for i in $(seq 1 6); do
  q "INSERT INTO perfwatch.pager_incidents (incident_id, dedup_key, open, action, payload, opened_at, updated_at,
                                            pager_group)
     VALUES ('inc-other-$ns-$i', 'other-$ns-$i', false, 'page', '{}', now(), now(), '$ns-other-pager')" >/dev/null
  q "INSERT INTO perfwatch.pages (page_id, dedup_key, route, severity, verdict, summary, created_at,
                                  delivery_status, incident_id, pager_group)
     VALUES ('pg-other-$ns-$i', 'other-$ns-$i', 'ml-perf-triage', 'critical', 'blocking', 'another deployment''s page',
             now(), 'delivered', 'inc-other-$ns-$i', '$ns-other-pager')" >/dev/null
done
used=$(q "SELECT count(*) - count(*) FILTER (WHERE t.outcome = 'true_regression')
            FROM perfwatch.pages p LEFT JOIN perfwatch.triage_verdicts t USING (page_id)
           WHERE p.incident_id IS NOT NULL AND p.pager_group = '$ns-pager' AND p.created_at > now() - interval '7 days'")
[ "$used" = 0 ] || fail "a new deployment's group $ns-pager has $used pages already"
budget=5
"$pw" group to-end "$ns-pager" perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 \
  perf.attributions.v1 perf.rollouts.v1 >/dev/null || fail "placing the group"
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-pager" PW_PAGER_TRIAGE_KEY="budget-test-key-$ns" \
  PW_PAGER_BUDGET_PER_WEEK=$budget "$PW_BUILD/services/pager/pw-pager" >"$work/pager.log" 2>&1 &
pid=$!
deadline=$((SECONDS + 90))
until grep -q '"msg":"kafka partitions assigned' "$work/pager.log"; do
  kill -0 "$pid" 2>/dev/null || fail "pw-pager exited"
  [ $SECONDS -lt $deadline ] || fail "pw-pager did not join its group"
  sleep 0.2
done

alert() { # I MODEL SHARE DELTA_PCT
  q "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES ('$2', $3, 'top', 'it')
     ON CONFLICT (model) DO NOTHING" >/dev/null
  printf 'alert_id: "%s-a%02d" revision: 1 kind: ALERT_KIND_REGRESSION source: ALERT_SOURCE_GATE
created_unix_us: %s series_key: "%s/hlo:0/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"
series { model: "%s" hlo_fingerprint: "hlo:0" platform: "v6e-4" config: "decode.B64.s2048.int8" metric: "tpot_p50_ms" }
baseline { median: 3.9 mad: 0.02 n: 30 } observed { median: 4.1 n: 5 release: "rc-%s-%02d" }
delta { pct: %s z_robust: 10 fdr_q: 0.001 } effect_gate { mde_pct: 1 passed_min_effect: true }
verdict: VERDICT_BLOCKING release_id: "rc-%s-%02d"' \
    "$ns" "$1" "$(($(date +%s) * 1000000))" "$2" "$2" "$ns" "$1" "$4" "$ns" "$1" | enc >"$work/a$1.bin"
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.alerts.v1 -k "$ns-a$1" "$work/a$1.bin" || fail "producing alert $1"
}
# 12 families, spend share 0.04..0.07 x 5% = 0.20..0.35% of fleet each (below the 1% override)
for i in $(seq 1 12); do
  alert "$i" "fam$i.$ns" "0.0$((3 + (i % 4) + 1))" 5.0
  sleep 0.3 # in order: the week fills up one page at a time
done
deadline=$((SECONDS + 60))
until [ "$(q "SELECT count(*) FROM perfwatch.pager_decisions WHERE incident_id LIKE 'inc-$ns-a%' AND budget <> ''")" -ge 12 ]; do
  kill -0 "$pid" 2>/dev/null || fail "pw-pager exited"
  [ $SECONDS -lt $deadline ] || fail "fewer than 12 budget decisions within 60 s"
  sleep 0.3
done
q "SELECT d.alert_id || ' ' || d.budget || ': ' || d.reason FROM perfwatch.pager_decisions d
    WHERE d.incident_id LIKE 'inc-$ns-a%' AND d.budget <> '' ORDER BY d.id" | sed 's/^/  /'
pages=$(q "SELECT count(*) FROM perfwatch.pages WHERE incident_id LIKE 'inc-$ns-a%'")
queued=$(q "SELECT count(*) FROM perfwatch.pager_decisions WHERE incident_id LIKE 'inc-$ns-a%' AND budget = 'queued'
              AND action = 'queue' AND reason LIKE '%over budget%'")
pressure=$(q "SELECT count(*) FROM perfwatch.pages WHERE incident_id LIKE 'inc-$ns-a%' AND budget_pressure")
incidents=$(q "SELECT count(*) FROM perfwatch.pager_incidents WHERE incident_id LIKE 'inc-$ns-a%'")
[ "$pages" = 5 ] || fail "$pages pages, want 5 (budget $budget, $used used before)"
[ "$queued" = 7 ] || fail "$queued queued over budget with the reason, want 7"
[ "$incidents" = 12 ] || fail "$incidents incidents, want 12: none dropped"
# pressure from 0.6 of the budget: the pages that brought the charge to >= 0.6 x budget
want_pressure=$(python3 -c "import math; b=$budget; u=$used; print(sum(1 for k in range(5) if u + k + 1 >= 0.6 * b))")
[ "$pressure" = "$want_pressure" ] || fail "$pressure pages under pressure, want $want_pressure"
echo "test_pager_budget: 12 regressions: 5 paged ($pressure under pressure), 7 queued with the reason (budget $budget, $used already used)"

# a high-spend regression still pages over budget: share 0.3 x 5% = 1.5% of fleet
alert 13 "big.$ns" 0.3 5.0
deadline=$((SECONDS + 30))
until [ "$(q "SELECT count(*) FROM perfwatch.pages WHERE incident_id = 'inc-$ns-a13'")" = 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "the 1.5%-spend regression did not page over budget"
  sleep 0.3
done
[ "$(q "SELECT budget FROM perfwatch.pager_decisions WHERE incident_id = 'inc-$ns-a13'")" = override ] ||
  fail "the over-budget page is not recorded as an override"
[ "$(q "SELECT budget_pressure FROM perfwatch.pages WHERE incident_id = 'inc-$ns-a13'")" = t ] ||
  fail "the over-budget page does not say the budget is under pressure"
echo "test_pager_budget: a 1.5%-spend regression pages over budget (override, under pressure)"
echo "test_pager_budget: PASS"
