#!/usr/bin/env bash
# test_attributor.sh: the attributor through the real stack. pw-sim replays
# the worked example (namespaced) into the ingester; the baseliner and the
# gate raise the RC's regression alerts; pw-attributor, started after the
# alerts are out and killed -9 after its first attribution, attributes every
# one of them exactly once and publishes each on perf.attributions.v1. The
# B64 TPOT attribution must be artifact 6 (within the simulator's noise),
# name fusion.1423 -> fusion.1423a, softmax.88, fusion.1423b and the cap in
# its HLO diff, predict ~+6.5% against ~+8.2% measured with the residual as
# measured, explain v5e-8 and prefill, and say compiler. Then a table of bad
# inputs on both input topics, each dead-lettered with its reason.
#
# The outbox jam: before the attributor starts, its outbox holds a
# 3,000,834-byte follow-up (as an earlier attributor wrote it for a 3 MB
# alert: the row is in PostgreSQL, a restart does not help) and a 3 MB alert
# (lz4, so the broker takes it) waits on perf.alerts.v1. The row must be
# dead-lettered with its reason and marked, every attribution behind it
# published, and the 3 MB alert dead-lettered at the door as oversize.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc python3
bins=("$PW_BUILD/services/ingester/pw-ingester" "$PW_BUILD/services/baseliner/pw-baseliner"
      "$PW_BUILD/services/gate/pw-gate" "$PW_BUILD/services/attributor/pw-attributor"
      "$PW_BUILD/tools/simulator/pw-sim" "$PW_BUILD/tools/perfwatch")
need_bins "${bins[@]}"
pw=${bins[5]}
sim=${bins[4]}
scn=tools/simulator/scenarios/worked-example.scn
service_harness test_attributor at
start() { service_start "$1" PW_GATE_POLL_INTERVAL=200ms PW_GATE_MIN_WAIT=45s; }
mine="a.alert_id IN (SELECT alert_id FROM perfwatch.alerts WHERE source = 'gate' AND kind = 'regression'
                     AND series_key LIKE '%.$ns/%')"

q "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
     ('chat-8b.$ns', 0.078, 'top', 'it'), ('rank-moe-110b.$ns', 0.05, 'top', 'it')
   ON CONFLICT (model) DO NOTHING" >/dev/null
"$pw" group to-end "$ns-ingester" perf.runs.v1 >/dev/null &&
  "$pw" group to-end "$ns-baseliner" perf.points.v1 perf.fleet-changes.v1 >/dev/null &&
  "$pw" group to-end "$ns-gate" perf.gate.requests.v1 >/dev/null &&
  "$pw" group to-end "$ns-attributor" perf.alerts.v1 perf.bisections.v1 >/dev/null ||
  fail "placing the groups at the topics' ends"
for s in ingester baseliner gate; do start $s; done
for s in ingester baseliner gate; do service_joined $s; done

# --- the replay, the gate's alerts ---------------------------------------------------------
"$sim" replay "$scn" --namespace "$ns" --run-prefix "$ns-" >"$work/sim.json" 2>"$work/sim.log" ||
  fail "pw-sim replay failed"
rel=$("$sim" dump "$scn" --namespace "$ns" 2>/dev/null | grep -o '"gate_request":"[^"]*"' | head -1 | cut -d'"' -f4)
deadline=$((SECONDS + 300))
until [ "$(q "SELECT status FROM perfwatch.gate_evaluations WHERE release_id = '$rel' ORDER BY evaluation DESC LIMIT 1")" = done ]; do
  [ $SECONDS -lt $deadline ] || fail "no gate verdict for $rel within 300 s"
  sleep 1
done
nalerts=$(q "SELECT count(*) FROM perfwatch.alerts a WHERE $mine")
[ "$nalerts" -ge 2 ] || fail "the gate raised $nalerts regression alerts, want the B64 and B8 ones at least"
echo "test_attributor: the gate raised $nalerts regression alerts for $rel"

