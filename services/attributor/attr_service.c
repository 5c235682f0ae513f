/*
 * attr_service.c: what the attribution worker does with a batch (seed
 * §6.2–6.3). For each regression alert on perf.alerts.v1 and each culprit on
 * perf.bisections.v1 it reads the before and after runs of the alerting
 * series from PostgreSQL (attr_store.c), computes the attribution
 * (attribute.c), and writes it with its Attribution message in the outbox in
 * one transaction; the runtime (common/pw_service.h) publishes it on
 * perf.attributions.v1 after the commit. Idempotent per alert
 * (attributions.input_key), restart-safe (the consumer commits only after the
 * transaction; the outbox resends what a killed run left). Bad input is
 * dead-lettered with the reason.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr_store.h"
#include "attr_service.h"
#include "attribute.h"
#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/bisect.pb-c.h"
#include "pw_alert_followup.h"
#include "pw_input.h"
#include "pw_service.h"
#include "pw_time.h"
#include "pw_topics.h"

typedef struct app {
	pw_service *svc;
	const pw_log *lg;
	pw_metric *m_done;      /* attributions{source,status,outcome} */
	pw_metric *m_latency;   /* seconds from alert creation to attribution */
} app;

/* A worker is the runtime's own (def.worker_is_ctx): its connections, and the app in ->app. */
typedef pw_service_worker worker;

static app *app_of(const worker *k)
{
	return k->app;
}

