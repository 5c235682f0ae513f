-- 0009_pages.sql: pages, the alerts each page covers, and triage verdicts.
--
-- The pager writes a pages row and its page_alerts in the transaction that
-- precedes publishing the Page (page.proto); the dedup key decides whether an
-- alert joins an open page or opens a new one. The triager's one-click
-- TriageVerdict upserts triage_verdicts (latest verdict per page wins). The
-- weekly page count and the false-page rate of §1 and §8 are views over
-- these two tables (0011_views.sql).

CREATE TABLE perfwatch.pages (
    page_id          text PRIMARY KEY CHECK (page_id <> ''),
    dedup_key        text NOT NULL,
    route            text NOT NULL,
    receiver         text NOT NULL DEFAULT '',
    severity         text NOT NULL CHECK (severity IN ('critical', 'high', 'info')),
    verdict          text NOT NULL CHECK (verdict IN ('blocking', 'p1', 'pass', 'validated_win', 'frozen', 'quarantined',
                                                      'insufficient_data', 'investigate', 'trend', 'waived')),
    summary          text NOT NULL,
    owner_hint       text NOT NULL DEFAULT '',
    release_id       text NOT NULL DEFAULT '',
    triage_url       text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL,
    delivery_status  text NOT NULL DEFAULT 'pending' CHECK (delivery_status IN ('pending', 'delivered', 'failed')),
    delivered_at     timestamptz,
    delivery_attempts integer NOT NULL DEFAULT 0 CHECK (delivery_attempts >= 0)
);
-- pager dedup: the newest page of a dedup key
CREATE INDEX pages_by_dedup_key ON perfwatch.pages (dedup_key, created_at DESC);
-- KPI and Grafana: pages per week
CREATE INDEX pages_by_created ON perfwatch.pages (created_at);
-- pager retry loop: undelivered pages
CREATE INDEX pages_undelivered ON perfwatch.pages (created_at) WHERE delivery_status <> 'delivered';

COMMENT ON TABLE perfwatch.pages IS 'one row per page (page.proto); natural key page_id; insert ON CONFLICT DO NOTHING';
COMMENT ON COLUMN perfwatch.pages.page_id IS 'e.g. pg-2026-06-18-0031';
COMMENT ON COLUMN perfwatch.pages.dedup_key IS 'grouping key, e.g. release/family/platform or the culprit CL';
COMMENT ON COLUMN perfwatch.pages.route IS 'routing target, e.g. ml-perf-triage';
COMMENT ON COLUMN perfwatch.pages.receiver IS 'delivery receiver, e.g. alertmanager';
COMMENT ON COLUMN perfwatch.pages.severity IS 'critical (blocking), high, info';
COMMENT ON COLUMN perfwatch.pages.verdict IS 'worst verdict among the alerts';
COMMENT ON COLUMN perfwatch.pages.summary IS 'one line';
COMMENT ON COLUMN perfwatch.pages.owner_hint IS 'likely owning team';
COMMENT ON COLUMN perfwatch.pages.release_id IS 'release involved; empty for trend pages';
COMMENT ON COLUMN perfwatch.pages.triage_url IS 'one-click true/false verdict link';
COMMENT ON COLUMN perfwatch.pages.created_at IS 'when the page was raised';
COMMENT ON COLUMN perfwatch.pages.delivery_status IS 'pending, delivered, failed (to Alertmanager / webhook)';
COMMENT ON COLUMN perfwatch.pages.delivered_at IS 'when delivery succeeded';
COMMENT ON COLUMN perfwatch.pages.delivery_attempts IS 'delivery attempts so far';

CREATE TABLE perfwatch.page_alerts (
    page_id   text NOT NULL REFERENCES perfwatch.pages (page_id) ON DELETE CASCADE,
    alert_id  text NOT NULL,
    added_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (page_id, alert_id)
);
-- pager dedup: is this alert already on a page
CREATE INDEX page_alerts_by_alert ON perfwatch.page_alerts (alert_id);

COMMENT ON TABLE perfwatch.page_alerts IS 'alerts a page covers (Page.alert_ids); natural key (page_id, alert_id); alert_id is not a foreign key, see 0008';
COMMENT ON COLUMN perfwatch.page_alerts.added_at IS 'when the alert joined the page';

CREATE TABLE perfwatch.triage_verdicts (
    page_id     text PRIMARY KEY REFERENCES perfwatch.pages (page_id) ON DELETE CASCADE,
    outcome     text NOT NULL CHECK (outcome IN ('true_regression', 'false_regression')),
    routed_to   text NOT NULL DEFAULT 'unspecified' CHECK (routed_to IN ('unspecified', 'compiler', 'model', 'infra')),
    triager     text NOT NULL CHECK (triager <> ''),
    note        text NOT NULL DEFAULT '',
    decided_at  timestamptz NOT NULL
);
-- KPI: verdicts by decision time
CREATE INDEX triage_verdicts_by_decided ON perfwatch.triage_verdicts (decided_at);

COMMENT ON TABLE perfwatch.triage_verdicts IS 'one-click verdict per page (page.proto TriageVerdict); natural key page_id; upsert ON CONFLICT (page_id) DO UPDATE ... WHERE triage_verdicts.decided_at < EXCLUDED.decided_at (latest wins)';
COMMENT ON COLUMN perfwatch.triage_verdicts.outcome IS 'true_regression or false_regression (counts against the false-page budget)';
COMMENT ON COLUMN perfwatch.triage_verdicts.routed_to IS 'owner routed to: compiler, model, infra';
COMMENT ON COLUMN perfwatch.triage_verdicts.triager IS 'who decided';
COMMENT ON COLUMN perfwatch.triage_verdicts.note IS 'free text';
COMMENT ON COLUMN perfwatch.triage_verdicts.decided_at IS 'when decided';
