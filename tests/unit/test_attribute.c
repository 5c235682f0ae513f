/*
 * test_attribute.c: the attributor's decisions (services/attributor/attribute.c)
 * on the seed's worked example (§6.3, artifacts 5 and 6, the consistency
 * check), written out here from the seed's numbers, not from the simulator:
 * five repeats a side around artifact 6's values, the KV and score-matrix
 * bytes of §6.3, and artifact 5's HLO texts. Also: a model retrain, a
 * recabling, runs without op tables, and the Myers diff against an
 * independently computed LCS.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"

#define KV_BYTES (2.0 * 32 * 8 * 128 * 2048 * 64) /* 8,589,934,592: 2·L·H_kv·d·s̄·B·1 B */
#define S_LAYER (64.0 * 32 * 2048 * 4)            /* 16,777,216: B·H·s̄·4 B */

static const char *hlo_prod =
	"HloModule chat-8b.decode.B64.s2048.int8, fingerprint=hlo:9f31c2ab, platform=v6e-4\n"
	"\n"
	"%layer.attn {\n"
	"  %fusion.1423 = bf16[64,32,128]{2,1,0} fusion(%q, %k_cache, %v_cache),\n"
	"      kind=kCustom, calls=%attention_softmax_fused_computation\n"
	"      backend_config={\"fusion_kind\":\"attention_softmax_fused\",\"vmem_bytes\":2097152}\n"
	"}\n"
	"\n"
	"%layer.gemm {\n"
	"  %fusion.201 = bf16[64,4096]{1,0} fusion(%x, %w_qkv, %w_out, %w_ffn), kind=kOutput,\n"
	"      calls=%qkv_out_ffn_gemms_computation\n"
	"}\n"
	"\n"
	"%layer.collective {\n"
	"  %ppermute.77 = bf16[64,4096]{1,0} collective-permute(%partial), channel_id=1,\n"
	"      source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n"
	"}\n";

static const char *hlo_rc =
	"HloModule chat-8b.decode.B64.s2048.int8, fingerprint=hlo:9f31c2ab, platform=v6e-4\n"
	"\n"
	"%layer.attn {\n"
	"  %fusion.1423a = f32[64,32,2048]{2,1,0} fusion(%q, %k_cache), kind=kLoop,\n"
	"      calls=%qk_scores_computation            // S materialized to HBM (16.8 MB, fp32)\n"
	"  %softmax.88 = f32[64,32,2048]{2,1,0} exponential-normalize(%fusion.1423a)\n"
	"  %fusion.1423b = bf16[64,32,128]{2,1,0} fusion(%softmax.88, %v_cache), kind=kLoop,\n"
	"      calls=%attn_v_computation\n"
	"      // fusion declined: projected vmem 2,097,152 B > cap 1,572,864 B (cl/7841917)\n"
	"}\n"
	"\n"
	"%layer.gemm {\n"
	"  %fusion.201 = bf16[64,4096]{1,0} fusion(%x, %w_qkv, %w_out, %w_ffn), kind=kOutput,\n"
	"      calls=%qkv_out_ffn_gemms_computation\n"
	"}\n"
	"\n"
	"%layer.collective {\n"
	"  %ppermute.77 = bf16[64,4096]{1,0} collective-permute(%partial), channel_id=1,\n"
	"      source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n"
	"}\n";

static const pw_attr_platform v6e4 = {"v6e-4", 4, 1640, 0.65, 256, 918, 1836};
static const pw_attr_platform v6e16 = {"v6e-16", 16, 1640, 0.65, 256, 918, 1836};
static const pw_attr_platform v5e8 = {"v5e-8", 8, 819, 0.65, 128, 197, 394};

/* repeat offsets: medians are the centre value */
static const double jit[5] = {0, -3, 3, -1.5, 1.5};

typedef struct example {
	pw_attr_op bops[5][3], aops[5][5];
	pw_attr_run b[5], a[5];
	char rid[10][16];
} example;

