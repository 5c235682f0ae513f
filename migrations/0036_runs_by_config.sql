-- 0036_runs_by_config.sql: the runs of one run configuration, by CL.
--
-- The bisector asks, for every unconfirmed outlier it takes and for every
-- range it traces back, for the last nightly CL of a run configuration
-- (model, platform, config, fingerprint) below a CL. Without an index the
-- planner walked runs_by_finished over every earlier run: 0.4 s an alert at
-- 154,000 runs (the fault harness at --models 56), so a 500-alert batch took
-- minutes and the bisector was the stack's slowest consumer; with it, 1 ms.
CREATE INDEX runs_by_config ON perfwatch.runs (model, platform, config, hlo_fingerprint, compiler_cl_number);
