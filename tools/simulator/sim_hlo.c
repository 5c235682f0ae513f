/*
 * sim_hlo.c: the simulator's post-optimisation HLO text and per-op HBM bytes.
 *
 * sim_model.c decides a run's op table (base ops, then the CL rewrites that
 * split a fusion); this file holds the arithmetic those decisions rest on
 * (the projected VMEM of an attention fusion against a CL's cap, the bytes
 * each op moves) and renders the HLO text from the decided table, so the
 * attributor's HLO diff and its op diff come from one source. Kept apart
 * from sim_model.c so the two evolve without touching each other's functions.
 *
 * Byte accounting (seed §6.3): decode moves the weights (GEMM op) and the KV
 * cache (attention op) once a step; a declined attention fusion adds the fp32
 * score matrix S = B·H_q·s̄·4 B per layer, written by the first part and read
 * back by the last (33.6 MB/layer for chat-8b at B=64, s̄=2048); the
 * VPU softmax between them works on S's tiles as they stream and is given no
 * HBM bytes of its own, as the seed's arithmetic has it.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim_model.h"

static double dtype_size(pw_sim_dtype d)
{
	return d == PW_SIM_BF16 ? 2.0 : 1.0;
}

double pw_sim_attention_vmem(const pw_sim_platform *p, const pw_sim_config *c)
{
	if (!p || !c || p->lanes == 0)
		return 0;
	return (double)p->lanes * c->seq_len * 4.0;
}

void pw_sim_series_op_bytes(pw_sim_series *s)
{
	const pw_sim_model_spec *m = &s->model;
	const pw_sim_config *c = &s->config;
	double b = dtype_size(c->dtype);
	double kv = 2.0 * m->layers * m->kv_heads * m->head_dim * (double)c->seq_len * b;
	double weights;
	if (c->phase == PW_SIM_DECODE) {
		double bsz = c->batch;
		double wparams = m->active_b + (m->params_b - m->active_b) * (bsz >= 32 ? 1.0 : bsz / 32.0);
		weights = wparams * 1e9 * b;
		kv *= bsz;
	} else {
		weights = m->params_b * 1e9 * b;
	}
	for (size_t i = 0; i < s->nops; i++)
		s->ops[i].hbm_bytes = i == 0 ? kv : i == 1 ? weights : 0;
}

bool pw_sim_split_declines(const pw_sim_opsplit *sp, const pw_sim_series *s, double *vmem)
{
	double v = pw_sim_attention_vmem(s->platform, &s->config);
	if (vmem)
		*vmem = v;
	return sp->vmem_cap <= 0 || v > sp->vmem_cap;
}

/* fp32 score matrix of one layer: B·H_q·s̄·4 B. */
static double score_bytes_layer(const pw_sim_series *s)
{
	return (double)s->config.batch * s->model.q_heads * s->config.seq_len * 4.0;
}

void pw_sim_split_mark(pw_sim_run *r, size_t first, size_t nparts, const pw_sim_opsplit *sp,
                       const pw_sim_series *s, double victim_bytes, double vmem)
{
	double sb = score_bytes_layer(s) * s->model.layers;
	for (size_t j = 0; j < nparts; j++) {
		pw_sim_op *o = &r->ops[first + j];
		o->split_cl = sp->cl;
		o->split_part = (uint32_t)j;
		o->split_parts = (uint32_t)nparts;
		o->vmem_bytes = vmem;
		o->vmem_cap = sp->vmem_cap;
		o->hbm_bytes_per_step = 0;
		if (nparts == 1) {
			o->hbm_bytes_per_step = victim_bytes;
		} else if (j == 0 || j == nparts - 1) {
			o->hbm_bytes_per_step = victim_bytes / 2.0 + sb;
		}
	}
}

/* ---- rendering ------------------------------------------------------------ */

typedef struct hbuf {
	char *p;
	size_t len, used;
	bool overflow;
} hbuf;

__attribute__((format(printf, 2, 3))) static void hput(hbuf *h, const char *fmt, ...)
{
	if (h->overflow)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(h->p + h->used, h->len - h->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= h->len - h->used) {
		h->overflow = true;
		return;
	}
	h->used += (size_t)n;
}

/* 2097152 -> "2,097,152" */
static const char *commas(double v, char *buf, size_t len)
{
	char raw[32];
	snprintf(raw, sizeof raw, "%.0f", v);
	size_t n = strlen(raw), o = 0;
	for (size_t i = 0; i < n && o + 2 < len; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = raw[i];
	}
	buf[o] = 0;
	return buf;
}

/* "qkv+out+ffn_gemms" -> "qkv_out_ffn_gemms": a computation name */
static void comp_name(const char *kind, char *out, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; kind[i] && o + 1 < len; i++) {
		char ch = kind[i];
		out[o++] = (ch == '+' || ch == '-' || ch == ' ') ? '_' : ch;
	}
	out[o] = 0;
}

