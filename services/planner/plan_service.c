/*
 * plan_service.c: what the planner does with its inputs and on its tick
 * (docs/planner.md).
 *
 * Batch (one consumer over perf.catalogue.v1, perf.capacity.v1,
 * perf.sweeps.v1 and perf.compiler-cls.v1): each message through the door
 * (plan_door.h), then stored (plan_store.h). The door lets the planner's
 * own republished CLs by.
 *
 * Tick (main thread), once the group has read the catalogue and capacity
 * topics to their ends (pw_kafka_group_lag 0: a half-read catalogue would
 * give half a plan): first every stored CL with op costs not yet checked
 * goes through the static check against the catalogue (pw_plan_cl_check)
 * and is published again on perf.compiler-cls.v1 with perf_relevant,
 * perf_benchmarks and perf_checked_by = "planner", through the outbox in
 * the transaction that marks it checked; then the earliest sweep without a
 * plan is planned once every CL up to its head is read —
 * from the stored catalogue, platforms and capacity, the CLs since the
 * oldest last run, and the past plans; the plan, its rows and its outbox
 * row are written in one transaction under plan_id "plan:" + sweep id. A
 * planner killed mid-plan stored nothing: the next run plans the same
 * sweep from the same stored inputs, to the same plan, once.
 */
#include "plan_service.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfwatch/v1/compiler.pb-c.h"
#include "perfwatch/v1/plan.pb-c.h"
#include "plan.h"
#include "plan_door.h"
#include "plan_store.h"
#include "pw_time.h"
#include "pw_topics.h"

#define SVC "planner"

typedef struct app {
	pw_service *svc;
	const pw_log *lg;
	pw_plan_params params;
	double tpu_sigma, gpu_sigma;
	int64_t plans_per_tick;
	pw_metric *m_inputs;   /* counter inputs{kind,outcome} */
	pw_metric *m_plans;    /* counter plans{kind} */
	pw_metric *m_seconds;  /* histogram seconds to make a plan */
	pw_metric *m_chip_h;   /* gauge chip-hours of the latest plan, by kind and tier */
	pw_metric *m_coverage; /* gauge spend coverage of the latest RC plan */
	pw_metric *m_rc_day;   /* gauge the latest RC plan's day, unix seconds (0: none yet) */
	bool rc_loaded;        /* the two gauges above were read from PostgreSQL once */
	pw_metric *m_pruned;   /* gauge share of T0 candidates the latest nightly pruned */
	pw_metric *m_waiting;  /* gauge 1 while a sweep waits for its inputs */
	pw_metric *m_cls;      /* counter CLs checked{relevant} */
} app;

typedef pw_service_worker worker;

