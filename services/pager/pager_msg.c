/*
 * pager_msg.c: Alert and Bisection into findings, incidents into
 * Alertmanager's v2 alerts. See pager_msg.h.
 */
#include "pager_msg.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pw_log.h"

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

#define COPY(dst, src) copy((dst), sizeof(dst), (src))

static pw_find_verdict verdict_of(Perfwatch__V1__Verdict v)
{
	return v >= 0 && v <= PERFWATCH__V1__VERDICT__VERDICT_WAIVED ? (pw_find_verdict)v : PW_FV_NONE;
}

pw_status pw_finding_from_alert(const Perfwatch__V1__Alert *a, pw_finding *f)
{
	memset(f, 0, sizeof *f);
	if (!a || !a->alert_id || !*a->alert_id)
		return PW_ERR_INVALID;
	COPY(f->alert_id, a->alert_id);
	f->revision = a->revision ? a->revision : 1;
	f->kind = a->kind == PERFWATCH__V1__ALERT_KIND__ALERT_KIND_IMPROVEMENT     ? PW_FIND_IMPROVEMENT
	          : a->kind == PERFWATCH__V1__ALERT_KIND__ALERT_KIND_INFRA_HEALTH ? PW_FIND_INFRA_HEALTH
	                                                                           : PW_FIND_REGRESSION;
	f->from_gate = a->source == PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_GATE;
	f->created_us = a->created_unix_us;
	COPY(f->series_key, a->series_key);
	if (a->series) {
		COPY(f->model, a->series->model);
		COPY(f->hlo_fingerprint, a->series->hlo_fingerprint);
		COPY(f->platform, a->series->platform);
		COPY(f->config, a->series->config);
		COPY(f->metric, a->series->metric);
	}
	if (a->baseline) {
		f->base_median = a->baseline->median;
		f->base_mad = a->baseline->mad;
		f->base_n = a->baseline->n;
		COPY(f->base_window, a->baseline->window);
	}
	if (a->observed) {
		f->obs_median = a->observed->median;
		f->obs_n = a->observed->n;
		COPY(f->obs_release, a->observed->release);
	}
	if (a->delta) {
		f->delta_abs = a->delta->abs;
		COPY(f->abs_unit, a->delta->abs_unit);
		f->delta_pct = a->delta->pct;
		f->z_robust = a->delta->z_robust;
		f->fdr_q = a->delta->fdr_q;
	}
	if (a->effect_gate) {
		f->mde_pct = a->effect_gate->mde_pct;
		f->passed_min_effect = a->effect_gate->passed_min_effect;
	}
	if (a->scope) {
		for (size_t i = 0; i < a->scope->n_correlated_series && f->n_correlated < PW_PAGER_MAX_SCOPE; i++)
			COPY(f->correlated[f->n_correlated++], a->scope->correlated_series[i]);
		for (size_t i = 0; i < a->scope->n_clean_series && f->n_clean < PW_PAGER_MAX_SCOPE; i++)
			COPY(f->clean[f->n_clean++], a->scope->clean_series[i]);
	}
	if (a->changepoint) {
		COPY(f->nightly, a->changepoint->nightly);
		COPY(f->cl_lo, a->changepoint->cl_range_lo);
		COPY(f->cl_hi, a->changepoint->cl_range_hi);
		f->n_cls = a->changepoint->n_cls;
	}
	if (a->bisection) {
		COPY(f->bisect_status, a->bisection->status);
		COPY(f->culprit, a->bisection->culprit);
		f->verified_adjacent_clean = a->bisection->verified_adjacent_clean;
		f->cherry_pick_reproduced = a->bisection->cherry_pick_reproduced;
	}
	if (a->artifacts) {
		COPY(f->op_diff, a->artifacts->op_diff);
		COPY(f->hlo_diff, a->artifacts->hlo_diff);
		COPY(f->trace_before, a->artifacts->trace_before);
		COPY(f->trace_after, a->artifacts->trace_after);
	}
	f->verdict = verdict_of(a->verdict);
	COPY(f->owner_hint, a->owner_hint);
	COPY(f->release_id, a->release_id);
	COPY(f->fleet_event_id, a->fleet_event_id);
	return PW_OK;
}

const char *pw_bisection_status_name(Perfwatch__V1__BisectionStatus s)
{
	switch (s) {
	case PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_RUNNING: return "running";
	case PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_VERIFYING: return "verifying";
	case PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_DONE: return "done";
	case PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_ESCALATED_PAIRWISE: return "escalated_pairwise";
	case PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_FAILED: return "failed";
	case PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_CANCELLED: return "cancelled";
	default: break;
	}
	return "unspecified";
}

