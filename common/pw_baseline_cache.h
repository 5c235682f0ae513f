/*
 * pw_baseline_cache.h: the baselines' PostgreSQL reads and the one
 * cache-aside reader that every service and tool uses (pw_baseline.h has
 * the record).
 *
 * PostgreSQL (perfwatch.baselines) is the truth; Redis holds the latest
 * version of each series as `baseline:{series_key}`, a versioned hash
 * (pw_redis_set_versioned) whose version is pw_baseline_cache_version() and
 * whose payload is a packed perfwatch.v1.Baseline. The baseliner writes it
 * (services/baseliner/baseliner_store.h); the gate, the watcher, the
 * baseliner's GET /api/baseline and `perfwatch series show` read it through
 * pw_baseline_get / pw_baseline_get_many below.
 *
 * The reader never serves an entry older than the version the caller names
 * as current. A caller that holds the current version already passes it:
 * the gate, the watcher and `perfwatch series show` read the newest
 * baseline's version and state with the series row, in the query they run
 * anyway (a join that returns two columns more). One that holds none (GET
 * /api/baseline) passes PW_BASELINE_ASK and the reader asks
 * PostgreSQL for it when Redis holds an entry to check
 * (pw_baseline_current_pg: the newest version and state of the series, an
 * index probe that returns two columns instead of the record; a miss reads
 * the record instead). A cached entry older than the current version is
 * stale: the record is read from PostgreSQL and put back. When Redis is down, times
 * out or holds a value that does not decode, the read degrades to
 * PostgreSQL with the same result. Every read is counted by outcome
 * (perfwatch_baseline_cache_reads_total{outcome}: hit, miss, stale,
 * fallback, uncached). docs/baseliner.md ("Reading a baseline") has the
 * rules and the measured costs.
 */
#ifndef PW_BASELINE_CACHE_H
#define PW_BASELINE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_baseline.h"
#include "pw_metrics.h"
#include "pw_pg.h"
#include "pw_redis.h"
#include "pw_status.h"

/* SET baseline:{key} to r, versioned. Redis errors as pw_redis.h. */
pw_status pw_baseline_cache_put(pw_redis *rd, const pw_baseline_record *r, char *errbuf,
                                size_t errlen);

/* ------------------------------------------------------------ PostgreSQL */

/*
 * The latest stored baseline of series_key (pw_baseline_read_pg) or of
 * series_id (pw_baseline_read_pg_id), from PostgreSQL only.
 * PW_ERR_NOT_FOUND when the series has none; pw_pg's errors.
 */
pw_status pw_baseline_read_pg(pw_pg *pg, const char *series_key, pw_baseline_record *out,
                              char *errbuf, size_t errlen);
pw_status pw_baseline_read_pg_id(pw_pg *pg, int64_t series_id, pw_baseline_record *out,
                                 char *errbuf, size_t errlen);

/*
 * The latest stored baselines of keys[0..n) in one statement: out[i] and
 * found[i] (false when the series has none, or is not in perfwatch.series).
 */
pw_status pw_baseline_read_pg_many(pw_pg *pg, const char *const *keys, size_t n,
                                   pw_baseline_record *out, bool *found, char *errbuf,
                                   size_t errlen);

/*
 * The current cache version (pw_baseline_cache_version_of) of each of
 * keys[0..n) in one statement: the newest version's number and state, 0
 * when the series has no baseline. This is the reader's version check when
 * the caller has none of its own.
 */
pw_status pw_baseline_current_pg(pw_pg *pg, const char *const *keys, size_t n,
                                 uint64_t *current, char *errbuf, size_t errlen);

/* ---------------------------------------------------------- the reader */

/* Where a read found its baseline. */
typedef enum pw_baseline_source {
	PW_BASELINE_FROM_REDIS = 0,
	PW_BASELINE_FROM_PG,
} pw_baseline_source;

