/*
 * plan.c: the planner's decisions (plan.h, docs/planner.md).
 *
 * Order of work in pw_plan_make: index the past results; order the
 * catalogue by spend; build every model's signature; choose T1 (the top-K,
 * then by spend every model that inherits from no T1 member until the spend
 * gated reaches the target, plus every model over the spend floor), keeping
 * each other model's best T1 representative up to date as members join;
 * then for a nightly, T0's candidates pruned by the static check over the
 * CLs since each benchmark's last run; for an RC, T1's items, the program
 * clusters of the rest (T2's quarter of representatives), the rotation's
 * quarter, capacity trims, the reserve; then the lines and the spend gated.
 */
#include "plan.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pw_stats.h"

void pw_plan_params_default(pw_plan_params *p)
{
	*p = (pw_plan_params){
		.t1_top = 20,
		.t1_max = 120,
		.t1_spend_floor = 0.005,
		.coverage_target = 0.955,
		.similarity = 0.95,
		.mde_top_pct = 1.0,
		.mde_rest_pct = 3.0,
		.mde_t0_pct = 3.0,
		.alpha = 0.05,
		.power = 0.9,
		.n_max = 8,
		.t0_n_max = 1,
		.tail_configs = 2,
		.rotation_days = 28,
		.relevance_min_pct = 0.25,
		.reserve_chip_h = 1100,
		.repeat_chip_h = 0.25,
		.naive_repeats = 5,
		.naive_sweeps = 8,
	};
}

const char *pw_plan_tier_name(pw_plan_tier t)
{
	switch (t) {
	case PW_PLAN_T0: return "T0";
	case PW_PLAN_T1: return "T1";
	case PW_PLAN_T2: return "T2";
	case PW_PLAN_TAIL: return "tail";
	case PW_PLAN_RESERVE: return "reserve";
	case PW_PLAN_TIERS: break;
	}
	return "unknown";
}

/* ---- n per tier ----------------------------------------------------------------------- */

pw_status pw_plan_repeats(double sigma_pct, double mde_pct, bool t0, const pw_plan_params *p,
                          uint32_t *n, double *mde_pct_out)
{
	if (!(sigma_pct > 0) || !(mde_pct > 0) || !isfinite(sigma_pct) || !isfinite(mde_pct) || !p ||
	    p->n_max < 3 || p->t0_n_max < 1 || !(p->alpha > 0 && p->alpha < 1) ||
	    !(p->power > p->alpha / 2 && p->power < 1))
		return PW_ERR_INVALID;
	uint32_t cap = t0 ? p->t0_n_max : p->n_max;
	/*
	 * n from the one function that chooses it (pw_stats_required_n): T0 at
	 * least 1; T1 at least 2 plus its repeat of margin, max(3, ⌈n⌉ + 1).
	 * With the inputs checked above, PW_ERR_INVALID from it means an n
	 * beyond PW_POWER_MAX_N: above any cap, so the cap and the MDE it reaches.
	 */
	unsigned need;
	pw_status st = pw_stats_required_n(sigma_pct, mde_pct, p->alpha, p->power, t0 ? 1u : 2u, &need);
	if (st != PW_OK && st != PW_ERR_INVALID)
		return st;
	if (st == PW_OK) {
		uint64_t r = t0 ? need : (uint64_t)need + 1;
		if (r <= cap) {
			*n = (uint32_t)r;
			*mde_pct_out = mde_pct;
			return PW_OK;
		}
	}
	*n = cap;
	size_t eff = t0 ? cap : cap - 1; /* T1 keeps its repeat of margin */
	return pw_stats_power_mde(sigma_pct, eff, p->alpha, p->power, false, mde_pct_out);
}

/* ---- signatures and similarity --------------------------------------------------------- */

typedef struct sig_entry {
	uint64_t key;
	double v;
} sig_entry;

typedef struct sig {
	sig_entry *e;
	size_t n;
} sig;

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ 0xff) * 1099511628211ull; /* a separator so that "ab"+"c" ≠ "a"+"bc" */
}

static int cmp_entry(const void *a, const void *b)
{
	uint64_t x = ((const sig_entry *)a)->key, y = ((const sig_entry *)b)->key;
	return x < y ? -1 : x > y;
}

