#!/usr/bin/env bash
# test_gate_stall.sh: the gate does not decide early after an ingester stall.
#
# Run by tests/integration/run.sh. The reported failure: with the ingester
# SIGSTOPped, evaluation 2 of the worked example's release published with a
# deadline 300 s ahead, SIGCONT at 60 s: the gate answered INSUFFICIENT_DATA
# ("2 families, 0 tests") 4 s after the ingester resumed, minutes before the
# deadline, and never looked again; the same data gives BLOCKING. The gate
# waited for a named family without series, and for a series the baseliner
# still called baselining, only gate.min_wait after the request arrived.
#
# Here: pw-ingester, pw-baseliner and pw-gate start on the dev stack (groups
# at the topics' ends, gate.min_wait 5 s); the ingester is stopped (SIGSTOP),
# and the baseliner with it; pw-sim replays worked-example.scn under its own
# namespace (its runs wait in perf.runs.v1; its own request, evaluation 1,
# carries a deadline long past); evaluation 2 is published with `perfwatch
# gate request --deadline-s 300`. Once the gate has looked at evaluation 2
# and gate.min_wait has passed, `perfwatch gate show` must say what it waits
# for ("waiting: no candidate run yet, 2 families without series"). Then the
# ingester continues (SIGCONT) and catches up with every run, while the
# baseliner is still stopped: the moment the old rule decided in ("4 s after
# the ingester resumed": the runs stored, no baseline folded yet), held here
# so that it does not depend on how fast the machine is. Evaluation 2 must
# still be pending, and gate show must say it waits for the baselines. Then
# the baseliner continues: evaluation 2 must be decided BLOCKING (both
# families, as test_gate_scenario.sh decides the same data), before its
# deadline, on complete data (lacking 0, no series short).
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
ingester=$PW_BUILD/services/ingester/pw-ingester
baseliner=$PW_BUILD/services/baseliner/pw-baseliner
gate=$PW_BUILD/services/gate/pw-gate
sim=$PW_BUILD/tools/simulator/pw-sim
cli=$PW_BUILD/tools/perfwatch
it=$PW_BUILD/tests/it_watcher
need_bins "$ingester" "$baseliner" "$gate" "$sim" "$cli" "$it"
need_tools kcat protoc psql python3

scn=tools/simulator/scenarios/worked-example.scn
ns=gs$(date +%s%N | tail -c 9)
rel=xla-rc-2026-06-17.$ns
base=xla-2026-06-10.$ns
work=$(mktemp -d "$PW_RUN_DIR/test_gate_stall.XXXXXX")
pipeline_harness test_gate_stall
. tests/integration/lib_gate.sh
# a stopped ingester does not act on SIGTERM: continue it before the harness stops it
trap 'kill -CONT "${pids[0]:-0}" "${pids[1]:-0}" 2>/dev/null || true; pipeline_cleanup' EXIT
on_exit() { psqlq -c "DELETE FROM perfwatch.spend_weights WHERE model LIKE '%.$ns'" >/dev/null 2>&1 || true; }
psqlq -c "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
          ('chat-8b.$ns', 0.078, 'top', 'test_gate_stall'), ('rank-moe-110b.$ns', 0.05, 'top', 'test_gate_stall')"

gate_groups_at_end "$ns" "$it"
gate_start ingester "$ingester" "$ns" 5s
gate_start baseliner "$baseliner" "$ns" 5s
gate_start gate "$gate" "$ns" 5s
# stopped once up (their groups' offsets are at the topics' ends already, so
# whether they joined before the stop does not matter: they read from there)
for i in 0 1; do
  for _ in $(seq 1 300); do
    grep -q '"msg":"serving /healthz' "$work/$([ $i = 0 ] && echo ingester || echo baseliner).log" 2>/dev/null && break
    kill -0 "${pids[$i]}" 2>/dev/null || fail "pw-ingester or pw-baseliner exited"
    sleep 0.1
  done
  kill -STOP "${pids[$i]}"
done
echo "test_gate_stall: ingester and baseliner stopped (SIGSTOP)"

"$sim" replay "$scn" --namespace "$ns" --run-prefix "$ns-" >"$work/sim.json" 2>"$work/sim.log" ||
  fail "pw-sim replay failed"
"$cli" gate request --release "$rel" --evaluation 2 --candidate "$rel" --baseline "$base" \
  --family "chat-8b.$ns" --family "rank-moe-110b.$ns" --tier top=5:1 --tier tail=3:3 \
  --deadline-s 300 >/dev/null || fail "publishing evaluation 2"

# the gate has looked at evaluation 2, and gate.min_wait (5 s) has passed
# since it arrived: the old rule no longer waited for a family without series
said=""
for _ in $(seq 1 600); do
  "$cli" gate show "$rel" --evaluation 2 >"$work/show_waiting.txt" 2>/dev/null || true
  if grep -q '^waiting: ' "$work/show_waiting.txt" &&
     [ "$(psqlq -c "SELECT now() > received_at + interval '6 seconds' FROM perfwatch.gate_evaluations
                    WHERE release_id = '$rel' AND evaluation = 2")" = t ]; then
    "$cli" gate show "$rel" --evaluation 2 >"$work/show_waiting.txt"
    said=$(grep '^waiting: ' "$work/show_waiting.txt" || true)
    break
  fi
  sleep 0.2
