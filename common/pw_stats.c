/*
 * pw_stats.c: descriptive statistics, two-sample tests, Benjamini–Hochberg,
 * power, the two-sample verdict of §4.3(a), and the canary's always-valid
 * paired comparison (a confidence sequence) beside Kayenta's fixed-horizon
 * judge, its reference.
 *
 * Everything here is a pure function of its inputs: the CLI, the baseliner,
 * the gate and the benchmarks call the same code. The changepoint and
 * classifier modules (pw_changepoint.c, pw_classify.c) build on the medians
 * and tests defined here. Standard distributions come from GSL; the only
 * distribution computed here is the exact null distribution of Mann–Whitney
 * U, which is a counting recurrence, not a special function. The reasoning
 * and references are in docs/statistics.md and docs/canary.md.
 */
#include "pw_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_sf_lambert.h>

/* Exact tables up to this many doubles live on the stack (16 KiB). */
#define MWU_STACK_TABLE 2048

bool pw_stats_all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return false;
	return true;
}

/* ---- Selection ------------------------------------------------------------ */

static void swap_d(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

static void sift_down(double *a, size_t start, size_t end)
{
	size_t root = start;
	while (2 * root + 1 < end) {
		size_t child = 2 * root + 1;
		if (child + 1 < end && a[child] < a[child + 1])
			child++;
		if (!(a[root] < a[child]))
			return;
		swap_d(&a[root], &a[child]);
		root = child;
	}
}

static void heap_sort(double *a, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(a, i, n);
	for (size_t end = n; end > 1; end--) {
		swap_d(&a[0], &a[end - 1]);
		sift_down(a, 0, end - 1);
	}
}

static void insertion_sort(double *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		double v = a[i];
		size_t j = i;
		while (j > 0 && a[j - 1] > v) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = v;
	}
}

/* Sorts a[0..n) ascending: introsort (quicksort, heapsort past the depth limit). */
static void sort_doubles(double *a, size_t n)
{
	size_t depth = 0;
	for (size_t m = n; m > 1; m >>= 1)
		depth += 2;
	while (n > 16) {
		if (depth-- == 0) {
			heap_sort(a, n);
			return;
		}
		size_t mid = n / 2;
		if (a[mid] < a[0])
			swap_d(&a[mid], &a[0]);
		if (a[n - 1] < a[0])
			swap_d(&a[n - 1], &a[0]);
		if (a[n - 1] < a[mid])
			swap_d(&a[n - 1], &a[mid]);
		double pivot = a[mid];
		size_t i = 0, j = n - 1;
		for (;;) {
			while (a[i] < pivot)
				i++;
			while (pivot < a[j])
				j--;
			if (i >= j)
				break;
			swap_d(&a[i], &a[j]);
			i++;
			j--;
		}
		/* a[0..j] <= pivot <= a[j+1..n); recurse on the smaller part. */
		size_t left = j + 1, right = n - left;
		if (left < right) {
			sort_doubles(a, left);
			a += left;
			n = right;
		} else {
			sort_doubles(a + left, right);
			n = left;
		}
	}
	insertion_sort(a, n);
}

/*
 * Rearranges a[0..n) so that a[k] is the k-th smallest, everything before it
 * <= it and everything after >= it (nth_element). Quickselect with a
 * median-of-three pivot and a three-way partition, so runs of equal values
 * (constant series, ties) cost O(n); falls back to sorting the remaining range
 * if the pivots keep going bad.
 */
static void select_kth(double *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n; /* the k-th lies in [lo, hi) */
	size_t budget = 0;
	for (size_t m = n; m > 1; m >>= 1)
		budget += 2;
	while (hi - lo > 16) {
		if (budget-- == 0) {
			sort_doubles(a + lo, hi - lo);
			return;
		}
		size_t mid = lo + (hi - lo) / 2;
		double x = a[lo], y = a[mid], z = a[hi - 1];
		double pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
		/* Dutch national flag: [lo,lt) < pivot, [lt,i) == pivot, (gt,hi) > pivot. */
		size_t lt = lo, i = lo, gt = hi;
		while (i < gt) {
			if (a[i] < pivot)
				swap_d(&a[lt++], &a[i++]);
			else if (a[i] > pivot)
				swap_d(&a[i], &a[--gt]);
			else
				i++;
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return;
	}
	insertion_sort(a + lo, hi - lo);
}

/* Smallest of a[0..n), n >= 1. */
static double min_of(const double *a, size_t n)
{
	double m = a[0];
	for (size_t i = 1; i < n; i++)
		if (a[i] < m)
			m = a[i];
	return m;
}

/* Median of a[0..n) in place (reorders a). n >= 1. */
/* The mean of the two middle values of an even sample, as numpy computes it. */
static double mid_of(double lo, double hi)
{
	double mid = (lo + hi) / 2.0;
	return isfinite(mid) ? mid : lo / 2.0 + hi / 2.0;
}

static double median_inplace(double *a, size_t n)
{
	size_t k = (n - 1) / 2;
	select_kth(a, n, k);
	if (n % 2 == 1)
		return a[k];
	/* The upper middle is the smallest of what lies above the lower one. */
	return mid_of(a[k], min_of(a + k + 1, n - k - 1));
}

static pw_status check_sample(const double *x, size_t n, size_t min_n)
{
	if (n < min_n)
		return PW_ERR_INSUFFICIENT;
	if (!x || !pw_stats_all_finite(x, n))
		return PW_ERR_INVALID;
	return PW_OK;
}

pw_status pw_stats_median(const double *x, size_t n, double *work, double *out)
{
	pw_status st = check_sample(x, n, 1);
	if (st != PW_OK)
		return st;
	if (!work || !out)
		return PW_ERR_INVALID;
	memcpy(work, x, n * sizeof *work);
	*out = median_inplace(work, n);
	return PW_OK;
}

size_t pw_stats_noise_floor_work_len(const int64_t *group, size_t n)
{
	size_t pairs = 0, largest = 0;
	for (size_t i = 0; i < n;) {
		size_t m = 1;
		while (i + m < n && group[i + m] == group[i])
			m++;
		pairs += m * (m - 1) / 2;
		largest = m > largest ? m : largest;
		i += m;
	}
	return pairs + largest + 1;
}

pw_status pw_stats_noise_floor(const double *values, const int64_t *group, size_t n,
                               double *work, pw_noise_floor *out)
{
	if (!out || (n && (!values || !group || !work)))
		return PW_ERR_INVALID;
	memset(out, 0, sizeof *out);
	if (!pw_stats_all_finite(values, n))
		return PW_ERR_INVALID;
	size_t pairs = 0;
	for (size_t i = 0; i < n;) {
		size_t m = 1;
		while (i + m < n && group[i + m] == group[i])
			m++;
		if (i + m < n && group[i + m] < group[i])
			return PW_ERR_INVALID; /* not in ascending group order */
		pairs += m * (m - 1) / 2;
		i += m;
	}
	/* work: [0, pairs) the pairs' relative differences, then one group */
	double *scratch = work + pairs;
	double *medians = NULL;
	size_t k = 0, ng = 0;
	for (size_t i = 0; i < n;) {
		size_t m = 1;
		while (i + m < n && group[i + m] == group[i])
			m++;
		if (m >= 2) {
			memcpy(scratch, values + i, m * sizeof *scratch);
			double med = median_inplace(scratch, m);
			if (!(med > 0.0))
				return PW_ERR_INVALID;
			for (size_t a = i; a < i + m; a++)
				for (size_t b = a + 1; b < i + m; b++)
					work[k++] = fabs(values[a] - values[b]) / med;
			out->n_values += m;
			ng++;
		}
		i += m;
	}
	if (ng == 0)
		return PW_ERR_INSUFFICIENT;
	out->n_groups = ng;
	out->n_pairs = k;
	out->sigma_rel = PW_SHAMOS_NORMAL_SCALE * median_inplace(work, k);
	/* the level: the median of the groups' medians (the pairs are used up) */
	medians = work;
	size_t g = 0;
	for (size_t i = 0; i < n;) {
		size_t m = 1;
		while (i + m < n && group[i + m] == group[i])
			m++;
		if (m >= 2) {
			memcpy(scratch, values + i, m * sizeof *scratch);
			medians[g++] = median_inplace(scratch, m);
		}
		i += m;
	}
	out->level = median_inplace(medians, g);
	return PW_OK;
}

pw_status pw_stats_quantile(const double *x, size_t n, double q, double *work, double *out)
{
	pw_status st = check_sample(x, n, 1);
	if (st != PW_OK)
		return st;
	if (!work || !out || !(q >= 0.0 && q <= 1.0))
		return PW_ERR_INVALID;
	memcpy(work, x, n * sizeof *work);
	/* Type 7: h = (n − 1)q, interpolate between order statistics floor(h), floor(h) + 1. */
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)floor(h);
	if (lo >= n - 1) {
		select_kth(work, n, n - 1);
		*out = work[n - 1];
		return PW_OK;
	}
	select_kth(work, n, lo);
	double a = work[lo];
	double b = min_of(work + lo + 1, n - lo - 1);
	double frac = h - (double)lo;
	/* numpy's form (lerp), so results agree to the last bit where possible. */
	*out = frac >= 0.5 ? b - (b - a) * (1.0 - frac) : a + (b - a) * frac;
	return PW_OK;
}

