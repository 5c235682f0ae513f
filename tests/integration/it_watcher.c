/*
 * it_watcher.c: the feed and the eyes of tests/integration/test_watcher.sh —
 * it plays the ingester and the infra change feed for pw-watcher and reads
 * what the watcher published.
 *
 * It stands in for services the test does not run: like the ingester it
 * writes perfwatch.series, runs and samples rows before it publishes each
 * SeriesPoint on perf.points.v1 (keyed by series_key), and like the fleet
 * feed it publishes a FleetChangeEvent on perf.fleet-changes.v1. The data are
 * the seed's: the worked example (chat-8b v6e-4 decode TPOT 3.90 -> 4.22 ms
 * at the nightly of 2026-06-17, head cl/7841923, previous nightly
 * cl/7841885), the recabling step (+0.7% on every series of cell-mtv5-c12
 * from 2026-06-03 10:00), one unregistered improvement and flat filler
 * series. Every key carries a nonce so that runs on a reused stack do not
 * meet each other.
 *
 *   it_watcher feed NONCE FILLER DAY_MS   publish 2026-05-01..06-25, one day every DAY_MS
 *   it_watcher feed-days NONCE FILLER DAY_MS FROM TO
 *                                        publish days FROM..TO (0 = 2026-05-01) of the same
 *                                        feed (the values are those a whole feed has), plus
 *                                        the fault run's series (below)
 *   it_watcher wait GROUP TIMEOUT_S [TOPIC]  until GROUP committed the end of TOPIC
 *                                        (default perf.points.v1)
 *   it_watcher count NONCE                 print the Changepoints and Alerts published for NONCE
 *   it_watcher baselines NONCE             publish on perf.baselines.v1, keyed bl-door.NONCE/...,
 *                                        five Baselines the door refuses, a tombstone and a
 *                                        valid frozen one
 */
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_pg.h"
#include "pw_status.h"
#include "pw_topics.h"

#include "../fault_run_series.h"

#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/baseline.pb-c.h"
#include "perfwatch/v1/changepoint.pb-c.h"
#include "perfwatch/v1/fleet.pb-c.h"
#include "perfwatch/v1/series.pb-c.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define IT_DAYS 56             /* 2026-05-01 .. 2026-06-25 */
#define IT_DAY0_UNIX 1777593600 /* 2026-05-01T00:00:00Z */
#define IT_SHIFT_DAY 47        /* 2026-06-17: the worked example's nightly */
#define IT_RECABLE_DAY 33      /* 2026-06-03 */
#define IT_IMPROVE_DAY 24      /* 2026-05-25 */
#define IT_MAX_SERIES 2048

#define IT_FAULT_RUN_DAY0 11 /* 2026-05-12 */

typedef struct it_series {
	char model[64], hlo[64], platform[32], config[64], metric[32], unit[16];
	bool lower_is_better;
	char cell[32];
	double level, sigma;  /* before any shift */
	int shift_day;        /* -1: none */
	double shift_factor;
	const double *fixed;  /* else: these values, from day fixed_day0 on (none before) */
	int fixed_day0, fixed_n;
	char key[320];
	int64_t id;
} it_series;

typedef struct it_app {
	pw_log lg;
	pw_pg *pg;
	pw_producer *prod;
	char nonce[32];
	it_series *s;
	size_t n;
	uint64_t rng;
} it_app;

static volatile sig_atomic_t it_stop;

static double it_uniform(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* Irwin-Hall: the sum of 12 uniforms less 6 is close to a standard normal (no libm here) */
static double it_gauss(uint64_t *x)
{
	double sum = 0.0;
	for (int i = 0; i < 12; i++)
		sum += it_uniform(x);
	return sum - 6.0;
}

static int64_t it_cl(int day)
{
	return 7841923 + 38 * (int64_t)(day - IT_SHIFT_DAY);
}

static void it_day_name(int day, char *out, size_t len)
{
	time_t t = (time_t)IT_DAY0_UNIX + (time_t)day * 86400;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, len, "%Y-%m-%d", &tm);
}

