/*
 * baseliner_store.c: the baseliner's PostgreSQL and Redis I/O — records, the shared
 * reader with fallback, first-sight loads and batch writes. See baseliner_store.h.
 */
#include "baseliner_store.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pw_copy.h"
#include "pw_stats.h"

#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/baseline.pb-c.h"
#include "perfwatch/v1/bisect.pb-c.h"
#include "pw_outbox.h"
#include "pw_topics.h"

#define US_PER_DAY (86400LL * 1000000LL)

/* ------------------------------------------------------------- helpers */

static void copy_str(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

#define TS_SQL(p) "('epoch'::timestamptz + (" p ")::bigint * interval '1 microsecond')"
#define US_SQL(c) "(extract(epoch from " c ") * 1000000)::bigint"
/* Sample s was kept out of its series' window: an outlier (its alert) or the
 * continuation of an excursion (0018). */
#define KEPT_OUT_SQL                                                                               \
	"(EXISTS (SELECT 1 FROM perfwatch.alerts a WHERE a.alert_id ="                              \
	"   'bl-outlier/' || s.series_id || '/' || s.run_id || '/' || s.repeat_index)"              \
	" OR EXISTS (SELECT 1 FROM perfwatch.baseliner_excursion_points x WHERE"                     \
	"   x.series_id = s.series_id AND x.run_id = s.run_id AND x.repeat_index = s.repeat_index))"

/* ------------------------------------------------------------- records */

void pw_baseline_record_from_entry(pw_baseline_record *r, const pw_series_entry *e,
                                   pw_baseline_state st, int64_t computed_us)
{
	const pw_baseline_value *v = &e->bs.current;
	memset(r, 0, sizeof *r);
	r->series_id = e->series_id;
	copy_str(r->series_key, sizeof r->series_key, e->key);
	r->version = (uint32_t)v->version;
	r->state = st;
	r->median = v->median;
	r->mad_n = v->mad_n;
	r->band_lo = v->band_lo;
	r->band_hi = v->band_hi;
	r->sigma = v->mad_n;
	r->sigma_pct = isfinite(v->sigma_rel) ? v->sigma_rel * 100.0 : 0.0;
	r->platform_norm_sigma_pct = e->bs.params.platform_sigma * 100.0;
	r->n = (uint32_t)v->n;
	r->chip_sets = (uint32_t)v->n_chipsets;
	r->window_start_us = v->window_start_us;
	r->window_end_us = v->window_end_us;
	r->days = v->window_end_us > v->window_start_us
	                  ? (uint32_t)((v->window_end_us - v->window_start_us) / US_PER_DAY)
	                  : 0;
	copy_str(r->unit, sizeof r->unit, e->unit);
	copy_str(r->freeze_reason, sizeof r->freeze_reason, e->bs.freeze_reason);
	copy_str(r->freeze_event_id, sizeof r->freeze_event_id, e->bs.freeze_event);
	r->computed_us = computed_us;
	r->gpu_class = e->gpu_class;
	pw_baseline_record_power(r);
}

void pw_baseline_record_power(pw_baseline_record *r)
{
	r->required_n_top = r->required_n_tail = 0;
	r->mde_top_pct = pw_stats_series_mde(PW_POWER_MDE_TOP_PCT, r->gpu_class, PW_POWER_MDE_GPU_PCT);
	r->mde_tail_pct = pw_stats_series_mde(PW_POWER_MDE_TAIL_PCT, r->gpu_class,
	                                      PW_POWER_MDE_GPU_PCT);
	unsigned top, tail;
	if (r->version == 0 ||
	    pw_stats_required_n(r->sigma_pct, r->mde_top_pct, PW_POWER_ALPHA, PW_POWER_TARGET,
	                        PW_POWER_FLOOR_N, &top) != PW_OK ||
	    pw_stats_required_n(r->sigma_pct, r->mde_tail_pct, PW_POWER_ALPHA, PW_POWER_TARGET,
	                        PW_POWER_FLOOR_N, &tail) != PW_OK)
		return;
	r->required_n_top = top;
	r->required_n_tail = tail;
}

struct pw_baseline_cache_batch {
	size_t n;
	pw_redis_write *w;
	char (*keys)[PW_BASELINE_CACHE_KEY_MAX]; /* cache keys, w[i].key */
	char (*series)[PW_ST_KEY_MAX];      /* series keys, for the caller's bookkeeping */
	pw_redis_pending *pending;
};

static void cache_batch_free(pw_baseline_cache_batch *cb)
{
	if (!cb)
		return;
	pw_redis_pending_free(cb->pending);
	free(cb->w);
	free(cb->keys);
	free(cb->series);
	free(cb);
}

pw_status pw_baseline_cache_send(pw_redis *rd, const pw_baseline_record *const *recs, size_t n,
                                 pw_baseline_cache_batch **out, char *errbuf, size_t errlen)
{
	*out = NULL;
	pw_status rc = PW_OK;
	uint8_t **bufs = calloc(n ? n : 1, sizeof *bufs);
	pw_baseline_cache_batch *cb = calloc(1, sizeof *cb);
	if (cb) {
		cb->n = n;
		cb->w = calloc(n ? n : 1, sizeof *cb->w);
		cb->keys = malloc((n ? n : 1) * sizeof *cb->keys);
		cb->series = malloc((n ? n : 1) * sizeof *cb->series);
	}
	if (!bufs || !cb || !cb->w || !cb->keys || !cb->series) {
		rc = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for %zu cache writes", n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		copy_str(cb->series[i], sizeof cb->series[i], recs[i]->series_key);
		pw_baseline_cache_key(cb->keys[i], sizeof cb->keys[i], recs[i]->series_key);
		cb->w[i].key = cb->keys[i];
		if (recs[i]->version == 0 || (recs[i]->state != PW_BASELINE_ACTIVE &&
		                              recs[i]->state != PW_BASELINE_QUARANTINED))
			continue; /* val NULL: DEL */
		if (pw_baseline_record_pack(recs[i], &bufs[i], &cb->w[i].len) != PW_OK) {
			rc = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory packing a baseline");
			goto out;
		}
		cb->w[i].val = bufs[i];
		cb->w[i].version = pw_baseline_cache_version(recs[i]);
	}
	rc = pw_redis_write_send(rd, cb->w, n, &cb->pending, errbuf, errlen);
out:
	/* sent: the values are on the socket, no longer needed */
	for (size_t i = 0; bufs && i < n; i++)
		free(bufs[i]);
	free(bufs);
	if (cb)
		for (size_t i = 0; i < n; i++)
			cb->w[i].val = NULL;
	if (rc != PW_OK) {
		cache_batch_free(cb);
		return rc;
	}
	*out = cb;
	return PW_OK;
}

pw_status pw_baseline_cache_collect(pw_redis *rd, pw_baseline_cache_batch *cb,
                                    void (*done)(void *arg, const char *series_key, pw_status st),
                                    void *arg, char *errbuf, size_t errlen)
{
	if (!cb)
		return PW_OK;
	pw_redis_pending *p = cb->pending;
	cb->pending = NULL;
	pw_status rc = pw_redis_write_collect(rd, p, cb->w, cb->n, errbuf, errlen);
	for (size_t i = 0; done && i < cb->n; i++)
		done(arg, cb->series[i], rc == PW_OK ? cb->w[i].st : rc);
	cache_batch_free(cb);
	return rc;
}

/* ---------------------------------------------------------------- loads */

pw_status pw_bstore_load_series(pw_pg *pg, pw_series_entry *e, const pw_point_mark *upto,
                                char *errbuf, size_t errlen)
{
	char idbuf[32];
	snprintf(idbuf, sizeof idbuf, "%" PRId64, e->series_id);
	const char *p1[1] = {idbuf};
	PGresult *res = NULL;
	pw_status st;
	pw_baseline_series *bs = &e->bs;

	/* 1. the latest stored baseline */
	pw_baseline_record r;
	st = pw_baseline_read_pg_id(pg, e->series_id, &r, errbuf, errlen);
	if (st != PW_OK && st != PW_ERR_NOT_FOUND)
		return st;
	bool has_row = st == PW_OK;

	/* 2. the latest freeze and its time: the fleet change's, or an accepted
	 * shift's first shifted point (0035) with the newest point folded in when
	 * it was accepted */
	st = pw_pg_exec(pg,
	                "SELECT f.event_id, f.reason, f.unfrozen_at IS NULL, "
	                "coalesce(" US_SQL("coalesce(c.occurred_at, a.shift_at)") ", 0), "
	                "coalesce(f.frozen_version, 0), coalesce(" US_SQL("a.accepted_upto") ", 0) "
	                "FROM perfwatch.freezes f "
	                "LEFT JOIN perfwatch.fleet_changes c ON f.cause = 'fleet_change' "
	                "AND c.event_id = f.event_id "
	                "LEFT JOIN LATERAL (SELECT min(x.shift_at) AS shift_at, "
	                "max(x.accepted_upto) AS accepted_upto FROM perfwatch.shift_acceptances x "
	                "WHERE f.cause = 'accepted_shift' AND x.series_id = f.series_id "
	                "AND x.accept_id = f.event_id AND x.status = 'accepted') a ON true "
	                "WHERE f.series_id = $1 "
	                "ORDER BY f.frozen_at DESC, coalesce(c.occurred_at, a.shift_at) DESC LIMIT 1",
	                1, p1, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	bool has_freeze = PQntuples(res) > 0;
	bool open_freeze = has_freeze && strcmp(PQgetvalue(res, 0, 2), "t") == 0;
	int64_t since_us = has_freeze ? strtoll(PQgetvalue(res, 0, 3), NULL, 10) : 0;
	char fev[64] = "", freason[128] = "";
	int64_t fver = 0, accepted_upto_us = 0;
	if (has_freeze) {
		copy_str(fev, sizeof fev, PQgetvalue(res, 0, 0));
		copy_str(freason, sizeof freason, PQgetvalue(res, 0, 1));
		fver = strtoll(PQgetvalue(res, 0, 4), NULL, 10);
		accepted_upto_us = strtoll(PQgetvalue(res, 0, 5), NULL, 10);
	}
	PQclear(res);
	res = NULL;

	/* 3. the resume mark and environment */
	if (upto) {
		pw_point_mark m = *upto;
		e->mark = m;
		goto refill;
	}
	st = pw_pg_exec(pg,
	                "SELECT coalesce(" US_SQL("mark_measured_at") ", 0), mark_partition, "
	                "mark_offset, platform, chip_set, cell, firmware, harness_version "
	                "FROM perfwatch.baseliner_series WHERE series_id = $1",
	                1, p1, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	e->mark.ts_us = 0;
	e->mark.partition = -1;
	e->mark.offset = -1;
	if (PQntuples(res) > 0) {
		e->mark.ts_us = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		e->mark.partition = (int32_t)strtol(PQgetvalue(res, 0, 1), NULL, 10);
		e->mark.offset = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
		copy_str(e->env.platform, sizeof e->env.platform, PQgetvalue(res, 0, 3));
		copy_str(e->env.chip_set, sizeof e->env.chip_set, PQgetvalue(res, 0, 4));
		copy_str(e->env.cell, sizeof e->env.cell, PQgetvalue(res, 0, 5));
		copy_str(e->env.firmware, sizeof e->env.firmware, PQgetvalue(res, 0, 6));
		copy_str(e->env.harness_version, sizeof e->env.harness_version, PQgetvalue(res, 0, 7));
		e->has_env = true;
	}
	PQclear(res);
	res = NULL;

refill:
	/* 4. the window, re-filled from the samples up to the newest point folded in */
	pw_baseline_series_clear_window(bs);
	(void)pw_series_entry_set_refilled(e, NULL, 0);
	if (e->mark.ts_us != 0) {
		char since[32], mark_ts[32], lim[16], upto_acc[32];
		snprintf(since, sizeof since, "%" PRId64, since_us);
		snprintf(mark_ts, sizeof mark_ts, "%" PRId64, e->mark.ts_us);
		snprintf(lim, sizeof lim, "%zu", bs->params.max_window);
		snprintf(upto_acc, sizeof upto_acc, "%" PRId64, accepted_upto_us);
		const char *p4[5] = {idbuf, since, mark_ts, lim, upto_acc};
		/* an accepted shift's points were kept out against the old baseline:
		 * those folded in before the acceptance are the new window's */
		st = pw_pg_exec(
			pg,
			"SELECT ts, value, chip_set, run_id, repeat_index FROM ("
			" SELECT " US_SQL("s.measured_at") " AS ts, s.value, s.chip_set, s.run_id, s.repeat_index"
			" FROM perfwatch.samples s WHERE s.series_id = $1"
			" AND s.build_kind IN ('nightly', 'release')"
			" AND s.measured_at >= " TS_SQL("$2")
			" AND s.measured_at <= " TS_SQL("$3")
			" AND (s.measured_at <= " TS_SQL("$5") " OR NOT " KEPT_OUT_SQL ")"
			" ORDER BY s.measured_at DESC, s.run_id DESC, s.repeat_index DESC LIMIT $4::integer"
			") w ORDER BY ts, run_id, repeat_index",
			5, p4, &res, errbuf, errlen);
		if (st != PW_OK)
			return st;
		int nrows = PQntuples(res);
		uint64_t *ids = nrows > 0 ? malloc((size_t)nrows * sizeof *ids) : NULL;
		if (nrows > 0 && !ids) {
			PQclear(res);
			return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
		}
		for (int i = 0; i < nrows; i++) {
			pw_baseline_point pt = {
				.ts_us = strtoll(PQgetvalue(res, i, 0), NULL, 10),
				.value = strtod(PQgetvalue(res, i, 1), NULL),
				.chipset = pw_series_hash(PQgetvalue(res, i, 2)),
			};
			pw_baseline_series_push_quiet(bs, &pt);
			ids[i] = pw_series_point_id(PQgetvalue(res, i, 3),
			                            (uint32_t)strtoul(PQgetvalue(res, i, 4), NULL, 10));
		}
		PQclear(res);
		res = NULL;
		st = pw_series_entry_set_refilled(e, ids, (size_t)nrows);
		free(ids);
		if (st != PW_OK)
			return pw_fail(st, errbuf, errlen, "out of memory");
	}

	/* 5. the state */
	bs->has_baseline = false;
	bs->freeze_event[0] = bs->freeze_reason[0] = '\0';
	memset(&bs->current, 0, sizeof bs->current);
	if (has_row) {
		bs->current.version = r.version;
		bs->current.median = r.median;
		bs->current.mad_n = r.mad_n;
		bs->current.band_lo = r.band_lo;
		bs->current.band_hi = r.band_hi;
		bs->current.sigma_rel = r.median != 0.0 ? r.mad_n / fabs(r.median) : INFINITY;
		bs->current.n = r.n;
		bs->current.n_chipsets = r.chip_sets;
		bs->current.window_start_us = r.window_start_us;
		bs->current.window_end_us = r.window_end_us;
		copy_str(e->unit, sizeof e->unit, r.unit);
	}
	if (open_freeze) {
		bs->state = PW_BASELINE_FROZEN;
		copy_str(bs->freeze_event, sizeof bs->freeze_event, fev);
		copy_str(bs->freeze_reason, sizeof bs->freeze_reason, freason);
		e->freeze_since_us = since_us;
		e->frozen_version = fver;
	} else if (has_row && r.state != PW_BASELINE_BASELINING) {
		bs->state = r.state == PW_BASELINE_FROZEN ? PW_BASELINE_ACTIVE : r.state;
		bs->has_baseline = true;
	} else {
		bs->state = PW_BASELINE_BASELINING;
	}

	/* 6. an excursion in progress: the newest point folded in was kept out */
	if (bs->has_baseline && e->mark.ts_us != 0) {
		char mark_ts[32];
		snprintf(mark_ts, sizeof mark_ts, "%" PRId64, e->mark.ts_us);
		const char *p6[2] = {idbuf, mark_ts};
		st = pw_pg_exec(pg,
		                "SELECT s.value, " KEPT_OUT_SQL ", " US_SQL("s.measured_at")
		                " FROM perfwatch.samples s"
		                " WHERE s.series_id = $1 AND s.build_kind IN ('nightly', 'release')"
		                " AND s.measured_at <= " TS_SQL("$2")
		                " ORDER BY s.measured_at DESC, s.run_id DESC, s.repeat_index DESC LIMIT 1",
		                2, p6, &res, errbuf, errlen);
		if (st != PW_OK)
			return st;
		if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 1), "t") == 0)
			pw_baseline_series_resume_excursion(bs, strtod(PQgetvalue(res, 0, 0), NULL),
			                                    strtoll(PQgetvalue(res, 0, 2), NULL, 10));
		PQclear(res);
		res = NULL;
	}
	/* 7. the shift being tracked until it holds (accept.h) */
	st = pw_bstore_load_shift(pg, e, errbuf, errlen);
	if (st != PW_OK)
		return st;
	e->loaded = true;
	return PW_OK;
}

