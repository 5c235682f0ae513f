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
#include "series_table.h"

#define R_OK_ PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED
#define R_DECODE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED
#define R_MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
#define R_OVERSIZE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE

#define GOOD_KEY "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"


/* the good point, with an edit applied to the struct before packing */
typedef void (*edit_fn)(Perfwatch__V1__SeriesPoint *sp, char *scratch);

static wire_buf pack_point(edit_fn edit)
{
	static char scratch[1 << 20];
	Perfwatch__V1__SeriesKey key = PERFWATCH__V1__SERIES_KEY__INIT;
	key.model = "chat-8b";
	key.hlo_fingerprint = "hlo:9f31c2ab";
	key.platform = "v6e-4";
	key.config = "decode.B64.s2048.int8";
	key.metric = "tpot_p50_ms";
	Perfwatch__V1__CompilerBuild cb = PERFWATCH__V1__COMPILER_BUILD__INIT;
	cb.build_id = "xla-nightly-2026-06-16";
	cb.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_NIGHTLY;
	cb.cl = "cl/7841885";
	cb.cl_number = 7841885;
	Perfwatch__V1__SeriesPoint sp = PERFWATCH__V1__SERIES_POINT__INIT;
	sp.series_id = 412;
	sp.series_key = GOOD_KEY;
	sp.key = &key;
	sp.run_id = "t1-00412";
	sp.repeat_index = 3;
	sp.build = &cb;
	sp.value = 3.91;
	sp.unit = "ms";
	sp.measured_unix_us = 1781568000000000LL;
	sp.chip_set = "pinned-7";
	sp.cell = "cell-mtv5-c12";
	sp.firmware = "tpufw-2026.05.2";
	sp.harness_version = "perfbench-2.31";
	if (edit)
		edit(&sp, scratch);
	return wire_pack(&sp.base);
}

/* ---- struct edits ---- */
static void no_key(Perfwatch__V1__SeriesPoint *s, char *x) { (void)x; s->series_key = ""; }
static void id_zero(Perfwatch__V1__SeriesPoint *s, char *x) { (void)x; s->series_id = 0; }
static void id_negative(Perfwatch__V1__SeriesPoint *s, char *x) { (void)x; s->series_id = -7; }
static void id_min(Perfwatch__V1__SeriesPoint *s, char *x) { (void)x; s->series_id = INT64_MIN; }
static void value_nan(Perfwatch__V1__SeriesPoint *s, char *x) { (void)x; s->value = NAN; }
static void value_inf(Perfwatch__V1__SeriesPoint *s, char *x) { (void)x; s->value = INFINITY; }
static void value_ninf(Perfwatch__V1__SeriesPoint *s, char *x) { (void)x; s->value = -INFINITY; }
static void value_huge(Perfwatch__V1__SeriesPoint *s, char *x) { (void)x; s->value = 1e308; }
static void value_negative(Perfwatch__V1__SeriesPoint *s, char *x) { (void)x; s->value = -3.91; }
static void value_denormal(Perfwatch__V1__SeriesPoint *s, char *x) { (void)x; s->value = 4.9e-324; }
static void key_len(Perfwatch__V1__SeriesPoint *s, char *x, size_t n)
{
	memset(x, 'k', n);
	x[n] = 0;
	s->series_key = x;
}
static void key_255(Perfwatch__V1__SeriesPoint *s, char *x) { key_len(s, x, PW_ST_KEY_MAX - 1); }
static void key_256(Perfwatch__V1__SeriesPoint *s, char *x) { key_len(s, x, PW_ST_KEY_MAX); }
static void key_1mb(Perfwatch__V1__SeriesPoint *s, char *x) { key_len(s, x, (1 << 20) - 1); }
static void key_sql(Perfwatch__V1__SeriesPoint *s, char *x)
{
	(void)x;
	s->series_key = "chat-8b'); DROP TABLE perfwatch.series;--/hlo:\"x\"/v6e-4/%s%n/tpot_p50_ms";
}
static void time_far_future(Perfwatch__V1__SeriesPoint *s, char *x) { (void)x; s->measured_unix_us = INT64_MAX; }
static void time_before_1970(Perfwatch__V1__SeriesPoint *s, char *x) { (void)x; s->measured_unix_us = -1; }
static void no_build(Perfwatch__V1__SeriesPoint *s, char *x) { (void)x; s->build = NULL; s->key = NULL; }

