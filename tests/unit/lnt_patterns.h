/*
 * lnt_patterns.h: the regression patterns of LLVM LNT's own analysis test,
 * re-created in C. Source: llvm/llvm-lnt, tests/server/reporting/analysis.py
 * (ComparisonResultTest, commit 6b4265fa7d73762cf3599e98f85a3c5dc0366412):
 * the series are copied verbatim, and each case is the call that test makes,
 * ComparisonResult(min, False, False, current_samples, previous_samples),
 * with the answer its assertion names (including those commented out under
 * "Fixme", which state what LNT wanted but could not do). The three
 * test-status cases (pass/fail flips) and the AbsMinTester are not value
 * comparisons and are left out: 29 cases.
 *
 * LNT's previous_samples is a list of single-sample earlier runs, oldest
 * first; current_samples is the newest run. Used by tests/unit/test_classify.c
 * and bench/bench_classify.c.
 */
#ifndef PW_LNT_PATTERNS_H
#define PW_LNT_PATTERNS_H

#include <stddef.h>

#include "pw_classify.h"

static const double LNT_FLAT_LINE[] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                                       1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
static const double LNT_FLAT_NOISE[] = {1.0129, 1.0131, 1.039,  1.0399, 1.0071, 1.0003,
                                        1.023,  1.0386, 1.0025, 1.0273, 1.0014, 1.0101,
                                        1.0075, 1.007,  1.0207, 1.0274, 1.0252, 1.0394,
                                        1.0225, 1.0154, 1.0066, 1.0007, 1.0311, 1.0077};
static const double LNT_BIG_NUMBERS_FLAT[] = {
	10.2177, 10.4559, 10.463,  10.1278, 10.0132, 10.3997, 10.256,  10.1849,
	10.4397, 10.453,  10.1414, 10.4185, 10.0477, 10.3637, 10.2025, 10.0212,
	10.4823, 10.1047, 10.2676, 10.2971, 10.2329, 10.0271, 10.0571, 10.4414};
#define LNT_FLAT_NOISE2 LNT_BIG_NUMBERS_FLAT /* identical lists in the source */
static const double LNT_SIMPLE_REGRESSION[] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                                               1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
                                               2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0};
static const double LNT_REGRESS_5[] = {11.3978, 11.2272, 11.3756, 11.0,    11.1964, 11.0341,
                                       11.1875, 11.2624, 11.3429, 11.0012, 12.2821, 12.2141,
                                       12.3077, 12.4856, 12.3829, 12.4266, 12.3724, 12.3023,
                                       12.0148, 12.1289, 12.2068, 12.2897, 12.0671, 12.2238};
#define LNT_MS_5_REG LNT_REGRESS_5 /* identical lists in the source */
static const double LNT_IMP[] = {3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 2.0, 2.0,
                                 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0};
static const double LNT_IMP_NOISE[] = {13.2326, 13.1521, 13.0828, 13.4,    13.3142, 13.0989,
                                       13.2671, 13.1749, 13.3357, 13.0381, 12.3538, 12.1364,
                                       12.0743, 12.4843, 12.225,  12.261,  12.2779, 12.4818,
                                       12.3725, 12.026,  12.2646, 12.0656, 12.0327, 12.4735};
static const double LNT_BIMODAL[] = {1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0,
                                     1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0};
static const double LNT_BIMODAL_NOISE[] = {
	11.1597, 12.0476, 11.2654, 12.2211, 11.2945, 12.2029, 11.3946, 12.1823,
	11.3261, 12.4447, 11.1011, 12.4827, 11.4645, 12.3512, 11.381,  12.1887,
	11.0718, 12.4719, 11.0017, 12.4311, 11.3296, 12.0678, 11.0258, 12.3331};
static const double LNT_BM_ALTERNATE[] = {1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 1.0,
                                          1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 1.0,
                                          1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 1.0};
static const double LNT_BM_AL_NOISE[] = {11.3276, 12.0247, 12.2933, 11.337,  11.0047, 12.2884,
                                         12.4807, 11.4142, 11.2305, 12.4549, 12.4898, 11.2168,
                                         11.0961, 12.3487, 12.395,  11.0562, 11.2327, 12.3907,
                                         12.3533, 11.2095, 11.3616, 12.2507, 12.295,  11.0373};
static const double LNT_BM_AL_REG[] = {1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 3.0,
                                       3.0, 2.0, 2.0, 3.0, 3.0, 2.0, 2.0, 3.0, 3.0, 2.0, 2.0};
static const double LNT_BM_REGRESSION[] = {1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0,
                                           1.0, 2.0, 1.0, 2.0, 3.0, 2.0, 3.0, 2.0,
                                           3.0, 2.0, 3.0, 2.0, 3.0, 2.0, 3.0, 2.0};
