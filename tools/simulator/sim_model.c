/*
 * sim_model.c: the catalog, the roofline bases, the noise model, effects and
 * the timeline of the fleet simulator (contract in sim_model.h).
 *
 * The scenario parser (sim_scenario.c) fills a pw_sim_scenario; pw_sim_new
 * copies it into a world; everything after that is a pure function of the
 * world and its arguments. Numbers that are assumptions (achieved bandwidth,
 * compute efficiency, $/chip-hour) are named constants next to the catalog.
 */
#include "sim_model.h"

#include <inttypes.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_rng.h"

/* ---- Catalog ------------------------------------------------------------- */

static const struct {
	const char *name, *unit;
	bool lower_better;
} metric_table[PW_SIM_METRIC_COUNT] = {
	[PW_SIM_TTFT_P50_MS] = {"ttft_p50_ms", "ms", true},
	[PW_SIM_TTFT_P99_MS] = {"ttft_p99_ms", "ms", true},
	[PW_SIM_TPOT_P50_MS] = {"tpot_p50_ms", "ms", true},
	[PW_SIM_TPOT_P99_MS] = {"tpot_p99_ms", "ms", true},
	[PW_SIM_GOODPUT_TOK_S_CHIP] = {"goodput_tok_s_chip", "tok/s/chip", false},
	[PW_SIM_MFU] = {"mfu", "ratio", false},
	[PW_SIM_HBM_BW_UTIL] = {"hbm_bw_util", "ratio", false},
	[PW_SIM_COST_PER_MTOK_USD] = {"cost_per_mtok_usd", "usd/Mtok", true},
	[PW_SIM_PREFILL_COMPUTE_MS] = {"prefill_compute_ms", "ms", true},
};

const char *pw_sim_metric_name(pw_sim_metric m)
{
	return (unsigned)m < PW_SIM_METRIC_COUNT ? metric_table[m].name : "unknown";
}

const char *pw_sim_metric_unit(pw_sim_metric m)
{
	return (unsigned)m < PW_SIM_METRIC_COUNT ? metric_table[m].unit : "";
}

int pw_sim_metric_proto(pw_sim_metric m)
{
	return (int)m + 1; /* perfwatch.v1.Metric numbers follow the same order */
}

bool pw_sim_metric_lower_is_better(pw_sim_metric m)
{
	return (unsigned)m < PW_SIM_METRIC_COUNT && metric_table[m].lower_better;
}

int pw_sim_metric_find(const char *name)
{
	for (int i = 0; i < PW_SIM_METRIC_COUNT; i++)
		if (strcmp(metric_table[i].name, name) == 0)
			return i;
	return -1;
}

/*
 * Peak figures are public datasheet numbers; achieved bandwidth 0.65 (TPU) is
 * §6.3's measured fraction, 0.60 (GPU) an assumption; prices are internal
 * assumptions (§3.2: "state the basis").
 */
const pw_sim_platform pw_sim_platforms[] = {
	{"v6e-4", 2, PW_SIM_TPU, 4, 1640, 918, 1836, 0.65, 2.70, 256, "tpufw-2026.05.2",
	 {"cell-mtv5-c12", "cell-mtv5-c14"}},
	{"v5e-8", 1, PW_SIM_TPU, 8, 819, 197, 394, 0.65, 1.20, 128, "tpufw-2026.05.2",
	 {"cell-ord2-c03", "cell-ord2-c07"}},
	{"ironwood-8", 3, PW_SIM_TPU, 8, 7370, 2307, 4614, 0.65, 5.50, 256, "tpufw-2026.06.0",
	 {"cell-cbf1-c02", "cell-cbf1-c05"}},
	{"b200-8", 5, PW_SIM_GPU, 8, 8000, 2250, 4500, 0.60, 6.80, 0, "nv-570.86/cuda-12.8",
	 {"cell-iad3-g07", "cell-iad3-g08"}},
	{"v6e-16", 2, PW_SIM_TPU, 16, 1640, 918, 1836, 0.65, 2.70, 256, "tpufw-2026.05.2",
	 {"cell-mtv5-c21", "cell-mtv5-c22"}},
	{"h100-8", 4, PW_SIM_GPU, 8, 3350, 989, 1979, 0.60, 3.90, 0, "nv-560.35/cuda-12.6",
	 {"cell-iad3-g01", "cell-iad3-g02"}},
};
const size_t pw_sim_platforms_count = sizeof pw_sim_platforms / sizeof pw_sim_platforms[0];

const pw_sim_platform *pw_sim_platform_find(const char *name)
{
	for (size_t i = 0; i < pw_sim_platforms_count; i++)
		if (strcmp(pw_sim_platforms[i].name, name) == 0)
			return &pw_sim_platforms[i];
	return NULL;
}

/* §4.1: net σ with controls ≈ 0.4% TPU, ≈ 2% GPU; split between run-to-run and host jitter. */
double pw_sim_class_sigma_run(pw_sim_class c)
{
	return c == PW_SIM_TPU ? 0.0030 : 0.0160;
}

double pw_sim_class_sigma_host(pw_sim_class c)
{
	return c == PW_SIM_TPU ? sqrt(0.004 * 0.004 - 0.0030 * 0.0030)
	                       : sqrt(0.02 * 0.02 - 0.0160 * 0.0160);
}

double pw_sim_class_sigma(pw_sim_class c)
{
	double a = pw_sim_class_sigma_run(c), b = pw_sim_class_sigma_host(c);
	return sqrt(a * a + b * b);
}

static const pw_sim_model_spec builtin_models[] = {
	{"chat-8b", PW_SIM_DENSE, 8.0, 8.0, 32, 32, 8, 128},
	{"rank-moe-110b", PW_SIM_MOE, 110.0, 14.0, 48, 40, 8, 128},
	{"chat-70b", PW_SIM_DENSE, 70.6, 70.6, 80, 64, 8, 128},
	{"code-34b", PW_SIM_DENSE, 34.0, 34.0, 48, 64, 8, 128},
	{"embed-rank-2b", PW_SIM_RANKING, 2.2, 2.2, 24, 16, 16, 64},
	{"vision-lm-13b", PW_SIM_DENSE, 13.0, 13.0, 40, 40, 40, 128},
};

bool pw_sim_model_builtin(const char *name, pw_sim_model_spec *out)
{
	for (size_t i = 0; i < sizeof builtin_models / sizeof builtin_models[0]; i++)
		if (strcmp(builtin_models[i].name, name) == 0) {
			*out = builtin_models[i];
			return true;
		}
	return false;
}

void pw_sim_model_synthetic(size_t i, pw_sim_model_spec *out)
{
	static const char *const arch_names[] = {"dense", "moe", "rank"};
	static const double sizes[] = {1.5, 3, 7, 8, 13, 20, 34, 47, 70, 110};
	uint64_t h = pw_sim_hash_u64(PW_SIM_HASH_INIT, (uint64_t)i * 7919u + 17u);
	memset(out, 0, sizeof *out);
	out->arch = (pw_sim_arch)(h % 5 == 0 ? PW_SIM_MOE : (h % 7 == 0 ? PW_SIM_RANKING : PW_SIM_DENSE));
	double size = sizes[(h >> 8) % (sizeof sizes / sizeof sizes[0])];
	out->params_b = size;
	out->active_b = out->arch == PW_SIM_MOE ? size / 8.0 : size;
	out->layers = size < 5 ? 24 : size < 20 ? 32 : size < 50 ? 48 : 80;
	out->head_dim = out->arch == PW_SIM_RANKING ? 64 : 128;
	out->q_heads = size < 10 ? 32 : 64;
	out->kv_heads = 8;
	snprintf(out->name, sizeof out->name, "m%03zu-%s-%gb", i, arch_names[out->arch], size);
}

const char *const pw_sim_default_configs[] = {
	"decode.B64.s2048.int8", "decode.B8.s2048.int8",   "prefill.s8192.bf16",
	"decode.B64.s8192.bf16", "decode.B8.s32768.bf16", "prefill.s32768.int8",
};
const size_t pw_sim_default_configs_count =
	sizeof pw_sim_default_configs / sizeof pw_sim_default_configs[0];

