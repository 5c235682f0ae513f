/*
 * sim_proto.c: packing simulator values into perfwatch.v1 messages and
 * reading BisectJobs (contract in sim_proto.h).
 *
 * Messages are assembled on the stack from the run's own strings (protobuf-c
 * only reads them while packing), so the only allocation is the output.
 */
#include "sim_proto.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfwatch/v1/canary.pb-c.h"
#include "perfwatch/v1/compiler.pb-c.h"
#include "perfwatch/v1/fleet.pb-c.h"
#include "perfwatch/v1/gate.pb-c.h"
#include "perfwatch/v1/run.pb-c.h"

#define US_PER_S 1000000LL

static pw_status pack_out(const ProtobufCMessage *m, uint8_t **out, size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return PW_ERR_NOMEM;
	*len = protobuf_c_message_pack(m, buf);
	*out = buf;
	return PW_OK;
}

/* ------------------------------------------------------------- namespaces */

pw_status pw_sim_ns_append(char *buf, size_t len, const char *ns)
{
	if (!ns || !*ns)
		return PW_OK;
	size_t n = strlen(buf), k = strlen(ns);
	if (n + 1 + k + 1 > len)
		return PW_ERR_INVALID;
	buf[n] = '.';
	memcpy(buf + n + 1, ns, k + 1);
	return PW_OK;
}

bool pw_sim_ns_strip(char *buf, const char *ns)
{
	if (!ns || !*ns)
		return true;
	size_t n = strlen(buf), k = strlen(ns);
	if (n < k + 2 || buf[n - k - 1] != '.' || strcmp(buf + n - k, ns) != 0)
		return false;
	buf[n - k - 1] = '\0';
	return true;
}

pw_status pw_sim_run_namespace(pw_sim_run *r, const char *ns)
{
	if (!ns || !*ns)
		return PW_OK;
	pw_status st = pw_sim_ns_append(r->model, sizeof r->model, ns);
	if (st == PW_OK)
		st = pw_sim_ns_append(r->fingerprint, sizeof r->fingerprint, ns);
	/* nightly and bisection builds are the fleet's, shared by every series */
	if (st == PW_OK && (r->build.kind == PW_SIM_BUILD_RC || r->build.kind == PW_SIM_BUILD_RELEASE))
		st = pw_sim_ns_append(r->build.build_id, sizeof r->build.build_id, ns);
	if (st == PW_OK && r->build.release_id[0])
		st = pw_sim_ns_append(r->build.release_id, sizeof r->build.release_id, ns);
	/* the replay's fleet is its own too: its fleet changes freeze only its series */
	if (st == PW_OK && r->cell[0])
		st = pw_sim_ns_append(r->cell, sizeof r->cell, ns);
	return st;
}

/* hlo_kind and execution unit of the op categories the model emits */
static void op_kind(const char *category, bool gpu, const char **hlo_kind, const char **unit)
{
	static const struct {
		const char *category, *hlo_kind, *unit;
	} kinds[] = {
		{"attention_softmax_fused", "kCustom", "MXU"}, {"flash_attention", "kCustom", "MXU"},
		{"qk_scores", "kLoop", "MXU"},                {"attn_v", "kLoop", "MXU"},
		{"exponential-normalize", "kLoop", "VPU"},    {"qkv+out+ffn_gemms", "kOutput", "MXU"},
		{"ici", "collective-permute", "ICI"},         {"nvlink", "collective-permute", "NVLink"},
	};
	*hlo_kind = "";
	*unit = "";
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(kinds[i].category, category) == 0) {
			*hlo_kind = kinds[i].hlo_kind;
			*unit = kinds[i].unit;
		}
	if (gpu && strcmp(*unit, "MXU") == 0)
		*unit = "TensorCore";
	if (gpu && strcmp(*unit, "VPU") == 0)
		*unit = "CUDA-core";
}

