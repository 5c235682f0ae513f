/*
 * bisector_service.c: the bisection scheduler (seed §6.1, artifact 4) as a
 * pw_service: what its consumer worker does with a batch of CLs and alerts
 * and what its tick does with the active bisections. main.c declares the
 * service; pw_service.c runs it; the decisions are bisect.c's, confirm.c's
 * and the doors and messages of bisect_msg.c.
 *
 * Inputs: perf.compiler-cls.v1 (the CL history, upserted into
 * perfwatch.compiler_cls) and perf.alerts.v1 (regression alerts of the gate
 * and the watcher). A regression alert names an event: the alerting family
 * (model) and the regressed head CL. bisector_events holds one row per event
 * (INSERT ... ON CONFLICT), so every alert of the event shares one
 * bisection; a redelivered alert changes nothing.
 *
 * The tick is the scheduler. bisect.h is a pure fold over measured steps, so
 * each tick re-initialises every active bisection from PostgreSQL (range,
 * CLs) and re-applies its stored steps (bisection_samples); when the due
 * job's runs are in (perfwatch.samples with its bisect_job_id, for the
 * bisection's model/platform/config/metric) its samples and step are stored,
 * and the next job is written to bisect_jobs with its BisectJob and the
 * updated Bisection in the outbox, in one transaction. A killed bisector
 * re-derives the same state and the same deterministic job ids; a job
 * pending longer than bisector.job_timeout is re-published under the same id
 * (bisect_jobs.reissued + 1).
 */
#include "bisector_service.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "bisect_log.h"
#include "bisect_msg.h"
#include "confirm.h"
#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/compiler.pb-c.h"
#include "pw_alert_followup.h"
#include "pw_service.h"
#include "pw_time.h"
#include "pw_topics.h"

#define SVC "bisector"
#define MAX_STEPS 256

typedef struct app {
	pw_service *svc;
	const pw_log *lg;
	pw_bisect_config cfg;
	int64_t max_active;
	int64_t job_timeout_ms;
	int64_t max_reissues;
	int64_t gather_ms;
	pw_metric *m_status;    /* gauge bisections{status} */
	pw_metric *m_oldest;    /* gauge: age of the oldest bisection still in flight */
	pw_metric *m_builds;    /* histogram builds per finished bisection */
	pw_metric *m_ttc;       /* histogram seconds from start to verified culprit */
	pw_metric *m_events;    /* counter alerts{outcome} */
	pw_metric *m_jobs;      /* counter jobs{kind} published / reissued */
	pw_confirm confirm;     /* confirmation reruns of unconfirmed outliers (confirm.h) */
} app;

/* A worker is the runtime's own (def.worker_is_ctx): its connections, and the app in ->app. */
typedef pw_service_worker worker;

static app *app_of(const worker *k)
{
	return k->app;
}

static const pw_conf_key bisector_keys[] = {
	{.name = "bisector.repeats", .type = PW_CONF_INT, .def = "3", .min = 1, .max = 64,
	 .help = "runs per step build"},
	{.name = "bisector.endpoint_repeats", .type = PW_CONF_INT, .def = "5", .min = 1, .max = 64,
	 .help = "runs per endpoint build"},
	{.name = "bisector.max_repeats", .type = PW_CONF_INT, .def = "12", .min = 1, .max = 64,
	 .help = "an inconclusive step doubles its runs up to this"},
	{.name = "bisector.build_budget", .type = PW_CONF_INT, .def = "40", .min = 2, .max = 10000,
	 .help = "builds for endpoints, search, verification and pairs"},
	{.name = "bisector.roll_budget", .type = PW_CONF_INT, .def = "24", .min = 0, .max = 10000,
	 .help = "builds of the roll lane"},
	{.name = "bisector.alpha", .type = PW_CONF_DOUBLE, .def = "0.05", .min = 1e-6, .max = 0.5,
	 .help = "Mann-Whitney level of a step's judgement"},
	{.name = "bisector.max_active", .type = PW_CONF_INT, .def = "8", .min = 1, .max = 1000,
	 .help = "bisections scheduled at once (oldest first); the others wait; one whose job was re-issued unanswered holds no slot"},
	{.name = "bisector.job_timeout", .type = PW_CONF_DURATION_MS, .def = "30m", .min = 1000,
	 .max = 7 * 86400000.0, .help = "a job with no results after this is re-published (same id)"},
	{.name = "bisector.max_reissues", .type = PW_CONF_INT, .def = "3", .min = 0, .max = 1000,
	 .help = "a job re-published this many times and still without its results one job_timeout later fails its bisection (FAILED, reason no_answer)"},
	{.name = "bisector.gather", .type = PW_CONF_DURATION_MS, .def = "10s", .min = 0, .max = 3600000,
	 .help = "an event's alerts gathered before its first job: the primary latency metric (then throughput, tail latency, utilisation, cost), among those the largest |delta|/noise (saturated at 10), then relative effect, is bisected"},
	{.name = "bisector.confirm_repeats", .type = PW_CONF_INT, .def = "5", .min = 1, .max = 64,
	 .help = "repeats of a CONFIRM job: the outlier's nightly build rerun at its exact config"},
	{.name = "bisector.confirm_budget", .type = PW_CONF_INT, .def = "300", .min = 0, .max = 1000000,
	 .help = "confirmation rerun runs per data day (the outlier point's UTC date); beyond it an outlier stays unconfirmed and its revision says so (0: no reruns)"},
	{.name = "bisector.confirm_band_k", .type = PW_CONF_DOUBLE, .def = "5", .min = 0.5, .max = 100,
	 .help = "a rerun reproduces the outlier when its median is beyond baseline median +/- k sigma on the outlier's side (the baseliner's outlier_k)"},
	{.name = "bisector.confirm_lead", .type = PW_CONF_DURATION_MS, .def = "90m", .min = 0, .max = 7 * 86400000.0,
	 .help = "build and run time a CONFIRM job models: its runs are stamped at the point's time plus this (BisectJob.data_unix_us)"},
	{.name = "bisector.tick", .type = PW_CONF_DURATION_MS, .def = "1s", .min = 50, .max = 600000,
	 .help = "scheduler interval"},
};

const pw_conf_key *pw_bisector_config_keys(size_t *n)
{
	*n = sizeof bisector_keys / sizeof bisector_keys[0];
	return bisector_keys;
}

size_t pw_bisector_app_size(void)
{
	return sizeof(app);
}

static pw_status confirm_start(void *ctx, pw_pg *pg, const Perfwatch__V1__Alert *al, const char *key,
                               const void *payload, size_t len, char *bid, size_t bidlen, char *why,
                               size_t whylen, char *errbuf, size_t errlen);

