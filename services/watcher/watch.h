/*
 * watch.h: the changepoint watcher's decisions for one nightly series, as
 * plain functions (§4.3b and §4.4's trend family).
 *
 * Each series keeps a pw_cp_stream (common/pw_changepoint.h) over its last
 * max_points nightly points and, beside it, the build each point came from.
 * Appending a point costs the stream's amortised O(pruned set), not a
 * re-scan. When the stream reports a level shift that has not been emitted
 * before, the series localises it — the last clean and first shifted builds
 * and their CLs bound the range the bisector will search — annotates it
 * (infra when a fleet change that selected the series took effect between
 * those two points; frozen when the series was frozen), and routes it (page
 * for a regression on a top-tier series, queue for the rest, none for infra).
 *
 * "Emitted before" is decided by build, not by index: the first shifted
 * build is the changepoint's natural key, so a restarted watcher that reloads
 * the keys it stored (pw_watch_series_mark_emitted) never emits one twice,
 * and a shift whose estimated position moves by a point or two as nightlies
 * arrive is still recognised as the same shift. services/watcher/main.c feeds
 * points and fleet changes in and turns the events into rows and messages.
 */
#ifndef PW_WATCH_H
#define PW_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_changepoint.h"
#include "pw_drift.h"
#include "pw_expected.h"
#include "pw_status.h"

#define PW_WATCH_BUILD_LEN 64
#define PW_WATCH_EVENT_LEN 64
#define PW_WATCH_MAX_PROVISIONAL 4 /* provisional shifts held per series */
#define PW_WATCH_MAX_REGISTERED 16 /* registered changes (by CL) applied per series */

/* Where a point came from. */
typedef struct pw_watch_build {
	char build_id[PW_WATCH_BUILD_LEN]; /* e.g. "xla-nightly-2026-06-17" */
	char cl[PW_WATCH_BUILD_LEN];       /* head CL, e.g. "cl/7841923" */
	int64_t cl_number;
	int64_t ts_us;                     /* unix microseconds the run finished */
} pw_watch_build;

typedef enum pw_watch_annotation {
	PW_WATCH_ANNOTATION_NONE = 0, /* a software shift */
	PW_WATCH_ANNOTATION_INFRA,    /* coincides with a fleet change on this series */
	PW_WATCH_ANNOTATION_FROZEN,   /* the series was frozen at the time */
	PW_WATCH_ANNOTATION_REGISTERED, /* a registered CL is in the range: the registration's outcome */
} pw_watch_annotation;

typedef enum pw_watch_routing {
	PW_WATCH_ROUTE_NONE = 0, /* recorded only */
	PW_WATCH_ROUTE_QUEUE,    /* the trend queue; pages nobody */
	PW_WATCH_ROUTE_PAGE,     /* page on-call */
} pw_watch_routing;

const char *pw_watch_annotation_name(pw_watch_annotation a);
const char *pw_watch_routing_name(pw_watch_routing r);

/*
 * Where a shift's report stands (issue 17). PELT places a shift only
 * min_segment points after it; the early rule (pw_changepoint.h
 * pw_cp_early_shift) reports it after early.k. A shift the early rule
 * reported is PROVISIONAL until PELT finds it (CONFIRMING: the same
 * changepoint, first shifted build and alert, a later revision) or
 * early_confirm_within points pass without it (WITHDRAWN). A shift PELT
 * finds first is CONFIRMED at once.
 */
typedef enum pw_watch_stage {
	PW_WATCH_STAGE_CONFIRMED = 0,
	PW_WATCH_STAGE_PROVISIONAL,
	PW_WATCH_STAGE_CONFIRMING,
	PW_WATCH_STAGE_WITHDRAWN,
	PW_WATCH_STAGE_TREND,        /* a sustained drift (pw_drift.h): one finding, queued */
	PW_WATCH_STAGE_REGISTERED,   /* a registered change that arrived as registered: a validated
	                              * win, reported once (a report of the same step made before the
	                              * registration was known is revised) */
} pw_watch_stage;

