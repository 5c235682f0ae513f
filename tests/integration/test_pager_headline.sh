#!/usr/bin/env bash
# test_pager_headline.sh: what on-call receives first is the page of the
# whole event, its headline the event's largest spend-weighted finding, the
# same in every run whatever order the findings arrive in; the culprit and
# owner arrive later as an update of the same Alertmanager group; and a pager
# of one deployment (consumer group) never delivers another's earlier pages.
#
# One RC's gate findings, produced straight onto perf.alerts.v1 and
# perf.gate.verdicts.v1 (one CL range: one event): chat-8b (7.8% of fleet
# spend) TPOT p50 +8.2%, its cost and B8 TPOT, a P1 on HBM; rank-moe-110b
# (5%) MFU -3.3% and TPOT p99 +3.0%; tail-13b (1%) TPOT +12% (the largest
# change, the smallest spend); the GateVerdict naming all seven alerts.
# Three runs, each a pager of its own consumer group, each its own namespace:
#   A  rank-moe-110b first, then tail-13b, the verdict, chat-8b, with pauses
#      between them longer than a delivery tick and Alertmanager's group_wait
#      (before: the first notification was rank-moe-110b's, "owner unspecified");
#   B  the verdict first, then chat-8b, rank-moe-110b, tail-13b at once;
#   C  the nine messages in a shuffled order (seed printed) with two pauses.
# A real Alertmanager (deploy/dev/alertmanager.yml, group_interval 2s here)
# notifies a webhook standing in for on-call. Checked per run: the first
# notification of the event's group is "chat-8b... TPOT +8.2% BLOCKING",
# family label chat-8b, owner unspecified, no culprit; after the attribution
# (owner compiler) and the bisection (culprit cl/7841917) the next
# notification has the same group key and group labels, its firing alert the
# culprit and the owner in its labels and summary (the first one resolved):
# both are printed as on-call receives them. And runs B and C's pagers never
# post run A's (or B's) pages, although those are still active (before: a new
# pager re-posted every active page of the database to its Alertmanager).
set -euo pipefail

. tests/integration/lib.sh
need_env PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD PW_RUN_DIR
need_tools kcat protoc python3 curl prometheus-alertmanager
need_bins "$PW_BUILD/services/pager/pw-pager" "$PW_BUILD/tools/perfwatch"
pw=$PW_BUILD/tools/perfwatch
service_harness test_pager_headline ph
base=$ns
# on-call: every notification Alertmanager sends, one file each
oncall_port=$(free_port)
mkdir -p "$work/oncall"
python3 - "$oncall_port" "$work/oncall" >"$work/oncall.log" 2>&1 <<'PY' &
import http.server, sys
port, out = int(sys.argv[1]), sys.argv[2]
n = [0]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        n[0] += 1
        with open("%s/%04d.json" % (out, n[0]), "wb") as f:
            f.write(body)
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
pid[oncall]=$!
am_start "s#http://127.0.0.1:1/unused#http://127.0.0.1:$oncall_port/am#" 's/group_interval: 5m/group_interval: 2s/'

