#!/usr/bin/python3
"""gen_stats_reference.py: computes, with scipy and numpy, the reference values
that tests/unit/test_stats.c checks common/pw_stats.c against.

The C test quotes the numbers this script prints (each block names the call
that produced it), so that the expected values come from an implementation
independent of ours. Run: python3 tests/reference/gen_stats_reference.py
(written against Debian's python3-scipy 1.10 / numpy 1.24; if the python3 on
PATH lacks scipy, the script re-runs itself under /usr/bin/python3).
"""
import os
import sys

try:
    import numpy as np
    from scipy import optimize, stats
    from scipy.stats import _stats_py
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

import itertools
import math

# ---- Data sets (the C test holds the same literals) ----------------------
ODD = [3.1, 2.7, 5.9, 4.4, 1.2, 8.8, 6.5, 4.4, 0.3, 7.7, 2.2]
EVEN = [10.0, 12.5, 9.75, 11.0, 14.25, 10.5, 13.0, 9.0, 12.0, 30.0]
# scipy.stats.mannwhitneyu docs example (from Conover / Wikipedia): ages of
# male and female students; scipy quotes U1 = 17, exact two-sided p = 0.1111.
MALES = [19, 22, 16, 29, 24]
FEMALES = [20, 11, 17, 12]
X7 = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55]
Y6 = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29]
TIES_X = [1, 2, 2, 3, 3, 3, 4, 5]
TIES_Y = [2, 3, 4, 4, 5, 5, 6, 6, 7]
# Release-gate shape: 30 baseline runs, 5 candidate runs (ms), no ties.
BASE30 = [100.12, 99.87, 100.43, 99.65, 100.08, 100.31, 99.92, 100.55, 99.71, 100.19,
          99.96, 100.27, 99.83, 100.02, 100.38, 99.77, 100.14, 99.59, 100.47, 99.99,
          100.23, 99.88, 100.06, 100.35, 99.74, 100.11, 99.91, 100.29, 99.68, 100.04]
CAND5_SLOW = [103.21, 102.87, 103.44, 102.95, 103.12]
CAND5_SAME = [100.07, 99.85, 100.26, 99.97, 100.13]
# Large samples: exact is out (n > 50), so AUTO goes normal.
rng = np.random.default_rng(20261202)
BIG_X = [round(v, 2) for v in rng.normal(10.0, 1.0, 60)]
BIG_Y = [round(v, 2) for v in rng.normal(10.4, 1.0, 55)]
# Mid-sized, no ties (asserted): exact under our AUTO, not under scipy's.
MID_X = [round(v, 4) for v in rng.normal(5.0, 1.0, 20)]
MID_Y = [round(v, 4) for v in rng.normal(5.8, 1.0, 25)]
assert len(set(MID_X) | set(MID_Y)) == 45
# Benjamini & Hochberg (1995) §4.2 worked example: 15 p-values; at q = 0.05 the
# procedure rejects the four smallest.
BH95 = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459,
        0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000]
BH_UNSORTED = [0.04, 0.001, 0.5, 0.03, 0.2, 0.03, 0.9, 0.01]


def r(v):
    return repr(float(v))


def clist(name, xs):
    body = ", ".join(repr(float(v)) for v in xs)
    print(f"static const double {name}[{len(xs)}] = {{{body}}};")


def bh_scipy_algorithm(ps):
    """scipy 1.11's false_discovery_control(method='bh') (not in 1.10), as its source does it."""
    ps = np.asarray(ps, dtype=float)
    order = np.argsort(ps)
    s = ps[order]
    m = len(s)
    i = np.arange(1, m + 1)
    s = s * (m / i)
    s = np.minimum.accumulate(s[::-1])[::-1]
    out = np.empty(m)
    out[order] = s
    return np.clip(out, 0, 1)


def bh_brute(ps):
    """The definition, O(n²): q_i = min over p_j >= p_i of m·p_j/rank(p_j)."""
    m = len(ps)
    s = sorted(ps)
    out = []
    for p in ps:
        out.append(min(min(m * s[j] / (j + 1) for j in range(m) if s[j] >= p), 1.0))
    return np.array(out)


