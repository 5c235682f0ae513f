#!/usr/bin/env bash
# test_p1.sh: §8's P1 auto-filing end to end on the real dev stack — a 1-3%
# finding on a gated series files a perfwatch.p1_tickets row, once, and the
# next RC's gate reports it as compounding drift until it is resolved.
#
# Run by tests/integration/run.sh with PW_PG_DSN, PW_KAFKA_BOOTSTRAP_SERVERS,
# PW_RUN_DIR and PW_BUILD. Like test_gate.sh it writes series, spend weights,
# baselines and samples straight into PostgreSQL (its own families, tagged
# per run), starts pw-gate and publishes GateRequests with `perfwatch gate
# request`:
#   1. rc1: a top-tier series +2% (P1), one +5% (BLOCKING), one within noise:
#      exactly one ticket, for the +2% series, with the gate's alert, the
#      release, candidate, owner (gate.page_route) and status open;
#   2. the gate killed (-9) and restarted, rc1's request redelivered and rc1
#      re-decided as evaluation 2: still one ticket (filed by evaluation 1);
#   3. rc2 (the regression fixed, the ticket not closed): verdict PASS, and
#      the verdict on the topic, gate_compounding_drift, `gate show` (text
#      and --json) and the summary name the ticket as compounding drift with
#      its age; `p1 list` gives due_release rc2;
#   4. `perfwatch p1 resolve` closes it (a second resolve changes nothing):
#      rc3's report is clean (no drift, no WARN).
set -euo pipefail

. tests/integration/lib.sh
. tests/integration/lib_gate.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
gate_bin=$PW_BUILD/services/gate/pw-gate
cli=$PW_BUILD/tools/perfwatch
need_bins "$gate_bin" "$cli"
work=$(mktemp -d "$PW_RUN_DIR/test_p1.XXXXXX")
gate_pid=""
cleanup() {
  if [ -n "$gate_pid" ]; then kill -TERM "$gate_pid" 2>/dev/null || true; wait "$gate_pid" 2>/dev/null || true; fi
  psql "$PW_PG_DSN" -X -q -c "DELETE FROM perfwatch.spend_weights WHERE model LIKE 'p1%-$tag'" >/dev/null 2>&1 || true
}
trap cleanup EXIT
fail() { echo "test_p1: FAIL: $*" >&2; [ -f "$work/gate.log" ] && tail -n 30 "$work/gate.log" >&2; exit 1; }
psqlq() { psql "$PW_PG_DSN" -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }
tag=$(date +%s%N | tail -c 9)   # keeps reruns on a reused stack apart
base=xla-p1-base-$tag
rc1=xla-p1-rc1-$tag
rc2=xla-p1-rc2-$tag
rc3=xla-p1-rc3-$tag
hlo=hlo:p1$tag
fam=p1chat-$tag
blk=p1blk-$tag

# ------------------------------------------------------------------ data
key() { echo "$1/$hlo/$2/$3/tpot_p50_ms"; }
# add_samples KEY BUILD KIND N LEVEL SHIFT: N runs, sigma 0.4% (lib_gate.sh's gate_add_samples)
add_samples() { gate_add_samples p1 "$1" "$2" "$3" 1 "$4" "$5" "$6" 0.004; }
# series MODEL PLATFORM CONFIG LEVEL: the series, an active baseline, 30 runs on the baseline release
series() { gate_series p1 "$hlo" "$base" "$1" "$2" "$3" "$4"; }
# candidate RELEASE MODEL PLATFORM CONFIG LEVEL SHIFT: 5 runs of the RC
candidate() { add_samples "$(key "$2" "$3" "$4")" "$1" rc 5 "$5" "$6"; }

psqlq -c "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
          ('$fam', 0.05, 'top', 'it'), ('$blk', 0.01, 'top', 'it')
          ON CONFLICT (model) DO UPDATE SET spend_share = EXCLUDED.spend_share, tier = EXCLUDED.tier"
