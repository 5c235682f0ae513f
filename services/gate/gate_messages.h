/*
 * gate_messages.h: the protobuf messages of one evaluated release — the
 * GateVerdict for perf.gate.verdicts.v1 and an Alert (artifact 3) for every
 * BLOCKING, P1 and INVESTIGATE series for perf.alerts.v1.
 *
 * main.c evaluates a pw_gate_release (gate_store.h) with pw_gate_evaluate and
 * gate_policy.h, then calls pw_gate_messages_build; the packed messages go into
 * the outbox with the results (pw_gate_store_finish) and are published from
 * there. Everything built lives in the release's arena.
 */
#ifndef PW_GATE_MESSAGES_H
#define PW_GATE_MESSAGES_H

#include <stddef.h>

#include "gate_store.h"
#include "pw_status.h"

#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/gate.pb-c.h"

typedef struct pw_gate_messages {
	pw_gate_outbox_msg *msgs;         /* msgs[0] the verdict, then one per alert */
	size_t n_msgs;
	Perfwatch__V1__Alert **alerts; /* the alerts unpacked, for perfwatch.alerts */
	size_t n_alerts;
} pw_gate_messages;

/*
 * Builds the messages of r (evaluated: sr, fr, series_out, rr, summary,
 * evaluated_us set) into *out, and sets r->series_alert[i] to the id of the
 * alert raised for series i. Alert ids are stable per finding:
 * "gate-RELEASE-eN-sSERIES_ID". page_route is the receiver BLOCKING and P1
 * top-tier alerts page (e.g. "ml-perf-triage"). PW_ERR_NOMEM.
 */
pw_status pw_gate_messages_build(pw_gate_release *r, const char *page_route, pw_gate_messages *out,
                              char *errbuf, size_t errlen);

#endif
