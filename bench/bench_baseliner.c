/*
 * bench_baseliner.c: the baseliner's targets (issue 5) for 4,000 series —
 * baseline updates per second, a Redis baseline read against a PostgreSQL
 * one, and the time a fleet-change freeze takes to hold on every selected
 * series.
 *
 * Four phases, each printing one machine-readable line:
 *
 *   logic   the decision layer alone (services/baseliner/series_table.c and
 *           baseline.c, §4.2 window: 30 runs, 5 days, 3 chip-sets, 120 kept):
 *           4,000 series warmed to an active baseline, then every further
 *           point is one new baseline version (median + MAD_n of 120
 *           points). Reference in the same run: pw_stats_median_mad alone on
 *           the same windows (the floor of any implementation).
 *   service the service's own batch function (pw_baseliner_batch, as the
 *           consumer loop calls it) on batches of 4,000 points, one per
 *           series: COPY of baselines and progress into PostgreSQL, each
 *           version published on perf.baselines.v1 and flushed, commit,
 *           then Redis. Kafka consumption is not part of it (bench_kafka
 *           measures that); messages are built in memory.
 *   read    pw_baseline_get of every series' baseline from Redis with the
 *           current version known (Redis alone), then with PostgreSQL asked
 *           for it (a version probe and Redis), then with Redis left out
 *           (the record from PostgreSQL).
 *   freeze  one FleetChangeEvent selecting one of 4 cells (1,000 series) through
 *           pw_baseliner_batch: from the call to its return (freezes stored,
 *           baselines frozen in place, messages delivered, committed, cache
 *           entries deleted), checked against perfwatch.active_freezes.
 *
 * Needs the dev stack (PW_PG_DSN, PW_REDIS_ADDR, PW_KAFKA_BOOTSTRAP_SERVERS
 * from run/stack.env). It inserts 4,000 series named bench<pid>-m<i>.
 *
 *   bench_baseliner [--series N] [--points P]   (defaults 4000, 25 per series)
 */
#include "baseliner.h"
#include "baseliner_store.h"
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_pg.h"
#include "pw_redis.h"
#include "pw_stats.h"
#include "pw_topics.h"
#include "series_table.h"

#include "perfwatch/v1/fleet.pb-c.h"
#include "perfwatch/v1/series.pb-c.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define B_DAY_US (86400LL * 1000000LL)
#define B_PER_DAY 8
#define B_WARM 41 /* 5 days at 8 a day: the §4.2 window completes at point 41 */
#define B_CELLS 4

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double noise(uint64_t *s)
{
	double sum = 0;
	for (int j = 0; j < 12; j++) {
		*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
		sum += (double)(*s >> 11) / 9007199254740992.0;
	}
	return sum - 6.0;
}

/* ------------------------------------------------------------- logic */