series "$fam" v6e-4 decode.B8 1.60
series "$fam" v6e-4 prefill.8k 2.10
series "$blk" v6e-4 decode.B8 3.90
p1key=$(key "$fam" v6e-4 decode.B8)
sid=$(psqlq -c "SELECT series_id FROM perfwatch.series WHERE series_key = '$p1key'")
candidate "$rc1" "$fam" v6e-4 decode.B8 1.60 0.02
candidate "$rc1" "$fam" v6e-4 prefill.8k 2.10 0.0
candidate "$rc1" "$blk" v6e-4 decode.B8 3.90 0.05
for r in "$rc2" "$rc3"; do
  candidate "$r" "$fam" v6e-4 decode.B8 1.60 0.0
  candidate "$r" "$fam" v6e-4 prefill.8k 2.10 0.0
  candidate "$r" "$blk" v6e-4 decode.B8 3.90 0.0
done

# ------------------------------------------------------------------ gate
start_gate() {
  PW_GATE_POLL_INTERVAL=200ms PW_KAFKA_GROUP_ID=perfwatch-gate-p1-$tag PW_HTTP_PORT=0 \
    PW_KAFKA_SESSION_TIMEOUT_MS=6000 PW_KAFKA_HEARTBEAT_INTERVAL_MS=500 PW_GATE_MIN_WAIT=1s \
    PW_GATE_PAGE_ROUTE=ml-perf-triage "$gate_bin" >>"$work/gate.log" 2>&1 &
  gate_pid=$!
}
# request RELEASE [EVALUATION]
request() {
  "$cli" gate request --release "$1" --evaluation "${2:-1}" --candidate "$1" --baseline "$base" \
    --family "$fam" --family "$blk" >/dev/null || fail "publishing the request of $1"
}
# decided RELEASE EVALUATION: waits (120 s) until the evaluation is done
decided() {
  for _ in $(seq 1 600); do
    [ "$(psqlq -c "SELECT status FROM perfwatch.gate_evaluations WHERE release_id = '$1' AND evaluation = $2")" = done ] && return 0
    kill -0 "$gate_pid" 2>/dev/null || fail "pw-gate exited"
    sleep 0.2
  done
  fail "$1 evaluation $2 was not decided"
}
# topic_verdict RELEASE EVALUATION: the GateVerdict of that evaluation on the topic, decoded, to $work/RELEASE-eN.txt
topic_verdict() {
  local out=$work/$1-e$2.txt
  for _ in $(seq 1 300); do
    kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.gate.verdicts.v1 -o beginning -e -q -f '%k %p %o\n' 2>/dev/null |
      awk -v k="$1" '$1 == k { print $2, $3 }' >"$work/offsets" || true
    while read -r p o; do
      kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.gate.verdicts.v1 -p "$p" -o "$o" -c 1 -e -q -f '%s' |
        protoc --decode=perfwatch.v1.GateVerdict -I proto proto/perfwatch/v1/gate.proto >"$out" 2>/dev/null || continue
      grep -q "^evaluation: $2\$" "$out" && return 0
    done <"$work/offsets"
    sleep 0.2
  done
  fail "no GateVerdict of $1 evaluation $2 on perf.gate.verdicts.v1"
}
tickets() { psqlq -c "SELECT count(*) FROM perfwatch.p1_tickets WHERE found_release LIKE 'xla-p1-%-$tag'"; }

start_gate

# 1. rc1: the +2% series files one ticket; the +5% blocks and files none
request "$rc1"
decided "$rc1" 1
[ "$(psqlq -c "SELECT verdict FROM perfwatch.gate_family_results WHERE release_id = '$rc1' AND family = '$fam'")" = p1 ] \
  || fail "$fam on $rc1 is not P1"
[ "$(psqlq -c "SELECT verdict FROM perfwatch.gate_family_results WHERE release_id = '$rc1' AND family = '$blk'")" = blocking ] \
  || fail "$blk on $rc1 is not BLOCKING"
