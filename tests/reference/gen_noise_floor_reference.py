#!/usr/bin/python3
"""gen_noise_floor_reference.py: the reference values tests/unit/test_noise_floor.c
checks the baseliner's noise-floor derivation against (services/baseliner/
noise_floor.c over common/pw_stats.c's pw_stats_noise_floor).

The groups are formed here by the rule of docs/baseliner.md ("Noise floors,
re-derived"): the repeats of one run ("r:RUN"), the runs of one re-baseline
job on one build ("j:BUILD/JOB"); runs alone in their group are left out.
The floor is computed with numpy and scipy straight from its definition:
every pair of runs of a group, |x_i - x_j| / median(group), the median of
all pairs times 1 / (sqrt(2) * norm.ppf(0.75)), in percent; the level the
median of the groups' medians. Run: python3 tests/reference/gen_noise_floor_reference.py
(Debian's python3-scipy 1.10 / numpy 1.24; re-runs itself under
/usr/bin/python3 when the python3 on PATH lacks them).
"""
import os
import sys

try:
    import numpy as np
    from scipy.stats import norm
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

import itertools

# (run_id, build_id, rebaseline_job_id, value): the C test holds the same rows
ROWS = [
    ("nb-0601", "xla-nightly-0601", "", 100.9),
    ("rc-a", "xla-rc-1", "", 100.2), ("rc-a", "xla-rc-1", "", 99.8), ("rc-a", "xla-rc-1", "", 100.5),
    ("rc-b", "xla-rc-2", "", 101.0), ("rc-b", "xla-rc-2", "", 100.6),
    ("nb-0602", "xla-nightly-0602", "", 99.7),
    ("cf-c", "xla-nightly-0603", "", 99.1), ("cf-c", "xla-nightly-0603", "", 99.5),
    ("cf-c", "xla-nightly-0603", "", 99.3), ("cf-c", "xla-nightly-0603", "", 98.9),
    ("rc-d", "xla-rc-3", "", 102.3), ("rc-d", "xla-rc-3", "", 101.9), ("rc-d", "xla-rc-3", "", 102.8),
    ("rc-e", "xla-rc-4", "", 100.0), ("rc-e", "xla-rc-4", "", 100.4),
    # a re-baseline job: five runs of its own, one group
    ("rx-1", "xla-nightly-0603", "rb-fc7-1", 97.9), ("rx-2", "xla-nightly-0603", "rb-fc7-1", 98.3),
    ("rx-3", "xla-nightly-0603", "rb-fc7-1", 98.1), ("rx-4", "xla-nightly-0603", "rb-fc7-1", 98.6),
    ("rx-5", "xla-nightly-0603", "rb-fc7-1", 98.0),
]


def key(run, build, job):
    return f"j:{build}/{job}" if job else f"r:{run}"


def floor(groups):
    scale = 1.0 / (np.sqrt(2.0) * norm.ppf(0.75))
    pairs, meds, ns = [], [], 0
    for g in groups:
        if len(g) < 2:
            continue
        med = np.median(g)
        meds.append(med)
        ns += len(g)
        pairs += [abs(a - b) / med for a, b in itertools.combinations(g, 2)]
    return 100.0 * scale * np.median(pairs), np.median(meds), len(meds), ns, len(pairs)


def main():
    groups = {}
    for run, build, job, v in ROWS:
        groups.setdefault(key(run, build, job), []).append(v)
    f, lv, ng, ns, npairs = floor(list(groups.values()))
    print(f"ROWS: floor_pct {f!r} level {lv!r} n_groups {ng} n_samples {ns} n_pairs {npairs}")
    # the same rows with the job ignored (each rx run alone): what grouping by
    # run alone would give
    g2 = {}
    for run, build, job, v in ROWS:
        g2.setdefault(f"r:{run}", []).append(v)
    f2, _, ng2, ns2, _ = floor(list(g2.values()))
    print(f"ROWS by run only: floor_pct {f2!r} n_groups {ng2} n_samples {ns2}")
    # normal noise: 12 runs of 4 repeats at levels 95..105, relative sigma 0.5%;
    # the values printed to 6 decimals are the C test's NORMAL12
    rng = np.random.default_rng(20261205)
    vals = []
    for _ in range(12):
        lv = rng.uniform(95, 105)
        vals.append([round(x, 6) for x in lv * (1 + 0.005 * rng.standard_normal(4))])
    print("NORMAL12 =", vals)
    f3, lv3, ng3, ns3, np3 = floor(vals)
    print(f"NORMAL12: floor_pct {f3!r} level {lv3!r} n_groups {ng3} n_samples {ns3} n_pairs {np3}")


if __name__ == "__main__":
    main()
