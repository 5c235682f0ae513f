/*
 * it_baseliner.c: plays the ingester and the infra change feed for
 * test_baseliner.sh — a small fleet of series, their points and one
 * fleet-change event — and computes what the baseliner must end up with.
 *
 * Run by tests/integration/test_baseliner.sh with PW_PG_DSN and
 * PW_KAFKA_BOOTSTRAP_SERVERS from run/stack.env. The fleet: NSERIES series
 * "PREFIX-m<i>/hlo:<i>/v6e-4/decode.B8.s2048.bf16/tpot_p50_ms" on 4 cells
 * (series i runs on cell PREFIX-<i mod 4>, rotating over 3 chip-sets of its cell),
 * 4 nightly points a day from 2026-06-01, value level_i × (1 + 0.2% noise),
 * deterministic. Series 3 is noisy (3%: quarantined); series 2 has one
 * +8% point at day 3.5 (an infra outlier); from FREEZE_DAY on, the points
 * of cell SHIFT_CELL are 0.7% higher (the recabling of §4's follow-up).
 * Cell names carry the prefix so that fleet changes of other tests on a
 * shared broker (replayed to the baseliner's fresh consumer group) never
 * select these series. Like the ingester, it stores every point (perfwatch.runs + samples, ON
 * CONFLICT DO NOTHING) before publishing it on perf.points.v1.
 *
 *   it_baseliner setup PREFIX NSERIES            insert the series rows
 *   it_baseliner feed PREFIX NSERIES FROM TO SHIFT_CELL SHIFT_DAY
 *                                                store + publish points with day in [FROM, TO)
 *   it_baseliner fleet PREFIX EVENT_ID CELL DAY  publish a recabling FleetChangeEvent for cell PREFIX-CELL
 *   it_baseliner expect PREFIX NSERIES TO SHIFT_CELL SHIFT_DAY MAX_WINDOW
 *                                                print "series_key median" the baseliner must hold
 *                                                after every point before TO (quiet series only)
 *   it_baseliner spike PREFIX I K FACTOR CHIP HARNESS
 *                                                store + publish one extra point of series I an
 *                                                hour after point K: quiet value × FACTOR, on
 *                                                chip set CHIP with harness HARNESS
 *   it_baseliner key PREFIX I                    print the key of series I
 */
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_pg.h"
#include "pw_status.h"
#include "pw_topics.h"

#include "perfwatch/v1/fleet.pb-c.h"
#include "perfwatch/v1/series.pb-c.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IT_T0_US (1780272000LL * 1000000LL) /* 2026-06-01T00:00:00Z */
#define IT_DAY_US (86400LL * 1000000LL)
#define IT_PER_DAY 4
#define IT_CELLS 4
#define IT_NOISY 3
#define IT_OUTLIER_SERIES 2
#define IT_OUTLIER_POINT (IT_PER_DAY * 7 / 2) /* day 3.5 */
#define IT_SHIFT 0.007

typedef struct it_ctx {
	pw_log lg;
	pw_pg *pg;
	pw_producer *prod;
	char err[1024];
} it_ctx;

static void series_key(char *buf, size_t len, const char *prefix, int i)
{
	snprintf(buf, len, "%s-m%d/hlo:%04x/v6e-4/decode.B8.s2048.bf16/tpot_p50_ms", prefix, i, i);
}

/* Deterministic N(0,1)-ish noise of (series, point): sum of 12 uniforms from a hash. */
static double noise(int i, int k)
{
	uint64_t s = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)i << 32) ^ (uint64_t)k;
	double sum = 0;
	for (int j = 0; j < 12; j++) {
		s ^= s >> 33;
		s *= 0xff51afd7ed558ccdULL;
		s ^= s >> 33;
		s *= 0xc4ceb9fe1a85ec53ULL;
		s ^= s >> 33;
		sum += (double)(s >> 11) / 9007199254740992.0;
	}
	return sum - 6.0;
}

/* The value of point k of series i. */
static double point_value(int i, int k, int shift_cell, double shift_day)
{
	double level = 10.0 + 0.5 * i;
	double sigma = i == IT_NOISY ? 0.03 : 0.002;
	double v = level * (1.0 + sigma * noise(i, k));
	double day = (double)k / IT_PER_DAY;
	if (i % IT_CELLS == shift_cell && day >= shift_day)
		v *= 1.0 + IT_SHIFT;
	if (i == IT_OUTLIER_SERIES && k == IT_OUTLIER_POINT)
		v *= 1.08;
	return v;
}