def exact_u_cdf(n1, n2):
    """P(U <= u) by enumerating every placement of the x ranks (brute force)."""
    counts = {}
    n = n1 + n2
    for xs in itertools.combinations(range(1, n + 1), n1):
        u = sum(xs) - n1 * (n1 + 1) // 2
        counts[u] = counts.get(u, 0) + 1
    total = math.comb(n, n1)
    cdf, c = [], 0
    for u in range(n1 * n2 + 1):
        c += counts.get(u, 0)
        cdf.append(c / total)
    return cdf


def moses(x, y, level):
    n1, n2 = len(x), len(y)
    cdf = exact_u_cdf(n1, n2)
    tail = (1 - level) / 2
    k = 0
    for u in range(n1 * n2 + 1):
        if cdf[u] > tail:
            break
        k = u + 1
    d = np.sort(np.subtract.outer(np.asarray(y, float), np.asarray(x, float)).ravel())
    kk = max(k, 1)
    achieved = 1 - 2 * cdf[kk - 1]
    return float(np.median(d)), d[kk - 1], d[len(d) - kk], achieved, kk


def t_power(d, n, alpha):
    df = 2 * n - 2
    c = stats.t.isf(alpha / 2, df)
    nc = d / math.sqrt(2 / n)
    # scipy 1.10's Boost nct raises floating-point flags even where its value is
    # fine (e.g. a lower tail of 0); silence numpy's report of them here only.
    with np.errstate(all="ignore"):
        return stats.nct.sf(c, df, nc) + stats.nct.cdf(-c, df, nc)


