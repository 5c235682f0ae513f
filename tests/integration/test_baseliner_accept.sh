#!/usr/bin/env bash
# test_baseliner_accept.sh: a shift that holds is accepted, and the gate
# compares later releases against the shifted level (issue 17, "Accepted
# shifts").
#
# Run by tests/integration/run.sh. The worked example (tools/simulator/
# scenarios/worked-example.scn: chat-8b v6e-4 decode TPOT 3.90 -> 4.22 ms from
# the nightly of 2026-06-17) runs for 46 days instead of 41, with a second RC
# on 2026-06-26 of the same shifted line, through pw-sim → pw-ingester →
# pw-baseliner / pw-watcher → pw-gate, §4.2's window rules and the default
# baseliner.accept_after_nightlies = 7. `pw-sim answer` answers the
# re-baseline jobs. Checks:
#   - undecodable and malformed changepoints, and a waived series result
#     without its waiver_id, go to perf.dlq.v1 once each, with their reason
#     (decode_failed, invalid_value, missing_field);
#   - the watcher's changepoint reaches the baseliner, which tracks the shift
#     (pending) while 6 shifted nightlies exist: no acceptance, the series
#     active at its old level, xla-rc-2026-06-17 BLOCKING;
#   - a gate verdict that waived B8 TPOT p50 (delivered twice) accepts that
#     series at once (6 shifted nightlies), once, and supersedes its
#     changepoint;
#   - a page of B64 TPOT p99's regression triaged true (perf.triage.v1,
#     delivered twice) accepts that series at once, once; a verdict of a page
#     perfwatch.pages does not hold is dead-lettered;
#   - pw-baseliner is killed -9 and restarted (the pending shift is reloaded),
#     and the 7th shifted nightly makes it accept: one row 'accepted' per
#     shifted series with nightlies_held 7 and the old level, its freeze
#     (cause accepted_shift) and re-baseline job; killed -9 again right after,
#     nothing is recorded twice (rows, freezes, outbox jobs);
#   - the re-baseline completes at the shifted level: B64 TPOT's new
#     baseline is +7.6..8.8% above the old one (the scenario's +8.2%), and
#     `perfwatch series show` says so (accepted_shift);
#   - xla-rc-2026-06-26, on the shifted level, does not block on the
#     accepted series: B64 TPOT passes.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools python3 kcat protoc
sim=$PW_BUILD/tools/simulator/pw-sim
pw=$PW_BUILD/tools/perfwatch
need_bins "$PW_BUILD/services/ingester/pw-ingester" "$PW_BUILD/services/baseliner/pw-baseliner" \
  "$PW_BUILD/services/watcher/pw-watcher" "$PW_BUILD/services/gate/pw-gate" "$sim" "$pw"
service_harness test_baseliner_accept ac
. tests/integration/lib_gate.sh
pass() { echo "PASS: $*"; }
scn=$work/worked-example-later.scn
cp tools/simulator/scenarios/worked-example.scn "$scn"
echo "rc id=xla-rc-2026-06-26 cl=cl/7842265 day=2026-06-26 repeats=5 base=xla-2026-06-10" >>"$scn"
days=46
b64="chat-8b.$ns/hlo:9f31c2ab.$ns/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"
rel1=xla-rc-2026-06-17.$ns
rel2=xla-rc-2026-06-26.$ns

q "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
   ('chat-8b.$ns', 0.078, 'top', 'it'), ('rank-moe-110b.$ns', 0.05, 'top', 'it')
   ON CONFLICT (model) DO NOTHING" >/dev/null
"$pw" group to-end "$ns-ingester" perf.runs.v1 >/dev/null &&
  "$pw" group to-end "$ns-baseliner" perf.points.v1 perf.fleet-changes.v1 perf.changepoints.v1 \
    perf.gate.verdicts.v1 perf.triage.v1 >/dev/null &&
  "$pw" group to-end "$ns-watcher" perf.points.v1 perf.fleet-changes.v1 perf.baselines.v1 >/dev/null &&
  "$pw" group to-end "$ns-gate" perf.gate.requests.v1 >/dev/null &&
  "$pw" group to-end "$ns-answer" perf.bisect.jobs.v1 >/dev/null ||
  fail "placing the groups at the topics' ends"
