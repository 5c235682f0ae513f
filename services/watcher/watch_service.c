/*
 * watch_service.c: the changepoint watcher (issue 7, §4.3b) as a pw_service
 * — what its consumer worker does with a batch. main.c declares the service;
 * pw_service.c runs it.
 *
 * The worker consumes perf.points.v1 (nightly builds only),
 * perf.fleet-changes.v1 and perf.baselines.v1; each series is one
 * pw_watch_series (watch.h) in the series table (watch_table.h), loaded from
 * PostgreSQL on first sight (watch_store.h). A batch is one PostgreSQL
 * transaction holding the batch's changepoints, alerts and their outbox rows
 * (pw_outbox.h); after it commits the runtime flushes the batch's dead
 * letters, moves the offsets and publishes the outbox, marking rows published
 * only once the broker acknowledged them. The decisions are watch.c's and
 * watch_emit.c's; this file only moves data between them and the outside.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "watch_emit.h"
#include "perfwatch/v1/baseline.pb-c.h"
#include "perfwatch/v1/dlq.pb-c.h"
#include "perfwatch/v1/fleet.pb-c.h"
#include "perfwatch/v1/series.pb-c.h"
#include "pw_dlq.h"
#include "pw_time.h"
#include "pw_config.h"
#include "pw_input.h"
#include "pw_http.h"
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_metrics.h"
#include "pw_pg.h"
#include "pw_status.h"
#include "pw_topics.h"
#include "watch_table.h"
#include "watch_store.h"
#include "watch.h"
#include "watch_config.h"
#include "watch_door.h"
#include "watch_service.h"

#define ERRLEN 1024

typedef struct watcher_metrics {
	pw_metric *points;       /* {result} */
	pw_metric *changepoints; /* {routing, annotation} */
	pw_metric *append_s;
	pw_metric *series;
	pw_metric *fleet;
	pw_metric *feed_waits;   /* batches deferred until the fleet feed was read */
	pw_metric *feed_read;    /* {result}: fleet changes read by the instance's own feed reader */
	pw_metric *dead_letters; /* {topic} */
	pw_metric *reload_s;
	pw_metric *rebuilds;
	pw_metric *cache_reads;  /* perfwatch_baseline_cache_reads_total{outcome} */
	pw_metric *registrations; /* registered changes that rebuilt a series held in memory */
	pw_metric *detection_s;  /* seconds from the revealing nightly point to its changepoint */
} watcher_metrics;

/* Series keys collected during a batch. */
typedef struct key_list {
	char **ids;
	size_t n, cap;
} key_list;

typedef struct watcher_app {
	const pw_log *lg;
	pw_service_worker *w;  /* the one consumer worker: its connections */
	pw_pg *pg;             /* w->pg */
	pw_baseline_reader baselines; /* over w->rd and w->pg */
	watcher_metrics m;
	pw_watch_table *table;
	pw_watch_params params;
	const char *page_route;
	pw_watch_event *ev; /* room for one append's events */
	size_t evcap;
	size_t series_hint; /* watcher.series_hint */
	key_list stale;     /* series keys to rebuild from PostgreSQL before the batch commits */
	const pw_config *cfg;
	pw_reader *feed;        /* this instance's reader of the whole fleet-change feed */
	bool feed_started;      /* positioned where the group had committed */
	double feed_at_end_s;   /* pw_mono_s() when the reader was last seen at the feed's end */
	uint64_t revocations;   /* the consumer's partition revocations when the last batch began */
	int64_t registered_upto_us; /* the newest registration seen (perfwatch.expected_wins) */
	double registered_at_s;     /* pw_mono_s() of the last look for new registrations */
} watcher_app;


/* how stale the fleet-change feed's end may be when a batch of points is judged */
#define FEED_CHECK_S 0.1
/* ---------------------------------------------------------------- output */

static pw_status dead_letter(watcher_app *app, const rd_kafka_message_t *msg,
                             Perfwatch__V1__DlqReason reason, const char *payload_type,
                             const char *detail, char *errbuf, size_t errlen)
{
	pw_status st = pw_service_dead_letter(app->w, msg, payload_type, reason, detail, errbuf,
	                                      errlen);
	if (st == PW_OK)
		pw_metric_inc(app->m.dead_letters, (const char *[]){rd_kafka_topic_name(msg->rkt)});
	return st;
}

