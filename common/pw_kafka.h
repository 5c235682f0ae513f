/*
 * pw_kafka.h: the Kafka producer and the commit-after-work consumer loop every
 * service uses, on top of librdkafka.
 *
 * The delivery rules of docs/architecture.md live here so that no service has
 * to get them right on its own: the producer is idempotent (acks=all) and
 * counts every delivery report, so a caller can learn that everything it
 * produced reached the broker before it commits its own input; the consumer
 * hands batches to a callback that does the work (typically one PostgreSQL
 * transaction, see pw_pg.h) and commits the batch's offsets only after the
 * callback returned PW_OK, otherwise it rewinds and retries after a backoff
 * (pw_backoff.h). Configuration arrives as librdkafka property pairs (pw_kv,
 * the "kafka.*" pass-through of pw_config.h); the topic names are in
 * pw_topics.h. Logging goes to the caller's pw_log; nothing here is global.
 *
 * Threading: a pw_producer may be used from one thread at a time; a
 * pw_consumer is driven by the one thread that calls pw_consumer_run.
 */
#ifndef PW_KAFKA_H
#define PW_KAFKA_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "pw_config.h" /* pw_kv: the "kafka.*" pass-through pairs */
#include "pw_log.h"
#include "pw_status.h"

/* ---------------------------------------------------------------- producer */

typedef struct pw_producer pw_producer;

/* Delivery accounting since the producer was created. */
typedef struct pw_producer_counts {
	uint64_t produced;  /* accepted into the local queue */
	uint64_t delivered; /* delivery report without error */
	uint64_t failed;    /* delivery report with an error (message lost unless re-produced) */
} pw_producer_counts;

/*
 * Creates an idempotent producer. brokers (bootstrap.servers) may be NULL when
 * props carry "bootstrap.servers". props (nprops pairs, may be NULL) are
 * applied in order; enable.idempotence=true and acks=all are then enforced
 * (a conflicting caller value is overridden with a warning). lg is borrowed
 * and must outlive the producer. Returns PW_OK and *out, or PW_ERR_CONFIG for
 * an unknown property or bad value, PW_ERR_KAFKA when librdkafka refuses, and
 * PW_ERR_NOMEM; *out is NULL on failure.
 */
pw_status pw_producer_new(pw_producer **out, const char *brokers, const pw_kv *props,
                          size_t nprops, const pw_log *lg, char *errbuf, size_t errlen);

/*
 * Enqueues one message. key (keylen bytes, may be NULL) and payload (len
 * bytes) are copied; the caller keeps ownership of both. The topic handle is
 * created on first use and cached. When the local queue is full, delivery
 * reports are served (pw_producer_poll) and the enqueue retried for up to
 * queue_wait_ms (0 = do not wait); still full after that returns
 * PW_ERR_TIMEOUT ("local queue full") and the message is NOT enqueued — the
 * caller decides, nothing is dropped silently. PW_ERR_INVALID for a payload
 * over message.max.bytes, PW_ERR_KAFKA for a fatal (idempotence) error or any
 * other refusal.
 */
pw_status pw_producer_produce(pw_producer *p, const char *topic, const void *key, size_t keylen,
                              const void *payload, size_t len, int queue_wait_ms,
                              char *errbuf, size_t errlen);

/*
 * pw_producer_produce with one header on the message: hname and hvalue
 * (text, copied); hname NULL is no header.
 */
pw_status pw_producer_produce_hdr(pw_producer *p, const char *topic, const void *key,
                                  size_t keylen, const void *payload, size_t len,
                                  const char *hname, const char *hvalue, int queue_wait_ms,
                                  char *errbuf, size_t errlen);

/*
 * Serves delivery reports and error events for up to timeout_ms (0 = only
 * what is ready). Call it regularly (e.g. every few hundred produces); returns
 * the number of events served.
 */
int pw_producer_poll(pw_producer *p, int timeout_ms);

/*
 * Waits up to timeout_ms until every message produced so far has a delivery
 * report. Returns PW_OK only when nothing is outstanding AND no delivery
 * failed since the previous pw_producer_flush (the window then restarts);
 * PW_ERR_KAFKA naming the count and last error when some failed (the caller
 * must not commit its input: re-process it); PW_ERR_TIMEOUT when reports are
 * still outstanding (the failure window is kept for the next flush).
 */
