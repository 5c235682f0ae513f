/*
 * test_gate_eval.c: the release gate's decision (services/gate/gate_eval.c)
 * on the design's worked example, a quiet release at the design's scale,
 * registered and unregistered wins, waivers, frozen series and the
 * spend-weighted aggregate rule.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate_eval.h"
#include "test_noise.h"

static double *samples(uint64_t *rng, size_t n, double level, double sigma_rel)
{
	double *x = malloc(n * sizeof *x);
	for (size_t i = 0; i < n; i++)
		x[i] = level * (1.0 + sigma_rel * noise(rng));
	return x;
}

typedef struct release {
	pw_gate_family_input fam[8];
	size_t nfam;
	pw_gate_series_input s[2400];
	size_t ns;
	pw_gate_series_result sr[2400];
	pw_gate_family_result fr[8];
	pw_gate_release_result rr;
	uint64_t rng;
} release;

static release *release_new(void)
{
	release *r = calloc(1, sizeof *r);
	r->rng = 7841917;
	return r;
}

static void release_free(release *r)
{
	for (size_t i = 0; i < r->ns; i++) {
		free((double *)r->s[i].base);
		free((double *)r->s[i].cand);
	}
	free(r);
}

static size_t add_family(release *r, const char *name, double share)
{
	r->fam[r->nfam] = (pw_gate_family_input){.name = name, .spend_share = share};
	return r->nfam++;
}

/* A series: 30 baseline runs at level, 5 candidate runs at level × (1 + shift). */
static size_t add_series(release *r, const char *key, size_t fam, pw_gate_tier tier,
                         double level, double sigma, double shift)
{
	pw_gate_series_input *s = &r->s[r->ns];
	memset(s, 0, sizeof *s);
	s->series = key;
	s->family = fam;
	s->tier = tier;
	s->direction = PW_COMPARE_LOWER_IS_BETTER;
	s->state = PW_GATE_STATE_ACTIVE;
	s->base = samples(&r->rng, 30, level, sigma);
	s->n_base = 30;
	s->cand = samples(&r->rng, 5, level * (1.0 + shift), sigma);
	s->n_cand = 5;
	return r->ns++;
}

static void evaluate(release *r)
{
	pw_gate_policy pol;
	pw_gate_policy_default(&pol);
	char err[256];
	cr_assert_eq(pw_gate_evaluate(&pol, r->fam, r->nfam, r->s, r->ns, r->sr, r->fr, &r->rr, err,
	                              sizeof err),
	             PW_OK, "%s", err);
}

/* §6.3 / artifact 7: chat-8b on v6e-4, decode B64 3.90 → 4.22 ms (+8.2%) and
 * decode B8 +7.4%, prefill and v5e-8 within noise, σ 0.4% (TPU). */
Test(gate_eval, worked_example_blocks_chat_8b)
{
	release *r = release_new();
	size_t chat = add_family(r, "chat-8b", 0.078);
	size_t b64 = add_series(r, "chat-8b/v6e-4/decode.B64.s2048.int8/tpot_p50_ms", chat,
	                        PW_GATE_TIER_TOP, 3.90, 0.004, 0.0821);
	size_t b8 = add_series(r, "chat-8b/v6e-4/decode.B8.s2048.int8/tpot_p50_ms", chat,
	                       PW_GATE_TIER_TOP, 1.60, 0.004, 0.074);
	size_t pre = add_series(r, "chat-8b/v6e-4/prefill.8k/ttft_p50_ms", chat, PW_GATE_TIER_TOP,
	                        210.0, 0.004, 0.0031);
	size_t v5e[3];
	v5e[0] = add_series(r, "chat-8b/v5e-8/decode.B64.s2048.int8/tpot_p50_ms", chat,
	                    PW_GATE_TIER_TOP, 5.10, 0.004, 0.0);
	v5e[1] = add_series(r, "chat-8b/v5e-8/decode.B8.s2048.int8/tpot_p50_ms", chat,
	                    PW_GATE_TIER_TOP, 2.05, 0.004, 0.004);
	v5e[2] = add_series(r, "chat-8b/v5e-8/prefill.8k/ttft_p50_ms", chat, PW_GATE_TIER_TOP,
	                    300.0, 0.004, -0.002);
	evaluate(r);

	cr_assert_eq(r->sr[b64].verdict, PW_GATE_SERIES_REGRESSED);
	cr_assert_float_eq(r->sr[b64].cmp.delta_pct, 8.2, 0.6);
	cr_assert_lt(r->sr[b64].q, 0.05);
	cr_assert(r->sr[b64].cmp.effect_filter_passed);
	cr_assert_eq(r->sr[b8].verdict, PW_GATE_SERIES_REGRESSED);
	cr_assert_float_eq(r->sr[b8].cmp.delta_pct, 7.4, 0.6);
	cr_assert_eq(r->sr[pre].verdict, PW_GATE_SERIES_WITHIN_NOISE);
	for (int i = 0; i < 3; i++)
		cr_assert(r->sr[v5e[i]].verdict == PW_GATE_SERIES_WITHIN_NOISE ||
		              r->sr[v5e[i]].verdict == PW_GATE_SERIES_TREND,
		          "v5e-8 series %d: %s", i, pw_gate_series_verdict_name(r->sr[v5e[i]].verdict));
	cr_assert_eq(r->fr[chat].verdict, PW_GATE_FAMILY_BLOCKING);
	cr_assert_eq(r->fr[chat].n_regressed, 2);
	/* spend-weighted impact ≈ 0.078 × mean(8.2, 7.4) ≈ 0.6% of fleet, as in artifact 7 */
	cr_assert_float_eq(r->fr[chat].impact_pct, 0.6, 0.1);
	cr_assert_eq(r->rr.verdict, PW_GATE_FAMILY_BLOCKING);
	cr_log_info("b64: delta %.2f%% p %.3g q %.3g; impact %.3f%%", r->sr[b64].cmp.delta_pct,
	            r->sr[b64].cmp.p, r->sr[b64].q, r->fr[chat].impact_pct);
	cr_assert_eq(r->rr.n_tests, 6);
	release_free(r);
}

