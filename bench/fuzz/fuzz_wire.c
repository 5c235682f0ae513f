/*
 * fuzz_wire.c: the door of every consumed topic, on arbitrary bytes.
 *
 * The first byte picks the message type a service would expect (the
 * consumed topics' payloads: RunResult, SeriesPoint, FleetChangeEvent,
 * GateRequest, Baseline, Alert, Bisection, CompilerCl, BisectJob, Page,
 * TriageVerdict, DeadLetter, Changepoint, GateVerdict); the rest is the
 * payload. Each goes
 * through what every service does first: pw_input_check_wire (no NUL, valid
 * UTF-8 in any string field at any depth), then the protobuf-c unpack; a
 * message that unpacks is packed again and must come back to the same
 * size, then is freed. Then each service's own door for that type, at a
 * fixed clock: the ingester's decode + validate (pw_ingest_decode), the
 * baseliner's and the watcher's point and fleet-change doors, the gate's
 * request door, the baseliner's changepoint, gate-verdict and triage doors
 * (accepted shifts), the baseliner's pw_baseline_record_unpack; what a door
 * accepts must have passed the wire check.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "baseliner.h"
#include "baseliner_store.h"
#include "gate_request.h"
#include "fuzz.h"
#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/baseline.pb-c.h"
#include "perfwatch/v1/bisect.pb-c.h"
#include "perfwatch/v1/changepoint.pb-c.h"
#include "perfwatch/v1/compiler.pb-c.h"
#include "perfwatch/v1/dlq.pb-c.h"
#include "perfwatch/v1/fleet.pb-c.h"
#include "perfwatch/v1/gate.pb-c.h"
#include "perfwatch/v1/page.pb-c.h"
#include "perfwatch/v1/run.pb-c.h"
#include "perfwatch/v1/series.pb-c.h"
#include "pw_input.h"
#include "validate.h"
#include "watch_door.h"

static const ProtobufCMessageDescriptor *const types[] = {
	&perfwatch__v1__run_result__descriptor,
	&perfwatch__v1__series_point__descriptor,
	&perfwatch__v1__fleet_change_event__descriptor,
	&perfwatch__v1__gate_request__descriptor,
	&perfwatch__v1__baseline__descriptor,
	&perfwatch__v1__alert__descriptor,
	&perfwatch__v1__bisection__descriptor,
	&perfwatch__v1__compiler_cl__descriptor,
	&perfwatch__v1__bisect_job__descriptor,
	&perfwatch__v1__page__descriptor,
	&perfwatch__v1__triage_verdict__descriptor,
	&perfwatch__v1__dead_letter__descriptor,
	&perfwatch__v1__changepoint__descriptor,
	&perfwatch__v1__gate_verdict__descriptor,
};
#define NTYPES (sizeof types / sizeof types[0])

/* Whether m or any message inside it kept fields its descriptor does not know. */
static bool has_unknown_fields(const ProtobufCMessage *m)
{
	if (!m)
		return false;
	if (m->n_unknown_fields)
		return true;
	const ProtobufCMessageDescriptor *d = m->descriptor;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		const char *at = (const char *)m + f->offset;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)((const char *)m + f->quantifier_offset);
			ProtobufCMessage *const *v = *(ProtobufCMessage *const *const *)at;
			for (size_t k = 0; k < n; k++)
				if (has_unknown_fields(v[k]))
					return true;
		} else if (has_unknown_fields(*(const ProtobufCMessage *const *)at)) {
			return true;
		}
	}
	return false;
}

