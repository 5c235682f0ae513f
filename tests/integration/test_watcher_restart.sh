#!/usr/bin/env bash
# test_watcher_restart.sh: a pw-watcher killed with SIGKILL that stays down
# while the ingester goes on, and is then restarted, records the changepoints
# an uninterrupted watcher records (issue 19: the fault harness's --models 56
# run, whose faulted watcher recorded none of the reference's 20 early
# reports on the 2026-06-17 shift).
#
# Two runs of the same feed (tests/integration/it_watcher.c feed-days: the
# worked example's series and the fault run's chat-8b cost_per_mtok_usd
# series, through 2026-06-23), each under its own nonce and consumer group:
#   reference  one watcher reads every nightly as it comes;
#   faulted    the watcher reads to 2026-06-16, is killed with SIGKILL, the
#              nightlies 06-17..06-23 are stored and published while it is
#              down, and the restarted watcher loads every series from
#              PostgreSQL at its first point (seven shifted nightlies in it).
#   handover   one watcher reads to 2026-06-14; a second joins its group and
#              takes half the partitions over 06-15..06-19, then leaves; the
#              first, which held those series before, reads the rest (it
#              drops its series at a revocation and loads them again).
# Their changepoints (series, first shifted build, stage, routing,
# annotation; the nonce taken out) must be the same.
#
# Run by tests/integration/run.sh with the dev stack up and run/stack.env loaded.
set -euo pipefail

. tests/integration/lib.sh
. tests/integration/lib_scaleout.sh
need_env PW_BUILD PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR
it=$PW_BUILD/tests/it_watcher
watcher=$PW_BUILD/services/watcher/pw-watcher
need_bins "$it" "$watcher"

