/*
 * main.c: pw-canary, the production canary (seed §8; docs/canary.md, "The
 * canary service"): live windows of canary and baseline replicas in from
 * perf.canary.v1, one always-valid sequence per (rollout, family, metric),
 * and per family one decision — PROMOTE, ROLLBACK to the pre-staged N−1
 * artifact, or HOLD — out on perf.rollouts.v1 through the outbox, once.
 * What a batch does is in canary_service.c; the decisions are canary.c's.
 *
 *   pw-canary [--config FILE]
 */
#include "canary_service.h"
#include "pw_topics.h"

static const char *const topics[] = {PW_TOPIC_CANARY, NULL};

static const pw_service_input inputs[] = {
	{.name = "windows", .topics = topics, .on_batch = pw_canary_batch, .outputs = true},
};

static const pw_kv defaults[] = {
	{"kafka.group.id", "perfwatch-canary"},
	{"http.port", "9114"},
};

int main(int argc, char **argv, char **envp)
{
	const pw_service_def def = {
		.name = "canary",
		.summary = "the production canary: per rollout and family PROMOTE, HOLD or ROLLBACK from live windows",
		.keys = pw_canary_keys,
		.nkeys = pw_canary_nkeys,
		.defaults = defaults,
		.ndefaults = sizeof defaults / sizeof defaults[0],
		.pg = true,
		.outbox = true,
		.app_size = pw_canary_app_size(),
		.init = pw_canary_init,
		.inputs = inputs,
		.ninputs = sizeof inputs / sizeof inputs[0],
		.worker_init = pw_canary_worker_init,
		.worker_release = pw_canary_worker_release,
		.tick = pw_canary_tick,
		.tick_key = "canary.pin.check_interval",
		.release = pw_canary_release,
	};
	return pw_service_main(&def, argc, argv, envp);
}