pw_status pw_bstore_load_known(pw_pg *pg, pw_series_table *t, const char *gpu_prefixes,
                               size_t *n, char *errbuf, size_t errlen)
{
	*n = 0;
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg,
	                          "SELECT series_id, series_key, platform, chip_set, cell, firmware, "
	                          "harness_version FROM perfwatch.baseliner_series ORDER BY series_id",
	                          0, NULL, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (int i = 0; i < PQntuples(res); i++) {
		const char *key = PQgetvalue(res, i, 1);
		char kb[PW_ST_KEY_MAX];
		char *parts[5];
		pw_series_key_split(key, kb, sizeof kb, parts);
		pw_series_entry *e = NULL;
		bool created = false;
		st = pw_series_table_get(t, key, pw_series_platform_is_gpu(parts[2], gpu_prefixes), &e,
		                         &created);
		if (st != PW_OK) {
			PQclear(res);
			return pw_fail(st, errbuf, errlen, "series table: cannot add \"%s\": %s", key,
			               pw_strerror(st));
		}
		if (!created)
			continue;
		e->series_id = strtoll(PQgetvalue(res, i, 0), NULL, 10);
		copy_str(e->env.platform, sizeof e->env.platform, PQgetvalue(res, i, 2));
		copy_str(e->env.chip_set, sizeof e->env.chip_set, PQgetvalue(res, i, 3));
		copy_str(e->env.cell, sizeof e->env.cell, PQgetvalue(res, i, 4));
		copy_str(e->env.firmware, sizeof e->env.firmware, PQgetvalue(res, i, 5));
		copy_str(e->env.harness_version, sizeof e->env.harness_version, PQgetvalue(res, i, 6));
		e->has_env = true;
		(*n)++;
	}
	PQclear(res);
	return PW_OK;
}