tag=$$x$RANDOM
work=$PW_RUN_DIR/it-watcher-restart-$tag
mkdir -p "$work"
failures=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
sql() { psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

FILLER=8
DAY_MS=40
SHIFT_DAY=47 # 2026-06-17
LAST_DAY=53  # 2026-06-23

wpid=""
# start_watcher GROUP LOG
start_watcher() {
  PW_KAFKA_GROUP_ID=$1 PW_HTTP_PORT=0 PW_BATCH_MAX_MS=100 PW_LOG_LEVEL=info \
    "$watcher" >>"$2" 2>&1 &
  wpid=$!
  all_pids+=("$wpid")
}
stop_watcher() {
  kill -TERM "$wpid"
  wait "$wpid" || fail "pw-watcher did not stop cleanly on SIGTERM"
  wpid=""
}
# every watcher started, also the handover's first one while the second runs
all_pids=()
cleanup() {
  local p
  for p in "${all_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${all_pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# feed NONCE FROM TO
feed() {
  "$it" feed-days "$1" "$FILLER" "$DAY_MS" "$2" "$3" >>"$work/feed-$1.log" 2>&1 ||
    { fail "the feed of $1 (days $2..$3) failed"; cat "$work/feed-$1.log"; exit 1; }
}
# caught_up GROUP LOG
caught_up() {
  "$it" wait "$1" 120 || { fail "pw-watcher ($1) did not catch up"; tail -20 "$2"; exit 1; }
  # the outbox is published before offsets are committed; give the last flush a moment
  sleep 0.5
}
# changepoints NONCE: one line per changepoint, the nonce replaced by NS
changepoints() {
  sql "SELECT replace(s.series_key, '$1', 'NS') || ' ' || c.first_shifted_build_id || ' ' || c.stage
              || ' ' || c.routing || ' ' || c.annotation
         FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id)
        WHERE s.series_key LIKE '%.$1/%' ORDER BY 1"
}

# --- reference: every nightly streamed
ref=wrr$tag
"$it" start-at-end "it-watcher-$ref" || { fail "could not place it-watcher-$ref at the topics' end"; exit 1; }
start_watcher "it-watcher-$ref" "$work/watcher-ref.log"
feed "$ref" 0 "$LAST_DAY"
caught_up "it-watcher-$ref" "$work/watcher-ref.log"
stop_watcher
changepoints "$ref" >"$work/ref.txt"

# --- faulted: killed before the shift, restarted with the shift stored
flt=wrf$tag
"$it" start-at-end "it-watcher-$flt" || { fail "could not place it-watcher-$flt at the topics' end"; exit 1; }
start_watcher "it-watcher-$flt" "$work/watcher-flt.log"
feed "$flt" 0 $((SHIFT_DAY - 1))
caught_up "it-watcher-$flt" "$work/watcher-flt.log"
kill -KILL "$wpid"
wait "$wpid" 2>/dev/null || true
wpid=""
echo "killed pw-watcher at 2026-06-16 with $(changepoints "$flt" | grep -c . || true) changepoints stored"
feed "$flt" "$SHIFT_DAY" "$LAST_DAY"
start_watcher "it-watcher-$flt" "$work/watcher-flt.log"
caught_up "it-watcher-$flt" "$work/watcher-flt.log"
stop_watcher
changepoints "$flt" >"$work/flt.txt"

# --- handover: a second member takes half the partitions over the shift, then leaves
# (the first member's entries of those series would miss what the second took; it loads
# them again from PostgreSQL after the revocation). The nonce puts the worked example's
# series on partitions 0..5 and the fault run's on 6..11, so one of them is on the
# second member's half whichever half it gets.
partition_of() { python3 -c 'import sys, zlib; print(zlib.crc32(sys.argv[1].encode()) % 12)' "$1"; }
hov=""
for ((k = 0; k < 400; k++)); do
  c=wrh$tag$k
  pw=$(partition_of "chat-8b/hlo:9f31c2ab.$c/v6e-4/decode.B64.s2048.int8/tpot_p50_ms")
  pf=$(partition_of "chat-8b/hlo:9f31c2ab.$c/v6e-4/decode.B64.s2048.int8/cost_per_mtok_usd")
  [ "$pw" -lt 6 ] && [ "$pf" -ge 6 ] && { hov=$c; break; }
done
[ -n "$hov" ] || { fail "no handover nonce found"; exit 1; }
# points_held LOG: how many perf.points.v1 partitions the member holds now
points_held() { so_held_topic "$1" perf.points.v1 | tr ',' '\n' | grep -c . || true; }
wait_held() { # LOG N
  local deadline=$((SECONDS + 90))
  until [ "$(points_held "$1")" = "$2" ]; do
    [ $SECONDS -lt $deadline ] || { fail "a member did not come to hold $2 points partitions in 90 s ($(points_held "$1"))"; exit 1; }
    sleep 0.3
  done
}
"$it" start-at-end "it-watcher-$hov" || { fail "could not place it-watcher-$hov at the topics' end"; exit 1; }
start_watcher "it-watcher-$hov" "$work/watcher-hov-a.log"
apid=$wpid
wait_held "$work/watcher-hov-a.log" 12
feed "$hov" 0 $((SHIFT_DAY - 3))
caught_up "it-watcher-$hov" "$work/watcher-hov-a.log"
start_watcher "it-watcher-$hov" "$work/watcher-hov-b.log"
bpid=$wpid
wait_held "$work/watcher-hov-b.log" 6
wait_held "$work/watcher-hov-a.log" 6
feed "$hov" $((SHIFT_DAY - 2)) $((SHIFT_DAY + 2))
caught_up "it-watcher-$hov" "$work/watcher-hov-b.log"
wpid=$bpid
stop_watcher
wait_held "$work/watcher-hov-a.log" 12
echo "handover: a second watcher held half the partitions over 2026-06-15..06-19, then left"
feed "$hov" $((SHIFT_DAY + 3)) "$LAST_DAY"
wpid=$apid
caught_up "it-watcher-$hov" "$work/watcher-hov-a.log"
stop_watcher
changepoints "$hov" >"$work/hov.txt"
grep -q "every series is loaded again from PostgreSQL" "$work/watcher-hov-a.log" &&
  pass "handover: the first watcher dropped its series after the revocations" ||
  fail "handover: the first watcher never said it dropped its series after a revocation"

echo "reference:"; sed 's/^/  /' "$work/ref.txt"
echo "faulted:"; sed 's/^/  /' "$work/flt.txt"
echo "handover:"; sed 's/^/  /' "$work/hov.txt"
if diff -u "$work/ref.txt" "$work/hov.txt" >"$work/diff-hov.txt"; then
  pass "after the handover the first watcher recorded the reference's changepoints"
else
  fail "after the handover the changepoints differ from the reference's:"
  sed 's/^/  /' "$work/diff-hov.txt"
fi

fault_series="chat-8b/hlo:9f31c2ab.NS/v6e-4/decode.B64.s2048.int8/cost_per_mtok_usd xla-nightly-2026-06-17 "
we="chat-8b/hlo:9f31c2ab.NS/v6e-4/decode.B64.s2048.int8/tpot_p50_ms xla-nightly-2026-06-17 "
grep -q "^$fault_series" "$work/ref.txt" &&
  pass "reference: the fault run's series has its 2026-06-17 shift ($(grep "^$fault_series" "$work/ref.txt" | cut -d' ' -f3-))" ||
  fail "reference: no 2026-06-17 changepoint on the fault run's series"
grep -q "^$we" "$work/ref.txt" && pass "reference: the worked example's 2026-06-17 shift" ||
  fail "reference: no worked example changepoint"
if diff -u "$work/ref.txt" "$work/flt.txt" >"$work/diff.txt"; then
  pass "the restarted watcher recorded the reference's $(grep -c . "$work/ref.txt") changepoints, stage, routing and annotation"
else
  fail "the restarted watcher's changepoints differ from the reference's:"
  sed 's/^/  /' "$work/diff.txt"
fi
n=$(sql "SELECT count(*) FROM perfwatch.outbox WHERE service = 'watcher' AND published_at IS NULL
           AND (message_key LIKE '%.$ref/%' OR message_key LIKE '%.$flt/%')")
[ "$n" = 0 ] && pass "the outbox is empty" || fail "$n outbox rows unpublished"

[ $failures -eq 0 ] || { echo "test_watcher_restart: $failures failures; logs in $work"; exit 1; }
echo "test_watcher_restart: all checks passed"
