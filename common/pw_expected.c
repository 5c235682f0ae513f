/*
 * pw_expected.c: observed − expected for a registered change. See
 * pw_expected.h.
 */
#include "pw_expected.h"

#include <math.h>

bool pw_expected_valid(double expected_pct)
{
	return isfinite(expected_pct) && 1.0 + expected_pct / 100.0 > 0.0;
}

double pw_expected_remove(double x, double expected_pct)
{
	if (!pw_expected_valid(expected_pct))
		return NAN;
	return x / (1.0 + expected_pct / 100.0);
}

pw_status pw_expected_compare(const double *base, size_t n_base, const double *cand,
                              size_t n_cand, double expected_pct, const pw_compare_opts *opts,
                              double *work, double *adj, pw_expected_result *out)
{
	if (!pw_expected_valid(expected_pct))
		return PW_ERR_INVALID;
	pw_status st = pw_stats_compare(base, n_base, cand, n_cand, opts, work, &out->raw);
	if (st != PW_OK)
		return st;
	/* observed − expected against zero: the candidate scaled back by the
	 * registered change, compared again */
	for (size_t i = 0; i < n_cand; i++)
		adj[i] = pw_expected_remove(cand[i], expected_pct);
	st = pw_stats_compare(base, n_base, adj, n_cand, opts, work, &out->against);
	if (st != PW_OK)
		return st;
	out->excess_pct = out->against.effect_pct;
	return PW_OK;
}

const char *pw_expected_outcome_name(pw_expected_outcome o)
{
	switch (o) {
	case PW_EXPECTED_WITHIN_NOISE: return "within_noise";
	case PW_EXPECTED_VALIDATED: return "validated";
	case PW_EXPECTED_SHORTFALL: return "shortfall";
	case PW_EXPECTED_REGRESSED: return "regressed";
	case PW_EXPECTED_OVERSHOOT: return "overshoot";
	}
	return "unknown";
}

pw_expected_outcome pw_expected_classify(bool significant, bool raw_above, double raw_worse_pct,
                                         double excess_worse_pct, double threshold_pct)
{
	if (!significant) /* moved as registered, within noise of the registration */
		return raw_above && raw_worse_pct < 0.0 ? PW_EXPECTED_VALIDATED
		                                        : PW_EXPECTED_WITHIN_NOISE;
	if (excess_worse_pct > 0.0)
		return raw_above && raw_worse_pct > 0.0 ? PW_EXPECTED_REGRESSED : PW_EXPECTED_SHORTFALL;
	/* better than registered: the extra is as suspect as any unregistered win */
	return -excess_worse_pct > threshold_pct ? PW_EXPECTED_OVERSHOOT : PW_EXPECTED_VALIDATED;
}
