/*
 * watch_emit.c: Changepoint and Alert messages of a watcher event, fleet-change
 * selector matching and point ordering. See watch_emit.h; the events come from
 * watch.c, the callers are main.c and watch_store.c.
 */
#include "watch_emit.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void pw_watch_selectors_from_proto(pw_watch_selectors *sel,
                                   const Perfwatch__V1__FleetChangeEvent *ev)
{
	sel->platforms = ev->platforms;
	sel->n_platforms = ev->n_platforms;
	sel->chip_sets = ev->chip_sets;
	sel->n_chip_sets = ev->n_chip_sets;
	sel->cells = ev->cells;
	sel->n_cells = ev->n_cells;
	sel->firmware = ev->firmware;
	sel->n_firmware = ev->n_firmware;
	sel->harness = ev->harness_versions;
	sel->n_harness = ev->n_harness_versions;
}

/* An empty list is "any"; otherwise value must be one of its entries. */
static bool list_holds(char *const *list, size_t n, const char *value)
{
	if (n == 0)
		return true;
	for (size_t i = 0; i < n; i++)
		if (list[i] && strcmp(list[i], value) == 0)
			return true;
	return false;
}

bool pw_watch_selectors_match(const pw_watch_selectors *sel, const pw_watch_env *env)
{
	return list_holds(sel->platforms, sel->n_platforms, env->platform) &&
	       list_holds(sel->chip_sets, sel->n_chip_sets, env->chip_set) &&
	       list_holds(sel->cells, sel->n_cells, env->cell) &&
	       list_holds(sel->firmware, sel->n_firmware, env->firmware) &&
	       list_holds(sel->harness, sel->n_harness, env->harness);
}

int pw_watch_point_key_cmp(const pw_watch_point_key *a, const pw_watch_point_key *b)
{
	if (a->ts_us != b->ts_us)
		return a->ts_us < b->ts_us ? -1 : 1;
	int c = strcmp(a->run_id, b->run_id);
	if (c != 0)
		return c < 0 ? -1 : 1;
	if (a->repeat_index != b->repeat_index)
		return a->repeat_index < b->repeat_index ? -1 : 1;
	return 0;
}

void pw_watch_format_day(int64_t ts_us, char *out, size_t outlen)
{
	/* floor division, so that times before 1970 still land on their day */
	int64_t secs = ts_us / 1000000;
	if (ts_us % 1000000 < 0)
		secs--;
	time_t t = (time_t)secs;
	struct tm tm;
	if (!gmtime_r(&t, &tm) || strftime(out, outlen, "%Y-%m-%d", &tm) == 0)
		snprintf(out, outlen, "%s", "1970-01-01");
}

