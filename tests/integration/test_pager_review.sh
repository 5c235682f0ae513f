#!/usr/bin/env bash
# test_pager_review.sh: the threshold-review finding (§8: "false-page rate >
# budget for two consecutive months forces a threshold/noise-floor review")
# raised by pw-pager, recorded in PostgreSQL, shown by `perfwatch report card`
# and delivered as an info notice.
#
# Synthetic months 2002-03..05 (page ids "rv-test-"): March 25 false pages,
# April 24, May 1. With pager.budget_per_week = 6 the months' budgets are
# 6 x 31/7 = 26.6 and 6 x 30/7 = 25.7: nothing is raised. With the default 5
# (22.1, 21.4) both are over: April, and only April, is recorded once
# (perfwatch.pager_threshold_reviews), its notice posted once to the webhook
# with severity "info" to the detector team (a restart raises nothing again),
# and `perfwatch report card --month 2002-04` shows it (JSON and text) with
# the month's other fields unchanged.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools python3 psql
pw=$PW_BUILD/tools/perfwatch/perfwatch
[ -x "$pw" ] || pw=$PW_BUILD/tools/perfwatch
need_bins "$PW_BUILD/services/pager/pw-pager" "$pw"
ns="pr$(date +%s%N | tail -c 8)"
work=$(mktemp -d "$PW_RUN_DIR/test_pager_review.XXXXXX")
declare -A pid=()
cleanup() {
  for p in "${pid[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pid[@]}"; do wait "$p" 2>/dev/null || true; done
  q "DELETE FROM perfwatch.pager_threshold_reviews WHERE month BETWEEN '2002-03-01' AND '2002-05-01';
     DELETE FROM perfwatch.pager_notices WHERE notice_id LIKE 'nt-review-2002-%';
     DELETE FROM perfwatch.pages WHERE page_id LIKE 'rv-test-%';" >/dev/null || true
}
trap cleanup EXIT
fail() {
  echo "test_pager_review: FAIL: $*" >&2
  tail -n 20 "$work/pager.log" >&2 || true
  exit 1
}
cleanup
hook_start

q "INSERT INTO perfwatch.pages (page_id, dedup_key, route, severity, verdict, summary, created_at)
   SELECT 'rv-test-03-' || i, 'k', 'r', 'critical', 'blocking', 's', timestamptz '2002-03-02 00:00+00' + i * interval '1 hour'
     FROM generate_series(1, 25) i;
   INSERT INTO perfwatch.pages (page_id, dedup_key, route, severity, verdict, summary, created_at)
   SELECT 'rv-test-04-' || i, 'k', 'r', 'high', 'p1', 's', timestamptz '2002-04-02 00:00+00' + i * interval '1 hour'
     FROM generate_series(1, 24) i;
   INSERT INTO perfwatch.pages (page_id, dedup_key, route, severity, verdict, summary, created_at)
   VALUES ('rv-test-05-1', 'k', 'r', 'high', 'p1', 's', '2002-05-02 00:00+00');
   INSERT INTO perfwatch.triage_verdicts (page_id, outcome, triager, decided_at)
   SELECT page_id, 'false_regression', 't', created_at + interval '2 hours' FROM perfwatch.pages
    WHERE page_id LIKE 'rv-test-%';" >/dev/null

"$pw" group to-end "$ns-pager" perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 \
  perf.attributions.v1 perf.rollouts.v1 >/dev/null || fail "placing the group"
