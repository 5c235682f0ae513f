/*
 * test_bisect_door.c: the bisector's doors (services/bisector/bisect_msg.h:
 * pw_bisect_alert_decode for perf.alerts.v1, pw_bisect_cl_decode for
 * perf.compiler-cls.v1), each on a table of hostile payloads (issue 19):
 * the DlqReason and a detail substring every refused one must get; for what
 * must pass, whether the bisector takes it or lets it by (improvements,
 * other sources, follow-ups), and the id that must come out unchanged.
 *
 * The bisector reads the runs of its jobs back from PostgreSQL
 * (perfwatch.samples with their bisect_job_id), not from perf.points.v1: it
 * has no door for points. test_bisect_inputs.c keeps the earlier single
 * cases; the tables here count the kinds.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect_msg.h"
#include "wire_build.h"

#define R_OK_ PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED
#define R_DECODE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED
#define R_MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
#define R_INCONS PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT
#define R_OVERSIZE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE

#define ACCEPT PW_BISECT_INPUT_ACCEPT
#define IGNORE PW_BISECT_INPUT_IGNORE
#define FOLLOW PW_BISECT_INPUT_FOLLOW_UP
#define DEAD PW_BISECT_INPUT_DEAD

#define GOOD_ALERT "perfreg-2026-06-18-00412"
#define GOOD_CL "cl/7841917"

/* big strings of one letter, made once */
static const char *letters(char c, size_t n)
{
	static char bufs[16][70001];
	static size_t used;
	cr_assert(n <= 70000 && used < 16);
	char *b = bufs[used++];
	memset(b, c, n);
	b[n] = 0;
	return b;
}

/* what the last case built wants from the bisector (besides the runner's checks) */
static int want_in = -1; /* -1: any (the random mutations) */

/* ====================================================== perf.alerts.v1 */

typedef struct alert_parts {
	Perfwatch__V1__Alert al;
	Perfwatch__V1__SeriesKey key;
	Perfwatch__V1__AlertDelta delta;
	Perfwatch__V1__AlertBaseline base;
	Perfwatch__V1__AlertChangepoint cp;
	Perfwatch__V1__AlertScope scope;
	char series_key[1024];
} alert_parts;

typedef void (*aedit_fn)(alert_parts *q);

/* series_key as the canonical join of q->key */
static void rekey(alert_parts *q)
{
	snprintf(q->series_key, sizeof q->series_key, "%s/%s/%s/%s/%s", q->key.model, q->key.hlo_fingerprint,
	         q->key.platform, q->key.config, q->key.metric);
	q->al.series_key = q->series_key;
}

static wire_buf pack_alert(aedit_fn edit)
{
	static alert_parts q;
	memset(&q, 0, sizeof q);
	perfwatch__v1__alert__init(&q.al);
	perfwatch__v1__series_key__init(&q.key);
	perfwatch__v1__alert_delta__init(&q.delta);
	perfwatch__v1__alert_baseline__init(&q.base);
	perfwatch__v1__alert_changepoint__init(&q.cp);
	perfwatch__v1__alert_scope__init(&q.scope);
	q.key.model = "chat-8b";
	q.key.hlo_fingerprint = "hlo:9f31c2";
	q.key.platform = "v6e-4";
	q.key.config = "decode.B64.s2048.int8";
	q.key.metric = "tpot_p50_ms";
	q.delta.abs = 0.32;
	q.delta.pct = 8.2;
	q.base.mad = 0.017;
	q.base.median = 3.90;
	q.cp.changepoint_id = "cp-00412";
	q.cp.cl_range_lo = "cl/7841885";
	q.cp.cl_range_hi = "cl/7841923";
	q.al.alert_id = GOOD_ALERT;
	q.al.revision = 1;
	q.al.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION;
	q.al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_GATE;
	q.al.created_unix_us = 1781740800000000LL;
	q.al.series_id = 412;
	q.al.series = &q.key;
	q.al.delta = &q.delta;
	q.al.baseline = &q.base;
	q.al.changepoint = &q.cp;
	q.al.summary = "chat-8b decode B64 TPOT +8.2%";
	rekey(&q);
	if (edit)
		edit(&q);
	wire_buf b = {0};
	b.n = perfwatch__v1__alert__get_packed_size(&q.al);
	b.p = malloc(b.n + 1);
	cr_assert_not_null(b.p);
	perfwatch__v1__alert__pack(&q.al, b.p);
	return b;
}

#define AEDIT(fn, stmt)                                                                            \
	static void fn(alert_parts *q) { stmt; }
