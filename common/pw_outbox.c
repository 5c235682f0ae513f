/*
 * pw_outbox.c: the transactional outbox (perfwatch.outbox). See pw_outbox.h.
 *
 * Writers append rows in their own transaction (pw_outbox_add); a publisher
 * handle claims the service's unpublished rows oldest first with FOR UPDATE
 * SKIP LOCKED in its own transaction, produces them, waits for the broker's
 * acknowledgements (pw_producer_flush) and marks them published in that same
 * transaction. A crash anywhere before the commit leaves the rows unpublished
 * for the next round; the only duplicates are rows acknowledged just before a
 * crash. Those are found, not sent again: every message carries the header
 * PW_OUTBOX_HEADER, and a round that claims a row that may have been sent
 * (one older than the handle, one of a failed round, or a stale row) reads
 * the rows' topics from the rows' time onwards for their headers first
 * (find_sent) and marks the rows it finds published without producing them.
 *
 * A row that can never be published is set aside, never retried: one over
 * its topic's limit (pw_topic_publish_limit: written before pw_outbox_add
 * refused such rows, or under another limit), or one the producer or the
 * broker refuses as too large, is dead-lettered (perfwatch.dead_letters and
 * perf.dlq.v1, reason oversize, source PW_OUTBOX_DLQ_SOURCE at offset = the
 * row's id) and marked (dead_lettered_at) in the round's transaction, and the
 * rows behind it go out. When the broker refuses one message of a round at
 * delivery, the round is sent again one row at a time to find it; rows of
 * the round it had already acknowledged are then sent twice (at least once,
 * as above).
 */
#include "pw_outbox.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pw_dlq.h"
#include "pw_time.h"
#include "pw_topics.h"

#define OUTBOX_BATCH_DEFAULT 512
#define OUTBOX_FLUSH_DEFAULT 10000
#define OUTBOX_QUEUE_DEFAULT 5000
/* find_sent reads from this long before a row's time: the broker stamps messages with the
 * producer's clock, the row's time is PostgreSQL's */
#define OUTBOX_CLOCK_SKEW_MS (5 * 60 * 1000)
/* how long find_sent may take to read a topic to its end */
#define OUTBOX_FIND_TIMEOUT_MS 30000
/* "<service>/<id>/<sends>" */
#define OUTBOX_HEADER_MAX 160

/* the columns publish_round claims, in order */
enum {
	COL_ID,
	COL_TOPIC,
	COL_KEY,
	COL_PAYLOAD,
	COL_REF,
	COL_SENDS,
	COL_SINCE_MS, /* coalesce(resent_at, created_at), ms since the epoch */
	COL_STALE,    /* "true" when claimed PW_OUTBOX_STALE_S after that */
};

struct pw_outbox {
	pw_pg *pg;
	pw_producer *producer;
	const pw_log *lg;
	char *service;
	size_t batch;
	int flush_timeout_ms;
	int queue_wait_ms;
	pw_metric *published; /* {service, topic} */
	pw_metric *pending;   /* {service} */
	pw_metric *dead;      /* {service, topic}: rows dead-lettered */
	pw_metric *found;     /* {service, topic}: rows found already sent (find_sent) */
	char *ids;            /* "{1,2,...}" of the round, grown as needed */
	size_t ids_cap;
	char *brokers;        /* find_sent's; NULL: it does not look */
	const pw_kv *props;
	size_t nprops;
	/* look for every claimed row with an id up to this: the rows a process before this one
	 * (or a failed round) may have sent; -1 = not known yet (outbox_verify_init) */
	int64_t verify_upto;
};

/*
 * verify_upto at the start: the service's newest row now. Rows written after
 * it are this process's, and have not been sent by anyone yet.
 */
static pw_status outbox_verify_init(pw_outbox *o, char *errbuf, size_t errlen)
{
	const char *const params[] = {o->service};
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(o->pg,
	                          "SELECT coalesce(max(id), 0)::text FROM perfwatch.outbox "
	                          "WHERE service = $1",
	                          1, params, &res, errbuf, errlen);
	if (st == PW_OK)
		o->verify_upto = pw_pg_int(res, 0, 0);
	PQclear(res);
	return st;
}

