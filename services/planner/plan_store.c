/*
 * plan_store.c: the planner's PostgreSQL side (plan_store.h).
 */
#include "plan_store.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan_door.h"
#include "pw_outbox.h"
#include "pw_topics.h"

static double dbl(PGresult *res, int r, int c)
{
	return PQgetisnull(res, r, c) ? NAN : strtod(PQgetvalue(res, r, c), NULL);
}

pw_status plan_store_catalogue(pw_pg *pg, const Perfwatch__V1__CatalogueModel *m, const void *payload,
                               size_t len, char *errbuf, size_t errlen)
{
	char *plats = pw_pg_text_array((const char *const *)m->platforms, m->n_platforms);
	char *cfgs = pw_pg_text_array((const char *const *)m->configs, m->n_configs);
	pw_status st = PW_ERR_NOMEM;
	if (!plats || !cfgs)
		goto out;
	if ((st = pw_pg_begin(pg, errbuf, errlen)) != PW_OK)
		goto out;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, m->model);
	pw_pg_params_text(&p, m->family ? m->family : "");
	pw_pg_params_text(&p, m->tier);
	pw_pg_params_double(&p, m->spend_share);
	pw_pg_params_text(&p, plats);
	pw_pg_params_text(&p, cfgs);
	pw_pg_params_text(&p, m->hlo_fingerprint);
	pw_pg_params_int(&p, (int64_t)m->n_ops);
	pw_pg_params_bin(&p, payload, len);
	pw_pg_params_text(&p, m->source ? m->source : "");
	pw_pg_params_opt_int(&p, m->adopted_unix_us > 0, m->adopted_unix_us);
	st = pw_pg_exec_params(pg,
	                       "INSERT INTO perfwatch.catalogue (model, family, tier, spend_share, platforms, configs, "
	                       "hlo_fingerprint, nops, message, source, adopted_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
	                       "CASE WHEN $11::bigint IS NULL THEN NULL ELSE to_timestamp($11::bigint / 1e6) END) "
	                       "ON CONFLICT (model) DO UPDATE SET family = EXCLUDED.family, tier = EXCLUDED.tier, "
	                       "spend_share = EXCLUDED.spend_share, platforms = EXCLUDED.platforms, configs = EXCLUDED.configs, "
	                       "hlo_fingerprint = EXCLUDED.hlo_fingerprint, nops = EXCLUDED.nops, message = EXCLUDED.message, "
	                       "source = EXCLUDED.source, adopted_at = EXCLUDED.adopted_at, updated_at = now()",
	                       &p, 0, NULL, errbuf, errlen);
	if (st == PW_OK) {
		/* the gate and the pager weigh by spend_weights: it follows the catalogue */
		pw_pg_params w;
		pw_pg_params_init(&w);
		pw_pg_params_text(&w, m->model);
		pw_pg_params_double(&w, m->spend_share);
		pw_pg_params_text(&w, m->tier);
		pw_pg_params_text(&w, m->source && m->source[0] ? m->source : "catalogue");
		st = pw_pg_exec_params(pg,
		                       "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES ($1, $2, $3, $4) "
		                       "ON CONFLICT (model) DO UPDATE SET spend_share = EXCLUDED.spend_share, tier = EXCLUDED.tier, "
		                       "source = EXCLUDED.source, updated_at = now()",
		                       &w, 0, NULL, errbuf, errlen);
	}
	if (st == PW_OK)
		st = pw_pg_commit(pg, errbuf, errlen);
	else
		pw_pg_rollback(pg, NULL, 0);
out:
	free(plats);
	free(cfgs);
	return st;
}

