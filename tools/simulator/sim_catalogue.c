/*
 * sim_catalogue.c: the simulated model catalogue and its CLs (sim_catalogue.h).
 *
 * Spend: the top 20 share 80% as k^-0.8, the rest 20% as k^-1 (k the rank).
 * Programs: models 0..5 are the simulator's built-in models (chat-8b first),
 * 6..19 and every non-variant after them synthetic (sim_model.c's
 * pw_sim_model_synthetic: some coincide in architecture, so share a
 * program); from rank 20 on, half the models are variants of an earlier
 * base — a fine-tune with a rank-16 adapter (the base's kernels, similarity
 * ≈ 0.98–0.99), a vocabulary change (≈ 0.95–0.97) or a re-headed one (kv
 * heads halved: another attention kernel, ≈ 0.6). The analytic costs of an
 * op are the ones §6.3 uses: weights streamed once a step, KV
 * 2·H_kv·d·s̄·B bytes, attention 4·H·d·s̄·B FLOPs in decode and 2·H·d·s² in
 * prefill, GEMMs 2·P_active FLOPs a token.
 */
#include "sim_catalogue.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfwatch/v1/compiler.pb-c.h"
#include "perfwatch/v1/plan.pb-c.h"
#include "sim_model.h"
#include "sim_rng.h"

#define NAME_LEN 64

struct pw_sim_cat_entry {
	char model[NAME_LEN], family[NAME_LEN], fingerprint[24];
	char shapes[PW_SIM_CAT_MAX_OPS][32];
	const char *platforms[PW_SIM_CAT_PLATFORMS];
	pw_plan_op ops[PW_SIM_CAT_CONFIGS * PW_SIM_CAT_MAX_OPS];
	pw_sim_cat_arch arch;
	uint32_t generation;
};

/* sim_model.c's datasheet figures for the four platforms of §1 */
static const char *const platform_names[PW_SIM_CAT_PLATFORMS] = {"v6e-4", "v5e-8", "ironwood-8", "b200-8"};

static void fill_platform(pw_plan_platform *out, const char *name)
{
	const pw_sim_platform *p = pw_sim_platform_find(name);
	*out = (pw_plan_platform){
		.facts = {p->name, p->chips, p->hbm_gbps, p->achieved_bw, p->lanes, p->tflops_bf16,
		          p->tflops_int8},
		.sigma_pct = pw_sim_class_sigma(p->cls) * 100,
		.capacity_chip_h = 0,
	};
}

static const char *const op_kinds[] = {"gemm", "attention_softmax_fused", "layernorm", "logits",
                                       "all_to_all", "moe_router", "embedding_lookup", "lora_adapter"};

/* The ops of one config, from the architecture; returns how many. */
static size_t config_ops(pw_sim_cat_entry *e, uint32_t cfg_index, const char *cfg_name, pw_plan_op *out)
{
	pw_roofline_config c;
	if (pw_roofline_config_parse(cfg_name, &c) != PW_OK)
		return 0;
	const pw_sim_cat_arch *a = &e->arch;
	double w = c.int8 ? 1 : 2;
	double tokens = c.decode ? c.batch : c.seq_len, s = c.seq_len, B = c.batch;
	double dm = (double)a->q_heads * a->head_dim, L = a->layers;
	double P = a->params_b * 1e9, A = a->active_b * 1e9;
	size_t n = 0;
	/* shapes: the kernel identity of each op */
	snprintf(e->shapes[0], sizeof e->shapes[0], "d%.0f", dm);
	snprintf(e->shapes[1], sizeof e->shapes[1], "h%ukv%ud%u", a->q_heads, a->kv_heads, a->head_dim);
	snprintf(e->shapes[2], sizeof e->shapes[2], "v%ud%.0f", a->vocab, dm);
	snprintf(e->shapes[3], sizeof e->shapes[3], "e64k8d%.0f", dm);
	snprintf(e->shapes[4], sizeof e->shapes[4], "t64x128");
	snprintf(e->shapes[5], sizeof e->shapes[5], "r%ud%.0f", a->lora_rank, dm);
	double wbytes = a->arch == PW_SIM_MOE && c.decode ? fmin(P, A * fmax(1, B / 4)) : P;
	out[n++] = (pw_plan_op){"gemm", e->shapes[0], cfg_index, a->layers, wbytes * w / L, 2 * A * tokens / L};
	double kv = 2.0 * a->kv_heads * a->head_dim * s * (c.decode ? B : 1) * w;
	double qo = c.decode ? 0 : 2.0 * a->q_heads * a->head_dim * s * w;
	double afl = c.decode ? 4.0 * a->q_heads * a->head_dim * s * B : 2.0 * a->q_heads * a->head_dim * s * s;
	out[n++] = (pw_plan_op){"attention_softmax_fused", e->shapes[1], cfg_index, a->layers, kv + qo, afl};
	out[n++] = (pw_plan_op){"layernorm", e->shapes[0], cfg_index, 2 * a->layers, 4 * tokens * dm, 8 * tokens * dm};
	out[n++] = (pw_plan_op){"logits", e->shapes[2], cfg_index, 1, a->vocab * dm * w,
	                        2.0 * a->vocab * dm * (c.decode ? B : 1)};
	if (a->arch == PW_SIM_MOE) {
		out[n++] = (pw_plan_op){"all_to_all", e->shapes[3], cfg_index, a->layers, 8 * tokens * dm, 0};
		out[n++] = (pw_plan_op){"moe_router", e->shapes[3], cfg_index, a->layers, 2 * tokens * dm, 128 * tokens * dm};
	}
	if (a->arch == PW_SIM_RANKING)
		out[n++] = (pw_plan_op){"embedding_lookup", e->shapes[4], cfg_index, 1, tokens * 64 * 128 * 4, tokens * 64 * 128};
	if (a->lora_rank > 0)
		out[n++] = (pw_plan_op){"lora_adapter", e->shapes[5], cfg_index, a->layers,
		                        8.0 * a->lora_rank * dm * 2, 16.0 * a->lora_rank * dm * tokens};
	return n;
}