AEDIT(a_no_id, q->al.alert_id = "")
AEDIT(a_no_series, q->al.series = NULL)
AEDIT(a_no_model, (q->key.model = "", rekey(q)))
AEDIT(a_no_hlo, (q->key.hlo_fingerprint = "", rekey(q)))
AEDIT(a_no_platform, (q->key.platform = "", rekey(q)))
AEDIT(a_no_config, (q->key.config = "", rekey(q)))
AEDIT(a_no_metric, (q->key.metric = "", rekey(q)))
AEDIT(a_no_key, q->al.series_key = "")
AEDIT(a_no_cp, q->al.changepoint = NULL)
AEDIT(a_long_id, q->al.alert_id = (char *)letters('a', 60000))
AEDIT(a_id_200, q->al.alert_id = (char *)letters('a', PW_BISECT_ID_MAX))
AEDIT(a_long_key, q->al.series_key = (char *)letters('k', 300))
AEDIT(a_long_model, (q->key.model = (char *)letters('m', 150), rekey(q)))
AEDIT(a_long_hash, q->al.config_hash = (char *)letters('h', 300))
AEDIT(a_long_cp, q->cp.changepoint_id = (char *)letters('c', 300))
AEDIT(a_sql_id, q->al.alert_id = "perfreg'); DROP TABLE perfwatch.bisections;--")
AEDIT(a_sql_key, (q->key.model = "chat'--", q->key.config = "decode\"; DELETE FROM x", rekey(q)))
AEDIT(a_delta_nan, q->delta.abs = NAN)
AEDIT(a_delta_inf, q->delta.abs = INFINITY)
AEDIT(a_delta_ninf, q->delta.abs = -INFINITY)
AEDIT(a_mad_nan, q->base.mad = NAN)
AEDIT(a_mad_inf, q->base.mad = INFINITY)
AEDIT(a_mad_negative, q->base.mad = -0.5)
AEDIT(a_delta_huge, q->delta.abs = 1e308)
AEDIT(a_pct_nan, q->delta.pct = NAN)
AEDIT(a_pct_inf, q->delta.pct = -INFINITY)
AEDIT(a_created_future, q->al.created_unix_us = INT64_MAX)
AEDIT(a_created_past, q->al.created_unix_us = INT64_MIN)
AEDIT(a_series_id_negative, q->al.series_id = -1)
AEDIT(a_kind_unknown, q->al.kind = (Perfwatch__V1__AlertKind)99)
AEDIT(a_kind_unspecified, q->al.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_UNSPECIFIED)
AEDIT(a_improvement, q->al.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_IMPROVEMENT)
AEDIT(a_source_unknown, q->al.source = (Perfwatch__V1__AlertSource)99)
AEDIT(a_baseliner, q->al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_BASELINER)
AEDIT(a_watcher, q->al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_WATCHER)
AEDIT(a_follow_up_bare, (q->al.follow_up = 1, q->al.alert_id = "", q->al.series = NULL))
AEDIT(a_range_reversed, (q->cp.cl_range_lo = "cl/7841923", q->cp.cl_range_hi = "cl/7841885"))
AEDIT(a_range_equal, q->cp.cl_range_hi = "cl/7841885")
AEDIT(a_range_text, q->cp.cl_range_hi = "cl/abc")
AEDIT(a_range_half, q->cp.cl_range_lo = "")
AEDIT(a_range_negative, q->cp.cl_range_lo = "cl/-5")
AEDIT(a_range_roll, q->cp.cl_range_hi = "cl/7841923@6137")
AEDIT(a_range_overflow, q->cp.cl_range_hi = "cl/99999999999999999999")
AEDIT(a_range_none, (q->cp.cl_range_lo = "", q->cp.cl_range_hi = ""))
AEDIT(a_key_other_series, q->al.series_key = "rank-moe-110b/hlo:1/v5e-8/prefill.B8/ttft_p50_ms")
AEDIT(a_key_extra, q->al.series_key = "chat-8b/hlo:9f31c2/v6e-4/decode.B64.s2048.int8/tpot_p50_ms/x")
static void a_many_correlated(alert_parts *q)
{
	static char *many[20000];
	for (size_t i = 0; i < 20000; i++)
		many[i] = "chat-8b/v6e-4/decode.B8: +7.4%";
	q->scope.correlated_series = many;
	q->scope.n_correlated_series = 20000;
	q->al.scope = &q->scope;
}

WIRE_APPEND_STR(a_nul_id, 1, "perfreg-00412\0evil")
WIRE_APPEND_STR(a_ff_key, 7, "chat-8b/\377/v6e-4/c/m")
WIRE_APPEND_STR(a_surrogate_summary, 24, "TPOT \xed\xa0\x80")
WIRE_APPEND_STR(a_cut_owner, 19, "xla-\xe2\x82")
WIRE_APPEND_STR(a_lead_hash, 9, "cfg-\xc3")
WIRE_APPEND_STR(a_second_id, 1, "perfreg-2026-06-18-00413")
static void a_nul_model(wire_buf *b) { wire_nested(b, 8, 1, "chat-8b\0x", 9); }
static void a_overlong_lo(wire_buf *b) { wire_nested(b, 15, 3, "cl\xc0\xaf" "1", 5); }
static void a_cont_correlated(wire_buf *b) { wire_nested(b, 14, 1, "chat-8b\x80", 8); }
static void a_above_bisection(wire_buf *b) { wire_nested(b, 16, 3, "cl/\xf4\x90\x80\x80", 7); }
static void a_id_varint(wire_buf *b) { wire_int(b, 1, 412); }
static void a_kind_ld(wire_buf *b) { wire_ld(b, 3, "regression", 10); }
static void a_past_end(wire_buf *b) { wire_past_end(b, 7); }
static void a_group(wire_buf *b) { wire_varint(b, 40u << 3 | 3); }
static void a_unknown(wire_buf *b)
{
	wire_int(b, 99, 12345);
	wire_ld(b, 100, "a field of a later version", 26);
}

