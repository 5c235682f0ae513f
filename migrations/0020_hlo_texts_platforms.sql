-- 0024_hlo_texts_platforms.sql: post-optimisation HLO texts, stored once per distinct text, and the platform facts of the roofline.
--
-- A RunResult carries its module's post-optimisation HLO (run.proto
-- hlo_text); thousands of runs share a handful of texts (one per model,
-- fingerprint, platform, config and set of compiler decisions). A row
-- trigger on perfwatch.runs moves a run's text into perfwatch.hlo_texts,
-- keyed by its SHA-256 (INSERT ... ON CONFLICT DO NOTHING, so concurrent
-- ingesters of the same text agree), and leaves the digest in
-- runs.hlo_sha256 and an empty runs.hlo_text. It fires for the ingester's
-- COPY too, so the ingester itself is unchanged. The attributor reads a
-- run's text through the digest (perfwatch.run_hlo).

CREATE TABLE perfwatch.hlo_texts (
    hlo_sha256  text PRIMARY KEY CHECK (hlo_sha256 ~ '^[0-9a-f]{64}$'),
    hlo_text    text NOT NULL,
    bytes       integer NOT NULL,
    first_seen  timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE perfwatch.hlo_texts IS 'post-optimisation HLO texts, one row per distinct text; natural key hlo_sha256 (hex SHA-256 of the UTF-8 text); referenced from runs.hlo_sha256';
COMMENT ON COLUMN perfwatch.hlo_texts.hlo_text IS 'the text as the run carried it (may be abbreviated)';
COMMENT ON COLUMN perfwatch.hlo_texts.bytes IS 'octet length of the text';
COMMENT ON COLUMN perfwatch.hlo_texts.first_seen IS 'when the first run carrying it was stored';

ALTER TABLE perfwatch.runs ADD COLUMN hlo_sha256 text;
COMMENT ON COLUMN perfwatch.runs.hlo_sha256 IS 'hex SHA-256 of the run''s post-optimisation HLO text in perfwatch.hlo_texts; NULL when the run carried none';

CREATE FUNCTION perfwatch.runs_hlo_to_texts() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    digest text;
BEGIN
    IF NEW.hlo_text IS NULL OR NEW.hlo_text = '' THEN
        RETURN NEW;
    END IF;
    digest := encode(sha256(convert_to(NEW.hlo_text, 'UTF8')), 'hex');
    INSERT INTO perfwatch.hlo_texts (hlo_sha256, hlo_text, bytes)
    VALUES (digest, NEW.hlo_text, octet_length(NEW.hlo_text))
    ON CONFLICT (hlo_sha256) DO NOTHING;
    NEW.hlo_sha256 := digest;
    NEW.hlo_text := '';
    RETURN NEW;
END
$$;

CREATE TRIGGER runs_hlo_to_texts BEFORE INSERT OR UPDATE OF hlo_text ON perfwatch.runs
    FOR EACH ROW EXECUTE FUNCTION perfwatch.runs_hlo_to_texts();

-- a run's HLO text, whether stored before this migration (inline) or after (by digest)
CREATE VIEW perfwatch.run_hlo AS
SELECT r.run_id, r.repeat_index, r.hlo_sha256,
       COALESCE(t.hlo_text, r.hlo_text) AS hlo_text
FROM perfwatch.runs r
LEFT JOIN perfwatch.hlo_texts t USING (hlo_sha256);

COMMENT ON VIEW perfwatch.run_hlo IS 'each run''s post-optimisation HLO text, through hlo_texts (or inline for runs stored before 0020)';

-- the platform facts the attributor's roofline needs.
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