static it_series *it_add(it_app *a, const char *model, const char *platform, const char *config,
                         const char *metric, const char *unit, bool lower, const char *cell,
                         double level, double sigma, int shift_day, double factor)
{
	if (a->n == IT_MAX_SERIES)
		return NULL;
	it_series *s = &a->s[a->n++];
	memset(s, 0, sizeof *s);
	snprintf(s->model, sizeof s->model, "%s", model);
	snprintf(s->hlo, sizeof s->hlo, "hlo:9f31c2ab.%s", a->nonce);
	snprintf(s->platform, sizeof s->platform, "%s", platform);
	snprintf(s->config, sizeof s->config, "%s", config);
	snprintf(s->metric, sizeof s->metric, "%s", metric);
	snprintf(s->unit, sizeof s->unit, "%s", unit);
	s->lower_is_better = lower;
	snprintf(s->cell, sizeof s->cell, "%s", cell);
	s->level = level;
	s->sigma = sigma;
	s->shift_day = shift_day;
	s->shift_factor = factor;
	snprintf(s->key, sizeof s->key, "%s/%s/%s/%s/%s", s->model, s->hlo, s->platform, s->config,
	         s->metric);
	return s;
}

static int it_setup(it_app *a, int filler)
{
	char err[1024];
	/* the seed's tiers: chat-8b and chat-70b are top-20 spend, the rest tail */
	const char *spend =
		"INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES"
		" ('chat-8b', 0.08, 'top', 'it_watcher'), ('chat-70b', 0.06, 'top', 'it_watcher'),"
		" ('rank-moe-110b', 0.01, 'tail', 'it_watcher'), ('code-34b', 0.005, 'tail', 'it_watcher')"
		" ON CONFLICT (model) DO NOTHING";
	if (pw_pg_exec(a->pg, spend, 0, NULL, NULL, err, sizeof err) != PW_OK) {
		fprintf(stderr, "FAIL: spend weights: %s\n", err);
		return -1;
	}
	/* 0: the worked example; 1: its clean v5e twin; 2: recabled; 3: improvement */
	it_add(a, "chat-8b", "v6e-4", "decode.B64.s2048.int8", "tpot_p50_ms", "ms", true,
	       "cell-mtv5-c11", 3.90, 0.017, IT_SHIFT_DAY, 4.22 / 3.90);
	it_add(a, "chat-8b", "v5e-8", "decode.B64.s2048.int8", "tpot_p50_ms", "ms", true,
	       "cell-mtv3-c02", 5.10, 0.02, -1, 1.0);
	it_add(a, "chat-70b", "v6e-4", "decode.B8.s2048.int8", "tpot_p50_ms", "ms", true,
	       "cell-mtv5-c12", 11.40, 0.011, IT_RECABLE_DAY, 1.007);
	it_add(a, "code-34b", "v6e-4", "prefill.s8192.bf16", "goodput_tok_s_chip", "tok/s/chip",
	       false, "cell-mtv5-c11", 1830.0, 3.0, IT_IMPROVE_DAY, 1.05);
	static const char *const models[] = {"rank-moe-110b", "code-34b"};
	static const char *const configs[] = {"decode.B64.s2048.int8", "decode.B8.s2048.int8",
	                                      "prefill.s8192.bf16", "prefill.s32768.int8"};
	for (int i = 0; i < filler; i++) {
		char cfg[96];
		snprintf(cfg, sizeof cfg, "%s.f%d", configs[i % 4], i);
		if (!it_add(a, models[i % 2], "v5e-8", cfg, "tpot_p50_ms", "ms", true, "cell-mtv3-c02",
		            2.0 + 0.01 * i, (2.0 + 0.01 * i) * 0.004, -1, 1.0))
			break;
	}
	for (size_t i = 0; i < a->n; i++) {
		it_series *s = &a->s[i];
		PGresult *res = NULL;
		const char *sql =
			"WITH ins AS (INSERT INTO perfwatch.series (model, hlo_fingerprint, platform, config,"
			"   metric, unit, direction) VALUES ($1, $2, $3, $4, $5, $6, $7)"
			"   ON CONFLICT (model, hlo_fingerprint, platform, config, metric) DO NOTHING"
			"   RETURNING series_id)"
			" SELECT series_id FROM ins UNION ALL"
			" SELECT series_id FROM perfwatch.series WHERE series_key = $8";
		const char *p[] = {s->model, s->hlo, s->platform, s->config, s->metric, s->unit,
		                   s->lower_is_better ? "lower_is_better" : "higher_is_better", s->key};
		if (pw_pg_exec(a->pg, sql, 8, p, &res, err, sizeof err) != PW_OK) {
			fprintf(stderr, "FAIL: series %s: %s\n", s->key, err);
			return -1;
		}
		s->id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		PQclear(res);
	}
	return 0;
}

