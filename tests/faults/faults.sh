#!/usr/bin/env bash
# faults.sh: the fault-injection harness (issue 19). It replays a fleet
# simulator scenario through every service (ingester, baseliner, watcher,
# gate, bisector, attributor, pager, with pw-sim answering the bisector's
# build jobs) twice on the running dev stack: once uninterrupted (the
# reference) and once while faults are injected at points drawn from a seed,
# then compares what the two runs stored, table by table, and prints the
# figures: faults injected by kind, rows compared per table, differences.
# Any difference, a service that does not come back, an outbox left with
# unpublished rows or a readiness that stays 503 after a fault fails the run.
#
# The faults (docs/operations.md, "Fault injection"):
#   kill9:SERVICE   kill -9 of the service, restarted at once (every service)
#   pg-restart      PostgreSQL stopped (fast shutdown) and started again
#   redis-stop      Redis shut down for PW_FAULTS_REDIS_DOWN seconds (20), then started
#   sigstop:SERVICE SIGSTOP past the consumer's session timeout (6 s) for 10 s, then SIGCONT
#   broker-restart  the dev stack's Kafka node killed -9, down PW_FAULTS_BROKER_DOWN
#                   seconds (12), and started again: it keeps its log on disk, so what it
#                   acknowledged survives, and the faulted run must equal the reference
#                   like after any other fault; every service's /readyz must turn 503
#                   while no broker answers (service.kafka.down.after, 5 s), and pw-sim,
#                   replaying meanwhile, must deliver every run once the broker is back
#
# The two runs are namespaced (pw-sim --namespace): each has its own series,
# run ids and consumer groups (starting at the topics' ends), so they share
# the stack without seeing each other; the namespace is replaced by "NS"
# before the comparison.
#
#   tests/faults/faults.sh [--seed N] [--models N] [--rounds N] [--broker yes|no]
#     --seed    the seed of the fault schedule (default: drawn and printed);
#               the same seed gives the same faults in the same order at the same delays
#     --models  pw-sim --models: the scale of worked-example (56: 227,700 samples)
#     --rounds  how many times every fault kind is injected (default 1)
#     --broker  whether the schedule holds the broker-restart fault (default yes)
# Environment: what tests/integration/run.sh gives a test (PW_BUILD, PW_PG_DSN,
# PW_REDIS_ADDR, PW_KAFKA_BOOTSTRAP_SERVERS, PW_RUN_DIR), PW_FAULTS_RATE (the
# replay's runs per second in both runs, default: each phase lasts about as
# long as its faults; a service that reports data loss, messages the broker
# deleted before its group read them, fails the run), PW_FAULTS_GAP (the largest delay
# between two faults in seconds, default 12), PW_FAULTS_HTTP_BASE (first of the
# services' fixed HTTP ports, default the PostgreSQL port + 150).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN PW_REDIS_ADDR PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR
need_tools psql curl python3 redis-cli

seed=""
models=56
rounds=1
broker=yes
while [ $# -gt 0 ]; do
  case $1 in
    --seed) seed=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --broker) broker=$2; shift 2 ;;
    *) echo "usage: tests/faults/faults.sh [--seed N] [--models N] [--rounds N] [--broker yes|no]" >&2; exit 2 ;;
  esac
done
[ -n "$seed" ] || seed=$(( 10#$(date +%s%N | tail -c 6) % 32768 ))
for v in seed models rounds; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "faults: --$v must be a number" >&2; exit 2; }
  printf -v "$v" %d "$((10#${!v}))"
done
case $broker in yes | no) ;; *) echo "faults: --broker yes|no" >&2; exit 2 ;; esac

gap=${PW_FAULTS_GAP:-12}
redis_down=${PW_FAULTS_REDIS_DOWN:-20}
broker_down=${PW_FAULTS_BROKER_DOWN:-12}
pg_port=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' <<<"$PW_PG_DSN")
http_base=${PW_FAULTS_HTTP_BASE:-$((pg_port + 150))}
stack=$repo/deploy/dev/stack.sh
sim=$PW_BUILD/tools/simulator/pw-sim
pw=$PW_BUILD/tools/perfwatch
scn=$repo/tools/simulator/scenarios/worked-example.scn
services=(ingester baseliner watcher gate attributor bisector pager)
need_bins "$sim" "$pw"
for s in "${services[@]}"; do need_bins "$PW_BUILD/services/$s/pw-$s"; done

