/*
 * it_roundtrip.c: RunResult through Kafka into PostgreSQL with the project's
 * own plumbing, against the dev stack.
 *
 * Run by tests/integration/test_roundtrip.sh (and, with --produce-one, by
 * test_kcat.sh) with PW_PG_DSN and PW_KAFKA_BOOTSTRAP_SERVERS from
 * run/stack.env. It publishes RunResults (proto/perfwatch/v1/run.proto) with
 * pw_producer to perf.runs.v1, consumes them with pw_consumer_run in a fresh
 * consumer group, and in the batch callback writes them into a scratch table
 * inside one PostgreSQL transaction (pw_pg.h) with an idempotent insert
 * (ON CONFLICT (run_id, repeat_index) DO NOTHING). The first batch that holds
 * our runs commits its transaction and then fails, as a service killed
 * between the PostgreSQL commit and the Kafka commit would: the loop must
 * redeliver the batch, and the table must still hold every run exactly once.
 * Finally the rows are read back and compared field by field, and the
 * group's committed offset is checked to be past the last run. The real
 * schema (migrations/) is not used: the scratch table is created and dropped
 * here.
 *
 *   it_roundtrip [--runs N]     the round trip, N runs (default 5); exit 0 = pass
 *   it_roundtrip --produce-one  publish one RunResult, print its run_id
 */
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_pg.h"
#include "pw_status.h"
#include "pw_topics.h"

#include "perfwatch/v1/run.pb-c.h"

#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define IT_MAX_RUNS 64
#define IT_TABLE "it_roundtrip_runs"

/* Set by SIGALRM/SIGTERM/SIGINT (the deadline or the test driver), and by the
 * batch callback once every run is in; the consumer loop watches it. */
static volatile sig_atomic_t it_signalled;

static void it_on_signal(int sig)
{
	(void)sig;
	it_signalled = 1;
}

typedef struct it_app {
	pw_log lg;
	pw_pg *pg;
	char prefix[64];           /* run_id prefix of this invocation */
	int nruns;
	int delivered[IT_MAX_RUNS];/* times each of our runs reached the callback */
	int accepted[IT_MAX_RUNS]; /* times it was in a batch the callback returned PW_OK for */
	int inserted;              /* rows the inserts actually added */
	int accepted_distinct;
	bool failed_once;
	int32_t partition;         /* where our runs landed (one key, one partition) */
	int64_t last_offset;
	volatile sig_atomic_t *stop; /* main's signal flag; the callback sets it when done */
} it_app;

/* A RunResult with every field kind the comparison checks; strings point into bufs. */
typedef struct it_run {
	Perfwatch__V1__RunResult rr;
	Perfwatch__V1__RunKey key;
	Perfwatch__V1__CompilerBuild compiler;
	Perfwatch__V1__Platform platform;
	Perfwatch__V1__Config config;
	Perfwatch__V1__MetricSample m0, m1;
	Perfwatch__V1__MetricSample *metrics[2];
	char run_id[80];
} it_run;

