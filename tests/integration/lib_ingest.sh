# lib_ingest.sh: checks shared by the ingester's integration tests; sourced.
# The caller defines fail MESSAGE (exits) and q SQL (one value).

# ingest_test_bins: the environment and the binaries the ingester tests run:
# $sim, $ing and $pts (PW_SIM_BIN, PW_INGESTER_BIN, PW_IT_POINTS_BIN override).
ingest_test_bins() {
  need_env PW_BUILD PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS
  sim=${PW_SIM_BIN:-$PW_BUILD/tools/simulator/pw-sim}
  ing=${PW_INGESTER_BIN:-$PW_BUILD/services/ingester/pw-ingester}
  pts=${PW_IT_POINTS_BIN:-$PW_BUILD/tests/it_points}
  need_bins "$sim" "$ing" "$pts"
}

# stored_exactly_once PREFIX RUNS SAMPLES: the runs whose id starts with
# PREFIX are stored exactly once each — RUNS runs, SAMPLES samples, no sample
# or op timing twice, none without its run or with another series' id (the
# links migration 0015 leaves to the ingester), no run without samples.
stored_exactly_once() {
  local like="run_id LIKE '$1%'" want_runs=$2 want_samples=$3 n
  # fresh statistics: planned on an empty table's, the anti-joins below
  # become a scan of samples per run
  q "ANALYZE perfwatch.runs, perfwatch.samples, perfwatch.op_timings" >/dev/null
  n=$(q "SELECT count(*) FROM perfwatch.runs WHERE $like")
  [ "$n" = "$want_runs" ] || fail "runs: $n, want $want_runs"
  n=$(q "SELECT count(*) FROM perfwatch.samples WHERE $like")
  [ "$n" = "$want_samples" ] || fail "samples: $n rows, want $want_samples"
  n=$(q "SELECT count(*) FROM (SELECT DISTINCT run_id, repeat_index, metric FROM perfwatch.samples WHERE $like) x")
  [ "$n" = "$want_samples" ] || fail "distinct samples: $n, want $want_samples"
  n=$(q "SELECT count(*) - count(DISTINCT (run_id, repeat_index, op_name)) FROM perfwatch.op_timings WHERE $like")
  [ "$n" = "0" ] || fail "$n op timings stored twice"
  n=$(q "SELECT count(*) FROM perfwatch.runs r WHERE r.$like AND NOT EXISTS
         (SELECT 1 FROM perfwatch.samples s WHERE s.run_id = r.run_id AND s.repeat_index = r.repeat_index)")
  [ "$n" = "0" ] || fail "$n runs without samples (a batch was half-written)"
  n=$(q "SELECT count(*) FROM perfwatch.samples s WHERE s.$like AND NOT EXISTS
         (SELECT 1 FROM perfwatch.runs r WHERE r.run_id = s.run_id AND r.repeat_index = s.repeat_index)")
  [ "$n" = "0" ] || fail "$n samples without their run"
  n=$(q "SELECT count(*) FROM perfwatch.op_timings o WHERE o.$like AND NOT EXISTS
         (SELECT 1 FROM perfwatch.runs r WHERE r.run_id = o.run_id AND r.repeat_index = o.repeat_index)")
  [ "$n" = "0" ] || fail "$n op timings without their run"
  n=$(q "SELECT count(*) FROM perfwatch.samples s JOIN perfwatch.runs r USING (run_id, repeat_index)
         LEFT JOIN perfwatch.series z ON z.series_id = s.series_id
         WHERE s.$like AND (z.series_id IS NULL OR (z.model, z.hlo_fingerprint, z.platform, z.config, z.metric)
               IS DISTINCT FROM (r.model, r.hlo_fingerprint, r.platform, r.config, s.metric))")
  [ "$n" = "0" ] || fail "$n samples whose series id is missing or names another series"
}
