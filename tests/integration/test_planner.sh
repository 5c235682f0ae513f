#!/usr/bin/env bash
# test_planner.sh: the planner through the real stack (docs/planner.md).
# pw-sim publishes the planner's inputs for 2026-06-08 .. 06-15 (300 models,
# capacity, each day's CLs with their op costs, 8 nightlies and 2 RCs), then
# for 06-16 .. 06-22 (rank-x gets a new program on 06-16; 7 nightlies and an
# RC). pw-planner is killed -9 while it
# plans a sweep (its "planning" line out, its plan not yet stored) and
# restarted: every sweep gets one plan, published once on perf.plans.v1
# under "plan:" + sweep id. The nightly of 06-17 runs chat-8b on v6e-4 decode
# B64 (cl/7841917 touches its fusion) and not on v5e-8; cl/7841917 comes
# back on perf.compiler-cls.v1 flagged by the planner for that benchmark;
# pw-sim executes the plans of nightly-2026-06-17 and rc-2026-06-15 instead
# of a fixed matrix: the runs the ingester stores for each sweep's release
# are exactly its plan's items (model, fingerprint, platform, config,
# repeats), chat-8b's v6e-4 decode B64 among them at the regressed 4.22 ms,
# and a plan executed again stores nothing twice; rc-2026-06-22 executed
# without chat-8b's v5e-8 items and rank-x's: the gate waits for them until
# the deadline and reports them missing (INSUFFICIENT_DATA, planned), not
# absent from the release;
# every RC gates >= 95% of spend with lines that sum to the plan; rank-x
# inherits chat-8b's verdict until its program changes. Then a table of bad
# catalogue, capacity, sweep and CL inputs, each dead-lettered with its reason.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc
bins=("$PW_BUILD/services/planner/pw-planner" "$PW_BUILD/tools/simulator/pw-sim" "$PW_BUILD/tools/perfwatch"
      "$PW_BUILD/services/ingester/pw-ingester" "$PW_BUILD/services/gate/pw-gate")
need_bins "${bins[@]}"
sim=${bins[1]}
pw=${bins[2]}
service_harness test_planner pl
start() { service_start planner PW_PLANNER_TICK=100ms; }
# plans of the sweeps of 2026-06-08 .. $1 (make demo plans 06-15 .. 06-17 on a stack it shares with
# this test: plans are per sweep id, so those are the same plans, stored once whoever made them)
nplans() { q "SELECT count(*) FROM perfwatch.plans WHERE day BETWEEN '2026-06-08' AND '$1'"; }

t0_ms=$(( $(date +%s%N) / 1000000 ))
"$pw" group to-end "$ns-planner" perf.catalogue.v1 perf.capacity.v1 perf.sweeps.v1 perf.compiler-cls.v1 >/dev/null ||
  fail "placing the group at the topics' ends"
start
service_joined planner
"$sim" planner --models 300 --from 2026-06-08 --days 8 >"$work/sim.json" 2>"$work/sim.log" ||
  fail "pw-sim planner failed"
echo "test_planner: published $(cat "$work/sim.json") (2026-06-08 .. 06-15)"

