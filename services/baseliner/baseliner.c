/*
 * baseliner.c: one batch of the baseliner service. See baseliner.h; the
 * decisions are baseline.c's, the table series_table.c's, the I/O
 * baseliner_store.c's.
 */
#include "baseliner.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfwatch/v1/dlq.pb-c.h"
#include "perfwatch/v1/fleet.pb-c.h"
#include "perfwatch/v1/series.pb-c.h"
#include "pw_dlq.h"
#include "pw_enums.h"
#include "pw_time.h"
#include "pw_topics.h"

static void cache_mark(pw_baseliner *b, pw_series_entry *e, bool dirty);

static void m_inc(pw_metric *m, const char *label)
{
	if (!m)
		return;
	if (label)
		pw_metric_inc(m, (const char *[]){label});
	else
		pw_metric_inc(m, NULL);
}

pw_status pw_baseliner_metrics_register(pw_metrics *reg, pw_baseliner_metrics *m,
                                        char *errbuf, size_t errlen)
{
	static const char *const outcome[] = {"outcome", NULL};
	static const char *const path[] = {"path", NULL};
	static const double buckets[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
	pw_status st;
	memset(m, 0, sizeof *m);
#define REG(call)                    \
	do {                             \
		st = (call);                 \
		if (st != PW_OK)             \
			return st;               \
	} while (0)
	REG(pw_metrics_counter(reg, "perfwatch_baseliner_points_total",
	                       "series points consumed, by what became of them", outcome, &m->points,
	                       errbuf, errlen));
	REG(pw_metrics_counter(reg, "perfwatch_baseliner_fleet_changes_total",
	                       "fleet-change events consumed", NULL, &m->fleet_changes, errbuf, errlen));
	REG(pw_metrics_counter(reg, "perfwatch_baseliner_fleet_wide_changes_total",
	                       "fleet-change events with fleet_wide set and no selector (every "
	                       "series frozen): alert on any increase", NULL, &m->fleet_wide_changes,
	                       errbuf, errlen));
	REG(pw_metrics_counter(reg, "perfwatch_baseliner_baseline_updates_total",
	                       "new baseline versions stored and published", NULL, &m->updates, errbuf,
	                       errlen));
	REG(pw_metrics_counter(reg, "perfwatch_baseliner_freezes_total",
	                       "series frozen by a fleet change", NULL, &m->freezes, errbuf, errlen));
	REG(pw_metrics_counter(reg, "perfwatch_baseliner_unfreezes_total",
	                       "freezes ended by a completed re-baseline", NULL, &m->unfreezes, errbuf,
	                       errlen));
	REG(pw_metrics_counter(reg, "perfwatch_baseliner_quarantines_total",
	                       "series quarantined (sigma above 2x the platform norm)", NULL,
	                       &m->quarantines, errbuf, errlen));
	REG(pw_metrics_counter(reg, "perfwatch_baseliner_outliers_total",
	                       "points beyond outlier_k sigma, raised as infra-health alerts", NULL,
	                       &m->outliers, errbuf, errlen));
	REG(pw_metrics_counter(reg, "perfwatch_baseliner_excursion_points_total",
	                       "outliers continuing an excursion (same side, no in-band point measured "
	                       "between): kept out without an alert of their own", NULL,
	                       &m->excursion_points, errbuf, errlen));
	REG(pw_metrics_counter(reg, "perfwatch_baseliner_redis_fallbacks_total",
	                       "Redis failures answered from or deferred to PostgreSQL", path,
	                       &m->redis_fallbacks, errbuf, errlen));
	REG(pw_metrics_counter(reg, "perfwatch_baseliner_dead_letters_total",
	                       "messages sent to perf.dlq.v1", NULL, &m->dead_letters, errbuf, errlen));
	REG(pw_metrics_histogram(reg, "perfwatch_baseliner_batch_seconds",
	                         "time to process, store, publish and commit one batch", NULL,
	                         buckets, sizeof buckets / sizeof buckets[0], &m->batch_seconds,
	                         errbuf, errlen));
	REG(pw_metrics_gauge(reg, "perfwatch_baseliner_series", "series held in memory", NULL,
	                     &m->series, errbuf, errlen));
	REG(pw_metrics_counter(reg, "perfwatch_baseliner_rebaseline_jobs_total",
	                       "re-baseline jobs (BisectJob purpose REBASELINE) a freeze asked the "
	                       "executor for", NULL, &m->rebaseline_jobs, errbuf, errlen));
	static const char *const action[] = {"action", NULL};
	REG(pw_metrics_counter(reg, "perfwatch_baseliner_changepoints_total",
	                       "changepoints consumed, by what the baseliner did with them (track, "
	                       "withdraw, ignore, invalid)", action, &m->changepoints, errbuf, errlen));
	REG(pw_metrics_counter(reg, "perfwatch_baseliner_accepted_shifts_total",
	                       "shifts accepted (re-baselined from the shift), found fixed, or "
	                       "waived / triaged true with no shift in the nightlies (not_shifted)",
	                       outcome, &m->accepted_shifts, errbuf, errlen));
#undef REG
	return PW_OK;
}

void pw_baseliner_init(pw_baseliner *b)
{
	memset(&b->sc, 0, sizeof b->sc);
	b->need_known = true;
	b->dirty = 0;
	b->redis_lost = false;
	b->cache_pending = NULL;
	b->batches = b->points = b->updates = b->freezes = b->unfreezes = 0;
	b->quarantines = b->outliers = b->excursion_points = 0;
	b->outliers_unconfirmed = b->outliers_reclassified = 0;
	b->outlier_seq = 0;
	b->rebaseline_request = true;
	b->accept_after_nightlies = 7;
	b->rebaseline_jobs = 0;
	b->recent = NULL;
	b->fw = NULL;
	b->signal_overlap_us = 24LL * 3600 * 1000000;
}

static void cache_settle(pw_baseliner *b);

void pw_baseliner_cache_settle(pw_baseliner *b)
{
	if (b->rd)
		cache_settle(b);
}

void pw_baseliner_release(pw_baseliner *b)
{
	if (!b)
		return;
	pw_baseliner_cache_settle(b);
	free(b->sc.rec);
	free(b->sc.rec_fresh);
	free(b->sc.alerts);
	free(b->recent);
	b->recent = NULL;
	free(b->sc.excursions);
	memset(&b->sc, 0, sizeof b->sc);
}

/* ------------------------------------------------------------- scratch */

/* A record to publish and store (version 0 only publishes), as a new version when fresh. */
static pw_baseline_record *push_rec(pw_baseliner *b, bool fresh)
{
	pw_baseliner_scratch *sc = &b->sc;
	if (sc->nrec == sc->caprec) {
		size_t cap = sc->caprec ? 2 * sc->caprec : 256;
		pw_baseline_record *r = realloc(sc->rec, cap * sizeof *r);
		if (!r)
			return NULL;
		sc->rec = r;
		bool *f = realloc(sc->rec_fresh, cap * sizeof *f);
		if (!f)
			return NULL;
		sc->rec_fresh = f;
		sc->caprec = cap;
	}
	sc->rec_fresh[sc->nrec] = fresh;
	return &sc->rec[sc->nrec++];
}

/* Appends a zeroed element of size bytes to *arr (n used, cap allocated). */
static void *scratch_push(void **arr, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 32;
		void *a = realloc(*arr, c * size);
		if (!a)
			return NULL;
		*arr = a;
		*cap = c;
	}
	void *el = (char *)*arr + (*n)++ * size;
	memset(el, 0, size);
	return el;
}

static pw_bstore_alert *push_alert(pw_baseliner *b)
{
	pw_baseliner_scratch *sc = &b->sc;
	return scratch_push((void **)&sc->alerts, &sc->nalerts, &sc->capalerts, sizeof *sc->alerts);
}

static pw_bstore_excursion *push_excursion(pw_baseliner *b)
{
	pw_baseliner_scratch *sc = &b->sc;
	return scratch_push((void **)&sc->excursions, &sc->nexcursions, &sc->capexcursions,
	                    sizeof *sc->excursions);
}

/* ------------------------------------------------------------ messages */

static pw_status dead_letter(pw_baseliner *b, const rd_kafka_message_t *msg,
                             Perfwatch__V1__DlqReason reason, const char *payload_type,
                             const char *detail, char *errbuf, size_t errlen)
{
	pw_dlq_source src;
	pw_dlq_source_from_message(&src, msg, "baseliner", payload_type);
	pw_status st = pw_dlq_record(b->pg, b->prod, &src, reason, detail, pw_now_us(), 1000, errbuf, errlen);
	if (st == PW_OK) {
		m_inc(b->m ? b->m->dead_letters : NULL, NULL);
		pw_log_warn(b->lg, "dead-lettered %s message at %s[%d]@%" PRId64 ": %s", payload_type,
		            rd_kafka_topic_name(msg->rkt), (int)msg->partition, msg->offset, detail);
	}
	return st;
}

