/*
 * watch_store.c: the watcher's SQL — series, points, stored changepoints and fleet
 * changes read on first sight of a series; changepoints, alerts and the
 * outbox rows written per event. See watch_store.h; tables in
 * migrations/0001-0006, 0015 and 0019; timestamps cross as bigint unix microseconds.
 */
#include "watch_store.h"

#include "pw_enums.h"
#include "pw_input.h"
#include "pw_topics.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TS_IN(n) "('epoch'::timestamptz + (" n ")::bigint * interval '1 microsecond')"
#define TS_OUT(c) "(extract(epoch from " c ") * 1000000)::bigint"

static void copy_field(char *dst, size_t dstlen, const char *src)
{
	snprintf(dst, dstlen, "%s", src ? src : "");
}

pw_status pw_watch_store_series(pw_baseline_reader *br, const char *series_key,
                                pw_watch_series_row *out, pw_baseline_outcome *outcome,
                                char *errbuf, size_t errlen)
{
	/* the newest baseline's version and state come with the row, in the same
	 * round trip: the version the cache is checked against */
	static const char sql[] =
		"SELECT s.series_id, s.model, s.unit, s.direction, coalesce(w.tier, 'tail'),"
		"       coalesce(b.version, 0), coalesce(b.state, '')"
		"  FROM perfwatch.series s"
		"  LEFT JOIN perfwatch.spend_weights w ON w.model = s.model"
		"  LEFT JOIN LATERAL (SELECT version, state FROM perfwatch.baselines"
		"                      WHERE series_id = s.series_id ORDER BY version DESC LIMIT 1) b ON true"
		" WHERE s.series_key = $1";
	PGresult *res = NULL;
	if (outcome)
		*outcome = PW_BASELINE_UNCACHED;
	pw_status st = pw_pg_exec(br->pg, sql, 1, (const char *const[]){series_key}, &res, errbuf,
	                          errlen);
	if (st != PW_OK)
		return st;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return pw_fail(PW_ERR_NOT_FOUND, errbuf, errlen, "series \"%s\" is not in perfwatch.series",
		               series_key);
	}
	memset(out, 0, sizeof *out);
	out->series_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	copy_field(out->model, sizeof out->model, PQgetvalue(res, 0, 1));
	copy_field(out->unit, sizeof out->unit, PQgetvalue(res, 0, 2));
	out->lower_is_better = strcmp(PQgetvalue(res, 0, 3), "lower_is_better") == 0;
	out->top_tier = strcmp(PQgetvalue(res, 0, 4), "top") == 0;
	uint64_t current = pw_baseline_cache_version_of(
		(uint32_t)strtoul(PQgetvalue(res, 0, 5), NULL, 10),
		pw_baseline_state_parse(PQgetvalue(res, 0, 6)));
	PQclear(res);
	if (current == 0)
		return PW_OK; /* no baseline yet: baselining, not frozen */
	/* the rest of the record (the freeze's event) from Redis when it holds
	 * that version, else from PostgreSQL */
	pw_baseline_record b;
	st = pw_baseline_get(br, series_key, current, &b, NULL, outcome, errbuf, errlen);
	if (st == PW_ERR_NOT_FOUND)
		return PW_OK; /* deleted since */
	if (st != PW_OK)
		return st;
	out->frozen = b.state == PW_BASELINE_FROZEN;
	copy_field(out->freeze_event_id, sizeof out->freeze_event_id, b.freeze_event_id);
	return PW_OK;
}

/* Runs SQL whose $1 is a series id and $2 a row limit. */
static pw_status series_query(pw_pg *pg, const char *sql, int64_t series_id, size_t max, PGresult **res,
                              char *errbuf, size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, series_id);
	pw_pg_params_int(&p, (int64_t)max);
	return pw_pg_exec_params(pg, sql, &p, 0, res, errbuf, errlen);
}

