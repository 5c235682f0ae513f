#!/usr/bin/env bash
# test_kcat.sh: an independent Kafka client (kcat) sees what the project wrote.
#
# Run by tests/integration/run.sh with the dev stack up and run/stack.env
# loaded. kcat lists the dev broker's topics (perf.runs.v1 with the partition
# count of common/pw_topics.c), then finds the RunResult that
# `it_roundtrip --produce-one` published with the project's producer, by its
# key (the run_id), reads its payload back raw, and Debian's protoc decodes it
# as perfwatch.v1.RunResult from proto/perfwatch/v1/run.proto. So the bytes on
# the wire are plain protobuf any Kafka consumer can read.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
. tests/integration/lib.sh
need_env PW_BUILD PW_KAFKA_BOOTSTRAP_SERVERS
bs=$PW_KAFKA_BOOTSTRAP_SERVERS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# --- kcat -L: the broker's topics -------------------------------------------
timeout 20 kcat -L -b "$bs" -m 10 >"$tmp/meta" || { echo "FAIL: kcat -L -b $bs failed"; exit 1; }
want_parts=$(awk '$1 == "perf.runs.v1" { print $2 }' < <("$PW_BUILD/tools/pw-topics" list))
got_parts=$(awk '/^  topic "perf.runs.v1"/ { print $4 }' "$tmp/meta")
ntopics=$(grep -c '^  topic "' "$tmp/meta" || true)
if [ -n "$got_parts" ] && [ "$got_parts" = "$want_parts" ]; then
  ok "kcat -L lists $ntopics topics, perf.runs.v1 with $got_parts partitions"
else
  fail "kcat -L: perf.runs.v1 has \"$got_parts\" partitions, want \"$want_parts\""
fi

# --- a message the project's producer wrote, read by kcat ---------------------
# (awk reads to the end: leaving early would break kcat's pipe once other
# tests have filled the topic, and pipefail would fail the test)
run_id=$("$PW_BUILD/tests/it_roundtrip" --produce-one) || { echo "FAIL: it_roundtrip --produce-one failed"; exit 1; }
ok "project producer published run_id $run_id"
pos=$(timeout 60 kcat -C -b "$bs" -t perf.runs.v1 -o beginning -e -q -f '%k %p %o\n' |
  awk -v k="$run_id" '$1 == k && !found { found = 1; print $2, $3 }')
if [ -z "$pos" ]; then
  fail "kcat did not find key $run_id on perf.runs.v1"
else
  read -r part off <<<"$pos"
  ok "kcat found key $run_id at perf.runs.v1 [$part] offset $off"
  timeout 30 kcat -C -b "$bs" -t perf.runs.v1 -p "$part" -o "$off" -c 1 -e -q -f '%s' >"$tmp/payload.bin"
  if protoc --decode=perfwatch.v1.RunResult -I proto proto/perfwatch/v1/run.proto \
       <"$tmp/payload.bin" >"$tmp/decoded.txt" 2>"$tmp/protoc.err"; then
    ok "protoc decodes the payload ($(wc -c <"$tmp/payload.bin") bytes) as perfwatch.v1.RunResult"
    for want in "run_id: \"$run_id\"" 'model: "chat-8b"' 'hlo_fingerprint: "hlo:9f31c2ab"' \
                'cl: "cl/7841917"' 'name: "tpot_p50_ms"' 'load_mode: LOAD_MODE_OPEN_LOOP'; do
      if grep -qF "$want" "$tmp/decoded.txt"; then ok "decoded field $want"; else fail "decoded payload lacks $want"; fi
    done
  else
    fail "protoc --decode failed: $(cat "$tmp/protoc.err")"
  fi
fi

[ $failures -eq 0 ] || { echo "test_kcat: $failures failure(s)"; exit 1; }
echo "test_kcat: PASS"
