/*
 * test_bisect_inputs.c: the bisector's door (bisect_msg.h pw_bisect_alert_decode,
 * pw_bisect_cl_decode). Every bad input of perf.alerts.v1 and
 * perf.compiler-cls.v1 becomes a dead letter with its reason and a detail
 * that names the subject; good ones, follow-ups and alerts not for the
 * bisector pass with what the service needs to know.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bisect_msg.h"
#include "pw_alert_followup.h"

#define DECODE_FAILED PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED
#define MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE

typedef struct alert_fix {
	Perfwatch__V1__Alert al;
	Perfwatch__V1__SeriesKey key;
	Perfwatch__V1__AlertDelta delta;
	Perfwatch__V1__AlertBaseline base;
	Perfwatch__V1__AlertChangepoint cp;
} alert_fix;

/* The worked example's B64 TPOT alert of the gate. */
static void alert_init(alert_fix *f)
{
	perfwatch__v1__alert__init(&f->al);
	perfwatch__v1__series_key__init(&f->key);
	perfwatch__v1__alert_delta__init(&f->delta);
	perfwatch__v1__alert_baseline__init(&f->base);
	perfwatch__v1__alert_changepoint__init(&f->cp);
	f->key.model = "chat-8b";
	f->key.hlo_fingerprint = "hlo:9f31c2";
	f->key.platform = "v6e-4";
	f->key.config = "decode.B64.s2048.int8";
	f->key.metric = "tpot_p50_ms";
	f->delta.abs = 0.32;
	f->base.mad = 0.017;
	f->base.median = 3.90;
	f->cp.cl_range_lo = "cl/7841885";
	f->cp.cl_range_hi = "cl/7841923";
	f->al.alert_id = "perfreg-2026-06-18-00412";
	f->al.revision = 1;
	f->al.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION;
	f->al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_GATE;
	f->al.series = &f->key;
	f->al.series_key = "chat-8b/hlo:9f31c2/v6e-4/decode.B64.s2048.int8/tpot_p50_ms";
	f->al.delta = &f->delta;
	f->al.baseline = &f->base;
	f->al.changepoint = &f->cp;
}

static uint8_t *pack_alert(const Perfwatch__V1__Alert *al, size_t *len)
{
	*len = perfwatch__v1__alert__get_packed_size(al);
	uint8_t *b = malloc(*len + 1);
	cr_assert_not_null(b);
	perfwatch__v1__alert__pack(al, b);
	return b;
}

/* Replaces the first occurrence of needle's first byte inside the packed needle by `with`. */
static void patch(uint8_t *b, size_t len, const char *needle, uint8_t with)
{
	size_t n = strlen(needle);
	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(b + i, needle, n) == 0) {
			b[i + n - 1] = with;
			return;
		}
	cr_assert_fail("\"%s\" not in the packed message", needle);
}

static pw_bisect_input alert_verdict(const uint8_t *b, size_t len, Perfwatch__V1__DlqReason *reason,
                                     char *detail, size_t dlen)
{
	Perfwatch__V1__Alert *al = NULL;
	pw_bisect_input in = pw_bisect_alert_decode(b, len, &al, reason, detail, dlen);
	if (in == PW_BISECT_INPUT_DEAD)
		cr_assert_null(al);
	else
		cr_assert_not_null(al);
	perfwatch__v1__alert__free_unpacked(al, NULL);
	return in;
}

static void expect_alert_dead(const alert_fix *f, Perfwatch__V1__DlqReason want, const char *words)
{
	size_t len;
	uint8_t *b = pack_alert(&f->al, &len);
	Perfwatch__V1__DlqReason reason = 0;
	char detail[320];
	cr_assert_eq(alert_verdict(b, len, &reason, detail, sizeof detail), PW_BISECT_INPUT_DEAD, "%s", words);
	cr_assert_eq(reason, want, "%s: reason %d", words, reason);
	cr_assert(strstr(detail, words) != NULL, "detail \"%s\" does not say \"%s\"", detail, words);
	free(b);
}

