-- 0011_views.sql: the read side: views the services, the CLI and Grafana query.
--
-- Views over the tables of 0001-0010, so that a dashboard or an operator
-- asks one name instead of repeating a join: the latest baseline per series,
-- series points with their key, open alerts, and the detector's own report
-- card (pages per week and false-page rate, §1 and §8). They hold no data;
-- each is served by an index named in its comment.

CREATE VIEW perfwatch.latest_baselines AS
SELECT DISTINCT ON (b.series_id)
       b.*, s.series_key, s.model, s.platform, s.config, s.metric
  FROM perfwatch.baselines b
  JOIN perfwatch.series s USING (series_id)
 ORDER BY b.series_id, b.version DESC;
COMMENT ON VIEW perfwatch.latest_baselines IS 'the newest baseline version of every series (primary key (series_id, version)); for one series add WHERE series_id = $1';

CREATE VIEW perfwatch.series_points AS
SELECT p.series_id, s.series_key, s.model, s.hlo_fingerprint, s.platform, s.config, s.metric,
       p.measured_at, p.value, p.unit, p.run_id, p.repeat_index, p.build_id, p.build_kind,
       p.compiler_cl_number, p.chip_set, p.bisect_job_id
  FROM perfwatch.samples p
  JOIN perfwatch.series s USING (series_id);
COMMENT ON VIEW perfwatch.series_points IS 'every point with its series key; Grafana time series: WHERE series_id = $1 AND measured_at BETWEEN $from AND $to (index samples_by_series_time)';

CREATE VIEW perfwatch.open_alerts AS
SELECT a.alert_id, a.kind, a.source, a.created_at, a.series_key, a.verdict, a.delta_pct, a.fdr_q,
       a.routing, a.page_route, a.owner_hint, a.release_id, a.culprit, a.status, a.summary
  FROM perfwatch.alerts a
 WHERE a.status <> 'resolved';
COMMENT ON VIEW perfwatch.open_alerts IS 'alerts not yet resolved, ORDER BY created_at DESC (partial index alerts_open)';

CREATE VIEW perfwatch.pages_weekly AS
SELECT date_trunc('week', p.created_at) AS week,
       count(*) AS pages,
       count(t.page_id) AS triaged,
       count(*) FILTER (WHERE t.outcome = 'true_regression') AS true_pages,
       count(*) FILTER (WHERE t.outcome = 'false_regression') AS false_pages,
       count(*) - count(t.page_id) AS untriaged,
       (count(*) FILTER (WHERE t.outcome = 'false_regression'))::double precision
           / NULLIF(count(t.page_id), 0) AS false_page_rate
  FROM perfwatch.pages p
  LEFT JOIN perfwatch.triage_verdicts t USING (page_id)
 GROUP BY 1;
COMMENT ON VIEW perfwatch.pages_weekly IS 'pages per ISO week (Monday 00:00 in the session time zone) against the budget of 5 false pages a week; false_page_rate = false / triaged, null when none triaged (index pages_by_created)';

CREATE VIEW perfwatch.false_page_rate_monthly AS
SELECT date_trunc('month', p.created_at) AS month,
       count(*) AS pages,
       count(t.page_id) AS triaged,
       count(*) FILTER (WHERE t.outcome = 'false_regression') AS false_pages,
       (count(*) FILTER (WHERE t.outcome = 'false_regression'))::double precision
           / NULLIF(count(t.page_id), 0) AS false_page_rate
  FROM perfwatch.pages p
  LEFT JOIN perfwatch.triage_verdicts t USING (page_id)
 GROUP BY 1;
COMMENT ON VIEW perfwatch.false_page_rate_monthly IS 'the monthly KPI of §8: two consecutive months over budget force a threshold / noise-floor review (index pages_by_created)';

CREATE VIEW perfwatch.active_freezes AS
SELECT f.series_id, s.series_key, f.event_id, c.kind, c.reason, f.frozen_at, f.frozen_version
  FROM perfwatch.freezes f
  JOIN perfwatch.series s USING (series_id)
  JOIN perfwatch.fleet_changes c USING (event_id)
 WHERE f.unfrozen_at IS NULL;
COMMENT ON VIEW perfwatch.active_freezes IS 'series frozen now, with the fleet change that froze them (partial index freezes_open)';

CREATE VIEW perfwatch.gate_history AS
SELECT g.release_id, g.evaluation, g.candidate_build_id, g.baseline_release, g.status, g.verdict,
       g.tests, g.fleet_weighted_impact_pct, g.requested_at, g.evaluated_at, g.deadline,
       g.evaluated_at - g.requested_at AS latency,
       (SELECT count(*) FROM perfwatch.gate_series_results r
         WHERE r.release_id = g.release_id AND r.evaluation = g.evaluation
           AND r.verdict IN ('blocking', 'p1')) AS regressed_series
  FROM perfwatch.gate_evaluations g;
COMMENT ON VIEW perfwatch.gate_history IS 'one line per gate evaluation with its detection latency (SLO < 24 h) (index gate_evaluations_by_requested)';
