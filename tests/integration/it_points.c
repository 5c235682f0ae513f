/*
 * it_points.c: counts the distinct series points on perf.points.v1 whose run
 * id starts with a prefix, for the ingester's integration tests
 * (test_ingest.sh, test_ingest_crash.sh).
 *
 * It reads the topic from the beginning in a fresh consumer group through the
 * project's consumer loop (pw_kafka.h), decodes every SeriesPoint, and keeps
 * the set of (run id, repeat, metric) of the prefix, until it holds
 * --expect entries or --timeout seconds passed. Prints one JSON line
 * {"distinct":N,"messages":M,"bad_series_id":B}; exits 0 when N == expect and
 * every point carried a positive series id and a series key that agrees with
 * its structured key, 1 otherwise, 2 on usage.
 *
 *   it_points --prefix P --expect N [--timeout S]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfwatch/v1/series.pb-c.h"
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_topics.h"

typedef struct set {
	char **keys;
	size_t cap, n;
} set;

static uint64_t fnv(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static int set_add(set *s, const char *k)
{
	if ((s->n + 1) * 2 > s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 1024;
		char **nk = calloc(nc, sizeof *nk);
		if (!nk)
			return -1;
		for (size_t i = 0; i < s->cap; i++)
			if (s->keys[i]) {
				size_t j = fnv(s->keys[i]) & (nc - 1);
				while (nk[j])
					j = (j + 1) & (nc - 1);
				nk[j] = s->keys[i];
			}
		free(s->keys);
		s->keys = nk;
		s->cap = nc;
	}
	size_t i = fnv(k) & (s->cap - 1);
	while (s->keys[i]) {
		if (strcmp(s->keys[i], k) == 0)
			return 0;
		i = (i + 1) & (s->cap - 1);
	}
	s->keys[i] = strdup(k);
	if (!s->keys[i])
		return -1;
	s->n++;
	return 1;
}

typedef struct ctx {
	const char *prefix;
	size_t expect;
	set seen;
	uint64_t messages, bad;
	time_t deadline;
} ctx;

/* set by the batch callback when done, or by SIGALRM at the deadline (an idle topic has no batches) */
static volatile sig_atomic_t stop_flag;

static void on_alarm(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static pw_status on_batch(void *arg, rd_kafka_message_t *const *msgs, size_t n, char *e, size_t el)
{
	ctx *c = arg;
	size_t plen = strlen(c->prefix);
	for (size_t i = 0; i < n; i++) {
		Perfwatch__V1__SeriesPoint *p =
			perfwatch__v1__series_point__unpack(NULL, msgs[i]->len, msgs[i]->payload);
		if (!p)
			continue;
		if (strncmp(p->run_id, c->prefix, plen) == 0) {
			c->messages++;
			char want[1200], k[600];
			if (p->key)
				snprintf(want, sizeof want, "%s/%s/%s/%s/%s", p->key->model,
				         p->key->hlo_fingerprint, p->key->platform, p->key->config,
				         p->key->metric);
			bool key_ok = p->key && strcmp(want, p->series_key) == 0 && msgs[i]->key &&
			              msgs[i]->key_len == strlen(p->series_key) &&
			              memcmp(msgs[i]->key, p->series_key, msgs[i]->key_len) == 0;
			if (p->series_id <= 0 || !key_ok)
				c->bad++;
			snprintf(k, sizeof k, "%s\x1f%u\x1f%s", p->run_id, p->repeat_index,
			         p->key ? p->key->metric : "");
			if (set_add(&c->seen, k) < 0) {
				perfwatch__v1__series_point__free_unpacked(p, NULL);
				return pw_fail(PW_ERR_NOMEM, e, el, "out of memory");
			}
		}
		perfwatch__v1__series_point__free_unpacked(p, NULL);
	}
	if (c->seen.n >= c->expect || time(NULL) > c->deadline)
		stop_flag = 1;
	return PW_OK;
}

int main(int argc, char **argv)
{
	ctx c;
	memset(&c, 0, sizeof c);
	int timeout = 120;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--prefix") == 0)
			c.prefix = argv[i + 1];
		else if (strcmp(argv[i], "--expect") == 0)
			c.expect = strtoull(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--timeout") == 0)
			timeout = atoi(argv[i + 1]);
		else {
			fprintf(stderr, "usage: it_points --prefix P --expect N [--timeout S]\n");
			return 2;
		}
	}
	const char *brokers = getenv("PW_KAFKA_BOOTSTRAP_SERVERS");
	if (!c.prefix || !c.expect || !brokers) {
		fprintf(stderr, "usage: it_points --prefix P --expect N [--timeout S] "
		                "(PW_KAFKA_BOOTSTRAP_SERVERS set)\n");
		return 2;
	}
	c.deadline = time(NULL) + timeout;
	pw_log lg;
	pw_log_init(&lg, "it_points", PW_LOG_WARN);
	char group[128], err[512];
	snprintf(group, sizeof group, "it-points-%d-%ld", (int)getpid(), (long)time(NULL));
	const char *topics[] = {PW_TOPIC_POINTS};
	pw_consumer_opts o = {.brokers = brokers, .group_id = group, .topics = topics, .ntopics = 1,
	                      .batch_max_msgs = 5000, .batch_max_ms = 200};
	pw_consumer *cons = NULL;
	int rc = 1;
	if (pw_consumer_new(&cons, &o, &lg, err, sizeof err) != PW_OK) {
		fprintf(stderr, "it_points: %s\n", err);
		goto out;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned)timeout);
	if (pw_consumer_run(cons, on_batch, &c, &stop_flag, err, sizeof err) != PW_OK) {
		fprintf(stderr, "it_points: %s\n", err);
		goto out;
	}
	printf("{\"distinct\":%zu,\"messages\":%llu,\"bad_series_id\":%llu}\n", c.seen.n,
	       (unsigned long long)c.messages, (unsigned long long)c.bad);
	rc = c.seen.n == c.expect && c.bad == 0 ? 0 : 1;
out:
	pw_consumer_free(cons);
	for (size_t i = 0; i < c.seen.cap; i++)
		free(c.seen.keys[i]);
	free(c.seen.keys);
	return rc;
}
