/*
 * pw_dlq.c: packing and publishing dead letters. See pw_dlq.h.
 */
#include "pw_dlq.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "pw_input.h"
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

/* Longest prefix of s[0..n) that ends on a UTF-8 character boundary. */
static size_t utf8_cut(const char *s, size_t n)
{
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

pw_status pw_dlq_pack(const pw_dlq_source *src, Perfwatch__V1__DlqReason reason,
                      const char *detail, int64_t failed_unix_us, uint8_t **out,
                      size_t *outlen)
{
	Perfwatch__V1__DeadLetter d = PERFWATCH__V1__DEAD_LETTER__INIT;
	uint8_t digest[32];
	char dbuf[PW_DLQ_DETAIL_KEEP + 1];
	const char *det = detail ? detail : "";
	size_t dn = strlen(det);
	/* the detail is a proto3 string: valid UTF-8, capped (it may quote the bad input) */
	if (dn > PW_DLQ_DETAIL_KEEP || !pw_input_utf8_ok(det, dn)) {
		if (dn > PW_DLQ_DETAIL_KEEP) {
			dn = utf8_cut(det, PW_DLQ_DETAIL_KEEP);
			d.detail_truncated = 1;
		}
		memcpy(dbuf, det, dn);
		dbuf[dn] = '\0';
		if (!pw_input_utf8_ok(dbuf, dn))
			for (size_t i = 0; i < dn; i++)
				if ((unsigned char)dbuf[i] >= 0x80)
					dbuf[i] = '?';
		det = dbuf;
	}
	d.reason = reason;
	d.detail = (char *)det;
	d.source_topic = (char *)(src->topic ? src->topic : "");
	d.partition = src->partition;
	d.offset = src->offset;
	size_t keylen = src->key ? src->keylen : 0;
	size_t len = src->payload ? src->len : 0;
	d.original_key.data = (uint8_t *)src->key;
	d.original_key.len = keylen;
	d.original_key_length = keylen;
	if (keylen > PW_DLQ_KEY_KEEP) {
		d.original_key.len = PW_DLQ_KEY_KEEP;
		d.key_truncated = 1;
	}
	d.original_payload.data = (uint8_t *)src->payload;
	d.original_payload.len = len;
	d.original_payload_length = len;
	if (len > PW_DLQ_PAYLOAD_KEEP) {
		unsigned dl = 0;
		if (!EVP_Digest(src->payload, len, digest, &dl, EVP_sha256(), NULL) || dl != 32)
			return PW_ERR_NOMEM;
		d.original_payload.len = PW_DLQ_PAYLOAD_KEEP;
		d.payload_truncated = 1;
		d.original_payload_sha256.data = digest;
		d.original_payload_sha256.len = 32;
	}
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
	size_t kl = src->key ? src->keylen : 0;
	pw_status st = pw_producer_produce(p, PW_TOPIC_DLQ, src->key, kl > PW_DLQ_KEY_KEEP ? PW_DLQ_KEY_KEEP : kl, buf, len,
	                                   queue_wait_ms, errbuf, errlen);
	free(buf);
	return st;
}