static pw_status ids_add(key_list *o, const char *id)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 64;
		char **ids = realloc(o->ids, cap * sizeof *ids);
		if (!ids)
			return PW_ERR_NOMEM;
		o->ids = ids;
		o->cap = cap;
	}
	if (!(o->ids[o->n] = strdup(id)))
		return PW_ERR_NOMEM;
	o->n++;
	return PW_OK;
}

static void keys_clear(key_list *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->ids[i]);
	o->n = 0;
}

/* --------------------------------------------------------------- events */

static pw_status handle_event(watcher_app *app, pw_watch_entry *e, pw_watch_event *ev,
                              char *errbuf, size_t errlen)
{
	pw_status st;
	/* the database may know a fleet change this process has not seen (yet) */
	if (ev->annotation == PW_WATCH_ANNOTATION_NONE && e->has_env) {
		pw_watch_fleet_mark mark;
		size_t n = 0;
		st = pw_watch_store_fleet_marks(app->pg, &e->env, ev->last_clean.ts_us,
		                                ev->first_shifted.ts_us, 1, &mark, &n, errbuf, errlen);
		if (st != PW_OK)
			return st;
		if (n == 1)
			pw_watch_event_set_infra(ev, mark.event_id);
	}
	pw_watch_info info = {.series_id = e->series_id, .series_key = e->key, .unit = e->unit};
	pw_watch_msgs *m = malloc(sizeof *m);
	uint8_t *cp_pb = NULL, *alert_pb = NULL;
	if (!m) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory building messages");
		goto out;
	}
	pw_watch_msgs_build(m, ev, &info, app->page_route, pw_now_us());
	if (ev->stage == PW_WATCH_STAGE_REGISTERED && ev->revises) {
		/* the validated win revises the alert of the report it replaces */
		uint32_t rev = 0;
		st = pw_watch_store_alert_revision(app->pg, m->alert_id, &rev, errbuf, errlen);
		if (st != PW_OK)
			goto out;
		ev->alert_revision = rev + 1;
		m->alert.revision = pw_watch_alert_revision(ev);
	}
	size_t cp_len = perfwatch__v1__changepoint__get_packed_size(&m->cp);
	size_t alert_len = perfwatch__v1__alert__get_packed_size(&m->alert);
	cp_pb = malloc(cp_len + 1);
	alert_pb = malloc(alert_len + 1);
	if (!cp_pb || !alert_pb) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory packing messages");
		goto out;
	}
	perfwatch__v1__changepoint__pack(&m->cp, cp_pb);
	perfwatch__v1__alert__pack(&m->alert, alert_pb);
	bool inserted = false;
	st = pw_watch_store_event(app->pg, m, ev, cp_pb, cp_len, alert_pb, alert_len, &inserted,
	                          errbuf, errlen);
	if (st != PW_OK)
		goto out;
	if (inserted) {
		/* detection latency (the smoke tier's SLO, < 4 h from the nightly): from
		 * the measurement of the newest point of the series, the one that revealed
		 * the shift, to the changepoint stored */
		if (e->has_last) {
			double lat = (double)(pw_now_us() - e->last.ts_us) / 1e6;
			pw_metric_observe(app->m.detection_s, NULL, lat > 0.0 ? lat : 0.0);
		}
		pw_metric_inc(app->m.changepoints,
		              (const char *[]){pw_watch_routing_name(ev->routing),
		                               pw_watch_annotation_name(ev->annotation)});
		pw_log_write(app->lg, PW_LOG_INFO,
		             (const char *[]){"changepoint", m->changepoint_id, "routing",
		                              pw_watch_routing_name(ev->routing), "annotation",
		                              pw_watch_annotation_name(ev->annotation), NULL},
		             "%s", m->summary);
	}
out:
	free(cp_pb);
	free(alert_pb);
	free(m);
	return st;
}

