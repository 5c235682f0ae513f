/*
 * pw_kafka.c: the idempotent producer and the commit-after-work consumer loop.
 *
 * Both wrap one rd_kafka_t. The producer counts delivery reports in its
 * dr_msg_cb, in total and per delivery generation, so that pw_producer_flush
 * and pw_producer_settle can tell the caller whether everything arrived; the
 * consumer keeps the messages of the current batch (destroyed after the
 * batch, so memory is bounded by batch_max_msgs) and a table of per-partition
 * spans (pw_partition_spans_add, a pure function the unit tests check) from
 * which it builds both the commit list and the seek-back list. With outputs,
 * the spans of one more batch are held, without its messages, until its
 * outputs' generation settles.
 * librdkafka's own log lines are forwarded to the caller's pw_log so that a
 * service's stderr stays JSON lines. See pw_kafka.h for the contract.
 */
#include "pw_kafka.h"
#include "pw_topics.h"

#include "pw_backoff.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ----------------------------------------------------------------- shared */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* librdkafka's logs, forwarded. The opaque of every handle here is a struct
 * whose first member is the logger pointer, so the opaque converts to a
 * pointer to that member (C11 6.7.2.1p15). */
static const pw_log *opaque_log(const void *opaque)
{
	return opaque ? *(const pw_log *const *)opaque : NULL;
}

static void forward_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	const pw_log *lg = opaque_log(rd_kafka_opaque(rk));
	if (!lg)
		return;
	pw_log_level l = level <= 3 ? PW_LOG_ERROR : level == 4 ? PW_LOG_WARN
	                 : level <= 6 ? PW_LOG_INFO : PW_LOG_DEBUG;
	pw_log_write(lg, l, (const char *[]){"client", rd_kafka_name(rk), "facility", fac, NULL},
	             "librdkafka: %s", buf);
}

static void forward_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	const pw_log *lg = opaque_log(opaque);
	char fatal[256] = "";
	if (err == RD_KAFKA_RESP_ERR__FATAL)
		rd_kafka_fatal_error(rk, fatal, sizeof fatal);
	/* Transport errors and all-brokers-down are transient: librdkafka retries. */
	bool transient = err == RD_KAFKA_RESP_ERR__TRANSPORT ||
	                 err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN ||
	                 err == RD_KAFKA_RESP_ERR__RESOLVE;
	if (!lg)
		return;
	pw_log_write(lg, transient ? PW_LOG_WARN : PW_LOG_ERROR,
	             (const char *[]){"client", rd_kafka_name(rk), "code", rd_kafka_err2name(err), NULL},
	             "kafka client error: %s%s%s", reason, fatal[0] ? ": " : "", fatal);
}

static pw_status conf_set(rd_kafka_conf_t *conf, const char *key, const char *value,
                          char *errbuf, size_t errlen)
{
	char why[256];
	if (!key || !value)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen, "kafka property with no %s",
		               key ? "value" : "name");
	if (rd_kafka_conf_set(conf, key, value, why, sizeof why) != RD_KAFKA_CONF_OK)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen, "kafka property \"%s\": %s", key, why);
	return PW_OK;
}

/* Warns when the caller asked for a value we must override. */
static void warn_overridden(const pw_log *lg, const pw_kv *props, size_t nprops, const char *key,
                            const char *value)
{
	for (size_t i = 0; i < nprops; i++)
		if (props[i].key && strcmp(props[i].key, key) == 0 && props[i].value &&
		    strcmp(props[i].value, value) != 0)
			pw_log_warn(lg, "kafka property \"%s\"=\"%s\" overridden with \"%s\" (delivery rules)",
			            key, props[i].value, value);
}

/*
 * Properties of a consumer group member that a producer has no use for: a
 * service's kafka.* settings reach both, and librdkafka would warn about each
 * of these in every producer.
 */
static const char *const consumer_only[] = {
	"group.id", "group.instance.id", "partition.assignment.strategy", "session.timeout.ms",
	"heartbeat.interval.ms", "max.poll.interval.ms", "auto.offset.reset", "enable.auto.commit",
	"enable.auto.offset.store", "auto.commit.interval.ms", "fetch.min.bytes",
	"fetch.wait.max.ms", "fetch.max.bytes", "queued.min.messages", "isolation.level", NULL,
};

static bool is_consumer_only(const char *key)
{
	for (size_t i = 0; consumer_only[i]; i++)
		if (strcmp(key, consumer_only[i]) == 0)
			return true;
	return false;
}

/*
 * Builds a conf: defaults, brokers, then props in order (a producer's without
 * the consumer-only ones), then the enforced pairs.
 */
static pw_status conf_build(rd_kafka_conf_t **out, bool producer, const char *brokers,
                            const pw_kv *props, size_t nprops, const pw_kv *defaults,
                            size_t ndefaults, const pw_kv *enforced, size_t nenforced,
                            const pw_log *lg, char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	if (!conf)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for kafka configuration");
	for (size_t i = 0; i < ndefaults && st == PW_OK; i++)
		st = conf_set(conf, defaults[i].key, defaults[i].value, errbuf, errlen);
	if (st == PW_OK && brokers)
		st = conf_set(conf, "bootstrap.servers", brokers, errbuf, errlen);
	for (size_t i = 0; i < nprops && st == PW_OK; i++)
		if (!producer || !is_consumer_only(props[i].key))
			st = conf_set(conf, props[i].key, props[i].value, errbuf, errlen);
	for (size_t i = 0; i < nenforced && st == PW_OK; i++) {
		warn_overridden(lg, props, nprops, enforced[i].key, enforced[i].value);
		st = conf_set(conf, enforced[i].key, enforced[i].value, errbuf, errlen);
	}
	if (st != PW_OK) {
		rd_kafka_conf_destroy(conf);
		return st;
	}
	rd_kafka_conf_set_log_cb(conf, forward_log);
	rd_kafka_conf_set_error_cb(conf, forward_error);
	*out = conf;
	return PW_OK;
}

/* ---------------------------------------------------------------- producer */

struct producer_topic {
	char *name;
	rd_kafka_topic_t *rkt;
};

/*
 * Delivery generations (pw_producer_seal/_settle): each message carries the
 * number of the generation it was produced in as its msg_opaque, and a small
 * ring keeps the count of reports outstanding and failed per live generation.
 * A generation is live from its first message until a settle retires it.
 */
#define GEN_SLOTS 16

struct gen_slot {
	uint64_t gen;          /* which generation the slot counts; free when <= gen_retired */
	uint64_t outstanding;  /* produced, no delivery report yet */
	uint64_t failed;       /* delivery reports with an error */
};

struct pw_producer {
	const pw_log *lg; /* first: see opaque_log */
	rd_kafka_t *rk;
	pw_producer_counts counts;
	uint64_t failed_window;     /* failures since the last flush */
	char last_error[256];
	rd_kafka_resp_err_t last_err; /* of the latest failed delivery report */
	struct producer_topic *topics;
	size_t ntopics, cap_topics;
	uint64_t gen;               /* the open generation: what is produced now joins it */
	uint64_t gen_retired;       /* generations up to this one are settled and forgotten */
	struct gen_slot slots[GEN_SLOTS];
};

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	(void)rk;
	pw_producer *p = opaque;
	uint64_t gen = (uint64_t)(uintptr_t)m->_private;
	struct gen_slot *slot = &p->slots[gen % GEN_SLOTS];
	bool live = gen > p->gen_retired && slot->gen == gen;
	if (live)
		slot->outstanding--;
	if (!m->err) {
		p->counts.delivered++;
		return;
	}
	if (live)
		slot->failed++;
	p->counts.failed++;
	p->failed_window++;
	p->last_err = m->err;
	snprintf(p->last_error, sizeof p->last_error, "%s", rd_kafka_err2str(m->err));
	/* Every failure is counted and surfaces in pw_producer_flush; the log
	 * shows the first of a run and then one in 10000, to stay readable when a
	 * whole queue fails at once. */
	if (p->failed_window == 1 || p->failed_window % 10000 == 0) {
		char part[16], n[24];
		snprintf(part, sizeof part, "%d", (int)m->partition);
		snprintf(n, sizeof n, "%llu", (unsigned long long)p->failed_window);
		pw_log_write(p->lg, PW_LOG_WARN,
		             (const char *[]){"topic", m->rkt ? rd_kafka_topic_name(m->rkt) : "",
		                              "partition", part, "failed_since_flush", n, NULL},
		             "kafka delivery failed: %s", p->last_error);
	}
}

pw_status pw_producer_new(pw_producer **out, const char *brokers, const pw_kv *props,
                          size_t nprops, const pw_log *lg, char *errbuf, size_t errlen)
{
	static const pw_kv enforced[] = {
		{"enable.idempotence", "true"},
		{"acks", "all"},
	};
	char why[512];
	rd_kafka_conf_t *conf = NULL;
	pw_status st;

	*out = NULL;
	pw_producer *p = calloc(1, sizeof *p);
	if (!p)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for kafka producer");
	p->lg = lg;
	p->gen = 1; /* slots start at generation 0, retired */
	st = conf_build(&conf, true, brokers, props, nprops, NULL, 0, enforced,
	                sizeof enforced / sizeof enforced[0], lg, errbuf, errlen);
	if (st != PW_OK)
		goto fail_free;
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	rd_kafka_conf_set_opaque(conf, p);
	p->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, why, sizeof why);
	if (!p->rk) {
		/* rd_kafka_new takes conf only on success */
		rd_kafka_conf_destroy(conf);
		st = pw_fail(PW_ERR_KAFKA, errbuf, errlen, "cannot create kafka producer: %s", why);
		goto fail_free;
	}
	*out = p;
	return PW_OK;