pw_status plan_store_capacity(pw_pg *pg, const Perfwatch__V1__PlatformCapacity *c, char *errbuf,
                              size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, c->platform);
	pw_pg_params_double(&p, c->chip_hours_per_week);
	pw_pg_params_double(&p, c->sigma_pct);
	pw_pg_params_text(&p, c->source ? c->source : "");
	return pw_pg_exec_params(pg,
	                         "INSERT INTO perfwatch.platform_capacity (platform, chip_hours_per_week, sigma_pct, source) "
	                         "VALUES ($1, $2, $3, $4) ON CONFLICT (platform) DO UPDATE SET "
	                         "chip_hours_per_week = EXCLUDED.chip_hours_per_week, sigma_pct = EXCLUDED.sigma_pct, "
	                         "source = EXCLUDED.source, updated_at = now()",
	                         &p, 0, NULL, errbuf, errlen);
}

pw_status plan_store_sweep(pw_pg *pg, const Perfwatch__V1__Sweep *s, char *errbuf, size_t errlen)
{
	const char *kind = s->kind == PERFWATCH__V1__SWEEP_KIND__SWEEP_KIND_RC ? "rc" : "nightly";
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, s->sweep_id);
	pw_pg_params_text(&p, kind);
	pw_pg_params_text(&p, s->release);
	pw_pg_params_int(&p, pw_planner_cl_number(s->cl_head));
	pw_pg_params_text(&p, s->day);
	pw_pg_params_text(&p, s->source ? s->source : "");
	PGresult *res = NULL;
	/* a redelivered sweep is the same row; one that says otherwise is a conflict */
	pw_status st = pw_pg_exec_params(pg,
	                                 "WITH ins AS (INSERT INTO perfwatch.sweeps (sweep_id, kind, release, cl_head, day, source) "
	                                 "VALUES ($1, $2, $3, $4, $5::date, $6) ON CONFLICT (sweep_id) DO NOTHING RETURNING 1) "
	                                 "SELECT (SELECT count(*) FROM ins), (SELECT kind = $2 AND cl_head = $4 AND day = $5::date "
	                                 "FROM perfwatch.sweeps WHERE sweep_id = $1)",
	                                 &p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	bool inserted = strcmp(PQgetvalue(res, 0, 0), "1") == 0;
	bool same = !PQgetisnull(res, 0, 1) && strcmp(PQgetvalue(res, 0, 1), "t") == 0;
	PQclear(res);
	if (!inserted && !same)
		return pw_fail(PW_ERR_CONFLICT, errbuf, errlen,
		               "sweep \"%s\" is stored with another kind, cl_head or day", s->sweep_id);
	return PW_OK;
}

pw_status plan_store_cl(pw_pg *pg, const Perfwatch__V1__CompilerCl *c, const void *payload, size_t len,
                        char *errbuf, size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, c->cl_number);
	pw_pg_params_bin(&p, c->n_op_costs ? payload : NULL, len);
	pw_pg_params_int(&p, (int64_t)c->n_op_costs);
	return pw_pg_exec_params(pg,
	                         "INSERT INTO perfwatch.planner_cls (cl_number, op_costs, nop_costs, checked, checked_at) "
	                         "VALUES ($1, $2, $3, $3 = 0, CASE WHEN $3 = 0 THEN now() END) "
	                         "ON CONFLICT (cl_number) DO UPDATE SET op_costs = EXCLUDED.op_costs, "
	                         "nop_costs = EXCLUDED.nop_costs, checked = EXCLUDED.checked, checked_at = EXCLUDED.checked_at "
	                         "WHERE perfwatch.planner_cls.op_costs IS DISTINCT FROM EXCLUDED.op_costs",
	                         &p, 0, NULL, errbuf, errlen);
}

