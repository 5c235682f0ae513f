#!/usr/bin/env bash
# test_grafana.sh: perfwatch's Grafana provisioning (deploy/grafana) without a
# Grafana — Grafana is not packaged for Debian, so nothing here renders a
# panel; what can be checked is checked:
#   - the read-only role: perfwatch_ro exists, reads the perfwatch schema,
#     and cannot write (INSERT, CREATE, a read-write transaction all refused);
#   - the dashboards' JSON is what deploy/grafana/gen_dashboards.py writes;
#   - the provisioning files and dashboard JSON (tests/integration/grafana_check.py):
#     structure, data sources, variables, and every panel's, annotation's and
#     variable's SQL executed AS perfwatch_ro with Grafana's macros expanded,
#     every PromQL expression parsed by promtool;
#   - against a fixture written here (one series with 10 points, 2 baseline
#     versions, a changepoint, two fleet changes of which one concerns the
#     series' platform, a gate evaluation with a family and two series
#     results and a pin of the family, two pages triaged true and false, an alert, a bisection, a
#     dead letter, a canary rollout's ROLLBACK and PROMOTE), all in January 2099 so that nothing else falls in the
#     dashboards' time range: each panel returns exactly the fixture's rows
#     and the report card's figures (2 pages, 1 false, rate 0.5, 1 validated
#     win, median time to verdict 2 h).
# The fixture is deleted at exit.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN
need_tools psql python3 promtool
python3 -c 'import yaml' 2>/dev/null || { echo "FAIL: python3-yaml is not installed (make deps)"; exit 1; }
repo=$(cd "$(dirname "$0")/../.." && pwd)

ro_dsn="$PW_PG_DSN user=perfwatch_ro"
t=gf$$
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
work=$(mktemp -d)

