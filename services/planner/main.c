/*
 * main.c: pw-planner, what the fleet runs each nightly, RC and week (seed
 * §1, §5, §9; docs/planner.md): the catalogue, capacity, sweeps and CLs in,
 * one Plan per sweep out on perf.plans.v1 through the outbox, and the CLs'
 * perf-relevance from the static check back on perf.compiler-cls.v1. What a
 * batch and a tick do is in plan_service.c; the decisions are plan.c's.
 *
 *   pw-planner [--config FILE]
 *   pw-planner --recompute SWEEP_ID   (prints the plan an uninterrupted planner
 *                                      makes of what PostgreSQL holds; stores nothing)
 */
#include <string.h>

#include "plan_service.h"
#include "pw_topics.h"

static const char *const topics[] = {PW_TOPIC_CATALOGUE, PW_TOPIC_CAPACITY, PW_TOPIC_SWEEPS,
                                     PW_TOPIC_COMPILER_CLS, NULL};

static const pw_service_input inputs[] = {
	{.name = "inputs", .topics = topics, .on_batch = pw_planner_batch, .outputs = true},
};

static const pw_kv defaults[] = {
	{"kafka.group.id", "perfwatch-planner"},
	{"http.port", "9113"},
};

static const pw_kv producer_props[] = {
	{"message.max.bytes", "5242880"}, /* a 3,000-model RC plan; perf.plans.v1 takes 5 MiB */
};

int main(int argc, char **argv, char **envp)
{
	const pw_service_def def = {
		.name = "planner",
		.summary = "what the fleet runs each nightly, RC and week: the plan per sweep and its chip-hour lines",
		.keys = pw_planner_keys,
		.nkeys = pw_planner_nkeys,
		.defaults = defaults,
		.ndefaults = sizeof defaults / sizeof defaults[0],
		.producer_props = producer_props,
		.nproducer_props = sizeof producer_props / sizeof producer_props[0],
		.pg = true,
		.outbox = true,
		.app_size = pw_planner_app_size(),
		.init = pw_planner_init,
		.inputs = inputs,
		.ninputs = sizeof inputs / sizeof inputs[0],
		.worker_is_ctx = true,
		.tick = pw_planner_tick,
		.tick_key = "planner.tick",
	};
	if (argc == 3 && strcmp(argv[1], "--recompute") == 0)
		return pw_planner_recompute(argv[2], envp, stdout);
	return pw_service_main(&def, argc, argv, envp);
}