static pw_status it_copy(it_app *a, const char *sql, const char *rows, size_t len, char *err,
                         size_t errlen)
{
	pw_status st = pw_pg_copy_begin(a->pg, sql, err, errlen);
	if (st != PW_OK)
		return st;
	if ((st = pw_pg_copy_put(a->pg, rows, len, err, errlen)) != PW_OK) {
		pw_pg_copy_abort(a->pg, "it_watcher: put failed");
		return st;
	}
	return pw_pg_copy_end(a->pg, NULL, err, errlen);
}

/* One nightly of every series: rows first (the ingester's order), then the points. */
static int it_day(it_app *a, int day)
{
	char err[1024], dname[16], build[48], cl[32], ts[40];
	it_day_name(day, dname, sizeof dname);
	snprintf(build, sizeof build, "xla-nightly-%s", dname);
	snprintf(cl, sizeof cl, "cl/%" PRId64, it_cl(day));
	int64_t measured = ((int64_t)IT_DAY0_UNIX + (int64_t)day * 86400 + 12 * 3600) * 1000000;
	snprintf(ts, sizeof ts, "%s 12:00:00+00", dname);
	size_t cap = a->n * 512 + 1, rl = 0, sl = 0;
	char *runs = malloc(cap), *samples = malloc(cap);
	double *values = malloc(a->n * sizeof *values);
	int rc = -1;
	if (!runs || !samples || !values)
		goto out;
	for (size_t i = 0; i < a->n; i++) {
		it_series *s = &a->s[i];
		double v = s->level + s->sigma * it_gauss(&a->rng);
		if (s->shift_day >= 0 && day >= s->shift_day)
			v *= s->shift_factor;
		values[i] = v;
		if (s->fixed) {
			if (day < s->fixed_day0 || day >= s->fixed_day0 + s->fixed_n)
				continue; /* not measured that day */
			values[i] = v = s->fixed[day - s->fixed_day0];
		}
		char run_id[96];
		snprintf(run_id, sizeof run_id, "it-%s-%zu-%d", a->nonce, i, day);
		rl += (size_t)snprintf(runs + rl, cap - rl,
		                       "%s\t0\t%s\t%s@it\t%s\t%s\tnightly\t%s\t%" PRId64
		                       "\t%s\t%s\tfw-2026.05\tpinned-7\t%s\tperfbench-2.31\t%s\t%s\t\\\\x00\n",
		                       run_id, s->model, s->model, s->hlo, build, cl, it_cl(day),
		                       s->platform, s->config, s->cell, ts, ts);
		sl += (size_t)snprintf(samples + sl, cap - sl,
		                       "%s\t0\t%s\t%" PRId64 "\t%.17g\t%s\t%s\t%s\tnightly\t%" PRId64
		                       "\tpinned-7\n",
		                       run_id, s->metric, s->id, v, s->unit, ts, build, it_cl(day));
	}
	if (pw_pg_begin(a->pg, err, sizeof err) != PW_OK ||
	    it_copy(a,
	            "COPY perfwatch.runs (run_id, repeat_index, model, model_rev, hlo_fingerprint,"
	            " build_id, build_kind, compiler_cl, compiler_cl_number, platform, config, firmware,"
	            " chip_set, cell, harness_version, started_at, finished_at, payload_sha256) FROM STDIN",
	            runs, rl, err, sizeof err) != PW_OK ||
	    it_copy(a,
	            "COPY perfwatch.samples (run_id, repeat_index, metric, series_id, value, unit,"
	            " measured_at, build_id, build_kind, compiler_cl_number, chip_set) FROM STDIN",
	            samples, sl, err, sizeof err) != PW_OK ||
	    pw_pg_commit(a->pg, err, sizeof err) != PW_OK) {
		fprintf(stderr, "FAIL: storing day %s: %s\n", dname, err);
		if (pw_pg_in_transaction(a->pg))
			pw_pg_rollback(a->pg, err, sizeof err);
		goto out;
	}
	for (size_t i = 0; i < a->n; i++) {
		it_series *s = &a->s[i];
		if (s->fixed && (day < s->fixed_day0 || day >= s->fixed_day0 + s->fixed_n))
			continue;
		char run_id[96];
		snprintf(run_id, sizeof run_id, "it-%s-%zu-%d", a->nonce, i, day);
		Perfwatch__V1__SeriesKey k = PERFWATCH__V1__SERIES_KEY__INIT;
		k.model = s->model;
		k.hlo_fingerprint = s->hlo;
		k.platform = s->platform;
		k.config = s->config;
		k.metric = s->metric;
		Perfwatch__V1__CompilerBuild b = PERFWATCH__V1__COMPILER_BUILD__INIT;
		b.build_id = build;
		b.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_NIGHTLY;
		b.cl = cl;
		b.cl_number = it_cl(day);
		Perfwatch__V1__SeriesPoint p = PERFWATCH__V1__SERIES_POINT__INIT;
		p.series_id = s->id;
		p.series_key = s->key;
		p.key = &k;
		p.run_id = run_id;
		p.build = &b;
		p.value = values[i];
		p.unit = s->unit;
		p.direction = s->lower_is_better
			? PERFWATCH__V1__METRIC_DIRECTION__METRIC_DIRECTION_LOWER_IS_BETTER
			: PERFWATCH__V1__METRIC_DIRECTION__METRIC_DIRECTION_HIGHER_IS_BETTER;
		p.measured_unix_us = measured;
		p.chip_set = "pinned-7";
		p.cell = s->cell;
		p.firmware = "fw-2026.05";
		p.harness_version = "perfbench-2.31";
		uint8_t buf[2048];
		size_t len = perfwatch__v1__series_point__get_packed_size(&p);
		if (len > sizeof buf)
			goto out;
		perfwatch__v1__series_point__pack(&p, buf);
		if (pw_producer_produce(a->prod, PW_TOPIC_POINTS, s->key, strlen(s->key), buf, len,
		                        10000, err, sizeof err) != PW_OK) {
			fprintf(stderr, "FAIL: producing a point: %s\n", err);
			goto out;
		}
	}
	if (pw_producer_flush(a->prod, 30000, err, sizeof err) != PW_OK) {
		fprintf(stderr, "FAIL: flushing day %s: %s\n", dname, err);
		goto out;
	}
	rc = 0;
out:
	free(runs);
	free(samples);
	free(values);
	return rc;
}