pw_status pw_sim_proto_run(const pw_sim *w, const pw_sim_run *r, uint8_t **out, size_t *len)
{
	const pw_sim_series *s = pw_sim_series_at(w, r->series);
	if (!s)
		return PW_ERR_INVALID;
	const pw_sim_platform *p = r->platform;
	Perfwatch__V1__CompilerBuild cb = PERFWATCH__V1__COMPILER_BUILD__INIT;
	Perfwatch__V1__Platform pl = PERFWATCH__V1__PLATFORM__INIT;
	Perfwatch__V1__Config cf = PERFWATCH__V1__CONFIG__INIT;
	Perfwatch__V1__RunKey key = PERFWATCH__V1__RUN_KEY__INIT;
	Perfwatch__V1__RunResult rr = PERFWATCH__V1__RUN_RESULT__INIT;
	Perfwatch__V1__MetricSample ms[PW_SIM_METRIC_COUNT];
	Perfwatch__V1__MetricSample *msp[PW_SIM_METRIC_COUNT];
	Perfwatch__V1__OpTiming ot[PW_SIM_MAX_OPS + PW_SIM_MAX_SPLIT];
	Perfwatch__V1__OpTiming *otp[PW_SIM_MAX_OPS + PW_SIM_MAX_SPLIT];
	char cl[32], trace_mix[PW_SIM_NAME_MAX * 2], trace_uri[PW_SIM_NAME_MAX * 4];

	snprintf(cl, sizeof cl, "cl/%lld", (long long)r->build.cl);
	cb.build_id = (char *)r->build.build_id;
	cb.kind = (Perfwatch__V1__BuildKind)r->build.kind;
	cb.cl = cl;
	cb.cl_number = r->build.cl;
	cb.release_id = (char *)r->build.release_id;
	pl.name = (char *)p->name;
	pl.family = (Perfwatch__V1__PlatformFamily)p->family;
	pl.chips = p->chips;
	cf.name = (char *)r->config.name;
	cf.phase = (Perfwatch__V1__Phase)r->config.phase;
	cf.batch = r->config.batch;
	cf.seq_len = r->config.seq_len;
	cf.dtype = (Perfwatch__V1__Dtype)r->config.dtype;
	key.model = (char *)r->model;
	key.model_rev = (char *)r->model_rev;
	key.hlo_fingerprint = (char *)r->fingerprint;
	key.compiler = &cb;
	key.platform = &pl;
	key.config = &cf;
	key.firmware = (char *)r->firmware;

	rr.run_id = (char *)r->run_id;
	rr.repeat_index = r->repeat;
	rr.key = &key;
	rr.chip_set = (char *)r->chipset;
	rr.cell = (char *)r->cell;
	rr.harness_version = (char *)r->harness;
	rr.runtime_env = p->cls == PW_SIM_TPU ? "torch_xla 2.11 / runtime pinned"
	                                      : "trt-llm 0.19 / runtime pinned";
	rr.host_cpuset = "0-15";
	rr.reserved_neighbors = true;
	rr.warmup_discarded_s = r->warmup_s;
	rr.compile_cache_hits = r->compile_cache_hits;
	rr.compile_cache_total = r->compile_cache_total;
	rr.allocator_steady_s = 38;
	rr.load_mode = r->open_loop ? PERFWATCH__V1__LOAD_MODE__LOAD_MODE_OPEN_LOOP
	                            : PERFWATCH__V1__LOAD_MODE__LOAD_MODE_CLOSED_LOOP;
	/* λ matched to the goodput point: tokens/s of the slice over ~256 output tokens a request */
	rr.arrival_rate_rps = r->value[PW_SIM_GOODPUT_TOK_S_CHIP] * p->chips / 256.0;
	snprintf(trace_mix, sizeof trace_mix, "%s@2026-06 (p50 6k/p95 32k)", r->model);
	rr.trace_mix = trace_mix;
	rr.seed = r->seed;
	rr.measure_window_s = 600;
	rr.started_unix_us = r->started_unix_us;
	rr.finished_unix_us = r->finished_unix_us;
	size_t nm = 0;
	for (int m = 0; m < PW_SIM_METRIC_COUNT; m++) {
		if (!r->has[m])
			continue;
		perfwatch__v1__metric_sample__init(&ms[nm]);
		ms[nm].name = (char *)pw_sim_metric_name(m);
		ms[nm].metric = (Perfwatch__V1__Metric)pw_sim_metric_proto(m);
		ms[nm].value = r->value[m];
		ms[nm].unit = (char *)pw_sim_metric_unit(m);
		msp[nm] = &ms[nm];
		nm++;
	}
	rr.n_metrics = nm;
	rr.metrics = msp;
	for (size_t i = 0; i < r->nops; i++) {
		perfwatch__v1__op_timing__init(&ot[i]);
		const char *hk, *unit;
		op_kind(r->ops[i].kind, p->cls == PW_SIM_GPU, &hk, &unit);
		ot[i].op_name = (char *)r->ops[i].name;
		ot[i].category = (char *)r->ops[i].kind;
		ot[i].hlo_kind = (char *)hk;
		ot[i].unit = (char *)unit;
		ot[i].calls = r->ops[i].calls;
		ot[i].us_per_step = r->ops[i].us_per_step;
		ot[i].hbm_bytes_per_step = r->ops[i].hbm_bytes_per_step;
		otp[i] = &ot[i];
	}
	rr.n_ops = r->nops;
	rr.ops = otp;
	rr.wall_step_us = r->wall_us_per_step;
	double peak_bw = p->chips * p->hbm_gbps * 1e9;
	rr.roofline_predicted_step_us =
		s->config.phase == PW_SIM_DECODE ? s->bytes_step / peak_bw * 1e6 : 0;
	rr.achieved_bw_fraction = r->value[PW_SIM_HBM_BW_UTIL];
	rr.achieved_hbm_bw_tb_s = r->value[PW_SIM_HBM_BW_UTIL] * peak_bw / 1e12;
	snprintf(trace_uri, sizeof trace_uri, "sim://tr/%s/%s/%s", r->build.build_id,
	         r->fingerprint, r->run_id);
	rr.trace_uri = trace_uri;
	rr.numerics_fingerprint = (char *)r->numerics;
	if (r->rebaseline)
		rr.rebaseline_job_id = (char *)r->job_id;
	else
		rr.bisect_job_id = (char *)r->job_id;
	char hlo[4096];
	if (pw_sim_run_hlo(w, r, hlo, sizeof hlo) == PW_OK)
		rr.hlo_text = hlo;
	return pack_out(&rr.base, out, len);
}