pw_status pw_stats_median_mad(const double *x, size_t n, double *work, double *median,
                              double *mad_n)
{
	pw_status st = check_sample(x, n, 1);
	if (st != PW_OK)
		return st;
	if (!work || !median || !mad_n)
		return PW_ERR_INVALID;
	memcpy(work, x, n * sizeof *work);
	double med = median_inplace(work, n);
	for (size_t i = 0; i < n; i++)
		work[i] = fabs(x[i] - med);
	*median = med;
	*mad_n = PW_MAD_NORMAL_SCALE * median_inplace(work, n);
	return PW_OK;
}

pw_status pw_stats_median_mad_sorted(const double *sorted, size_t n, double *median,
                                     double *mad_n)
{
	pw_status st = check_sample(sorted, n, 1);
	if (st != PW_OK)
		return st;
	if (!median || !mad_n)
		return PW_ERR_INVALID;
	const double *x = sorted;
	size_t k = (n - 1) / 2;
	double med = n % 2 == 1 ? x[k] : mid_of(x[k], x[k + 1]);
	/*
	 * The deviations |x[i] − med| below the median grow leftwards from x[k],
	 * those above grow rightwards from x[k + 1]: merging the two runs yields
	 * them in order. med − x[i] is exactly fabs(x[i] − med) for x[i] <= med
	 * (IEEE subtraction is sign-symmetric), so the values equal
	 * pw_stats_median_mad's.
	 */
	size_t left = k + 1, right = k + 1; /* next candidates: x[left − 1], x[right] */
	double d = 0.0, prev = 0.0;
	for (size_t step = 0; step <= n / 2; step++) {
		bool take_left = left > 0 &&
		                 (right >= n || med - x[left - 1] <= x[right] - med);
		prev = d;
		d = take_left ? med - x[--left] : x[right++] - med;
		if (d < 0.0 || d < prev)
			return PW_ERR_INVALID; /* not sorted */
	}
	/* after n/2 + 1 steps d is the deviation of rank n/2, prev that of rank n/2 − 1 */
	double mad = n % 2 == 1 ? d : mid_of(prev, d);
	*median = med;
	*mad_n = PW_MAD_NORMAL_SCALE * mad;
	return PW_OK;
}

pw_status pw_stats_mean_var(const double *x, size_t n, double *mean, double *var)
{
	pw_status st = check_sample(x, n, 2);
	if (st != PW_OK)
		return st;
	if (!mean || !var)
		return PW_ERR_INVALID;
	double m = 0.0, m2 = 0.0;
	for (size_t i = 0; i < n; i++) {
		double d = x[i] - m;
		m += d / (double)(i + 1);
		m2 += d * (x[i] - m);
	}
	*mean = m;
	*var = m2 / (double)(n - 1);
	return PW_OK;
}

/* ---- Mann–Whitney U ------------------------------------------------------- */

/* Doubles of the exact table for U = 0..kmax: two generations of min(n1,n2)+1 rows. */
static size_t mwu_table_len(size_t n1, size_t n2, size_t kmax)
{
	size_t small = n1 < n2 ? n1 : n2;
	return 2 * (small + 1) * (kmax + 1);
}

/*
 * The null counts f(u; m, n), u = 0..k, of U for sizes m, n without ties, by
 * Mann & Whitney's recurrence f(u; i, j) = f(u − j; i − 1, j) + f(u; i, j − 1):
 * the largest observation is either an x (beating all j y's) or a y. Only
 * additions of non-negative counts, so the tails are as accurate as the
 * centre. table holds mwu_table_len(m, n, k) doubles: generation i − 1 and
 * generation i, each with rows j = 0..min(m, n). Returns the row for (m, n).
 */
static const double *mwu_exact_counts(size_t m, size_t n, size_t k, double *table)
{
	size_t big = m > n ? m : n, small = m < n ? m : n;
	size_t w = k + 1, gen = (small + 1) * w;
	double *cur = table, *nxt = table + gen;
	memset(table, 0, 2 * gen * sizeof *table);
	for (size_t j = 0; j <= small; j++)
		cur[j * w] = 1.0; /* i = 0: only U = 0 */
	nxt[0] = 1.0;             /* j = 0 stays U = 0 in every generation */
	for (size_t i = 1; i <= big; i++) {
		for (size_t j = 1; j <= small; j++) {
			double *restrict dst = nxt + j * w;
			const double *restrict left = nxt + (j - 1) * w; /* f(·; i, j − 1) */
			const double *restrict old = cur + j * w;        /* f(·; i − 1, j) */
			/*
			 * U <= i·j: past that both generations hold the zeros they were
			 * cleared with, as every earlier support was smaller.
			 */
			size_t top = i * j < k ? i * j + 1 : w;
			size_t lim = j < top ? j : top;
			for (size_t u = 0; u < lim; u++)
				dst[u] = left[u];
			for (size_t u = j; u < top; u++)
				dst[u] = left[u] + old[u - j];
		}
		double *t = cur;
		cur = nxt;
		nxt = t;
	}
	return cur + small * w;
}

/* P(U <= k) from counts f(0..k) for sizes m, n. */
static double mwu_counts_cdf(const double *f, size_t m, size_t n, size_t k)
{
	double sum = 0.0;
	for (size_t u = 0; u <= k; u++)
		sum += f[u];
	return sum / gsl_sf_choose((unsigned)(m + n), (unsigned)(m < n ? m : n));
}

/* Whether exact tables are affordable for these sizes. */
static bool mwu_exact_ok(size_t n1, size_t n2)
{
	return n1 * n2 <= (size_t)PW_MWU_EXACT_MAX * PW_MWU_EXACT_MAX;
}

/*
 * U1 of (xs − shift) against ys, both sorted ascending, and Σ(t³ − t) over the
 * tie groups of the pooled sample, by one merge. fl(a − shift) is monotone in
 * a, so the shifted xs stay sorted.
 */
static void mwu_u_ties_sorted(const double *xs, size_t n1, double shift, const double *ys,
                              size_t n2, double *u1, double *tie_term)
{
	size_t i = 0, j = 0;
	double u = 0.0, ties = 0.0;
	while (i < n1 || j < n2) {
		double v = i < n1 && (j >= n2 || xs[i] - shift <= ys[j]) ? xs[i] - shift : ys[j];
		size_t a = 0, b = 0;
		while (i < n1 && xs[i] - shift == v) {
			i++;
			a++;
		}
		size_t ylt = j; /* y's strictly below v */
		while (j < n2 && ys[j] == v) {
			j++;
			b++;
		}
		u += (double)a * (double)ylt + 0.5 * (double)a * (double)b;
		double t = (double)(a + b);
		ties += t * t * t - t;
	}
	*u1 = u;
	*tie_term = ties;
}

/*
 * Ranks x and y jointly without building a rank array: sorts copies of each
 * (work: n1 + n2 doubles) and merges, accumulating U1 and Σ(t³ − t) over tie
 * groups.
 */
static void mwu_u_and_ties(const double *x, size_t n1, const double *y, size_t n2,
                           double *work, double *u1, double *tie_term)
{
	double *xs = work, *ys = work + n1;
	memcpy(xs, x, n1 * sizeof *xs);
	memcpy(ys, y, n2 * sizeof *ys);
	sort_doubles(xs, n1);
	sort_doubles(ys, n2);
	mwu_u_ties_sorted(xs, n1, 0.0, ys, n2, u1, tie_term);
}

/* The standard deviation of U under H0 with the tie correction (Hollander & Wolfe §4.1). */
static double mwu_sigma(size_t n1, size_t n2, double tie_term)
{
	double mn = (double)n1 * (double)n2, n = (double)(n1 + n2);
	return sqrt(mn / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0))));
}