/* Splits s on the unit separator into a malloc'd array of pointers into s. */
static const char **split_us(char *s, size_t *n)
{
	*n = 0;
	if (!*s)
		return NULL;
	size_t cap = 1;
	for (const char *p = s; *p; p++)
		cap += *p == '\x1f';
	const char **out = calloc(cap, sizeof *out);
	if (!out)
		return NULL;
	char *p = s;
	for (;;) {
		out[(*n)++] = p;
		char *sep = strchr(p, '\x1f');
		if (!sep)
			break;
		*sep = '\0';
		p = sep + 1;
	}
	return out;
}

pw_status pw_bstore_load_fleet(pw_pg *pg, pw_fleet_log *l, size_t *n, char *errbuf,
                               size_t errlen)
{
	*n = 0;
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(
		pg,
		"SELECT event_id, " US_SQL("occurred_at") ", kind || ': ' || CASE WHEN reason <> '' "
		"THEN reason ELSE event_id END, array_to_string(platforms, E'\\x1f'), "
		"array_to_string(chip_sets, E'\\x1f'), array_to_string(cells, E'\\x1f'), "
		"array_to_string(firmware, E'\\x1f'), array_to_string(harness_versions, E'\\x1f') "
		"FROM perfwatch.fleet_changes ORDER BY occurred_at, event_id",
		0, NULL, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (int i = 0; i < PQntuples(res) && st == PW_OK; i++) {
		char *cols[5] = {0};
		const char **lists[5] = {0};
		size_t counts[5] = {0};
		for (int k = 0; k < 5; k++) {
			cols[k] = strdup(PQgetvalue(res, i, 3 + k));
			if (cols[k])
				lists[k] = split_us(cols[k], &counts[k]);
			if (!cols[k] || (cols[k][0] && !lists[k]))
				st = PW_ERR_NOMEM;
		}
		pw_fleet_selector sel = {lists[0], counts[0], lists[1], counts[1], lists[2], counts[2],
		                         lists[3], counts[3], lists[4], counts[4]};
		char reason[128];
		copy_str(reason, sizeof reason, PQgetvalue(res, i, 2));
		if (st == PW_OK)
			st = pw_fleet_log_add(l, PQgetvalue(res, i, 0), strtoll(PQgetvalue(res, i, 1), NULL, 10),
			                      reason, &sel);
		for (int k = 0; k < 5; k++) {
			free((void *)lists[k]);
			free(cols[k]);
		}
		if (st == PW_OK)
			(*n)++;
	}
	PQclear(res);
	if (st != PW_OK)
		return pw_fail(st, errbuf, errlen, "fleet log: %s", pw_strerror(st));
	return PW_OK;
}

/* --------------------------------------------------------------- writes */

pw_status pw_bstore_put_fleet(pw_pg *pg, const pw_bstore_fleet *f, char *errbuf, size_t errlen)
{
	/* the selector arrays as PostgreSQL array literals */
	const char *const *lists[5] = {f->sel.platforms, f->sel.chip_sets, f->sel.cells,
	                               f->sel.firmware, f->sel.harness_versions};
	size_t counts[5] = {f->sel.nplatforms, f->sel.nchip_sets, f->sel.ncells, f->sel.nfirmware,
	                    f->sel.nharness_versions};
	char *arrays[5] = {0};
	pw_status st = PW_OK;
	for (int k = 0; k < 5; k++) {
		char *txt = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&txt, &len);
		if (!m) {
			st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
			goto out;
		}
		fputc('{', m);
		for (size_t i = 0; i < counts[k]; i++) {
			if (i)
				fputc(',', m);
			fputc('"', m);
			for (const char *p = lists[k][i] ? lists[k][i] : ""; *p; p++) {
				if (*p == '"' || *p == '\\')
					fputc('\\', m);
				fputc(*p, m);
			}
			fputc('"', m);
		}
		fputc('}', m);
		fclose(m);
		arrays[k] = txt;
	}
	char occ[32];
	snprintf(occ, sizeof occ, "%" PRId64, f->occurred_us);
	const char *params[12] = {f->event_id, occ, f->kind, f->reason ? f->reason : "",
	                          f->source ? f->source : "", arrays[0], arrays[1], arrays[2],
	                          arrays[3], arrays[4], f->from_version ? f->from_version : "",
	                          f->to_version ? f->to_version : ""};
	st = pw_pg_exec(pg,
	                "INSERT INTO perfwatch.fleet_changes (event_id, occurred_at, kind, reason, "
	                "source, platforms, chip_sets, cells, firmware, harness_versions, "
	                "from_version, to_version) VALUES ($1, " TS_SQL("$2") ", $3, $4, $5, "
	                "$6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11, $12) "
	                "ON CONFLICT (event_id) DO NOTHING",
	                12, params, NULL, errbuf, errlen);
out:
	for (int k = 0; k < 5; k++)
		free(arrays[k]);
	return st;
}

/* A record's place in its batch, ordered by (series_id, version, position). */
typedef struct rec_ref {
	int64_t series_id;
	uint32_t version;
	size_t i;
} rec_ref;

