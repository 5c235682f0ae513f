/*
 * fuzz_wire.c: the door of every consumed topic, on arbitrary bytes.
 *
 * The first byte picks the message type a service would expect (the
 * consumed topics' payloads: RunResult, SeriesPoint, FleetChangeEvent,
 * GateRequest, Baseline, Alert, Bisection, CompilerCl, BisectJob, Page,
 * TriageVerdict, DeadLetter, Changepoint, GateVerdict, Attribution,
 * CanaryWindow); the
 * rest is the payload. Each goes
 * through what every service does first: pw_input_check_wire (no NUL, valid
 * UTF-8 in any string field at any depth), then the protobuf-c unpack; a
 * message that unpacks is packed again and must come back to the same
 * size, then is freed. Then each service's own door for that type, at a
 * fixed clock: the ingester's decode + validate (pw_ingest_decode), the
 * baseliner's and the watcher's point and fleet-change doors, the gate's
 * request door, the baseliner's changepoint, gate-verdict and triage doors
 * (accepted shifts), the baseliner's pw_baseline_record_unpack, the
 * bisector's alert and CL doors, the attributor's alert and bisection doors,
 * and the pager's door (pw_pager_door) on the six types it consumes (Alert,
 * GateVerdict, Changepoint, Bisection, Attribution, RolloutDecision), and the canary's window
 * door (pw_canary_window_decode); what a door accepts must have passed the
 * wire check.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "attr_door.h"
#include "baseliner.h"
#include "baseliner_store.h"
#include "bisect_msg.h"
#include "canary_door.h"
#include "gate_request.h"
#include "fuzz.h"
#include "pager_msg.h"
#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/attribution.pb-c.h"
#include "perfwatch/v1/baseline.pb-c.h"
#include "perfwatch/v1/bisect.pb-c.h"
#include "perfwatch/v1/canary.pb-c.h"
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
	&perfwatch__v1__attribution__descriptor,
	&perfwatch__v1__canary_window__descriptor,
	&perfwatch__v1__rollout_decision__descriptor, /* the pager's door on perf.rollouts.v1 */
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

/*
 * The pager's door on a payload of one of its six types: a message handed
 * back exactly when accepted, only past the wire check — the verdict for a
 * gate verdict, else a part with a key that was not cut — and a reason and a
 * detail when refused.
 */