pw_status pw_sim_config_parse(const char *name, pw_sim_config *out, char *errbuf, size_t errlen)
{
	char buf[PW_SIM_NAME_MAX];
	if (strlen(name) >= sizeof buf)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "config name \"%s\" is too long", name);
	strcpy(buf, name);
	memset(out, 0, sizeof *out);
	char *save = NULL;
	char *ph = strtok_r(buf, ".", &save);
	char *p2 = strtok_r(NULL, ".", &save);
	char *p3 = strtok_r(NULL, ".", &save);
	char *p4 = strtok_r(NULL, ".", &save);
	char *extra = strtok_r(NULL, ".", &save);
	if (!ph || !p2 || !p3 || extra)
		goto bad;
	if (strcmp(ph, "decode") == 0)
		out->phase = PW_SIM_DECODE;
	else if (strcmp(ph, "prefill") == 0)
		out->phase = PW_SIM_PREFILL;
	else
		goto bad;
	const char *bpart = NULL, *spart, *dpart;
	if (p4) {
		bpart = p2;
		spart = p3;
		dpart = p4;
	} else {
		if (out->phase == PW_SIM_DECODE)
			goto bad;
		spart = p2;
		dpart = p3;
	}
	char *end;
	if (bpart) {
		if (bpart[0] != 'B')
			goto bad;
		unsigned long b = strtoul(bpart + 1, &end, 10);
		if (*end || b == 0 || b > 4096)
			goto bad;
		out->batch = (uint32_t)b;
	} else {
		out->batch = 1;
	}
	if (spart[0] != 's')
		goto bad;
	unsigned long s = strtoul(spart + 1, &end, 10);
	if (*end || s == 0 || s > 1048576)
		goto bad;
	out->seq_len = (uint32_t)s;
	if (strcmp(dpart, "bf16") == 0)
		out->dtype = PW_SIM_BF16;
	else if (strcmp(dpart, "int8") == 0)
		out->dtype = PW_SIM_INT8;
	else if (strcmp(dpart, "fp8") == 0)
		out->dtype = PW_SIM_FP8;
	else
		goto bad;
	if (out->phase == PW_SIM_DECODE || out->batch != 1)
		snprintf(out->name, sizeof out->name, "%s.B%u.s%u.%s", ph, out->batch, out->seq_len,
		         dpart);
	else
		snprintf(out->name, sizeof out->name, "prefill.s%u.%s", out->seq_len, dpart);
	return PW_OK;
bad:
	return pw_fail(PW_ERR_INVALID, errbuf, errlen,
	               "config \"%s\" is not decode.B<n>.s<n>.<dtype> or prefill.s<n>.<dtype>", name);
}

/* ---- World ---------------------------------------------------------------- */

/* Roofline assumptions: compute efficiency reached in prefill/decode GEMMs. */
#define SIM_COMPUTE_EFF 0.55
#define SIM_QUEUE_FRAC 0.15       /* TTFT = compute-only prefill × (1 + queue wait) at matched λ */
#define SIM_TTFT_TAIL 1.90        /* p99 / p50 of TTFT */
#define SIM_TPOT_TAIL 1.22        /* p99 / p50 of TPOT */
/*
 * A p99's own run-to-run noise on top of the run's, × the platform σ: the
 * tail metric's net σ is 1.12 × the norm (0.45% TPU, 2.2% GPU), noisier than
 * a median yet well inside §4.2's 2× quarantine line, as a healthy harness
 * is (a 30-run MAD estimate of σ scatters by ~20%). 2.5 put nine p99 series
 * in ten over the line, 1.0 still one in seventy: quarantined in a quiet week.
 */
#define SIM_TAIL_SIGMA 0.5
#define SIM_SLO_FRAC 0.92         /* goodput: share of throughput inside the SLOs */
#define SIM_COLLECTIVE_FRAC 0.033 /* the collective's kernel time, overlapped, as a share of wall */
#define SIM_OP_SIGMA 0.002        /* per-op timing noise on top of the run's */
#define SIM_SET_SPREAD 0.001      /* the chip-sets of one cell agree within ±0.1% */

struct pw_sim {
	char name[PW_SIM_NAME_MAX];
	uint64_t seed;
	int64_t start_us;
	int days;
	uint32_t nightly_repeats;
	double outlier_rate;
	uint32_t rotation;
	int64_t anchor_cl;
	int anchor_day;
	uint32_t per_day;
	double flag_rate;
	pw_sim_series *series;
	size_t nseries, series_cap;
	double chipset_off[sizeof pw_sim_platforms / sizeof pw_sim_platforms[0]]
	                  [PW_SIM_CHIPSETS_PER_PLATFORM];
	pw_sim_scenario *sc; /* a deep copy of what pw_sim_new was given (only the arrays used) */
};

static bool sel_match1(const char *pat, const char *s)
{
	return pat[0] == '\0' || fnmatch(pat, s, 0) == 0;
}

static bool sel_match(const pw_sim_selector *sel, const char *model, const char *platform,
                      const pw_sim_config *cfg)
{
	const char *phase = cfg->phase == PW_SIM_DECODE ? "decode" : "prefill";
	return sel_match1(sel->model, model) && sel_match1(sel->platform, platform) &&
	       sel_match1(sel->config, cfg->name) && sel_match1(sel->phase, phase);
}

static double dtype_bytes(pw_sim_dtype d)
{
	return d == PW_SIM_BF16 ? 2.0 : 1.0;
}

static double peak_flops(const pw_sim_platform *p, pw_sim_dtype d)
{
	return (d == PW_SIM_BF16 ? p->tflops_bf16 : p->tflops_int8) * 1e12;
}

static void op_set(pw_sim_opdef *o, const char *name, const char *kind, double us)
{
	snprintf(o->name, sizeof o->name, "%s", name);
	snprintf(o->kind, sizeof o->kind, "%s", kind);
	o->us = us;
}

/* The roofline base of one series (§6.3's arithmetic, generalised). */
static double group_offset(const pw_sim *w, const pw_sim_platform *p, uint32_t first);