static int rec_order(const void *a, const void *b)
{
	const rec_ref *x = a, *y = b;
	if (x->series_id != y->series_id)
		return x->series_id < y->series_id ? -1 : 1;
	if (x->version != y->version)
		return x->version < y->version ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

#define BASELINE_COPY_COLS                                                                  \
	"series_id, version, state, hlo_fingerprint, median, mad_n, band_lo, band_hi, sigma, "  \
	"sigma_pct, platform_norm_sigma_pct, n, days, chip_sets, window_start, window_end, "    \
	"unit, build_id, freeze_reason, freeze_event_id, computed_at, required_n_top, "          \
	"required_n_tail, mde_top_pct, mde_tail_pct, gpu_class"

static void baseline_row_bin(pw_copybuf *b, const pw_baseline_record *r)
{
	char kb[PW_ST_KEY_MAX];
	char *parts[5];
	pw_series_key_split(r->series_key, kb, sizeof kb, parts);
	pw_copybin_row(b, 26);
	pw_copybin_int8(b, r->series_id);
	pw_copybin_int4(b, (int32_t)r->version);
	pw_copybin_text(b, pw_baseline_state_name(r->state));
	pw_copybin_text(b, parts[1]);
	pw_copybin_float8(b, r->median);
	pw_copybin_float8(b, r->mad_n);
	pw_copybin_float8(b, r->band_lo);
	pw_copybin_float8(b, r->band_hi);
	pw_copybin_float8(b, r->sigma);
	pw_copybin_float8(b, r->sigma_pct);
	pw_copybin_float8(b, r->platform_norm_sigma_pct);
	pw_copybin_int4(b, (int32_t)r->n);
	pw_copybin_int4(b, (int32_t)r->days);
	pw_copybin_int4(b, (int32_t)r->chip_sets);
	pw_copybin_timestamptz(b, r->window_start_us);
	pw_copybin_timestamptz(b, r->window_end_us);
	pw_copybin_text(b, r->unit);
	pw_copybin_text(b, r->build_id);
	pw_copybin_text(b, r->freeze_reason);
	pw_copybin_text(b, r->freeze_event_id);
	pw_copybin_timestamptz(b, r->computed_us);
	pw_copybin_int4(b, (int32_t)r->required_n_top);
	pw_copybin_int4(b, (int32_t)r->required_n_tail);
	pw_copybin_float8(b, r->mde_top_pct);
	pw_copybin_float8(b, r->mde_tail_pct);
	pw_copybin_bool(b, r->gpu_class);
}

/* Upserts state changes of stored versions through a staging table (few rows: freezes). */
static pw_status upsert_baselines(pw_pg *pg, const pw_baseline_record *const *recs, size_t nrec,
                                  char *errbuf, size_t errlen)
{
	pw_status st = pw_pg_exec(pg,
	                          "CREATE TEMP TABLE IF NOT EXISTS pw_bl_changes "
	                          "(LIKE perfwatch.baselines INCLUDING DEFAULTS) ON COMMIT DELETE ROWS",
	                          0, NULL, NULL, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_copybuf b;
	pw_copybuf_init(&b, (size_t)1 << 30);
	pw_copybin_header(&b);
	for (size_t i = 0; i < nrec; i++)
		baseline_row_bin(&b, recs[i]);
	pw_copybin_trailer(&b);
	st = pw_copy_send(pg, "COPY pw_bl_changes (" BASELINE_COPY_COLS ") FROM STDIN (FORMAT binary)",
	                  &b, NULL, errbuf, errlen);
	pw_copybuf_release(&b);
	if (st != PW_OK)
		return st;
	return pw_pg_exec(
		pg,
		"INSERT INTO perfwatch.baselines (" BASELINE_COPY_COLS ") SELECT " BASELINE_COPY_COLS
		" FROM pw_bl_changes ON CONFLICT (series_id, version) DO UPDATE SET "
		"state = EXCLUDED.state, median = EXCLUDED.median, mad_n = EXCLUDED.mad_n, "
		"band_lo = EXCLUDED.band_lo, band_hi = EXCLUDED.band_hi, sigma = EXCLUDED.sigma, "
		"sigma_pct = EXCLUDED.sigma_pct, n = EXCLUDED.n, days = EXCLUDED.days, "
		"chip_sets = EXCLUDED.chip_sets, window_start = EXCLUDED.window_start, "
		"window_end = EXCLUDED.window_end, freeze_reason = EXCLUDED.freeze_reason, "
		"freeze_event_id = EXCLUDED.freeze_event_id, required_n_top = EXCLUDED.required_n_top, "
		"required_n_tail = EXCLUDED.required_n_tail, mde_top_pct = EXCLUDED.mde_top_pct, "
		"mde_tail_pct = EXCLUDED.mde_tail_pct, gpu_class = EXCLUDED.gpu_class, updated_at = now()",
		0, NULL, NULL, errbuf, errlen);
}

pw_status pw_bstore_put_baselines(pw_pg *pg, const pw_baseline_record *rec, const bool *fresh,
                                  size_t nrec, char *errbuf, size_t errlen)
{
	if (nrec == 0)
		return PW_OK;
	pw_status st = PW_OK;
	pw_copybuf b;
	pw_copybuf_init(&b, (size_t)1 << 30);
	rec_ref *idx = malloc(nrec * sizeof *idx);
	const pw_baseline_record **changes = malloc(nrec * sizeof *changes);
	if (!idx || !changes) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for %zu baselines", nrec);
		goto out;
	}
	size_t nref = 0;
	for (size_t i = 0; i < nrec; i++)
		if (rec[i].version > 0)
			idx[nref++] = (rec_ref){rec[i].series_id, rec[i].version, i};
	nrec = nref;
	qsort(idx, nrec, sizeof *idx, rec_order);
	size_t nchanges = 0, nfresh = 0;
	pw_copybin_header(&b);
	for (size_t g = 0; g < nrec;) {
		/* one (series_id, version): the last record counts; fresh if any is */
		size_t end = g;
		bool any_fresh = false;
		/* end moves outside the || : short-circuited, a fresh first record
		 * stopped it and the loop spun (seen when an accepted shift put two
		 * records of one version in a batch) */
		while (end < nrec && idx[end].series_id == idx[g].series_id &&
		       idx[end].version == idx[g].version) {
			any_fresh = any_fresh || fresh[idx[end].i];
			end++;
		}
		const pw_baseline_record *last = &rec[idx[end - 1].i];
		if (any_fresh) {
			baseline_row_bin(&b, last);
			nfresh++;
		} else {
			changes[nchanges++] = last;
		}
		g = end;
	}
	pw_copybin_trailer(&b);
	if (nfresh && (st = pw_copy_send(pg, "COPY perfwatch.baselines (" BASELINE_COPY_COLS
	                                     ") FROM STDIN (FORMAT binary)",
	                                 &b, NULL, errbuf, errlen)) != PW_OK)
		goto out;
	if (nchanges)
		st = upsert_baselines(pg, changes, nchanges, errbuf, errlen);
out:
	pw_copybuf_release(&b);
	free(idx);
	free(changes);
	return st;
}

pw_status pw_bstore_mark_frozen(pw_pg *pg, const pw_baseline_record *r, char *errbuf,
                                size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, r->series_id);
	pw_pg_params_int(&p, r->version);
	pw_pg_params_text(&p, r->freeze_reason);
	pw_pg_params_text(&p, r->freeze_event_id);
	return pw_pg_exec_params(pg,
	                         "UPDATE perfwatch.baselines SET state = 'frozen', freeze_reason = $3, "
	                         "freeze_event_id = $4, updated_at = now() WHERE series_id = $1 "
	                         "AND version = $2::integer",
	                         &p, 0, NULL, errbuf, errlen);
}

pw_status pw_bstore_put_freeze(pw_pg *pg, const pw_bstore_freeze *f, bool *job_new,
                               char *errbuf, size_t errlen)
{
	if (job_new)
		*job_new = false;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, f->series_id);
	pw_pg_params_text(&p, f->event_id);
	pw_pg_params_opt_int(&p, f->frozen_version != 0, f->frozen_version);
	pw_pg_params_text(&p, f->reason);
	pw_pg_params_text(&p, f->accepted_shift ? "accepted_shift" : "fleet_change");
	pw_status st = pw_pg_exec_params(pg,
	                         "INSERT INTO perfwatch.freezes (series_id, event_id, frozen_version, "
	                         "reason, cause) VALUES ($1, $2, $3::integer, $4, $5) "
	                         "ON CONFLICT (series_id, event_id) DO NOTHING",
	                         &p, 0, NULL, errbuf, errlen);
	if (st != PW_OK || f->runs_needed == 0)
		return st;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, f->series_id);
	pw_pg_params_text(&p, f->event_id);
	pw_pg_params_int(&p, f->since_us);
	pw_pg_params_int(&p, f->runs_needed);
	pw_pg_params_int(&p, f->chip_sets_needed);
	pw_pg_params_double(&p, f->days_needed);
	pw_pg_params_text(&p, f->job_id);
	pw_pg_params_int(&p, f->job_id[0] ? f->job_runs : 0);
	/* the outer SELECT sees the table as it was before this INSERT: a job is
	 * new when this row is and no earlier row of the transaction or before
	 * carries its id */
	PGresult *res = NULL;
	st = pw_pg_exec_params(pg,
	                       "WITH ins AS (INSERT INTO perfwatch.rebaseline_requests (series_id, "
	                       "event_id, frozen_since, runs_needed, chip_sets_needed, days_needed, "
	                       "job_id, job_runs) VALUES ($1, $2, " TS_SQL("$3") ", $4::integer, "
	                       "$5::integer, $6, $7, $8::integer) "
	                       "ON CONFLICT (series_id, event_id) DO NOTHING RETURNING job_id) "
	                       "SELECT count(*) FROM ins WHERE ins.job_id <> '' AND NOT EXISTS "
	                       "(SELECT 1 FROM perfwatch.rebaseline_requests r WHERE r.job_id = ins.job_id)",
	                       &p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (job_new)
		*job_new = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "1") == 0;
	PQclear(res);
	return PW_OK;
}

pw_status pw_bstore_rebaseline_job_id(const char *event_id, const char *series_key, char *buf,
                                      size_t len)
{
	/* FNV-1a 64 over the run configuration: the key up to its last '/' */
	const char *end = strrchr(series_key, '/');
	size_t n = end ? (size_t)(end - series_key) : strlen(series_key);
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)series_key[i];
		h *= 0x100000001b3ULL;
	}
	int k = snprintf(buf, len, "rb-%s-%016" PRIx64, event_id, h);
	return k > 0 && (size_t)k < len ? PW_OK : PW_ERR_INVALID;
}