static void build_ops(pw_sim_catalogue *c, size_t i)
{
	pw_sim_cat_entry *e = &c->entries[i];
	size_t n = 0;
	for (uint32_t k = 0; k < PW_SIM_CAT_CONFIGS; k++)
		n += config_ops(e, k, pw_sim_default_configs[k], e->ops + n);
	pw_plan_model *m = &c->models[i];
	m->ops = e->ops;
	m->nops = n;
	uint64_t h = PW_SIM_HASH_INIT;
	const pw_sim_cat_arch *a = &e->arch;
	h = pw_sim_hash_u64(h, (uint64_t)(a->params_b * 1000));
	h = pw_sim_hash_u64(h, (uint64_t)(a->active_b * 1000));
	h = pw_sim_hash_u64(h, ((uint64_t)a->layers << 40) ^ ((uint64_t)a->q_heads << 30) ^
	                               ((uint64_t)a->kv_heads << 20) ^ a->head_dim);
	h = pw_sim_hash_u64(h, ((uint64_t)a->vocab << 16) ^ a->lora_rank ^ ((uint64_t)a->arch << 60));
	h = pw_sim_hash_str(h, e->model); /* a fine-tune's weights differ: its fingerprint is its own */
	h = pw_sim_hash_u64(h, e->generation);
	snprintf(e->fingerprint, sizeof e->fingerprint, "hlo:%08x", (unsigned)(h >> 32));
}

static const uint32_t vocabs[] = {32000, 128256, 151936, 256000};

