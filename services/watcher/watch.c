/*
 * watch.c: per-series changepoint watching — the stream, the build ring,
 * localisation, annotation, routing and emitted-shift bookkeeping. See
 * watch.h; the detector is pw_changepoint's.
 */
#include "watch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pw_watch_series {
	pw_watch_params params;
	bool lower_is_better;
	bool top_tier;
	pw_cp_stream *stream;
	size_t total;            /* points appended so far */
	pw_watch_build *builds;  /* ring: the build of absolute point i is builds[i % max_points] */
	bool *frozen_at;         /* ring: whether the series was frozen when point i arrived */
	bool frozen;
	char frozen_event[PW_WATCH_EVENT_LEN];
	char (*emitted)[PW_WATCH_BUILD_LEN]; /* ring of emitted first-shifted builds */
	size_t n_emitted, emitted_head;
	struct fleet_mark {
		char event_id[PW_WATCH_EVENT_LEN];
		int64_t ts_us;
	} *marks;
	size_t n_marks, marks_head;
	pw_changepoint *cps;     /* room for the stream's answer */
	size_t cps_cap, n_cps;   /* ... and how many it holds */
	pw_changepoint *win_cps; /* the same, indexed from the window's first point */
	struct provisional {     /* shifts the early rule reported, awaiting PELT */
		char build_id[PW_WATCH_BUILD_LEN];
		pw_changepoint cp;   /* cp.index absolute: the first shifted point */
	} prov[PW_WATCH_MAX_PROVISIONAL];
	size_t n_prov;
	double *early_ref;       /* PW_CP_EARLY_MAX_REF doubles */
	bool drift_active;       /* a drift was reported (or re-found after a restart) */
	size_t drift_start;      /* its first point, absolute */
	int drift_side;          /* +1 rising, −1 falling */
	bool has_step;
	size_t last_step;        /* the newest reported level shift, absolute */
	struct step_mark {       /* ring of the reported level shifts: index and side */
		size_t index;
		int side;
	} steps[16];
	size_t n_steps, steps_head;
	struct registration {    /* registered changes, by CL (pw_watch_series_register) */
		char cl[PW_WATCH_BUILD_LEN];
		int64_t cl_number;
		double pct;
		bool judged;         /* reported (a shift over it, or the validated win) */
	} regs[PW_WATCH_MAX_REGISTERED];
	size_t n_regs;
	double *judge_work;      /* pw_stats_compare's work for the registration's judgement */
	double *judge_base, *judge_cand, *judge_adj;
};

/* Points before a registered CL a judgement compares with, at most (30: §4.2's window). */
#define JUDGE_BASE_MAX 30

const char *pw_watch_annotation_name(pw_watch_annotation a)
{
	switch (a) {
	case PW_WATCH_ANNOTATION_NONE: return "none";
	case PW_WATCH_ANNOTATION_INFRA: return "infra";
	case PW_WATCH_ANNOTATION_FROZEN: return "frozen";
	case PW_WATCH_ANNOTATION_REGISTERED: return "registered";
	}
	return "unknown";
}

const char *pw_watch_stage_name(pw_watch_stage st)
{
	switch (st) {
	case PW_WATCH_STAGE_CONFIRMED: return "confirmed";
	case PW_WATCH_STAGE_PROVISIONAL: return "provisional";
	case PW_WATCH_STAGE_CONFIRMING: return "confirmed";
	case PW_WATCH_STAGE_WITHDRAWN: return "withdrawn";
	case PW_WATCH_STAGE_TREND: return "trend";
	case PW_WATCH_STAGE_REGISTERED: return "confirmed";
	}
	return "unknown";
}

const char *pw_watch_routing_name(pw_watch_routing r)
{
	switch (r) {
	case PW_WATCH_ROUTE_NONE: return "none";
	case PW_WATCH_ROUTE_QUEUE: return "queue";
	case PW_WATCH_ROUTE_PAGE: return "page";
	}
	return "unknown";
}

void pw_watch_params_default(pw_watch_params *p)
{
	pw_cp_params_default(&p->cp);
	p->max_points = 400;
	p->same_shift_slack = 3;
	p->max_emitted = 16;
	p->max_fleet_marks = 8;
	pw_cp_early_params_default(&p->early);
	p->early.min_effect = p->cp.min_effect;
	p->early_confirm_within = 20;
	pw_drift_params_default(&p->drift);
	p->drift_every = 7;
	p->drift_slack = 30;
	p->drift_min_stretch = 30;
	p->registered_n = 5;
	p->registered_min_base = 10;
	p->registered_alpha = 0.05;
}