pw_status pw_bisector_init(pw_service *svc, void **out, char *errbuf, size_t errlen)
{
	app *a = *out; /* zeroed by the runtime (def.app_size) */
	a->svc = svc;
	a->lg = pw_service_log(svc);
	const pw_config *c = pw_service_config(svc);
	pw_bisect_config_init(&a->cfg);
	a->cfg.repeats = (uint32_t)pw_config_get_int(c, "bisector.repeats");
	a->cfg.endpoint_repeats = (uint32_t)pw_config_get_int(c, "bisector.endpoint_repeats");
	a->cfg.max_repeats = (uint32_t)pw_config_get_int(c, "bisector.max_repeats");
	a->cfg.build_budget = (uint32_t)pw_config_get_int(c, "bisector.build_budget");
	a->cfg.roll_budget = (uint32_t)pw_config_get_int(c, "bisector.roll_budget");
	a->cfg.alpha = pw_config_get_double(c, "bisector.alpha");
	a->max_active = pw_config_get_int(c, "bisector.max_active");
	a->job_timeout_ms = pw_config_get_duration_ms(c, "bisector.job_timeout");
	a->max_reissues = pw_config_get_int(c, "bisector.max_reissues");
	a->gather_ms = pw_config_get_duration_ms(c, "bisector.gather");
	a->confirm = (pw_confirm){.service = SVC, .lg = a->lg, .start = confirm_start, .start_ctx = a,
	                          .repeats = (uint32_t)pw_config_get_int(c, "bisector.confirm_repeats"),
	                          .budget_runs = pw_config_get_int(c, "bisector.confirm_budget"),
	                          .band_k = pw_config_get_double(c, "bisector.confirm_band_k"),
	                          .lead_us = pw_config_get_duration_ms(c, "bisector.confirm_lead") * 1000,
	                          .job_timeout_ms = a->job_timeout_ms};
	if (a->cfg.max_repeats < a->cfg.repeats)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
		               "bisector.max_repeats must be at least bisector.repeats");
	pw_metrics *reg = pw_service_metrics(svc);
	static const double bb[] = {2, 4, 6, 8, 10, 12, 16, 20, 30, 40, 60};
	static const double tb[] = {10, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 43200};
	pw_status st = pw_metrics_gauge(reg, "perfwatch_bisector_bisections", "bisections by status",
	                                (const char *const[]){"status", NULL}, &a->m_status, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_gauge(reg, "perfwatch_bisector_oldest_active_seconds",
		                      "seconds since the oldest bisection still in flight started (0: none)",
		                      NULL, &a->m_oldest, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_histogram(reg, "perfwatch_bisector_builds", "builds per finished bisection", NULL,
		                          bb, sizeof bb / sizeof bb[0], &a->m_builds, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_histogram(reg, "perfwatch_bisector_time_to_culprit_seconds",
		                          "seconds from a bisection's start to its verified culprit", NULL, tb,
		                          sizeof tb / sizeof tb[0], &a->m_ttc, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_counter(reg, "perfwatch_bisector_alerts_total", "alerts consumed, by outcome",
		                        (const char *const[]){"outcome", NULL}, &a->m_events, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_counter(reg, "perfwatch_bisector_jobs_total", "jobs published, by kind",
		                        (const char *const[]){"kind", NULL}, &a->m_jobs, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_counter(reg, "perfwatch_bisector_confirm_reruns_total",
		                        "confirmation rerun runs: requested, or refused over the day's budget",
		                        (const char *const[]){"outcome", NULL}, &a->confirm.m_reruns, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_counter(reg, "perfwatch_bisector_confirmations_total",
		                        "unconfirmed outliers by confirmation outcome (requested, joined, over_budget, "
		                        "reproduced, not_reproduced, redelivered)",
		                        (const char *const[]){"outcome", NULL}, &a->confirm.m_outcomes, errbuf, errlen);
	return st;
}


static const char *val(PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

static int64_t ival(PGresult *r, int row, int col)
{
	const char *v = val(r, row, col);
	return v ? strtoll(v, NULL, 10) : 0;
}

static pw_status dead(worker *k, const rd_kafka_message_t *m, const char *type,
                      Perfwatch__V1__DlqReason reason, const char *detail, char *errbuf, size_t errlen)
{
	pw_metric_inc(app_of(k)->m_events, (const char *const[]){"dead_lettered"});
	return pw_service_dead_letter(k, m, type, reason, detail, errbuf, errlen);
}

/* ---- perf.compiler-cls.v1 ---------------------------------------------------------------- */

static pw_status on_cl(worker *k, const rd_kafka_message_t *m, char *errbuf, size_t errlen)
{
	static const char *type = "perfwatch.v1.CompilerCl";
	Perfwatch__V1__CompilerCl *c = NULL;
	Perfwatch__V1__DlqReason reason;
	char detail[320];
	if (pw_bisect_cl_decode(m->payload, m->len, &c, &reason, detail, sizeof detail) == PW_BISECT_INPUT_DEAD)
		return dead(k, m, type, reason, detail, errbuf, errlen);
	pw_status st;
	/* text[] literals built as {"a","b"} with quotes escaped; the decoder capped the lists so that they fit */
	char bench[2 * PW_BISECT_TEXT_MAX + 64], ids[4 * PW_BISECT_TEXT_MAX + 64];
	const char *const *lists[2] = {(const char *const *)c->perf_benchmarks,
	                               c->roll ? (const char *const *)c->roll->upstream_ids : NULL};
	size_t ns[2] = {c->n_perf_benchmarks, c->roll ? c->roll->n_upstream_ids : 0};
	char *outs[2] = {bench, ids};
	size_t caps[2] = {sizeof bench, sizeof ids};
	for (int l = 0; l < 2; l++) {
		size_t o = 0;
		outs[l][o++] = '{';
		for (size_t i = 0; i < ns[l] && o + 8 < caps[l]; i++) {
			if (i)
				outs[l][o++] = ',';
			outs[l][o++] = '"';
			for (const char *p = lists[l][i]; *p && o + 4 < caps[l]; p++) {
				if (*p == '"' || *p == '\\')
					outs[l][o++] = '\\';
				outs[l][o++] = *p;
			}
			outs[l][o++] = '"';
		}
		outs[l][o++] = '}';
		outs[l][o] = 0;
	}
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, c->cl_number);
	pw_pg_params_text(&p, c->cl);
	pw_pg_params_text(&p, c->title ? c->title : "");
	pw_pg_params_text(&p, c->author ? c->author : "");
	pw_pg_params_text(&p, c->team ? c->team : "");
	pw_pg_params_bool(&p, c->perf_relevant);
	pw_pg_params_text(&p, bench);
	pw_pg_params_text(&p, c->roll && c->roll->upstream_repo ? c->roll->upstream_repo : "");
	pw_pg_params_int(&p, c->roll ? c->roll->upstream_commits : 0);
	pw_pg_params_text(&p, ids);
	pw_pg_params_int(&p, c->submitted_unix_us);
	pw_pg_params_text(&p, c->source ? c->source : "");
	st = pw_pg_exec_params(
	        k->pg,
	        "INSERT INTO perfwatch.compiler_cls (cl_number, cl, title, author, team, perf_relevant, "
	        "perf_benchmarks, roll_repo, roll_commits, roll_commit_ids, submitted_at, source, updated_at) "
	        "VALUES ($1, $2, $3, $4, $5, $6, $7::text[], $8, $9, $10::text[], "
	        "CASE WHEN $11::bigint > 0 THEN to_timestamp($11::bigint / 1e6) END, $12, now()) "
	        "ON CONFLICT (cl_number) DO UPDATE SET cl = EXCLUDED.cl, title = EXCLUDED.title, "
	        "author = EXCLUDED.author, team = EXCLUDED.team, perf_relevant = EXCLUDED.perf_relevant, "
	        "perf_benchmarks = EXCLUDED.perf_benchmarks, roll_repo = EXCLUDED.roll_repo, "
	        "roll_commits = EXCLUDED.roll_commits, roll_commit_ids = EXCLUDED.roll_commit_ids, "
	        "submitted_at = EXCLUDED.submitted_at, source = EXCLUDED.source, updated_at = now()",
	        &p, 0, NULL, errbuf, errlen);
	if (st != PW_OK && !pw_service_retriable(st)) {
		char why[512];
		snprintf(why, sizeof why, "%s", errbuf);
		st = dead(k, m, type, pw_service_failure_reason(st), why, errbuf, errlen);
	}
	perfwatch__v1__compiler_cl__free_unpacked(c, NULL);
	return st;
}

/* ---- perf.alerts.v1 ----------------------------------------------------------------------- */

/* One integer from a one-row query; *v = 0 when no row or NULL. */
static pw_status query_int(pw_pg *pg, const char *sql, const pw_pg_params *p, int64_t *v, char *errbuf,
                           size_t errlen)
{
	PGresult *r = NULL;
	pw_status st = pw_pg_exec_params(pg, sql, p, 0, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	*v = PQntuples(r) > 0 ? ival(r, 0, 0) : 0;
	PQclear(r);
	return PW_OK;
}

/*
 * The alert's range (lo clean, hi regressed], from its changepoint (watcher)
 * or from the runs of its builds (gate: the baseline release, else the latest
 * release run before the RC, .. the observed RC).
 */
static pw_status alert_range(pw_pg *pg, const Perfwatch__V1__Alert *al, int64_t *lo, int64_t *hi,
                             char *errbuf, size_t errlen)
{
	*lo = *hi = 0;
	if (al->changepoint && pw_bisect_cl_number(al->changepoint->cl_range_lo) > 0 &&
	    pw_bisect_cl_number(al->changepoint->cl_range_hi) > 0) {
		*lo = pw_bisect_cl_number(al->changepoint->cl_range_lo);
		*hi = pw_bisect_cl_number(al->changepoint->cl_range_hi);
		return PW_OK;
	}
	const Perfwatch__V1__SeriesKey *s = al->series;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, s->model);
	pw_pg_params_text(&p, s->platform);
	pw_pg_params_text(&p, s->config);
	pw_pg_params_text(&p, al->observed && al->observed->release ? al->observed->release : "");
	pw_status st = query_int(pg,
	                         "SELECT max(compiler_cl_number) FROM perfwatch.runs WHERE model = $1 AND "
	                         "platform = $2 AND config = $3 AND build_id = $4",
	                         &p, hi, errbuf, errlen);
	if (st != PW_OK || *hi <= 0)
		return st;
	const char *bw = al->baseline && al->baseline->window ? al->baseline->window : "";
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, s->model);
	pw_pg_params_text(&p, s->platform);
	pw_pg_params_text(&p, s->config);
	pw_pg_params_text(&p, bw);
	pw_pg_params_int(&p, *hi);
	pw_pg_params_int(&p, al->baseline ? al->baseline->window_start_unix_us : 0);
	pw_pg_params_int(&p, al->baseline ? al->baseline->window_end_unix_us : 0);
	/* the baseline release's CL; else the newest CL the baseline window measured; else the last release */
	return query_int(pg,
	                 "SELECT coalesce((SELECT max(compiler_cl_number) FROM perfwatch.runs WHERE model = $1 "
	                 "AND platform = $2 AND config = $3 AND build_id = $4 AND compiler_cl_number < $5), "
	                 "(SELECT max(compiler_cl_number) FROM perfwatch.runs WHERE model = $1 AND "
	                 "platform = $2 AND config = $3 AND bisect_job_id = '' AND $7::bigint > $6::bigint AND "
	                 "started_at >= to_timestamp($6::bigint / 1e6) AND started_at <= to_timestamp($7::bigint / 1e6) "
	                 "AND compiler_cl_number < $5), "
	                 "(SELECT max(compiler_cl_number) FROM perfwatch.runs WHERE model = $1 AND "
	                 "platform = $2 AND config = $3 AND build_kind = 'release' AND compiler_cl_number < $5))",
	                 &p, lo, errbuf, errlen);
}

/* $1..$11 of the statements that start a bisection or retarget it to this alert's series. */
static void target_params(pw_pg_params *p, const char *bid, const Perfwatch__V1__Alert *al, const char *cp_id,
                          int64_t series_id, const pw_bisect_event *ev)
{
	pw_pg_params_init(p);
	pw_pg_params_text(p, bid);
	pw_pg_params_text(p, al->alert_id);
	pw_pg_params_text(p, cp_id);
	pw_pg_params_int(p, series_id);
	pw_pg_params_text(p, al->config_hash ? al->config_hash : "");
	pw_pg_params_int(p, ev->lo);
	pw_pg_params_int(p, ev->hi);
	pw_pg_params_text(p, al->series->metric);
	pw_pg_params_double(p, ev->score);
	pw_pg_params_int(p, ev->rank);
	pw_pg_params_double(p, ev->pct);
}

/*
 * Adds alert al (a regression of the gate or the watcher, or a confirmed
 * regression revision of the bisector's own confirmation: confirm.h) to its
 * event — the family (model) and the regressed head CL — starting the
 * bisection or joining (or retargeting) it; inside the caller's open
 * transaction. key, payload and len are the message as received (kept for
 * the follow-up). On PW_OK bid is the bisection id and *outcome "started",
 * "joined", "retargeted" or "redelivered"; or why is set (with *why_reason)
 * and nothing was started: the series is unknown, there is no CL range, or no
 * plan.
 */
static pw_status event_add(pw_pg *pg, const Perfwatch__V1__Alert *al, const char *key, const void *payload,
                           size_t len, char *bid, size_t bidlen, const char **outcome, char *event_key_out,
                           size_t eklen, bool *narrowed, Perfwatch__V1__DlqReason *why_reason, char *why,
                           size_t whylen, char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	PGresult *r = NULL;
	why[0] = 0;
	bid[0] = 0;
	*outcome = "";
	*narrowed = false;
	int64_t series_id = 0;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, al->series_key);
	if ((st = query_int(pg, "SELECT series_id FROM perfwatch.series WHERE series_key = $1", &p, &series_id,
	                    errbuf, errlen)) != PW_OK)
		goto out;
	if (series_id <= 0) {
		snprintf(why, whylen, "alert \"%.100s\": series \"%.150s\" is not known", al->alert_id,
		         al->series_key);
		*why_reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNKNOWN_REFERENCE;
		goto out;
	}
	int64_t lo, hi;
	if ((st = alert_range(pg, al, &lo, &hi, errbuf, errlen)) != PW_OK)
		goto out;
	if (lo <= 0 || hi <= lo) {
		snprintf(why, whylen,
		         "alert \"%.100s\": no CL range (changepoint, or runs of the baseline and observed builds): "
		         "lo %" PRId64 " hi %" PRId64,
		         al->alert_id, lo, hi);
		*why_reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNKNOWN_REFERENCE;
		goto out;
	}
	/* both endpoints must be CLs of the feed: a range the feed does not know is not bisected */
	{
		pw_bisect_feed feed = {0};
		pw_pg_params_init(&p);
		pw_pg_params_int(&p, lo);
		pw_pg_params_int(&p, hi);
		if ((st = pw_pg_exec_params(pg,
		                            "SELECT bool_or(cl_number = $1), bool_or(cl_number = $2), "
		                            "coalesce(min(cl_number), 0), coalesce(max(cl_number), 0), count(*) "
		                            "FROM perfwatch.compiler_cls",
		                            &p, 0, &r, errbuf, errlen)) != PW_OK)
			goto out;
		feed.lo_known = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
		feed.hi_known = strcmp(PQgetvalue(r, 0, 1), "t") == 0;
		feed.first = ival(r, 0, 2);
		feed.last = ival(r, 0, 3);
		feed.n = ival(r, 0, 4);
		PQclear(r);
		r = NULL;
		if (!pw_bisect_range_known(al->alert_id, lo, hi, &feed, why, whylen)) {
			*why_reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNKNOWN_REFERENCE;
			goto out;
		}
	}
	/* narrowed by the tightest changepoint of the same series inside the range */
	pw_bisect_finding f = {.id = al->alert_id, .series_key = al->series_key, .lo = lo, .hi = hi,
	                       .delta_abs = al->delta ? al->delta->abs : 0,
	                       .noise = al->baseline ? al->baseline->mad : 0, .metric = al->series->metric,
	                       .delta_pct = al->delta ? al->delta->pct : 0};
	char cp_id[128] = "";
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, series_id);
	pw_pg_params_int(&p, lo);
	pw_pg_params_int(&p, hi);
	if ((st = pw_pg_exec_params(pg,
	                            "SELECT last_clean_cl_number, first_shifted_cl_number, changepoint_id "
	                            "FROM perfwatch.changepoints WHERE series_id = $1 AND last_clean_cl_number >= $2 "
	                            "AND first_shifted_cl_number <= $3 AND first_shifted_cl_number > last_clean_cl_number "
	                            "ORDER BY first_shifted_cl_number - last_clean_cl_number, detected_at LIMIT 1",
	                            &p, 0, &r, errbuf, errlen)) != PW_OK)
		goto out;
	if (PQntuples(r) == 1) {
		f.cp_lo = ival(r, 0, 0);
		f.cp_hi = ival(r, 0, 1);
		snprintf(cp_id, sizeof cp_id, "%s", PQgetvalue(r, 0, 2));
	}
	PQclear(r);
	r = NULL;
	if (!cp_id[0] && al->changepoint && al->changepoint->changepoint_id)
		snprintf(cp_id, sizeof cp_id, "%s", al->changepoint->changepoint_id);
	pw_bisect_event ev;
	if (pw_bisect_event_plan(&f, 1, &ev) != PW_OK) {
		snprintf(why, whylen, "alert \"%.100s\": no event plan for (%" PRId64 ", %" PRId64 "]",
		         al->alert_id, lo, hi);
		*why_reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
		goto out;
	}
	/* the event: the family (model) and the regressed head CL */
	char event_key[256];
	snprintf(event_key, sizeof event_key, "%s@cl/%" PRId64, al->series->model, hi);
	snprintf(bid, bidlen, "bs-%.100s-%" PRId64, al->series->model, hi);
	target_params(&p, bid, al, cp_id, series_id, &ev);
	if ((st = pw_pg_exec_params(
	             pg,
	             "INSERT INTO perfwatch.bisections (bisection_id, alert_id, changepoint_id, series_id, "
	             "config_hash, range_lo, range_lo_number, range_hi, range_hi_number, n_cls, flagged_cls, unit, "
	             "status, started_at, updated_at, metric, target_score, target_rank, target_pct) "
	             "SELECT $1, $2, $3, $4, $5, 'cl/' || $6::bigint, $6, 'cl/' || $7::bigint, $7, $7 - $6, "
	             "coalesce((SELECT array_agg(cl ORDER BY cl_number) FROM perfwatch.compiler_cls "
	             "WHERE cl_number > $6 AND cl_number <= $7 AND perf_relevant), '{}'), se.unit, 'running', "
	             "now(), now(), $8, $9, $10, $11 FROM perfwatch.series se WHERE se.series_id = $4 "
	             "ON CONFLICT (bisection_id) DO NOTHING",
	             &p, 0, NULL, errbuf, errlen)) != PW_OK)
		goto out;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, event_key);
	pw_pg_params_text(&p, bid);
	pw_pg_params_text(&p, al->alert_id);
	if ((st = pw_pg_exec_params(pg,
	                            "INSERT INTO perfwatch.bisector_events (event_key, bisection_id, alert_ids) "
	                            "VALUES ($1, $2, ARRAY[$3]) ON CONFLICT (event_key) DO UPDATE SET alert_ids = "
	                            "bisector_events.alert_ids || $3::text WHERE NOT ($3 = ANY (bisector_events.alert_ids)) "
	                            "RETURNING (xmax = 0) AS created",
	                            &p, 0, &r, errbuf, errlen)) != PW_OK)
		goto out;
	*outcome = PQntuples(r) == 0 ? "redelivered"
	                      : strcmp(PQgetvalue(r, 0, 0), "t") == 0 ? "started" : "joined";
	PQclear(r);
	r = NULL;
	/* the original, for the follow-up that carries the bisection block when it ends */
	if ((st = pw_alert_followup_record(pg, al, key, payload, len, errbuf, errlen)) != PW_OK)
		goto out;
	if (strcmp(*outcome, "joined") == 0) {
		/*
		 * Another series of the event. Before the event's first job (within
		 * bisector.gather) the one whose metric ranks first, then with the
		 * largest saturated |delta| / noise, then the largest |delta_pct|
		 * (pw_bisect_event_plan's order) becomes the target; otherwise it is
		 * recorded as correlated.
		 */
		target_params(&p, bid, al, cp_id, series_id, &ev);
		if ((st = pw_pg_exec_params(
		             pg,
		             "UPDATE perfwatch.bisections b SET alert_id = $2, changepoint_id = $3, series_id = $4, "
		             "config_hash = $5, range_lo = 'cl/' || $6::bigint, range_lo_number = $6, "
		             "range_hi = 'cl/' || $7::bigint, range_hi_number = $7, n_cls = $7 - $6, metric = $8, "
		             "target_score = $9, target_rank = $10, target_pct = $11, unit = (SELECT unit FROM perfwatch.series WHERE series_id = $4), "
		             "correlated_series = array_append(b.correlated_series, (SELECT series_key FROM "
		             "perfwatch.series WHERE series_id = b.series_id)), "
		             "correlated_alert_ids = array_append(b.correlated_alert_ids, b.alert_id), updated_at = now() "
		             "WHERE b.bisection_id = $1 AND ($10 < b.target_rank OR ($10 = b.target_rank AND "
		             "(b.target_score < $9 OR (b.target_score = $9 AND b.target_pct < $11)))) "
		             "AND b.alert_id <> $2 AND NOT EXISTS "
		             "(SELECT 1 FROM perfwatch.bisect_jobs j WHERE j.bisection_id = $1) RETURNING 1",
		             &p, 0, &r, errbuf, errlen)) != PW_OK)
			goto out;
		bool retarget = PQntuples(r) == 1;
		PQclear(r);
		r = NULL;
		if (retarget) {
			*outcome = "retargeted";
		} else {
			pw_pg_params_init(&p);
			pw_pg_params_text(&p, bid);
			pw_pg_params_text(&p, al->series_key);
			pw_pg_params_text(&p, al->alert_id);
			if ((st = pw_pg_exec_params(pg,
			                            "UPDATE perfwatch.bisections SET correlated_series = "
			                            "array_append(correlated_series, $2::text), correlated_alert_ids = "
			                            "array_append(correlated_alert_ids, $3::text) WHERE bisection_id = $1 "
			                            "AND alert_id <> $3 AND NOT ($3 = ANY (correlated_alert_ids))",
			                            &p, 0, NULL, errbuf, errlen)) != PW_OK)
				goto out;
		}
	}
	/* an alert that joins an event whose bisection is over gets its follow-up now */
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, bid);
	if ((st = pw_pg_exec_params(pg,
	                            "SELECT status, confidence, reason, culprit, verified_adjacent_clean, "
	                            "cherry_pick_reproduced FROM perfwatch.bisections WHERE bisection_id = $1 "
	                            "AND status IN ('done', 'failed')",
	                            &p, 0, &r, errbuf, errlen)) != PW_OK)
		goto out;
	if (PQntuples(r) == 1) {
		pw_alert_blocks blk = {.has_bisection = true, .bisection_id = bid,
		                       .bisection_status = PQgetvalue(r, 0, 0), .confidence = PQgetvalue(r, 0, 1),
		                       .reason = PQgetvalue(r, 0, 2), .culprit = PQgetvalue(r, 0, 3),
		                       .verified_adjacent_clean = strcmp(PQgetvalue(r, 0, 4), "t") == 0,
		                       .cherry_pick_reproduced = strcmp(PQgetvalue(r, 0, 5), "t") == 0};
		st = pw_alert_followup_publish(pg, SVC, al->alert_id, &blk, NULL, errbuf, errlen);
	}
	PQclear(r);
	r = NULL;
	if (st != PW_OK)
		goto out;
	snprintf(event_key_out, eklen, "%s", event_key);
	*narrowed = ev.narrowed;
out:
	if (r)
		PQclear(r);
	if (why[0])
		bid[0] = 0;
	return st;
}

/* confirm.h's start function: a confirmed regression joins or starts its event. */
static pw_status confirm_start(void *ctx, pw_pg *pg, const Perfwatch__V1__Alert *al, const char *key,
                               const void *payload, size_t len, char *bid, size_t bidlen, char *why,
                               size_t whylen, char *errbuf, size_t errlen)
{
	app *a = ctx;
	const char *outcome;
	char event_key[256];
	bool narrowed;
	Perfwatch__V1__DlqReason reason;
	pw_status st = event_add(pg, al, key, payload, len, bid, bidlen, &outcome, event_key, sizeof event_key,
	                         &narrowed, &reason, why, whylen, errbuf, errlen);
	if (st == PW_OK && !why[0]) {
		pw_metric_inc(a->m_events, (const char *const[]){outcome});
		pw_log_info(a->lg, "confirmed alert \"%s\" (%s): event %s, bisection %s %s", al->alert_id, al->series_key,
		            event_key, bid, outcome);
	}
	return st;
}

static pw_status on_alert(worker *k, const rd_kafka_message_t *m, char *errbuf, size_t errlen)
{
	static const char *type = "perfwatch.v1.Alert";
	Perfwatch__V1__Alert *al = NULL;
	Perfwatch__V1__DlqReason reason;
	char detail[320];
	pw_bisect_input in = pw_bisect_alert_decode(m->payload, m->len, &al, &reason, detail, sizeof detail);
	if (in == PW_BISECT_INPUT_DEAD)
		return dead(k, m, type, reason, detail, errbuf, errlen);
	pw_pg *pg = k->pg;
	pw_status st = PW_OK;
	PGresult *r = NULL;
	bool tx = false;
	if (in == PW_BISECT_INPUT_FOLLOW_UP) {
		pw_metric_inc(app_of(k)->m_events, (const char *const[]){"follow_up"});
		goto done; /* a later revision carrying a bisection or attribution: never a new event */
	}
	if (in == PW_BISECT_INPUT_IGNORE) {
		pw_metric_inc(app_of(k)->m_events, (const char *const[]){"ignored"});
		goto done; /* improvements, infra health, outliers: nothing to bisect */
	}
	char key[512];
	snprintf(key, sizeof key, "%.*s", m->key ? (int)(m->key_len < sizeof key - 1 ? m->key_len : sizeof key - 1) : 0,
	         m->key ? (const char *)m->key : "");
	if (in == PW_BISECT_INPUT_CONFIRM) {
		const char *outcome;
		pw_confirm_take_result res;
		if ((st = pw_confirm_take(&app_of(k)->confirm, pg, al, key, m->payload, m->len, &res, &outcome, detail,
		                          sizeof detail, errbuf, errlen)) != PW_OK)
			goto fail;
		if (res == PW_CONFIRM_DEAD) {
			st = dead(k, m, type, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNKNOWN_REFERENCE, detail, errbuf, errlen);
			goto done;
		}
		pw_metric_inc(app_of(k)->m_events, (const char *const[]){"confirm"});
		pw_log_info(app_of(k)->lg, "unconfirmed alert \"%s\" (%s, run %s): confirmation %s", al->alert_id,
		            al->series_key, al->point_run_id, outcome);
		goto done;
	}
	char bid[160], event_key[256];
	const char *outcome;
	bool narrowed;
	Perfwatch__V1__DlqReason why_reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED;
	if ((st = pw_pg_begin(pg, errbuf, errlen)) != PW_OK)
		goto fail;
	tx = true;
	if ((st = event_add(pg, al, key, m->payload, m->len, bid, sizeof bid, &outcome, event_key, sizeof event_key,
	                    &narrowed, &why_reason, detail, sizeof detail, errbuf, errlen)) != PW_OK)
		goto fail;
	if (detail[0]) {
		pw_pg_rollback(pg, NULL, 0);
		tx = false;
		st = dead(k, m, type, why_reason, detail, errbuf, errlen);
		goto done;
	}
	if ((st = pw_pg_commit(pg, errbuf, errlen)) != PW_OK)
		goto fail;
	tx = false;
	pw_metric_inc(app_of(k)->m_events, (const char *const[]){outcome});
	pw_log_info(app_of(k)->lg, "alert \"%s\" (%s): event %s, bisection %s %s%s", al->alert_id, al->series_key,
	            event_key, bid, outcome, narrowed ? ", narrowed by its changepoint" : "");
	goto done;
fail:
	if (tx)
		pw_pg_rollback(pg, NULL, 0);
	if (st != PW_OK && !pw_service_retriable(st)) {
		char why[512];
		snprintf(why, sizeof why, "%s", errbuf);
		st = dead(k, m, type, pw_service_failure_reason(st), why, errbuf, errlen);
	}
done:
	if (r)
		PQclear(r);
	perfwatch__v1__alert__free_unpacked(al, NULL);
	return st;
}

pw_status pw_bisector_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                            size_t errlen)
{
	worker *k = ctx;
	for (size_t i = 0; i < n; i++) {
		const rd_kafka_message_t *m = msgs[i];
		bool cls = strcmp(rd_kafka_topic_name(m->rkt), PW_TOPIC_COMPILER_CLS) == 0;
		pw_status st;
		if (cls)
			st = on_cl(k, m, errbuf, errlen);
		else
			st = on_alert(k, m, errbuf, errlen);
		if (st != PW_OK)
			return st;
	}
	return PW_OK;
}

