#!/usr/bin/env bash
# test_watcher.sh: pw-watcher on the real stack — the worked example's
# changepoint with its CL range, routed page; the recabling step annotated
# infra with no regression alert; an improvement queued; hostile Baselines
# dead-lettered with their reasons; and a watcher killed
# with SIGKILL mid-replay and restarted that loses no changepoint and emits
# none twice (rows and messages counted).
#
# Run by tests/integration/run.sh with the dev stack up and run/stack.env
# loaded. tests/integration/it_watcher.c plays the ingester (series, runs and
# samples rows, then SeriesPoints) and the fleet feed, and reads the topics
# back. The simulator is not used (see docs/watcher.md).
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR
it=$PW_BUILD/tests/it_watcher
watcher=$PW_BUILD/services/watcher/pw-watcher
need_bins "$it" "$watcher"

nonce=w$$x$RANDOM
group=it-watcher-$nonce
work=$PW_RUN_DIR/it-watcher-$nonce
mkdir -p "$work"
failures=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
sql() { psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

wpid=""
start_watcher() {
  PW_KAFKA_GROUP_ID=$group PW_HTTP_PORT=0 PW_BATCH_MAX_MS=100 PW_LOG_LEVEL=info \
    "$watcher" >>"$work/watcher.log" 2>&1 &
  wpid=$!
}
cleanup() {
  [ -z "$wpid" ] || kill -TERM "$wpid" 2>/dev/null || true
  [ -z "$wpid" ] || wait "$wpid" 2>/dev/null || true
  [ -z "${fpid:-}" ] || kill -TERM "$fpid" 2>/dev/null || true
}
trap cleanup EXIT

series_like="%.$nonce/%"
cp_rows() { sql "SELECT count(*) FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id) WHERE s.series_key LIKE '$series_like'"; }

# start where the shared topics end now: earlier tests' points are not ours
"$it" start-at-end "$group" || { fail "could not place $group at the topics' end"; exit 1; }
start_watcher
# the feed runs at the pace of a fleet, one nightly every 150 ms
"$it" feed "$nonce" 150 150 >"$work/feed.log" 2>&1 &
fpid=$!

# kill -9 once the recabling step is stored: the improvement is behind it,
# the worked example still ahead
deadline=$((SECONDS + 90))
until [ "$(sql "SELECT count(*) FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id) WHERE s.series_key LIKE 'chat-70b/%.$nonce/%'")" -ge 1 ]; do
  [ $SECONDS -lt $deadline ] || { fail "the recabling step was not stored within 90 s"; tail -20 "$work/watcher.log"; exit 1; }
  kill -0 "$wpid" 2>/dev/null || { fail "pw-watcher exited"; tail -20 "$work/watcher.log"; exit 1; }
  sleep 0.2
done
kill -KILL "$wpid"
wait "$wpid" 2>/dev/null || true
before_kill=$(cp_rows)
echo "killed pw-watcher with $before_kill changepoints stored"
sleep 1
start_watcher

wait "$fpid" || { fail "the feed failed"; cat "$work/feed.log"; exit 1; }
fpid=""
# the door of perf.baselines.v1: five bad Baselines, a tombstone and a good one
"$it" baselines "$nonce" || fail "could not publish the baselines"
"$it" wait "$group" 120 || { fail "pw-watcher did not catch up"; tail -20 "$work/watcher.log"; exit 1; }
"$it" wait "$group" 60 perf.baselines.v1 || { fail "pw-watcher did not read the baselines"; tail -20 "$work/watcher.log"; exit 1; }
# the outbox is published before offsets are committed; give the last flush a moment
sleep 1
port=$(grep -o '"msg":"serving /healthz /readyz /metrics on [^"]*' "$work/watcher.log" | tail -1 | sed 's/.*://')
metrics=$(curl -fsS "http://127.0.0.1:$port/metrics" || true)
kill -TERM "$wpid"; wait "$wpid" || fail "pw-watcher did not stop cleanly on SIGTERM"
wpid=""

"$it" count "$nonce" >"$work/messages.txt"
cat "$work/messages.txt"

# worked example
we="chat-8b/hlo:9f31c2ab.$nonce/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"
# the levels are segment medians of noisy nightlies (MAD 0.017 ms): +8.2% within a point
row=$(sql "SELECT last_clean_cl, first_shifted_cl, n_cls, day, routing, annotation, c.direction,
                  c.delta_pct BETWEEN 7.2 AND 9.2, abs(level_before - 3.90) < 0.02, abs(level_after - 4.22) < 0.03
             FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id) WHERE s.series_key = '$we'")