/* Appends one point to the entry and handles what it reveals. */
static pw_status append_point(watcher_app *app, pw_watch_entry *e, double value,
                              const pw_watch_build *build, const pw_watch_point_key *key,
                              const pw_watch_env *env, char *errbuf, size_t errlen)
{
	if (e->has_last && pw_watch_point_key_cmp(key, &e->last) <= 0) {
		if (pw_watch_entry_has_seen(e, key)) { /* a redelivery, or reloaded already */
			pw_metric_inc(app->m.points, (const char *[]){"duplicate"});
			return PW_OK;
		}
		/* older than the newest and new to us: the stream cannot take it in place, so
		 * the series is rebuilt from perfwatch.samples (which holds it) before commit */
		pw_metric_inc(app->m.points, (const char *[]){"late"});
		if (!e->stale) {
			e->stale = true;
			return ids_add(&app->stale, e->key) == PW_OK
			               ? PW_OK
			               : pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
		}
		return PW_OK;
	}
	e->env = *env;
	e->has_env = true;
	size_t nev = 0;
	double t0 = pw_mono_s();
	pw_status st = pw_watch_series_append(e->series, value, build, app->ev, app->evcap, &nev,
	                                      errbuf, errlen);
	pw_metric_observe(app->m.append_s, NULL, pw_mono_s() - t0);
	if (st != PW_OK)
		return st;
	e->last = *key;
	e->has_last = true;
	pw_watch_entry_remember(e, key);
	pw_metric_inc(app->m.points, (const char *[]){"appended"});
	for (size_t i = 0; i < nev; i++)
		if ((st = handle_event(app, e, &app->ev[i], errbuf, errlen)) != PW_OK)
			return st;
	return PW_OK;
}

/*
 * The entry of a series seen for the first time since start: its row, the
 * emitted changepoints, the fleet changes that selected it and its recent
 * nightly points, loaded into the stream and scanned once (shifts the window
 * shows that are not stored yet are handled like live ones). *out NULL with PW_ERR_NOT_FOUND when the series is
 * not in perfwatch.series.
 */
static pw_status load_series(watcher_app *app, const char *key, pw_watch_entry **out,
                             char *errbuf, size_t errlen)
{
	double t0 = pw_mono_s();
	*out = NULL;
	pw_watch_entry *e = NULL;
	pw_watch_loaded l;
	pw_status st = pw_watch_store_load(&app->baselines, key, &app->params, &l, NULL, errbuf,
	                                   errlen);
	if (st != PW_OK)
		goto fail;
	pw_watch_series *s = pw_watch_loaded_series(&l, &app->params, errbuf, errlen);
	if (!s) {
		st = PW_ERR_NOMEM;
		goto fail;
	}
	e = pw_watch_entry_new(key, s, app->params.max_points);
	if (!e) {
		pw_watch_series_free(s);
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory adding series \"%s\"", key);
		goto fail;
	}
	e->series_id = l.row.series_id;
	snprintf(e->model, sizeof e->model, "%s", l.row.model);
	snprintf(e->unit, sizeof e->unit, "%s", l.row.unit);
	e->lower_is_better = l.row.lower_is_better;
	for (size_t i = 0; i < l.npoints; i++) {
		e->last = l.points[i].key;
		e->has_last = true;
		pw_watch_entry_remember(e, &l.points[i].key);
		e->env = l.points[i].env;
		e->has_env = true;
	}
	pw_metric_add(app->m.points, (const char *[]){"reloaded"}, (double)l.npoints);
	/* one scan over the window, the early rule as a stream of the loaded points had it */
	size_t nev = 0;
	st = pw_watch_series_scan_loaded(s, l.npoints, app->ev, app->evcap, &nev, errbuf, errlen);
	for (size_t i = 0; st == PW_OK && i < nev; i++)
		st = handle_event(app, e, &app->ev[i], errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	pw_watch_loaded_release(&l);
	st = pw_watch_table_put(app->table, e);
	if (st != PW_OK)
		return pw_fail(st, errbuf, errlen, "adding series \"%s\" to the table: %s", key,
		               pw_strerror(st));
	pw_metric_set(app->m.series, NULL, (double)pw_watch_table_count(app->table));
	pw_metric_observe(app->m.reload_s, NULL, pw_mono_s() - t0);
	*out = e;
	return PW_OK;
fail:
	pw_watch_loaded_release(&l);
	pw_watch_entry_free(e);
	return st;
}

/* ------------------------------------------------------------- messages */

