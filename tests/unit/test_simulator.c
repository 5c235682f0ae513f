/*
 * test_simulator.c: the fleet simulator's model (tools/simulator/sim_model.h)
 * checked against the seed's numbers, without a broker.
 *
 * Determinism, the §4.1 σ per platform class, outliers, the worked example's
 * medians and op table (§6.3, artifacts 3, 4, 6), selectivity, builds with
 * cherry-picks, interactions and rolls, fleet changes, the timeline and the
 * scenario parser's errors. Scenario files are read from the repository
 * (tools/simulator/scenarios, found from PW_TEST_DATA = tests/data).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfwatch/v1/compiler.pb-c.h"
#include "perfwatch/v1/fleet.pb-c.h"
#include "perfwatch/v1/gate.pb-c.h"
#include "perfwatch/v1/run.pb-c.h"
#include "pw_stats.h"
#include "sim_model.h"
#include "sim_proto.h"

static char errbuf[512];

static pw_sim_scenario *load(const char *name)
{
	const char *data = getenv("PW_TEST_DATA");
	char path[1024];
	snprintf(path, sizeof path, "%s/../../tools/simulator/scenarios/%s.scn",
	         data ? data : "tests/data", name);
	pw_sim_scenario *sc = NULL;
	pw_status st = pw_sim_scenario_load(path, &sc, errbuf, sizeof errbuf);
	cr_assert_eq(st, PW_OK, "load %s: %s", path, errbuf);
	return sc;
}

static pw_sim *world(const char *name, const pw_sim_overrides *ov)
{
	pw_sim_scenario *sc = load(name);
	pw_sim *w = NULL;
	pw_status st = pw_sim_new(&w, sc, ov, errbuf, sizeof errbuf);
	pw_sim_scenario_free(sc);
	cr_assert_eq(st, PW_OK, "world %s: %s", name, errbuf);
	return w;
}

static pw_sim *world_text(const char *text)
{
	pw_sim_scenario *sc = NULL;
	pw_status st = pw_sim_scenario_parse(text, "inline", &sc, errbuf, sizeof errbuf);
	cr_assert_eq(st, PW_OK, "parse: %s", errbuf);
	pw_sim *w = NULL;
	st = pw_sim_new(&w, sc, NULL, errbuf, sizeof errbuf);
	pw_sim_scenario_free(sc);
	cr_assert_eq(st, PW_OK, "world: %s", errbuf);
	return w;
}

static size_t find(const pw_sim *w, const char *m, const char *p, const char *c)
{
	size_t i;
	cr_assert_eq(pw_sim_series_find(w, m, p, c, &i), PW_OK, "series %s/%s/%s", m, p, c);
	return i;
}

static int64_t day_us(const pw_sim *w, int day, int hour)
{
	return pw_sim_start_us(w) + (int64_t)day * 86400000000LL + (int64_t)hour * 3600000000LL;
}

/* median of metric m over n runs of series si at build b on day `day` */
static double median_of(const pw_sim *w, size_t si, const pw_sim_build *b, int day,
                        pw_sim_metric m, size_t n)
{
	double *x = calloc(n, sizeof *x), *work = calloc(n, sizeof *work), med = NAN;
	cr_assert(x && work);
	for (size_t r = 0; r < n; r++) {
		pw_sim_run run;
		char id[64];
		snprintf(id, sizeof id, "med-%d-%zu", day, r);
		cr_assert_eq(pw_sim_run_make(w, si, b, id, 0, day_us(w, day, 3), NULL, &run), PW_OK);
		cr_assert(run.has[m]);
		x[r] = run.value[m];
	}
	cr_assert_eq(pw_stats_median(x, n, work, &med), PW_OK);
	free(x);
	free(work);
	return med;
}

static double rel_sigma(const pw_sim *w, size_t si, size_t n, size_t *outliers)
{
	double *x = calloc(n, sizeof *x), *work = calloc(n, sizeof *work), med, mad;
	cr_assert(x && work);
	pw_sim_build b;
	pw_sim_build_at(&b, PW_SIM_BUILD_NIGHTLY, "xla-nightly-test", pw_sim_nightly_cl(w, 0));
	*outliers = 0;
	for (size_t r = 0; r < n; r++) {
		pw_sim_run run;
		char id[64];
		snprintf(id, sizeof id, "sigma-%zu", r);
		cr_assert_eq(pw_sim_run_make(w, si, &b, id, 0, day_us(w, 0, 3), NULL, &run), PW_OK);
		x[r] = run.value[run.config.phase == PW_SIM_DECODE ? PW_SIM_TPOT_P50_MS
		                                                    : PW_SIM_PREFILL_COMPUTE_MS];
		*outliers += run.outlier;
	}
	cr_assert_eq(pw_stats_median_mad(x, n, work, &med, &mad), PW_OK);
	free(x);
	free(work);
	return mad / med;
}

/* ---- catalog ---------------------------------------------------------------- */

Test(simulator, config_names_parse_and_canonicalise)
{
	pw_sim_config c;
	cr_assert_eq(pw_sim_config_parse("decode.B64.s2048.int8", &c, errbuf, sizeof errbuf), PW_OK);
	cr_assert_eq(c.phase, PW_SIM_DECODE);
	cr_assert_eq(c.batch, 64);
	cr_assert_eq(c.seq_len, 2048);
	cr_assert_eq(c.dtype, PW_SIM_INT8);
	cr_assert_eq(pw_sim_config_parse("prefill.B1.s8192.bf16", &c, errbuf, sizeof errbuf), PW_OK);
	cr_assert_str_eq(c.name, "prefill.s8192.bf16");
	const char *bad[] = {"decode.s2048.int8", "decode.B0.s2048.int8", "decode.B64.s2048.int4",
	                     "train.B64.s2048.int8", "decode.B64.x2048.int8", "decode.B64.s2048.int8.x",
	                     ""};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(pw_sim_config_parse(bad[i], &c, errbuf, sizeof errbuf), PW_ERR_INVALID,
		             "%s", bad[i]);
}

Test(simulator, metric_table_matches_proto_and_units)
{
	cr_assert_eq(pw_sim_metric_proto(PW_SIM_TTFT_P50_MS), 1);
	cr_assert_eq(pw_sim_metric_proto(PW_SIM_PREFILL_COMPUTE_MS), 9);
	cr_assert_str_eq(pw_sim_metric_name(PW_SIM_TPOT_P50_MS), "tpot_p50_ms");
	cr_assert_str_eq(pw_sim_metric_unit(PW_SIM_GOODPUT_TOK_S_CHIP), "tok/s/chip");
	cr_assert_str_eq(pw_sim_metric_unit(PW_SIM_COST_PER_MTOK_USD), "usd/Mtok");
	cr_assert(pw_sim_metric_lower_is_better(PW_SIM_TPOT_P50_MS));
	cr_assert(!pw_sim_metric_lower_is_better(PW_SIM_MFU));
	cr_assert_eq(pw_sim_metric_find("hbm_bw_util"), PW_SIM_HBM_BW_UTIL);
	cr_assert_eq(pw_sim_metric_find("tpot_ms"), -1);
}

/* ---- determinism --------------------------------------------------------------- */