[ "$row" = "cl/7841885|cl/7841923|38|2026-06-17|page|none|regression|t|t|t" ] &&
  pass "worked example: one changepoint cl/7841885..cl/7841923 (38 CLs) on 2026-06-17, 3.90 -> 4.22 ms, page" ||
  fail "worked example row: \"$row\""
grep -q "^cp $we@xla-nightly-2026-06-17 routing=page annotation=1 lo=cl/7841885 hi=cl/7841923 n_cls=38 day=2026-06-17 direction=1 " "$work/messages.txt" &&
  pass "worked example: Changepoint published with the CL range, routed page" ||
  fail "worked example: no matching Changepoint message"
grep -q "^alert watch-[0-9]*@xla-nightly-2026-06-17 kind=1 routing=page page=ml-perf-triage cp=$we@" "$work/messages.txt" &&
  pass "worked example: regression Alert paging ml-perf-triage" || fail "worked example: no paging Alert"

# recabling
rc_key="chat-70b/hlo:9f31c2ab.$nonce/v6e-4/decode.B8.s2048.int8/tpot_p50_ms"
# (on a reused stack an earlier run's identical recabling may be the one named)
row=$(sql "SELECT day, annotation, routing, fleet_event_id LIKE 'fc-2026-06-03-0007.%' FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id) WHERE s.series_key = '$rc_key'")
[ "$row" = "2026-06-03|infra|none|t" ] &&
  pass "recabling: the +0.7% step on 2026-06-03 is annotated infra (fc-2026-06-03-0007), routed none" ||
  fail "recabling row: \"$row\""
n=$(sql "SELECT count(*) FROM perfwatch.alerts WHERE series_key = '$rc_key' AND (kind = 'regression' OR routing <> 'none')")
[ "$n" = 0 ] && pass "recabling: no regression alert and nothing routed" || fail "recabling: $n regression/routed alerts"
grep -q "^alert watch-[0-9]*@xla-nightly-2026-06-03 kind=3 routing=none page= " "$work/messages.txt" &&
  pass "recabling: its Alert is infra_health, routed none" || fail "recabling: no infra_health Alert message"

# improvement (higher is better, tail tier)
im_key="code-34b/hlo:9f31c2ab.$nonce/v6e-4/prefill.s8192.bf16/goodput_tok_s_chip"
row=$(sql "SELECT day, c.direction, routing FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id) WHERE s.series_key = '$im_key'")
[ "$row" = "2026-05-25|improvement|queue" ] && pass "improvement: emitted, marked improvement, queued" ||
  fail "improvement row: \"$row\""

# the clean twin
n=$(sql "SELECT count(*) FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id) WHERE s.series_key = 'chat-8b/hlo:9f31c2ab.$nonce/v5e-8/decode.B64.s2048.int8/tpot_p50_ms'")
[ "$n" = 0 ] && pass "the v5e-8 twin stays clean" || fail "the v5e-8 twin has $n changepoints"

# restart: nothing lost, nothing twice
rows=$(cp_rows)
alert_rows=$(sql "SELECT count(*) FROM perfwatch.alerts WHERE source = 'watcher' AND series_key LIKE '$series_like'")
# a shift the early rule reported provisionally has a second message once PELT
# confirmed it (or it was withdrawn): the same changepoint id, the next stage,
# the same alert id at revision 2 (docs/watcher.md "Early rule")
moved=$(sql "SELECT count(*) FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id) WHERE s.series_key LIKE '$series_like' AND (stage = 'withdrawn' OR (stage = 'confirmed' AND confirmed_at > first_reported_at))")
cp_msgs=$(grep -c '^cp ' "$work/messages.txt" || true)
cp_distinct=$(grep '^cp ' "$work/messages.txt" | awk '{print $2, $NF}' | sort -u | wc -l)
al_msgs=$(grep -c '^alert ' "$work/messages.txt" || true)
al_distinct=$(grep '^alert ' "$work/messages.txt" | awk '{print $2, $NF}' | sort -u | wc -l)
unpublished=$(sql "SELECT count(*) FROM perfwatch.outbox WHERE service = 'watcher' AND published_at IS NULL AND message_key LIKE '$series_like'")
echo "changepoint rows $rows (before the kill $before_kill), alert rows $alert_rows, Changepoint messages $cp_msgs ($cp_distinct distinct), Alert messages $al_msgs ($al_distinct distinct), unpublished $unpublished"
[ "$rows" -gt "$before_kill" ] && pass "changepoints were found after the restart too" || fail "nothing found after the restart"
[ "$cp_msgs" = "$((rows + moved))" ] && [ "$cp_distinct" = "$((rows + moved))" ] &&
  pass "one Changepoint message per stored changepoint and stage ($rows rows, $moved confirmed after a provisional report), none twice" ||
  fail "Changepoint messages $cp_msgs ($cp_distinct distinct) for $rows rows + $moved moved"