pw_status pw_outbox_add(pw_pg *pg, const char *service, const char *ref, const char *topic,
                        const char *key, const void *payload, size_t len, char *errbuf,
                        size_t errlen)
{
	size_t keylen = key ? strlen(key) : 0, limit = pw_topic_publish_limit(topic);
	if (len + keylen > limit)
		return pw_fail(PW_ERR_TOO_LARGE, errbuf, errlen,
		               "outbox row of %s for \"%s\" (ref \"%.200s\"): message of %zu bytes over "
		               "the topic's limit of %zu bytes",
		               service, topic ? topic : "", ref ? ref : "", len + keylen, limit);
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, service);
	pw_pg_params_text(&p, ref);
	pw_pg_params_text(&p, topic);
	pw_pg_params_text(&p, key ? key : "");
	pw_pg_params_bin(&p, payload ? payload : "", len);
	return pw_pg_exec_params(pg,
	                         "INSERT INTO perfwatch.outbox (service, ref, topic, message_key, "
	                         "payload) VALUES ($1, $2, $3, $4, $5)",
	                         &p, 0, NULL, errbuf, errlen);
}

pw_status pw_outbox_resend(pw_pg *pg, const char *service, const char *ref, size_t *n,
                           char *errbuf, size_t errlen)
{
	if (n)
		*n = 0;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, service);
	pw_pg_params_text(&p, ref);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec_params(pg,
	                                 "UPDATE perfwatch.outbox SET published_at = NULL, "
	                                 "sends = sends + 1, resent_at = now() "
	                                 "WHERE service = $1 AND ref = $2",
	                                 &p, 0, &res, errbuf, errlen);
	if (st == PW_OK && n)
		*n = (size_t)strtoull(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	return st;
}

pw_status pw_outbox_new(pw_outbox **out, pw_pg *pg, pw_producer *producer, pw_metrics *metrics,
                        const pw_outbox_opts *o, const pw_log *lg, char *errbuf, size_t errlen)
{
	*out = NULL;
	if (!pg || !producer || !o || !o->service || !*o->service)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "outbox needs a connection, a producer and a service name");
	pw_outbox *b = calloc(1, sizeof *b);
	if (!b || !(b->service = strdup(o->service))) {
		free(b);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory creating the outbox");
	}
	if (o->brokers && *o->brokers && !(b->brokers = strdup(o->brokers))) {
		free(b->service);
		free(b);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory creating the outbox");
	}
	b->props = o->props;
	b->nprops = o->nprops;
	b->verify_upto = -1;
	b->pg = pg;
	b->producer = producer;
	b->lg = lg;
	b->batch = o->batch ? o->batch : OUTBOX_BATCH_DEFAULT;
	b->flush_timeout_ms = o->flush_timeout_ms > 0 ? o->flush_timeout_ms : OUTBOX_FLUSH_DEFAULT;
	b->queue_wait_ms = o->queue_wait_ms > 0 ? o->queue_wait_ms : OUTBOX_QUEUE_DEFAULT;
	if (metrics) {
		/* one family per registry: the first handle registers, the others find it */
		pw_status st = PW_OK;
		b->published = pw_metrics_find(metrics, PW_METRIC_COUNTER,
		                               "perfwatch_outbox_published_total");
		if (!b->published)
			st = pw_metrics_counter(metrics, "perfwatch_outbox_published_total",
			                        "outbox messages the broker acknowledged, by service and "
			                        "topic",
			                        (const char *const[]){"service", "topic", NULL},
			                        &b->published, errbuf, errlen);
		b->pending = pw_metrics_find(metrics, PW_METRIC_GAUGE, "perfwatch_outbox_pending");
		if (st == PW_OK && !b->pending)
			st = pw_metrics_gauge(metrics, "perfwatch_outbox_pending",
			                      "outbox messages not yet acknowledged at the last count, by "
			                      "service",
			                      (const char *const[]){"service", NULL}, &b->pending, errbuf,
			                      errlen);
		b->dead = pw_metrics_find(metrics, PW_METRIC_COUNTER,
		                          "perfwatch_outbox_dead_lettered_total");
		if (st == PW_OK && !b->dead)
			st = pw_metrics_counter(metrics, "perfwatch_outbox_dead_lettered_total",
			                        "outbox messages that could not be published (too large) "
			                        "and were dead-lettered instead, by service and topic",
			                        (const char *const[]){"service", "topic", NULL}, &b->dead,
			                        errbuf, errlen);
		b->found = pw_metrics_find(metrics, PW_METRIC_COUNTER,
		                           "perfwatch_outbox_found_sent_total");
		if (st == PW_OK && !b->found)
			st = pw_metrics_counter(metrics, "perfwatch_outbox_found_sent_total",
			                        "outbox messages found already on their topic after a "
			                        "restart or a failed round, marked published and not sent "
			                        "again, by service and topic",
			                        (const char *const[]){"service", "topic", NULL}, &b->found,
			                        errbuf, errlen);
		if (st != PW_OK) {
			pw_outbox_free(b);
			return st;
		}
	}
	/* now rather than at the first publish, when this process's own first rows exist; a
	 * failure leaves it to the first publish */
	char why[256];
	if (b->brokers && outbox_verify_init(b, why, sizeof why) != PW_OK)
		b->verify_upto = -1;
	*out = b;
	return PW_OK;
}

