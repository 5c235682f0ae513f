/*
 * main.c: pw-attributor, the attribution worker (seed §6.2–6.3): regression
 * alerts and culprits in, Attributions out through the outbox. What a batch
 * does is in attr_service.c; the decisions are attribute.c's.
 *
 *   pw-attributor [--config FILE]
 */
#include "attr_service.h"
#include "pw_topics.h"

static const char *const topics[] = {PW_TOPIC_ALERTS, PW_TOPIC_BISECTIONS, NULL};

static const pw_service_input inputs[] = {
	{.name = "alerts", .topics = topics, .on_batch = pw_attributor_batch, .outputs = true},
};

static const pw_kv defaults[] = {
	{"kafka.group.id", "perfwatch-attributor"},
	{"http.port", "9110"},
};

int main(int argc, char **argv, char **envp)
{
	const pw_service_def def = {
		.name = "attributor",
		.summary = "per-op diff, HLO diff and roofline check for every regression alert and culprit",
		.defaults = defaults,
		.ndefaults = sizeof defaults / sizeof defaults[0],
		.pg = true,
		.outbox = true,
		.app_size = pw_attributor_app_size(),
		.init = pw_attributor_init,
		.inputs = inputs,
		.ninputs = sizeof inputs / sizeof inputs[0],
		.worker_is_ctx = true,
	};
	return pw_service_main(&def, argc, argv, envp);
}
