/*
 * cmd_canary.c: `perfwatch canary show [--rollout ID] [--json]`, the
 * production canary's decisions (docs/canary.md, "The canary service") from
 * perfwatch.canary_families and canary_metrics (migration 0052): per family
 * of the rollout the decision (PROMOTE, HOLD, ROLLBACK, PINNED while a gate waiver pins the family to N-1; HOLD inconclusive
 * after the horizon), the metric that decided, its effect and confidence
 * sequence interval, the windows behind it, when it decided and, for a
 * ROLLBACK, the N−1 artifact the pointer flips to; then each metric's
 * sequence as it stands. Without --rollout the rollout with the latest
 * window. Text for people by default, --json one object. PW_PG_DSN names
 * the database.
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
	fprintf(out, "usage: perfwatch canary show [--rollout ID] [--json]\n"
	             "  the production canary's decision per family of a rollout (the latest without\n"
	             "  --rollout): PROMOTE, HOLD or ROLLBACK, the deciding metric's effect and confidence\n"
	             "  sequence interval, its windows and when it decided; then each metric's sequence\n");
}

/* columns of the families statement */
enum {
	F_FAMILY, F_KIND, F_RELEASE, F_PREV, F_DECISION, F_INCONCL, F_FINAL, F_METRIC, F_EFFECT, F_LO, F_HI,
	F_DWINDOWS, F_WINDOWS, F_DSTART, F_DAT, F_ROLLBACK, F_ALPHA, F_MDE, F_TOL, F_FIRST, F_LAST,
	F_PIN_WAIVER, F_PIN_RELEASE, F_PIN_ARTIFACT, F_PIN_OWNER, F_PIN_SIGNOFF, F_PIN_EXPIRES, F_PIN_EXPIRED
};
/* columns of the metrics statement */
enum { M_FAMILY, M_METRIC, M_WINDOWS, M_CS, M_VERDICT, M_VWINDOWS, M_VSTART, M_EFFECT, M_LO, M_HI };

#define TS_TEXT(col) "coalesce(to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '')"

static double num(const PGresult *r, int i, int c)
{
	if (PQgetisnull(r, i, c))
		return NAN;
	return strtod(PQgetvalue(r, i, c), NULL); /* "Infinity" and "-Infinity" too */
}

static void json_str(const char *name, const PGresult *r, int i, int c)
{
	printf(",\"%s\":", name);
	if (PQgetisnull(r, i, c) || !*PQgetvalue(r, i, c)) {
		printf("null");
		return;
	}
	putchar('"');
	pw_json_escape(stdout, PQgetvalue(r, i, c));
	putchar('"');
}

static void json_num(const char *name, double v)
{
	printf(",\"%s\":", name);
	pw_cli_json_number(stdout, v);
}

/* An interval end for people: a number, or "unbounded". */
static const char *pct(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (isinf(v))
		snprintf(buf, len, v > 0 ? "+inf" : "-inf");
	else
		snprintf(buf, len, "%+.3f%%", v);
	return buf;
}

static void print_metrics_json(const PGresult *m, const char *family)
{
	printf(",\"metrics\":[");
	bool first = true;
	for (int i = 0; i < PQntuples(m); i++) {
		if (strcmp(PQgetvalue(m, i, M_FAMILY), family) != 0)
			continue;
		printf("%s{\"metric\":\"%s\",\"windows\":%s", first ? "" : ",", PQgetvalue(m, i, M_METRIC),
		       PQgetvalue(m, i, M_WINDOWS));
		json_str("sequence", m, i, M_CS);
		json_str("verdict", m, i, M_VERDICT);
		json_num("verdict_windows", num(m, i, M_VWINDOWS));
		json_str("verdict_window_start", m, i, M_VSTART);
		json_num("effect_pct", num(m, i, M_EFFECT));
		json_num("lo_pct", num(m, i, M_LO));
		json_num("hi_pct", num(m, i, M_HI));
		putchar('}');
		first = false;
	}
	putchar(']');
}

