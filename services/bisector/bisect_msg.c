/*
 * bisect_msg.c: BisectJob and Bisection from the bisector's state
 * (bisect_msg.h).
 */
#include "bisect_msg.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfwatch/v1/bisect.pb-c.h"
#include "pw_alert_followup.h"
#include "pw_input.h"

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
		/* the attributor finds culprit-1 and the culprit by number (0 for a roll's cl/N@K) */
		x->cl_number = pw_bisect_cl_number(x->cl);
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

/* ---- Inputs ------------------------------------------------------------------------------ */

int64_t pw_bisect_cl_number(const char *cl)
{
	if (!cl || strncmp(cl, "cl/", 3) != 0 || cl[3] < '1' || cl[3] > '9')
		return 0;
	char *end;
	long long v = strtoll(cl + 3, &end, 10);
	return *end == 0 && v > 0 && v < INT64_MAX ? v : 0;
}

static bool set(const char *s)
{
	return s && s[0];
}

static pw_bisect_input dead_letter(Perfwatch__V1__DlqReason *reason, Perfwatch__V1__DlqReason r, char *detail,
                                   size_t dlen, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static pw_bisect_input dead_letter(Perfwatch__V1__DlqReason *reason, Perfwatch__V1__DlqReason r, char *detail,
                                   size_t dlen, const char *fmt, ...)
{
	*reason = r;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, dlen, fmt, ap);
	va_end(ap);
	return PW_BISECT_INPUT_DEAD;
}

/* Wire form and protobuf of payload: NULL and *reason / detail when refused. */
static void *decode(const ProtobufCMessageDescriptor *desc, const char *type, const void *payload, size_t len,
                    Perfwatch__V1__DlqReason *reason, char *detail, size_t dlen)
{
	if (!payload || len == 0) {
		dead_letter(reason, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, detail, dlen, "empty payload");
		return NULL;
	}
	char why[256];
	if (pw_input_check_wire(desc, payload, len, why, sizeof why) != PW_OK) {
		dead_letter(reason, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, detail, dlen, "%s: %s", type,
		            why);
		return NULL;
	}
	void *m = protobuf_c_message_unpack(desc, NULL, len, payload);
	if (!m)
		dead_letter(reason, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, detail, dlen,
		            "payload is not a %s (%zu bytes)", type, len);
	return m;
}

/* The checks of an unconfirmed outlier (CONFIRM or DEAD). */
static pw_bisect_input confirm_check(const Perfwatch__V1__Alert *al, Perfwatch__V1__DlqReason *reason, char *detail,
                                     size_t dlen)
{
	const Perfwatch__V1__DlqReason missing = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD,
	                               invalid = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	const Perfwatch__V1__SeriesKey *k = al->series;
	if (!set(al->alert_id))
		return dead_letter(reason, missing, detail, dlen, "unconfirmed alert has no alert_id");
	if (strlen(al->alert_id) > PW_BISECT_ID_MAX)
		return dead_letter(reason, invalid, detail, dlen, "alert_id of %zu bytes (at most %d)",
		                   strlen(al->alert_id), PW_BISECT_ID_MAX);
	if (!k || !set(k->model) || !set(k->hlo_fingerprint) || !set(k->platform) || !set(k->config) ||
	    !set(k->metric) || !set(al->series_key))
		return dead_letter(reason, missing, detail, dlen, "unconfirmed alert \"%.100s\" has an incomplete series key",
		                   al->alert_id);
	if (strlen(al->series_key) >= PW_SERIES_KEY_MAX || strlen(k->model) > PW_KEY_MODEL_MAX)
		return dead_letter(reason, invalid, detail, dlen, "unconfirmed alert \"%.100s\": series key of %zu bytes",
		                   al->alert_id, strlen(al->series_key));
	if (!set(al->point_run_id) || al->point_unix_us <= 0)
		return dead_letter(reason, missing, detail, dlen,
		                   "unconfirmed alert \"%.100s\" names no point (point_run_id \"%.60s\", point_unix_us %" PRId64
		                   "): nothing to rerun",
		                   al->alert_id, al->point_run_id ? al->point_run_id : "", al->point_unix_us);
	if (strlen(al->point_run_id) > PW_BISECT_ID_MAX - 3)
		return dead_letter(reason, invalid, detail, dlen, "unconfirmed alert \"%.100s\": point_run_id of %zu bytes (at most %d)",
		                   al->alert_id, strlen(al->point_run_id), PW_BISECT_ID_MAX - 3);
	if (al->point_unix_us > 7258118400000000LL)
		return dead_letter(reason, invalid, detail, dlen, "unconfirmed alert \"%.100s\": point_unix_us %" PRId64
		                   " is not a time in 1970..2200", al->alert_id, al->point_unix_us);
	if (!al->baseline || !al->observed || !al->delta)
		return dead_letter(reason, missing, detail, dlen,
		                   "unconfirmed alert \"%.100s\" lacks its baseline, observed value or delta", al->alert_id);
	if (!isfinite(al->baseline->median) || !isfinite(al->baseline->mad) || al->baseline->mad < 0 ||
	    !isfinite(al->observed->median) || !isfinite(al->delta->z_robust))
		return dead_letter(reason, invalid, detail, dlen,
		                   "unconfirmed alert \"%.100s\": baseline %g (noise %g), point %g, z %g are not all finite",
		                   al->alert_id, al->baseline->median, al->baseline->mad, al->observed->median,
		                   al->delta->z_robust);
	return PW_BISECT_INPUT_CONFIRM;
}