uint32_t pw_watch_n_cls(const pw_watch_event *ev)
{
	int64_t d = ev->first_shifted.cl_number - ev->last_clean.cl_number;
	if (d <= 0)
		return 0;
	return d > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

Perfwatch__V1__AlertKind pw_watch_alert_kind(const pw_watch_event *ev)
{
	if (ev->annotation == PW_WATCH_ANNOTATION_INFRA)
		return PERFWATCH__V1__ALERT_KIND__ALERT_KIND_INFRA_HEALTH;
	return ev->regression ? PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION
	                      : PERFWATCH__V1__ALERT_KIND__ALERT_KIND_IMPROVEMENT;
}

/*
 * Infra and frozen steps are FROZEN (the fleet change froze the series: not
 * gated, not acted on). A shift that pages, or an unregistered improvement
 * (§9: investigated like a regression), is INVESTIGATE; the rest of the trend
 * queue is TREND. BLOCKING and P1 are the gate's, for releases, not nightlies.
 */
uint32_t pw_watch_alert_revision(const pw_watch_event *ev)
{
	if (ev->stage == PW_WATCH_STAGE_REGISTERED)
		return ev->revises && ev->alert_revision ? ev->alert_revision : 1;
	return ev->stage == PW_WATCH_STAGE_CONFIRMING || ev->stage == PW_WATCH_STAGE_WITHDRAWN ? 2 : 1;
}

/*
 * A shift over a registered CL (annotation registered) takes its verdict
 * from what the registration did (pw_expected.h): arrived as registered,
 * VALIDATED_WIN (routing none: logged, §8); better than registered beyond
 * the filter, INVESTIGATE (§9); short of it without getting worse, TREND
 * (the queue). One that got worse than before the CL is a regression
 * (annotation none).
 */
Perfwatch__V1__Verdict pw_watch_verdict(const pw_watch_event *ev)
{
	if (ev->stage == PW_WATCH_STAGE_WITHDRAWN)
		return PERFWATCH__V1__VERDICT__VERDICT_PASS;
	if (ev->annotation == PW_WATCH_ANNOTATION_REGISTERED)
		return ev->expected == PW_EXPECTED_VALIDATED   ? PERFWATCH__V1__VERDICT__VERDICT_VALIDATED_WIN
		       : ev->expected == PW_EXPECTED_OVERSHOOT ? PERFWATCH__V1__VERDICT__VERDICT_INVESTIGATE
		                                               : PERFWATCH__V1__VERDICT__VERDICT_TREND;
	if (ev->stage == PW_WATCH_STAGE_TREND && ev->annotation == PW_WATCH_ANNOTATION_NONE)
		return PERFWATCH__V1__VERDICT__VERDICT_TREND;
	if (ev->annotation != PW_WATCH_ANNOTATION_NONE)
		return PERFWATCH__V1__VERDICT__VERDICT_FROZEN;
	if (ev->routing == PW_WATCH_ROUTE_PAGE || !ev->regression)
		return PERFWATCH__V1__VERDICT__VERDICT_INVESTIGATE;
	return PERFWATCH__V1__VERDICT__VERDICT_TREND;
}

const char *pw_watch_alert_kind_name(Perfwatch__V1__AlertKind k)
{
	switch (k) {
	case PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION: return "regression";
	case PERFWATCH__V1__ALERT_KIND__ALERT_KIND_IMPROVEMENT: return "improvement";
	case PERFWATCH__V1__ALERT_KIND__ALERT_KIND_INFRA_HEALTH: return "infra_health";
	default: return "unspecified";
	}
}

const char *pw_watch_verdict_name(Perfwatch__V1__Verdict v)
{
	switch (v) {
	case PERFWATCH__V1__VERDICT__VERDICT_BLOCKING: return "blocking";
	case PERFWATCH__V1__VERDICT__VERDICT_P1: return "p1";
	case PERFWATCH__V1__VERDICT__VERDICT_PASS: return "pass";
	case PERFWATCH__V1__VERDICT__VERDICT_VALIDATED_WIN: return "validated_win";
	case PERFWATCH__V1__VERDICT__VERDICT_FROZEN: return "frozen";
	case PERFWATCH__V1__VERDICT__VERDICT_QUARANTINED: return "quarantined";
	case PERFWATCH__V1__VERDICT__VERDICT_INSUFFICIENT_DATA: return "insufficient_data";
	case PERFWATCH__V1__VERDICT__VERDICT_INVESTIGATE: return "investigate";
	case PERFWATCH__V1__VERDICT__VERDICT_TREND: return "trend";
	case PERFWATCH__V1__VERDICT__VERDICT_WAIVED: return "waived";
	default: return "unspecified";
	}
}

static Perfwatch__V1__Routing routing_proto(pw_watch_routing r)
{
	switch (r) {
	case PW_WATCH_ROUTE_PAGE: return PERFWATCH__V1__ROUTING__ROUTING_PAGE;
	case PW_WATCH_ROUTE_QUEUE: return PERFWATCH__V1__ROUTING__ROUTING_QUEUE;
	case PW_WATCH_ROUTE_NONE: break;
	}
	return PERFWATCH__V1__ROUTING__ROUTING_NONE;
}

static Perfwatch__V1__ChangepointAnnotation annotation_proto(pw_watch_annotation a)
{
	switch (a) {
	case PW_WATCH_ANNOTATION_INFRA: return PERFWATCH__V1__CHANGEPOINT_ANNOTATION__CHANGEPOINT_ANNOTATION_INFRA;
	case PW_WATCH_ANNOTATION_FROZEN: return PERFWATCH__V1__CHANGEPOINT_ANNOTATION__CHANGEPOINT_ANNOTATION_FROZEN;
	case PW_WATCH_ANNOTATION_REGISTERED:
		return PERFWATCH__V1__CHANGEPOINT_ANNOTATION__CHANGEPOINT_ANNOTATION_REGISTERED;
	case PW_WATCH_ANNOTATION_NONE: break;
	}
	return PERFWATCH__V1__CHANGEPOINT_ANNOTATION__CHANGEPOINT_ANNOTATION_NONE;
}

/* Splits "a/b/c/d/e" into parts; missing components stay empty. */
static void split_key(const char *key, char parts[5][PW_WATCH_FIELD_LEN])
{
	memset(parts, 0, 5 * PW_WATCH_FIELD_LEN);
	size_t k = 0, j = 0;
	for (const char *c = key; *c && k < 5; c++) {
		if (*c == '/') {
			k++;
			j = 0;
			continue;
		}
		if (j + 1 < PW_WATCH_FIELD_LEN)
			parts[k][j++] = *c;
	}
}

static void fill_key(Perfwatch__V1__SeriesKey *k, char parts[5][PW_WATCH_FIELD_LEN])
{
	perfwatch__v1__series_key__init(k);
	k->model = parts[0];
	k->hlo_fingerprint = parts[1];
	k->platform = parts[2];
	k->config = parts[3];
	k->metric = parts[4];
}

void pw_watch_msgs_build(pw_watch_msgs *m, const pw_watch_event *ev, const pw_watch_info *info,
                         const char *page_route, int64_t now_us)
{
	memset(m, 0, sizeof *m);
	split_key(info->series_key, m->parts);
	snprintf(m->changepoint_id, sizeof m->changepoint_id, "%s@%s", info->series_key,
	         ev->first_shifted.build_id);
	snprintf(m->alert_id, sizeof m->alert_id, "watch-%" PRId64 "@%s", info->series_id,
	         ev->first_shifted.build_id);
	pw_watch_format_day(ev->first_shifted.ts_us, m->day, sizeof m->day);

	/* the levels as measured (the detectors saw observed − expected when a
	 * registered change is in the series) */
	double delta = ev->level_after - ev->level_before;
	double pct = ev->level_before != 0.0 ? 100.0 * delta / ev->level_before : 0.0;
	uint32_t n_cls = pw_watch_n_cls(ev);
	Perfwatch__V1__ShiftDirection dir = ev->regression
		? PERFWATCH__V1__SHIFT_DIRECTION__SHIFT_DIRECTION_REGRESSION
		: PERFWATCH__V1__SHIFT_DIRECTION__SHIFT_DIRECTION_IMPROVEMENT;

	Perfwatch__V1__Changepoint *cp = &m->cp;
	perfwatch__v1__changepoint__init(cp);
	fill_key(&m->cp_key, m->parts);
	cp->changepoint_id = m->changepoint_id;
	cp->series_id = info->series_id;
	cp->series_key = (char *)info->series_key;
	cp->key = &m->cp_key;
	cp->position = ev->cp.index > UINT32_MAX ? UINT32_MAX : (uint32_t)ev->cp.index;
	cp->day = m->day;
	cp->shift_unix_us = ev->first_shifted.ts_us;
	cp->last_clean_build_id = (char *)ev->last_clean.build_id;
	cp->last_clean_cl = (char *)ev->last_clean.cl;
	cp->last_clean_cl_number = ev->last_clean.cl_number;
	cp->first_shifted_build_id = (char *)ev->first_shifted.build_id;
	cp->first_shifted_cl = (char *)ev->first_shifted.cl;
	cp->first_shifted_cl_number = ev->first_shifted.cl_number;
	cp->n_cls = n_cls;
	cp->level_before = ev->level_before;
	cp->level_after = ev->level_after;
	cp->unit = (char *)info->unit;
	cp->delta_pct = pct;
	cp->p = ev->cp.p;
	cp->direction = dir;
	cp->method = ev->stage == PW_WATCH_STAGE_PROVISIONAL
	                     ? PERFWATCH__V1__CHANGEPOINT_METHOD__CHANGEPOINT_METHOD_EARLY
	             : ev->stage == PW_WATCH_STAGE_TREND
	                     ? PERFWATCH__V1__CHANGEPOINT_METHOD__CHANGEPOINT_METHOD_DRIFT
	             : ev->stage == PW_WATCH_STAGE_REGISTERED
	                     ? PERFWATCH__V1__CHANGEPOINT_METHOD__CHANGEPOINT_METHOD_REGISTERED
	                     : PERFWATCH__V1__CHANGEPOINT_METHOD__CHANGEPOINT_METHOD_PELT;
	cp->stage = ev->stage == PW_WATCH_STAGE_PROVISIONAL
	                    ? PERFWATCH__V1__CHANGEPOINT_STAGE__CHANGEPOINT_STAGE_PROVISIONAL
	            : ev->stage == PW_WATCH_STAGE_WITHDRAWN
	                    ? PERFWATCH__V1__CHANGEPOINT_STAGE__CHANGEPOINT_STAGE_WITHDRAWN
	            : ev->stage == PW_WATCH_STAGE_TREND
	                    ? PERFWATCH__V1__CHANGEPOINT_STAGE__CHANGEPOINT_STAGE_TREND
	                    : PERFWATCH__V1__CHANGEPOINT_STAGE__CHANGEPOINT_STAGE_CONFIRMED;
	cp->drift_rate_pct = ev->stage == PW_WATCH_STAGE_TREND ? ev->drift_rate_pct : 0.0;
	cp->drift_total_pct = ev->stage == PW_WATCH_STAGE_TREND ? ev->drift_total_pct : 0.0;
	cp->expected_delta_pct = ev->expected_pct;
	cp->registered_cl = (char *)ev->registered_cl;
	cp->points_after = ev->reported_after > UINT32_MAX ? UINT32_MAX : (uint32_t)ev->reported_after;
	cp->annotation = annotation_proto(ev->annotation);
	cp->fleet_event_id = (char *)ev->fleet_event_id;
	cp->routing = routing_proto(ev->routing);
	cp->detected_unix_us = now_us;

	Perfwatch__V1__Alert *a = &m->alert;
	perfwatch__v1__alert__init(a);
	fill_key(&m->alert_key, m->parts);
	perfwatch__v1__alert_baseline__init(&m->baseline);
	perfwatch__v1__alert_observed__init(&m->observed);
	perfwatch__v1__alert_delta__init(&m->delta);
	perfwatch__v1__alert_changepoint__init(&m->alert_cp);
	a->alert_id = m->alert_id;
	/* one finding: PELT's confirmation (or the withdrawal) of a provisional
	 * shift is the same alert's next revision */
	a->revision = pw_watch_alert_revision(ev);
	a->kind = pw_watch_alert_kind(ev);
	a->source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_WATCHER;
	a->created_unix_us = now_us;
	a->series_id = info->series_id;
	a->series_key = (char *)info->series_key;
	a->series = &m->alert_key;
	/* the segment before the shift is the baseline the shift is measured against */
	m->baseline.median = ev->level_before;
	m->baseline.mad = ev->cp.noise;
	a->baseline = &m->baseline;
	m->observed.median = ev->level_after;
	m->observed.release = (char *)ev->first_shifted.build_id;
	a->observed = &m->observed;
	m->delta.abs = delta;
	m->delta.abs_unit = (char *)info->unit;
	m->delta.pct = pct;
	m->delta.z_robust = ev->cp.noise > 0.0 ? delta / ev->cp.noise : 0.0;
	m->delta.fdr_q = ev->cp.p;
	a->delta = &m->delta;
	m->alert_cp.changepoint_id = m->changepoint_id;
	m->alert_cp.nightly = m->day;
	m->alert_cp.cl_range_lo = (char *)ev->last_clean.cl;
	m->alert_cp.cl_range_hi = (char *)ev->first_shifted.cl;
	m->alert_cp.n_cls = n_cls;
	a->changepoint = &m->alert_cp;
	a->verdict = pw_watch_verdict(ev);
	a->page = ev->routing == PW_WATCH_ROUTE_PAGE && page_route ? (char *)page_route : "";
	a->routing = routing_proto(ev->routing);
	a->fleet_event_id = (char *)ev->fleet_event_id;
	const char *what = ev->stage == PW_WATCH_STAGE_TREND
	                           ? (ev->regression ? "drift (regression)" : "drift (improvement)")
	                   : ev->annotation == PW_WATCH_ANNOTATION_INFRA ? "infra step"
	                   : ev->regression                            ? "regression"
	                                                               : "improvement";
	char rate[64] = "", reg[160] = "";
	if (ev->stage == PW_WATCH_STAGE_TREND)
		snprintf(rate, sizeof rate, ", %+.3f%% a nightly", ev->drift_rate_pct);
	if (ev->registered_cl[0]) /* observed − expected: what moved beyond the registration */
		snprintf(reg, sizeof reg, "; registered %s %+.2f%%, observed - expected %+.2f%%: %s",
		         ev->registered_cl, ev->expected_pct,
		         100.0 * ((1.0 + pct / 100.0) / (1.0 + ev->expected_pct / 100.0) - 1.0),
		         ev->annotation == PW_WATCH_ANNOTATION_REGISTERED
		                 ? (ev->expected == PW_EXPECTED_VALIDATED ? "validated win"
		                    : ev->expected == PW_EXPECTED_OVERSHOOT ? "beyond the registration, investigate"
		                                                            : "short of the registration")
		                 : "a regression");
	const char *stage = ev->stage == PW_WATCH_STAGE_PROVISIONAL  ? "provisional "
	                    : ev->stage == PW_WATCH_STAGE_CONFIRMING ? "confirmed "
	                    : ev->stage == PW_WATCH_STAGE_WITHDRAWN  ? "withdrawn (not confirmed) "
	                                                             : "";
	snprintf(m->summary, sizeof m->summary,
	         "%s%s %+.2f%% on %s %s nightly %s (%s..%s, %" PRIu32 " CLs%s)%s%s%s", stage, what,
	         pct, info->series_key, ev->stage == PW_WATCH_STAGE_TREND ? "from" : "at", m->day, ev->last_clean.cl, ev->first_shifted.cl, n_cls, rate,
	         ev->fleet_event_id[0] ? ", fleet change " : "", ev->fleet_event_id, reg);
	a->summary = m->summary;
}