static void it_run_fill(it_run *r, const char *prefix, int i)
{
	perfwatch__v1__run_result__init(&r->rr);
	perfwatch__v1__run_key__init(&r->key);
	perfwatch__v1__compiler_build__init(&r->compiler);
	perfwatch__v1__platform__init(&r->platform);
	perfwatch__v1__config__init(&r->config);
	perfwatch__v1__metric_sample__init(&r->m0);
	perfwatch__v1__metric_sample__init(&r->m1);
	snprintf(r->run_id, sizeof r->run_id, "%s", prefix);
	r->compiler.build_id = "xla-rc-2026-06-17";
	r->compiler.cl = "cl/7841917";
	r->compiler.cl_number = 7841917;
	r->platform.name = "v6e-4";
	r->platform.chips = 4;
	r->config.name = "decode.B64.s2048.int8";
	r->config.batch = 64;
	r->config.seq_len = 2048;
	r->key.model = "chat-8b";
	r->key.model_rev = "chat-8b@2026-06-01";
	r->key.hlo_fingerprint = "hlo:9f31c2ab";
	r->key.compiler = &r->compiler;
	r->key.platform = &r->platform;
	r->key.config = &r->config;
	r->key.firmware = "tpufw-2026.05.2";
	r->m0.name = "tpot_p50_ms";
	r->m0.value = 7.25 + 0.01 * i;
	r->m0.unit = "ms";
	r->m1.name = "throughput_tok_s_chip";
	r->m1.value = 1840.5 - i;
	r->m1.unit = "tok/s/chip";
	r->metrics[0] = &r->m0;
	r->metrics[1] = &r->m1;
	r->rr.run_id = r->run_id;
	r->rr.repeat_index = (uint32_t)i;
	r->rr.key = &r->key;
	r->rr.chip_set = "pinned-7";
	r->rr.cell = "cell-mtv5-c12";
	r->rr.reserved_neighbors = true;
	r->rr.load_mode = PERFWATCH__V1__LOAD_MODE__LOAD_MODE_OPEN_LOOP;
	r->rr.seed = 412 + (uint64_t)i;
	r->rr.started_unix_us = 1781000000000000 + i;
	r->rr.finished_unix_us = 1781000000000000 + 60000000 + i;
	r->rr.n_metrics = 2;
	r->rr.metrics = r->metrics;
	r->rr.wall_step_us = 7250.5 + i;
}

static pw_status it_produce(it_app *a, const char *brokers, int n, char *err, size_t errlen)
{
	pw_producer *p = NULL;
	pw_status st = pw_producer_new(&p, brokers, NULL, 0, &a->lg, err, errlen);
	if (st != PW_OK)
		return st;
	for (int i = 0; i < n && st == PW_OK; i++) {
		it_run r;
		it_run_fill(&r, a->prefix, i);
		size_t len = perfwatch__v1__run_result__get_packed_size(&r.rr);
		uint8_t *buf = malloc(len ? len : 1);
		if (!buf) {
			st = pw_fail(PW_ERR_NOMEM, err, errlen, "out of memory");
			break;
		}
		perfwatch__v1__run_result__pack(&r.rr, buf);
		/* Kafka key: run_id, so that every repeat of a run is in one partition */
		st = pw_producer_produce(p, PW_TOPIC_RUNS, r.run_id, strlen(r.run_id), buf, len, 5000,
		                         err, errlen);
		free(buf);
	}
	if (st == PW_OK)
		st = pw_producer_flush(p, 30000, err, errlen);
	pw_producer_free(p);
	return st;
}

static pw_status it_insert(it_app *a, const Perfwatch__V1__RunResult *rr, int32_t partition,
                           int64_t offset, char *err, size_t errlen)
{
	char rep[16], wall[40], tpot[40], started[24], part[16], off[24], nmet[16];
	const Perfwatch__V1__RunKey *k = rr->key;
	snprintf(rep, sizeof rep, "%" PRIu32, rr->repeat_index);
	snprintf(wall, sizeof wall, "%.17g", rr->wall_step_us);
	snprintf(tpot, sizeof tpot, "%.17g", rr->n_metrics > 0 ? rr->metrics[0]->value : NAN);
	snprintf(started, sizeof started, "%" PRId64, rr->started_unix_us);
	snprintf(part, sizeof part, "%d", (int)partition);
	snprintf(off, sizeof off, "%" PRId64, offset);
	snprintf(nmet, sizeof nmet, "%zu", rr->n_metrics);
	const char *params[] = {
		rr->run_id, rep, k ? k->model : "", k ? k->hlo_fingerprint : "",
		k && k->compiler ? k->compiler->cl : "", k && k->platform ? k->platform->name : "",
		k && k->config ? k->config->name : "", k ? k->firmware : "", rr->chip_set, wall,
		rr->n_metrics > 0 ? rr->metrics[0]->name : "", tpot, nmet, started, part, off,
	};
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(a->pg,
		"INSERT INTO " IT_TABLE " (run_id, repeat_index, model, hlo_fingerprint, compiler_cl,"
		" platform, config, firmware, chip_set, wall_step_us, metric0_name, metric0_value,"
		" n_metrics, started_unix_us, kafka_partition, kafka_offset)"
		" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
		" ON CONFLICT (run_id, repeat_index) DO NOTHING",
		16, params, &res, err, errlen);
	if (st != PW_OK)
		return st;
	a->inserted += atoi(PQcmdTuples(res));
	PQclear(res);
	return PW_OK;
}

