#!/usr/bin/env bash
# kafka_lag.sh: a consumer lagging PW_LAG_SECONDS (600) behind a full-speed
# replay loses nothing on the dev stack's Kafka node.
#
# pw-sim replays the worked example scaled to PW_LAG_MODELS (112: the fault
# soak's 460,000 samples) at full speed, while the ingester's group exists but
# no ingester runs: its committed offsets stay where `perfwatch group to-end`
# put them, and everything published waits on the broker. When the replay's
# first message is PW_LAG_SECONDS old, one ingester starts and reads the
# whole backlog. Printed: what was published (runs, messages, bytes on the
# broker's disk) and how fast, the backlog's age when the ingester started,
# how long it took to catch up and what was stored; it fails when a run is
# missing or stored twice or the ingester reports data loss (common/pw_kafka.c,
# pw_consumer_loss). The reference in the same run is the publishing rate:
# the backlog is ingested at a ratio of it.
#
# The limit this does not reach: the dev node keeps 1 GiB a partition; a
# replay flooding perf.runs.v1 for longer than that holds (about 12 GiB at
# the rate printed) before a consumer reads it loses the oldest runs, and the
# consumer says so (tests/integration/test_kafka_loss.sh).
#
#   bench/kafka_lag.sh [BUILD_DIR]   (bench/run.sh starts the stack)
# Environment: PW_LAG_SECONDS (600), PW_LAG_MODELS (112).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build}
cd "$repo"
. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR
sim=$build/tools/simulator/pw-sim
pw=$build/tools/perfwatch
ing=$build/services/ingester/pw-ingester
need_bins "$sim" "$pw" "$ing" "$build/tests/it_kafka_admin"
secs=${PW_LAG_SECONDS:-600}
models=${PW_LAG_MODELS:-56}
scn=tools/simulator/scenarios/worked-example.scn
tag=lag$(date +%s)
group=$tag-ingester
work=$(mktemp -d "$PW_RUN_DIR/kafka-lag.XXXXXX")
ing_pid=""
trap '[ -z "$ing_pid" ] || { kill -TERM "$ing_pid" 2>/dev/null; wait "$ing_pid" 2>/dev/null; } || true' EXIT
say() { echo "kafka_lag: $*"; }

"$pw" group to-end "$group" perf.runs.v1 >/dev/null
bytes_before=$(du -sb "$PW_RUN_DIR/kafka/data" | cut -f1)
t0=$SECONDS
p0=$EPOCHREALTIME
out=$("$sim" replay "$scn" --models "$models" --namespace "$tag" --run-prefix "$tag-" 2>"$work/sim.log") ||
  { say "FAIL: the replay failed: $(tail -n 3 "$work/sim.log")"; exit 1; }
published_s=$(awk -v a="$p0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
runs=$(grep -o '"runs":[0-9]*' <<<"$out" | cut -d: -f2)
msgs=$(grep -o '"acknowledged":[0-9]*' <<<"$out" | cut -d: -f2)
bytes=$(($(du -sb "$PW_RUN_DIR/kafka/data" | cut -f1) - bytes_before))
backlog=$("$pw" group lag "$group" perf.runs.v1 | grep -o '"lag":[0-9]*' | cut -d: -f2)
say "published at full speed in ${published_s} s: $runs runs, $msgs messages acknowledged (runs and the" \
  "CL feed), $((bytes / 1048576)) MiB on the broker's disk; the group's lag: $backlog messages"
wait_s=$((secs - (SECONDS - t0)))
[ "$wait_s" -le 0 ] || { say "the group stays behind for another $wait_s s"; sleep "$wait_s"; }
t1=$SECONDS
c0=$EPOCHREALTIME
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$group" "$ing" >"$work/ingester.log" 2>&1 &
ing_pid=$!
"$pw" group lag "$group" --wait 3600 perf.runs.v1 >/dev/null ||
  { say "FAIL: the ingester did not catch up within an hour"; exit 1; }
caught=$(awk -v a="$c0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
kill -TERM "$ing_pid"; wait "$ing_pid" || true; ing_pid=""
stored=$(q "SELECT count(*) FROM perfwatch.runs WHERE run_id LIKE '$tag%'")
twice=$(q "SELECT count(*) - count(DISTINCT (run_id, repeat_index)) FROM perfwatch.runs WHERE run_id LIKE '$tag%'")
lost=$(grep -c '"msg":"data loss' "$work/ingester.log" || true)
say "the ingester started with a backlog $((t1 - t0)) s old and caught up in ${caught} s:" \
  "$stored of $runs runs stored, $twice stored twice, data-loss reports: $lost"
awk -v r="$runs" -v p="$published_s" -v c="$caught" 'BEGIN {
  printf "kafka_lag: published at %.0f runs/s, ingested at %.0f runs/s: %.2f x the publishing rate\n",
         r / p, r / c, p / c }'
[ "$lost" = 0 ] && [ "$stored" = "$runs" ] && [ "$twice" = 0 ] ||
  { say "FAIL: runs missing, stored twice, or loss reported (logs in $work)"; exit 1; }
say "PASS: nothing lost"
rm -rf "$work"
