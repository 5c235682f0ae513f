-- 0007_bisections.sql: bisections, their steps and the build jobs they request.
--
-- The bisector writes a bisections row when it starts (bisect.proto
-- Bisection), one bisect_jobs row per BisectJob it publishes, and one
-- bisection_steps row per job, filled in when the job's bisect-tagged points
-- arrive. Job ids are deterministic per (bisection, step), so a bisector that
-- restarts mid-bisection re-derives the same ids and its inserts do nothing;
-- the bisections row is updated in place (status, range, culprit) as it goes.

CREATE TABLE perfwatch.bisections (
    bisection_id            text PRIMARY KEY CHECK (bisection_id <> ''),
    alert_id                text NOT NULL DEFAULT '',
    changepoint_id          text NOT NULL DEFAULT '',
    series_id               bigint NOT NULL REFERENCES perfwatch.series (series_id),
    config_hash             text NOT NULL DEFAULT '',
    range_lo                text NOT NULL,
    range_lo_number         bigint NOT NULL,
    range_hi                text NOT NULL,
    range_hi_number         bigint NOT NULL,
    n_cls                   integer NOT NULL CHECK (n_cls >= 0),
    flagged_cls             text[] NOT NULL DEFAULT '{}',
    clean_level             double precision,
    regressed_level         double precision,
    unit                    text NOT NULL,
    culprit                 text NOT NULL DEFAULT '',
    interacting_cls         text[] NOT NULL DEFAULT '{}',
    culprit_title           text NOT NULL DEFAULT '',
    culprit_owner           text NOT NULL DEFAULT '',
    verified_adjacent_clean boolean NOT NULL DEFAULT false,
    cherry_pick_reproduced  boolean NOT NULL DEFAULT false,
    confidence              text NOT NULL DEFAULT 'unverified'
                                CHECK (confidence IN ('unverified', 'adjacent_only', 'verified_both_sides', 'interaction')),
    status                  text NOT NULL CHECK (status IN ('running', 'verifying', 'done', 'escalated_pairwise', 'failed', 'cancelled')),
    builds                  integer NOT NULL DEFAULT 0 CHECK (builds >= 0),
    started_at              timestamptz NOT NULL,
    updated_at              timestamptz NOT NULL,
    CHECK (range_hi_number >= range_lo_number)
);
-- bisector restart: bisections still in flight
CREATE INDEX bisections_active ON perfwatch.bisections (started_at) WHERE status IN ('running', 'verifying', 'escalated_pairwise');
-- pager and attributor: the bisection of an alert
CREATE INDEX bisections_by_alert ON perfwatch.bisections (alert_id) WHERE alert_id <> '';
-- bisector dedup: one bisection per changepoint
CREATE INDEX bisections_by_changepoint ON perfwatch.bisections (changepoint_id) WHERE changepoint_id <> '';

COMMENT ON TABLE perfwatch.bisections IS 'one row per bisection (bisect.proto Bisection); natural key bisection_id; inserted ON CONFLICT DO NOTHING, then updated in place as steps land';
COMMENT ON COLUMN perfwatch.bisections.alert_id IS 'alert that started it; empty when started from a changepoint only';
COMMENT ON COLUMN perfwatch.bisections.changepoint_id IS 'changepoint that bounded the range';
COMMENT ON COLUMN perfwatch.bisections.config_hash IS 'exact config reproduced';
COMMENT ON COLUMN perfwatch.bisections.range_lo IS 'last known clean CL (exclusive)';
COMMENT ON COLUMN perfwatch.bisections.range_lo_number IS 'the same as an integer';
COMMENT ON COLUMN perfwatch.bisections.range_hi IS 'first known regressed CL (inclusive)';
COMMENT ON COLUMN perfwatch.bisections.range_hi_number IS 'the same as an integer';
COMMENT ON COLUMN perfwatch.bisections.n_cls IS 'CLs in the range at start';
COMMENT ON COLUMN perfwatch.bisections.flagged_cls IS 'CLs the cost-model filter marked perf-relevant';
COMMENT ON COLUMN perfwatch.bisections.clean_level IS 'before level, in unit';
COMMENT ON COLUMN perfwatch.bisections.regressed_level IS 'after level, in unit';
COMMENT ON COLUMN perfwatch.bisections.culprit IS 'culprit CL; empty until found';
COMMENT ON COLUMN perfwatch.bisections.interacting_cls IS 'CLs that regress only together (confidence interaction)';
COMMENT ON COLUMN perfwatch.bisections.culprit_title IS 'CL description';
COMMENT ON COLUMN perfwatch.bisections.culprit_owner IS 'author team';
COMMENT ON COLUMN perfwatch.bisections.verified_adjacent_clean IS 'culprit - 1 re-tested clean';
COMMENT ON COLUMN perfwatch.bisections.cherry_pick_reproduced IS 'culprit alone on the pre-range base reproduced';
COMMENT ON COLUMN perfwatch.bisections.confidence IS 'unverified, adjacent_only, verified_both_sides, interaction';
COMMENT ON COLUMN perfwatch.bisections.status IS 'running, verifying, done, escalated_pairwise, failed, cancelled';
COMMENT ON COLUMN perfwatch.bisections.builds IS 'compiler builds spent';
COMMENT ON COLUMN perfwatch.bisections.started_at IS 'when the bisection started';
COMMENT ON COLUMN perfwatch.bisections.updated_at IS 'last step change';

