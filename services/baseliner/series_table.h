/*
 * series_table.h: the baseliner's in-memory series table and fleet-change
 * selector matching, as pure code.
 *
 * The table maps a series_key to one entry: the series' baseline state
 * machine (baseline.h), the execution environment of its latest point (what
 * fleet-change selectors match on), and the resume marker that tells a
 * redelivered point from a new one. It is a cache of PostgreSQL: main.c and
 * baseliner_store.c fill an entry on first sight of a series after start (loaded from
 * the stored baseline, the open freeze and perfwatch.samples), and drop the
 * whole table when a batch fails so that the retry starts from what was
 * committed. Nothing here touches a server; tests/unit/test_series_table.c
 * drives it directly.
 */
#ifndef PW_SERIES_TABLE_H
#define PW_SERIES_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "baseline.h"
#include "pw_input.h"
#include "pw_status.h"

/* Capacities of the text fields of an entry (truncated beyond). */
#define PW_ST_KEY_MAX PW_SERIES_KEY_MAX /* pw_input.h: the one series-key limit */
/* Point ids of a series remembered as folded in, besides a load's re-fill. */
#define PW_ST_RECENT 64
#define PW_ST_ENV_MAX 96

/* The environment of a point: what fleet-change selectors name. */
typedef struct pw_point_env {
	char platform[PW_ST_ENV_MAX];
	char chip_set[PW_ST_ENV_MAX];
	char cell[PW_ST_ENV_MAX];
	char firmware[PW_ST_ENV_MAX];
	char harness_version[PW_ST_ENV_MAX];
} pw_point_env;

/*
 * The selectors of a FleetChangeEvent (fleet.proto), borrowed: every list
 * that is non-empty must contain the env's value (AND across lists, OR
 * within a list); an empty list matches anything.
 */
typedef struct pw_fleet_selector {
	const char *const *platforms; size_t nplatforms;
	const char *const *chip_sets; size_t nchip_sets;
	const char *const *cells; size_t ncells;
	const char *const *firmware; size_t nfirmware;
	const char *const *harness_versions; size_t nharness_versions;
} pw_fleet_selector;

/* True when env satisfies every non-empty selector list. Pure. */
bool pw_fleet_selector_match(const pw_fleet_selector *sel, const pw_point_env *env);

/* True when the selector has no non-empty list (it selects the whole fleet). */
bool pw_fleet_selector_is_empty(const pw_fleet_selector *sel);

/*
 * Where a series' processed input ends. Points of one series share one
 * partition of perf.points.v1 (the key is the series key), so the offset of
 * the last point folded in tells a redelivery (at or before it) from a new
 * point, whatever the points' measurement order: the ingester publishes runs
 * in the order it reads them, which need not be the order they ran in.
 * ts_us is the newest measurement time folded in (fleet changes are applied
 * in measurement time; a restart re-fills the window up to it).
 */
typedef struct pw_point_mark {
	int64_t ts_us;          /* 0: nothing seen */
	int32_t partition;      /* -1: no offset known */
	int64_t offset;
} pw_point_mark;

/* True when (partition, offset) is at or before the mark. Pure. */
bool pw_point_mark_seen(const pw_point_mark *m, int32_t partition, int64_t offset);

/*
 * The fleet changes seen so far, in event time. A fleet change is applied to
 * a series in measurement order, not only in arrival order: the points of a
 * run measured after the change may reach the baseliner before or after the
 * event itself (different topics; the ingester in between), so a point
 * measured after an event's time whose series' previous point was before it
 * triggers that event's freeze first. The log owns copies of everything.
 */
typedef struct pw_fleet_event {
	char id[64];
	int64_t occurred_us;
	char reason[128];
	pw_fleet_selector sel;   /* lists owned by the event */
} pw_fleet_event;

typedef struct pw_fleet_log pw_fleet_log;

pw_fleet_log *pw_fleet_log_new(void);
void pw_fleet_log_free(pw_fleet_log *l); /* NULL allowed */

/* Adds a copy of an event (sel and strings copied); an id already held is
 * left as it is. PW_ERR_NOMEM, PW_ERR_INVALID for an empty or too long id. */
pw_status pw_fleet_log_add(pw_fleet_log *l, const char *id, int64_t occurred_us,
                           const char *reason, const pw_fleet_selector *sel);

size_t pw_fleet_log_count(const pw_fleet_log *l);

/*
 * The next event, from index *pos on, with after_us < occurred_us <= upto_us
 * whose selectors match prev (may be NULL) or cur; advances *pos past it.
 * NULL when there is none. Events are kept in occurred order.
 */
const pw_fleet_event *pw_fleet_log_due(const pw_fleet_log *l, size_t *pos, int64_t after_us,
                                       int64_t upto_us, const pw_point_env *prev,
                                       const pw_point_env *cur);

/* One series. Owned by the table; pointers stay valid until the entry is
 * removed, the table cleared or freed (entries never move). */
