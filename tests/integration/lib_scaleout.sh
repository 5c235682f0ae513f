# lib_scaleout.sh: start N ingesters and N baseliners in one consumer group
# each, on the dev stack; shared by tests/integration/test_scaleout.sh and
# bench/scaleout.sh. Sourced; the caller sets PW_BUILD and the stack's
# environment, and defines `work` (a folder for logs).
#
#   so_start ROLE GROUP N    start N instances of ROLE (ingester|baseliner) as
#                            members of GROUP, one consumer thread each; their
#                            pids in so_pids, logs work/ROLE.GROUP.I.log
#   so_wait_assigned ROLE GROUP N SECONDS
#                            until every instance holds partitions
#   so_held LOG              partitions the instance holds now (assigned -
#                            revoked, from pw_kafka's log lines)
#   so_stop                  SIGTERM every instance, wait for them
# so_batch_ms, when set, is the instances' batch.max.ms.
so_pids=()

so_start() {
  local role=$1 group=$2 n=$3 i bin
  bin=$PW_BUILD/services/$role/pw-$role
  for ((i = 0; i < n; i++)); do
    if [ "$role" = ingester ]; then
      PW_BATCH_MAX_MS=${so_batch_ms:-200} PW_INGEST_WORKERS=1 PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$group" "$bin" >"$work/$role.$group.$i.log" 2>&1 &
    else
      PW_BATCH_MAX_MS=${so_batch_ms:-200} PW_HTTP_PORT=0 PW_KAFKA_GROUP_ID="$group" "$bin" >"$work/$role.$group.$i.log" 2>&1 &
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
