/*
 * cmd_changepoints.c: `perfwatch changepoints [--direction lower|higher] SERIES`,
 * the level shifts of one series, one JSON object a line.
 *
 * Reads the series with input.c's reader and runs the watcher's default
 * detector (pw_changepoint.h, robust PELT with the level-shift filter), so an
 * operator sees exactly the changepoints the watcher would record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "by_series.h"
#include "pw_changepoint.h"
#include "pw_drift.h"

typedef struct cp_ctx {
	int higher;
	const char *path;
	pw_cli_vec flat; /* --by-series: the series' values, reused */
} cp_ctx;

/* Detects and prints one series' changepoints (series NULL: one-series form). */
static int detect_one(const char *series, const pw_cli_vec *x, const cp_ctx *cx)
{
	if (x->n > PW_CLI_CHANGEPOINTS_MAX) {
		fprintf(stderr,
		        "perfwatch: changepoints: %s: %zu numbers, over the limit of %d (the detector "
		        "is quadratic on a long series without changepoints): split the series\n",
		        series ? series : cx->path, x->n, PW_CLI_CHANGEPOINTS_MAX);
		return PW_CLI_EXIT_USAGE;
	}
	int rc = PW_CLI_EXIT_FAIL;
	char err[256];
	pw_cp_detector *d = NULL;
	pw_changepoint *cps = NULL;
	bool *keep = NULL;
	size_t cap = x->n / 2 + 1, k = 0;
	if (pw_cp_detector_new(NULL, x->n, &d, err, sizeof err) != PW_OK) {
		fprintf(stderr, "perfwatch: changepoints: %s\n", err);
		return rc;
	}
	cps = calloc(cap, sizeof *cps);
	if (!cps) {
		fprintf(stderr, "perfwatch: changepoints: out of memory\n");
		goto out_det;
	}
	if (pw_cp_detect(d, x->v, x->n, cps, cap, &k, err, sizeof err) != PW_OK) {
		fprintf(stderr, "perfwatch: changepoints: %s%s%s: %s\n", cx->path,
		        series ? ": series " : "", series ? series : "", err);
		rc = PW_CLI_EXIT_USAGE;
		goto out_cps;
	}
	/* Steps or a drift, by model comparison (pw_drift_decide): a trend is
	 * one finding, and the steps the detector cut it into are not printed
	 * (docs/changepoints.md, "Steps or a drift"). */
	size_t shown = k < cap ? k : cap;
	keep = malloc((shown ? shown : 1) * sizeof *keep);
	if (!keep) {
		fprintf(stderr, "perfwatch: changepoints: out of memory\n");
		goto out_cps;
	}
	pw_drift dr;
	if (pw_drift_decide(x->v, x->n, cps, shown, NULL, &dr, keep) != PW_OK) {
		fprintf(stderr, "perfwatch: changepoints: %s: drift analysis failed\n", cx->path);
		goto out_cps;
	}
	if (dr.found) {
		bool up = dr.rate > 0.0;
		printf("{");
		if (series) {
			printf("\"series\":");
			pw_cli_json_string(stdout, series);
			printf(",");
		}
		printf("\"index\":%zu,\"before\":", dr.start);
		pw_cli_json_number(stdout, dr.level_before);
		printf(",\"after\":");
		pw_cli_json_number(stdout, dr.level_after);
		printf(",\"delta_pct\":");
		pw_cli_json_number(stdout, dr.total_pct);
		printf(",\"p\":null,\"noise\":");
		pw_cli_json_number(stdout, dr.noise);
		printf(",\"kind\":\"%s\",\"shape\":\"drift\",\"start\":%zu,\"rate_pct_per_point\":",
		       up != (cx->higher == 1) ? "regression" : "improvement", dr.start);
		pw_cli_json_number(stdout, dr.rate_pct);
		printf(",\"total_pct\":");
		pw_cli_json_number(stdout, dr.total_pct);
		printf(",\"end\":%zu}\n", dr.end);
	}
	for (size_t j = 0; j < shown; j++) {
		const pw_changepoint *c = &cps[j];
		bool up = c->after > c->before;
		if (!keep[j])
			continue;
		printf("{");
		if (series) {
			printf("\"series\":");
			pw_cli_json_string(stdout, series);
			printf(",");
		}
		printf("\"index\":%zu,\"before\":", c->index);
		pw_cli_json_number(stdout, c->before);
		printf(",\"after\":");
		pw_cli_json_number(stdout, c->after);
		printf(",\"delta_pct\":");
		pw_cli_json_number(stdout, 100.0 * c->rel_change);
		printf(",\"p\":");
		pw_cli_json_number(stdout, c->p);
		printf(",\"noise\":");
		pw_cli_json_number(stdout, c->noise);
		printf(",\"kind\":\"%s\",\"shape\":\"step\"}\n",
		       up != (cx->higher == 1) ? "regression" : "improvement");
	}
	rc = PW_CLI_EXIT_OK;
out_cps:
	free(keep);
	free(cps);
out_det:
	pw_cp_detector_free(d);
	return rc;
}

/* --by-series: each run is one value of the series. */
static int detect_series(const char *series, pw_cli_vec *runs, size_t nruns, void *arg)
{
	cp_ctx *cx = arg;
	if (cx->flat.cap < nruns) {
		double *p = realloc(cx->flat.v, nruns * sizeof *p);
		if (!p) {
			fprintf(stderr, "perfwatch: changepoints: out of memory\n");
			return PW_CLI_EXIT_FAIL;
		}
		cx->flat.v = p;
		cx->flat.cap = nruns;
	}
	for (size_t i = 0; i < nruns; i++) {
		if (runs[i].n != 1) {
			fprintf(stderr,
			        "perfwatch: %s: series \"%s\", value %zu: one number a line, not %zu\n",
			        cx->path, series, i + 1, runs[i].n);
			return PW_CLI_EXIT_USAGE;
		}
		cx->flat.v[i] = runs[i].v[0];
	}
	cx->flat.n = nruns;
	return detect_one(series, &cx->flat, cx);
}

int pw_cmd_changepoints(int argc, char **argv)
{
	bool by_series = pw_cli_take_flag(&argc, argv, "--by-series");
	cp_ctx cx = {0};
	int rc = pw_cli_parse_direction_file(argc, argv, "SERIES", &cx.higher, &cx.path);
	if (rc >= 0)
		return rc;
	if (by_series) {
		rc = pw_cli_read_by_series(cx.path, detect_series, &cx);
		pw_cli_vec_release(&cx.flat);
		return rc;
	}
	pw_cli_vec x;
	if (pw_cli_read_numbers(cx.path, &x) != 0)
		return PW_CLI_EXIT_USAGE;
	rc = detect_one(NULL, &x, &cx);
	pw_cli_vec_release(&x);
	return rc;
}