pw_status pw_producer_flush(pw_producer *p, int timeout_ms, char *errbuf, size_t errlen);

/*
 * Delivery generations, for a caller that keeps working while the reports of
 * earlier messages arrive (see pw_consumer_opts.outputs). Every message joins
 * the producer's open generation; pw_producer_seal closes it, returns its
 * number and opens the next, so a caller can mark "everything produced so
 * far" and ask about it later. Numbers grow by one per seal (at most 16
 * generations are tracked at once; beyond that a seal keeps the open one,
 * which only widens what a later settle waits for).
 */
uint64_t pw_producer_seal(pw_producer *p);

/*
 * Serves delivery reports for up to timeout_ms (0 = only what is ready) until
 * every message of generations up to gen has one. PW_OK when they all
 * arrived without error; PW_ERR_KAFKA naming the count and last error when
 * one failed (the caller must not commit the input that produced them);
 * either way those generations are then forgotten. PW_ERR_TIMEOUT when
 * reports are still outstanding (nothing is forgotten; ask again). The
 * failure window of pw_producer_flush is separate and unaffected.
 */
pw_status pw_producer_settle(pw_producer *p, uint64_t gen, int timeout_ms, char *errbuf,
                             size_t errlen);

/* Copies the counters into *out. */
void pw_producer_counts_get(const pw_producer *p, pw_producer_counts *out);

/*
 * The error of the latest delivery report that failed
 * (RD_KAFKA_RESP_ERR_NO_ERROR before any did), so that a caller whose flush
 * failed can tell a message the broker refuses as too large
 * (RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE) from a broker that is away.
 */
rd_kafka_resp_err_t pw_producer_last_error(const pw_producer *p);


/*
 * Flushes for up to 10 s (logging what remains undelivered), then destroys
 * the producer. Accepts NULL.
 */
void pw_producer_free(pw_producer *p);

/* ------------------------------------------------------ batch bookkeeping */

/*
 * The span of one partition in a batch: the offset of its first message (where
 * to seek back to for a retry) and the offset after its last message (what to
 * commit). topic is borrowed from the messages of the batch.
 */
typedef struct pw_partition_span {
	const char *topic;
	int32_t partition;
	int64_t first;
	int64_t next;
} pw_partition_span;

/*
 * Adds the position of one message to the span table spans[0..*n) of capacity
 * cap: widens the (topic, partition) span, or appends a new span. Pure; topics
 * are compared by content. Returns PW_OK, PW_ERR_INVALID for a negative
 * offset, or PW_ERR_NOMEM when a new span would exceed cap (*n unchanged).
 */
pw_status pw_partition_spans_add(pw_partition_span *spans, size_t *n, size_t cap,
                                 const char *topic, int32_t partition, int64_t offset);

/*
 * Commits, for consumer group `group`, the current end offset of every
 * partition of topics[0..ntopics) (partition counts from pw_topics.h), so
 * that members joining the group afterwards start there: what the topics held
 * before is skipped, and nothing published after the call is. For a new
 * deployment that must not replay history, a demo, or a test on a shared
 * broker. Unlike auto.offset.reset=latest it has no race with messages
 * published while the group joins. The group must have no active members.
 * *npartitions (may be NULL) gets the partitions committed. PW_ERR_INVALID
 * for a topic not in pw_topics.h, PW_ERR_KAFKA when the broker refuses.
 */
pw_status pw_kafka_group_commit_ends(const char *brokers, const char *group,
                                     const char *const *topics, size_t ntopics,
                                     size_t *npartitions, char *errbuf, size_t errlen);

/*
 * The consumer lag of group `group` on topics[0..ntopics): the sum over their
 * partitions of end offset − committed offset (− the start offset where the
 * group committed nothing). 0 means the group has committed everything
 * published so far. Errors as pw_kafka_group_commit_ends.
 */
pw_status pw_kafka_group_lag(const char *brokers, const char *group, const char *const *topics,
                             size_t ntopics, int64_t *lag, char *errbuf, size_t errlen);

/* --------------------------------------------------------------- consumer */

typedef struct pw_consumer pw_consumer;

