#!/usr/bin/env bash
# test_faults.sh: the short run of the fault-injection harness (issue 19), in
# CI through tests/integration/run.sh: worked-example scaled to 56 models
# (227,700 samples, then eleven more nightlies) through all seven services,
# once uninterrupted and once with every fault kind injected once at points
# drawn from a seed (kill -9 of each service, PostgreSQL restart, Redis down
# 20 s, one consumer SIGSTOPped past its session timeout), then a third run
# with the dev broker restarted. tests/faults/faults.sh says what is compared;
# docs/operations.md, "Fault injection", what each fault does.
# PW_FAULTS_SEED reproduces a run (the seed is printed first).
set -euo pipefail
export PW_FAULTS_GAP=${PW_FAULTS_GAP:-6}
args=(--models "${PW_FAULTS_MODELS:-4}" --rounds 1 --broker yes)
[ -z "${PW_FAULTS_SEED:-}" ] || args+=(--seed "$PW_FAULTS_SEED")
exec tests/faults/faults.sh "${args[@]}"
