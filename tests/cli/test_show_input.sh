#!/usr/bin/env bash
# test_show_input.sh: the ids and keys typed on the command line go through
# the CLI's door (pw_cli_id_ok, tools/perfwatch/input.c) before anything is
# sent to PostgreSQL, as the services check the same text in a message: a
# 100 KB id is refused with its length, never echoed whole; an invalid byte
# is refused as not UTF-8 (it never reaches PostgreSQL, whose "invalid byte
# sequence for encoding UTF8" text was printed before). PW_PG_DSN points at a
# port where nothing listens: a refusal must come first. $1: the perfwatch binary.
set -u
PW=${1:?usage: test_show_input.sh PERFWATCH}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
export PW_PG_DSN="host=127.0.0.1 port=1 connect_timeout=2 dbname=none"

# run NAME ARGS...: exit code echoed; stderr in $T/NAME.err
run() {
	local name=$1; shift
	timeout 20 "$PW" "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null
	echo $?
}
# refused NAME WANT ARGS...: exit 2, a short stderr holding WANT, no PostgreSQL text
refused() {
	local name=$1 want=$2; shift 2
	local rc
	rc=$(run "$name" "$@")
	[ "$rc" = 2 ] || fail "$name: exit $rc, want 2: $(head -c 300 "$T/$name.err")"
	[ "$(wc -c <"$T/$name.err")" -lt 400 ] || fail "$name: stderr is $(wc -c <"$T/$name.err") bytes"
	grep -qF -- "$want" "$T/$name.err" || fail "$name: stderr \"$(head -c 300 "$T/$name.err")\" does not say \"$want\""
	! grep -q "invalid byte sequence\|cannot connect" "$T/$name.err" || fail "$name: reached PostgreSQL: $(cat "$T/$name.err")"
}

big=$(head -c 100000 /dev/zero | tr '\0' a)
refused bisect_big "perfwatch: bisection id or alert id \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\" (100000 bytes, at most 200) is too long" \
	bisect show "$big"
refused attribution_big "(100000 bytes, at most 200) is too long" attribution show "$big"
refused gate_big "(100000 bytes, at most 255) is too long" gate show "$big"
refused gate_ff 'perfwatch: release id "\xff" (1 bytes, at most 255) is not valid UTF-8' gate show $'\377'
refused attribution_ff 'perfwatch: alert id "\xff" (1 bytes, at most 200) is not valid UTF-8' attribution show $'\377'
refused bisect_ff 'perfwatch: bisection id or alert id "bs-\xc0\xaf" (5 bytes, at most 200) is not valid UTF-8' \
	bisect show $'bs-\300\257'
refused bisect_ctl 'contains a control character' bisect show $'bs-1\033[2J'
refused gate_eval 'perfwatch: --evaluation takes a number from 1 to' gate show xla-rc-1 --evaluation $'\377'
refused series_ff 'perfwatch: series key "chat-8b/\xff' series show $'chat-8b/\377/v6e-4/decode.B64.s2048.int8/tpot_p50_ms'
refused plot_long '(256 bytes, at most 255) is too long' series plot "$(head -c 256 /dev/zero | tr '\0' k)"
refused p1_id 'perfwatch: a P1 ticket id is N or P1-N, not "P1-x"' p1 resolve P1-x --by me --note n
refused p1_ff 'perfwatch: P1 ticket id "\xff" (1 bytes, at most 200) is not valid UTF-8' p1 resolve $'\377' --by me --note n
refused p1_by 'perfwatch: --by "\xff" (1 bytes, at most 200) is not valid UTF-8' p1 resolve 7 --by $'\377' --note n
refused p1_note "(100000 bytes, at most 2000) is too long" p1 resolve 7 --by me --note "$big"
refused p1_usage 'usage: perfwatch p1 list' p1 resolve 7 --by me

# a key of 255 bytes (every part at its maximum fits: common/pw_limits.h) passes the door
key255=$(head -c 255 /dev/zero | tr '\0' k)
rc=$(run series_255 series show "$key255")
! grep -q "too long" "$T/series_255.err" || fail "a 255-byte series key was refused: $(cat "$T/series_255.err")"
# a good id passes the door and goes on to PostgreSQL (here: nothing listens)
rc=$(run bisect_good bisect show bs-chat-8b-7841923)
[ "$rc" = 1 ] && grep -q "cannot connect" "$T/bisect_good.err" ||
	fail "a good id did not reach the connection: exit $rc: $(cat "$T/bisect_good.err")"

[ "$fails" = 0 ] && echo "test_show_input: ok" || exit 1
