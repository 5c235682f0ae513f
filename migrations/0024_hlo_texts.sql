-- 0024_hlo_texts.sql: post-optimisation HLO texts, stored once per distinct text.
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

COMMENT ON VIEW perfwatch.run_hlo IS 'each run''s post-optimisation HLO text, through hlo_texts (or inline for runs stored before 0024)';
