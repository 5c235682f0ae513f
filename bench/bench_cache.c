/*
 * bench_cache.c: what the baseline cache (common/pw_baseline_cache.h) buys
 * the gate and the watcher, Redis against no Redis, in one run.
 *
 * Writes 2,160 gated series into the dev stack's PostgreSQL (60 families x
 * 36 series, §4.4), each with one active baseline whose window holds 30
 * nightly runs and a release candidate with 5 runs, and a pending gate
 * evaluation of them. Then, round after round, three readers take turns:
 *
 *   redis     Redis up (warmed by a first read: every later read a hit)
 *   stopped   Redis stopped: the client points at a port nothing listens on,
 *             as it does once the server is gone (connection refused, then
 *             the backoff), so every read falls back to PostgreSQL
 *   disabled  no Redis configured (redis.addr empty): PostgreSQL only
 *
 * and measures with each
 *
 *   gate      pw_gate_store_load (the evaluation's reads: series, states and
 *             counts, the baselines' windows through the reader, samples) and
 *             pw_gate_evaluate (the decision) of the 2,160-test release, as
 *             the gate's tick does before it stores and publishes;
 *   watcher   the watcher's first sight of a series (pw_watch_store_load:
 *             its row and frozen state through the reader, 30 nightly points,
 *             stored shifts, fleet marks; pw_watch_loaded_series and one
 *             scan), then 7 nightly points appended to each series
 *             (pw_watch_series_append: no baseline read): the per-point
 *             cost of a restart followed by a week of nightlies;
 *   read      pw_baseline_get alone, the version asked of PostgreSQL (as
 *             GET /api/baseline and `perfwatch series show` read).
 *
 * The watcher's loads and the reads take the readers in turn series by
 * series, so that a busy moment of the shared machine falls on all three.
 *
 * It prints the median of the rounds per reader and the ratios redis /
 * stopped and redis / disabled, checks that the three readers gave the gate
 * the same verdict and required n for every series, and counts the readers'
 * outcomes. Not part of CI (bench/run.sh; make bench-cache).
 *
 * Needs PW_PG_DSN and PW_REDIS_ADDR (run/stack.env). PW_CACHE_ROUNDS
 * (default 7) sets the rounds.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "gate_eval.h"
#include "gate_store.h"
#include "pw_baseline_cache.h"
#include "pw_log.h"
#include "pw_pg.h"
#include "pw_redis.h"
#include "watch.h"
#include "watch_store.h"

#define FAMILIES 60
#define PER_FAMILY 36
#define NSERIES (FAMILIES * PER_FAMILY)
#define WEEK 7
#define READERS 3

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A loopback port nothing listens on: bound, then closed. */
static int closed_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return ntohs(a.sin_port);
}