pw_watch_series *pw_watch_series_new(const pw_watch_params *params, bool lower_is_better,
                                     bool top_tier, char *errbuf, size_t errlen)
{
	if (!params || params->max_points < 2 * params->cp.min_segment || params->max_emitted < 1 ||
	    params->max_fleet_marks < 1 || params->early.max_ref > PW_CP_EARLY_MAX_REF ||
	    params->early.k > PW_CP_EARLY_MAX_REF ||
	    (params->early.k > 0 && params->early_confirm_within >= params->max_points) ||
	    params->registered_n < 3 || params->registered_n > 256 ||
	    params->registered_min_base < 2 || params->registered_min_base > JUDGE_BASE_MAX ||
	    !(params->registered_alpha > 0.0 && params->registered_alpha < 1.0)) {
		pw_fail(PW_ERR_INVALID, errbuf, errlen,
		        "watch parameters: max_points must hold two minimum segments, and the "
		        "emitted and fleet-mark rings at least one entry; the early rule's k and "
		        "max_ref at most 256 and early_confirm_within below max_points; a "
		        "registered change judged on 3 to 256 points against 2 to 30, alpha in (0, 1)");
		return NULL;
	}
	pw_watch_series *s = calloc(1, sizeof *s);
	if (!s)
		goto nomem;
	s->params = *params;
	s->lower_is_better = lower_is_better;
	s->top_tier = top_tier;
	if (pw_cp_stream_new(&params->cp, params->max_points, &s->stream, errbuf, errlen) != PW_OK)
		goto fail;
	s->builds = calloc(params->max_points, sizeof *s->builds);
	s->frozen_at = calloc(params->max_points, sizeof *s->frozen_at);
	s->emitted = calloc(params->max_emitted, sizeof *s->emitted);
	s->marks = calloc(params->max_fleet_marks, sizeof *s->marks);
	/* a segment has at least min_segment points, so that many shifts at most */
	s->cps_cap = params->max_points / params->cp.min_segment + 1;
	s->cps = calloc(s->cps_cap, sizeof *s->cps);
	s->win_cps = calloc(s->cps_cap, sizeof *s->win_cps);
	s->early_ref = calloc(PW_CP_EARLY_MAX_REF, sizeof *s->early_ref);
	size_t nb = JUDGE_BASE_MAX, nc = params->registered_n ? params->registered_n : 1;
	s->judge_work = calloc(pw_stats_compare_work_len(nb, nc), sizeof *s->judge_work);
	s->judge_base = calloc(nb, sizeof *s->judge_base);
	s->judge_cand = calloc(nc, sizeof *s->judge_cand);
	s->judge_adj = calloc(nc, sizeof *s->judge_adj);
	if (!s->builds || !s->frozen_at || !s->emitted || !s->marks || !s->cps || !s->win_cps ||
	    !s->early_ref || !s->judge_work || !s->judge_base || !s->judge_cand || !s->judge_adj)
		goto nomem;
	return s;
nomem:
	pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory creating a watched series");
fail:
	pw_watch_series_free(s);
	return NULL;
}

void pw_watch_series_free(pw_watch_series *s)
{
	if (!s)
		return;
	pw_cp_stream_free(s->stream);
	free(s->builds);
	free(s->frozen_at);
	free(s->emitted);
	free(s->marks);
	free(s->cps);
	free(s->win_cps);
	free(s->early_ref);
	free(s->judge_work);
	free(s->judge_base);
	free(s->judge_cand);
	free(s->judge_adj);
	free(s);
}

void pw_watch_series_fleet_change(pw_watch_series *s, const char *event_id, int64_t ts_us)
{
	/* a change already marked is kept once (it may arrive by two ways) */
	for (size_t i = 0; i < s->n_marks; i++)
		if (strncmp(s->marks[i].event_id, event_id, sizeof s->marks[i].event_id - 1) == 0 &&
		    s->marks[i].ts_us == ts_us)
			return;
	struct fleet_mark *m = &s->marks[s->marks_head];
	snprintf(m->event_id, sizeof m->event_id, "%s", event_id);
	m->ts_us = ts_us;
	s->marks_head = (s->marks_head + 1) % s->params.max_fleet_marks;
	if (s->n_marks < s->params.max_fleet_marks)
		s->n_marks++;
}

void pw_watch_series_set_frozen(pw_watch_series *s, bool frozen, const char *event_id)
{
	s->frozen = frozen;
	snprintf(s->frozen_event, sizeof s->frozen_event, "%s", frozen && event_id ? event_id : "");
}

void pw_watch_series_mark_emitted(pw_watch_series *s, const char *build_id)
{
	snprintf(s->emitted[s->emitted_head], PW_WATCH_BUILD_LEN, "%s", build_id);
	s->emitted_head = (s->emitted_head + 1) % s->params.max_emitted;
	if (s->n_emitted < s->params.max_emitted)
		s->n_emitted++;
}

size_t pw_watch_series_points(const pw_watch_series *s)
{
	return s->total;
}

static bool was_emitted(const pw_watch_series *s, const char *build_id)
{
	for (size_t k = 0; k < s->n_emitted; k++)
		if (strcmp(s->emitted[k], build_id) == 0)
			return true;
	return false;
}

/* Whether the ring still holds absolute point i. */
static bool in_ring(const pw_watch_series *s, size_t i)
{
	return i < s->total && s->total - i <= s->params.max_points;
}

static const pw_watch_build *build_at(const pw_watch_series *s, size_t i)
{
	return &s->builds[i % s->params.max_points];
}

/* A shift at i is one already emitted when an emitted build lies within the slack. */
static bool same_as_emitted(const pw_watch_series *s, size_t i)
{
	size_t slack = s->params.same_shift_slack;
	size_t lo = i > slack ? i - slack : 0;
	for (size_t j = lo; j <= i + slack; j++)
		if (in_ring(s, j) && was_emitted(s, build_at(s, j)->build_id))
			return true;
	return false;
}