pw_bisect_input pw_bisect_alert_decode(const void *payload, size_t len, Perfwatch__V1__Alert **out,
                                       Perfwatch__V1__DlqReason *reason, char *detail, size_t dlen)
{
	*out = NULL;
	detail[0] = 0;
	Perfwatch__V1__Alert *al = decode(&perfwatch__v1__alert__descriptor, "perfwatch.v1.Alert", payload, len,
	                                  reason, detail, dlen);
	if (!al)
		return PW_BISECT_INPUT_DEAD;
	pw_bisect_input in = PW_BISECT_INPUT_ACCEPT;
	const Perfwatch__V1__DlqReason missing = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD,
	                               invalid = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	const Perfwatch__V1__SeriesKey *k = al->series;
	const Perfwatch__V1__AlertChangepoint *cp = al->changepoint;
	if (al->follow_up) {
		in = PW_BISECT_INPUT_FOLLOW_UP;
	} else if (al->kind == PERFWATCH__V1__ALERT_KIND__ALERT_KIND_UNCONFIRMED &&
	           al->source == PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_BASELINER) {
		in = confirm_check(al, reason, detail, dlen);
	} else if (al->kind != PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION ||
	           (al->source != PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_GATE &&
	            al->source != PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_WATCHER)) {
		in = PW_BISECT_INPUT_IGNORE;
	} else if (!set(al->alert_id)) {
		in = dead_letter(reason, missing, detail, dlen, "alert has no alert_id");
	} else if (strlen(al->alert_id) > PW_BISECT_ID_MAX) {
		in = dead_letter(reason, invalid, detail, dlen, "alert_id of %zu bytes (at most %d)", strlen(al->alert_id),
		                 PW_BISECT_ID_MAX);
	} else if (!k || !set(k->model) || !set(k->hlo_fingerprint) || !set(k->platform) || !set(k->config) ||
	           !set(k->metric) || !set(al->series_key)) {
		in = dead_letter(reason, missing, detail, dlen, "alert \"%.100s\" has an incomplete series key",
		                 al->alert_id);
	} else if (strlen(al->series_key) >= PW_SERIES_KEY_MAX || strlen(k->model) > PW_KEY_MODEL_MAX) {
		in = dead_letter(reason, invalid, detail, dlen,
		                 "alert \"%.100s\": series key of %zu bytes, model of %zu (at most %d, %d)",
		                 al->alert_id, strlen(al->series_key), strlen(k->model), PW_SERIES_KEY_MAX - 1,
		                 PW_KEY_MODEL_MAX);
	} else if (!pw_input_series_key_matches(al->series_key, k)) {
		in = dead_letter(reason, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT, detail, dlen,
		                 "alert \"%.100s\": series_key \"%.150s\" does not match its series "
		                 "\"%.40s/%.40s/%.40s/%.60s/%.40s\"",
		                 al->alert_id, al->series_key, k->model, k->hlo_fingerprint, k->platform, k->config,
		                 k->metric);
	} else if (set(al->config_hash) && strlen(al->config_hash) > PW_BISECT_ID_MAX) {
		in = dead_letter(reason, invalid, detail, dlen, "alert \"%.100s\": config_hash of %zu bytes",
		                 al->alert_id, strlen(al->config_hash));
	} else if ((al->delta && (!isfinite(al->delta->abs) || !isfinite(al->delta->pct))) ||
	           (al->baseline && (!isfinite(al->baseline->mad) || al->baseline->mad < 0))) {
		in = dead_letter(reason, invalid, detail, dlen,
		                 "alert \"%.100s\": delta %g (%g%%) over baseline noise %g is not a finite effect",
		                 al->alert_id, al->delta ? al->delta->abs : 0.0, al->delta ? al->delta->pct : 0.0,
		                 al->baseline ? al->baseline->mad : 0.0);
	} else if (cp && (set(cp->cl_range_lo) || set(cp->cl_range_hi)) &&
	           (pw_bisect_cl_number(cp->cl_range_lo) <= 0 || pw_bisect_cl_number(cp->cl_range_hi) <= 0 ||
	            pw_bisect_cl_number(cp->cl_range_hi) <= pw_bisect_cl_number(cp->cl_range_lo))) {
		in = dead_letter(reason, invalid, detail, dlen,
		                 "alert \"%.100s\": changepoint range \"%.40s\"..\"%.40s\" is not cl/N..cl/M with N < M",
		                 al->alert_id, cp->cl_range_lo ? cp->cl_range_lo : "", cp->cl_range_hi ? cp->cl_range_hi : "");
	} else if (cp && set(cp->changepoint_id) && strlen(cp->changepoint_id) > PW_BISECT_ID_MAX) {
		in = dead_letter(reason, invalid, detail, dlen, "alert \"%.100s\": changepoint_id of %zu bytes",
		                 al->alert_id, strlen(cp->changepoint_id));
	}
	/* what the bisector acts on is bounded: it is copied into follow-ups (pw_alert_followup.h) */
	if ((in == PW_BISECT_INPUT_ACCEPT || in == PW_BISECT_INPUT_CONFIRM) &&
	    !pw_alert_within_bounds(al, len, detail, dlen)) {
		*reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE;
		in = PW_BISECT_INPUT_DEAD;
	}
	if (in == PW_BISECT_INPUT_DEAD)
		perfwatch__v1__alert__free_unpacked(al, NULL);
	else
		*out = al;
	return in;
}

