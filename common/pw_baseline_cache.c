/*
 * pw_baseline_cache.c: the baselines' PostgreSQL reads and the cache-aside
 * reader. See pw_baseline_cache.h.
 */
#include "pw_baseline_cache.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_str(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

pw_status pw_baseline_cache_put(pw_redis *rd, const pw_baseline_record *r, char *errbuf,
                                size_t errlen)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	if (pw_baseline_record_pack(r, &buf, &len) != PW_OK)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory packing a baseline");
	char key[PW_BASELINE_CACHE_KEY_MAX];
	pw_baseline_cache_key(key, sizeof key, r->series_key);
	pw_status st = pw_redis_set_versioned(rd, key, pw_baseline_cache_version(r), buf, len, 0,
	                                      NULL, errbuf, errlen);
	free(buf);
	return st;
}

/* ------------------------------------------------------------ PostgreSQL */

#define US_SQL(c) "(extract(epoch from " c ") * 1000000)::bigint"
#define BASELINE_COLS                                                                     \
	"b.series_id, b.series_key, b.version, b.state, b.median, b.mad_n, b.band_lo, "       \
	"b.band_hi, b.sigma, b.sigma_pct, b.platform_norm_sigma_pct, b.n, b.days, "           \
	"b.chip_sets, " US_SQL("b.window_start") ", " US_SQL("b.window_end") ", b.unit, "     \
	"b.build_id, b.freeze_reason, b.freeze_event_id, " US_SQL("b.computed_at") ", "    \
	"b.required_n_top, b.required_n_tail, b.mde_top_pct, b.mde_tail_pct, b.gpu_class"

/* A row of BASELINE_COLS starting at column c0 into r. */
static void record_from_row(PGresult *res, int row, int c0, pw_baseline_record *r)
{
	memset(r, 0, sizeof *r);
	r->series_id = strtoll(PQgetvalue(res, row, c0 + 0), NULL, 10);
	copy_str(r->series_key, sizeof r->series_key, PQgetvalue(res, row, c0 + 1));
	r->version = (uint32_t)strtoul(PQgetvalue(res, row, c0 + 2), NULL, 10);
	r->state = pw_baseline_state_parse(PQgetvalue(res, row, c0 + 3));
	r->median = strtod(PQgetvalue(res, row, c0 + 4), NULL);
	r->mad_n = strtod(PQgetvalue(res, row, c0 + 5), NULL);
	r->band_lo = strtod(PQgetvalue(res, row, c0 + 6), NULL);
	r->band_hi = strtod(PQgetvalue(res, row, c0 + 7), NULL);
	r->sigma = strtod(PQgetvalue(res, row, c0 + 8), NULL);
	r->sigma_pct = strtod(PQgetvalue(res, row, c0 + 9), NULL);
	r->platform_norm_sigma_pct = strtod(PQgetvalue(res, row, c0 + 10), NULL);
	r->n = (uint32_t)strtoul(PQgetvalue(res, row, c0 + 11), NULL, 10);
	r->days = (uint32_t)strtoul(PQgetvalue(res, row, c0 + 12), NULL, 10);
	r->chip_sets = (uint32_t)strtoul(PQgetvalue(res, row, c0 + 13), NULL, 10);
	r->window_start_us = strtoll(PQgetvalue(res, row, c0 + 14), NULL, 10);
	r->window_end_us = strtoll(PQgetvalue(res, row, c0 + 15), NULL, 10);
	copy_str(r->unit, sizeof r->unit, PQgetvalue(res, row, c0 + 16));
	copy_str(r->build_id, sizeof r->build_id, PQgetvalue(res, row, c0 + 17));
	copy_str(r->freeze_reason, sizeof r->freeze_reason, PQgetvalue(res, row, c0 + 18));
	copy_str(r->freeze_event_id, sizeof r->freeze_event_id, PQgetvalue(res, row, c0 + 19));
	r->computed_us = strtoll(PQgetvalue(res, row, c0 + 20), NULL, 10);
	r->required_n_top = (uint32_t)strtoul(PQgetvalue(res, row, c0 + 21), NULL, 10);
	r->required_n_tail = (uint32_t)strtoul(PQgetvalue(res, row, c0 + 22), NULL, 10);
	r->mde_top_pct = strtod(PQgetvalue(res, row, c0 + 23), NULL);
	r->mde_tail_pct = strtod(PQgetvalue(res, row, c0 + 24), NULL);
	r->gpu_class = PQgetvalue(res, row, c0 + 25)[0] == 't';
}