/* The batch callback: one transaction per batch; commit-after-work is the loop's. */
static pw_status it_on_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *err,
                             size_t errlen)
{
	it_app *a = ctx;
	size_t plen = strlen(a->prefix);
	int ours[IT_MAX_RUNS], nours = 0;
	pw_status st = pw_pg_begin(a->pg, err, errlen);
	if (st != PW_OK)
		return st;
	for (size_t i = 0; i < n; i++) {
		Perfwatch__V1__RunResult *rr =
			perfwatch__v1__run_result__unpack(NULL, msgs[i]->len, msgs[i]->payload);
		/* other tests share the topic: anything that is not ours is skipped */
		if (!rr)
			continue;
		if (strncmp(rr->run_id, a->prefix, plen) == 0 && rr->run_id[plen] == '\0' &&
		    rr->repeat_index < (uint32_t)a->nruns) {
			st = it_insert(a, rr, msgs[i]->partition, msgs[i]->offset, err, errlen);
			ours[nours++] = (int)rr->repeat_index;
			a->delivered[rr->repeat_index]++;
			a->partition = msgs[i]->partition;
			if (msgs[i]->offset > a->last_offset)
				a->last_offset = msgs[i]->offset;
		}
		perfwatch__v1__run_result__free_unpacked(rr, NULL);
		if (st != PW_OK || nours == IT_MAX_RUNS)
			break;
	}
	if (st != PW_OK) {
		pw_pg_rollback(a->pg, NULL, 0);
		return st;
	}
	st = pw_pg_commit(a->pg, err, errlen);
	if (st != PW_OK)
		return st;
	if (nours > 0 && !a->failed_once) {
		/* the transaction is durable; "die" before the offsets are committed */
		a->failed_once = true;
		return pw_fail(PW_ERR_UNAVAILABLE, err, errlen,
		               "simulated crash after the PostgreSQL commit (%d runs)", nours);
	}
	for (int i = 0; i < nours; i++)
		if (a->accepted[ours[i]]++ == 0)
			a->accepted_distinct++;
	if (a->accepted_distinct == a->nruns)
		*a->stop = 1;
	return PW_OK;
}

static pw_status it_setup_table(it_app *a, char *err, size_t errlen)
{
	pw_status st = pw_pg_exec(a->pg, "DROP TABLE IF EXISTS " IT_TABLE, 0, NULL, NULL, err, errlen);
	if (st != PW_OK)
		return st;
	return pw_pg_exec(a->pg,
		"CREATE TABLE " IT_TABLE " (run_id text NOT NULL, repeat_index integer NOT NULL,"
		" model text NOT NULL, hlo_fingerprint text NOT NULL, compiler_cl text NOT NULL,"
		" platform text NOT NULL, config text NOT NULL, firmware text NOT NULL,"
		" chip_set text NOT NULL, wall_step_us double precision NOT NULL,"
		" metric0_name text NOT NULL, metric0_value double precision NOT NULL,"
		" n_metrics integer NOT NULL, started_unix_us bigint NOT NULL,"
		" kafka_partition integer NOT NULL, kafka_offset bigint NOT NULL,"
		" PRIMARY KEY (run_id, repeat_index))",
		0, NULL, NULL, err, errlen);
}

static int it_check(bool ok, const char *what, int *failures)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		(*failures)++;
	return ok;
}

