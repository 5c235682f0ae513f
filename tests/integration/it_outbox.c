/*
 * it_outbox.c: the one outbox (common/pw_outbox.h) against the dev stack's
 * PostgreSQL (perfwatch.outbox, migration 0019) and broker.
 *
 * Run by tests/integration/test_outbox.sh with PW_PG_DSN and
 * PW_KAFKA_BOOTSTRAP_SERVERS from run/stack.env; the script then reads the
 * topic with kcat and checks what this program says it published. Under a
 * service name of its own (it-outbox-<pid>), it checks that:
 *   - rows added in a rolled-back transaction are not there;
 *   - committed rows are published in rounds of `batch`, oldest first, and
 *     marked published;
 *   - pw_outbox_resend marks one ref's rows unpublished again and the next
 *     publish sends exactly those;
 *   - a publish inside an open transaction is refused;
 *   - a broker nobody answers: the publish fails, the rows stay unpublished,
 *     and a working publisher sends them afterwards;
 *   - rows another transaction holds (FOR UPDATE) are skipped, not waited
 *     for and not sent twice;
 *   - perfwatch_outbox_published_total counts by service and topic.
 * Prints "sent KEY" for each message it expects on the topic, in order, and
 * one "ok:" line per check; exit 0 = pass. Its rows are deleted at the end.
 */
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_metrics.h"
#include "pw_outbox.h"
#include "pw_pg.h"
#include "pw_topics.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IT_TOPIC PW_TOPIC_ALERTS

static int failures;

#define CHECK(cond, ...)                                                                      \
	do {                                                                                      \
		if (cond) {                                                                           \
			printf("ok: ");                                                                   \
		} else {                                                                              \
			printf("FAIL: ");                                                                 \
			failures++;                                                                       \
		}                                                                                     \
		printf(__VA_ARGS__);                                                                  \
		printf("\n");                                                                         \
		fflush(stdout);                                                                       \
	} while (0)

static char service[64];
static char err[1024];

static int64_t pending(pw_outbox *o)
{
	int64_t n = -1;
	if (pw_outbox_pending(o, &n, err, sizeof err) != PW_OK)
		printf("pending: %s\n", err);
	return n;
}

/* Adds keys [from, to) of ref in one transaction; commits or rolls back. */
static pw_status add_rows(pw_pg *pg, const char *ref, int from, int to, bool commit)
{
	pw_status st = pw_pg_begin(pg, err, sizeof err);
	for (int i = from; i < to && st == PW_OK; i++) {
		char key[96], payload[96];
		snprintf(key, sizeof key, "%s-%d", service, i);
		/* binary: a NUL inside the payload must survive */
		int len = snprintf(payload, sizeof payload, "payload %d", i);
		payload[len] = '\0';
		payload[len + 1] = '\x01';
		st = pw_outbox_add(pg, service, ref, IT_TOPIC, key, payload, (size_t)len + 2, err,
		                   sizeof err);
		if (st == PW_OK && commit)
			printf("sent %s\n", key);
	}
	if (st != PW_OK) {
		pw_pg_rollback(pg, NULL, 0);
		return st;
	}
	return commit ? pw_pg_commit(pg, err, sizeof err) : pw_pg_rollback(pg, err, sizeof err);
}

