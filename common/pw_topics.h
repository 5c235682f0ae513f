/*
 * pw_topics.h: the Kafka topics of the architecture, in one table.
 *
 * The dev broker creates exactly these topics with these partition counts;
 * services name topics through the PW_TOPIC_* constants so that a rename is
 * one edit. Message keys: series id on points and baselines, release id on
 * gate traffic, job id on bisection traffic, the series group (pw_runs_key)
 * on runs (docs/architecture.md).
 */
#ifndef PW_TOPICS_H
#define PW_TOPICS_H

#include <stdbool.h>
#include <stddef.h>

#define PW_TOPIC_RUNS          "perf.runs.v1"
#define PW_TOPIC_POINTS        "perf.points.v1"
#define PW_TOPIC_DLQ           "perf.dlq.v1"
#define PW_TOPIC_FLEET_CHANGES "perf.fleet-changes.v1"
#define PW_TOPIC_BASELINES     "perf.baselines.v1"
#define PW_TOPIC_GATE_REQUESTS "perf.gate.requests.v1"
#define PW_TOPIC_GATE_VERDICTS "perf.gate.verdicts.v1"
#define PW_TOPIC_CHANGEPOINTS  "perf.changepoints.v1"
#define PW_TOPIC_ALERTS        "perf.alerts.v1"
#define PW_TOPIC_BISECT_JOBS   "perf.bisect.jobs.v1"
#define PW_TOPIC_BISECTIONS    "perf.bisections.v1"
#define PW_TOPIC_ATTRIBUTIONS  "perf.attributions.v1"
#define PW_TOPIC_PAGES         "perf.pages.v1"
#define PW_TOPIC_TRIAGE        "perf.triage.v1"
#define PW_TOPIC_COMPILER_CLS  "perf.compiler-cls.v1"
#define PW_TOPIC_CATALOGUE     "perf.catalogue.v1"
#define PW_TOPIC_CAPACITY      "perf.capacity.v1"
#define PW_TOPIC_SWEEPS        "perf.sweeps.v1"
#define PW_TOPIC_PLANS         "perf.plans.v1"
#define PW_TOPIC_CANARY        "perf.canary.v1"
#define PW_TOPIC_ROLLOUTS      "perf.rollouts.v1"

typedef struct pw_topic_spec {
	const char *name;
	int partitions;
	int replication;     /* 3 in production; the dev broker has 3 brokers too */
	bool compacted;      /* cleanup.policy=compact in production */
	const char *payload; /* protobuf message type carried, for docs and kcat decoding */
	/*
	 * The topic's max.message.bytes, or 0 for the broker's default
	 * (message.max.bytes, 1,048,588 on Apache Kafka): the largest record
	 * batch the broker accepts. Producers must not publish beyond it.
	 */
	int max_message_bytes;
} pw_topic_spec;

/*
 * perf.runs.v1 accepts runs larger than the ingester takes
 * (ingest.max.payload.bytes, 4 MiB by default), so that an oversized run
 * reaches the ingester and is dead-lettered with its reason instead of being
 * refused at the producer where nobody sees it.
 */
#define PW_TOPIC_RUNS_MAX_MESSAGE_BYTES (5 * 1024 * 1024)
/* A plan of a 3,000-model catalogue's RC (items and inheritances) is a few hundred KB; room for 10×. */
#define PW_TOPIC_PLANS_MAX_MESSAGE_BYTES (5 * 1024 * 1024)
/*
 * perf.gate.verdicts.v1 carries one GateVerdict per evaluation listing every
 * gated series: 2,160 series are about 1 MB. The gate's producers allow
 * 16 MiB (message.max.bytes, lz4); the topic matches (docs/gate.md).
 */
#define PW_TOPIC_GATE_VERDICTS_MAX_MESSAGE_BYTES (16 * 1024 * 1024)

/* The largest message a producer may publish to topic t. */
int pw_topic_max_message_bytes(const pw_topic_spec *t);

/*
 * librdkafka's default message.max.bytes: a producer refuses a message whose
 * key and payload together are larger (MSG_SIZE_TOO_LARGE).
 */
#define PW_PRODUCER_MAX_MESSAGE_BYTES 1000000
/* Room left in a record batch for its header and the record's own framing. */
#define PW_TOPIC_BATCH_OVERHEAD 512

/*
 * The most bytes of key and payload one message may have to be published on
 * the topic named `topic`: for a topic at the broker's default (and for a
 * topic the table does not list) PW_PRODUCER_MAX_MESSAGE_BYTES, the
 * producer's default, which is below the broker's 1,048,588; for a topic
 * whose max.message.bytes the table raises, that less
 * PW_TOPIC_BATCH_OVERHEAD (its producers raise message.max.bytes to match,
 * as the gate does). pw_outbox_add refuses a row over it.
 */
size_t pw_topic_publish_limit(const char *topic);

/* The table, and its length. */
extern const pw_topic_spec pw_topics[];
extern const size_t pw_topics_count;

/* The spec of a topic by name, or NULL. */
const pw_topic_spec *pw_topic_find(const char *name);

/*
 * The Kafka key a producer gives a RunResult on perf.runs.v1:
 * "model/hlo_fingerprint/platform/config", the series key (series.proto)
 * without its metric. Every series a run feeds has this prefix, so all the
 * runs of one series share a partition and reach the ingesters, and their
 * points the baseliners, in the order they were published, however many
 * instances share the groups. The ingester accepts any key (run.proto).
 * Writes the key and its NUL into buf; false, with buf "", when it does not
 * fit in len bytes or a part is NULL.
 */
bool pw_runs_key(char *buf, size_t len, const char *model, const char *hlo_fingerprint,
                 const char *platform, const char *config);

#endif