typedef struct akase {
	const char *name;
	aedit_fn edit;
	void (*append)(wire_buf *b);
	const uint8_t *raw;
	size_t raw_len;
	long cut;                     /* > 0: keep the first cut bytes; < 0: drop -cut bytes at the end */
	pw_bisect_input in;
	Perfwatch__V1__DlqReason reason;
	const char *want;             /* refused: in the detail; accepted: the alert_id (NULL: GOOD_ALERT) */
} akase;

static const akase acases[] = {
	{"the good alert", NULL, NULL, NULL, 0, 0, ACCEPT, R_OK_, NULL},
	{"empty payload", NULL, NULL, (const uint8_t *)"", 0, 0, DEAD, R_DECODE, "empty payload"},
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, 0, DEAD, R_DECODE, "not a perfwatch.v1.Alert"},
	{"truncated after 3 bytes (inside alert_id)", NULL, NULL, NULL, 0, 3, DEAD, R_DECODE,
	 "not a perfwatch.v1.Alert"},
	{"truncated at byte 40 (inside created_unix_us)", NULL, NULL, NULL, 0, 40, DEAD, R_DECODE, "not a perfwatch.v1.Alert"},
	{"truncated by its last byte (inside summary)", NULL, NULL, NULL, 0, -1, DEAD, R_DECODE,
	 "not a perfwatch.v1.Alert"},
	{"alert_id as a varint", NULL, a_id_varint, NULL, 0, 0, DEAD, R_DECODE, "not a perfwatch.v1.Alert"},
	{"kind as a string", NULL, a_kind_ld, NULL, 0, 0, DEAD, R_DECODE, "not a perfwatch.v1.Alert"},
	{"a length prefix past the end", NULL, a_past_end, NULL, 0, 0, DEAD, R_DECODE, "not a perfwatch.v1.Alert"},
	{"a group that never ends", NULL, a_group, NULL, 0, 0, DEAD, R_DECODE, "not a perfwatch.v1.Alert"},
	{"unknown fields (a later version)", NULL, a_unknown, NULL, 0, 0, ACCEPT, R_OK_, NULL},
	{"no alert_id", a_no_id, NULL, NULL, 0, 0, DEAD, R_MISSING, "alert has no alert_id"},
	{"no series", a_no_series, NULL, NULL, 0, 0, DEAD, R_MISSING, "incomplete series key"},
	{"no model", a_no_model, NULL, NULL, 0, 0, DEAD, R_MISSING, "incomplete series key"},
	{"no hlo_fingerprint", a_no_hlo, NULL, NULL, 0, 0, DEAD, R_MISSING, "incomplete series key"},
	{"no platform", a_no_platform, NULL, NULL, 0, 0, DEAD, R_MISSING, "incomplete series key"},
	{"no config", a_no_config, NULL, NULL, 0, 0, DEAD, R_MISSING, "incomplete series key"},
	{"no metric", a_no_metric, NULL, NULL, 0, 0, DEAD, R_MISSING, "incomplete series key"},
	{"no series_key", a_no_key, NULL, NULL, 0, 0, DEAD, R_MISSING, "incomplete series key"},
	{"no changepoint (the range comes from the runs)", a_no_cp, NULL, NULL, 0, 0, ACCEPT, R_OK_, NULL},
	{"a changepoint without a range", a_range_none, NULL, NULL, 0, 0, ACCEPT, R_OK_, NULL},
	{"a 60 kB alert_id", a_long_id, NULL, NULL, 0, 0, DEAD, R_INVALID, "alert_id of 60000 bytes (at most 200)"},
	{"an alert_id of exactly 200 bytes", a_id_200, NULL, NULL, 0, 0, ACCEPT, R_OK_, "a200"},
	{"a 300-byte series_key", a_long_key, NULL, NULL, 0, 0, DEAD, R_INVALID, "series key of 300 bytes"},
	{"a 150-byte model", a_long_model, NULL, NULL, 0, 0, DEAD, R_INVALID, "model of 150"},
	{"a 300-byte config_hash", a_long_hash, NULL, NULL, 0, 0, DEAD, R_INVALID, "config_hash of 300 bytes"},
	{"a 300-byte changepoint_id", a_long_cp, NULL, NULL, 0, 0, DEAD, R_INVALID, "changepoint_id of 300 bytes"},
	{"20000 correlated series (copied into the follow-up: refused)", a_many_correlated, NULL, NULL, 0, 0, DEAD,
	 R_OVERSIZE, "of 640282 bytes (at most 262144)"},
	{"NUL inside alert_id", NULL, a_nul_id, NULL, 0, 0, DEAD, R_INVALID, "\"alert_id\" contains a NUL byte"},
	{"NUL inside series.model", NULL, a_nul_model, NULL, 0, 0, DEAD, R_INVALID,
	 "\"series.model\" contains a NUL byte"},
	{"0xff in series_key", NULL, a_ff_key, NULL, 0, 0, DEAD, R_INVALID, "\"series_key\" is not valid UTF-8"},
	{"an overlong '/' in changepoint.cl_range_lo", NULL, a_overlong_lo, NULL, 0, 0, DEAD, R_INVALID,
	 "\"changepoint.cl_range_lo\" is not valid UTF-8"},
	{"a surrogate in summary", NULL, a_surrogate_summary, NULL, 0, 0, DEAD, R_INVALID,
	 "\"summary\" is not valid UTF-8"},
	{"a cut sequence in owner_hint", NULL, a_cut_owner, NULL, 0, 0, DEAD, R_INVALID,
	 "\"owner_hint\" is not valid UTF-8"},
	{"a lone lead byte in config_hash", NULL, a_lead_hash, NULL, 0, 0, DEAD, R_INVALID,
	 "\"config_hash\" is not valid UTF-8"},
	{"a lone continuation byte in a correlated series", NULL, a_cont_correlated, NULL, 0, 0, DEAD, R_INVALID,
	 "\"scope.correlated_series\" is not valid UTF-8"},
	{"above U+10FFFF in bisection.culprit", NULL, a_above_bisection, NULL, 0, 0, DEAD, R_INVALID,
	 "\"bisection.culprit\" is not valid UTF-8"},
	{"SQL metacharacters in alert_id (data)", a_sql_id, NULL, NULL, 0, 0, ACCEPT, R_OK_,
	 "perfreg'); DROP TABLE perfwatch.bisections;--"},
	{"SQL metacharacters in the series key (data)", a_sql_key, NULL, NULL, 0, 0, ACCEPT, R_OK_, NULL},
	{"delta NaN", a_delta_nan, NULL, NULL, 0, 0, DEAD, R_INVALID, "not a finite effect"},
	{"delta +inf", a_delta_inf, NULL, NULL, 0, 0, DEAD, R_INVALID, "not a finite effect"},
	{"delta -inf", a_delta_ninf, NULL, NULL, 0, 0, DEAD, R_INVALID, "not a finite effect"},
	{"baseline noise NaN", a_mad_nan, NULL, NULL, 0, 0, DEAD, R_INVALID, "not a finite effect"},
	{"baseline noise +inf", a_mad_inf, NULL, NULL, 0, 0, DEAD, R_INVALID, "not a finite effect"},
	{"baseline noise negative", a_mad_negative, NULL, NULL, 0, 0, DEAD, R_INVALID, "noise -0.5"},
	{"delta percent NaN", a_pct_nan, NULL, NULL, 0, 0, DEAD, R_INVALID, "(nan%) over baseline noise"},
	{"delta percent -inf", a_pct_inf, NULL, NULL, 0, 0, DEAD, R_INVALID, "(-inf%)"},
	{"delta 1e308 (finite: ranked, not refused)", a_delta_huge, NULL, NULL, 0, 0, ACCEPT, R_OK_, NULL},
	{"created in the year 292277 (not read by the bisector)", a_created_future, NULL, NULL, 0, 0, ACCEPT, R_OK_,
	 NULL},
	{"created before 1970 (not read by the bisector)", a_created_past, NULL, NULL, 0, 0, ACCEPT, R_OK_, NULL},
	{"series_id negative (the bisector keys on series_key)", a_series_id_negative, NULL, NULL, 0, 0, ACCEPT,
	 R_OK_, NULL},
	{"a kind this build does not know", a_kind_unknown, NULL, NULL, 0, 0, IGNORE, R_OK_, NULL},
	{"kind unspecified", a_kind_unspecified, NULL, NULL, 0, 0, IGNORE, R_OK_, NULL},
	{"an improvement", a_improvement, NULL, NULL, 0, 0, IGNORE, R_OK_, NULL},
	{"a source this build does not know", a_source_unknown, NULL, NULL, 0, 0, IGNORE, R_OK_, NULL},
	{"the baseliner's outlier", a_baseliner, NULL, NULL, 0, 0, IGNORE, R_OK_, NULL},
	{"the watcher's regression", a_watcher, NULL, NULL, 0, 0, ACCEPT, R_OK_, NULL},
	{"a bare follow-up (never a new bisection)", a_follow_up_bare, NULL, NULL, 0, 0, FOLLOW, R_OK_, NULL},
	{"changepoint range reversed", a_range_reversed, NULL, NULL, 0, 0, DEAD, R_INVALID,
	 "\"cl/7841923\"..\"cl/7841885\" is not cl/N..cl/M with N < M"},
	{"changepoint range empty (lo = hi)", a_range_equal, NULL, NULL, 0, 0, DEAD, R_INVALID, "is not cl/N..cl/M"},
	{"changepoint range hi not a CL", a_range_text, NULL, NULL, 0, 0, DEAD, R_INVALID, "\"cl/abc\""},
	{"changepoint range with only hi", a_range_half, NULL, NULL, 0, 0, DEAD, R_INVALID, "is not cl/N..cl/M"},
	{"changepoint range lo negative", a_range_negative, NULL, NULL, 0, 0, DEAD, R_INVALID, "\"cl/-5\""},
	{"changepoint range hi a roll build (cl/N@K)", a_range_roll, NULL, NULL, 0, 0, DEAD, R_INVALID,
	 "is not cl/N..cl/M"},
	{"changepoint range hi past int64", a_range_overflow, NULL, NULL, 0, 0, DEAD, R_INVALID,
	 "is not cl/N..cl/M"},
	{"series_key names another series than series", a_key_other_series, NULL, NULL, 0, 0, DEAD, R_INCONS,
	 "does not match its series"},
	{"series_key with a sixth part", a_key_extra, NULL, NULL, 0, 0, DEAD, R_INCONS, "does not match"},
	{"alert_id twice: the last counts", NULL, a_second_id, NULL, 0, 0, ACCEPT, R_OK_, "perfreg-2026-06-18-00413"},
};
#define NACASES (sizeof acases / sizeof acases[0])