fail_free:
	free(p);
	return st;
}

static rd_kafka_topic_t *producer_topic(pw_producer *p, const char *topic, char *errbuf,
                                        size_t errlen, pw_status *st)
{
	for (size_t i = 0; i < p->ntopics; i++)
		if (strcmp(p->topics[i].name, topic) == 0)
			return p->topics[i].rkt;
	if (p->ntopics == p->cap_topics) {
		size_t cap = p->cap_topics ? 2 * p->cap_topics : 4;
		struct producer_topic *t = realloc(p->topics, cap * sizeof *t);
		if (!t)
			goto nomem;
		p->topics = t;
		p->cap_topics = cap;
	}
	char *name = strdup(topic);
	if (!name)
		goto nomem;
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(p->rk, topic, NULL);
	if (!rkt) {
		free(name);
		*st = pw_fail(PW_ERR_KAFKA, errbuf, errlen, "cannot create topic handle \"%s\": %s",
		              topic, rd_kafka_err2str(rd_kafka_last_error()));
		return NULL;
	}
	p->topics[p->ntopics].name = name;
	p->topics[p->ntopics].rkt = rkt;
	p->ntopics++;
	return rkt;

nomem:
	*st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for topic \"%s\"", topic);
	return NULL;
}

pw_status pw_producer_produce(pw_producer *p, const char *topic, const void *key, size_t keylen,
                              const void *payload, size_t len, int queue_wait_ms,
                              char *errbuf, size_t errlen)
{
	return pw_producer_produce_hdr(p, topic, key, keylen, payload, len, NULL, NULL,
	                               queue_wait_ms, errbuf, errlen);
}

/* rd_kafka_produce, or rd_kafka_producev when the message carries a header. */
static rd_kafka_resp_err_t produce_one(pw_producer *p, rd_kafka_topic_t *rkt, const void *key,
                                       size_t keylen, const void *payload, size_t len,
                                       const char *hname, const char *hvalue)
{
	void *opaque = (void *)(uintptr_t)p->gen;
	if (!hname)
		return rd_kafka_produce(rkt, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, (void *)payload,
		                        len, key, keylen, opaque) == 0
		               ? RD_KAFKA_RESP_ERR_NO_ERROR
		               : rd_kafka_last_error();
	return rd_kafka_producev(p->rk, RD_KAFKA_V_RKT(rkt),
	                         RD_KAFKA_V_PARTITION(RD_KAFKA_PARTITION_UA),
	                         RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
	                         RD_KAFKA_V_VALUE((void *)payload, len),
	                         RD_KAFKA_V_KEY(key, keylen),
	                         RD_KAFKA_V_HEADER(hname, hvalue, (ssize_t)strlen(hvalue)),
	                         RD_KAFKA_V_OPAQUE(opaque), RD_KAFKA_V_END);
}

pw_status pw_producer_produce_hdr(pw_producer *p, const char *topic, const void *key,
                                  size_t keylen, const void *payload, size_t len,
                                  const char *hname, const char *hvalue, int queue_wait_ms,
                                  char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	if (hname && !hvalue)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "header \"%s\" without a value", hname);
	if (!topic || (!payload && len > 0))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "produce without topic or payload");
	rd_kafka_topic_t *rkt = producer_topic(p, topic, errbuf, errlen, &st);
	if (!rkt)
		return st;

	int64_t deadline = 0;
	for (;;) {
		rd_kafka_resp_err_t err = produce_one(p, rkt, key, keylen, payload, len, hname, hvalue);
		if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
			struct gen_slot *slot = &p->slots[p->gen % GEN_SLOTS];
			if (slot->gen != p->gen)
				*slot = (struct gen_slot){.gen = p->gen};
			slot->outstanding++;
			p->counts.produced++;
			return PW_OK;
		}
		if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
			int64_t now = now_ms();
			if (deadline == 0)
				deadline = now + (queue_wait_ms > 0 ? queue_wait_ms : 0);
			if (now >= deadline)
				return pw_fail(PW_ERR_TIMEOUT, errbuf, errlen,
				               "cannot produce to \"%s\": local queue full (%d undelivered)",
				               topic, rd_kafka_outq_len(p->rk));
			/* serve delivery reports: that is what frees queue space */
			rd_kafka_poll(p->rk, (int)(deadline - now < 10 ? deadline - now : 10));
			continue;
		}
		if (err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "cannot produce to \"%s\": message of %zu bytes too large", topic, len);
		if (err == RD_KAFKA_RESP_ERR__FATAL) {
			char why[256];
			rd_kafka_fatal_error(p->rk, why, sizeof why);
			return pw_fail(PW_ERR_KAFKA, errbuf, errlen,
			               "cannot produce to \"%s\": producer failed fatally: %s", topic, why);
		}
		return pw_fail(PW_ERR_KAFKA, errbuf, errlen, "cannot produce to \"%s\": %s", topic,
		               rd_kafka_err2str(err));
	}
}

int pw_producer_poll(pw_producer *p, int timeout_ms)
{
	return rd_kafka_poll(p->rk, timeout_ms);
}

static uint64_t outstanding(const pw_producer *p)
{
	return p->counts.produced - p->counts.delivered - p->counts.failed;
}

pw_status pw_producer_flush(pw_producer *p, int timeout_ms, char *errbuf, size_t errlen)
{
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	rd_kafka_flush(p->rk, timeout_ms > 0 ? timeout_ms : 0);
	/* flush returns when the queue is empty; the last reports may still be
	 * waiting on the main queue */
	while (outstanding(p) > 0) {
		int64_t left = deadline - now_ms();
		if (left <= 0)
			break;
		rd_kafka_poll(p->rk, (int)(left < 50 ? left : 50));
	}
	if (p->failed_window > 0) {
		uint64_t n = p->failed_window;
		p->failed_window = 0;
		return pw_fail(PW_ERR_KAFKA, errbuf, errlen,
		               "%llu kafka message(s) not delivered; last error: %s",
		               (unsigned long long)n, p->last_error);
	}
	if (outstanding(p) > 0)
		return pw_fail(PW_ERR_TIMEOUT, errbuf, errlen,
		               "%llu kafka message(s) still undelivered after %d ms",
		               (unsigned long long)outstanding(p), timeout_ms);
	return PW_OK;
}

uint64_t pw_producer_seal(pw_producer *p)
{
	uint64_t sealed = p->gen;
	/* the next generation's slot must be free; when it is not (settles fell
	 * GEN_SLOTS behind), later messages join the sealed generation, which only
	 * makes waiting for it more conservative */
	if (p->slots[(p->gen + 1) % GEN_SLOTS].gen <= p->gen_retired)
		p->gen++;
	return sealed;
}

pw_status pw_producer_settle(pw_producer *p, uint64_t gen, int timeout_ms, char *errbuf,
                             size_t errlen)
{
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	for (;;) {
		rd_kafka_poll(p->rk, 0);
		uint64_t waiting = 0, failed = 0;
		for (size_t i = 0; i < GEN_SLOTS; i++) {
			const struct gen_slot *s = &p->slots[i];
			if (s->gen > p->gen_retired && s->gen <= gen) {
				waiting += s->outstanding;
				failed += s->failed;
			}
		}
		if (failed > 0 || waiting == 0) {
			if (gen >= p->gen) {
				/* the open generation (seal kept it): close it so that it can
				 * be forgotten too; with everything before it retired, the
				 * next slot is free */
				p->gen_retired = p->gen - 1;
				gen = p->gen++;
			}
			if (gen > p->gen_retired)
				p->gen_retired = gen;
			if (failed == 0)
				return PW_OK;
			return pw_fail(PW_ERR_KAFKA, errbuf, errlen,
			               "%llu kafka message(s) not delivered; last error: %s",
			               (unsigned long long)failed, p->last_error);
		}
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return pw_fail(PW_ERR_TIMEOUT, errbuf, errlen,
			               "%llu kafka message(s) still undelivered after %d ms",
			               (unsigned long long)waiting, timeout_ms);
		rd_kafka_poll(p->rk, (int)(left < 20 ? left : 20));
	}
}

void pw_producer_counts_get(const pw_producer *p, pw_producer_counts *out)
{
	*out = p->counts;
}

rd_kafka_resp_err_t pw_producer_last_error(const pw_producer *p)
{
	return p->last_err;
}

void pw_producer_free(pw_producer *p)
{
	if (!p)
		return;
	if (p->rk) {
		rd_kafka_flush(p->rk, 10000);
		rd_kafka_poll(p->rk, 0);
		if (outstanding(p) > 0 || p->failed_window > 0)
			pw_log_error(p->lg,
			             "kafka producer closed with %llu undelivered and %llu failed message(s)",
			             (unsigned long long)outstanding(p),
			             (unsigned long long)p->failed_window);
	}
	for (size_t i = 0; i < p->ntopics; i++) {
		rd_kafka_topic_destroy(p->topics[i].rkt);
		free(p->topics[i].name);
	}
	free(p->topics);
	if (p->rk)
		rd_kafka_destroy(p->rk);
	free(p);
}