/*
 * The largest exact table any sizes a <= n1, b <= n2 can need. Exactness
 * stops at a·b > PW_MWU_EXACT_MAX², so the table for the sizes themselves is
 * not enough: a workspace sized for 60 × 50 (no table) must still serve 50 × 50
 * (the largest). Taking the maximum keeps every *_work_len monotone.
 */
static size_t exact_table_bound(size_t n1, size_t n2)
{
	const size_t cap = (size_t)PW_MWU_EXACT_MAX * PW_MWU_EXACT_MAX;
	size_t best = 0;
	for (size_t a = 1; a <= n1 && a <= cap; a++) {
		size_t b = n2 < cap / a ? n2 : cap / a;
		if (b == 0)
			break;
		size_t len = mwu_table_len(a, b, a * b / 2);
		if (len > best)
			best = len;
	}
	return best;
}

size_t pw_stats_mann_whitney_work_len(size_t n1, size_t n2)
{
	return 2 * (n1 + n2) + exact_table_bound(n1, n2);
}

/*
 * The test once ranked. counts, when not NULL, are the null counts f(0..counts_k)
 * for these sizes, computed once by a caller that needs them twice
 * (pw_stats_compare); else table is NULL (then a stack buffer or one
 * allocation is used) or holds table_len doubles.
 */
static pw_status mwu_run(const double *x, size_t n1, const double *y, size_t n2,
                         pw_alternative alt, pw_mwu_method method, double *work,
                         const double *counts, size_t counts_k, double *table,
                         size_t table_len, pw_mwu_result *out)
{
	double u1, tie_term;
	mwu_u_and_ties(x, n1, y, n2, work, &u1, &tie_term);
	double mn = (double)n1 * (double)n2;
	double u2 = mn - u1;
	double u, f;
	switch (alt) {
	case PW_ALT_GREATER:
		u = u1, f = 1.0;
		break;
	case PW_ALT_LESS:
		u = u2, f = 1.0;
		break;
	default:
		u = u1 > u2 ? u1 : u2, f = 2.0;
		break;
	}
	bool ties = tie_term > 0.0;
	bool exact;
	if (method == PW_MWU_EXACT) {
		if (ties || !mwu_exact_ok(n1, n2))
			return PW_ERR_INVALID;
		exact = true;
	} else if (method == PW_MWU_NORMAL) {
		exact = false;
	} else {
		exact = !ties && n1 <= PW_MWU_EXACT_MAX && n2 <= PW_MWU_EXACT_MAX;
	}

	double p, z = 0.0;
	if (exact) {
		/* sf(U) = P(U' >= U); by symmetry P(U' <= mn − U) when that is the short side. */
		size_t ku = (size_t)u, kc = n1 * n2 - ku;
		size_t kmax = ku >= kc ? kc : (ku > 0 ? ku - 1 : 0);
		double stack[MWU_STACK_TABLE];
		double *heap = NULL;
		if (!counts || counts_k < kmax) {
			size_t need = mwu_table_len(n1, n2, kmax);
			if (table) {
				if (table_len < need)
					return PW_ERR_INVALID;
			} else if (need <= MWU_STACK_TABLE) {
				table = stack;
			} else {
				heap = malloc(need * sizeof *heap);
				if (!heap)
					return PW_ERR_NOMEM;
				table = heap;
			}
			counts = mwu_exact_counts(n1, n2, kmax, table);
		}
		if (ku >= kc)
			p = mwu_counts_cdf(counts, n1, n2, kc);
		else if (ku == 0)
			p = 1.0;
		else
			p = 1.0 - mwu_counts_cdf(counts, n1, n2, ku - 1);
		free(heap);
	} else {
		double s = mwu_sigma(n1, n2, tie_term);
		if (!(s > 0.0)) {
			p = 1.0; /* every value tied: no evidence either way */
		} else {
			z = (u - mn / 2.0 - 0.5) / s;
			p = gsl_cdf_ugaussian_Q(z);
		}
	}
	p *= f;
	if (p > 1.0)
		p = 1.0;
	if (p < 0.0)
		p = 0.0;
	out->u = u1;
	out->z = z;
	out->p = p;
	out->exact = exact;
	return PW_OK;
}

static pw_status mwu_check(const double *x, size_t n1, const double *y, size_t n2,
                           pw_alternative alt, pw_mwu_method method, pw_mwu_result *out)
{
	pw_status st = check_sample(x, n1, 1);
	if (st == PW_OK)
		st = check_sample(y, n2, 1);
	if (st != PW_OK)
		return st;
	if (!out || (alt != PW_ALT_TWO_SIDED && alt != PW_ALT_LESS && alt != PW_ALT_GREATER) ||
	    (method != PW_MWU_AUTO && method != PW_MWU_EXACT && method != PW_MWU_NORMAL))
		return PW_ERR_INVALID;
	return PW_OK;
}

pw_status pw_stats_mann_whitney(const double *x, size_t n1, const double *y, size_t n2,
                                pw_alternative alt, pw_mwu_method method, double *work,
                                pw_mwu_result *out)
{
	pw_status st = mwu_check(x, n1, y, n2, alt, method, out);
	if (st != PW_OK)
		return st;
	if (work)
		return mwu_run(x, n1, y, n2, alt, method, work, NULL, 0, NULL, 0, out);
	size_t len = pw_stats_mann_whitney_work_len(n1, n2);
	double *own = malloc(len * sizeof *own);
	if (!own)
		return PW_ERR_NOMEM;
	size_t rank_len = 2 * (n1 + n2);
	st = mwu_run(x, n1, y, n2, alt, method, own, NULL, 0, own + rank_len, len - rank_len, out);
	free(own);
	return st;
}

pw_status pw_stats_mann_whitney_w(const double *x, size_t n1, const double *y, size_t n2,
                                  pw_alternative alt, pw_mwu_method method, double *work,
                                  size_t work_len, pw_mwu_result *out)
{
	pw_status st = mwu_check(x, n1, y, n2, alt, method, out);
	if (st != PW_OK)
		return st;
	if (!work || work_len < pw_stats_mann_whitney_work_len(n1, n2))
		return PW_ERR_INVALID;
	size_t rank_len = 2 * (n1 + n2);
	return mwu_run(x, n1, y, n2, alt, method, work, NULL, 0, work + rank_len,
	               work_len - rank_len, out);
}

/* The p-value of a t statistic with df degrees of freedom, or -1 for an unknown alternative. */
static double t_tail(double t, double df, pw_alternative alt)
{
	switch (alt) {
	case PW_ALT_LESS:
		return gsl_cdf_tdist_P(t, df);
	case PW_ALT_GREATER:
		return gsl_cdf_tdist_Q(t, df);
	case PW_ALT_TWO_SIDED:
		return 2.0 * gsl_cdf_tdist_Q(fabs(t), df);
	default:
		return -1.0;
	}
}

/* ---- Welch ---------------------------------------------------------------- */

pw_status pw_stats_welch(const double *x, size_t n1, const double *y, size_t n2,
                         pw_alternative alt, pw_welch_result *out)
{
	double m1, v1, m2, v2;
	pw_status st = pw_stats_mean_var(x, n1, &m1, &v1);
	if (st == PW_OK)
		st = pw_stats_mean_var(y, n2, &m2, &v2);
	if (st != PW_OK)
		return st;
	if (!out)
		return PW_ERR_INVALID;
	double a = v1 / (double)n1, b = v2 / (double)n2;
	double se2 = a + b;
	if (!(se2 > 0.0))
		return PW_ERR_INSUFFICIENT;
	double t = (m1 - m2) / sqrt(se2);
	double df = se2 * se2 / (a * a / (double)(n1 - 1) + b * b / (double)(n2 - 1));
	double p = t_tail(t, df, alt);
	if (p < 0.0)
		return PW_ERR_INVALID;
	out->t = t;
	out->df = df;
	out->p = p > 1.0 ? 1.0 : p;
	return PW_OK;
}

pw_status pw_stats_prediction_t(const double *x, size_t m, const double *y, size_t k,
                                pw_alternative alt, pw_pred_result *out)
{
	if (!out || !x || !y || m < 2 || k < 1 || !pw_stats_all_finite(y, k))
		return PW_ERR_INVALID;
	double mx, vx;
	pw_status st = pw_stats_mean_var(x, m, &mx, &vx);
	if (st != PW_OK)
		return st;
	double my = 0.0;
	for (size_t i = 0; i < k; i++)
		my += (y[i] - my) / (double)(i + 1);
	double se = sqrt(vx * (1.0 / (double)m + 1.0 / (double)k));
	if (!(se > 0.0))
		return PW_ERR_INSUFFICIENT;
	double t = (my - mx) / se, df = (double)(m - 1);
	double p = t_tail(t, df, alt);
	if (p < 0.0)
		return PW_ERR_INVALID;
	out->t = t;
	out->df = df;
	out->p = p > 1.0 ? 1.0 : p;
	return PW_OK;
}