/* ---- the scheduler ------------------------------------------------------------------------ */

/* One active bisection as stored. */
typedef struct bis {
	char id[160], alert_id[160], cp_id[128], config_hash[128], unit[32], metric[128];
	char series_key[512], model[128], hlo[128], platform[64], config[256];
	char model_rev[128], firmware[128];
	int64_t series_id, lo, hi, started_us;
	char **corr;
	size_t ncorr;
} bis;

/* The CLs of (lo, hi] with the flag for this series (perf_benchmarks globs model/platform/config). */
static pw_status load_cls(pw_pg *pg, const bis *b, pw_bisect_cl **out, size_t *n, uint32_t *nflagged,
                          char *errbuf, size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, b->lo);
	pw_pg_params_int(&p, b->hi);
	PGresult *r = NULL;
	pw_status st = pw_pg_exec_params(pg,
	                                 "SELECT cl_number, perf_relevant, array_to_string(perf_benchmarks, chr(1)), "
	                                 "roll_commits FROM perfwatch.compiler_cls WHERE cl_number > $1 AND "
	                                 "cl_number <= $2 ORDER BY cl_number",
	                                 &p, 0, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	int nr = PQntuples(r);
	pw_bisect_cl *c = calloc(nr ? (size_t)nr : 1, sizeof *c);
	if (!c) {
		PQclear(r);
		return PW_ERR_NOMEM;
	}
	char target[512];
	snprintf(target, sizeof target, "%s/%s/%s", b->model, b->platform, b->config);
	*nflagged = 0;
	for (int i = 0; i < nr; i++) {
		c[i].number = ival(r, i, 0);
		c[i].upstream = (uint32_t)ival(r, i, 3);
		bool rel = strcmp(PQgetvalue(r, i, 1), "t") == 0;
		bool match = false;
		char globs[2048];
		snprintf(globs, sizeof globs, "%s", PQgetvalue(r, i, 2));
		for (char *save = NULL, *g = strtok_r(globs, "\001", &save); rel && g && !match;
		     g = strtok_r(NULL, "\001", &save))
			match = strcmp(g, "*") == 0 || fnmatch(g, target, 0) == 0;
		c[i].flagged = rel && match;
		*nflagged += c[i].flagged;
	}
	PQclear(r);
	*out = c;
	*n = (size_t)nr;
	return PW_OK;
}

