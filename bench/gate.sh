#!/usr/bin/env bash
# gate.sh: end-to-end latency of the release gate (services/gate, pw-gate) on
# the dev stack at the design's scale: 2,160 gated series (60 model families ×
# 36 series, §4.4), 30 baseline runs and 5 candidate runs each.
#
# The series, spend weights, baselines and samples are written straight into
# PostgreSQL (standing in for the ingester and the baseliner), with only 4 of
# the 5 candidate runs. pw-gate is started and a GateRequest for the 60
# families is published (`perfwatch gate request`); once the gate has stored
# it as pending, the fifth candidate run of every series is committed in one
# transaction — what the ingester does for a batch of runs — and the time
# from that commit to the GateVerdict on perf.gate.verdicts.v1 is measured.
# The reference in the same run is the gate's own evaluation time (load,
# decide, store 2,160 results and the alerts, publish) from its /metrics.
# Target: < 5 s. Run by bench/run.sh (needs PW_PG_DSN,
# PW_KAFKA_BOOTSTRAP_SERVERS, PW_BUILD, PW_RUN_DIR).
set -euo pipefail
: "${PW_PG_DSN:?}" "${PW_KAFKA_BOOTSTRAP_SERVERS:?}" "${PW_BUILD:?}" "${PW_RUN_DIR:?}"
gate_bin=$PW_BUILD/services/gate/pw-gate
cli=$PW_BUILD/tools/perfwatch
work=$(mktemp -d "$PW_RUN_DIR/bench_gate.XXXXXX")
gate_pid=""
trap '[ -z "$gate_pid" ] || { kill -TERM "$gate_pid" 2>/dev/null; wait "$gate_pid" 2>/dev/null; } || true' EXIT
psqlq() { psql "$PW_PG_DSN" -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }
tag=$(date +%s%N | tail -c 9)
base=bench-base-$tag
rc=bench-rc-$tag

t=$SECONDS
psqlq <<SQL
INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source)
SELECT 'bm' || f || '-$tag', 0.8 / 60, CASE WHEN f < 20 THEN 'top' ELSE 'tail' END, 'bench'
  FROM generate_series(0, 59) f;
INSERT INTO perfwatch.series (model, hlo_fingerprint, platform, config, metric, unit, direction)
SELECT 'bm' || f || '-$tag', 'hlo:$tag', 'v6e-' || (4 + 4 * (j % 2)), 'cfg' || ((j / 2) % 3),
       'metric' || (j / 6), 'ms', 'lower_is_better'
  FROM generate_series(0, 59) f, generate_series(0, 35) j;
INSERT INTO perfwatch.baselines (series_id, version, state, hlo_fingerprint, median, mad_n, band_lo, band_hi,
    sigma, sigma_pct, n, unit, build_id, computed_at)
SELECT series_id, 1, 'active', hlo_fingerprint, 10, 0.04, 9.88, 10.12, 0.04, 0.4, 30, 'ms', '$base', now()
  FROM perfwatch.series WHERE hlo_fingerprint = 'hlo:$tag';
CREATE TEMP TABLE pts AS
SELECT s.series_id, s.model, s.hlo_fingerprint, s.platform, s.config, s.metric, b.build, b.kind, g,
       (10 + s.series_id % 7) * (1 + CASE WHEN b.kind = 'rc' AND s.series_id % 500 = 3 THEN 0.05 ELSE 0 END)
         * (1 + 0.004 * ((((g * 7919 + s.series_id * 104729) % 1000) / 1000.0) - 0.5) * 3.4641) AS value
  FROM perfwatch.series s,
       (VALUES ('$base', 'release', 30), ('$rc', 'rc', 4)) b(build, kind, n), generate_series(1, 30) g
 WHERE s.hlo_fingerprint = 'hlo:$tag' AND g <= b.n;
INSERT INTO perfwatch.runs (run_id, repeat_index, model, model_rev, hlo_fingerprint, build_id, build_kind,
    compiler_cl, compiler_cl_number, platform, config, firmware, chip_set, cell, harness_version,
    started_at, finished_at, payload_sha256)
SELECT 'b-' || series_id || '-' || build || '-' || g, 0, model, model, hlo_fingerprint, build, kind, 'cl/1', 1,
       platform, config, 'fw', 'pinned-1', 'cell-1', 'perfbench', now(), now(), '\\x00' FROM pts;
