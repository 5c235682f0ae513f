#!/usr/bin/env bash
# demo.sh: the script behind `make demo`, run as a list of numbered steps.
#
# It starts the dev stack (deploy/dev/stack.sh) and says where each server
# listens; starts the services built so far (ingester, baseliner, watcher,
# gate, attributor, bisector, pager, and on-call's Alertmanager and webhook; the planner
# later, in its own step); replays a scenario of the fleet simulator (default worked-example:
# the design's chat-8b regression) on the real topics; and shows what the
# services made of it: what was ingested, the baselines, the gate's console
# report and the changepoints. Each step is a function that fails loudly; the
# demo stops at the first failing step. The last step checks the demo's own
# result against the scenario's expected outcome (the gate's BLOCKING verdict
# for chat-8b, the changepoints pinned to 2026-06-17, and the planner's nightly
# of that day running chat-8b on v6e-4 because of cl/7841917, with its
# coverage report, the production canary of the next release rolling
# chat-8b back, paged once through the pager, and promoting the others, and the
# release rolled to canary after a waiver: chat-8b pinned to N-1, the others
# promoted) and exits non-zero,
# naming what did not come out, when anything is missing. The services are stopped at the end,
# the stack is left running so that it can be explored.
#
# It is quiet where a user has nothing to read: the build is one line (its
# log in run/demo/build.log), the gate's full per-series report goes to
# run/demo/gate-report.txt behind a summary in the shape of the design's
# artifact 7. Every step runs under errexit and pipefail: any command that
# fails ends the demo at once, naming the step and the command, and the last
# step's checks include that on-call's page and its artifact-3 payload were
# printed. It ends with what to look at next, and how.
#
# A demo is its own on a stack that tests, benchmarks or earlier demos used:
# the replay is namespaced (pw-sim --namespace: its models, fingerprints and
# release carry ".demoNNN"), the services join consumer groups of their own
# at the topics' ends before anything is replayed, and what step 4 shows is
# this replay's only.
#
#   tools/demo.sh BUILD_DIR
# Environment: PW_DEMO_SCENARIO (default worked-example), PW_DEMO_VERBOSE=1
# (print the build and the full gate report instead of their summaries).
set -Eeuo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
stack=$repo/deploy/dev/stack.sh

