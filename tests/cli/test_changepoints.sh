#!/usr/bin/env bash
# test_changepoints.sh: `perfwatch changepoints` end to end: steps found where
# they are, nothing on flat or outlier series, --direction naming the kind, and
# bad input rejected with exit 2 and a FILE:LINE message. $1: the perfwatch binary.
set -u
PW=${1:?usage: test_changepoints.sh PERFWATCH}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# series N SEED LEVEL NOISE [AT:STEP ...]: deterministic noise (Park–Miller, exact in awk doubles)
series() {
	awk -v n="$1" -v seed="$2" -v level="$3" -v noise="$4" -v steps="${5:-}" 'BEGIN {
		x = seed; k = split(steps, st, " ")
		for (i = 0; i < n; i++) {
			s = 0
			for (j = 0; j < 4; j++) { x = (16807 * x) % 2147483647; s += x / 2147483647 }
			v = level + noise * (s - 2) * 1.732
			for (m = 1; m <= k; m++) { split(st[m], p, ":"); if (i >= p[1] + 0) v += p[2] }
			printf "%.5f\n", v
		}
	}'
}

run() { # run NAME ARGS...: stdout to $T/NAME.out, stderr to $T/NAME.err, exit code echoed
	local name=$1; shift
	"$PW" "$@" >"$T/$name.out" 2>"$T/$name.err"
	echo $?
}

# A 3% step at 60 in 0.5% noise: one changepoint, at 60, a regression.
series 120 7 100 0.5 "60:3" >"$T/step.txt"
rc=$(run step changepoints "$T/step.txt")
[ "$rc" = 0 ] || fail "step: exit $rc"
[ "$(wc -l <"$T/step.out")" = 1 ] || fail "step: expected one line, got: $(cat "$T/step.out")"
grep -Eq '"index":(59|60|61),' "$T/step.out" || fail "step: index not 60: $(cat "$T/step.out")"
for f in index before after delta_pct p; do
	grep -q "\"$f\":" "$T/step.out" || fail "step: field $f missing"
done
grep -q '"kind":"regression"' "$T/step.out" || fail "step: lower is better: a rise is a regression"
grep -Eq '"delta_pct":(2\.[5-9]|3\.[0-4])' "$T/step.out" || fail "step: delta_pct not ~3: $(cat "$T/step.out")"

rc=$(run step_hi changepoints --direction higher "$T/step.txt")
[ "$rc" = 0 ] || fail "step --direction higher: exit $rc"
grep -q '"kind":"improvement"' "$T/step_hi.out" || fail "higher is better: a rise is an improvement"

# Flat noisy line: nothing at all.
series 300 11 100 2 >"$T/flat.txt"
rc=$(run flat changepoints "$T/flat.txt")
[ "$rc" = 0 ] || fail "flat: exit $rc"
[ ! -s "$T/flat.out" ] || fail "flat: expected nothing, got: $(cat "$T/flat.out")"

# A lone outlier: nothing.
series 200 13 100 0.5 "100:40 101:-40" >"$T/spike.txt"
rc=$(run spike changepoints "$T/spike.txt")
[ "$rc" = 0 ] && [ ! -s "$T/spike.out" ] || fail "spike: expected nothing, got: $(cat "$T/spike.out")"

# A regression and its fix: two lines, up then down.
series 240 17 100 0.5 "80:4 160:-4" >"$T/fix.txt"
rc=$(run fix changepoints "$T/fix.txt")
[ "$rc" = 0 ] || fail "fix: exit $rc"
[ "$(wc -l <"$T/fix.out")" = 2 ] || fail "fix: expected two lines, got: $(cat "$T/fix.out")"
sed -n 2p "$T/fix.out" | grep -q '"kind":"improvement"' || fail "fix: second is the fix"

# Comments and blank lines are skipped.
{ echo "# header"; echo; cat "$T/step.txt"; } >"$T/commented.txt"
rc=$(run commented changepoints "$T/commented.txt")
[ "$rc" = 0 ] && cmp -s "$T/commented.out" "$T/step.out" || fail "comments: output differs"

# Bad input: exit 2 with FILE:LINE.
printf '1\n2\nabc\n' >"$T/bad.txt"
rc=$(run bad changepoints "$T/bad.txt")
[ "$rc" = 2 ] || fail "non-number: exit $rc, expected 2"
grep -q "bad.txt:3:" "$T/bad.err" || fail "non-number: no FILE:LINE: $(cat "$T/bad.err")"
printf '1\nnan\n' >"$T/nan.txt"
rc=$(run nan changepoints "$T/nan.txt")
[ "$rc" = 2 ] && grep -q "nan.txt:2:" "$T/nan.err" || fail "NaN: exit $rc: $(cat "$T/nan.err")"
printf '1\ninf\n' >"$T/inf.txt"
rc=$(run inf changepoints "$T/inf.txt")
[ "$rc" = 2 ] || fail "inf: exit $rc"
printf '1 2\n' >"$T/two.txt"
rc=$(run two changepoints "$T/two.txt")
[ "$rc" = 2 ] || fail "two numbers on a line: exit $rc"
: >"$T/empty.txt"
rc=$(run empty changepoints "$T/empty.txt")
[ "$rc" = 2 ] || fail "empty file: exit $rc"
rc=$(run missing changepoints "$T/does-not-exist.txt")
[ "$rc" = 2 ] || fail "missing file: exit $rc"
rc=$(run noargs changepoints)
[ "$rc" = 2 ] || fail "no arguments: exit $rc"
rc=$(run baddir changepoints --direction sideways "$T/step.txt")
[ "$rc" = 2 ] || fail "bad direction: exit $rc"
rc=$(run badopt changepoints --frobnicate "$T/step.txt")
[ "$rc" = 2 ] || fail "unknown option: exit $rc"

# Stdin as "-".
rc=$("$PW" changepoints - <"$T/step.txt" >"$T/stdin.out" 2>/dev/null; echo $?)
[ "$rc" = 0 ] && cmp -s "$T/stdin.out" "$T/step.out" || fail "stdin: differs from file"

if [ "$fails" -ne 0 ]; then
	echo "test_changepoints: $fails failure(s)" >&2
	exit 1
fi
echo "test_changepoints: ok"
