-- 0041_pager_event_headline.sql: one incident, one stable headline, and a
-- pager deployment that delivers only its own pages.
--
-- pager_group is the pager deployment (its kafka.group.id) that raised an
-- incident, page, ticket or notice: a pager rebuilds and delivers its own
-- only, so a pager started in another consumer group on the same database (a
-- second demo, a test's namespace, a staging deployment) never re-delivers
-- the pages of an earlier one to its receivers. Rows from before this
-- migration belong to the production deployment's group, perfwatch-pager
-- (deploy/config/pager.conf).
--
-- A new page whose incident holds alerts of the gate waits for the rest of
-- its event before its first delivery (services/pager/pager_service.c,
-- holds_release): hold_alerts are the gate alerts it waits for, hold_until
-- the latest it waits (pager.page.hold_max after it was raised); the hold is
-- released (NULL) once the gate verdicts naming those alerts were consumed
-- (pager_gate_evaluations) and every alert they name is in one of the
-- deployment's incidents. The first notification's headline is then the
-- event's largest spend-weighted finding, whatever order the findings came
-- in. The owner and the culprit are labels of the page's alert (Alertmanager
-- notifies again only when labels change); am_annotations keeps what the
-- last acknowledged post said, so that the label set a change resolves
-- reaches on-call with its summary.

ALTER TABLE perfwatch.pager_incidents ADD COLUMN pager_group text NOT NULL DEFAULT 'perfwatch-pager';
ALTER TABLE perfwatch.pages
    ADD COLUMN pager_group text NOT NULL DEFAULT 'perfwatch-pager',
    ADD COLUMN hold_alerts text[] NOT NULL DEFAULT '{}',
    ADD COLUMN hold_until  timestamptz,
    ADD COLUMN am_annotations text NOT NULL DEFAULT '';
ALTER TABLE perfwatch.pager_tickets ADD COLUMN pager_group text NOT NULL DEFAULT 'perfwatch-pager';
ALTER TABLE perfwatch.pager_notices ADD COLUMN pager_group text NOT NULL DEFAULT 'perfwatch-pager';

DROP INDEX perfwatch.pager_incidents_open;
CREATE INDEX pager_incidents_open ON perfwatch.pager_incidents (pager_group, opened_at) WHERE open;
CREATE INDEX pages_held ON perfwatch.pages (pager_group) WHERE hold_until IS NOT NULL;
CREATE INDEX pages_by_group ON perfwatch.pages (pager_group, created_at) WHERE incident_id IS NOT NULL;

COMMENT ON COLUMN perfwatch.pager_incidents.pager_group IS 'the pager deployment (kafka.group.id) whose incident this is; only it rebuilds it';
COMMENT ON COLUMN perfwatch.pages.pager_group IS 'the pager deployment (kafka.group.id) that raised the page; only it delivers it';
COMMENT ON COLUMN perfwatch.pages.hold_alerts IS 'gate alerts of the page''s incident its first delivery waits for (their verdicts and every alert those name)';
COMMENT ON COLUMN perfwatch.pages.hold_until IS 'not delivered before the event is complete, at the latest until then (pager.page.hold_max); NULL: deliverable';
COMMENT ON COLUMN perfwatch.pages.am_annotations IS 'annotations of the Alertmanager alert last acknowledged: a changed label set is resolved with them (on-call sees what it resolves)';
COMMENT ON COLUMN perfwatch.pager_tickets.pager_group IS 'the pager deployment (kafka.group.id) that filed the ticket; only it delivers it';
COMMENT ON COLUMN perfwatch.pager_notices.pager_group IS 'the pager deployment (kafka.group.id) that raised the notice; only it delivers it';

CREATE TABLE perfwatch.pager_gate_evaluations (
    pager_group  text NOT NULL,
    release_id   text NOT NULL CHECK (release_id <> ''),
    evaluation   integer NOT NULL,
    alert_ids    text[] NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (pager_group, release_id, evaluation)
);
COMMENT ON TABLE perfwatch.pager_gate_evaluations IS 'the alerts each consumed gate verdict names (GateSeriesResult.alert_id), per pager deployment: a held page is complete when all of them are in; natural key (pager_group, release_id, evaluation), ON CONFLICT DO NOTHING';