[ "$(tickets)" = 1 ] || fail "$rc1 filed $(tickets) P1 tickets, expected 1"
row=$(psqlq -F' ' -c "SELECT ticket_id, series_id, found_release, found_evaluation, candidate_build_id, owner, status,
                             alert_id = 'gate-$rc1-e1-s$sid', round(effect_pct::numeric, 1), due_release = ''
                      FROM perfwatch.p1_tickets WHERE found_release = '$rc1'")
echo "test_p1: $rc1 ticket: $row"
read -r tid tsid tfound teval tcand towner tstatus talert teffect tdue <<<"$row"
[ "$tsid" = "$sid" ] && [ "$tfound" = "$rc1" ] && [ "$teval" = 1 ] && [ "$tcand" = "$rc1" ] \
  && [ "$towner" = ml-perf-triage ] && [ "$tstatus" = open ] && [ "$talert" = t ] && [ "$tdue" = t ] \
  || fail "the ticket of $rc1 is not the +2% series' open P1 with its alert: $row"
awk -v x="$teffect" 'BEGIN { exit !(x >= 1.0 && x <= 3.0) }' || fail "ticket effect $teffect% is not 1-3%"
[ "$(psqlq -c "SELECT count(*) FROM perfwatch.alerts WHERE alert_id = 'gate-$rc1-e1-s$sid'")" = 1 ] \
  || fail "the ticket's alert is not stored"
"$cli" p1 list --open --json >"$work/list1.json" || fail "p1 list --json"
python3 - "$work/list1.json" "$tid" "$p1key" "$rc1" <<'PY' || fail "p1 list --json does not show the ticket"
import json, sys
rows = [r for r in json.load(open(sys.argv[1])) if r["ticket_id"] == int(sys.argv[2])]
assert len(rows) == 1, rows
r = rows[0]
assert r["ticket"] == "P1-" + sys.argv[2] and r["series_key"] == sys.argv[3], r
assert r["found_release"] == sys.argv[4] and r["status"] == "open" and r["due_release"] == "", r
for k in ("alert_id", "bisection_id", "culprit", "attributed", "incident_id", "pager_ticket_id",
          "page_id", "triage_url", "plot", "owner", "routed_owner", "delta_pct", "q"):
    assert k in r, k
PY

# 2. kill -9, restart, rc1 redelivered and re-decided: nothing filed twice
kill -KILL "$gate_pid"; wait "$gate_pid" 2>/dev/null || true; gate_pid=""
start_gate
request "$rc1" 1
request "$rc1" 2
decided "$rc1" 2
[ "$(psqlq -c "SELECT verdict FROM perfwatch.gate_family_results WHERE release_id = '$rc1' AND evaluation = 2 AND family = '$fam'")" = p1 ] \
  || fail "$rc1 evaluation 2 is not P1 for $fam"
[ "$(tickets)" = 1 ] || fail "after a restart, a redelivery and a re-decision there are $(tickets) tickets, expected 1"
[ "$(psqlq -c "SELECT found_evaluation FROM perfwatch.p1_tickets WHERE ticket_id = $tid")" = 1 ] \
  || fail "the ticket was re-filed by evaluation 2"
[ "$(psqlq -c "SELECT count(*) FROM perfwatch.gate_compounding_drift WHERE release_id = '$rc1'")" = 0 ] \
  || fail "$rc1's re-decision reported its own ticket as compounding drift"

# 3. rc2: the ticket is still open: compounding drift, the verdict unchanged
request "$rc2"
decided "$rc2" 1
[ "$(psqlq -c "SELECT verdict FROM perfwatch.gate_evaluations WHERE release_id = '$rc2'")" = pass ] \
  || fail "$rc2 is not PASS (a drift warning must not change the verdict)"
drow=$(psqlq -F' ' -c "SELECT ticket_id, found_release, age_s >= 0, line FROM perfwatch.gate_compounding_drift
                       WHERE release_id = '$rc2' AND evaluation = 1")
echo "test_p1: $rc2 drift: $drow"
[ "$(printf '%s\n' "$drow" | grep -c .)" = 1 ] || fail "$rc2 reported not exactly one drift: $drow"
read -r dtid dfound dage _ <<<"$drow"
[ "$dtid" = "$tid" ] && [ "$dfound" = "$rc1" ] && [ "$dage" = t ] || fail "$rc2's drift is not P1-$tid of $rc1: $drow"
case "$drow" in *"WARN compounding drift: P1-$tid $p1key (+"*"%) open since $rc1, "*", due by this RC") ;;
  *) fail "$rc2's drift line: $drow" ;; esac
[ "$(psqlq -c "SELECT due_release FROM perfwatch.p1_tickets WHERE ticket_id = $tid")" = "$rc2" ] \
  || fail "the ticket's due_release is not $rc2"
summary=$(psqlq -c "SELECT summary FROM perfwatch.gate_evaluations WHERE release_id = '$rc2'")
case "$summary" in "PASS"*"; WARN compounding drift: 1 open P1 ticket from earlier releases (P1-$tid)") ;;
  *) fail "$rc2's summary does not name the drift: $summary" ;; esac
