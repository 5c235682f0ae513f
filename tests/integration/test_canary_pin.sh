#!/usr/bin/env bash
# test_canary_pin.sh: per-family version pinning end to end (seed §8
# follow-up; docs/gate.md "Pins", docs/canary.md "Pins") — the worked example
# "the release rolled to canary after a waiver: chat-8b pinned to N−1, the
# others promoted", through the real pw-gate, pw-canary and pw-sim canary.
#
#   1. A gate request whose waiver pins chat-8b without a model-team sign-off
#      is dead-lettered invalid_value naming the waiver (nothing stored).
#   2. The release: chat-8b +5% TPOT (BLOCKING without its waiver), summarize-13b
#      and chat-70b-gpu within noise; the waiver (owner, expiry, sign-off) pins
#      chat-8b to N−1 with its artifact. The gate decides chat-8b WAIVED, the
#      release rolls; `perfwatch gate show` (text and JSON) lists the pin.
#   3. pw-sim canary publishes 12 h of the release's canary (its families
#      named for this run; chat-8b +1% TPOT): chat-8b is PINNED to N−1 with
#      owner, expiry and sign-off on perf.rollouts.v1, once, and never
#      promoted or rolled back; summarize-13b and chat-70b-gpu PROMOTE.
#   4. The pin expires while pw-canary is down (killed -9; its expiry is set
#      in PostgreSQL standing in for the hour passing): the restarted canary
#      reports it once — an error line, perfwatch_canary_pins_expired_total,
#      PIN_EXPIRED on perf.rollouts.v1, a perfwatch.pin_expiries row. Killed
#      -9 again and restarted, it reports it no more (a second pin, expiring
#      after the restart, is the sign that the restarted canary looked).
#   5. An hour more of chat-8b's windows: no longer pinned, it is decided by
#      the rule (ROLLBACK, +1% TPOT), once on perf.rollouts.v1.
# A pw-pager of its own group (a real Alertmanager, a webhook for on-call) reads
# it all: no page while chat-8b is pinned and the others are promoted, then
# one page, the rollback's, delivered once.
set -euo pipefail

