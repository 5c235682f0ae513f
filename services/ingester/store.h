/*
 * store.h: the ingester's batch — validate every run, write the good ones to
 * PostgreSQL in one transaction, then publish their SeriesPoints and the
 * bad ones' DeadLetters.
 *
 * main.c creates one pw_ingester with its connections and hands
 * pw_ingester_batch to the consumer loop of pw_kafka.h, with this ingester's
 * producer as the loop's outputs: the loop commits the batch's offsets only
 * after this returned PW_OK and the points and dead letters it produced were
 * acknowledged, which it checks after handing over the next batch, so the
 * broker round trip overlaps the next transaction. The order inside a batch is
 * what makes delivery exactly-once in effect: decode and validate
 * (validate.h) → BEGIN → series ids (new series inserted ON CONFLICT DO
 * NOTHING: a new HLO fingerprint is a new series) → look the batch's run
 * keys up in runs; a run found is a duplicate (same run id and repeat, same
 * payload SHA-256) or a conflict (same key, other payload: dead-lettered) →
 * COPY the other runs, their samples and their op timings straight into
 * their tables (a concurrent writer of the same key makes the runs COPY fail
 * on the unique index, and the batch is redone one run per transaction) →
 * COMMIT → publish a SeriesPoint per sample of every accepted or duplicate
 * run (keyed by series key), and record each bad message with pw_dlq_record
 * (its perfwatch.dead_letters row, ON CONFLICT DO NOTHING, and its
 * DeadLetter: after the commit, so that a transaction redone one run at a
 * time sends none twice) → (the loop) wait for the delivery reports. A crash anywhere before the offset commit replays the batch (with
 * a held one, both): the database writes are no-ops the second time, the
 * messages are sent again (at least once). Memory is bounded by the batch: everything a batch
 * allocates is freed before the callback returns, COPY data is streamed in
 * 256 KiB chunks, and the series-id cache is capped.
 */
#ifndef PW_INGEST_STORE_H
#define PW_INGEST_STORE_H

#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_metrics.h"
#include "pw_pg.h"
#include "pw_status.h"
#include "validate.h"

typedef struct pw_ingester pw_ingester;

/*
 * Series key → series id, committed ids only, shared by the workers of one
 * process so that a series one worker created is not resolved again by the
 * others. Holds at most max ids (emptied when full). PW_ERR_NOMEM.
 */
typedef struct pw_series_cache pw_series_cache;
pw_status pw_series_cache_new(pw_series_cache **out, size_t max);
void pw_series_cache_free(pw_series_cache *c);

typedef struct pw_ingest_opts {
	int64_t max_age_us;        /* validation: see pw_ingest_limits */
	int64_t max_future_us;
	size_t max_payload;
	int flush_timeout_ms;      /* waiting for local queue space (default 30000); main.c gives
	                              the consumer loop the same bound for delivery reports */
	size_t series_cache_max;   /* series ids kept in memory (default 1,000,000) */
	pw_series_cache *series_cache; /* shared with other workers; NULL: the ingester's own */
	const char *points_topic;  /* NULL: PW_TOPIC_POINTS */
} pw_ingest_opts;

/* What the ingester has done; read with pw_ingester_counts. */
typedef struct pw_ingest_counts {
	uint64_t batches;
	uint64_t runs_accepted;
	uint64_t samples_accepted;  /* samples rows newly written */
	uint64_t duplicates;        /* runs dropped as duplicates (same run id, repeat and payload) */
	uint64_t rejected[16];      /* dead-lettered runs by DlqReason */
	uint64_t points_published;
	uint64_t series_created;
} pw_ingest_counts;

/* The ingester's metric families: registered once per process, shared by its workers. */
typedef struct pw_ingest_metrics {
	pw_metric *runs, *samples, *dups, *rejected, *points, *series, *batch_s, *batch_n;
} pw_ingest_metrics;

/* Registers the families in reg and fills *m. PW_ERR_INVALID (already registered), PW_ERR_NOMEM. */
pw_status pw_ingest_metrics_register(pw_metrics *reg, pw_ingest_metrics *m, char *errbuf,
                                     size_t errlen);

/*
 * One ingester per worker: pg, producer, lg and m (may be NULL: no metrics)
 * are borrowed and must outlive it; pg and producer are this worker's own
 * (neither is shared between threads). PW_ERR_NOMEM.
 */
pw_status pw_ingester_new(pw_ingester **out, pw_pg *pg, pw_producer *producer, const pw_log *lg,
                          const pw_ingest_metrics *m, const pw_ingest_opts *o, char *errbuf,
                          size_t errlen);
void pw_ingester_free(pw_ingester *ing);

/* The pw_batch_fn of pw_kafka.h; ctx is the pw_ingester. */
pw_status pw_ingester_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                            size_t errlen);

void pw_ingester_counts_get(const pw_ingester *ing, pw_ingest_counts *out);

#endif