Test(bisect_inputs, a_good_alert_passes_and_follow_ups_and_others_are_told_apart)
{
	alert_fix f;
	alert_init(&f);
	size_t len;
	uint8_t *b = pack_alert(&f.al, &len);
	Perfwatch__V1__Alert *al = NULL;
	Perfwatch__V1__DlqReason reason;
	char detail[320];
	cr_assert_eq(pw_bisect_alert_decode(b, len, &al, &reason, detail, sizeof detail), PW_BISECT_INPUT_ACCEPT);
	cr_assert_str_eq(al->series->platform, "v6e-4");
	perfwatch__v1__alert__free_unpacked(al, NULL);
	free(b);
	f.al.follow_up = true;
	f.al.revision = 2;
	b = pack_alert(&f.al, &len);
	cr_assert_eq(alert_verdict(b, len, &reason, detail, sizeof detail), PW_BISECT_INPUT_FOLLOW_UP);
	free(b);
	/* a follow-up is never dead-lettered for what a finding would need: it is not a finding */
	f.al.alert_id = "";
	b = pack_alert(&f.al, &len);
	cr_assert_eq(alert_verdict(b, len, &reason, detail, sizeof detail), PW_BISECT_INPUT_FOLLOW_UP);
	free(b);
	alert_init(&f);
	f.al.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_IMPROVEMENT;
	b = pack_alert(&f.al, &len);
	cr_assert_eq(alert_verdict(b, len, &reason, detail, sizeof detail), PW_BISECT_INPUT_IGNORE);
	free(b);
	alert_init(&f);
	f.al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_BASELINER;
	b = pack_alert(&f.al, &len);
	cr_assert_eq(alert_verdict(b, len, &reason, detail, sizeof detail), PW_BISECT_INPUT_IGNORE);
	free(b);
	/* no changepoint: the range comes from the runs */
	alert_init(&f);
	f.al.changepoint = NULL;
	b = pack_alert(&f.al, &len);
	cr_assert_eq(alert_verdict(b, len, &reason, detail, sizeof detail), PW_BISECT_INPUT_ACCEPT);
	free(b);
}

Test(bisect_inputs, truncated_empty_and_garbage_alerts_do_not_decode)
{
	alert_fix f;
	alert_init(&f);
	size_t len;
	uint8_t *b = pack_alert(&f.al, &len);
	Perfwatch__V1__DlqReason reason = 0;
	char detail[320];
	size_t cuts[] = {len - 1, len / 2, 3};
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		cr_assert_eq(alert_verdict(b, cuts[i], &reason, detail, sizeof detail), PW_BISECT_INPUT_DEAD,
		             "cut at %zu of %zu", cuts[i], len);
		cr_assert_eq(reason, DECODE_FAILED, "cut at %zu: reason %d (%s)", cuts[i], reason, detail);
		cr_assert(strstr(detail, "not a perfwatch.v1.Alert") != NULL, "%s", detail);
	}
	cr_assert_eq(alert_verdict(b, 0, &reason, detail, sizeof detail), PW_BISECT_INPUT_DEAD);
	cr_assert_eq(reason, DECODE_FAILED);
	cr_assert_str_eq(detail, "empty payload");
	cr_assert_eq(alert_verdict(NULL, 0, &reason, detail, sizeof detail), PW_BISECT_INPUT_DEAD);
	const uint8_t junk[] = "this is not protobuf at all \xff\xff\xff\xff\xff";
	cr_assert_eq(alert_verdict(junk, sizeof junk - 1, &reason, detail, sizeof detail), PW_BISECT_INPUT_DEAD);
	cr_assert_eq(reason, DECODE_FAILED);
	free(b);
}

Test(bisect_inputs, nul_bytes_and_invalid_utf8_in_alert_strings_are_refused)
{
	alert_fix f;
	alert_init(&f);
	f.al.alert_id = "perfreg-00412Z";
	size_t len;
	uint8_t *b = pack_alert(&f.al, &len);
	patch(b, len, "perfreg-00412Z", 0);
	Perfwatch__V1__DlqReason reason = 0;
	char detail[320];
	cr_assert_eq(alert_verdict(b, len, &reason, detail, sizeof detail), PW_BISECT_INPUT_DEAD);
	cr_assert_eq(reason, INVALID);
	cr_assert(strstr(detail, "alert_id") && strstr(detail, "NUL"), "%s", detail);
	free(b);
	/* in a nested message: the series key's model */
	alert_init(&f);
	f.key.model = "chat-8bQ";
	b = pack_alert(&f.al, &len);
	patch(b, len, "chat-8bQ", 0xff);
	cr_assert_eq(alert_verdict(b, len, &reason, detail, sizeof detail), PW_BISECT_INPUT_DEAD);
	cr_assert_eq(reason, INVALID);
	cr_assert(strstr(detail, "model") && strstr(detail, "UTF-8"), "%s", detail);
	free(b);
}