/* A consumer handle of group `group` that only asks about offsets. */
static pw_status group_client(rd_kafka_t **out, const char *brokers, const char *group,
                              char *errbuf, size_t errlen)
{
	char why[512];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	if (rd_kafka_conf_set(conf, "bootstrap.servers", brokers ? brokers : "", why, sizeof why) ||
	    rd_kafka_conf_set(conf, "group.id", group, why, sizeof why) ||
	    rd_kafka_conf_set(conf, "enable.auto.commit", "false", why, sizeof why)) {
		rd_kafka_conf_destroy(conf);
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen, "kafka: %s", why);
	}
	*out = rd_kafka_new(RD_KAFKA_CONSUMER, conf, why, sizeof why);
	if (!*out) {
		rd_kafka_conf_destroy(conf);
		return pw_fail(PW_ERR_KAFKA, errbuf, errlen, "cannot create kafka client: %s", why);
	}
	return PW_OK;
}

/*
 * Every partition of topics[0..ntopics) into l, its offset the partition's
 * end; the start offsets into lo[] (room for l's entries) when lo is not NULL.
 */
static pw_status partition_ends(rd_kafka_t *rk, const char *const *topics, size_t ntopics,
                                rd_kafka_topic_partition_list_t *l, int64_t **lo_out,
                                char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	size_t total = 0;
	for (size_t t = 0; t < ntopics; t++) {
		const pw_topic_spec *spec = pw_topic_find(topics[t]);
		if (!spec)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen, "unknown topic \"%s\"", topics[t]);
		total += (size_t)spec->partitions;
	}
	int64_t *lows = lo_out ? calloc(total ? total : 1, sizeof *lows) : NULL;
	if (lo_out && !lows)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	for (size_t t = 0; t < ntopics && st == PW_OK; t++) {
		const pw_topic_spec *spec = pw_topic_find(topics[t]);
		for (int p = 0; p < spec->partitions && st == PW_OK; p++) {
			int64_t lo = 0, hi = 0;
			rd_kafka_resp_err_t e;
			/* a partition whose leader is moving (a broker just restarted) answers
			 * "not leader" for a moment: asked again, up to 5 times over ~3 s */
			for (int attempt = 0;; attempt++) {
				e = rd_kafka_query_watermark_offsets(rk, topics[t], p, &lo, &hi, 5000);
				if (attempt == 4 || (e != RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION &&
				                     e != RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE))
					break;
				sleep_ms(300 * (attempt + 1));
			}
			if (e) {
				st = pw_fail(PW_ERR_KAFKA, errbuf, errlen, "end of \"%s\" [%d]: %s",
				             topics[t], p, rd_kafka_err2str(e));
				break;
			}
			if (lows)
				lows[l->cnt] = lo;
			rd_kafka_topic_partition_list_add(l, topics[t], p)->offset = hi;
		}
	}
	if (st != PW_OK)
		free(lows);
	else if (lo_out)
		*lo_out = lows;
	return st;
}

pw_status pw_kafka_group_commit_ends(const char *brokers, const char *group,
                                     const char *const *topics, size_t ntopics,
                                     size_t *npartitions, char *errbuf, size_t errlen)
{
	if (npartitions)
		*npartitions = 0;
	rd_kafka_t *rk;
	pw_status st = group_client(&rk, brokers, group, errbuf, errlen);
	if (st != PW_OK)
		return st;
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(32);
	st = partition_ends(rk, topics, ntopics, l, NULL, errbuf, errlen);
	if (st == PW_OK) {
		rd_kafka_resp_err_t e = rd_kafka_commit(rk, l, 0);
		if (e)
			st = pw_fail(PW_ERR_KAFKA, errbuf, errlen,
			             "committing the end offsets of group \"%s\": %s", group,
			             rd_kafka_err2str(e));
		else if (npartitions)
			*npartitions = (size_t)l->cnt;
	}
	rd_kafka_topic_partition_list_destroy(l);
	rd_kafka_destroy(rk);
	return st;
}

pw_status pw_kafka_group_lag(const char *brokers, const char *group, const char *const *topics,
                             size_t ntopics, int64_t *lag, char *errbuf, size_t errlen)
{
	*lag = 0;
	rd_kafka_t *rk;
	pw_status st = group_client(&rk, brokers, group, errbuf, errlen);
	if (st != PW_OK)
		return st;
	rd_kafka_topic_partition_list_t *ends = rd_kafka_topic_partition_list_new(32);
	int64_t *lows = NULL;
	st = partition_ends(rk, topics, ntopics, ends, &lows, errbuf, errlen);
	rd_kafka_topic_partition_list_t *done = NULL;
	if (st == PW_OK) {
		done = rd_kafka_topic_partition_list_copy(ends);
		rd_kafka_resp_err_t e = rd_kafka_committed(rk, done, 5000);
		if (e)
			st = pw_fail(PW_ERR_KAFKA, errbuf, errlen, "committed offsets of group \"%s\": %s",
			             group, rd_kafka_err2str(e));
	}
	for (int i = 0; st == PW_OK && i < ends->cnt; i++) {
		int64_t from = done->elems[i].offset >= 0 ? done->elems[i].offset : lows[i];
		if (ends->elems[i].offset > from)
			*lag += ends->elems[i].offset - from;
	}
	if (done)
		rd_kafka_topic_partition_list_destroy(done);
	rd_kafka_topic_partition_list_destroy(ends);
	free(lows);
	rd_kafka_destroy(rk);
	return st;
}

pw_status pw_partition_spans_add(pw_partition_span *spans, size_t *n, size_t cap,
                                 const char *topic, int32_t partition, int64_t offset)
{
	if (offset < 0 || !topic)
		return PW_ERR_INVALID;
	for (size_t i = 0; i < *n; i++) {
		pw_partition_span *s = &spans[i];
		if (s->partition != partition || (s->topic != topic && strcmp(s->topic, topic) != 0))
			continue;
		if (offset < s->first)
			s->first = offset;
		if (offset + 1 > s->next)
			s->next = offset + 1;
		return PW_OK;
	}
	if (*n >= cap)
		return PW_ERR_NOMEM;
	spans[*n] = (pw_partition_span){topic, partition, offset, offset + 1};
	(*n)++;
	return PW_OK;
}

/* --------------------------------------------------------------- consumer */

/* Where the next message of one partition must be, since its assignment. */
typedef struct part_track {
	const char *topic;  /* interned (topic_intern) */
	int32_t partition;
	int64_t next;       /* -1: not known yet */
	bool looked_up;     /* the group's committed offset was asked for */
	bool compacted;     /* compaction leaves gaps that are no loss */
} part_track;

struct pw_consumer {
	const pw_log *lg; /* first: see opaque_log */
	rd_kafka_t *rk;
	size_t batch_max;
	int batch_ms;
	uint32_t backoff_base, backoff_cap;
	rd_kafka_message_t **msgs; /* the current batch, owned */
	size_t n;
	pw_partition_span *spans;  /* spans of msgs, topics borrowed from them */
	size_t nspans;
	bool ran, closed;
	pw_consumer_counts counts;
	/* with outputs: the held batch, whose work is done and whose output
	 * messages (generations up to held_gen) await their delivery reports */
	pw_producer *outputs;
	int outputs_timeout_ms;
	pw_partition_span *held;   /* topics interned in names */
	size_t nheld, held_msgs;
	uint64_t held_gen;
	bool holding, held_failed;
	char **names;              /* topic names the held spans point to */
	size_t nnames;
	pw_partition_span *scratch;/* held and gathered spans united for a rewind */
	/* loss and health (pw_consumer_loss, pw_consumer_health) */
	part_track *tracks;
	size_t ntracks, captracks;
	void (*on_loss)(void *arg, const pw_consumer_loss *loss);
	void (*on_health)(void *arg, const pw_consumer_health *health);
	void *health_arg;
	int health_ms;
	int64_t next_health_ms;
	char **topics;             /* subscribed, owned */
	int64_t *lag;              /* per subscribed topic, for on_health */
	size_t ntopics;
	int64_t down_since_ms;     /* every broker unreachable since (monotonic); 0: one answers */
	bool lookup_pending;       /* tracks wait for their committed offsets (tracks_look_up) */
	int64_t next_probe_ms;
	bool cooperative;          /* partition.assignment.strategy is cooperative-sticky */
	int session_ms;
};

static void batch_clear(pw_consumer *c)
{
	for (size_t i = 0; i < c->n; i++)
		rd_kafka_message_destroy(c->msgs[i]);
	c->n = 0;
	c->nspans = 0;
}

static bool in_list(const rd_kafka_topic_partition_list_t *l, const char *topic, int32_t part)
{
	for (int i = 0; i < l->cnt; i++)
		if (l->elems[i].partition == part && strcmp(l->elems[i].topic, topic) == 0)
			return true;
	return false;
}

/* Drops the batch's messages of revoked partitions; keeps the rest in order. */
static void batch_drop_revoked(pw_consumer *c, const rd_kafka_topic_partition_list_t *revoked)
{
	size_t kept = 0, dropped = 0;
	for (size_t i = 0; i < c->n; i++) {
		rd_kafka_message_t *m = c->msgs[i];
		if (in_list(revoked, rd_kafka_topic_name(m->rkt), m->partition)) {
			rd_kafka_message_destroy(m);
			dropped++;
		} else {
			c->msgs[kept++] = m;
		}
	}
	c->n = kept;
	c->nspans = 0;
	for (size_t i = 0; i < c->n; i++)
		pw_partition_spans_add(c->spans, &c->nspans, c->batch_max,
		                       rd_kafka_topic_name(c->msgs[i]->rkt), c->msgs[i]->partition,
		                       c->msgs[i]->offset);
	if (dropped > 0) {
		c->counts.dropped_batches++;
		pw_log_info(c->lg, "dropped %zu uncommitted message(s) of revoked partitions", dropped);
	}
}