const pw_conf_key pw_planner_keys[] = {
	{.name = "planner.t1.top", .type = PW_CONF_INT, .def = "20", .min = 1, .max = 100000,
	 .help = "models always in T1, by spend (MDE planner.mde.top_pct)"},
	{.name = "planner.t1.max", .type = PW_CONF_INT, .def = "120", .min = 1, .max = 100000,
	 .help = "models in T1 at most"},
	{.name = "planner.t1.spend_floor", .type = PW_CONF_DOUBLE, .def = "0.005", .min = 0, .max = 1,
	 .help = "a model at or above this share of spend is in T1 unless it inherits"},
	{.name = "planner.coverage.target", .type = PW_CONF_DOUBLE, .def = "0.955", .min = 0, .max = 1,
	 .help = "T1 grows until measured plus inherited spend reaches this"},
	{.name = "planner.cluster.similarity", .type = PW_CONF_DOUBLE, .def = "0.95", .min = 0.5, .max = 1,
	 .help = "signature similarity at which a model inherits its representative's verdict"},
	{.name = "planner.mde.top_pct", .type = PW_CONF_DOUBLE, .def = "1", .min = 0.01, .max = 100,
	 .help = "percent: T1 top models' minimum detectable effect"},
	{.name = "planner.mde.rest_pct", .type = PW_CONF_DOUBLE, .def = "3", .min = 0.01, .max = 100,
	 .help = "percent: the rest of T1, T2 and the rotation"},
	{.name = "planner.mde.t0_pct", .type = PW_CONF_DOUBLE, .def = "3", .min = 0.01, .max = 100,
	 .help = "percent: the nightly smoke tier"},
	{.name = "planner.n.max", .type = PW_CONF_INT, .def = "8", .min = 3, .max = 1000,
	 .help = "repeats per point at most (beyond: the plan records the MDE reached)"},
	{.name = "planner.t0.n_max", .type = PW_CONF_INT, .def = "1", .min = 1, .max = 1000,
	 .help = "repeats per nightly point at most"},
	{.name = "planner.tail.configs", .type = PW_CONF_INT, .def = "2", .min = 1, .max = 64,
	 .help = "configs per model in the rotation (its first ones)"},
	{.name = "planner.rotation.days", .type = PW_CONF_INT, .def = "28", .min = 8, .max = 365,
	 .help = "every model is measured within this many days"},
	{.name = "planner.relevance.min_pct", .type = PW_CONF_DOUBLE, .def = "0.25", .min = 0, .max = 100,
	 .help = "percent: a CL is perf-relevant for a benchmark whose roofline step moves this much"},
	{.name = "planner.reserve.chip_hours", .type = PW_CONF_DOUBLE, .def = "1100", .min = 0, .max = 1e9,
	 .help = "chip-hours a week held for re-baselines and bisection"},
	{.name = "planner.sigma.tpu_pct", .type = PW_CONF_DOUBLE, .def = "0.4", .min = 0.001, .max = 100,
	 .help = "percent: noise norm of a platform with MXU lanes when no baseline says"},
	{.name = "planner.sigma.gpu_pct", .type = PW_CONF_DOUBLE, .def = "2", .min = 0.001, .max = 100,
	 .help = "percent: noise norm of a GPU platform when no baseline says"},
	{.name = "planner.tick", .type = PW_CONF_DURATION_MS, .def = "1s", .min = 50, .max = 3600000,
	 .help = "how often the planner looks for a sweep to plan"},
	{.name = "planner.plans_per_tick", .type = PW_CONF_INT, .def = "8", .min = 1, .max = 1000,
	 .help = "sweeps planned in one tick at most"},
};
const size_t pw_planner_nkeys = sizeof pw_planner_keys / sizeof pw_planner_keys[0];

size_t pw_planner_app_size(void)
{
	return sizeof(app);
}

/* The planner.* keys into the decisions' parameters; PW_ERR_CONFIG when they disagree. */
static pw_status planner_params(const pw_config *cf, pw_plan_params *p, double *tpu_sigma, double *gpu_sigma,
                                int64_t *plans_per_tick, char *errbuf, size_t errlen)
{
	pw_plan_params_default(p);
	p->t1_top = (uint32_t)pw_config_get_int(cf, "planner.t1.top");
	p->t1_max = (uint32_t)pw_config_get_int(cf, "planner.t1.max");
	p->t1_spend_floor = pw_config_get_double(cf, "planner.t1.spend_floor");
	p->coverage_target = pw_config_get_double(cf, "planner.coverage.target");
	p->similarity = pw_config_get_double(cf, "planner.cluster.similarity");
	p->mde_top_pct = pw_config_get_double(cf, "planner.mde.top_pct");
	p->mde_rest_pct = pw_config_get_double(cf, "planner.mde.rest_pct");
	p->mde_t0_pct = pw_config_get_double(cf, "planner.mde.t0_pct");
	p->n_max = (uint32_t)pw_config_get_int(cf, "planner.n.max");
	p->t0_n_max = (uint32_t)pw_config_get_int(cf, "planner.t0.n_max");
	p->tail_configs = (uint32_t)pw_config_get_int(cf, "planner.tail.configs");
	p->rotation_days = (int32_t)pw_config_get_int(cf, "planner.rotation.days");
	p->relevance_min_pct = pw_config_get_double(cf, "planner.relevance.min_pct");
	p->reserve_chip_h = pw_config_get_double(cf, "planner.reserve.chip_hours");
	*tpu_sigma = pw_config_get_double(cf, "planner.sigma.tpu_pct");
	*gpu_sigma = pw_config_get_double(cf, "planner.sigma.gpu_pct");
	*plans_per_tick = pw_config_get_int(cf, "planner.plans_per_tick");
	if (p->t1_top > p->t1_max)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen, "planner.t1.top (%u) exceeds planner.t1.max (%u)",
		               p->t1_top, p->t1_max);
	return PW_OK;
}

