#!/usr/bin/env python3
"""demo_gate_summary.py: the gate's verdict in the shape of the design's
artifact 7, read from `perfwatch gate show RELEASE --json` on stdin.

tools/demo.sh prints this instead of the full per-series report (which it
keeps in run/demo/gate-report.txt): the release verdict first, then each
family's verdict with its regressed series (the largest with the test's
figures), and the series within noise counted, not listed. Argument: the
demo's namespace, taken off model names.
"""
import json
import sys


def short(name, ns):
    return name.replace("." + ns, "") if ns else name


def main():
    ns = sys.argv[1] if len(sys.argv) > 1 else ""
    d = json.load(sys.stdin)
    print("release %s: %s (%d tests, BH q=%.2g, fleet-weighted impact %.2f%%)" % (
        short(d["release_id"], ns), d["verdict"].upper(), d["tests"], d["fdr_q"],
        d["fleet_weighted_impact_pct"]))
    order = {"blocking": 0, "p1": 1, "regressed": 1, "trend": 2}
    for fam in sorted(d["families"], key=lambda f: (order.get(f["verdict"], 3), f["family"])):
        series = fam["series"]
        # latency first (artifact 7 leads with TPOT), then by the size of the change
        lead = {"tpot_p50_ms": 0, "ttft_p50_ms": 1, "tpot_p99_ms": 2, "ttft_p99_ms": 3}
        bad = sorted((s for s in series if s["verdict"] not in ("pass", "within-noise", "quarantined", "trend")),
                     key=lambda s: (lead.get(s["metric"], 9), -abs(s["delta_pct"] or 0)))
        quiet = [s for s in series if s not in bad]
        print("  family %s: %s (%d gated series, %d regressed, spend-weighted impact %.2f%% fleet, tier %s)" % (
            short(fam["family"], ns), fam["verdict"].upper(), fam["gated_series"], fam["regressed_series"],
            fam["spend_weighted_impact_pct"], fam["tier"]))
        for i, s in enumerate(bad[:4]):
            name = "%s/%s @ %s" % (s["metric"], s["config"], s["platform"])
            if i == 0:
                print("    series %s : base med=%.4g (n=%d)  rc med=%.4g (n=%d)" % (
                    name, s["baseline_median"], s["baseline_n"], s["candidate_median"], s["candidate_n"]))
                print("      mann-whitney p=%.2g | BH-q=%.2g ; effect=%+.2f%% > threshold %.2f%%  ->  %s" % (
                    s["p"], s["q"], s["effect_pct"], s["threshold_pct"], s["verdict"].upper()))
            else:
                print("    series %s : %+.2f%%  q=%.2g  %s" % (name, s["delta_pct"], s["q"], s["verdict"].upper()))
        if len(bad) > 4:
            print("    ... %d more regressed series (run/demo/gate-report.txt)" % (len(bad) - 4))
        if quiet:
            plats = sorted({s["platform"] for s in quiet})
            print("    %d series within noise (%s), max |delta| %.2f%%" % (
                len(quiet), ", ".join(plats), max(abs(s["delta_pct"] or 0) for s in quiet)))
    print("summary: %s" % short(d["summary"], ns))


if __name__ == "__main__":
    main()
