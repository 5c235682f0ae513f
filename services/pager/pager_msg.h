/*
 * pager_msg.h: the pager's messages in and out, as plain mappings.
 *
 * In: an Alert (perf.alerts.v1) or a Bisection (perf.bisections.v1) becomes
 * a pw_finding that pw_incident_* group (pager.h). Out: an incident's page
 * as Alertmanager's v2 postable alerts (POST /api/v2/alerts), one alert per
 * incident with labels that group and inhibit by incident and severity, and
 * endsAt set when the incident is resolved. main.c does the I/O.
 *
 * The door (pw_pager_door): what every consumed message goes through before
 * pager_service.c acts on it, as a pure function (the unit tests and the
 * fuzz target call it).
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
#include "perfwatch/v1/canary.pb-c.h"
#include "perfwatch/v1/dlq.pb-c.h"
#include "perfwatch/v1/gate.pb-c.h"

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

/*
 * Fills *f from the canary's decision d (borrowed): the family as model, the
 * deciding metric, the effect as delta_pct, its interval, windows, releases,
 * the rollback artifact, alpha, MDE and tolerance in f->rollback. Kind
 * PW_FIND_ROLLBACK for a ROLLBACK; a PROMOTE, HOLD, PINNED or PIN_EXPIRED is
 * filled alike with rollback.decision naming it (it pages nobody).
 * PW_ERR_INVALID when d names no family or no decision this build knows, or
 * no rollout where its decision needs one (all but PIN_EXPIRED).
 */
pw_status pw_finding_from_rollout(const Perfwatch__V1__RolloutDecision *d, pw_finding *f);

/*
 * The outcome the pager counts for a rollout decision's name
 * (rollback.decision: "PROMOTE" -> "promote", "PIN_EXPIRED" ->
 * "pin_expired", ...); "unknown" for a name it does not know.
 */
const char *pw_rollout_outcome(const char *decision);

/* Lower-case text of a BisectionStatus ("running", "done", ...). */
const char *pw_bisection_status_name(Perfwatch__V1__BisectionStatus s);

/*
 * Writes the v2 postable-alerts array for inc's page: labels alertname
 * "PerfwatchIncident", incident, page_id, severity, route, family (the
 * headline's), release, owner and, once known, culprit; annotations summary,
 * owner, triage_url, payload (the artifact-3 JSON); startsAt
 * from the incident's opening; endsAt now_us when resolved (Alertmanager
 * then resolves it). PW_ERR_IO when out fails.
 */
pw_status pw_alertmanager_write(FILE *out, const pw_incident *inc, const pw_route *route,
                                const char *page_id, const char *triage_url, bool budget_pressure,
                                bool resolved, int64_t now_us);

/*
 * An info notice (§8: a validated win to the compiler team, an infra-health
 * finding to infra, a threshold review to the detector team): delivered once,
 * never a page.
 */
typedef struct {
	const char *notice_id;
	const char *incident_id; /* "" for a notice of no incident (threshold review) */
	const char *kind;        /* "validated_win", "infra_health", "threshold_review" */
	const char *route;       /* the team that receives it */
	const char *owner;       /* "compiler", "infra", ... */
	const char *summary;
	const char *payload;     /* a JSON value (object), "null" when none */
	int64_t starts_us, ends_us; /* the alert is active in Alertmanager from starts to ends */
} pw_notice;

/*
 * The notice as Alertmanager v2 postable alerts: labels alertname
 * "PerfwatchNotice", notice_id, incident, kind, severity "info", route;
 * annotations summary, owner, payload; startsAt and endsAt (the notice is
 * posted once and expires by itself). PW_ERR_IO when out fails.
 */
pw_status pw_notice_am_write(FILE *out, const pw_notice *n);

/* The notice as the generic webhook's JSON body ("severity":"info"). PW_ERR_IO when out fails. */
pw_status pw_notice_webhook_write(FILE *out, const pw_notice *n);

/* RFC 3339 UTC with milliseconds into buf (at least 32 bytes); times outside 1970..9999 are clamped. */
void pw_rfc3339(int64_t unix_us, char *buf, size_t len);

/* ---- the door ---------------------------------------------------------------------------- */

/* The topics the pager consumes. */
typedef enum pw_pager_in {
	PW_PAGER_IN_ALERT,       /* perf.alerts.v1: Alert */
	PW_PAGER_IN_GATE,        /* perf.gate.verdicts.v1: GateVerdict */
	PW_PAGER_IN_CHANGEPOINT, /* perf.changepoints.v1: Changepoint */
	PW_PAGER_IN_BISECTION,   /* perf.bisections.v1: Bisection */
	PW_PAGER_IN_ATTRIBUTION, /* perf.attributions.v1: Attribution */
	PW_PAGER_IN_ROLLOUT,     /* perf.rollouts.v1: RolloutDecision (the production canary's) */
	PW_PAGER_IN_UNKNOWN,     /* any other topic */
} pw_pager_in;

/* The kind of the messages of topic (PW_PAGER_IN_UNKNOWN for a topic the pager does not consume). */
pw_pager_in pw_pager_in_of(const char *topic);

/* The message type of k; NULL for PW_PAGER_IN_UNKNOWN. */
const ProtobufCMessageDescriptor *pw_pager_in_desc(pw_pager_in k);

/* Bytes of a part key, its NUL included. */
#define PW_PAGER_PART_KEY_MAX 400

/*
 * One decoded part: the finding, whether it may open an incident (an alert
 * does; a bisection, attribution or changepoint only joins one), and its part
 * key ("alert:<id>:r<revision>", "bisection:...", "attribution:...",
 * "changepoint:<id>", "rollout:<its incident id>"), on which a redelivery is found.
 */
typedef struct pw_pager_part {
	pw_finding f;
	bool opens;
	char key[PW_PAGER_PART_KEY_MAX];
} pw_pager_part;

/*
 * Decodes buf[0..len), a message of kind k other than the gate's, into *p
 * (the unpack and the fields the pager needs: an id, a series, ids no longer
 * than the pager keeps). PW_OK; PW_ERR_INVALID with the dead letter's reason
 * in *reason and the detail in why. No wire check: pw_pager_door makes it;
 * the pager also replays parts it stored (which passed the door) through
 * this.
 */
pw_status pw_pager_part_decode(pw_pager_in k, const void *buf, size_t len, pw_pager_part *p,
                               Perfwatch__V1__DlqReason *reason, char *why, size_t whylen);

/*
 * The pager's door on one payload of kind k: a topic it consumes, a
 * non-empty payload (DECODE_FAILED "empty payload"), the wire form
 * (pw_input_check_wire: INVALID_VALUE naming the field), then for a gate
 * verdict the unpack and a release_id, for the others
 * pw_pager_part_decode. Returns
 * PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED with *gv the verdict
 * (PW_PAGER_IN_GATE; the caller frees it with
 * perfwatch__v1__gate_verdict__free_unpacked) or *pt the part; otherwise the
 * dead letter's reason with the detail in detail, *gv NULL and *pt zeroed.
 */
Perfwatch__V1__DlqReason pw_pager_door(pw_pager_in k, const void *payload, size_t len, pw_pager_part *pt,
                                       Perfwatch__V1__GateVerdict **gv, char *detail, size_t detail_len);

#endif
