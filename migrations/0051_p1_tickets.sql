-- 0051_p1_tickets.sql: the P1 bug of §8 ("1–3% on gated series: release
-- proceeds; P1 bug auto-filed with artifacts, must resolve before next RC
-- (no compounding drift)") as a row with a life, and what the next RC's gate
-- reported of the ones still open.
--
-- Written by the gate (services/gate/gate_store.c), in the transaction that
-- finishes the evaluation whose series verdict is P1: one ticket per
-- (series_id, found_release), ON CONFLICT DO NOTHING, so a re-decision of the
-- same release, a redelivered request or a gate restarted between decision
-- and publication files nothing twice. `perfwatch p1 resolve` sets the
-- status. The artifacts that arrive after filing (the bisection, the
-- attribution, the pager's incident, ticket and triage page) are found
-- through the gate's alert_id by the view p1_ticket_artifacts, not copied.
CREATE TABLE perfwatch.p1_tickets (
    ticket_id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    series_id         bigint NOT NULL REFERENCES perfwatch.series (series_id),
    series_key        text NOT NULL CHECK (series_key <> ''),
    found_release     text NOT NULL CHECK (found_release <> ''),
    found_evaluation  integer NOT NULL CHECK (found_evaluation > 0),
    candidate_build_id text NOT NULL DEFAULT '',
    baseline_release  text NOT NULL DEFAULT '',
    family            text NOT NULL DEFAULT '',
    alert_id          text NOT NULL CHECK (alert_id <> ''),
    delta_pct         double precision NOT NULL,
    effect_pct        double precision NOT NULL,
    q                 double precision NOT NULL CHECK (q >= 0 AND q <= 1),
    found_at          timestamptz NOT NULL,
    filed_at          timestamptz NOT NULL DEFAULT now(),
    owner             text NOT NULL CHECK (owner <> ''),
    due_release       text NOT NULL DEFAULT '',
    status            text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'waived')),
    resolved_by       text NOT NULL DEFAULT '',
    resolved_at       timestamptz,
    resolution_note   text NOT NULL DEFAULT '',
    UNIQUE (series_id, found_release),
    CHECK ((status = 'open') = (resolved_at IS NULL)),
    CHECK (status = 'open' OR resolved_by <> '')
);
-- the gate, at every evaluation: the open tickets of the release's series
CREATE INDEX p1_tickets_open ON perfwatch.p1_tickets (series_id) WHERE status = 'open';
CREATE INDEX p1_tickets_by_release ON perfwatch.p1_tickets (found_release);
COMMENT ON TABLE perfwatch.p1_tickets IS 'P1 bug auto-filed by the gate (§8), one per (series_id, found_release); INSERT ON CONFLICT DO NOTHING in the evaluation''s finishing transaction; status set by perfwatch p1 resolve';
COMMENT ON COLUMN perfwatch.p1_tickets.found_release IS 'the release whose gate evaluation found the P1 (GateRequest.release_id)';
COMMENT ON COLUMN perfwatch.p1_tickets.found_evaluation IS 'the evaluation of found_release that filed it (a later evaluation of the same release files nothing)';
COMMENT ON COLUMN perfwatch.p1_tickets.alert_id IS 'the gate''s alert of the finding (gate-RELEASE-eN-sSERIES_ID): bisection, attribution and the pager''s incident hang off it (view p1_ticket_artifacts)';
COMMENT ON COLUMN perfwatch.p1_tickets.delta_pct IS 'percent, change of the medians, candidate against baseline';
COMMENT ON COLUMN perfwatch.p1_tickets.effect_pct IS 'percent, Hodges-Lehmann shift the effect filter passed';
COMMENT ON COLUMN perfwatch.p1_tickets.found_at IS 'when the finding''s release was requested (GateRequest.requested_unix_us): the ticket''s age is counted from it';
COMMENT ON COLUMN perfwatch.p1_tickets.owner IS 'who owns first touch when filed: the gate''s page route (the perf-triage rotation, §8) for a top-tier series, the queue for a tail one; the pager''s routed owner is in p1_ticket_artifacts';
COMMENT ON COLUMN perfwatch.p1_tickets.due_release IS 'the RC by which it had to resolve: the first later release whose gate found it still open (empty until then)';
COMMENT ON COLUMN perfwatch.p1_tickets.status IS 'open, resolved (fixed), waived (accepted knowingly); set by perfwatch p1 resolve';
COMMENT ON COLUMN perfwatch.p1_tickets.resolved_by IS 'who resolved or waived it';

