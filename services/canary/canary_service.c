/*
 * canary_service.c: what the canary does with a window (docs/canary.md,
 * "The canary service").
 *
 * Batch (perf.canary.v1, keyed rollout/family: a family's windows come in
 * the order they were published, to one worker): each window through the
 * door (canary_door.h), then in one transaction: the family's row is
 * created or locked; a window already stored is a redelivery (nothing
 * changes) unless its values differ (CONFLICT, dead-lettered); a window
 * naming other releases, another N−1 artifact or kind than the family's
 * first is dead-lettered as INCONSISTENT; the family's
 * sequences are the worker's in memory when their window count is the
 * stored one, else rebuilt by replaying the stored windows in the order they
 * were taken (after a restart, a rebalance, a failed transaction); the window
 * is added (one out of order for its metric is dead-lettered as
 * INCONSISTENT, the family unchanged), stored with its place in that order,
 * the metric's and the family's state written, and when the window made the
 * decision final the decision is recorded with its RolloutDecision in the
 * outbox. The runtime publishes the outbox after the commit: a canary killed
 * anywhere in between records and publishes each decision once.
 */
#include "canary_service.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canary.h"
#include "canary_door.h"
#include "canary_store.h"
#include "perfwatch/v1/canary.pb-c.h"
#include "pw_time.h"
#include "pw_topics.h"

#define SVC "canary"
#define WINDOW_TYPE "perfwatch.v1.CanaryWindow"

typedef struct app {
	pw_service *svc;
	const pw_log *lg;
	pw_canary_params params;
	pw_metric *m_windows;   /* counter windows{outcome} */
	pw_metric *m_decisions; /* counter decisions{decision} */
	pw_metric *m_replays;   /* counter families rebuilt from PostgreSQL */
	pw_metric *m_pins_expired; /* counter pins whose expiry was reported */
	pw_metric *m_pins_live;    /* gauge pins in force */
	canary_pin *expired;       /* the tick's work space (main thread only) */
} app;

#define PINS_PER_TICK 16

/* A family in a worker's memory. */
typedef struct fam {
	char rollout_id[PW_CANARY_NAME_MAX + 1], family[PW_CANARY_NAME_MAX + 1];
	pw_canary_family f;
	bool valid; /* f holds exactly the stored windows */
} fam;

struct pw_canary_families {
	fam *fams;
	size_t n, cap;
};

typedef struct worker {
	app *a;
	pw_service_worker *w;
	pw_canary_families *fs;
} worker;

const pw_conf_key pw_canary_keys[] = {
	{.name = "canary.alpha", .type = PW_CONF_DOUBLE, .def = "0.05", .min = 1e-6, .max = 0.5,
	 .help = "1 - the time-uniform coverage of every sequence: a false rollback or promotion per metric at most this often"},
	{.name = "canary.mde.tpu_pct", .type = PW_CONF_DOUBLE, .def = "1", .min = 0.01, .max = 100,
	 .help = "percent: a TPU family is promoted when every metric is shown worse by less than this"},
	{.name = "canary.mde.gpu_pct", .type = PW_CONF_DOUBLE, .def = "2", .min = 0.01, .max = 100,
	 .help = "percent: the same for a GPU family (the canary owns the 1-4% band there, section 4.5)"},
	{.name = "canary.mde.families", .type = PW_CONF_STRING, .def = "",
	 .help = "per-family MDE overrides, \"family=percent,family=percent\""},
	{.name = "canary.tolerance.frac", .type = PW_CONF_DOUBLE, .def = "0.5", .min = 0, .max = 0.99,
	 .help = "a family is rolled back when a metric is shown worse by more than this fraction of its MDE"},
	{.name = "canary.pilot.windows", .type = PW_CONF_INT, .def = "12", .min = 2, .max = 10000,
	 .help = "windows per metric that set the sequence's scale before any decision (12: an hour of 5 min)"},
	{.name = "canary.horizon", .type = PW_CONF_DURATION_MS, .def = "48h", .min = 60000, .max = 2592000000.0,
	 .help = "a family still undecided when its windows span this stays HOLD, final and inconclusive"},
	{.name = "canary.pin.check_interval", .type = PW_CONF_DURATION_MS, .def = "10s", .min = 100, .max = 3600000,
	 .help = "how often the canary looks for pins (gate waivers pinning a family to N-1) whose expiry passed, and reports each once"},
};
const size_t pw_canary_nkeys = sizeof pw_canary_keys / sizeof pw_canary_keys[0];

