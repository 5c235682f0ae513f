#!/usr/bin/env bash
# dlq-replay.sh: re-publishes dead-lettered messages to their source topic,
# after the cause was fixed (docs/operations.md, "Replaying the dead-letter
# queue"). Reads perfwatch.dead_letters (the original key and payload are
# kept verbatim), produces each message with its original key on its source
# topic (kcat -P: one file, one message), and sets replayed_at once the broker
# acknowledged it. A message several services dead-lettered (one row each:
# the baseliner and the watcher both read perf.fleet-changes.v1) goes out
# once, and every row of its source position is marked: on its topic it
# reaches every consumer again. Messages already replayed are skipped, so an
# interrupted replay can be run again. A message that fails again is dead-lettered again,
# under its new offset. The services are idempotent: a message that was in
# fact stored once is harmless.
#
#   deploy/dlq-replay.sh [--service S] [--topic T] [--reason R] [--since TIME]
#                        [--key-prefix P] [--dry-run]
#
# Environment: PW_PG_DSN (as a role that may UPDATE perfwatch.dead_letters,
# e.g. perfwatch), PW_KAFKA_BOOTSTRAP_SERVERS. Needs psql, kcat and xxd.
set -euo pipefail

die() { echo "dlq-replay: $*" >&2; exit 1; }
where="replayed_at IS NULL AND original_payload IS NOT NULL"
dry=0
quote() { printf "'%s'" "${1//\'/\'\'}"; }
while [ $# -gt 0 ]; do
  case $1 in
    --service) where+=" AND service = $(quote "$2")"; shift 2 ;;
    --topic) where+=" AND source_topic = $(quote "$2")"; shift 2 ;;
    --reason) where+=" AND reason = $(quote "$2")"; shift 2 ;;
    --since) where+=" AND failed_at >= $(quote "$2")::timestamptz"; shift 2 ;;
    --key-prefix) where+=" AND starts_with(convert_from(original_key, 'UTF8'), $(quote "$2"))"; shift 2 ;;
    --dry-run) dry=1; shift ;;
    *) die "unknown argument \"$1\" (see the usage at the top of the script)" ;;
  esac
done
: "${PW_PG_DSN:?set PW_PG_DSN}"
: "${PW_KAFKA_BOOTSTRAP_SERVERS:?set PW_KAFKA_BOOTSTRAP_SERVERS}"
for t in psql kcat xxd; do command -v "$t" >/dev/null || die "$t is not installed"; done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -F ' ' -c "SELECT source_topic, kafka_partition, kafka_offset, k, p FROM (
  SELECT DISTINCT ON (source_topic, kafka_partition, kafka_offset) source_topic, kafka_partition, kafka_offset,
         coalesce(encode(original_key, 'hex'), '-') AS k, encode(original_payload, 'hex') AS p, failed_at
    FROM perfwatch.dead_letters WHERE $where
   ORDER BY source_topic, kafka_partition, kafka_offset, failed_at) one_per_position
  ORDER BY failed_at, source_topic, kafka_partition, kafka_offset" >"$tmp/rows"
total=$(wc -l <"$tmp/rows")
echo "dlq-replay: $total message(s) to replay"
[ "$dry" -eq 0 ] || { awk '{ print "  " $1 " [" $2 "] @" $3 }' "$tmp/rows"; exit 0; }
done_n=0
while read -r topic part off key payload; do
  printf '%s' "$payload" | xxd -r -p >"$tmp/msg"
  args=(-P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t "$topic" -X enable.idempotence=true)
  [ "$key" = - ] || args+=(-k "$(printf '%s' "$key" | xxd -r -p)")
  kcat "${args[@]}" "$tmp/msg" 2>"$tmp/kcat.err" || die "producing $topic [$part] @$off failed: $(tail -n 1 "$tmp/kcat.err")"
  psql "$PW_PG_DSN" -XAtq -v ON_ERROR_STOP=1 -c "UPDATE perfwatch.dead_letters SET replayed_at = now()
    WHERE source_topic = $(quote "$topic") AND kafka_partition = $part AND kafka_offset = $off" >/dev/null
  done_n=$((done_n + 1))
done <"$tmp/rows"
echo "dlq-replay: replayed $done_n of $total"
