/*
 * bench_kafka.c: throughput of the project's Kafka producer and consumer loop
 * (common/pw_kafka.c) against the dev broker.
 *
 * bench/kafka.sh runs it and, in the same run, kcat on the same broker and
 * amount, and prints the ratios. This program does the project's half.
 * `produce` sends N messages of S bytes with pw_producer (idempotent,
 * acks=all, key = message number mod 1024) and flushes; `consume` reads them
 * from the beginning with pw_consumer_run in a fresh group (the callback does
 * nothing; every batch is committed synchronously) until N messages are in.
 * --topics K spreads the messages over K topics T.00 .. T.K-1: the dev broker
 * (librdkafka's mock cluster) keeps only about 5 MB per partition and cannot
 * create topics on request (auto-created topics get 4 partitions), so a
 * million 200-byte messages must be spread for all of them to be readable.
 * It prints one machine-readable line per phase:
 *
 *   produce msgs=N bytes=B secs=T rate=R
 *   consume msgs=N secs=T rate=R steady_msgs=M steady_secs=T2 steady_rate=R2 batches=K
 *
 * consume secs run from pw_consumer_new to the last commit and include the
 * group join; the steady figures start at the first batch handed over (so
 * they exclude the join and the first batch's gathering).
 *
 *   bench_kafka produce|consume --topic T [--topics K] [--messages N] [--size S]
 *                               [--batch B] [--timeout SECS]
 * PW_KAFKA_BOOTSTRAP_SERVERS names the broker; PW_BENCH_DEBUG=1 logs at debug level.
 */
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_status.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Set by SIGINT/SIGTERM, or by the callback when every message is in. */
static volatile sig_atomic_t bench_stop;

static void bench_on_signal(int sig)
{
	(void)sig;
	bench_stop = 1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

typedef struct bench_consume {
	uint64_t want;
	uint64_t got;
	uint64_t bytes;
	uint64_t first_batch;
	double t_first;          /* first batch handed over */
	double t_last;           /* last batch handed over */
	volatile sig_atomic_t *stop;
} bench_consume;

static pw_status bench_on_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n,
                                char *errbuf, size_t errlen)
{
	(void)errbuf;
	(void)errlen;
	bench_consume *b = ctx;
	double t = now_s();
	if (b->got == 0) {
		b->t_first = t;
		b->first_batch = n;
	}
	for (size_t i = 0; i < n; i++)
		b->bytes += msgs[i]->len;
	b->got += n;
	b->t_last = t;
	if (b->got >= b->want)
		*b->stop = 1;
	return PW_OK;
}

/* Topic name of message i: T itself, or T.NN when spread over k topics. */
static void bench_topic(char *buf, size_t n, const char *topic, long k, long i, long total)
{
	if (k <= 1)
		snprintf(buf, n, "%s", topic);
	else
		snprintf(buf, n, "%s.%02ld", topic, i * k / total);
}

static int bench_produce(const char *brokers, const char *topic, long k, long n, long size,
                         const pw_log *lg)
{
	char err[1024], name[256];
	int rc = 1;
	pw_producer *p = NULL;
	char *payload = malloc((size_t)size + 32);
	if (!payload)
		return 1;
	for (long i = 0; i < size; i++)
		payload[i] = (char)('a' + i % 26);
	double t0 = now_s();
	if (pw_producer_new(&p, brokers, NULL, 0, lg, err, sizeof err) != PW_OK)
		goto fail;
	for (long i = 0; i < n && !bench_stop; i++) {
		char key[16];
		int kl = snprintf(key, sizeof key, "k%ld", i % 1024);
		int l = snprintf(payload, 24, "%ld", i); /* distinct content, same size */
		payload[l] = ' ';
		bench_topic(name, sizeof name, topic, k, i, n);
		if (pw_producer_produce(p, name, key, (size_t)kl, payload, (size_t)size, 10000, err,
		                        sizeof err) != PW_OK)
			goto fail;
		if ((i & 1023) == 0)
			pw_producer_poll(p, 0);
	}
	if (pw_producer_flush(p, 120000, err, sizeof err) != PW_OK)
		goto fail;
	double t1 = now_s();
	pw_producer_counts pc;
	pw_producer_counts_get(p, &pc);
	printf("produce msgs=%llu bytes=%ld secs=%.3f rate=%.0f\n", (unsigned long long)pc.delivered,
	       size, t1 - t0, (double)pc.delivered / (t1 - t0));
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "bench_kafka: %s\n", err);
out:
	pw_producer_free(p);
	free(payload);
	return rc;
}

