/*
 * baseliner.h: one batch of the baseliner service — points and fleet changes
 * in, baselines, freezes and infra-health alerts out.
 *
 * main.c builds a pw_baseliner (connections, the series table, metrics) and
 * hands pw_baseliner_batch to the consumer loop (pw_kafka.h). For each batch
 * it opens one PostgreSQL transaction, feeds every point of the baseline
 * build line (build kinds nightly and release; rc and bisect points are
 * candidates, never the null) to its series (series_table.h, loading the
 * series from PostgreSQL on first sight, baseliner_store.h), freezes the
 * series a fleet change selects (at once for those whose latest point
 * matches, and in measurement time for a point measured after a change its
 * series' previous point preceded), writes the effects idempotently, produces
 * the Baseline and Alert messages and waits for their delivery, and only then
 * commits; the Redis cache is updated after the commit. Undecodable input
 * goes to perf.dlq.v1. If anything fails, the transaction is rolled back and
 * the series table dropped, so that the redelivered batch starts again from
 * what PostgreSQL holds.
 */
#ifndef PW_BASELINER_H
#define PW_BASELINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "baseliner_store.h"
#include "perfwatch/v1/changepoint.pb-c.h"
#include "perfwatch/v1/dlq.pb-c.h"
#include "perfwatch/v1/fleet.pb-c.h"
#include "perfwatch/v1/gate.pb-c.h"
#include "perfwatch/v1/page.pb-c.h"
#include "perfwatch/v1/series.pb-c.h"
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_metrics.h"
#include "pw_pg.h"
#include "pw_redis.h"
#include "series_table.h"

/* The metric families the baseliner updates (registered by pw_baseliner_metrics_register). */
typedef struct pw_baseliner_metrics {
	pw_metric *points;        /* counter {outcome}: used, skipped_build, skipped_seen, invalid */
	pw_metric *fleet_changes; /* counter */
	pw_metric *fleet_wide_changes; /* counter: fleet_wide events (alert on any) */
	pw_metric *updates;       /* counter: new baseline versions */
	pw_metric *freezes;       /* counter */
	pw_metric *unfreezes;     /* counter */
	pw_metric *quarantines;   /* counter */
	pw_metric *outliers;      /* counter */
	pw_metric *excursion_points; /* counter */
	pw_metric *redis_fallbacks; /* counter {path}: cache_write (baseliner), read (API readers) */
	pw_metric *dead_letters;  /* counter */
	pw_metric *batch_seconds; /* histogram */
	pw_metric *series;        /* gauge: series in memory */
	pw_metric *rebaseline_jobs; /* counter: REBASELINE jobs put into the outbox (issue 17) */
	pw_metric *changepoints;  /* counter {action}: track, withdraw, ignore, invalid */
	pw_metric *accepted_shifts; /* counter {outcome}: accepted, fixed */
} pw_baseliner_metrics;

/* Registers the families above in reg. PW_ERR_INVALID / PW_ERR_NOMEM. */
pw_status pw_baseliner_metrics_register(pw_metrics *reg, pw_baseliner_metrics *m,
                                        char *errbuf, size_t errlen);

/* Committed outlier alerts kept for a fleet-wide group's reclassification. */
#define PW_BASELINER_RECENT 256

/* Growing arrays of one batch's effects; owned by the pw_baseliner. */
typedef struct pw_baseliner_scratch {
	pw_baseline_record *rec;  /* baselines to publish and store (version > 0), in order */
	bool *rec_fresh;          /* rec[i]'s version was created in this batch (else: a state change) */
	size_t nrec, caprec;
	pw_bstore_alert *alerts;
	size_t nalerts, capalerts;
	pw_bstore_excursion *excursions;
	size_t nexcursions, capexcursions;
} pw_baseliner_scratch;

typedef struct pw_baseliner {
	const pw_log *lg;          /* borrowed */
	pw_pg *pg;                 /* borrowed; used by the consumer thread only */
	pw_redis *rd;              /* borrowed; may be NULL (no cache) */
	pw_baseline_cache_batch *cache_pending; /* the last batch's cache writes, replies unread */
	pw_producer *prod;         /* borrowed */
	pw_series_table *table;    /* owned by main */
	pw_fleet_log *fleet;       /* owned by main; may be NULL (no event-time freezes) */
	pw_baseliner_metrics *m;   /* borrowed; may be NULL */
	/* first-signal routing (first_signal.h): fleet changes this long before an
	 * outlier explain it; fw (borrowed, may be NULL) tracks fleet-wide groups */
	int64_t signal_overlap_us;
	pw_fleet_wide *fw;
	uint64_t outlier_seq;      /* tags of outliers in fw */
	pw_bstore_alert *recent;   /* ring of the last PW_BASELINER_RECENT committed outlier alerts */
	const char *gpu_prefixes;  /* borrowed, e.g. "h100,b200,gpu" */
	int flush_timeout_ms;      /* wait for delivery reports before commit */
	bool need_known;           /* load perfwatch.baseliner_series before the next batch */
	bool rebaseline_request;   /* a freeze asks the executor for its runs (issue 17); default true */
	uint32_t accept_after_nightlies; /* a tracked shift is accepted after this many (accept.h); 0 never */
	size_t dirty;              /* entries whose cache is stale (Redis failed) */
	bool redis_lost;           /* Redis was unreachable: resync every series when it answers */
	pw_baseliner_scratch sc;
	/* seconds the last committed batch spent applying messages (loads,
	 * decisions, freezes, alerts), writing baselines and progress, producing
	 * and flushing, committing, updating Redis: for the benchmark and logs */
	double phase_s[5];
	/* counters for tests and logs */
	uint64_t batches, points, updates, freezes, unfreezes, quarantines, outliers, excursion_points;
	uint64_t outliers_unconfirmed, outliers_reclassified;
	uint64_t rebaseline_jobs;  /* REBASELINE jobs put into the outbox */
	uint64_t shifts_accepted, shifts_fixed;
} pw_baseliner;

