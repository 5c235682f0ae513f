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
	size_t cps_cap;
};

const char *pw_watch_annotation_name(pw_watch_annotation a)
{
	switch (a) {
	case PW_WATCH_ANNOTATION_NONE: return "none";
	case PW_WATCH_ANNOTATION_INFRA: return "infra";
	case PW_WATCH_ANNOTATION_FROZEN: return "frozen";
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
}

pw_watch_series *pw_watch_series_new(const pw_watch_params *params, bool lower_is_better,
                                     bool top_tier, char *errbuf, size_t errlen)
{
	if (!params || params->max_points < 2 * params->cp.min_segment || params->max_emitted < 1 ||
	    params->max_fleet_marks < 1) {
		pw_fail(PW_ERR_INVALID, errbuf, errlen,
		        "watch parameters: max_points must hold two minimum segments, and the "
		        "emitted and fleet-mark rings at least one entry");
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
	if (!s->builds || !s->frozen_at || !s->emitted || !s->marks || !s->cps)
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
	free(s);
}

void pw_watch_series_fleet_change(pw_watch_series *s, const char *event_id, int64_t ts_us)
{
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
}

pw_status pw_watch_series_load(pw_watch_series *s, double value, const pw_watch_build *build,
                               char *errbuf, size_t errlen)
{
	pw_status st = pw_cp_stream_append(s->stream, value, errbuf, errlen);
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
	for (size_t k = 0; k < count; k++) {
		pw_changepoint cp = s->cps[k];
		/* a split inside one build's repeats moves to the build's first point */
		while (cp.index > 0 && in_ring(s, cp.index - 1) && in_ring(s, cp.index) &&
		       strcmp(build_at(s, cp.index - 1)->build_id,
		              build_at(s, cp.index)->build_id) == 0)
			cp.index--;
		if (cp.index == 0 || !in_ring(s, cp.index - 1) || !in_ring(s, cp.index))
			continue;
		if (same_as_emitted(s, cp.index))
			continue;
		if (*nout == cap) /* not marked: the next append reports it */
			break;
		describe(s, &cp, &out[*nout]);
		(*nout)++;
		pw_watch_series_mark_emitted(s, build_at(s, cp.index)->build_id);
	}
	return PW_OK;
}

void pw_watch_event_set_infra(pw_watch_event *ev, const char *event_id)
{
	ev->annotation = PW_WATCH_ANNOTATION_INFRA;
	snprintf(ev->fleet_event_id, sizeof ev->fleet_event_id, "%s", event_id ? event_id : "");
	ev->routing = PW_WATCH_ROUTE_NONE;
}