Test(simulator, same_seed_same_runs_other_seed_other_runs)
{
	pw_sim *a = world("worked-example", NULL), *b = world("worked-example", NULL);
	pw_sim_overrides ov = {.seed = 413, .has_seed = true};
	pw_sim *c = world("worked-example", &ov);
	pw_sim_cursor ca, cb;
	pw_sim_cursor_init(&ca, a);
	pw_sim_cursor_init(&cb, b);
	pw_sim_event ea, eb;
	size_t n = 0;
	while (pw_sim_cursor_next(&ca, &ea) == PW_OK) {
		cr_assert_eq(pw_sim_cursor_next(&cb, &eb), PW_OK);
		cr_assert_eq(ea.kind, eb.kind);
		cr_assert_eq(ea.t_unix_us, eb.t_unix_us);
		if (ea.kind == PW_SIM_EV_RUN) {
			cr_assert_str_eq(ea.run.run_id, eb.run.run_id);
			for (int m = 0; m < PW_SIM_METRIC_COUNT; m++)
				cr_assert(ea.run.value[m] == eb.run.value[m]);
			cr_assert_eq(ea.run.nops, eb.run.nops);
			for (size_t k = 0; k < ea.run.nops; k++)
				cr_assert(ea.run.ops[k].us_per_step == eb.run.ops[k].us_per_step);
		}
		n++;
	}
	cr_assert_eq(pw_sim_cursor_next(&cb, &eb), PW_ERR_NOT_FOUND);
	cr_assert_gt(n, 500);

	size_t si = find(a, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	pw_sim_build bl;
	pw_sim_build_at(&bl, PW_SIM_BUILD_NIGHTLY, "n", pw_sim_nightly_cl(a, 3));
	pw_sim_run ra, rc;
	pw_sim_run_make(a, si, &bl, "x", 0, day_us(a, 3, 3), NULL, &ra);
	pw_sim_run_make(c, si, &bl, "x", 0, day_us(c, 3, 3), NULL, &rc);
	cr_assert(ra.value[PW_SIM_TPOT_P50_MS] != rc.value[PW_SIM_TPOT_P50_MS]);
	pw_sim_free(a);
	pw_sim_free(b);
	pw_sim_free(c);
}

Test(simulator, a_run_does_not_depend_on_scale)
{
	pw_sim_overrides big = {.models = 40};
	pw_sim *small = world("quiet-week", NULL), *large = world("quiet-week", &big);
	cr_assert_eq(pw_sim_series_count(small), 4 * 4 * 6);
	cr_assert_eq(pw_sim_series_count(large), 40 * 4 * 6);
	size_t a = find(small, "chat-70b", "ironwood-8", "prefill.s8192.bf16");
	size_t b = find(large, "chat-70b", "ironwood-8", "prefill.s8192.bf16");
	pw_sim_build bl;
	pw_sim_build_at(&bl, PW_SIM_BUILD_NIGHTLY, "n", pw_sim_nightly_cl(small, 2));
	pw_sim_run ra, rb;
	pw_sim_run_make(small, a, &bl, "t0-x", 1, day_us(small, 2, 4), NULL, &ra);
	pw_sim_run_make(large, b, &bl, "t0-x", 1, day_us(large, 2, 4), NULL, &rb);
	for (int m = 0; m < PW_SIM_METRIC_COUNT; m++)
		cr_assert(ra.value[m] == rb.value[m], "%s", pw_sim_metric_name(m));
	/* the synthetic models exist and are reproducible */
	const pw_sim_series *s = pw_sim_series_at(large, 4 * 4 * 6);
	cr_assert_not_null(s);
	pw_sim_model_spec m2;
	pw_sim_model_synthetic(4, &m2);
	cr_assert_str_eq(s->model.name, m2.name);
	pw_sim_free(small);
	pw_sim_free(large);
}

/* ---- §4.1 variance ---------------------------------------------------------------- */

static const char *sigma_scn =
	"scenario sigma\nseed 5\nstart 2026-05-01\ndays 1\nchipset_rotation 1\n"
	"models chat-8b\nplatforms v6e-4 v5e-8 ironwood-8 b200-8 h100-8\n"
	"configs decode.B64.s2048.int8 prefill.s8192.bf16\n";

Test(simulator, sigma_per_platform_class)
{
	pw_sim *w = world_text(sigma_scn);
	const char *tpu[] = {"v6e-4", "v5e-8", "ironwood-8"}, *gpu[] = {"b200-8", "h100-8"};
	for (size_t i = 0; i < 3; i++) {
		size_t outl;
		double s = rel_sigma(w, find(w, "chat-8b", tpu[i], "decode.B64.s2048.int8"), 4000, &outl);
		cr_assert(s > 0.0036 && s < 0.0044, "%s sigma %.4f%%", tpu[i], s * 100);
		s = rel_sigma(w, find(w, "chat-8b", tpu[i], "prefill.s8192.bf16"), 4000, &outl);
		cr_assert(s > 0.0036 && s < 0.0044, "%s prefill sigma %.4f%%", tpu[i], s * 100);
	}
	for (size_t i = 0; i < 2; i++) {
		size_t outl;
		double s = rel_sigma(w, find(w, "chat-8b", gpu[i], "decode.B64.s2048.int8"), 4000, &outl);
		cr_assert(s > 0.018 && s < 0.022, "%s sigma %.3f%%", gpu[i], s * 100);
	}
	cr_assert_float_eq(pw_sim_class_sigma(PW_SIM_TPU), 0.004, 1e-12);
	cr_assert_float_eq(pw_sim_class_sigma(PW_SIM_GPU), 0.02, 1e-12);
	pw_sim_free(w);
}

Test(simulator, rotation_over_a_cell_stays_inside_the_platform_norm)
{
	pw_sim *w = world("worked-example", NULL);
	size_t outl;
	double s = rel_sigma(w, find(w, "chat-8b", "v5e-8", "decode.B64.s2048.int8"), 4000, &outl);
	/* 0.4% run noise + 0.1% between the sets of one cell: well under the 2x quarantine line */
	cr_assert(s > 0.0037 && s < 0.0047, "sigma %.4f%%", s * 100);
	pw_sim_free(w);
}

Test(simulator, outliers_are_rare_and_five_to_ten_sigma)
{
	pw_sim *w = world_text(sigma_scn);
	size_t si = find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	pw_sim_build b;
	pw_sim_build_at(&b, PW_SIM_BUILD_NIGHTLY, "n", pw_sim_nightly_cl(w, 0));
	size_t n = 20000, k = 0;
	double base = pw_sim_series_at(w, si)->step_ms * (1 + pw_sim_chipset_offset(w, pw_sim_platform_find("v6e-4"), pw_sim_series_at(w, si)->chipset));
	for (size_t r = 0; r < n; r++) {
		pw_sim_run run;
		char id[32];
		snprintf(id, sizeof id, "o%zu", r);
		pw_sim_run_make(w, si, &b, id, 0, day_us(w, 0, 3), NULL, &run);
		if (!run.outlier)
			continue;
		k++;
		double z = (run.value[PW_SIM_TPOT_P50_MS] / base - 1) / 0.004;
		cr_assert(z > 2.5 && z < 13.0, "outlier at %.1f sigma", z);
	}
	cr_assert(k > 140 && k < 260, "%zu outliers of %zu", k, n);
	pw_sim_free(w);
}

Test(simulator, chipset_offsets_in_range_and_sets_of_a_cell_agree)
{
	pw_sim *w = world("quiet-week", NULL);
	for (size_t p = 0; p < pw_sim_platforms_count; p++) {
		const pw_sim_platform *pl = &pw_sim_platforms[p];
		for (uint32_t s = 1; s <= PW_SIM_CHIPSETS_PER_PLATFORM; s++) {
			double o = fabs(pw_sim_chipset_offset(w, pl, s));
			cr_assert(o >= 0.005 && o <= 0.015, "%s set %u offset %.4f", pl->name, s, o);
			uint32_t peer = s <= 4 ? 1 + s % 4 : 5 + s % 4;
			double d = fabs(pw_sim_chipset_offset(w, pl, s) - pw_sim_chipset_offset(w, pl, peer));
			cr_assert(d <= 0.002, "sets %u,%u differ by %.4f", s, peer, d);
		}
	}
	pw_sim_free(w);
}

/* ---- the worked example ---------------------------------------------------------------- */

Test(simulator, worked_example_history)
{
	pw_sim *w = world("worked-example", NULL);
	cr_assert_eq(pw_sim_nightly_cl(w, 35), 7841885); /* 2026-06-16 */
	cr_assert_eq(pw_sim_nightly_cl(w, 36), 7841923); /* 2026-06-17 */
	size_t flagged = 0, n = 0;
	for (int64_t cl = 7841886; cl <= 7841923; cl++, n++) {
		pw_sim_cl_info ci;
		pw_sim_cl_describe(w, cl, &ci);
		flagged += ci.perf_relevant;
	}
	cr_assert_eq(n, 38);
	cr_assert_eq(flagged, 9);
	pw_sim_cl_info ci;
	pw_sim_cl_describe(w, 7841917, &ci);
	cr_assert(ci.perf_relevant);
	cr_assert_str_eq(ci.author, "xla-fusion");
	cr_assert(strstr(ci.title, "VMEM footprint at 1.5MB") != NULL);
	pw_sim_cl_describe(w, 7841916, &ci);
	cr_assert(!ci.perf_relevant);
	/* the RC the gate is asked about */
	const pw_sim_release *rc = NULL;
	for (size_t i = 0; i < pw_sim_releases_count(w); i++)
		if (pw_sim_release_at(w, i)->kind == PW_SIM_BUILD_RC)
			rc = pw_sim_release_at(w, i);
	cr_assert_not_null(rc);
	cr_assert_str_eq(rc->id, "xla-rc-2026-06-17");
	cr_assert_eq(rc->cl, 7841923);
	cr_assert_eq(rc->day, 36);
	pw_sim_free(w);
}

Test(simulator, worked_example_medians_and_selectivity)
{
	pw_sim *w = world("worked-example", NULL);
	pw_sim_build before, rc;
	pw_sim_build_at(&before, PW_SIM_BUILD_NIGHTLY, "xla-nightly-2026-06-16", 7841885);
	pw_sim_build_at(&rc, PW_SIM_BUILD_RC, "xla-rc-2026-06-17", 7841923);
	size_t b64 = find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	double m0 = median_of(w, b64, &before, 35, PW_SIM_TPOT_P50_MS, 301);
	double m1 = median_of(w, b64, &rc, 36, PW_SIM_TPOT_P50_MS, 301);
	cr_assert(fabs(m0 - 3.90) < 0.01, "before %.3f ms", m0);
	cr_assert(fabs(m1 - 4.22) < 0.015, "after %.3f ms", m1);

	struct {
		const char *m, *p, *c;
		double pct, tol;
	} scope[] = {
		{"chat-8b", "v6e-4", "decode.B8.s2048.int8", 7.4, 0.4},
		{"rank-moe-110b", "v6e-16", "decode.B64.s2048.int8", 3.1, 0.3},
		{"rank-moe-110b", "v6e-16", "decode.B8.s2048.int8", 3.1, 0.3},
		{"chat-8b", "v5e-8", "decode.B64.s2048.int8", 0.0, 0.25},
		{"chat-8b", "v5e-8", "decode.B8.s2048.int8", 0.0, 0.25},
		{"chat-8b", "v6e-4", "prefill.s8192.bf16", 0.0, 0.25},
		{"chat-8b", "v6e-4", "prefill.s32768.int8", 0.0, 0.25},
		{"chat-8b", "v5e-8", "prefill.s8192.bf16", 0.0, 0.25},
		{"rank-moe-110b", "v6e-16", "prefill.s8192.bf16", 0.0, 0.25},
	};
	for (size_t i = 0; i < sizeof scope / sizeof scope[0]; i++) {
		size_t si = find(w, scope[i].m, scope[i].p, scope[i].c);
		pw_sim_metric m = pw_sim_series_at(w, si)->config.phase == PW_SIM_DECODE
		                          ? PW_SIM_TPOT_P50_MS
		                          : PW_SIM_TTFT_P50_MS;
		double a = median_of(w, si, &before, 35, m, 201), b = median_of(w, si, &rc, 36, m, 201);
		double pct = (b / a - 1) * 100;
		cr_assert(fabs(pct - scope[i].pct) < scope[i].tol, "%s/%s/%s: %+.2f%% (want %+.1f%%)",
		          scope[i].m, scope[i].p, scope[i].c, pct, scope[i].pct);
	}
	/* TTFT of the decode config is a prefill measurement: clean */
	double t0 = median_of(w, b64, &before, 35, PW_SIM_TTFT_P50_MS, 201);
	double t1 = median_of(w, b64, &rc, 36, PW_SIM_TTFT_P50_MS, 201);
	cr_assert(fabs(t1 / t0 - 1) < 0.0025, "decode TTFT moved %+.2f%%", (t1 / t0 - 1) * 100);
	/* throughput metrics move the other way, HBM util by bytes/time */
	double g0 = median_of(w, b64, &before, 35, PW_SIM_GOODPUT_TOK_S_CHIP, 201);
	double g1 = median_of(w, b64, &rc, 36, PW_SIM_GOODPUT_TOK_S_CHIP, 201);
	cr_assert(fabs((g1 / g0 - 1) * 100 + 7.58) < 0.4, "goodput %+.2f%%", (g1 / g0 - 1) * 100);
	double c0 = median_of(w, b64, &before, 35, PW_SIM_COST_PER_MTOK_USD, 201);
	double c1 = median_of(w, b64, &rc, 36, PW_SIM_COST_PER_MTOK_USD, 201);
	cr_assert(fabs((c1 / c0 - 1) * 100 - 8.2) < 0.4, "cost %+.2f%%", (c1 / c0 - 1) * 100);
	pw_sim_free(w);
}

Test(simulator, worked_example_units_are_plausible)
{
	pw_sim *w = world("worked-example", NULL);
	pw_sim_build b;
	pw_sim_build_at(&b, PW_SIM_BUILD_NIGHTLY, "n", 7841885);
	pw_sim_run r;
	size_t si = find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	pw_sim_run_make(w, si, &b, "u", 0, day_us(w, 35, 3), NULL, &r);
	cr_assert_eq(pw_sim_run_metric_count(&r), 8);
	/* §6.3: 16.6 GB per step over 6.56 TB/s peak at 0.65 achieved */
	cr_assert(r.value[PW_SIM_HBM_BW_UTIL] > 0.62 && r.value[PW_SIM_HBM_BW_UTIL] < 0.68, "%f",
	          r.value[PW_SIM_HBM_BW_UTIL]);
	/* 64 tokens per 3.9 ms over 4 chips, 92% inside the SLOs: ~3,800 tok/s/chip */
	cr_assert(r.value[PW_SIM_GOODPUT_TOK_S_CHIP] > 3500 && r.value[PW_SIM_GOODPUT_TOK_S_CHIP] < 4100);
	/* decode is memory-bound: MFU of a few percent */
	cr_assert(r.value[PW_SIM_MFU] > 0.005 && r.value[PW_SIM_MFU] < 0.10, "%f", r.value[PW_SIM_MFU]);
	cr_assert(r.value[PW_SIM_COST_PER_MTOK_USD] > 0.05 && r.value[PW_SIM_COST_PER_MTOK_USD] < 1.0);
	cr_assert(r.value[PW_SIM_TTFT_P99_MS] > r.value[PW_SIM_TTFT_P50_MS]);
	cr_assert(r.value[PW_SIM_TPOT_P99_MS] > r.value[PW_SIM_TPOT_P50_MS]);
	cr_assert_str_eq(r.fingerprint, "hlo:9f31c2ab");
	cr_assert(strncmp(r.chipset, "pinned-", 7) == 0);
	cr_assert_str_eq(r.cell, "cell-mtv5-c12");
	cr_assert_eq(r.warmup_s, 120);
	size_t pf = find(w, "chat-8b", "v6e-4", "prefill.s8192.bf16");
	pw_sim_run_make(w, pf, &b, "u", 0, day_us(w, 35, 3), NULL, &r);
	cr_assert_eq(pw_sim_run_metric_count(&r), 7);
	cr_assert(r.has[PW_SIM_PREFILL_COMPUTE_MS] && !r.has[PW_SIM_TPOT_P50_MS]);
	/* prefill is compute-bound: MFU near the compute efficiency, TTFT tens of ms */
	cr_assert(r.value[PW_SIM_MFU] > 0.3 && r.value[PW_SIM_MFU] < 0.7, "%f", r.value[PW_SIM_MFU]);
	cr_assert(r.value[PW_SIM_TTFT_P50_MS] > 20 && r.value[PW_SIM_TTFT_P50_MS] < 500);
	pw_sim_free(w);
}

static double op_us(const pw_sim_run *r, const char *name)
{
	for (size_t i = 0; i < r->nops; i++)
		if (strcmp(r->ops[i].name, name) == 0)
			return r->ops[i].us_per_step;
	return -1;
}

static double kernel_sum(const pw_sim_run *r)
{
	double s = 0;
	for (size_t i = 0; i < r->nops; i++)
		s += r->ops[i].us_per_step;
	return s;
}

Test(simulator, worked_example_op_table_is_artifact_6)
{
	pw_sim *w = world("worked-example", NULL);
	size_t si = find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	pw_sim_build before, after;
	pw_sim_build_at(&before, PW_SIM_BUILD_RELEASE, "xla-2026-06-10", 7841885);
	pw_sim_build_at(&after, PW_SIM_BUILD_RC, "xla-rc-2026-06-17", 7841923);
	/* averages over 50 runs, rounding as the artifact does */
	double b1423 = 0, b201 = 0, bpp = 0, bsum = 0, bwall = 0;
	double a1423a = 0, a1423b = 0, asm88 = 0, a201 = 0, asum = 0, awall = 0;
	int n = 50, outl = 0;
	for (int i = 0; i < n; i++) {
		pw_sim_run r0, r1;
		char id[32];
		snprintf(id, sizeof id, "op%d", i);
		pw_sim_run_make(w, si, &before, id, 0, day_us(w, 35, 3), NULL, &r0);
		pw_sim_run_make(w, si, &after, id, 0, day_us(w, 36, 3), NULL, &r1);
		outl += r0.outlier || r1.outlier;
		cr_assert_lt(op_us(&r1, "fusion.1423"), 0, "fusion.1423 must be gone after the CL");
		cr_assert_eq(r0.ops[0].calls, 32);
		b1423 += op_us(&r0, "fusion.1423");
		b201 += op_us(&r0, "fusion.201");
		bpp += op_us(&r0, "ppermute.77");
		bsum += kernel_sum(&r0);
		bwall += r0.wall_us_per_step;
		a1423a += op_us(&r1, "fusion.1423a");
		a1423b += op_us(&r1, "fusion.1423b");
		asm88 += op_us(&r1, "softmax.88");
		a201 += op_us(&r1, "fusion.201");
		asum += kernel_sum(&r1);
		awall += r1.wall_us_per_step;
		/* kernel time is not wall time, on both sides */
		cr_assert_gt(kernel_sum(&r0), r0.wall_us_per_step * (r0.outlier ? 0.9 : 1.0));
		cr_assert_gt(kernel_sum(&r1), r1.wall_us_per_step * (r1.outlier ? 0.9 : 1.0));
	}
	cr_assert_lt(outl, 5);
	struct {
		double got, want, tol;
		const char *what;
	} rows[] = {
		{b1423 / n, 2016, 12, "fusion.1423 before"},  {b201 / n, 1888, 12, "fusion.201 before"},
		{bpp / n, 128, 2, "ppermute.77 before"},      {bsum / n, 4032, 20, "kernel sum before"},
		{a1423a / n, 1088, 8, "fusion.1423a after"},  {a1423b / n, 1184, 8, "fusion.1423b after"},
		{asm88 / n, 256, 3, "softmax.88 after"},      {a201 / n, 1890, 12, "fusion.201 after"},
		{asum / n, 4545, 25, "kernel sum after"},     {(asum - bsum) / n, 513, 15, "kernel delta"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		cr_assert(fabs(rows[i].got - rows[i].want) < rows[i].tol, "%s: %.1f µs, artifact %.0f",
		          rows[i].what, rows[i].got, rows[i].want);
	/* wall: 3,900 -> 4,220 (means include the rare outlier, so a wider band) */
	cr_assert(fabs(bwall / n - 3900) < 40, "wall before %.0f", bwall / n);
	cr_assert(fabs(awall / n - 4220) < 45, "wall after %.0f", awall / n);
	cr_assert_lt((awall - bwall) / n, (asum - bsum) / n, "wall delta must be below kernel delta");
	pw_sim_free(w);
}

/* ---- builds: bisection answers ---------------------------------------------------------- */

Test(simulator, bisection_builds_reproduce_artifact_4)
{
	pw_sim *w = world("worked-example", NULL);
	size_t si = find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	struct {
		int64_t cl;
		bool regressed;
	} steps[] = {{7841904, false}, {7841917, true}, {7841911, false}, {7841916, false},
	             {7841885, false}, {7841923, true}};
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		pw_sim_build b;
		pw_sim_build_at(&b, PW_SIM_BUILD_BISECT, NULL, steps[i].cl);
		double m = median_of(w, si, &b, 37, PW_SIM_TPOT_P50_MS, 3);
		if (steps[i].regressed)
			cr_assert(fabs(m - 4.22) < 0.05, "cl/%lld: %.3f", (long long)steps[i].cl, m);
		else
			cr_assert(fabs(m - 3.90) < 0.05, "cl/%lld: %.3f", (long long)steps[i].cl, m);
		char want[64];
		snprintf(want, sizeof want, "bisect@cl/%lld", (long long)steps[i].cl);
		cr_assert_str_eq(b.build_id, want);
	}
	/* cherry-pick the culprit alone onto the pre-range base: reproduces */
	pw_sim_build cp;
	pw_sim_build_at(&cp, PW_SIM_BUILD_BISECT, NULL, 7841885);
	cp.picks[cp.npicks++] = 7841917;
	cr_assert(pw_sim_build_contains(&cp, 7841917, -1));
	cr_assert(!pw_sim_build_contains(&cp, 7841916, -1));
	double m = median_of(w, si, &cp, 37, PW_SIM_TPOT_P50_MS, 5);
	cr_assert(fabs(m - 4.22) < 0.05, "cherry-pick: %.3f", m);
	/* a bisect run carries the job id */
	pw_sim_run r;
	cr_assert_eq(pw_sim_run_make_fingerprint(w, si, "hlo:9f31c2ab", &cp, "bj-00412-03", 0,
	                                         day_us(w, 37, 1), "bj-00412-03", &r), PW_OK);
	cr_assert_str_eq(r.job_id, "bj-00412-03");
	cr_assert_str_eq(r.build.build_id, "bisect@cl/7841885");
	cr_assert_eq(pw_sim_run_make_fingerprint(w, si, "hlo:00000000", &cp, "x", 0, 0, NULL, &r),
	             PW_ERR_NOT_FOUND);
	pw_sim_free(w);
}

Test(simulator, two_cls_regress_only_together)
{
	pw_sim *w = world("two-cl-interaction", NULL);
	size_t si = find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	pw_sim_build base, alone_a, alone_b, both, head_b;
	pw_sim_build_at(&base, PW_SIM_BUILD_BISECT, NULL, 7841885);
	alone_a = base;
	alone_a.picks[alone_a.npicks++] = 7841893;
	alone_b = base;
	alone_b.picks[alone_b.npicks++] = 7841911;
	both = alone_b;
	both.picks[both.npicks++] = 7841893;
	pw_sim_build_at(&head_b, PW_SIM_BUILD_BISECT, NULL, 7841911);
	double m0 = median_of(w, si, &base, 37, PW_SIM_TPOT_P50_MS, 31);
	double ma = median_of(w, si, &alone_a, 37, PW_SIM_TPOT_P50_MS, 31);
	double mb = median_of(w, si, &alone_b, 37, PW_SIM_TPOT_P50_MS, 31);
	double mab = median_of(w, si, &both, 37, PW_SIM_TPOT_P50_MS, 31);
	double mh = median_of(w, si, &head_b, 37, PW_SIM_TPOT_P50_MS, 31);
	cr_assert(fabs(ma / m0 - 1) < 0.004, "A alone %+.2f%%", (ma / m0 - 1) * 100);
	cr_assert(fabs(mb / m0 - 1) < 0.004, "B alone %+.2f%%", (mb / m0 - 1) * 100);
	cr_assert(fabs(mab / m0 - 1.05) < 0.005, "A+B %+.2f%%", (mab / m0 - 1) * 100);
	cr_assert(fabs(mh / m0 - 1.05) < 0.005, "head at B %+.2f%%", (mh / m0 - 1) * 100);
	pw_sim_free(w);
}

Test(simulator, culprit_inside_a_roll)
{
	pw_sim *w = world("llvm-roll", NULL);
	size_t si = find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	pw_sim_cl_info ci;
	pw_sim_cl_describe(w, 7841917, &ci);
	cr_assert_eq(ci.upstream, 10000);
	pw_sim_build pre, cut_before, cut_after, whole;
	pw_sim_build_at(&pre, PW_SIM_BUILD_BISECT, NULL, 7841916);
	pw_sim_build_at(&whole, PW_SIM_BUILD_BISECT, NULL, 7841917);
	cut_before = whole;
	cut_before.upstream_limit = 6137; /* upstream commits 0..6136 */
	cut_after = whole;
	cut_after.upstream_limit = 6138;
	double m0 = median_of(w, si, &pre, 37, PW_SIM_TPOT_P50_MS, 31);
	double m1 = median_of(w, si, &cut_before, 37, PW_SIM_TPOT_P50_MS, 31);
	double m2 = median_of(w, si, &cut_after, 37, PW_SIM_TPOT_P50_MS, 31);
	double m3 = median_of(w, si, &whole, 37, PW_SIM_TPOT_P50_MS, 31);
	cr_assert(fabs(m1 / m0 - 1) < 0.004, "cut before #6137: %+.2f%%", (m1 / m0 - 1) * 100);
	cr_assert(fabs(m2 / m0 - 1.045) < 0.005, "cut after #6137: %+.2f%%", (m2 / m0 - 1) * 100);
	cr_assert(fabs(m3 / m0 - 1.045) < 0.005, "whole roll: %+.2f%%", (m3 / m0 - 1) * 100);
	pw_sim_free(w);
}

Test(simulator, registered_win_arrives_as_registered)
{
	pw_sim *w = world("registered-win", NULL);
	size_t si = find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	pw_sim_build b0, b1;
	pw_sim_build_at(&b0, PW_SIM_BUILD_NIGHTLY, "n", 7841829);
	pw_sim_build_at(&b1, PW_SIM_BUILD_RC, "xla-rc-2026-06-17", 7841923);
	double t0 = median_of(w, si, &b0, 30, PW_SIM_TPOT_P50_MS, 101);
	double t1 = median_of(w, si, &b1, 38, PW_SIM_TPOT_P50_MS, 101);
	cr_assert(fabs((t1 / t0 - 1) * 100 + 4.0) < 0.3, "%+.2f%%", (t1 / t0 - 1) * 100);
	const pw_sim_release *rc = NULL;
	for (size_t i = 0; i < pw_sim_releases_count(w); i++)
		if (pw_sim_release_at(w, i)->kind == PW_SIM_BUILD_RC)
			rc = pw_sim_release_at(w, i);
	cr_assert_not_null(rc);
	cr_assert_eq(rc->nexpects, 6);
	cr_assert_eq(rc->expects[0].metric, PW_SIM_TPOT_P50_MS);
	cr_assert_float_eq(rc->expects[0].pct, -4.0, 1e-9);
	cr_assert_eq(rc->expects[0].cl, 7841830);
	pw_sim_free(w);
}

/* ---- fleet changes and the timeline -------------------------------------------------------- */

Test(simulator, recabling_moves_one_cell_by_0_7_percent)
{
	pw_sim *w = world("recabling", NULL);
	cr_assert_eq(pw_sim_fleet_count(w), 1);
	const pw_sim_fleet_change *fc = pw_sim_fleet_at(w, 0);
	pw_sim_build b;
	pw_sim_build_at(&b, PW_SIM_BUILD_NIGHTLY, "n", 7841000);
	for (size_t i = 0; i < pw_sim_series_count(w); i++) {
		pw_sim_run r0, r1;
		pw_sim_run_make(w, i, &b, "a", 0, fc->at_unix_us - 1, NULL, &r0);
		pw_sim_run_make(w, i, &b, "a", 0, fc->at_unix_us + 1, NULL, &r1);
		double d = (1 + r1.infra_pct / 100) / (1 + r0.infra_pct / 100) - 1;
		if (strcmp(r0.platform->name, "v6e-4") == 0) {
			cr_assert_str_eq(r0.cell, "cell-mtv5-c12");
			cr_assert(fabs(d - 0.007) < 1e-9, "%s moved %.4f", r0.config.name, d);
		} else {
			cr_assert(fabs(d) < 1e-12);
		}
	}
	/* the event goes out before the first run after it, and only once */
	pw_sim_cursor c;
	pw_sim_cursor_init(&c, w);
	pw_sim_event ev;
	int64_t last = 0;
	size_t seen = 0, runs_after = 0;
	while (pw_sim_cursor_next(&c, &ev) == PW_OK) {
		cr_assert_geq(ev.t_unix_us, last, "time goes forward");
		last = ev.t_unix_us;
		if (ev.kind == PW_SIM_EV_FLEET_CHANGE) {
			seen++;
			cr_assert_eq(runs_after, 0);
		} else if (ev.kind == PW_SIM_EV_RUN && ev.t_unix_us >= fc->at_unix_us) {
			cr_assert_eq(seen, 1, "run after the change before the event");
			runs_after++;
		}
	}
	cr_assert_eq(seen, 1);
	cr_assert_gt(runs_after, 0);
	pw_sim_free(w);
}

/* Issue 17: a re-baseline job's runs cover one chip set per slot, all in the
 * series' (changed) cell, carry the job as rebaseline_job_id on a nightly build. */
Test(simulator, rebaseline_runs_spread_over_the_cell_and_carry_their_job)
{
	pw_sim *w = world("recabling", NULL);
	const pw_sim_fleet_change *fc = pw_sim_fleet_at(w, 0);
	pw_sim_build b;
	pw_sim_build_at(&b, PW_SIM_BUILD_NIGHTLY, "xla-nightly-2026-06-03", 7841000);
	size_t si;
	cr_assert_eq(pw_sim_series_find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8", &si), PW_OK);
	pw_sim_run probe;
	cr_assert_eq(pw_sim_run_make(w, si, &b, "p", 0, fc->at_unix_us, NULL, &probe), PW_OK);
	char sets[3][PW_SIM_NAME_MAX];
	for (uint32_t slot = 0; slot < 3; slot++) {
		pw_sim_run r;
		cr_assert_eq(pw_sim_run_make_rebaseline(w, si, probe.fingerprint, &b, "rx-rb-1", slot, slot,
		                                        fc->at_unix_us + 1, "rb-1", &r), PW_OK);
		cr_assert(r.rebaseline);
		cr_assert_str_eq(r.cell, "cell-mtv5-c12");
		snprintf(sets[slot], sizeof sets[slot], "%s", r.chipset);
		for (uint32_t k = 0; k < slot; k++)
			cr_assert_str_neq(sets[k], sets[slot], "slots %u and %u share %s", k, slot, r.chipset);
		/* the change is in: infra = the set's offset and +0.7% */
		double off = 0;
		cr_assert_eq(sscanf(r.chipset, "pinned-%lf", &off), 1);
		double want = ((1 + pw_sim_chipset_offset(w, r.platform, (uint32_t)off)) * 1.007 - 1) * 100;
		cr_assert_float_eq(r.infra_pct, want, 1e-9);
		uint8_t *buf;
		size_t len;
		cr_assert_eq(pw_sim_proto_run(w, &r, &buf, &len), PW_OK);
		Perfwatch__V1__RunResult *rr = perfwatch__v1__run_result__unpack(NULL, len, buf);
		free(buf);
		cr_assert_not_null(rr);
		cr_assert_str_eq(rr->rebaseline_job_id, "rb-1");
		cr_assert_str_eq(rr->bisect_job_id, "");
		cr_assert_eq(rr->key->compiler->kind, PERFWATCH__V1__BUILD_KIND__BUILD_KIND_NIGHTLY);
		perfwatch__v1__run_result__free_unpacked(rr, NULL);
	}
	pw_sim_free(w);
}

Test(simulator, timeline_counts_match_and_the_rc_is_gated)
{
	pw_sim *w = world("worked-example", NULL);
	uint64_t runs, samples, fleet, gates;
	pw_sim_timeline_size(w, &runs, &samples, &fleet, &gates);
	/* chat-8b on 2 platforms and rank-moe-110b on 1, 4 configs: 12 series × 41 nightlies + 12 × 5 RC repeats */
	cr_assert_eq(pw_sim_series_count(w), 12);
	cr_assert_eq(runs, 12 * 41 + 12 * 5);
	cr_assert_eq(gates, 1);
	pw_sim_cursor c;
	pw_sim_cursor_init(&c, w);
	pw_sim_event ev;
	uint64_t r = 0, s = 0, g = 0, rc_runs = 0;
	while (pw_sim_cursor_next(&c, &ev) == PW_OK) {
		if (ev.kind == PW_SIM_EV_RUN) {
			r++;
			s += pw_sim_run_metric_count(&ev.run);
			if (ev.run.build.kind == PW_SIM_BUILD_RC) {
				rc_runs++;
				cr_assert_str_eq(ev.run.build.release_id, "xla-rc-2026-06-17");
				cr_assert_eq(g, 0, "the gate request comes after the sweep");
			}
		} else if (ev.kind == PW_SIM_EV_GATE_REQUEST) {
			g++;
			cr_assert_str_eq(ev.release->id, "xla-rc-2026-06-17");
			cr_assert_eq(rc_runs, 12 * 5);
		}
	}
	cr_assert_eq(r, runs);
	cr_assert_eq(s, samples);
	cr_assert_eq(g, gates);
	pw_sim_free(w);
}

Test(simulator, new_model_revision_is_a_new_fingerprint)
{
	pw_sim *w = world_text("scenario rev\nseed 3\nstart 2026-05-01\ndays 10\nmodels chat-8b\n"
	                       "platforms v6e-4\nconfigs decode.B64.s2048.int8\n"
	                       "model_rev model=chat-8b rev=chat-8b@r1 fingerprint=hlo:aaaa0001 day=2026-05-01\n"
	                       "model_rev model=chat-8b rev=chat-8b@r2 fingerprint=hlo:aaaa0002 day=2026-05-06 pct=-10\n");
	pw_sim_build b;
	pw_sim_build_at(&b, PW_SIM_BUILD_NIGHTLY, "n", 7840000);
	pw_sim_run r0, r1;
	pw_sim_run_make(w, 0, &b, "a", 0, day_us(w, 4, 3), NULL, &r0);
	pw_sim_run_make(w, 0, &b, "a", 0, day_us(w, 5, 3), NULL, &r1);
	cr_assert_str_eq(r0.fingerprint, "hlo:aaaa0001");
	cr_assert_str_eq(r1.fingerprint, "hlo:aaaa0002");
	cr_assert_str_eq(r1.model_rev, "chat-8b@r2");
	cr_assert_lt(r1.value[PW_SIM_TPOT_P50_MS], r0.value[PW_SIM_TPOT_P50_MS] * 0.95);
	pw_sim_free(w);
}

/* ---- the parser ---------------------------------------------------------------------------- */

Test(simulator, every_shipped_scenario_parses_and_builds)
{
	const char *names[] = {"worked-example", "quiet-week", "recabling", "registered-win",
	                       "two-cl-interaction", "llvm-roll"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		pw_sim *w = world(names[i], NULL);
		cr_assert_str_eq(pw_sim_name(w), names[i]);
		cr_assert_gt(pw_sim_series_count(w), 0);
		pw_sim_free(w);
	}
}

Test(simulator, scenario_errors_name_the_line)
{
	struct {
		const char *text, *needle;
	} bad[] = {
		{"start 2026-05-01\nfrobnicate 3\n", "inline:2: unknown directive"},
		{"start 2026-05-01\neffect cl=cl/1 model=chat-8b\n", "inline:2: \"effect\" needs cl= and pct="},
		{"start 2026-05-01\neffect cl=cl/x pct=1\n", "inline:2: cl="},
		{"start 2026-05-01\neffect cl=1 pct=NaN\n", "inline:2: pct=\"NaN\" is not a finite number"},
		{"start 2026-05-01\nplatforms tpu-v9\n", "inline:2: unknown platform"},
		{"start 2026-05-01\nmodels gpt-9\n", "inline:2: unknown model"},
		{"start 2026-05-01\nconfigs decode.B64\n", "inline:2: config"},
		{"start 2026-05-01\nscenario \"unterminated\n", "inline:2: unterminated quote"},
		{"days 3\n", "no \"start\" line"},
		{"rc id=x cl=1 day=2026-05-03\n", "inline:1: day given before the \"start\" line"},
		{"start 2026-05-10\nrc id=x cl=1 day=2026-05-03\n", "before the scenario start"},
		{"start 2026-05-01\nexpect rc=nope metric=mfu pct=1\n", "rc= naming an rc"},
		{"start 2026-05-01\nnoise factor=0\n", "factor=0 is out of range"},
		{"start 2026-05-01\nfleet_change id=a kind=recabling\n", "needs id=, kind= and at="},
		{"start 2026-05-01\nflagged from=10 to=20 cls=25\n", "outside from..to"},
		{"start 2026-05-01\nchipset_rotation 5\n", "exceeds the 4 sets"},
		{"start 2026-05-01\nmetric=x\n", "starts with a directive"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pw_sim_scenario *sc = (pw_sim_scenario *)1;
		errbuf[0] = '\0';
		cr_assert_eq(pw_sim_scenario_parse(bad[i].text, "inline", &sc, errbuf, sizeof errbuf),
		             PW_ERR_INVALID, "case %zu", i);
		cr_assert_null(sc);
		cr_assert(strstr(errbuf, bad[i].needle) != NULL, "case %zu: \"%s\" lacks \"%s\"", i,
		          errbuf, bad[i].needle);
	}
	pw_sim_scenario *sc = NULL;
	cr_assert_eq(pw_sim_scenario_load("/nonexistent/x.scn", &sc, errbuf, sizeof errbuf), PW_ERR_IO);
}

/* ---- bisection jobs as the bisector sends them (sim_proto.h) ---------------------------- */

Test(simulator, bisect_jobs_become_builds)
{
	pw_sim *w = world("worked-example", NULL);
	Perfwatch__V1__SeriesKey sk = PERFWATCH__V1__SERIES_KEY__INIT;
	sk.model = "chat-8b";
	sk.hlo_fingerprint = "hlo:9f31c2ab";
	sk.platform = "v6e-4";
	sk.config = "decode.B64.s2048.int8";
	sk.metric = "tpot_p50_ms";
	Perfwatch__V1__BisectJob job = PERFWATCH__V1__BISECT_JOB__INIT;
	job.job_id = "bj-00412-01";
	job.series = &sk;
	job.cl = "cl/7841904";
	job.cl_number = 7841904;
	job.repeats = 3;
	pw_sim_bisect_plan plan;
	cr_assert_eq(pw_sim_bisect_plan_make(w, &job, &plan, errbuf, sizeof errbuf), PW_OK, "%s", errbuf);
	cr_assert_eq(plan.series, find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8"));
	cr_assert_eq(plan.build.cl, 7841904);
	cr_assert_eq(plan.build.npicks, 0);
	cr_assert_eq(plan.repeats, 3);
	cr_assert_str_eq(plan.build.build_id, "bisect@cl/7841904");
	cr_assert_str_eq(plan.fingerprint, "hlo:9f31c2ab");

	/* verification: the culprit cherry-picked on the pre-range base reproduces */
	char *picks[] = {"cl/7841917"};
	job.job_id = "bj-00412-05";
	job.base_cl = "cl/7841885";
	job.n_cherry_picks = 1;
	job.cherry_picks = picks;
	cr_assert_eq(pw_sim_bisect_plan_make(w, &job, &plan, errbuf, sizeof errbuf), PW_OK, "%s", errbuf);
	cr_assert_eq(plan.build.cl, 7841885);
	cr_assert_eq(plan.build.npicks, 1);
	cr_assert_eq(plan.build.picks[0], 7841917);
	cr_assert_str_eq(plan.build.build_id, "bisect@cl/7841885+7841917");
	double m = median_of(w, plan.series, &plan.build, 37, PW_SIM_TPOT_P50_MS, 5);
	cr_assert(fabs(m - 4.22) < 0.05, "cherry-pick job: %.3f", m);

	/* inside a roll */
	job.base_cl = "";
	job.n_cherry_picks = 0;
	job.cl = "cl/7841917@6137";
	cr_assert_eq(pw_sim_bisect_plan_make(w, &job, &plan, errbuf, sizeof errbuf), PW_OK, "%s", errbuf);
	cr_assert_eq(plan.build.upstream_limit, 6137);
	cr_assert_str_eq(plan.build.build_id, "bisect@cl/7841917@6137");

	/* what cannot be answered */
	job.cl = "cl/banana";
	cr_assert_eq(pw_sim_bisect_plan_make(w, &job, &plan, errbuf, sizeof errbuf), PW_ERR_INVALID);
	job.cl = "cl/7841904";
	sk.platform = "h100-8";
	cr_assert_eq(pw_sim_bisect_plan_make(w, &job, &plan, errbuf, sizeof errbuf), PW_ERR_NOT_FOUND);
	sk.platform = "v6e-4";
	job.job_id = "";
	cr_assert_eq(pw_sim_bisect_plan_make(w, &job, &plan, errbuf, sizeof errbuf), PW_ERR_INVALID);
	pw_sim_free(w);
}

Test(simulator, gate_requests_and_fleet_changes_as_published)
{
	pw_sim *w = world("registered-win", NULL);
	const pw_sim_release *rc = NULL;
	for (size_t i = 0; i < pw_sim_releases_count(w); i++)
		if (pw_sim_release_at(w, i)->kind == PW_SIM_BUILD_RC)
			rc = pw_sim_release_at(w, i);
	cr_assert_not_null(rc);
	uint8_t *buf;
	size_t len;
	int64_t t = day_us(w, rc->day, 21);
	cr_assert_eq(pw_sim_proto_gate(w, rc, t, &buf, &len), PW_OK);
	Perfwatch__V1__GateRequest *g = perfwatch__v1__gate_request__unpack(NULL, len, buf);
	cr_assert_not_null(g);
	cr_assert_str_eq(g->release_id, "xla-rc-2026-06-17");
	cr_assert_str_eq(g->baseline_release, "xla-2026-06-10");
	cr_assert_eq(g->candidate->kind, PERFWATCH__V1__BUILD_KIND__BUILD_KIND_RC);
	cr_assert_eq(g->candidate->cl_number, 7841923);
	cr_assert_eq(g->n_expected_wins, 6);
	cr_assert(strncmp(g->expected_wins[0]->series_key, "chat-8b/hlo:", 12) == 0);
	cr_assert(strstr(g->expected_wins[0]->series_key, "/v6e-4/decode.B64.s2048.int8/tpot_p50_ms") != NULL);
	cr_assert_float_eq(g->expected_wins[0]->expected_delta_pct, -4.0, 1e-9);
	cr_assert_str_eq(g->expected_wins[0]->cl, "cl/7841830");
	cr_assert_str_eq(g->expected_wins[0]->registered_by, "xla-layout");
	cr_assert_eq(g->n_tiers, 2);
	cr_assert_eq(g->deadline_unix_us - g->requested_unix_us, 24LL * 3600 * 1000000);
	/* the fingerprint in the key is the one the RC's runs carry */
	size_t si = find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	pw_sim_build b;
	pw_sim_build_at(&b, PW_SIM_BUILD_RC, rc->id, rc->cl);
	pw_sim_run r;
	pw_sim_run_make(w, si, &b, "x", 0, t, NULL, &r);
	cr_assert(strstr(g->expected_wins[0]->series_key, r.fingerprint) != NULL);
	perfwatch__v1__gate_request__free_unpacked(g, NULL);
	free(buf);
	pw_sim_free(w);

	w = world("recabling", NULL);
	cr_assert_eq(pw_sim_proto_fleet(pw_sim_fleet_at(w, 0), &buf, &len), PW_OK);
	Perfwatch__V1__FleetChangeEvent *f = perfwatch__v1__fleet_change_event__unpack(NULL, len, buf);
	cr_assert_not_null(f);
	cr_assert_str_eq(f->event_id, "fc-2026-06-03-0007");
	cr_assert_eq(f->kind, PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_RECABLING);
	cr_assert_eq(f->n_platforms, 1);
	cr_assert_str_eq(f->platforms[0], "v6e-4");
	cr_assert_eq(f->n_cells, 1);
	cr_assert_str_eq(f->cells[0], "cell-mtv5-c12");
	cr_assert_eq(f->occurred_unix_us, pw_sim_fleet_at(w, 0)->at_unix_us);
	perfwatch__v1__fleet_change_event__free_unpacked(f, NULL);
	free(buf);
	pw_sim_free(w);
}

/* The CL history replay publishes on perf.compiler-cls.v1 (compiler.proto). */
Test(simulator_proto, compiler_cls_of_the_worked_example_and_the_roll)
{
	pw_sim *w = world("worked-example", NULL);
	int64_t from, to;
	pw_sim_cl_span(w, &from, &to);
	cr_assert_eq(from, 7840518);
	cr_assert_eq(to, 7842075);
	cr_assert_leq(from, 7841657); /* the prod release the RC is gated against */
	uint8_t *buf;
	size_t len;
	cr_assert_eq(pw_sim_proto_cl(w, 7841917, &buf, &len), PW_OK);
	Perfwatch__V1__CompilerCl *m = perfwatch__v1__compiler_cl__unpack(NULL, len, buf);
	cr_assert_not_null(m);
	cr_assert_str_eq(m->cl, "cl/7841917");
	cr_assert_eq(m->cl_number, 7841917);
	cr_assert(strstr(m->title, "fusion: cap producer-consumer fusion VMEM footprint at 1.5MB") == m->title);
	cr_assert_str_eq(m->author, "xla-fusion");
	cr_assert(m->perf_relevant);
	cr_assert_eq(m->n_perf_benchmarks, 1);
	cr_assert_str_eq(m->perf_benchmarks[0], "*");
	cr_assert_null(m->roll);
	perfwatch__v1__compiler_cl__free_unpacked(m, NULL);
	free(buf);
	/* 38 CLs after cl/7841885, 9 flagged */
	int flagged = 0;
	for (int64_t c = 7841886; c <= 7841923; c++) {
		cr_assert_eq(pw_sim_proto_cl(w, c, &buf, &len), PW_OK);
		m = perfwatch__v1__compiler_cl__unpack(NULL, len, buf);
		cr_assert_not_null(m);
		flagged += m->perf_relevant;
		cr_assert_eq(m->n_perf_benchmarks, m->perf_relevant ? 1u : 0u);
		perfwatch__v1__compiler_cl__free_unpacked(m, NULL);
		free(buf);
	}
	cr_assert_eq(flagged, 9);
	pw_sim_free(w);

	w = world("llvm-roll", NULL);
	cr_assert_eq(pw_sim_proto_cl(w, 7841917, &buf, &len), PW_OK);
	m = perfwatch__v1__compiler_cl__unpack(NULL, len, buf);
	cr_assert_not_null(m);
	cr_assert_not_null(m->roll);
	cr_assert_eq(m->roll->upstream_commits, 10000);
	cr_assert_str_eq(m->author, "llvm-integrate");
	perfwatch__v1__compiler_cl__free_unpacked(m, NULL);
	free(buf);
	pw_sim_free(w);
}

/* ---- post-optimisation HLO and per-op HBM bytes (sim_hlo.c) -------------------------------- */

static const pw_sim_op *op_get(const pw_sim_run *r, const char *name)
{
	for (size_t i = 0; i < r->nops; i++)
		if (strcmp(r->ops[i].name, name) == 0)
			return &r->ops[i];
	return NULL;
}

Test(simulator, worked_example_hlo_is_artifact_5_and_bytes_are_the_consistency_check)
{
	pw_sim *w = world("worked-example", NULL);
	size_t si = find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	pw_sim_build before, after;
	pw_sim_build_at(&before, PW_SIM_BUILD_RELEASE, "xla-2026-06-10", 7841885);
	pw_sim_build_at(&after, PW_SIM_BUILD_RC, "xla-rc-2026-06-17", 7841923);
	pw_sim_run r0, r1, r2;
	pw_sim_run_make(w, si, &before, "h0", 0, day_us(w, 35, 3), NULL, &r0);
	pw_sim_run_make(w, si, &after, "h1", 0, day_us(w, 36, 3), NULL, &r1);
	pw_sim_run_make(w, si, &after, "h2", 3, day_us(w, 36, 5), NULL, &r2);
	char h0[4096], h1[4096], h2[4096];
	cr_assert_eq(pw_sim_run_hlo(w, &r0, h0, sizeof h0), PW_OK);
	cr_assert_eq(pw_sim_run_hlo(w, &r1, h1, sizeof h1), PW_OK);
	cr_assert_eq(pw_sim_run_hlo(w, &r2, h2, sizeof h2), PW_OK);
	/* prod: one fused kernel, its VMEM in the backend config */
	cr_assert(strstr(h0, "%fusion.1423 = bf16[64,32,128]"), "%s", h0);
	cr_assert(strstr(h0, "\"fusion_kind\":\"attention_softmax_fused\",\"vmem_bytes\":2097152"));
	cr_assert(!strstr(h0, "fusion.1423a"));
	/* RC: the parts and the declined fusion with its cap */
	cr_assert(strstr(h1, "%fusion.1423a = f32[64,32,2048]"), "%s", h1);
	cr_assert(strstr(h1, "%softmax.88 = f32[64,32,2048]{2,1,0} exponential-normalize(%fusion.1423a)"));
	cr_assert(strstr(h1, "%fusion.1423b = bf16[64,32,128]{2,1,0} fusion(%softmax.88, %v_cache)"));
	cr_assert(strstr(h1, "// fusion declined: projected vmem 2,097,152 B > cap 1,572,864 B (cl/7841917)"));
	cr_assert(strstr(h1, "S materialized to HBM (16.8 MB, fp32)"));
	cr_assert(!strstr(h1, "%fusion.1423 ="));
	/* the text is a function of the decisions, not of the run's noise */
	cr_assert_str_eq(h1, h2);
	/* bytes: the family adds S written and read, 33.6 MB/layer × 32 = 1.07 GB per step */
	double fam0 = op_get(&r0, "fusion.1423")->hbm_bytes_per_step;
	double fam1 = op_get(&r1, "fusion.1423a")->hbm_bytes_per_step +
	              op_get(&r1, "fusion.1423b")->hbm_bytes_per_step +
	              op_get(&r1, "softmax.88")->hbm_bytes_per_step;
	cr_assert(fabs(fam0 - 2.0 * 32 * 8 * 128 * 2048.0 * 64) < 1, "KV %.0f", fam0);
	cr_assert(fabs((fam1 - fam0) - 2.0 * 16777216.0 * 32) < 1, "added %.0f", fam1 - fam0);
	cr_assert(fabs(op_get(&r0, "fusion.201")->hbm_bytes_per_step - 8e9) < 1);
	cr_assert_eq(op_get(&r0, "ppermute.77")->hbm_bytes_per_step, 0);
	/* v5e: 128 lanes · 2048 · 4 B = 1,048,576 B under the cap: the fusion is not declined */
	const pw_sim_platform *v5e = pw_sim_platform_find("v5e-8");
	const pw_sim_platform *v6e = pw_sim_platform_find("v6e-4");
	pw_sim_config cfg;
	cr_assert_eq(pw_sim_config_parse("decode.B64.s2048.int8", &cfg, errbuf, sizeof errbuf), PW_OK);
	cr_assert_eq(pw_sim_attention_vmem(v5e, &cfg), 1048576.0);
	cr_assert_eq(pw_sim_attention_vmem(v6e, &cfg), 2097152.0);
	pw_sim_free(w);
}

Test(simulator, vmem_cap_decides_the_split)
{
	/* the same CL and split on both platforms: only v6e's tile exceeds the cap */
	pw_sim *w = world_text("scenario cap\nseed 1\nstart 2026-05-01\ndays 3\n"
	                       "models chat-8b\nplatforms v6e-4 v5e-8\nconfigs decode.B64.s2048.int8\n"
	                       "history anchor_day=2026-05-01 anchor_cl=cl/1000 per_day=10\n"
	                       "opnames model=chat-8b attention=fusion.1423:attention_softmax_fused\n"
	                       "effect cl=cl/1015 model=chat-8b pct=5\n"
	                       "opsplit cl=cl/1015 model=chat-8b op=fusion.1423 "
	                       "into=fusion.1423a:qk_scores:0.54,fusion.1423b:attn_v:0.59 vmem_cap=1572864\n");
	pw_sim_build b;
	pw_sim_build_at(&b, PW_SIM_BUILD_NIGHTLY, "n", 1020);
	pw_sim_run r6, r5;
	pw_sim_run_make(w, find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8"), &b, "a", 0,
	                day_us(w, 2, 1), NULL, &r6);
	pw_sim_run_make(w, find(w, "chat-8b", "v5e-8", "decode.B64.s2048.int8"), &b, "a", 0,
	                day_us(w, 2, 1), NULL, &r5);
	cr_assert_not_null(op_get(&r6, "fusion.1423a"));
	cr_assert_null(op_get(&r6, "fusion.1423"));
	cr_assert_not_null(op_get(&r5, "fusion.1423"));
	cr_assert_null(op_get(&r5, "fusion.1423a"));
	pw_sim_scenario *sc = NULL;
	cr_assert_eq(pw_sim_scenario_parse("scenario x\nopsplit cl=cl/1 op=a into=b:c:1 vmem_cap=-3\n",
	                                   "x", &sc, errbuf, sizeof errbuf),
	             PW_ERR_INVALID);
	cr_assert(strstr(errbuf, "vmem_cap"), "%s", errbuf);
	pw_sim_free(w);
}

/* pw-sim execute's series: the scenario's own when it holds the model, else one
 * built from the catalogue's spec, added once; the scenario's effects reach both. */
Test(simulator, series_ensure_keeps_the_scenarios_and_adds_a_catalogues)
{
	pw_sim *w = world("worked-example", NULL);
	size_t before = pw_sim_series_count(w);
	size_t b64 = find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	pw_sim_model_spec spec;
	cr_assert(pw_sim_model_builtin("chat-8b", &spec));
	size_t got;
	cr_assert_eq(pw_sim_series_ensure(w, &spec, "v6e-4", "decode.B64.s2048.int8", &got, errbuf,
	                                  sizeof errbuf), PW_OK, "%s", errbuf);
	cr_assert_eq(got, b64, "the scenario's pinned series, not a new one");
	cr_assert_eq(pw_sim_series_count(w), before);

	/* chat-8b on a platform and config the scenario's matrix does not hold */
	cr_assert_eq(pw_sim_series_ensure(w, &spec, "ironwood-8", "decode.B64.s8192.bf16", &got, errbuf,
	                                  sizeof errbuf), PW_OK, "%s", errbuf);
	cr_assert_eq(got, before);
	cr_assert_eq(pw_sim_series_count(w), before + 1);
	size_t again;
	cr_assert_eq(pw_sim_series_ensure(w, &spec, "ironwood-8", "decode.B64.s8192.bf16", &again, errbuf,
	                                  sizeof errbuf), PW_OK);
	cr_assert_eq(again, got, "added once");
	/* a model the scenario does not list at all */
	pw_sim_model_spec other = spec;
	snprintf(other.name, sizeof other.name, "%s", "rank-x");
	size_t rx;
	cr_assert_eq(pw_sim_series_ensure(w, &other, "v6e-4", "decode.B64.s2048.int8", &rx, errbuf,
	                                  sizeof errbuf), PW_OK);
	cr_assert_eq(strcmp(pw_sim_series_at(w, rx)->model.name, "rank-x"), 0);

	/* the culprit's effect selects by glob: the added series on v6e-4 decode B64 regresses too */
	pw_sim_build nightly, rc;
	pw_sim_build_at(&nightly, PW_SIM_BUILD_NIGHTLY, "xla-nightly-2026-06-16", 7841885);
	pw_sim_build_at(&rc, PW_SIM_BUILD_RC, "xla-rc-2026-06-17", 7841923);
	pw_sim_run r0, r1;
	cr_assert_eq(pw_sim_run_make(w, b64, &rc, "pl-x-00000", 0, pw_sim_start_us(w) + 36 * 86400000000LL,
	                             NULL, &r1), PW_OK);
	cr_assert_gt(r1.effect_pct, 8.0, "chat-8b v6e-4 decode B64 at the RC: %+.2f%%", r1.effect_pct);
	cr_assert_eq(pw_sim_run_make(w, got, &nightly, "pl-x-00001", 0, pw_sim_start_us(w), NULL, &r0), PW_OK);
	cr_assert_eq(r0.effect_pct, 0.0);

	cr_assert_eq(pw_sim_series_ensure(w, &spec, "tpu-nope", "decode.B64.s2048.int8", &got, errbuf,
	                                  sizeof errbuf), PW_ERR_INVALID);
	cr_assert(strstr(errbuf, "tpu-nope"), "%s", errbuf);
	cr_assert_eq(pw_sim_series_ensure(w, &spec, "v6e-4", "train.s1.bf16", &got, errbuf, sizeof errbuf),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_sim_series_count(w), before + 2);
	pw_sim_free(w);
}