pw_status pw_watch_store_points(pw_pg *pg, int64_t series_id, size_t max,
                                pw_watch_stored_point **out, size_t *n, char *errbuf,
                                size_t errlen)
{
	static const char sql[] =
		"SELECT s.value, s.build_id, r.compiler_cl, s.compiler_cl_number, " TS_OUT("s.measured_at") ","
		"       s.run_id, s.repeat_index, r.platform, r.chip_set, r.cell, r.firmware, r.harness_version"
		"  FROM (SELECT * FROM perfwatch.samples"
		"         WHERE series_id = $1 AND build_kind = 'nightly' AND rebaseline_job_id = ''"
		"         ORDER BY measured_at DESC, run_id COLLATE \"C\" DESC, repeat_index DESC"
		"         LIMIT $2) s"
		"  JOIN perfwatch.runs r USING (run_id, repeat_index)"
		" ORDER BY s.measured_at, s.run_id COLLATE \"C\", s.repeat_index";
	*out = NULL;
	*n = 0;
	PGresult *res = NULL;
	pw_status st = series_query(pg, sql, series_id, max, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	size_t rows = (size_t)PQntuples(res);
	if (rows == 0)
		goto done;
	pw_watch_stored_point *p = calloc(rows, sizeof *p);
	if (!p) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory reloading %zu points", rows);
		goto done;
	}
	for (size_t i = 0; i < rows; i++) {
		int r = (int)i;
		p[i].value = strtod(PQgetvalue(res, r, 0), NULL);
		copy_field(p[i].build.build_id, sizeof p[i].build.build_id, PQgetvalue(res, r, 1));
		copy_field(p[i].build.cl, sizeof p[i].build.cl, PQgetvalue(res, r, 2));
		p[i].build.cl_number = strtoll(PQgetvalue(res, r, 3), NULL, 10);
		p[i].build.ts_us = strtoll(PQgetvalue(res, r, 4), NULL, 10);
		p[i].key.ts_us = p[i].build.ts_us;
		copy_field(p[i].key.run_id, sizeof p[i].key.run_id, PQgetvalue(res, r, 5));
		p[i].key.repeat_index = (uint32_t)strtoul(PQgetvalue(res, r, 6), NULL, 10);
		copy_field(p[i].env.platform, sizeof p[i].env.platform, PQgetvalue(res, r, 7));
		copy_field(p[i].env.chip_set, sizeof p[i].env.chip_set, PQgetvalue(res, r, 8));
		copy_field(p[i].env.cell, sizeof p[i].env.cell, PQgetvalue(res, r, 9));
		copy_field(p[i].env.firmware, sizeof p[i].env.firmware, PQgetvalue(res, r, 10));
		copy_field(p[i].env.harness, sizeof p[i].env.harness, PQgetvalue(res, r, 11));
	}
	*out = p;
	*n = rows;
done:
	PQclear(res);
	return st;
}

pw_status pw_watch_store_emitted(pw_pg *pg, int64_t series_id, int64_t since_us, size_t max,
                                 char (*builds)[PW_WATCH_BUILD_LEN], size_t *n, char *errbuf,
                                 size_t errlen)
{
	static const char sql[] =
		"SELECT first_shifted_build_id FROM ("
		"  SELECT first_shifted_build_id, shift_at FROM perfwatch.changepoints"
		"   WHERE series_id = $1 AND shift_at >= " TS_IN("$2")
		"     AND stage NOT IN ('provisional', 'trend') AND method <> 'registered'"
		"   ORDER BY shift_at DESC LIMIT $3) c ORDER BY shift_at";
	char id[32], since[32], lim[32];
	snprintf(id, sizeof id, "%" PRId64, series_id);
	snprintf(since, sizeof since, "%" PRId64, since_us);
	snprintf(lim, sizeof lim, "%zu", max);
	*n = 0;
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg, sql, 3, (const char *const[]){id, since, lim}, &res, errbuf,
	                          errlen);
	if (st != PW_OK)
		return st;
	for (int r = 0; r < PQntuples(res) && *n < max; r++)
		copy_field(builds[(*n)++], PW_WATCH_BUILD_LEN, PQgetvalue(res, r, 0));
	PQclear(res);
	return PW_OK;
}