/* The fleet change that took effect in (before, after], if any. */
static const struct fleet_mark *fleet_mark_between(const pw_watch_series *s, int64_t before,
                                                   int64_t after)
{
	for (size_t k = 0; k < s->n_marks; k++)
		if (s->marks[k].ts_us > before && s->marks[k].ts_us <= after)
			return &s->marks[k];
	return NULL;
}

/* value with the registered changes its build (head CL cl_number) includes taken out */
static double observed_minus_expected(const pw_watch_series *s, double value, int64_t cl_number)
{
	for (size_t k = 0; k < s->n_regs; k++)
		if (s->regs[k].cl_number <= cl_number)
			value = pw_expected_remove(value, s->regs[k].pct);
	return value;
}

/* The factor a build's points carry from the registered changes it includes. */
static double factor_at(const pw_watch_series *s, int64_t cl_number)
{
	return 1.0 / observed_minus_expected(s, 1.0, cl_number);
}

/* A change the worse way is positive. */
static double worse_pct(const pw_watch_series *s, double pct)
{
	return s->lower_is_better ? pct : -pct;
}

/* The registrations of CLs in (after, upto]: marked judged; the first one's CL into cl. */
static bool registered_between(pw_watch_series *s, int64_t after, int64_t upto, char *cl,
                               size_t cl_len)
{
	bool any = false;
	for (size_t k = 0; k < s->n_regs; k++)
		if (s->regs[k].cl_number > after && s->regs[k].cl_number <= upto) {
			if (!any)
				snprintf(cl, cl_len, "%s", s->regs[k].cl);
			s->regs[k].judged = true;
			any = true;
		}
	return any;
}

pw_status pw_watch_series_register(pw_watch_series *s, const char *cl, int64_t cl_number,
                                   double expected_pct, bool judged, char *errbuf, size_t errlen)
{
	if (!pw_expected_valid(expected_pct))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "registered change %g%% of \"%s\" cannot be taken out of a value",
		               expected_pct, cl);
	if (s->total > 0)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "registration of \"%s\" after the series' points: rebuild the series", cl);
	struct registration *r = NULL;
	for (size_t k = 0; k < s->n_regs && !r; k++)
		if (s->regs[k].cl_number == cl_number)
			r = &s->regs[k];
	if (!r) {
		if (s->n_regs == PW_WATCH_MAX_REGISTERED)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "more than %d registered changes on one series (\"%s\" left out)",
			               PW_WATCH_MAX_REGISTERED, cl);
		r = &s->regs[s->n_regs++];
	}
	snprintf(r->cl, sizeof r->cl, "%s", cl);
	r->cl_number = cl_number;
	r->pct = expected_pct;
	r->judged = judged;
	return PW_OK;
}

bool pw_watch_series_registered(const pw_watch_series *s, int64_t cl_number, double expected_pct)
{
	for (size_t k = 0; k < s->n_regs; k++)
		if (s->regs[k].cl_number == cl_number)
			return fabs(s->regs[k].pct - expected_pct) <= 1e-9 * (1.0 + fabs(expected_pct));
	return false;
}

static void describe(pw_watch_series *s, const pw_changepoint *cp, pw_watch_event *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->cp = *cp;
	double delta = cp->after - cp->before;
	ev->regression = s->lower_is_better ? delta > 0.0 : delta < 0.0;
	ev->last_clean = *build_at(s, cp->index - 1);
	ev->first_shifted = *build_at(s, cp->index);

	const struct fleet_mark *m =
		fleet_mark_between(s, ev->last_clean.ts_us, ev->first_shifted.ts_us);
	if (m) {
		ev->annotation = PW_WATCH_ANNOTATION_INFRA;
		snprintf(ev->fleet_event_id, sizeof ev->fleet_event_id, "%s", m->event_id);
	} else if (s->frozen_at[cp->index % s->params.max_points]) {
		ev->annotation = PW_WATCH_ANNOTATION_FROZEN;
		snprintf(ev->fleet_event_id, sizeof ev->fleet_event_id, "%s", s->frozen_event);
	}
	if (ev->annotation != PW_WATCH_ANNOTATION_NONE)
		ev->routing = PW_WATCH_ROUTE_NONE;
	else if (ev->regression && s->top_tier)
		ev->routing = PW_WATCH_ROUTE_PAGE;
	else
		ev->routing = PW_WATCH_ROUTE_QUEUE;

	/* the detectors see observed − expected: the levels as measured put the
	 * registered changes back in */
	ev->level_before = cp->before * factor_at(s, ev->last_clean.cl_number);
	ev->level_after = cp->after * factor_at(s, ev->first_shifted.cl_number);
	ev->expected = PW_EXPECTED_WITHIN_NOISE;
	if (!registered_between(s, ev->last_clean.cl_number, ev->first_shifted.cl_number,
	                        ev->registered_cl, sizeof ev->registered_cl))
		return;
	/* a registered CL in the range: the shift is what moved beyond the
	 * registration, judged by the gate's rule (the detector found it:
	 * significant; the filter is min_effect) */
	ev->expected_pct = 100.0 * (factor_at(s, ev->first_shifted.cl_number) /
	                            factor_at(s, ev->last_clean.cl_number) - 1.0);
	if (ev->annotation != PW_WATCH_ANNOTATION_NONE)
		return;
	double threshold = 100.0 * s->params.cp.min_effect;
	double raw = ev->level_before != 0.0 ? 100.0 * (ev->level_after / ev->level_before - 1.0) : 0.0;
	double excess = cp->before != 0.0 ? 100.0 * (cp->after / cp->before - 1.0) : 0.0;
	ev->expected = pw_expected_classify(true, fabs(raw) > threshold, worse_pct(s, raw),
	                                    worse_pct(s, excess), threshold);
	if (ev->expected == PW_EXPECTED_REGRESSED)
		return; /* worse than before the CL: a regression like any other */
	ev->annotation = PW_WATCH_ANNOTATION_REGISTERED;
	ev->routing = ev->expected == PW_EXPECTED_VALIDATED ? PW_WATCH_ROUTE_NONE
	                                                    : PW_WATCH_ROUTE_QUEUE;
}

