/*
 * attr_store.c: the attributor's reads and its one write transaction
 * (attr_store.h).
 *
 * Runs are found through their series' samples (samples_pkey for a time
 * window, samples_by_series_build for a build, samples_by_bisect_job for
 * bisection jobs), as docs/schema.md's index table says the attributor does;
 * their op timings by runs' primary key; their HLO text through hlo_texts
 * (0020). The write replaces an alert's attribution whole (0008's rule) and
 * adds its message to the outbox in the same transaction.
 */
#include "attr_store.h"
#include "attr_door.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "perfwatch/v1/attribution.pb-c.h"
#include "pw_alert_followup.h"
#include "pw_outbox.h"
#include "pw_time.h"
#include "pw_topics.h"

#define SIDE_MAX_RUNS 64

static double dbl(PGresult *res, int r, int c)
{
	return PQgetisnull(res, r, c) ? NAN : strtod(PQgetvalue(res, r, c), NULL);
}

void attr_side_release(attr_side *s)
{
	if (!s)
		return;
	free(s->runs);
	free(s->ops);
	PQclear(s->res_runs);
	PQclear(s->res_ops);
	*s = (attr_side){0};
}

/*
 * A side's runs as SQL over the series' samples s: %1$s and %2$s are the
 * MFU and HBM-utilisation sibling series (same run key, other metric), %3$s
 * the selection (parameters $2, $3), %4$d the row limit.
 */
static const char *const side_sql =
	"SELECT r.run_id, r.repeat_index, r.build_id, r.hlo_fingerprint, r.harness_version, "
	"       r.wall_step_us, r.achieved_hbm_bw_tb_s, "
	"       (SELECT m.value FROM perfwatch.samples m WHERE m.series_id = %1$s AND "
	"          m.measured_at = s.measured_at AND m.run_id = s.run_id AND m.repeat_index = s.repeat_index), "
	"       (SELECT m.value FROM perfwatch.samples m WHERE m.series_id = %2$s AND "
	"          m.measured_at = s.measured_at AND m.run_id = s.run_id AND m.repeat_index = s.repeat_index), "
	"       COALESCE(t.hlo_text, r.hlo_text), "
	"       (extract(epoch FROM s.measured_at) * 1000000)::bigint "
	"FROM perfwatch.samples s JOIN perfwatch.runs r USING (run_id, repeat_index) "
	"LEFT JOIN perfwatch.hlo_texts t ON t.hlo_sha256 = r.hlo_sha256 "
	"WHERE s.series_id = $1 AND %3$s "
	"ORDER BY s.measured_at DESC, r.run_id, r.repeat_index LIMIT %4$d";

/* The sibling series of series $1 (same model, fingerprint, platform, config) with another metric. */
static const char *const sibling_sql =
	"(SELECT u.series_id FROM perfwatch.series z JOIN perfwatch.series u USING "
	"(model, hlo_fingerprint, platform, config) WHERE z.series_id = $1 AND u.metric = '%s')";