static void build(example *x, const char *fp_before, const char *fp_after, const char *hb,
                  const char *ha, bool split)
{
	memset(x, 0, sizeof *x);
	for (int i = 0; i < 5; i++) {
		double j = jit[i];
		x->bops[i][0] = (pw_attr_op){"fusion.1423", "attention_softmax_fused", "MXU", 32, 2016 + 2 * j, KV_BYTES};
		x->bops[i][1] = (pw_attr_op){"fusion.201", "qkv+out+ffn GEMMs", "MXU", 32, 1888 + 2 * j, 8e9};
		x->bops[i][2] = (pw_attr_op){"ppermute.77", "ICI", "ICI", 32, 128 + j / 3, 0};
		size_t na = 0;
		if (split) {
			x->aops[i][na++] = (pw_attr_op){"fusion.1423a", "qk_scores", "MXU", 32, 1088 + j, KV_BYTES / 2 + 32 * S_LAYER};
			x->aops[i][na++] = (pw_attr_op){"fusion.1423b", "attn_v", "MXU", 32, 1184 + j, KV_BYTES / 2 + 32 * S_LAYER};
			x->aops[i][na++] = (pw_attr_op){"softmax.88", "exponential-normalize", "VPU", 32, 256 + j / 3, 0};
		} else {
			x->aops[i][na++] = (pw_attr_op){"fusion.1423", "attention_softmax_fused", "MXU", 32, 2016 + 2 * j, KV_BYTES};
		}
		x->aops[i][na++] = (pw_attr_op){"fusion.201", "qkv+out+ffn GEMMs", "MXU", 32, 1890 - 2 * j, 8e9};
		x->aops[i][na++] = (pw_attr_op){"ppermute.77", "ICI", "ICI", 32, 127 - j / 3, 0};
		snprintf(x->rid[i], sizeof x->rid[i], "nb-%d", i);
		snprintf(x->rid[5 + i], sizeof x->rid[5 + i], "rc-%d", i);
		x->b[i] = (pw_attr_run){x->rid[i], 0, "xla-2026-06-10", fp_before, "perfbench-2.31", x->bops[i], 3,
		                        3900 + 5 * j, 4.26 + 0.001 * j, 0.038, 0.65, hb};
		x->a[i] = (pw_attr_run){x->rid[5 + i], (uint32_t)i, "xla-rc-2026-06-17", fp_after, "perfbench-2.31",
		                        x->aops[i], na, 4220 + 5 * j, 3.95, 0.035, 0.60, ha};
	}
}

static const pw_attr_row *row(const pw_attr_result *r, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (strcmp(r->rows[i].name, name) == 0)
			return &r->rows[i];
	return NULL;
}

Test(attribute, worked_example_is_artifact_6_row_by_row)
{
	example x;
	build(&x, "hlo:9f31c2ab", "hlo:9f31c2ab", hlo_prod, hlo_rc, true);
	pw_attr_side b = {x.b, 5}, a = {x.a, 5};
	pw_attr_context ctx = {&v6e4, "decode.B64.s2048.int8", NULL, NULL, 0};
	pw_attr_result r;
	cr_assert_eq(pw_attr_compute(&b, &a, &ctx, &r), PW_OK);
	cr_assert_eq(r.status, PW_ATTR_OK);
	cr_assert_eq(r.nrows, 6);
	/* sorted by |Δ|: −2,016 / +1,184 / +1,088 / +256 / +2 / −1 */
	struct {
		const char *name;
		double delta;
		pw_attr_change change;
		const char *note;
	} want[] = {
		{"fusion.1423", -2016, PW_ATTR_REMOVED, "REMOVED"},
		{"fusion.1423b", 1184, PW_ATTR_NEW, "NEW"},
		{"fusion.1423a", 1088, PW_ATTR_NEW, "NEW"},
		{"softmax.88", 256, PW_ATTR_NEW, "NEW (VPU)"},
		{"fusion.201", 2, PW_ATTR_UNCHANGED, "unchanged"},
		{"ppermute.77", -1, PW_ATTR_UNCHANGED, "unchanged"},
	};
	for (size_t i = 0; i < 6; i++) {
		cr_assert_str_eq(r.rows[i].name, want[i].name, "row %zu", i);
		cr_assert(fabs(r.rows[i].delta_us - want[i].delta) < 1e-9, "%s: %f", want[i].name,
		          r.rows[i].delta_us);
		cr_assert_eq(r.rows[i].change, want[i].change, "%s", want[i].name);
		cr_assert_str_eq(r.rows[i].note, want[i].note);
		cr_assert_eq(r.rows[i].calls, 32);
	}
	cr_assert_eq(row(&r, "fusion.201")->before_us, 1888);
	cr_assert_eq(row(&r, "fusion.201")->after_us, 1890);
	/* kernel sums 4,032 → 4,545; wall 3,900 → 4,220; they differ */
	cr_assert(fabs(r.kernel_before_us - 4032) < 1e-9 && fabs(r.kernel_after_us - 4545) < 1e-9);
	cr_assert(fabs(r.wall_before_us - 3900) < 1e-9 && fabs(r.wall_after_us - 4220) < 1e-9);
	cr_assert(r.kernel_wall_differ);
	cr_assert(strstr(r.kernel_wall_note, "+513") && strstr(r.kernel_wall_note, "+320"), "%s",
	          r.kernel_wall_note);
	/* the family: fusion.1423 → 1423a, softmax.88, 1423b, nearly all of the delta */
	cr_assert_str_eq(r.top_family, "fusion.1423");
	cr_assert_str_eq(r.top_family_members, "fusion.1423 → fusion.1423a, softmax.88, fusion.1423b");
	cr_assert(fabs(r.top_family_delta_us - 512) < 1e-9);
	cr_assert(fabs(r.top_family_share - 512.0 / 515.0) < 1e-9, "%f", r.top_family_share);
	cr_assert_str_eq(row(&r, "softmax.88")->family, "layer.attn");
	/* representative runs: the median repeats */
	cr_assert_str_eq(r.before_run->run_id, "nb-0");
	cr_assert_str_eq(r.after_run->run_id, "rc-0");
	pw_attr_result_release(&r);
}