/* Appends one id to the round's array literal. */
static pw_status ids_append(pw_outbox *o, size_t *used, const char *id)
{
	size_t need = *used + strlen(id) + 3;
	if (need > o->ids_cap) {
		size_t cap = o->ids_cap ? o->ids_cap : 256;
		while (cap < need)
			cap *= 2;
		char *p = realloc(o->ids, cap);
		if (!p)
			return PW_ERR_NOMEM;
		o->ids = p;
		o->ids_cap = cap;
	}
	*used += (size_t)sprintf(o->ids + *used, "%s%s", *used > 1 ? "," : "", id);
	return PW_OK;
}

/* Row i's PW_OUTBOX_HEADER value into buf. */
static void row_header(const pw_outbox *o, PGresult *res, int i, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/%s", o->service, PQgetvalue(res, i, COL_ID),
	         PQgetvalue(res, i, COL_SENDS));
}

/* What find_sent looks for on one topic: the rows of the round (want[i]) not found yet. */
struct outbox_scan {
	const char **hdr; /* hdr[i]: wanted row i's header value on this topic, else NULL */
	int rows;
	bool *found;
	size_t left; /* wanted rows of the topic not found yet */
};

static pw_status scan_message(void *ctx, const rd_kafka_message_t *m, char *errbuf,
                              size_t errlen)
{
	(void)errbuf;
	(void)errlen;
	struct outbox_scan *sc = ctx;
	rd_kafka_headers_t *h = NULL;
	const void *v = NULL;
	size_t vlen = 0;
	if (sc->left == 0 || rd_kafka_message_headers(m, &h) != RD_KAFKA_RESP_ERR_NO_ERROR ||
	    rd_kafka_header_get_last(h, PW_OUTBOX_HEADER, &v, &vlen) != RD_KAFKA_RESP_ERR_NO_ERROR ||
	    !v)
		return PW_OK;
	for (int i = 0; i < sc->rows; i++) {
		if (!sc->hdr[i] || sc->found[i])
			continue;
		if (strlen(sc->hdr[i]) == vlen && memcmp(sc->hdr[i], v, vlen) == 0) {
			sc->found[i] = true;
			sc->left--;
			break;
		}
	}
	return PW_OK;
}

/*
 * The rows of the round that may have been sent already (want[i]) and are
 * on their topic: found[i] true. Each topic is read once, from its wanted
 * rows' oldest time (less OUTBOX_CLOCK_SKEW_MS) to its end. A topic that
 * cannot be read to its end fails the round (retriable): sending its rows
 * blind could send them twice.
 */
