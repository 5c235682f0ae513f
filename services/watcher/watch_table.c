/*
 * watch_table.c: an open-addressing (linear probing) hash table of watcher
 * entries by series_key, FNV-1a hashed, grown at 70% load. See watch_table.h.
 */
#include "watch_table.h"

#include <stdlib.h>
#include <string.h>

struct pw_watch_table {
	pw_watch_entry **slots;
	size_t cap; /* a power of two */
	size_t count;
};

pw_watch_entry *pw_watch_entry_new(const char *key, pw_watch_series *series, size_t seen_cap)
{
	pw_watch_entry *e = NULL;
	if (strlen(key) >= PW_WATCH_KEY_LEN || seen_cap == 0)
		goto fail;
	e = calloc(1, sizeof *e);
	if (!e)
		goto fail;
	e->seen = calloc(seen_cap, sizeof *e->seen);
	if (!e->seen)
		goto fail;
	e->seen_cap = seen_cap;
	memcpy(e->key, key, strlen(key) + 1);
	e->series = series;
	return e;
fail:
	if (e)
		free(e->seen);
	free(e);
	pw_watch_series_free(series);
	return NULL;
}

void pw_watch_entry_free(pw_watch_entry *e)
{
	if (!e)
		return;
	pw_watch_series_free(e->series);
	free(e->seen);
	free(e);
}

static uint64_t point_hash(const pw_watch_point_key *k)
{
	uint64_t h = 1469598103934665603ULL;
	for (int i = 0; i < 8; i++) {
		h ^= (uint64_t)((uint64_t)k->ts_us >> (8 * i)) & 0xff;
		h *= 1099511628211ULL;
	}
	for (const char *c = k->run_id; *c; c++) {
		h ^= (unsigned char)*c;
		h *= 1099511628211ULL;
	}
	for (int i = 0; i < 4; i++) {
		h ^= (k->repeat_index >> (8 * i)) & 0xff;
		h *= 1099511628211ULL;
	}
	return h;
}

void pw_watch_entry_remember(pw_watch_entry *e, const pw_watch_point_key *k)
{
	e->seen[e->seen_head] = point_hash(k);
	e->seen_head = (e->seen_head + 1) % e->seen_cap;
	if (e->seen_n < e->seen_cap)
		e->seen_n++;
}

bool pw_watch_entry_has_seen(const pw_watch_entry *e, const pw_watch_point_key *k)
{
	uint64_t h = point_hash(k);
	for (size_t i = 0; i < e->seen_n; i++)
		if (e->seen[i] == h)
			return true;
	return false;
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

pw_watch_table *pw_watch_table_new(size_t hint)
{
	pw_watch_table *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->cap = 16;
	while (t->cap < hint * 2)
		t->cap *= 2;
	t->slots = calloc(t->cap, sizeof *t->slots);
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void pw_watch_table_free(pw_watch_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		pw_watch_entry_free(t->slots[i]);
	free(t->slots);
	free(t);
}

static size_t find_slot(pw_watch_entry *const *slots, size_t cap, const char *key)
{
	size_t i = (size_t)hash(key) & (cap - 1);
	while (slots[i] && strcmp(slots[i]->key, key) != 0)
		i = (i + 1) & (cap - 1);
	return i;
}

pw_watch_entry *pw_watch_table_get(const pw_watch_table *t, const char *key)
{
	return t->slots[find_slot(t->slots, t->cap, key)];
}

static pw_status grow(pw_watch_table *t)
{
	size_t cap = t->cap * 2;
	pw_watch_entry **slots = calloc(cap, sizeof *slots);
	if (!slots)
		return PW_ERR_NOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i])
			slots[find_slot(slots, cap, t->slots[i]->key)] = t->slots[i];
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return PW_OK;
}

pw_status pw_watch_table_put(pw_watch_table *t, pw_watch_entry *e)
{
	if ((t->count + 1) * 10 > t->cap * 7 && grow(t) != PW_OK) {
		pw_watch_entry_free(e);
		return PW_ERR_NOMEM;
	}
	size_t i = find_slot(t->slots, t->cap, e->key);
	if (t->slots[i]) {
		pw_watch_entry_free(e);
		return PW_ERR_CONFLICT;
	}
	t->slots[i] = e;
	t->count++;
	return PW_OK;
}

pw_status pw_watch_table_remove(pw_watch_table *t, const char *key)
{
	size_t i = find_slot(t->slots, t->cap, key);
	if (!t->slots[i])
		return PW_ERR_NOT_FOUND;
	pw_watch_entry_free(t->slots[i]);
	t->slots[i] = NULL;
	t->count--;
	/* backward-shift deletion: re-place the rest of the probe run */
	for (size_t j = (i + 1) & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1)) {
		pw_watch_entry *e = t->slots[j];
		t->slots[j] = NULL;
		t->slots[find_slot(t->slots, t->cap, e->key)] = e;
	}
	return PW_OK;
}

size_t pw_watch_table_count(const pw_watch_table *t)
{
	return t->count;
}

pw_watch_entry *pw_watch_table_next(const pw_watch_table *t, size_t *iter)
{
	while (*iter < t->cap) {
		pw_watch_entry *e = t->slots[(*iter)++];
		if (e)
			return e;
	}
	return NULL;
}
