/*
 * bisect_msg.c: BisectJob and Bisection from the bisector's state
 * (bisect_msg.h).
 */
#include "bisect_msg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfwatch/v1/bisect.pb-c.h"

pw_status pw_bisect_job_id(const char *bisection_id, uint32_t step, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s-%02u", bisection_id, step);
	return n < 0 || (size_t)n >= len ? PW_ERR_INVALID : PW_OK;
}

static char *s(const char *x)
{
	return (char *)(x ? x : "");
}

pw_status pw_bisect_job_pack(const char *bisection_id, const pw_bisect_target *t,
                             const pw_bisect_job *job, int64_t now_us, uint8_t **out,
                             size_t *len)
{
	char id[128], cl[48], base[48], picks[2][48];
	if (pw_bisect_job_id(bisection_id, job->step, id, sizeof id) != PW_OK)
		return PW_ERR_INVALID;
	Perfwatch__V1__BisectJob m = PERFWATCH__V1__BISECT_JOB__INIT;
	Perfwatch__V1__SeriesKey sk = PERFWATCH__V1__SERIES_KEY__INIT;
	Perfwatch__V1__RunKey rk = PERFWATCH__V1__RUN_KEY__INIT;
	Perfwatch__V1__Platform pf = PERFWATCH__V1__PLATFORM__INIT;
	Perfwatch__V1__Config cf = PERFWATCH__V1__CONFIG__INIT;
	char *pp[2];
	sk.model = s(t->model);
	sk.hlo_fingerprint = s(t->hlo_fingerprint);
	sk.platform = s(t->platform);
	sk.config = s(t->config);
	sk.metric = s(t->metric);
	pf.name = s(t->platform);
	cf.name = s(t->config);
	rk.model = s(t->model);
	rk.model_rev = s(t->model_rev);
	rk.hlo_fingerprint = s(t->hlo_fingerprint);
	rk.platform = &pf;
	rk.config = &cf;
	rk.firmware = s(t->firmware);
	m.job_id = id;
	m.bisection_id = (char *)bisection_id;
	m.purpose = (Perfwatch__V1__BisectPurpose)job->purpose;
	m.series_key = s(t->series_key);
	m.series = &sk;
	m.key = &rk;
	if (job->npicks) {
		pw_bisect_cl_name(job->base, -1, base, sizeof base);
		for (size_t i = 0; i < job->npicks && i < 2; i++)
			pp[i] = (char *)pw_bisect_cl_name(job->picks[i], -1, picks[i], sizeof picks[i]);
		m.cl = base;
		m.cl_number = job->base;
		m.base_cl = base;
		m.cherry_picks = pp;
		m.n_cherry_picks = job->npicks;
	} else {
		m.cl = (char *)pw_bisect_cl_name(job->cl, job->upstream_k, cl, sizeof cl);
		m.cl_number = job->cl;
	}
	m.repeats = job->repeats;
	m.requested_unix_us = now_us;
	size_t n = perfwatch__v1__bisect_job__get_packed_size(&m);
	*out = malloc(n ? n : 1);
	if (!*out)
		return PW_ERR_NOMEM;
	*len = perfwatch__v1__bisect_job__pack(&m, *out);
	return PW_OK;
}

