/*
 * pw_outbox.h: the transactional outbox every service publishes its decisions
 * through — one table, perfwatch.outbox, for every service.
 *
 * A decision and the messages that announce it must both happen or neither:
 * a service writes the packed messages with pw_outbox_add in the same
 * PostgreSQL transaction as the decision, and after that transaction commits
 * pw_outbox_publish sends the unpublished rows, waits for the broker's
 * acknowledgements and only then marks them published. A service killed
 * between the commit and the acknowledgement sends the rows again when it
 * starts. A service killed after the acknowledgement but before the mark
 * would send them twice: instead every message carries the header
 * PW_OUTBOX_HEADER (service/id/sends), and a publisher that may be in that
 * case (the row was written before the publisher started, a round of it
 * failed, or the row is older than a publish takes) first reads the row's
 * topic from the row's time onwards and marks the rows it finds there
 * published without sending them again. So a
 * message is on its topic once; pw_outbox_resend is the one way to send it
 * again, on purpose. Consumers still key on the message's natural id: a peer
 * instance that picks up a dead instance's fresh rows, or a publisher without
 * brokers to read (pw_outbox_opts), can still send a row twice.
 *
 * Rows carry the producing service's name, so that one table and one index
 * serve every service and an operator looks in one place for what is stuck
 * (docs/architecture.md says why one table rather than one per service). A
 * publisher claims its rows with FOR UPDATE SKIP LOCKED, so several threads
 * or instances of one service never send the same row twice at once, and
 * publishes in bounded batches, oldest first. `ref` groups the rows of one
 * decision (a release evaluation, a changepoint, a bisection step) so that a
 * redelivered request can ask for its decision's messages again
 * (pw_outbox_resend). The schema is migrations/0019_outbox.sql.
 */
#ifndef PW_OUTBOX_H
#define PW_OUTBOX_H

#include <stddef.h>
#include <stdint.h>

#include "pw_kafka.h"
#include "pw_metrics.h"
#include "pw_pg.h"
#include "pw_status.h"

/*
 * The source_topic of an outbox row's dead letter (perfwatch.dead_letters,
 * DeadLetter.source_topic): the table, partition 0, offset the row's id. The
 * topic it was meant for is in the detail and its payload_type.
 */
#define PW_OUTBOX_DLQ_SOURCE "perfwatch.outbox"

/* The header every outbox message carries: "<service>/<row id>/<sends>". */
#define PW_OUTBOX_HEADER "perfwatch-outbox"

/*
 * Appends one message to the outbox inside the caller's open transaction on
 * pg. service, ref, topic and key are text (ref may be NULL), payload len
 * bytes. Nothing is sent until pw_outbox_publish. PW_OK, or pw_pg's error;
 * PW_ERR_TOO_LARGE, with nothing written, when key and payload together are
 * over the topic's limit (pw_topic_publish_limit: 1,000,000 bytes for a
 * topic at the broker's default): the row could never be published, so the
 * caller sets aside what asked for it (pw_service_failure_reason: a dead
 * letter with reason oversize) instead of blocking the rows behind it.
 */
pw_status pw_outbox_add(pw_pg *pg, const char *service, const char *ref, const char *topic,
                        const char *key, const void *payload, size_t len, char *errbuf,
                        size_t errlen);

/*
 * Marks every row of (service, ref) unpublished again, in the caller's
 * transaction, so that the next publish sends them again (a new copy on the
 * topic: the row's `sends` counts up). *n (may be NULL) gets the rows marked.
 */
pw_status pw_outbox_resend(pw_pg *pg, const char *service, const char *ref, size_t *n,
                           char *errbuf, size_t errlen);

typedef struct pw_outbox pw_outbox;

typedef struct pw_outbox_opts {
	const char *service;   /* rows of this service only; copied */
	size_t batch;          /* rows per publish round; 0 = 512 */
	int flush_timeout_ms;  /* wait for acknowledgements; 0 = 10000 */
	int queue_wait_ms;     /* wait for local queue room per message; 0 = 5000 */
	/* where the publisher looks for rows it sent before (the header above); brokers NULL:
	 * it does not look, and a row acknowledged just before a crash is sent again */
	const char *brokers;   /* copied */
	const pw_kv *props;    /* kafka.* pass-through; borrowed, must outlive the handle */
	size_t nprops;
} pw_outbox_opts;

/*
 * A publisher over pg and producer (both borrowed, used from the caller's
 * thread only, must outlive the handle). metrics (may be NULL) gets
 * perfwatch_outbox_published_total{service,topic},
 * perfwatch_outbox_dead_lettered_total{service,topic} and
 * perfwatch_outbox_pending{service} (registered once per registry).
 */
pw_status pw_outbox_new(pw_outbox **out, pw_pg *pg, pw_producer *producer, pw_metrics *metrics,
                        const pw_outbox_opts *o, const pw_log *lg, char *errbuf, size_t errlen);

/*
 * Publishes every unpublished row of the service, in rounds of at most
 * `batch` rows: claim (own transaction, FOR UPDATE SKIP LOCKED), look on the
 * topics for the rows that may have gone out already (the header above:
 * rows written before the handle was made, rows of a failed round, and rows
 * claimed PW_OUTBOX_STALE_S after they were written), produce the others, wait for
 * every acknowledgement, mark published, commit. *published (may be
 * NULL) gets the rows that left the outbox. On a delivery failure or timeout
 * the round's rows stay unpublished and the error is returned (retriable);
 * rows already marked stay marked. A row that can never be published (over
 * its topic's limit, or refused as too large by the producer or the broker)
 * is not retried: it is dead-lettered (reason oversize, source
 * PW_OUTBOX_DLQ_SOURCE at offset = its id, in perfwatch.dead_letters and on
 * perf.dlq.v1) and marked (published_at and dead_lettered_at, with
 * dead_letter_reason and dead_letter_detail) in the round's transaction, and
 * the rows behind it are published; perfwatch_outbox_dead_lettered_total
 * {service,topic} counts it. Must not be called inside an open transaction
 * on pg.
 */
pw_status pw_outbox_publish(pw_outbox *o, size_t *published, char *errbuf, size_t errlen);

/* A row claimed this long after it was written (or resent) may have been sent already. */
#define PW_OUTBOX_STALE_S 30

/* Unpublished rows of the service (a count query). */
pw_status pw_outbox_pending(pw_outbox *o, int64_t *n, char *errbuf, size_t errlen);

/* Frees the handle; NULL is allowed. Does not touch the rows. */
void pw_outbox_free(pw_outbox *o);

#endif