service_start ingester
service_start baseliner
service_start watcher PW_BATCH_MAX_MS=100
service_start gate PW_GATE_POLL_INTERVAL=200ms
for s in ingester baseliner watcher gate; do service_joined $s; done
caught_up() {
  "$pw" group lag "$ns-ingester" --wait 120 perf.runs.v1 >/dev/null || fail "pw-ingester did not catch up"
  "$pw" group lag "$ns-watcher" --wait 120 perf.points.v1 >/dev/null || fail "pw-watcher did not catch up"
  "$pw" group lag "$ns-baseliner" --wait 120 perf.points.v1 perf.fleet-changes.v1 perf.changepoints.v1 \
    perf.gate.verdicts.v1 perf.triage.v1 >/dev/null || fail "pw-baseliner did not catch up"
}
wait_for() { # SECONDS SQL WANT
  local deadline=$((SECONDS + $1))
  until [ "$(q "$2")" = "$3" ]; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}
replay=("$sim" replay "$scn" --days "$days" --namespace "$ns" --run-prefix "$ns-")

# --- bad changepoints go to perf.dlq.v1 with their reason ---------------------------------------
cp_enc() { protoc --encode=perfwatch.v1.Changepoint -I proto proto/perfwatch/v1/changepoint.proto; }
printf '\x0a\xff\xff\xff' >"$work/cp_junk.bin"
cp_enc <<<"changepoint_id: \"x@b\" series_key: \"m.$ns/h/p/c/x\" series_id: 1 first_shifted_build_id: \"b\"
  shift_unix_us: 1781654400000000 level_before: 3.9 level_after: 3.9 stage: CHANGEPOINT_STAGE_PROVISIONAL" \
  >"$work/cp_flat.bin" || fail "encoding a changepoint"
cp_enc <<<"series_key: \"m.$ns/h/p/c/x\" series_id: 1 level_before: 3.9 level_after: 4.2" >"$work/cp_noid.bin" ||
  fail "encoding a changepoint"
gv_enc() { protoc --encode=perfwatch.v1.GateVerdict -I proto proto/perfwatch/v1/gate.proto; }
gv_enc <<<"release_id: \"r.$ns\" series { series_id: 1 series_key: \"m.$ns/h/p/c/x\" verdict: VERDICT_WAIVED
  baseline_median: 3.9 candidate_median: 4.2 }" >"$work/cp_gv.bin" || fail "encoding a gate verdict"
for f in junk flat noid gv; do
  topic=perf.changepoints.v1
  [ $f != gv ] || topic=perf.gate.verdicts.v1
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t $topic -k "$ns-cp-$f" "$work/cp_$f.bin" ||
    fail "producing cp_$f"
done
deadline=$((SECONDS + 30))
until n=$(kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.dlq.v1 -o beginning -e -q -f '%k\n' 2>/dev/null |
          grep -c "^$ns-cp-" || true) && [ "$n" -ge 4 ]; do
  [ $SECONDS -lt $deadline ] || fail "$n of 4 bad messages on perf.dlq.v1"
  sleep 0.5
done
kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.dlq.v1 -o beginning -e -q -f '%k %p %o\n' 2>/dev/null |
  grep "^$ns-cp-" >"$work/dlq.txt"
[ "$(wc -l <"$work/dlq.txt")" = 4 ] || fail "bad messages dead-lettered more than once: $(cat "$work/dlq.txt")"
while read -r k p o; do
  kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.dlq.v1 -p "$p" -o "$o" -c 1 -e -q -f '%s' |
    protoc --decode=perfwatch.v1.DeadLetter -I proto proto/perfwatch/v1/dlq.proto >"$work/dlq_${k##*-}.txt"
done <"$work/dlq.txt"
for want in "junk DLQ_REASON_DECODE_FAILED" "flat DLQ_REASON_INVALID_VALUE" "noid DLQ_REASON_MISSING_FIELD" \
            "gv DLQ_REASON_MISSING_FIELD"; do
  read -r f reason <<<"$want"
  grep -q "^reason: $reason" "$work/dlq_$f.txt" && grep -q 'service: "baseliner"' "$work/dlq_$f.txt" ||
    fail "cp_$f dead-lettered as $(grep -E '^(reason|detail)' "$work/dlq_$f.txt" | tr '\n' ' '), want $reason"
  echo "test_baseliner_accept: cp_$f -> $reason: $(grep '^detail' "$work/dlq_$f.txt")"
done
pass "bad changepoints and a waived result without its waiver dead-lettered once each with their reason"
acc() { # SQL over the shift rows of this test's series
  q "SELECT $1 FROM perfwatch.shift_acceptances a JOIN perfwatch.series s USING (series_id)
      WHERE s.model LIKE '%.$ns' ${2:+AND $2}"
}
t0=$SECONDS

