-- 0033_changepoint_stages.sql: provisional shifts, their confirmation, and
-- drifts (issue 17; services/watcher/watch.h pw_watch_stage).
--
-- The watcher's early rule reports a shift a few nightlies after it
-- (stage 'provisional', method 'early'); PELT confirms it later under the
-- same row (stage 'confirmed', confirmed_at) or it is 'withdrawn'. A shift
-- PELT finds first is 'confirmed' at once (first_reported_at = confirmed_at).
-- A sustained drift is one row, stage 'trend', method 'drift', with its rate.
-- points_first / points_confirmed: points of the new level seen when first
-- reported and when confirmed (the detection latency in nightlies).
ALTER TABLE perfwatch.changepoints DROP CONSTRAINT changepoints_method_check;
ALTER TABLE perfwatch.changepoints ADD CONSTRAINT changepoints_method_check
    CHECK (method IN ('e_divisive', 'pelt', 'early', 'drift'));
ALTER TABLE perfwatch.changepoints
    ADD COLUMN stage text NOT NULL DEFAULT 'confirmed'
        CHECK (stage IN ('provisional', 'confirmed', 'withdrawn', 'trend')),
    ADD COLUMN first_reported_at timestamptz,
    ADD COLUMN confirmed_at timestamptz,
    ADD COLUMN points_first integer,
    ADD COLUMN points_confirmed integer,
    ADD COLUMN drift_rate_pct double precision,
    ADD COLUMN drift_total_pct double precision;
-- the watcher's restart: provisional shifts still awaiting PELT
CREATE INDEX changepoints_provisional ON perfwatch.changepoints (series_id) WHERE stage = 'provisional';

COMMENT ON COLUMN perfwatch.changepoints.method IS 'e_divisive, pelt, early (the early rule, until confirmed) or drift';
COMMENT ON COLUMN perfwatch.changepoints.stage IS 'provisional (early rule), confirmed (PELT), withdrawn (PELT did not confirm in time), trend (a drift)';
COMMENT ON COLUMN perfwatch.changepoints.first_reported_at IS 'when the shift was first reported (provisional or confirmed)';
COMMENT ON COLUMN perfwatch.changepoints.confirmed_at IS 'when PELT confirmed it; null while provisional or withdrawn';
COMMENT ON COLUMN perfwatch.changepoints.points_first IS 'points of the new level seen when first reported';
COMMENT ON COLUMN perfwatch.changepoints.points_confirmed IS 'points of the new level seen when confirmed';
COMMENT ON COLUMN perfwatch.changepoints.drift_rate_pct IS 'drift: percent per nightly';
COMMENT ON COLUMN perfwatch.changepoints.drift_total_pct IS 'drift: percent over the trend';
