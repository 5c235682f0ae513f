#!/usr/bin/env bash
# stack.sh: starts, stops and reports the development stack — a throwaway
# PostgreSQL 15 cluster, a Redis server and one Apache Kafka node.
#
# Its neighbours: the Makefile's stack-start/stack-stop/stack-status targets,
# tests/integration/run.sh and tools/demo.sh call it; deploy/dev/deps.sh
# fetched the broker's jars (kafka/pom.xml, through Maven) into
# deploy/dev/kafka/lib; pw-topics (tools/pw-topics.c) creates the topics
# of common/pw_topics.c on it; pw-migrate (tools/pw-migrate.c) applies migrations/ once
# PostgreSQL is up. Everything listens on 127.0.0.1 on ports away from the
# usual 5432/6379/9092 and keeps its data under one git-ignored run folder,
# run/ in the checkout. What services and tests need is written to
# run/stack.env; the services only ever get a bootstrap list.
# docs/operations.md describes the stack for operators.
#
# The Kafka node runs in KRaft combined mode (broker and controller in one
# JVM, no ZooKeeper), its log directory formatted once with the storage tool
# under run/kafka/data and kept across restarts: a broker killed -9 and
# started again recovers its log and loses nothing that it acknowledged.
#
#   stack.sh start BUILD_DIR [--fresh]  start what is not running (idempotent);
#                                       --fresh first deletes the stopped stack's data
#   stack.sh stop                       stop every server of the stack (TERM, then KILL)
#   stack.sh status                     what runs where; exit 0 only if all three run
#   stack.sh env                        print the env file
#   stack.sh clean                      stop, then delete the stack's data
#
# Environment: PW_RUN_DIR (default <checkout>/run), PW_DEV_PG_PORT (25432),
# PW_DEV_REDIS_PORT (26379), PW_DEV_KAFKA_PORT (PW_DEV_PG_PORT + 2000: the
# broker's listener; the controller's is the next port, so a broker restarted
# by `stack.sh start` comes back where every client already looks),
# PW_DEV_KAFKA_HEAP (512m: the JVM's -Xmx), PW_PG_BIN
# (/usr/lib/postgresql/15/bin), JAVA (java on PATH).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
run_dir=${PW_RUN_DIR:-$repo/run}
case $run_dir in /*) ;; *) run_dir=$PWD/$run_dir ;; esac
pg_port=${PW_DEV_PG_PORT:-25432}
redis_port=${PW_DEV_REDIS_PORT:-26379}
kafka_port=${PW_DEV_KAFKA_PORT:-$((pg_port + 2000))}
kafka_heap=${PW_DEV_KAFKA_HEAP:-512m}
java_bin=${JAVA:-java}
pg_bin=${PW_PG_BIN:-/usr/lib/postgresql/15/bin}

pg_dir=$run_dir/pg
pg_data=$pg_dir/data
pg_sock=$pg_dir/socket
pg_log=$pg_dir/postgres.log
redis_dir=$run_dir/redis
redis_pidfile=$redis_dir/redis.pid
redis_log=$redis_dir/redis.log
kafka_dir=$run_dir/kafka
kafka_data=$kafka_dir/data
kafka_conf=$kafka_dir/server.properties
kafka_bootstrap=$kafka_dir/bootstrap
kafka_pidfile=$kafka_dir/kafka.pid
kafka_log=$kafka_dir/kafka.log
kafka_lib=$repo/deploy/dev/kafka/lib
env_file=$run_dir/stack.env
migrate_log=$run_dir/migrate.log

die() { echo "stack: $*" >&2; exit 1; }
say() { echo "stack: $*"; }

usage() {
  echo "usage:" >&2
  sed -n '/^#   stack.sh start/,/^#   stack.sh clean/p' "$0" | sed 's/^#  //' >&2
  exit 2
}

for v in pg_port redis_port kafka_port; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "invalid $v \"${!v}\": expected a number"
done
case $run_dir in *"'"* | *$'\n'*) die "run folder \"$run_dir\" must not contain quotes or newlines" ;; esac

now() { echo "${EPOCHREALTIME/,/.}"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# alive PID: the process exists and is not a zombie waiting for its reaper
# (in some containers pid 1 reaps only now and then).
alive() {
  local st
  { read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
  st=${st##*) }
  [ -n "$st" ] && [ "${st%% *}" != Z ]
}

# pid_of PIDFILE COMM: the pid in PIDFILE if that process is alive and is COMM.
pid_of() {
  local f=$1 comm=$2 pid
  [ -f "$f" ] || return 1
  pid=$(head -n 1 "$f" 2>/dev/null | tr -dc 0-9)
  [ -n "$pid" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 1
  alive "$pid" || return 1
  echo "$pid"
}
pg_pid() { pid_of "$pg_data/postmaster.pid" postgres; }
redis_pid() { pid_of "$redis_pidfile" redis-server; }
kafka_pid() { pid_of "$kafka_pidfile" java; }

# Addresses of running servers, read from the servers themselves so that the
# env file is right even if the configured port changed since they started.
pg_addr() { echo "127.0.0.1:$(sed -n 4p "$pg_data/postmaster.pid")"; }
redis_addr() {
  local a
  a=$(tr '\0' ' ' <"/proc/$1/cmdline" | grep -o '127\.0\.0\.1:[0-9]*' | head -n 1) || true
  echo "${a:-127.0.0.1:$redis_port}"
}
kafka_addr() { cat "$kafka_bootstrap" 2>/dev/null || true; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Runs a PostgreSQL program as the postgres user when we are root (initdb and
# the server refuse to run as root), from a folder that user can enter.
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd "$pg_dir" && runuser -u postgres -- "$@")
  else
    (cd "$pg_dir" && "$@")
  fi
}

# As root, the postgres user must be able to reach the run folder: CI clones
# into arbitrary folders, /root is usually mode 700.
check_pg_reachable() {
  [ "$(id -u)" -eq 0 ] || return 0
  id -u postgres >/dev/null 2>&1 || die "postgres: no \"postgres\" user; install postgresql-15 (make deps)"
  runuser -u postgres -- test -x "$run_dir" && return 0
  local d=$run_dir
  local blocked=$d
  while [ "$d" != / ]; do
    runuser -u postgres -- test -x "$d" 2>/dev/null || blocked=$d
    d=$(dirname "$d")
  done
  die "postgres: the postgres user cannot enter \"$blocked\" ($(stat -c '%A %U' "$blocked")), a parent of the run folder
detail: allow it with \"chmod o+x $blocked\", or set PW_RUN_DIR to a folder it can reach, e.g. /tmp/pwrun"
}

# Keeps one previous log, so the tail after a failure shows this start only.
rotate_log() { [ ! -s "$1" ] || mv -f "$1" "$1.1"; }

tail_log() {
  if [ -s "$1" ]; then
    echo "--- last lines of $1:" >&2
    tail -n "${2:-20}" "$1" >&2
    echo "---" >&2
  fi
}

# Servers this invocation started; a failed start stops them again.
started=()
fail_start() {
  local server=$1 reason=$2 log=${3:-}
  echo "stack: start failed: $server: $reason" >&2
  [ -z "$log" ] || tail_log "$log"
  if [ ${#started[@]} -gt 0 ]; then
    echo "stack: stopping what this start brought up: ${started[*]}" >&2
    stop_servers "${started[@]}" >&2 || true
  fi
  exit 1
}

start_pg() {
  local pid
  if pid=$(pg_pid); then
    local a
    a=$(pg_addr)
    pg_isready -q -h 127.0.0.1 -p "${a##*:}" -t 5 ||
      fail_start postgres "already running (pid $pid) but not answering on $a" "$pg_log"
    say "postgres already running (pid $pid, $a)"
    return 0
  fi
  [ -x "$pg_bin/initdb" ] || fail_start postgres "no $pg_bin/initdb; install postgresql-15 (make deps)"
  check_pg_reachable
  local sockfile=$pg_sock/.s.PGSQL.$pg_port
  [ ${#sockfile} -lt 100 ] || fail_start postgres "unix socket path \"$sockfile\" is too long; set PW_RUN_DIR to a shorter folder"
  port_in_use "$pg_port" && fail_start postgres "127.0.0.1:$pg_port is already in use by another process; set PW_DEV_PG_PORT"
  mkdir -p "$pg_sock"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres:postgres "$pg_dir" "$pg_sock"
    [ ! -e "$pg_data" ] || chown -R postgres:postgres "$pg_data"
  fi
  chmod 755 "$pg_dir" "$pg_sock"
  if [ ! -f "$pg_data/PG_VERSION" ]; then
    # Trust auth and no fsync: a throwaway development cluster, never production.
    as_pg "$pg_bin/initdb" -D "$pg_data" -U postgres --auth=trust --encoding=UTF8 \
      --locale=C --no-sync --no-instructions >"$pg_dir/initdb.log" 2>&1 ||
      fail_start postgres "initdb failed" "$pg_dir/initdb.log"
    echo "include_if_exists = 'perfwatch-dev.conf'" >>"$pg_data/postgresql.conf"
  fi
  # Rewritten on every start so that a changed port takes effect.
  cat >"$pg_data/perfwatch-dev.conf" <<EOF
# perfwatch-dev.conf: written by deploy/dev/stack.sh on every start. DEV ONLY:
# fsync and synchronous commit are off for speed; a crash of this machine can
# lose or corrupt this cluster. Never use these settings in production.
listen_addresses = '127.0.0.1'
port = $pg_port
unix_socket_directories = '$pg_sock'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
# Sized for ingest: the ingester's COPYs insert into the samples key at every
# series at once, so the key's pages must stay in shared buffers, and bulk
# loads should not force a checkpoint every gigabyte of WAL.
shared_buffers = 1GB
wal_buffers = 64MB
max_wal_size = 8GB
checkpoint_timeout = 15min
# new WAL segments are not zero-filled first (a third of the WAL writer's time)
wal_init_zero = off
log_line_prefix = '%m [%p] %u@%d '
EOF
  [ "$(id -u)" -ne 0 ] || chown postgres:postgres "$pg_data/perfwatch-dev.conf"
  rotate_log "$pg_log"
  touch "$pg_log"
  [ "$(id -u)" -ne 0 ] || chown postgres:postgres "$pg_log"
  started+=(postgres)
  as_pg "$pg_bin/pg_ctl" -D "$pg_data" -l "$pg_log" -w -t 20 start >/dev/null 2>>"$pg_log" 9>&- ||
    fail_start postgres "pg_ctl start did not finish" "$pg_log"
  pg_isready -q -h 127.0.0.1 -p "$pg_port" -t 5 ||
    fail_start postgres "pg_isready on 127.0.0.1:$pg_port did not answer" "$pg_log"
  # The role and database the services use; owner of its database, not a superuser.
  psql -X -q -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -v ON_ERROR_STOP=1 \
    >>"$pg_log" 2>&1 <<'EOF' || fail_start postgres "could not create role and database \"perfwatch\"" "$pg_log"
SELECT 'CREATE ROLE perfwatch LOGIN' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'perfwatch')
\gexec
SELECT 'CREATE DATABASE perfwatch OWNER perfwatch' WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'perfwatch')
\gexec
EOF
  say "postgres up (pid $(pg_pid), 127.0.0.1:$pg_port)"
}

start_redis() {
  local pid
  if pid=$(redis_pid); then
    local a
    a=$(redis_addr "$pid")
    [ "$(redis-cli -h 127.0.0.1 -p "${a##*:}" ping 2>/dev/null)" = PONG ] ||
      fail_start redis "already running (pid $pid) but no PONG from $a" "$redis_log"
    say "redis already running (pid $pid, $a)"
    return 0
  fi
  command -v redis-server >/dev/null || fail_start redis "redis-server not installed (make deps)"
  port_in_use "$redis_port" && fail_start redis "127.0.0.1:$redis_port is already in use by another process; set PW_DEV_REDIS_PORT"
  mkdir -p "$redis_dir/data"
  rm -f "$redis_pidfile"
  rotate_log "$redis_log"
  started+=(redis)
  # A cache only (PostgreSQL is the source of truth): no snapshots, no AOF.
  redis-server --bind 127.0.0.1 --port "$redis_port" --protected-mode yes \
    --dir "$redis_dir/data" --save '' --appendonly no \
    --daemonize yes --pidfile "$redis_pidfile" --logfile "$redis_log" \
    </dev/null >>"$redis_log" 2>&1 9>&- || fail_start redis "redis-server exited with an error" "$redis_log"
  local i
  for ((i = 0; i < 100; i++)); do
    [ "$(redis-cli -h 127.0.0.1 -p "$redis_port" ping 2>/dev/null)" = PONG ] && break
    sleep 0.1
  done
  [ $i -lt 100 ] || fail_start redis "no PONG from 127.0.0.1:$redis_port within 10 s" "$redis_log"
  redis_pid >/dev/null || fail_start redis "no live redis-server behind $redis_pidfile" "$redis_log"
  say "redis up (pid $(redis_pid), 127.0.0.1:$redis_port)"
}

# The node's configuration, rewritten on every start so that a changed port
# takes effect. Retention is by size only: the simulator's runs carry the
# fleet's (past) times as message timestamps, which time-based retention would
# delete at once; 1 GiB a partition holds far more than the demo, the tests
# and the fault harness publish (docs/operations.md, "The dev stack").
write_kafka_conf() {
  local cport=$((kafka_port + 1))
  cat >"$kafka_conf" <<EOF
# server.properties: written by deploy/dev/stack.sh on every start. One Kafka
# node in KRaft combined mode for development: replication factor 1, no
# authentication, listening on 127.0.0.1 only. Not a production configuration.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$kafka_port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$kafka_port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$kafka_data
auto.create.topics.enable=false
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=12
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.retention.ms=-1
log.retention.bytes=1073741824
log.segment.bytes=67108864
log.retention.check.interval.ms=5000
num.network.threads=2
num.io.threads=4
background.threads=4
num.recovery.threads.per.data.dir=2
EOF
}

# The JVM's options: a bounded heap (the node shares 2 cores and the machine
# with PostgreSQL, Redis and the services), the serial collector (one GC
# thread), IPv4 sockets (so that 127.0.0.1 is bound as such), the log config.
kafka_jvm_opts() {
  jvm_opts=(-Xms128m "-Xmx$kafka_heap" -XX:+UseSerialGC -Djava.awt.headless=true
    -Djava.net.preferIPv4Stack=true
    "-Dlog4j2.configurationFile=$repo/deploy/dev/kafka/log4j2.properties" -cp "$kafka_lib/*")
}
# kafka_java ARGS...: the JVM on the broker's classpath.
kafka_java() {
  local jvm_opts
  kafka_jvm_opts
  "$java_bin" "${jvm_opts[@]}" "$@"
}

start_kafka() {
  local topics_bin=$1 pid
  if pid=$(kafka_pid); then
    local a
    a=$(kafka_addr)
    [ -n "$a" ] || fail_start kafka "already running (pid $pid) but $kafka_bootstrap is gone; run stack.sh stop"
    timeout 10 kcat -L -b "$a" -t perf.runs.v1 -m 5 >/dev/null 2>&1 ||
      fail_start kafka "already running (pid $pid) but no metadata from $a" "$kafka_log"
    say "kafka already running (pid $pid, $a)"
    return 0
  fi
  command -v kcat >/dev/null || fail_start kafka "kcat not installed (make deps); it checks that the broker answers"
  command -v "$java_bin" >/dev/null || fail_start kafka "java not found (make deps installs openjdk-17-jre-headless)"
  ls "$kafka_lib"/kafka_2.13-*.jar >/dev/null 2>&1 ||
    fail_start kafka "the broker's jars are not in $kafka_lib; run make deps (deploy/dev/deps.sh fetches them through Maven)"
  port_in_use "$kafka_port" && fail_start kafka "127.0.0.1:$kafka_port is already in use by another process; set PW_DEV_KAFKA_PORT"
  port_in_use $((kafka_port + 1)) && fail_start kafka "127.0.0.1:$((kafka_port + 1)) (the controller's port) is already in use by another process; set PW_DEV_KAFKA_PORT"
  mkdir -p "$kafka_dir"
  rm -f "$kafka_bootstrap" "$kafka_pidfile"
  rotate_log "$kafka_log"
  write_kafka_conf
  local t0
  t0=$(now)
  # The log directory is formatted once, with a cluster id of its own; later
  # starts find its meta.properties and keep what it holds.
  if [ ! -f "$kafka_data/meta.properties" ]; then
    local id
    id=$(kafka_java kafka.tools.StorageTool random-uuid 2>>"$kafka_log") ||
      fail_start kafka "kafka-storage random-uuid failed" "$kafka_log"
    kafka_java kafka.tools.StorageTool format -t "$id" -c "$kafka_conf" >>"$kafka_log" 2>&1 ||
      fail_start kafka "kafka-storage format of $kafka_data failed" "$kafka_log"
  fi
  # setsid: its own session, so a closing terminal does not take it along. The
  # child of & is never a process-group leader, so setsid execs in place and
  # $! is the JVM's pid.
  local jvm_opts
  kafka_jvm_opts
  setsid "$java_bin" "${jvm_opts[@]}" kafka.Kafka "$kafka_conf" </dev/null >>"$kafka_log" 2>&1 9>&- &
  local launched=$!
  echo "$launched" >"$kafka_pidfile"
  started+=(kafka)
  local bs=127.0.0.1:$kafka_port i out=""
  for ((i = 0; i < 600; i++)); do
    alive "$launched" || fail_start kafka "the broker exited during start-up" "$kafka_log"
    out=$(timeout 5 kcat -L -b "$bs" -m 2 2>&1) && break
    sleep 0.1
  done
  [ $i -lt 600 ] || fail_start kafka "no metadata from $bs within 60 s: $(echo "$out" | tail -n 1)" "$kafka_log"
  local answered
  answered=$(elapsed "$t0")
  out=$("$topics_bin" create --bootstrap "$bs" 2>&1) ||
    fail_start kafka "creating the topics failed: $(echo "$out" | tail -n 3)" "$kafka_log"
  echo "$out" >>"$kafka_dir/topics.log"
  echo "$bs" >"$kafka_bootstrap.tmp"
  mv -f "$kafka_bootstrap.tmp" "$kafka_bootstrap"
  say "kafka up (pid $launched, $bs): answered metadata in $answered s, topics ready in $(elapsed "$t0") s"
}

# The read-only role Grafana logs in as (deploy/postgres/readonly-role.sql:
# SELECT on the perfwatch schema, read-only sessions), after the migrations
# so that it covers every table; idempotent, run on every start. Trust
# authentication: no password on the dev stack.
apply_readonly_role() {
  local a
  a=$(pg_addr)
  psql -X -q -h 127.0.0.1 -p "${a##*:}" -U postgres -d perfwatch -v ON_ERROR_STOP=1 \
    -f "$repo/deploy/postgres/readonly-role.sql" >>"$migrate_log" 2>&1 ||
    fail_start postgres "could not set up the read-only role \"perfwatch_ro\"" "$migrate_log"
}

run_migrations() {
  local migrate=$1 dsn=$2
  "$migrate" --dsn "$dsn" --dir "$repo/migrations" >"$migrate_log" 2>&1 ||
    fail_start migrations "$migrate failed" "$migrate_log"
  say "migrations applied from $repo/migrations (log: $migrate_log)"
}

write_env() {
  local pg redis kafka tmp=$env_file.tmp.$$
  pg=$(pg_addr)
  redis=$(redis_addr "$(redis_pid)")
  kafka=$(kafka_addr)
  cat >"$tmp" <<EOF
# stack.env: written by deploy/dev/stack.sh start for the running dev stack.
# Shell syntax; load with: set -a; . $env_file; set +a
PW_PG_DSN='host=127.0.0.1 port=${pg##*:} dbname=perfwatch user=perfwatch'
PW_REDIS_ADDR='$redis'
PW_KAFKA_BOOTSTRAP_SERVERS='$kafka'
PW_RUN_DIR='$run_dir'
EOF
  mv -f "$tmp" "$env_file"
}

cmd_start() {
  local build=${1:-} fresh=${2:-}
  [ -n "$build" ] || usage
  [ -z "$fresh" ] || [ "$fresh" = --fresh ] || usage
  case $build in /*) ;; *) build=$PWD/$build ;; esac
  local topics_bin=$build/tools/pw-topics migrate_bin=$build/tools/pw-migrate
  # Missing binaries fail before anything starts.
  [ -x "$topics_bin" ] || die "pw-topics not found at $topics_bin; build it first (make build): start needs it to create the topics"
  [ -x "$migrate_bin" ] || die "pw-migrate not found at $migrate_bin; build it first (make build): start needs it to apply migrations/"
  local t0
  t0=$(now)
  mkdir -p "$run_dir"
  chmod a+rx "$run_dir" 2>/dev/null || true
  exec 9>"$run_dir/.stack.lock"
  flock -w 60 9 || die "another stack.sh holds $run_dir/.stack.lock"
  if [ -n "$fresh" ]; then
    if pg_pid >/dev/null || redis_pid >/dev/null || kafka_pid >/dev/null; then
      die "--fresh needs a stopped stack; run \"stack.sh stop\" first"
    fi
    rm -rf "$pg_dir" "$redis_dir" "$kafka_dir" "$env_file" "$migrate_log"
    say "deleted the previous stack's data under $run_dir"
  fi
  start_pg
  start_redis
  start_kafka "$topics_bin"
  local pg
  pg=$(pg_addr)
  run_migrations "$migrate_bin" "host=127.0.0.1 port=${pg##*:} dbname=perfwatch user=perfwatch"
  apply_readonly_role
  write_env
  say "ready in $(elapsed "$t0") s; env: $env_file (stop with: $repo/deploy/dev/stack.sh stop)"
}

# stop_servers NAME...: TERM (postgres: SIGINT, its fast shutdown), wait up to
# 3 s (the Kafka node 30 s: a controlled shutdown closes its log cleanly, so
# the next start needs no recovery), then KILL whatever is left, postgres
# children included; verifies.
stop_servers() {
  local -A pids=()
  local name pid
  for name in "$@"; do
    case $name in
      postgres) pid=$(pg_pid) || continue ;;
      redis) pid=$(redis_pid) || continue ;;
      kafka) pid=$(kafka_pid) || continue ;;
    esac
    pids[$name]=$pid
  done
  if [ ${#pids[@]} -eq 0 ]; then
    say "nothing running"
    return 0
  fi
  local pg_children=""
  [ -z "${pids[postgres]:-}" ] || pg_children=$(pgrep -P "${pids[postgres]}" | tr '\n' ' ' || true)
  for name in "${!pids[@]}"; do
    if [ "$name" = postgres ]; then kill -INT "${pids[$name]}" 2>/dev/null || true
    else kill -TERM "${pids[$name]}" 2>/dev/null || true; fi
  done
  local i left limit=30
  [ -z "${pids[kafka]:-}" ] || limit=300
  for ((i = 0; i < limit; i++)); do
    left=""
    for name in "${!pids[@]}"; do
      ! alive "${pids[$name]}" || left+="$name "
    done
    [ -n "$left" ] || break
    [ $i -lt 30 ] || [ "$left" = "kafka " ] || break
    sleep 0.1
  done
  for name in "${!pids[@]}"; do
    if alive "${pids[$name]}"; then
      echo "stack: $name (pid ${pids[$name]}) ignored TERM; sending KILL" >&2
      kill -KILL "${pids[$name]}" 2>/dev/null || true
    fi
  done
  # Postgres backends normally exit with the postmaster; make sure.
  for pid in $pg_children; do
    ! alive "$pid" || kill -KILL "$pid" 2>/dev/null || true
  done
  sleep 0.1
  local still=""
  for name in "${!pids[@]}"; do
    ! alive "${pids[$name]}" || still+="$name(${pids[$name]}) "
  done
  for pid in $pg_children; do
    ! alive "$pid" || still+="postgres-child($pid) "
  done
  [ -z "$still" ] || die "still alive after KILL: $still"
  # A KILLed broker or redis leaves its files behind.
  [ -z "${pids[kafka]:-}" ] || rm -f "$kafka_bootstrap" "$kafka_pidfile"
  [ -z "${pids[redis]:-}" ] || rm -f "$redis_pidfile"
  for name in "${!pids[@]}"; do say "$name stopped (pid ${pids[$name]})"; done
}

cmd_stop() {
  local t0
  t0=$(now)
  [ -d "$run_dir" ] || { say "nothing running (no $run_dir)"; return 0; }
  exec 9>"$run_dir/.stack.lock"
  flock -w 60 9 || die "another stack.sh holds $run_dir/.stack.lock"
  stop_servers kafka redis postgres
  rm -f "$env_file"
  say "stopped in $(elapsed "$t0") s"
}

cmd_status() {
  local up=0 pid
  if pid=$(pg_pid); then
    up=$((up + 1))
    printf '%-10s %-8s pid=%-7s addr=%s  data=%s  log=%s\n' postgres running "$pid" "$(pg_addr)" "$pg_data" "$pg_log"
  else
    printf '%-10s %-8s\n' postgres stopped
  fi
  if pid=$(redis_pid); then
    up=$((up + 1))
    printf '%-10s %-8s pid=%-7s addr=%s  data=%s  log=%s\n' redis running "$pid" "$(redis_addr "$pid")" "$redis_dir/data" "$redis_log"
  else
    printf '%-10s %-8s\n' redis stopped
  fi
  if pid=$(kafka_pid); then
    up=$((up + 1))
    printf '%-10s %-8s pid=%-7s addr=%s  data=%s  log=%s\n' kafka running "$pid" "$(kafka_addr)" "$kafka_data" "$kafka_log"
  else
    printf '%-10s %-8s\n' kafka stopped
  fi
  echo "run folder: $run_dir"
  [ ! -f "$env_file" ] || echo "env file: $env_file"
  [ $up -eq 3 ]
}

cmd_env() {
  [ -f "$env_file" ] || die "no $env_file: the stack is not running (stack.sh start BUILD_DIR)"
  cat "$env_file"
}

cmd_clean() {
  cmd_stop
  rm -rf "$pg_dir" "$redis_dir" "$kafka_dir" "$env_file" "$migrate_log" "$run_dir/.stack.lock"
  say "deleted the stack's data under $run_dir"
}

case ${1:-} in
  start) shift; cmd_start "$@" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) cmd_env ;;
  clean) cmd_clean ;;
  *) usage ;;
esac