/* §4.4: 60 models × 2 platforms × 3 configs × 6 metrics = 2,160 tests with
 * nothing changed. BH at 5% plus the effect filter: no BLOCKING, no P1. */
Test(gate_eval, quiet_release_at_design_scale_raises_nothing)
{
	release *r = release_new();
	static const char *names[8] = {"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"};
	for (int f = 0; f < 8; f++)
		add_family(r, names[f], 0.1);
	for (size_t i = 0; i < 2160; i++)
		add_series(r, "quiet", i % 8, i % 3 == 0 ? PW_GATE_TIER_TAIL : PW_GATE_TIER_TOP,
		           1.0 + (double)(i % 17), 0.004, 0.0);
	evaluate(r);
	cr_assert_eq(r->rr.n_tests, 2160);
	size_t fired = 0;
	for (size_t i = 0; i < r->ns; i++)
		fired += r->sr[i].verdict == PW_GATE_SERIES_REGRESSED ||
		         r->sr[i].verdict == PW_GATE_SERIES_INVESTIGATE;
	cr_assert_eq(fired, 0);
	for (size_t f = 0; f < r->nfam; f++)
		cr_assert_eq(r->fr[f].verdict, PW_GATE_FAMILY_PASS, "%s: %s", names[f],
		             pw_gate_family_verdict_name(r->fr[f].verdict));
	cr_assert_eq(r->rr.verdict, PW_GATE_FAMILY_PASS);
	release_free(r);
}

Test(gate_eval, registered_win_validates_and_unregistered_win_is_investigated)
{
	release *r = release_new();
	size_t fa = add_family(r, "registered", 0.05);
	size_t fb = add_family(r, "unregistered", 0.05);
	size_t a = add_series(r, "a", fa, PW_GATE_TIER_TOP, 3.0, 0.004, -0.04);
	r->s[a].has_expected = true;
	r->s[a].expected_pct = -4.0;
	size_t b = add_series(r, "b", fb, PW_GATE_TIER_TOP, 3.0, 0.004, -0.04);
	evaluate(r);
	cr_assert_eq(r->sr[a].verdict, PW_GATE_SERIES_VALIDATED_WIN);
	cr_assert_float_eq(r->sr[a].excess_pct, 0.0, 0.5);
	cr_assert_eq(r->fr[fa].verdict, PW_GATE_FAMILY_VALIDATED_WIN);
	cr_assert_eq(r->sr[b].verdict, PW_GATE_SERIES_INVESTIGATE);
	cr_assert_eq(r->fr[fb].n_investigate, 1);
	release_free(r);
}