# --- the outbox jam: a 3 MB follow-up already in the outbox, a 3 MB alert on the topic -----------
b64key="chat-8b.$ns/hlo:9f31c2/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"
jam=$(q "INSERT INTO perfwatch.outbox (service, ref, topic, message_key, payload)
         VALUES ('attributor', 'alert:$ns-jam:r2', 'perf.alerts.v1', '',
                 convert_to(repeat('x', 3000834), 'UTF8')) RETURNING id" | head -1)
[ -n "$jam" ] || fail "cannot put the 3 MB row in the attributor's outbox"
python3 - "$ns" "$rel" >"$work/huge.txt" <<'PY'
import sys
ns, rel = sys.argv[1], sys.argv[2]
print('alert_id: "%s-huge" revision: 1 kind: ALERT_KIND_REGRESSION source: ALERT_SOURCE_GATE' % ns)
print('series_key: "chat-8b.%s/hlo:9f31c2/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"' % ns)
print('series { model: "chat-8b.%s" hlo_fingerprint: "hlo:9f31c2" platform: "v6e-4" '
      'config: "decode.B64.s2048.int8" metric: "tpot_p50_ms" }' % ns)
print('baseline { median: 3.9 mad: 0.017 n: 30 window: "xla-2026-06-10" } '
      'observed { median: 4.22 n: 5 release: "%s" } delta { abs: 0.32 pct: 8.2 }' % rel)
print('summary: "%s"' % ("x" * 3000000))
PY
protoc --encode=perfwatch.v1.Alert -I proto proto/perfwatch/v1/alert.proto <"$work/huge.txt" >"$work/huge.bin" ||
  fail "cannot encode the 3 MB alert"
kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.alerts.v1 -k "$b64key" -z lz4 -X message.max.bytes=4000000 \
  "$work/huge.bin" || fail "cannot publish the 3 MB alert"
echo "test_attributor: outbox row $jam of 3,000,834 bytes waiting, a $(wc -c <"$work/huge.bin")-byte alert on perf.alerts.v1"

# --- the attributor, killed -9 after its first attribution, restarted ------------------------
start attributor
deadline=$((SECONDS + 120))
until [ "$(q "SELECT count(*) FROM perfwatch.attributions a WHERE $mine")" -ge 1 ]; do
  kill -0 "${pid[attributor]}" 2>/dev/null || fail "pw-attributor exited"
  [ $SECONDS -lt $deadline ] || fail "no attribution within 120 s"
  sleep 0.05
done
kill -9 "${pid[attributor]}"
wait "${pid[attributor]}" 2>/dev/null || true
before_kill=$(q "SELECT count(*) FROM perfwatch.attributions a WHERE $mine")
echo "test_attributor: killed -9 with $before_kill of $nalerts attributed"
start attributor
deadline=$((SECONDS + 180))
until [ "$(q "SELECT count(*) FROM perfwatch.attributions a WHERE $mine")" -ge "$nalerts" ]; do
  kill -0 "${pid[attributor]}" 2>/dev/null || fail "pw-attributor exited after the restart"
  [ $SECONDS -lt $deadline ] || fail "only $(q "SELECT count(*) FROM perfwatch.attributions a WHERE $mine") of $nalerts attributed 180 s after the restart"
  sleep 0.5
done
"$pw" group lag "$ns-attributor" --wait 60 perf.alerts.v1 >/dev/null || fail "the attributor did not catch up"
n=$(q "SELECT count(*) FROM perfwatch.attributions a WHERE $mine AND status <> 'ok'")
[ "$n" = 0 ] || fail "$n attributions are not ok although every run carries an op table"
# every attribution on the topic (the outbox sends at least once; keys cover every alert)
deadline=$((SECONDS + 60))
while :; do
  kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.attributions.v1 -o beginning -e -q -f '%k\n' 2>/dev/null |
    grep -F ".$ns" | sort -u >"$work/keys.txt" || true
  published=$(q "SELECT alert_id FROM perfwatch.attributions a WHERE $mine ORDER BY 1" | comm -23 - "$work/keys.txt" | wc -l)
  [ "$published" = 0 ] && break
  [ $SECONDS -lt $deadline ] || fail "$published attributions not on perf.attributions.v1"
  sleep 1
done
n=$(q "SELECT count(*) FROM perfwatch.outbox WHERE service = 'attributor' AND published_at IS NULL")
[ "$n" = 0 ] || fail "$n attributor outbox rows unpublished"
echo "test_attributor: $nalerts attributions, each stored once and published (restart resumed)"

# --- the jam cleared: the 3 MB row dead-lettered and marked, the attributions behind it out -----
got=$(q "SELECT reason || ' ' || detail FROM perfwatch.dead_letters WHERE service = 'attributor'
         AND source_topic = 'perfwatch.outbox' AND kafka_offset = $jam")
case "$got" in
  "oversize outbox row $jam of attributor (ref \"alert:$ns-jam:r2\") for \"perf.alerts.v1\": message of 3000834 bytes over the topic's limit of 1000000 bytes") ;;
  *) fail "the 3 MB outbox row's dead letter: got \"$got\"" ;;