static int bench_logic(size_t nseries, size_t npoints)
{
	pw_baseline_params p;
	pw_baseline_params_default(&p, false);
	pw_series_table *t = pw_series_table_new(nseries, &p);
	if (!t)
		return 1;
	char key[96];
	pw_series_entry **e = calloc(nseries, sizeof *e);
	if (!e) {
		pw_series_table_free(t);
		return 1;
	}
	for (size_t i = 0; i < nseries; i++) {
		bool created;
		snprintf(key, sizeof key, "m%zu/hlo:%zx/v6e-4/decode.B8/tpot_p50_ms", i, i);
		pw_series_table_get(t, key, false, &e[i], &created);
	}
	uint64_t rng = 7;
	int64_t t0 = 1780272000LL * 1000000LL;
	pw_baseline_event ev[2];
	size_t nev;
	bool skipped;
	int warm = (int)p.max_window; /* full windows: the steady state, the costliest */
	for (int k = 0; k < warm; k++)
		for (size_t i = 0; i < nseries; i++) {
			pw_baseline_point pt = {10.0 * (1 + 0.004 * noise(&rng)), t0 + k * (B_DAY_US / B_PER_DAY),
			                        1000 + (uint64_t)(k % 3)};
			pw_series_entry_add(e[i], &pt, (uint64_t)k, 0, k, NULL, ev, &nev, &skipped);
		}
	size_t updates = 0;
	double a = now_s();
	for (size_t k = (size_t)warm; k < (size_t)warm + npoints; k++)
		for (size_t i = 0; i < nseries; i++) {
			pw_baseline_point pt = {10.0 * (1 + 0.004 * noise(&rng)),
			                        t0 + (int64_t)k * (B_DAY_US / B_PER_DAY), 1000 + (uint64_t)(k % 3)};
			pw_series_entry_add(e[i], &pt, (uint64_t)k, 0, (int64_t)k, NULL, ev, &nev, &skipped);
			for (size_t j = 0; j < nev; j++)
				updates += ev[j].kind == PW_BASELINE_EV_UPDATED;
		}
	double secs = now_s() - a;
	/* reference: median + MAD_n alone on windows of the same size */
	size_t w = e[0]->bs.ring_len;
	/* windows drawn from one pre-generated pool, so that only median + MAD_n is timed */
	enum { POOL = 4096 };
	double *vals = malloc((POOL + w) * sizeof *vals), *work = malloc(w * sizeof *work);
	if (!vals || !work) {
		free(vals);
		free(work);
		free(e);
		pw_series_table_free(t);
		return 1;
	}
	for (size_t j = 0; j < POOL + w; j++)
		vals[j] = 10.0 * (1 + 0.004 * noise(&rng));
	double sink = 0, med, mad;
	double b = now_s();
	for (size_t r = 0; r < npoints * nseries; r++) {
		pw_stats_median_mad(vals + (r * 7919) % POOL, w, work, &med, &mad);
		sink += med;
	}
	double ref = now_s() - b;
	printf("logic series=%zu points=%zu window=%zu updates=%zu secs=%.3f rate=%.0f "
	       "ref_median_mad_rate=%.0f ratio_to_ref=%.2f target=50000 %s\n",
	       nseries, npoints * nseries, w, updates, secs, (double)updates / secs,
	       (double)(npoints * nseries) / ref, ((double)updates / secs) / ((double)(npoints * nseries) / ref),
	       (double)updates / secs >= 50000 ? "MET" : "MISSED");
	(void)sink;
	free(vals);
	free(work);
	free(e);
	pw_series_table_free(t);
	return 0;
}

/* ----------------------------------------------------------- service */

typedef struct bench_msgs {
	rd_kafka_message_t *m;
	rd_kafka_message_t **pm;
	uint8_t **bufs;
	size_t n;
} bench_msgs;

static void msgs_free(bench_msgs *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->bufs[i]);
	free(b->bufs);
	free(b->m);
	free(b->pm);
	memset(b, 0, sizeof *b);
}

static int msgs_alloc(bench_msgs *b, size_t n)
{
	b->m = calloc(n, sizeof *b->m);
	b->pm = calloc(n, sizeof *b->pm);
	b->bufs = calloc(n, sizeof *b->bufs);
	b->n = n;
	return b->m && b->pm && b->bufs ? 0 : -1;
}

/* Batch of one point per series at step k. */
static int points_batch(bench_msgs *b, rd_kafka_topic_t *rkt, const char *prefix,
                        const int64_t *ids, size_t nseries, int k, uint64_t *rng, char keys[][96])
{
	if (msgs_alloc(b, nseries))
		return -1;
	int64_t t0 = 1780272000LL * 1000000LL;
	for (size_t i = 0; i < nseries; i++) {
		char run[64], chip[48], cell[48];
		snprintf(run, sizeof run, "%s-r%zu-%d", prefix, i, k);
		snprintf(chip, sizeof chip, "%s-c%zu-%d", prefix, i % B_CELLS, k % 3);
		snprintf(cell, sizeof cell, "%s-cell-%zu", prefix, i % B_CELLS);
		Perfwatch__V1__CompilerBuild cb = PERFWATCH__V1__COMPILER_BUILD__INIT;
		cb.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_NIGHTLY;
		Perfwatch__V1__SeriesPoint sp = PERFWATCH__V1__SERIES_POINT__INIT;
		sp.series_id = ids[i];
		sp.series_key = keys[i];
		sp.run_id = run;
		sp.build = &cb;
		sp.value = 10.0 * (1 + 0.004 * noise(rng));
		sp.unit = (char *)"ms";
		sp.measured_unix_us = t0 + (int64_t)k * (B_DAY_US / B_PER_DAY);
		sp.chip_set = chip;
		sp.cell = cell;
		sp.firmware = (char *)"fw";
		sp.harness_version = (char *)"h";
		size_t len = perfwatch__v1__series_point__get_packed_size(&sp);
		b->bufs[i] = malloc(len);
		if (!b->bufs[i])
			return -1;
		perfwatch__v1__series_point__pack(&sp, b->bufs[i]);
		b->m[i].rkt = rkt;
		b->m[i].payload = b->bufs[i];
		b->m[i].len = len;
		b->m[i].partition = 0;
		b->m[i].offset = (int64_t)k * (int64_t)nseries + (int64_t)i; /* increasing per series */
		b->pm[i] = &b->m[i];
	}
	return 0;
}

