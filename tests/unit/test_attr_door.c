/*
 * test_attr_door.c: the attributor's doors (services/attributor/attr_door.h:
 * pw_attr_alert_decode for perf.alerts.v1, pw_attr_bisection_decode for
 * perf.bisections.v1), each on a table of hostile payloads (issue 19): the
 * DlqReason and a detail substring every refused one must get; for what must
 * pass, whether the attributor takes it or lets it by, the id that must come
 * out unchanged and, for an alert, which before side it selects. Also the
 * text[] literal the bisect job ids reach PostgreSQL in (pw_pg_text_array):
 * an id holding '"' or ',' stays one id.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr_door.h"
#include "pw_alert_followup.h"
#include "pw_input.h"
#include "door_table.h"
#include "pw_pg.h"
#include "wire_messages.h"

#define R_OK_ PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED
#define R_DECODE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED
#define R_MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
#define R_INCONS PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT
#define R_OVERSIZE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE

#define ACCEPT PW_ATTR_INPUT_ACCEPT
#define IGNORE PW_ATTR_INPUT_IGNORE
#define FOLLOW PW_ATTR_INPUT_FOLLOW_UP
#define DEAD PW_ATTR_INPUT_DEAD

#define GOOD_ALERT "perfreg-2026-06-18-00412"
#define GOOD_BISECTION "bs-chat-8b-7841923"
#define NOW_US 1781740800000000LL

/* ====================================================== perf.alerts.v1 */

/*
 * The worked example's B64 TPOT alert of the gate (wire_messages.h) with all
 * three before sides, without the fields the attributor does not read (the
 * delta's unit and percentage, the changepoint id, the verdict, the owner)
 * and with the 10-digit fingerprint the details below count bytes of.
 */
static wire_buf pack_alert(door_edit_fn edit)
{
	static wire_alert_parts q;
	wire_alert_init(&q);
	q.key.hlo_fingerprint = "hlo:9f31c2";
	q.delta.abs_unit = "";
	q.delta.pct = 0;
	q.cp.changepoint_id = "";
	q.al.verdict = PERFWATCH__V1__VERDICT__VERDICT_UNSPECIFIED;
	q.al.owner_hint = "";
	wire_rekey_alert(&q);
	if (edit)
		edit(&q);
	return wire_pack(&q.al.base);
}

#define AEDIT(fn, stmt) DOOR_EDIT(fn, wire_alert_parts *q = p, stmt)
#define NO_WINDOW(q) ((q)->base.window_start_unix_us = 0, (q)->base.window_end_unix_us = 0)
AEDIT(a_no_id, q->al.alert_id = "")
AEDIT(a_no_series, q->al.series = NULL)
AEDIT(a_no_model, (q->key.model = "", wire_rekey_alert(q)))
AEDIT(a_no_hlo, (q->key.hlo_fingerprint = "", wire_rekey_alert(q)))
AEDIT(a_no_platform, (q->key.platform = "", wire_rekey_alert(q)))
AEDIT(a_no_config, (q->key.config = "", wire_rekey_alert(q)))
AEDIT(a_no_metric, (q->key.metric = "", wire_rekey_alert(q)))
AEDIT(a_no_key, q->al.series_key = "")
AEDIT(a_no_observed, q->al.observed = NULL)
AEDIT(a_no_release, q->obs.release = "")
AEDIT(a_cp_side, NO_WINDOW(q))
AEDIT(a_build_side, (NO_WINDOW(q), q->al.changepoint = NULL))
AEDIT(a_cp_text, (NO_WINDOW(q), q->cp.cl_range_lo = "cl/abc"))
AEDIT(a_no_side, (NO_WINDOW(q), q->al.changepoint = NULL, q->base.window = ""))
AEDIT(a_no_baseline, (q->al.baseline = NULL, q->al.changepoint = NULL))
AEDIT(a_window_reversed, q->base.window_end_unix_us = q->base.window_start_unix_us - 1)
AEDIT(a_window_empty, q->base.window_end_unix_us = q->base.window_start_unix_us)
AEDIT(a_window_forever, q->base.window_end_unix_us = INT64_MAX)
AEDIT(a_window_negative, q->base.window_start_unix_us = -1)
AEDIT(a_window_min, q->base.window_start_unix_us = INT64_MIN)
AEDIT(a_window_half, q->base.window_end_unix_us = 0)
AEDIT(a_long_id, q->al.alert_id = (char *)wire_letters('a', 60000))
AEDIT(a_id_200, q->al.alert_id = (char *)wire_letters('a', PW_ATTR_ID_MAX))
AEDIT(a_long_key, q->al.series_key = (char *)wire_letters('k', 300))
AEDIT(a_long_release, q->obs.release = (char *)wire_letters('r', 300))
AEDIT(a_long_window, q->base.window = (char *)wire_letters('w', 300))