/* The normalised per-op costs of m, keys sorted and merged; PW_ERR_NOMEM. */
static pw_status sig_build(const pw_plan_model *m, sig *s)
{
	s->n = 0;
	s->e = malloc((2 * m->nops + 1) * sizeof *s->e);
	if (!s->e)
		return PW_ERR_NOMEM;
	double tb = 0, tf = 0;
	for (size_t i = 0; i < m->nops; i++) {
		tb += m->ops[i].bytes * m->ops[i].calls;
		tf += m->ops[i].flops * m->ops[i].calls;
	}
	for (size_t i = 0; i < m->nops; i++) {
		const pw_plan_op *o = &m->ops[i];
		const char *cfg = o->config < m->nconfigs ? m->configs[o->config] : "";
		uint64_t h = fnv(fnv(fnv(1469598103934665603ull, o->op), o->shape), cfg);
		if (tb > 0)
			s->e[s->n++] = (sig_entry){fnv(h, "bytes"), o->bytes * o->calls / tb};
		if (tf > 0)
			s->e[s->n++] = (sig_entry){fnv(h, "flops"), o->flops * o->calls / tf};
	}
	qsort(s->e, s->n, sizeof *s->e, cmp_entry);
	size_t w = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (w > 0 && s->e[w - 1].key == s->e[i].key)
			s->e[w - 1].v += s->e[i].v;
		else
			s->e[w++] = s->e[i];
	}
	s->n = w;
	return PW_OK;
}

static double sig_similarity(const sig *a, const sig *b)
{
	double mn = 0, mx = 0;
	size_t i = 0, j = 0;
	while (i < a->n || j < b->n) {
		if (j >= b->n || (i < a->n && a->e[i].key < b->e[j].key)) {
			mx += a->e[i++].v;
		} else if (i >= a->n || b->e[j].key < a->e[i].key) {
			mx += b->e[j++].v;
		} else {
			double x = a->e[i++].v, y = b->e[j++].v;
			mn += x < y ? x : y;
			mx += x < y ? y : x;
		}
	}
	return mx > 0 ? mn / mx : 0;
}

double pw_plan_similarity(const pw_plan_model *a, const pw_plan_model *b)
{
	sig sa = {0}, sb = {0};
	double r = NAN;
	if (sig_build(a, &sa) == PW_OK && sig_build(b, &sb) == PW_OK)
		r = sig_similarity(&sa, &sb);
	free(sa.e);
	free(sb.e);
	return r;
}

/* ---- the static check ----------------------------------------------------------------- */

static bool cost_applies(const pw_plan_opcost *c, const char *op, const char *platform,
                         const pw_roofline_config *cfg)
{
	if (!c->op || strcmp(c->op, op) != 0)
		return false;
	if (c->platform && c->platform[0] && strcmp(c->platform, platform) != 0)
		return false;
	if (c->phase && c->phase[0] && strcmp(c->phase, cfg->decode ? "decode" : "prefill") != 0)
		return false;
	return cfg->seq_len >= c->min_seq_len;
}

double pw_plan_cl_delta_pct(const pw_plan_model *m, uint32_t config, const pw_plan_platform *pl,
                            const pw_plan_cl *cl)
{
	pw_roofline_config cfg;
	if (!m || !pl || !cl || config >= m->nconfigs ||
	    pw_roofline_config_parse(m->configs[config], &cfg) != PW_OK)
		return NAN;
	double before = 0, after = 0;
	bool touched = false;
	for (size_t i = 0; i < m->nops; i++) {
		const pw_plan_op *o = &m->ops[i];
		if (o->config != config)
			continue;
		double t = pw_roofline_op_us(&pl->facts, &cfg, o->bytes, o->flops);
		if (!isfinite(t))
			return NAN;
		double bf = 1, ff = 1;
		for (size_t k = 0; k < cl->ncosts; k++)
			if (cost_applies(&cl->costs[k], o->op, pl->facts.name, &cfg)) {
				bf *= cl->costs[k].bytes_factor;
				ff *= cl->costs[k].flops_factor;
				touched = true;
			}
		double t2 = (bf == 1 && ff == 1) ? t : pw_roofline_op_us(&pl->facts, &cfg, o->bytes * bf, o->flops * ff);
		if (!isfinite(t2))
			return NAN;
		before += t * o->calls;
		after += t2 * o->calls;
	}
	if (!touched || !(before > 0))
		return 0;
	return (after - before) / before * 100;
}

static bool model_has_op(const pw_plan_model *m, const pw_plan_cl *cl)
{
	for (size_t k = 0; k < cl->ncosts; k++)
		for (size_t i = 0; i < m->nops; i++)
			if (cl->costs[k].op && strcmp(cl->costs[k].op, m->ops[i].op) == 0)
				return true;
	return false;
}

