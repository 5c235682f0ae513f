/*
 * main.c: pw-gate, the release gate service: GateRequests in, GateVerdicts
 * and Alerts out through the outbox. What each part does is in
 * gate_service.c; the decisions are gate_eval.c's and gate_policy.c's.
 *
 *   pw-gate [--config FILE]        run
 *   pw-gate --config-reference     print the gate.* keys as docs/config.md does
 */
#include "gate_config.h"
#include "gate_service.h"
#include "pw_topics.h"

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
	return pw_service_main(&def, argc, argv, envp);
}
