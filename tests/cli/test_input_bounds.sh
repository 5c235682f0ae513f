#!/usr/bin/env bash
# test_input_bounds.sh: hostile input to the CLI (issue 19, item 8): bounded
# memory and time, clear errors, no whole-line echo. $1: the perfwatch binary
# (pw-sim is found beside it, in simulator/).
set -u
PW=${1:?usage: test_input_bounds.sh PERFWATCH}
SIM=$(dirname "$PW")/simulator/pw-sim
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# run NAME LIMIT_S ARGS...: exit code echoed; stderr in $T/NAME.err; memory capped at
# 1 GB (not under ASan, whose shadow memory needs a huge address space)
vcap=1048576
ldd "$PW" 2>/dev/null | grep -q libasan && vcap=unlimited
run() {
	local name=$1 lim=$2; shift 2
	(ulimit -v "$vcap"; timeout "$lim" "$@") >"$T/$name.out" 2>"$T/$name.err" </dev/null
	echo $?
}

# /dev/zero: no newline ever; stopped at the line cap, not at the memory limit
rc=$(run zero 20 "$PW" changepoints /dev/zero)
[ "$rc" = 2 ] || fail "/dev/zero: exit $rc: $(head -c 300 "$T/zero.err")"
grep -q "line is longer than 65536 bytes" "$T/zero.err" || fail "/dev/zero: $(head -c 300 "$T/zero.err")"

# a 10 MB line of digits: an error that does not echo it
head -c 10000000 /dev/zero | tr '\0' 7 >"$T/long.txt"
rc=$(run long 20 "$PW" changepoints "$T/long.txt")
[ "$rc" = 2 ] || fail "long line: exit $rc"
[ "$(wc -c <"$T/long.err")" -lt 400 ] || fail "long line: stderr is $(wc -c <"$T/long.err") bytes"

# a 60 KB bad token is quoted to 40 bytes
{ echo 1; head -c 60000 /dev/zero | tr '\0' x; echo; } >"$T/tok.txt"
rc=$(run tok 20 "$PW" changepoints "$T/tok.txt")
[ "$rc" = 2 ] || fail "bad token: exit $rc"
grep -q ':2: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...": not a number' "$T/tok.err" ||
	fail "bad token: $(head -c 300 "$T/tok.err")"

# a NUL inside a line
printf '1\n2\0junk\n3\n' >"$T/nul.txt"
rc=$(run nul 20 "$PW" changepoints "$T/nul.txt")
[ "$rc" = 2 ] || fail "NUL: exit $rc"
grep -q "nul.txt:2: line contains a NUL byte" "$T/nul.err" || fail "NUL: $(cat "$T/nul.err")"

# a line of separators only: not an empty series answered with no changepoints (exit 0),
# but an error naming the line (found by bench/fuzz/fuzz_cli_input); also for runs
printf '1\n,\n2\n' >"$T/comma.txt"
rc=$(run comma 20 "$PW" changepoints "$T/comma.txt")
[ "$rc" = 2 ] || fail "separators only: exit $rc"
grep -q "comma.txt:2: no number on the line" "$T/comma.err" || fail "separators only: $(cat "$T/comma.err")"
printf ', ,\n' >"$T/comma1.txt"
rc=$(run comma1 20 "$PW" changepoints "$T/comma1.txt")
[ "$rc" = 2 ] || fail "a file of separators: exit $rc"
printf '1 2 3\n\t,\n' >"$T/runs.txt"
rc=$(run runs 20 "$PW" classify "$T/runs.txt")
[ "$rc" = 2 ] || fail "a run of separators: exit $rc"
grep -q "runs.txt:2: no number on the line" "$T/runs.err" || fail "a run of separators: $(cat "$T/runs.err")"

# a directory
rc=$(run dir 20 "$PW" changepoints "$T")
[ "$rc" = 2 ] || fail "directory: exit $rc"
grep -q "is a directory" "$T/dir.err" || fail "directory: $(cat "$T/dir.err")"

# 1 million numbers: a clear refusal within seconds, not minutes of quadratic work
awk 'BEGIN { for (i = 0; i < 1000000; i++) print i % 7 }' >"$T/m.txt"
start=$(date +%s)
rc=$(run million 60 "$PW" changepoints "$T/m.txt")
took=$(($(date +%s) - start))
[ "$rc" = 2 ] || fail "1M lines: exit $rc: $(cat "$T/million.err")"
grep -q "over the limit of 200000" "$T/million.err" || fail "1M lines: $(cat "$T/million.err")"
[ "$took" -le 20 ] || fail "1M lines: took $took s"

# 6 million numbers in a runs file: refused at the numbers cap, within the memory limit
awk 'BEGIN { for (i = 0; i < 600000; i++) print "1 2 3 4 5 6 7 8 9 10" }' >"$T/runs.txt"
rc=$(run runs 60 "$PW" classify "$T/runs.txt")
[ "$rc" = 2 ] || fail "6M numbers: exit $rc: $(head -c 300 "$T/runs.err")"
grep -q "more than 5000000 numbers" "$T/runs.err" || fail "6M numbers: $(head -c 300 "$T/runs.err")"

# gate request with no arguments: refused before any broker is tried
rc=$(PW_KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:1 run gate 20 "$PW" gate request)
[ "$rc" = 2 ] || fail "gate request: exit $rc"
grep -q "needs --release, --candidate and --baseline" "$T/gate.err" || fail "gate request: $(head -c 300 "$T/gate.err")"

# pw-sim: a negative or absurd repeat count is refused
if [ -x "$SIM" ]; then
	for r in -5 0 1001 18446744073709551617; do
		rc=$(run sim 20 "$SIM" plan worked-example --repeats "$r")
		[ "$rc" = 2 ] || fail "pw-sim --repeats $r: exit $rc"
		grep -Eq "repeats.*(outside 1..1000|is not a number)" "$T/sim.err" ||
			fail "pw-sim --repeats $r: $(head -c 300 "$T/sim.err")"
	done
else
	fail "pw-sim not found at $SIM"
fi

[ "$fails" = 0 ] && echo "test_input_bounds: ok"
exit $((fails > 0))