pw_status plan_store_cl_checked(pw_pg *pg, const char *service, const char *cl, int64_t cl_number,
                                size_t nbenchmarks, const void *packed, size_t len, char *errbuf,
                                size_t errlen)
{
	pw_status st = pw_pg_begin(pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, cl_number);
	pw_pg_params_bool(&p, nbenchmarks > 0);
	pw_pg_params_int(&p, (int64_t)nbenchmarks);
	st = pw_pg_exec_params(pg,
	                       "UPDATE perfwatch.planner_cls SET checked = true, perf_relevant = $2, nbenchmarks = $3, "
	                       "checked_at = now() WHERE cl_number = $1",
	                       &p, 0, NULL, errbuf, errlen);
	if (st == PW_OK)
		st = pw_outbox_add(pg, service, cl, PW_TOPIC_COMPILER_CLS, cl, packed, len, errbuf, errlen);
	if (st == PW_OK)
		return pw_pg_commit(pg, errbuf, errlen);
	pw_pg_rollback(pg, NULL, 0);
	return st;
}

/* ---- loads -------------------------------------------------------------------------------- */

void plan_catalogue_release(plan_catalogue *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->msgs && i < c->n; i++)
		perfwatch__v1__catalogue_model__free_unpacked(c->msgs[i], NULL);
	free(c->msgs);
	free(c->models);
	free(c->ops);
	free(c->names);
	*c = (plan_catalogue){0};
}

pw_status plan_catalogue_load(pw_pg *pg, plan_catalogue *out, char *errbuf, size_t errlen)
{
	*out = (plan_catalogue){0};
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg, "SELECT message FROM perfwatch.catalogue ORDER BY model", 0, NULL, &res,
	                          errbuf, errlen);
	if (st != PW_OK)
		return st;
	size_t n = (size_t)PQntuples(res);
	out->msgs = calloc(n + 1, sizeof *out->msgs);
	out->models = calloc(n + 1, sizeof *out->models);
	if (!out->msgs || !out->models)
		goto nomem;
	size_t nops = 0, nnames = 0;
	for (size_t i = 0; i < n; i++) {
		size_t blen;
		unsigned char *b = PQunescapeBytea((const unsigned char *)PQgetvalue(res, (int)i, 0), &blen);
		if (!b)
			goto nomem;
		out->msgs[i] = perfwatch__v1__catalogue_model__unpack(NULL, blen, b);
		PQfreemem(b);
		if (!out->msgs[i]) {
			PQclear(res);
			plan_catalogue_release(out);
			return pw_fail(PW_ERR_INVALID, errbuf, errlen, "catalogue row %zu does not unpack", i);
		}
		out->n = i + 1;
		nops += out->msgs[i]->n_ops;
		nnames += out->msgs[i]->n_platforms + out->msgs[i]->n_configs;
	}
	PQclear(res);
	res = NULL;
	out->ops = calloc(nops + 1, sizeof *out->ops);
	out->names = calloc(nnames + 1, sizeof *out->names);
	if (!out->ops || !out->names)
		goto nomem;
	size_t o = 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		const Perfwatch__V1__CatalogueModel *m = out->msgs[i];
		pw_plan_model *pm = &out->models[i];
		pm->model = m->model;
		pm->family = m->family;
		pm->fingerprint = m->hlo_fingerprint;
		pm->spend_share = m->spend_share;
		pm->platforms = out->names + k;
		pm->nplatforms = m->n_platforms;
		for (size_t j = 0; j < m->n_platforms; j++)
			out->names[k++] = m->platforms[j];
		pm->configs = out->names + k;
		pm->nconfigs = m->n_configs;
		for (size_t j = 0; j < m->n_configs; j++)
			out->names[k++] = m->configs[j];
		pm->ops = out->ops + o;
		for (size_t j = 0; j < m->n_ops; j++) {
			const Perfwatch__V1__CatalogueOp *op = m->ops[j];
			uint32_t ci = 0;
			while (ci < m->n_configs && strcmp(m->configs[ci], op->config) != 0)
				ci++;
			out->ops[o++] = (pw_plan_op){op->op, op->shape ? op->shape : "", ci, op->calls, op->bytes, op->flops};
		}
		pm->nops = m->n_ops;
	}
	out->nops = o;
	return PW_OK;
nomem:
	if (res)
		PQclear(res);
	plan_catalogue_release(out);
	return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "loading the catalogue: out of memory");
}

