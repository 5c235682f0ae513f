-- 0018_baseliner_excursion_points.sql: outliers that continue an excursion.
--
-- A point beyond outlier_k sigma of its series' baseline is kept out of the
-- window. The first of a run of such points on one side of the median raises
-- a bl-outlier infra-health alert (perfwatch.alerts); the ones that follow it
-- on the same side are the same excursion — a level shift such as a real
-- regression, which the watcher calls — and raise none: a regression in the
-- nightlies used to raise one alert per series per night. They are recorded
-- here instead, so that the window re-filled after a restart leaves them out
-- too (it leaves out points with a bl-outlier alert or a row here), and so
-- that `perfwatch` and Grafana can show how long an excursion has lasted.

CREATE TABLE perfwatch.baseliner_excursion_points (
    series_id         bigint NOT NULL REFERENCES perfwatch.series (series_id),
    run_id            text NOT NULL,
    repeat_index      integer NOT NULL,
    measured_at       timestamptz NOT NULL,
    value             double precision NOT NULL,
    z_robust          double precision NOT NULL,
    baseline_version  integer,
    kept_out_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (series_id, run_id, repeat_index)
);

COMMENT ON TABLE perfwatch.baseliner_excursion_points IS 'points beyond outlier_k sigma that continue an excursion (the previous point of the series was an outlier on the same side): kept out of the baseline window like an outlier, without an alert of their own; written by the baseliner, insert ON CONFLICT DO NOTHING';
COMMENT ON COLUMN perfwatch.baseliner_excursion_points.z_robust IS '(value - baseline median) / baseline sigma, as for a bl-outlier alert';
COMMENT ON COLUMN perfwatch.baseliner_excursion_points.baseline_version IS 'the baseline version the point was compared with';
