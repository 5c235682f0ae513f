# lib_gate.sh: helpers shared by the gate's integration tests; sourced.
# The caller defines fail MESSAGE (exits).

# gate_verdict RELEASE GATE_PID OUT [SECONDS]: waits (default 180 s) for the
# newest GateVerdict keyed RELEASE on perf.gate.verdicts.v1 and writes it,
# decoded by protoc, to OUT; fails when the gate exits first or none comes.
gate_verdict() {
  local rel=$1 pid=$2 out=$3 tries=$(( ${4:-180} * 5 )) line="" p o
  for _ in $(seq 1 "$tries"); do
    line=$(kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.gate.verdicts.v1 -o beginning -e -q \
             -f '%k %p %o\n' 2>/dev/null | awk -v k="$rel" '$1 == k' | tail -n 1 || true)
    [ -n "$line" ] && break
    kill -0 "$pid" 2>/dev/null || fail "pw-gate exited"
    sleep 0.2
  done
  [ -n "$line" ] || fail "no verdict for $rel on perf.gate.verdicts.v1"
  read -r _ p o <<<"$line"
  kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t perf.gate.verdicts.v1 -p "$p" -o "$o" -c 1 -e -q -f '%s' |
    protoc --decode=perfwatch.v1.GateVerdict -I proto proto/perfwatch/v1/gate.proto >"$out" ||
    fail "the verdict for $rel does not decode"
}

# gate_groups_at_end PREFIX IT: the consumer groups PREFIX-ingester,
# PREFIX-baseliner and PREFIX-gate start where their topics end now (earlier
# tests' messages are not this test's); IT is tests/it_watcher.
gate_groups_at_end() {
  "$2" start-at-end "$1-ingester" perf.runs.v1 || fail "placing the ingester group"
  "$2" start-at-end "$1-baseliner" perf.points.v1 perf.fleet-changes.v1 || fail "placing the baseliner group"
  "$2" start-at-end "$1-gate" perf.gate.requests.v1 || fail "placing the gate group"
}

# gate_start NAME BINARY PREFIX MIN_WAIT: starts a service of the pipeline in
# group PREFIX-NAME (gate.poll_interval 200 ms, gate.min_wait MIN_WAIT), its
# log in $work/NAME.log, its pid appended to pids (lib.sh's pipeline_harness).
gate_start() {
  PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$3-$1" PW_GATE_POLL_INTERVAL=200ms PW_GATE_MIN_WAIT=$4 \
    "$2" >"$work/$1.log" 2>&1 &
  pids+=($!)
}
