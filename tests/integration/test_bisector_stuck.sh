#!/usr/bin/env bash
# test_bisector_stuck.sh: bisections whose build jobs nobody answers give up
# (FAILED, reason no_answer, in `perfwatch bisect show` and on the alert's
# follow-up) after bisector.max_reissues re-issues, and never starve a later
# bisection whose executor listens.
#
# Two replays of the worked example, each in a namespace of its own, through
# the ingester, the baseliner, the gate and one bisector with max_active 2
# (job_timeout 4 s, max_reissues 2). Replay A's two events (chat-8b and
# rank-moe-110b) start two bisections whose jobs nobody answers: they hold
# both slots. Replay B's executor (`pw-sim answer` for B's namespace) listens:
# B's chat-8b bisection must get its jobs and end DONE with cl/7841917 while
# A's are stuck, and A's must end FAILED no_answer. Before the cap and the
# slot rule, A's jobs were re-issued forever and B got no job at all.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
bins=("$PW_BUILD/services/ingester/pw-ingester" "$PW_BUILD/services/baseliner/pw-baseliner"
      "$PW_BUILD/services/gate/pw-gate" "$PW_BUILD/services/bisector/pw-bisector"
      "$PW_BUILD/tools/simulator/pw-sim" "$PW_BUILD/tools/perfwatch")
need_bins "${bins[@]}"
pw=${bins[5]}
sim=${bins[4]}
scn=tools/simulator/scenarios/worked-example.scn
service_harness test_bisector_stuck bk
a=${ns}a b=${ns}b
for s in ingester baseliner gate bisector; do
  case $s in
    ingester) t="perf.runs.v1" ;; baseliner) t="perf.points.v1 perf.fleet-changes.v1" ;;
    gate) t="perf.gate.requests.v1" ;; bisector) t="perf.alerts.v1 perf.compiler-cls.v1" ;;
  esac
  # shellcheck disable=SC2086
  "$pw" group to-end "$ns-$s" $t >/dev/null || fail "placing $ns-$s at the topics' ends"
done
"$pw" group to-end "$b-answer" perf.bisect.jobs.v1 >/dev/null || fail "placing the executor's group"
q "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
     ('chat-8b.$a', 0.078, 'top', 'it'), ('rank-moe-110b.$a', 0.05, 'top', 'it'),
     ('chat-8b.$b', 0.078, 'top', 'it'), ('rank-moe-110b.$b', 0.05, 'top', 'it')
   ON CONFLICT (model) DO NOTHING" >/dev/null
for s in ingester baseliner gate bisector; do
  service_start $s PW_GATE_POLL_INTERVAL=200ms PW_GATE_MIN_WAIT=30s PW_BISECTOR_TICK=200ms \
    PW_BISECTOR_JOB_TIMEOUT=4s PW_BISECTOR_MAX_REISSUES=2 PW_BISECTOR_MAX_ACTIVE=2 PW_BISECTOR_GATHER=2s
done
for s in ingester baseliner gate bisector; do service_joined $s; done

status() { q "SELECT status FROM perfwatch.bisections WHERE bisection_id = '$1'"; }
# --- A: nobody answers; both slots taken -------------------------------------------------
"$sim" replay "$scn" --namespace "$a" --run-prefix "$a-" >"$work/sim-a.json" 2>"$work/sim-a.log" || fail "replay A failed"
deadline=$((SECONDS + 120))
until [ "$(q "SELECT count(*) FROM perfwatch.bisections WHERE bisection_id LIKE '%.$a-%'")" = 2 ]; do
  [ $SECONDS -lt $deadline ] || fail "replay A did not start its two bisections within 120 s"
  sleep 0.5
done
echo "test_bisector_stuck: A's two bisections started, their jobs unanswered: $(q "SELECT string_agg(bisection_id, ' ') FROM perfwatch.bisections WHERE bisection_id LIKE '%.$a-%'")"

# --- B: its executor listens ----------------------------------------------------------------
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$b-answer" "$sim" answer "$scn" --namespace "$b" >"$work/answer.log" 2>&1 &
pid[answer]=$!
"$sim" replay "$scn" --namespace "$b" --run-prefix "$b-" >"$work/sim-b.json" 2>"$work/sim-b.log" || fail "replay B failed"
bid=bs-chat-8b.$b-7841923
t0=$SECONDS
deadline=$((SECONDS + 240))
until [ "$(status "$bid")" = done ] || [ "$(status "$bid")" = failed ]; do
  kill -0 "${pid[bisector]}" 2>/dev/null || fail "pw-bisector exited"
  [ $SECONDS -lt $deadline ] || fail "B's bisection $bid not over within 240 s (status \"$(status "$bid")\", jobs $(q "SELECT count(*) FROM perfwatch.bisect_jobs WHERE bisection_id = '$bid'"))"
  sleep 0.5
done
res=$(q "SELECT status || ' ' || culprit FROM perfwatch.bisections WHERE bisection_id = '$bid'")
[ "$res" = "done cl/7841917" ] || fail "B's bisection ended \"$res\", want done cl/7841917"
echo "test_bisector_stuck: B's bisection got its jobs beside A's stuck ones and ended $res in $((SECONDS - t0)) s"

# --- A gives up: FAILED no_answer, in bisect show and on the follow-ups ------------------------
deadline=$((SECONDS + 120))
until [ "$(q "SELECT count(*) FROM perfwatch.bisections WHERE bisection_id LIKE '%.$a-%' AND status = 'failed'")" = 2 ]; do
  [ $SECONDS -lt $deadline ] || fail "A's bisections not FAILED within 120 s: $(q "SELECT string_agg(bisection_id || ' ' || status, ', ') FROM perfwatch.bisections WHERE bisection_id LIKE '%.$a-%'")"
  sleep 0.5
done
aid=bs-chat-8b.$a-7841923
show=$("$pw" bisect show "$aid" --json)
python3 - "$show" <<'PY' || fail "bisect show of $aid: no FAILED with reason no_answer"
import json, sys
b = json.loads(sys.argv[1])["bisection"]
assert b["status"] == "failed", b["status"]
assert b["reason"].startswith("no_answer"), b["reason"]
PY
shown=$("$pw" bisect show "$aid") # whole, then searched (grep -q would cut the pipe under pipefail)
grep -q "no_answer" <<<"$shown" || fail "the text of bisect show $aid does not say no_answer"
reissued=$(q "SELECT max(reissued) FROM perfwatch.bisect_jobs WHERE bisection_id = '$aid'")
[ "$reissued" = 2 ] || fail "A's job re-issued $reissued times, want the cap 2"
fu=""
for _ in $(seq 60); do
  fu=$(q "SELECT count(*) FROM perfwatch.alert_followups WHERE bisection_id = '$aid' AND bisection_status = 'failed'")
  [ "$fu" -ge 1 ] && break
  sleep 0.5
done
[ "$fu" -ge 1 ] || fail "no alert follow-up of $aid says failed"
echo "test_bisector_stuck: A's bisections FAILED no_answer after 2 re-issues: $(q "SELECT reason FROM perfwatch.bisections WHERE bisection_id = '$aid'" | cut -c1-160)"
echo "test_bisector_stuck: PASS"
