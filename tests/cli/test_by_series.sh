#!/usr/bin/env bash
# test_by_series.sh: `perfwatch classify --by-series` and `perfwatch
# changepoints --by-series`: many series in one CSV (SERIES,SAMPLES), one
# JSON line per series (classify) or per changepoint (changepoints), each
# with its "series"; bad lines exit 2 with "perfwatch: FILE:LINE: reason".
set -u
PW=${1:?usage: test_by_series.sh PATH/TO/perfwatch}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

# 30 series of 60 nightlies; every tenth steps +8% at index 40, and series
# "late" steps +10% at its very last run.
awk 'BEGIN { x = 12345
	for (s = 0; s < 30; s++) for (i = 0; i < 60; i++) {
		x = (16807 * x) % 2147483647
		printf "s%d,%.4f\n", s, 100 + (x / 2147483647 - 0.5) + (s % 10 == 0 && i >= 40 ? 8 : 0)
	}
	for (i = 0; i < 30; i++) { x = (16807 * x) % 2147483647
		printf "late,%.4f\n", 100 + 0.5 * (x / 2147483647 - 0.5) + (i == 29 ? 10 : 0) } }' >"$T/many.csv"

out=$("$PW" changepoints --by-series "$T/many.csv") || fail "changepoints exit $?"
n=$(printf '%s\n' "$out" | grep -c '"kind":"regression"')
[ "$n" = 3 ] || fail "changepoints: want 3 regressions (s0, s10, s20), got $n: $out"
for s in s0 s10 s20; do
	printf '%s\n' "$out" | grep -q "\"series\":\"$s\",\"index\":40," || fail "changepoints: $s at 40 missing"
done

out=$("$PW" classify --by-series "$T/many.csv") || fail "classify exit $?"
[ "$(printf '%s\n' "$out" | wc -l)" = 31 ] || fail "classify: want 31 lines, got: $out"
printf '%s\n' "$out" | grep -q '^{"series":"late","verdict":"REGRESSED"' ||
	fail "classify: late step not flagged: $out"
[ "$(printf '%s\n' "$out" | grep -c '"verdict":"UNCHANGED"')" = 30 ] ||
	fail "classify: the 30 others must be UNCHANGED: $out"

printf 'a,1\nnocomma\n' >"$T/bad.csv"
err=$("$PW" classify --by-series "$T/bad.csv" 2>&1 >/dev/null)
rc=$?
[ "$rc" = 2 ] || fail "bad line: exit $rc, want 2"
printf '%s' "$err" | grep -q "bad.csv:2:" || fail "bad line: no FILE:LINE: $err"
printf 'a,1 2\n' >"$T/two.csv"
"$PW" changepoints --by-series "$T/two.csv" >/dev/null 2>&1
[ $? = 2 ] || fail "changepoints with two numbers on a line must exit 2"

# Drift (issue 17): +10% over 300 points is one finding with its rate, no steps;
# three real steps stay three steps.
awk 'BEGIN { x = 777
	for (i = 0; i < 300; i++) { s = 0; for (q = 0; q < 4; q++) { x = (16807 * x) % 2147483647; s += x / 2147483647 }
		printf "drift,%.5f\n", 100 * (1 + 0.10 * i / 300) + 0.5 * (s - 2) * 1.732 }
	for (i = 0; i < 300; i++) { s = 0; for (q = 0; q < 4; q++) { x = (16807 * x) % 2147483647; s += x / 2147483647 }
		printf "stairs,%.5f\n", 100 + (i >= 75 ? 3 : 0) + (i >= 150 ? 3 : 0) + (i >= 225 ? 3 : 0) + 0.5 * (s - 2) * 1.732 } }' >"$T/drift.csv"
out=$("$PW" changepoints --by-series "$T/drift.csv") || fail "drift: exit $?"
d=$(printf '%s\n' "$out" | grep '"series":"drift"')
[ "$(printf '%s\n' "$d" | grep -c .)" = 1 ] || fail "drift: want one line for the drift series: $out"
printf '%s' "$d" | grep -Eq '"shape":"drift","start":([0-9]|[1-2][0-9]),"rate_pct_per_point":0.03' || fail "drift: $d"
[ "$(printf '%s\n' "$out" | grep -c '"series":"stairs".*"shape":"step"')" = 3 ] ||
	fail "stairs: want three steps: $out"

[ "$FAILS" = 0 ] && echo "test_by_series: ok" || { echo "test_by_series: $FAILS failure(s)"; exit 1; }