static const pw_plan_platform *platform_find(const pw_plan_platform *ps, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ps[i].facts.name, name) == 0)
			return &ps[i];
	return NULL;
}

static bool relevant(const pw_plan_model *m, uint32_t config, const pw_plan_platform *pl,
                     const pw_plan_cl *cl, const pw_plan_params *p)
{
	if (!model_has_op(m, cl))
		return false;
	double d = pw_plan_cl_delta_pct(m, config, pl, cl);
	return isfinite(d) && fabs(d) >= p->relevance_min_pct;
}

pw_status pw_plan_cl_check(const pw_plan_model *models, size_t nmodels,
                           const pw_plan_platform *platforms, size_t nplatforms,
                           const pw_plan_cl *cl, const pw_plan_params *p, char ***globs,
                           size_t *nglobs)
{
	*globs = NULL;
	*nglobs = 0;
	size_t cap = 0;
	for (size_t i = 0; i < nmodels; i++) {
		const pw_plan_model *m = &models[i];
		if (!model_has_op(m, cl))
			continue;
		for (size_t j = 0; j < m->nplatforms; j++) {
			const pw_plan_platform *pl = platform_find(platforms, nplatforms, m->platforms[j]);
			if (!pl)
				continue;
			for (uint32_t c = 0; c < m->nconfigs; c++) {
				if (!relevant(m, c, pl, cl, p))
					continue;
				if (*nglobs == cap) {
					size_t nc = cap ? 2 * cap : 16;
					char **g = realloc(*globs, nc * sizeof *g);
					if (!g)
						goto nomem;
					*globs = g;
					cap = nc;
				}
				size_t len = strlen(m->model) + strlen(m->platforms[j]) + strlen(m->configs[c]) + 3;
				char *s = malloc(len);
				if (!s)
					goto nomem;
				snprintf(s, len, "%s/%s/%s", m->model, m->platforms[j], m->configs[c]);
				(*globs)[(*nglobs)++] = s;
			}
		}
	}
	return PW_OK;
nomem:
	for (size_t i = 0; i < *nglobs; i++)
		free((*globs)[i]);
	free(*globs);
	*globs = NULL;
	*nglobs = 0;
	return PW_ERR_NOMEM;
}

/* ---- indexes over past results ---------------------------------------------------------- */

static int cmp_noise(const void *a, const void *b)
{
	const pw_plan_noise *x = *(const pw_plan_noise *const *)a, *y = *(const pw_plan_noise *const *)b;
	int c = strcmp(x->model, y->model);
	return c ? c : strcmp(x->platform, y->platform);
}

static int cmp_seen(const void *a, const void *b)
{
	return strcmp((*(const pw_plan_seen *const *)a)->model, (*(const pw_plan_seen *const *)b)->model);
}

static int cmp_ran(const void *a, const void *b)
{
	const pw_plan_ran *x = *(const pw_plan_ran *const *)a, *y = *(const pw_plan_ran *const *)b;
	int c = strcmp(x->model, y->model);
	if (!c)
		c = strcmp(x->platform, y->platform);
	return c ? c : strcmp(x->config, y->config);
}

typedef struct ctx {
	const pw_plan_inputs *in;
	const pw_plan_params *p;
	const pw_plan_noise **noise;
	const pw_plan_seen **seen;
	const pw_plan_ran **ran;
	size_t *order;        /* models by spend, descending */
	sig *sigs;
	bool *t1, *top;
	long *best;           /* best T1 (or, later, cluster) representative; -1 none */
	double *best_sim;
	bool *measured;
	pw_plan *out;
	size_t items_cap, inherits_cap;
} ctx;

static double sigma_of(const ctx *c, const pw_plan_model *m, const pw_plan_platform *pl)
{
	pw_plan_noise key = {m->model, pl->facts.name, 0};
	const pw_plan_noise *kp = &key;
	const pw_plan_noise **f = c->in->nnoise ? bsearch(&kp, c->noise, c->in->nnoise, sizeof *c->noise, cmp_noise) : NULL;
	if (f && (*f)->sigma_pct > 0 && isfinite((*f)->sigma_pct))
		return (*f)->sigma_pct;
	return pl->sigma_pct;
}