/*
 * Messages a group member will never read: the partition's next offset jumped
 * forward past offsets that were never handed to the callback. On a topic
 * that is not compacted (pw_topics.h) offsets are consecutive, so a jump
 * means the broker deleted those messages (retention, or records deleted by
 * an operator) before the group read them, and librdkafka reset the fetch
 * position to the log's start: data loss, never a silent skip. The position
 * expected is the group's committed offset when the partition is first read
 * after an assignment, then the offset after each message seen.
 */
typedef struct pw_consumer_loss {
	const char *topic;  /* borrowed for the call */
	int32_t partition;
	int64_t expected;   /* the offset the group was to read next */
	int64_t resumed_at; /* the first offset the broker still had */
	int64_t lost;       /* resumed_at - expected */
} pw_consumer_loss;

/* A group member's state, reported every few seconds (pw_consumer_opts.on_health). */
typedef struct pw_consumer_health {
	/*
	 * Messages published but not yet read by this member, summed over the
	 * partitions assigned to it, per subscribed topic (topics[i] is
	 * pw_consumer_opts.topics[i]; lag[i] is -1 when no partition of that topic
	 * is assigned or the broker's end is not known yet). The end is the high
	 * watermark of the member's latest fetch, so an idle member reports the
	 * lag of its last fetch.
	 */
	const char *const *topics;
	const int64_t *lag;
	size_t ntopics;
	/* How long every broker has been unreachable, in ms; 0 while one answers. */
	int64_t brokers_down_ms;
} pw_consumer_health;

/*
 * The work to do for one batch. msgs[0..n) are the batch's messages in
 * arrival order (offsets increase within each partition), none of them an
 * error event; they are owned by the loop, valid until the callback returns,
 * and the callback must NOT destroy them. Return PW_OK only when the effect of
 * every message is durable (e.g. the PostgreSQL transaction committed); any
 * other code leaves the batch uncommitted, and the same messages are handed
 * to the callback again after a backoff. Bad input must therefore be handled
 * (dead-lettered) inside the callback and still return PW_OK. errbuf
 * (errlen bytes) is where the callback says why it failed.
 */
typedef pw_status (*pw_batch_fn)(void *ctx, rd_kafka_message_t *const *msgs, size_t n,
                                 char *errbuf, size_t errlen);

typedef struct pw_consumer_opts {
	const char *brokers;          /* bootstrap.servers; NULL when in props */
	const char *group_id;         /* group.id; required */
	const char *const *topics;    /* topics to subscribe */
	size_t ntopics;               /* at least 1 */
	const pw_kv *props;           /* librdkafka pass-through, may be NULL */
	size_t nprops;
	/*
	 * partition.assignment.strategy unless props set it; NULL:
	 * cooperative-sticky. "range" for topics that must be co-partitioned
	 * (pw_service_input.co_partitioned).
	 */
	const char *assignment;
	size_t batch_max_msgs;        /* 0 = 1000 */
	int batch_max_ms;             /* 0 = 500: a batch is handed over this long after its first message */
	uint32_t retry_backoff_ms;    /* 0 = 200: first wait after a failed batch */
	uint32_t retry_backoff_max_ms;/* 0 = 30000: cap of the wait */
	/*
	 * The producer the callback publishes its results to, or NULL. When set,
	 * the callback does not wait for delivery reports (no pw_producer_flush):
	 * after it returns PW_OK the loop seals the producer's generation and
	 * holds the batch, hands over the next one, and commits the held batch
	 * once every message produced up to its seal is acknowledged. The broker
	 * round trip of one batch thus overlaps the work of the next. A held
	 * batch is also committed between batches as soon as its reports are in,
	 * before a rebalance gives its partitions away, and at stop. A delivery
	 * failure, or no reports within outputs_timeout_ms, rewinds to the held
	 * batch's first offsets like a failed callback. The producer is used from
	 * the loop's thread only and must outlive the consumer.
	 */
	pw_producer *outputs;
	int outputs_timeout_ms;       /* 0 = 30000 */
	/*
	 * Called from the loop's thread: on_loss for every jump of
	 * pw_consumer_loss (after the loop logged it as an error), on_health
	 * every health_interval_ms (0 = 2000) and when the brokers' state
	 * changes. Either may be NULL; arg is passed through. They must not
	 * block and must not call back into the consumer.
	 */
	void (*on_loss)(void *arg, const pw_consumer_loss *loss);
	void (*on_health)(void *arg, const pw_consumer_health *health);
	void *health_arg;
	int health_interval_ms;
} pw_consumer_opts;