static pw_status q1(pw_pg *pg, const char *sql, const char *param, char *out, size_t outlen, char *err,
                    size_t errlen)
{
	PGresult *res = NULL;
	const char *const p[] = {param};
	pw_status st = pw_pg_exec(pg, sql, param ? 1 : 0, param ? p : NULL, &res, err, errlen);
	if (st != PW_OK)
		return st;
	snprintf(out, outlen, "%s", PQntuples(res) ? PQgetvalue(res, 0, 0) : "");
	PQclear(res);
	return PW_OK;
}

int main(int argc, char **argv)
{
	size_t nseries = 4000, npoints = 25;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--series") == 0)
			nseries = (size_t)atol(argv[i + 1]);
		else if (strcmp(argv[i], "--points") == 0)
			npoints = (size_t)atol(argv[i + 1]);
	}
	if (nseries < B_CELLS || npoints < 1) {
		fprintf(stderr, "usage: bench_baseliner [--series N>=4] [--points P>=1]\n");
		return 2;
	}
	if (bench_logic(nseries, npoints))
		return 1;

	const char *dsn = getenv("PW_PG_DSN"), *raddr = getenv("PW_REDIS_ADDR"),
	           *brokers = getenv("PW_KAFKA_BOOTSTRAP_SERVERS");
	if (!dsn || !raddr || !brokers) {
		fprintf(stderr, "bench_baseliner: PW_PG_DSN, PW_REDIS_ADDR and PW_KAFKA_BOOTSTRAP_SERVERS "
		                "must be set (run/stack.env); only the logic phase ran\n");
		return 1;
	}
	pw_log lg;
	pw_log_init(&lg, "bench_baseliner", PW_LOG_WARN);
	char err[1024];
	int rc = 1;
	pw_pg *pg = NULL;
	pw_redis *rd = NULL;
	pw_producer *prod = NULL;
	rd_kafka_t *rk = NULL;
	rd_kafka_topic_t *tp = NULL, *tf = NULL;
	pw_series_table *t = NULL;
	int64_t *ids = NULL;
	char (*keys)[96] = NULL;
	pw_baseliner b;
	memset(&b, 0, sizeof b);
	pw_baseliner_init(&b);
	bench_msgs bm = {0};

	if (pw_pg_new(&pg, dsn, NULL, &lg, err, sizeof err) != PW_OK ||
	    pw_pg_wait_connected(pg, 10000, NULL, err, sizeof err) != PW_OK ||
	    pw_redis_new(&rd, raddr, NULL, &lg, err, sizeof err) != PW_OK ||
	    pw_producer_new(&prod, brokers, NULL, 0, &lg, err, sizeof err) != PW_OK)
		goto fail;
	/* a client only for topic handles of the in-memory messages; it never connects */
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_conf_set(conf, "log_level", "2", NULL, 0);
	rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
	if (!rk)
		goto fail;
	tp = rd_kafka_topic_new(rk, PW_TOPIC_POINTS, NULL);
	tf = rd_kafka_topic_new(rk, PW_TOPIC_FLEET_CHANGES, NULL);

	/* the series rows */
	char prefix[32];
	snprintf(prefix, sizeof prefix, "bench%ld", (long)getpid());
	ids = calloc(nseries, sizeof *ids);
	keys = calloc(nseries, sizeof *keys);
	if (!ids || !keys)
		goto fail;
	char last[32];
	snprintf(last, sizeof last, "%zu", nseries - 1);
	const char *const sp[] = {prefix, last};
	if (pw_pg_exec(pg,
	               "INSERT INTO perfwatch.series (model, hlo_fingerprint, platform, config, metric, unit, "
	               "direction) SELECT $1 || '-m' || i, 'hlo:' || i, 'v6e-4', 'decode.B8', 'tpot_p50_ms', "
	               "'ms', 'lower_is_better' FROM generate_series(0, $2::int) i ON CONFLICT DO NOTHING",
	               2, sp, NULL, err, sizeof err) != PW_OK)
		goto fail;
	PGresult *res = NULL;
	if (pw_pg_exec(pg,
	               "SELECT series_id, series_key FROM perfwatch.series WHERE model LIKE $1 || '-m%' "
	               "ORDER BY substring(model from '-m([0-9]+)$')::int",
	               1, sp, &res, err, sizeof err) != PW_OK)
		goto fail;
	for (size_t i = 0; i < nseries && (int)i < PQntuples(res); i++) {
		ids[i] = strtoll(PQgetvalue(res, (int)i, 0), NULL, 10);
		snprintf(keys[i], sizeof keys[i], "%s", PQgetvalue(res, (int)i, 1));
	}
	PQclear(res);

	pw_baseline_params p;
	pw_baseline_params_default(&p, false);
	t = pw_series_table_new(nseries + 16, &p);
	if (!t)
		goto fail;
	b.lg = &lg;
	b.pg = pg;
	b.rd = rd;
	b.prod = prod;
	b.table = t;
	b.gpu_prefixes = "h100,b200,gpu";
	b.flush_timeout_ms = 30000;
	b.need_known = false; /* fresh series: nothing stored about them yet */

	uint64_t rng = 11;
	double warm_a = now_s();
	for (int k = 0; k < B_WARM; k++) {
		if (points_batch(&bm, tp, prefix, ids, nseries, k, &rng, keys))
			goto fail;
		if (pw_baseliner_batch(&b, bm.pm, bm.n, err, sizeof err) != PW_OK)
			goto fail;
		msgs_free(&bm);
	}
	double warm = now_s() - warm_a;
	uint64_t upd0 = b.updates;
	double svc = 0, phase[5] = {0};
	for (size_t k = B_WARM; k < B_WARM + npoints; k++) {
		if (points_batch(&bm, tp, prefix, ids, nseries, (int)k, &rng, keys))
			goto fail;
		double a = now_s();
		if (pw_baseliner_batch(&b, bm.pm, bm.n, err, sizeof err) != PW_OK)
			goto fail;
		svc += now_s() - a;
		for (int j = 0; j < 5; j++)
			phase[j] += b.phase_s[j];
		msgs_free(&bm);
	}
	double a_settle = now_s();
	pw_baseliner_cache_settle(&b); /* the last batch's cache replies count too */
	svc += now_s() - a_settle;
	uint64_t upd = b.updates - upd0;
	printf("service series=%zu batch=%zu batches=%zu updates=%llu secs=%.3f rate=%.0f "
	       "warmup_points=%zu warmup_secs=%.1f target=50000 %s\n",
	       nseries, nseries, npoints, (unsigned long long)upd, svc, (double)upd / svc,
	       nseries * B_WARM, warm, (double)upd / svc >= 50000 ? "MET" : "MISSED");
	printf("service_phases apply=%.3f pg_write=%.3f publish_flush=%.3f commit=%.3f redis=%.3f\n",
	       phase[0], phase[1], phase[2], phase[3], phase[4]);

	/* reads: Redis (filled by the batches) against PostgreSQL, through the
	 * one reader (common/pw_baseline_cache.h): the caller's version known,
	 * PostgreSQL asked for it, and Redis left out */
	pw_baseline_record r;
	pw_baseline_source src;
	pw_baseline_reader with_rd, no_rd;
	pw_baseline_reader_init(&with_rd, rd, pg, NULL);
	pw_baseline_reader_init(&no_rd, NULL, pg, NULL);
	uint64_t *cur = malloc(nseries * sizeof *cur);
	const char **kp = malloc(nseries * sizeof *kp);
	if (!cur || !kp)
		goto fail;
	for (size_t i = 0; i < nseries; i++)
		kp[i] = keys[i];
	if (pw_baseline_current_pg(pg, kp, nseries, cur, err, sizeof err) != PW_OK)
		goto fail;
	free(kp);
	size_t hits = 0;
	double a = now_s();
	for (size_t i = 0; i < nseries; i++) {
		if (pw_baseline_get(&with_rd, keys[i], cur[i], &r, &src, NULL, err, sizeof err) != PW_OK)
			goto fail;
		hits += src == PW_BASELINE_FROM_REDIS;
	}
	double known_s = now_s() - a;
	a = now_s();
	for (size_t i = 0; i < nseries; i++) {
		if (pw_baseline_get(&with_rd, keys[i], PW_BASELINE_ASK, &r, &src, NULL, err, sizeof err) !=
		    PW_OK)
			goto fail;
		hits += src == PW_BASELINE_FROM_REDIS;
	}
	double ask_s = now_s() - a;
	a = now_s();
	for (size_t i = 0; i < nseries; i++)
		if (pw_baseline_get(&no_rd, keys[i], PW_BASELINE_ASK, &r, &src, NULL, err, sizeof err) !=
		    PW_OK)
			goto fail;
	double pg_s = now_s() - a;
	free(cur);
	printf("read series=%zu redis_hits=%zu known_version_us=%.1f asked_version_us=%.1f pg_us=%.1f "
	       "ratio_known=%.1f ratio_asked=%.2f target=5 %s\n",
	       nseries, hits, known_s / (double)nseries * 1e6, ask_s / (double)nseries * 1e6,
	       pg_s / (double)nseries * 1e6, pg_s / known_s, pg_s / ask_s,
	       hits == 2 * nseries && pg_s / known_s >= 5 ? "MET" : "MISSED");

	/* freeze: one event selecting cell 1 */
	char cell[48], event_id[64], reason[64];
	snprintf(cell, sizeof cell, "%s-cell-1", prefix);
	snprintf(event_id, sizeof event_id, "fc-%s", prefix);
	snprintf(reason, sizeof reason, "%s recabled", cell);
	char *cells[1] = {cell};
	Perfwatch__V1__FleetChangeEvent ev = PERFWATCH__V1__FLEET_CHANGE_EVENT__INIT;
	ev.event_id = event_id;
	ev.occurred_unix_us = 1780272000LL * 1000000LL + (int64_t)(B_WARM + npoints) * (B_DAY_US / B_PER_DAY);
	ev.kind = PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_RECABLING;
	ev.reason = reason;
	ev.n_cells = 1;
	ev.cells = cells;
	uint8_t evbuf[512];
	rd_kafka_message_t fm = {0};
	fm.rkt = tf;
	fm.payload = evbuf;
	fm.len = perfwatch__v1__fleet_change_event__pack(&ev, evbuf);
	rd_kafka_message_t *fmp = &fm;
	uint64_t fr0 = b.freezes;
	a = now_s();
	if (pw_baseliner_batch(&b, &fmp, 1, err, sizeof err) != PW_OK)
		goto fail;
	double freeze_s = now_s() - a;
	char cnt[32];
	if (q1(pg, "SELECT count(*) FROM perfwatch.active_freezes WHERE event_id = $1", event_id, cnt,
	       sizeof cnt, err, sizeof err) != PW_OK)
		goto fail;
	size_t want = (nseries + B_CELLS - 2) / B_CELLS; /* series i with i % 4 == 1 */
	printf("freeze selected=%llu expected=%zu stored=%s secs=%.3f target=1.0 %s\n",
	       (unsigned long long)(b.freezes - fr0), want, cnt, freeze_s,
	       freeze_s <= 1.0 && (size_t)atol(cnt) == want ? "MET" : "MISSED");
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "bench_baseliner: %s\n", err);
out:
	msgs_free(&bm);
	pw_baseliner_release(&b);
	pw_series_table_free(t);
	free(ids);
	free(keys);
	if (tp)
		rd_kafka_topic_destroy(tp);
	if (tf)
		rd_kafka_topic_destroy(tf);
	if (rk)
		rd_kafka_destroy(rk);
	pw_producer_free(prod);
	pw_redis_free(rd);
	pw_pg_free(pg);
	return rc;
}