/* What the cache did for one read (the label of perfwatch_baseline_cache_reads_total). */
typedef enum pw_baseline_outcome {
	PW_BASELINE_HIT = 0,  /* Redis held the current version (or a newer one) */
	PW_BASELINE_MISS,     /* Redis held nothing for the series: PostgreSQL, put back */
	PW_BASELINE_STALE,    /* Redis held an older version: PostgreSQL, put back */
	PW_BASELINE_FALLBACK, /* Redis did not answer, or held a value that does not decode:
	                       * PostgreSQL (put back when Redis answers) */
	PW_BASELINE_UNCACHED, /* no Redis configured: PostgreSQL */
	PW_BASELINE_OUTCOMES,
} pw_baseline_outcome;

/* "hit", "miss", "stale", "fallback", "uncached". */
const char *pw_baseline_outcome_name(pw_baseline_outcome o);

/*
 * The cache's decision for one series, as a pure function: the entry Redis
 * answered with (cached: whether it held one that decodes, of cache version
 * cached_version; redis_ok: whether Redis answered at all) against the
 * current version. A hit needs cached_version >= current; current 0 (the
 * series has no baseline) is never a hit.
 */
pw_baseline_outcome pw_baseline_cache_judge(bool have_redis, bool redis_ok, bool cached,
                                            uint64_t cached_version, uint64_t current);

/* A caller's current version that it does not know: the reader asks PostgreSQL. */
#define PW_BASELINE_ASK UINT64_MAX

/*
 * The reader's connections and counters: one per thread (pw_redis and
 * pw_pg are single-threaded). rd may be NULL (no cache configured); reads
 * (may be NULL) is the family pw_baseline_cache_metric registered.
 */
typedef struct pw_baseline_reader {
	pw_redis *rd;               /* borrowed */
	pw_pg *pg;                  /* borrowed */
	pw_metric *reads;           /* borrowed */
	uint64_t n[PW_BASELINE_OUTCOMES]; /* reads by outcome since init */
} pw_baseline_reader;

void pw_baseline_reader_init(pw_baseline_reader *br, pw_redis *rd, pw_pg *pg, pw_metric *reads);

/* Registers perfwatch_baseline_cache_reads_total{outcome} in reg. */
pw_status pw_baseline_cache_metric(pw_metrics *reg, pw_metric **out, char *errbuf,
                                   size_t errlen);

/*
 * The latest baseline of series_key, cache-aside. current is the cache
 * version (pw_baseline_cache_version_of) the caller knows to be PostgreSQL's
 * latest, or PW_BASELINE_ASK to have the reader read it from PostgreSQL
 * when Redis holds an entry. A Redis entry of at least that version is returned as it is
 * (*src PW_BASELINE_FROM_REDIS); otherwise the record is read from
 * PostgreSQL (*src PW_BASELINE_FROM_PG) and put back into Redis (best
 * effort). *outcome (may be NULL) says what the cache did. Returns PW_OK,
 * PW_ERR_NOT_FOUND when PostgreSQL holds no baseline for the series (a
 * cached entry is then not served either), or pw_pg's errors; a Redis
 * failure is never an error of the read.
 */
pw_status pw_baseline_get(pw_baseline_reader *br, const char *series_key, uint64_t current,
                          pw_baseline_record *out, pw_baseline_source *src,
                          pw_baseline_outcome *outcome, char *errbuf, size_t errlen);

/*
 * pw_baseline_get for keys[0..n) with one Redis pipeline and at most one
 * PostgreSQL statement for the entries Redis could not serve (and one for
 * the versions of the entries it holds when current is NULL, which is
 * PW_BASELINE_ASK for all).
 * found[i] is false for a series without a baseline; src and outcome may be
 * NULL. Errors as pw_baseline_get (a PostgreSQL error fails the whole call).
 */
pw_status pw_baseline_get_many(pw_baseline_reader *br, const char *const *keys,
                               const uint64_t *current, size_t n, pw_baseline_record *out,
                               bool *found, pw_baseline_source *src,
                               pw_baseline_outcome *outcome, char *errbuf, size_t errlen);

#endif