static const double LNT_BM_REGS_NOISE[] = {11.1433, 12.0805, 12.3661, 11.0146, 11.1983, 12.2693,
                                           12.3474, 11.4173, 11.3068, 12.2658, 12.1376, 13.3669,
                                           13.1601, 12.0867, 12.23,   13.3021, 13.263,  12.3641,
                                           12.3352, 13.0674, 13.1938, 12.2187, 12.1801};
static const double LNT_BM_REG_OVERLAP[] = {1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0,
                                            1.0, 2.0, 1.0, 2.0, 2.5, 1.5, 2.5, 1.5,
                                            2.5, 1.5, 2.5, 1.5, 2.5, 1.5, 2.5, 1.5};
static const double LNT_BM_REG_OVER_NOISE[] = {
	11.4327, 12.3285, 11.1276, 12.1334, 11.2259, 12.0603, 11.3169, 12.4749,
	11.1805, 12.0481, 11.1331, 12.012,  12.8302, 11.5071, 12.6074, 11.6872,
	12.9957, 11.5772, 12.8381, 11.8985, 12.7692, 11.6686, 12.6311, 11.8401};
static const double LNT_SPIKE[] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 15,
                                   1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
static const double LNT_NOISE_SPIKE[] = {11.4116, 11.3406, 11.3591, 11.2415, 11.1551, 11.0909,
                                         11.3657, 11.0299, 25.0867, 11.2155, 11.1742, 11.487,
                                         11.2852, 11.3026, 11.1036, 12.2208, 11.0029, 11.4335,
                                         11.4661, 11.0444, 11.0467, 11.4942, 11.1692, 11.1597};
static const double LNT_SLOW_REG[] = {1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0, 2.1,
                                      2.2, 2.3, 2.4, 2.5, 2.6, 2.7, 2.8, 2.9, 3.0, 3.1, 3.2, 3.3};
static const double LNT_SLOW_REG_NOISE[] = {
	11.094,  11.1011, 11.5267, 11.5397, 11.6993, 11.7814, 11.6809, 12.06,
	12.281,  12.0899, 12.3967, 12.5441, 12.6527, 12.5586, 12.8025, 12.9391,
	13.0077, 12.7716, 13.0799, 13.324,  13.3028, 13.4567, 13.2734, 13.6797};
static const double LNT_SLOW_IMP[] = {2.4, 2.3, 2.2, 2.1, 2.0, 1.9, 1.8, 1.7, 1.6, 1.5, 1.4, 1.3,
                                      1.2, 1.1, 1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1};
static const double LNT_SLOW_IMP_NOISE[] = {
	12.4592, 12.7874, 12.4891, 12.3433, 12.1183, 12.3755, 12.0194, 11.7551,
	11.9412, 11.9822, 11.55,   11.3235, 11.6681, 11.5486, 11.2267, 11.0775,
	11.1642, 10.8639, 10.8378, 10.8704, 10.5302, 10.5058, 10.5191, 10.2733};

typedef struct lnt_case {
	const char *name;       /* the LNT test method */
	const double *cur;      /* current_samples */
	size_t ncur;
	const double *prev;     /* previous_samples, one single-sample run each */
	size_t nprev;
	pw_cls_verdict want;
	int fixme;              /* 1: the LNT assertion is commented out as "Fixme" */
} lnt_case;

#define LNT_CUR(...) ((const double[]){__VA_ARGS__}), \
	(sizeof((const double[]){__VA_ARGS__}) / sizeof(double))
#define LNT_NEXT(arr, k) (arr) + (k), (size_t)1
#define LNT_PREV(arr, a, b) (arr) + (a), (size_t)((b) - (a))

