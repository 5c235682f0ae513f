/*
 * watch_store.h: the watcher's PostgreSQL reads and writes.
 *
 * PostgreSQL is the watcher's memory across restarts (docs/watcher.md): on
 * the first point of a series, watch_service.c reads the series row and its spend
 * tier and frozen state, its recent nightly points (perfwatch.samples with
 * the run's environment from perfwatch.runs), the changepoints already
 * stored for it and the fleet changes that selected it, and replays them into
 * a fresh pw_watch_series (watch.h). On an event it stores the changepoints
 * row, its alerts row and the outbox rows with the packed messages
 * (pw_outbox.h, migrations/0019_outbox.sql) in the batch's transaction; after
 * the commit the service runtime publishes the outbox. Every write is idempotent on its natural key. All calls go through one
 * pw_pg (pw_pg.h); errors are its codes, with the reason in errbuf.
 */
#ifndef PW_WATCH_STORE_H
#define PW_WATCH_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "watch_emit.h"
#include "perfwatch/v1/fleet.pb-c.h"
#include "pw_baseline_cache.h"
#include "pw_outbox.h"
#include "pw_pg.h"
#include "pw_status.h"
#include "watch.h"

/* The name the watcher's outbox rows carry. */
#define PW_WATCH_SERVICE "watcher"

/*
 * A series as perfwatch.series and spend_weights know it, and its latest
 * baseline's state as the baseline reader (common/pw_baseline_cache.h) gives it.
 */
typedef struct pw_watch_series_row {
	int64_t series_id;
	char model[PW_WATCH_FIELD_LEN];
	char unit[32];
	bool lower_is_better;
	bool top_tier;                          /* spend_weights.tier = 'top' */
	bool frozen;                            /* latest baseline state 'frozen' */
	char freeze_event_id[PW_WATCH_EVENT_LEN];
} pw_watch_series_row;

/*
 * The row of series_key, its frozen state read through br (Redis when it
 * holds PostgreSQL's current version, else PostgreSQL); *outcome (may be
 * NULL) says what the cache did. PW_ERR_NOT_FOUND when perfwatch.series has
 * none.
 */
pw_status pw_watch_store_series(pw_baseline_reader *br, const char *series_key,
                                pw_watch_series_row *out, pw_baseline_outcome *outcome,
                                char *errbuf, size_t errlen);

/* One stored nightly point with its build and where it ran. */
typedef struct pw_watch_stored_point {
	double value;
	pw_watch_build build;
	pw_watch_point_key key;
	pw_watch_env env;
} pw_watch_stored_point;

/*
 * The newest max nightly points of the series, oldest first, into a malloc'd
 * array *out (caller frees; NULL when *n is 0).
 */
pw_status pw_watch_store_points(pw_pg *pg, int64_t series_id, size_t max,
                                pw_watch_stored_point **out, size_t *n, char *errbuf,
                                size_t errlen);

/*
 * The first shifted builds of the series' stored changepoints shifting at or
 * after since_us (provisional ones excluded: pw_watch_store_provisional),
 * newest max of them, oldest first, into builds[0..*n).
 */
pw_status pw_watch_store_emitted(pw_pg *pg, int64_t series_id, int64_t since_us, size_t max,
                                 char (*builds)[PW_WATCH_BUILD_LEN], size_t *n, char *errbuf,
                                 size_t errlen);

/* 9999-12-31T23:59:59Z: an upper bound for "until now and later" that PostgreSQL can hold. */
#define PW_WATCH_END_OF_TIME_US INT64_C(253402300799000000)

/* A fleet change that selected a series. */
typedef struct pw_watch_fleet_mark {
	char event_id[PW_WATCH_EVENT_LEN];
	int64_t ts_us;
} pw_watch_fleet_mark;

/*
 * The fleet changes of perfwatch.fleet_changes that took effect in
 * (after_us, until_us] and whose selectors match env (the SQL twin of
 * pw_watch_selectors_match), newest max of them, oldest first.
 */
pw_status pw_watch_store_fleet_marks(pw_pg *pg, const pw_watch_env *env, int64_t after_us,
                                     int64_t until_us, size_t max, pw_watch_fleet_mark *out,
                                     size_t *n, char *errbuf, size_t errlen);

/*
 * Stores a FleetChangeEvent (ON CONFLICT (event_id) DO NOTHING), inside the
 * batch's transaction. PW_ERR_INVALID when PostgreSQL refuses its data
 * (SQLSTATE class 22/23; the statement is undone by a savepoint): the
 * message is a dead letter, not a retry.
 */
pw_status pw_watch_store_fleet_change(pw_pg *pg, const Perfwatch__V1__FleetChangeEvent *fc,
                                      char *errbuf, size_t errlen);