static int it_fleet_change(it_app *a)
{
	char err[1024], id[64];
	snprintf(id, sizeof id, "fc-2026-06-03-0007.%s", a->nonce);
	char *platforms[] = {"v6e-4"}, *cells[] = {"cell-mtv5-c12"};
	Perfwatch__V1__FleetChangeEvent fc = PERFWATCH__V1__FLEET_CHANGE_EVENT__INIT;
	fc.event_id = id;
	fc.occurred_unix_us = ((int64_t)IT_DAY0_UNIX + IT_RECABLE_DAY * 86400 + 10 * 3600) * 1000000;
	fc.kind = PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_RECABLING;
	fc.reason = "mtv5 row 12 recabled for ICI v2";
	fc.source = "fleet-ops";
	fc.n_platforms = 1;
	fc.platforms = platforms;
	fc.n_cells = 1;
	fc.cells = cells;
	uint8_t buf[1024];
	size_t len = perfwatch__v1__fleet_change_event__get_packed_size(&fc);
	perfwatch__v1__fleet_change_event__pack(&fc, buf);
	if (pw_producer_produce(a->prod, PW_TOPIC_FLEET_CHANGES, id, strlen(id), buf, len, 10000, err,
	                        sizeof err) != PW_OK ||
	    pw_producer_flush(a->prod, 30000, err, sizeof err) != PW_OK) {
		fprintf(stderr, "FAIL: fleet change: %s\n", err);
		return -1;
	}
	return 0;
}