# --- six shifted nightlies: tracked, not accepted -------------------------------------------
"${replay[@]}" --until 2026-06-23T00:00:00Z >"$work/sim1.json" 2>"$work/sim1.log" || fail "replay to 06-22"
caught_up
wait_for 30 "SELECT count(*) FROM perfwatch.shift_acceptances a JOIN perfwatch.series s USING (series_id)
              WHERE s.series_key = '$b64' AND a.status = 'pending'" 1 ||
  fail "the B64 TPOT shift is not tracked: $(acc "s.series_key, a.status, a.source_id")"
caught_up
pending=$(acc "count(*)" "a.status = 'pending'")
accepted=$(acc "count(*)" "a.status = 'accepted'")
[ "$accepted" = 0 ] && [ "$pending" -ge 1 ] ||
  fail "after 6 shifted nightlies: $pending pending, $accepted accepted (want none accepted)"
row=$(acc "a.source_id || ' ' || a.level_before || ' ' || a.level_after" "s.series_key = '$b64'")
st=$(q "SELECT state FROM perfwatch.baseliner_series WHERE series_key = '$b64'")
[ "$st" = active ] || fail "B64 TPOT is $st while its shift is pending, want active"
pass "6 shifted nightlies: $pending shifts tracked, none accepted; B64 TPOT active, tracking $row"
gate_verdict "$rel1" "${pid[gate]}" "$work/verdict1.txt" 90
grep -q '^verdict: VERDICT_BLOCKING' "$work/verdict1.txt" || fail "$rel1 is not BLOCKING: $(grep '^summary' "$work/verdict1.txt")"
pass "$rel1 BLOCKING on the shift (before acceptance)"

# --- a release shipped with B8 TPOT waived: accepted at once ----------------------------------
b8="chat-8b.$ns/hlo:9f31c2ab.$ns/v6e-4/decode.B8.s2048.int8/tpot_p50_ms"
read -r b8_id b8_base b8_after <<<"$(q "SELECT s.series_id, b.median, a.level_after FROM perfwatch.series s
  JOIN LATERAL (SELECT median FROM perfwatch.baselines x WHERE x.series_id = s.series_id ORDER BY version DESC LIMIT 1) b ON true
  JOIN perfwatch.shift_acceptances a ON a.series_id = s.series_id AND a.reason = 'changepoint_held'
  WHERE s.series_key = '$b8'" | tr '|' ' ')"
[ -n "$b8_after" ] || fail "B8 TPOT has no tracked shift to waive"
gv_enc <<<"release_id: \"$rel1\" verdict: VERDICT_WAIVED series { series_id: $b8_id series_key: \"$b8\"
  verdict: VERDICT_WAIVED waiver_id: \"wv-$ns\" baseline_median: $b8_base candidate_median: $b8_after }" \
  >"$work/waived.bin" || fail "encoding the waived verdict"
for _ in 1 2; do # the second is a redelivery
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.gate.verdicts.v1 -k "$rel1" "$work/waived.bin" ||
    fail "producing the waived verdict"
done
caught_up
wv=$(acc "a.reason || ' ' || a.status || ' ' || coalesce(a.nightlies_held, -1)" "s.series_key = '$b8' ORDER BY a.reason" | tr '\n' ' ')
[ "$wv" = "changepoint_held superseded -1 waiver accepted 6 " ] ||
  fail "B8 TPOT after its waiver: \"$wv\", want the changepoint superseded and the waiver accepted with 6 nightlies"
