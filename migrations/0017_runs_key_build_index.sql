-- 0017_runs_key_build_index.sql: runs loses runs_by_key_build.
--
-- runs_by_key_build (model, hlo_fingerprint, platform, config, build_id) was
-- kept for one question: "the runs of one run key on one build" (the
-- attributor's before/after pair). Every run inserted paid for it: five text
-- columns compared along each descent, the widest entry of any index, and
-- about a third of the runs COPY (131,040 runs into an empty table on the
-- dev stack: 2.8-3.0 s with it, 1.7-2.4 s without). The same question is
-- answered by samples_by_series_build: a run key's series (the attributor
-- starts from a regressed series) on a build gives the run ids, and runs'
-- primary key gives the runs:
--
--   SELECT r.* FROM perfwatch.samples s
--     JOIN perfwatch.runs r USING (run_id, repeat_index)
--    WHERE s.series_id = $1 AND s.build_id = $2;

DROP INDEX perfwatch.runs_by_key_build;
COMMENT ON TABLE perfwatch.runs IS 'one row per RunResult (run.proto); natural key (run_id, repeat_index); insert ON CONFLICT DO NOTHING, compare payload_sha256 to detect conflicting redeliveries; the runs of a run key on a build are found through samples_by_series_build (0017)';