Test(bisect_inputs, alerts_missing_ids_or_holding_absurd_values_are_dead_letters)
{
	alert_fix f;
	alert_init(&f);
	f.al.alert_id = "";
	expect_alert_dead(&f, MISSING, "no alert_id");
	alert_init(&f);
	f.key.platform = "";
	expect_alert_dead(&f, MISSING, "incomplete series key");
	alert_init(&f);
	f.al.series = NULL;
	expect_alert_dead(&f, MISSING, "incomplete series key");
	alert_init(&f);
	f.al.series_key = "";
	expect_alert_dead(&f, MISSING, "incomplete series key");
	char big[600];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = 0;
	alert_init(&f);
	f.al.alert_id = big;
	expect_alert_dead(&f, INVALID, "alert_id of 599 bytes");
	alert_init(&f);
	f.al.series_key = big;
	expect_alert_dead(&f, INVALID, "series key of 599 bytes");
	alert_init(&f);
	f.delta.abs = NAN;
	expect_alert_dead(&f, INVALID, "not a finite effect");
	alert_init(&f);
	f.base.mad = INFINITY;
	expect_alert_dead(&f, INVALID, "not a finite effect");
	alert_init(&f);
	f.base.mad = -0.5;
	expect_alert_dead(&f, INVALID, "not a finite effect");
	alert_init(&f);
	f.cp.cl_range_lo = "cl/7841923";
	f.cp.cl_range_hi = "cl/7841885";
	expect_alert_dead(&f, INVALID, "changepoint range \"cl/7841923\"..\"cl/7841885\"");
	alert_init(&f);
	f.cp.cl_range_hi = "cl/abc";
	expect_alert_dead(&f, INVALID, "is not cl/N..cl/M");
	alert_init(&f);
	f.cp.cl_range_lo = "";
	expect_alert_dead(&f, INVALID, "is not cl/N..cl/M");
	alert_init(&f);
	f.cp.cl_range_lo = "cl/-5";
	expect_alert_dead(&f, INVALID, "is not cl/N..cl/M");
}

/* ---- perf.compiler-cls.v1 ------------------------------------------------------------ */

typedef struct cl_fix {
	Perfwatch__V1__CompilerCl c;
	Perfwatch__V1__RollInfo roll;
} cl_fix;

static void cl_init(cl_fix *f)
{
	perfwatch__v1__compiler_cl__init(&f->c);
	perfwatch__v1__roll_info__init(&f->roll);
	f->c.cl = "cl/7841917";
	f->c.cl_number = 7841917;
	f->c.title = "fusion: cap producer-consumer fusion VMEM footprint at 1.5MB";
	f->c.author = "xla-fusion";
	f->c.perf_relevant = true;
	static char *bench[] = {"chat-8b/v6e-*/decode.*"};
	f->c.perf_benchmarks = bench;
	f->c.n_perf_benchmarks = 1;
	f->c.submitted_unix_us = 1781740800000000LL;
}

static pw_bisect_input cl_verdict(const cl_fix *f, Perfwatch__V1__DlqReason *reason, char *detail, size_t dlen,
                                  size_t cut, int patch_byte, const char *needle)
{
	size_t len = perfwatch__v1__compiler_cl__get_packed_size(&f->c);
	uint8_t *b = malloc(len + 1);
	cr_assert_not_null(b);
	perfwatch__v1__compiler_cl__pack(&f->c, b);
	if (needle)
		patch(b, len, needle, (uint8_t)patch_byte);
	Perfwatch__V1__CompilerCl *c = NULL;
	pw_bisect_input in = pw_bisect_cl_decode(b, cut ? cut : len, &c, reason, detail, dlen);
	if (in == PW_BISECT_INPUT_DEAD)
		cr_assert_null(c);
	else
		cr_assert_not_null(c);
	perfwatch__v1__compiler_cl__free_unpacked(c, NULL);
	free(b);
	return in;
}

