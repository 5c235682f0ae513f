#!/usr/bin/env bash
# ingest.sh: end-to-end ingest throughput — simulator -> dev broker ->
# ingester -> PostgreSQL (+ series points back to the broker) — for at least
# 1,000,000 samples, against a raw COPY of the same rows into the same
# database in the same run.
#
# The dev broker keeps only ~5 MB per partition, so the replay is cut into
# chunks (quiet-week at 130 models x 4 platforms x 6 configs, one nightly of
# 6 repeats each: 18,720 runs, 143,520 samples, ~18 MB a chunk, ~1.5 MB per
# partition) and a chunk is published when half of the one before the
# previous is stored: between 1.5 and 2.5 chunks wait on the broker (2-4 MB
# a partition), so no worker's partitions run dry, and the backlog never
# exceeds what the broker keeps. The figure
# is samples stored / (last sample stored - first chunk published). The
# reference is the rows this run stored (runs, samples, op_timings) exported
# with COPY TO and COPYed back, timed (see below). Prints one JSON line; the
# target is a ratio >= 0.5 and >= 100,000 samples/s.
#
#   bench/ingest.sh [BUILD_DIR]   (run by bench/run.sh with the stack up)
# Environment: PW_BENCH_COLD (set: no warm-up chunk, see below),
# PW_BENCH_CHUNKS (7), PW_BENCH_INGESTERS (ingester processes,
# default 1), PW_INGEST_WORKERS (worker threads of each, the service's
# ingest.workers, default 2), PW_SIM_BIN, PW_INGESTER_BIN.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${PW_BUILD:-$repo/build}}
sim=${PW_SIM_BIN:-$build/tools/simulator/pw-sim}
ing=${PW_INGESTER_BIN:-$build/services/ingester/pw-ingester}
chunks=${PW_BENCH_CHUNKS:-7}
members=${PW_BENCH_INGESTERS:-1}
for v in PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS; do
  [ -n "${!v:-}" ] || { echo "bench ingest: $v is not set (start the dev stack)" >&2; exit 1; }
done
for b in "$sim" "$ing"; do [ -x "$b" ] || { echo "bench ingest: $b not built" >&2; exit 1; }; done

