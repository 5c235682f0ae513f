-- 0046_registered_changes.sql: the watcher judges a series with a registered
-- change as observed - expected (services/watcher/watch.h
-- pw_watch_series_register; common/pw_expected.h).
--
-- Registrations are the gate's perfwatch.expected_wins (GateRequest
-- expected_wins, by release and series); the watcher applies them by CL to the
-- nightlies of builds that include the CL. A shift whose CL range holds a
-- registered CL is annotated 'registered' with the registration's outcome in
-- its alert (validated win, shortfall, overshoot); a change that arrived as
-- registered without a shift of observed - expected is one row of method
-- 'registered' (a validated win), which also revises a report of the same step
-- made before the registration was known. expected_delta_pct and
-- registered_cl say which registration a row is about (0 and '' when none).
ALTER TABLE perfwatch.changepoints DROP CONSTRAINT changepoints_annotation_check;
ALTER TABLE perfwatch.changepoints ADD CONSTRAINT changepoints_annotation_check
    CHECK (annotation IN ('none', 'infra', 'frozen', 'registered'));
ALTER TABLE perfwatch.changepoints DROP CONSTRAINT changepoints_method_check;
ALTER TABLE perfwatch.changepoints ADD CONSTRAINT changepoints_method_check
    CHECK (method IN ('e_divisive', 'pelt', 'early', 'drift', 'registered'));
ALTER TABLE perfwatch.changepoints
    ADD COLUMN expected_delta_pct double precision NOT NULL DEFAULT 0,
    ADD COLUMN registered_cl text NOT NULL DEFAULT '';
-- the watcher reads a series' registrations when it loads it, and the new
-- ones every second
CREATE INDEX expected_wins_by_series ON perfwatch.expected_wins (series_key);
CREATE INDEX expected_wins_by_registered ON perfwatch.expected_wins (registered_at);

COMMENT ON COLUMN perfwatch.changepoints.annotation IS 'none (software shift), infra (a fleet change in the range), frozen (the series was frozen), registered (a registered CL in the range: judged as observed - expected)';
COMMENT ON COLUMN perfwatch.changepoints.method IS 'e_divisive, pelt, early (the early rule, until confirmed), drift, or registered (a registered change that arrived as registered: a validated win)';
COMMENT ON COLUMN perfwatch.changepoints.expected_delta_pct IS 'percent, the registered change (expected_wins, by CL) between the last clean and first shifted builds; 0 when none';
COMMENT ON COLUMN perfwatch.changepoints.registered_cl IS 'the registered CL in the range, e.g. cl/7841830; empty when none';
