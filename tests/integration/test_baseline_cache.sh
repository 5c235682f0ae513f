#!/usr/bin/env bash
# test_baseline_cache.sh: the cache-aside baseline reader (common/
# pw_baseline_cache.h) never serves a cached baseline older than
# PostgreSQL's, and Redis stopped degrades every read to PostgreSQL with the
# same result.
#
# 1. tests/integration/it_baseline_cache.c: the reader itself, single and
#    batched — a version stored behind the cache's back, a version frozen in
#    place, a version the caller names, garbage and a key of another type in
#    Redis, Redis stopped, no Redis.
# 2. `perfwatch series show` (the CLI reads through the same reader): a
#    series whose v1 is in Redis and whose v2 was stored after shows v2
#    ("cache":"stale", then "hit"); with PW_REDIS_ADDR pointing at a port
#    nothing listens on it shows the same baseline ("cache":"fallback"), and
#    with --no-redis too ("cache":"uncached").
#
# Run by tests/integration/run.sh with the dev stack up and run/stack.env loaded.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN PW_REDIS_ADDR
it=$PW_BUILD/tests/it_baseline_cache
cli=$PW_BUILD/tools/perfwatch
need_bins "$it" "$cli"
need_tools psql python3

"$it" || fail "it_baseline_cache failed"

tag=bcli$(date +%s%N | tail -c 9)
key="$tag/hlo:$tag/v6e-4/decode.B64/tpot_p50_ms"
psqlq -c "INSERT INTO perfwatch.series (model, hlo_fingerprint, platform, config, metric, unit, direction)
          VALUES ('$tag', 'hlo:$tag', 'v6e-4', 'decode.B64', 'tpot_p50_ms', 'ms', 'lower_is_better')" >/dev/null
version() { # V: stores baseline version V (median 3.9 + V/100)
  psqlq -c "INSERT INTO perfwatch.baselines (series_id, version, state, hlo_fingerprint, median, mad_n,
              band_lo, band_hi, sigma, sigma_pct, n, unit, build_id, window_start, window_end, computed_at)
            SELECT series_id, $1, 'active', hlo_fingerprint, 3.9 + $1 / 100.0, 0.016, 3.85, 3.95, 0.016,
                   0.41, 30, 'ms', 'b$1', now() - interval '30 days', now(), now()
              FROM perfwatch.series WHERE series_key = '$key'" >/dev/null
}
show() { "$cli" series show "$@" "$key"; }
# FIELD of the baseline object, and the read's cache outcome
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["baseline"][sys.argv[1]] if sys.argv[1] != "cache" else d["cache"])' "$1"; }
expect() { # WHAT JSON FIELD WANT
  local got
  got=$(field "$3" <<<"$2")
  [ "$got" = "$4" ] || fail "$1: $3 is \"$got\", want \"$4\" ($2)"
}

version 1
j=$(show); expect "v1, first read" "$j" version 1; expect "v1, first read" "$j" cache miss
j=$(show); expect "v1, second read" "$j" source redis; expect "v1, second read" "$j" cache hit
version 2   # behind the cache's back: Redis still holds v1
j=$(show)
expect "v2 stored after v1 was cached" "$j" version 2
expect "v2 stored after v1 was cached" "$j" source postgres
expect "v2 stored after v1 was cached" "$j" cache stale
j=$(show); expect "v2 put back" "$j" version 2; expect "v2 put back" "$j" cache hit
up=$(show | field median)
down_json=$(PW_REDIS_ADDR=127.0.0.1:1 show)
expect "Redis stopped" "$down_json" version 2
expect "Redis stopped" "$down_json" median "$up"
expect "Redis stopped" "$down_json" cache fallback
none_json=$(show --no-redis)
expect "no Redis" "$none_json" version 2
expect "no Redis" "$none_json" median "$up"
expect "no Redis" "$none_json" cache uncached
echo "perfwatch series show: v2 over a cached v1 (stale, then hit); Redis stopped and no Redis: v2, median $up"
echo "test_baseline_cache: PASS"
