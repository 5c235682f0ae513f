/*
 * test_gate_door.c: the door of perf.gate.requests.v1 (pw_gate_request_decode,
 * services/gate/gate_request.h) on a table of hostile requests, each with the
 * DlqReason it must get, or — for what must pass (SQL metacharacters,
 * unknown fields, a release-wide waiver that says so) — the release id that
 * must come out unchanged.
 *
 * The good request is packed from a protobuf-c struct; a case edits the
 * struct before packing or appends raw wire bytes (the last occurrence of a
 * singular field wins), which is how NUL and invalid UTF-8 get in.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate_policy.h"
#include "gate_request.h"
#include "door_table.h"

#define R_OK_ PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED
#define R_DECODE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE

#define NOW_US 1781654400000000LL /* 2026-06-17 */
#define DAY_US 86400000000LL
#define GOOD_RELEASE "xla-rc-2026-06-17"


/* the parts of the good request a case may change */
typedef struct req_parts {
	Perfwatch__V1__GateRequest r;
	Perfwatch__V1__CompilerBuild cand;
	Perfwatch__V1__Waiver wv, wv2;
	Perfwatch__V1__Waiver *wvp[2];
	Perfwatch__V1__TierRepeats top, tail;
	Perfwatch__V1__TierRepeats *tiers[2];
	Perfwatch__V1__ExpectedWin win;
	Perfwatch__V1__ExpectedWin *wins[1];
	char *families[2];
	char scratch[1024];
} req_parts;

static wire_buf pack_request(door_edit_fn edit)
{
	static req_parts q;
	memset(&q, 0, sizeof q);
	perfwatch__v1__gate_request__init(&q.r);
	perfwatch__v1__compiler_build__init(&q.cand);
	q.cand.build_id = GOOD_RELEASE;
	q.cand.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_RC;
	q.cand.cl = "cl/7841923";
	perfwatch__v1__waiver__init(&q.wv);
	q.wv.waiver_id = "wv-2026-06-18-01";
	q.wv.model = "rank-moe-110b";
	q.wv.owner = "rank-team";
	q.wv.reason = "security patch rides this train";
	q.wv.expires_unix_us = NOW_US + 30 * DAY_US;
	q.wvp[0] = &q.wv;
	perfwatch__v1__tier_repeats__init(&q.top);
	q.top.tier = PERFWATCH__V1__TIER__TIER_TOP;
	q.top.n = 5;
	q.top.mde_pct = 1.0;
	perfwatch__v1__tier_repeats__init(&q.tail);
	q.tail.tier = PERFWATCH__V1__TIER__TIER_TAIL;
	q.tail.n = 3;
	q.tail.mde_pct = 3.0;
	q.tiers[0] = &q.top;
	q.tiers[1] = &q.tail;
	perfwatch__v1__expected_win__init(&q.win);
	q.win.series_key = "chat-70b/hlo:1/v6e-4/decode.B8/tpot_p50_ms";
	q.win.expected_delta_pct = -4.0;
	q.wins[0] = &q.win;
	q.families[0] = "chat-8b";
	q.families[1] = "rank-moe-110b";
	q.r.release_id = GOOD_RELEASE;
	q.r.evaluation = 1;
	q.r.candidate = &q.cand;
	q.r.baseline_release = "xla-2026-06-10";
	q.r.families = q.families;
	q.r.n_families = 2;
	q.r.expected_wins = q.wins;
	q.r.n_expected_wins = 1;
	q.r.waivers = q.wvp;
	q.r.n_waivers = 1;
	q.r.tiers = q.tiers;
	q.r.n_tiers = 2;
	q.r.fdr_q = 0.05;
	q.r.requested_unix_us = NOW_US;
	q.r.deadline_unix_us = NOW_US + DAY_US;
	if (edit)
		edit(&q);
	return wire_pack(&q.r.base);
}