static void print_family_json(const PGresult *f, int i, const PGresult *m)
{
	printf("%s{\"family\":", i ? "," : "");
	putchar('"');
	pw_json_escape(stdout, PQgetvalue(f, i, F_FAMILY));
	putchar('"');
	json_str("family_kind", f, i, F_KIND);
	json_str("release", f, i, F_RELEASE);
	json_str("previous_release", f, i, F_PREV);
	json_str("decision", f, i, F_DECISION);
	printf(",\"inconclusive\":%s,\"final\":%s", strcmp(PQgetvalue(f, i, F_INCONCL), "t") == 0 ? "true" : "false",
	       strcmp(PQgetvalue(f, i, F_FINAL), "t") == 0 ? "true" : "false");
	json_str("metric", f, i, F_METRIC);
	json_num("effect_pct", num(f, i, F_EFFECT));
	json_num("lo_pct", num(f, i, F_LO));
	json_num("hi_pct", num(f, i, F_HI));
	json_num("decision_windows", num(f, i, F_DWINDOWS));
	json_num("windows", num(f, i, F_WINDOWS));
	json_str("decided_window_start", f, i, F_DSTART);
	json_str("decided_at", f, i, F_DAT);
	json_str("rollback_artifact", f, i, F_ROLLBACK);
	json_num("alpha", num(f, i, F_ALPHA));
	json_num("mde_pct", num(f, i, F_MDE));
	json_num("tolerance_pct", num(f, i, F_TOL));
	json_str("first_window_start", f, i, F_FIRST);
	json_str("last_window_end", f, i, F_LAST);
	if (PQgetvalue(f, i, F_PIN_WAIVER)[0]) {
		printf(",\"pin\":{\"waiver_id\":");
		putchar('"');
		pw_json_escape(stdout, PQgetvalue(f, i, F_PIN_WAIVER));
		putchar('"');
		json_str("pinned_release", f, i, F_PIN_RELEASE);
		json_str("pinned_artifact", f, i, F_PIN_ARTIFACT);
		json_str("owner", f, i, F_PIN_OWNER);
		json_str("signed_off_by", f, i, F_PIN_SIGNOFF);
		json_str("expires", f, i, F_PIN_EXPIRES);
		json_str("expiry_reported_at", f, i, F_PIN_EXPIRED);
		putchar('}');
	}
	print_metrics_json(m, PQgetvalue(f, i, F_FAMILY));
	putchar('}');
}

static void print_family_text(const PGresult *f, int i, const PGresult *m)
{
	char a[32], b[32], c[32];
	const char *dec = PQgetvalue(f, i, F_DECISION);
	bool final = strcmp(PQgetvalue(f, i, F_FINAL), "t") == 0;
	bool inconcl = strcmp(PQgetvalue(f, i, F_INCONCL), "t") == 0;
	printf("  %s (%s, MDE %g%%, tolerance %g%%): %s%s", PQgetvalue(f, i, F_FAMILY), PQgetvalue(f, i, F_KIND),
	       num(f, i, F_MDE), num(f, i, F_TOL), dec, inconcl ? " (inconclusive: the horizon passed undecided)" : "");
	if (final)
		printf(" on %s %s [%s, %s] after %s windows, decided by the window at %s (recorded %s)",
		       PQgetvalue(f, i, F_METRIC), pct(a, sizeof a, num(f, i, F_EFFECT)), pct(b, sizeof b, num(f, i, F_LO)),
		       pct(c, sizeof c, num(f, i, F_HI)), PQgetvalue(f, i, F_DWINDOWS), PQgetvalue(f, i, F_DSTART),
		       PQgetvalue(f, i, F_DAT));
	else
		printf(" (running: %s windows so far, last ends %s)", PQgetvalue(f, i, F_WINDOWS), PQgetvalue(f, i, F_LAST));
	putchar('\n');
	if (!PQgetisnull(f, i, F_ROLLBACK))
		printf("    rollback: the serving pointer flips to %s\n", PQgetvalue(f, i, F_ROLLBACK));
	if (PQgetvalue(f, i, F_PIN_WAIVER)[0])
		printf("    pin: %s N-1 %s (%s) by waiver %s, owner %s, signed off by %s, expires %s%s%s\n",
		       PQgetvalue(f, i, F_PIN_EXPIRED)[0] ? "was pinned to" : "PINNED to", PQgetvalue(f, i, F_PIN_RELEASE),
		       PQgetvalue(f, i, F_PIN_ARTIFACT), PQgetvalue(f, i, F_PIN_WAIVER), PQgetvalue(f, i, F_PIN_OWNER),
		       PQgetvalue(f, i, F_PIN_SIGNOFF), PQgetvalue(f, i, F_PIN_EXPIRES),
		       PQgetvalue(f, i, F_PIN_EXPIRED)[0] ? "; expired, reported " : "", PQgetvalue(f, i, F_PIN_EXPIRED));
	for (int k = 0; k < PQntuples(m); k++) {
		if (strcmp(PQgetvalue(m, k, M_FAMILY), PQgetvalue(f, i, F_FAMILY)) != 0)
			continue;
		printf("    %-8s %4s windows  %-17s %s [%s, %s]%s%s\n", PQgetvalue(m, k, M_METRIC), PQgetvalue(m, k, M_WINDOWS),
		       PQgetvalue(m, k, M_CS), pct(a, sizeof a, num(m, k, M_EFFECT)), pct(b, sizeof b, num(m, k, M_LO)),
		       pct(c, sizeof c, num(m, k, M_HI)), PQgetisnull(m, k, M_VERDICT) ? "" : "  first said ",
		       PQgetisnull(m, k, M_VERDICT) ? "" : PQgetvalue(m, k, M_VERDICT));
	}
}