cleanup() {
  q "DELETE FROM perfwatch.canary_families WHERE rollout_id = '$t-rollout';
     DELETE FROM perfwatch.triage_verdicts WHERE page_id LIKE '$t-%';
     DELETE FROM perfwatch.pages WHERE page_id LIKE '$t-%';
     DELETE FROM perfwatch.alerts WHERE alert_id LIKE '$t-%';
     DELETE FROM perfwatch.bisections WHERE bisection_id LIKE '$t-%';
     DELETE FROM perfwatch.waivers WHERE release_id LIKE '$t-%';
     DELETE FROM perfwatch.gate_evaluations WHERE release_id LIKE '$t-%';
     DELETE FROM perfwatch.dead_letters WHERE service = '$t-service';
     DELETE FROM perfwatch.changepoints WHERE changepoint_id LIKE '$t-%';
     DELETE FROM perfwatch.fleet_changes WHERE event_id LIKE '$t-%';
     DELETE FROM perfwatch.baselines WHERE series_id IN (SELECT series_id FROM perfwatch.series WHERE model = '$t-model');
     DELETE FROM perfwatch.samples WHERE run_id LIKE '$t-%';
     DELETE FROM perfwatch.series WHERE model = '$t-model';" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# --- the dashboards are what their generator writes
if python3 deploy/grafana/gen_dashboards.py --check; then
  pass "deploy/grafana/dashboards is what deploy/grafana/gen_dashboards.py writes"
else
  fail "the dashboards' JSON and their generator differ"
fi

# --- the role
[ "$(q "SELECT count(*) FROM pg_roles WHERE rolname = 'perfwatch_ro' AND NOT rolsuper AND rolcanlogin")" = 1 ] &&
  pass "role perfwatch_ro exists, can log in, is not a superuser" || fail "no login role perfwatch_ro"
n=$(psql "$ro_dsn" -XAtq -v ON_ERROR_STOP=1 -c "SELECT count(*) FROM perfwatch.series") &&
  pass "perfwatch_ro reads perfwatch.series ($n rows)" || fail "perfwatch_ro cannot read perfwatch.series"
missing=$(q "SELECT string_agg(c.relname, ', ') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'perfwatch' AND c.relkind IN ('r', 'v', 'p', 'm')
               AND NOT has_table_privilege('perfwatch_ro', c.oid, 'SELECT')")
[ -z "$missing" ] && pass "perfwatch_ro may SELECT every table and view of the schema" ||
  fail "perfwatch_ro cannot SELECT: $missing"
writable=$(q "SELECT string_agg(c.relname, ', ') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'perfwatch' AND c.relkind IN ('r', 'p')
                AND (has_table_privilege('perfwatch_ro', c.oid, 'INSERT') OR has_table_privilege('perfwatch_ro', c.oid, 'UPDATE')
                     OR has_table_privilege('perfwatch_ro', c.oid, 'DELETE') OR has_table_privilege('perfwatch_ro', c.oid, 'TRUNCATE'))")
[ -z "$writable" ] && pass "perfwatch_ro holds no write privilege on any table" || fail "perfwatch_ro may write: $writable"
try_ro() { psql "$ro_dsn" -XAtq -v ON_ERROR_STOP=1 -c "$1" >"$work/ro.out" 2>&1; }
if try_ro "INSERT INTO perfwatch.fleet_changes (event_id, occurred_at, kind) VALUES ('$t-x', now(), 'other')"; then
  fail "perfwatch_ro inserted a row"
else
  pass "INSERT as perfwatch_ro refused: $(head -n 1 "$work/ro.out")"
fi
if try_ro "BEGIN READ WRITE; CREATE TABLE perfwatch.${t}_x (a int); COMMIT"; then
  fail "perfwatch_ro created a table"
else
  pass "CREATE TABLE as perfwatch_ro refused: $(head -n 1 "$work/ro.out")"
fi
[ "$(psql "$ro_dsn" -XAtq -c 'SHOW default_transaction_read_only')" = on ] &&
  pass "perfwatch_ro's sessions are read-only by default" || fail "default_transaction_read_only is not on for perfwatch_ro"
# a table a later migration creates (as perfwatch) is readable: default privileges
q "CREATE TABLE perfwatch.${t}_later (a int)" >/dev/null
if psql "$ro_dsn" -XAtq -v ON_ERROR_STOP=1 -c "SELECT count(*) FROM perfwatch.${t}_later" >/dev/null 2>&1; then
  pass "a table created later is readable (ALTER DEFAULT PRIVILEGES)"
else
  fail "a table created later by perfwatch is not readable by perfwatch_ro"
fi
q "DROP TABLE perfwatch.${t}_later" >/dev/null

# --- the fixture (as the owner), January 2099
q "
INSERT INTO perfwatch.series (model, hlo_fingerprint, platform, config, metric, unit, direction)
VALUES ('$t-model', 'hlo:$t', '$t-plat', 'decode.B64', 'tpot_p50_ms', 'ms', 'lower_is_better');
INSERT INTO perfwatch.samples (run_id, repeat_index, metric, series_id, value, unit, measured_at, build_id, build_kind,
                               compiler_cl_number, chip_set)
SELECT '$t-run-' || i, 0, 'tpot_p50_ms', s.series_id, 3.9 + (i % 3) * 0.01, 'ms',
       timestamptz '2099-01-05 00:00Z' + i * interval '1 day', 'nightly-' || i, 'nightly', 1000 + i, 'pinned-' || (i % 3)
  FROM perfwatch.series s, generate_series(1, 10) i WHERE s.model = '$t-model';
INSERT INTO perfwatch.baselines (series_id, version, state, hlo_fingerprint, median, mad_n, band_lo, band_hi, sigma,
                                 sigma_pct, n, unit, window_start, window_end, computed_at)
SELECT s.series_id, v, 'active', 'hlo:$t', 3.91, 0.01, 3.89, 3.93, 0.01, 0.26, 5, 'ms',
       timestamptz '2099-01-06 00:00Z', timestamptz '2099-01-06 00:00Z' + v * interval '2 day', now()
  FROM perfwatch.series s, generate_series(1, 2) v WHERE s.model = '$t-model';
INSERT INTO perfwatch.fleet_changes (event_id, occurred_at, kind, reason, platforms)
VALUES ('$t-fc-mine', '2099-01-08 12:00Z', 'firmware', 'firmware roll', ARRAY['$t-plat']),
       ('$t-fc-other', '2099-01-09 12:00Z', 'recabling', 'another platform', ARRAY['$t-elsewhere']);
INSERT INTO perfwatch.changepoints (series_id, first_shifted_build_id, changepoint_id, position, day, shift_at,
    last_clean_build_id, last_clean_cl, last_clean_cl_number, first_shifted_cl, first_shifted_cl_number, n_cls,
    level_before, level_after, unit, delta_pct, p, direction, method, routing, detected_at)
SELECT s.series_id, 'nightly-7', '$t-cp', 6, '2099-01-12', '2099-01-12 00:00Z', 'nightly-6', 'cl/1006', 1006,
       'cl/1007', 1007, 1, 3.9, 4.2, 'ms', 7.7, 0.0001, 'regression', 'pelt', 'page', now()
  FROM perfwatch.series s WHERE s.model = '$t-model';
INSERT INTO perfwatch.gate_evaluations (release_id, evaluation, candidate_build_id, baseline_release, fdr_q,
    requested_at, status, verdict, tests, evaluated_at)
VALUES ('$t-rel', 1, 'rc-$t', 'prod-$t', 0.05, '2099-01-14 00:00Z', 'done', 'blocking', 2, '2099-01-14 06:00Z');
INSERT INTO perfwatch.gate_family_results (release_id, evaluation, family, tier, verdict, spend_share, gated_series, regressed_series)
VALUES ('$t-rel', 1, '$t-fam', 'top', 'blocking', 0.2, 2, 1);
INSERT INTO perfwatch.gate_series_results (release_id, evaluation, series_id, family, tier, unit, mde_pct, verdict, delta_pct)
SELECT '$t-rel', 1, s.series_id, '$t-fam', 'top', 'ms', 1.0, 'blocking', 8.2 FROM perfwatch.series s WHERE s.model = '$t-model';
INSERT INTO perfwatch.series (model, hlo_fingerprint, platform, config, metric, unit, direction)
VALUES ('$t-model', 'hlo:$t', '$t-plat', 'decode.B8', 'tpot_p50_ms', 'ms', 'lower_is_better');
INSERT INTO perfwatch.gate_series_results (release_id, evaluation, series_id, family, tier, unit, mde_pct, verdict, delta_pct)
SELECT '$t-rel', 1, s.series_id, '$t-fam', 'top', 'ms', 1.0, 'validated_win', -4.0
  FROM perfwatch.series s WHERE s.model = '$t-model' AND s.config = 'decode.B8';
INSERT INTO perfwatch.waivers (waiver_id, release_id, model, owner, approved_by, reason, expires_at, pin, pin_release,
                               pin_artifact, pin_signed_off_by)
VALUES ('$t-wv', '$t-rel', '$t-fam', 'fam-oncall', 'fam-oncall', 'fixture pin', '2099-02-14 00:00Z', true, 'prod-$t',
        'serving/$t-fam/prod-$t.aot', 'fam-models-lead');
INSERT INTO perfwatch.pages (page_id, dedup_key, route, severity, verdict, summary, created_at)
VALUES ('$t-p1', '$t-rel/$t-fam', 'ml-perf-triage', 'critical', 'blocking', '$t page one', '2099-01-14 07:00Z'),
       ('$t-p2', '$t-cp', 'ml-perf-triage', 'high', 'p1', '$t page two', '2099-01-15 07:00Z');
INSERT INTO perfwatch.triage_verdicts (page_id, outcome, routed_to, triager, decided_at)
VALUES ('$t-p1', 'true_regression', 'compiler', 'alice', '2099-01-14 08:00Z'),
       ('$t-p2', 'false_regression', 'infra', 'bob', '2099-01-15 10:00Z');
INSERT INTO perfwatch.alerts (alert_id, kind, source, created_at, series_key, verdict, routing, summary)
VALUES ('$t-a1', 'regression', 'gate', '2099-01-14 06:00Z', '$t-model/hlo:$t/$t-plat/decode.B64/tpot_p50_ms', 'blocking', 'page', '$t alert');
INSERT INTO perfwatch.bisections (bisection_id, series_id, range_lo, range_lo_number, range_hi, range_hi_number, n_cls,
    unit, status, started_at, updated_at)
SELECT '$t-b1', s.series_id, 'cl/1006', 1006, 'cl/1007', 1007, 1, 'ms', 'running', '2099-01-12 01:00Z', '2099-01-12 03:00Z'
  FROM perfwatch.series s WHERE s.model = '$t-model' AND s.config = 'decode.B64';
INSERT INTO perfwatch.dead_letters (source_topic, kafka_partition, kafka_offset, reason, detail, service, failed_at)
VALUES ('perf.runs.v1', 0, 9000000000000 + $$, 'decode_failed', 'fixture', '$t-service', '2099-01-10 00:00Z');
INSERT INTO perfwatch.canary_families (rollout_id, family, family_kind, release, artifact, previous_release,
    previous_artifact, alpha, mde_pct, tolerance_pct, pilot_windows, horizon_s, first_window_start, last_window_end,
    windows, decision, inconclusive, final, metric, effect_pct, lo_pct, hi_pct, decision_windows,
    decided_window_start, rollback_artifact, decided_at)
VALUES ('$t-rollout', '$t-fam', 'tpu', 'rc-$t', 'a-$t', 'prod-$t', 'prev-$t', 0.05, 1, 0.5, 12, 172800,
        '2099-01-16 00:00Z', '2099-01-16 12:00Z', 114, 'ROLLBACK', false, true, 'tpot', 1.113, 0.501, 2.231, 38,
        '2099-01-16 03:05Z', 'prev-$t', '2099-01-16 03:10Z'),
       ('$t-rollout', '$t-fam2', 'gpu', 'rc-$t', 'a-$t', 'prod-$t', 'prev2-$t', 0.05, 2, 1, 12, 172800,
        '2099-01-16 00:00Z', '2099-01-16 12:00Z', 183, 'PROMOTE', false, true, 'ttft', -0.373, -2.634, 1.957, 61,
        '2099-01-16 05:00Z', NULL, '2099-01-16 05:05Z');
" >/dev/null && pass "fixture written (January 2099)" || { fail "could not write the fixture"; exit 1; }

cat >"$work/expect.json" <<JSON
{
  "perfwatch-series variable series": {"__text": "$t-model/hlo:$t/$t-plat/decode.B64/tpot_p50_ms"},
  "annotation changepoints": 1,
  "annotation fleet changes": 1,
  "series annotation fleet": {"text": "firmware: firmware roll ($t-fc-mine)"},
  "(points and baseline band) A": 10,
  "(points and baseline band) B": 2,
  "(baseline versions) A": 2,
  "panel 3 (changepoints) A": {"first_shifted_cl": "cl/1007", "delta_pct": 7.7, "routing": "page"},
  "(gate history) A": {"release_id": "$t-rel", "verdict": "blocking", "regressed_series": 1, "latency_s": 21600},
  "(families of the release) A": {"family": "$t-fam", "verdict": "blocking", "regressed_series": 1},
  "(series of the release) A": 2,
  "(pins of the release) A": {"family": "$t-fam", "pinned_release": "prod-$t", "pinned_artifact": "serving/$t-fam/prod-$t.aot",
                              "owner": "fam-oncall", "signed_off_by": "fam-models-lead", "state": "pinned"},
  "(report card (time range)) A": {"pages": 2, "triaged": 2, "true pages": 1, "false pages": 1,
                                   "false-page rate": 0.5, "validated wins": 1, "median time to verdict (s)": 7200},
  "(pages per week against the budget) A": {"pages": 2, "false pages": 1, "untriaged": 0, "false-page budget": 5},
  "(false-page rate by month) A": {"pages": 2, "false_pages": 1, "false_page_rate": 0.5},
  "(pages) A": 2,
  "(triage verdicts) A": 2,
  "(open alerts) A": {"alert_id": "$t-a1", "verdict": "blocking"},
  "(bisections) A": {"bisection_id": "$t-b1", "status": "running", "age": "02:00:00"},
  "(dead letters) A": {"service": "$t-service", "reason": "decode_failed", "messages": 1},
  "(canary decisions per day) A": 2,
  "(canary decisions per family) A": {"family": "$t-fam2", "decision": "PROMOTE", "effect %": -0.373, "windows": 61},
  "(canary effect and interval at the decision) A": 6
}
JSON

# The fixture's week (2099-01-12, a Monday) holds both pages; the range is
# the fixture's month.
if python3 tests/integration/grafana_check.py --root "$repo/deploy/grafana" --dsn "$ro_dsn" \
    --expect "$work/expect.json" --promtool "$(command -v promtool)" \
    --from 2099-01-01T00:00:00Z --to 2099-02-01T00:00:00Z \
    --prefer "series=$t-model/hlo:$t/$t-plat/decode.B64/tpot_p50_ms" --prefer "release=$t-rel" >"$work/check.out" 2>&1; then
  cat "$work/check.out"
  pass "grafana_check: structure, every query as perfwatch_ro, the fixture's figures"
else
  cat "$work/check.out"
  fail "grafana_check reported failures (above)"
fi

if [ $fails -ne 0 ]; then
  echo "test_grafana: $fails check(s) failed"
  exit 1
fi
echo "test_grafana: all checks passed"
