/*
 * series_table.c: the series table (an open-addressing hash index over
 * individually allocated entries) and fleet-change selector matching.
 * See series_table.h; the per-series decisions are baseline.c's.
 */
#include "series_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pw_series_table {
	pw_baseline_params params;
	double tpu_sigma, gpu_sigma;
	size_t max_series;
	pw_series_entry **entries; /* creation order, count of them */
	size_t count;
	pw_series_entry **slots;   /* hash index, nslots (a power of two, > 2 × max_series) */
	size_t nslots;
};

uint64_t pw_series_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		h ^= *p;
		h *= 1099511628211ULL;
	}
	return h;
}

static bool list_has(const char *const *list, size_t n, const char *v)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] && strcmp(list[i], v) == 0)
			return true;
	return false;
}

bool pw_fleet_selector_match(const pw_fleet_selector *sel, const pw_point_env *env)
{
	if (sel->nplatforms && !list_has(sel->platforms, sel->nplatforms, env->platform))
		return false;
	if (sel->nchip_sets && !list_has(sel->chip_sets, sel->nchip_sets, env->chip_set))
		return false;
	if (sel->ncells && !list_has(sel->cells, sel->ncells, env->cell))
		return false;
	if (sel->nfirmware && !list_has(sel->firmware, sel->nfirmware, env->firmware))
		return false;
	if (sel->nharness_versions &&
	    !list_has(sel->harness_versions, sel->nharness_versions, env->harness_version))
		return false;
	return true;
}

bool pw_fleet_selector_is_empty(const pw_fleet_selector *sel)
{
	return !sel->nplatforms && !sel->nchip_sets && !sel->ncells && !sel->nfirmware &&
	       !sel->nharness_versions;
}

bool pw_point_mark_seen(const pw_point_mark *m, int32_t partition, int64_t offset)
{
	return partition >= 0 && m->partition == partition && offset <= m->offset;
}

uint64_t pw_series_point_id(const char *run_id, uint32_t repeat_index)
{
	/* FNV-1a of "run_id/repeat" over the whole run id (a fixed buffer cut
	 * ids longer than 150 bytes, so that two of them could share an id) */
	char rep[16];
	snprintf(rep, sizeof rep, "/%u", repeat_index);
	uint64_t h = 14695981039346656037ULL;
	for (const unsigned char *p = (const unsigned char *)(run_id ? run_id : ""); *p; p++) {
		h ^= *p;
		h *= 1099511628211ULL;
	}
	for (const unsigned char *p = (const unsigned char *)rep; *p; p++) {
		h ^= *p;
		h *= 1099511628211ULL;
	}
	return h;
}

static bool recent_has(const pw_series_entry *e, uint64_t id)
{
	size_t n = e->nrecent < PW_ST_RECENT ? e->nrecent : PW_ST_RECENT;
	for (size_t i = 0; i < n; i++)
		if (e->recent[i] == id)
			return true;
	return false;
}

pw_status pw_series_entry_set_refilled(pw_series_entry *e, const uint64_t *ids, size_t n)
{
	uint64_t *copy = NULL;
	if (n > 0) {
		copy = malloc(n * sizeof *copy);
		if (!copy)
			return PW_ERR_NOMEM;
		memcpy(copy, ids, n * sizeof *copy);
	}
	free(e->refilled);
	e->refilled = copy;
	e->nrefilled = n;
	return PW_OK;
}

bool pw_series_platform_is_gpu(const char *platform, const char *gpu_prefixes)
{
	if (!platform || !gpu_prefixes)
		return false;
	const char *p = gpu_prefixes;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > 0 && strncmp(platform, p, n) == 0)
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

pw_series_table *pw_series_table_new(size_t max_series, const pw_baseline_params *p)
{
	if (!p || max_series < 1 || max_series > ((size_t)1 << 30))
		return NULL;
	pw_series_table *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->params = *p;
	t->tpu_sigma = p->platform_sigma;
	t->gpu_sigma = p->platform_sigma;
	t->max_series = max_series;
	t->nslots = 16;
	while (t->nslots < 2 * max_series + 1)
		t->nslots <<= 1;
	t->entries = calloc(max_series, sizeof *t->entries);
	t->slots = calloc(t->nslots, sizeof *t->slots);
	if (!t->entries || !t->slots) {
		pw_series_table_free(t);
		return NULL;
	}
	/* validate params once, as pw_baseline_series_init would for each entry */
	pw_baseline_series probe;
	if (pw_baseline_series_init(&probe, p) != PW_OK) {
		pw_baseline_series_release(&probe);
		pw_series_table_free(t);
		return NULL;
	}
	pw_baseline_series_release(&probe);
	return t;
}

