/*
 * test_plan.c: the planner's decisions (services/planner/plan.c) without a
 * broker or database: n per tier against §4.5's formula (values computed
 * independently with Python's statistics.NormalDist, quoted below), the
 * static check on the worked example (cl/7841917 flags chat-8b on v6e-4 in
 * decode and not v5e or prefill), a compute-bound op hiding its bytes, the
 * signature similarity on a hand-computed pair, and whole plans on the
 * simulated 300-model catalogue (tools/simulator/sim_catalogue.h): T1,
 * coverage, lines reconciling, inheritance and its loss on a new
 * fingerprint, nightly pruning, rotation within 28 days, capacity trims,
 * determinism.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "sim_catalogue.h"

static pw_sim_catalogue *cat300(void)
{
	pw_sim_catalogue *c;
	cr_assert_eq(pw_sim_catalogue_new(300, 20260504, &c), PW_OK);
	return c;
}

/*
 * NormalDist: k = 2·(z_.975 + z_.9)² = 21.0148; n = k·(σ/Δ)²:
 * σ 0.4 Δ 1 → 3.3624; σ 0.4 Δ 3 → 0.3736; σ 2 Δ 1 → 84.06; σ 2 Δ 3 → 9.340;
 * MDE at n = 7: (z_.975 + z_.9)·2·√(2/7) = 3.4653; at n = 1: 9.1684.
 */
Test(plan, repeats_per_tier_from_the_noise_floor)
{
	pw_plan_params p;
	pw_plan_params_default(&p);
	uint32_t n;
	double mde;
	cr_assert_eq(pw_plan_repeats(0.4, 1, false, &p, &n, &mde), PW_OK);
	cr_assert_eq(n, 5); /* ⌈3.36⌉ + 1 */
	cr_assert_float_eq(mde, 1, 1e-12);
	cr_assert_eq(pw_plan_repeats(0.4, 3, false, &p, &n, &mde), PW_OK);
	cr_assert_eq(n, 3); /* max(3, ⌈0.37⌉ + 1) */
	cr_assert_eq(pw_plan_repeats(0.4, 3, true, &p, &n, &mde), PW_OK);
	cr_assert_eq(n, 1);
	cr_assert_eq(pw_plan_repeats(2, 1, false, &p, &n, &mde), PW_OK);
	cr_assert_eq(n, 8); /* 84 is unaffordable: the cap, and the MDE it reaches */
	cr_assert_float_eq(mde, 3.4653, 1e-3);
	cr_assert_eq(pw_plan_repeats(2, 3, true, &p, &n, &mde), PW_OK);
	cr_assert_eq(n, 1);
	cr_assert_float_eq(mde, 9.1684, 1e-3);
	/* a quieter series needs fewer: σ 0.2 at 1% → 0.84 → 3 */
	cr_assert_eq(pw_plan_repeats(0.2, 1, false, &p, &n, &mde), PW_OK);
	cr_assert_eq(n, 3);
	/* σ 100 Δ 1: 21.0148·10⁴ = 210,148 > PW_POWER_MAX_N; the cap, MDE (z_.975 + z_.9)·100·√(2/7) */
	cr_assert_eq(pw_plan_repeats(100, 1, false, &p, &n, &mde), PW_OK);
	cr_assert_eq(n, 8);
	cr_assert_float_eq(mde, 173.27, 1e-2);
	cr_assert_eq(pw_plan_repeats(0, 1, false, &p, &n, &mde), PW_ERR_INVALID);
	cr_assert_eq(pw_plan_repeats(0.4, NAN, false, &p, &n, &mde), PW_ERR_INVALID);
}

static const pw_plan_platform *platform(const pw_sim_catalogue *c, const char *name)
{
	for (size_t i = 0; i < c->nplatforms; i++)
		if (strcmp(c->platforms[i].facts.name, name) == 0)
			return &c->platforms[i];
	cr_assert_fail("no platform %s", name);
	return NULL;
}

/*
 * chat-8b decode B64 s2048 int8 on v6e-4 (4.264 TB/s), per step, computed in
 * Python from the same analytic costs: GEMMs 32 × 250 MB = 1,876.2 µs,
 * attention 32 × 268.4 MB = 2,014.5 µs, layernorms 15.7 µs, logits 123.2 µs
 * = 4,029.6 µs; the split adds 251.8 µs (seed: +252 µs) = +6.249%.
 */