pw_status pw_sim_catalogue_new(size_t n, uint64_t seed, pw_sim_catalogue **out)
{
	*out = NULL;
	if (n < 20)
		return PW_ERR_INVALID;
	pw_sim_catalogue *c = calloc(1, sizeof *c);
	if (!c)
		return PW_ERR_NOMEM;
	c->models = calloc(n, sizeof *c->models);
	c->entries = calloc(n, sizeof *c->entries);
	if (!c->models || !c->entries) {
		pw_sim_catalogue_free(c);
		return PW_ERR_NOMEM;
	}
	c->n = n;
	c->seed = seed;
	c->nplatforms = PW_SIM_CAT_PLATFORMS;
	for (size_t p = 0; p < PW_SIM_CAT_PLATFORMS; p++)
		fill_platform(&c->platforms[p], platform_names[p]);

	static const char *const builtin[] = {"chat-8b", "rank-moe-110b", "chat-70b", "code-34b",
	                                      "embed-rank-2b", "vision-lm-13b"};
	double top = 0, rest = 0;
	for (size_t k = 1; k <= n; k++)
		*(k <= 20 ? &top : &rest) += k <= 20 ? pow((double)k, -0.8) : 1.0 / (double)k;
	size_t rank_x = n > 23 ? 23 : n - 1;
	for (size_t i = 0; i < n; i++) {
		pw_sim_cat_entry *e = &c->entries[i];
		pw_plan_model *m = &c->models[i];
		pw_sim_rng r;
		pw_sim_rng_init(&r, pw_sim_hash_u64(pw_sim_hash_u64(PW_SIM_HASH_INIT, seed), i));
		pw_sim_model_spec spec;
		long base = -1;
		int kind = 0; /* 0 base, 1 fine-tune, 2 vocabulary, 3 re-headed */
		if (i == rank_x) {
			base = 0;
			kind = 2;
		} else if (i >= 20 && pw_sim_rng_uniform(&r) < 0.5) {
			size_t lim = i < 60 ? i : (pw_sim_rng_uniform(&r) < 0.6 ? 60 : i);
			base = (long)(pw_sim_rng_next(&r) % lim);
			while (c->entries[base].arch.lora_rank > 0 || strstr(c->entries[base].model, "-ft"))
				base = (long)(pw_sim_rng_next(&r) % lim); /* a variant of a base, not of a variant */
			double u = pw_sim_rng_uniform(&r);
			kind = u < 0.55 ? 1 : u < 0.85 ? 2 : 3;
		}
		if (base >= 0) {
			e->arch = c->entries[base].arch;
			snprintf(e->family, sizeof e->family, "%s", c->entries[base].family);
			if (i == rank_x) {
				snprintf(e->model, sizeof e->model, "rank-x");
				e->arch.vocab = 151936;
			} else if (kind == 1) {
				e->arch.lora_rank = 16;
				snprintf(e->model, sizeof e->model, "%.40s-ft%03zu", c->entries[base].model, i);
			} else if (kind == 2) {
				uint32_t v = vocabs[pw_sim_rng_next(&r) % 4];
				e->arch.vocab = v != e->arch.vocab ? v : vocabs[(v == vocabs[0]) ? 1 : 0];
				snprintf(e->model, sizeof e->model, "%.40s-v%03zu", c->entries[base].model, i);
			} else {
				e->arch.kv_heads = e->arch.kv_heads > 1 ? e->arch.kv_heads / 2 : 2;
				snprintf(e->model, sizeof e->model, "%.40s-kv%03zu", c->entries[base].model, i);
			}
		} else {
			if (i < 6)
				pw_sim_model_builtin(builtin[i], &spec);
			else
				pw_sim_model_synthetic(i, &spec);
			e->arch = (pw_sim_cat_arch){spec.params_b, spec.active_b, spec.layers, spec.q_heads,
			                            spec.kv_heads, spec.head_dim,
			                            i == 0 ? 128256 : vocabs[pw_sim_rng_next(&r) % 4], 0, spec.arch};
			snprintf(e->model, sizeof e->model, "%s", spec.name);
			snprintf(e->family, sizeof e->family, "%s", spec.name);
		}
		/* primary platform first: chat-8b serves on v6e-4; the others by hash */
		size_t first = i == 0 ? 0 : pw_sim_rng_next(&r) % PW_SIM_CAT_PLATFORMS;
		for (size_t p = 0; p < PW_SIM_CAT_PLATFORMS; p++)
			e->platforms[p] = platform_names[(first + p) % PW_SIM_CAT_PLATFORMS];
		size_t k = i + 1;
		m->model = e->model;
		m->family = e->family;
		m->fingerprint = e->fingerprint;
		m->spend_share = k <= 20 ? 0.80 * pow((double)k, -0.8) / top : 0.20 / (double)k / rest;
		m->platforms = e->platforms;
		m->nplatforms = PW_SIM_CAT_PLATFORMS;
		m->configs = pw_sim_default_configs;
		m->nconfigs = PW_SIM_CAT_CONFIGS;
		build_ops(c, i);
	}
	*out = c;
	return PW_OK;
}

void pw_sim_catalogue_free(pw_sim_catalogue *c)
{
	if (!c)
		return;
	free(c->models);
	free(c->entries);
	free(c);
}

long pw_sim_catalogue_find(const pw_sim_catalogue *c, const char *model)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->entries[i].model, model) == 0)
			return (long)i;
	return -1;
}

pw_status pw_sim_catalogue_readopt(pw_sim_catalogue *c, size_t i)
{
	if (!c || i >= c->n)
		return PW_ERR_INVALID;
	pw_sim_cat_entry *e = &c->entries[i];
	e->arch.kv_heads = e->arch.kv_heads > 1 ? e->arch.kv_heads / 2 : 2;
	e->generation++;
	build_ops(c, i);
	return PW_OK;
}

