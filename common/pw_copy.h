/*
 * pw_copy.h: rows for PostgreSQL's COPY FROM STDIN, in its text and binary
 * formats, built in a capped buffer, and the one function that sends such a
 * buffer.
 *
 * The ingester (samples, op timings, runs) and the baseliner (baselines,
 * progress) write their hot tables with COPY; both build rows here so that
 * the escaping of text and the network-order binary encodings exist once.
 * Everything but pw_copy_send is pure (tests/unit/test_ingest_rows.c checks
 * the encodings without a server).
 */
#ifndef PW_COPY_H
#define PW_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "pw_pg.h"
#include "pw_status.h"

/* A growable byte buffer with a hard cap, for COPY data. */
typedef struct pw_copybuf {
	char *data;
	size_t len, cap, max;
	pw_status err; /* sticky: the first failure (PW_ERR_NOMEM or PW_ERR_INVALID over max) */
} pw_copybuf;

void pw_copybuf_init(pw_copybuf *b, size_t max);
void pw_copybuf_release(pw_copybuf *b);
/* Empties the buffer (keeps its memory) and clears the error. */
void pw_copybuf_reset(pw_copybuf *b);
void pw_copybuf_put(pw_copybuf *b, const char *s, size_t n);
/* A text field escaped for COPY's text format (\\, \t, \n, \r). */
void pw_copybuf_text(pw_copybuf *b, const char *s);
/* A field separator (tab) and the end of a row (newline). */
void pw_copybuf_sep(pw_copybuf *b);
void pw_copybuf_eol(pw_copybuf *b);
void pw_copybuf_uint(pw_copybuf *b, unsigned long long v);

/*
 * COPY's binary format (FORMAT binary): a header, then per row the number of
 * fields and each field as a 32-bit length and its value in network order,
 * then a trailer. Each writer below must match its column's type exactly
 * (integer = int4, bigint = int8, double precision = float8).
 */
void pw_copybin_header(pw_copybuf *b);
void pw_copybin_trailer(pw_copybuf *b);
void pw_copybin_row(pw_copybuf *b, int nfields);
void pw_copybin_text(pw_copybuf *b, const char *s);
/* A NULL field (length -1). */
void pw_copybin_null(pw_copybuf *b);
void pw_copybin_int4(pw_copybuf *b, int32_t v);
void pw_copybin_int8(pw_copybuf *b, int64_t v);
void pw_copybin_float8(pw_copybuf *b, double v);
/* A timestamptz from unix microseconds (PostgreSQL counts from 2000-01-01). */
void pw_copybin_timestamptz(pw_copybuf *b, int64_t unix_us);
void pw_copybin_bool(pw_copybuf *b, int v);
void pw_copybin_bytea(pw_copybuf *b, const uint8_t *p, size_t n);
/* A numeric (any precision and scale that hold it) from an unsigned 64-bit integer. */
void pw_copybin_numeric_u64(pw_copybuf *b, uint64_t v);

/*
 * Sends b->len bytes of b as the data of copy_sql ("COPY ... FROM STDIN ...")
 * in 1 MiB pieces. *rows (may be NULL) gets the rows the server took.
 * PW_OK; the buffer's own error (b->err) when it overflowed; pw_pg's errors
 * otherwise (the COPY is aborted, the transaction is then failed).
 */
pw_status pw_copy_send(pw_pg *pg, const char *copy_sql, const pw_copybuf *b, uint64_t *rows,
                       char *errbuf, size_t errlen);

#endif