Test(attribute, worked_example_hlo_diff_is_artifact_5)
{
	example x;
	build(&x, "hlo:9f31c2ab", "hlo:9f31c2ab", hlo_prod, hlo_rc, true);
	pw_attr_side b = {x.b, 5}, a = {x.a, 5};
	pw_attr_context ctx = {&v6e4, "decode.B64.s2048.int8", NULL, NULL, 0};
	pw_attr_result r;
	cr_assert_eq(pw_attr_compute(&b, &a, &ctx, &r), PW_OK);
	cr_assert(r.hlo_known && r.hlo_changed);
	const char *d = r.hlo_diff;
	cr_assert(strstr(d, "--- xla-2026-06-10 hlo:9f31c2ab  layer.attn\n"), "%s", d);
	cr_assert(strstr(d, "+++ xla-rc-2026-06-17 hlo:9f31c2ab  layer.attn\n"), "%s", d);
	cr_assert(strstr(d, "\n-  %fusion.1423 = bf16[64,32,128]{2,1,0} fusion(%q, %k_cache, %v_cache),\n"), "%s", d);
	cr_assert(strstr(d, "\n-      backend_config={\"fusion_kind\":\"attention_softmax_fused\",\"vmem_bytes\":2097152}\n"));
	cr_assert(strstr(d, "\n+  %fusion.1423a = f32[64,32,2048]"));
	cr_assert(strstr(d, "\n+  %softmax.88 = f32[64,32,2048]{2,1,0} exponential-normalize(%fusion.1423a)\n"));
	cr_assert(strstr(d, "\n+  %fusion.1423b = bf16[64,32,128]"));
	cr_assert(strstr(d, "\n+      // fusion declined: projected vmem 2,097,152 B > cap 1,572,864 B (cl/7841917)\n"));
	/* limited to the changed computation: the GEMMs and the collective are not in it */
	cr_assert_null(strstr(d, "fusion.201"));
	cr_assert_null(strstr(d, "ppermute.77"));
	cr_assert_null(strstr(d, "layer.gemm"));
	/* the hunk's context keeps the computation's braces */
	cr_assert(strstr(d, "@@ -1,5 +1,8 @@\n %layer.attn {\n"), "%s", d);
	cr_assert(strstr(d, "\n }\n"));
	cr_assert_eq(r.vmem_cap_bytes, 1572864);
	pw_attr_result_release(&r);
}