pw_status pw_bstore_queue_rebaseline_job(pw_pg *pg, const pw_bstore_rebaseline_job *j,
                                         bool *queued, char *errbuf, size_t errlen)
{
	*queued = false;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, j->series_id);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec_params(
		pg,
		"SELECT se.model, se.hlo_fingerprint, se.platform, se.config, se.metric, r.model_rev, "
		"r.build_id, r.compiler_cl, r.compiler_cl_number, r.firmware, r.chips "
		"FROM perfwatch.series se CROSS JOIN LATERAL (SELECT x.run_id, x.repeat_index "
		"FROM perfwatch.samples x WHERE x.series_id = se.series_id AND x.build_kind = 'nightly' "
		"AND x.bisect_job_id = '' ORDER BY x.measured_at DESC LIMIT 1) l "
		"JOIN perfwatch.runs r ON r.run_id = l.run_id AND r.repeat_index = l.repeat_index "
		"WHERE se.series_id = $1",
		&p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return PW_OK;
	}
	Perfwatch__V1__SeriesKey sk = PERFWATCH__V1__SERIES_KEY__INIT;
	Perfwatch__V1__CompilerBuild cb = PERFWATCH__V1__COMPILER_BUILD__INIT;
	Perfwatch__V1__Platform pl = PERFWATCH__V1__PLATFORM__INIT;
	Perfwatch__V1__Config cf = PERFWATCH__V1__CONFIG__INIT;
	Perfwatch__V1__RunKey rk = PERFWATCH__V1__RUN_KEY__INIT;
	Perfwatch__V1__BisectJob job = PERFWATCH__V1__BISECT_JOB__INIT;
	sk.model = rk.model = PQgetvalue(res, 0, 0);
	sk.hlo_fingerprint = rk.hlo_fingerprint = PQgetvalue(res, 0, 1);
	sk.platform = pl.name = PQgetvalue(res, 0, 2);
	sk.config = cf.name = PQgetvalue(res, 0, 3);
	sk.metric = PQgetvalue(res, 0, 4);
	rk.model_rev = PQgetvalue(res, 0, 5);
	cb.build_id = PQgetvalue(res, 0, 6);
	cb.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_NIGHTLY;
	cb.cl = PQgetvalue(res, 0, 7);
	cb.cl_number = strtoll(PQgetvalue(res, 0, 8), NULL, 10);
	rk.firmware = PQgetvalue(res, 0, 9);
	pl.chips = (uint32_t)strtoul(PQgetvalue(res, 0, 10), NULL, 10);
	rk.compiler = &cb;
	rk.platform = &pl;
	rk.config = &cf;
	job.job_id = (char *)j->job_id;
	job.purpose = PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_REBASELINE;
	job.series_key = (char *)j->series_key;
	job.series = &sk;
	job.key = &rk;
	job.cl = cb.cl;
	job.cl_number = cb.cl_number;
	job.repeats = j->runs;
	job.requested_unix_us = j->requested_us;
	job.min_chip_sets = j->min_chip_sets;
	job.fleet_event_id = (char *)j->event_id;
	size_t n = perfwatch__v1__bisect_job__get_packed_size(&job);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf) {
		PQclear(res);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	}
	perfwatch__v1__bisect_job__pack(&job, buf);
	PQclear(res);
	st = pw_outbox_add(pg, "baseliner", j->event_id, PW_TOPIC_BISECT_JOBS, j->job_id, buf, n,
	                   errbuf, errlen);
	free(buf);
	if (st == PW_OK)
		*queued = true;
	return st;
}

pw_status pw_bstore_put_unfreeze(pw_pg *pg, const pw_bstore_unfreeze *u, char *errbuf,
                                 size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, u->series_id);
	pw_pg_params_int(&p, u->unfrozen_version);
	pw_pg_params_double(&p, u->new_level);
	/* an accepted shift records the level it ended at, before its freeze closes */
	pw_status st = pw_pg_exec_params(pg,
	                         "UPDATE perfwatch.shift_acceptances a SET new_version = $2::integer, "
	                         "new_level = $3, done_at = now() FROM perfwatch.freezes f "
	                         "WHERE f.series_id = $1 AND f.unfrozen_at IS NULL "
	                         "AND f.cause = 'accepted_shift' AND a.series_id = f.series_id "
	                         "AND a.accept_id = f.event_id AND a.status = 'accepted' "
	                         "AND a.new_version IS NULL",
	                         &p, 0, NULL, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, u->series_id);
	pw_pg_params_int(&p, u->unfrozen_version);
	st = pw_pg_exec_params(pg,
	                         "UPDATE perfwatch.rebaseline_requests SET status = 'done', "
	                         "done_at = now(), done_version = $2::integer WHERE series_id = $1 "
	                         "AND status = 'open'",
	                         &p, 0, NULL, errbuf, errlen);
	if (st != PW_OK)
		return st;
	return pw_pg_exec_params(pg,
	                         "UPDATE perfwatch.freezes SET unfrozen_at = greatest(now(), frozen_at), "
	                         "unfrozen_version = $2::integer WHERE series_id = $1 "
	                         "AND unfrozen_at IS NULL",
	                         &p, 0, NULL, errbuf, errlen);
}

pw_status pw_bstore_put_alert(pw_pg *pg, const pw_bstore_alert *a, char *errbuf,
                              size_t errlen)
{
	double d = a->value - a->base.median;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, a->alert_id);
	pw_pg_params_int(&p, a->created_us);
	pw_pg_params_int(&p, a->series_id);
	pw_pg_params_text(&p, a->series_key);
	pw_pg_params_double(&p, a->base.median);
	pw_pg_params_double(&p, a->base.mad_n);
	pw_pg_params_int(&p, a->base.n);
	pw_pg_params_opt_int(&p, a->base.version != 0, a->base.version);
	pw_pg_params_int(&p, a->base.window_start_us);
	pw_pg_params_int(&p, a->base.window_end_us);
	pw_pg_params_double(&p, a->value);
	pw_pg_params_double(&p, d);
	pw_pg_params_text(&p, a->base.unit);
	pw_pg_params_double(&p, a->base.median != 0.0 ? d / a->base.median * 100.0 : 0.0);
	pw_pg_params_opt_double(&p, a->outlier, isfinite(a->z) ? a->z : 0.0);
	pw_pg_params_text(&p, a->outlier ? "investigate" : "quarantined");
	pw_pg_params_text(&p, a->summary);
	bool unconfirmed = pw_bstore_alert_unconfirmed(a);
	pw_pg_params_text(&p, unconfirmed ? "unconfirmed" : "infra_health");
	pw_pg_params_text(&p, pw_bstore_alert_owner(a));
	pw_pg_params_text(&p, pw_signal_cause_name((pw_signal_cause)a->cause));
	pw_pg_params_text(&p, a->evidence);
	pw_pg_params_text(&p, unconfirmed ? "true" : "false");
	pw_pg_params_int(&p, a->revision ? a->revision : 1);
	pw_pg_params_text(&p, a->fleet_event_id);
	return pw_pg_exec_params(
		pg,
		"INSERT INTO perfwatch.alerts (alert_id, revision, kind, source, created_at, series_id, "
		"series_key, baseline_median, baseline_mad, baseline_n, baseline_version, "
		"baseline_window_start, baseline_window_end, observed_median, observed_n, delta_abs, "
		"delta_abs_unit, delta_pct, z_robust, verdict, owner_hint, routing, summary, "
		"signal_cause, signal_evidence, needs_confirmation, fleet_event_id) "
		"VALUES ($1, $23::integer, $18, 'baseliner', " TS_SQL("$2") ", $3, $4, $5, $6, "
		"$7::integer, $8::integer, " TS_SQL("$9") ", " TS_SQL("$10") ", $11, 1, $12, $13, $14, "
		"$15, $16, $19, 'queue', $17, $20, $21, $22::boolean, $24) "
		"ON CONFLICT (alert_id) DO UPDATE SET revision = EXCLUDED.revision, kind = EXCLUDED.kind, "
		"owner_hint = EXCLUDED.owner_hint, summary = EXCLUDED.summary, "
		"signal_cause = EXCLUDED.signal_cause, signal_evidence = EXCLUDED.signal_evidence, "
		"needs_confirmation = EXCLUDED.needs_confirmation, "
		"fleet_event_id = EXCLUDED.fleet_event_id, updated_at = now() "
		"WHERE perfwatch.alerts.revision < EXCLUDED.revision",
		&p, 0, NULL, errbuf, errlen);
}

