/*
 * main.c: pw-gate, the release gate service: GateRequests in, GateVerdicts
 * and Alerts out through the outbox. What each part does is in
 * gate_service.c; the decisions are gate_eval.c's and gate_policy.c's.
 *
 *   pw-gate [--config FILE]        run
 *   pw-gate --config-reference     print the gate.* keys as docs/config.md does
 *   pw-gate --power-table [--config FILE]
 *                                  print the per-tier n table of §4.5 the gate's
 *                                  configuration gives (pw_gate_power_table)
 */
#include <stdio.h>
#include <string.h>

#include "gate_config.h"
#include "gate_policy.h"
#include "gate_service.h"
#include "pw_config.h"
#include "pw_topics.h"

/* §4.1's net σ with controls: the norms the table is printed at */
#define GATE_SIGMA_NORM_TPU_PCT 0.4
#define GATE_SIGMA_NORM_GPU_PCT 2.0

/* pw-gate --power-table [--config FILE]: the configuration (file, then PW_*
 * variables) as the service would read it, and its table on stdout. */
static int power_table(int argc, char **argv, char **envp, const pw_conf_key *keys, size_t nkeys)
{
	const char *path = NULL;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (strcmp(argv[i], "--power-table") != 0) {
			fprintf(stderr, "pw-gate: unknown argument \"%s\" with --power-table\n", argv[i]);
			return 2;
		}
	char err[512];
	pw_config *cfg = pw_config_new("gate", keys, nkeys, err, sizeof err);
	if (!cfg || pw_config_load(cfg, path, envp, err, sizeof err) != PW_OK) {
		fprintf(stderr, "pw-gate: configuration: %s\n", err);
		pw_config_free(cfg);
		return 2;
	}
	pw_gate_policy policy;
	pw_gate_policy_from_config(cfg, &policy);
	pw_config_free(cfg);
	return pw_gate_power_table(stdout, &policy, GATE_SIGMA_NORM_TPU_PCT,
	                           GATE_SIGMA_NORM_GPU_PCT) == PW_OK ? 0 : 1;
}

static const char *const gate_request_topics[] = {PW_TOPIC_GATE_REQUESTS, NULL};

static const pw_service_input gate_inputs[] = {
	{.name = "requests", .topics = gate_request_topics, .on_batch = pw_gate_requests_batch},
};

/*
 * A GateVerdict lists every gated series: 2,160 of them are about 1 MB, over
 * librdkafka's default message.max.bytes. Allow 16 MiB and compress (the
 * verdicts topic's max.message.bytes must allow it too, see docs/gate.md);
 * settings of the operator's own win.
 */
static const pw_kv gate_producer_props[] = {
	{"message.max.bytes", "16777216"},
	{"compression.type", "lz4"},
};

int main(int argc, char **argv, char **envp)
{
	pw_service_def def = {
		.name = "gate",
		.summary = "the release gate: a candidate's runs against the baseline release, "
		           "with release-wide FDR",
		.producer_props = gate_producer_props,
		.nproducer_props = sizeof gate_producer_props / sizeof gate_producer_props[0],
		.pg = true,
		.redis = true,  /* the baseline cache (common/pw_baseline_cache.h) */
		.outbox = true,
		.init = pw_gate_init,
		.release = pw_gate_release_app,
		.inputs = gate_inputs,
		.ninputs = sizeof gate_inputs / sizeof gate_inputs[0],
		.worker_init = pw_gate_worker_init,
		.tick = pw_gate_tick,
		.tick_key = "gate.poll_interval",
	};
	def.keys = pw_gate_config_keys(&def.nkeys);
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--power-table") == 0)
			return power_table(argc, argv, envp, def.keys, def.nkeys);
	return pw_service_main(&def, argc, argv, envp);
}