static void key_platform(const char *key, char *out, size_t len)
{
	/* model/hlo/platform/... : the third component */
	const char *p = key;
	for (int i = 0; i < 2 && p; i++) {
		p = strchr(p, '/');
		if (p)
			p++;
	}
	out[0] = '\0';
	if (!p)
		return;
	const char *end = strchr(p, '/');
	size_t n = end ? (size_t)(end - p) : strlen(p);
	if (n >= len)
		n = len - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* The entry of a series, loaded from PostgreSQL when it is not yet. */
static pw_status entry_ready(pw_baseliner *b, const char *key, int64_t series_id,
                             pw_series_entry **out, char *errbuf, size_t errlen)
{
	char platform[PW_ST_ENV_MAX];
	key_platform(key, platform, sizeof platform);
	bool created = false;
	pw_status st = pw_series_table_get(b->table, key,
	                                   pw_series_platform_is_gpu(platform, b->gpu_prefixes), out,
	                                   &created);
	if (st != PW_OK)
		return pw_fail(st, errbuf, errlen, "series table: cannot hold series \"%s\": %s", key,
		               pw_strerror(st));
	if (series_id > 0)
		(*out)->series_id = series_id;
	if (!(*out)->loaded) {
		st = pw_bstore_load_series(b->pg, *out, NULL, errbuf, errlen);
		if (st != PW_OK)
			return st;
	}
	return PW_OK;
}

static void quarantine_reason(const pw_series_entry *e, const pw_baseline_record *r, char *buf,
                              size_t len)
{
	snprintf(buf, len, "quarantined: sigma %.3g%% exceeds %.3g x the platform norm %.3g%%",
	         r->sigma_pct, e->bs.params.quarantine_factor, r->platform_norm_sigma_pct);
}

static void fill_alert_common(pw_bstore_alert *a, const pw_series_entry *e, int64_t now)
{
	a->created_us = now;
	a->series_id = e->series_id;
	snprintf(a->series_key, sizeof a->series_key, "%s", e->key);
}

/* The model of a series key "model/hlo/platform/config/metric". */
static void key_model(const char *key, char *out, size_t len)
{
	const char *end = strchr(key, '/');
	size_t n = end ? (size_t)(end - key) : strlen(key);
	if (n >= len)
		n = len - 1;
	memcpy(out, key, n);
	out[n] = '\0';
}

/* The outlier alert's summary, from its cause (first_signal.h). */
static void outlier_summary(pw_bstore_alert *a)
{
	const char *side = a->value >= a->base.median ? "above" : "below";
	if (pw_signal_cause_is_infra((pw_signal_cause)a->cause))
		snprintf(a->summary, sizeof a->summary,
		         "infra outlier on %.200s: run %.64s at %.6g is %.1f sigma %s the baseline median "
		         "%.6g (%s: %.150s); kept out of the window",
		         a->series_key, a->run_id, a->value, a->z, side, a->base.median,
		         pw_signal_cause_name((pw_signal_cause)a->cause), a->evidence);
	else
		snprintf(a->summary, sizeof a->summary,
		         "unconfirmed outlier on %.200s: run %.64s at %.6g is %.1f sigma %s the baseline median "
		         "%.6g; no fleet change, environment change or fleet-wide group explains it: the "
		         "first point of a shift or a one-off, to confirm by a rerun or the next nightly; "
		         "kept out of the window",
		         a->series_key, a->run_id, a->value, a->z, side, a->base.median);
}

/* Makes a an infra outlier of a fleet-wide group (first_signal.h). */
static void set_fleet_wide(pw_bstore_alert *a, size_t models, const pw_point_env *env,
                           int64_t window_us)
{
	a->cause = PW_SIGNAL_FLEET_WIDE;
	snprintf(a->evidence, sizeof a->evidence,
	         "outliers on %zu distinct models on %s/%s within %.3g h", models, env->platform,
	         env->chip_set, (double)window_us / 3.6e9);
	outlier_summary(a);
}

/*
 * The cause of the outlier a on entry e (environment prev before the point,
 * cur its own), measured at ts_us; a fleet-wide group it completes also
 * reclassifies its earlier members: those of this batch in place, committed
 * ones as a new revision (republished).
 */
static pw_status classify_outlier(pw_baseliner *b, pw_bstore_alert *a, const pw_series_entry *e,
                                  const pw_point_env *prev, const pw_point_env *cur,
                                  int64_t ts_us)
{
	a->revision = 1;
	a->tag = ++b->outlier_seq;
	a->measured_us = ts_us;
	a->env = *cur;
	/* a fleet change selecting the series took effect just before the point */
	if (b->fleet) {
		size_t pos = 0;
		const pw_fleet_event *fe = pw_fleet_log_due(b->fleet, &pos, ts_us - b->signal_overlap_us,
		                                            ts_us, prev, cur);
		if (fe) {
			a->cause = PW_SIGNAL_FLEET_CHANGE;
			snprintf(a->fleet_event_id, sizeof a->fleet_event_id, "%s", fe->id);
			snprintf(a->evidence, sizeof a->evidence, "fleet change %s (%s) %.3g h before the point",
			         fe->id, fe->reason, (double)(ts_us - fe->occurred_us) / 3.6e9);
		}
	}
	char diff[192];
	if (!a->cause && pw_signal_env_changed(prev, cur, diff, sizeof diff)) {
		a->cause = PW_SIGNAL_HARNESS_CHANGE;
		snprintf(a->evidence, sizeof a->evidence, "environment changed since the previous point: %s",
		         diff);
	}
	if (!a->cause)
		a->cause = PW_SIGNAL_NONE_FOUND;
	outlier_summary(a);
	if (!b->fw) {
		if (pw_bstore_alert_unconfirmed(a))
			b->outliers_unconfirmed++;
		return PW_OK;
	}
	char model[128];
	key_model(e->key, model, sizeof model);
	uint64_t newly[64];
	size_t nnewly = 0;
	size_t models = pw_fleet_wide_add(b->fw, cur, model, ts_us, a->tag, newly,
	                                  sizeof newly / sizeof newly[0], &nnewly);
	pw_bstore_alert *again = NULL; /* committed members to republish */
	size_t nagain = 0;
	for (size_t i = 0; i < nnewly; i++) {
		pw_bstore_alert *hit = NULL;
		for (size_t k = 0; k < b->sc.nalerts && !hit; k++)
			if (b->sc.alerts[k].outlier && b->sc.alerts[k].tag == newly[i])
				hit = &b->sc.alerts[k];
		if (newly[i] == a->tag)
			hit = a;
		if (hit) {
			if (!pw_signal_cause_is_infra((pw_signal_cause)hit->cause))
				set_fleet_wide(hit, models, cur, b->fw->p.window_us);
			continue;
		}
		const pw_bstore_alert *old = b->recent ? &b->recent[newly[i] % PW_BASELINER_RECENT] : NULL;
		if (!old || old->tag != newly[i] || pw_signal_cause_is_infra((pw_signal_cause)old->cause))
			continue;
		if (!again && !(again = malloc(nnewly * sizeof *again)))
			return PW_ERR_NOMEM;
		pw_bstore_alert *r = &again[nagain++];
		*r = *old;
		r->revision = old->revision + 1;
		set_fleet_wide(r, models, cur, b->fw->p.window_us);
	}
	if (pw_bstore_alert_unconfirmed(a))
		b->outliers_unconfirmed++;
	/* a is not used below: push_alert may move the array it lives in */
	for (size_t i = 0; i < nagain; i++) {
		pw_bstore_alert *r = push_alert(b);
		if (!r) {
			free(again);
			return PW_ERR_NOMEM;
		}
		*r = again[i];
		b->outliers_reclassified++;
	}
	free(again);
	return PW_OK;
}

/*
 * A fleet change that arrived after outliers it explains (measured within
 * signal_overlap_us after it took effect, on series it selects): the
 * unconfirmed ones among the recent outliers become its infra outliers, as a
 * new revision. In-batch ones are changed in place.
 */
static pw_status reclassify_by_fleet(pw_baseliner *b, const char *event_id, const char *reason,
                                     int64_t occurred_us, const pw_fleet_selector *sel)
{
	size_t n0 = b->sc.nalerts;
	for (size_t pass = 0; pass < 2; pass++) {
		size_t count = pass == 0 ? n0 : (b->recent ? PW_BASELINER_RECENT : 0);
		for (size_t i = 0; i < count; i++) {
			pw_bstore_alert *a = pass == 0 ? &b->sc.alerts[i] : &b->recent[i];
			if (!a->outlier || !a->tag || !pw_bstore_alert_unconfirmed(a) ||
			    a->measured_us < occurred_us || a->measured_us > occurred_us + b->signal_overlap_us ||
			    !pw_fleet_selector_match(sel, &a->env))
				continue;
			if (pass == 1) {
				/* committed: republish unless this batch already holds its newer revision */
				bool held = false;
				for (size_t k = 0; k < b->sc.nalerts && !held; k++)
					held = b->sc.alerts[k].tag == a->tag;
				if (held)
					continue;
				pw_bstore_alert copy = *a;
				pw_bstore_alert *r = push_alert(b);
				if (!r)
					return PW_ERR_NOMEM;
				*r = copy;
				r->revision = copy.revision + 1;
				a = r;
				b->outliers_reclassified++;
			}
			a->cause = PW_SIGNAL_FLEET_CHANGE;
			snprintf(a->fleet_event_id, sizeof a->fleet_event_id, "%s", event_id);
			snprintf(a->evidence, sizeof a->evidence,
			         "fleet change %s (%s) took effect %.3g h before the point (reported after it)",
			         event_id, reason ? reason : "",
			         (double)(a->measured_us - occurred_us) / 3.6e9);
			outlier_summary(a);
		}
	}
	return PW_OK;
}

/* After the commit: the batch's outlier alerts join the ring of recent ones. */
static void remember_outliers(pw_baseliner *b)
{
	if (!b->fw)
		return;
	if (!b->recent)
		b->recent = calloc(PW_BASELINER_RECENT, sizeof *b->recent);
	if (!b->recent)
		return; /* only reclassification across batches is lost */
	for (size_t i = 0; i < b->sc.nalerts; i++) {
		const pw_bstore_alert *a = &b->sc.alerts[i];
		if (a->outlier && a->tag)
			b->recent[a->tag % PW_BASELINER_RECENT] = *a;
	}
}

/*
 * Freezes e for event_id (its freezes row, its stored latest version frozen
 * in place through the staged records, the FROZEN message). *did says whether
 * it was a new freeze (false: already frozen by this event).
 */
static pw_status freeze_entry(pw_baseliner *b, pw_series_entry *e, const char *event_id,
                              const char *reason, int64_t since_us, int64_t requested_us,
                              bool accepted_shift, int64_t now, bool *did, char *errbuf,
                              size_t errlen)
{
	*did = pw_series_entry_freeze(e, event_id, reason, since_us);
	if (!*did)
		return PW_OK;
	pw_bstore_freeze fr = {.series_id = e->series_id,
	                       .frozen_version = (uint32_t)e->frozen_version,
	                       .since_us = since_us,
	                       .runs_needed = (uint32_t)e->bs.params.min_runs,
	                       .chip_sets_needed = (uint32_t)e->bs.params.min_chipsets,
	                       .days_needed = e->bs.params.rebaseline_min_days >= 0.0
	                                              ? e->bs.params.rebaseline_min_days
	                                              : e->bs.params.min_days};
	snprintf(fr.event_id, sizeof fr.event_id, "%s", event_id);
	snprintf(fr.reason, sizeof fr.reason, "%s", reason);
	fr.accepted_shift = accepted_shift;
	/* the runs the re-baseline needs, asked of the executor (issue 17): one
	 * job per run configuration, published with this transaction */
	if (b->rebaseline_request &&
	    pw_bstore_rebaseline_job_id(event_id, e->key, fr.job_id, sizeof fr.job_id) == PW_OK)
		fr.job_runs = fr.runs_needed;
	else
		fr.job_id[0] = '\0';
	bool job_new = false;
	pw_status st = pw_bstore_put_freeze(b->pg, &fr, &job_new, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (job_new) {
		pw_bstore_rebaseline_job j = {.job_id = fr.job_id,
		                              .event_id = fr.event_id,
		                              .series_id = e->series_id,
		                              .series_key = e->key,
		                              .requested_us = requested_us,
		                              .runs = fr.job_runs,
		                              .min_chip_sets = fr.chip_sets_needed};
		bool queued = false;
		if ((st = pw_bstore_queue_rebaseline_job(b->pg, &j, &queued, errbuf, errlen)) != PW_OK)
			return st;
		if (queued) {
			b->rebaseline_jobs++;
			m_inc(b->m ? b->m->rebaseline_jobs : NULL, NULL);
		} else {
			pw_log_warn(b->lg, "re-baseline job %s not asked: series \"%s\" has no nightly run "
			            "stored", fr.job_id, e->key);
		}
	}
	/* the stored latest version turns frozen in place (or, for a series with
	 * no baseline yet, only the published message says so) */
	pw_baseline_record *r = push_rec(b, false);
	if (!r)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	pw_baseline_record_from_entry(r, e, PW_BASELINE_FROZEN, now);
	b->freezes++;
	m_inc(b->m ? b->m->freezes : NULL, NULL);
	return PW_OK;
}

static void fleet_reason(char *buf, size_t len, const char *kind, const char *reason,
                         const char *event_id)
{
	snprintf(buf, len, "%s: %s", kind, reason && *reason ? reason : event_id);
}

Perfwatch__V1__DlqReason pw_baseliner_point_decode(const void *payload, size_t len,
                                                   Perfwatch__V1__SeriesPoint **out, char *detail,
                                                   size_t detail_len)
{
	*out = NULL;
	ProtobufCMessage *m;
	Perfwatch__V1__DlqReason r = pw_input_decode(&perfwatch__v1__series_point__descriptor, payload,
	                                             len, &m, detail, detail_len);
	if (r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return r;
	Perfwatch__V1__SeriesPoint *sp = (Perfwatch__V1__SeriesPoint *)m;
	if (sp->series_key && strlen(sp->series_key) >= PW_ST_KEY_MAX) {
		snprintf(detail, detail_len, "series_key of %zu bytes is too long (the cap is %d)",
		         strlen(sp->series_key), PW_ST_KEY_MAX - 1);
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE;
	} else if (!sp->series_key || !*sp->series_key || sp->series_id <= 0 || !isfinite(sp->value)) {
		snprintf(detail, detail_len, "point needs a series_key, a series_id and a finite value");
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
	}
	if (r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) {
		perfwatch__v1__series_point__free_unpacked(sp, NULL);
		return r;
	}
	*out = sp;
	return r;
}

/*
 * Accepts the shift of e named by (reason, accept_id), whose row is pending:
 * the row turns accepted, the series is frozen by the acceptance (its freeze
 * event is the accept id) and its window restarts from shift_us, re-read
 * from the samples with the shifted points the old baseline kept out; the
 * re-baseline runs are asked for as after a fleet change.
 */
static pw_status accept_shift(pw_baseliner *b, pw_series_entry *e, const char *reason,
                              const char *accept_id, int64_t shift_us, double before,
                              double after, size_t nightlies, int64_t now, char *errbuf,
                              size_t errlen)
{
	pw_bstore_acceptance acc = {.series_id = e->series_id,
	                            .reason = reason,
	                            .accept_id = accept_id,
	                            .upto_us = e->mark.ts_us,
	                            .nightlies = (uint32_t)nightlies,
	                            .old_version = e->bs.has_baseline ? (uint32_t)e->bs.current.version : 0,
	                            .old_level = e->bs.current.median};
	bool pending = false;
	pw_status st = pw_bstore_accept_shift(b->pg, &acc, &pending, errbuf, errlen);
	if (st != PW_OK || !pending)
		return st; /* accepted before (a redelivery): its freeze stands or ended */
	char why[128];
	snprintf(why, sizeof why, "accepted shift (%s, %zu nightlies): %.6g -> %.6g", reason,
	         nightlies, before, after);
	bool did = false;
	/* the executor's runs are stamped after the newest nightly: the level now */
	st = freeze_entry(b, e, accept_id, why, shift_us, e->mark.ts_us, true, now, &did, errbuf,
	                  errlen);
	if (st != PW_OK)
		return st;
	b->shifts_accepted++;
	m_inc(b->m ? b->m->accepted_shifts : NULL, "accepted");
	pw_log_info(b->lg, "series \"%s\": shift %s (%s) held for %zu nightlies (%.6g -> %.6g): "
	            "accepted, re-baselining from the shift", e->key, accept_id, reason, nightlies,
	            before, after);
	if (!did)
		return PW_OK;
	/* the window restarts from the shifted points, those kept out included */
	pw_point_mark upto = e->mark;
	st = pw_bstore_load_series(b->pg, e, &upto, errbuf, errlen);
	if (st != PW_OK)
		return st;
	e->touched = true;
	cache_mark(b, e, true);
	return PW_OK;
}

/*
 * Accepted shifts (accept.h): whether e's tracked shift has held (then
 * accept_shift) or was fixed (tracking ends).
 */
static pw_status shift_check(pw_baseliner *b, pw_series_entry *e, int64_t now, char *errbuf,
                             size_t errlen)
{
	/* a series frozen by a fleet change re-baselines anyway; it is checked
	 * again at its next nightly after the freeze */
	if (e->bs.state == PW_BASELINE_FROZEN || e->mark.ts_us < e->shift_us)
		return PW_OK;
	/* a re-baseline since (a fleet change's) drew its window from after the
	 * shift: the baseline is at the shifted level already */
	if (e->bs.has_baseline && e->bs.current.window_start_us >= e->shift_us) {
		pw_status st = pw_bstore_end_shift(b->pg, e->series_id, "changepoint_held",
		                                   e->shift_accept_id, "superseded", errbuf, errlen);
		if (st == PW_OK)
			e->has_shift = false;
		return st;
	}
	size_t nightlies = 0, nnewest = 0;
	double newest[PW_ACCEPT_NEWEST];
	pw_status st = pw_bstore_shift_evidence(b->pg, e->series_id, e->shift_us, e->mark.ts_us,
	                                        &nightlies, newest, &nnewest, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_accept_verdict v = pw_accept_decide(e->shift_before, e->shift_after, nightlies, newest,
	                                       nnewest, b->accept_after_nightlies);
	if (v == PW_ACCEPT_WAIT)
		return PW_OK;
	if (v == PW_ACCEPT_FIXED) {
		st = pw_bstore_end_shift(b->pg, e->series_id, "changepoint_held", e->shift_accept_id,
		                         "fixed", errbuf, errlen);
		if (st != PW_OK)
			return st;
		e->has_shift = false;
		b->shifts_fixed++;
		m_inc(b->m ? b->m->accepted_shifts : NULL, "fixed");
		pw_log_info(b->lg, "series \"%s\": the shift %s is back at %.6g after %zu nightlies: "
		            "fixed, not accepted", e->key, e->shift_accept_id, e->shift_before, nightlies);
		return PW_OK;
	}
	char accept_id[sizeof e->shift_accept_id];
	memcpy(accept_id, e->shift_accept_id, sizeof accept_id);
	e->has_shift = false;
	return accept_shift(b, e, "changepoint_held", accept_id, e->shift_us, e->shift_before,
	                    e->shift_after, nightlies, now, errbuf, errlen);
}

Perfwatch__V1__DlqReason pw_baseliner_changepoint_decode(const void *payload, size_t len,
                                                         Perfwatch__V1__Changepoint **out,
                                                         char *detail, size_t detail_len)
{
	*out = NULL;
	ProtobufCMessage *m;
	Perfwatch__V1__DlqReason r = pw_input_decode(&perfwatch__v1__changepoint__descriptor, payload,
	                                             len, &m, detail, detail_len);
	if (r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return r;
	Perfwatch__V1__Changepoint *cp = (Perfwatch__V1__Changepoint *)m;
	bool track = pw_accept_cp_action_of(cp->stage, cp->annotation) == PW_ACCEPT_CP_TRACK;
	/* a stage or annotation this build does not know would read as a shift
	 * to track (pw_accept_cp_action_of): no better a guess than any other */
	if (!protobuf_c_enum_descriptor_get_value(&perfwatch__v1__changepoint_stage__descriptor,
	                                          (int)cp->stage)) {
		snprintf(detail, detail_len, "changepoint stage %d is not a ChangepointStage this build "
		         "knows", (int)cp->stage);
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	} else if (!protobuf_c_enum_descriptor_get_value(
	                   &perfwatch__v1__changepoint_annotation__descriptor, (int)cp->annotation)) {
		snprintf(detail, detail_len, "changepoint annotation %d is not a ChangepointAnnotation "
		         "this build knows", (int)cp->annotation);
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	} else if (cp->series_key && strlen(cp->series_key) >= PW_ST_KEY_MAX) {
		snprintf(detail, detail_len, "series_key of %zu bytes is too long (the cap is %d)",
		         strlen(cp->series_key), PW_ST_KEY_MAX - 1);
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE;
	} else if (!cp->changepoint_id || !*cp->changepoint_id || !cp->series_key ||
	           !*cp->series_key || cp->series_id <= 0) {
		snprintf(detail, detail_len, "changepoint needs a changepoint_id, a series_key and a series_id");
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
	} else if (strlen(cp->changepoint_id) > 1024) {
		snprintf(detail, detail_len, "changepoint_id of %zu bytes is too long (the cap is 1024)",
		         strlen(cp->changepoint_id));
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE;
	} else if ((track || cp->stage == PERFWATCH__V1__CHANGEPOINT_STAGE__CHANGEPOINT_STAGE_WITHDRAWN) &&
	           (!cp->first_shifted_build_id || !*cp->first_shifted_build_id)) {
		snprintf(detail, detail_len, "changepoint needs its first_shifted_build_id");
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
	} else if (track && (cp->shift_unix_us <= 0 || cp->shift_unix_us > PW_TIME_MAX_US ||
	                     !isfinite(cp->level_before) || !isfinite(cp->level_after) ||
	                     cp->level_before == cp->level_after)) {
		/* the shift's time is stored (shift_acceptances.shift_at): one PostgreSQL
		 * cannot hold would fail the batch on every retry */
		snprintf(detail, detail_len,
		         "shift needs a measured time (shift_unix_us %" PRId64 ": after 1970, before the "
		         "year 10000) and two finite, distinct levels (level_before %g, level_after %g)",
		         cp->shift_unix_us, cp->level_before, cp->level_after);
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	}
	if (r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) {
		perfwatch__v1__changepoint__free_unpacked(cp, NULL);
		return r;
	}
	*out = cp;
	return r;
}

static pw_status handle_changepoint(pw_baseliner *b, const rd_kafka_message_t *msg, int64_t now,
                                    char *errbuf, size_t errlen)
{
	char why[512];
	Perfwatch__V1__Changepoint *cp = NULL;
	Perfwatch__V1__DlqReason refused =
		pw_baseliner_changepoint_decode(msg->payload, msg->len, &cp, why, sizeof why);
	if (refused != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) {
		m_inc(b->m ? b->m->changepoints : NULL, "invalid");
		return dead_letter(b, msg, refused, "perfwatch.v1.Changepoint", why, errbuf, errlen);
	}
	pw_status st = PW_OK;
	pw_accept_cp_action act = pw_accept_cp_action_of(cp->stage, cp->annotation);
	if (act == PW_ACCEPT_CP_IGNORE) {
		m_inc(b->m ? b->m->changepoints : NULL, "ignore");
		goto out;
	}
	char accept_id[24];
	if ((st = pw_accept_id(cp->series_key, cp->first_shifted_build_id, accept_id,
	                       sizeof accept_id)) != PW_OK) {
		st = pw_fail(st, errbuf, errlen, "accept id of \"%s\"", cp->changepoint_id);
		goto out;
	}
	pw_series_entry *e = NULL;
	st = entry_ready(b, cp->series_key, cp->series_id, &e, errbuf, errlen);
	if (st == PW_ERR_INSUFFICIENT) {
		char detail[512];
		snprintf(detail, sizeof detail, "%s", errbuf);
		m_inc(b->m ? b->m->changepoints : NULL, "invalid");
		st = dead_letter(b, msg, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED,
		                 "perfwatch.v1.Changepoint", detail, errbuf, errlen);
		goto out;
	}
	if (st != PW_OK)
		goto out;
	if (act == PW_ACCEPT_CP_WITHDRAW) {
		m_inc(b->m ? b->m->changepoints : NULL, "withdraw");
		st = pw_bstore_end_shift(b->pg, e->series_id, "changepoint_held", accept_id, "withdrawn",
		                         errbuf, errlen);
		if (st == PW_OK && e->has_shift && strcmp(e->shift_accept_id, accept_id) == 0)
			e->has_shift = false;
		goto out;
	}
	m_inc(b->m ? b->m->changepoints : NULL, "track");
	pw_bstore_shift sh = {.series_id = e->series_id,
	                      .reason = "changepoint_held",
	                      .source_id = cp->changepoint_id,
	                      .accept_id = accept_id,
	                      .shift_us = cp->shift_unix_us,
	                      .level_before = cp->level_before,
	                      .level_after = cp->level_after};
	if ((st = pw_bstore_put_shift(b->pg, &sh, errbuf, errlen)) != PW_OK)
		goto out;
	/* the newest pending shift is the one tracked (the row says whether this
	 * one is still pending: an accepted or fixed one is not taken up again) */
	bool had_shift = e->has_shift;
	char prev_id[sizeof e->shift_accept_id];
	memcpy(prev_id, e->shift_accept_id, sizeof prev_id);
	if ((st = pw_bstore_load_shift(b->pg, e, errbuf, errlen)) != PW_OK)
		goto out;
	if (e->has_shift && (!had_shift || strcmp(prev_id, e->shift_accept_id) != 0))
		pw_log_info(b->lg, "series \"%s\": tracking shift %s (%s, %.6g -> %.6g) until it holds "
		            "%u nightlies", e->key, e->shift_accept_id, cp->changepoint_id,
		            e->shift_before, e->shift_after, b->accept_after_nightlies);
	/* the nightlies may be in already (a late or replayed changepoint) */
	if (e->has_shift)
		st = shift_check(b, e, now, errbuf, errlen);
out:
	perfwatch__v1__changepoint__free_unpacked(cp, NULL);
	return st;
}

Perfwatch__V1__DlqReason pw_baseliner_verdict_decode(const void *payload, size_t len,
                                                     Perfwatch__V1__GateVerdict **out,
                                                     char *detail, size_t detail_len)
{
	*out = NULL;
	ProtobufCMessage *m;
	Perfwatch__V1__DlqReason r = pw_input_decode(&perfwatch__v1__gate_verdict__descriptor, payload,
	                                             len, &m, detail, detail_len);
	if (r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return r;
	Perfwatch__V1__GateVerdict *v = (Perfwatch__V1__GateVerdict *)m;
	for (size_t i = 0; i < v->n_series && r == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED;
	     i++) {
		const Perfwatch__V1__GateSeriesResult *x = v->series[i];
		if (x->verdict != PERFWATCH__V1__VERDICT__VERDICT_WAIVED)
			continue;
		if (x->series_key && strlen(x->series_key) >= PW_ST_KEY_MAX) {
			snprintf(detail, detail_len, "waived series %zu: series_key of %zu bytes is too long "
			         "(the cap is %d)", i, strlen(x->series_key), PW_ST_KEY_MAX - 1);
			r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE;
		} else if (!x->series_key || !*x->series_key || x->series_id <= 0 || !x->waiver_id ||
		           !*x->waiver_id || strlen(x->waiver_id) > 127) {
			snprintf(detail, detail_len, "waived series %zu needs a series_key, a series_id and a "
			         "waiver_id of 1 to 127 bytes", i);
			r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
		} else if (!isfinite(x->baseline_median) || !isfinite(x->candidate_median) ||
		           x->baseline_median == x->candidate_median) {
			snprintf(detail, detail_len, "waived series %zu needs finite, distinct baseline and "
			         "candidate medians (%g, %g)", i, x->baseline_median, x->candidate_median);
			r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
		}
	}
	if (r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) {
		perfwatch__v1__gate_verdict__free_unpacked(v, NULL);
		return r;
	}
	*out = v;
	return r;
}

/*
 * A regression of e someone accepted — a release shipped with it waived
 * (reason "waiver", source the waiver id) or the on-call triaged its page as
 * a true regression ("triaged_true", source the page id): the shift is
 * accepted at once when the nightlies sit at the regressed level (`after`).
 * It starts at the series' tracked changepoint, else at the first point of
 * the excursion on the regression's side; with neither, the nightlies never
 * shifted (the regression is the release's alone) and nothing is accepted.
 */
static pw_status accept_now(pw_baseliner *b, pw_series_entry *e, const char *reason,
                            const char *source_id, double before, double after, int64_t now,
                            char *errbuf, size_t errlen)
{
	if (e->bs.state == PW_BASELINE_FROZEN) {
		pw_log_info(b->lg, "series \"%s\": %s %s not applied: frozen, re-baselining already",
		            e->key, reason, source_id);
		return PW_OK;
	}
	char accept_id[sizeof e->shift_accept_id];
	int64_t shift_us;
	int side = after > before ? 1 : -1;
	pw_status st;
	if (e->has_shift) {
		memcpy(accept_id, e->shift_accept_id, sizeof accept_id);
		shift_us = e->shift_us;
	} else if (e->bs.excursion == side) {
		if ((st = pw_accept_id(e->key, source_id, accept_id, sizeof accept_id)) != PW_OK)
			return pw_fail(st, errbuf, errlen, "accept id of %s \"%s\"", reason, source_id);
		shift_us = e->bs.excursion_first_us;
	} else {
		m_inc(b->m ? b->m->accepted_shifts : NULL, "not_shifted");
		pw_log_info(b->lg, "series \"%s\": %s %s: the nightlies show no shift; nothing to "
		            "accept", e->key, reason, source_id);
		return PW_OK;
	}
	size_t nightlies = 0, nnewest = 0;
	double newest[PW_ACCEPT_NEWEST];
	st = pw_bstore_shift_evidence(b->pg, e->series_id, shift_us, e->mark.ts_us, &nightlies,
	                              newest, &nnewest, errbuf, errlen);
	if (st != PW_OK)
		return st;
	/* the waiver or verdict is the acceptance: one shifted nightly is enough */
	pw_accept_verdict v = pw_accept_decide(before, after, nightlies, newest, nnewest, 1);
	if (v == PW_ACCEPT_WAIT)
		return PW_OK;
	pw_bstore_shift sh = {.series_id = e->series_id,
	                      .reason = reason,
	                      .source_id = source_id,
	                      .accept_id = accept_id,
	                      .shift_us = shift_us,
	                      .level_before = before,
	                      .level_after = after};
	if ((st = pw_bstore_put_shift(b->pg, &sh, errbuf, errlen)) != PW_OK)
		return st;
	if (v == PW_ACCEPT_FIXED) {
		m_inc(b->m ? b->m->accepted_shifts : NULL, "fixed");
		return pw_bstore_end_shift(b->pg, e->series_id, reason, accept_id, "fixed", errbuf,
		                           errlen);
	}
	st = accept_shift(b, e, reason, accept_id, shift_us, before, after, nightlies, now, errbuf,
	                  errlen);
	if (st != PW_OK)
		return st;
	/* the changepoint of the same shift needs no acceptance of its own */
	if (e->has_shift && strcmp(e->shift_accept_id, accept_id) == 0) {
		st = pw_bstore_end_shift(b->pg, e->series_id, "changepoint_held", accept_id,
		                         "superseded", errbuf, errlen);
		e->has_shift = false;
	}
	return st;
}

static pw_status handle_verdict(pw_baseliner *b, const rd_kafka_message_t *msg, int64_t now,
                                char *errbuf, size_t errlen)
{
	char why[512];
	Perfwatch__V1__GateVerdict *v = NULL;
	Perfwatch__V1__DlqReason refused =
		pw_baseliner_verdict_decode(msg->payload, msg->len, &v, why, sizeof why);
	if (refused != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return dead_letter(b, msg, refused, "perfwatch.v1.GateVerdict", why, errbuf, errlen);
	pw_status st = PW_OK;
	for (size_t i = 0; i < v->n_series && st == PW_OK; i++) {
		const Perfwatch__V1__GateSeriesResult *x = v->series[i];
		if (x->verdict != PERFWATCH__V1__VERDICT__VERDICT_WAIVED)
			continue;
		pw_series_entry *e = NULL;
		st = entry_ready(b, x->series_key, x->series_id, &e, errbuf, errlen);
		if (st == PW_ERR_INSUFFICIENT) {
			char detail[512];
			snprintf(detail, sizeof detail, "%s", errbuf);
			st = dead_letter(b, msg, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED,
			                 "perfwatch.v1.GateVerdict", detail, errbuf, errlen);
			break;
		}
		if (st == PW_OK)
			st = accept_now(b, e, "waiver", x->waiver_id, x->baseline_median,
			                x->candidate_median, now, errbuf, errlen);
	}
	perfwatch__v1__gate_verdict__free_unpacked(v, NULL);
	return st;
}

Perfwatch__V1__DlqReason pw_baseliner_triage_decode(const void *payload, size_t len,
                                                    Perfwatch__V1__TriageVerdict **out,
                                                    char *detail, size_t detail_len)
{
	*out = NULL;
	ProtobufCMessage *m;
	Perfwatch__V1__DlqReason r = pw_input_decode(&perfwatch__v1__triage_verdict__descriptor,
	                                             payload, len, &m, detail, detail_len);
	if (r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return r;
	Perfwatch__V1__TriageVerdict *t = (Perfwatch__V1__TriageVerdict *)m;
	if (!t->page_id || !*t->page_id || strlen(t->page_id) > 127) {
		snprintf(detail, detail_len, "triage verdict needs a page_id of 1 to 127 bytes");
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
	} else if (t->outcome == PERFWATCH__V1__TRIAGE_OUTCOME__TRIAGE_OUTCOME_UNSPECIFIED) {
		snprintf(detail, detail_len, "triage verdict of page \"%s\" has no outcome", t->page_id);
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
	} else if (t->outcome != PERFWATCH__V1__TRIAGE_OUTCOME__TRIAGE_OUTCOME_TRUE_REGRESSION &&
	           t->outcome != PERFWATCH__V1__TRIAGE_OUTCOME__TRIAGE_OUTCOME_FALSE_REGRESSION) {
		snprintf(detail, detail_len, "triage outcome %d of page \"%s\" is not a TriageOutcome "
		         "this build knows", (int)t->outcome, t->page_id);
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	}
	if (r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) {
		perfwatch__v1__triage_verdict__free_unpacked(t, NULL);
		return r;
	}
	*out = t;
	return r;
}

/* A page triaged true: every regression alert of its incident with a series
 * and both medians is accepted as a waiver is (accept_now). */
static pw_status handle_triage(pw_baseliner *b, const rd_kafka_message_t *msg, int64_t now,
                               char *errbuf, size_t errlen)
{
	char why[512];
	Perfwatch__V1__TriageVerdict *t = NULL;
	Perfwatch__V1__DlqReason refused =
		pw_baseliner_triage_decode(msg->payload, msg->len, &t, why, sizeof why);
	if (refused != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return dead_letter(b, msg, refused, "perfwatch.v1.TriageVerdict", why, errbuf, errlen);
	pw_status st = PW_OK;
	PGresult *res = NULL;
	if (t->outcome != PERFWATCH__V1__TRIAGE_OUTCOME__TRIAGE_OUTCOME_TRUE_REGRESSION)
		goto out; /* a false page leaves the baseline as it is */
	const char *p1[1] = {t->page_id};
	st = pw_pg_exec(b->pg,
	                "SELECT EXISTS (SELECT 1 FROM perfwatch.pages WHERE page_id = $1), "
	                "a.series_id, a.series_key, a.baseline_median, a.observed_median "
	                "FROM (SELECT 1) one LEFT JOIN (perfwatch.pages p "
	                "JOIN perfwatch.pager_incident_alerts ia ON ia.incident_id = p.incident_id "
	                "JOIN perfwatch.alerts a ON a.alert_id = ia.alert_id AND a.kind = 'regression' "
	                "AND a.series_id IS NOT NULL AND a.baseline_median IS NOT NULL "
	                "AND a.observed_median IS NOT NULL AND a.baseline_median <> a.observed_median) "
	                "ON p.page_id = $1 ORDER BY a.series_id",
	                1, p1, &res, errbuf, errlen);
	if (st != PW_OK)
		goto out;
	if (strcmp(PQgetvalue(res, 0, 0), "t") != 0) {
		snprintf(why, sizeof why, "triage verdict names page \"%s\", which perfwatch.pages does "
		         "not hold", t->page_id);
		st = dead_letter(b, msg, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNKNOWN_REFERENCE,
		                 "perfwatch.v1.TriageVerdict", why, errbuf, errlen);
		goto out;
	}
	for (int i = 0; i < PQntuples(res) && st == PW_OK; i++) {
		if (PQgetisnull(res, i, 1))
			continue;
		const char *key = PQgetvalue(res, i, 2);
		if (strlen(key) >= PW_ST_KEY_MAX)
			continue;
		pw_series_entry *e = NULL;
		st = entry_ready(b, key, strtoll(PQgetvalue(res, i, 1), NULL, 10), &e, errbuf, errlen);
		if (st == PW_ERR_INSUFFICIENT) {
			char detail[512];
			snprintf(detail, sizeof detail, "%s", errbuf);
			st = dead_letter(b, msg, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED,
			                 "perfwatch.v1.TriageVerdict", detail, errbuf, errlen);
			break;
		}
		if (st == PW_OK)
			st = accept_now(b, e, "triaged_true", t->page_id,
			                strtod(PQgetvalue(res, i, 3), NULL),
			                strtod(PQgetvalue(res, i, 4), NULL), now, errbuf, errlen);
	}
out:
	PQclear(res);
	perfwatch__v1__triage_verdict__free_unpacked(t, NULL);
	return st;
}

static pw_status handle_point(pw_baseliner *b, const rd_kafka_message_t *msg, int64_t now,
                              char *errbuf, size_t errlen)
{
	pw_baseliner_metrics *m = b->m;
	char why[512];
	Perfwatch__V1__SeriesPoint *sp = NULL;
	Perfwatch__V1__DlqReason reason =
		pw_baseliner_point_decode(msg->payload, msg->len, &sp, why, sizeof why);
	if (reason != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) {
		m_inc(m ? m->points : NULL, "invalid");
		return dead_letter(b, msg, reason, "perfwatch.v1.SeriesPoint", why, errbuf, errlen);
	}
	pw_status st = PW_OK;
	Perfwatch__V1__BuildKind kind =
		sp->build ? sp->build->kind : PERFWATCH__V1__BUILD_KIND__BUILD_KIND_UNSPECIFIED;
	if (kind != PERFWATCH__V1__BUILD_KIND__BUILD_KIND_NIGHTLY &&
	    kind != PERFWATCH__V1__BUILD_KIND__BUILD_KIND_RELEASE) {
		m_inc(m ? m->points : NULL, "skipped_build");
		goto out;
	}
	pw_series_entry *e = NULL;
	st = entry_ready(b, sp->series_key, sp->series_id, &e, errbuf, errlen);
	if (st == PW_ERR_INSUFFICIENT) {
		/* the table is full (baseliner.max_series): retrying cannot help */
		char detail[512];
		snprintf(detail, sizeof detail, "%s", errbuf);
		m_inc(m ? m->points : NULL, "invalid");
		st = dead_letter(b, msg, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED,
		                 "perfwatch.v1.SeriesPoint", detail, errbuf, errlen);
		goto out;
	}
	if (st != PW_OK)
		goto out;
	if (sp->unit && *sp->unit)
		snprintf(e->unit, sizeof e->unit, "%s", sp->unit);

	pw_point_env env;
	memset(&env, 0, sizeof env);
	snprintf(env.platform, sizeof env.platform, "%s", sp->key && sp->key->platform ? sp->key->platform : "");
	if (!env.platform[0])
		key_platform(sp->series_key, env.platform, sizeof env.platform);
	snprintf(env.chip_set, sizeof env.chip_set, "%s", sp->chip_set ? sp->chip_set : "");
	snprintf(env.cell, sizeof env.cell, "%s", sp->cell ? sp->cell : "");
	snprintf(env.firmware, sizeof env.firmware, "%s", sp->firmware ? sp->firmware : "");
	snprintf(env.harness_version, sizeof env.harness_version, "%s",
	         sp->harness_version ? sp->harness_version : "");

	pw_baseline_point pt = {
		.value = sp->value,
		.ts_us = sp->measured_unix_us,
		.chipset = pw_series_hash(env.chip_set),
	};
	/* fleet changes between the series' previous point and this one, in
	 * measurement time: freeze first, so that this point starts the re-baseline */
	uint64_t pid = pw_series_point_id(sp->run_id, sp->repeat_index);
	if (b->fleet && e->mark.ts_us != 0 && pt.ts_us > e->mark.ts_us &&
	    !pw_point_mark_seen(&e->mark, msg->partition, msg->offset)) {
		size_t pos = 0;
		const pw_fleet_event *fe;
		while ((fe = pw_fleet_log_due(b->fleet, &pos, e->mark.ts_us, pt.ts_us,
		                              e->has_env ? &e->env : NULL, &env)) != NULL) {
			if (strcmp(e->bs.freeze_event, fe->id) == 0)
				continue;
			bool did = false;
			st = freeze_entry(b, e, fe->id, fe->reason, fe->occurred_us, fe->occurred_us, false,
			                  now, &did, errbuf, errlen);
			if (st != PW_OK)
				goto out;
			if (did)
				pw_log_info(b->lg, "series \"%s\" frozen by fleet change \"%s\" at its first point after the change",
				            e->key, fe->id);
		}
	}
	pw_point_env prev_env = e->env;
	bool had_env = e->has_env;
	pw_baseline_record before;
	bool had = e->bs.current.version > 0;
	if (had)
		pw_baseline_record_from_entry(&before, e, e->bs.state, now);
	pw_baseline_event ev[2];
	size_t nev = 0;
	bool skipped = false;
	st = pw_series_entry_add(e, &pt, pid, msg->partition, msg->offset, &env, ev, &nev, &skipped);
	if (st != PW_OK) {
		st = pw_fail(st, errbuf, errlen, "series \"%s\": cannot add point: %s", e->key,
		             pw_strerror(st));
		goto out;
	}
	if (skipped) {
		m_inc(m ? m->points : NULL, "skipped_seen");
		/* a point the load re-filled the window with: the window may be
		 * complete without any new point to say so */
		if (e->bs.state != PW_BASELINE_FROZEN)
			goto out;
		st = pw_baseline_series_settle(&e->bs, ev, &nev);
		if (st != PW_OK || nev == 0)
			goto out;
		e->touched = true;
		cache_mark(b, e, true);
	} else {
		m_inc(m ? m->points : NULL, "used");
		b->points++;
	}

	for (size_t k = 0; k < nev; k++) {
		switch (ev[k].kind) {
		case PW_BASELINE_EV_UPDATED: {
			pw_baseline_record *r = push_rec(b, true);
			if (!r)
				goto nomem;
			pw_baseline_record_from_entry(r, e, PW_BASELINE_ACTIVE, now);
			b->updates++;
			m_inc(m ? m->updates : NULL, NULL);
			break;
		}
		case PW_BASELINE_EV_QUARANTINED: {
			pw_baseline_record *r = push_rec(b, true);
			if (!r)
				goto nomem;
			pw_baseline_record_from_entry(r, e, PW_BASELINE_QUARANTINED, now);
			quarantine_reason(e, r, r->freeze_reason, sizeof r->freeze_reason);
			pw_bstore_alert *a = push_alert(b);
			if (!a)
				goto nomem;
			fill_alert_common(a, e, now);
			snprintf(a->alert_id, sizeof a->alert_id, "bl-quarantine/%" PRId64 "/v%" PRIu32,
			         e->series_id, r->version);
			a->base = *r;
			a->value = r->median;
			snprintf(a->summary, sizeof a->summary,
			         "series %s quarantined: sigma %.3g%% > %.3g x platform norm %.3g%%; "
			         "a harness defect, not gated", e->key, r->sigma_pct,
			         e->bs.params.quarantine_factor, r->platform_norm_sigma_pct);
			b->quarantines++;
			m_inc(m ? m->quarantines : NULL, NULL);
			break;
		}
		case PW_BASELINE_EV_OUTLIER: {
			pw_bstore_alert *a = push_alert(b);
			if (!a)
				goto nomem;
			fill_alert_common(a, e, now);
			a->outlier = true;
			snprintf(a->alert_id, sizeof a->alert_id, "bl-outlier/%" PRId64 "/%s/%" PRIu32,
			         e->series_id, sp->run_id ? sp->run_id : "", sp->repeat_index);
			if (had)
				a->base = before;
			else
				pw_baseline_record_from_entry(&a->base, e, e->bs.state, now);
			a->value = sp->value;
			a->z = ev[k].z;
			snprintf(a->run_id, sizeof a->run_id, "%s", sp->run_id ? sp->run_id : "");
			/* may grow the alerts array: a is not used after it */
			st = classify_outlier(b, a, e, had_env ? &prev_env : NULL, &env, pt.ts_us);
			if (st != PW_OK)
				goto nomem;
			b->outliers++;
			m_inc(m ? m->outliers : NULL, NULL);
			break;
		}
		case PW_BASELINE_EV_EXCURSION: {
			pw_bstore_excursion *x = push_excursion(b);
			if (!x)
				goto nomem;
			x->series_id = e->series_id;
			snprintf(x->run_id, sizeof x->run_id, "%s", sp->run_id ? sp->run_id : "");
			x->repeat_index = sp->repeat_index;
			x->measured_us = sp->measured_unix_us;
			x->value = sp->value;
			x->z = ev[k].z;
			x->baseline_version = (uint32_t)e->bs.current.version;
			b->excursion_points++;
			m_inc(m ? m->excursion_points : NULL, NULL);
			break;
		}
		case PW_BASELINE_EV_UNFROZEN:
			b->unfreezes++;
			m_inc(m ? m->unfreezes : NULL, NULL);
			e->freeze_since_us = 0;
			break;
		case PW_BASELINE_EV_FROZEN:
		case PW_BASELINE_EV_NONE:
			break;
		}
	}
	/* an unfreeze closes the open freezes at the version that ended them */
	for (size_t k = 0; k < nev; k++) {
		if (ev[k].kind != PW_BASELINE_EV_UNFROZEN)
			continue;
		pw_bstore_unfreeze u = {.series_id = e->series_id,
		                        .unfrozen_version = (uint32_t)e->bs.current.version,
		                        .new_level = e->bs.current.median};
		st = pw_bstore_put_unfreeze(b->pg, &u, errbuf, errlen);
		if (st != PW_OK)
			goto out;
	}
	/* a nightly at or after a tracked shift may be the one that makes it hold */
	if (e->has_shift && kind == PERFWATCH__V1__BUILD_KIND__BUILD_KIND_NIGHTLY &&
	    pt.ts_us >= e->shift_us && !(sp->rebaseline_job_id && *sp->rebaseline_job_id))
		st = shift_check(b, e, now, errbuf, errlen);
	goto out;
nomem:
	st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
out:
	perfwatch__v1__series_point__free_unpacked(sp, NULL);
	return st;
}

Perfwatch__V1__DlqReason pw_baseliner_fleet_decode(const void *payload, size_t len,
                                                   Perfwatch__V1__FleetChangeEvent **out,
                                                   bool *identified, char *detail,
                                                   size_t detail_len)
{
	*out = NULL;
	*identified = false;
	ProtobufCMessage *m;
	Perfwatch__V1__DlqReason r = pw_input_decode(&perfwatch__v1__fleet_change_event__descriptor,
	                                             payload, len, &m, detail, detail_len);
	if (r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return r;
	Perfwatch__V1__FleetChangeEvent *fc = (Perfwatch__V1__FleetChangeEvent *)m;
	if (!fc->event_id || !*fc->event_id || strlen(fc->event_id) >= 64) {
		snprintf(detail, detail_len, "fleet change needs an event_id of 1 to 63 bytes");
		perfwatch__v1__fleet_change_event__free_unpacked(fc, NULL);
		return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
	}
	*identified = true;
	pw_fleet_selector sel = {(const char *const *)fc->platforms, fc->n_platforms,
	                         (const char *const *)fc->chip_sets, fc->n_chip_sets,
	                         (const char *const *)fc->cells, fc->n_cells,
	                         (const char *const *)fc->firmware, fc->n_firmware,
	                         (const char *const *)fc->harness_versions, fc->n_harness_versions};
	if (pw_fleet_selector_is_empty(&sel) && !fc->fleet_wide) {
		snprintf(detail, detail_len,
		         "fleet change has no selector and would freeze every series; set "
		         "fleet_wide to mean that");
		perfwatch__v1__fleet_change_event__free_unpacked(fc, NULL);
		return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
	}
	*out = fc;
	return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED;
}

static pw_status handle_fleet(pw_baseliner *b, const rd_kafka_message_t *msg, int64_t now,
                              char *errbuf, size_t errlen)
{
	char why[512];
	Perfwatch__V1__FleetChangeEvent *fc = NULL;
	bool identified = false;
	Perfwatch__V1__DlqReason refused =
		pw_baseliner_fleet_decode(msg->payload, msg->len, &fc, &identified, why, sizeof why);
	if (identified)
		m_inc(b->m ? b->m->fleet_changes : NULL, NULL);
	if (refused != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return dead_letter(b, msg, refused, "perfwatch.v1.FleetChangeEvent", why, errbuf, errlen);
	pw_status st = PW_OK;
	PGresult *done = NULL;
	pw_bstore_fleet f = {
		.event_id = fc->event_id,
		.occurred_us = fc->occurred_unix_us,
		.kind = pw_fleet_kind_name(fc->kind),
		.reason = fc->reason,
		.source = fc->source,
		.sel = {(const char *const *)fc->platforms, fc->n_platforms,
		        (const char *const *)fc->chip_sets, fc->n_chip_sets,
		        (const char *const *)fc->cells, fc->n_cells,
		        (const char *const *)fc->firmware, fc->n_firmware,
		        (const char *const *)fc->harness_versions, fc->n_harness_versions},
		.from_version = fc->from_version,
		.to_version = fc->to_version,
	};
	/* a statement that PostgreSQL refuses for its data fails the same way on
	 * every retry: the savepoint lets the batch go on without the event */
	st = pw_pg_exec(b->pg, "SAVEPOINT fleet_change", 0, NULL, NULL, errbuf, errlen);
	if (st != PW_OK)
		goto out;
	st = pw_bstore_put_fleet(b->pg, &f, errbuf, errlen);
	if (st != PW_OK && pw_pg_sqlstate_is_data(pw_pg_last_sqlstate(b->pg))) {
		snprintf(why, sizeof why, "postgresql refused the fleet change: %.400s", errbuf);
		st = pw_pg_exec(b->pg, "ROLLBACK TO SAVEPOINT fleet_change", 0, NULL, NULL, errbuf,
		                errlen);
		if (st == PW_OK)
			st = dead_letter(b, msg, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED,
			                 "perfwatch.v1.FleetChangeEvent", why, errbuf, errlen);
		goto out;
	}
	if (st != PW_OK)
		goto out;
	st = pw_pg_exec(b->pg, "RELEASE SAVEPOINT fleet_change", 0, NULL, NULL, errbuf, errlen);
	if (st != PW_OK)
		goto out;
	if (fc->fleet_wide) {
		m_inc(b->m ? b->m->fleet_wide_changes : NULL, NULL);
		pw_log_error(b->lg, "FLEET-WIDE fleet change \"%s\" (%s): every series is frozen "
		             "until it re-baselines (fleet_wide is set, no selector)",
		             fc->event_id, f.kind);
	}
	/* series this event already froze (a redelivery or a replay after the
	 * freeze ended) are not frozen again: the freeze's natural key */
	const char *pe[1] = {fc->event_id};
	st = pw_pg_exec(b->pg, "SELECT series_id FROM perfwatch.freezes WHERE event_id = $1", 1, pe,
	                &done, errbuf, errlen);
	if (st != PW_OK)
		goto out;
	char reason[128];
	fleet_reason(reason, sizeof reason, f.kind, fc->reason, fc->event_id);
	if (fc->fleet_wide) {
		char wide[sizeof reason];
		memcpy(wide, reason, sizeof wide);
		snprintf(reason, sizeof reason, "FLEET-WIDE %.*s", (int)(sizeof reason - 12), wide);
	}
	if (b->fleet) {
		st = pw_fleet_log_add(b->fleet, fc->event_id, fc->occurred_unix_us, reason, &f.sel);
		if (st != PW_OK) {
			st = pw_fail(st, errbuf, errlen, "fleet log: cannot hold \"%s\": %s", fc->event_id,
			             pw_strerror(st));
			goto out;
		}
	}
	st = reclassify_by_fleet(b, fc->event_id, fc->reason, fc->occurred_unix_us, &f.sel);
	if (st != PW_OK) {
		st = pw_fail(st, errbuf, errlen, "out of memory");
		goto out;
	}
	size_t selected = 0, frozen = 0;
	for (size_t i = 0; i < pw_series_table_count(b->table); i++) {
		pw_series_entry *e = pw_series_table_at(b->table, i);
		if (!e->has_env || !pw_fleet_selector_match(&f.sel, &e->env))
			continue;
		selected++;
		bool again = false;
		for (int r = 0; r < PQntuples(done) && !again; r++)
			again = strtoll(PQgetvalue(done, r, 0), NULL, 10) == e->series_id;
		if (again)
			continue;
		if (!e->loaded) {
			pw_series_entry *same = NULL;
			st = entry_ready(b, e->key, e->series_id, &same, errbuf, errlen);
			if (st != PW_OK)
				goto out;
		}
		bool did = false;
		st = freeze_entry(b, e, fc->event_id, reason, fc->occurred_unix_us, fc->occurred_unix_us,
		                  false, now, &did, errbuf, errlen);
		if (st != PW_OK)
			goto out;
		if (!did)
			continue; /* already frozen by this event (a redelivery) */
		frozen++;
		if (e->mark.ts_us >= fc->occurred_unix_us) {
			/* the event arrived after points measured after the change: the
			 * re-baseline starts from those, re-read from the samples */
			pw_point_mark upto = e->mark;
			st = pw_bstore_load_series(b->pg, e, &upto, errbuf, errlen);
			if (st != PW_OK)
				goto out;
			e->touched = true;
			cache_mark(b, e, true);
		}
	}
	pw_log_info(b->lg, "fleet change \"%s\" (%s) selected %zu series, froze %zu", fc->event_id,
	            f.kind, selected, frozen);
out:
	PQclear(done);
	perfwatch__v1__fleet_change_event__free_unpacked(fc, NULL);
	return st;
}

/* ---------------------------------------------------------------- batch */

/* Enqueues the batch's baselines and alerts; pw_producer_flush waits for them. */
static pw_status publish(pw_baseliner *b, char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < b->sc.nrec; i++) {
		const pw_baseline_record *r = &b->sc.rec[i];
		uint8_t *buf = NULL;
		size_t len = 0;
		if (pw_baseline_record_pack(r, &buf, &len) != PW_OK)
			return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
		pw_status st = pw_producer_produce(b->prod, PW_TOPIC_BASELINES, r->series_key,
		                                   strlen(r->series_key), buf, len, 5000, errbuf, errlen);
		free(buf);
		if (st != PW_OK)
			return st;
		if (i % 512 == 511)
			pw_producer_poll(b->prod, 0);
	}
	for (size_t i = 0; i < b->sc.nalerts; i++) {
		const pw_bstore_alert *a = &b->sc.alerts[i];
		uint8_t *buf = NULL;
		size_t len = 0;
		if (pw_bstore_alert_pack(a, &buf, &len) != PW_OK)
			return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
		pw_status st = pw_producer_produce(b->prod, PW_TOPIC_ALERTS, a->series_key,
		                                   strlen(a->series_key), buf, len, 5000, errbuf, errlen);
		free(buf);
		if (st != PW_OK)
			return st;
	}
	return PW_OK;
}

/* Marks e's cache entry stale (or fresh) and keeps b->dirty counting them. */
static void cache_mark(pw_baseliner *b, pw_series_entry *e, bool dirty)
{
	if (!e || e->cache_dirty == dirty)
		return;
	e->cache_dirty = dirty;
	if (dirty)
		b->dirty++;
	else if (b->dirty > 0)
		b->dirty--;
}

/* One cache write's outcome: the entry (if still held) is clean or stale. */
static void cache_done(void *arg, const char *series_key, pw_status st)
{
	pw_baseliner *b = arg;
	cache_mark(b, pw_series_table_find(b->table, series_key), st != PW_OK);
	if (st != PW_OK)
		m_inc(b->m ? b->m->redis_fallbacks : NULL, "cache_write");
	if (st == PW_ERR_UNAVAILABLE)
		b->redis_lost = true;
}

/* Reads the replies of the previous batch's cache writes, if any are pending. */
static void cache_settle(pw_baseliner *b)
{
	char rerr[256];
	pw_baseline_cache_batch *cb = b->cache_pending;
	b->cache_pending = NULL;
	if (cb)
		(void)pw_baseline_cache_collect(b->rd, cb, cache_done, b, rerr, sizeof rerr);
}

/*
 * Sends recs[0..n) to Redis in one pipeline. wait: read the replies now;
 * else they are read by the next cache_settle, while this process goes on
 * with its next batch. An entry whose write did not land turns dirty, to be
 * resynced when Redis answers again. False when Redis is unavailable.
 */
static bool cache_write(pw_baseliner *b, const pw_baseline_record *const *recs, size_t n,
                        bool wait)
{
	if (n == 0)
		return true;
	char rerr[256];
	pw_baseline_cache_batch *cb = NULL;
	pw_status rc = pw_baseline_cache_send(b->rd, recs, n, &cb, rerr, sizeof rerr);
	if (rc != PW_OK) {
		for (size_t i = 0; i < n; i++)
			cache_done(b, recs[i]->series_key, rc);
		return rc != PW_ERR_UNAVAILABLE;
	}
	b->cache_pending = cb;
	if (wait)
		cache_settle(b);
	return !b->redis_lost;
}

/*
 * After the commit: the cache follows PostgreSQL. This batch's writes are
 * sent and their replies read at the next batch (or at release); failures
 * leave entries dirty.
 */
static void update_cache(pw_baseliner *b)
{
	if (!b->rd)
		return;
	cache_settle(b);
	char rerr[256];
	if (b->redis_lost && pw_redis_ping(b->rd, rerr, sizeof rerr) == PW_OK) {
		/* Redis is back, maybe empty (it is a cache: no persistence): every
		 * series is resynced from what this process holds */
		b->redis_lost = false;
		b->dirty = 0;
		for (size_t i = 0; i < pw_series_table_count(b->table); i++) {
			pw_series_entry *e = pw_series_table_at(b->table, i);
			e->cache_dirty = e->loaded;
			b->dirty += e->cache_dirty;
		}
	}
	/* entries whose cache went stale while Redis was away: resynced first,
	 * waiting for the replies, so that this batch's writes land after them.
	 * The count is taken from the entries: a reload (drop_state) or a late
	 * reply of an earlier batch's writes can leave the running count off,
	 * and an undercount wrapped to a malloc of 2^64 bytes */
	if (!b->redis_lost && b->dirty > 0) {
		b->dirty = 0;
		for (size_t i = 0; i < pw_series_table_count(b->table); i++)
			b->dirty += pw_series_table_at(b->table, i)->cache_dirty;
	}
	if (!b->redis_lost && b->dirty > 0) {
		pw_baseline_record *rs = malloc(b->dirty * sizeof *rs);
		const pw_baseline_record **rp = malloc(b->dirty * sizeof *rp);
		size_t n = 0, before = b->dirty;
		for (size_t i = 0; rs && rp && i < pw_series_table_count(b->table) && n < before; i++) {
			pw_series_entry *e = pw_series_table_at(b->table, i);
			if (!e->cache_dirty)
				continue;
			pw_baseline_record_from_entry(&rs[n], e, e->bs.state, pw_now_us());
			if (e->bs.state == PW_BASELINE_QUARANTINED)
				quarantine_reason(e, &rs[n], rs[n].freeze_reason, sizeof rs[n].freeze_reason);
			rp[n] = &rs[n];
			n++;
		}
		if (n && cache_write(b, rp, n, true) && before > b->dirty)
			pw_log_info(b->lg, "redis is back: resynced %zu cached baselines", before - b->dirty);
		free(rs);
		free(rp);
	}
	/* newest first: only a series' last record of the batch is written */
	size_t n = 0;
	const pw_baseline_record **recs = malloc((b->sc.nrec ? b->sc.nrec : 1) * sizeof *recs);
	if (!recs)
		return; /* entries keep their dirty marks; the next batch tries again */
	uint64_t stamp = b->batches + 1;
	for (size_t i = b->sc.nrec; i-- > 0;) {
		const pw_baseline_record *r = &b->sc.rec[i];
		pw_series_entry *e = pw_series_table_find(b->table, r->series_key);
		if (e && e->cache_stamp == stamp)
			continue;
		if (e)
			e->cache_stamp = stamp;
		recs[n++] = r;
	}
	if (b->redis_lost) /* Redis was already known to be down: mark, do not try */
		for (size_t i = 0; i < n; i++)
			cache_done(b, recs[i]->series_key, PW_ERR_UNAVAILABLE);
	else
		(void)cache_write(b, recs, n, false);
	free(recs);
}

static void drop_state(pw_baseliner *b)
{
	if (b->fw) /* the redelivered batch adds its outliers again */
		b->fw->n = b->fw->head = 0;
	pw_series_table_clear(b->table);
	b->need_known = true;
	b->dirty = 0;
}

pw_status pw_baseliner_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n,
                             char *errbuf, size_t errlen)
{
	pw_baseliner *b = ctx;
	double t0 = pw_mono_s();
	int64_t now = pw_now_us();
	pw_status st;
	b->sc.nrec = 0;
	b->sc.nalerts = 0;
	b->sc.nexcursions = 0;

	if (b->need_known) {
		size_t known = 0;
		st = pw_bstore_load_known(b->pg, b->table, b->gpu_prefixes, &known, errbuf, errlen);
		if (st != PW_OK)
			return st;
		size_t events = 0;
		if (b->fleet) {
			st = pw_bstore_load_fleet(b->pg, b->fleet, &events, errbuf, errlen);
			if (st != PW_OK)
				return st;
		}
		b->need_known = false;
		if (known || events)
			pw_log_info(b->lg, "known series loaded: %zu, fleet changes: %zu", known, events);
	}
	st = pw_pg_begin(b->pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (size_t i = 0; i < n; i++) {
		const rd_kafka_message_t *msg = msgs[i];
		const char *topic = rd_kafka_topic_name(msg->rkt);
		if (strcmp(topic, PW_TOPIC_FLEET_CHANGES) == 0)
			st = handle_fleet(b, msg, now, errbuf, errlen);
		else if (strcmp(topic, PW_TOPIC_CHANGEPOINTS) == 0)
			st = handle_changepoint(b, msg, now, errbuf, errlen);
		else if (strcmp(topic, PW_TOPIC_GATE_VERDICTS) == 0)
			st = handle_verdict(b, msg, now, errbuf, errlen);
		else if (strcmp(topic, PW_TOPIC_TRIAGE) == 0)
			st = handle_triage(b, msg, now, errbuf, errlen);
		else
			st = handle_point(b, msg, now, errbuf, errlen);
		if (st != PW_OK)
			goto fail;
	}
	double t1 = pw_mono_s();
	/* the messages go out while PostgreSQL works; the flush below waits for them */
	st = publish(b, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	st = pw_bstore_put_baselines(b->pg, b->sc.rec, b->sc.rec_fresh, b->sc.nrec, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	for (size_t i = 0; i < b->sc.nalerts; i++) {
		st = pw_bstore_put_alert(b->pg, &b->sc.alerts[i], errbuf, errlen);
		if (st != PW_OK)
			goto fail;
	}
	for (size_t i = 0; i < b->sc.nexcursions; i++) {
		st = pw_bstore_put_excursion(b->pg, &b->sc.excursions[i], errbuf, errlen);
		if (st != PW_OK)
			goto fail;
	}
	st = pw_bstore_put_progress(b->pg, b->table, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	double t2 = pw_mono_s();
	/* delivered before the commit: a crash in between re-derives the same messages */
	st = pw_producer_flush(b->prod, b->flush_timeout_ms, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	double t3 = pw_mono_s();
	st = pw_pg_commit(b->pg, errbuf, errlen);
	if (st != PW_OK) {
		drop_state(b);
		return st;
	}
	for (size_t i = 0; i < pw_series_table_count(b->table); i++)
		pw_series_table_at(b->table, i)->touched = false;
	remember_outliers(b);
	double t4 = pw_mono_s();
	update_cache(b);
	double t5 = pw_mono_s();
	b->phase_s[0] = t1 - t0;
	b->phase_s[1] = t2 - t1;
	b->phase_s[2] = t3 - t2;
	b->phase_s[3] = t4 - t3;
	b->phase_s[4] = t5 - t4;
	b->batches++;
	if (b->m) {
		pw_metric_observe(b->m->batch_seconds, NULL, pw_mono_s() - t0);
		pw_metric_set(b->m->series, NULL, (double)pw_series_table_count(b->table));
	}
	return PW_OK;
fail:
	{
		char rb[256];
		(void)pw_pg_rollback(b->pg, rb, sizeof rb);
	}
	pw_log_warn(b->lg, "batch of %zu messages failed, state reloads from postgresql: %s", n,
	            errbuf);
	drop_state(b);
	return st;
}
