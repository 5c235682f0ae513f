/*
 * pw_topics.c: the topic table. Partition counts follow the traffic: runs and
 * points carry every sample of the fleet; the fleet-change feed has one
 * partition so that every consumer sees changes in one total order.
 */
#include "pw_topics.h"

#include <string.h>

const pw_topic_spec pw_topics[] = {
	{PW_TOPIC_RUNS, 12, 3, false, "perfwatch.v1.RunResult", PW_TOPIC_RUNS_MAX_MESSAGE_BYTES},
	{PW_TOPIC_POINTS, 12, 3, false, "perfwatch.v1.SeriesPoint", 0},
	{PW_TOPIC_DLQ, 3, 3, false, "perfwatch.v1.DeadLetter", 0},
	{PW_TOPIC_FLEET_CHANGES, 1, 3, false, "perfwatch.v1.FleetChangeEvent", 0},
	{PW_TOPIC_BASELINES, 12, 3, true, "perfwatch.v1.Baseline", 0},
	{PW_TOPIC_GATE_REQUESTS, 3, 3, false, "perfwatch.v1.GateRequest", 0},
	{PW_TOPIC_GATE_VERDICTS, 3, 3, false, "perfwatch.v1.GateVerdict", PW_TOPIC_GATE_VERDICTS_MAX_MESSAGE_BYTES},
	{PW_TOPIC_CHANGEPOINTS, 6, 3, false, "perfwatch.v1.Changepoint", 0},
	{PW_TOPIC_ALERTS, 6, 3, false, "perfwatch.v1.Alert", 0},
	{PW_TOPIC_BISECT_JOBS, 3, 3, false, "perfwatch.v1.BisectJob", 0},
	{PW_TOPIC_BISECTIONS, 3, 3, false, "perfwatch.v1.Bisection", 0},
	{PW_TOPIC_ATTRIBUTIONS, 3, 3, false, "perfwatch.v1.Attribution", 0},
	{PW_TOPIC_PAGES, 3, 3, false, "perfwatch.v1.Page", 0},
	{PW_TOPIC_TRIAGE, 3, 3, false, "perfwatch.v1.TriageVerdict", 0},
	{PW_TOPIC_COMPILER_CLS, 1, 3, true, "perfwatch.v1.CompilerCl", 0},
	{PW_TOPIC_CATALOGUE, 1, 3, true, "perfwatch.v1.CatalogueModel", 0},
	{PW_TOPIC_CAPACITY, 1, 3, true, "perfwatch.v1.PlatformCapacity", 0},
	{PW_TOPIC_SWEEPS, 1, 3, false, "perfwatch.v1.Sweep", 0},
	{PW_TOPIC_PLANS, 3, 3, false, "perfwatch.v1.Plan", PW_TOPIC_PLANS_MAX_MESSAGE_BYTES},
	{PW_TOPIC_CANARY, 6, 3, false, "perfwatch.v1.CanaryWindow", 0},
	{PW_TOPIC_ROLLOUTS, 3, 3, false, "perfwatch.v1.RolloutDecision", 0},
};
const size_t pw_topics_count = sizeof pw_topics / sizeof pw_topics[0];

int pw_topic_max_message_bytes(const pw_topic_spec *t)
{
	/* Apache Kafka's message.max.bytes default */
	return t && t->max_message_bytes > 0 ? t->max_message_bytes : 1048588;
}

size_t pw_topic_publish_limit(const char *topic)
{
	const pw_topic_spec *t = topic ? pw_topic_find(topic) : NULL;
	if (!t || t->max_message_bytes <= 0)
		return PW_PRODUCER_MAX_MESSAGE_BYTES;
	return (size_t)t->max_message_bytes - PW_TOPIC_BATCH_OVERHEAD;
}

const pw_topic_spec *pw_topic_find(const char *name)
{
	for (size_t i = 0; i < pw_topics_count; i++)
		if (strcmp(pw_topics[i].name, name) == 0)
			return &pw_topics[i];
	return NULL;
}

bool pw_runs_key(char *buf, size_t len, const char *model, const char *hlo_fingerprint,
                 const char *platform, const char *config)
{
	const char *part[4] = {model, hlo_fingerprint, platform, config};
	size_t at = 0;
	if (len == 0)
		return false;
	for (int i = 0; i < 4; i++) {
		size_t n = part[i] ? strlen(part[i]) : 0;
		if (!part[i] || at + n + 1 > len) {
			buf[0] = '\0';
			return false;
		}
		memcpy(buf + at, part[i], n);
		at += n;
		buf[at++] = i < 3 ? '/' : '\0';
	}
	return true;
}