esac
[ "$(q "SELECT dead_letter_reason FROM perfwatch.outbox WHERE id = $jam AND published_at IS NOT NULL
        AND dead_lettered_at IS NOT NULL")" = oversize ] || fail "outbox row $jam is not marked dead-lettered"
# the attributions' rows came after it and went out to their topic
n=$(q "SELECT count(*) FROM perfwatch.outbox WHERE service = 'attributor' AND topic = 'perf.attributions.v1'
       AND id > $jam AND message_key LIKE '%.$ns%' AND published_at IS NOT NULL AND dead_lettered_at IS NULL")
[ "$n" -ge "$nalerts" ] || fail "$n attribution rows behind the 3 MB row published, want $nalerts"
sizes=$(q "SELECT min(length(payload)) || '..' || max(length(payload)) FROM perfwatch.outbox
           WHERE service = 'attributor' AND topic = 'perf.attributions.v1' AND message_key LIKE '%.$ns%'")
# on perf.dlq.v1: a DeadLetter from the attributor whose key is empty and whose source is the outbox
deadline=$((SECONDS + 60))
# (read whole, then searched: grep -q stopping early would fail the pipeline under pipefail)
until timeout 30 kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.dlq.v1 -o beginning -e -q >"$work/dlq.bin" 2>/dev/null;
      grep -a -q "outbox row $jam of attributor" "$work/dlq.bin"; do
  [ $SECONDS -lt $deadline ] || fail "no dead letter of outbox row $jam on perf.dlq.v1"
  sleep 1
done
got=$(q "SELECT reason || ' ' || detail FROM perfwatch.dead_letters WHERE service = 'attributor'
         AND source_topic = 'perf.alerts.v1' AND detail LIKE 'alert \"$ns-huge\"%'")
case "$got" in
  "oversize alert \"$ns-huge\" of 3000"*" bytes (at most 262144)") ;;
  *) fail "the 3 MB alert's dead letter: got \"$got\"" ;;
esac
[ "$(q "SELECT count(*) FROM perfwatch.attributions WHERE alert_id = '$ns-huge'")" = 0 ] ||
  fail "the 3 MB alert was attributed"
echo "test_attributor: the 3 MB outbox row dead-lettered (oversize) and marked; $n attributions ($sizes bytes) behind it published; the 3 MB alert dead-lettered at the door"

# --- the worked example: B64 TPOT ------------------------------------------------------------
b64=$(q "SELECT a.alert_id FROM perfwatch.alerts a WHERE $mine AND a.series_key LIKE 'chat-8b.$ns/%/v6e-4/decode.B64.s2048.int8/tpot_p50_ms'")
[ -n "$b64" ] || fail "no B64 TPOT alert"
"$pw" attribution show "$b64" >"$work/show.txt" || fail "perfwatch attribution show failed"
"$pw" attribution show "$b64" --json >"$work/show.json" || fail "perfwatch attribution show --json failed"
cat "$work/show.txt"
python3 - "$work/show.json" <<'PY' || fail "the B64 attribution is not the worked example (see $work/show.txt)"
import json, sys
d = json.load(open(sys.argv[1]))
ops = {o["op_name"]: o for o in d["ops"]}
want = [("fusion.1423", -2016, 25, "removed"), ("fusion.1423a", 1088, 15, "new"),
        ("fusion.1423b", 1184, 15, "new"), ("softmax.88", 256, 5, "new"),
        ("fusion.201", 2, 15, "unchanged"), ("ppermute.77", -1, 3, "unchanged")]
for name, delta, tol, change in want:
    o = ops[name]
    assert abs(o["delta_us"] - delta) <= tol, (name, o["delta_us"])
    assert o["change"] == change, (name, o["change"])
    assert o["calls"] == 32, (name, o["calls"])
assert [o["op_name"] for o in d["ops"][:4]] == ["fusion.1423", "fusion.1423b", "fusion.1423a", "softmax.88"], d["ops"]
assert abs(d["kernel_sum_before_us"] - 4032) <= 30 and abs(d["kernel_sum_after_us"] - 4545) <= 35, d
assert abs(d["wall_before_us"] - 3900) <= 30 and abs(d["wall_after_us"] - 4220) <= 35, d
assert d["kernel_wall_differ"], d["kernel_wall_note"]
assert d["top_op_family"] == "fusion.1423", d["top_op_family"]
assert d["top_op_family_members"] == "fusion.1423 → fusion.1423a, softmax.88, fusion.1423b", d["top_op_family_members"]
h = d["hlo_diff"]
for s in ("-  %fusion.1423 = ", "+  %fusion.1423a = ", "+  %softmax.88 = ", "+  %fusion.1423b = ",
          "fusion declined: projected vmem 2,097,152 B > cap 1,572,864 B (cl/7841917)"):
    assert s in h, s
assert "fusion.201" not in h and "ppermute.77" not in h, "unchanged computations in the diff"
assert abs(d["added_bytes_per_step"] - 2 * 32 * 16777216) < 1, d["added_bytes_per_step"]
assert abs(d["predicted_delta_pct"] - 6.5) <= 0.15, d["predicted_delta_pct"]
assert abs(d["measured_delta_pct"] - 8.2) <= 0.4, d["measured_delta_pct"]
assert abs(d["residual_us"] - (d["measured_delta_us"] - d["predicted_delta_us"])) < 1e-6
assert abs(d["residual_us"] - 68) <= 25, d["residual_us"]
assert d["memory_bound"] is True
sel = {x["series"].split("/", 1)[1]: x for x in d["selectivity"]}
v5e = sel["v5e-8/decode.B64.s2048.int8"]
assert v5e["explained"] and "1,048,576 B ≤ cap 1,572,864 B" in v5e["reason"], v5e
pre = [x for k, x in sel.items() if "prefill" in k]
assert pre and all(x["explained"] and "compute-bound" in x["reason"] for x in pre), pre
assert d["owner_hint"] == "compiler", d["owner_hint"]
print("test_attributor: B64 predicted %+.2f%% measured %+.2f%% residual %.0f µs, owner %s"
      % (d["predicted_delta_pct"], d["measured_delta_pct"], d["residual_us"], d["owner_hint"]))
PY
q "SELECT 'test_attributor: alert to attribution (s): median ' ||
          round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM a.created_at - a.alert_received_at))::numeric, 3)
          || ', max ' || round(max(extract(epoch FROM a.created_at - a.alert_received_at))::numeric, 3)
          || ' from the message taken off the topic'
   FROM perfwatch.attributions a WHERE $mine"