/* A fixed clock (2026-06-17), so that a crash replays the same way. */
#define FUZZ_NOW_US 1781654400000000LL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const ProtobufCMessageDescriptor *desc = types[data[0] % NTYPES];
	const uint8_t *buf = data + 1;
	size_t len = size - 1;
	char why[512];

	pw_status wire = pw_input_check_wire(desc, buf, len, why, sizeof why);
	ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, len, buf);
	if (m) {
		size_t n = protobuf_c_message_get_packed_size(m);
		uint8_t *out = malloc(n ? n : 1);
		if (out) {
			size_t k = protobuf_c_message_pack(m, out);
			if (k != n)
				abort(); /* protobuf-c disagrees with itself */
			/*
			 * What unpacked once must unpack again, and a clean input stays
			 * clean. Not with unknown fields, at any depth: protobuf-c (1.4)
			 * takes a field number 0 whose tag is an overlong varint
			 * ("\x81\x00") as an unknown field, then packs it with a one-byte
			 * tag that its own unpack refuses (corpus/fuzz_wire/12-field-zero,
			 * 13-field-zero-nested). The services ignore unknown fields and
			 * never repack what they consume.
			 */
			ProtobufCMessage *again = protobuf_c_message_unpack(desc, NULL, n, out);
			if (!again && !has_unknown_fields(m))
				abort();
			if (again)
				protobuf_c_message_free_unpacked(again, NULL);
			if (wire == PW_OK && pw_input_check_wire(desc, out, n, why, sizeof why) != PW_OK)
				abort();
			free(out);
		}
		protobuf_c_message_free_unpacked(m, NULL);
	}

	if (desc == &perfwatch__v1__run_result__descriptor) {
		pw_ingest_limits lim;
		pw_ingest_limits_default(&lim, FUZZ_NOW_US);
		Perfwatch__V1__RunResult *run = NULL;
		char detail[1024];
		pw_dlq_reason r = pw_ingest_decode(buf, len, &lim, &run, detail, sizeof detail);
		if ((r == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) != (run != NULL))
			abort(); /* accepted exactly when a run is handed back */
		if (run && wire != PW_OK)
			abort(); /* a run the door refused was accepted */
		if (run)
			perfwatch__v1__run_result__free_unpacked(run, NULL);
	} else if (desc == &perfwatch__v1__series_point__descriptor) {
		char detail[512];
		bool skip;
		Perfwatch__V1__SeriesPoint *a = NULL, *b = NULL;
		if (pw_baseliner_point_decode(buf, len, &a, detail, sizeof detail) ==
		        PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED && wire != PW_OK)
			abort();
		if (pw_watch_point_decode(buf, len, &b, &skip, detail, sizeof detail) ==
		        PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED && wire != PW_OK)
			abort();
		if (a)
			perfwatch__v1__series_point__free_unpacked(a, NULL);
		if (b)
			perfwatch__v1__series_point__free_unpacked(b, NULL);
	} else if (desc == &perfwatch__v1__fleet_change_event__descriptor) {
		char detail[512];
		bool identified;
		Perfwatch__V1__FleetChangeEvent *a = NULL, *b = NULL;
		if (pw_baseliner_fleet_decode(buf, len, &a, &identified, detail, sizeof detail) ==
		        PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED && (wire != PW_OK || !identified))
			abort();
		if (pw_watch_fleet_decode(buf, len, &b, detail, sizeof detail) ==
		        PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED && wire != PW_OK)
			abort();
		if (a)
			perfwatch__v1__fleet_change_event__free_unpacked(a, NULL);
		if (b)
			perfwatch__v1__fleet_change_event__free_unpacked(b, NULL);
	} else if (desc == &perfwatch__v1__gate_request__descriptor) {
		char detail[512];
		Perfwatch__V1__GateRequest *req = NULL;
		if (pw_gate_request_decode(buf, len, 0.05, FUZZ_NOW_US, &req, detail, sizeof detail) ==
		        PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED && wire != PW_OK)
			abort();
		if (req)
			perfwatch__v1__gate_request__free_unpacked(req, NULL);
	} else if (desc == &perfwatch__v1__changepoint__descriptor) {
		char detail[512];
		Perfwatch__V1__Changepoint *cp = NULL;
		if (pw_baseliner_changepoint_decode(buf, len, &cp, detail, sizeof detail) ==
		        PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED && wire != PW_OK)
			abort();
		if (cp)
			perfwatch__v1__changepoint__free_unpacked(cp, NULL);
	} else if (desc == &perfwatch__v1__gate_verdict__descriptor) {
		char detail[512];
		Perfwatch__V1__GateVerdict *v = NULL;
		if (pw_baseliner_verdict_decode(buf, len, &v, detail, sizeof detail) ==
		        PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED && wire != PW_OK)
			abort();
		if (v)
			perfwatch__v1__gate_verdict__free_unpacked(v, NULL);
	} else if (desc == &perfwatch__v1__triage_verdict__descriptor) {
		char detail[512];
		Perfwatch__V1__TriageVerdict *t = NULL;
		if (pw_baseliner_triage_decode(buf, len, &t, detail, sizeof detail) ==
		        PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED && wire != PW_OK)
			abort();
		if (t)
			perfwatch__v1__triage_verdict__free_unpacked(t, NULL);
	} else if (desc == &perfwatch__v1__baseline__descriptor) {
		pw_baseline_record rec;
		memset(&rec, 0, sizeof rec);
		(void)pw_baseline_record_unpack(buf, len, &rec);
	}
	return 0;
}
