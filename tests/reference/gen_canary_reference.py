#!/usr/bin/python3
"""gen_canary_reference.py: computes, with scipy and numpy, the reference values
that tests/unit/test_canary_cs.c checks the canary's confidence sequence
(pw_cs_* in common/pw_stats.c) and Kayenta's judge (pw_stats_mw_judge) against.

Independence: nothing here calls or mirrors the C code's algorithms.
- The normal-mixture boundary is found by integrating the mixture
  (scipy.integrate.quad over lambda ~ N(0, 1/rho)) and solving
  M(s) = 1/alpha with scipy.optimize.brentq, not from the closed form; the
  closed form is printed beside it and must agree.
- rho is computed with scipy.special.lambertw and, separately, by minimising the
  boundary over rho with scipy.optimize.minimize_scalar.
- The confidence sequence is recomputed from its definition (direct numpy sums
  of the clipped residuals, brentq for every root), where the C code keeps the
  windows sorted with prefix sums and bisects over the doubles' bit patterns.
- Kayenta's judge: scipy.stats.mannwhitneyu (asymptotic, continuity corrected)
  for z, numpy's median of all pairwise differences for the shift, and a port
  of Kayenta's interval root finding (MannWhitney.scala: wilcoxonDiff solved by
  brentq) for the interval the class is defined on.

Run: python3 tests/reference/gen_canary_reference.py (written against Debian's
python3-scipy 1.10 / numpy 1.24; if the python3 on PATH lacks scipy, the
script re-runs itself under /usr/bin/python3).
"""
import os
import sys

try:
    import numpy as np
    from scipy import integrate, optimize, special, stats
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

import math


def r(v):
    return repr(float(v))


# ---- 1. The two-sided normal-mixture boundary --------------------------------
def mixture(s, v, rho):
    """M(s) = E_lambda[exp(lambda s - lambda^2 v / 2)], lambda ~ N(0, 1/rho)."""
    sd = 1.0 / math.sqrt(rho)
    f = lambda lam: math.exp(lam * s - lam * lam * v / 2.0) * stats.norm.pdf(lam, 0.0, sd)  # noqa: E731
    # the integrand peaks at lam = s/(v + rho); integrate around it
    centre = s / (v + rho)
    width = 40.0 / math.sqrt(v + rho)
    val, _ = integrate.quad(f, centre - width, centre + width, epsabs=0, epsrel=1e-13, limit=400)
    return val


def boundary_numeric(v, rho, alpha):
    g = lambda s: math.log(mixture(s, v, rho)) + math.log(alpha)  # noqa: E731
    hi = 1.0
    while g(hi) < 0:
        hi *= 2.0
    return optimize.brentq(g, 0.0, hi, xtol=1e-14, rtol=1e-15)


def boundary_closed(v, rho, alpha):
    return math.sqrt((v + rho) * math.log((v + rho) / (rho * alpha * alpha)))


BOUNDARY_CASES = [(1.0, 1.0, 0.05), (10.0, 1.0, 0.05), (100.0, 10.0, 0.05),
                  (96.0, 13.947, 0.05), (576.0, 13.947, 0.05), (50.0, 2.0, 0.01),
                  (0.0, 3.0, 0.1), (1e4, 25.0, 0.05)]


def rho_lambert(v_opt, alpha):
    x = -special.lambertw(-alpha * alpha / math.e, k=-1).real
    return v_opt / (x - 1.0)


def rho_minimised(v_opt, alpha):
    res = optimize.minimize_scalar(lambda lr: boundary_closed(v_opt, math.exp(lr), alpha),
                                   bounds=(math.log(v_opt) - 10, math.log(v_opt) + 10),
                                   method="bounded", options={"xatol": 1e-12})
    return math.exp(res.x)


# ---- 2. The confidence sequence from its definition ----------------------------
MAD_SCALE = 1.0 / stats.norm.ppf(0.75)