static void expect_cl_dead(const cl_fix *f, Perfwatch__V1__DlqReason want, const char *words, size_t cut,
                           int patch_byte, const char *needle)
{
	Perfwatch__V1__DlqReason reason = 0;
	char detail[320];
	cr_assert_eq(cl_verdict(f, &reason, detail, sizeof detail, cut, patch_byte, needle), PW_BISECT_INPUT_DEAD,
	             "%s", words);
	cr_assert_eq(reason, want, "%s: reason %d (%s)", words, reason, detail);
	cr_assert(strstr(detail, words) != NULL, "detail \"%s\" does not say \"%s\"", detail, words);
}

/*
 * The alert that jammed the outboxes: a regression alert whose summary is
 * 3,000,000 bytes. Its follow-up copied it whole (3,000,834 bytes, over
 * perf.alerts.v1's 1,000,000) and stopped every outbox row behind it. The
 * door now refuses what the bisector would copy beyond PW_ALERT_* as
 * oversize: the packed size, one string, one list.
 */
Test(bisect_inputs, alerts_beyond_the_alert_limits_are_oversize)
{
	static char huge[3000001], s4097[PW_ALERT_STRING_MAX + 2], s4096[PW_ALERT_STRING_MAX + 1];
	memset(huge, 's', 3000000);
	memset(s4097, 'o', PW_ALERT_STRING_MAX + 1);
	memset(s4096, 'o', PW_ALERT_STRING_MAX);
	const Perfwatch__V1__DlqReason oversize = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE;
	alert_fix f;
	alert_init(&f);
	f.al.summary = huge;
	expect_alert_dead(&f, oversize, "bytes (at most 262144)");
	alert_init(&f);
	f.al.owner_hint = s4097;
	expect_alert_dead(&f, oversize, "field \"owner_hint\" of 4097 bytes (at most 4096)");
	alert_init(&f);
	f.cp.nightly = s4097; /* at any depth */
	expect_alert_dead(&f, oversize, "field \"changepoint.nightly\" of 4097 bytes");
	alert_init(&f);
	Perfwatch__V1__AlertScope sc = PERFWATCH__V1__ALERT_SCOPE__INIT;
	char *items[PW_ALERT_LIST_MAX + 1];
	for (size_t i = 0; i < PW_ALERT_LIST_MAX + 1; i++)
		items[i] = "chat-8b/v6e-4/decode.B8: +7.4%";
	sc.clean_series = items;
	sc.n_clean_series = PW_ALERT_LIST_MAX + 1;
	f.al.scope = &sc;
	expect_alert_dead(&f, oversize, "field \"scope.clean_series\" has 257 items (at most 256)");
	/* at the limits: accepted */
	sc.n_clean_series = PW_ALERT_LIST_MAX;
	f.al.owner_hint = s4096;
	size_t len;
	uint8_t *b = pack_alert(&f.al, &len);
	Perfwatch__V1__DlqReason reason = 0;
	char detail[320];
	cr_assert_eq(alert_verdict(b, len, &reason, detail, sizeof detail), PW_BISECT_INPUT_ACCEPT, "%s", detail);
	free(b);
	/* a 3 MB follow-up or improvement is not acted on, so not refused either */
	alert_init(&f);
	f.al.summary = huge;
	f.al.follow_up = true;
	b = pack_alert(&f.al, &len);
	cr_assert_eq(alert_verdict(b, len, &reason, detail, sizeof detail), PW_BISECT_INPUT_FOLLOW_UP);
	free(b);
}

