#!/usr/bin/env bash
# test_classify.sh: `perfwatch classify` end to end: the verdict on the newest
# run for flat, stepped, outlier and single-sample histories, both directions,
# and bad input rejected with exit 2 and a FILE:LINE message. $1: the perfwatch binary.
set -u
PW=${1:?usage: test_classify.sh PERFWATCH}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# runs NRUNS SAMPLES SEED NOISE [LAST_SHIFT] [NSHIFTED]: level 100, the newest
# NSHIFTED runs (default 1) shifted by LAST_SHIFT; Park–Miller noise.
runs() {
	awk -v n="$1" -v m="$2" -v seed="$3" -v noise="$4" -v shift="${5:-0}" -v ns="${6:-1}" 'BEGIN {
		x = seed
		for (i = 0; i < n; i++) {
			line = ""
			for (j = 0; j < m; j++) {
				s = 0
				for (q = 0; q < 4; q++) { x = (16807 * x) % 2147483647; s += x / 2147483647 }
				v = 100 + noise * (s - 2) * 1.732 + (i >= n - ns ? shift : 0)
				line = line (j ? " " : "") sprintf("%.5f", v)
			}
			print line
		}
	}'
}

verdict() { # verdict FILE [ARGS...]: prints the verdict field
	local f=$1; shift
	"$PW" classify "$@" "$f" | sed -n 's/.*"verdict":"\([A-Z]*\)".*/\1/p'
}

expect() { # expect NAME WANT FILE [ARGS...]
	local name=$1 want=$2; shift 2
	local got
	got=$(verdict "$@")
	[ "$got" = "$want" ] || fail "$name: got '$got', expected $want: $("$PW" classify "$@" 2>&1)"
}

runs 30 5 3 0.4 >"$T/flat.txt"
expect "flat multi-sample" UNCHANGED "$T/flat.txt"
runs 30 5 3 0.4 4 >"$T/up.txt"
expect "newest +4%, lower is better" REGRESSED "$T/up.txt"
expect "newest +4%, higher is better" IMPROVED "$T/up.txt" --direction higher
runs 30 5 3 0.4 -4 >"$T/down.txt"
expect "newest -4%" IMPROVED "$T/down.txt"
runs 30 1 5 0.5 20 1 >"$T/spike.txt"
# The first shifted run is flagged (issue 17): at that run an outlier and a step look alike.
expect "single-sample outlier on the newest run" REGRESSED "$T/spike.txt"
runs 30 1 5 0.5 5 2 >"$T/step1.txt"
expect "single-sample step, second shifted run: already seen" UNCHANGED "$T/step1.txt"
runs 30 1 5 0.5 5 1 >"$T/step1b.txt"
expect "single-sample step at its first run" REGRESSED "$T/step1b.txt"
runs 30 1 9 5 0 >"$T/noisy.txt"
expect "flat 5% noise, single samples" UNCHANGED "$T/noisy.txt"
runs 3 5 3 0.4 4 >"$T/short.txt"
expect "too little history" UNCHANGED "$T/short.txt"

# A rare mode (+5% every fifth run for 40 runs) absent from the last 20: its
# return is a known level, not a step; without those 40 runs it is a step.
awk 'BEGIN { for (i = 0; i < 60; i++) print (i < 40 && i % 5 == 2) ? 105 + (i % 3) * 0.05 : 100 + (i % 3) * 0.05; print 105 }' >"$T/rare_mode.txt"
expect "rare mode before the window" UNCHANGED "$T/rare_mode.txt"
"$PW" classify "$T/rare_mode.txt" | grep -q 'rare mode' || fail "rare mode: no reason: $("$PW" classify "$T/rare_mode.txt")"
tail -n 21 "$T/rare_mode.txt" >"$T/rare_mode_window.txt"
expect "the same run, window only" REGRESSED "$T/rare_mode_window.txt"

out=$("$PW" classify "$T/up.txt")
for f in verdict delta_pct reason; do
	echo "$out" | grep -q "\"$f\":" || fail "field $f missing: $out"
done
echo "$out" | grep -Eq '"delta_pct":(3\.[5-9]|4\.[0-4])' || fail "delta_pct not ~4: $out"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "expected one line: $out"

# Bad input: exit 2 with FILE:LINE.
printf '1 2 3\n4 x 6\n' >"$T/bad.txt"
"$PW" classify "$T/bad.txt" >/dev/null 2>"$T/bad.err"
rc=$?
[ "$rc" = 2 ] || fail "non-number: exit $rc"
grep -q "bad.txt:2:" "$T/bad.err" || fail "non-number: no FILE:LINE: $(cat "$T/bad.err")"
printf '1 2\n3 -inf\n' >"$T/inf.txt"
"$PW" classify "$T/inf.txt" >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ] || fail "-inf: exit $rc"
: >"$T/empty.txt"
"$PW" classify "$T/empty.txt" >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ] || fail "empty file: exit $rc"
"$PW" classify "$T/nope.txt" >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ] || fail "missing file: exit $rc"
"$PW" classify >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ] || fail "no arguments: exit $rc"
"$PW" classify --direction up "$T/flat.txt" >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ] || fail "bad direction: exit $rc"

if [ "$fails" -ne 0 ]; then
	echo "test_classify: $fails failure(s)" >&2
	exit 1
fi
echo "test_classify: ok"