done
cat "$work/show_waiting.txt"
[ -n "$said" ] || fail "perfwatch gate show never said what evaluation 2 waits for"
grep -q 'status=pending' "$work/show_waiting.txt" || fail "evaluation 2 was decided while the ingester was stopped"
case "$said" in
  "waiting: no candidate run yet, 2 families without series; deadline "*) ;;
  *) fail "evaluation 2 waits for something else than its families' runs: $said" ;;
esac

want_samples=$("$sim" count "$scn" | grep -o '"samples":[0-9]*' | cut -d: -f2)
kill -CONT "${pids[0]}"
echo "test_gate_stall: ingester continued (SIGCONT)"
"$it" wait "$ns-ingester" 240 perf.runs.v1 || fail "pw-ingester did not catch up"
got=$(psqlq -c "SELECT count(*) FROM perfwatch.samples WHERE run_id LIKE '$ns-%'")
[ "$got" -eq "$want_samples" ] || fail "$got of $want_samples samples stored after the ingester caught up"
# every run stored, no baseline yet: the old rule's "ready"
said2=""
for _ in $(seq 1 150); do
  "$cli" gate show "$rel" --evaluation 2 >"$work/show_behind.txt"
  said2=$(grep '^waiting: .*baselines behind' "$work/show_behind.txt" || true)
  [ -n "$said2" ] && break
  grep -q 'status=pending' "$work/show_behind.txt" || break
  sleep 0.2
done
cat "$work/show_behind.txt"
grep -q 'status=pending' "$work/show_behind.txt" ||
  fail "evaluation 2 was decided with every run stored and no baseline folded ($(psqlq -c "SELECT summary
        FROM perfwatch.gate_evaluations WHERE release_id = '$rel' AND evaluation = 2"))"
[ -n "$said2" ] || fail "gate show does not say that evaluation 2 waits for its baselines"
kill -CONT "${pids[1]}"
echo "test_gate_stall: baseliner continued (SIGCONT)"
for _ in $(seq 1 1500); do
  [ "$(psqlq -c "SELECT status FROM perfwatch.gate_evaluations WHERE release_id = '$rel' AND evaluation = 2")" != pending ] && break
  kill -0 "${pids[2]}" 2>/dev/null || fail "pw-gate exited"
  sleep 0.2
done
row=$(psqlq -c "SELECT status, verdict, lacking, evaluated_at < deadline, summary FROM perfwatch.gate_evaluations
                WHERE release_id = '$rel' AND evaluation = 2")
echo "test_gate_stall: evaluation 2: $row"
IFS='|' read -r status verdict lacking early summary <<<"$row"
[ "$status" = done ] || fail "evaluation 2 is $status"
[ "$verdict" = blocking ] || fail "evaluation 2 is $verdict, not blocking (the worked example's verdict): $summary"
[ "$lacking" = 0 ] || fail "evaluation 2 was decided on incomplete data (lacking $lacking): $summary"
[ "$early" = t ] || fail "evaluation 2 was decided at its deadline, not when its data was complete"
# the complete data's verdict: both families blocking (rank-moe-110b +3.1% on
# a top-tier series), every series the replay measured gated, none short
fams=$(psqlq -c "SELECT string_agg(family || ' ' || verdict, ', ' ORDER BY family) FROM perfwatch.gate_family_results
                 WHERE release_id = '$rel' AND evaluation = 2")
[ "$fams" = "chat-8b.$ns blocking, rank-moe-110b.$ns blocking" ] || fail "families of evaluation 2: $fams"
measured=$(psqlq -c "SELECT count(DISTINCT series_id) FROM perfwatch.samples WHERE run_id LIKE '$ns-%'")
counts=$(psqlq -c "SELECT count(*) || ' ' || count(*) FILTER (WHERE verdict = 'insufficient_data')
                   FROM perfwatch.gate_series_results WHERE release_id = '$rel' AND evaluation = 2")
[ "$counts" = "$measured 0" ] || fail "evaluation 2 gated (series, insufficient) $counts of the $measured series measured"
b64=$(psqlq -c "SELECT r.verdict || ' ' || round(r.delta_pct::numeric, 1) FROM perfwatch.gate_series_results r
                JOIN perfwatch.series s USING (series_id) WHERE r.release_id = '$rel' AND r.evaluation = 2
                AND s.platform = 'v6e-4' AND s.config = 'decode.B64.s2048.int8' AND s.metric = 'tpot_p50_ms'")
read -r b64_verdict b64_delta <<<"$b64"
[ "$b64_verdict" = blocking ] || fail "decode B64 TPOT is $b64"
awk -v x="$b64_delta" 'BEGIN { exit !(x >= 7.6 && x <= 8.8) }' || fail "decode B64 TPOT moved $b64_delta%, not about +8.2%"
gate_verdict "$rel" "${pids[2]}" "$work/verdict.txt" 60
grep -q '^evaluation: 2' "$work/verdict.txt" && grep -q '^verdict: VERDICT_BLOCKING' "$work/verdict.txt" ||
  fail "the newest GateVerdict of $rel on the topic is not evaluation 2 BLOCKING (see $work/verdict.txt)"
"$cli" gate show "$rel" --evaluation 2 | grep -E '^(\[gate-eval|release verdict|summary)' | sed -n 1,5p
echo "test_gate_stall: PASS: gate show said \"$said\" while the ingester was stopped and \"$said2\" before the baselines; evaluation 2 $verdict, B64 ${b64_delta}%"
