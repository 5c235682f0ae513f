-- 0026_pager.sql: the pager's incidents, its recorded decisions, P1 tickets
-- and every triage verdict.
--
-- One incident is one event (services/pager/pager.h): the pager keeps the
-- incident's grouping keys and its artifact-3 payload here, in the
-- transaction that consumed the finding, and raises at most one page per
-- incident (pages.incident_id, unique). Every routing and budget decision is
-- a pager_decisions row, so that a finding queued over budget is recorded,
-- never silently dropped. P1 findings become pager_tickets (the auto-filed
-- bug with its artifacts), delivered to the ticket webhook from the pager's
-- tick. triage_verdicts (0009) keeps the latest verdict per page; every
-- verdict is also a triage_verdict_log row.

CREATE TABLE perfwatch.pager_incidents (
    incident_id     text PRIMARY KEY CHECK (incident_id <> ''),
    dedup_key       text NOT NULL,
    open            boolean NOT NULL DEFAULT true,
    merged_into     text REFERENCES perfwatch.pager_incidents (incident_id),
    release_id      text NOT NULL DEFAULT '',
    family          text NOT NULL DEFAULT '',
    culprit         text NOT NULL DEFAULT '',
    fleet_event_id  text NOT NULL DEFAULT '',
    cl_lo           bigint,
    cl_hi           bigint,
    action          text NOT NULL CHECK (action IN ('queue', 'page', 'ticket', 'info')),
    owner           text NOT NULL DEFAULT 'unspecified' CHECK (owner IN ('unspecified', 'compiler', 'model', 'infra')),
    route           text NOT NULL DEFAULT '',
    spend_pct       double precision NOT NULL DEFAULT 0,
    payload         jsonb NOT NULL,
    opened_at       timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    resolved_at     timestamptz
);
-- pager start-up: the open incidents a finding may join
CREATE INDEX pager_incidents_open ON perfwatch.pager_incidents (opened_at) WHERE open;
COMMENT ON TABLE perfwatch.pager_incidents IS 'one row per event (grouped findings); natural key incident_id; upsert ON CONFLICT (incident_id) DO UPDATE';
COMMENT ON COLUMN perfwatch.pager_incidents.merged_into IS 'the incident this one was folded into when a later part showed them one event';
COMMENT ON COLUMN perfwatch.pager_incidents.payload IS 'artifact-3 alert payload, filled as the parts arrive';
COMMENT ON COLUMN perfwatch.pager_incidents.spend_pct IS 'spend-weighted impact, percent of fleet (the budget''s priority)';

CREATE TABLE perfwatch.pager_incident_alerts (
    incident_id  text NOT NULL REFERENCES perfwatch.pager_incidents (incident_id) ON DELETE CASCADE,
    alert_id     text NOT NULL,
    revision     integer NOT NULL DEFAULT 1,
    added_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (incident_id, alert_id)
);
CREATE INDEX pager_incident_alerts_by_alert ON perfwatch.pager_incident_alerts (alert_id);
COMMENT ON TABLE perfwatch.pager_incident_alerts IS 'findings of an incident; natural key (incident_id, alert_id); revision is the newest seen';

ALTER TABLE perfwatch.pages
    ADD COLUMN incident_id  text REFERENCES perfwatch.pager_incidents (incident_id),
    ADD COLUMN payload      jsonb,
    ADD COLUMN budget_pressure boolean NOT NULL DEFAULT false,
    ADD COLUMN resolved_at  timestamptz,
    ADD COLUMN next_attempt_at timestamptz,
    ADD COLUMN last_error   text NOT NULL DEFAULT '';
-- one page per incident, however often the pager is restarted
CREATE UNIQUE INDEX pages_by_incident ON perfwatch.pages (incident_id) WHERE incident_id IS NOT NULL;
COMMENT ON COLUMN perfwatch.pages.incident_id IS 'the incident paged (at most one page each)';
COMMENT ON COLUMN perfwatch.pages.payload IS 'artifact-3 payload as delivered last';
COMMENT ON COLUMN perfwatch.pages.budget_pressure IS 'the page said the false-page budget is under pressure';
COMMENT ON COLUMN perfwatch.pages.resolved_at IS 'incident resolved: Alertmanager told endsAt';
COMMENT ON COLUMN perfwatch.pages.next_attempt_at IS 'delivery retry not before (backoff)';

CREATE TABLE perfwatch.pager_decisions (
    id           bigserial PRIMARY KEY,
    incident_id  text NOT NULL REFERENCES perfwatch.pager_incidents (incident_id) ON DELETE CASCADE,
    alert_id     text NOT NULL,
    revision     integer NOT NULL DEFAULT 1,
    action       text NOT NULL CHECK (action IN ('queue', 'page', 'ticket', 'info', 'join')),
    budget       text NOT NULL DEFAULT '' CHECK (budget IN ('', 'within', 'pressure', 'override', 'queued')),
    reason       text NOT NULL,
    decided_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (incident_id, alert_id, revision)
);
CREATE INDEX pager_decisions_by_time ON perfwatch.pager_decisions (decided_at);
COMMENT ON TABLE perfwatch.pager_decisions IS 'every routing and false-page-budget decision, one per finding revision; natural key (incident_id, alert_id, revision), ON CONFLICT DO NOTHING';
COMMENT ON COLUMN perfwatch.pager_decisions.budget IS 'within / pressure (paged), override (paged over budget for its spend), queued (over budget), empty when no page was at stake';

CREATE TABLE perfwatch.pager_tickets (
    ticket_id        text PRIMARY KEY CHECK (ticket_id <> ''),
    incident_id      text NOT NULL UNIQUE REFERENCES perfwatch.pager_incidents (incident_id),
    route            text NOT NULL,
    summary          text NOT NULL,
    payload          jsonb NOT NULL,
    created_at       timestamptz NOT NULL,
    delivery_status  text NOT NULL DEFAULT 'pending' CHECK (delivery_status IN ('pending', 'delivered', 'failed')),
    delivery_attempts integer NOT NULL DEFAULT 0,
    delivered_at     timestamptz,
    next_attempt_at  timestamptz
);
CREATE INDEX pager_tickets_undelivered ON perfwatch.pager_tickets (created_at) WHERE delivery_status <> 'delivered';
COMMENT ON TABLE perfwatch.pager_tickets IS 'P1 bug filed with its artifacts (§8), one per incident; natural key ticket_id';

CREATE TABLE perfwatch.triage_verdict_log (
    id          bigserial PRIMARY KEY,
    page_id     text NOT NULL REFERENCES perfwatch.pages (page_id) ON DELETE CASCADE,
    outcome     text NOT NULL CHECK (outcome IN ('true_regression', 'false_regression')),
    routed_to   text NOT NULL DEFAULT 'unspecified' CHECK (routed_to IN ('unspecified', 'compiler', 'model', 'infra')),
    triager     text NOT NULL CHECK (triager <> ''),
    note        text NOT NULL DEFAULT '',
    decided_at  timestamptz NOT NULL,
    action_token text NOT NULL UNIQUE
);
CREATE INDEX triage_verdict_log_by_page ON perfwatch.triage_verdict_log (page_id, decided_at);
COMMENT ON TABLE perfwatch.triage_verdict_log IS 'every triage verdict (triage_verdicts keeps the latest); action_token is the signed link''s signature, so a replayed click records nothing';
