"""peers.py: perfwatch's changepoints beside three peers from PyPI, same series, same run.

    peers.py --perfwatch BUILD/tools/perfwatch --otava-python PY --spa-python PY [options]

Generates seeded series (Python's own random module, so that every tool sees
the same numbers whatever its numpy), writes them once as JSON for the peers
and once as the CSV of `perfwatch changepoints --by-series`, then runs:

  perfwatch   one `perfwatch changepoints --by-series` process over all
              series; its time is the process's wall time, start and CSV
              parsing included
  otava       apache-otava's default analysis, in process    (the otava venv)
  ruptures    ruptures PELT, l2 cost, BIC penalty, in process (the otava venv)
  spa         MongoDB's e_divisive, in process                (the spa venv)

and prints one table: series per second (all series), false changepoints per
1,000 points on flat series, recall and precision on stepped series (a
detection within ±K points of a true step, matched one to one), and each
figure as a ratio against perfwatch's. Every line perfwatch prints counts as
a finding, a drift as much as a step. The series:

  flat     level 100 and one of the noise shapes below
  stepped  the same noise, 1 to 3 steps of ±3 to ±6 % (3 to 6 noise units),
           at least 40 points apart and from either end

  noise shapes (scale about 1 % of the level, as in the benchmark data)
    normal    N(0, 1)
    t3        Student's t with 3 degrees of freedom × 0.6 (heavy tails)
    outliers  N(0, 1), and 2 % of the points +15 to +40 (slow runs)
    skewed    Exp(1) − 1 (timing noise: a floor and a right tail)
    bimodal   N(0, 0.5), plus 2 on 30 % of the points (two modes)
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import time

SHAPES = ("normal", "t3", "outliers", "skewed", "bimodal")
PEERS = (("otava", "Otava (apache-otava)"), ("ruptures", "ruptures PELT"),
         ("spa", "MongoDB E-divisive (signal-processing-algorithms)"))


def noise(rng, shape):
    if shape == "normal":
        return rng.gauss(0.0, 1.0)
    if shape == "t3":
        chi2 = sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(3))
        return 0.6 * rng.gauss(0.0, 1.0) / math.sqrt(chi2 / 3.0)
    if shape == "outliers":
        e = rng.gauss(0.0, 1.0)
        return e + rng.uniform(15.0, 40.0) if rng.random() < 0.02 else e
    if shape == "skewed":
        return rng.expovariate(1.0) - 1.0
    if shape == "bimodal":
        return rng.gauss(0.0, 0.5) + (2.0 if rng.random() < 0.3 else 0.0)
    raise ValueError(shape)


def make_series(seed, per_shape, n):
    rng = random.Random(seed)
    out = []
    for shape in SHAPES:
        for i in range(per_shape):
            out.append({"name": f"flat_{shape}_{i}", "kind": "flat", "shape": shape, "truth": [],
                        "x": [100.0 + noise(rng, shape) for _ in range(n)]})
        for i in range(per_shape):
            k = rng.randint(1, 3)
            while True:
                at = sorted(rng.randint(40, n - 40) for _ in range(k))
                if all(b - a >= 40 for a, b in zip(at, at[1:])):
                    break
            level, x = 100.0, []
            for t in range(n):
                if t in at:
                    level += rng.choice((-1.0, 1.0)) * rng.uniform(3.0, 6.0)
                x.append(level + noise(rng, shape))
            out.append({"name": f"step_{shape}_{i}", "kind": "step", "shape": shape,
                        "truth": at, "x": x})
    return out


def matched(truth, found, k):
    """True steps with a detection within ±k, each detection used once."""
    used, hits = set(), 0
    for t in truth:
        best = None
        for j, f in enumerate(found):
            if j not in used and abs(f - t) <= k and (best is None or
                                                       abs(f - t) < abs(found[best] - t)):
                best = j
        if best is not None:
            used.add(best)
            hits += 1
    return hits


def score(series, found, seconds, k):
    flat_pts = flat_cps = truths = hits = dets = 0
    for s in series:
        f = found.get(s["name"], [])
        if s["kind"] == "flat":
            flat_pts += len(s["x"])
            flat_cps += len(f)
        else:
            truths += len(s["truth"])
            dets += len(f)
            hits += matched(s["truth"], f, k)
    return {"series_per_s": len(series) / seconds, "seconds": seconds,
            "fp_per_1000": 1000.0 * flat_cps / flat_pts, "flat_cps": flat_cps,
            "recall": hits / truths if truths else float("nan"),
            "precision": hits / dets if dets else float("nan"), "hits": hits,
            "truths": truths, "dets": dets}


def run_perfwatch(exe, csv_path, series):
    t0 = time.perf_counter()
    p = subprocess.run([exe, "changepoints", "--by-series", csv_path], capture_output=True,
                       text=True)
    seconds = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"peers: perfwatch failed ({p.returncode}): {p.stderr.strip()}")
    found = {s["name"]: [] for s in series}
    for line in p.stdout.splitlines():
        o = json.loads(line)
        found[o["series"]].append(int(o["index"]))
    return found, seconds


def run_peer(python, peer, data_path):
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.run([python, os.path.join(here, "run_peer.py"), peer, data_path],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"peers: {peer} failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    o = json.loads(p.stdout)
    return {k: v for k, v in o["found"].items()}, o["seconds"], o["version"]


def ratio(a, b):
    if b == 0 or math.isnan(a) or math.isnan(b):
        return "–" if a == b == 0 else ("∞" if a > 0 and b == 0 else "–")
    return f"{a / b:.3g}×"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--perfwatch", required=True)
    ap.add_argument("--otava-python", required=True)
    ap.add_argument("--spa-python", required=True)
    ap.add_argument("--work", default="run/peers/data")
    ap.add_argument("--per-shape", type=int, default=40,
                    help="flat and stepped series per noise shape (default 40)")
    ap.add_argument("--points", type=int, default=400, help="points a series (default 400)")
    ap.add_argument("--seed", type=int, default=20240917)
    ap.add_argument("--k", type=int, default=5, help="a detection within ±K of a step (5)")
    a = ap.parse_args()

    series = make_series(a.seed, a.per_shape, a.points)
    os.makedirs(a.work, exist_ok=True)
    data_path = os.path.join(a.work, "series.json")
    csv_path = os.path.join(a.work, "series.csv")
    with open(data_path, "w") as f:
        json.dump({"series": series}, f)
    with open(csv_path, "w") as f:
        for s in series:
            for v in s["x"]:
                f.write(f"{s['name']},{v!r}\n")

    nflat = sum(s["kind"] == "flat" for s in series)
    print(f"{len(series)} series of {a.points} points (seed {a.seed}): {nflat} flat, "
          f"{len(series) - nflat} stepped with {sum(len(s['truth']) for s in series)} steps; "
          f"5 noise shapes; a detection counts within ±{a.k} points", flush=True)
    rows = []
    found, secs = run_perfwatch(a.perfwatch, csv_path, series)
    rows.append(("perfwatch changepoints --by-series", "this build",
                 score(series, found, secs, a.k), found))
    for peer, label in PEERS:
        py = a.spa_python if peer == "spa" else a.otava_python
        found, secs, ver = run_peer(py, peer, data_path)
        rows.append((label, ver, score(series, found, secs, a.k), found))
        print(f"  {label} {ver}: {secs:.2f} s", flush=True)

    ref = rows[0][2]
    print()
    print("| tool | version | series/s | false cps / 1,000 flat points | recall | precision "
          "| series/s vs perfwatch | false cps vs perfwatch | recall vs perfwatch "
          "| precision vs perfwatch |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, ver, r, _ in rows:
        print(f"| {label} | {ver} | {r['series_per_s']:.4g} | {r['fp_per_1000']:.3f} "
              f"({r['flat_cps']}) | {r['recall']:.3f} ({r['hits']}/{r['truths']}) "
              f"| {r['precision']:.3f} ({r['hits']}/{r['dets']}) "
              f"| {ratio(r['series_per_s'], ref['series_per_s'])} "
              f"| {ratio(r['fp_per_1000'], ref['fp_per_1000'])} "
              f"| {ratio(r['recall'], ref['recall'])} "
              f"| {ratio(r['precision'], ref['precision'])} |")
    print()
    print("Per noise shape: false changepoints on the flat series; steps found of all "
          "(within ±K); detections on the stepped series")
    print("| tool | " + " | ".join(SHAPES) + " |")
    print("|---|" + "---|" * len(SHAPES))
    for label, _, _, found in rows:
        cells = []
        for shape in SHAPES:
            sub = [s for s in series if s["shape"] == shape]
            r = score(sub, found, 1.0, a.k)
            cells.append(f"{r['flat_cps']}; {r['hits']}/{r['truths']}; {r['dets']}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
