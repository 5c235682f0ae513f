-- 0053_canary_report_card.sql: the report card counts a production canary's
-- rollback as a regression the gate missed (docs/pager.md, "Canary
-- rollbacks").
--
-- A canary ROLLBACK is paged with the release it rolled back (pages.release_id
-- is the rollout's release N), so report_card_monthly counted a true one as
-- "caught" (a true regression paged with a release: found before it
-- shipped). It is the opposite: the gate passed the release, it shipped to
-- the canary's replicas, and the production canary (§8: the backstop for
-- what benchmarks structurally cannot see) caught it on live traffic. A page
-- whose payload carries the canary's evidence (payload->'canary' an object)
-- now counts as missed. Only caught and missed change; the view's columns
-- are the same, so threshold_review and the dashboards read it unchanged.

CREATE OR REPLACE VIEW perfwatch.report_card_monthly AS
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
           count(*) FILTER (WHERE t.outcome = 'true_regression' AND p.release_id <> ''
                              AND jsonb_typeof(p.payload -> 'canary') IS DISTINCT FROM 'object') AS caught,
           count(*) FILTER (WHERE t.outcome = 'true_regression' AND (p.release_id = ''
                              OR jsonb_typeof(p.payload -> 'canary') = 'object')) AS missed,
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
COMMENT ON VIEW perfwatch.report_card_monthly IS 'the detector''s report card per calendar month (§8): pages, true/false pages and the false-page KPI, caught/missed (a canary rollback is missed: the gate passed it), validated wins, findings queued over budget, median seconds to verdict, spend-weighted coverage';