typedef struct stored_job {
	char job_id[200];
	uint32_t step;
	int64_t requested_us, finished_us;
	int64_t reissued; /* times re-published after bisector.job_timeout */
	double *x;
	size_t nx;
} stored_job;

static void free_jobs(stored_job *j, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(j[i].x);
	free(j);
}

/* The bisection's jobs in step order with their stored samples. */
static pw_status load_jobs(pw_pg *pg, const char *bid, stored_job **out, size_t *n, char *errbuf,
                           size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, bid);
	PGresult *r = NULL;
	pw_status st = pw_pg_exec_params(
	        pg,
	        "SELECT j.job_id, j.step_index, (extract(epoch FROM j.requested_at) * 1e6)::bigint, "
	        "(extract(epoch FROM s.finished_at) * 1e6)::bigint, "
	        "(SELECT array_to_string(array_agg(b.value::text ORDER BY b.repeat_index), ',') "
	        " FROM perfwatch.bisection_samples b WHERE b.job_id = j.job_id), j.reissued "
	        "FROM perfwatch.bisect_jobs j LEFT JOIN perfwatch.bisection_steps s ON s.job_id = j.job_id "
	        "WHERE j.bisection_id = $1 ORDER BY j.step_index",
	        &p, 0, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	int nr = PQntuples(r);
	stored_job *j = calloc(nr ? (size_t)nr : 1, sizeof *j);
	if (!j) {
		PQclear(r);
		return PW_ERR_NOMEM;
	}
	for (int i = 0; i < nr; i++) {
		snprintf(j[i].job_id, sizeof j[i].job_id, "%s", PQgetvalue(r, i, 0));
		j[i].step = (uint32_t)ival(r, i, 1);
		j[i].requested_us = ival(r, i, 2);
		j[i].finished_us = ival(r, i, 3);
		j[i].reissued = ival(r, i, 5);
		const char *v = val(r, i, 4);
		if (v && v[0]) {
			size_t cnt = 1;
			for (const char *q = v; *q; q++)
				cnt += *q == ',';
			j[i].x = malloc(cnt * sizeof(double));
			if (!j[i].x) {
				PQclear(r);
				free_jobs(j, (size_t)nr);
				return PW_ERR_NOMEM;
			}
			char *e = (char *)v;
			for (size_t q = 0; q < cnt; q++) {
				j[i].x[j[i].nx++] = strtod(e, &e);
				if (*e == ',')
					e++;
			}
		}
	}
	PQclear(r);
	*out = j;
	*n = (size_t)nr;
	return PW_OK;
}