/* Forgets the held spans of revoked partitions: their next owner re-reads them. */
static void held_drop_revoked(pw_consumer *c, const rd_kafka_topic_partition_list_t *revoked)
{
	size_t kept = 0;
	for (size_t i = 0; i < c->nheld; i++)
		if (!in_list(revoked, c->held[i].topic, c->held[i].partition))
			c->held[kept++] = c->held[i];
	if (kept < c->nheld)
		pw_log_info(c->lg, "dropped the unacknowledged batch's spans of %zu revoked partition(s)",
		            c->nheld - kept);
	c->nheld = kept;
	if (kept == 0)
		c->holding = c->held_failed = false;
}

static pw_status held_settle(pw_consumer *c, int timeout_ms);

/* "topic:p,p,... topic:p,..." of a partition list (grouped as listed), cut to len. */
static void parts_text(const rd_kafka_topic_partition_list_t *parts, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (int i = 0; parts && i < parts->cnt && at + 1 < len; i++) {
		const rd_kafka_topic_partition_t *t = &parts->elems[i];
		bool same = i > 0 && strcmp(parts->elems[i - 1].topic, t->topic) == 0;
		int w = same ? snprintf(buf + at, len - at, ",%d", (int)t->partition)
		             : snprintf(buf + at, len - at, "%s%s:%d", i ? " " : "", t->topic,
		                        (int)t->partition);
		if (w < 0)
			break;
		at += (size_t)w;
	}
	if (at >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

static const char *topic_intern(pw_consumer *c, const char *topic);

/* The track of (topic, partition), made when create is set; NULL when absent or out of memory. */
static part_track *track_find(pw_consumer *c, const char *topic, int32_t partition, bool create)
{
	for (size_t i = 0; i < c->ntracks; i++)
		if (c->tracks[i].partition == partition && strcmp(c->tracks[i].topic, topic) == 0)
			return &c->tracks[i];
	if (!create)
		return NULL;
	if (c->ntracks == c->captracks) {
		size_t cap = c->captracks ? 2 * c->captracks : 16;
		part_track *t = realloc(c->tracks, cap * sizeof *t);
		if (!t)
			return NULL;
		c->tracks = t;
		c->captracks = cap;
	}
	const char *name = topic_intern(c, topic);
	if (!name)
		return NULL;
	const pw_topic_spec *spec = pw_topic_find(topic);
	/* a topic outside the table (a test's) is taken as compacted: no claim of loss */
	c->tracks[c->ntracks] = (part_track){name, partition, -1, false, !spec || spec->compacted};
	return &c->tracks[c->ntracks++];
}

/* Forgets the tracks of revoked partitions: a later assignment starts from the committed offset. */
static void tracks_drop(pw_consumer *c, const rd_kafka_topic_partition_list_t *revoked)
{
	size_t kept = 0;
	for (size_t i = 0; i < c->ntracks; i++)
		if (!revoked || !in_list(revoked, c->tracks[i].topic, c->tracks[i].partition))
			c->tracks[kept++] = c->tracks[i];
	c->ntracks = kept;
}

/* Fills t->next with the group's committed offset, once per assignment (-1 when none). */
/*
 * Fills the next offset of every track not yet looked up with the group's
 * committed offset (or none), in one request to the coordinator. Bounded by
 * timeout_ms; a failed request leaves them to the next call. Called once
 * after an assignment, from the loop (health_tick), and before the first
 * message of a partition is checked: never while the brokers are known to be
 * unreachable, so that the loop does not block on them.
 */
static void tracks_look_up(pw_consumer *c, int timeout_ms)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(8);
	for (size_t i = 0; i < c->ntracks; i++)
		if (!c->tracks[i].looked_up)
			rd_kafka_topic_partition_list_add(l, c->tracks[i].topic, c->tracks[i].partition);
	if (l->cnt > 0) {
		rd_kafka_resp_err_t err = rd_kafka_committed(c->rk, l, timeout_ms);
		if (err)
			pw_log_debug(c->lg, "committed offsets of %d partition(s) not known yet: %s", l->cnt,
			             rd_kafka_err2str(err));
		for (int i = 0; !err && i < l->cnt; i++) {
			part_track *t = track_find(c, l->elems[i].topic, l->elems[i].partition, false);
			if (!t || l->elems[i].err)
				continue;
			t->looked_up = true;
			if (l->elems[i].offset >= 0 && t->next < 0)
				t->next = l->elems[i].offset;
		}
	}
	rd_kafka_topic_partition_list_destroy(l);
	c->lookup_pending = false;
	for (size_t i = 0; i < c->ntracks && !c->lookup_pending; i++)
		c->lookup_pending = !c->tracks[i].looked_up;
}

/*
 * Checks a message against where its partition was to continue: a jump
 * forward on a topic that is not compacted is data loss (pw_consumer_loss),
 * logged as an error, counted and handed to on_loss.
 */
static void track_message(pw_consumer *c, const rd_kafka_message_t *m)
{
	const char *topic = rd_kafka_topic_name(m->rkt);
	part_track *t = track_find(c, topic, m->partition, true);
	if (!t)
		return;
	if (!t->looked_up) {
		c->lookup_pending = true;
		tracks_look_up(c, 5000);
		/* not known: the jump is measured from this message on */
		t->looked_up = true;
	}
	if (t->next >= 0 && m->offset > t->next && !t->compacted) {
		pw_consumer_loss loss = {topic, m->partition, t->next, m->offset, m->offset - t->next};
		char part[16], exp[24], at[24], lost[24];
		snprintf(part, sizeof part, "%d", (int)m->partition);
		snprintf(exp, sizeof exp, "%lld", (long long)loss.expected);
		snprintf(at, sizeof at, "%lld", (long long)loss.resumed_at);
		snprintf(lost, sizeof lost, "%lld", (long long)loss.lost);
		pw_log_write(c->lg, PW_LOG_ERROR,
		             (const char *[]){"topic", topic, "partition", part, "expected", exp,
		                              "resumed_at", at, "lost", lost, NULL},
		             "data loss: %s [%d]: %lld message(s) at offsets %lld..%lld were deleted by "
		             "the broker before this group read them; reading resumes at %lld",
		             topic, (int)m->partition, (long long)loss.lost, (long long)loss.expected,
		             (long long)(loss.resumed_at - 1), (long long)loss.resumed_at);
		c->counts.loss_events++;
		c->counts.lost_messages += (uint64_t)loss.lost;
		if (c->on_loss)
			c->on_loss(c->health_arg, &loss);
	}
	t->next = m->offset + 1;
}

/* A rewind moved these partitions back: their next message is the span's first. */
static void tracks_rewound(pw_consumer *c, const pw_partition_span *spans, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		part_track *t = track_find(c, spans[i].topic, spans[i].partition, false);
		if (t)
			t->next = spans[i].first;
	}
}

/* Messages not yet read by this member per subscribed topic, into c->lag. */
static void lag_measure(pw_consumer *c)
{
	for (size_t i = 0; i < c->ntopics; i++)
		c->lag[i] = -1;
	rd_kafka_topic_partition_list_t *a = NULL;
	if (rd_kafka_assignment(c->rk, &a) || !a)
		return;
	rd_kafka_position(c->rk, a);
	for (int i = 0; i < a->cnt; i++) {
		const rd_kafka_topic_partition_t *e = &a->elems[i];
		int64_t lo = -1, hi = -1;
		if (rd_kafka_get_watermark_offsets(c->rk, e->topic, e->partition, &lo, &hi) || hi < 0)
			continue;
		int64_t at = e->offset;
		if (at < 0) {
			/* nothing read since the assignment: from the committed offset */
			part_track *t = track_find(c, e->topic, e->partition, false);
			if (!t || !t->looked_up)
				continue; /* not known yet: the next report has it */
			at = t->next >= 0 ? t->next : lo >= 0 ? lo : 0; /* none: from the log's start */
		}
		for (size_t k = 0; k < c->ntopics; k++)
			if (strcmp(c->topics[k], e->topic) == 0)
				c->lag[k] = (c->lag[k] < 0 ? 0 : c->lag[k]) + (hi > at ? hi - at : 0);
	}
	rd_kafka_topic_partition_list_destroy(a);
}

/* Every broker unreachable: librdkafka says so once; a later answer clears it. */
static void consumer_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	forward_error(rk, err, reason, opaque);
	pw_consumer *c = opaque;
	if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN && c->down_since_ms == 0) {
		c->down_since_ms = now_ms();
		c->next_health_ms = 0;
	}
}

static void brokers_answered(pw_consumer *c)
{
	if (c->down_since_ms == 0)
		return;
	pw_log_info(c->lg, "kafka brokers reachable again after %lld ms",
	            (long long)(now_ms() - c->down_since_ms));
	c->down_since_ms = 0;
	c->next_health_ms = 0;
}

/*
 * Between batches: while the brokers are unreachable, asks one for metadata
 * every second (a message or a commit also clears the state); every
 * health_ms, measures the lag and reports to on_health.
 */
static void health_tick(pw_consumer *c)
{
	int64_t now = now_ms();
	if (c->down_since_ms > 0 && now >= c->next_probe_ms) {
		const rd_kafka_metadata_t *md = NULL;
		if (!rd_kafka_metadata(c->rk, 0, NULL, &md, 500) && md && md->broker_cnt > 0)
			brokers_answered(c);
		if (md)
			rd_kafka_metadata_destroy(md);
		now = now_ms();
		c->next_probe_ms = now + 1000;
	}
	if (!c->on_health || now < c->next_health_ms)
		return;
	c->next_health_ms = now + c->health_ms;
	if (c->lookup_pending && c->down_since_ms == 0)
		tracks_look_up(c, 1000);
	lag_measure(c);
	pw_consumer_health h = {(const char *const *)c->topics, c->lag, c->ntopics,
	                        c->down_since_ms > 0 ? now - c->down_since_ms : 0};
	c->on_health(c->health_arg, &h);
}