void pw_series_table_clear(pw_series_table *t)
{
	for (size_t i = 0; i < t->count; i++) {
		pw_baseline_series_release(&t->entries[i]->bs);
		free(t->entries[i]->refilled);
		free(t->entries[i]);
		t->entries[i] = NULL;
	}
	t->count = 0;
	memset(t->slots, 0, t->nslots * sizeof *t->slots);
}

void pw_series_table_free(pw_series_table *t)
{
	if (!t)
		return;
	if (t->entries && t->slots)
		pw_series_table_clear(t);
	free(t->entries);
	free(t->slots);
	free(t);
}

void pw_series_table_set_sigma(pw_series_table *t, double tpu_sigma, double gpu_sigma)
{
	t->tpu_sigma = tpu_sigma;
	t->gpu_sigma = gpu_sigma;
}

size_t pw_series_table_count(const pw_series_table *t)
{
	return t->count;
}

pw_series_entry *pw_series_table_at(pw_series_table *t, size_t i)
{
	return i < t->count ? t->entries[i] : NULL;
}

static size_t slot_of(const pw_series_table *t, const char *key)
{
	size_t mask = t->nslots - 1;
	size_t i = (size_t)pw_series_hash(key) & mask;
	while (t->slots[i] && strcmp(t->slots[i]->key, key) != 0)
		i = (i + 1) & mask;
	return i;
}

pw_series_entry *pw_series_table_find(pw_series_table *t, const char *key)
{
	if (!key)
		return NULL;
	return t->slots[slot_of(t, key)];
}

pw_status pw_series_table_get(pw_series_table *t, const char *key, bool gpu_class,
                              pw_series_entry **out, bool *created)
{
	*out = NULL;
	*created = false;
	if (!key || !*key || strlen(key) >= PW_ST_KEY_MAX)
		return PW_ERR_INVALID;
	size_t i = slot_of(t, key);
	if (t->slots[i]) {
		*out = t->slots[i];
		return PW_OK;
	}
	if (t->count >= t->max_series)
		return PW_ERR_INSUFFICIENT;
	pw_series_entry *e = calloc(1, sizeof *e);
	if (!e)
		return PW_ERR_NOMEM;
	pw_baseline_params p = t->params;
	p.platform_sigma = gpu_class ? t->gpu_sigma : t->tpu_sigma;
	pw_status st = pw_baseline_series_init(&e->bs, &p);
	if (st != PW_OK) {
		pw_baseline_series_release(&e->bs);
		free(e);
		return st;
	}
	snprintf(e->key, sizeof e->key, "%s", key);
	e->gpu_class = gpu_class;
	e->mark.partition = -1;
	e->mark.offset = -1;
	t->slots[i] = e;
	t->entries[t->count++] = e;
	*out = e;
	*created = true;
	return PW_OK;
}

pw_status pw_series_entry_add(pw_series_entry *e, const pw_baseline_point *pt, uint64_t id,
                              int32_t partition, int64_t offset, const pw_point_env *env,
                              pw_baseline_event *ev, size_t *nev, bool *skipped)
{
	*nev = 0;
	*skipped = false;
	/*
	 * A redelivery is known by the point's identity (run id, repeat; the
	 * series names the metric): the ingester re-sends a batch's points at new
	 * offsets after it is killed. The offset mark still tells a redelivery
	 * after a restart of the baseliner itself, but only for a point measured
	 * no later than the newest folded in: one measured after it cannot have
	 * been folded in, whatever its offset (the topic started again from 0
	 * after a broker restart).
	 */
	bool refilled = recent_has(e, id);
	for (size_t i = 0; i < e->nrefilled && !refilled; i++)
		refilled = e->refilled[i] == id;
	if (pw_point_mark_seen(&e->mark, partition, offset) &&
	    (refilled || pt->ts_us <= e->mark.ts_us)) {
		*skipped = true;
		return PW_OK;
	}
	bool old_fleet = e->bs.state == PW_BASELINE_FROZEN && pt->ts_us < e->freeze_since_us;
	if (!refilled && !old_fleet) {
		pw_status st = pw_baseline_series_add(&e->bs, pt, ev, nev);
		if (st != PW_OK)
			return st;
		e->recent[e->nrecent++ % PW_ST_RECENT] = id;
		if (env) {
			e->env = *env;
			e->has_env = true;
		}
	} else {
		*skipped = true;
	}
	/* consumed either way: the mark moves on */
	if (partition >= 0) {
		e->mark.partition = partition;
		e->mark.offset = offset;
	}
	if (!refilled && !old_fleet && pt->ts_us > e->mark.ts_us)
		e->mark.ts_us = pt->ts_us;
	e->touched = true;
	return PW_OK;
}