/* applies c->raw / edit / append / cut */
static wire_buf cut_to(wire_buf b, long cut)
{
	if (cut > 0 && (size_t)cut < b.n)
		b.n = (size_t)cut;
	else if (cut < 0 && (size_t)-cut < b.n)
		b.n -= (size_t)-cut;
	return b;
}

static wire_buf alert_case(size_t i, door_expect *e)
{
	const akase *c = &acases[i];
	const char *text = c->want ? c->want : GOOD_ALERT;
	size_t big = 0;
	if (c->want && strcmp(c->want, "a200") == 0)
		big = PW_BISECT_ID_MAX;
	*e = (door_expect){c->name, c->reason, c->in != ACCEPT && c->in != DEAD, text, big};
	door_want_detail = c->in == DEAD ? c->want : NULL;
	want_in = c->in;
	wire_buf b = {0};
	if (c->raw) {
		wire_bytes(&b, c->raw, c->raw_len);
		return b;
	}
	b = pack_alert(c->edit);
	if (c->append)
		c->append(&b);
	return cut_to(b, c->cut);
}

static Perfwatch__V1__DlqReason alert_door(const uint8_t *buf, size_t len, ProtobufCMessage **out, bool *skip,
                                           char *detail, size_t detail_len)
{
	Perfwatch__V1__Alert *al = (Perfwatch__V1__Alert *)*out;
	Perfwatch__V1__DlqReason reason = R_OK_;
	pw_bisect_input in = pw_bisect_alert_decode(buf, len, &al, &reason, detail, detail_len);
	if (want_in >= 0)
		cr_expect_eq((int)in, want_in, "alert door: input class %d, want %d (%s)", in, want_in, detail);
	*out = (ProtobufCMessage *)al;
	*skip = in == IGNORE || in == FOLLOW;
	return in == DEAD ? reason : R_OK_;
}