start_pager() { # BUDGET_PER_WEEK
  PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-pager" PW_PAGER_TRIAGE_KEY="review-test-key-$ns" PW_PAGER_BUDGET_PER_WEEK="$1" \
    PW_PAGER_REVIEW_INTERVAL=200ms PW_PAGER_WEBHOOK_URL="http://127.0.0.1:$hook_port/hook" \
    "$PW_BUILD/services/pager/pw-pager" >>"$work/pager.log" 2>&1 &
  pid[pager]=$!
  local deadline=$((SECONDS + 90)) n
  n=$(grep -c '"msg":"kafka partitions assigned' "$work/pager.log" || true)
  until [ "$(grep -c '"msg":"kafka partitions assigned' "$work/pager.log" || true)" -gt "${joined:-0}" ]; do
    kill -0 "${pid[pager]}" 2>/dev/null || fail "pw-pager exited"
    [ $SECONDS -lt $deadline ] || fail "pw-pager did not join its group"
    sleep 0.2
  done
  joined=$((${joined:-0} + 1))
}
stop_pager() { kill -TERM "${pid[pager]}"; wait "${pid[pager]}" 2>/dev/null || true; }
reviews() { q "SELECT count(*) FROM perfwatch.pager_threshold_reviews WHERE month BETWEEN '2002-03-01' AND '2002-05-01'"; }

# budget 6 a week: neither month is over its budget
start_pager 6
sleep 3
[ "$(reviews)" = 0 ] || fail "a review raised under a budget of 6 a week: $(q "SELECT string_agg(month || ' ' || finding, '; ') FROM perfwatch.pager_threshold_reviews WHERE month BETWEEN '2002-03-01' AND '2002-05-01'")"
stop_pager

# budget 5 a week: April is the second month over
start_pager 5
deadline=$((SECONDS + 30))
until [ "$(q "SELECT count(*) FROM perfwatch.pager_notices WHERE notice_id = 'nt-review-2002-04' AND webhook_delivered_at IS NOT NULL")" = 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "no delivered threshold-review notice for 2002-04 (reviews: $(reviews))"
  sleep 0.2
done
stop_pager
start_pager 5 # a restart raises nothing again
sleep 2
[ "$(reviews)" = 1 ] || fail "want one review (2002-04), have $(reviews)"
[ "$(q "SELECT to_char(month, 'YYYY-MM') || ' ' || false_pages || ' ' || prev_false_pages || ' ' || round(budget::numeric, 2) || ' ' || notice_id
        FROM perfwatch.pager_threshold_reviews WHERE month BETWEEN '2002-03-01' AND '2002-05-01'")" = "2002-04 24 25 21.43 nt-review-2002-04" ] ||
  fail "the review row: $(q "SELECT row_to_json(v) FROM perfwatch.pager_threshold_reviews v WHERE month = '2002-04-01'")"

april=$("$pw" report card --month 2002-04 --json)
may=$("$pw" report card --month 2002-05)
text=$("$pw" report card --month 2002-04 --text)
echo "$april"; echo "$text"
python3 - "$work/hook" "$april" "$may" "$text" <<'PY'
import json, os, sys
hook, april, may, text = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
posts = [json.load(open(os.path.join(hook, f))) for f in sorted(os.listdir(hook))]
mine = [p for p in posts if p["body"].get("notice_id", "").startswith("nt-review-2002-")]
assert len(mine) == 1, [p["body"].get("notice_id") for p in posts]
b = mine[0]["body"]
assert b["notice_id"] == "nt-review-2002-04" and mine[0]["key"] == "nt-review-2002-04", b
assert b["kind"] == "threshold_review" and b["severity"] == "info" and b["route"] == "perfwatch-detector", b
assert b["payload"]["false_pages"] == 24 and b["payload"]["prev_false_pages"] == 25 and b["payload"]["budget_per_week"] == 5, b
want = "false pages over budget two months running (25 then 24 against 21.4): review thresholds and noise floors"
assert april["threshold_review"] == want, april
assert april["threshold_review_notice"] == "nt-review-2002-04" and april["threshold_review_delivered"] is True, april
assert april["threshold_review_raised_at"], april
assert april["pages"] == 24 and april["false_pages"] == 24 and april["false_page_rate"] == 1, april
assert may["threshold_review"] is None and may["threshold_review_notice"] is None, may
assert may["threshold_review_raised_at"] is None and may["threshold_review_delivered"] is False, may
assert want in text and "raised by the pager" in text and "nt-review-2002-04 delivered" in text, text
print("test_pager_review: 2002-04 raised once (" + b["summary"] + "), delivered to " + b["route"])
PY
echo "PASS: pager threshold review"
