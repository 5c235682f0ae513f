-- 0043_gate_waiting.sql: what a pending release waits for, what a decided
-- one lacked, and re-decisions on late data.
--
-- The gate decided early after an ingester stall: a series the baseliner
-- still reported baselining, and a named family without any series yet, were
-- waited for only gate.min_wait after the request arrived, so a release whose
-- runs reached PostgreSQL after that was decided on half its data
-- (INSUFFICIENT_DATA, "2 families, 0 tests", minutes before its deadline) and
-- never looked at again. Now a release that has not received its candidates
-- waits for its deadline, and says so (`perfwatch gate show`); one decided at
-- its deadline with something lacking is watched, and re-decided as a new
-- evaluation when late data arrives (docs/gate.md, "The waiting rule").
ALTER TABLE perfwatch.gate_evaluations
    ADD COLUMN waiting    text NOT NULL DEFAULT '',
    ADD COLUMN waiting_at timestamptz,
    ADD COLUMN lacking    integer NOT NULL DEFAULT 0 CHECK (lacking >= 0),
    ADD COLUMN seen       bigint NOT NULL DEFAULT 0 CHECK (seen >= 0),
    ADD COLUMN late_of    integer CHECK (late_of IS NULL OR late_of >= 1);

COMMENT ON COLUMN perfwatch.gate_evaluations.waiting IS
    'pending: what the gate waits for at its last look ("waiting: 12 of 77 series short of candidate runs ..."); done: what the release lacked when decided ("complete" when nothing)';
COMMENT ON COLUMN perfwatch.gate_evaluations.waiting_at IS
    'when waiting was last written';
COMMENT ON COLUMN perfwatch.gate_evaluations.lacking IS
    'done: series and families the data still lacked when decided (0 = complete); > 0 keeps the release watched for late data for gate.late_window';
COMMENT ON COLUMN perfwatch.gate_evaluations.seen IS
    'done: the data decided on, candidate runs + series + active series; late data is more than this';
COMMENT ON COLUMN perfwatch.gate_evaluations.late_of IS
    'the evaluation this one re-decides on late data (the gate created it); NULL for a request''s own';

-- the gate: decided releases watched for late data
CREATE INDEX gate_evaluations_lacking ON perfwatch.gate_evaluations (evaluated_at)
    WHERE status = 'done' AND lacking > 0;