/* One row of BASELINE_COLS, or none: *out from it, else PW_ERR_NOT_FOUND naming what. */
static pw_status read_one(pw_pg *pg, const char *sql, const char *param, const char *what,
                          pw_baseline_record *out, char *errbuf, size_t errlen)
{
	PGresult *res = NULL;
	const char *params[1] = {param};
	pw_status st = pw_pg_exec(pg, sql, 1, params, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (PQntuples(res) < 1) {
		PQclear(res);
		return pw_fail(PW_ERR_NOT_FOUND, errbuf, errlen, "no baseline for series %s \"%s\"",
		               what, param);
	}
	record_from_row(res, 0, 0, out);
	PQclear(res);
	return PW_OK;
}

pw_status pw_baseline_read_pg(pw_pg *pg, const char *series_key, pw_baseline_record *out,
                              char *errbuf, size_t errlen)
{
	/* latest_baselines for one series, written out so that the planner walks
	 * the primary key of that series instead of the view's DISTINCT ON */
	return read_one(pg,
	                "SELECT " BASELINE_COLS " FROM (SELECT b.*, s.series_key "
	                "FROM perfwatch.series s JOIN perfwatch.baselines b USING (series_id) "
	                "WHERE s.series_key = $1 ORDER BY b.version DESC LIMIT 1) b",
	                series_key, "key", out, errbuf, errlen);
}

pw_status pw_baseline_read_pg_id(pw_pg *pg, int64_t series_id, pw_baseline_record *out,
                                 char *errbuf, size_t errlen)
{
	char id[32];
	snprintf(id, sizeof id, "%" PRId64, series_id);
	return read_one(pg,
	                "SELECT " BASELINE_COLS " FROM (SELECT b.*, s.series_key "
	                "FROM perfwatch.baselines b JOIN perfwatch.series s USING (series_id) "
	                "WHERE b.series_id = $1 ORDER BY b.version DESC LIMIT 1) b",
	                id, "id", out, errbuf, errlen);
}

pw_status pw_baseline_read_pg_many(pw_pg *pg, const char *const *keys, size_t n,
                                   pw_baseline_record *out, bool *found, char *errbuf,
                                   size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		found[i] = false;
	if (n == 0)
		return PW_OK;
	char *arr = pw_pg_text_array(keys, n);
	if (!arr)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory reading %zu baselines", n);
	PGresult *res = NULL;
	const char *params[1] = {arr};
	pw_status st = pw_pg_exec(pg,
	                          "SELECT k.i, " BASELINE_COLS
	                          " FROM unnest($1::text[]) WITH ORDINALITY AS k(key, i)"
	                          " JOIN perfwatch.series s ON s.series_key = k.key"
	                          " JOIN LATERAL (SELECT b.*, s.series_key FROM perfwatch.baselines b"
	                          "   WHERE b.series_id = s.series_id ORDER BY b.version DESC LIMIT 1)"
	                          " b ON true",
	                          1, params, &res, errbuf, errlen);
	free(arr);
	if (st != PW_OK)
		return st;
	for (int row = 0; row < PQntuples(res); row++) {
		long long i = strtoll(PQgetvalue(res, row, 0), NULL, 10) - 1;
		if (i < 0 || (size_t)i >= n)
			continue;
		record_from_row(res, row, 1, &out[i]);
		found[i] = true;
	}
	PQclear(res);
	return PW_OK;
}

pw_status pw_baseline_current_pg(pw_pg *pg, const char *const *keys, size_t n,
                                 uint64_t *current, char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		current[i] = 0;
	if (n == 0)
		return PW_OK;
	PGresult *res = NULL;
	pw_status st;
	if (n == 1) {
		/* the single read's probe, without the array */
		st = pw_pg_exec(pg,
		                "SELECT 1, b.version, b.state FROM perfwatch.series s"
		                " JOIN LATERAL (SELECT version, state FROM perfwatch.baselines"
		                "   WHERE series_id = s.series_id ORDER BY version DESC LIMIT 1)"
		                " b ON true WHERE s.series_key = $1",
		                1, keys, &res, errbuf, errlen);
	} else {
		char *arr = pw_pg_text_array(keys, n);
		if (!arr)
			return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory reading %zu versions",
			               n);
		const char *params[1] = {arr};
		st = pw_pg_exec(pg,
		                "SELECT k.i, b.version, b.state"
		                " FROM unnest($1::text[]) WITH ORDINALITY AS k(key, i)"
		                " JOIN perfwatch.series s ON s.series_key = k.key"
		                " JOIN LATERAL (SELECT version, state FROM perfwatch.baselines"
		                "   WHERE series_id = s.series_id ORDER BY version DESC LIMIT 1)"
		                " b ON true",
		                1, params, &res, errbuf, errlen);
		free(arr);
	}
	if (st != PW_OK)
		return st;
	for (int row = 0; row < PQntuples(res); row++) {
		long long i = strtoll(PQgetvalue(res, row, 0), NULL, 10) - 1;
		if (i < 0 || (size_t)i >= n)
			continue;
		current[i] = pw_baseline_cache_version_of(
			(uint32_t)strtoul(PQgetvalue(res, row, 1), NULL, 10),
			pw_baseline_state_parse(PQgetvalue(res, row, 2)));
	}
	PQclear(res);
	return PW_OK;
}