void plan_platforms_release(plan_platforms *p)
{
	if (!p)
		return;
	if (p->res)
		PQclear(p->res);
	free(p->p);
	*p = (plan_platforms){0};
}

pw_status plan_platforms_load(pw_pg *pg, double tpu_sigma, double gpu_sigma, plan_platforms *out,
                              char *errbuf, size_t errlen)
{
	*out = (plan_platforms){0};
	pw_status st = pw_pg_exec(pg,
	                          "SELECT p.platform, p.chips, p.peak_hbm_gb_s_chip, p.achieved_bw_fraction, p.mxu_lanes, "
	                          "p.peak_tflops_bf16_chip, p.peak_tflops_int8_chip, coalesce(c.chip_hours_per_week, 0), "
	                          "coalesce(c.sigma_pct, 0) FROM perfwatch.platforms p "
	                          "LEFT JOIN perfwatch.platform_capacity c USING (platform) ORDER BY p.platform",
	                          0, NULL, &out->res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	int n = PQntuples(out->res);
	out->p = calloc((size_t)n + 1, sizeof *out->p);
	if (!out->p) {
		plan_platforms_release(out);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "loading platforms: out of memory");
	}
	for (int i = 0; i < n; i++) {
		PGresult *r = out->res;
		uint32_t lanes = (uint32_t)strtoul(PQgetvalue(r, i, 4), NULL, 10);
		double sigma = dbl(r, i, 8);
		out->p[i] = (pw_plan_platform){
			.facts = {PQgetvalue(r, i, 0), (uint32_t)strtoul(PQgetvalue(r, i, 1), NULL, 10), dbl(r, i, 2),
			          dbl(r, i, 3), lanes, dbl(r, i, 5), dbl(r, i, 6)},
			.sigma_pct = sigma > 0 ? sigma : lanes > 0 ? tpu_sigma : gpu_sigma,
			.capacity_chip_h = dbl(r, i, 7),
		};
	}
	out->n = (size_t)n;
	return PW_OK;
}

void plan_cl_view(const Perfwatch__V1__CompilerCl *c, pw_plan_opcost *costs, pw_plan_cl *out)
{
	for (size_t k = 0; k < c->n_op_costs; k++) {
		const Perfwatch__V1__ClOpCost *o = c->op_costs[k];
		costs[k] = (pw_plan_opcost){o->op, o->platform ? o->platform : "", o->phase ? o->phase : "",
		                            o->min_seq_len, o->bytes_factor, o->flops_factor};
	}
	*out = (pw_plan_cl){c->cl_number, c->n_op_costs ? costs : NULL, c->n_op_costs};
}

void plan_cls_release(plan_cls *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->msgs && i < c->n; i++)
		perfwatch__v1__compiler_cl__free_unpacked(c->msgs[i], NULL);
	free(c->msgs);
	free(c->cls);
	free(c->costs);
	*c = (plan_cls){0};
}

/* The CLs of res's first column (packed CompilerCl) into out. */
static pw_status cls_from(PGresult *res, plan_cls *out, char *errbuf, size_t errlen)
{
	size_t n = (size_t)PQntuples(res), ncosts = 0;
	out->msgs = calloc(n + 1, sizeof *out->msgs);
	out->cls = calloc(n + 1, sizeof *out->cls);
	if (!out->msgs || !out->cls)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		size_t blen;
		unsigned char *b = PQunescapeBytea((const unsigned char *)PQgetvalue(res, (int)i, 0), &blen);
		if (!b)
			goto nomem;
		out->msgs[out->n] = perfwatch__v1__compiler_cl__unpack(NULL, blen, b);
		PQfreemem(b);
		if (out->msgs[out->n])
			ncosts += out->msgs[out->n++]->n_op_costs; /* stored after the door: unpacks */
	}
	PQclear(res);
	res = NULL;
	out->costs = calloc(ncosts + 1, sizeof *out->costs);
	if (!out->costs)
		goto nomem;
	size_t k = 0;
	for (size_t i = 0; i < out->n; i++) {
		plan_cl_view(out->msgs[i], out->costs + k, &out->cls[i]);
		k += out->msgs[i]->n_op_costs;
	}
	out->ncosts = k;
	return PW_OK;