/* The runs' values for job_id on the bisection's model/platform/config/metric (any HLO). */
static pw_status job_results(pw_pg *pg, const bis *b, const char *job_id, double *x, char (*run)[128],
                             size_t cap, size_t *n, char *errbuf, size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, job_id);
	pw_pg_params_text(&p, b->model);
	pw_pg_params_text(&p, b->platform);
	pw_pg_params_text(&p, b->config);
	pw_pg_params_text(&p, b->metric);
	PGresult *r = NULL;
	pw_status st = pw_pg_exec_params(pg,
	                                 "SELECT s.value, s.run_id FROM perfwatch.samples s JOIN perfwatch.series se "
	                                 "USING (series_id) WHERE s.bisect_job_id = $1 AND se.model = $2 AND "
	                                 "se.platform = $3 AND se.config = $4 AND se.metric = $5 "
	                                 "ORDER BY s.measured_at, s.run_id, s.repeat_index",
	                                 &p, 0, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	*n = 0;
	for (int i = 0; i < PQntuples(r) && *n < cap; i++) {
		x[*n] = strtod(PQgetvalue(r, i, 0), NULL);
		snprintf(run[*n], 128, "%s", PQgetvalue(r, i, 1));
		(*n)++;
	}
	PQclear(r);
	return PW_OK;
}

static pw_bisect_target target_of(const bis *b)
{
	return (pw_bisect_target){.series_key = b->series_key, .model = b->model, .model_rev = b->model_rev,
	                          .hlo_fingerprint = b->hlo, .platform = b->platform, .config = b->config,
	                          .firmware = b->firmware, .metric = b->metric, .config_hash = b->config_hash};
}

/* Culprit title and owner from compiler_cls. */
static void culprit_text(pw_pg *pg, int64_t cl, char *title, size_t tl, char *owner, size_t ol)
{
	title[0] = owner[0] = 0;
	if (cl <= 0)
		return;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, cl);
	PGresult *r = NULL;
	char e[256];
	if (pw_pg_exec_params(pg,
	                      "SELECT title, CASE WHEN team <> '' THEN team ELSE author END FROM perfwatch.compiler_cls "
	                      "WHERE cl_number = $1",
	                      &p, 0, &r, e, sizeof e) != PW_OK)
		return;
	if (PQntuples(r) == 1) {
		snprintf(title, tl, "%s", PQgetvalue(r, 0, 0));
		snprintf(owner, ol, "%s", PQgetvalue(r, 0, 1));
	}
	PQclear(r);
}

/*
 * Writes, inside the open transaction: the bisection row's state and the
 * Bisection message in the outbox.
 */
