/*
 * cmd_p1.c: `perfwatch p1 list [--open] [--json]` and `perfwatch p1 resolve
 * ID --by WHO --note TEXT [--waive]`, the P1 tickets the gate files (§8:
 * "1–3% on gated series: release proceeds; P1 bug auto-filed with
 * artifacts, must resolve before next RC").
 *
 * The gate files a perfwatch.p1_tickets row per P1 series and release
 * (services/gate/gate_store.c, migrations/0051_p1_tickets.sql); the list
 * reads the view p1_ticket_artifacts, which finds the bisection (culprit
 * CL), the attribution and the pager's incident, ticket and triage page
 * through the gate's alert id. Resolving (or waiving) is the one write: an
 * open ticket becomes resolved or waived with who and why; the next RC's
 * gate then no longer reports it as compounding drift (docs/gate.md).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "cli.h"
#include "pw_limits.h"

/* A resolution note: one paragraph, not a document. */
#define P1_NOTE_MAX 2000

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: perfwatch p1 list [--open] [--json]\n"
	        "       perfwatch p1 resolve ID --by WHO --note TEXT [--waive]\n"
	        "  the P1 tickets the gate filed (PW_PG_DSN); ID is N or P1-N; --waive records the\n"
	        "  ticket waived (accepted knowingly) instead of resolved\n");
}

/* The columns both forms print, from the view (names as in the JSON). */
#define P1_COLUMNS                                                                               \
	"ticket_id, 'P1-' || ticket_id AS ticket, status, series_key, family, found_release, "      \
	"found_evaluation, candidate_build_id, baseline_release, due_release, delta_pct, "          \
	"effect_pct, q, owner, routed_owner, alert_id, coalesce(bisection_id, '') AS bisection_id, " \
	"coalesce(bisection_status, '') AS bisection_status, culprit, attributed, "                  \
	"attribution_owner_hint, incident_id, pager_ticket_id, page_id, triage_url, "                \
	"'perfwatch series plot ' || series_key AS plot, "                                            \
	"to_char(found_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS found_at, "       \
	"to_char(filed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS filed_at, "       \
	"resolved_by, coalesce(to_char(resolved_at AT TIME ZONE 'UTC', "                             \
	"'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '') AS resolved_at, resolution_note, "                   \
	"(SELECT count(*) FROM perfwatch.gate_compounding_drift d "                                  \
	" WHERE d.ticket_id = a.ticket_id) AS drift_reports"

enum {
	C_ID, C_TICKET, C_STATUS, C_KEY, C_FAMILY, C_FOUND, C_EVAL, C_CAND, C_BASE, C_DUE, C_DELTA,
	C_EFFECT, C_Q, C_OWNER, C_ROUTED, C_ALERT, C_BISECT, C_BISECT_STATUS, C_CULPRIT, C_ATTR,
	C_ATTR_HINT, C_INCIDENT, C_PAGER_TICKET, C_PAGE, C_TRIAGE, C_PLOT, C_FOUND_AT, C_FILED_AT,
	C_RESOLVED_BY, C_RESOLVED_AT, C_NOTE, C_DRIFT
};

static const char *or_dash(const char *s)
{
	return s && s[0] ? s : "-";
}

