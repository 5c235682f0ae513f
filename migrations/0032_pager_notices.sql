-- 0032_pager_notices.sql: the pager's info notices (§8: a validated win is
-- info to the compiler team, an infra-health finding info to infra), and
-- their delivery.
--
-- A notice is what an incident routed to "info" delivers, once per
-- incident: an Alertmanager alert with severity="info" (a route that pages
-- nobody, deploy/dev/alertmanager.yml) and a webhook post. Notices are not
-- pages: the false-page budget and the report card's page counts never see
-- them. am_body and webhook_body are computed in the consumer's transaction;
-- the delivery tick posts them, each until acknowledged, and records every
-- attempt as a pager_deliveries row (notice_id).

CREATE TABLE perfwatch.pager_notices (
    notice_id            text PRIMARY KEY CHECK (notice_id <> ''),
    incident_id          text UNIQUE REFERENCES perfwatch.pager_incidents (incident_id) ON DELETE CASCADE,
    kind                 text NOT NULL CHECK (kind IN ('validated_win', 'infra_health', 'threshold_review')),
    route                text NOT NULL,
    owner                text NOT NULL DEFAULT '',
    summary              text NOT NULL,
    payload              jsonb NOT NULL DEFAULT '{}',
    am_body              text NOT NULL DEFAULT '',
    webhook_body         text NOT NULL DEFAULT '',
    created_at           timestamptz NOT NULL DEFAULT now(),
    am_delivered_at      timestamptz,
    webhook_delivered_at timestamptz,
    delivery_attempts    integer NOT NULL DEFAULT 0,
    next_attempt_at      timestamptz DEFAULT now(),
    last_error           text NOT NULL DEFAULT ''
);
CREATE INDEX pager_notices_pending ON perfwatch.pager_notices (next_attempt_at)
    WHERE am_delivered_at IS NULL OR webhook_delivered_at IS NULL;
COMMENT ON TABLE perfwatch.pager_notices IS 'info notices (validated wins to the compiler team, infra-health to infra, threshold reviews): delivered once per incident as severity=info, never pages, never charged to the false-page budget';

ALTER TABLE perfwatch.pager_deliveries
    ADD COLUMN notice_id text REFERENCES perfwatch.pager_notices (notice_id) ON DELETE CASCADE,
    DROP CONSTRAINT pager_deliveries_check,
    ADD CONSTRAINT pager_deliveries_one_subject CHECK (num_nonnulls(page_id, ticket_id, notice_id) = 1);

-- The threshold-review finding (§8: "false-page rate > budget for two
-- consecutive months forces a threshold/noise-floor review"), as the pager
-- raised it: once per month, with the numbers it was raised on (the pager's
-- own pager.budget_per_week, which the 0025 view cannot read) and the info
-- notice that delivered it.
CREATE TABLE perfwatch.pager_threshold_reviews (
    month             date PRIMARY KEY CHECK (extract(day FROM month) = 1),
    false_pages       integer NOT NULL,
    prev_false_pages  integer NOT NULL,
    budget            double precision NOT NULL,
    prev_budget       double precision NOT NULL,
    budget_per_week   double precision NOT NULL,
    finding           text NOT NULL,
    notice_id         text REFERENCES perfwatch.pager_notices (notice_id),
    raised_at         timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE perfwatch.pager_threshold_reviews IS 'threshold/noise-floor review findings raised by the pager: a month whose false pages exceeded its budget (budget_per_week x days / 7) as did the previous month''s; one per month';

-- The Alertmanager label set last acknowledged for a page: when the page's
-- labels change (severity high -> critical when the gate's BLOCKING verdict
-- joins a watcher's page), the old set is posted resolved (endsAt now) with
-- the new one, so Alertmanager keeps exactly one active alert for the page.
ALTER TABLE perfwatch.pages ADD COLUMN am_labels text NOT NULL DEFAULT '';
COMMENT ON COLUMN perfwatch.pages.am_labels IS 'labels object of the Alertmanager alert last acknowledged; a changed set is resolved with the next post';
