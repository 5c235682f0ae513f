/*
 * test_watch_door.c: the doors of the watcher's input topics
 * (services/watcher/watch_door.h: pw_watch_point_decode for perf.points.v1,
 * pw_watch_fleet_decode for perf.fleet-changes.v1), each on a table of
 * hostile payloads with the DlqReason every one must get; for what must pass,
 * whether the watcher takes it or skips it (points of other builds), and the
 * key or id that must come out unchanged. Raw fields are appended to a good
 * message packed by protobuf-c (wire_build.h).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "watch_door.h"
#include "wire_build.h"

#define R_OK_ PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED
#define R_DECODE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED
#define R_MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE

#define GOOD_KEY "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"
#define GOOD_EVENT "fc-2026-06-15-0007"

/* ====================================================== perf.points.v1 */

typedef struct point_parts {
	Perfwatch__V1__SeriesPoint sp;
	Perfwatch__V1__CompilerBuild cb;
	Perfwatch__V1__SeriesKey key;
} point_parts;

typedef void (*pedit_fn)(point_parts *q);

static wire_buf pack_point(pedit_fn edit)
{
	static point_parts q;
	perfwatch__v1__series_key__init(&q.key);
	q.key.model = "chat-8b";
	q.key.platform = "v6e-4";
	perfwatch__v1__compiler_build__init(&q.cb);
	q.cb.build_id = "xla-nightly-2026-06-16";
	q.cb.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_NIGHTLY;
	q.cb.cl = "cl/7841885";
	perfwatch__v1__series_point__init(&q.sp);
	q.sp.series_id = 412;
	q.sp.series_key = GOOD_KEY;
	q.sp.key = &q.key;
	q.sp.run_id = "t1-00412";
	q.sp.build = &q.cb;
	q.sp.value = 3.91;
	q.sp.unit = "ms";
	q.sp.measured_unix_us = 1781568000000000LL;
	q.sp.chip_set = "pinned-7";
	q.sp.cell = "cell-mtv5-c12";
	if (edit)
		edit(&q);
	wire_buf b = {0};
	b.n = perfwatch__v1__series_point__get_packed_size(&q.sp);
	b.p = malloc(b.n + 1);
	cr_assert_not_null(b.p);
	perfwatch__v1__series_point__pack(&q.sp, b.p);
	return b;
}

#define PEDIT(fn, stmt)                                                                            \
	static void fn(point_parts *q) { stmt; }
PEDIT(p_no_key, q->sp.series_key = "")
PEDIT(p_nan, q->sp.value = NAN)
PEDIT(p_inf, q->sp.value = INFINITY)
PEDIT(p_ninf, q->sp.value = -INFINITY)
PEDIT(p_huge, q->sp.value = -1e308)
PEDIT(p_no_build_id, q->cb.build_id = "")
PEDIT(p_no_build, q->sp.build = NULL)
PEDIT(p_rc, q->cb.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_RC)
PEDIT(p_release, q->cb.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_RELEASE)
PEDIT(p_kind_unknown, q->cb.kind = (Perfwatch__V1__BuildKind)42)
PEDIT(p_bisect_job, q->sp.bisect_job_id = "bj-1")
PEDIT(p_bisect_nan, (q->sp.bisect_job_id = "bj-1", q->sp.value = NAN))
PEDIT(p_sql, q->sp.series_key = "chat-8b'); DROP TABLE perfwatch.series;--/h/p/c/m")
PEDIT(p_far_future, q->sp.measured_unix_us = INT64_MAX)
PEDIT(p_id_negative, q->sp.series_id = -1)

