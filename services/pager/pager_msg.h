/*
 * pager_msg.h: the pager's messages in and out, as plain mappings.
 *
 * In: an Alert (perf.alerts.v1) or a Bisection (perf.bisections.v1) becomes
 * a pw_finding that pw_incident_* group (pager.h). Out: an incident's page
 * as Alertmanager's v2 postable alerts (POST /api/v2/alerts), one alert per
 * incident with labels that group and inhibit by incident and severity, and
 * endsAt set when the incident is resolved. main.c does the I/O.
 */
#ifndef PW_PAGER_MSG_H
#define PW_PAGER_MSG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pager.h"
#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/attribution.pb-c.h"
#include "perfwatch/v1/bisect.pb-c.h"

/*
 * Fills *f from a (borrowed); strings are copied (cut at the field's size).
 * top_tier and spend_pct are not in the Alert: the caller sets them from the
 * spend table. PW_ERR_INVALID when the alert has no alert_id.
 */
pw_status pw_finding_from_alert(const Perfwatch__V1__Alert *a, pw_finding *f);

/*
 * Fills *f as the bisection part of the alert b started (b->alert_id): the
 * CL range, status, culprit, verification and the culprit's owner as the
 * owner hint. PW_ERR_INVALID when b names no alert (a changepoint-only
 * bisection joins through its range: the caller gives it series and time).
 */
pw_status pw_finding_from_bisection(const Perfwatch__V1__Bisection *b, pw_finding *f);

/*
 * Fills *f as the attribution part of its alert (a->alert_id): the series
 * and the attributor's owner hint ("compiler", "model", "infra"). The op
 * diff and HLO diff stay in PostgreSQL for the triage page; no link is made
 * up here. PW_ERR_INVALID when a names no alert.
 */
pw_status pw_finding_from_attribution(const Perfwatch__V1__Attribution *a, pw_finding *f);

/* Lower-case text of a BisectionStatus ("running", "done", ...). */
const char *pw_bisection_status_name(Perfwatch__V1__BisectionStatus s);

/*
 * Writes the v2 postable-alerts array for inc's page: labels alertname
 * "PerfwatchIncident", incident, severity, route, owner, family, release;
 * annotations summary, triage_url, payload (the artifact-3 JSON); startsAt
 * from the incident's opening; endsAt now_us when resolved (Alertmanager
 * then resolves it). PW_ERR_IO when out fails.
 */
pw_status pw_alertmanager_write(FILE *out, const pw_incident *inc, const pw_route *route,
                                const char *page_id, const char *triage_url, bool budget_pressure,
                                bool resolved, int64_t now_us);

/* RFC 3339 UTC with milliseconds into buf (at least 32 bytes); times outside 1970..9999 are clamped. */
void pw_rfc3339(int64_t unix_us, char *buf, size_t len);

#endif