/* ---- Hodges–Lehmann and the Moses interval ------------------------------- */

/*
 * k of the Moses interval [D_(k), D_(N+1−k)] (1-based) and its achieved level.
 * Exact: the largest k with 2·P(U <= k − 1) <= 1 − level (the interval's
 * coverage is 1 − 2·P(U <= k − 1), Hollander & Wolfe §4.3). f holds the null
 * counts f(0..N/2) of U, or is NULL for the normal form
 * k = floor(N/2 − z_{(1+level)/2}·sqrt(N(n1+n2+1)/12)).
 */
static size_t moses_k(size_t n1, size_t n2, double level, const double *f, double *achieved)
{
	size_t big_n = n1 * n2;
	double tail = (1.0 - level) / 2.0;
	if (f) {
		size_t kmax = big_n / 2; /* the interval never needs k − 1 past the centre */
		double total = gsl_sf_choose((unsigned)(n1 + n2), (unsigned)(n1 < n2 ? n1 : n2));
		double cum = 0.0, below = f[0];
		size_t k = 0; /* largest k with P(U <= k − 1) <= tail, 0 if none */
		for (size_t u = 0; u <= kmax; u++) {
			cum += f[u];
			if (cum / total > tail)
				break;
			k = u + 1;
			below = cum;
		}
		/* k = 0: even [min, max] falls short of level; report what it reaches. */
		*achieved = 1.0 - 2.0 * below / total;
		return k ? k : 1;
	}
	double mu = (double)big_n / 2.0;
	double sd = sqrt((double)big_n * (double)(n1 + n2 + 1) / 12.0);
	double c = floor(mu - gsl_cdf_ugaussian_Pinv(1.0 - tail) * sd);
	size_t k = c < 1.0 ? 1 : (size_t)c;
	/* P(U <= k − 1) ≈ Φ((k − 1 + ½ − mu)/sd), continuity-corrected. */
	*achieved = 1.0 - 2.0 * gsl_cdf_ugaussian_P(((double)k - 0.5 - mu) / sd);
	return k;
}

static pw_status hl_run(const double *x, size_t n1, const double *y, size_t n2, double level,
                        double *diffs, const double *counts, pw_hl_result *out)
{
	size_t big_n = n1 * n2;
	for (size_t i = 0; i < n1; i++)
		for (size_t j = 0; j < n2; j++)
			diffs[i * n2 + j] = y[j] - x[i];
	double achieved;
	size_t k = moses_k(n1, n2, level, counts, &achieved);
	if (k > (big_n + 1) / 2)
		k = (big_n + 1) / 2;
	out->shift = median_inplace(diffs, big_n);
	/*
	 * The median's selection left everything below index (N−1)/2 on its left
	 * and the rest on its right: each bound is selected within its own side.
	 */
	size_t mid = (big_n - 1) / 2;
	if (k - 1 < mid)
		select_kth(diffs, mid, k - 1);
	out->lo = diffs[k - 1];
	if (big_n - k > mid)
		select_kth(diffs + mid + 1, big_n - mid - 1, big_n - k - mid - 1);
	out->hi = diffs[big_n - k];
	out->level = achieved;
	return PW_OK;
}

/* Table length the HL interval needs (0 when it uses the normal form). */
static size_t hl_table_len(size_t n1, size_t n2)
{
	return mwu_exact_ok(n1, n2) ? mwu_table_len(n1, n2, n1 * n2 / 2) : 0;
}

pw_status pw_stats_hodges_lehmann(const double *x, size_t n1, const double *y, size_t n2,
                                  double level, double *work, pw_hl_result *out)
{
	pw_status st = check_sample(x, n1, 1);
	if (st == PW_OK)
		st = check_sample(y, n2, 1);
	if (st != PW_OK)
		return st;
	if (!out || !(level > 0.0 && level < 1.0))
		return PW_ERR_INVALID;
	size_t tlen = hl_table_len(n1, n2);
	size_t dlen = n1 * n2;
	double stack[MWU_STACK_TABLE];
	double *own = NULL, *table = NULL;
	if (!work) {
		own = malloc((dlen + tlen) * sizeof *own);
		if (!own)
			return PW_ERR_NOMEM;
		work = own;
		table = tlen ? own + dlen : NULL;
	} else if (tlen) {
		if (tlen <= MWU_STACK_TABLE) {
			table = stack;
		} else {
			own = malloc(tlen * sizeof *own);
			if (!own)
				return PW_ERR_NOMEM;
			table = own;
		}
	}
	const double *counts = table ? mwu_exact_counts(n1, n2, dlen / 2, table) : NULL;
	st = hl_run(x, n1, y, n2, level, work, counts, out);
	free(own);
	return st;
}

/* ---- Benjamini–Hochberg --------------------------------------------------- */

static void sift_idx(size_t *idx, const double *p, size_t start, size_t end)
{
	size_t root = start;
	while (2 * root + 1 < end) {
		size_t child = 2 * root + 1;
		if (child + 1 < end && p[idx[child]] < p[idx[child + 1]])
			child++;
		if (!(p[idx[root]] < p[idx[child]]))
			return;
		size_t t = idx[root];
		idx[root] = idx[child];
		idx[child] = t;
		root = child;
	}
}

/* Sorts idx by p[idx[·]] ascending, in place (heapsort: no allocation). */
static void sort_idx_by(size_t *idx, const double *p, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_idx(idx, p, i, n);
	for (size_t end = n; end > 1; end--) {
		size_t t = idx[0];
		idx[0] = idx[end - 1];
		idx[end - 1] = t;
		sift_idx(idx, p, 0, end - 1);
	}
}

pw_status pw_stats_bh_qvalues(const double *p, size_t n, size_t *work, double *q)
{
	if (n == 0)
		return PW_OK;
	if (!p || !q)
		return PW_ERR_INVALID;
	for (size_t i = 0; i < n; i++)
		if (!(p[i] >= 0.0 && p[i] <= 1.0))
			return PW_ERR_INVALID;
	size_t *own = NULL;
	if (!work) {
		own = malloc(n * sizeof *own);
		if (!own)
			return PW_ERR_NOMEM;
		work = own;
	}
	for (size_t i = 0; i < n; i++)
		work[i] = i;
	sort_idx_by(work, p, n);
	/* q_(i) = min_{j >= i} p_(j)·n/j, written back in input order. */
	double run = 1.0;
	for (size_t r = n; r-- > 0;) {
		size_t i = work[r];
		double v = p[i] * ((double)n / (double)(r + 1));
		if (v < run)
			run = v;
		q[i] = run;
	}
	free(own);
	return PW_OK;
}

/* ---- Power ---------------------------------------------------------------- */

static pw_status power_check(double sigma, double alpha, double power)
{
	if (!(isfinite(sigma) && sigma > 0.0) || !(alpha > 0.0 && alpha < 1.0) ||
	    !(power > alpha / 2.0 && power < 1.0))
		return PW_ERR_INVALID;
	return PW_OK;
}

/* Both tails of the noncentral t, integrated over s = sqrt(V), V ~ χ²(df). */
typedef struct nct_ctx {
	double c, delta, df;
} nct_ctx;

static double nct_integrand(double s, void *vctx)
{
	const nct_ctx *ctx = vctx;
	double t = ctx->c * s / sqrt(ctx->df);
	/* P(Z + δ > t) + P(Z + δ < −t) given this s, times the chi density 2s·f_χ²(s²). */
	double tails = gsl_cdf_ugaussian_Q(t - ctx->delta) + gsl_cdf_ugaussian_P(-t - ctx->delta);
	return tails * 2.0 * s * gsl_ran_chisq_pdf(s * s, ctx->df);
}

/*
 * Gauss–Legendre nodes over the chi distribution's support: its standard
 * deviation is below 0.8 for every df >= 1, so [sqrt(df) − 12, sqrt(df) + 12]
 * leaves out less than 10⁻³⁰, and on it the integrand is smooth (the chi
 * variable removes the sqrt(v) kink the chi-square form has at 0). A fixed rule
 * reports no errors, so GSL's process-wide error handler can be left alone.
 */
#define NCT_NODES 256
#define NCT_HALF_WIDTH 12.0

