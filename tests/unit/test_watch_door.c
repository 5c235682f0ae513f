/*
 * test_watch_door.c: the doors of the watcher's input topics
 * (services/watcher/watch_door.h: pw_watch_point_decode for perf.points.v1,
 * pw_watch_fleet_decode for perf.fleet-changes.v1, pw_watch_baseline_decode
 * for perf.baselines.v1), each on a table of hostile payloads with the
 * DlqReason every one must get; for what must pass, whether the watcher takes
 * it or skips it (points of other builds, baseline tombstones), and the key
 * or id that must come out unchanged; then random mutations of a good message
 * of each. The tables run on door_table.h.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pw_input.h"
#include "watch_door.h"
#include "door_table.h"

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

static wire_buf pack_point(door_edit_fn edit)
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
	return wire_pack(&q.sp.base);
}

#define PEDIT(fn, stmt) DOOR_EDIT(fn, point_parts *q = p, stmt)
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

static const door_case pcases[] = {
	{"the good point", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"empty payload (no build: not a nightly)", NULL, NULL, (const uint8_t *)"", 0, 0, R_OK_, NULL, 1, 0, 0},
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, 0, R_DECODE, NULL, 0, 0, 0},
	{"series_key as a varint", NULL, p_key_varint, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"value as a string", NULL, p_value_ld, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"a length prefix past the end", NULL, p_past_end, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"a group that never ends", NULL, p_group, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"no series_key", p_no_key, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"no build id", p_no_build_id, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"value NaN", p_nan, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"value +inf", p_inf, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"value -inf", p_ninf, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"value -1e308 (finite)", p_huge, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"no build at all", p_no_build, NULL, NULL, 0, 0, R_OK_, NULL, 1, 0, 0},
	{"an RC build", p_rc, NULL, NULL, 0, 0, R_OK_, NULL, 1, 0, 0},
	{"a release build", p_release, NULL, NULL, 0, 0, R_OK_, NULL, 1, 0, 0},
	{"a build kind this build does not know", p_kind_unknown, NULL, NULL, 0, 0, R_OK_, NULL, 1, 0, 0},
	{"a bisection job's run", p_bisect_job, NULL, NULL, 0, 0, R_OK_, NULL, 1, 0, 0},
	{"a bisection job's NaN (not the watcher's)", p_bisect_nan, NULL, NULL, 0, 0, R_OK_, NULL, 1, 0, 0},
	{"NUL inside series_key", NULL, p_nul_key, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL inside run_id", NULL, p_nul_run, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xff in series_key", NULL, p_ff_key, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xff in chip_set", NULL, p_ff_chip, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a lone lead byte in cell", NULL, p_lead_cell, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a lone continuation byte in firmware", NULL, p_cont_fw, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"an overlong '/' in series_key", NULL, p_overlong, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a surrogate in harness_version", NULL, p_surrogate, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a cut sequence in unit", NULL, p_cut, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"above U+10FFFF in bisect_job_id", NULL, p_above, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xff in build.build_id (nested)", NULL, p_nested_build, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL in key.platform (nested)", NULL, p_nested_key, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"SQL metacharacters in series_key", p_sql, NULL, NULL, 0, 0, R_OK_,
	 "chat-8b'); DROP TABLE perfwatch.series;--/h/p/c/m", 0, 0, 0},
	{"measured in the year 292277", p_far_future, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"series_id negative (the watcher keys on the text)", p_id_negative, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"unknown fields", NULL, p_unknown, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"series_key twice: the last counts", NULL, p_second_key, NULL, 0, 0, R_OK_, "rank-moe-110b/h/p/c/m", 0, 0, 0},
};

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
	door_cases_run("watcher perf.points.v1", DOOR_TABLE(pcases), pack_point, GOOD_KEY, point_door, point_key);
}

/* ================================================= perf.fleet-changes.v1 */

static wire_buf pack_fleet(door_edit_fn edit)
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
	return wire_pack(&fc.base);
}