/* n bytes of c in a buffer of its own (up to 3 MB), built once. */
static char *filled(char *b, char c, size_t n)
{
	if (!b[0])
		memset(b, c, n);
	return b;
}
/* the 3 MB alert: a summary of 3,000,000 bytes (its follow-up copied it whole) */
static void a_huge_summary(void *p)
{
	wire_alert_parts *q = p;
	static char b[3000001];
	q->al.summary = filled(b, 's', 3000000);
}
static void a_owner_4097(void *p)
{
	wire_alert_parts *q = p;
	static char b[4098];
	q->al.owner_hint = filled(b, 'o', PW_ALERT_STRING_MAX + 1);
}
static void a_owner_4096(void *p)
{
	wire_alert_parts *q = p;
	static char b[4097];
	q->al.owner_hint = filled(b, 'o', PW_ALERT_STRING_MAX);
}
static void a_scope_257(void *p)
{
	wire_alert_parts *q = p;
	static Perfwatch__V1__AlertScope sc = PERFWATCH__V1__ALERT_SCOPE__INIT;
	static char *items[PW_ALERT_LIST_MAX + 1];
	for (size_t i = 0; i < PW_ALERT_LIST_MAX + 1; i++)
		items[i] = "chat-8b/v6e-4/decode.B8: +7.4%";
	sc.correlated_series = items;
	sc.n_correlated_series = PW_ALERT_LIST_MAX + 1;
	q->al.scope = &sc;
}
AEDIT(a_key_other, q->al.series_key = "rank-moe-110b/hlo:1/v5e-8/prefill.B8/ttft_p50_ms")
AEDIT(a_key_extra, q->al.series_key = "chat-8b/hlo:9f31c2/v6e-4/decode.B64.s2048.int8/tpot_p50_ms/")
AEDIT(a_key_slash_part, (q->key.config = "decode/B64", q->al.series_key =
                                 "chat-8b/hlo:9f31c2/v6e-4/decode/B64/tpot_p50_ms"))
AEDIT(a_sql_id, q->al.alert_id = "perfreg'); DELETE FROM perfwatch.attributions;--")
AEDIT(a_sql_release, q->obs.release = "xla' OR '1'='1")
AEDIT(a_sql_key, (q->key.model = "chat'--", q->key.config = "decode\"; DROP TABLE x", wire_rekey_alert(q)))
AEDIT(a_delta_nan, (q->delta.abs = NAN, q->base.mad = -INFINITY))
AEDIT(a_median_inf, (q->obs.median = INFINITY, q->base.median = NAN))
AEDIT(a_created_future, q->al.created_unix_us = INT64_MAX)
AEDIT(a_created_past, q->al.created_unix_us = INT64_MIN)
AEDIT(a_series_id_negative, q->al.series_id = -1)
AEDIT(a_revision_max, q->al.revision = UINT32_MAX)
AEDIT(a_kind_unknown, q->al.kind = (Perfwatch__V1__AlertKind)99)
AEDIT(a_improvement, q->al.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_IMPROVEMENT)
AEDIT(a_infra, q->al.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_INFRA_HEALTH)
AEDIT(a_source_unknown, q->al.source = (Perfwatch__V1__AlertSource)99)
AEDIT(a_baseliner, q->al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_BASELINER)
AEDIT(a_watcher, q->al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_WATCHER)
AEDIT(a_follow_up_bare, (q->al.follow_up = 1, q->al.alert_id = "", q->al.observed = NULL))

WIRE_APPEND_STR(a_nul_id, 1, "perfreg-00412\0evil")
WIRE_APPEND_STR(a_surrogate_summary, 24, "TPOT \xed\xa0\x80")
WIRE_APPEND_STR(a_cut_owner, 19, "xla-\xe2\x82")
WIRE_APPEND_STR(a_second_id, 1, "perfreg-2026-06-18-00413")
static void a_nul_platform(wire_buf *b) { wire_nested(b, 8, 3, "v6e\0-4", 6); }
static void a_ff_release(wire_buf *b) { wire_nested(b, 11, 3, "xla-rc-\377", 8); }
static void a_overlong_window(wire_buf *b) { wire_nested(b, 10, 7, "xla\xc0\xaf", 5); }
static void a_cont_op_diff(wire_buf *b) { wire_nested(b, 17, 1, "https://x/\x80", 11); }
static void a_id_varint(wire_buf *b) { wire_int(b, 1, 412); }
static void a_kind_ld(wire_buf *b) { wire_ld(b, 3, "regression", 10); }
static void a_past_end(wire_buf *b) { wire_past_end(b, 7); }
static void a_group(wire_buf *b) { wire_varint(b, 40u << 3 | 3); }
static void a_unknown(wire_buf *b)
{
	wire_int(b, 99, 12345);
	wire_ld(b, 100, "a field of a later version", 26);
}