pw_status pw_watch_store_fleet_marks(pw_pg *pg, const pw_watch_env *env, int64_t after_us,
                                     int64_t until_us, size_t max, pw_watch_fleet_mark *out,
                                     size_t *n, char *errbuf, size_t errlen)
{
	static const char sql[] =
		"SELECT event_id, ts FROM ("
		"  SELECT event_id, occurred_at, " TS_OUT("occurred_at") " AS ts FROM perfwatch.fleet_changes"
		"   WHERE occurred_at > " TS_IN("$1") " AND occurred_at <= " TS_IN("$2")
		"     AND (cardinality(platforms) = 0 OR $3 = ANY (platforms))"
		"     AND (cardinality(chip_sets) = 0 OR $4 = ANY (chip_sets))"
		"     AND (cardinality(cells) = 0 OR $5 = ANY (cells))"
		"     AND (cardinality(firmware) = 0 OR $6 = ANY (firmware))"
		"     AND (cardinality(harness_versions) = 0 OR $7 = ANY (harness_versions))"
		"   ORDER BY occurred_at DESC LIMIT $8) f ORDER BY occurred_at";
	char a[32], u[32], lim[32];
	snprintf(a, sizeof a, "%" PRId64, after_us);
	snprintf(u, sizeof u, "%" PRId64, until_us);
	snprintf(lim, sizeof lim, "%zu", max);
	*n = 0;
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg, sql, 8,
	                          (const char *const[]){a, u, env->platform, env->chip_set, env->cell,
	                                                env->firmware, env->harness, lim},
	                          &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (int r = 0; r < PQntuples(res) && *n < max; r++) {
		copy_field(out[*n].event_id, sizeof out[*n].event_id, PQgetvalue(res, r, 0));
		out[*n].ts_us = strtoll(PQgetvalue(res, r, 1), NULL, 10);
		(*n)++;
	}
	PQclear(res);
	return PW_OK;
}

/* A PostgreSQL text[] literal of a message's string list (NULL: no memory). */
static char *text_array(char *const *list, size_t n)
{
	return pw_pg_text_array((const char *const *)list, n);
}

pw_status pw_watch_store_fleet_change(pw_pg *pg, const Perfwatch__V1__FleetChangeEvent *fc,
                                      char *errbuf, size_t errlen)
{
	static const char sql[] =
		"INSERT INTO perfwatch.fleet_changes (event_id, occurred_at, kind, reason, source,"
		"  platforms, chip_sets, cells, firmware, harness_versions, from_version, to_version)"
		" VALUES ($1, " TS_IN("$2") ", $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
		" ON CONFLICT (event_id) DO NOTHING";
	char ts[32];
	snprintf(ts, sizeof ts, "%" PRId64, fc->occurred_unix_us);
	char *arr[5] = {
		text_array(fc->platforms, fc->n_platforms), text_array(fc->chip_sets, fc->n_chip_sets),
		text_array(fc->cells, fc->n_cells), text_array(fc->firmware, fc->n_firmware),
		text_array(fc->harness_versions, fc->n_harness_versions)};
	pw_status st;
	for (int i = 0; i < 5; i++)
		if (!arr[i]) {
			st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory storing a fleet change");
			goto out;
		}
	/* inside the batch's transaction: a statement PostgreSQL refuses for its
	 * data is undone alone and reported as PW_ERR_INVALID (a dead letter) */
	st = pw_pg_exec(pg, "SAVEPOINT fleet_change", 0, NULL, NULL, errbuf, errlen);
	if (st != PW_OK)
		goto out;
	st = pw_pg_exec(pg, sql, 12,
	                (const char *const[]){fc->event_id, ts, pw_fleet_kind_name(fc->kind), fc->reason,
	                                      fc->source, arr[0], arr[1], arr[2], arr[3], arr[4],
	                                      fc->from_version, fc->to_version},
	                NULL, errbuf, errlen);
	if (st != PW_OK && pw_pg_sqlstate_is_data(pw_pg_last_sqlstate(pg))) {
		char why[512];
		snprintf(why, sizeof why, "postgresql refused the fleet change: %.400s", errbuf);
		st = pw_pg_exec(pg, "ROLLBACK TO SAVEPOINT fleet_change", 0, NULL, NULL, errbuf, errlen);
		if (st == PW_OK)
			st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "%s", why);
		goto out;
	}
	if (st == PW_OK)
		st = pw_pg_exec(pg, "RELEASE SAVEPOINT fleet_change", 0, NULL, NULL, errbuf, errlen);
out:
	for (int i = 0; i < 5; i++)
		free(arr[i]);
	return st;
}