nomem:
	if (res)
		PQclear(res);
	plan_cls_release(out);
	return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "loading CLs: out of memory");
}

pw_status plan_cls_load(pw_pg *pg, int64_t lo, int64_t hi, plan_cls *out, char *errbuf, size_t errlen)
{
	*out = (plan_cls){0};
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, lo);
	pw_pg_params_int(&p, hi);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec_params(pg,
	                                 "SELECT op_costs FROM perfwatch.planner_cls WHERE nop_costs > 0 AND cl_number > $1 "
	                                 "AND cl_number <= $2 ORDER BY cl_number",
	                                 &p, 0, &res, errbuf, errlen);
	return st == PW_OK ? cls_from(res, out, errbuf, errlen) : st;
}

pw_status plan_cls_unchecked(pw_pg *pg, int limit, plan_cls *out, char *errbuf, size_t errlen)
{
	*out = (plan_cls){0};
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, limit);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec_params(pg,
	                                 "SELECT op_costs FROM perfwatch.planner_cls WHERE NOT checked AND nop_costs > 0 "
	                                 "ORDER BY cl_number LIMIT $1",
	                                 &p, 0, &res, errbuf, errlen);
	return st == PW_OK ? cls_from(res, out, errbuf, errlen) : st;
}

void plan_history_release(plan_history *h)
{
	if (!h)
		return;
	if (h->noise_res)
		PQclear(h->noise_res);
	if (h->seen_res)
		PQclear(h->seen_res);
	if (h->ran_res)
		PQclear(h->ran_res);
	free(h->noise);
	free(h->seen);
	free(h->ran);
	*h = (plan_history){0};
}

/* plans made before the sweep: earlier days, and on its day the nightly before the RC */
#define EARLIER "(p.day < $1::date OR (p.day = $1::date AND $2::boolean AND p.kind = 'nightly'))"

