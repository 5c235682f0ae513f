-- 0055_numerics_fingerprint.sql: the numerics fingerprint of a run (§9,
-- "faster but wrong"; RunResult.numerics_fingerprint) and the gate's check of
-- it per series (GateSeriesResult.numerics*, docs/gate.md).
--
-- runs.numerics_fingerprint: '' when the harness computed none; else 16 to 64
-- lower-case hex digits (the ingester dead-letters anything else).
-- gate_series_results.numerics: 'match', 'mismatch', 'not_checked', or NULL
-- for a series the gate did not test (and rows written before this).

ALTER TABLE perfwatch.runs
    ADD COLUMN numerics_fingerprint text NOT NULL DEFAULT ''
        CHECK (numerics_fingerprint = '' OR numerics_fingerprint ~ '^([0-9a-f]{2}){8,32}$');

ALTER TABLE perfwatch.gate_series_results
    ADD COLUMN numerics text CHECK (numerics IN ('match', 'mismatch', 'not_checked')),
    ADD COLUMN baseline_numerics_fingerprint text NOT NULL DEFAULT '',
    ADD COLUMN candidate_numerics_fingerprint text NOT NULL DEFAULT '',
    ADD COLUMN numerics_reason text NOT NULL DEFAULT '';

COMMENT ON COLUMN perfwatch.runs.numerics_fingerprint IS
    'RunResult.numerics_fingerprint: digest of the model outputs on the harness''s fixed evaluation set (16-64 lower-case hex digits), '''' when not computed; the gate''s faster-but-wrong check (§9)';
COMMENT ON COLUMN perfwatch.gate_series_results.numerics IS
    'the faster-but-wrong check of a tested series: match, mismatch, not_checked (a run without a fingerprint); NULL when untested';
COMMENT ON COLUMN perfwatch.gate_series_results.baseline_numerics_fingerprint IS
    'the fingerprint most of the baseline runs carry; '''' when none (or a tie)';
COMMENT ON COLUMN perfwatch.gate_series_results.candidate_numerics_fingerprint IS
    'the differing candidate fingerprint on a mismatch, else the candidate''s; '''' when none';
COMMENT ON COLUMN perfwatch.gate_series_results.numerics_reason IS
    '"numerics changed: faster but wrong" when the check made a win BLOCKING; '''' otherwise';