/* What the loop has done so far. */
typedef struct pw_consumer_counts {
	uint64_t batches;        /* batches committed */
	uint64_t messages;       /* messages in committed batches */
	uint64_t failed_batches; /* callback returned an error (batch retried) */
	uint64_t dropped_batches;/* abandoned on revoke or shutdown, uncommitted */
	uint64_t commit_errors;  /* offset commit failed after the work was done */
	uint64_t error_events;   /* consumer error events logged */
	uint64_t assignments;    /* partition assignments received (1 + one per rebalance) */
	uint64_t revocations;    /* partition revocations (rebalances and the final close) */
	uint64_t rewind_retries; /* seeks of a failed batch tried again (see spans_rewind) */
	uint64_t loss_events;    /* jumps reported through on_loss (pw_consumer_loss) */
	uint64_t lost_messages;  /* the messages they skipped */
} pw_consumer_counts;

/*
 * Creates a consumer in group o->group_id subscribed to o->topics, with
 * enable.auto.commit=false, enable.auto.offset.store=false and (unless props
 * say otherwise) auto.offset.reset=earliest and
 * partition.assignment.strategy=cooperative-sticky: a member joining or
 * leaving moves only the partitions that change owner, the others keep being
 * read. (librdkafka 2.0 aborts when a cooperative member is destroyed after
 * joining but before its first assignment; pw_consumer_run and
 * pw_consumer_free therefore wait, within the session timeout, for that
 * first assignment before they close.) o and the strings it points to
 * are read during the call only; lg is borrowed and must outlive the
 * consumer. Returns PW_OK and *out, PW_ERR_INVALID for missing options,
 * PW_ERR_CONFIG for a bad property, PW_ERR_KAFKA or PW_ERR_NOMEM; *out is
 * NULL on failure.
 */
pw_status pw_consumer_new(pw_consumer **out, const pw_consumer_opts *o, const pw_log *lg,
                          char *errbuf, size_t errlen);

/*
 * Runs the loop until *stop becomes non-zero (a flag the caller owns and its
 * SIGTERM handler sets). Gathers up to batch_max_msgs messages or for
 * batch_max_ms after the first one, calls fn(ctx, ...), and on PW_OK commits
 * the batch's next offsets per partition synchronously (with o->outputs,
 * once its outputs are acknowledged: see pw_consumer_opts). On an error return it
 * seeks every partition of the batch back to its first offset, waits a
 * capped, jittered backoff (checking *stop) and reads the batch again. A
 * rebalance revoke drops the uncommitted batch (the next owner re-reads it).
 * Partition EOF and transient broker errors are logged, not fatal. On stop:
 * a gathered batch is handed over once more (committed on PW_OK), a batch in
 * retry is abandoned; then the consumer leaves the group
 * (rd_kafka_consumer_close). Returns PW_OK after a requested stop, PW_ERR_KAFKA
 * on a fatal client error (the consumer is closed too), PW_ERR_NOMEM.
 * The loop can be run once per consumer.
 */
pw_status pw_consumer_run(pw_consumer *c, pw_batch_fn fn, void *ctx,
                          volatile sig_atomic_t *stop, char *errbuf, size_t errlen);

/* Copies the counters into *out. */
void pw_consumer_counts_get(const pw_consumer *c, pw_consumer_counts *out);

/*
 * The librdkafka handle, borrowed, e.g. for rd_kafka_committed() in tests.
 * Do not poll it or destroy it.
 */
rd_kafka_t *pw_consumer_handle(pw_consumer *c);

/*
 * Closes the consumer if pw_consumer_run did not (leaving the group without
 * committing anything), destroys it and frees c. Accepts NULL.
 */
void pw_consumer_free(pw_consumer *c);

/* ------------------------------------------------------------------ reader */

/*
 * A reader: every partition of one topic, read outside any consumer group.
 * It joins nothing and commits nothing, so each process that has one sees
 * the whole topic, however a group shares the topic's partitions among its
 * members; where it starts is the caller's (e.g. a position kept in
 * PostgreSQL). The watcher reads the fleet-change feed through one
 * (docs/architecture.md). Used from one thread.
 */
