/*
 * pager_msg.c: Alert and Bisection into findings, incidents into
 * Alertmanager's v2 alerts, and the door of the pager's input topics. See
 * pager_msg.h.
 */
#include "pager_msg.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfwatch/v1/changepoint.pb-c.h"
#include "pw_input.h"
#include "pw_limits.h"
#include "pw_log.h"
#include "pw_time.h"
#include "pw_topics.h"

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
	f->first_signal = a->kind == PERFWATCH__V1__ALERT_KIND__ALERT_KIND_UNCONFIRMED || a->needs_confirmation ||
	                  (!f->from_gate && a->verdict == PERFWATCH__V1__VERDICT__VERDICT_TREND &&
	                   (!a->changepoint || !a->changepoint->cl_range_hi || !a->changepoint->cl_range_hi[0]));
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

static const char *canary_metric_name(Perfwatch__V1__CanaryMetric m)
{
	switch (m) {
	case PERFWATCH__V1__CANARY_METRIC__CANARY_METRIC_TPOT: return "tpot";
	case PERFWATCH__V1__CANARY_METRIC__CANARY_METRIC_TTFT: return "ttft";
	case PERFWATCH__V1__CANARY_METRIC__CANARY_METRIC_GOODPUT: return "goodput";
	default: return "";
	}
}

/*
 * The canary's decisions this build knows: the name kept with the finding,
 * the outcome the pager counts, and whether the decision must name its
 * rollout (a PIN_EXPIRED for a family the canary never saw names none).
 */
typedef struct {
	Perfwatch__V1__RolloutDecisionKind kind;
	const char *name;
	const char *outcome;
	bool names_rollout;
} rollout_kind;