static Perfwatch__V1__FleetChangeKind fleet_kind(const char *k)
{
	static const struct {
		const char *name;
		Perfwatch__V1__FleetChangeKind kind;
	} kinds[] = {
		{"recabling", PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_RECABLING},
		{"firmware", PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_FIRMWARE},
		{"harness", PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_HARNESS},
		{"chip_set", PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_CHIP_SET},
		{"chip-set", PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_CHIP_SET},
		{"host", PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_HOST},
		{"runtime", PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_RUNTIME},
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(kinds[i].name, k) == 0)
			return kinds[i].kind;
	return PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_OTHER;
}

static pw_status fleet_pack(const pw_sim_fleet_change *fc, const char *ns, uint8_t **out,
                            size_t *len);

pw_status pw_sim_proto_fleet_ns(const pw_sim_fleet_change *fc, const char *ns, uint8_t **out,
                                size_t *len)
{
	pw_sim_fleet_change c = *fc;
	if (pw_sim_ns_append(c.id, sizeof c.id, ns) != PW_OK)
		return PW_ERR_INVALID;
	return fleet_pack(&c, ns, out, len);
}

pw_status pw_sim_proto_fleet(const pw_sim_fleet_change *fc, uint8_t **out, size_t *len)
{
	return fleet_pack(fc, NULL, out, len);
}

/*
 * With a namespace the cells are named as the replay's runs name them; an
 * event for every cell of its platforms lists those cells, so that it
 * selects the replay's runs only (an empty list would match every replay's).
 */