static pw_status setup(pw_pg *pg, const char *tag, char *err, size_t errlen)
{
	/* one statement per step, each its own parameter list: the tag */
	static const char *const steps[] = {
		"INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) "
		"SELECT 'cb' || f || '-' || $1, 0.8 / 60, CASE WHEN f < 20 THEN 'top' ELSE 'tail' END, "
		"'bench_cache' FROM generate_series(0, 59) f",
		"INSERT INTO perfwatch.series (model, hlo_fingerprint, platform, config, metric, unit, direction) "
		"SELECT 'cb' || f || '-' || $1, 'hlo:' || $1, 'v6e-' || (4 + 4 * (j % 2)), "
		"'cfg' || ((j / 2) % 3), 'metric' || (j / 6), 'ms', 'lower_is_better' "
		"FROM generate_series(0, 59) f, generate_series(0, 35) j",
		/* the n each baseline published (§4.5), 5 or 6 for the top tier's 1% and
		 * 5 for the tail's 3%, is what the gate's required n reads: served from
		 * Redis or PostgreSQL, the same */
		"INSERT INTO perfwatch.baselines (series_id, version, state, hlo_fingerprint, median, mad_n, "
		"band_lo, band_hi, sigma, sigma_pct, n, unit, build_id, window_start, window_end, computed_at, "
		"required_n_top, required_n_tail, mde_top_pct, mde_tail_pct, gpu_class) "
		"SELECT series_id, 1, 'active', hlo_fingerprint, 10, 0.04, 9.88, 10.12, 0.04, 0.4, 30, 'ms', "
		"'xla-nightly-' || $1, now() - interval '31 days', now() - interval '1 day', now(), "
		"5 + series_id % 2, 5, 1, 3, false "
		"FROM perfwatch.series WHERE hlo_fingerprint = 'hlo:' || $1",
		/* 30 nightlies in the window, one a day, and 5 runs of the candidate */
		"CREATE TEMP TABLE cb_pts AS "
		"SELECT s.series_id, s.model, s.hlo_fingerprint, s.platform, s.config, s.metric, "
		"       CASE WHEN g <= 30 THEN 'xla-nightly-' || $1 || '-' || g ELSE 'rc-' || $1 END AS build, "
		"       CASE WHEN g <= 30 THEN 'nightly' ELSE 'rc' END AS kind, g, "
		"       CASE WHEN g <= 30 THEN now() - interval '31 days' + g * interval '1 day' "
		"            ELSE now() - interval '12 hours' + g * interval '1 minute' END AS at, "
		"       (10 + s.series_id % 7) * (1 + CASE WHEN g > 30 AND s.series_id % 500 = 3 THEN 0.05 ELSE 0 END) "
		"         * (1 + 0.004 * ((((g * 7919 + s.series_id * 104729) % 1000) / 1000.0) - 0.5) * 3.4641) "
		"         AS value "
		"  FROM perfwatch.series s, generate_series(1, 35) g WHERE s.hlo_fingerprint = 'hlo:' || $1",
		"INSERT INTO perfwatch.runs (run_id, repeat_index, model, model_rev, hlo_fingerprint, build_id, "
		"build_kind, compiler_cl, compiler_cl_number, platform, config, firmware, chip_set, cell, "
		"harness_version, started_at, finished_at, payload_sha256) "
		"SELECT 'cb-' || series_id || '-' || g, 0, model, model, hlo_fingerprint, build, kind, "
		"'cl/' || (1000 + g), 1000 + g, platform, config, 'fw', 'pinned-' || (1 + g % 3), 'cell-1', "
		"'perfbench', at, at, '\\x00' FROM cb_pts",
		"INSERT INTO perfwatch.samples (run_id, repeat_index, metric, series_id, value, unit, "
		"measured_at, build_id, build_kind, compiler_cl_number, chip_set) "
		"SELECT 'cb-' || series_id || '-' || g, 0, metric, series_id, value, 'ms', at, build, kind, "
		"1000 + g, 'pinned-' || (1 + g % 3) FROM cb_pts",
		"DROP TABLE cb_pts",
		"INSERT INTO perfwatch.gate_evaluations (release_id, evaluation, candidate_build_id, "
		"candidate_cl, baseline_release, families, fdr_q, requested_at, deadline) "
		"SELECT 'rc-' || $1, 1, 'rc-' || $1, 'cl/1035', 'rel-' || $1, "
		"array_agg('cb' || f || '-' || $1 ORDER BY f), 0.05, now(), now() + interval '1 day' "
		"FROM generate_series(0, 59) f",
		"ANALYZE perfwatch.samples",
	};
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		pw_status st = pw_pg_exec(pg, steps[i], strstr(steps[i], "$1") ? 1 : 0,
		                          (const char *const[]){tag}, NULL, err, errlen);
		if (st != PW_OK)
			return st;
	}
	return PW_OK;
}

/* The gate's evaluation reads and decision; verdicts[i] the series verdicts,
 * needs[i] their required n (from the baseline records the reader gave). */
static pw_status gate_once(pw_baseline_reader *br, const char *release,
                           const pw_gate_store_defaults *d, int *verdicts, int *needs,
                           size_t *tests, char *err, size_t errlen)
{
	pw_gate_release *r = NULL;
	pw_status st = pw_gate_store_load(br, release, 1, d, true, &r, err, errlen);
	if (st != PW_OK)
		return st;
	st = pw_gate_evaluate(&r->policy, r->families, r->n_families, r->series, r->n_series, r->sr,
	                      r->fr, &r->rr, err, errlen);
	if (st == PW_OK && r->n_series != NSERIES)
		st = pw_fail(PW_ERR_INVALID, err, errlen, "the release has %zu series, not %d",
		             r->n_series, NSERIES);
	for (size_t i = 0; st == PW_OK && i < r->n_series; i++) {
		verdicts[i] = (int)r->sr[i].verdict;
		needs[i] = (int)r->series[i].required_n;
	}
	if (st == PW_OK)
		*tests = r->rr.n_tests;
	pw_gate_release_free(r);
	return st;
}