. tests/integration/lib.sh
. tests/integration/lib_gate.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc python3 curl
cli=$PW_BUILD/tools/perfwatch
sim=$PW_BUILD/tools/simulator/pw-sim
need_bins "$PW_BUILD/services/gate/pw-gate" "$PW_BUILD/services/canary/pw-canary" "$sim" "$cli"
service_harness test_canary_pin cp
tag=${ns#cp}
sfx=-pin$tag
base=xla-pin-base-$tag
rel=xla-pin-rc-$tag
hlo=hlo:pin$tag
chat=chat-8b$sfx
summ=summarize-13b$sfx
gpu=chat-70b-gpu$sfx
wv=wv-pin-$tag
artifact=serving/$chat/$base.aot
rollout=$ns-rollout
on_exit() { q "DELETE FROM perfwatch.spend_weights WHERE model LIKE '%$sfx'" >/dev/null 2>&1 || true; }
trap 'service_cleanup; on_exit' EXIT

# ------------------------------------------------------------------ the release's data (as test_p1.sh)
# series MODEL PLATFORM CONFIG LEVEL SHIFT: the series, an active baseline, 30 runs of N-1 and 5 of the RC +SHIFT
series() {
  gate_series pin "$hlo" "$base" "$1" "$2" "$3" "$4"
  gate_add_samples pin "$1/$hlo/$2/$3/tpot_p50_ms" "$rel" rc 1 5 "$4" "$5" 0.004
}
psqlq -c "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
          ('$chat', 0.05, 'top', 'it'), ('$summ', 0.03, 'top', 'it'), ('$gpu', 0.04, 'top', 'it')
          ON CONFLICT (model) DO UPDATE SET spend_share = EXCLUDED.spend_share, tier = EXCLUDED.tier"
series "$chat" v6e-4 decode.B64 3.90 0.05
series "$summ" v6e-4 decode.B8 2.10 0.0
series "$gpu" v6e-4 decode.B8 5.20 0.0

"$cli" group to-end "$ns-gate" perf.gate.requests.v1 >/dev/null || fail "placing the gate's group at the topic's end"
"$cli" group to-end "$ns-canary" perf.canary.v1 >/dev/null || fail "placing the canary's group at the topic's end"
service_start gate PW_GATE_POLL_INTERVAL=200ms PW_GATE_MIN_WAIT=1s
service_start canary PW_CANARY_PIN_CHECK_INTERVAL=300ms
"$cli" group to-end "$ns-pager" perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 \
  perf.attributions.v1 perf.rollouts.v1 >/dev/null || fail "placing the pager's group at the topics' end"
hook_start
am_start
service_start pager PW_PAGER_TRIAGE_KEY="pin-test-key-$ns" PW_PAGER_BUDGET_PER_WEEK=1000 PW_PAGER_TICK=200ms \
  PW_PAGER_ALERTMANAGER_URL="$am" PW_PAGER_WEBHOOK_URL="http://127.0.0.1:$hook_port/hook"
service_joined gate
service_joined canary
service_joined pager
# pages: the pages of this run's pager (its group), one line each: page id, delivery, the canary's family and decision
pages() {
  q "SELECT page_id || ' ' || delivery_status || ' ' || coalesce(payload -> 'canary' ->> 'family', '-') || ' '
            || coalesce(payload -> 'canary' ->> 'decision', '-') FROM perfwatch.pages WHERE pager_group = '$ns-pager'
      ORDER BY page_id"
}

# ------------------------------------------------------------------ 1. a pin without sign-off
"$cli" gate request --release "$rel-nosign" --candidate "$rel" --baseline "$base" --family "$chat" \
  --waive "$chat:chat-oncall:+3600:$wv-nosign" --pin "$chat:" >/dev/null || fail "publishing the unsigned pin"
deadline=$((SECONDS + 60))
until [ "$(q "SELECT count(*) FROM perfwatch.dead_letters WHERE source_topic = 'perf.gate.requests.v1'
              AND reason = 'invalid_value' AND detail LIKE '%$wv-nosign%sign-off%'")" = 1 ]; do
  kill -0 "${pid[gate]}" 2>/dev/null || fail "pw-gate exited"
  [ $SECONDS -lt $deadline ] || fail "the pin without sign-off was not dead-lettered invalid_value naming $wv-nosign"
  sleep 0.2
done
[ "$(q "SELECT count(*) FROM perfwatch.waivers WHERE waiver_id = '$wv-nosign'")" = 0 ] || fail "the unsigned pin was stored"
echo "test_canary_pin: unsigned pin dead-lettered: $(q "SELECT detail FROM perfwatch.dead_letters WHERE detail LIKE '%$wv-nosign%'")"

# ------------------------------------------------------------------ 2. the release, chat-8b waived and pinned
"$cli" gate request --release "$rel" --candidate "$rel" --baseline "$base" \
  --family "$chat" --family "$summ" --family "$gpu" \
  --waive "$chat:chat-oncall:+3600:$wv" --pin "$chat:chat-models-lead:$artifact" >/dev/null ||
  fail "publishing the release's request"
deadline=$((SECONDS + 120))
until [ "$(q "SELECT status FROM perfwatch.gate_evaluations WHERE release_id = '$rel' AND evaluation = 1")" = done ]; do
  kill -0 "${pid[gate]}" 2>/dev/null || fail "pw-gate exited"
  [ $SECONDS -lt $deadline ] || fail "$rel was not decided within 120 s"
  sleep 0.2
done
verdicts=$(q "SELECT string_agg(family || '=' || verdict, ' ' ORDER BY family COLLATE \"C\") FROM perfwatch.gate_family_results
              WHERE release_id = '$rel' AND evaluation = 1")
echo "test_canary_pin: gate: $verdicts"
[ "$verdicts" = "$gpu=pass $chat=waived $summ=pass" ] || fail "gate verdicts of $rel: $verdicts"
[ "$(q "SELECT count(*) FROM perfwatch.gate_series_results WHERE release_id = '$rel' AND waiver_id = '$wv'")" -ge 1 ] ||
  fail "no series of $chat names the waiver"
"$cli" gate show "$rel" >"$work/show.txt" || fail "perfwatch gate show failed"
grep -F "pin: $chat PINNED to N-1 $base (artifact $artifact) by waiver $wv, owner chat-oncall, signed off by chat-models-lead, expires " \
  "$work/show.txt" || fail "gate show does not list the pin: $(cat "$work/show.txt")"
"$cli" gate show "$rel" --json >"$work/show.json" || fail "perfwatch gate show --json failed"
python3 - "$work/show.json" "$chat" "$base" "$artifact" "$wv" <<'PY' || fail "gate show --json's pins are wrong: $(cat "$work/show.json")"
import json, sys
_, path, chat, base, artifact, wv = sys.argv
d = json.load(open(path))
pins = d["pins"]
assert len(pins) == 1, pins
p = pins[0]
assert (p["family"], p["pinned_release"], p["pinned_artifact"], p["waiver_id"], p["owner"], p["signed_off_by"]) == \
    (chat, base, artifact, wv, "chat-oncall", "chat-models-lead"), p
assert p["expires"].endswith("Z") and p["expires_unix_us"] > 0 and not p["expired"] and not p["expiry_reported"], p
PY

# ------------------------------------------------------------------ 3. the canary: chat-8b PINNED, the others PROMOTE
"$sim" canary --rollout "$rollout" --hours 12 --release "$rel" --previous "$base" --family-suffix "$sfx" \
  >"$work/sim.json" 2>"$work/sim.log" || fail "pw-sim canary failed"
deadline=$((SECONDS + 240))
until [ "$(q "SELECT count(*) FROM perfwatch.canary_families WHERE rollout_id = '$rollout' AND windows = 432
              AND (final OR pinned_at IS NOT NULL)")" = 3 ]; do
  kill -0 "${pid[canary]}" 2>/dev/null || fail "pw-canary exited"
  [ $SECONDS -lt $deadline ] || fail "the canary of $rollout did not settle: $(q "SELECT count(*) FROM perfwatch.canary_windows WHERE rollout_id = '$rollout'") of 1296 windows"
  sleep 0.3
done
rows=$(q "SELECT family || ' ' || decision || ' ' || final || ' ' || coalesce(pin_waiver_id, '-') || ' '
            || coalesce(pinned_release, '-') || ' ' || coalesce(pinned_artifact, '-') || ' ' || coalesce(pin_owner, '-')
            || ' ' || coalesce(pin_signed_off_by, '-') FROM perfwatch.canary_families WHERE rollout_id = '$rollout'
          ORDER BY family")
echo "$rows" | sed 's/^/test_canary_pin: canary: /'
grep -qx "$chat HOLD false $wv $base $artifact chat-oncall chat-models-lead" <<<"$rows" ||
  fail "$chat is not PINNED (undecided) with its pin"
grep -q "^$summ PROMOTE true - " <<<"$rows" || fail "$summ was not promoted"
grep -q "^$gpu PROMOTE true - " <<<"$rows" || fail "$gpu was not promoted"
sleep 2 # a page of a pinned or promoted family would be raised within the pager's tick
[ -z "$(pages)" ] || fail "a page while $chat is pinned and the others promoted: $(pages | tr '\n' ';')"
echo "test_canary_pin: no page while $chat is pinned and the others are promoted"

# rollout_messages ROLLOUT: each RolloutDecision keyed ROLLOUT/... on perf.rollouts.v1, decoded, one file per message
rollout_messages() {
  rm -f "$work"/msg.*
  local n=0 k p o
  while read -r k p o; do
    n=$((n + 1))
    kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.rollouts.v1 -p "$p" -o "$o" -c 1 -e -q -f '%s' 2>/dev/null |
      protoc --decode=perfwatch.v1.RolloutDecision -I proto proto/perfwatch/v1/canary.proto >"$work/msg.$n" ||
      fail "a message keyed $k does not decode"
  done < <(kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.rollouts.v1 -o beginning -e -q -f '%k %p %o\n' 2>/dev/null |
             awk -v pre="$1/" 'index($1, pre) == 1')
  echo "$n"
}
deadline=$((SECONDS + 60))
until [ "$(rollout_messages "$rollout")" = 3 ]; do
  [ $SECONDS -lt $deadline ] || fail "perf.rollouts.v1 holds $(rollout_messages "$rollout") messages of $rollout, want 3"
  sleep 0.5
done
pinned=$(grep -l "decision: ROLLOUT_DECISION_PINNED" "$work"/msg.* | wc -l)
promoted=$(grep -l "decision: ROLLOUT_DECISION_PROMOTE" "$work"/msg.* | wc -l)
[ "$pinned" = 1 ] && [ "$promoted" = 2 ] || fail "perf.rollouts.v1 of $rollout: $pinned PINNED, $promoted PROMOTE"
m=$(grep -l "decision: ROLLOUT_DECISION_PINNED" "$work"/msg.*)
for want in "family: \"$chat\"" "pinned_release: \"$base\"" "pinned_artifact: \"$artifact\"" "pin_owner: \"chat-oncall\"" \
            "pin_signed_off_by: \"chat-models-lead\"" "pin_waiver_id: \"$wv\"" "release: \"$rel\""; do
  grep -qF "$want" "$m" || fail "the PINNED message lacks $want: $(cat "$m")"
done
grep -q "^pin_expires_unix_us: [1-9]" "$m" || fail "the PINNED message has no expiry"
"$cli" canary show --rollout "$rollout" >"$work/canary_show.txt" || fail "perfwatch canary show failed"
grep -q "^  $chat (tpu, .*): PINNED (running" "$work/canary_show.txt" &&
  grep -qF "    pin: PINNED to N-1 $base ($artifact) by waiver $wv, owner chat-oncall, signed off by chat-models-lead, expires " \
    "$work/canary_show.txt" || fail "perfwatch canary show does not say $chat is PINNED: $(cat "$work/canary_show.txt")"
"$cli" canary show --rollout "$rollout" --json | python3 -c '
import json, sys
fams = {f["family"]: f for f in json.load(sys.stdin)["families"]}
c = fams[sys.argv[1]]
assert c["decision"] == "PINNED" and c["pin"]["signed_off_by"] == "chat-models-lead" and not c["pin"]["expiry_reported_at"], c
assert sum(f["decision"] == "PROMOTE" for f in fams.values()) == 2, fams' "$chat" || fail "canary show --json does not say $chat is PINNED"
echo "test_canary_pin: perf.rollouts.v1: $chat PINNED ($(tr '\n' ' ' <"$m" | head -c 240)...), 2 PROMOTE"

# ------------------------------------------------------------------ 4. the pin expires, reported once across kill -9
kill -9 "${pid[canary]}"
wait "${pid[canary]}" 2>/dev/null || true
# the hour passing: the pin's expiry is now (the gate stored it; nothing else is changed)
q "UPDATE perfwatch.waivers SET expires_at = now() - interval '1 second' WHERE release_id = '$rel' AND waiver_id = '$wv'" >/dev/null
"$cli" gate show "$rel" | grep -F "pin: $chat PINNED" | grep "(EXPIRED)$" >/dev/null || fail "gate show does not say the pin expired"
service_start canary PW_CANARY_PIN_CHECK_INTERVAL=300ms
deadline=$((SECONDS + 90))
until [ "$(q "SELECT count(*) FROM perfwatch.pin_expiries WHERE release_id = '$rel' AND waiver_id = '$wv'")" = 1 ]; do
  kill -0 "${pid[canary]}" 2>/dev/null || fail "pw-canary exited"
  [ $SECONDS -lt $deadline ] || fail "the expired pin was not reported within 90 s"
  sleep 0.3
done
grep -q '"level":"error".*pin expired: \\"'"$chat"'\\" is no longer pinned' "$work/canary.log" ||
  grep -q 'pin expired: \\"'"$chat"'\\" is no longer pinned' "$work/canary.log" || fail "no error line for the expired pin"
# the second pin (another release, a family the canary never saw), expiring after the restart below
"$cli" gate request --release "$rel-later" --candidate "$rel" --baseline "$base" --family "later$sfx" \
  --waive "later$sfx:chat-oncall:+3600:$wv-later" --pin "later$sfx:chat-models-lead" >/dev/null || fail "publishing the second pin"
deadline=$((SECONDS + 60))
until [ "$(q "SELECT count(*) FROM perfwatch.waivers WHERE waiver_id = '$wv-later' AND pin")" = 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "the second pin was not stored"
  sleep 0.2
done
kill -9 "${pid[canary]}"
wait "${pid[canary]}" 2>/dev/null || true
q "UPDATE perfwatch.waivers SET expires_at = now() - interval '1 second' WHERE release_id = '$rel-later' AND waiver_id = '$wv-later'" >/dev/null
mv "$work/canary.log" "$work/canary-1.log"
service_start canary PW_CANARY_PIN_CHECK_INTERVAL=300ms
deadline=$((SECONDS + 90))
until [ "$(q "SELECT count(*) FROM perfwatch.pin_expiries WHERE release_id = '$rel-later'")" = 1 ]; do
  kill -0 "${pid[canary]}" 2>/dev/null || fail "pw-canary exited"
  [ $SECONDS -lt $deadline ] || fail "the second pin's expiry was not reported within 90 s"
  sleep 0.3
done
grep -q "pin expired: .*$chat" "$work/canary.log" && fail "the restarted canary reported $chat's pin again"
[ "$(q "SELECT count(*) FROM perfwatch.pin_expiries WHERE release_id = '$rel'")" = 1 ] || fail "the pin's expiry recorded more than once"
port=$(grep -o '"msg":"serving /healthz /readyz /metrics on 127.0.0.1:[0-9]*' "$work/canary.log" | grep -o '[0-9]*$' | head -1 || true)
[ -n "$port" ] || fail "pw-canary's HTTP port is not in its log"
# the restarted process counted the second pin only: the first was not reported again
curl -sf "http://127.0.0.1:$port/metrics" >"$work/metrics.txt" || fail "GET /metrics of pw-canary failed"
grep -q '^perfwatch_canary_pins_expired_total 1$' "$work/metrics.txt" ||
  fail "perfwatch_canary_pins_expired_total is not 1 after the restart: $(grep pins "$work/metrics.txt")"
deadline=$((SECONDS + 60))
until [ "$(rollout_messages "$rollout")" = 4 ]; do
  [ $SECONDS -lt $deadline ] || fail "perf.rollouts.v1 holds $(rollout_messages "$rollout") messages of $rollout, want 4 (3 and PIN_EXPIRED)"
  sleep 0.5
done
expired=$(grep -l "decision: ROLLOUT_DECISION_PIN_EXPIRED" "$work"/msg.* | wc -l)
[ "$expired" = 1 ] || fail "perf.rollouts.v1 holds $expired PIN_EXPIRED of $rollout, want 1"
m=$(grep -l "decision: ROLLOUT_DECISION_PIN_EXPIRED" "$work"/msg.*)
grep -qF "family: \"$chat\"" "$m" && grep -qF "pin_waiver_id: \"$wv\"" "$m" && grep -qF "pin_owner: \"chat-oncall\"" "$m" ||
  fail "the PIN_EXPIRED message: $(cat "$m")"
n=$(kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.rollouts.v1 -o beginning -e -q -f '%k\n' 2>/dev/null | grep -cx "/later$sfx" || true)
[ "$n" = 1 ] || fail "the second pin's PIN_EXPIRED (no rollout) is on perf.rollouts.v1 $n times"
[ "$(q "SELECT pin_expired_at IS NOT NULL FROM perfwatch.canary_families WHERE rollout_id = '$rollout' AND family = '$chat'")" = t ] ||
  fail "$chat's PINNED did not end"
"$cli" gate show "$rel" | grep -F "pin: $chat PINNED" | grep "EXPIRED, reported" >/dev/null || fail "gate show does not say the expiry was reported"
echo "test_canary_pin: $chat's pin expired and was reported once (across two kill -9), PIN_EXPIRED on perf.rollouts.v1 once"

# the pager takes PINNED and PIN_EXPIRED (with and without a rollout) as decisions that page nobody, and
# dead-letters none of them (it refused both as unknown decisions before)
pager_port=$(grep -o '"msg":"serving /healthz /readyz /metrics on 127.0.0.1:[0-9]*' "$work/pager.log" | grep -o '[0-9]*$' | sed -n 1p)
rollout_outcome() {
  curl -sf "http://127.0.0.1:$pager_port/metrics" |
    sed -n "s/^perfwatch_pager_findings_total{topic=\"perf.rollouts.v1\",outcome=\"$1\"} \([0-9]*\)$/\1/p"
}
deadline=$((SECONDS + 30))
until [ "$(rollout_outcome pinned)" = 1 ] && [ "$(rollout_outcome pin_expired)" = 2 ]; do
  [ $SECONDS -lt $deadline ] ||
    fail "the pager counted $(rollout_outcome pinned) PINNED and $(rollout_outcome pin_expired) PIN_EXPIRED, want 1 and 2"
  sleep 0.3
done
dl=$(q "SELECT coalesce(string_agg(reason || ': ' || left(detail, 160), '; '), '') FROM perfwatch.dead_letters
         WHERE service = 'pager' AND source_topic = 'perf.rollouts.v1'
           AND position(convert_to('$sfx', 'UTF8') IN coalesce(original_key, ''::bytea)) > 0")
[ -z "$dl" ] || fail "the pager dead-lettered a pin decision: $dl"
[ -z "$(pages)" ] || fail "a page for a pin or its expiry: $(pages | tr '\n' ';')"
echo "test_canary_pin: the pager took 1 PINNED and 2 PIN_EXPIRED (one with no rollout), paged nobody, dead-lettered nothing"

# ------------------------------------------------------------------ 5. unpinned, the family takes N: the rule decides again
# an hour more of the canary, the next morning: chat-8b's windows (+1% TPOT) now decide it (ROLLBACK, recorded
# once), the promoted families keep their decisions
"$sim" canary --rollout "$rollout" --hours 1 --start 2026-06-23T09:00:00Z --release "$rel" --previous "$base" \
  --family-suffix "$sfx" >>"$work/sim.json" 2>>"$work/sim.log" || fail "pw-sim canary (the next morning) failed"
deadline=$((SECONDS + 120))
until [ "$(q "SELECT final FROM perfwatch.canary_families WHERE rollout_id = '$rollout' AND family = '$chat'")" = t ]; do
  kill -0 "${pid[canary]}" 2>/dev/null || fail "pw-canary exited"
  [ $SECONDS -lt $deadline ] || fail "$chat was not decided after its pin ended"
  sleep 0.3
done
[ "$(q "SELECT decision || ' ' || rollback_artifact FROM perfwatch.canary_families WHERE rollout_id = '$rollout' AND family = '$chat'")" = \
  "ROLLBACK serving/$chat/$base.aot" ] || fail "$chat after its pin: $(q "SELECT decision FROM perfwatch.canary_families WHERE rollout_id = '$rollout' AND family = '$chat'")"
deadline=$((SECONDS + 60))
until [ "$(rollout_messages "$rollout")" = 5 ]; do
  [ $SECONDS -lt $deadline ] || fail "perf.rollouts.v1 holds $(rollout_messages "$rollout") messages of $rollout, want 5 (and the ROLLBACK)"
  sleep 0.5
done
[ "$(grep -l "decision: ROLLOUT_DECISION_ROLLBACK" "$work"/msg.* | wc -l)" = 1 ] || fail "no single ROLLBACK of $chat after its pin"
echo "test_canary_pin: after the pin, $chat decided by its windows: ROLLBACK to serving/$chat/$base.aot, once"

# the pager: one page, the rollback's, delivered to on-call once
deadline=$((SECONDS + 90))
until [ "$(ls "$work/hook" | wc -l)" -ge 1 ] && grep -q " delivered " <<<"$(pages)"; do
  [ $SECONDS -lt $deadline ] || fail "the rollback was not paged within 90 s: pages: $(pages | tr '\n' ';')"
  sleep 0.5
done
sleep 2 # a second post or page would come within the pager's tick
[ "$(pages | wc -l)" = 1 ] && grep -q "^[^ ]* delivered $chat ROLLBACK$" <<<"$(pages)" ||
  fail "want one page, $chat's ROLLBACK, delivered: $(pages | tr '\n' ';')"
posts=$(python3 - "$work/hook" <<'PY'
import glob, json, sys
print(sorted(set(json.load(open(f))["body"].get("page_id", "-") for f in glob.glob(sys.argv[1] + "/*.json"))),
      len(glob.glob(sys.argv[1] + "/*.json")))
PY
)
[ "${posts##* }" = 1 ] || fail "on-call's webhook got ${posts##* } posts, want the rollback's page once: $posts"
echo "test_canary_pin: on-call paged once, after the pin ended: $(pages)"

echo "test_canary_pin: PASS"