static int it_feed(it_app *a, int filler, int day_ms, int from, int to, bool fault_series)
{
	char err[1024];
	const char *dsn = getenv("PW_PG_DSN"), *brokers = getenv("PW_KAFKA_BOOTSTRAP_SERVERS");
	if (!dsn || !brokers) {
		fprintf(stderr, "FAIL: PW_PG_DSN and PW_KAFKA_BOOTSTRAP_SERVERS must be set\n");
		return 1;
	}
	a->s = calloc(IT_MAX_SERIES, sizeof *a->s);
	if (!a->s || pw_pg_new(&a->pg, dsn, NULL, &a->lg, err, sizeof err) != PW_OK ||
	    pw_pg_wait_connected(a->pg, 20000, &it_stop, err, sizeof err) != PW_OK ||
	    pw_producer_new(&a->prod, brokers, NULL, 0, &a->lg, err, sizeof err) != PW_OK) {
		fprintf(stderr, "FAIL: connecting: %s\n", err);
		return 1;
	}
	if (it_setup(a, filler) != 0)
		return 1;
	if (fault_series) {
		it_series *s = it_add(a, "chat-8b", "v6e-4", "decode.B64.s2048.int8", "cost_per_mtok_usd",
		                      "usd", true, "cell-mtv5-c11", 0.0, 0.0, -1, 1.0);
		if (!s)
			return 1;
		s->fixed = pw_fault_run_cost;
		s->fixed_day0 = IT_FAULT_RUN_DAY0;
		s->fixed_n = PW_FAULT_RUN_N; /* the feed stops at 06-25 */
		/* its row as it_setup writes the others' */
		char err[1024];
		PGresult *res = NULL;
		const char *p[] = {s->model, s->hlo, s->platform, s->config, s->metric, s->unit,
		                   "lower_is_better", s->key};
		if (pw_pg_exec(a->pg,
		               "WITH ins AS (INSERT INTO perfwatch.series (model, hlo_fingerprint, platform,"
		               "   config, metric, unit, direction) VALUES ($1, $2, $3, $4, $5, $6, $7)"
		               "   ON CONFLICT (model, hlo_fingerprint, platform, config, metric) DO NOTHING"
		               "   RETURNING series_id)"
		               " SELECT series_id FROM ins UNION ALL"
		               " SELECT series_id FROM perfwatch.series WHERE series_key = $8",
		               8, p, &res, err, sizeof err) != PW_OK) {
			fprintf(stderr, "FAIL: series %s: %s\n", s->key, err);
			return 1;
		}
		s->id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		PQclear(res);
	}
	/* the days before FROM: their values drawn (the same values as a whole feed), not sent */
	for (int day = 0; day < from; day++)
		for (size_t i = 0; i < a->n; i++)
			(void)it_gauss(&a->rng);
	for (int day = from; day <= to && day < IT_DAYS; day++) {
		if (day == IT_RECABLE_DAY && it_fleet_change(a) != 0)
			return 1;
		if (it_day(a, day) != 0)
			return 1;
		struct timespec ts = {.tv_sec = day_ms / 1000, .tv_nsec = (long)(day_ms % 1000) * 1000000};
		nanosleep(&ts, NULL);
	}
	printf("fed %zu series x nightlies %d..%d\n", a->n, from, to < IT_DAYS ? to : IT_DAYS - 1);
	for (size_t i = 0; i < 4; i++)
		printf("series %zu %s\n", i, a->s[i].key);
	return 0;
}

/* Waits until group has committed the high watermark of every partition of topic. */
static int it_wait(const char *group, int timeout_s, const char *topic)
{
	const char *brokers = getenv("PW_KAFKA_BOOTSTRAP_SERVERS");
	char err[512];
	int64_t lag = -1;
	time_t end = time(NULL) + timeout_s;
	while (time(NULL) < end) {
		if (pw_kafka_group_lag(brokers, group, &topic, 1, &lag, err, sizeof err) != PW_OK) {
			fprintf(stderr, "FAIL: %s\n", err);
			return 1;
		}
		if (lag == 0)
			return 0;
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 500000000};
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "FAIL: group %s still %lld behind on %s after %d s\n", group, (long long)lag,
	        topic, timeout_s);
	return 1;
}

/*
 * Commits, for a group that has not consumed yet, the current end of every
 * partition of the topics given (default: the three the watcher reads), so
 * that a service joining the group starts there: the test then judges only
 * its own input, however much earlier tests left on the shared topics.
 */
static int it_start_at_end(const char *group, const char *const *topics, size_t ntopics)
{
	char err[512];
	if (pw_kafka_group_commit_ends(getenv("PW_KAFKA_BOOTSTRAP_SERVERS"), group, topics, ntopics,
	                               NULL, err, sizeof err) != PW_OK) {
		fprintf(stderr, "FAIL: %s\n", err);
		return 1;
	}
	return 0;
}

static const char *it_routing(Perfwatch__V1__Routing r)
{
	return r == PERFWATCH__V1__ROUTING__ROUTING_PAGE    ? "page"
	       : r == PERFWATCH__V1__ROUTING__ROUTING_QUEUE ? "queue"
	       : r == PERFWATCH__V1__ROUTING__ROUTING_NONE  ? "none"
	                                                    : "unspecified";
}

