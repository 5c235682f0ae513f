#!/usr/bin/env bash
# test_canary.sh: the production canary through the real stack (docs/canary.md,
# "The canary service"). pw-sim canary publishes 12 h of live windows (three
# families, TPOT, TTFT and goodput every 5 minutes: chat-8b on TPU with a +1%
# TPOT regression injected, summarize-13b on TPU and chat-70b-gpu on GPU
# without) twice, under two rollout ids: the first to a pw-canary left alone,
# the second to one killed -9 three times while it takes the windows, and
# restarted each time. Both rollouts decide the same: chat-8b ROLLBACK to its
# pre-staged N−1 artifact, the others PROMOTE, with the same metric, effect,
# interval, windows and deciding window, and each decision is on
# perf.rollouts.v1 exactly once. The first rollout's windows published again
# change nothing. Then a table of bad windows — not finite, not positive,
# unknown or missing fields, out of order for a closed family, a redelivery
# with other numbers, another N−1 artifact than the family's — each
# dead-lettered with its reason.
# `perfwatch canary show` reports the decisions.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc python3
bins=("$PW_BUILD/services/canary/pw-canary" "$PW_BUILD/tools/simulator/pw-sim" "$PW_BUILD/tools/perfwatch")
need_bins "${bins[@]}"
sim=${bins[1]}
pw=${bins[2]}
service_harness test_canary cn
start() { service_start canary; }
a="$ns-a"
b="$ns-b"
# families of rollout $1 whose decision is recorded and whose 144 windows of each metric are all taken
settled() { q "SELECT count(*) FROM perfwatch.canary_families WHERE rollout_id = '$1' AND final AND windows = 432"; }
stored() { q "SELECT count(*) FROM perfwatch.canary_windows WHERE rollout_id = '$1'"; }
wait_settled() {
  local deadline=$((SECONDS + 180))
  until [ "$(settled "$1")" = 3 ]; do
    kill -0 "${pid[canary]}" 2>/dev/null || fail "pw-canary exited"
    [ $SECONDS -lt $deadline ] || fail "rollout $1: $(settled "$1") of 3 families settled, $(stored "$1") of 1296 windows within 180 s"
    sleep 0.3
  done
}
decisions() {
  q "SELECT family || ' ' || decision || ' ' || inconclusive || ' ' || metric || ' ' || round(effect_pct::numeric, 9) || ' '
       || round(lo_pct::numeric, 9) || ' ' || round(hi_pct::numeric, 9) || ' ' || decision_windows || ' ' || windows || ' '
       || to_char(decided_window_start AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS') || ' '
       || coalesce(rollback_artifact, '-')
     FROM perfwatch.canary_families WHERE rollout_id = '$1' ORDER BY family"
}

"$pw" group to-end "$ns-canary" perf.canary.v1 >/dev/null || fail "placing the group at the topic's end"
start
service_joined canary

# --- an uninterrupted canary ---------------------------------------------------------------------
"$sim" canary --rollout "$a" --hours 12 >"$work/sim_a.json" 2>"$work/sim.log" || fail "pw-sim canary failed"
echo "test_canary: published $(cat "$work/sim_a.json")"
wait_settled "$a"
decisions "$a" >"$work/decisions_a.txt"
sed 's/^/test_canary: uninterrupted: /' "$work/decisions_a.txt"
grep -q '^chat-8b ROLLBACK false ' "$work/decisions_a.txt" || fail "chat-8b (+1% TPOT) was not rolled back"
grep -q ' serving/chat-8b/xla-rc-2026-06-15.aot$' "$work/decisions_a.txt" || fail "chat-8b's rollback does not name the N-1 artifact"
grep -q '^summarize-13b PROMOTE false ' "$work/decisions_a.txt" || fail "summarize-13b (null) was not promoted"
grep -q '^chat-70b-gpu PROMOTE false ' "$work/decisions_a.txt" || fail "chat-70b-gpu (null) was not promoted"

# --- the same canary, pw-canary killed -9 three times while it takes the windows -----------------
"$sim" canary --rollout "$b" --hours 12 >"$work/sim_b.json" 2>>"$work/sim.log" || fail "pw-sim canary failed"
for at in 250 480 760; do
  deadline=$((SECONDS + 120))
  until [ "$(stored "$b")" -ge $at ]; do
    kill -0 "${pid[canary]}" 2>/dev/null || fail "pw-canary exited"
    [ $SECONDS -lt $deadline ] || fail "rollout $b: $(stored "$b") windows stored within 120 s, waiting for $at"
    sleep 0.02
  done
  kill -9 "${pid[canary]}"
  wait "${pid[canary]}" 2>/dev/null || true
  echo "test_canary: pw-canary killed -9 with $(stored "$b") of 1296 windows of $b stored, $(q "SELECT count(*) FROM perfwatch.canary_families WHERE rollout_id = '$b' AND final") of 3 decisions recorded"
  start
done
wait_settled "$b"
grep -q '"msg":"canary family \\"'"$b"'/.* rebuilt from [0-9]* stored windows' "$work/canary.log" ||
  fail "no family of $b was rebuilt from its stored windows after a restart"
decisions "$b" >"$work/decisions_b.txt"
if ! diff "$work/decisions_a.txt" "$work/decisions_b.txt" >"$work/decisions.diff"; then
  fail "the interrupted canary decided otherwise than the uninterrupted one: $(cat "$work/decisions.diff")"
fi
echo "test_canary: the canary killed -9 three times decides as the uninterrupted one (family, decision, metric, effect, interval, windows, deciding window, artifact)"
[ "$(q "SELECT count(*) FROM perfwatch.canary_windows WHERE rollout_id = '$b'")" = 1296 ] || fail "windows of $b not stored once each"

# --- each decision published exactly once ---------------------------------------------------------
deadline=$((SECONDS + 60))
until [ "$(q "SELECT count(*) FROM perfwatch.outbox WHERE service = 'canary' AND published_at IS NULL")" = 0 ]; do
  [ $SECONDS -lt $deadline ] || fail "decisions left unpublished in the outbox"
  sleep 0.3
done
rollouts() {
  kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.rollouts.v1 -o beginning -e -q -f '%k\n' 2>/dev/null |
    awk -v a="$a/" -v b="$b/" 'index($0, a) == 1 || index($0, b) == 1' | sort | uniq -c
}
rollouts >"$work/rollout_keys.txt"
[ "$(wc -l <"$work/rollout_keys.txt")" = 6 ] || fail "perf.rollouts.v1 holds $(wc -l <"$work/rollout_keys.txt") decision keys, want 6: $(cat "$work/rollout_keys.txt")"
if awk '$1 != 1 { bad = 1 } END { exit !bad }' "$work/rollout_keys.txt"; then
  fail "a decision was published more than once: $(awk '$1 != 1' "$work/rollout_keys.txt")"
fi
read -r part off <<<"$(kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.rollouts.v1 -o beginning -e -q -f '%k %p %o\n' 2>/dev/null |
  awk -v k="$b/chat-8b" '$1 == k { print $2, $3 }')"
kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.rollouts.v1 -p "$part" -o "$off" -c 1 -e -q -f '%s' >"$work/rollback.bin" 2>/dev/null ||
  fail "reading $b/chat-8b's decision at $part:$off"
protoc --decode=perfwatch.v1.RolloutDecision -I proto proto/perfwatch/v1/canary.proto <"$work/rollback.bin" >"$work/rollback.txt" ||
  fail "the ROLLBACK on perf.rollouts.v1 does not decode"
grep -q 'decision: ROLLOUT_DECISION_ROLLBACK' "$work/rollback.txt" && grep -q 'metric: CANARY_METRIC_' "$work/rollback.txt" &&
  grep -q 'rollback_artifact: "serving/chat-8b/xla-rc-2026-06-15.aot"' "$work/rollback.txt" ||
  fail "the ROLLBACK message: $(cat "$work/rollback.txt")"
echo "test_canary: perf.rollouts.v1 holds each of the 6 decisions once; $b/chat-8b: $(tr '\n' ' ' <"$work/rollback.txt" | head -c 300)"

# --- a redelivered canary changes nothing ---------------------------------------------------------
"$sim" canary --rollout "$a" --hours 2 >/dev/null 2>>"$work/sim.log" || fail "pw-sim canary (again) failed"
"$pw" group lag "$ns-canary" --wait 90 perf.canary.v1 >/dev/null || fail "the windows published again were not all taken within 90 s"
[ "$(stored "$a")" = 1296 ] || fail "windows published again were stored twice"
decisions "$a" | diff "$work/decisions_a.txt" - >/dev/null || fail "windows published again changed a decision"
rollouts >"$work/rollout_keys2.txt"
diff "$work/rollout_keys.txt" "$work/rollout_keys2.txt" >/dev/null || fail "windows published again published a decision again"
echo "test_canary: 216 windows of $a published again: nothing stored twice, no decision again"