CREATE TABLE perfwatch.bisect_jobs (
    job_id          text PRIMARY KEY CHECK (job_id <> ''),
    bisection_id    text NOT NULL REFERENCES perfwatch.bisections (bisection_id) ON DELETE CASCADE,
    purpose         text NOT NULL CHECK (purpose IN ('step', 'verify_adjacent', 'verify_cherry_pick', 'pairwise', 'endpoint')),
    series_id       bigint NOT NULL REFERENCES perfwatch.series (series_id),
    model_rev       text NOT NULL DEFAULT '',
    firmware        text NOT NULL DEFAULT '',
    cl              text NOT NULL,
    cl_number       bigint NOT NULL,
    base_cl         text NOT NULL DEFAULT '',
    cherry_picks    text[] NOT NULL DEFAULT '{}',
    repeats         integer NOT NULL CHECK (repeats >= 1),
    requested_at    timestamptz NOT NULL
);
CREATE INDEX bisect_jobs_by_bisection ON perfwatch.bisect_jobs (bisection_id);

COMMENT ON TABLE perfwatch.bisect_jobs IS 'one row per BisectJob published; natural key job_id (deterministic per bisection and step)';
COMMENT ON COLUMN perfwatch.bisect_jobs.purpose IS 'step, verify_adjacent, verify_cherry_pick, pairwise, endpoint';
COMMENT ON COLUMN perfwatch.bisect_jobs.series_id IS 'the alerting series whose exact config is reproduced';
COMMENT ON COLUMN perfwatch.bisect_jobs.model_rev IS 'model revision to run';
COMMENT ON COLUMN perfwatch.bisect_jobs.firmware IS 'firmware to run on';
COMMENT ON COLUMN perfwatch.bisect_jobs.cl IS 'CL to build the compiler at';
COMMENT ON COLUMN perfwatch.bisect_jobs.cl_number IS 'the same as an integer';
COMMENT ON COLUMN perfwatch.bisect_jobs.base_cl IS 'pre-range base CL for cherry-pick / pairwise jobs';
COMMENT ON COLUMN perfwatch.bisect_jobs.cherry_picks IS 'CLs applied on base_cl';
COMMENT ON COLUMN perfwatch.bisect_jobs.repeats IS 'repeats to run';
COMMENT ON COLUMN perfwatch.bisect_jobs.requested_at IS 'when published';

CREATE TABLE perfwatch.bisection_steps (
    bisection_id    text NOT NULL REFERENCES perfwatch.bisections (bisection_id) ON DELETE CASCADE,
    step_index      integer NOT NULL CHECK (step_index >= 0),
    job_id          text NOT NULL UNIQUE REFERENCES perfwatch.bisect_jobs (job_id),
    purpose         text NOT NULL CHECK (purpose IN ('step', 'verify_adjacent', 'verify_cherry_pick', 'pairwise', 'endpoint')),
    cl              text NOT NULL,
    cl_number       bigint NOT NULL,
    median          double precision,
    spread          double precision,
    n               integer NOT NULL DEFAULT 0 CHECK (n >= 0),
    outcome         text NOT NULL DEFAULT 'pending' CHECK (outcome IN ('pending', 'clean', 'regressed', 'inconclusive')),
    started_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    range_lo        text NOT NULL DEFAULT '',
    range_hi        text NOT NULL DEFAULT '',
    range_n_cls     integer,
    PRIMARY KEY (bisection_id, step_index),
    CHECK (outcome = 'pending' OR finished_at IS NOT NULL)
);

COMMENT ON TABLE perfwatch.bisection_steps IS 'one line of artifact 4 (bisect.proto BisectStep); natural key (bisection_id, step_index); inserted pending, updated once with the outcome';
COMMENT ON COLUMN perfwatch.bisection_steps.step_index IS '0-based step number';
COMMENT ON COLUMN perfwatch.bisection_steps.job_id IS 'the job measured';
COMMENT ON COLUMN perfwatch.bisection_steps.cl IS 'CL built';
COMMENT ON COLUMN perfwatch.bisection_steps.median IS 'median of the repeats, in the bisection unit';
COMMENT ON COLUMN perfwatch.bisection_steps.spread IS 'half-width (max - min) / 2 of the repeats, in unit';
COMMENT ON COLUMN perfwatch.bisection_steps.n IS 'repeats measured';
COMMENT ON COLUMN perfwatch.bisection_steps.outcome IS 'pending, clean, regressed, inconclusive';
COMMENT ON COLUMN perfwatch.bisection_steps.started_at IS 'job published';
COMMENT ON COLUMN perfwatch.bisection_steps.finished_at IS 'last result in';
COMMENT ON COLUMN perfwatch.bisection_steps.range_lo IS 'remaining range after the step: exclusive low CL';
COMMENT ON COLUMN perfwatch.bisection_steps.range_hi IS 'remaining range after the step: inclusive high CL';
COMMENT ON COLUMN perfwatch.bisection_steps.range_n_cls IS 'CLs left after the step';