echo "faults: seed $seed (reproduce with: tests/faults/faults.sh --seed $seed --models $models --rounds $rounds --broker $broker)"
RANDOM=$seed
tag=f$seed$(date +%s | tail -c 5)
work=$(mktemp -d "$PW_RUN_DIR/faults.XXXXXX")
echo "faults: logs and snapshots in $work"
t_start=$SECONDS

declare -A pid=() port=() fault_count=()
cur_run=""
hook_pid=""
cleanup() {
  local p
  for p in "${pid[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pid[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -z "$hook_pid" ] || { kill -TERM "$hook_pid" 2>/dev/null || true; wait "$hook_pid" 2>/dev/null || true; }
  # a fault may have left a server of the stack down
  "$stack" start "$PW_BUILD" >>"$work/stack.log" 2>&1 || true
}
trap cleanup EXIT
die() {
  echo "faults: FAIL: $*" >&2
  local l
  for l in "$work"/*/*.log; do [ -f "$l" ] && { echo "--- $l" >&2; tail -n 8 "$l" >&2; }; done
  exit 1
}
say() { echo "faults: [$(printf '%4d' $((SECONDS - t_start))) s] $*"; }

# on-call's webhook: every POST is a line "path id version model" in $work/hook.txt
# (id: the page's, ticket's or notice's; a line twice is a delivery repeated)
hook_port=$((http_base + 20))
python3 - "$hook_port" "$work/hook.txt" >"$work/hook.log" 2>&1 <<'PY' &
import http.server, json, sys
port, out = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            d = json.loads(body)
            model = ((d.get("payload") or {}).get("series") or {}).get("model", "-")
            # a page (page_id, version), a P1 ticket or an info notice (their ids, no version)
            what = d.get("page_id") or d.get("ticket_id") or d.get("notice_id") or "-"
            line = "%s %s %s %s\n" % (self.path, what, d.get("version", "-"), model)
        except Exception:
            line = "%s - -\n" % self.path
        with open(out, "a") as f:
            f.write(line)
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
hook_pid=$!
triage_key=$(python3 -c 'import secrets; print(secrets.token_hex(16))')

# --- the services of one run -------------------------------------------------

# svc_start RUN NAME: starts pw-NAME of run RUN (namespace $ns) on its fixed port
svc_start() {
  local run=$1 name=$2 i
  for i in "${!services[@]}"; do [ "${services[$i]}" = "$name" ] && break; done
  port[$name]=$((http_base + i))
  if [ "$name" = answer ]; then
    port[$name]=$((http_base + 9))
    PW_HTTP_PORT=${port[$name]} PW_KAFKA_GROUP_ID="$ns-answer" PW_KAFKA_SESSION_TIMEOUT_MS=6000 \
      PW_KAFKA_HEARTBEAT_INTERVAL_MS=1000 "$sim" answer "$scn" --namespace "$ns" --models "$models" \
      >>"$work/$run/answer.log" 2>&1 &
  else
    # a killed or stopped member holds its partitions until its session times
    # out: 6 s keeps the harness short; the gate waits 180 s for late data, as in the demo.
    # Accepted shifts are off: their re-baseline jobs are named by a hash of the
    # namespaced series (different in each run, and so their simulated runs),
    # which the comparison cannot map back; test_baseliner_accept covers them.
    PW_BASELINER_ACCEPT_AFTER_NIGHTLIES=0 \
    PW_HTTP_PORT=${port[$name]} PW_KAFKA_GROUP_ID="$ns-$name" PW_KAFKA_SESSION_TIMEOUT_MS=6000 \
      PW_KAFKA_HEARTBEAT_INTERVAL_MS=1000 PW_GATE_MIN_WAIT=180s PW_PAGER_TRIAGE_KEY="$triage_key" \
      PW_PAGER_WEBHOOK_URL="http://127.0.0.1:$hook_port/pager" PW_PAGER_TICK=250ms \
      PW_PAGER_BUDGET_PER_WEEK=$budget PW_SERVICE_STUCK_AFTER=15s \
      "$PW_BUILD/services/$name/pw-$name" >>"$work/$run/$name.log" 2>&1 &
  fi
  pid[$name]=$!
}
# joined RUN NAME N: waits (120 s) until NAME's log holds N partition assignments
joined() {
  local deadline=$((SECONDS + 120))
  until [ "$(assigned "$1" "$2")" -ge "$3" ]; do
    kill -0 "${pid[$2]}" 2>/dev/null || die "pw-$2 exited: $(tail -n 3 "$work/$1/$2.log")"
    [ $SECONDS -lt $deadline ] || die "pw-$2 did not join its group within 120 s"
    sleep 0.3
  done
}
assigned() { grep -c '"msg":"kafka partitions assigned' "$work/$1/$2.log" 2>/dev/null || true; }
# reap RUN: a service that exited is started again, as its orchestrator would
# (restart: always in compose, Kubernetes' Deployments); each exit is counted
# and its last error line kept in $work/exits.txt: a figure, and a finding
reap() {
  local s rc
  for s in "${!pid[@]}"; do
    kill -0 "${pid[$s]}" 2>/dev/null && continue
    rc=0; wait "${pid[$s]}" 2>/dev/null || rc=$?
    echo "$1 pw-$s exit $rc: $(grep '"level":"error"' "$work/$1/$s.log" | tail -n 1 | cut -c1-300)" >>"$work/exits.txt"
    fault_count[service-exit]=$((${fault_count[service-exit]:-0} + 1))
    say "pw-$s EXITED (status $rc): started again; see $work/exits.txt"
    svc_start "$1" "$s"
  done
}
ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:${port[$1]}/readyz")" = 200 ]; }
# all_ready SECONDS: every service answers /readyz 200 within SECONDS; else
# not_ready names those that did not. Not to be run in a subshell: reap
# restarts services, and pid[] must see it.
not_ready=""
all_ready() {
  local deadline=$((SECONDS + $1)) s
  while :; do
    not_ready=""
    reap "$cur_run"
    for s in "${services[@]}"; do ready "$s" || not_ready+="$s "; done
    [ -z "$not_ready" ] && return 0
    if [ $SECONDS -ge $deadline ]; then
      # say why: each one's /readyz answer
      for s in $not_ready; do
        not_ready+="; $s: $(curl -s --max-time 2 "http://127.0.0.1:${port[$s]}/readyz" | tr -s '\n' ' ' | head -c 300)"
      done
      return 1
    fi
    sleep 1
  done
}

groups_topics=(
  "ingester perf.runs.v1"
  "baseliner perf.points.v1 perf.fleet-changes.v1"
  "watcher perf.points.v1 perf.fleet-changes.v1 perf.baselines.v1"
  "gate perf.gate.requests.v1"
  "attributor perf.alerts.v1 perf.bisections.v1"
  "bisector perf.alerts.v1 perf.compiler-cls.v1"
  "answer perf.bisect.jobs.v1"
  "pager perf.alerts.v1 perf.gate.verdicts.v1 perf.changepoints.v1 perf.bisections.v1 perf.attributions.v1 perf.rollouts.v1"
)

# run_setup RUN: namespace, groups at the topics' ends, spend table, budget
run_setup() {
  local run=$1 g
  ns=$tag$run
  cur_run=$run
  mkdir -p "$work/$run"
  for g in "${groups_topics[@]}"; do
    # shellcheck disable=SC2086
    "$pw" group to-end "$ns-${g%% *}" ${g#* } >/dev/null || die "group to-end $ns-${g%% *}"
  done
  q "INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES
       ('chat-8b.$ns', 0.078, 'top', 'faults'), ('rank-moe-110b.$ns', 0.05, 'top', 'faults')
     ON CONFLICT (model) DO NOTHING" >/dev/null
  # as in the demo: every replay has the same CLs, so another run's open
  # incident would be this run's event; and the false-page budget is fleet-wide
  q "UPDATE perfwatch.pager_incidents SET open = false WHERE open" >/dev/null
  budget=$((5 + $(q "SELECT count(*) - count(*) FILTER (WHERE t.outcome = 'true_regression')
                       FROM perfwatch.pages p LEFT JOIN perfwatch.triage_verdicts t USING (page_id)
                      WHERE p.incident_id IS NOT NULL AND p.created_at > now() - interval '7 days'")))
  local s
  for s in "${services[@]}" answer; do svc_start "$run" "$s"; done
  for s in "${services[@]}" answer; do joined "$run" "$s" 1; done
  all_ready 60 || die "not every service ready after the start: $not_ready"
  say "$run: namespace .$ns, the seven services and pw-sim answer joined their groups"
}

run_stop() {
  local p
  # the gate weighs families by the spend table: this run's rows must not count in the next
  q "DELETE FROM perfwatch.spend_weights WHERE model LIKE '%.$ns'" >/dev/null
  for p in "${pid[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pid[@]}"; do wait "$p" 2>/dev/null || true; done
  pid=()
}

# --- the faults ----------------------------------------------------------------

pg_data=$PW_RUN_DIR/pg/data
as_pg() { if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
restart_stack() {
  "$stack" start "$PW_BUILD" >>"$work/stack.log" 2>&1 || die "stack.sh start after a fault failed (see $work/stack.log)"
}
# readiness_during SECONDS: which services answered /readyz non-200 at least once meanwhile
readiness_during() {
  local deadline=$((SECONDS + $1)) s
  local -A down=()
  while [ $SECONDS -lt $deadline ]; do
    for s in "${services[@]}"; do ready "$s" || down[$s]=1; done
    sleep 1
  done
  echo "${!down[*]}"
}

inject() {
  local run=$1 f=$2 s n
  reap "$run"
  fault_count[${f%%:*}]=$((${fault_count[${f%%:*}]:-0} + 1))
  case $f in
    kill9:*)
      s=${f#kill9:}
      n=$(assigned "$run" "$s")
      kill -KILL "${pid[$s]}" 2>/dev/null || true
      wait "${pid[$s]}" 2>/dev/null || true
      svc_start "$run" "$s"
      # not waited for: the next fault may land while it rejoins; the end of
      # the run checks that it caught up and is ready
      say "kill -9 pw-$s (it had joined its group $n times): restarted" ;;
    sigstop:*)
      s=${f#sigstop:}
      kill -STOP "${pid[$s]}"
      sleep 10
      kill -CONT "${pid[$s]}"
      say "SIGSTOP pw-$s for 10 s (session timeout 6 s), resumed" ;;
    pg-restart)
      as_pg /usr/lib/postgresql/15/bin/pg_ctl -D "$pg_data" -m fast -w stop >>"$work/stack.log" 2>&1 ||
        die "pg_ctl stop failed"
      s=$(readiness_during 8)
      restart_stack
      say "PostgreSQL stopped 8 s and restarted; /readyz not 200 meanwhile: ${s:-none}"
      echo "pg-restart ${s:-none}" >>"$work/readiness.txt" ;;
    redis-stop)
      redis-cli -h "${PW_REDIS_ADDR%:*}" -p "${PW_REDIS_ADDR##*:}" shutdown nosave >/dev/null 2>&1 || true
      s=$(readiness_during "$redis_down")
      restart_stack
      say "Redis down ${redis_down} s and started again; /readyz not 200 meanwhile: ${s:-none}"
      echo "redis-stop ${s:-none}" >>"$work/readiness.txt" ;;
    broker-restart)
      local bp
      bp=$(cat "$PW_RUN_DIR/kafka/kafka.pid")
      kill -KILL "$bp"
      s=$(readiness_during "$broker_down")
      restart_stack
      say "Kafka killed -9, down $broker_down s, started again on the same port; /readyz not 200 meanwhile: ${s:-none}"
      echo "broker-restart ${s:-none}" >>"$work/readiness.txt"
      # every service must have said so: no broker, not ready
      local missing=""
      for n in "${services[@]}"; do [[ " $s " == *" $n "* ]] || missing+="$n "; done
      [ -z "$missing" ] || die "broker-restart: /readyz stayed 200 with no broker for $broker_down s: $missing" ;;
    *) die "unknown fault $f" ;;
  esac
  # after a server of the stack came back, every service is ready again within 90 s
  case $f in
    pg-restart | redis-stop | broker-restart)
      all_ready 90 || die "after $f: /readyz not 200 within 90 s: $not_ready" ;;
  esac
}

# the schedule: every kind $rounds times, shuffled, each after a delay of 2..$gap s
schedule=()
  for ((r = 0; r < rounds; r++)); do
  for s in "${services[@]}"; do schedule+=("kill9:$s"); done
  schedule+=(pg-restart redis-stop)
  [ "$broker" = no ] || schedule+=(broker-restart)
  # the consumers stopped past their session timeout: one per round, drawn
  schedule+=("sigstop:${services[$((RANDOM % ${#services[@]}))]}")
done
for ((i = ${#schedule[@]} - 1; i > 0; i--)); do
  j=$((RANDOM % (i + 1)))
  t=${schedule[$i]}; schedule[$i]=${schedule[$j]}; schedule[$j]=$t
done
delays=()
for ((i = 0; i < ${#schedule[@]}; i++)); do delays+=($((2 + RANDOM % (gap - 1)))); done
# the faults after the gate's verdict: the second half
split=$(((${#schedule[@]} + 1) / 2))
# each phase's replay is paced to last about as long as its faults (their
# delays and ~1 s each), so that they land while input is still arriving
t1=0 t2=0
for ((i = 0; i < ${#schedule[@]}; i++)); do
  if [ $i -lt $split ]; then t1=$((t1 + delays[i] + 1)); else t2=$((t2 + delays[i] + 1)); fi
done
echo "faults: schedule (seed $seed): $(for ((i = 0; i < ${#schedule[@]}; i++)); do printf '+%ss %s  ' "${delays[$i]}" "${schedule[$i]}"; done)"

# inject_range RUN FROM TO: the faults FROM..TO-1 of the schedule, each after its delay
inject_range() {
  local i
  for ((i = $2; i < $3; i++)); do
    sleep "${delays[$i]}"
    inject "$1" "${schedule[$i]}"
  done
}

# --- one run -----------------------------------------------------------------

days=$(awk '$1 == "days" { print $2 }' "$scn")
start_day=$(awk '$1 == "start" { print $2 }' "$scn")
since=$(date -u -d "$start_day + $days days" +%Y-%m-%dT00:00:00Z)

# the groups' lag is 0 and every outbox is empty, twice in a row 3 s apart
quiesce() {
  local deadline=$((SECONDS + $1)) g ok streak=0 pending
  while :; do
    ok=1
    reap "$cur_run"
    for g in "${groups_topics[@]}"; do
      # shellcheck disable=SC2086
      "$pw" group lag "$ns-${g%% *}" ${g#* } >/dev/null 2>&1 || { ok=0; break; }
    done
    pending=$(q "SELECT count(*) FROM perfwatch.outbox WHERE published_at IS NULL")
    [ "$pending" = 0 ] || ok=0
    if [ $ok = 1 ]; then streak=$((streak + 1)); else streak=0; fi
    [ $streak -ge 2 ] && return 0
    [ $SECONDS -lt $deadline ] || return 1
    sleep 3
  done
}

# wait_for WHAT SECONDS SQL: until SQL answers t
wait_for() {
  local deadline=$((SECONDS + $2))
  until [ "$(q "$3")" = t ]; do
    reap "$cur_run"
    [ $SECONDS -lt $deadline ] || die "$1 did not happen within $2 s"
    sleep 1
  done
}

# run_one RUN INJECT: the replay of the run (phase 1: the scenario to its RC and
# verdict; phase 2: eleven more nightlies, for the watcher's changepoints), with
# the faults of the schedule when INJECT is yes; then the snapshot.
run_one() {
  local run=$1 inject=$2 sim_pid rel r1=$rate1 r2=$rate2
  # the reference is paced as the faulted run, so that the two see the same
  # interleaving of input and faults' recoveries as far as pacing can
  run_setup "$run"
  rel=$("$sim" dump "$scn" --namespace "$ns" 2>/dev/null | grep -o '"gate_request":"[^"]*"' | head -1 | cut -d'"' -f4)
  "$sim" replay "$scn" --models "$models" --namespace "$ns" --run-prefix "$ns-" --rate "$r1" \
    --dup-every 50 --bad-every 100 >"$work/$run/replay1.json" 2>"$work/$run/sim.log" &
  sim_pid=$!
  [ "$inject" = no ] || inject_range "$run" 0 "$split"
  wait "$sim_pid" || die "pw-sim replay failed: $(tail -n 3 "$work/$run/sim.log")"
  say "$run: phase 1 replayed: $(cat "$work/$run/replay1.json")"
  wait_for "the gate's verdict on $rel" 600 \
    "SELECT coalesce(bool_or(status = 'done'), false) FROM perfwatch.gate_evaluations WHERE release_id = '$rel'"
  quiesce 600 || die "$run: phase 1 did not quiesce within 600 s"
  say "$run: gate verdict on $rel, every group caught up"
  "$sim" replay "$scn" --models "$models" --namespace "$ns" --run-prefix "$ns-" --rate "$r2" \
    --days $((days + 11)) --since "$since" >"$work/$run/replay2.json" 2>>"$work/$run/sim.log" &
  sim_pid=$!
  [ "$inject" = no ] || inject_range "$run" "$split" "${#schedule[@]}"
  wait "$sim_pid" || die "pw-sim replay (phase 2) failed: $(tail -n 3 "$work/$run/sim.log")"
  say "$run: phase 2 replayed: $(cat "$work/$run/replay2.json")"
  wait_for "the chat-8b bisection" 600 \
    "SELECT coalesce(bool_or(status IN ('done', 'failed')), false) FROM perfwatch.bisections WHERE bisection_id = 'bs-chat-8b.$ns-7841923'"
  quiesce 600 || die "$run: phase 2 did not quiesce within 600 s"
  # the pager delivers from its tick; the attributor may still be on a late alert
  sleep 5
  quiesce 120 || die "$run: did not stay quiet"
  all_ready 30 || die "$run: /readyz not 200 at the end: $not_ready"
  # data loss: a consumer found messages the broker deleted before its group
  # read them (pw_consumer_loss); what that run stored is short of input
  ! grep -l '"msg":"data loss' "$work/$run"/*.log >/dev/null 2>&1 ||
    die "$run: data loss reported in $(grep -l '"msg":"data loss' "$work/$run"/*.log | xargs -n1 basename | tr '\n' ' ')"
  say "$run: quiet; snapshot"
  snapshot "$run"
  run_stop
}

# --- the comparison ------------------------------------------------------------

# one query per table: its rows of the namespace, the namespace replaced by NS,
# without wall-clock columns or generated ids (what must not differ)
tables=(runs samples op_timings baselines gate_evaluations gate_family_results gate_series_results
        changepoints alerts bisections attributions pages dead_letters)
table_sql() {
  local t=$1 m="s.model LIKE '%.' || :'ns'"
  case $t in
    # a bisect job's run is measured when the executor (pw-sim answer) builds
    # it: its chip set and numbers follow the wall clock, as a real executor's
    # would, so of those runs only the identity is compared
    runs) echo "SELECT concat_ws('|', run_id, repeat_index, model, build_id, build_kind, compiler_cl, platform, config,
                       CASE WHEN build_kind = 'bisect' THEN '' ELSE chip_set END, cell)
                FROM perfwatch.runs WHERE model LIKE '%.' || :'ns'" ;;
    samples) echo "SELECT concat_ws('|', x.run_id, x.repeat_index, x.metric, s.series_key, x.build_id,
                       CASE WHEN x.build_kind = 'bisect' THEN '' ELSE concat_ws('|', x.value, x.measured_at) END)
                FROM perfwatch.samples x JOIN perfwatch.series s USING (series_id) WHERE $m" ;;
    op_timings) echo "SELECT concat_ws('|', o.run_id, o.repeat_index, o.op_name,
                       CASE WHEN r.build_kind = 'bisect' THEN '' ELSE o.us_per_step::text END)
                FROM perfwatch.op_timings o JOIN perfwatch.runs r USING (run_id, repeat_index) WHERE r.model LIKE '%.' || :'ns'" ;;
    baselines) echo "SELECT concat_ws('|', s.series_key, b.version, b.state, b.median, b.mad_n, b.band_lo, b.band_hi, b.sigma,
                       b.n, b.days, b.chip_sets, b.window_start, b.window_end, b.build_id, b.freeze_reason)
                FROM perfwatch.baselines b JOIN perfwatch.series s USING (series_id) WHERE $m" ;;
    gate_evaluations) echo "SELECT concat_ws('|', release_id, evaluation, candidate_build_id, status, verdict, tests, fleet_weighted_impact_pct)
                FROM perfwatch.gate_evaluations WHERE release_id LIKE '%' || :'ns' || '%'" ;;
    gate_family_results) echo "SELECT concat_ws('|', release_id, evaluation, family, tier, verdict, gated_series, regressed_series)
                FROM perfwatch.gate_family_results WHERE release_id LIKE '%' || :'ns' || '%'" ;;
    gate_series_results) echo "SELECT concat_ws('|', g.release_id, g.evaluation, s.series_key, g.tier, g.baseline_version, g.baseline_median,
                       g.candidate_median, g.candidate_n, g.p, g.q, g.delta_pct, g.verdict, g.waiver_id, g.alert_id)
                FROM perfwatch.gate_series_results g JOIN perfwatch.series s USING (series_id) WHERE $m" ;;
    changepoints) echo "SELECT concat_ws('|', s.series_key, c.first_shifted_build_id, c.day, c.last_clean_cl, c.first_shifted_cl, c.n_cls,
                       c.level_before, c.level_after, c.delta_pct, c.p, c.direction, c.method, c.annotation, c.routing, c.stage)
                FROM perfwatch.changepoints c JOIN perfwatch.series s USING (series_id) WHERE $m" ;;
    alerts) echo "SELECT concat_ws('|', a.alert_id, a.kind, a.source, a.series_key, a.delta_pct, a.verdict, a.changepoint_id,
                       a.cl_range_lo, a.cl_range_hi, a.bisection_id, a.bisection_status, a.culprit, a.owner_hint, a.routing, a.status)
                FROM perfwatch.alerts a JOIN perfwatch.series s USING (series_id) WHERE $m" ;;
    bisections) echo "SELECT concat_ws('|', b.bisection_id, b.alert_id, b.range_lo, b.range_hi, b.n_cls, b.culprit, b.confidence, b.status, b.builds)
                FROM perfwatch.bisections b JOIN perfwatch.series s USING (series_id) WHERE $m" ;;
    attributions) echo "SELECT concat_ws('|', t.alert_id, t.status, t.owner_hint)
                FROM perfwatch.attributions t JOIN perfwatch.alerts a USING (alert_id) JOIN perfwatch.series s ON s.series_id = a.series_id WHERE $m" ;;
    pages) echo "SELECT concat_ws('|', page_id, dedup_key, route, severity, verdict, summary, owner_hint, delivery_status)
                FROM perfwatch.pages WHERE payload->'series'->>'model' LIKE '%.' || :'ns'" ;;
    dead_letters) echo "SELECT concat_ws('|', source_topic, reason, service, encode(original_key, 'escape'), count(*))
                FROM perfwatch.dead_letters WHERE encode(original_key, 'escape') LIKE :'ns' || '-%'
                GROUP BY source_topic, reason, service, original_key" ;;
  esac
}
snapshot() {
  local run=$1 t
  mkdir -p "$work/$run/snap"
  q "SELECT series_id || ' ' || series_key FROM perfwatch.series WHERE model LIKE '%.$ns'" >"$work/$run/series.map"
  for t in "${tables[@]}"; do
    psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -v ns="$ns" -f <(table_sql "$t") |
      "$here/normalize.py" "$work/$run/series.map" |
      sed "s/$ns/NS/g" | LC_ALL=C sort >"$work/$run/snap/$t.txt" || die "snapshot of $t failed"
  done
  # what the pager's webhook got: one line per POST (page, version, model)
  { grep -F ".$ns" "$work/hook.txt" 2>/dev/null || true; } | sed "s/$ns/NS/g" | LC_ALL=C sort >"$work/$run/snap/webhook.txt"
  # rows written meanwhile (a re-issued confirmation job, a page's next
  # version) go out at their service's next round: a row still there after
  # 60 s is one left behind, named with its service and topic
  local until_s=$((SECONDS + 60)) pending
  while pending=$(q "SELECT count(*) FROM perfwatch.outbox WHERE published_at IS NULL");
        [ "$pending" != 0 ] && [ $SECONDS -lt $until_s ]; do sleep 1; done
  echo "$pending" >"$work/$run/outbox_pending"
  [ "$pending" = 0 ] || say "$run: unpublished outbox rows after 60 s: $(q "SELECT string_agg(service || ' ' || topic || ' ' || n, ', ')
      FROM (SELECT service, topic, count(*) n FROM perfwatch.outbox WHERE published_at IS NULL GROUP BY 1, 2) x")"
}

# --- the runs ------------------------------------------------------------------

want=$("$sim" count "$scn" --models "$models")
want_samples=$(grep -o '"samples":[0-9]*' <<<"$want" | cut -d: -f2)
want_runs=$(grep -o '"runs":[0-9]*' <<<"$want" | cut -d: -f2)
runs2=$(( $("$sim" count "$scn" --models "$models" --days $((days + 11)) | grep -o '"runs":[0-9]*' | cut -d: -f2) - want_runs ))
rate1=${PW_FAULTS_RATE:-$((want_runs / (t1 > 0 ? t1 : 1) + 1))}
rate2=${PW_FAULTS_RATE:-$((runs2 / (t2 > 0 ? t2 : 1) + 1))}
echo "faults: replay paced at $rate1 runs/s (phase 1, $want_runs runs) and $rate2 runs/s (phase 2, $runs2 runs)"
[ "$want_samples" -ge 200000 ] || echo "faults: note: the replay holds $want_samples samples (< 200,000: --models $models is a small run)"
echo "faults: scenario worked-example --models $models: $want (+ eleven more nightlies)"

run_one ref no
t_ref=$SECONDS
# PW_FAULTS_NONE=1: the second run without faults (what two uninterrupted runs share)
run_one flt "$([ "${PW_FAULTS_NONE:-0}" = 1 ] && echo no || echo yes)"
say "faulted run done"

diffs=0
printf '\nfaults: figures (seed %s)\n' "$seed"
printf '  faults injected:'
total=0
for k in $(printf '%s\n' "${!fault_count[@]}" | sort); do printf ' %s %d,' "$k" "${fault_count[$k]}"; total=$((total + fault_count[$k])); done
printf ' total %d\n' "$total"
"$here/compare.py" "$work/ref/snap" "$work/flt/snap" | tee "$work/compare.txt" || true
diffs=$(sed -n 's/.*differences: \([0-9]*\)$/\1/p' "$work/compare.txt" | tail -n 1)
[ -n "$diffs" ] || die "the comparison did not finish"
for r in ref flt; do
  n=$(cat "$work/$r/outbox_pending")
  printf '  outbox rows unpublished after the %s run: %d\n' "$r" "$n"
  [ "$n" = 0 ] || diffs=$((diffs + 1))
  # a page version delivered twice to on-call
  n=$(LC_ALL=C uniq -d "$work/$r/snap/webhook.txt" | wc -l)
  printf '  page versions the webhook got twice in the %s run: %d (of %d posts)\n' "$r" "$n" "$(wc -l <"$work/$r/snap/webhook.txt")"
  [ "$n" = 0 ] || diffs=$((diffs + 1))
  s1=$(grep -o '"samples":[0-9]*' "$work/$r/replay1.json" | cut -d: -f2)
  s2=$(grep -o '"samples":[0-9]*' "$work/$r/replay2.json" | cut -d: -f2)
  printf '  samples replayed in the %s run: %d + %d = %d\n' "$r" "$s1" "$s2" $((s1 + s2))
done
[ ! -f "$work/readiness.txt" ] || sed 's/^/  \/readyz non-200 during /' "$work/readiness.txt"
[ ! -f "$work/exits.txt" ] || sed 's/^/  service exited and was started again: /' "$work/exits.txt"
printf '  reference run %d s, faulted run %d s\n' "$t_ref" $((SECONDS - t_ref))
[ "$diffs" = 0 ] || die "$diffs differences between the faulted and the uninterrupted run"
echo "faults: equality holds (exact projections; order-dependent columns reported above)"