pw_status pw_watch_series_load(pw_watch_series *s, double value, const pw_watch_build *build,
                               char *errbuf, size_t errlen)
{
	pw_status st = pw_cp_stream_append(s->stream,
	                                   observed_minus_expected(s, value, build->cl_number), errbuf,
	                                   errlen);
	if (st != PW_OK)
		return st;
	s->builds[s->total % s->params.max_points] = *build;
	s->frozen_at[s->total % s->params.max_points] = s->frozen;
	s->total++;
	return PW_OK;
}

pw_status pw_watch_series_append(pw_watch_series *s, double value, const pw_watch_build *build,
                                 pw_watch_event *out, size_t cap, size_t *nout, char *errbuf,
                                 size_t errlen)
{
	*nout = 0;
	pw_status st = pw_watch_series_load(s, value, build, errbuf, errlen);
	if (st != PW_OK)
		return st;
	return pw_watch_series_scan(s, out, cap, nout, errbuf, errlen);
}

/* The provisional shift within the slack of absolute point i, or -1. */
static int provisional_near(const pw_watch_series *s, size_t i)
{
	size_t slack = s->params.same_shift_slack;
	for (size_t k = 0; k < s->n_prov; k++) {
		size_t j = s->prov[k].cp.index;
		if ((j > i ? j - i : i - j) <= slack)
			return (int)k;
	}
	return -1;
}

/*
 * The provisional shift PELT's cp confirms: within the slack of it and the
 * same way. A step the other way a few points from a reported one is another
 * shift (a regression landing days after a reported win).
 */
static int provisional_same(const pw_watch_series *s, const pw_changepoint *cp)
{
	size_t slack = s->params.same_shift_slack;
	bool up = cp->after > cp->before;
	for (size_t k = 0; k < s->n_prov; k++) {
		size_t j = s->prov[k].cp.index;
		if ((j > cp->index ? j - cp->index : cp->index - j) <= slack &&
		    (s->prov[k].cp.after > s->prov[k].cp.before) == up)
			return (int)k;
	}
	return -1;
}

static void provisional_remove(pw_watch_series *s, size_t k)
{
	s->prov[k] = s->prov[--s->n_prov];
}

static void provisional_add(pw_watch_series *s, const pw_changepoint *cp)
{
	if (s->n_prov == PW_WATCH_MAX_PROVISIONAL) {
		/* the oldest gives way: it counts as emitted (never reported twice) */
		size_t old = 0;
		for (size_t k = 1; k < s->n_prov; k++)
			if (s->prov[k].cp.index < s->prov[old].cp.index)
				old = k;
		pw_watch_series_mark_emitted(s, s->prov[old].build_id);
		provisional_remove(s, old);
	}
	struct provisional *p = &s->prov[s->n_prov++];
	p->cp = *cp;
	snprintf(p->build_id, sizeof p->build_id, "%s", build_at(s, cp->index)->build_id);
}

void pw_watch_series_mark_provisional(pw_watch_series *s, const char *build_id, double before,
                                      double after, double p)
{
	for (size_t i = s->total; i-- > 0 && in_ring(s, i);) {
		if (strcmp(build_at(s, i)->build_id, build_id) != 0)
			continue;
		if (i > 0 && in_ring(s, i - 1) && strcmp(build_at(s, i - 1)->build_id, build_id) == 0)
			continue; /* the build's first point is the shift's */
		pw_changepoint cp = {.index = i, .before = before, .after = after,
		                     .rel_change = before != 0.0 ? (after - before) / before : NAN,
		                     .p = p, .noise = 0.0};
		if (i > 0 && in_ring(s, i - 1)) {
			provisional_add(s, &cp);
			return;
		}
		break;
	}
	pw_watch_series_mark_emitted(s, build_id);
}

/*
 * The early rule over the early.k points before absolute point end
 * (pw_cp_early_shift): end is s->total for the newest points; a smaller end
 * applies the rule as it stood when point end - 1 was the newest (a loaded
 * history, pw_watch_series_scan_loaded).
 */