INSERT INTO perfwatch.samples (run_id, repeat_index, metric, series_id, value, unit, measured_at, build_id,
    build_kind, compiler_cl_number, chip_set)
SELECT 'b-' || series_id || '-' || build || '-' || g, 0, metric, series_id, value, 'ms',
       now() - interval '1 day' + g * interval '1 minute', build, kind, 1, 'pinned-1' FROM pts;
SQL
echo "gate.sh: 2,160 series with 30 + 4 runs written in $((SECONDS - t)) s"

PW_GATE_POLL_INTERVAL=250ms PW_KAFKA_GROUP_ID=perfwatch-gate-bench-$tag PW_HTTP_PORT=0 \
  "$gate_bin" >"$work/gate.log" 2>&1 &
gate_pid=$!
fams=()
for f in $(seq 0 59); do fams+=(--family "bm$f-$tag"); done
"$cli" gate request --release "$rc" --candidate "$rc" --baseline "$base" "${fams[@]}" >/dev/null
for _ in $(seq 1 300); do
  [ "$(psqlq -c "SELECT count(*) FROM perfwatch.gate_evaluations WHERE release_id = '$rc'")" = 1 ] && break
  sleep 0.1
done
sleep 1
[ "$(psqlq -c "SELECT status FROM perfwatch.gate_evaluations WHERE release_id = '$rc'")" = pending ] \
  || { echo "gate.sh: the request was not pending" >&2; exit 1; }

# the fifth run of every series, in one transaction
psqlq <<SQL
BEGIN;
INSERT INTO perfwatch.runs (run_id, repeat_index, model, model_rev, hlo_fingerprint, build_id, build_kind,
    compiler_cl, compiler_cl_number, platform, config, firmware, chip_set, cell, harness_version,
    started_at, finished_at, payload_sha256)
SELECT 'b-' || series_id || '-$rc-5', 0, model, model, hlo_fingerprint, '$rc', 'rc', 'cl/1', 1,
       platform, config, 'fw', 'pinned-1', 'cell-1', 'perfbench', now(), now(), '\\x00'
  FROM perfwatch.series WHERE hlo_fingerprint = 'hlo:$tag';
INSERT INTO perfwatch.samples (run_id, repeat_index, metric, series_id, value, unit, measured_at, build_id,
    build_kind, compiler_cl_number, chip_set)
SELECT 'b-' || series_id || '-$rc-5', 0, metric, series_id,
       (10 + series_id % 7) * (1 + CASE WHEN series_id % 500 = 3 THEN 0.05 ELSE 0 END), 'ms', now(), '$rc', 'rc', 1,
       'pinned-1' FROM perfwatch.series WHERE hlo_fingerprint = 'hlo:$tag';
COMMIT;
SQL
t0=$(date +%s%N)
found=0
for _ in $(seq 1 600); do
  if kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.gate.verdicts.v1 -o beginning -e -q -f '%k\n' 2>/dev/null \
       | grep -qx "$rc"; then found=1; break; fi
  sleep 0.05
done
t1=$(date +%s%N)
[ $found = 1 ] || { echo "gate.sh: no verdict within 30 s" >&2; tail -n 20 "$work/gate.log" >&2; exit 1; }
ms=$(( (t1 - t0) / 1000000 ))
port=$(grep -o '"msg":"serving /metrics on 127.0.0.1:[0-9]*' "$work/gate.log" | grep -o '[0-9]*$')
eval_s=$(curl -sf "http://127.0.0.1:$port/metrics" | awk '/^perfwatch_gate_evaluation_seconds_sum/ { print $2 }')
tests=$(psqlq -c "SELECT tests FROM perfwatch.gate_evaluations WHERE release_id = '$rc'")
verdict=$(psqlq -c "SELECT verdict FROM perfwatch.gate_evaluations WHERE release_id = '$rc'")
echo "gate.sh: $tests tests, verdict $verdict"
echo "gate.sh: last candidate runs committed -> verdict on the topic: $ms ms (target < 5000 ms)"
awk -v e="$eval_s" -v m="$ms" 'BEGIN { printf "gate.sh: pw-gate load+decide+store+publish: %.0f ms (ratio end-to-end / gate %.2f)\n", e * 1000, m / (e * 1000) }'
[ "$ms" -lt 5000 ] || { echo "gate.sh: target missed" >&2; exit 1; }
