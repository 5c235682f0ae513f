#!/usr/bin/env bash
# test_watcher_scaleout.sh: two pw-watcher instances in one consumer group.
#
# it_watcher plays the ingester and the fleet feed (as in test_watcher.sh):
# the worked example, the recabling step of 2026-06-03 (a fleet change on
# perf.fleet-changes.v1, whose one partition the group gives to one member
# only), an improvement and flat filler series, at a fast pace so that points
# can run ahead of the feed. Two rounds, each under a nonce of its own:
#   single  one watcher;
#   scaled  two watchers in one group.
# Checked: in the scaled round both held perf.points.v1 partitions and both
# consumed; only one held the feed partition, and both read the fleet change
# through their own reader of the feed (docs/architecture.md); the
# changepoints and alerts (series, day, CL range, routing, annotation, fleet
# event, stage, levels) are identical to the single round's; and the
# recabling series is annotated infra, routed none, by whichever instance
# holds its partition. The nonce is chosen so that the recabling series'
# points lie on a partition the range assignor gives to the member that does
# not hold the feed's partition (CRC-32 of the key, librdkafka's default
# partitioner); the test reads from the logs who held what and says when
# that did not happen rather than assuming it.
set -euo pipefail

. tests/integration/lib.sh
. tests/integration/lib_scaleout.sh
need_env PW_BUILD PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR
it=$PW_BUILD/tests/it_watcher
watcher=$PW_BUILD/services/watcher/pw-watcher
need_bins "$it" "$watcher"
command -v python3 >/dev/null || { echo "FAIL: python3 not found"; exit 1; }