static pw_status early_scan_at(pw_watch_series *s, size_t end, pw_watch_event *out, size_t cap,
                               size_t *nout)
{
	const pw_cp_early_params *ep = &s->params.early;
	size_t k = ep->k;
	if (k == 0 || end > s->total || end < k + ep->min_ref + 1 || *nout == cap)
		return PW_OK;
	size_t first = end - k;
	if (!in_ring(s, first - 1))
		return PW_OK;
	/* k nightlies, not repeats of one: every point its own build */
	for (size_t i = first; i < end; i++)
		if (strcmp(build_at(s, i - 1)->build_id, build_at(s, i)->build_id) == 0)
			return PW_OK;
	if (same_as_emitted(s, first) || provisional_near(s, first) >= 0)
		return PW_OK; /* this shift is reported already */
	size_t wn = 0, off = 0;
	const double *w = pw_cp_stream_window(s->stream, &wn, &off);
	size_t lo = off;
	size_t max_ref = ep->max_ref ? ep->max_ref : PW_CP_EARLY_MAX_REF;
	if (first > lo + max_ref)
		lo = first - max_ref;
	if (!in_ring(s, lo))
		lo = s->total - s->params.max_points;
	/* the reference is the current level: it starts after the last reported shift */
	for (size_t j = first; j-- > lo;) {
		bool shift = was_emitted(s, build_at(s, j)->build_id);
		for (size_t q = 0; q < s->n_prov && !shift; q++)
			shift = s->prov[q].cp.index == j;
		if (shift) {
			lo = j;
			break;
		}
	}
	size_t m = first - lo;
	if (m < ep->min_ref || lo < off || s->total - off != wn)
		return PW_OK;
	memcpy(s->early_ref, w + (lo - off), m * sizeof *s->early_ref);
	pw_cp_early e;
	pw_status st = pw_cp_early_shift(s->early_ref, m, w + (first - off), k, ep, &e);
	if (st != PW_OK || !e.found)
		return st;
	if (s->drift_active && e.side == s->drift_side && first + s->params.drift_slack >= s->drift_start)
		return PW_OK; /* the reported drift going on, not a step */
	/* the shift may be older than the newest k (a restart, a first shifted
	 * nightly that missed the rule by a hair): it starts at the earliest of an
	 * unbroken run of points beyond the threshold on the same side, always on
	 * a build's first point */
	size_t start = first;
	while (start - 1 > lo && in_ring(s, start - 1) &&
	       e.side * (w[start - 1 - off] - e.level) > e.threshold)
		start--;
	while (start < first && strcmp(build_at(s, start - 1)->build_id, build_at(s, start)->build_id) == 0)
		start++;
	if (start != first && (same_as_emitted(s, start) || provisional_near(s, start) >= 0))
		return PW_OK;
	pw_changepoint cp = {
		.index = start,
		.before = e.level,
		.after = e.after,
		.rel_change = e.level != 0.0 ? (e.after - e.level) / e.level : NAN,
		.p = e.p,
		.noise = e.sigma,
	};
	pw_watch_event *ev = &out[(*nout)++];
	describe(s, &cp, ev);
	ev->stage = PW_WATCH_STAGE_PROVISIONAL;
	ev->reported_after = end - start;
	provisional_add(s, &cp);
	return PW_OK;
}

/* The early rule over the newest early.k points. */
static pw_status early_scan(pw_watch_series *s, pw_watch_event *out, size_t cap, size_t *nout)
{
	return early_scan_at(s, s->total, out, cap, nout);
}

void pw_watch_series_mark_drift(pw_watch_series *s, const char *build_id, bool rising)
{
	pw_watch_series_mark_emitted(s, build_id);
	for (size_t i = s->total; i-- > 0 && in_ring(s, i);)
		if (strcmp(build_at(s, i)->build_id, build_id) == 0) {
			s->drift_active = true;
			s->drift_start = i;
			s->drift_side = rising ? 1 : -1;
			return;
		}
}

/*
 * The drift detector over the points since the newest reported level shift
 * (pw_drift_detect): a drift not reported yet is one TREND event, queued;
 * from then on PELT's steps in its direction from its start on are its
 * staircase and are not reported (as `perfwatch changepoints` does).
 */
