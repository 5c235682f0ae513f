-- 0023_bisector.sql: what the bisector stores beyond migration 0007.
--
-- bisection_steps and bisect_jobs accept the roll lane's purpose
-- ('roll_step', a build cl/N@K inside a roll culprit); bisections carry the
-- extension fields of bisect.proto (28-38): the reason of a FAILED bisection
-- or the notes of a finished one, the cost-model fallback, the roll lane's
-- upstream commit, the event's other alerts, and the builds by kind.
-- bisection_samples keeps each step's measured values, so that a restarted
-- bisector re-applies its stored steps (bisect.h: the state is a fold over
-- them) and resumes without publishing a job twice. bisector_events makes
-- one bisection per event: the first alert of an event inserts the row, the
-- 23 correlated others find it.

ALTER TABLE perfwatch.bisect_jobs DROP CONSTRAINT bisect_jobs_purpose_check;
ALTER TABLE perfwatch.bisect_jobs ADD CONSTRAINT bisect_jobs_purpose_check
    CHECK (purpose IN ('step', 'verify_adjacent', 'verify_cherry_pick', 'pairwise', 'endpoint', 'roll_step'));
ALTER TABLE perfwatch.bisect_jobs ADD COLUMN upstream_k bigint NOT NULL DEFAULT -1;
ALTER TABLE perfwatch.bisect_jobs ADD COLUMN step_index integer;
ALTER TABLE perfwatch.bisect_jobs ADD COLUMN reissued integer NOT NULL DEFAULT 0 CHECK (reissued >= 0);
COMMENT ON COLUMN perfwatch.bisect_jobs.upstream_k IS 'roll_step: the roll cut after its first K upstream commits; -1 otherwise';
COMMENT ON COLUMN perfwatch.bisect_jobs.step_index IS 'the step the job measures';
COMMENT ON COLUMN perfwatch.bisect_jobs.reissued IS 'times re-published after the job timed out';

ALTER TABLE perfwatch.bisection_steps DROP CONSTRAINT bisection_steps_purpose_check;
ALTER TABLE perfwatch.bisection_steps ADD CONSTRAINT bisection_steps_purpose_check
    CHECK (purpose IN ('step', 'verify_adjacent', 'verify_cherry_pick', 'pairwise', 'endpoint', 'roll_step'));

ALTER TABLE perfwatch.bisections ADD COLUMN reason text NOT NULL DEFAULT '';
ALTER TABLE perfwatch.bisections ADD COLUMN full_range_fallback boolean NOT NULL DEFAULT false;
ALTER TABLE perfwatch.bisections ADD COLUMN culprit_upstream text NOT NULL DEFAULT '';
ALTER TABLE perfwatch.bisections ADD COLUMN culprit_upstream_index bigint NOT NULL DEFAULT -1;
ALTER TABLE perfwatch.bisections ADD COLUMN correlated_series text[] NOT NULL DEFAULT '{}';
ALTER TABLE perfwatch.bisections ADD COLUMN correlated_alert_ids text[] NOT NULL DEFAULT '{}';
ALTER TABLE perfwatch.bisections ADD COLUMN builds_search integer NOT NULL DEFAULT 0;
ALTER TABLE perfwatch.bisections ADD COLUMN builds_verify integer NOT NULL DEFAULT 0;
ALTER TABLE perfwatch.bisections ADD COLUMN builds_pairwise integer NOT NULL DEFAULT 0;
ALTER TABLE perfwatch.bisections ADD COLUMN builds_roll integer NOT NULL DEFAULT 0;
ALTER TABLE perfwatch.bisections ADD COLUMN metric text NOT NULL DEFAULT '';
ALTER TABLE perfwatch.bisections ADD COLUMN finished_at timestamptz;
COMMENT ON COLUMN perfwatch.bisections.reason IS 'failed: why; otherwise notes (cost-model fallback, roll budget)';
COMMENT ON COLUMN perfwatch.bisections.full_range_fallback IS 'no flagged CL reproduced: every CL searched';
COMMENT ON COLUMN perfwatch.bisections.culprit_upstream IS 'roll culprit: the upstream commit, cl/N@K';
COMMENT ON COLUMN perfwatch.bisections.culprit_upstream_index IS 'its 0-based index in the roll; -1 none';
COMMENT ON COLUMN perfwatch.bisections.correlated_series IS 'the event''s other alerting series';
COMMENT ON COLUMN perfwatch.bisections.correlated_alert_ids IS 'the event''s other alerts';
COMMENT ON COLUMN perfwatch.bisections.builds_search IS 'endpoint and search builds';
COMMENT ON COLUMN perfwatch.bisections.builds_verify IS 'verification builds';
COMMENT ON COLUMN perfwatch.bisections.builds_pairwise IS 'pairwise interaction builds';
COMMENT ON COLUMN perfwatch.bisections.builds_roll IS 'roll lane builds';
COMMENT ON COLUMN perfwatch.bisections.metric IS 'metric judged';
COMMENT ON COLUMN perfwatch.bisections.finished_at IS 'done or failed at; time to culprit = finished_at - started_at';

CREATE TABLE perfwatch.bisection_samples (
    job_id        text NOT NULL REFERENCES perfwatch.bisect_jobs (job_id) ON DELETE CASCADE,
    repeat_index  integer NOT NULL CHECK (repeat_index >= 0),
    value         double precision NOT NULL CHECK (value = value AND value NOT IN ('Infinity', '-Infinity')),
    run_id        text NOT NULL DEFAULT '',
    PRIMARY KEY (job_id, repeat_index)
);
COMMENT ON TABLE perfwatch.bisection_samples IS 'the values measured for a bisect job, one per repeat; natural key (job_id, repeat_index); ON CONFLICT DO NOTHING';
COMMENT ON COLUMN perfwatch.bisection_samples.value IS 'the judged metric, in the bisection unit';
COMMENT ON COLUMN perfwatch.bisection_samples.run_id IS 'RunResult that carried it';

CREATE TABLE perfwatch.bisector_events (
    event_key     text PRIMARY KEY CHECK (event_key <> ''),
    bisection_id  text NOT NULL REFERENCES perfwatch.bisections (bisection_id) ON DELETE CASCADE,
    alert_ids     text[] NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE perfwatch.bisector_events IS 'one row per regression event (its regressed head CL and family): the one bisection its alerts share';
COMMENT ON COLUMN perfwatch.bisector_events.alert_ids IS 'every alert of the event seen so far';
