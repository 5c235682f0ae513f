#!/usr/bin/env python3
"""compare.py REF_DIR RUN_DIR: the fault harness's comparison of two snapshot
folders (one file of '|'-separated rows per table, written by faults.sh).

Each table is compared twice:
  exact   the projection that must be equal between any two runs of one
          replay: a difference fails the harness;
  full    every column; differences here that are not in the exact projection
          are reported (as "order-dependent") but do not fail, because two
          uninterrupted runs of the same replay already differ there (the
          gate's per-series numbers, the watcher's changepoints and what
          follows from them: docs/operations.md, "Fault injection").
Prints one line per table: rows in each run, rows compared, exact differences,
full differences; then the first exact differences; exits 1 if any."""
import os
import re
import sys

ref, run = sys.argv[1], sys.argv[2]


def rows(d, t):
    p = os.path.join(d, t + ".txt")
    with open(p) as f:
        return [line.rstrip("\n").split("|") for line in f if line.strip()]


def drop(*idx):
    return lambda r: [x for i, x in enumerate(r) if i not in idx]


def keep(*idx):
    return lambda r: [r[i] for i in idx if i < len(r)]


ident = lambda r: r
not_bisect = lambda r: r if not r[0].startswith("bx-") else None
# table -> projection of a row for the exact comparison (None: the row is not
# in it), or None for the tables projected in project()
exact = {
    # every run of the replay once, with its numbers; a bisect job's run
    # ("bx-" ids) exists only because of a bisection (order-dependent, below)
    "runs": not_bisect,
    "samples": not_bisect,
    "op_timings": not_bisect,
    "dead_letters": ident,
    # the release's verdict; not its test count nor the fleet-weighted impact:
    # a series whose baseline is quarantined when the gate decides is not
    # tested, and the baseline's state is order-dependent
    "gate_evaluations": keep(0, 1, 2, 3, 4),
    # each family's tier, verdict, gated and regressed series: equal in full
    # since one series' runs share a runs partition (pw_runs_key) and the
    # baselines the gate reads no longer depend on arrival order
    "gate_family_results": ident,
    # each series tested once per evaluation, in its tier; its numbers and
    # verdict read the baseline of the moment (order-dependent)
    "gate_series_results": keep(0, 1, 2, 3),
    # what on-call received: route, severity, verdict, summary without its
    # percentage, owner, delivery (the page id names the incident's first
    # alert, and the percentage its baseline: both order-dependent)
    "pages": lambda r: [re.sub(r"[+-][0-9.]+%", "%", x) for x in r[2:]],
    "webhook": None,
    # every baseline version of every series with its values (pw_runs_key: a
    # series' points reach the baseliner in measurement order)
    "baselines": ident,
    # order-dependent as a whole (compared in full, reported, not failing):
    # where the watcher pins a shift and what follows from it, the
    # changepoint, its alerts, the bisection and the attribution, depends on
    # which points of a series had arrived when it looked (docs/operations.md)
    "changepoints": False,
    "alerts": False,
    "bisections": False,
    "attributions": False,
}


def project(t, rs):
    if exact[t] is False:
        return []
    if t == "webhook":
        # that pages reached on-call, on which path; how many versions a page
        # went through, and the model its first versions named (the first
        # alert to arrive), are order-dependent
        return [[x] for x in sorted({r[0].split()[0] for r in rs})]
    return [p for p in (exact[t](r) for r in rs) if p is not None]


def diff(a, b):
    sa = sorted("|".join(r) for r in a)
    sb = sorted("|".join(r) for r in b)
    from collections import Counter
    ca, cb = Counter(sa), Counter(sb)
    only_a = list((ca - cb).elements())
    only_b = list((cb - ca).elements())
    return len(only_a) + len(only_b), only_a[:3], only_b[:3]


total_exact = 0
total_rows = 0
print("  %-20s %9s %9s %9s %7s %16s" % ("table", "reference", "this run", "compared", "exact", "order-dependent"))
shown = []
for t in exact:
    a, b = rows(ref, t), rows(run, t)
    pa, pb = project(t, a), project(t, b)
    n, xa, xb = diff(pa, pb)
    nf, _, _ = diff(a, b)
    total_exact += n
    total_rows += len(pa) + len(pb)
    print("  %-20s %9d %9d %9d %7d %16d" % (t, len(a), len(b), len(pa) + len(pb), n, nf))
    if n:
        shown += ["    %s: only in the reference: %s" % (t, x) for x in xa]
        shown += ["    %s: only in this run:      %s" % (t, x) for x in xb]
for s in shown:
    print(s[:400])
print("  rows compared: %d; differences: %d" % (total_rows, total_exact))
sys.exit(1 if total_exact else 0)
