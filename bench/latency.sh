#!/usr/bin/env bash
# latency.sh: detection latency of the worked example on the dev stack
# (issue 17), before and after the early rule: pw-sim replays
# worked-example.scn (70 days, so that PELT alone finds the shift too)
# at 100 runs/s (a nightly in about 0.2 s, so that each is processed before
# the next comes) through pw-ingester into pw-baseliner and pw-watcher, once with
# PW_WATCHER_EARLY_K=0 (PELT alone, as before) and once with the default
# early rule (k = 3). For chat-8b v6e-4 decode B64 TPOT p50 it prints:
#   - the first signal: the baseliner's outlier alert on the regression's
#     first nightly (2026-06-17): its kind and owner, and the wall time from
#     that run's ingestion to the alert row;
#   - the first report of the watcher (provisional or confirmed): the
#     nightly it came with (nightlies after the regression's) and the wall
#     time from that nightly's ingestion to the changepoint row;
#   - PELT's confirmation: the same.
# Simulated time is one nightly a day: nightlies × 24 h. Run by
# bench/run.sh BUILD latency (needs the dev stack's environment).
set -euo pipefail
: "${PW_PG_DSN:?}" "${PW_KAFKA_BOOTSTRAP_SERVERS:?}" "${PW_BUILD:?}" "${PW_RUN_DIR:?}"
sim=$PW_BUILD/tools/simulator/pw-sim
ingester=$PW_BUILD/services/ingester/pw-ingester
baseliner=$PW_BUILD/services/baseliner/pw-baseliner
watcher=$PW_BUILD/services/watcher/pw-watcher
it=$PW_BUILD/tests/it_watcher
sql() { psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; pids=(); }
trap cleanup EXIT

run() { # run K
  local k=$1 nonce=lat$1x$$x$RANDOM
  local work=$PW_RUN_DIR/bench-latency-$nonce
  mkdir -p "$work"
  for g in ing bl wt; do "$it" start-at-end "$g-$nonce" perf.runs.v1 perf.points.v1 perf.fleet-changes.v1 >/dev/null; done
  PW_KAFKA_GROUP_ID=ing-$nonce PW_HTTP_PORT=0 "$ingester" >"$work/ingester.log" 2>&1 & pids+=($!)
  PW_KAFKA_GROUP_ID=bl-$nonce PW_HTTP_PORT=0 "$baseliner" >"$work/baseliner.log" 2>&1 & pids+=($!)
  PW_KAFKA_GROUP_ID=wt-$nonce PW_HTTP_PORT=0 PW_WATCHER_EARLY_K=$k "$watcher" >"$work/watcher.log" 2>&1 & pids+=($!)
  sleep 2
  "$sim" replay tools/simulator/scenarios/worked-example.scn --days 70 --namespace "$nonce" \
    --run-prefix "$nonce-" --rate 100 >"$work/sim.json"
  "$it" wait "ing-$nonce" 300 perf.runs.v1 >/dev/null
  "$it" wait "bl-$nonce" 300 >/dev/null
  "$it" wait "wt-$nonce" 300 >/dev/null
  sleep 2
  cleanup
  local key
  key=$(sql "SELECT series_key FROM perfwatch.series WHERE series_key LIKE 'chat-8b.$nonce/%/v6e-4/decode.B64.s2048.int8/tpot_p50_ms'")
  local sid
  sid=$(sql "SELECT series_id FROM perfwatch.series WHERE series_key = '$key'")
  # ingestion time of the nightly run of day D on this series
  ing() { sql "SELECT to_char(min(r.ingested_at), 'YYYY-MM-DD HH24:MI:SS.MS') FROM perfwatch.samples s JOIN perfwatch.runs r USING (run_id, repeat_index) WHERE s.series_id = $sid AND s.build_id = 'xla-nightly-$1'"; }
  echo "early_k=$k series $key"
  echo "  first signal (the baseliner's first alert on the series): $(sql "SELECT (SELECT s.build_id FROM perfwatch.samples s WHERE s.run_id = split_part(a.alert_id, '/', 3) LIMIT 1) || ' ' || kind || ' owner=' || owner_hint || ' cause=' || coalesce(nullif(signal_cause, ''), '-') || ' wall_ms=' || round(extract(epoch FROM a.created_at - (SELECT min(r.ingested_at) FROM perfwatch.runs r WHERE r.run_id = split_part(a.alert_id, '/', 3))) * 1000) FROM perfwatch.alerts a WHERE a.series_id = $sid AND a.source = 'baseliner' ORDER BY a.created_at LIMIT 1")"
  local row
  row=$(sql "SELECT stage, points_first, coalesce(points_confirmed, -1), to_char(first_reported_at, 'YYYY-MM-DD HH24:MI:SS.MS'), coalesce(to_char(confirmed_at, 'YYYY-MM-DD HH24:MI:SS.MS'), '') FROM perfwatch.changepoints WHERE series_id = $sid AND first_shifted_build_id = 'xla-nightly-2026-06-17'")
  IFS='|' read -r stage pf pc fr ca <<<"$row"
  local d1 d2
  d1=$(date -u -d "2026-06-17 +$((pf - 1)) days" +%F)
  echo "  first report: stage now $stage; came with nightly $d1 ($((pf - 1)) nightlies after the regression's, $(( (pf - 1) * 24 )) simulated h); wall from that nightly's ingestion: $(sql "SELECT round(extract(epoch FROM '$fr'::timestamptz - '$(ing "$d1")'::timestamptz) * 1000)") ms"
  if [ "$pc" -ge 1 ]; then
    d2=$(date -u -d "2026-06-17 +$((pc - 1)) days" +%F)
    echo "  confirmed: with nightly $d2 ($((pc - 1)) nightlies after, $(( (pc - 1) * 24 )) simulated h); wall from that nightly's ingestion: $(sql "SELECT round(extract(epoch FROM '$ca'::timestamptz - '$(ing "$d2")'::timestamptz) * 1000)") ms"
  fi
}
run 0
run 3
