-- 0044_baselines_required_n.sql: the repeats a series needs (§4.5),
-- published with every baseline.
--
-- n was fixed at 5 for every tier and pw_stats_power_n was called only from
-- tests. The baseliner now publishes, with every baseline, the candidate runs
-- a release needs on the series to certify its tier's MDE at the series' own
-- noise (pw_stats_required_n, common/pw_stats.h: max(5, ceil(21.01 (sigma /
-- MDE)^2))) for the top and the tail tier, the MDEs they are for (1% and 3%;
-- 4% for both on a GPU-class platform, where the band below is the
-- production canary's) and whether the platform is GPU-class. Rows stored
-- before this migration carry 0 (no n published; the gate computes it from
-- sigma_pct) and gpu_class false.
ALTER TABLE perfwatch.baselines
    ADD COLUMN required_n_top  integer NOT NULL DEFAULT 0 CHECK (required_n_top >= 0),
    ADD COLUMN required_n_tail integer NOT NULL DEFAULT 0 CHECK (required_n_tail >= 0),
    ADD COLUMN mde_top_pct     double precision NOT NULL DEFAULT 0 CHECK (mde_top_pct >= 0),
    ADD COLUMN mde_tail_pct    double precision NOT NULL DEFAULT 0 CHECK (mde_tail_pct >= 0),
    ADD COLUMN gpu_class       boolean NOT NULL DEFAULT false;

COMMENT ON COLUMN perfwatch.baselines.required_n_top IS
    'candidate runs a release needs on this series to certify mde_top_pct at sigma_pct (alpha 0.05, power 0.9, floor 5); 0 when not published';
COMMENT ON COLUMN perfwatch.baselines.required_n_tail IS
    'candidate runs a release needs on this series to certify mde_tail_pct at sigma_pct; 0 when not published';
COMMENT ON COLUMN perfwatch.baselines.mde_top_pct IS
    'percent, the MDE required_n_top is for: 1, or 4 on a GPU-class platform';
COMMENT ON COLUMN perfwatch.baselines.mde_tail_pct IS
    'percent, the MDE required_n_tail is for: 3, or 4 on a GPU-class platform';
COMMENT ON COLUMN perfwatch.baselines.gpu_class IS
    'the platform is GPU-class (baseliner.gpu_platforms): sigma norm 2%, MDE 4%';
