/*
 * watch_table.h: the watcher's series by series_key, the only state that
 * grows in the process — with the number of series, never with their history.
 *
 * Each entry holds one pw_watch_series (watch.h: a bounded window of points
 * and builds) and what the watcher needs beside it: the series' surrogate id,
 * unit, direction, the newest point appended (watch_emit.h's ordering key, to skip
 * redeliveries) and where that point ran (for fleet-change selectors). main.c
 * creates an entry on the first point of a series, filled from PostgreSQL by
 * watch_store.c; fleet changes walk every entry with pw_watch_table_next. An
 * open-addressing hash table; the table owns its entries.
 */
#ifndef PW_WATCH_SERIES_TABLE_H
#define PW_WATCH_SERIES_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "watch_emit.h"
#include "pw_status.h"
#include "watch.h"

typedef struct pw_watch_entry {
	char key[PW_WATCH_KEY_LEN];   /* series_key */
	int64_t series_id;
	char model[PW_WATCH_FIELD_LEN];
	char unit[32];
	bool lower_is_better;
	pw_watch_series *series;      /* owned */
	bool has_last;
	pw_watch_point_key last;      /* newest point appended */
	bool has_env;
	pw_watch_env env;             /* where the newest point ran */
	bool stale;                   /* a point older than the newest came: rebuild from PostgreSQL */
	uint64_t *seen;               /* ring of pw_watch_point_key_hash of the points in the window */
	size_t seen_cap, seen_n, seen_head;
} pw_watch_entry;

/*
 * A new entry for key with its series (ownership of series moves to the
 * entry, also on failure), remembering the last seen_cap points (the
 * window's max_points). NULL when out of memory or key too long.
 */
pw_watch_entry *pw_watch_entry_new(const char *key, pw_watch_series *series, size_t seen_cap);
void pw_watch_entry_free(pw_watch_entry *e);

/* Remembers that the point k is in the series' window. */
void pw_watch_entry_remember(pw_watch_entry *e, const pw_watch_point_key *k);

/*
 * Whether the point k is one of the last seen_cap remembered (by hash: a
 * collision, one in 2^64, would take a late point for a duplicate).
 */
bool pw_watch_entry_has_seen(const pw_watch_entry *e, const pw_watch_point_key *k);

typedef struct pw_watch_table pw_watch_table;

/* An empty table sized for about hint entries; NULL when out of memory. */
pw_watch_table *pw_watch_table_new(size_t hint);
/* Frees the table and every entry; NULL is allowed. */
void pw_watch_table_free(pw_watch_table *t);

/* The entry of key, or NULL. */
pw_watch_entry *pw_watch_table_get(const pw_watch_table *t, const char *key);

/*
 * Adds e (the table takes ownership, also on failure, when e is freed).
 * PW_ERR_CONFLICT when key is already present (e freed), PW_ERR_NOMEM.
 */
pw_status pw_watch_table_put(pw_watch_table *t, pw_watch_entry *e);

/* Removes and frees the entry of key; PW_ERR_NOT_FOUND when absent. */
pw_status pw_watch_table_remove(pw_watch_table *t, const char *key);

size_t pw_watch_table_count(const pw_watch_table *t);

/*
 * Iteration: start with *iter = 0; returns the next entry or NULL at the end.
 * The table must not be changed while iterating.
 */
pw_watch_entry *pw_watch_table_next(const pw_watch_table *t, size_t *iter);

#endif
