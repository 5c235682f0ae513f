/*
 * cmd_compare.c: `perfwatch compare [--direction lower|higher] [--mde PCT]
 * [--practical PCT] [--noise-k K] [--alpha A] BASE CAND`, the two-sample verdict of one series on the command line.
 *
 * Only argument parsing and output live here: the files are read by input.c's
 * readers and the decision is pw_stats_compare() in common/pw_stats.c, the
 * same function the release gate calls, so an operator who re-runs a gate
 * comparison by hand gets the gate's answer. The output is one JSON object on
 * one line; the fields are described in docs/statistics.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pw_stats.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: perfwatch compare [--direction lower|higher] [--mde PCT] "
	             "[--practical PCT] [--noise-k K] [--alpha A] BASE CAND\n");
}

/* Parses a finite double in [lo, hi) (hi exclusive when open_hi) for option opt. */
static int parse_number(const char *opt, const char *s, double lo, double hi, bool open_hi,
                        double *out)
{
	char *end;
	errno = 0;
	double v = s ? strtod(s, &end) : 0.0;
	if (!s || end == s || *end != '\0' || errno == ERANGE || !(v >= lo) ||
	    (open_hi ? !(v < hi) : !(v <= hi))) {
		fprintf(stderr, "perfwatch: %s needs a number in [%g, %g%s, not \"%s\"\n", opt, lo,
		        hi, open_hi ? ")" : "]", s ? s : "");
		return -1;
	}
	*out = v;
	return 0;
}

static void json_field(FILE *out, const char *name, double v, bool *first)
{
	fprintf(out, "%s\"%s\":", *first ? "" : ",", name);
	pw_cli_json_number(out, v);
	*first = false;
}

static void print_result(FILE *out, const pw_compare_opts *o, const pw_compare_result *r)
{
	bool first = false;
	fprintf(out, "{\"verdict\":\"%s\"", pw_compare_verdict_name(r->verdict));
	json_field(out, "delta_pct", r->delta_pct, &first);
	json_field(out, "p", r->p, &first);
	fprintf(out, ",\"p_method\":\"mann-whitney two-sided %s\"",
	        r->mwu.exact ? "exact" : "normal");
	fprintf(out, ",\"effect_filter_passed\":%s", r->effect_filter_passed ? "true" : "false");
	fprintf(out, ",\"n_base\":%zu,\"n_cand\":%zu", r->n_base, r->n_cand);
	fprintf(out, ",\"direction\":\"%s\"",
	        o->direction == PW_COMPARE_HIGHER_IS_BETTER ? "higher" : "lower");
	json_field(out, "median_base", r->median_base, &first);
	json_field(out, "median_cand", r->median_cand, &first);
	json_field(out, "mad_base", r->mad_base, &first);
	json_field(out, "mad_cand", r->mad_cand, &first);
	json_field(out, "sigma_pct", r->sigma_pct, &first);
	json_field(out, "two_sigma_pct", r->two_sigma_pct, &first);
	json_field(out, "mde_pct", r->mde_pct, &first);
	json_field(out, "threshold_pct", r->threshold_pct, &first);
	json_field(out, "alpha", r->alpha, &first);
	json_field(out, "u", r->mwu.u, &first);
	json_field(out, "z", r->mwu.z, &first);
	json_field(out, "welch_t", r->welch.t, &first);
	json_field(out, "welch_df", r->welch.df, &first);
	json_field(out, "welch_p", r->welch.p, &first);
	json_field(out, "hl_shift", r->hl.shift, &first);
	json_field(out, "hl_lo", r->hl.lo, &first);
	json_field(out, "hl_hi", r->hl.hi, &first);
	json_field(out, "hl_level", r->hl.level, &first);
	json_field(out, "effect_pct", r->effect_pct, &first);
	json_field(out, "practical_pct", r->practical_pct, &first);
	json_field(out, "noise_floor_pct", r->noise_floor_pct, &first);
	fputs("}\n", out);
}