b8f=$(q "SELECT count(*) FROM perfwatch.freezes f JOIN perfwatch.series s USING (series_id)
          WHERE s.series_key = '$b8' AND f.cause = 'accepted_shift' AND f.unfrozen_at IS NULL")
[ "$b8f" = 1 ] && [ "$(q "SELECT state FROM perfwatch.baseliner_series WHERE series_key = '$b8'")" = frozen ] ||
  fail "B8 TPOT not frozen once by its waiver ($b8f open freezes)"
[ "$(acc "count(*)" "a.status = 'accepted'")" = 1 ] || fail "a waiver of one series accepted others"
pass "waiver wv-$ns (delivered twice): B8 TPOT accepted at once with 6 shifted nightlies, one freeze; its changepoint superseded"

# --- a page triaged true: B64 TPOT p99 accepted at once ---------------------------------------
# the pager's rows for one page of one regression alert (no pager runs here)
p99="chat-8b.$ns/hlo:9f31c2ab.$ns/v6e-4/decode.B64.s2048.int8/tpot_p99_ms"
read -r p99_id p99_base p99_after <<<"$(q "SELECT s.series_id, b.median, a.level_after FROM perfwatch.series s
  JOIN LATERAL (SELECT median FROM perfwatch.baselines x WHERE x.series_id = s.series_id ORDER BY version DESC LIMIT 1) b ON true
  JOIN perfwatch.shift_acceptances a ON a.series_id = s.series_id AND a.reason = 'changepoint_held'
  WHERE s.series_key = '$p99'" | tr '|' ' ')"
[ -n "$p99_after" ] || fail "B64 TPOT p99 has no tracked shift to triage"
q "INSERT INTO perfwatch.alerts (alert_id, kind, source, created_at, series_id, series_key, verdict, routing,
                                baseline_median, observed_median)
   VALUES ('al-$ns', 'regression', 'watcher', now(), $p99_id, '$p99', 'blocking', 'page', $p99_base, $p99_after);
   INSERT INTO perfwatch.pager_incidents (incident_id, dedup_key, action, payload, opened_at, updated_at)
   VALUES ('in-$ns', 'd-$ns', 'page', '{}', now(), now());
   INSERT INTO perfwatch.pager_incident_alerts (incident_id, alert_id) VALUES ('in-$ns', 'al-$ns');
   INSERT INTO perfwatch.pages (page_id, dedup_key, route, severity, verdict, summary, created_at, incident_id)
   VALUES ('pg-$ns', 'd-$ns', 'ml-perf-triage', 'critical', 'blocking', 'B64 TPOT p99', now(), 'in-$ns')" >/dev/null
tv_enc() { protoc --encode=perfwatch.v1.TriageVerdict -I proto proto/perfwatch/v1/page.proto; }
tv_enc <<<"page_id: \"pg-$ns\" outcome: TRIAGE_OUTCOME_TRUE_REGRESSION triager: \"it\"" >"$work/tv.bin" ||
  fail "encoding the triage verdict"
tv_enc <<<"page_id: \"pg-none-$ns\" outcome: TRIAGE_OUTCOME_TRUE_REGRESSION" >"$work/tv_unknown.bin" ||
  fail "encoding the triage verdict"
for f in tv tv; do # the second is a redelivery
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.triage.v1 -k "pg-$ns" "$work/$f.bin" || fail "producing $f"
done
kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.triage.v1 -k "$ns-tv-unknown" "$work/tv_unknown.bin" ||
  fail "producing the unknown page's verdict"
caught_up
tv=$(acc "a.reason || ' ' || a.status || ' ' || coalesce(a.nightlies_held, -1) || ' ' || a.source_id" \
         "s.series_key = '$p99' ORDER BY a.reason" | tr '\n' ' ')
[ "$tv" = "changepoint_held superseded -1 ${p99}@xla-nightly-2026-06-17 triaged_true accepted 6 pg-$ns " ] ||
  fail "B64 TPOT p99 after its page was triaged true: \"$tv\""
[ "$(acc "count(*)" "a.status = 'accepted'")" = 2 ] || fail "the triage verdict accepted other series"
deadline=$((SECONDS + 30))
until line=$(kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.dlq.v1 -o beginning -e -q -f '%k %p %o\n' 2>/dev/null |
             grep "^$ns-tv-unknown ") && [ -n "$line" ]; do
  [ $SECONDS -lt $deadline ] || fail "the verdict of an unknown page was not dead-lettered"
  sleep 0.5
done
read -r _ p o <<<"$line"
kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.dlq.v1 -p "$p" -o "$o" -c 1 -e -q -f '%s' |
  protoc --decode=perfwatch.v1.DeadLetter -I proto proto/perfwatch/v1/dlq.proto >"$work/dlq_tv.txt"
grep -q '^reason: DLQ_REASON_UNKNOWN_REFERENCE' "$work/dlq_tv.txt" ||
  fail "the unknown page's verdict dead-lettered as $(grep -E '^(reason|detail)' "$work/dlq_tv.txt" | tr '\n' ' ')"
pass "page pg-$ns triaged true (delivered twice): B64 TPOT p99 accepted at once with 6 shifted nightlies; an unknown page's verdict dead-lettered"