Test(gate_eval, registered_win_that_does_not_arrive_falls_short)
{
	release *r = release_new();
	size_t f = add_family(r, "fam", 0.05);
	size_t a = add_series(r, "a", f, PW_GATE_TIER_TOP, 3.0, 0.004, 0.0);
	r->s[a].has_expected = true;
	r->s[a].expected_pct = -4.0;
	evaluate(r);
	cr_assert_eq(r->sr[a].verdict, PW_GATE_SERIES_WIN_SHORTFALL);
	cr_assert_float_eq(r->sr[a].excess_pct, 4.17, 0.5);
	cr_assert_eq(r->fr[f].verdict, PW_GATE_FAMILY_PASS);
	release_free(r);
}

Test(gate_eval, waiver_passes_its_family_and_records_what_it_hid)
{
	release *r = release_new();
	size_t f = add_family(r, "chat-8b", 0.078);
	add_series(r, "b64", f, PW_GATE_TIER_TOP, 3.90, 0.004, 0.082);
	r->fam[f].waived = true;
	evaluate(r);
	cr_assert_eq(r->fr[f].verdict, PW_GATE_FAMILY_WAIVED);
	cr_assert_eq(r->fr[f].unwaived, PW_GATE_FAMILY_BLOCKING);
	/* an expired waiver is not passed in as waived: the family blocks again */
	r->fam[f].waived = false;
	evaluate(r);
	cr_assert_eq(r->fr[f].verdict, PW_GATE_FAMILY_BLOCKING);
	release_free(r);
}

Test(gate_eval, frozen_and_short_series_are_listed_not_gated)
{
	release *r = release_new();
	size_t f = add_family(r, "fam", 0.05);
	size_t fz = add_series(r, "frozen", f, PW_GATE_TIER_TOP, 3.0, 0.004, 0.10);
	r->s[fz].state = PW_GATE_STATE_FROZEN;
	size_t qz = add_series(r, "quarantined", f, PW_GATE_TIER_TOP, 3.0, 0.004, 0.10);
	r->s[qz].state = PW_GATE_STATE_QUARANTINED;
	evaluate(r);
	cr_assert_eq(r->sr[fz].verdict, PW_GATE_SERIES_FROZEN);
	cr_assert_not(r->sr[fz].tested);
	cr_assert(isnan(r->sr[fz].q));
	cr_assert_eq(r->sr[qz].verdict, PW_GATE_SERIES_QUARANTINED);
	cr_assert_eq(r->rr.n_tests, 0);
	cr_assert_eq(r->fr[f].verdict, PW_GATE_FAMILY_FROZEN);

	size_t sh = add_series(r, "short", f, PW_GATE_TIER_TOP, 3.0, 0.004, 0.0);
	r->s[sh].n_cand = 3;
	evaluate(r);
	cr_assert_eq(r->sr[sh].verdict, PW_GATE_SERIES_INSUFFICIENT_DATA);
	cr_assert_eq(r->fr[f].verdict, PW_GATE_FAMILY_INSUFFICIENT_DATA);
	release_free(r);
}

Test(gate_eval, p1_below_three_percent_and_aggregate_blocks)
{
	release *r = release_new();
	size_t small = add_family(r, "small-share", 0.02);
	size_t s = add_series(r, "two-percent", small, PW_GATE_TIER_TOP, 3.0, 0.004, 0.02);
	evaluate(r);
	cr_assert_eq(r->sr[s].verdict, PW_GATE_SERIES_REGRESSED);
	cr_assert_eq(r->fr[small].verdict, PW_GATE_FAMILY_P1);

	/* the same 2% on a family with half the fleet's spend is 1% of the fleet */
	r->fam[small].spend_share = 0.55;
	evaluate(r);
	cr_assert_geq(r->fr[small].impact_pct, 1.0);
	cr_assert_eq(r->fr[small].verdict, PW_GATE_FAMILY_BLOCKING);
	release_free(r);
}

Test(gate_eval, sub_mde_significant_movement_is_trend_only)
{
	release *r = release_new();
	size_t f = add_family(r, "fam", 0.05);
	/* 0.6% in σ 0.1% noise: unmistakably significant, below the 1% MDE */
	size_t s = add_series(r, "wiggle", f, PW_GATE_TIER_TOP, 3.0, 0.001, 0.006);
	evaluate(r);
	cr_assert_lt(r->sr[s].q, 0.05);
	cr_assert_eq(r->sr[s].verdict, PW_GATE_SERIES_TREND);
	cr_assert_eq(r->fr[f].verdict, PW_GATE_FAMILY_PASS);
	release_free(r);
}