static void series_base(const pw_sim *w, pw_sim_series *s)
{
	const pw_sim_scenario *sc = w->sc;
	const pw_sim_platform *p = s->platform;
	const pw_sim_model_spec *m = &s->model;
	const pw_sim_config *c = &s->config;
	double bw = p->chips * p->hbm_gbps * 1e9 * p->achieved_bw;          /* bytes/s achieved */
	double peak = p->chips * peak_flops(p, c->dtype) * SIM_COMPUTE_EFF;  /* flops/s achieved */
	double wb = dtype_bytes(c->dtype);
	double kvb = dtype_bytes(c->dtype); /* int8 configs carry int8 KV (§6.3) */
	double attn_dim = (double)m->layers * m->q_heads * m->head_dim;

	/* prefill of the config's prompt: 2·P_active·s + causal attention 2·L·H·d·s² */
	double s_len = c->seq_len;
	double pf_gemm = 2.0 * m->active_b * 1e9 * s_len;
	double pf_attn = 2.0 * attn_dim * s_len * s_len;
	double pf_t = fmax((pf_gemm + pf_attn) / peak, m->params_b * 1e9 * wb / bw);
	s->prefill_ms = pf_t * 1e3;

	uint64_t h = pw_sim_hash_str(PW_SIM_HASH_INIT, m->name);
	char nm_attn[PW_SIM_NAME_MAX], nm_gemm[PW_SIM_NAME_MAX], nm_coll[PW_SIM_NAME_MAX];
	const char *k_attn = c->phase == PW_SIM_DECODE ? "attention_softmax_fused" : "flash_attention";
	const char *k_gemm = "qkv+out+ffn_gemms";
	const char *k_coll = p->cls == PW_SIM_TPU ? "ici" : "nvlink";
	snprintf(nm_attn, sizeof nm_attn, "fusion.%u", (unsigned)(1000 + h % 8000));
	snprintf(nm_gemm, sizeof nm_gemm, "fusion.%u", (unsigned)(100 + (h >> 16) % 800));
	snprintf(nm_coll, sizeof nm_coll, "%s.%u", p->chips > 1 ? "ppermute" : "copy",
	         (unsigned)(10 + (h >> 32) % 90));
	for (size_t i = 0; i < sc->nopnames; i++) {
		const pw_sim_opnames *on = &sc->opnames[i];
		if (strcmp(on->model, m->name) != 0)
			continue;
		if (on->attention.name[0] && c->phase == PW_SIM_DECODE) {
			snprintf(nm_attn, sizeof nm_attn, "%s", on->attention.name);
			k_attn = on->attention.kind;
		}
		if (on->gemm.name[0]) {
			snprintf(nm_gemm, sizeof nm_gemm, "%s", on->gemm.name);
			k_gemm = on->gemm.kind;
		}
		if (on->collective.name[0]) {
			snprintf(nm_coll, sizeof nm_coll, "%s", on->collective.name);
			k_coll = on->collective.kind;
		}
	}

	double gemm_us, attn_us;
	if (c->phase == PW_SIM_DECODE) {
		double bsz = c->batch;
		/* MoE decode touches more experts as the batch grows; all of them from B=32 */
		double wparams = m->active_b + (m->params_b - m->active_b) * fmin(1.0, bsz / 32.0);
		double wbytes = wparams * 1e9 * wb;
		double kv = 2.0 * m->layers * m->kv_heads * m->head_dim * s_len * bsz * kvb;
		double flops = 2.0 * m->active_b * 1e9 * bsz + 4.0 * attn_dim * s_len * bsz;
		double t_mem = (wbytes + kv) / bw, t_comp = flops / peak;
		double t = fmax(t_mem, t_comp);
		s->step_ms = t * 1e3;
		s->bytes_step = wbytes + kv;
		s->flops_token = flops / bsz;
		gemm_us = t * 1e6 * wbytes / (wbytes + kv);
		attn_us = t * 1e6 * kv / (wbytes + kv);
	} else {
		s->step_ms = s->prefill_ms;
		s->bytes_step = m->params_b * 1e9 * wb;
		s->flops_token = (pf_gemm + pf_attn) / s_len;
		gemm_us = pf_t * 1e6 * pf_gemm / (pf_gemm + pf_attn);
		attn_us = pf_t * 1e6 * pf_attn / (pf_gemm + pf_attn);
	}
	double wall_us = s->step_ms * 1e3;
	s->nops = 0;
	op_set(&s->ops[s->nops++], nm_attn, k_attn, attn_us);
	op_set(&s->ops[s->nops++], nm_gemm, k_gemm, gemm_us);
	if (p->chips > 1)
		op_set(&s->ops[s->nops++], nm_coll, k_coll, SIM_COLLECTIVE_FRAC * wall_us);

	/* pins: exact step time (ops scale with it), op table, chip-set */
	double pinned_ms = 0;
	for (size_t i = 0; i < sc->npins; i++) {
		const pw_sim_pin *pin = &sc->pins[i];
		if (!sel_match(&pin->sel, m->name, p->name, c))
			continue;
		if (pin->step_ms > 0) {
			pinned_ms = pin->step_ms;
			double k = pin->step_ms / s->step_ms;
			for (size_t j = 0; j < s->nops; j++)
				s->ops[j].us *= k;
			if (c->phase == PW_SIM_PREFILL)
				s->prefill_ms = pin->step_ms;
			s->step_ms = pin->step_ms;
		}
		if (pin->nops > 0) {
			memcpy(s->ops, pin->ops, pin->nops * sizeof pin->ops[0]);
			s->nops = pin->nops;
		}
		if (pin->chipset > 0)
			s->chipset = pin->chipset;
	}
	if (pinned_ms > 0) {
		/* a pinned step time is the level measured on the series' own chip-sets */
		double k = 1.0 / (1.0 + group_offset(w, p, s->chipset));
		for (size_t j = 0; j < s->nops; j++)
			s->ops[j].us *= k;
		s->step_ms *= k;
		s->prefill_ms *= k;
	}

	s->sigma_factor = 1.0;
	s->bimodal_pct = 0.0;
	for (size_t i = 0; i < sc->nnoise; i++) {
		const pw_sim_noise_mod *nm = &sc->noise[i];
		if (!sel_match(&nm->sel, m->name, p->name, c))
			continue;
		if (nm->factor > 0)
			s->sigma_factor = nm->factor;
		if (nm->bimodal_pct > 0)
			s->bimodal_pct = nm->bimodal_pct;
	}
	pw_sim_series_op_bytes(s);
}

/* Deep-copies the arrays of a scenario the world keeps using. */
static pw_status scenario_copy(const pw_sim_scenario *src, pw_sim_scenario **out)
{
	pw_sim_scenario *d = calloc(1, sizeof *d);
	if (!d)
		return PW_ERR_NOMEM;
	*d = *src;
	d->models = NULL;
	d->platforms = NULL;
	d->configs = NULL;
	d->matrix = NULL;
	d->nmodel_names = d->nplatform_names = d->nconfig_names = d->nmatrix = 0;
#define DUP(field, count)                                                                 \
	do {                                                                               \
		d->field = NULL;                                                           \
		if (src->count) {                                                          \
			d->field = malloc(src->count * sizeof *src->field);                \
			if (!d->field)                                                     \
				goto nomem;                                                \
			memcpy(d->field, src->field, src->count * sizeof *src->field);     \
		}                                                                          \
	} while (0)
	/* no pointer of src may survive in d before it is replaced: free(d) must be safe */
	d->effects = NULL;
	d->splits = NULL;
	d->opnames = NULL;
	d->pins = NULL;
	d->notes = NULL;
	d->fleet = NULL;
	d->revs = NULL;
	d->noise = NULL;
	d->transients = NULL;
	d->flags = NULL;
	d->releases = NULL;
	d->nflags = 0;
	size_t nflags = src->nflags, nrel = src->nreleases;
	d->nreleases = 0;
	DUP(effects, neffects);
	DUP(splits, nsplits);
	DUP(opnames, nopnames);
	DUP(pins, npins);
	DUP(notes, nnotes);
	DUP(fleet, nfleet);
	DUP(revs, nrevs);
	DUP(noise, nnoise);
	DUP(transients, ntransients);
#undef DUP
	if (nflags) {
		d->flags = calloc(nflags, sizeof *d->flags);
		if (!d->flags)
			goto nomem;
		for (size_t i = 0; i < nflags; i++) {
			d->flags[i] = src->flags[i];
			d->flags[i].cls = NULL;
			d->nflags = i + 1;
			if (src->flags[i].ncls) {
				d->flags[i].cls = malloc(src->flags[i].ncls * sizeof(int64_t));
				if (!d->flags[i].cls)
					goto nomem;
				memcpy(d->flags[i].cls, src->flags[i].cls,
				       src->flags[i].ncls * sizeof(int64_t));
			}
		}
	}
	if (nrel) {
		d->releases = calloc(nrel, sizeof *d->releases);
		if (!d->releases)
			goto nomem;
		for (size_t i = 0; i < nrel; i++) {
			d->releases[i] = src->releases[i];
			d->releases[i].expects = NULL;
			d->releases[i].waivers = NULL;
			d->nreleases = i + 1;
			if (src->releases[i].nexpects) {
				size_t n = src->releases[i].nexpects;
				d->releases[i].expects = malloc(n * sizeof(pw_sim_expect));
				if (!d->releases[i].expects)
					goto nomem;
				memcpy(d->releases[i].expects, src->releases[i].expects,
				       n * sizeof(pw_sim_expect));
			}
			if (src->releases[i].nwaivers) {
				size_t n = src->releases[i].nwaivers;
				d->releases[i].waivers = malloc(n * sizeof(pw_sim_waiver));
				if (!d->releases[i].waivers)
					goto nomem;
				memcpy(d->releases[i].waivers, src->releases[i].waivers,
				       n * sizeof(pw_sim_waiver));
			}
		}
	}
	*out = d;
	return PW_OK;
nomem:
	pw_sim_scenario_free(d);
	return PW_ERR_NOMEM;
}