bool pw_bstore_alert_unconfirmed(const pw_bstore_alert *a)
{
	return a->outlier && !pw_signal_cause_is_infra((pw_signal_cause)a->cause);
}

const char *pw_bstore_alert_owner(const pw_bstore_alert *a)
{
	return pw_bstore_alert_unconfirmed(a) ? "needs-confirmation" : "infra";
}

pw_status pw_bstore_put_excursion(pw_pg *pg, const pw_bstore_excursion *x, char *errbuf,
                                  size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, x->series_id);
	pw_pg_params_text(&p, x->run_id);
	pw_pg_params_int(&p, x->repeat_index);
	pw_pg_params_int(&p, x->measured_us);
	pw_pg_params_double(&p, x->value);
	pw_pg_params_double(&p, isfinite(x->z) ? x->z : 0.0);
	pw_pg_params_opt_int(&p, x->baseline_version != 0, x->baseline_version);
	return pw_pg_exec_params(pg,
	                         "INSERT INTO perfwatch.baseliner_excursion_points (series_id, run_id, "
	                         "repeat_index, measured_at, value, z_robust, baseline_version) VALUES "
	                         "($1, $2, $3::integer, " TS_SQL("$4") ", $5, $6, $7::integer) "
	                         "ON CONFLICT DO NOTHING",
	                         &p, 0, NULL, errbuf, errlen);
}

pw_status pw_bstore_put_progress(pw_pg *pg, pw_series_table *t, char *errbuf, size_t errlen)
{
	size_t count = pw_series_table_count(t), touched = 0;
	for (size_t i = 0; i < count; i++)
		touched += pw_series_table_at(t, i)->touched;
	if (touched == 0)
		return PW_OK;
	pw_status st = pw_pg_exec(
		pg,
		"CREATE TEMP TABLE IF NOT EXISTS pw_bs_progress (series_id bigint, series_key text, "
		"state text, mark timestamptz, part integer, off bigint, platform text, chip_set text, "
		"cell text, firmware text, harness text, window_n integer, need text) "
		"ON COMMIT DELETE ROWS",
		0, NULL, NULL, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_copybuf b;
	pw_copybuf_init(&b, (size_t)1 << 30);
	pw_copybin_header(&b);
	for (size_t i = 0; i < count; i++) {
		const pw_series_entry *e = pw_series_table_at(t, i);
		if (!e->touched)
			continue;
		char need[256];
		pw_baseline_series_describe_need(&e->bs, need, sizeof need);
		pw_copybin_row(&b, 13);
		pw_copybin_int8(&b, e->series_id);
		pw_copybin_text(&b, e->key);
		pw_copybin_text(&b, pw_baseline_state_name(e->bs.state));
		if (e->mark.ts_us != 0)
			pw_copybin_timestamptz(&b, e->mark.ts_us);
		else
			pw_copybin_null(&b);
		pw_copybin_int4(&b, e->mark.partition);
		pw_copybin_int8(&b, e->mark.offset);
		pw_copybin_text(&b, e->env.platform);
		pw_copybin_text(&b, e->env.chip_set);
		pw_copybin_text(&b, e->env.cell);
		pw_copybin_text(&b, e->env.firmware);
		pw_copybin_text(&b, e->env.harness_version);
		pw_copybin_int4(&b, (int32_t)pw_baseline_series_window_len(&e->bs));
		pw_copybin_text(&b, need);
	}
	pw_copybin_trailer(&b);
	st = pw_copy_send(pg, "COPY pw_bs_progress FROM STDIN (FORMAT binary)", &b, NULL, errbuf,
	                  errlen);
	pw_copybuf_release(&b);
	if (st != PW_OK)
		return st;
	return pw_pg_exec(
		pg,
		"INSERT INTO perfwatch.baseliner_series (series_id, series_key, state, "
		"mark_measured_at, mark_partition, mark_offset, platform, chip_set, cell, firmware, "
		"harness_version, window_n, window_need) SELECT series_id, series_key, state, mark, "
		"part, off, platform, chip_set, cell, firmware, harness, window_n, need "
		"FROM pw_bs_progress "
		"ON CONFLICT (series_id) DO UPDATE SET state = EXCLUDED.state, "
		"mark_measured_at = EXCLUDED.mark_measured_at, mark_partition = EXCLUDED.mark_partition, "
		"mark_offset = EXCLUDED.mark_offset, platform = EXCLUDED.platform, "
		"chip_set = EXCLUDED.chip_set, cell = EXCLUDED.cell, firmware = EXCLUDED.firmware, "
		"harness_version = EXCLUDED.harness_version, window_n = EXCLUDED.window_n, "
		"window_need = EXCLUDED.window_need, updated_at = now()",
		0, NULL, NULL, errbuf, errlen);
}

pw_status pw_bstore_alert_pack(const pw_bstore_alert *a, uint8_t **buf, size_t *len)
{
	char kb[PW_ST_KEY_MAX];
	Perfwatch__V1__SeriesKey key = pw_series_key_of(a->series_key, kb, sizeof kb);
	Perfwatch__V1__AlertBaseline base = PERFWATCH__V1__ALERT_BASELINE__INIT;
	base.median = a->base.median;
	base.mad = a->base.mad_n;
	base.n = a->base.n;
	base.version = a->base.version;
	base.window_start_unix_us = a->base.window_start_us;
	base.window_end_unix_us = a->base.window_end_us;
	Perfwatch__V1__AlertObserved obs = PERFWATCH__V1__ALERT_OBSERVED__INIT;
	obs.median = a->value;
	obs.n = 1;
	Perfwatch__V1__AlertDelta delta = PERFWATCH__V1__ALERT_DELTA__INIT;
	delta.abs = a->value - a->base.median;
	delta.abs_unit = (char *)a->base.unit;
	delta.pct = a->base.median != 0.0 ? delta.abs / a->base.median * 100.0 : 0.0;
	delta.z_robust = a->outlier && isfinite(a->z) ? a->z : 0.0;
	Perfwatch__V1__Alert al = PERFWATCH__V1__ALERT__INIT;
	al.alert_id = (char *)a->alert_id;
	al.revision = a->revision ? a->revision : 1;
	bool unconfirmed = pw_bstore_alert_unconfirmed(a);
	al.kind = unconfirmed ? PERFWATCH__V1__ALERT_KIND__ALERT_KIND_UNCONFIRMED
	                      : PERFWATCH__V1__ALERT_KIND__ALERT_KIND_INFRA_HEALTH;
	al.signal_cause = (Perfwatch__V1__SignalCause)a->cause;
	al.signal_evidence = (char *)a->evidence;
	al.needs_confirmation = unconfirmed;
	al.fleet_event_id = (char *)a->fleet_event_id;
	if (a->outlier) {
		/* the point the bisector reruns to confirm it (alert.proto confirmation) */
		al.point_run_id = (char *)a->run_id;
		al.point_unix_us = a->measured_us;
	}
	al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_BASELINER;
	al.created_unix_us = a->created_us;
	al.series_id = a->series_id;
	al.series_key = (char *)a->series_key;
	al.series = &key;
	al.baseline = &base;
	al.observed = &obs;
	al.delta = &delta;
	al.verdict = a->outlier ? PERFWATCH__V1__VERDICT__VERDICT_INVESTIGATE
	                        : PERFWATCH__V1__VERDICT__VERDICT_QUARANTINED;
	al.owner_hint = (char *)pw_bstore_alert_owner(a);
	al.routing = PERFWATCH__V1__ROUTING__ROUTING_QUEUE;
	al.summary = (char *)a->summary;
	size_t n = perfwatch__v1__alert__get_packed_size(&al);
	uint8_t *out = malloc(n ? n : 1);
	if (!out)
		return PW_ERR_NOMEM;
	perfwatch__v1__alert__pack(&al, out);
	*buf = out;
	*len = n;
	return PW_OK;
}

/* ------------------------------------------------------- accepted shifts */

pw_status pw_bstore_put_shift(pw_pg *pg, const pw_bstore_shift *sh, char *errbuf, size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, sh->series_id);
	pw_pg_params_text(&p, sh->reason);
	pw_pg_params_text(&p, sh->source_id);
	pw_pg_params_text(&p, sh->accept_id);
	pw_pg_params_int(&p, sh->shift_us);
	pw_pg_params_double(&p, sh->level_before);
	pw_pg_params_double(&p, sh->level_after);
	/* a confirmation of a provisional shift refines its levels while pending;
	 * a shift at or before the last accepted one's newest point is that one
	 * again (relocalised) or older: the new baseline has it already */
	return pw_pg_exec_params(pg,
	                         "INSERT INTO perfwatch.shift_acceptances (series_id, reason, source_id, "
	                         "accept_id, shift_at, level_before, level_after) SELECT $1, $2, $3, $4, "
	                         TS_SQL("$5") ", $6, $7 WHERE NOT EXISTS (SELECT 1 FROM "
	                         "perfwatch.shift_acceptances a WHERE a.series_id = $1 "
	                         "AND a.status = 'accepted' AND a.accepted_upto >= " TS_SQL("$5") ") "
	                         "ON CONFLICT (series_id, reason, source_id) "
	                         "DO UPDATE SET level_before = EXCLUDED.level_before, "
	                         "level_after = EXCLUDED.level_after, shift_at = EXCLUDED.shift_at "
	                         "WHERE shift_acceptances.status = 'pending'",
	                         &p, 0, NULL, errbuf, errlen);
}

