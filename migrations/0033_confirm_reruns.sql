-- 0033_confirm_reruns.sql: confirmation reruns of unconfirmed outliers (issue 17).
--
-- The baseliner's outlier alert that no infra cause explains (kind
-- 'unconfirmed') is rerun by the bisector: one CONFIRM BisectJob per outlier
-- run (the same nightly build, the exact config, bisector.confirm_repeats
-- repeats), shared by the alerts of that run's metrics. When the repeats are
-- in, each alert is decided (common/pw_confirm.h) and published again as the
-- next revision of the same alert_id: a regression or improvement routed to
-- its owner with the one-day CL range (reproduced), or an infra-health
-- outlier (not reproduced). Reruns are budgeted per data day
-- (bisector.confirm_budget runs); over budget the alert stays unconfirmed
-- and its revision says so.
CREATE TABLE perfwatch.confirm_jobs (
    job_id          text PRIMARY KEY CHECK (job_id <> ''),
    run_id          text NOT NULL UNIQUE,          -- the outlier point's run
    series_key      text NOT NULL,                 -- the first alert's series (the job's target)
    model           text NOT NULL,
    model_rev       text NOT NULL,
    hlo_fingerprint text NOT NULL,
    platform        text NOT NULL,
    config          text NOT NULL,
    firmware        text NOT NULL,
    metric          text NOT NULL,
    config_hash     text NOT NULL DEFAULT '',
    cl              text NOT NULL,                 -- the nightly's CL, rebuilt
    cl_number       bigint NOT NULL,
    prev_cl_number  bigint NOT NULL,               -- the previous nightly's CL (0: none known)
    point_at        timestamptz NOT NULL,          -- the outlier point (data time)
    data_at         timestamptz NOT NULL,          -- the reruns' modelled start (data time)
    repeats         integer NOT NULL CHECK (repeats >= 1),
    budget_day      date NOT NULL,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done')),
    requested_at    timestamptz NOT NULL DEFAULT now(),
    reissued        integer NOT NULL DEFAULT 0,
    finished_at     timestamptz
);
CREATE INDEX confirm_jobs_pending ON perfwatch.confirm_jobs (requested_at) WHERE status = 'pending';

CREATE TABLE perfwatch.confirm_alerts (
    alert_id        text PRIMARY KEY CHECK (alert_id <> ''),
    job_id          text REFERENCES perfwatch.confirm_jobs (job_id),  -- NULL: over budget
    run_id          text NOT NULL,
    series_id       bigint NOT NULL REFERENCES perfwatch.series (series_id),
    topic_key       text NOT NULL,
    revision        integer NOT NULL,              -- the revision received
    payload         bytea NOT NULL,                -- the alert as received
    baseline_median double precision NOT NULL,
    point_value     double precision NOT NULL,
    range_lo_number bigint NOT NULL DEFAULT 0,     -- the CL of the series' last nightly point inside the band before it (0: none)
    range_hi_number bigint NOT NULL DEFAULT 0,     -- the first nightly beyond the band after it, on the point's side (<= the point's CL)
    band_lo         double precision NOT NULL,
    band_hi         double precision NOT NULL,
    outcome         text NOT NULL DEFAULT 'pending'
                        CHECK (outcome IN ('pending', 'reproduced', 'not_reproduced', 'over_budget')),
    rerun_median    double precision,
    rerun_n         integer,
    confirmed_data_at timestamptz,                 -- the last rerun's finish (data time)
    published_revision integer,
    bisection_id    text NOT NULL DEFAULT '',
    received_at     timestamptz NOT NULL DEFAULT now(),
    decided_at      timestamptz
);
CREATE INDEX confirm_alerts_job ON perfwatch.confirm_alerts (job_id);

CREATE TABLE perfwatch.confirm_budget (
    day             date PRIMARY KEY,
    runs_used       integer NOT NULL DEFAULT 0 CHECK (runs_used >= 0),
    jobs            integer NOT NULL DEFAULT 0,
    refused         integer NOT NULL DEFAULT 0     -- alerts left unconfirmed for want of budget
);

ALTER TABLE perfwatch.alerts
    ADD COLUMN confirm_outcome text NOT NULL DEFAULT ''
        CHECK (confirm_outcome IN ('', 'pending', 'reproduced', 'not_reproduced', 'over_budget')),
    ADD COLUMN confirm_job_id text NOT NULL DEFAULT '';

COMMENT ON TABLE perfwatch.confirm_jobs IS 'CONFIRM BisectJobs: one rerun of an outlier run''s nightly build at its exact config';
COMMENT ON TABLE perfwatch.confirm_alerts IS 'unconfirmed outlier alerts the bisector reruns, and what the rerun decided';
COMMENT ON TABLE perfwatch.confirm_budget IS 'rerun runs spent per data day (bisector.confirm_budget)';
COMMENT ON COLUMN perfwatch.alerts.confirm_outcome IS 'baseliner outliers: pending, reproduced, not_reproduced or over_budget once the bisector took it';
COMMENT ON COLUMN perfwatch.alerts.confirm_job_id IS 'the CONFIRM job that reran the outlier''s build';