static pw_status find_sent(pw_outbox *o, PGresult *res, const bool *want, bool *found,
                           char *errbuf, size_t errlen)
{
	int rows = PQntuples(res);
	bool *done = calloc((size_t)rows, sizeof *done); /* rows whose topic was read */
	char(*hdrs)[OUTBOX_HEADER_MAX] = calloc((size_t)rows, sizeof *hdrs);
	const char **hdr = calloc((size_t)rows, sizeof *hdr);
	if (!done || !hdrs || !hdr) {
		free(done);
		free(hdrs);
		free(hdr);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory publishing the outbox");
	}
	for (int i = 0; i < rows; i++)
		if (want[i])
			row_header(o, res, i, hdrs[i], sizeof hdrs[i]);
	pw_status st = PW_OK;
	for (int i = 0; i < rows && st == PW_OK; i++) {
		if (!want[i] || done[i])
			continue;
		const char *topic = PQgetvalue(res, i, COL_TOPIC);
		struct outbox_scan sc = {.hdr = hdr, .rows = rows, .found = found};
		int64_t since = INT64_MAX;
		for (int j = 0; j < rows; j++)
			hdr[j] = NULL;
		for (int j = i; j < rows; j++) {
			if (!want[j] || strcmp(PQgetvalue(res, j, COL_TOPIC), topic))
				continue;
			done[j] = true;
			hdr[j] = hdrs[j];
			sc.left++;
			int64_t t = pw_pg_int(res, j, COL_SINCE_MS);
			if (t < since)
				since = t;
		}
		if (!pw_topic_find(topic))
			continue; /* not a topic of pw_topics.h: nothing to read it with */
		char group[256];
		snprintf(group, sizeof group, "%s.outbox-find", o->service);
		pw_reader *r = NULL;
		bool at_end = false;
		st = pw_reader_new(&r, o->brokers, o->props, o->nprops, topic, group, o->lg, errbuf,
		                   errlen);
		if (st == PW_OK)
			st = pw_reader_start_at_time(r, since - OUTBOX_CLOCK_SKEW_MS, errbuf, errlen);
		if (st == PW_OK)
			st = pw_reader_catch_up(r, OUTBOX_FIND_TIMEOUT_MS, scan_message, &sc, &at_end,
			                        errbuf, errlen);
		if (st == PW_OK && !at_end && sc.left > 0)
			st = pw_fail(PW_ERR_TIMEOUT, errbuf, errlen,
			             "could not read %s to its end in %d ms to find the rows sent before",
			             topic, OUTBOX_FIND_TIMEOUT_MS);
		pw_reader_free(r);
		if (st != PW_OK) {
			char why[512];
			snprintf(why, sizeof why, "%s", errbuf);
			pw_fail(st, errbuf, errlen, "outbox of %s: looking for rows sent before: %s",
			        o->service, why);
		}
	}
	free(done);
	free(hdrs);
	free(hdr);
	return st;
}

/* True for a delivery error that says the message itself is too large: retrying cannot help. */
static bool refused_as_too_large(rd_kafka_resp_err_t err)
{
	return err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE ||
	       err == RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE;
}

/*
 * Sets row i of the claimed round aside: a row in perfwatch.dead_letters and
 * a DeadLetter produced on perf.dlq.v1 (flushed with the round), the row
 * marked; in the round's transaction. detail says why.
 */