/* The model's past measurement with its current program, or NULL. */
static const pw_plan_seen *seen_of(const ctx *c, const pw_plan_model *m)
{
	pw_plan_seen key = {m->model, NULL, 0, 0};
	const pw_plan_seen *kp = &key;
	const pw_plan_seen **f = c->in->nseen ? bsearch(&kp, c->seen, c->in->nseen, sizeof *c->seen, cmp_seen) : NULL;
	if (!f || ((*f)->fingerprint && m->fingerprint && strcmp((*f)->fingerprint, m->fingerprint) != 0))
		return NULL;
	return *f;
}

static bool ran_head(const ctx *c, const char *model, const char *platform, const char *config,
                     int64_t *head)
{
	pw_plan_ran key = {model, platform, config, 0};
	const pw_plan_ran *kp = &key;
	const pw_plan_ran **f = c->in->nran ? bsearch(&kp, c->ran, c->in->nran, sizeof *c->ran, cmp_ran) : NULL;
	if (!f)
		return false;
	*head = (*f)->cl_head;
	return true;
}

static const pw_plan_model *model_at(const ctx *c, size_t i)
{
	return &c->in->models[i];
}

/* ---- items -------------------------------------------------------------------------------- */

static pw_status add_item(ctx *c, size_t mi, const char *platform, const char *config,
                          uint32_t repeats, pw_plan_tier tier, bool top, double mde, double sigma)
{
	pw_plan *o = c->out;
	if (o->nitems == c->items_cap) {
		size_t nc = c->items_cap ? 2 * c->items_cap : 256;
		pw_plan_item *it = realloc(o->items, nc * sizeof *it);
		if (!it)
			return PW_ERR_NOMEM;
		o->items = it;
		c->items_cap = nc;
	}
	o->items[o->nitems++] = (pw_plan_item){model_at(c, mi)->model, platform, config, repeats, tier,
	                                       top, mde, sigma, mi};
	c->measured[mi] = true;
	return PW_OK;
}

static pw_status add_inherit(ctx *c, size_t mi, size_t ri, double sim)
{
	pw_plan *o = c->out;
	if (o->ninherits == c->inherits_cap) {
		size_t nc = c->inherits_cap ? 2 * c->inherits_cap : 64;
		pw_plan_inherit *v = realloc(o->inherits, nc * sizeof *v);
		if (!v)
			return PW_ERR_NOMEM;
		o->inherits = v;
		c->inherits_cap = nc;
	}
	const pw_plan_model *m = model_at(c, mi), *r = model_at(c, ri);
	o->inherits[o->ninherits++] = (pw_plan_inherit){m->model, r->model, m->fingerprint,
	                                                r->fingerprint, sim, false, mi};
	return PW_OK;
}

/* The model's items on one platform at a tier's MDE, every config or the first `ncfg`. */
static pw_status add_model_items(ctx *c, size_t mi, const pw_plan_platform *pl, size_t ncfg,
                                 pw_plan_tier tier, bool top, double mde, bool t0)
{
	const pw_plan_model *m = model_at(c, mi);
	double sigma = sigma_of(c, m, pl);
	uint32_t n;
	double reached;
	pw_status st = pw_plan_repeats(sigma, mde, t0, c->p, &n, &reached);
	if (st != PW_OK)
		return st;
	for (size_t k = 0; k < m->nconfigs && k < ncfg; k++)
		if ((st = add_item(c, mi, pl->facts.name, m->configs[k], n, tier, top, reached, sigma)) != PW_OK)
			return st;
	return PW_OK;
}

static bool serves_all(const pw_plan_model *rep, const pw_plan_model *m)
{
	for (size_t i = 0; i < m->nplatforms; i++) {
		bool found = false;
		for (size_t j = 0; j < rep->nplatforms && !found; j++)
			found = strcmp(rep->platforms[j], m->platforms[i]) == 0;
		if (!found)
			return false;
	}
	return true;
}

/* A new T1 member r: every other model's best representative may now be r. */
static void t1_join(ctx *c, size_t r)
{
	c->t1[r] = true;
	for (size_t i = 0; i < c->in->nmodels; i++) {
		if (c->t1[i] || !serves_all(model_at(c, r), model_at(c, i)))
			continue;
		double s = sig_similarity(&c->sigs[i], &c->sigs[r]);
		if (s > c->best_sim[i] || (s == c->best_sim[i] && c->best[i] >= 0 &&
		                           strcmp(model_at(c, r)->model, model_at(c, c->best[i])->model) < 0)) {
			c->best_sim[i] = s;
			c->best[i] = (long)r;
		}
	}
}