pw_status attr_side_load(pw_pg *pg, int64_t series_id, const attr_select *sel, attr_side *out,
                         char *errbuf, size_t errlen)
{
	*out = (attr_side){0};
	char cond[256], sql[4096], *ids = NULL, sid[32], sa[32], sb[32];
	const char *p[3] = {sid, NULL, NULL};
	int np = 2, limit = SIDE_MAX_RUNS;
	snprintf(sid, sizeof sid, "%" PRId64, series_id);
	if (sel->job_ids) {
		/* escaped: a job id holding '"' or '\\' stays one element (attr_door.h) */
		if (!(ids = pw_pg_text_array(sel->job_ids, sel->njobs)))
			return PW_ERR_NOMEM;
		if (strlen(ids) >= PW_ATTR_JOB_IDS_MAX) { /* the door's bound (attr_door.h) */
			free(ids);
			return pw_fail(PW_ERR_INVALID, errbuf, errlen, "bisect job ids exceed %d bytes", PW_ATTR_JOB_IDS_MAX);
		}
		snprintf(cond, sizeof cond, "s.bisect_job_id = ANY($2::text[])");
		p[1] = ids;
	} else if (sel->window_start_us > 0 && sel->window_end_us > 0) {
		snprintf(sa, sizeof sa, "%" PRId64, sel->window_start_us);
		snprintf(sb, sizeof sb, "%" PRId64, sel->window_end_us);
		snprintf(cond, sizeof cond,
		         "s.measured_at BETWEEN to_timestamp($2::float8 / 1e6) AND to_timestamp($3::float8 / 1e6) "
		         "AND s.bisect_job_id = ''");
		p[1] = sa;
		p[2] = sb;
		np = 3;
	} else if (sel->build_id && sel->build_id[0]) {
		snprintf(cond, sizeof cond, "s.build_id = $2 AND s.bisect_job_id = ''");
		p[1] = sel->build_id;
	} else if (sel->max_cl > 0) {
		snprintf(sa, sizeof sa, "%" PRId64, sel->max_cl);
		snprintf(cond, sizeof cond,
		         "s.compiler_cl_number <= $2::bigint AND s.build_kind = 'nightly' AND s.bisect_job_id = ''");
		p[1] = sa;
		limit = 30; /* the latest nightlies before the shift */
	} else {
		return PW_OK; /* nothing selects runs: an empty side */
	}
	char mfu[256], util[256];
	snprintf(mfu, sizeof mfu, sibling_sql, "mfu");
	snprintf(util, sizeof util, sibling_sql, "hbm_bw_util");
	snprintf(sql, sizeof sql, side_sql, mfu, util, cond, limit);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg, sql, np, p, &res, errbuf, errlen);
	free(ids);
	if (st != PW_OK)
		return st;
	out->res_runs = res;
	int n = PQntuples(res);
	if (n == 0)
		return PW_OK;
	out->runs = calloc((size_t)n, sizeof *out->runs);
	if (!out->runs) {
		attr_side_release(out);
		return PW_ERR_NOMEM;
	}
	/* op tables of these runs; run ids as an escaped text[] literal, whole */
	char *rk = NULL, *rr = malloc((size_t)n * 16 + 8);
	const char **rids = malloc((size_t)n * sizeof *rids);
	if (!rr || !rids) {
		free(rr), free(rids);
		attr_side_release(out);
		return PW_ERR_NOMEM;
	}
	size_t orr = 0;
	rr[orr++] = '{';
	for (int i = 0; i < n; i++) {
		rids[i] = PQgetvalue(res, i, 0);
		orr += (size_t)snprintf(rr + orr, 16, "%s%s", i ? "," : "", PQgetvalue(res, i, 1));
	}
	snprintf(rr + orr, 2, "}");
	rk = pw_pg_text_array(rids, (size_t)n);
	free(rids);
	if (!rk) {
		free(rr);
		attr_side_release(out);
		return PW_ERR_NOMEM;
	}
	PGresult *ops = NULL;
	st = pw_pg_exec(pg,
	                "SELECT o.run_id, o.repeat_index, o.op_name, o.category, o.exec_unit, o.calls, "
	                "o.us_per_step, o.hbm_bytes_per_step FROM perfwatch.op_timings o "
	                "JOIN unnest($1::text[], $2::integer[]) AS k (run_id, repeat_index) "
	                "USING (run_id, repeat_index) ORDER BY o.run_id, o.repeat_index, o.op_name",
	                2, (const char *[]){rk, rr}, &ops, errbuf, errlen);
	free(rk), free(rr);
	if (st != PW_OK) {
		attr_side_release(out);
		return st;
	}
	out->res_ops = ops;
	int no = PQntuples(ops);
	out->ops = calloc(no > 0 ? (size_t)no : 1, sizeof *out->ops);
	if (!out->ops) {
		attr_side_release(out);
		return PW_ERR_NOMEM;
	}
	for (int j = 0; j < no; j++)
		out->ops[j] = (pw_attr_op){PQgetvalue(ops, j, 2), PQgetvalue(ops, j, 3), PQgetvalue(ops, j, 4),
		                           (uint32_t)strtoul(PQgetvalue(ops, j, 5), NULL, 10),
		                           strtod(PQgetvalue(ops, j, 6), NULL), strtod(PQgetvalue(ops, j, 7), NULL)};
	for (int i = 0; i < n; i++) {
		pw_attr_run *r = &out->runs[i];
		*r = (pw_attr_run){PQgetvalue(res, i, 0), (uint32_t)strtoul(PQgetvalue(res, i, 1), NULL, 10),
		                   PQgetvalue(res, i, 2), PQgetvalue(res, i, 3), PQgetvalue(res, i, 4), NULL, 0,
		                   dbl(res, i, 5), dbl(res, i, 6), dbl(res, i, 7), dbl(res, i, 8),
		                   PQgetvalue(res, i, 9)};
		/* the ops rows are sorted by run key: find this run's contiguous range */
		for (int j = 0; j < no; j++) {
			if (strcmp(PQgetvalue(ops, j, 0), r->run_id) != 0 ||
			    strtoul(PQgetvalue(ops, j, 1), NULL, 10) != r->repeat_index)
				continue;
			if (!r->ops)
				r->ops = &out->ops[j];
			r->nops++;
		}
		int64_t t = strtoll(PQgetvalue(res, i, 10), NULL, 10);
		if (!out->first_us || t < out->first_us)
			out->first_us = t;
		if (t > out->last_us)
			out->last_us = t;
	}
	out->side.runs = out->runs;
	out->side.nruns = (size_t)n;
	return PW_OK;
}