#define NOT_ALERT "payload is not a perfwatch.v1.Alert"
#define TOO_LONG "alert_id, series key, observed or baseline build too long"
static const door_case acases[] = {
	{"the good alert (baseline window)", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'w', 0},
	{"empty payload", NULL, NULL, (const uint8_t *)"", 0, 0, R_DECODE, "empty payload", 0, 0, 0},
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, 0, R_DECODE, NOT_ALERT, 0, 0, 0},
	{"truncated after 3 bytes (inside alert_id)", NULL, NULL, NULL, 0, 3, R_DECODE, NOT_ALERT, 0, 0, 0},
	{"truncated at byte 40 (inside created_unix_us)", NULL, NULL, NULL, 0, 40, R_DECODE, NOT_ALERT, 0, 0, 0},
	{"truncated by its last byte (inside summary)", NULL, NULL, NULL, 0, -1, R_DECODE, NOT_ALERT, 0, 0, 0},
	{"alert_id as a varint", NULL, a_id_varint, NULL, 0, 0, R_DECODE, NOT_ALERT, 0, 0, 0},
	{"kind as a string", NULL, a_kind_ld, NULL, 0, 0, R_DECODE, NOT_ALERT, 0, 0, 0},
	{"a length prefix past the end", NULL, a_past_end, NULL, 0, 0, R_DECODE, NOT_ALERT, 0, 0, 0},
	{"a group that never ends", NULL, a_group, NULL, 0, 0, R_DECODE, NOT_ALERT, 0, 0, 0},
	{"unknown fields (a later version)", NULL, a_unknown, NULL, 0, 0, R_OK_, NULL, 0, 'w', 0},
	{"no alert_id", a_no_id, NULL, NULL, 0, 0, R_MISSING, "alert has no alert_id", 0, 0, 0},
	{"no series", a_no_series, NULL, NULL, 0, 0, R_MISSING, "incomplete series key", 0, 0, 0},
	{"no model", a_no_model, NULL, NULL, 0, 0, R_MISSING, "incomplete series key", 0, 0, 0},
	{"no hlo_fingerprint", a_no_hlo, NULL, NULL, 0, 0, R_MISSING, "incomplete series key", 0, 0, 0},
	{"no platform", a_no_platform, NULL, NULL, 0, 0, R_MISSING, "incomplete series key", 0, 0, 0},
	{"no config", a_no_config, NULL, NULL, 0, 0, R_MISSING, "incomplete series key", 0, 0, 0},
	{"no metric", a_no_metric, NULL, NULL, 0, 0, R_MISSING, "incomplete series key", 0, 0, 0},
	{"no series_key", a_no_key, NULL, NULL, 0, 0, R_MISSING, "incomplete series key", 0, 0, 0},
	{"no observed", a_no_observed, NULL, NULL, 0, 0, R_MISSING, "names no observed build", 0, 0, 0},
	{"no observed build", a_no_release, NULL, NULL, 0, 0, R_MISSING, "names no observed build", 0, 0, 0},
	{"no window: the changepoint's last clean CL", a_cp_side, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'c', 0},
	{"no window, no changepoint: the baseline build", a_build_side, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'b', 0},
	{"no window, changepoint lo not a CL: the baseline build", a_cp_text, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'b', 0},
	{"no before side at all", a_no_side, NULL, NULL, 0, 0, R_MISSING,
	 "has no baseline window, changepoint range or baseline build", 0, 0, 0},
	{"no baseline, no changepoint", a_no_baseline, NULL, NULL, 0, 0, R_MISSING,
	 "has no baseline window, changepoint range or baseline build", 0, 0, 0},
	{"baseline window reversed", a_window_reversed, NULL, NULL, 0, 0, R_INCONS, "before it starts", 0, 0, 0},
	{"baseline window empty", a_window_empty, NULL, NULL, 0, 0, R_INCONS, "before it starts", 0, 0, 0},
	{"baseline window ending in the year 292277", a_window_forever, NULL, NULL, 0, 0, R_INVALID,
	 "is not in 1970..2200", 0, 0, 0},
	{"baseline window starting before 1970", a_window_negative, NULL, NULL, 0, 0, R_INVALID, "window -1..", 0, 0,
	 0},
	{"baseline window starting at INT64_MIN", a_window_min, NULL, NULL, 0, 0, R_INVALID, "is not in 1970..2200", 0,
	 0, 0},
	{"baseline window without an end: the changepoint", a_window_half, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'c', 0},
	{"a 60 kB alert_id", a_long_id, NULL, NULL, 0, 0, R_INVALID, "(60000, ", 0, 0, 0},
	{"an alert_id of exactly 200 bytes", a_id_200, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'w', PW_ATTR_ID_MAX},
	{"a 300-byte series_key", a_long_key, NULL, NULL, 0, 0, R_INVALID, TOO_LONG, 0, 0, 0},
	{"a 300-byte observed build", a_long_release, NULL, NULL, 0, 0, R_INVALID, TOO_LONG, 0, 0, 0},
	{"a 300-byte baseline build", a_long_window, NULL, NULL, 0, 0, R_INVALID, "58, 17, 300 bytes", 0, 0, 0},
	{"a 3 MB summary (the alert that jammed the outbox)", a_huge_summary, NULL, NULL, 0, 0, R_OVERSIZE,
	 "bytes (at most 262144)", 0, 0, 0},
	{"a 4097-byte owner_hint", a_owner_4097, NULL, NULL, 0, 0, R_OVERSIZE,
	 "field \"owner_hint\" of 4097 bytes (at most 4096)", 0, 0, 0},
	{"a 4096-byte owner_hint", a_owner_4096, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'w', 0},
	{"257 correlated series", a_scope_257, NULL, NULL, 0, 0, R_OVERSIZE,
	 "field \"scope.correlated_series\" has 257 items (at most 256)", 0, 0, 0},
	{"series_key names another series than series", a_key_other, NULL, NULL, 0, 0, R_INCONS,
	 "does not match its series", 0, 0, 0},
	{"series_key with a trailing '/'", a_key_extra, NULL, NULL, 0, 0, R_INCONS, "does not match", 0, 0, 0},
	{"a '/' inside config, joined the same", a_key_slash_part, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'w', 0},
	{"NUL inside alert_id", NULL, a_nul_id, NULL, 0, 0, R_INVALID,
	 "perfwatch.v1.Alert: field \"alert_id\" contains a NUL byte", 0, 0, 0},
	{"NUL inside series.platform", NULL, a_nul_platform, NULL, 0, 0, R_INVALID,
	 "\"series.platform\" contains a NUL byte", 0, 0, 0},
	{"0xff in observed.release", NULL, a_ff_release, NULL, 0, 0, R_INVALID,
	 "\"observed.release\" is not valid UTF-8", 0, 0, 0},
	{"an overlong '/' in baseline.window", NULL, a_overlong_window, NULL, 0, 0, R_INVALID,
	 "\"baseline.window\" is not valid UTF-8", 0, 0, 0},
	{"a surrogate in summary", NULL, a_surrogate_summary, NULL, 0, 0, R_INVALID, "\"summary\" is not valid UTF-8",
	 0, 0, 0},
	{"a cut sequence in owner_hint", NULL, a_cut_owner, NULL, 0, 0, R_INVALID, "\"owner_hint\" is not valid UTF-8",
	 0, 0, 0},
	{"a lone continuation byte in artifacts.op_diff", NULL, a_cont_op_diff, NULL, 0, 0, R_INVALID,
	 "\"artifacts.op_diff\" is not valid UTF-8", 0, 0, 0},
	{"SQL metacharacters in alert_id (data)", a_sql_id, NULL, NULL, 0, 0, R_OK_,
	 "perfreg'); DELETE FROM perfwatch.attributions;--", 0, 'w', 0},
	{"SQL metacharacters in the observed build (data)", a_sql_release, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'w', 0},
	{"SQL metacharacters in the series key (data)", a_sql_key, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'w', 0},
	{"delta NaN, noise -inf (not read: the attributor measures its own)", a_delta_nan, NULL, NULL, 0, 0, R_OK_,
	 NULL, 0, 'w', 0},
	{"medians inf and NaN (not read)", a_median_inf, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'w', 0},
	{"created in the year 292277 (no latency observed)", a_created_future, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'w',
	 0},
	{"created at INT64_MIN (no latency observed)", a_created_past, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'w', 0},
	{"series_id negative (looked up by series_key)", a_series_id_negative, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'w',
	 0},
	{"revision UINT32_MAX", a_revision_max, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'w', 0},
	{"a kind this build does not know", a_kind_unknown, NULL, NULL, 0, 0, R_OK_, NULL, IGNORE, 0, 0},
	{"an improvement", a_improvement, NULL, NULL, 0, 0, R_OK_, NULL, IGNORE, 0, 0},
	{"an infra-health alert", a_infra, NULL, NULL, 0, 0, R_OK_, NULL, IGNORE, 0, 0},
	{"a source this build does not know", a_source_unknown, NULL, NULL, 0, 0, R_OK_, NULL, IGNORE, 0, 0},
	{"the baseliner's outlier", a_baseliner, NULL, NULL, 0, 0, R_OK_, NULL, IGNORE, 0, 0},
	{"the watcher's regression", a_watcher, NULL, NULL, 0, 0, R_OK_, NULL, 0, 'w', 0},
	{"a bare follow-up (nothing new to attribute)", a_follow_up_bare, NULL, NULL, 0, 0, R_OK_, NULL, FOLLOW, 0, 0},
	{"alert_id twice: the last counts", NULL, a_second_id, NULL, 0, 0, R_OK_, "perfreg-2026-06-18-00413", 0, 'w',
	 0},
};

