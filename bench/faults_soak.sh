#!/usr/bin/env bash
# faults_soak.sh: the long run of the fault-injection harness (`make
# faults-soak`): worked-example scaled to 112 models (455,400 samples, then
# eleven more nightlies), every fault kind injected three times, then the
# broker-restart run. The short run is tests/integration/test_faults.sh (CI).
# PW_FAULTS_SOAK_MODELS, PW_FAULTS_SOAK_ROUNDS and PW_FAULTS_SEED change it.
set -euo pipefail
cd "$(dirname "$0")/.."
args=(--models "${PW_FAULTS_SOAK_MODELS:-112}" --rounds "${PW_FAULTS_SOAK_ROUNDS:-3}" --broker yes)
[ -z "${PW_FAULTS_SEED:-}" ] || args+=(--seed "$PW_FAULTS_SEED")
exec tests/faults/faults.sh "${args[@]}"
