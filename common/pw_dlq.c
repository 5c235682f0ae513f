/*
 * pw_dlq.c: packing, storing and publishing dead letters. See pw_dlq.h.
 */
#include "pw_dlq.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "pw_enums.h"
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

/*
 * detail as a proto3 string and a text column take it: valid UTF-8, capped at
 * PW_DLQ_DETAIL_KEEP bytes (it may quote the bad input). Returns detail
 * itself or dbuf holding the fixed copy; *cut says whether it was cut.
 */
static const char *detail_text(const char *detail, char dbuf[PW_DLQ_DETAIL_KEEP + 1], bool *cut)
{
	const char *det = detail ? detail : "";
	size_t dn = strlen(det);
	*cut = false;
	if (dn <= PW_DLQ_DETAIL_KEEP && pw_input_utf8_ok(det, dn))
		return det;
	if (dn > PW_DLQ_DETAIL_KEEP) {
		dn = utf8_cut(det, PW_DLQ_DETAIL_KEEP);
		*cut = true;
	}
	memcpy(dbuf, det, dn);
	dbuf[dn] = '\0';
	if (!pw_input_utf8_ok(dbuf, dn))
		for (size_t i = 0; i < dn; i++)
			if ((unsigned char)dbuf[i] >= 0x80)
				dbuf[i] = '?';
	return dbuf;
}

pw_status pw_dlq_pack(const pw_dlq_source *src, Perfwatch__V1__DlqReason reason,
                      const char *detail, int64_t failed_unix_us, uint8_t **out,
                      size_t *outlen)
{
	Perfwatch__V1__DeadLetter d = PERFWATCH__V1__DEAD_LETTER__INIT;
	uint8_t digest[32];
	char dbuf[PW_DLQ_DETAIL_KEEP + 1];
	bool cut;
	d.reason = reason;
	d.detail = (char *)detail_text(detail, dbuf, &cut);
	d.detail_truncated = cut;
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

const char *pw_dlq_reason_text(Perfwatch__V1__DlqReason r)
{
	return r == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED ? "processing_failed"
	                                                             : pw_dlq_reason_name(r);
}

/* The row of perfwatch.dead_letters, through pg. */
static pw_status dlq_store(pw_pg *pg, const pw_dlq_source *src, Perfwatch__V1__DlqReason reason,
                           const char *detail, int64_t failed_unix_us, char *errbuf, size_t errlen)
{
	char dbuf[PW_DLQ_DETAIL_KEEP + 1];
	bool cut;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, src->topic ? src->topic : "");
	pw_pg_params_int(&p, src->partition);
	pw_pg_params_int(&p, src->offset);
	pw_pg_params_text(&p, pw_dlq_reason_text(reason));
	pw_pg_params_text(&p, detail_text(detail, dbuf, &cut));
	pw_pg_params_text(&p, src->service ? src->service : "");
	pw_pg_params_text(&p, src->payload_type ? src->payload_type : "");
	pw_pg_params_bin(&p, src->key, src->key ? src->keylen : 0);
	pw_pg_params_bin(&p, src->payload, src->payload ? src->len : 0);
	pw_pg_params_int(&p, failed_unix_us);
	return pw_pg_exec_params(pg,
	                         "INSERT INTO perfwatch.dead_letters (source_topic, kafka_partition, "
	                         "kafka_offset, reason, detail, service, payload_type, original_key, "
	                         "original_payload, failed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, "
	                         "$8, $9, to_timestamp($10::double precision / 1e6)) "
	                         "ON CONFLICT DO NOTHING",
	                         &p, 0, NULL, errbuf, errlen);
}

pw_status pw_dlq_record(pw_pg *pg, pw_producer *p, const pw_dlq_source *src,
                        Perfwatch__V1__DlqReason reason, const char *detail,
                        int64_t failed_unix_us, int queue_wait_ms, char *errbuf, size_t errlen)
{
	if (!pg || !p)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "dead letter of %s[%d]@%lld: no database connection or producer to record it with",
		               src->topic ? src->topic : "", (int)src->partition, (long long)src->offset);
	pw_status st = dlq_store(pg, src, reason, detail, failed_unix_us, errbuf, errlen);
	if (st != PW_OK)
		return st;
	uint8_t *buf;
	size_t len;
	if (pw_dlq_pack(src, reason, detail, failed_unix_us, &buf, &len) != PW_OK)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory dead-lettering a message");
	size_t kl = src->key ? src->keylen : 0;
	st = pw_producer_produce(p, PW_TOPIC_DLQ, src->key, kl > PW_DLQ_KEY_KEEP ? PW_DLQ_KEY_KEEP : kl, buf, len,
	                         queue_wait_ms, errbuf, errlen);
	free(buf);
	return st;
}