static Perfwatch__V1__DlqReason alert_door(const uint8_t *buf, size_t len, ProtobufCMessage **out, bool *skip,
                                           char *detail, size_t detail_len)
{
	Perfwatch__V1__Alert *al = (Perfwatch__V1__Alert *)*out;
	Perfwatch__V1__DlqReason reason = R_OK_;
	pw_attr_before bf;
	pw_attr_input in = pw_attr_alert_decode(buf, len, &al, &bf, &reason, detail, detail_len);
	const door_case *c = door_cur_case;
	door_expect_class("alert", (int)in, DEAD, detail);
	if (in == ACCEPT && c) {
		char side = bf.window_start_us > 0 && bf.window_end_us > bf.window_start_us ? 'w'
		            : bf.max_cl > 0                                                 ? 'c'
		            : bf.build_id && bf.build_id[0]                                 ? 'b'
		                                                                            : '?';
		cr_expect_eq(side, c->tag, "alert door: before side %c, want %c", side, c->tag);
		if (side == 'c')
			cr_expect_eq(bf.max_cl, 7841885);
		if (side == 'b')
			cr_expect_str_eq(bf.build_id, "xla-2026-06-10");
	}
	*out = (ProtobufCMessage *)al;
	*skip = in == IGNORE || in == FOLLOW;
	return in == DEAD ? reason : R_OK_;
}

static const char *alert_id(const ProtobufCMessage *m)
{
	return ((const Perfwatch__V1__Alert *)m)->alert_id;
}

Test(attr_door, every_hostile_alert_gets_its_reason)
{
	door_cases_run("attributor perf.alerts.v1", DOOR_TABLE(acases), pack_alert, GOOD_ALERT, alert_door, alert_id);
}

/* ================================================== perf.bisections.v1 */

