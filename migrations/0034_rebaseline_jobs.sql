-- 0034_rebaseline_jobs.sql: the executor job that asks for a frozen series'
-- re-baseline runs (issue 17).
--
-- A fleet-change freeze opens a row in perfwatch.rebaseline_requests (0030)
-- and, in the same transaction, puts a BisectJob of purpose REBASELINE
-- (bisect.proto) into the outbox: min_runs repeats of the series' latest
-- nightly build on the changed fleet, spread over min_chipsets chip sets.
-- The metrics of one run configuration (model, fingerprint, platform,
-- config) are one run, so their series share one job: job_id is derived
-- from the event and the run configuration, and only the first request of a
-- job publishes it. The runs come back nightly-kind with
-- RunResult.rebaseline_job_id = job_id (not bisect_job_id), and the
-- baseliner takes them into the re-baseline window. samples keeps the job id
-- (the ingester writes it), so that readers of the nightly line that must
-- not see them (the watcher's reload) can tell them apart.
ALTER TABLE perfwatch.rebaseline_requests
    ADD COLUMN job_id text NOT NULL DEFAULT '',
    ADD COLUMN job_runs integer NOT NULL DEFAULT 0 CHECK (job_runs >= 0);
ALTER TABLE perfwatch.samples
    ADD COLUMN rebaseline_job_id text NOT NULL DEFAULT '';
COMMENT ON COLUMN perfwatch.samples.rebaseline_job_id IS 'RunResult.rebaseline_job_id: a nightly-build run a fleet-change freeze asked for (issue 17); empty otherwise';
CREATE INDEX rebaseline_requests_by_job ON perfwatch.rebaseline_requests (job_id) WHERE job_id <> '';
COMMENT ON COLUMN perfwatch.rebaseline_requests.job_id IS 'BisectJob.job_id (purpose REBASELINE) asking for the runs, shared by the metrics of one run configuration; empty when none was asked (baseliner.rebaseline_request off, or no nightly build known)';
COMMENT ON COLUMN perfwatch.rebaseline_requests.job_runs IS 'runs the job asks for (the window rule''s min_runs)';

-- the same view with the job (columns appended)
CREATE OR REPLACE VIEW perfwatch.rebaseline_pending AS
SELECT r.series_id, s.series_key, r.event_id, r.requested_at, r.frozen_since,
       now() - r.frozen_since AS freeze_age,
       r.runs_needed, coalesce(b.window_n, 0) AS runs_have,
       greatest(r.runs_needed - coalesce(b.window_n, 0), 0) AS runs_missing,
       r.chip_sets_needed, r.days_needed, b.window_need, b.platform, b.cell,
       r.job_id, r.job_runs
  FROM perfwatch.rebaseline_requests r
  JOIN perfwatch.series s USING (series_id)
  LEFT JOIN perfwatch.baseliner_series b USING (series_id)
 WHERE r.status = 'open';