static pw_status on_point(watcher_app *app, const rd_kafka_message_t *msg, char *errbuf,
                          size_t errlen)
{
	char bad[512];
	Perfwatch__V1__SeriesPoint *p = NULL;
	bool skip = false;
	Perfwatch__V1__DlqReason refused =
		pw_watch_point_decode(msg->payload, msg->len, &p, &skip, bad, sizeof bad);
	if (refused != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return dead_letter(app, msg, refused, "perfwatch.v1.SeriesPoint", bad, errbuf, errlen);
	pw_status st = PW_OK;
	if (skip) {
		pw_metric_inc(app->m.points, (const char *[]){"not_nightly"});
		goto out;
	}
	pw_watch_entry *e = pw_watch_table_get(app->table, p->series_key);
	if (!e) {
		st = load_series(app, p->series_key, &e, errbuf, errlen);
		if (st == PW_ERR_NOT_FOUND) {
			char why[ERRLEN];
			snprintf(why, sizeof why, "%s", errbuf);
			st = dead_letter(app, msg, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNKNOWN_REFERENCE,
			                 "perfwatch.v1.SeriesPoint", why, errbuf, errlen);
			goto out;
		}
		if (st != PW_OK)
			goto out;
	}
	pw_watch_build b;
	memset(&b, 0, sizeof b);
	snprintf(b.build_id, sizeof b.build_id, "%s", p->build->build_id);
	snprintf(b.cl, sizeof b.cl, "%s", p->build->cl);
	b.cl_number = p->build->cl_number;
	b.ts_us = p->measured_unix_us;
	pw_watch_point_key k;
	memset(&k, 0, sizeof k);
	k.ts_us = p->measured_unix_us;
	snprintf(k.run_id, sizeof k.run_id, "%s", p->run_id);
	k.repeat_index = p->repeat_index;
	pw_watch_env env;
	memset(&env, 0, sizeof env);
	snprintf(env.platform, sizeof env.platform, "%s", p->key ? p->key->platform : "");
	snprintf(env.chip_set, sizeof env.chip_set, "%s", p->chip_set);
	snprintf(env.cell, sizeof env.cell, "%s", p->cell);
	snprintf(env.firmware, sizeof env.firmware, "%s", p->firmware);
	snprintf(env.harness, sizeof env.harness, "%s", p->harness_version);
	st = append_point(app, e, p->value, &b, &k, &env, errbuf, errlen);
out:
	perfwatch__v1__series_point__free_unpacked(p, NULL);
	return st;
}

/* Marks the change on every watched series it selects (a mark already there
 * is kept once: the group's feed partition and the instance's own reader both
 * bring it); returns how many. */
static size_t apply_fleet_change(watcher_app *app, const Perfwatch__V1__FleetChangeEvent *fc)
{
	pw_watch_selectors sel;
	pw_watch_selectors_from_proto(&sel, fc);
	size_t it = 0, hit = 0;
	for (pw_watch_entry *e; (e = pw_watch_table_next(app->table, &it));)
		if (e->has_env && pw_watch_selectors_match(&sel, &e->env)) {
			pw_watch_series_fleet_change(e->series, fc->event_id, fc->occurred_unix_us);
			hit++;
		}
	return hit;
}

/* The fleet-change messages of the group's batches: stored, applied, and the
 * bad ones dead-lettered (here only: the member that owns the feed partition
 * is the one that sees them in its batches). */
static pw_status on_fleet_change(watcher_app *app, const rd_kafka_message_t *msg, char *errbuf,
                                 size_t errlen)
{
	char why[512];
	Perfwatch__V1__FleetChangeEvent *fc = NULL;
	Perfwatch__V1__DlqReason refused =
		pw_watch_fleet_decode(msg->payload, msg->len, &fc, why, sizeof why);
	if (refused != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return dead_letter(app, msg, refused, "perfwatch.v1.FleetChangeEvent", why, errbuf,
		                   errlen);
	pw_status st;
	st = pw_watch_store_fleet_change(app->pg, fc, errbuf, errlen);
	if (st == PW_ERR_INVALID) {
		snprintf(why, sizeof why, "%s", errbuf);
		st = dead_letter(app, msg, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED,
		                 "perfwatch.v1.FleetChangeEvent", why, errbuf, errlen);
		goto out;
	}
	if (st != PW_OK)
		goto out;
	size_t hit = apply_fleet_change(app, fc);
	pw_metric_inc(app->m.fleet, NULL);
	pw_log_info(app->lg, "fleet change \"%s\" selects %zu watched series", fc->event_id, hit);
out:
	perfwatch__v1__fleet_change_event__free_unpacked(fc, NULL);
	return st;
}

static pw_status on_baseline(watcher_app *app, const rd_kafka_message_t *msg, char *errbuf,
                             size_t errlen)
{
	char bad[512];
	Perfwatch__V1__Baseline *b = NULL;
	bool tombstone = false;
	Perfwatch__V1__DlqReason refused =
		pw_watch_baseline_decode(msg->payload, msg->len, &b, &tombstone, bad, sizeof bad);
	if (refused != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return dead_letter(app, msg, refused, "perfwatch.v1.Baseline", bad, errbuf, errlen);
	/* a series not watched yet reads its state from perfwatch.baselines when first seen */
	pw_watch_entry *e = tombstone ? NULL : pw_watch_table_get(app->table, b->series_key);
	if (e)
		pw_watch_series_set_frozen(e->series,
		                           b->state == PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_FROZEN,
		                           b->freeze_event_id);
	perfwatch__v1__baseline__free_unpacked(b, NULL);
	return PW_OK;
}

/* Drops every entry: after a failed batch, memory may be ahead of PostgreSQL. */
static void forget_series(watcher_app *app)
{
	pw_watch_table *fresh = pw_watch_table_new(app->series_hint);
	if (!fresh)
		return; /* keep the old one; the next failure tries again */
	pw_watch_table_free(app->table);
	app->table = fresh;
	pw_metric_set(app->m.series, NULL, 0);
}

/* Rebuilds the series that received late points, from PostgreSQL, inside the batch. */
static pw_status rebuild_stale(watcher_app *app, char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	for (size_t i = 0; i < app->stale.n && st == PW_OK; i++) {
		pw_watch_entry *e = NULL;
		pw_watch_table_remove(app->table, app->stale.ids[i]);
		st = load_series(app, app->stale.ids[i], &e, errbuf, errlen);
		pw_metric_inc(app->m.rebuilds, NULL);
	}
	keys_clear(&app->stale);
	return st;
}

/*
 * One fleet change as this instance's own reader of the feed brings it, in
 * the transaction of the catch-up: stored (ON CONFLICT DO NOTHING: the
 * member that owns the feed partition stores it too) and applied. A change
 * that cannot be decoded or stored is skipped: that member dead-letters it.
 */
static pw_status feed_message(void *ctx, const rd_kafka_message_t *msg, char *errbuf,
                              size_t errlen)
{
	watcher_app *app = ctx;
	char why[512];
	Perfwatch__V1__FleetChangeEvent *fc = NULL;
	if (pw_watch_fleet_decode(msg->payload, msg->len, &fc, why, sizeof why) !=
	    PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) {
		pw_metric_inc(app->m.feed_read, (const char *[]){"skipped"});
		return PW_OK;
	}
	/* the catch-up's transaction, begun at its first change (most catch-ups read none) */
	pw_status st = pw_pg_in_transaction(app->pg) ? PW_OK : pw_pg_begin(app->pg, errbuf, errlen);
	if (st == PW_OK)
		st = pw_watch_store_fleet_change(app->pg, fc, errbuf, errlen);
	if (st == PW_ERR_INVALID) {
		pw_metric_inc(app->m.feed_read, (const char *[]){"skipped"});
		st = PW_OK;
	} else if (st == PW_OK) {
		size_t hit = apply_fleet_change(app, fc);
		pw_metric_inc(app->m.feed_read, (const char *[]){"applied"});
		pw_log_info(app->lg, "fleet change \"%s\" read from the feed at offset %lld: selects %zu watched series",
		            fc->event_id, (long long)msg->offset, hit);
	}
	perfwatch__v1__fleet_change_event__free_unpacked(fc, NULL);
	return st;
}

/*
 * A shift must not be judged before the fleet changes that may explain it
 * have been read: the points and the feed are fetched independently, and
 * after a restart or behind a backlog the points can run ahead of the feed.
 * The group gives the feed's partition to one member only, so every
 * instance reads the whole feed through a reader of its own (pw_reader: no
 * group membership, no commits), positioned at start where the group had
 * committed on the feed: everything before is in perfwatch.fleet_changes
 * (the group commits after the transaction that stored it), where a series
 * loaded on first sight reads its marks. Before a batch with points the
 * reader is brought to the feed's end, the changes it read stored and
 * applied in one transaction (none when it read none); PW_ERR_UNAVAILABLE (the loop rewinds the batch and retries
 * after a backoff) while it is not there yet.
 */
static pw_status fleet_feed_read(watcher_app *app, rd_kafka_message_t *const *msgs, size_t n,
                                 char *errbuf, size_t errlen)
{
	bool has_points = false;
	for (size_t i = 0; i < n && !has_points; i++)
		has_points = strcmp(rd_kafka_topic_name(msgs[i]->rkt), PW_TOPIC_POINTS) == 0;
	pw_consumer *consumer = pw_service_worker_consumer(app->w);
	if (!has_points || !consumer || !app->feed)
		return PW_OK;
	/* the feed's end is a broker round trip: asked at most every
	 * FEED_CHECK_S, so that a backlog of points is not one round trip per
	 * batch (quiet-week's 176,640 points fell 33,000 behind after 150 s). A
	 * change published within that time of a point may be applied after the
	 * point's batch; a fetch wait bounded it the same way before. */
	if (app->feed_started && pw_mono_s() - app->feed_at_end_s < FEED_CHECK_S)
		return PW_OK;
	pw_status st;
	if (!app->feed_started) {
		int32_t np = pw_reader_partitions(app->feed);
		int64_t at[64];
		rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(np);
		for (int32_t p = 0; p < np; p++)
			rd_kafka_topic_partition_list_add(l, PW_TOPIC_FLEET_CHANGES, p);
		rd_kafka_resp_err_t err = rd_kafka_committed(pw_consumer_handle(consumer), l, 5000);
		for (int32_t p = 0; p < np && p < 64; p++)
			at[p] = err == RD_KAFKA_RESP_ERR_NO_ERROR ? l->elems[p].offset : -1;
		rd_kafka_topic_partition_list_destroy(l);
		if (err != RD_KAFKA_RESP_ERR_NO_ERROR || np > 64)
			return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen,
			               "could not read the group's position on %s: %s",
			               PW_TOPIC_FLEET_CHANGES, rd_kafka_err2str(err));
		if ((st = pw_reader_start(app->feed, at, errbuf, errlen)) != PW_OK)
			return st;
		app->feed_started = true;
		pw_log_info(app->lg, "reading %s from offset %lld (what the group had committed)",
		            PW_TOPIC_FLEET_CHANGES, (long long)at[0]);
	}
	bool at_end = false;
	st = pw_reader_catch_up(app->feed, 2000, feed_message, app, &at_end, errbuf, errlen);
	if (st == PW_OK && pw_pg_in_transaction(app->pg))
		st = pw_pg_commit(app->pg, errbuf, errlen);
	if (st != PW_OK) {
		char rb[ERRLEN];
		if (pw_pg_in_transaction(app->pg))
			pw_pg_rollback(app->pg, rb, sizeof rb);
		/* memory may hold marks PostgreSQL does not: read them again */
		forget_series(app);
		if (pw_reader_rewind(app->feed, rb, sizeof rb) != PW_OK)
			pw_log_error(app->lg, "%s", rb);
		return st == PW_ERR_UNAVAILABLE ? st : pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen,
		                                               "reading %s: %s", PW_TOPIC_FLEET_CHANGES,
		                                               errbuf);
	}
	if (at_end)
		app->feed_at_end_s = pw_mono_s();
	if (!at_end) {
		pw_metric_inc(app->m.feed_waits, NULL);
		return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen,
		               "%s read to offset %lld, not to its end yet: points wait for the fleet changes",
		               PW_TOPIC_FLEET_CHANGES, (long long)pw_reader_next(app->feed, 0));
	}
	return PW_OK;
}

