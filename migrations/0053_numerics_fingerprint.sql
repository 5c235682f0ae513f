-- 0053_numerics_fingerprint.sql: the numerics fingerprint of a run (§9,
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
