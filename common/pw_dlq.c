/*
 * pw_dlq.c: packing and publishing dead letters. See pw_dlq.h.
 */
#include "pw_dlq.h"

#include <stdlib.h>

#include "pw_time.h"
#include "pw_topics.h"

void pw_dlq_source_from_message(pw_dlq_source *src, const rd_kafka_message_t *msg,
                                const char *service, const char *payload_type)
{
	src->service = service;
	src->payload_type = payload_type;
	src->topic = rd_kafka_topic_name(msg->rkt);
	src->partition = msg->partition;
	src->offset = msg->offset;
	src->key = msg->key;
	src->keylen = msg->key ? msg->key_len : 0;
	src->payload = msg->payload;
	src->len = msg->payload ? msg->len : 0;
}

pw_status pw_dlq_pack(const pw_dlq_source *src, Perfwatch__V1__DlqReason reason,
                      const char *detail, int64_t failed_unix_us, uint8_t **out,
                      size_t *outlen)
{
	Perfwatch__V1__DeadLetter d = PERFWATCH__V1__DEAD_LETTER__INIT;
	d.reason = reason;
	d.detail = (char *)(detail ? detail : "");
	d.source_topic = (char *)(src->topic ? src->topic : "");
	d.partition = src->partition;
	d.offset = src->offset;
	d.original_key.data = (uint8_t *)src->key;
	d.original_key.len = src->key ? src->keylen : 0;
	d.original_payload.data = (uint8_t *)src->payload;
	d.original_payload.len = src->payload ? src->len : 0;
	d.failed_unix_us = failed_unix_us;
	d.service = (char *)(src->service ? src->service : "");
	d.payload_type = (char *)(src->payload_type ? src->payload_type : "");
	size_t n = perfwatch__v1__dead_letter__get_packed_size(&d);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return PW_ERR_NOMEM;
	*outlen = perfwatch__v1__dead_letter__pack(&d, buf);
	*out = buf;
	return PW_OK;
}

pw_status pw_dlq_publish(pw_producer *p, const pw_dlq_source *src,
                         Perfwatch__V1__DlqReason reason, const char *detail,
                         int queue_wait_ms, char *errbuf, size_t errlen)
{
	uint8_t *buf;
	size_t len;
	if (pw_dlq_pack(src, reason, detail, pw_now_us(), &buf, &len) != PW_OK)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory dead-lettering a message");
	pw_status st = pw_producer_produce(p, PW_TOPIC_DLQ, src->key, src->keylen, buf, len,
	                                   queue_wait_ms, errbuf, errlen);
	free(buf);
	return st;
}