static void pager_door(const ProtobufCMessageDescriptor *desc, const uint8_t *buf, size_t len,
                       pw_status wire)
{
	pw_pager_in k = PW_PAGER_IN_ALERT;
	while (k < PW_PAGER_IN_UNKNOWN && pw_pager_in_desc(k) != desc)
		k++;
	if (k == PW_PAGER_IN_UNKNOWN)
		return;
	pw_pager_part pt;
	Perfwatch__V1__GateVerdict *gv = NULL;
	char detail[512];
	Perfwatch__V1__DlqReason r = pw_pager_door(k, buf, len, &pt, &gv, detail, sizeof detail);
	if (r == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) {
		if (wire != PW_OK || (k == PW_PAGER_IN_GATE) != (gv != NULL))
			abort();
		if (k != PW_PAGER_IN_GATE && (!pt.key[0] || strlen(pt.key) >= sizeof pt.key - 1))
			abort(); /* no part key, or one cut at its buffer (two ids would share it) */
	} else if (gv || pt.key[0] || !detail[0]) {
		abort();
	}
	if (gv)
		perfwatch__v1__gate_verdict__free_unpacked(gv, NULL);
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
	} else if (desc == &perfwatch__v1__alert__descriptor) {
		char detail[512];
		Perfwatch__V1__DlqReason why_b = 0, why_a = 0;
		Perfwatch__V1__Alert *a = NULL, *b = NULL;
		pw_attr_before before;
		pw_bisect_input in_b = pw_bisect_alert_decode(buf, len, &b, &why_b, detail, sizeof detail);
		pw_attr_input in_a = pw_attr_alert_decode(buf, len, &a, &before, &why_a, detail, sizeof detail);
		/* a message handed back exactly when not dead-lettered, and only past the wire check */
		if ((in_b == PW_BISECT_INPUT_DEAD) != (b == NULL) || (b && wire != PW_OK))
			abort();
		if ((in_a == PW_ATTR_INPUT_DEAD) != (a == NULL) || (a && wire != PW_OK))
			abort();
		if ((in_b == PW_BISECT_INPUT_DEAD && why_b == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) ||
		    (in_a == PW_ATTR_INPUT_DEAD && why_a == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED))
			abort(); /* a dead letter without a reason */
		if (in_a == PW_ATTR_INPUT_ACCEPT && !(before.window_start_us > 0 && before.window_end_us > 0) &&
		    before.max_cl <= 0 && !(before.build_id && before.build_id[0]))
			abort(); /* accepted without a before side */
		if (a)
			perfwatch__v1__alert__free_unpacked(a, NULL);
		if (b)
			perfwatch__v1__alert__free_unpacked(b, NULL);
	} else if (desc == &perfwatch__v1__bisection__descriptor) {
		char detail[512];
		Perfwatch__V1__DlqReason why_a = 0;
		Perfwatch__V1__Bisection *bs = NULL;
		pw_attr_input in = pw_attr_bisection_decode(buf, len, &bs, &why_a, detail, sizeof detail);
		if ((in == PW_ATTR_INPUT_DEAD) != (bs == NULL) || (bs && wire != PW_OK))
			abort();
		if (in == PW_ATTR_INPUT_DEAD && why_a == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
			abort();
		if (in == PW_ATTR_INPUT_ACCEPT) {
			/* what the attributor then does with an accepted bisection: both sides' job ids */
			size_t nb = 0, na = 0;
			const char **sb = malloc((bs->n_steps ? bs->n_steps : 1) * sizeof *sb);
			const char **sa = malloc((bs->n_steps ? bs->n_steps : 1) * sizeof *sa);
			if (sb && sa) {
				pw_attr_culprit_steps(bs, sb, &nb, sa, &na);
				if (nb == 0 || na == 0 || nb > bs->n_steps || na > bs->n_steps)
					abort(); /* the door promises a job on each side */
				/* attr_store.c refuses a side's literal beyond this size: the door checked it fits */
				char *lb = pw_pg_text_array(sb, nb), *la = pw_pg_text_array(sa, na);
				if (lb && la && (strlen(lb) >= PW_ATTR_JOB_IDS_MAX || strlen(la) >= PW_ATTR_JOB_IDS_MAX))
					abort();
				free(lb);
				free(la);
			}
			free(sb);
			free(sa);
		}
		if (bs)
			perfwatch__v1__bisection__free_unpacked(bs, NULL);
	} else if (desc == &perfwatch__v1__compiler_cl__descriptor) {
		char detail[512];
		Perfwatch__V1__DlqReason why_b = 0;
		Perfwatch__V1__CompilerCl *cl = NULL;
		pw_bisect_input in = pw_bisect_cl_decode(buf, len, &cl, &why_b, detail, sizeof detail);
		if ((in == PW_BISECT_INPUT_DEAD) != (cl == NULL) || (cl && wire != PW_OK))
			abort();
		if (in == PW_BISECT_INPUT_DEAD && why_b == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
			abort();
		if (cl)
			perfwatch__v1__compiler_cl__free_unpacked(cl, NULL);
	} else if (desc == &perfwatch__v1__canary_window__descriptor) {
		char detail[512];
		Perfwatch__V1__CanaryWindow *cw = NULL;
		Perfwatch__V1__DlqReason r = pw_canary_window_decode(buf, len, &cw, detail, sizeof detail);
		if ((r == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) != (cw != NULL) || (cw && wire != PW_OK))
			abort();
		if (!cw && !detail[0])
			abort(); /* a dead letter without a detail */
		if (cw) {
			/* what the service keys a family on: rollout and family fit, neither holds '/' */
			char key[2 * 200 + 2];
			if (!pw_canary_key(key, sizeof key, cw->rollout_id, cw->family) || strchr(cw->rollout_id, '/') ||
			    strchr(cw->family, '/'))
				abort();
			perfwatch__v1__canary_window__free_unpacked(cw, NULL);
		}
	} else if (desc == &perfwatch__v1__baseline__descriptor) {
		pw_baseline_record rec;
		memset(&rec, 0, sizeof rec);
		(void)pw_baseline_record_unpack(buf, len, &rec);
	}
	pager_door(desc, buf, len, wire);
	return 0;
}