# --- killed -9 mid-plan, restarted ----------------------------------------------------------
killed=""
for attempt in 1 2 3 4 5; do
  seen=$(grep -c '"msg":"planning ' "$work/planner.log" || true)
  deadline=$((SECONDS + 120))
  until [ "$(grep -c '"msg":"planning ' "$work/planner.log" || true)" -gt "$seen" ]; do
    kill -0 "${pid[planner]}" 2>/dev/null || fail "pw-planner exited"
    [ $SECONDS -lt $deadline ] || fail "no sweep planned within 120 s"
    sleep 0.01
  done
  kill -9 "${pid[planner]}"
  wait "${pid[planner]}" 2>/dev/null || true
  sweep=$(grep '"msg":"planning ' "$work/planner.log" | tail -1 | sed 's/.*planning \\"\([^\\]*\)\\".*/\1/')
  stored=$(q "SELECT count(*) FROM perfwatch.plans WHERE sweep_id = '$sweep'")
  start
  if [ "$stored" = 0 ]; then
    killed=$sweep
    echo "test_planner: pw-planner killed -9 while planning $sweep (attempt $attempt; its plan not stored)"
    break
  fi
  echo "test_planner: attempt $attempt: the kill came after $sweep's plan was stored; again"
done
[ -n "$killed" ] || fail "five kills all came after the plan was stored"

deadline=$((SECONDS + 300))
until [ "$(nplans 2026-06-15)" = 10 ]; do
  kill -0 "${pid[planner]}" 2>/dev/null || fail "pw-planner exited after the restart"
  [ $SECONDS -lt $deadline ] || fail "$(nplans 2026-06-15) of 10 plans within 300 s"
  sleep 0.5
done
# the killed sweep's plan is the plan an uninterrupted planner makes of the same inputs: a
# fresh `pw-planner --recompute` (the tick's reads and pw_plan_make, nothing stored) before the
# second week's inputs change the catalogue, against the stored rows, every column
stored_plan() {
  local f=(-XAtq -F $'\t' -v ON_ERROR_STOP=1)
  psql "$PW_PG_DSN" "${f[@]}" -c "SELECT 'plan', sweep_id, kind, release, cl_head, day, round(chip_hours::numeric, 6),
    round(naive_chip_hours_week::numeric, 6), round(spend_coverage::numeric, 6), round(spend_measured::numeric, 6),
    round(spend_inherited::numeric, 6), t0_candidates, t0_pruned, t1_models, clusters, models
    FROM perfwatch.plans WHERE plan_id = 'plan:$1'"
  psql "$PW_PG_DSN" "${f[@]}" -c "SELECT 'item', model, platform, config, repeats, tier, top, round(mde_pct::numeric, 6),
    round(sigma_pct::numeric, 6), hlo_fingerprint FROM perfwatch.plan_items WHERE plan_id = 'plan:$1'"
  psql "$PW_PG_DSN" "${f[@]}" -c "SELECT 'inherit', model, representative, round(similarity::numeric, 6), hlo_fingerprint,
    representative_fingerprint, representative_measured FROM perfwatch.plan_inheritances WHERE plan_id = 'plan:$1'"
  psql "$PW_PG_DSN" "${f[@]}" -c "SELECT 'line', tier, round(chip_hours::numeric, 6), round(planned_chip_hours::numeric, 6),
    points, repeats, models, deferred FROM perfwatch.plan_lines WHERE plan_id = 'plan:$1'"
}
stored_plan "$killed" | LC_ALL=C sort >"$work/killed_stored.tsv" || fail "reading plan:$killed"
"$PW_BUILD/services/planner/pw-planner" --recompute "$killed" 2>"$work/recompute.err" | LC_ALL=C sort >"$work/killed_fresh.tsv"
[ -s "$work/killed_fresh.tsv" ] || fail "pw-planner --recompute $killed printed nothing: $(cat "$work/recompute.err")"
if ! diff "$work/killed_stored.tsv" "$work/killed_fresh.tsv" >"$work/killed.diff"; then
  fail "plan:$killed (planned after the kill) differs from the plan an uninterrupted planner makes: $(head -c 1500 "$work/killed.diff")"
fi
echo "test_planner: plan:$killed, planned by the restarted planner, equals a fresh recomputation: $(grep -c '^item' "$work/killed_fresh.tsv") items ($(awk -F'\t' '$1 == "item" { n += $5 } END { print n }' "$work/killed_fresh.tsv") repeats), $(grep -c '^inherit' "$work/killed_fresh.tsv") inheritances, $(grep -c '^line' "$work/killed_fresh.tsv") lines, every column"
# the second week: rank-x's new program is adopted on 06-16, before its sweeps
"$sim" planner --models 300 --from 2026-06-16 --days 7 --readopt rank-x@2026-06-16 >"$work/sim2.json" 2>>"$work/sim.log" ||
  fail "pw-sim planner (second week) failed"
echo "test_planner: published $(cat "$work/sim2.json") (2026-06-16 .. 06-22, rank-x re-adopted)"
deadline=$((SECONDS + 300))
until [ "$(nplans 2026-06-22)" = 18 ]; do
  kill -0 "${pid[planner]}" 2>/dev/null || fail "pw-planner exited after the restart"
  [ $SECONDS -lt $deadline ] || fail "$(nplans 2026-06-22) of 18 plans within 300 s"
  sleep 0.5
done
echo "test_planner: 18 plans (15 nightlies, 3 RCs)"
[ "$(q "SELECT count(*) FROM perfwatch.plans WHERE sweep_id = '$killed' AND plan_id = 'plan:$killed'")" = 1 ] ||
  fail "the killed sweep $killed has no plan under plan:$killed"

# published once each: every outbox row sent, and one message per plan on the topic
deadline=$((SECONDS + 60))
until [ "$(q "SELECT count(*) FROM perfwatch.outbox WHERE service = 'planner' AND topic = 'perf.plans.v1'
              AND published_at IS NULL")" = 0 ]; do
  [ $SECONDS -lt $deadline ] || fail "plans left unpublished in the outbox"
  sleep 0.5
done
kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.plans.v1 -o beginning -e -q -f '%T %k\n' 2>/dev/null |
  awk '$2 ~ /^plan:(nightly|rc)-2026-06-(0[89]|1[0-9]|2[0-2])$/ { print $2 }' | sort | uniq -c >"$work/plan_keys.txt"
[ "$(wc -l <"$work/plan_keys.txt")" = 18 ] || fail "perf.plans.v1 holds $(wc -l <"$work/plan_keys.txt") plan keys, want 18"
if awk '$1 != 1 { bad = 1 } END { exit !bad }' "$work/plan_keys.txt"; then
  fail "a plan was published more than once: $(awk '$1 != 1' "$work/plan_keys.txt")"
fi
grep -q " plan:$killed\$" "$work/plan_keys.txt" || fail "plan:$killed is not on perf.plans.v1"
echo "test_planner: perf.plans.v1 holds each of the 18 plans once, plan:$killed included"

# --- the worked example: the static check puts chat-8b on v6e-4 in the nightly ----------------
items="SELECT count(*) FROM perfwatch.plan_items WHERE plan_id = 'plan:nightly-2026-06-17' AND model = 'chat-8b'"
[ "$(q "$items AND platform = 'v6e-4' AND config = 'decode.B64.s2048.int8' AND tier = 'T0'")" = 1 ] ||
  fail "nightly-2026-06-17 does not run chat-8b/v6e-4/decode.B64.s2048.int8"
[ "$(q "$items AND platform = 'v5e-8' AND config = 'decode.B64.s2048.int8'")" = 0 ] ||
  fail "nightly-2026-06-17 runs chat-8b on v5e-8 decode B64 (128 lanes: the tile stays under the cap)"
read -r cand pruned <<<"$(q "SELECT t0_candidates || ' ' || t0_pruned FROM perfwatch.plans WHERE sweep_id = 'nightly-2026-06-17'")"
echo "test_planner: nightly-2026-06-17 runs chat-8b/v6e-4/decode.B64.s2048.int8, not v5e-8; $pruned of $cand T0 benchmarks pruned"
[ "$(q "SELECT perf_relevant AND nbenchmarks > 0 FROM perfwatch.planner_cls WHERE cl_number = 7841917")" = t ] ||
  fail "cl/7841917 is not perf-relevant in planner_cls"
deadline=$((SECONDS + 60))
until [ "$(q "SELECT count(*) FROM perfwatch.outbox WHERE service = 'planner' AND topic = 'perf.compiler-cls.v1'
              AND message_key = 'cl/7841917' AND published_at IS NOT NULL")" -ge 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "cl/7841917 was not republished by the planner"
  sleep 0.5
done
python3 - "$PW_KAFKA_BOOTSTRAP_SERVERS" "$work" <<'PY' || fail "decoding the republished cl/7841917"
import subprocess, sys
bs, work = sys.argv[1], sys.argv[2]
raw = subprocess.run(["kcat", "-C", "-b", bs, "-t", "perf.compiler-cls.v1", "-o", "beginning", "-e", "-q",
                      "-f", "%k\t%o\n"], capture_output=True, text=True).stdout
offs = [l.split("\t")[1] for l in raw.splitlines() if l.startswith("cl/7841917\t")]
for o in offs:
    msg = subprocess.run(["kcat", "-C", "-b", bs, "-t", "perf.compiler-cls.v1", "-p", "0", "-o", o, "-c", "1", "-e", "-q",
                          "-f", "%s"], capture_output=True).stdout
    txt = subprocess.run(["protoc", "--decode=perfwatch.v1.CompilerCl", "-I", "proto", "proto/perfwatch/v1/compiler.proto"],
                         input=msg, capture_output=True).stdout.decode()
    if 'perf_checked_by: "planner"' in txt:
        open(f"{work}/cl7841917.txt", "w").write(txt)
        break
PY
[ -s "$work/cl7841917.txt" ] || fail "no planner-checked cl/7841917 on perf.compiler-cls.v1"
grep -q 'perf_relevant: true' "$work/cl7841917.txt" || fail "republished cl/7841917 is not perf_relevant"
grep -q 'perf_benchmarks: "chat-8b/v6e-4/decode.B64.s2048.int8"' "$work/cl7841917.txt" ||
  fail "republished cl/7841917 does not name chat-8b/v6e-4/decode.B64.s2048.int8"
! grep -q 'perf_benchmarks: "chat-8b/v5e-8/decode.B64.s2048.int8"' "$work/cl7841917.txt" ||
  fail "republished cl/7841917 names chat-8b on v5e-8 decode B64"
! grep -q 'perf_benchmarks: "chat-8b/v6e-4/prefill' "$work/cl7841917.txt" ||
  fail "republished cl/7841917 names a prefill benchmark"
echo "test_planner: cl/7841917 republished perf_relevant for $(grep -c perf_benchmarks "$work/cl7841917.txt") benchmarks, chat-8b/v6e-4/decode.B64.s2048.int8 among them"

# --- pw-sim executes the plans: the runs of a sweep are exactly its plan's items ---------------
# the worked example's world (its cl/7841917 effect on chat-8b v6e-4 decode) runs
# the plans of nightly-2026-06-17 and rc-2026-06-15; the ingester stores what arrives; the
# runs carry this test's prefix (a demo's replay on the same stack has nightly runs of
# xla-nightly-2026-06-17 too)
"$pw" group to-end "$ns-ingester" perf.runs.v1 >/dev/null || fail "placing the ingester's group at the end"
service_start ingester
service_joined ingester
exec_sweeps=(nightly-2026-06-17 rc-2026-06-15)
PW_KAFKA_GROUP_ID="$ns-exec" timeout 600 "$sim" execute tools/simulator/scenarios/worked-example.scn \
  --sweep "${exec_sweeps[0]}" --sweep "${exec_sweeps[1]}" --run-prefix "$ns-" >"$work/exec.json" 2>"$work/exec.log" ||
  fail "pw-sim execute failed: $(tail -3 "$work/exec.log")"
echo "test_planner: pw-sim execute: $(cat "$work/exec.json")"
python3 - "$work/exec.json" <<'PY2' || fail "pw-sim execute did not run every item: $(cat "$work/exec.json")"
import json, sys
e = json.load(open(sys.argv[1]))
assert e["plans"] == 2 and e["items_not_run"] == 0 and e["runs"] > 0, e
PY2
for sw in "${exec_sweeps[@]}"; do
  rel=$(q "SELECT release FROM perfwatch.plans WHERE sweep_id = '$sw'")
  want=$(q "SELECT sum(repeats) FROM perfwatch.plan_items WHERE plan_id = 'plan:$sw'")
  [ "$want" -gt 0 ] || fail "plan:$sw has no items"
  deadline=$((SECONDS + 600))
  until [ "$(q "SELECT count(*) FROM perfwatch.runs WHERE build_id = '$rel' AND run_id LIKE '$ns-pl-%'")" -ge "$want" ]; do
    kill -0 "${pid[ingester]}" 2>/dev/null || fail "pw-ingester exited"
    [ $SECONDS -lt $deadline ] || fail "$(q "SELECT count(*) FROM perfwatch.runs WHERE build_id = '$rel' AND run_id LIKE '$ns-pl-%'") of $want runs of $rel within 600 s"
    sleep 1
  done
  # count and keys: every item's model x fingerprint x platform x config with its repeats, nothing else
  diff=$(q "(SELECT model, hlo_fingerprint, platform, config, count(*)::int FROM perfwatch.runs WHERE build_id = '$rel' AND run_id LIKE '$ns-pl-%'
             GROUP BY 1, 2, 3, 4
             EXCEPT SELECT model, hlo_fingerprint, platform, config, sum(repeats)::int FROM perfwatch.plan_items WHERE plan_id = 'plan:$sw' GROUP BY 1, 2, 3, 4)
            UNION ALL
            (SELECT model, hlo_fingerprint, platform, config, sum(repeats)::int FROM perfwatch.plan_items WHERE plan_id = 'plan:$sw' GROUP BY 1, 2, 3, 4
             EXCEPT SELECT model, hlo_fingerprint, platform, config, count(*)::int FROM perfwatch.runs WHERE build_id = '$rel' AND run_id LIKE '$ns-pl-%'
             GROUP BY 1, 2, 3, 4)")
  [ -z "$diff" ] || fail "the runs of $rel are not plan:$sw's items: $(echo "$diff" | head -5)"
  read -r nitems nruns <<<"$(q "SELECT count(*) || ' ' || sum(repeats) FROM perfwatch.plan_items WHERE plan_id = 'plan:$sw'")"
  echo "test_planner: $sw: $nruns runs of $rel arrived, exactly plan:$sw's $nitems items x repeats"
done
# the worked example's runs arrive from the plan: chat-8b v6e-4 decode B64 on the nightly of
# 06-17 (cl/7841917 in) measures the seed's 4.22 ms, not the 3.90 ms before
tpot=$(q "SELECT round(avg(v.value)::numeric, 2) FROM perfwatch.samples v JOIN perfwatch.series s USING (series_id)
          WHERE v.build_id = 'xla-nightly-2026-06-17' AND v.run_id LIKE '$ns-pl-%' AND s.model = 'chat-8b' AND s.platform = 'v6e-4'
          AND s.config = 'decode.B64.s2048.int8' AND s.metric = 'tpot_p50_ms'")
[ -n "$tpot" ] || fail "no chat-8b/v6e-4/decode.B64.s2048.int8 TPOT from the nightly of 06-17"
python3 -c "import sys; v = float(sys.argv[1]); sys.exit(0 if 4.1 < v < 4.35 else 1)" "$tpot" ||
  fail "chat-8b/v6e-4/decode.B64 TPOT p50 on the nightly of 06-17 is $tpot ms, want ~4.22 (cl/7841917 in)"
echo "test_planner: chat-8b/v6e-4/decode.B64.s2048.int8 ran on xla-nightly-2026-06-17 (planned for cl/7841917): TPOT p50 $tpot ms"
# a plan delivered again publishes the same runs: the ingester stores nothing twice
nrel=$(q "SELECT count(*) FROM perfwatch.runs WHERE build_id = 'xla-nightly-2026-06-17' AND run_id LIKE '$ns-pl-%'")
PW_KAFKA_GROUP_ID="$ns-exec2" timeout 300 "$sim" execute tools/simulator/scenarios/worked-example.scn \
  --sweep nightly-2026-06-17 --run-prefix "$ns-" >/dev/null 2>>"$work/exec.log" || fail "pw-sim execute (again) failed"
marker="pl-marker-$ns"
PW_KAFKA_GROUP_ID="$ns-exec3" timeout 300 "$sim" execute tools/simulator/scenarios/worked-example.scn \
  --sweep nightly-2026-06-17 --run-prefix "$marker-" >/dev/null 2>>"$work/exec.log" || fail "pw-sim execute (marker) failed"
# the marker's runs come after the re-sent ones on each partition: once they are in, so is the rest
want=$(q "SELECT sum(repeats) FROM perfwatch.plan_items WHERE plan_id = 'plan:nightly-2026-06-17'")
deadline=$((SECONDS + 300))
until [ "$(q "SELECT count(*) FROM perfwatch.runs WHERE run_id LIKE '$marker-%'")" -ge "$want" ]; do
  [ $SECONDS -lt $deadline ] || fail "the marker runs did not arrive"
  sleep 1
done
[ "$(q "SELECT count(*) FROM perfwatch.runs WHERE build_id = 'xla-nightly-2026-06-17' AND run_id LIKE '$ns-pl-%'")" = "$nrel" ] ||
  fail "executing plan:nightly-2026-06-17 again changed its runs"
dl="FROM perfwatch.dead_letters WHERE service = 'ingester' AND recorded_at >= to_timestamp($t0_ms / 1000.0)"
[ "$(q "SELECT count(*) $dl")" = 0 ] || fail "the ingester dead-lettered executed runs: $(q "SELECT reason || ' ' || detail $dl LIMIT 3")"
echo "test_planner: plan:nightly-2026-06-17 executed again: the same $nrel runs, none stored twice"

# --- the gate: a planned run that did not arrive is missing, not absent -------------------------
# rc-2026-06-22 executed with chat-8b's v5e-8 items and rank-x's (its new program, never measured)
# left unrun, as a fleet that failed them. chat-8b's v5e-8 series exist (rc-2026-06-15 measured
# them a week before, outside the gate's active window, 1 h here): only the plan makes the gate
# gate them; rank-x's new benchmarks have no series at all. The gate waits for both until the
# request's deadline and then reports them missing (INSUFFICIENT_DATA, named as planned).
enc() { protoc --encode="perfwatch.v1.$1" -I proto "proto/perfwatch/v1/$2"; }
"$pw" group to-end "$ns-gate" perf.gate.requests.v1 >/dev/null || fail "placing the gate's group at the end"
service_start gate PW_GATE_POLL_INTERVAL=200ms PW_GATE_MIN_WAIT=0s PW_GATE_ACTIVE_WINDOW=1h
service_joined gate
PW_KAFKA_GROUP_ID="$ns-exec4" timeout 600 "$sim" execute tools/simulator/scenarios/worked-example.scn \
  --sweep rc-2026-06-22 --skip 'chat-8b/v5e-8/*' --skip 'rank-x/*' >"$work/exec4.json" 2>>"$work/exec.log" ||
  fail "pw-sim execute rc-2026-06-22 failed"
items22="FROM perfwatch.plan_items WHERE plan_id = 'plan:rc-2026-06-22'"
n_v5e=$(q "SELECT count(*) $items22 AND model = 'chat-8b' AND platform = 'v5e-8'")
n_rankx=$(q "SELECT count(*) $items22 AND model = 'rank-x'")
[ "$n_v5e" -gt 0 ] && [ "$n_rankx" -gt 0 ] || fail "rc-2026-06-22 plans no chat-8b/v5e-8 ($n_v5e) or rank-x ($n_rankx) item"
[ "$(q "SELECT count(*) FROM perfwatch.series s WHERE s.model = 'chat-8b' AND s.platform = 'v5e-8'
        AND s.hlo_fingerprint IN (SELECT hlo_fingerprint $items22 AND model = 'chat-8b')")" -gt 0 ] ||
  fail "chat-8b's v5e-8 series were not measured before (rc-2026-06-15)"
want=$(q "SELECT sum(repeats) $items22 AND NOT (model = 'chat-8b' AND platform = 'v5e-8') AND model <> 'rank-x'")
deadline=$((SECONDS + 600))
until [ "$(q "SELECT count(*) FROM perfwatch.runs WHERE build_id = 'xla-rc-2026-06-22'")" -ge "$want" ]; do
  [ $SECONDS -lt $deadline ] || fail "the runs of xla-rc-2026-06-22 did not arrive"
  sleep 1
done
cl22=$(q "SELECT cl_head FROM perfwatch.plans WHERE sweep_id = 'rc-2026-06-22'")
now_us=$(( $(date +%s%N) / 1000 ))
printf 'release_id: "xla-rc-2026-06-22" evaluation: 1 candidate { build_id: "xla-rc-2026-06-22" kind: BUILD_KIND_RC cl: "cl/%s" cl_number: %s release_id: "xla-rc-2026-06-22" } baseline_release: "xla-2026-06-10" families: "chat-8b" families: "rank-x" fdr_q: 0.05 requested_unix_us: %s deadline_unix_us: %s' \
  "$cl22" "$cl22" "$now_us" $((now_us + 45000000)) | enc GateRequest gate.proto >"$work/gr22.bin" || fail "encoding the GateRequest"
kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.gate.requests.v1 -k xla-rc-2026-06-22 "$work/gr22.bin" || fail "producing the GateRequest"
ev="FROM perfwatch.gate_evaluations WHERE release_id = 'xla-rc-2026-06-22' AND evaluation = 1"
deadline=$((SECONDS + 40))
until waiting=$(q "SELECT coalesce(waiting, '') $ev AND status = 'pending'") &&
      [[ $waiting == *"planned, none arrived"* && $waiting == *"planned benchmarks never measured"* ]]; do
  [ $SECONDS -lt $deadline ] || fail "the gate does not say it waits for the planned runs (waiting: \"$waiting\", status $(q "SELECT status $ev"))"
  sleep 0.2
done
echo "test_planner: gate, xla-rc-2026-06-22 pending: $waiting"
deadline=$((SECONDS + 180))
until [ "$(q "SELECT status $ev")" = done ]; do
  [ $SECONDS -lt $deadline ] || fail "xla-rc-2026-06-22 not decided within 180 s of its deadline"
  sleep 0.5
done
summary=$(q "SELECT summary $ev")
echo "test_planner: gate, xla-rc-2026-06-22: $(q "SELECT verdict $ev") ${summary:0:300}"
fam() { q "SELECT verdict FROM perfwatch.gate_family_results WHERE release_id = 'xla-rc-2026-06-22' AND evaluation = 1 AND family = '$1'"; }
[ "$(fam chat-8b)" = insufficient_data ] || fail "chat-8b is $(fam chat-8b), want insufficient_data (its v5e-8 runs are missing)"
[ "$(fam rank-x)" = insufficient_data ] || fail "rank-x is $(fam rank-x), want insufficient_data (its planned runs are missing)"
read -r gated notrun <<<"$(q "SELECT count(*) || ' ' || count(*) FILTER (WHERE r.verdict = 'insufficient_data' AND r.candidate_n = 0)
  FROM perfwatch.gate_series_results r JOIN perfwatch.series s USING (series_id)
  WHERE r.release_id = 'xla-rc-2026-06-22' AND r.evaluation = 1 AND s.model = 'chat-8b' AND s.platform = 'v5e-8'")"
[ "$gated" -gt 0 ] || fail "chat-8b's planned v5e-8 series are absent from the verdict"
[ "$gated" = "$notrun" ] || fail "of $gated chat-8b/v5e-8 series only $notrun are insufficient_data without runs"
[[ $summary == *"rank-x: $n_rankx planned benchmarks never measured"* ]] ||
  fail "the summary does not say rank-x's $n_rankx planned benchmarks were never measured"
[[ $summary == *"chat-8b: $gated planned series without a candidate run (chat-8b/"*"/v5e-8/"* ]] ||
  fail "the summary does not name chat-8b's $gated planned v5e-8 series"
echo "test_planner: gate: $gated planned chat-8b/v5e-8 series INSUFFICIENT_DATA without runs, rank-x's $n_rankx planned benchmarks never measured"

# rank-x's new program (re-adopted on 06-16) broke its inheritance from chat-8b: the gate of
# 06-22 records what rc-2026-06-22's plan says (none, or another representative), not chat-8b
want_rep=$(q "SELECT coalesce((SELECT representative FROM perfwatch.plan_inheritances
              WHERE plan_id = 'plan:rc-2026-06-22' AND model = 'rank-x'), '')")
got_rep=$(q "SELECT inherits_from FROM perfwatch.gate_family_results
             WHERE release_id = 'xla-rc-2026-06-22' AND evaluation = 1 AND family = 'rank-x'")
[ "$got_rep" = "$want_rep" ] && [ "$got_rep" != chat-8b ] ||
  fail "the gate of xla-rc-2026-06-22 records rank-x inheriting from \"$got_rep\" (the plan: \"$want_rep\"; its program changed)"
echo "test_planner: gate, xla-rc-2026-06-22: rank-x's recorded inheritance is \"$got_rep\" as its plan's (no longer chat-8b)"

# --- the gate: an inheritor without runs of its own is decided through its representative -----
# rc-2026-06-15's plan says rank-x inherits chat-8b's verdict (similarity >= 0.95); its runs
# (executed above) hold rank-x only if the rotation took it. The gate's family verdict records
# the inheritance; without rank-x runs on the release its verdict is chat-8b's.
rc15=$(q "SELECT release FROM perfwatch.plans WHERE sweep_id = 'rc-2026-06-15'")
cl15=$(q "SELECT cl_head FROM perfwatch.plans WHERE sweep_id = 'rc-2026-06-15'")
sim15=$(q "SELECT similarity FROM perfwatch.plan_inheritances WHERE plan_id = 'plan:rc-2026-06-15' AND model = 'rank-x'")
[ -n "$sim15" ] || fail "rc-2026-06-15's plan records no inheritance for rank-x"
sim15=$(python3 -c 'import sys; print("%.2f" % float(sys.argv[1]))' "$sim15") # as the gate prints the stored value
own15=$(q "SELECT count(*) FROM perfwatch.runs WHERE build_id = '$rc15' AND model = 'rank-x'")
now_us=$(( $(date +%s%N) / 1000 ))
printf 'release_id: "%s" evaluation: 1 candidate { build_id: "%s" kind: BUILD_KIND_RC cl: "cl/%s" cl_number: %s release_id: "%s" } baseline_release: "xla-2026-06-10" families: "chat-8b" families: "rank-x" fdr_q: 0.05 requested_unix_us: %s deadline_unix_us: %s' \
  "$rc15" "$rc15" "$cl15" "$cl15" "$rc15" "$now_us" $((now_us + 20000000)) | enc GateRequest gate.proto >"$work/gr15.bin" ||
  fail "encoding the GateRequest of $rc15"
kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.gate.requests.v1 -k "$rc15" "$work/gr15.bin" || fail "producing the GateRequest of $rc15"
ev15="FROM perfwatch.gate_evaluations WHERE release_id = '$rc15' AND evaluation = 1"
deadline=$((SECONDS + 180))
until [ "$(q "SELECT status $ev15")" = done ]; do
  [ $SECONDS -lt $deadline ] || fail "$rc15 not decided within 180 s"
  sleep 0.5
done
"$pw" gate show "$rc15" --json >"$work/gate15.json" || fail "perfwatch gate show $rc15 failed"
summary15=$(q "SELECT summary $ev15")
python3 - "$work/gate15.json" "$sim15" "$own15" <<'PY' || fail "perfwatch gate show $rc15: rank-x's inheritance: $(cat "$work/gate15.json" | head -c 600)"
import json, sys
g = json.load(open(sys.argv[1]))
sim, own = float(sys.argv[2]), int(sys.argv[3])
f = {x["family"]: x for x in g["families"]}
r, c = f["rank-x"], f["chat-8b"]
assert r["inherits_from"] == "chat-8b" and abs(r["inherit_similarity"] - sim) <= 0.005, r
assert c["inherits_from"] == "" and "inherit_similarity" not in c and c["verdict_inherited"] is False, c
if own == 0:
    assert r["verdict_inherited"] is True and r["verdict"] == c["verdict"], (r["verdict"], c["verdict"])
else:
    assert r["verdict_inherited"] is False, r
PY
[[ $summary15 == *"rank-x inherits from chat-8b, similarity $sim15"* ]] ||
  fail "the summary of $rc15 does not say rank-x inherits from chat-8b, similarity $sim15: $summary15"
if [ "$own15" = 0 ]; then
  [[ $summary15 != *"rank-x has no measured series"* ]] || fail "the summary of $rc15 calls rank-x unmeasured: $summary15"
  echo "test_planner: gate, $rc15: rank-x has no run of its own: $(q "SELECT verdict FROM perfwatch.gate_family_results WHERE release_id = '$rc15' AND evaluation = 1 AND family = 'rank-x'") through chat-8b (${summary15:0:300})"
else
  [[ $summary15 == *"rank-x inherits from chat-8b, similarity $sim15 (decided on its own runs)"* ]] ||
    fail "the summary of $rc15 does not say rank-x was decided on its own $own15 runs: $summary15"
  echo "test_planner: gate, $rc15: rank-x inherits from chat-8b but ran ($own15 runs): decided on its own (${summary15:0:300})"
fi

# --- RCs: coverage, lines reconciling, inheritance and its loss -------------------------------
bad=$(q "SELECT string_agg(sweep_id || ' ' || round(spend_coverage::numeric, 3), ', ') FROM perfwatch.plans
         WHERE kind = 'rc' AND day BETWEEN '2026-06-08' AND '2026-06-22' AND spend_coverage < 0.95")
[ -z "$bad" ] || fail "RC plans under 95% of spend: $bad"
bad=$(q "SELECT string_agg(p.plan_id, ', ') FROM perfwatch.plans p WHERE p.day BETWEEN '2026-06-08' AND '2026-06-22'
         AND abs(p.chip_hours - (SELECT sum(chip_hours) FROM perfwatch.plan_lines l WHERE l.plan_id = p.plan_id)) > 1e-6")
[ -z "$bad" ] || fail "plans whose lines do not sum to their chip-hours: $bad"
bad=$(q "SELECT string_agg(l.plan_id || ' ' || l.tier, ', ') FROM perfwatch.plan_lines l WHERE l.tier <> 'reserve'
         AND l.plan_id LIKE 'plan:%2026-06-%' AND abs(l.chip_hours - coalesce((SELECT sum(i.repeats) * 0.25
         FROM perfwatch.plan_items i WHERE i.plan_id = l.plan_id AND i.tier = l.tier), 0)) > 1e-6")
[ -z "$bad" ] || fail "lines that are not their items' repeats x 0.25 chip-h: $bad"
q "SELECT sweep_id, round(spend_coverage::numeric * 100, 1) || '% of spend', round(chip_hours::numeric, 1) || ' chip-h'
   FROM perfwatch.plans WHERE kind = 'rc' AND day BETWEEN '2026-06-08' AND '2026-06-22' ORDER BY day" |
  sed 's/^/test_planner: /'
inh="SELECT representative || ' ' || round(similarity::numeric, 2) FROM perfwatch.plan_inheritances WHERE model = 'rank-x' AND plan_id"
got=$(q "$inh = 'plan:rc-2026-06-15'")
[ "${got%% *}" = chat-8b ] || fail "rank-x does not inherit from chat-8b on rc-2026-06-15 (got \"$got\")"
echo "test_planner: rc-2026-06-15: rank-x inherits from $got"
got=$(q "$inh = 'plan:rc-2026-06-22'")
[ "${got%% *}" != chat-8b ] || fail "rank-x still inherits from chat-8b after its new program (rc-2026-06-22)"
[ "$(q "SELECT count(*) FROM perfwatch.plan_items WHERE plan_id = 'plan:rc-2026-06-22' AND model = 'rank-x'")" -gt 0 ] ||
  fail "rank-x, no longer inheriting, is not measured on rc-2026-06-22"
echo "test_planner: rc-2026-06-22: rank-x's new program runs on its own"
[ "$(q "SELECT tier FROM perfwatch.spend_weights WHERE model = 'chat-8b'")" = top ] ||
  fail "spend_weights does not follow the catalogue"

# --- perfwatch coverage: the week's lines reconcile to its total ------------------------------
"$pw" coverage --week 2026-06-15 >"$work/coverage.json" || fail "perfwatch coverage failed"
python3 - "$work/coverage.json" <<'PY' || fail "perfwatch coverage: $(cat "$work/coverage.json")"
import json, sys
c = json.load(open(sys.argv[1]))
lines = sum(v["chip_hours"] for v in c["lines"].values())
assert c["week"] == "2026-06-15" and c["rc"] == "rc-2026-06-15" and c["nightlies"] == 7, c
assert abs(lines - c["chip_hours"]) < 1e-6 and abs(c["lines_sum"] - c["chip_hours"]) < 1e-6, c
assert c["spend_coverage"] >= 0.95 and c["naive_chip_hours"] == 72000, c
assert c["chip_hours"] / c["naive_chip_hours"] <= 0.065 and abs(c["naive_ratio"] - c["chip_hours"] / 72000) < 1e-9, c
assert 0 <= c["lines"]["T0"]["pruned_ratio"] <= 1 and c["lines"]["T0"]["planned_chip_hours"] == 280, c
PY
"$pw" coverage --week 2026-06-15 --text | sed 's/^/test_planner: /'

# --- the spend-coverage SLO's gauges survive a restart -----------------------------------------
# (deploy/prometheus/rules: PerfwatchSpendCoverageLow reads them) a planner started after the
# RCs were planned reads the latest RC plan from PostgreSQL: its coverage and its day
kill -TERM "${pid[planner]}"
wait "${pid[planner]}" 2>/dev/null || true
cat "$work/planner.log" >>"$work/planner.log.before-restart" && : >"$work/planner.log"
start
read -r want_cov want_day <<<"$(q "SELECT spend_coverage || ' ' || (day - date '1970-01-01') * 86400 FROM perfwatch.plans
                                   WHERE kind = 'rc' ORDER BY day DESC, plan_id DESC LIMIT 1")"
deadline=$((SECONDS + 90))
until port=$(grep -o '"msg":"serving /healthz /readyz /metrics on 127.0.0.1:[0-9]*' "$work/planner.log" | tail -n 1 | grep -o '[0-9]*$') &&
      [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/metrics" >"$work/planner_metrics.txt" &&
      grep -Eq '^perfwatch_planner_latest_rc_day_seconds [1-9]' "$work/planner_metrics.txt"; do
  kill -0 "${pid[planner]}" 2>/dev/null || fail "pw-planner exited after its restart"
  [ $SECONDS -lt $deadline ] || fail "the restarted planner's /metrics has no latest RC day: $(grep latest_rc "$work/planner_metrics.txt" 2>/dev/null)"
  sleep 0.3
done
python3 - "$work/planner_metrics.txt" "$want_cov" "$want_day" <<'PY' || fail "the restarted planner's SLO gauges: $(grep -E 'spend_coverage|latest_rc' "$work/planner_metrics.txt")"
import sys
m = {l.split()[0]: float(l.split()[1]) for l in open(sys.argv[1]) if l.startswith("perfwatch_planner_")}
assert abs(m["perfwatch_planner_spend_coverage_ratio"] - float(sys.argv[2])) < 1e-9, m
assert m["perfwatch_planner_latest_rc_day_seconds"] == float(sys.argv[3]), m
PY
echo "test_planner: restarted pw-planner reports the latest RC plan's spend coverage $want_cov (day $want_day) on /metrics"

# --- bad inputs, each dead-lettered ------------------------------------------------------------
good_op='ops { op: "gemm" shape: "d4096" config: "decode.B64.s2048.int8" calls: 32 bytes: 1 flops: 1 }'
printf 'model: "bad-spend" tier: "tail" spend_share: 1.5 platforms: "v6e-4" configs: "decode.B64.s2048.int8" hlo_fingerprint: "hlo:1" %s' "$good_op" |
  enc CatalogueModel plan.proto >"$work/b1.bin"
printf 'model: "bad-config" tier: "tail" spend_share: 0.001 platforms: "v6e-4" configs: "train.s1.bf16" hlo_fingerprint: "hlo:1" %s' "$good_op" |
  enc CatalogueModel plan.proto >"$work/b2.bin"
printf 'model: "no-ops" tier: "tail" spend_share: 0.001 platforms: "v6e-4" configs: "decode.B64.s2048.int8" hlo_fingerprint: "hlo:1"' |
  enc CatalogueModel plan.proto >"$work/b3.bin"
printf 'garbage \377' >"$work/b4.bin"
printf 'platform: "v6e-4" chip_hours_per_week: -5' | enc PlatformCapacity plan.proto >"$work/b5.bin"
printf 'chip_hours_per_week: 100' | enc PlatformCapacity plan.proto >"$work/b6.bin"
printf 'sweep_id: "nightly-bad" kind: SWEEP_KIND_NIGHTLY release: "x" cl_head: "cl/7841900" day: "2026-02-30"' |
  enc Sweep plan.proto >"$work/b7.bin"
printf 'sweep_id: "rc-2026-06-15" kind: SWEEP_KIND_RC release: "x" cl_head: "cl/1" day: "2026-06-15"' |
  enc Sweep plan.proto >"$work/b8.bin"
printf 'cl: "cl/12" cl_number: 13' | enc CompilerCl compiler.proto >"$work/b9.bin"
printf 'cl: "cl/14" cl_number: 14 op_costs { op: "gemm" bytes_factor: 0 flops_factor: 1 }' |
  enc CompilerCl compiler.proto >"$work/b10.bin"
table="perf.catalogue.v1 b1 invalid_value spend_share 1.5
perf.catalogue.v1 b2 invalid_value train.s1.bf16
perf.catalogue.v1 b3 missing_field no ops
perf.catalogue.v1 b4 decode_failed CatalogueModel
perf.capacity.v1 b5 invalid_value chip_hours_per_week -5
perf.capacity.v1 b6 missing_field platform is empty
perf.sweeps.v1 b7 invalid_value 2026-02-30
perf.sweeps.v1 b8 conflict another kind, cl_head or day
perf.compiler-cls.v1 b9 inconsistent disagree
perf.compiler-cls.v1 b10 invalid_value factors 0, 1"
key="bad-$ns"
while read -r topic f _; do
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t "$topic" -k "$key-$f" "$work/$f.bin" || fail "producing $f"
done <<<"$table"
while read -r topic f reason detail; do
  deadline=$((SECONDS + 60))
  until got=$(q "SELECT reason || ' ' || detail FROM perfwatch.dead_letters WHERE service = 'planner'
                 AND source_topic = '$topic' AND original_key = convert_to('$key-$f', 'UTF8')") && [ -n "$got" ]; do
    [ $SECONDS -lt $deadline ] || fail "$f on $topic was not dead-lettered"
    sleep 0.3
  done
  [ "${got%% *}" = "$reason" ] || fail "$f on $topic: dead-lettered as \"$got\", want $reason"
  [[ $got == *"$detail"* ]] || fail "$f on $topic: \"$got\" does not say \"$detail\""
  echo "test_planner: $topic $f -> $got"
done <<<"$table"
[ "$(q "SELECT count(*) FROM perfwatch.catalogue WHERE model IN ('bad-spend', 'bad-config', 'no-ops')")" = 0 ] ||
  fail "a refused catalogue entry was stored"
[ "$(q "SELECT cl_head FROM perfwatch.sweeps WHERE sweep_id = 'rc-2026-06-15'")" != 1 ] ||
  fail "the conflicting sweep replaced the stored one"
kill -0 "${pid[planner]}" 2>/dev/null || fail "pw-planner exited on bad input"
echo "test_planner: PASS"