/* ---- struct edits ---- */
#define EDIT(fn, stmt) DOOR_EDIT(fn, req_parts *q = p, stmt)
EDIT(no_release, q->r.release_id = "")
EDIT(eval_zero, q->r.evaluation = 0)
EDIT(no_candidate, q->r.candidate = NULL)
EDIT(candidate_no_build, q->cand.build_id = "")
EDIT(no_baseline, q->r.baseline_release = "")
EDIT(fdr_one, q->r.fdr_q = 1.0)
EDIT(fdr_negative, q->r.fdr_q = -0.05)
EDIT(fdr_nan, q->r.fdr_q = NAN)
EDIT(fdr_inf, q->r.fdr_q = INFINITY)
EDIT(fdr_default, q->r.fdr_q = 0.0)
EDIT(tier_unspecified, q->top.tier = PERFWATCH__V1__TIER__TIER_UNSPECIFIED)
EDIT(tier_unknown, q->top.tier = (Perfwatch__V1__Tier)77)
EDIT(tier_n_zero, q->tail.n = 0)
EDIT(tier_mde_zero, q->top.mde_pct = 0)
EDIT(tier_mde_nan, q->top.mde_pct = NAN)
EDIT(tier_mde_inf, q->top.mde_pct = INFINITY)
EDIT(waiver_no_id, q->wv.waiver_id = "")
EDIT(waiver_no_owner, q->wv.owner = "")
EDIT(waiver_no_reason, q->wv.reason = "")
EDIT(waiver_no_expiry, q->wv.expires_unix_us = 0)
EDIT(waiver_never_expires, q->wv.expires_unix_us = INT64_MAX)
EDIT(waiver_expiry_negative, q->wv.expires_unix_us = -1)
EDIT(waiver_no_scope, q->wv.model = "")
EDIT(waiver_release_wide, (q->wv.model = "", q->wv.release_wide = 1))
EDIT(waiver_old_request, (q->r.requested_unix_us = NOW_US - 400 * DAY_US,
                          q->wv.expires_unix_us = NOW_US + 300 * DAY_US))
/* pins (docs/gate.md "Pins"): a named family, owner, expiry and a model-team sign-off */
#define PIN(q) ((q)->wv.pin = 1, (q)->wv.pin_signed_off_by = "rank-models-lead", \
                (q)->wv.pin_artifact = "serving/rank-moe-110b/xla-2026-06-10.aot")
EDIT(pin_signed, PIN(q))
EDIT(pin_no_signoff, (PIN(q), q->wv.pin_signed_off_by = ""))
EDIT(pin_no_family, (PIN(q), q->wv.model = "", q->wv.platform = "v6e-4"))
EDIT(pin_release_wide, (PIN(q), q->wv.model = "", q->wv.release_wide = 1))
EDIT(pin_no_owner, (PIN(q), q->wv.owner = ""))
EDIT(pin_no_expiry, (PIN(q), q->wv.expires_unix_us = 0))
EDIT(pin_to_itself, (PIN(q), q->wv.pin_release = GOOD_RELEASE))
EDIT(pin_no_baseline_named, (PIN(q), q->wv.pin_release = "xla-2026-06-03"))
EDIT(signoff_without_pin, q->wv.pin_signed_off_by = "rank-models-lead")
EDIT(pin_twice_other_signoff, (PIN(q), q->wv2 = q->wv, q->wv2.pin_signed_off_by = "someone-else",
                               q->wvp[1] = &q->wv2, q->r.n_waivers = 2))
EDIT(pin_twice_unpinned, (PIN(q), q->wv2 = q->wv, q->wv2.pin = 0, q->wv2.pin_signed_off_by = "",
                          q->wv2.pin_artifact = "", q->wvp[1] = &q->wv2, q->r.n_waivers = 2))
/* the same id twice: one waiver sent twice is fine, two waivers under one id are not */
EDIT(waiver_twice_same, (q->wv2 = q->wv, q->wvp[1] = &q->wv2, q->r.n_waivers = 2))
EDIT(waiver_twice_other_expiry, (q->wv2 = q->wv, q->wv2.expires_unix_us += DAY_US,
                                 q->wvp[1] = &q->wv2, q->r.n_waivers = 2))
EDIT(waiver_twice_other_model, (q->wv2 = q->wv, q->wv2.model = "chat-8b", q->wvp[1] = &q->wv2,
                                q->r.n_waivers = 2))
EDIT(two_waivers, (q->wv2 = q->wv, q->wv2.waiver_id = "wv-2026-06-18-02", q->wv2.model = "chat-8b",
                   q->wvp[1] = &q->wv2, q->r.n_waivers = 2))
