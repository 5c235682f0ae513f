"""run_peer.py: one peer's changepoints over the benchmark's series, in process.

Run by bench/peers/peers.py with a peer's own venv interpreter:
    run_peer.py PEER DATA.json
PEER is otava, ruptures or spa. Prints one JSON object: the peer's version,
the seconds its calls took (time.perf_counter around the calls alone: no
import, no file reading), and each series' changepoints as the index of the
first point of the new segment. Each peer runs with its documented defaults
or the setting its documentation recommends; docs/changepoints.md ("Peers")
says which.
"""
import json
import sys
import time
from importlib import metadata


def otava_fn():
    # Otava's default analysis (otava.series.AnalysisOptions): the windowed
    # E-divisive of Hunter (Fleming et al. 2023) with window_len 50,
    # max_pvalue 0.001, min_magnitude 0.0.
    from otava.analysis import compute_change_points

    def run(x):
        cps, _ = compute_change_points(list(x), window_len=50, max_pvalue=0.001,
                                       min_magnitude=0.0)
        return [int(c.index) for c in cps]
    return run, metadata.version("apache-otava")


def ruptures_fn():
    # PELT with its default model ("l2") and defaults (min_size 2, jump 5);
    # penalty: the BIC of a mean shift with known variance its author gives,
    # pen = sigma^2 * log(n) * dim (ruptures issue #4, the Binseg/Pelt user
    # guide), sigma estimated from the data: MAD of the first differences
    # (normal-consistent, 1.4826) / sqrt(2).
    import numpy as np
    import ruptures as rpt

    def run(x):
        a = np.asarray(x, dtype=float)
        d = np.diff(a)
        sigma = 1.482602218505602 * np.median(np.abs(d - np.median(d))) / np.sqrt(2.0)
        pen = max(sigma * sigma, 1e-12) * np.log(len(a)) * 1
        bkps = rpt.Pelt(model="l2").fit(a).predict(pen=pen)
        return [int(b) for b in bkps[:-1]]
    return run, metadata.version("ruptures")


def spa_fn():
    # MongoDB's E-divisive with its defaults (pvalue 0.05, permutations 100);
    # its permutations use numpy's global generator, seeded per series the
    # way its determinism helper does, so that two runs agree.
    import numpy as np
    from signal_processing_algorithms.determinism import deterministic_numpy_random
    from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive

    def run(x):
        with deterministic_numpy_random(1234):
            return sorted(int(c) for c in e_divisive(np.asarray(x, dtype=float)))
    return run, metadata.version("signal-processing-algorithms")


PEERS = {"otava": otava_fn, "ruptures": ruptures_fn, "spa": spa_fn}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in PEERS:
        sys.exit("usage: run_peer.py otava|ruptures|spa DATA.json")
    run, version = PEERS[sys.argv[1]]()
    with open(sys.argv[2]) as f:
        data = json.load(f)
    found = {}
    t0 = time.perf_counter()
    for s in data["series"]:
        found[s["name"]] = run(s["x"])
    elapsed = time.perf_counter() - t0
    json.dump({"peer": sys.argv[1], "version": version, "seconds": elapsed, "found": found},
              sys.stdout)


if __name__ == "__main__":
    main()