Test(plan, static_check_flags_the_worked_example)
{
	pw_sim_catalogue *c = cat300();
	pw_plan_params p;
	pw_plan_params_default(&p);
	pw_sim_cl_buf b = {0};
	cr_assert_eq(pw_sim_catalogue_fusion_cap_cl(c, 7841917, 1572864, &b), PW_OK);
	const pw_plan_cl *cl = &b.cls[0];
	long chat = pw_sim_catalogue_find(c, "chat-8b");
	cr_assert_geq(chat, 0);
	const pw_plan_model *m = &c->models[chat];
	cr_assert_str_eq(m->configs[0], "decode.B64.s2048.int8");
	double d = pw_plan_cl_delta_pct(m, 0, platform(c, "v6e-4"), cl);
	cr_assert_float_eq(d, 6.249, 2e-3, "%f", d);
	cr_assert_float_eq(pw_plan_cl_delta_pct(m, 0, platform(c, "v5e-8"), cl), 0, 1e-12); /* 128·2048·4 B ≤ cap */
	cr_assert_float_eq(pw_plan_cl_delta_pct(m, 0, platform(c, "b200-8"), cl), 0, 1e-12);
	cr_assert_float_eq(pw_plan_cl_delta_pct(m, 2, platform(c, "v6e-4"), cl), 0, 1e-12);  /* prefill */

	char **globs;
	size_t ng;
	cr_assert_eq(pw_plan_cl_check(c->models, c->n, c->platforms, c->nplatforms, cl, &p, &globs, &ng), PW_OK);
	bool v6e = false, v5e = false, prefill = false;
	for (size_t i = 0; i < ng; i++) {
		v6e |= strcmp(globs[i], "chat-8b/v6e-4/decode.B64.s2048.int8") == 0;
		v5e |= strcmp(globs[i], "chat-8b/v5e-8/decode.B64.s2048.int8") == 0;
		prefill |= strstr(globs[i], "/prefill.") != NULL;
		free(globs[i]);
	}
	free(globs);
	cr_assert(v6e && !v5e && !prefill);
	pw_sim_cl_buf_release(&b);
	pw_sim_catalogue_free(c);
}

Test(plan, roofline_decides_relevance)
{
	pw_sim_catalogue *c = cat300();
	long chat = pw_sim_catalogue_find(c, "chat-8b");
	const pw_plan_model *m = &c->models[chat];
	pw_sim_cl_buf b = {0};
	/* GEMM bytes +10% on every platform: decode (memory-bound) moves, prefill (compute-bound) does not */
	cr_assert_eq(pw_sim_catalogue_op_cl(1, "gemm", "", 1.10, &b), PW_OK);
	double dec = pw_plan_cl_delta_pct(m, 0, platform(c, "v6e-4"), &b.cls[0]);
	double pre = pw_plan_cl_delta_pct(m, 2, platform(c, "v6e-4"), &b.cls[0]);
	cr_assert(dec > 4 && dec < 5, "%f", dec); /* 187.6 µs of 4,029.6 = 4.66% */
	cr_assert_float_eq(pre, 0, 1e-9, "%f", pre);
	/* an op the model does not have */
	cr_assert_eq(pw_sim_catalogue_op_cl(2, "all_to_all", "", 2.0, &b), PW_OK);
	cr_assert_float_eq(pw_plan_cl_delta_pct(m, 0, platform(c, "v6e-4"), &b.cls[1]), 0, 1e-12);
	pw_sim_cl_buf_release(&b);
	pw_sim_catalogue_free(c);
}

/*
 * Hand-computed: A = {x: bytes 3, flops 1; y: bytes 1, flops 1}, B = {x:
 * bytes 1, flops 1; y: bytes 1, flops 1}, one call each. Normalised: A bytes
 * (0.75, 0.25), flops (0.5, 0.5); B bytes (0.5, 0.5), flops (0.5, 0.5).
 * Σmin = 0.5 + 0.25 + 0.5 + 0.5 = 1.75, Σmax = 0.75 + 0.5 + 0.5 + 0.5 =
 * 2.25 → 0.7778. A model sharing no op@shape: 0.
 */
Test(plan, similarity_weighted_jaccard)
{
	static const char *const cfgs[] = {"decode.B8.s512.bf16"};
	static const char *const plats[] = {"v6e-4"};
	pw_plan_op a_ops[] = {{"x", "s1", 0, 1, 3, 1}, {"y", "s1", 0, 1, 1, 1}};
	pw_plan_op b_ops[] = {{"x", "s1", 0, 1, 1, 1}, {"y", "s1", 0, 1, 1, 1}};
	pw_plan_op c_ops[] = {{"x", "s2", 0, 1, 1, 1}};
	pw_plan_model a = {"a", "f", "hlo:a", 0.1, plats, 1, cfgs, 1, a_ops, 2};
	pw_plan_model b = {"b", "f", "hlo:b", 0.1, plats, 1, cfgs, 1, b_ops, 2};
	pw_plan_model c = {"c", "f", "hlo:c", 0.1, plats, 1, cfgs, 1, c_ops, 1};
	cr_assert_float_eq(pw_plan_similarity(&a, &b), 1.75 / 2.25, 1e-12);
	cr_assert_float_eq(pw_plan_similarity(&a, &a), 1, 1e-12);
	cr_assert_float_eq(pw_plan_similarity(&a, &c), 0, 1e-12);
}