/* ceil() for x >= 0 without libm (the it_ programs link pwio pwcore pwproto only) */
static int iceil(double x)
{
	int i = (int)x;
	return (double)i < x - 1e-9 ? i + 1 : i;
}

static int64_t point_ts(int k)
{
	return IT_T0_US + (int64_t)k * (IT_DAY_US / IT_PER_DAY);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static pw_status it_connect(it_ctx *c, bool pg, bool kafka)
{
	const char *dsn = getenv("PW_PG_DSN"), *brokers = getenv("PW_KAFKA_BOOTSTRAP_SERVERS");
	if (pg) {
		if (!dsn)
			return pw_fail(PW_ERR_CONFIG, c->err, sizeof c->err, "PW_PG_DSN is not set");
		pw_status st = pw_pg_new(&c->pg, dsn, NULL, &c->lg, c->err, sizeof c->err);
		if (st == PW_OK)
			st = pw_pg_wait_connected(c->pg, 10000, NULL, c->err, sizeof c->err);
		if (st != PW_OK)
			return st;
	}
	if (kafka) {
		if (!brokers)
			return pw_fail(PW_ERR_CONFIG, c->err, sizeof c->err,
			               "PW_KAFKA_BOOTSTRAP_SERVERS is not set");
		return pw_producer_new(&c->prod, brokers, NULL, 0, &c->lg, c->err, sizeof c->err);
	}
	return PW_OK;
}

static pw_status cmd_setup(it_ctx *c, const char *prefix, int n)
{
	for (int i = 0; i < n; i++) {
		char model[96], hlo[32];
		snprintf(model, sizeof model, "%s-m%d", prefix, i);
		snprintf(hlo, sizeof hlo, "hlo:%04x", i);
		const char *p[2] = {model, hlo};
		pw_status st = pw_pg_exec(c->pg,
		                          "INSERT INTO perfwatch.series (model, hlo_fingerprint, platform, "
		                          "config, metric, unit, direction) VALUES ($1, $2, 'v6e-4', "
		                          "'decode.B8.s2048.bf16', 'tpot_p50_ms', 'ms', 'lower_is_better') "
		                          "ON CONFLICT DO NOTHING",
		                          2, p, NULL, c->err, sizeof c->err);
		if (st != PW_OK)
			return st;
	}
	return PW_OK;
}

static pw_status series_id_of(it_ctx *c, const char *key, int64_t *id)
{
	PGresult *res = NULL;
	const char *p[1] = {key};
	pw_status st = pw_pg_exec(c->pg, "SELECT series_id FROM perfwatch.series WHERE series_key = $1",
	                          1, p, &res, c->err, sizeof c->err);
	if (st != PW_OK)
		return st;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return pw_fail(PW_ERR_NOT_FOUND, c->err, sizeof c->err, "series \"%s\" not set up", key);
	}
	*id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return PW_OK;
}

static pw_status store_point_h(it_ctx *c, int64_t sid, const char *run_id, int64_t ts,
                               double value, const char *chip, const char *cell,
                               const char *model, const char *hlo, const char *harness)
{
	char ts_s[32], sid_s[32], val[40];
	snprintf(ts_s, sizeof ts_s, "%" PRId64, ts);
	snprintf(sid_s, sizeof sid_s, "%" PRId64, sid);
	snprintf(val, sizeof val, "%.17g", value);
	const char *pr[7] = {run_id, model, hlo, ts_s, chip, cell, harness};
	pw_status st = pw_pg_exec(
		c->pg,
		"INSERT INTO perfwatch.runs (run_id, repeat_index, model, model_rev, hlo_fingerprint, "
		"build_id, build_kind, compiler_cl, compiler_cl_number, platform, config, firmware, "
		"chip_set, cell, harness_version, started_at, finished_at, payload_sha256) VALUES "
		"($1, 0, $2, $2 || '@1', $3, 'xla-nightly', 'nightly', 'cl/1', 1, 'v6e-4', "
		"'decode.B8.s2048.bf16', 'tpufw-2026.05.2', $5, $6, $7, "
		"'epoch'::timestamptz + $4::bigint * interval '1 microsecond', "
		"'epoch'::timestamptz + $4::bigint * interval '1 microsecond', '\\x00') "
		"ON CONFLICT DO NOTHING",
		7, pr, NULL, c->err, sizeof c->err);
	if (st != PW_OK)
		return st;
	const char *ps[5] = {run_id, sid_s, val, ts_s, chip};
	return pw_pg_exec(
		c->pg,
		"INSERT INTO perfwatch.samples (run_id, repeat_index, metric, series_id, value, unit, "
		"measured_at, build_id, build_kind, compiler_cl_number, chip_set) VALUES ($1, 0, "
		"'tpot_p50_ms', $2, $3, 'ms', 'epoch'::timestamptz + $4::bigint * interval '1 microsecond', "
		"'xla-nightly', 'nightly', 1, $5) ON CONFLICT DO NOTHING",
		5, ps, NULL, c->err, sizeof c->err);
}