pw_status attr_series_id(pw_pg *pg, const char *series_key, int64_t *id, char *errbuf,
                         size_t errlen)
{
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg, "SELECT series_id FROM perfwatch.series WHERE series_key = $1", 1,
	                          (const char *[]){series_key}, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return pw_fail(PW_ERR_NOT_FOUND, errbuf, errlen, "series \"%s\" is not stored", series_key);
	}
	*id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return PW_OK;
}

pw_status attr_platforms_load(pw_pg *pg, attr_platforms *out, char *errbuf, size_t errlen)
{
	*out = (attr_platforms){0};
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg,
	                          "SELECT platform, chips, peak_hbm_gb_s_chip, achieved_bw_fraction, mxu_lanes, "
	                          "peak_tflops_bf16_chip, peak_tflops_int8_chip FROM perfwatch.platforms",
	                          0, NULL, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	int n = PQntuples(res);
	out->res = res;
	out->p = calloc(n > 0 ? (size_t)n : 1, sizeof *out->p);
	if (!out->p) {
		attr_platforms_release(out);
		return PW_ERR_NOMEM;
	}
	for (int i = 0; i < n; i++)
		out->p[i] = (pw_attr_platform){PQgetvalue(res, i, 0), (uint32_t)strtoul(PQgetvalue(res, i, 1), NULL, 10),
		                               dbl(res, i, 2), dbl(res, i, 3),
		                               (uint32_t)strtoul(PQgetvalue(res, i, 4), NULL, 10), dbl(res, i, 5),
		                               dbl(res, i, 6)};
	out->n = (size_t)n;
	return PW_OK;
}

const pw_attr_platform *attr_platform_find(const attr_platforms *ps, const char *name)
{
	for (size_t i = 0; i < ps->n; i++)
		if (strcmp(ps->p[i].name, name) == 0)
			return &ps->p[i];
	return NULL;
}

void attr_platforms_release(attr_platforms *ps)
{
	if (!ps)
		return;
	free(ps->p);
	PQclear(ps->res);
	*ps = (attr_platforms){0};
}

