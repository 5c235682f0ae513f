/*
 * main.c: pw-watcher, the changepoint watcher service (issue 7, §4.3b):
 * nightly points, fleet changes and baselines in; Changepoints and Alerts out
 * through the outbox. What a batch does is in watch_service.c; the decisions
 * are watch.c's and watch_emit.c's.
 *
 *   pw-watcher [--config FILE]
 */
#include "pw_topics.h"
#include "watch_config.h"
#include "watch_service.h"

static const char *const watcher_topics[] = {PW_TOPIC_POINTS, PW_TOPIC_FLEET_CHANGES,
                                             PW_TOPIC_BASELINES, NULL};

/*
 * One worker: the series table is its own, in the partitions' order. A
 * series' points and baselines carry its id as their key, so a member must
 * hold the same partitions of both topics: range assignment.
 */
static const pw_service_input watcher_inputs[] = {
	{.name = "points", .topics = watcher_topics, .on_batch = pw_watcher_batch,
	 .co_partitioned = true},
};

static const pw_kv watcher_defaults[] = {
	{"http.port", "9107"},
	{"service.stop.flush.ms", "10s"},
};

int main(int argc, char **argv, char **envp)
{
	pw_service_def def = {
		.name = "watcher",
		.summary = "the changepoint watcher: shifts in nightly series, their day and CL range",
		.defaults = watcher_defaults,
		.ndefaults = sizeof watcher_defaults / sizeof watcher_defaults[0],
		.pg = true,
		.redis = true,  /* the baseline cache (common/pw_baseline_cache.h) */
		.outbox = true,
		.init = pw_watcher_init,
		.release = pw_watcher_release,
		.inputs = watcher_inputs,
		.ninputs = sizeof watcher_inputs / sizeof watcher_inputs[0],
		.worker_init = pw_watcher_worker_init,
	};
	def.keys = pw_watch_config_keys(&def.nkeys);
	return pw_service_main(&def, argc, argv, envp);
}
