#!/usr/bin/env bash
# test_pager_alertmanager.sh: the pager's Alertmanager v2 alerts against a
# real Alertmanager (Debian's prometheus-alertmanager, deploy/dev/alertmanager.yml)
# on a free port (no cluster): the worked example's incident posted
# three times (a redelivery after a crash, and its earlier high-severity
# form) is one alert in one group, the high one inhibited by the critical
# one; the resolved form resolves it.
#
# Run by tests/integration/run.sh (it needs no other part of the stack).
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD
need_bins "$PW_BUILD/tests/it_pager_am"
need_tools prometheus-alertmanager curl python3
am_port=${PW_TEST_AM_PORT:-$(free_port)} # free, not fixed: another stack's tests may run beside
am=http://127.0.0.1:$am_port

dir=$(mktemp -d)
am_pid=""
cleanup() {
  [ -z "$am_pid" ] || { kill "$am_pid" 2>/dev/null || true; wait "$am_pid" 2>/dev/null || true; }
  rm -rf "$dir"
}
trap cleanup EXIT

prometheus-alertmanager --config.file=deploy/dev/alertmanager.yml --storage.path="$dir" \
  --web.listen-address=127.0.0.1:$am_port --cluster.listen-address= \
  --log.level=warn >"$dir/am.log" 2>&1 &
am_pid=$!
for _ in $(seq 100); do curl -fsS "$am/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS "$am/-/ready" >/dev/null || { echo "FAIL: alertmanager did not start"; cat "$dir/am.log"; exit 1; }

post() { "$PW_BUILD/tests/it_pager_am" "$1" | curl -fsS -X POST -H 'Content-Type: application/json' --data-binary @- "$am/api/v2/alerts"; }
post open
post open            # redelivered after a crash: the same alert
post escalated-high  # the incident's earlier, high-severity form
sleep 1.5

python3 - "$am" <<'PY'
import json, sys, urllib.request
am = sys.argv[1]
groups = json.load(urllib.request.urlopen(am + "/api/v2/alerts/groups"))
mine = [g for g in groups if g["labels"].get("incident") == "inc-it-00412"]
assert len(mine) == 1, f"want one group for the incident, got {len(mine)}: {groups}"
alerts = json.load(urllib.request.urlopen(am + "/api/v2/alerts?filter=incident%3D%22inc-it-00412%22"))
active = [a for a in alerts if a["status"]["state"] == "active"]
assert len(active) == 1, f"want one active alert, got {[(a['labels'], a['status']) for a in alerts]}"
a = active[0]
assert a["labels"]["severity"] == "critical", a["labels"]
assert a["annotations"]["summary"] == "chat-8b v6e-4 TPOT +8.2% BLOCKING, culprit cl/7841917", a["annotations"]
payload = json.loads(a["annotations"]["payload"])
assert payload["verdict"] == "BLOCKING" and payload["page"] == "ml-perf-triage", payload
supp = [x for x in alerts if x["status"]["state"] == "suppressed"]
assert len(supp) == 1 and supp[0]["labels"]["severity"] == "high" and supp[0]["status"]["inhibitedBy"], supp
print("alertmanager: one group, one active critical alert, the high form inhibited")
PY

post resolved
sleep 0.5
python3 - "$am" <<'PY'
import json, sys, urllib.request
am = sys.argv[1]
alerts = json.load(urllib.request.urlopen(am + "/api/v2/alerts?filter=incident%3D%22inc-it-00412%22&filter=severity%3D%22critical%22"))
assert not [a for a in alerts if a["status"]["state"] == "active"], alerts
print("alertmanager: the resolved incident is no longer active")
PY
echo "PASS: pager alertmanager"
