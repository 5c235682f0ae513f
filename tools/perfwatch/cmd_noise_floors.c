/*
 * cmd_noise_floors.c: `perfwatch noise-floors [--since YYYY-MM-DD] [--text|--json]`,
 * the diff report of the baseliner's scheduled noise-floor derivations (§4.2,
 * docs/baseliner.md "Noise floors, re-derived") from perfwatch.noise_floors
 * and noise_floor_derivations (migration 0050): per derivation, per series,
 * the previous floor and the new one, the change in percent and the groups
 * and runs behind each; a series with too little data (insufficient_data) or
 * no relative floor (invalid) shows the floor it keeps. Without --since the
 * latest derivation; with it, every derivation made on or after the day.
 * JSON by default, one object; --text for people. PW_PG_DSN names the
 * database.
 */
#include <libpq-fe.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "noise_floor.h"
#include "pw_log.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: perfwatch noise-floors [--since YYYY-MM-DD] [--text|--json]\n"
	             "  the noise floors the baseliner re-derived (section 4.2): per series the previous\n"
	             "  floor, the new one, the change and the runs behind each; the latest derivation,\n"
	             "  or every derivation since the day\n");
}

/* columns of the series statement */
enum {
	C_DID, C_KEY, C_SID, C_STATUS, C_FLOOR, C_LEVEL, C_NG, C_NS, C_NP, C_NEWEST, C_PDID, C_PAT,
	C_PFLOOR, C_PNG, C_PNS, C_NCOLS
};

static double num(const PGresult *r, int i, int c)
{
	return PQgetisnull(r, i, c) ? NAN : strtod(PQgetvalue(r, i, c), NULL);
}

static void json_str(const char *name, const char *v, bool null_if_empty)
{
	printf(",\"%s\":", name);
	if (null_if_empty && !*v) {
		printf("null");
		return;
	}
	putchar('"');
	pw_json_escape(stdout, v);
	putchar('"');
}

static void json_num(const char *name, double v)
{
	printf(",\"%s\":", name);
	pw_cli_json_number(stdout, v);
}

static void print_series_json(const PGresult *r, int i)
{
	double floor_pct = num(r, i, C_FLOOR), prev = num(r, i, C_PFLOOR);
	printf("{\"series_key\":\"");
	pw_json_escape(stdout, PQgetvalue(r, i, C_KEY));
	printf("\",\"series_id\":%s", PQgetvalue(r, i, C_SID));
	json_str("status", PQgetvalue(r, i, C_STATUS), false);
	json_num("previous_floor_pct", prev);
	json_num("floor_pct", floor_pct);
	json_num("change_pct", pw_nf_change_pct(prev, floor_pct));
	/* the floor in force after this derivation: the new one, or the one kept */
	json_num("floor_in_force_pct", isfinite(floor_pct) ? floor_pct : prev);
	json_num("level", num(r, i, C_LEVEL));
	printf(",\"n_groups\":%s,\"n_samples\":%s,\"n_pairs\":%s", PQgetvalue(r, i, C_NG),
	       PQgetvalue(r, i, C_NS), PQgetvalue(r, i, C_NP));
	json_str("newest_at", PQgetvalue(r, i, C_NEWEST), true);
	json_num("previous_derivation_id", num(r, i, C_PDID));
	json_str("previous_derived_at", PQgetvalue(r, i, C_PAT), true);
	json_num("previous_n_groups", num(r, i, C_PNG));
	json_num("previous_n_samples", num(r, i, C_PNS));
	putchar('}');
}

static void print_series_text(const PGresult *r, int i)
{
	double floor_pct = num(r, i, C_FLOOR), prev = num(r, i, C_PFLOOR);
	double ch = pw_nf_change_pct(prev, floor_pct);
	char pbuf[48], nbuf[64], cbuf[24];
	if (isfinite(prev))
		snprintf(pbuf, sizeof pbuf, "%.3f%% (%.0f/%.0f)", prev, num(r, i, C_PNG), num(r, i, C_PNS));
	else
		snprintf(pbuf, sizeof pbuf, "none");
	if (isfinite(floor_pct))
		snprintf(nbuf, sizeof nbuf, "%.3f%% (%s/%s)", floor_pct, PQgetvalue(r, i, C_NG),
		         PQgetvalue(r, i, C_NS));
	else
		snprintf(nbuf, sizeof nbuf, "%s (%s/%s)", PQgetvalue(r, i, C_STATUS), PQgetvalue(r, i, C_NG),
		         PQgetvalue(r, i, C_NS));
	if (isfinite(ch))
		snprintf(cbuf, sizeof cbuf, "%+.1f%%", ch);
	else
		snprintf(cbuf, sizeof cbuf, isfinite(prev) ? "kept" : "new");
	if (!isfinite(floor_pct) && !isfinite(prev))
		snprintf(cbuf, sizeof cbuf, "none");
	printf("  %-24s %-28s %-8s %s\n", pbuf, nbuf, cbuf, PQgetvalue(r, i, C_KEY));
}