/* Reads both topics from the start to their ends and prints our messages, one a line. */
static int it_count(it_app *a, const char *nonce)
{
	const char *brokers = getenv("PW_KAFKA_BOOTSTRAP_SERVERS");
	char err[512], group[96], mark[48];
	snprintf(group, sizeof group, "it-watcher-count-%s-%ld", nonce, (long)time(NULL));
	snprintf(mark, sizeof mark, ".%s/", nonce);
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_conf_set(conf, "bootstrap.servers", brokers, err, sizeof err);
	rd_kafka_conf_set(conf, "group.id", group, err, sizeof err);
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
	if (!rk) {
		fprintf(stderr, "FAIL: %s\n", err);
		return 1;
	}
	const char *topics[] = {PW_TOPIC_CHANGEPOINTS, PW_TOPIC_ALERTS};
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(16);
	int remaining = 0;
	int64_t his[2][64];
	for (int t = 0; t < 2; t++) {
		int parts = pw_topic_find(topics[t])->partitions;
		for (int p = 0; p < parts && p < 64; p++) {
			int64_t lo = 0, hi = 0;
			rd_kafka_query_watermark_offsets(rk, topics[t], p, &lo, &hi, 5000);
			his[t][p] = hi;
			if (hi > lo) {
				rd_kafka_topic_partition_list_add(l, topics[t], p)->offset = lo;
				remaining++;
			}
		}
	}
	rd_kafka_assign(rk, l);
	rd_kafka_topic_partition_list_destroy(l);
	time_t end = time(NULL) + 30;
	while (remaining > 0 && time(NULL) < end) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 500);
		if (!m)
			continue;
		if (!m->err) {
			const char *topic = rd_kafka_topic_name(m->rkt);
			int t = strcmp(topic, PW_TOPIC_CHANGEPOINTS) == 0 ? 0 : 1;
			if (t == 0) {
				Perfwatch__V1__Changepoint *c =
					perfwatch__v1__changepoint__unpack(NULL, m->len, m->payload);
				if (c && strstr(c->series_key, mark))
					printf("cp %s routing=%s annotation=%d lo=%s hi=%s n_cls=%u day=%s "
					       "direction=%d fleet=%s delta_pct=%.2f stage=%d\n",
					       c->changepoint_id, it_routing(c->routing), (int)c->annotation,
					       c->last_clean_cl, c->first_shifted_cl, c->n_cls, c->day,
					       (int)c->direction, c->fleet_event_id, c->delta_pct, (int)c->stage);
				perfwatch__v1__changepoint__free_unpacked(c, NULL);
			} else {
				Perfwatch__V1__Alert *al = perfwatch__v1__alert__unpack(NULL, m->len, m->payload);
				if (al && strstr(al->series_key, mark))
					printf("alert %s kind=%d routing=%s page=%s cp=%s rev=%u\n", al->alert_id,
					       (int)al->kind, it_routing(al->routing), al->page,
					       al->changepoint ? al->changepoint->changepoint_id : "", al->revision);
				perfwatch__v1__alert__free_unpacked(al, NULL);
			}
			if (m->offset + 1 >= his[t][m->partition])
				remaining--;
		}
		rd_kafka_message_destroy(m);
	}
	rd_kafka_consumer_close(rk);
	rd_kafka_destroy(rk);
	(void)a;
	if (remaining > 0) {
		fprintf(stderr, "FAIL: %d partitions not read to their end\n", remaining);
		return 1;
	}
	return 0;
}

/*
 * The door of perf.baselines.v1 on the stack: what it refuses is
 * dead-lettered with its reason (test_watcher.sh reads
 * perfwatch.dead_letters), what it takes is not. The series keys name no
 * watched series: the changepoints of the feed are left as they are.
 */
