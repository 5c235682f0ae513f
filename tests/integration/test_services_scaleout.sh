#!/usr/bin/env bash
# test_services_scaleout.sh: the gate, the bisector and the attributor with
# two instances in each consumer group give the results of one.
#
# The worked example is replayed twice, each round in a namespace of its own
# (pw-sim --namespace) through one ingester and one baseliner (started once,
# not under test), with `pw-sim answer` as the bisection executor:
#   single  one pw-gate, one pw-bisector, one pw-attributor;
#   scaled  two of each, each pair in one consumer group.
# Each round's groups start at the topics' ends and its services are stopped
# before the next round; its gates start once the ingester and the baseliner
# have consumed the replay, so that they evaluate the RC on the same stored
# baselines in both rounds. Checked in the scaled round: both instances of each
# held partitions of their input (the gate's perf.gate.requests.v1, the
# bisector's and the attributor's perf.alerts.v1), and both bisectors and both
# attributors took alerts; each bisection step and confirmation was decided
# once (the instances' log lines add up to the stored rows); nothing was
# dead-lettered by the services under test. Compared between the rounds,
# once the namespace is taken off: the gate's evaluation (release verdict, tests, impact), its
# family verdicts (verdict, gated, regressed) and its regressed series; the
# bisections (target series, range, status, culprit, confidence, builds,
# verification) and one bisection per event; the attributions (one per
# regression alert and per culprit: series, source, status, owner hint, top
# op family, bisection) and the alerts' revisions that carry the bisection
# and attribution blocks.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR
sim=$PW_BUILD/tools/simulator/pw-sim
pw=$PW_BUILD/tools/perfwatch
need_bins "$sim" "$pw" "$PW_BUILD/services/ingester/pw-ingester" "$PW_BUILD/services/baseliner/pw-baseliner" \
  "$PW_BUILD/services/gate/pw-gate" "$PW_BUILD/services/bisector/pw-bisector" \
  "$PW_BUILD/services/attributor/pw-attributor"
. tests/integration/lib_scaleout.sh

scn=tools/simulator/scenarios/worked-example.scn
tag=sv$$
work=$PW_RUN_DIR/it-services-scaleout-$$
mkdir -p "$work"
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
up_pids=()
# stop PID...: SIGTERM, then 30 s for each to exit; one that does not is named, killed and fails the test
stop_bounded() {
  local p deadline=$((SECONDS + 30)) hung=0
  for p in "$@"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "$@"; do
    while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    if kill -0 "$p" 2>/dev/null; then
      echo "FAIL: $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | cut -c1-120) (pid $p) did not stop 30 s after SIGTERM; killed"
      kill -KILL "$p" 2>/dev/null || true
      hung=1
    fi
    wait "$p" 2>/dev/null || true
  done
  return $hung
}
cleanup() {
  local st=$?
  stop_bounded "${so_pids[@]}" "${up_pids[@]}" || { echo "test_services_scaleout: logs in $work"; st=1; }
  exit $st
}
trap cleanup EXIT
t_start=$SECONDS

# the upstream, one instance each for both rounds
gi=$tag-ingester gb=$tag-baseliner
"$pw" group to-end "$gi" perf.runs.v1 >/dev/null
"$pw" group to-end "$gb" perf.points.v1 perf.fleet-changes.v1 >/dev/null
so_start ingester "$gi" 1
so_start baseliner "$gb" 1
up_pids=("${so_pids[@]}")
so_pids=()
so_wait_assigned ingester "$gi" 1 90 && so_wait_assigned baseliner "$gb" 1 90 ||
  { fail "the ingester or the baseliner did not join"; exit 1; }

services=(gate bisector attributor)
so_env=(PW_GATE_POLL_INTERVAL=200ms PW_GATE_MIN_WAIT=45s PW_BISECTOR_TICK=200ms)
# the input topic each instance must hold a partition of
input_of() { case $1 in gate) echo perf.gate.requests.v1 ;; *) echo perf.alerts.v1 ;; esac; }