static pw_status store_point(it_ctx *c, int64_t sid, const char *run_id, int64_t ts,
                             double value, const char *chip, const char *cell, const char *model,
                             const char *hlo)
{
	return store_point_h(c, sid, run_id, ts, value, chip, cell, model, hlo, "perfbench-2.31");
}

/*
 * One extra point of series i, an hour after nightly point k: its quiet value
 * times factor, on chip set chip with harness version harness (test_first_signal.sh).
 */
static pw_status cmd_spike(it_ctx *c, const char *prefix, int i, int k, double factor,
                           const char *chip, const char *harness)
{
	char key[256], run_id[96], cell[96], model[96], hlo[32];
	series_key(key, sizeof key, prefix, i);
	snprintf(run_id, sizeof run_id, "%s-spike%d-%d", prefix, i, k);
	snprintf(cell, sizeof cell, "%s-%d", prefix, i % IT_CELLS);
	snprintf(model, sizeof model, "%s-m%d", prefix, i);
	snprintf(hlo, sizeof hlo, "hlo:%04x", i);
	int64_t sid = 0, ts = point_ts(k) + 3600LL * 1000000;
	double value = point_value(i, k, -1, 0) * factor;
	pw_status st = series_id_of(c, key, &sid);
	if (st == PW_OK)
		st = store_point_h(c, sid, run_id, ts, value, chip, cell, model, hlo, harness);
	if (st != PW_OK)
		return st;
	Perfwatch__V1__SeriesKey sk = PERFWATCH__V1__SERIES_KEY__INIT;
	sk.model = model;
	sk.hlo_fingerprint = hlo;
	sk.platform = (char *)"v6e-4";
	sk.config = (char *)"decode.B8.s2048.bf16";
	sk.metric = (char *)"tpot_p50_ms";
	Perfwatch__V1__CompilerBuild b = PERFWATCH__V1__COMPILER_BUILD__INIT;
	b.build_id = (char *)"xla-nightly";
	b.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_NIGHTLY;
	b.cl = (char *)"cl/1";
	b.cl_number = 1;
	Perfwatch__V1__SeriesPoint sp = PERFWATCH__V1__SERIES_POINT__INIT;
	sp.series_id = sid;
	sp.series_key = key;
	sp.key = &sk;
	sp.run_id = run_id;
	sp.build = &b;
	sp.value = value;
	sp.unit = (char *)"ms";
	sp.metric = PERFWATCH__V1__METRIC__METRIC_TPOT_P50_MS;
	sp.direction = PERFWATCH__V1__METRIC_DIRECTION__METRIC_DIRECTION_LOWER_IS_BETTER;
	sp.measured_unix_us = ts;
	sp.chip_set = (char *)chip;
	sp.cell = cell;
	sp.firmware = (char *)"tpufw-2026.05.2";
	sp.harness_version = (char *)harness;
	uint8_t buf[1024];
	size_t len = perfwatch__v1__series_point__pack(&sp, buf);
	st = pw_producer_produce(c->prod, PW_TOPIC_POINTS, key, strlen(key), buf, len, 5000, c->err,
	                         sizeof c->err);
	if (st == PW_OK)
		st = pw_producer_flush(c->prod, 30000, c->err, sizeof c->err);
	return st;
}

