/*
 * noise_floor.c: when a noise-floor derivation is due, the groups of runs
 * with no software change, and one series' conclusion. See noise_floor.h;
 * the estimator is pw_stats_noise_floor (common/pw_stats.c).
 */
#include "noise_floor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pw_stats.h"

#define US_PER_DAY (86400LL * 1000000LL)

void pw_nf_params_default(pw_nf_params *p)
{
	p->every_us = 90 * US_PER_DAY;
	p->lookback_us = 90 * US_PER_DAY;
	p->min_groups = 5;
	p->min_samples = 30;
}

void pw_nf_params_from_config(const pw_config *cfg, pw_nf_params *p)
{
	pw_nf_params_default(p);
	p->every_us = pw_config_get_duration_ms(cfg, "baseliner.noise_floor.every") * 1000;
	p->lookback_us = pw_config_get_duration_ms(cfg, "baseliner.noise_floor.lookback") * 1000;
	p->min_groups = (size_t)pw_config_get_int(cfg, "baseliner.noise_floor.min_groups");
	p->min_samples = (size_t)pw_config_get_int(cfg, "baseliner.noise_floor.min_samples");
}

bool pw_nf_due(int64_t now_us, bool has_last, int64_t last_us, int64_t every_us)
{
	if (every_us <= 0)
		return false;
	if (!has_last)
		return true;
	return now_us >= last_us && now_us - last_us >= every_us;
}

pw_status pw_nf_group_key(const char *run_id, const char *build_id, const char *rebaseline_job_id,
                          char *out, size_t len)
{
	if (!run_id || !*run_id || !out || !len)
		return PW_ERR_INVALID;
	int k = rebaseline_job_id && *rebaseline_job_id
	                ? snprintf(out, len, "j:%s/%s", build_id ? build_id : "", rebaseline_job_id)
	                : snprintf(out, len, "r:%s", run_id);
	if (k < 0 || (size_t)k >= len) {
		out[0] = 0;
		return PW_ERR_INVALID;
	}
	return PW_OK;
}

void pw_nf_group_ids(const char *const *keys, size_t n, int64_t *out)
{
	int64_t g = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && strcmp(keys[i], keys[i - 1]) != 0)
			g++;
		out[i] = g;
	}
}

const char *pw_nf_status_name(pw_nf_status s)
{
	switch (s) {
	case PW_NF_DERIVED:
		return "derived";
	case PW_NF_INSUFFICIENT_DATA:
		return "insufficient_data";
	case PW_NF_INVALID:
		return "invalid";
	}
	return "invalid";
}

pw_status pw_nf_derive(const double *values, const int64_t *group, size_t n, const pw_nf_params *p,
                       double *work, pw_nf_result *out)
{
	if (!out || !p || (n && (!values || !group || !work)))
		return PW_ERR_INVALID;
	memset(out, 0, sizeof *out);
	out->floor_pct = NAN;
	out->level = NAN;
	/* the groups of two or more runs, counted before the estimator judges them */
	for (size_t i = 0; i < n;) {
		size_t m = 1;
		while (i + m < n && group[i + m] == group[i])
			m++;
		if (i + m < n && group[i + m] < group[i])
			return PW_ERR_INVALID;
		for (size_t j = i; j < i + m; j++)
			if (!isfinite(values[j]))
				return PW_ERR_INVALID;
		if (m >= 2) {
			out->n_groups++;
			out->n_samples += m;
			out->n_pairs += m * (m - 1) / 2;
		}
		i += m;
	}
	if (out->n_groups == 0 || out->n_groups < p->min_groups || out->n_samples < p->min_samples) {
		out->status = PW_NF_INSUFFICIENT_DATA;
		return PW_OK;
	}
	pw_noise_floor nf;
	pw_status st = pw_stats_noise_floor(values, group, n, work, &nf);
	if (st == PW_ERR_INVALID) {
		/* values and order were checked above: a group's median is not positive */
		out->status = PW_NF_INVALID;
		return PW_OK;
	}
	if (st != PW_OK)
		return st;
	out->status = PW_NF_DERIVED;
	out->floor_pct = 100.0 * nf.sigma_rel;
	out->level = nf.level;
	return PW_OK;
}

static int nf_sample_cmp(const void *a, const void *b)
{
	const pw_nf_sample *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->value > y->value) - (x->value < y->value);
}

pw_status pw_nf_derive_samples(pw_nf_sample *s, size_t n, const pw_nf_params *p, pw_nf_result *out)
{
	if (!out || !p || (n && !s))
		return PW_ERR_INVALID;
	for (size_t i = 0; i < n; i++)
		if (!s[i].key)
			return PW_ERR_INVALID;
	pw_status st = PW_ERR_NOMEM;
	qsort(s, n, sizeof *s, nf_sample_cmp);
	const char **keys = malloc((n ? n : 1) * sizeof *keys);
	double *values = malloc((n ? n : 1) * sizeof *values);
	int64_t *group = malloc((n ? n : 1) * sizeof *group);
	double *work = NULL;
	if (!keys || !values || !group)
		goto out;
	for (size_t i = 0; i < n; i++) {
		keys[i] = s[i].key;
		values[i] = s[i].value;
	}
	pw_nf_group_ids(keys, n, group);
	size_t wl = pw_stats_noise_floor_work_len(group, n);
	work = malloc((wl ? wl : 1) * sizeof *work);
	if (!work)
		goto out;
	st = pw_nf_derive(values, group, n, p, work, out);
out:
	free(work);
	free(group);
	free(values);
	free(keys);
	return st;
}

double pw_nf_change_pct(double previous_pct, double now_pct)
{
	if (!isfinite(previous_pct) || !isfinite(now_pct) || previous_pct == 0.0)
		return NAN;
	return (now_pct - previous_pct) / previous_pct * 100.0;
}
