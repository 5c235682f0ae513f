/*
 * test_kafka.c: unit tests of common/pw_kafka.c and common/pw_backoff.h.
 *
 * The pure parts (per-partition batch spans, the backoff sequence) are
 * checked directly; the producer and the commit-after-work consumer loop run
 * against librdkafka's mock cluster created inside this test process (the
 * integration tests in tests/integration/ use the dev broker in its own
 * process instead). No external server is needed.
 */
#include <criterion/criterion.h>

#include "pw_backoff.h"
#include "pw_kafka.h"
#include "pw_topics.h"

#include <librdkafka/rdkafka_mock.h>

#include <pthread.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------ spans */

Test(kafka_spans, first_and_next_per_partition)
{
	pw_partition_span s[4];
	size_t n = 0;
	char topic_copy[] = "perf.runs.v1"; /* same content, different pointer */
	cr_assert_eq(pw_partition_spans_add(s, &n, 4, "perf.runs.v1", 0, 10), PW_OK);
	cr_assert_eq(pw_partition_spans_add(s, &n, 4, "perf.runs.v1", 1, 5), PW_OK);
	cr_assert_eq(pw_partition_spans_add(s, &n, 4, topic_copy, 0, 11), PW_OK);
	cr_assert_eq(pw_partition_spans_add(s, &n, 4, "perf.points.v1", 0, 7), PW_OK);
	cr_assert_eq(pw_partition_spans_add(s, &n, 4, "perf.runs.v1", 0, 14), PW_OK);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(s[0].topic, "perf.runs.v1");
	cr_assert_eq(s[0].partition, 0);
	cr_assert_eq(s[0].first, 10);
	cr_assert_eq(s[0].next, 15, "commit offset is last offset + 1");
	cr_assert_eq(s[1].partition, 1);
	cr_assert_eq(s[1].first, 5);
	cr_assert_eq(s[1].next, 6);
	cr_assert_str_eq(s[2].topic, "perf.points.v1");
	cr_assert_eq(s[2].first, 7);
	cr_assert_eq(s[2].next, 8);
}

Test(kafka_spans, out_of_order_offsets_widen_both_ends)
{
	pw_partition_span s[1];
	size_t n = 0;
	cr_assert_eq(pw_partition_spans_add(s, &n, 1, "t", 3, 20), PW_OK);
	cr_assert_eq(pw_partition_spans_add(s, &n, 1, "t", 3, 18), PW_OK);
	cr_assert_eq(pw_partition_spans_add(s, &n, 1, "t", 3, 19), PW_OK);
	cr_assert_eq(n, 1);
	cr_assert_eq(s[0].first, 18);
	cr_assert_eq(s[0].next, 21);
}

Test(kafka_spans, capacity_and_bad_offsets)
{
	pw_partition_span s[2];
	size_t n = 0;
	cr_assert_eq(pw_partition_spans_add(s, &n, 2, "t", 0, 0), PW_OK);
	cr_assert_eq(pw_partition_spans_add(s, &n, 2, "t", 1, 0), PW_OK);
	cr_assert_eq(pw_partition_spans_add(s, &n, 2, "t", 2, 0), PW_ERR_NOMEM);
	cr_assert_eq(n, 2, "a refused span leaves the table unchanged");
	cr_assert_eq(pw_partition_spans_add(s, &n, 2, "t", 1, 9), PW_OK, "existing span still grows");
	cr_assert_eq(pw_partition_spans_add(s, &n, 2, "t", 0, -1), PW_ERR_INVALID);
	cr_assert_eq(pw_partition_spans_add(s, &n, 2, NULL, 0, 1), PW_ERR_INVALID);
	cr_assert_eq(s[1].next, 10);
}

/* ---------------------------------------------------------------- backoff */

Test(backoff, ceilings_double_up_to_the_cap)
{
	cr_assert_eq(pw_backoff_ceiling(100, 5000, 0), 100);
	cr_assert_eq(pw_backoff_ceiling(100, 5000, 1), 200);
	cr_assert_eq(pw_backoff_ceiling(100, 5000, 5), 3200);
	cr_assert_eq(pw_backoff_ceiling(100, 5000, 6), 5000);
	cr_assert_eq(pw_backoff_ceiling(100, 5000, 4000000000u), 5000, "no overflow");
	cr_assert_eq(pw_backoff_ceiling(0, 0, 3), 0, "degenerate inputs do not loop");
}

Test(backoff, delays_stay_in_the_upper_half_of_each_step)
{
	pw_backoff b;
	pw_backoff_init(&b, 100, 2000, 42);
	for (uint32_t i = 0; i < 40; i++) {
		uint32_t ceil = pw_backoff_ceiling(100, 2000, i);
		uint32_t d = pw_backoff_next(&b);
		cr_assert(d >= ceil / 2 && d <= ceil, "step %u: %u not in [%u, %u]", i, d, ceil / 2, ceil);
		cr_assert(d <= 2000);
	}
	pw_backoff_reset(&b);
	cr_assert_leq(pw_backoff_next(&b), 100, "reset starts over");
}

Test(backoff, jitter_differs_between_seeds_and_repeats_for_one)
{
	pw_backoff a, b, c;
	pw_backoff_init(&a, 1000, 60000, 1);
	pw_backoff_init(&b, 1000, 60000, 1);
	pw_backoff_init(&c, 1000, 60000, 2);
	int differ = 0;
	for (int i = 0; i < 10; i++) {
		uint32_t x = pw_backoff_next(&a), y = pw_backoff_next(&b), z = pw_backoff_next(&c);
		cr_assert_eq(x, y);
		differ += x != z;
	}
	cr_assert_gt(differ, 0);
}