int pw_cmd_noise_floors(int argc, char **argv)
{
	const char *since;
	bool text;
	PGconn *conn;
	int rc = pw_cli_period_connect(argc, argv, "noise-floors", "--since", pw_cli_day_ok, "YYYY-MM-DD", usage, &since,
	                               &text, &conn);
	if (rc >= 0)
		return rc;
	rc = PW_CLI_EXIT_FAIL;
	PGresult *d = NULL, *s = NULL;
	const char *p[] = {since};
	d = pw_cli_pg_query(
		conn, "noise-floors",
		"SELECT derivation_id, to_char(derived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
		"follows, every_s, lookback_s, min_groups, min_samples, series_total, series_derived, "
		"series_insufficient, series_invalid FROM perfwatch.noise_floor_derivations "
		"WHERE CASE WHEN $1::text IS NULL "
		"  THEN derivation_id = (SELECT max(derivation_id) FROM perfwatch.noise_floor_derivations) "
		"  ELSE derived_at >= $1::date END ORDER BY derivation_id",
		1, p);
	if (!d)
		goto out;
	s = pw_cli_pg_query(
		conn, "noise-floors",
		"SELECT f.derivation_id, s.series_key, f.series_id, f.status, f.floor_pct, f.level, "
		"f.n_groups, f.n_samples, f.n_pairs, "
		"coalesce(to_char(f.newest_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), ''), "
		"f.previous_derivation_id, "
		"coalesce(to_char(pd.derived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), ''), "
		"pf.floor_pct, pf.n_groups, pf.n_samples "
		"FROM perfwatch.noise_floors f JOIN perfwatch.series s USING (series_id) "
		"LEFT JOIN perfwatch.noise_floors pf ON pf.derivation_id = f.previous_derivation_id "
		" AND pf.series_id = f.series_id "
		"LEFT JOIN perfwatch.noise_floor_derivations pd ON pd.derivation_id = f.previous_derivation_id "
		"WHERE f.derivation_id IN (SELECT derivation_id FROM perfwatch.noise_floor_derivations "
		"  WHERE CASE WHEN $1::text IS NULL "
		"    THEN derivation_id = (SELECT max(derivation_id) FROM perfwatch.noise_floor_derivations) "
		"    ELSE derived_at >= $1::date END) "
		"ORDER BY f.derivation_id, s.series_key",
		1, p);
	if (!s)
		goto out;
	int nd = PQntuples(d), ns = PQntuples(s), at = 0;
	if (nd == 0) {
		fprintf(stderr, "perfwatch: noise-floors: no derivation%s%s\n", since ? " since " : " yet",
		        since ? since : "");
		goto out;
	}
	if (!text)
		printf("{\"derivations\":[");
	for (int i = 0; i < nd; i++) {
		const char *did = PQgetvalue(d, i, 0);
		if (text) {
			printf("noise floors, derivation %s at %s (every %g s, %g s back; %s series: %s "
			       "derived, %s insufficient_data, %s invalid; floor needs %s groups and %s runs)\n",
			       did, PQgetvalue(d, i, 1), num(d, i, 3), num(d, i, 4), PQgetvalue(d, i, 7),
			       PQgetvalue(d, i, 8), PQgetvalue(d, i, 9), PQgetvalue(d, i, 10),
			       PQgetvalue(d, i, 5), PQgetvalue(d, i, 6));
			printf("  %-24s %-28s %-8s %s\n", "previous (groups/runs)", "new (groups/runs)",
			       "change", "series");
		} else {
			printf("%s{\"derivation_id\":%s", i ? "," : "", did);
			json_str("derived_at", PQgetvalue(d, i, 1), false);
			printf(",\"follows\":%s", PQgetvalue(d, i, 2));
			json_num("every_s", num(d, i, 3));
			json_num("lookback_s", num(d, i, 4));
			printf(",\"min_groups\":%s,\"min_samples\":%s,\"series_total\":%s,"
			       "\"series_derived\":%s,\"series_insufficient\":%s,\"series_invalid\":%s,"
			       "\"series\":[",
			       PQgetvalue(d, i, 5), PQgetvalue(d, i, 6), PQgetvalue(d, i, 7),
			       PQgetvalue(d, i, 8), PQgetvalue(d, i, 9), PQgetvalue(d, i, 10));
		}
		bool first = true;
		long unlisted = 0;
		for (; at < ns && strcmp(PQgetvalue(s, at, C_DID), did) == 0; at++) {
			if (text) {
				/* a person reads the floors; a series never floored is a count */
				if (strcmp(PQgetvalue(s, at, C_STATUS), "insufficient_data") == 0 &&
				    !isfinite(num(s, at, C_PFLOOR)))
					unlisted++;
				else
					print_series_text(s, at);
			} else {
				if (!first)
					putchar(',');
				print_series_json(s, at);
			}
			first = false;
		}
		if (text && unlisted)
			printf("  (%ld series with too little data and no floor before are not listed; "
			       "--json lists every series)\n",
			       unlisted);
		if (!text)
			printf("]}");
	}
	if (!text)
		printf("]}\n");
	rc = PW_CLI_EXIT_OK;
out:
	PQclear(s);
	PQclear(d);
	PQfinish(conn);
	return rc;
}
