/*
 * gate_eval.c: the release gate's per-series tests, the release-wide
 * Benjamini–Hochberg pass and the §8 family verdicts. See gate_eval.h; the
 * statistics are pw_stats's, observed − expected pw_expected's.
 */
#include "gate_eval.h"
#include "pw_expected.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *pw_gate_series_verdict_name(pw_gate_series_verdict v)
{
	switch (v) {
	case PW_GATE_SERIES_WITHIN_NOISE: return "WITHIN_NOISE";
	case PW_GATE_SERIES_TREND: return "TREND";
	case PW_GATE_SERIES_REGRESSED: return "REGRESSED";
	case PW_GATE_SERIES_INVESTIGATE: return "INVESTIGATE";
	case PW_GATE_SERIES_NUMERICS_CHANGED: return "NUMERICS_CHANGED";
	case PW_GATE_SERIES_VALIDATED_WIN: return "VALIDATED_WIN";
	case PW_GATE_SERIES_WIN_SHORTFALL: return "WIN_SHORTFALL";
	case PW_GATE_SERIES_FROZEN: return "FROZEN";
	case PW_GATE_SERIES_QUARANTINED: return "QUARANTINED";
	case PW_GATE_SERIES_BASELINING: return "BASELINING";
	case PW_GATE_SERIES_INSUFFICIENT_DATA: return "INSUFFICIENT_DATA";
	case PW_GATE_SERIES_UNDER_POWERED: return "UNDER_POWERED";
	}
	return "UNKNOWN";
}

const char *pw_gate_family_verdict_name(pw_gate_family_verdict v)
{
	switch (v) {
	case PW_GATE_FAMILY_PASS: return "PASS";
	case PW_GATE_FAMILY_VALIDATED_WIN: return "VALIDATED_WIN";
	case PW_GATE_FAMILY_WAIVED: return "WAIVED";
	case PW_GATE_FAMILY_FROZEN: return "FROZEN";
	case PW_GATE_FAMILY_INSUFFICIENT_DATA: return "INSUFFICIENT_DATA";
	case PW_GATE_FAMILY_P1: return "P1";
	case PW_GATE_FAMILY_BLOCKING: return "BLOCKING";
	}
	return "UNKNOWN";
}

void pw_gate_policy_default(pw_gate_policy *p)
{
	p->fdr_q = 0.05;
	p->mde_top_pct = 1.0;
	p->mde_tail_pct = 3.0;
	p->blocking_top_pct = 3.0;
	p->blocking_aggregate_pct = 1.0;
	p->practical_frac = PW_COMPARE_PRACTICAL_FRAC;
	p->noise_k = PW_COMPARE_NOISE_K;
	p->min_candidate_n = PW_POWER_FLOOR_N;
	p->min_baseline_n = 5;
	p->min_candidate_tail_n = PW_POWER_FLOOR_N;
	p->mde_gpu_pct = PW_POWER_MDE_GPU_PCT;
	p->top_n_requested = p->tail_n_requested = false;
}

double pw_gate_series_mde(const pw_gate_policy *policy, const pw_gate_series_input *in)
{
	double tier = in->tier == PW_GATE_TIER_TOP ? policy->mde_top_pct : policy->mde_tail_pct;
	return pw_stats_series_mde(tier, in->gpu, policy->mde_gpu_pct);
}

size_t pw_gate_series_min_n(const pw_gate_policy *policy, const pw_gate_series_input *in)
{
	return in->tier == PW_GATE_TIER_TOP ? policy->min_candidate_n : policy->min_candidate_tail_n;
}

size_t pw_gate_series_wait_n(const pw_gate_policy *policy, const pw_gate_series_input *in)
{
	size_t min = pw_gate_series_min_n(policy, in);
	bool requested = in->tier == PW_GATE_TIER_TOP ? policy->top_n_requested
	                                              : policy->tail_n_requested;
	return requested || in->required_n < min ? min : in->required_n;
}

size_t pw_gate_required_n(bool has_baseline, double sigma_pct, unsigned published_n,
                          double published_mde_pct, double mde_pct, size_t floor_n)
{
	if (!has_baseline)
		return 0;
	if (published_n > 0 && published_mde_pct == mde_pct)
		return published_n > floor_n ? published_n : floor_n;
	unsigned n = 0;
	if (floor_n < 1 || floor_n > PW_POWER_MAX_N ||
	    pw_stats_required_n(sigma_pct, mde_pct, PW_POWER_ALPHA, PW_POWER_TARGET, (unsigned)floor_n,
	                        &n) != PW_OK)
		return 0;
	return n;
}

