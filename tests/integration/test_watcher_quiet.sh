#!/usr/bin/env bash
# test_watcher_quiet.sh: the false-page budget end to end — the simulator's
# quiet-week scenario at the seed's scale (~4,000 nightly series: 24 models ×
# 4 platforms × 6 configs × their metrics) through pw-ingester into
# pw-watcher, every model top tier (the strictest routing): at most 5 alerts
# routed to page in any week (§1, §4.4).
#
# Run by tests/integration/run.sh. The replay carries its own namespace
# (pw-sim --namespace), so its series are new whatever ran on the stack
# before.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR
sim=$PW_BUILD/tools/simulator/pw-sim
ingester=$PW_BUILD/services/ingester/pw-ingester
watcher=$PW_BUILD/services/watcher/pw-watcher
it=$PW_BUILD/tests/it_watcher
need_bins "$sim" "$ingester" "$watcher" "$it"

nonce=q$$x$RANDOM
work=$PW_RUN_DIR/it-watcher-quiet-$nonce
mkdir -p "$work"
sql() { psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

start_ts=$(sql "SELECT now()")
# both groups start where the shared topics end now: earlier tests' runs and
# points are not this test's
"$it" start-at-end "it-ingester-$nonce" perf.runs.v1 || { echo "FAIL: placing the ingester group"; exit 1; }
"$it" start-at-end "it-watcher-$nonce" || { echo "FAIL: placing the watcher group"; exit 1; }
PW_KAFKA_GROUP_ID=it-ingester-$nonce PW_HTTP_PORT=0 "$ingester" >"$work/ingester.log" 2>&1 &
pids+=($!)
PW_KAFKA_GROUP_ID=it-watcher-$nonce PW_HTTP_PORT=0 "$watcher" >"$work/watcher.log" 2>&1 &
pids+=($!)

# every model of the scenario top tier: every regression would page
"$sim" dump tools/simulator/scenarios/quiet-week.scn --models 24 --namespace "$nonce" --limit 100000 |
  grep -o '"model":"[^"]*"' | sort -u | sed 's/"model":"\(.*\)"/\1/' >"$work/models.txt"
while read -r m; do
  sql "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES ('$m', 0.01, 'top', 'test_watcher_quiet')
       ON CONFLICT (model) DO UPDATE SET tier = 'top'" >/dev/null
done <"$work/models.txt"
echo "models, all top tier: $(wc -l <"$work/models.txt")"

start=$SECONDS
"$sim" replay tools/simulator/scenarios/quiet-week.scn --models 24 --namespace "$nonce" --run-prefix "$nonce-" >"$work/sim.json"
echo "replayed in $((SECONDS - start)) s: $(cat "$work/sim.json")"
"$it" wait "it-ingester-$nonce" 150 perf.runs.v1 || { echo "FAIL: pw-ingester did not catch up"; tail -5 "$work/ingester.log"; exit 1; }
"$it" wait "it-watcher-$nonce" 150 || { echo "FAIL: pw-watcher did not catch up"; tail -5 "$work/watcher.log"; exit 1; }
echo "ingested and watched in $((SECONDS - start)) s"
port=$(grep -o '"msg":"serving /healthz /readyz /metrics on [^"]*' "$work/watcher.log" | tail -1 | sed 's/.*://')
seen=$(curl -fsS "http://127.0.0.1:$port/metrics" |
  awk '/^perfwatch_watcher_points_total\{result="(appended|reloaded)"\}/ {s += $2} END {printf "%d", s}')

series=$(sql "SELECT count(DISTINCT series_id) FROM perfwatch.samples WHERE run_id LIKE '$nonce-%' AND build_kind = 'nightly'")
# the namespace makes these series this replay's alone
others=$(sql "SELECT count(*) FROM perfwatch.samples WHERE run_id NOT LIKE '$nonce-%'
                AND series_id IN (SELECT DISTINCT series_id FROM perfwatch.samples WHERE run_id LIKE '$nonce-%')")
[ "$others" -eq 0 ] || { echo "FAIL: these series hold $others points of other replays (namespace not applied?)"; exit 1; }
weekly=$(sql "SELECT coalesce(max(n), 0) FROM (SELECT date_trunc('week', c.day) AS w, count(*) AS n
                FROM perfwatch.changepoints c
               WHERE c.detected_at >= '$start_ts' AND c.routing = 'page'
                 AND c.series_id IN (SELECT DISTINCT series_id FROM perfwatch.samples WHERE run_id LIKE '$nonce-%')
               GROUP BY 1) w")
total=$(sql "SELECT count(*) FROM perfwatch.changepoints c WHERE c.detected_at >= '$start_ts'
               AND c.series_id IN (SELECT DISTINCT series_id FROM perfwatch.samples WHERE run_id LIKE '$nonce-%')")
nightly=$(sql "SELECT count(*) FROM perfwatch.samples WHERE run_id LIKE '$nonce-%' AND build_kind = 'nightly'")
echo "nightly series: $series; nightly points stored $nightly, taken in by the watcher $seen; changepoints: $total; most pages in one week: $weekly"
[ "$series" -ge 3500 ] || { echo "FAIL: only $series nightly series reached the watcher"; exit 1; }
[ "$seen" -ge "$nightly" ] || { echo "FAIL: the watcher took in $seen of $nightly nightly points"; exit 1; }
[ "$weekly" -le 5 ] || { echo "FAIL: $weekly pages in one week, over the budget of 5"; exit 1; }
echo "test_watcher_quiet: at most $weekly pages a week over $series quiet nightly series"