int pw_cmd_canary(int argc, char **argv)
{
	const char *rollout = NULL;
	bool json = false;
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? PW_CLI_EXIT_USAGE : PW_CLI_EXIT_OK;
	}
	if (strcmp(argv[1], "show") != 0) {
		fprintf(stderr, "perfwatch: canary: unknown subcommand \"%s\"\n", argv[1]);
		usage(stderr);
		return PW_CLI_EXIT_USAGE;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--rollout") == 0 && i + 1 < argc) {
			rollout = argv[++i];
			int rc = pw_cli_check_id("rollout id", rollout, 200);
			if (rc >= 0)
				return rc;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return PW_CLI_EXIT_OK;
		} else {
			fprintf(stderr, "perfwatch: canary show: unexpected \"%s\"\n", argv[i]);
			usage(stderr);
			return PW_CLI_EXIT_USAGE;
		}
	}
	PGconn *conn;
	int rc = pw_cli_pg_connect(&conn);
	if (rc >= 0)
		return rc;
	rc = PW_CLI_EXIT_FAIL;
	PGresult *r = NULL, *f = NULL, *m = NULL;
	const char *p[1] = {rollout};
	r = pw_cli_pg_query(conn, "canary show",
	                    "SELECT rollout_id FROM perfwatch.canary_families WHERE $1::text IS NULL OR rollout_id = $1 "
	                    "GROUP BY rollout_id ORDER BY max(last_window_end) DESC, rollout_id LIMIT 1",
	                    1, p);
	if (!r)
		goto out;
	if (PQntuples(r) == 0) {
		if (rollout)
			fprintf(stderr, "perfwatch: canary show: no rollout \"%s\"\n", rollout);
		else
			fprintf(stderr, "perfwatch: canary show: no rollout yet\n");
		goto out;
	}
	const char *id[1] = {PQgetvalue(r, 0, 0)};
	f = pw_cli_pg_query(conn, "canary show",
	                    /* a family held by a pin (docs/canary.md "Pins") shows PINNED */
	                    "SELECT family, family_kind, release, previous_release, CASE WHEN NOT final AND pinned_at IS NOT "
	                    "NULL AND pin_expired_at IS NULL THEN 'PINNED' ELSE decision END, inconclusive, final, metric, "
	                    "effect_pct, lo_pct, hi_pct, decision_windows, windows, " TS_TEXT("decided_window_start") ", "
	                    TS_TEXT("decided_at") ", rollback_artifact, alpha, mde_pct, tolerance_pct, "
	                    TS_TEXT("first_window_start") ", " TS_TEXT("last_window_end") ", "
	                    "coalesce(pin_waiver_id, ''), coalesce(pinned_release, ''), coalesce(pinned_artifact, ''), "
	                    "coalesce(pin_owner, ''), coalesce(pin_signed_off_by, ''), " TS_TEXT("pin_expires_at") ", "
	                    TS_TEXT("pin_expired_at") " "
	                    "FROM perfwatch.canary_families WHERE rollout_id = $1 ORDER BY family",
	                    1, id);
	if (!f)
		goto out;
	m = pw_cli_pg_query(conn, "canary show",
	                    "SELECT family, metric, windows, cs_decision, verdict, verdict_windows, "
	                    TS_TEXT("verdict_window_start") ", effect_pct, lo_pct, hi_pct "
	                    "FROM perfwatch.canary_metrics WHERE rollout_id = $1 "
	                    "ORDER BY family, array_position(ARRAY['tpot', 'ttft', 'goodput'], metric)",
	                    1, id);
	if (!m)
		goto out;
	int nf = PQntuples(f);
	if (json) {
		printf("{\"rollout_id\":\"");
		pw_json_escape(stdout, id[0]);
		printf("\",\"families\":[");
		for (int i = 0; i < nf; i++)
			print_family_json(f, i, m);
		printf("]}\n");
	} else {
		int counts[3] = {0, 0, 0};
		for (int i = 0; i < nf; i++) {
			const char *d = PQgetvalue(f, i, F_DECISION);
			counts[strcmp(d, "PROMOTE") == 0 ? 0 : strcmp(d, "ROLLBACK") == 0 ? 2 : 1]++;
		}
		printf("canary %s: %d families, %d PROMOTE, %d HOLD, %d ROLLBACK\n", id[0], nf, counts[0], counts[1],
		       counts[2]);
		for (int i = 0; i < nf; i++)
			print_family_text(f, i, m);
	}
	rc = PW_CLI_EXIT_OK;
out:
	PQclear(m);
	PQclear(f);
	PQclear(r);
	PQfinish(conn);
	return rc;
}
