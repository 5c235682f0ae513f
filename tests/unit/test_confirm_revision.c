/*
 * test_confirm_revision.c: the confirmation's revision of an outlier alert
 * (services/bisector/confirm.h pw_confirm_revision_pack): reproduced → kind
 * regression or improvement, owner compiler, the CL range in the changepoint
 * block; not reproduced → infra_health, owner infra, no page; over budget →
 * still unconfirmed; the revision must be above the original's.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "confirm.h"

static uint8_t *original(size_t *len)
{
	Perfwatch__V1__Alert al = PERFWATCH__V1__ALERT__INIT;
	Perfwatch__V1__AlertBaseline b = PERFWATCH__V1__ALERT_BASELINE__INIT;
	Perfwatch__V1__AlertObserved o = PERFWATCH__V1__ALERT_OBSERVED__INIT;
	al.alert_id = "bl-outlier/19/r1/0";
	al.revision = 1;
	al.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_UNCONFIRMED;
	al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_BASELINER;
	al.series_key = "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms";
	al.owner_hint = "needs-confirmation";
	al.needs_confirmation = true;
	al.page = "ml-perf-triage";
	al.summary = "unconfirmed outlier";
	al.point_run_id = "r1";
	al.point_unix_us = 1781659500000000LL;
	b.median = 3.90;
	o.median = 4.22;
	al.baseline = &b;
	al.observed = &o;
	*len = perfwatch__v1__alert__get_packed_size(&al);
	uint8_t *buf = malloc(*len);
	perfwatch__v1__alert__pack(&al, buf);
	return buf;
}

static Perfwatch__V1__Alert *revise(const pw_confirm_revision *r)
{
	size_t len, ol;
	uint8_t *orig = original(&len), *out = NULL;
	cr_assert_eq(pw_confirm_revision_pack(orig, len, r, &out, &ol), PW_OK);
	free(orig);
	Perfwatch__V1__Alert *al = perfwatch__v1__alert__unpack(NULL, ol, out);
	free(out);
	cr_assert_not_null(al);
	return al;
}

Test(confirm_revision, reproduced_regression)
{
	pw_confirm_revision r = {.revision = 2, .outcome = PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_REPRODUCED,
	                         .regression = true, .job_id = "cf-r1", .repeats = 5, .n = 5, .rerun_median = 4.21,
	                         .band_lo = 3.82, .band_hi = 3.98, .cl = 7841923, .prev_cl = 7841885,
	                         .range_hi = 7841923, .nightly = "2026-06-17", .summary = "confirmed regression",
	                         .reason = "reproduced"};
	Perfwatch__V1__Alert *al = revise(&r);
	cr_assert_eq(al->revision, 2);
	cr_assert_eq(al->kind, PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION);
	cr_assert_str_eq(al->owner_hint, "compiler");
	cr_assert_not(al->needs_confirmation);
	cr_assert_not(al->follow_up);
	cr_assert_str_eq(al->alert_id, "bl-outlier/19/r1/0");
	cr_assert_not_null(al->changepoint);
	cr_assert_str_eq(al->changepoint->cl_range_lo, "cl/7841885");
	cr_assert_str_eq(al->changepoint->cl_range_hi, "cl/7841923");
	cr_assert_eq(al->changepoint->n_cls, 38);
	cr_assert_str_eq(al->changepoint->nightly, "2026-06-17");
	cr_assert_not_null(al->confirmation);
	cr_assert_eq(al->confirmation->outcome, PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_REPRODUCED);
	cr_assert_str_eq(al->confirmation->job_id, "cf-r1");
	cr_assert_str_eq(al->confirmation->build_cl, "cl/7841923");
	cr_assert_eq(al->confirmation->n, 5);
	cr_assert_float_eq(al->confirmation->rerun_median, 4.21, 1e-12);
	cr_assert_str_eq(al->summary, "confirmed regression");
	cr_assert_str_eq(al->point_run_id, "r1");
	perfwatch__v1__alert__free_unpacked(al, NULL);
	r.regression = false;
	al = revise(&r);
	cr_assert_eq(al->kind, PERFWATCH__V1__ALERT_KIND__ALERT_KIND_IMPROVEMENT);
	perfwatch__v1__alert__free_unpacked(al, NULL);
}

Test(confirm_revision, not_reproduced_is_infra_and_pages_nobody)
{
	pw_confirm_revision r = {.revision = 3, .outcome = PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_NOT_REPRODUCED,
	                         .job_id = "cf-r1", .repeats = 5, .n = 5, .rerun_median = 3.90, .cl = 7841923,
	                         .prev_cl = 7841885, .range_hi = 7841923, .reason = "not reproduced"};
	Perfwatch__V1__Alert *al = revise(&r);
	cr_assert_eq(al->revision, 3);
	cr_assert_eq(al->kind, PERFWATCH__V1__ALERT_KIND__ALERT_KIND_INFRA_HEALTH);
	cr_assert_str_eq(al->owner_hint, "infra");
	cr_assert_str_eq(al->page, "");
	cr_assert_eq(al->routing, PERFWATCH__V1__ROUTING__ROUTING_QUEUE);
	cr_assert_str_eq(al->signal_evidence, "not reproduced");
	cr_assert_null(al->changepoint);
	cr_assert_not(al->needs_confirmation);
	cr_assert_str_eq(al->summary, "unconfirmed outlier"); /* no summary given: the original's */
	perfwatch__v1__alert__free_unpacked(al, NULL);
}

Test(confirm_revision, over_budget_stays_unconfirmed)
{
	pw_confirm_revision r = {.revision = 2, .outcome = PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_OVER_BUDGET,
	                         .repeats = 5, .cl = 7841923, .reason = "budget spent"};
	Perfwatch__V1__Alert *al = revise(&r);
	cr_assert_eq(al->kind, PERFWATCH__V1__ALERT_KIND__ALERT_KIND_UNCONFIRMED);
	cr_assert_str_eq(al->owner_hint, "needs-confirmation");
	cr_assert(al->needs_confirmation);
	cr_assert_eq(al->confirmation->outcome, PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_OVER_BUDGET);
	cr_assert_str_eq(al->confirmation->reason, "budget spent");
	perfwatch__v1__alert__free_unpacked(al, NULL);
}

Test(confirm_revision, revision_must_be_above_and_payload_an_alert)
{
	size_t len, ol;
	uint8_t *orig = original(&len), *out = NULL;
	pw_confirm_revision r = {.revision = 1, .outcome = PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_NOT_REPRODUCED};
	cr_assert_eq(pw_confirm_revision_pack(orig, len, &r, &out, &ol), PW_ERR_INVALID);
	cr_assert_null(out);
	free(orig);
	const uint8_t junk[] = {0xff, 0xff, 0xff};
	r.revision = 2;
	cr_assert_eq(pw_confirm_revision_pack(junk, sizeof junk, &r, &out, &ol), PW_ERR_INVALID);
}
