-- 0025_platforms.sql: the platform facts the attributor's roofline needs.
--
-- One row per platform name as runs carry it (RunKey.platform.name): chips
-- per slice, peak HBM bandwidth per chip, the achieved fraction decode
-- reaches (§6.3: 0.65 on v6e → 4.26 TB/s on a v6e-4), MXU lanes (the tile
-- width of §6.3's selectivity arithmetic: 128 on v5e, 256 on v6e), peak
-- dense FLOP/s, and the VMEM a fusion may keep resident. A migration-seeded
-- table rather than a topic: these are datasheet facts that change with a
-- new platform, i.e. with a release of perfwatch, and the attributor must
-- have them before the first alert. A run's own achieved bandwidth
-- (RunResult.achieved_hbm_bw_tb_s) is preferred when it carries one; these
-- rows are the fallback and the source of the ridge point. The figures are
-- the simulator's (tools/simulator/sim_model.c pw_sim_platforms), which
-- follow the seed; operators update rows with plain SQL.

CREATE TABLE perfwatch.platforms (
    platform              text PRIMARY KEY CHECK (platform <> ''),
    chips                 integer NOT NULL CHECK (chips > 0),
    peak_hbm_gb_s_chip    double precision NOT NULL CHECK (peak_hbm_gb_s_chip > 0),
    achieved_bw_fraction  double precision NOT NULL CHECK (achieved_bw_fraction > 0 AND achieved_bw_fraction <= 1),
    mxu_lanes             integer NOT NULL DEFAULT 0 CHECK (mxu_lanes >= 0),
    peak_tflops_bf16_chip double precision NOT NULL CHECK (peak_tflops_bf16_chip > 0),
    peak_tflops_int8_chip double precision NOT NULL CHECK (peak_tflops_int8_chip > 0),
    updated_at            timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE perfwatch.platforms IS 'platform facts for the roofline (attributor); natural key platform (e.g. v6e-4); seeded here, updated by operators';
COMMENT ON COLUMN perfwatch.platforms.chips IS 'chips per slice';
COMMENT ON COLUMN perfwatch.platforms.peak_hbm_gb_s_chip IS 'GB/s, peak HBM bandwidth of one chip';
COMMENT ON COLUMN perfwatch.platforms.achieved_bw_fraction IS 'ratio 0..1, achieved / peak HBM bandwidth in decode (assumption until measured, §6.3)';
COMMENT ON COLUMN perfwatch.platforms.mxu_lanes IS 'MXU lanes (tile width); 0 for GPUs';
COMMENT ON COLUMN perfwatch.platforms.peak_tflops_bf16_chip IS 'TFLOP/s, peak dense bf16 of one chip';
COMMENT ON COLUMN perfwatch.platforms.peak_tflops_int8_chip IS 'TFLOP/s, peak dense int8 (fp8 where the platform has it) of one chip';

INSERT INTO perfwatch.platforms (platform, chips, peak_hbm_gb_s_chip, achieved_bw_fraction, mxu_lanes,
                                 peak_tflops_bf16_chip, peak_tflops_int8_chip) VALUES
    ('v6e-4',      4, 1640, 0.65, 256,  918, 1836),
    ('v6e-16',    16, 1640, 0.65, 256,  918, 1836),
    ('v5e-8',      8,  819, 0.65, 128,  197,  394),
    ('ironwood-8', 8, 7370, 0.65, 256, 2307, 4614),
    ('h100-8',     8, 3350, 0.60,   0,  989, 1979),
    ('b200-8',     8, 8000, 0.60,   0, 2250, 4500);
