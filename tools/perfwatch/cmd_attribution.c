/*
 * cmd_attribution.c: `perfwatch attribution show ALERT [--json]`, the
 * attributor's stored attribution of one alert (services/attributor).
 *
 * The text form prints the report the attributor rendered when it computed
 * the attribution (attribute.c pw_attr_render): artifact 6's per-op table,
 * artifact 5's HLO diff and the consistency-check block, with selectivity
 * and the owner hint. --json prints the stored row (0008 + 0021 columns,
 * names as in the table) with its ops (attribution_ops, in rank order) and
 * the selectivity array, for tools.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "cli.h"
#include "pw_limits.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: perfwatch attribution show ALERT [--json]\n"
	             "  the attribution of an alert: per-op diff, HLO diff, roofline check (PW_PG_DSN)\n");
}

static int attribution_show(int argc, char **argv)
{
	const char *alert;
	bool json;
	int rc = pw_cli_show_args(argc, argv, usage, "alert id", PW_ID_MAX, &alert, &json);
	if (rc >= 0)
		return rc;
	PGconn *conn;
	if ((rc = pw_cli_pg_connect(&conn)) >= 0)
		return rc;
	rc = PW_CLI_EXIT_FAIL;
	PGresult *res = NULL;
	const char *p[] = {alert};
	res = pw_cli_pg_query(conn, "reading the attribution failed",
	                      json ? "SELECT row_to_json(x) FROM (SELECT a.alert_id, s.series_key, a.source, "
	                             "a.bisection_id, a.status, a.status_detail, a.owner_hint, a.owner_reason, "
	                             "a.before_run_id, a.before_repeat_index, a.before_build_id, a.before_runs, "
	                             "a.after_run_id, a.after_repeat_index, a.after_build_id, a.after_runs, "
	                             "a.kernel_sum_before_us, a.kernel_sum_after_us, a.wall_before_us, "
	                             "a.wall_after_us, a.kernel_wall_differ, a.kernel_wall_note, a.top_op_family, "
	                             "a.top_op_family_members, a.top_op_family_share, a.hlo_diff, "
	                             "a.added_bytes_per_step, a.achieved_bw_tb_s, a.bw_source, a.predicted_delta_us, "
	                             "a.predicted_delta_pct, a.measured_delta_us, a.measured_delta_pct, "
	                             "a.residual_us, a.memory_bound, a.arithmetic_intensity, a.ridge, "
	                             "a.roofline_explanation, a.selectivity, a.created_at, a.alert_received_at, "
	                             "(SELECT coalesce(json_agg(json_build_object('op_name', o.op_name, "
	                             "'category', o.category, 'unit', o.exec_unit, 'calls', o.calls, "
	                             "'before_us', o.before_us, 'after_us', o.after_us, 'delta_us', o.delta_us, "
	                             "'change', o.change, 'note', o.note) ORDER BY o.rank), '[]') "
	                             "FROM perfwatch.attribution_ops o WHERE o.alert_id = a.alert_id) AS ops "
	                             "FROM perfwatch.attributions a LEFT JOIN perfwatch.series s USING (series_id) "
	                             "WHERE a.alert_id = $1) x"
	                           : "SELECT a.alert_id, coalesce(s.series_key, ''), a.source, a.report "
	                             "FROM perfwatch.attributions a LEFT JOIN perfwatch.series s USING (series_id) "
	                             "WHERE a.alert_id = $1",
	                      1, p);
	if (!res)
		goto out;
	if (PQntuples(res) == 0) {
		fprintf(stderr, "perfwatch: no attribution of alert \"%s\"\n", alert);
		rc = PW_CLI_EXIT_USAGE;
		goto out;
	}
	if (json)
		printf("%s\n", PQgetvalue(res, 0, 0));
	else
		printf("attribution of %s\nseries %s (from the %s)\n\n%s", PQgetvalue(res, 0, 0),
		       PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2), PQgetvalue(res, 0, 3));
	rc = PW_CLI_EXIT_OK;
out:
	PQclear(res);
	PQfinish(conn);
	return rc;
}

int pw_cmd_attribution(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "show") == 0)
		return attribution_show(argc - 1, argv + 1);
	usage(argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) ? stdout : stderr);
	return argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) ? PW_CLI_EXIT_OK
	                                                                                   : PW_CLI_EXIT_USAGE;
}