EDIT(win_no_key, q->win.series_key = "")
EDIT(win_minus_100, q->win.expected_delta_pct = -100.0)
EDIT(win_nan, q->win.expected_delta_pct = NAN)
EDIT(win_inf, q->win.expected_delta_pct = INFINITY)
EDIT(win_plus_1000, q->win.expected_delta_pct = 1000.0)
EDIT(no_lists, (q->r.n_families = 0, q->r.n_waivers = 0, q->r.n_tiers = 0, q->r.n_expected_wins = 0))
EDIT(sql_release, q->r.release_id = "rc'); UPDATE perfwatch.gate_evaluations SET verdict = 'pass';--")
static void release_len(req_parts *q, size_t n)
{
	static char big[1 << 16];
	memset(big, 'r', n);
	big[n] = 0;
	q->r.release_id = big;
}
static void release_255(void *p) { release_len(p, PW_GATE_RELEASE_ID_MAX - 1); }
static void release_256(void *p) { release_len(p, PW_GATE_RELEASE_ID_MAX); }
static void release_60k(void *p) { release_len(p, 60000); }

/* ---- appended raw fields ---- */
WIRE_APPEND_STR(nul_release, 1, "xla-rc\0-evil")
WIRE_APPEND_STR(bad_utf8_release, 1, "xla-rc-\377")
WIRE_APPEND_STR(nul_baseline, 4, "xla-2026\0")
WIRE_APPEND_STR(bad_utf8_family, 5, "chat-\xc0\xaf")
WIRE_APPEND_STR(surrogate_family, 5, "chat-\xed\xa0\x80")
WIRE_APPEND_STR(second_release, 1, "xla-rc-2026-06-18")
static void bad_utf8_candidate(wire_buf *b) { wire_nested(b, 3, 1, "xla-\xff", 5); }
/* a second, otherwise empty waiver / win: its strings are what the door sees */
static void nul_waiver_reason(wire_buf *b) { wire_nested(b, 7, 8, "why\0not", 7); }
static void bad_utf8_waiver_owner(wire_buf *b) { wire_nested(b, 7, 6, "team-\xfe", 6); }
static void cut_win_note(wire_buf *b) { wire_nested(b, 6, 5, "note \xe2\x82", 7); }
static void unknown_field(wire_buf *b)
{
	wire_varint(b, 40u << 3 | 0);
	wire_varint(b, 5);
}
static void wrong_wire_type(wire_buf *b)
{
	wire_varint(b, 1u << 3 | 0); /* release_id as a varint */
	wire_varint(b, 1);
}
static void waiver_as_varint(wire_buf *b)
{
	wire_varint(b, 7u << 3 | 0);
	wire_varint(b, 9);
}
static void length_past_end(wire_buf *b)
{
	wire_varint(b, 4u << 3 | 2);
	wire_varint(b, 4096);
	wire_bytes(b, "xla", 3);
}

static const uint8_t json[] = "{\"release_id\":\"xla-rc-2026-06-17\",\"evaluation\":1}";

