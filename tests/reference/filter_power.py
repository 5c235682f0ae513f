#!/usr/bin/python3
"""filter_power.py: the power the effect filter's 0.7 buys, computed with
numpy and scipy, independently of common/pw_stats.c.

The gate's test of one series (pw_stats_compare, docs/statistics.md §4/§6):
fire when the two-sided Mann-Whitney p of candidate against baseline is below
alpha AND

    |effect| > max(0.7*MDE, 2*SE),  SE = sigma*sqrt(1/n_base + 1/n_cand)

with effect the Hodges-Lehmann shift (median of all cand_j - base_i) in
percent of the baseline median and sigma = MAD_n(base)/median(base) in
percent. At the seed's figures (§4.1 sigma = 0.4% on TPU, §4.3a/§4.5 a
30-run baseline against 5 candidate repeats, top-tier MDE 1%, alpha 0.05)
this prints
  1. the analytic figure: the HL estimate is asymptotically normal with sd
     sigma*sqrt(pi/3*(1/n_base + 1/n_cand)) (Hollander & Wolfe; 3/pi is the
     rank test's efficiency), so a threshold T passes a true shift D with
     probability Phi((D - T)/sd);
  2. a Monte Carlo of the whole rule (scipy.stats.mannwhitneyu exact, numpy
     HL and MAD) at true shifts 1.0% (the MDE) and 0.3% (the §4.3a wiggle),
     for the fraction 0.7 and for 1.0 (the filter at the MDE itself);
  3. the same Monte Carlo at n_cand = 6 against the 4% MDE of a GPU series
     with sigma 2% (§4.5: GPU benchmarks certify 4%).
tests/unit/test_stats.c quotes these numbers (stats_compare, filter_power).
Run: python3 tests/reference/filter_power.py  (about a minute).
"""
import os
import sys

try:
    import numpy as np
    from scipy import stats
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

MAD_SCALE = 1.482602218505602


def analytic(sigma, n_base, n_cand, frac, mde, shift):
    sd = sigma * np.sqrt(np.pi / 3 * (1 / n_base + 1 / n_cand))
    return stats.norm.sf((frac * mde - shift) / sd), sd


def monte_carlo(sigma, n_base, n_cand, frac, mde, shift, alpha=0.05, k=2.0, trials=40000, seed=7):
    rng = np.random.default_rng(seed)
    fired = 0
    for _ in range(trials):
        base = 100.0 * (1 + sigma / 100 * rng.standard_normal(n_base))
        cand = 100.0 * (1 + shift / 100) * (1 + sigma / 100 * rng.standard_normal(n_cand))
        med = np.median(base)
        hl = np.median(np.subtract.outer(cand, base))
        effect = hl / abs(med) * 100
        s = MAD_SCALE * np.median(np.abs(base - med)) / abs(med) * 100
        thr = max(frac * mde, k * s * np.sqrt(1 / n_base + 1 / n_cand))
        if abs(effect) <= thr:
            continue
        p = stats.mannwhitneyu(cand, base, alternative="two-sided", method="exact").pvalue
        fired += p < alpha
    return fired / trials


def main():
    print("# analytic (normal HL): P(effect > frac*MDE | true shift)")
    for frac in (0.7, 1.0):
        for shift in (1.0, 0.3):
            p, sd = analytic(0.4, 30, 5, frac, 1.0, shift)
            print(f"sigma 0.4% 30x5 frac {frac} shift {shift}%: {p:.4f} (sd of HL {sd:.4f}%)")
    print("# Monte Carlo of the whole rule, 40,000 trials a point (numpy seed 7)")
    for frac in (0.7, 1.0):
        for shift in (1.0, 0.3):
            print(f"sigma 0.4% 30x5 MDE 1% frac {frac} shift {shift}%: "
                  f"{monte_carlo(0.4, 30, 5, frac, 1.0, shift):.4f}")
    print(f"sigma 2% 30x6 MDE 4% frac 0.7 shift 4%: {monte_carlo(2.0, 30, 6, 0.7, 4.0, 4.0):.4f}")


if __name__ == "__main__":
    main()