enc() { protoc --encode="perfwatch.v1.$1" -I proto "proto/perfwatch/v1/$2"; }
now_us=$(($(date +%s) * 1000000))
# the run's messages, one file each under $work/NS/: alert-ID.bin, verdict.bin, attribution.bin, bisection.bin
make_messages() { # NS
  local ns=$1 d=$work/$1 id model config metric pct verdict all=""
  mkdir -p "$d"
  while read -r id model config metric pct verdict; do
    printf 'alert_id: "gate-rc-%s-e1-%s" revision: 1 kind: ALERT_KIND_REGRESSION source: ALERT_SOURCE_GATE
created_unix_us: %s series_key: "%s.%s/hlo:1/v6e-4/%s/%s"
series { model: "%s.%s" hlo_fingerprint: "hlo:1" platform: "v6e-4" config: "%s" metric: "%s" }
baseline { median: 3.9 mad: 0.02 n: 30 } observed { median: 4.2 n: 5 release: "rc-%s" }
delta { pct: %s z_robust: 10 fdr_q: 0.001 } effect_gate { mde_pct: 1 passed_min_effect: true }
changepoint { nightly: "2026-06-17" cl_range_lo: "cl/7841885" cl_range_hi: "cl/7841923" n_cls: 38 }
verdict: %s release_id: "rc-%s"' "$ns" "$id" "$now_us" "$model" "$ns" "$config" "$metric" "$model" "$ns" "$config" \
      "$metric" "$ns" "$pct" "$verdict" "$ns" | enc Alert alert.proto >"$d/alert-$id.bin" || fail "encoding $id"
    all+="series { series_key: \"$model.$ns/hlo:1/v6e-4/$config/$metric\" family: \"$model.$ns\" alert_id: \"gate-rc-$ns-e1-$id\" verdict: $verdict } "
  done <<'EOF'
s10 chat-8b decode.B64.s2048.int8 tpot_p50_ms 8.2 VERDICT_BLOCKING
s15 chat-8b decode.B64.s2048.int8 cost_per_mtok_usd 8.2 VERDICT_BLOCKING
s78 chat-8b decode.B8.s2048.int8 tpot_p50_ms 7.4 VERDICT_BLOCKING
s14 chat-8b decode.B64.s2048.int8 hbm_bw_util -1.6 VERDICT_P1
s29 rank-moe-110b decode.B8.s2048.int8 mfu -3.3 VERDICT_BLOCKING
s27 rank-moe-110b decode.B8.s2048.int8 tpot_p99_ms 3.0 VERDICT_BLOCKING
s90 tail-13b decode.B8.s2048.int8 tpot_p50_ms 12.0 VERDICT_BLOCKING
EOF
  printf 'release_id: "rc-%s" evaluation: 1 verdict: VERDICT_BLOCKING candidate_build_id: "rc-%s" evaluated_unix_us: %s
families { family: "chat-8b.%s" verdict: VERDICT_BLOCKING spend_weighted_impact_pct: 0.64 }
families { family: "rank-moe-110b.%s" verdict: VERDICT_BLOCKING spend_weighted_impact_pct: 0.17 }
families { family: "tail-13b.%s" verdict: VERDICT_BLOCKING spend_weighted_impact_pct: 0.12 } %s' \
    "$ns" "$ns" "$now_us" "$ns" "$ns" "$ns" "$all" | enc GateVerdict gate.proto >"$d/verdict.bin" || fail "encoding the verdict"
  local series="series_key: \"chat-8b.$ns/hlo:1/v6e-4/decode.B64.s2048.int8/tpot_p50_ms\"
series { model: \"chat-8b.$ns\" hlo_fingerprint: \"hlo:1\" platform: \"v6e-4\" config: \"decode.B64.s2048.int8\" metric: \"tpot_p50_ms\" }"
  printf 'alert_id: "gate-rc-%s-e1-s10" %s owner_hint: "compiler" status: "ok" created_unix_us: %s' \
    "$ns" "$series" "$((now_us + 1000000))" | enc Attribution attribution.proto >"$d/attribution.bin" || fail "encoding the attribution"
  printf 'bisection_id: "bs-%s" alert_id: "gate-rc-%s-e1-s10" %s range_lo: "cl/7841885" range_hi: "cl/7841923" n_cls: 38
culprit: "cl/7841917" culprit_owner: "xla-fusion" verified_adjacent_clean: true cherry_pick_reproduced: true
status: BISECTION_STATUS_DONE started_unix_us: %s updated_unix_us: %s' "$ns" "$ns" "$series" "$((now_us + 1000000))" \
    "$((now_us + 2000000))" | enc Bisection bisect.proto >"$d/bisection.bin" || fail "encoding the bisection"
}
produce() { # NS NAME: one message of the run (alert-ID, verdict, attribution, bisection)
  local topic
  case $2 in
    alert-*) topic=perf.alerts.v1 ;; verdict) topic=perf.gate.verdicts.v1 ;;
    attribution) topic=perf.attributions.v1 ;; bisection) topic=perf.bisections.v1 ;;
  esac
  kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t "$topic" -k "$1-$2" "$work/$1/$2.bin" || fail "producing $2"
}