# active BISECTIONS of namespace NS / its unfinished gate evaluations
active() { q "SELECT count(*) FROM perfwatch.bisections WHERE bisection_id LIKE 'bs-%.$1-%' AND status IN ('running', 'verifying', 'escalated_pairwise')"; }
pending() { q "SELECT count(*) FROM perfwatch.gate_evaluations WHERE release_id LIKE '%.$1' AND status = 'pending'"; }
# everything a round produced, one number: changes while the services still work
progress() {
  q "SELECT (SELECT count(*) FROM perfwatch.alerts WHERE series_key LIKE '%.$1/%')
          + (SELECT coalesce(sum(revision), 0) FROM perfwatch.alerts WHERE series_key LIKE '%.$1/%')
          + (SELECT count(*) FROM perfwatch.attributions a JOIN perfwatch.series s USING (series_id) WHERE s.model LIKE '%.$1')
          + (SELECT count(*) FROM perfwatch.bisect_jobs WHERE bisection_id LIKE 'bs-%.$1-%')
          + (SELECT count(*) FROM perfwatch.outbox WHERE published_at IS NULL)"
}

# joined NAME N SERVICE...: every instance holds a partition of its input, after the last rebalance
joined() {
  local name=$1 n=$2 s i all deadline=$((SECONDS + 90))
  shift 2
  for s in "$@"; do
    so_wait_assigned "$s" "$ns-$s" "$n" 90 || { fail "$name: not every $s got partitions in 90 s"; return 1; }
  done
  # (a member's first assignment can be taken back when the second joins)
  while :; do
    all=1
    for s in "$@"; do
      for ((i = 0; i < n; i++)); do
        [ -n "$(so_held_topic "$work/$s.$ns-$s.$i.log" "$(input_of $s)")" ] || all=0
      done
    done
    [ $all -eq 1 ] && return 0
    [ $SECONDS -lt $deadline ] || { fail "$name: not every instance of $* holds a partition of its input"; return 1; }
    sleep 0.2
  done
}

