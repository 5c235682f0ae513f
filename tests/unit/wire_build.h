/*
 * wire_build.h: building protobuf wire bytes by hand, for the door tests'
 * tables (door_table.h).
 *
 * A case packs a good message with protobuf-c, then appends raw fields: the
 * last occurrence of a singular field wins and sub-messages merge, so an
 * appended field overrides the good one with what a struct cannot carry (a
 * NUL byte, invalid UTF-8, a wrong wire type, a length past the end).
 */
#ifndef PW_TEST_WIRE_BUILD_H
#define PW_TEST_WIRE_BUILD_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "perfwatch/v1/dlq.pb-c.h"

typedef struct wire_buf {
	uint8_t *p;
	size_t n;
} wire_buf;

static inline void wire_bytes(wire_buf *b, const void *p, size_t n)
{
	b->p = realloc(b->p, b->n + n + 1);
	cr_assert_not_null(b->p);
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static inline void wire_varint(wire_buf *b, uint64_t v)
{
	uint8_t t[10];
	size_t k = 0;
	do {
		t[k] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			t[k] |= 0x80;
		k++;
	} while (v);
	wire_bytes(b, t, k);
}

/* field f with the varint wire type */
static inline void wire_int(wire_buf *b, unsigned f, uint64_t v)
{
	wire_varint(b, (uint64_t)f << 3 | 0);
	wire_varint(b, v);
}

/* field f as a length-delimited value of n bytes */
static inline void wire_ld(wire_buf *b, unsigned f, const void *p, size_t n)
{
	wire_varint(b, (uint64_t)f << 3 | 2);
	wire_varint(b, n);
	wire_bytes(b, p, n);
}

/* field `outer` holding a sub-message whose field `inner` is v[0..n) */
static inline void wire_nested(wire_buf *b, unsigned outer, unsigned inner, const char *v, size_t n)
{
	wire_buf in = {0};
	wire_ld(&in, inner, v, n);
	wire_ld(b, outer, in.p, in.n);
	free(in.p);
}

/* a length prefix of field f that runs past the end of the payload */
static inline void wire_past_end(wire_buf *b, unsigned f)
{
	wire_varint(b, (uint64_t)f << 3 | 2);
	wire_varint(b, 4096);
	wire_bytes(b, "abc", 3);
}

/* defines fn(wire_buf *) appending field `field` = the literal, NULs and all */
#define WIRE_APPEND_STR(fn, field, lit)                                                            \
	static void fn(wire_buf *b) { wire_ld(b, field, lit, sizeof lit - 1); }

/* bytes that are no message: a run of 0xff (a varint that never ends) after junk */
static const uint8_t wire_junk[] = {0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0x00, 0x13, 0x37};

static inline const char *wire_reason_name(Perfwatch__V1__DlqReason r)
{
	const ProtobufCEnumValue *v =
		protobuf_c_enum_descriptor_get_value(&perfwatch__v1__dlq_reason__descriptor, (int)r);
	return v ? v->name : "?";
}

/* n copies of c (n <= 70000), in one of 8 buffers used in turn */
static inline const char *wire_letters(char c, size_t n)
{
	static char bufs[8][70001];
	static size_t used;
	cr_assert(n <= 70000);
	char *b = bufs[used++ % 8];
	memset(b, c, n);
	b[n] = 0;
	return b;
}

/* the packed bytes of the protobuf-c message m */
static inline wire_buf wire_pack(const ProtobufCMessage *m)
{
	wire_buf b = {0};
	b.n = protobuf_c_message_get_packed_size(m);
	b.p = malloc(b.n + 1);
	cr_assert_not_null(b.p);
	protobuf_c_message_pack(m, b.p);
	return b;
}

/* kinds every topic whose field 1 is a string id gets: raw bytes, the wire types, unknown fields */
static inline void wire_w_past_end_1(wire_buf *b) { wire_past_end(b, 1); }
static inline void wire_w_group(wire_buf *b) { wire_varint(b, 60u << 3 | 3); }
static inline void wire_w_id_varint(wire_buf *b) { wire_int(b, 1, 412); }
static inline void wire_w_unknown(wire_buf *b)
{
	wire_int(b, 99, 12345);
	wire_ld(b, 100, "a field of a later version", 26);
}
static inline void wire_w_nul_1(wire_buf *b) { wire_ld(b, 1, "id-00412\0evil", 13); }
static inline void wire_w_ff_1(wire_buf *b) { wire_ld(b, 1, "id-\377", 4); }
static inline void wire_w_overlong_1(wire_buf *b) { wire_ld(b, 1, "id\xc0\xaf", 4); }
static inline void wire_w_surrogate_1(wire_buf *b) { wire_ld(b, 1, "id\xed\xa0\x80", 5); }
static inline void wire_w_cut_1(wire_buf *b) { wire_ld(b, 1, "id\xe2\x82", 4); }
static inline void wire_w_above_1(wire_buf *b) { wire_ld(b, 1, "id\xf4\x90\x80\x80", 6); }

#endif