/* "confirmed", "provisional", "confirmed" (for CONFIRMING and REGISTERED), "withdrawn", "trend". */
const char *pw_watch_stage_name(pw_watch_stage st);

/* One level shift ready to be stored and published. */
typedef struct pw_watch_event {
	pw_changepoint cp;           /* index absolute since the stream's first point */
	bool regression;             /* worse by the metric's direction; else an improvement */
	pw_watch_build last_clean;   /* the point before the shift */
	pw_watch_build first_shifted;/* the first point of the new level */
	pw_watch_annotation annotation;
	char fleet_event_id[PW_WATCH_EVENT_LEN]; /* the change behind INFRA or FROZEN */
	pw_watch_routing routing;
	pw_watch_stage stage;
	size_t reported_after;       /* points of the new level seen when reported (index-relative) */
	double drift_rate_pct;       /* TREND: percent per point (nightly) */
	double drift_total_pct;      /* TREND: percent from its start to the newest point */
	/*
	 * Registered changes (pw_watch_series_register): the detector sees the
	 * points with them taken out (observed − expected), so cp's levels are
	 * those; level_before / level_after are the levels as measured.
	 */
	double level_before, level_after;
	double expected_pct;         /* the registered change between the two builds, percent; 0: none */
	char registered_cl[PW_WATCH_BUILD_LEN]; /* the registered CL in the range, "" when none */
	pw_expected_outcome expected;/* with a registered CL in the range: what it did */
	bool revises;                /* REGISTERED: an earlier report of this step is revised */
	uint32_t alert_revision;     /* REGISTERED with revises: the alert's next revision (the caller sets it) */
} pw_watch_event;

typedef struct pw_watch_params {
	pw_cp_params cp;        /* the detector; pw_cp_params_default's robust PELT */
	size_t max_points;      /* points kept per series (400: more than a year of nightlies) */
	size_t same_shift_slack;/* a shift within this many points of an emitted build is that shift (3) */
	size_t max_emitted;     /* emitted builds remembered per series (16) */
	size_t max_fleet_marks; /* fleet changes remembered per series (8) */
	pw_cp_early_params early; /* the early rule; early.k = 0 turns it off (k 3) */
	size_t early_confirm_within; /* a provisional shift PELT has not found this many points after it is withdrawn (20) */
	pw_drift_params drift;  /* the drift detector (pw_drift.h defaults) */
	size_t drift_every;     /* look for a drift every this many points (0: never; 7) */
	size_t drift_slack;     /* a drift starting within this many points of a reported one is it (30) */
	size_t drift_min_stretch; /* a drift has at least this many points from its start (30) */
	size_t registered_n;    /* points from a registered CL on that judge it (5, the gate's candidate n) */
	size_t registered_min_base; /* fewest points before the CL to judge it against (10) */
	double registered_alpha;/* observed − expected is significant below this p (0.05, the gate's FDR level) */
} pw_watch_params;

void pw_watch_params_default(pw_watch_params *p);

typedef struct pw_watch_series pw_watch_series;

/*
 * A series. lower_is_better decides which way is a regression; top_tier
 * whether a regression pages. params is copied. NULL on bad params or no
 * memory (errbuf says which).
 */
pw_watch_series *pw_watch_series_new(const pw_watch_params *params, bool lower_is_better,
                                     bool top_tier, char *errbuf, size_t errlen);
void pw_watch_series_free(pw_watch_series *s);

/*
 * A registered change (gate.proto ExpectedWin: the compiler team's expected
 * delta for CL cl, number cl_number, percent of the value): the points of
 * builds that include the CL (build cl_number >= cl_number) are judged as
 * observed − expected — the detectors see them with the change taken out
 * (pw_expected_remove), a shift whose CL range holds the CL is annotated
 * REGISTERED with the registration's outcome, and once registered_n points
 * of the CL are in without such a shift the series compares them with the
 * points before (pw_expected_compare, pw_expected_classify) and reports a
 * validated win (stage REGISTERED). judged: it was reported already (a
 * stored finding of it), so it is only applied. Call before the points are
 * loaded: a registration that arrives later rebuilds the series. The same CL
 * registered again replaces the earlier one. PW_ERR_INVALID when the change
 * cannot be taken out (−100% or less, not finite) or the series holds
 * PW_WATCH_MAX_REGISTERED already, or points were loaded.
 */