static pw_status drift_scan(pw_watch_series *s, pw_watch_event *out, size_t cap, size_t *nout)
{
	if (s->params.drift_every == 0 || s->total % s->params.drift_every != 0 || *nout == cap)
		return PW_OK;
	size_t wn = 0, off = 0;
	const double *w = pw_cp_stream_window(s->stream, &wn, &off);
	if (s->total - off != wn || wn < s->params.drift.min_points)
		return PW_OK;
	/* the whole window: the stairs PELT reported before the drift was long
	 * enough to see are part of it; a window with a real step in it fits no
	 * hinge and gives none */
	size_t lo = off, nw = 0;
	for (size_t k = 0; k < s->n_cps; k++)
		if (s->cps[k].index >= off && s->cps[k].index - off < wn) {
			s->win_cps[nw] = s->cps[k];
			s->win_cps[nw++].index -= off;
		}
	pw_drift d;
	pw_status st = pw_drift_detect(w, wn, s->win_cps, nw, &s->params.drift, &d);
	if (st != PW_OK)
		return st;
	if (!d.found || d.rate == 0.0)
		return PW_OK;
	size_t start = lo + d.start;
	int side = d.rate > 0.0 ? 1 : -1;
	/* reported steps in the window: one real step also fits a hinge on a
	 * coarse block grid, so a drift over reported steps needs a staircase of
	 * at least two in its direction and none against it */
	size_t with = 0, against = 0;
	for (size_t k = 0; k < s->n_steps; k++) {
		if (s->steps[k].index < off)
			continue;
		with += s->steps[k].side == side;
		against += s->steps[k].side != side;
	}
	if (against > 0 || with == 1)
		return PW_OK;
	if (with >= 2) {
		/* the longest tread between reported steps must rise with the drift
		 * (Theil–Sen slope >= half its rate); a staircase's treads are flat */
		size_t idx[17], m = 0;
		for (size_t k = 0; k < s->n_steps; k++)
			if (s->steps[k].index >= off)
				idx[m++] = s->steps[k].index;
		idx[m++] = s->total;
		for (size_t a = 1; a < m; a++) /* insertion sort: a handful */
			for (size_t b = a; b > 0 && idx[b - 1] > idx[b]; b--) {
				size_t t = idx[b];
				idx[b] = idx[b - 1];
				idx[b - 1] = t;
			}
		size_t best = 0, blo = 0;
		for (size_t a = 0; a + 1 < m; a++)
			if (idx[a + 1] - idx[a] > best) {
				best = idx[a + 1] - idx[a];
				blo = idx[a];
			}
		if (best > 512)
			best = 512;
		double slope = 0.0;
		if (best < 8 || pw_drift_theil_sen(w + (blo - off), best, &slope) != PW_OK ||
		    slope * side < 0.5 * fabs(d.rate))
			return PW_OK;
	}
	if (start == 0 || !in_ring(s, start - 1))
		start++;
	/* a fresh step (PELT reports one about 5 to 10 points after it) fits a
	 * short ramp at the end of the window: a drift is a long stretch */
	if (start >= s->total || s->total - start < s->params.drift_min_stretch)
		return PW_OK;
	size_t slack = s->params.drift_slack;
	bool known = s->drift_active && side == s->drift_side &&
	             (start > s->drift_start ? start - s->drift_start : s->drift_start - start) <= slack;
	if (known) {
		if (!s->drift_active) {
			s->drift_active = true;
			s->drift_start = start;
			s->drift_side = side;
		}
		return PW_OK;
	}
	double before = d.level_before;
	double after = d.level_after;
	pw_changepoint cp = {
		.index = start,
		.before = before,
		.after = after,
		.rel_change = before != 0.0 ? (after - before) / before : NAN,
		.p = NAN,
		.noise = d.noise,
	};
	pw_watch_event *ev = &out[(*nout)++];
	describe(s, &cp, ev);
	ev->stage = PW_WATCH_STAGE_TREND;
	if (ev->routing == PW_WATCH_ROUTE_PAGE)
		ev->routing = PW_WATCH_ROUTE_QUEUE; /* a trend finding pages nobody (§8) */
	ev->reported_after = s->total - start;
	ev->drift_rate_pct = d.rate_pct;
	ev->drift_total_pct = before != 0.0 ? 100.0 * (after - before) / fabs(before) : NAN;
	pw_watch_series_mark_emitted(s, build_at(s, start)->build_id);
	s->drift_active = true;
	s->drift_start = start;
	s->drift_side = side;
	return PW_OK;
}

static void note_step(pw_watch_series *s, const pw_changepoint *cp)
{
	s->steps[s->steps_head] = (struct step_mark){cp->index, cp->after > cp->before ? 1 : -1};
	s->steps_head = (s->steps_head + 1) % 16;
	if (s->n_steps < 16)
		s->n_steps++;
	if (!s->has_step || cp->index > s->last_step)
		s->last_step = cp->index;
	s->has_step = true;
}

/* Whether PELT's step cp is a stair of the reported drift. */
static bool drift_stair(const pw_watch_series *s, const pw_changepoint *cp)
{
	if (!s->drift_active)
		return false;
	int side = cp->after > cp->before ? 1 : -1;
	return side == s->drift_side && cp->index + s->params.drift_slack >= s->drift_start;
}

/*
 * Judges the registrations at the first point i0 of a build that includes
 * them (those of CLs after the previous point's build): the measured points
 * from i0 on (registered_n of them, cut at a shift reported after i0)
 * against up to JUDGE_BASE_MAX before it (from the newest shift reported
 * before), by pw_expected_compare and pw_expected_classify. A change that
 * arrived as registered is one event, stage REGISTERED: a validated win; it
 * revises a report the detectors made of the same step before the
 * registration was known (a provisional or confirmed improvement at the
 * step). True when that was decided (the registrations at i0 judged).
 * Anything else moved observed − expected, which the detectors report as a
 * shift annotated with the registration (describe), or is judged again at
 * the next point.
 */