pw_status attr_related_load(pw_pg *pg, const char *model, const char *platform, const char *config,
                            const attr_select *before, const char *after_build,
                            const attr_platforms *ps, attr_related *out, char *errbuf,
                            size_t errlen)
{
	*out = (attr_related){0};
	if (!after_build || !after_build[0])
		return PW_OK;
	char ws[32] = "", we[32] = "", mc[32] = "";
	if (before->window_start_us > 0 && before->window_end_us > 0) {
		snprintf(ws, sizeof ws, "%" PRId64, before->window_start_us);
		snprintf(we, sizeof we, "%" PRId64, before->window_end_us);
	}
	if (before->max_cl > 0)
		snprintf(mc, sizeof mc, "%" PRId64, before->max_cl);
	const char *bb = before->build_id ? before->build_id : "";
	static const char *const sql =
		"WITH z AS (SELECT series_id, model, hlo_fingerprint, platform, config FROM perfwatch.series "
		"           WHERE model = $1 AND metric = 'mfu' AND NOT (platform = $2 AND config = $3)), "
		"w AS (SELECT z.series_id, z.platform, z.config, "
		"  (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY r.wall_step_us) FROM perfwatch.samples s "
		"     JOIN perfwatch.runs r USING (run_id, repeat_index) "
		"     WHERE s.series_id = z.series_id AND s.build_id = $4 AND s.bisect_job_id = '') AS w_after, "
		"  (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY r.wall_step_us) FROM perfwatch.samples s "
		"     JOIN perfwatch.runs r USING (run_id, repeat_index) "
		"     WHERE s.series_id = z.series_id AND s.bisect_job_id = '' AND ("
		"       ($5::float8 IS NOT NULL AND s.measured_at BETWEEN to_timestamp($5::float8 / 1e6) AND to_timestamp($6::float8 / 1e6)) "
		"       OR ($5::float8 IS NULL AND $7 <> '' AND s.build_id = $7) "
		"       OR ($5::float8 IS NULL AND $7 = '' AND $8::bigint IS NOT NULL AND s.build_kind = 'nightly' "
		"           AND s.compiler_cl_number <= $8::bigint))) AS w_before, "
		"  (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s.value) FROM perfwatch.samples s "
		"     WHERE s.series_id = z.series_id AND s.build_id = $4) AS mfu, "
		"  (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s.value) FROM perfwatch.samples s "
		"     JOIN perfwatch.series u USING (series_id) WHERE u.model = z.model AND "
		"     u.hlo_fingerprint = z.hlo_fingerprint AND u.platform = z.platform AND u.config = z.config AND "
		"     u.metric = 'hbm_bw_util' AND s.build_id = $4) AS util "
		"  FROM z) "
		"SELECT platform, config, w_before, w_after, mfu, util FROM w WHERE w_after IS NOT NULL "
		"ORDER BY platform, config";
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg, sql, 8,
	                          (const char *[]){model, platform, config, after_build, ws[0] ? ws : NULL,
	                                           we[0] ? we : NULL, bb, mc[0] ? mc : NULL},
	                          &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	out->res = res;
	int n = PQntuples(res);
	out->c = calloc(n > 0 ? (size_t)n : 1, sizeof *out->c);
	out->labels = calloc(n > 0 ? (size_t)n : 1, sizeof *out->labels);
	if (!out->c || !out->labels) {
		attr_related_release(out);
		return PW_ERR_NOMEM;
	}
	for (int i = 0; i < n; i++) {
		const char *pl = PQgetvalue(res, i, 0), *cf = PQgetvalue(res, i, 1);
		size_t l = strlen(model) + strlen(pl) + strlen(cf) + 3;
		out->labels[i] = malloc(l);
		if (!out->labels[i]) {
			out->n = (size_t)i;
			attr_related_release(out);
			return PW_ERR_NOMEM;
		}
		snprintf(out->labels[i], l, "%s/%s/%s", model, pl, cf);
		double wb = dbl(res, i, 2), wa = dbl(res, i, 3);
		bool moved = isfinite(wb) && wb > 0 && fabs(wa / wb - 1.0) >= 0.01;
		out->c[i] = (pw_attr_clean){out->labels[i], attr_platform_find(ps, pl), cf, dbl(res, i, 4),
		                            dbl(res, i, 5), moved};
	}
	out->n = (size_t)n;
	return PW_OK;
}

void attr_related_release(attr_related *r)
{
	if (!r)
		return;
	if (r->labels)
		for (size_t i = 0; i < r->n; i++)
			free(r->labels[i]);
	free(r->labels);
	free(r->c);
	PQclear(r->res);
	*r = (attr_related){0};
}

pw_status attr_fleet_overlap(pw_pg *pg, const char *platform, int64_t from_us, int64_t to_us,
                             char *buf, size_t len, char *errbuf, size_t errlen)
{
	buf[0] = 0;
	if (from_us <= 0 || to_us <= 0 || to_us < from_us)
		return PW_OK;
	char a[32], b[32];
	snprintf(a, sizeof a, "%" PRId64, from_us);
	snprintf(b, sizeof b, "%" PRId64, to_us);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg,
	                          "SELECT event_id, kind, reason FROM perfwatch.fleet_changes "
	                          "WHERE occurred_at BETWEEN to_timestamp($2::float8 / 1e6) AND to_timestamp($3::float8 / 1e6) "
	                          "AND (platforms = '{}' OR $1 = ANY (platforms)) ORDER BY occurred_at LIMIT 1",
	                          3, (const char *[]){platform, a, b}, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (PQntuples(res) > 0)
		snprintf(buf, len, "%s %s: %s", PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2));
	PQclear(res);
	return PW_OK;
}

/* ---- the message ------------------------------------------------------------------ */

static double fin(double v)
{
	return isfinite(v) ? v : 0.0;
}

