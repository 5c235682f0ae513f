/*
 * test_baseliner_door.c: the doors of the baseliner's two input topics
 * (services/baseliner/baseliner.h: pw_baseliner_point_decode for
 * perf.points.v1, pw_baseliner_fleet_decode for perf.fleet-changes.v1), each
 * on a table of hostile payloads with the DlqReason every one must get — or,
 * for what the door must let through (SQL metacharacters, unknown fields,
 * absurd but finite numbers), the value that must come out unchanged.
 *
 * The good message is packed from a protobuf-c struct. A case either changes a
 * field before packing, or appends raw wire bytes to the good payload: a
 * singular field that occurs twice takes its last value (sub-messages merge),
 * so an appended field overrides the good one, NUL bytes and invalid UTF-8
 * included, which a struct cannot carry.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseliner.h"
#include "door_table.h"
#include "wire_messages.h"
#include "series_table.h"

#define R_OK_ PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED
#define R_DECODE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED
#define R_MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
#define R_OVERSIZE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE

#define GOOD_KEY "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"


/* the worked example's nightly point (wire_messages.h), with an edit of its parts before packing */
static wire_buf pack_point(door_edit_fn edit)
{
	static wire_point_parts q;
	wire_point_init(&q);
	if (edit)
		edit(&q);
	return wire_pack(&q.sp.base);
}

/* ---- struct edits ---- */
#define PEDIT(fn, stmt) DOOR_EDIT(fn, Perfwatch__V1__SeriesPoint *s = &((wire_point_parts *)p)->sp, stmt)
PEDIT(no_key, s->series_key = "")
PEDIT(id_zero, s->series_id = 0)
PEDIT(id_negative, s->series_id = -7)
PEDIT(id_min, s->series_id = INT64_MIN)
PEDIT(value_nan, s->value = NAN)
PEDIT(value_inf, s->value = INFINITY)
PEDIT(value_ninf, s->value = -INFINITY)
PEDIT(value_huge, s->value = 1e308)
PEDIT(value_negative, s->value = -3.91)
PEDIT(value_denormal, s->value = 4.9e-324)
static void key_len(Perfwatch__V1__SeriesPoint *s, size_t n)
{
	static char x[1 << 20];
	memset(x, 'k', n);
	x[n] = 0;
	s->series_key = x;
}
PEDIT(key_255, key_len(s, PW_ST_KEY_MAX - 1))
PEDIT(key_256, key_len(s, PW_ST_KEY_MAX))
PEDIT(key_1mb, key_len(s, (1 << 20) - 1))
static void key_sql(void *p)
{
	Perfwatch__V1__SeriesPoint *s = &((wire_point_parts *)p)->sp;
	s->series_key = "chat-8b'); DROP TABLE perfwatch.series;--/hlo:\"x\"/v6e-4/%s%n/tpot_p50_ms";
}
PEDIT(time_far_future, s->measured_unix_us = INT64_MAX)
PEDIT(time_before_1970, s->measured_unix_us = -1)
PEDIT(no_build, s->build = NULL; s->key = NULL)