static pw_status fleet_pack(const pw_sim_fleet_change *fc, const char *ns, uint8_t **out,
                            size_t *len)
{
	Perfwatch__V1__FleetChangeEvent ev = PERFWATCH__V1__FLEET_CHANGE_EVENT__INIT;
	char *plats[16];
	size_t np = 0;
	/* a platform glob is expanded to the names it matches: selectors are exact */
	if (fc->platform[0])
		for (size_t i = 0; i < pw_sim_platforms_count && np < 16; i++)
			if (fnmatch(fc->platform, pw_sim_platforms[i].name, 0) == 0)
				plats[np++] = (char *)pw_sim_platforms[i].name;
	char cellbuf[32][PW_SIM_NAME_MAX], *cells[32];
	size_t nc = 0;
	if (fc->cell[0]) {
		snprintf(cellbuf[nc], sizeof cellbuf[nc], "%s", fc->cell);
		cells[nc] = cellbuf[nc];
		nc++;
	} else if (ns && *ns) {
		for (size_t i = 0; i < pw_sim_platforms_count; i++) {
			if (fc->platform[0] && fnmatch(fc->platform, pw_sim_platforms[i].name, 0) != 0)
				continue;
			for (size_t k = 0; k < 2 && nc < 32; k++) {
				snprintf(cellbuf[nc], sizeof cellbuf[nc], "%s", pw_sim_platforms[i].cells[k]);
				cells[nc] = cellbuf[nc];
				nc++;
			}
		}
	}
	for (size_t k = 0; k < nc; k++)
		if (pw_sim_ns_append(cellbuf[k], sizeof cellbuf[k], ns) != PW_OK)
			return PW_ERR_INVALID;
	ev.event_id = (char *)fc->id;
	ev.occurred_unix_us = fc->at_unix_us;
	ev.kind = fleet_kind(fc->kind);
	ev.reason = (char *)fc->description;
	ev.source = "fleet-ops";
	ev.n_platforms = np;
	ev.platforms = plats;
	ev.n_cells = nc;
	ev.cells = cells;
	return pack_out(&ev.base, out, len);
}

pw_status pw_sim_proto_gate(const pw_sim *w, const pw_sim_release *rel, int64_t t_unix_us,
                            uint8_t **out, size_t *len)
{
	return pw_sim_proto_gate_ns(w, rel, t_unix_us, NULL, t_unix_us, out, len);
}

/* A name with ".ns" appended, in the arena slot dst (PW_SIM_NAME_MAX * 5 bytes). */
static pw_status ns_copy(char *dst, size_t len, const char *name, const char *ns)
{
	if ((size_t)snprintf(dst, len, "%s", name) >= len)
		return PW_ERR_INVALID;
	return pw_sim_ns_append(dst, len, ns);
}

typedef char ns_name[PW_SIM_NAME_MAX * 5];