typedef struct kase {
	const char *name;
	edit_fn edit;                           /* NULL: the good point */
	void (*append)(wire_buf *b);                 /* raw bytes after the good payload; NULL: none */
	const uint8_t *raw;                     /* instead of the point: these bytes */
	size_t raw_len;
	Perfwatch__V1__DlqReason want;
	const char *want_key;                   /* R_OK_: the key that must come out (NULL: GOOD_KEY) */
} kase;

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
static void bad_utf8_build(wire_buf *b)
{
	wire_buf in = {0};
	wire_ld(&in, 1, "xla-\377", 5); /* CompilerBuild.build_id */
	wire_ld(b, 7, in.p, in.n);
	free(in.p);
}
static void nul_platform(wire_buf *b)
{
	wire_buf in = {0};
	wire_ld(&in, 3, "v6e\0-4", 6); /* SeriesKey.platform */
	wire_ld(b, 3, in.p, in.n);
	free(in.p);
}
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

static const kase cases[] = {
	{"the good point", NULL, NULL, NULL, 0, R_OK_, NULL},
	/* bytes that are not a SeriesPoint */
	{"empty payload (every field at its default)", NULL, NULL, (const uint8_t *)"", 0, R_MISSING, NULL},
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, R_DECODE, NULL},
	{"JSON instead of protobuf", NULL, NULL, text_json, sizeof text_json - 1, R_DECODE, NULL},
	{"a length prefix past the end", NULL, length_past_end, NULL, 0, R_DECODE, NULL},
	{"series_key with the varint wire type", NULL, wrong_wire_type, NULL, 0, R_DECODE, NULL},
	{"a group that never ends", NULL, open_group, NULL, 0, R_DECODE, NULL},
	{"an 11-byte varint", NULL, bad_varint, NULL, 0, R_DECODE, NULL},
	{"field number 0", NULL, field_zero, NULL, 0, R_DECODE, NULL},
	/* required fields */
	{"no series_key", no_key, NULL, NULL, 0, R_MISSING, NULL},
	{"series_id 0", id_zero, NULL, NULL, 0, R_MISSING, NULL},
	{"series_id negative", id_negative, NULL, NULL, 0, R_MISSING, NULL},
	{"series_id INT64_MIN", id_min, NULL, NULL, 0, R_MISSING, NULL},
	{"no build and no structured key (still a point)", no_build, NULL, NULL, 0, R_OK_, NULL},
	/* numbers */
	{"value NaN", value_nan, NULL, NULL, 0, R_MISSING, NULL},
	{"value +inf", value_inf, NULL, NULL, 0, R_MISSING, NULL},
	{"value -inf", value_ninf, NULL, NULL, 0, R_MISSING, NULL},
	{"value 1e308 (finite: the statistics' business)", value_huge, NULL, NULL, 0, R_OK_, NULL},
	{"value negative (finite)", value_negative, NULL, NULL, 0, R_OK_, NULL},
	{"value denormal (finite)", value_denormal, NULL, NULL, 0, R_OK_, NULL},
	{"measured in the year 292277 (ordering only)", time_far_future, NULL, NULL, 0, R_OK_, NULL},
	{"measured before 1970 (ordering only)", time_before_1970, NULL, NULL, 0, R_OK_, NULL},
	/* sizes */
	{"series_key of 255 bytes (the cap)", key_255, NULL, NULL, 0, R_OK_, "k"},
	{"series_key of 256 bytes", key_256, NULL, NULL, 0, R_OVERSIZE, NULL},
	{"series_key of 1 MiB", key_1mb, NULL, NULL, 0, R_OVERSIZE, NULL},
	/* NUL and UTF-8, at any depth */
	{"NUL inside series_key", NULL, nul_key, NULL, 0, R_INVALID, NULL},
	{"NUL inside run_id", NULL, nul_run, NULL, 0, R_INVALID, NULL},
	{"NUL at the end of unit", NULL, nul_unit, NULL, 0, R_INVALID, NULL},
	{"bisect_job_id a lone NUL", NULL, nul_job, NULL, 0, R_INVALID, NULL},
	{"NUL inside key.platform (nested)", NULL, nul_platform, NULL, 0, R_INVALID, NULL},
	{"0xff in series_key", NULL, bad_utf8_key, NULL, 0, R_INVALID, NULL},
	{"0xff in chip_set", NULL, bad_utf8_chip, NULL, 0, R_INVALID, NULL},
	{"a lone lead byte in cell", NULL, bad_utf8_cell, NULL, 0, R_INVALID, NULL},
	{"a lone continuation byte in firmware", NULL, bad_utf8_fw, NULL, 0, R_INVALID, NULL},
	{"0xfe in harness_version", NULL, bad_utf8_harness, NULL, 0, R_INVALID, NULL},
	{"a 5-byte sequence in model_rev", NULL, bad_utf8_rev, NULL, 0, R_INVALID, NULL},
	{"0xff in build.build_id (nested)", NULL, bad_utf8_build, NULL, 0, R_INVALID, NULL},
	{"overlong '/' (C0 AF)", NULL, overlong_slash, NULL, 0, R_INVALID, NULL},
	{"a UTF-16 surrogate (ED A0 80)", NULL, surrogate, NULL, 0, R_INVALID, NULL},
	{"a sequence cut at the end", NULL, cut_sequence, NULL, 0, R_INVALID, NULL},
	{"above U+10FFFF", NULL, above_unicode, NULL, 0, R_INVALID, NULL},
	/* let through, unchanged */
	{"SQL and printf metacharacters in series_key", key_sql, NULL, NULL, 0, R_OK_,
	 "chat-8b'); DROP TABLE perfwatch.series;--/hlo:\"x\"/v6e-4/%s%n/tpot_p50_ms"},
	{"a 4-byte UTF-8 character in series_key", NULL, emoji_key, NULL, 0, R_OK_,
	 "chat-8b-\xf0\x9f\x9a\x80/hlo:1/v6e-4/c/m"},
	{"unknown fields", NULL, unknown_field, NULL, 0, R_OK_, NULL},
	{"series_key twice: the last counts", NULL, second_key, NULL, 0, R_OK_,
	 "rank-moe-110b/hlo:2/v5e-8/prefill/ttft_p50_ms"},
};
#define NCASES (sizeof cases / sizeof cases[0])