WIRE_APPEND_STR(p_nul_key, 2, "chat-8b\0evil/h/p/c/m")
WIRE_APPEND_STR(p_nul_run, 4, "t1\0x")
WIRE_APPEND_STR(p_ff_key, 2, "chat-\377/h/p/c/m")
WIRE_APPEND_STR(p_ff_chip, 13, "pinned-\377")
WIRE_APPEND_STR(p_lead_cell, 14, "cell-\300")
WIRE_APPEND_STR(p_cont_fw, 15, "fw-\200")
WIRE_APPEND_STR(p_overlong, 2, "a\xc0\xaf" "b")
WIRE_APPEND_STR(p_surrogate, 16, "h\xed\xa0\x80")
WIRE_APPEND_STR(p_cut, 9, "m\xe2\x82")
WIRE_APPEND_STR(p_above, 17, "bj\xf4\x90\x80\x80")
WIRE_APPEND_STR(p_second_key, 2, "rank-moe-110b/h/p/c/m")
static void p_nested_build(wire_buf *b) { wire_nested(b, 7, 1, "xla-\377", 5); }
static void p_nested_key(wire_buf *b) { wire_nested(b, 3, 3, "v6e\0-4", 6); }
static void p_key_varint(wire_buf *b) { wire_int(b, 2, 7); }
static void p_value_ld(wire_buf *b) { wire_ld(b, 8, "3.91", 4); }
static void p_past_end(wire_buf *b) { wire_past_end(b, 9); }
static void p_unknown(wire_buf *b) { wire_int(b, 99, 12345); }
static void p_group(wire_buf *b) { wire_varint(b, 20u << 3 | 3); }

typedef struct pkase {
	const char *name;
	pedit_fn edit;
	void (*append)(wire_buf *b);
	const uint8_t *raw;
	size_t raw_len;
	Perfwatch__V1__DlqReason want;
	int skip;            /* R_OK_: 1 when the watcher must skip the point (not its build) */
	const char *want_key; /* R_OK_ and not skipped: NULL means GOOD_KEY */
} pkase;

static const pkase pcases[] = {
	{"the good point", NULL, NULL, NULL, 0, R_OK_, 0, NULL},
	{"empty payload (no build: not a nightly)", NULL, NULL, (const uint8_t *)"", 0, R_OK_, 1, NULL},
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, R_DECODE, 0, NULL},
	{"series_key as a varint", NULL, p_key_varint, NULL, 0, R_DECODE, 0, NULL},
	{"value as a string", NULL, p_value_ld, NULL, 0, R_DECODE, 0, NULL},
	{"a length prefix past the end", NULL, p_past_end, NULL, 0, R_DECODE, 0, NULL},
	{"a group that never ends", NULL, p_group, NULL, 0, R_DECODE, 0, NULL},
	{"no series_key", p_no_key, NULL, NULL, 0, R_INVALID, 0, NULL},
	{"no build id", p_no_build_id, NULL, NULL, 0, R_INVALID, 0, NULL},
	{"value NaN", p_nan, NULL, NULL, 0, R_INVALID, 0, NULL},
	{"value +inf", p_inf, NULL, NULL, 0, R_INVALID, 0, NULL},
	{"value -inf", p_ninf, NULL, NULL, 0, R_INVALID, 0, NULL},
	{"value -1e308 (finite)", p_huge, NULL, NULL, 0, R_OK_, 0, NULL},
	{"no build at all", p_no_build, NULL, NULL, 0, R_OK_, 1, NULL},
	{"an RC build", p_rc, NULL, NULL, 0, R_OK_, 1, NULL},
	{"a release build", p_release, NULL, NULL, 0, R_OK_, 1, NULL},
	{"a build kind this build does not know", p_kind_unknown, NULL, NULL, 0, R_OK_, 1, NULL},
	{"a bisection job's run", p_bisect_job, NULL, NULL, 0, R_OK_, 1, NULL},
	{"a bisection job's NaN (not the watcher's)", p_bisect_nan, NULL, NULL, 0, R_OK_, 1, NULL},
	{"NUL inside series_key", NULL, p_nul_key, NULL, 0, R_INVALID, 0, NULL},
	{"NUL inside run_id", NULL, p_nul_run, NULL, 0, R_INVALID, 0, NULL},
	{"0xff in series_key", NULL, p_ff_key, NULL, 0, R_INVALID, 0, NULL},
	{"0xff in chip_set", NULL, p_ff_chip, NULL, 0, R_INVALID, 0, NULL},
	{"a lone lead byte in cell", NULL, p_lead_cell, NULL, 0, R_INVALID, 0, NULL},
	{"a lone continuation byte in firmware", NULL, p_cont_fw, NULL, 0, R_INVALID, 0, NULL},
	{"an overlong '/' in series_key", NULL, p_overlong, NULL, 0, R_INVALID, 0, NULL},
	{"a surrogate in harness_version", NULL, p_surrogate, NULL, 0, R_INVALID, 0, NULL},
	{"a cut sequence in unit", NULL, p_cut, NULL, 0, R_INVALID, 0, NULL},
	{"above U+10FFFF in bisect_job_id", NULL, p_above, NULL, 0, R_INVALID, 0, NULL},
	{"0xff in build.build_id (nested)", NULL, p_nested_build, NULL, 0, R_INVALID, 0, NULL},
	{"NUL in key.platform (nested)", NULL, p_nested_key, NULL, 0, R_INVALID, 0, NULL},
	{"SQL metacharacters in series_key", p_sql, NULL, NULL, 0, R_OK_, 0,
	 "chat-8b'); DROP TABLE perfwatch.series;--/h/p/c/m"},
	{"measured in the year 292277", p_far_future, NULL, NULL, 0, R_OK_, 0, NULL},
	{"series_id negative (the watcher keys on the text)", p_id_negative, NULL, NULL, 0, R_OK_, 0, NULL},
	{"unknown fields", NULL, p_unknown, NULL, 0, R_OK_, 0, NULL},
	{"series_key twice: the last counts", NULL, p_second_key, NULL, 0, R_OK_, 0, "rank-moe-110b/h/p/c/m"},
};
#define NPCASES (sizeof pcases / sizeof pcases[0])