Test(backoff, zero_base_and_low_cap_are_sane)
{
	pw_backoff b;
	pw_backoff_init(&b, 0, 0, 0);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(pw_backoff_next(&b), 1);
}

/* ------------------------------------------------- against the mock cluster */

#define TOPIC "pw.test.roundtrip"
#define NMSG 200
#define NPART 4

typedef struct mock {
	rd_kafka_t *rk; /* the handle that owns the cluster */
	rd_kafka_mock_cluster_t *mc;
	char bootstraps[256];
	pw_log lg;
} mock;

static void mock_start(mock *m)
{
	char why[256];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	cr_assert_eq(rd_kafka_conf_set(conf, "log_level", "3", why, sizeof why), RD_KAFKA_CONF_OK);
	m->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, why, sizeof why);
	cr_assert_not_null(m->rk, "%s", why);
	m->mc = rd_kafka_mock_cluster_new(m->rk, 3);
	cr_assert_not_null(m->mc);
	snprintf(m->bootstraps, sizeof m->bootstraps, "%s", rd_kafka_mock_cluster_bootstraps(m->mc));
	cr_assert_eq(rd_kafka_mock_topic_create(m->mc, TOPIC, NPART, 3), RD_KAFKA_RESP_ERR_NO_ERROR);
	pw_log_init(&m->lg, "test_kafka", getenv("PW_TEST_VERBOSE") ? PW_LOG_INFO : PW_LOG_WARN);
}

static void mock_stop(mock *m)
{
	rd_kafka_mock_cluster_destroy(m->mc);
	rd_kafka_destroy(m->rk);
}

static void produce_n(mock *m, int n)
{
	char err[512];
	pw_producer *p = NULL;
	cr_assert_eq(pw_producer_new(&p, m->bootstraps, NULL, 0, &m->lg, err, sizeof err), PW_OK,
	             "%s", err);
	for (int i = 0; i < n; i++) {
		char key[16], val[32];
		snprintf(key, sizeof key, "k%d", i % 17);
		int len = snprintf(val, sizeof val, "%d", i);
		cr_assert_eq(pw_producer_produce(p, TOPIC, key, strlen(key), val, (size_t)len, 1000, err,
		                                 sizeof err),
		             PW_OK, "%s", err);
		if (i % 50 == 0)
			pw_producer_poll(p, 0);
	}
	cr_assert_eq(pw_producer_flush(p, 20000, err, sizeof err), PW_OK, "%s", err);
	pw_producer_counts pc;
	pw_producer_counts_get(p, &pc);
	cr_assert_eq(pc.produced, (uint64_t)n);
	cr_assert_eq(pc.delivered, (uint64_t)n);
	cr_assert_eq(pc.failed, 0);
	pw_producer_free(p);
}

typedef struct seen {
	int count[NMSG];         /* times each payload was handed to a callback */
	int committed[NMSG];     /* times it was in a batch the callback accepted */
	int calls;
	int fail_first;          /* fail this many calls before accepting */
	int failed_payload[NMSG];/* payloads of the failed batch(es) */
	int distinct_committed;
	volatile sig_atomic_t stop;
} seen;

static pw_status on_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                          size_t errlen)
{
	seen *s = ctx;
	bool fail = s->calls++ < s->fail_first;
	for (size_t i = 0; i < n; i++) {
		char buf[32];
		size_t l = msgs[i]->len < sizeof buf - 1 ? msgs[i]->len : sizeof buf - 1;
		memcpy(buf, msgs[i]->payload, l);
		buf[l] = '\0';
		int v = atoi(buf);
		cr_assert(v >= 0 && v < NMSG);
		s->count[v]++;
		if (fail) {
			s->failed_payload[v] = 1;
		} else {
			if (s->committed[v]++ == 0)
				s->distinct_committed++;
		}
	}
	if (fail)
		return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "simulated database outage");
	if (s->distinct_committed == NMSG)
		s->stop = 1;
	return PW_OK;
}

