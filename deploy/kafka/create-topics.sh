#!/bin/sh
# create-topics.sh: creates perfwatch's topics on a real Kafka cluster from
# topics.txt (name, partitions, replication, cleanup policy: the table of
# common/pw_topics.c, as `pw-topics list` prints it;
# tests/integration/test_deploy.sh checks that the two agree). Topics that
# exist are left alone (--if-not-exists); a replication factor above the
# cluster's broker count is capped by PW_TOPIC_MAX_REPLICATION.
#   create-topics.sh BOOTSTRAP [TOPICS_FILE]
# Runs inside the apache/kafka image (deploy/compose.yaml, service "topics").
set -eu
bootstrap=$1
file=${2:-/etc/perfwatch/topics.txt}
maxrep=${PW_TOPIC_MAX_REPLICATION:-3}
kt=${KAFKA_TOPICS:-/opt/kafka/bin/kafka-topics.sh}
while read -r name parts rep cleanup maxbytes; do
  case $name in ''|'#'*) continue ;; esac
  [ "$rep" -le "$maxrep" ] || rep=$maxrep
  set -- --config "cleanup.policy=$cleanup"
  [ -z "$maxbytes" ] || set -- "$@" --config "max.message.bytes=$maxbytes"
  "$kt" --bootstrap-server "$bootstrap" --create --if-not-exists --topic "$name" \
    --partitions "$parts" --replication-factor "$rep" "$@"
done <"$file"
"$kt" --bootstrap-server "$bootstrap" --list
