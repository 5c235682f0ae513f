/*
 * main.c: pw-pager, one page per real event (seed §8): findings in
 * (perf.alerts.v1, perf.gate.verdicts.v1, perf.changepoints.v1,
 * perf.bisections.v1, perf.attributions.v1) and the production canary's
 * rollbacks (perf.rollouts.v1), incidents, pages, tickets and
 * notices out, delivered from the tick, the triage page on the HTTP server.
 * What a batch and the tick do is in pager_service.c; the decisions are
 * incident.c's, route.c's and payload.c's.
 *
 *   pw-pager [--config FILE]
 */
#include "pager_service.h"
#include "pw_topics.h"

static const char *const pager_topics[] = {PW_TOPIC_ALERTS, PW_TOPIC_GATE_VERDICTS, PW_TOPIC_CHANGEPOINTS,
                                           PW_TOPIC_BISECTIONS, PW_TOPIC_ATTRIBUTIONS, PW_TOPIC_ROLLOUTS, NULL};

/* One worker per replica: the replicas of a deployment handle messages one at a time under its lock. */
static const pw_service_input pager_inputs[] = {
	{.name = "findings", .topics = pager_topics, .on_batch = pw_pager_batch, .outputs = true},
};

static const pw_kv pager_defaults[] = {
	{"kafka.group.id", "perfwatch-pager"},
	{"http.port", "9112"},
};

int main(int argc, char **argv, char **envp)
{
	pw_service_def def = {
		.name = "pager",
		.summary = "one page per real event: incidents, §8 routing, the false-page budget, delivery and triage",
		.defaults = pager_defaults,
		.ndefaults = sizeof pager_defaults / sizeof pager_defaults[0],
		.pg = true,
		.outbox = true,
		.init = pw_pager_init,
		.release = pw_pager_release,
		.inputs = pager_inputs,
		.ninputs = sizeof pager_inputs / sizeof pager_inputs[0],
		.worker_init = pw_pager_worker_init,
		.worker_release = pw_pager_worker_release,
		.tick = pw_pager_tick,
		.tick_key = "pager.tick",
	};
	def.keys = pw_pager_service_keys(&def.nkeys);
	return pw_service_main(&def, argc, argv, envp);
}