pw_status pw_bstore_end_shift(pw_pg *pg, int64_t series_id, const char *reason,
                              const char *accept_id, const char *status, char *errbuf,
                              size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, series_id);
	pw_pg_params_text(&p, accept_id);
	pw_pg_params_text(&p, status);
	pw_pg_params_text(&p, reason);
	return pw_pg_exec_params(pg,
	                         "UPDATE perfwatch.shift_acceptances SET status = $3, done_at = now() "
	                         "WHERE series_id = $1 AND accept_id = $2 AND reason = $4 "
	                         "AND status = 'pending'",
	                         &p, 0, NULL, errbuf, errlen);
}

pw_status pw_bstore_shift_evidence(pw_pg *pg, int64_t series_id, int64_t since_us,
                                   int64_t upto_us, size_t *nightlies, double *newest,
                                   size_t *nnewest, char *errbuf, size_t errlen)
{
	*nightlies = 0;
	*nnewest = 0;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, series_id);
	pw_pg_params_int(&p, since_us);
	pw_pg_params_int(&p, upto_us);
	pw_pg_params_int(&p, PW_ACCEPT_NEWEST);
	PGresult *res = NULL;
	/* nightlies are builds (a nightly may run repeats); requested runs
	 * (re-baseline, confirmation, bisection) are not nightlies */
	pw_status st = pw_pg_exec_params(
		pg,
		"WITH n AS (SELECT s.build_id, s.value, s.measured_at, s.run_id, s.repeat_index "
		"FROM perfwatch.samples s WHERE s.series_id = $1 AND s.build_kind = 'nightly' "
		"AND s.rebaseline_job_id = '' AND s.bisect_job_id = '' "
		"AND s.measured_at >= " TS_SQL("$2") " AND s.measured_at <= " TS_SQL("$3") ") "
		"SELECT (SELECT count(DISTINCT build_id) FROM n), x.value FROM (SELECT value FROM n "
		"ORDER BY measured_at DESC, run_id DESC, repeat_index DESC LIMIT $4::integer) x",
		&p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	int rows = PQntuples(res);
	for (int i = 0; i < rows && i < PW_ACCEPT_NEWEST; i++) {
		*nightlies = (size_t)strtoull(PQgetvalue(res, i, 0), NULL, 10);
		newest[(*nnewest)++] = strtod(PQgetvalue(res, i, 1), NULL);
	}
	PQclear(res);
	return PW_OK;
}

pw_status pw_bstore_accept_shift(pw_pg *pg, const pw_bstore_acceptance *a, bool *accepted,
                                 char *errbuf, size_t errlen)
{
	*accepted = false;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, a->series_id);
	pw_pg_params_text(&p, a->accept_id);
	pw_pg_params_int(&p, a->upto_us);
	pw_pg_params_int(&p, a->nightlies);
	pw_pg_params_opt_int(&p, a->old_version != 0, a->old_version);
	pw_pg_params_opt_double(&p, a->old_version != 0, a->old_level);
	pw_pg_params_text(&p, a->reason);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec_params(pg,
	                         "UPDATE perfwatch.shift_acceptances SET status = 'accepted', "
	                         "accepted_at = now(), accepted_upto = " TS_SQL("$3") ", "
	                         "nightlies_held = $4::integer, old_version = $5::integer, "
	                         "old_level = $6 WHERE series_id = $1 AND accept_id = $2 "
	                         "AND reason = $7 AND status = 'pending' RETURNING 1",
	                         &p, 0, &res, errbuf, errlen);
	if (st == PW_OK)
		*accepted = PQntuples(res) > 0;
	PQclear(res);
	return st;
}

