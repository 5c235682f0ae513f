#!/usr/bin/env bash
# test_bisector_reissue.sh: a dropped job is re-issued once and the
# bisection completes; the finished bisection follows up on its alerts.
#
# pw-sim replays the worked example (namespaced) through the ingester, the
# baseliner and the gate; pw-bisector (bisector.job_timeout 8 s) starts the
# event's bisection and publishes its first job while no executor listens:
# the job is dropped. The executor (`pw-sim answer`) joins at the topic's end
# after that publication, so it only sees the job when the bisector re-issues
# it under the same id after the timeout; then it answers every job and the
# bisection ends DONE with cl/7841917 verified on both sides. Exactly that
# job was re-issued, exactly once.
#
# Follow-ups (alert.proto): every alert of the event is published again on
# perf.alerts.v1 with follow_up = true and the bisection block (id, status,
# culprit, verification flags), under the original key; pw-attributor links
# its attribution from the artifacts block the same way. Neither service
# starts anything from a follow-up: still one bisection, the event's alert
# list unchanged, no attribution computed from a revision above 1.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc python3
bins=("$PW_BUILD/services/ingester/pw-ingester" "$PW_BUILD/services/baseliner/pw-baseliner"
      "$PW_BUILD/services/gate/pw-gate" "$PW_BUILD/services/bisector/pw-bisector"
      "$PW_BUILD/services/attributor/pw-attributor" "$PW_BUILD/tools/simulator/pw-sim"
      "$PW_BUILD/tools/perfwatch")
need_bins "${bins[@]}"
pw=${bins[6]}
sim=${bins[5]}
scn=tools/simulator/scenarios/worked-example.scn
service_harness test_bisector_reissue br
timeout_s=8
start() {
  service_start "$1" PW_GATE_POLL_INTERVAL=200ms PW_GATE_MIN_WAIT=45s PW_BISECTOR_TICK=200ms \
    PW_BISECTOR_JOB_TIMEOUT=${timeout_s}s PW_BISECTOR_GATHER=3s
}
joined() { service_joined "$1"; }
bid="bs-chat-8b.$ns-7841923"
bis="bisection_id = '$bid'"

q "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
     ('chat-8b.$ns', 0.078, 'top', 'it'), ('rank-moe-110b.$ns', 0.05, 'top', 'it')
   ON CONFLICT (model) DO NOTHING" >/dev/null
"$pw" group to-end "$ns-ingester" perf.runs.v1 >/dev/null &&
  "$pw" group to-end "$ns-baseliner" perf.points.v1 perf.fleet-changes.v1 >/dev/null &&
  "$pw" group to-end "$ns-gate" perf.gate.requests.v1 >/dev/null &&
  "$pw" group to-end "$ns-bisector" perf.alerts.v1 perf.compiler-cls.v1 >/dev/null &&
  "$pw" group to-end "$ns-attributor" perf.alerts.v1 perf.bisections.v1 >/dev/null ||
  fail "placing the groups at the topics' ends"
for s in ingester baseliner gate bisector attributor; do start $s; done
for s in ingester baseliner gate bisector attributor; do joined $s; done

# --- the replay; the first job goes out with no executor listening ------------------------------
"$sim" replay "$scn" --namespace "$ns" --run-prefix "$ns-" >"$work/sim.json" 2>"$work/sim.log" ||
  fail "pw-sim replay failed"