pw_bisect_input pw_bisect_cl_decode(const void *payload, size_t len, Perfwatch__V1__CompilerCl **out,
                                    Perfwatch__V1__DlqReason *reason, char *detail, size_t dlen)
{
	*out = NULL;
	detail[0] = 0;
	Perfwatch__V1__CompilerCl *c = decode(&perfwatch__v1__compiler_cl__descriptor, "perfwatch.v1.CompilerCl",
	                                      payload, len, reason, detail, dlen);
	if (!c)
		return PW_BISECT_INPUT_DEAD;
	pw_bisect_input in = PW_BISECT_INPUT_ACCEPT;
	const Perfwatch__V1__DlqReason invalid = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	const char *texts[] = {c->title, c->author, c->team, c->source, c->roll ? c->roll->upstream_repo : NULL};
	size_t longest = 0;
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
		if (texts[i] && strlen(texts[i]) > longest)
			longest = strlen(texts[i]);
	size_t lists[2] = {0, 0}; /* bytes of the benchmark globs and of the upstream ids, as stored */
	for (size_t i = 0; i < c->n_perf_benchmarks; i++) {
		if (strlen(c->perf_benchmarks[i]) > longest)
			longest = strlen(c->perf_benchmarks[i]);
		lists[0] += strlen(c->perf_benchmarks[i]) + 3;
	}
	for (size_t i = 0; c->roll && i < c->roll->n_upstream_ids; i++)
		lists[1] += strlen(c->roll->upstream_ids[i]) + 3;
	if (!set(c->cl) && c->cl_number == 0) {
		in = dead_letter(reason, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, detail, dlen,
		                 "CompilerCl has neither cl nor cl_number");
	} else if (c->cl_number <= 0 || pw_bisect_cl_number(c->cl) != c->cl_number) {
		in = dead_letter(reason, invalid, detail, dlen, "CL \"%.60s\" does not match cl_number %" PRId64,
		                 c->cl ? c->cl : "", c->cl_number);
	} else if (longest > PW_BISECT_TEXT_MAX) {
		in = dead_letter(reason, invalid, detail, dlen, "CL \"%.60s\": a text of %zu bytes (at most %d)", c->cl,
		                 longest, PW_BISECT_TEXT_MAX);
	} else if (c->n_perf_benchmarks > PW_BISECT_LIST_MAX ||
	           (c->roll && c->roll->n_upstream_ids > PW_BISECT_LIST_MAX) || lists[0] > PW_BISECT_TEXT_MAX ||
	           lists[1] > 2 * PW_BISECT_TEXT_MAX) {
		in = dead_letter(reason, invalid, detail, dlen,
		                 "CL \"%.60s\": %zu benchmarks (%zu bytes), %zu upstream ids (%zu bytes): at most %d "
		                 "each, %d and %d bytes",
		                 c->cl, c->n_perf_benchmarks, lists[0], c->roll ? c->roll->n_upstream_ids : 0, lists[1],
		                 PW_BISECT_LIST_MAX, PW_BISECT_TEXT_MAX, 2 * PW_BISECT_TEXT_MAX);
	} else if (c->roll && (c->roll->upstream_commits > PW_BISECT_ROLL_MAX ||
	                       c->roll->n_upstream_ids > c->roll->upstream_commits)) {
		in = dead_letter(reason, invalid, detail, dlen,
		                 "CL \"%.60s\": a roll of %" PRIu32 " commits listing %zu ids (at most %d commits, "
		                 "no more ids than commits)",
		                 c->cl, c->roll->upstream_commits, c->roll->n_upstream_ids, PW_BISECT_ROLL_MAX);
	} else if (c->submitted_unix_us < 0 || c->submitted_unix_us > 7258118400000000LL) {
		in = dead_letter(reason, invalid, detail, dlen, "CL \"%.60s\": submitted_unix_us %" PRId64
		                 " is not 0 or a time in 1970..2200", c->cl, c->submitted_unix_us);
	}
	if (in == PW_BISECT_INPUT_DEAD)
		perfwatch__v1__compiler_cl__free_unpacked(c, NULL);
	else
		*out = c;
	return in;
}

bool pw_bisect_range_known(const char *alert_id, int64_t lo, int64_t hi, const pw_bisect_feed *feed,
                           char *detail, size_t dlen)
{
	if (feed->lo_known && feed->hi_known)
		return true;
	char missing[96];
	if (!feed->lo_known && !feed->hi_known)
		snprintf(missing, sizeof missing, "cl/%" PRId64 " and cl/%" PRId64 " are", lo, hi);
	else
		snprintf(missing, sizeof missing, "cl/%" PRId64 " is", feed->lo_known ? hi : lo);
	if (feed->n > 0)
		snprintf(detail, dlen,
		         "alert \"%.100s\": range cl/%" PRId64 "..cl/%" PRId64 ": %s not in the CL feed "
		         "(cl/%" PRId64 "..cl/%" PRId64 ", %" PRId64 " CLs)",
		         alert_id ? alert_id : "", lo, hi, missing, feed->first, feed->last, feed->n);
	else
		snprintf(detail, dlen, "alert \"%.100s\": range cl/%" PRId64 "..cl/%" PRId64 ": %s not in the CL feed "
		         "(the feed is empty)", alert_id ? alert_id : "", lo, hi, missing);
	return false;
}