static pw_status write_state(pw_pg *pg, const bis *bs, const pw_bisect *b, const pw_bisect_log_step *steps,
                             size_t nsteps, bool over, char *errbuf, size_t errlen)
{
	char title[512], owner[128], culprit[64] = "", up[64] = "", ia[2][64] = {"", ""};
	culprit_text(pg, b->culprit, title, sizeof title, owner, sizeof owner);
	bool found = b->status == PW_BISECT_DONE && b->culprit > 0;
	if (found)
		pw_bisect_cl_name(b->culprit, -1, culprit, sizeof culprit);
	if (found && b->culprit_upstream >= 0)
		pw_bisect_cl_name(b->culprit, b->culprit_upstream, up, sizeof up);
	if (b->confidence == PW_BISECT_INTERACTION) {
		pw_bisect_cl_name(b->pair_cls[0], -1, ia[0], sizeof ia[0]);
		pw_bisect_cl_name(b->pair_cls[1], -1, ia[1], sizeof ia[1]);
	}
	char interacting[160];
	snprintf(interacting, sizeof interacting, ia[0][0] ? "{%s,%s}" : "{}", ia[0], ia[1]);
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, bs->id);
	pw_pg_params_text(&p, pw_bisect_status_name(b->status));
	pw_pg_params_text(&p, pw_bisect_confidence_name(b->confidence));
	pw_pg_params_text(&p, culprit);
	pw_pg_params_text(&p, found ? title : "");
	pw_pg_params_text(&p, found ? owner : "");
	pw_pg_params_bool(&p, b->adjacent_clean);
	pw_pg_params_bool(&p, b->pick_reproduced);
	pw_pg_params_int(&p, b->builds);
	pw_pg_params_int(&p, b->builds_search);
	pw_pg_params_int(&p, b->builds_verify);
	pw_pg_params_int(&p, b->builds_pairwise);
	pw_pg_params_int(&p, b->builds_roll);
	if (b->have_clean)
		pw_pg_params_double(&p, b->clean_level);
	else
		pw_pg_params_null(&p);
	if (b->have_regressed)
		pw_pg_params_double(&p, b->regressed_level);
	else
		pw_pg_params_null(&p);
	pw_pg_params_text(&p, b->reason);
	pw_pg_params_bool(&p, b->full_range);
	pw_pg_params_text(&p, up);
	pw_pg_params_int(&p, found ? b->culprit_upstream : -1);
	pw_pg_params_bool(&p, over);
	pw_pg_params_text(&p, interacting);
	pw_status st = pw_pg_exec_params(
	        pg,
	        "UPDATE perfwatch.bisections SET status = $2, confidence = $3, culprit = $4, culprit_title = $5, "
	        "culprit_owner = $6, verified_adjacent_clean = $7, cherry_pick_reproduced = $8, builds = $9, "
	        "builds_search = $10, builds_verify = $11, builds_pairwise = $12, builds_roll = $13, "
	        "clean_level = $14, regressed_level = $15, reason = $16, full_range_fallback = $17, "
	        "culprit_upstream = $18, culprit_upstream_index = $19, interacting_cls = $21::text[], "
	        "finished_at = CASE WHEN $20 THEN coalesce(finished_at, now()) END, updated_at = now() "
	        "WHERE bisection_id = $1",
	        &p, 0, NULL, errbuf, errlen);
	if (st != PW_OK)
		return st;
	const char *ip[2] = {ia[0][0] ? ia[0] : NULL, ia[1][0] ? ia[1] : NULL};
	pw_bisect_log_head h = {.bisection_id = bs->id, .series_key = bs->series_key, .metric = bs->metric,
	                        .unit = bs->unit, .started_us = bs->started_us,
	                        .finished_us = over ? pw_now_us() : 0, .lo = bs->lo, .hi = bs->hi,
	                        .n_cls = (uint32_t)(bs->hi - bs->lo), .n_flagged = (uint32_t)b->nflagged,
	                        .status = b->status, .confidence = b->confidence,
	                        .culprit = culprit[0] ? culprit : NULL, .culprit_title = found ? title : NULL,
	                        .culprit_owner = found ? owner : NULL, .culprit_upstream = up[0] ? up : NULL,
	                        .interacting = {ip[0], ip[1]}, .adjacent_clean = b->adjacent_clean,
	                        .pick_reproduced = b->pick_reproduced, .full_range = b->full_range,
	                        .reason = b->reason, .builds = b->builds};
	pw_bisect_target t = target_of(bs);
	uint8_t *buf = NULL;
	size_t len = 0;
	if ((st = pw_bisect_pack(&h, bs->alert_id, bs->cp_id, &t, b, steps, nsteps,
	                         (const char *const *)bs->corr, bs->ncorr, pw_now_us(), &buf, &len)) != PW_OK)
		return pw_fail(st, errbuf, errlen, "bisection %s: cannot pack its Bisection", bs->id);
	char ref[200];
	snprintf(ref, sizeof ref, "%s:state", bs->id);
	st = pw_outbox_add(pg, SVC, ref, PW_TOPIC_BISECTIONS, bs->id, buf, len, errbuf, errlen);
	free(buf);
	return st;
}

/*
 * The bisection is over: every alert of its event is published again with
 * the "bisection" block (artifact 3), as a follow-up; in the open
 * transaction.
 */
static pw_status write_followups(pw_pg *pg, const bis *bs, const pw_bisect *b, char *errbuf, size_t errlen)
{
	char culprit[64] = "";
	if (b->status == PW_BISECT_DONE && b->culprit > 0)
		pw_bisect_cl_name(b->culprit, -1, culprit, sizeof culprit);
	pw_alert_blocks blk = {.has_bisection = true, .bisection_id = bs->id,
	                       .bisection_status = pw_bisect_status_name(b->status),
	                       .confidence = pw_bisect_confidence_name(b->confidence), .reason = b->reason,
	                       .culprit = culprit, .verified_adjacent_clean = b->adjacent_clean,
	                       .cherry_pick_reproduced = b->pick_reproduced};
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, bs->id);
	PGresult *r = NULL;
	pw_status st = pw_pg_exec_params(pg,
	                                 "SELECT DISTINCT unnest(alert_ids) FROM "
	                                 "perfwatch.bisector_events WHERE bisection_id = $1",
	                                 &p, 0, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (int i = 0; i < PQntuples(r) && st == PW_OK; i++)
		st = pw_alert_followup_publish(pg, SVC, PQgetvalue(r, i, 0), &blk, NULL, errbuf, errlen);
	PQclear(r);
	return st;
}

/* Inserts job (its row, its pending step) and its BisectJob in the outbox; in the open transaction. */
static pw_status write_job(pw_pg *pg, const bis *bs, const pw_bisect_job *job, char *errbuf, size_t errlen)
{
	char jid[200], cl[64], base[64] = "", picks[160] = "{}";
	pw_status st = pw_bisect_job_id(bs->id, job->step, jid, sizeof jid);
	if (st != PW_OK)
		return pw_fail(st, errbuf, errlen, "bisection %s: job id of step %u does not fit", bs->id, job->step);
	int64_t head = job->npicks ? job->base : job->cl;
	pw_bisect_cl_name(head, job->upstream_k, cl, sizeof cl);
	if (job->npicks) {
		pw_bisect_cl_name(job->base, -1, base, sizeof base);
		char a[64], b2[64];
		pw_bisect_cl_name(job->picks[0], -1, a, sizeof a);
		if (job->npicks > 1)
			snprintf(picks, sizeof picks, "{%s,%s}", a, pw_bisect_cl_name(job->picks[1], -1, b2, sizeof b2));
		else
			snprintf(picks, sizeof picks, "{%s}", a);
	}
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, jid);
	pw_pg_params_text(&p, bs->id);
	pw_pg_params_text(&p, pw_bisect_purpose_name(job->purpose));
	pw_pg_params_int(&p, bs->series_id);
	pw_pg_params_text(&p, bs->model_rev);
	pw_pg_params_text(&p, bs->firmware);
	pw_pg_params_text(&p, cl);
	pw_pg_params_int(&p, head);
	pw_pg_params_text(&p, base);
	pw_pg_params_text(&p, picks);
	pw_pg_params_int(&p, job->repeats);
	pw_pg_params_int(&p, job->upstream_k);
	pw_pg_params_int(&p, job->step);
	PGresult *r = NULL;
	st = pw_pg_exec_params(pg,
	                       "INSERT INTO perfwatch.bisect_jobs (job_id, bisection_id, purpose, series_id, model_rev, "
	                       "firmware, cl, cl_number, base_cl, cherry_picks, repeats, requested_at, upstream_k, "
	                       "step_index) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::text[], $11, now(), $12, "
	                       "$13) ON CONFLICT (job_id) DO NOTHING RETURNING job_id",
	                       &p, 0, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	bool inserted = PQntuples(r) == 1;
	PQclear(r);
	if (!inserted)
		return PW_OK; /* already written: nothing published twice */
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, bs->id);
	pw_pg_params_int(&p, job->step);
	pw_pg_params_text(&p, jid);
	pw_pg_params_text(&p, pw_bisect_purpose_name(job->purpose));
	pw_pg_params_text(&p, cl);
	pw_pg_params_int(&p, head);
	if ((st = pw_pg_exec_params(pg,
	                            "INSERT INTO perfwatch.bisection_steps (bisection_id, step_index, job_id, purpose, "
	                            "cl, cl_number, started_at) VALUES ($1, $2, $3, $4, $5, $6, now()) "
	                            "ON CONFLICT DO NOTHING",
	                            &p, 0, NULL, errbuf, errlen)) != PW_OK)
		return st;
	pw_bisect_target t = target_of(bs);
	uint8_t *buf = NULL;
	size_t len = 0;
	if ((st = pw_bisect_job_pack(bs->id, &t, job, pw_now_us(), &buf, &len)) != PW_OK)
		return pw_fail(st, errbuf, errlen, "job %s: cannot pack its BisectJob", jid);
	st = pw_outbox_add(pg, SVC, jid, PW_TOPIC_BISECT_JOBS, jid, buf, len, errbuf, errlen);
	free(buf);
	return st;
}