pw_status pw_sim_proto_gate_ns(const pw_sim *w, const pw_sim_release *rel, int64_t t_unix_us,
                               const char *ns, int64_t wall_unix_us, uint8_t **out, size_t *len)
{
	pw_status st = PW_OK;
	Perfwatch__V1__GateRequest gr = PERFWATCH__V1__GATE_REQUEST__INIT;
	Perfwatch__V1__CompilerBuild cb = PERFWATCH__V1__COMPILER_BUILD__INIT;
	Perfwatch__V1__TierRepeats t_top = PERFWATCH__V1__TIER_REPEATS__INIT;
	Perfwatch__V1__TierRepeats t_tail = PERFWATCH__V1__TIER_REPEATS__INIT;
	Perfwatch__V1__TierRepeats *tiers[2] = {&t_top, &t_tail};
	Perfwatch__V1__ExpectedWin *wins = NULL, **winp = NULL;
	Perfwatch__V1__Waiver *wv = NULL, **wvp = NULL;
	ns_name *keys = NULL, *fams = NULL, *wv_names = NULL;
	char **famp = NULL;
	char (*cls)[32] = NULL, (*owners)[PW_SIM_NAME_MAX] = NULL;
	size_t nwin = 0, cap = 0, nfam = 0, nseries = pw_sim_series_count(w);
	char cl[32];
	ns_name rel_id, base_id;
	if (ns_copy(rel_id, sizeof rel_id, rel->id, ns) != PW_OK ||
	    ns_copy(base_id, sizeof base_id, rel->base, rel->base[0] ? ns : NULL) != PW_OK)
		return PW_ERR_INVALID;
	snprintf(cl, sizeof cl, "cl/%lld", (long long)rel->cl);
	cb.build_id = rel_id;
	cb.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_RC;
	cb.cl = cl;
	cb.cl_number = rel->cl;
	cb.release_id = rel_id;
	t_top.tier = PERFWATCH__V1__TIER__TIER_TOP;
	t_top.n = 5;
	t_top.mde_pct = 1.0;
	t_tail.tier = PERFWATCH__V1__TIER__TIER_TAIL;
	t_tail.n = 3;
	t_tail.mde_pct = 3.0;

	/* the families: every model of the matrix, once, in series order */
	fams = calloc(nseries + 1, sizeof *fams);
	famp = calloc(nseries + 1, sizeof *famp);
	wv = calloc(rel->nwaivers + 1, sizeof *wv);
	wvp = calloc(rel->nwaivers + 1, sizeof *wvp);
	wv_names = calloc(2 * rel->nwaivers + 1, sizeof *wv_names);
	if (!fams || !famp || !wv || !wvp || !wv_names) {
		st = PW_ERR_NOMEM;
		goto done;
	}
	for (size_t i = 0; i < nseries; i++) {
		const char *m = pw_sim_series_at(w, i)->model.name;
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = strcmp(pw_sim_series_at(w, k)->model.name, m) == 0;
		if (seen)
			continue;
		if ((st = ns_copy(fams[nfam], sizeof fams[nfam], m, ns)) != PW_OK)
			goto done;
		famp[nfam] = fams[nfam];
		nfam++;
	}

	for (size_t e = 0; e < rel->nexpects; e++)
		for (size_t i = 0; i < nseries; i++) {
			const pw_sim_series *s = pw_sim_series_at(w, i);
			const pw_sim_expect *x = &rel->expects[e];
			const char *phase = s->config.phase == PW_SIM_DECODE ? "decode" : "prefill";
			if ((x->sel.model[0] && fnmatch(x->sel.model, s->model.name, 0)) ||
			    (x->sel.platform[0] && fnmatch(x->sel.platform, s->platform->name, 0)) ||
			    (x->sel.config[0] && fnmatch(x->sel.config, s->config.name, 0)) ||
			    (x->sel.phase[0] && strcmp(x->sel.phase, phase)))
				continue;
			if (nwin == cap) {
				size_t nc = cap ? cap * 2 : 8;
				void *a = realloc(wins, nc * sizeof *wins), *b, *c, *d, *f;
				if (a)
					wins = a;
				b = realloc(winp, nc * sizeof *winp);
				if (b)
					winp = b;
				c = realloc(keys, nc * sizeof *keys);
				if (c)
					keys = c;
				d = realloc(cls, nc * sizeof *cls);
				if (d)
					cls = d;
				f = realloc(owners, nc * sizeof *owners);
				if (f)
					owners = f;
				if (!a || !b || !c || !d || !f) {
					st = PW_ERR_NOMEM;
					goto done;
				}
				cap = nc;
			}
			/* the fingerprint the series has on the RC's day, named as published */
			pw_sim_build b;
			pw_sim_build_at(&b, PW_SIM_BUILD_RC, rel->id, rel->cl);
			pw_sim_run probe;
			pw_sim_run_make(w, i, &b, "probe", 0, t_unix_us, NULL, &probe);
			if ((st = pw_sim_run_namespace(&probe, ns)) != PW_OK)
				goto done;
			snprintf(keys[nwin], sizeof keys[nwin], "%s/%s/%s/%s/%s", probe.model,
			         probe.fingerprint, s->platform->name, s->config.name,
			         pw_sim_metric_name(x->metric));
			snprintf(cls[nwin], sizeof cls[nwin], "cl/%lld", (long long)x->cl);
			pw_sim_cl_info ci;
			pw_sim_cl_describe(w, x->cl, &ci);
			snprintf(owners[nwin], sizeof owners[nwin], "%s", ci.author);
			perfwatch__v1__expected_win__init(&wins[nwin]);
			wins[nwin].series_key = keys[nwin];
			wins[nwin].expected_delta_pct = x->pct;
			wins[nwin].registered_by = owners[nwin];
			wins[nwin].cl = x->cl ? cls[nwin] : "";
			wins[nwin].note = "registered with the RC by the release tooling (simulated)";
			nwin++;
		}
	for (size_t i = 0; i < nwin; i++)
		winp[i] = &wins[i];

	for (size_t k = 0; k < rel->nwaivers; k++) {
		const pw_sim_waiver *x = &rel->waivers[k];
		Perfwatch__V1__Waiver *o = &wv[k];
		perfwatch__v1__waiver__init(o);
		if ((st = ns_copy(wv_names[2 * k], sizeof wv_names[0], x->id, ns)) != PW_OK ||
		    (st = ns_copy(wv_names[2 * k + 1], sizeof wv_names[0], x->model,
		                  x->model[0] ? ns : NULL)) != PW_OK)
			goto done;
		o->waiver_id = wv_names[2 * k];
		o->model = wv_names[2 * k + 1];
		o->platform = (char *)x->platform;
		o->config = (char *)x->config;
		o->metric = (char *)x->metric;
		o->owner = (char *)x->owner;
		o->approved_by = (char *)x->approved_by;
		o->reason = (char *)x->reason;
		o->expires_unix_us = x->expires_rel ? wall_unix_us + x->expires_rel_us : x->expires_unix_us;
		wvp[k] = o;
	}

	gr.release_id = rel_id;
	gr.evaluation = 1;
	gr.candidate = &cb;
	gr.baseline_release = base_id;
	gr.n_families = nfam;
	gr.families = famp;
	gr.n_expected_wins = nwin;
	gr.expected_wins = winp;
	gr.n_waivers = rel->nwaivers;
	gr.waivers = wvp;
	gr.n_tiers = 2;
	gr.tiers = tiers;
	gr.fdr_q = 0.05;
	gr.requested_unix_us = t_unix_us;
	gr.deadline_unix_us = t_unix_us + 24 * 3600 * US_PER_S;
	st = pack_out(&gr.base, out, len);
done:
	free(wins);
	free(winp);
	free(keys);
	free(cls);
	free(owners);
	free(fams);
	free(famp);
	free(wv);
	free(wvp);
	free(wv_names);
	return st;
}