static wire_buf point_case(size_t i, door_expect *e)
{
	const pkase *c = &pcases[i];
	*e = (door_expect){c->name, c->want, c->skip, c->want_key ? c->want_key : GOOD_KEY, 0};
	wire_buf b = {0};
	if (c->raw) {
		wire_bytes(&b, c->raw, c->raw_len);
	} else {
		b = pack_point(c->edit);
		if (c->append)
			c->append(&b);
	}
	return b;
}

static Perfwatch__V1__DlqReason point_door(const uint8_t *buf, size_t len, ProtobufCMessage **out,
                                           bool *skip, char *detail, size_t detail_len)
{
	Perfwatch__V1__SeriesPoint *p = (Perfwatch__V1__SeriesPoint *)*out;
	Perfwatch__V1__DlqReason r = pw_watch_point_decode(buf, len, &p, skip, detail, detail_len);
	*out = (ProtobufCMessage *)p;
	return r;
}

static const char *point_key(const ProtobufCMessage *m)
{
	return ((const Perfwatch__V1__SeriesPoint *)m)->series_key;
}

Test(watch_door, every_hostile_point_gets_its_reason)
{
	door_run("watcher perf.points.v1", NPCASES, point_case, point_door, point_key);
}

/* ================================================= perf.fleet-changes.v1 */

typedef void (*fedit_fn)(Perfwatch__V1__FleetChangeEvent *fc);

static wire_buf pack_fleet(fedit_fn edit)
{
	static char *platforms[] = {"v6e-4"};
	static Perfwatch__V1__FleetChangeEvent fc;
	perfwatch__v1__fleet_change_event__init(&fc);
	fc.event_id = GOOD_EVENT;
	fc.occurred_unix_us = 1781481600000000LL;
	fc.kind = PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_RECABLING;
	fc.reason = "mtv5 row 12 recabled";
	fc.platforms = platforms;
	fc.n_platforms = 1;
	if (edit)
		edit(&fc);
	wire_buf b = {0};
	b.n = perfwatch__v1__fleet_change_event__get_packed_size(&fc);
	b.p = malloc(b.n + 1);
	cr_assert_not_null(b.p);
	perfwatch__v1__fleet_change_event__pack(&fc, b.p);
	return b;
}

