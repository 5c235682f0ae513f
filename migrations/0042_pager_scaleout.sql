-- 0042_pager_scaleout.sql: the pager's open incidents are the deployment's,
-- kept in PostgreSQL, so that two or more pw-pager replicas of one
-- deployment (one consumer group) page as one.
--
-- pager_state is one row per deployment (pager_group: kafka.group.id) whose
-- generation counts the transactions that changed its incidents. Every
-- message a replica consumes is handled in one transaction that first
-- locks that row (INSERT ... ON CONFLICT DO UPDATE ... RETURNING), so the
-- replicas handle their messages one at a time, each on the state the last
-- one committed; a replica whose memory is older than the generation rebuilds
-- the incidents written since (pager_incidents.gen) from their stored parts,
-- then writes with generation + 1. The parts keep the CL range computed
-- when they were consumed (range_lo, range_hi: a gate alert's release range
-- from perfwatch.runs), so a rebuild needs no query per part.
--
-- Pages, tickets and notices are delivered one at a time, each claimed by
-- one replica's tick (claimed_until: as long as its posts may take), so two
-- replicas never post one page version twice; a replica that dies mid-post
-- leaves it to the others when the claim lapses.

CREATE TABLE perfwatch.pager_state (
    pager_group  text PRIMARY KEY CHECK (pager_group <> ''),
    generation   bigint NOT NULL DEFAULT 0
);
COMMENT ON TABLE perfwatch.pager_state IS 'one row per pager deployment (kafka.group.id): locked by every transaction that handles a message, generation bumped by each; replicas rebuild the incidents written since the generation they hold';

ALTER TABLE perfwatch.pager_incidents ADD COLUMN gen bigint NOT NULL DEFAULT 0;
CREATE INDEX pager_incidents_by_gen ON perfwatch.pager_incidents (pager_group, gen);
COMMENT ON COLUMN perfwatch.pager_incidents.gen IS 'the deployment generation (pager_state) of the transaction that last wrote the incident';

ALTER TABLE perfwatch.pager_parts
    ADD COLUMN range_lo text NOT NULL DEFAULT '',
    ADD COLUMN range_hi text NOT NULL DEFAULT '';
COMMENT ON COLUMN perfwatch.pager_parts.range_lo IS 'the CL range the part had when consumed (a gate alert''s: its release''s), replayed with it; empty for parts stored before 0042';

ALTER TABLE perfwatch.pages ADD COLUMN claimed_until timestamptz;
ALTER TABLE perfwatch.pager_notices ADD COLUMN claimed_until timestamptz;
ALTER TABLE perfwatch.pager_tickets ADD COLUMN claimed_until timestamptz;
COMMENT ON COLUMN perfwatch.pages.claimed_until IS 'a replica''s tick is posting it until then; another posts it only after';
COMMENT ON COLUMN perfwatch.pager_notices.claimed_until IS 'a replica''s tick is posting it until then; another posts it only after';
COMMENT ON COLUMN perfwatch.pager_tickets.claimed_until IS 'a replica''s tick is posting it until then; another posts it only after';

-- A ticket of an incident with gate alerts waits for its event as a page
-- does (0041): a P1 of the event consumed before its BLOCKING findings no
-- longer files a ticket beside the event's page (which one came first differs
-- from run to run, and between one replica and two). A ticket whose incident
-- came to page before it was delivered is 'superseded', never delivered.
ALTER TABLE perfwatch.pager_tickets
    ADD COLUMN hold_alerts text[] NOT NULL DEFAULT '{}',
    ADD COLUMN hold_until  timestamptz,
    DROP CONSTRAINT pager_tickets_delivery_status_check,
    ADD CONSTRAINT pager_tickets_delivery_status_check
        CHECK (delivery_status IN ('pending', 'delivered', 'failed', 'superseded'));
CREATE INDEX pager_tickets_held ON perfwatch.pager_tickets (pager_group) WHERE hold_until IS NOT NULL;
COMMENT ON COLUMN perfwatch.pager_tickets.hold_until IS 'not filed before the event is complete, at the latest until then (pager.page.hold_max); NULL: deliverable';