#define NSTEPS 4
typedef struct bis_parts {
	Perfwatch__V1__Bisection bs;
	Perfwatch__V1__SeriesKey key;
	Perfwatch__V1__BisectStep st[NSTEPS];
	Perfwatch__V1__BisectStep *stp[NSTEPS];
	char series_key[1024];
} bis_parts;

static void brekey(bis_parts *q)
{
	snprintf(q->series_key, sizeof q->series_key, "%s/%s/%s/%s/%s", q->key.model, q->key.hlo_fingerprint,
	         q->key.platform, q->key.config, q->key.metric);
	q->bs.series_key = q->series_key;
}

/* A done bisection of the worked example: culprit cl/7841917, verified on both sides. */
static wire_buf pack_bisection(door_edit_fn edit)
{
	static bis_parts q;
	memset(&q, 0, sizeof q);
	perfwatch__v1__bisection__init(&q.bs);
	perfwatch__v1__series_key__init(&q.key);
	q.key.model = "chat-8b";
	q.key.hlo_fingerprint = "hlo:9f31c2";
	q.key.platform = "v6e-4";
	q.key.config = "decode.B64.s2048.int8";
	q.key.metric = "tpot_p50_ms";
	static const struct {
		const char *job, *cl;
		int64_t n;
		Perfwatch__V1__BisectPurpose p;
	} steps[NSTEPS] = {
		{"bs-chat-8b-7841923-00", "cl/7841904", 7841904, PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_STEP},
		{"bs-chat-8b-7841923-04", "cl/7841917", 7841917, PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_STEP},
		{"bs-chat-8b-7841923-05", "cl/7841916", 7841916,
		 PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_VERIFY_ADJACENT},
		{"bs-chat-8b-7841923-06", "cl/7841917", 7841917,
		 PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_VERIFY_CHERRY_PICK},
	};
	for (size_t i = 0; i < NSTEPS; i++) {
		perfwatch__v1__bisect_step__init(&q.st[i]);
		q.st[i].index = (uint32_t)i;
		q.st[i].job_id = (char *)steps[i].job;
		q.st[i].cl = (char *)steps[i].cl;
		q.st[i].cl_number = steps[i].n;
		q.st[i].purpose = steps[i].p;
		q.st[i].median = 3.9;
		q.st[i].n = 3;
		q.stp[i] = &q.st[i];
	}
	q.bs.bisection_id = GOOD_BISECTION;
	q.bs.alert_id = GOOD_ALERT;
	q.bs.series = &q.key;
	q.bs.range_lo = "cl/7841885";
	q.bs.range_lo_number = 7841885;
	q.bs.range_hi = "cl/7841923";
	q.bs.range_hi_number = 7841923;
	q.bs.n_cls = 38;
	q.bs.steps = q.stp;
	q.bs.n_steps = NSTEPS;
	q.bs.culprit = "cl/7841917";
	q.bs.culprit_title = "fusion: cap producer-consumer fusion VMEM footprint at 1.5MB";
	q.bs.culprit_owner = "xla-fusion";
	q.bs.confidence = PERFWATCH__V1__BISECTION_CONFIDENCE__BISECTION_CONFIDENCE_VERIFIED_BOTH_SIDES;
	q.bs.status = PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_DONE;
	q.bs.started_unix_us = NOW_US;
	q.bs.updated_unix_us = NOW_US + 3600000000LL;
	q.bs.metric = "tpot_p50_ms";
	q.bs.reason = "verified on both sides";
	brekey(&q);
	if (edit)
		edit(&q);
	wire_buf b = {0};
	b.n = perfwatch__v1__bisection__get_packed_size(&q.bs);
	b.p = malloc(b.n + 1);
	cr_assert_not_null(b.p);
	perfwatch__v1__bisection__pack(&q.bs, b.p);
	return b;
}

