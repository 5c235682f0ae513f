-- 0025_attribution_details.sql: what the attributor adds to an attribution
-- beyond 0008 (attribution.proto fields 20-32 and Roofline 10-12).
--
-- status says when a side had no op table or no runs (an attribution that
-- says so, never an empty success); owner_hint / owner_reason route it;
-- selectivity holds the clean series' explanations as JSON; input_key makes
-- the attributor idempotent: the same input (alert revision, or bisection
-- culprit) computed again changes nothing and publishes nothing. A
-- bisection's attribution (culprit-1 vs culprit) is not replaced by a later
-- alert revision's (baseline window vs observed build).

ALTER TABLE perfwatch.attributions
    ADD COLUMN status                text NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'no_op_table', 'no_runs')),
    ADD COLUMN status_detail         text NOT NULL DEFAULT '',
    ADD COLUMN owner_hint            text NOT NULL DEFAULT '' CHECK (owner_hint IN ('', 'compiler', 'model', 'infra')),
    ADD COLUMN owner_reason          text NOT NULL DEFAULT '',
    ADD COLUMN selectivity           jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN top_op_family_members text NOT NULL DEFAULT '',
    ADD COLUMN kernel_wall_differ    boolean NOT NULL DEFAULT false,
    ADD COLUMN kernel_wall_note      text NOT NULL DEFAULT '',
    ADD COLUMN arithmetic_intensity  double precision,
    ADD COLUMN ridge                 double precision,
    ADD COLUMN bw_source             text NOT NULL DEFAULT '',
    ADD COLUMN source                text NOT NULL DEFAULT 'alert' CHECK (source IN ('alert', 'bisection')),
    ADD COLUMN bisection_id          text NOT NULL DEFAULT '',
    ADD COLUMN before_runs           integer NOT NULL DEFAULT 0 CHECK (before_runs >= 0),
    ADD COLUMN after_runs            integer NOT NULL DEFAULT 0 CHECK (after_runs >= 0),
    ADD COLUMN report                text NOT NULL DEFAULT '',
    ADD COLUMN input_key             text NOT NULL DEFAULT '',
    ADD COLUMN alert_received_at     timestamptz;

COMMENT ON COLUMN perfwatch.attributions.status IS 'ok, no_op_table (a side carries no op table), no_runs';
COMMENT ON COLUMN perfwatch.attributions.status_detail IS 'human text, empty when ok';
COMMENT ON COLUMN perfwatch.attributions.owner_hint IS 'compiler (same fingerprint, other post-optimisation decisions), model (fingerprint changed), infra';
COMMENT ON COLUMN perfwatch.attributions.owner_reason IS 'human text';
COMMENT ON COLUMN perfwatch.attributions.selectivity IS 'JSON array of {series, explained, reason} for the clean related series';
COMMENT ON COLUMN perfwatch.attributions.top_op_family_members IS 'e.g. fusion.1423 → fusion.1423a, softmax.88, fusion.1423b';
COMMENT ON COLUMN perfwatch.attributions.kernel_wall_differ IS 'kernel-time delta and wall delta differ beyond noise';
COMMENT ON COLUMN perfwatch.attributions.arithmetic_intensity IS 'FLOP per HBM byte of the config (from MFU and HBM utilisation)';
COMMENT ON COLUMN perfwatch.attributions.ridge IS 'FLOP per HBM byte of the platform ridge point';
COMMENT ON COLUMN perfwatch.attributions.bw_source IS 'before runs or platform table';
COMMENT ON COLUMN perfwatch.attributions.source IS 'alert (baseline window vs observed build) or bisection (culprit-1 vs culprit)';
COMMENT ON COLUMN perfwatch.attributions.before_runs IS 'repeats on the before side';
COMMENT ON COLUMN perfwatch.attributions.after_runs IS 'repeats on the after side';
COMMENT ON COLUMN perfwatch.attributions.report IS 'the rendered report: op table, HLO diff, consistency check';
COMMENT ON COLUMN perfwatch.attributions.input_key IS 'what it was computed from (alert:ID:rREV or bisection:ID:CULPRIT); the same input is not recomputed';
COMMENT ON COLUMN perfwatch.attributions.alert_received_at IS 'when the attributor took the input off its topic (alert-to-attribution latency = created_at - this)';