[ $# -eq 1 ] || { echo "usage: tools/demo.sh BUILD_DIR" >&2; exit 2; }
mkdir -p "$1"
build=$(cd "$1" && pwd)
run_dir=${PW_RUN_DIR:-$repo/run}
case $run_dir in /*) ;; *) run_dir=$PWD/$run_dir ;; esac
verbose=${PW_DEMO_VERBOSE:-0}

# Step 1: the build, one line; its output in run/demo/build.log.
step_build() {
  mkdir -p "$run_dir/demo"
  local log=$run_dir/demo/build.log t0=$SECONDS
  if [ "$verbose" = 1 ]; then
    cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$build" -j "$(nproc)"
    return
  fi
  if ! { cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
         cmake --build "$build" -j "$(nproc)"; } >"$log" 2>&1; then
    echo "demo: the build failed; the last lines of $log:" >&2
    tail -n 25 "$log" >&2
    return 1
  fi
  echo "built in $((SECONDS - t0)) s ($(grep -c 'Linking' "$log" || true) programs linked; log $log)"
}

# Step 2: the dev stack, and the variables every later step and service reads.
step_stack() {
  "$stack" start "$build" | grep -E "up|already running|ready in"
  set -a
  # shellcheck source=/dev/null
  . "$run_dir/stack.env"
  set +a
  echo
  echo "PostgreSQL  $PW_PG_DSN"
  echo "            psql \"$PW_PG_DSN\""
  echo "Redis       $PW_REDIS_ADDR"
  echo "            redis-cli -h ${PW_REDIS_ADDR%:*} -p ${PW_REDIS_ADDR##*:}"
  echo "Kafka       $PW_KAFKA_BOOTSTRAP_SERVERS  (Apache Kafka, one KRaft node; its log in $run_dir/kafka/data)"
  echo "            kcat -L -b $PW_KAFKA_BOOTSTRAP_SERVERS"
  echo "env file    $run_dir/stack.env  (load with: set -a; . $run_dir/stack.env; set +a)"
  echo "logs        $run_dir/pg/postgres.log  $run_dir/redis/redis.log  $run_dir/kafka/kafka.log"
}


scenario=${PW_DEMO_SCENARIO:-worked-example}
scn=$repo/tools/simulator/scenarios/$scenario.scn
sim=$build/tools/simulator/pw-sim
ns=demo$(date +%s)
demo_dir=$run_dir/demo
pids=()
stop_services() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
trap stop_services EXIT
q() { psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

# On-call's end: a webhook receiver standing in for the pager app (every
# POST kept as a file under run/demo/oncall/), and Alertmanager (Debian's
# prometheus-alertmanager, when installed) routing to it with
# deploy/dev/alertmanager.yml's grouping and inhibition; its group_interval
# (5m there) is 5s here, so that the update of the page's group (the culprit
# and the owner) reaches on-call while the demo runs. The pager is a
# deployment of its own (kafka.group.id "$ns-pager"): it delivers this demo's
# pages only, never an earlier demo's or test's.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
oncall_start() {
  mkdir -p "$demo_dir/oncall"
  rm -f "$demo_dir"/oncall/*.json "$demo_dir"/oncall/*.part
  triage_key=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
  echo "$triage_key" >"$demo_dir/triage.key"
  pager_port=$(free_port)
  local hook_port am_port
  hook_port=$(free_port)
  hook_url=http://127.0.0.1:$hook_port
  python3 - "$hook_port" "$demo_dir/oncall" >"$demo_dir/oncall.log" 2>&1 <<'PY' &
import http.server, os, sys, time
port, out = int(sys.argv[1]), sys.argv[2]
n = [0]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        n[0] += 1
        # written whole, then renamed: a reader never sees half a notification
        name = "%s/%03d-%s.json" % (out, n[0], self.path.strip("/").replace("/", "_"))
        with open(name + ".part", "wb") as f:
            f.write(body)
        os.replace(name + ".part", name)
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
  pids+=($!)
  am_url=""
  if command -v prometheus-alertmanager >/dev/null; then
    am_port=$(free_port)
    am_url=http://127.0.0.1:$am_port
    sed -e "s#http://127.0.0.1:1/unused#$hook_url/alertmanager#" -e 's/group_interval: 5m/group_interval: 5s/' \
      "$repo/deploy/dev/alertmanager.yml" >"$demo_dir/alertmanager.yml"
    rm -rf "$demo_dir/am"
    prometheus-alertmanager --config.file="$demo_dir/alertmanager.yml" --storage.path="$demo_dir/am" \
      --web.listen-address=127.0.0.1:$am_port --cluster.listen-address= --log.level=warn \
      >"$demo_dir/alertmanager.log" 2>&1 &
    pids+=($!)
    local i
    for i in $(seq 100); do curl -fsS "$am_url/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done
    echo "alertmanager  $am_url (routes to on-call's webhook $hook_url/alertmanager), log $demo_dir/alertmanager.log"
  else
    echo "alertmanager  not installed (prometheus-alertmanager): the pager delivers to its webhook only"
  fi
  echo "on-call       webhook $hook_url, what it receives: $demo_dir/oncall/"
}

# Step 2: the services, each a process with its log under run/demo/.
step_services() {
  mkdir -p "$demo_dir"
  [ -x "$sim" ] || { echo "demo: $sim is not built" >&2; return 1; }
  # the spend table the gate and the watcher route by (§8: chat-8b is a top-20 model)
  q "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
       ('chat-8b.$ns', 0.078, 'top', 'demo'), ('rank-moe-110b.$ns', 0.05, 'top', 'demo')
     ON CONFLICT (model) DO NOTHING" >/dev/null
  # groups of this demo's own, starting at the topics' ends: what tests or
  # earlier demos left on the broker is not replayed
  local pw=$build/tools/perfwatch
  "$pw" group to-end "$ns-ingester" perf.runs.v1 >/dev/null &&
    "$pw" group to-end "$ns-baseliner" perf.points.v1 perf.fleet-changes.v1 >/dev/null &&
    "$pw" group to-end "$ns-watcher" perf.points.v1 perf.fleet-changes.v1 perf.baselines.v1 >/dev/null &&
    "$pw" group to-end "$ns-gate" perf.gate.requests.v1 >/dev/null &&
    "$pw" group to-end "$ns-attributor" perf.alerts.v1 perf.bisections.v1 >/dev/null &&
    "$pw" group to-end "$ns-bisector" perf.alerts.v1 perf.compiler-cls.v1 >/dev/null &&
    "$pw" group to-end "$ns-answer" perf.bisect.jobs.v1 >/dev/null &&
    "$pw" group to-end "$ns-pager" perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 \
      perf.attributions.v1 perf.rollouts.v1 >/dev/null || return 1
  # (every replay of a scenario has the same CLs, but an earlier demo's or test's open incidents are
  # another pager deployment's: this demo's pager, in its own group, never joins nor delivers them)
  # the false-page budget is fleet-wide over a rolling week: pages that tests or earlier demos left
  # on this stack would spend it; the demo gets the default 5 on top of what they used
  budget=$((5 + $(q "SELECT count(*) - count(*) FILTER (WHERE t.outcome = 'true_regression')
                       FROM perfwatch.pages p LEFT JOIN perfwatch.triage_verdicts t USING (page_id)
                      WHERE p.incident_id IS NOT NULL AND p.created_at > now() - interval '7 days'")))
  oncall_start || return 1
  local svc bin
  for svc in ingester baseliner watcher gate attributor bisector pager; do
    bin=$build/services/$svc/pw-$svc
    [ -x "$bin" ] || { echo "demo: $bin is not built" >&2; return 1; }
    # gate.min_wait: a member joining the ingester's group can hold its
    # partitions for tens of seconds; the gate must not decide on a baseline
    # that is late only because of that (it decides at once when all is in)
    PW_HTTP_PORT=$([ $svc = pager ] && echo "$pager_port" || echo 0) PW_KAFKA_GROUP_ID="$ns-$svc" \
      PW_GATE_MIN_WAIT=180s PW_PAGER_TRIAGE_KEY="$triage_key" PW_PAGER_ALERTMANAGER_URL="$am_url" \
      PW_PAGER_WEBHOOK_URL="$hook_url/pager" PW_PAGER_TICK=250ms PW_PAGER_BUDGET_PER_WEEK=$budget \
      "$bin" >"$demo_dir/$svc.log" 2>&1 &
    pids+=($!)
  done
  echo "started ingester, baseliner, watcher, gate, attributor, bisector, pager; logs $demo_dir/<service>.log"
  # joined, so that the first points are judged by services that are running
  local i=0 deadline=$((SECONDS + 60))
  for svc in ingester baseliner watcher gate attributor bisector pager; do
    until grep -q '"msg":"kafka partitions assigned' "$demo_dir/$svc.log"; do
      kill -0 "${pids[$i]}" 2>/dev/null || { echo "demo: pw-$svc exited" >&2; tail -5 "$demo_dir/$svc.log" >&2; return 1; }
      [ $SECONDS -lt $deadline ] || { echo "demo: pw-$svc did not join its consumer group" >&2; return 1; }
      sleep 0.2
    done
    i=$((i + 1))
  done
  # the build farm's stand-in: pw-sim runs the bisector's jobs on the scenario's model
  PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-answer" "$sim" answer "$scn" --namespace "$ns" \
    >"$demo_dir/answer.log" 2>&1 &
  pids+=($!)
  echo "all seven joined their consumer groups (this demo's namespace: .$ns); pw-sim answers the bisector's build jobs"
}

# Step 3: the fleet simulator plays the executor fleet and the release tooling.
step_replay() {
  prefix="$ns-"
  "$sim" replay "$scn" --namespace "$ns" --run-prefix "$prefix" --dup-every 50 --bad-every 100 \
    2>"$demo_dir/sim.log" | tee "$demo_dir/sim.json"
  local want got deadline=$((SECONDS + 180))
  want=$("$sim" count "$scn" | grep -o '"samples":[0-9]*' | cut -d: -f2)
  while got=$(q "SELECT count(*) FROM perfwatch.samples WHERE run_id LIKE '${prefix}%'"); [ "$got" -lt "$want" ]; do
    [ $SECONDS -lt $deadline ] || { echo "demo: only $got of $want samples stored" >&2; return 1; }
    sleep 0.5
  done
  echo
  echo "ingested: $(q "SELECT count(*) FROM perfwatch.runs WHERE run_id LIKE '${prefix}%'") runs, $got samples,"\
       "$(q "SELECT count(*) FROM perfwatch.op_timings WHERE run_id LIKE '${prefix}%'") op timings,"\
       "$(q "SELECT count(DISTINCT series_id) FROM perfwatch.samples WHERE run_id LIKE '${prefix}%'") series;"\
       "dead letters: $(q "SELECT coalesce(string_agg(reason || ' ' || n, ', '), 'none') FROM (SELECT reason, count(*) n FROM perfwatch.dead_letters WHERE convert_from(original_key, 'UTF8') LIKE '${prefix}%' OR convert_from(original_key, 'UTF8') LIKE '%.${ns}/%' GROUP BY reason) x")"
  echo
  echo "TPOT p50 (ms) by series and build kind (median of the stored points):"
  psql "$PW_PG_DSN" -Xq -P pager=off -c "
    SELECT s.model, s.platform, s.config, p.build_kind,
           round(percentile_cont(0.5) WITHIN GROUP (ORDER BY p.value)::numeric, 3) AS median_ms,
           count(*) AS n
      FROM perfwatch.samples p JOIN perfwatch.series s USING (series_id)
     WHERE p.run_id LIKE '${prefix}%' AND s.metric = 'tpot_p50_ms'
     GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4 DESC"
}

# Step 4: the baselines and the gate's verdict on the scenario's RC.
step_results() {
  local pw=$build/tools/perfwatch deadline=$((SECONDS + 300))
  # the scenario's GateRequest, as the replay named it
  rel=$("$sim" dump "$scn" --namespace "$ns" 2>/dev/null | grep -o '"gate_request":"[^"]*"' | head -1 | cut -d'"' -f4)
  [ -n "$rel" ] || { echo "demo: scenario $scenario sends no GateRequest" >&2; return 1; }
  until [ "$(q "SELECT status FROM perfwatch.gate_evaluations WHERE release_id = '$rel' ORDER BY evaluation DESC LIMIT 1")" = done ]; do
    [ $SECONDS -lt $deadline ] || { echo "demo: no gate verdict within 300 s" >&2; tail -5 "$demo_dir/gate.log" >&2; return 1; }
    sleep 1
  done
  # the baseliner and the watcher have taken in every point
  "$pw" group lag "$ns-baseliner" --wait 120 perf.points.v1 >/dev/null &&
    "$pw" group lag "$ns-watcher" --wait 120 perf.points.v1 >/dev/null ||
    { echo "demo: the baseliner or the watcher did not catch up within 120 s" >&2; return 1; }
  echo "baselines by state (this replay's series):"
  psql "$PW_PG_DSN" -Xq -P pager=off -c "SELECT b.state, count(*) FROM perfwatch.latest_baselines b
    JOIN perfwatch.series s USING (series_id) WHERE s.model LIKE '%.$ns' GROUP BY 1 ORDER BY 1"
  local key
  key=$(q "SELECT series_key FROM perfwatch.series WHERE model = 'chat-8b.$ns' AND platform = 'v6e-4'
             AND config = 'decode.B64.s2048.int8' AND metric = 'tpot_p50_ms'")
  if [ -n "$key" ]; then
    echo "perfwatch series show $key --text"
    "$pw" series show "$key" --text || return 1
    "$pw" series plot "$key" -o "$demo_dir/chat-8b-b64.svg" >/dev/null 2>&1 \
      && echo "plot: $demo_dir/chat-8b-b64.svg"
  fi
  echo
  "$pw" gate show "$rel" >"$demo_dir/gate-report.txt"
  if [ "$verbose" = 1 ]; then
    cat "$demo_dir/gate-report.txt"
    return
  fi
  echo "the gate's verdict (perfwatch gate show $rel; every series in $demo_dir/gate-report.txt):"
  "$pw" gate show "$rel" --json | python3 "$repo/tools/demo_gate_summary.py" "$ns"
}

# Step 5: the fleet keeps running nightlies after the RC. The watcher's
# level-shift test (Mann–Whitney p <= 1e-5 between segments, docs/changepoints.md)
# needs about ten points after a shift: the scenario's five nightlies after
# cl/7841917 are too few, so the nightlies continue for eleven more days.
step_nightlies() {
  local pw=$build/tools/perfwatch days
  days=$(awk '$1 == "days" { print $2 }' "$scn")
  [ -n "$days" ] || { echo "demo: scenario $scenario has no days line" >&2; return 1; }
  "$sim" replay "$scn" --namespace "$ns" --run-prefix "$prefix" --days $((days + 11)) \
    --since "$(date -u -d "$(awk '$1 == "start" { print $2 }' "$scn") + $days days" +%Y-%m-%dT00:00:00Z)" \
    2>>"$demo_dir/sim.log" | tee -a "$demo_dir/sim.json"
  "$pw" group lag "$ns-ingester" --wait 120 perf.runs.v1 >/dev/null &&
    "$pw" group lag "$ns-baseliner" --wait 120 perf.points.v1 >/dev/null &&
    "$pw" group lag "$ns-watcher" --wait 120 perf.points.v1 >/dev/null ||
    { echo "demo: the services did not catch up within 120 s" >&2; return 1; }
  echo
  echo "first-signal alerts the baseliner raised on this replay's series (infra-health only when"
  echo "a fleet or harness change explains them, otherwise unconfirmed), by kind, and the"
  echo "excursion points it kept out without an alert (each nightly after cl/7841917 lies more"
  echo "than 5 sigma above its series' baseline: one excursion per series, one alert,"
  echo "docs/baseliner.md, 'A sustained shift'):"
  psql "$PW_PG_DSN" -Xq -P pager=off -c "
    SELECT split_part(alert_id, '/', 1) AS kind, count(*), count(DISTINCT series_id) AS series
      FROM perfwatch.alerts
     WHERE series_key LIKE '%.$ns/%' AND source = 'baseliner' GROUP BY 1
    UNION ALL
    SELECT 'excursion point', count(*), count(DISTINCT x.series_id)
      FROM perfwatch.baseliner_excursion_points x JOIN perfwatch.series s USING (series_id)
     WHERE s.series_key LIKE '%.$ns/%' ORDER BY 1"
  echo
  echo "changepoints found by the watcher, by benchmark (every metric's in perfwatch.changepoints):"
  psql "$PW_PG_DSN" -Xq -P pager=off -c "
    SELECT replace(s.model, '.$ns', '') AS model, s.platform, s.config, c.day,
           c.last_clean_cl || '..' || c.first_shifted_cl AS cl_range, count(*) AS metrics,
           round(max(c.delta_pct) FILTER (WHERE s.metric = 'tpot_p50_ms')::numeric, 2) AS tpot_p50_pct,
           string_agg(DISTINCT c.routing, ',') AS routing
      FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id)
     WHERE s.model LIKE '%.$ns'
     GROUP BY 1, 2, 3, 4, 5 ORDER BY 4, 1, 2, 3"
}

# Step 6: the attributor's first move on the B64 TPOT alert (§6.2): the per-op
# diff (artifact 6), the HLO diff (artifact 5) and the roofline check.
step_attribution() {
  local pw=$build/tools/perfwatch deadline=$((SECONDS + 120))
  b64_alert=$(q "SELECT alert_id FROM perfwatch.alerts WHERE source = 'gate' AND kind = 'regression'
                   AND series_key LIKE 'chat-8b.$ns/%/v6e-4/decode.B64.s2048.int8/tpot_p50_ms' LIMIT 1")
  [ -n "$b64_alert" ] || { echo "demo: the gate raised no B64 TPOT alert" >&2; return 1; }
  until [ -n "$(q "SELECT 1 FROM perfwatch.attributions WHERE alert_id = '$b64_alert'")" ]; do
    [ $SECONDS -lt $deadline ] || { echo "demo: no attribution of $b64_alert within 120 s" >&2; tail -5 "$demo_dir/attributor.log" >&2; return 1; }
    sleep 0.5
  done
  echo "perfwatch attribution show $b64_alert"
  "$pw" attribution show "$b64_alert" || return 1
  echo
  echo "attributions of this replay's alerts, and the time from each alert to its attribution:"
  psql "$PW_PG_DSN" -Xq -P pager=off -c "
    SELECT al.source, t.status, t.owner_hint, count(*),
           round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM t.created_at - al.created_at))::numeric, 2) AS median_s,
           round(max(extract(epoch FROM t.created_at - al.created_at))::numeric, 2) AS max_s
      FROM perfwatch.attributions t JOIN perfwatch.alerts al USING (alert_id)
     WHERE al.series_key LIKE '%.$ns/%' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
}

# The B64 TPOT attribution: artifact 6's op family, artifact 5's cap, the
# roofline's +6.5% predicted against +8.2% measured, v5e-8 and prefill explained,
# the compiler named.
check_attribution() {
  "$build/tools/perfwatch" attribution show "$b64_alert" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
ops = {o["op_name"]: o for o in d["ops"]}
assert ops["fusion.1423"]["change"] == "removed" and abs(ops["fusion.1423"]["delta_us"] + 2016) < 30
for n, v in (("fusion.1423a", 1088), ("fusion.1423b", 1184), ("softmax.88", 256)):
    assert ops[n]["change"] == "new" and abs(ops[n]["delta_us"] - v) < 20, n
assert "cap 1,572,864 B" in d["hlo_diff"] and d["top_op_family"] == "fusion.1423"
assert abs(d["predicted_delta_pct"] - 6.5) < 0.2 and abs(d["measured_delta_pct"] - 8.2) < 0.5
sel = d["selectivity"]
assert any("v5e-8" in x["series"] and x["explained"] for x in sel)
assert any("prefill" in x["series"] and x["explained"] for x in sel)
assert d["owner_hint"] == "compiler"
'
}

# The bisector's event for chat-8b at the RC's CL: the log (artifact 4).
step_bisection() {
  local pw=$build/tools/perfwatch deadline=$((SECONDS + 180))
  bisection="bs-chat-8b.$ns-7841923"
  until [ "$(q "SELECT status IN ('done', 'failed') FROM perfwatch.bisections WHERE bisection_id = '$bisection'")" = t ]; do
    [ $SECONDS -lt $deadline ] || { echo "demo: bisection $bisection not over within 180 s" >&2; tail -5 "$demo_dir/bisector.log" >&2; return 1; }
    sleep 0.5
  done
  echo "perfwatch bisect show $bisection"
  "$pw" bisect show "$bisection" || return 1
  echo
  q "SELECT 'builds ' || builds || ', alert to culprit ' ||
            round(extract(epoch FROM finished_at - started_at)::numeric, 1) || ' s'
       FROM perfwatch.bisections WHERE bisection_id = '$bisection'"
}

# The page as on-call receives it: what Alertmanager sent to on-call's
# webhook, the pager's page with its artifact-3 payload, and the triage link.
step_page() {
  local deadline=$((SECONDS + 120))
  page=""
  if [ "$scenario" != worked-example ]; then
    # no written-down page for other scenarios: what the pager made of this replay
    sleep 10
    echo "pages for this replay (namespace .$ns): $(q "SELECT count(*) FROM perfwatch.pages WHERE payload->'series'->>'model' LIKE '%.$ns'")"
    q "SELECT '  ' || page_id || ': ' || summary || ' [' || severity || ', ' || delivery_status || ']'
         FROM perfwatch.pages WHERE payload->'series'->>'model' LIKE '%.$ns' ORDER BY created_at"
    echo "pager decisions: $(q "SELECT coalesce(string_agg(action || ' ' || n, ', '), 'none') FROM (SELECT d.action, count(*) n
         FROM perfwatch.pager_decisions d JOIN perfwatch.pager_incidents i USING (incident_id)
         WHERE i.family LIKE '%.$ns' GROUP BY 1) x")"
    return 0
  fi
  until [ -n "$page" ] && [ "$(q "SELECT delivery_status = 'delivered' AND payload->'bisection'->>'culprit' IS NOT NULL
                                   AND payload->>'owner_hint' <> '' FROM perfwatch.pages WHERE page_id = '$page'")" = t ]; do
    page=$(q "SELECT page_id FROM perfwatch.pages WHERE payload->'series'->>'model' = 'chat-8b.$ns' ORDER BY created_at LIMIT 1")
    [ $SECONDS -lt $deadline ] || { echo "demo: no delivered page with its culprit within 120 s" >&2; tail -5 "$demo_dir/pager.log" >&2; return 1; }
    sleep 0.5
  done
  # what on-call receives: the first notification of the page's group, then its update with the
  # culprit and the owner (Alertmanager's group_wait, then group_interval)
  local am_first am_update
  if [ -n "$am_url" ]; then
    deadline=$((SECONDS + 60))
    until am_update=$(python3 - "$demo_dir/oncall" "$page" <<'PY'
import glob, json, sys
d, page = sys.argv[1], sys.argv[2]
for f in sorted(glob.glob(d + "/*-alertmanager.json")):
    m = json.load(open(f))
    if any(a["labels"].get("page_id") == page and a["labels"].get("culprit") and a["status"] == "firing" for a in m["alerts"]):
        print(f)
        break
PY
    ) && [ -n "$am_update" ]; do
      [ $SECONDS -lt $deadline ] || { echo "demo: Alertmanager sent on-call no update with the culprit within 60 s" >&2; break; }
      sleep 0.5
    done
  fi
  echo "pages for this demo's events: $(q "SELECT count(*) FROM perfwatch.pages WHERE payload->'series'->>'model' LIKE '%.$ns'")"
  echo "time from the last candidate run stored to the page raised: $(q "SELECT round(extract(epoch FROM p.created_at - r.t)::numeric, 2) || ' s'
       FROM perfwatch.pages p, (SELECT max(ingested_at) t FROM perfwatch.runs WHERE build_kind = 'rc' AND run_id LIKE '$ns-%') r
      WHERE p.page_id = '$page'")"
  echo
  python3 - "$demo_dir/oncall" "$page" <<'PY'
import glob, json, os, sys
d, page = sys.argv[1], sys.argv[2]
unreadable = []
def read_all(pattern):
    out = []
    for f in sorted(glob.glob(d + pattern)):
        try:
            out.append(json.load(open(f)))
        except ValueError:
            unreadable.append("%s (%d bytes)" % (os.path.basename(f), os.path.getsize(f)))
    return out
am = read_all("/*-alertmanager.json")
mine = [m for m in am if any(a["labels"].get("page_id") == page for a in m["alerts"])]
for i, m in enumerate(mine):
    print("Alertmanager -> on-call (%s, receiver %s, group %s, status %s):" % (
        "first notification" if i == 0 else "update %d" % i, m["receiver"], m["groupLabels"], m["status"]))
    for a in m["alerts"]:
        l, an = a["labels"], a["annotations"]
        print("  [%s %s] %s" % (a["status"], l["severity"].upper(), an.get("summary", "")))
        print("    route %s, owner %s, culprit %s" % (l["route"], l.get("owner", an.get("owner")), l.get("culprit", "not known yet")))
    print("  triage: %s" % m["alerts"][-1]["annotations"].get("triage_url"))
    print()
others = [m["groupLabels"] for m in am if m not in mine]
if others:
    print("Alertmanager -> on-call, other groups: %s" % others)
    print()
pg = read_all("/*-pager.json")
if unreadable:
    print("warning: on-call received %d notification(s) that are not JSON: %s" % (len(unreadable), ", ".join(unreadable)))
# the webhook also gets info notices and tickets (notice_id, ticket_id): only this page's versions
pg = [p for p in pg if p.get("page_id") == page]
if not pg:
    sys.exit("on-call's webhook received no version of page %s" % page)
last = pg[-1]
with open(d + "/../page-payload.json", "w") as f:
    json.dump(last["payload"], f, indent=2, ensure_ascii=False)
print("the pager's webhook -> on-call (%d versions; the latest):" % len(pg))
print("  [%s] %s%s" % (last["severity"].upper(), last["summary"], "  (false-page budget under pressure)" if last["budget_pressure"] else ""))
print("  route %s, owner %s, page %s v%d" % (last["route"], last["owner"], last["page_id"], last["version"]))
print("  payload (artifact 3; long lists cut here, whole in run/demo/page-payload.json):")
def cut(x):
    if isinstance(x, dict):
        return {k: cut(v) for k, v in x.items()}
    if isinstance(x, list):
        return [cut(v) for v in x[:3]] + (["... %d more" % (len(x) - 3)] if len(x) > 3 else [])
    return x
for line in json.dumps(cut(last["payload"]), indent=2, ensure_ascii=False).splitlines():
    print("    " + line)
PY
  triage_url=$(q "SELECT triage_url FROM perfwatch.pages WHERE page_id = '$page'")
  echo
  echo "triage link (HMAC-signed, expires in 7 days): $triage_url"
  echo "  served by the pager on 127.0.0.1:$pager_port while it runs; after the demo, serve it again with:"
  echo "  PW_PAGER_TRIAGE_KEY=\$(cat $demo_dir/triage.key) PW_HTTP_PORT=$pager_port PW_KAFKA_GROUP_ID=$ns-pager $build/services/pager/pw-pager"
}

# The page's artifact-3 payload as printed in step 8: the series, the changepoint, the bisection's culprit.
check_payload() {
  [ -s "$demo_dir/page-payload.json" ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["series"]["model"].startswith("chat-8b.")
assert d["bisection"]["culprit"] == "cl/7841917"
assert d.get("changepoint") or d.get("gate")
' "$demo_dir/page-payload.json"
}

# One page for the chat-8b event, delivered, culprit cl/7841917, owner compiler; its triage page opens.
check_page() {
  [ "$(q "SELECT count(*) FROM perfwatch.pages WHERE payload->'series'->>'model' LIKE '%.$ns'")" = 1 ] &&
    [[ "$(q "SELECT summary || ' ' || (delivered_at IS NOT NULL) || ' ' || (payload->>'owner_hint') FROM perfwatch.pages WHERE page_id = '$page'")" =~ \
      ^chat-8b\.$ns\ v6e-4\ TPOT\ \+(7\.[6-9]|8\.[0-8])%\ BLOCKING,\ culprit\ cl/7841917\ true\ compiler$ ]] &&
    local html && html=$(curl -fsS "$triage_url") && [[ $html == *'id="btn-false"'* ]]
}

# What on-call received: the first notification of the page's group is its
# headline, the event's largest spend-weighted finding (chat-8b TPOT, not
# rank-moe-110b's or the cost it derives from), owner and culprit not known
# yet; an update of the same group carries the culprit and the owner; and
# nothing of an earlier demo's or test's pages reached this demo's on-call.
check_oncall() {
  [ -n "${am_url:-}" ] || return 0
  python3 - "$demo_dir/oncall" "$page" "$ns" "$(q "SELECT string_agg(x, ' ') FROM (
      SELECT page_id x FROM perfwatch.pages WHERE pager_group = '$ns-pager' UNION ALL
      SELECT notice_id FROM perfwatch.pager_notices WHERE pager_group = '$ns-pager' UNION ALL
      SELECT incident_id FROM perfwatch.pager_incidents WHERE pager_group = '$ns-pager') y")" <<'PY'
import glob, json, re, sys
d, page, ns, own = sys.argv[1], sys.argv[2], sys.argv[3], set(sys.argv[4].split())
am = [json.load(open(f)) for f in sorted(glob.glob(d + "/*-alertmanager.json"))]
mine = [m for m in am if any(a["labels"].get("page_id") == page for a in m["alerts"])]
first = [a for a in mine[0]["alerts"] if a["status"] == "firing"][0]
assert re.fullmatch(r"chat-8b\.%s v6e-4 TPOT \+(7\.[6-9]|8\.[0-8])%% BLOCKING(, culprit cl/7841917)?" % ns,
                    first["annotations"]["summary"]), first["annotations"]["summary"]
assert first["labels"]["family"] == "chat-8b." + ns, first["labels"]
upd = [m for m in mine[1:] if any(a["status"] == "firing" and a["labels"].get("culprit") == "cl/7841917"
                                  and a["labels"].get("owner") == "compiler" for a in m["alerts"])]
assert upd or first["labels"].get("culprit") == "cl/7841917", "no update with the culprit and the owner"
assert all(m["groupKey"] == mine[0]["groupKey"] for m in mine), [m["groupKey"] for m in mine]
assert all(m["groupLabels"]["incident"] in own for m in am), [m["groupLabels"] for m in am]
pg = [json.load(open(f)) for f in sorted(glob.glob(d + "/*-pager.json"))]
assert all((p.get("page_id") or p.get("notice_id")) in own for p in pg), [p.get("page_id") or p.get("notice_id") for p in pg]
PY
}

# The bisection's culprit: cl/7841917, verified on both sides, bisected on the
# alert's primary latency series (decode B64 on v6e-4, TPOT p50), never B8,
# another platform or the cost derived from the latency.
check_bisection() {
  [ "$(q "SELECT culprit || ' ' || confidence FROM perfwatch.bisections WHERE bisection_id = 'bs-chat-8b.$ns-7841923'")" = \
    "cl/7841917 verified_both_sides" ] &&
  [ "$(q "SELECT se.platform || ' ' || se.config || ' ' || se.metric FROM perfwatch.bisections b
           JOIN perfwatch.series se USING (series_id) WHERE b.bisection_id = 'bs-chat-8b.$ns-7841923'")" = \
    "v6e-4 decode.B64.s2048.int8 tpot_p50_ms" ]
}

# demo_joined NAME PID: waits (60 s at most) for pw-NAME, started by a step with its log in
# $demo_dir/NAME.log, to hold its partitions; fails naming it when it exits or does not join.
demo_joined() {
  local deadline=$((SECONDS + 60))
  until grep -q '"msg":"kafka partitions assigned' "$demo_dir/$1.log"; do
    kill -0 "$2" 2>/dev/null || { echo "demo: pw-$1 exited" >&2; tail -5 "$demo_dir/$1.log" >&2; return 1; }
    [ $SECONDS -lt $deadline ] || { echo "demo: pw-$1 did not join its consumer group" >&2; return 1; }
    sleep 0.2
  done
}

# Step 10: the planner decides what the fleet runs (docs/planner.md). pw-sim publishes its
# inputs for 2026-06-15 .. 06-17: the simulated catalogue of 300 models (chat-8b first, on
# v6e-4), each platform's capacity, each day's CLs with the ops they touch (cl/7841917, the
# fusion cap, in the nightly of 06-17) and the sweeps (the RC cut on Monday 06-15, a nightly
# a day). The planner starts only now, in a group of its own at the topics' ends: the CLs it
# republishes with its static check's flags come after the bisection above, which read the
# scenario's. Its catalogue's models are not namespaced (plans are per sweep, "plan:" + the
# sweep id): on a stack an earlier demo used, the stored plans are the same plans.
step_planner() {
  local pw=$build/tools/perfwatch bin=$build/services/planner/pw-planner
  [ -x "$bin" ] || { echo "demo: $bin is not built" >&2; return 1; }
  "$pw" group to-end "$ns-planner" perf.catalogue.v1 perf.capacity.v1 perf.sweeps.v1 perf.compiler-cls.v1 >/dev/null
  PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-planner" PW_PLANNER_TICK=250ms "$bin" >"$demo_dir/planner.log" 2>&1 &
  local ppid=$!
  pids+=("$ppid")
  demo_joined planner "$ppid"
  local deadline
  "$sim" planner --models 300 --from 2026-06-15 --days 3 >"$demo_dir/planner-inputs.json" 2>"$demo_dir/planner-sim.log"
  echo "the planner's inputs (pw-sim planner): $(cat "$demo_dir/planner-inputs.json")"
  local sweeps="'nightly-2026-06-15', 'nightly-2026-06-16', 'nightly-2026-06-17', 'rc-2026-06-15'" got
  deadline=$((SECONDS + 180))
  until got=$(q "SELECT count(*) FROM perfwatch.plans WHERE sweep_id IN ($sweeps)") && [ "$got" = 4 ]; do
    kill -0 "$ppid" 2>/dev/null || { echo "demo: pw-planner exited" >&2; tail -5 "$demo_dir/planner.log" >&2; return 1; }
    [ $SECONDS -lt $deadline ] || { echo "demo: $got of 4 plans within 180 s" >&2; return 1; }
    sleep 0.5
  done
  echo
  echo "the plans (perf.plans.v1; perfwatch.plans):"
  psql "$PW_PG_DSN" -Xq -P pager=off -c "
    SELECT p.sweep_id, (SELECT count(*) FROM perfwatch.plan_items i WHERE i.plan_id = p.plan_id) AS items,
           round(p.chip_hours::numeric, 1) AS chip_h, p.t0_pruned || ' of ' || p.t0_candidates AS t0_pruned,
           round(p.spend_coverage::numeric * 100, 1) AS spend_pct
      FROM perfwatch.plans p WHERE p.sweep_id IN ($sweeps) ORDER BY p.day, p.kind"
  echo "chat-8b in the nightly of 2026-06-17 (cl/7841917 caps the fusion; the static check flags v6e's 256 lanes, not v5e's 128):"
  q "SELECT '  ' || platform || ' ' || config || ' x' || repeats || ' (' || tier || ')' FROM perfwatch.plan_items
      WHERE plan_id = 'plan:nightly-2026-06-17' AND model = 'chat-8b' ORDER BY platform, config"
  # the static check's result for cl/7841917 as the planner republished it (its outbox row)
  deadline=$((SECONDS + 60))
  until [ "$(q "SELECT count(*) FROM perfwatch.outbox WHERE service = 'planner' AND topic = 'perf.compiler-cls.v1'
                AND message_key = 'cl/7841917'")" -ge 1 ]; do
    [ $SECONDS -lt $deadline ] || { echo "demo: the planner did not republish cl/7841917" >&2; return 1; }
    sleep 0.5
  done
  q "SELECT encode(payload, 'base64') FROM perfwatch.outbox WHERE service = 'planner' AND topic = 'perf.compiler-cls.v1'
      AND message_key = 'cl/7841917' ORDER BY id DESC LIMIT 1" | base64 -d |
    protoc --decode=perfwatch.v1.CompilerCl -I "$repo/proto" "$repo/proto/perfwatch/v1/compiler.proto" >"$demo_dir/cl7841917.txt"
  echo "cl/7841917 as the planner republished it: perf_relevant $(grep -o 'perf_relevant: [a-z]*' "$demo_dir/cl7841917.txt" | cut -d' ' -f2 || true),"\
       "$(grep -c perf_benchmarks "$demo_dir/cl7841917.txt" || true) benchmarks flagged (all in $demo_dir/cl7841917.txt)"
  echo
  "$pw" coverage --week 2026-06-15 --json >"$demo_dir/coverage.json"
  "$pw" coverage --week 2026-06-15 --text
}

# Step 11: the production canary of the release after the fix: 12 h of live
# windows (pw-sim canary: chat-8b on TPU +1% TPOT, summarize-13b and
# chat-70b-gpu null) through pw-canary, and its decision per family.
step_canary() {
  local pw=$build/tools/perfwatch bin=$build/services/canary/pw-canary
  [ -x "$bin" ] || { echo "demo: $bin is not built" >&2; return 1; }
  rollout="rollout-$ns"
  "$pw" group to-end "$ns-canary" perf.canary.v1 >/dev/null
  PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-canary" "$bin" >"$demo_dir/canary.log" 2>&1 &
  local cpid=$!
  pids+=("$cpid")
  demo_joined canary "$cpid"
  local deadline
  "$sim" canary --rollout "$rollout" --hours 12 >"$demo_dir/canary-sim.json" 2>"$demo_dir/canary-sim.log"
  echo "the canary's live windows (pw-sim canary): $(cat "$demo_dir/canary-sim.json")"
  local got
  deadline=$((SECONDS + 180))
  until got=$(q "SELECT count(*) FROM perfwatch.canary_families WHERE rollout_id = '$rollout' AND final") && [ "$got" = 3 ]; do
    kill -0 "$cpid" 2>/dev/null || { echo "demo: pw-canary exited" >&2; tail -5 "$demo_dir/canary.log" >&2; return 1; }
    [ $SECONDS -lt $deadline ] || { echo "demo: $got of 3 canary decisions within 180 s" >&2; return 1; }
    sleep 0.5
  done
  echo
  "$pw" canary show --rollout "$rollout"
  # the rollback paged by this demo's pager (docs/pager.md, "Canary rollbacks")
  rollback_page="pg-rollback-$rollout-chat-8b"
  deadline=$((SECONDS + 60))
  until [ "$(q "SELECT count(*) FROM perfwatch.pages WHERE page_id = '$rollback_page' AND delivered_at IS NOT NULL")" = 1 ]; do
    [ $SECONDS -lt $deadline ] || { echo "demo: the canary's rollback was not paged within 60 s" >&2; return 1; }
    sleep 0.5
  done
  echo
  echo "on-call's page for the rollback: $(q "SELECT severity || ' to ' || route || ': ' || summary FROM perfwatch.pages WHERE page_id = '$rollback_page'")"
  echo "  its triage page plots the confidence sequence: $(q "SELECT triage_url FROM perfwatch.pages WHERE page_id = '$rollback_page'")"
}

# The waiver (§8's follow-up): chat-8b's fix needs weeks and the release must ship, so
# release tooling sends the RC again for chat-8b (evaluation 2) with a waiver that pins it to
# N-1 — owner, expiry and the model team's sign-off; the gate stores the pin and lists it.
# It is sent at the end of the demo, not right after the RC's verdict: a later evaluation that
# waives chat-8b resolves its page (the pager's rule), which step 9 shows. By now the
# baseliner has accepted the nightlies' shift, so evaluation 2's own verdict may be PASS;
# evaluation 1 is the RC's BLOCKING verdict the waiver answers (test_canary_pin.sh shows
# BLOCKING turned WAIVED and PINNED in one release).
step_waiver() {
  local pw=$build/tools/perfwatch base cand fams=() f deadline got
  base=$(q "SELECT baseline_release FROM perfwatch.gate_evaluations WHERE release_id = '$rel' AND evaluation = 1")
  cand=$(q "SELECT candidate_build_id FROM perfwatch.gate_evaluations WHERE release_id = '$rel' AND evaluation = 1")
  # chat-8b alone: the other families' verdicts stand as evaluation 1 gave them
  fams+=(--family "chat-8b.$ns")
  # the same tier repeats; the deadline passed like evaluation 1's: decided on the runs there are
  for f in $(q "SELECT tier || '=' || n || ':' || mde_pct FROM perfwatch.gate_tier_repeats
                WHERE release_id = '$rel' AND evaluation = 1"); do
    fams+=(--tier "$f")
  done
  pin_artifact="serving/chat-8b.$ns/$base.aot"
  "$pw" gate request --release "$rel" --evaluation 2 --candidate "$cand" --baseline "$base" "${fams[@]}" --deadline-s 1 \
    --waive "chat-8b.$ns:chat-serving-oncall:+604800:wv-pin-chat-8b.$ns" \
    --pin "chat-8b.$ns:chat-models-lead:$pin_artifact"
  deadline=$((SECONDS + 180))
  until [ "$(q "SELECT status FROM perfwatch.gate_evaluations WHERE release_id = '$rel' AND evaluation = 2")" = done ]; do
    [ $SECONDS -lt $deadline ] || { echo "demo: evaluation 2 of $rel not decided within 180 s" >&2; return 1; }
    sleep 0.5
  done
  "$pw" gate show "$rel" | grep -E "family verdict|^pin: |^release verdict|^summary"
}

# After the canary of the next release: the release rolled to canary after the waiver: the canary of that release (pw-sim
# canary, its families named as this replay's) keeps chat-8b PINNED to N-1 while the others
# are promoted.
step_pinned() {
  local pw=$build/tools/perfwatch base got deadline
  step_waiver
  base=$(q "SELECT baseline_release FROM perfwatch.gate_evaluations WHERE release_id = '$rel' AND evaluation = 1")
  pinned_rollout="rollout-pinned-$ns"
  "$sim" canary --rollout "$pinned_rollout" --hours 12 --release "$rel" --previous "$base" --family-suffix ".$ns" \
    >"$demo_dir/canary-pinned-sim.json" 2>>"$demo_dir/canary-sim.log"
  deadline=$((SECONDS + 180))
  until got=$(q "SELECT count(*) FROM perfwatch.canary_families WHERE rollout_id = '$pinned_rollout'
                 AND (final OR pinned_at IS NOT NULL) AND windows = 432") && [ "$got" = 3 ]; do
    [ $SECONDS -lt $deadline ] || { echo "demo: $got of 3 families of $pinned_rollout settled within 180 s" >&2; return 1; }
    sleep 0.5
  done
  echo
  "$pw" canary show --rollout "$pinned_rollout"
}

# chat-8b BLOCKING on the RC (evaluation 1), the pin stored with the release and listed by
# gate show; the canary of that release keeps chat-8b PINNED to N-1 (owner, sign-off,
# expiry on perf.rollouts.v1) and promotes the others.
check_pinned() {
  [ "$(q "SELECT verdict FROM perfwatch.gate_family_results WHERE release_id = '$rel' AND evaluation = 1
           AND family = 'chat-8b.$ns'")" = blocking ] &&
    "$build/tools/perfwatch" gate show "$rel" | grep -F "pin: chat-8b.$ns PINNED to N-1 " >/dev/null &&
    [ "$(q "SELECT string_agg(family || ' ' || CASE WHEN pinned_at IS NOT NULL AND NOT final THEN 'PINNED ' || pin_owner
              || ' ' || pin_signed_off_by || ' ' || pinned_artifact ELSE decision END, ', ' ORDER BY family)
            FROM perfwatch.canary_families WHERE rollout_id = '$pinned_rollout'")" = \
      "chat-70b-gpu.$ns PROMOTE, chat-8b.$ns PINNED chat-serving-oncall chat-models-lead $pin_artifact, summarize-13b.$ns PROMOTE" ] &&
    [ "$(q "SELECT count(*) FROM perfwatch.outbox WHERE service = 'canary' AND topic = 'perf.rollouts.v1'
             AND message_key LIKE '$pinned_rollout/%'")" = 3 ]
}

# The canary rolls chat-8b (+1% TPOT) back to its pre-staged N-1 artifact and promotes the
# null families, each decision on perf.rollouts.v1 through the outbox.
check_canary() {
  [ "$(q "SELECT string_agg(family || ' ' || decision, ', ' ORDER BY family) FROM perfwatch.canary_families
           WHERE rollout_id = '$rollout' AND final")" = "chat-70b-gpu PROMOTE, chat-8b ROLLBACK, summarize-13b PROMOTE" ] &&
    [ "$(q "SELECT rollback_artifact FROM perfwatch.canary_families WHERE rollout_id = '$rollout' AND family = 'chat-8b'")" = \
      serving/chat-8b/xla-rc-2026-06-15.aot ] &&
    [ "$(q "SELECT count(*) FROM perfwatch.outbox WHERE service = 'canary' AND topic = 'perf.rollouts.v1'
             AND message_key LIKE '$rollout/%'")" = 3 ]
}

# The pager pages the rollback once (critical, to the triage rotation, with the canary's
# evidence) and nothing for the promoted families; the triage page plots the sequence.
check_canary_page() {
  [ "$(q "SELECT count(*) FROM perfwatch.pages WHERE pager_group = '$ns-pager' AND payload->'canary'->>'rollout_id' = '$rollout'")" = 1 ] &&
    [ "$(q "SELECT severity || ' ' || route || ' ' || (payload->'canary'->>'metric') || ' ' || (payload->'canary'->>'rollback_artifact')
             FROM perfwatch.pages WHERE page_id = '$rollback_page'")" = \
      "critical ml-perf-triage tpot serving/chat-8b/xla-rc-2026-06-15.aot" ] &&
    local html && html=$(curl -fsS "$(q "SELECT triage_url FROM perfwatch.pages WHERE page_id = '$rollback_page'")") &&
    [[ $html == *'class="cs-effect"'* && $html == *'data-same="true"'* ]]
}

# The planner's nightly of 2026-06-17 runs chat-8b on v6e-4 decode B64 and not on v5e-8,
# because cl/7841917 touches that fusion: the planner's republished cl/7841917 is
# perf-relevant and names the benchmark, not v5e-8's nor a prefill one.
check_planner_nightly() {
  local items="SELECT count(*) FROM perfwatch.plan_items WHERE plan_id = 'plan:nightly-2026-06-17' AND model = 'chat-8b'
               AND config = 'decode.B64.s2048.int8'"
  [ "$(q "$items AND platform = 'v6e-4' AND tier = 'T0'")" = 1 ] &&
    [ "$(q "$items AND platform = 'v5e-8'")" = 0 ] &&
    grep -q 'perf_relevant: true' "$demo_dir/cl7841917.txt" &&
    grep -q 'perf_benchmarks: "chat-8b/v6e-4/decode.B64.s2048.int8"' "$demo_dir/cl7841917.txt" &&
    ! grep -q 'perf_benchmarks: "chat-8b/v5e-8/decode.B64.s2048.int8"' "$demo_dir/cl7841917.txt" &&
    ! grep -q 'perf_benchmarks: "chat-8b/v6e-4/prefill' "$demo_dir/cl7841917.txt"
}

# perfwatch coverage --json for the week of 2026-06-15: the RC's spend coverage (>= 95%), the
# week's chip-hours with the lines per tier summing to them, at most 6.5% of the naive 72,000.
check_coverage() {
  python3 - "$demo_dir/coverage.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["week"] == "2026-06-15" and c["rc"] == "rc-2026-06-15", c
assert c["spend_coverage"] >= 0.95, c["spend_coverage"]
assert c["chip_hours"] > 0 and c["naive_chip_hours"] == 72000, c
lines = sum(v["chip_hours"] for v in c["lines"].values())
assert abs(lines - c["chip_hours"]) < 1e-6, (lines, c["chip_hours"])
assert c["chip_hours"] / c["naive_chip_hours"] <= 0.065, c["naive_ratio"]
PY
}

# expect WHAT CMD...: runs CMD; a failure is remembered under WHAT.
failed_checks=()
expect() {
  local what=$1
  shift
  if "$@"; then
    echo "  ok       $what"
  else
    echo "  MISSING  $what"
    failed_checks+=("$what")
  fi
}

gate_json() { "$build/tools/perfwatch" gate show "$rel" --evaluation 1 --json; }

# The worked example's gate verdict: chat-8b BLOCKING with decode B64 and B8
# on v6e-4 regressed, v5e-8 and prefill within noise or under-powered (artifact 7).
check_gate() {
  gate_json | python3 -c '
import json, sys
ns = sys.argv[1]
d = json.load(sys.stdin)
fam = {x["family"].replace("." + ns, ""): x for x in d["families"]}
chat = fam["chat-8b"]
assert chat["verdict"] == "blocking", "chat-8b is " + chat["verdict"]
s = {(x["platform"], x["config"], x["metric"]): x for x in chat["series"]}
for cfg, lo, hi in (("decode.B64.s2048.int8", 7.6, 8.8), ("decode.B8.s2048.int8", 6.8, 8.2)):
    x = s[("v6e-4", cfg, "tpot_p50_ms")]
    assert x["verdict"] == "blocking" and lo <= x["delta_pct"] <= hi, (cfg, x["verdict"], x["delta_pct"])
quiet = [k for k in s if k[0] == "v5e-8" or k[1].startswith("prefill")]
assert quiet, "no v5e-8 or prefill series"
# a tail metric whose noise needs more than the 5 runs of the RC for the 1% MDE is
# under-powered (nothing significant, said as such), not within noise (§4.5)
for k in quiet:
    assert s[k]["verdict"] in ("pass", "trend", "quarantined", "under_powered"), (k, s[k]["verdict"])
' "$ns"
}

# The watcher pins the B64 TPOT shift to the nightly of 2026-06-17 and the CL
# range cl/7841885..cl/7841923 (artifact 3's changepoint block).
check_changepoint() {
  [ "$(q "SELECT count(*) FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id)
           WHERE s.model = 'chat-8b.$ns' AND s.platform = 'v6e-4' AND s.config = 'decode.B64.s2048.int8'
             AND s.metric = 'tpot_p50_ms' AND c.day = '2026-06-17' AND c.direction = 'regression'
             AND c.last_clean_cl = 'cl/7841885' AND c.first_shifted_cl = 'cl/7841923'")" -ge 1 ]
}

# Step 7: the demo checks its own result.
step_check() {
  if [ "$scenario" != worked-example ]; then
    echo "the expected outcome is written down for worked-example only; nothing to check for $scenario"
    return 0
  fi
  expect "gate: chat-8b BLOCKING, decode B64 and B8 on v6e-4 regressed, v5e-8 and prefill within noise or under-powered" check_gate
  expect "watcher: chat-8b v6e-4 decode B64 TPOT changepoint on 2026-06-17, cl/7841885..cl/7841923" check_changepoint
  expect "bisector: decode B64 on v6e-4 TPOT p50 bisected, culprit cl/7841917, verified on both sides" check_bisection
  expect "attributor: B64 TPOT fusion.1423 -> 1423a/softmax.88/1423b, cap 1.5 MB, +6.5% predicted of +8.2%, v5e-8 and prefill explained, compiler" check_attribution
  expect "pager: ONE page \"chat-8b v6e-4 TPOT +8.2% BLOCKING, culprit cl/7841917\", delivered, owner compiler, its triage page served" check_page
  expect "on-call: the page's artifact-3 payload printed (series, changepoint or gate result, culprit cl/7841917)" check_payload
  expect "on-call: first notification \"chat-8b v6e-4 TPOT +8.2% BLOCKING\", then the culprit and owner as an update of its group; no earlier demo's pages" check_oncall
  expect "planner: the nightly of 2026-06-17 runs chat-8b on v6e-4 decode B64 (not v5e-8) because cl/7841917 touches its fusion" check_planner_nightly
  expect "planner: perfwatch coverage --json, week of 2026-06-15: >= 95% of spend gated, chip-h lines summing to the total, <= 6.5% of naive" check_coverage
  expect "canary: chat-8b (+1% TPOT) ROLLBACK to serving/chat-8b/xla-rc-2026-06-15.aot, summarize-13b and chat-70b-gpu PROMOTE, each once on perf.rollouts.v1" check_canary
  expect "pager: the canary's chat-8b ROLLBACK paged once (critical, ml-perf-triage, its evidence), the promotions not; its triage page plots the sequence" check_canary_page
  expect "the release rolled to canary after a waiver: chat-8b (BLOCKING on the RC) pinned to N-1 (owner, sign-off, artifact), the others promoted, each once on perf.rollouts.v1" check_pinned
  if [ ${#failed_checks[@]} -gt 0 ]; then
    echo "demo: ${#failed_checks[@]} expected result(s) did not come out:" >&2
    printf 'demo:   %s\n' "${failed_checks[@]}" >&2
    return 1
  fi
  echo "every expected result came out"
}

# What to do next: the triage page while the pager still serves it, and the
# CLI commands (perfwatch reads run/stack.env's variables; they are exported here).
next_steps() {
  local pw=$build/tools/perfwatch
  echo
  echo "== what to look at next =="
  if [ -n "${triage_url:-}" ]; then
    echo "on-call's page: $(q "SELECT summary FROM perfwatch.pages WHERE page_id = '$page'")"
    if [ -t 0 ]; then
      echo "  triage page (served by this demo's pager until you press Enter): $triage_url"
    else
      echo "  triage page: $triage_url"
      echo "    (served while the demo ran; step 9 says how to serve it again)"
    fi
  fi
  echo "  perfwatch reads the stack's variables from $run_dir/stack.env when run from the checkout"
  echo "  $pw gate show $rel [--json]"
  [ -z "${rollout:-}" ] || echo "  $pw canary show --rollout $rollout [--json]"
  [ -z "${pinned_rollout:-}" ] || echo "  $pw canary show --rollout $pinned_rollout [--json]"
  [ -z "${b64_alert:-}" ] || echo "  $pw attribution show $b64_alert"
  [ -z "${bisection:-}" ] || echo "  $pw bisect show $bisection"
  echo "  $pw series show 'chat-8b.$ns/hlo:9f31c2ab.$ns/v6e-4/decode.B64.s2048.int8/tpot_p50_ms' --text"
  echo "  the services' logs and what on-call received: $demo_dir/"
  if [ -n "${triage_url:-}" ] && [ -t 0 ]; then
    read -r -p "press Enter to stop the services (the stack keeps running) " _ || true
  fi
}

STEPS=(
  "build:step_build"
  "start the dev stack:step_stack"
  "start the services:step_services"
  "replay the $scenario scenario:step_replay"
  "baselines and the gate's verdict on the RC:step_results"
  "the bisector's culprit for the chat-8b event:step_bisection"
  "eleven more nightlies, and the watcher's changepoints:step_nightlies"
  "the attributor's per-op diff, HLO diff and roofline check:step_attribution"
  "the page as on-call receives it, and the triage link:step_page"
  "the planner's plans for the worked example's days, and their coverage:step_planner"
  "the production canary of the next release, family by family:step_canary"
  "the release rolled to canary after a waiver, chat-8b pinned to N-1:step_pinned"
  "check the demo's own result:step_check"
)

# A step is called as a plain command, never as a condition, so that errexit
# holds inside it: the first command that fails ends the demo, and this trap
# says where.
current_step=""
on_error() {
  local rc=$? cmd=$BASH_COMMAND
  trap - ERR
  if [ -n "$current_step" ]; then
    echo "demo: step $current_step failed (exit status $rc) at: $cmd" >&2
    echo "demo: the stack may be partly up; stop it with: make stack-stop" >&2
  fi
  exit "$rc"
}
trap on_error ERR

total=${#STEPS[@]}
n=0
for s in "${STEPS[@]}"; do
  n=$((n + 1))
  title=${s%%:*}
  fn=${s##*:}
  echo "== demo step $n/$total: $title =="
  current_step="$n/$total ($title)"
  "$fn"
done
current_step=""
next_steps
stop_services
echo
echo "demo: done. The services are stopped; the stack keeps running; stop it with: make stack-stop"
echo "      (or $stack stop)"

