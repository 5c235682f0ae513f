#!/usr/bin/env python3
"""normalize.py MAP < rows > rows: the fault harness's snapshot rows with the
series ids inside alert, page and bisection ids (bl-outlier/ID/, watch-ID@,
pg-watch-ID-, gate-...-eN-sID) replaced by the series' rank in the run (S1,
S2, ... by series key): series ids come from a sequence and differ between
two runs of one replay. MAP holds "series_id series_key" lines of the run."""
import re
import sys

ids = {}
with open(sys.argv[1]) as f:
    keys = sorted((line.rstrip("\n").split(" ", 1) for line in f if line.strip()), key=lambda x: x[1])
for rank, (sid, _) in enumerate(keys, 1):
    ids[sid] = "S%d" % rank

def sub(m):
    return m.group(1) + ids.get(m.group(2), m.group(2)) + m.group(3)

pat = re.compile(r"(bl-[a-z-]+/|watch-|-e\d+-s)(\d+)([/@-]|\b)")
for line in sys.stdin:
    sys.stdout.write(pat.sub(sub, line))