# --- perfwatch canary show ----------------------------------------------------------------------
"$pw" canary show --rollout "$b" --json >"$work/show.json" || fail "perfwatch canary show failed"
python3 - "$work/show.json" <<'PY' || fail "perfwatch canary show: $(head -c 1500 "$work/show.json")"
import json, sys
s = json.load(open(sys.argv[1]))
f = {x["family"]: x for x in s["families"]}
assert sorted(f) == ["chat-70b-gpu", "chat-8b", "summarize-13b"], f.keys()
r = f["chat-8b"]
assert r["decision"] == "ROLLBACK" and r["final"] and r["rollback_artifact"] == "serving/chat-8b/xla-rc-2026-06-15.aot", r
worse = r["lo_pct"] > r["tolerance_pct"] if r["metric"] != "goodput" else r["hi_pct"] < -r["tolerance_pct"]
assert worse and r["decision_windows"] > 12 and r["decided_at"] and r["decided_window_start"], r
for n in ("summarize-13b", "chat-70b-gpu"):
    p = f[n]
    assert p["decision"] == "PROMOTE" and not p["inconclusive"] and p["rollback_artifact"] is None, p
    assert all(m["verdict"] == "NO_REGRESSION" for m in p["metrics"]) and len(p["metrics"]) == 3, p
    bound = p["hi_pct"] < p["mde_pct"] if p["metric"] != "goodput" else p["lo_pct"] > -p["mde_pct"]
    assert bound, p
PY
"$pw" canary show --rollout "$b" | sed 's/^/test_canary: /'

# --- undecided at the horizon: HOLD, inconclusive, final, published once --------------------------
# pw-canary restarted with a 30-minute horizon: a new rollout's families take it (a family's options
# are stored at its first window; the rollouts above keep theirs), and 30 minutes are inside the
# pilot hour, so no sequence can decide: each family is HOLD, inconclusive, at its sixth window
kill -TERM "${pid[canary]}"
wait "${pid[canary]}" 2>/dev/null || true
service_start canary PW_CANARY_HORIZON=30m
c="$ns-c"
"$sim" canary --rollout "$c" --hours 2 >/dev/null 2>>"$work/sim.log" || fail "pw-sim canary (horizon) failed"
deadline=$((SECONDS + 120))
until [ "$(q "SELECT count(*) FROM perfwatch.canary_families WHERE rollout_id = '$c' AND windows = 72")" = 3 ]; do
  kill -0 "${pid[canary]}" 2>/dev/null || fail "pw-canary exited"
  [ $SECONDS -lt $deadline ] || fail "rollout $c: its 216 windows not taken within 120 s"
  sleep 0.3
done
got=$(q "SELECT string_agg(family || ' ' || decision || ' ' || inconclusive || ' ' || final || ' ' || decision_windows || ' '
           || horizon_s || ' ' || to_char(decided_window_start AT TIME ZONE 'UTC', 'HH24:MI'), ', ' ORDER BY family)
         FROM perfwatch.canary_families WHERE rollout_id = '$c'")
[ "$got" = "chat-70b-gpu HOLD true true 6 1800 09:25, chat-8b HOLD true true 6 1800 09:25, summarize-13b HOLD true true 6 1800 09:25" ] ||
  fail "rollout $c at a 30-minute horizon: $got"
[ "$(q "SELECT DISTINCT horizon_s FROM perfwatch.canary_families WHERE rollout_id = '$a'")" = 172800 ] ||
  fail "the restart with another horizon changed rollout $a's stored options"
"$pw" group lag "$ns-canary" --wait 60 perf.canary.v1 >/dev/null || fail "the horizon rollout's windows not all committed"
deadline=$((SECONDS + 60))
until [ "$(q "SELECT count(*) FROM perfwatch.outbox WHERE service = 'canary' AND published_at IS NULL")" = 0 ]; do
  [ $SECONDS -lt $deadline ] || fail "inconclusive decisions left unpublished in the outbox"
  sleep 0.3
done
n=$(kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.rollouts.v1 -o beginning -e -q -f '%k\n' 2>/dev/null | grep -c "^$c/" || true)
[ "$n" = 3 ] || fail "perf.rollouts.v1 holds $n decisions of $c, want 3 (one inconclusive HOLD per family)"
"$pw" canary show --rollout "$c" | grep "HOLD (inconclusive: the horizon passed undecided)" >/dev/null ||
  fail "perfwatch canary show does not say the horizon passed: $("$pw" canary show --rollout "$c")"
