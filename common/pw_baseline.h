/*
 * pw_baseline.h: one baseline version as the baseliner stores it in
 * PostgreSQL, caches it in Redis and publishes it (baseline.proto): its
 * states, its wire form and the version order the cache compares. No I/O
 * here: the reads, and the one cache-aside reader every service and tool
 * uses, are pw_baseline_cache.h's.
 *
 * PostgreSQL (perfwatch.baselines) is the truth; Redis holds the latest
 * version of each series as `baseline:{series_key}`, a versioned hash
 * (pw_redis_set_versioned) whose version is pw_baseline_cache_version() and
 * whose payload is a packed perfwatch.v1.Baseline.
 */
#ifndef PW_BASELINE_RECORD_H
#define PW_BASELINE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_input.h"
#include "pw_status.h"

/*
 * "model/hlo/platform/config/metric" split into its five parts, pointers into
 * buf (a missing part is empty); returns how many were present.
 * pw_series_key_of gives the structured SeriesKey of the same split.
 */
int pw_series_key_split(const char *key, char *buf, size_t buflen, char *parts[5]);
Perfwatch__V1__SeriesKey pw_series_key_of(const char *key, char *buf, size_t buflen);

typedef enum pw_baseline_state {
	PW_BASELINE_BASELINING = 0, /* collecting the first null window */
	PW_BASELINE_ACTIVE,         /* a baseline exists and the series is gated */
	PW_BASELINE_FROZEN,         /* a fleet change invalidated it; re-baselining */
	PW_BASELINE_QUARANTINED,    /* σ above 2× the platform norm: a harness defect */
} pw_baseline_state;

/* "baselining", "active", "frozen", "quarantined": the perfwatch.baselines text. */
const char *pw_baseline_state_name(pw_baseline_state st);

/* The state named by s; anything else is baselining. */
pw_baseline_state pw_baseline_state_parse(const char *s);

/* Redis key prefix of a cached baseline. */
#define PW_BASELINE_CACHE_PREFIX "baseline:"
/* Room for a cache key: the prefix and a series key. */
#define PW_BASELINE_CACHE_KEY_MAX (PW_SERIES_KEY_MAX + 16)

/* One baseline version as stored, cached and published (baseline.proto). */
typedef struct pw_baseline_record {
	int64_t series_id;
	char series_key[PW_SERIES_KEY_MAX];
	uint32_t version;           /* 0: the series has no baseline yet (a freeze of a baselining series) */
	pw_baseline_state state;
	double median, mad_n, band_lo, band_hi, sigma, sigma_pct, platform_norm_sigma_pct;
	uint32_t n, days, chip_sets;
	int64_t window_start_us, window_end_us;
	char unit[32];
	char build_id[96];
	char freeze_reason[128];
	char freeze_event_id[64];
	int64_t computed_us;
	/* §4.5: candidate runs a release needs to certify each tier's MDE at
	 * sigma_pct (the baseliner's pw_baseline_record_power); 0 when not
	 * published (a row stored before migration 0044) */
	uint32_t required_n_top, required_n_tail;
	double mde_top_pct, mde_tail_pct;
	bool gpu_class;
} pw_baseline_record;

/*
 * Packs r as a perfwatch.v1.Baseline into a malloc'd buffer *buf (*len
 * bytes), which the caller frees. PW_ERR_NOMEM.
 */
pw_status pw_baseline_record_pack(const pw_baseline_record *r, uint8_t **buf, size_t *len);

/* Unpacks a Baseline into r. PW_ERR_INVALID for bytes that are not one. */
pw_status pw_baseline_record_unpack(const uint8_t *buf, size_t len, pw_baseline_record *r);

/*
 * The encoding of a cached baseline, the high bits of its cache version.
 * 2: the record with the power of migration 0044 (required_n_top/_tail,
 * mde_top_pct/_tail_pct, gpu_class). Entries written before (cache versions
 * version·4 + 1 or 2, below 2^40) lack those fields: every one of them is
 * older than any current version, so it is read as stale, never served with
 * a required n of 0, and the record read from PostgreSQL replaces it. A
 * change of what the cached payload holds takes the next number.
 */
#define PW_BASELINE_CACHE_ENCODING 2u
/* The bit a cache version's encoding starts at (version·4 + 2 < 2^34). */
#define PW_BASELINE_CACHE_ENCODING_SHIFT 40

/*
 * The order of a series' baselines as the cache compares them:
 * PW_BASELINE_CACHE_ENCODING·2^40 + version·4 + 2 for frozen, + 1
 * otherwise, so that a state change of one version (active -> frozen, made
 * in place) replaces the older state and an entry of an older encoding is
 * older than every version. 0 is no baseline.
 */
uint64_t pw_baseline_cache_version_of(uint32_t version, pw_baseline_state state);
uint64_t pw_baseline_cache_version(const pw_baseline_record *r);

/* "baseline:{series_key}" into buf (PW_BASELINE_CACHE_KEY_MAX bytes). */
void pw_baseline_cache_key(char *buf, size_t len, const char *series_key);

#endif
