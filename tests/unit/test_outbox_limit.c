/*
 * test_outbox_limit.c: what an outbox row may hold (common/pw_outbox.h,
 * pw_topics.h pw_topic_publish_limit). A row over its topic's limit could
 * never be published: pw_outbox_add refuses it before any database sees it,
 * with PW_ERR_TOO_LARGE, which a service turns into a dead letter with
 * reason oversize (pw_service_failure_reason). The publisher's side (rows
 * already stored, refusals of the producer and the broker) needs the dev
 * stack: tests/integration/it_outbox.c.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "pw_outbox.h"
#include "pw_service.h"
#include "pw_topics.h"

Test(outbox_limit, each_topic_has_the_limit_of_its_producer_and_broker)
{
	/* librdkafka's message.max.bytes default, below Apache Kafka's 1,048,588 */
	cr_assert_eq(pw_topic_publish_limit(PW_TOPIC_ALERTS), 1000000);
	cr_assert_eq(pw_topic_publish_limit(PW_TOPIC_ATTRIBUTIONS), 1000000);
	cr_assert_eq(pw_topic_publish_limit("perf.not-in-the-table.v1"), 1000000);
	cr_assert_eq(pw_topic_publish_limit(NULL), 1000000);
	/* raised topics: their max.message.bytes less a record batch's overhead */
	cr_assert_eq(pw_topic_publish_limit(PW_TOPIC_RUNS), 5 * 1024 * 1024 - 512);
	cr_assert_eq(pw_topic_publish_limit(PW_TOPIC_GATE_VERDICTS), 16 * 1024 * 1024 - 512);
}

/* The jam: the 3 MB alert's follow-up was 3,000,834 bytes on perf.alerts.v1. */
Test(outbox_limit, a_row_over_the_limit_is_refused_before_the_database)
{
	size_t len = 3000834;
	char *payload = malloc(len);
	cr_assert_not_null(payload);
	memset(payload, 0x5a, len);
	char err[512] = "";
	/* no connection: the refusal comes first, nothing is written */
	pw_status st = pw_outbox_add(NULL, "attributor", "alert:perfreg-big:r2", PW_TOPIC_ALERTS,
	                             "chat-8b/hlo:9f31c2/v6e-4/decode.B64.s2048.int8/tpot_p50_ms", payload,
	                             len, err, sizeof err);
	cr_assert_eq(st, PW_ERR_TOO_LARGE, "%s", err);
	cr_assert(strstr(err, "of 3000892 bytes over the topic's limit of 1000000 bytes") != NULL, "%s", err);
	cr_assert(strstr(err, "\"perf.alerts.v1\"") != NULL, "%s", err);
	cr_assert(strstr(err, "alert:perfreg-big:r2") != NULL, "%s", err);
	/* key and payload count together, as the producer counts them */
	st = pw_outbox_add(NULL, "bisector", NULL, PW_TOPIC_ALERTS, "kk", payload, 999999, err, sizeof err);
	cr_assert_eq(st, PW_ERR_TOO_LARGE, "%s", err);
	/* a service dead-letters what asked for it as oversize, and does not retry it */
	cr_assert_eq(pw_service_failure_reason(PW_ERR_TOO_LARGE), PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE);
	cr_assert_eq(pw_service_failure_reason(PW_ERR_PG), PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED);
	cr_assert_not(pw_service_retriable(PW_ERR_TOO_LARGE));
	cr_assert_str_eq(pw_strerror(PW_ERR_TOO_LARGE), "message too large");
	free(payload);
}
