#!/usr/bin/env bash
# test_pager_scaleout.sh: two pw-pager replicas of one deployment (one
# consumer group) give the same pages as one, each delivered exactly once.
#
# tests/integration/pager_replay.py plays the pager's inputs straight onto
# its topics, in a shuffled order: four RCs (seven gate alerts of three
# families and the verdict naming them each: a page held for its event), a
# watcher shift (a high page), a P1-only RC (a ticket), a validated win (an
# info notice); then the attributor's owner for each RC's headline; then the
# bisector's culprits. Each phase is consumed and delivered before the next,
# so that every page goes through the same states in both rounds:
#   single  one pager;
#   scaled  two pagers in one group (both hold partitions of the five topics).
# Each round has its own namespace and group, a webhook and ticket receiver
# of its own, and the one Alertmanager. Checked: in the scaled round both
# replicas consumed; the pages (summary, severity, route, owner, culprit,
# verdict, alerts), tickets and notices are the same as the single round's
# once the namespace is off; every page, ticket and notice reached its
# receivers exactly once per version (no Idempotency-Key twice, no version
# posted to Alertmanager twice), and the same number of times in both rounds;
# Alertmanager holds one active alert per page. The figures are printed.
set -euo pipefail

. tests/integration/lib.sh
. tests/integration/lib_scaleout.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc python3 curl prometheus-alertmanager
need_bins "$PW_BUILD/services/pager/pw-pager" "$PW_BUILD/tools/perfwatch"
pw=$PW_BUILD/tools/perfwatch
service_harness test_pager_scaleout pso
base=$ns
trap 'so_stop; service_cleanup' EXIT
am_start

# a receiver for the pager's webhook (/hook) and its tickets (/ticket): one line per POST
receiver() { # FILE
  python3 - "$1" <<'PY' &
import http.server, json, socket, sys
out = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with open(out, "a") as f:
            f.write("%s\t%s\t%s\n" % (self.path, self.headers.get("Idempotency-Key"),
                                      body.get("page_id") or body.get("notice_id") or body.get("ticket_id")))
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(out + ".port", "w").write(str(s.server_address[1]))
s.serve_forever()
PY
  pid[receiver]=$!
  for _ in $(seq 50); do [ -s "$1.port" ] && return 0; sleep 0.1; done
  fail "the receiver did not start"
}