static wire_buf point_case(size_t i, door_expect *e)
{
	const kase *c = &cases[i];
	bool cap = c->want_key && strcmp(c->want_key, "k") == 0;
	*e = (door_expect){c->name, c->want, false, c->want_key ? c->want_key : GOOD_KEY,
	                   cap ? PW_ST_KEY_MAX - 1 : 0};
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

DOOR_FN(point_door, Perfwatch__V1__SeriesPoint, pw_baseliner_point_decode)

static const char *point_key(const ProtobufCMessage *m)
{
	return ((const Perfwatch__V1__SeriesPoint *)m)->series_key;
}

Test(baseliner_door, every_hostile_point_gets_its_reason)
{
	door_run("perf.points.v1", NCASES, point_case, point_door, point_key);
}

/* ================================================= perf.fleet-changes.v1 */

#define GOOD_EVENT "fc-2026-06-15-0007"

typedef void (*fedit_fn)(Perfwatch__V1__FleetChangeEvent *fc, char *scratch);

static wire_buf pack_fleet(fedit_fn edit)
{
	static char scratch[1 << 16];
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
		edit(&fc, scratch);
	return wire_pack(&fc.base);
}

static void f_no_id(Perfwatch__V1__FleetChangeEvent *f, char *x) { (void)x; f->event_id = ""; }
static void f_id_len(Perfwatch__V1__FleetChangeEvent *f, char *x, size_t n)
{
	memset(x, 'e', n);
	x[n] = 0;
	f->event_id = x;
}
static void f_id_63(Perfwatch__V1__FleetChangeEvent *f, char *x) { f_id_len(f, x, 63); }
static void f_id_64(Perfwatch__V1__FleetChangeEvent *f, char *x) { f_id_len(f, x, 64); }
static void f_id_60k(Perfwatch__V1__FleetChangeEvent *f, char *x) { f_id_len(f, x, 60000); }
static void f_no_selector(Perfwatch__V1__FleetChangeEvent *f, char *x)
{
	(void)x;
	f->n_platforms = 0;
	f->n_cells = 0;
}
static void f_fleet_wide(Perfwatch__V1__FleetChangeEvent *f, char *x)
{
	f_no_selector(f, x);
	f->fleet_wide = 1;
}
static void f_only_harness(Perfwatch__V1__FleetChangeEvent *f, char *x)
{
	static char *h[] = {"perfbench-2.31"};
	f_no_selector(f, x);
	f->harness_versions = h;
	f->n_harness_versions = 1;
}
static void f_empty_string_selector(Perfwatch__V1__FleetChangeEvent *f, char *x)
{
	static char *e[] = {""};
	f_no_selector(f, x);
	f->platforms = e;
	f->n_platforms = 1;
}
static void f_many_platforms(Perfwatch__V1__FleetChangeEvent *f, char *x)
{
	static char *many[5000];
	(void)x;
	for (size_t i = 0; i < 5000; i++)
		many[i] = "v6e-4";
	f->platforms = many;
	f->n_platforms = 5000;
}
static void f_sql(Perfwatch__V1__FleetChangeEvent *f, char *x)
{
	(void)x;
	f->event_id = "fc'); DELETE FROM perfwatch.series;--";
}
static void f_unknown_kind(Perfwatch__V1__FleetChangeEvent *f, char *x)
{
	(void)x;
	f->kind = (Perfwatch__V1__FleetChangeKind)999;
}
static void f_time_zero(Perfwatch__V1__FleetChangeEvent *f, char *x) { (void)x; f->occurred_unix_us = 0; }
static void f_time_far(Perfwatch__V1__FleetChangeEvent *f, char *x) { (void)x; f->occurred_unix_us = INT64_MAX; }

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

typedef struct fkase {
	const char *name;
	fedit_fn edit;
	void (*append)(wire_buf *b);
	const uint8_t *raw;
	size_t raw_len;
	Perfwatch__V1__DlqReason want;
	const char *want_id; /* R_OK_: the event_id that must come out (NULL: GOOD_EVENT) */
} fkase;

static const fkase fcases[] = {
	{"the good event", NULL, NULL, NULL, 0, R_OK_, NULL},
	/* not a FleetChangeEvent */
	{"empty payload (no event_id)", NULL, NULL, (const uint8_t *)"", 0, R_MISSING, NULL},
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, R_DECODE, NULL},
	{"JSON instead of protobuf", NULL, NULL, text_json, sizeof text_json - 1, R_DECODE, NULL},
	{"a length prefix past the end", NULL, length_past_end, NULL, 0, R_DECODE, NULL},
	{"event_id with the varint wire type", NULL, f_wrong_wire_type, NULL, 0, R_DECODE, NULL},
	{"occurred_unix_us as a string", NULL, f_time_as_string, NULL, 0, R_DECODE, NULL},
	{"a group that never ends", NULL, open_group, NULL, 0, R_DECODE, NULL},
	{"an 11-byte varint", NULL, bad_varint, NULL, 0, R_DECODE, NULL},
	{"field number 0", NULL, field_zero, NULL, 0, R_DECODE, NULL},
	/* the event id */
	{"no event_id", f_no_id, NULL, NULL, 0, R_MISSING, NULL},
	{"event_id of 63 bytes (the cap)", f_id_63, NULL, NULL, 0, R_OK_, "e63"},
	{"event_id of 64 bytes", f_id_64, NULL, NULL, 0, R_MISSING, NULL},
	{"event_id of 60 kB", f_id_60k, NULL, NULL, 0, R_MISSING, NULL},
	{"event_id twice: the last counts", NULL, f_second_id, NULL, 0, R_OK_, "fc-2026-06-16-0001"},
	/* scope */
	{"no selector (would freeze every series)", f_no_selector, NULL, NULL, 0, R_MISSING, NULL},
	{"no selector but fleet_wide (said loudly)", f_fleet_wide, NULL, NULL, 0, R_OK_, NULL},
	{"only a harness selector", f_only_harness, NULL, NULL, 0, R_OK_, NULL},
	{"a selector of one empty string", f_empty_string_selector, NULL, NULL, 0, R_OK_, NULL},
	{"5000 platforms", f_many_platforms, NULL, NULL, 0, R_OK_, NULL},
	/* NUL and UTF-8 in every string field, lists included */
	{"0xff in event_id (f-bad\\377utf)", NULL, f_bad_utf8_id, NULL, 0, R_INVALID, NULL},
	{"NUL inside event_id", NULL, f_nul_id, NULL, 0, R_INVALID, NULL},
	{"NUL at the end of reason", NULL, f_nul_reason, NULL, 0, R_INVALID, NULL},
	{"a bad continuation in reason", NULL, f_bad_utf8_reason, NULL, 0, R_INVALID, NULL},
	{"a lone continuation byte in source", NULL, f_bad_utf8_source, NULL, 0, R_INVALID, NULL},
	{"0xff in a platform", NULL, f_bad_utf8_platform, NULL, 0, R_INVALID, NULL},
	{"NUL inside a chip set", NULL, f_nul_chip, NULL, 0, R_INVALID, NULL},
	{"an overlong '/' in a cell", NULL, f_bad_utf8_cell, NULL, 0, R_INVALID, NULL},
	{"a surrogate in firmware", NULL, f_surrogate_fw, NULL, 0, R_INVALID, NULL},
	{"a cut sequence in a harness version", NULL, f_cut_harness, NULL, 0, R_INVALID, NULL},
	{"0xff in from_version", NULL, f_bad_utf8_from, NULL, 0, R_INVALID, NULL},
	{"NUL at the end of to_version", NULL, f_nul_to, NULL, 0, R_INVALID, NULL},
	/* let through */
	{"SQL metacharacters in event_id", f_sql, NULL, NULL, 0, R_OK_, "fc'); DELETE FROM perfwatch.series;--"},
	{"a kind this build does not know", f_unknown_kind, NULL, NULL, 0, R_OK_, NULL},
	{"occurred at 0", f_time_zero, NULL, NULL, 0, R_OK_, NULL},
	{"occurred in the year 292277", f_time_far, NULL, NULL, 0, R_OK_, NULL},
	{"unknown fields", NULL, unknown_field, NULL, 0, R_OK_, NULL},
};
#define NFCASES (sizeof fcases / sizeof fcases[0])

static wire_buf fleet_case(size_t i, door_expect *e)
{
	const fkase *c = &fcases[i];
	bool cap = c->want_id && strcmp(c->want_id, "e63") == 0;
	*e = (door_expect){c->name, c->want, false, c->want_id ? c->want_id : GOOD_EVENT, cap ? 63 : 0};
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
	door_run("perf.fleet-changes.v1", NFCASES, fleet_case, fleet_door, fleet_id);
}
