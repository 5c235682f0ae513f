/*
 * test_gate_numerics.c: the gate's "faster but wrong" check (§9,
 * services/gate/gate_numerics.c) on its own, and through pw_gate_evaluate:
 * an unregistered or registered win whose numerics fingerprint differs from
 * the baseline's blocks its family; the same numerics keep INVESTIGATE /
 * VALIDATED_WIN; runs without a fingerprint are "not checked".
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gate_eval.h"
#include "gate_numerics.h"
#include "test_noise.h"

#define FP_A "3f9a1c0d5e7b2a46"
#define FP_B "c0ffee0d5e7b2a46"

Test(gate_numerics, same_fingerprints_match)
{
	const char *base[] = {FP_A, FP_A, FP_A};
	const char *cand[] = {FP_A, FP_A};
	pw_gate_numerics_result r = pw_gate_numerics_check(base, 3, cand, 2);
	cr_assert_eq(r.state, PW_GATE_NUMERICS_MATCH);
	cr_assert_str_eq(r.baseline, FP_A);
	cr_assert_str_eq(r.candidate, FP_A);
	cr_assert_str_eq(pw_gate_numerics_name(r.state), "match");
}

Test(gate_numerics, one_different_candidate_run_is_a_mismatch)
{
	const char *base[] = {FP_A, FP_A};
	const char *cand[] = {FP_A, NULL, FP_B};
	pw_gate_numerics_result r = pw_gate_numerics_check(base, 2, cand, 3);
	cr_assert_eq(r.state, PW_GATE_NUMERICS_MISMATCH);
	cr_assert_str_eq(r.baseline, FP_A);
	cr_assert_str_eq(r.candidate, FP_B);
	cr_assert_str_eq(pw_gate_numerics_name(r.state), "mismatch");
}

Test(gate_numerics, the_baseline_is_what_most_of_its_runs_compute)
{
	/* a window that took in two nightlies after the numerics change landed:
	 * the candidate's new numerics are still not the baseline's */
	const char *base[] = {FP_A, FP_A, FP_A, FP_B, FP_A, FP_B};
	const char *cand[] = {FP_B, FP_B};
	pw_gate_numerics_result r = pw_gate_numerics_check(base, 6, cand, 2);
	cr_assert_eq(r.state, PW_GATE_NUMERICS_MISMATCH);
	cr_assert_str_eq(r.baseline, FP_A);
	cr_assert_str_eq(r.candidate, FP_B);
	const char *same[] = {FP_A};
	cr_assert_eq(pw_gate_numerics_check(base, 6, same, 1).state, PW_GATE_NUMERICS_MATCH);
	/* two fingerprints in equal numbers: the baseline's is not known */
	const char *tie[] = {FP_A, FP_B, NULL, FP_B, FP_A};
	r = pw_gate_numerics_check(tie, 5, same, 1);
	cr_assert_eq(r.state, PW_GATE_NUMERICS_NOT_CHECKED);
	cr_assert_null(r.baseline);
}

Test(gate_numerics, missing_fingerprints_are_not_checked)
{
	const char *base[] = {FP_A};
	const char *cand[] = {FP_A, ""};
	const char *none[] = {NULL, ""};
	/* a candidate run without one: no claim, even though the others match */
	pw_gate_numerics_result r = pw_gate_numerics_check(base, 1, cand, 2);
	cr_assert_eq(r.state, PW_GATE_NUMERICS_NOT_CHECKED);
	cr_assert_str_eq(pw_gate_numerics_name(r.state), "not_checked");
	/* no baseline fingerprint: nothing to compare with */
	r = pw_gate_numerics_check(none, 2, cand, 1);
	cr_assert_eq(r.state, PW_GATE_NUMERICS_NOT_CHECKED);
	cr_assert_null(r.baseline);
	cr_assert_str_eq(r.candidate, FP_A);
	/* no arrays at all (simulated or legacy runs), n = 0 */
	cr_assert_eq(pw_gate_numerics_check(NULL, 3, NULL, 5).state, PW_GATE_NUMERICS_NOT_CHECKED);
	cr_assert_eq(pw_gate_numerics_check(base, 1, NULL, 0).state, PW_GATE_NUMERICS_NOT_CHECKED);
	cr_assert_eq(pw_gate_numerics_check(NULL, 0, cand, 1).state, PW_GATE_NUMERICS_NOT_CHECKED);
}

/* ---- through the gate's evaluation */

typedef struct one {
	pw_gate_family_input fam[2];
	pw_gate_series_input s[2];
	pw_gate_series_result sr[2];
	pw_gate_family_result fr[2];
	pw_gate_release_result rr;
	double base[2][30], cand[2][5];
	const char *bfp[30], *cfp[2][5];
} one;

/* family j, one top-tier series 30 baseline runs at 3.0 ms, 5 candidate runs
 * shifted by shift, fingerprints FP_A on the baseline and cfp on the candidate */