pw_status pw_sim_catalogue_arch(const pw_sim_catalogue *c, size_t i, pw_sim_cat_arch *out)
{
	if (!c || i >= c->n)
		return PW_ERR_INVALID;
	*out = c->entries[i].arch;
	return PW_OK;
}

pw_status pw_sim_catalogue_spec(const pw_sim_catalogue *c, size_t i, pw_sim_model_spec *out)
{
	if (!c || i >= c->n)
		return PW_ERR_INVALID;
	const pw_sim_cat_entry *e = &c->entries[i];
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "%s", e->model);
	out->arch = (pw_sim_arch)e->arch.arch;
	out->params_b = e->arch.params_b;
	out->active_b = e->arch.active_b;
	out->layers = e->arch.layers;
	out->q_heads = e->arch.q_heads;
	out->kv_heads = e->arch.kv_heads;
	out->head_dim = e->arch.head_dim;
	return PW_OK;
}

void pw_sim_cl_buf_release(pw_sim_cl_buf *b)
{
	if (!b)
		return;
	free(b->cls);
	free(b->costs);
	*b = (pw_sim_cl_buf){0};
}

/* Room for one more CL and k more costs; the CLs' cost pointers are re-based when costs move. */
static pw_status buf_reserve(pw_sim_cl_buf *b, size_t k)
{
	if (b->ncls + 1 > b->cap_cls) {
		size_t nc = b->cap_cls ? 2 * b->cap_cls : 64;
		pw_plan_cl *v = realloc(b->cls, nc * sizeof *v);
		if (!v)
			return PW_ERR_NOMEM;
		b->cls = v;
		b->cap_cls = nc;
	}
	if (b->ncosts + k > b->cap_costs) {
		size_t nc = b->cap_costs ? 2 * b->cap_costs : 64;
		while (nc < b->ncosts + k)
			nc *= 2;
		/* costs are referenced by offset while they move */
		for (size_t i = 0; i < b->ncls; i++)
			b->cls[i].costs = (const pw_plan_opcost *)(uintptr_t)(b->cls[i].ncosts ? b->cls[i].costs - b->costs : 0);
		pw_plan_opcost *v = realloc(b->costs, nc * sizeof *v);
		if (v)
			b->costs = v;
		for (size_t i = 0; i < b->ncls; i++)
			b->cls[i].costs = b->cls[i].ncosts ? b->costs + (uintptr_t)b->cls[i].costs : NULL;
		if (!v)
			return PW_ERR_NOMEM;
		b->cap_costs = nc;
	}
	return PW_OK;
}

int64_t pw_sim_catalogue_head(int32_t day)
{
	return PW_SIM_CAT_ANCHOR_CL + (int64_t)PW_SIM_CAT_CLS_PER_DAY * (day - PW_SIM_CAT_ANCHOR_DAY);
}

pw_status pw_sim_catalogue_day_cls(const pw_sim_catalogue *c, int64_t first_cl, size_t per_day,
                                   pw_sim_cl_buf *b)
{
	static const double kind_w[] = {0.30, 0.25, 0.15, 0.10, 0.08, 0.04, 0.05, 0.03};
	static const char *const phases[] = {"", "decode", "prefill"};
	for (size_t j = 1; j <= per_day; j++) {
		int64_t cl = first_cl + (int64_t)j;
		if (cl == PW_SIM_CAT_CULPRIT) {
			pw_status st = pw_sim_catalogue_fusion_cap_cl(c, cl, 1572864, b);
			if (st != PW_OK)
				return st;
			continue;
		}
		pw_status st = buf_reserve(b, 1);
		if (st != PW_OK)
			return st;
		pw_sim_rng r;
		pw_sim_rng_init(&r, pw_sim_hash_u64(pw_sim_hash_u64(PW_SIM_HASH_INIT, c->seed ^ 0x5eedc1), (uint64_t)cl));
		pw_plan_cl *out = &b->cls[b->ncls++];
		*out = (pw_plan_cl){cl, NULL, 0};
		if (pw_sim_rng_uniform(&r) >= 0.10)
			continue; /* tests, docs, refactors: no op touched */
		double u = pw_sim_rng_uniform(&r), acc = 0;
		size_t kind = 0;
		for (; kind + 1 < sizeof kind_w / sizeof kind_w[0]; kind++) {
			acc += kind_w[kind];
			if (u < acc)
				break;
		}
		bool one_platform = pw_sim_rng_uniform(&r) < 0.75;
		const char *platform = one_platform ? platform_names[pw_sim_rng_next(&r) % PW_SIM_CAT_PLATFORMS] : "";
		const char *phase = pw_sim_rng_uniform(&r) < 0.7 ? phases[1 + pw_sim_rng_next(&r) % 2] : phases[0];
		uint32_t min_seq = pw_sim_rng_uniform(&r) < 0.3 ? 8192 : 0; /* a long-context path only */
		double f = 0.96 + 0.12 * pw_sim_rng_uniform(&r);
		bool bytes = pw_sim_rng_uniform(&r) < 0.6;
		pw_plan_opcost *oc = &b->costs[b->ncosts++];
		*oc = (pw_plan_opcost){op_kinds[kind], platform, phase, min_seq, bytes ? f : 1, bytes ? 1 : f};
		out->costs = oc;
		out->ncosts = 1;
	}
	return PW_OK;
}

