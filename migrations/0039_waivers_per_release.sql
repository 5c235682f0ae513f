-- 0039_waivers_per_release.sql: a waiver id names one waiver of one release.
--
-- The waivers table was keyed by waiver_id alone and the gate inserted with
-- ON CONFLICT (waiver_id) DO NOTHING, so a waiver id that release tooling
-- reused on a later release was dropped without a word and the later
-- release's family stayed BLOCKING. Waivers arrive with their release
-- (GateRequest.waivers) and are read by release (the gate's load): the key is
-- (release_id, waiver_id). The same id sent again for the same release with
-- other content is refused by the gate (dead letter naming it).
ALTER TABLE perfwatch.waivers DROP CONSTRAINT waivers_pkey;
ALTER TABLE perfwatch.waivers ADD PRIMARY KEY (release_id, waiver_id);

COMMENT ON TABLE perfwatch.waivers IS 'narrow, auditable gate bypasses (GateRequest.waivers); natural key (release_id, waiver_id): an id names a waiver within its release; the same key with other content is refused (dead letter). Empty selector = any';