static pw_plan make(const pw_sim_catalogue *c, const pw_plan_sweep *sw, const pw_plan_cl *cls,
                    size_t ncls, const pw_plan_seen *seen, size_t nseen, const pw_plan_ran *ran,
                    size_t nran, const pw_plan_platform *plats)
{
	pw_plan_params p;
	pw_plan_params_default(&p);
	pw_plan_inputs in = {c->models, c->n, plats ? plats : c->platforms, c->nplatforms, cls, ncls,
	                     NULL, 0, seen, nseen, ran, nran, sw};
	pw_plan plan;
	cr_assert_eq(pw_plan_make(&in, &p, &plan), PW_OK);
	return plan;
}

static const pw_plan_inherit *inherit_of(const pw_plan *p, const char *model)
{
	for (size_t i = 0; i < p->ninherits; i++)
		if (strcmp(p->inherits[i].model, model) == 0)
			return &p->inherits[i];
	return NULL;
}

Test(plan, rc_plan_tiers_lines_and_coverage)
{
	pw_sim_catalogue *c = cat300();
	pw_plan_sweep sw = {"rc-2026-06-15", PW_PLAN_RC, "xla-rc-2026-06-15", 7841833, 20619};
	pw_plan a = make(c, &sw, NULL, 0, NULL, 0, NULL, 0, NULL);
	/* top-20 on TPU at n = 5, on GPU at the cap; the rest of T1 at 3 (TPU) */
	bool top_ok = true, seen_rest = false;
	for (size_t i = 0; i < a.nitems; i++) {
		const pw_plan_item *it = &a.items[i];
		bool gpu = strcmp(it->platform, "b200-8") == 0;
		if (it->tier == PW_PLAN_T1 && it->top)
			top_ok &= it->repeats == (gpu ? 8u : 5u);
		if (it->tier == PW_PLAN_T1 && !it->top && !gpu) {
			seen_rest = true;
			cr_assert_eq(it->repeats, 3);
		}
	}
	cr_assert(top_ok && seen_rest);
	cr_assert_geq(a.t1_models, 20);
	cr_assert_geq(a.spend_coverage, 0.95, "coverage %f", a.spend_coverage);
	/* lines: each is its items' repeats × 0.25 chip-h, and they sum to the plan */
	double sum = 0, items[PW_PLAN_TIERS] = {0};
	for (size_t i = 0; i < a.nitems; i++)
		items[a.items[i].tier] += a.items[i].repeats * 0.25;
	for (int t = 0; t < PW_PLAN_TIERS; t++) {
		if (t != PW_PLAN_RESERVE)
			cr_assert_float_eq(a.lines[t].chip_h, items[t], 1e-9);
		sum += a.lines[t].chip_h;
	}
	cr_assert_float_eq(a.lines[PW_PLAN_RESERVE].chip_h, 1100, 1e-9);
	cr_assert_float_eq(sum, a.chip_h, 1e-9);
	cr_assert_float_eq(a.naive_chip_h_week, 72000, 1e-9); /* 300 × 4 × 6 × 5 × 0.25 × 8 */
	cr_assert_eq(a.lines[PW_PLAN_T0].points, 0);
	/* rank-x inherits chat-8b's verdict */
	const pw_plan_inherit *ih = inherit_of(&a, "rank-x");
	cr_assert(ih && strcmp(ih->representative, "chat-8b") == 0 && ih->similarity >= 0.95 && ih->measured);
	/* deterministic: the same inputs, the same plan */
	pw_plan b = make(c, &sw, NULL, 0, NULL, 0, NULL, 0, NULL);
	cr_assert_eq(a.nitems, b.nitems);
	for (size_t i = 0; i < a.nitems; i++)
		cr_assert(strcmp(a.items[i].model, b.items[i].model) == 0 &&
		          strcmp(a.items[i].platform, b.items[i].platform) == 0 &&
		          strcmp(a.items[i].config, b.items[i].config) == 0 && a.items[i].repeats == b.items[i].repeats);
	pw_plan_release(&a);
	pw_plan_release(&b);
	/* a new program for rank-x (kv heads halved) breaks the inheritance */
	cr_assert_eq(pw_sim_catalogue_readopt(c, (size_t)pw_sim_catalogue_find(c, "rank-x")), PW_OK);
	pw_plan d = make(c, &sw, NULL, 0, NULL, 0, NULL, 0, NULL);
	ih = inherit_of(&d, "rank-x");
	cr_assert(!ih || strcmp(ih->representative, "chat-8b") != 0);
	cr_assert(pw_plan_similarity(&c->models[pw_sim_catalogue_find(c, "rank-x")], &c->models[0]) < 0.95);
	pw_plan_release(&d);
	pw_sim_catalogue_free(c);
}