/* how often new registrations are looked for, and how far back (their
 * transactions may commit out of registered_at order) */
#define REGISTERED_CHECK_S 1.0
#define REGISTERED_OVERLAP_US (60LL * 1000000)

/* A registration read by new_registrations: a series held that does not
 * apply it yet is rebuilt from PostgreSQL, with it, before the batch commits. */
static pw_status registration_seen(void *arg, const char *series_key, int64_t cl_number,
                                   double expected_pct)
{
	watcher_app *app = arg;
	pw_watch_entry *e = pw_watch_table_get(app->table, series_key);
	if (!e || e->stale || pw_watch_series_registered(e->series, cl_number, expected_pct))
		return PW_OK;
	e->stale = true;
	pw_metric_inc(app->m.registrations, NULL);
	pw_log_info(app->lg, "series \"%s\" has a new registered change (cl %lld, %+.2f%%): rebuilt "
	            "as observed - expected", series_key, (long long)cl_number, expected_pct);
	return ids_add(&app->stale, series_key);
}

/*
 * Registered changes stored since the last look (the gate stores a release's
 * expected wins as it receives the request, usually after the nightlies of
 * the CL were judged): a series held in memory that does not apply one is
 * rebuilt in this batch, so that its points are judged as observed −
 * expected and a report made before the registration is revised (watch.h
 * pw_watch_series_register). Series loaded later read theirs when loaded.
 */
