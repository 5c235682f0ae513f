-- 0027_report_card.sql: the detector's monthly report card (§8) and the
-- threshold-review finding, as views the dashboards and `perfwatch report
-- card` read.
--
-- pages / true / false / untriaged come from pages and triage_verdicts (the
-- latest verdict per page); caught is a true regression paged with a release
-- (the gate or the watcher on the RC caught it before it shipped), missed a
-- true regression paged without one (found later by the watcher on the
-- nightlies: the gate passed it); validated wins are the pager's info
-- decisions on validated-win findings; median time to verdict is over the
-- month's triaged pages; spend-weighted coverage is the fleet spend share of
-- the families the gate evaluated that month over the spend table's total.

CREATE VIEW perfwatch.report_card_monthly AS
WITH months AS (
    SELECT date_trunc('month', created_at) AS month FROM perfwatch.pages
    UNION SELECT date_trunc('month', decided_at) FROM perfwatch.pager_decisions
    UNION SELECT date_trunc('month', evaluated_at) FROM perfwatch.gate_evaluations WHERE evaluated_at IS NOT NULL
), p AS (
    SELECT date_trunc('month', p.created_at) AS month,
           count(*) AS pages,
           count(t.page_id) AS triaged,
           count(*) FILTER (WHERE t.outcome = 'true_regression') AS true_pages,
           count(*) FILTER (WHERE t.outcome = 'false_regression') AS false_pages,
           count(*) FILTER (WHERE t.outcome = 'true_regression' AND p.release_id <> '') AS caught,
           count(*) FILTER (WHERE t.outcome = 'true_regression' AND p.release_id = '') AS missed,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM t.decided_at - p.created_at))
               FILTER (WHERE t.page_id IS NOT NULL) AS median_verdict_s
      FROM perfwatch.pages p
      LEFT JOIN perfwatch.triage_verdicts t USING (page_id)
     GROUP BY 1
), w AS (
    SELECT date_trunc('month', d.decided_at) AS month, count(DISTINCT d.incident_id) AS validated_wins
      FROM perfwatch.pager_decisions d
      JOIN perfwatch.pager_incidents i USING (incident_id)
     WHERE d.action = 'info' AND i.payload->>'verdict' = 'VALIDATED_WIN'
     GROUP BY 1
), q AS (
    SELECT date_trunc('month', decided_at) AS month, count(*) AS queued_over_budget
      FROM perfwatch.pager_decisions WHERE budget = 'queued' GROUP BY 1
), c AS (
    SELECT m.month,
           (SELECT coalesce(sum(s.spend_share), 0)
              FROM perfwatch.spend_weights s
             WHERE EXISTS (SELECT 1 FROM perfwatch.gate_family_results f
                             JOIN perfwatch.gate_evaluations e USING (release_id, evaluation)
                            WHERE f.family = s.model AND e.evaluated_at IS NOT NULL
                              AND date_trunc('month', e.evaluated_at) = m.month))
           / NULLIF((SELECT sum(spend_share) FROM perfwatch.spend_weights), 0) AS spend_coverage
      FROM months m
)
SELECT m.month,
       coalesce(p.pages, 0) AS pages,
       coalesce(p.triaged, 0) AS triaged,
       coalesce(p.true_pages, 0) AS true_pages,
       coalesce(p.false_pages, 0) AS false_pages,
       p.false_pages::double precision / NULLIF(p.triaged, 0) AS false_page_rate,
       coalesce(p.caught, 0) AS caught,
       coalesce(p.missed, 0) AS missed,
       coalesce(w.validated_wins, 0) AS validated_wins,
       coalesce(q.queued_over_budget, 0) AS queued_over_budget,
       p.median_verdict_s,
       c.spend_coverage
  FROM months m
  LEFT JOIN p USING (month)
  LEFT JOIN w USING (month)
  LEFT JOIN q USING (month)
  LEFT JOIN c USING (month);
COMMENT ON VIEW perfwatch.report_card_monthly IS 'the detector''s report card per calendar month (§8): pages, true/false pages and the false-page KPI, caught/missed, validated wins, findings queued over budget, median seconds to verdict, spend-weighted coverage';

-- Weeks in the month times the weekly budget is the month's false-page
-- budget; two consecutive months over it raise the review (§8).
CREATE VIEW perfwatch.threshold_review AS
WITH m AS (
    SELECT month, false_pages,
           5.0 * extract(day FROM (month + interval '1 month' - month)) / 7.0 AS budget
      FROM perfwatch.report_card_monthly
)
SELECT cur.month, cur.false_pages, prev.false_pages AS prev_false_pages, cur.budget,
       'false pages over budget two months running (' || prev.false_pages || ' then ' || cur.false_pages ||
       ' against ' || round(cur.budget, 1) || '): review thresholds and noise floors' AS finding
  FROM m cur
  JOIN m prev ON prev.month = cur.month - interval '1 month'
 WHERE cur.false_pages > cur.budget AND prev.false_pages > prev.budget;
COMMENT ON VIEW perfwatch.threshold_review IS 'threshold / noise-floor review findings: months whose false pages exceeded the budget (5 a week) as did the month before';