static void setup(one *o, size_t j, double shift, const char *cfp)
{
	uint64_t rng = 7841917 + j;
	o->fam[j] = (pw_gate_family_input){.name = j ? "f1" : "f0", .spend_share = 0.05};
	for (size_t i = 0; i < 30; i++) {
		o->base[j][i] = 3.0 * (1.0 + 0.004 * noise(&rng));
		o->bfp[i] = FP_A;
	}
	for (size_t i = 0; i < 5; i++) {
		o->cand[j][i] = 3.0 * (1.0 + shift) * (1.0 + 0.004 * noise(&rng));
		o->cfp[j][i] = cfp;
	}
	pw_gate_series_input *s = &o->s[j];
	memset(s, 0, sizeof *s);
	s->series = j ? "f1/v6e-4/decode.B64/tpot_p50_ms" : "f0/v6e-4/decode.B64/tpot_p50_ms";
	s->family = j;
	s->tier = PW_GATE_TIER_TOP;
	s->direction = PW_COMPARE_LOWER_IS_BETTER;
	s->state = PW_GATE_STATE_ACTIVE;
	s->base = o->base[j];
	s->n_base = 30;
	s->cand = o->cand[j];
	s->n_cand = 5;
	s->base_numerics = o->bfp;
	s->cand_numerics = o->cfp[j];
}

static void evaluate(one *o)
{
	pw_gate_policy pol;
	pw_gate_policy_default(&pol);
	char err[256];
	cr_assert_eq(pw_gate_evaluate(&pol, o->fam, 2, o->s, 2, o->sr, o->fr, &o->rr, err,
	                              sizeof err),
	             PW_OK, "%s", err);
}

Test(gate_numerics, unregistered_win_with_other_numerics_blocks)
{
	one *o = calloc(1, sizeof *o);
	setup(o, 0, -0.04, FP_B); /* 4% faster, different numerics */
	setup(o, 1, -0.04, FP_A); /* 4% faster, same numerics */
	evaluate(o);
	cr_assert_eq(o->sr[0].verdict, PW_GATE_SERIES_NUMERICS_CHANGED, "%s",
	             pw_gate_series_verdict_name(o->sr[0].verdict));
	cr_assert_eq(o->sr[0].numerics.state, PW_GATE_NUMERICS_MISMATCH);
	cr_assert_str_eq(o->sr[0].numerics.baseline, FP_A);
	cr_assert_str_eq(o->sr[0].numerics.candidate, FP_B);
	cr_assert_eq(o->fr[0].verdict, PW_GATE_FAMILY_BLOCKING);
	cr_assert_eq(o->fr[0].n_numerics_changed, 1);
	cr_assert_eq(o->sr[1].verdict, PW_GATE_SERIES_INVESTIGATE);
	cr_assert_eq(o->sr[1].numerics.state, PW_GATE_NUMERICS_MATCH);
	cr_assert_eq(o->fr[1].verdict, PW_GATE_FAMILY_PASS);
	cr_assert_eq(o->rr.verdict, PW_GATE_FAMILY_BLOCKING);
	free(o);
}

Test(gate_numerics, registered_win_with_other_numerics_blocks)
{
	one *o = calloc(1, sizeof *o);
	setup(o, 0, -0.04, FP_B);
	setup(o, 1, -0.04, FP_A);
	for (int j = 0; j < 2; j++) {
		o->s[j].has_expected = true;
		o->s[j].expected_pct = -4.0;
	}
	evaluate(o);
	cr_assert_eq(o->sr[0].verdict, PW_GATE_SERIES_NUMERICS_CHANGED);
	cr_assert_eq(o->fr[0].verdict, PW_GATE_FAMILY_BLOCKING);
	cr_assert_eq(o->sr[1].verdict, PW_GATE_SERIES_VALIDATED_WIN);
	cr_assert_eq(o->fr[1].verdict, PW_GATE_FAMILY_VALIDATED_WIN);
	free(o);
}

Test(gate_numerics, without_fingerprints_a_win_stays_a_win_unchecked)
{
	one *o = calloc(1, sizeof *o);
	setup(o, 0, -0.04, NULL);
	setup(o, 1, -0.04, FP_A);
	o->s[1].base_numerics = NULL; /* a baseline of runs before fingerprints */
	evaluate(o);
	for (int j = 0; j < 2; j++) {
		cr_assert_eq(o->sr[j].verdict, PW_GATE_SERIES_INVESTIGATE);
		cr_assert_eq(o->sr[j].numerics.state, PW_GATE_NUMERICS_NOT_CHECKED);
	}
	cr_assert_eq(o->rr.verdict, PW_GATE_FAMILY_PASS);
	free(o);
}

Test(gate_numerics, a_regression_or_no_change_is_not_judged_by_numerics)
{
	/* the check is about wins: a different fingerprint on a within-noise
	 * series is reported (mismatch) but does not change its verdict */
	one *o = calloc(1, sizeof *o);
	setup(o, 0, 0.0, FP_B);
	setup(o, 1, 0.0, FP_A);
	evaluate(o);
	cr_assert_eq(o->sr[0].numerics.state, PW_GATE_NUMERICS_MISMATCH);
	cr_assert_neq(o->sr[0].verdict, PW_GATE_SERIES_NUMERICS_CHANGED);
	cr_assert_eq(o->fr[0].verdict, PW_GATE_FAMILY_PASS);
	free(o);
}