pw_status pw_finding_from_bisection(const Perfwatch__V1__Bisection *b, pw_finding *f)
{
	memset(f, 0, sizeof *f);
	if (!b || !b->alert_id || !*b->alert_id)
		return PW_ERR_INVALID;
	COPY(f->alert_id, b->alert_id);
	f->revision = 0; /* a part, never a newer revision of the alert itself */
	f->created_us = b->updated_unix_us ? b->updated_unix_us : b->started_unix_us;
	COPY(f->series_key, b->series_key);
	if (b->series) {
		COPY(f->model, b->series->model);
		COPY(f->platform, b->series->platform);
		COPY(f->config, b->series->config);
		COPY(f->metric, b->series->metric);
	}
	COPY(f->cl_lo, b->range_lo);
	COPY(f->cl_hi, b->range_hi);
	f->n_cls = b->n_cls;
	COPY(f->bisect_status, pw_bisection_status_name(b->status));
	/* only a verified culprit names the incident's culprit */
	if (b->status == PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_DONE)
		COPY(f->culprit, b->culprit);
	f->verified_adjacent_clean = b->verified_adjacent_clean;
	f->cherry_pick_reproduced = b->cherry_pick_reproduced;
	if (f->culprit[0])
		COPY(f->owner_hint, b->culprit_owner);
	return PW_OK;
}

pw_status pw_finding_from_attribution(const Perfwatch__V1__Attribution *a, pw_finding *f)
{
	memset(f, 0, sizeof *f);
	if (!a || !a->alert_id || !*a->alert_id)
		return PW_ERR_INVALID;
	COPY(f->alert_id, a->alert_id);
	f->revision = 0;
	f->created_us = a->created_unix_us;
	COPY(f->series_key, a->series_key);
	if (a->series) {
		COPY(f->model, a->series->model);
		COPY(f->hlo_fingerprint, a->series->hlo_fingerprint);
		COPY(f->platform, a->series->platform);
		COPY(f->config, a->series->config);
		COPY(f->metric, a->series->metric);
	}
	COPY(f->owner_hint, a->owner_hint);
	return PW_OK;
}

/* 9999-12-31T23:59:59.999999Z: RFC 3339 has four-digit years */
#define RFC3339_MAX_US 253402300799999999LL

void pw_rfc3339(int64_t unix_us, char *buf, size_t len)
{
	/* a hostile creation time (an incident opens at it) must still make a date Alertmanager parses */
	if (unix_us < 0)
		unix_us = 0;
	if (unix_us > RFC3339_MAX_US)
		unix_us = RFC3339_MAX_US;
	time_t s = (time_t)(unix_us / 1000000);
	struct tm tm;
	gmtime_r(&s, &tm);
	char day[24];
	strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03dZ", day, (int)((unix_us % 1000000) / 1000));
}

static void kv(FILE *out, const char *k, const char *v, bool comma)
{
	fprintf(out, "%s\"%s\":\"", comma ? "," : "", k);
	pw_json_escape(out, v ? v : "");
	fputc('"', out);
}

pw_status pw_alertmanager_write(FILE *out, const pw_incident *inc, const pw_route *route,
                                const char *page_id, const char *triage_url, bool budget_pressure,
                                bool resolved, int64_t now_us)
{
	char summary[256], ts[40];
	pw_incident_summary(inc, summary, sizeof summary);
	if (budget_pressure) {
		size_t n = strlen(summary);
		snprintf(summary + n, sizeof summary - n, " [false-page budget under pressure]");
	}
	/* Labels are the alert's identity in Alertmanager: only what stays fixed for the
	 * page (its incident, id, severity and route). The owner changes as the attribution
	 * arrives, so it is an annotation; as a label it left a second, stale alert. */
	fputs("[{\"labels\":{", out);
	kv(out, "alertname", "PerfwatchIncident", false);
	kv(out, "incident", inc->incident_id, true);
	kv(out, "page_id", page_id, true);
	kv(out, "severity", pw_severity_name(route->severity), true);
	kv(out, "route", route->route, true);
	kv(out, "family", inc->family, true);
	kv(out, "release", inc->release_id, true);
	fputs("},\"annotations\":{", out);
	kv(out, "summary", summary, false);
	kv(out, "owner", pw_owner_name(route->owner), true);
	kv(out, "triage_url", triage_url, true);
	char *payload = pw_payload_json(inc, route, budget_pressure);
	if (!payload)
		return PW_ERR_NOMEM;
	kv(out, "payload", payload, true);
	free(payload);
	pw_rfc3339(inc->opened_us, ts, sizeof ts);
	fputs("},", out);
	kv(out, "startsAt", ts, false);
	if (resolved) {
		pw_rfc3339(now_us, ts, sizeof ts);
		kv(out, "endsAt", ts, true);
	}
	kv(out, "generatorURL", triage_url, true);
	fputs("}]", out);
	return ferror(out) ? PW_ERR_IO : PW_OK;
}