pw_status pw_bisect_pack(const pw_bisect_log_head *h, const char *alert_id,
                         const char *changepoint_id, const pw_bisect_target *t,
                         const pw_bisect *b, const pw_bisect_log_step *steps, size_t nsteps,
                         const char *const *correlated, size_t ncorr, int64_t now_us,
                         uint8_t **out, size_t *len)
{
	pw_status st = PW_ERR_NOMEM;
	Perfwatch__V1__Bisection m = PERFWATCH__V1__BISECTION__INIT;
	Perfwatch__V1__SeriesKey sk = PERFWATCH__V1__SERIES_KEY__INIT;
	Perfwatch__V1__BisectStep *st_arr = calloc(nsteps ? nsteps : 1, sizeof *st_arr);
	Perfwatch__V1__BisectStep **st_ptr = calloc(nsteps ? nsteps : 1, sizeof *st_ptr);
	char (*ids)[128] = calloc(nsteps ? nsteps : 1, sizeof *ids);
	char (*rl)[48] = calloc(nsteps ? nsteps : 1, sizeof *rl);
	char (*rh)[48] = calloc(nsteps ? nsteps : 1, sizeof *rh);
	char **flagged = calloc(b->nflagged ? b->nflagged : 1, sizeof *flagged);
	char (*fl)[32] = calloc(b->nflagged ? b->nflagged : 1, sizeof *fl);
	if (!st_arr || !st_ptr || !ids || !rl || !rh || !flagged || !fl)
		goto out;
	char lo[32], hi[32], pair[2][32], upstream[64];
	char *inter[2];
	sk.model = s(t->model);
	sk.hlo_fingerprint = s(t->hlo_fingerprint);
	sk.platform = s(t->platform);
	sk.config = s(t->config);
	sk.metric = s(t->metric);
	m.bisection_id = s(h->bisection_id);
	m.alert_id = s(alert_id);
	m.changepoint_id = s(changepoint_id);
	m.series_key = s(t->series_key);
	m.series = &sk;
	m.config_hash = s(t->config_hash);
	m.range_lo = (char *)pw_bisect_cl_name(b->lo, -1, lo, sizeof lo);
	m.range_lo_number = b->lo;
	m.range_hi = (char *)pw_bisect_cl_name(b->hi, -1, hi, sizeof hi);
	m.range_hi_number = b->hi;
	m.n_cls = (uint32_t)(b->hi - b->lo);
	for (size_t i = 0; i < b->nflagged; i++)
		flagged[i] = (char *)pw_bisect_cl_name(b->flagged[i], -1, fl[i], sizeof fl[i]);
	m.flagged_cls = flagged;
	m.n_flagged_cls = b->nflagged;
	m.clean_level = b->clean_level;
	m.regressed_level = b->regressed_level;
	m.unit = s(h->unit);
	for (size_t i = 0; i < nsteps; i++) {
		Perfwatch__V1__BisectStep *x = &st_arr[i];
		perfwatch__v1__bisect_step__init(x);
		x->index = (uint32_t)i;
		if (pw_bisect_job_id(h->bisection_id, (uint32_t)i, ids[i], sizeof ids[i]) != PW_OK) {
			st = PW_ERR_INVALID;
			goto out;
		}
		x->job_id = ids[i];
		x->purpose = (Perfwatch__V1__BisectPurpose)steps[i].purpose;
		x->cl = (char *)(steps[i].npicks ? steps[i].picks[0] : steps[i].cl);
		x->median = steps[i].median;
		x->spread = steps[i].spread;
		x->n = steps[i].n;
		x->outcome = (Perfwatch__V1__StepOutcome)steps[i].outcome;
		x->finished_unix_us = steps[i].finished_us;
		if (steps[i].purpose == PW_BISECT_STEP) {
			x->range_lo = (char *)pw_bisect_cl_name(steps[i].range_lo, -1, rl[i], sizeof rl[i]);
			x->range_hi = (char *)pw_bisect_cl_name(steps[i].range_hi, -1, rh[i], sizeof rh[i]);
			x->range_n_cls = steps[i].range_n;
		}
		st_ptr[i] = x;
	}
	m.steps = st_ptr;
	m.n_steps = nsteps;
	m.culprit = s(h->culprit);
	if (b->confidence == PW_BISECT_INTERACTION) {
		inter[0] = (char *)pw_bisect_cl_name(b->pair_cls[0], -1, pair[0], sizeof pair[0]);
		inter[1] = (char *)pw_bisect_cl_name(b->pair_cls[1], -1, pair[1], sizeof pair[1]);
		m.interacting_cls = inter;
		m.n_interacting_cls = 2;
	}
	m.culprit_title = s(h->culprit_title);
	m.culprit_owner = s(h->culprit_owner);
	m.verified_adjacent_clean = b->adjacent_clean;
	m.cherry_pick_reproduced = b->pick_reproduced;
	m.confidence = (Perfwatch__V1__BisectionConfidence)b->confidence;
	m.status = (Perfwatch__V1__BisectionStatus)b->status;
	m.started_unix_us = h->started_us;
	m.updated_unix_us = now_us;
	m.builds = b->builds;
	m.reason = (char *)b->reason;
	m.full_range_fallback = b->full_range;
	m.culprit_upstream_index = b->culprit_upstream;
	if (b->culprit_upstream >= 0 && b->culprit) {
		pw_bisect_cl_name(b->culprit, b->culprit_upstream, upstream, sizeof upstream);
		m.culprit_upstream = upstream;
	}
	m.correlated_series = (char **)correlated;
	m.n_correlated_series = ncorr;
	m.builds_search = b->builds_search;
	m.builds_verify = b->builds_verify;
	m.builds_pairwise = b->builds_pairwise;
	m.builds_roll = b->builds_roll;
	m.metric = s(t->metric);
	size_t n = perfwatch__v1__bisection__get_packed_size(&m);
	*out = malloc(n ? n : 1);
	if (!*out)
		goto out;
	*len = perfwatch__v1__bisection__pack(&m, *out);
	st = PW_OK;
out:
	free(st_arr);
	free(st_ptr);
	free(ids);
	free(rl);
	free(rh);
	free(flagged);
	free(fl);
	return st;
}
