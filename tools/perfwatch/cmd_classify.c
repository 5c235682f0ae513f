/*
 * cmd_classify.c: `perfwatch classify [--direction lower|higher] RUNS`, the
 * verdict on the newest run of a series against its recent history.
 *
 * Reads one run a line (samples separated by spaces) with input.c's reader and
 * calls pw_classify with its defaults, the same call the services make;
 * prints one JSON object: verdict, delta_pct, reason and the model it used.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "by_series.h"
#include "pw_classify.h"

typedef struct classify_ctx {
	int higher;
	const char *path;
} classify_ctx;

/* Classifies one series' runs and prints its JSON line (series NULL: one-series form). */
static int classify_one(const char *series, pw_cli_vec *vecs, size_t nruns, void *arg)
{
	const classify_ctx *cx = arg;
	int rc = PW_CLI_EXIT_FAIL;
	pw_cls_run *runs = calloc(nruns ? nruns : 1, sizeof *runs);
	if (!runs) {
		fprintf(stderr, "perfwatch: classify: out of memory\n");
		return rc;
	}
	for (size_t r = 0; r < nruns; r++) {
		runs[r].v = vecs[r].v;
		runs[r].n = vecs[r].n;
	}
	pw_cls_params p;
	pw_cls_params_default(&p);
	p.higher_is_better = cx->higher == 1;
	pw_cls_result res;
	char err[256];
	pw_status st = pw_classify(&p, runs, nruns, &res, err, sizeof err);
	if (st != PW_OK) {
		fprintf(stderr, "perfwatch: %s%s%s: %s\n", cx->path, series ? ": series " : "",
		        series ? series : "", err);
		rc = st == PW_ERR_NOMEM ? PW_CLI_EXIT_FAIL : PW_CLI_EXIT_USAGE;
		goto out_runs;
	}
	printf("{");
	if (series) {
		printf("\"series\":");
		pw_cli_json_string(stdout, series);
		printf(",");
	}
	printf("\"verdict\":\"%s\",\"delta_pct\":", pw_cls_verdict_name(res.verdict));
	pw_cli_json_number(stdout, res.delta_pct);
	printf(",\"reason\":");
	pw_cli_json_string(stdout, res.reason);
	printf(",\"p\":");
	pw_cli_json_number(stdout, res.p);
	printf(",\"history_runs\":%zu,\"history_median\":", res.hist_runs);
	pw_cli_json_number(stdout, res.hist_median);
	printf(",\"history_noise\":");
	pw_cli_json_number(stdout, res.hist_noise);
	printf(",\"history_resid_noise\":");
	pw_cli_json_number(stdout, res.hist_resid_noise);
	printf(",\"trend_pct\":");
	pw_cli_json_number(stdout, res.trend_pct);
	printf(",\"drift\":%s}\n", res.drift ? "true" : "false");
	rc = PW_CLI_EXIT_OK;
out_runs:
	free(runs);
	return rc;
}

int pw_cmd_classify(int argc, char **argv)
{
	bool by_series = pw_cli_take_flag(&argc, argv, "--by-series");
	classify_ctx cx;
	int rc = pw_cli_parse_direction_file(argc, argv, "RUNS", &cx.higher, &cx.path);
	if (rc >= 0)
		return rc;
	if (by_series)
		return pw_cli_read_by_series(cx.path, classify_one, &cx);

	pw_cli_vec *vecs = NULL;
	size_t nruns = 0;
	if (pw_cli_read_runs(cx.path, &vecs, &nruns) != 0)
		return PW_CLI_EXIT_USAGE;
	rc = classify_one(NULL, vecs, nruns, &cx);
	for (size_t r = 0; r < nruns; r++)
		pw_cli_vec_release(&vecs[r]);
	free(vecs);
	return rc;
}
