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
 * dead-lettered with the reason its door gives (attr_door.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr_door.h"
#include "attr_store.h"
#include "attr_service.h"
#include "attribute.h"
#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/bisect.pb-c.h"
#include "pw_alert_followup.h"
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

static pw_status on_alert(worker *k, const rd_kafka_message_t *m, int64_t now, char *errbuf,
                          size_t errlen)
{
	static const char *type = "perfwatch.v1.Alert";
	Perfwatch__V1__Alert *al = NULL;
	pw_attr_before before;
	Perfwatch__V1__DlqReason reason;
	char detail[512];
	pw_attr_input in = pw_attr_alert_decode(m->payload, m->len, &al, &before, &reason, detail, sizeof detail);
	if (in == PW_ATTR_INPUT_DEAD)
		return dead(k, m, type, reason, detail, errbuf, errlen);
	pw_status st = PW_OK;
	if (in == PW_ATTR_INPUT_FOLLOW_UP) {
		pw_metric_inc(app_of(k)->m_done, (const char *const[]){"alert", "none", "follow_up"});
		goto done; /* a later revision carrying a bisection or attribution: nothing new to attribute */
	}
	if (in == PW_ATTR_INPUT_IGNORE)
		goto done; /* improvements, infra health and the baseliner's outliers are not attributed */
	job j = {.alert_id = al->alert_id, .series_key = al->series_key, .source = "alert",
	         .bisection_id = "", .series_id = al->series_id, .key = al->series,
	         .alert_created_us = al->created_unix_us, .received_us = now};
	if (j.series_id <= 0) {
		st = attr_series_id(k->pg, al->series_key, &j.series_id, errbuf, errlen);
		if (st == PW_ERR_NOT_FOUND) {
			st = dead(k, m, type, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNKNOWN_REFERENCE, errbuf, errbuf,
			          errlen);
			goto done;
		}
		if (st != PW_OK)
			goto done;
	}
	j.before.window_start_us = before.window_start_us;
	j.before.window_end_us = before.window_end_us;
	j.before.max_cl = before.max_cl;
	j.before.build_id = before.build_id;
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
				st = dead(k, m, type, pw_service_failure_reason(st), why, errbuf,
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
		st = dead(k, m, type, pw_service_failure_reason(st), why, errbuf, errlen);
	}
done:
	perfwatch__v1__alert__free_unpacked(al, NULL);
	return st;
}

static pw_status on_bisection(worker *k, const rd_kafka_message_t *m, int64_t now, char *errbuf,
                              size_t errlen)
{
	static const char *type = "perfwatch.v1.Bisection";
	Perfwatch__V1__Bisection *bs = NULL;
	Perfwatch__V1__DlqReason reason;
	char detail[512];
	pw_attr_input in = pw_attr_bisection_decode(m->payload, m->len, &bs, &reason, detail, sizeof detail);
	if (in == PW_ATTR_INPUT_DEAD)
		return dead(k, m, type, reason, detail, errbuf, errlen);
	pw_status st = PW_OK;
	const char **before = NULL, **after = NULL;
	if (in != PW_ATTR_INPUT_ACCEPT)
		goto done; /* not (yet) a culprit: nothing to attribute */
	/* culprit−1: the adjacent verification (or a clean step just below); culprit: its own steps */
	before = calloc(bs->n_steps + 1, sizeof *before);
	after = calloc(bs->n_steps + 1, sizeof *after);
	if (!before || !after) {
		st = PW_ERR_NOMEM;
		goto done;
	}
	size_t nb = 0, na = 0;
	pw_attr_culprit_steps(bs, before, &nb, after, &na); /* the door saw both sides non-empty */
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
		st = dead(k, m, type, pw_service_failure_reason(st), why, errbuf, errlen);
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
		/* the doors (attr_door.h) dead-letter empty payloads too */
		if (strcmp(topic, PW_TOPIC_BISECTIONS) == 0)
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