pw_status pw_watch_store_provisional(pw_pg *pg, int64_t series_id, size_t max,
                                     pw_watch_stored_provisional *out, size_t *n, char *errbuf,
                                     size_t errlen)
{
	static const char sql[] =
		"SELECT first_shifted_build_id, level_before, level_after, coalesce(p, 'NaN'),"
		"  stage = 'trend'"
		"  FROM perfwatch.changepoints WHERE series_id = $1 AND stage IN ('provisional', 'trend')"
		" ORDER BY shift_at DESC LIMIT $2";
	*n = 0;
	PGresult *res = NULL;
	pw_status st = series_query(pg, sql, series_id, max, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (int r = PQntuples(res); r-- > 0 && *n < max;) {
		pw_watch_stored_provisional *o = &out[(*n)++];
		copy_field(o->build_id, sizeof o->build_id, PQgetvalue(res, r, 0));
		o->before = strtod(PQgetvalue(res, r, 1), NULL);
		o->after = strtod(PQgetvalue(res, r, 2), NULL);
		o->p = strtod(PQgetvalue(res, r, 3), NULL);
		o->trend = PQgetvalue(res, r, 4)[0] == 't';
	}
	PQclear(res);
	return PW_OK;
}

pw_status pw_watch_store_event(pw_pg *pg, const pw_watch_msgs *m, const pw_watch_event *ev,
                               const uint8_t *cp_pb, size_t cp_len, const uint8_t *alert_pb,
                               size_t alert_len, bool *inserted, char *errbuf, size_t errlen)
{
#define CP_INSERT_SQL                                                                              \
	"INSERT INTO perfwatch.changepoints (series_id, first_shifted_build_id, changepoint_id,"   \
	"  position, day, shift_at, last_clean_build_id, last_clean_cl, last_clean_cl_number,"     \
	"  first_shifted_cl, first_shifted_cl_number, n_cls, level_before, level_after, unit,"      \
	"  delta_pct, p, direction, method, annotation, fleet_event_id, routing, detected_at,"      \
	"  stage, first_reported_at, confirmed_at, points_first, points_confirmed,"                 \
	"  expected_delta_pct, registered_cl)"                                                      \
	" VALUES ($1, $2, $3, $4, $5::date, " TS_IN("$6") ", $7, $8, $9, $10, $11, $12, $13, $14,"  \
	"  $15, $16, $17, $18, $23, $19, $20, $21, " TS_IN("$22") ","                              \
	"  CASE $23 WHEN 'early' THEN 'provisional' WHEN 'drift' THEN 'trend' ELSE 'confirmed' END," \
	"  " TS_IN("$22") ","                                                                      \
	"  CASE WHEN $23 IN ('pelt', 'registered') THEN " TS_IN("$22") " END, $24::integer,"       \
	"  CASE WHEN $23 IN ('pelt', 'registered') THEN $24::integer END, $25, $26)"
	static const char cp_sql[] = CP_INSERT_SQL " ON CONFLICT DO NOTHING RETURNING 1";
	/* a validated win: new, or the revision of a report of the same step made
	 * before the registration was known (once) */
	static const char cp_registered_sql[] =
		CP_INSERT_SQL
		" ON CONFLICT (series_id, first_shifted_build_id) DO UPDATE SET"
		"  method = 'registered', annotation = 'registered', stage = 'confirmed',"
		"  routing = EXCLUDED.routing, direction = EXCLUDED.direction,"
		"  level_before = EXCLUDED.level_before, level_after = EXCLUDED.level_after,"
		"  delta_pct = EXCLUDED.delta_pct, p = EXCLUDED.p,"
		"  confirmed_at = EXCLUDED.confirmed_at, points_confirmed = EXCLUDED.points_confirmed,"
		"  expected_delta_pct = EXCLUDED.expected_delta_pct, registered_cl = EXCLUDED.registered_cl"
		" WHERE perfwatch.changepoints.method <> 'registered' RETURNING 1";
	/* PELT's confirmation or the withdrawal of a provisional shift: its row moves on */
	static const char cp_update_sql[] =
		"UPDATE perfwatch.changepoints SET stage = $3,"
		"  method = CASE WHEN $3 = 'confirmed' THEN 'pelt' ELSE method END,"
		"  confirmed_at = CASE WHEN $3 = 'confirmed' THEN " TS_IN("$4") " END,"
		"  points_confirmed = CASE WHEN $3 = 'confirmed' THEN $5::integer END,"
		"  level_before = $6, level_after = $7, delta_pct = $8, p = $9, routing = $10,"
		"  annotation = $11, fleet_event_id = $12, expected_delta_pct = $13, registered_cl = $14"
		" WHERE series_id = $1 AND first_shifted_build_id = $2 AND stage = 'provisional'"
		" RETURNING 1";
	static const char alert_sql[] =
		"INSERT INTO perfwatch.alerts (alert_id, revision, kind, source, created_at, series_id,"
		"  series_key, baseline_median, baseline_mad, observed_median, observed_release,"
		"  delta_abs, delta_abs_unit, delta_pct, z_robust, fdr_q, changepoint_id, cp_nightly,"
		"  cl_range_lo, cl_range_hi, n_cls, verdict, page_route, routing, fleet_event_id, summary)"
		" VALUES ($1, $23::integer, $2, 'watcher', " TS_IN("$3") ", $4, $5, $6, $7, $8, $9, $10,"
		"  $11, $12, $13, $14, $15,"
		"  (SELECT day FROM perfwatch.changepoints WHERE changepoint_id = $15), $16, $17,"
		"  (SELECT n_cls FROM perfwatch.changepoints WHERE changepoint_id = $15), $18, $19, $20,"
		"  $21, $22)"
		" ON CONFLICT (alert_id) DO UPDATE SET revision = EXCLUDED.revision,"
		"  kind = EXCLUDED.kind, baseline_median = EXCLUDED.baseline_median,"
		"  baseline_mad = EXCLUDED.baseline_mad, observed_median = EXCLUDED.observed_median,"
		"  delta_abs = EXCLUDED.delta_abs, delta_pct = EXCLUDED.delta_pct,"
		"  z_robust = EXCLUDED.z_robust, fdr_q = EXCLUDED.fdr_q, verdict = EXCLUDED.verdict,"
		"  page_route = EXCLUDED.page_route, routing = EXCLUDED.routing,"
		"  fleet_event_id = EXCLUDED.fleet_event_id, summary = EXCLUDED.summary, updated_at = now()"
		" WHERE perfwatch.alerts.revision < EXCLUDED.revision";
	const Perfwatch__V1__Changepoint *cp = &m->cp;
	const Perfwatch__V1__Alert *a = &m->alert;
	bool p_ok = isfinite(cp->p) && cp->p >= 0.0 && cp->p <= 1.0;
	const char *dir = ev->regression ? "regression" : "improvement";
	const char *routing = pw_watch_routing_name(ev->routing);

	*inserted = false;
	PGresult *res = NULL;
	pw_pg_params q;
	pw_pg_params_init(&q);
	bool moves = ev->stage == PW_WATCH_STAGE_CONFIRMING || ev->stage == PW_WATCH_STAGE_WITHDRAWN;
	const char *stage = pw_watch_stage_name(ev->stage);
	if (moves) {
		pw_pg_params_int(&q, cp->series_id);
		pw_pg_params_text(&q, cp->first_shifted_build_id);
		pw_pg_params_text(&q, stage);
		pw_pg_params_int(&q, cp->detected_unix_us);
		pw_pg_params_int(&q, (int64_t)cp->points_after);
		pw_pg_params_double(&q, cp->level_before);
		pw_pg_params_double(&q, cp->level_after);
		pw_pg_params_double(&q, cp->delta_pct);
		pw_pg_params_opt_double(&q, p_ok, cp->p);
		pw_pg_params_text(&q, routing);
		pw_pg_params_text(&q, pw_watch_annotation_name(ev->annotation));
		pw_pg_params_text(&q, cp->fleet_event_id);
		pw_pg_params_double(&q, isfinite(ev->expected_pct) ? ev->expected_pct : 0.0);
		pw_pg_params_text(&q, ev->registered_cl);
		pw_status st = pw_pg_exec_params(pg, cp_update_sql, &q, 0, &res, errbuf, errlen);
		if (st != PW_OK)
			return st;
	} else {
		pw_pg_params_int(&q, cp->series_id);
		pw_pg_params_text(&q, cp->first_shifted_build_id);
		pw_pg_params_text(&q, cp->changepoint_id);
		pw_pg_params_int(&q, cp->position);
		pw_pg_params_text(&q, cp->day);
		pw_pg_params_int(&q, cp->shift_unix_us);
		pw_pg_params_text(&q, cp->last_clean_build_id);
		pw_pg_params_text(&q, cp->last_clean_cl);
		pw_pg_params_int(&q, cp->last_clean_cl_number);
		pw_pg_params_text(&q, cp->first_shifted_cl);
		pw_pg_params_int(&q, cp->first_shifted_cl_number);
		pw_pg_params_int(&q, cp->n_cls);
		pw_pg_params_double(&q, cp->level_before);
		pw_pg_params_double(&q, cp->level_after);
		pw_pg_params_text(&q, cp->unit);
		pw_pg_params_double(&q, cp->delta_pct);
		pw_pg_params_opt_double(&q, p_ok, cp->p);
		pw_pg_params_text(&q, dir);
		pw_pg_params_text(&q, pw_watch_annotation_name(ev->annotation));
		pw_pg_params_text(&q, cp->fleet_event_id);
		pw_pg_params_text(&q, routing);
		pw_pg_params_int(&q, cp->detected_unix_us);
		/* the method says the stage: early is provisional, pelt and registered confirmed */
		pw_pg_params_text(&q, ev->stage == PW_WATCH_STAGE_PROVISIONAL   ? "early"
		                      : ev->stage == PW_WATCH_STAGE_TREND       ? "drift"
		                      : ev->stage == PW_WATCH_STAGE_REGISTERED  ? "registered"
		                                                                : "pelt");
		pw_pg_params_int(&q, (int64_t)cp->points_after);
		pw_pg_params_double(&q, isfinite(ev->expected_pct) ? ev->expected_pct : 0.0);
		pw_pg_params_text(&q, ev->registered_cl);
		pw_status st = pw_pg_exec_params(pg,
		                                 ev->stage == PW_WATCH_STAGE_REGISTERED ? cp_registered_sql
		                                                                        : cp_sql,
		                                 &q, 0, &res, errbuf, errlen);
		if (st != PW_OK)
			return st;
	}
	bool fresh = PQntuples(res) == 1;
	PQclear(res);
	if (!fresh)
		return PW_OK;
	if (ev->stage == PW_WATCH_STAGE_TREND) {
		pw_pg_params_init(&q);
		pw_pg_params_int(&q, cp->series_id);
		pw_pg_params_text(&q, cp->first_shifted_build_id);
		pw_pg_params_double(&q, isfinite(ev->drift_rate_pct) ? ev->drift_rate_pct : 0.0);
		pw_pg_params_double(&q, isfinite(ev->drift_total_pct) ? ev->drift_total_pct : 0.0);
		pw_status st = pw_pg_exec_params(
			pg,
			"UPDATE perfwatch.changepoints SET drift_rate_pct = $3, drift_total_pct = $4"
			" WHERE series_id = $1 AND first_shifted_build_id = $2",
			&q, 0, NULL, errbuf, errlen);
		if (st != PW_OK)
			return st;
	}

	pw_pg_params_init(&q);
	pw_pg_params_text(&q, a->alert_id);
	pw_pg_params_text(&q, pw_watch_alert_kind_name(a->kind));
	pw_pg_params_int(&q, cp->detected_unix_us);
	pw_pg_params_int(&q, cp->series_id);
	pw_pg_params_text(&q, a->series_key);
	pw_pg_params_double(&q, cp->level_before);
	pw_pg_params_double(&q, a->baseline->mad);
	pw_pg_params_double(&q, cp->level_after);
	pw_pg_params_text(&q, a->observed->release);
	pw_pg_params_double(&q, a->delta->abs);
	pw_pg_params_text(&q, a->delta->abs_unit);
	pw_pg_params_double(&q, cp->delta_pct);
	pw_pg_params_double(&q, a->delta->z_robust);
	pw_pg_params_opt_double(&q, p_ok, cp->p);
	pw_pg_params_text(&q, cp->changepoint_id);
	pw_pg_params_text(&q, a->changepoint->cl_range_lo);
	pw_pg_params_text(&q, a->changepoint->cl_range_hi);
	pw_pg_params_text(&q, pw_watch_verdict_name(a->verdict));
	pw_pg_params_text(&q, a->page);
	pw_pg_params_text(&q, routing);
	pw_pg_params_text(&q, a->fleet_event_id);
	pw_pg_params_text(&q, a->summary);
	pw_pg_params_int(&q, a->revision);
	pw_status st = pw_pg_exec_params(pg, alert_sql, &q, 0, NULL, errbuf, errlen);
	if (st != PW_OK)
		return st;
	/* the Changepoint, then its Alert, both keyed by the series */
	st = pw_outbox_add(pg, PW_WATCH_SERVICE, cp->changepoint_id, PW_TOPIC_CHANGEPOINTS,
	                   cp->series_key, cp_pb, cp_len, errbuf, errlen);
	if (st == PW_OK)
		st = pw_outbox_add(pg, PW_WATCH_SERVICE, cp->changepoint_id, PW_TOPIC_ALERTS,
		                   cp->series_key, alert_pb, alert_len, errbuf, errlen);
	if (st != PW_OK)
		return st;
	*inserted = true;
	return PW_OK;
}

pw_status pw_watch_store_load(pw_baseline_reader *br, const char *series_key,
                              const pw_watch_params *p, pw_watch_loaded *out,
                              pw_baseline_outcome *outcome, char *errbuf, size_t errlen)
{
	memset(out, 0, sizeof *out);
	pw_status st = pw_watch_store_series(br, series_key, &out->row, outcome, errbuf, errlen);
	if (st != PW_OK)
		return st;
	int64_t id = out->row.series_id;
	st = pw_watch_store_points(br->pg, id, p->max_points, &out->points, &out->npoints, errbuf,
	                           errlen);
	if (st != PW_OK)
		return st;
	int64_t since = out->npoints ? out->points[0].build.ts_us : 0;
	out->emitted = calloc(p->max_emitted, sizeof *out->emitted);
	out->marks = calloc(p->max_fleet_marks, sizeof *out->marks);
	if (!out->emitted || !out->marks)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory reloading \"%s\"", series_key);
	st = pw_watch_store_emitted(br->pg, id, since, p->max_emitted, out->emitted, &out->nemitted,
	                            errbuf, errlen);
	if (st == PW_OK && out->npoints)
		st = pw_watch_store_fleet_marks(br->pg, &out->points[out->npoints - 1].env, since - 1,
		                                PW_WATCH_END_OF_TIME_US, p->max_fleet_marks, out->marks,
		                                &out->nmarks, errbuf, errlen);
	if (st == PW_OK)
		st = pw_watch_store_provisional(br->pg, id, sizeof out->prov / sizeof out->prov[0],
		                                out->prov, &out->nprov, errbuf, errlen);
	if (st == PW_OK)
		st = pw_watch_store_registrations(br->pg, id, series_key, out->regs,
		                                  PW_WATCH_MAX_REGISTERED, &out->nregs, errbuf, errlen);
	return st;
}