static pw_status dead_letter_row(pw_outbox *o, PGresult *res, int i, const char *detail,
                                 char *errbuf, size_t errlen)
{
	const char *id = PQgetvalue(res, i, 0), *topic = PQgetvalue(res, i, 1);
	const pw_topic_spec *t = pw_topic_find(topic);
	const char *type = t && t->payload ? t->payload : "";
	const char *reason = pw_dlq_reason_text(PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE);
	pw_dlq_source src = {.service = o->service, .payload_type = type, .topic = PW_OUTBOX_DLQ_SOURCE,
	                     .partition = 0, .offset = pw_pg_int(res, i, 0),
	                     .key = PQgetvalue(res, i, 2), .keylen = (size_t)PQgetlength(res, i, 2),
	                     .payload = PQgetvalue(res, i, 3), .len = (size_t)PQgetlength(res, i, 3)};
	pw_status st = pw_dlq_record(o->pg, o->producer, &src, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE,
	                             detail, pw_now_us(), o->queue_wait_ms, errbuf, errlen);
	if (st == PW_ERR_INVALID) {
		/* a producer whose message.max.bytes is below even the DeadLetter (a few KiB over
		 * PW_DLQ_PAYLOAD_KEEP): the row in perfwatch.dead_letters is the dead letter */
		if (o->lg)
			pw_log_warn(o->lg, "outbox row %s: its dead letter is not on %s either: %s", id, PW_TOPIC_DLQ,
			            errbuf);
		st = PW_OK;
	}
	if (st != PW_OK)
		return st;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, id);
	pw_pg_params_text(&p, reason);
	pw_pg_params_text(&p, detail);
	st = pw_pg_exec_params(o->pg,
	                       "UPDATE perfwatch.outbox SET published_at = now(), dead_lettered_at = now(), "
	                       "dead_letter_reason = $2, dead_letter_detail = $3 WHERE id = $1::bigint",
	                       &p, 0, NULL, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (o->lg)
		pw_log_write(o->lg, PW_LOG_WARN,
		             (const char *[]){"service", o->service, "topic", topic, "outbox_id", id, "reason",
		                              reason, NULL},
		             "outbox row dead-lettered: %s", detail);
	return PW_OK;
}

/*
 * Row i of the round before it is produced: over its topic's limit it is
 * dead-lettered (*dead true), otherwise left to produce.
 */
static pw_status check_row(pw_outbox *o, PGresult *res, int i, bool *dead, char *errbuf,
                           size_t errlen)
{
	const char *topic = PQgetvalue(res, i, 1);
	size_t n = (size_t)PQgetlength(res, i, 2) + (size_t)PQgetlength(res, i, 3);
	size_t limit = pw_topic_publish_limit(topic);
	*dead = n > limit;
	if (!*dead)
		return PW_OK;
	char detail[512];
	snprintf(detail, sizeof detail,
	         "outbox row %s of %s (ref \"%.200s\") for \"%s\": message of %zu bytes over the topic's "
	         "limit of %zu bytes",
	         PQgetvalue(res, i, 0), o->service, PQgetvalue(res, i, 4), topic, n, limit);
	return dead_letter_row(o, res, i, detail, errbuf, errlen);
}

/*
 * Produces row i. A row the producer refuses as too large (its own
 * message.max.bytes) is dead-lettered (*dead true); other failures are
 * returned.
 */
static pw_status produce_row(pw_outbox *o, PGresult *res, int i, bool *dead, char *errbuf,
                             size_t errlen)
{
	*dead = false;
	const char *topic = PQgetvalue(res, i, COL_TOPIC);
	char hdr[OUTBOX_HEADER_MAX];
	row_header(o, res, i, hdr, sizeof hdr);
	pw_status st = pw_producer_produce_hdr(o->producer, topic, PQgetvalue(res, i, COL_KEY),
	                                       (size_t)PQgetlength(res, i, COL_KEY),
	                                       PQgetvalue(res, i, COL_PAYLOAD),
	                                       (size_t)PQgetlength(res, i, COL_PAYLOAD),
	                                       PW_OUTBOX_HEADER, hdr, o->queue_wait_ms, errbuf,
	                                       errlen);
	if (st != PW_ERR_INVALID)
		return st;
	/* pw_producer_produce: PW_ERR_INVALID is a payload over message.max.bytes */
	char detail[768];
	snprintf(detail, sizeof detail, "outbox row %s of %s (ref \"%.200s\"): the producer refuses it: %s",
	         PQgetvalue(res, i, 0), o->service, PQgetvalue(res, i, 4), errbuf);
	*dead = true;
	return dead_letter_row(o, res, i, detail, errbuf, errlen);
}

/*
 * The broker refused a message of the round as too large: the round's rows
 * not set aside yet (sent[i]) and not found on their topic (found[i]) are
 * sent again one at a time, each flushed on its own; the one the broker
 * refuses is dead-lettered, the others stay sent. Any other failure is
 * returned.
 */
