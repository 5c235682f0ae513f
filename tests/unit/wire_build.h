/*
 * wire_build.h: building protobuf wire bytes by hand, for the door tests
 * (test_baseliner_door.c, test_gate_door.c, test_watch_door.c, test_bisect_door.c,
 * test_attr_door.c, test_pager_door.c, test_accept_door.c).
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

/* ---- the table runner every door test shares ---- */

/* What one case of a door's table must get. */
typedef struct door_expect {
	const char *name;
	Perfwatch__V1__DlqReason want;
	bool skip;              /* accepted but not the service's (the watcher's other builds) */
	const char *want_text;  /* accepted, not skipped: the identifying text that must come out */
	size_t want_len;        /* ... or, when non-zero, only its length */
} door_expect;

/*
 * A substring the detail of a refused case must hold: a case builder that
 * wants one sets it (door_run clears it before each case; NULL: any detail).
 */
static const char *door_want_detail;

/* The door under test, on one payload: as the service's *_decode function. */
typedef Perfwatch__V1__DlqReason (*door_fn)(const uint8_t *buf, size_t len, ProtobufCMessage **out,
                                            bool *skip, char *detail, size_t detail_len);
/* The identifying text of an accepted message (series_key, event_id, release_id). */
typedef const char *(*door_text_fn)(const ProtobufCMessage *m);
/* Case i's payload and what it must get. */
typedef wire_buf (*door_case_fn)(size_t i, door_expect *e);

/*
 * Runs n cases through door: each refusal must carry the wanted reason and a
 * detail and hand nothing back; each acceptance must hand back the message,
 * say whether it is skipped, and carry the wanted text unchanged. Logs the
 * counts under topic and wants at least 30 kinds.
 */
static inline void door_run(const char *topic, size_t n, door_case_fn build, door_fn door,
                            door_text_fn text)
{
	size_t refused = 0, skipped = 0;
	for (size_t i = 0; i < n; i++) {
		door_expect e = {0};
		door_want_detail = NULL;
		wire_buf b = build(i, &e);
		ProtobufCMessage *m = (ProtobufCMessage *)&b; /* the door must reset it */
		bool skip = false;
		char detail[512] = "";
		Perfwatch__V1__DlqReason r =
			door(b.n ? b.p : (const uint8_t *)"", b.n, &m, &skip, detail, sizeof detail);
		cr_expect_eq(r, e.want, "case \"%s\": got %s (%s), want %s", e.name, wire_reason_name(r),
		             detail, wire_reason_name(e.want));
		if (r == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) {
			cr_assert_not_null(m, "case \"%s\": accepted without a message", e.name);
			cr_expect_eq(skip, e.skip, "case \"%s\": skip %d", e.name, skip);
			if (!skip && e.want_len)
				cr_expect_eq(strlen(text(m)), e.want_len, "case \"%s\"", e.name);
			else if (!skip)
				cr_expect_str_eq(text(m), e.want_text, "case \"%s\"", e.name);
			skipped += skip;
			protobuf_c_message_free_unpacked(m, NULL);
		} else {
			refused++;
			cr_expect_null(m, "case \"%s\": refused but a message handed back", e.name);
			cr_expect(detail[0] != '\0', "case \"%s\": refused without a reason", e.name);
			if (door_want_detail)
				cr_expect(strstr(detail, door_want_detail) != NULL,
				          "case \"%s\": detail \"%s\" does not say \"%s\"", e.name, detail,
				          door_want_detail);
		}
		free(b.p);
	}
	cr_log_info("%s door: %zu kinds, %zu refused, %zu skipped, %zu taken", topic, n, refused,
	            skipped, n - refused - skipped);
	cr_expect_geq(n, 30);
}

/*
 * Defines fn, a door_fn over a door of the shape
 * decode(payload, len, T **out, detail, detail_len) (the baseliner's): what
 * door_run hands it in *out goes in, so that the door must reset it.
 */
#define DOOR_FN(fn, T, decode)                                                                     \
	static Perfwatch__V1__DlqReason fn(const uint8_t *buf, size_t len, ProtobufCMessage **out, \
	                                   bool *skip, char *detail, size_t detail_len)             \
	{                                                                                          \
		(void)skip;                                                                        \
		T *m = (T *)*out;                                                                  \
		Perfwatch__V1__DlqReason r = decode(buf, len, &m, detail, detail_len);             \
		*out = (ProtobufCMessage *)m;                                                      \
		return r;                                                                          \
	}

/* ---- one case shape for the tables of a door with several topics ---- */

/* An edit of a topic's good message before it is packed (parts: the topic's struct of parts). */
typedef void (*door_edit_fn)(void *parts);
/* The topic's good message with edit applied (NULL: none), packed. */
typedef wire_buf (*door_pack_fn)(door_edit_fn edit);

/* One case of a topic's table (test_pager_door.c, test_accept_door.c). */
typedef struct door_case {
	const char *name;
	door_edit_fn edit;           /* NULL: the good message */
	void (*append)(wire_buf *b); /* raw fields after the packed message; NULL: none */
	const uint8_t *raw;          /* instead of the message: these bytes */
	size_t raw_len;
	long cut; /* > 0: keep the first cut bytes; < 0: drop -cut bytes at the end */
	Perfwatch__V1__DlqReason reason;
	const char *want; /* refused: in the detail; accepted: the identifying text (NULL: the good one) */
} door_case;

/* the table door_case_build reads: door_cases_run sets it */
static const door_case *door_cur_cases;
static door_pack_fn door_cur_pack;
static const char *door_cur_good;

