/*
 * cmd_bisect.c: `perfwatch bisect show ID|ALERT [--json]`, a bisection as
 * the bisector stored it (services/bisector): artifact 4's log rendered by
 * bisect_log.c from perfwatch.bisections and bisection_steps. ALERT is any
 * alert of the bisection's event (bisector_events.alert_ids). --json prints
 * the stored row with its steps, for tools.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "bisect.h"
#include "bisect_log.h"
#include "cli.h"
#include "pw_limits.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: perfwatch bisect show ID|ALERT [--json]\n"
	             "  a bisection's log (artifact 4): steps, culprit, confidence (PW_PG_DSN)\n");
}

static int parse_enum(const char *s, const char *(*name)(int), int lo, int hi, int def)
{
	for (int v = lo; v <= hi; v++)
		if (strcmp(name(v), s) == 0)
			return v;
	return def;
}

static const char *purpose_n(int v) { return pw_bisect_purpose_name((pw_bisect_purpose)v); }
static const char *outcome_n(int v) { return pw_bisect_outcome_name((pw_bisect_outcome)v); }
static const char *status_n(int v) { return pw_bisect_status_name((pw_bisect_status)v); }
static const char *conf_n(int v) { return pw_bisect_confidence_name((pw_bisect_confidence)v); }

static int64_t num(const char *cl)
{
	const char *p = strncmp(cl, "cl/", 3) == 0 ? cl + 3 : cl;
	return strtoll(p, NULL, 10);
}

static int bisect_show(int argc, char **argv)
{
	const char *id;
	bool json;
	int rc = pw_cli_show_args(argc, argv, usage, "bisection id or alert id", PW_ID_MAX, &id, &json);
	if (rc >= 0)
		return rc;
	PGconn *conn;
	if ((rc = pw_cli_pg_connect(&conn)) >= 0)
		return rc;
	rc = PW_CLI_EXIT_FAIL;
	PGresult *res = NULL, *st = NULL;
	pw_bisect_log_step *steps = NULL;
	const char *p[] = {id};
	res = pw_cli_pg_query(conn, "reading the bisection failed",
	                      "SELECT b.bisection_id, s.series_key, b.metric, b.unit, "
	                      "(extract(epoch FROM b.started_at) * 1e6)::bigint, "
	                      "coalesce((extract(epoch FROM b.finished_at) * 1e6)::bigint, 0), b.range_lo_number, "
	                      "b.range_hi_number, b.n_cls, cardinality(b.flagged_cls), b.status, b.confidence, b.culprit, "
	                      "b.culprit_title, b.culprit_owner, b.culprit_upstream, coalesce(b.interacting_cls[1], ''), "
	                      "coalesce(b.interacting_cls[2], ''), b.verified_adjacent_clean, b.cherry_pick_reproduced, "
	                      "b.full_range_fallback, b.reason, b.builds, row_to_json(b) "
	                      "FROM perfwatch.bisections b JOIN perfwatch.series s USING (series_id) "
	                      "WHERE b.bisection_id = $1 OR b.alert_id = $1 OR b.bisection_id = "
	                      "(SELECT e.bisection_id FROM perfwatch.bisector_events e WHERE $1 = ANY (e.alert_ids) LIMIT 1) "
	                      "ORDER BY b.started_at LIMIT 1",
	                      1, p);
	if (!res)
		goto out;
	if (PQntuples(res) == 0) {
		fprintf(stderr, "perfwatch: no bisection \"%s\" (by id or alert)\n", id);
		rc = PW_CLI_EXIT_USAGE;
		goto out;
	}
	const char *bid = PQgetvalue(res, 0, 0);
	const char *q[] = {bid};
	st = pw_cli_pg_query(conn, "reading the steps failed",
	                     json ? "SELECT coalesce(json_agg(row_to_json(s) ORDER BY s.step_index), '[]') "
	                            "FROM perfwatch.bisection_steps s WHERE s.bisection_id = $1"
	                          : "SELECT s.purpose, s.cl, coalesce(j.cherry_picks[1], ''), coalesce(j.cherry_picks[2], ''), "
	                            "cardinality(j.cherry_picks), coalesce(s.median, 0), coalesce(s.spread, 0), s.n, s.outcome, "
	                            "coalesce((extract(epoch FROM s.finished_at) * 1e6)::bigint, 0), s.range_lo, s.range_hi, "
	                            "coalesce(s.range_n_cls, 0), j.base_cl "
	                            "FROM perfwatch.bisection_steps s JOIN perfwatch.bisect_jobs j USING (job_id) "
	                            "WHERE s.bisection_id = $1 ORDER BY s.step_index",
	                     1, q);
	if (!st)
		goto out;
	if (json) {
		printf("{\"bisection\":%s,\"steps\":%s}\n", PQgetvalue(res, 0, 23), PQgetvalue(st, 0, 0));
		rc = PW_CLI_EXIT_OK;
		goto out;
	}
	int n = PQntuples(st);
	steps = calloc(n ? (size_t)n : 1, sizeof *steps);
	if (!steps)
		goto out;
	for (int i = 0; i < n; i++) {
		pw_bisect_log_step *s = &steps[i];
		s->purpose = (pw_bisect_purpose)parse_enum(PQgetvalue(st, i, 0), purpose_n, 1, 6, 1);
		snprintf(s->cl, sizeof s->cl, "%s", PQgetvalue(st, i, 4)[0] != '0' && PQgetvalue(st, i, 13)[0]
		                                            ? PQgetvalue(st, i, 13) : PQgetvalue(st, i, 1));
		s->npicks = (size_t)atoi(PQgetvalue(st, i, 4));
		for (size_t k = 0; k < s->npicks && k < 2; k++)
			snprintf(s->picks[k], sizeof s->picks[k], "%s", PQgetvalue(st, i, 2 + (int)k));
		s->median = strtod(PQgetvalue(st, i, 5), NULL);
		s->spread = strtod(PQgetvalue(st, i, 6), NULL);
		s->n = (uint32_t)atoi(PQgetvalue(st, i, 7));
		s->outcome = (pw_bisect_outcome)parse_enum(PQgetvalue(st, i, 8), outcome_n, 1, 4, 1);
		s->finished_us = strtoll(PQgetvalue(st, i, 9), NULL, 10);
		s->range_lo = num(PQgetvalue(st, i, 10));
		s->range_hi = num(PQgetvalue(st, i, 11));
		s->range_n = (uint32_t)atoi(PQgetvalue(st, i, 12));
	}
#define V(c) PQgetvalue(res, 0, (c))
#define OPT(c) (V(c)[0] ? V(c) : NULL)
	pw_bisect_log_head h = {.bisection_id = V(0), .series_key = V(1), .metric = V(2), .unit = V(3),
	                        .started_us = strtoll(V(4), NULL, 10), .finished_us = strtoll(V(5), NULL, 10),
	                        .lo = strtoll(V(6), NULL, 10), .hi = strtoll(V(7), NULL, 10),
	                        .n_cls = (uint32_t)atoi(V(8)), .n_flagged = (uint32_t)atoi(V(9)),
	                        .status = (pw_bisect_status)parse_enum(V(10), status_n, 1, 5, 1),
	                        .confidence = (pw_bisect_confidence)parse_enum(V(11), conf_n, 1, 4, 1),
	                        .culprit = OPT(12), .culprit_title = OPT(13), .culprit_owner = OPT(14),
	                        .culprit_upstream = OPT(15), .interacting = {OPT(16), OPT(17)},
	                        .adjacent_clean = V(18)[0] == 't', .pick_reproduced = V(19)[0] == 't',
	                        .full_range = V(20)[0] == 't', .reason = OPT(21),
	                        .builds = (uint32_t)atoi(V(22))};
#undef OPT
#undef V
	printf("bisection %s\nseries %s\n\n", h.bisection_id, h.series_key);
	pw_bisect_log_render(stdout, &h, steps, (size_t)n);
	rc = PW_CLI_EXIT_OK;
out:
	free(steps);
	PQclear(st);
	PQclear(res);
	PQfinish(conn);
	return rc;
}

int pw_cmd_bisect(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "show") == 0)
		return bisect_show(argc - 1, argv + 1);
	bool help = argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0);
	usage(help ? stdout : stderr);
	return help ? PW_CLI_EXIT_OK : PW_CLI_EXIT_USAGE;
}
