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