static int64_t committed_total(mock *m, const char *group)
{
	char err[512];
	const char *topics[] = {TOPIC};
	pw_consumer_opts o = {.brokers = m->bootstraps, .group_id = group, .topics = topics,
	                      .ntopics = 1};
	pw_consumer *c = NULL;
	cr_assert_eq(pw_consumer_new(&c, &o, &m->lg, err, sizeof err), PW_OK, "%s", err);
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(NPART);
	for (int p = 0; p < NPART; p++)
		rd_kafka_topic_partition_list_add(l, TOPIC, p);
	cr_assert_eq(rd_kafka_committed(pw_consumer_handle(c), l, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
	int64_t total = 0;
	for (int p = 0; p < NPART; p++)
		if (l->elems[p].offset > 0)
			total += l->elems[p].offset;
	rd_kafka_topic_partition_list_destroy(l);
	pw_consumer_free(c);
	return total;
}

Test(kafka_mock, produce_consume_commit_after_work_and_retry)
{
	mock m;
	mock_start(&m);
	produce_n(&m, NMSG);

	char err[512];
	const char *topics[] = {TOPIC};
	const pw_kv props[] = {{"topic.metadata.refresh.interval.ms", "1000"}};
	pw_consumer_opts o = {.brokers = m.bootstraps, .group_id = "pw-test-g1", .topics = topics,
	                      .ntopics = 1, .props = props, .nprops = 1, .batch_max_msgs = 64,
	                      .batch_max_ms = 200, .retry_backoff_ms = 50,
	                      .retry_backoff_max_ms = 200};
	pw_consumer *c = NULL;
	cr_assert_eq(pw_consumer_new(&c, &o, &m.lg, err, sizeof err), PW_OK, "%s", err);

	seen *s = calloc(1, sizeof *s);
	s->fail_first = 1;
	cr_assert_eq(pw_consumer_run(c, on_batch, s, &s->stop, err, sizeof err), PW_OK, "%s", err);

	pw_consumer_counts cc;
	pw_consumer_counts_get(c, &cc);
	cr_assert_eq(cc.failed_batches, 1);
	cr_assert_eq(cc.messages, NMSG, "every message committed exactly once: %llu",
	             (unsigned long long)cc.messages);
	cr_assert_eq(cc.commit_errors, 0);
	int nfailed = 0;
	for (int i = 0; i < NMSG; i++) {
		cr_assert_eq(s->committed[i], 1, "payload %d accepted %d times", i, s->committed[i]);
		if (s->failed_payload[i]) {
			nfailed++;
			cr_assert_eq(s->count[i], 2, "failed payload %d redelivered once", i);
		}
	}
	cr_assert_gt(nfailed, 0, "the failed batch had messages");
	pw_consumer_free(c);

	cr_assert_eq(committed_total(&m, "pw-test-g1"), NMSG,
	             "the group's committed offsets cover every message");
	cr_assert_eq(committed_total(&m, "pw-test-unused"), 0, "no offsets without work");
	free(s);
	mock_stop(&m);
}

/* The callback of a consumer with outputs: every input message is published
 * again on OUT_TOPIC through the loop's producer, without flushing. */
#define OUT_TOPIC "pw.test.out"

typedef struct relay {
	seen s;
	pw_producer *out;
	int fail_call;            /* this call (1-based) fails after publishing; 0: none */
	int stop_after;           /* set stop after this many calls; 0: when all are accepted */
} relay;

/* Publishes every message of a batch again on OUT_TOPIC, without flushing. */
static pw_status republish(pw_producer *out, rd_kafka_message_t *const *msgs, size_t n,
                           char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		if (pw_producer_produce(out, OUT_TOPIC, NULL, 0, msgs[i]->payload, msgs[i]->len, 1000,
		                        errbuf, errlen) != PW_OK)
			return PW_ERR_KAFKA;
	return PW_OK;
}

static pw_status relay_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                             size_t errlen)
{
	relay *r = ctx;
	if (republish(r->out, msgs, n, errbuf, errlen) != PW_OK)
		return PW_ERR_KAFKA;
	r->s.fail_first = r->fail_call == r->s.calls + 1 ? r->s.calls + 1 : 0;
	pw_status st = on_batch(&r->s, msgs, n, errbuf, errlen);
	if (r->stop_after) /* instead of stopping when all were accepted */
		r->s.stop = r->s.calls >= r->stop_after;
	return st;
}

/* Runs a consumer of group `group` with r->out as its outputs to the end;
 * its counters go to *cc. */
static void relay_run(mock *m, relay *r, const char *group, size_t batch_max, int outputs_ms,
                      pw_consumer_counts *cc)
{
	char err[512];
	const char *topics[] = {TOPIC};
	pw_consumer_opts o = {.brokers = m->bootstraps, .group_id = group, .topics = topics,
	                      .ntopics = 1, .batch_max_msgs = batch_max, .batch_max_ms = 200,
	                      .retry_backoff_ms = 20, .retry_backoff_max_ms = 50, .outputs = r->out,
	                      .outputs_timeout_ms = outputs_ms};
	pw_consumer *c = NULL;
	cr_assert_eq(pw_consumer_new(&c, &o, &m->lg, err, sizeof err), PW_OK, "%s", err);
	cr_assert_eq(pw_consumer_run(c, relay_batch, r, &r->s.stop, err, sizeof err), PW_OK, "%s",
	             err);
	pw_consumer_counts_get(c, cc);
	pw_consumer_free(c);
}

Test(kafka_mock, outputs_acknowledged_before_commit_and_held_batch_committed_at_stop)
{
	mock m;
	mock_start(&m);
	cr_assert_eq(rd_kafka_mock_topic_create(m.mc, OUT_TOPIC, 2, 3), RD_KAFKA_RESP_ERR_NO_ERROR);
	produce_n(&m, NMSG);

	char err[512];
	relay *r = calloc(1, sizeof *r);
	cr_assert_eq(pw_producer_new(&r->out, m.bootstraps, NULL, 0, &m.lg, err, sizeof err), PW_OK,
	             "%s", err);
	r->fail_call = 2; /* fails while the first batch is held */
	pw_consumer_counts cc;
	relay_run(&m, r, "pw-test-out", 32, 20000, &cc);
	cr_assert_eq(cc.failed_batches, 1);
	cr_assert_eq(cc.messages, NMSG, "every message committed once: %llu",
	             (unsigned long long)cc.messages);
	for (int i = 0; i < NMSG; i++)
		cr_assert_eq(r->s.committed[i], 1, "payload %d accepted %d times", i, r->s.committed[i]);
	pw_producer_counts pc;
	pw_producer_counts_get(r->out, &pc);
	cr_assert_eq(pc.failed, 0);
	cr_assert_eq(pc.delivered, pc.produced, "every output acknowledged before the loop ended");
	cr_assert_geq(pc.produced, NMSG);
	pw_producer_free(r->out);
	cr_assert_eq(committed_total(&m, "pw-test-out"), NMSG,
	             "the last, held batch was committed at stop");
	free(r);
	mock_stop(&m);
}

Test(kafka_mock, undelivered_outputs_rewind_the_held_batch)
{
	mock m;
	mock_start(&m);
	produce_n(&m, NMSG);

	char err[512];
	relay *r = calloc(1, sizeof *r);
	/* nothing listens on port 1: every output times out */
	const pw_kv props[] = {{"message.timeout.ms", "200"}, {"log_level", "0"}};
	cr_assert_eq(pw_producer_new(&r->out, "127.0.0.1:1", props, 2, &m.lg, err, sizeof err),
	             PW_OK, "%s", err);
	r->stop_after = 3;
	pw_consumer_counts cc;
	relay_run(&m, r, "pw-test-out-fail", 100, 5000, &cc);
	cr_assert_eq(cc.batches, 0, "nothing committed while outputs fail");
	cr_assert_geq(cc.failed_batches, 1);
	cr_assert_geq(cc.dropped_batches, 1, "the batch held at stop was abandoned");
	int again = 0;
	for (int i = 0; i < NMSG; i++)
		again += r->s.count[i] >= 2;
	cr_assert_gt(again, 0, "the held batch was read again after its outputs failed");
	pw_producer_free(r->out);
	cr_assert_eq(committed_total(&m, "pw-test-out-fail"), 0);
	free(r);
	mock_stop(&m);
}

static pw_status never_ok(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                          size_t errlen)
{
	(void)msgs;
	(void)n;
	seen *s = ctx;
	if (++s->calls >= 3)
		s->stop = 1;
	return pw_fail(PW_ERR_PG, errbuf, errlen, "always failing");
}

Test(kafka_mock, failing_callback_commits_nothing)
{
	mock m;
	mock_start(&m);
	produce_n(&m, 20);

	char err[512];
	const char *topics[] = {TOPIC};
	pw_consumer_opts o = {.brokers = m.bootstraps, .group_id = "pw-test-g2", .topics = topics,
	                      .ntopics = 1, .batch_max_msgs = 100, .batch_max_ms = 300,
	                      .retry_backoff_ms = 20, .retry_backoff_max_ms = 50};
	pw_consumer *c = NULL;
	cr_assert_eq(pw_consumer_new(&c, &o, &m.lg, err, sizeof err), PW_OK, "%s", err);
	seen *s = calloc(1, sizeof *s);
	cr_assert_eq(pw_consumer_run(c, never_ok, s, &s->stop, err, sizeof err), PW_OK, "%s", err);
	pw_consumer_counts cc;
	pw_consumer_counts_get(c, &cc);
	cr_assert_eq(cc.batches, 0);
	cr_assert_eq(cc.messages, 0);
	cr_assert_geq(cc.failed_batches, 2);
	pw_consumer_free(c);
	cr_assert_eq(committed_total(&m, "pw-test-g2"), 0);
	free(s);
	mock_stop(&m);
}

Test(kafka_mock, stop_flag_set_before_run_closes_cleanly)
{
	mock m;
	mock_start(&m);
	char err[512];
	const char *topics[] = {TOPIC};
	pw_consumer_opts o = {.brokers = m.bootstraps, .group_id = "pw-test-g3", .topics = topics,
	                      .ntopics = 1};
	pw_consumer *c = NULL;
	cr_assert_eq(pw_consumer_new(&c, &o, &m.lg, err, sizeof err), PW_OK, "%s", err);
	volatile sig_atomic_t stop = 1;
	cr_assert_eq(pw_consumer_run(c, never_ok, NULL, &stop, err, sizeof err), PW_OK, "%s", err);
	cr_assert_eq(pw_consumer_run(c, never_ok, NULL, &stop, err, sizeof err), PW_ERR_INVALID,
	             "the loop runs once");
	pw_consumer_free(c);
	mock_stop(&m);
}

/*
 * Data loss: the mock cluster keeps about 5 MB a partition and deletes the
 * oldest message sets beyond that, as a broker's retention would. A group
 * that committed offset 0 and then fell 7 MB behind finds the log starting
 * past it: the loop must report exactly that jump (pw_consumer_loss), once,
 * and hand every message still kept to the callback. perf.dlq.v1 is used for
 * its place in the topic table (not compacted); here it has one partition.
 */
#define LOSS_TOPIC PW_TOPIC_DLQ
#define LOSS_MESSAGES 7000
#define LOSS_SIZE 1000

typedef struct loss_seen {
	int events;
	pw_consumer_loss first;
	char topic[64]; /* first.topic, copied: it is borrowed for the call */
	int64_t last_offset;
	int64_t handed;
	volatile sig_atomic_t stop;
} loss_seen;

static void on_loss_note(void *arg, const pw_consumer_loss *l)
{
	loss_seen *s = arg;
	if (s->events++ == 0) {
		s->first = *l;
		snprintf(s->topic, sizeof s->topic, "%s", l->topic);
	}
}

static pw_status loss_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                            size_t errlen)
{
	(void)errbuf;
	(void)errlen;
	loss_seen *s = ctx;
	for (size_t i = 0; i < n; i++) {
		s->handed++;
		s->last_offset = msgs[i]->offset;
	}
	if (s->last_offset == LOSS_MESSAGES - 1)
		s->stop = 1;
	return PW_OK;
}

