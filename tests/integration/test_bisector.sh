#!/usr/bin/env bash
# test_bisector.sh: the bisector through the real stack. pw-sim replays the
# worked example (namespaced; the CL history first) into the ingester; the
# baseliner and the gate raise the RC's regression alerts; pw-bisector starts
# ONE bisection for the event (chat-8b at the RC's CL; the B64 and B8 alerts
# share it), publishes its jobs, `pw-sim answer` runs them, and the bisection
# ends DONE with culprit cl/7841917 verified on both sides. The bisector is
# killed -9 mid-bisection and restarted: the same culprit, every job id once,
# no job re-issued or published twice. A redelivered alert starts nothing new.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat python3
bins=("$PW_BUILD/services/ingester/pw-ingester" "$PW_BUILD/services/baseliner/pw-baseliner"
      "$PW_BUILD/services/gate/pw-gate" "$PW_BUILD/services/bisector/pw-bisector"
      "$PW_BUILD/tools/simulator/pw-sim" "$PW_BUILD/tools/perfwatch")
need_bins "${bins[@]}"
pw=${bins[5]}
sim=${bins[4]}
scn=tools/simulator/scenarios/worked-example.scn
service_harness test_bisector bs
start() { service_start "$1" PW_GATE_POLL_INTERVAL=200ms PW_GATE_MIN_WAIT=45s PW_BISECTOR_TICK=200ms; }
joined() { service_joined "$1"; }
bis="bisection_id = 'bs-chat-8b.$ns-7841923'"

q "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
     ('chat-8b.$ns', 0.078, 'top', 'it'), ('rank-moe-110b.$ns', 0.05, 'top', 'it')
   ON CONFLICT (model) DO NOTHING" >/dev/null
"$pw" group to-end "$ns-ingester" perf.runs.v1 >/dev/null &&
  "$pw" group to-end "$ns-baseliner" perf.points.v1 perf.fleet-changes.v1 >/dev/null &&
  "$pw" group to-end "$ns-gate" perf.gate.requests.v1 >/dev/null &&
  "$pw" group to-end "$ns-bisector" perf.alerts.v1 >/dev/null &&
  "$pw" group to-end "$ns-answer" perf.bisect.jobs.v1 >/dev/null ||
  fail "placing the groups at the topics' ends"
for s in ingester baseliner gate bisector; do start $s; done
for s in ingester baseliner gate bisector; do joined $s; done
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-answer" "$sim" answer "$scn" --namespace "$ns" >"$work/answer.log" 2>&1 &
pid[answer]=$!

# --- the replay (CL history first), the gate's alerts --------------------------------------
"$sim" replay "$scn" --namespace "$ns" --run-prefix "$ns-" >"$work/sim.json" 2>"$work/sim.log" ||
  fail "pw-sim replay failed"
