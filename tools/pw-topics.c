/*
 * pw-topics.c: creates perfwatch's Kafka topics on a broker from the one
 * topic table (common/pw_topics.c), and prints that table.
 *
 * deploy/dev/stack.sh runs `pw-topics create` against the dev stack's Kafka
 * node after it answers metadata; an operator runs it once against a
 * production cluster (docs/operations.md), where deploy/kafka/create-topics.sh
 * does the same from inside the apache/kafka image with topics.txt, which is
 * `pw-topics list` written out (tests/integration/test_deploy.sh compares
 * them). It talks to the broker through librdkafka's admin API: one
 * CreateTopics request for every topic, each with its partition count, a
 * replication factor capped at the cluster's broker count (or
 * --max-replication) and its cleanup policy. A topic that exists already is
 * left alone but checked: a partition count other than the table's is an
 * error, since every key-to-partition rule of docs/architecture.md assumes it.
 * It returns once every partition's leader answers for its offsets, so that
 * the first client after it is never told "not leader for partition".
 *
 *   pw-topics list      name partitions replication cleanup-policy [max.message.bytes]
 *   pw-topics create --bootstrap HOST:PORT[,...] [--max-replication N] [--timeout SECONDS]
 *                    [--topic NAME:PARTITIONS]...
 *
 * --topic creates the named topics instead of the table's (cleanup policy
 * delete): a benchmark's or a test's own, on a broker that does not create
 * topics on first use (the dev stack's does not).
 *
 * Exit status: 0 every topic exists as the table says, 1 otherwise, 2 usage.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "pw_status.h"
#include "pw_topics.h"

enum {
	PW_TOPICS_EXIT_OK = 0,
	PW_TOPICS_EXIT_FAIL = 1,
	PW_TOPICS_EXIT_USAGE = 2,
};

typedef struct pw_topics_opts {
	const char *bootstrap;
	int max_replication; /* 0: the cluster's broker count */
	int timeout_ms;
	pw_topic_spec *extra; /* --topic: created instead of the table when nextra > 0 */
	size_t nextra;
} pw_topics_opts;

static void usage(FILE *out)
{
	fputs("usage: pw-topics list\n"
	      "       pw-topics create --bootstrap HOST:PORT[,...] [--max-replication N]"
	      " [--timeout SECONDS]\n"
	      "                        [--topic NAME:PARTITIONS]...\n"
	      "list prints 'name partitions replication cleanup-policy' per topic of the table;\n"
	      "create makes the missing topics and checks the partition counts of the others;\n"
	      "with --topic, the topics named instead of the table's.\n",
	      out);
}

static const char *cleanup_policy(const pw_topic_spec *t)
{
	return t->compacted ? "compact" : "delete";
}

static void topics_list(FILE *out)
{
	for (size_t i = 0; i < pw_topics_count; i++) {
		fprintf(out, "%s %d %d %s", pw_topics[i].name, pw_topics[i].partitions,
		        pw_topics[i].replication, cleanup_policy(&pw_topics[i]));
		if (pw_topics[i].max_message_bytes > 0)
			fprintf(out, " %d", pw_topics[i].max_message_bytes);
		fputc('\n', out);
	}
}

static bool parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

static rd_kafka_t *admin_client_new(const char *bootstrap, char *errbuf, size_t errlen)
{
	char why[512];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, why, sizeof why) ||
	    rd_kafka_conf_set(conf, "client.id", "pw-topics", why, sizeof why)) {
		pw_fail(PW_ERR_CONFIG, errbuf, errlen, "kafka client configuration: %s", why);
		rd_kafka_conf_destroy(conf);
		return NULL;
	}
	/* rd_kafka_new takes conf on success only */
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, why, sizeof why);
	if (!rk) {
		pw_fail(PW_ERR_KAFKA, errbuf, errlen, "cannot create kafka client: %s", why);
		rd_kafka_conf_destroy(conf);
	}
	return rk;
}

/* The broker count of the cluster, or -1 with errbuf filled. */
static int cluster_brokers(rd_kafka_t *rk, int timeout_ms, char *errbuf, size_t errlen)
{
	const rd_kafka_metadata_t *md = NULL;
	rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, NULL, &md, timeout_ms);
	if (err) {
		pw_fail(PW_ERR_KAFKA, errbuf, errlen, "no metadata from the cluster: %s",
		        rd_kafka_err2str(err));
		return -1;
	}
	int n = md->broker_cnt;
	rd_kafka_metadata_destroy(md);
	return n;
}

/* The partition count of topic on the cluster, or -1 with errbuf filled. */
static int topic_partitions(rd_kafka_t *rk, const char *topic, int timeout_ms, char *errbuf,
                            size_t errlen)
{
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
	if (!rkt) {
		pw_fail(PW_ERR_KAFKA, errbuf, errlen, "topic handle \"%s\": %s", topic,
		        rd_kafka_err2str(rd_kafka_last_error()));
		return -1;
	}
	const rd_kafka_metadata_t *md = NULL;
	rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, timeout_ms);
	int n = -1;
	if (err)
		pw_fail(PW_ERR_KAFKA, errbuf, errlen, "no metadata for \"%s\": %s", topic,
		        rd_kafka_err2str(err));
	else if (md->topic_cnt != 1 || md->topics[0].err)
		pw_fail(PW_ERR_KAFKA, errbuf, errlen, "no metadata for \"%s\": %s", topic,
		        rd_kafka_err2str(md->topic_cnt ? md->topics[0].err
		                                        : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART));
	else
		n = md->topics[0].partition_cnt;
	if (md)
		rd_kafka_metadata_destroy(md);
	rd_kafka_topic_destroy(rkt);
	return n;
}

