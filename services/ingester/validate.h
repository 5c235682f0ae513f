/*
 * validate.h: the ingester's decision on one message of perf.runs.v1 —
 * store it, or dead-letter it with which DlqReason and why.
 *
 * main.c and ingest.c call pw_ingest_decode() on every message of a batch;
 * a run it refuses goes to perf.dlq.v1 (dlq.proto) with the reason and the
 * detail written here, and the rest of the batch goes on. Everything is a
 * pure function of the payload, the limits and the clock value passed in, so
 * that tests/unit/test_ingest_validate.c checks each kind of bad run without
 * a broker or a database. What is checked: the payload size; that it decodes;
 * every key field of §2 present; names that can be series-key components
 * (no '/', printable UTF-8, bounded length); known platform families with a
 * slice size that agrees with Platform.chips and .family; a canonical config
 * name that agrees with its parsed fields; the canonical metric names of
 * §3.2 with their units and their enum twin, each once; finite values inside
 * a sane range for the unit; timestamps neither in the future nor absurdly
 * old; op timings finite, non-negative, uniquely named; repeated fields and
 * text capped.
 */
#ifndef PW_INGEST_VALIDATE_H
#define PW_INGEST_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfwatch/v1/dlq.pb-c.h"
#include "perfwatch/v1/run.pb-c.h"
#include "pw_enums.h"

typedef Perfwatch__V1__DlqReason pw_dlq_reason; /* pw_enums.h names it */
#define PW_DLQ_NONE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED

/* RunResult.numerics_fingerprint: 16 to 64 lower-case hex digits (even), or empty */
#define PW_NUMERICS_FP_MIN 16
#define PW_NUMERICS_FP_MAX 64

/* The caps and the clock the checks use; pw_ingest_limits_default() fills the defaults. */
typedef struct pw_ingest_limits {
	int64_t now_unix_us;      /* the ingester's clock at the batch */
	int64_t max_future_us;    /* clock skew tolerated ahead of now (default 10 min) */
	int64_t max_age_us;       /* older than this is absurd (default 5 years: backfills pass, 1970 does not) */
	size_t max_payload;       /* bytes of one message (default 4 MiB) */
	size_t max_metrics;       /* MetricSamples per run (default 64) */
	size_t max_ops;           /* OpTimings per run (default 4096) */
	size_t max_name;          /* bytes of an identifier field (default 200) */
	size_t max_text;          /* bytes of a free-text field (default 4096) */
	size_t max_hlo_text;      /* bytes of hlo_text (default 1 MiB) */
	uint32_t max_repeat;      /* repeat_index (default 1000) */
} pw_ingest_limits;

void pw_ingest_limits_default(pw_ingest_limits *lim, int64_t now_unix_us);

/*
 * Checks a decoded run. Returns PW_DLQ_NONE when it may be stored, otherwise
 * the reason, with a lower-case one-line detail in detail (detail_len bytes,
 * PostgreSQL style: what is wrong, the field quoted).
 */
pw_dlq_reason pw_ingest_validate(const Perfwatch__V1__RunResult *run, const pw_ingest_limits *lim,
                                 char *detail, size_t detail_len);

/*
 * Size check, decode and validate in one. On PW_DLQ_NONE *out is the decoded
 * run, which the caller frees with perfwatch__v1__run_result__free_unpacked
 * (allocator NULL); on any reason *out is NULL and nothing is to be freed.
 */
pw_dlq_reason pw_ingest_decode(const void *payload, size_t len, const pw_ingest_limits *lim,
                               Perfwatch__V1__RunResult **out, char *detail, size_t detail_len);


/* The platform families the fleet has ("v5e", "v6e", "ironwood", "h100", "b200"). */
bool pw_ingest_platform_known(const char *name, uint32_t *chips, int *family);

/* Index of a canonical metric (0 = ttft_p50_ms ... as perfwatch.v1.Metric − 1), or -1. */
int pw_ingest_metric_index(const char *name);
/* Its unit ("ms", "tok/s/chip", "ratio", "usd/Mtok") and whether lower is better. */
const char *pw_ingest_metric_unit(int index);
bool pw_ingest_metric_lower_is_better(int index);

#endif
