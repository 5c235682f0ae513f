#!/usr/bin/env bash
# run.sh: the benchmarks behind `make bench` (not part of CI).
#
# Each benchmark prints its figures and a ratio against a reference measured
# in the same run (a naive implementation, kcat, a raw COPY; bench_bisect:
# plain binary search over every CL). Benchmarks that
# need servers get the dev stack's environment (run/stack.env); the stack is
# started for the run and stopped at the end unless it was already running.
#
#   bench/run.sh BUILD_DIR [NAME...]    NAME: bench_NAME or NAME.sh; default all
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
[ $# -ge 1 ] || { echo "usage: bench/run.sh BUILD_DIR [NAME...]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift

benches=()
if [ $# -gt 0 ]; then
  for n in "$@"; do
    if [ -f "$here/$n.sh" ]; then benches+=("$here/$n.sh")
    else benches+=("$build/bench/bench_${n#bench_}"); fi
  done
else
  shopt -s nullglob
  for b in "$build"/bench/bench_*; do [ -x "$b" ] && benches+=("$b"); done
  for s in "$here"/*.sh; do [ "$(basename "$s")" = run.sh ] || benches+=("$s"); done
fi

run_dir=${PW_RUN_DIR:-$repo/run}
was_running=0
"$repo/deploy/dev/stack.sh" status >/dev/null 2>&1 && was_running=1
"$repo/deploy/dev/stack.sh" start "$build" >/dev/null
[ "$was_running" = 1 ] || trap '"$repo/deploy/dev/stack.sh" stop >/dev/null' EXIT
set -a
# shellcheck disable=SC1091
. "$run_dir/stack.env"
set +a
export PW_BUILD=$build

failed=0
for b in "${benches[@]}"; do
  echo "== $(basename "$b")"
  case "$b" in
    *.sh) (cd "$repo" && bash "$b" "$build") || { echo "bench: $(basename "$b") failed" >&2; failed=1; } ;;
    *) (cd "$repo" && "$b") || { echo "bench: $(basename "$b") failed" >&2; failed=1; } ;;
  esac
done
exit $failed