pw_status pw_sim_catalogue_fusion_cap_cl(const pw_sim_catalogue *c, int64_t cl_number,
                                         double cap_bytes, pw_sim_cl_buf *b)
{
	pw_status st = buf_reserve(b, c->nplatforms);
	if (st != PW_OK)
		return st;
	pw_plan_cl *out = &b->cls[b->ncls++];
	*out = (pw_plan_cl){cl_number, b->costs + b->ncosts, 0};
	/* S round trip over the KV it reads: 2·B·H·s̄·4 / (2·H_kv·d·s̄·B·1) = 4·32/(8·128) */
	const double factor = 1.0 + 4.0 * 32 / (8.0 * 128);
	for (size_t p = 0; p < c->nplatforms; p++) {
		const pw_roofline_platform *f = &c->platforms[p].facts;
		if (f->mxu_lanes == 0)
			continue;
		uint32_t min_seq = (uint32_t)floor(cap_bytes / (f->mxu_lanes * 4.0)) + 1;
		b->costs[b->ncosts++] = (pw_plan_opcost){"attention_softmax_fused", f->name, "decode", min_seq,
		                                         factor, 1};
		out->ncosts++;
	}
	if (out->ncosts == 0)
		out->costs = NULL;
	return PW_OK;
}

pw_status pw_sim_catalogue_op_cl(int64_t cl_number, const char *op, const char *platform,
                                 double bytes_factor, pw_sim_cl_buf *b)
{
	pw_status st = buf_reserve(b, 1);
	if (st != PW_OK)
		return st;
	pw_plan_opcost *oc = &b->costs[b->ncosts++];
	*oc = (pw_plan_opcost){op, platform, "", 0, bytes_factor, 1};
	b->cls[b->ncls++] = (pw_plan_cl){cl_number, oc, 1};
	return PW_OK;
}

/* ---- wire forms ------------------------------------------------------------------------- */

pw_status pw_sim_catalogue_pack_model(const pw_sim_catalogue *c, size_t i, int64_t adopted_us,
                                      uint8_t **out, size_t *len)
{
	const pw_plan_model *m = &c->models[i];
	Perfwatch__V1__CatalogueModel msg = PERFWATCH__V1__CATALOGUE_MODEL__INIT;
	Perfwatch__V1__CatalogueOp *ops = calloc(m->nops + 1, sizeof *ops);
	Perfwatch__V1__CatalogueOp **pops = calloc(m->nops + 1, sizeof *pops);
	if (!ops || !pops) {
		free(ops);
		free(pops);
		return PW_ERR_NOMEM;
	}
	for (size_t k = 0; k < m->nops; k++) {
		const pw_plan_op *o = &m->ops[k];
		ops[k] = (Perfwatch__V1__CatalogueOp)PERFWATCH__V1__CATALOGUE_OP__INIT;
		ops[k].op = (char *)o->op;
		ops[k].shape = (char *)o->shape;
		ops[k].config = (char *)m->configs[o->config];
		ops[k].calls = o->calls;
		ops[k].bytes = o->bytes;
		ops[k].flops = o->flops;
		pops[k] = &ops[k];
	}
	msg.model = (char *)m->model;
	msg.family = (char *)m->family;
	msg.tier = i < 20 ? "top" : "tail";
	msg.spend_share = m->spend_share;
	msg.platforms = (char **)m->platforms;
	msg.n_platforms = m->nplatforms;
	msg.configs = (char **)m->configs;
	msg.n_configs = m->nconfigs;
	msg.hlo_fingerprint = (char *)m->fingerprint;
	msg.ops = pops;
	msg.n_ops = m->nops;
	msg.source = "pw-sim:planner";
	msg.adopted_unix_us = adopted_us;
	*len = perfwatch__v1__catalogue_model__get_packed_size(&msg);
	*out = malloc(*len + 1);
	pw_status st = PW_ERR_NOMEM;
	if (*out) {
		perfwatch__v1__catalogue_model__pack(&msg, *out);
		st = PW_OK;
	}
	free(ops);
	free(pops);
	return st;
}

