#!/usr/bin/env bash
# test_series.sh: `perfwatch series show` argument handling, without servers
# (tests/integration/test_baseliner.sh runs it against the dev stack).
# $1 is the perfwatch binary.
set -uo pipefail
pw=$1
fails=0
expect() { # expect CODE DESCRIPTION -- ARGS...
  local want=$1 what=$2
  shift 3
  "$@" >/dev/null 2>&1
  local got=$?
  if [ "$got" = "$want" ]; then echo "PASS: $what"; else echo "FAIL: $what: exit $got, want $want"; fails=$((fails + 1)); fi
}
expect 2 "no subcommand" -- "$pw" series
expect 2 "unknown subcommand" -- "$pw" series list
expect 2 "missing SERIES" -- "$pw" series show
expect 2 "unknown option" -- "$pw" series show --bogus a/b/c/d/e
expect 2 "two series" -- "$pw" series show a/b/c/d/e f/g/h/i/j
expect 2 "no PW_PG_DSN" -- env -u PW_PG_DSN "$pw" series show a/b/c/d/e
# a server that is not there: a failure, not a usage error, and quickly
expect 1 "postgresql unreachable" -- env PW_PG_DSN="host=127.0.0.1 port=1 dbname=x connect_timeout=1" PW_REDIS_ADDR= "$pw" series show a/b/c/d/e
"$pw" --help | grep "series show" >/dev/null && echo "PASS: listed in --help" || { echo "FAIL: not in --help"; fails=$((fails + 1)); }
[ $fails -eq 0 ]