# the notifications of one incident's group, in the order Alertmanager sent them
notifications() { # INCIDENT_SUBSTRING
  python3 - "$work/oncall" "$1" <<'PY'
import glob, json, sys
d, want = sys.argv[1], sys.argv[2]
for f in sorted(glob.glob(d + "/*.json")):
    m = json.load(open(f))
    if want in m["groupLabels"].get("incident", ""):
        print(f)
PY
}
show() { # FILE TITLE: a notification as on-call receives it
  python3 - "$1" "$2" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print("%s: receiver %s, status %s, groupKey %s, groupLabels %s" % (sys.argv[2], m["receiver"], m["status"], m["groupKey"], m["groupLabels"]))
for a in m["alerts"]:
    l, an = a["labels"], a["annotations"]
    print("  [%s %s] %s" % (a["status"], l["severity"].upper(), an.get("summary", "(no summary)")))
    print("    family %s, owner %s, culprit %s, route %s, release %s" % (
        l.get("family"), l.get("owner"), l.get("culprit", "-"), l.get("route"), l.get("release")))
    print("    triage %s" % an.get("triage_url"))
PY
}

runs=()
run() { # NAME ORDER...: one pager of its own group; ORDER: message names and "pause"
  local name=$1 ns=$base$1 group hook_port w first next t0
  shift
  runs+=("$ns")
  group=$ns-pager
  make_messages "$ns"
  q "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
       ('chat-8b.$ns', 0.078, 'top', 'it'), ('rank-moe-110b.$ns', 0.05, 'top', 'it'), ('tail-13b.$ns', 0.01, 'tail', 'it')
     ON CONFLICT (model) DO NOTHING" >/dev/null
  "$pw" group to-end "$group" perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 \
    perf.attributions.v1 perf.rollouts.v1 >/dev/null || fail "$name: placing the group"
  hook_port=$(free_port)
  python3 - "$hook_port" "$work/hook.$name.txt" >"$work/hook.$name.log" 2>&1 <<'PY' &
import http.server, json, sys
port, out = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with open(out, "a") as f:
            f.write("%s %s\n" % (body.get("page_id") or body.get("notice_id"), body.get("version", "-")))
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
  pid[hook]=$!
  t0=$(q "SELECT now()")
  PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID=$group PW_PAGER_TRIAGE_KEY="headline-test-key-$ns" PW_PAGER_BUDGET_PER_WEEK=1000 \
    PW_PAGER_TICK=200ms PW_PAGER_ALERTMANAGER_RESEND=2s PW_PAGER_ALERTMANAGER_URL="$am" \
    PW_PAGER_WEBHOOK_URL="http://127.0.0.1:$hook_port/hook" "$PW_BUILD/services/pager/pw-pager" >"$work/pager.$name.log" 2>&1 &
  pid[pager]=$!
  pager_joined "$work/pager.$name.log" "${pid[pager]}"
  local deadline
  echo "test_pager_headline: run $name (namespace $ns): $*"
  for w in "$@"; do
    if [ "$w" = pause ]; then sleep 2.5; else produce "$ns" "$w"; fi
  done
  deadline=$((SECONDS + 60))
  until first=$(notifications "$ns" | head -1) && [ -n "$first" ]; do
    [ $SECONDS -lt $deadline ] || fail "$name: no notification for the event within 60 s"
    sleep 0.3
  done
  show "$first" "run $name: on-call's FIRST notification"
  python3 - "$first" "$ns" <<'PY' || fail "run $name: the first notification is not the event's headline (see $first)"
import json, sys
m, ns = json.load(open(sys.argv[1])), sys.argv[2]
firing = [a for a in m["alerts"] if a["status"] == "firing"]
assert len(firing) == 1, m["alerts"]
a = firing[0]
assert a["annotations"]["summary"] == "chat-8b.%s v6e-4 TPOT +8.2%% BLOCKING" % ns, a["annotations"]["summary"]
assert a["labels"]["family"] == "chat-8b." + ns and a["labels"]["severity"] == "critical", a["labels"]
assert a["labels"]["owner"] == "unspecified" and "culprit" not in a["labels"], a["labels"]
PY
  # the culprit and the owner arrive
  produce "$ns" attribution
  produce "$ns" bisection
  deadline=$((SECONDS + 60))
  until next=$(notifications "$ns" | sed -n 2p) && [ -n "$next" ]; do
    [ $SECONDS -lt $deadline ] || fail "$name: no update of the group within 60 s of the culprit"
    sleep 0.3
  done
  # the owner and the culprit may come as one update or two: the last one within the group's interval
  sleep 3
  next=$(notifications "$ns" | tail -1)
  show "$next" "run $name: on-call's UPDATE"
  python3 - "$first" "$next" "$ns" <<'PY' || fail "run $name: the update is not the same group with culprit and owner (see $next)"
import json, sys
a, b, ns = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
assert a["groupKey"] == b["groupKey"] and a["groupLabels"] == b["groupLabels"], (a["groupKey"], b["groupKey"])
firing = [x for x in b["alerts"] if x["status"] == "firing"]
assert len(firing) == 1, b["alerts"]
f = firing[0]
resolved = [x for x in b["alerts"] if x["status"] == "resolved"]
assert all(x["annotations"].get("summary", "").startswith("chat-8b.%s v6e-4 TPOT +8.2%% BLOCKING" % ns) for x in resolved), resolved
assert f["labels"]["culprit"] == "cl/7841917" and f["labels"]["owner"] == "compiler", f["labels"]
assert f["annotations"]["summary"] == "chat-8b.%s v6e-4 TPOT +8.2%% BLOCKING, culprit cl/7841917" % ns, f["annotations"]
assert f["labels"]["incident"] == a["alerts"][0]["labels"]["incident"], (f["labels"], a["alerts"][0]["labels"])
PY
  [ "$(q "SELECT count(*) FROM perfwatch.pages WHERE pager_group = '$group'")" = 1 ] ||
    fail "$name: $(q "SELECT count(*) FROM perfwatch.pages WHERE pager_group = '$group'") pages for the event, want 1"
  grep -q 'its event is complete' "$work/pager.$name.log" || fail "$name: the page was never held for its event"
  # this pager posted only its own deployment's pages, to Alertmanager and its webhook
  local other
  other=$(q "SELECT count(*) || ' (' || coalesce(string_agg(DISTINCT p.page_id, ', '), '') || ')'
               FROM perfwatch.pager_deliveries d JOIN perfwatch.pages p USING (page_id)
              WHERE d.attempted_at >= '$t0' AND p.pager_group <> '$group'")
  [ "${other%% *}" = 0 ] || fail "$name: the pager posted $other pages of other deployments"
  [ -s "$work/hook.$name.txt" ] || fail "$name: the webhook received nothing"
  if grep -v "^$(q "SELECT page_id FROM perfwatch.pages WHERE pager_group = '$group'") " "$work/hook.$name.txt" | grep . >/dev/null; then
    fail "$name: the webhook received another deployment's page: $(sort -u "$work/hook.$name.txt" | head -5)"
  fi
  echo "test_pager_headline: run $name: one page; $(wc -l <"$work/hook.$name.txt") webhook posts, all of it; no post of another deployment's pages"
  kill -TERM "${pid[pager]}" "${pid[hook]}"
  wait "${pid[pager]}" "${pid[hook]}" 2>/dev/null || true
  unset "pid[pager]" "pid[hook]"
}

run A alert-s29 alert-s27 pause alert-s90 pause verdict pause alert-s10 alert-s15 alert-s78 alert-s14
run B verdict alert-s10 alert-s15 alert-s78 alert-s14 alert-s29 alert-s27 alert-s90
seed=${PW_TEST_SEED:-$RANDOM}
mapfile -t order < <(python3 -c 'import random, sys
r = random.Random(int(sys.argv[1]))
m = ["alert-s10", "alert-s15", "alert-s78", "alert-s14", "alert-s29", "alert-s27", "alert-s90", "verdict"]
r.shuffle(m)
for i in sorted(r.sample(range(1, len(m)), 2), reverse=True):
    m.insert(i, "pause")
print("\n".join(m))' "$seed")
echo "test_pager_headline: run C's order from seed $seed (PW_TEST_SEED reproduces it)"
run C "${order[@]}"
# the earlier runs' pages are still active, and nobody re-delivered them
for ns in "${runs[@]}"; do
  [ "$(q "SELECT count(*) FROM perfwatch.pages WHERE pager_group = '$ns-pager' AND resolved_at IS NULL")" = 1 ] ||
    fail "$ns's page is not active"
done
echo "PASS: pager headline"