size_t pw_canary_app_size(void)
{
	return sizeof(app);
}

pw_status pw_canary_init(pw_service *svc, void **out, char *errbuf, size_t errlen)
{
	app *a = *out;
	a->svc = svc;
	a->lg = pw_service_log(svc);
	const pw_config *cf = pw_service_config(svc);
	pw_canary_params *p = &a->params;
	pw_canary_params_default(p);
	p->alpha = pw_config_get_double(cf, "canary.alpha");
	p->mde_tpu_pct = pw_config_get_double(cf, "canary.mde.tpu_pct");
	p->mde_gpu_pct = pw_config_get_double(cf, "canary.mde.gpu_pct");
	p->tolerance_frac = pw_config_get_double(cf, "canary.tolerance.frac");
	p->pilot_windows = (size_t)pw_config_get_int(cf, "canary.pilot.windows");
	p->horizon_us = pw_config_get_duration_ms(cf, "canary.horizon") * 1000;
	pw_status st = pw_canary_params_family_mde(p, pw_config_get_str(cf, "canary.mde.families"), errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_metrics *reg = pw_service_metrics(svc);
	st = pw_metrics_counter(reg, "perfwatch_canary_windows_total", "canary windows read, by outcome",
	                        (const char *const[]){"outcome", NULL}, &a->m_windows, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_counter(reg, "perfwatch_canary_decisions_total",
		                        "final decisions recorded, by decision (HOLD: inconclusive after the horizon)",
		                        (const char *const[]){"decision", NULL}, &a->m_decisions, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_counter(reg, "perfwatch_canary_replays_total",
		                        "families rebuilt by replaying their stored windows", NULL, &a->m_replays, errbuf,
		                        errlen);
	if (st == PW_OK)
		st = pw_metrics_counter(reg, "perfwatch_canary_pins_expired_total",
		                        "pins (gate waivers keeping a family on N-1) whose expiry passed, each reported once "
		                        "(PIN_EXPIRED on perf.rollouts.v1)",
		                        NULL, &a->m_pins_expired, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_gauge(reg, "perfwatch_canary_pins_in_force",
		                      "pins in force now: families kept on N-1 by a gate waiver", NULL, &a->m_pins_live,
		                      errbuf, errlen);
	if (st == PW_OK && !(a->expired = calloc(PINS_PER_TICK, sizeof *a->expired)))
		st = PW_ERR_NOMEM;
	return st;
}

pw_status pw_canary_worker_init(void *p, pw_service_worker *w, char *errbuf, size_t errlen)
{
	(void)errbuf;
	(void)errlen;
	if (w->input < 0) {
		w->ctx = p; /* the main thread only publishes the outbox */
		return PW_OK;
	}
	worker *k = calloc(1, sizeof *k);
	if (!k || !(k->fs = pw_canary_families_new())) {
		free(k);
		return PW_ERR_NOMEM;
	}
	k->a = p;
	k->w = w;
	w->ctx = k;
	return PW_OK;
}

void pw_canary_worker_release(void *p, pw_service_worker *w)
{
	(void)p;
	if (w->input < 0) {
		w->ctx = NULL;
		return;
	}
	worker *k = w->ctx;
	if (k)
		pw_canary_families_free(k->fs);
	free(k);
	w->ctx = NULL;
}

pw_canary_families *pw_canary_families_new(void)
{
	return calloc(1, sizeof(pw_canary_families));
}

void pw_canary_families_free(pw_canary_families *fs)
{
	if (!fs)
		return;
	for (size_t i = 0; i < fs->n; i++)
		pw_canary_family_release(&fs->fams[i].f);
	free(fs->fams);
	free(fs);
}

/* The worker's entry for (rollout, family), made (invalid) when new; NULL when out of memory. */
static fam *fam_get(pw_canary_families *k, const char *rollout_id, const char *family)
{
	for (size_t i = 0; i < k->n; i++)
		if (strcmp(k->fams[i].rollout_id, rollout_id) == 0 && strcmp(k->fams[i].family, family) == 0)
			return &k->fams[i];
	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 16;
		fam *f = realloc(k->fams, cap * sizeof *f);
		if (!f)
			return NULL;
		k->fams = f;
		k->cap = cap;
	}
	fam *e = &k->fams[k->n++];
	memset(e, 0, sizeof *e);
	snprintf(e->rollout_id, sizeof e->rollout_id, "%s", rollout_id);
	snprintf(e->family, sizeof e->family, "%s", family);
	return e;
}

/* Rebuilds e from the stored windows, with the options stored in row. */
static pw_status fam_rebuild(pw_pg *pg, const pw_log *lg, pw_metric *m_replays, fam *e, const canary_family_row *row,
                             char *errbuf, size_t errlen)
{
	pw_canary_family_release(&e->f);
	e->valid = false;
	pw_status st = pw_canary_family_init(&e->f, row->alpha, row->mde_pct, row->tolerance_pct, (size_t)row->pilot_windows,
	                                     row->horizon_s * 1000000);
	if (st != PW_OK)
		return pw_fail(st == PW_ERR_NOMEM ? st : PW_ERR_CONFIG, errbuf, errlen,
		               "canary family \"%s/%s\": its stored options are refused (%s)", e->rollout_id, e->family,
		               pw_strerror(st));
	int64_t n = 0;
	if (row->windows > 0) {
		if ((st = canary_store_replay(pg, e->rollout_id, e->family, &e->f, &n, errbuf, errlen)) != PW_OK)
			return st;
		pw_metric_inc(m_replays, NULL);
		pw_log_info(lg, "canary family \"%s/%s\" rebuilt from %" PRId64 " stored windows: %s%s", e->rollout_id,
		            e->family, n, pw_canary_decision_name(e->f.decision), e->f.inconclusive ? " (inconclusive)" : "");
	}
	if (n != row->windows)
		return pw_fail(PW_ERR_PG, errbuf, errlen, "canary family \"%s/%s\": %" PRId64 " windows replayed, %" PRId64 " counted",
		               e->rollout_id, e->family, n, row->windows);
	e->valid = true;
	return PW_OK;
}

static Perfwatch__V1__CanaryMetric metric_proto(pw_canary_metric m)
{
	return (Perfwatch__V1__CanaryMetric)(m + 1);
}

static Perfwatch__V1__RolloutDecisionKind decision_proto(pw_canary_decision d)
{
	switch (d) {
	case PW_CANARY_PROMOTE: return PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_PROMOTE;
	case PW_CANARY_ROLLBACK: return PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_ROLLBACK;
	case PW_CANARY_HOLD: break;
	}
	return PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_HOLD;
}

/* The packed RolloutDecision of final family f, decided by window w; *out malloc'ed. */
static pw_status decision_pack(const Perfwatch__V1__CanaryWindow *w, const pw_canary_family *f, uint8_t **out,
                               size_t *len)
{
	Perfwatch__V1__RolloutDecision d = PERFWATCH__V1__ROLLOUT_DECISION__INIT;
	d.rollout_id = w->rollout_id;
	d.family = w->family;
	d.decision = decision_proto(f->decision);
	d.metric = metric_proto(f->metric);
	d.effect_pct = f->decided.effect_pct;
	d.lo_pct = f->decided.lo_pct;
	d.hi_pct = f->decided.hi_pct;
	d.windows = (uint32_t)f->decided.n_windows;
	d.decided_window_start_unix_us = f->decided_start_us;
	d.release = w->release;
	d.previous_release = w->previous_release;
	d.rollback_artifact = f->decision == PW_CANARY_ROLLBACK ? w->previous_artifact : "";
	d.inconclusive = f->inconclusive;
	d.decided_unix_us = pw_now_us();
	d.alpha = f->alpha;
	d.mde_pct = f->mde_pct;
	d.tolerance_pct = f->tolerance_pct;
	d.family_windows = (uint32_t)f->windows;
	*len = perfwatch__v1__rollout_decision__get_packed_size(&d);
	*out = malloc(*len + 1);
	if (!*out)
		return PW_ERR_NOMEM;
	perfwatch__v1__rollout_decision__pack(&d, *out);
	return PW_OK;
}

/* The packed RolloutDecision of a pin: PINNED (rollout_id, the family's releases) or PIN_EXPIRED. */
static pw_status pin_pack(Perfwatch__V1__RolloutDecisionKind kind, const char *rollout_id, const char *family,
                          const char *release, const char *previous_release, const char *artifact,
                          const canary_pin *pin, const pw_canary_family *f, uint8_t **out, size_t *len)
{
	Perfwatch__V1__RolloutDecision d = PERFWATCH__V1__ROLLOUT_DECISION__INIT;
	d.rollout_id = (char *)rollout_id;
	d.family = (char *)family;
	d.decision = kind;
	d.release = (char *)release;
	d.previous_release = (char *)previous_release;
	d.decided_unix_us = pw_now_us();
	if (f) {
		d.alpha = f->alpha;
		d.mde_pct = f->mde_pct;
		d.tolerance_pct = f->tolerance_pct;
		d.family_windows = (uint32_t)f->windows;
	}
	d.pin_waiver_id = (char *)pin->waiver_id;
	d.pinned_release = (char *)pin->pin_release;
	d.pinned_artifact = (char *)artifact;
	d.pin_owner = (char *)pin->owner;
	d.pin_signed_off_by = (char *)pin->signed_off_by;
	d.pin_expires_unix_us = pin->expires_us;
	*len = perfwatch__v1__rollout_decision__get_packed_size(&d);
	*out = malloc(*len + 1);
	if (!*out)
		return PW_ERR_NOMEM;
	perfwatch__v1__rollout_decision__pack(&d, *out);
	return PW_OK;
}

#define TAKEN PW_CANARY_TAKEN
#define DUPLICATE PW_CANARY_DUPLICATE
#define OUT_OF_ORDER PW_CANARY_OUT_OF_ORDER
#define CONFLICTING PW_CANARY_CONFLICTING
#define MISMATCHED PW_CANARY_MISMATCHED

pw_status pw_canary_take(pw_canary_families *fs, pw_pg *pg, const char *service, const pw_canary_params *params,
                         const pw_log *lg,
                         pw_metric *m_replays, pw_metric *m_decisions, const Perfwatch__V1__CanaryWindow *w,
                         pw_canary_outcome *oc, char *detail, size_t dlen, char *errbuf, size_t errlen)
{
	*oc = TAKEN;
	pw_canary_metric m = (pw_canary_metric)(w->metric - 1);
	bool gpu = strcmp(w->family_kind, "gpu") == 0;
	double mde = pw_canary_mde_pct(params, w->family, gpu);
	fam *e = fam_get(fs, w->rollout_id, w->family);
	if (!e)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for family \"%s/%s\"", w->rollout_id, w->family);
	uint8_t *buf = NULL;
	size_t len = 0;
	pw_status st = pw_pg_begin(pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	canary_family_row row;
	bool found = false;
	double c0 = 0, b0 = 0;
	uint32_t ws0 = 0;
	if ((st = canary_store_family_lock(pg, w, params->alpha, mde, params->tolerance_frac * mde,
	                                   (int64_t)params->pilot_windows, params->horizon_us / 1000000, &row, errbuf,
	                                   errlen)) != PW_OK ||
	    (st = canary_store_window_get(pg, w, &found, &c0, &b0, &ws0, errbuf, errlen)) != PW_OK)
		goto fail;
	if (found) {
		/* a redelivery: the same numbers are the same window; other numbers are a conflict */
		if (c0 == w->canary_value && b0 == w->baseline_value && ws0 == w->window_s) {
			*oc = DUPLICATE;
		} else {
			*oc = CONFLICTING;
			snprintf(detail, dlen,
			         "window %s of \"%s/%s\" at %" PRId64 " is stored with canary %.17g, baseline %.17g, %u s; "
			         "this one says %.17g, %.17g, %u s",
			         pw_canary_metric_name(m), w->rollout_id, w->family, w->window_start_unix_us, c0, b0, ws0,
			         w->canary_value, w->baseline_value, w->window_s);
		}
		pw_pg_rollback(pg, NULL, 0);
		return PW_OK;
	}
	if (strcmp(row.release, w->release) != 0 || strcmp(row.previous_release, w->previous_release) != 0 ||
	    strcmp(row.previous_artifact, w->previous_artifact) != 0 || strcmp(row.family_kind, w->family_kind) != 0) {
		/* one rollout of one family compares one pair of releases, and rolls back to one artifact */
		*oc = MISMATCHED;
		snprintf(detail, dlen,
		         "window %s of \"%s/%s\" says %s \"%s\" against \"%s\" (N-1 artifact \"%s\"); the family is "
		         "stored as %s \"%s\" against \"%s\" (\"%s\")",
		         pw_canary_metric_name(m), w->rollout_id, w->family, w->family_kind, w->release, w->previous_release,
		         w->previous_artifact, row.family_kind, row.release, row.previous_release, row.previous_artifact);
		pw_pg_rollback(pg, NULL, 0);
		return PW_OK;
	}
	if (!e->valid || (int64_t)e->f.windows != row.windows)
		if ((st = fam_rebuild(pg, lg, m_replays, e, &row, errbuf, errlen)) != PW_OK)
			goto fail;
	/* the family's pin (docs/canary.md "Pins"): looked up while no decision is recorded */
	canary_pin pin;
	bool live = false;
	if (!row.final && (st = canary_store_pin_live(pg, w->release, w->family, &live, &pin, errbuf, errlen)) != PW_OK)
		goto fail;
	pw_canary_pin_state ps = {
		.decision_recorded = row.final,
		.pinned = row.pinned,
		.pin_expired = row.pin_expired,
		.live = live,
		.live_is_recorded = live && strcmp(pin.waiver_id, row.pin_waiver_id) == 0,
	};
	pw_canary_pin_action pa = pw_canary_pin_step(&ps);
	const char *pin_artifact = live && pin.pin_artifact[0] ? pin.pin_artifact : w->previous_artifact;
	bool was_final = e->f.final;
	int64_t last = e->f.m[m].last_start_us;
	st = pw_canary_family_add(&e->f, m, w->window_start_unix_us, w->window_s, w->canary_value, w->baseline_value,
	                          NULL);
	if (st == PW_ERR_CONFLICT) {
		*oc = OUT_OF_ORDER;
		snprintf(detail, dlen,
		         "window %s of \"%s/%s\" starts at %" PRId64 ", not after the last one taken (%" PRId64 ")%s",
		         pw_canary_metric_name(m), w->rollout_id, w->family, w->window_start_unix_us, last,
		         was_final ? "; the rollout is closed for this family" : "");
		pw_pg_rollback(pg, NULL, 0);
		return PW_OK;
	}
	if (st != PW_OK) {
		pw_fail(st, errbuf, errlen, "adding a window to \"%s/%s\": %s", w->rollout_id, w->family, pw_strerror(st));
		goto fail;
	}
	e->valid = false; /* ahead of PostgreSQL until the commit */
	/* a decision the rule reached is recorded unless a pin holds the family
	 * (then at the first window after the pin's expiry is reported) */
	bool decided = e->f.final && !row.final && pa == PW_CANARY_PIN_NONE;
	bool pinned_now = false;
	if (decided && (st = decision_pack(w, &e->f, &buf, &len)) != PW_OK) {
		pw_fail(st, errbuf, errlen, "packing the decision of \"%s/%s\"", w->rollout_id, w->family);
		goto fail;
	}
	if (pa == PW_CANARY_PIN_RECORD) {
		if ((st = pin_pack(PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_PINNED, w->rollout_id, w->family,
		                   w->release, w->previous_release, pin_artifact, &pin, &e->f, &buf, &len)) != PW_OK) {
			pw_fail(st, errbuf, errlen, "packing the pin of \"%s/%s\"", w->rollout_id, w->family);
			goto fail;
		}
		if ((st = canary_store_pin_put(pg, service, w->rollout_id, w->family, &pin, pin_artifact, buf, len,
		                               &pinned_now, errbuf, errlen)) != PW_OK)
			goto fail;
	}
	if ((st = canary_store_window_put(pg, w, (int64_t)e->f.windows, errbuf, errlen)) != PW_OK ||
	    (st = canary_store_metric_put(pg, w->rollout_id, w->family, m, &e->f.m[m], errbuf, errlen)) != PW_OK ||
	    (st = canary_store_family_put(pg, service, w->rollout_id, w->family, &e->f, decided,
	                                  e->f.decision == PW_CANARY_ROLLBACK ? w->previous_artifact : NULL, buf, len,
	                                  errbuf, errlen)) != PW_OK ||
	    (st = pw_pg_commit(pg, errbuf, errlen)) != PW_OK)
		goto fail;
	e->valid = true;
	if (pinned_now) {
		pw_metric_inc(m_decisions, (const char *const[]){"PINNED"});
		pw_log_info(lg,
		            "canary \"%s/%s\": PINNED to N-1 %s (%s) by waiver \"%s\" of %s, owner %s, signed off by %s, "
		            "until %" PRId64 " (unix us): not promoted while the pin lasts",
		            w->rollout_id, w->family, pin.pin_release, pin_artifact, pin.waiver_id, pin.release_id, pin.owner,
		            pin.signed_off_by, pin.expires_us);
	}
	if (decided) {
		const pw_canary_family *f = &e->f;
		pw_metric_inc(m_decisions, (const char *const[]){pw_canary_decision_name(f->decision)});
		pw_log_info(lg,
		            "canary \"%s/%s\": %s%s on %s %+.3f%% [%+.3f%%, %+.3f%%] after %zu windows (%zu of every metric)%s%s",
		            w->rollout_id, w->family, pw_canary_decision_name(f->decision), f->inconclusive ? " (inconclusive)" : "",
		            pw_canary_metric_name(f->metric), f->decided.effect_pct, f->decided.lo_pct, f->decided.hi_pct,
		            f->decided.n_windows, f->windows, f->decision == PW_CANARY_ROLLBACK ? "; pointer flips to " : "",
		            f->decision == PW_CANARY_ROLLBACK ? w->previous_artifact : "");
	}
	free(buf);
	return PW_OK;
fail:
	pw_pg_rollback(pg, NULL, 0);
	e->valid = false;
	free(buf);
	return st;
}

static const char *outcome_name(pw_canary_outcome oc)
{
	switch (oc) {
	case TAKEN: return "taken";
	case DUPLICATE: return "duplicate";
	case OUT_OF_ORDER: return "dead_letter";
	case CONFLICTING: return "dead_letter";
	case MISMATCHED: return "dead_letter";
	}
	return "unknown";
}

pw_status pw_canary_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf, size_t errlen)
{
	worker *k = ctx;
	app *a = k->a;
	pw_status st = PW_OK;
	for (size_t i = 0; i < n && st == PW_OK; i++) {
		const rd_kafka_message_t *m = msgs[i];
		Perfwatch__V1__CanaryWindow *w = NULL;
		char detail[512];
		Perfwatch__V1__DlqReason reason = pw_canary_window_decode(m->payload, m->len, &w, detail, sizeof detail);
		const char *outcome = "dead_letter";
		if (reason != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) {
			st = pw_service_dead_letter(k->w, m, WINDOW_TYPE, reason, detail, errbuf, errlen);
			pw_log_warn(a->lg, "canary window dead-lettered: %s", detail);
		} else {
			pw_canary_outcome oc;
			st = pw_canary_take(k->fs, k->w->pg, SVC, &a->params, a->lg, a->m_replays, a->m_decisions, w, &oc, detail,
			                    sizeof detail, errbuf, errlen);
			if (st == PW_OK && oc != TAKEN && oc != DUPLICATE) {
				reason = oc == CONFLICTING ? PERFWATCH__V1__DLQ_REASON__DLQ_REASON_CONFLICT
				                           : PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT;
				st = pw_service_dead_letter(k->w, m, WINDOW_TYPE, reason, detail, errbuf, errlen);
				pw_log_warn(a->lg, "canary window dead-lettered: %s", detail);
			} else if (st != PW_OK && !pw_service_retriable(st)) {
				char why[512];
				snprintf(why, sizeof why, "%s", errbuf);
				st = pw_service_dead_letter(k->w, m, WINDOW_TYPE, pw_service_failure_reason(st), why, errbuf, errlen);
			} else {
				outcome = outcome_name(oc);
			}
		}
		perfwatch__v1__canary_window__free_unpacked(w, NULL);
		if (st == PW_OK)
			pw_metric_inc(a->m_windows, (const char *const[]){outcome});
	}
	return st;
}

/*
 * The tick (main thread, every canary.pin.check_interval): each pin whose
 * expiry passed and is not reported yet is reported once — in one
 * transaction its perfwatch.pin_expiries row is claimed, the PINNED of every
 * rollout of its family and release ends, and a PIN_EXPIRED per such
 * rollout (one with no rollout when the canary never saw the family) goes
 * into the outbox; after the commit an error line and the counter. A killed
 * canary finds the pin reported, or not at all, and reports it then.
 */
pw_status pw_canary_tick(void *ctx, pw_service_worker *mw, int64_t *next_ms, char *errbuf, size_t errlen)
{
	(void)next_ms;
	app *a = ctx;
	pw_pg *pg = mw->pg;
	size_t n = 0;
	int64_t in_force = 0;
	pw_status st = canary_store_pins_expired(pg, a->expired, PINS_PER_TICK, &n, errbuf, errlen);
	for (size_t i = 0; i < n && st == PW_OK && !pw_service_stopping(mw->svc); i++) {
		const canary_pin *pin = &a->expired[i];
		bool claimed = false;
		PGresult *res = NULL;
		int rollouts = 0;
		uint8_t *buf = NULL;
		size_t len = 0;
		if ((st = pw_pg_begin(pg, errbuf, errlen)) != PW_OK)
			break;
		if ((st = canary_store_pin_expire(pg, pin, &claimed, &res, errbuf, errlen)) != PW_OK || !claimed)
			goto done;
		for (int r = 0; r < PQntuples(res) && st == PW_OK; r++) {
			if (PQgetisnull(res, r, 1))
				continue;
			char ref[2 * PW_CANARY_PIN_TEXT_MAX + 32];
			snprintf(ref, sizeof ref, "%s/%s#pin-expired", PQgetvalue(res, r, 1), pin->family);
			st = pin_pack(PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_PIN_EXPIRED, PQgetvalue(res, r, 1),
			              pin->family, PQgetvalue(res, r, 2), PQgetvalue(res, r, 3), PQgetvalue(res, r, 4), pin,
			              NULL, &buf, &len);
			if (st == PW_OK)
				st = canary_store_rollout_out(pg, SVC, PQgetvalue(res, r, 1), pin->family, ref, buf, len, errbuf,
				                              errlen);
			free(buf);
			buf = NULL;
			rollouts++;
		}
		if (st == PW_OK && rollouts == 0) {
			/* the canary never saw the family under this release: the pin's end said once, without a rollout */
			char ref[2 * PW_CANARY_PIN_TEXT_MAX + 32];
			snprintf(ref, sizeof ref, "%s/%s#pin-expired", pin->release_id, pin->family);
			st = pin_pack(PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_PIN_EXPIRED, "", pin->family,
			              pin->release_id, pin->pin_release, pin->pin_artifact, pin, NULL, &buf, &len);
			if (st == PW_OK)
				st = canary_store_rollout_out(pg, SVC, "", pin->family, ref, buf, len, errbuf, errlen);
			free(buf);
		}
		if (st == PW_OK)
			st = pw_pg_commit(pg, errbuf, errlen);
	done:
		PQclear(res);
		if (st != PW_OK || !claimed) {
			pw_pg_rollback(pg, NULL, 0);
			continue;
		}
		pw_metric_inc(a->m_pins_expired, NULL);
		pw_log_error(a->lg,
		             "pin expired: \"%s\" is no longer pinned to N-1 %s for release %s (waiver \"%s\", owner %s, "
		             "signed off by %s, expired at %" PRId64 " unix us; %d canary rollouts told on perf.rollouts.v1): "
		             "the family must take %s or get a new waiver",
		             pin->family, pin->pin_release, pin->release_id, pin->waiver_id, pin->owner, pin->signed_off_by,
		             pin->expires_us, rollouts, pin->release_id);
	}
	if (st == PW_OK && (st = canary_store_pins_live_count(pg, &in_force, errbuf, errlen)) == PW_OK)
		pw_metric_set(a->m_pins_live, NULL, (double)in_force);
	return st;
}

void pw_canary_release(void *ctx)
{
	app *a = ctx;
	free(a->expired);
	a->expired = NULL;
}