static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
	pw_consumer *c = opaque;
	bool coop = strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
	char cnt[16], list[1024];
	snprintf(cnt, sizeof cnt, "%d", parts ? parts->cnt : 0);
	parts_text(parts, list, sizeof list);
	rd_kafka_error_t *e = NULL;
	rd_kafka_resp_err_t ae = RD_KAFKA_RESP_ERR_NO_ERROR;

	if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
		c->counts.assignments++;
		for (int i = 0; parts && i < parts->cnt; i++)
			if (track_find(c, parts->elems[i].topic, parts->elems[i].partition, true))
				c->lookup_pending = true;
		pw_log_write(c->lg, PW_LOG_INFO,
		             (const char *[]){"partitions", cnt, "list", list, "protocol",
		                              rd_kafka_rebalance_protocol(rk), NULL},
		             "kafka partitions assigned");
		if (coop)
			e = rd_kafka_incremental_assign(rk, parts);
		else
			ae = rd_kafka_assign(rk, parts);
	} else {
		if (err != RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS)
			pw_log_error(c->lg, "kafka rebalance failed: %s", rd_kafka_err2str(err));
		else
			pw_log_write(c->lg, PW_LOG_INFO,
			             (const char *[]){"partitions", cnt, "list", list, "protocol",
			                              rd_kafka_rebalance_protocol(rk), NULL},
			             "kafka partitions revoked");
		c->counts.revocations++;
		/* commit the held batch while its partitions are still ours */
		held_settle(c, c->outputs_timeout_ms);
		if (parts) {
			batch_drop_revoked(c, parts);
			if (c->holding)
				held_drop_revoked(c, parts);
		}
		tracks_drop(c, parts);
		if (coop)
			e = rd_kafka_incremental_unassign(rk, parts);
		else
			ae = rd_kafka_assign(rk, NULL);
	}
	if (e) {
		pw_log_error(c->lg, "kafka %s failed: %s", coop ? "incremental assign" : "assign",
		             rd_kafka_error_string(e));
		rd_kafka_error_destroy(e);
	}
	if (ae)
		pw_log_error(c->lg, "kafka assign failed: %s", rd_kafka_err2str(ae));
}

pw_status pw_consumer_new(pw_consumer **out, const pw_consumer_opts *o, const pw_log *lg,
                          char *errbuf, size_t errlen)
{
	/*
	 * Group membership that does not stall consumption (docs/operations.md,
	 * "Members joining and leaving"): a 10 s session bounds how long a
	 * rebalance waits for members and how long a dead member's partitions
	 * wait; heartbeats every second keep a live member in. The assignment is
	 * cooperative-sticky: a member joining or leaving moves only the
	 * partitions that change owner (see consumer_close for the one defect of
	 * librdkafka 2.0 it must avoid). kafka.* settings override.
	 */
	const pw_kv defaults[] = {
		{"auto.offset.reset", "earliest"},
		{"session.timeout.ms", "10000"},
		{"heartbeat.interval.ms", "1000"},
		{"partition.assignment.strategy", o && o->assignment ? o->assignment
		                                                     : "cooperative-sticky"},
	};
	static const pw_kv enforced[] = {
		{"enable.auto.commit", "false"},
		{"enable.auto.offset.store", "false"},
	};
	char why[512];
	pw_status st;
	rd_kafka_conf_t *conf = NULL;
	rd_kafka_topic_partition_list_t *subs = NULL;

	*out = NULL;
	if (!o || !o->group_id || !o->group_id[0] || !o->topics || o->ntopics == 0)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "kafka consumer needs a group id and at least one topic");
	pw_consumer *c = calloc(1, sizeof *c);
	if (!c)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for kafka consumer");
	c->lg = lg;
	c->batch_max = o->batch_max_msgs ? o->batch_max_msgs : 1000;
	c->batch_ms = o->batch_max_ms > 0 ? o->batch_max_ms : 500;
	c->backoff_base = o->retry_backoff_ms ? o->retry_backoff_ms : 200;
	c->backoff_cap = o->retry_backoff_max_ms ? o->retry_backoff_max_ms : 30000;
	c->outputs = o->outputs;
	c->outputs_timeout_ms = o->outputs_timeout_ms > 0 ? o->outputs_timeout_ms : 30000;
	c->on_loss = o->on_loss;
	c->on_health = o->on_health;
	c->health_arg = o->health_arg;
	c->health_ms = o->health_interval_ms > 0 ? o->health_interval_ms : 2000;
	c->ntopics = o->ntopics;
	c->topics = calloc(o->ntopics, sizeof *c->topics);
	c->lag = calloc(o->ntopics, sizeof *c->lag);
	for (size_t i = 0; c->topics && i < o->ntopics; i++)
		if (!(c->topics[i] = strdup(o->topics[i] ? o->topics[i] : ""))) {
			st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for topic names");
			goto fail_free;
		}
	if (!c->topics || !c->lag) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for topic names");
		goto fail_free;
	}
	c->msgs = calloc(c->batch_max, sizeof *c->msgs);
	c->spans = calloc(c->batch_max, sizeof *c->spans);
	if (c->outputs) {
		c->held = calloc(c->batch_max, sizeof *c->held);
		c->scratch = calloc(2 * c->batch_max, sizeof *c->scratch);
	}
	if (!c->msgs || !c->spans || (c->outputs && (!c->held || !c->scratch))) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for a batch of %zu",
		             c->batch_max);
		goto fail_free;
	}

	st = conf_build(&conf, false, o->brokers, o->props, o->nprops, defaults,
	                sizeof defaults / sizeof defaults[0], enforced,
	                sizeof enforced / sizeof enforced[0], lg, errbuf, errlen);
	if (st != PW_OK)
		goto fail_free;
	st = conf_set(conf, "group.id", o->group_id, errbuf, errlen);
	if (st != PW_OK)
		goto fail_conf;
	char val[256];
	size_t vlen = sizeof val;
	c->cooperative = rd_kafka_conf_get(conf, "partition.assignment.strategy", val, &vlen) ==
	                         RD_KAFKA_CONF_OK &&
	                 strstr(val, "cooperative") != NULL;
	vlen = sizeof val;
	c->session_ms = rd_kafka_conf_get(conf, "session.timeout.ms", val, &vlen) == RD_KAFKA_CONF_OK
	                        ? atoi(val)
	                        : 10000;
	rd_kafka_conf_set_error_cb(conf, consumer_error);
	rd_kafka_conf_set_rebalance_cb(conf, on_rebalance);
	rd_kafka_conf_set_opaque(conf, c);
	c->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, why, sizeof why);
	if (!c->rk) {
		st = pw_fail(PW_ERR_KAFKA, errbuf, errlen, "cannot create kafka consumer: %s", why);
		goto fail_conf;
	}
	conf = NULL; /* owned by c->rk now */
	rd_kafka_poll_set_consumer(c->rk);

	subs = rd_kafka_topic_partition_list_new((int)o->ntopics);
	for (size_t i = 0; i < o->ntopics; i++)
		rd_kafka_topic_partition_list_add(subs, o->topics[i], RD_KAFKA_PARTITION_UA);
	rd_kafka_resp_err_t err = rd_kafka_subscribe(c->rk, subs);
	rd_kafka_topic_partition_list_destroy(subs);
	if (err) {
		st = pw_fail(PW_ERR_KAFKA, errbuf, errlen, "cannot subscribe group \"%s\": %s",
		             o->group_id, rd_kafka_err2str(err));
		goto fail_rk;
	}
	*out = c;
	return PW_OK;

fail_rk:
	rd_kafka_destroy(c->rk);
fail_conf:
	if (conf)
		rd_kafka_conf_destroy(conf);
fail_free:
	for (size_t i = 0; c->topics && i < c->ntopics; i++)
		free(c->topics[i]);
	free(c->topics);
	free(c->lag);
	free(c->scratch);
	free(c->held);
	free(c->spans);
	free(c->msgs);
	free(c);
	return st;
}

static rd_kafka_topic_partition_list_t *spans_list(const pw_partition_span *spans, size_t n,
                                                   bool next)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)n);
	for (size_t i = 0; i < n; i++)
		rd_kafka_topic_partition_list_add(l, spans[i].topic, spans[i].partition)->offset =
			next ? spans[i].next : spans[i].first;
	return l;
}

/* Commits the next offsets of spans[0..n), a batch of nmsgs messages,
 * synchronously. Failure is logged and counted, not fatal: the work is
 * durable and idempotent, so the worst case is a redelivery. */
static void spans_commit(pw_consumer *c, const pw_partition_span *spans, size_t n, size_t nmsgs)
{
	rd_kafka_topic_partition_list_t *l = spans_list(spans, n, true);
	rd_kafka_resp_err_t err = rd_kafka_commit(c->rk, l, 0);
	if (!err) {
		for (int i = 0; i < l->cnt && !err; i++)
			err = l->elems[i].err;
	}
	rd_kafka_topic_partition_list_destroy(l);
	if (err) {
		c->counts.commit_errors++;
		pw_log_warn(c->lg, "kafka offset commit failed (batch will be redelivered): %s",
		            rd_kafka_err2str(err));
		return;
	}
	c->counts.batches++;
	c->counts.messages += nmsgs;
}