void pw_watch_loaded_release(pw_watch_loaded *l)
{
	free(l->points);
	free(l->emitted);
	free(l->marks);
	l->points = NULL;
	l->emitted = NULL;
	l->marks = NULL;
}

pw_watch_series *pw_watch_loaded_series(const pw_watch_loaded *l, const pw_watch_params *p,
                                        char *errbuf, size_t errlen)
{
	pw_watch_series *s = pw_watch_series_new(p, l->row.lower_is_better, l->row.top_tier, errbuf,
	                                         errlen);
	if (!s)
		return NULL;
	pw_watch_series_set_frozen(s, l->row.frozen, l->row.freeze_event_id);
	/* before the points: they go in as observed − expected */
	for (size_t i = 0; i < l->nregs; i++)
		if (pw_watch_series_register(s, l->regs[i].cl, l->regs[i].cl_number,
		                             l->regs[i].expected_pct, l->regs[i].judged, errbuf,
		                             errlen) != PW_OK) {
			pw_watch_series_free(s);
			return NULL;
		}
	for (size_t i = 0; i < l->nemitted; i++)
		pw_watch_series_mark_emitted(s, l->emitted[i]);
	for (size_t i = 0; i < l->nmarks; i++)
		pw_watch_series_fleet_change(s, l->marks[i].event_id, l->marks[i].ts_us);
	/* the history goes in without a scan per point; the caller scans once */
	for (size_t i = 0; i < l->npoints; i++)
		if (pw_watch_series_load(s, l->points[i].value, &l->points[i].build, errbuf, errlen) !=
		    PW_OK) {
			pw_watch_series_free(s);
			return NULL;
		}
	/* after the points: a provisional shift is marked at its build's position */
	for (size_t i = 0; i < l->nprov; i++)
		if (l->prov[i].trend)
			pw_watch_series_mark_drift(s, l->prov[i].build_id,
			                           l->prov[i].after > l->prov[i].before);
		else
			pw_watch_series_mark_provisional(s, l->prov[i].build_id, l->prov[i].before,
			                                 l->prov[i].after, l->prov[i].p);
	return s;
}

