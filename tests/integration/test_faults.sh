#!/usr/bin/env bash
# test_faults.sh: the short run of the fault-injection harness (issue 19), in
# CI through tests/integration/run.sh: worked-example scaled to 4 models
# (12,420 samples, then eleven more nightlies: 2,970) through all seven
# services, once uninterrupted and once with every fault kind injected once
# at points drawn from a seed (kill -9 of each service, PostgreSQL restart,
# Redis down 20 s, the Kafka node killed -9 and down 12 s, one consumer
# SIGSTOPped past its session timeout; PW_FAULTS_BROKER=no leaves the broker
# out). The 200,000-sample runs are
# `tests/faults/faults.sh --models 56` (one round) and `make faults-soak`;
# they do not fit CI's four minutes. tests/faults/faults.sh says what is
# compared; docs/operations.md, "Fault injection", what each fault does.
# PW_FAULTS_SEED reproduces a run (the seed is printed first);
# PW_FAULTS_MODELS scales it.
set -euo pipefail
export PW_FAULTS_GAP=${PW_FAULTS_GAP:-6}
args=(--models "${PW_FAULTS_MODELS:-4}" --rounds 1 --broker "${PW_FAULTS_BROKER:-yes}")
[ -z "${PW_FAULTS_SEED:-}" ] || args+=(--seed "$PW_FAULTS_SEED")
exec tests/faults/faults.sh "${args[@]}"