# --- a bisection's culprit: culprit-1 against the culprit, by bisect job ------------------------
# pw-sim answers two BisectJobs (cl/7841916, VERIFY_ADJACENT; cl/7841917, STEP) with runs carrying
# their job ids; a Bisection DONE naming them is attributed culprit-1 vs culprit for the B64 alert.
enc() { protoc --encode="perfwatch.v1.$1" -I proto "proto/perfwatch/v1/$2"; }
"$pw" group to-end "$ns-answer" perf.bisect.jobs.v1 >/dev/null || fail "placing the answer group"
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-answer" "$sim" answer "$scn" --namespace "$ns" >"$work/answer.log" 2>&1 &
pid[answer]=$!
sk="chat-8b.$ns/hlo:9f31c2ab.$ns/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"
series="series { model: \"chat-8b.$ns\" hlo_fingerprint: \"hlo:9f31c2ab.$ns\" platform: \"v6e-4\" config: \"decode.B64.s2048.int8\" metric: \"tpot_p50_ms\" }"
sleep 5 # the answer member joins its group before the jobs are out
for j in "adj 7841916 BISECT_PURPOSE_VERIFY_ADJACENT" "cul 7841917 BISECT_PURPOSE_STEP"; do
  read -r name cl purpose <<<"$j"
  printf 'job_id: "bj-%s-%s" bisection_id: "bs-%s" purpose: %s series_key: "%s" %s cl: "cl/%s" cl_number: %s repeats: 3' \
    "$ns" "$name" "$ns" "$purpose" "$sk" "$series" "$cl" "$cl" | enc BisectJob bisect.proto >"$work/job-$name.bin"
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.bisect.jobs.v1 -k "bj-$ns-$name" "$work/job-$name.bin" ||
    fail "producing bisect job $name"
