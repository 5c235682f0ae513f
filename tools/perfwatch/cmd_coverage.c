/*
 * cmd_coverage.c: `perfwatch coverage [--week YYYY-MM-DD] [--text|--json]`,
 * the planner's coverage per chip-hour for one week (docs/planner.md, seed
 * §5) from perfwatch.plan_weeks (migration 0048): the spend the week's RC
 * gated, the models measured in the 28 days to the week's end, and the
 * week's chip-hours against the naive matrix, with the line of each tier
 * (T0 with what pruning reclaimed, T1, T2, the rotation, the reserve)
 * reconciling to the total. The week is the one holding the day given
 * (default: the latest week with an RC plan). JSON by default, one object;
 * --text for people. PW_PG_DSN names the database.
 */
#include <libpq-fe.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pw_log.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: perfwatch coverage [--week YYYY-MM-DD] [--text|--json]\n"
	             "  the planner's chip-hours by tier, spend coverage and 28-day coverage for the week\n"
	             "  holding the day (default: the latest week with an RC plan)\n");
}

static const char *const tiers[] = {"T0", "T1", "T2", "tail", "reserve"};
static const char *const tier_text[] = {"T0 nightly smoke", "T1 RC gate", "T2 amortised", "tail rotation",
                                        "re-baseline + bisection reserve"};

/* "4,410" */
static void thousands(double v, char *buf, size_t len)
{
	char raw[64];
	snprintf(raw, sizeof raw, "%.0f", v);
	size_t n = strlen(raw), o = 0, lead = raw[0] == '-' ? 1 : 0;
	for (size_t i = 0; i < n && o + 2 < len; i++) {
		if (i > lead && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = raw[i];
	}
	buf[o] = 0;
}

int pw_cmd_coverage(int argc, char **argv)
{
	const char *week;
	bool text;
	PGconn *conn;
	int rc = pw_cli_period_connect(argc, argv, "coverage", "--week", pw_cli_day_ok, "YYYY-MM-DD", usage, &week,
	                               &text, &conn);
	if (rc >= 0)
		return rc;
	rc = PW_CLI_EXIT_FAIL;
	const char *p[] = {week};
	PGresult *r = pw_cli_pg_query(
		conn, "coverage",
		"SELECT week::text, nightlies, rcs, coalesce(rc_sweep, ''), spend_coverage, t0_chip_hours, t1_chip_hours, "
		"t2_chip_hours, tail_chip_hours, reserve_chip_hours, chip_hours, naive_chip_hours, naive_ratio, "
		"t0_planned_chip_hours, t0_candidates, t0_pruned, t0_pruned_ratio, models, measured_28d "
		"FROM perfwatch.plan_weeks WHERE CASE WHEN $1::text IS NULL THEN rcs > 0 "
		"ELSE week = date_trunc('week', $1::date::timestamp)::date END ORDER BY week DESC LIMIT 1",
		1, p);
	if (!r)
		goto out;
	if (PQntuples(r) == 0) {
		fprintf(stderr, "perfwatch: coverage: no plans %s%s\n", week ? "in the week of " : "with an RC",
		        week ? week : "");
		PQclear(r);
		goto out;
	}
	double v[19];
	for (int i = 1; i < 19; i++)
		v[i] = PQgetisnull(r, 0, i) ? NAN : strtod(PQgetvalue(r, 0, i), NULL);
	double line[5] = {v[5], v[6], v[7], v[8], v[9]}, sum = 0;
	for (int t = 0; t < 5; t++)
		sum += line[t];
	double measured_ratio = v[17] > 0 ? v[18] / v[17] : NAN;
	const char *wk = PQgetvalue(r, 0, 0), *rcs = PQgetvalue(r, 0, 3);
	if (text) {
		char total[32], naive[32];
		thousands(v[10], total, sizeof total);
		thousands(v[11], naive, sizeof naive);
		printf("coverage, week of %s (%s%s, %.0f nightlies)\n", wk, rcs[0] ? "RC " : "no RC", rcs, v[1]);
		if (isfinite(v[4]))
			printf("  %.1f%% of fleet dollars gated this RC, ", 100 * v[4]);
		else
			printf("  no RC this week, ");
		printf("%.0f%% of models measured within 28 days (%.0f of %.0f), %s chip-h this week = %.1f%% of naive\n",
		       100 * measured_ratio, v[18], v[17], total, 100 * v[12]);
		for (int t = 0; t < 5; t++) {
			printf("  %-32s %9.1f chip-h", tier_text[t], line[t]);
			if (t == 0 && v[13] > 0)
				printf("  (of %.1f planned: %.0f of %.0f benchmarks pruned, %.0f%%; %.1f reclaimed into the reserve)",
				       v[13], v[15], v[14], isfinite(v[16]) ? 100 * v[16] : 0.0, v[13] - line[0]);
			printf("\n");
		}
		printf("  %-32s %9.1f chip-h  (= the lines above)\n", "total", sum);
		printf("  %-32s %9s chip-h  (every model x platform x config x 5 repeats x 15 min x 8 sweeps)\n", "naive", naive);
	} else {
		printf("{\"week\":\"%s\",\"rc\":", wk);
		if (rcs[0]) {
			putchar('"');
			pw_json_escape(stdout, rcs);
			putchar('"');
		} else {
			printf("null");
		}
		printf(",\"nightlies\":%.0f,\"spend_coverage\":", v[1]);
		pw_cli_json_number(stdout, v[4]);
		printf(",\"lines\":{");
		for (int t = 0; t < 5; t++) {
			printf("%s\"%s\":{\"chip_hours\":", t ? "," : "", tiers[t]);
			pw_cli_json_number(stdout, line[t]);
			if (t == 0) {
				printf(",\"planned_chip_hours\":");
				pw_cli_json_number(stdout, v[13]);
				printf(",\"candidates\":%.0f,\"pruned\":%.0f,\"pruned_ratio\":", v[14], v[15]);
				pw_cli_json_number(stdout, v[16]);
			}
			printf("}");
		}
		printf("},\"chip_hours\":");
		pw_cli_json_number(stdout, v[10]);
		printf(",\"lines_sum\":");
		pw_cli_json_number(stdout, sum);
		printf(",\"naive_chip_hours\":");
		pw_cli_json_number(stdout, v[11]);
		printf(",\"naive_ratio\":");
		pw_cli_json_number(stdout, v[12]);
		printf(",\"models\":%.0f,\"measured_28d\":%.0f,\"measured_28d_ratio\":", v[17], v[18]);
		pw_cli_json_number(stdout, measured_ratio);
		printf("}\n");
	}
	PQclear(r);
	rc = PW_CLI_EXIT_OK;
out:
	PQfinish(conn);
	return rc;
}