/* A door_case_fn over door_cur_cases. */
static inline wire_buf door_case_build(size_t i, door_expect *e)
{
	const door_case *c = &door_cur_cases[i];
	bool ok = c->reason == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED;
	*e = (door_expect){c->name, c->reason, false, ok && c->want ? c->want : door_cur_good, 0};
	door_want_detail = ok ? NULL : c->want;
	wire_buf b = {0};
	if (c->raw) {
		wire_bytes(&b, c->raw, c->raw_len);
		return b;
	}
	b = door_cur_pack(c->edit);
	if (c->append)
		c->append(&b);
	if (c->cut > 0 && (size_t)c->cut < b.n)
		b.n = (size_t)c->cut;
	else if (c->cut < 0 && (size_t)-c->cut < b.n)
		b.n -= (size_t)-c->cut;
	return b;
}

/* door_run on a table of n door_cases; good: the good message's identifying text. */
static inline void door_cases_run(const char *topic, const door_case *cases, size_t n,
                                  door_pack_fn pack, const char *good, door_fn door,
                                  door_text_fn text)
{
	door_cur_cases = cases;
	door_cur_pack = pack;
	door_cur_good = good;
	door_run(topic, n, door_case_build, door, text);
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

/*
 * Those kinds as door_cases: EMPTY and EMPTY_WANT what an empty payload
 * gets, NOT the detail of bytes that are not the topic's message.
 */
#define DOOR_COMMON_CASES(EMPTY, EMPTY_WANT, NOT)                                                  \
	{"empty payload", NULL, NULL, (const uint8_t *)"", 0, 0, EMPTY, EMPTY_WANT},                  \
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, 0,                                  \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, NOT},                                   \
	{"truncated after 3 bytes", NULL, NULL, NULL, 0, 3,                                           \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, NOT},                                   \
	{"truncated by its last byte", NULL, NULL, NULL, 0, -1,                                       \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, NOT},                                   \
	{"field 1 as a varint", NULL, wire_w_id_varint, NULL, 0, 0,                                   \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, NOT},                                   \
	{"a length prefix past the end", NULL, wire_w_past_end_1, NULL, 0, 0,                         \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, NOT},                                   \
	{"a group that never ends", NULL, wire_w_group, NULL, 0, 0,                                   \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, NOT},                                   \
	{"unknown fields (a later version)", NULL, wire_w_unknown, NULL, 0, 0,                        \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED, NULL},                                    \
	{"NUL inside the id", NULL, wire_w_nul_1, NULL, 0, 0,                                         \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "contains a NUL byte"},                 \
	{"0xff in the id", NULL, wire_w_ff_1, NULL, 0, 0,                                             \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "is not valid UTF-8"},                  \
	{"an overlong '/' in the id", NULL, wire_w_overlong_1, NULL, 0, 0,                            \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "is not valid UTF-8"},                  \
	{"a surrogate in the id", NULL, wire_w_surrogate_1, NULL, 0, 0,                               \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "is not valid UTF-8"},                  \
	{"a cut sequence in the id", NULL, wire_w_cut_1, NULL, 0, 0,                                  \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "is not valid UTF-8"},                  \
	{"above U+10FFFF in the id", NULL, wire_w_above_1, NULL, 0, 0,                                \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "is not valid UTF-8"}

/* ---- random mutations of a good message ---- */

static inline uint64_t wire_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Runs n mutations of good (one to four edits each: a byte replaced, a bit
 * flipped, a byte dropped, the tail cut) through door, from seed (printed):
 * whatever comes in, the door must hand back a message or refuse with a
 * reason among decode_failed, missing_field, invalid_value, inconsistent and
 * a detail, and nothing else (ASan and UBSan watch the rest).
 */
static inline void door_mutations(const char *topic, const wire_buf *good, door_fn door, size_t n,
                                  uint64_t seed)
{
	size_t refused = 0;
	uint64_t s = seed ? seed : 1;
	for (size_t i = 0; i < n; i++) {
		wire_buf b = {0};
		wire_bytes(&b, good->p, good->n);
		unsigned edits = 1 + (unsigned)(wire_rand(&s) % 4);
		for (unsigned k = 0; k < edits && b.n; k++) {
			size_t at = (size_t)(wire_rand(&s) % b.n);
			switch (wire_rand(&s) % 4) {
			case 0: b.p[at] = (uint8_t)wire_rand(&s); break;
			case 1: b.p[at] ^= (uint8_t)(1u << (wire_rand(&s) % 8)); break;
			case 2: memmove(b.p + at, b.p + at + 1, b.n - at - 1); b.n--; break;
			default: b.n = at; break;
			}
		}
		ProtobufCMessage *m = (ProtobufCMessage *)&b;
		bool skip = false;
		char detail[512] = "";
		Perfwatch__V1__DlqReason r = door(b.n ? b.p : (const uint8_t *)"", b.n, &m, &skip, detail, sizeof detail);
		if (r == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) {
			cr_assert_not_null(m, "%s mutation %zu (seed %llu): accepted without a message", topic, i,
			                   (unsigned long long)seed);
			protobuf_c_message_free_unpacked(m, NULL);
		} else {
			refused++;
			cr_assert_null(m, "%s mutation %zu (seed %llu): refused but a message handed back", topic, i,
			               (unsigned long long)seed);
			cr_assert(detail[0] != '\0', "%s mutation %zu (seed %llu): refused without a detail", topic, i,
			          (unsigned long long)seed);
			cr_assert(r == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED ||
			                  r == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD ||
			                  r == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE ||
			                  r == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT,
			          "%s mutation %zu (seed %llu): reason %s (%s)", topic, i, (unsigned long long)seed,
			          wire_reason_name(r), detail);
		}
		free(b.p);
	}
	cr_log_info("%s door: %zu mutations of the good message (seed %llu), %zu refused, %zu taken", topic, n,
	            (unsigned long long)seed, refused, n - refused);
}

#endif