work=$PW_RUN_DIR/it-watcher-scaleout-$$
mkdir -p "$work"
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
sql() { psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

pids=()
stop_all() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
trap stop_all EXIT

rc_key() { echo "chat-70b/hlo:9f31c2ab.$1/v6e-4/decode.B8.s2048.int8/tpot_p50_ms"; }
partition_of() { python3 -c 'import sys, zlib; print(zlib.crc32(sys.argv[1].encode()) % 12)' "$1"; }

# a nonce whose recabling series lands on points partitions 6..11
base=""
for ((k = 0; k < 200; k++)); do
  cand=ws$$x$k
  [ "$(partition_of "$(rc_key "${cand}b")")" -ge 6 ] && { base=$cand; break; }
done
[ -n "$base" ] || { echo "FAIL: no nonce found"; exit 1; }

held() { so_held_topic "$1" "$2"; }

round() {
  local name=$1 n=$2 nonce=$base$3 i
  local group=it-wso-$nonce
  "$it" start-at-end "$group" || { fail "$name: could not place $group at the topics' end"; return 1; }
  for ((i = 0; i < n; i++)); do
    PW_KAFKA_GROUP_ID=$group PW_HTTP_PORT=0 PW_BATCH_MAX_MS=100 PW_LOG_LEVEL=info \
      "$watcher" >"$work/watcher.$name.$i.log" 2>&1 &
    pids+=($!)
  done
  local deadline=$((SECONDS + 90)) all
  while :; do
    all=1
    for ((i = 0; i < n; i++)); do
      [ -n "$(held "$work/watcher.$name.$i.log" perf.points.v1)" ] || all=0
    done
    [ $all -eq 1 ] && break
    [ $SECONDS -lt $deadline ] || { fail "$name: not every watcher got partitions in 90 s"; return 1; }
    sleep 0.2
  done
  for ((i = 0; i < n; i++)); do
    echo "$name: watcher#$i holds points [$(held "$work/watcher.$name.$i.log" perf.points.v1)]" \
      "feed [$(held "$work/watcher.$name.$i.log" perf.fleet-changes.v1)]"
  done
  # 120 filler series, one day every 30 ms: the points can run ahead of the feed
  "$it" feed "$nonce" 120 30 >"$work/feed.$name.log" 2>&1 || { fail "$name: the feed failed"; cat "$work/feed.$name.log"; return 1; }
  "$it" wait "$group" 180 || { fail "$name: the watchers did not catch up"; return 1; }
  sleep 1 # the outbox is published after the offsets moved; give the last flush a moment
  for ((i = 0; i < n; i++)); do
    held "$work/watcher.$name.$i.log" perf.points.v1 >"$work/held.$name.$i.points"
    held "$work/watcher.$name.$i.log" perf.fleet-changes.v1 >"$work/held.$name.$i.feed"
  done
  stop_all
}

round single 1 a
round scaled 2 b

a=${base}a b=${base}b
# who held what in the scaled round
owner=-1 other=-1
for i in 0 1; do
  log=$work/watcher.scaled.$i.log
  pts=$(cat "$work/held.scaled.$i.points")
  # (the reader starts at the first batch with points)
  judged=$(grep -c '"msg":"reading perf.fleet-changes.v1 from offset' "$log" || true)
  echo "scaled: watcher#$i held points [$pts] and feed [$(cat "$work/held.scaled.$i.feed")] at the end; batches of points: $([ "$judged" -gt 0 ] && echo yes || echo none)"
  [ -n "$pts" ] && [ "$judged" -gt 0 ] || fail "scaled: watcher#$i held no points partition or consumed no points"
  [ "$(cat "$work/held.scaled.$i.feed")" = 0 ] && owner=$i || other=$i
done
[ "$owner" -ge 0 ] && [ "$other" -ge 0 ] && pass "scaled: both watchers held points partitions and consumed; watcher#$owner held the feed's partition, watcher#$other did not" ||
  fail "scaled: the feed partition owner is unclear (owner $owner, other $other)"

# both read the fleet change through their own reader
for i in 0 1; do
  grep -q "fleet change \\\\\"fc-2026-06-03-0007.$b\\\\\" read from the feed" "$work/watcher.scaled.$i.log" &&
    pass "scaled: watcher#$i read the fleet change through its own reader of the feed" ||
    fail "scaled: watcher#$i never read the fleet change through its reader"
done

# the recabling series: who judged it, and how
rk=$(rc_key "$b")
p=$(partition_of "$rk")
judge=-1
for i in 0 1; do
  grep -q "\"changepoint\":\"$rk@" "$work/watcher.scaled.$i.log" && judge=$i
done
# (on a reused stack an earlier round's identical recabling may be the one named)
row=$(sql "SELECT c.annotation, c.routing, c.fleet_event_id LIKE 'fc-2026-06-03-0007.%' FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id) WHERE s.series_key = '$rk'")
echo "scaled: the recabling series is on points partition $p (CRC-32), judged by watcher#$judge: $row"
[ "$row" = "infra|none|t" ] && pass "scaled: the recabling step is annotated infra (its fleet change), routed none" ||
  fail "scaled: the recabling step is \"$row\""
if [ "$judge" = "$other" ] && [ "$judge" -ge 0 ]; then
  pass "scaled: the watcher that judged the recabling series (#$judge) did not hold the feed's partition"
else
  fail "scaled: the recabling series was judged by watcher#$judge, not by the one without the feed partition (#$other)"
fi

# identical results: changepoints and alerts once the nonce is off
cps() {
  sql "SELECT replace(s.series_key, '$1', 'N'), c.day, c.routing, c.annotation, c.direction, c.last_clean_cl,
              c.first_shifted_cl, c.n_cls, c.stage, split_part(c.fleet_event_id, '.', 1),
              round(c.level_before::numeric, 9), round(c.level_after::numeric, 9), round(c.delta_pct::numeric, 9)
         FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id)
        WHERE s.series_key LIKE '%.$1/%' ORDER BY 1, 2"
}
als() {
  sql "SELECT replace(series_key, '$1', 'N'), kind, routing, revision, replace(coalesce(page_route, ''), '$1', 'N')
         FROM perfwatch.alerts WHERE source = 'watcher' AND series_key LIKE '%.$1/%' ORDER BY 1, 2, 4"
}
cps "$a" >"$work/cp.single"; cps "$b" >"$work/cp.scaled"
als "$a" >"$work/alerts.single"; als "$b" >"$work/alerts.scaled"
ncp=$(wc -l <"$work/cp.single") nal=$(wc -l <"$work/alerts.single")
echo "single: $ncp changepoints, $nal alerts; scaled: $(wc -l <"$work/cp.scaled") changepoints, $(wc -l <"$work/alerts.scaled") alerts"
[ "$ncp" -gt 0 ] && cmp -s "$work/cp.single" "$work/cp.scaled" &&
  pass "the same $ncp changepoints with one and two watchers (series, day, CLs, routing, annotation, fleet event, stage, levels)" ||
  { fail "changepoints differ"; diff "$work/cp.single" "$work/cp.scaled" | head -20; }
[ "$nal" -gt 0 ] && cmp -s "$work/alerts.single" "$work/alerts.scaled" &&
  pass "the same $nal alerts with one and two watchers (series, kind, routing, revision, route)" ||
  { fail "alerts differ"; diff "$work/alerts.single" "$work/alerts.scaled" | head -20; }
n=$(sql "SELECT count(*) FROM perfwatch.alerts WHERE source = 'watcher' AND routing = 'page' AND series_key LIKE '%.$b/%'")
[ "$n" = 1 ] && pass "scaled: exactly one page (the worked example)" || fail "scaled: $n pages"

if [ $fails -ne 0 ]; then
  echo "test_watcher_scaleout: $fails check(s) failed (logs in $work)"
  exit 1
fi
rm -rf "$work"
echo "test_watcher_scaleout: all checks passed"
