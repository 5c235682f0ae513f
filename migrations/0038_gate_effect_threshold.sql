-- 0038_gate_effect_threshold.sql: the effect filter the gate decides with.
--
-- The gate's minimum-effect filter is |effect| > max(practical, noise floor)
-- (common/pw_stats.c, pw_stats_compare; docs/statistics.md): effect is the
-- Hodges-Lehmann shift in percent of the baseline median (the excess over a
-- registered change when there is one), practical = practical_frac × the
-- tier's MDE, noise floor = noise_k × σ × √(1/n_base + 1/n_cand). Until now
-- only mde_pct and two_sigma_pct were stored, so reports printed the older
-- rule max(MDE, 2σ) beside a verdict decided by this one. Rows stored before
-- this migration keep NULL here (the report says the threshold was not
-- recorded).
ALTER TABLE perfwatch.gate_series_results
    ADD COLUMN effect_pct double precision,
    ADD COLUMN excess_pct double precision,
    ADD COLUMN practical_pct double precision,
    ADD COLUMN noise_floor_pct double precision,
    ADD COLUMN threshold_pct double precision;

COMMENT ON COLUMN perfwatch.gate_series_results.effect_pct IS
    'percent, Hodges-Lehmann shift of the candidate / baseline median x 100: the effect the filter tests';
COMMENT ON COLUMN perfwatch.gate_series_results.excess_pct IS
    'percent, the effect against the registered change (NULL when none registered)';
COMMENT ON COLUMN perfwatch.gate_series_results.practical_pct IS
    'percent, practical-significance threshold: gate.practical_frac x mde_pct';
COMMENT ON COLUMN perfwatch.gate_series_results.noise_floor_pct IS
    'percent, gate.noise_k x sigma x sqrt(1/baseline_n + 1/candidate_n)';
COMMENT ON COLUMN perfwatch.gate_series_results.threshold_pct IS
    'percent, max(practical_pct, noise_floor_pct)';
COMMENT ON COLUMN perfwatch.gate_series_results.effect_passed IS
    '|effect_pct| (|excess_pct| when registered) > threshold_pct';

ALTER TABLE perfwatch.alerts
    ADD COLUMN practical_pct double precision,
    ADD COLUMN noise_floor_pct double precision;

COMMENT ON COLUMN perfwatch.alerts.practical_pct IS
    'percent, the gate''s practical-significance threshold (NULL for other sources)';
COMMENT ON COLUMN perfwatch.alerts.noise_floor_pct IS
    'percent, the gate''s noise floor k sigma sqrt(1/n_base + 1/n_cand) (NULL for other sources)';
COMMENT ON COLUMN perfwatch.alerts.passed_min_effect IS
    'gate: |effect| > max(practical_pct, noise_floor_pct)';
