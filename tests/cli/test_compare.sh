#!/usr/bin/env bash
# test_compare.sh: `perfwatch compare` end to end: JSON verdicts on clear cases,
# and exit 2 with "perfwatch: FILE:LINE: reason" on bad input.
#
# ctest passes the perfwatch binary as $1 (tests/CMakeLists.txt). The decision
# itself is unit-tested in tests/unit/test_stats.c; this checks the command's
# wiring: file reading, options, JSON shape and exit codes. Exits non-zero if
# any expectation fails.
set -u

PW=${1:?usage: test_compare.sh PATH/TO/perfwatch}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
FAILS=0
PASSES=0

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
pass() { PASSES=$((PASSES + 1)); }

# field JSON NAME: the raw value of "NAME" in a one-line JSON object (strings keep quotes).
field() { printf '%s\n' "$1" | sed -n "s/.*\"$2\":\(\"[^\"]*\"\|[^,}]*\).*/\1/p"; }

expect_field() { # JSON NAME WANT
	local got
	got=$(field "$1" "$2")
	if [ "$got" = "$3" ]; then pass; else fail "$2 = '$got', want '$3' in: $1"; fi
}

expect_num() { # JSON NAME OP VALUE  (awk comparison, e.g. '>' 2.5)
	local got
	got=$(field "$1" "$2")
	if [ -n "$got" ] && awk -v g="$got" -v v="$4" "BEGIN { exit !(g $3 v) }"; then
		pass
	else
		fail "$2 = '$got', want $3 $4 in: $1"
	fi
}

run_ok() { # ARGS...: runs compare, expects exit 0 and one line; prints the line
	local out rc
	out=$("$PW" compare "$@" 2>"$TMP/err")
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "compare $* exited $rc: $(cat "$TMP/err")"
	elif [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ]; then
		fail "compare $* printed more than one line: $out"
	fi
	printf '%s' "$out"
}

expect_bad() { # WANT_STDERR_REGEX ARGS...
	local want=$1 rc
	shift
	"$PW" compare "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -ne 2 ]; then
		fail "compare $* exited $rc, want 2"
	elif ! grep -Eq -e "$want" "$TMP/err"; then
		fail "compare $*: stderr '$(cat "$TMP/err")' does not match '$want'"
	elif [ -s "$TMP/out" ]; then
		fail "compare $*: printed to stdout on error: $(cat "$TMP/out")"
	else
		pass
	fi
}

# Baseline: 30 runs around 100 ms, ~0.3% noise (the gate's shape).
cat >"$TMP/base" <<'EOF'
# baseline step time, ms
100.12
99.87
100.43
99.65
100.08
100.31
99.92
100.55
99.71
100.19
99.96
100.27
99.83
100.02
100.38
99.77
100.14
99.59
100.47
99.99
100.23
99.88
100.06
100.35
99.74
100.11
99.91
100.29
99.68
100.04
EOF
printf '103.21\n102.87\n103.44\n102.95\n103.12\n' >"$TMP/slow"
printf '100.07\n99.85\n100.26\n99.97\n100.13\n' >"$TMP/same"
printf '96.90\n97.10\n96.85\n97.20\n97.05\n' >"$TMP/fast"

# 1. Clear regression (lower is better by default): +3.07%, exact p = 6.16e-6.
j=$(run_ok "$TMP/base" "$TMP/slow")
expect_field "$j" verdict '"REGRESSED"'
expect_field "$j" effect_filter_passed true
expect_field "$j" n_base 30
expect_field "$j" n_cand 5
expect_num "$j" delta_pct '>' 3.06
expect_num "$j" delta_pct '<' 3.07
expect_num "$j" p '<' 1e-5
expect_num "$j" p '>' 6.1e-6
expect_num "$j" median_base '==' 100.05
expect_num "$j" median_cand '==' 103.12
expect_num "$j" mde_pct '==' 1
expect_num "$j" alpha '==' 0.05
expect_num "$j" two_sigma_pct '>' 0.59
expect_num "$j" two_sigma_pct '<' 0.60
expect_num "$j" welch_p '<' 1e-6
expect_num "$j" hl_lo '>' 2

# 2. Clear no-change: +0.02%, p = 0.98.
j=$(run_ok "$TMP/base" "$TMP/same")
expect_field "$j" verdict '"UNCHANGED"'
expect_field "$j" effect_filter_passed false
expect_num "$j" p '>' 0.9
expect_num "$j" delta_pct '<' 0.1

# 3. Throughput that went up, higher is better: an improvement.
j=$(run_ok --direction higher "$TMP/base" "$TMP/slow")
expect_field "$j" verdict '"IMPROVED"'
expect_field "$j" direction '"higher"'
expect_num "$j" delta_pct '>' 3
# ... and latency that went down, lower is better: also an improvement.
j=$(run_ok "$TMP/base" "$TMP/fast")
expect_field "$j" verdict '"IMPROVED"'
expect_num "$j" delta_pct '<' -2.9
# ... and throughput that went down is a regression.
j=$(run_ok --direction higher "$TMP/base" "$TMP/fast")
expect_field "$j" verdict '"REGRESSED"'

# 4. The effect filter: significant but under --mde 5 is UNCHANGED.
j=$(run_ok --mde 5 "$TMP/base" "$TMP/slow")
expect_field "$j" verdict '"UNCHANGED"'
expect_field "$j" effect_filter_passed false
expect_num "$j" p '<' 0.05
expect_num "$j" mde_pct '==' 5

# 5. Bad input: exit 2 and "perfwatch: FILE:LINE: reason".
: >"$TMP/empty"
printf '100.1\nabc\n' >"$TMP/abc"
printf '100.1\n99.9\nnan\n' >"$TMP/nan"
printf 'inf\n' >"$TMP/inf"
printf '100\n-inf\n' >"$TMP/minf"
expect_bad "^perfwatch: $TMP/empty:0: empty file" "$TMP/empty" "$TMP/slow"
expect_bad "^perfwatch: $TMP/abc:2: \"abc\": not a number" "$TMP/base" "$TMP/abc"
expect_bad "^perfwatch: $TMP/nan:3: \"nan\": NaN" "$TMP/nan" "$TMP/slow"
expect_bad "^perfwatch: $TMP/inf:1: \"inf\": infinite" "$TMP/base" "$TMP/inf"
expect_bad "^perfwatch: $TMP/minf:2: \"-inf\": infinite" "$TMP/base" "$TMP/minf"
expect_bad "cannot open" "$TMP/does-not-exist" "$TMP/slow"
printf '0\n0\n0\n' >"$TMP/zeros"
expect_bad "baseline median is zero" "$TMP/zeros" "$TMP/slow"

# 6. Usage errors: exit 2.
expect_bad "usage" "$TMP/base"
expect_bad "usage" "$TMP/base" "$TMP/slow" "$TMP/same"
expect_bad "--direction" --direction sideways "$TMP/base" "$TMP/slow"
expect_bad "--mde" --mde -1 "$TMP/base" "$TMP/slow"
expect_bad "--mde" --mde abc "$TMP/base" "$TMP/slow"
expect_bad "unknown option" --frobnicate "$TMP/base" "$TMP/slow"

echo "$PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