topic_verdict "$rc2" 1
grep -q "^verdict: VERDICT_PASS" "$work/$rc2-e1.txt" || fail "$rc2 on the topic is not PASS"
grep -A 9 '^compounding_drift {' "$work/$rc2-e1.txt" >"$work/drift.txt" || fail "$rc2 on the topic carries no compounding_drift"
grep -q "ticket_id: $tid\$" "$work/drift.txt" && grep -q "found_release: \"$rc1\"" "$work/drift.txt" \
  && grep -q "age_s: " "$work/drift.txt" || { cat "$work/drift.txt"; fail "$rc2's compounding_drift on the topic"; }
"$cli" gate show "$rc2" >"$work/show2.txt" || fail "gate show $rc2"
grep -q "^WARN compounding drift: P1-$tid $p1key" "$work/show2.txt" || { cat "$work/show2.txt"; fail "gate show does not print the WARN line"; }
grep -q "^release verdict: PASS" "$work/show2.txt" || fail "gate show: $rc2 is not PASS"
"$cli" gate show "$rc2" --json >"$work/show2.json" || fail "gate show --json $rc2"
python3 - "$work/show2.json" "$tid" "$rc1" <<'PY' || fail "gate show --json does not carry the drift"
import json, sys
v = json.load(open(sys.argv[1]))
d = v["compounding_drift"]
assert len(d) == 1 and d[0]["ticket_id"] == int(sys.argv[2]), d
assert d[0]["found_release"] == sys.argv[3] and d[0]["age_s"] >= 0 and d[0]["status_now"] == "open", d
assert d[0]["line"].startswith("WARN compounding drift: P1-" + sys.argv[2]), d
assert v["verdict"] == "pass", v["verdict"]
PY
"$cli" p1 list >"$work/list2.txt" || fail "p1 list"
grep -q "^  due by $rc2, reported by 1 evaluation(s)" "$work/list2.txt" || { cat "$work/list2.txt"; fail "p1 list does not say due by $rc2"; }

# 4. resolved: the next RC's report is clean
"$cli" p1 resolve "P1-$tid" --by "xla-oncall" --note "fixed by cl/42" >"$work/resolve.txt" || fail "p1 resolve"
grep -q "^P1-$tid resolved by xla-oncall" "$work/resolve.txt" || fail "p1 resolve said: $(cat "$work/resolve.txt")"
rc=0; "$cli" p1 resolve "$tid" --by someone-else --note again 2>"$work/resolve2.err" || rc=$?
[ "$rc" = 2 ] && grep -q "already resolved by xla-oncall" "$work/resolve2.err" || fail "a second resolve: rc $rc, $(cat "$work/resolve2.err")"
[ "$(psqlq -c "SELECT status || ' ' || resolved_by || ' ' || resolution_note FROM perfwatch.p1_tickets WHERE ticket_id = $tid")" = "resolved xla-oncall fixed by cl/42" ] \
  || fail "the ticket is not resolved by xla-oncall"
[ "$("$cli" p1 list --open --json | python3 -c "import json,sys; print(sum(r['ticket_id'] == $tid for r in json.load(sys.stdin)))")" = 0 ] \
  || fail "p1 list --open still lists the resolved ticket"
request "$rc3"
decided "$rc3" 1
[ "$(psqlq -c "SELECT count(*) FROM perfwatch.gate_compounding_drift WHERE release_id = '$rc3'")" = 0 ] \
  || fail "$rc3 reported a resolved ticket as drift"
summary=$(psqlq -c "SELECT verdict || ': ' || summary FROM perfwatch.gate_evaluations WHERE release_id = '$rc3'")
case "$summary" in pass:*WARN*) fail "$rc3's summary still warns: $summary" ;; pass:*) ;; *) fail "$rc3: $summary" ;; esac
"$cli" gate show "$rc3" >"$work/show3.txt" || fail "gate show $rc3"
! grep -q "WARN" "$work/show3.txt" || fail "gate show $rc3 still prints a WARN line"
[ "$(tickets)" = 1 ] || fail "$(tickets) tickets at the end, expected 1"
echo "test_p1: PASS (P1-$tid filed once by $rc1, compounding drift on $rc2, clean on $rc3 after resolve)"