/*
 * Waits until every partition of topics table[0..n) answers for its offsets
 * on its leader: CreateTopics returns before the new partitions' leaders
 * have taken them up, and a client asking meanwhile is told "not leader".
 * Returns the number of partitions that still do not answer at the deadline.
 */
static int topics_await_leaders(rd_kafka_t *rk, const pw_topic_spec *table, size_t n,
                                int timeout_ms)
{
	int64_t waited = 0;
	int left = 0;
	for (size_t i = 0; i < n; i++)
		for (int p = 0; p < table[i].partitions; p++) {
			for (;;) {
				int64_t lo, hi;
				rd_kafka_resp_err_t err =
					rd_kafka_query_watermark_offsets(rk, table[i].name, p, &lo, &hi, 2000);
				if (!err)
					break;
				if (err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
				    err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC) {
					/* the client's metadata predates the topic: ask the broker again, or
					 * librdkafka answers from that cache until its next periodic refresh */
					char why[256];
					(void)topic_partitions(rk, table[i].name, 2000, why, sizeof why);
				}
				if (waited >= timeout_ms) {
					fprintf(stderr, "pw-topics: %s [%d] has no leader answering: %s\n",
					        table[i].name, p, rd_kafka_err2str(err));
					left++;
					break;
				}
				struct timespec ts = {0, 100 * 1000000L};
				nanosleep(&ts, NULL);
				waited += 100;
			}
		}
	return left;
}

/*
 * Sends one CreateTopics request for the whole table and reports each topic.
 * Returns the number of topics that are not as the table says.
 */