/* The positive magnitude of a change in the worse direction (negative when better). */
static double worse_of(double delta_pct, pw_compare_direction dir)
{
	return dir == PW_COMPARE_LOWER_IS_BETTER ? delta_pct : -delta_pct;
}

/* Runs the series' test: raw, and for a registered win, against the registration. */
static pw_status test_series(const pw_gate_policy *policy, const pw_gate_series_input *in,
                             double *work, double *adj, pw_gate_series_result *out,
                             double *p_for_bh)
{
	pw_compare_opts opts;
	pw_compare_opts_init(&opts);
	opts.direction = in->direction;
	opts.mde_pct = pw_gate_series_mde(policy, in);
	opts.alpha = policy->fdr_q;
	opts.practical_pct = policy->practical_frac * opts.mde_pct;
	opts.noise_k = policy->noise_k;

	out->excess_pct = NAN;
	if (in->has_expected) {
		/* observed − expected against zero (pw_expected.h) */
		pw_expected_result x;
		pw_status st = pw_expected_compare(in->base, in->n_base, in->cand, in->n_cand,
		                                   in->expected_pct, &opts, work, adj, &x);
		if (st != PW_OK)
			return st;
		out->cmp = x.raw;
		out->excess_pct = x.excess_pct;
		*p_for_bh = x.against.p;
	} else {
		pw_status st = pw_stats_compare(in->base, in->n_base, in->cand, in->n_cand, &opts,
		                                work, &out->cmp);
		if (st != PW_OK)
			return st;
		*p_for_bh = out->cmp.p;
	}
	out->worse_pct = worse_of(out->cmp.effect_pct, in->direction);
	return PW_OK;
}

bool pw_gate_series_effect_passed(const pw_gate_series_input *in, const pw_gate_series_result *r)
{
	if (!r->tested)
		return false;
	return in->has_expected ? fabs(r->excess_pct) > r->cmp.threshold_pct : r->cmp.effect_filter_passed;
}

/* The series verdict once its q-value is known. */
static pw_gate_series_verdict series_verdict(const pw_gate_policy *policy,
                                             const pw_gate_series_input *in,
                                             const pw_gate_series_result *r)
{
	bool significant = r->q < policy->fdr_q;
	double threshold = r->cmp.threshold_pct;
	bool above = r->cmp.effect_filter_passed;

	/* nothing significant, from fewer runs than the series' noise needs: the
	 * test could not have seen a change of the MDE, so it is no "within noise" */
	bool short_of_power = in->required_n > in->n_cand;
	if (in->has_expected) {
		switch (pw_expected_classify(significant, above, r->worse_pct,
		                             worse_of(r->excess_pct, in->direction), threshold)) {
		case PW_EXPECTED_WITHIN_NOISE:
			return short_of_power ? PW_GATE_SERIES_UNDER_POWERED : PW_GATE_SERIES_WITHIN_NOISE;
		case PW_EXPECTED_VALIDATED: return PW_GATE_SERIES_VALIDATED_WIN;
		case PW_EXPECTED_SHORTFALL: return PW_GATE_SERIES_WIN_SHORTFALL;
		case PW_EXPECTED_REGRESSED: return PW_GATE_SERIES_REGRESSED;
		case PW_EXPECTED_OVERSHOOT: return PW_GATE_SERIES_INVESTIGATE;
		}
	}
	if (!significant)
		return short_of_power ? PW_GATE_SERIES_UNDER_POWERED : PW_GATE_SERIES_WITHIN_NOISE;
	if (!above)
		return PW_GATE_SERIES_TREND;
	return r->worse_pct > 0.0 ? PW_GATE_SERIES_REGRESSED : PW_GATE_SERIES_INVESTIGATE;
}

static pw_gate_family_verdict worse_family(pw_gate_family_verdict a, pw_gate_family_verdict b)
{
	return a > b ? a : b;
}

