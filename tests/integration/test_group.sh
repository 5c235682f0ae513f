#!/usr/bin/env bash
# test_group.sh: `perfwatch group to-end` and `perfwatch group lag` against
# the dev broker (pw_kafka_group_commit_ends, pw_kafka_group_lag).
#
# A group placed at the end of perf.triage.v1 (3 partitions; nothing in the
# tests consumes it) has lag 0; five messages published after it give lag 5
# whatever their partitions; placing it at the end again gives 0; --wait
# returns at once at 0 and fails with exit 1 when the lag stays; an unknown
# topic is exit 2 with a message. Run by tests/integration/run.sh.
set -euo pipefail
. tests/integration/lib.sh
need_env PW_KAFKA_BOOTSTRAP_SERVERS PW_BUILD
pw=$PW_BUILD/tools/perfwatch
group=test-group-$$-$(date +%s)
topic=perf.triage.v1
fail() { echo "test_group: FAIL: $*" >&2; exit 1; }
lag() { "$pw" group lag "$group" "$@" "$topic" | grep -o '"lag":[0-9]*' | cut -d: -f2; }

out=$("$pw" group to-end "$group" "$topic") || fail "to-end: $out"
[ "$out" = "{\"group\":\"$group\",\"partitions_at_end\":3}" ] || fail "to-end printed $out"
[ "$(lag)" = 0 ] || fail "lag after to-end is $(lag), want 0"
for i in 1 2 3 4 5; do echo "k$i:v$i"; done | kcat -P -b "$PW_KAFKA_BOOTSTRAP_SERVERS" -t "$topic" -K: -q
[ "$(lag)" = 5 ] || fail "lag after 5 messages is $(lag), want 5"
if "$pw" group lag "$group" --wait 1 "$topic" >/dev/null; then fail "--wait returned 0 with lag 5"; fi
"$pw" group to-end "$group" "$topic" >/dev/null
[ "$(lag --wait 5)" = 0 ] || fail "lag after the second to-end is not 0"
set +e
err=$("$pw" group lag "$group" perf.nope.v1 2>&1 >/dev/null)
rc=$?
set -e
[ $rc -eq 2 ] && [[ $err == *'unknown topic "perf.nope.v1"'* ]] || fail "unknown topic: exit $rc, \"$err\""
echo "test_group: PASS"
