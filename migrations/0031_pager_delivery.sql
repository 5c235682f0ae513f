-- 0031_pager_delivery.sql: what the pager program (services/pager/main.c)
-- keeps beside the 0024 tables: the consumed parts of every incident, so
-- that open incidents are rebuilt after a restart, and the delivery state
-- and log of every page.
--
-- pager_parts holds each consumed message that joined an incident (an Alert
-- revision, a Bisection update, an Attribution, a Changepoint), raw, in the
-- order it was consumed: replaying an open incident's parts through
-- pw_incident_open / pw_incident_add rebuilds it after a restart, so a late
-- correlated finding joins it and pages nothing new. part_key is the
-- message's natural id and revision; a redelivered message finds its key and
-- changes nothing.
--
-- The pages row carries what the delivery tick posts, computed in the
-- consumer's transaction from the incident: am_body (the Alertmanager v2
-- alerts, endsAt set once resolved) and webhook_body (the Page with its
-- artifact-3 payload). version counts content changes; am_version is the
-- version Alertmanager acknowledged. Every attempt is a pager_deliveries row.

CREATE TABLE perfwatch.pager_parts (
    id           bigserial PRIMARY KEY,
    part_key     text NOT NULL UNIQUE CHECK (part_key <> ''),
    incident_id  text NOT NULL REFERENCES perfwatch.pager_incidents (incident_id) ON DELETE CASCADE,
    topic        text NOT NULL,
    payload      bytea NOT NULL,
    spend_pct    double precision NOT NULL DEFAULT 0,
    top_tier     boolean NOT NULL DEFAULT false,
    received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pager_parts_by_incident ON perfwatch.pager_parts (incident_id, id);
COMMENT ON TABLE perfwatch.pager_parts IS 'consumed messages of each incident, replayed in id order to rebuild open incidents at start; natural key part_key (topic:id:revision), ON CONFLICT DO NOTHING';
COMMENT ON COLUMN perfwatch.pager_parts.spend_pct IS 'spend-weighted impact computed when consumed (spend_weights may change later)';

ALTER TABLE perfwatch.pages
    ADD COLUMN version          integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    ADD COLUMN am_body          text NOT NULL DEFAULT '',
    ADD COLUMN webhook_body     text NOT NULL DEFAULT '',
    ADD COLUMN am_version       integer NOT NULL DEFAULT 0,
    ADD COLUMN am_sent_at       timestamptz,
    ADD COLUMN webhook_version  integer NOT NULL DEFAULT 0;
COMMENT ON COLUMN perfwatch.pages.version IS 'content version, bumped when the incident''s page changes (culprit found, resolved)';
COMMENT ON COLUMN perfwatch.pages.am_body IS 'Alertmanager v2 postable alerts of the current version';
COMMENT ON COLUMN perfwatch.pages.am_version IS 'version Alertmanager acknowledged (2xx)';
COMMENT ON COLUMN perfwatch.pages.am_sent_at IS 'last acknowledged post; an active page is posted again before Alertmanager''s resolve_timeout';
COMMENT ON COLUMN perfwatch.pages.webhook_version IS 'version the generic webhook acknowledged';

CREATE TABLE perfwatch.pager_deliveries (
    id           bigserial PRIMARY KEY,
    page_id      text REFERENCES perfwatch.pages (page_id) ON DELETE CASCADE,
    ticket_id    text REFERENCES perfwatch.pager_tickets (ticket_id) ON DELETE CASCADE,
    target       text NOT NULL CHECK (target IN ('alertmanager', 'webhook', 'ticket')),
    version      integer NOT NULL DEFAULT 1,
    ok           boolean NOT NULL,
    http_status  integer NOT NULL DEFAULT 0,
    error        text NOT NULL DEFAULT '',
    attempted_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((page_id IS NULL) <> (ticket_id IS NULL))
);
CREATE INDEX pager_deliveries_by_page ON perfwatch.pager_deliveries (page_id, attempted_at);
COMMENT ON TABLE perfwatch.pager_deliveries IS 'every delivery attempt of a page or ticket (append-only)';