Test(attribute, worked_example_consistency_check)
{
	example x;
	build(&x, "hlo:9f31c2ab", "hlo:9f31c2ab", hlo_prod, hlo_rc, true);
	pw_attr_side b = {x.b, 5}, a = {x.a, 5};
	pw_attr_clean clean[] = {
		{"chat-8b/v5e-8/decode.B64.s2048.int8", &v5e8, "decode.B64.s2048.int8", 0.03, 0.64, false},
		{"chat-8b/v6e-4/prefill.s8192.bf16", &v6e4, "prefill.s8192.bf16", 0.52, 0.04, false},
		{"chat-8b/v6e-16/decode.B64.s2048.int8", &v6e16, "decode.B64.s2048.int8", 0.03, 0.64, false},
	};
	pw_attr_context ctx = {&v6e4, "decode.B64.s2048.int8", NULL, clean, 3};
	pw_attr_result r;
	cr_assert_eq(pw_attr_compute(&b, &a, &ctx, &r), PW_OK);
	/* 33.6 MB/layer × 32 = 1.07 GB; ÷ 4.26 TB/s = +252 µs = +6.5%; measured +320 = +8.2%; residual 68 */
	cr_assert(fabs(r.added_bytes - 2 * 32 * S_LAYER) < 1, "%f", r.added_bytes);
	cr_assert(fabs(r.added_bytes / 1e9 - 1.07) < 0.005);
	cr_assert(fabs(r.bw_tb_s - 4.26) < 1e-12, "%f", r.bw_tb_s);
	cr_assert_str_eq(r.bw_source, "before runs");
	cr_assert(fabs(r.predicted_us - 252) < 0.5, "%f", r.predicted_us);
	cr_assert(fabs(r.predicted_pct - 6.5) < 0.05, "%f", r.predicted_pct);
	cr_assert(fabs(r.measured_us - 320) < 1e-9);
	cr_assert(fabs(r.measured_pct - 8.2) < 0.05, "%f", r.measured_pct);
	cr_assert(fabs(r.residual_us - 68) < 0.5, "%f", r.residual_us);
	cr_assert(fabs(r.residual_us - (r.measured_us - r.predicted_us)) < 1e-9, "residual unmassaged");
	/* memory-bound: AI from MFU/HBM utilisation ≈ 65 FLOP/B against a 1,120 FLOP/B ridge */
	cr_assert(r.bound_known && r.memory_bound);
	cr_assert(fabs(r.intensity - 0.038 * 1836e12 / (0.65 * 1640e9)) < 1e-6);
	cr_assert(fabs(r.ridge - 1836e12 / 1640e9) < 1e-6);
	cr_assert(strstr(r.roofline_explanation, "33.6 MB × 32 calls"), "%s", r.roofline_explanation);
	/* selectivity: v5e by tile math, prefill by being compute-bound; a v6e-16 decode that stayed would not be */
	cr_assert_eq(r.nselectivity, 3);
	cr_assert(r.selectivity[0].explained, "%s", r.selectivity[0].reason);
	cr_assert(strstr(r.selectivity[0].reason, "128·2048·4 B = 1,048,576 B ≤ cap 1,572,864 B → stays fused"),
	          "%s", r.selectivity[0].reason);
	cr_assert(r.selectivity[1].explained, "%s", r.selectivity[1].reason);
	cr_assert(strstr(r.selectivity[1].reason, "compute-bound"));
	cr_assert_not(r.selectivity[2].explained);
	cr_assert(strstr(r.selectivity[2].reason, "unexplained: tile 256·2048·4 B = 2,097,152 B > cap"),
	          "%s", r.selectivity[2].reason);
	/* same fingerprint in, different decisions out: the compiler */
	cr_assert_str_eq(r.owner_hint, "compiler");
	cr_assert(strstr(r.owner_reason, "hlo:9f31c2ab") && strstr(r.owner_reason, "cap 1,572,864 B"));
	char *txt = pw_attr_render(&r);
	cr_assert_not_null(txt);
	cr_assert(strstr(txt, "fusion.1423 (attention_softmax_fused)"), "%s", txt);
	cr_assert(strstr(txt, "-2,016") && strstr(txt, "+1,088") && strstr(txt, "+1,184"));
	cr_assert(strstr(txt, "4,032") && strstr(txt, "4,545") && strstr(txt, "+513"));
	cr_assert(strstr(txt, "= +252 µs = +6.5% of 3,900 µs"), "%s", txt);
	cr_assert(strstr(txt, "measured      = +320 µs (+8.2%) → residual 68 µs"), "%s", txt);
	cr_assert(strstr(txt, "owner hint    : compiler"));
	free(txt);
	pw_attr_result_release(&r);
}

Test(attribute, model_retrain_is_the_model)
{
	/* a new fingerprint: the program changed before any compiler decision */
	example x;
	const char *hlo_new = "HloModule chat-8b, fingerprint=hlo:77aa0102\n%layer.attn {\n  %fusion.1500 = x\n}\n";
	build(&x, "hlo:9f31c2ab", "hlo:77aa0102", hlo_prod, hlo_new, false);
	pw_attr_side b = {x.b, 5}, a = {x.a, 5};
	pw_attr_context ctx = {&v6e4, "decode.B64.s2048.int8", NULL, NULL, 0};
	pw_attr_result r;
	cr_assert_eq(pw_attr_compute(&b, &a, &ctx, &r), PW_OK);
	cr_assert_str_eq(r.owner_hint, "model");
	cr_assert(strstr(r.owner_reason, "hlo:9f31c2ab → hlo:77aa0102"), "%s", r.owner_reason);
	pw_attr_result_release(&r);
}