/* Reads the rows back and compares them with what was produced. */
static void it_verify_rows(it_app *a, int *failures)
{
	char err[512], what[256];
	PGresult *res = NULL;
	const char *params[] = {a->prefix};
	pw_status st = pw_pg_exec(a->pg,
		"SELECT repeat_index, model, hlo_fingerprint, compiler_cl, platform, config, firmware,"
		" chip_set, wall_step_us, metric0_name, metric0_value, n_metrics, started_unix_us"
		" FROM " IT_TABLE " WHERE run_id = $1 ORDER BY repeat_index",
		1, params, &res, err, sizeof err);
	if (!it_check(st == PW_OK, "read back the scratch table", failures)) {
		printf("  %s\n", err);
		return;
	}
	snprintf(what, sizeof what, "exactly %d rows (one per run, none twice)", a->nruns);
	it_check(PQntuples(res) == a->nruns, what, failures);
	int mismatches = 0;
	for (int r = 0; r < PQntuples(res) && r < a->nruns; r++) {
		it_run want;
		it_run_fill(&want, a->prefix, r);
		char wall[40], tpot[40], started[24];
		snprintf(wall, sizeof wall, "%.17g", want.rr.wall_step_us);
		snprintf(tpot, sizeof tpot, "%.17g", want.m0.value);
		snprintf(started, sizeof started, "%" PRId64, want.rr.started_unix_us);
		const char *exp[] = {NULL, want.key.model, want.key.hlo_fingerprint, want.compiler.cl,
		                     want.platform.name, want.config.name, want.key.firmware,
		                     want.rr.chip_set, NULL, want.m0.name, NULL, "2", started};
		if (atoi(PQgetvalue(res, r, 0)) != r)
			mismatches++;
		for (int c = 1; c < 13; c++)
			if (exp[c] && strcmp(PQgetvalue(res, r, c), exp[c]) != 0) {
				printf("  row %d column %s: got \"%s\", want \"%s\"\n", r, PQfname(res, c),
				       PQgetvalue(res, r, c), exp[c]);
				mismatches++;
			}
		if (strtod(PQgetvalue(res, r, 8), NULL) != want.rr.wall_step_us ||
		    strtod(PQgetvalue(res, r, 10), NULL) != want.m0.value) {
			printf("  row %d: doubles differ (%s, %s)\n", r, PQgetvalue(res, r, 8),
			       PQgetvalue(res, r, 10));
			mismatches++;
		}
	}
	it_check(mismatches == 0, "every field read back equals what was published", failures);
	PQclear(res);
}

static void it_verify_committed(it_app *a, const char *brokers, const char *group,
                                int *failures)
{
	char err[512], what[256];
	const char *topics[] = {PW_TOPIC_RUNS};
	pw_consumer_opts o = {.brokers = brokers, .group_id = group, .topics = topics, .ntopics = 1};
	pw_consumer *c = NULL;
	if (pw_consumer_new(&c, &o, &a->lg, err, sizeof err) != PW_OK) {
		it_check(false, err, failures);
		return;
	}
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(l, PW_TOPIC_RUNS, a->partition);
	rd_kafka_resp_err_t e = rd_kafka_committed(pw_consumer_handle(c), l, 10000);
	int64_t off = e ? -1 : l->elems[0].offset;
	snprintf(what, sizeof what,
	         "group offset of %s [%d] committed past the last run (%" PRId64 " > %" PRId64 ")",
	         PW_TOPIC_RUNS, (int)a->partition, off, a->last_offset);
	it_check(off > a->last_offset, what, failures);
	rd_kafka_topic_partition_list_destroy(l);
	pw_consumer_free(c);
}

