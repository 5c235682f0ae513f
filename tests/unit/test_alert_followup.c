/*
 * test_alert_followup.c: follow-up revisions of alerts (common/pw_alert_followup.h).
 *
 * The follow-up is the original alert with a higher revision, the
 * follow-up flag and the bisection / artifacts blocks of artifact 3; the
 * flag is what the bisector, the attributor and the pager skip.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "perfwatch/v1/alert.pb-c.h"
#include "pw_alert_followup.h"
#include "pw_topics.h"

/* The worked example's alert (artifact 3), packed; caller frees. */
static uint8_t *original(size_t *len)
{
	Perfwatch__V1__Alert al = PERFWATCH__V1__ALERT__INIT;
	Perfwatch__V1__SeriesKey key = PERFWATCH__V1__SERIES_KEY__INIT;
	Perfwatch__V1__AlertArtifacts art = PERFWATCH__V1__ALERT_ARTIFACTS__INIT;
	Perfwatch__V1__AlertDelta d = PERFWATCH__V1__ALERT_DELTA__INIT;
	key.model = "chat-8b";
	key.hlo_fingerprint = "hlo:9f31c2";
	key.platform = "v6e-4";
	key.config = "decode.B64.s2048.int8";
	key.metric = "tpot_p50_ms";
	d.abs = 0.32;
	d.pct = 8.2;
	art.trace_before = "tr/prod/9f31c2";
	art.trace_after = "tr/rc/9f31c2";
	al.alert_id = "perfreg-2026-06-18-00412";
	al.revision = 1;
	al.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION;
	al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_GATE;
	al.series = &key;
	al.series_key = "chat-8b/hlo:9f31c2/v6e-4/decode.B64.s2048.int8/tpot_p50_ms";
	al.delta = &d;
	al.artifacts = &art;
	al.owner_hint = "xla-fusion";
	*len = perfwatch__v1__alert__get_packed_size(&al);
	uint8_t *b = malloc(*len);
	cr_assert_not_null(b);
	perfwatch__v1__alert__pack(&al, b);
	return b;
}

Test(alert_followup, bisection_block_of_artifact_3_on_the_same_alert)
{
	size_t len;
	uint8_t *orig = original(&len), *out = NULL;
	size_t outlen = 0;
	pw_alert_blocks b = {.has_bisection = true, .bisection_id = "bs-chat-8b-7841923",
	                     .bisection_status = "done", .confidence = "verified_both_sides",
	                     .culprit = "cl/7841917", .verified_adjacent_clean = true,
	                     .cherry_pick_reproduced = true};
	cr_assert_eq(pw_alert_followup_pack(orig, len, 2, "bisector", &b, &out, &outlen), PW_OK);
	Perfwatch__V1__Alert *al = perfwatch__v1__alert__unpack(NULL, outlen, out);
	cr_assert_not_null(al);
	cr_assert(pw_alert_is_follow_up(al));
	cr_assert_str_eq(al->follow_up_by, "bisector");
	cr_assert_eq(al->revision, 2);
	cr_assert_str_eq(al->alert_id, "perfreg-2026-06-18-00412");
	cr_assert_str_eq(al->series->platform, "v6e-4");
	cr_assert_float_eq(al->delta->pct, 8.2, 1e-12);
	cr_assert_str_eq(al->owner_hint, "xla-fusion");
	cr_assert_not_null(al->bisection);
	cr_assert_str_eq(al->bisection->bisection_id, "bs-chat-8b-7841923");
	cr_assert_str_eq(al->bisection->status, "done");
	cr_assert_str_eq(al->bisection->culprit, "cl/7841917");
	cr_assert_str_eq(al->bisection->confidence, "verified_both_sides");
	cr_assert(al->bisection->verified_adjacent_clean);
	cr_assert(al->bisection->cherry_pick_reproduced);
	/* the artifacts block is the original's: no attribution yet */
	cr_assert_str_eq(al->artifacts->trace_before, "tr/prod/9f31c2");
	cr_assert_str_eq(al->artifacts->attribution_id, "");
	perfwatch__v1__alert__free_unpacked(al, NULL);
	free(out);
	free(orig);
}