/* Power of the two-sided two-sample t at real n per arm (>= 2), effect d = Δ/σ. */
static double t_power(double d, double n, double alpha, const gsl_integration_glfixed_table *gl)
{
	double df = 2.0 * n - 2.0;
	nct_ctx ctx = {
		.c = gsl_cdf_tdist_Qinv(alpha / 2.0, df),
		.delta = d / sqrt(2.0 / n),
		.df = df,
	};
	gsl_function fn = {.function = nct_integrand, .params = &ctx};
	double mid = sqrt(df);
	double lo = mid > NCT_HALF_WIDTH ? mid - NCT_HALF_WIDTH : 0.0;
	double p = gsl_integration_glfixed(&fn, lo, mid + NCT_HALF_WIDTH, gl);
	return p > 1.0 ? 1.0 : p;
}

typedef struct root_ctx {
	double d, n, alpha, target; /* d or n is the unknown, the other fixed */
	bool solve_n;
	const gsl_integration_glfixed_table *gl;
} root_ctx;

static double power_gap(double v, void *vctx)
{
	const root_ctx *ctx = vctx;
	double pw = ctx->solve_n ? t_power(ctx->d, v, ctx->alpha, ctx->gl)
	                         : t_power(v, ctx->n, ctx->alpha, ctx->gl);
	return pw - ctx->target;
}

/*
 * The noncentral-t search: brackets the root of power_gap by doubling from
 * the smallest n (2) or effect (0), then Brent's method. Power rises with both
 * n and Δ, so the bracket always holds a sign change.
 */
static pw_status exact_solve(root_ctx *ctx, double *out)
{
	pw_status st = PW_OK;
	gsl_integration_glfixed_table *gl = gsl_integration_glfixed_table_alloc(NCT_NODES);
	if (!gl)
		return PW_ERR_NOMEM;
	ctx->gl = gl;
	gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
	if (!s) {
		st = PW_ERR_NOMEM;
		goto free_table;
	}
	double lo = ctx->solve_n ? 2.0 : 0.0;
	if (power_gap(lo, ctx) >= 0.0) { /* already enough at the smallest n */
		*out = lo;
		goto free_solver;
	}
	double hi = ctx->solve_n ? 4.0 : 1.0;
	while (power_gap(hi, ctx) < 0.0) {
		if (hi > 1e9) {
			st = PW_ERR_INVALID;
			goto free_solver;
		}
		lo = hi;
		hi *= 2.0;
	}
	gsl_function fn = {.function = power_gap, .params = ctx};
	gsl_root_fsolver_set(s, &fn, lo, hi);
	for (int it = 0; it < 200; it++) {
		gsl_root_fsolver_iterate(s);
		double a = gsl_root_fsolver_x_lower(s), b = gsl_root_fsolver_x_upper(s);
		if (gsl_root_test_interval(a, b, 0.0, 1e-13) == GSL_SUCCESS)
			break;
	}
	*out = gsl_root_fsolver_root(s);
free_solver:
	gsl_root_fsolver_free(s);
free_table:
	gsl_integration_glfixed_table_free(gl);
	return st;
}

pw_status pw_stats_power_t(double sigma, double delta, double n_per_arm, double alpha,
                           double *power)
{
	if (!(isfinite(sigma) && sigma > 0.0) || !isfinite(delta) || !(alpha > 0.0 && alpha < 1.0) ||
	    !power)
		return PW_ERR_INVALID;
	if (!(n_per_arm >= 2.0) || !isfinite(n_per_arm))
		return !(n_per_arm >= 2.0) ? PW_ERR_INSUFFICIENT : PW_ERR_INVALID;
	gsl_integration_glfixed_table *gl = gsl_integration_glfixed_table_alloc(NCT_NODES);
	if (!gl)
		return PW_ERR_NOMEM;
	*power = t_power(fabs(delta) / sigma, n_per_arm, alpha, gl);
	gsl_integration_glfixed_table_free(gl);
	return PW_OK;
}

pw_status pw_stats_power_n(double sigma, double delta, double alpha, double power, bool exact,
                           double *n_per_arm)
{
	pw_status st = power_check(sigma, alpha, power);
	if (st != PW_OK)
		return st;
	if (!(isfinite(delta) && delta > 0.0) || !n_per_arm)
		return PW_ERR_INVALID;
	double z = gsl_cdf_ugaussian_Pinv(1.0 - alpha / 2.0) + gsl_cdf_ugaussian_Pinv(power);
	if (!exact) {
		double r = sigma / delta;
		*n_per_arm = 2.0 * z * z * r * r;
		return PW_OK;
	}
	root_ctx ctx = {.d = delta / sigma, .alpha = alpha, .target = power, .solve_n = true};
	return exact_solve(&ctx, n_per_arm);
}

pw_status pw_stats_power_mde(double sigma, size_t n_per_arm, double alpha, double power,
                             bool exact, double *mde)
{
	pw_status st = power_check(sigma, alpha, power);
	if (st != PW_OK)
		return st;
	if (!mde)
		return PW_ERR_INVALID;
	if (n_per_arm < (exact ? 2u : 1u))
		return PW_ERR_INSUFFICIENT;
	double n = (double)n_per_arm;
	if (!exact) {
		double z = gsl_cdf_ugaussian_Pinv(1.0 - alpha / 2.0) + gsl_cdf_ugaussian_Pinv(power);
		*mde = z * sigma * sqrt(2.0 / n);
		return PW_OK;
	}
	root_ctx ctx = {.n = n, .alpha = alpha, .target = power, .solve_n = false};
	double d;
	st = exact_solve(&ctx, &d);
	if (st == PW_OK)
		*mde = d * sigma;
	return st;
}

/* ---- The two-sample verdict ---------------------------------------------- */

void pw_compare_opts_init(pw_compare_opts *opts)
{
	opts->direction = PW_COMPARE_LOWER_IS_BETTER;
	opts->mde_pct = 1.0;
	opts->alpha = 0.05;
	opts->hl_level = 0.95;
	opts->practical_pct = NAN;
	opts->noise_k = PW_COMPARE_NOISE_K;
}

const char *pw_compare_verdict_name(pw_compare_verdict v)
{
	switch (v) {
	case PW_COMPARE_REGRESSED:
		return "REGRESSED";
	case PW_COMPARE_IMPROVED:
		return "IMPROVED";
	default:
		return "UNCHANGED";
	}
}

/*
 * The compare workspace: scratch for medians and ranking (2·(nb + nc)), the
 * n_b·n_c differences of HL, then the exact table, filled once and read by
 * both Mann–Whitney and the Moses interval.
 */
size_t pw_stats_compare_work_len(size_t n_base, size_t n_cand)
{
	return 2 * (n_base + n_cand) + n_base * n_cand + exact_table_bound(n_base, n_cand);
}

