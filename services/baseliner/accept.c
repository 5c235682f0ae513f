/*
 * accept.c: accepted shifts, the pure decisions. See accept.h.
 */
#include "accept.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

pw_accept_cp_action pw_accept_cp_action_of(Perfwatch__V1__ChangepointStage stage,
                                           Perfwatch__V1__ChangepointAnnotation annotation)
{
	if (stage == PERFWATCH__V1__CHANGEPOINT_STAGE__CHANGEPOINT_STAGE_WITHDRAWN)
		return PW_ACCEPT_CP_WITHDRAW;
	/* a drift has no second level to restart from */
	if (stage == PERFWATCH__V1__CHANGEPOINT_STAGE__CHANGEPOINT_STAGE_TREND)
		return PW_ACCEPT_CP_IGNORE;
	/* an infra step froze the series through its fleet change already; a
	 * shift seen while frozen is in the re-baseline window anyway */
	if (annotation == PERFWATCH__V1__CHANGEPOINT_ANNOTATION__CHANGEPOINT_ANNOTATION_INFRA ||
	    annotation == PERFWATCH__V1__CHANGEPOINT_ANNOTATION__CHANGEPOINT_ANNOTATION_FROZEN)
		return PW_ACCEPT_CP_IGNORE;
	return PW_ACCEPT_CP_TRACK;
}

static double median_small(const double *v, size_t n)
{
	double s[PW_ACCEPT_NEWEST];
	for (size_t i = 0; i < n; i++) {
		size_t j = i;
		while (j > 0 && s[j - 1] > v[i]) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = v[i];
	}
	return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

pw_accept_verdict pw_accept_decide(double level_before, double level_after, size_t nightlies,
                                   const double *newest, size_t nnewest,
                                   uint32_t after_nightlies)
{
	if (after_nightlies == 0 || nightlies < after_nightlies || nnewest == 0)
		return PW_ACCEPT_WAIT;
	if (!isfinite(level_before) || !isfinite(level_after) || level_before == level_after)
		return PW_ACCEPT_WAIT;
	if (nnewest > PW_ACCEPT_NEWEST)
		nnewest = PW_ACCEPT_NEWEST;
	double m = median_small(newest, nnewest);
	if (!isfinite(m))
		return PW_ACCEPT_WAIT;
	return fabs(m - level_after) < fabs(m - level_before) ? PW_ACCEPT_HELD : PW_ACCEPT_FIXED;
}

pw_status pw_accept_id(const char *series_key, const char *first_shifted_build, char *buf,
                       size_t len)
{
	const char *end = strrchr(series_key, '/');
	size_t n = end ? (size_t)(end - series_key) : strlen(series_key);
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)series_key[i];
		h *= 0x100000001b3ULL;
	}
	h ^= (unsigned char)'@';
	h *= 0x100000001b3ULL;
	for (const char *p = first_shifted_build; *p; p++) {
		h ^= (unsigned char)*p;
		h *= 0x100000001b3ULL;
	}
	int k = snprintf(buf, len, "acc-%016" PRIx64, h);
	return k > 0 && (size_t)k < len ? PW_OK : PW_ERR_INVALID;
}