def cs_reference(d_all, pilot, k, rho_windows, alpha, min_scale=1e-4):
    """Yields (t, estimate, lo, hi) after every tested window, log units."""
    d_all = np.asarray(d_all, dtype=float)
    p = d_all[:pilot]
    med = float(np.median(p))
    s = max(float(stats.median_abs_deviation(p, scale="normal")), min_scale)
    c = k * s
    rho = rho_lambert(rho_windows * s * s, alpha)
    out = []
    for t in range(pilot + 1, len(d_all) + 1):
        d = d_all[pilot:t]
        n = len(d)

        def S(mu):
            return float(np.sum(np.clip(d - mu, -c, c)))

        def V(mu):
            return float(np.sum(np.clip(d - mu, -c, c) ** 2))

        L = math.log((n * c * c + rho) / (rho * alpha * alpha))
        a, b = float(d.min()) - c, float(d.max()) + c
        est = optimize.brentq(S, a, b, xtol=1e-16, rtol=1e-15, maxiter=500)
        g = lambda mu: S(mu) ** 2 - L * (V(mu) + rho)  # noqa: E731
        lo = optimize.brentq(g, a, est, xtol=1e-16, rtol=1e-15, maxiter=500) if g(a) > 0 else -math.inf
        hi = optimize.brentq(g, est, b, xtol=1e-16, rtol=1e-15, maxiter=500) if g(b) > 0 else math.inf
        out.append((t, est, lo, hi))
    return med, s, c, rho, out


# The windows: (canary, baseline) TPOT medians in ms, 12 pilot windows and 48
# tested ones, a +1% regression in 0.6% per-arm noise with three wild windows
# (a noisy neighbour on one arm), drawn by numpy default_rng(20270301) and
# rounded to 4 decimals; the C test holds the same literals.
rng = np.random.default_rng(20270301)
N_WIN = 60
load = 1.0 + 0.25 * np.sin(2 * np.pi * np.arange(N_WIN) / 288.0 * 6)
BASE = np.round(3.9 * load * np.exp(rng.normal(0, 0.006, N_WIN)), 4)
CANARY = np.round(3.9 * load * 1.01 * np.exp(rng.normal(0, 0.006, N_WIN)), 4)
for w, f in ((17, 1.35), (18, 1.22), (41, 0.7)):  # one arm hit (canary twice, baseline once)
    if f > 1:
        CANARY[w] = round(CANARY[w] * f, 4)
    else:
        BASE[w] = round(BASE[w] / f, 4)