/* ---- appended raw fields ---- */
WIRE_APPEND_STR(nul_key, 2, "chat-8b\0evil/hlo:1/v6e-4/c/m")
WIRE_APPEND_STR(nul_run, 4, "t1\0x")
WIRE_APPEND_STR(nul_unit, 9, "ms\0")
WIRE_APPEND_STR(nul_job, 17, "\0")
WIRE_APPEND_STR(bad_utf8_key, 2, "f-bad\377utf/hlo:1/v6e-4/c/m")
WIRE_APPEND_STR(bad_utf8_chip, 13, "pinned-\377")
WIRE_APPEND_STR(bad_utf8_cell, 14, "cell-\300")
WIRE_APPEND_STR(bad_utf8_fw, 15, "fw-\200")
WIRE_APPEND_STR(bad_utf8_harness, 16, "perfbench-\xfe")
WIRE_APPEND_STR(bad_utf8_rev, 6, "rev-\xf8\x88\x80\x80\x80")
WIRE_APPEND_STR(overlong_slash, 2, "a\xc0\xaf" "b")
WIRE_APPEND_STR(surrogate, 2, "a\xed\xa0\x80")
WIRE_APPEND_STR(cut_sequence, 2, "abc\xe2\x82")
WIRE_APPEND_STR(above_unicode, 2, "a\xf4\x90\x80\x80")
WIRE_APPEND_STR(second_key, 2, "rank-moe-110b/hlo:2/v5e-8/prefill/ttft_p50_ms")
WIRE_APPEND_STR(emoji_key, 2, "chat-8b-\xf0\x9f\x9a\x80/hlo:1/v6e-4/c/m")
static void bad_utf8_build(wire_buf *b) { wire_nested(b, 7, 1, "xla-\377", 5); } /* build.build_id */
static void nul_platform(wire_buf *b) { wire_nested(b, 3, 3, "v6e\0-4", 6); }   /* key.platform */
static void unknown_field(wire_buf *b)
{
	wire_varint(b, 99u << 3 | 0);
	wire_varint(b, 12345);
	wire_ld(b, 100, "whatever \377 bytes", 17); /* unknown: not a string the door reads */
}
static void wrong_wire_type(wire_buf *b)
{
	wire_varint(b, 2u << 3 | 0); /* series_key as a varint */
	wire_varint(b, 7);
}
static void length_past_end(wire_buf *b)
{
	wire_varint(b, 2u << 3 | 2);
	wire_varint(b, 1000);
	wire_bytes(b, "abc", 3);
}
static void open_group(wire_buf *b) { wire_varint(b, 20u << 3 | 3); }
static void bad_varint(wire_buf *b)
{
	static const uint8_t v[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	wire_bytes(b, v, sizeof v);
}
static void field_zero(wire_buf *b)
{
	wire_varint(b, 0u << 3 | 0);
	wire_varint(b, 1);
}

static const uint8_t text_json[] = "{\"series_key\":\"chat-8b/x\",\"value\":3.9}";

static const door_case cases[] = {
	{"the good point", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* bytes that are not a SeriesPoint */
	{"empty payload (every field at its default)", NULL, NULL, (const uint8_t *)"", 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, 0, R_DECODE, NULL, 0, 0, 0},
	{"JSON instead of protobuf", NULL, NULL, text_json, sizeof text_json - 1, 0, R_DECODE, NULL, 0, 0, 0},
	{"a length prefix past the end", NULL, length_past_end, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"series_key with the varint wire type", NULL, wrong_wire_type, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"a group that never ends", NULL, open_group, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"an 11-byte varint", NULL, bad_varint, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"field number 0", NULL, field_zero, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	/* required fields */
	{"no series_key", no_key, NULL, NULL, 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"series_id 0", id_zero, NULL, NULL, 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"series_id negative", id_negative, NULL, NULL, 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"series_id INT64_MIN", id_min, NULL, NULL, 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"no build and no structured key (still a point)", no_build, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* numbers */
	{"value NaN", value_nan, NULL, NULL, 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"value +inf", value_inf, NULL, NULL, 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"value -inf", value_ninf, NULL, NULL, 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"value 1e308 (finite: the statistics' business)", value_huge, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"value negative (finite)", value_negative, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"value denormal (finite)", value_denormal, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"measured in the year 292277 (ordering only)", time_far_future, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"measured before 1970 (ordering only)", time_before_1970, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* sizes */
	{"series_key of 255 bytes (the cap)", key_255, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, PW_ST_KEY_MAX - 1},
	{"series_key of 256 bytes", key_256, NULL, NULL, 0, 0, R_OVERSIZE, NULL, 0, 0, 0},
	{"series_key of 1 MiB", key_1mb, NULL, NULL, 0, 0, R_OVERSIZE, NULL, 0, 0, 0},
	/* NUL and UTF-8, at any depth */
	{"NUL inside series_key", NULL, nul_key, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL inside run_id", NULL, nul_run, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL at the end of unit", NULL, nul_unit, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"bisect_job_id a lone NUL", NULL, nul_job, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL inside key.platform (nested)", NULL, nul_platform, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xff in series_key", NULL, bad_utf8_key, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xff in chip_set", NULL, bad_utf8_chip, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a lone lead byte in cell", NULL, bad_utf8_cell, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a lone continuation byte in firmware", NULL, bad_utf8_fw, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xfe in harness_version", NULL, bad_utf8_harness, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a 5-byte sequence in model_rev", NULL, bad_utf8_rev, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xff in build.build_id (nested)", NULL, bad_utf8_build, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"overlong '/' (C0 AF)", NULL, overlong_slash, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a UTF-16 surrogate (ED A0 80)", NULL, surrogate, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a sequence cut at the end", NULL, cut_sequence, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"above U+10FFFF", NULL, above_unicode, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	/* let through, unchanged */
	{"SQL and printf metacharacters in series_key", key_sql, NULL, NULL, 0, 0, R_OK_,
	 "chat-8b'); DROP TABLE perfwatch.series;--/hlo:\"x\"/v6e-4/%s%n/tpot_p50_ms", 0, 0, 0},
	{"a 4-byte UTF-8 character in series_key", NULL, emoji_key, NULL, 0, 0, R_OK_,
	 "chat-8b-\xf0\x9f\x9a\x80/hlo:1/v6e-4/c/m", 0, 0, 0},
	{"unknown fields", NULL, unknown_field, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"series_key twice: the last counts", NULL, second_key, NULL, 0, 0, R_OK_,
	 "rank-moe-110b/hlo:2/v5e-8/prefill/ttft_p50_ms", 0, 0, 0},
};

DOOR_FN(point_door, Perfwatch__V1__SeriesPoint, pw_baseliner_point_decode)

static const char *point_key(const ProtobufCMessage *m)
{
	return ((const Perfwatch__V1__SeriesPoint *)m)->series_key;
}

Test(baseliner_door, every_hostile_point_gets_its_reason)
{
	door_cases_run("perf.points.v1", DOOR_TABLE(cases), pack_point, GOOD_KEY, point_door, point_key);
}

/* ================================================= perf.fleet-changes.v1 */

#define GOOD_EVENT "fc-2026-06-15-0007"

static wire_buf pack_fleet(door_edit_fn edit)
{
	static char *platforms[] = {"v6e-4"};
	static char *cells[] = {"cell-mtv5-c12"};
	Perfwatch__V1__FleetChangeEvent fc = PERFWATCH__V1__FLEET_CHANGE_EVENT__INIT;
	fc.event_id = GOOD_EVENT;
	fc.occurred_unix_us = 1781481600000000LL;
	fc.kind = PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_RECABLING;
	fc.reason = "mtv5 row 12 recabled for ICI v2";
	fc.source = "fleet-ops";
	fc.platforms = platforms;
	fc.n_platforms = 1;
	fc.cells = cells;
	fc.n_cells = 1;
	if (edit)
		edit(&fc);
	return wire_pack(&fc.base);
}

#define FEDIT(fn, stmt) DOOR_EDIT(fn, Perfwatch__V1__FleetChangeEvent *f = p, stmt)
FEDIT(f_no_id, f->event_id = "")
static void f_id_len(Perfwatch__V1__FleetChangeEvent *f, size_t n)
{
	static char x[1 << 16];
	memset(x, 'e', n);
	x[n] = 0;
	f->event_id = x;
}
FEDIT(f_id_63, f_id_len(f, 63))
FEDIT(f_id_64, f_id_len(f, 64))
FEDIT(f_id_60k, f_id_len(f, 60000))
static void f_no_selector(void *p)
{
	Perfwatch__V1__FleetChangeEvent *f = p;
	f->n_platforms = 0;
	f->n_cells = 0;
}
static void f_fleet_wide(void *p)
{
	Perfwatch__V1__FleetChangeEvent *f = p;
	f_no_selector(f);
	f->fleet_wide = 1;
}
static void f_only_harness(void *p)
{
	Perfwatch__V1__FleetChangeEvent *f = p;
	static char *h[] = {"perfbench-2.31"};
	f_no_selector(f);
	f->harness_versions = h;
	f->n_harness_versions = 1;
}
static void f_empty_string_selector(void *p)
{
	Perfwatch__V1__FleetChangeEvent *f = p;
	static char *e[] = {""};
	f_no_selector(f);
	f->platforms = e;
	f->n_platforms = 1;
}
static void f_many_platforms(void *p)
{
	Perfwatch__V1__FleetChangeEvent *f = p;
	static char *many[5000];
	for (size_t i = 0; i < 5000; i++)
		many[i] = "v6e-4";
	f->platforms = many;
	f->n_platforms = 5000;
}
static void f_sql(void *p)
{
	Perfwatch__V1__FleetChangeEvent *f = p;
	f->event_id = "fc'); DELETE FROM perfwatch.series;--";
}
static void f_unknown_kind(void *p)
{
	Perfwatch__V1__FleetChangeEvent *f = p;
	f->kind = (Perfwatch__V1__FleetChangeKind)999;
}
FEDIT(f_time_zero, f->occurred_unix_us = 0)
FEDIT(f_time_far, f->occurred_unix_us = INT64_MAX)

WIRE_APPEND_STR(f_bad_utf8_id, 1, "f-bad\377utf") /* issue 19, item 2 */
WIRE_APPEND_STR(f_nul_id, 1, "fc-1\0evil")
WIRE_APPEND_STR(f_nul_reason, 4, "recabled\0")
WIRE_APPEND_STR(f_bad_utf8_reason, 4, "row \xc3\x28")
WIRE_APPEND_STR(f_bad_utf8_source, 5, "ops\xa0")
WIRE_APPEND_STR(f_bad_utf8_platform, 6, "v6e-\xff")
WIRE_APPEND_STR(f_nul_chip, 7, "pinned\0-7")
WIRE_APPEND_STR(f_bad_utf8_cell, 8, "cell-\xe0\x80\xaf")
WIRE_APPEND_STR(f_surrogate_fw, 9, "fw-\xed\xbf\xbf")
WIRE_APPEND_STR(f_cut_harness, 10, "perfbench-\xf0\x9f\x9a")
WIRE_APPEND_STR(f_bad_utf8_from, 11, "1.0\xff")
WIRE_APPEND_STR(f_nul_to, 12, "2.0\0")
WIRE_APPEND_STR(f_second_id, 1, "fc-2026-06-16-0001")
static void f_time_as_string(wire_buf *b) { wire_ld(b, 2, "yesterday", 9); }
static void f_wrong_wire_type(wire_buf *b)
{
	wire_varint(b, 1u << 3 | 0); /* event_id as a varint */
	wire_varint(b, 7);
}

static const door_case fcases[] = {
	{"the good event", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* not a FleetChangeEvent */
	{"empty payload (no event_id)", NULL, NULL, (const uint8_t *)"", 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, 0, R_DECODE, NULL, 0, 0, 0},
	{"JSON instead of protobuf", NULL, NULL, text_json, sizeof text_json - 1, 0, R_DECODE, NULL, 0, 0, 0},
	{"a length prefix past the end", NULL, length_past_end, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"event_id with the varint wire type", NULL, f_wrong_wire_type, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"occurred_unix_us as a string", NULL, f_time_as_string, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"a group that never ends", NULL, open_group, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"an 11-byte varint", NULL, bad_varint, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"field number 0", NULL, field_zero, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	/* the event id */
	{"no event_id", f_no_id, NULL, NULL, 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"event_id of 63 bytes (the cap)", f_id_63, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 63},
	{"event_id of 64 bytes", f_id_64, NULL, NULL, 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"event_id of 60 kB", f_id_60k, NULL, NULL, 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"event_id twice: the last counts", NULL, f_second_id, NULL, 0, 0, R_OK_, "fc-2026-06-16-0001", 0, 0, 0},
	/* scope */
	{"no selector (would freeze every series)", f_no_selector, NULL, NULL, 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"no selector but fleet_wide (said loudly)", f_fleet_wide, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"only a harness selector", f_only_harness, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a selector of one empty string", f_empty_string_selector, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"5000 platforms", f_many_platforms, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* NUL and UTF-8 in every string field, lists included */
	{"0xff in event_id (f-bad\\377utf)", NULL, f_bad_utf8_id, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL inside event_id", NULL, f_nul_id, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL at the end of reason", NULL, f_nul_reason, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a bad continuation in reason", NULL, f_bad_utf8_reason, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a lone continuation byte in source", NULL, f_bad_utf8_source, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xff in a platform", NULL, f_bad_utf8_platform, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL inside a chip set", NULL, f_nul_chip, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"an overlong '/' in a cell", NULL, f_bad_utf8_cell, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a surrogate in firmware", NULL, f_surrogate_fw, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a cut sequence in a harness version", NULL, f_cut_harness, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xff in from_version", NULL, f_bad_utf8_from, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL at the end of to_version", NULL, f_nul_to, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	/* let through */
	{"SQL metacharacters in event_id", f_sql, NULL, NULL, 0, 0, R_OK_, "fc'); DELETE FROM perfwatch.series;--", 0,
	 0, 0},
	{"a kind this build does not know", f_unknown_kind, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"occurred at 0", f_time_zero, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"occurred in the year 292277", f_time_far, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"unknown fields", NULL, unknown_field, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
};

/* the door, and that an accepted event was counted (identified) */
static Perfwatch__V1__DlqReason fleet_door(const uint8_t *buf, size_t len, ProtobufCMessage **out,
                                           bool *skip, char *detail, size_t detail_len)
{
	(void)skip;
	Perfwatch__V1__FleetChangeEvent *fc = (Perfwatch__V1__FleetChangeEvent *)*out;
	bool identified = false;
	Perfwatch__V1__DlqReason r =
		pw_baseliner_fleet_decode(buf, len, &fc, &identified, detail, detail_len);
	cr_expect(r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED || identified,
	          "an accepted fleet change was not counted");
	*out = (ProtobufCMessage *)fc;
	return r;
}

static const char *fleet_id(const ProtobufCMessage *m)
{
	return ((const Perfwatch__V1__FleetChangeEvent *)m)->event_id;
}

Test(baseliner_door, every_hostile_fleet_change_gets_its_reason)
{
	door_cases_run("perf.fleet-changes.v1", DOOR_TABLE(fcases), pack_fleet, GOOD_EVENT, fleet_door, fleet_id);
}
