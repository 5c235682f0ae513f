/*
 * main.c: pw-ingester, the ingester service: perf.runs.v1 into PostgreSQL,
 * perf.points.v1 and perf.dlq.v1 out. The workers' wiring is
 * ingest_service.c's; every decision is store.c's, validate.c's and rows.c's.
 *
 *   pw-ingester [--config FILE]
 */
#include "ingest_service.h"
#include "pw_topics.h"
#include "store.h"

static const pw_conf_key ingest_keys[] = {
	{.name = "ingest.max.age.days", .type = PW_CONF_INT, .def = "1830", .min = 1, .max = 36600,
	 .help = "runs that started longer ago than this are dead-lettered (invalid_value)"},
	{.name = "ingest.max.future.ms", .type = PW_CONF_DURATION_MS, .def = "10m", .min = 0,
	 .max = 86400000, .help = "clock skew tolerated for run timestamps ahead of the ingester's clock"},
	{.name = "ingest.max.payload.bytes", .type = PW_CONF_INT, .def = "4194304", .min = 1024,
	 .max = 104857600, .help = "larger RunResult messages are dead-lettered (oversize)"},
	{.name = "ingest.flush.timeout.ms", .type = PW_CONF_DURATION_MS, .def = "30s", .min = 100,
	 .max = 600000, .help = "how long a batch's points may wait for local queue space and then "
	         "for their delivery reports before the batch is read again"},
	{.name = "ingest.series.cache.max", .type = PW_CONF_INT, .def = "1000000", .min = 1,
	 .max = 100000000, .help = "series ids kept in memory (one cache shared by the workers)"},
	{.name = "ingest.workers", .type = PW_CONF_INT, .def = "2", .min = 1, .max = PW_INGEST_MAX_WORKERS,
	 .help = "worker threads, each a consumer-group member with its own PostgreSQL connection "
	         "and producer; memory grows with workers x batch.max.messages"},
};

static const char *const ingest_topics[] = {PW_TOPIC_RUNS, NULL};

/* ingest.workers members of the group; a batch is held until its points are acknowledged. */
static const pw_service_input ingest_inputs[] = {
	{.name = "runs", .topics = ingest_topics, .on_batch = pw_ingester_batch,
	 .workers_key = "ingest.workers", .outputs = true,
	 .outputs_timeout_key = "ingest.flush.timeout.ms"},
};

/* bigger batches than the common default: one transaction and one delivery wait per 2,000 runs */
static const pw_kv ingest_defaults[] = {{"batch.max.messages", "2000"}};

static const pw_service_def ingest_service = {
	.name = "ingester",
	.summary = "the ingester: RunResults validated into PostgreSQL, series points published",
	.keys = ingest_keys,
	.nkeys = sizeof ingest_keys / sizeof ingest_keys[0],
	.defaults = ingest_defaults,
	.ndefaults = sizeof ingest_defaults / sizeof ingest_defaults[0],
	.pg = true,
	.init = pw_ingest_init,
	.release = pw_ingest_release,
	.inputs = ingest_inputs,
	.ninputs = sizeof ingest_inputs / sizeof ingest_inputs[0],
	.worker_init = pw_ingest_worker_init,
	.worker_release = pw_ingest_worker_release,
	.stopped = pw_ingest_stopped,
};

int main(int argc, char **argv, char **envp)
{
	return pw_service_main(&ingest_service, argc, argv, envp);
}