/*
 * The watcher's first sight of every series, each through the reader of
 * its turn (series i in round r: reader (i + r) % READERS, so that the
 * readers share the machine's moods), then a week of nightlies appended to
 * each (no reader involved). load_s[x] / loads[x]: the time and count of
 * reader x's loads.
 */
static pw_status watcher_round(pw_baseline_reader *br, int r, char keys[][PW_SERIES_KEY_MAX],
                               size_t n, const pw_watch_params *p, double *load_s, size_t *loads,
                               double *append_s, size_t *points, char *err, size_t errlen)
{
	pw_watch_event ev[64];
	pw_watch_series **ss = calloc(n, sizeof *ss);
	pw_status st = ss ? PW_OK : PW_ERR_NOMEM;
	for (size_t i = 0; st == PW_OK && i < n; i++) {
		int x = (int)((i + (size_t)r) % READERS);
		double t0 = now_s();
		pw_watch_loaded l;
		st = pw_watch_store_load(&br[x], keys[i], p, &l, NULL, err, errlen);
		if (st == PW_OK && !(ss[i] = pw_watch_loaded_series(&l, p, err, errlen)))
			st = PW_ERR_NOMEM;
		size_t nev = 0;
		if (st == PW_OK)
			st = pw_watch_series_scan_loaded(ss[i], l.npoints, ev, 64, &nev, err, errlen);
		pw_watch_loaded_release(&l);
		load_s[x] += now_s() - t0;
		loads[x]++;
	}
	double t1 = now_s();
	size_t k = 0;
	int64_t today = (int64_t)time(NULL) * 1000000;
	for (int d = 0; st == PW_OK && d < WEEK; d++)
		for (size_t i = 0; st == PW_OK && i < n; i++) {
			pw_watch_build b = {.cl_number = 2000 + d, .ts_us = today + (d + 1) * 86400LL * 1000000};
			snprintf(b.build_id, sizeof b.build_id, "week-%d", d);
			snprintf(b.cl, sizeof b.cl, "cl/%d", 2000 + d);
			double v = 10.0 + (double)((i * 7919 + (size_t)d * 104729) % 1000) * 4e-5;
			size_t nev = 0;
			st = pw_watch_series_append(ss[i], v, &b, ev, 64, &nev, err, errlen);
			k++;
		}
	*append_s = now_s() - t1;
	*points = k;
	for (size_t i = 0; ss && i < n; i++)
		pw_watch_series_free(ss[i]);
	free(ss);
	return st;
}