[ "$al_msgs" = "$((alert_rows + moved))" ] && [ "$al_distinct" = "$((alert_rows + moved))" ] && [ "$alert_rows" = "$rows" ] &&
  pass "one Alert message per alert row and revision ($alert_rows), none twice" ||
  fail "Alert messages $al_msgs ($al_distinct distinct) for $alert_rows rows + $moved moved"
we_stage=$(sql "SELECT stage || ' ' || points_first || ' ' || coalesce(points_confirmed::text, '-') FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id) WHERE s.series_key = '$we'")
echo "worked example: stage, points of the new level when first reported and when confirmed: $we_stage"
# (when the kill -9 falls before its third shifted nightly the early rule
# reports it there; when the restart reloads a longer history, PELT does at once)
[ "${we_stage%% *}" = confirmed ] && pass "worked example: confirmed" ||
  fail "worked example: stage/latency \"$we_stage\""
[ "$unpublished" = 0 ] && pass "the outbox is empty" || fail "$unpublished outbox rows unpublished"
n=$(sql "SELECT count(*) FROM perfwatch.alerts WHERE source = 'watcher' AND routing = 'page' AND series_key LIKE '$series_like'")
[ "$n" = 1 ] && pass "exactly one page (the worked example) among $((150 + 4)) series" || fail "$n pages"
n=$(sql "SELECT count(*) FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id) WHERE s.series_key LIKE '%.f%/%' AND s.series_key LIKE '$series_like'")
echo "flat filler series with a (queued) changepoint: $n of 150"

# the picture (needs `series plot` dispatched by cmd_series.c)
cli=$PW_BUILD/tools/perfwatch
if [ -x "$cli" ] && "$cli" series plot --help >/dev/null 2>&1; then
  if "$cli" series plot "$we" -o "$work/worked-example.svg"; then
    svg=$work/worked-example.svg
    [ "$(grep -c '<circle class="point"' "$svg")" = 56 ] && grep -q '>cl/7841885..cl/7841923</text>' "$svg" &&
      [ "$(grep -c '<line class="changepoint"' "$svg")" = 1 ] &&
      pass "series plot: 56 points and the changepoint with its CL range ($svg)" ||
      fail "series plot: unexpected SVG $svg"
    "$cli" series plot "$rc_key" -o "$work/recabling.svg" && grep -q '<line class="fleet-change"' "$work/recabling.svg" &&
      pass "series plot: the recabling series shows its fleet-change mark" || fail "series plot: no fleet-change mark"
  else
    fail "series plot failed"
  fi
else
  echo "skip: perfwatch series plot is not dispatched in this build"
fi

# the baselines' door: the refused ones dead-lettered with their reason, the tombstone and the good one not
row=$(sql "SELECT string_agg(convert_from(original_key, 'UTF8') || '=' || reason, ' ' ORDER BY original_key)
             FROM perfwatch.dead_letters WHERE source_topic = 'perf.baselines.v1'
              AND convert_from(original_key, 'UTF8') LIKE 'bl-door.$nonce/%'")
want="bl-door.$nonce/1-no-state=missing_field bl-door.$nonce/2-state-42=invalid_value bl-door.$nonce/3-event-64=invalid_value bl-door.$nonce/4-nul-key=invalid_value bl-door.$nonce/5-junk=decode_failed"
[ "$row" = "$want" ] && pass "baselines: 5 refused, dead-lettered with their reasons; the tombstone and the good one taken" ||
  fail "baselines dead-lettered: \"$row\""
grep -q '^perfwatch_watcher_dead_letters_total{topic="perf.baselines.v1"} 5$' <<<"$metrics" &&
  pass "/metrics counts the 5 baselines dead-lettered" || fail "/metrics: $(grep 'dead_letters_total{topic="perf.baselines' <<<"$metrics")"

# metrics
for m in perfwatch_watcher_points_total perfwatch_watcher_changepoints_total perfwatch_watcher_append_seconds_bucket; do
  grep -q "^$m" <<<"$metrics" && pass "/metrics has $m" || fail "/metrics lacks $m"
done

[ $failures -eq 0 ] || { echo "test_watcher: $failures failures; watcher log in $work/watcher.log"; exit 1; }
echo "test_watcher: all checks passed"