pw_status pw_watch_series_register(pw_watch_series *s, const char *cl, int64_t cl_number,
                                   double expected_pct, bool judged, char *errbuf, size_t errlen);

/* Whether the series applies exactly this registration (CL and change). */
bool pw_watch_series_registered(const pw_watch_series *s, int64_t cl_number, double expected_pct);

/* Records that a fleet change selecting this series took effect at ts_us; the
 * same change (event id and time) recorded again is kept once. */
void pw_watch_series_fleet_change(pw_watch_series *s, const char *event_id, int64_t ts_us);

/* The series' frozen state as the baseliner last published it. */
void pw_watch_series_set_frozen(pw_watch_series *s, bool frozen, const char *event_id);

/* Records that the shift first seen at build_id was emitted (e.g. reloaded after restart). */
void pw_watch_series_mark_emitted(pw_watch_series *s, const char *build_id);

/*
 * Records that the shift first seen at build_id was reported provisionally
 * and awaits PELT's confirmation (reloaded after restart: call it after
 * loading the points, so that the build's position is known; a build no
 * longer in the window is marked emitted instead).
 */
void pw_watch_series_mark_provisional(pw_watch_series *s, const char *build_id, double before,
                                      double after, double p);

/*
 * Appends one point. New shifts found are written to out[0..cap) and counted
 * in *nout, and marked emitted. When a build has several points (repeats), a
 * split the detector places among them moves to the build's first point, so
 * that last clean and first shifted are always two different builds.
 * PW_ERR_INVALID on a non-finite value (nothing appended).
 */
pw_status pw_watch_series_append(pw_watch_series *s, double value, const pw_watch_build *build,
                                 pw_watch_event *out, size_t cap, size_t *nout, char *errbuf,
                                 size_t errlen);

/*
 * Re-annotates ev as an infra step of the fleet change event_id (routing
 * none): for a fleet change the series' own marks did not hold, e.g. one the
 * caller found in perfwatch.fleet_changes for the shift's interval.
 */
void pw_watch_event_set_infra(pw_watch_event *ev, const char *event_id);

/*
 * Appends one point without looking for shifts, for replaying a series'
 * stored history after a restart: load every point, then call
 * pw_watch_series_scan once — one detection over the window instead of one
 * per point. Shifts that only a prefix of the history showed are then not
 * reported (the full window no longer supports them). PW_ERR_INVALID on a
 * non-finite value (nothing appended).
 */
pw_status pw_watch_series_load(pw_watch_series *s, double value, const pw_watch_build *build,
                               char *errbuf, size_t errlen);

/*
 * Looks for shifts in the current window that were not emitted yet; out,
 * cap and *nout as for pw_watch_series_append (which is load + scan).
 */
pw_status pw_watch_series_scan(pw_watch_series *s, pw_watch_event *out, size_t cap,
                               size_t *nout, char *errbuf, size_t errlen);

/*
 * pw_watch_series_scan after the newest `loaded` points were loaded
 * (pw_watch_series_load): the early rule is also applied as it stood when
 * each of them was the newest (at most early_confirm_within + early.k
 * back), as a stream that appended them would have, so that a shift whose
 * early report was due among them is reported provisionally — unless PELT
 * places it in the window. Call it after the stored emitted and provisional
 * shifts are marked.
 */
pw_status pw_watch_series_scan_loaded(pw_watch_series *s, size_t loaded, pw_watch_event *out,
                                      size_t cap, size_t *nout, char *errbuf, size_t errlen);

/*
 * Records a drift reported from build_id on (reloaded after restart, after
 * the points): it is not reported again, and PELT's steps in its direction
 * are its stairs.
 */
void pw_watch_series_mark_drift(pw_watch_series *s, const char *build_id, bool rising);

/* Points appended since the series was created. */
size_t pw_watch_series_points(const pw_watch_series *s);

#endif
