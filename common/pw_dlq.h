/*
 * pw_dlq.h: dead letters — the one shape in which every service sets aside
 * input it cannot use (docs/architecture.md: bad input never crashes a
 * service and is never dropped silently).
 *
 * A DeadLetter (proto/perfwatch/v1/dlq.proto) carries the reason, a detail
 * line, the service and the payload type it expected, the source topic,
 * partition and offset, and the original key and payload bytes, so that the
 * message can be inspected and replayed. Every consumer records every dead
 * letter in both places through one function, pw_dlq_record: a row of
 * perfwatch.dead_letters (the whole original key and payload, one row per
 * source position and consuming service) and a DeadLetter on perf.dlq.v1.
 * The services on pw_service call it through pw_service_dead_letter (which
 * also counts and logs), the ingester and the baseliner directly.
 */
#ifndef PW_DLQ_H
#define PW_DLQ_H

#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "perfwatch/v1/dlq.pb-c.h"
#include "pw_kafka.h"
#include "pw_pg.h"
#include "pw_status.h"

/*
 * A DeadLetter always fits perf.dlq.v1 (whose messages are capped at 1 MB by
 * the broker): an original payload longer than PW_DLQ_PAYLOAD_KEEP is kept
 * as its first PW_DLQ_PAYLOAD_KEEP bytes with payload_truncated set, its
 * whole length and its SHA-256; a key longer than PW_DLQ_KEY_KEEP likewise
 * (key_truncated, original_key_length); the detail is cut to
 * PW_DLQ_DETAIL_KEEP bytes on a character boundary and made valid UTF-8.
 * The source topic, partition and offset are always kept.
 */
#define PW_DLQ_PAYLOAD_KEEP (64u << 10)
#define PW_DLQ_KEY_KEEP 1024u
#define PW_DLQ_DETAIL_KEEP 1024u

/* Where a dead letter came from and why: every pointer is borrowed. */
typedef struct pw_dlq_source {
	const char *service;      /* e.g. "watcher" */
	const char *payload_type; /* what the message should have been, e.g. "perfwatch.v1.SeriesPoint" */
	const char *topic;
	int32_t partition;
	int64_t offset;
	const void *key;          /* may be NULL */
	size_t keylen;
	const void *payload;      /* may be NULL */
	size_t len;
} pw_dlq_source;

/* Fills src from a consumed message (topic, partition, offset, key, payload). */
void pw_dlq_source_from_message(pw_dlq_source *src, const rd_kafka_message_t *msg,
                                const char *service, const char *payload_type);

/*
 * Packs a DeadLetter into a new buffer *out of *outlen bytes (caller frees).
 * failed_unix_us is the time of the failure. The result is at most a few
 * KiB over PW_DLQ_PAYLOAD_KEEP whatever src holds (see above). PW_ERR_NOMEM
 * on no memory.
 */
pw_status pw_dlq_pack(const pw_dlq_source *src, Perfwatch__V1__DlqReason reason,
                      const char *detail, int64_t failed_unix_us, uint8_t **out,
                      size_t *outlen);

/*
 * The dead_letters.reason of r: its name, and "processing_failed" for
 * DLQ_REASON_UNSPECIFIED (the table has no "unspecified").
 */
const char *pw_dlq_reason_text(Perfwatch__V1__DlqReason r);

/*
 * Records the dead letter of src in both places, in this order:
 *  1. a row of perfwatch.dead_letters through pg, in its open transaction if
 *     it has one: source topic, partition and offset, reason, detail (made
 *     valid UTF-8 and cut as in the DeadLetter), src->service,
 *     src->payload_type, the whole original key and payload, failed_at
 *     (failed_unix_us). Idempotent: ON CONFLICT DO NOTHING on (source topic,
 *     partition, offset, service), so a redelivery is recorded once and every
 *     service consuming the message records its own;
 *  2. the packed DeadLetter produced on perf.dlq.v1 through p, keyed by the
 *     original key (cut to PW_DLQ_KEY_KEEP), waiting up to queue_wait_ms
 *     for room in the producer's queue (pw_producer_produce). The caller
 *     flushes with the rest of its batch.
 * pg and p are borrowed and required. PW_OK, or the PostgreSQL or Kafka error
 * (the caller retries its batch: both steps are safe to repeat);
 * PW_ERR_NOMEM on no memory.
 */
pw_status pw_dlq_record(pw_pg *pg, pw_producer *p, const pw_dlq_source *src,
                        Perfwatch__V1__DlqReason reason, const char *detail,
                        int64_t failed_unix_us, int queue_wait_ms, char *errbuf, size_t errlen);

#endif