/* ---------------------------------------------------------- the reader */

const char *pw_baseline_outcome_name(pw_baseline_outcome o)
{
	switch (o) {
	case PW_BASELINE_HIT: return "hit";
	case PW_BASELINE_MISS: return "miss";
	case PW_BASELINE_STALE: return "stale";
	case PW_BASELINE_FALLBACK: return "fallback";
	case PW_BASELINE_UNCACHED: return "uncached";
	case PW_BASELINE_OUTCOMES: break;
	}
	return "unknown";
}

pw_baseline_outcome pw_baseline_cache_judge(bool have_redis, bool redis_ok, bool cached,
                                            uint64_t cached_version, uint64_t current)
{
	if (!have_redis)
		return PW_BASELINE_UNCACHED;
	if (!redis_ok)
		return PW_BASELINE_FALLBACK;
	if (!cached)
		return PW_BASELINE_MISS;
	return current != 0 && cached_version >= current ? PW_BASELINE_HIT : PW_BASELINE_STALE;
}

void pw_baseline_reader_init(pw_baseline_reader *br, pw_redis *rd, pw_pg *pg, pw_metric *reads)
{
	memset(br, 0, sizeof *br);
	br->rd = rd;
	br->pg = pg;
	br->reads = reads;
}

pw_status pw_baseline_cache_metric(pw_metrics *reg, pw_metric **out, char *errbuf,
                                   size_t errlen)
{
	return pw_metrics_counter(reg, "perfwatch_baseline_cache_reads_total",
	                          "baseline reads through the cache, by what the cache did: hit, "
	                          "miss, stale (an older version than PostgreSQL's), fallback (Redis "
	                          "did not answer), uncached (no Redis configured)",
	                          (const char *const[]){"outcome", NULL}, out, errbuf, errlen);
}

static void count(pw_baseline_reader *br, pw_baseline_outcome o)
{
	br->n[o]++;
	if (br->reads)
		pw_metric_inc(br->reads, (const char *[]){pw_baseline_outcome_name(o)});
}

/*
 * A Redis answer for key: whether it decodes into a record of that series
 * whose cache version is the one it is stored under, or that version in an
 * older encoding (PW_BASELINE_CACHE_ENCODING: an entry put before the
 * payload held what it holds now, below every current version, so judged
 * stale and replaced). A value that does not is treated as Redis not
 * answering (the truth is read and put back over it).
 */
static bool decode_entry(const char *key, const pw_redis_read *x, pw_baseline_record *rec)
{
	if (pw_baseline_record_unpack((const uint8_t *)x->val, x->len, rec) != PW_OK ||
	    strcmp(rec->series_key, key) != 0)
		return false;
	const uint64_t low = (UINT64_C(1) << PW_BASELINE_CACHE_ENCODING_SHIFT) - 1;
	uint64_t want = pw_baseline_cache_version(rec);
	return x->version == want ||
	       ((x->version >> PW_BASELINE_CACHE_ENCODING_SHIFT) < PW_BASELINE_CACHE_ENCODING &&
	        (x->version & low) == (want & low));
}