static pw_status add_series(pw_sim *w, size_t *cap, const pw_sim_model_spec *m,
                            const pw_sim_platform *p, const pw_sim_config *c)
{
	if (w->nseries == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		pw_sim_series *ns = realloc(w->series, ncap * sizeof *ns);
		if (!ns)
			return PW_ERR_NOMEM;
		w->series = ns;
		*cap = ncap;
	}
	pw_sim_series *s = &w->series[w->nseries];
	memset(s, 0, sizeof *s);
	s->index = w->nseries;
	s->model = *m;
	s->platform = p;
	s->config = *c;
	uint64_t h = pw_sim_hash_str(pw_sim_hash_str(pw_sim_hash_u64(PW_SIM_HASH_INIT, w->seed),
	                                             m->name),
	                             p->name);
	s->chipset = 1 + (uint32_t)(h % PW_SIM_CHIPSETS_PER_PLATFORM);
	series_base(w, s);
	w->nseries++;
	return PW_OK;
}

pw_status pw_sim_new(pw_sim **out, const pw_sim_scenario *sc, const pw_sim_overrides *ov,
                     char *errbuf, size_t errlen)
{
	pw_status st;
	pw_sim_model_spec *models = NULL;
	const pw_sim_platform **plats = NULL;
	pw_sim_config *cfgs = NULL;
	*out = NULL;
	pw_sim *w = calloc(1, sizeof *w);
	if (!w)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	snprintf(w->name, sizeof w->name, "%s", sc->name);
	w->seed = ov && ov->has_seed ? ov->seed : sc->seed;
	w->start_us = sc->start_unix_us;
	w->days = ov && ov->days > 0 ? ov->days : sc->days;
	w->nightly_repeats = ov && ov->nightly_repeats ? ov->nightly_repeats : sc->nightly_repeats;
	w->outlier_rate = sc->outlier_rate;
	w->rotation = sc->chipset_rotation ? sc->chipset_rotation : 3;
	if (w->rotation > 4)
		w->rotation = 4; /* a series stays inside its cell */
	w->anchor_cl = sc->anchor_cl;
	w->anchor_day = sc->anchor_day;
	w->per_day = sc->cls_per_day ? sc->cls_per_day : 1;
	w->flag_rate = sc->flag_rate;
	st = scenario_copy(sc, &w->sc);
	if (st != PW_OK) {
		pw_fail(st, errbuf, errlen, "out of memory");
		goto fail;
	}

	/*
	 * chip-set offsets (§4.1 cell/chip heterogeneity): each cell's binning
	 * puts its sets 0.5–1.5% off the platform mean (uniform magnitude, random
	 * sign); the sets of one cell agree within ±0.1%, which is why a series
	 * may rotate among the sets of its cell without leaving the 0.4% norm.
	 */
	for (size_t p = 0; p < pw_sim_platforms_count; p++) {
		uint64_t h = pw_sim_hash_str(pw_sim_hash_u64(PW_SIM_HASH_INIT, w->seed ^ 0xc5),
		                             pw_sim_platforms[p].name);
		for (size_t cell = 0; cell < 2; cell++) {
			pw_sim_rng r;
			pw_sim_rng_init(&r, pw_sim_hash_u64(h, 100 + cell));
			double mag = 0.005 + SIM_SET_SPREAD +
			             (0.010 - 2 * SIM_SET_SPREAD) * pw_sim_rng_uniform(&r);
			double off = pw_sim_rng_uniform(&r) < 0.5 ? -mag : mag;
			for (size_t k = 0; k < 4; k++) {
				size_t set = cell == 0 ? 4 + k : k; /* sets 5–8 in cell 0, 1–4 in cell 1 */
				double dev = SIM_SET_SPREAD * (2 * pw_sim_rng_uniform(&r) - 1);
				w->chipset_off[p][set] = off + (off < 0 ? -dev : dev);
			}
		}
	}

	/* the matrix: models × platforms × configs at the scale asked */
	size_t nm = ov && ov->models ? ov->models : (sc->nmodels ? sc->nmodels : sc->nmodel_names);
	size_t np = ov && ov->platforms ? ov->platforms
	                                : (sc->nplatforms ? sc->nplatforms : sc->nplatform_names);
	size_t nc = ov && ov->configs ? ov->configs
	                              : (sc->nconfigs ? sc->nconfigs : sc->nconfig_names);
	if (np == 0)
		np = 4;
	if (nc == 0)
		nc = pw_sim_default_configs_count;
	if (nm == 0)
		nm = 1;
	models = calloc(nm, sizeof *models);
	plats = calloc(np, sizeof *plats);
	cfgs = calloc(nc, sizeof *cfgs);
	if (!models || !plats || !cfgs) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < nm; i++) {
		if (i < sc->nmodel_names) {
			if (!pw_sim_model_builtin(sc->models[i], &models[i])) {
				st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "unknown model \"%s\"",
				             sc->models[i]);
				goto fail;
			}
		} else {
			pw_sim_model_synthetic(i, &models[i]);
		}
	}
	for (size_t i = 0; i < np; i++) {
		const char *pn = i < sc->nplatform_names ? sc->platforms[i]
		                                          : pw_sim_platforms[i % pw_sim_platforms_count].name;
		if (i >= sc->nplatform_names && i >= pw_sim_platforms_count) {
			st = pw_fail(PW_ERR_INVALID, errbuf, errlen,
			             "at most %zu platforms exist, %zu asked", pw_sim_platforms_count, np);
			goto fail;
		}
		plats[i] = pw_sim_platform_find(pn);
		if (!plats[i]) {
			st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "unknown platform \"%s\"", pn);
			goto fail;
		}
	}
	for (size_t i = 0; i < nc; i++) {
		const char *cn = i < sc->nconfig_names ? sc->configs[i]
		                                        : pw_sim_default_configs[i % pw_sim_default_configs_count];
		if (i >= sc->nconfig_names && i >= pw_sim_default_configs_count) {
			st = pw_fail(PW_ERR_INVALID, errbuf, errlen,
			             "at most %zu default configs exist, %zu asked",
			             pw_sim_default_configs_count, nc);
			goto fail;
		}
		st = pw_sim_config_parse(cn, &cfgs[i], errbuf, errlen);
		if (st != PW_OK)
			goto fail;
	}
	size_t *cap = &w->series_cap;
	for (size_t i = 0; i < nm; i++) {
		const pw_sim_matrix *mx = NULL;
		for (size_t k = 0; k < sc->nmatrix; k++)
			if (strcmp(sc->matrix[k].model, models[i].name) == 0)
				mx = &sc->matrix[k];
		if (mx) {
			for (size_t k = 0; k < mx->nplatforms; k++) {
				const pw_sim_platform *p = pw_sim_platform_find(mx->platforms[k]);
				if (!p) {
					st = pw_fail(PW_ERR_INVALID, errbuf, errlen,
					             "unknown platform \"%s\"", mx->platforms[k]);
					goto fail;
				}
				for (size_t c = 0; c < nc; c++)
					if ((st = add_series(w, cap, &models[i], p, &cfgs[c])) != PW_OK)
						goto nomem;
			}
			continue;
		}
		for (size_t p = 0; p < np; p++)
			for (size_t c = 0; c < nc; c++)
				if ((st = add_series(w, cap, &models[i], plats[p], &cfgs[c])) != PW_OK)
					goto nomem;
	}
	free(models);
	free(plats);
	free(cfgs);
	*out = w;
	return PW_OK;
nomem:
	st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
fail:
	free(models);
	free(plats);
	free(cfgs);
	pw_sim_free(w);
	return st;
}

void pw_sim_free(pw_sim *w)
{
	if (!w)
		return;
	pw_sim_scenario_free(w->sc);
	free(w->series);
	free(w);
}