echo "test_canary: at a 30-minute horizon every family of $c is HOLD, inconclusive and final at its sixth window, published once each"

# --- bad windows, each dead-lettered ------------------------------------------------------------
enc() { protoc --encode=perfwatch.v1.CanaryWindow -I proto proto/perfwatch/v1/canary.proto; }
w() { # rollout family metric start canary baseline [family_kind [previous_release [previous_artifact]]]
  printf 'rollout_id: "%s" family: "%s" metric: %s window_start_unix_us: %s canary_value: %s baseline_value: %s family_kind: "%s" previous_release: "%s" previous_artifact: "%s" release: "xla-rc-2026-06-22" artifact: "n" window_s: 300 canary_replicas: 2 baseline_replicas: 2 canary_fraction: 0.03' \
    "$1" "$2" "$3" "$4" "$5" "$6" "${7:-tpu}" "${8:-xla-rc-2026-06-15}" "${9:-n-1}"
}
t0=1782118800000000
w "$ns-x" fam CANARY_METRIC_TPOT $t0 nan 3.9 | enc >"$work/b1.bin"
w "$ns-x" fam CANARY_METRIC_UNSPECIFIED $t0 3.9 3.9 | enc >"$work/b2.bin"
w "$ns-x" "" CANARY_METRIC_TPOT $t0 3.9 3.9 | enc >"$work/b3.bin"
printf 'garbage \377' >"$work/b4.bin"
w "$ns-x" fam CANARY_METRIC_TTFT $t0 180 -180 | enc >"$work/b5.bin"
w "$ns-x" fam CANARY_METRIC_TPOT $t0 3.9 3.9 cpu | enc >"$work/b6.bin"
n1=serving/chat-8b/xla-rc-2026-06-15.aot
w "$a" chat-8b CANARY_METRIC_TPOT $((t0 + 1000000)) 3.9 3.9 tpu xla-rc-2026-06-15 $n1 | enc >"$work/b7.bin"
w "$a" chat-8b CANARY_METRIC_TPOT $t0 99 3.9 tpu xla-rc-2026-06-15 $n1 | enc >"$work/b8.bin"
w "$ns-x" fam CANARY_METRIC_TPOT $t0 3.9 3.9 tpu xla-rc-2026-06-22 | enc >"$work/b9.bin"
w "$a" chat-8b CANARY_METRIC_TPOT $((t0 + 200 * 300000000)) 3.9 3.9 tpu xla-rc-2026-06-15 other.aot | enc >"$work/b10.bin"
table="b1 invalid_value canary_value nan
b2 missing_field metric is unspecified
b3 missing_field canary window needs family
b4 decode_failed CanaryWindow
b5 invalid_value baseline_value -180
b6 invalid_value family_kind \"cpu\" is not tpu or gpu
b7 inconsistent the rollout is closed for this family
b8 conflict is stored with canary
b9 inconsistent release and previous_release are both
b10 inconsistent the family is stored as tpu \"xla-rc-2026-06-22\" against \"xla-rc-2026-06-15\" (\"serving/chat-8b/xla-rc-2026-06-15.aot\")"
key="bad-$ns"
while read -r f _; do
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.canary.v1 -k "$key-$f" "$work/$f.bin" || fail "producing $f"
done <<<"$table"
while read -r f reason detail; do
  deadline=$((SECONDS + 60))
  until got=$(q "SELECT reason || ' ' || detail FROM perfwatch.dead_letters WHERE service = 'canary'
                 AND source_topic = 'perf.canary.v1' AND original_key = convert_to('$key-$f', 'UTF8')") && [ -n "$got" ]; do
    [ $SECONDS -lt $deadline ] || fail "$f was not dead-lettered"
    sleep 0.3
  done
  [ "${got%% *}" = "$reason" ] || fail "$f: dead-lettered as \"$got\", want $reason"
  [[ $got == *"$detail"* ]] || fail "$f: \"$got\" does not say \"$detail\""
  echo "test_canary: $f -> $got"
done <<<"$table"
[ "$(q "SELECT count(*) FROM perfwatch.canary_families WHERE rollout_id = '$ns-x'")" = 0 ] || fail "a refused window made a family"
[ "$(stored "$a")" = 1296 ] || fail "a refused window of $a was stored"
decisions "$a" | diff "$work/decisions_a.txt" - >/dev/null || fail "a refused window changed a decision"
kill -0 "${pid[canary]}" 2>/dev/null || fail "pw-canary exited on bad input"
echo "test_canary: PASS"
