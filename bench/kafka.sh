#!/usr/bin/env bash
# kafka.sh: Kafka throughput of the project's producer and consumer loop
# (bench/bench_kafka.c over common/pw_kafka.c) against kcat, in one run, on
# the dev broker.
#
# Needs the dev stack (make stack-start): PW_KAFKA_BOOTSTRAP_SERVERS from the
# environment or from run/stack.env. Every run uses fresh topics
# pw.bench.<run>.*, so it never touches the services' topics. Phases, each
# N messages of S bytes (default 1,000,000 x 200):
#   produce   bench_kafka produce (idempotent, acks=all)  vs  kcat -P with
#             the same enable.idempotence=true, acks=all, from a file of lines
#   consume   bench_kafka consume (consumer group, one synchronous offset commit
#             per batch of 10,000, callback does nothing)  vs  kcat -G (consumer
#             group, -e) on the same topics; both read every message.
# The dev broker keeps only ~5 MB per partition and auto-creates topics with 4
# partitions, so the consume data is spread over 16 topics (64 partitions)
# written beforehand by the project's producer. Consume figures come twice:
# "total" from start to the last message (includes the group join, ~3 s on the
# mock cluster, for both clients) and "steady" from the first delivered batch
# (project) / first message (kcat) to the last. The target: the consumer loop
# reads at least half of kcat's rate (steady).
#
#   bench/kafka.sh [BUILD_DIR]   (default build/)
# Environment: PW_BENCH_MESSAGES (1000000), PW_BENCH_SIZE (200).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build}
n=${PW_BENCH_MESSAGES:-1000000}
size=${PW_BENCH_SIZE:-200}
ntopics=16
bin=$build/bench/bench_kafka
die() { echo "bench/kafka.sh: $*" >&2; exit 1; }
[ -x "$bin" ] || die "$bin not built (make build)"
command -v kcat >/dev/null || die "kcat not installed (make deps)"
[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1000 ] || die "PW_BENCH_MESSAGES must be an integer >= 1000"
[[ $size =~ ^[0-9]+$ ]] && [ "$size" -ge 24 ] || die "PW_BENCH_SIZE must be an integer >= 24"
if [ -z "${PW_KAFKA_BOOTSTRAP_SERVERS:-}" ]; then
  env_file=${PW_RUN_DIR:-$repo/run}/stack.env
  [ -f "$env_file" ] || die "no dev stack ($env_file missing): run make stack-start"
  set -a
  # shellcheck source=/dev/null
  . "$env_file"
  set +a
fi
bs=$PW_KAFKA_BOOTSTRAP_SERVERS
export PW_KAFKA_BOOTSTRAP_SERVERS
run=$(date +%s)-$$
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }'; }
field() { sed -n "s/.*[ ^]$1=\([^ ]*\).*/\1/p" <<<" $2"; }

echo "kafka bench: $n messages x $size bytes, dev broker $bs, run $run"

# kcat's input: n lines of exactly size bytes (plus the newline delimiter)
awk -v n="$n" -v s="$size" 'BEGIN {
  pad = sprintf("%" s "s", ""); gsub(/ /, "x", pad)
  for (i = 0; i < n; i++) { l = i " "; print l substr(pad, length(l) + 1) } }' >"$tmp/lines"

# --- produce -----------------------------------------------------------------
out=$("$bin" produce --topic "pw.bench.$run.p" --messages "$n" --size "$size")
[ "$(field msgs "$out")" = "$n" ] || die "project produce: $out"
p_prod=$(field rate "$out")

t0=$(now)
kcat -P -b "$bs" -t "pw.bench.$run.k" -X enable.idempotence=true -X acks=all <"$tmp/lines" ||
  die "kcat -P failed"
t1=$(now)
k_prod=$(rate "$n" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")

# --- consume -----------------------------------------------------------------
out=$("$bin" produce --topic "pw.bench.$run.c" --topics "$ntopics" --messages "$n" --size "$size")
[ "$(field msgs "$out")" = "$n" ] || die "filling the consume topics: $out"
out=$("$bin" consume --topic "pw.bench.$run.c" --topics "$ntopics" --messages "$n" --batch 10000)
[ "$(field msgs "$out")" = "$n" ] || die "project consume: $out"
p_cons=$(field rate "$out")
p_cons_steady=$(field steady_rate "$out")
p_batches=$(field batches "$out")

topics=()
for ((i = 0; i < ntopics; i++)); do topics+=("$(printf 'pw.bench.%s.c.%02d' "$run" "$i")"); done
t0=$(now)
timeout 300 kcat -b "$bs" -G "pw-bench-kcat-$run" -X auto.offset.reset=earliest -e -q \
    -f '%s\n' "${topics[@]}" |
  { IFS= read -r _; t1=$(now); c=$(wc -l); t2=$(now); echo "$t1 $t2 $((c + 1))"; } >"$tmp/kc"
t3=$(now)
read -r t1 t2 lines <"$tmp/kc"
[ "$lines" = "$n" ] || die "kcat -G read $lines of $n messages"
k_cons=$(rate "$n" "$(awk -v a="$t0" -v b="$t3" 'BEGIN { print b - a }')")
k_cons_steady=$(rate "$((n - 1))" "$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
printf '%-28s %12s %12s %8s\n' "msgs/s" project kcat ratio
printf '%-28s %12s %12s %8s\n' "produce" "$p_prod" "$k_prod" "$(ratio "$p_prod" "$k_prod")"
printf '%-28s %12s %12s %8s\n' "consume (total, incl. join)" "$p_cons" "$k_cons" "$(ratio "$p_cons" "$k_cons")"
printf '%-28s %12s %12s %8s\n' "consume (steady)" "$p_cons_steady" "$k_cons_steady" \
  "$(ratio "$p_cons_steady" "$k_cons_steady")"
echo "project consumer committed $p_batches batches"
verdict=$(awk -v a="$p_cons_steady" -v b="$k_cons_steady" 'BEGIN { print (a >= 0.5 * b ? "PASS" : "FAIL") }')
echo "target (consume steady ratio >= 0.50): $verdict"
[ "$verdict" = PASS ]
