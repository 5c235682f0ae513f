#!/usr/bin/env bash
# test_watcher_registered.sh: the watcher judges a series with a registered
# change as observed - expected, the registration flowing as it does today:
# pw-sim registered-netted → perf.runs.v1 → pw-ingester → perf.points.v1 →
# pw-watcher, and the release candidate's GateRequest → pw-gate, which stores
# its expected wins (perfwatch.expected_wins) where the watcher reads them.
#
# The scenario (tools/simulator/scenarios/registered-netted.scn): cl/7841830,
# registered −4% on chat-8b v6e-4 decode B64 with xla-rc-2026-06-20, lands in
# the nightly of 2026-06-15 and delivers; cl/7841940 lands in the nightly of
# 2026-06-18 and makes the same series 4.17% slower, so that it nets out.
# decode B8 gets both changes unregistered (the control), rank-moe-110b none.
# Replayed in three segments, so that the registration comes as late as it
# does in production (the compiler team registers with the RC, days after the
# CL reached the nightlies): up to the RC's request (every nightly of both
# changes, judged without the registration), the request alone (the gate
# stores the registrations), then the nightlies after, the first batch of
# which brings the watcher's look at new registrations and the rebuild of the
# registered series. Checks, on chat-8b decode B64 TPOT p50:
#   - a regression at cl/7841923..cl/7841961 (the nightly of 2026-06-18),
#     annotation none, paged (top tier), about +4.17%;
#   - the win at the nightly of 2026-06-15 reported as a validated win
#     (method and annotation registered, registered_cl cl/7841830), its alert
#     VALIDATED_WIN and routed nowhere; the improvement reported before the
#     registration was known revised into it (alert revision 2), and no
#     regression reported before the registration;
# and on the unregistered control (decode B8 TPOT p50): no regression at
# all (the series nets out), the win an improvement to investigate; on
# rank-moe-110b: no changepoint.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
sim=$PW_BUILD/tools/simulator/pw-sim
it=$PW_BUILD/tests/it_watcher
need_bins "$sim" "$it" "$PW_BUILD/services/ingester/pw-ingester" \
  "$PW_BUILD/services/watcher/pw-watcher" "$PW_BUILD/services/gate/pw-gate"
need_tools psql

scn=tools/simulator/scenarios/registered-netted.scn
before_request=2026-06-20T20:00:00Z   # the RC's request is at 21:00
rc_day_end=2026-06-21T00:00:00Z        # the next nightly runs from 01:00
service_harness test_watcher_registered wr
on_exit() { psqlq -c "DELETE FROM perfwatch.spend_weights WHERE model LIKE '%.$ns'" >/dev/null 2>&1 || true; }
trap 'service_cleanup; on_exit' EXIT
rel=xla-rc-2026-06-20.$ns
psqlq -c "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
          ('chat-8b.$ns', 0.078, 'top', 'test_watcher_registered'),
          ('rank-moe-110b.$ns', 0.05, 'top', 'test_watcher_registered')" >/dev/null

"$it" start-at-end "$ns-ingester" perf.runs.v1 || fail "placing the ingester group"
"$it" start-at-end "$ns-watcher" || fail "placing the watcher group"
"$it" start-at-end "$ns-gate" perf.gate.requests.v1 || fail "placing the gate group"
service_start ingester
service_start watcher
service_start gate PW_GATE_MIN_WAIT=600s
for s in ingester watcher gate; do service_joined "$s"; done

caught_up() {
  "$it" wait "$ns-ingester" 300 perf.runs.v1 || fail "pw-ingester did not catch up"
  "$it" wait "$ns-watcher" 300 || fail "pw-watcher did not catch up"
}
replay=("$sim" replay "$scn" --namespace "$ns" --run-prefix "$ns-")
"${replay[@]}" --until "$before_request" >"$work/sim1.json" 2>"$work/sim1.log" || fail "pw-sim replay (to the RC) failed"
caught_up
"${replay[@]}" --since "$before_request" --until "$rc_day_end" >"$work/sim2.json" 2>"$work/sim2.log" ||
  fail "pw-sim replay (the RC's request) failed"
grep -q '"gate_requests":1' "$work/sim2.json" || fail "the second segment did not carry the request"
caught_up
# the gate stores the RC's six registrations as it receives the request
for _ in $(seq 1 300); do
  [ "$(psqlq -c "SELECT count(*) FROM perfwatch.expected_wins WHERE release_id = '$rel'")" = 6 ] && break
  sleep 0.2
done
[ "$(psqlq -c "SELECT count(*) FROM perfwatch.expected_wins WHERE release_id = '$rel'")" = 6 ] ||
  fail "the gate did not store the six registrations of $rel"