static pw_status new_registrations(watcher_app *app, char *errbuf, size_t errlen)
{
	if (app->registered_at_s && pw_mono_s() - app->registered_at_s < REGISTERED_CHECK_S)
		return PW_OK;
	app->registered_at_s = pw_mono_s();
	int64_t since = app->registered_upto_us > REGISTERED_OVERLAP_US
	                        ? app->registered_upto_us - REGISTERED_OVERLAP_US
	                        : 0;
	return pw_watch_store_registered_since(app->pg, since, registration_seen, app,
	                                       &app->registered_upto_us, errbuf, errlen);
}

pw_status pw_watcher_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                           size_t errlen)
{
	watcher_app *app = ctx;
	/*
	 * Partitions revoked since the last batch: a series whose partition went
	 * to another member may come back after that member took points of it,
	 * and the entry held here would miss them (appending onto a gapped
	 * history). Every entry is dropped and loaded again from PostgreSQL at
	 * its next point, as after a restart; rebalances are rare.
	 */
	pw_consumer *consumer = pw_service_worker_consumer(app->w);
	if (consumer) {
		pw_consumer_counts cc;
		pw_consumer_counts_get(consumer, &cc);
		if (cc.revocations != app->revocations) {
			pw_log_info(app->lg, "partitions were revoked since the last batch: every series is loaded "
			            "again from PostgreSQL at its next point");
			forget_series(app);
			app->revocations = cc.revocations;
		}
	}
	pw_status st = fleet_feed_read(app, msgs, n, errbuf, errlen);
	if (st != PW_OK) {
		pw_log_info(app->lg, "batch of %zu messages deferred: %s", n, errbuf);
		return st;
	}
	st = pw_pg_begin(app->pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	st = new_registrations(app, errbuf, errlen);
	/* fleet changes first: a batch's points are then judged knowing them */
	for (int pass = 0; pass < 2 && st == PW_OK; pass++)
		for (size_t i = 0; i < n && st == PW_OK; i++) {
			const char *topic = rd_kafka_topic_name(msgs[i]->rkt);
			bool fleet = strcmp(topic, PW_TOPIC_FLEET_CHANGES) == 0;
			if (pass == 0 && fleet)
				st = on_fleet_change(app, msgs[i], errbuf, errlen);
			else if (pass == 1 && strcmp(topic, PW_TOPIC_POINTS) == 0)
				st = on_point(app, msgs[i], errbuf, errlen);
			else if (pass == 1 && strcmp(topic, PW_TOPIC_BASELINES) == 0)
				st = on_baseline(app, msgs[i], errbuf, errlen);
		}
	if (st == PW_OK)
		st = rebuild_stale(app, errbuf, errlen);
	if (st == PW_OK)
		st = pw_pg_commit(app->pg, errbuf, errlen);
	if (st != PW_OK) {
		keys_clear(&app->stale);
		char rb[ERRLEN];
		if (pw_pg_in_transaction(app->pg))
			pw_pg_rollback(app->pg, rb, sizeof rb);
		forget_series(app);
		pw_log_error(app->lg, "batch of %zu messages failed, retrying: %s", n, errbuf);
		return st;
	}
	return PW_OK; /* the runtime flushes the dead letters and publishes the outbox */
}

/* ------------------------------------------------------------ life cycle */

static pw_status register_metrics(watcher_app *app, pw_metrics *r, char *errbuf, size_t errlen)
{
	static const double append_buckets[] = {1e-6, 5e-6, 1e-5, 5e-5, 1e-4, 2.5e-4,
	                                        5e-4, 1e-3, 5e-3, 1e-2, 5e-2};
	/* seconds: the smoke tier's 4 h SLO (14400) is a bucket bound */
	static const double detection_buckets[] = {300, 900, 1800, 3600, 7200, 10800,
	                                           14400, 21600, 43200, 86400, 259200};
	watcher_metrics *m = &app->m;
	pw_status st;
	if ((st = pw_metrics_counter(r, "perfwatch_watcher_points_total",
	                             "points consumed, by what was done with them",
	                             (const char *const[]){"result", NULL}, &m->points, errbuf,
	                             errlen)) != PW_OK ||
	    (st = pw_metrics_counter(r, "perfwatch_watcher_changepoints_total",
	                             "changepoints stored, by routing and annotation",
	                             (const char *const[]){"routing", "annotation", NULL},
	                             &m->changepoints, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_histogram(r, "perfwatch_watcher_append_seconds",
	                               "time to append one point and look for shifts", NULL,
	                               append_buckets,
	                               sizeof append_buckets / sizeof append_buckets[0],
	                               &m->append_s, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_histogram(r, "perfwatch_watcher_reload_seconds",
	                               "time to load one series from PostgreSQL on first sight",
	                               NULL, NULL, 0, &m->reload_s, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_gauge(r, "perfwatch_watcher_series", "series held in memory", NULL,
	                           &m->series, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_counter(r, "perfwatch_watcher_rebuilds_total",
	                             "series rebuilt from PostgreSQL because a point came late",
	                             NULL, &m->rebuilds, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_counter(r, "perfwatch_watcher_fleet_changes_total",
	                             "fleet-change events applied", NULL, &m->fleet, errbuf,
	                             errlen)) != PW_OK ||
	    (st = pw_metrics_counter(r, "perfwatch_watcher_fleet_feed_waits_total",
	                             "batches deferred until the fleet-change feed was read",
	                             NULL, &m->feed_waits, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_counter(r, "perfwatch_watcher_fleet_feed_read_total",
	                             "fleet changes read by the instance's own reader of the feed, "
	                             "by what was done (applied; skipped: undecodable or refused, "
	                             "dead-lettered by the member owning the feed partition)",
	                             (const char *const[]){"result", NULL}, &m->feed_read, errbuf,
	                             errlen)) != PW_OK ||
	    (st = pw_metrics_counter(r, "perfwatch_watcher_dead_letters_total",
	                             "messages sent to perf.dlq.v1, by source topic",
	                             (const char *const[]){"topic", NULL}, &m->dead_letters, errbuf,
	                             errlen)) != PW_OK ||
	    (st = pw_metrics_counter(r, "perfwatch_watcher_registrations_total",
	                             "registered changes (perfwatch.expected_wins) that rebuilt a "
	                             "series held in memory as observed - expected",
	                             NULL, &m->registrations, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_histogram(r, "perfwatch_watcher_detection_seconds",
	                               "seconds from the measurement of the nightly point that "
	                               "revealed a changepoint to the changepoint stored",
	                               NULL, detection_buckets,
	                               sizeof detection_buckets / sizeof detection_buckets[0],
	                               &m->detection_s, errbuf, errlen)) != PW_OK ||
	    (st = pw_baseline_cache_metric(r, &m->cache_reads, errbuf, errlen)) != PW_OK)
		return st;
	return PW_OK;
}

pw_status pw_watcher_init(pw_service *svc, void **out, char *errbuf, size_t errlen)
{
	const pw_config *cfg = pw_service_config(svc);
	watcher_app *app = calloc(1, sizeof *app);
	if (!app)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory at start-up");
	*out = app;
	app->lg = pw_service_log(svc);
	pw_status st = pw_watch_params_from_config(cfg, &app->params, errbuf, errlen);
	if (st != PW_OK)
		return PW_ERR_CONFIG;
	app->page_route = pw_config_get_str(cfg, "watcher.page_route");
	/* PELT's shifts, plus confirmations, withdrawals and one early report */
	app->evcap = app->params.max_points / app->params.cp.min_segment + 2 + PW_WATCH_MAX_PROVISIONAL;
	app->ev = calloc(app->evcap, sizeof *app->ev);
	app->series_hint = (size_t)pw_config_get_int(cfg, "watcher.series_hint");
	app->table = pw_watch_table_new(app->series_hint);
	if (!app->ev || !app->table)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory at start-up");
	app->cfg = cfg;
	return register_metrics(app, pw_service_metrics(svc), errbuf, errlen);
}

pw_status pw_watcher_worker_init(void *ctx, pw_service_worker *w, char *errbuf, size_t errlen)
{
	watcher_app *app = ctx;
	w->ctx = app;
	if (w->input < 0)
		return PW_OK; /* the main thread only publishes the outbox */
	/* one consumer worker (the input declares no workers_key): the series table is its own */
	app->w = w;
	app->pg = w->pg;
	pw_baseline_reader_init(&app->baselines, w->rd, w->pg, app->m.cache_reads);
	/* the instance's own view of the whole fleet-change feed (fleet_feed_read) */
	char group[512];
	snprintf(group, sizeof group, "%s.feed-reader", pw_config_get_str(app->cfg, "kafka.group.id"));
	size_t nprops = 0;
	const pw_kv *props = pw_config_kafka_props(app->cfg, &nprops);
	return pw_reader_new(&app->feed, pw_config_get_str(app->cfg, "kafka.bootstrap.servers"), props,
	                     nprops, PW_TOPIC_FLEET_CHANGES, group, app->lg, errbuf, errlen);
}

void pw_watcher_release(void *ctx)
{
	watcher_app *app = ctx;
	pw_reader_free(app->feed);
	pw_watch_table_free(app->table);
	keys_clear(&app->stale);
	free(app->stale.ids);
	free(app->ev);
	free(app);
}