pw_status pw_stats_compare(const double *base, size_t n_base, const double *cand,
                           size_t n_cand, const pw_compare_opts *opts, double *work,
                           pw_compare_result *out)
{
	pw_compare_opts defaults;
	if (!opts) {
		pw_compare_opts_init(&defaults);
		opts = &defaults;
	}
	pw_status st = check_sample(base, n_base, 1);
	if (st == PW_OK)
		st = check_sample(cand, n_cand, 1);
	if (st != PW_OK)
		return st;
	if (!out || !(opts->alpha > 0.0 && opts->alpha < 1.0) ||
	    !(isfinite(opts->mde_pct) && opts->mde_pct >= 0.0) ||
	    !(opts->hl_level > 0.0 && opts->hl_level < 1.0) ||
	    !(isnan(opts->practical_pct) ||
	      (isfinite(opts->practical_pct) && opts->practical_pct >= 0.0)) ||
	    !(isfinite(opts->noise_k) && opts->noise_k >= 0.0) ||
	    (opts->direction != PW_COMPARE_LOWER_IS_BETTER &&
	     opts->direction != PW_COMPARE_HIGHER_IS_BETTER))
		return PW_ERR_INVALID;

	double *own = NULL;
	if (!work) {
		own = malloc(pw_stats_compare_work_len(n_base, n_cand) * sizeof *own);
		if (!own)
			return PW_ERR_NOMEM;
		work = own;
	}
	memset(out, 0, sizeof *out);
	out->n_base = n_base;
	out->n_cand = n_cand;
	out->mde_pct = opts->mde_pct;
	out->alpha = opts->alpha;

	st = pw_stats_median_mad(base, n_base, work, &out->median_base, &out->mad_base);
	if (st == PW_OK)
		st = pw_stats_median_mad(cand, n_cand, work, &out->median_cand, &out->mad_cand);
	if (st != PW_OK)
		goto free_work;
	if (out->median_base == 0.0) {
		st = PW_ERR_INVALID; /* a relative change of a zero baseline means nothing */
		goto free_work;
	}
	double scale = fabs(out->median_base);
	out->delta_pct = (out->median_cand - out->median_base) / scale * 100.0;
	out->sigma_pct = out->mad_base / scale * 100.0;
	out->two_sigma_pct = 2.0 * out->sigma_pct;
	out->practical_pct = isnan(opts->practical_pct) ? PW_COMPARE_PRACTICAL_FRAC * opts->mde_pct
	                                                : opts->practical_pct;
	out->noise_floor_pct = opts->noise_k * out->sigma_pct *
	                       sqrt(1.0 / (double)n_base + 1.0 / (double)n_cand);
	out->threshold_pct = out->practical_pct > out->noise_floor_pct ? out->practical_pct
	                                                                : out->noise_floor_pct;

	double *diffs = work + 2 * (n_base + n_cand);
	size_t dlen = n_base * n_cand;
	const double *counts = NULL;
	if (hl_table_len(n_base, n_cand))
		counts = mwu_exact_counts(n_base, n_cand, dlen / 2, diffs + dlen);
	st = mwu_run(cand, n_cand, base, n_base, PW_ALT_TWO_SIDED, PW_MWU_AUTO, work, counts,
	             dlen / 2, NULL, 0, &out->mwu);
	if (st != PW_OK)
		goto free_work;
	out->p = out->mwu.p;

	pw_status wst = pw_stats_welch(cand, n_cand, base, n_base, PW_ALT_TWO_SIDED, &out->welch);
	out->welch_ok = wst == PW_OK;
	if (!out->welch_ok)
		out->welch.t = out->welch.df = out->welch.p = NAN;

	st = hl_run(base, n_base, cand, n_cand, opts->hl_level, diffs, counts, &out->hl);
	if (st != PW_OK)
		goto free_work;
	out->effect_pct = out->hl.shift / scale * 100.0;
	out->effect_filter_passed = fabs(out->effect_pct) > out->threshold_pct;

	out->verdict = PW_COMPARE_UNCHANGED;
	if (out->p < opts->alpha && out->effect_filter_passed) {
		bool worse = opts->direction == PW_COMPARE_LOWER_IS_BETTER ? out->effect_pct > 0.0
		                                                           : out->effect_pct < 0.0;
		out->verdict = worse ? PW_COMPARE_REGRESSED : PW_COMPARE_IMPROVED;
	}
free_work:
	free(own);
	return st;
}

int pw_compare_filter_text(char *buf, size_t len, const char *name, double value, double frac,
                           double practical_pct, double k, double noise_floor_pct)
{
	double thr = practical_pct > noise_floor_pct ? practical_pct : noise_floor_pct;
	return snprintf(buf, len, "%s=%+.2f%% %s max(%.2g*MDE=%.2f%%, %.2g*SE=%.2f%%)", name, value,
	                fabs(value) > thr ? ">" : "<=", frac, practical_pct, k, noise_floor_pct);
}

pw_status pw_stats_required_n(double sigma_pct, double mde_pct, double alpha, double power,
                              unsigned floor_n, unsigned *n)
{
	if (!isfinite(sigma_pct) || sigma_pct < 0.0 || !isfinite(mde_pct) || !(mde_pct > 0.0) ||
	    floor_n < 1 || floor_n > PW_POWER_MAX_N)
		return PW_ERR_INVALID;
	if (sigma_pct == 0.0) {
		*n = floor_n;
		return PW_OK;
	}
	double real;
	pw_status st = pw_stats_power_n(sigma_pct, mde_pct, alpha, power, false, &real);
	if (st != PW_OK)
		return st;
	/* a hair below an integer is that integer (21.01·(σ/Δ)² lands on them) */
	double up = ceil(real - 1e-9);
	if (!(up <= (double)PW_POWER_MAX_N))
		return PW_ERR_INVALID;
	*n = up > (double)floor_n ? (unsigned)up : floor_n;
	return PW_OK;
}

double pw_stats_series_mde(double tier_mde_pct, bool gpu, double gpu_mde_pct)
{
	return gpu && gpu_mde_pct > tier_mde_pct ? gpu_mde_pct : tier_mde_pct;
}

/* ---- Bisection over doubles ------------------------------------------------ */

/*
 * Order-preserving map of doubles onto 64-bit integers: a < b exactly when
 * ord_of(a) < ord_of(b) (−0 just below +0). Bisecting on it reaches adjacent
 * doubles in at most 64 steps whatever the magnitudes.
 */
static uint64_t ord_of(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return (u >> 63) ? ~u : u | 0x8000000000000000ULL;
}