key() { psqlq -c "SELECT series_key FROM perfwatch.series WHERE model = '$1.$ns' AND config = '$2' AND metric = '$3'"; }
b64=$(key chat-8b decode.B64.s2048.int8 tpot_p50_ms)
b8=$(key chat-8b decode.B8.s2048.int8 tpot_p50_ms)
[ -n "$b64" ] && [ -n "$b8" ] || fail "the series were not stored"
cps() { # SERIES_KEY: its changepoints, one line each
  psqlq -F ' ' -c "SELECT c.last_clean_cl || '..' || c.first_shifted_cl, c.direction, c.annotation, c.method,
                          c.stage, c.routing, round(c.delta_pct::numeric, 2), c.registered_cl,
                          coalesce(a.verdict, '-'), coalesce(a.revision, 0)
                     FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id)
                     LEFT JOIN perfwatch.alerts a ON a.changepoint_id = c.changepoint_id
                    WHERE s.series_key = '$1' ORDER BY c.shift_at"
}
echo "before the registration reached the watcher (every nightly to 2026-06-20 judged without it):"
echo "  decode B64 TPOT p50:"; cps "$b64" | tee "$work/b64-before.txt" | sed 's/^/    /'
echo "  decode B8 TPOT p50 (control):"; cps "$b8" | sed 's/^/    /'
grep -q ' regression ' "$work/b64-before.txt" && fail "a regression was reported before the registration: the series should net out"
grep -q '^cl/7841809..cl/7841847 improvement none ' "$work/b64-before.txt" ||
  fail "the win was not reported (as an improvement to investigate) before the registration"

"${replay[@]}" --since "$rc_day_end" >"$work/sim3.json" 2>"$work/sim3.log" || fail "pw-sim replay (after the RC) failed"
caught_up
echo "replayed: $(cat "$work/sim1.json") $(cat "$work/sim2.json") $(cat "$work/sim3.json")"
echo "after (nightlies to 2026-06-28):"
echo "  decode B64 TPOT p50:"; cps "$b64" | tee "$work/b64.txt" | sed 's/^/    /'
echo "  decode B8 TPOT p50 (control):"; cps "$b8" | tee "$work/b8.txt" | sed 's/^/    /'

# the regression the registered win hid, found as observed - expected
reg=$(grep '^cl/7841923..cl/7841961 regression none ' "$work/b64.txt" || true)
[ -n "$reg" ] || fail "no regression at cl/7841923..cl/7841961 on $b64"
read -r _ _ _ _ stage routing delta _ verdict _ <<<"$reg"
[ "$stage" != withdrawn ] || fail "the regression was withdrawn: $reg"
[ "$routing" = page ] || fail "the top-tier regression is not paged: $reg"
awk -v d="$delta" 'BEGIN { exit !(d > 3.5 && d < 5.0) }' || fail "the regression is $delta%, not about +4.17%"
# the win: a validated win, revising the improvement reported before
win=$(grep '^cl/7841809..cl/7841847 improvement registered registered confirmed none ' "$work/b64.txt" || true)
[ -n "$win" ] || fail "the registered win at cl/7841809..cl/7841847 is not a validated win on $b64"
read -r _ _ _ _ _ _ wdelta wcl wverdict wrev <<<"$win"
[ "$wcl" = cl/7841830 ] || fail "the validated win names $wcl"
[ "$wverdict" = validated_win ] || fail "the win's alert is $wverdict"
[ "$wrev" = 2 ] || fail "the win's alert is revision $wrev, not the revision of the report made before"
awk -v d="$wdelta" 'BEGIN { exit !(d < -3.0 && d > -5.0) }' || fail "the win is $wdelta%, not about -4%"
[ "$(grep -c 'improvement none' "$work/b64.txt" || true)" = 0 ] ||
  fail "an improvement of $b64 is still to be investigated"
# the control nets out: its win is an improvement to investigate, no regression
grep -q ' regression ' "$work/b8.txt" && fail "the unregistered control shows a regression: $(grep ' regression ' "$work/b8.txt")"
grep -q '^cl/7841809..cl/7841847 improvement none ' "$work/b8.txt" || fail "the control's win was not reported"
other=$(psqlq -c "SELECT count(*) FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id)
                   WHERE s.model = 'rank-moe-110b.$ns'")
[ "$other" = 0 ] || fail "$other changepoints on the clean rank-moe-110b"
rb=$(curl -fsS "http://127.0.0.1:$(grep -o '"msg":"serving /healthz /readyz /metrics on [^"]*' "$work/watcher.log" | tail -1 | sed 's/.*://')/metrics" |
  awk '/^perfwatch_watcher_registrations_total/ { print $2 }')
echo "series rebuilt for a new registration: ${rb:-0}"
[ "${rb:-0}" -ge 1 ] || fail "no series was rebuilt for the registration"
echo "test_watcher_registered: regression ${delta}% at cl/7841923..cl/7841961 found behind the registered ${wdelta}% win (validated, revision $wrev); the unregistered control nets out"