typedef struct pw_reader pw_reader;

/* Called for each message read; a code other than PW_OK stops the catch-up. */
typedef pw_status (*pw_reader_fn)(void *ctx, const rd_kafka_message_t *msg, char *errbuf,
                                  size_t errlen);

/*
 * Creates a reader of topic (one of pw_topics.h, whose partition count it
 * takes). props are the kafka.* pass-through; the settings of a group member
 * among them (group.id, group.instance.id, session and assignment settings,
 * commits) are left out. group_id is only the client's (librdkafka's assign
 * wants one): nothing joins it or commits to it. Call pw_reader_start next.
 */
pw_status pw_reader_new(pw_reader **out, const char *brokers, const pw_kv *props, size_t nprops,
                        const char *topic, const char *group_id, const pw_log *lg,
                        char *errbuf, size_t errlen);

/* The topic's partition count. */
int32_t pw_reader_partitions(const pw_reader *r);

/*
 * Starts partition p at offset at[p] (pw_reader_partitions entries; a
 * negative offset, or at NULL: the topic's first message still kept).
 */
pw_status pw_reader_start(pw_reader *r, const int64_t *at, char *errbuf, size_t errlen);

/*
 * Reads until every partition is read to the end the broker reports (asked
 * of the broker at each check, not from a cache), handing each message to fn
 * in offset order per partition, for up to timeout_ms. *at_end says whether
 * the end was reached. A failing fn's code is returned at once; the message
 * it refused counts as unread. pw_reader_rewind then goes back to where this
 * call started (e.g. when the caller's transaction over those messages failed).
 * PW_ERR_UNAVAILABLE when the broker cannot say where a partition ends.
 */
pw_status pw_reader_catch_up(pw_reader *r, int timeout_ms, pw_reader_fn fn, void *ctx,
                             bool *at_end, char *errbuf, size_t errlen);

/*
 * Starts every partition at its first message stamped at or after ts_ms
 * (milliseconds since the epoch; the broker's offsets-for-times), or at its
 * end when it has none.
 */
pw_status pw_reader_start_at_time(pw_reader *r, int64_t ts_ms, char *errbuf, size_t errlen);

/*
 * Messages the broker deleted before the reader reached them: a partition
 * whose log now starts past the reader's position, or whose next message
 * comes after a jump (on a topic that is not compacted). Each is logged as
 * an error ("data loss: ...") when found; this is their count.
 */
uint64_t pw_reader_lost(const pw_reader *r);

/* The offset after the last message of partition handed out (or the start, or -1). */
int64_t pw_reader_next(const pw_reader *r, int32_t partition);

/* Goes back to where the last pw_reader_catch_up started. */
pw_status pw_reader_rewind(pw_reader *r, char *errbuf, size_t errlen);

/* Stops and frees the reader. Accepts NULL. */
void pw_reader_free(pw_reader *r);

/* ------------------------------------------------------------------- probe */

/*
 * A probe of the cluster: a thread of its own asks a broker for metadata
 * every interval_ms (0 = 1000) and keeps whether one answered. It is what a
 * service's /readyz reads to learn that no broker is reachable, whatever its
 * workers are doing (a worker blocked in a flush or a commit polls nothing,
 * and librdkafka reports the brokers down only when polled). brokers and
 * props as for pw_producer_new (the consumer's settings are left out); lg is
 * borrowed. PW_ERR_CONFIG, PW_ERR_KAFKA or PW_ERR_NOMEM on failure.
 */
typedef struct pw_kafka_probe pw_kafka_probe;

pw_status pw_kafka_probe_start(pw_kafka_probe **out, const char *brokers, const pw_kv *props,
                               size_t nprops, int interval_ms, const pw_log *lg, char *errbuf,
                               size_t errlen);

/* How long no broker has answered, in ms; 0 while the last request was answered. Any thread. */
int64_t pw_kafka_probe_down_ms(const pw_kafka_probe *p);

/* Stops the thread and frees the probe. Accepts NULL. */
void pw_kafka_probe_stop(pw_kafka_probe *p);

#endif