static void print_text(PGresult *res, int i)
{
	printf("%s %s %s (%+.2f%%, effect %+.2f%%, q=%.2g)\n", PQgetvalue(res, i, C_TICKET),
	       PQgetvalue(res, i, C_STATUS), PQgetvalue(res, i, C_KEY),
	       strtod(PQgetvalue(res, i, C_DELTA), NULL), strtod(PQgetvalue(res, i, C_EFFECT), NULL),
	       strtod(PQgetvalue(res, i, C_Q), NULL));
	printf("  found on %s (evaluation %s, candidate %s, baseline %s) at %s, filed %s\n",
	       PQgetvalue(res, i, C_FOUND), PQgetvalue(res, i, C_EVAL), PQgetvalue(res, i, C_CAND),
	       or_dash(PQgetvalue(res, i, C_BASE)), PQgetvalue(res, i, C_FOUND_AT),
	       PQgetvalue(res, i, C_FILED_AT));
	printf("  must resolve before the next RC; %s\n",
	       PQgetvalue(res, i, C_DUE)[0]
	           ? "reported as compounding drift by its gate"
	           : "no later RC gated yet");
	if (PQgetvalue(res, i, C_DUE)[0])
		printf("  due by %s, reported by %s evaluation(s)\n", PQgetvalue(res, i, C_DUE),
		       PQgetvalue(res, i, C_DRIFT));
	printf("  owner %s (routed: %s)\n", PQgetvalue(res, i, C_OWNER), PQgetvalue(res, i, C_ROUTED));
	printf("  alert %s; bisection %s%s%s; culprit %s; attribution %s%s%s\n",
	       PQgetvalue(res, i, C_ALERT), or_dash(PQgetvalue(res, i, C_BISECT)),
	       PQgetvalue(res, i, C_BISECT_STATUS)[0] ? " " : "", PQgetvalue(res, i, C_BISECT_STATUS),
	       or_dash(PQgetvalue(res, i, C_CULPRIT)),
	       PQgetvalue(res, i, C_ATTR)[0] == 't' ? "yes" : "not yet",
	       PQgetvalue(res, i, C_ATTR_HINT)[0] ? ", owner hint " : "", PQgetvalue(res, i, C_ATTR_HINT));
	printf("  pager: incident %s, ticket %s, page %s, triage %s\n",
	       or_dash(PQgetvalue(res, i, C_INCIDENT)), or_dash(PQgetvalue(res, i, C_PAGER_TICKET)),
	       or_dash(PQgetvalue(res, i, C_PAGE)), or_dash(PQgetvalue(res, i, C_TRIAGE)));
	printf("  plot: %s\n", PQgetvalue(res, i, C_PLOT));
	if (strcmp(PQgetvalue(res, i, C_STATUS), "open") != 0)
		printf("  %s by %s at %s: %s\n", PQgetvalue(res, i, C_STATUS),
		       PQgetvalue(res, i, C_RESOLVED_BY), PQgetvalue(res, i, C_RESOLVED_AT),
		       PQgetvalue(res, i, C_NOTE));
}

static int p1_list(int argc, char **argv)
{
	bool open_only = false, json = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--open") == 0)
			open_only = true;
		else if (strcmp(argv[i], "--json") == 0)
			json = true;
		else {
			usage(stderr);
			return PW_CLI_EXIT_USAGE;
		}
	}
	PGconn *conn;
	int rc = pw_cli_pg_connect(&conn);
	if (rc >= 0)
		return rc;
	rc = PW_CLI_EXIT_FAIL;
	const char *p[] = {open_only ? "t" : "f"};
	PGresult *res = pw_cli_pg_query(
	    conn, "reading P1 tickets failed",
	    json ? "SELECT coalesce(json_agg(row_to_json(x) ORDER BY x.ticket_id), '[]') FROM (SELECT "
	           P1_COLUMNS " FROM perfwatch.p1_ticket_artifacts a"
	           " WHERE NOT $1::boolean OR a.status = 'open') x"
	         : "SELECT " P1_COLUMNS " FROM perfwatch.p1_ticket_artifacts a"
	           " WHERE NOT $1::boolean OR a.status = 'open' ORDER BY a.ticket_id",
	    1, p);
	if (!res)
		goto out;
	if (json) {
		printf("%s\n", PQgetvalue(res, 0, 0));
	} else {
		if (PQntuples(res) == 0)
			printf("no %sP1 tickets\n", open_only ? "open " : "");
		for (int i = 0; i < PQntuples(res); i++)
			print_text(res, i);
	}
	rc = PW_CLI_EXIT_OK;