/* One attempt of spans_rewind. */
static pw_status spans_seek(pw_consumer *c, const pw_partition_span *spans, size_t n, char *errbuf,
                            size_t errlen)
{
	pw_status st = PW_OK;
	rd_kafka_topic_partition_list_t *l = spans_list(spans, n, false);
	rd_kafka_error_t *e = rd_kafka_seek_partitions(c->rk, l, 10000);
	if (e) {
		st = pw_fail(PW_ERR_KAFKA, errbuf, errlen, "cannot rewind failed batch: %s",
		             rd_kafka_error_string(e));
		rd_kafka_error_destroy(e);
	}
	for (int i = 0; i < l->cnt && st == PW_OK; i++)
		if (l->elems[i].err)
			st = pw_fail(PW_ERR_KAFKA, errbuf, errlen,
			             "cannot rewind \"%s\" [%d] to offset %lld: %s", l->elems[i].topic,
			             (int)l->elems[i].partition, (long long)l->elems[i].offset,
			             rd_kafka_err2str(l->elems[i].err));
	rd_kafka_topic_partition_list_destroy(l);
	if (st == PW_OK)
		tracks_rewound(c, spans, n);
	return st;
}

/* Rewinds every partition of spans[0..n) to its first offset. A failure here
 * would skip messages, so it is fatal for the loop, but only after
 * PW_REWIND_ATTEMPTS tries: librdkafka 2.0's seek sometimes gives up at once
 * ("Timed out waiting for 7 remaining partition seek(s)", 25 ms after the
 * call) when a batch failed because PostgreSQL went away, and a seek again
 * moments later succeeds; seeking twice to the same offset is harmless. Seen
 * by the fault harness (tests/faults) as the ingester and the baseliner
 * exiting on a PostgreSQL restart. */
#define PW_REWIND_ATTEMPTS 5
static pw_status spans_rewind(pw_consumer *c, const pw_partition_span *spans, size_t n,
                              char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	for (int attempt = 1;; attempt++) {
		st = spans_seek(c, spans, n, errbuf, errlen);
		if (st == PW_OK || attempt == PW_REWIND_ATTEMPTS)
			break;
		c->counts.rewind_retries++;
		pw_log_warn(c->lg, "%s; seeking again (attempt %d of %d)", errbuf, attempt + 1,
		            PW_REWIND_ATTEMPTS);
		sleep_ms(200 * attempt);
	}
	return st;
}

/* A copy of topic owned by the consumer, for spans that outlive their messages. */
static const char *topic_intern(pw_consumer *c, const char *topic)
{
	for (size_t i = 0; i < c->nnames; i++)
		if (strcmp(c->names[i], topic) == 0)
			return c->names[i];
	char **names = realloc(c->names, (c->nnames + 1) * sizeof *names);
	if (!names)
		return NULL;
	c->names = names;
	if (!(names[c->nnames] = strdup(topic)))
		return NULL;
	return names[c->nnames++];
}

/* Holds the gathered batch (whose callback returned PW_OK) until generation
 * gen of the outputs is acknowledged. Nothing may be held already. */
static pw_status hold(pw_consumer *c, uint64_t gen, char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < c->nspans; i++) {
		c->held[i] = c->spans[i];
		if (!(c->held[i].topic = topic_intern(c, c->spans[i].topic)))
			return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for a topic name");
	}
	c->nheld = c->nspans;
	c->held_msgs = c->n;
	c->held_gen = gen;
	c->holding = true;
	c->held_failed = false;
	return PW_OK;
}

/*
 * Commits the held batch once its outputs are acknowledged, waiting up to
 * timeout_ms for their reports. PW_OK when it was committed or nothing is
 * held; PW_ERR_TIMEOUT when timeout_ms is 0 and reports are outstanding; and
 * PW_ERR_KAFKA when a delivery failed or the reports did not arrive in time:
 * the batch then stays held, marked failed, for batches_rewind.
 */
static pw_status held_settle(pw_consumer *c, int timeout_ms)
{
	if (!c->holding)
		return PW_OK;
	if (c->held_failed)
		return PW_ERR_KAFKA;
	char why[256];
	pw_status st = pw_producer_settle(c->outputs, c->held_gen, timeout_ms, why, sizeof why);
	if (st == PW_OK) {
		spans_commit(c, c->held, c->nheld, c->held_msgs);
		c->holding = false;
		return PW_OK;
	}
	if (st == PW_ERR_TIMEOUT && timeout_ms == 0)
		return st;
	char nmsg[24];
	snprintf(nmsg, sizeof nmsg, "%zu", c->held_msgs);
	pw_log_write(c->lg, PW_LOG_WARN, (const char *[]){"messages", nmsg, NULL},
	             "outputs of a batch not acknowledged, batch not committed: %s", why);
	c->counts.failed_batches++;
	c->held_failed = true;
	return PW_ERR_KAFKA;
}

/*
 * The callback returned PW_OK for the gathered batch: commits it, or with
 * outputs seals their generation and holds it once the batch held before it
 * is committed. PW_OK; PW_ERR_KAFKA when that earlier batch was not
 * acknowledged (both are for batches_rewind); PW_ERR_NOMEM. The gathered
 * messages are left to the caller.
 */
static pw_status batch_done(pw_consumer *c, char *errbuf, size_t errlen)
{
	if (!c->outputs) {
		spans_commit(c, c->spans, c->nspans, c->n);
		return PW_OK;
	}
	uint64_t gen = pw_producer_seal(c->outputs);
	if (held_settle(c, c->outputs_timeout_ms) != PW_OK)
		return PW_ERR_KAFKA;
	return hold(c, gen, errbuf, errlen);
}

/* Rewinds every partition of the gathered batch, and of the held one if it
 * failed, to its first offset, and drops both. */
static pw_status batches_rewind(pw_consumer *c, char *errbuf, size_t errlen)
{
	const pw_partition_span *spans = c->spans;
	size_t n = c->nspans;
	if (c->holding) {
		/* cannot fail: scratch holds 2 x batch_max spans */
		n = 0;
		for (size_t i = 0; i < c->nheld; i++)
			pw_partition_spans_add(c->scratch, &n, 2 * c->batch_max, c->held[i].topic,
			                       c->held[i].partition, c->held[i].first);
		for (size_t i = 0; i < c->nspans; i++)
			pw_partition_spans_add(c->scratch, &n, 2 * c->batch_max, c->spans[i].topic,
			                       c->spans[i].partition, c->spans[i].first);
		spans = c->scratch;
	}
	pw_status st = n > 0 ? spans_rewind(c, spans, n, errbuf, errlen) : PW_OK;
	c->holding = c->held_failed = false;
	batch_clear(c);
	return st;
}

/* Waits ms milliseconds in slices, returning early when *stop is set. */
static void wait_or_stop(int64_t ms, volatile sig_atomic_t *stop)
{
	int64_t end = now_ms() + ms;
	for (int64_t left = ms; left > 0 && !*stop; left = end - now_ms())
		sleep_ms(left < 100 ? left : 100);
}

/*
 * librdkafka 2.0 asserts (rdkafka_sticky_assignor.c, "assignor_state") when a
 * cooperative-sticky member is destroyed after the group answered its join
 * but before its first assignment arrived, since the assignor's state is made
 * only then. A member that has had no assignment therefore waits for it
 * before it closes, serving the queue, for at most a session timeout and a
 * few seconds; no message can arrive meanwhile, since none is assigned. When
 * the brokers are unreachable the join cannot have been answered: no wait.
 */
static void await_first_assignment(pw_consumer *c)
{
	if (!c->cooperative || c->counts.assignments > 0 || c->down_since_ms > 0)
		return;
	int64_t deadline = now_ms() + c->session_ms + 5000;
	while (c->counts.assignments == 0 && c->down_since_ms == 0 && now_ms() < deadline) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(c->rk, 100);
		if (m)
			rd_kafka_message_destroy(m);
	}
	if (c->counts.assignments == 0)
		pw_log_warn(c->lg, "closing a cooperative group member that had no assignment yet");
}

static pw_status consumer_close(pw_consumer *c, char *errbuf, size_t errlen)
{
	if (c->closed)
		return PW_OK;
	c->closed = true;
	batch_clear(c);
	await_first_assignment(c);
	rd_kafka_resp_err_t err = rd_kafka_consumer_close(c->rk);
	if (err)
		return pw_fail(PW_ERR_KAFKA, errbuf, errlen, "kafka consumer close failed: %s",
		               rd_kafka_err2str(err));
	return PW_OK;
}