static const char *alert_id(const ProtobufCMessage *m)
{
	return ((const Perfwatch__V1__Alert *)m)->alert_id;
}

Test(bisect_door, every_hostile_alert_gets_its_reason)
{
	door_run("bisector perf.alerts.v1", NACASES, alert_case, alert_door, alert_id);
}

/* ================================================= perf.compiler-cls.v1 */

typedef struct cl_parts {
	Perfwatch__V1__CompilerCl c;
	Perfwatch__V1__RollInfo roll;
	char *bench[1];
} cl_parts;

typedef void (*cedit_fn)(cl_parts *q);

static wire_buf pack_cl(cedit_fn edit)
{
	static cl_parts q;
	memset(&q, 0, sizeof q);
	perfwatch__v1__compiler_cl__init(&q.c);
	perfwatch__v1__roll_info__init(&q.roll);
	q.c.cl = GOOD_CL;
	q.c.cl_number = 7841917;
	q.c.title = "fusion: cap producer-consumer fusion VMEM footprint at 1.5MB";
	q.c.author = "xla-fusion";
	q.c.team = "xla";
	q.c.perf_relevant = true;
	q.bench[0] = "chat-8b/v6e-*/decode.*";
	q.c.perf_benchmarks = q.bench;
	q.c.n_perf_benchmarks = 1;
	q.c.submitted_unix_us = 1781740800000000LL;
	q.c.source = "release-tooling";
	if (edit)
		edit(&q);
	wire_buf b = {0};
	b.n = perfwatch__v1__compiler_cl__get_packed_size(&q.c);
	b.p = malloc(b.n + 1);
	cr_assert_not_null(b.p);
	perfwatch__v1__compiler_cl__pack(&q.c, b.p);
	return b;
}

static char **many_strings(size_t n, const char *s)
{
	static char *v[8][1000];
	static size_t used;
	cr_assert(n <= 1000 && used < 8);
	char **r = v[used++];
	for (size_t i = 0; i < n; i++)
		r[i] = (char *)s;
	return r;
}