/*
 * Puts recs[0..n) back into Redis in one pipeline, versioned (an entry
 * another writer made newer meanwhile stays); a key whose entry was not a
 * baseline (bad[i]: it did not decode, or is of another kind) is deleted
 * first, since its version field could hold off every versioned set. Best
 * effort: only PW_ERR_NOMEM is an error.
 */
static pw_status put_back(pw_redis *rd, const pw_baseline_record *recs, const bool *bad,
                          size_t n, char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	pw_redis_write *w = calloc(2 * n, sizeof *w);
	uint8_t **bufs = calloc(n, sizeof *bufs);
	char (*ckeys)[PW_BASELINE_CACHE_KEY_MAX] = malloc(n * sizeof *ckeys);
	if (!w || !bufs || !ckeys) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory putting %zu baselines back", n);
		goto out;
	}
	size_t nw = 0;
	for (size_t k = 0; k < n; k++) {
		pw_baseline_cache_key(ckeys[k], sizeof ckeys[k], recs[k].series_key);
		if (bad[k])
			w[nw++] = (pw_redis_write){.key = ckeys[k]}; /* val NULL: DEL */
		size_t len = 0;
		if (pw_baseline_record_pack(&recs[k], &bufs[k], &len) != PW_OK) {
			st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory packing a baseline");
			goto out;
		}
		w[nw++] = (pw_redis_write){.key = ckeys[k], .val = bufs[k], .len = len,
		                           .version = pw_baseline_cache_version(&recs[k])};
	}
	char rerr[256];
	if (pw_redis_write_many(rd, w, nw, rerr, sizeof rerr) == PW_ERR_NOMEM)
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "%s", rerr);
out:
	for (size_t k = 0; bufs && k < n; k++)
		free(bufs[k]);
	free(bufs);
	free(ckeys);
	free(w);
	return st;
}

pw_status pw_baseline_get(pw_baseline_reader *br, const char *series_key, uint64_t current,
                          pw_baseline_record *out, pw_baseline_source *src,
                          pw_baseline_outcome *outcome, char *errbuf, size_t errlen)
{
	bool found = false;
	pw_baseline_source s = PW_BASELINE_FROM_PG;
	pw_baseline_outcome o = PW_BASELINE_UNCACHED;
	const char *keys[1] = {series_key};
	uint64_t *cur = current == PW_BASELINE_ASK ? NULL : &current;
	pw_status st = pw_baseline_get_many(br, keys, cur, 1, out, &found, &s, &o, errbuf, errlen);
	if (src)
		*src = s;
	if (outcome)
		*outcome = o;
	if (st == PW_OK && !found)
		return pw_fail(PW_ERR_NOT_FOUND, errbuf, errlen, "no baseline for series \"%s\"",
		               series_key);
	return st;
}