Test(alert_followup, both_blocks_and_the_traces_are_kept)
{
	size_t len;
	uint8_t *orig = original(&len), *out = NULL;
	size_t outlen = 0;
	pw_alert_blocks b = {.has_bisection = true, .bisection_id = "bs-x", .bisection_status = "failed",
	                     .confidence = "unverified", .reason = "endpoints do not differ",
	                     .has_attribution = true, .attribution_id = "perfreg-2026-06-18-00412",
	                     .op_diff = "perfwatch://attribution/perfreg-2026-06-18-00412/op-diff",
	                     .hlo_diff = "perfwatch://attribution/perfreg-2026-06-18-00412/hlo-diff"};
	cr_assert_eq(pw_alert_followup_pack(orig, len, 5, "attributor", &b, &out, &outlen), PW_OK);
	Perfwatch__V1__Alert *al = perfwatch__v1__alert__unpack(NULL, outlen, out);
	cr_assert_not_null(al);
	cr_assert_eq(al->revision, 5);
	cr_assert_str_eq(al->follow_up_by, "attributor");
	cr_assert_str_eq(al->bisection->status, "failed");
	cr_assert_str_eq(al->bisection->culprit, "");
	cr_assert_str_eq(al->bisection->reason, "endpoints do not differ");
	cr_assert_str_eq(al->artifacts->attribution_id, "perfreg-2026-06-18-00412");
	cr_assert_str_eq(al->artifacts->op_diff, "perfwatch://attribution/perfreg-2026-06-18-00412/op-diff");
	cr_assert_str_eq(al->artifacts->hlo_diff, "perfwatch://attribution/perfreg-2026-06-18-00412/hlo-diff");
	cr_assert_str_eq(al->artifacts->trace_after, "tr/rc/9f31c2");
	perfwatch__v1__alert__free_unpacked(al, NULL);
	free(out);
	free(orig);
}

Test(alert_followup, refused_when_not_above_the_original_or_not_an_alert)
{
	size_t len;
	uint8_t *orig = original(&len), *out = (uint8_t *)1;
	size_t outlen = 1;
	pw_alert_blocks b = {.has_bisection = true, .bisection_status = "running"};
	cr_assert_eq(pw_alert_followup_pack(orig, len, 1, "bisector", &b, &out, &outlen), PW_ERR_INVALID);
	cr_assert_null(out);
	cr_assert_eq(outlen, 0);
	cr_assert_eq(pw_alert_followup_pack(orig, len, 0, "bisector", &b, &out, &outlen), PW_ERR_INVALID);
	/* truncated: not an alert */
	cr_assert_eq(pw_alert_followup_pack(orig, len / 2, 2, "bisector", &b, &out, &outlen), PW_ERR_INVALID);
	const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
	cr_assert_eq(pw_alert_followup_pack(junk, sizeof junk, 2, "bisector", &b, &out, &outlen), PW_ERR_INVALID);
	free(orig);
}

Test(alert_followup, only_the_flag_makes_a_follow_up)
{
	size_t len;
	uint8_t *orig = original(&len);
	Perfwatch__V1__Alert *al = perfwatch__v1__alert__unpack(NULL, len, orig);
	cr_assert_not_null(al);
	cr_assert_not(pw_alert_is_follow_up(al));
	/* a detector's own higher revision is still an original finding */
	al->revision = 3;
	cr_assert_not(pw_alert_is_follow_up(al));
	al->follow_up = true;
	cr_assert(pw_alert_is_follow_up(al));
	cr_assert_not(pw_alert_is_follow_up(NULL));
	perfwatch__v1__alert__free_unpacked(al, NULL);
	free(orig);
}

/*
 * The alert that jammed the outboxes: its summary is 3,000,000 bytes. Its
 * follow-up used to copy it whole (3,000,834 bytes, over perf.alerts.v1's
 * 1,000,000). A stored original beyond the alert limits (kept before the
 * doors refused such alerts) now gets a follow-up of its identity and the
 * blocks, within the topic's limit; the blocks' own strings are cut too.
 */