size_t pw_sim_series_count(const pw_sim *w) { return w->nseries; }

const pw_sim_series *pw_sim_series_at(const pw_sim *w, size_t i)
{
	return i < w->nseries ? &w->series[i] : NULL;
}

pw_status pw_sim_series_find(const pw_sim *w, const char *model, const char *platform,
                             const char *config, size_t *idx)
{
	for (size_t i = 0; i < w->nseries; i++) {
		const pw_sim_series *s = &w->series[i];
		if (strcmp(s->model.name, model) == 0 && strcmp(s->platform->name, platform) == 0 &&
		    strcmp(s->config.name, config) == 0) {
			*idx = i;
			return PW_OK;
		}
	}
	return PW_ERR_NOT_FOUND;
}

pw_status pw_sim_series_ensure(pw_sim *w, const pw_sim_model_spec *m, const char *platform,
                               const char *config, size_t *idx, char *errbuf, size_t errlen)
{
	if (pw_sim_series_find(w, m->name, platform, config, idx) == PW_OK)
		return PW_OK;
	const pw_sim_platform *p = pw_sim_platform_find(platform);
	if (!p)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "unknown platform \"%s\"", platform);
	pw_sim_config c;
	pw_status st = pw_sim_config_parse(config, &c, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (strcmp(c.name, config) != 0) /* the series is found by its canonical name */
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "config \"%s\" is not canonical (\"%s\")",
		               config, c.name);
	if ((st = add_series(w, &w->series_cap, m, p, &c)) != PW_OK)
		return pw_fail(st, errbuf, errlen, "out of memory");
	*idx = w->nseries - 1;
	return PW_OK;
}

const char *pw_sim_name(const pw_sim *w) { return w->name; }
uint64_t pw_sim_seed(const pw_sim *w) { return w->seed; }
int pw_sim_days(const pw_sim *w) { return w->days; }
int64_t pw_sim_start_us(const pw_sim *w) { return w->start_us; }
size_t pw_sim_releases_count(const pw_sim *w) { return w->sc->nreleases; }

const pw_sim_release *pw_sim_release_at(const pw_sim *w, size_t i)
{
	return i < w->sc->nreleases ? &w->sc->releases[i] : NULL;
}

size_t pw_sim_fleet_count(const pw_sim *w) { return w->sc->nfleet; }

const pw_sim_fleet_change *pw_sim_fleet_at(const pw_sim *w, size_t i)
{
	return i < w->sc->nfleet ? &w->sc->fleet[i] : NULL;
}

static size_t platform_index(const pw_sim_platform *p)
{
	return (size_t)(p - pw_sim_platforms);
}

double pw_sim_chipset_offset(const pw_sim *w, const pw_sim_platform *p, uint32_t set)
{
	if (set < 1 || set > PW_SIM_CHIPSETS_PER_PLATFORM)
		return 0.0;
	return w->chipset_off[platform_index(p)][set - 1];
}

/* The k-th set of the rotation group that starts at `first`, inside first's cell. */
static uint32_t rotation_set(uint32_t first, uint32_t k)
{
	uint32_t base = first >= 5 ? 5 : 1;
	return base + (first - base + k) % 4;
}

static double group_offset(const pw_sim *w, const pw_sim_platform *p, uint32_t first)
{
	double sum = 0;
	for (uint32_t k = 0; k < w->rotation; k++)
		sum += pw_sim_chipset_offset(w, p, rotation_set(first, k));
	return sum / w->rotation;
}

const char *pw_sim_chipset_cell(const pw_sim_platform *p, uint32_t set)
{
	/* sets 1–4 in the second cell, 5–8 in the first (artifact 8: cell-mtv5-c12 has set #7) */
	return set >= 5 ? p->cells[0] : p->cells[1];
}

/* ---- History --------------------------------------------------------------- */

int64_t pw_sim_nightly_cl(const pw_sim *w, int day)
{
	return w->anchor_cl + (int64_t)w->per_day * (day - w->anchor_day);
}

void pw_sim_cl_describe(const pw_sim *w, int64_t cl, pw_sim_cl_info *out)
{
	static const char *const areas[] = {"fusion", "layout", "spmd", "runtime", "hlo-opt",
	                                    "codegen", "collectives", "docs", "tests", "build"};
	memset(out, 0, sizeof *out);
	out->cl = cl;
	uint64_t h = pw_sim_hash_u64(pw_sim_hash_u64(PW_SIM_HASH_INIT, w->seed ^ 0xc1), (uint64_t)cl);
	const char *area = areas[h % (sizeof areas / sizeof areas[0])];
	snprintf(out->author, sizeof out->author, "xla-%s", area);
	snprintf(out->title, sizeof out->title, "%s: change %06llx", area,
	         (unsigned long long)((h >> 8) & 0xffffff));
	bool in_range = false;
	for (size_t i = 0; i < w->sc->nflags; i++) {
		const pw_sim_flag_range *f = &w->sc->flags[i];
		if (cl < f->from || cl > f->to)
			continue;
		in_range = true;
		for (size_t k = 0; k < f->ncls; k++)
			if (f->cls[k] == cl)
				out->perf_relevant = true;
	}
	if (!in_range)
		out->perf_relevant = (double)((h >> 32) & 0xffff) / 65536.0 < w->flag_rate;
	for (size_t i = 0; i < w->sc->neffects; i++) {
		const pw_sim_effect *e = &w->sc->effects[i];
		if (e->cl == cl && !in_range)
			out->perf_relevant = true;
	}
	for (size_t i = 0; i < w->sc->nnotes; i++) {
		const pw_sim_cl_note *n = &w->sc->notes[i];
		if (n->cl != cl)
			continue;
		if (n->author[0])
			snprintf(out->author, sizeof out->author, "%s", n->author);
		if (n->title[0])
			snprintf(out->title, sizeof out->title, "%s", n->title);
		out->upstream = n->upstream;
	}
}

void pw_sim_build_at(pw_sim_build *b, pw_sim_build_kind kind, const char *build_id, int64_t cl)
{
	memset(b, 0, sizeof *b);
	b->kind = kind;
	b->cl = cl;
	b->upstream_limit = -1;
	if (build_id)
		snprintf(b->build_id, sizeof b->build_id, "%s", build_id);
	else
		snprintf(b->build_id, sizeof b->build_id, "bisect@cl/%lld", (long long)cl);
}

bool pw_sim_build_contains(const pw_sim_build *b, int64_t cl, int64_t upstream)
{
	bool in = cl < b->cl;
	for (size_t i = 0; i < b->npicks && !in; i++)
		in = b->picks[i] == cl;
	if (in)
		return true;
	if (cl != b->cl)
		return false;
	return upstream < 0 || b->upstream_limit < 0 || upstream < b->upstream_limit;
}

/* ---- Runs -------------------------------------------------------------------- */

static const pw_sim_model_rev *rev_at(const pw_sim *w, const char *model, int day)
{
	const pw_sim_model_rev *best = NULL;
	for (size_t i = 0; i < w->sc->nrevs; i++) {
		const pw_sim_model_rev *r = &w->sc->revs[i];
		if (strcmp(r->model, model) == 0 && r->day <= day && (!best || r->day >= best->day))
			best = r;
	}
	return best;
}

static void rev_fill(const pw_sim_model_rev *r, const char *model, pw_sim_run *out,
                     double *rev_pct)
{
	*rev_pct = 0;
	if (r) {
		snprintf(out->model_rev, sizeof out->model_rev, "%s", r->rev);
		*rev_pct = r->pct;
	} else {
		snprintf(out->model_rev, sizeof out->model_rev, "%.*s@base",
		         (int)(sizeof out->model_rev - sizeof "@base"), model);
	}
	if (r && r->fingerprint[0]) {
		snprintf(out->fingerprint, sizeof out->fingerprint, "%s", r->fingerprint);
	} else {
		uint64_t h = pw_sim_hash_str(pw_sim_hash_str(PW_SIM_HASH_INIT, model), out->model_rev);
		snprintf(out->fingerprint, sizeof out->fingerprint, "hlo:%08llx",
		         (unsigned long long)(h & 0xffffffffULL));
	}
}