out:
	PQclear(res);
	PQfinish(conn);
	return rc;
}

/* "7" or "P1-7" (any case) to 7; 0 when it is neither. */
static int64_t parse_ticket(const char *s)
{
	if ((s[0] == 'P' || s[0] == 'p') && s[1] == '1' && s[2] == '-')
		s += 3;
	if (!isdigit((unsigned char)s[0]))
		return 0;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	return *end || errno || v < 1 ? 0 : (int64_t)v;
}

static int p1_resolve(int argc, char **argv)
{
	const char *id = NULL, *by = NULL, *note = NULL;
	bool waive = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--by") == 0 && i + 1 < argc)
			by = argv[++i];
		else if (strcmp(argv[i], "--note") == 0 && i + 1 < argc)
			note = argv[++i];
		else if (strcmp(argv[i], "--waive") == 0)
			waive = true;
		else if (argv[i][0] != '-' && !id)
			id = argv[i];
		else {
			usage(stderr);
			return PW_CLI_EXIT_USAGE;
		}
	}
	if (!id || !by || !note) {
		usage(stderr);
		return PW_CLI_EXIT_USAGE;
	}
	int rc = pw_cli_check_id("P1 ticket id", id, PW_ID_MAX);
	if (rc >= 0)
		return rc;
	int64_t ticket = parse_ticket(id);
	if (ticket == 0) {
		fprintf(stderr, "perfwatch: a P1 ticket id is N or P1-N, not \"%.40s\"\n", id);
		return PW_CLI_EXIT_USAGE;
	}
	if ((rc = pw_cli_check_id("--by", by, PW_ID_MAX)) >= 0)
		return rc;
	if ((rc = pw_cli_check_id("--note", note, P1_NOTE_MAX)) >= 0)
		return rc;
	PGconn *conn;
	if ((rc = pw_cli_pg_connect(&conn)) >= 0)
		return rc;
	rc = PW_CLI_EXIT_FAIL;
	char tid[32];
	snprintf(tid, sizeof tid, "%" PRId64, ticket);
	const char *p[] = {tid, waive ? "waived" : "resolved", by, note};
	/* the row as it is after the statement: changed now, or as it already was */
	PGresult *res = pw_cli_pg_query(
	    conn, "resolving the P1 ticket failed",
	    "WITH u AS (UPDATE perfwatch.p1_tickets SET status = $2, resolved_by = $3,"
	    " resolved_at = now(), resolution_note = $4 WHERE ticket_id = $1::bigint"
	    " AND status = 'open' RETURNING ticket_id)"
	    " SELECT (SELECT count(*) FROM u), t.status, t.resolved_by, t.series_key"
	    " FROM perfwatch.p1_tickets t WHERE t.ticket_id = $1::bigint",
	    4, p);
	if (!res)
		goto out;
	if (PQntuples(res) == 0) {
		fprintf(stderr, "perfwatch: no P1 ticket P1-%s\n", tid);
		rc = PW_CLI_EXIT_USAGE;
	} else if (strcmp(PQgetvalue(res, 0, 0), "1") != 0) {
		/* the CTE's snapshot: the row before any change, so status is what it already was */
		fprintf(stderr, "perfwatch: P1-%s is already %s by %s; nothing changed\n", tid,
		        PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2));
		rc = PW_CLI_EXIT_USAGE;
	} else {
		printf("P1-%s %s by %s: %s\n", tid, waive ? "waived" : "resolved", by,
		       PQgetvalue(res, 0, 3));
		rc = PW_CLI_EXIT_OK;
	}
out:
	PQclear(res);
	PQfinish(conn);
	return rc;
}

int pw_cmd_p1(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		return p1_list(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "resolve") == 0)
		return p1_resolve(argc - 1, argv + 1);
	bool help = argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0);
	usage(help ? stdout : stderr);
	return help ? PW_CLI_EXIT_OK : PW_CLI_EXIT_USAGE;
}