int main(void)
{
	char err[1024];
	const char *dsn = getenv("PW_PG_DSN"), *raddr = getenv("PW_REDIS_ADDR");
	if (!dsn || !raddr) {
		fprintf(stderr, "bench_cache: PW_PG_DSN and PW_REDIS_ADDR must be set (run/stack.env)\n");
		return 2;
	}
	int rounds = getenv("PW_CACHE_ROUNDS") ? atoi(getenv("PW_CACHE_ROUNDS")) : 7;
	if (rounds < 1)
		rounds = 1;
	pw_log lg;
	pw_log_init(&lg, "bench_cache", PW_LOG_ERROR);
	pw_pg *pg = NULL;
	pw_redis *rd = NULL, *gone = NULL;
	char tag[32], release[48], gone_addr[32];
	snprintf(tag, sizeof tag, "%ld%ld", (long)getpid(), (long)time(NULL) % 100000);
	snprintf(release, sizeof release, "rc-%s", tag);
	int port = closed_port();
	snprintf(gone_addr, sizeof gone_addr, "127.0.0.1:%d", port);
	if (port < 0 || pw_pg_new(&pg, dsn, NULL, &lg, err, sizeof err) != PW_OK ||
	    pw_redis_new(&rd, raddr, NULL, &lg, err, sizeof err) != PW_OK ||
	    pw_redis_new(&gone, gone_addr, NULL, &lg, err, sizeof err) != PW_OK) {
		fprintf(stderr, "bench_cache: %s\n", port < 0 ? "no free port" : err);
		return 1;
	}
	double t = now_s();
	if (setup(pg, tag, err, sizeof err) != PW_OK) {
		fprintf(stderr, "bench_cache: setup: %s\n", err);
		return 1;
	}
	printf("setup series=%d runs=%d seconds=%.1f\n", NSERIES, NSERIES * 35, now_s() - t);

	/* the series keys, as the watcher is handed them */
	static char keys[NSERIES][PW_SERIES_KEY_MAX];
	PGresult *res = NULL;
	if (pw_pg_exec(pg, "SELECT series_key FROM perfwatch.series WHERE hlo_fingerprint = 'hlo:' || $1 "
	                   "ORDER BY series_key", 1, (const char *const[]){tag}, &res, err,
	               sizeof err) != PW_OK || PQntuples(res) != NSERIES) {
		fprintf(stderr, "bench_cache: series keys: %s\n", err);
		return 1;
	}
	for (int i = 0; i < NSERIES; i++)
		snprintf(keys[i], sizeof keys[i], "%s", PQgetvalue(res, i, 0));
	PQclear(res);

	static const char *const names[READERS] = {"redis", "stopped", "disabled"};
	pw_baseline_reader br[READERS];
	pw_baseline_reader_init(&br[0], rd, pg, NULL);
	pw_baseline_reader_init(&br[1], gone, pg, NULL);
	pw_baseline_reader_init(&br[2], NULL, pg, NULL);
	pw_gate_store_defaults d;
	memset(&d, 0, sizeof d);
	pw_gate_policy_default(&d.policy);
	d.default_wait_us = 86400LL * 1000000;
	d.active_window_us = 14LL * 86400 * 1000000;
	pw_watch_params wp;
	pw_watch_params_default(&wp);

	static int verdicts[READERS][NSERIES], needs[READERS][NSERIES];
	size_t tests[READERS] = {0};
	/* warm: the redis reader's first reads miss and put the baselines back */
	if (gate_once(&br[0], release, &d, verdicts[0], needs[0], &tests[0], err, sizeof err) !=
	    PW_OK) {
		fprintf(stderr, "bench_cache: warm-up: %s\n", err);
		return 1;
	}
	uint64_t warm[PW_BASELINE_OUTCOMES];
	memcpy(warm, br[0].n, sizeof warm);
	double *gate_s = calloc((size_t)rounds * READERS, sizeof *gate_s);
	double *load_s = calloc((size_t)rounds * READERS, sizeof *load_s);
	double *pp_s = calloc((size_t)rounds * READERS, sizeof *pp_s);
	double *read_s = calloc((size_t)rounds * READERS, sizeof *read_s);
	double *append_s = calloc((size_t)rounds, sizeof *append_s);
	double *many_s = calloc((size_t)rounds * READERS, sizeof *many_s);
	/* the gate's own baseline read: every window, the versions known */
	static const char *kp[NSERIES];
	static uint64_t cur[NSERIES];
	static bool found[NSERIES];
	static pw_baseline_record recs[NSERIES];
	for (int i = 0; i < NSERIES; i++)
		kp[i] = keys[i];
	if (pw_baseline_current_pg(pg, kp, NSERIES, cur, err, sizeof err) != PW_OK) {
		fprintf(stderr, "bench_cache: versions: %s\n", err);
		return 1;
	}
	if (!gate_s || !load_s || !pp_s || !read_s || !append_s || !many_s) {
		fprintf(stderr, "bench_cache: out of memory\n");
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		pw_status st = PW_OK;
		for (int k = 0; st == PW_OK && k < READERS; k++) {
			/* the order of the readers turns each round: no reader always runs after another */
			int x = (k + r) % READERS;
			double a = now_s();
			st = gate_once(&br[x], release, &d, verdicts[x], needs[x], &tests[x], err,
			               sizeof err);
			gate_s[(size_t)x * (size_t)rounds + (size_t)r] = now_s() - a;
		}
		for (int k = 0; st == PW_OK && k < READERS; k++) {
			int x = (k + r) % READERS;
			double a = now_s();
			st = pw_baseline_get_many(&br[x], kp, cur, NSERIES, recs, found, NULL, NULL, err,
			                          sizeof err);
			many_s[(size_t)x * (size_t)rounds + (size_t)r] = now_s() - a;
		}
		double ls[READERS] = {0}, rs[READERS] = {0}, as = 0;
		size_t nl[READERS] = {0}, nr[READERS] = {0}, points = 0;
		if (st == PW_OK)
			st = watcher_round(br, r, keys, NSERIES, &wp, ls, nl, &as, &points, err, sizeof err);
		for (int i = 0; st == PW_OK && i < NSERIES; i++) {
			int x = (i + r) % READERS;
			pw_baseline_record rec;
			double a = now_s();
			st = pw_baseline_get(&br[x], keys[i], PW_BASELINE_ASK, &rec, NULL, NULL, err,
			                     sizeof err);
			rs[x] += now_s() - a;
			nr[x]++;
		}
		if (st != PW_OK) {
			fprintf(stderr, "bench_cache: round %d: %s\n", r, err);
			return 1;
		}
		append_s[r] = as / (double)points;
		for (int x = 0; x < READERS; x++) {
			size_t ix = (size_t)x * (size_t)rounds + (size_t)r;
			load_s[ix] = ls[x] / (double)nl[x];
			/* a restart, then a week of nightlies: one load and WEEK appends a series */
			pp_s[ix] = (load_s[ix] + WEEK * append_s[r]) / WEEK;
			read_s[ix] = rs[x] / (double)nr[x];
		}
	}
	int same = memcmp(verdicts[0], verdicts[1], sizeof verdicts[0]) == 0 &&
	           memcmp(verdicts[0], verdicts[2], sizeof verdicts[0]) == 0 && tests[0] == tests[1] &&
	           tests[0] == tests[2] && memcmp(needs[0], needs[1], sizeof needs[0]) == 0 &&
	           memcmp(needs[0], needs[2], sizeof needs[0]) == 0;
	double m[6][READERS];
	for (int x = 0; x < READERS; x++) {
		size_t o = (size_t)x * (size_t)rounds;
		m[5][x] = median(many_s + o, (size_t)rounds);
		m[0][x] = median(gate_s + o, (size_t)rounds);
		m[1][x] = median(load_s + o, (size_t)rounds);
		m[2][x] = median(append_s, (size_t)rounds); /* the same appends: no reader */
		m[3][x] = median(pp_s + o, (size_t)rounds);
		m[4][x] = median(read_s + o, (size_t)rounds);
	}
	static const char *const what[6] = {
		"gate evaluation, 2,160 tests (load + decide), ms",
		"watcher first sight of a series (row, frozen state, 30 points, scan), us",
		"watcher append of a nightly point (no baseline read: the same for all), us",
		"watcher per point, a restart then a week of nightlies, us",
		"baseline read alone, version asked of PostgreSQL, us",
		"  of the gate: its 2,160 baseline windows (versions known), ms",
	};
	static const double scale[6] = {1e3, 1e6, 1e6, 1e6, 1e6, 1e3};
	printf("rounds=%d (medians)\n", rounds);
	printf("%-75s %10s %10s %10s %16s %16s\n", "what", "redis", "stopped", "disabled",
	       "redis/stopped", "redis/disabled");
	static const int order[6] = {0, 5, 1, 2, 3, 4};
	for (int o = 0; o < 6; o++) {
		int w = order[o];
		printf("%-75s %10.2f %10.2f %10.2f %16.3f %16.3f\n", what[w], m[w][0] * scale[w],
		       m[w][1] * scale[w], m[w][2] * scale[w], m[w][0] / m[w][1], m[w][0] / m[w][2]);
	}
	for (int x = 0; x < READERS; x++) {
		printf("reader %-8s outcomes:", names[x]);
		for (int o = 0; o < PW_BASELINE_OUTCOMES; o++)
			printf(" %s=%" PRIu64, pw_baseline_outcome_name((pw_baseline_outcome)o),
			       br[x].n[o] - (x == 0 ? warm[o] : 0));
		printf("\n");
	}
	printf("gate verdicts and required n identical across readers: %s (%zu tests)\n",
	       same ? "yes" : "NO", tests[0]);
	pw_pg_exec(pg, "DELETE FROM perfwatch.spend_weights WHERE source = 'bench_cache'", 0, NULL,
	           NULL, err, sizeof err);
	free(gate_s);
	free(load_s);
	free(append_s);
	free(pp_s);
	free(read_s);
	free(many_s);
	pw_redis_free(rd);
	pw_redis_free(gone);
	pw_pg_free(pg);
	return same ? 0 : 1;
}
