# lib_gate.sh: helpers shared by the gate's integration tests; sourced.
# The caller defines fail MESSAGE (exits) and psqlq (psql on PW_PG_DSN, -t -A).

# gate_verdict RELEASE GATE_PID OUT [SECONDS]: waits (default 180 s) for the
# newest GateVerdict keyed RELEASE on perf.gate.verdicts.v1 and writes it,
# decoded by protoc, to OUT; fails when the gate exits first or none comes.
gate_verdict() {
  local rel=$1 pid=$2 out=$3 tries=$(( ${4:-180} * 5 )) line="" p o
  for _ in $(seq 1 "$tries"); do
    line=$(kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.gate.verdicts.v1 -o beginning -e -q \
             -f '%k %p %o\n' 2>/dev/null | awk -v k="$rel" '$1 == k' | tail -n 1 || true)
    [ -n "$line" ] && break
    kill -0 "$pid" 2>/dev/null || fail "pw-gate exited"
    sleep 0.2
  done
  [ -n "$line" ] || fail "no verdict for $rel on perf.gate.verdicts.v1"
  read -r _ p o <<<"$line"
  kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.gate.verdicts.v1 -p "$p" -o "$o" -c 1 -e -q -f '%s' |
    protoc --decode=perfwatch.v1.GateVerdict -I proto proto/perfwatch/v1/gate.proto >"$out" ||
    fail "the verdict for $rel does not decode"
}

# gate_groups_at_end PREFIX IT: the consumer groups PREFIX-ingester,
# PREFIX-baseliner and PREFIX-gate start where their topics end now (earlier
# tests' messages are not this test's); IT is tests/it_watcher.
gate_groups_at_end() {
  "$2" start-at-end "$1-ingester" perf.runs.v1 || fail "placing the ingester group"
  "$2" start-at-end "$1-baseliner" perf.points.v1 perf.fleet-changes.v1 || fail "placing the baseliner group"
  "$2" start-at-end "$1-gate" perf.gate.requests.v1 || fail "placing the gate group"
}

# gate_start NAME BINARY PREFIX MIN_WAIT: starts a service of the pipeline in
# group PREFIX-NAME (gate.poll_interval 200 ms, gate.min_wait MIN_WAIT), its
# log in $work/NAME.log, its pid appended to pids (lib.sh's pipeline_harness).
gate_start() {
  PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$3-$1" PW_GATE_POLL_INTERVAL=200ms PW_GATE_MIN_WAIT=$4 \
    "$2" >"$work/$1.log" 2>&1 &
  pids+=($!)
}

# gate_add_samples PREFIX KEY BUILD KIND FROM TO LEVEL SHIFT SIGMA: runs
# FROM..TO of a build (run ids PREFIX-SERIES_ID-BUILD-N) of the series KEY,
# value level*(1+shift)*(1+sigma*u) with u a fixed uniform of std 1, written
# straight into perfwatch.runs and perfwatch.samples (standing in for the
# ingester). The runs are dated 69..40 days ago, outside gate.active_window,
# so that the series of an earlier run of a test on a reused stack (other
# fingerprint, other baseline release) are not part of its releases.
gate_add_samples() {
  local pre=$1; shift
  psqlq <<SQL
INSERT INTO perfwatch.runs (run_id, repeat_index, model, model_rev, hlo_fingerprint, build_id, build_kind,
    compiler_cl, compiler_cl_number, platform, config, firmware, chip_set, cell, harness_version,
    started_at, finished_at, payload_sha256)
SELECT '$pre-' || s.series_id || '-$2-' || g, 0, s.model, s.model || '@1', s.hlo_fingerprint, '$2', '$3',
       'cl/1', 1, s.platform, s.config, 'fw-1', 'pinned-' || (g % 3), 'cell-1', 'perfbench-2.31',
       now() - interval '70 days' + g * interval '1 day', now() - interval '70 days' + g * interval '1 day', '\\x00'
  FROM perfwatch.series s, generate_series($4, $5) g WHERE s.series_key = '$1'
ON CONFLICT DO NOTHING;
INSERT INTO perfwatch.samples (run_id, repeat_index, metric, series_id, value, unit, measured_at, build_id,
    build_kind, compiler_cl_number, chip_set)
SELECT '$pre-' || s.series_id || '-$2-' || g, 0, s.metric, s.series_id,
       $6 * (1 + $7) * (1 + $8 * ((((g * 7919 + length(s.config || s.platform) * 104729) % 1000) / 1000.0) - 0.5) * 3.4641),
       s.unit, now() - interval '70 days' + g * interval '1 day', '$2', '$3', 1, 'pinned-' || (g % 3)
  FROM perfwatch.series s, generate_series($4, $5) g WHERE s.series_key = '$1'
ON CONFLICT DO NOTHING;
SQL
}

# gate_series PRE HLO BASE MODEL PLATFORM CONFIG LEVEL: the series MODEL/HLO/PLATFORM/CONFIG/tpot_p50_ms,
# an active baseline of it (median LEVEL, sigma 0.4%) built on release BASE, and 30 runs of BASE
# (gate_add_samples PRE ..., sigma 0.4%); test_p1.sh and test_canary_pin.sh build their releases so.
gate_series() {
  local pre=$1 hlo=$2 base=$3 k="$4/$2/$5/$6/tpot_p50_ms"
  psqlq -c "INSERT INTO perfwatch.series (model, hlo_fingerprint, platform, config, metric, unit, direction)
            VALUES ('$4', '$hlo', '$5', '$6', 'tpot_p50_ms', 'ms', 'lower_is_better') ON CONFLICT DO NOTHING"
  psqlq -c "INSERT INTO perfwatch.baselines (series_id, version, state, hlo_fingerprint, median, mad_n, band_lo,
              band_hi, sigma, sigma_pct, n, days, chip_sets, window_start, window_end, unit, build_id, computed_at)
            SELECT series_id, 1, 'active', hlo_fingerprint, $7, $7 * 0.004, $7 * 0.988, $7 * 1.012,
                   $7 * 0.004, 0.4, 30, 30, 3, now() - interval '69 days', now() - interval '40 days', unit,
                   '$base', now() FROM perfwatch.series WHERE series_key = '$k' ON CONFLICT DO NOTHING"
  gate_add_samples "$pre" "$k" "$base" release 1 30 "$7" 0 0.004
}

# gate_scenario_weights SCENARIO SOURCE MODEL=SHARE...: prints the scenario's
# pw-sim count, sets want_samples to its samples, and gives each MODEL of the
# replay (MODEL.$ns) top-tier spend weight SHARE, recorded with SOURCE; the
# caller deletes them at exit (on_exit). Needs $sim and $ns.
gate_scenario_weights() {
  local scn=$1 src=$2 count values="" m
  shift 2
  count=$("$sim" count "$scn") || fail "pw-sim count $scn failed"
  want_samples=$(grep -o '"samples":[0-9]*' <<<"$count" | cut -d: -f2)
  echo "scenario: $count"
  for m in "$@"; do
    values+="${values:+, }('${m%%=*}.$ns', ${m#*=}, 'top', '$src')"
  done
  psqlq -c "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES $values" >/dev/null
}