#define LR PW_CLS_REGRESSED
#define LI PW_CLS_IMPROVED
#define LU PW_CLS_UNCHANGED
static const lnt_case LNT_CASES[] = {
	{"test_comp", LNT_CUR(0.0887, 0.0919, 0.0903), LNT_CUR(0.0858), LU, 0},
	{"test_slower", LNT_CUR(10), LNT_CUR(5), LR, 0},
	{"test_faster", LNT_CUR(5), LNT_CUR(10), LI, 0},
	{"test_really_faster", LNT_CUR(5, 6), LNT_CUR(10, 10, 10), LI, 0},
	{"test_noticeable_regression", LNT_CUR(10.0, 10.1), LNT_CUR(5.0, 5.1, 4.9, 5.0), LR, 0},
	{"test_no_regression_flat_line", LNT_CUR(1.0), LNT_PREV(LNT_FLAT_LINE, 0, 10), LU, 0},
	{"test_no_regression_flat_line_noise", LNT_CUR(1.020), LNT_PREV(LNT_FLAT_NOISE, 0, 10), LU, 1},
	{"test_big_no_regression_flat_line_noise", LNT_CUR(10.25), LNT_PREV(LNT_FLAT_NOISE2, 0, 10),
	 LU, 1},
	{"test_big_no_regression_flat_line_multi", LNT_CUR(10.0606, 10.4169, 10.1859),
	 LNT_PREV(LNT_BIG_NUMBERS_FLAT, 0, 10), LU, 1},
	{"test_simple_regression", LNT_NEXT(LNT_SIMPLE_REGRESSION, 10),
	 LNT_PREV(LNT_SIMPLE_REGRESSION, 0, 9), LR, 0},
	{"test_noisy_regression_5", LNT_CUR(12.2821), LNT_PREV(LNT_REGRESS_5, 0, 9), LR, 0},
	{"test_noisy_regression_5_multi", LNT_CUR(12.2821, 12.2141, 12.3077),
	 LNT_PREV(LNT_MS_5_REG, 0, 9), LR, 0},
	{"test_simple_improvement", LNT_NEXT(LNT_IMP, 10), LNT_PREV(LNT_IMP, 0, 9), LI, 0},
	{"test_noise_improvement", LNT_NEXT(LNT_IMP_NOISE, 10), LNT_PREV(LNT_IMP_NOISE, 0, 9), LI, 0},
	{"test_bimodal", LNT_NEXT(LNT_BIMODAL, 10), LNT_PREV(LNT_BIMODAL, 0, 9), LU, 1},
	{"test_noise_bimodal", LNT_NEXT(LNT_BIMODAL_NOISE, 10), LNT_PREV(LNT_BIMODAL_NOISE, 0, 9), LU,
	 1},
	{"test_bimodal_alternating", LNT_NEXT(LNT_BM_ALTERNATE, 10), LNT_PREV(LNT_BM_ALTERNATE, 0, 9),
	 LU, 1},
	{"test_noise_bimodal_alternating", LNT_NEXT(LNT_BM_AL_NOISE, 10),
	 LNT_PREV(LNT_BM_AL_NOISE, 0, 9), LU, 1},
	{"test_bimodal_alternating_regression", LNT_NEXT(LNT_BM_AL_REG, 11),
	 LNT_PREV(LNT_BM_AL_REG, 0, 10), LR, 1},
	{"test_bimodal_regression", LNT_NEXT(LNT_BM_REGRESSION, 12), LNT_PREV(LNT_BM_REGRESSION, 0, 11),
	 LR, 1},
	{"test_noise_bimodal_regression", LNT_NEXT(LNT_BM_REGS_NOISE, 12),
	 LNT_PREV(LNT_BM_REGS_NOISE, 0, 11), LR, 1},
	{"test_bimodal_overlapping_regression", LNT_NEXT(LNT_BM_REG_OVERLAP, 12),
	 LNT_PREV(LNT_BM_REG_OVERLAP, 0, 11), LR, 1},
	{"test_noise_bimodal_overlapping_regression", LNT_NEXT(LNT_BM_REG_OVER_NOISE, 12),
	 LNT_PREV(LNT_BM_REG_OVER_NOISE, 0, 11), LR, 1},
	{"test_single_spike", LNT_NEXT(LNT_SPIKE, 12), LNT_PREV(LNT_SPIKE, 0, 11), LU, 0},
	{"test_noise_single_spike", LNT_NEXT(LNT_NOISE_SPIKE, 12), LNT_PREV(LNT_NOISE_SPIKE, 0, 11), LU,
	 1},
	{"test_slow_regression", LNT_NEXT(LNT_SLOW_REG, 12), LNT_PREV(LNT_SLOW_REG, 0, 11), LR, 1},
	{"test_noise_slow_regression", LNT_NEXT(LNT_SLOW_REG_NOISE, 12),
	 LNT_PREV(LNT_SLOW_REG_NOISE, 0, 11), LR, 1},
	{"test_slow_improvement", LNT_NEXT(LNT_SLOW_IMP, 12), LNT_PREV(LNT_SLOW_IMP, 0, 11), LI, 1},
	{"test_noise_slow_improvement", LNT_NEXT(LNT_SLOW_IMP_NOISE, 12),
	 LNT_PREV(LNT_SLOW_IMP_NOISE, 0, 11), LI, 1},
};
#undef LR
#undef LI
#undef LU
#define LNT_NCASES (sizeof LNT_CASES / sizeof LNT_CASES[0])

/*
 * Runs case k through pw_classify with lookback covering the whole history;
 * returns the verdict, or -1 on error. runs must have room for nprev + 1.
 */
static inline int lnt_case_classify(const lnt_case *c, const pw_cls_params *params,
                                    pw_cls_run *runs)
{
	for (size_t i = 0; i < c->nprev; i++) {
		runs[i].v = c->prev + i;
		runs[i].n = 1;
	}
	runs[c->nprev].v = c->cur;
	runs[c->nprev].n = c->ncur;
	pw_cls_result r;
	char err[256];
	if (pw_classify(params, runs, c->nprev + 1, &r, err, sizeof err) != PW_OK)
		return -1;
	return (int)r.verdict;
}

#endif
