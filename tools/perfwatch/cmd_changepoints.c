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
#include "pw_changepoint.h"

int pw_cmd_changepoints(int argc, char **argv)
{
	int higher;
	const char *path;
	int rc = pw_cli_parse_direction_file(argc, argv, "SERIES", &higher, &path);
	if (rc >= 0)
		return rc;

	pw_cli_vec x;
	if (pw_cli_read_numbers(path, &x) != 0)
		return PW_CLI_EXIT_USAGE;

	if (x.n > PW_CLI_CHANGEPOINTS_MAX) {
		fprintf(stderr,
		        "perfwatch: changepoints: %s: %zu numbers, over the limit of %d (the detector "
		        "is quadratic on a long series without changepoints): split the series\n",
		        path, x.n, PW_CLI_CHANGEPOINTS_MAX);
		pw_cli_vec_release(&x);
		return PW_CLI_EXIT_USAGE;
	}
	rc = PW_CLI_EXIT_FAIL;
	char err[256];
	pw_cp_detector *d = NULL;
	pw_changepoint *cps = NULL;
	size_t cap = x.n / 2 + 1, k = 0;
	if (pw_cp_detector_new(NULL, x.n, &d, err, sizeof err) != PW_OK) {
		fprintf(stderr, "perfwatch: changepoints: %s\n", err);
		goto out_vec;
	}
	cps = calloc(cap, sizeof *cps);
	if (!cps) {
		fprintf(stderr, "perfwatch: changepoints: out of memory\n");
		goto out_det;
	}
	if (pw_cp_detect(d, x.v, x.n, cps, cap, &k, err, sizeof err) != PW_OK) {
		fprintf(stderr, "perfwatch: changepoints: %s: %s\n", path, err);
		goto out_cps;
	}
	for (size_t j = 0; j < k && j < cap; j++) {
		const pw_changepoint *c = &cps[j];
		bool up = c->after > c->before;
		printf("{\"index\":%zu,\"before\":", c->index);
		pw_cli_json_number(stdout, c->before);
		printf(",\"after\":");
		pw_cli_json_number(stdout, c->after);
		printf(",\"delta_pct\":");
		pw_cli_json_number(stdout, 100.0 * c->rel_change);
		printf(",\"p\":");
		pw_cli_json_number(stdout, c->p);
		printf(",\"noise\":");
		pw_cli_json_number(stdout, c->noise);
		printf(",\"kind\":\"%s\"}\n", up != (higher == 1) ? "regression" : "improvement");
	}
	rc = PW_CLI_EXIT_OK;
out_cps:
	free(cps);
out_det:
	pw_cp_detector_free(d);
out_vec:
	pw_cli_vec_release(&x);
	return rc;
}