pw_status attr_pack(const attr_write *w, const pw_attr_result *r, int64_t created_us,
                    uint8_t **out, size_t *len)
{
	Perfwatch__V1__Attribution m = PERFWATCH__V1__ATTRIBUTION__INIT;
	Perfwatch__V1__SeriesKey k = PERFWATCH__V1__SERIES_KEY__INIT;
	Perfwatch__V1__Roofline rf = PERFWATCH__V1__ROOFLINE__INIT;
	Perfwatch__V1__OpDiffRow *rows = calloc(r->nrows ? r->nrows : 1, sizeof *rows);
	Perfwatch__V1__OpDiffRow **rowp = calloc(r->nrows ? r->nrows : 1, sizeof *rowp);
	Perfwatch__V1__SelectivityNote *sel = calloc(r->nselectivity ? r->nselectivity : 1, sizeof *sel);
	Perfwatch__V1__SelectivityNote **selp = calloc(r->nselectivity ? r->nselectivity : 1, sizeof *selp);
	char *report = pw_attr_render(r);
	pw_status st = PW_ERR_NOMEM;
	if (!rows || !rowp || !sel || !selp || !report)
		goto out;
	m.alert_id = (char *)w->alert_id;
	m.series_key = (char *)(w->series_key ? w->series_key : "");
	k.model = (char *)(w->model ? w->model : "");
	k.hlo_fingerprint = (char *)(w->fingerprint ? w->fingerprint : "");
	k.platform = (char *)(w->platform ? w->platform : "");
	k.config = (char *)(w->config ? w->config : "");
	k.metric = (char *)(w->metric ? w->metric : "");
	m.series = &k;
	if (r->before_run) {
		m.before_run_id = (char *)r->before_run->run_id;
		m.before_repeat_index = r->before_run->repeat_index;
		m.before_build_id = (char *)r->before_run->build_id;
	}
	if (r->after_run) {
		m.after_run_id = (char *)r->after_run->run_id;
		m.after_repeat_index = r->after_run->repeat_index;
		m.after_build_id = (char *)r->after_run->build_id;
	}
	for (size_t i = 0; i < r->nrows; i++) {
		const pw_attr_row *x = &r->rows[i];
		perfwatch__v1__op_diff_row__init(&rows[i]);
		rows[i].op_name = x->name;
		rows[i].category = x->category;
		rows[i].unit = x->unit;
		rows[i].calls = x->calls;
		rows[i].before_us = x->before_us;
		rows[i].after_us = x->after_us;
		rows[i].delta_us = x->delta_us;
		rows[i].change = (Perfwatch__V1__OpChange)x->change;
		rows[i].note = x->note;
		rowp[i] = &rows[i];
	}
	m.n_ops = r->nrows;
	m.ops = rowp;
	m.kernel_sum_before_us = r->kernel_before_us;
	m.kernel_sum_after_us = r->kernel_after_us;
	m.wall_before_us = fin(r->wall_before_us);
	m.wall_after_us = fin(r->wall_after_us);
	m.top_op_family = r->top_family;
	m.top_op_family_share = r->top_family_share;
	m.hlo_diff = r->hlo_diff;
	rf.added_bytes_per_step = fin(r->added_bytes);
	rf.achieved_bw_tb_s = fin(r->bw_tb_s);
	rf.predicted_delta_us = fin(r->predicted_us);
	rf.predicted_delta_pct = fin(r->predicted_pct);
	rf.measured_delta_us = fin(r->measured_us);
	rf.measured_delta_pct = fin(r->measured_pct);
	rf.residual_us = fin(r->residual_us);
	rf.memory_bound = r->memory_bound;
	rf.explanation = r->roofline_explanation;
	rf.arithmetic_intensity = fin(r->intensity);
	rf.ridge = fin(r->ridge);
	rf.bw_source = (char *)r->bw_source;
	m.roofline = &rf;
	m.created_unix_us = created_us;
	m.status = (char *)pw_attr_status_name(r->status);
	m.status_detail = r->status_detail;
	m.owner_hint = (char *)r->owner_hint;
	m.owner_reason = r->owner_reason;
	for (size_t i = 0; i < r->nselectivity; i++) {
		perfwatch__v1__selectivity_note__init(&sel[i]);
		sel[i].series = r->selectivity[i].label;
		sel[i].explained = r->selectivity[i].explained;
		sel[i].reason = r->selectivity[i].reason;
		selp[i] = &sel[i];
	}
	m.n_selectivity = r->nselectivity;
	m.selectivity = selp;
	m.top_op_family_members = r->top_family_members;
	m.kernel_wall_differ = r->kernel_wall_differ;
	m.kernel_wall_note = r->kernel_wall_note;
	m.source = (char *)w->source;
	m.bisection_id = (char *)(w->bisection_id ? w->bisection_id : "");
	m.before_runs = (uint32_t)r->nbefore;
	m.after_runs = (uint32_t)r->nafter;
	m.report = report;
	*len = perfwatch__v1__attribution__get_packed_size(&m);
	*out = malloc(*len ? *len : 1);
	if (!*out)
		goto out;
	perfwatch__v1__attribution__pack(&m, *out);
	st = PW_OK;
out:
	free(rows), free(rowp), free(sel), free(selp), free(report);
	return st;
}