static pw_status resend_one_by_one(pw_outbox *o, PGresult *res, bool *sent, const bool *found,
                                   char *errbuf, size_t errlen)
{
	for (int i = 0; i < PQntuples(res); i++) {
		if (!sent[i] || found[i])
			continue;
		bool dead = false;
		pw_status st = produce_row(o, res, i, &dead, errbuf, errlen);
		if (st == PW_OK && !dead)
			st = pw_producer_flush(o->producer, o->flush_timeout_ms, errbuf, errlen);
		if (st != PW_OK && !dead &&
		    refused_as_too_large(pw_producer_last_error(o->producer))) {
			char detail[768];
			snprintf(detail, sizeof detail,
			         "outbox row %s of %s (ref \"%.200s\") for \"%s\": the broker refuses it (%zu "
			         "bytes): %s",
			         PQgetvalue(res, i, 0), o->service, PQgetvalue(res, i, 4), PQgetvalue(res, i, 1),
			         (size_t)PQgetlength(res, i, 3), errbuf);
			dead = true;
			st = dead_letter_row(o, res, i, detail, errbuf, errlen);
		}
		if (st != PW_OK)
			return st;
		if (dead)
			sent[i] = false;
	}
	return pw_producer_flush(o->producer, o->flush_timeout_ms, errbuf, errlen);
}

/* One round: claim up to o->batch rows, send, wait, mark. *n gets the rows. */
static pw_status publish_round(pw_outbox *o, size_t *n, char *errbuf, size_t errlen)
{
	*n = 0;
	char lim[32];
	snprintf(lim, sizeof lim, "%zu", o->batch);
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, o->service);
	pw_pg_params_text(&p, lim);
	char stale[32];
	snprintf(stale, sizeof stale, "%d", PW_OUTBOX_STALE_S);
	pw_pg_params_text(&p, stale);
	PGresult *res = NULL;
	bool *sent = NULL, *want = NULL, *found = NULL;
	pw_status st = PW_OK;
	if (o->brokers && o->verify_upto < 0 && (st = outbox_verify_init(o, errbuf, errlen)) != PW_OK)
		return st;
	if ((st = pw_pg_begin(o->pg, errbuf, errlen)) != PW_OK)
		return st;
	/* binary results: the payload arrives as its bytes; the rest is cast to text first
	 * (the COL_ columns) */
	st = pw_pg_exec_params(o->pg,
	                       "SELECT id::text, topic, message_key, payload, coalesce(ref, ''), "
	                       "sends::text, "
	                       "(extract(epoch FROM coalesce(resent_at, created_at)) * 1000)::bigint::text, "
	                       "(coalesce(resent_at, created_at) < now() - make_interval(secs => $3::int))::text "
	                       "FROM perfwatch.outbox WHERE service = $1 AND published_at IS NULL "
	                       "ORDER BY id LIMIT $2::int FOR UPDATE SKIP LOCKED",
	                       &p, 1, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	int rows = PQntuples(res);
	if (rows == 0) {
		PQclear(res);
		return pw_pg_commit(o->pg, errbuf, errlen);
	}
	if (!(sent = calloc((size_t)rows, sizeof *sent)) ||
	    !(want = calloc((size_t)rows, sizeof *want)) ||
	    !(found = calloc((size_t)rows, sizeof *found))) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory publishing the outbox");
		goto fail;
	}
	bool look = false;
	for (int i = 0; i < rows; i++) {
		want[i] = o->brokers &&
		          (pw_pg_int(res, i, COL_ID) <= o->verify_upto ||
		           strcmp(PQgetvalue(res, i, COL_STALE), "true") == 0);
		look = look || want[i];
	}
	if (look && (st = find_sent(o, res, want, found, errbuf, errlen)) != PW_OK)
		goto fail;
	size_t nfound = 0;
	for (int i = 0; i < rows; i++) {
		bool dead = false;
		if (found[i]) {
			sent[i] = true; /* on the topic already: marked below, not sent again */
			nfound++;
			continue;
		}
		st = check_row(o, res, i, &dead, errbuf, errlen);
		if (st == PW_OK && !dead)
			st = produce_row(o, res, i, &dead, errbuf, errlen);
		if (st != PW_OK)
			goto fail;
		sent[i] = !dead;
	}
	st = pw_producer_flush(o->producer, o->flush_timeout_ms, errbuf, errlen);
	if (st != PW_OK && refused_as_too_large(pw_producer_last_error(o->producer)))
		st = resend_one_by_one(o, res, sent, found, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	size_t used = 1, nsent = 0;
	if (ids_append(o, &used, "") != PW_OK) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory publishing the outbox");
		goto fail;
	}
	o->ids[0] = '{';
	used = 1;
	for (int i = 0; i < rows; i++) {
		if (!sent[i])
			continue;
		if (ids_append(o, &used, PQgetvalue(res, i, 0)) != PW_OK) {
			st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory publishing the outbox");
			goto fail;
		}
		nsent++;
	}
	o->ids[used++] = '}';
	o->ids[used] = '\0';
	if (nsent > 0) {
		pw_pg_params_init(&p);
		pw_pg_params_text(&p, o->ids);
		st = pw_pg_exec_params(o->pg,
		                       "UPDATE perfwatch.outbox SET published_at = now() "
		                       "WHERE id = ANY ($1::bigint[])",
		                       &p, 0, NULL, errbuf, errlen);
		if (st != PW_OK)
			goto fail;
	}
	st = pw_pg_commit(o->pg, errbuf, errlen);
	if (st != PW_OK)
		goto fail_clear;
	for (int i = 0; i < rows; i++) {
		pw_metric *m = found[i] ? o->found : sent[i] ? o->published : o->dead;
		if (m)
			pw_metric_inc(m, (const char *const[]){o->service, PQgetvalue(res, i, COL_TOPIC)});
	}
	if (nfound > 0 && o->lg)
		pw_log_write(o->lg, PW_LOG_WARN,
		             (const char *[]){"service", o->service, "first_outbox_id",
		                              PQgetvalue(res, 0, COL_ID), NULL},
		             "outbox: %zu of %d rows were on their topics already (sent before a "
		             "restart or a failed round): marked published, not sent again",
		             nfound, rows);
	*n = (size_t)rows;
	free(sent);
	free(want);
	free(found);
	PQclear(res);
	return PW_OK;