pw_status pw_consumer_run(pw_consumer *c, pw_batch_fn fn, void *ctx,
                          volatile sig_atomic_t *stop, char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	char cberr[512];
	pw_backoff bo;
	int64_t deadline = 0;

	if (c->ran || c->closed)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "kafka consumer loop already ran");
	c->ran = true;
	pw_backoff_init(&bo, c->backoff_base, c->backoff_cap,
	                (uint64_t)now_ms() ^ (uint64_t)(uintptr_t)c);

	while (!*stop) {
		if (c->n == 0)
			health_tick(c);
		/* between batches, commit the held one as soon as its outputs are acknowledged */
		if (c->holding && c->n == 0 && held_settle(c, 0) == PW_ERR_KAFKA)
			goto rewind;

		/* gather */
		int timeout = c->holding ? 10 : 100;
		if (c->n > 0) {
			int64_t left = deadline - now_ms();
			timeout = left <= 0 ? 0 : left < 100 ? (int)left : 100;
		}
		rd_kafka_message_t *m = (c->n > 0 && timeout == 0) ? NULL
		                        : rd_kafka_consumer_poll(c->rk, timeout);
		if (m && m->err) {
			if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
				pw_log_debug(c->lg, "kafka partition EOF");
			} else {
				char part[16], off[24];
				snprintf(part, sizeof part, "%d", (int)m->partition);
				snprintf(off, sizeof off, "%lld", (long long)m->offset);
				c->counts.error_events++;
				pw_log_write(c->lg, PW_LOG_WARN,
				             (const char *[]){"topic", m->rkt ? rd_kafka_topic_name(m->rkt) : "",
				                              "partition", part, "offset", off, NULL},
				             "kafka consumer error: %s", rd_kafka_message_errstr(m));
			}
			bool fatal = m->err == RD_KAFKA_RESP_ERR__FATAL;
			rd_kafka_message_destroy(m);
			if (fatal) {
				char why[256];
				rd_kafka_fatal_error(c->rk, why, sizeof why);
				st = pw_fail(PW_ERR_KAFKA, errbuf, errlen, "kafka consumer failed fatally: %s",
				             why);
				goto close;
			}
			continue;
		}
		if (m) {
			brokers_answered(c);
			track_message(c, m);
			if (c->n == 0)
				deadline = now_ms() + c->batch_ms;
			/* cannot fail: there are at most batch_max spans and c->n < batch_max */
			pw_partition_spans_add(c->spans, &c->nspans, c->batch_max,
			                       rd_kafka_topic_name(m->rkt), m->partition, m->offset);
			c->msgs[c->n++] = m;
		}
		if (c->n == 0 || (c->n < c->batch_max && now_ms() < deadline))
			continue;

		/* work, then commit (or hold until the outputs are acknowledged) or rewind */
		cberr[0] = '\0';
		pw_status cst = fn(ctx, c->msgs, c->n, cberr, sizeof cberr);
		if (cst == PW_OK) {
			pw_status ds = batch_done(c, errbuf, errlen);
			if (ds != PW_OK && ds != PW_ERR_KAFKA) {
				st = ds;
				goto close;
			}
			if (ds == PW_OK) {
				batch_clear(c);
				pw_backoff_reset(&bo);
				continue;
			}
		} else {
			c->counts.failed_batches++;
			char nmsg[24];
			snprintf(nmsg, sizeof nmsg, "%zu", c->n);
			pw_log_write(c->lg, PW_LOG_WARN,
			             (const char *[]){"messages", nmsg, "status", pw_strerror(cst), NULL},
			             "batch failed, not committed: %s", cberr[0] ? cberr : pw_strerror(cst));
			held_settle(c, c->outputs_timeout_ms);
		}
	rewind:;
		uint32_t wait = pw_backoff_next(&bo);
		pw_log_debug(c->lg, "rewinding, next read in %u ms", wait);
		if ((st = batches_rewind(c, errbuf, errlen)) != PW_OK)
			goto close;
		wait_or_stop(wait, stop);
	}

	/* stop requested: hand a gathered batch over once more */
	if (c->n > 0) {
		cberr[0] = '\0';
		if (fn(ctx, c->msgs, c->n, cberr, sizeof cberr) != PW_OK) {
			c->counts.dropped_batches++;
			pw_log_warn(c->lg, "batch of %zu abandoned at shutdown, not committed: %s", c->n,
			            cberr);
		} else if (batch_done(c, errbuf, errlen) != PW_OK) {
			c->counts.dropped_batches++;
			pw_log_warn(c->lg, "batch of %zu abandoned at shutdown, not committed: the "
			            "batch before it was not acknowledged", c->n);
		}
		batch_clear(c);
	}
	if (c->holding && held_settle(c, c->outputs_timeout_ms) != PW_OK) {
		c->counts.dropped_batches++;
		pw_log_warn(c->lg, "batch of %zu abandoned at shutdown, its outputs not acknowledged",
		            c->held_msgs);
	}
	c->holding = false;

close:;
	pw_status cs = consumer_close(c, st == PW_OK ? errbuf : NULL, errlen);
	return st != PW_OK ? st : cs;
}

void pw_consumer_counts_get(const pw_consumer *c, pw_consumer_counts *out)
{
	*out = c->counts;
}

rd_kafka_t *pw_consumer_handle(pw_consumer *c)
{
	return c->rk;
}

void pw_consumer_free(pw_consumer *c)
{
	if (!c)
		return;
	if (c->rk) {
		consumer_close(c, NULL, 0);
		rd_kafka_destroy(c->rk);
	}
	batch_clear(c);
	for (size_t i = 0; i < c->nnames; i++)
		free(c->names[i]);
	free(c->names);
	for (size_t i = 0; i < c->ntopics; i++)
		free(c->topics[i]);
	free(c->topics);
	free(c->lag);
	free(c->tracks);
	free(c->scratch);
	free(c->held);
	free(c->spans);
	free(c->msgs);
	free(c);
}

/* ------------------------------------------------------------------ reader */

struct pw_reader {
	const pw_log *lg; /* first: see opaque_log */
	rd_kafka_t *rk;
	char *topic;
	int32_t npart;
	int64_t *next; /* per partition: the offset after the last message handed out, or < 0 */
	int64_t *mark; /* next as the last catch-up found it: where a rewind goes back to */
	bool compacted;
	uint64_t lost; /* messages deleted before the reader reached them (reader_loss) */
};

/*
 * Partition p was to continue at expected but the broker's log resumes at
 * resumed_at: on a topic that is not compacted the messages between were
 * deleted before the reader read them. Logged as an error and counted
 * (pw_reader_lost), never skipped in silence.
 */
static void reader_loss(pw_reader *r, int32_t p, int64_t expected, int64_t resumed_at)
{
	if (r->compacted || expected < 0 || resumed_at <= expected)
		return;
	r->lost += (uint64_t)(resumed_at - expected);
	char part[16], lost[24];
	snprintf(part, sizeof part, "%d", (int)p);
	snprintf(lost, sizeof lost, "%lld", (long long)(resumed_at - expected));
	pw_log_write(r->lg, PW_LOG_ERROR,
	             (const char *[]){"topic", r->topic, "partition", part, "lost", lost, NULL},
	             "data loss: %s [%d]: %lld message(s) at offsets %lld..%lld were deleted by the "
	             "broker before this reader read them; reading resumes at %lld",
	             r->topic, (int)p, (long long)(resumed_at - expected), (long long)expected,
	             (long long)(resumed_at - 1), (long long)resumed_at);
}

/* Membership settings of a group member: a reader is no member, so they are left out. */
static const char *const reader_skips[] = {
	"group.id", "group.instance.id", "partition.assignment.strategy", "session.timeout.ms",
	"heartbeat.interval.ms", "max.poll.interval.ms", "enable.auto.commit",
	"enable.auto.offset.store", "auto.commit.interval.ms", NULL,
};

static pw_status reader_assign(pw_reader *r, const int64_t *at, char *errbuf, size_t errlen)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(r->npart);
	if (!l)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	for (int32_t p = 0; p < r->npart; p++)
		rd_kafka_topic_partition_list_add(l, r->topic, p)->offset =
			at[p] >= 0 ? at[p] : RD_KAFKA_OFFSET_BEGINNING;
	rd_kafka_resp_err_t err = rd_kafka_assign(r->rk, l);
	rd_kafka_topic_partition_list_destroy(l);
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		return pw_fail(PW_ERR_KAFKA, errbuf, errlen, "reader of %s: assign failed: %s",
		               r->topic, rd_kafka_err2str(err));
	return PW_OK;
}

pw_status pw_reader_new(pw_reader **out, const char *brokers, const pw_kv *props, size_t nprops,
                        const char *topic, const char *group_id, const pw_log *lg,
                        char *errbuf, size_t errlen)
{
	static const pw_kv defaults[] = {{"auto.offset.reset", "earliest"}};
	static const pw_kv enforced[] = {
		{"enable.auto.commit", "false"},
		{"enable.auto.offset.store", "false"},
	};
	*out = NULL;
	const pw_topic_spec *spec = topic ? pw_topic_find(topic) : NULL;
	if (!spec || !group_id || !*group_id)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "a reader needs a topic of pw_topics.h and a group id (\"%s\")",
		               topic ? topic : "");
	pw_reader *r = calloc(1, sizeof *r);
	pw_kv *kept = calloc(nprops + 1, sizeof *kept);
	char why[512];
	pw_status st = PW_OK;
	rd_kafka_conf_t *conf = NULL;
	if (!r || !kept) {
		free(kept);
		free(r);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for a reader");
	}
	r->lg = lg;
	r->npart = spec->partitions;
	r->compacted = spec->compacted;
	r->topic = strdup(topic);
	r->next = calloc((size_t)r->npart, sizeof *r->next);
	r->mark = calloc((size_t)r->npart, sizeof *r->mark);
	if (!r->topic || !r->next || !r->mark) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for a reader");
		goto fail;
	}
	size_t nkept = 0;
	for (size_t i = 0; i < nprops; i++) {
		bool skip = false;
		for (size_t k = 0; reader_skips[k] && !skip; k++)
			skip = strcmp(props[i].key, reader_skips[k]) == 0;
		if (!skip)
			kept[nkept++] = props[i];
	}
	st = conf_build(&conf, false, brokers, kept, nkept, defaults, 1, enforced, 2, lg, errbuf,
	                errlen);
	if (st != PW_OK)
		goto fail;
	/* librdkafka's assign() wants a group id; nothing joins it and nothing is committed */
	if ((st = conf_set(conf, "group.id", group_id, errbuf, errlen)) != PW_OK)
		goto fail;
	rd_kafka_conf_set_opaque(conf, r);
	r->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, why, sizeof why);
	if (!r->rk) {
		st = pw_fail(PW_ERR_KAFKA, errbuf, errlen, "cannot create the reader of %s: %s", topic,
		             why);
		goto fail;
	}
	conf = NULL;
	rd_kafka_poll_set_consumer(r->rk);
	free(kept);
	for (int32_t p = 0; p < r->npart; p++)
		r->next[p] = r->mark[p] = -1;
	*out = r;
	return PW_OK;