static bool inherits(const ctx *c, size_t i)
{
	return !c->t1[i] && c->best[i] >= 0 && c->best_sim[i] >= c->p->similarity;
}

static void choose_t1(ctx *c)
{
	const pw_plan_params *p = c->p;
	size_t n = c->in->nmodels, members = 0;
	double gated = 0;
	for (size_t k = 0; k < n && members < p->t1_top && members < p->t1_max; k++) {
		size_t i = c->order[k];
		c->top[i] = true;
		t1_join(c, i);
		members++;
	}
	for (size_t k = 0; k < n; k++) {
		size_t i = c->order[k];
		if (c->t1[i] || inherits(c, i))
			gated += model_at(c, i)->spend_share;
	}
	for (size_t k = 0; k < n && members < p->t1_max; k++) {
		size_t i = c->order[k];
		if (c->t1[i] || inherits(c, i))
			continue;
		double s = model_at(c, i)->spend_share;
		if (gated >= p->coverage_target && s < p->t1_spend_floor)
			break; /* ordered by spend: nobody later is over the floor either */
		/* joining gates its own spend and that of every model newly inheriting from it */
		double before = 0, after = 0;
		for (size_t j = 0; j < n; j++)
			if (!c->t1[j] && inherits(c, j))
				before += model_at(c, j)->spend_share;
		t1_join(c, i);
		members++;
		for (size_t j = 0; j < n; j++)
			if (!c->t1[j] && inherits(c, j))
				after += model_at(c, j)->spend_share;
		gated += s + (after - before);
	}
	c->out->t1_models = (uint32_t)members;
}

/* ---- the plan ---------------------------------------------------------------------------- */

typedef struct by_spend {
	double spend;
	const char *name;
	size_t i;
} by_spend;

static int cmp_spend(const void *a, const void *b)
{
	const by_spend *x = a, *y = b;
	if (x->spend != y->spend)
		return x->spend > y->spend ? -1 : 1;
	return strcmp(x->name, y->name);
}

typedef struct due {
	size_t i;
	int32_t last;
	const char *name;
} due;

