#!/usr/bin/env bash
# test_dlq_replay.sh: the runbook's dead-letter replay (deploy/dlq-replay.sh)
# on the dev stack, for the case it exists for: good input rejected by a
# misconfigured or buggy release. An ingester whose ingest.max.age.days is 1
# dead-letters every run of a 20-run replay of the worked example (its runs
# are from June 2026); the ingester is restarted with the default, the
# dead letters of this test's runs are replayed, and then: every run and
# sample is stored exactly once, every dead letter is marked replayed, none
# was added by the replay, and a second replay finds nothing to do. The runs
# are keyed by run id (pw-sim --runs-key run_id, as producers before
# pw_runs_key did; the ingester accepts any key), so that this test's dead
# letters are found by their key's prefix, the run prefix.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD PW_PG_DSN PW_KAFKA_BOOTSTRAP_SERVERS PW_RUN_DIR
need_tools kcat xxd psql
sim=$PW_BUILD/tools/simulator/pw-sim
pw=$PW_BUILD/tools/perfwatch
ing=$PW_BUILD/services/ingester/pw-ingester
need_bins "$sim" "$pw" "$ing"
repo=$(cd "$(dirname "$0")/../.." && pwd)
. tests/integration/lib_ingest.sh

tag=dlq$$
prefix=$tag-
group=perfwatch-ingester-$tag
work=$PW_RUN_DIR/it-dlq-$$
mkdir -p "$work"
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pid=""
trap '[ -z "$pid" ] || { kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; } || true' EXIT
scn=$repo/tools/simulator/scenarios/worked-example.scn
dl="SELECT count(*) FROM perfwatch.dead_letters WHERE service = 'ingester' AND convert_from(original_key, 'UTF8') LIKE '$prefix%'"

start_ingester() {
  env "$@" PW_HTTP_PORT=0 PW_INGEST_WORKERS=1 PW_KAFKA_GROUP_ID="$group" "$ing" >"$work/ingester.$#.log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do
    grep -q '"msg":"kafka partitions assigned' "$work/ingester.$#.log" && return 0
    sleep 0.1
  done
  echo "FAIL: the ingester got no partitions"; tail -5 "$work/ingester.$#.log"; exit 1
}
stop_ingester() { kill -TERM "$pid"; wait "$pid" || true; pid=""; }

"$pw" group to-end "$group" perf.runs.v1 >/dev/null
start_ingester PW_INGEST_MAX_AGE_DAYS=1
"$sim" replay "$scn" --limit 20 --namespace "$tag" --run-prefix "$prefix" --runs-key run_id >"$work/sim.log" 2>&1
"$pw" group lag "$group" --wait 120 perf.runs.v1 >/dev/null || fail "the misconfigured ingester did not catch up"
stop_ingester
n_dl=$(q "$dl")
n_runs=$(q "SELECT count(*) FROM perfwatch.runs WHERE run_id LIKE '$prefix%'")
[ "$n_dl" -gt 0 ] && [ "$n_runs" = 0 ] && pass "the misconfigured ingester dead-lettered $n_dl messages and stored no run" ||
  fail "expected dead letters and no runs, got $n_dl dead letters and $n_runs runs"

start_ingester
deploy/dlq-replay.sh --service ingester --key-prefix "$prefix" --dry-run >"$work/dry.txt"; head -n 1 "$work/dry.txt"
# only this test's messages (by key): the dev database holds other tests' dead letters
out=$(deploy/dlq-replay.sh --service ingester --topic perf.runs.v1 --key-prefix "$prefix")
echo "$out"
echo "$out" | grep -qx "dlq-replay: replayed $n_dl of $n_dl" && pass "replayed $n_dl messages" || fail "replay output: $out"
"$pw" group lag "$group" --wait 120 perf.runs.v1 >/dev/null || fail "the fixed ingester did not catch up"
stop_ingester

runs=$(q "SELECT count(*) FROM perfwatch.runs WHERE run_id LIKE '$prefix%'")
samples=$(q "SELECT count(*) FROM perfwatch.samples WHERE run_id LIKE '$prefix%'")
want=$("$sim" count "$scn" --limit 20 | grep -o '"runs":[0-9]*,"samples":[0-9]*')
[ "$want" = "\"runs\":$runs,\"samples\":$samples" ] && pass "after the replay: $runs runs, $samples samples, as the replay has ($want)" ||
  fail "after the replay: $runs runs, $samples samples; the replay has $want"
stored_exactly_once "$prefix" "$runs" "$samples" && pass "stored exactly once"
[ "$(q "$dl AND replayed_at IS NULL")" = 0 ] && pass "every dead letter of the test is marked replayed" || fail "dead letters left unreplayed"
[ "$(q "$dl")" = "$n_dl" ] && pass "the replay added no dead letter" || fail "dead letters: $(q "$dl"), was $n_dl"
again=$(deploy/dlq-replay.sh --service ingester --topic perf.runs.v1 --key-prefix "$prefix")
echo "$again" | grep -q 'replayed 0 of 0' && pass "a second replay has nothing to do" || fail "second replay: $again"

if [ $fails -ne 0 ]; then
  echo "test_dlq_replay: $fails check(s) failed (logs in $work)"
  exit 1
fi
rm -rf "$work"
echo "test_dlq_replay: all checks passed"
