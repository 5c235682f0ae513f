/*
 * main.c: pw-bisector, the bisection scheduler (seed §6.1, artifact 4): the
 * CL feed and regression alerts in; BisectJobs, Bisections and the alerts'
 * follow-ups out through the outbox. What a batch and the tick do is in
 * bisector_service.c; the decisions are bisect.c's and confirm.c's.
 *
 *   pw-bisector [--config FILE]
 */
#include "bisector_service.h"
#include "pw_topics.h"

static const char *const topics[] = {PW_TOPIC_COMPILER_CLS, PW_TOPIC_ALERTS, NULL};

static const pw_service_input inputs[] = {
	{.name = "alerts", .topics = topics, .on_batch = pw_bisector_batch, .outputs = true},
};

static const pw_kv defaults[] = {
	{"kafka.group.id", "perfwatch-bisector"},
	{"http.port", "9111"},
};

int main(int argc, char **argv, char **envp)
{
	pw_service_def def = {
		.name = "bisector",
		.summary = "bisects each regression event to a verified culprit CL",
		.defaults = defaults,
		.ndefaults = sizeof defaults / sizeof defaults[0],
		.pg = true,
		.outbox = true,
		.app_size = pw_bisector_app_size(),
		.init = pw_bisector_init,
		.inputs = inputs,
		.ninputs = sizeof inputs / sizeof inputs[0],
		.worker_is_ctx = true,
		.tick = pw_bisector_tick,
		.tick_key = "bisector.tick",
	};
	def.keys = pw_bisector_config_keys(&def.nkeys);
	return pw_service_main(&def, argc, argv, envp);
}
