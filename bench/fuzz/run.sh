#!/usr/bin/env bash
# run.sh: `make fuzz` — runs each libFuzzer target of bench/fuzz (built with
# PW_FUZZ=ON into BUILD) for SECONDS, starting from the seed corpus in
# bench/fuzz/corpus/<target>/ plus what earlier runs found (kept under
# $PW_RUN_DIR/fuzz/<target>/corpus), and prints one line a target: runs,
# runs per second, edges covered (libFuzzer's cov), features (ft), corpus
# size and crashes. A crash's input is kept in $PW_RUN_DIR/fuzz/<target>/
# crashes/; replay it with the target itself, or copy it into the seed
# corpus (and fix the bug) so that the CI smoke replays it for ever.
#   bench/fuzz/run.sh BUILD [SECONDS] [TARGET...]
# PW_FUZZ_JOBS runs that many targets at a time (default 1). Exit status 1
# when any target crashed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: bench/fuzz/run.sh BUILD [SECONDS] [TARGET...]" >&2; exit 2; }
build=$1
secs=${2:-600}
shift $(($# >= 2 ? 2 : 1))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_wire fuzz_config fuzz_cli_input fuzz_http_query)
out=${PW_RUN_DIR:-$repo/run}/fuzz
jobs=${PW_FUZZ_JOBS:-1}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: PW_FUZZ_JOBS must be a positive integer" >&2; exit 2; }
for t in "${targets[@]}"; do
  [ -x "$build/bench/fuzz/$t" ] || { echo "fuzz: $build/bench/fuzz/$t not built (make fuzz builds it)" >&2; exit 2; }
done

# fuzz_one TARGET: runs it, writes its figures line to $out/TARGET/figures and
# its exit status to $out/TARGET/status
fuzz_one() {
  local t=$1 bin=$build/bench/fuzz/$1 log rc=0
  mkdir -p "$out/$t/corpus" "$out/$t/crashes"
  log=$out/$t/fuzz.log
  # stderr carries the parsers' own messages too; the log keeps it all
  "$bin" -max_total_time="$secs" -timeout=10 -max_len=16384 -print_final_stats=1 \
    -artifact_prefix="$out/$t/crashes/" "$out/$t/corpus" "$here/corpus/$t" >"$log" 2>&1 || rc=$?
  local runs last cov ft corp ncrash
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}' | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  ncrash=$(find "$out/$t/crashes" -type f | wc -l)
  printf '%-16s %12s %9s %7s %7s %7s %8s\n' "$t" "${runs:-?}" \
    "$([ -n "${runs:-}" ] && echo $((runs / (secs > 0 ? secs : 1))) || echo '?')" \
    "${cov:-?}" "${ft:-?}" "${corp:-?}" "$ncrash" >"$out/$t/figures"
  [ "$rc" -eq 0 ] && [ "$ncrash" -eq 0 ] && echo 0 >"$out/$t/status" || echo 1 >"$out/$t/status"
  [ "$rc" -eq 0 ] || echo "fuzz: $t stopped with status $rc; see $log" >&2
}

printf '%-16s %12s %9s %7s %7s %7s %8s\n' target runs runs/s cov ft corpus crashes
# PW_FUZZ_JOBS targets at a time (CI: one per core); the figures in the targets' order
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  for t in "${targets[@]:i:jobs}"; do fuzz_one "$t" & done
  wait
done
crashed=0
for t in "${targets[@]}"; do
  cat "$out/$t/figures"
  [ "$(cat "$out/$t/status")" = 0 ] || crashed=1
done
exit $crashed
