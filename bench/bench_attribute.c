/*
 * bench_attribute.c: the cost of one attribution over a 5,000-op table
 * (services/attributor/attribute.c pw_attr_compute), five repeats a side,
 * with HLO texts of 500 computations of ten instructions, one of which a
 * fusion split changes (the worked example's shape at scale).
 *
 * The reference, measured in the same run on the same table, is a plain
 * qsort of the two sides' op rows by name (the join's floor: 50,000 rows).
 * The ratio says what the attribution costs beyond sorting its input. Not
 * run in CI; the target is under 100 ms for one attribution.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attribute.h"

#define N_OPS 5000
#define N_REP 5
#define PER_COMP 10
#define REPEATS 7
#define TARGET_MS 100.0

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t lcg = 42;
static double unit(void)
{
	lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(lcg >> 11) / 9007199254740992.0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int cmp_op(const void *a, const void *b)
{
	return strcmp(((const pw_attr_op *)a)->name, ((const pw_attr_op *)b)->name);
}

/* HLO text of N_OPS instructions; split: op 0 becomes three parts with the cap comment. */
static char *hlo(char (*names)[24], int split)
{
	size_t cap = (size_t)N_OPS * 120 + 4096, o = 0;
	char *t = malloc(cap);
	o += (size_t)snprintf(t + o, cap - o, "HloModule bench, fingerprint=hlo:bench\n");
	for (int c = 0; c < N_OPS / PER_COMP; c++) {
		o += (size_t)snprintf(t + o, cap - o, "\n%%comp.%d {\n", c);
		for (int k = 0; k < PER_COMP; k++) {
			int i = c * PER_COMP + k;
			if (i == 0 && split)
				o += (size_t)snprintf(t + o, cap - o,
				                      "  %%fusion.0a = f32[64,32,2048]{2,1,0} fusion(%%q, %%k), kind=kLoop\n"
				                      "  %%softmax.0 = f32[64,32,2048]{2,1,0} exponential-normalize(%%fusion.0a)\n"
				                      "  %%fusion.0b = bf16[64,32,128]{2,1,0} fusion(%%softmax.0, %%v), kind=kLoop\n"
				                      "      // fusion declined: projected vmem 2,097,152 B > cap 1,572,864 B (cl/1)\n");
			else
				o += (size_t)snprintf(t + o, cap - o, "  %%%s = bf16[64,4096]{1,0} fusion(%%p%d), kind=kLoop\n",
				                      names[i], i);
		}
		o += (size_t)snprintf(t + o, cap - o, "}\n");
	}
	return t;
}

int main(void)
{
	static char names[N_OPS][24];
	for (int i = 0; i < N_OPS; i++)
		snprintf(names[i], sizeof names[i], "fusion.%d", i);
	pw_attr_op *bo = malloc(sizeof *bo * N_OPS * N_REP), *ao = malloc(sizeof *ao * (N_OPS + 2) * N_REP);
	pw_attr_run br[N_REP], ar[N_REP];
	char *hb = hlo(names, 0), *ha = hlo(names, 1);
	for (int r = 0; r < N_REP; r++) {
		pw_attr_op *b = bo + r * N_OPS, *a = ao + r * (N_OPS + 2);
		for (int i = 0; i < N_OPS; i++) {
			double us = 1 + 50 * unit();
			b[i] = (pw_attr_op){names[i], "k", "MXU", 32, us * (1 + 0.004 * (unit() - 0.5)), 1e6};
		}
		a[0] = (pw_attr_op){"fusion.0a", "qk_scores", "MXU", 32, 27, 5e5 + 5.4e8};
		a[1] = (pw_attr_op){"softmax.0", "exponential-normalize", "VPU", 32, 6, 0};
		a[2] = (pw_attr_op){"fusion.0b", "attn_v", "MXU", 32, 29, 5e5 + 5.4e8};
		for (int i = 1; i < N_OPS; i++)
			a[i + 2] = (pw_attr_op){names[i], "k", "MXU", 32, b[i].us_per_step * (1 + 0.004 * (unit() - 0.5)), 1e6};
		br[r] = (pw_attr_run){"b", (uint32_t)r, "prod", "hlo:bench", "h", b, N_OPS, 1e5 + r, 4.26, 0.04, 0.65, hb};
		ar[r] = (pw_attr_run){"a", (uint32_t)r, "rc", "hlo:bench", "h", a, N_OPS + 2, 1.08e5 + r, 4.2, 0.04, 0.65, ha};
	}
	pw_attr_side bs = {br, N_REP}, as = {ar, N_REP};
	pw_attr_platform plat = {"v6e-4", 4, 1640, 0.65, 256, 918, 1836};
	pw_attr_context ctx = {&plat, "decode.B64.s2048.int8", NULL, NULL, 0};

	double tf[REPEATS], tr[REPEATS];
	size_t nrows = 0;
	double pred = 0;
	pw_attr_op *copy = malloc(sizeof *copy * (size_t)(2 * N_OPS + 2) * N_REP);
	for (int k = 0; k < REPEATS; k++) {
		pw_attr_result r;
		double t0 = now_ms();
		if (pw_attr_compute(&bs, &as, &ctx, &r) != PW_OK) {
			fprintf(stderr, "bench_attribute: pw_attr_compute failed\n");
			return 1;
		}
		tf[k] = now_ms() - t0;
		nrows = r.nrows;
		pred = r.predicted_us;
		pw_attr_result_release(&r);
		/* reference: a plain sort of the same op rows by name */
		memcpy(copy, bo, sizeof *bo * N_OPS * N_REP);
		memcpy(copy + N_OPS * N_REP, ao, sizeof *ao * (N_OPS + 2) * N_REP);
		t0 = now_ms();
		qsort(copy, (size_t)(2 * N_OPS + 2) * N_REP, sizeof *copy, cmp_op);
		tr[k] = now_ms() - t0;
	}
	qsort(tf, REPEATS, sizeof tf[0], cmp_dbl);
	qsort(tr, REPEATS, sizeof tr[0], cmp_dbl);
	double f = tf[REPEATS / 2], ref = tr[REPEATS / 2];
	printf("bench_attribute: one attribution over a %d-op table (%d repeats a side, %d computations of HLO)\n",
	       N_OPS, N_REP, N_OPS / PER_COMP);
	printf("  attribution (join, classify, families, Myers HLO diff, roofline), median of %d: %.3f ms\n",
	       REPEATS, f);
	printf("  reference: qsort of the same %d op rows by name: %.3f ms\n", (2 * N_OPS + 2) * N_REP, ref);
	printf("  ratio attribution/sort: %.2fx\n", f / ref);
	printf("  rows %zu, predicted %+.0f µs\n", nrows, pred);
	printf("  target < %.0f ms: %s\n", TARGET_MS, f < TARGET_MS ? "met" : "MISSED");
	free(bo), free(ao), free(copy), free(hb), free(ha);
	return nrows == N_OPS + 3 ? 0 : 1;
}