static int day_of(const pw_sim *w, int64_t t_us)
{
	int64_t d = t_us - w->start_us;
	return d < 0 ? -1 : (int)(d / (86400LL * 1000000LL));
}

static pw_sim_op *op_find(pw_sim_run *r, const char *name)
{
	for (size_t i = 0; i < r->nops; i++)
		if (strcmp(r->ops[i].name, name) == 0)
			return &r->ops[i];
	return NULL;
}

/* slot < 0: the chip set is drawn from the rotation; else its slot-th set */
static pw_status run_make(const pw_sim *w, size_t si, const pw_sim_model_rev *rev,
                          const pw_sim_build *b, const char *run_id, uint32_t repeat,
                          int64_t t_us, const char *job_id, int slot, pw_sim_run *out)
{
	if (si >= w->nseries)
		return PW_ERR_INVALID;
	const pw_sim_series *s = &w->series[si];
	const pw_sim_platform *p = s->platform;
	const pw_sim_config *c = &s->config;
	memset(out, 0, sizeof *out);
	snprintf(out->run_id, sizeof out->run_id, "%s", run_id);
	out->repeat = repeat;
	out->series = si;
	snprintf(out->model, sizeof out->model, "%s", s->model.name);
	double rev_pct;
	rev_fill(rev, s->model.name, out, &rev_pct);
	out->platform = p;
	out->config = *c;
	out->build = *b;
	snprintf(out->firmware, sizeof out->firmware, "%s", p->firmware);
	snprintf(out->harness, sizeof out->harness, "perfbench-2.31");
	if (job_id)
		snprintf(out->job_id, sizeof out->job_id, "%s", job_id);
	out->started_unix_us = t_us;
	out->finished_unix_us = t_us + 15LL * 60 * 1000000; /* 15 min a run (§1) */
	out->warmup_s = 120;
	out->compile_cache_total = 14;
	out->compile_cache_hits = 14;
	out->open_loop = true;

	/* one generator per (seed, series, run id, repeat) */
	uint64_t h = pw_sim_hash_u64(PW_SIM_HASH_INIT, w->seed);
	h = pw_sim_hash_str(h, s->model.name);
	h = pw_sim_hash_str(h, p->name);
	h = pw_sim_hash_str(h, c->name);
	h = pw_sim_hash_str(h, run_id);
	h = pw_sim_hash_u64(h, repeat);
	pw_sim_rng rng;
	pw_sim_rng_init(&rng, h);
	out->seed = pw_sim_rng_next(&rng) % 100000;

	/* chip-set: the series' pinned set, or one of the `rotation` sets of its cell */
	uint32_t drawn = (uint32_t)(pw_sim_rng_next(&rng) % w->rotation);
	uint32_t set = rotation_set(s->chipset, slot < 0 ? drawn : (uint32_t)slot % 4);
	const char *cell = pw_sim_chipset_cell(p, set);
	snprintf(out->chipset, sizeof out->chipset, "pinned-%u", set);
	snprintf(out->cell, sizeof out->cell, "%s", cell);
	double infra = pw_sim_chipset_offset(w, p, set);
	double fleet_f = 1.0;
	for (size_t i = 0; i < w->sc->nfleet; i++) {
		const pw_sim_fleet_change *fc = &w->sc->fleet[i];
		if (fc->at_unix_us > t_us || !sel_match1(fc->platform, p->name))
			continue;
		if (fc->cell[0] && strcmp(fc->cell, cell) != 0)
			continue;
		fleet_f *= 1.0 + fc->pct / 100.0;
	}
	double infra_f = (1.0 + infra) * fleet_f;
	out->infra_pct = (infra_f - 1.0) * 100.0;

	/* CL effects present in this build */
	double eff_f = 1.0, bytes_f = 1.0, metric_f[PW_SIM_METRIC_COUNT];
	for (int m = 0; m < PW_SIM_METRIC_COUNT; m++)
		metric_f[m] = 1.0;
	const pw_sim_effect *active[64];
	size_t nactive = 0;
	/* the numerics fingerprint: what the model computes, not how fast; two
	 * halves so that it has 128 bits (32 hex digits) */
	uint64_t nf[2];
	for (int k = 0; k < 2; k++) {
		nf[k] = pw_sim_hash_u64(PW_SIM_HASH_INIT, 0x6e756d65u + (uint64_t)k);
		nf[k] = pw_sim_hash_str(nf[k], s->model.name);
		nf[k] = pw_sim_hash_str(nf[k], out->model_rev);
		nf[k] = pw_sim_hash_str(nf[k], p->name);
		nf[k] = pw_sim_hash_str(nf[k], c->name);
	}
	for (size_t i = 0; i < w->sc->neffects; i++) {
		const pw_sim_effect *e = &w->sc->effects[i];
		if (!sel_match(&e->sel, s->model.name, p->name, c))
			continue;
		if (!pw_sim_build_contains(b, e->cl, e->upstream))
			continue;
		bool all = true;
		for (size_t k = 0; k < e->nrequires; k++)
			all = all && pw_sim_build_contains(b, e->requires[k], -1);
		if (!all)
			continue;
		if (e->numerics)
			for (int k = 0; k < 2; k++)
				nf[k] = pw_sim_hash_u64(pw_sim_hash_u64(nf[k], (uint64_t)e->cl),
				                        (uint64_t)e->upstream);
		if (e->metric >= 0) {
			metric_f[e->metric] *= 1.0 + e->pct / 100.0;
			continue;
		}
		eff_f *= 1.0 + e->pct / 100.0;
		bytes_f *= 1.0 + e->bytes_pct / 100.0;
		if (nactive < sizeof active / sizeof active[0])
			active[nactive++] = e;
	}
	out->effect_pct = (eff_f - 1.0) * 100.0;
	snprintf(out->numerics, sizeof out->numerics, "%016" PRIx64 "%016" PRIx64, nf[0], nf[1]);

	/* §4.1 noise: run-to-run per phase, host jitter shared, outliers, bimodality */
	double sr = pw_sim_class_sigma_run(p->cls) * s->sigma_factor;
	double sh = pw_sim_class_sigma_host(p->cls) * s->sigma_factor;
	double zh = pw_sim_rng_normal(&rng);
	double n_step = 1.0 + sr * pw_sim_rng_normal(&rng) + sh * zh;
	double n_pref = 1.0 + sr * pw_sim_rng_normal(&rng) + sh * zh;
	double n_tail1 = 1.0 + SIM_TAIL_SIGMA * pw_sim_class_sigma(p->cls) * pw_sim_rng_normal(&rng);
	double n_tail2 = 1.0 + SIM_TAIL_SIGMA * pw_sim_class_sigma(p->cls) * pw_sim_rng_normal(&rng);
	double u_out = pw_sim_rng_uniform(&rng), k_out = 5.0 + 5.0 * pw_sim_rng_uniform(&rng);
	double u_bi = pw_sim_rng_uniform(&rng);
	double outlier_f = 1.0;
	if (u_out < w->outlier_rate) {
		out->outlier = true;
		outlier_f = 1.0 + k_out * pw_sim_class_sigma(p->cls);
	}
	/* a transient infra outlier on its day's nightly (not on a rerun: job runs carry a job id) */
	for (size_t i = 0; i < w->sc->ntransients && !out->job_id[0] && b->kind == PW_SIM_BUILD_NIGHTLY; i++) {
		const pw_sim_transient *tr = &w->sc->transients[i];
		int64_t day = (t_us - w->sc->start_unix_us) / (86400LL * 1000000);
		if (day == tr->day && sel_match(&tr->sel, s->model.name, p->name, c)) {
			out->outlier = true;
			outlier_f = 1.0 + tr->sigma * pw_sim_class_sigma(p->cls);
		}
	}
	double bi_f = (s->bimodal_pct > 0 && u_bi < 0.5) ? 1.0 + s->bimodal_pct / 100.0 : 1.0;
	double base_f = (1.0 + rev_pct / 100.0) * infra_f * bi_f;

	/* the step time of the config's own phase carries the CL effects */
	double step = s->step_ms * base_f * eff_f * n_step * outlier_f;
	double prefill = s->prefill_ms * base_f * n_pref * outlier_f;
	if (c->phase == PW_SIM_PREFILL)
		prefill = step;
	double chips = p->chips;
	double peak_chip = peak_flops(p, c->dtype);
	double peak_bw = chips * p->hbm_gbps * 1e9;
	double goodput;
	out->has[PW_SIM_TTFT_P50_MS] = out->has[PW_SIM_TTFT_P99_MS] = true;
	out->has[PW_SIM_GOODPUT_TOK_S_CHIP] = out->has[PW_SIM_MFU] = true;
	out->has[PW_SIM_HBM_BW_UTIL] = out->has[PW_SIM_COST_PER_MTOK_USD] = true;
	out->value[PW_SIM_TTFT_P50_MS] = prefill * (1.0 + SIM_QUEUE_FRAC);
	out->value[PW_SIM_TTFT_P99_MS] = out->value[PW_SIM_TTFT_P50_MS] * SIM_TTFT_TAIL * n_tail1;
	if (c->phase == PW_SIM_DECODE) {
		out->has[PW_SIM_TPOT_P50_MS] = out->has[PW_SIM_TPOT_P99_MS] = true;
		out->value[PW_SIM_TPOT_P50_MS] = step;
		out->value[PW_SIM_TPOT_P99_MS] = step * SIM_TPOT_TAIL * n_tail2;
		goodput = c->batch / (step / 1e3) / chips * SIM_SLO_FRAC;
	} else {
		out->has[PW_SIM_PREFILL_COMPUTE_MS] = true;
		out->value[PW_SIM_PREFILL_COMPUTE_MS] = step;
		goodput = c->seq_len / (out->value[PW_SIM_TTFT_P50_MS] / 1e3) / chips * SIM_SLO_FRAC;
	}
	out->value[PW_SIM_GOODPUT_TOK_S_CHIP] = goodput;
	/* MFU: useful FLOPs only, at the tokens actually delivered (§3.2) */
	double tok_s_chip = c->phase == PW_SIM_DECODE ? c->batch / (step / 1e3) / chips
	                                              : c->seq_len / (step / 1e3) / chips;
	out->value[PW_SIM_MFU] = s->flops_token * tok_s_chip / peak_chip;
	out->value[PW_SIM_HBM_BW_UTIL] = s->bytes_step * bytes_f / (step / 1e3) / peak_bw;
	out->value[PW_SIM_COST_PER_MTOK_USD] = p->usd_per_chip_hour / (goodput * 3600.0) * 1e6;
	for (int m = 0; m < PW_SIM_METRIC_COUNT; m++)
		if (out->has[m])
			out->value[m] *= metric_f[m];
	if (out->value[PW_SIM_MFU] > 1.0)
		out->value[PW_SIM_MFU] = 1.0;
	if (out->value[PW_SIM_HBM_BW_UTIL] > 1.0)
		out->value[PW_SIM_HBM_BW_UTIL] = 1.0;

	/* per-op table: run noise (no outlier: a host stall is not kernel time), then CL rewrites */
	out->wall_us_per_step = step * 1e3;
	double op_f = base_f * n_step;
	for (size_t i = 0; i < s->nops; i++) {
		pw_sim_op *o = &out->ops[out->nops++];
		snprintf(o->name, sizeof o->name, "%s", s->ops[i].name);
		snprintf(o->kind, sizeof o->kind, "%s", s->ops[i].kind);
		o->calls = s->model.layers;
		o->us_per_step = s->ops[i].us * op_f * (1.0 + SIM_OP_SIGMA * pw_sim_rng_normal(&rng));
		o->hbm_bytes_per_step = s->ops[i].hbm_bytes;
		o->vmem_bytes = i == 0 ? pw_sim_attention_vmem(p, c) : 0;
	}
	for (size_t a = 0; a < nactive; a++) {
		const pw_sim_effect *e = active[a];
		bool split = false;
		for (size_t k = 0; k < w->sc->nsplits; k++) {
			const pw_sim_opsplit *sp = &w->sc->splits[k];
			if (sp->cl != e->cl || !sel_match(&sp->sel, s->model.name, p->name, c))
				continue;
			pw_sim_op *victim = op_find(out, sp->op);
			double vmem = 0;
			if (!victim || !pw_sim_split_declines(sp, s, &vmem))
				continue;
			double victim_bytes = victim->hbm_bytes_per_step;
			double base_us = 0;
			for (size_t j = 0; j < s->nops; j++)
				if (strcmp(s->ops[j].name, sp->op) == 0)
					base_us = s->ops[j].us;
			uint32_t calls = victim->calls;
			/* remove the victim, append its parts */
			size_t vi = (size_t)(victim - out->ops);
			memmove(&out->ops[vi], &out->ops[vi + 1], (out->nops - vi - 1) * sizeof out->ops[0]);
			out->nops--;
			size_t first = out->nops;
			for (size_t j = 0; j < sp->ninto && out->nops < PW_SIM_MAX_OPS + PW_SIM_MAX_SPLIT;
			     j++) {
				pw_sim_op *o = &out->ops[out->nops++];
				snprintf(o->name, sizeof o->name, "%s", sp->into[j].name);
				snprintf(o->kind, sizeof o->kind, "%s", sp->into[j].kind);
				o->calls = calls;
				o->us_per_step = base_us * sp->into[j].us * op_f *
				                 (1.0 + SIM_OP_SIGMA * pw_sim_rng_normal(&rng));
			}
			pw_sim_split_mark(out, first, out->nops - first, sp, s, victim_bytes, vmem);
			split = true;
			break;
		}
		if (!split && out->nops > 0) {
			/* no rewrite given: the step-time change lands on the phase's attention op */
			out->ops[0].us_per_step += s->step_ms * 1e3 * op_f * e->pct / 100.0;
			if (out->ops[0].us_per_step < 0)
				out->ops[0].us_per_step = 0;
		}
	}
	return PW_OK;
}