typedef struct pw_series_entry {
	char key[PW_ST_KEY_MAX];   /* series_key */
	int64_t series_id;
	bool loaded;               /* state, window and marker are those of PostgreSQL */
	bool has_env;              /* env holds the latest point's environment */
	pw_point_env env;
	pw_point_mark mark;
	uint64_t *refilled;        /* id hashes of the points a load re-filled the window with */
	size_t nrefilled;          /* (a redelivery of one of them is not added twice) */
	uint64_t recent[PW_ST_RECENT]; /* id hashes of the last points folded in (a ring) */
	size_t nrecent;            /* points folded in since the entry was made */
	pw_baseline_series bs;     /* the state machine; initialised when the entry is made */
	bool gpu_class;            /* its platform is GPU-class: σ norm 2%, MDE 4% (§4.1, §4.5) */
	int64_t freeze_since_us;   /* while frozen: points measured before this are of the old fleet */
	int64_t frozen_version;    /* baseline version active when frozen; 0 when none */
	char unit[32];
	/* the newest shift tracked until it holds (accept.h; its row in
	 * perfwatch.shift_acceptances, 0035): has_shift false when none is pending */
	bool has_shift;
	char shift_accept_id[24];  /* pw_accept_id: names the row and, once accepted, the freeze */
	int64_t shift_us;          /* measured time of the first shifted point */
	double shift_before, shift_after;
	bool touched;              /* changed in the current batch (baseliner_store.c writes its progress) */
	bool cache_dirty;          /* Redis does not hold what PostgreSQL holds: resync */
	uint64_t cache_stamp;      /* batch whose cache update already wrote this series */
} pw_series_entry;

typedef struct pw_series_table pw_series_table;

/*
 * A table for up to max_series entries, each with a state machine of params
 * p (copied). Returns NULL when allocation fails or p is invalid.
 */
pw_series_table *pw_series_table_new(size_t max_series, const pw_baseline_params *p);

/* Frees every entry and the table; NULL is allowed. */
void pw_series_table_free(pw_series_table *t);

/* The entry of key, or NULL. */
pw_series_entry *pw_series_table_find(pw_series_table *t, const char *key);

/*
 * The entry of key, created (unloaded, BASELINING, empty window) when absent;
 * *created says which. gpu_class picks the platform σ norm of the new
 * entry's params (see pw_series_table_set_sigma). Returns PW_ERR_NOMEM, or
 * PW_ERR_INSUFFICIENT when the table holds max_series entries, or
 * PW_ERR_INVALID for an empty or too long key.
 */
pw_status pw_series_table_get(pw_series_table *t, const char *key, bool gpu_class,
                              pw_series_entry **out, bool *created);

/* The TPU-class and GPU-class platform σ norms new entries get (relative). */
void pw_series_table_set_sigma(pw_series_table *t, double tpu_sigma, double gpu_sigma);

/* Entries now. */
size_t pw_series_table_count(const pw_series_table *t);

/* Entry i, 0 <= i < count, in creation order (for scans: freezes, resyncs). */
pw_series_entry *pw_series_table_at(pw_series_table *t, size_t i);

/* Drops every entry (the table is then as new). */
void pw_series_table_clear(pw_series_table *t);

/*
 * Feeds one point of the baseline build line to entry e. id is a hash of the
 * point's (run_id, repeat_index) (pw_series_point_id), partition/offset its
 * position in perf.points.v1 (partition -1: unknown, never a redelivery).
 * Skips it (PW_OK, *skipped true, no event) when its id is one of the last
 * PW_ST_RECENT folded in or one the last load re-filled the window with,
 * when the mark has seen its offset and it was measured no later than the
 * mark's newest point (a later one is new whatever its offset: the topic
 * may have started again from 0), or when the series is
 * frozen and the point was measured before the freeze's event; otherwise
 * records env and runs pw_baseline_series_add, whose events land in ev (room
 * for 2) / *nev. The mark advances for every point not skipped as seen.
 * env may be NULL.
 */
pw_status pw_series_entry_add(pw_series_entry *e, const pw_baseline_point *pt, uint64_t id,
                              int32_t partition, int64_t offset, const pw_point_env *env,
                              pw_baseline_event *ev, size_t *nev, bool *skipped);

/* The id hash of a point: FNV-1a of "run_id/repeat_index". */
uint64_t pw_series_point_id(const char *run_id, uint32_t repeat_index);

/*
 * Replaces e's re-filled id set with a copy of ids[0..n). PW_ERR_NOMEM.
 */
pw_status pw_series_entry_set_refilled(pw_series_entry *e, const uint64_t *ids, size_t n);

/*
 * A fleet change selected e: freezes it (pw_baseline_series_freeze) and
 * remembers the active version and since_us (the event's time). Returns true
 * when this is a new freeze (not already frozen by event_id).
 */
bool pw_series_entry_freeze(pw_series_entry *e, const char *event_id, const char *reason,
                            int64_t since_us);

/* A stable 64-bit hash of a string (FNV-1a), e.g. of a chip-set name. */
uint64_t pw_series_hash(const char *s);

/* True when platform names a GPU-class platform: it starts with one of the
 * comma-separated prefixes (e.g. "h100,b200,gpu"). */
bool pw_series_platform_is_gpu(const char *platform, const char *gpu_prefixes);

#endif
