/*
 * bench_bisect.c: builds to a verified culprit against range size, the
 * cost-model-filtered bisection (services/bisector/bisect.c) against plain
 * binary search over every CL of the same ranges, measured in the same run.
 *
 * For each range size (10 .. 10,000 CLs) and trial: every CL is flagged by
 * the cost model with probability 0.24 (the scenarios' flag_rate); the
 * culprit is a flagged CL drawn uniformly; a build's repeats are the clean
 * level 3.90 or the regressed 4.22 (+8.2%, the worked example) times
 * (1 + 0.4% Gaussian noise, TPU σ). The plain search is the same state
 * machine given no flags: its fallback bisects every CL, with the same
 * endpoints, judgement and verification, so the ratio is the filter's. Both
 * are checked to land on the culprit. Prints one row per size and the ratio.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rng.h"
#include "bisect.h"

typedef struct result {
	double builds, search, correct;
} result;

static void run_one(int64_t lo, int64_t n, const pw_bisect_cl *cls, size_t ncls, int64_t culprit,
                    uint64_t *rng, result *acc)
{
	pw_bisect b;
	if (pw_bisect_init(&b, NULL, lo, lo + n, cls, ncls) != PW_OK) {
		fprintf(stderr, "bench_bisect: init failed\n");
		exit(1);
	}
	pw_bisect_job j;
	double x[64];
	while (pw_bisect_next(&b, &j)) {
		bool in;
		if (j.npicks) {
			in = false;
			for (size_t i = 0; i < j.npicks; i++)
				in = in || j.picks[i] == culprit;
		} else
			in = j.cl >= culprit;
		for (uint32_t r = 0; r < j.repeats; r++)
			x[r] = (in ? 4.22 : 3.90) * (1 + 0.004 * gauss(rng));
		if (pw_bisect_apply(&b, &j, x, j.repeats, NULL) != PW_OK) {
			fprintf(stderr, "bench_bisect: apply refused step %u\n", j.step);
			exit(1);
		}
	}
	acc->builds += b.builds;
	acc->search += b.builds_search;
	acc->correct += b.status == PW_BISECT_DONE && b.culprit == culprit;
	pw_bisect_release(&b);
}

int main(void)
{
	static const int64_t sizes[] = {10, 38, 100, 300, 1000, 3000, 10000};
	const int trials = 200;
	const int64_t lo = 7800000;
	uint64_t rng = 0x5eed1234ULL;
	printf("range_cls  flagged  filtered_builds (search+endpoints)  plain_builds (search+endpoints)"
	       "  ratio_plain/filtered  correct_filtered  correct_plain\n");
	double t0 = now();
	for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
		int64_t n = sizes[si];
		pw_bisect_cl *cls = calloc((size_t)n, sizeof *cls);
		pw_bisect_cl *plain = calloc((size_t)n, sizeof *plain);
		if (!cls || !plain)
			return 1;
		result f = {0}, p = {0};
		double nflag = 0;
		for (int t = 0; t < trials; t++) {
			size_t k = 0;
			for (int64_t i = 0; i < n; i++) {
				cls[i] = (pw_bisect_cl){lo + 1 + i, unit(&rng) < 0.24, 0};
				plain[i] = (pw_bisect_cl){lo + 1 + i, false, 0};
				k += cls[i].flagged;
			}
			if (k == 0) {
				cls[n - 1].flagged = true;
				k = 1;
			}
			nflag += (double)k;
			size_t pick = (size_t)(unit(&rng) * (double)k), seen = 0;
			int64_t culprit = 0;
			for (int64_t i = 0; i < n && !culprit; i++)
				if (cls[i].flagged && seen++ == pick)
					culprit = cls[i].number;
			uint64_t r1 = rng, r2 = rng ^ 0xabcdefULL;
			run_one(lo, n, cls, (size_t)n, culprit, &r1, &f);
			run_one(lo, n, plain, (size_t)n, culprit, &r2, &p);
			next_u64(&rng);
		}
		printf("%9lld  %7.1f  %15.2f (%5.2f)  %30.2f (%5.2f)  %20.2f  %15.1f%%  %12.1f%%\n",
		       (long long)n, nflag / trials, f.builds / trials, f.search / trials,
		       p.builds / trials, p.search / trials, p.builds / f.builds,
		       100 * f.correct / trials, 100 * p.correct / trials);
		free(cls);
		free(plain);
	}
	printf("%d trials per size in %.2f s\n", trials, now() - t0);
	return 0;
}