done
deadline=$((SECONDS + 120))
until [ "$(q "SELECT count(*) FROM perfwatch.runs WHERE bisect_job_id IN ('bj-$ns-adj', 'bj-$ns-cul')")" -ge 6 ]; do
  [ $SECONDS -lt $deadline ] || fail "the bisect jobs' runs were not stored within 120 s"
  sleep 0.5
done
printf 'bisection_id: "bs-%s" alert_id: "%s" series_key: "%s" %s culprit: "cl/7841917" status: BISECTION_STATUS_DONE steps { index: 0 job_id: "bj-%s-cul" purpose: BISECT_PURPOSE_STEP cl: "cl/7841917" cl_number: 7841917 } steps { index: 1 job_id: "bj-%s-adj" purpose: BISECT_PURPOSE_VERIFY_ADJACENT cl: "cl/7841916" cl_number: 7841916 }' \
  "$ns" "$b64" "$sk" "$series" "$ns" "$ns" | enc Bisection bisect.proto >"$work/bisection.bin"
kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.bisections.v1 -k "bs-$ns" "$work/bisection.bin" || fail "producing the bisection"
deadline=$((SECONDS + 60))
until [ "$(q "SELECT source FROM perfwatch.attributions WHERE alert_id = '$b64'")" = bisection ]; do
  [ $SECONDS -lt $deadline ] || fail "the bisection was not attributed within 60 s"
  sleep 0.3
done
"$pw" attribution show "$b64" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
ops = {o["op_name"]: o for o in d["ops"]}
assert d["source"] == "bisection" and d["bisection_id"].startswith("bs-"), d["source"]
assert "7841916" in d["before_build_id"] and "7841917" in d["after_build_id"], (d["before_build_id"], d["after_build_id"])
assert d["before_runs"] == 3 and d["after_runs"] == 3, (d["before_runs"], d["after_runs"])
assert ops["fusion.1423"]["change"] == "removed" and ops["softmax.88"]["change"] == "new", ops
assert d["top_op_family"] == "fusion.1423" and d["owner_hint"] == "compiler", (d["top_op_family"], d["owner_hint"])
assert abs(d["predicted_delta_pct"] - 6.5) <= 0.2, d["predicted_delta_pct"]
print("test_attributor: bisection %s: %s -> %s, predicted %+.2f%% measured %+.2f%%" % (d["bisection_id"],
      d["before_build_id"], d["after_build_id"], d["predicted_delta_pct"], d["measured_delta_pct"]))
