-- 0045_gate_under_powered.sql: the gate reports a series tested with fewer
-- candidate runs than its noise needs (§4.5) as under_powered.
--
-- The gate waits for the required n a series' baseline published (0041) when
-- the request did not say what was scheduled, and reports a series tested
-- with fewer runs, and nothing significant, as UNDER_POWERED, never as
-- within noise. It stores the n it used and the tier's MDE beside the MDE
-- the series was certified at (4% on a GPU-class platform), and counts the
-- under-powered series per family.
ALTER TABLE perfwatch.gate_series_results
    ADD COLUMN required_n   integer CHECK (required_n IS NULL OR required_n >= 1),
    ADD COLUMN tier_mde_pct double precision;
COMMENT ON COLUMN perfwatch.gate_series_results.required_n IS
    'candidate runs the series needs to certify mde_pct at its noise (section 4.5); NULL when unknown (no baseline)';
COMMENT ON COLUMN perfwatch.gate_series_results.tier_mde_pct IS
    'percent, the tier''s MDE; mde_pct is above it on a GPU-class platform, where the band between is the production canary''s';
COMMENT ON COLUMN perfwatch.gate_series_results.mde_pct IS
    'percent, the MDE the series is certified at: the tier''s, 4 on a GPU-class platform';

ALTER TABLE perfwatch.gate_series_results DROP CONSTRAINT gate_series_results_verdict_check;
ALTER TABLE perfwatch.gate_series_results ADD CONSTRAINT gate_series_results_verdict_check
    CHECK (verdict IN ('blocking', 'p1', 'pass', 'validated_win', 'frozen', 'quarantined',
                       'insufficient_data', 'investigate', 'trend', 'waived', 'under_powered'));

ALTER TABLE perfwatch.gate_family_results
    ADD COLUMN under_powered_series integer NOT NULL DEFAULT 0 CHECK (under_powered_series >= 0);
COMMENT ON COLUMN perfwatch.gate_family_results.under_powered_series IS
    'series reported under_powered: nothing significant from fewer candidate runs than their noise needs';
