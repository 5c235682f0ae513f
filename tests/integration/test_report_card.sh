#!/usr/bin/env bash
# test_report_card.sh: `perfwatch report card` and the views of migration
# 0025 on synthetic months (2001-05..07, ids prefixed "rc-test-"), checked
# against numbers worked out by hand: May 30 pages (25 false, 3 true: 2
# caught with a release, 1 missed without; 2 untriaged; verdicts after
# 1..28 h, median 14.5 h), June 24 false pages, July 1. May's budget is
# 5 x 31/7 = 22.1 and June's 5 x 30/7 = 21.4: both over, so June (and only
# June) raises the threshold review. Coverage: the gate evaluated family
# rc-test-a (spend 0.2) in June, of rc-test-a + rc-test-b (0.2 + 0.6) and
# whatever spend the stack already holds.
#
# Run by tests/integration/run.sh with the dev stack up and run/stack.env loaded.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN
pw=$PW_BUILD/tools/perfwatch/perfwatch
[ -x "$pw" ] || pw=$PW_BUILD/tools/perfwatch
need_bins "$pw"
need_tools psql python3

cleanup() {
  q "DELETE FROM perfwatch.pages WHERE page_id LIKE 'rc-test-%';
     DELETE FROM perfwatch.gate_evaluations WHERE release_id LIKE 'rc-test-%';
     DELETE FROM perfwatch.spend_weights WHERE model LIKE 'rc-test-%';" >/dev/null
}
trap cleanup EXIT
cleanup

q "INSERT INTO perfwatch.pages (page_id, dedup_key, route, severity, verdict, summary, release_id, created_at)
   SELECT 'rc-test-05-' || i, 'k' || i, 'ml-perf-triage', 'critical', 'blocking', 's',
          CASE WHEN i IN (27, 28) THEN 'rel' WHEN i = 26 THEN '' ELSE 'rel' END,
          timestamptz '2001-05-03 00:00+00' + i * interval '10 hours'
     FROM generate_series(1, 30) i;
   INSERT INTO perfwatch.triage_verdicts (page_id, outcome, triager, decided_at)
   SELECT 'rc-test-05-' || i, CASE WHEN i <= 25 THEN 'false_regression' ELSE 'true_regression' END, 't',
          timestamptz '2001-05-03 00:00+00' + i * interval '10 hours' + i * interval '1 hour'
     FROM generate_series(1, 28) i;
   INSERT INTO perfwatch.pages (page_id, dedup_key, route, severity, verdict, summary, created_at)
   SELECT 'rc-test-06-' || i, 'k', 'r', 'high', 'p1', 's', timestamptz '2001-06-02 00:00+00' + i * interval '1 hour'
     FROM generate_series(1, 24) i;
   INSERT INTO perfwatch.triage_verdicts (page_id, outcome, triager, decided_at)
   SELECT 'rc-test-06-' || i, 'false_regression', 't', timestamptz '2001-06-20 00:00+00'
     FROM generate_series(1, 24) i;
   INSERT INTO perfwatch.pages (page_id, dedup_key, route, severity, verdict, summary, created_at)
   VALUES ('rc-test-07-1', 'k', 'r', 'high', 'p1', 's', '2001-07-02 00:00+00');
   INSERT INTO perfwatch.triage_verdicts (page_id, outcome, triager, decided_at)
   VALUES ('rc-test-07-1', 'false_regression', 't', '2001-07-03 00:00+00');
   INSERT INTO perfwatch.spend_weights (model, spend_share, tier) VALUES ('rc-test-a', 0.2, 'top'), ('rc-test-b', 0.6, 'top');
   INSERT INTO perfwatch.gate_evaluations (release_id, evaluation, candidate_build_id, baseline_release, fdr_q,
                                           requested_at, status, verdict, evaluated_at)
   VALUES ('rc-test-rel', 1, 'b', 'base', 0.05, '2001-06-05 00:00+00', 'done', 'pass', '2001-06-05 01:00+00');
   INSERT INTO perfwatch.gate_family_results (release_id, evaluation, family, tier, verdict)
   VALUES ('rc-test-rel', 1, 'rc-test-a', 'top', 'pass');" >/dev/null

other=$(q "SELECT coalesce(sum(spend_share), 0) FROM perfwatch.spend_weights WHERE model NOT LIKE 'rc-test-%'")
may=$("$pw" report card --month 2001-05)
june=$("$pw" report card --month 2001-06)
july=$("$pw" report card --month 2001-07)
echo "$may"; echo "$june"; echo "$july"
"$pw" report card --month 2001-06 --text

python3 - "$may" "$june" "$july" "$other" <<'PY'
import json, sys
may, june, july = (json.loads(a) for a in sys.argv[1:4])
other = float(sys.argv[4])
def eq(d, k, v):
    got = d[k]
    ok = (got is None and v is None) or (got is not None and v is not None and abs(got - v) < 1e-9)
    assert ok, f"{d['month']} {k}: {got} != {v}"
for k, v in dict(pages=30, triaged=28, true_pages=3, false_pages=25, caught=2, missed=1,
                 validated_wins=0, queued_over_budget=0, median_verdict_s=14.5 * 3600).items():
    eq(may, k, v)
eq(may, "false_page_rate", 25 / 28)
assert may["threshold_review"] is None, may
eq(june, "pages", 24); eq(june, "false_pages", 24); eq(june, "false_page_rate", 1.0)
eq(june, "spend_coverage", 0.2 / (0.8 + other))
assert june["threshold_review"] and "two months running" in june["threshold_review"], june
eq(july, "pages", 1)
assert july["threshold_review"] is None, july
print("report card: numbers match")
PY

# a bad month is a usage error
if "$pw" report card --month 2001-13 2>/dev/null; then echo "FAIL: month 13 accepted"; exit 1; fi
echo "PASS: report card"