pw_status pw_attributor_init(pw_service *svc, void **out, char *errbuf, size_t errlen)
{
	app *a = *out; /* zeroed by the runtime (def.app_size) */
	a->svc = svc;
	a->lg = pw_service_log(svc);
	pw_metrics *reg = pw_service_metrics(svc);
	static const double buckets[] = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
	pw_status st = pw_metrics_counter(reg, "perfwatch_attributor_attributions_total",
	                                  "attributions computed, by input source, status and outcome",
	                                  (const char *const[]){"source", "status", "outcome", NULL},
	                                  &a->m_done, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_histogram(reg, "perfwatch_attributor_alert_to_attribution_seconds",
		                          "seconds from the alert's creation to its attribution's commit",
		                          NULL, buckets, sizeof buckets / sizeof buckets[0], &a->m_latency,
		                          errbuf, errlen);
	return st;
}

/* "cl/7841917" -> 7841917; 0 when malformed. */
static int64_t cl_number(const char *cl)
{
	if (!cl || strncmp(cl, "cl/", 3) != 0)
		return 0;
	char *end;
	long long v = strtoll(cl + 3, &end, 10);
	return (*end == 0 || *end == '@') && v > 0 ? v : 0;
}

typedef struct job {
	const char *alert_id, *series_key, *source, *bisection_id;
	int64_t series_id;
	const Perfwatch__V1__SeriesKey *key;
	attr_select before, after;
	const char *after_build;          /* for related series: the after side's build */
	char input_key[256];
	int64_t alert_created_us, received_us;
} job;

/* Computes and stores one attribution; PW_OK also when nothing new was written. */
static pw_status attribute_one(worker *k, job *j, char *errbuf, size_t errlen)
{
	pw_pg *pg = k->pg;
	attr_side b = {0}, a = {0};
	attr_platforms ps = {0};
	attr_related rel = {0};
	pw_attr_result r = {0};
	bool have_r = false;
	char fleet[512] = "";
	pw_status st;
	if ((st = attr_side_load(pg, j->series_id, &j->before, &b, errbuf, errlen)) != PW_OK)
		goto out;
	if ((st = attr_side_load(pg, j->series_id, &j->after, &a, errbuf, errlen)) != PW_OK)
		goto out;
	if ((st = attr_platforms_load(pg, &ps, errbuf, errlen)) != PW_OK)
		goto out;
	if ((st = attr_related_load(pg, j->key->model, j->key->platform, j->key->config, &j->before,
	                            j->after_build, &ps, &rel, errbuf, errlen)) != PW_OK)
		goto out;
	if ((st = attr_fleet_overlap(pg, j->key->platform, b.last_us, a.last_us, fleet, sizeof fleet,
	                             errbuf, errlen)) != PW_OK)
		goto out;
	/* the clean ones: related series that did not move */
	size_t nclean = 0;
	for (size_t i = 0; i < rel.n; i++)
		if (!rel.c[i].moved)
			rel.c[nclean++] = rel.c[i];
	pw_attr_context ctx = {attr_platform_find(&ps, j->key->platform), j->key->config,
	                       fleet[0] ? fleet : NULL, rel.c, nclean};
	if ((st = pw_attr_compute(&b.side, &a.side, &ctx, &r)) != PW_OK) {
		pw_fail(st, errbuf, errlen, "attribution of \"%s\": out of memory", j->alert_id);
		goto out;
	}
	have_r = true;
	attr_write w = {j->alert_id, j->series_id, j->series_key, j->key->model, j->key->hlo_fingerprint,
	                j->key->platform, j->key->config, j->key->metric, j->source, j->bisection_id,
	                j->input_key, j->received_us};
	attr_write_outcome oc;
	if ((st = attr_store_write(pg, &w, &r, &oc, errbuf, errlen)) != PW_OK)
		goto out;
	static const char *const outcomes[] = {"written", "same_input", "superseded"};
	pw_metric_inc(app_of(k)->m_done, (const char *const[]){j->source, pw_attr_status_name(r.status), outcomes[oc]});
	if (oc == ATTR_WRITTEN) {
		double lat = j->alert_created_us > 0 ? (double)(pw_now_us() - j->alert_created_us) / 1e6 : -1;
		if (lat >= 0)
			pw_metric_observe(app_of(k)->m_latency, NULL, lat);
		pw_log_info(app_of(k)->lg,
		            "attributed \"%s\" (%s): status %s, owner %s, top family %s, predicted %+.0f µs, "
		            "measured %+.0f µs, residual %+.0f µs, %.3f s after the alert",
		            j->alert_id, j->source, pw_attr_status_name(r.status), r.owner_hint, r.top_family,
		            r.predicted_us, r.measured_us, r.residual_us, lat);
	}
out:
	if (have_r)
		pw_attr_result_release(&r);
	attr_related_release(&rel);
	attr_platforms_release(&ps);
	attr_side_release(&a);
	attr_side_release(&b);
	return st;
}

/* ---- inputs ---------------------------------------------------------------------------- */

static pw_status dead(worker *k, const rd_kafka_message_t *m, const char *type,
                      Perfwatch__V1__DlqReason reason, const char *detail, char *errbuf, size_t errlen)
{
	return pw_service_dead_letter(k, m, type, reason, detail, errbuf, errlen);
}

static bool key_complete(const Perfwatch__V1__SeriesKey *s)
{
	return s && s->model && s->model[0] && s->hlo_fingerprint && s->hlo_fingerprint[0] && s->platform &&
	       s->platform[0] && s->config && s->config[0] && s->metric && s->metric[0];
}

/* Ids and keys longer than this are refused, not cut (the attribution's rows key on them). */
#define ID_MAX 200

/* NUL bytes or invalid UTF-8 in any string of the wire form: a dead letter naming the field. */
static bool wire_bad(worker *k, const rd_kafka_message_t *m, const ProtobufCMessageDescriptor *desc,
                     const char *type, pw_status *st, char *errbuf, size_t errlen)
{
	char why[256];
	if (pw_input_check_wire(desc, m->payload, m->len, why, sizeof why) == PW_OK)
		return false;
	char detail[320];
	snprintf(detail, sizeof detail, "%s: %s", type, why);
	*st = dead(k, m, type, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, detail, errbuf, errlen);
	return true;
}

static bool too_long(const char *s, size_t max)
{
	return s && strlen(s) > max;
}

static pw_status on_alert(worker *k, const rd_kafka_message_t *m, int64_t now, char *errbuf,
                          size_t errlen)
{
	static const char *type = "perfwatch.v1.Alert";
	pw_status wst;
	if (wire_bad(k, m, &perfwatch__v1__alert__descriptor, type, &wst, errbuf, errlen))
		return wst;
	Perfwatch__V1__Alert *al = perfwatch__v1__alert__unpack(NULL, m->len, m->payload);
	if (!al)
		return dead(k, m, type, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED,
		            "payload is not a perfwatch.v1.Alert", errbuf, errlen);
	pw_status st = PW_OK;
	char detail[256] = "";
	Perfwatch__V1__DlqReason reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
	if (pw_alert_is_follow_up(al)) {
		pw_metric_inc(app_of(k)->m_done, (const char *const[]){"alert", "none", "follow_up"});
		goto done; /* a later revision carrying a bisection or attribution: nothing new to attribute */
	}
	if (al->kind != PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION ||
	    (al->source != PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_GATE &&
	     al->source != PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_WATCHER))
		goto done; /* improvements, infra health and the baseliner's outliers are not attributed */
	if (!al->alert_id || !al->alert_id[0])
		snprintf(detail, sizeof detail, "alert has no alert_id");
	else if (!key_complete(al->series))
		snprintf(detail, sizeof detail, "alert \"%.100s\" has an incomplete series key", al->alert_id);
	else if (!al->observed || !al->observed->release || !al->observed->release[0])
		snprintf(detail, sizeof detail, "alert \"%.100s\" names no observed build", al->alert_id);
	if (!detail[0] && (too_long(al->alert_id, ID_MAX) || too_long(al->series_key, PW_SERIES_KEY_MAX - 1) ||
	                   too_long(al->observed->release, ID_MAX))) {
		reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
		snprintf(detail, sizeof detail, "alert \"%.100s\": alert_id, series key or observed build too long "
		         "(%zu, %zu, %zu bytes; at most %d, %d, %d)", al->alert_id, strlen(al->alert_id),
		         al->series_key ? strlen(al->series_key) : 0, strlen(al->observed->release), ID_MAX,
		         PW_SERIES_KEY_MAX - 1, ID_MAX);
	}
	if (detail[0]) {
		st = dead(k, m, type, reason, detail, errbuf, errlen);
		goto done;
	}
	job j = {.alert_id = al->alert_id, .series_key = al->series_key, .source = "alert",
	         .bisection_id = "", .series_id = al->series_id, .key = al->series,
	         .alert_created_us = al->created_unix_us, .received_us = now};
	if (j.series_id <= 0) {
		st = attr_series_id(k->pg, al->series_key ? al->series_key : "", &j.series_id, errbuf, errlen);
		if (st == PW_ERR_NOT_FOUND) {
			st = dead(k, m, type, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNKNOWN_REFERENCE, errbuf, errbuf,
			          errlen);
			goto done;
		}
		if (st != PW_OK)
			goto done;
	}
	const Perfwatch__V1__AlertBaseline *bl = al->baseline;
	if (bl && bl->window_start_unix_us > 0 && bl->window_end_unix_us > bl->window_start_unix_us) {
		j.before.window_start_us = bl->window_start_unix_us;
		j.before.window_end_us = bl->window_end_unix_us;
	} else if (al->changepoint && cl_number(al->changepoint->cl_range_lo) > 0) {
		j.before.max_cl = cl_number(al->changepoint->cl_range_lo);
	} else if (bl && bl->window && bl->window[0]) {
		j.before.build_id = bl->window; /* the gate names the baseline release there */
	} else {
		snprintf(detail, sizeof detail,
		         "alert \"%.100s\" has no baseline window, changepoint range or baseline build", al->alert_id);
		st = dead(k, m, type, reason, detail, errbuf, errlen);
		goto done;
	}
	j.after.build_id = al->observed->release;
	j.after_build = al->observed->release;
	{
		/* the original, for the follow-up that links the attribution from its artifacts block */
		char key[512];
		size_t kl = m->key && m->key_len < sizeof key ? m->key_len : 0;
		memcpy(key, m->key ? m->key : "", kl);
		key[kl] = 0;
		if ((st = pw_alert_followup_record(k->pg, al, key, m->payload, m->len, errbuf, errlen)) != PW_OK) {
			if (!pw_service_retriable(st)) {
				char why[512];
				snprintf(why, sizeof why, "%s", errbuf);
				st = dead(k, m, type, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED, why, errbuf,
				          errlen);
			}
			goto done;
		}
	}
	snprintf(j.input_key, sizeof j.input_key, "alert:%.200s:r%" PRIu32, al->alert_id, al->revision);
	st = attribute_one(k, &j, errbuf, errlen);
	if (st != PW_OK && !pw_service_retriable(st)) {
		char why[512];
		snprintf(why, sizeof why, "%s", errbuf);
		st = dead(k, m, type, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED, why, errbuf, errlen);
	}
done:
	perfwatch__v1__alert__free_unpacked(al, NULL);
	return st;
}

static pw_status on_bisection(worker *k, const rd_kafka_message_t *m, int64_t now, char *errbuf,
                              size_t errlen)
{
	static const char *type = "perfwatch.v1.Bisection";
	pw_status wst;
	if (wire_bad(k, m, &perfwatch__v1__bisection__descriptor, type, &wst, errbuf, errlen))
		return wst;
	Perfwatch__V1__Bisection *bs = perfwatch__v1__bisection__unpack(NULL, m->len, m->payload);
	if (!bs)
		return dead(k, m, type, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED,
		            "payload is not a perfwatch.v1.Bisection", errbuf, errlen);
	pw_status st = PW_OK;
	char detail[256] = "";
	const char **before = NULL, **after = NULL;
	int64_t culprit = cl_number(bs->culprit);
	if (!bs->culprit || !bs->culprit[0] || bs->status != PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_DONE)
		goto done; /* not (yet) a culprit: nothing to attribute */
	if (!bs->bisection_id || !bs->bisection_id[0])
		snprintf(detail, sizeof detail, "bisection has no bisection_id");
	else if (!bs->alert_id || !bs->alert_id[0])
		snprintf(detail, sizeof detail, "bisection \"%.100s\" names no alert", bs->bisection_id);
	else if (!key_complete(bs->series) || !bs->series_key || !bs->series_key[0])
		snprintf(detail, sizeof detail, "bisection \"%.100s\" has an incomplete series key", bs->bisection_id);
	else if (culprit <= 0)
		snprintf(detail, sizeof detail, "bisection \"%.100s\" has culprit \"%.40s\", not cl/N",
		         bs->bisection_id, bs->culprit);
	else if (too_long(bs->bisection_id, ID_MAX) || too_long(bs->alert_id, ID_MAX) ||
	         too_long(bs->series_key, PW_SERIES_KEY_MAX - 1) || bs->n_steps > 4096)
		snprintf(detail, sizeof detail, "bisection \"%.100s\": ids of %zu, %zu, %zu bytes, %zu steps "
		         "(at most %d, %d, %d bytes, 4096 steps)", bs->bisection_id, strlen(bs->bisection_id),
		         strlen(bs->alert_id), strlen(bs->series_key), bs->n_steps, ID_MAX, ID_MAX,
		         PW_SERIES_KEY_MAX - 1);
	if (detail[0]) {
		bool missing = !bs->bisection_id || !bs->bisection_id[0] || !bs->alert_id || !bs->alert_id[0] ||
		               !key_complete(bs->series) || !bs->series_key || !bs->series_key[0];
		st = dead(k, m, type,
		          !missing
		                  ? PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
		                  : PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD,
		          detail, errbuf, errlen);
		goto done;
	}
	/* culprit−1: the adjacent verification (or a clean step just below); culprit: its own steps */
	before = calloc(bs->n_steps + 1, sizeof *before);
	after = calloc(bs->n_steps + 1, sizeof *after);
	if (!before || !after) {
		st = PW_ERR_NOMEM;
		goto done;
	}
	size_t nb = 0, na = 0;
	for (size_t i = 0; i < bs->n_steps; i++) {
		const Perfwatch__V1__BisectStep *s = bs->steps[i];
		if (!s->job_id || !s->job_id[0])
			continue;
		if (s->purpose == PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_VERIFY_ADJACENT ||
		    (s->cl_number == culprit - 1))
			before[nb++] = s->job_id;
		else if (s->cl_number == culprit &&
		         s->purpose != PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_VERIFY_CHERRY_PICK)
			after[na++] = s->job_id;
	}
	if (nb == 0 || na == 0) {
		snprintf(detail, sizeof detail,
		         "bisection \"%.100s\" has no step at %s culprit-1 or at the culprit with a job id",
		         bs->bisection_id, bs->culprit);
		st = dead(k, m, type, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT, detail, errbuf, errlen);
		goto done;
	}
	job j = {.alert_id = bs->alert_id, .series_key = bs->series_key, .source = "bisection",
	         .bisection_id = bs->bisection_id, .key = bs->series, .received_us = now};
	j.before.job_ids = before;
	j.before.njobs = nb;
	j.after.job_ids = after;
	j.after.njobs = na;
	st = attr_series_id(k->pg, bs->series_key, &j.series_id, errbuf, errlen);
	if (st == PW_ERR_NOT_FOUND) {
		char why[512];
		snprintf(why, sizeof why, "%s", errbuf);
		st = dead(k, m, type, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNKNOWN_REFERENCE, why, errbuf, errlen);
		goto done;
	}
	if (st != PW_OK)
		goto done;
	snprintf(j.input_key, sizeof j.input_key, "bisection:%.120s:%.40s", bs->bisection_id, bs->culprit);
	st = attribute_one(k, &j, errbuf, errlen);
	if (st != PW_OK && !pw_service_retriable(st)) {
		char why[512];
		snprintf(why, sizeof why, "%s", errbuf);
		st = dead(k, m, type, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED, why, errbuf, errlen);
	}
done:
	free(before);
	free(after);
	perfwatch__v1__bisection__free_unpacked(bs, NULL);
	return st;
}

pw_status pw_attributor_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                          size_t errlen)
{
	worker *k = ctx;
	int64_t now = pw_now_us();
	for (size_t i = 0; i < n; i++) {
		const rd_kafka_message_t *m = msgs[i];
		const char *topic = rd_kafka_topic_name(m->rkt);
		pw_status st;
		if (!m->payload || m->len == 0)
			st = dead(k, m, strcmp(topic, PW_TOPIC_BISECTIONS) == 0 ? "perfwatch.v1.Bisection" : "perfwatch.v1.Alert",
			          PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, "empty payload", errbuf, errlen);
		else if (strcmp(topic, PW_TOPIC_BISECTIONS) == 0)
			st = on_bisection(k, m, now, errbuf, errlen);
		else
			st = on_alert(k, m, now, errbuf, errlen);
		if (st != PW_OK)
			return st; /* retriable: the batch is redone; what was written is idempotent */
	}
	return PW_OK;
}


size_t pw_attributor_app_size(void)
{
	return sizeof(app);
}