#define CEDIT(fn, stmt)                                                                            \
	static void fn(cl_parts *q) { stmt; }
#define ROLL(q) ((q)->c.roll = &(q)->roll, (q)->roll.upstream_repo = "llvm/llvm-project")
CEDIT(c_nothing, (q->c.cl = "", q->c.cl_number = 0))
CEDIT(c_no_number, q->c.cl_number = 0)
CEDIT(c_no_cl, q->c.cl = "")
CEDIT(c_mismatch, q->c.cl_number = 7841918)
CEDIT(c_negative, (q->c.cl = "cl/-7841917", q->c.cl_number = -7841917))
CEDIT(c_roll_build, q->c.cl = "cl/7841917@12")
CEDIT(c_leading_zero, q->c.cl = "cl/07841917")
CEDIT(c_overflow, (q->c.cl = "cl/9223372036854775807", q->c.cl_number = INT64_MAX))
CEDIT(c_no_prefix, q->c.cl = "7841917")
CEDIT(c_long_title, q->c.title = (char *)letters('t', PW_BISECT_TEXT_MAX + 1))
CEDIT(c_title_at_cap, q->c.title = (char *)letters('t', PW_BISECT_TEXT_MAX))
CEDIT(c_long_author, q->c.author = (char *)letters('a', 60000))
CEDIT(c_long_team, q->c.team = (char *)letters('m', 5000))
CEDIT(c_long_source, q->c.source = (char *)letters('s', 5000))
CEDIT(c_long_repo, (ROLL(q), q->roll.upstream_commits = 10, q->roll.upstream_repo = (char *)letters('r', 5000)))
CEDIT(c_long_glob, q->bench[0] = (char *)letters('g', PW_BISECT_TEXT_MAX + 1))
CEDIT(c_many_globs, (q->c.perf_benchmarks = many_strings(PW_BISECT_LIST_MAX + 1, "*"),
                     q->c.n_perf_benchmarks = PW_BISECT_LIST_MAX + 1))
CEDIT(c_glob_bytes, (q->c.perf_benchmarks = many_strings(200, "chat-8b/v6e-4/decode.B64.s2048"),
                     q->c.n_perf_benchmarks = 200))
CEDIT(c_many_ids, (ROLL(q), q->roll.upstream_commits = 1000,
                   q->roll.upstream_ids = many_strings(PW_BISECT_LIST_MAX + 1, "a1b2c3"),
                   q->roll.n_upstream_ids = PW_BISECT_LIST_MAX + 1))
CEDIT(c_id_bytes, (ROLL(q), q->roll.upstream_commits = 1000,
                   q->roll.upstream_ids = many_strings(200, "0123456789abcdef0123456789abcdef01234567"),
                   q->roll.n_upstream_ids = 200))
CEDIT(c_roll_huge, (ROLL(q), q->roll.upstream_commits = 4000000000u))
CEDIT(c_roll_more_ids, (ROLL(q), q->roll.upstream_commits = 2,
                        q->roll.upstream_ids = many_strings(3, "a1"), q->roll.n_upstream_ids = 3))
CEDIT(c_roll_ok, (ROLL(q), q->roll.upstream_commits = 240))
CEDIT(c_roll_zero, ROLL(q))
CEDIT(c_submitted_negative, q->c.submitted_unix_us = -1)
CEDIT(c_submitted_min, q->c.submitted_unix_us = INT64_MIN)
CEDIT(c_submitted_max, q->c.submitted_unix_us = INT64_MAX)
CEDIT(c_submitted_2201, q->c.submitted_unix_us = 7289654400000000LL)
CEDIT(c_submitted_unknown, q->c.submitted_unix_us = 0)
CEDIT(c_sql_title, q->c.title = "fusion'); DELETE FROM perfwatch.compiler_cls;--")
CEDIT(c_array_glob, q->bench[0] = "a\",\"b}'; {\"c")
CEDIT(c_star, q->bench[0] = "*")
CEDIT(c_no_lists, (q->c.n_perf_benchmarks = 0, q->c.perf_relevant = 0))

WIRE_APPEND_STR(c_nul_cl, 1, "cl/7841917\0")
WIRE_APPEND_STR(c_nul_title, 3, "fusion\0: cap")
WIRE_APPEND_STR(c_ff_author, 4, "xla-\377")
WIRE_APPEND_STR(c_overlong_team, 5, "xla\xc0\xaf")
WIRE_APPEND_STR(c_surrogate_glob, 7, "chat-8b/\xed\xb0\x80")
WIRE_APPEND_STR(c_cut_source, 10, "pw-sim\xf0\x9f\x9a")
static void c_nested_repo(wire_buf *b) { wire_nested(b, 8, 1, "llvm\xff", 5); }
static void c_nested_id(wire_buf *b) { wire_nested(b, 8, 3, "a1\0b2", 5); }
static void c_cl_varint(wire_buf *b) { wire_int(b, 1, 7841917); }
static void c_number_ld(wire_buf *b) { wire_ld(b, 2, "7841917", 7); }
static void c_past_end(wire_buf *b) { wire_past_end(b, 3); }
static void c_group(wire_buf *b) { wire_varint(b, 30u << 3 | 3); }
static void c_unknown(wire_buf *b)
{
	wire_int(b, 50, 1);
	wire_ld(b, 51, "reviewers", 9);
}
static void c_second(wire_buf *b)
{
	wire_ld(b, 1, "cl/7841918", 10);
	wire_int(b, 2, 7841918);
}