Test(plan, nightly_prunes_what_no_cl_touched)
{
	pw_sim_catalogue *c = cat300();
	/* every T0 benchmark last ran at cl/7841885; the nightly's only CL since is the fusion cap */
	pw_plan_ran *ran = calloc(20 * 4 * 6, sizeof *ran);
	size_t nr = 0;
	for (size_t i = 0; i < 20; i++)
		for (size_t p = 0; p < 4; p++)
			for (size_t q = 0; q < 6; q++)
				ran[nr++] = (pw_plan_ran){c->models[i].model, c->models[i].platforms[p], c->models[i].configs[q], 7841885};
	pw_sim_cl_buf b = {0};
	cr_assert_eq(pw_sim_catalogue_fusion_cap_cl(c, 7841917, 1572864, &b), PW_OK);
	pw_plan_sweep sw = {"nightly-2026-06-17", PW_PLAN_NIGHTLY, "xla-nightly-2026-06-17", 7841923, 20621};
	pw_plan p = make(c, &sw, b.cls, b.ncls, NULL, 0, ran, nr, NULL);
	cr_assert_eq(p.t0_candidates, 160); /* 20 × 4 platforms × (first decode, first prefill) */
	bool v6e = false;
	for (size_t i = 0; i < p.nitems; i++) {
		cr_assert_eq(p.items[i].tier, PW_PLAN_T0);
		cr_assert_eq(p.items[i].repeats, 1);
		cr_assert(strstr(p.items[i].config, "decode.") == p.items[i].config); /* prefill is compute-bound */
		cr_assert(strcmp(p.items[i].platform, "v5e-8") != 0 && strcmp(p.items[i].platform, "b200-8") != 0);
		v6e |= strcmp(p.items[i].model, "chat-8b") == 0 && strcmp(p.items[i].platform, "v6e-4") == 0;
	}
	cr_assert(v6e);
	cr_assert_eq(p.t0_pruned + p.nitems, 160);
	cr_assert_geq(p.t0_pruned, 96, "pruned %u", p.t0_pruned); /* at least every prefill, v5e and b200 benchmark... */
	cr_assert_float_eq(p.lines[PW_PLAN_T0].planned_chip_h, 40, 1e-9); /* §5: 40 h a nightly */
	pw_plan_release(&p);
	/* a CL before the last run does not count; nothing since: everything pruned */
	sw.cl_head = 7841900;
	p = make(c, &sw, b.cls, b.ncls, NULL, 0, ran, nr, NULL);
	cr_assert_eq(p.nitems, 0);
	cr_assert_eq(p.t0_pruned, 160);
	pw_plan_release(&p);
	pw_sim_cl_buf_release(&b);
	free(ran);
	pw_sim_catalogue_free(c);
}

Test(plan, rotation_measures_every_model_within_28_days)
{
	pw_sim_catalogue *c = cat300();
	pw_plan_seen *seen = calloc(c->n, sizeof *seen);
	int32_t *last = malloc(c->n * sizeof *last);
	for (size_t i = 0; i < c->n; i++)
		last[i] = INT32_MIN;
	for (int w = 0; w < 6; w++) {
		int32_t day = 20577 + 7 * w;
		size_t ns = 0;
		for (size_t i = 0; i < c->n; i++)
			if (last[i] != INT32_MIN)
				seen[ns++] = (pw_plan_seen){c->models[i].model, c->models[i].fingerprint, last[i], last[i]};
		char id[32];
		snprintf(id, sizeof id, "rc-w%d", w);
		pw_plan_sweep sw = {id, PW_PLAN_RC, id, 7840000 + w * 300, day};
		pw_plan p = make(c, &sw, NULL, 0, seen, ns, NULL, 0, NULL);
		for (size_t k = 0; k < p.nitems; k++)
			last[p.items[k].model_index] = day;
		pw_plan_release(&p);
		if (w >= 3) /* from the fourth week on, nobody is older than 28 days */
			for (size_t i = 0; i < c->n; i++)
				cr_assert(last[i] != INT32_MIN && day - last[i] < 28, "%s last %d day %d",
				          c->models[i].model, last[i], day);
	}
	free(seen);
	free(last);
	pw_sim_catalogue_free(c);
}