/* Stores the measured samples and the judged step; in the open transaction. */
static pw_status write_step(pw_pg *pg, const char *jid, const double *x, char (*run)[128], size_t n,
                            const pw_bisect_verdict *v, char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	for (size_t i = 0; i < n && st == PW_OK; i++) {
		pw_pg_params p;
		pw_pg_params_init(&p);
		pw_pg_params_text(&p, jid);
		pw_pg_params_int(&p, (int64_t)i);
		pw_pg_params_double(&p, x[i]);
		pw_pg_params_text(&p, run[i]);
		st = pw_pg_exec_params(pg,
		                       "INSERT INTO perfwatch.bisection_samples (job_id, repeat_index, value, run_id) "
		                       "VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
		                       &p, 0, NULL, errbuf, errlen);
	}
	if (st != PW_OK)
		return st;
	char lo[64], hi[64];
	pw_bisect_cl_name(v->range_lo, -1, lo, sizeof lo);
	pw_bisect_cl_name(v->range_hi, -1, hi, sizeof hi);
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, jid);
	pw_pg_params_double(&p, v->median);
	pw_pg_params_double(&p, v->spread);
	pw_pg_params_int(&p, v->n);
	pw_pg_params_text(&p, pw_bisect_outcome_name(v->outcome));
	pw_pg_params_text(&p, lo);
	pw_pg_params_text(&p, hi);
	pw_pg_params_int(&p, v->range_n);
	return pw_pg_exec_params(pg,
	                         "UPDATE perfwatch.bisection_steps SET median = $2, spread = $3, n = $4, outcome = $5, "
	                         "finished_at = now(), range_lo = $6, range_hi = $7, range_n_cls = $8 "
	                         "WHERE job_id = $1",
	                         &p, 0, NULL, errbuf, errlen);
}

/* One scheduling round of one bisection. */
static pw_status schedule(app *a, pw_pg *pg, bis *bs, char *errbuf, size_t errlen)
{
	pw_bisect_cl *cls = NULL;
	size_t ncls = 0, njobs = 0;
	uint32_t nflag = 0;
	stored_job *jobs = NULL;
	pw_bisect b;
	bool inited = false, tx = false, gave_up = false;
	pw_bisect_log_step *steps = calloc(MAX_STEPS, sizeof *steps);
	if (!steps)
		return PW_ERR_NOMEM;
	/*
	 * One scheduler at a time per bisection: every instance's tick reads the
	 * same active rows, and two that applied the same step would both write
	 * the row's state, the later from an older read (a finished bisection
	 * set back to running). The row is locked for the whole round; a row
	 * another tick holds, that ended, or that was retargeted since the
	 * tick's read is left to the next tick.
	 */
	pw_status st = pw_pg_begin(pg, errbuf, errlen);
	if (st != PW_OK)
		goto out;
	tx = true;
	{
		pw_pg_params p;
		pw_pg_params_init(&p);
		pw_pg_params_text(&p, bs->id);
		pw_pg_params_text(&p, bs->alert_id);
		pw_pg_params_int(&p, bs->series_id);
		pw_pg_params_int(&p, bs->lo);
		pw_pg_params_int(&p, bs->hi);
		PGresult *lr = NULL;
		if ((st = pw_pg_exec_params(pg,
		                            "SELECT 1 FROM perfwatch.bisections WHERE bisection_id = $1 AND alert_id = $2 "
		                            "AND series_id = $3 AND range_lo_number = $4 AND range_hi_number = $5 AND "
		                            "status IN ('running', 'verifying', 'escalated_pairwise') "
		                            "FOR UPDATE SKIP LOCKED",
		                            &p, 0, &lr, errbuf, errlen)) != PW_OK)
			goto out;
		bool mine = PQntuples(lr) == 1;
		PQclear(lr);
		if (!mine)
			goto out;
	}
	if ((st = load_cls(pg, bs, &cls, &ncls, &nflag, errbuf, errlen)) != PW_OK)
		goto out;
	if ((st = load_jobs(pg, bs->id, &jobs, &njobs, errbuf, errlen)) != PW_OK)
		goto out;
	if ((st = pw_bisect_init(&b, &a->cfg, bs->lo, bs->hi, cls, ncls)) != PW_OK) {
		pw_fail(st, errbuf, errlen, "bisection %s: cannot start on (%" PRId64 ", %" PRId64 "]", bs->id, bs->lo,
		        bs->hi);
		goto out;
	}
	inited = true;
	size_t nsteps = 0;
	pw_bisect_job job;
	size_t i = 0;
	/* re-apply the stored steps */
	for (; i < njobs && jobs[i].nx > 0; i++) {
		if (!pw_bisect_next(&b, &job) || job.step != jobs[i].step) {
			st = pw_fail(PW_ERR_CONFLICT, errbuf, errlen,
			             "bisection %s: stored job %s (step %u) is not the one its state derives", bs->id,
			             jobs[i].job_id, jobs[i].step);
			goto out;
		}
		pw_bisect_verdict v;
		if ((st = pw_bisect_apply(&b, &job, jobs[i].x, jobs[i].nx, &v)) != PW_OK) {
			pw_fail(st, errbuf, errlen, "bisection %s: stored samples of %s rejected", bs->id, jobs[i].job_id);
			goto out;
		}
		if (nsteps < MAX_STEPS)
			pw_bisect_log_step_from(&steps[nsteps++], &job, &v, jobs[i].finished_us);
	}
	bool have_next = pw_bisect_next(&b, &job);
	if (i < njobs) {
		/* the pending job: are its results in? */
		stored_job *pj = &jobs[i];
		if (!have_next || job.step != pj->step) {
			st = pw_fail(PW_ERR_CONFLICT, errbuf, errlen, "bisection %s: pending job %s is not the one due",
			             bs->id, pj->job_id);
			goto out;
		}
		double x[PW_BISECT_MAX_SAMPLES];
		char run[PW_BISECT_MAX_SAMPLES][128];
		size_t nx = 0;
		if ((st = job_results(pg, bs, pj->job_id, x, run, job.repeats < PW_BISECT_MAX_SAMPLES ? job.repeats : PW_BISECT_MAX_SAMPLES, &nx, errbuf, errlen)) != PW_OK)
			goto out;
		if (nx < job.repeats) {
			if (pw_now_us() - pj->requested_us <= a->job_timeout_ms * 1000)
				goto out; /* still waiting */
			if (pj->reissued >= a->max_reissues) {
				/* nobody answers: give up rather than hold the build farm's slot for ever */
				char why[512];
				char name[64];
				snprintf(why, sizeof why,
				         PW_BISECT_NO_ANSWER ": job %s (step %u, %s) has %zu of %u results after %" PRId64
				         " re-issues %" PRId64 " s apart",
				         pj->job_id, job.step,
				         pw_bisect_cl_name(job.npicks ? job.picks[0] : job.cl, job.upstream_k, name, sizeof name),
				         nx, job.repeats, pj->reissued, a->job_timeout_ms / 1000);
				pw_bisect_give_up(&b, why);
				if (nsteps < MAX_STEPS) {
					pw_bisect_verdict pv = {.outcome = PW_BISECT_PENDING};
					pw_bisect_log_step_from(&steps[nsteps++], &job, &pv, 0);
				}
				have_next = false;
				gave_up = true;
			} else {
				pw_pg_params p;
				pw_pg_params_init(&p);
				pw_pg_params_text(&p, pj->job_id);
				if ((st = pw_pg_exec_params(pg,
				                            "UPDATE perfwatch.bisect_jobs SET reissued = reissued + 1, "
				                            "requested_at = now() WHERE job_id = $1",
				                            &p, 0, NULL, errbuf, errlen)) != PW_OK)
					goto out;
				if ((st = pw_outbox_resend(pg, SVC, pj->job_id, NULL, errbuf, errlen)) != PW_OK)
					goto out;
				if ((st = pw_pg_commit(pg, errbuf, errlen)) != PW_OK)
					goto out;
				tx = false;
				pw_metric_inc(a->m_jobs, (const char *const[]){"reissued"});
				pw_log_warn(a->lg, "bisection %s: job %s has %zu of %u results after %" PRId64
				            " ms: re-published (%" PRId64 " of %" PRId64 ")", bs->id, pj->job_id, nx,
				            job.repeats, a->job_timeout_ms, pj->reissued + 1, a->max_reissues);
				goto out;
			}
		}
		if (!gave_up) {
			pw_bisect_verdict v;
			if ((st = pw_bisect_apply(&b, &job, x, nx, &v)) != PW_OK) {
				pw_fail(st, errbuf, errlen, "bisection %s: results of %s rejected", bs->id, pj->job_id);
				goto out;
			}
			if (nsteps < MAX_STEPS)
				pw_bisect_log_step_from(&steps[nsteps++], &job, &v, pw_now_us());
			if ((st = write_step(pg, pj->job_id, x, run, nx, &v, errbuf, errlen)) != PW_OK)
				goto out;
			char name[64];
			pw_log_info(a->lg, "bisection %s: step %u %s %s: median %.4g over %u → %s", bs->id, job.step,
			            pw_bisect_purpose_name(job.purpose),
			            pw_bisect_cl_name(job.npicks ? job.picks[0] : job.cl, job.upstream_k, name, sizeof name),
			            v.median, v.n, pw_bisect_outcome_name(v.outcome));
			have_next = pw_bisect_next(&b, &job);
		}
	}
	if (have_next) {
		if ((st = write_job(pg, bs, &job, errbuf, errlen)) != PW_OK)
			goto out;
		if (nsteps < MAX_STEPS) {
			pw_bisect_verdict pv = {.outcome = PW_BISECT_PENDING};
			pw_bisect_log_step_from(&steps[nsteps++], &job, &pv, 0);
		}
	}
	bool over = !have_next;
	if ((st = write_state(pg, bs, &b, steps, nsteps, over, errbuf, errlen)) != PW_OK)
		goto out;
	if (over && (st = write_followups(pg, bs, &b, errbuf, errlen)) != PW_OK)
		goto out;
	if ((st = pw_pg_commit(pg, errbuf, errlen)) != PW_OK)
		goto out;
	tx = false;
	if (have_next)
		pw_metric_inc(a->m_jobs, (const char *const[]){pw_bisect_purpose_name(job.purpose)});
	if (over) {
		pw_metric_observe(a->m_builds, NULL, b.builds);
		double secs = (double)(pw_now_us() - bs->started_us) / 1e6;
		if (b.status == PW_BISECT_DONE)
			pw_metric_observe(a->m_ttc, NULL, secs);
		char name[64];
		pw_log_info(a->lg, "bisection %s %s: culprit %s, confidence %s, %u builds, %.1f s; %s", bs->id,
		            pw_bisect_status_name(b.status),
		            b.culprit > 0 ? pw_bisect_cl_name(b.culprit, -1, name, sizeof name) : "none",
		            pw_bisect_confidence_name(b.confidence), b.builds, secs, b.reason);
	}
out:
	if (tx)
		pw_pg_rollback(pg, NULL, 0);
	if (inited)
		pw_bisect_release(&b);
	free_jobs(jobs, njobs);
	free(cls);
	free(steps);
	return st;
}