pw_status plan_history_load(pw_pg *pg, int32_t day, bool rc, plan_history *out, char *errbuf,
                            size_t errlen)
{
	*out = (plan_history){0};
	char date[16];
	time_t t = (time_t)day * 86400;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(date, sizeof date, "%Y-%m-%d", &tm);
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, date);
	pw_pg_params_bool(&p, rc);
	pw_status st;
	/* noise floors: the latest active baseline of each latency series, median per model × platform */
	st = pw_pg_exec(pg,
	                "SELECT s.model, s.platform, percentile_cont(0.5) WITHIN GROUP (ORDER BY b.sigma_pct) "
	                "FROM (SELECT DISTINCT ON (series_id) series_id, state, sigma_pct FROM perfwatch.baselines "
	                "ORDER BY series_id, version DESC) b JOIN perfwatch.series s USING (series_id) "
	                "WHERE b.state = 'active' AND b.sigma_pct > 0 AND s.metric IN ('tpot_p50_ms', 'ttft_p50_ms') "
	                "GROUP BY s.model, s.platform",
	                0, NULL, &out->noise_res, errbuf, errlen);
	if (st == PW_OK)
		st = pw_pg_exec_params(pg,
		                       "SELECT DISTINCT ON (i.model) i.model, i.hlo_fingerprint, p.day - date '1970-01-01', "
		                       "(SELECT max(p2.day) - date '1970-01-01' FROM perfwatch.plan_items i2 JOIN perfwatch.plans p2 "
		                       " USING (plan_id) WHERE i2.model = i.model AND i2.hlo_fingerprint = i.hlo_fingerprint "
		                       " AND i2.tier IN ('T1', 'T2') AND (p2.day < $1::date OR (p2.day = $1::date AND $2::boolean "
		                       " AND p2.kind = 'nightly'))) "
		                       "FROM perfwatch.plan_items i JOIN perfwatch.plans p USING (plan_id) WHERE " EARLIER " "
		                       "ORDER BY i.model, p.day DESC, p.kind DESC",
		                       &p, 0, &out->seen_res, errbuf, errlen);
	if (st == PW_OK)
		st = pw_pg_exec_params(pg,
		                       "SELECT DISTINCT ON (i.model, i.platform, i.config) i.model, i.platform, i.config, p.cl_head "
		                       "FROM perfwatch.plan_items i JOIN perfwatch.plans p USING (plan_id) WHERE " EARLIER " "
		                       "ORDER BY i.model, i.platform, i.config, p.day DESC, p.kind DESC",
		                       &p, 0, &out->ran_res, errbuf, errlen);
	if (st != PW_OK) {
		plan_history_release(out);
		return st;
	}
	int nn = PQntuples(out->noise_res), ns = PQntuples(out->seen_res), nr = PQntuples(out->ran_res);
	out->noise = calloc((size_t)nn + 1, sizeof *out->noise);
	out->seen = calloc((size_t)ns + 1, sizeof *out->seen);
	out->ran = calloc((size_t)nr + 1, sizeof *out->ran);
	if (!out->noise || !out->seen || !out->ran) {
		plan_history_release(out);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "loading past plans: out of memory");
	}
	for (int i = 0; i < nn; i++)
		out->noise[i] = (pw_plan_noise){PQgetvalue(out->noise_res, i, 0), PQgetvalue(out->noise_res, i, 1),
		                                dbl(out->noise_res, i, 2)};
	for (int i = 0; i < ns; i++) {
		PGresult *r = out->seen_res;
		out->seen[i] = (pw_plan_seen){PQgetvalue(r, i, 0), PQgetvalue(r, i, 1),
		                              (int32_t)pw_pg_int(r, i, 2),
		                              PQgetisnull(r, i, 3) ? INT32_MIN : (int32_t)pw_pg_int(r, i, 3)};
	}
	out->min_ran_head = 0;
	for (int i = 0; i < nr; i++) {
		PGresult *r = out->ran_res;
		int64_t head = pw_pg_int(r, i, 3);
		out->ran[i] = (pw_plan_ran){PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), PQgetvalue(r, i, 2), head};
		if (out->min_ran_head == 0 || head < out->min_ran_head)
			out->min_ran_head = head;
	}
	out->nnoise = (size_t)nn;
	out->nseen = (size_t)ns;
	out->nran = (size_t)nr;
	return PW_OK;
}

/* The sweep of row 0 of res (sweep_id, kind, release, cl_head, day, day number) into out. */
static void sweep_row_from(PGresult *res, plan_sweep_row *out)
{
	snprintf(out->sweep_id, sizeof out->sweep_id, "%s", PQgetvalue(res, 0, 0));
	out->rc = strcmp(PQgetvalue(res, 0, 1), "rc") == 0;
	snprintf(out->release, sizeof out->release, "%s", PQgetvalue(res, 0, 2));
	out->cl_head = pw_pg_int(res, 0, 3);
	snprintf(out->day, sizeof out->day, "%s", PQgetvalue(res, 0, 4));
	out->day_num = (int32_t)strtol(PQgetvalue(res, 0, 5), NULL, 10);
}

#define SWEEP_COLUMNS "s.sweep_id, s.kind, s.release, s.cl_head, s.day::text, s.day - date '1970-01-01' "

pw_status plan_next_sweep(pw_pg *pg, plan_sweep_row *out, char *errbuf, size_t errlen)
{
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg,
	                          "SELECT " SWEEP_COLUMNS
	                          "FROM perfwatch.sweeps s WHERE NOT EXISTS (SELECT 1 FROM perfwatch.plans p WHERE "
	                          "p.sweep_id = s.sweep_id) ORDER BY s.day, s.kind = 'rc', s.sweep_id LIMIT 1",
	                          0, NULL, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return PW_ERR_NOT_FOUND;
	}
	sweep_row_from(res, out);
	PQclear(res);
	return PW_OK;
}