#define BEDIT(fn, stmt) DOOR_EDIT(fn, bis_parts *q = p, stmt)
BEDIT(b_running, q->bs.status = PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_RUNNING)
BEDIT(b_no_culprit, q->bs.culprit = "")
BEDIT(b_status_unknown, q->bs.status = (Perfwatch__V1__BisectionStatus)99)
BEDIT(b_failed, q->bs.status = PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_FAILED)
BEDIT(b_no_id, q->bs.bisection_id = "")
BEDIT(b_no_alert, q->bs.alert_id = "")
BEDIT(b_no_series, q->bs.series = NULL)
BEDIT(b_no_model, (q->key.model = "", brekey(q)))
BEDIT(b_no_metric, (q->key.metric = "", brekey(q)))
BEDIT(b_no_key, q->bs.series_key = "")
BEDIT(b_culprit_text, q->bs.culprit = "cl/abc")
BEDIT(b_culprit_negative, q->bs.culprit = "cl/-3")
BEDIT(b_culprit_roll, q->bs.culprit = "cl/7841917@12")
BEDIT(b_long_id, q->bs.bisection_id = (char *)wire_letters('b', 300))
BEDIT(b_long_alert, q->bs.alert_id = (char *)wire_letters('a', 60000))
BEDIT(b_long_key, q->bs.series_key = (char *)wire_letters('k', 300))
BEDIT(b_long_job, q->st[1].job_id = (char *)wire_letters('j', 300))
BEDIT(b_no_before, (q->st[2].job_id = ""))
BEDIT(b_no_after, (q->st[1].cl_number = 7841918))
BEDIT(b_no_jobs, for (size_t i = 0; i < NSTEPS; i++) q->st[i].job_id = "")
BEDIT(b_no_steps, q->bs.n_steps = 0)
BEDIT(b_only_pick, q->st[1].job_id = "")
BEDIT(b_key_other, q->bs.series_key = "rank-moe-110b/hlo:1/v5e-8/prefill.B8/ttft_p50_ms")
BEDIT(b_sql_id, q->bs.bisection_id = "bs'); DELETE FROM perfwatch.attributions;--")
BEDIT(b_array_job, q->st[1].job_id = "bs-04\",\"bs-00\\")
BEDIT(b_levels_nan, (q->bs.clean_level = NAN, q->bs.regressed_level = INFINITY, q->st[0].median = -INFINITY))
BEDIT(b_times_absurd, (q->bs.started_unix_us = INT64_MIN, q->bs.updated_unix_us = INT64_MAX))
BEDIT(b_confidence_unknown, q->bs.confidence = (Perfwatch__V1__BisectionConfidence)99)
BEDIT(b_purpose_unknown, q->st[0].purpose = (Perfwatch__V1__BisectPurpose)99)
static void b_many_steps(void *p)
{
	bis_parts *q = p;
	static Perfwatch__V1__BisectStep *many[PW_ATTR_STEPS_MAX + 1];
	for (size_t i = 0; i <= PW_ATTR_STEPS_MAX; i++)
		many[i] = &q->st[i % NSTEPS];
	q->bs.steps = many;
	q->bs.n_steps = PW_ATTR_STEPS_MAX + 1;
}
static void b_wide_side(void *p)
{
	bis_parts *q = p;
	static Perfwatch__V1__BisectStep *many[64];
	for (size_t i = 0; i < 64; i++)
		many[i] = &q->st[1]; /* 64 steps at the culprit, each with a 200-byte job id */
	q->st[1].job_id = (char *)wire_letters('j', PW_ATTR_ID_MAX);
	many[0] = &q->st[2];
	q->bs.steps = many;
	q->bs.n_steps = 64;
}

WIRE_APPEND_STR(b_nul_id, 1, "bs-00412\0evil")
WIRE_APPEND_STR(b_ff_culprit, 17, "cl/78419\377")
WIRE_APPEND_STR(b_surrogate_title, 19, "fusion \xed\xa0\x80")
WIRE_APPEND_STR(b_cut_reason, 28, "verified \xe2\x82")
WIRE_APPEND_STR(b_cont_correlated, 32, "chat-8b/\x80")
WIRE_APPEND_STR(b_second_id, 1, "bs-chat-8b-7841923-b")
static void b_nul_job(wire_buf *b) { wire_nested(b, 16, 2, "bs-04\0x", 7); }
static void b_overlong_config(wire_buf *b) { wire_nested(b, 5, 4, "decode\xc0\xae", 8); }
static void b_id_varint(wire_buf *b) { wire_int(b, 1, 412); }
static void b_status_ld(wire_buf *b) { wire_ld(b, 24, "done", 4); }
static void b_past_end(wire_buf *b) { wire_past_end(b, 4); }
static void b_group(wire_buf *b) { wire_varint(b, 50u << 3 | 3); }
static void b_unknown(wire_buf *b)
{
	wire_int(b, 99, 7);
	wire_ld(b, 100, "a field of a later version", 26);
}