# --- kill -9, then the seventh nightly ---------------------------------------------------------
kill -9 "${pid[baseliner]}"
wait "${pid[baseliner]}" 2>/dev/null || true
service_start baseliner
"${replay[@]}" --since 2026-06-23T00:00:00Z --until 2026-06-24T00:00:00Z >"$work/sim2.json" 2>"$work/sim2.log" ||
  fail "replay of 06-23"
caught_up
wait_for 30 "SELECT count(*) FROM perfwatch.shift_acceptances a JOIN perfwatch.series s USING (series_id)
              WHERE s.series_key = '$b64' AND a.status = 'accepted'" 1 ||
  fail "the 7th shifted nightly did not accept B64 TPOT's shift: $(acc "s.series_key, a.status" "s.series_key = '$b64'")"
caught_up
kill -9 "${pid[baseliner]}"
wait "${pid[baseliner]}" 2>/dev/null || true
service_start baseliner
n_acc=$(acc "count(*)" "a.status = 'accepted'")
ok_acc=$(acc "count(*)" "a.status = 'accepted' AND a.old_version > 0 AND a.accepted_upto >= a.shift_at
               AND ((a.reason = 'changepoint_held' AND a.nightlies_held = 7)
                    OR (a.reason IN ('waiver', 'triaged_true') AND a.nightlies_held = 6))")
[ "$n_acc" -ge 1 ] && [ "$ok_acc" = "$n_acc" ] ||
  fail "accepted rows (all, held 7 with an old version): $n_acc $ok_acc"
fr=$(q "SELECT count(*) || ' ' || count(DISTINCT (f.series_id, f.event_id)) FROM perfwatch.freezes f
         JOIN perfwatch.shift_acceptances a ON a.series_id = f.series_id AND a.accept_id = f.event_id
        WHERE f.cause = 'accepted_shift' AND a.status = 'accepted'
          AND a.series_id IN (SELECT series_id FROM perfwatch.series WHERE model LIKE '%.$ns')")
[ "$fr" = "$n_acc $n_acc" ] || fail "accepted-shift freezes (rows, distinct): $fr, want $n_acc $n_acc"
jobs=$(q "SELECT count(DISTINCT r.job_id) FROM perfwatch.rebaseline_requests r
           JOIN perfwatch.shift_acceptances a ON a.series_id = r.series_id AND a.accept_id = r.event_id
          WHERE a.status = 'accepted' AND r.job_id <> ''
            AND a.series_id IN (SELECT series_id FROM perfwatch.series WHERE model LIKE '%.$ns')")
wait_for 30 "SELECT count(*) || ' ' || count(DISTINCT message_key) FROM perfwatch.outbox o
              WHERE o.service = 'baseliner' AND o.topic = 'perf.bisect.jobs.v1' AND o.published_at IS NOT NULL
                AND o.message_key IN (SELECT r.job_id FROM perfwatch.rebaseline_requests r
                      JOIN perfwatch.shift_acceptances a ON a.series_id = r.series_id AND a.accept_id = r.event_id
                     WHERE a.series_id IN (SELECT series_id FROM perfwatch.series WHERE model LIKE '%.$ns'))" \
  "$jobs $jobs" || fail "re-baseline jobs in the outbox: $jobs distinct jobs, not each published once"
"$pw" series show "$b64" >"$work/show1.json" || fail "series show $b64"
python3 - "$work/show1.json" <<'PY' || fail "series show after the acceptance: $(cat "$work/show1.json")"
import json, sys
v = json.load(open(sys.argv[1]))
a = v["accepted_shift"]
assert v["state"] == "frozen" and v["freeze"]["kind"] == "accepted_shift", (v["state"], v["freeze"])
assert a["status"] == "accepted" and a["reason"] == "changepoint_held" and a["nightlies_held"] == 7, a
assert a["shift_at"].startswith("2026-06-17"), a
assert v["rebaseline"]["event_id"] == a["accept_id"] and v["rebaseline"]["status"] == "open", v["rebaseline"]
assert "accepted shift" in v["why"], v["why"]
PY
pass "7th shifted nightly: $n_acc shifts accepted once each (after two kill -9), $n_acc freezes, $jobs re-baseline jobs published once"

# --- the re-baseline at the shifted level ---------------------------------------------------
PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-answer" "$sim" answer "$scn" --days "$days" --namespace "$ns" \
  >"$work/answer.log" 2>&1 &
pid[answer]=$!
wait_for 120 "SELECT count(*) FROM perfwatch.shift_acceptances a JOIN perfwatch.series s USING (series_id)
               WHERE s.model LIKE '%.$ns' AND a.status = 'accepted' AND a.new_version IS NOT NULL" "$n_acc" ||
  fail "re-baselined: $(acc "count(*)" "a.status = 'accepted' AND a.new_version IS NOT NULL") of $n_acc"
lv=$(acc "round(a.old_level::numeric, 3) || ' ' || round(a.new_level::numeric, 3) || ' '
          || round((100 * (a.new_level / a.old_level - 1))::numeric, 2) || ' ' || a.new_version - a.old_version" \
         "s.series_key = '$b64'")
read -r old new pct dv <<<"$lv"
awk -v p="$pct" 'BEGIN { exit !(p >= 7.6 && p <= 8.8) }' && [ "$dv" = 1 ] ||
  fail "B64 TPOT re-baselined $old -> $new ms ($pct%, $dv versions on), want +7.6..8.8% at the next version"
"$pw" series show "$b64" >"$work/show2.json" || fail "series show $b64"
python3 - "$work/show2.json" <<'PY' || fail "series show after the re-baseline: $(cat "$work/show2.json")"
import json, sys
v = json.load(open(sys.argv[1]))
a = v["accepted_shift"]
assert v["state"] == "active" and v["freeze"] is None, v["state"]
# the version that ended the freeze, or one after it from the same shifted window
assert a["new_version"] <= v["baseline"]["version"], (a, v["baseline"])
assert abs(v["baseline"]["median"] / a["new_level"] - 1) < 0.01, (a, v["baseline"])
assert v["baseline"]["window_start"] >= a["shift_at"], (a, v["baseline"])
assert 7.6 <= a["delta_pct"] <= 8.8 and a["done_at"], a
PY
pass "B64 TPOT re-baselined at the shifted level: $old -> $new ms ($pct%), the next version; series show agrees"

# --- a later release on the shifted line ------------------------------------------------------
"${replay[@]}" --since 2026-06-24T00:00:00Z >"$work/sim3.json" 2>"$work/sim3.log" || fail "replay from 06-24"
gate_verdict "$rel2" "${pid[gate]}" "$work/verdict2.txt" 90
caught_up
"$pw" gate show "$rel2" --json >"$work/gate2.json" || fail "gate show $rel2"
python3 - "$work/gate2.json" "$b64" <<'PY' || fail "$rel2 on the accepted series: $(grep '^summary' "$work/verdict2.txt")"
import json, sys
d = json.load(open(sys.argv[1]))
key = sys.argv[2]
s = [x for f in d["families"] for x in f["series"] if x.get("series_key") == key or
     (x["platform"], x["config"], x["metric"]) == ("v6e-4", "decode.B64.s2048.int8", "tpot_p50_ms") and f["family"].startswith("chat-8b")]
assert len(s) == 1, s
b = s[0]
# not a regression against the accepted level: pass, or under-powered when the
# re-baselined window's noise asks more than the RC's 5 runs (which points the
# window holds depends on when the acceptance met the nightlies: MAD 0.015 to
# 0.024 ms seen, required n 5 to 7); never a finding
assert b["verdict"] in ("pass", "under_powered") and abs(b["delta_pct"]) < 2.0, b
assert not b["alert_id"] and not b["effect_passed"], b
print("B64 TPOT %s at %+.2f%% against the accepted level" % (b["verdict"], b["delta_pct"]))
PY
# shifts the watcher reported later (rank-moe-110b's +3.1%, hbm_bw_util) are
# accepted at once when they arrive with enough nightlies behind them; none twice
again=$(acc "count(*) || ' ' || count(DISTINCT a.series_id)" "a.status = 'accepted'")
read -r n_all n_series <<<"$again"
[ "$n_all" = "$n_series" ] || fail "$n_all accepted rows for $n_series series: a series accepted twice"
b64_rows=$(acc "count(*) || ' ' || a.accepted_upto" "s.series_key = '$b64' GROUP BY a.accepted_upto")
[ "$b64_rows" = "1 2026-06-23 01:15:00+00" ] || fail "B64 TPOT's shift rows: \"$b64_rows\", want one accepted with the nightly of 06-23"
pass "$rel2: $(grep '^verdict' "$work/verdict2.txt"); B64 TPOT passes; $n_all series accepted, each once ($((n_all - n_acc)) reported later)"
echo "test_baseliner_accept: $((SECONDS - t0)) s"
echo "test_baseliner_accept: PASS"
