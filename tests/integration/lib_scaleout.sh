# lib_scaleout.sh: start N instances of a service in one consumer group, on
# the dev stack; shared by tests/integration/test_scaleout.sh,
# test_services_scaleout.sh and bench/scaleout.sh. Sourced; the caller sets
# PW_BUILD and the stack's environment, and defines `work` (a folder for logs).
#
#   so_start ROLE GROUP N    start N instances of pw-ROLE as members of GROUP,
#                            one consumer thread each (the ingester's
#                            ingest.workers is 1), with so_env's VAR=VALUE
#                            words in their environment; their pids in
#                            so_pids, logs work/ROLE.GROUP.I.log
#   so_wait_assigned ROLE GROUP N SECONDS
#                            until every instance holds partitions
#   so_held LOG              partitions the instance holds now (assigned -
#                            revoked, from pw_kafka's log lines)
#   so_held_topic LOG TOPIC  the partitions of TOPIC it holds now, as "0,1,2"
#   so_stop                  SIGTERM every instance, wait for them
# so_batch_ms, when set, is the instances' batch.max.ms.
so_pids=()
so_env=()

so_start() {
  local role=$1 group=$2 n=$3 i bin
  bin=$PW_BUILD/services/$role/pw-$role
  for ((i = 0; i < n; i++)); do
    if [ "$role" = ingester ]; then
      env "${so_env[@]}" PW_BATCH_MAX_MS=${so_batch_ms:-200} PW_INGEST_WORKERS=1 PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$group" "$bin" >"$work/$role.$group.$i.log" 2>&1 &
    else
      env "${so_env[@]}" PW_BATCH_MAX_MS=${so_batch_ms:-200} PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$group" "$bin" >"$work/$role.$group.$i.log" 2>&1 &
    fi
    so_pids+=($!)
  done
}

so_held() {
  awk '/"msg":"kafka partitions (assigned|revoked)"/ {
         if (match($0, /"partitions":"[0-9]+"/)) {
           n = substr($0, RSTART + 14, RLENGTH - 15) + 0
           held += ($0 ~ /assigned/) ? n : -n
         }
       } END { print held + 0 }' "$1"
}

so_held_topic() {
  awk -v topic="$2" '/"msg":"kafka partitions (assigned|revoked)"/ {
         add = $0 ~ /assigned/
         if (!match($0, /"list":"[^"]*"/)) next
         n = split(substr($0, RSTART + 8, RLENGTH - 9), groups, " ")
         for (g = 1; g <= n; g++) {
           i = match(groups[g], /:[0-9,]*$/)
           if (!i || substr(groups[g], 1, i - 1) != topic) continue
           m = split(substr(groups[g], i + 1), ps, ",")
           for (k = 1; k <= m; k++) if (ps[k] != "") held[ps[k] + 0] = add
         }
       } END {
         out = ""
         for (p = 0; p < 1000; p++) if (held[p]) out = out (out == "" ? "" : ",") p
         print out
       }' "$1"
}

so_wait_assigned() {
  local role=$1 group=$2 n=$3 secs=$4 i deadline all
  deadline=$((SECONDS + secs))
  while :; do
    all=1
    for ((i = 0; i < n; i++)); do
      [ "$(so_held "$work/$role.$group.$i.log" 2>/dev/null || echo 0)" -gt 0 ] || all=0
    done
    [ $all -eq 1 ] && return 0
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

so_stop() {
  local p
  for p in "${so_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${so_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  so_pids=()
}