topics="perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 perf.attributions.v1 perf.rollouts.v1"
settled() { # GROUP: nothing held, pending or claimed for the deployment
  q "SELECT (SELECT count(*) FROM perfwatch.pages WHERE pager_group = '$1' AND (hold_until IS NOT NULL
               OR am_version < version OR webhook_version < version OR claimed_until IS NOT NULL))
          + (SELECT count(*) FROM perfwatch.pager_notices WHERE pager_group = '$1'
               AND (am_delivered_at IS NULL OR webhook_delivered_at IS NULL))
          + (SELECT count(*) FROM perfwatch.pager_tickets WHERE pager_group = '$1' AND delivery_status IN ('pending', 'failed'))"
}
round() { # NAME N
  local name=$1 n=$2 ns=$base$1 group i deadline phase t0 t1
  group=$ns-pager
  python3 tests/integration/pager_replay.py "$ns" x --spend-sql | q "$(cat)" >/dev/null
  "$pw" group to-end "$group" $topics >/dev/null || fail "$name: placing the group"
  receiver "$work/recv.$name"
  local port
  port=$(cat "$work/recv.$name.port")
  so_env=(PW_PAGER_TRIAGE_KEY="scaleout-test-key-$base" PW_PAGER_BUDGET_PER_WEEK=1000 PW_PAGER_TICK=200ms
          PW_PAGER_ALERTMANAGER_RESEND=30m PW_PAGER_ALERTMANAGER_URL="$am" PW_PAGER_WEBHOOK_URL="http://127.0.0.1:$port/hook"
          PW_PAGER_TICKET_URL="http://127.0.0.1:$port/ticket" PW_LOG_LEVEL=debug)
  so_start pager "$group" "$n"
  so_wait_assigned pager "$group" "$n" 120 || fail "$name: not every pager got partitions in 120 s"
  for ((i = 0; i < n; i++)); do
    echo "$name: pager#$i holds alerts [$(so_held_topic "$work/pager.$group.$i.log" perf.alerts.v1)]" \
      "gate.verdicts [$(so_held_topic "$work/pager.$group.$i.log" perf.gate.verdicts.v1)]" \
      "bisections [$(so_held_topic "$work/pager.$group.$i.log" perf.bisections.v1)]" \
      "attributions [$(so_held_topic "$work/pager.$group.$i.log" perf.attributions.v1)]"
  done
  for phase in alerts attributions bisections; do
    t0=$(date +%s.%N)
    python3 tests/integration/pager_replay.py "$ns" "$phase" --seed 7 --out "$work/replay.$name" ||
      fail "$name: replaying $phase"
    "$pw" group lag "$group" --wait 120 $topics >/dev/null || fail "$name: the pagers did not consume the $phase"
    t1=$(date +%s.%N)
    deadline=$((SECONDS + 90))
    until [ "$(settled "$group")" = 0 ]; do
      [ $SECONDS -lt $deadline ] || fail "$name: the $phase phase's pages were not all delivered in 90 s"
      sleep 0.3
    done
    echo "$name: $phase consumed in $(python3 -c "print(round($t1 - $t0, 2))") s (produced and consumed), delivered $(python3 -c "import time; print(round(time.time() - $t1, 2))") s later"
  done
  # who consumed what (the scaled round: both)
  for ((i = 0; i < n; i++)); do
    local hp
    hp=$(grep -o '"http_port":"[0-9]*"' "$work/pager.$group.$i.log" | head -1 | grep -o '[0-9]*')
    curl -fsS "http://127.0.0.1:$hp/metrics" |
      awk '/^perfwatch_pager_findings_total/ { n += $2 } END { print n + 0 }' >"$work/consumed.$name.$i"
    echo "$name: pager#$i consumed $(cat "$work/consumed.$name.$i") messages"
  done
  so_stop
  kill -TERM "${pid[receiver]}"; wait "${pid[receiver]}" 2>/dev/null || true
  unset "pid[receiver]"
  # what the deployment made of the replay, the namespace off
  q "SELECT replace(summary, '$ns', 'N') || '|' || severity || '|' || route || '|' || coalesce(payload->>'owner', '') || '|'
            || coalesce(payload->'bisection'->>'culprit', '') || '|' || verdict || '|' || (resolved_at IS NOT NULL) || '|'
            || (SELECT string_agg(replace(alert_id, '$ns', 'N'), ',' ORDER BY alert_id) FROM perfwatch.page_alerts a WHERE a.page_id = p.page_id)
       FROM perfwatch.pages p WHERE pager_group = '$group' ORDER BY 1" >"$work/pages.$name"
  q "SELECT replace(summary, '$ns', 'N') || '|' || route || '|' || delivery_status FROM perfwatch.pager_tickets
      WHERE pager_group = '$group' AND delivery_status <> 'superseded'
     UNION ALL SELECT replace(summary, '$ns', 'N') || '|' || route || '|' || kind FROM perfwatch.pager_notices WHERE pager_group = '$group'
     ORDER BY 1" >"$work/others.$name"
  # deliveries per page: webhook posts, Alertmanager posts (ok), by the page's content
  q "SELECT replace(p.summary, '$ns', 'N') || ' webhook ' || count(*) FILTER (WHERE d.target = 'webhook')
            || ' alertmanager ' || count(*) FILTER (WHERE d.target = 'alertmanager')
       FROM perfwatch.pages p JOIN perfwatch.pager_deliveries d USING (page_id)
      WHERE p.pager_group = '$group' AND d.ok GROUP BY p.page_id, p.summary ORDER BY 1" >"$work/deliveries.$name"
  local dup
  dup=$(q "SELECT count(*) FROM (SELECT d.page_id, d.target, d.version FROM perfwatch.pager_deliveries d
             JOIN perfwatch.pages p USING (page_id) WHERE p.pager_group = '$group' AND d.ok
            GROUP BY 1, 2, 3 HAVING count(*) > 1) x")
  [ "$dup" = 0 ] || fail "$name: $dup page versions were posted twice to a receiver"
  dup=$(cut -f2 "$work/recv.$name" | sort | uniq -d | wc -l)
  [ "$dup" = 0 ] || fail "$name: the receivers got an Idempotency-Key twice: $(cut -f2 "$work/recv.$name" | sort | uniq -d | head -3)"
  echo "$name: $(wc -l <"$work/pages.$name") pages, $(wc -l <"$work/others.$name") tickets and notices;" \
    "deliveries: $(q "SELECT count(*) FILTER (WHERE d.target = 'webhook') || ' webhook, ' || count(*) FILTER (WHERE d.target = 'alertmanager')
       || ' alertmanager, ' || count(*) FILTER (WHERE d.target = 'ticket') || ' ticket'
       FROM perfwatch.pager_deliveries d LEFT JOIN perfwatch.pages p USING (page_id)
       LEFT JOIN perfwatch.pager_notices nt USING (notice_id) LEFT JOIN perfwatch.pager_tickets t USING (ticket_id)
      WHERE d.ok AND coalesce(p.pager_group, nt.pager_group, t.pager_group) = '$group'");" \
    "receiver posts $(wc -l <"$work/recv.$name")"
}