pw_status plan_sweep_get(pw_pg *pg, const char *sweep_id, plan_sweep_row *out, char *errbuf, size_t errlen)
{
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg, "SELECT " SWEEP_COLUMNS "FROM perfwatch.sweeps s WHERE s.sweep_id = $1", 1,
	                          (const char *const[]){sweep_id}, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return pw_fail(PW_ERR_NOT_FOUND, errbuf, errlen, "sweep \"%s\" not found", sweep_id);
	}
	sweep_row_from(res, out);
	PQclear(res);
	return PW_OK;
}

bool plan_line_stored(const pw_plan_line *l)
{
	return !(l->chip_h == 0 && l->planned_chip_h == 0 && l->deferred == 0);
}

double plan_similarity_stored(double similarity)
{
	return similarity > 1 ? 1 : similarity;
}

pw_status plan_store_latest_rc(pw_pg *pg, bool *found, double *spend_coverage, int64_t *day_unix_s,
                               char *errbuf, size_t errlen)
{
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg,
	                          "SELECT spend_coverage, (day - date '1970-01-01')::bigint * 86400 "
	                          "FROM perfwatch.plans WHERE kind = 'rc' ORDER BY day DESC, plan_id DESC LIMIT 1",
	                          0, NULL, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	*found = PQntuples(res) == 1;
	if (*found) {
		*spend_coverage = pw_pg_double(res, 0, 0);
		*day_unix_s = pw_pg_int(res, 0, 1);
	}
	PQclear(res);
	return PW_OK;
}

pw_status plan_inputs_state(pw_pg *pg, int64_t *models, int64_t *max_cl, char *errbuf, size_t errlen)
{
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg,
	                          "SELECT (SELECT count(*) FROM perfwatch.catalogue), "
	                          "(SELECT coalesce(max(cl_number), 0) FROM perfwatch.planner_cls)",
	                          0, NULL, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	*models = pw_pg_int(res, 0, 0);
	*max_cl = pw_pg_int(res, 0, 1);
	PQclear(res);
	return PW_OK;
}