/* ---- the write ---------------------------------------------------------------------- */

/* Text of a double for a parameter; NULL (SQL NULL) when not finite. */
static const char *dtext(char *buf, size_t len, double v)
{
	if (!isfinite(v))
		return NULL;
	snprintf(buf, len, "%.17g", v);
	return buf;
}

/* JSON string escaping into b (bounded). */
static size_t json_str(char *b, size_t len, const char *s)
{
	size_t o = 0;
	if (o + 1 < len)
		b[o++] = '"';
	for (; *s && o + 8 < len; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			b[o++] = '\\';
			b[o++] = (char)c;
		} else if (c < 0x20) {
			o += (size_t)snprintf(b + o, len - o, "\\u%04x", c);
		} else {
			b[o++] = (char)c;
		}
	}
	if (o + 1 < len)
		b[o++] = '"';
	b[o < len ? o : len - 1] = 0;
	return o;
}

pw_status attr_store_write(pw_pg *pg, const attr_write *w, const pw_attr_result *r,
                           attr_write_outcome *outcome, char *errbuf, size_t errlen)
{
	*outcome = ATTR_WRITTEN;
	uint8_t *msg = NULL;
	size_t msglen = 0;
	char *json = NULL, *report = NULL;
	int64_t now = pw_now_us();
	pw_status st = attr_pack(w, r, now, &msg, &msglen);
	if (st != PW_OK)
		return pw_fail(st, errbuf, errlen, "attribution of alert \"%s\": out of memory packing it", w->alert_id);
	size_t jcap = 64;
	for (size_t i = 0; i < r->nselectivity; i++)
		jcap += strlen(r->selectivity[i].label) * 6 + strlen(r->selectivity[i].reason) * 6 + 64;
	json = malloc(jcap);
	report = pw_attr_render(r);
	if (!json || !report) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "attribution of alert \"%s\": out of memory", w->alert_id);
		goto out;
	}
	{
		size_t o = 0;
		json[o++] = '[';
		for (size_t i = 0; i < r->nselectivity; i++) {
			o += (size_t)snprintf(json + o, jcap - o, "%s{\"series\":", i ? "," : "");
			o += json_str(json + o, jcap - o, r->selectivity[i].label);
			o += (size_t)snprintf(json + o, jcap - o, ",\"explained\":%s,\"reason\":",
			                      r->selectivity[i].explained ? "true" : "false");
			o += json_str(json + o, jcap - o, r->selectivity[i].reason);
			o += (size_t)snprintf(json + o, jcap - o, "}");
		}
		snprintf(json + o, jcap - o, "]");
	}
	if ((st = pw_pg_begin(pg, errbuf, errlen)) != PW_OK)
		goto out;
	PGresult *res = NULL;
	/*
	 * An alert and its bisection lie on different partitions, so two
	 * instances can write one alert's attribution at once; FOR UPDATE locks
	 * nothing while the row does not exist, and the later upsert would
	 * replace a bisection's attribution by an alert's. A lock on the alert
	 * id orders them, and the row is read after it.
	 */
	if ((st = pw_pg_exec(pg, "SELECT pg_advisory_xact_lock(hashtextextended('perfwatch.attributions:' || $1, 0))",
	                     1, (const char *[]){w->alert_id}, NULL, errbuf, errlen)) != PW_OK)
		goto rollback;
	st = pw_pg_exec(pg, "SELECT input_key, source FROM perfwatch.attributions WHERE alert_id = $1 FOR UPDATE",
	                1, (const char *[]){w->alert_id}, &res, errbuf, errlen);
	if (st != PW_OK)
		goto rollback;
	if (PQntuples(res) > 0) {
		bool same = strcmp(PQgetvalue(res, 0, 0), w->input_key) == 0;
		bool sup = strcmp(PQgetvalue(res, 0, 1), "bisection") == 0 && strcmp(w->source, "alert") == 0;
		PQclear(res);
		if (same || sup) {
			*outcome = same ? ATTR_SAME_INPUT : ATTR_SUPERSEDED;
			st = pw_pg_rollback(pg, errbuf, errlen);
			goto out;
		}
	} else {
		PQclear(res);
	}
	if ((st = pw_pg_exec(pg, "DELETE FROM perfwatch.attribution_ops WHERE alert_id = $1", 1,
	                     (const char *[]){w->alert_id}, NULL, errbuf, errlen)) != PW_OK)
		goto rollback;
	{
		char sid[32], bri[16], ari[16], nb[16], na[16], created[32], recv[32];
		char d[16][40];
		snprintf(sid, sizeof sid, "%" PRId64, w->series_id);
		snprintf(bri, sizeof bri, "%u", r->before_run ? r->before_run->repeat_index : 0);
		snprintf(ari, sizeof ari, "%u", r->after_run ? r->after_run->repeat_index : 0);
		snprintf(nb, sizeof nb, "%zu", r->nbefore);
		snprintf(na, sizeof na, "%zu", r->nafter);
		snprintf(created, sizeof created, "%" PRId64, now);
		snprintf(recv, sizeof recv, "%" PRId64, w->received_us);
		const char *v[] = {
			w->alert_id, w->series_id > 0 ? sid : NULL,
			r->before_run ? r->before_run->run_id : "", bri, r->before_run ? r->before_run->build_id : "",
			r->after_run ? r->after_run->run_id : "", ari, r->after_run ? r->after_run->build_id : "",
			dtext(d[0], 40, r->kernel_before_us), dtext(d[1], 40, r->kernel_after_us),
			dtext(d[2], 40, isfinite(r->wall_before_us) ? r->wall_before_us : 0),
			dtext(d[3], 40, isfinite(r->wall_after_us) ? r->wall_after_us : 0),
			r->top_family, dtext(d[4], 40, r->top_family_share), r->hlo_diff,
			dtext(d[5], 40, r->added_bytes), dtext(d[6], 40, r->bw_tb_s), dtext(d[7], 40, r->predicted_us),
			dtext(d[8], 40, r->predicted_pct), dtext(d[9], 40, r->measured_us),
			dtext(d[10], 40, r->measured_pct), dtext(d[11], 40, r->residual_us),
			r->bound_known ? (r->memory_bound ? "true" : "false") : NULL, r->roofline_explanation,
			created,
			/* 0021 */
			pw_attr_status_name(r->status), r->status_detail, r->owner_hint, r->owner_reason, json,
			r->top_family_members, r->kernel_wall_differ ? "true" : "false", r->kernel_wall_note,
			dtext(d[12], 40, r->intensity), dtext(d[13], 40, r->ridge), r->bw_source, w->source,
			w->bisection_id ? w->bisection_id : "", nb, na, report, w->input_key,
			w->received_us > 0 ? recv : NULL,
		};
		static const char *const sql =
			"INSERT INTO perfwatch.attributions (alert_id, series_id, before_run_id, before_repeat_index, "
			"before_build_id, after_run_id, after_repeat_index, after_build_id, kernel_sum_before_us, "
			"kernel_sum_after_us, wall_before_us, wall_after_us, top_op_family, top_op_family_share, hlo_diff, "
			"added_bytes_per_step, achieved_bw_tb_s, predicted_delta_us, predicted_delta_pct, measured_delta_us, "
			"measured_delta_pct, residual_us, memory_bound, roofline_explanation, created_at, status, "
			"status_detail, owner_hint, owner_reason, selectivity, top_op_family_members, kernel_wall_differ, "
			"kernel_wall_note, arithmetic_intensity, ridge, bw_source, source, bisection_id, before_runs, "
			"after_runs, report, input_key, alert_received_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
			"$11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, "
			"to_timestamp($25::float8 / 1e6), $26, $27, $28, $29, $30::jsonb, $31, $32, $33, $34, $35, $36, "
			"$37, $38, $39, $40, $41, $42, to_timestamp($43::float8 / 1e6)) "
			"ON CONFLICT (alert_id) DO UPDATE SET series_id = EXCLUDED.series_id, "
			"before_run_id = EXCLUDED.before_run_id, before_repeat_index = EXCLUDED.before_repeat_index, "
			"before_build_id = EXCLUDED.before_build_id, after_run_id = EXCLUDED.after_run_id, "
			"after_repeat_index = EXCLUDED.after_repeat_index, after_build_id = EXCLUDED.after_build_id, "
			"kernel_sum_before_us = EXCLUDED.kernel_sum_before_us, kernel_sum_after_us = EXCLUDED.kernel_sum_after_us, "
			"wall_before_us = EXCLUDED.wall_before_us, wall_after_us = EXCLUDED.wall_after_us, "
			"top_op_family = EXCLUDED.top_op_family, top_op_family_share = EXCLUDED.top_op_family_share, "
			"hlo_diff = EXCLUDED.hlo_diff, added_bytes_per_step = EXCLUDED.added_bytes_per_step, "
			"achieved_bw_tb_s = EXCLUDED.achieved_bw_tb_s, predicted_delta_us = EXCLUDED.predicted_delta_us, "
			"predicted_delta_pct = EXCLUDED.predicted_delta_pct, measured_delta_us = EXCLUDED.measured_delta_us, "
			"measured_delta_pct = EXCLUDED.measured_delta_pct, residual_us = EXCLUDED.residual_us, "
			"memory_bound = EXCLUDED.memory_bound, roofline_explanation = EXCLUDED.roofline_explanation, "
			"created_at = EXCLUDED.created_at, status = EXCLUDED.status, status_detail = EXCLUDED.status_detail, "
			"owner_hint = EXCLUDED.owner_hint, owner_reason = EXCLUDED.owner_reason, "
			"selectivity = EXCLUDED.selectivity, top_op_family_members = EXCLUDED.top_op_family_members, "
			"kernel_wall_differ = EXCLUDED.kernel_wall_differ, kernel_wall_note = EXCLUDED.kernel_wall_note, "
			"arithmetic_intensity = EXCLUDED.arithmetic_intensity, ridge = EXCLUDED.ridge, "
			"bw_source = EXCLUDED.bw_source, source = EXCLUDED.source, bisection_id = EXCLUDED.bisection_id, "
			"before_runs = EXCLUDED.before_runs, after_runs = EXCLUDED.after_runs, report = EXCLUDED.report, "
			"input_key = EXCLUDED.input_key, alert_received_at = EXCLUDED.alert_received_at";
		if ((st = pw_pg_exec(pg, sql, (int)(sizeof v / sizeof v[0]), v, NULL, errbuf, errlen)) != PW_OK)
			goto rollback;
	}
	for (size_t i = 0; i < r->nrows; i++) {
		const pw_attr_row *x = &r->rows[i];
		char rank[24], calls[16], b[40], a[40], dd[40];
		snprintf(rank, sizeof rank, "%zu", i);
		snprintf(calls, sizeof calls, "%u", x->calls);
		const char *v[] = {w->alert_id, x->name, rank, x->category, x->unit, calls,
		                   dtext(b, 40, x->before_us), dtext(a, 40, x->after_us), dtext(dd, 40, x->delta_us),
		                   pw_attr_change_name(x->change), x->note};
		if ((st = pw_pg_exec(pg,
		                     "INSERT INTO perfwatch.attribution_ops (alert_id, op_name, rank, category, exec_unit, "
		                     "calls, before_us, after_us, delta_us, change, note) VALUES ($1, $2, $3, $4, $5, $6, "
		                     "$7, $8, $9, $10, $11)",
		                     11, v, NULL, errbuf, errlen)) != PW_OK)
			goto rollback;
	}
	if ((st = pw_outbox_add(pg, "attributor", w->alert_id, PW_TOPIC_ATTRIBUTIONS, w->alert_id, msg, msglen, errbuf, errlen)) != PW_OK)
		goto rollback;
	{
		/* the alert links its attribution from its artifacts block: a follow-up revision */
		char op[320], hlo[320];
		snprintf(op, sizeof op, "perfwatch://attribution/%.250s/op-diff", w->alert_id);
		snprintf(hlo, sizeof hlo, "perfwatch://attribution/%.250s/hlo-diff", w->alert_id);
		pw_alert_blocks blk = {.has_attribution = true, .attribution_id = w->alert_id, .op_diff = op,
		                       .hlo_diff = r->hlo_diff && r->hlo_diff[0] ? hlo : ""};
		if ((st = pw_alert_followup_publish(pg, "attributor", w->alert_id, &blk, NULL, errbuf, errlen)) !=
		    PW_OK)
			goto rollback;
	}
	st = pw_pg_commit(pg, errbuf, errlen);
	goto out;
rollback:
	pw_pg_rollback(pg, NULL, 0);
out:
	free(msg);
	free(json);
	free(report);
	return st;
}