fail:
	if (pw_pg_in_transaction(o->pg))
		pw_pg_rollback(o->pg, NULL, 0);
fail_clear:
	/* the broker may have acknowledged some of the round before it failed: look for its
	 * rows before sending them again */
	if (res && PQntuples(res) > 0) {
		int64_t last = pw_pg_int(res, PQntuples(res) - 1, COL_ID);
		if (last > o->verify_upto)
			o->verify_upto = last;
	}
	free(sent);
	free(want);
	free(found);
	PQclear(res);
	return st;
}

pw_status pw_outbox_publish(pw_outbox *o, size_t *published, char *errbuf, size_t errlen)
{
	if (published)
		*published = 0;
	if (pw_pg_in_transaction(o->pg))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "outbox publish inside an open transaction");
	size_t n = 0, total = 0;
	pw_status st;
	do {
		st = publish_round(o, &n, errbuf, errlen);
		total += n;
	} while (st == PW_OK && n == o->batch);
	if (published)
		*published = total;
	if (st == PW_OK && o->pending)
		pw_metric_set(o->pending, (const char *const[]){o->service}, 0);
	return st;
}

pw_status pw_outbox_pending(pw_outbox *o, int64_t *n, char *errbuf, size_t errlen)
{
	*n = 0;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, o->service);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec_params(o->pg,
	                                 "SELECT count(*) FROM perfwatch.outbox "
	                                 "WHERE service = $1 AND published_at IS NULL",
	                                 &p, 0, &res, errbuf, errlen);
	if (st == PW_OK) {
		*n = pw_pg_int(res, 0, 0);
		if (o->pending)
			pw_metric_set(o->pending, (const char *const[]){o->service}, (double)*n);
	}
	PQclear(res);
	return st;
}

void pw_outbox_free(pw_outbox *o)
{
	if (!o)
		return;
	free(o->service);
	free(o->brokers);
	free(o->ids);
	free(o);
}