Test(alert_followup, a_3_mb_original_gets_a_bounded_follow_up)
{
	static char huge[3000001], long_reason[3 * PW_ALERT_STRING_MAX];
	memset(huge, 's', 3000000);
	/* a 2-byte character straddling the cut: cut before it, never inside */
	memset(long_reason, 'r', sizeof long_reason - 1);
	memcpy(long_reason + PW_ALERT_STRING_MAX - 1, "\xc3\xa9", 2);
	Perfwatch__V1__Alert al = PERFWATCH__V1__ALERT__INIT;
	Perfwatch__V1__SeriesKey key = PERFWATCH__V1__SERIES_KEY__INIT;
	key.model = "chat-8b";
	key.hlo_fingerprint = "hlo:9f31c2";
	key.platform = "v6e-4";
	key.config = "decode.B64.s2048.int8";
	key.metric = "tpot_p50_ms";
	al.alert_id = "perfreg-2026-06-18-00999";
	al.revision = 1;
	al.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION;
	al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_GATE;
	al.series = &key;
	al.series_key = "chat-8b/hlo:9f31c2/v6e-4/decode.B64.s2048.int8/tpot_p50_ms";
	al.owner_hint = "xla-fusion";
	al.signal_evidence = huge;
	size_t len = perfwatch__v1__alert__get_packed_size(&al);
	uint8_t *orig = malloc(len);
	cr_assert_not_null(orig);
	perfwatch__v1__alert__pack(&al, orig);
	cr_assert_gt(len, 3000000);
	char why[256];
	cr_assert_not(pw_alert_within_bounds(&al, len, why, sizeof why));
	pw_alert_blocks b = {.has_bisection = true, .bisection_id = "bs-chat-8b-7841923",
	                     .bisection_status = "failed", .confidence = "none", .reason = long_reason,
	                     .culprit = "", .has_attribution = true, .attribution_id = "perfreg-2026-06-18-00999",
	                     .op_diff = "opdiff/00999", .hlo_diff = "hlodiff/00999"};
	uint8_t *out = NULL;
	size_t outlen = 0;
	cr_assert_eq(pw_alert_followup_pack(orig, len, 3, "attributor", &b, &out, &outlen), PW_OK);
	cr_assert_leq(outlen, 16 * PW_ALERT_STRING_MAX, "follow-up of %zu bytes", outlen);
	Perfwatch__V1__Alert *f = perfwatch__v1__alert__unpack(NULL, outlen, out);
	cr_assert_not_null(f);
	cr_assert(pw_alert_is_follow_up(f));
	cr_assert_eq(f->revision, 3);
	cr_assert_str_eq(f->alert_id, "perfreg-2026-06-18-00999");
	cr_assert_str_eq(f->series_key, al.series_key);
	cr_assert_str_eq(f->series->config, "decode.B64.s2048.int8");
	cr_assert_str_eq(f->owner_hint, "xla-fusion");
	cr_assert_str_eq(f->signal_evidence, "", "the 3 MB field is not copied");
	cr_assert_str_eq(f->bisection->status, "failed");
	cr_assert_eq(strlen(f->bisection->reason), PW_ALERT_STRING_MAX - 1, "cut before the 2-byte character");
	cr_assert_str_eq(f->artifacts->attribution_id, "perfreg-2026-06-18-00999");
	cr_assert_str_eq(f->artifacts->op_diff, "opdiff/00999");
	perfwatch__v1__alert__free_unpacked(f, NULL);
	free(out);
	free(orig);
}

/* Within the limits, every field is copied, and the largest follow-up fits perf.alerts.v1. */
Test(alert_followup, the_largest_alert_within_the_limits_has_a_follow_up_that_fits_the_topic)
{
	/* about PW_ALERT_MAX_BYTES in one string field short of the limit: copied whole */
	static char big[PW_ALERT_STRING_MAX + 1], id[PW_ALERT_STRING_MAX + 1];
	memset(big, 'x', PW_ALERT_STRING_MAX);
	memset(id, 'i', PW_ALERT_STRING_MAX);
	Perfwatch__V1__Alert al = PERFWATCH__V1__ALERT__INIT;
	Perfwatch__V1__AlertScope sc = PERFWATCH__V1__ALERT_SCOPE__INIT;
	char *items[60];
	for (size_t i = 0; i < 60; i++)
		items[i] = big;
	sc.correlated_series = items;
	sc.n_correlated_series = 60;
	al.scope = &sc;
	al.alert_id = "perfreg-big";
	al.revision = 1;
	al.summary = big;
	size_t len = perfwatch__v1__alert__get_packed_size(&al);
	cr_assert_leq(len, PW_ALERT_MAX_BYTES);
	uint8_t *orig = malloc(len);
	cr_assert_not_null(orig);
	perfwatch__v1__alert__pack(&al, orig);
	const char *s = id; /* every block string at its limit */
	pw_alert_blocks b = {.has_bisection = true, .bisection_id = s, .bisection_status = s, .confidence = s,
	                     .reason = s, .culprit = s, .has_attribution = true, .attribution_id = s,
	                     .op_diff = s, .hlo_diff = s};
	uint8_t *out = NULL;
	size_t outlen = 0;
	cr_assert_eq(pw_alert_followup_pack(orig, len, 2, "bisector", &b, &out, &outlen), PW_OK);
	Perfwatch__V1__Alert *f = perfwatch__v1__alert__unpack(NULL, outlen, out);
	cr_assert_not_null(f);
	cr_assert_eq(f->scope->n_correlated_series, 60);
	cr_assert_str_eq(f->summary, big);
	cr_assert_leq(outlen + strlen("perfreg-big"), pw_topic_publish_limit(PW_TOPIC_ALERTS));
	/* and the limits' worst case: every block at its cap on top of a PW_ALERT_MAX_BYTES original */
	cr_assert_lt(PW_ALERT_MAX_BYTES + 12 * (PW_ALERT_STRING_MAX + 8) + 1024,
	             pw_topic_publish_limit(PW_TOPIC_ALERTS));
	perfwatch__v1__alert__free_unpacked(f, NULL);
	free(out);
	free(orig);
}
