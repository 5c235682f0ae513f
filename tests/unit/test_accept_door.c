/*
 * test_accept_door.c: the doors of the baseliner's three accepted-shift
 * topics (issue 17; services/baseliner/baseliner.h) — perf.changepoints.v1
 * (pw_baseliner_changepoint_decode), perf.gate.verdicts.v1
 * (pw_baseliner_verdict_decode) and perf.triage.v1
 * (pw_baseliner_triage_decode) — each on a table of hostile payloads
 * (issue 19) with the DlqReason and a detail substring every refused one
 * must get and, for what must pass, the id that must come out unchanged:
 * the changepoint_id, the first waived series' waiver_id, the page_id.
 *
 * The good message is packed from protobuf-c structs; a case edits them
 * before packing, appends raw wire bytes (the last value of a singular field
 * counts, sub-messages merge: NUL bytes and invalid UTF-8 a struct cannot
 * carry), cuts the payload, or replaces it (wire_build.h).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "baseliner.h"
#include "pw_time.h"
#include "series_table.h"
#include "door_table.h"

#define R_OK_ PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED
#define R_DECODE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED
#define R_MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
#define R_OVERSIZE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE

#define STAGE(s) PERFWATCH__V1__CHANGEPOINT_STAGE__CHANGEPOINT_STAGE_##s
#define ANN(a) PERFWATCH__V1__CHANGEPOINT_ANNOTATION__CHANGEPOINT_ANNOTATION_##a

#define GOOD_SERIES "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"
#define GOOD_CP GOOD_SERIES "@xla-nightly-2026-06-17"
#define GOOD_WAIVER "wv-2026-06-18-01"
#define GOOD_PAGE "pg-2026-06-18-0031"
#define NOW_US 1781740800000000LL

static void good_key(Perfwatch__V1__SeriesKey *k)
{
	perfwatch__v1__series_key__init(k);
	k->model = "chat-8b";
	k->hlo_fingerprint = "hlo:9f31c2ab";
	k->platform = "v6e-4";
	k->config = "decode.B64.s2048.int8";
	k->metric = "tpot_p50_ms";
}

/* ids of exactly a cap's length that must come out whole (filled by the edit) */
static char id_1024[1025], id_127[128];

static const char *fill_id(char *buf, char c, size_t n)
{
	memset(buf, c, n);
	buf[n] = 0;
	return buf;
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
	good_key(&q.key);
	q.c.changepoint_id = GOOD_CP;
	q.c.series_id = 412;
	q.c.series_key = GOOD_SERIES;
	q.c.key = &q.key;
	q.c.day = "2026-06-17";
	q.c.shift_unix_us = 1781654400000000LL;
	q.c.last_clean_build_id = "xla-nightly-2026-06-16";
	q.c.last_clean_cl = "cl/7841885";
	q.c.first_shifted_build_id = "xla-nightly-2026-06-17";
	q.c.first_shifted_cl = "cl/7841923";
	q.c.n_cls = 38;
	q.c.level_before = 3.90;
	q.c.level_after = 4.22;
	q.c.unit = "ms";
	q.c.delta_pct = 8.2;
	q.c.annotation = ANN(NONE);
	q.c.detected_unix_us = NOW_US;
	q.c.stage = STAGE(PROVISIONAL);
	q.c.points_after = 3;
	if (edit)
		edit(&q);
	return wire_pack(&q.c.base);
}

#define CEDIT(fn, stmt) DOOR_EDIT(fn, cp_parts *q = p, stmt)
CEDIT(c_no_id, q->c.changepoint_id = "")
CEDIT(c_no_key, q->c.series_key = "")
CEDIT(c_id_zero, q->c.series_id = 0)
CEDIT(c_id_min, q->c.series_id = INT64_MIN)
CEDIT(c_no_build, q->c.first_shifted_build_id = "")
CEDIT(c_withdrawn_no_build, (q->c.stage = STAGE(WITHDRAWN), q->c.first_shifted_build_id = ""))
CEDIT(c_withdrawn_no_levels, (q->c.stage = STAGE(WITHDRAWN), q->c.shift_unix_us = 0,
                              q->c.level_before = NAN, q->c.level_after = NAN))