#define NOT_BIS "payload is not a perfwatch.v1.Bisection"
#define NO_SIDES "has no step at cl/7841917 culprit-1 or at the culprit with a job id"
static const door_case bcases[] = {
	{"the good bisection", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"empty payload", NULL, NULL, (const uint8_t *)"", 0, 0, R_DECODE, "empty payload", 0, 0, 0},
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, 0, R_DECODE, NOT_BIS, 0, 0, 0},
	{"truncated after 3 bytes (inside bisection_id)", NULL, NULL, NULL, 0, 3, R_DECODE, NOT_BIS, 0, 0, 0},
	{"truncated at byte 60 (inside series_key)", NULL, NULL, NULL, 0, 60, R_DECODE, NOT_BIS, 0, 0, 0},
	{"truncated by its last byte (inside metric)", NULL, NULL, NULL, 0, -1, R_DECODE, NOT_BIS, 0, 0, 0},
	{"bisection_id as a varint", NULL, b_id_varint, NULL, 0, 0, R_DECODE, NOT_BIS, 0, 0, 0},
	{"status as a string", NULL, b_status_ld, NULL, 0, 0, R_DECODE, NOT_BIS, 0, 0, 0},
	{"a length prefix past the end", NULL, b_past_end, NULL, 0, 0, R_DECODE, NOT_BIS, 0, 0, 0},
	{"a group that never ends", NULL, b_group, NULL, 0, 0, R_DECODE, NOT_BIS, 0, 0, 0},
	{"unknown fields (a later version)", NULL, b_unknown, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"still running", b_running, NULL, NULL, 0, 0, R_OK_, NULL, IGNORE, 0, 0},
	{"done without a culprit", b_no_culprit, NULL, NULL, 0, 0, R_OK_, NULL, IGNORE, 0, 0},
	{"a status this build does not know", b_status_unknown, NULL, NULL, 0, 0, R_OK_, NULL, IGNORE, 0, 0},
	{"failed, with a culprit field (never a guess)", b_failed, NULL, NULL, 0, 0, R_OK_, NULL, IGNORE, 0, 0},
	{"no bisection_id", b_no_id, NULL, NULL, 0, 0, R_MISSING, "bisection has no bisection_id", 0, 0, 0},
	{"no alert_id", b_no_alert, NULL, NULL, 0, 0, R_MISSING, "names no alert", 0, 0, 0},
	{"no series", b_no_series, NULL, NULL, 0, 0, R_MISSING, "incomplete series key", 0, 0, 0},
	{"no model", b_no_model, NULL, NULL, 0, 0, R_MISSING, "incomplete series key", 0, 0, 0},
	{"no metric", b_no_metric, NULL, NULL, 0, 0, R_MISSING, "incomplete series key", 0, 0, 0},
	{"no series_key", b_no_key, NULL, NULL, 0, 0, R_MISSING, "incomplete series key", 0, 0, 0},
	{"culprit not a CL", b_culprit_text, NULL, NULL, 0, 0, R_INVALID, "culprit \"cl/abc\", not cl/N", 0, 0, 0},
	{"culprit negative", b_culprit_negative, NULL, NULL, 0, 0, R_INVALID, "culprit \"cl/-3\"", 0, 0, 0},
	{"a roll culprit cl/N@K (its CL's steps)", b_culprit_roll, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a 300-byte bisection_id", b_long_id, NULL, NULL, 0, 0, R_INVALID, "ids of 300, 24, 58 bytes", 0, 0, 0},
	{"a 60 kB alert_id", b_long_alert, NULL, NULL, 0, 0, R_INVALID, "ids of 18, 60000, 58 bytes", 0, 0, 0},
	{"a 300-byte series_key", b_long_key, NULL, NULL, 0, 0, R_INVALID, "ids of 18, 24, 300 bytes", 0, 0, 0},
	{"a 300-byte job id", b_long_job, NULL, NULL, 0, 0, R_INVALID, "a job id of 300 bytes", 0, 0, 0},
	{"4097 steps", b_many_steps, NULL, NULL, 0, 0, R_INVALID, "4097 steps", 0, 0, 0},
	{"64 steps of 200-byte job ids at the culprit", b_wide_side, NULL, NULL, 0, 0, R_INVALID,
	 "the job ids of a side take", 0, 0, 0},
	{"no job at culprit-1", b_no_before, NULL, NULL, 0, 0, R_INCONS, NO_SIDES, 0, 0, 0},
	{"no step at the culprit", b_no_after, NULL, NULL, 0, 0, R_INCONS, NO_SIDES, 0, 0, 0},
	{"no step has a job id", b_no_jobs, NULL, NULL, 0, 0, R_INCONS, NO_SIDES, 0, 0, 0},
	{"no steps", b_no_steps, NULL, NULL, 0, 0, R_INCONS, NO_SIDES, 0, 0, 0},
	{"only the cherry-pick at the culprit", b_only_pick, NULL, NULL, 0, 0, R_INCONS, NO_SIDES, 0, 0, 0},
	{"series_key names another series than series", b_key_other, NULL, NULL, 0, 0, R_INCONS,
	 "does not match its series", 0, 0, 0},
	{"NUL inside bisection_id", NULL, b_nul_id, NULL, 0, 0, R_INVALID,
	 "perfwatch.v1.Bisection: field \"bisection_id\" contains a NUL byte", 0, 0, 0},
	{"NUL inside a step's job_id", NULL, b_nul_job, NULL, 0, 0, R_INVALID, "\"steps.job_id\" contains a NUL byte",
	 0, 0, 0},
	{"0xff in culprit", NULL, b_ff_culprit, NULL, 0, 0, R_INVALID, "\"culprit\" is not valid UTF-8", 0, 0, 0},
	{"an overlong '.' in series.config", NULL, b_overlong_config, NULL, 0, 0, R_INVALID,
	 "\"series.config\" is not valid UTF-8", 0, 0, 0},
	{"a surrogate in culprit_title", NULL, b_surrogate_title, NULL, 0, 0, R_INVALID,
	 "\"culprit_title\" is not valid UTF-8", 0, 0, 0},
	{"a cut sequence in reason", NULL, b_cut_reason, NULL, 0, 0, R_INVALID, "\"reason\" is not valid UTF-8", 0, 0,
	 0},
	{"a lone continuation byte in a correlated series", NULL, b_cont_correlated, NULL, 0, 0, R_INVALID,
	 "\"correlated_series\" is not valid UTF-8", 0, 0, 0},
	{"SQL metacharacters in bisection_id (data)", b_sql_id, NULL, NULL, 0, 0, R_OK_,
	 "bs'); DELETE FROM perfwatch.attributions;--", 0, 0, 0},
	{"array-literal metacharacters in a job id (data, escaped)", b_array_job, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0,
	 0},
	{"levels and a median non-finite (not read)", b_levels_nan, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"started at INT64_MIN, updated at INT64_MAX (not read)", b_times_absurd, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0,
	 0},
	{"a confidence this build does not know (not read)", b_confidence_unknown, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0,
	 0},
	{"a step purpose this build does not know", b_purpose_unknown, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"bisection_id twice: the last counts", NULL, b_second_id, NULL, 0, 0, R_OK_, "bs-chat-8b-7841923-b", 0, 0, 0},
};

