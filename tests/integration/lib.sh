# lib.sh: the preamble the integration tests share; sourced first (tests run
# from the checkout's root: . tests/integration/lib.sh).
# run.sh gives a test its environment (PW_BUILD, PW_PG_DSN, PW_REDIS_ADDR,
# PW_KAFKA_BOOTSTRAP_SERVERS, PW_RUN_DIR); these fail early and clearly when
# a test is started some other way or a binary it needs was not built.

# need_env VAR...: every VAR is set and not empty
need_env() {
  local v
  for v in "$@"; do
    [ -n "${!v:-}" ] || { echo "FAIL: $v is not set; run me through tests/integration/run.sh"; exit 1; }
  done
}

# need_bins PATH...: every PATH is an executable (built)
need_bins() {
  local b
  for b in "$@"; do [ -x "$b" ] || { echo "FAIL: $b not built"; exit 1; }; done
}

# q SQL: runs SQL in PostgreSQL, prints the result unaligned, fails on error
q() { psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

# need_tools NAME...: every NAME is a command on PATH (deploy/dev/packages.txt installs them)
need_tools() {
  local t
  for t in "$@"; do command -v "$t" >/dev/null || { echo "FAIL: $t is not installed"; exit 1; }; done
}

# pipeline_harness NAME: what the pipeline tests (services started in the
# background, logs in $work) share. pids=() holds the processes a test starts:
# at exit each gets SIGTERM and is waited for, then on_exit runs if the test
# defines it. fail MESSAGE prints "NAME: FAIL: MESSAGE" and the tail of every
# $work/*.log, and exits 1. psqlq runs psql with the test's flags.
pipeline_harness() {
  pipeline_name=$1
  pids=()
  trap pipeline_cleanup EXIT
}
pipeline_cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if declare -F on_exit >/dev/null; then on_exit; fi
}
fail() {
  echo "${pipeline_name:-$(basename "$0" .sh)}: FAIL: $*" >&2
  for l in "${work:-/nonexistent}"/*.log; do [ -f "$l" ] && { echo "--- $l" >&2; tail -n 15 "$l" >&2; }; done
  exit 1
}
psqlq() { psql "$PW_PG_DSN" -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }

# service_harness NAME PREFIX: the preamble of a test that runs services from
# $PW_BUILD in the background, each in its own consumer group (test_attributor
# and the like). Sets ns (PREFIX + 7 digits: the simulator's namespace and the
# groups' prefix) and work (a fresh folder under $PW_RUN_DIR, the logs), and
# pid[] (NAME -> process): at exit each gets SIGTERM and is waited for. fail
# is lib.sh's: "NAME: FAIL: MESSAGE" and the tail of every $work/*.log.
service_harness() {
  pipeline_name=$1
  ns="$2$(date +%s%N | tail -c 8)"
  work=$(mktemp -d "$PW_RUN_DIR/$1.XXXXXX")
  declare -gA pid=()
  trap service_cleanup EXIT
}
service_cleanup() {
  local p
  for p in "${pid[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pid[@]}"; do wait "$p" 2>/dev/null || true; done
}
# service_start NAME [VAR=VALUE...]: starts $PW_BUILD/services/NAME/pw-NAME in
# group "$ns-NAME" on a free HTTP port, with the extra environment given,
# appending to $work/NAME.log; its pid in pid[NAME].
service_start() {
  local name=$1
  shift
  env PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$ns-$name" "$@" \
    "$PW_BUILD/services/$name/pw-$name" >>"$work/$name.log" 2>&1 &
  pid[$name]=$!
}
# service_joined NAME: waits (90 s at most) for the member's first partition
# assignment in its log; fails if the service exited meanwhile.
service_joined() {
  local deadline=$((SECONDS + 90))
  until grep -q '"msg":"kafka partitions assigned' "$work/$1.log"; do
    kill -0 "${pid[$1]}" 2>/dev/null || fail "pw-$1 exited"
    [ $SECONDS -lt $deadline ] || fail "pw-$1 did not join its group"
    sleep 0.2
  done
}

# free_port: a TCP port on 127.0.0.1 nobody listens on now
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# hook_start: a webhook receiver on a free port of 127.0.0.1 (hook_port) that keeps every POST as a
# file of $work/hook, in order: {"path", "key" (its Idempotency-Key), "body" (its JSON)}; pid[hook]
hook_start() {
  hook_port=$(free_port)
  mkdir -p "$work/hook"
  python3 - "$hook_port" "$work/hook" <<'PY' &
import http.server, json, os, sys
port, out = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        n = len(os.listdir(out))
        with open(os.path.join(out, "%04d.json" % n), "w") as f:
            json.dump({"path": self.path, "key": self.headers.get("Idempotency-Key", ""),
                       "body": json.loads(body)}, f)
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
  pid[hook]=$!
}

# am_start [SED_EXPR...]: a real Alertmanager (Debian's prometheus-alertmanager) on free ports with
# deploy/dev/alertmanager.yml, each SED_EXPR applied to it first (its receiver's URL, its
# group_interval), storage and log under $work; sets am (its URL) and pid[am]; fails when it does not start
am_start() {
  local cfg=$work/alertmanager.yml port cluster e
  local args=()
  for e in "$@"; do args+=(-e "$e"); done
  if [ ${#args[@]} -gt 0 ]; then sed "${args[@]}" deploy/dev/alertmanager.yml >"$cfg"; else cp deploy/dev/alertmanager.yml "$cfg"; fi
  port=$(free_port) cluster=$(free_port)
  am=http://127.0.0.1:$port
  prometheus-alertmanager --config.file="$cfg" --storage.path="$work/am" --web.listen-address=127.0.0.1:$port \
    --cluster.listen-address=127.0.0.1:$cluster --log.level=warn >"$work/am.log" 2>&1 &
  pid[am]=$!
  for _ in $(seq 100); do curl -fsS "$am/-/ready" >/dev/null 2>&1 && return 0; sleep 0.1; done
  fail "alertmanager did not start: $(cat "$work/am.log")"
}

# pager_joined LOG PID: waits (90 s at most) for the pager logging to LOG to hold partitions
pager_joined() {
  local deadline=$((SECONDS + 90))
  until grep -q '"msg":"kafka partitions assigned' "$1"; do
    kill -0 "$2" 2>/dev/null || fail "pw-pager exited"
    [ $SECONDS -lt $deadline ] || fail "pw-pager did not join its group"
    sleep 0.2
  done
}