#define FEDIT(fn, stmt)                                                                            \
	static void fn(Perfwatch__V1__FleetChangeEvent *f) { stmt; }
FEDIT(f_no_id, f->event_id = "")
FEDIT(f_no_time, f->occurred_unix_us = 0)
FEDIT(f_no_selector, f->n_platforms = 0)
FEDIT(f_fleet_wide, (f->n_platforms = 0, f->fleet_wide = 1))
FEDIT(f_negative_time, f->occurred_unix_us = -1)
FEDIT(f_far_time, f->occurred_unix_us = INT64_MAX)
FEDIT(f_sql, f->event_id = "fc'); DELETE FROM perfwatch.series;--")
FEDIT(f_kind_unknown, f->kind = (Perfwatch__V1__FleetChangeKind)999)
static void f_long_id(Perfwatch__V1__FleetChangeEvent *f)
{
	static char big[60001];
	memset(big, 'e', 60000);
	f->event_id = big;
}
static void f_many(Perfwatch__V1__FleetChangeEvent *f)
{
	static char *many[5000];
	for (size_t i = 0; i < 5000; i++)
		many[i] = "cell-x";
	f->cells = many;
	f->n_cells = 5000;
}

WIRE_APPEND_STR(f_ff_id, 1, "f-bad\377utf")
WIRE_APPEND_STR(f_nul_id, 1, "fc\0evil")
WIRE_APPEND_STR(f_nul_reason, 4, "recabled\0")
WIRE_APPEND_STR(f_bad_reason, 4, "row \xc3\x28")
WIRE_APPEND_STR(f_cont_source, 5, "ops\xa0")
WIRE_APPEND_STR(f_ff_platform, 6, "v6e-\xff")
WIRE_APPEND_STR(f_nul_chip, 7, "pinned\0-7")
WIRE_APPEND_STR(f_overlong_cell, 8, "cell-\xe0\x80\xaf")
WIRE_APPEND_STR(f_surrogate_fw, 9, "fw-\xed\xbf\xbf")
WIRE_APPEND_STR(f_cut_harness, 10, "pb-\xf0\x9f\x9a")
WIRE_APPEND_STR(f_ff_from, 11, "1.0\xff")
WIRE_APPEND_STR(f_nul_to, 12, "2.0\0")
WIRE_APPEND_STR(f_second_id, 1, "fc-2026-06-16-0001")
static void f_id_varint(wire_buf *b) { wire_int(b, 1, 7); }
static void f_time_ld(wire_buf *b) { wire_ld(b, 2, "yesterday", 9); }
static void f_past_end(wire_buf *b) { wire_past_end(b, 4); }
static void f_unknown(wire_buf *b) { wire_int(b, 77, 1); }

typedef struct fkase {
	const char *name;
	fedit_fn edit;
	void (*append)(wire_buf *b);
	const uint8_t *raw;
	size_t raw_len;
	Perfwatch__V1__DlqReason want;
	const char *want_id; /* R_OK_: NULL means GOOD_EVENT; "e60000": 60000 bytes of 'e' */
} fkase;