static pw_status cmd_feed(it_ctx *c, const char *prefix, int n, double from, double to,
                          int shift_cell, double shift_day)
{
	int k0 = iceil(from * IT_PER_DAY), k1 = iceil(to * IT_PER_DAY);
	int64_t *ids = calloc((size_t)n, sizeof *ids);
	if (!ids)
		return PW_ERR_NOMEM;
	pw_status st = PW_OK;
	for (int i = 0; i < n && st == PW_OK; i++) {
		char key[256];
		series_key(key, sizeof key, prefix, i);
		st = series_id_of(c, key, &ids[i]);
	}
	for (int k = k0; k < k1 && st == PW_OK; k++) {
		/* one time step: store every series' point, then publish them */
		st = pw_pg_begin(c->pg, c->err, sizeof c->err);
		for (int i = 0; i < n && st == PW_OK; i++) {
			char run_id[96], chip[32], cell[96], model[96], hlo[32];
			snprintf(run_id, sizeof run_id, "%s-r%d-%d", prefix, i, k);
			snprintf(chip, sizeof chip, "pinned-c%d-%d", i % IT_CELLS, k % 3);
			snprintf(cell, sizeof cell, "%s-%d", prefix, i % IT_CELLS);
			snprintf(model, sizeof model, "%s-m%d", prefix, i);
			snprintf(hlo, sizeof hlo, "hlo:%04x", i);
			st = store_point(c, ids[i], run_id, point_ts(k),
			                 point_value(i, k, shift_cell, shift_day), chip, cell, model, hlo);
		}
		if (st == PW_OK)
			st = pw_pg_commit(c->pg, c->err, sizeof c->err);
		else
			pw_pg_rollback(c->pg, NULL, 0);
		for (int i = 0; i < n && st == PW_OK; i++) {
			char key[256], run_id[96], chip[32], cell[96], model[96], hlo[32];
			series_key(key, sizeof key, prefix, i);
			snprintf(run_id, sizeof run_id, "%s-r%d-%d", prefix, i, k);
			snprintf(chip, sizeof chip, "pinned-c%d-%d", i % IT_CELLS, k % 3);
			snprintf(cell, sizeof cell, "%s-%d", prefix, i % IT_CELLS);
			snprintf(model, sizeof model, "%s-m%d", prefix, i);
			snprintf(hlo, sizeof hlo, "hlo:%04x", i);
			Perfwatch__V1__SeriesKey sk = PERFWATCH__V1__SERIES_KEY__INIT;
			sk.model = model;
			sk.hlo_fingerprint = hlo;
			sk.platform = (char *)"v6e-4";
			sk.config = (char *)"decode.B8.s2048.bf16";
			sk.metric = (char *)"tpot_p50_ms";
			Perfwatch__V1__CompilerBuild b = PERFWATCH__V1__COMPILER_BUILD__INIT;
			b.build_id = (char *)"xla-nightly";
			b.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_NIGHTLY;
			b.cl = (char *)"cl/1";
			b.cl_number = 1;
			Perfwatch__V1__SeriesPoint sp = PERFWATCH__V1__SERIES_POINT__INIT;
			sp.series_id = ids[i];
			sp.series_key = key;
			sp.key = &sk;
			sp.run_id = run_id;
			sp.build = &b;
			sp.value = point_value(i, k, shift_cell, shift_day);
			sp.unit = (char *)"ms";
			sp.metric = PERFWATCH__V1__METRIC__METRIC_TPOT_P50_MS;
			sp.direction = PERFWATCH__V1__METRIC_DIRECTION__METRIC_DIRECTION_LOWER_IS_BETTER;
			sp.measured_unix_us = point_ts(k);
			sp.chip_set = chip;
			sp.cell = cell;
			sp.firmware = (char *)"tpufw-2026.05.2";
			sp.harness_version = (char *)"perfbench-2.31";
			uint8_t buf[1024];
			size_t len = perfwatch__v1__series_point__pack(&sp, buf);
			st = pw_producer_produce(c->prod, PW_TOPIC_POINTS, key, strlen(key), buf, len, 5000,
			                         c->err, sizeof c->err);
		}
		pw_producer_poll(c->prod, 0);
	}
	if (st == PW_OK)
		st = pw_producer_flush(c->prod, 30000, c->err, sizeof c->err);
	free(ids);
	return st;
}

