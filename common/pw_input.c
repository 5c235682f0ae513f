/*
 * pw_input.c: the door checks of pw_input.h: a protobuf wire walker that
 * finds NUL bytes and invalid UTF-8 in string fields before unpack.
 */
#include "pw_input.h"

#include <stdio.h>
#include <string.h>

bool pw_input_utf8_ok(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n;
	while (p < e) {
		unsigned c = *p;
		if (c == 0)
			return false;
		if (c < 0x80) {
			p++;
			continue;
		}
		int k;
		unsigned min;
		if ((c & 0xe0) == 0xc0) {
			k = 1;
			c &= 0x1f;
			min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			k = 2;
			c &= 0x0f;
			min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			k = 3;
			c &= 0x07;
			min = 0x10000;
		} else {
			return false;
		}
		p++;
		if (e - p < k)
			return false;
		for (int i = 0; i < k; i++, p++) {
			if ((*p & 0xc0) != 0x80)
				return false;
			c = (c << 6) | (*p & 0x3f);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			return false;
	}
	return true;
}

static bool varint(const uint8_t **p, const uint8_t *e, uint64_t *v)
{
	uint64_t r = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (*p >= e)
			return false;
		uint8_t b = *(*p)++;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

#define DEPTH_MAX 32

/* 1 = bad string found (errbuf set), 0 = clean or not a message (unpack decides). */
static int walk(const ProtobufCMessageDescriptor *d, const uint8_t *p, const uint8_t *e,
                char *path, size_t pathcap, int depth, char *errbuf, size_t errlen)
{
	if (depth > DEPTH_MAX)
		return 0;
	size_t base = strlen(path);
	while (p < e) {
		uint64_t tag;
		if (!varint(&p, e, &tag))
			return 0;
		uint32_t num = (uint32_t)(tag >> 3);
		unsigned wt = tag & 7;
		uint64_t v;
		switch (wt) {
		case 0:
			if (!varint(&p, e, &v))
				return 0;
			continue;
		case 1:
			if (e - p < 8)
				return 0;
			p += 8;
			continue;
		case 5:
			if (e - p < 4)
				return 0;
			p += 4;
			continue;
		case 2:
			break;
		default:
			return 0;
		}
		if (!varint(&p, e, &v) || v > (uint64_t)(e - p))
			return 0;
		const uint8_t *s = p;
		p += v;
		const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, num);
		if (!f)
			continue;
		if (f->type == PROTOBUF_C_TYPE_STRING) {
			const char *why = NULL;
			if (memchr(s, 0, v))
				why = "contains a NUL byte";
			else if (!pw_input_utf8_ok((const char *)s, v))
				why = "is not valid UTF-8";
			if (why) {
				snprintf(errbuf, errlen, "field \"%s%s%s\" %s", path, base ? "." : "",
				         f->name, why);
				return 1;
			}
		} else if (f->type == PROTOBUF_C_TYPE_MESSAGE && f->descriptor) {
			int n = snprintf(path + base, pathcap - base, "%s%s", base ? "." : "", f->name);
			if (n < 0 || (size_t)n >= pathcap - base) {
				path[base] = '\0';
				continue;
			}
			int r = walk(f->descriptor, s, s + v, path, pathcap, depth + 1, errbuf, errlen);
			path[base] = '\0';
			if (r)
				return r;
		}
	}
	return 0;
}

pw_status pw_input_check_wire(const ProtobufCMessageDescriptor *desc, const void *buf, size_t len,
                              char *errbuf, size_t errlen)
{
	char path[256] = "";
	char msg[512];
	if (!buf || !len)
		return PW_OK;
	if (walk(desc, buf, (const uint8_t *)buf + len, path, sizeof path, 0, msg, sizeof msg))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "%s", msg);
	return PW_OK;
}

Perfwatch__V1__DlqReason pw_input_decode(const ProtobufCMessageDescriptor *desc, const void *buf,
                                         size_t len, ProtobufCMessage **out, char *detail,
                                         size_t detail_len)
{
	*out = NULL;
	if (pw_input_check_wire(desc, buf, len, detail, detail_len) != PW_OK)
		return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	*out = protobuf_c_message_unpack(desc, NULL, len, (const uint8_t *)buf);
	if (!*out) {
		snprintf(detail, detail_len, "payload is not a %s", desc->name);
		return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED;
	}
	return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED;
}

/* 1 = a field beyond its cap (errbuf set), 0 = within. */
static int bounds_walk(const ProtobufCMessage *m, size_t string_max, size_t list_max, char *path,
                       size_t pathcap, int depth, char *errbuf, size_t errlen)
{
	if (!m || depth > DEPTH_MAX)
		return 0;
	const ProtobufCMessageDescriptor *d = m->descriptor;
	size_t base = strlen(path);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *at = (const char *)m + f->offset;
		size_t n = 1;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = *(const size_t *)((const char *)m + f->quantifier_offset);
			if (n > list_max) {
				snprintf(errbuf, errlen, "field \"%s%s%s\" has %zu items (at most %zu)", path,
				         base ? "." : "", f->name, n, list_max);
				return 1;
			}
			at = *(const char *const *)at;
		} else if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
		           *(const uint32_t *)((const char *)m + f->quantifier_offset) != f->id) {
			continue;
		}
		for (size_t k = 0; at && k < n; k++) {
			size_t len = 0;
			if (f->type == PROTOBUF_C_TYPE_STRING) {
				const char *str = ((const char *const *)at)[k];
				len = str ? strlen(str) : 0;
			} else if (f->type == PROTOBUF_C_TYPE_BYTES) {
				len = ((const ProtobufCBinaryData *)at)[k].len;
			} else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
				const ProtobufCMessage *sub = ((const ProtobufCMessage *const *)at)[k];
				int w = snprintf(path + base, pathcap - base, "%s%s", base ? "." : "", f->name);
				if (w < 0 || (size_t)w >= pathcap - base) {
					path[base] = '\0';
					continue;
				}
				int r = bounds_walk(sub, string_max, list_max, path, pathcap, depth + 1, errbuf,
				                    errlen);
				path[base] = '\0';
				if (r)
					return r;
				continue;
			} else {
				break; /* numbers, bools, enums: fixed size */
			}
			if (len > string_max) {
				snprintf(errbuf, errlen, "field \"%s%s%s\" of %zu bytes (at most %zu)", path,
				         base ? "." : "", f->name, len, string_max);
				return 1;
			}
		}
	}
	return 0;
}

pw_status pw_input_check_bounds(const ProtobufCMessage *m, size_t string_max, size_t list_max,
                                char *errbuf, size_t errlen)
{
	char path[256] = "";
	char msg[512];
	if (bounds_walk(m, string_max, list_max, path, sizeof path, 0, msg, sizeof msg))
		return pw_fail(PW_ERR_TOO_LARGE, errbuf, errlen, "%s", msg);
	return PW_OK;
}

bool pw_input_series_key_matches(const char *key, const Perfwatch__V1__SeriesKey *k)
{
	if (!key || !k)
		return false;
	const char *parts[] = {k->model, k->hlo_fingerprint, k->platform, k->config, k->metric};
	const size_t n = sizeof parts / sizeof parts[0];
	for (size_t i = 0; i < n; i++) {
		size_t l = parts[i] ? strlen(parts[i]) : 0;
		if (strncmp(key, parts[i] ? parts[i] : "", l) != 0)
			return false;
		key += l;
		if (i + 1 < n) {
			if (*key != '/')
				return false;
			key++;
		}
	}
	return *key == 0;
}