pw_status pw_sim_run_make(const pw_sim *w, size_t series, const pw_sim_build *b,
                          const char *run_id, uint32_t repeat, int64_t t_unix_us,
                          const char *job_id, pw_sim_run *out)
{
	if (series >= w->nseries)
		return PW_ERR_INVALID;
	const pw_sim_model_rev *rev = rev_at(w, w->series[series].model.name, day_of(w, t_unix_us));
	return run_make(w, series, rev, b, run_id, repeat, t_unix_us, job_id, -1, out);
}

static pw_status run_make_fp(const pw_sim *w, size_t series, const char *fingerprint,
                             const pw_sim_build *b, const char *run_id, uint32_t repeat,
                             int64_t t_unix_us, const char *job_id, int slot, pw_sim_run *out)
{
	if (series >= w->nseries)
		return PW_ERR_INVALID;
	const char *model = w->series[series].model.name;
	/* the base revision (none declared for day 0) and every declared one */
	pw_sim_run probe;
	double pct;
	memset(&probe, 0, sizeof probe);
	const pw_sim_model_rev *r0 = rev_at(w, model, 0);
	rev_fill(r0, model, &probe, &pct);
	if (strcmp(probe.fingerprint, fingerprint) == 0)
		return run_make(w, series, r0, b, run_id, repeat, t_unix_us, job_id, slot, out);
	for (size_t i = 0; i < w->sc->nrevs; i++) {
		const pw_sim_model_rev *r = &w->sc->revs[i];
		if (strcmp(r->model, model) != 0)
			continue;
		rev_fill(r, model, &probe, &pct);
		if (strcmp(probe.fingerprint, fingerprint) == 0)
			return run_make(w, series, r, b, run_id, repeat, t_unix_us, job_id, slot, out);
	}
	return PW_ERR_NOT_FOUND;
}