int main(void)
{
	const char *dsn = getenv("PW_PG_DSN"), *brokers = getenv("PW_KAFKA_BOOTSTRAP_SERVERS");
	if (!dsn || !brokers) {
		fprintf(stderr, "it_outbox: PW_PG_DSN and PW_KAFKA_BOOTSTRAP_SERVERS must be set\n");
		return 2;
	}
	snprintf(service, sizeof service, "it-outbox-%ld", (long)getpid());
	pw_log lg;
	pw_log_init(&lg, "it_outbox", PW_LOG_WARN);
	pw_pg *pg = NULL, *other = NULL;
	pw_producer *prod = NULL, *dead = NULL;
	pw_outbox *ob = NULL, *ob_dead = NULL;
	pw_metrics *reg = pw_metrics_new();
	int rc = 1;
	if (!reg || pw_pg_new(&pg, dsn, NULL, &lg, err, sizeof err) != PW_OK ||
	    pw_pg_new(&other, dsn, NULL, &lg, err, sizeof err) != PW_OK ||
	    pw_pg_wait_connected(pg, 20000, NULL, err, sizeof err) != PW_OK ||
	    pw_producer_new(&prod, brokers, NULL, 0, &lg, err, sizeof err) != PW_OK) {
		fprintf(stderr, "it_outbox: set-up: %s\n", err);
		goto out;
	}
	static const pw_kv dead_props[] = {{"message.timeout.ms", "1000"}};
	if (pw_producer_new(&dead, "127.0.0.1:1", dead_props, 1, &lg, err, sizeof err) != PW_OK) {
		fprintf(stderr, "it_outbox: set-up: %s\n", err);
		goto out;
	}
	pw_outbox_opts oo = {.service = service, .batch = 3};
	pw_outbox_opts od = {.service = service, .flush_timeout_ms = 1500, .queue_wait_ms = 500};
	if (pw_outbox_new(&ob, pg, prod, reg, &oo, &lg, err, sizeof err) != PW_OK ||
	    pw_outbox_new(&ob_dead, pg, dead, reg, &od, &lg, err, sizeof err) != PW_OK) {
		fprintf(stderr, "it_outbox: set-up: %s\n", err);
		goto out;
	}

	/* 1. a rolled-back decision leaves nothing */
	CHECK(add_rows(pg, "r0", 100, 102, false) == PW_OK && pending(ob) == 0,
	      "rows of a rolled-back transaction are not in the outbox");

	/* 2. seven committed rows, two decisions, in rounds of 3 */
	size_t n = 0;
	pw_status st = add_rows(pg, "r1", 0, 4, true);
	if (st == PW_OK)
		st = add_rows(pg, "r2", 4, 7, true);
	CHECK(st == PW_OK && pending(ob) == 7, "7 rows pending after two commits");
	st = pw_outbox_publish(ob, &n, err, sizeof err);
	CHECK(st == PW_OK && n == 7 && pending(ob) == 0, "publish sent %zu rows (want 7), %" PRId64
	      " pending: %s", n, pending(ob), st == PW_OK ? "" : err);

	/* 3. resend one decision */
	size_t marked = 0;
	st = pw_pg_begin(pg, err, sizeof err);
	if (st == PW_OK)
		st = pw_outbox_resend(pg, service, "r1", &marked, err, sizeof err);
	if (st == PW_OK)
		st = pw_pg_commit(pg, err, sizeof err);
	CHECK(st == PW_OK && marked == 4 && pending(ob) == 4, "resend of r1 marked %zu rows", marked);
	for (int i = 0; i < 4; i++)
		printf("sent %s-%d\n", service, i);
	st = pw_outbox_publish(ob, &n, err, sizeof err);
	CHECK(st == PW_OK && n == 4 && pending(ob) == 0, "the resent decision went out again (%zu)",
	      n);

	/* 4. not inside a transaction */
	st = pw_pg_begin(pg, err, sizeof err);
	pw_status inside = pw_outbox_publish(ob, &n, err, sizeof err);
	pw_pg_rollback(pg, NULL, 0);
	CHECK(st == PW_OK && inside == PW_ERR_INVALID, "publish inside an open transaction refused");

	/* 5. a broker nobody answers: the row stays, a working publisher sends it */
	st = add_rows(pg, "r3", 7, 8, true);
	pw_status down = pw_outbox_publish(ob_dead, &n, err, sizeof err);
	CHECK(st == PW_OK && down != PW_OK && pw_status_retriable(down) && pending(ob) == 1,
	      "unacknowledged publish failed retriably (%s) and left the row unpublished",
	      pw_strerror(down));
	st = pw_outbox_publish(ob, &n, err, sizeof err);
	CHECK(st == PW_OK && n == 1 && pending(ob) == 0, "the working publisher sent it (%zu)", n);

	/* 6. rows another transaction holds are skipped */
	st = add_rows(pg, "r4", 8, 9, true);
	const char *const svc_param[] = {service};
	pw_status lk = pw_pg_begin(other, err, sizeof err);
	if (lk == PW_OK)
		lk = pw_pg_exec(other,
		                "SELECT id FROM perfwatch.outbox WHERE service = $1 AND published_at IS NULL "
		                "FOR UPDATE",
		                1, svc_param, NULL, err, sizeof err);
	pw_status held = pw_outbox_publish(ob, &n, err, sizeof err);
	size_t n_held = n;
	pw_pg_rollback(other, NULL, 0);
	CHECK(st == PW_OK && lk == PW_OK && held == PW_OK && n_held == 0 && pending(ob) == 1,
	      "a row locked elsewhere was skipped (%zu sent)", n_held);
	st = pw_outbox_publish(ob, &n, err, sizeof err);
	CHECK(st == PW_OK && n == 1, "and sent once released (%zu)", n);

	/* 7. metrics: 7 + 4 + 1 + 1 acknowledged */
	char *text = NULL;
	size_t len = 0;
	char want[256];
	snprintf(want, sizeof want,
	         "perfwatch_outbox_published_total{service=\"%s\",topic=\"%s\"} 13", service,
	         IT_TOPIC);
	CHECK(pw_metrics_render(reg, &text, &len) == PW_OK && text && strstr(text, want),
	      "metrics: %s", want);
	free(text);

	/* the rows of this run, published in id order */
	PGresult *res = NULL;
	if (pw_pg_exec(pg,
	               "SELECT count(*) FILTER (WHERE published_at IS NULL), count(*) FROM perfwatch.outbox "
	               "WHERE service = $1",
	               1, svc_param, &res, err, sizeof err) == PW_OK) {
		CHECK(strcmp(PQgetvalue(res, 0, 0), "0") == 0 && strcmp(PQgetvalue(res, 0, 1), "9") == 0,
		      "9 rows stored, none unpublished (%s, %s)", PQgetvalue(res, 0, 1),
		      PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	pw_pg_exec(pg, "DELETE FROM perfwatch.outbox WHERE service = $1", 1, svc_param, NULL, err,
	           sizeof err);
	rc = failures ? 1 : 0;
out:
	pw_outbox_free(ob);
	pw_outbox_free(ob_dead);
	pw_producer_free(dead);
	pw_producer_free(prod);
	pw_pg_free(other);
	pw_pg_free(pg);
	pw_metrics_free(reg);
	return rc;
}
