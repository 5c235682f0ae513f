/*
 * main.c: pw-baseliner, the baseliner service: points and fleet changes in,
 * per-series baselines out (PostgreSQL, the Redis cache, perf.baselines.v1),
 * and GET /api/baseline. The wiring is baseliner_service.c's, one batch is
 * baseliner.c's, the decisions are baseline.c's and series_table.c's.
 *
 *   pw-baseliner [--config FILE]
 */
#include "baseliner.h"
#include "baseliner_config.h"
#include "baseliner_service.h"
#include "pw_topics.h"

/* changepoints, waived gate verdicts and true triage verdicts: shifts accepted (accept.h) */
static const char *const bl_topics[] = {PW_TOPIC_POINTS, PW_TOPIC_FLEET_CHANGES,
                                        PW_TOPIC_CHANGEPOINTS, PW_TOPIC_GATE_VERDICTS,
                                        PW_TOPIC_TRIAGE, NULL};

/* One worker: the series table is its own; the batch flushes its own outputs. */
static const pw_service_input bl_inputs[] = {
	{.name = "points", .topics = bl_topics, .on_batch = pw_baseliner_batch},
};

static const pw_kv bl_defaults[] = {{"http.port", "9632"}};

int main(int argc, char **argv, char **envp)
{
	pw_service_def def = {
		.name = "baseliner",
		.summary = "the baseliner: per-series null windows, quarantine and fleet-change freezes",
		.defaults = bl_defaults,
		.ndefaults = sizeof bl_defaults / sizeof bl_defaults[0],
		.pg = true,
		.redis = true,
		.outbox = true, /* re-baseline jobs (issue 17) */
		.init = pw_bl_init,
		.release = pw_bl_release,
		.inputs = bl_inputs,
		.ninputs = sizeof bl_inputs / sizeof bl_inputs[0],
		.worker_init = pw_bl_worker_init,
		.worker_release = pw_bl_worker_release,
		.tick = pw_bl_tick, /* noise floors re-derived (§4.2) */
		.tick_key = "baseliner.noise_floor.check",
		.stopped = pw_bl_stopped,
	};
	def.keys = pw_baseliner_config_keys(&def.nkeys);
	return pw_service_main(&def, argc, argv, envp);
}
