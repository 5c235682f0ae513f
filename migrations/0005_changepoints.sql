-- 0005_changepoints.sql: level shifts the watcher found in nightly series.
--
-- One row per Changepoint (changepoint.proto), keyed by the series and the
-- first shifted build: re-running detection over a longer series finds the
-- same shift again and the insert does nothing. position is informative only
-- (it moves when late points are inserted); the build is the identity. The
-- bisector reads the CL range from here; Grafana overlays shifts on series.

CREATE TABLE perfwatch.changepoints (
    series_id               bigint NOT NULL REFERENCES perfwatch.series (series_id),
    first_shifted_build_id  text NOT NULL,
    changepoint_id          text NOT NULL UNIQUE,
    position                integer NOT NULL CHECK (position >= 0),
    day                     date NOT NULL,
    shift_at                timestamptz NOT NULL,
    last_clean_build_id     text NOT NULL,
    last_clean_cl           text NOT NULL,
    last_clean_cl_number    bigint NOT NULL,
    first_shifted_cl        text NOT NULL,
    first_shifted_cl_number bigint NOT NULL,
    n_cls                   integer NOT NULL CHECK (n_cls >= 0),
    level_before            double precision NOT NULL,
    level_after             double precision NOT NULL,
    unit                    text NOT NULL,
    delta_pct               double precision NOT NULL,
    p                       double precision CHECK (p IS NULL OR (p >= 0 AND p <= 1)),
    direction               text NOT NULL CHECK (direction IN ('regression', 'improvement')),
    method                  text NOT NULL CHECK (method IN ('e_divisive', 'pelt')),
    annotation              text NOT NULL DEFAULT 'none' CHECK (annotation IN ('none', 'infra', 'frozen')),
    fleet_event_id          text NOT NULL DEFAULT '',
    routing                 text NOT NULL CHECK (routing IN ('page', 'queue', 'none')),
    detected_at             timestamptz NOT NULL,
    PRIMARY KEY (series_id, first_shifted_build_id),
    CHECK (first_shifted_cl_number >= last_clean_cl_number)
);
-- Grafana: shifts of a series over time (annotations)
CREATE INDEX changepoints_by_series_time ON perfwatch.changepoints (series_id, shift_at);
-- trend queue and reports: recent shifts
CREATE INDEX changepoints_by_detected ON perfwatch.changepoints (detected_at);

COMMENT ON TABLE perfwatch.changepoints IS 'level shifts in nightly series (changepoint.proto); natural key (series_id, first_shifted_build_id); insert ON CONFLICT DO NOTHING';
COMMENT ON COLUMN perfwatch.changepoints.first_shifted_build_id IS 'first build on the new level, e.g. xla-nightly-2026-06-17';
COMMENT ON COLUMN perfwatch.changepoints.changepoint_id IS 'series_key@first_shifted_build_id, referenced by alerts and bisections';
COMMENT ON COLUMN perfwatch.changepoints.position IS '0-based index of the first shifted point in the series at detection time';
COMMENT ON COLUMN perfwatch.changepoints.day IS 'UTC date of the first shifted nightly';
COMMENT ON COLUMN perfwatch.changepoints.shift_at IS 'measured time of the first shifted point';
COMMENT ON COLUMN perfwatch.changepoints.last_clean_build_id IS 'last build on the old level';
COMMENT ON COLUMN perfwatch.changepoints.last_clean_cl IS 'head CL of the last clean build';
COMMENT ON COLUMN perfwatch.changepoints.last_clean_cl_number IS 'the same as an integer';
COMMENT ON COLUMN perfwatch.changepoints.first_shifted_cl IS 'head CL of the first shifted build';
COMMENT ON COLUMN perfwatch.changepoints.first_shifted_cl_number IS 'the same as an integer';
COMMENT ON COLUMN perfwatch.changepoints.n_cls IS 'CLs in (last_clean_cl, first_shifted_cl]';
COMMENT ON COLUMN perfwatch.changepoints.level_before IS 'median before the shift, in unit';
COMMENT ON COLUMN perfwatch.changepoints.level_after IS 'median after the shift, in unit';
COMMENT ON COLUMN perfwatch.changepoints.delta_pct IS 'percent, (after - before) / before x 100';
COMMENT ON COLUMN perfwatch.changepoints.p IS 'significance of the split';
COMMENT ON COLUMN perfwatch.changepoints.direction IS 'regression or improvement';
COMMENT ON COLUMN perfwatch.changepoints.method IS 'e_divisive or pelt';
COMMENT ON COLUMN perfwatch.changepoints.annotation IS 'none (software shift), infra (fleet change), frozen (series frozen)';
COMMENT ON COLUMN perfwatch.changepoints.fleet_event_id IS 'fleet change behind an infra or frozen annotation';
COMMENT ON COLUMN perfwatch.changepoints.routing IS 'page (top-20 series), queue, none (infra/frozen)';
COMMENT ON COLUMN perfwatch.changepoints.detected_at IS 'when the watcher found it';