static const fkase fcases[] = {
	{"the good event", NULL, NULL, NULL, 0, R_OK_, NULL},
	{"empty payload", NULL, NULL, (const uint8_t *)"", 0, R_MISSING, NULL},
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, R_DECODE, NULL},
	{"event_id as a varint", NULL, f_id_varint, NULL, 0, R_DECODE, NULL},
	{"occurred_unix_us as a string", NULL, f_time_ld, NULL, 0, R_DECODE, NULL},
	{"a length prefix past the end", NULL, f_past_end, NULL, 0, R_DECODE, NULL},
	{"no event_id", f_no_id, NULL, NULL, 0, R_MISSING, NULL},
	{"no time", f_no_time, NULL, NULL, 0, R_MISSING, NULL},
	{"no selector (would select every series)", f_no_selector, NULL, NULL, 0, R_MISSING, NULL},
	{"no selector but fleet_wide", f_fleet_wide, NULL, NULL, 0, R_OK_, NULL},
	{"0xff in event_id (f-bad\\377utf)", NULL, f_ff_id, NULL, 0, R_INVALID, NULL},
	{"NUL inside event_id", NULL, f_nul_id, NULL, 0, R_INVALID, NULL},
	{"NUL at the end of reason", NULL, f_nul_reason, NULL, 0, R_INVALID, NULL},
	{"a bad continuation in reason", NULL, f_bad_reason, NULL, 0, R_INVALID, NULL},
	{"a lone continuation byte in source", NULL, f_cont_source, NULL, 0, R_INVALID, NULL},
	{"0xff in a platform", NULL, f_ff_platform, NULL, 0, R_INVALID, NULL},
	{"NUL inside a chip set", NULL, f_nul_chip, NULL, 0, R_INVALID, NULL},
	{"an overlong '/' in a cell", NULL, f_overlong_cell, NULL, 0, R_INVALID, NULL},
	{"a surrogate in firmware", NULL, f_surrogate_fw, NULL, 0, R_INVALID, NULL},
	{"a cut sequence in a harness version", NULL, f_cut_harness, NULL, 0, R_INVALID, NULL},
	{"0xff in from_version", NULL, f_ff_from, NULL, 0, R_INVALID, NULL},
	{"NUL at the end of to_version", NULL, f_nul_to, NULL, 0, R_INVALID, NULL},
	{"occurred before 1970 (ordering only)", f_negative_time, NULL, NULL, 0, R_OK_, NULL},
	{"occurred in the year 292277", f_far_time, NULL, NULL, 0, R_OK_, NULL},
	{"a 60 kB event_id (PostgreSQL's to refuse: processing_failed)", f_long_id, NULL, NULL, 0, R_OK_,
	 "e60000"},
	{"5000 cells", f_many, NULL, NULL, 0, R_OK_, NULL},
	{"SQL metacharacters in event_id", f_sql, NULL, NULL, 0, R_OK_, "fc'); DELETE FROM perfwatch.series;--"},
	{"a kind this build does not know", f_kind_unknown, NULL, NULL, 0, R_OK_, NULL},
	{"unknown fields", NULL, f_unknown, NULL, 0, R_OK_, NULL},
	{"event_id twice: the last counts", NULL, f_second_id, NULL, 0, R_OK_, "fc-2026-06-16-0001"},
};
#define NFCASES (sizeof fcases / sizeof fcases[0])

static wire_buf fleet_case(size_t i, door_expect *e)
{
	const fkase *c = &fcases[i];
	bool big = c->want_id && strcmp(c->want_id, "e60000") == 0;
	*e = (door_expect){c->name, c->want, false, c->want_id ? c->want_id : GOOD_EVENT,
	                   big ? 60000 : 0};
	wire_buf b = {0};
	if (c->raw) {
		wire_bytes(&b, c->raw, c->raw_len);
	} else {
		b = pack_fleet(c->edit);
		if (c->append)
			c->append(&b);
	}
	return b;
}

static Perfwatch__V1__DlqReason fleet_door(const uint8_t *buf, size_t len, ProtobufCMessage **out,
                                           bool *skip, char *detail, size_t detail_len)
{
	(void)skip;
	Perfwatch__V1__FleetChangeEvent *fc = (Perfwatch__V1__FleetChangeEvent *)*out;
	Perfwatch__V1__DlqReason r = pw_watch_fleet_decode(buf, len, &fc, detail, detail_len);
	*out = (ProtobufCMessage *)fc;
	return r;
}

static const char *fleet_id(const ProtobufCMessage *m)
{
	return ((const Perfwatch__V1__FleetChangeEvent *)m)->event_id;
}

Test(watch_door, every_hostile_fleet_change_gets_its_reason)
{
	door_run("watcher perf.fleet-changes.v1", NFCASES, fleet_case, fleet_door, fleet_id);
}