CEDIT(c_shift_zero, q->c.shift_unix_us = 0)
CEDIT(c_shift_min, q->c.shift_unix_us = INT64_MIN)
CEDIT(c_shift_future, q->c.shift_unix_us = INT64_MAX)
CEDIT(c_shift_last, q->c.shift_unix_us = PW_TIME_MAX_US)
CEDIT(c_shift_after_last, q->c.shift_unix_us = PW_TIME_MAX_US + 1)
CEDIT(c_withdrawn_future, (q->c.stage = STAGE(WITHDRAWN), q->c.shift_unix_us = INT64_MAX))
CEDIT(c_after_nan, q->c.level_after = NAN)
CEDIT(c_before_inf, q->c.level_before = INFINITY)
CEDIT(c_after_ninf, q->c.level_after = -INFINITY)
CEDIT(c_levels_equal, q->c.level_after = q->c.level_before)
CEDIT(c_levels_zeros, (q->c.level_before = 0.0, q->c.level_after = -0.0))
CEDIT(c_levels_absurd, (q->c.level_before = -1e308, q->c.level_after = 1e308, q->c.delta_pct = NAN))
CEDIT(c_key_255, q->c.series_key = (char *)wire_letters('k', PW_ST_KEY_MAX - 1))
CEDIT(c_key_256, q->c.series_key = (char *)wire_letters('k', PW_ST_KEY_MAX))
CEDIT(c_key_60k, q->c.series_key = (char *)wire_letters('k', 60000))
CEDIT(c_id_1024, q->c.changepoint_id = (char *)fill_id(id_1024, 'c', 1024))
CEDIT(c_id_1025, q->c.changepoint_id = (char *)wire_letters('c', 1025))
CEDIT(c_id_60k, q->c.changepoint_id = (char *)wire_letters('c', 60000))
CEDIT(c_build_60k, q->c.first_shifted_build_id = (char *)wire_letters('b', 60000))
CEDIT(c_stage_99, q->c.stage = (Perfwatch__V1__ChangepointStage)99)
CEDIT(c_stage_neg, q->c.stage = (Perfwatch__V1__ChangepointStage)-1)
CEDIT(c_annotation_99, q->c.annotation = (Perfwatch__V1__ChangepointAnnotation)99)
CEDIT(c_unspecified, (q->c.stage = STAGE(UNSPECIFIED), q->c.annotation = ANN(UNSPECIFIED)))
CEDIT(c_trend, (q->c.stage = STAGE(TREND), q->c.level_after = NAN, q->c.first_shifted_build_id = ""))
CEDIT(c_infra, (q->c.annotation = ANN(INFRA), q->c.fleet_event_id = "fc-2026-06-15-0007",
                q->c.level_after = q->c.level_before, q->c.shift_unix_us = 0))
CEDIT(c_frozen, (q->c.annotation = ANN(FROZEN), q->c.first_shifted_build_id = ""))
CEDIT(c_other_enums, (q->c.direction = (Perfwatch__V1__ShiftDirection)99,
                      q->c.method = (Perfwatch__V1__ChangepointMethod)-5,
                      q->c.routing = (Perfwatch__V1__Routing)77))
CEDIT(c_sql_id, q->c.changepoint_id = "cp'); DROP TABLE perfwatch.shift_acceptances;--%s%n")
CEDIT(c_sql_key, q->c.series_key = "chat-8b'); DELETE FROM perfwatch.series;--/h/p/c/m")
CEDIT(c_no_structured_key, q->c.key = NULL)
WIRE_APPEND_STR(c_nul_key, 3, "chat-8b\0/hlo:1/v6e-4/c/m")
WIRE_APPEND_STR(c_ff_build, 11, "xla-nightly-\377")
WIRE_APPEND_STR(c_nul_fleet, 23, "fc-1\0")
WIRE_APPEND_STR(c_cont_unit, 17, "m\x80s")
WIRE_APPEND_STR(c_second_id, 1, "cp-second")
WIRE_APPEND_STR(c_emoji_key, 3, "chat-8b-\xf0\x9f\x9a\x80/hlo:1/v6e-4/c/m")
static void c_surrogate_metric(wire_buf *b) { wire_nested(b, 4, 5, "tpot\xed\xbf\xbf", 7); }
static void c_level_varint(wire_buf *b) { wire_int(b, 16, 4); }
static void c_stage_ld(wire_buf *b) { wire_ld(b, 26, "PROVISIONAL", 11); }