pw_status pw_sim_catalogue_pack_cl(const pw_plan_cl *cl, uint8_t **out, size_t *len)
{
	Perfwatch__V1__CompilerCl msg = PERFWATCH__V1__COMPILER_CL__INIT;
	Perfwatch__V1__ClOpCost costs[16], *pc[16];
	char name[32];
	snprintf(name, sizeof name, "cl/%lld", (long long)cl->cl_number);
	size_t n = cl->ncosts < 16 ? cl->ncosts : 16;
	for (size_t k = 0; k < n; k++) {
		const pw_plan_opcost *o = &cl->costs[k];
		costs[k] = (Perfwatch__V1__ClOpCost)PERFWATCH__V1__CL_OP_COST__INIT;
		costs[k].op = (char *)o->op;
		costs[k].platform = (char *)o->platform;
		costs[k].phase = (char *)o->phase;
		costs[k].min_seq_len = o->min_seq_len;
		costs[k].bytes_factor = o->bytes_factor;
		costs[k].flops_factor = o->flops_factor;
		pc[k] = &costs[k];
	}
	msg.cl = name;
	msg.cl_number = cl->cl_number;
	msg.title = cl->cl_number == 7841917 ? "fusion: cap producer-consumer fusion VMEM footprint at 1.5MB to prevent double-buffering spills"
	                                     : n ? "compiler change touching an op" : "no generated-code change";
	msg.author = cl->cl_number == 7841917 ? "xla-fusion" : "xla";
	msg.op_costs = pc;
	msg.n_op_costs = n;
	msg.source = "pw-sim:planner";
	*len = perfwatch__v1__compiler_cl__get_packed_size(&msg);
	*out = malloc(*len + 1);
	if (!*out)
		return PW_ERR_NOMEM;
	perfwatch__v1__compiler_cl__pack(&msg, *out);
	return PW_OK;
}

pw_status pw_sim_catalogue_pack_capacity(const pw_plan_platform *p, double chip_hours, uint8_t **out,
                                         size_t *len)
{
	Perfwatch__V1__PlatformCapacity msg = PERFWATCH__V1__PLATFORM_CAPACITY__INIT;
	msg.platform = (char *)p->facts.name;
	msg.chip_hours_per_week = chip_hours;
	msg.sigma_pct = p->sigma_pct;
	msg.source = "pw-sim:planner";
	*len = perfwatch__v1__platform_capacity__get_packed_size(&msg);
	*out = malloc(*len + 1);
	if (!*out)
		return PW_ERR_NOMEM;
	perfwatch__v1__platform_capacity__pack(&msg, *out);
	return PW_OK;
}

pw_status pw_sim_catalogue_pack_sweep(int kind, int32_t day, int64_t cl_head, char *id, size_t idlen,
                                      uint8_t **out, size_t *len)
{
	char d[16], head[32], rel[64];
	time_t t = (time_t)day * 86400;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(d, sizeof d, "%Y-%m-%d", &tm);
	snprintf(id, idlen, "%s-%s", kind == 2 ? "rc" : "nightly", d);
	snprintf(head, sizeof head, "cl/%lld", (long long)cl_head);
	snprintf(rel, sizeof rel, "xla-%s-%s", kind == 2 ? "rc" : "nightly", d);
	Perfwatch__V1__Sweep msg = PERFWATCH__V1__SWEEP__INIT;
	msg.sweep_id = id;
	msg.kind = kind == 2 ? PERFWATCH__V1__SWEEP_KIND__SWEEP_KIND_RC : PERFWATCH__V1__SWEEP_KIND__SWEEP_KIND_NIGHTLY;
	msg.release = rel;
	msg.cl_head = head;
	msg.day = d;
	msg.source = "pw-sim:planner";
	*len = perfwatch__v1__sweep__get_packed_size(&msg);
	*out = malloc(*len + 1);
	if (!*out)
		return PW_ERR_NOMEM;
	perfwatch__v1__sweep__pack(&msg, *out);
	return PW_OK;
}
