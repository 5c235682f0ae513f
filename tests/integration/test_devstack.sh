#!/usr/bin/env bash
# test_devstack.sh: checks that the dev stack is what the services expect.
#
# Run by tests/integration/run.sh with the stack up and run/stack.env loaded.
# The expected topics come from `pw-topics list`, i.e. from
# common/pw_topics.c, so the table stays the single source of truth. Checks:
# every topic exists on the broker with its partition count, replication and
# cleanup policy; the broker is Apache Kafka in KRaft mode and refuses to
# create a topic on first use; it carries a message end to end; PostgreSQL
# answers as the perfwatch role and holds the migrations table; Redis answers
# PING; every server listens on 127.0.0.1 only; a second `stack.sh start`
# returns 0 and leaves the same processes.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN PW_REDIS_ADDR PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR

failures=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# --- Kafka: topics, partitions, replication ---------------------------------
expected=$("$PW_BUILD/tools/pw-topics" list)
[ -n "$expected" ] || fail "pw-topics list printed nothing"
meta=$(timeout 20 kcat -L -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -m 10) || {
  fail "kcat -L against $PW_KAFKA_BOOTSTRAP_SERVERS failed"
  meta=""
}
brokers=$(awk '/^ [0-9]+ brokers:/ { print $1; exit }' <<<"$meta")
# name partitions min-replicas, one line per topic on the broker
actual=$(awk '
  /^  topic "/ { if (t != "") print t, p, r; t = $2; gsub(/"/, "", t); p = $4; r = 1000; next }
  /^    partition / {
    s = $0; sub(/.*replicas: /, "", s); sub(/,? *isrs:.*/, "", s)
    n = split(s, a, ","); if (n < r) r = n
  }
  END { if (t != "") print t, p, r }' <<<"$meta")
while read -r name parts repl _policy; do
  [ -n "$name" ] || continue
  want_repl=$repl
  [ -z "$brokers" ] || [ "$brokers" -ge "$repl" ] || want_repl=$brokers
  line=$(awk -v n="$name" '$1 == n' <<<"$actual")
  if [ -z "$line" ]; then
    fail "topic $name missing on the broker"
    continue
  fi
  read -r _ got_parts got_repl <<<"$line"
  if [ "$got_parts" != "$parts" ]; then
    fail "topic $name has $got_parts partitions, want $parts"
  elif [ "$got_repl" != "$want_repl" ]; then
    fail "topic $name has $got_repl replicas on some partition, want $want_repl"
  else
    ok "topic $name: $parts partitions, replication $want_repl"
  fi
done <<<"$expected"

# --- Kafka: the broker is a KRaft node of Apache Kafka ------------------------
kafka_log=$PW_RUN_DIR/kafka/kafka.log
if grep -q "Kafka Server started" "$kafka_log" && grep -q "process.roles = \[broker, controller\]" "$kafka_log"; then
  ok "the broker is Apache Kafka $(grep -o 'Kafka version: [0-9.]*' "$kafka_log" | head -n 1 | cut -d' ' -f3) in KRaft combined mode"
else
  fail "$kafka_log does not show a KRaft broker and controller starting"
fi
policies=$(sed -n 's/^created \([^ ]*\) .*cleanup.policy=\([a-z]*\).*/\1 \2/p' "$PW_RUN_DIR/kafka/topics.log" | sort -u)
while read -r name _parts _repl policy _max_bytes; do
  [ -n "$name" ] || continue
  got=$(awk -v n="$name" '$1 == n { print $2 }' <<<"$policies")
  [ "$got" = "$policy" ] || fail "topic $name was created with cleanup.policy=${got:-?}, want $policy"
done <<<"$expected"
ok "every topic was created with its cleanup policy (pw-topics create, $PW_RUN_DIR/kafka/topics.log)"
if echo nope | timeout 20 kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t "pw.devstack.typo.$$" \
    -X message.timeout.ms=5000 2>/dev/null; then
  fail "the broker accepted a message for a topic nobody created"
else
  ok "a topic nobody created is refused, not created on first use"
fi