#define ROLLOUT_KIND(k, outcome, names_rollout) \
	{PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_##k, #k, outcome, names_rollout}
static const rollout_kind rollout_kinds[] = {
	ROLLOUT_KIND(ROLLBACK, "rollback", true), ROLLOUT_KIND(PROMOTE, "promote", true),
	ROLLOUT_KIND(HOLD, "hold", true),         ROLLOUT_KIND(PINNED, "pinned", true),
	ROLLOUT_KIND(PIN_EXPIRED, "pin_expired", false),
};

/* The known decision k, or NULL. */
static const rollout_kind *rollout_kind_of(Perfwatch__V1__RolloutDecisionKind k)
{
	for (size_t i = 0; i < sizeof rollout_kinds / sizeof rollout_kinds[0]; i++)
		if (rollout_kinds[i].kind == k)
			return &rollout_kinds[i];
	return NULL;
}

const char *pw_rollout_outcome(const char *decision)
{
	for (size_t i = 0; i < sizeof rollout_kinds / sizeof rollout_kinds[0]; i++)
		if (strcmp(rollout_kinds[i].name, decision) == 0)
			return rollout_kinds[i].outcome;
	return "unknown";
}

/* Whether d names its rollout as its decision (kind, NULL when unknown) requires. */
static bool rollout_named(const Perfwatch__V1__RolloutDecision *d, const rollout_kind *kind)
{
	return d->rollout_id && (d->rollout_id[0] || (kind && !kind->names_rollout));
}

pw_status pw_finding_from_rollout(const Perfwatch__V1__RolloutDecision *d, pw_finding *f)
{
	memset(f, 0, sizeof *f);
	const rollout_kind *kind = rollout_kind_of(d->decision);
	if (!kind || !rollout_named(d, kind) || !d->family || !d->family[0])
		return PW_ERR_INVALID;
	pw_rollback *rb = &f->rollback;
	if (d->decision == PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_ROLLBACK)
		f->kind = PW_FIND_ROLLBACK;
	copy(rb->decision, sizeof rb->decision, kind->name);
	rb->inconclusive = d->inconclusive;
	copy(rb->rollout_id, sizeof rb->rollout_id, d->rollout_id);
	copy(rb->family, sizeof rb->family, d->family);
	copy(rb->previous_release, sizeof rb->previous_release, d->previous_release);
	copy(rb->artifact, sizeof rb->artifact, d->rollback_artifact);
	rb->lo_pct = d->lo_pct;
	rb->hi_pct = d->hi_pct;
	rb->windows = d->windows;
	rb->family_windows = d->family_windows;
	rb->decided_window_start_us = d->decided_window_start_unix_us;
	rb->alpha = d->alpha;
	rb->tolerance_pct = d->tolerance_pct;
	copy(f->model, sizeof f->model, d->family);
	copy(f->metric, sizeof f->metric, canary_metric_name(d->metric));
	copy(f->release_id, sizeof f->release_id, d->release);
	copy(f->obs_release, sizeof f->obs_release, d->release);
	copy(f->base_window, sizeof f->base_window, d->previous_release);
	f->delta_pct = d->effect_pct;
	f->mde_pct = d->mde_pct;
	f->passed_min_effect = true;
	f->verdict = PW_FV_BLOCKING; /* the family does not take the release: it runs N−1 again */
	/* only the compiler release differs between the arms (same traffic slices, same models) */
	copy(f->owner_hint, sizeof f->owner_hint, "compiler");
	f->created_us = d->decided_unix_us;
	char id[PW_PAGER_STR];
	pw_rollback_incident_id(rb, id);
	copy(f->alert_id, sizeof f->alert_id, id + 4); /* "rollback-...": its incident is "inc-" + it */
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
	if (f->culprit[0]) {
		COPY(f->owner_hint, b->culprit_owner);
		f->owner_from_bisection = f->owner_hint[0] != '\0';
	}
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


void pw_rfc3339(int64_t unix_us, char *buf, size_t len)
{
	/* a hostile creation time (an incident opens at it) must still make a date Alertmanager parses */
	if (unix_us < 0)
		unix_us = 0;
	if (unix_us > PW_TIME_MAX_US)
		unix_us = PW_TIME_MAX_US;
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
	/* Labels are the alert's identity in Alertmanager, and what makes it notify again:
	 * an annotation that changes is never re-sent (its notification log keys on the
	 * labels), so the page's headline family and release, its owner and its culprit are
	 * labels. A changed set reaches on-call as an update of the same group (grouped by
	 * incident): the pager posts the old set resolved with the new one (pages.am_labels),
	 * so Alertmanager holds one alert for the page. */
	fputs("[{\"labels\":{", out);
	kv(out, "alertname", "PerfwatchIncident", false);
	kv(out, "incident", inc->incident_id, true);
	kv(out, "page_id", page_id, true);
	kv(out, "severity", pw_severity_name(route->severity), true);
	kv(out, "route", route->route, true);
	kv(out, "family", inc->primary.model, true);
	kv(out, "release", inc->release_id, true);
	kv(out, "owner", pw_owner_name(route->owner), true);
	if (inc->primary.culprit[0])
		kv(out, "culprit", inc->primary.culprit, true);
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

pw_status pw_notice_am_write(FILE *out, const pw_notice *n)
{
	char ts[40];
	fputs("[{\"labels\":{", out);
	kv(out, "alertname", "PerfwatchNotice", false);
	kv(out, "notice_id", n->notice_id, true);
	kv(out, "incident", n->incident_id && n->incident_id[0] ? n->incident_id : n->notice_id, true);
	kv(out, "kind", n->kind, true);
	kv(out, "severity", "info", true);
	kv(out, "route", n->route, true);
	fputs("},\"annotations\":{", out);
	kv(out, "summary", n->summary, false);
	kv(out, "owner", n->owner, true);
	kv(out, "payload", n->payload ? n->payload : "null", true);
	fputs("},", out);
	pw_rfc3339(n->starts_us, ts, sizeof ts);
	kv(out, "startsAt", ts, false);
	pw_rfc3339(n->ends_us, ts, sizeof ts);
	kv(out, "endsAt", ts, true);
	fputs("}]", out);
	return ferror(out) ? PW_ERR_IO : PW_OK;
}

pw_status pw_notice_webhook_write(FILE *out, const pw_notice *n)
{
	fputs("{", out);
	kv(out, "notice_id", n->notice_id, false);
	kv(out, "incident", n->incident_id ? n->incident_id : "", true);
	kv(out, "kind", n->kind, true);
	kv(out, "severity", "info", true);
	kv(out, "route", n->route, true);
	kv(out, "owner", n->owner, true);
	kv(out, "summary", n->summary, true);
	fprintf(out, ",\"payload\":%s}", n->payload && n->payload[0] ? n->payload : "null");
	return ferror(out) ? PW_ERR_IO : PW_OK;
}

/* ---- the door: the pager's input messages -------------------------------------------------- */

/* what a part key keeps of each id: longer ids are refused at the door
 * (ids_fit), so that two ids never share a key */
#define PART_ID_KEPT 300        /* alert and changepoint ids */
#define PART_BISECTION_KEPT 200 /* bisection ids */
#define PART_CULPRIT_KEPT 60    /* a bisection's culprit */

pw_pager_in pw_pager_in_of(const char *topic)
{
	if (!topic)
		return PW_PAGER_IN_UNKNOWN;
	if (strcmp(topic, PW_TOPIC_ALERTS) == 0)
		return PW_PAGER_IN_ALERT;
	if (strcmp(topic, PW_TOPIC_GATE_VERDICTS) == 0)
		return PW_PAGER_IN_GATE;
	if (strcmp(topic, PW_TOPIC_CHANGEPOINTS) == 0)
		return PW_PAGER_IN_CHANGEPOINT;
	if (strcmp(topic, PW_TOPIC_BISECTIONS) == 0)
		return PW_PAGER_IN_BISECTION;
	if (strcmp(topic, PW_TOPIC_ATTRIBUTIONS) == 0)
		return PW_PAGER_IN_ATTRIBUTION;
	if (strcmp(topic, PW_TOPIC_ROLLOUTS) == 0)
		return PW_PAGER_IN_ROLLOUT;
	return PW_PAGER_IN_UNKNOWN;
}

const ProtobufCMessageDescriptor *pw_pager_in_desc(pw_pager_in k)
{
	switch (k) {
	case PW_PAGER_IN_ALERT: return &perfwatch__v1__alert__descriptor;
	case PW_PAGER_IN_GATE: return &perfwatch__v1__gate_verdict__descriptor;
	case PW_PAGER_IN_CHANGEPOINT: return &perfwatch__v1__changepoint__descriptor;
	case PW_PAGER_IN_BISECTION: return &perfwatch__v1__bisection__descriptor;
	case PW_PAGER_IN_ATTRIBUTION: return &perfwatch__v1__attribution__descriptor;
	case PW_PAGER_IN_ROLLOUT: return &perfwatch__v1__rollout_decision__descriptor;
	case PW_PAGER_IN_UNKNOWN: break;
	}
	return NULL;
}

/*
 * The detector's correlated series, as the page lists them: the gate names
 * every metric of every moved config ("chat-8b/v6e-4/decode.B8/cost_per_mtok_usd:
 * +7.7%"); the page keeps the other configs' lines of the alert's own metric,
 * without the metric (artifact 3: "chat-8b/v6e-4/decode.B8: +7.4%"), so they
 * meet the incident's own scope lines once each.
 */
static void correlated_trim(pw_finding *f)
{
	size_t n = 0;
	char own[3 * PW_PAGER_STR + 4], suffix[PW_PAGER_STR + 4];
	snprintf(own, sizeof own, "%s/%s/%s", f->model, f->platform, f->config);
	snprintf(suffix, sizeof suffix, "/%s", f->metric);
	for (size_t i = 0; i < f->n_correlated; i++) {
		char *line = f->correlated[i], *colon = strstr(line, ": ");
		if (!colon)
			continue;
		size_t kl = (size_t)(colon - line), sl = strlen(suffix);
		if (kl > sl && strncmp(colon - sl, suffix, sl) == 0) {
			if (kl - sl == strlen(own) && strncmp(line, own, kl - sl) == 0)
				continue; /* the alert's own series */
			memmove(colon - sl, colon, strlen(colon) + 1);
		} else {
			size_t slashes = 0;
			for (const char *c = line; c < colon; c++)
				slashes += *c == '/';
			if (slashes >= 3)
				continue; /* another metric */
		}
		if (n != i)
			memmove(f->correlated[n], line, PW_PAGER_STR);
		n++;
	}
	f->n_correlated = n;
}

/*
 * An identity the pager keys on (incidents, part dedup, grouping) longer than
 * what it keeps would be cut, and two ids differing past the cut would be one:
 * refused whole instead (INVALID_VALUE), as the bisector and attributor do.
 * The series key's parts are checked with it: the family and config group.
 */
#define ID_FIELD(what, s, cap) {(what), (s), (cap)}
_Static_assert(PW_KEY_MODEL_MAX < PW_PAGER_STR && PW_KEY_HLO_FINGERPRINT_MAX < PW_PAGER_STR &&
                       PW_KEY_PLATFORM_MAX < PW_PAGER_STR && PW_KEY_CONFIG_MAX < PW_PAGER_STR &&
                       PW_KEY_METRIC_MAX < PW_PAGER_STR && PW_SERIES_KEY_MAX <= 2 * PW_PAGER_STR,
               "the pager's fields hold every key part and key the ingester accepts");
typedef struct id_field {
	const char *what;
	const char *s;
	size_t cap; /* bytes kept, with the NUL */
} id_field;

static pw_status ids_fit(const char *msg, const id_field *ids, size_t n, const Perfwatch__V1__SeriesKey *k,
                         Perfwatch__V1__DlqReason *reason, char *why, size_t whylen)
{
	/* the parts' limits are the ingester's (pw_limits.h): the pager keeps any key it stored */
	const id_field parts[] = {
		ID_FIELD("series.model", k ? k->model : NULL, PW_KEY_MODEL_MAX + 1),
		ID_FIELD("series.hlo_fingerprint", k ? k->hlo_fingerprint : NULL, PW_KEY_HLO_FINGERPRINT_MAX + 1),
		ID_FIELD("series.platform", k ? k->platform : NULL, PW_KEY_PLATFORM_MAX + 1),
		ID_FIELD("series.config", k ? k->config : NULL, PW_KEY_CONFIG_MAX + 1),
		ID_FIELD("series.metric", k ? k->metric : NULL, PW_KEY_METRIC_MAX + 1),
	};
	for (size_t i = 0; i < n + sizeof parts / sizeof parts[0]; i++) {
		const id_field *f = i < n ? &ids[i] : &parts[i - n];
		size_t l = f->s ? strlen(f->s) : 0;
		if (l >= f->cap) {
			*reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
			return pw_fail(PW_ERR_INVALID, why, whylen, "%s: %s is %zu bytes, over the pager's %zu", msg, f->what,
			               l, f->cap - 1);
		}
	}
	return PW_OK;
}

pw_status pw_pager_part_decode(pw_pager_in k, const void *buf, size_t len, pw_pager_part *p,
                               Perfwatch__V1__DlqReason *reason, char *why, size_t whylen)
{
	memset(p, 0, sizeof *p);
	*reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED;
	pw_status st = PW_OK;
	if (k == PW_PAGER_IN_ALERT) {
		Perfwatch__V1__Alert *m = perfwatch__v1__alert__unpack(NULL, len, buf);
		if (!m)
			return pw_fail(PW_ERR_INVALID, why, whylen, "payload is not a perfwatch.v1.Alert");
		*reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
		if (!m->alert_id || !m->alert_id[0])
			st = pw_fail(PW_ERR_INVALID, why, whylen, "alert has no alert_id");
		else if (!m->series_key || !m->series_key[0] || !m->series || !m->series->model || !m->series->model[0])
			st = pw_fail(PW_ERR_INVALID, why, whylen, "alert \"%.100s\" has no series key", m->alert_id);
		else if ((st = ids_fit("alert",
		                       (const id_field[]){ID_FIELD("alert_id", m->alert_id, PW_PAGER_STR),
		                                          ID_FIELD("series_key", m->series_key, PW_SERIES_KEY_MAX)},
		                       2, m->series, reason, why, whylen)) != PW_OK)
			;
		else if ((st = pw_finding_from_alert(m, &p->f)) == PW_OK) {
			correlated_trim(&p->f);
			p->opens = true;
			snprintf(p->key, sizeof p->key, "alert:%.*s:r%" PRIu32, PART_ID_KEPT, m->alert_id, p->f.revision);
		}
		perfwatch__v1__alert__free_unpacked(m, NULL);
		return st;
	}
	if (k == PW_PAGER_IN_BISECTION) {
		Perfwatch__V1__Bisection *m = perfwatch__v1__bisection__unpack(NULL, len, buf);
		if (!m)
			return pw_fail(PW_ERR_INVALID, why, whylen, "payload is not a perfwatch.v1.Bisection");
		*reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
		if (!m->bisection_id || !m->bisection_id[0])
			st = pw_fail(PW_ERR_INVALID, why, whylen, "bisection has no bisection_id");
		else if ((!m->alert_id || !m->alert_id[0]) && (!m->series_key || !m->series_key[0]))
			st = pw_fail(PW_ERR_INVALID, why, whylen, "bisection \"%.100s\" names neither an alert nor a series",
			             m->bisection_id);
		else if ((st = ids_fit("bisection",
		                       (const id_field[]){ID_FIELD("bisection_id", m->bisection_id, PART_BISECTION_KEPT + 1),
		                                          ID_FIELD("alert_id", m->alert_id, PW_PAGER_STR),
		                                          ID_FIELD("series_key", m->series_key, PW_SERIES_KEY_MAX),
		                                          ID_FIELD("culprit", m->culprit, PART_CULPRIT_KEPT + 1)},
		                       4, m->series, reason, why, whylen)) != PW_OK)
			;
		else {
			if (m->alert_id && m->alert_id[0])
				st = pw_finding_from_bisection(m, &p->f);
			else { /* a changepoint's bisection: joins through its range and culprit */
				Perfwatch__V1__Bisection tmp = *m;
				tmp.alert_id = (char *)"-";
				st = pw_finding_from_bisection(&tmp, &p->f);
				p->f.alert_id[0] = 0;
			}
			p->f.created_us = m->updated_unix_us ? m->updated_unix_us : m->started_unix_us;
			snprintf(p->key, sizeof p->key, "bisection:%.*s:%s:%.*s:%" PRId64, PART_BISECTION_KEPT,
			         m->bisection_id, pw_bisection_status_name(m->status), PART_CULPRIT_KEPT,
			         m->culprit ? m->culprit : "", m->updated_unix_us);
		}
		perfwatch__v1__bisection__free_unpacked(m, NULL);
		return st;
	}
	if (k == PW_PAGER_IN_ATTRIBUTION) {
		Perfwatch__V1__Attribution *m = perfwatch__v1__attribution__unpack(NULL, len, buf);
		if (!m)
			return pw_fail(PW_ERR_INVALID, why, whylen, "payload is not a perfwatch.v1.Attribution");
		*reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
		if (!m->alert_id || !m->alert_id[0])
			st = pw_fail(PW_ERR_INVALID, why, whylen, "attribution has no alert_id");
		else if ((st = ids_fit("attribution",
		                       (const id_field[]){ID_FIELD("alert_id", m->alert_id, PW_PAGER_STR),
		                                          ID_FIELD("series_key", m->series_key, PW_SERIES_KEY_MAX)},
		                       2, m->series, reason, why, whylen)) != PW_OK)
			;
		else if ((st = pw_finding_from_attribution(m, &p->f)) == PW_OK)
			snprintf(p->key, sizeof p->key, "attribution:%.*s:%" PRId64, PART_ID_KEPT, m->alert_id, m->created_unix_us);
		perfwatch__v1__attribution__free_unpacked(m, NULL);
		return st;
	}
	if (k == PW_PAGER_IN_CHANGEPOINT) {
		Perfwatch__V1__Changepoint *m = perfwatch__v1__changepoint__unpack(NULL, len, buf);
		if (!m)
			return pw_fail(PW_ERR_INVALID, why, whylen, "payload is not a perfwatch.v1.Changepoint");
		*reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
		if (!m->changepoint_id || !m->changepoint_id[0])
			st = pw_fail(PW_ERR_INVALID, why, whylen, "changepoint has no changepoint_id");
		else if (!m->series_key || !m->series_key[0])
			st = pw_fail(PW_ERR_INVALID, why, whylen, "changepoint \"%.100s\" has no series_key", m->changepoint_id);
		else if ((st = ids_fit("changepoint",
		                       (const id_field[]){ID_FIELD("changepoint_id", m->changepoint_id, PART_ID_KEPT + 1),
		                                          ID_FIELD("series_key", m->series_key, PW_SERIES_KEY_MAX)},
		                       2, m->key, reason, why, whylen)) != PW_OK)
			;
		else {
			pw_finding *f = &p->f;
			copy(f->series_key, sizeof f->series_key, m->series_key);
			if (m->key) {
				copy(f->model, sizeof f->model, m->key->model);
				copy(f->hlo_fingerprint, sizeof f->hlo_fingerprint, m->key->hlo_fingerprint);
				copy(f->platform, sizeof f->platform, m->key->platform);
				copy(f->config, sizeof f->config, m->key->config);
				copy(f->metric, sizeof f->metric, m->key->metric);
			}
			copy(f->nightly, sizeof f->nightly, m->day);
			copy(f->cl_lo, sizeof f->cl_lo, m->last_clean_cl);
			copy(f->cl_hi, sizeof f->cl_hi, m->first_shifted_cl);
			f->n_cls = m->n_cls;
			f->delta_pct = m->delta_pct;
			copy(f->fleet_event_id, sizeof f->fleet_event_id, m->fleet_event_id);
			f->created_us = m->detected_unix_us ? m->detected_unix_us : m->shift_unix_us;
			snprintf(p->key, sizeof p->key, "changepoint:%.*s", PART_ID_KEPT, m->changepoint_id);
		}
		perfwatch__v1__changepoint__free_unpacked(m, NULL);
		return st;
	}
	if (k == PW_PAGER_IN_ROLLOUT) {
		Perfwatch__V1__RolloutDecision *m = perfwatch__v1__rollout_decision__unpack(NULL, len, buf);
		if (!m)
			return pw_fail(PW_ERR_INVALID, why, whylen, "payload is not a perfwatch.v1.RolloutDecision");
		*reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
		bool rollback = m->decision == PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_ROLLBACK;
		const rollout_kind *kind = rollout_kind_of(m->decision);
		if (!rollout_named(m, kind))
			st = pw_fail(PW_ERR_INVALID, why, whylen, "rollout decision has no rollout_id");
		else if (!m->family || !m->family[0])
			st = pw_fail(PW_ERR_INVALID, why, whylen, "rollout decision \"%.100s\" has no family", m->rollout_id);
		else if (!kind)
			st = pw_fail(PW_ERR_INVALID, why, whylen,
			             "rollout decision \"%.100s/%.100s\" has no decision this build knows (%d)", m->rollout_id,
			             m->family, (int)m->decision);
		else if (rollback && (!m->rollback_artifact || !m->rollback_artifact[0]))
			st = pw_fail(PW_ERR_INVALID, why, whylen, "rollback \"%.100s/%.100s\" names no rollback_artifact",
			             m->rollout_id, m->family);
		else if (rollback && !canary_metric_name(m->metric)[0])
			st = pw_fail(PW_ERR_INVALID, why, whylen, "rollback \"%.100s/%.100s\" names no metric", m->rollout_id,
			             m->family);
		else if ((st = ids_fit("rollout decision",
		                       (const id_field[]){ID_FIELD("rollout_id", m->rollout_id, 2 * PW_PAGER_STR),
		                                          ID_FIELD("family", m->family, 2 * PW_PAGER_STR),
		                                          ID_FIELD("release", m->release, PW_PAGER_STR),
		                                          ID_FIELD("previous_release", m->previous_release, PW_PAGER_STR),
		                                          ID_FIELD("rollback_artifact", m->rollback_artifact, 2 * PW_PAGER_STR)},
		                       5, NULL, reason, why, whylen)) != PW_OK)
			;
		else if (rollback && (!isfinite(m->effect_pct) || !isfinite(m->lo_pct) || !isfinite(m->hi_pct) ||
		                      m->lo_pct > m->effect_pct || m->effect_pct > m->hi_pct || m->windows == 0)) {
			*reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
			st = pw_fail(PW_ERR_INVALID, why, whylen,
			             "rollback \"%.100s/%.100s\": effect %g outside its interval [%g, %g] or no windows (%u)",
			             m->rollout_id, m->family, m->effect_pct, m->lo_pct, m->hi_pct, m->windows);
		} else if ((st = pw_finding_from_rollout(m, &p->f)) != PW_OK) {
			st = pw_fail(st, why, whylen, "rollout decision \"%.100s/%.100s\" could not be read", m->rollout_id,
			             m->family);
		} else {
			p->opens = rollback;
			snprintf(p->key, sizeof p->key, "rollout:%s", p->f.alert_id); /* one per (rollout, family) */
		}
		perfwatch__v1__rollout_decision__free_unpacked(m, NULL);
		return st;
	}
	return pw_fail(PW_ERR_INVALID, why, whylen, "no decoder for this topic");
}

Perfwatch__V1__DlqReason pw_pager_door(pw_pager_in k, const void *payload, size_t len, pw_pager_part *pt,
                                       Perfwatch__V1__GateVerdict **gv, char *detail, size_t detail_len)
{
	memset(pt, 0, sizeof *pt);
	*gv = NULL;
	if (detail_len)
		detail[0] = 0;
	const ProtobufCMessageDescriptor *desc = pw_pager_in_desc(k);
	if (!desc) {
		snprintf(detail, detail_len, "topic not consumed by the pager");
		return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	}
	if (!payload || len == 0) {
		snprintf(detail, detail_len, "empty payload");
		return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED;
	}
	if (pw_input_check_wire(desc, payload, len, detail, detail_len) != PW_OK)
		return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	if (k == PW_PAGER_IN_GATE) {
		Perfwatch__V1__GateVerdict *v = perfwatch__v1__gate_verdict__unpack(NULL, len, payload);
		if (!v) {
			snprintf(detail, detail_len, "payload is not a perfwatch.v1.GateVerdict");
			return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED;
		}
		if (!v->release_id || !v->release_id[0]) {
			perfwatch__v1__gate_verdict__free_unpacked(v, NULL);
			snprintf(detail, detail_len, "gate verdict has no release_id");
			return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
		}
		*gv = v;
		return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED;
	}
	Perfwatch__V1__DlqReason reason;
	if (pw_pager_part_decode(k, payload, len, pt, &reason, detail, detail_len) != PW_OK) {
		memset(pt, 0, sizeof *pt);
		return reason;
	}
	return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED;
}