fail:
	if (conf)
		rd_kafka_conf_destroy(conf);
	free(kept);
	pw_reader_free(r);
	return st;
}

int32_t pw_reader_partitions(const pw_reader *r)
{
	return r->npart;
}

pw_status pw_reader_start(pw_reader *r, const int64_t *at, char *errbuf, size_t errlen)
{
	for (int32_t p = 0; p < r->npart; p++)
		r->next[p] = r->mark[p] = at && at[p] >= 0 ? at[p] : -1;
	return reader_assign(r, r->next, errbuf, errlen);
}

pw_status pw_reader_start_at_time(pw_reader *r, int64_t ts_ms, char *errbuf, size_t errlen)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(r->npart);
	int64_t *at = calloc((size_t)r->npart, sizeof *at);
	pw_status st = PW_OK;
	if (!l || !at) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory starting a reader");
		goto out;
	}
	for (int32_t p = 0; p < r->npart; p++)
		rd_kafka_topic_partition_list_add(l, r->topic, p)->offset = ts_ms;
	rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(r->rk, l, 10000);
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
		st = pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen,
		             "could not find the offsets of %s at %" PRId64 " ms: %s", r->topic, ts_ms,
		             rd_kafka_err2str(err));
		goto out;
	}
	for (int i = 0; i < l->cnt; i++) {
		const rd_kafka_topic_partition_t *e = &l->elems[i];
		if (e->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
			st = pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen,
			             "could not find the offset of %s [%d] at %" PRId64 " ms: %s", r->topic,
			             (int)e->partition, ts_ms, rd_kafka_err2str(e->err));
			goto out;
		}
		int64_t off = e->offset;
		if (off < 0) {
			/* no message at or after ts_ms: start at the partition's end */
			int64_t lo = 0, hi = 0;
			err = rd_kafka_query_watermark_offsets(r->rk, r->topic, e->partition, &lo, &hi, 5000);
			if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
				st = pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen,
				             "could not read the end of %s [%d]: %s", r->topic,
				             (int)e->partition, rd_kafka_err2str(err));
				goto out;
			}
			off = hi;
		}
		if (e->partition >= 0 && e->partition < r->npart)
			at[e->partition] = off;
	}
	st = pw_reader_start(r, at, errbuf, errlen);
out:
	if (l)
		rd_kafka_topic_partition_list_destroy(l);
	free(at);
	return st;
}

uint64_t pw_reader_lost(const pw_reader *r)
{
	return r->lost;
}

int64_t pw_reader_next(const pw_reader *r, int32_t partition)
{
	return partition >= 0 && partition < r->npart ? r->next[partition] : -1;
}

pw_status pw_reader_rewind(pw_reader *r, char *errbuf, size_t errlen)
{
	memcpy(r->next, r->mark, (size_t)r->npart * sizeof *r->next);
	return reader_assign(r, r->next, errbuf, errlen);
}

/* Whether every partition was read to its end, as the broker says it is now. */
static pw_status reader_at_end(pw_reader *r, bool *at_end, int64_t *behind, char *errbuf,
                               size_t errlen)
{
	*at_end = true;
	*behind = 0;
	for (int32_t p = 0; p < r->npart; p++) {
		int64_t lo = 0, hi = 0;
		rd_kafka_resp_err_t err =
			rd_kafka_query_watermark_offsets(r->rk, r->topic, p, &lo, &hi, 5000);
		if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
			return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen,
			               "could not read the end of %s [%d]: %s", r->topic, (int)p,
			               rd_kafka_err2str(err));
		if (r->next[p] >= 0 && r->next[p] < lo) {
			reader_loss(r, p, r->next[p], lo);
			r->next[p] = lo;
		}
		int64_t at = r->next[p] > lo ? r->next[p] : lo;
		if (at < hi) {
			*at_end = false;
			*behind += hi - at;
		}
	}
	return PW_OK;
}

pw_status pw_reader_catch_up(pw_reader *r, int timeout_ms, pw_reader_fn fn, void *ctx,
                             bool *at_end, char *errbuf, size_t errlen)
{
	*at_end = false;
	memcpy(r->mark, r->next, (size_t)r->npart * sizeof *r->mark);
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	for (;;) {
		int64_t behind = 0;
		pw_status st = reader_at_end(r, at_end, &behind, errbuf, errlen);
		if (st != PW_OK || *at_end)
			return st;
		/* read what the broker had at the check; what arrives meanwhile is the next check's */
		while (behind > 0) {
			int64_t left = deadline - now_ms();
			if (left <= 0)
				return PW_OK;
			rd_kafka_message_t *m = rd_kafka_consumer_poll(r->rk, (int)(left > 100 ? 100 : left));
			if (!m)
				continue;
			if (m->err) {
				if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
					pw_log_warn(r->lg, "reader of %s: %s", r->topic, rd_kafka_message_errstr(m));
				rd_kafka_message_destroy(m);
				continue;
			}
			int32_t p = m->partition;
			if (p < 0 || p >= r->npart || strcmp(rd_kafka_topic_name(m->rkt), r->topic) != 0) {
				rd_kafka_message_destroy(m);
				continue;
			}
			reader_loss(r, p, r->next[p], m->offset);
			st = fn(ctx, m, errbuf, errlen);
			if (st == PW_OK) {
				int64_t was = r->next[p] >= 0 ? r->next[p] : m->offset;
				r->next[p] = m->offset + 1;
				behind -= r->next[p] - was > 0 ? r->next[p] - was : 1;
			}
			rd_kafka_message_destroy(m);
			if (st != PW_OK)
				return st;
		}
	}
}

void pw_reader_free(pw_reader *r)
{
	if (!r)
		return;
	if (r->rk) {
		rd_kafka_assign(r->rk, NULL);
		rd_kafka_consumer_close(r->rk);
		rd_kafka_destroy(r->rk);
	}
	free(r->topic);
	free(r->next);
	free(r->mark);
	free(r);
}

/* ------------------------------------------------------------------- probe */

struct pw_kafka_probe {
	const pw_log *lg; /* first: see opaque_log */
	rd_kafka_t *rk;
	int interval_ms;
	pthread_t thread;
	atomic_bool stop;
	atomic_llong down_since_ms; /* 0 while the last request was answered */
};

static void *probe_main(void *arg)
{
	pw_kafka_probe *p = arg;
	while (!atomic_load(&p->stop)) {
		int64_t t0 = now_ms();
		const rd_kafka_metadata_t *md = NULL;
		rd_kafka_resp_err_t err = rd_kafka_metadata(p->rk, 0, NULL, &md, p->interval_ms);
		bool up = !err && md && md->broker_cnt > 0;
		if (md)
			rd_kafka_metadata_destroy(md);
		long long since = atomic_load(&p->down_since_ms);
		if (up && since) {
			pw_log_info(p->lg, "kafka brokers reachable again after %lld ms",
			            (long long)(now_ms() - since));
			atomic_store(&p->down_since_ms, 0);
		} else if (!up && !since) {
			pw_log_warn(p->lg, "kafka: no broker answered a metadata request: %s",
			            rd_kafka_err2str(err ? err : RD_KAFKA_RESP_ERR__TRANSPORT));
			atomic_store(&p->down_since_ms, t0 > 0 ? t0 : 1);
		}
		while (!atomic_load(&p->stop) && now_ms() - t0 < p->interval_ms)
			sleep_ms(50);
	}
	return NULL;
}

pw_status pw_kafka_probe_start(pw_kafka_probe **out, const char *brokers, const pw_kv *props,
                               size_t nprops, int interval_ms, const pw_log *lg, char *errbuf,
                               size_t errlen)
{
	/* librdkafka's own lines about the unreachable brokers come from the
	 * services' clients already: the probe's are left out */
	static const pw_kv quiet[] = {{"log_level", "2"}};
	char why[512];
	rd_kafka_conf_t *conf = NULL;
	*out = NULL;
	pw_kafka_probe *p = calloc(1, sizeof *p);
	if (!p)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for a kafka probe");
	p->lg = lg;
	p->interval_ms = interval_ms > 0 ? interval_ms : 1000;
	pw_status st = conf_build(&conf, true, brokers, props, nprops, NULL, 0, quiet, 1, lg, errbuf,
	                          errlen);
	if (st != PW_OK)
		goto fail;
	rd_kafka_conf_set_opaque(conf, p);
	if (!(p->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, why, sizeof why))) {
		rd_kafka_conf_destroy(conf);
		st = pw_fail(PW_ERR_KAFKA, errbuf, errlen, "cannot create the kafka probe: %s", why);
		goto fail;
	}
	if (pthread_create(&p->thread, NULL, probe_main, p) != 0) {
		rd_kafka_destroy(p->rk);
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "cannot start the kafka probe's thread");
		goto fail;
	}
	*out = p;
	return PW_OK;
fail:
	free(p);
	return st;
}

int64_t pw_kafka_probe_down_ms(const pw_kafka_probe *p)
{
	long long since = atomic_load(&((pw_kafka_probe *)p)->down_since_ms);
	if (!since)
		return 0;
	int64_t d = now_ms() - since;
	return d > 0 ? d : 1;
}

void pw_kafka_probe_stop(pw_kafka_probe *p)
{
	if (!p)
		return;
	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
	rd_kafka_destroy(p->rk);
	free(p);
}