static double of_ord(uint64_t u)
{
	u = (u >> 63) ? u & 0x7fffffffffffffffULL : ~u;
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

/*
 * For a predicate that holds at lo, fails at hi (lo < hi) and changes once in
 * between, the adjacent pair (*last_true, *first_false) where it changes.
 */
static void bisect_doubles(bool (*pred)(double, const void *), const void *ctx, double lo,
                           double hi, double *last_true, double *first_false)
{
	uint64_t a = ord_of(lo), b = ord_of(hi);
	while (b - a > 1) {
		uint64_t mid = a + (b - a) / 2;
		if (pred(of_ord(mid), ctx))
			a = mid;
		else
			b = mid;
	}
	*last_true = of_ord(a);
	*first_false = of_ord(b);
}

/* ---- Kayenta's fixed-horizon judge ----------------------------------------- */

typedef struct pairdiff_ctx {
	const double *xs, *ys; /* sorted ascending */
	size_t n1, n2;
	size_t k; /* 1-based rank of the difference sought */
} pairdiff_ctx;

/*
 * Whether fewer than k of the differences fl(xs[i] − ys[j]) are <= v. For a
 * fixed i they are non-increasing in j and, for a fixed j, non-decreasing in i
 * (rounding is monotone), so the j's with a difference <= v form a suffix
 * whose start only moves right as i grows: one merge, O(n1 + n2).
 */
static bool pairdiff_below_k(double v, const void *vctx)
{
	const pairdiff_ctx *c = vctx;
	size_t count = 0, j = 0;
	for (size_t i = 0; i < c->n1; i++) {
		while (j < c->n2 && c->xs[i] - c->ys[j] > v)
			j++;
		count += c->n2 - j;
		if (count >= c->k)
			return false;
	}
	return true;
}

/* The k-th smallest (1-based) of the n1·n2 differences xs[i] − ys[j]. */
static double pairdiff_kth(const double *xs, size_t n1, const double *ys, size_t n2, size_t k)
{
	pairdiff_ctx c = {xs, ys, n1, n2, k};
	double lo = xs[0] - ys[n2 - 1], hi = xs[n1 - 1] - ys[0];
	if (!pairdiff_below_k(lo, &c))
		return lo;
	double below, at;
	bisect_doubles(pairdiff_below_k, &c, lo, hi, &below, &at);
	return at; /* the smallest v with at least k differences <= v: one of them */
}

/* Median of all xs[i] − ys[j] (numpy's convention for an even count). */
static double pairdiff_median(const double *xs, size_t n1, const double *ys, size_t n2)
{
	size_t big_n = n1 * n2;
	if (big_n % 2 == 1)
		return pairdiff_kth(xs, n1, ys, n2, big_n / 2 + 1);
	return mid_of(pairdiff_kth(xs, n1, ys, n2, big_n / 2),
	              pairdiff_kth(xs, n1, ys, n2, big_n / 2 + 1));
}

/*
 * Kayenta's standardised statistic for the shift μ: (U1(x − μ) − n1n2/2 −
 * sign·½)/σ, the continuity correction taken towards 0 (MannWhitney.scala's
 * wilcoxonDiff). 0 when σ is 0.
 */
static double judge_z(const double *xs, size_t n1, double shift, const double *ys, size_t n2)
{
	double u1, ties;
	mwu_u_ties_sorted(xs, n1, shift, ys, n2, &u1, &ties);
	double s = mwu_sigma(n1, n2, ties);
	if (!(s > 0.0))
		return 0.0;
	double dz = u1 - (double)n1 * (double)n2 / 2.0;
	double corr = dz > 0.0 ? 0.5 : (dz < 0.0 ? -0.5 : 0.0);
	return (dz - corr) / s;
}

size_t pw_stats_mw_judge_work_len(size_t n_cand, size_t n_base)
{
	return n_cand + n_base;
}

static double mean_of(const double *x, size_t n)
{
	double m = 0.0;
	for (size_t i = 0; i < n; i++)
		m += (x[i] - m) / (double)(i + 1);
	return m;
}

pw_status pw_stats_mw_judge(const double *cand, size_t n_cand, const double *base,
                            size_t n_base, double conf_level, double tolerance, double *work,
                            size_t work_len, pw_mw_judge_result *out)
{
	pw_status st = check_sample(cand, n_cand, 1);
	if (st == PW_OK)
		st = check_sample(base, n_base, 1);
	if (st != PW_OK)
		return st;
	if (!out || !work || work_len < pw_stats_mw_judge_work_len(n_cand, n_base) ||
	    !(conf_level > 0.0 && conf_level < 1.0) || !(tolerance >= 0.0) || isinf(tolerance))
		return PW_ERR_INVALID;
	double *xs = work, *ys = work + n_cand;
	memcpy(xs, cand, n_cand * sizeof *xs);
	memcpy(ys, base, n_base * sizeof *ys);
	sort_doubles(xs, n_cand);
	sort_doubles(ys, n_base);

	double mc = mean_of(cand, n_cand), mb = mean_of(base, n_base);
	out->mean_ratio = mc == 0.0 || mb == 0.0 ? NAN : mc / mb;
	out->cls = PW_MW_JUDGE_PASS;
	out->shift = out->z_tol = NAN;
	out->z = judge_z(xs, n_cand, 0.0, ys, n_base);
	double zq = gsl_cdf_ugaussian_Qinv((1.0 - conf_level) / 2.0);
	if (!(fabs(out->z) > zq))
		return PW_OK; /* the interval holds 0 */
	out->shift = pairdiff_median(xs, n_cand, ys, n_base);
	double c = tolerance * fabs(out->shift);
	if (out->z > 0.0) {
		out->z_tol = judge_z(xs, n_cand, c, ys, n_base);
		if (out->z_tol > zq && (isnan(out->mean_ratio) || out->mean_ratio >= 1.0))
			out->cls = PW_MW_JUDGE_HIGH;
	} else {
		out->z_tol = judge_z(xs, n_cand, -c, ys, n_base);
		if (out->z_tol < -zq && (isnan(out->mean_ratio) || out->mean_ratio <= 1.0))
			out->cls = PW_MW_JUDGE_LOW;
	}
	return PW_OK;
}

const char *pw_mw_judge_class_name(pw_mw_judge_class c)
{
	switch (c) {
	case PW_MW_JUDGE_HIGH:
		return "HIGH";
	case PW_MW_JUDGE_LOW:
		return "LOW";
	default:
		return "PASS";
	}
}

/* ---- The canary's confidence sequence -------------------------------------- */

#define CS_ALPHA_MIN 1e-12

double pw_cs_boundary(double v, double rho, double alpha)
{
	if (!(v >= 0.0) || isinf(v) || !(rho > 0.0) || isinf(rho) || !(alpha >= CS_ALPHA_MIN) ||
	    !(alpha < 1.0))
		return NAN;
	/* log((v + ρ)/(ρα²)) without forming α² or (v + ρ)/ρ */
	return sqrt((v + rho) * (log1p(v / rho) - 2.0 * log(alpha)));
}

double pw_cs_rho(double v_opt, double alpha)
{
	if (!(v_opt > 0.0) || isinf(v_opt) || !(alpha >= CS_ALPHA_MIN) || !(alpha < 1.0))
		return NAN;
	/*
	 * u(v_opt)² = v_opt·x/(x − 1)·log(x/α²) with x = 1 + v_opt/ρ is least where
	 * log(x/α²) = x − 1, i.e. x·e^{−x} = α²/e: x = −W₋₁(−α²/e) > 1. The argument
	 * lies in (−1/e, 0) for these α, where GSL's W₋₁ reports no error.
	 */
	double x = -gsl_sf_lambert_Wm1(-alpha * alpha / M_E);
	return v_opt / (x - 1.0);
}

void pw_cs_opts_init(pw_cs_opts *opts)
{
	opts->direction = PW_COMPARE_LOWER_IS_BETTER;
	opts->alpha = 0.05;
	opts->mde_pct = 1.0;
	opts->tolerance_pct = NAN;
	opts->pilot_windows = 12;
	opts->huber_k = 1.5;
	opts->rho_windows = 96.0;
	opts->min_scale = 1e-4;
}

struct pw_cs {
	pw_cs_opts opts;
	double tau, mde;     /* the decision's bounds, worse-is-positive log units */
	size_t n_windows;    /* pairs added */
	double *pilot;       /* the pilot's d, pilot_windows of them */
	double *pilot_work;  /* the median's and MAD's workspace */
	double ref;          /* the pilot's median: tested d are stored as d − ref */
	double scale, clip, rho, log_alpha2;
	size_t n, cap;       /* tested windows and room */
	double *d;           /* tested d − ref, sorted ascending */
	double *p1, *p2;     /* prefix sums of d and d²: p[j] = Σ_{i<j} */
	pw_cs_result last;
};

/* S(x) and V(x) at x (in the stored, ref-shifted units). */
typedef struct cs_sv {
	double s, v;
} cs_sv;

/* First index in d[0..n) whose value is > v (strict: upper bound). */
static size_t first_above(const double *d, size_t n, double v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d[mid] > v)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* First index in d[0..n) whose value is >= v (lower bound). */
static size_t first_at_least(const double *d, size_t n, double v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d[mid] >= v)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * S(x) = Σ ψ(d_i − x) and V(x) = Σ ψ(d_i − x)² with ψ the clip at ±c, from
 * the sorted values and their prefix sums: the residuals below −c, inside
 * (−c, c) and at or above c are three index ranges. O(log n).
 */
static cs_sv cs_eval(const pw_cs *cs, double x)
{
	double c = cs->clip;
	size_t a = first_above(cs->d, cs->n, x - c);     /* d[0..a): residual <= −c */
	size_t b = first_at_least(cs->d, cs->n, x + c);  /* d[b..n): residual >= c */
	if (b < a)
		b = a; /* only when x ± c round onto one value */
	double n_in = (double)(b - a);
	double n_lo = (double)a, n_hi = (double)(cs->n - b);
	double s1 = cs->p1[b] - cs->p1[a], s2 = cs->p2[b] - cs->p2[a];
	double v_in = s2 - 2.0 * x * s1 + n_in * x * x; /* Σ (d − x)² over the inside */
	if (v_in < 0.0)
		v_in = 0.0;
	if (v_in > n_in * c * c)
		v_in = n_in * c * c;
	cs_sv r = {s1 - n_in * x + c * (n_hi - n_lo), v_in + c * c * (n_lo + n_hi)};
	return r;
}

/* log((n·c² + ρ)/(ρα²)): the mixture's logarithm at V's bound. */
static double cs_log_term(const pw_cs *cs)
{
	return log1p((double)cs->n * cs->clip * cs->clip / cs->rho) - cs->log_alpha2;
}

typedef struct cs_pred_ctx {
	const pw_cs *cs;
	double log_term;
} cs_pred_ctx;

/* S(x) > 0: holds left of the estimate. */
static bool cs_s_positive(double x, const void *vctx)
{
	const cs_pred_ctx *c = vctx;
	return cs_eval(c->cs, x).s > 0.0;
}

/* x is excluded on the left: S(x) > 0 and S(x)² >= L·(V(x) + ρ). */
static bool cs_excluded_left(double x, const void *vctx)
{
	const cs_pred_ctx *c = vctx;
	cs_sv r = cs_eval(c->cs, x);
	return r.s > 0.0 && r.s * r.s >= c->log_term * (r.v + c->cs->rho);
}

/* x is not excluded on the right: not (S(x) < 0 and S(x)² >= L·(V(x) + ρ)). */
static bool cs_kept_right(double x, const void *vctx)
{
	const cs_pred_ctx *c = vctx;
	cs_sv r = cs_eval(c->cs, x);
	return !(r.s < 0.0 && r.s * r.s >= c->log_term * (r.v + c->cs->rho));
}

static void cs_result_pilot(const pw_cs *cs, pw_cs_result *out)
{
	out->decision = PW_CS_INSUFFICIENT_DATA;
	out->n_windows = cs->n_windows;
	out->n_tested = cs->n;
	out->effect_pct = out->lo_pct = out->hi_pct = NAN;
	out->estimate = out->lo = out->hi = NAN;
	out->tolerance_pct = cs->opts.tolerance_pct;
	out->mde_pct = cs->opts.mde_pct;
	bool scaled = cs->n_windows >= cs->opts.pilot_windows;
	out->scale = scaled ? cs->scale : NAN;
	out->clip = scaled ? cs->clip : NAN;
	out->rho = scaled ? cs->rho : NAN;
}

/* The interval, estimate and decision over the tested windows (n >= 1). */
static void cs_solve(const pw_cs *cs, pw_cs_result *out)
{
	cs_result_pilot(cs, out);
	cs_pred_ctx ctx = {cs, cs_log_term(cs)};
	double c = cs->clip;
	double far_lo = cs->d[0] - c, far_hi = cs->d[cs->n - 1] + c;
	/* S = n·c at far_lo and −n·c at far_hi, constant beyond them */
	double s_pos, s_nonpos;
	bisect_doubles(cs_s_positive, &ctx, far_lo, far_hi, &s_pos, &s_nonpos);
	double est = s_nonpos;
	/*
	 * S(x)²/(V(x) + ρ) never decreases as x moves away from the estimate
	 * (docs/canary.md §3), so each side is excluded on a ray: one change of the
	 * predicate between the estimate and the far point, or none (unbounded).
	 */
	double lo = -INFINITY, hi = INFINITY, t, f;
	if (cs_excluded_left(far_lo, &ctx)) {
		bisect_doubles(cs_excluded_left, &ctx, far_lo, s_nonpos, &t, &f);
		lo = f; /* the smallest x kept */
	}
	if (!cs_kept_right(far_hi, &ctx)) {
		bisect_doubles(cs_kept_right, &ctx, s_pos, far_hi, &t, &f);
		hi = t; /* the largest x kept */
	}
	out->estimate = est + cs->ref;
	out->lo = lo + cs->ref;
	out->hi = hi + cs->ref;
	if (out->lo > cs->tau)
		out->decision = PW_CS_REGRESSION;
	else if (out->hi < cs->mde)
		out->decision = PW_CS_NO_REGRESSION;
	else
		out->decision = PW_CS_CONTINUE;
	/* back to the canary's relative change, 100·(canary/baseline − 1) */
	if (cs->opts.direction == PW_COMPARE_LOWER_IS_BETTER) {
		out->effect_pct = 100.0 * expm1(out->estimate);
		out->lo_pct = 100.0 * expm1(out->lo);
		out->hi_pct = 100.0 * expm1(out->hi);
	} else {
		out->effect_pct = 100.0 * expm1(-out->estimate);
		out->lo_pct = 100.0 * expm1(-out->hi);
		out->hi_pct = 100.0 * expm1(-out->lo);
	}
}

static bool cs_opts_ok(const pw_cs_opts *o)
{
	double tol = isnan(o->tolerance_pct) ? PW_CS_TOLERANCE_FRAC * o->mde_pct : o->tolerance_pct;
	return (o->direction == PW_COMPARE_LOWER_IS_BETTER ||
	        o->direction == PW_COMPARE_HIGHER_IS_BETTER) &&
	       o->alpha >= CS_ALPHA_MIN && o->alpha < 1.0 && o->mde_pct > 0.0 &&
	       isfinite(o->mde_pct) && tol >= 0.0 && tol < o->mde_pct && o->pilot_windows >= 2 &&
	       o->huber_k > 0.0 && isfinite(o->huber_k) && o->rho_windows > 0.0 &&
	       isfinite(o->rho_windows) && o->min_scale > 0.0 && isfinite(o->min_scale);
}

pw_status pw_cs_new(const pw_cs_opts *opts, pw_cs **out)
{
	if (!out)
		return PW_ERR_INVALID;
	*out = NULL;
	pw_cs_opts o;
	if (opts)
		o = *opts;
	else
		pw_cs_opts_init(&o);
	if (!cs_opts_ok(&o))
		return PW_ERR_INVALID;
	if (isnan(o.tolerance_pct))
		o.tolerance_pct = PW_CS_TOLERANCE_FRAC * o.mde_pct;
	pw_cs *cs = calloc(1, sizeof *cs);
	if (!cs)
		return PW_ERR_NOMEM;
	cs->opts = o;
	cs->tau = log1p(o.tolerance_pct / 100.0);
	cs->mde = log1p(o.mde_pct / 100.0);
	cs->log_alpha2 = 2.0 * log(o.alpha);
	cs->pilot = malloc(2 * o.pilot_windows * sizeof *cs->pilot);
	cs->p1 = malloc(sizeof *cs->p1);
	cs->p2 = malloc(sizeof *cs->p2);
	if (!cs->pilot || !cs->p1 || !cs->p2) {
		pw_cs_free(cs);
		return PW_ERR_NOMEM;
	}
	cs->pilot_work = cs->pilot + o.pilot_windows;
	cs->p1[0] = cs->p2[0] = 0.0;
	cs->scale = cs->clip = cs->rho = NAN;
	cs_result_pilot(cs, &cs->last);
	*out = cs;
	return PW_OK;
}

void pw_cs_free(pw_cs *cs)
{
	if (!cs)
		return;
	free(cs->pilot);
	free(cs->d);
	free(cs->p1);
	free(cs->p2);
	free(cs);
}

/* Room for one more tested window; the state is unchanged on failure. */
static pw_status cs_reserve(pw_cs *cs)
{
	if (cs->n < cs->cap)
		return PW_OK;
	size_t cap = cs->cap ? 2 * cs->cap : 64;
	double *d = realloc(cs->d, cap * sizeof *d);
	if (!d)
		return PW_ERR_NOMEM;
	cs->d = d;
	double *p1 = realloc(cs->p1, (cap + 1) * sizeof *p1);
	if (!p1)
		return PW_ERR_NOMEM;
	cs->p1 = p1;
	double *p2 = realloc(cs->p2, (cap + 1) * sizeof *p2);
	if (!p2)
		return PW_ERR_NOMEM;
	cs->p2 = p2;
	cs->cap = cap;
	return PW_OK;
}

/* Ends the pilot: the scale, the clip, ρ and the reference level. */
static void cs_end_pilot(pw_cs *cs)
{
	size_t n0 = cs->opts.pilot_windows;
	double med, mad;
	/* n0 >= 2 finite values: cannot fail */
	(void)pw_stats_median_mad(cs->pilot, n0, cs->pilot_work, &med, &mad);
	cs->ref = med;
	cs->scale = mad > cs->opts.min_scale ? mad : cs->opts.min_scale;
	cs->clip = cs->opts.huber_k * cs->scale;
	cs->rho = pw_cs_rho(cs->opts.rho_windows * cs->scale * cs->scale, cs->opts.alpha);
}

pw_status pw_cs_add(pw_cs *cs, double canary, double baseline, pw_cs_result *out)
{
	if (!cs || !isfinite(canary) || !isfinite(baseline) || !(canary > 0.0) ||
	    !(baseline > 0.0))
		return PW_ERR_INVALID;
	double d = log(canary) - log(baseline);
	if (cs->opts.direction == PW_COMPARE_HIGHER_IS_BETTER)
		d = -d;
	if (cs->n_windows < cs->opts.pilot_windows) {
		cs->pilot[cs->n_windows++] = d;
		if (cs->n_windows == cs->opts.pilot_windows)
			cs_end_pilot(cs);
		cs_result_pilot(cs, &cs->last);
	} else {
		pw_status st = cs_reserve(cs);
		if (st != PW_OK)
			return st;
		double v = d - cs->ref;
		size_t pos = first_above(cs->d, cs->n, v);
		memmove(cs->d + pos + 1, cs->d + pos, (cs->n - pos) * sizeof *cs->d);
		cs->d[pos] = v;
		cs->n++;
		cs->n_windows++;
		/* prefix sums from the insertion on: they depend on the sorted values only */
		for (size_t j = pos; j < cs->n; j++) {
			cs->p1[j + 1] = cs->p1[j] + cs->d[j];
			cs->p2[j + 1] = cs->p2[j] + cs->d[j] * cs->d[j];
		}
		cs_solve(cs, &cs->last);
	}
	if (out)
		*out = cs->last;
	return PW_OK;
}

void pw_cs_current(const pw_cs *cs, pw_cs_result *out)
{
	*out = cs->last;
}

const char *pw_cs_decision_name(pw_cs_decision d)
{
	switch (d) {
	case PW_CS_CONTINUE:
		return "CONTINUE";
	case PW_CS_REGRESSION:
		return "REGRESSION";
	case PW_CS_NO_REGRESSION:
		return "NO_REGRESSION";
	default:
		return "INSUFFICIENT_DATA";
	}
}
