/*
 * rows.h: how a validated run becomes database rows and messages — COPY
 * rows for perfwatch.runs, samples and op_timings in COPY's binary format,
 * built with the encoders of pw_copy.h; the series key, the SeriesPoint and
 * DeadLetter payloads, and the payload's SHA-256.
 *
 * store.c COPYs these rows straight into their tables and publishes the
 * messages; all of it is pure and allocation-bounded (a pw_copybuf has a
 * hard cap), so tests/unit/test_ingest_rows.c checks the encodings without
 * PostgreSQL.
 */
#ifndef PW_INGEST_ROWS_H
#define PW_INGEST_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "perfwatch/v1/dlq.pb-c.h"
#include "perfwatch/v1/run.pb-c.h"
#include "perfwatch/v1/series.pb-c.h"
#include "pw_copy.h"
#include "pw_status.h"

/* SHA-256 of n bytes. */
void pw_sha256(const void *p, size_t n, uint8_t out[32]);

/* "model/hlo_fingerprint/platform/config/metric" into buf; PW_ERR_INVALID if it does not fit. */
pw_status pw_ingest_series_key(char *buf, size_t len, const Perfwatch__V1__RunResult *run,
                               const char *metric);

/* The lower-case enum names the tables store ("rc", "tpu_v6e", "decode", "int8", "open_loop"). */
const char *pw_ingest_build_kind_name(int kind);
const char *pw_ingest_family_name(int family);
const char *pw_ingest_phase_name(int phase);
const char *pw_ingest_dtype_name(int dtype);
const char *pw_ingest_load_mode_name(int mode);

/*
 * The column lists the rows below follow, for the COPY statements
 * (staging tables have the same columns as the real ones).
 */
extern const char pw_ingest_run_columns[];
extern const char pw_ingest_sample_columns[];
extern const char pw_ingest_op_columns[];

/*
 * One runs row in COPY's binary format (sha = SHA-256 of the payload,
 * partition/offset on perf.runs.v1). Binary like the others: the run's
 * twelve numbers were formatted here and parsed again by the server.
 */
void pw_ingest_row_run(pw_copybuf *b, const Perfwatch__V1__RunResult *run, const uint8_t sha[32],
                       int32_t partition, int64_t offset);
/*
 * One samples row per metric, in COPY's binary format (between a
 * pw_copybin_header and a pw_copybin_trailer); series_ids[i] is the id of
 * metric i's series. Binary because samples are most of a batch's rows:
 * no number formatting here and no parsing in the server.
 */
void pw_ingest_rows_samples(pw_copybuf *b, const Perfwatch__V1__RunResult *run,
                            const int64_t *series_ids);
/* One op_timings row per op, in COPY's binary format like the samples. */
void pw_ingest_rows_ops(pw_copybuf *b, const Perfwatch__V1__RunResult *run);

/*
 * The SeriesPoint of metric i of run, packed into a malloc'd buffer the caller
 * frees. series_key is metric i's pw_ingest_series_key, built once by the
 * caller, which also sends it as the message's Kafka key. PW_ERR_NOMEM,
 * PW_ERR_INVALID (index out of range, no key).
 */
pw_status pw_ingest_point_pack(const Perfwatch__V1__RunResult *run, size_t i, int64_t series_id,
                               const char *series_key, uint8_t **out, size_t *len);

#endif