Test(bisect_inputs, compiler_cls_good_and_bad)
{
	cl_fix f;
	cl_init(&f);
	Perfwatch__V1__DlqReason reason;
	char detail[320];
	cr_assert_eq(cl_verdict(&f, &reason, detail, sizeof detail, 0, 0, NULL), PW_BISECT_INPUT_ACCEPT);
	/* a roll of 240 commits with its ids */
	f.roll.upstream_repo = "llvm/llvm-project";
	f.roll.upstream_commits = 240;
	f.c.roll = &f.roll;
	cr_assert_eq(cl_verdict(&f, &reason, detail, sizeof detail, 0, 0, NULL), PW_BISECT_INPUT_ACCEPT);
	size_t len = perfwatch__v1__compiler_cl__get_packed_size(&f.c);
	expect_cl_dead(&f, DECODE_FAILED, "not a perfwatch.v1.CompilerCl", len - 2, 0, NULL);
	expect_cl_dead(&f, INVALID, "NUL", 0, 0, "cl/7841917");
	expect_cl_dead(&f, INVALID, "UTF-8", 0, 0xc0, "fusion: cap");
	cl_init(&f);
	f.c.cl = "";
	f.c.cl_number = 0;
	expect_cl_dead(&f, MISSING, "neither cl nor cl_number", 0, 0, NULL);
	cl_init(&f);
	f.c.cl_number = 7841918;
	expect_cl_dead(&f, INVALID, "\"cl/7841917\" does not match cl_number 7841918", 0, 0, NULL);
	cl_init(&f);
	f.c.cl = "cl/-7841917";
	f.c.cl_number = -7841917;
	expect_cl_dead(&f, INVALID, "does not match", 0, 0, NULL);
	cl_init(&f);
	f.roll.upstream_commits = 4000000000u;
	f.c.roll = &f.roll;
	expect_cl_dead(&f, INVALID, "a roll of 4000000000 commits", 0, 0, NULL);
	cl_init(&f);
	static char *ids[] = {"a1", "b2", "c3"};
	f.roll.upstream_commits = 2;
	f.roll.upstream_ids = ids;
	f.roll.n_upstream_ids = 3;
	f.c.roll = &f.roll;
	expect_cl_dead(&f, INVALID, "listing 3 ids", 0, 0, NULL);
	cl_init(&f);
	f.c.submitted_unix_us = -1;
	expect_cl_dead(&f, INVALID, "submitted_unix_us -1", 0, 0, NULL);
	cl_init(&f);
	f.c.submitted_unix_us = INT64_MAX;
	expect_cl_dead(&f, INVALID, "1970..2200", 0, 0, NULL);
	cl_init(&f);
	char *title = malloc(PW_BISECT_TEXT_MAX + 2);
	memset(title, 't', PW_BISECT_TEXT_MAX + 1);
	title[PW_BISECT_TEXT_MAX + 1] = 0;
	f.c.title = title;
	expect_cl_dead(&f, INVALID, "a text of 4097 bytes", 0, 0, NULL);
	free(title);
	cl_init(&f);
	char **many = calloc(PW_BISECT_LIST_MAX + 1, sizeof *many);
	for (size_t i = 0; i <= PW_BISECT_LIST_MAX; i++)
		many[i] = "*";
	f.c.perf_benchmarks = many;
	f.c.n_perf_benchmarks = PW_BISECT_LIST_MAX + 1;
	expect_cl_dead(&f, INVALID, "257 benchmarks", 0, 0, NULL);
	free(many);
}

/*
 * A range the CL feed does not know: an alert with cl/1..cl/1000001 while
 * the feed holds cl/7840518.. started a bisection, published builds for both
 * ends and FAILED "range endpoints do not differ". Both endpoints must be
 * CLs of the feed; otherwise the alert is dead-lettered (unknown_reference)
 * with the CLs and the feed's range named, before any build.
 */
Test(bisect_inputs, a_range_outside_the_cl_feed_is_an_unknown_reference)
{
	char detail[320];
	pw_bisect_feed feed = {.lo_known = false, .hi_known = false, .first = 7840518, .last = 7842075, .n = 1558};
	cr_assert_not(pw_bisect_range_known("perfreg-x", 1, 1000001, &feed, detail, sizeof detail));
	cr_assert_str_eq(detail, "alert \"perfreg-x\": range cl/1..cl/1000001: cl/1 and cl/1000001 are not in the "
	                         "CL feed (cl/7840518..cl/7842075, 1558 CLs)");
	feed.hi_known = true;
	cr_assert_not(pw_bisect_range_known("perfreg-x", 7840000, 7841923, &feed, detail, sizeof detail));
	cr_assert(strstr(detail, ": cl/7840000 is not in the CL feed (cl/7840518..cl/7842075, 1558 CLs)"), "%s", detail);
	feed.hi_known = false;
	feed.lo_known = true;
	cr_assert_not(pw_bisect_range_known("perfreg-x", 7841885, 7999999, &feed, detail, sizeof detail));
	cr_assert(strstr(detail, ": cl/7999999 is not in the CL feed"), "%s", detail);
	pw_bisect_feed none = {0};
	cr_assert_not(pw_bisect_range_known("perfreg-x", 7841885, 7841923, &none, detail, sizeof detail));
	cr_assert(strstr(detail, "(the feed is empty)"), "%s", detail);
	feed.hi_known = true;
	cr_assert(pw_bisect_range_known("perfreg-x", 7841885, 7841923, &feed, detail, sizeof detail));
}