static int topics_create(rd_kafka_t *rk, const pw_topics_opts *o)
{
	const pw_topic_spec *table = o->nextra ? o->extra : pw_topics;
	size_t ntable = o->nextra ? o->nextra : pw_topics_count;
	char errbuf[512];
	int brokers = cluster_brokers(rk, o->timeout_ms, errbuf, sizeof errbuf);
	if (brokers < 1) {
		fprintf(stderr, "pw-topics: %s\n", brokers < 0 ? errbuf : "the cluster has no broker");
		return (int)ntable;
	}
	int cap = o->max_replication > 0 && o->max_replication < brokers ? o->max_replication
	                                                                 : brokers;
	int bad = 0;
	rd_kafka_NewTopic_t **nt = calloc(ntable, sizeof *nt);
	size_t made = 0;
	if (!nt) {
		fprintf(stderr, "pw-topics: out of memory\n");
		return (int)ntable;
	}
	for (size_t i = 0; i < ntable; i++) {
		const pw_topic_spec *t = &table[i];
		int repl = t->replication < cap ? t->replication : cap;
		nt[made] = rd_kafka_NewTopic_new(t->name, t->partitions, repl, errbuf, sizeof errbuf);
		char maxb[16];
		snprintf(maxb, sizeof maxb, "%d", t->max_message_bytes);
		if (!nt[made] ||
		    rd_kafka_NewTopic_set_config(nt[made], "cleanup.policy", cleanup_policy(t)) ||
		    (t->max_message_bytes > 0 &&
		     rd_kafka_NewTopic_set_config(nt[made], "max.message.bytes", maxb))) {
			fprintf(stderr, "pw-topics: topic \"%s\": %s\n", t->name, errbuf);
			if (nt[made])
				rd_kafka_NewTopic_destroy(nt[made]);
			bad++;
			continue;
		}
		made++;
	}
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	rd_kafka_AdminOptions_t *ao = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
	rd_kafka_AdminOptions_set_operation_timeout(ao, o->timeout_ms, errbuf, sizeof errbuf);
	rd_kafka_AdminOptions_set_request_timeout(ao, o->timeout_ms, errbuf, sizeof errbuf);
	rd_kafka_CreateTopics(rk, nt, made, ao, q);
	rd_kafka_event_t *ev = rd_kafka_queue_poll(q, o->timeout_ms + 5000);
	const rd_kafka_CreateTopics_result_t *res = ev ? rd_kafka_event_CreateTopics_result(ev) : NULL;
	if (!res) {
		fprintf(stderr, "pw-topics: no answer to CreateTopics within %d ms%s%s\n",
		        o->timeout_ms + 5000, ev ? ": " : "", ev ? rd_kafka_event_error_string(ev) : "");
		bad += (int)made;
		goto done;
	}
	if (rd_kafka_event_error(ev)) {
		fprintf(stderr, "pw-topics: CreateTopics failed: %s\n", rd_kafka_event_error_string(ev));
		bad += (int)made;
		goto done;
	}
	size_t nres;
	const rd_kafka_topic_result_t **tr = rd_kafka_CreateTopics_result_topics(res, &nres);
	for (size_t i = 0; i < nres; i++) {
		const char *name = rd_kafka_topic_result_name(tr[i]);
		rd_kafka_resp_err_t err = rd_kafka_topic_result_error(tr[i]);
		const pw_topic_spec *t = NULL;
		for (size_t k = 0; k < ntable && !t; k++)
			if (strcmp(table[k].name, name) == 0)
				t = &table[k];
		if (!t)
			continue;
		int repl = t->replication < cap ? t->replication : cap;
		if (!err) {
			printf("created %s (%d partitions, replication %d, cleanup.policy=%s", name,
			       t->partitions, repl, cleanup_policy(t));
			if (t->max_message_bytes > 0)
				printf(", max.message.bytes=%d", t->max_message_bytes);
			printf(")\n");
			continue;
		}
		if (err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
			fprintf(stderr, "pw-topics: cannot create \"%s\": %s\n", name,
			        rd_kafka_topic_result_error_string(tr[i]));
			bad++;
			continue;
		}
		int parts = topic_partitions(rk, name, o->timeout_ms, errbuf, sizeof errbuf);
		if (parts < 0) {
			fprintf(stderr, "pw-topics: %s\n", errbuf);
			bad++;
		} else if (parts != t->partitions) {
			fprintf(stderr,
			        "pw-topics: topic \"%s\" exists with %d partitions, the table says %d\n"
			        "detail: keys map to partitions by count; recreate the topic or change "
			        "common/pw_topics.c\n",
			        name, parts, t->partitions);
			bad++;
		} else {
			printf("exists  %s (%d partitions)\n", name, parts);
		}
	}
	if (bad == 0)
		bad = topics_await_leaders(rk, table, ntable, o->timeout_ms);
done:
	if (ev)
		rd_kafka_event_destroy(ev);
	rd_kafka_AdminOptions_destroy(ao);
	rd_kafka_queue_destroy(q);
	rd_kafka_NewTopic_destroy_array(nt, made);
	free(nt);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return PW_TOPICS_EXIT_USAGE;
	}
	if (strcmp(argv[1], "list") == 0 && argc == 2) {
		topics_list(stdout);
		return PW_TOPICS_EXIT_OK;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return PW_TOPICS_EXIT_OK;
	}
	if (strcmp(argv[1], "create") != 0) {
		usage(stderr);
		return PW_TOPICS_EXIT_USAGE;
	}
	pw_topics_opts o = {.timeout_ms = 30000};
	static pw_topic_spec extra[64];
	static char *extra_names[64];
	static int extra_parts[64];
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		int secs;
		if (strcmp(a, "--bootstrap") == 0 && v) {
			o.bootstrap = v;
		} else if (strcmp(a, "--max-replication") == 0 && v &&
		           parse_int(v, 1, 1000, &o.max_replication)) {
		} else if (strcmp(a, "--timeout") == 0 && v && parse_int(v, 1, 3600, &secs)) {
			o.timeout_ms = secs * 1000;
		} else if (strcmp(a, "--topic") == 0 && v && strchr(v, ':') && o.nextra < 64 &&
		           strchr(v, ':') > v &&
		           parse_int(strchr(v, ':') + 1, 1, 10000, &extra_parts[o.nextra])) {
			extra_names[o.nextra] = strndup(v, (size_t)(strchr(v, ':') - v));
			if (!extra_names[o.nextra]) {
				fprintf(stderr, "pw-topics: out of memory\n");
				return PW_TOPICS_EXIT_FAIL;
			}
			extra[o.nextra] = (pw_topic_spec){extra_names[o.nextra], extra_parts[o.nextra], 1,
			                                  false, NULL, 0};
			o.nextra++;
			o.extra = extra;
		} else {
			fprintf(stderr, "pw-topics: invalid argument \"%s\"%s%s\n", a, v ? " " : "",
			        v ? v : "");
			usage(stderr);
			return PW_TOPICS_EXIT_USAGE;
		}
		i++;
	}
	if (!o.bootstrap || !o.bootstrap[0]) {
		fprintf(stderr, "pw-topics: create needs --bootstrap\n");
		return PW_TOPICS_EXIT_USAGE;
	}
	char errbuf[512];
	rd_kafka_t *rk = admin_client_new(o.bootstrap, errbuf, sizeof errbuf);
	if (!rk) {
		fprintf(stderr, "pw-topics: %s\n", errbuf);
		return PW_TOPICS_EXIT_FAIL;
	}
	int bad = topics_create(rk, &o);
	rd_kafka_destroy(rk);
	if (bad > 0)
		fprintf(stderr, "pw-topics: %d of %zu topics are not as %s\n", bad,
		        o.nextra ? o.nextra : pw_topics_count,
		        o.nextra ? "asked" : "the table says");
	for (size_t i = 0; i < o.nextra; i++)
		free(extra_names[i]);
	return bad > 0 ? PW_TOPICS_EXIT_FAIL : PW_TOPICS_EXIT_OK;
}