typedef struct ckase {
	const char *name;
	cedit_fn edit;
	void (*append)(wire_buf *b);
	const uint8_t *raw;
	size_t raw_len;
	long cut;
	Perfwatch__V1__DlqReason reason;
	const char *want; /* refused: in the detail; accepted: the cl (NULL: GOOD_CL) */
} ckase;

#define NOT_CL "not a perfwatch.v1.CompilerCl"
static const ckase ccases[] = {
	{"the good CL", NULL, NULL, NULL, 0, 0, R_OK_, NULL},
	{"empty payload", NULL, NULL, (const uint8_t *)"", 0, 0, R_DECODE, "empty payload"},
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, 0, R_DECODE, NOT_CL},
	{"truncated after 2 bytes (inside cl)", NULL, NULL, NULL, 0, 2, R_DECODE, NOT_CL},
	{"truncated inside title", NULL, NULL, NULL, 0, 30, R_DECODE, NOT_CL},
	{"truncated by its last byte (inside source)", NULL, NULL, NULL, 0, -1, R_DECODE, NOT_CL},
	{"cl as a varint", NULL, c_cl_varint, NULL, 0, 0, R_DECODE, NOT_CL},
	{"cl_number as a string", NULL, c_number_ld, NULL, 0, 0, R_DECODE, NOT_CL},
	{"a length prefix past the end", NULL, c_past_end, NULL, 0, 0, R_DECODE, NOT_CL},
	{"a group that never ends", NULL, c_group, NULL, 0, 0, R_DECODE, NOT_CL},
	{"unknown fields (a later version)", NULL, c_unknown, NULL, 0, 0, R_OK_, NULL},
	{"neither cl nor cl_number", c_nothing, NULL, NULL, 0, 0, R_MISSING, "neither cl nor cl_number"},
	{"no cl_number", c_no_number, NULL, NULL, 0, 0, R_INVALID, "does not match cl_number 0"},
	{"no cl", c_no_cl, NULL, NULL, 0, 0, R_INVALID, "\"\" does not match cl_number 7841917"},
	{"cl and cl_number disagree", c_mismatch, NULL, NULL, 0, 0, R_INVALID,
	 "\"cl/7841917\" does not match cl_number 7841918"},
	{"a negative CL", c_negative, NULL, NULL, 0, 0, R_INVALID, "does not match cl_number -7841917"},
	{"a roll build's name as the CL", c_roll_build, NULL, NULL, 0, 0, R_INVALID, "\"cl/7841917@12\""},
	{"a leading zero", c_leading_zero, NULL, NULL, 0, 0, R_INVALID, "\"cl/07841917\""},
	{"CL INT64_MAX", c_overflow, NULL, NULL, 0, 0, R_INVALID, "does not match"},
	{"no cl/ prefix", c_no_prefix, NULL, NULL, 0, 0, R_INVALID, "\"7841917\" does not match"},
	{"a title of 4097 bytes", c_long_title, NULL, NULL, 0, 0, R_INVALID, "a text of 4097 bytes (at most 4096)"},
	{"a title of exactly 4096 bytes", c_title_at_cap, NULL, NULL, 0, 0, R_OK_, NULL},
	{"a 60 kB author", c_long_author, NULL, NULL, 0, 0, R_INVALID, "a text of 60000 bytes"},
	{"a 5000-byte team", c_long_team, NULL, NULL, 0, 0, R_INVALID, "a text of 5000 bytes"},
	{"a 5000-byte source", c_long_source, NULL, NULL, 0, 0, R_INVALID, "a text of 5000 bytes"},
	{"a 5000-byte upstream repo", c_long_repo, NULL, NULL, 0, 0, R_INVALID, "a text of 5000 bytes"},
	{"a 4097-byte benchmark glob", c_long_glob, NULL, NULL, 0, 0, R_INVALID, "a text of 4097 bytes"},
	{"257 benchmark globs", c_many_globs, NULL, NULL, 0, 0, R_INVALID, "257 benchmarks"},
	{"200 globs over 4096 bytes in all", c_glob_bytes, NULL, NULL, 0, 0, R_INVALID, "200 benchmarks (6600 bytes)"},
	{"257 upstream ids", c_many_ids, NULL, NULL, 0, 0, R_INVALID, "257 upstream ids"},
	{"200 upstream ids over 8192 bytes in all", c_id_bytes, NULL, NULL, 0, 0, R_INVALID,
	 "200 upstream ids (8600 bytes)"},
	{"a roll of 4e9 commits", c_roll_huge, NULL, NULL, 0, 0, R_INVALID, "a roll of 4000000000 commits"},
	{"a roll listing more ids than commits", c_roll_more_ids, NULL, NULL, 0, 0, R_INVALID,
	 "a roll of 2 commits listing 3 ids"},
	{"a roll of 240 commits without ids", c_roll_ok, NULL, NULL, 0, 0, R_OK_, NULL},
	{"a roll of no commits (named by index: none to name)", c_roll_zero, NULL, NULL, 0, 0, R_OK_, NULL},
	{"submitted at -1", c_submitted_negative, NULL, NULL, 0, 0, R_INVALID, "submitted_unix_us -1 is not 0"},
	{"submitted at INT64_MIN", c_submitted_min, NULL, NULL, 0, 0, R_INVALID, "1970..2200"},
	{"submitted at INT64_MAX", c_submitted_max, NULL, NULL, 0, 0, R_INVALID, "1970..2200"},
	{"submitted in 2201", c_submitted_2201, NULL, NULL, 0, 0, R_INVALID, "1970..2200"},
	{"submit time unknown (0)", c_submitted_unknown, NULL, NULL, 0, 0, R_OK_, NULL},
	{"NUL at the end of cl", NULL, c_nul_cl, NULL, 0, 0, R_INVALID, "\"cl\" contains a NUL byte"},
	{"NUL inside title", NULL, c_nul_title, NULL, 0, 0, R_INVALID, "\"title\" contains a NUL byte"},
	{"0xff in author", NULL, c_ff_author, NULL, 0, 0, R_INVALID, "\"author\" is not valid UTF-8"},
	{"an overlong '/' in team", NULL, c_overlong_team, NULL, 0, 0, R_INVALID, "\"team\" is not valid UTF-8"},
	{"a surrogate in a benchmark glob", NULL, c_surrogate_glob, NULL, 0, 0, R_INVALID,
	 "\"perf_benchmarks\" is not valid UTF-8"},
	{"a cut sequence in source", NULL, c_cut_source, NULL, 0, 0, R_INVALID, "\"source\" is not valid UTF-8"},
	{"0xff in roll.upstream_repo", NULL, c_nested_repo, NULL, 0, 0, R_INVALID,
	 "\"roll.upstream_repo\" is not valid UTF-8"},
	{"NUL in a roll upstream id", NULL, c_nested_id, NULL, 0, 0, R_INVALID,
	 "\"roll.upstream_ids\" contains a NUL byte"},
	{"SQL metacharacters in title (data)", c_sql_title, NULL, NULL, 0, 0, R_OK_, NULL},
	{"array-literal metacharacters in a glob (data)", c_array_glob, NULL, NULL, 0, 0, R_OK_, NULL},
	{"a glob selecting every benchmark (\"*\", as the spec allows)", c_star, NULL, NULL, 0, 0, R_OK_, NULL},
	{"not perf-relevant, no globs", c_no_lists, NULL, NULL, 0, 0, R_OK_, NULL},
	{"cl and cl_number twice: the last count", NULL, c_second, NULL, 0, 0, R_OK_, "cl/7841918"},
};
#define NCCASES (sizeof ccases / sizeof ccases[0])