# --- Kafka: a message end to end (on a test-only topic) ------------------------
topic=pw.devstack.selftest
"$PW_BUILD/tools/pw-topics" create --bootstrap "$PW_KAFKA_BOOTSTRAP_SERVERS" --topic "$topic:1" >/dev/null 2>&1 || true
token="devstack-$$-$RANDOM"
if echo "$token" | timeout 20 kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t "$topic" -k selftest \
    -X acks=all -X enable.idempotence=true 2>/dev/null &&
   got=$(timeout 20 kcat -C -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t "$topic" -o beginning -e -q 2>/dev/null) &&
   grep -qx "$token" <<<"$got"; then
  ok "broker carries a message end to end (idempotent producer, acks=all)"
else
  fail "could not produce and consume a message on $topic"
fi

# --- PostgreSQL ----------------------------------------------------------------
who=$(psql -X "$PW_PG_DSN" -AtF@ -c 'SELECT current_user, current_database()' 2>&1 || true)
if [ "$who" = perfwatch@perfwatch ]; then
  ok "postgresql answers as perfwatch@perfwatch ($PW_PG_DSN)"
else
  fail "postgresql does not answer as perfwatch@perfwatch on \"$PW_PG_DSN\": $who"
fi
# pw-migrate records what it applied in a table; match it by name so this test
# does not fix the runner's table name.
mig=$(psql -X "$PW_PG_DSN" -Atc "SELECT string_agg(table_schema || '.' || table_name, ',')
  FROM information_schema.tables WHERE table_name ILIKE '%migration%'
  AND table_schema NOT IN ('pg_catalog', 'information_schema')" 2>&1 || true)
if [ -n "$mig" ] && ! grep -q ERROR <<<"$mig"; then
  ok "migrations table present: $mig"
else
  fail "no migrations table in the perfwatch database (pw-migrate did not run?) $mig"
fi

# --- Redis -------------------------------------------------------------------------
if [ "$(redis-cli -h "${PW_REDIS_ADDR%:*}" -p "${PW_REDIS_ADDR##*:}" PING 2>&1)" = PONG ]; then
  ok "redis answers PING on $PW_REDIS_ADDR"
else
  fail "redis does not answer PING on $PW_REDIS_ADDR"
fi

# --- every port on 127.0.0.1 only ---------------------------------------------------
pg_port=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' <<<"$PW_PG_DSN")
ports="$pg_port ${PW_REDIS_ADDR##*:}"
IFS=, read -ra bs <<<"$PW_KAFKA_BOOTSTRAP_SERVERS"
for b in "${bs[@]}"; do ports+=" ${b##*:}"; done
if command -v ss >/dev/null; then
  for p in $ports; do
    addrs=$(ss -Hltn "sport = :$p" | awk '{ print $4 }' | sort -u | tr '\n' ' ')
    if [ -n "$addrs" ] && ! grep -qv '^127\.0\.0\.1:' <<<"$(tr ' ' '\n' <<<"$addrs" | grep .)"; then
      ok "port $p listens on 127.0.0.1 only"
    else
      fail "port $p listens on: ${addrs:-nothing}"
    fi
  done
fi

# --- start is idempotent ---------------------------------------------------------
pids() { "$repo/deploy/dev/stack.sh" status | grep -o '^[a-z]* *running *pid=[0-9]*' | tr -s ' ' || true; }
before=$(pids)
t0=$SECONDS
out=$("$repo/deploy/dev/stack.sh" start "$PW_BUILD" 2>&1) && rc=0 || rc=$?
took=$((SECONDS - t0))
after=$(pids)
env_after=$("$repo/deploy/dev/stack.sh" env | grep '^PW_KAFKA_BOOTSTRAP_SERVERS=' || true)
if [ "$rc" -ne 0 ]; then
  fail "second stack.sh start exited $rc: $out"
elif [ "$(wc -l <<<"$before")" -ne 3 ] || [ "$before" != "$after" ]; then
  fail "second start changed the servers: before [$before] after [$after]"
elif [ "$env_after" != "PW_KAFKA_BOOTSTRAP_SERVERS='$PW_KAFKA_BOOTSTRAP_SERVERS'" ]; then
  fail "second start changed the bootstrap list: $env_after"
else
  ok "second start: exit 0 in ${took} s, same pids ($(tr '\n' ';' <<<"$before"))"
fi

if [ $failures -gt 0 ]; then
  echo "test_devstack: $failures check(s) failed"
  exit 1
fi
echo "test_devstack: all checks passed"