#define NOT_CP "payload is not a perfwatch.v1.Changepoint"
#define CP_NEEDS "changepoint needs a changepoint_id, a series_key and a series_id"
#define LEVELS "two finite, distinct levels"
static const door_case ccases[] = {
	{"the good changepoint (provisional)", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	DOOR_COMMON_CASES(R_MISSING, CP_NEEDS, NOT_CP),
	{"truncated at byte 50", NULL, NULL, NULL, 0, 50, R_DECODE, NOT_CP, 0, 0, 0},
	{"level_after with the varint wire type", NULL, c_level_varint, NULL, 0, 0, R_DECODE, NOT_CP, 0, 0, 0},
	{"stage as a string", NULL, c_stage_ld, NULL, 0, 0, R_DECODE, NOT_CP, 0, 0, 0},
	/* every required field missing in turn */
	{"no changepoint_id", c_no_id, NULL, NULL, 0, 0, R_MISSING, CP_NEEDS, 0, 0, 0},
	{"no series_key", c_no_key, NULL, NULL, 0, 0, R_MISSING, CP_NEEDS, 0, 0, 0},
	{"series_id 0", c_id_zero, NULL, NULL, 0, 0, R_MISSING, CP_NEEDS, 0, 0, 0},
	{"series_id INT64_MIN", c_id_min, NULL, NULL, 0, 0, R_MISSING, CP_NEEDS, 0, 0, 0},
	{"no first_shifted_build_id", c_no_build, NULL, NULL, 0, 0, R_MISSING,
	 "changepoint needs its first_shifted_build_id", 0, 0, 0},
	{"withdrawn without first_shifted_build_id", c_withdrawn_no_build, NULL, NULL, 0, 0, R_MISSING,
	 "changepoint needs its first_shifted_build_id", 0, 0, 0},
	{"no structured key (series_key carries it)", c_no_structured_key, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* times */
	{"shifted at 0", c_shift_zero, NULL, NULL, 0, 0, R_INVALID, "measured time (shift_unix_us 0: after 1970", 0, 0,
	 0},
	{"shifted at INT64_MIN", c_shift_min, NULL, NULL, 0, 0, R_INVALID,
	 "measured time (shift_unix_us -9223372036854775808:", 0, 0, 0},
	{"shifted in the year 292277 (INT64_MAX: PostgreSQL cannot hold it)", c_shift_future, NULL, NULL, 0, 0,
	 R_INVALID, "measured time (shift_unix_us 9223372036854775807: after 1970, before the year 10000)", 0, 0, 0},
	{"shifted at 9999-12-31T23:59:59.999999Z (the last time stored)", c_shift_last, NULL, NULL, 0, 0, R_OK_, NULL,
	 0, 0, 0},
	{"shifted a microsecond later", c_shift_after_last, NULL, NULL, 0, 0, R_INVALID, "before the year 10000", 0, 0,
	 0},
	{"withdrawn in the year 292277 (the time is not read)", c_withdrawn_future, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0,
	 0},
	/* numbers */
	{"level_after NaN", c_after_nan, NULL, NULL, 0, 0, R_INVALID, "level_after nan", 0, 0, 0},
	{"level_before +inf", c_before_inf, NULL, NULL, 0, 0, R_INVALID, "level_before inf", 0, 0, 0},
	{"level_after -inf", c_after_ninf, NULL, NULL, 0, 0, R_INVALID, "level_after -inf", 0, 0, 0},
	{"the same level before and after", c_levels_equal, NULL, NULL, 0, 0, R_INVALID, LEVELS, 0, 0, 0},
	{"levels 0 and -0 (equal)", c_levels_zeros, NULL, NULL, 0, 0, R_INVALID, LEVELS, 0, 0, 0},
	{"levels -1e308 and 1e308, delta NaN (finite, distinct)", c_levels_absurd, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0,
	 0},
	/* sizes */
	{"series_key of 255 bytes (the cap)", c_key_255, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"series_key of 256 bytes", c_key_256, NULL, NULL, 0, 0, R_OVERSIZE,
	 "series_key of 256 bytes is too long (the cap is 255)", 0, 0, 0},
	{"series_key of 60 kB", c_key_60k, NULL, NULL, 0, 0, R_OVERSIZE, "series_key of 60000 bytes", 0, 0, 0},
	{"changepoint_id of 1024 bytes (the cap)", c_id_1024, NULL, NULL, 0, 0, R_OK_, id_1024, 0, 0, 0},
	{"changepoint_id of 1025 bytes", c_id_1025, NULL, NULL, 0, 0, R_OVERSIZE,
	 "changepoint_id of 1025 bytes is too long (the cap is 1024)", 0, 0, 0},
	{"changepoint_id of 60 kB", c_id_60k, NULL, NULL, 0, 0, R_OVERSIZE, "changepoint_id of 60000 bytes", 0, 0, 0},
	{"first_shifted_build_id of 60 kB (hashed into the accept id)", c_build_60k, NULL, NULL, 0, 0, R_OK_, NULL, 0,
	 0, 0},
	/* enums */
	{"stage 99", c_stage_99, NULL, NULL, 0, 0, R_INVALID,
	 "changepoint stage 99 is not a ChangepointStage this build knows", 0, 0, 0},
	{"stage -1", c_stage_neg, NULL, NULL, 0, 0, R_INVALID, "changepoint stage -1", 0, 0, 0},
	{"annotation 99", c_annotation_99, NULL, NULL, 0, 0, R_INVALID,
	 "changepoint annotation 99 is not a ChangepointAnnotation this build knows", 0, 0, 0},
	{"direction, method and routing out of range (not read)", c_other_enums, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0,
	 0},
	{"stage and annotation unspecified (from before stages: tracked)", c_unspecified, NULL, NULL, 0, 0, R_OK_, NULL,
	 0, 0, 0},
	{"a trend without a second level or build (ignored)", c_trend, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"an infra step without a shift (ignored)", c_infra, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"frozen without a build (ignored)", c_frozen, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"withdrawn without time or levels", c_withdrawn_no_levels, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* NUL and UTF-8 in the strings the door reads, at any depth */
	{"NUL inside series_key", NULL, c_nul_key, NULL, 0, 0, R_INVALID, "\"series_key\" contains a NUL byte", 0, 0,
	 0},
	{"0xff in first_shifted_build_id", NULL, c_ff_build, NULL, 0, 0, R_INVALID,
	 "\"first_shifted_build_id\" is not valid UTF-8", 0, 0, 0},
	{"NUL at the end of fleet_event_id", NULL, c_nul_fleet, NULL, 0, 0, R_INVALID,
	 "\"fleet_event_id\" contains a NUL byte", 0, 0, 0},
	{"a lone continuation byte in unit", NULL, c_cont_unit, NULL, 0, 0, R_INVALID, "\"unit\" is not valid UTF-8", 0,
	 0, 0},
	{"a surrogate in key.metric", NULL, c_surrogate_metric, NULL, 0, 0, R_INVALID,
	 "\"key.metric\" is not valid UTF-8", 0, 0, 0},
	/* let through, unchanged */
	{"SQL and printf metacharacters in changepoint_id (data)", c_sql_id, NULL, NULL, 0, 0, R_OK_,
	 "cp'); DROP TABLE perfwatch.shift_acceptances;--%s%n", 0, 0, 0},
	{"SQL metacharacters in series_key (data)", c_sql_key, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a 4-byte UTF-8 character in series_key", NULL, c_emoji_key, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"changepoint_id twice: the last counts", NULL, c_second_id, NULL, 0, 0, R_OK_, "cp-second", 0, 0, 0},
};

DOOR_FN(cp_door, Perfwatch__V1__Changepoint, pw_baseliner_changepoint_decode)

static const char *cp_id(const ProtobufCMessage *m)
{
	return ((const Perfwatch__V1__Changepoint *)m)->changepoint_id;
}

Test(accept_door, every_hostile_changepoint_gets_its_reason)
{
	door_cases_run("baseliner perf.changepoints.v1", DOOR_TABLE(ccases), pack_cp,
	               GOOD_CP, cp_door, cp_id);
}

/* ================================================ perf.gate.verdicts.v1 */

/* the baseliner reads the WAIVED series results: a passing one and a waived one */
typedef struct gate_parts {
	Perfwatch__V1__GateVerdict v;
	Perfwatch__V1__FamilyVerdict fam;
	Perfwatch__V1__FamilyVerdict *famp[1];
	Perfwatch__V1__GateSeriesResult pass, waived;
	Perfwatch__V1__GateSeriesResult *rows[2];
} gate_parts;

static wire_buf pack_gate(door_edit_fn edit)
{
	static gate_parts q;
	memset(&q, 0, sizeof q);
	perfwatch__v1__gate_verdict__init(&q.v);
	perfwatch__v1__family_verdict__init(&q.fam);
	perfwatch__v1__gate_series_result__init(&q.pass);
	perfwatch__v1__gate_series_result__init(&q.waived);
	q.fam.family = "chat-8b";
	q.fam.verdict = PERFWATCH__V1__VERDICT__VERDICT_WAIVED;
	q.famp[0] = &q.fam;
	q.pass.series_id = 411;
	q.pass.series_key = "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/step_time_ms";
	q.pass.verdict = PERFWATCH__V1__VERDICT__VERDICT_PASS;
	q.pass.baseline_median = 11.0;
	q.pass.candidate_median = 11.0;
	q.waived.series_id = 412;
	q.waived.series_key = "chat-8b/hlo:9f31c2ab/v6e-4/decode.B8.s2048.int8/tpot_p50_ms";
	q.waived.family = "chat-8b";
	q.waived.verdict = PERFWATCH__V1__VERDICT__VERDICT_WAIVED;
	q.waived.waiver_id = GOOD_WAIVER;
	q.waived.baseline_median = 2.15;
	q.waived.candidate_median = 2.32;
	q.waived.unit = "ms";
	q.rows[0] = &q.pass;
	q.rows[1] = &q.waived;
	q.v.release_id = "xla-rc-2026-06-17";
	q.v.evaluation = 2;
	q.v.verdict = PERFWATCH__V1__VERDICT__VERDICT_PASS;
	q.v.candidate_build_id = "xla-rc-2026-06-17";
	q.v.baseline_release = "xla-2026-06-10";
	q.v.families = q.famp;
	q.v.n_families = 1;
	q.v.series = q.rows;
	q.v.n_series = 2;
	q.v.tests = 2066;
	q.v.fdr_q = 0.05;
	q.v.evaluated_unix_us = NOW_US;
	q.v.summary = "PASS: chat-8b (1 series waived)";
	if (edit)
		edit(&q);
	return wire_pack(&q.v.base);
}

#define GEDIT(fn, stmt) DOOR_EDIT(fn, gate_parts *q = p, stmt)
GEDIT(g_no_waiver, q->waived.waiver_id = "")
GEDIT(g_waiver_127, q->waived.waiver_id = (char *)fill_id(id_127, 'w', 127))
GEDIT(g_waiver_128, q->waived.waiver_id = (char *)wire_letters('w', 128))
GEDIT(g_waiver_60k, q->waived.waiver_id = (char *)wire_letters('w', 60000))
GEDIT(g_no_key, q->waived.series_key = "")
GEDIT(g_id_zero, q->waived.series_id = 0)
GEDIT(g_id_neg, q->waived.series_id = -3)
GEDIT(g_key_256, q->waived.series_key = (char *)wire_letters('k', PW_ST_KEY_MAX))
GEDIT(g_key_60k, q->waived.series_key = (char *)wire_letters('k', 60000))
GEDIT(g_cand_nan, q->waived.candidate_median = NAN)
GEDIT(g_base_inf, q->waived.baseline_median = INFINITY)
GEDIT(g_cand_ninf, q->waived.candidate_median = -INFINITY)
GEDIT(g_medians_equal, q->waived.candidate_median = q->waived.baseline_median)
GEDIT(g_medians_zeros, (q->waived.baseline_median = 0.0, q->waived.candidate_median = -0.0))
GEDIT(g_medians_absurd, (q->waived.baseline_median = 1e-308, q->waived.candidate_median = 1e308,
                         q->waived.delta_pct = INFINITY, q->waived.p = NAN))
GEDIT(g_blocking_gaps, (q->waived.verdict = PERFWATCH__V1__VERDICT__VERDICT_BLOCKING,
                        q->waived.waiver_id = "", q->waived.series_id = 0,
                        q->waived.candidate_median = NAN))
GEDIT(g_verdict_99_gaps, (q->waived.verdict = (Perfwatch__V1__Verdict)99, q->waived.waiver_id = "",
                          q->waived.series_key = ""))
GEDIT(g_no_rows, q->v.n_series = 0)
GEDIT(g_no_release, q->v.release_id = "")
GEDIT(g_future, (q->v.evaluated_unix_us = INT64_MAX, q->v.fdr_q = NAN))
GEDIT(g_past, q->v.evaluated_unix_us = INT64_MIN)
GEDIT(g_sql_waiver, q->waived.waiver_id = "wv'); UPDATE perfwatch.shift_acceptances SET status='accepted';--")
GEDIT(g_second_waived_bad, (q->pass.verdict = PERFWATCH__V1__VERDICT__VERDICT_WAIVED,
                            q->pass.waiver_id = "wv-2026-06-18-00", q->rows[0] = &q->waived,
                            q->rows[1] = &q->pass, q->pass.candidate_median = NAN))
static void g_many_rows(void *p)
{
	gate_parts *q = p;
	static Perfwatch__V1__GateSeriesResult *many[5000];
	for (size_t i = 0; i < 5000; i++)
		many[i] = &q->waived;
	q->v.series = many;
	q->v.n_series = 5000;
}
static void g_nul_waiver(wire_buf *b) { wire_nested(b, 7, 24, "wv-1\0evil", 9); }
static void g_ff_key(wire_buf *b) { wire_nested(b, 7, 2, "chat-8b/\377/v6e-4/c/m", 18); }
static void g_nul_family(wire_buf *b) { wire_nested(b, 6, 1, "chat\0-8b", 8); }
static void g_verdict_ld(wire_buf *b) { wire_nested(b, 7, 23, "WAIVED", 6); }
static void g_median_ld(wire_buf *b) { wire_nested(b, 7, 9, "2.32", 4); }
WIRE_APPEND_STR(g_overlong_summary, 12, "PASS \xe0\x80\xaf")

#define NOT_GATE "payload is not a perfwatch.v1.GateVerdict"
#define WAIVED_NEEDS "waived series 1 needs a series_key, a series_id and a waiver_id of 1 to 127 bytes"
#define MEDIANS "waived series 1 needs finite, distinct baseline and candidate medians"
static const door_case gcases[] = {
	{"the good verdict (one series passes, one is waived)", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	DOOR_COMMON_CASES(R_OK_, "", NOT_GATE),
	/* empty: nothing waived, nothing to do */
	{"truncated at byte 40", NULL, NULL, NULL, 0, 40, R_DECODE, NOT_GATE, 0, 0, 0},
	{"a series result's verdict as a string", NULL, g_verdict_ld, NULL, 0, 0, R_DECODE, NOT_GATE, 0, 0, 0},
	{"a series result's median as a string", NULL, g_median_ld, NULL, 0, 0, R_DECODE, NOT_GATE, 0, 0, 0},
	/* every field a waived series result needs, missing in turn */
	{"no waiver_id", g_no_waiver, NULL, NULL, 0, 0, R_MISSING, WAIVED_NEEDS, 0, 0, 0},
	{"no series_key", g_no_key, NULL, NULL, 0, 0, R_MISSING, WAIVED_NEEDS, 0, 0, 0},
	{"series_id 0", g_id_zero, NULL, NULL, 0, 0, R_MISSING, WAIVED_NEEDS, 0, 0, 0},
	{"series_id -3", g_id_neg, NULL, NULL, 0, 0, R_MISSING, WAIVED_NEEDS, 0, 0, 0},
	{"the second waived series bad (its index named)", g_second_waived_bad, NULL, NULL, 0, 0, R_INVALID,
	 "waived series 1 needs finite", 0, 0, 0},
	{"no release_id (not the baseliner's)", g_no_release, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* sizes */
	{"waiver_id of 127 bytes (the cap)", g_waiver_127, NULL, NULL, 0, 0, R_OK_, id_127, 0, 0, 0},
	{"waiver_id of 128 bytes", g_waiver_128, NULL, NULL, 0, 0, R_MISSING, WAIVED_NEEDS, 0, 0, 0},
	{"waiver_id of 60 kB", g_waiver_60k, NULL, NULL, 0, 0, R_MISSING, WAIVED_NEEDS, 0, 0, 0},
	{"series_key of 256 bytes", g_key_256, NULL, NULL, 0, 0, R_OVERSIZE,
	 "waived series 1: series_key of 256 bytes is too long (the cap is 255)", 0, 0, 0},
	{"series_key of 60 kB", g_key_60k, NULL, NULL, 0, 0, R_OVERSIZE, "series_key of 60000 bytes", 0, 0, 0},
	{"5000 waived series results", g_many_rows, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* numbers */
	{"candidate median NaN", g_cand_nan, NULL, NULL, 0, 0, R_INVALID, MEDIANS " (2.15, nan)", 0, 0, 0},
	{"baseline median +inf", g_base_inf, NULL, NULL, 0, 0, R_INVALID, MEDIANS " (inf, 2.32)", 0, 0, 0},
	{"candidate median -inf", g_cand_ninf, NULL, NULL, 0, 0, R_INVALID, MEDIANS " (2.15, -inf)", 0, 0, 0},
	{"the same median before and after", g_medians_equal, NULL, NULL, 0, 0, R_INVALID, MEDIANS, 0, 0, 0},
	{"medians 0 and -0 (equal)", g_medians_zeros, NULL, NULL, 0, 0, R_INVALID, MEDIANS, 0, 0, 0},
	{"medians 1e-308 and 1e308, delta +inf, p NaN (finite, distinct)", g_medians_absurd, NULL, NULL, 0, 0, R_OK_,
	 NULL, 0, 0, 0},
	/* what is not waived is not the baseliner's business */
	{"a blocking result with a waived one's gaps", g_blocking_gaps, NULL, NULL, 0, 0, R_OK_, "", 0, 0, 0},
	{"a verdict 99 result with a waived one's gaps", g_verdict_99_gaps, NULL, NULL, 0, 0, R_OK_, "", 0, 0, 0},
	{"no series results", g_no_rows, NULL, NULL, 0, 0, R_OK_, "", 0, 0, 0},
	/* times */
	{"evaluated in the year 292277, fdr_q NaN", g_future, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"evaluated at INT64_MIN", g_past, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* NUL and UTF-8, nested */
	{"NUL inside a series result's waiver_id", NULL, g_nul_waiver, NULL, 0, 0, R_INVALID,
	 "\"series.waiver_id\" contains a NUL byte", 0, 0, 0},
	{"0xff in a series result's series_key", NULL, g_ff_key, NULL, 0, 0, R_INVALID,
	 "\"series.series_key\" is not valid UTF-8", 0, 0, 0},
	{"NUL inside a family's name", NULL, g_nul_family, NULL, 0, 0, R_INVALID,
	 "\"families.family\" contains a NUL byte", 0, 0, 0},
	{"an overlong '/' in summary", NULL, g_overlong_summary, NULL, 0, 0, R_INVALID,
	 "\"summary\" is not valid UTF-8", 0, 0, 0},
	/* let through, unchanged */
	{"SQL metacharacters in waiver_id (data)", g_sql_waiver, NULL, NULL, 0, 0, R_OK_,
	 "wv'); UPDATE perfwatch.shift_acceptances SET status='accepted';--", 0, 0, 0},
};

DOOR_FN(gate_door, Perfwatch__V1__GateVerdict, pw_baseliner_verdict_decode)

/* the waiver of the first waived series result ("" when none is waived) */
static const char *gate_waiver(const ProtobufCMessage *m)
{
	const Perfwatch__V1__GateVerdict *v = (const Perfwatch__V1__GateVerdict *)m;
	for (size_t i = 0; i < v->n_series; i++)
		if (v->series[i]->verdict == PERFWATCH__V1__VERDICT__VERDICT_WAIVED)
			return v->series[i]->waiver_id;
	return "";
}

Test(accept_door, every_hostile_gate_verdict_gets_its_reason)
{
	door_cases_run("baseliner perf.gate.verdicts.v1", DOOR_TABLE(gcases), pack_gate,
	               GOOD_WAIVER, gate_door, gate_waiver);
}

/* ====================================================== perf.triage.v1 */

typedef struct triage_parts {
	Perfwatch__V1__TriageVerdict t;
} triage_parts;

static wire_buf pack_triage(door_edit_fn edit)
{
	static triage_parts q;
	memset(&q, 0, sizeof q);
	perfwatch__v1__triage_verdict__init(&q.t);
	q.t.page_id = GOOD_PAGE;
	q.t.outcome = PERFWATCH__V1__TRIAGE_OUTCOME__TRIAGE_OUTCOME_TRUE_REGRESSION;
	q.t.routed_to = PERFWATCH__V1__TRIAGE_OWNER__TRIAGE_OWNER_COMPILER;
	q.t.triager = "alice@ml-perf";
	q.t.note = "fusion VMEM cap; shipped with the release";
	q.t.decided_unix_us = NOW_US;
	if (edit)
		edit(&q);
	return wire_pack(&q.t.base);
}

#define TEDIT(fn, stmt) DOOR_EDIT(fn, triage_parts *q = p, stmt)
TEDIT(t_false, q->t.outcome = PERFWATCH__V1__TRIAGE_OUTCOME__TRIAGE_OUTCOME_FALSE_REGRESSION)
TEDIT(t_no_outcome, q->t.outcome = PERFWATCH__V1__TRIAGE_OUTCOME__TRIAGE_OUTCOME_UNSPECIFIED)
TEDIT(t_outcome_99, q->t.outcome = (Perfwatch__V1__TriageOutcome)99)
TEDIT(t_outcome_neg, q->t.outcome = (Perfwatch__V1__TriageOutcome)-1)
TEDIT(t_no_page, q->t.page_id = "")
TEDIT(t_page_127, q->t.page_id = (char *)fill_id(id_127, 'p', 127))
TEDIT(t_page_128, q->t.page_id = (char *)wire_letters('p', 128))
TEDIT(t_page_60k, q->t.page_id = (char *)wire_letters('p', 60000))
TEDIT(t_sql, q->t.page_id = "pg'); DELETE FROM perfwatch.pages;--%s")
TEDIT(t_owner_99, q->t.routed_to = (Perfwatch__V1__TriageOwner)99)
TEDIT(t_future, q->t.decided_unix_us = INT64_MAX)
TEDIT(t_past, q->t.decided_unix_us = INT64_MIN)
TEDIT(t_long_note, q->t.note = (char *)wire_letters('n', 60000))
TEDIT(t_no_triager, (q->t.triager = "", q->t.note = "", q->t.decided_unix_us = 0))
WIRE_APPEND_STR(t_nul_triager, 4, "alice\0@ml-perf")
WIRE_APPEND_STR(t_ff_note, 5, "note \377")
WIRE_APPEND_STR(t_surrogate_note, 5, "note \xed\xb0\x80")
WIRE_APPEND_STR(t_second_page, 1, "pg-2026-06-18-0032")
WIRE_APPEND_STR(t_emoji_page, 1, "pg-\xf0\x9f\x9a\x80")
static void t_outcome_ld(wire_buf *b) { wire_ld(b, 2, "TRUE", 4); }
static void t_decided_fixed(wire_buf *b)
{
	wire_varint(b, 6u << 3 | 1); /* decided_unix_us as a fixed64 */
	wire_bytes(b, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
}

#define NOT_TRIAGE "payload is not a perfwatch.v1.TriageVerdict"
#define PAGE_NEEDS "triage verdict needs a page_id of 1 to 127 bytes"
static const door_case tcases[] = {
	{"the good verdict (a true regression)", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	DOOR_COMMON_CASES(R_MISSING, PAGE_NEEDS, NOT_TRIAGE),
	{"outcome as a string", NULL, t_outcome_ld, NULL, 0, 0, R_DECODE, NOT_TRIAGE, 0, 0, 0},
	{"decided_unix_us as a fixed64", NULL, t_decided_fixed, NULL, 0, 0, R_DECODE, NOT_TRIAGE, 0, 0, 0},
	/* every required field missing in turn */
	{"no page_id", t_no_page, NULL, NULL, 0, 0, R_MISSING, PAGE_NEEDS, 0, 0, 0},
	{"no outcome", t_no_outcome, NULL, NULL, 0, 0, R_MISSING,
	 "triage verdict of page \"" GOOD_PAGE "\" has no outcome", 0, 0, 0},
	{"no triager, note or time (not read)", t_no_triager, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* enums */
	{"a false regression (passes, changes nothing)", t_false, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"outcome 99", t_outcome_99, NULL, NULL, 0, 0, R_INVALID,
	 "triage outcome 99 of page \"" GOOD_PAGE "\" is not a TriageOutcome this build knows", 0, 0, 0},
	{"outcome -1", t_outcome_neg, NULL, NULL, 0, 0, R_INVALID, "triage outcome -1", 0, 0, 0},
	{"routed to an owner this build does not know (not read)", t_owner_99, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* sizes */
	{"page_id of 127 bytes (the cap)", t_page_127, NULL, NULL, 0, 0, R_OK_, id_127, 0, 0, 0},
	{"page_id of 128 bytes", t_page_128, NULL, NULL, 0, 0, R_MISSING, PAGE_NEEDS, 0, 0, 0},
	{"page_id of 60 kB", t_page_60k, NULL, NULL, 0, 0, R_MISSING, PAGE_NEEDS, 0, 0, 0},
	{"a 60 kB note (not read)", t_long_note, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* times */
	{"decided in the year 292277", t_future, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"decided at INT64_MIN", t_past, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* NUL and UTF-8 in the other strings */
	{"NUL inside triager", NULL, t_nul_triager, NULL, 0, 0, R_INVALID, "\"triager\" contains a NUL byte", 0, 0, 0},
	{"0xff in note", NULL, t_ff_note, NULL, 0, 0, R_INVALID, "\"note\" is not valid UTF-8", 0, 0, 0},
	{"a surrogate in note", NULL, t_surrogate_note, NULL, 0, 0, R_INVALID, "\"note\" is not valid UTF-8", 0, 0, 0},
	/* let through, unchanged */
	{"SQL and printf metacharacters in page_id (data)", t_sql, NULL, NULL, 0, 0, R_OK_,
	 "pg'); DELETE FROM perfwatch.pages;--%s", 0, 0, 0},
	{"a 4-byte UTF-8 character in page_id", NULL, t_emoji_page, NULL, 0, 0, R_OK_, "pg-\xf0\x9f\x9a\x80", 0, 0, 0},
	{"page_id twice: the last counts", NULL, t_second_page, NULL, 0, 0, R_OK_, "pg-2026-06-18-0032", 0, 0, 0},
};

DOOR_FN(triage_door, Perfwatch__V1__TriageVerdict, pw_baseliner_triage_decode)

static const char *triage_page(const ProtobufCMessage *m)
{
	return ((const Perfwatch__V1__TriageVerdict *)m)->page_id;
}

Test(accept_door, every_hostile_triage_verdict_gets_its_reason)
{
	door_cases_run("baseliner perf.triage.v1", DOOR_TABLE(tcases), pack_triage,
	               GOOD_PAGE, triage_door, triage_page);
}

/* ============================================ random mutations, each topic */

Test(accept_door, random_mutations_on_every_topic)
{
	static const struct {
		const char *topic;
		door_pack_fn pack;
		door_fn door;
	} t[] = {
		{"baseliner perf.changepoints.v1", pack_cp, cp_door},
		{"baseliner perf.gate.verdicts.v1", pack_gate, gate_door},
		{"baseliner perf.triage.v1", pack_triage, triage_door},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		wire_buf good = t[i].pack(NULL);
		door_mutations(t[i].topic, &good, t[i].door, 10000, 17 + i);
		free(good.p);
	}
}