# ---- 3. Kayenta's judge ----------------------------------------------------------
def kayenta_interval(x, y, conf):
    """Port of MannWhitney.calculateConfidenceInterval (x = experiment)."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    nx, ny = len(x), len(y)

    def wdiff(mu, q):
        pooled = np.concatenate([x - mu, y])
        ranks = stats.rankdata(pooled)
        _, counts = np.unique(pooled, return_counts=True)
        dz = ranks[:nx].sum() - nx * (nx + 1) / 2 - nx * ny / 2
        corr = np.sign(dz) * 0.5
        sigma = math.sqrt(nx * ny / 12 * ((nx + ny + 1) - (counts ** 3 - counts).sum()
                                          / ((nx + ny) * (nx + ny - 1))))
        return (dz - corr) / sigma - q

    mu_min, mu_max = x.min() - y.max(), x.max() - y.min()
    zq = stats.norm.ppf((1 - conf) / 2)

    def root(q):
        f_lo, f_hi = wdiff(mu_min, q), wdiff(mu_max, q)
        if f_lo <= 0:
            return mu_min
        if f_hi >= 0:
            return mu_max
        return optimize.brentq(lambda m: wdiff(m, q), mu_min, mu_max, xtol=1e-12)

    return root(-zq), root(zq), root(0.0)


def kayenta_class(x, y, conf=0.98, tol=0.25):
    lo, hi, est = kayenta_interval(x, y, conf)
    crit = tol * abs(est)
    ratio = np.mean(x) / np.mean(y)
    if lo > crit and ratio >= 1.0:
        return "HIGH", lo, hi, est
    if hi < -crit and ratio <= 1.0:
        return "LOW", lo, hi, est
    return "PASS", lo, hi, est


def judge_z(x, y, shift):
    """Kayenta's z at a shift from scipy's asymptotic Mann-Whitney p-values."""
    x = np.asarray(x, float) - shift
    g = stats.mannwhitneyu(x, y, alternative="greater", method="asymptotic")
    u1 = g.statistic
    if u1 > len(x) * len(y) / 2:
        return stats.norm.isf(g.pvalue)  # (U1 - mn/2 - 1/2)/sigma
    lsr = stats.mannwhitneyu(x, y, alternative="less", method="asymptotic")
    return -stats.norm.isf(lsr.pvalue) if u1 < len(x) * len(y) / 2 else 0.0


# Judge samples: a clear +3% shift (HIGH), a shift the 25% tolerance absorbs
# (the interval excludes 0 but not 0.25 of the estimate), and a -2% shift (LOW).
jr = np.random.default_rng(20270302)
J_BASE = np.round(100 * np.exp(jr.normal(0, 0.01, 40)), 3)
J_HIGH = np.round(103 * np.exp(jr.normal(0, 0.01, 40)), 3)
J_EDGE = np.round(100.45 * np.exp(jr.normal(0, 0.01, 40)), 3)
J_LOW = np.round(98 * np.exp(jr.normal(0, 0.01, 40)), 3)


def main():
    print("/* normal-mixture boundary u(v, rho, alpha): brentq on the quad-integrated"
          " mixture = 1/alpha (closed form beside it) */")
    for v, rho, a in BOUNDARY_CASES:
        num, closed = boundary_numeric(v, rho, a), boundary_closed(v, rho, a)
        assert abs(num - closed) <= 1e-9 * closed, (v, rho, a, num, closed)
        print(f"v {v} rho {rho} alpha {a}: numeric {r(num)} closed {r(closed)}")

    print("\n/* rho tightest at v_opt: scipy.special.lambertw(k=-1) and"
          " minimize_scalar over rho */")
    for v_opt, a in ((96.0, 0.05), (1.0, 0.05), (300.0, 0.01), (0.0081, 0.05)):
        la, mi = rho_lambert(v_opt, a), rho_minimised(v_opt, a)
        assert abs(la - mi) <= 1e-5 * la, (la, mi)
        print(f"v_opt {v_opt} alpha {a}: rho_lambertw {r(la)} rho_minimised {r(mi)}")

    print("\n/* the confidence sequence of the CANARY/BASE windows: pilot 12, k 1.5,"
          " rho_windows 96, alpha 0.05 (direct numpy sums, brentq) */")
    d = np.log(CANARY) - np.log(BASE)
    med, s, c, rho, seq = cs_reference(d, 12, 1.5, 96.0, 0.05)
    print(f"pilot median {r(med)} scale {r(s)} clip {r(c)} rho {r(rho)}")
    tau, mde = math.log1p(0.005), math.log1p(0.01)
    letters = ""
    for t, est, lo, hi in seq:
        dec = "REGRESSION" if lo > tau else ("NO_REGRESSION" if hi < mde else "CONTINUE")
        letters += dec[0]
        if t in (13, 20, 24, 28, 30, 36, 40, 48, 60):
            print(f"t {t}: est {r(est)} lo {r(lo)} hi {r(hi)} {dec}")
    print(f"decisions t 13..60 (C CONTINUE, R REGRESSION, N NO_REGRESSION): {letters}")
    print("/* the same windows as goodput (higher is better): d = log(base/canary) */")
    med, s, c, rho, seq = cs_reference(-d, 12, 1.5, 96.0, 0.05)
    for t, est, lo, hi in seq:
        if t in (30, 60):
            print(f"t {t}: est {r(est)} lo {r(lo)} hi {r(hi)}")
    print("/* tighter: alpha 0.01, k 1.0, rho_windows 24, pilot 8 */")
    med, s, c, rho, seq = cs_reference(d, 8, 1.0, 24.0, 0.01)
    print(f"scale {r(s)} clip {r(c)} rho {r(rho)}")
    for t, est, lo, hi in seq:
        if t in (20, 60):
            print(f"t {t}: est {r(est)} lo {r(lo)} hi {r(hi)}")

    print("\n/* Kayenta's judge (conf 0.98, tolerance 0.25): z from scipy mannwhitneyu,"
          " shift = numpy median of pairwise differences, class from the ported"
          " interval */")
    for name, x in (("J_HIGH", J_HIGH), ("J_EDGE", J_EDGE), ("J_LOW", J_LOW),
                    ("J_BASE", J_BASE)):
        cls, lo, hi, est = kayenta_class(x, J_BASE)
        hl = float(np.median(np.subtract.outer(x, J_BASE)))
        z0 = judge_z(x, J_BASE, 0.0)
        ztol = judge_z(x, J_BASE, 0.25 * abs(hl) * (1 if z0 > 0 else -1))
        print(f"{name} vs J_BASE: class {cls} z {r(z0)} shift {r(hl)} z_tol {r(ztol)} "
              f"kayenta lo {r(lo)} hi {r(hi)} est {r(est)} mean_ratio "
              f"{r(np.mean(x) / np.mean(J_BASE))}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--literals":
        fmt = lambda a: ", ".join(repr(float(v)) for v in a)  # noqa: E731
        for name, a in (("CANARY", CANARY), ("BASE", BASE), ("J_BASE", J_BASE),
                        ("J_HIGH", J_HIGH), ("J_EDGE", J_EDGE), ("J_LOW", J_LOW)):
            print(f"static const double {name}[{len(a)}] = {{{fmt(a)}}};")
    else:
        main()
