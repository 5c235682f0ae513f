/*
 * test_pager_door.c: the pager's door on its six input topics
 * (perf.alerts.v1, perf.gate.verdicts.v1, perf.changepoints.v1,
 * perf.bisections.v1, perf.attributions.v1, perf.rollouts.v1), each on a table of hostile
 * payloads (issue 19) with the DlqReason and a detail substring every refused
 * one must get and, for what must pass, the part key the pager dedups on.
 *
 * The door is pw_pager_door (services/pager/pager_msg.h): empty, wire form,
 * then the gate verdict's release_id or the part's decode, in the order
 * pager_service.c's on_message dead-letters them.
 *
 * Ids longer than the pager keeps are refused whole:
 * ids_longer_than_kept_are_refused.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pager_msg.h"
#include "perfwatch/v1/changepoint.pb-c.h"
#include "pw_topics.h"
#include "door_table.h"
#include "wire_messages.h"

#define R_OK_ PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED
#define R_DECODE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED
#define R_MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE

#define NOW_US 1781740800000000LL
#define GOOD_ALERT "perfreg-2026-06-18-00412"
#define KEY_ALERT "alert:" GOOD_ALERT ":r1"
#define GOOD_SERIES "chat-8b/hlo:9f31c2/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"
#define KEY_GATE "xla-rc-2026-06-17"
#define GOOD_CP GOOD_SERIES "@xla-nightly-2026-06-17"
#define KEY_CP "changepoint:" GOOD_CP
#define KEY_BIS "bisection:bs-chat-8b-7841923:done:cl/7841917:1781744400000000"
#define KEY_ATTR "attribution:" GOOD_ALERT ":1781744400000000"
#define KEY_ROLLOUT "rollout:rollback-rollout-xla-2026-06-22-chat-8b"

/* ---- the door, and the part key of what it takes ---- */

static pw_pager_in cur_kind;
static char last_key[PW_PAGER_PART_KEY_MAX + 64];
static pw_pager_part last_part;

static Perfwatch__V1__DlqReason pager_door(const uint8_t *buf, size_t len, ProtobufCMessage **out, bool *skip,
                                           char *detail, size_t dlen)
{
	*out = NULL;
	*skip = false;
	last_key[0] = 0;
	Perfwatch__V1__GateVerdict *gv = NULL;
	Perfwatch__V1__DlqReason r = pw_pager_door(cur_kind, buf, len, &last_part, &gv, detail, dlen);
	if (r != R_OK_) {
		cr_expect(gv == NULL && last_part.key[0] == 0, "refused, but a verdict or a part key was made");
		return r;
	}
	if (gv) {
		cr_expect(cur_kind == PW_PAGER_IN_GATE);
		snprintf(last_key, sizeof last_key, "%s", gv->release_id);
		*out = &gv->base;
		return r;
	}
	snprintf(last_key, sizeof last_key, "%s", last_part.key);
	*out = protobuf_c_message_unpack(pw_pager_in_desc(cur_kind), NULL, len, buf);
	cr_assert_not_null(*out);
	return r;
}

static const char *part_key(const ProtobufCMessage *m)
{
	(void)m;
	return last_key;
}

static void run_topic(const char *topic, pw_pager_in kind, const door_case *cases, size_t n, door_pack_fn pack,
                      const char *good_key)
{
	cur_kind = kind;
	door_cases_run(topic, cases, n, pack, good_key, pager_door, part_key);
}

#define COMMON_CASES(NOT) DOOR_COMMON_CASES(R_DECODE, "empty payload", NOT)

/* ====================================================== perf.alerts.v1 */

/*
 * The worked example's B64 TPOT alert of the gate (wire_messages.h) as the
 * pager reads it: no series_id, baseline window, observed median or
 * changepoint id, with the 10-digit fingerprint of GOOD_SERIES.
 */
static wire_buf pack_alert(door_edit_fn edit)
{
	static wire_alert_parts q;
	wire_alert_init(&q);
	q.key.hlo_fingerprint = "hlo:9f31c2";
	q.al.series_id = 0;
	q.base.window_start_unix_us = 0;
	q.base.window_end_unix_us = 0;
	q.base.window = "";
	q.obs.median = 0;
	q.obs.n = 0;
	q.cp.changepoint_id = "";
	wire_rekey_alert(&q);
	if (edit)
		edit(&q);
	return wire_pack(&q.al.base);
}

#define AEDIT(fn, stmt) DOOR_EDIT(fn, wire_alert_parts *q = p, stmt)
AEDIT(a_no_id, q->al.alert_id = "")
AEDIT(a_no_key, q->al.series_key = "")
AEDIT(a_no_series, q->al.series = NULL)
AEDIT(a_no_model, q->key.model = "")
AEDIT(a_no_platform, q->key.platform = "")
AEDIT(a_revision_0, q->al.revision = 0)
AEDIT(a_revision_max, q->al.revision = UINT32_MAX)
AEDIT(a_sql_id, q->al.alert_id = "perfreg'); DELETE FROM perfwatch.incidents;--")
AEDIT(a_nan, (q->delta.abs = NAN, q->delta.pct = INFINITY, q->base.mad = -INFINITY))
AEDIT(a_huge, (q->delta.pct = 1e308, q->base.n = UINT32_MAX))
AEDIT(a_future, q->al.created_unix_us = INT64_MAX)
AEDIT(a_past, q->al.created_unix_us = INT64_MIN)
AEDIT(a_kind_unknown, q->al.kind = (Perfwatch__V1__AlertKind)99)
AEDIT(a_verdict_unknown, q->al.verdict = (Perfwatch__V1__Verdict)-7)
AEDIT(a_infra, q->al.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_INFRA_HEALTH)
AEDIT(a_long_summary, q->al.summary = (char *)wire_letters('s', 60000))
AEDIT(a_long_owner, q->al.owner_hint = (char *)wire_letters('o', 5000))
static void a_many_scope(void *p)
{
	wire_alert_parts *q = p;
	static Perfwatch__V1__AlertScope scope = PERFWATCH__V1__ALERT_SCOPE__INIT;
	static char *many[20000];
	for (size_t i = 0; i < 20000; i++)
		many[i] = "chat-8b/v6e-4/decode.B8/tpot_p50_ms: +7.4%";
	scope.correlated_series = many;
	scope.n_correlated_series = 20000;
	scope.clean_series = many;
	scope.n_clean_series = 20000;
	q->al.scope = &scope;
}
static void a_nul_model(wire_buf *b) { wire_nested(b, 8, 1, "chat\0-8b", 8); }
static void a_ff_scope(wire_buf *b) { wire_nested(b, 14, 1, "chat-8b/\377: +1%", 14); }
WIRE_APPEND_STR(a_second_id, 1, "perfreg-2026-06-18-00413")
WIRE_APPEND_STR(a_cont_owner, 19, "xla-\x80")