static pw_status parse_cl(const char *s, int64_t *cl, int64_t *upstream)
{
	if (strncmp(s, "cl/", 3) == 0)
		s += 3;
	char *end;
	long long v = strtoll(s, &end, 10);
	if (end == s || v <= 0)
		return PW_ERR_INVALID;
	*cl = v;
	if (upstream)
		*upstream = -1;
	if (*end == '@' && upstream) {
		char *e2;
		long long u = strtoll(end + 1, &e2, 10);
		if (e2 == end + 1 || *e2 || u < 0)
			return PW_ERR_INVALID;
		*upstream = u;
		return PW_OK;
	}
	return *end ? PW_ERR_INVALID : PW_OK;
}

pw_status pw_sim_bisect_plan_make(const pw_sim *w, const Perfwatch__V1__BisectJob *job,
                                  pw_sim_bisect_plan *plan, char *errbuf, size_t errlen)
{
	memset(plan, 0, sizeof *plan);
	if (!job->job_id || !*job->job_id)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "bisect job has no job_id");
	snprintf(plan->job_id, sizeof plan->job_id, "%s", job->job_id);
	const char *model = NULL, *platform = NULL, *config = NULL, *fp = NULL;
	if (job->key) {
		model = job->key->model;
		fp = job->key->hlo_fingerprint;
		platform = job->key->platform ? job->key->platform->name : NULL;
		config = job->key->config ? job->key->config->name : NULL;
	}
	if (job->series) {
		if (!model || !*model)
			model = job->series->model;
		if (!platform || !*platform)
			platform = job->series->platform;
		if (!config || !*config)
			config = job->series->config;
		if (!fp || !*fp)
			fp = job->series->hlo_fingerprint;
	}
	if (!model || !*model || !platform || !*platform || !config || !*config || !fp || !*fp)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "bisect job \"%s\" does not name model, fingerprint, platform and config",
		               job->job_id);
	if (pw_sim_series_find(w, model, platform, config, &plan->series) != PW_OK)
		return pw_fail(PW_ERR_NOT_FOUND, errbuf, errlen,
		               "bisect job \"%s\": series %s/%s/%s is not in scenario \"%s\"", job->job_id,
		               model, platform, config, pw_sim_name(w));
	snprintf(plan->fingerprint, sizeof plan->fingerprint, "%s", fp);
	int64_t cl, upstream;
	const char *head = job->base_cl && *job->base_cl ? job->base_cl : job->cl;
	if (!head || !*head) {
		if (job->cl_number <= 0)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen, "bisect job \"%s\" has no cl",
			               job->job_id);
		cl = job->cl_number;
		upstream = -1;
	} else if (parse_cl(head, &cl, &upstream) != PW_OK) {
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "bisect job \"%s\": cl \"%s\" is malformed",
		               job->job_id, head);
	}
	pw_sim_build_at(&plan->build, PW_SIM_BUILD_BISECT, NULL, cl);
	plan->build.upstream_limit = upstream;
	if (job->base_cl && *job->base_cl) {
		char bid[PW_SIM_NAME_MAX];
		snprintf(bid, sizeof bid, "bisect@%s", job->base_cl);
		size_t used = strlen(bid);
		for (size_t i = 0; i < job->n_cherry_picks; i++) {
			int64_t pick;
			if (plan->build.npicks == PW_SIM_MAX_PICKS ||
			    parse_cl(job->cherry_picks[i], &pick, NULL) != PW_OK)
				return pw_fail(PW_ERR_INVALID, errbuf, errlen,
				               "bisect job \"%s\": cherry-pick \"%s\" is malformed or one too many",
				               job->job_id, job->cherry_picks[i]);
			plan->build.picks[plan->build.npicks++] = pick;
			int k = snprintf(bid + used, sizeof bid - used, "+%lld", (long long)pick);
			if (k > 0 && (size_t)k < sizeof bid - used)
				used += (size_t)k;
		}
		snprintf(plan->build.build_id, sizeof plan->build.build_id, "%s", bid);
	} else if (upstream >= 0) {
		snprintf(plan->build.build_id, sizeof plan->build.build_id, "bisect@cl/%lld@%lld",
		         (long long)cl, (long long)upstream);
	}
	plan->repeats = job->repeats ? job->repeats : 3;
	if (plan->repeats > 100)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "bisect job \"%s\" asks for %u repeats",
		               job->job_id, job->repeats);
	return PW_OK;
}

