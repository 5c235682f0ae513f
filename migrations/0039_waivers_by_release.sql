-- 0039_waivers_by_release.sql: a waiver id names a waiver of one release.
--
-- perfwatch.waivers was keyed by waiver_id alone and the gate stored a
-- request's waivers with INSERT ... ON CONFLICT (waiver_id) DO NOTHING: a
-- waiver id reused by another release was dropped without a word (release
-- g2's chat-8b stayed BLOCKING under a waiver it had sent, no dead letter, no
-- log). The key is now (release_id, waiver_id): the same id on two releases
-- is two waivers. Within one release the gate still refuses a waiver whose id
-- is stored with other content (selectors, owner, sign-off, reason or expiry)
-- and dead-letters the request naming it (docs/gate.md, "Waivers"); a
-- redelivered request carries the same content and is accepted.
-- Waivers stored with release_id = '' (every release) keep their own ids.
ALTER TABLE perfwatch.waivers DROP CONSTRAINT waivers_pkey;
ALTER TABLE perfwatch.waivers ADD PRIMARY KEY (release_id, waiver_id);

COMMENT ON TABLE perfwatch.waivers IS 'narrow, auditable gate bypasses (GateRequest.waivers); natural key (release_id, waiver_id): an id names a waiver of one release (release_id '''' = every release); a request whose waiver id is stored for its release with other content is dead-lettered (conflict). Empty selector = any';