static void bis_free(bis *b)
{
	for (size_t i = 0; i < b->ncorr; i++)
		free(b->corr[i]);
	free(b->corr);
	b->corr = NULL;
	b->ncorr = 0;
}

pw_status pw_bisector_tick(void *p, pw_service_worker *w, int64_t *next_ms, char *errbuf, size_t errlen)
{
	(void)next_ms;
	app *a = p;
	pw_pg *pg = w->pg;
	PGresult *r = NULL;
	pw_status st = pw_pg_exec(pg,
	                          "SELECT status, count(*), coalesce(extract(epoch FROM now() - min(started_at) "
	                          "FILTER (WHERE status IN ('running', 'verifying', 'escalated_pairwise'))), 0)::bigint "
	                          "FROM perfwatch.bisections GROUP BY status", 0, NULL, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	static const char *const all[] = {"running", "verifying", "done", "escalated_pairwise", "failed", "cancelled"};
	for (size_t s = 0; s < sizeof all / sizeof all[0]; s++) {
		double v = 0;
		for (int i = 0; i < PQntuples(r); i++)
			if (strcmp(PQgetvalue(r, i, 0), all[s]) == 0)
				v = (double)ival(r, i, 1);
		pw_metric_set(a->m_status, (const char *const[]){all[s]}, v);
	}
	double oldest = 0;
	for (int i = 0; i < PQntuples(r); i++)
		if ((double)ival(r, i, 2) > oldest)
			oldest = (double)ival(r, i, 2);
	pw_metric_set(a->m_oldest, NULL, oldest);
	PQclear(r);
	pw_pg_params q;
	pw_pg_params_init(&q);
	pw_pg_params_int(&q, a->gather_ms);
	/* the exact config: the series, and model_rev / firmware / HLO of its latest run at the regressed CL */
	st = pw_pg_exec_params(
	        pg,
	        "SELECT b.bisection_id, b.alert_id, b.changepoint_id, b.config_hash, b.unit, b.metric, se.series_key, "
	        "se.model, se.hlo_fingerprint, se.platform, se.config, coalesce(r.model_rev, ''), "
	        "coalesce(r.firmware, ''), b.series_id, b.range_lo_number, b.range_hi_number, "
	        "(extract(epoch FROM b.started_at) * 1e6)::bigint, array_to_string(b.correlated_series, chr(1)), "
	        "EXISTS (SELECT 1 FROM perfwatch.bisect_jobs j JOIN perfwatch.bisection_steps st USING (job_id) "
	        "WHERE j.bisection_id = b.bisection_id AND st.finished_at IS NULL AND j.reissued > 0) "
	        "FROM perfwatch.bisections b JOIN perfwatch.series se USING (series_id) "
	        "LEFT JOIN LATERAL (SELECT model_rev, firmware FROM perfwatch.runs x WHERE x.model = se.model AND "
	        "x.platform = se.platform AND x.config = se.config AND x.bisect_job_id = '' "
	        "ORDER BY (x.compiler_cl_number = b.range_hi_number) DESC, x.started_at DESC LIMIT 1) r ON true "
	        "WHERE b.status IN ('running', 'verifying', 'escalated_pairwise') AND b.started_at <= "
	        "now() - make_interval(secs => $1::bigint / 1000.0) ORDER BY b.started_at, "
	        "b.bisection_id",
	        &q, 0, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	/*
	 * The slots: the oldest bisector.max_active bisections whose work is
	 * answered are scheduled; one waiting on a job that has already been
	 * re-issued without an answer (stalled) holds no slot, so stuck work
	 * never starves new work, and it is still visited every tick, to re-issue
	 * its job and, after bisector.max_reissues, to fail it (no_answer).
	 */
	int64_t slots = 0;
	for (int i = 0; i < PQntuples(r) && !pw_service_stopping(a->svc); i++) {
		bool stalled = strcmp(PQgetvalue(r, i, 18), "t") == 0;
		if (!stalled && slots >= a->max_active)
			continue;
		if (!stalled)
			slots++;
		bis b = {0};
		char *const f[] = {b.id, b.alert_id, b.cp_id, b.config_hash, b.unit, b.metric, b.series_key,
		                   b.model, b.hlo, b.platform, b.config, b.model_rev, b.firmware};
		const size_t fs[] = {sizeof b.id, sizeof b.alert_id, sizeof b.cp_id, sizeof b.config_hash,
		                     sizeof b.unit, sizeof b.metric, sizeof b.series_key, sizeof b.model,
		                     sizeof b.hlo, sizeof b.platform, sizeof b.config, sizeof b.model_rev,
		                     sizeof b.firmware};
		for (int c = 0; c < 13; c++)
			snprintf(f[c], fs[c], "%s", PQgetvalue(r, i, c));
		b.series_id = ival(r, i, 13);
		b.lo = ival(r, i, 14);
		b.hi = ival(r, i, 15);
		b.started_us = ival(r, i, 16);
		const char *corr = PQgetvalue(r, i, 17);
		if (corr[0]) {
			size_t cnt = 1;
			for (const char *c = corr; *c; c++)
				cnt += *c == '\001';
			b.corr = calloc(cnt, sizeof *b.corr);
			char *dup = strdup(corr);
			if (!b.corr || !dup) {
				free(dup);
				bis_free(&b);
				PQclear(r);
				return PW_ERR_NOMEM;
			}
			for (char *save = NULL, *t = strtok_r(dup, "\001", &save); t; t = strtok_r(NULL, "\001", &save))
				b.corr[b.ncorr++] = strdup(t);
			free(dup);
		}
		st = schedule(a, pg, &b, errbuf, errlen);
		bis_free(&b);
		if (st != PW_OK && pw_service_retriable(st))
			break;
		if (st != PW_OK) {
			/* one bisection's stored state it cannot follow does not stop the others */
			pw_log_error(a->lg, "bisection %s: %s", PQgetvalue(r, i, 0), errbuf);
			st = PW_OK;
		}
	}
	PQclear(r);
	if (st == PW_OK && !pw_service_stopping(a->svc))
		st = pw_confirm_tick(&a->confirm, pg, errbuf, errlen);
	return st;
}