deadline=$((SECONDS + 120))
until [ "$(q "SELECT count(*) FROM perfwatch.bisect_jobs WHERE $bis")" -ge 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "no job of $bid within 120 s of the replay"
  sleep 0.2
done
first=$(q "SELECT job_id FROM perfwatch.bisect_jobs WHERE $bis ORDER BY step_index LIMIT 1")
t_first=$SECONDS
deadline=$((SECONDS + 30))
until kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.bisect.jobs.v1 -o beginning -e -q -f '%k\n' 2>/dev/null |
      grep -qx "$first"; do
  [ $SECONDS -lt $deadline ] || fail "job $first not on perf.bisect.jobs.v1 within 30 s"
  sleep 0.2
done
# the executor joins after the job went out: for it, the job was dropped
"$pw" group to-end "$ns-answer" perf.bisect.jobs.v1 >/dev/null || fail "placing the answer group"
[ "$(q "SELECT reissued FROM perfwatch.bisect_jobs WHERE job_id = '$first'")" = 0 ] ||
  fail "job $first re-issued before the executor joined (the timeout is ${timeout_s} s)"
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-answer" "$sim" answer "$scn" --namespace "$ns" >"$work/answer.log" 2>&1 &
pid[answer]=$!
echo "test_bisector_reissue: $first published with no executor; the executor joined at the topic's end"

deadline=$((SECONDS + 60))
until [ "$(q "SELECT reissued FROM perfwatch.bisect_jobs WHERE job_id = '$first'")" -ge 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "job $first not re-issued within 60 s (timeout ${timeout_s} s)"
  sleep 0.2
done
echo "test_bisector_reissue: $first re-issued after $((SECONDS - t_first)) s"

deadline=$((SECONDS + 180))
until [ "$(q "SELECT status FROM perfwatch.bisections WHERE $bis")" = done ] ||
      [ "$(q "SELECT status FROM perfwatch.bisections WHERE $bis")" = failed ]; do
  kill -0 "${pid[bisector]}" 2>/dev/null || fail "pw-bisector exited"
  [ $SECONDS -lt $deadline ] || fail "the bisection is not over 180 s after the re-issue"
  sleep 0.5
done
res=$(q "SELECT status || ' ' || culprit || ' ' || confidence || ' ' || builds FROM perfwatch.bisections WHERE $bis")
echo "test_bisector_reissue: $res (status culprit confidence builds)"
[ "$res" = "done cl/7841917 verified_both_sides $(q "SELECT builds FROM perfwatch.bisections WHERE $bis")" ] ||
  fail "bisection ended \"$res\", want done cl/7841917 verified_both_sides"
q "SELECT 'test_bisector_reissue: event alert ' || s.platform || ' ' || s.config || ' ' || s.metric || ' delta ' ||
          round(a.delta_abs::numeric, 4) || ' mad ' || round(a.baseline_mad::numeric, 4) || ' median ' ||
          round(a.baseline_median::numeric, 3) || ' pct ' || round(a.delta_pct::numeric, 2) || ' z ' ||
          round(a.z_robust::numeric, 1) || ' mde ' || coalesce(a.mde_pct, 0) || ' 2sigma ' || round(coalesce(a.two_sigma_pct, 0)::numeric, 2)
   FROM perfwatch.bisector_events e, unnest(e.alert_ids) x JOIN perfwatch.alerts a ON a.alert_id = x
   JOIN perfwatch.series s ON s.series_id = a.series_id WHERE e.$bis ORDER BY s.metric, s.config"
tgt=$(q "SELECT se.platform || ' ' || se.config || ' ' || se.metric FROM perfwatch.bisections b
         JOIN perfwatch.series se USING (series_id) WHERE $bis")
[ "$tgt" = "v6e-4 decode.B64.s2048.int8 tpot_p50_ms" ] ||
  fail "the bisection targets \"$tgt\", want the alert's primary latency series v6e-4 decode.B64.s2048.int8 tpot_p50_ms"
[ "$(q "SELECT reissued FROM perfwatch.bisect_jobs WHERE job_id = '$first'")" = 1 ] ||
  fail "job $first re-issued $(q "SELECT reissued FROM perfwatch.bisect_jobs WHERE job_id = '$first'") times, want once"
[ "$(q "SELECT count(*) FROM perfwatch.bisection_steps WHERE job_id = '$first' AND outcome <> 'pending'")" = 1 ] ||
  fail "the re-issued job's step was not measured"
others=$(q "SELECT coalesce(string_agg(job_id || ' x' || reissued, ', '), '') FROM perfwatch.bisect_jobs WHERE $bis AND job_id <> '$first' AND reissued > 0")
[ -z "$others" ] || fail "jobs answered in time were re-issued too: $others"
n=$(kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.bisect.jobs.v1 -o beginning -e -q -f '%k\n' 2>/dev/null | grep -cx "$first" || true)
[ "$n" = 2 ] || fail "$first on perf.bisect.jobs.v1 $n times, want 2 (published, re-issued)"
echo "test_bisector_reissue: $first published twice under one id, measured once; no other job re-issued"

# --- follow-ups on perf.alerts.v1 -----------------------------------------------------------------
alerts=$(q "SELECT string_agg(a, ' ') FROM perfwatch.bisector_events, unnest(alert_ids) a WHERE $bis")
na=$(wc -w <<<"$alerts")
[ "$na" -ge 2 ] || fail "the event holds $na alerts, want B64's and B8's"
deadline=$((SECONDS + 30))
until [ "$(q "SELECT count(*) FROM perfwatch.alert_followups WHERE bisection_id = '$bid' AND bisection_status = 'done'
              AND culprit = 'cl/7841917' AND verified_adjacent_clean AND cherry_pick_reproduced AND published_revision >= 2")" = "$na" ] &&
      [ "$(q "SELECT count(*) FROM perfwatch.outbox WHERE service = 'bisector' AND topic = 'perf.alerts.v1'
              AND ref LIKE 'alert:%' AND published_at IS NULL")" = 0 ]; do
  [ $SECONDS -lt $deadline ] || fail "the event's $na alerts were not followed up with the bisection"
  sleep 0.5
done
target=$(q "SELECT alert_id FROM perfwatch.bisections WHERE $bis")
tkey=$(q "SELECT topic_key FROM perfwatch.alert_followups WHERE alert_id = '$target'")
# the target's messages under its key, decoded: the original, then a follow-up with the bisection block
kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.alerts.v1 -o beginning -e -q -f '%k\t%o\t%p\n' 2>/dev/null |
  awk -F'\t' -v k="$tkey" '$1 == k {print $3, $2}' >"$work/target_offsets.txt"
[ -s "$work/target_offsets.txt" ] || fail "no message under the target's key \"$tkey\""
found=
orig=
while read -r part off; do
  kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.alerts.v1 -p "$part" -o "$off" -c 1 -e -q -f '%s' \
    >"$work/alert_${part}_$off.bin" 2>/dev/null || continue
  protoc --decode=perfwatch.v1.Alert -I proto proto/perfwatch/v1/alert.proto <"$work/alert_${part}_$off.bin" \
    >"$work/alert_$off.txt" 2>/dev/null || continue
  if [ -z "$orig" ] && grep -qx "alert_id: \"$target\"" "$work/alert_$off.txt" && ! grep -q 'follow_up: true' "$work/alert_$off.txt"; then
    orig="$part $off"
    cp "$work/alert_${part}_$off.bin" "$work/orig.bin"
    cp "$work/alert_$off.txt" "$work/orig.txt"
  fi
  if grep -qx "alert_id: \"$target\"" "$work/alert_$off.txt" && grep -q 'follow_up: true' "$work/alert_$off.txt" && grep -q 'follow_up_by: "bisector"' "$work/alert_$off.txt"; then
    python3 - "$work/alert_$off.txt" "$target" "$bid" <<'EOF' || fail "the bisector's follow-up of $target is not artifact 3's block"
import re, sys
t = open(sys.argv[1]).read()
assert 'alert_id: "%s"' % sys.argv[2] in t, t
assert re.search(r'revision: ([2-9]|[1-9][0-9]+)\n', t), t
b = t[t.index("bisection {"):]
b = b[:b.index("}")]
for want in ('bisection_id: "%s"' % sys.argv[3], 'status: "done"', 'culprit: "cl/7841917"',
             'verified_adjacent_clean: true', 'cherry_pick_reproduced: true', 'confidence: "verified_both_sides"'):
    assert want in b, (want, b)
print("test_bisector_reissue: follow-up of %s: %s" % (sys.argv[2], " ".join(l.strip() for l in b.splitlines()[1:])))
EOF
    found=1
  fi
done <"$work/target_offsets.txt"
[ -n "$found" ] || fail "no follow-up of $target by the bisector on perf.alerts.v1"

# the attributor links its attribution from the artifacts block of a follow-up
deadline=$((SECONDS + 60))
until [ "$(q "SELECT attribution_id <> '' AND op_diff LIKE 'perfwatch://attribution/%/op-diff' AND published_revision >= 2
              FROM perfwatch.alert_followups WHERE alert_id = '$target'")" = t ]; do
  [ $SECONDS -lt $deadline ] || fail "the attributor did not link the attribution of $target"
  sleep 0.5
done
echo "test_bisector_reissue: $target: $(q "SELECT 'revision ' || published_revision || ', attribution ' || attribution_id || ', ' || op_diff || ' ' || hlo_diff || ', bisection ' || bisection_status FROM perfwatch.alert_followups WHERE alert_id = '$target'")"
[ "$(q "SELECT revision FROM perfwatch.alerts WHERE alert_id = '$target'")" = \
  "$(q "SELECT published_revision FROM perfwatch.alert_followups WHERE alert_id = '$target'")" ] ||
  fail "perfwatch.alerts does not hold the last follow-up's revision"

# --- nothing started from a follow-up --------------------------------------------------------------
"$pw" group lag "$ns-bisector" --wait 60 perf.alerts.v1 >/dev/null || fail "the bisector did not catch up"
"$pw" group lag "$ns-attributor" --wait 90 perf.alerts.v1 perf.bisections.v1 >/dev/null || fail "the attributor did not catch up"
[ "$(q "SELECT count(*) FROM perfwatch.bisections WHERE bisection_id LIKE 'bs-chat-8b.$ns-%'")" = 1 ] ||
  fail "more than one bisection for the event after the follow-ups"
[ "$(q "SELECT cardinality(alert_ids) FROM perfwatch.bisector_events WHERE $bis")" = "$na" ] ||
  fail "follow-ups were added to the event's alerts"
n=$(q "SELECT count(*) FROM perfwatch.attributions a JOIN perfwatch.series s USING (series_id)
       WHERE s.model LIKE '%.$ns' AND a.input_key ~ ':r([2-9]|[1-9][0-9]+)$'")
[ "$n" = 0 ] || fail "$n attributions computed from follow-up revisions"
n=$(q "SELECT count(*) FROM perfwatch.dead_letters WHERE service IN ('bisector', 'attributor') AND failed_at > now() - interval '10 minutes'
       AND convert_from(original_key, 'UTF8') LIKE '%.$ns/%'")
[ "$n" = 0 ] || fail "$n of this event's messages dead-lettered"
echo "test_bisector_reissue: the follow-ups started no bisection and no attribution"

# --- after the end: a redelivered alert publishes nothing new; a late alert of the event gets its follow-up
rev=$(q "SELECT published_revision FROM perfwatch.alert_followups WHERE alert_id = '$target'")
[ -n "$orig" ] || fail "no original of $target under its key"
read -r part off <<<"$orig"
kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.alerts.v1 -p "$part" -k "$tkey" "$work/orig.bin" || fail "redelivering the alert"
sed "s/^alert_id: \"$target\"/alert_id: \"$target-late\"/" "$work/orig.txt" |
  protoc --encode=perfwatch.v1.Alert -I proto proto/perfwatch/v1/alert.proto >"$work/late.bin" || fail "encoding the late alert"
kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.alerts.v1 -p "$part" -k "$tkey" "$work/late.bin" || fail "publishing the late alert"
sleep 2
"$pw" group lag "$ns-bisector" --wait 60 perf.alerts.v1 >/dev/null || fail "the bisector did not catch up"
[ "$(q "SELECT published_revision FROM perfwatch.alert_followups WHERE alert_id = '$target'")" = "$rev" ] ||
  fail "the redelivered alert was followed up again"
deadline=$((SECONDS + 20))
until [ "$(q "SELECT bisection_status || ' ' || culprit || ' ' || (published_revision >= 2) FROM perfwatch.alert_followups WHERE alert_id = '$target-late'")" = "done cl/7841917 true" ]; do
  [ $SECONDS -lt $deadline ] || fail "the late alert of the finished event got no follow-up"
  sleep 0.5
done
[ "$(q "SELECT count(*) FROM perfwatch.bisections WHERE bisection_id LIKE 'bs-chat-8b.$ns-%'")" = 1 ] ||
  fail "the late alert started a bisection"
[ "$(q "SELECT count(*) FROM perfwatch.bisect_jobs WHERE $bis AND requested_at > now() - interval '5 seconds'")" = 0 ] ||
  fail "jobs after the late alert"
echo "test_bisector_reissue: a redelivered alert published nothing new; a late alert of the event was followed up at once"
echo "test_bisector_reissue: PASS"