scn=$repo/tools/simulator/scenarios/quiet-week.scn
scale=(--models 130 --days 1 --repeats 6)
tag="bench$$x$(date +%s)"
prefix="$tag-"
work=$(mktemp -d)
ing_pids=()
q() { psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
cleanup() {
  for p in "${ing_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  q "DROP TABLE IF EXISTS public.${tag}_runs, public.${tag}_samples, public.${tag}_op_timings" >/dev/null 2>&1 || true
  q "DELETE FROM perfwatch.runs WHERE run_id LIKE '${prefix}%'" >/dev/null 2>&1 || true
  [ -z "${PW_BENCH_KEEP:-}" ] && rm -rf "$work" || echo "bench ingest: kept $work" >&2
}
trap cleanup EXIT
json() { grep -o "\"$1\":[0-9.]*" <<<"$2" | head -1 | cut -d: -f2; }
now() { date +%s.%N; }
# Progress comes from the ingesters' own /metrics (samples committed), not
# from PostgreSQL: a count(*) over samples every 100 ms is a sequential scan
# of the whole table that took more CPU than the ingester it was timing.
# The stored rows are counted in PostgreSQL once, at the end.
# A poll is bash alone (/dev/tcp, read, arithmetic): with curl and awk
# forked four times a second the poll took 8% of the two cores (perf).
ports=()
acc=0 idle_members=0
poll_accepted() { # sets acc: samples the ingesters committed; idle_members: ingesters with none
  local p fd line v mine
  acc=0 idle_members=0
  for p in "${ports[@]}"; do
    exec {fd}<>"/dev/tcp/127.0.0.1/$p"
    printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&"$fd"
    mine=0
    while IFS= read -r line <&"$fd"; do
      case $line in
        "perfwatch_ingester_samples_accepted_total "*) v=${line#* }; mine=$((mine + ${v%$'\r'})) ;;
      esac
    done
    exec {fd}<&-
    acc=$((acc + mine))
    [ "$mine" -gt 0 ] || idle_members=$((idle_members + 1))
  done
}
exec {snooze_fd}<> <(:)
snooze() { read -rt "$1" -u "$snooze_fd" || true; } # sleep without a fork
# wait_accepted N EVERY LIMIT WHAT: polls every EVERY s until the ingesters
# have committed N samples (absolute); fails, saying WHAT, if one exits or
# after LIMIT s
wait_accepted() {
  local until=$((SECONDS + $3)) p
  while poll_accepted; [ "$acc" -lt "$1" ]; do
    for p in "${ing_pids[@]}"; do
      kill -0 "$p" 2>/dev/null || { echo "bench ingest: an ingester exited" >&2; tail -5 "$work"/ing.*.log >&2; exit 1; }
    done
    [ $SECONDS -lt $until ] || { echo "bench ingest: $4: $((acc - base)) samples stored" >&2; exit 1; }
    snooze "$2"
  done
}
base=0

per=$(json samples "$("$sim" count "$scn" "${scale[@]}")")
total=$((per * chunks))
[ "$total" -ge 1000000 ] || { echo "bench ingest: only $total samples" >&2; exit 1; }

# the ingester, joined to its group and caught up with whatever the topic already holds
# The group starts at the topic's end: what earlier runs left on the broker
# (whose rows their cleanup deleted) is not this run's work.
export PW_KAFKA_GROUP_ID="bench-ingest-$$" PW_HTTP_PORT=0 PW_HTTP_LISTEN=127.0.0.1 \
  PW_KAFKA_AUTO_OFFSET_RESET=latest
for m in $(seq 1 "$members"); do
  "$ing" >"$work/ing.$m.log" 2>&1 &
  ing_pids+=($!)
done
warm=(--models 1 --days 1 --repeats 1)
warm_n=$(json samples "$("$sim" count "$scn" "${warm[@]}")")
for m in $(seq 1 "$members"); do
  until p=$(grep -o '"http_port":"[0-9]*"' "$work/ing.$m.log" | head -1 | grep -o '[0-9]*'); do
    kill -0 "${ing_pids[$((m - 1))]}" 2>/dev/null || { echo "bench ingest: an ingester exited" >&2; tail -5 "$work/ing.$m.log" >&2; exit 1; }
    sleep 0.1
  done
  ports+=("$p")
done
# warm-up: replay one small model until the group has joined and stored all
# of one replay (a replay published before the partitions were assigned is
# skipped, as latest says), and every ingester process stored some of one: a
# process that joined after the others did so in a rebalance that the dev
# broker may take ~45 s to finish, and the warm chunk below must reach its
# series cache too
for w in $(seq 1 90); do
  poll_accepted; before=$acc
  env -u PW_KAFKA_GROUP_ID "$sim" replay "$scn" "${warm[@]}" --run-prefix "${prefix}warm$w-" >/dev/null 2>&1
  for _ in $(seq 1 20); do
    poll_accepted
    [ "$acc" -ge $((before + warm_n)) ] && [ "$idle_members" -eq 0 ] && break 2
    snooze 0.1
  done
  [ "$w" -lt 90 ] || { echo "bench ingest: not every ingester stored a warm-up replay" >&2; exit 1; }
done
# Steady state (the default): one whole chunk is ingested before the clock
# starts, so that the fleet's 23,920 series exist and the ingesters' cache
# and PostgreSQL's buffers hold them, as in a service that has run for more
# than a day. Its batches took twice as long as the later ones (series
# created, buffers first touched) and ~1.5 s of an 11 s run. PW_BENCH_COLD=1
# times from a database that has never seen the fleet instead.
regime=cold
if [ -z "${PW_BENCH_COLD:-}" ]; then
  regime=steady
  poll_accepted; before=$acc
  env -u PW_KAFKA_GROUP_ID "$sim" replay "$scn" "${scale[@]}" --run-prefix "${prefix}warmday-" >/dev/null 2>>"$work/sim.log"
  wait_accepted $((before + per)) 0.1 300 "the warm-up chunk was not stored"
fi
q "DELETE FROM perfwatch.runs WHERE run_id LIKE '${prefix}warm%'" >/dev/null
poll_accepted; base=$acc

# the machine's CPU over the ingest, from /proc/stat (busy = user + nice +
# system + irq + softirq; steal = taken by the hypervisor): how saturated the
# two cores were, and whether a slow run was this machine's neighbours
cpu_ticks() { local _ u n sy id io irq sirq st; read -r _ u n sy id io irq sirq st _ </proc/stat; echo "$((u + n + sy + irq + sirq)) $((id + io)) $st"; }
ing_ticks() { local p t=0 f; for p in "${ing_pids[@]}"; do read -ra f <"/proc/$p/stat"; t=$((t + f[13] + f[14])); done; echo "$t"; }
read -r busy0 idle0 steal0 <<<"$(cpu_ticks)"
ing0=$(ing_ticks)
t0=$(now)
for c in $(seq 1 "$chunks"); do
  env -u PW_KAFKA_GROUP_ID "$sim" replay "$scn" "${scale[@]}" --run-prefix "${prefix}c$c-" >/dev/null 2>>"$work/sim.log"
  # publish the next chunk once half of the chunk before this one is in:
  # with one chunk of backlog, a worker whose partitions were drained first
  # waited for the next chunk (0.1-0.2 s, several times a run)
  wait_accepted $((base + (c - 2) * per + per / 2)) 0.25 600 "chunk $c stalled"
done
wait_accepted $((base + total)) 0.1 600 "not all $total samples were stored"
stored=$((acc - base))
t1=$(now)
read -r busy1 idle1 steal1 <<<"$(cpu_ticks)"
ing1=$(ing_ticks)
hz=$(getconf CLK_TCK)
got=$(q "SELECT count(*) FROM perfwatch.samples WHERE run_id LIKE '${prefix}c%'")
[ "$got" -eq "$total" ] || { echo "bench ingest: the ingesters counted $stored samples, PostgreSQL holds $got of $total" >&2; exit 1; }
ingest_s=$(echo "$t1 - $t0" | bc -l)
# peak resident memory of the ingesters: bounded by the batch and librdkafka's
# prefetch queue (queued.max.messages.kbytes), not by the backlog
rss_kb=0
for p in "${ing_pids[@]}"; do
  k=$(awk '/^VmHWM:/ { print $2 }' "/proc/$p/status")
  [ "$k" -le "$rss_kb" ] || rss_kb=$k
done

# The same rows by raw COPY, same database, same run, two ways:
#  - live: deleted from the real tables (vacuumed, untimed) and COPYed back
#    into them, so the reference pays the same index maintenance on tables of
#    the same size as the ingester did — the ratio's reference;
#  - empty: COPYed into empty tables created LIKE the real ones with their
#    indexes, the best case PostgreSQL can do, shown beside it.
for t in runs samples op_timings; do
  psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "\\copy (SELECT * FROM perfwatch.$t WHERE run_id LIKE '${prefix}%') TO '$work/$t.copy'"
done
runs=$(wc -l <"$work/runs.copy"); ops=$(wc -l <"$work/op_timings.copy")
copy_in() { # SCHEMA.PREFIX: times one COPY of each file into SCHEMA.PREFIX{runs,samples,op_timings}
  local c0 c1
  c0=$(now)
  for t in runs samples op_timings; do
    psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "\\copy $1$t FROM '$work/$t.copy'"
  done
  c1=$(now)
  echo "$c1 - $c0" | bc -l
}
q "DELETE FROM perfwatch.runs WHERE run_id LIKE '${prefix}%'" >/dev/null
q "VACUUM perfwatch.runs, perfwatch.samples, perfwatch.op_timings" >/dev/null
copy_s=$(copy_in perfwatch.)
for t in runs samples op_timings; do q "CREATE TABLE public.${tag}_$t (LIKE perfwatch.$t INCLUDING ALL)"; done
empty_s=$(copy_in "public.${tag}_")
awk -v regime="$regime" -v m="$members" -v w="${PW_INGEST_WORKERS:-2}" -v n="$got" -v r="$runs" -v o="$ops" -v ti="$ingest_s" -v tc="$copy_s" -v te="$empty_s" -v rss="$rss_kb" \
  -v busy=$(( busy1 - busy0 )) -v idle=$(( idle1 - idle0 )) -v steal=$(( steal1 - steal0 )) -v ingc=$(( ing1 - ing0 )) -v hz="$hz" 'BEGIN {
  ir = n / ti; cr = n / tc; er = n / te;
  printf "{\"bench\":\"ingest\",\"regime\":\"%s\",\"ingesters\":%d,\"workers\":%d,\"samples\":%d,\"runs\":%d,\"op_rows\":%d,\"ingest_s\":%.2f,\"ingest_samples_per_s\":%.0f,\"raw_copy_s\":%.2f,\"raw_copy_samples_per_s\":%.0f,\"ratio\":%.3f,\"raw_copy_empty_s\":%.2f,\"raw_copy_empty_samples_per_s\":%.0f,\"ratio_empty\":%.3f,\"ingester_peak_rss_mb\":%.1f,\"cpu_busy_s\":%.2f,\"cpu_idle_s\":%.2f,\"cpu_steal_s\":%.2f,\"ingester_cpu_s\":%.2f,\"machine_cpu_us_per_sample\":%.2f}\n", regime, m, w, n, r, o, ti, ir, tc, cr, ir / cr, te, er, ir / er, rss / 1024, busy / hz, idle / hz, steal / hz, ingc / hz, busy / hz / n * 1e6 }'