/*
 * §4.5: a series tested with fewer candidate runs than its noise needs, and
 * nothing significant, is UNDER_POWERED, never within noise; a finding made
 * with few runs stands (a regression stays a regression). n was fixed at 5
 * for every tier: a GPU series at σ 2% needs 6 for its 4% MDE.
 */
Test(gate_eval, short_of_power_is_under_powered_not_within_noise)
{
	release *r = release_new();
	size_t f = add_family(r, "gpu-fam", 0.05);
	size_t quiet = add_series(r, "gpu-fam/h/b200-8/decode.B8/tpot_p50_ms", f, PW_GATE_TIER_TOP,
	                          5.0, 0.02, 0.0);
	size_t enough = add_series(r, "gpu-fam/h/b200-8/decode.B64/tpot_p50_ms", f,
	                           PW_GATE_TIER_TOP, 5.0, 0.02, 0.0);
	size_t regressed = add_series(r, "gpu-fam/h/v6e-4/decode.B8/tpot_p50_ms", f,
	                              PW_GATE_TIER_TOP, 5.0, 0.004, 0.08);
	r->s[quiet].gpu = r->s[enough].gpu = true;
	r->s[quiet].required_n = 6;   /* σ 2%, MDE 4%: 5.25 -> 6 */
	r->s[enough].required_n = 5;
	r->s[regressed].required_n = 6;
	evaluate(r);
	cr_assert_eq(r->sr[quiet].verdict, PW_GATE_SERIES_UNDER_POWERED);
	cr_assert_eq(r->sr[enough].verdict, PW_GATE_SERIES_WITHIN_NOISE);
	cr_assert_eq(r->sr[regressed].verdict, PW_GATE_SERIES_REGRESSED);
	cr_assert(r->sr[quiet].tested, "an under-powered series is tested: its p is in BH");
	cr_assert_eq(r->rr.n_tests, 3);
	cr_assert_eq(r->fr[f].n_under_powered, 1);
	/* the GPU series are certified at 4%: the practical arm is 0.7 × 4% */
	cr_assert_float_eq(r->sr[quiet].cmp.mde_pct, 4.0, 1e-12);
	cr_assert_float_eq(r->sr[quiet].cmp.practical_pct, 2.8, 1e-12);
	cr_assert_float_eq(r->sr[regressed].cmp.mde_pct, 1.0, 1e-12);
	pw_gate_policy pol;
	pw_gate_policy_default(&pol);
	cr_assert_float_eq(pw_gate_series_mde(&pol, &r->s[quiet]), 4.0, 1e-12);
	/* a tail-tier GPU series too: 4%, not 3% */
	r->s[quiet].tier = PW_GATE_TIER_TAIL;
	cr_assert_float_eq(pw_gate_series_mde(&pol, &r->s[quiet]), 4.0, 1e-12);
	release_free(r);
}

/* The required n the gate uses: the baseline's published one for the same
 * MDE, else computed from the baseline's σ with the request's MDE. */
Test(gate_eval, required_n_published_or_computed)
{
	/* published for 4%, asked at 4%: published */
	cr_assert_eq(pw_gate_required_n(true, 2.0, 7, 4.0, 4.0, 5), 7);
	/* a request's own MDE (2%): computed, 21.01·(2/2)² = 21.01 -> 22 */
	cr_assert_eq(pw_gate_required_n(true, 2.0, 7, 4.0, 2.0, 5), 22);
	/* a baseline stored before n was published: computed, σ 0.4% at 1% -> 5 */
	cr_assert_eq(pw_gate_required_n(true, 0.4, 0, 0.0, 1.0, 5), 5);
	/* no baseline: unknown */
	cr_assert_eq(pw_gate_required_n(false, 0.4, 5, 1.0, 1.0, 5), 0);
	/* the floor holds for a published n too */
	cr_assert_eq(pw_gate_required_n(true, 0.4, 5, 1.0, 1.0, 6), 6);
}

Test(gate_eval, bad_family_index_is_an_error)
{
	release *r = release_new();
	add_family(r, "fam", 0.05);
	size_t s = add_series(r, "x", 0, PW_GATE_TIER_TOP, 3.0, 0.004, 0.0);
	r->s[s].family = 5;
	pw_gate_policy pol;
	pw_gate_policy_default(&pol);
	char err[256] = "";
	cr_assert_eq(pw_gate_evaluate(&pol, r->fam, r->nfam, r->s, r->ns, r->sr, r->fr, &r->rr, err,
	                              sizeof err),
	             PW_ERR_INVALID);
	cr_assert(strstr(err, "family 5") != NULL, "%s", err);
	release_free(r);
}