int main(int argc, char **argv)
{
	char err[1024], group[96], what[256];
	int failures = 0;
	int rc = 1;
	it_app *a = calloc(1, sizeof *a);
	if (!a)
		return 1;
	a->nruns = 5;
	a->last_offset = -1;
	bool produce_one = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--produce-one") == 0) {
			produce_one = true;
		} else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
			a->nruns = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: it_roundtrip [--runs N] | --produce-one\n");
			goto out;
		}
	}
	if (a->nruns < 1 || a->nruns > IT_MAX_RUNS) {
		fprintf(stderr, "it_roundtrip: --runs must be 1..%d\n", IT_MAX_RUNS);
		goto out;
	}
	const char *dsn = getenv("PW_PG_DSN");
	const char *brokers = getenv("PW_KAFKA_BOOTSTRAP_SERVERS");
	if (!brokers || (!produce_one && !dsn)) {
		fprintf(stderr, "it_roundtrip: PW_PG_DSN and PW_KAFKA_BOOTSTRAP_SERVERS must be set\n");
		goto out;
	}
	pw_log_init(&a->lg, "it_roundtrip", PW_LOG_WARN);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(a->prefix, sizeof a->prefix, "it-%ld-%ld%03ld", (long)getpid(), (long)now.tv_sec,
	         now.tv_nsec / 1000000);
	snprintf(group, sizeof group, "it-roundtrip-%s", a->prefix);

	if (produce_one) {
		if (it_produce(a, brokers, 1, err, sizeof err) != PW_OK) {
			fprintf(stderr, "it_roundtrip: %s\n", err);
			goto out;
		}
		printf("%s\n", a->prefix);
		rc = 0;
		goto out;
	}

	struct sigaction sa = {.sa_handler = it_on_signal};
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	alarm(120);

	if (pw_pg_new(&a->pg, dsn, NULL, &a->lg, err, sizeof err) != PW_OK ||
	    pw_pg_wait_connected(a->pg, 20000, &it_signalled, err, sizeof err) != PW_OK ||
	    it_setup_table(a, err, sizeof err) != PW_OK) {
		fprintf(stderr, "it_roundtrip: postgresql: %s\n", err);
		goto out;
	}
	pw_status st = it_produce(a, brokers, a->nruns, err, sizeof err);
	snprintf(what, sizeof what, "published %d RunResults to %s, all delivered", a->nruns,
	         PW_TOPIC_RUNS);
	if (!it_check(st == PW_OK, what, &failures)) {
		printf("  %s\n", err);
		goto out;
	}

	const char *topics[] = {PW_TOPIC_RUNS};
	pw_consumer_opts o = {.brokers = brokers, .group_id = group, .topics = topics, .ntopics = 1,
	                      .batch_max_msgs = 500, .batch_max_ms = 300, .retry_backoff_ms = 100,
	                      .retry_backoff_max_ms = 1000};
	pw_consumer *c = NULL;
	if (pw_consumer_new(&c, &o, &a->lg, err, sizeof err) != PW_OK) {
		fprintf(stderr, "it_roundtrip: %s\n", err);
		goto out;
	}
	/* the loop stops when the callback has seen every run, or at the deadline
	 * (SIGALRM sets the same flag) */
	a->stop = &it_signalled;
	st = pw_consumer_run(c, it_on_batch, a, a->stop, err, sizeof err);
	pw_consumer_counts cc;
	pw_consumer_counts_get(c, &cc);
	pw_consumer_free(c);
	it_check(st == PW_OK, "consumer loop ran and closed cleanly", &failures);
	if (st != PW_OK)
		printf("  %s\n", err);
	snprintf(what, sizeof what, "all %d runs consumed and committed before the deadline",
	         a->nruns);
	it_check(a->accepted_distinct == a->nruns, what, &failures);
	it_check(a->failed_once && cc.failed_batches >= 1,
	         "the batch that failed after its transaction was not committed", &failures);
	int redelivered = 0;
	for (int i = 0; i < a->nruns; i++)
		redelivered += a->delivered[i] >= 2;
	snprintf(what, sizeof what, "failed batch redelivered (%d of %d runs seen twice)",
	         redelivered, a->nruns);
	it_check(redelivered > 0, what, &failures);
	snprintf(what, sizeof what, "idempotent insert: %d rows inserted for %d runs", a->inserted,
	         a->nruns);
	it_check(a->inserted == a->nruns, what, &failures);
	it_verify_rows(a, &failures);
	it_verify_committed(a, brokers, group, &failures);
	pw_pg_exec(a->pg, "DROP TABLE IF EXISTS " IT_TABLE, 0, NULL, NULL, NULL, 0);
	printf("it_roundtrip: %s (%d failure(s)), consumer: %llu batches, %llu failed\n",
	       failures ? "FAIL" : "PASS", failures, (unsigned long long)cc.batches,
	       (unsigned long long)cc.failed_batches);
	rc = failures ? 1 : 0;

out:
	pw_pg_free(a->pg);
	free(a);
	return rc;
}