deadline=$((SECONDS + 300))
until [ "$(q "SELECT count(*) FROM perfwatch.bisections WHERE $bis")" = 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "no bisection for the chat-8b.$ns event within 300 s"
  sleep 1
done
t_alert=$(q "SELECT extract(epoch FROM started_at) FROM perfwatch.bisections WHERE $bis")
# the target is fixed at the first job (after bisector.gather): the largest |delta| / noise of the event
deadline=$((SECONDS + 60))
until [ "$(q "SELECT count(*) FROM perfwatch.bisect_jobs WHERE $bis")" -ge 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "no job within 60 s of the bisection"
  sleep 0.2
done
echo "test_bisector: bisection started: $(q "SELECT b.range_lo || '..' || b.range_hi || ' ' || s.series_key || ' score ' || round(b.target_score::numeric, 1) FROM perfwatch.bisections b JOIN perfwatch.series s USING (series_id) WHERE $bis")"

# --- killed -9 mid-bisection, restarted ------------------------------------------------------
deadline=$((SECONDS + 120))
until [ "$(q "SELECT count(*) FROM perfwatch.bisection_steps WHERE $bis AND outcome <> 'pending'")" -ge 3 ]; do
  kill -0 "${pid[bisector]}" 2>/dev/null || fail "pw-bisector exited"
  [ $SECONDS -lt $deadline ] || fail "fewer than 3 steps measured within 120 s"
  sleep 0.1
done
kill -9 "${pid[bisector]}"
wait "${pid[bisector]}" 2>/dev/null || true
echo "test_bisector: killed -9 after $(q "SELECT count(*) FROM perfwatch.bisection_steps WHERE $bis AND outcome <> 'pending'") steps"
start bisector
deadline=$((SECONDS + 300))
until [ "$(q "SELECT status FROM perfwatch.bisections WHERE $bis")" != running ] &&
      [ "$(q "SELECT status FROM perfwatch.bisections WHERE $bis")" != verifying ]; do
  kill -0 "${pid[bisector]}" 2>/dev/null || fail "pw-bisector exited after the restart"
  [ $SECONDS -lt $deadline ] || fail "the bisection is not over 300 s after the restart"
  sleep 0.5
done
res=$(q "SELECT status || ' ' || culprit || ' ' || confidence || ' ' || builds || ' ' ||
                round(extract(epoch FROM finished_at) - $t_alert, 1) FROM perfwatch.bisections WHERE $bis")
echo "test_bisector: $res (status culprit confidence builds seconds-from-alert)"
read -r st cul conf builds secs <<<"$res"
[ "$st" = done ] || fail "status $st, want done"
[ "$cul" = cl/7841917 ] || fail "culprit $cul, want cl/7841917"
[ "$conf" = verified_both_sides ] || fail "confidence $conf, want verified_both_sides"
"$pw" bisect show "bs-chat-8b.$ns-7841923" >"$work/show.txt" || fail "perfwatch bisect show failed"
cat "$work/show.txt"
grep -q 'culprit = cl/7841917 .*confidence: verified-both-sides' "$work/show.txt" ||
  fail "perfwatch bisect show does not name the verified culprit"
al=$(q "SELECT alert_ids[cardinality(alert_ids)] FROM perfwatch.bisector_events WHERE bisection_id = 'bs-chat-8b.$ns-7841923'")
"$pw" bisect show "$al" --json >"$work/show.json" || fail "perfwatch bisect show ALERT --json failed"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["bisection"]["culprit"]=="cl/7841917" and len(d["steps"])==int(sys.argv[2]), d' \
  "$work/show.json" "$builds" || fail "perfwatch bisect show --json"

# --- every job issued once, none re-issued, resends identical ---------------------------------
n=$(q "SELECT count(*) - count(DISTINCT job_id) FROM perfwatch.bisect_jobs WHERE $bis")
[ "$n" = 0 ] || fail "$n duplicate job ids"
n=$(q "SELECT count(*) FROM perfwatch.bisect_jobs WHERE $bis AND reissued > 0")
[ "$n" = 0 ] || fail "$n jobs re-issued"
njobs=$(q "SELECT count(*) FROM perfwatch.bisect_jobs WHERE $bis")
# The outbox is at-least-once: a kill -9 between the broker's acknowledgement
# and the row's mark re-sends that job, same id and same bytes, and the job id
# is the executor's idempotency key (docs/bisector.md). So: every job is on the
# topic, no job id was issued twice, and a repeated message is a byte-identical
# resend of its job.
kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.bisect.jobs.v1 -o beginning -e -q -f '%k\t%S\t%s' 2>/dev/null >"$work/jobs.bin" ||
  fail "reading perf.bisect.jobs.v1"
counts=$(python3 - "$work/jobs.bin" "bs-chat-8b.$ns-7841923-" <<'PY'
import sys
data, prefix, i = open(sys.argv[1], 'rb').read(), sys.argv[2].encode(), 0
seen, n = {}, 0
while i < len(data):
    t1 = data.index(b'\t', i); t2 = data.index(b'\t', t1 + 1)
    key, size = data[i:t1], int(data[t1 + 1:t2])
    payload, i = data[t2 + 1:t2 + 1 + size], t2 + 1 + size
    if not key.startswith(prefix):
        continue
    n += 1
    if seen.setdefault(key, payload) != payload:
        sys.exit("job %s published with different contents" % key.decode())
print(len(seen), n)
PY
) || fail "a job id was published with different contents"
read -r nkeys nmsgs <<<"$counts"
[ "$nkeys" = "$njobs" ] || fail "$nkeys job ids on perf.bisect.jobs.v1 for $njobs jobs"
resent=$((nmsgs - njobs))
echo "test_bisector: $njobs jobs, each issued once across the kill -9 ($resent byte-identical resends)"

# --- one bisection per event: B8's alert joined it; a redelivered alert starts nothing ------
n=$(q "SELECT count(*) FROM perfwatch.bisections WHERE bisection_id LIKE 'bs-chat-8b.$ns-%'")
[ "$n" = 1 ] || fail "$n bisections for the chat-8b.$ns event"
na=$(q "SELECT cardinality(alert_ids) FROM perfwatch.bisector_events WHERE bisection_id = 'bs-chat-8b.$ns-7841923'")
[ "$na" -ge 2 ] || fail "the event holds $na alerts, want B64's and B8's"
# the target alert's message again (keyed by its series), byte for byte, with its key
b64=$(q "SELECT s.series_key FROM perfwatch.bisections b JOIN perfwatch.series s USING (series_id) WHERE $bis")
loc=$(kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.alerts.v1 -o beginning -e -q -f '%k %p %o\n' 2>/dev/null |
  awk -v k="$b64" '$1 == k && !n++ {print $2, $3}')
[ -n "$loc" ] || fail "no alert of $b64 on perf.alerts.v1"
read -r part off <<<"$loc"
kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.alerts.v1 -p "$part" -o "$off" -c 1 -e -q -f '%s' >"$work/alert.bin" 2>/dev/null
kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.alerts.v1 -p "$part" -k "$b64" "$work/alert.bin" ||
  fail "re-publishing the alert"
sleep 3
"$pw" group lag "$ns-bisector" --wait 60 perf.alerts.v1 >/dev/null || fail "the bisector did not catch up"
n=$(q "SELECT count(*) FROM perfwatch.bisections WHERE bisection_id LIKE 'bs-chat-8b.$ns-%'")
[ "$n" = 1 ] || fail "$n bisections after redelivering the alerts"
[ "$(q "SELECT cardinality(alert_ids) FROM perfwatch.bisector_events WHERE bisection_id = 'bs-chat-8b.$ns-7841923'")" = "$na" ] ||
  fail "redelivered alerts were added again"
[ "$(q "SELECT count(*) FROM perfwatch.bisect_jobs WHERE $bis")" = "$njobs" ] || fail "jobs added after redelivery"
echo "test_bisector: redelivered alerts start no second bisection"
echo "test_bisector: builds $builds, alert to verified culprit $secs s"
echo "test_bisector: PASS"