# round NAME N: the worked example with N instances of each service under test
round() {
  local name=$1 n=$2 s i t0=$SECONDS
  ns=$tag$1
  "$pw" group to-end "$ns-gate" perf.gate.requests.v1 >/dev/null
  "$pw" group to-end "$ns-bisector" perf.compiler-cls.v1 perf.alerts.v1 >/dev/null
  "$pw" group to-end "$ns-attributor" perf.alerts.v1 perf.bisections.v1 >/dev/null
  "$pw" group to-end "$ns-answer" perf.bisect.jobs.v1 >/dev/null
  so_start bisector "$ns-bisector" "$n"
  so_start attributor "$ns-attributor" "$n"
  PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-answer" "$sim" answer "$scn" --namespace "$ns" --run-prefix "$ns-" >"$work/answer.$name.log" 2>&1 &
  so_pids+=($!)
  joined "$name" "$n" bisector attributor || return 1
  q "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
       ('chat-8b.$ns', 0.078, 'top', 'it'), ('rank-moe-110b.$ns', 0.05, 'top', 'it')
     ON CONFLICT (model) DO NOTHING" >/dev/null
  "$sim" replay "$scn" --namespace "$ns" --run-prefix "$ns-" >"$work/sim.$name.json" 2>"$work/sim.$name.log" ||
    { fail "$name: pw-sim replay failed"; tail -5 "$work/sim.$name.log"; return 1; }
  local t_replay=$SECONDS
  # The gate compares the candidate with the latest baseline stored when it evaluates, and the
  # baseliner goes on with the nightlies after the RC: started before the upstream caught up, the
  # gate's numbers would depend on how far the baseliner got, not on how many gates there are.
  "$pw" group lag "$gi" --wait 120 perf.runs.v1 >/dev/null && "$pw" group lag "$gb" --wait 120 perf.points.v1 >/dev/null ||
    { fail "$name: the ingester and the baseliner did not catch up in 120 s"; return 1; }
  so_start gate "$ns-gate" "$n"
  joined "$name" "$n" gate || return 1
  local held=""
  for s in "${services[@]}"; do
    for ((i = 0; i < n; i++)); do
      held+=" $s#$i=[$(so_held_topic "$work/$s.$ns-$s.$i.log" "$(input_of $s)")]"
    done
  done
  echo "$name: $(input_of gate) / $(input_of bisector) partitions held:$held"
  # done: the gate decided, a bisection started and every one ended, and nothing moved for 3 s
  deadline=$((SECONDS + 240))
  local last=-1 still=0 now
  while :; do
    if [ "$(pending "$ns")" = 0 ] && [ "$(q "SELECT count(*) FROM perfwatch.gate_evaluations WHERE release_id LIKE '%.$ns'")" -gt 0 ] &&
       [ "$(q "SELECT count(*) FROM perfwatch.bisections WHERE bisection_id LIKE 'bs-%.$ns-%'")" -gt 0 ] &&
       [ "$(active "$ns")" = 0 ]; then
      now=$(progress "$ns")
      if [ "$now" = "$last" ]; then still=$((still + 1)); else still=0; last=$now; fi
      [ $still -ge 6 ] && break
    fi
    [ $SECONDS -lt $deadline ] || { fail "$name: not settled 240 s after the replay (evaluations pending $(pending "$ns"), bisections active $(active "$ns"))"; break; }
    sleep 0.5
  done
  echo "$name: replay ${t_replay}s..$SECONDS s: settled $((SECONDS - t_replay)) s after the replay (round $((SECONDS - t0)) s)"
  # only this round's bisections and jobs: an instance also resumes what an earlier test on the stack left active
  for s in "${services[@]}"; do
    local g=$ns-$s
    for ((i = 0; i < n; i++)); do
      local log=$work/$s.$g.$i.log what
      case $s in
        gate) what="$(grep -c '"msg":"gate evaluation #[0-9]* done' "$log" || true) evaluations stored, $(grep -c 'finished elsewhere' "$log" || true) finished elsewhere" ;;
        bisector) what="$(grep -c '"msg":"alert .*: event .*, bisection' "$log" || true) alerts taken, $(grep -c "\"msg\":\"bisection bs-[^ ]*\\.$ns-[0-9]*: step " "$log" || true) steps judged, $(grep -c "\"msg\":\"confirm job cf-$ns-[^ ]*: alert " "$log" || true) confirmations decided" ;;
        attributor) what="$(grep -c '"msg":"attributed ' "$log" || true) attributions written" ;;
      esac
      echo "$name: $s#$i: $what"
      echo "$what" >"$work/did.$name.$s.$i"
    done
  done
  stop_bounded "${so_pids[@]}" || fail "$name: an instance did not stop on SIGTERM"
  so_pids=()
}

round single 1
round scaled 2

# the scaled round's instances both worked
for s in bisector attributor; do
  for i in 0 1; do
    n=$(cut -d' ' -f1 "$work/did.scaled.$s.$i" 2>/dev/null || echo 0)
    [ "${n:-0}" -gt 0 ] && pass "scaled: $s#$i took alerts off its partitions ($(cat "$work/did.scaled.$s.$i"))" ||
      fail "scaled: $s#$i took no alert: the partitions were not shared"
  done
done

