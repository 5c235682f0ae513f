-- 0048_plan_weeks.sql: the planner's coverage per week (docs/planner.md,
-- seed §5): the chip-hour line of each tier summed over the week's plans
-- (T0 from its nightlies, T1, T2, the rotation and the reserve from its RC),
-- their total against the naive matrix, the RC's spend coverage, the
-- nightlies' pruning and the models measured in the 28 days to the week's
-- end. `perfwatch coverage`, the report card and the Grafana panel read it.

CREATE VIEW perfwatch.plan_weeks AS
WITH p AS (
    SELECT plan_id, date_trunc('week', day::timestamp)::date AS week, day, kind, sweep_id, spend_coverage,
           naive_chip_hours_week, t0_candidates, t0_pruned, models
      FROM perfwatch.plans
), l AS (
    SELECT p.week,
           sum(l.chip_hours) FILTER (WHERE l.tier = 'T0') AS t0,
           sum(l.planned_chip_hours) FILTER (WHERE l.tier = 'T0') AS t0_planned,
           sum(l.chip_hours) FILTER (WHERE l.tier = 'T1') AS t1,
           sum(l.chip_hours) FILTER (WHERE l.tier = 'T2') AS t2,
           sum(l.chip_hours) FILTER (WHERE l.tier = 'tail') AS tail,
           sum(l.chip_hours) FILTER (WHERE l.tier = 'reserve') AS reserve,
           sum(l.chip_hours) AS total
      FROM p JOIN perfwatch.plan_lines l USING (plan_id)
     GROUP BY p.week
), a AS (
    SELECT week,
           count(*) FILTER (WHERE kind = 'nightly') AS nightlies,
           count(*) FILTER (WHERE kind = 'rc') AS rcs,
           min(spend_coverage) FILTER (WHERE kind = 'rc') AS spend_coverage,
           (array_agg(sweep_id ORDER BY day DESC) FILTER (WHERE kind = 'rc'))[1] AS rc_sweep,
           max(naive_chip_hours_week) AS naive_chip_hours,
           sum(t0_candidates) AS t0_candidates,
           sum(t0_pruned) AS t0_pruned,
           max(models) AS models
      FROM p
     GROUP BY week
)
SELECT a.week, a.nightlies, a.rcs, a.rc_sweep, a.spend_coverage,
       coalesce(l.t0, 0) AS t0_chip_hours, coalesce(l.t0_planned, 0) AS t0_planned_chip_hours,
       coalesce(l.t1, 0) AS t1_chip_hours, coalesce(l.t2, 0) AS t2_chip_hours,
       coalesce(l.tail, 0) AS tail_chip_hours, coalesce(l.reserve, 0) AS reserve_chip_hours,
       coalesce(l.total, 0) AS chip_hours, a.naive_chip_hours,
       coalesce(l.total, 0) / NULLIF(a.naive_chip_hours, 0) AS naive_ratio,
       a.t0_candidates, a.t0_pruned,
       a.t0_pruned::double precision / NULLIF(a.t0_candidates, 0) AS t0_pruned_ratio,
       a.models,
       (SELECT count(DISTINCT i.model) FROM perfwatch.plan_items i JOIN perfwatch.plans q USING (plan_id)
         WHERE q.day > a.week + 6 - 28 AND q.day <= a.week + 6) AS measured_28d
  FROM a LEFT JOIN l USING (week);

COMMENT ON VIEW perfwatch.plan_weeks IS 'per week (Monday): the plans'' chip-hour lines by tier, their total against the naive matrix, the RC''s spend coverage, nightly pruning, models measured in the 28 days to the week''s end';