pw_status pw_bstore_load_shift(pw_pg *pg, pw_series_entry *e, char *errbuf, size_t errlen)
{
	char idbuf[32];
	snprintf(idbuf, sizeof idbuf, "%" PRId64, e->series_id);
	const char *p1[1] = {idbuf};
	PGresult *res = NULL;
	pw_status st = pw_pg_exec(pg,
	                          "SELECT accept_id, " US_SQL("shift_at") ", level_before, level_after "
	                          "FROM perfwatch.shift_acceptances WHERE series_id = $1 "
	                          "AND status = 'pending' AND reason = 'changepoint_held' "
	                          "ORDER BY shift_at DESC LIMIT 1",
	                          1, p1, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	e->has_shift = PQntuples(res) == 1;
	if (e->has_shift) {
		copy_str(e->shift_accept_id, sizeof e->shift_accept_id, PQgetvalue(res, 0, 0));
		e->shift_us = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
		e->shift_before = strtod(PQgetvalue(res, 0, 2), NULL);
		e->shift_after = strtod(PQgetvalue(res, 0, 3), NULL);
	}
	PQclear(res);
	return PW_OK;
}

/* ---- Noise floors, re-derived (§4.2) ---------------------------------------- */

#define NF_CHUNK 500 /* series a statement reads and writes */

/* One chunk's columns as PostgreSQL array literals, built as text. */
typedef struct nf_cols {
	FILE *f[7];
	char *buf[7];
	size_t len[7];
	size_t n;
} nf_cols;

static void nf_cols_release(nf_cols *c)
{
	for (int i = 0; i < 7; i++) {
		if (c->f[i])
			fclose(c->f[i]);
		c->f[i] = NULL;
		free(c->buf[i]);
		c->buf[i] = NULL;
	}
}

static pw_status nf_cols_init(nf_cols *c)
{
	memset(c, 0, sizeof *c);
	for (int i = 0; i < 7; i++) {
		c->f[i] = open_memstream(&c->buf[i], &c->len[i]);
		if (!c->f[i]) {
			nf_cols_release(c);
			return PW_ERR_NOMEM;
		}
		fputc('{', c->f[i]);
	}
	return PW_OK;
}

static void nf_col_double(FILE *f, bool sep, double v)
{
	if (sep)
		fputc(',', f);
	if (isfinite(v))
		fprintf(f, "%.17g", v);
	else
		fputs("NULL", f);
}

static void nf_cols_add(nf_cols *c, int64_t sid, const pw_nf_result *r)
{
	bool sep = c->n > 0;
	fprintf(c->f[0], "%s%" PRId64, sep ? "," : "", sid);
	fprintf(c->f[1], "%s%s", sep ? "," : "", pw_nf_status_name(r->status));
	nf_col_double(c->f[2], sep, r->status == PW_NF_DERIVED ? r->floor_pct : NAN);
	nf_col_double(c->f[3], sep, r->status == PW_NF_DERIVED ? r->level : NAN);
	fprintf(c->f[4], "%s%zu", sep ? "," : "", r->n_groups);
	fprintf(c->f[5], "%s%zu", sep ? "," : "", r->n_samples);
	fprintf(c->f[6], "%s%zu", sep ? "," : "", r->n_pairs);
	c->n++;
}

static pw_status nf_cols_close(nf_cols *c)
{
	for (int i = 0; i < 7; i++) {
		fputc('}', c->f[i]);
		if (fclose(c->f[i]) != 0) {
			c->f[i] = NULL;
			return PW_ERR_NOMEM;
		}
		c->f[i] = NULL;
	}
	return PW_OK;
}

/* Derives and writes the series ids[0..n) of derivation did. */
static pw_status nf_chunk(pw_pg *pg, int64_t did, const pw_nf_params *p, const int64_t *ids,
                          size_t n, pw_bstore_nf_summary *out, char *errbuf, size_t errlen)
{
	PGresult *res = NULL;
	pw_nf_sample *rows = NULL;
	char *keys = NULL; /* the rows' group keys, one after the other */
	nf_cols cols;
	pw_status st = nf_cols_init(&cols);
	if (st != PW_OK)
		return pw_fail(st, errbuf, errlen, "out of memory");
	pw_pg_params q;
	pw_pg_params_init(&q);
	pw_pg_params_int(&q, ids[0]);
	pw_pg_params_int(&q, ids[n - 1]);
	pw_pg_params_int(&q, p->lookback_us);
	st = pw_pg_exec_params(
		pg,
		"SELECT x.series_id, x.run_id, x.build_id, x.rebaseline_job_id, x.value "
		"FROM perfwatch.series s "
		"CROSS JOIN LATERAL (SELECT max(y.measured_at) AS newest_at FROM perfwatch.samples y "
		"                     WHERE y.series_id = s.series_id) l "
		"JOIN perfwatch.samples x ON x.series_id = s.series_id "
		" AND x.measured_at >= l.newest_at - $3::bigint * interval '1 microsecond' "
		"WHERE s.series_id BETWEEN $1 AND $2 ORDER BY x.series_id",
		&q, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		goto out;
	size_t nr = (size_t)PQntuples(res);
	size_t klen = 0;
	for (size_t i = 0; i < nr; i++)
		klen += (size_t)PQgetlength(res, (int)i, 1) + (size_t)PQgetlength(res, (int)i, 2) +
		        (size_t)PQgetlength(res, (int)i, 3) + 4;
	rows = malloc((nr ? nr : 1) * sizeof *rows);
	keys = malloc(klen ? klen : 1);
	if (!rows || !keys) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for %zu samples", nr);
		goto out;
	}
	size_t at = 0, koff = 0;
	for (size_t i = 0; i < n; i++) {
		size_t from = at;
		while (at < nr && pw_pg_int(res, (int)at, 0) == ids[i]) {
			size_t kl = (size_t)PQgetlength(res, (int)at, 1) +
			            (size_t)PQgetlength(res, (int)at, 2) +
			            (size_t)PQgetlength(res, (int)at, 3) + 4;
			rows[at].value = pw_pg_double(res, (int)at, 4);
			if (pw_nf_group_key(pw_pg_value(res, (int)at, 1), pw_pg_value(res, (int)at, 2),
			                    pw_pg_value(res, (int)at, 3), keys + koff, kl) != PW_OK) {
				st = pw_fail(PW_ERR_INVALID, errbuf, errlen,
				             "noise floor: series %" PRId64 ": sample of run \"%s\" has no run id",
				             ids[i], pw_pg_value(res, (int)at, 1));
				goto out;
			}
			rows[at].key = keys + koff;
			koff += kl;
			at++;
		}
		pw_nf_result r;
		st = pw_nf_derive_samples(rows + from, at - from, p, &r);
		if (st != PW_OK) {
			pw_fail(st, errbuf, errlen, "noise floor: series %" PRId64 ": %s", ids[i],
			        st == PW_ERR_NOMEM ? "out of memory" : "samples out of order");
			goto out;
		}
		nf_cols_add(&cols, ids[i], &r);
		out->series++;
		out->series_derived += r.status == PW_NF_DERIVED;
		out->series_insufficient += r.status == PW_NF_INSUFFICIENT_DATA;
		out->series_invalid += r.status == PW_NF_INVALID;
	}
	PQclear(res);
	res = NULL;
	if (nf_cols_close(&cols) != PW_OK) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
		goto out;
	}
	pw_pg_params_init(&q);
	pw_pg_params_int(&q, did);
	for (int i = 0; i < 7; i++)
		pw_pg_params_text(&q, cols.buf[i]);
	st = pw_pg_exec_params(
		pg,
		"INSERT INTO perfwatch.noise_floors (derivation_id, series_id, status, floor_pct, level, "
		"n_groups, n_samples, n_pairs, newest_at, previous_derivation_id) "
		"SELECT $1, u.sid, u.st, u.fl, u.lv, u.ng, u.ns, u.np, "
		"(SELECT max(y.measured_at) FROM perfwatch.samples y WHERE y.series_id = u.sid), "
		"(SELECT max(o.derivation_id) FROM perfwatch.noise_floors o "
		"  WHERE o.series_id = u.sid AND o.status = 'derived' AND o.derivation_id < $1) "
		"FROM unnest($2::bigint[], $3::text[], $4::float8[], $5::float8[], $6::int[], $7::int[], "
		"$8::bigint[]) AS u(sid, st, fl, lv, ng, ns, np)",
		&q, 0, NULL, errbuf, errlen);
out:
	PQclear(res);
	nf_cols_release(&cols);
	free(keys);
	free(rows);
	return st;
}

pw_status pw_bstore_noise_floor_derive(pw_pg *pg, const pw_nf_params *p,
                                       pw_bstore_nf_summary *out, char *errbuf, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (p->every_us <= 0)
		return PW_OK;
	PGresult *res = NULL;
	int64_t *ids = NULL;
	pw_status st = pw_pg_begin(pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	/* one snapshot for the whole derivation */
	st = pw_pg_exec(pg, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", 0, NULL, NULL, errbuf,
	                errlen);
	if (st != PW_OK)
		goto fail;
	st = pw_pg_exec(pg,
	                "SELECT (extract(epoch FROM now()) * 1e6)::bigint, d.derivation_id, "
	                "(extract(epoch FROM d.derived_at) * 1e6)::bigint "
	                "FROM (SELECT 1) one LEFT JOIN (SELECT derivation_id, derived_at "
	                "FROM perfwatch.noise_floor_derivations ORDER BY derivation_id DESC LIMIT 1) d ON true",
	                0, NULL, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	int64_t now_us = pw_pg_int(res, 0, 0);
	bool has_last = pw_pg_value(res, 0, 1) != NULL;
	int64_t last_id = pw_pg_int(res, 0, 1), last_us = pw_pg_int(res, 0, 2);
	PQclear(res);
	res = NULL;
	out->derivation_id = last_id;
	if (!pw_nf_due(now_us, has_last, last_us, p->every_us))
		return pw_pg_rollback(pg, errbuf, errlen);
	pw_pg_params q;
	pw_pg_params_init(&q);
	pw_pg_params_int(&q, last_id);
	pw_pg_params_double(&q, (double)p->every_us / 1e6);
	pw_pg_params_double(&q, (double)p->lookback_us / 1e6);
	pw_pg_params_int(&q, (int64_t)p->min_groups);
	pw_pg_params_int(&q, (int64_t)p->min_samples);
	st = pw_pg_exec_params(pg,
	                       "INSERT INTO perfwatch.noise_floor_derivations (follows, every_s, "
	                       "lookback_s, min_groups, min_samples) VALUES ($1, $2, $3, $4, $5) "
	                       "ON CONFLICT (follows) DO NOTHING RETURNING derivation_id",
	                       &q, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	if (PQntuples(res) == 0) { /* another baseliner derived this period */
		PQclear(res);
		return pw_pg_rollback(pg, errbuf, errlen);
	}
	int64_t did = pw_pg_int(res, 0, 0);
	PQclear(res);
	res = NULL;
	st = pw_pg_exec(pg, "SELECT series_id FROM perfwatch.series ORDER BY series_id", 0, NULL, &res,
	                errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	size_t ns = (size_t)PQntuples(res);
	ids = malloc((ns ? ns : 1) * sizeof *ids);
	if (!ids) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for %zu series", ns);
		goto fail;
	}
	for (size_t i = 0; i < ns; i++)
		ids[i] = pw_pg_int(res, (int)i, 0);
	PQclear(res);
	res = NULL;
	for (size_t i = 0; i < ns; i += NF_CHUNK) {
		st = nf_chunk(pg, did, p, ids + i, ns - i < NF_CHUNK ? ns - i : NF_CHUNK, out, errbuf,
		              errlen);
		if (st != PW_OK)
			goto fail;
	}
	pw_pg_params_init(&q);
	pw_pg_params_int(&q, did);
	pw_pg_params_int(&q, (int64_t)out->series);
	pw_pg_params_int(&q, (int64_t)out->series_derived);
	pw_pg_params_int(&q, (int64_t)out->series_insufficient);
	pw_pg_params_int(&q, (int64_t)out->series_invalid);
	st = pw_pg_exec_params(pg,
	                       "UPDATE perfwatch.noise_floor_derivations SET series_total = $2, "
	                       "series_derived = $3, series_insufficient = $4, series_invalid = $5 "
	                       "WHERE derivation_id = $1",
	                       &q, 0, NULL, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	st = pw_pg_commit(pg, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	free(ids);
	out->derived = true;
	out->derivation_id = did;
	return PW_OK;
fail:
	PQclear(res);
	free(ids);
	{
		char rb[64];
		pw_pg_rollback(pg, rb, sizeof rb);
	}
	pw_bstore_nf_summary zero = {0};
	*out = zero;
	return st;
}