Test(attribute, recabling_is_infra)
{
	/* same fingerprint and HLO, every op a little slower, a recabling overlapping */
	example x;
	build(&x, "hlo:9f31c2ab", "hlo:9f31c2ab", hlo_prod, hlo_prod, false);
	for (int i = 0; i < 5; i++) {
		x.a[i].wall_step_us = 3927 + jit[i];
		for (int k = 0; k < 3; k++)
			x.aops[i][k].us_per_step *= 1.007;
	}
	pw_attr_side b = {x.b, 5}, a = {x.a, 5};
	pw_attr_context ctx = {&v6e4, "decode.B64.s2048.int8",
	                       "fc-recable-0042 recabling cell-mtv5-c12 2026-06-03", NULL, 0};
	pw_attr_result r;
	cr_assert_eq(pw_attr_compute(&b, &a, &ctx, &r), PW_OK);
	cr_assert_not(r.hlo_changed);
	cr_assert_str_eq(r.hlo_diff, "");
	cr_assert_str_eq(r.owner_hint, "infra");
	cr_assert(strstr(r.owner_reason, "fc-recable-0042"), "%s", r.owner_reason);
	/* no added bytes: the roofline predicts nothing and says so through a zero term */
	cr_assert(fabs(r.added_bytes) < 1e-6);
	cr_assert(fabs(r.predicted_us) < 1e-6);
	/* without the fleet event: unchanged HLO and far from the roofline, the harness is suspect */
	ctx.fleet_change = NULL;
	pw_attr_result r2;
	cr_assert_eq(pw_attr_compute(&b, &a, &ctx, &r2), PW_OK);
	cr_assert_str_eq(r2.owner_hint, "infra");
	cr_assert(strstr(r2.owner_reason, "suspect the harness first"), "%s", r2.owner_reason);
	pw_attr_result_release(&r);
	pw_attr_result_release(&r2);
}

Test(attribute, runs_without_op_tables_say_so)
{
	example x;
	build(&x, "hlo:9f31c2ab", "hlo:9f31c2ab", "", "", true);
	for (int i = 0; i < 5; i++)
		x.a[i].nops = 0;
	pw_attr_side b = {x.b, 5}, a = {x.a, 5};
	pw_attr_result r;
	cr_assert_eq(pw_attr_compute(&b, &a, NULL, &r), PW_OK);
	cr_assert_eq(r.status, PW_ATTR_NO_OP_TABLE);
	cr_assert_eq(r.nrows, 0);
	cr_assert(strstr(r.status_detail, "after runs carry no op table"), "%s", r.status_detail);
	cr_assert(fabs(r.measured_us - 320) < 1e-9, "the wall change is still measured");
	cr_assert(isnan(r.predicted_us), "no bytes, no prediction");
	char *txt = pw_attr_render(&r);
	cr_assert(strstr(txt, "status: no_op_table"), "%s", txt);
	free(txt);
	pw_attr_result_release(&r);
	/* and no runs at all */
	pw_attr_side none = {NULL, 0};
	cr_assert_eq(pw_attr_compute(&b, &none, NULL, &r), PW_OK);
	cr_assert_eq(r.status, PW_ATTR_NO_RUNS);
	cr_assert(strstr(r.status_detail, "after"));
	pw_attr_result_release(&r);
}

Test(attribute, op_moving_beyond_its_noise_is_changed)
{
	example x;
	build(&x, "hlo:9f31c2ab", "hlo:9f31c2ab", hlo_prod, hlo_prod, false);
	for (int i = 0; i < 5; i++)
		x.aops[i][1].us_per_step = 1888 * 1.05 + 2 * jit[i]; /* fusion.201 +5% */
	pw_attr_side b = {x.b, 5}, a = {x.a, 5};
	pw_attr_result r;
	cr_assert_eq(pw_attr_compute(&b, &a, NULL, &r), PW_OK);
	const pw_attr_row *g = row(&r, "fusion.201");
	cr_assert_eq(g->change, PW_ATTR_CHANGED, "%s", g->note);
	cr_assert(strncmp(g->note, "CHANGED +5.0%", 13) == 0, "%s", g->note);
	cr_assert_eq(row(&r, "fusion.1423")->change, PW_ATTR_UNCHANGED);
	/* one repeat a side: no noise estimate, the 1% floor alone decides */
	pw_attr_side b1 = {x.b, 1}, a1 = {x.a, 1};
	pw_attr_result r1;
	cr_assert_eq(pw_attr_compute(&b1, &a1, NULL, &r1), PW_OK);
	cr_assert_eq(row(&r1, "fusion.201")->noise_us, 0);
	cr_assert_eq(row(&r1, "fusion.201")->change, PW_ATTR_CHANGED);
	pw_attr_result_release(&r);
	pw_attr_result_release(&r1);
}