static int bench_consume_run(const char *brokers, const char *topic, long k, long n, long batch,
                             const pw_log *lg)
{
	char err[1024], group[300];
	int rc = 1;
	long nt = k > 1 ? k : 1;
	char (*names)[256] = calloc((size_t)nt, sizeof *names);
	const char **topics = calloc((size_t)nt, sizeof *topics);
	pw_consumer *c = NULL;
	if (!names || !topics)
		goto out;
	for (long t = 0; t < nt; t++) {
		bench_topic(names[t], sizeof names[t], topic, k, t * n / nt, n);
		topics[t] = names[t];
	}
	snprintf(group, sizeof group, "pw-bench-%s-%ld", topic, (long)time(NULL));
	pw_consumer_opts o = {.brokers = brokers, .group_id = group, .topics = topics,
	                      .ntopics = (size_t)nt, .batch_max_msgs = (size_t)batch,
	                      .batch_max_ms = 100};
	bench_consume b = {.want = (uint64_t)n, .stop = &bench_stop};
	double t0 = now_s();
	if (pw_consumer_new(&c, &o, lg, err, sizeof err) != PW_OK ||
	    pw_consumer_run(c, bench_on_batch, &b, &bench_stop, err, sizeof err) != PW_OK) {
		fprintf(stderr, "bench_kafka: %s\n", err);
		goto out;
	}
	pw_consumer_counts cc;
	pw_consumer_counts_get(c, &cc);
	double steady = b.t_last - b.t_first;
	uint64_t steady_msgs = b.got - b.first_batch;
	printf("consume msgs=%llu secs=%.3f rate=%.0f steady_msgs=%llu steady_secs=%.3f "
	       "steady_rate=%.0f batches=%llu\n",
	       (unsigned long long)b.got, b.t_last - t0,
	       b.t_last > t0 ? (double)b.got / (b.t_last - t0) : 0.0,
	       (unsigned long long)steady_msgs, steady,
	       steady > 0 ? (double)steady_msgs / steady : 0.0, (unsigned long long)cc.batches);
	if (b.got < b.want)
		fprintf(stderr, "bench_kafka: stopped after %llu of %ld messages\n",
		        (unsigned long long)b.got, n);
	else
		rc = 0;
out:
	pw_consumer_free(c);
	free(topics);
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	const char *topic = NULL;
	long n = 1000000, size = 200, batch = 10000, k = 1, timeout_s = 300;
	bool ok = argc >= 2 && (strcmp(argv[1], "produce") == 0 || strcmp(argv[1], "consume") == 0);
	for (int i = 2; ok && i < argc; i += 2) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			ok = false;
		else if (strcmp(argv[i], "--topic") == 0)
			topic = v;
		else if (strcmp(argv[i], "--topics") == 0)
			k = atol(v);
		else if (strcmp(argv[i], "--messages") == 0)
			n = atol(v);
		else if (strcmp(argv[i], "--size") == 0)
			size = atol(v);
		else if (strcmp(argv[i], "--batch") == 0)
			batch = atol(v);
		else if (strcmp(argv[i], "--timeout") == 0)
			timeout_s = atol(v);
		else
			ok = false;
	}
	const char *brokers = getenv("PW_KAFKA_BOOTSTRAP_SERVERS");
	if (!ok || !topic || !brokers || n < 1 || size < 24 || batch < 1 || k < 1 || k > 100 ||
	    timeout_s < 1) {
		fprintf(stderr,
		        "usage: bench_kafka produce|consume --topic T [--topics K] [--messages N]\n"
		        "                   [--size S>=24] [--batch B] [--timeout SECS]\n"
		        "       (PW_KAFKA_BOOTSTRAP_SERVERS names the broker; --topics K spreads\n"
		        "        the messages over T.00 .. T.K-1)\n");
		return 2;
	}
	struct sigaction sa = {.sa_handler = bench_on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned)timeout_s);

	pw_log lg;
	pw_log_init(&lg, "bench_kafka", getenv("PW_BENCH_DEBUG") ? PW_LOG_DEBUG : PW_LOG_WARN);
	if (strcmp(argv[1], "produce") == 0)
		return bench_produce(brokers, topic, k, n, size, &lg);
	return bench_consume_run(brokers, topic, k, n, batch, &lg);
}