-- What each evaluation reported as compounding drift: the open P1 tickets of
-- its series filed on an earlier release. Written with the evaluation, read
-- by perfwatch gate show; the verdict itself is unchanged (docs/gate.md).
CREATE TABLE perfwatch.gate_compounding_drift (
    release_id   text NOT NULL,
    evaluation   integer NOT NULL,
    ticket_id    bigint NOT NULL REFERENCES perfwatch.p1_tickets (ticket_id),
    series_key   text NOT NULL,
    found_release text NOT NULL,
    age_s        bigint NOT NULL,
    line         text NOT NULL,
    PRIMARY KEY (release_id, evaluation, ticket_id),
    FOREIGN KEY (release_id, evaluation) REFERENCES perfwatch.gate_evaluations (release_id, evaluation) ON DELETE CASCADE
);
CREATE INDEX gate_compounding_drift_by_ticket ON perfwatch.gate_compounding_drift (ticket_id);
COMMENT ON TABLE perfwatch.gate_compounding_drift IS 'open P1 tickets an evaluation reported as compounding drift; natural key (release_id, evaluation, ticket_id), written with the evaluation';
COMMENT ON COLUMN perfwatch.gate_compounding_drift.age_s IS 'seconds from the ticket''s found_at to the evaluation''s request';
COMMENT ON COLUMN perfwatch.gate_compounding_drift.line IS 'the WARN line the gate reported (pw_gate_drift_line), as perfwatch gate show prints it';

-- A ticket with the artifacts found through its alert so far.
CREATE VIEW perfwatch.p1_ticket_artifacts AS
SELECT t.*,
       b.bisection_id,
       b.status AS bisection_status,
       COALESCE(NULLIF(b.culprit, ''), a.culprit, '') AS culprit,
       at.alert_id IS NOT NULL AS attributed,
       COALESCE(at.owner_hint, '') AS attribution_owner_hint,
       COALESCE(pi.incident_id, '') AS incident_id,
       COALESCE(pi.owner, 'unspecified') AS routed_owner,
       COALESCE(pt.ticket_id, '') AS pager_ticket_id,
       COALESCE(pg.page_id, '') AS page_id,
       COALESCE(pg.triage_url, '') AS triage_url
FROM perfwatch.p1_tickets t
LEFT JOIN perfwatch.alerts a ON a.alert_id = t.alert_id
-- the bisection the alert's later revision names (one bisection per event: it
-- may have been started by another alert of the event), else one it started
LEFT JOIN LATERAL (SELECT bisection_id, status, culprit FROM perfwatch.bisections
                   WHERE bisection_id = NULLIF(a.bisection_id, '') OR alert_id = t.alert_id
                   ORDER BY bisection_id = a.bisection_id DESC, started_at DESC LIMIT 1) b ON true
LEFT JOIN perfwatch.attributions at ON at.alert_id = t.alert_id
LEFT JOIN LATERAL (SELECT i.incident_id, i.owner FROM perfwatch.pager_incident_alerts ia
                   JOIN perfwatch.pager_incidents i USING (incident_id)
                   WHERE ia.alert_id = t.alert_id
                   ORDER BY i.merged_into IS NULL DESC, i.opened_at LIMIT 1) pi ON true
LEFT JOIN perfwatch.pager_tickets pt ON pt.incident_id = pi.incident_id
LEFT JOIN perfwatch.pages pg ON pg.incident_id = pi.incident_id;
COMMENT ON VIEW perfwatch.p1_ticket_artifacts IS 'P1 tickets with the bisection (culprit CL), attribution, pager incident, pager ticket and triage page found through the gate''s alert_id';