pw_status plan_store_write(pw_pg *pg, const char *service, const plan_sweep_row *sw, const char *plan_id,
                           const pw_plan *plan, const char *const *item_fingerprints, double plan_ms,
                           const void *packed, size_t len, bool *written, char *errbuf, size_t errlen)
{
	*written = false;
	pw_status st = pw_pg_begin(pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, plan_id);
	pw_pg_params_text(&p, sw->sweep_id);
	pw_pg_params_text(&p, sw->rc ? "rc" : "nightly");
	pw_pg_params_text(&p, sw->release);
	pw_pg_params_int(&p, sw->cl_head);
	pw_pg_params_text(&p, sw->day);
	pw_pg_params_double(&p, plan->chip_h);
	pw_pg_params_double(&p, plan->naive_chip_h_week);
	pw_pg_params_double(&p, plan->spend_coverage);
	pw_pg_params_double(&p, plan->spend_measured);
	pw_pg_params_double(&p, plan->spend_inherited);
	pw_pg_params_int(&p, plan->t0_candidates);
	pw_pg_params_int(&p, plan->t0_pruned);
	pw_pg_params_int(&p, plan->t1_models);
	pw_pg_params_int(&p, plan->clusters);
	pw_pg_params_int(&p, (int64_t)plan->models);
	pw_pg_params_double(&p, plan_ms);
	PGresult *res = NULL;
	st = pw_pg_exec_params(pg,
	                       "INSERT INTO perfwatch.plans (plan_id, sweep_id, kind, release, cl_head, day, chip_hours, "
	                       "naive_chip_hours_week, spend_coverage, spend_measured, spend_inherited, t0_candidates, "
	                       "t0_pruned, t1_models, clusters, models, plan_ms) VALUES ($1, $2, $3, $4, $5, $6::date, $7, $8, "
	                       "$9, $10, $11, $12, $13, $14, $15, $16, $17) ON CONFLICT (plan_id) DO NOTHING RETURNING 1",
	                       &p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	bool inserted = PQntuples(res) == 1;
	PQclear(res);
	if (!inserted) {
		pw_pg_rollback(pg, NULL, 0);
		return PW_OK; /* stored by an earlier run: its outbox row went with it */
	}
	for (size_t i = 0; i < plan->nitems && st == PW_OK; i++) {
		const pw_plan_item *it = &plan->items[i];
		pw_pg_params q;
		pw_pg_params_init(&q);
		pw_pg_params_text(&q, plan_id);
		pw_pg_params_text(&q, it->model);
		pw_pg_params_text(&q, it->platform);
		pw_pg_params_text(&q, it->config);
		pw_pg_params_int(&q, it->repeats);
		pw_pg_params_text(&q, pw_plan_tier_name(it->tier));
		pw_pg_params_bool(&q, it->top);
		pw_pg_params_double(&q, it->mde_pct);
		pw_pg_params_double(&q, it->sigma_pct);
		pw_pg_params_text(&q, item_fingerprints[i]);
		st = pw_pg_exec_params(pg,
		                       "INSERT INTO perfwatch.plan_items (plan_id, model, platform, config, repeats, tier, top, "
		                       "mde_pct, sigma_pct, hlo_fingerprint) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
		                       &q, 0, NULL, errbuf, errlen);
	}
	for (size_t i = 0; i < plan->ninherits && st == PW_OK; i++) {
		const pw_plan_inherit *ih = &plan->inherits[i];
		pw_pg_params q;
		pw_pg_params_init(&q);
		pw_pg_params_text(&q, plan_id);
		pw_pg_params_text(&q, ih->model);
		pw_pg_params_text(&q, ih->representative);
		pw_pg_params_double(&q, plan_similarity_stored(ih->similarity));
		pw_pg_params_text(&q, ih->fingerprint);
		pw_pg_params_text(&q, ih->representative_fingerprint);
		pw_pg_params_bool(&q, ih->measured);
		st = pw_pg_exec_params(pg,
		                       "INSERT INTO perfwatch.plan_inheritances (plan_id, model, representative, similarity, "
		                       "hlo_fingerprint, representative_fingerprint, representative_measured) "
		                       "VALUES ($1, $2, $3, $4, $5, $6, $7)",
		                       &q, 0, NULL, errbuf, errlen);
	}
	for (int t = 0; t < PW_PLAN_TIERS && st == PW_OK; t++) {
		const pw_plan_line *l = &plan->lines[t];
		if (!plan_line_stored(l))
			continue;
		pw_pg_params q;
		pw_pg_params_init(&q);
		pw_pg_params_text(&q, plan_id);
		pw_pg_params_text(&q, pw_plan_tier_name((pw_plan_tier)t));
		pw_pg_params_double(&q, l->chip_h);
		pw_pg_params_double(&q, l->planned_chip_h);
		pw_pg_params_int(&q, l->points);
		pw_pg_params_int(&q, l->repeats);
		pw_pg_params_int(&q, l->models);
		pw_pg_params_int(&q, l->deferred);
		st = pw_pg_exec_params(pg,
		                       "INSERT INTO perfwatch.plan_lines (plan_id, tier, chip_hours, planned_chip_hours, points, "
		                       "repeats, models, deferred) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
		                       &q, 0, NULL, errbuf, errlen);
	}
	if (st == PW_OK)
		st = pw_outbox_add(pg, service, plan_id, PW_TOPIC_PLANS, plan_id, packed, len, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	if ((st = pw_pg_commit(pg, errbuf, errlen)) != PW_OK)
		return st;
	*written = true;
	return PW_OK;
fail:
	pw_pg_rollback(pg, NULL, 0);
	return st;
}
