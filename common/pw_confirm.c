/*
 * pw_confirm.c: the decision of a confirmation rerun (pw_confirm.h). The
 * median is pw_stats_median's, so that the rerun is judged with the same
 * estimator as the baseline it is compared with.
 */
#include "pw_confirm.h"

#include <math.h>
#include <string.h>

#include "pw_stats.h"

pw_status pw_confirm_band_of(double median, double point, double z, double mad, double k,
                             pw_confirm_band *out)
{
	memset(out, 0, sizeof *out);
	if (!isfinite(median) || !isfinite(point) || !isfinite(k) || k <= 0.0)
		return PW_ERR_INVALID;
	double sigma = (isfinite(z) && z != 0.0) ? fabs(point - median) / fabs(z) : mad;
	if (!isfinite(sigma) || sigma <= 0.0)
		return PW_ERR_INVALID;
	out->median = median;
	out->sigma = sigma;
	out->k = k;
	out->lo = median - k * sigma;
	out->hi = median + k * sigma;
	out->side = point > out->hi ? 1 : point < out->lo ? -1 : 0;
	return out->side ? PW_OK : PW_ERR_INVALID;
}

pw_status pw_confirm_decide(const pw_confirm_band *b, const double *x, size_t n, bool lower_is_better,
                            double *work, pw_confirm_result *out)
{
	memset(out, 0, sizeof *out);
	if (!b || (b->side != 1 && b->side != -1) || !(b->hi > b->lo))
		return PW_ERR_INVALID;
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(x[i]))
			work[m++] = x[i];
	if (m == 0)
		return PW_ERR_INVALID;
	double med;
	/* work[0..m) holds the finite values, work[n..n+m) the median's own workspace */
	pw_status st = pw_stats_median(work, m, work + n, &med);
	if (st != PW_OK)
		return st;
	out->n = m;
	out->median = med;
	out->reproduced = b->side > 0 ? med > b->hi : med < b->lo;
	out->regression = out->reproduced && ((b->side > 0) == lower_is_better);
	return PW_OK;
}

bool pw_confirm_joins_finding(const pw_confirm_band *b, double point, double finding_level)
{
	if (!b || (b->side != 1 && b->side != -1) || !(b->hi > b->lo) || !isfinite(point) || !isfinite(finding_level))
		return false;
	bool level_beyond = b->side > 0 ? finding_level > b->hi : finding_level < b->lo;
	return level_beyond && fabs(point - finding_level) <= b->k * b->sigma;
}

size_t pw_confirm_shift_start(const double *x, size_t n)
{
	if (n < 2)
		return 0;
	/* prefix sums make every split's cost O(1): SSE = Σx² − (Σx)²/m per segment */
	double total = 0.0, total2 = 0.0;
	for (size_t i = 0; i < n; i++) {
		total += x[i];
		total2 += x[i] * x[i];
	}
	size_t best = n - 1;
	double best_cost = INFINITY, s = 0.0, s2 = 0.0;
	for (size_t k = 1; k < n; k++) {
		s += x[k - 1];
		s2 += x[k - 1] * x[k - 1];
		double a = (double)k, b = (double)(n - k);
		double cost = (s2 - s * s / a) + ((total2 - s2) - (total - s) * (total - s) / b);
		if (cost <= best_cost) {
			best_cost = cost;
			best = k;
		}
	}
	return best;
}