Test(kafka_mock, a_jump_past_deleted_messages_is_reported_as_loss, .timeout = 120)
{
	mock m;
	mock_start(&m);
	cr_assert_eq(rd_kafka_mock_topic_create(m.mc, LOSS_TOPIC, 1, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
	char err[512], why[256];

	/* the group has read nothing yet: its committed offset is 0 */
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	cr_assert_eq(rd_kafka_conf_set(conf, "bootstrap.servers", m.bootstraps, why, sizeof why), 0);
	cr_assert_eq(rd_kafka_conf_set(conf, "group.id", "pw-test-loss", why, sizeof why), 0);
	rd_kafka_t *g = rd_kafka_new(RD_KAFKA_CONSUMER, conf, why, sizeof why);
	cr_assert_not_null(g, "%s", why);
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(l, LOSS_TOPIC, 0)->offset = 0;
	cr_assert_eq(rd_kafka_commit(g, l, 0), RD_KAFKA_RESP_ERR_NO_ERROR);
	rd_kafka_topic_partition_list_destroy(l);

	pw_producer *p = NULL;
	cr_assert_eq(pw_producer_new(&p, m.bootstraps, NULL, 0, &m.lg, err, sizeof err), PW_OK, "%s", err);
	static char value[LOSS_SIZE];
	memset(value, 'v', sizeof value);
	for (int i = 0; i < LOSS_MESSAGES; i++) {
		cr_assert_eq(pw_producer_produce(p, LOSS_TOPIC, "k", 1, value, sizeof value, 5000, err,
		                                 sizeof err),
		             PW_OK, "%s", err);
		if (i % 100 == 0)
			pw_producer_poll(p, 0);
	}
	cr_assert_eq(pw_producer_flush(p, 60000, err, sizeof err), PW_OK, "%s", err);
	pw_producer_free(p);
	int64_t lo = -1, hi = -1;
	cr_assert_eq(rd_kafka_query_watermark_offsets(g, LOSS_TOPIC, 0, &lo, &hi, 10000),
	             RD_KAFKA_RESP_ERR_NO_ERROR);
	rd_kafka_destroy(g);
	cr_assert_eq(hi, LOSS_MESSAGES);
	cr_assert_gt(lo, 0, "the mock cluster deleted nothing of %d x %d bytes", LOSS_MESSAGES,
	             LOSS_SIZE);

	loss_seen *s = calloc(1, sizeof *s);
	const char *topics[] = {LOSS_TOPIC};
	pw_consumer_opts o = {.brokers = m.bootstraps, .group_id = "pw-test-loss", .topics = topics,
	                      .ntopics = 1, .batch_max_msgs = 5000, .batch_max_ms = 50,
	                      .on_loss = on_loss_note, .health_arg = s};
	pw_consumer *c = NULL;
	cr_assert_eq(pw_consumer_new(&c, &o, &m.lg, err, sizeof err), PW_OK, "%s", err);
	cr_assert_eq(pw_consumer_run(c, loss_batch, s, &s->stop, err, sizeof err), PW_OK, "%s", err);
	pw_consumer_counts cnt;
	pw_consumer_counts_get(c, &cnt);
	pw_consumer_free(c);

	cr_assert_eq(s->events, 1, "one jump reported, %d were", s->events);
	cr_assert_str_eq(s->topic, LOSS_TOPIC);
	cr_assert_eq(s->first.partition, 0);
	cr_assert_eq(s->first.expected, 0, "expected at the committed offset, got %lld",
	             (long long)s->first.expected);
	cr_assert_eq(s->first.resumed_at, lo, "resumed at %lld, the log starts at %lld",
	             (long long)s->first.resumed_at, (long long)lo);
	cr_assert_eq(s->first.lost, lo);
	cr_assert_eq(cnt.loss_events, 1);
	cr_assert_eq(cnt.lost_messages, (uint64_t)lo);
	cr_assert_eq(s->handed, LOSS_MESSAGES - lo, "every message still kept handed over once: %lld",
	             (long long)s->handed);
	free(s);
	mock_stop(&m);
}

/* ------------------------------------------------------ producer failures */

Test(kafka_producer, queue_full_is_a_clear_error_and_failures_are_counted)
{
	char err[512];
	pw_log lg;
	pw_log_init(&lg, "test_kafka", PW_LOG_ERROR);
	/* nothing listens on port 1: messages can only time out */
	const pw_kv props[] = {{"queue.buffering.max.messages", "5"},
	                       {"message.timeout.ms", "300"},
	                       {"log_level", "0"}};
	pw_producer *p = NULL;
	cr_assert_eq(pw_producer_new(&p, "127.0.0.1:1", props, 3, &lg, err, sizeof err), PW_OK,
	             "%s", err);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(pw_producer_produce(p, "t", NULL, 0, "x", 1, 0, err, sizeof err), PW_OK,
		             "%s", err);
	cr_assert_eq(pw_producer_produce(p, "t", NULL, 0, "x", 1, 50, err, sizeof err),
	             PW_ERR_TIMEOUT);
	cr_assert(strstr(err, "queue full") != NULL, "%s", err);
	cr_assert_eq(pw_producer_flush(p, 10000, err, sizeof err), PW_ERR_KAFKA);
	cr_assert(strstr(err, "5 kafka message(s) not delivered") != NULL, "%s", err);
	pw_producer_counts pc;
	pw_producer_counts_get(p, &pc);
	cr_assert_eq(pc.produced, 5);
	cr_assert_eq(pc.failed, 5);
	cr_assert_eq(pc.delivered, 0);
	cr_assert_eq(pw_producer_flush(p, 100, err, sizeof err), PW_OK,
	             "the failure window restarts after it was reported");
	pw_producer_free(p);
}

Test(kafka_producer, generations_settle_one_at_a_time)
{
	mock m;
	mock_start(&m);
	char err[512];
	pw_producer *p = NULL;
	cr_assert_eq(pw_producer_new(&p, m.bootstraps, NULL, 0, &m.lg, err, sizeof err), PW_OK,
	             "%s", err);
	for (int i = 0; i < 10; i++)
		cr_assert_eq(pw_producer_produce(p, TOPIC, NULL, 0, "a", 1, 1000, err, sizeof err), PW_OK);
	uint64_t g1 = pw_producer_seal(p);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(pw_producer_produce(p, TOPIC, NULL, 0, "b", 1, 1000, err, sizeof err), PW_OK);
	uint64_t g2 = pw_producer_seal(p);
	cr_assert_eq(g2, g1 + 1);
	cr_assert_eq(pw_producer_settle(p, g1, 20000, err, sizeof err), PW_OK, "%s", err);
	pw_producer_counts pc;
	pw_producer_counts_get(p, &pc);
	cr_assert_geq(pc.delivered, 10, "the first generation's ten are in");
	cr_assert_eq(pw_producer_settle(p, g2, 20000, err, sizeof err), PW_OK, "%s", err);
	pw_producer_counts_get(p, &pc);
	cr_assert_eq(pc.delivered, 15);
	cr_assert_eq(pw_producer_settle(p, g2, 0, err, sizeof err), PW_OK, "settled stays settled");
	pw_producer_free(p);
	mock_stop(&m);
}

Test(kafka_producer, failed_generation_is_reported_once_and_flush_window_is_separate)
{
	char err[512];
	pw_log lg;
	pw_log_init(&lg, "test_kafka", PW_LOG_ERROR);
	const pw_kv props[] = {{"message.timeout.ms", "300"}, {"log_level", "0"}};
	pw_producer *p = NULL;
	cr_assert_eq(pw_producer_new(&p, "127.0.0.1:1", props, 2, &lg, err, sizeof err), PW_OK,
	             "%s", err);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(pw_producer_produce(p, "t", NULL, 0, "x", 1, 0, err, sizeof err), PW_OK);
	uint64_t g = pw_producer_seal(p);
	cr_assert_eq(pw_producer_settle(p, g, 0, err, sizeof err), PW_ERR_TIMEOUT,
	             "reports outstanding");
	cr_assert_eq(pw_producer_settle(p, g, 10000, err, sizeof err), PW_ERR_KAFKA);
	cr_assert(strstr(err, "3 kafka message(s) not delivered") != NULL, "%s", err);
	cr_assert_eq(pw_producer_settle(p, g, 0, err, sizeof err), PW_OK,
	             "a reported generation is forgotten");
	cr_assert_eq(pw_producer_flush(p, 100, err, sizeof err), PW_ERR_KAFKA,
	             "flush still reports the failures of its own window");

	/* more unsettled generations than the producer tracks: the seal keeps the
	 * open one, and settling it retires it like any other */
	uint64_t last = 0, prev = 0;
	for (int i = 0; i < 20; i++) {
		cr_assert_eq(pw_producer_produce(p, "t", NULL, 0, "y", 1, 0, err, sizeof err), PW_OK);
		prev = last;
		last = pw_producer_seal(p);
		cr_assert_geq(last, prev);
	}
	cr_assert_eq(last, prev, "the seal stopped advancing once the ring was full");
	cr_assert_eq(pw_producer_settle(p, last, 10000, err, sizeof err), PW_ERR_KAFKA);
	cr_assert(strstr(err, "20 kafka message(s) not delivered") != NULL, "%s", err);
	cr_assert_gt(pw_producer_seal(p), last, "sealing advances again");
	cr_assert_eq(pw_producer_settle(p, last + 1, 0, err, sizeof err), PW_OK,
	             "nothing from before is reported twice");
	pw_producer_free(p);
}

Test(kafka_producer, bad_property_is_a_config_error)
{
	char err[512];
	pw_log lg;
	pw_log_init(&lg, "test_kafka", PW_LOG_ERROR);
	const pw_kv props[] = {{"no.such.property", "1"}};
	pw_producer *p = (pw_producer *)&lg; /* must be reset to NULL */
	cr_assert_eq(pw_producer_new(&p, "127.0.0.1:1", props, 1, &lg, err, sizeof err),
	             PW_ERR_CONFIG);
	cr_assert_null(p);
	cr_assert(strstr(err, "no.such.property") != NULL, "%s", err);
	pw_producer_free(NULL);

	pw_consumer *c = NULL;
	pw_consumer_opts o = {.brokers = "127.0.0.1:1", .group_id = "", .topics = NULL};
	cr_assert_eq(pw_consumer_new(&c, &o, &lg, err, sizeof err), PW_ERR_INVALID);
	cr_assert_null(c);
	pw_consumer_free(NULL);
}

/* ------------------------------------------------------------- rebalance */

typedef struct shared {
	pthread_mutex_t mu;
	int accepted[NMSG];
	int distinct;
	volatile sig_atomic_t stop;
} shared;

typedef struct member {
	shared *sh;
	mock *m;
	pw_consumer *c;
	pw_producer *out;  /* the loop's outputs, or NULL */
	int calls;
	int messages;
	pw_status st;
	char err[512];
} member;

static pw_status slow_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                            size_t errlen)
{
	member *mb = ctx;
	if (mb->out && republish(mb->out, msgs, n, errbuf, errlen) != PW_OK)
		return PW_ERR_KAFKA;
	/* slow enough that one member alone needs ~12 s for the topic: the second
	 * must get partitions even when a loaded machine stretches the rebalance */
	struct timespec ts = {0, 300 * 1000000};
	nanosleep(&ts, NULL);
	pthread_mutex_lock(&mb->sh->mu);
	for (size_t i = 0; i < n; i++) {
		char buf[32];
		size_t l = msgs[i]->len < sizeof buf - 1 ? msgs[i]->len : sizeof buf - 1;
		memcpy(buf, msgs[i]->payload, l);
		buf[l] = '\0';
		int v = atoi(buf);
		if (v >= 0 && v < NMSG && mb->sh->accepted[v]++ == 0)
			mb->sh->distinct++;
	}
	mb->calls++;
	mb->messages += (int)n;
	if (mb->sh->distinct == NMSG)
		mb->sh->stop = 1;
	pthread_mutex_unlock(&mb->sh->mu);
	return PW_OK;
}

static void *member_run(void *arg)
{
	member *mb = arg;
	mb->st = pw_consumer_run(mb->c, slow_batch, mb, &mb->sh->stop, mb->err, sizeof mb->err);
	return NULL;
}

static void member_new(member *mb, mock *m, shared *sh, bool outputs)
{
	char err[512];
	const char *topics[] = {TOPIC};
	const pw_kv props[] = {{"heartbeat.interval.ms", "300"}, {"session.timeout.ms", "6000"}};
	memset(mb, 0, sizeof *mb);
	if (outputs)
		cr_assert_eq(pw_producer_new(&mb->out, m->bootstraps, NULL, 0, &m->lg, err, sizeof err),
		             PW_OK, "%s", err);
	pw_consumer_opts o = {.brokers = m->bootstraps, .group_id = "pw-test-rebalance",
	                      .topics = topics, .ntopics = 1, .props = props, .nprops = 2,
	                      .batch_max_msgs = 5, .batch_max_ms = 50, .outputs = mb->out};
	mb->sh = sh;
	mb->m = m;
	cr_assert_eq(pw_consumer_new(&mb->c, &o, &m->lg, err, sizeof err), PW_OK, "%s", err);
}

/* Two members of one group, the second joining once the first works; with
 * outputs, each holds a batch at every revoke. */
static void rebalance_run(bool outputs)
{
	mock m;
	mock_start(&m);
	if (outputs)
		cr_assert_eq(rd_kafka_mock_topic_create(m.mc, OUT_TOPIC, 2, 3),
		             RD_KAFKA_RESP_ERR_NO_ERROR);
	produce_n(&m, NMSG);
	shared *sh = calloc(1, sizeof *sh);
	pthread_mutex_init(&sh->mu, NULL);
	member *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
	member_new(a, &m, sh, outputs);
	pthread_t ta, tb;
	cr_assert_eq(pthread_create(&ta, NULL, member_run, a), 0);
	/* the second member joins (is even created: a subscribed consumer joins
	 * its group from librdkafka's threads) once the first is working */
	for (int i = 0; i < 300; i++) {
		pthread_mutex_lock(&sh->mu);
		int calls = a->calls;
		pthread_mutex_unlock(&sh->mu);
		if (calls > 0)
			break;
		struct timespec ts = {0, 50 * 1000000};
		nanosleep(&ts, NULL);
	}
	member_new(b, &m, sh, outputs);
	cr_assert_eq(pthread_create(&tb, NULL, member_run, b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	cr_assert_eq(a->st, PW_OK, "%s", a->err);
	cr_assert_eq(b->st, PW_OK, "%s", b->err);
	cr_assert_eq(sh->distinct, NMSG, "every message was processed");
	cr_assert_gt(b->messages, 0, "the joining member got partitions");
	pw_consumer_counts ca;
	pw_consumer_counts_get(a->c, &ca);
	cr_assert_geq(ca.assignments, 2, "the first member was re-assigned after the join (%llu assignments, %llu revocations, %d msgs; second %d msgs)", (unsigned long long)ca.assignments, (unsigned long long)ca.revocations, a->messages, b->messages);
	cr_assert_geq(ca.revocations, 2, "revoked at the rebalance and at close");
	pw_consumer_free(a->c);
	pw_consumer_free(b->c);
	for (member *mb = a; mb; mb = mb == a ? b : NULL) {
		if (!mb->out)
			continue;
		pw_producer_counts pc;
		pw_producer_counts_get(mb->out, &pc);
		cr_assert_eq(pc.delivered, pc.produced, "outputs acknowledged before the commits");
		pw_producer_free(mb->out);
	}
	cr_assert_eq(committed_total(&m, "pw-test-rebalance"), NMSG,
	             "the committed offsets of both members cover every message");
	pthread_mutex_destroy(&sh->mu);
	free(a);
	free(b);
	free(sh);
	mock_stop(&m);
}

Test(kafka_mock, rebalance_moves_partitions_and_loses_nothing)
{
	rebalance_run(false);
}

Test(kafka_mock, rebalance_with_outputs_commits_or_hands_over_the_held_batch)
{
	rebalance_run(true);
}

/* ---------------------------------------------------------------- reader */

#define RD_MSGS 120

typedef struct rd_seen {
	int count[RD_MSGS + 20];
	int total;
	int fail_at; /* refuse the message handed out as number fail_at (1-based); 0: never */
} rd_seen;

static pw_status rd_take(void *ctx, const rd_kafka_message_t *msg, char *errbuf, size_t errlen)
{
	rd_seen *s = ctx;
	if (s->fail_at && s->total + 1 == s->fail_at)
		return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "simulated failure");
	char buf[32];
	size_t l = msg->len < sizeof buf - 1 ? msg->len : sizeof buf - 1;
	memcpy(buf, msg->payload, l);
	buf[l] = '\0';
	int v = atoi(buf);
	cr_assert(v >= 0 && v < RD_MSGS + 20);
	s->count[v]++;
	s->total++;
	return PW_OK;
}

static void rd_produce(mock *m, int from, int to)
{
	char err[512];
	pw_producer *p = NULL;
	cr_assert_eq(pw_producer_new(&p, m->bootstraps, NULL, 0, &m->lg, err, sizeof err), PW_OK,
	             "%s", err);
	for (int i = from; i < to; i++) {
		char key[16], val[16];
		snprintf(key, sizeof key, "k%d", i);
		int len = snprintf(val, sizeof val, "%d", i);
		cr_assert_eq(pw_producer_produce(p, PW_TOPIC_POINTS, key, strlen(key), val, (size_t)len,
		                                 1000, err, sizeof err),
		             PW_OK, "%s", err);
	}
	cr_assert_eq(pw_producer_flush(p, 20000, err, sizeof err), PW_OK, "%s", err);
	pw_producer_free(p);
}

static pw_reader *rd_new(mock *m, const int64_t *at)
{
	char err[512];
	pw_reader *r = NULL;
	/* a group member's settings among the props are left out: nothing joins */
	static const pw_kv props[] = {{"group.instance.id", "pinned"}, {"session.timeout.ms", "6000"}};
	cr_assert_eq(pw_reader_new(&r, m->bootstraps, props, 2, PW_TOPIC_POINTS, "pw-test-reader",
	                           &m->lg, err, sizeof err),
	             PW_OK, "%s", err);
	cr_assert_eq(pw_reader_partitions(r), 12);
	cr_assert_eq(pw_reader_start(r, at, err, sizeof err), PW_OK, "%s", err);
	return r;
}

Test(kafka_reader, every_instance_reads_every_partition_to_the_end)
{
	mock m;
	mock_start(&m);
	cr_assert_eq(rd_kafka_mock_topic_create(m.mc, PW_TOPIC_POINTS, 12, 3),
	             RD_KAFKA_RESP_ERR_NO_ERROR);
	char err[512];
	pw_reader *bad = NULL;
	cr_assert_eq(pw_reader_new(&bad, m.bootstraps, NULL, 0, "not.a.topic", "g", &m.lg, err,
	                           sizeof err),
	             PW_ERR_INVALID);
	cr_assert_null(bad);

	/* an empty topic: at its end at once */
	pw_reader *a = rd_new(&m, NULL);
	rd_seen sa = {0};
	bool at_end = false;
	cr_assert_eq(pw_reader_catch_up(a, 10000, rd_take, &sa, &at_end, err, sizeof err), PW_OK,
	             "%s", err);
	cr_assert(at_end);
	cr_assert_eq(sa.total, 0);

	rd_produce(&m, 0, RD_MSGS);
	/* two readers with the same group id each see every message once */
	pw_reader *b = rd_new(&m, NULL);
	rd_seen sb = {0};
	cr_assert_eq(pw_reader_catch_up(a, 20000, rd_take, &sa, &at_end, err, sizeof err), PW_OK,
	             "%s", err);
	cr_assert(at_end, "a: read %d of %d", sa.total, RD_MSGS);
	cr_assert_eq(pw_reader_catch_up(b, 20000, rd_take, &sb, &at_end, err, sizeof err), PW_OK,
	             "%s", err);
	cr_assert(at_end, "b: read %d of %d", sb.total, RD_MSGS);
	for (int i = 0; i < RD_MSGS; i++) {
		cr_assert_eq(sa.count[i], 1, "a saw message %d %d times", i, sa.count[i]);
		cr_assert_eq(sb.count[i], 1, "b saw message %d %d times", i, sb.count[i]);
	}
	int64_t next[12], sum = 0;
	for (int32_t p = 0; p < 12; p++)
		sum += next[p] = pw_reader_next(a, p);
	cr_assert_eq(sum, RD_MSGS, "the positions cover every message");

	/* a refused message stops the catch-up; a rewind goes back to where it started */
	rd_produce(&m, RD_MSGS, RD_MSGS + 20);
	rd_seen sf = {.fail_at = 8};
	cr_assert_eq(pw_reader_catch_up(b, 20000, rd_take, &sf, &at_end, err, sizeof err),
	             PW_ERR_UNAVAILABLE);
	cr_assert_eq(sf.total, 7);
	cr_assert_eq(pw_reader_rewind(b, err, sizeof err), PW_OK, "%s", err);
	rd_seen sr = {0};
	cr_assert_eq(pw_reader_catch_up(b, 20000, rd_take, &sr, &at_end, err, sizeof err), PW_OK,
	             "%s", err);
	cr_assert(at_end);
	cr_assert_eq(sr.total, 20, "after the rewind the 20 new messages, each once (%d)", sr.total);
	for (int i = RD_MSGS; i < RD_MSGS + 20; i++)
		cr_assert_eq(sr.count[i], 1);

	/* a reader started at saved positions reads only what came after */
	pw_reader *c = rd_new(&m, next);
	rd_seen sc = {0};
	cr_assert_eq(pw_reader_catch_up(c, 20000, rd_take, &sc, &at_end, err, sizeof err), PW_OK,
	             "%s", err);
	cr_assert(at_end);
	cr_assert_eq(sc.total, 20);
	for (int i = 0; i < RD_MSGS; i++)
		cr_assert_eq(sc.count[i], 0);
	pw_reader_free(a);
	pw_reader_free(b);
	pw_reader_free(c);
	pw_reader_free(NULL);
	mock_stop(&m);
}
