/*
 * door_table.h: the one table engine of the door tests (test_baseliner_door.c,
 * test_gate_door.c, test_watch_door.c, test_bisect_door.c, test_attr_door.c,
 * test_pager_door.c, test_accept_door.c).
 *
 * A topic is its good message (a door_pack_fn that packs it after an edit of
 * its parts), a table of door_cases and the service's door (a door_fn): a case
 * edits the good message, appends raw fields to it (wire_build.h), cuts it or
 * replaces it by raw bytes, and says what the door must answer: the DlqReason
 * and a detail substring, or, for what must pass, the input class and the
 * identifying text. door_cases_run runs a table, door_mutations random
 * mutations of the good message. A new service's door adds tables, not loops:
 * its edits are DOOR_EDIT one-liners over its parts, its door a door_fn that
 * calls the service's decode (and door_expect_class when the service sorts
 * its input into classes), its table a door_case array passed with DOOR_TABLE.
 * Every row names all eleven fields (-Wmissing-field-initializers).
 */
#ifndef PW_TEST_DOOR_TABLE_H
#define PW_TEST_DOOR_TABLE_H

#include "wire_build.h"

/* ---- the runner ---- */

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

/* ---- the one case shape of every topic's table ---- */

/* An edit of a topic's good message before it is packed (parts: the topic's struct of parts). */
typedef void (*door_edit_fn)(void *parts);
/* defines fn, a door_edit_fn: decl takes the parts from p (as "T *q = p"), then stmt edits them */
#define DOOR_EDIT(fn, decl, stmt)                                                                  \
	static void fn(void *p)                                                                    \
	{                                                                                          \
		decl;                                                                              \
		stmt;                                                                              \
	}
/* The topic's good message with edit applied (NULL: none), packed. */
typedef wire_buf (*door_pack_fn)(door_edit_fn edit);

/* One case of a topic's table. */
typedef struct door_case {
	const char *name;
	door_edit_fn edit;           /* NULL: the good message */
	void (*append)(wire_buf *b); /* raw fields after the packed message; NULL: none */
	const uint8_t *raw;          /* instead of the message: these bytes */
	size_t raw_len;
	long cut; /* > 0: keep the first cut bytes; < 0: drop -cut bytes at the end */
	Perfwatch__V1__DlqReason reason;
	const char *want; /* refused: in the detail; accepted: the identifying text (NULL: the good one) */
	int in;           /* accepted: the input class the door must give (0: taken; else let by, skipped) */
	int tag;          /* what the topic's door checks besides (the attributor's before side) */
	size_t want_len;  /* accepted, non-zero: only the identifying text's length is checked */
} door_case;

/* the table door_case_build reads: door_cases_run sets it */
static const door_case *door_cur_cases;
/* the case being run, for a topic's door to check its in and tag (NULL: a mutation) */
static const door_case *door_cur_case;
static door_pack_fn door_cur_pack;
static const char *door_cur_good;

/* A door_case_fn over door_cur_cases. */
static inline wire_buf door_case_build(size_t i, door_expect *e)
{
	const door_case *c = &door_cur_cases[i];
	bool ok = c->reason == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED;
	*e = (door_expect){c->name, c->reason, ok && c->in != 0, ok && c->want ? c->want : door_cur_good,
	                   ok ? c->want_len : 0};
	door_cur_case = c;
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

/*
 * For a door that sorts its input into classes: expects in to be the class the
 * case being run wants (dead, the door's own, when refused; else its in).
 * Nothing during mutations.
 */
static inline void door_expect_class(const char *door, int in, int dead, const char *detail)
{
	const door_case *c = door_cur_case;
	if (!c)
		return;
	int want = c->reason != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED ? dead : c->in;
	cr_expect_eq(in, want, "case \"%s\": %s door: input class %d, want %d (%s)", c->name, door, in, want,
	             detail);
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
	door_cur_case = NULL;
}

/* a table's address and length, for door_cases_run */
#define DOOR_TABLE(t) (t), sizeof(t) / sizeof(t)[0]


/*
 * Those kinds as door_cases: EMPTY and EMPTY_WANT what an empty payload
 * gets, NOT the detail of bytes that are not the topic's message.
 */
#define DOOR_COMMON_CASES(EMPTY, EMPTY_WANT, NOT)                                                  \
	{"empty payload", NULL, NULL, (const uint8_t *)"", 0, 0, EMPTY, EMPTY_WANT, 0, 0, 0},      \
	{"random bytes", NULL, NULL, wire_junk, sizeof wire_junk, 0,                               \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, NOT, 0, 0, 0},                       \
	{"truncated after 3 bytes", NULL, NULL, NULL, 0, 3,                                        \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, NOT, 0, 0, 0},                       \
	{"truncated by its last byte", NULL, NULL, NULL, 0, -1,                                    \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, NOT, 0, 0, 0},                       \
	{"field 1 as a varint", NULL, wire_w_id_varint, NULL, 0, 0,                                \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, NOT, 0, 0, 0},                       \
	{"a length prefix past the end", NULL, wire_w_past_end_1, NULL, 0, 0,                      \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, NOT, 0, 0, 0},                       \
	{"a group that never ends", NULL, wire_w_group, NULL, 0, 0,                                \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, NOT, 0, 0, 0},                       \
	{"unknown fields (a later version)", NULL, wire_w_unknown, NULL, 0, 0,                     \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED, NULL, 0, 0, 0},                        \
	{"NUL inside the id", NULL, wire_w_nul_1, NULL, 0, 0,                                      \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "contains a NUL byte", 0, 0, 0},     \
	{"0xff in the id", NULL, wire_w_ff_1, NULL, 0, 0,                                          \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "is not valid UTF-8", 0, 0, 0},      \
	{"an overlong '/' in the id", NULL, wire_w_overlong_1, NULL, 0, 0,                         \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "is not valid UTF-8", 0, 0, 0},      \
	{"a surrogate in the id", NULL, wire_w_surrogate_1, NULL, 0, 0,                            \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "is not valid UTF-8", 0, 0, 0},      \
	{"a cut sequence in the id", NULL, wire_w_cut_1, NULL, 0, 0,                               \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "is not valid UTF-8", 0, 0, 0},      \
	{"above U+10FFFF in the id", NULL, wire_w_above_1, NULL, 0, 0,                             \
	 PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "is not valid UTF-8", 0, 0, 0}

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
	door_cur_case = NULL;
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