#define NOT_ALERT "payload is not a perfwatch.v1.Alert"
static const door_case acases[] = {
	{"the good alert", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	COMMON_CASES(NOT_ALERT),
	{"truncated at byte 40", NULL, NULL, NULL, 0, 40, R_DECODE, NOT_ALERT, 0, 0, 0},
	{"no alert_id", a_no_id, NULL, NULL, 0, 0, R_MISSING, "alert has no alert_id", 0, 0, 0},
	{"no series_key", a_no_key, NULL, NULL, 0, 0, R_MISSING, "has no series key", 0, 0, 0},
	{"no series", a_no_series, NULL, NULL, 0, 0, R_MISSING, "has no series key", 0, 0, 0},
	{"no model", a_no_model, NULL, NULL, 0, 0, R_MISSING, "has no series key", 0, 0, 0},
	{"no platform (the page shows what it has)", a_no_platform, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"revision 0 (read as 1)", a_revision_0, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"revision UINT32_MAX", a_revision_max, NULL, NULL, 0, 0, R_OK_, "alert:" GOOD_ALERT ":r4294967295", 0, 0, 0},
	{"NUL inside series.model", NULL, a_nul_model, NULL, 0, 0, R_INVALID, "\"series.model\" contains a NUL", 0, 0,
	 0},
	{"0xff in a correlated series", NULL, a_ff_scope, NULL, 0, 0, R_INVALID,
	 "\"scope.correlated_series\" is not valid UTF-8", 0, 0, 0},
	{"a lone continuation byte in owner_hint", NULL, a_cont_owner, NULL, 0, 0, R_INVALID,
	 "\"owner_hint\" is not valid UTF-8", 0, 0, 0},
	{"SQL metacharacters in alert_id (data)", a_sql_id, NULL, NULL, 0, 0, R_OK_,
	 "alert:perfreg'); DELETE FROM perfwatch.incidents;--:r1", 0, 0, 0},
	{"delta NaN and +inf, noise -inf (the payload writes null)", a_nan, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"delta 1e308, n UINT32_MAX", a_huge, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"created in the year 292277 (startsAt clamped)", a_future, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"created at INT64_MIN (startsAt clamped)", a_past, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a kind this build does not know (a regression page)", a_kind_unknown, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a verdict out of range (none)", a_verdict_unknown, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"an infra-health alert", a_infra, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a 60 kB summary (not paged)", a_long_summary, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a 5000-byte owner hint (display text)", a_long_owner, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"20000 correlated and clean series (the page lists 16)", a_many_scope, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"alert_id twice: the last counts", NULL, a_second_id, NULL, 0, 0, R_OK_, "alert:perfreg-2026-06-18-00413:r1",
	 0, 0, 0},
};

Test(pager_door, every_hostile_alert_gets_its_reason)
{
	run_topic("pager perf.alerts.v1", PW_PAGER_IN_ALERT, DOOR_TABLE(acases), pack_alert,
	          KEY_ALERT);
}

/* ================================================ perf.gate.verdicts.v1 */

typedef struct gate_parts {
	Perfwatch__V1__GateVerdict v;
} gate_parts;

static wire_buf pack_gate(door_edit_fn edit)
{
	static gate_parts q;
	memset(&q, 0, sizeof q);
	perfwatch__v1__gate_verdict__init(&q.v);
	q.v.release_id = KEY_GATE;
	q.v.evaluation = 1;
	q.v.verdict = PERFWATCH__V1__VERDICT__VERDICT_BLOCKING;
	q.v.candidate_build_id = "xla-rc-2026-06-17";
	q.v.baseline_release = "xla-2026-06-10";
	q.v.tests = 2066;
	q.v.fdr_q = 0.05;
	q.v.fleet_weighted_impact_pct = 0.6;
	q.v.evaluated_unix_us = NOW_US;
	q.v.summary = "BLOCKING: chat-8b (2 series, 0.6% fleet)";
	if (edit)
		edit(&q);
	return wire_pack(&q.v.base);
}

#define GEDIT(fn, stmt) DOOR_EDIT(fn, gate_parts *q = p, stmt)
GEDIT(g_no_release, q->v.release_id = "")
GEDIT(g_eval_0, q->v.evaluation = 0)
GEDIT(g_verdict_unknown, q->v.verdict = (Perfwatch__V1__Verdict)99)
GEDIT(g_nan, (q->v.fdr_q = NAN, q->v.fleet_weighted_impact_pct = -INFINITY))
GEDIT(g_future, q->v.evaluated_unix_us = INT64_MAX)
GEDIT(g_past, q->v.evaluated_unix_us = INT64_MIN)
GEDIT(g_no_candidate, q->v.candidate_build_id = "")
GEDIT(g_sql, q->v.release_id = "rc'); UPDATE perfwatch.incidents SET state = 'resolved';--")
GEDIT(g_long_summary, q->v.summary = (char *)wire_letters('s', 60000))
GEDIT(g_tests_0, q->v.tests = 0)
WIRE_APPEND_STR(g_nul_baseline, 5, "xla\0-2026")
WIRE_APPEND_STR(g_ff_summary, 12, "BLOCKING \377")
WIRE_APPEND_STR(g_second, 1, "xla-rc-2026-06-18")
static void g_ff_family(wire_buf *b) { wire_nested(b, 6, 1, "chat-\377", 6); }
static void g_verdict_ld(wire_buf *b) { wire_ld(b, 3, "BLOCKING", 8); }

#define NOT_GATE "payload is not a perfwatch.v1.GateVerdict"
static const door_case gcases[] = {
	{"the good verdict", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	COMMON_CASES(NOT_GATE),
	{"truncated at byte 30", NULL, NULL, NULL, 0, 30, R_DECODE, NOT_GATE, 0, 0, 0},
	{"verdict as a string", NULL, g_verdict_ld, NULL, 0, 0, R_DECODE, NOT_GATE, 0, 0, 0},
	{"no release_id", g_no_release, NULL, NULL, 0, 0, R_MISSING, "gate verdict has no release_id", 0, 0, 0},
	{"evaluation 0", g_eval_0, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a verdict this build does not know", g_verdict_unknown, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"fdr_q NaN, impact -inf", g_nan, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"evaluated in the year 292277", g_future, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"evaluated at INT64_MIN", g_past, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"no candidate build", g_no_candidate, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"no tests", g_tests_0, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"SQL metacharacters in release_id (data)", g_sql, NULL, NULL, 0, 0, R_OK_,
	 "rc'); UPDATE perfwatch.incidents SET state = 'resolved';--", 0, 0, 0},
	{"a 60 kB summary", g_long_summary, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"NUL inside baseline_release", NULL, g_nul_baseline, NULL, 0, 0, R_INVALID,
	 "\"baseline_release\" contains a NUL", 0, 0, 0},
	{"0xff in summary", NULL, g_ff_summary, NULL, 0, 0, R_INVALID, "\"summary\" is not valid UTF-8", 0, 0, 0},
	{"0xff in a family's name", NULL, g_ff_family, NULL, 0, 0, R_INVALID, "\"families.", 0, 0, 0},
	{"release_id twice: the last counts", NULL, g_second, NULL, 0, 0, R_OK_, "xla-rc-2026-06-18", 0, 0, 0},
};

Test(pager_door, every_hostile_gate_verdict_gets_its_reason)
{
	run_topic("pager perf.gate.verdicts.v1", PW_PAGER_IN_GATE, DOOR_TABLE(gcases), pack_gate,
	          KEY_GATE);
}

/* ================================================= perf.changepoints.v1 */

typedef struct cp_parts {
	Perfwatch__V1__Changepoint c;
	Perfwatch__V1__SeriesKey key;
} cp_parts;

static wire_buf pack_cp(door_edit_fn edit)
{
	static cp_parts q;
	memset(&q, 0, sizeof q);
	perfwatch__v1__changepoint__init(&q.c);
	perfwatch__v1__series_key__init(&q.key);
	q.key.model = "chat-8b";
	q.key.hlo_fingerprint = "hlo:9f31c2";
	q.key.platform = "v6e-4";
	q.key.config = "decode.B64.s2048.int8";
	q.key.metric = "tpot_p50_ms";
	q.c.changepoint_id = GOOD_CP;
	q.c.series_id = 412;
	q.c.series_key = GOOD_SERIES;
	q.c.key = &q.key;
	q.c.day = "2026-06-17";
	q.c.shift_unix_us = NOW_US - 86400000000LL;
	q.c.last_clean_cl = "cl/7841885";
	q.c.last_clean_cl_number = 7841885;
	q.c.first_shifted_cl = "cl/7841923";
	q.c.first_shifted_cl_number = 7841923;
	q.c.n_cls = 38;
	q.c.level_before = 3.90;
	q.c.level_after = 4.22;
	q.c.delta_pct = 8.2;
	q.c.detected_unix_us = NOW_US;
	if (edit)
		edit(&q);
	return wire_pack(&q.c.base);
}

#define CEDIT(fn, stmt) DOOR_EDIT(fn, cp_parts *q = p, stmt)
CEDIT(c_no_id, q->c.changepoint_id = "")
CEDIT(c_no_key, q->c.series_key = "")
CEDIT(c_no_series, q->c.key = NULL)
CEDIT(c_nan, (q->c.delta_pct = NAN, q->c.level_before = INFINITY, q->c.p = -1))
CEDIT(c_future, (q->c.detected_unix_us = INT64_MAX, q->c.shift_unix_us = INT64_MAX))
CEDIT(c_past, (q->c.detected_unix_us = 0, q->c.shift_unix_us = INT64_MIN))
CEDIT(c_reversed, (q->c.last_clean_cl = "cl/7841923", q->c.first_shifted_cl = "cl/7841885"))
CEDIT(c_enums, (q->c.direction = (Perfwatch__V1__ShiftDirection)99, q->c.annotation =
                        (Perfwatch__V1__ChangepointAnnotation)99, q->c.stage = (Perfwatch__V1__ChangepointStage)99))
CEDIT(c_sql, q->c.changepoint_id = "cp'); DROP TABLE perfwatch.incidents;--")
CEDIT(c_long_day, q->c.day = (char *)wire_letters('d', 5000))
CEDIT(c_cls_max, q->c.n_cls = UINT32_MAX)
WIRE_APPEND_STR(c_nul_key, 3, "chat-8b\0/x")
WIRE_APPEND_STR(c_ff_fleet, 23, "fc-\377")
WIRE_APPEND_STR(c_second, 1, "cp-second")
static void c_surrogate_metric(wire_buf *b) { wire_nested(b, 4, 5, "tpot\xed\xbf\xbf", 7); }
static void c_shift_ld(wire_buf *b) { wire_ld(b, 7, "yesterday", 9); }

#define NOT_CP "payload is not a perfwatch.v1.Changepoint"
static const door_case ccases[] = {
	{"the good changepoint", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	COMMON_CASES(NOT_CP),
	{"truncated at byte 50", NULL, NULL, NULL, 0, 50, R_DECODE, NOT_CP, 0, 0, 0},
	{"shift time as a string", NULL, c_shift_ld, NULL, 0, 0, R_DECODE, NOT_CP, 0, 0, 0},
	{"no changepoint_id", c_no_id, NULL, NULL, 0, 0, R_MISSING, "changepoint has no changepoint_id", 0, 0, 0},
	{"no series_key", c_no_key, NULL, NULL, 0, 0, R_MISSING, "has no series_key", 0, 0, 0},
	{"no series (the key carries it)", c_no_series, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"delta NaN, level +inf, p -1", c_nan, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"detected and shifted in the year 292277", c_future, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"shifted at INT64_MIN", c_past, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a CL range reversed (display)", c_reversed, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"direction, annotation and stage out of range", c_enums, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"SQL metacharacters in changepoint_id (data)", c_sql, NULL, NULL, 0, 0, R_OK_,
	 "changepoint:cp'); DROP TABLE perfwatch.incidents;--", 0, 0, 0},
	{"a 5000-byte day (display)", c_long_day, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"n_cls UINT32_MAX", c_cls_max, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"NUL inside series_key", NULL, c_nul_key, NULL, 0, 0, R_INVALID, "\"series_key\" contains a NUL", 0, 0, 0},
	{"0xff in fleet_event_id", NULL, c_ff_fleet, NULL, 0, 0, R_INVALID, "\"fleet_event_id\" is not valid UTF-8", 0,
	 0, 0},
	{"a surrogate in key.metric", NULL, c_surrogate_metric, NULL, 0, 0, R_INVALID,
	 "\"key.metric\" is not valid UTF-8", 0, 0, 0},
	{"changepoint_id twice: the last counts", NULL, c_second, NULL, 0, 0, R_OK_, "changepoint:cp-second", 0, 0, 0},
};

Test(pager_door, every_hostile_changepoint_gets_its_reason)
{
	run_topic("pager perf.changepoints.v1", PW_PAGER_IN_CHANGEPOINT, DOOR_TABLE(ccases), pack_cp,
	          KEY_CP);
}

/* =================================================== perf.bisections.v1 */

typedef struct bis_parts {
	Perfwatch__V1__Bisection b;
	Perfwatch__V1__SeriesKey key;
	Perfwatch__V1__BisectStep st;
	Perfwatch__V1__BisectStep *stp[1];
} bis_parts;

static wire_buf pack_bis(door_edit_fn edit)
{
	static bis_parts q;
	memset(&q, 0, sizeof q);
	perfwatch__v1__bisection__init(&q.b);
	perfwatch__v1__series_key__init(&q.key);
	perfwatch__v1__bisect_step__init(&q.st);
	q.key.model = "chat-8b";
	q.key.hlo_fingerprint = "hlo:9f31c2";
	q.key.platform = "v6e-4";
	q.key.config = "decode.B64.s2048.int8";
	q.key.metric = "tpot_p50_ms";
	q.st.job_id = "bs-chat-8b-7841923-04";
	q.st.cl = "cl/7841917";
	q.st.cl_number = 7841917;
	q.stp[0] = &q.st;
	q.b.bisection_id = "bs-chat-8b-7841923";
	q.b.alert_id = GOOD_ALERT;
	q.b.series_key = GOOD_SERIES;
	q.b.series = &q.key;
	q.b.range_lo = "cl/7841885";
	q.b.range_hi = "cl/7841923";
	q.b.n_cls = 38;
	q.b.steps = q.stp;
	q.b.n_steps = 1;
	q.b.culprit = "cl/7841917";
	q.b.culprit_owner = "xla-fusion";
	q.b.status = PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_DONE;
	q.b.confidence = PERFWATCH__V1__BISECTION_CONFIDENCE__BISECTION_CONFIDENCE_VERIFIED_BOTH_SIDES;
	q.b.started_unix_us = NOW_US;
	q.b.updated_unix_us = NOW_US + 3600000000LL;
	if (edit)
		edit(&q);
	return wire_pack(&q.b.base);
}

#define BEDIT(fn, stmt) DOOR_EDIT(fn, bis_parts *q = p, stmt)
BEDIT(b_no_id, q->b.bisection_id = "")
BEDIT(b_no_alert_no_key, (q->b.alert_id = "", q->b.series_key = ""))
BEDIT(b_no_alert, q->b.alert_id = "")
BEDIT(b_status_unknown, q->b.status = (Perfwatch__V1__BisectionStatus)99)
BEDIT(b_running, (q->b.status = PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_RUNNING, q->b.culprit = ""))
BEDIT(b_nan, (q->b.clean_level = NAN, q->b.regressed_level = -INFINITY))
BEDIT(b_future, q->b.updated_unix_us = INT64_MAX)
BEDIT(b_no_updated, (q->b.updated_unix_us = 0, q->b.started_unix_us = INT64_MIN))
BEDIT(b_sql, q->b.bisection_id = "bs'); DELETE FROM perfwatch.incidents;--")
BEDIT(b_culprit_text, q->b.culprit = "not a CL at all")
BEDIT(b_long_title, q->b.culprit_title = (char *)wire_letters('t', 60000))
WIRE_APPEND_STR(b_nul_alert, 2, "perfreg\0-x")
WIRE_APPEND_STR(b_ff_culprit, 17, "cl/\377")
WIRE_APPEND_STR(b_second, 1, "bs-second")
static void b_overlong_job(wire_buf *b) { wire_nested(b, 16, 2, "bs\xc0\xaf" "04", 6); }
static void b_status_ld(wire_buf *b) { wire_ld(b, 24, "done", 4); }

#define NOT_BIS "payload is not a perfwatch.v1.Bisection"
static const door_case bcases[] = {
	{"the good bisection", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	COMMON_CASES(NOT_BIS),
	{"truncated at byte 50", NULL, NULL, NULL, 0, 50, R_DECODE, NOT_BIS, 0, 0, 0},
	{"status as a string", NULL, b_status_ld, NULL, 0, 0, R_DECODE, NOT_BIS, 0, 0, 0},
	{"no bisection_id", b_no_id, NULL, NULL, 0, 0, R_MISSING, "bisection has no bisection_id", 0, 0, 0},
	{"neither alert nor series", b_no_alert_no_key, NULL, NULL, 0, 0, R_MISSING,
	 "names neither an alert nor a series", 0, 0, 0},
	{"a changepoint's bisection (no alert)", b_no_alert, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a status this build does not know", b_status_unknown, NULL, NULL, 0, 0, R_OK_,
	 "bisection:bs-chat-8b-7841923:unspecified:cl/7841917:1781744400000000", 0, 0, 0},
	{"still running", b_running, NULL, NULL, 0, 0, R_OK_, "bisection:bs-chat-8b-7841923:running::1781744400000000",
	 0, 0, 0},
	{"levels NaN and -inf (not paged)", b_nan, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"updated in the year 292277", b_future, NULL, NULL, 0, 0, R_OK_,
	 "bisection:bs-chat-8b-7841923:done:cl/7841917:9223372036854775807", 0, 0, 0},
	{"never updated, started at INT64_MIN", b_no_updated, NULL, NULL, 0, 0, R_OK_,
	 "bisection:bs-chat-8b-7841923:done:cl/7841917:0", 0, 0, 0},
	{"SQL metacharacters in bisection_id (data)", b_sql, NULL, NULL, 0, 0, R_OK_,
	 "bisection:bs'); DELETE FROM perfwatch.incidents;--:done:cl/7841917:1781744400000000", 0, 0, 0},
	{"a culprit that is not a CL (display)", b_culprit_text, NULL, NULL, 0, 0, R_OK_,
	 "bisection:bs-chat-8b-7841923:done:not a CL at all:1781744400000000", 0, 0, 0},
	{"a 60 kB culprit title (display)", b_long_title, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"NUL inside alert_id", NULL, b_nul_alert, NULL, 0, 0, R_INVALID, "\"alert_id\" contains a NUL", 0, 0, 0},
	{"0xff in culprit", NULL, b_ff_culprit, NULL, 0, 0, R_INVALID, "\"culprit\" is not valid UTF-8", 0, 0, 0},
	{"an overlong '/' in a step's job_id", NULL, b_overlong_job, NULL, 0, 0, R_INVALID,
	 "\"steps.job_id\" is not valid UTF-8", 0, 0, 0},
	{"bisection_id twice: the last counts", NULL, b_second, NULL, 0, 0, R_OK_,
	 "bisection:bs-second:done:cl/7841917:1781744400000000", 0, 0, 0},
};

Test(pager_door, every_hostile_bisection_gets_its_reason)
{
	run_topic("pager perf.bisections.v1", PW_PAGER_IN_BISECTION, DOOR_TABLE(bcases), pack_bis,
	          KEY_BIS);
}

/* ================================================= perf.attributions.v1 */

typedef struct attr_parts {
	Perfwatch__V1__Attribution a;
	Perfwatch__V1__SeriesKey key;
} attr_parts;

static wire_buf pack_attr(door_edit_fn edit)
{
	static attr_parts q;
	memset(&q, 0, sizeof q);
	perfwatch__v1__attribution__init(&q.a);
	perfwatch__v1__series_key__init(&q.key);
	q.key.model = "chat-8b";
	q.key.hlo_fingerprint = "hlo:9f31c2";
	q.key.platform = "v6e-4";
	q.key.config = "decode.B64.s2048.int8";
	q.key.metric = "tpot_p50_ms";
	q.a.alert_id = GOOD_ALERT;
	q.a.series_key = GOOD_SERIES;
	q.a.series = &q.key;
	q.a.before_build_id = "xla-2026-06-10";
	q.a.after_build_id = "xla-rc-2026-06-17";
	q.a.top_op_family = "fusion.1423";
	q.a.top_op_family_share = 0.83;
	q.a.created_unix_us = NOW_US + 3600000000LL;
	q.a.status = "ok";
	q.a.owner_hint = "compiler";
	q.a.source = "alert";
	if (edit)
		edit(&q);
	return wire_pack(&q.a.base);
}

#define TEDIT(fn, stmt) DOOR_EDIT(fn, attr_parts *q = p, stmt)
TEDIT(t_no_id, q->a.alert_id = "")
TEDIT(t_no_series, (q->a.series = NULL, q->a.series_key = ""))
TEDIT(t_nan, (q->a.top_op_family_share = NAN, q->a.kernel_sum_before_us = -INFINITY))
TEDIT(t_future, q->a.created_unix_us = INT64_MAX)
TEDIT(t_past, q->a.created_unix_us = INT64_MIN)
TEDIT(t_owner_other, q->a.owner_hint = "somebody-else")
TEDIT(t_status_other, q->a.status = "exploded")
TEDIT(t_sql, q->a.alert_id = "perfreg'); DELETE FROM perfwatch.incidents;--")
TEDIT(t_long_hlo, q->a.hlo_diff = (char *)wire_letters('h', 60000))
TEDIT(t_share_absurd, q->a.top_op_family_share = 1e300)
WIRE_APPEND_STR(t_nul_owner, 22, "compiler\0")
WIRE_APPEND_STR(t_ff_report, 32, "| op \377 |")
WIRE_APPEND_STR(t_second, 1, "perfreg-2026-06-18-00413")
static void t_surrogate_op(wire_buf *b) { wire_nested(b, 10, 1, "fusion\xed\xa0\x80", 9); }
static void t_created_ld(wire_buf *b) { wire_ld(b, 19, "now", 3); }

#define NOT_ATTR "payload is not a perfwatch.v1.Attribution"
static const door_case tcases[] = {
	{"the good attribution", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	COMMON_CASES(NOT_ATTR),
	{"truncated at byte 50", NULL, NULL, NULL, 0, 50, R_DECODE, NOT_ATTR, 0, 0, 0},
	{"created as a string", NULL, t_created_ld, NULL, 0, 0, R_DECODE, NOT_ATTR, 0, 0, 0},
	{"no alert_id", t_no_id, NULL, NULL, 0, 0, R_MISSING, "attribution has no alert_id", 0, 0, 0},
	{"no series (joins its alert by id)", t_no_series, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"share NaN, kernel sum -inf", t_nan, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"share 1e300", t_share_absurd, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"created in the year 292277", t_future, NULL, NULL, 0, 0, R_OK_,
	 "attribution:" GOOD_ALERT ":9223372036854775807", 0, 0, 0},
	{"created at INT64_MIN", t_past, NULL, NULL, 0, 0, R_OK_, "attribution:" GOOD_ALERT ":-9223372036854775808", 0,
	 0, 0},
	{"an owner hint this build does not know", t_owner_other, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a status this build does not know", t_status_other, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"SQL metacharacters in alert_id (data)", t_sql, NULL, NULL, 0, 0, R_OK_,
	 "attribution:perfreg'); DELETE FROM perfwatch.incidents;--:1781744400000000", 0, 0, 0},
	{"a 60 kB HLO diff (stays in PostgreSQL)", t_long_hlo, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"NUL at the end of owner_hint", NULL, t_nul_owner, NULL, 0, 0, R_INVALID, "\"owner_hint\" contains a NUL", 0,
	 0, 0},
	{"0xff in report", NULL, t_ff_report, NULL, 0, 0, R_INVALID, "\"report\" is not valid UTF-8", 0, 0, 0},
	{"a surrogate in an op row", NULL, t_surrogate_op, NULL, 0, 0, R_INVALID, "\"ops.", 0, 0, 0},
	{"alert_id twice: the last counts", NULL, t_second, NULL, 0, 0, R_OK_,
	 "attribution:perfreg-2026-06-18-00413:1781744400000000", 0, 0, 0},
};

Test(pager_door, every_hostile_attribution_gets_its_reason)
{
	run_topic("pager perf.attributions.v1", PW_PAGER_IN_ATTRIBUTION, DOOR_TABLE(tcases), pack_attr,
	          KEY_ATTR);
}

/* ================================================= perf.rollouts.v1 */

/* test_canary.sh's chat-8b ROLLBACK (wire_messages.h) */
static wire_buf pack_rollout(door_edit_fn edit)
{
	static Perfwatch__V1__RolloutDecision q;
	wire_rollback_init(&q);
	if (edit)
		edit(&q);
	return wire_pack(&q.base);
}

#define REDIT(fn, stmt) DOOR_EDIT(fn, Perfwatch__V1__RolloutDecision *q = p, stmt)
REDIT(r_no_rollout, q->rollout_id = "")
REDIT(r_no_family, q->family = "")
REDIT(r_no_decision, q->decision = PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_UNSPECIFIED)
REDIT(r_unknown_decision, q->decision = 17)
REDIT(r_no_artifact, q->rollback_artifact = "")
REDIT(r_no_metric, q->metric = PERFWATCH__V1__CANARY_METRIC__CANARY_METRIC_UNSPECIFIED)
REDIT(r_unknown_metric, q->metric = 9)
REDIT(r_nan_effect, q->effect_pct = NAN)
REDIT(r_inf_hi, q->hi_pct = INFINITY)
REDIT(r_above, q->effect_pct = 2.5)
REDIT(r_swapped, (q->lo_pct = 2.231, q->hi_pct = 0.501))
REDIT(r_no_windows, q->windows = 0)
REDIT(r_promote, (q->decision = PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_PROMOTE,
                  q->rollback_artifact = "", q->effect_pct = NAN))
REDIT(r_hold, (q->decision = PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_HOLD, q->inconclusive = true,
               q->metric = PERFWATCH__V1__CANARY_METRIC__CANARY_METRIC_UNSPECIFIED, q->windows = 0))
REDIT(r_pinned, (q->decision = PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_PINNED,
                 q->rollback_artifact = "", q->pinned_release = "xla-2026-06-10",
                 q->pinned_artifact = "serving/chat-8b/xla-2026-06-10.aot", q->pin_owner = "chat-serving-oncall",
                 q->pin_signed_off_by = "chat-models-lead"))
REDIT(r_pin_expired_no_rollout, (q->decision = PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_PIN_EXPIRED,
                                 q->rollout_id = "", q->rollback_artifact = ""))
REDIT(r_pinned_no_rollout, (q->decision = PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_PINNED,
                            q->rollout_id = ""))
REDIT(r_long_rollout, q->rollout_id = (char *)wire_letters('r', 256))
REDIT(r_long_artifact, q->rollback_artifact = (char *)wire_letters('a', 256))
REDIT(r_sql, q->family = "chat'); DELETE FROM perfwatch.pages;--")
WIRE_APPEND_STR(r_nul_family, 2, "chat-8b\0")
WIRE_APPEND_STR(r_ff_artifact, 12, "serving/\377")

#define NOT_ROLLOUT "payload is not a perfwatch.v1.RolloutDecision"
static const door_case rcases[] = {
	{"the good rollback", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	COMMON_CASES(NOT_ROLLOUT),
	{"truncated at byte 40", NULL, NULL, NULL, 0, 40, R_DECODE, NOT_ROLLOUT, 0, 0, 0},
	{"no rollout_id", r_no_rollout, NULL, NULL, 0, 0, R_MISSING, "rollout decision has no rollout_id", 0, 0, 0},
	{"no family", r_no_family, NULL, NULL, 0, 0, R_MISSING, "has no family", 0, 0, 0},
	{"no decision", r_no_decision, NULL, NULL, 0, 0, R_MISSING, "has no decision", 0, 0, 0},
	{"a decision this build does not know", r_unknown_decision, NULL, NULL, 0, 0, R_MISSING, "has no decision", 0,
	 0, 0},
	{"a rollback naming no artifact", r_no_artifact, NULL, NULL, 0, 0, R_MISSING, "names no rollback_artifact", 0,
	 0, 0},
	{"a rollback naming no metric", r_no_metric, NULL, NULL, 0, 0, R_MISSING, "names no metric", 0, 0, 0},
	{"a metric this build does not know", r_unknown_metric, NULL, NULL, 0, 0, R_MISSING, "names no metric", 0, 0,
	 0},
	{"effect NaN", r_nan_effect, NULL, NULL, 0, 0, R_INVALID, "outside its interval", 0, 0, 0},
	{"interval open above", r_inf_hi, NULL, NULL, 0, 0, R_INVALID, "outside its interval", 0, 0, 0},
	{"effect above its interval", r_above, NULL, NULL, 0, 0, R_INVALID, "outside its interval", 0, 0, 0},
	{"interval's ends swapped", r_swapped, NULL, NULL, 0, 0, R_INVALID, "outside its interval", 0, 0, 0},
	{"no windows", r_no_windows, NULL, NULL, 0, 0, R_INVALID, "no windows", 0, 0, 0},
	{"a PROMOTE (no artifact, no effect: pages nobody)", r_promote, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"an inconclusive HOLD (no metric, no windows)", r_hold, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* the canary publishes both for a gate waiver's pin (docs/canary.md "Pins"); the demo's
	 * pinned release had its PINNED dead-lettered as a decision the pager did not know */
	{"a PINNED (pages nobody)", r_pinned, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a PIN_EXPIRED of a family no rollout saw (no rollout_id)", r_pin_expired_no_rollout, NULL, NULL, 0, 0, R_OK_,
	 "rollout:rollback--chat-8b", 0, 0, 0},
	{"a PINNED with no rollout_id", r_pinned_no_rollout, NULL, NULL, 0, 0, R_MISSING,
	 "rollout decision has no rollout_id", 0, 0, 0},
	{"a 256-byte rollout_id", r_long_rollout, NULL, NULL, 0, 0, R_INVALID, "rollout_id is 256 bytes", 0, 0, 0},
	{"a 256-byte artifact", r_long_artifact, NULL, NULL, 0, 0, R_INVALID, "rollback_artifact is 256 bytes", 0, 0,
	 0},
	{"SQL metacharacters in family (data)", r_sql, NULL, NULL, 0, 0, R_OK_,
	 "rollout:rollback-rollout-xla-2026-06-22-chat'); DELETE FROM perfwatch.pages;--", 0, 0, 0},
	{"NUL at the end of family", NULL, r_nul_family, NULL, 0, 0, R_INVALID, "\"family\" contains a NUL", 0, 0, 0},
	{"0xff in rollback_artifact", NULL, r_ff_artifact, NULL, 0, 0, R_INVALID,
	 "\"rollback_artifact\" is not valid UTF-8", 0, 0, 0},
};

Test(pager_door, every_hostile_rollout_decision_gets_its_reason)
{
	run_topic("pager perf.rollouts.v1", PW_PAGER_IN_ROLLOUT, DOOR_TABLE(rcases), pack_rollout, KEY_ROLLOUT);
}

/* ======================================== what a hostile time becomes */

/*
 * An incident opens at its first finding's created_unix_us; an alert created
 * in the year 292277 or at INT64_MIN made startsAt "292277-..." or a
 * negative year with a negative millisecond field, which Alertmanager's
 * RFC 3339 parser refuses (the page never went out). pw_rfc3339 keeps to
 * years 1970..9999.
 */
Test(pager_door, a_hostile_creation_time_still_makes_an_rfc3339_start)
{
	char ts[64];
	pw_rfc3339(INT64_MAX, ts, sizeof ts);
	cr_expect_str_eq(ts, "9999-12-31T23:59:59.999Z");
	pw_rfc3339(INT64_MIN, ts, sizeof ts);
	cr_expect_str_eq(ts, "1970-01-01T00:00:00.000Z");
	pw_rfc3339(-1, ts, sizeof ts);
	cr_expect_str_eq(ts, "1970-01-01T00:00:00.000Z");
	pw_rfc3339(NOW_US + 123456, ts, sizeof ts);
	cr_expect_str_eq(ts, "2026-06-18T00:00:00.123Z");
}

/*
 * Ids longer than what the pager keeps were cut silently (two alerts that
 * differed after byte 127 shared an incident; two that differed after byte
 * 300 shared a part key, the second dropped as a duplicate). They are
 * refused whole with INVALID_VALUE and a detail naming the field, as the
 * bisector and attributor refuse theirs.
 */
AEDIT(a_id_128, q->al.alert_id = (char *)wire_letters('a', 128))
AEDIT(a_id_127, q->al.alert_id = (char *)wire_letters('a', 127))
AEDIT(a_id_60k, q->al.alert_id = (char *)wire_letters('a', 60000))
AEDIT(a_key_256, q->al.series_key = (char *)wire_letters('k', 256))
AEDIT(a_model_128, q->key.model = (char *)wire_letters('m', 128))
static const door_case long_id_cases[] = {
	{"a 128-byte alert_id", a_id_128, NULL, NULL, 0, 0, R_INVALID, "alert_id is 128 bytes", 0, 0, 0},
	{"a 60 kB alert_id", a_id_60k, NULL, NULL, 0, 0, R_INVALID, "alert_id", 0, 0, 0},
	{"a 256-byte series_key", a_key_256, NULL, NULL, 0, 0, R_INVALID, "series_key", 0, 0, 0},
	{"a 128-byte model", a_model_128, NULL, NULL, 0, 0, R_INVALID, "series.model", 0, 0, 0},
};

Test(pager_door, random_mutations_on_every_topic)
{
	static const struct {
		const char *topic;
		pw_pager_in kind;
		door_pack_fn pack;
	} t[] = {
		{"pager perf.alerts.v1", PW_PAGER_IN_ALERT, pack_alert},
		{"pager perf.gate.verdicts.v1", PW_PAGER_IN_GATE, pack_gate},
		{"pager perf.changepoints.v1", PW_PAGER_IN_CHANGEPOINT, pack_cp},
		{"pager perf.bisections.v1", PW_PAGER_IN_BISECTION, pack_bis},
		{"pager perf.attributions.v1", PW_PAGER_IN_ATTRIBUTION, pack_attr},
		{"pager perf.rollouts.v1", PW_PAGER_IN_ROLLOUT, pack_rollout},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		cur_kind = t[i].kind;
		wire_buf good = t[i].pack(NULL);
		door_mutations(t[i].topic, &good, pager_door, 10000, 19 + i);
		free(good.p);
	}
}

Test(pager_door, ids_longer_than_kept_are_refused)
{
	cur_kind = PW_PAGER_IN_ALERT;
	door_cur_pack = pack_alert;
	door_cur_good = KEY_ALERT;
	door_cur_cases = long_id_cases;
	for (size_t i = 0; i < sizeof long_id_cases / sizeof long_id_cases[0]; i++) {
		door_expect e;
		wire_buf b = door_case_build(i, &e);
		ProtobufCMessage *m = NULL;
		bool skip;
		char detail[512] = "";
		cr_expect_eq(pager_door(b.p, b.n, &m, &skip, detail, sizeof detail), e.want, "%s", e.name);
		cr_expect(strstr(detail, door_want_detail) != NULL, "%s: detail \"%s\" lacks \"%s\"", e.name, detail,
		          door_want_detail);
		cr_expect(last_key[0] == 0, "%s: refused, yet a part key", e.name);
		if (m)
			protobuf_c_message_free_unpacked(m, NULL);
		free(b.p);
	}
	/* 127 bytes is kept whole: it passes */
	door_cur_cases = (const door_case[]){{"a 127-byte alert_id", a_id_127, NULL, NULL, 0, 0, R_OK_, "", 0, 0, 0}};
	door_expect e;
	wire_buf b = door_case_build(0, &e);
	ProtobufCMessage *m = NULL;
	bool skip;
	char detail[512] = "";
	cr_expect_eq(pager_door(b.p, b.n, &m, &skip, detail, sizeof detail), R_OK_, "%s", detail);
	cr_expect(strlen(last_key) == strlen("alert:") + 127 + strlen(":r1"), "part key %s", last_key);
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);
	free(b.p);
}

/* The door knows the pager's five topics and refuses a message of any other. */
Test(pager_door, its_five_topics_and_no_other)
{
	cr_expect_eq(pw_pager_in_of(PW_TOPIC_ALERTS), PW_PAGER_IN_ALERT);
	cr_expect_eq(pw_pager_in_of(PW_TOPIC_GATE_VERDICTS), PW_PAGER_IN_GATE);
	cr_expect_eq(pw_pager_in_of(PW_TOPIC_CHANGEPOINTS), PW_PAGER_IN_CHANGEPOINT);
	cr_expect_eq(pw_pager_in_of(PW_TOPIC_BISECTIONS), PW_PAGER_IN_BISECTION);
	cr_expect_eq(pw_pager_in_of(PW_TOPIC_ATTRIBUTIONS), PW_PAGER_IN_ATTRIBUTION);
	cr_expect_eq(pw_pager_in_of(PW_TOPIC_POINTS), PW_PAGER_IN_UNKNOWN);
	cr_expect_eq(pw_pager_in_of(PW_TOPIC_TRIAGE), PW_PAGER_IN_UNKNOWN);
	cr_expect_eq(pw_pager_in_of(NULL), PW_PAGER_IN_UNKNOWN);
	cr_expect_null(pw_pager_in_desc(PW_PAGER_IN_UNKNOWN));

	wire_buf b = pack_alert(NULL);
	pw_pager_part pt;
	Perfwatch__V1__GateVerdict *gv = NULL;
	char detail[512] = "";
	cr_expect_eq(pw_pager_door(PW_PAGER_IN_UNKNOWN, b.p, b.n, &pt, &gv, detail, sizeof detail), R_INVALID);
	cr_expect_str_eq(detail, "topic not consumed by the pager");
	cr_expect_null(gv);
	cr_expect_eq(pt.key[0], 0);
	free(b.p);
}

/* Each decision the door takes is counted under its own outcome; the names are
 * the ones docs/pager.md gives for perfwatch_pager_findings_total. */
Test(pager_door, each_rollout_decision_has_its_outcome)
{
	cr_expect_str_eq(pw_rollout_outcome("ROLLBACK"), "rollback");
	cr_expect_str_eq(pw_rollout_outcome("PROMOTE"), "promote");
	cr_expect_str_eq(pw_rollout_outcome("HOLD"), "hold");
	cr_expect_str_eq(pw_rollout_outcome("PINNED"), "pinned");
	cr_expect_str_eq(pw_rollout_outcome("PIN_EXPIRED"), "pin_expired");
	cr_expect_str_eq(pw_rollout_outcome("pinned"), "unknown");
	cr_expect_str_eq(pw_rollout_outcome(""), "unknown");
}