/*
 * Stores one event: the changepoints row, and when that row is new, its
 * alerts row and the two outbox rows (pw_outbox.h, ref changepoint_id)
 * holding the packed messages (cp_pb, alert_pb, borrowed). *inserted says whether the changepoint was new. Inside the
 * caller's transaction.
 */
pw_status pw_watch_store_event(pw_pg *pg, const pw_watch_msgs *m, const pw_watch_event *ev,
                               const uint8_t *cp_pb, size_t cp_len, const uint8_t *alert_pb,
                               size_t alert_len, bool *inserted, char *errbuf, size_t errlen);

/* A provisional shift awaiting PELT, or a drift (trend), as stored (0030). */
typedef struct pw_watch_stored_provisional {
	char build_id[PW_WATCH_BUILD_LEN];
	double before, after, p;
	bool trend;  /* a drift, not a provisional shift */
} pw_watch_stored_provisional;

/* The series' provisional shifts and drifts, at most max, oldest first. */
pw_status pw_watch_store_provisional(pw_pg *pg, int64_t series_id, size_t max,
                                     pw_watch_stored_provisional *out, size_t *n, char *errbuf,
                                     size_t errlen);

/* A registered change of a series (perfwatch.expected_wins), by CL. */
typedef struct pw_watch_registration {
	char cl[PW_WATCH_BUILD_LEN];
	int64_t cl_number;
	double expected_pct;
	bool judged;          /* a stored finding (not withdrawn) names it */
} pw_watch_registration;

/*
 * The registered changes of the series (perfwatch.expected_wins of its key
 * whose CL is "cl/N"; a CL registered with several releases once, the newest
 * registration), oldest CL first, at most max.
 */
pw_status pw_watch_store_registrations(pw_pg *pg, int64_t series_id, const char *series_key,
                                       pw_watch_registration *out, size_t max, size_t *n,
                                       char *errbuf, size_t errlen);

/*
 * Calls fn for every registration stored after since_us (registered_at),
 * oldest first, with its series key, CL number and change, and raises
 * *newest_us to the newest registered_at seen; stops at fn's first error.
 */
pw_status pw_watch_store_registered_since(pw_pg *pg, int64_t since_us,
                                          pw_status (*fn)(void *arg, const char *series_key,
                                                          int64_t cl_number, double expected_pct),
                                          void *arg, int64_t *newest_us, char *errbuf,
                                          size_t errlen);

/* The stored revision of an alert (0 when there is none). */
pw_status pw_watch_store_alert_revision(pw_pg *pg, const char *alert_id, uint32_t *revision,
                                        char *errbuf, size_t errlen);

/* What the watcher reads of one series on first sight (docs/watcher.md, "Restart"). */
typedef struct pw_watch_loaded {
	pw_watch_series_row row;
	pw_watch_stored_point *points;            /* the newest max_points, oldest first */
	size_t npoints;
	char (*emitted)[PW_WATCH_BUILD_LEN];      /* stored shifts' first shifted builds */
	size_t nemitted;
	pw_watch_fleet_mark *marks;               /* fleet changes selecting the newest point */
	size_t nmarks;
	pw_watch_stored_provisional prov[PW_WATCH_MAX_PROVISIONAL + 4];
	size_t nprov;
	pw_watch_registration regs[PW_WATCH_MAX_REGISTERED]; /* its registered changes */
	size_t nregs;
} pw_watch_loaded;

/*
 * Reads series_key's row (its frozen state through br), its newest
 * p->max_points nightly points, the shifts stored since the oldest of them,
 * the fleet changes since then that select its newest point's environment,
 * its provisional shifts and drifts, and its registered changes, into *out (release with
 * pw_watch_loaded_release, also after a failure). *outcome (may be NULL)
 * is what the baseline cache did. PW_ERR_NOT_FOUND when perfwatch.series
 * has no such series.
 */
pw_status pw_watch_store_load(pw_baseline_reader *br, const char *series_key,
                              const pw_watch_params *p, pw_watch_loaded *out,
                              pw_baseline_outcome *outcome, char *errbuf, size_t errlen);
void pw_watch_loaded_release(pw_watch_loaded *l);

/*
 * A series built from what was read: direction, tier and frozen state, the
 * registered changes, the stored shifts marked emitted, the fleet marks, the points loaded without a
 * scan per point, then the provisional shifts and drifts marked. The caller
 * scans it once (pw_watch_series_scan_loaded with l->npoints). NULL when
 * the parameters are bad or memory is short (errbuf says which).
 */
pw_watch_series *pw_watch_loaded_series(const pw_watch_loaded *l, const pw_watch_params *p,
                                        char *errbuf, size_t errlen);

#endif