#define FEDIT(fn, stmt) DOOR_EDIT(fn, Perfwatch__V1__FleetChangeEvent *f = p, stmt)
FEDIT(f_no_id, f->event_id = "")
FEDIT(f_no_time, f->occurred_unix_us = 0)
FEDIT(f_no_selector, f->n_platforms = 0)
FEDIT(f_fleet_wide, (f->n_platforms = 0, f->fleet_wide = 1))
FEDIT(f_negative_time, f->occurred_unix_us = -1)
FEDIT(f_far_time, f->occurred_unix_us = INT64_MAX)
FEDIT(f_sql, f->event_id = "fc'); DELETE FROM perfwatch.series;--")
FEDIT(f_kind_unknown, f->kind = (Perfwatch__V1__FleetChangeKind)999)
static void f_long_id(void *p)
{
	Perfwatch__V1__FleetChangeEvent *f = p;
	static char big[60001];
	memset(big, 'e', 60000);
	f->event_id = big;
}
static void f_many(void *p)
{
	Perfwatch__V1__FleetChangeEvent *f = p;
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

static const door_case fcases[] = {
	{"the good event", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"empty payload", NULL, NULL, (const uint8_t *)"", 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, 0, R_DECODE, NULL, 0, 0, 0},
	{"event_id as a varint", NULL, f_id_varint, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"occurred_unix_us as a string", NULL, f_time_ld, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"a length prefix past the end", NULL, f_past_end, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"no event_id", f_no_id, NULL, NULL, 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"no time", f_no_time, NULL, NULL, 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"no selector (would select every series)", f_no_selector, NULL, NULL, 0, 0, R_MISSING, NULL, 0, 0, 0},
	{"no selector but fleet_wide", f_fleet_wide, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"0xff in event_id (f-bad\\377utf)", NULL, f_ff_id, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL inside event_id", NULL, f_nul_id, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL at the end of reason", NULL, f_nul_reason, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a bad continuation in reason", NULL, f_bad_reason, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a lone continuation byte in source", NULL, f_cont_source, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xff in a platform", NULL, f_ff_platform, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL inside a chip set", NULL, f_nul_chip, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"an overlong '/' in a cell", NULL, f_overlong_cell, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a surrogate in firmware", NULL, f_surrogate_fw, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a cut sequence in a harness version", NULL, f_cut_harness, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xff in from_version", NULL, f_ff_from, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL at the end of to_version", NULL, f_nul_to, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"occurred before 1970 (ordering only)", f_negative_time, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"occurred in the year 292277", f_far_time, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a 60 kB event_id (PostgreSQL's to refuse: processing_failed)", f_long_id, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0,
	 60000},
	{"5000 cells", f_many, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"SQL metacharacters in event_id", f_sql, NULL, NULL, 0, 0, R_OK_, "fc'); DELETE FROM perfwatch.series;--", 0,
	 0, 0},
	{"a kind this build does not know", f_kind_unknown, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"unknown fields", NULL, f_unknown, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"event_id twice: the last counts", NULL, f_second_id, NULL, 0, 0, R_OK_, "fc-2026-06-16-0001", 0, 0, 0},
};

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
	door_cases_run("watcher perf.fleet-changes.v1", DOOR_TABLE(fcases), pack_fleet, GOOD_EVENT, fleet_door,
	               fleet_id);
}

/* =================================================== perf.baselines.v1 */

typedef struct baseline_parts {
	Perfwatch__V1__Baseline b;
	Perfwatch__V1__SeriesKey key;
} baseline_parts;

/* A frozen series as the baseliner publishes it: the fleet change's event id, no window. */
static wire_buf pack_baseline(door_edit_fn edit)
{
	static baseline_parts q;
	perfwatch__v1__series_key__init(&q.key);
	q.key.model = "chat-8b";
	q.key.hlo_fingerprint = "hlo:9f31c2ab";
	q.key.platform = "v6e-4";
	q.key.config = "decode.B64.s2048.int8";
	q.key.metric = "tpot_p50_ms";
	perfwatch__v1__baseline__init(&q.b);
	q.b.series_id = 412;
	q.b.series_key = GOOD_KEY;
	q.b.key = &q.key;
	q.b.version = 3;
	q.b.state = PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_FROZEN;
	q.b.median = 3.91;
	q.b.mad_n = 0.04;
	q.b.band_lo = 3.79;
	q.b.band_hi = 4.03;
	q.b.sigma = 0.04;
	q.b.sigma_pct = 1.02;
	q.b.platform_norm_sigma_pct = 1.5;
	q.b.unit = "ms";
	q.b.build_id = "xla-2026-06-10";
	q.b.freeze_reason = "recabling: mtv5 row 12 recabled";
	q.b.freeze_event_id = GOOD_EVENT;
	q.b.computed_unix_us = 1781568000000000LL;
	if (edit)
		edit(&q);
	return wire_pack(&q.b.base);
}

#define BEDIT(fn, stmt) DOOR_EDIT(fn, baseline_parts *q = p, stmt)
/* what a valid baseliner sends besides a frozen series */
BEDIT(b_baselining, (q->b.state = PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_BASELINING,
                     q->b.version = 0, q->b.median = q->b.mad_n = q->b.sigma = 0, q->b.n = 3,
                     q->b.freeze_reason = "", q->b.freeze_event_id = ""))
BEDIT(b_active, (q->b.state = PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_ACTIVE, q->b.n = 40,
                 q->b.days = 9, q->b.chip_sets = 4, q->b.freeze_reason = "",
                 q->b.freeze_event_id = ""))
BEDIT(b_quarantined, (q->b.state = PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_QUARANTINED,
                      q->b.sigma_pct = 4.2, q->b.freeze_reason = "sigma 4.2% > 2 x platform 1.5%",
                      q->b.freeze_event_id = ""))
BEDIT(b_frozen_no_event, q->b.freeze_event_id = "")
BEDIT(b_active_stale_event, q->b.state = PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_ACTIVE)
BEDIT(b_no_key, q->b.series_key = "")
BEDIT(b_no_state, q->b.state = PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_UNSPECIFIED)
BEDIT(b_state_42, q->b.state = (Perfwatch__V1__BaselineState)42)
BEDIT(b_state_neg, q->b.state = (Perfwatch__V1__BaselineState)-1)
BEDIT(b_key_255, q->b.series_key = (char *)wire_letters('k', PW_SERIES_KEY_MAX - 1))
BEDIT(b_key_256, q->b.series_key = (char *)wire_letters('k', PW_SERIES_KEY_MAX))
BEDIT(b_key_60k, q->b.series_key = (char *)wire_letters('k', 60000))
BEDIT(b_event_63, q->b.freeze_event_id = (char *)wire_letters('e', 63))
BEDIT(b_event_64, q->b.freeze_event_id = (char *)wire_letters('e', 64))
BEDIT(b_event_60k, q->b.freeze_event_id = (char *)wire_letters('e', 60000))
BEDIT(b_reason_60k, q->b.freeze_reason = (char *)wire_letters('r', 60000))
BEDIT(b_median_nan, (q->b.median = NAN, q->b.sigma_pct = NAN))
BEDIT(b_band_inf, (q->b.band_lo = -INFINITY, q->b.band_hi = INFINITY, q->b.mad_n = INFINITY))
BEDIT(b_huge, (q->b.median = -1e308, q->b.sigma = 1e308))
BEDIT(b_version_0, q->b.version = 0)
BEDIT(b_version_max, q->b.version = UINT32_MAX)
BEDIT(b_far_future, (q->b.computed_unix_us = INT64_MAX, q->b.window_end_unix_us = INT64_MAX))
BEDIT(b_far_past, (q->b.computed_unix_us = INT64_MIN, q->b.window_start_unix_us = INT64_MIN))
BEDIT(b_id_negative, q->b.series_id = -1)
BEDIT(b_sql_key, q->b.series_key = "chat-8b'); DROP TABLE perfwatch.baselines;--/h/p/c/m")
BEDIT(b_sql_event, q->b.freeze_event_id = "fc' OR '1'='1")
BEDIT(b_other_key, q->key.model = "rank-moe-110b")

WIRE_APPEND_STR(b_nul_key, 2, "chat-8b\0evil/h/p/c/m")
WIRE_APPEND_STR(b_nul_event, 21, "fc-1\0fc-2")
WIRE_APPEND_STR(b_ff_key, 2, "chat-\377/h/p/c/m")
WIRE_APPEND_STR(b_overlong_event, 21, "fc\xc0\xaf" "1")
WIRE_APPEND_STR(b_surrogate_reason, 20, "frozen \xed\xa0\x80")
WIRE_APPEND_STR(b_cut_unit, 18, "m\xe2\x82")
WIRE_APPEND_STR(b_cont_build, 19, "xla-\x80")
WIRE_APPEND_STR(b_second_key, 2, "rank-moe-110b/h/p/c/m")
static void b_nested_platform(wire_buf *b) { wire_nested(b, 3, 3, "v6e\0-4", 6); }
static void b_nested_model(wire_buf *b) { wire_nested(b, 3, 1, "chat-\377", 6); }
static void b_key_varint(wire_buf *b) { wire_int(b, 2, 7); }
static void b_median_ld(wire_buf *b) { wire_ld(b, 6, "3.91", 4); }
static void b_state_ld(wire_buf *b) { wire_ld(b, 5, "FROZEN", 6); }
static void b_past_end(wire_buf *b) { wire_past_end(b, 21); }
static void b_group(wire_buf *b) { wire_varint(b, 30u << 3 | 3); }
static void b_unknown(wire_buf *b) { wire_int(b, 99, 12345); }
/* a later occurrence wins: these override the good message's state */
static void b_state_then_0(wire_buf *b) { wire_int(b, 5, 0); }
static void b_state_then_active(wire_buf *b) { wire_int(b, 5, 2); }
static void b_state_then_7(wire_buf *b) { wire_int(b, 5, 7); }
/* truncated: inside series_key, and after the first tag */
static void b_cut_in_key(wire_buf *b) { b->n = 10; }
static void b_cut_to_tag(wire_buf *b) { b->n = 1; }
/* n is a uint32: minus one as a ten-byte varint */
static void b_n_negative(wire_buf *b) { wire_int(b, 13, UINT64_MAX); }

static const uint8_t b_only_unknown[] = {0x98, 0x06, 0x01}; /* field 99 = 1, nothing known */

static const door_case bcases[] = {
	{"the good baseline (frozen, with its event id)", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a baselining series, version 0", b_baselining, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"an active series", b_active, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a quarantined series (a reason, no event)", b_quarantined, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"frozen with no event id (the proto allows it)", b_frozen_no_event, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"active with a stale event id (not read)", b_active_stale_event, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"empty payload (a compaction tombstone)", NULL, NULL, (const uint8_t *)"", 0, 0, R_OK_, NULL, 1, 0, 0},
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, 0, R_DECODE, "perfwatch.v1.Baseline", 0, 0, 0},
	{"cut inside series_key", NULL, b_cut_in_key, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"cut after the first tag", NULL, b_cut_to_tag, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"series_key as a varint", NULL, b_key_varint, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"median as a string", NULL, b_median_ld, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"state as a string", NULL, b_state_ld, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"a length prefix past the end", NULL, b_past_end, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"a group that never ends", NULL, b_group, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"only an unknown field (not a tombstone)", NULL, NULL, b_only_unknown, sizeof b_only_unknown, 0, R_MISSING,
	 "no series key", 0, 0, 0},
	{"no series_key", b_no_key, NULL, NULL, 0, 0, R_MISSING, "no series key", 0, 0, 0},
	{"no state (would thaw a frozen series)", b_no_state, NULL, NULL, 0, 0, R_MISSING, "no state", 0, 0, 0},
	{"state 42", b_state_42, NULL, NULL, 0, 0, R_INVALID, "state 42", 0, 0, 0},
	{"state -1", b_state_neg, NULL, NULL, 0, 0, R_INVALID, "state -1", 0, 0, 0},
	{"state twice, the last 0", NULL, b_state_then_0, NULL, 0, 0, R_MISSING, "no state", 0, 0, 0},
	{"state twice, the last 7", NULL, b_state_then_7, NULL, 0, 0, R_INVALID, "state 7", 0, 0, 0},
	{"state twice, the last ACTIVE: the last counts", NULL, b_state_then_active, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"series_key twice: the last counts", NULL, b_second_key, NULL, 0, 0, R_OK_, "rank-moe-110b/h/p/c/m", 0, 0, 0},
	{"key disagreeing with series_key (the watcher keys on the text)", b_other_key, NULL, NULL, 0, 0, R_OK_, NULL,
	 0, 0, 0},
	{"series_key of 255 bytes (the limit)", b_key_255, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, PW_SERIES_KEY_MAX - 1},
	{"series_key of 256 bytes", b_key_256, NULL, NULL, 0, 0, R_INVALID, "256 bytes", 0, 0, 0},
	{"series_key of 60 kB", b_key_60k, NULL, NULL, 0, 0, R_INVALID, "60000 bytes", 0, 0, 0},
	{"freeze_event_id of 63 bytes (the limit)", b_event_63, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"freeze_event_id of 64 bytes (would be cut)", b_event_64, NULL, NULL, 0, 0, R_INVALID,
	 "freeze_event_id is 64 bytes", 0, 0, 0},
	{"freeze_event_id of 60 kB", b_event_60k, NULL, NULL, 0, 0, R_INVALID, "60000 bytes", 0, 0, 0},
	{"freeze_reason of 60 kB (not read)", b_reason_60k, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"NUL inside series_key", NULL, b_nul_key, NULL, 0, 0, R_INVALID, "NUL", 0, 0, 0},
	{"NUL inside freeze_event_id", NULL, b_nul_event, NULL, 0, 0, R_INVALID, "NUL", 0, 0, 0},
	{"0xff in series_key", NULL, b_ff_key, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"an overlong '/' in freeze_event_id", NULL, b_overlong_event, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a surrogate in freeze_reason", NULL, b_surrogate_reason, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a cut sequence in unit", NULL, b_cut_unit, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a lone continuation byte in build_id", NULL, b_cont_build, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL in key.platform (nested)", NULL, b_nested_platform, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xff in key.model (nested)", NULL, b_nested_model, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"SQL metacharacters in series_key", b_sql_key, NULL, NULL, 0, 0, R_OK_,
	 "chat-8b'); DROP TABLE perfwatch.baselines;--/h/p/c/m", 0, 0, 0},
	{"SQL metacharacters in freeze_event_id", b_sql_event, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"median and sigma_pct NaN (not read)", b_median_nan, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"band and mad_n infinite (not read)", b_band_inf, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"median -1e308, sigma 1e308", b_huge, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"n minus one (a ten-byte varint)", NULL, b_n_negative, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"version 0", b_version_0, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"version 2^32 - 1", b_version_max, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"computed in the year 292277", b_far_future, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"computed before 1970 (INT64_MIN)", b_far_past, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"series_id negative (the watcher keys on the text)", b_id_negative, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"unknown fields", NULL, b_unknown, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
};

static Perfwatch__V1__DlqReason baseline_door(const uint8_t *buf, size_t len, ProtobufCMessage **out,
                                              bool *skip, char *detail, size_t detail_len)
{
	Perfwatch__V1__Baseline *b = (Perfwatch__V1__Baseline *)*out;
	Perfwatch__V1__DlqReason r = pw_watch_baseline_decode(buf, len, &b, skip, detail, detail_len);
	*out = (ProtobufCMessage *)b;
	return r;
}

static const char *baseline_key(const ProtobufCMessage *m)
{
	return ((const Perfwatch__V1__Baseline *)m)->series_key;
}

Test(watch_door, every_hostile_baseline_gets_its_reason)
{
	door_cases_run("watcher perf.baselines.v1", DOOR_TABLE(bcases), pack_baseline, GOOD_KEY, baseline_door,
	               baseline_key);
}

/* What the door hands back is what the watcher acts on: the state and the event id, unchanged;
 * and a tombstone as Kafka delivers it is skipped. */
Test(watch_door, a_baseline_hands_back_its_state_and_event)
{
	wire_buf w = pack_baseline(NULL);
	wire_int(&w, 5, 2); /* ACTIVE after FROZEN: the last counts */
	Perfwatch__V1__Baseline *b = NULL;
	bool skip = true;
	char detail[256] = "";
	cr_assert_eq(pw_watch_baseline_decode(w.p, w.n, &b, &skip, detail, sizeof detail), R_OK_,
	             "%s", detail);
	cr_assert_not(skip);
	cr_expect_eq(b->state, PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_ACTIVE);
	cr_expect_str_eq(b->freeze_event_id, GOOD_EVENT);
	perfwatch__v1__baseline__free_unpacked(b, NULL);
	free(w.p);
	/* librdkafka hands a tombstone over as a NULL payload */
	cr_assert_eq(pw_watch_baseline_decode(NULL, 0, &b, &skip, detail, sizeof detail), R_OK_);
	cr_assert(skip);
	cr_assert_not_null(b);
	perfwatch__v1__baseline__free_unpacked(b, NULL);
}

Test(watch_door, random_mutations_of_a_point_a_fleet_change_and_a_baseline)
{
	wire_buf p = pack_point(NULL), f = pack_fleet(NULL), b = pack_baseline(NULL);
	door_mutations("watcher perf.points.v1", &p, point_door, 20000, 19);
	door_mutations("watcher perf.fleet-changes.v1", &f, fleet_door, 20000, 1919);
	door_mutations("watcher perf.baselines.v1", &b, baseline_door, 20000, 191919);
	free(p.p);
	free(f.p);
	free(b.p);
}