static Perfwatch__V1__DlqReason bisection_door(const uint8_t *buf, size_t len, ProtobufCMessage **out,
                                               bool *skip, char *detail, size_t detail_len)
{
	Perfwatch__V1__Bisection *bs = (Perfwatch__V1__Bisection *)*out;
	Perfwatch__V1__DlqReason reason = R_OK_;
	pw_attr_input in = pw_attr_bisection_decode(buf, len, &bs, &reason, detail, detail_len);
	door_expect_class("bisection", (int)in, DEAD, detail);
	if (in == ACCEPT) {
		size_t nb = 0, na = 0;
		pw_attr_culprit_steps(bs, NULL, &nb, NULL, &na);
		cr_expect(nb > 0 && na > 0, "accepted with %zu before and %zu after jobs", nb, na);
	}
	*out = (ProtobufCMessage *)bs;
	*skip = in == IGNORE;
	return in == DEAD ? reason : R_OK_;
}

static const char *bisection_id(const ProtobufCMessage *m)
{
	return ((const Perfwatch__V1__Bisection *)m)->bisection_id;
}

Test(attr_door, every_hostile_bisection_gets_its_reason)
{
	door_cases_run("attributor perf.bisections.v1", DOOR_TABLE(bcases), pack_bisection, GOOD_BISECTION,
	               bisection_door, bisection_id);
}

/* ============================================ what the door hands on */

Test(attr_door, the_culprit_steps_split_around_the_culprit)
{
	wire_buf b = pack_bisection(NULL);
	Perfwatch__V1__Bisection *bs = NULL;
	Perfwatch__V1__DlqReason reason;
	char detail[512];
	cr_assert_eq(pw_attr_bisection_decode(b.p, b.n, &bs, &reason, detail, sizeof detail), ACCEPT, "%s", detail);
	const char *before[NSTEPS], *after[NSTEPS];
	size_t nb, na;
	pw_attr_culprit_steps(bs, before, &nb, after, &na);
	cr_assert_eq(nb, 1);
	cr_assert_str_eq(before[0], "bs-chat-8b-7841923-05"); /* the adjacent verification */
	cr_assert_eq(na, 1);
	cr_assert_str_eq(after[0], "bs-chat-8b-7841923-04"); /* the step at the culprit, not its cherry-pick */
	perfwatch__v1__bisection__free_unpacked(bs, NULL);
	free(b.p);
}

Test(attr_door, job_ids_reach_postgresql_as_one_element_each)
{
	/* before the fix, {"bs-04","bs-00\"} was built by pasting: two ids, the second another job's */
	const char *ids[] = {"bs-04\",\"bs-00", "a\\b", "plain", ""};
	char *lit = pw_pg_text_array(ids, 4);
	cr_assert_not_null(lit);
	cr_assert_str_eq(lit, "{\"bs-04\\\",\\\"bs-00\",\"a\\\\b\",\"plain\",\"\"}");
	free(lit);
	lit = pw_pg_text_array(ids, 0);
	cr_assert_str_eq(lit, "{}");
	free(lit);
	/* every byte escaped fits the door's bound (2 bytes a byte, 3 an element, 2 the braces and NUL) */
	const char *q[] = {"\"\"\"\"", "\\\\"};
	lit = pw_pg_text_array(q, 2);
	cr_assert_eq(strlen(lit) + 1, 2 + (2 * 4 + 3) + (2 * 2 + 3));
	free(lit);
}

Test(attr_door, the_series_key_must_be_the_series_canonical_key)
{
	Perfwatch__V1__SeriesKey k = PERFWATCH__V1__SERIES_KEY__INIT;
	k.model = "chat-8b";
	k.hlo_fingerprint = "hlo:1";
	k.platform = "v6e-4";
	k.config = "decode.B8";
	k.metric = "tpot_p50_ms";
	cr_assert(pw_input_series_key_matches("chat-8b/hlo:1/v6e-4/decode.B8/tpot_p50_ms", &k));
	cr_assert_not(pw_input_series_key_matches("chat-8b/hlo:1/v6e-4/decode.B8/tpot_p50_m", &k));
	cr_assert_not(pw_input_series_key_matches("chat-8b/hlo:1/v6e-4/decode.B8/tpot_p50_msx", &k));
	cr_assert_not(pw_input_series_key_matches("chat-8b/hlo:1/v6e-4/decode.B8", &k));
	cr_assert_not(pw_input_series_key_matches("chat-8b.hlo:1/v6e-4/decode.B8/tpot_p50_ms", &k));
	cr_assert_not(pw_input_series_key_matches("", &k));
	cr_assert_not(pw_input_series_key_matches(NULL, &k));
	cr_assert_not(pw_input_series_key_matches("chat-8b/hlo:1/v6e-4/decode.B8/tpot_p50_ms", NULL));
}

Test(attr_door, random_mutations_of_an_alert_and_a_bisection)
{
	wire_buf a = pack_alert(NULL), b = pack_bisection(NULL);
	door_mutations("attributor perf.alerts.v1", &a, alert_door, 20000, 19);
	door_mutations("attributor perf.bisections.v1", &b, bisection_door, 20000, 1919);
	free(a.p);
	free(b.p);
}
