-- 0030_changepoint_stages.sql: provisional shifts, their confirmation, and
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

-- Re-baseline requests (issue 17): a fleet change that freezes a series asks
-- the fleet for the runs its re-baseline needs (§4.2: min_runs over
-- min_days on min_chip_sets chip sets), so that a frozen series is not left
-- ungated for a month at one nightly a day. The baseliner inserts one row
-- per (series, event) with its freeze and closes it when the series
-- unfreezes. The fleet tooling reads perfwatch.rebaseline_pending: what is
-- open, since when, and how many runs are still missing.
CREATE TABLE perfwatch.rebaseline_requests (
    series_id         bigint NOT NULL REFERENCES perfwatch.series (series_id),
    event_id          text NOT NULL,
    requested_at      timestamptz NOT NULL DEFAULT now(),
    frozen_since      timestamptz NOT NULL,
    runs_needed       integer NOT NULL CHECK (runs_needed >= 1),
    chip_sets_needed  integer NOT NULL CHECK (chip_sets_needed >= 1),
    days_needed       double precision NOT NULL CHECK (days_needed >= 0),
    status            text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done')),
    done_at           timestamptz,
    done_version      integer,
    PRIMARY KEY (series_id, event_id),
    CHECK (status = 'open' OR done_at IS NOT NULL)
);
CREATE INDEX rebaseline_requests_open ON perfwatch.rebaseline_requests (requested_at) WHERE status = 'open';
COMMENT ON TABLE perfwatch.rebaseline_requests IS 'runs a frozen series needs for its re-baseline, asked of the fleet tooling; one row per (series, fleet change)';
COMMENT ON COLUMN perfwatch.rebaseline_requests.frozen_since IS 'when the fleet change took effect';
COMMENT ON COLUMN perfwatch.rebaseline_requests.runs_needed IS 'points the re-baseline window needs (baseliner.min_runs)';
COMMENT ON COLUMN perfwatch.rebaseline_requests.chip_sets_needed IS 'distinct chip sets it must cover (baseliner.min_chipsets)';
COMMENT ON COLUMN perfwatch.rebaseline_requests.days_needed IS 'days it must span (baseliner.min_days)';
COMMENT ON COLUMN perfwatch.rebaseline_requests.status IS 'open until the series unfreezes, then done';

CREATE VIEW perfwatch.rebaseline_pending AS
SELECT r.series_id, s.series_key, r.event_id, r.requested_at, r.frozen_since,
       now() - r.frozen_since AS freeze_age,
       r.runs_needed, coalesce(b.window_n, 0) AS runs_have,
       greatest(r.runs_needed - coalesce(b.window_n, 0), 0) AS runs_missing,
       r.chip_sets_needed, r.days_needed, b.window_need, b.platform, b.cell
  FROM perfwatch.rebaseline_requests r
  JOIN perfwatch.series s USING (series_id)
  LEFT JOIN perfwatch.baseliner_series b USING (series_id)
 WHERE r.status = 'open';
COMMENT ON VIEW perfwatch.rebaseline_pending IS 'open re-baseline requests with the freeze age and the runs still missing (the fleet tooling reads it)';
