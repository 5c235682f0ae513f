/*
 * pw_copy.c: COPY row encodings and sending (contract in pw_copy.h).
 */
#include "pw_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- buffer ---------------------------------------------------------------- */

void pw_copybuf_init(pw_copybuf *b, size_t max)
{
	memset(b, 0, sizeof *b);
	b->max = max;
}

void pw_copybuf_release(pw_copybuf *b)
{
	free(b->data);
	memset(b, 0, sizeof *b);
}

void pw_copybuf_reset(pw_copybuf *b)
{
	b->len = 0;
	b->err = PW_OK;
}

void pw_copybuf_put(pw_copybuf *b, const char *s, size_t n)
{
	if (b->err != PW_OK)
		return;
	if (b->len + n > b->max) {
		b->err = PW_ERR_INVALID;
		return;
	}
	if (b->len + n > b->cap) {
		size_t nc = b->cap ? b->cap : 65536;
		while (nc < b->len + n)
			nc *= 2;
		if (nc > b->max)
			nc = b->max;
		char *nd = realloc(b->data, nc);
		if (!nd) {
			b->err = PW_ERR_NOMEM;
			return;
		}
		b->data = nd;
		b->cap = nc;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

void pw_copybuf_text(pw_copybuf *b, const char *s)
{
	const char *run = s;
	for (const char *p = s;; p++) {
		char c = *p;
		const char *esc = NULL;
		if (c == '\\')
			esc = "\\\\";
		else if (c == '\t')
			esc = "\\t";
		else if (c == '\n')
			esc = "\\n";
		else if (c == '\r')
			esc = "\\r";
		if (esc || c == '\0') {
			pw_copybuf_put(b, run, (size_t)(p - run));
			if (!esc)
				return;
			pw_copybuf_put(b, esc, 2);
			run = p + 1;
		}
	}
}

void pw_copybuf_sep(pw_copybuf *b) { pw_copybuf_put(b, "\t", 1); }
void pw_copybuf_eol(pw_copybuf *b) { pw_copybuf_put(b, "\n", 1); }

void pw_copybuf_uint(pw_copybuf *b, unsigned long long v)
{
	char t[32];
	int n = snprintf(t, sizeof t, "%llu", v);
	pw_copybuf_put(b, t, (size_t)n);
}

/* ---- binary COPY ------------------------------------------------------------- */

static void put_be(pw_copybuf *b, uint64_t v, int bytes)
{
	char t[8];
	for (int i = 0; i < bytes; i++)
		t[i] = (char)(v >> (8 * (bytes - 1 - i)));
	pw_copybuf_put(b, t, (size_t)bytes);
}

void pw_copybin_header(pw_copybuf *b)
{
	pw_copybuf_put(b, "PGCOPY\n\377\r\n\0", 11);
	put_be(b, 0, 4); /* flags: no OIDs */
	put_be(b, 0, 4); /* header extension length */
}

void pw_copybin_trailer(pw_copybuf *b) { put_be(b, 0xffff, 2); }
void pw_copybin_row(pw_copybuf *b, int nfields) { put_be(b, (uint16_t)nfields, 2); }

void pw_copybin_text(pw_copybuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	put_be(b, (uint32_t)n, 4);
	pw_copybuf_put(b, s ? s : "", n);
}

void pw_copybin_null(pw_copybuf *b) { put_be(b, 0xffffffffu, 4); }

void pw_copybin_int4(pw_copybuf *b, int32_t v)
{
	put_be(b, 4, 4);
	put_be(b, (uint32_t)v, 4);
}

void pw_copybin_int8(pw_copybuf *b, int64_t v)
{
	put_be(b, 8, 4);
	put_be(b, (uint64_t)v, 8);
}

void pw_copybin_float8(pw_copybuf *b, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	put_be(b, 8, 4);
	put_be(b, bits, 8);
}

void pw_copybin_timestamptz(pw_copybuf *b, int64_t unix_us)
{
	pw_copybin_int8(b, unix_us - 946684800LL * 1000000LL);
}

void pw_copybin_bool(pw_copybuf *b, int v)
{
	put_be(b, 1, 4);
	put_be(b, v ? 1 : 0, 1);
}

void pw_copybin_bytea(pw_copybuf *b, const uint8_t *p, size_t n)
{
	put_be(b, (uint32_t)n, 4);
	pw_copybuf_put(b, (const char *)p, n);
}

/*
 * numeric's send format: ndigits, weight, sign, dscale (int16 each), then
 * ndigits base-10000 digits, most significant first; the value is
 * sum(digit[i] * 10000^(weight - i)). Trailing zero digits are left out, as
 * PostgreSQL stores them.
 */
void pw_copybin_numeric_u64(pw_copybuf *b, uint64_t v)
{
	uint16_t d[5]; /* 2^64 < 10000^5 */
	int nd = 0;
	for (uint64_t x = v; x; x /= 10000)
		d[nd++] = (uint16_t)(x % 10000); /* least significant first */
	int weight = nd - 1, lo = 0;
	while (lo < nd && d[lo] == 0)
		lo++;
	int ndigits = nd - lo;
	put_be(b, 8 + 2 * (uint32_t)ndigits, 4);
	put_be(b, (uint16_t)ndigits, 2);
	put_be(b, (uint16_t)(nd ? weight : 0), 2);
	put_be(b, 0x0000, 2); /* positive */
	put_be(b, 0, 2);      /* no digits after the point */
	for (int i = nd - 1; i >= lo; i--)
		put_be(b, d[i], 2);
}

/* ---- sending ---------------------------------------------------------------- */

pw_status pw_copy_send(pw_pg *pg, const char *copy_sql, const pw_copybuf *b, uint64_t *rows,
                       char *errbuf, size_t errlen)
{
	if (b->err != PW_OK)
		return pw_fail(b->err, errbuf, errlen, "copy data exceeds %zu bytes", b->max);
	pw_status st = pw_pg_copy_begin(pg, copy_sql, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (size_t off = 0; off < b->len; ) {
		size_t n = b->len - off > (1u << 20) ? (1u << 20) : b->len - off;
		if ((st = pw_pg_copy_put(pg, b->data + off, n, errbuf, errlen)) != PW_OK) {
			pw_pg_copy_abort(pg, "copy failed");
			return st;
		}
		off += n;
	}
	return pw_pg_copy_end(pg, rows, errbuf, errlen);
}