static bool is_attention(const pw_sim_op *o)
{
	return strstr(o->kind, "attention") != NULL;
}

static void render_attention(hbuf *h, const pw_sim_op *o, const pw_sim_series *s, const char *prev)
{
	const pw_sim_config *c = &s->config;
	const pw_sim_model_spec *m = &s->model;
	unsigned B = c->batch, H = m->q_heads, S = c->seq_len, D = m->head_dim;
	char cn[PW_SIM_NAME_MAX], n1[32], n2[32];
	comp_name(o->kind, cn, sizeof cn);
	if (o->split_parts == 0) {
		hput(h, "  %%%s = bf16[%u,%u,%u]{2,1,0} fusion(%%q, %%k_cache, %%v_cache),\n", o->name, B, H, D);
		hput(h, "      kind=kCustom, calls=%%%s_computation\n", cn);
		hput(h, "      backend_config={\"fusion_kind\":\"%s\",\"vmem_bytes\":%.0f}\n", o->kind,
		     o->vmem_bytes);
		return;
	}
	if (o->split_part == 0) {
		double mb = score_bytes_layer(s) / 1e6;
		hput(h, "  %%%s = f32[%u,%u,%u]{2,1,0} fusion(%%q, %%k_cache), kind=kLoop,\n", o->name, B, H, S);
		hput(h, "      calls=%%%s_computation            // S materialized to HBM (%.1f MB, fp32)\n",
		     cn, mb);
	} else if (o->split_part + 1 < o->split_parts) {
		hput(h, "  %%%s = f32[%u,%u,%u]{2,1,0} %s(%%%s)\n", o->name, B, H, S, o->kind, prev);
	} else {
		hput(h, "  %%%s = bf16[%u,%u,%u]{2,1,0} fusion(%%%s, %%v_cache), kind=kLoop,\n", o->name, B,
		     H, D, prev);
		hput(h, "      calls=%%%s_computation\n", cn);
		if (o->vmem_cap > 0)
			hput(h,
			     "      // fusion declined: projected vmem %s B > cap %s B (cl/%" PRId64 ")\n",
			     commas(o->vmem_bytes, n1, sizeof n1), commas(o->vmem_cap, n2, sizeof n2),
			     o->split_cl);
		else
			hput(h, "      // fusion declined (cl/%" PRId64 ")\n", o->split_cl);
	}
}

pw_status pw_sim_run_hlo(const pw_sim *w, const pw_sim_run *r, char *buf, size_t len)
{
	const pw_sim_series *s = pw_sim_series_at(w, r->series);
	if (!s || !buf || len == 0)
		return PW_ERR_INVALID;
	hbuf h = {buf, len, 0, false};
	buf[0] = 0;
	const pw_sim_config *c = &s->config;
	const pw_sim_model_spec *m = &s->model;
	unsigned B = c->batch, dm = m->q_heads * m->head_dim;
	hput(&h, "HloModule %s.%s, fingerprint=%s, platform=%s\n", r->model, c->name, r->fingerprint,
	     r->platform->name);

	/* layer.attn: the attention op, or the parts a CL split it into, in data-flow order (the opsplit lists them so) */
	hput(&h, "\n%%layer.attn {\n");
	const char *prev = "q";
	for (size_t i = 0; i < r->nops; i++) {
		const pw_sim_op *o = &r->ops[i];
		if (!(is_attention(o) || o->split_parts > 0))
			continue;
		render_attention(&h, o, s, prev);
		prev = o->name;
	}
	hput(&h, "}\n");
	/* the rest, one computation each, in table order */
	for (size_t i = 0; i < r->nops; i++) {
		const pw_sim_op *o = &r->ops[i];
		if (is_attention(o) || o->split_parts > 0)
			continue;
		char cn[PW_SIM_NAME_MAX];
		comp_name(o->kind, cn, sizeof cn);
		if (strcmp(o->kind, "ici") == 0 || strcmp(o->kind, "nvlink") == 0) {
			hput(&h, "\n%%layer.collective {\n");
			hput(&h, "  %%%s = bf16[%u,%u]{1,0} collective-permute(%%partial), channel_id=1,\n",
			     o->name, B, dm);
			hput(&h, "      source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n");
		} else {
			hput(&h, "\n%%layer.gemm {\n");
			hput(&h, "  %%%s = bf16[%u,%u]{1,0} fusion(%%x, %%w_qkv, %%w_out, %%w_ffn), kind=kOutput,\n",
			     o->name, B, dm);
			hput(&h, "      calls=%%%s_computation\n", cn);
		}
		hput(&h, "}\n");
	}
	return h.overflow ? PW_ERR_INVALID : PW_OK;
}