Test(plan, capacity_trims_rotation_never_t1)
{
	pw_sim_catalogue *c = cat300();
	pw_plan_platform plats[PW_SIM_CAT_PLATFORMS];
	memcpy(plats, c->platforms, sizeof plats);
	pw_plan_sweep sw = {"rc-x", PW_PLAN_RC, "rc-x", 7841833, 20619};
	pw_plan full = make(c, &sw, NULL, 0, NULL, 0, NULL, 0, plats);
	double t1_v5e = 0;
	for (size_t i = 0; i < full.nitems; i++)
		if (full.items[i].tier == PW_PLAN_T1 && strcmp(full.items[i].platform, "v5e-8") == 0)
			t1_v5e += full.items[i].repeats * 0.25;
	/* v5e-8 gets just its T1, its share of the nightlies and of the reserve */
	plats[1].capacity_chip_h = t1_v5e + 275 + 7 * 2 * 0.25 * 20 + 1;
	cr_assert_str_eq(plats[1].facts.name, "v5e-8");
	pw_plan t = make(c, &sw, NULL, 0, NULL, 0, NULL, 0, plats);
	cr_assert_float_eq(t.lines[PW_PLAN_T1].chip_h, full.lines[PW_PLAN_T1].chip_h, 1e-9);
	cr_assert_gt(t.lines[PW_PLAN_TAIL].deferred + t.lines[PW_PLAN_T2].deferred, 0);
	cr_assert_lt(t.chip_h, full.chip_h);
	for (size_t i = 0; i < t.nitems; i++)
		cr_assert(t.items[i].tier == PW_PLAN_T1 || strcmp(t.items[i].platform, "v5e-8") != 0 ||
		          t.items[i].repeats > 0);
	pw_plan_release(&full);
	pw_plan_release(&t);
	pw_sim_catalogue_free(c);
}

Test(plan, bad_inputs)
{
	pw_sim_catalogue *c = cat300();
	pw_plan_params p;
	pw_plan_params_default(&p);
	pw_plan_sweep sw = {"x", 7, "x", 1, 1};
	pw_plan_inputs in = {c->models, c->n, c->platforms, c->nplatforms, NULL, 0, NULL, 0, NULL, 0, NULL, 0, &sw};
	pw_plan plan;
	cr_assert_eq(pw_plan_make(&in, &p, &plan), PW_ERR_INVALID);
	sw.kind = PW_PLAN_RC;
	p.similarity = 1.5;
	cr_assert_eq(pw_plan_make(&in, &p, &plan), PW_ERR_INVALID);
	pw_plan_release(&plan);
	pw_plan_release(NULL);
	pw_sim_catalogue_free(c);
}

/* pw-sim execute builds a catalogue model's series from this spec: the
 * architecture the catalogue's analytic costs were computed from. */
Test(plan, catalogue_spec_is_the_models_architecture)
{
	pw_sim_catalogue *c = NULL;
	cr_assert_eq(pw_sim_catalogue_new(300, 20260504, &c), PW_OK);
	pw_sim_model_spec spec, builtin;
	cr_assert_eq(pw_sim_catalogue_spec(c, 0, &spec), PW_OK);
	cr_assert(pw_sim_model_builtin("chat-8b", &builtin));
	cr_assert_str_eq(spec.name, "chat-8b");
	cr_assert_eq(spec.layers, builtin.layers);
	cr_assert_eq(spec.kv_heads, builtin.kv_heads);
	cr_assert_eq(spec.params_b, builtin.params_b);
	long rx = pw_sim_catalogue_find(c, "rank-x");
	cr_assert_geq(rx, 0);
	pw_sim_cat_arch a;
	cr_assert_eq(pw_sim_catalogue_spec(c, (size_t)rx, &spec), PW_OK);
	cr_assert_eq(pw_sim_catalogue_arch(c, (size_t)rx, &a), PW_OK);
	cr_assert_str_eq(spec.name, "rank-x");
	cr_assert_eq(spec.q_heads, a.q_heads);
	cr_assert_eq(spec.head_dim, a.head_dim);
	cr_assert_eq((int)spec.arch, a.arch);
	cr_assert_eq(pw_sim_catalogue_spec(c, 300, &spec), PW_ERR_INVALID);
	pw_sim_catalogue_free(c);
}