a=${tag}single b=${tag}scaled
# every step and confirmation decided once: the instances' ticks share the stored bisections and jobs
for ns in "$a" "$b"; do
  r=${ns#$tag}
  steps=0 conf=0
  for f in "$work"/did.$r.bisector.*; do
    read -r _ _ _ st _ _ cf _ <"$f"
    steps=$((steps + st)) conf=$((conf + cf))
  done
  want_steps=$(q "SELECT count(*) FROM perfwatch.bisection_steps WHERE bisection_id LIKE 'bs-%.$ns-%' AND outcome <> 'pending'")
  want_conf=$(q "SELECT count(*) FROM perfwatch.confirm_alerts c JOIN perfwatch.series s USING (series_id)
                  WHERE s.model LIKE '%.$ns' AND c.outcome IN ('reproduced', 'not_reproduced')")
  [ "$steps" = "$want_steps" ] && [ "$conf" = "$want_conf" ] && [ "$steps" -gt 0 ] &&
    pass "$r: each of the $want_steps bisection steps and $want_conf confirmations was decided once, by one instance" ||
    fail "$r: the bisectors judged $steps steps and decided $conf confirmations; stored: $want_steps steps, $want_conf confirmations"
done
# nothing of either round was refused (two instances racing on one row surface here first)
for ns in "$a" "$b"; do
  dl=$(q "SELECT coalesce(string_agg(service || ' ' || reason || ': ' || left(detail, 160), '; '), '')
            FROM perfwatch.dead_letters WHERE service IN ('gate', 'bisector', 'attributor')
             AND position(convert_to('.$ns', 'UTF8') IN coalesce(original_key, ''::bytea)) > 0")
  [ -z "$dl" ] && pass "${ns#$tag}: nothing dead-lettered by the gate, the bisectors or the attributors" ||
    fail "${ns#$tag}: dead-lettered: $dl"
done

# cmp_rows WHAT SQL: SQL run with :NS = each round's namespace gives the same rows
cmp_rows() {
  local what=$1 sql=$2 ra rb
  ra=$(q "${sql//:NS/$a}" | sed "s/\\.$a//g" | sort)
  rb=$(q "${sql//:NS/$b}" | sed "s/\\.$b//g" | sort)
  printf '%s\n' "$ra" >"$work/$what.single"
  printf '%s\n' "$rb" >"$work/$what.scaled"
  local nr
  nr=$(grep -c . "$work/$what.single" || true)
  if [ "$nr" -gt 0 ] && [ "$ra" = "$rb" ]; then
    pass "the same $what with one and two instances ($nr rows)"
  else
    fail "$what differ between one and two instances ($nr rows single, $(grep -c . "$work/$what.scaled" || true) scaled):"
    diff "$work/$what.single" "$work/$what.scaled" | head -20 || true
  fi
}

cmp_rows "gate evaluation (release verdict, tests, impact)" \
  "SELECT release_id, evaluation, status, verdict, tests, round(fleet_weighted_impact_pct::numeric, 6)
     FROM perfwatch.gate_evaluations WHERE release_id LIKE '%.:NS'"
cmp_rows "gate family verdicts" \
  "SELECT release_id, family, tier, verdict, gated_series, regressed_series, round(spend_weighted_impact_pct::numeric, 6)
     FROM perfwatch.gate_family_results WHERE release_id LIKE '%.:NS'"
cmp_rows "gate series verdicts (regressed and the rest)" \
  "SELECT r.release_id, s.series_key, r.verdict, r.candidate_n, round(r.delta_pct::numeric, 6), round(r.q::numeric, 12)
     FROM perfwatch.gate_series_results r JOIN perfwatch.series s USING (series_id) WHERE r.release_id LIKE '%.:NS'"
echo "regressed series: $(q "SELECT string_agg(s.series_key || ' ' || r.verdict, ', ' ORDER BY s.series_key) FROM perfwatch.gate_series_results r
  JOIN perfwatch.series s USING (series_id) WHERE r.release_id LIKE '%.$b' AND lower(r.verdict) IN ('blocking', 'p1')")"
cmp_rows "bisections (target, range, status, culprit, confidence, builds, verification)" \
  "SELECT b.bisection_id, s.series_key, b.metric, b.range_lo, b.range_hi, b.status, b.culprit, b.confidence, b.builds,
          b.verified_adjacent_clean, b.cherry_pick_reproduced, b.reason,
          (SELECT count(*) FROM perfwatch.bisect_jobs j WHERE j.bisection_id = b.bisection_id),
          (SELECT count(*) FROM perfwatch.bisect_jobs j WHERE j.bisection_id = b.bisection_id AND j.reissued > 0)
     FROM perfwatch.bisections b JOIN perfwatch.series s USING (series_id) WHERE b.bisection_id LIKE 'bs-%.:NS-%'"
cmp_rows "bisection events (alerts of each event)" \
  "SELECT e.event_key, e.bisection_id, (SELECT string_agg(al.series_key || ' ' || al.kind, ';' ORDER BY al.series_key, al.kind)
          FROM perfwatch.alerts al WHERE al.alert_id = ANY (e.alert_ids))
     FROM perfwatch.bisector_events e WHERE e.bisection_id LIKE 'bs-%.:NS-%'"
for ns in "$a" "$b"; do
  nb=$(q "SELECT count(*) FROM perfwatch.bisections WHERE bisection_id LIKE 'bs-%.$ns-%'")
  ne=$(q "SELECT count(DISTINCT event_key) FROM perfwatch.bisector_events WHERE bisection_id LIKE 'bs-%.$ns-%'")
  [ "$nb" = "$ne" ] && [ "$nb" -gt 0 ] && pass "${ns#$tag}: one bisection per event ($nb)" || fail "${ns#$tag}: $nb bisections for $ne events"
done
echo "bisections: $(q "SELECT string_agg(bisection_id || ' ' || status || ' ' || coalesce(nullif(culprit, ''), '-') || ' ' || builds || ' builds', '; ')
  FROM perfwatch.bisections WHERE bisection_id LIKE 'bs-%.$b-%'")"
cmp_rows "attributions (series, source, status, owner, top op family, bisection)" \
  "SELECT s.series_key, at.source, at.status, at.owner_hint, at.top_op_family, at.bisection_id,
          round(at.measured_delta_pct::numeric, 6), at.before_runs, at.after_runs
     FROM perfwatch.attributions at JOIN perfwatch.series s USING (series_id) WHERE s.model LIKE '%.:NS'"
for ns in "$a" "$b"; do
  # every regression alert of the gate has its attribution
  miss=$(q "SELECT count(*) FROM perfwatch.alerts al WHERE al.series_key LIKE '%.$ns/%' AND al.source = 'gate' AND al.kind = 'regression'
             AND NOT EXISTS (SELECT 1 FROM perfwatch.attributions at WHERE at.alert_id = al.alert_id)")
  nat=$(q "SELECT count(*) FROM perfwatch.attributions at JOIN perfwatch.series s USING (series_id) WHERE s.model LIKE '%.$ns'")
  [ "$miss" = 0 ] && [ "$nat" -gt 0 ] && pass "${ns#$tag}: every gate regression alert attributed ($nat attributions)" ||
    fail "${ns#$tag}: $miss gate regression alerts without an attribution ($nat attributions)"
  # and every culprit, on its target alert
  nc=$(q "SELECT count(*) FROM perfwatch.bisections WHERE bisection_id LIKE 'bs-%.$ns-%' AND status = 'done' AND culprit <> ''")
  nbat=$(q "SELECT count(*) FROM perfwatch.attributions at JOIN perfwatch.bisections b USING (bisection_id)
             WHERE b.bisection_id LIKE 'bs-%.$ns-%' AND at.source = 'bisection' AND at.alert_id = b.alert_id")
  [ "$nc" = "$nbat" ] && [ "$nc" -gt 0 ] && pass "${ns#$tag}: each of the $nc culprits attributed once, on its bisection's alert" ||
    fail "${ns#$tag}: $nc culprits, $nbat attributions of a bisection"
done
cmp_rows "alerts (kind, source, routing, revision, bisection and attribution blocks)" \
  "SELECT series_key, kind, source, revision, bisection_status, coalesce(nullif(culprit, ''), '-'),
          op_diff_uri <> '', confirm_outcome
     FROM perfwatch.alerts WHERE series_key LIKE '%.:NS/%'"

echo "test_services_scaleout: $((SECONDS - t_start)) s"
if [ $fails -ne 0 ]; then
  echo "test_services_scaleout: $fails check(s) failed (logs in $work)"
  exit 1
fi
stop_bounded "${up_pids[@]}" || { echo "test_services_scaleout: logs in $work"; exit 1; }
up_pids=()
rm -rf "$work"
echo "test_services_scaleout: all checks passed"
