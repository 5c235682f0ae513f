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
	out->split = median + (point - median) / 2.0;
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