bool pw_series_entry_freeze(pw_series_entry *e, const char *event_id, const char *reason,
                            int64_t since_us)
{
	int64_t active = e->bs.has_baseline ? (int64_t)e->bs.current.version : 0;
	uint64_t version = e->bs.current.version;
	if (!pw_baseline_series_freeze(&e->bs, event_id, reason))
		return false;
	/* the version counter continues across the freeze: the re-baseline is a new version */
	e->bs.current.version = version;
	e->frozen_version = active;
	e->freeze_since_us = since_us;
	e->touched = true;
	e->cache_dirty = true;
	return true;
}

/* ------------------------------------------------------------ fleet log */

struct pw_fleet_log {
	pw_fleet_event *ev; /* sorted by occurred_us, then id */
	size_t n, cap;
};

pw_fleet_log *pw_fleet_log_new(void)
{
	return calloc(1, sizeof(pw_fleet_log));
}

static void free_list(const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)list[i]);
	free((void *)list);
}

static void event_release(pw_fleet_event *e)
{
	free_list(e->sel.platforms, e->sel.nplatforms);
	free_list(e->sel.chip_sets, e->sel.nchip_sets);
	free_list(e->sel.cells, e->sel.ncells);
	free_list(e->sel.firmware, e->sel.nfirmware);
	free_list(e->sel.harness_versions, e->sel.nharness_versions);
	memset(&e->sel, 0, sizeof e->sel);
}

void pw_fleet_log_free(pw_fleet_log *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		event_release(&l->ev[i]);
	free(l->ev);
	free(l);
}

static int copy_list(const char *const *src, size_t n, const char *const **dst, size_t *dn)
{
	*dst = NULL;
	*dn = 0;
	if (n == 0)
		return 0;
	char **out = calloc(n, sizeof *out);
	if (!out)
		return -1;
	for (size_t i = 0; i < n; i++) {
		out[i] = strdup(src[i] ? src[i] : "");
		if (!out[i]) {
			free_list((const char *const *)out, i);
			return -1;
		}
	}
	*dst = (const char *const *)out;
	*dn = n;
	return 0;
}

pw_status pw_fleet_log_add(pw_fleet_log *l, const char *id, int64_t occurred_us,
                           const char *reason, const pw_fleet_selector *sel)
{
	if (!id || !*id || strlen(id) >= sizeof l->ev[0].id)
		return PW_ERR_INVALID;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->ev[i].id, id) == 0)
			return PW_OK;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		pw_fleet_event *ev = realloc(l->ev, cap * sizeof *ev);
		if (!ev)
			return PW_ERR_NOMEM;
		l->ev = ev;
		l->cap = cap;
	}
	pw_fleet_event e;
	memset(&e, 0, sizeof e);
	snprintf(e.id, sizeof e.id, "%s", id);
	snprintf(e.reason, sizeof e.reason, "%s", reason ? reason : "");
	e.occurred_us = occurred_us;
	if (copy_list(sel->platforms, sel->nplatforms, &e.sel.platforms, &e.sel.nplatforms) ||
	    copy_list(sel->chip_sets, sel->nchip_sets, &e.sel.chip_sets, &e.sel.nchip_sets) ||
	    copy_list(sel->cells, sel->ncells, &e.sel.cells, &e.sel.ncells) ||
	    copy_list(sel->firmware, sel->nfirmware, &e.sel.firmware, &e.sel.nfirmware) ||
	    copy_list(sel->harness_versions, sel->nharness_versions, &e.sel.harness_versions,
	              &e.sel.nharness_versions)) {
		event_release(&e);
		return PW_ERR_NOMEM;
	}
	/* insertion keeps the order by (occurred_us, id) */
	size_t at = l->n;
	while (at > 0 && (l->ev[at - 1].occurred_us > occurred_us ||
	                  (l->ev[at - 1].occurred_us == occurred_us && strcmp(l->ev[at - 1].id, id) > 0)))
		at--;
	memmove(&l->ev[at + 1], &l->ev[at], (l->n - at) * sizeof *l->ev);
	l->ev[at] = e;
	l->n++;
	return PW_OK;
}

size_t pw_fleet_log_count(const pw_fleet_log *l)
{
	return l->n;
}

const pw_fleet_event *pw_fleet_log_due(const pw_fleet_log *l, size_t *pos, int64_t after_us,
                                       int64_t upto_us, const pw_point_env *prev,
                                       const pw_point_env *cur)
{
	for (size_t i = *pos; i < l->n; i++) {
		const pw_fleet_event *e = &l->ev[i];
		if (e->occurred_us > upto_us)
			break;
		if (e->occurred_us <= after_us)
			continue;
		if ((prev && pw_fleet_selector_match(&e->sel, prev)) ||
		    (cur && pw_fleet_selector_match(&e->sel, cur))) {
			*pos = i + 1;
			return e;
		}
	}
	*pos = l->n;
	return NULL;
}