static const door_case cases[] = {
	{"the good request", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* not a GateRequest */
	{"empty payload (no release_id)", NULL, NULL, (const uint8_t *)"", 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, 0, R_DECODE, NULL, 0, 0, 0},
	{"JSON instead of protobuf", NULL, NULL, json, sizeof json - 1, 0, R_DECODE, NULL, 0, 0, 0},
	{"release_id with the varint wire type", NULL, wrong_wire_type, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"a waiver as a varint", NULL, waiver_as_varint, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	{"a length prefix past the end", NULL, length_past_end, NULL, 0, 0, R_DECODE, NULL, 0, 0, 0},
	/* required fields */
	{"no release_id", no_release, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"evaluation 0", eval_zero, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"no candidate", no_candidate, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a candidate without a build id", candidate_no_build, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"no baseline_release", no_baseline, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	/* sizes */
	{"release_id of 255 bytes (the cap)", release_255, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0,
	 PW_GATE_RELEASE_ID_MAX - 1},
	{"release_id of 256 bytes", release_256, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"release_id of 60 kB", release_60k, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	/* numbers */
	{"fdr_q 1", fdr_one, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"fdr_q negative", fdr_negative, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"fdr_q NaN", fdr_nan, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"fdr_q +inf", fdr_inf, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"fdr_q 0 (the gate's default)", fdr_default, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a tier unspecified", tier_unspecified, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a tier this build does not know", tier_unknown, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"tier repeats n 0", tier_n_zero, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"tier mde_pct 0", tier_mde_zero, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"tier mde_pct NaN", tier_mde_nan, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"tier mde_pct +inf", tier_mde_inf, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"expected win without a key", win_no_key, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"expected win of -100%", win_minus_100, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"expected win NaN", win_nan, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"expected win +inf", win_inf, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"expected win of +1000% (finite)", win_plus_1000, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* waivers */
	{"a waiver without an id", waiver_no_id, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a waiver without an owner", waiver_no_owner, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a waiver without a reason", waiver_no_reason, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a waiver without an expiry", waiver_no_expiry, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a waiver that never expires (INT64_MAX)", waiver_never_expires, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a waiver that expired before 1970", waiver_expiry_negative, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a waiver with no selector (the whole release)", waiver_no_scope, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a release-wide waiver that says so", waiver_release_wide, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"an old request: expiry counts from the gate's clock", waiver_old_request, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0,
	 0},
	{"one waiver sent twice (same id, same content)", waiver_twice_same, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"one waiver id, two expiries", waiver_twice_other_expiry, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"one waiver id, two models", waiver_twice_other_model, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"two waivers, two ids", two_waivers, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* pins: per-family version pinning */
	{"a pin with owner, expiry and sign-off", pin_signed, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a pin without a model-team sign-off", pin_no_signoff, NULL, NULL, 0, 0, R_INVALID,
	 "waiver \"wv-2026-06-18-01\" pins \"rank-moe-110b\" to N-1 without a model-team sign-off", 0, 0, 0},
	{"a pin without a family (platform only)", pin_no_family, NULL, NULL, 0, 0, R_INVALID, "without naming the family", 0,
	 0, 0},
	{"a release-wide pin", pin_release_wide, NULL, NULL, 0, 0, R_INVALID, "without naming the family", 0, 0, 0},
	{"a pin without an owner", pin_no_owner, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a pin without an expiry", pin_no_expiry, NULL, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a pin to the release under gate", pin_to_itself, NULL, NULL, 0, 0, R_INVALID, "the release under gate itself", 0,
	 0, 0},
	{"a pin naming its N-1", pin_no_baseline_named, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"a sign-off without pin", signoff_without_pin, NULL, NULL, 0, 0, R_INVALID, "does not pin", 0, 0, 0},
	{"one pin id, two sign-offs", pin_twice_other_signoff, NULL, NULL, 0, 0, R_INVALID, "different content", 0, 0, 0},
	{"one waiver id, pinned and not", pin_twice_unpinned, NULL, NULL, 0, 0, R_INVALID, "different content", 0, 0, 0},
	/* NUL and UTF-8, at any depth */
	{"NUL inside release_id", NULL, nul_release, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xff in release_id", NULL, bad_utf8_release, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL at the end of baseline_release", NULL, nul_baseline, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"an overlong '/' in a family", NULL, bad_utf8_family, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a surrogate in a family", NULL, surrogate_family, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xff in candidate.build_id (nested)", NULL, bad_utf8_candidate, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"NUL in a waiver's reason (in a list)", NULL, nul_waiver_reason, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"0xfe in a waiver's owner (in a list)", NULL, bad_utf8_waiver_owner, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	{"a cut sequence in an expected win's note", NULL, cut_win_note, NULL, 0, 0, R_INVALID, NULL, 0, 0, 0},
	/* let through */
	{"no families, waivers, tiers or wins", no_lists, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"SQL metacharacters in release_id", sql_release, NULL, NULL, 0, 0, R_OK_,
	 "rc'); UPDATE perfwatch.gate_evaluations SET verdict = 'pass';--", 0, 0, 0},
	{"unknown fields", NULL, unknown_field, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"release_id twice: the last counts", NULL, second_release, NULL, 0, 0, R_OK_, "xla-rc-2026-06-18", 0, 0, 0},
};

static Perfwatch__V1__DlqReason request_door(const uint8_t *buf, size_t len, ProtobufCMessage **out,
                                             bool *skip, char *detail, size_t detail_len)
{
	(void)skip;
	Perfwatch__V1__GateRequest *req = (Perfwatch__V1__GateRequest *)*out;
	Perfwatch__V1__DlqReason r =
		pw_gate_request_decode(buf, len, 0.05, NOW_US, &req, detail, detail_len);
	*out = (ProtobufCMessage *)req;
	return r;
}

static const char *request_release(const ProtobufCMessage *m)
{
	return ((const Perfwatch__V1__GateRequest *)m)->release_id;
}

Test(gate_door, every_hostile_request_gets_its_reason)
{
	door_cases_run("perf.gate.requests.v1", DOOR_TABLE(cases), pack_request, GOOD_RELEASE, request_door,
	               request_release);
}