' || fail "the bisection's attribution is not culprit-1 vs culprit"

# --- bad input on both topics -----------------------------------------------------------------
key="$ns-bad"
printf 'not a protobuf \377\377' >"$work/bad1.bin"
printf 'kind: ALERT_KIND_REGRESSION source: ALERT_SOURCE_GATE' | enc Alert alert.proto >"$work/bad2.bin"
printf 'alert_id: "%s-unknown" kind: ALERT_KIND_REGRESSION source: ALERT_SOURCE_GATE series_key: "nope.%s/hlo:0/v6e-4/decode.B64.s2048.int8/tpot_p50_ms" series { model: "nope.%s" hlo_fingerprint: "hlo:0" platform: "v6e-4" config: "decode.B64.s2048.int8" metric: "tpot_p50_ms" } baseline { window: "xla-2026-06-10" } observed { release: "x" }' "$ns" "$ns" "$ns" |
  enc Alert alert.proto >"$work/bad3.bin"
printf 'alert_id: "%s-nowindow" kind: ALERT_KIND_REGRESSION source: ALERT_SOURCE_WATCHER series_id: 1 series { model: "m" hlo_fingerprint: "hlo:0" platform: "v6e-4" config: "decode.B64.s2048.int8" metric: "tpot_p50_ms" } observed { release: "x" }' "$ns" |
  enc Alert alert.proto >"$work/bad4.bin"
printf 'bisection_id: "%s-b1" alert_id: "a" series_key: "k" series { model: "m" hlo_fingerprint: "hlo:0" platform: "p" config: "c" metric: "x" } culprit: "abc" status: BISECTION_STATUS_DONE' "$ns" |
  enc Bisection bisect.proto >"$work/bad5.bin"
printf 'bisection_id: "%s-b2" alert_id: "a" series_key: "k" series { model: "m" hlo_fingerprint: "hlo:0" platform: "p" config: "c" metric: "x" } culprit: "cl/5" status: BISECTION_STATUS_DONE' "$ns" |
  enc Bisection bisect.proto >"$work/bad6.bin"
printf 'bisection_id: "%s-b3" series_key: "k" culprit: "cl/5" status: BISECTION_STATUS_DONE' "$ns" |
  enc Bisection bisect.proto >"$work/bad7.bin"
printf 'garbage \377' >"$work/bad8.bin"
table="perf.alerts.v1 bad1 decode_failed
perf.alerts.v1 bad2 missing_field
perf.alerts.v1 bad3 unknown_reference
perf.alerts.v1 bad4 missing_field
perf.bisections.v1 bad5 invalid_value
perf.bisections.v1 bad6 inconsistent
perf.bisections.v1 bad7 missing_field
perf.bisections.v1 bad8 decode_failed"
while read -r topic f _; do
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t "$topic" -k "$key-$f" "$work/$f.bin" || fail "producing $f"
done <<<"$table"
while read -r topic f reason; do
  deadline=$((SECONDS + 60))
  until got=$(q "SELECT reason || ' ' || detail FROM perfwatch.dead_letters WHERE service = 'attributor'
                 AND source_topic = '$topic' AND original_key = convert_to('$key-$f', 'UTF8')") && [ -n "$got" ]; do
    [ $SECONDS -lt $deadline ] || fail "$f on $topic was not dead-lettered"
    sleep 0.3
  done
  [ "${got%% *}" = "$reason" ] || fail "$f on $topic: dead-lettered as \"$got\", want $reason"
  echo "test_attributor: $topic $f -> $got"
done <<<"$table"
kill -0 "${pid[attributor]}" 2>/dev/null || fail "pw-attributor exited on bad input"
echo "test_attributor: PASS"