static pw_status cmd_fleet(it_ctx *c, const char *prefix, const char *event_id, int cell,
                           double day)
{
	char cellname[96], reason[160];
	snprintf(cellname, sizeof cellname, "%s-%d", prefix, cell);
	snprintf(reason, sizeof reason, "cell %s recabled for ICI v2", cellname);
	char *cells[1] = {cellname};
	Perfwatch__V1__FleetChangeEvent ev = PERFWATCH__V1__FLEET_CHANGE_EVENT__INIT;
	ev.event_id = (char *)event_id;
	ev.occurred_unix_us = IT_T0_US + (int64_t)(day * (double)IT_DAY_US);
	ev.kind = PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_RECABLING;
	ev.reason = reason;
	ev.source = (char *)"it_baseliner";
	ev.n_cells = 1;
	ev.cells = cells;
	uint8_t buf[1024];
	size_t len = perfwatch__v1__fleet_change_event__pack(&ev, buf);
	pw_status st = pw_producer_produce(c->prod, PW_TOPIC_FLEET_CHANGES, event_id, strlen(event_id),
	                                   buf, len, 5000, c->err, sizeof c->err);
	if (st == PW_OK)
		st = pw_producer_flush(c->prod, 30000, c->err, sizeof c->err);
	return st;
}

static pw_status cmd_expect(const char *prefix, int n, double to, int shift_cell,
                            double shift_day, int max_window)
{
	int k1 = iceil(to * IT_PER_DAY);
	double *w = calloc((size_t)k1 + 1, sizeof *w);
	if (!w)
		return PW_ERR_NOMEM;
	for (int i = 0; i < n; i++) {
		if (i == IT_NOISY)
			continue;
		int start = i % IT_CELLS == shift_cell ? iceil(shift_day * IT_PER_DAY) : 0;
		int m = 0;
		for (int k = k1 - 1; k >= start && m < max_window; k--) {
			if (i == IT_OUTLIER_SERIES && k == IT_OUTLIER_POINT)
				continue;
			w[m++] = point_value(i, k, shift_cell, shift_day);
		}
		qsort(w, (size_t)m, sizeof *w, cmp_double);
		double med = m % 2 ? w[m / 2] : 0.5 * (w[m / 2 - 1] + w[m / 2]);
		char key[256];
		series_key(key, sizeof key, prefix, i);
		printf("%s %.12g\n", key, med);
	}
	free(w);
	return PW_OK;
}

int main(int argc, char **argv)
{
	it_ctx c;
	memset(&c, 0, sizeof c);
	pw_log_init(&c.lg, "it_baseliner", PW_LOG_WARN);
	pw_status st = PW_ERR_INVALID;
	if (argc == 4 && strcmp(argv[1], "setup") == 0) {
		st = it_connect(&c, true, false);
		if (st == PW_OK)
			st = cmd_setup(&c, argv[2], atoi(argv[3]));
	} else if (argc == 8 && strcmp(argv[1], "feed") == 0) {
		st = it_connect(&c, true, true);
		if (st == PW_OK)
			st = cmd_feed(&c, argv[2], atoi(argv[3]), atof(argv[4]), atof(argv[5]),
			              atoi(argv[6]), atof(argv[7]));
	} else if (argc == 6 && strcmp(argv[1], "fleet") == 0) {
		st = it_connect(&c, false, true);
		if (st == PW_OK)
			st = cmd_fleet(&c, argv[2], argv[3], atoi(argv[4]), atof(argv[5]));
	} else if (argc == 8 && strcmp(argv[1], "expect") == 0) {
		st = cmd_expect(argv[2], atoi(argv[3]), atof(argv[4]), atoi(argv[5]), atof(argv[6]),
		                atoi(argv[7]));
	} else if (argc == 8 && strcmp(argv[1], "spike") == 0) {
		st = it_connect(&c, true, true);
		if (st == PW_OK)
			st = cmd_spike(&c, argv[2], atoi(argv[3]), atoi(argv[4]), atof(argv[5]), argv[6],
			               argv[7]);
	} else if (argc == 4 && strcmp(argv[1], "key") == 0) {
		char key[256];
		series_key(key, sizeof key, argv[2], atoi(argv[3]));
		printf("%s\n", key);
		st = PW_OK;
	} else {
		fprintf(stderr, "usage: see the comment at the top of it_baseliner.c\n");
		return 2;
	}
	if (st != PW_OK)
		fprintf(stderr, "it_baseliner: %s: %s\n", pw_strerror(st), c.err);
	pw_producer_free(c.prod);
	pw_pg_free(c.pg);
	return st == PW_OK ? 0 : 1;
}