round single 1
round scaled 2

# both replicas consumed, together what one did
c0=$(cat "$work/consumed.scaled.0") c1=$(cat "$work/consumed.scaled.1") cs=$(cat "$work/consumed.single.0")
[ "$c0" -gt 0 ] && [ "$c1" -gt 0 ] || fail "scaled: a replica consumed nothing ($c0, $c1)"
[ $((c0 + c1)) = "$cs" ] || fail "scaled: the replicas consumed $c0 + $c1 messages, the single pager $cs"
echo "PASS: both replicas consumed ($c0 + $c1 = $cs messages)"
n=$(wc -l <"$work/pages.single")
[ "$n" -gt 0 ] && cmp -s "$work/pages.single" "$work/pages.scaled" ||
  { diff "$work/pages.single" "$work/pages.scaled" | head -20; fail "the pages differ between one and two replicas"; }
echo "PASS: the same $n pages with one and two replicas:"
sed 's/^/  /' "$work/pages.scaled" | cut -c1-200
cmp -s "$work/others.single" "$work/others.scaled" ||
  { diff "$work/others.single" "$work/others.scaled"; fail "tickets or notices differ"; }
echo "PASS: the same tickets and notices: $(tr '\n' ';' <"$work/others.scaled")"
cmp -s "$work/deliveries.single" "$work/deliveries.scaled" ||
  { diff "$work/deliveries.single" "$work/deliveries.scaled"; fail "the deliveries differ between one and two replicas"; }
echo "PASS: every page delivered the same number of times, each version once:"
sed 's/^/  /' "$work/deliveries.scaled"
[ "$(wc -l <"$work/recv.single")" = "$(wc -l <"$work/recv.scaled")" ] ||
  fail "the receivers got $(wc -l <"$work/recv.single") and $(wc -l <"$work/recv.scaled") posts"
python3 - "$am" "${base}scaled" "$n" <<'PY' || fail "alertmanager does not hold one active alert per page"
import json, sys, urllib.request
am, ns, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
alerts = json.load(urllib.request.urlopen(am + "/api/v2/alerts?filter=alertname%3D%22PerfwatchIncident%22"))
mine = [a for a in alerts if ns in a["labels"].get("incident", "") and a["status"]["state"] != "resolved"]
pages = {a["labels"]["page_id"] for a in mine}
assert len(mine) == n and len(pages) == n, [(a["labels"]["page_id"], a["status"]["state"]) for a in mine]
print("PASS: alertmanager holds %d active alerts for the scaled round's %d pages" % (len(mine), n))
PY
echo "test_pager_scaleout: all checks passed"