static int it_baselines(it_app *a)
{
	char err[1024], key[128], series[128], event[65];
	const char *brokers = getenv("PW_KAFKA_BOOTSTRAP_SERVERS");
	if (!brokers || pw_producer_new(&a->prod, brokers, NULL, 0, &a->lg, err, sizeof err) != PW_OK) {
		fprintf(stderr, "FAIL: producer: %s\n", brokers ? err : "PW_KAFKA_BOOTSTRAP_SERVERS unset");
		return 1;
	}
	snprintf(series, sizeof series, "chat-8b/hlo:bl.%s/v6e-4/decode.B8/tpot_p50_ms", a->nonce);
	memset(event, 'e', 64);
	event[64] = '\0';
	static const char *const names[] = {"1-no-state", "2-state-42", "3-event-64", "4-nul-key",
	                                    "5-junk",     "6-tombstone", "7-frozen"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		Perfwatch__V1__Baseline b = PERFWATCH__V1__BASELINE__INIT;
		b.series_key = series;
		b.version = 2;
		b.state = PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_FROZEN;
		b.freeze_event_id = "fc-2026-06-03-0007";
		if (i == 0)
			b.state = PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_UNSPECIFIED;
		else if (i == 1)
			b.state = (Perfwatch__V1__BaselineState)42;
		else if (i == 2)
			b.freeze_event_id = event;
		uint8_t buf[1024];
		size_t len = perfwatch__v1__baseline__get_packed_size(&b);
		perfwatch__v1__baseline__pack(&b, buf);
		if (i == 3) { /* series_key again, a NUL inside: the last occurrence counts */
			static const uint8_t nul_key[] = {0x12, 0x07, 'c', 'h', 'a', 't', 0, 'x', 'y'};
			memcpy(buf + len, nul_key, sizeof nul_key);
			len += sizeof nul_key;
		} else if (i == 4) {
			static const uint8_t junk[] = {0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 0xff, 0xff, 0xff};
			memcpy(buf, junk, sizeof junk);
			len = sizeof junk;
		} else if (i == 5) {
			len = 0;
		}
		snprintf(key, sizeof key, "bl-door.%s/%s", a->nonce, names[i]);
		if (pw_producer_produce(a->prod, PW_TOPIC_BASELINES, key, strlen(key), len ? buf : NULL,
		                        len, 10000, err, sizeof err) != PW_OK) {
			fprintf(stderr, "FAIL: baseline %s: %s\n", names[i], err);
			return 1;
		}
	}
	if (pw_producer_flush(a->prod, 30000, err, sizeof err) != PW_OK) {
		fprintf(stderr, "FAIL: baselines flush: %s\n", err);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	it_app a;
	memset(&a, 0, sizeof a);
	pw_log_init(&a.lg, "it_watcher", PW_LOG_WARN);
	int rc = 2;
	if (argc == 5 && strcmp(argv[1], "feed") == 0) {
		snprintf(a.nonce, sizeof a.nonce, "%s", argv[2]);
		a.rng = 412;
		rc = it_feed(&a, atoi(argv[3]), atoi(argv[4]), 0, IT_DAYS - 1, false);
	} else if (argc == 7 && strcmp(argv[1], "feed-days") == 0) {
		snprintf(a.nonce, sizeof a.nonce, "%s", argv[2]);
		a.rng = 412;
		rc = it_feed(&a, atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), true);
	} else if (argc >= 3 && strcmp(argv[1], "start-at-end") == 0) {
		static const char *const watched[] = {PW_TOPIC_POINTS, PW_TOPIC_FLEET_CHANGES,
		                                      PW_TOPIC_BASELINES};
		if (argc == 3)
			rc = it_start_at_end(argv[2], watched, 3);
		else
			rc = it_start_at_end(argv[2], (const char *const *)argv + 3, (size_t)argc - 3);
	} else if ((argc == 4 || argc == 5) && strcmp(argv[1], "wait") == 0) {
		rc = it_wait(argv[2], atoi(argv[3]), argc == 5 ? argv[4] : PW_TOPIC_POINTS);
	} else if (argc == 3 && strcmp(argv[1], "count") == 0) {
		rc = it_count(&a, argv[2]);
	} else if (argc == 3 && strcmp(argv[1], "baselines") == 0) {
		snprintf(a.nonce, sizeof a.nonce, "%s", argv[2]);
		rc = it_baselines(&a);
	} else {
		fprintf(stderr, "usage: it_watcher feed NONCE FILLER DAY_MS |"
		                " feed-days NONCE FILLER DAY_MS FROM TO | wait GROUP TIMEOUT_S [TOPIC] |"
		                " count NONCE | baselines NONCE | start-at-end GROUP [TOPIC...]\n");
	}
	pw_producer_free(a.prod);
	pw_pg_free(a.pg);
	free(a.s);
	return rc;
}