/* LCS length by dynamic programming: the independent check of Myers' result. */
static size_t lcs(const char **a, size_t na, const char **b, size_t nb)
{
	size_t *t = calloc((na + 1) * (nb + 1), sizeof *t);
	for (size_t i = 1; i <= na; i++)
		for (size_t j = 1; j <= nb; j++)
			t[i * (nb + 1) + j] = strcmp(a[i - 1], b[j - 1]) == 0
			                              ? t[(i - 1) * (nb + 1) + j - 1] + 1
			                              : (t[(i - 1) * (nb + 1) + j] > t[i * (nb + 1) + j - 1]
			                                         ? t[(i - 1) * (nb + 1) + j]
			                                         : t[i * (nb + 1) + j - 1]);
	size_t v = t[na * (nb + 1) + nb];
	free(t);
	return v;
}

Test(attribute, myers_diff_is_minimal_and_replays_both_sides)
{
	static const char *alpha[] = {"a", "b", "c", "d"};
	unsigned seed = 12345;
	for (int trial = 0; trial < 300; trial++) {
		const char *a[40], *b[40];
		seed = seed * 1103515245u + 12345u;
		size_t na = (seed >> 8) % 25, nb = (seed >> 16) % 25;
		for (size_t i = 0; i < na; i++) {
			seed = seed * 1103515245u + 12345u;
			a[i] = alpha[(seed >> 10) % 4];
		}
		for (size_t i = 0; i < nb; i++) {
			seed = seed * 1103515245u + 12345u;
			b[i] = alpha[(seed >> 10) % 4];
		}
		char ops[80];
		long n = pw_attr_line_diff(a, na, b, nb, ops);
		cr_assert_geq(n, 0);
		size_t eq = 0, xa = 0, xb = 0;
		for (long k = 0; k < n; k++) {
			if (ops[k] == '=') {
				cr_assert_str_eq(a[xa], b[xb], "trial %d: '=' on different lines", trial);
				xa++, xb++, eq++;
			} else if (ops[k] == '-') {
				xa++;
			} else {
				cr_assert_eq(ops[k], '+');
				xb++;
			}
		}
		cr_assert_eq(xa, na, "trial %d", trial);
		cr_assert_eq(xb, nb, "trial %d", trial);
		cr_assert_eq(eq, lcs(a, na, b, nb), "trial %d: not minimal", trial);
	}
}

Test(attribute, hlo_diff_of_equal_texts_is_empty)
{
	char *d = pw_attr_hlo_diff(hlo_prod, hlo_prod, "a", "b", 1);
	cr_assert_str_eq(d, "");
	free(d);
	d = pw_attr_hlo_diff("", hlo_prod, "a", "b", 1);
	cr_assert(strstr(d, "+%layer.gemm {"), "%s", d);
	free(d);
}

Test(attribute, a_side_is_one_set_of_decisions)
{
	/* a baseline window that reaches past the change: two RC-decision runs among the before runs */
	example x;
	build(&x, "hlo:9f31c2ab", "hlo:9f31c2ab", hlo_prod, hlo_rc, true);
	pw_attr_run mixed[7];
	memcpy(mixed, x.b, sizeof x.b);
	mixed[5] = x.a[1];
	mixed[6] = x.a[2];
	pw_attr_side b = {mixed, 7}, a = {x.a, 5};
	pw_attr_result r;
	cr_assert_eq(pw_attr_compute(&b, &a, NULL, &r), PW_OK);
	cr_assert_eq(r.before_dropped, 2);
	cr_assert_eq(r.after_dropped, 0);
	cr_assert_eq(r.nbefore, 5);
	cr_assert(fabs(r.kernel_before_us - 4032) < 1e-9, "%f", r.kernel_before_us);
	cr_assert_eq(row(&r, "fusion.1423a")->change, PW_ATTR_NEW);
	cr_assert(fabs(r.added_bytes - 2 * 32 * S_LAYER) < 1);
	pw_attr_result_release(&r);
}
