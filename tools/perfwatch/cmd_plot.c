/*
 * cmd_plot.c: `perfwatch series plot SERIES [-o FILE.svg] [--last N]`, the
 * picture of a nightly series for on-call.
 *
 * Reads from PostgreSQL (PW_PG_DSN, or --dsn): the series' nightly points
 * (perfwatch.samples), the band of its latest baseline (latest_baselines),
 * the changepoints the watcher stored (perfwatch.changepoints) and the fleet
 * changes that concern it (those that froze it or annotate one of its
 * changepoints, and those in its time range whose selectors match the
 * environment of its latest run), and hands them to pw_plot.c's
 * pw_plot_svg. cmd_series.c dispatches `series plot` here (argv[0] is
 * "plot"); `series show` is its own.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "cli.h"
#include "pw_limits.h"
#include "pw_plot.h"

#define PLOT_DEFAULT_DSN "host=127.0.0.1 port=25432 dbname=perfwatch user=perfwatch"

static int plot_usage(const char *why)
{
	if (why)
		fprintf(stderr, "perfwatch: series plot: %s\n", why);
	fprintf(stderr, "usage: perfwatch series plot SERIES [-o FILE.svg] [--last N] [--dsn DSN]\n"
	                "  SERIES is model/hlo_fingerprint/platform/config/metric; the SVG goes to\n"
	                "  FILE.svg or standard output; N nightlies at most (default 400)\n");
	return PW_CLI_EXIT_USAGE;
}

static PGresult *query(PGconn *c, const char *sql, int n, const char *const *params)
{
	PGresult *r = PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		fprintf(stderr, "perfwatch: series plot: query failed: %s", PQerrorMessage(c));
		PQclear(r);
		return NULL;
	}
	return r;
}

#define TS_OUT(c) "(extract(epoch from " c ") * 1000000)::bigint"

int pw_cmd_series_plot(int argc, char **argv)
{
	const char *key = NULL, *path = NULL, *dsn = getenv("PW_PG_DSN");
	long last = 400;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (strcmp(argv[i], "--dsn") == 0 && i + 1 < argc)
			dsn = argv[++i];
		else if (strcmp(argv[i], "--last") == 0 && i + 1 < argc) {
			char *end;
			last = strtol(argv[++i], &end, 10);
			if (*end || last < 1 || last > 100000)
				return plot_usage("--last takes a number of nightlies from 1 to 100000");
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			plot_usage(NULL);
			return PW_CLI_EXIT_OK;
		} else if (argv[i][0] == '-' && argv[i][1])
			return plot_usage("unknown option");
		else if (key)
			return plot_usage("one series at a time");
		else
			key = argv[i];
	}
	if (!key)
		return plot_usage("which series?");
	int id_rc = pw_cli_check_id("series key", key, PW_SERIES_KEY_MAX - 1);
	if (id_rc >= 0)
		return id_rc;

	int rc = PW_CLI_EXIT_FAIL;
	PGresult *rs = NULL, *rp = NULL, *rb = NULL, *rc_ = NULL, *rm = NULL;
	pw_plot_point *pts = NULL;
	pw_plot_changepoint *cps = NULL;
	pw_plot_mark *marks = NULL;
	FILE *out = NULL;
	PGconn *c = PQconnectdb(dsn && *dsn ? dsn : PLOT_DEFAULT_DSN);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "perfwatch: series plot: cannot connect to PostgreSQL: %s",
		        PQerrorMessage(c));
		goto out;
	}
	rs = query(c, "SELECT series_id, unit FROM perfwatch.series WHERE series_key = $1", 1,
	           (const char *const[]){key});
	if (!rs)
		goto out;
	if (PQntuples(rs) != 1) {
		fprintf(stderr, "perfwatch: series plot: series \"%s\" not found\n", key);
		rc = PW_CLI_EXIT_USAGE;
		goto out;
	}
	const char *id = PQgetvalue(rs, 0, 0);
	char lim[32];
	snprintf(lim, sizeof lim, "%ld", last);
	rp = query(c,
	           "SELECT ts, value FROM (SELECT " TS_OUT("measured_at") " AS ts, value, measured_at"
	           "  FROM perfwatch.samples WHERE series_id = $1 AND build_kind = 'nightly'"
	           "  ORDER BY measured_at DESC LIMIT $2) p ORDER BY measured_at",
	           2, (const char *const[]){id, lim});
	rb = rp ? query(c, "SELECT median, band_lo, band_hi FROM perfwatch.latest_baselines"
	                   " WHERE series_id = $1", 1, (const char *const[]){id})
	        : NULL;
	rc_ = rb ? query(c, "SELECT " TS_OUT("c.shift_at") ", c.last_clean_cl, c.first_shifted_cl,"
	                    " c.delta_pct, c.direction, c.annotation,"
	                    " coalesce((SELECT " TS_OUT("max(s.measured_at)") " FROM perfwatch.samples s"
	                    "            WHERE s.series_id = c.series_id"
	                    "              AND s.build_id = c.last_clean_build_id), 0)"
	                    " FROM perfwatch.changepoints c WHERE c.series_id = $1 ORDER BY c.shift_at",
	                    1, (const char *const[]){id})
	         : NULL;
	rm = rc_ ? query(c,
	                 "WITH env AS (SELECT r.platform, r.chip_set, r.cell, r.firmware, r.harness_version"
	                 "   FROM perfwatch.samples s JOIN perfwatch.runs r USING (run_id, repeat_index)"
	                 "  WHERE s.series_id = $1 ORDER BY s.measured_at DESC LIMIT 1),"
	                 " span AS (SELECT min(measured_at) AS lo, max(measured_at) AS hi"
	                 "   FROM perfwatch.samples WHERE series_id = $1)"
	                 " SELECT f.event_id, " TS_OUT("f.occurred_at") " FROM perfwatch.fleet_changes f"
	                 "  WHERE f.event_id IN (SELECT event_id FROM perfwatch.freezes WHERE series_id = $1"
	                 "                       UNION SELECT fleet_event_id FROM perfwatch.changepoints"
	                 "                        WHERE series_id = $1)"
	                 "     OR EXISTS (SELECT 1 FROM env, span WHERE f.occurred_at BETWEEN span.lo AND span.hi"
	                 "          AND (cardinality(f.platforms) = 0 OR env.platform = ANY (f.platforms))"
	                 "          AND (cardinality(f.chip_sets) = 0 OR env.chip_set = ANY (f.chip_sets))"
	                 "          AND (cardinality(f.cells) = 0 OR env.cell = ANY (f.cells))"
	                 "          AND (cardinality(f.firmware) = 0 OR env.firmware = ANY (f.firmware))"
	                 "          AND (cardinality(f.harness_versions) = 0"
	                 "               OR env.harness_version = ANY (f.harness_versions)))"
	                 "  ORDER BY f.occurred_at",
	                 1, (const char *const[]){id})
	         : NULL;
	if (!rm)
		goto out;

	size_t np = (size_t)PQntuples(rp), nc = (size_t)PQntuples(rc_), nm = (size_t)PQntuples(rm);
	pts = calloc(np ? np : 1, sizeof *pts);
	cps = calloc(nc ? nc : 1, sizeof *cps);
	marks = calloc(nm ? nm : 1, sizeof *marks);
	if (!pts || !cps || !marks) {
		fprintf(stderr, "perfwatch: series plot: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < np; i++) {
		pts[i].ts_us = strtoll(PQgetvalue(rp, (int)i, 0), NULL, 10);
		pts[i].value = strtod(PQgetvalue(rp, (int)i, 1), NULL);
	}
	for (size_t i = 0; i < nc; i++) {
		int r = (int)i;
		cps[i].ts_us = strtoll(PQgetvalue(rc_, r, 0), NULL, 10);
		cps[i].cl_lo = PQgetvalue(rc_, r, 1);
		cps[i].cl_hi = PQgetvalue(rc_, r, 2);
		cps[i].delta_pct = strtod(PQgetvalue(rc_, r, 3), NULL);
		cps[i].regression = strcmp(PQgetvalue(rc_, r, 4), "regression") == 0;
		cps[i].annotation = PQgetvalue(rc_, r, 5);
		cps[i].last_clean_us = strtoll(PQgetvalue(rc_, r, 6), NULL, 10);
	}
	for (size_t i = 0; i < nm; i++) {
		marks[i].event_id = PQgetvalue(rm, (int)i, 0);
		marks[i].ts_us = strtoll(PQgetvalue(rm, (int)i, 1), NULL, 10);
	}
	pw_plot_series s = {
		.title = key,
		.unit = PQgetvalue(rs, 0, 1),
		.points = pts,
		.npoints = np,
		.changepoints = cps,
		.nchangepoints = nc,
		.marks = marks,
		.nmarks = nm,
	};
	if (PQntuples(rb) == 1) {
		s.has_band = true;
		s.median = strtod(PQgetvalue(rb, 0, 0), NULL);
		s.band_lo = strtod(PQgetvalue(rb, 0, 1), NULL);
		s.band_hi = strtod(PQgetvalue(rb, 0, 2), NULL);
	}
	out = path ? fopen(path, "w") : stdout;
	if (!out) {
		fprintf(stderr, "perfwatch: series plot: cannot write \"%s\"\n", path);
		goto out;
	}
	char err[256];
	pw_status st = pw_plot_svg(out, &s, 960, 420, err, sizeof err);
	if (st != PW_OK) {
		fprintf(stderr, "perfwatch: series plot: %s\n", err);
		rc = st == PW_ERR_INSUFFICIENT ? PW_CLI_EXIT_USAGE : PW_CLI_EXIT_FAIL;
		goto out;
	}
	rc = PW_CLI_EXIT_OK;
out:
	if (out && out != stdout && fclose(out) != 0 && rc == PW_CLI_EXIT_OK) {
		fprintf(stderr, "perfwatch: series plot: writing \"%s\" failed\n", path);
		rc = PW_CLI_EXIT_FAIL;
	}
	free(pts);
	free(cps);
	free(marks);
	PQclear(rs);
	PQclear(rp);
	PQclear(rb);
	PQclear(rc_);
	PQclear(rm);
	PQfinish(c);
	return rc;
}