void pw_sim_cl_span(const pw_sim *w, int64_t *from, int64_t *to)
{
	int64_t first = pw_sim_nightly_cl(w, 0), last = pw_sim_nightly_cl(w, pw_sim_days(w) - 1);
	int64_t per_day = pw_sim_days(w) > 1 ? pw_sim_nightly_cl(w, 1) - first : 0;
	*from = first - per_day + 1;
	*to = last;
	for (size_t i = 0; i < pw_sim_releases_count(w); i++) {
		const pw_sim_release *r = pw_sim_release_at(w, i);
		if (r->cl < *from)
			*from = r->cl;
		if (r->cl > *to)
			*to = r->cl;
	}
	if (*from < 1)
		*from = 1;
}

pw_status pw_sim_proto_cl(const pw_sim *w, int64_t cl, uint8_t **out, size_t *len)
{
	pw_sim_cl_info ci;
	pw_sim_cl_describe(w, cl, &ci);
	char name[32], source[PW_SIM_NAME_MAX + 8];
	snprintf(name, sizeof name, "cl/%lld", (long long)cl);
	snprintf(source, sizeof source, "pw-sim:%s", pw_sim_name(w));
	Perfwatch__V1__CompilerCl m = PERFWATCH__V1__COMPILER_CL__INIT;
	Perfwatch__V1__RollInfo roll = PERFWATCH__V1__ROLL_INFO__INIT;
	char *all[] = {"*"};
	m.cl = name;
	m.cl_number = cl;
	m.title = ci.title;
	m.author = ci.author;
	m.team = ci.author;
	m.perf_relevant = ci.perf_relevant;
	if (ci.perf_relevant) {
		m.perf_benchmarks = all;
		m.n_perf_benchmarks = 1;
	}
	if (ci.upstream > 0) {
		roll.upstream_repo = "llvm/llvm-project";
		roll.upstream_commits = ci.upstream;
		m.roll = &roll;
	}
	/* the day whose nightly first holds the CL, at noon */
	int64_t first = pw_sim_nightly_cl(w, 0);
	int64_t per_day = pw_sim_days(w) > 1 ? pw_sim_nightly_cl(w, 1) - first : 1;
	if (per_day < 1)
		per_day = 1;
	int64_t day = cl <= first ? 0 : (cl - first + per_day - 1) / per_day;
	m.submitted_unix_us = pw_sim_start_us(w) + day * 86400000000LL - 43200000000LL;
	m.source = source;
	size_t n = perfwatch__v1__compiler_cl__get_packed_size(&m);
	*out = malloc(n ? n : 1);
	if (!*out)
		return PW_ERR_NOMEM;
	*len = perfwatch__v1__compiler_cl__pack(&m, *out);
	return PW_OK;
}

