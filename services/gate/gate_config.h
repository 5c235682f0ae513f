/*
 * gate_config.h: the release gate's configuration keys (gate.*) and how they
 * become the policy of gate_eval.h.
 *
 * main.c builds its pw_config from pw_config_common_keys() plus this table;
 * `pw-gate --config-reference` prints the table in the format of
 * docs/config.md, which is where docs/gate.md's key table comes from, and
 * tests/unit/test_gate_policy.c builds a configuration from it once so that
 * a malformed key fails a unit test rather than a start-up.
 */
#ifndef PW_GATE_CONFIG_H
#define PW_GATE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "gate_eval.h"
#include "pw_config.h"

/* The gate's own keys (a static table) and their number in *n. */
const pw_conf_key *pw_gate_config_keys(size_t *n);

/* The thresholds of cfg (built with pw_gate_config_keys) into *p. */
void pw_gate_policy_from_config(const pw_config *cfg, pw_gate_policy *p);

#endif