def main():
    print("/* data */")
    clist("BIG_X", BIG_X)
    clist("BIG_Y", BIG_Y)
    clist("MID_X", MID_X)
    clist("MID_Y", MID_Y)

    print("\n/* numpy.quantile(x, q) (default method 'linear' = Hyndman & Fan type 7) */")
    for name, xs in (("ODD", ODD), ("EVEN", EVEN)):
        print(f"{name} median {r(np.median(xs))}")
        for q in (0.0, 0.1, 0.25, 0.5, 0.9, 0.95, 1.0):
            print(f"{name} q={q} {r(np.quantile(xs, q))}")

    print("\n/* scipy.stats.median_abs_deviation(x, scale='normal'); numpy mean, var(ddof=1) */")
    for name, xs in (("ODD", ODD), ("EVEN", EVEN), ("BASE30", BASE30)):
        print(f"{name} mad_n {r(stats.median_abs_deviation(xs, scale='normal'))} "
              f"mean {r(np.mean(xs))} var {r(np.var(xs, ddof=1))}")

    print("\n/* scipy.stats.mannwhitneyu(x, y, alternative=ALT, method=METHOD) -> U1, p */")
    cases = [("MALES,FEMALES", MALES, FEMALES, "exact"),
             ("X7,Y6", X7, Y6, "exact"),
             ("X7,Y6", X7, Y6, "asymptotic"),
             ("TIES_X,TIES_Y", TIES_X, TIES_Y, "asymptotic"),
             ("CAND5_SLOW,BASE30", CAND5_SLOW, BASE30, "exact"),
             ("CAND5_SAME,BASE30", CAND5_SAME, BASE30, "exact"),
             ("MID_X,MID_Y", MID_X, MID_Y, "exact"),
             ("BIG_X,BIG_Y", BIG_X, BIG_Y, "asymptotic")]
    for name, x, y, method in cases:
        for alt in ("two-sided", "less", "greater"):
            res = stats.mannwhitneyu(x, y, alternative=alt, method=method)
            print(f"{name} {method} {alt}: U1 {r(res.statistic)} p {r(res.pvalue)}")
    res = stats.mannwhitneyu([5, 5, 5], [5, 5], method="asymptotic")
    print(f"all ties [5,5,5] vs [5,5]: U1 {r(res.statistic)} p {r(res.pvalue)}")

    print("\n/* scipy.stats.ttest_ind(x, y, equal_var=False, alternative=ALT);"
          " df from scipy's _unequal_var_ttest_denom */")
    for name, x, y in (("X7,Y6", X7, Y6), ("CAND5_SLOW,BASE30", CAND5_SLOW, BASE30),
                       ("TIES_X,TIES_Y", TIES_X, TIES_Y)):
        v1, v2 = np.var(x, ddof=1), np.var(y, ddof=1)
        df, _ = _stats_py._unequal_var_ttest_denom(v1, len(x), v2, len(y))
        for alt in ("two-sided", "less", "greater"):
            res = stats.ttest_ind(x, y, equal_var=False, alternative=alt)
            print(f"{name} {alt}: t {r(res.statistic)} df {r(df)} p {r(res.pvalue)}")

    print("\n/* Benjamini-Hochberg: scipy 1.11's false_discovery_control algorithm"
          " (absent from 1.10), checked against the O(n^2) definition */")
    for name, ps in (("BH95", BH95), ("BH_UNSORTED", BH_UNSORTED)):
        a, b = bh_scipy_algorithm(ps), bh_brute(ps)
        assert np.allclose(a, b, rtol=0, atol=1e-15), (a, b)
        print(f"{name} q: " + ", ".join(r(v) for v in a))
        print(f"{name} rejected at 0.05: {int(np.sum(a <= 0.05))}")

    print("\n/* Hodges-Lehmann shift (numpy median of y_j - x_i) and Moses interval"
          " from the brute-force exact U distribution */")
    for name, x, y, level in (("X7,Y6", X7, Y6, 0.95), ("MALES,FEMALES", MALES, FEMALES, 0.90),
                              ("MALES,FEMALES", MALES, FEMALES, 0.99)):
        shift, lo, hi, ach, k = moses(x, y, level)
        print(f"HL(x={name.split(',')[0]}, y={name.split(',')[1]}) level {level}: "
              f"shift {r(shift)} lo {r(lo)} hi {r(hi)} achieved {r(ach)} k {k}")

    print("\n/* power: n = 2(z_{1-a/2} + z_power)^2 (s/d)^2 with scipy.stats.norm.ppf;"
          " exact: scipy.stats.nct + scipy.optimize.brentq */")
    for s, d, a, pw in ((0.4, 1.0, 0.05, 0.9), (2.0, 1.0, 0.05, 0.9), (0.4, 3.0, 0.05, 0.9),
                        (1.0, 1.0, 0.01, 0.8)):
        z = stats.norm.ppf(1 - a / 2) + stats.norm.ppf(pw)
        n_norm = 2 * z * z * (s / d) ** 2
        f = lambda n: t_power(d / s, n, a) - pw  # noqa: E731
        lo, hi = 2.0, 4.0
        while f(hi) < 0:  # bracket the root by doubling (huge n overflows boost's nct)
            lo, hi = hi, 2 * hi
        n_exact = 2.0 if f(2.0) >= 0 else optimize.brentq(f, lo, hi, xtol=1e-12)
        print(f"sigma {s} delta {d} alpha {a} power {pw}: n_normal {r(n_norm)} "
              f"n_exact {r(n_exact)}")
    for s, n, a, pw in ((0.4, 5, 0.05, 0.9), (2.0, 6, 0.05, 0.9), (1.0, 30, 0.05, 0.8)):
        z = stats.norm.ppf(1 - a / 2) + stats.norm.ppf(pw)
        g = lambda dd: t_power(dd / s, n, a) - pw  # noqa: E731
        print(f"sigma {s} n {n} alpha {a} power {pw}: mde_normal {r(z * s * math.sqrt(2 / n))} "
              f"mde_exact {r(optimize.brentq(g, 1e-3 * s, 10 * s, xtol=1e-13))}")
    print(f"t power sigma 1 delta 1 n 10 alpha 0.05: {r(t_power(1.0, 10, 0.05))}")

    print("\n/* compare: median, MAD_n, mannwhitneyu(cand, base, method='exact') */")
    for name, c in (("CAND5_SLOW", CAND5_SLOW), ("CAND5_SAME", CAND5_SAME)):
        mb, mc = np.median(BASE30), np.median(c)
        mad = stats.median_abs_deviation(BASE30, scale="normal")
        p = stats.mannwhitneyu(c, BASE30, method="exact").pvalue
        print(f"{name}: median_base {r(mb)} median_cand {r(mc)} delta_pct "
              f"{r((mc - mb) / mb * 100)} sigma_pct {r(mad / mb * 100)} p {r(p)}")

    print("\n/* prediction t: t = (mean(y) - mean(x)) / (sd(x, ddof=1) * sqrt(1/m + 1/k)),"
          " df = m - 1; p = t.sf (greater), t.cdf (less), 2 t.sf(|t|) (two-sided) */")
    for name, x, yname, y in (("BASE30", BASE30, "CAND3_STEP", CAND3_STEP),
                              ("BASE30", BASE30, "CAND2_NEAR", CAND2_NEAR),
                              ("X7", X7, "Y1_LOW", Y1_LOW)):
        m, k = len(x), len(y)
        t = (np.mean(y) - np.mean(x)) / (np.std(x, ddof=1) * math.sqrt(1 / m + 1 / k))
        df = m - 1
        print(f"{name} vs {yname}: t {r(t)} df {df} p_greater {r(stats.t.sf(t, df))} "
              f"p_less {r(stats.t.cdf(t, df))} p_two {r(2 * stats.t.sf(abs(t), df))}")
    # the early rule's reference level and scale (pw_cp_early_shift)
    print(f"BASE30 median {r(np.median(BASE30))} mad_n "
          f"{r(stats.median_abs_deviation(BASE30, scale='normal'))}")

    print("\n/* noise floor (pw_stats_noise_floor): scale = 1 / (sqrt(2) * scipy.stats.norm.ppf(0.75));"
          " per build of >= 2 runs every pair |x_i - x_j| / numpy.median(build) (itertools.combinations);"
          " sigma_rel = scale * numpy.median(all pairs); level = numpy.median of the builds' medians */")
    scale = 1 / (math.sqrt(2) * stats.norm.ppf(0.75))
    print(f"scale {r(scale)}")
    pairs, meds, nv = [], [], 0
    for g in BUILDS:
        if len(g) < 2:
            continue
        med = np.median(g)
        meds.append(med)
        nv += len(g)
        pairs += [abs(a - b) / med for a, b in itertools.combinations(g, 2)]
    print(f"BUILDS: sigma_rel {r(scale * np.median(pairs))} level {r(np.median(meds))} "
          f"n_values {nv} n_groups {len(meds)} n_pairs {len(pairs)}")
    # normal noise: 40 builds of 6 runs at levels 8..12, relative sigma 0.004
    rng = np.random.default_rng(20261205)
    pairs = []
    for _ in range(40):
        lv = rng.uniform(8, 12)
        g = lv * (1 + 0.004 * rng.standard_normal(6))
        pairs += [abs(a - b) / np.median(g) for a, b in itertools.combinations(g, 2)]
    print(f"normal 40 x 6 at sigma 0.004: sigma_rel {r(scale * np.median(pairs))}")


# prediction-t samples: three nightlies after an 8.2% step on BASE30's level,
# two close to it, one point below X7
CAND3_STEP = [108.31, 108.02, 108.44]
CAND2_NEAR = [100.41, 100.22]
Y1_LOW = [0.61]

# noise floor: the runs of five builds of one series (a build of one run is
# left out; the fifth holds a slow host's run)
BUILDS = [[10.02, 9.97, 10.05], [10.41, 10.38], [9.61, 9.66, 9.58, 9.70, 9.63], [10.9],
          [10.12, 10.31, 10.08, 10.11]]

if __name__ == "__main__":
    main()