static bool judge_at(pw_watch_series *s, size_t i0, const double *w, size_t off,
                     pw_watch_event *out, size_t cap, size_t *nout)
{
	const pw_watch_params *p = &s->params;
	size_t slack = p->same_shift_slack;
	int64_t before_cl = build_at(s, i0 - 1)->cl_number, at_cl = build_at(s, i0)->cl_number;
	double pct = 100.0 * (factor_at(s, at_cl) / factor_at(s, before_cl) - 1.0);
	/* a provisional report of the change itself, made before the registration
	 * was known: near i0, the better way (its levels are as measured) */
	int target = -1;
	for (size_t k = 0; k < s->n_prov && target < 0; k++) {
		size_t j = s->prov[k].cp.index;
		double d = s->prov[k].cp.after - s->prov[k].cp.before;
		if ((j > i0 ? j - i0 : i0 - j) <= slack && (s->lower_is_better ? d < 0.0 : d > 0.0))
			target = (int)k;
	}
	/* the steps this series reported are of observed − expected (the series
	 * was built with the registration): one after i0 ends the candidate, one
	 * before starts the baseline; so does any other provisional report */
	size_t end = i0 + p->registered_n, lo = i0 > JUDGE_BASE_MAX ? i0 - JUDGE_BASE_MAX : 0;
	if (lo < off)
		lo = off;
	for (size_t k = 0; k < s->n_steps; k++) {
		size_t j = s->steps[k].index;
		if (j > i0 && j < end)
			end = j;
		if (j < i0 && j > lo)
			lo = j;
	}
	for (size_t k = 0; k < s->n_prov; k++) {
		size_t j = s->prov[k].cp.index;
		if ((int)k != target && j > i0 && j < end)
			end = j;
	}
	if (end > s->total)
		end = s->total;
	size_t nb = i0 - lo, nc = end - i0;
	if (nb < p->registered_min_base || nc < 3)
		return false; /* too little on one side: left to the detectors */
	for (size_t j = lo; j < i0; j++)
		s->judge_base[j - lo] = w[j - off] * factor_at(s, build_at(s, j)->cl_number);
	for (size_t j = i0; j < end; j++)
		s->judge_cand[j - i0] = w[j - off] * factor_at(s, build_at(s, j)->cl_number);
	pw_compare_opts o;
	pw_compare_opts_init(&o);
	o.direction = s->lower_is_better ? PW_COMPARE_LOWER_IS_BETTER : PW_COMPARE_HIGHER_IS_BETTER;
	o.alpha = p->registered_alpha;
	o.practical_pct = 100.0 * p->cp.min_effect;
	o.mde_pct = o.practical_pct / PW_COMPARE_PRACTICAL_FRAC;
	pw_expected_result x;
	if (pw_expected_compare(s->judge_base, nb, s->judge_cand, nc, pct, &o, s->judge_work,
	                        s->judge_adj, &x) != PW_OK)
		return false;
	pw_expected_outcome oc = pw_expected_classify(
		x.against.p < p->registered_alpha, x.raw.effect_filter_passed,
		worse_pct(s, x.raw.effect_pct), worse_pct(s, x.excess_pct), x.raw.threshold_pct);
	if (oc != PW_EXPECTED_VALIDATED || *nout == cap)
		return false;
	/* the same step reported before the registration was known: that report is revised */
	size_t idx = i0;
	bool revises = false;
	if (target >= 0) {
		idx = s->prov[target].cp.index;
		provisional_remove(s, (size_t)target);
		revises = true;
	} else {
		for (size_t j = i0 > slack ? i0 - slack : 0; j <= i0 + slack && !revises; j++)
			if (in_ring(s, j) && was_emitted(s, build_at(s, j)->build_id)) {
				idx = j;
				revises = true;
			}
	}
	if (idx == 0 || !in_ring(s, idx - 1))
		return true;
	char cl[PW_WATCH_BUILD_LEN] = "";
	registered_between(s, before_cl, at_cl, cl, sizeof cl);
	pw_watch_event *ev = &out[(*nout)++];
	memset(ev, 0, sizeof *ev);
	ev->cp = (pw_changepoint){.index = idx, .before = x.raw.median_base,
	                          .after = x.raw.median_cand,
	                          .rel_change = x.raw.median_base != 0.0
	                                                ? (x.raw.median_cand - x.raw.median_base) /
	                                                          x.raw.median_base
	                                                : NAN,
	                          .p = x.against.p, .noise = x.raw.mad_base};
	ev->regression = false; /* validated: better as registered */
	ev->last_clean = *build_at(s, idx - 1);
	ev->first_shifted = *build_at(s, idx);
	ev->annotation = PW_WATCH_ANNOTATION_REGISTERED;
	ev->routing = PW_WATCH_ROUTE_NONE;
	ev->stage = PW_WATCH_STAGE_REGISTERED;
	ev->reported_after = s->total - idx;
	ev->level_before = x.raw.median_base;
	ev->level_after = x.raw.median_cand;
	ev->expected_pct = pct;
	snprintf(ev->registered_cl, sizeof ev->registered_cl, "%s", cl);
	ev->expected = oc;
	ev->revises = revises;
	return true;
}

/* The registrations not judged yet whose CL has registered_n points in (judge_at). */
static void judge_registrations(pw_watch_series *s, pw_watch_event *out, size_t cap,
                                size_t *nout)
{
	size_t wn = 0, off = 0;
	const double *w = pw_cp_stream_window(s->stream, &wn, &off);
	if (s->n_regs == 0 || s->total - off != wn)
		return;
	for (size_t k = 0; k < s->n_regs && *nout < cap; k++) {
		if (s->regs[k].judged)
			continue;
		size_t i0 = s->total;
		for (size_t i = off; i < s->total && i0 == s->total; i++)
			if (in_ring(s, i) && build_at(s, i)->cl_number >= s->regs[k].cl_number)
				i0 = i;
		if (i0 == s->total)
			continue; /* not in the nightlies yet */
		if (i0 == off || !in_ring(s, i0 - 1)) {
			s->regs[k].judged = true; /* nothing before it left to compare with */
			continue;
		}
		if (s->total - i0 < s->params.registered_n)
			continue;
		/* judged again at every point until it is decided: a later shift of
		 * observed − expected reported meanwhile cuts the candidate before it */
		if (judge_at(s, i0, w, off, out, cap, nout) ||
		    s->total - i0 >= s->params.registered_n + s->params.early_confirm_within)
			s->regs[k].judged = true;
	}
}