pw_status pw_watch_store_registrations(pw_pg *pg, int64_t series_id, const char *series_key,
                                       pw_watch_registration *out, size_t max, size_t *n,
                                       char *errbuf, size_t errlen)
{
	/* by CL, the newest registration of each (a win registered with two RCs
	 * is one change); a CL that is not "cl/N" cannot be placed in the
	 * nightlies and is left to the gate */
	static const char sql[] =
		"SELECT w.cl, w.n, w.expected_delta_pct,"
		"       EXISTS (SELECT 1 FROM perfwatch.changepoints c WHERE c.series_id = $2"
		"               AND c.registered_cl = w.cl AND c.stage <> 'withdrawn')"
		"  FROM (SELECT DISTINCT ON (cl) cl, (regexp_match(cl, '^cl/([1-9][0-9]{0,17})$'))[1]::bigint AS n,"
		"               expected_delta_pct"
		"          FROM perfwatch.expected_wins WHERE series_key = $1"
		"         ORDER BY cl, registered_at DESC) w"
		" WHERE w.n IS NOT NULL ORDER BY w.n LIMIT $3";
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, series_key);
	pw_pg_params_int(&p, series_id);
	pw_pg_params_int(&p, (int64_t)max);
	PGresult *res = NULL;
	*n = 0;
	pw_status st = pw_pg_exec_params(pg, sql, &p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (int r = 0; r < PQntuples(res) && *n < max; r++) {
		pw_watch_registration *x = &out[(*n)++];
		copy_field(x->cl, sizeof x->cl, PQgetvalue(res, r, 0));
		x->cl_number = strtoll(PQgetvalue(res, r, 1), NULL, 10);
		x->expected_pct = strtod(PQgetvalue(res, r, 2), NULL);
		x->judged = PQgetvalue(res, r, 3)[0] == 't';
	}
	PQclear(res);
	return PW_OK;
}

