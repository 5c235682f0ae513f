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
 *   - perfwatch_outbox_published_total counts by service and topic;
 *   - the jam: a row over its topic's limit is refused by pw_outbox_add; one
 *     already stored (a 3,000,834-byte follow-up) and one the producer
 *     refuses as too large are dead-lettered (perfwatch.dead_letters,
 *     reason oversize, source perfwatch.outbox at the row's id) and marked,
 *     and the rows behind them are published;
 *   - once on the topic: rows the broker acknowledged but that a kill left
 *     unmarked (published_at set back to NULL, as a kill -9 between the
 *     acknowledgement and the commit leaves them) are found on the topic by
 *     a new publisher, marked and not sent again; likewise a stale row
 *     claimed by a publisher already running; pw_outbox_resend still sends
 *     a row again on purpose; perfwatch_outbox_found_sent_total counts.
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
	pw_producer *prod = NULL, *dead = NULL, *small = NULL;
	pw_outbox *ob = NULL, *ob_dead = NULL, *ob_small = NULL, *ob_find = NULL, *ob_find2 = NULL;
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
	static const pw_kv small_props[] = {{"message.max.bytes", "68000"}};
	if (pw_producer_new(&small, brokers, small_props, 1, &lg, err, sizeof err) != PW_OK) {
		fprintf(stderr, "it_outbox: set-up: %s\n", err);
		goto out;
	}
	pw_outbox_opts oo = {.service = service, .batch = 3};
	pw_outbox_opts od = {.service = service, .flush_timeout_ms = 1500, .queue_wait_ms = 500};
	if (pw_outbox_new(&ob, pg, prod, reg, &oo, &lg, err, sizeof err) != PW_OK ||
	    pw_outbox_new(&ob_dead, pg, dead, reg, &od, &lg, err, sizeof err) != PW_OK ||
	    pw_outbox_new(&ob_small, pg, small, reg, &oo, &lg, err, sizeof err) != PW_OK ||
	    pw_outbox_new(&ob_find, pg, prod, reg, &(pw_outbox_opts){.service = service, .brokers = brokers},
	                  &lg, err, sizeof err) != PW_OK) {
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
	/* the report of the undelivered message arrives between message.timeout.ms (1 s) and the
	 * next timeout scan: a delivery failure (PW_ERR_KAFKA) or, before it, the flush's timeout */
	CHECK(st == PW_OK && (down == PW_ERR_KAFKA || pw_status_retriable(down)) && pending(ob) == 1,
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

	PGresult *res_dl = NULL;
	/* 8. the jam: rows that can never be published are set aside, the rows behind them go out */
	char *big = malloc(3000834);
	CHECK(big != NULL, "3 MB buffer");
	if (!big)
		goto out;
	memset(big, 'x', 3000834);
	st = pw_pg_begin(pg, err, sizeof err);
	pw_status too = PW_OK;
	if (st == PW_OK)
		too = pw_outbox_add(pg, service, "r5", IT_TOPIC, "", big, 1000001, err, sizeof err);
	pw_pg_rollback(pg, NULL, 0);
	CHECK(st == PW_OK && too == PW_ERR_TOO_LARGE && strstr(err, "over the topic's limit of 1000000 bytes"),
	      "pw_outbox_add refuses 1,000,001 bytes for %s: %s", IT_TOPIC, err);
	/* as an earlier service wrote it: straight into the table, between two good rows */
	st = add_rows(pg, "r5", 9, 10, true);
	char jam[32] = "";
	if (st == PW_OK) {
		pw_pg_params p;
		pw_pg_params_init(&p);
		pw_pg_params_text(&p, service);
		pw_pg_params_bin(&p, big, 3000834);
		PGresult *r = NULL;
		st = pw_pg_exec_params(pg,
		                       "INSERT INTO perfwatch.outbox (service, ref, topic, message_key, payload) "
		                       "VALUES ($1, 'r6', 'perf.alerts.v1', '', $2) RETURNING id",
		                       &p, 0, &r, err, sizeof err);
		if (st == PW_OK)
			snprintf(jam, sizeof jam, "%s", PQgetvalue(r, 0, 0));
		PQclear(r);
	}
	if (st == PW_OK)
		st = add_rows(pg, "r7", 10, 11, true);
	st = st == PW_OK ? pw_outbox_publish(ob, &n, err, sizeof err) : st;
	CHECK(st == PW_OK && n == 3 && pending(ob) == 0,
	      "a 3,000,834-byte row between two good ones: all three left the outbox (%zu): %s", n,
	      st == PW_OK ? "" : err);
	/* the producer refuses a 70,000-byte row (its message.max.bytes is 68,000; the DeadLetter,
	 * which keeps 64 KiB of the payload, fits) */
	st = pw_pg_begin(pg, err, sizeof err);
	if (st == PW_OK)
		st = pw_outbox_add(pg, service, "r8", IT_TOPIC, "", big, 70000, err, sizeof err);
	if (st == PW_OK)
		st = pw_pg_commit(pg, err, sizeof err);
	if (st == PW_OK)
		st = add_rows(pg, "r9", 11, 12, true);
	st = st == PW_OK ? pw_outbox_publish(ob_small, &n, err, sizeof err) : st;
	CHECK(st == PW_OK && n == 2 && pending(ob) == 0,
	      "a row the producer refuses as too large, then a good one: both left the outbox (%zu): %s", n,
	      st == PW_OK ? "" : err);
	free(big);
	if (pw_pg_exec(pg,
	               "SELECT o.ref || ' ' || d.reason || ' ' || d.detail || ' ' || o.dead_letter_reason || ' ' || "
	               "length(d.original_payload) FROM perfwatch.outbox o JOIN perfwatch.dead_letters d ON "
	               "d.source_topic = 'perfwatch.outbox' AND d.kafka_offset = o.id AND d.service = o.service "
	               "WHERE o.service = $1 AND o.dead_lettered_at IS NOT NULL AND o.published_at IS NOT NULL "
	               "ORDER BY o.id",
	               1, svc_param, &res_dl, err, sizeof err) == PW_OK) {
		int nr = PQntuples(res_dl);
		CHECK(nr == 2, "two rows dead-lettered and marked (%d)", nr);
		if (nr == 2) {
			char want6[256];
			snprintf(want6, sizeof want6,
			         "r6 oversize outbox row %s of %s (ref \"r6\") for \"perf.alerts.v1\": message of 3000834 "
			         "bytes over the topic's limit of 1000000 bytes oversize 3000834",
			         jam, service);
			CHECK(strcmp(PQgetvalue(res_dl, 0, 0), want6) == 0, "dead letter of the stored row: %s",
			      PQgetvalue(res_dl, 0, 0));
			const char *d8 = PQgetvalue(res_dl, 1, 0);
			CHECK(strncmp(d8, "r8 oversize outbox row ", 23) == 0 && strstr(d8, "the producer refuses it") &&
			      strstr(d8, " 70000"), "dead letter of the refused row: %s", d8);
		}
		PQclear(res_dl);
	}
	snprintf(want, sizeof want,
	         "perfwatch_outbox_dead_lettered_total{service=\"%s\",topic=\"%s\"} 2", service, IT_TOPIC);
	text = NULL;
	CHECK(pw_metrics_render(reg, &text, &len) == PW_OK && text && strstr(text, want), "metrics: %s", want);
	free(text);

	/* 9. once on the topic: a kill between the acknowledgement and the mark */
	pw_producer_counts c0, c1;
	st = add_rows(pg, "r10", 12, 15, true);
	st = st == PW_OK ? pw_outbox_publish(ob_find, &n, err, sizeof err) : st;
	CHECK(st == PW_OK && n == 3, "a publisher that looks first sent 3 new rows (%zu): %s", n,
	      st == PW_OK ? "" : err);
	const char *const r10_param[] = {service, "r10"};
	st = pw_pg_exec(pg, "UPDATE perfwatch.outbox SET published_at = NULL WHERE service = $1 AND ref = $2",
	                2, r10_param, NULL, err, sizeof err);
	pw_producer_counts_get(prod, &c0);
	if (st == PW_OK)
		st = pw_outbox_new(&ob_find2, pg, prod, reg, &(pw_outbox_opts){.service = service, .brokers = brokers},
		                   &lg, err, sizeof err);
	st = st == PW_OK ? pw_outbox_publish(ob_find2, &n, err, sizeof err) : st;
	pw_producer_counts_get(prod, &c1);
	CHECK(st == PW_OK && n == 3 && pending(ob) == 0 && c1.produced == c0.produced,
	      "after a kill between acknowledgement and mark, a new publisher found the 3 rows on the topic and "
	      "sent %" PRIu64 " (want 0; %zu rows left the outbox): %s",
	      c1.produced - c0.produced, n, st == PW_OK ? "" : err);
	/* a stale row: a running publisher that does not look at fresh rows looks at this one */
	st = add_rows(pg, "r11", 15, 16, true);
	pw_producer_counts_get(prod, &c0);
	st = st == PW_OK ? pw_outbox_publish(ob_find, &n, err, sizeof err) : st;
	pw_producer_counts_get(prod, &c1);
	CHECK(st == PW_OK && n == 1 && c1.produced == c0.produced + 1, "a fresh row is sent (%zu)", n);
	const char *const r11_param[] = {service, "r11"};
	st = pw_pg_exec(pg,
	                "UPDATE perfwatch.outbox SET published_at = NULL, created_at = now() - interval '1 minute' "
	                "WHERE service = $1 AND ref = $2",
	                2, r11_param, NULL, err, sizeof err);
	pw_producer_counts_get(prod, &c0);
	st = st == PW_OK ? pw_outbox_publish(ob_find, &n, err, sizeof err) : st;
	pw_producer_counts_get(prod, &c1);
	CHECK(st == PW_OK && n == 1 && c1.produced == c0.produced,
	      "a stale row already on the topic is marked, not sent again (%" PRIu64 " sent): %s",
	      c1.produced - c0.produced, st == PW_OK ? "" : err);
	/* a resend is on purpose: the new copies go out */
	marked = 0;
	st = pw_pg_begin(pg, err, sizeof err);
	if (st == PW_OK)
		st = pw_outbox_resend(pg, service, "r10", &marked, err, sizeof err);
	if (st == PW_OK)
		st = pw_pg_commit(pg, err, sizeof err);
	pw_producer_counts_get(prod, &c0);
	st = st == PW_OK ? pw_outbox_publish(ob_find2, &n, err, sizeof err) : st;
	pw_producer_counts_get(prod, &c1);
	CHECK(st == PW_OK && marked == 3 && n == 3 && c1.produced == c0.produced + 3,
	      "a resend through a publisher that looks still sends the 3 rows again (%" PRIu64 ")",
	      c1.produced - c0.produced);
	for (int i = 12; i < 15; i++)
		printf("sent %s-%d\n", service, i);
	snprintf(want, sizeof want, "perfwatch_outbox_found_sent_total{service=\"%s\",topic=\"%s\"} 4",
	         service, IT_TOPIC);
	text = NULL;
	CHECK(pw_metrics_render(reg, &text, &len) == PW_OK && text && strstr(text, want), "metrics: %s", want);
	free(text);

	/* the rows of this run, published in id order */
	PGresult *res = NULL;
	if (pw_pg_exec(pg,
	               "SELECT count(*) FILTER (WHERE published_at IS NULL), count(*) FROM perfwatch.outbox "
	               "WHERE service = $1",
	               1, svc_param, &res, err, sizeof err) == PW_OK) {
		CHECK(strcmp(PQgetvalue(res, 0, 0), "0") == 0 && strcmp(PQgetvalue(res, 0, 1), "18") == 0,
		      "18 rows stored, none unpublished (%s, %s)", PQgetvalue(res, 0, 1),
		      PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	pw_pg_exec(pg, "DELETE FROM perfwatch.outbox WHERE service = $1", 1, svc_param, NULL, err,
	           sizeof err);
	pw_pg_exec(pg, "DELETE FROM perfwatch.dead_letters WHERE service = $1", 1, svc_param, NULL, err,
	           sizeof err);
	rc = failures ? 1 : 0;
out:
	pw_outbox_free(ob);
	pw_outbox_free(ob_dead);
	pw_outbox_free(ob_small);
	pw_outbox_free(ob_find);
	pw_outbox_free(ob_find2);
	pw_producer_free(dead);
	pw_producer_free(small);
	pw_producer_free(prod);
	pw_pg_free(other);
	pw_pg_free(pg);
	pw_metrics_free(reg);
	return rc;
}