int pw_cmd_compare(int argc, char **argv)
{
	pw_compare_opts opts;
	pw_compare_opts_init(&opts);
	const char *files[2];
	int nfiles = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return PW_CLI_EXIT_OK;
		}
		if (strcmp(a, "--direction") == 0 || strcmp(a, "--mde") == 0 ||
		    strcmp(a, "--alpha") == 0 || strcmp(a, "--practical") == 0 ||
		    strcmp(a, "--noise-k") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "perfwatch: %s needs a value\n", a);
				usage(stderr);
				return PW_CLI_EXIT_USAGE;
			}
			const char *v = argv[++i];
			if (strcmp(a, "--direction") == 0) {
				int d = pw_cli_parse_direction(v);
				if (d < 0)
					return PW_CLI_EXIT_USAGE;
				opts.direction = d ? PW_COMPARE_HIGHER_IS_BETTER : PW_COMPARE_LOWER_IS_BETTER;
			} else if (strcmp(a, "--mde") == 0) {
				if (parse_number(a, v, 0.0, 1000.0, false, &opts.mde_pct) != 0)
					return PW_CLI_EXIT_USAGE;
			} else if (strcmp(a, "--practical") == 0) {
				if (parse_number(a, v, 0.0, 1000.0, false, &opts.practical_pct) != 0)
					return PW_CLI_EXIT_USAGE;
			} else if (strcmp(a, "--noise-k") == 0) {
				if (parse_number(a, v, 0.0, 100.0, false, &opts.noise_k) != 0)
					return PW_CLI_EXIT_USAGE;
			} else {
				if (parse_number(a, v, 1e-12, 1.0, true, &opts.alpha) != 0)
					return PW_CLI_EXIT_USAGE;
			}
			continue;
		}
		if (a[0] == '-' && a[1] != '\0') {
			fprintf(stderr, "perfwatch: compare: unknown option \"%s\"\n", a);
			usage(stderr);
			return PW_CLI_EXIT_USAGE;
		}
		if (nfiles == 2) {
			fprintf(stderr, "perfwatch: compare: too many files (\"%s\")\n", a);
			usage(stderr);
			return PW_CLI_EXIT_USAGE;
		}
		files[nfiles++] = a;
	}
	if (nfiles != 2) {
		usage(stderr);
		return PW_CLI_EXIT_USAGE;
	}
	if (strcmp(files[0], "-") == 0 && strcmp(files[1], "-") == 0) {
		fprintf(stderr, "perfwatch: compare: BASE and CAND cannot both be stdin\n");
		return PW_CLI_EXIT_USAGE;
	}

	int rc = PW_CLI_EXIT_USAGE;
	pw_cli_vec base = {0}, cand = {0};
	if (pw_cli_read_numbers(files[0], &base) != 0)
		goto out;
	if (pw_cli_read_numbers(files[1], &cand) != 0)
		goto release_base;

	pw_compare_result r;
	pw_status st = pw_stats_compare(base.v, base.n, cand.v, cand.n, &opts, NULL, &r);
	/*
	 * The readers let only finite numbers through and the options are checked
	 * above, so the one invalid input left is a zero baseline median.
	 */
	if (st == PW_ERR_INVALID || st == PW_ERR_INSUFFICIENT) {
		fprintf(stderr, "perfwatch: compare \"%s\" \"%s\": %s\n", files[0], files[1],
		        st == PW_ERR_INVALID ? "baseline median is zero: relative change undefined"
		                             : pw_strerror(st));
		rc = PW_CLI_EXIT_USAGE;
		goto release_cand;
	}
	if (st != PW_OK) {
		fprintf(stderr, "perfwatch: compare: %s\n", pw_strerror(st));
		rc = PW_CLI_EXIT_FAIL;
		goto release_cand;
	}
	print_result(stdout, &opts, &r);
	rc = PW_CLI_EXIT_OK;
release_cand:
	pw_cli_vec_release(&cand);
release_base:
	pw_cli_vec_release(&base);
out:
	return rc;
}
