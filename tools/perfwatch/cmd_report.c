/*
 * cmd_report.c: `perfwatch report card [--month YYYY-MM] [--text]`, the
 * detector's own report card (§8) from PostgreSQL.
 *
 * Reads perfwatch.report_card_monthly and perfwatch.threshold_review
 * (migration 0025): pages, true and false pages with the false-page rate,
 * caught / missed, validated wins, findings queued over the budget, the
 * median time to a verdict and the spend-weighted coverage of the gate, and
 * the threshold-review finding when the false pages were over budget two
 * months running: as the pager raised it (perfwatch.pager_threshold_reviews,
 * with its own pager.budget_per_week, when it was raised and the info notice
 * that delivered it), else as the view computes it with the default budget.
 * JSON by default (--json says so explicitly), one object; --text for
 * people. PW_PG_DSN names the database.
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
	fprintf(out, "usage: perfwatch report card [--month YYYY-MM] [--text|--json]\n"
	             "  the detector's report card for a calendar month (default: the current one)\n");
}

static bool month_ok(const char *s)
{
	return strlen(s) == 7 && s[4] == '-' && s[0] >= '1' && s[0] <= '9' &&
	       strspn(s, "0123456789-") == 7 && ((s[5] == '0' && s[6] >= '1' && s[6] <= '9') ||
	                                         (s[5] == '1' && s[6] >= '0' && s[6] <= '2'));
}

static double num(PGresult *r, int col)
{
	return PQgetisnull(r, 0, col) ? NAN : strtod(PQgetvalue(r, 0, col), NULL);
}

static const char *const cols[] = {"pages", "triaged", "true_pages", "false_pages",
                                   "false_page_rate", "caught", "missed", "validated_wins",
                                   "queued_over_budget", "median_verdict_s", "spend_coverage"};
#define NCOLS (sizeof cols / sizeof cols[0])

static int card(int argc, char **argv)
{
	const char *month;
	bool text;
	PGconn *conn;
	int rc = pw_cli_period_connect(argc, argv, "report card", "--month", month_ok, "YYYY-MM", usage, &month,
	                               &text, &conn);
	if (rc >= 0)
		return rc;
	rc = PW_CLI_EXIT_FAIL;
	PGresult *r = NULL, *m = NULL, *t = NULL, *pr = NULL, *pl = NULL;
	const char *mp[] = {month};
	m = pw_cli_pg_query(conn, "report card",
	                    "SELECT to_char(coalesce(to_date($1, 'YYYY-MM'), date_trunc('month', now())), "
	                    "'YYYY-MM'), coalesce(to_date($1, 'YYYY-MM')::timestamptz, date_trunc('month', now()))",
	                    1, mp);
	if (!m)
		goto out;
	const char *start[] = {PQgetvalue(m, 0, 1)};
	if (!(r = pw_cli_pg_query(conn, "report card",
	                          "SELECT pages, triaged, true_pages, false_pages, false_page_rate, caught, "
	                          "missed, validated_wins, queued_over_budget, median_verdict_s, spend_coverage "
	                          "FROM perfwatch.report_card_monthly WHERE month = $1::timestamptz",
	                          1, start)) ||
	    !(t = pw_cli_pg_query(conn, "report card",
	                          "SELECT finding FROM perfwatch.threshold_review WHERE month = $1::timestamptz",
	                          1, start)) ||
	    !(pr = pw_cli_pg_query(conn, "report card",
	                           "SELECT v.finding, to_char(v.raised_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
	                           " coalesce(v.notice_id, ''), n.webhook_delivered_at IS NOT NULL OR n.am_delivered_at IS NOT NULL,"
	                           " v.budget_per_week"
	                           " FROM perfwatch.pager_threshold_reviews v LEFT JOIN perfwatch.pager_notices n USING (notice_id)"
	                           " WHERE v.month = $1::timestamptz::date",
	                           1, start)) ||
	    /* the planner's latest week with an RC in the month (migration 0048) */
	    !(pl = pw_cli_pg_query(conn, "report card",
	                           "SELECT week::text, rc_sweep, spend_coverage, measured_28d::double precision / NULLIF(models, 0), "
	                           "chip_hours, naive_ratio FROM perfwatch.plan_weeks WHERE rcs > 0 AND week >= "
	                           "date_trunc('week', $1::timestamptz)::date AND week < ($1::timestamptz + interval '1 month')::date "
	                           "ORDER BY week DESC LIMIT 1",
	                           1, start)))
		goto out;
	bool planned = PQntuples(pl) > 0;
	double plv[4] = {NAN, NAN, NAN, NAN};
	for (int i = 0; planned && i < 4; i++)
		plv[i] = PQgetisnull(pl, 0, i + 2) ? NAN : strtod(PQgetvalue(pl, 0, i + 2), NULL);
	double v[NCOLS];
	for (size_t i = 0; i < NCOLS; i++)
		v[i] = PQntuples(r) ? num(r, (int)i) : (i == 4 || i >= 9 ? NAN : 0);
	/* the pager's recorded finding (its own budget) wins over the view's (the default budget) */
	bool raised = PQntuples(pr) > 0;
	const char *review = raised ? PQgetvalue(pr, 0, 0) : PQntuples(t) ? PQgetvalue(t, 0, 0) : NULL;
	const char *raised_at = raised ? PQgetvalue(pr, 0, 1) : NULL;
	const char *notice = raised && PQgetvalue(pr, 0, 2)[0] ? PQgetvalue(pr, 0, 2) : NULL;
	bool delivered = raised && PQgetvalue(pr, 0, 3)[0] == 't';
	if (text) {
		printf("report card %s\n", PQgetvalue(m, 0, 0));
		printf("  pages %.0f (triaged %.0f: %.0f true, %.0f false", v[0], v[1], v[2], v[3]);
		if (isfinite(v[4]))
			printf(", false-page rate %.0f%%", 100 * v[4]);
		printf(")\n  caught %.0f, missed %.0f, validated wins %.0f, queued over budget %.0f\n",
		       v[5], v[6], v[7], v[8]);
		if (isfinite(v[9]))
			printf("  median time to verdict %.1f h\n", v[9] / 3600);
		if (isfinite(v[10]))
			printf("  spend-weighted coverage %.1f%%\n", 100 * v[10]);
		if (planned)
			printf("  planner: %.1f%% of fleet dollars gated (%s), %.0f%% of models measured within 28 days, "
			       "%.0f chip-h in the week of %s = %.1f%% of naive\n",
			       100 * plv[0], PQgetvalue(pl, 0, 1), 100 * plv[1], plv[2], PQgetvalue(pl, 0, 0), 100 * plv[3]);
		printf("  threshold review: %s\n", review ? review : "none");
		if (raised)
			printf("    raised by the pager %s (budget %s a week), notice %s %s\n", raised_at, PQgetvalue(pr, 0, 4),
			       notice ? notice : "-", delivered ? "delivered" : "not delivered yet");
	} else {
		printf("{\"month\":\"%s\"", PQgetvalue(m, 0, 0));
		for (size_t i = 0; i < NCOLS; i++) {
			printf(",\"%s\":", cols[i]);
			pw_cli_json_number(stdout, v[i]);
		}
		printf(",\"threshold_review\":");
		if (review) {
			putchar('"');
			pw_json_escape(stdout, review);
			putchar('"');
		} else {
			printf("null");
		}
		/* added fields: the pager's record of the review */
		printf(",\"threshold_review_raised_at\":");
		if (raised_at)
			printf("\"%s\"", raised_at);
		else
			printf("null");
		printf(",\"threshold_review_notice\":");
		if (notice) {
			putchar('"');
			pw_json_escape(stdout, notice);
			putchar('"');
		} else {
			printf("null");
		}
		printf(",\"threshold_review_delivered\":%s", delivered ? "true" : "false");
		/* added fields: the planner's latest week with an RC in the month (null when none) */
		if (planned) {
			printf(",\"planner_week\":\"%s\",\"planner_rc\":\"", PQgetvalue(pl, 0, 0));
			pw_json_escape(stdout, PQgetvalue(pl, 0, 1));
			printf("\",\"planner_spend_coverage\":");
			pw_cli_json_number(stdout, plv[0]);
			printf(",\"planner_measured_28d_ratio\":");
			pw_cli_json_number(stdout, plv[1]);
			printf(",\"planner_chip_hours\":");
			pw_cli_json_number(stdout, plv[2]);
			printf(",\"planner_naive_ratio\":");
			pw_cli_json_number(stdout, plv[3]);
		} else {
			printf(",\"planner_week\":null,\"planner_rc\":null,\"planner_spend_coverage\":null,"
			       "\"planner_measured_28d_ratio\":null,\"planner_chip_hours\":null,\"planner_naive_ratio\":null");
		}
		printf("}\n");
	}
	rc = PW_CLI_EXIT_OK;
out:
	PQclear(r);
	PQclear(m);
	PQclear(t);
	PQclear(pr);
	PQclear(pl);
	PQfinish(conn);
	return rc;
}

int pw_cmd_report(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "card") == 0)
		return card(argc - 1, argv + 1);
	usage(stderr);
	return PW_CLI_EXIT_USAGE;
}