pw_status pw_gate_evaluate(const pw_gate_policy *policy, const pw_gate_family_input *families,
                           size_t n_families, const pw_gate_series_input *series,
                           size_t n_series, pw_gate_series_result *series_out,
                           pw_gate_family_result *family_out, pw_gate_release_result *release,
                           char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	size_t max_base = 0, max_cand = 0;
	for (size_t i = 0; i < n_series; i++) {
		if (series[i].family >= n_families)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "series \"%s\" names family %zu of %zu", series[i].series,
			               series[i].family, n_families);
		max_base = series[i].n_base > max_base ? series[i].n_base : max_base;
		max_cand = series[i].n_cand > max_cand ? series[i].n_cand : max_cand;
	}

	double *work = malloc((pw_stats_compare_work_len(max_base, max_cand) + max_cand + 1) *
	                      sizeof *work);
	double *p = malloc((n_series + 1) * sizeof *p);
	double *q = malloc((n_series + 1) * sizeof *q);
	size_t *idx = malloc((n_series + 1) * sizeof *idx);
	size_t *bh_work = malloc((n_series + 1) * sizeof *bh_work);
	double *sig_sum = calloc(n_families + 1, sizeof *sig_sum);
	size_t *sig_n = calloc(n_families + 1, sizeof *sig_n);
	if (!work || !p || !q || !idx || !bh_work || !sig_sum || !sig_n) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory evaluating %zu series",
		             n_series);
		goto out;
	}
	double *adj = work + pw_stats_compare_work_len(max_base, max_cand);

	/* 1. test every gateable series */
	size_t n_tests = 0;
	for (size_t i = 0; i < n_series; i++) {
		const pw_gate_series_input *in = &series[i];
		pw_gate_series_result *r = &series_out[i];
		memset(r, 0, sizeof *r);
		r->q = NAN;
		r->worse_pct = NAN;
		r->excess_pct = NAN;
		switch (in->state) {
		case PW_GATE_STATE_FROZEN: r->verdict = PW_GATE_SERIES_FROZEN; continue;
		case PW_GATE_STATE_QUARANTINED: r->verdict = PW_GATE_SERIES_QUARANTINED; continue;
		case PW_GATE_STATE_BASELINING: r->verdict = PW_GATE_SERIES_BASELINING; continue;
		case PW_GATE_STATE_ACTIVE: break;
		}
		if (in->n_cand < pw_gate_series_min_n(policy, in) ||
		    in->n_base < policy->min_baseline_n) {
			r->verdict = PW_GATE_SERIES_INSUFFICIENT_DATA;
			continue;
		}
		double pv;
		st = test_series(policy, in, work, adj, r, &pv);
		if (st != PW_OK) {
			pw_fail(st, errbuf, errlen, "series \"%s\": %s", in->series, pw_strerror(st));
			goto out;
		}
		r->tested = true;
		r->numerics = pw_gate_numerics_check(in->base_numerics, in->n_base, in->cand_numerics,
		                                     in->n_cand);
		p[n_tests] = pv;
		idx[n_tests] = i;
		n_tests++;
	}

	/* 2. one Benjamini–Hochberg pass over every test of the release */
	st = pw_stats_bh_qvalues(p, n_tests, bh_work, q);
	if (st != PW_OK) {
		pw_fail(st, errbuf, errlen, "benjamini-hochberg over %zu tests failed", n_tests);
		goto out;
	}
	for (size_t k = 0; k < n_tests; k++) {
		pw_gate_series_result *r = &series_out[idx[k]];
		r->q = q[k];
		r->verdict = series_verdict(policy, &series[idx[k]], r);
		/* §9: a win is a win only with the baseline's numerics */
		if ((r->verdict == PW_GATE_SERIES_INVESTIGATE ||
		     r->verdict == PW_GATE_SERIES_VALIDATED_WIN) &&
		    r->numerics.state == PW_GATE_NUMERICS_MISMATCH)
			r->verdict = PW_GATE_SERIES_NUMERICS_CHANGED;
	}

	/* 3. families: counts and spend-weighted impact (share × mean worse Δ of
	 * the family's significant tests, so that noise does not accumulate) */
	memset(family_out, 0, n_families * sizeof *family_out);
	for (size_t i = 0; i < n_series; i++) {
		const pw_gate_series_input *in = &series[i];
		const pw_gate_series_result *r = &series_out[i];
		pw_gate_family_result *f = &family_out[in->family];
		f->n_series++;
		f->n_with_runs += in->n_cand > 0;
		bool gated = in->state == PW_GATE_STATE_ACTIVE || in->state == PW_GATE_STATE_BASELINING;
		if (in->planned && gated && in->n_cand == 0)
			f->n_planned_missing++;
		if (!r->tested) {
			f->n_untested++;
			/* a series without a complete null window cannot be decided
			 * either: the family is short of data, not frozen */
			if (r->verdict == PW_GATE_SERIES_INSUFFICIENT_DATA ||
			    r->verdict == PW_GATE_SERIES_BASELINING)
				f->n_insufficient++;
			continue;
		}
		f->n_tested++;
		if (r->q < policy->fdr_q) {
			sig_sum[in->family] += r->worse_pct;
			sig_n[in->family]++;
		}
		switch (r->verdict) {
		case PW_GATE_SERIES_REGRESSED:
			f->n_regressed++;
			if (in->tier == PW_GATE_TIER_TOP && r->worse_pct >= policy->blocking_top_pct)
				f->n_blocking++;
			break;
		case PW_GATE_SERIES_VALIDATED_WIN: f->n_wins++; break;
		case PW_GATE_SERIES_INVESTIGATE: f->n_investigate++; break;
		case PW_GATE_SERIES_NUMERICS_CHANGED: f->n_numerics_changed++; break;
		case PW_GATE_SERIES_UNDER_POWERED: f->n_under_powered++; break;
		default: break;
		}
	}
	double aggregate = 0.0;
	for (size_t j = 0; j < n_families; j++) {
		pw_gate_family_result *f = &family_out[j];
		/* a planned benchmark never measured is a series short of data */
		f->n_planned_missing += families[j].planned_unmeasured;
		f->n_insufficient += families[j].planned_unmeasured;
		f->impact_pct = sig_n[j] ? families[j].spend_share * sig_sum[j] / (double)sig_n[j] : 0.0;
		aggregate += f->impact_pct;
	}
	/* 4. §8 verdicts, each family on its own series */
	release->verdict = PW_GATE_FAMILY_PASS;
	release->n_tests = n_tests;
	release->aggregate_impact_pct = aggregate;
	for (size_t j = 0; j < n_families; j++) {
		pw_gate_family_result *f = &family_out[j];
		pw_gate_family_verdict v = PW_GATE_FAMILY_PASS;
		bool aggregate_blocks = f->n_regressed > 0 && f->impact_pct > 0.0 &&
		                        (aggregate >= policy->blocking_aggregate_pct ||
		                         f->impact_pct >= policy->blocking_aggregate_pct);
		if (f->n_blocking > 0 || aggregate_blocks || f->n_numerics_changed > 0)
			v = PW_GATE_FAMILY_BLOCKING;
		else if (f->n_regressed > 0)
			v = PW_GATE_FAMILY_P1;
		else if (f->n_insufficient > 0 || f->n_series == 0) /* nothing measured: no decision */
			v = PW_GATE_FAMILY_INSUFFICIENT_DATA;
		else if (f->n_series > 0 && f->n_tested == 0)
			v = PW_GATE_FAMILY_FROZEN;
		else if (f->n_wins > 0)
			v = PW_GATE_FAMILY_VALIDATED_WIN;
		f->unwaived = v;
	}
	/* 5. an inheritor without a run of its own is decided through its
	 * representative (one level: a representative that inherits itself is
	 * not followed) */
	for (size_t j = 0; j < n_families; j++) {
		size_t rep = families[j].representative;
		if (families[j].inherits_from && families[j].inherits_from[0] && rep < n_families &&
		    rep != j && family_out[j].n_with_runs == 0 &&
		    !(families[rep].inherits_from && families[rep].inherits_from[0])) {
			family_out[j].unwaived = family_out[rep].unwaived;
			family_out[j].inherited = true;
		}
	}
	for (size_t j = 0; j < n_families; j++) {
		pw_gate_family_result *f = &family_out[j];
		pw_gate_family_verdict v = f->unwaived;
		if (families[j].waived && v != PW_GATE_FAMILY_PASS &&
		    v != PW_GATE_FAMILY_VALIDATED_WIN)
			v = PW_GATE_FAMILY_WAIVED;
		f->verdict = v;
		release->verdict = worse_family(release->verdict, v);
	}

out:
	free(work);
	free(p);
	free(q);
	free(idx);
	free(bh_work);
	free(sig_sum);
	free(sig_n);
	return st;
}