pw_status pw_watch_store_registered_since(pw_pg *pg, int64_t since_us,
                                          pw_status (*fn)(void *arg, const char *series_key,
                                                          int64_t cl_number, double expected_pct),
                                          void *arg, int64_t *newest_us, char *errbuf,
                                          size_t errlen)
{
	static const char sql[] =
		"SELECT series_key, (regexp_match(cl, '^cl/([1-9][0-9]{0,17})$'))[1]::bigint,"
		"       expected_delta_pct, " TS_OUT("registered_at")
		"  FROM perfwatch.expected_wins WHERE registered_at > " TS_IN("$1")
		" ORDER BY registered_at";
	char since[32];
	snprintf(since, sizeof since, "%" PRId64, since_us);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg, sql, 1, (const char *const[]){since}, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (int r = 0; r < PQntuples(res) && st == PW_OK; r++) {
		int64_t at = strtoll(PQgetvalue(res, r, 3), NULL, 10);
		if (at > *newest_us)
			*newest_us = at;
		if (PQgetisnull(res, r, 1))
			continue;
		st = fn(arg, PQgetvalue(res, r, 0), strtoll(PQgetvalue(res, r, 1), NULL, 10),
		        strtod(PQgetvalue(res, r, 2), NULL));
	}
	PQclear(res);
	return st;
}

pw_status pw_watch_store_alert_revision(pw_pg *pg, const char *alert_id, uint32_t *revision,
                                        char *errbuf, size_t errlen)
{
	PGresult *res = NULL;
	*revision = 0;
	pw_status st = pw_pg_exec(pg, "SELECT revision FROM perfwatch.alerts WHERE alert_id = $1", 1,
	                          (const char *const[]){alert_id}, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (PQntuples(res) == 1)
		*revision = (uint32_t)strtoul(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return PW_OK;
}