pw_status pw_watch_series_scan(pw_watch_series *s, pw_watch_event *out, size_t cap,
                               size_t *nout, char *errbuf, size_t errlen)
{
	*nout = 0;
	if (s->total == 0)
		return PW_OK;
	pw_status st;
	size_t count = 0;
	st = pw_cp_stream_changepoints(s->stream, s->cps, s->cps_cap, &count, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (count > s->cps_cap)
		count = s->cps_cap;
	s->n_cps = count;
	for (size_t k = 0; k < count; k++) {
		pw_changepoint cp = s->cps[k];
		/* a split inside one build's repeats moves to the build's first point */
		while (cp.index > 0 && in_ring(s, cp.index - 1) && in_ring(s, cp.index) &&
		       strcmp(build_at(s, cp.index - 1)->build_id,
		              build_at(s, cp.index)->build_id) == 0)
			cp.index--;
		if (cp.index == 0 || !in_ring(s, cp.index - 1) || !in_ring(s, cp.index))
			continue;
		int pv = provisional_same(s, &cp);
		if (pv >= 0) {
			/* PELT found the shift the early rule reported: the same finding,
			 * keyed by the provisional's first shifted build */
			if (*nout == cap)
				break;
			size_t idx = s->prov[pv].cp.index;
			if (!in_ring(s, idx - 1)) {
				provisional_remove(s, (size_t)pv);
				continue;
			}
			pw_changepoint c2 = cp;
			c2.index = idx;
			describe(s, &c2, &out[*nout]);
			out[*nout].stage = PW_WATCH_STAGE_CONFIRMING;
			out[*nout].reported_after = s->total - idx;
			(*nout)++;
			note_step(s, &c2);
			pw_watch_series_mark_emitted(s, s->prov[pv].build_id);
			provisional_remove(s, (size_t)pv);
			continue;
		}
		if (same_as_emitted(s, cp.index))
			continue;
		if (drift_stair(s, &cp)) {
			pw_watch_series_mark_emitted(s, build_at(s, cp.index)->build_id);
			continue;
		}
		if (*nout == cap) /* not marked: the next append reports it */
			break;
		describe(s, &cp, &out[*nout]);
		out[*nout].reported_after = s->total - cp.index;
		(*nout)++;
		pw_watch_series_mark_emitted(s, build_at(s, cp.index)->build_id);
		note_step(s, &cp);
	}
	/* provisional shifts PELT did not find in time are withdrawn */
	for (size_t k = 0; k < s->n_prov && *nout < cap;) {
		struct provisional *p = &s->prov[k];
		if (s->total - p->cp.index <= s->params.early_confirm_within) {
			k++;
			continue;
		}
		if (in_ring(s, p->cp.index - 1)) {
			describe(s, &p->cp, &out[*nout]);
			out[*nout].stage = PW_WATCH_STAGE_WITHDRAWN;
			out[*nout].routing = PW_WATCH_ROUTE_NONE;
			out[*nout].reported_after = s->total - p->cp.index;
			(*nout)++;
		}
		pw_watch_series_mark_emitted(s, p->build_id);
		provisional_remove(s, k);
	}
	/* after PELT, so that a step it reports now counts against a drift */
	st = drift_scan(s, out, cap, nout);
	if (st != PW_OK)
		return pw_fail(st, errbuf, errlen, "drift detection: %s", pw_strerror(st));
	if ((st = early_scan(s, out, cap, nout)) != PW_OK)
		return st;
	/* last: a shift found above over a registered CL judged it already */
	judge_registrations(s, out, cap, nout);
	return PW_OK;
}

pw_status pw_watch_series_scan_loaded(pw_watch_series *s, size_t loaded, pw_watch_event *out,
                                     size_t cap, size_t *nout, char *errbuf, size_t errlen)
{
	pw_status st = pw_watch_series_scan(s, out, cap, nout, errbuf, errlen);
	if (st != PW_OK || s->params.early.k == 0)
		return st;
	/* the early rule judges the newest k points against the level before
	 * them, so the scan above (at the newest point) misses a shift more than
	 * k points old: its older shifted points are then in the reference. A
	 * stream applied it at every point; here it is applied at each loaded
	 * point a provisional report could still stand on (early_confirm_within
	 * + k), oldest first, after PELT: a shift PELT placed is emitted already
	 * and not reported again. */
	size_t back = s->params.early_confirm_within + s->params.early.k;
	if (loaded > back)
		loaded = back;
	if (loaded > s->total)
		loaded = s->total;
	for (size_t end = s->total - loaded + 1; end < s->total && *nout < cap; end++)
		if ((st = early_scan_at(s, end, out, cap, nout)) != PW_OK)
			return st;
	return PW_OK;
}

void pw_watch_event_set_infra(pw_watch_event *ev, const char *event_id)
{
	ev->annotation = PW_WATCH_ANNOTATION_INFRA;
	snprintf(ev->fleet_event_id, sizeof ev->fleet_event_id, "%s", event_id ? event_id : "");
	ev->routing = PW_WATCH_ROUTE_NONE;
}