static int cmp_due(const void *a, const void *b)
{
	const due *x = a, *y = b;
	if (x->last != y->last)
		return x->last < y->last ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Takes the quarter of list[0..n) oldest first, and everyone due sooner; marks take[]. */
static size_t quarter(due *list, size_t n, int32_t today, int32_t rotation_days, bool *take)
{
	qsort(list, n, sizeof *list, cmp_due);
	size_t q = (n + 3) / 4, k = 0;
	for (size_t j = 0; j < n; j++) {
		bool must = list[j].last != INT32_MIN && today - list[j].last > rotation_days - 7; /* 28 days old at the next RC */
		if (j < q || must) {
			take[list[j].i] = true;
			k++;
		}
	}
	return k;
}

static double item_chip_h(const pw_plan_item *it, const pw_plan_params *p)
{
	return it->repeats * p->repeat_chip_h;
}

/* Drops rotation, then T2, items on a platform over its capacity. */
static void trim_capacity(ctx *c)
{
	const pw_plan_inputs *in = c->in;
	pw_plan *o = c->out;
	for (size_t pi = 0; pi < in->nplatforms; pi++) {
		const pw_plan_platform *pl = &in->platforms[pi];
		if (!(pl->capacity_chip_h > 0))
			continue;
		/* what the week's nightlies and the reserve hold of it */
		double held = c->p->reserve_chip_h / (double)in->nplatforms, used = 0;
		for (size_t k = 0; k < in->nmodels && k < c->p->t1_top; k++) {
			const pw_plan_model *m = model_at(c, c->order[k]);
			for (size_t j = 0; j < m->nplatforms; j++)
				if (strcmp(m->platforms[j], pl->facts.name) == 0)
					held += 7 * 2 * c->p->repeat_chip_h;
		}
		for (size_t k = 0; k < o->nitems; k++)
			if (strcmp(o->items[k].platform, pl->facts.name) == 0)
				used += item_chip_h(&o->items[k], c->p);
		for (int t = PW_PLAN_TAIL; t >= PW_PLAN_T2 && used + held > pl->capacity_chip_h; t--) {
			for (size_t k = o->nitems; k-- > 0 && used + held > pl->capacity_chip_h;) {
				pw_plan_item *it = &o->items[k];
				if ((int)it->tier != t || strcmp(it->platform, pl->facts.name) != 0 || it->repeats == 0)
					continue;
				used -= item_chip_h(it, c->p);
				it->repeats = 0; /* removed below */
				o->lines[t].deferred++;
			}
		}
	}
	size_t w = 0;
	for (size_t k = 0; k < o->nitems; k++)
		if (o->items[k].repeats > 0)
			o->items[w++] = o->items[k];
	o->nitems = w;
}

static pw_status plan_nightly(ctx *c)
{
	const pw_plan_inputs *in = c->in;
	const pw_plan_params *p = c->p;
	pw_plan *o = c->out;
	const int64_t head = in->sweep->cl_head;
	for (size_t k = 0; k < in->nmodels && k < p->t1_top; k++) {
		size_t mi = c->order[k];
		const pw_plan_model *m = model_at(c, mi);
		/* T0's configs: the first decode and the first prefill */
		long cfgs[2] = {-1, -1};
		for (size_t j = 0; j < m->nconfigs; j++) {
			pw_roofline_config rc;
			if (pw_roofline_config_parse(m->configs[j], &rc) != PW_OK)
				continue;
			long *slot = rc.decode ? &cfgs[0] : &cfgs[1];
			if (*slot < 0)
				*slot = (long)j;
		}
		for (size_t j = 0; j < m->nplatforms; j++) {
			const pw_plan_platform *pl = platform_find(in->platforms, in->nplatforms, m->platforms[j]);
			if (!pl)
				continue;
			double sigma = sigma_of(c, m, pl);
			uint32_t n;
			double reached;
			pw_status st = pw_plan_repeats(sigma, p->mde_t0_pct, true, p, &n, &reached);
			if (st != PW_OK)
				return st;
			for (int q = 0; q < 2; q++) {
				if (cfgs[q] < 0)
					continue;
				const char *cfg = m->configs[cfgs[q]];
				o->t0_candidates++;
				o->lines[PW_PLAN_T0].planned_chip_h += n * p->repeat_chip_h;
				int64_t last;
				bool run = !ran_head(c, m->model, pl->facts.name, cfg, &last); /* never run: no baseline yet */
				for (size_t x = 0; x < in->ncls && !run; x++) {
					const pw_plan_cl *cl = &in->cls[x];
					if (cl->cl_number <= last || cl->cl_number > head)
						continue;
					run = relevant(m, (uint32_t)cfgs[q], pl, cl, p);
				}
				if (!run) {
					o->t0_pruned++;
					continue;
				}
				if ((st = add_item(c, mi, pl->facts.name, cfg, n, PW_PLAN_T0, true, reached, sigma)) != PW_OK)
					return st;
			}
		}
	}
	return PW_OK;
}

static pw_status plan_rc(ctx *c)
{
	const pw_plan_inputs *in = c->in;
	const pw_plan_params *p = c->p;
	pw_plan *o = c->out;
	size_t n = in->nmodels;
	pw_status st = PW_OK;
	/* T1: every platform × every config */
	for (size_t k = 0; k < n; k++) {
		size_t mi = c->order[k];
		if (!c->t1[mi])
			continue;
		const pw_plan_model *m = model_at(c, mi);
		for (size_t j = 0; j < m->nplatforms; j++) {
			const pw_plan_platform *pl = platform_find(in->platforms, in->nplatforms, m->platforms[j]);
			if (pl && (st = add_model_items(c, mi, pl, m->nconfigs, PW_PLAN_T1, c->top[mi],
			                                c->top[mi] ? p->mde_top_pct : p->mde_rest_pct, false)) != PW_OK)
				return st;
		}
	}
	/* program clusters of the models that inherit from no T1 member, leaders by spend */
	size_t *leaders = malloc((n + 1) * sizeof *leaders), nleaders = 0;
	due *list = malloc((n + 1) * sizeof *list);
	bool *take = calloc(n + 1, sizeof *take), *t2 = calloc(n + 1, sizeof *t2);
	if (!leaders || !list || !take || !t2) {
		st = PW_ERR_NOMEM;
		goto out;
	}
	for (size_t k = 0; k < n; k++) {
		size_t mi = c->order[k];
		if (c->t1[mi] || inherits(c, mi))
			continue;
		long joined = -1;
		double js = 0;
		for (size_t l = 0; l < nleaders && joined < 0; l++) {
			if (!serves_all(model_at(c, leaders[l]), model_at(c, mi)))
				continue;
			double s = sig_similarity(&c->sigs[mi], &c->sigs[leaders[l]]);
			if (s >= p->similarity) {
				joined = (long)leaders[l];
				js = s;
			}
		}
		if (joined >= 0) {
			c->best[mi] = joined;
			c->best_sim[mi] = js;
		} else {
			leaders[nleaders++] = mi;
			c->best[mi] = -1;
			c->best_sim[mi] = 0;
		}
	}
	o->clusters = (uint32_t)nleaders;
	/* T2: a quarter of the representatives a week, every platform × config, oldest full measurement first */
	for (size_t l = 0; l < nleaders; l++) {
		const pw_plan_seen *s = seen_of(c, model_at(c, leaders[l]));
		list[l] = (due){leaders[l], s ? s->full_day : INT32_MIN, model_at(c, leaders[l])->model};
	}
	memset(take, 0, n * sizeof *take);
	quarter(list, nleaders, in->sweep->day, p->rotation_days, take);
	for (size_t l = 0; l < nleaders; l++) {
		size_t mi = leaders[l];
		if (!take[mi])
			continue;
		t2[mi] = true;
		const pw_plan_model *m = model_at(c, mi);
		for (size_t j = 0; j < m->nplatforms; j++) {
			const pw_plan_platform *pl = platform_find(in->platforms, in->nplatforms, m->platforms[j]);
			if (pl && (st = add_model_items(c, mi, pl, m->nconfigs, PW_PLAN_T2, false, p->mde_rest_pct, false)) != PW_OK)
				goto out;
		}
	}
	/* rotation: every model outside T1 (T2's this week aside) in quarters, primary platform × the first configs */
	size_t nl = 0;
	for (size_t k = 0; k < n; k++) {
		size_t mi = c->order[k];
		if (c->t1[mi] || t2[mi])
			continue;
		const pw_plan_seen *s = seen_of(c, model_at(c, mi));
		list[nl++] = (due){mi, s ? s->day : INT32_MIN, model_at(c, mi)->model};
	}
	memset(take, 0, n * sizeof *take);
	o->rotation_models = (uint32_t)quarter(list, nl, in->sweep->day, p->rotation_days, take);
	for (size_t k = 0; k < nl; k++) {
		size_t mi = list[k].i;
		if (!take[mi])
			continue;
		const pw_plan_model *m = model_at(c, mi);
		const pw_plan_platform *pl = m->nplatforms ? platform_find(in->platforms, in->nplatforms, m->platforms[0]) : NULL;
		if (pl && (st = add_model_items(c, mi, pl, p->tail_configs, PW_PLAN_TAIL, false, p->mde_rest_pct, false)) != PW_OK)
			goto out;
	}
	trim_capacity(c);
	memset(c->measured, 0, n * sizeof *c->measured);
	for (size_t k = 0; k < o->nitems; k++)
		c->measured[o->items[k].model_index] = true;
	o->lines[PW_PLAN_RESERVE].chip_h = o->lines[PW_PLAN_RESERVE].planned_chip_h = p->reserve_chip_h;
out:
	free(leaders);
	free(list);
	free(take);
	free(t2);
	return st;
}

void pw_plan_release(pw_plan *plan)
{
	if (!plan)
		return;
	free(plan->items);
	free(plan->inherits);
	*plan = (pw_plan){0};
}

pw_status pw_plan_make(const pw_plan_inputs *in, const pw_plan_params *p, pw_plan *out)
{
	*out = (pw_plan){0};
	if (!in || !p || !in->sweep || !in->sweep->sweep_id ||
	    (in->sweep->kind != PW_PLAN_NIGHTLY && in->sweep->kind != PW_PLAN_RC) ||
	    !(p->similarity > 0 && p->similarity <= 1) || !(p->repeat_chip_h > 0) || p->n_max < 3 ||
	    p->t0_n_max < 1 ||
	    p->rotation_days < 8)
		return PW_ERR_INVALID;
	size_t n = in->nmodels;
	ctx c = {.in = in, .p = p, .out = out};
	pw_status st = PW_ERR_NOMEM;
	c.noise = malloc((in->nnoise + 1) * sizeof *c.noise);
	c.seen = malloc((in->nseen + 1) * sizeof *c.seen);
	c.ran = malloc((in->nran + 1) * sizeof *c.ran);
	c.order = malloc((n + 1) * sizeof *c.order);
	c.sigs = calloc(n + 1, sizeof *c.sigs);
	c.t1 = calloc(n + 1, sizeof *c.t1);
	c.top = calloc(n + 1, sizeof *c.top);
	c.best = malloc((n + 1) * sizeof *c.best);
	c.best_sim = calloc(n + 1, sizeof *c.best_sim);
	c.measured = calloc(n + 1, sizeof *c.measured);
	if (!c.noise || !c.seen || !c.ran || !c.order || !c.sigs || !c.t1 || !c.top || !c.best ||
	    !c.best_sim || !c.measured)
		goto done;
	for (size_t i = 0; i < in->nnoise; i++)
		c.noise[i] = &in->noise[i];
	qsort(c.noise, in->nnoise, sizeof *c.noise, cmp_noise);
	for (size_t i = 0; i < in->nseen; i++)
		c.seen[i] = &in->seen[i];
	qsort(c.seen, in->nseen, sizeof *c.seen, cmp_seen);
	for (size_t i = 0; i < in->nran; i++)
		c.ran[i] = &in->ran[i];
	qsort(c.ran, in->nran, sizeof *c.ran, cmp_ran);
	for (size_t i = 0; i < n; i++) {
		c.order[i] = i;
		c.best[i] = -1;
		if (sig_build(&in->models[i], &c.sigs[i]) != PW_OK)
			goto done;
	}
	by_spend *bs = malloc((n + 1) * sizeof *bs);
	if (!bs)
		goto done;
	for (size_t i = 0; i < n; i++)
		bs[i] = (by_spend){in->models[i].spend_share, in->models[i].model, i};
	qsort(bs, n, sizeof *bs, cmp_spend);
	for (size_t i = 0; i < n; i++)
		c.order[i] = bs[i].i;
	free(bs);

	out->models = (uint32_t)n;
	choose_t1(&c);
	st = in->sweep->kind == PW_PLAN_NIGHTLY ? plan_nightly(&c) : plan_rc(&c);
	if (st != PW_OK)
		goto done;

	/* inheritances: from T1 members (and, on an RC, cluster representatives) */
	for (size_t k = 0; k < n; k++) {
		size_t i = c.order[k];
		if (c.t1[i] || c.best[i] < 0)
			continue;
		bool from_t1 = c.t1[c.best[i]];
		if (from_t1 && c.best_sim[i] < p->similarity)
			continue;
		if ((st = add_inherit(&c, i, (size_t)c.best[i], c.best_sim[i])) != PW_OK)
			goto done;
		out->inherits[out->ninherits - 1].measured = c.measured[c.best[i]];
	}
	/* lines and coverage */
	for (size_t k = 0; k < out->nitems; k++) {
		pw_plan_line *l = &out->lines[out->items[k].tier];
		l->chip_h += item_chip_h(&out->items[k], p);
		l->points++;
		l->repeats += out->items[k].repeats;
	}
	for (int t = PW_PLAN_T1; t <= PW_PLAN_TAIL; t++)
		out->lines[t].planned_chip_h = out->lines[t].chip_h; /* trimmed items are counted in .deferred */
	bool *counted = calloc(n + 1, sizeof *counted);
	if (!counted) {
		st = PW_ERR_NOMEM;
		goto done;
	}
	for (size_t k = 0; k < out->nitems; k++) {
		size_t i = out->items[k].model_index;
		if (!counted[i]) {
			counted[i] = true;
			out->lines[out->items[k].tier].models++;
			out->spend_measured += in->models[i].spend_share;
		}
	}
	free(counted);
	for (size_t i = 0; i < n; i++) {
		const pw_plan_model *m = &in->models[i];
		out->naive_chip_h_week += (double)m->nplatforms * m->nconfigs * p->naive_repeats *
		                          p->repeat_chip_h * p->naive_sweeps;
	}
	for (size_t k = 0; k < out->ninherits; k++)
		if (out->inherits[k].measured && !c.measured[out->inherits[k].model_index])
			out->spend_inherited += in->models[out->inherits[k].model_index].spend_share;
	out->spend_coverage = out->spend_measured + out->spend_inherited;
	for (int t = 0; t < PW_PLAN_TIERS; t++)
		out->chip_h += out->lines[t].chip_h;
	st = PW_OK;
done:
	if (st != PW_OK)
		pw_plan_release(out);
	if (c.sigs)
		for (size_t i = 0; i < n; i++)
			free(c.sigs[i].e);
	free(c.noise);
	free(c.seen);
	free(c.ran);
	free(c.order);
	free(c.sigs);
	free(c.t1);
	free(c.top);
	free(c.best);
	free(c.best_sim);
	free(c.measured);
	return st;
}