static wire_buf cl_case(size_t i, door_expect *e)
{
	const ckase *c = &ccases[i];
	bool ok = c->reason == R_OK_;
	*e = (door_expect){c->name, c->reason, false, ok && c->want ? c->want : GOOD_CL, 0};
	door_want_detail = ok ? NULL : c->want;
	wire_buf b = {0};
	if (c->raw) {
		wire_bytes(&b, c->raw, c->raw_len);
		return b;
	}
	b = pack_cl(c->edit);
	if (c->append)
		c->append(&b);
	return cut_to(b, c->cut);
}

static Perfwatch__V1__DlqReason cl_door(const uint8_t *buf, size_t len, ProtobufCMessage **out, bool *skip,
                                        char *detail, size_t detail_len)
{
	(void)skip;
	Perfwatch__V1__CompilerCl *c = (Perfwatch__V1__CompilerCl *)*out;
	Perfwatch__V1__DlqReason reason = R_OK_;
	pw_bisect_input in = pw_bisect_cl_decode(buf, len, &c, &reason, detail, detail_len);
	cr_expect(in == ACCEPT || in == DEAD, "a CL is taken or refused, never let by: %d", in);
	*out = (ProtobufCMessage *)c;
	return in == DEAD ? reason : R_OK_;
}

static const char *cl_text(const ProtobufCMessage *m)
{
	return ((const Perfwatch__V1__CompilerCl *)m)->cl;
}

Test(bisect_door, every_hostile_compiler_cl_gets_its_reason)
{
	door_run("bisector perf.compiler-cls.v1", NCCASES, cl_case, cl_door, cl_text);
}

Test(bisect_door, random_mutations_of_an_alert_and_a_cl)
{
	want_in = -1;
	wire_buf a = pack_alert(NULL), c = pack_cl(NULL);
	door_mutations("bisector perf.alerts.v1", &a, alert_door, 20000, 19);
	door_mutations("bisector perf.compiler-cls.v1", &c, cl_door, 20000, 1919);
	free(a.p);
	free(c.p);
}