pw_status pw_sim_proto_canary_window(const char *rollout_id, size_t i, const pw_sim_canary_window *win, int m,
                                     int64_t start_us, uint8_t **out, size_t *len)
{
	return pw_sim_proto_canary_window_of(rollout_id, PW_SIM_CANARY_RELEASE, PW_SIM_CANARY_PREVIOUS, "", i, win, m,
	                                     start_us, out, len);
}

pw_status pw_sim_proto_canary_window_of(const char *rollout_id, const char *release, const char *previous_release,
                                        const char *family_suffix, size_t i, const pw_sim_canary_window *win, int m,
                                        int64_t start_us, uint8_t **out, size_t *len)
{
	const pw_sim_canary_family *f = &pw_sim_canary_scenario[i];
	const double *pairs[3] = {win->tpot_ms, win->ttft_ms, win->goodput_tok_s_chip};
	char family[256], artifact[512], previous[512];
	snprintf(family, sizeof family, "%s%s", f->family, family_suffix ? family_suffix : "");
	snprintf(artifact, sizeof artifact, "serving/%s/%s.aot", family, release);
	snprintf(previous, sizeof previous, "serving/%s/%s.aot", family, previous_release);
	Perfwatch__V1__CanaryWindow cw = PERFWATCH__V1__CANARY_WINDOW__INIT;
	cw.rollout_id = (char *)rollout_id;
	cw.family = family;
	cw.family_kind = f->gpu ? "gpu" : "tpu";
	cw.release = (char *)release;
	cw.artifact = artifact;
	cw.previous_release = (char *)previous_release;
	cw.previous_artifact = previous;
	cw.metric = (Perfwatch__V1__CanaryMetric)(m + 1);
	cw.window_start_unix_us = start_us;
	cw.window_s = 300;
	cw.canary_value = pairs[m][PW_SIM_CANARY_CANARY];
	cw.baseline_value = pairs[m][PW_SIM_CANARY_BASELINE];
	cw.canary_replicas = 2;
	cw.baseline_replicas = 2;
	cw.canary_fraction = 2.0 / 64.0;
	cw.source = "pw-sim:canary";
	*len = perfwatch__v1__canary_window__get_packed_size(&cw);
	*out = malloc(*len + 1);
	if (!*out)
		return PW_ERR_NOMEM;
	perfwatch__v1__canary_window__pack(&cw, *out);
	return PW_OK;
}