pw_status pw_baseline_get_many(pw_baseline_reader *br, const char *const *keys,
                               const uint64_t *current, size_t n, pw_baseline_record *out,
                               bool *found, pw_baseline_source *src,
                               pw_baseline_outcome *outcome, char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	pw_redis_read *rx = NULL;
	char (*ckeys)[PW_BASELINE_CACHE_KEY_MAX] = NULL;
	bool *cached = NULL;        /* Redis held a baseline of the series */
	bool *answered = NULL;      /* Redis answered for the key with a baseline or nothing */
	bool *bad = NULL;           /* Redis held something for the key that is not a baseline */
	uint64_t *asked = NULL;     /* PostgreSQL's current versions of the cached series */
	const char **probe = NULL, **missing = NULL;
	size_t *probe_at = NULL, *missing_at = NULL;
	pw_baseline_record *pg_rec = NULL;
	bool *pg_found = NULL, *put_bad = NULL;
	pw_baseline_outcome *oc = NULL;
	for (size_t i = 0; i < n; i++)
		found[i] = false;
	if (n == 0)
		return PW_OK;
	size_t n1 = n + 1;
	cached = calloc(n1, sizeof *cached);
	answered = calloc(n1, sizeof *answered);
	bad = calloc(n1, sizeof *bad);
	oc = malloc(n1 * sizeof *oc);
	probe = malloc(n1 * sizeof *probe);
	probe_at = malloc(n1 * sizeof *probe_at);
	missing = malloc(n1 * sizeof *missing);
	missing_at = malloc(n1 * sizeof *missing_at);
	if (!cached || !answered || !bad || !oc || !probe || !probe_at || !missing || !missing_at)
		goto nomem;

	/* 1. Redis: one pipeline */
	bool redis_ok = false;
	if (br->rd) {
		rx = calloc(n1, sizeof *rx);
		ckeys = malloc(n1 * sizeof *ckeys);
		if (!rx || !ckeys)
			goto nomem;
		for (size_t i = 0; i < n; i++) {
			pw_baseline_cache_key(ckeys[i], sizeof ckeys[i], keys[i]);
			rx[i].key = ckeys[i];
		}
		char rerr[256];
		pw_status rst = pw_redis_get_versioned_many(br->rd, rx, n, rerr, sizeof rerr);
		if (rst == PW_ERR_NOMEM) {
			st = pw_fail(rst, errbuf, errlen, "%s", rerr);
			goto out;
		}
		redis_ok = rst == PW_OK;
	}
	size_t nprobe = 0;
	for (size_t i = 0; i < n; i++) {
		if (!rx || !redis_ok)
			continue;
		if (rx[i].st == PW_OK) {
			cached[i] = decode_entry(keys[i], &rx[i], &out[i]);
			answered[i] = cached[i]; /* an entry that does not decode: as if Redis had failed */
			bad[i] = !cached[i];
		} else {
			answered[i] = rx[i].st == PW_ERR_NOT_FOUND;
			bad[i] = rx[i].st == PW_ERR_REDIS; /* not a versioned value: a key of another kind */
		}
		if (cached[i] && !current) {
			probe_at[nprobe] = i;
			probe[nprobe++] = keys[i];
		}
	}

	/* 2. the version check: the caller's current versions, else PostgreSQL's
	 * (asked only for the series Redis holds an entry of: a miss reads the
	 * record from PostgreSQL anyway) */
	if (nprobe) {
		asked = malloc(nprobe * sizeof *asked);
		if (!asked)
			goto nomem;
		if ((st = pw_baseline_current_pg(br->pg, probe, nprobe, asked, errbuf, errlen)) != PW_OK)
			goto out;
	}
	size_t nmissing = 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t cur = 0;
		if (current)
			cur = current[i];
		else if (k < nprobe && probe_at[k] == i)
			cur = asked[k++];
		oc[i] = pw_baseline_cache_judge(br->rd != NULL, answered[i], cached[i],
		                                cached[i] ? rx[i].version : 0, cur);
		if (oc[i] == PW_BASELINE_HIT) {
			found[i] = true;
			if (src)
				src[i] = PW_BASELINE_FROM_REDIS;
			continue;
		}
		if (src)
			src[i] = PW_BASELINE_FROM_PG;
		if (cached[i] && !current && cur == 0)
			continue; /* PostgreSQL said just now that the series has no baseline */
		missing_at[nmissing] = i;
		missing[nmissing++] = keys[i];
	}

	/* 3. PostgreSQL for the rest, put back into Redis when it answered */
	if (nmissing) {
		pg_rec = malloc(nmissing * sizeof *pg_rec);
		pg_found = malloc(nmissing * sizeof *pg_found);
		put_bad = malloc(nmissing * sizeof *put_bad);
		if (!pg_rec || !pg_found || !put_bad)
			goto nomem;
		st = pw_baseline_read_pg_many(br->pg, missing, nmissing, pg_rec, pg_found, errbuf,
		                              errlen);
		if (st != PW_OK)
			goto out;
		size_t nput = 0;
		for (size_t m = 0; m < nmissing; m++) {
			size_t i = missing_at[m];
			if (!pg_found[m])
				continue;
			out[i] = pg_rec[m];
			found[i] = true;
			pg_rec[nput] = pg_rec[m];
			put_bad[nput++] = bad[i];
		}
		if (br->rd && redis_ok && nput &&
		    (st = put_back(br->rd, pg_rec, put_bad, nput, errbuf, errlen)) != PW_OK)
			goto out;
	}
	for (size_t i = 0; i < n; i++) {
		count(br, oc[i]);
		if (outcome)
			outcome[i] = oc[i];
	}
	goto out;

nomem:
	st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory reading %zu baselines", n);
out:
	pw_redis_reads_release(rx, rx ? n : 0);
	free(rx);
	free(ckeys);
	free(cached);
	free(answered);
	free(bad);
	free(asked);
	free(oc);
	free(probe);
	free(probe_at);
	free(missing);
	free(missing_at);
	free(pg_rec);
	free(pg_found);
	free(put_bad);
	return st;
}
