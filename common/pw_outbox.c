/*
 * pw_outbox.c: the transactional outbox (perfwatch.outbox). See pw_outbox.h.
 *
 * Writers append rows in their own transaction (pw_outbox_add); a publisher
 * handle claims the service's unpublished rows oldest first with FOR UPDATE
 * SKIP LOCKED in its own transaction, produces them, waits for the broker's
 * acknowledgements (pw_producer_flush) and marks them published in that same
 * transaction. A crash anywhere before the commit leaves the rows unpublished
 * for the next round; the only duplicates are rows acknowledged just before a
 * crash, which consumers dedupe on the messages' natural ids.
 */
#include "pw_outbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUTBOX_BATCH_DEFAULT 512
#define OUTBOX_FLUSH_DEFAULT 10000
#define OUTBOX_QUEUE_DEFAULT 5000

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
	char *ids;            /* "{1,2,...}" of the round, grown as needed */
	size_t ids_cap;
};

pw_status pw_outbox_add(pw_pg *pg, const char *service, const char *ref, const char *topic,
                        const char *key, const void *payload, size_t len, char *errbuf,
                        size_t errlen)
{
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
	                                 "UPDATE perfwatch.outbox SET published_at = NULL "
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
		if (st != PW_OK) {
			pw_outbox_free(b);
			return st;
		}
	}
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
	PGresult *res = NULL;
	pw_status st = pw_pg_begin(o->pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	/* binary results: the payload arrives as its bytes; id is cast to text first */
	st = pw_pg_exec_params(o->pg,
	                       "SELECT id::text, topic, message_key, payload FROM perfwatch.outbox "
	                       "WHERE service = $1 AND published_at IS NULL ORDER BY id "
	                       "LIMIT $2::int FOR UPDATE SKIP LOCKED",
	                       &p, 1, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	int rows = PQntuples(res);
	if (rows == 0) {
		PQclear(res);
		return pw_pg_commit(o->pg, errbuf, errlen);
	}
	size_t used = 1;
	if (ids_append(o, &used, "") != PW_OK) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory publishing the outbox");
		goto fail;
	}
	o->ids[0] = '{';
	used = 1;
	for (int i = 0; i < rows; i++) {
		const char *topic = PQgetvalue(res, i, 1);
		st = pw_producer_produce(o->producer, topic, PQgetvalue(res, i, 2),
		                         (size_t)PQgetlength(res, i, 2), PQgetvalue(res, i, 3),
		                         (size_t)PQgetlength(res, i, 3), o->queue_wait_ms, errbuf,
		                         errlen);
		if (st != PW_OK)
			goto fail;
		if (ids_append(o, &used, PQgetvalue(res, i, 0)) != PW_OK) {
			st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory publishing the outbox");
			goto fail;
		}
	}
	o->ids[used++] = '}';
	o->ids[used] = '\0';
	st = pw_producer_flush(o->producer, o->flush_timeout_ms, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, o->ids);
	st = pw_pg_exec_params(o->pg,
	                       "UPDATE perfwatch.outbox SET published_at = now() "
	                       "WHERE id = ANY ($1::bigint[])",
	                       &p, 0, NULL, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	st = pw_pg_commit(o->pg, errbuf, errlen);
	if (st != PW_OK)
		goto fail_clear;
	if (o->published)
		for (int i = 0; i < rows; i++)
			pw_metric_inc(o->published,
			              (const char *const[]){o->service, PQgetvalue(res, i, 1)});
	*n = (size_t)rows;
	PQclear(res);
	return PW_OK;

fail:
	if (pw_pg_in_transaction(o->pg))
		pw_pg_rollback(o->pg, NULL, 0);
fail_clear:
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
		*n = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
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
	free(o->ids);
	free(o);
}