pw_status pw_sim_run_make_fingerprint(const pw_sim *w, size_t series, const char *fingerprint,
                                      const pw_sim_build *b, const char *run_id,
                                      uint32_t repeat, int64_t t_unix_us, const char *job_id,
                                      pw_sim_run *out)
{
	return run_make_fp(w, series, fingerprint, b, run_id, repeat, t_unix_us, job_id, -1, out);
}

pw_status pw_sim_run_make_rebaseline(const pw_sim *w, size_t series, const char *fingerprint,
                                     const pw_sim_build *b, const char *run_id, uint32_t repeat,
                                     uint32_t slot, int64_t t_unix_us, const char *job_id,
                                     pw_sim_run *out)
{
	pw_status st = run_make_fp(w, series, fingerprint, b, run_id, repeat, t_unix_us, job_id,
	                           (int)(slot % 4), out);
	if (st == PW_OK)
		out->rebaseline = true;
	return st;
}

size_t pw_sim_run_metric_count(const pw_sim_run *r)
{
	size_t n = 0;
	for (int m = 0; m < PW_SIM_METRIC_COUNT; m++)
		n += r->has[m];
	return n;
}

/* ---- Timeline ------------------------------------------------------------------ */

#define US_PER_S 1000000LL
#define US_PER_DAY (86400LL * US_PER_S)

void pw_sim_cursor_init(pw_sim_cursor *c, const pw_sim *w)
{
	memset(c, 0, sizeof *c);
	c->w = w;
}

static void day_label(const pw_sim *w, int day, char *buf, size_t len, const char *sep)
{
	time_t t = (time_t)((w->start_us + day * US_PER_DAY) / US_PER_S);
	struct tm tm;
	gmtime_r(&t, &tm);
	snprintf(buf, len, "%04d%s%02d%s%02d", tm.tm_year + 1900, sep, tm.tm_mon + 1, sep,
	         tm.tm_mday);
}

/* The time of the next candidate event, to interleave fleet changes. */
static bool fleet_due(pw_sim_cursor *c, int64_t t_next, pw_sim_event *ev)
{
	const pw_sim *w = c->w;
	if (c->fleet_next >= w->sc->nfleet)
		return false;
	/* fleet changes are kept in time order by the parser */
	const pw_sim_fleet_change *fc = &w->sc->fleet[c->fleet_next];
	if (fc->at_unix_us > t_next)
		return false;
	memset(ev, 0, sizeof *ev);
	ev->kind = PW_SIM_EV_FLEET_CHANGE;
	ev->t_unix_us = fc->at_unix_us;
	ev->fleet = fc;
	c->fleet_next++;
	return true;
}

pw_status pw_sim_cursor_next(pw_sim_cursor *c, pw_sim_event *ev)
{
	const pw_sim *w = c->w;
	for (;;) {
		if (c->day >= w->days) {
			/* fleet changes after the last day still go out */
			if (fleet_due(c, INT64_MAX, ev))
				return PW_OK;
			return PW_ERR_NOT_FOUND;
		}
		int64_t day0 = w->start_us + c->day * US_PER_DAY;
		if (c->stage == 0) {
			/* the nightly sweep: 01:00–13:00 */
			size_t total = w->nseries * w->nightly_repeats;
			if (c->i >= total) {
				c->stage = 1;
				c->rel = 0;
				c->i = 0;
				continue;
			}
			int64_t t = day0 + 3600 * US_PER_S + (int64_t)(c->i * (43200.0 * US_PER_S / total));
			if (fleet_due(c, t, ev))
				return PW_OK;
			size_t si = c->i / w->nightly_repeats;
			uint32_t rep = (uint32_t)(c->i % w->nightly_repeats);
			char date[48], run_id[PW_SIM_NAME_MAX * 2], bid[PW_SIM_NAME_MAX];
			day_label(w, c->day, date, sizeof date, "");
			snprintf(run_id, sizeof run_id, "t0-%s-%05zu", date, si);
			day_label(w, c->day, date, sizeof date, "-");
			snprintf(bid, sizeof bid, "xla-nightly-%s", date);
			pw_sim_build b;
			pw_sim_build_at(&b, PW_SIM_BUILD_NIGHTLY, bid, pw_sim_nightly_cl(w, c->day));
			memset(ev, 0, sizeof *ev);
			ev->kind = PW_SIM_EV_RUN;
			ev->t_unix_us = t;
			pw_status st = pw_sim_run_make(w, si, &b, run_id, rep, t, NULL, &ev->run);
			c->i++;
			return st;
		}
		if (c->stage == 1) {
			/* release and RC sweeps of the day: 14:00–20:00, one after another */
			if (c->rel >= w->sc->nreleases) {
				c->stage = 2;
				c->rel = 0;
				continue;
			}
			const pw_sim_release *r = &w->sc->releases[c->rel];
			size_t total = w->nseries * r->repeats;
			if (r->day != c->day || c->i >= total) {
				c->rel++;
				c->i = 0;
				continue;
			}
			int64_t t = day0 + 14 * 3600 * US_PER_S +
			            (int64_t)(c->i * (21600.0 * US_PER_S / total));
			if (fleet_due(c, t, ev))
				return PW_OK;
			size_t si = c->i / r->repeats;
			uint32_t rep = (uint32_t)(c->i % r->repeats);
			char run_id[PW_SIM_NAME_MAX * 2];
			snprintf(run_id, sizeof run_id, "t1-%s-%05zu", r->id, si);
			pw_sim_build b;
			pw_sim_build_at(&b, r->kind, r->id, r->cl);
			snprintf(b.release_id, sizeof b.release_id, "%s", r->id);
			memset(ev, 0, sizeof *ev);
			ev->kind = PW_SIM_EV_RUN;
			ev->t_unix_us = t;
			pw_status st = pw_sim_run_make(w, si, &b, run_id, rep, t, NULL, &ev->run);
			c->i++;
			return st;
		}
		if (c->stage == 2) {
			/* 21:00: the release tooling asks for a verdict on each RC of the day */
			while (c->rel < w->sc->nreleases &&
			       (w->sc->releases[c->rel].day != c->day ||
			        w->sc->releases[c->rel].kind != PW_SIM_BUILD_RC))
				c->rel++;
			if (c->rel >= w->sc->nreleases) {
				c->stage = 3;
				continue;
			}
			int64_t t = day0 + 21 * 3600 * US_PER_S;
			if (fleet_due(c, t, ev))
				return PW_OK;
			memset(ev, 0, sizeof *ev);
			ev->kind = PW_SIM_EV_GATE_REQUEST;
			ev->t_unix_us = t;
			ev->release = &w->sc->releases[c->rel];
			c->rel++;
			return PW_OK;
		}
		/* end of day: fleet changes before the next midnight */
		if (fleet_due(c, day0 + US_PER_DAY - 1, ev))
			return PW_OK;
		c->day++;
		c->stage = 0;
		c->i = 0;
		c->rel = 0;
	}
}

void pw_sim_timeline_size(const pw_sim *w, uint64_t *runs, uint64_t *samples, uint64_t *fleet,
                          uint64_t *gates)
{
	uint64_t per_round = 0;
	for (size_t i = 0; i < w->nseries; i++)
		per_round += w->series[i].config.phase == PW_SIM_DECODE ? 8 : 7;
	uint64_t r = 0, s = 0, g = 0;
	r += (uint64_t)w->days * w->nseries * w->nightly_repeats;
	s += (uint64_t)w->days * per_round * w->nightly_repeats;
	for (size_t i = 0; i < w->sc->nreleases; i++) {
		const pw_sim_release *rel = &w->sc->releases[i];
		if (rel->day < 0 || rel->day >= w->days)
			continue;
		r += (uint64_t)w->nseries * rel->repeats;
		s += per_round * rel->repeats;
		g += rel->kind == PW_SIM_BUILD_RC;
	}
	if (runs)
		*runs = r;
	if (samples)
		*samples = s;
	if (fleet)
		*fleet = w->sc->nfleet;
	if (gates)
		*gates = g;
}