/*
 * Sets the fields of b that have no owner elsewhere (scratch, counters,
 * need_known = true); the caller fills the borrowed pointers.
 */
void pw_baseliner_init(pw_baseliner *b);

/*
 * Reads the replies of the last batch's cache writes (a batch sends them and
 * the next one reads them, so that Redis works while the batch after goes
 * on). Call it before using the batch's pw_redis for anything else, and at
 * the end; pw_baseliner_release does.
 */
void pw_baseliner_cache_settle(pw_baseliner *b);

/* Frees the scratch arrays. */
void pw_baseliner_release(pw_baseliner *b);

/*
 * The door of perf.points.v1: decodes one SeriesPoint payload and checks
 * what the baseliner needs of it before anything else sees it — the wire
 * form (no NUL, valid UTF-8 in every string: pw_input_check_wire), the
 * protobuf decode, a series key shorter than PW_ST_KEY_MAX, and a series
 * key, a series id and a finite value. Returns
 * PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED with *out the point (the
 * caller frees it with perfwatch__v1__series_point__free_unpacked), or the
 * dead letter's reason with *out NULL and the detail in detail.
 */
Perfwatch__V1__DlqReason pw_baseliner_point_decode(const void *payload, size_t len,
                                                   Perfwatch__V1__SeriesPoint **out, char *detail,
                                                   size_t detail_len);

/*
 * The door of perf.fleet-changes.v1, as pw_baseliner_point_decode: the wire
 * form, the decode, an event_id of 1 to 63 bytes, and a selector (or
 * fleet_wide set: an event with no selector would freeze every series).
 * *identified is set when the payload decoded and named an event (counted
 * in perfwatch_baseliner_fleet_changes_total even when refused after that).
 * PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED with *out the event (freed
 * by the caller with perfwatch__v1__fleet_change_event__free_unpacked), or the
 * dead letter's reason with *out NULL and the detail in detail.
 */
Perfwatch__V1__DlqReason pw_baseliner_fleet_decode(const void *payload, size_t len,
                                                   Perfwatch__V1__FleetChangeEvent **out,
                                                   bool *identified, char *detail,
                                                   size_t detail_len);

/*
 * The door of perf.changepoints.v1 (accepted shifts, accept.h), as
 * pw_baseliner_point_decode: the wire form, the decode, a stage and an
 * annotation this build knows (INVALID_VALUE otherwise), a changepoint_id, a
 * series key shorter than PW_ST_KEY_MAX and a series id; for a shift to
 * track (pw_accept_cp_action_of) also a first_shifted_build_id, a measured
 * time after 1970 and up to PW_TIME_MAX_US, and finite, distinct levels. *out is freed by the caller with
 * perfwatch__v1__changepoint__free_unpacked.
 */
Perfwatch__V1__DlqReason pw_baseliner_changepoint_decode(const void *payload, size_t len,
                                                         Perfwatch__V1__Changepoint **out,
                                                         char *detail, size_t detail_len);

/*
 * The door of perf.gate.verdicts.v1 (waived regressions, accept.h): the wire
 * form and the decode; every series result with verdict WAIVED needs a
 * series key shorter than PW_ST_KEY_MAX, a series id, a waiver_id of 1 to
 * 127 bytes and finite, distinct baseline and candidate medians (the rest of
 * the verdict is not the baseliner's). *out is freed by the caller with
 * perfwatch__v1__gate_verdict__free_unpacked.
 */
Perfwatch__V1__DlqReason pw_baseliner_verdict_decode(const void *payload, size_t len,
                                                     Perfwatch__V1__GateVerdict **out,
                                                     char *detail, size_t detail_len);

/*
 * The door of perf.triage.v1 (true regressions accepted, accept.h): the wire
 * form, the decode, a page_id of 1 to 127 bytes and an outcome (none:
 * MISSING_FIELD; one this build does not know: INVALID_VALUE). *out is freed
 * by the caller with perfwatch__v1__triage_verdict__free_unpacked. (A page
 * perfwatch.pages does not hold is dead-lettered by the batch, which looks.)
 */
Perfwatch__V1__DlqReason pw_baseliner_triage_decode(const void *payload, size_t len,
                                                    Perfwatch__V1__TriageVerdict **out,
                                                    char *detail, size_t detail_len);

/* The pw_batch_fn: ctx is a pw_baseliner. See the file comment. */
pw_status pw_baseliner_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n,
                             char *errbuf, size_t errlen);

#endif