pw_status pw_planner_init(pw_service *svc, void **out, char *errbuf, size_t errlen)
{
	app *a = *out;
	a->svc = svc;
	a->lg = pw_service_log(svc);
	pw_status st = planner_params(pw_service_config(svc), &a->params, &a->tpu_sigma, &a->gpu_sigma,
	                              &a->plans_per_tick, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_metrics *reg = pw_service_metrics(svc);
	static const double buckets[] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30};
	st = pw_metrics_counter(reg, "perfwatch_planner_inputs_total", "inputs read, by kind and outcome",
	                                  (const char *const[]){"kind", "outcome", NULL}, &a->m_inputs, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_counter(reg, "perfwatch_planner_plans_total", "plans written, by sweep kind",
		                        (const char *const[]){"kind", NULL}, &a->m_plans, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_histogram(reg, "perfwatch_planner_plan_seconds", "seconds pw_plan_make took for a sweep",
		                          NULL, buckets, sizeof buckets / sizeof buckets[0], &a->m_seconds, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_gauge(reg, "perfwatch_planner_chip_hours", "chip-hours of the latest plan, by sweep kind and tier",
		                      (const char *const[]){"kind", "tier", NULL}, &a->m_chip_h, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_gauge(reg, "perfwatch_planner_spend_coverage_ratio",
		                      "share of fleet spend measured or inherited on the latest RC plan", NULL, &a->m_coverage,
		                      errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_gauge(reg, "perfwatch_planner_latest_rc_day_seconds",
		                      "day of the latest RC plan (unix seconds, midnight UTC); 0 before the first",
		                      NULL, &a->m_rc_day, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_gauge(reg, "perfwatch_planner_t0_pruned_ratio",
		                      "share of T0 candidates the latest nightly skipped", NULL, &a->m_pruned, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_gauge(reg, "perfwatch_planner_sweeps_waiting",
		                      "1 while the earliest unplanned sweep waits for its inputs", NULL, &a->m_waiting, errbuf,
		                      errlen);
	if (st == PW_OK)
		st = pw_metrics_counter(reg, "perfwatch_planner_cls_checked_total",
		                        "CLs with op costs through the static check, by whether any benchmark is touched",
		                        (const char *const[]){"relevant", NULL}, &a->m_cls, errbuf, errlen);
	return st;
}

/* ---- inputs ---------------------------------------------------------------------------------- */

static const char *kind_name(pw_planner_kind k)
{
	switch (k) {
	case PW_PLANNER_CATALOGUE: return "catalogue";
	case PW_PLANNER_CAPACITY: return "capacity";
	case PW_PLANNER_SWEEP: return "sweep";
	case PW_PLANNER_CL: return "cl";
	}
	return "unknown";
}

pw_status pw_planner_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf, size_t errlen)
{
	worker *k = ctx;
	app *a = k->app;
	pw_status st = PW_OK;
	for (size_t i = 0; i < n && st == PW_OK; i++) {
		const rd_kafka_message_t *m = msgs[i];
		pw_planner_kind kind = pw_planner_topic_kind(rd_kafka_topic_name(m->rkt));
		ProtobufCMessage *msg = NULL;
		Perfwatch__V1__DlqReason reason;
		char detail[512];
		pw_planner_input in = pw_planner_door(kind, m->payload, m->len, &msg, &reason, detail, sizeof detail);
		const char *outcome = "stored";
		if (in == PW_PLANNER_DEAD) {
			st = pw_service_dead_letter(k, m, pw_planner_kind_type(kind), reason, detail, errbuf, errlen);
			outcome = "dead_letter";
			pw_log_warn(a->lg, "%s input dead-lettered: %s", kind_name(kind), detail);
		} else if (in == PW_PLANNER_IGNORE) {
			outcome = "own";
		} else {
			switch (kind) {
			case PW_PLANNER_CATALOGUE:
				st = plan_store_catalogue(k->pg, (const void *)msg, m->payload, m->len, errbuf, errlen);
				break;
			case PW_PLANNER_CAPACITY: st = plan_store_capacity(k->pg, (const void *)msg, errbuf, errlen); break;
			case PW_PLANNER_SWEEP: st = plan_store_sweep(k->pg, (const void *)msg, errbuf, errlen); break;
			case PW_PLANNER_CL: st = plan_store_cl(k->pg, (const void *)msg, m->payload, m->len, errbuf, errlen); break;
			}
			if (st != PW_OK && !pw_service_retriable(st)) {
				/* a conflicting sweep, a row the server refuses: retrying would stall the partition */
				char why[512];
				snprintf(why, sizeof why, "%s", errbuf);
				st = pw_service_dead_letter(k, m, pw_planner_kind_type(kind),
				                            st == PW_ERR_CONFLICT ? PERFWATCH__V1__DLQ_REASON__DLQ_REASON_CONFLICT
				                                                  : PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED,
				                            why, errbuf, errlen);
				outcome = "dead_letter";
			}
		}
		if (msg)
			protobuf_c_message_free_unpacked(msg, NULL);
		if (st == PW_OK)
			pw_metric_inc(a->m_inputs, (const char *const[]){kind_name(kind), outcome});
	}
	return st;
}

/* ---- the tick: the static check of new CLs ---------------------------------------------------- */

/* Checks the CLs stored since the last tick against the catalogue and republishes each; *n checked. */
static pw_status check_cls(app *a, pw_pg *pg, size_t *n, char *errbuf, size_t errlen)
{
	*n = 0;
	plan_cls cls = {0};
	plan_catalogue cat = {0};
	plan_platforms pl = {0};
	pw_status st = plan_cls_unchecked(pg, 500, &cls, errbuf, errlen);
	if (st != PW_OK || cls.n == 0)
		goto out;
	if ((st = plan_catalogue_load(pg, &cat, errbuf, errlen)) != PW_OK ||
	    (st = plan_platforms_load(pg, a->tpu_sigma, a->gpu_sigma, &pl, errbuf, errlen)) != PW_OK)
		goto out;
	for (size_t i = 0; i < cls.n && st == PW_OK; i++) {
		const Perfwatch__V1__CompilerCl *c = cls.msgs[i];
		char **globs = NULL;
		size_t ng = 0;
		if ((st = pw_plan_cl_check(cat.models, cat.n, pl.p, pl.n, &cls.cls[i], &a->params, &globs, &ng)) != PW_OK) {
			pw_fail(st, errbuf, errlen, "cl \"%s\": out of memory in the static check", c->cl);
			break;
		}
		Perfwatch__V1__CompilerCl out = *c;
		out.perf_relevant = ng > 0;
		out.perf_benchmarks = globs;
		out.n_perf_benchmarks = ng;
		out.perf_checked_by = "planner";
		size_t len = perfwatch__v1__compiler_cl__get_packed_size(&out);
		uint8_t *buf = malloc(len + 1);
		if (!buf)
			st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "cl \"%s\": out of memory", c->cl);
		else {
			perfwatch__v1__compiler_cl__pack(&out, buf);
			st = plan_store_cl_checked(pg, SVC, c->cl, c->cl_number, ng, buf, len, errbuf, errlen);
		}
		if (st == PW_OK) {
			(*n)++;
			pw_metric_inc(a->m_cls, (const char *const[]){ng > 0 ? "true" : "false"});
			if (ng > 0)
				pw_log_info(a->lg, "cl \"%s\" is perf-relevant for %zu benchmarks (first: %s)", c->cl, ng, globs[0]);
		}
		free(buf);
		for (size_t g = 0; g < ng; g++)
			free(globs[g]);
		free(globs);
	}
out:
	plan_platforms_release(&pl);
	plan_catalogue_release(&cat);
	plan_cls_release(&cls);
	return st;
}

/* ---- the tick: plans ---------------------------------------------------------------------------- */

static Perfwatch__V1__PlanTier tier_proto(pw_plan_tier t)
{
	return (Perfwatch__V1__PlanTier)(t + 1);
}

/* The packed Plan of plan; *out malloc'ed. */
static pw_status plan_pack(const plan_sweep_row *sw, const char *plan_id, const pw_plan *p,
                           const char *const *fps, int64_t now_us, uint8_t **out, size_t *len)
{
	Perfwatch__V1__Plan m = PERFWATCH__V1__PLAN__INIT;
	char head[32];
	snprintf(head, sizeof head, "cl/%" PRId64, sw->cl_head);
	m.plan_id = (char *)plan_id;
	m.sweep_id = (char *)sw->sweep_id;
	m.kind = sw->rc ? PERFWATCH__V1__SWEEP_KIND__SWEEP_KIND_RC : PERFWATCH__V1__SWEEP_KIND__SWEEP_KIND_NIGHTLY;
	m.release = (char *)sw->release;
	m.cl_head = head;
	m.day = (char *)sw->day;
	m.chip_hours = p->chip_h;
	m.naive_chip_hours_week = p->naive_chip_h_week;
	m.spend_coverage = p->spend_coverage;
	m.spend_measured = p->spend_measured;
	m.spend_inherited = p->spend_inherited;
	m.t0_candidates = p->t0_candidates;
	m.t0_pruned = p->t0_pruned;
	m.t1_models = p->t1_models;
	m.clusters = p->clusters;
	m.models = p->models;
	m.created_unix_us = now_us;
	Perfwatch__V1__PlanItem *items = calloc(p->nitems + 1, sizeof *items), **pitems = calloc(p->nitems + 1, sizeof *pitems);
	Perfwatch__V1__PlanInheritance *inh = calloc(p->ninherits + 1, sizeof *inh),
	                               **pinh = calloc(p->ninherits + 1, sizeof *pinh);
	Perfwatch__V1__PlanLine lines[PW_PLAN_TIERS], *plines[PW_PLAN_TIERS];
	pw_status st = PW_ERR_NOMEM;
	if (!items || !pitems || !inh || !pinh)
		goto out;
	for (size_t i = 0; i < p->nitems; i++) {
		const pw_plan_item *it = &p->items[i];
		items[i] = (Perfwatch__V1__PlanItem)PERFWATCH__V1__PLAN_ITEM__INIT;
		items[i].model = (char *)it->model;
		items[i].platform = (char *)it->platform;
		items[i].config = (char *)it->config;
		items[i].repeats = it->repeats;
		items[i].tier = tier_proto(it->tier);
		items[i].top = it->top;
		items[i].mde_pct = it->mde_pct;
		items[i].sigma_pct = it->sigma_pct;
		items[i].hlo_fingerprint = (char *)fps[i];
		pitems[i] = &items[i];
	}
	for (size_t i = 0; i < p->ninherits; i++) {
		const pw_plan_inherit *ih = &p->inherits[i];
		inh[i] = (Perfwatch__V1__PlanInheritance)PERFWATCH__V1__PLAN_INHERITANCE__INIT;
		inh[i].model = (char *)ih->model;
		inh[i].representative = (char *)ih->representative;
		inh[i].similarity = ih->similarity;
		inh[i].hlo_fingerprint = (char *)ih->fingerprint;
		inh[i].representative_fingerprint = (char *)ih->representative_fingerprint;
		inh[i].representative_measured = ih->measured;
		pinh[i] = &inh[i];
	}
	size_t nl = 0;
	for (int t = 0; t < PW_PLAN_TIERS; t++) {
		const pw_plan_line *l = &p->lines[t];
		if (l->chip_h == 0 && l->planned_chip_h == 0 && l->deferred == 0)
			continue;
		lines[nl] = (Perfwatch__V1__PlanLine)PERFWATCH__V1__PLAN_LINE__INIT;
		lines[nl].tier = tier_proto((pw_plan_tier)t);
		lines[nl].chip_hours = l->chip_h;
		lines[nl].planned_chip_hours = l->planned_chip_h;
		lines[nl].points = l->points;
		lines[nl].repeats = l->repeats;
		lines[nl].models = l->models;
		lines[nl].deferred = l->deferred;
		plines[nl] = &lines[nl];
		nl++;
	}
	m.items = pitems;
	m.n_items = p->nitems;
	m.inheritances = pinh;
	m.n_inheritances = p->ninherits;
	m.lines = plines;
	m.n_lines = nl;
	*len = perfwatch__v1__plan__get_packed_size(&m);
	*out = malloc(*len + 1);
	if (*out) {
		perfwatch__v1__plan__pack(&m, *out);
		st = PW_OK;
	}
out:
	free(items);
	free(pitems);
	free(inh);
	free(pinh);
	return st;
}

static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Whether the catalogue and capacity topics are read to their ends: every
 * message published on them is stored (the group committed it). A plan or a
 * static check made while a catalogue is half read would be made on a part
 * of it.
 */
static pw_status inputs_read(app *a, bool *yes, char *errbuf, size_t errlen)
{
	static const char *const topics[] = {PW_TOPIC_CATALOGUE, PW_TOPIC_CAPACITY};
	const pw_config *cf = pw_service_config(a->svc);
	int64_t lag = -1;
	pw_status st = pw_kafka_group_lag(pw_config_get_str(cf, "kafka.bootstrap.servers"),
	                                  pw_config_get_str(cf, "kafka.group.id"), topics, 2, &lag, errbuf, errlen);
	*yes = st == PW_OK && lag == 0;
	return st == PW_OK ? PW_OK : PW_ERR_UNAVAILABLE;
}

/* The inputs of one plan read from PostgreSQL, and the plan made of them. */
typedef struct plan_work {
	plan_catalogue cat;
	plan_platforms pl;
	plan_history h;
	plan_cls cls;
	pw_plan plan;
} plan_work;

static void plan_work_release(plan_work *w)
{
	pw_plan_release(&w->plan);
	plan_cls_release(&w->cls);
	plan_history_release(&w->h);
	plan_platforms_release(&w->pl);
	plan_catalogue_release(&w->cat);
}

/*
 * Reads the inputs of sweep sw (the catalogue, capacity, the plans before
 * its day, the CLs a nightly's static check needs) and makes its plan into
 * w->plan; *ms the milliseconds pw_plan_make took. The planner's tick and
 * `pw-planner --recompute` both plan through it. The caller releases w
 * (plan_work_release) whatever the outcome.
 */
static pw_status plan_compute(pw_pg *pg, const pw_plan_params *params, double tpu_sigma, double gpu_sigma,
                              const plan_sweep_row *sw, plan_work *w, double *ms, char *errbuf, size_t errlen)
{
	pw_status st;
	if ((st = plan_catalogue_load(pg, &w->cat, errbuf, errlen)) != PW_OK ||
	    (st = plan_platforms_load(pg, tpu_sigma, gpu_sigma, &w->pl, errbuf, errlen)) != PW_OK ||
	    (st = plan_history_load(pg, sw->day_num, sw->rc, &w->h, errbuf, errlen)) != PW_OK)
		return st;
	/* the nightly's static check needs the CLs since the oldest last run */
	if (!sw->rc && (st = plan_cls_load(pg, w->h.min_ran_head, sw->cl_head, &w->cls, errbuf, errlen)) != PW_OK)
		return st;
	pw_plan_sweep sweep = {sw->sweep_id, sw->rc ? PW_PLAN_RC : PW_PLAN_NIGHTLY, sw->release, sw->cl_head, sw->day_num};
	pw_plan_inputs in = {w->cat.models, w->cat.n, w->pl.p, w->pl.n, w->cls.cls, w->cls.n, w->h.noise, w->h.nnoise,
	                     w->h.seen, w->h.nseen, w->h.ran, w->h.nran, &sweep};
	double t0 = mono_ms();
	if ((st = pw_plan_make(&in, params, &w->plan)) != PW_OK)
		return pw_fail(st, errbuf, errlen, "planning sweep \"%s\": %s", sw->sweep_id, pw_strerror(st));
	*ms = mono_ms() - t0;
	return PW_OK;
}

/* Plans one sweep; *done false when it waits for inputs. */
static pw_status plan_one(app *a, pw_pg *pg, const plan_sweep_row *sw, bool *done, char *errbuf, size_t errlen)
{
	*done = false;
	int64_t models, max_cl;
	pw_status st = plan_inputs_state(pg, &models, &max_cl, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (models == 0 || max_cl < sw->cl_head) {
		pw_metric_set(a->m_waiting, NULL, 1);
		return PW_OK;
	}
	pw_metric_set(a->m_waiting, NULL, 0);
	pw_log_info(a->lg, "planning \"%s\" (%s, head cl/%" PRId64 ")", sw->sweep_id, sw->rc ? "rc" : "nightly", sw->cl_head);
	plan_work w = {0};
	const char **fps = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	double ms;
	if ((st = plan_compute(pg, &a->params, a->tpu_sigma, a->gpu_sigma, sw, &w, &ms, errbuf, errlen)) != PW_OK)
		goto out;
	fps = calloc(w.plan.nitems + 1, sizeof *fps);
	if (!fps) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "sweep \"%s\": out of memory", sw->sweep_id);
		goto out;
	}
	for (size_t i = 0; i < w.plan.nitems; i++)
		fps[i] = w.cat.models[w.plan.items[i].model_index].fingerprint;
	char plan_id[300];
	snprintf(plan_id, sizeof plan_id, "plan:%s", sw->sweep_id);
	if ((st = plan_pack(sw, plan_id, &w.plan, fps, pw_now_us(), &buf, &len)) != PW_OK) {
		pw_fail(st, errbuf, errlen, "sweep \"%s\": out of memory packing the plan", sw->sweep_id);
		goto out;
	}
	bool written;
	if ((st = plan_store_write(pg, SVC, sw, plan_id, &w.plan, fps, ms, buf, len, &written, errbuf, errlen)) != PW_OK)
		goto out;
	*done = true;
	const char *kind = sw->rc ? "rc" : "nightly";
	if (written) {
		pw_metric_inc(a->m_plans, (const char *const[]){kind});
		pw_metric_observe(a->m_seconds, NULL, ms / 1e3);
		for (int t = 0; t < PW_PLAN_TIERS; t++)
			pw_metric_set(a->m_chip_h, (const char *const[]){kind, pw_plan_tier_name((pw_plan_tier)t)},
			              w.plan.lines[t].chip_h);
		if (sw->rc) {
			pw_metric_set(a->m_coverage, NULL, w.plan.spend_coverage);
			pw_metric_set(a->m_rc_day, NULL, (double)sw->day_num * 86400.0);
		} else if (w.plan.t0_candidates)
			pw_metric_set(a->m_pruned, NULL, (double)w.plan.t0_pruned / w.plan.t0_candidates);
		pw_log_info(a->lg,
		            "planned \"%s\": %zu items, %.1f chip-h (T0 %.1f of %.1f, T1 %.1f, T2 %.1f, tail %.1f, reserve %.1f), "
		            "spend coverage %.1f%%, %zu inheritances, %u of %u T0 benchmarks pruned, %.1f ms",
		            plan_id, w.plan.nitems, w.plan.chip_h, w.plan.lines[PW_PLAN_T0].chip_h,
		            w.plan.lines[PW_PLAN_T0].planned_chip_h, w.plan.lines[PW_PLAN_T1].chip_h,
		            w.plan.lines[PW_PLAN_T2].chip_h, w.plan.lines[PW_PLAN_TAIL].chip_h,
		            w.plan.lines[PW_PLAN_RESERVE].chip_h, 100 * w.plan.spend_coverage, w.plan.ninherits, w.plan.t0_pruned,
		            w.plan.t0_candidates, ms);
	}
out:
	free(buf);
	free(fps);
	plan_work_release(&w);
	return st;
}

pw_status pw_planner_tick(void *ctx, pw_service_worker *main, int64_t *next_ms, char *errbuf, size_t errlen)
{
	app *a = ctx;
	bool read;
	pw_status st;
	if (!a->rc_loaded) { /* the SLO gauges say what is stored, not what this process made */
		bool found;
		double cov = 0.0;
		int64_t day_s = 0;
		if ((st = plan_store_latest_rc(main->pg, &found, &cov, &day_s, errbuf, errlen)) != PW_OK)
			return pw_service_retriable(st) ? st : PW_ERR_UNAVAILABLE;
		if (found) {
			pw_metric_set(a->m_coverage, NULL, cov);
			pw_metric_set(a->m_rc_day, NULL, (double)day_s);
		}
		a->rc_loaded = true;
	}
	st = inputs_read(a, &read, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (!read) {
		pw_metric_set(a->m_waiting, NULL, 1);
		return PW_OK; /* the catalogue is being read: check and plan against all of it */
	}
	size_t checked;
	if ((st = check_cls(a, main->pg, &checked, errbuf, errlen)) != PW_OK)
		return pw_service_retriable(st) ? st : PW_ERR_UNAVAILABLE;
	if (checked > 0)
		*next_ms = 0;
	for (int64_t i = 0; i < a->plans_per_tick; i++) {
		if (pw_service_stopping(a->svc))
			return PW_OK;
		plan_sweep_row sw;
		st = plan_next_sweep(main->pg, &sw, errbuf, errlen);
		if (st == PW_ERR_NOT_FOUND) {
			pw_metric_set(a->m_waiting, NULL, 0);
			return PW_OK;
		}
		bool done;
		if (st == PW_OK)
			st = plan_one(a, main->pg, &sw, &done, errbuf, errlen);
		if (st != PW_OK)
			return pw_service_retriable(st) ? st : PW_ERR_UNAVAILABLE; /* logged, retried after a backoff */
		if (!done)
			return PW_OK; /* later sweeps wait for this one: each plan reads the plans before it */
		*next_ms = 0;
	}
	return PW_OK;
}

/* ---- recompute --------------------------------------------------------------------------------- */

/*
 * Prints plan p of sweep sw as pw_planner_recompute says (plan_service.h):
 * one "plan" line, an "item" line per item, an "inherit" line per
 * inheritance and a "line" line per stored tier line, in the plan's order.
 */
static void plan_print(FILE *out, const plan_sweep_row *sw, const pw_plan *p, const plan_catalogue *cat)
{
	fprintf(out, "plan\t%s\t%s\t%s\t%" PRId64 "\t%s\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%u\t%u\t%u\t%u\t%u\n", sw->sweep_id,
	        sw->rc ? "rc" : "nightly", sw->release, sw->cl_head, sw->day, p->chip_h, p->naive_chip_h_week,
	        p->spend_coverage, p->spend_measured, p->spend_inherited, (unsigned)p->t0_candidates,
	        (unsigned)p->t0_pruned, (unsigned)p->t1_models, (unsigned)p->clusters, (unsigned)p->models);
	for (size_t i = 0; i < p->nitems; i++) {
		const pw_plan_item *it = &p->items[i];
		fprintf(out, "item\t%s\t%s\t%s\t%u\t%s\t%s\t%.6f\t%.6f\t%s\n", it->model, it->platform, it->config,
		        (unsigned)it->repeats, pw_plan_tier_name(it->tier), it->top ? "t" : "f", it->mde_pct, it->sigma_pct,
		        cat->models[it->model_index].fingerprint);
	}
	for (size_t i = 0; i < p->ninherits; i++) {
		const pw_plan_inherit *ih = &p->inherits[i];
		fprintf(out, "inherit\t%s\t%s\t%.6f\t%s\t%s\t%s\n", ih->model, ih->representative,
		        plan_similarity_stored(ih->similarity), ih->fingerprint, ih->representative_fingerprint,
		        ih->measured ? "t" : "f");
	}
	for (int t = 0; t < PW_PLAN_TIERS; t++) {
		const pw_plan_line *l = &p->lines[t];
		if (plan_line_stored(l))
			fprintf(out, "line\t%s\t%.6f\t%.6f\t%u\t%u\t%u\t%u\n", pw_plan_tier_name((pw_plan_tier)t), l->chip_h,
			        l->planned_chip_h, (unsigned)l->points, (unsigned)l->repeats, (unsigned)l->models,
			        (unsigned)l->deferred);
	}
}

int pw_planner_recompute(const char *sweep_id, char **envp, FILE *out)
{
	char err[512];
	int rc = 1;
	pw_log lg;
	pw_log_init(&lg, "planner", PW_LOG_WARN);
	pw_pg *pg = NULL;
	plan_work w = {0};
	pw_config *cfg = pw_config_new("planner", pw_planner_keys, pw_planner_nkeys, err, sizeof err);
	if (!cfg) {
		fprintf(stderr, "pw-planner: configuration table: %s\n", err);
		return 1;
	}
	pw_plan_params params;
	double tpu, gpu, ms;
	int64_t per_tick;
	plan_sweep_row sw;
	if (pw_config_load(cfg, NULL, envp, err, sizeof err) != PW_OK) {
		fprintf(stderr, "pw-planner: configuration: %s\n", err);
		rc = 2;
		goto out;
	}
	if (planner_params(cfg, &params, &tpu, &gpu, &per_tick, err, sizeof err) != PW_OK ||
	    pw_pg_new(&pg, pw_config_get_str(cfg, "pg.dsn"), NULL, &lg, err, sizeof err) != PW_OK ||
	    pw_pg_wait_connected(pg, 30000, NULL, err, sizeof err) != PW_OK ||
	    plan_sweep_get(pg, sweep_id, &sw, err, sizeof err) != PW_OK ||
	    plan_compute(pg, &params, tpu, gpu, &sw, &w, &ms, err, sizeof err) != PW_OK) {
		fprintf(stderr, "pw-planner: recomputing the plan of \"%s\": %s\n", sweep_id, err);
		goto out;
	}
	plan_print(out, &sw, &w.plan, &w.cat);
	rc = fflush(out) == 0 ? 0 : 1;
out:
	plan_work_release(&w);
	pw_pg_free(pg);
	pw_config_free(cfg);
	return rc;
}
