/*
 * baseline.h: the baseliner's decisions for one series, as pure functions.
 *
 * A series (model, HLO fingerprint, platform, config, metric) keeps the null
 * window of §4.2 of the design: the most recent points since the last reset.
 * Once the window holds at least min_runs points over at least min_days days
 * on at least min_chipsets chip-sets, the baseline is its median, normalised
 * MAD and noise band. The state machine:
 *
 *   BASELINING --window complete, σ ok--> ACTIVE
 *   BASELINING/ACTIVE --window complete, σ > 2× platform norm--> QUARANTINED
 *   QUARANTINED --a later window with σ ok--> ACTIVE (a new version; while
 *                 still noisy the quarantined version and its values stand)
 *   any --fleet change selecting the series--> FROZEN (window cleared)
 *   FROZEN --re-baseline from the points after the change completes--> ACTIVE
 *          (or QUARANTINED when the new window is noisy; UNFROZEN either way)
 *
 * A point beyond outlier_k·σ of an existing baseline raises an infra-health
 * event and is kept out of the window (§4 "why MAD": outliers get their own
 * alert instead of widening the band). Outliers on one side of the median
 * with no in-band window point measured between them are one excursion — a
 * level shift such as a real regression, or a host degraded for a while:
 * only the first to arrive raises the alert, the others are kept out as
 * EXCURSION points. Measurement time decides, not arrival order (points of a
 * series arrive interleaved from the ingester's workers): an in-band point
 * measured after the excursion ends it, an outlier measured before it with
 * in-band points between is an alert of its own. A cleared window ends it.
 * main.c feeds points and fleet changes in and turns the events out into
 * PostgreSQL rows, Redis entries and Kafka messages; nothing here touches a
 * server.
 */
#ifndef PW_BASELINE_H
#define PW_BASELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_baseline.h"
#include "pw_status.h"

/* pw_baseline_state and pw_baseline_state_name are common/pw_baseline.h's. */

/* The window rules and thresholds; pw_baseline_params_default() gives §4.2's. */
typedef struct pw_baseline_params {
	size_t min_runs;        /* points in the window before a baseline exists (30) */
	double min_days;        /* span of the window in days (5) */
	size_t min_chipsets;    /* distinct chip-sets in the window (3) */
	size_t max_window;      /* points kept; older ones slide out (120) */
	double platform_sigma;  /* the platform's relative σ norm: 0.004 TPU, 0.02 GPU */
	double quarantine_factor; /* quarantine when σ_rel > factor × platform_sigma (2) */
	double outlier_k;       /* a point beyond k·σ of the baseline is an infra outlier (5) */
	double band_k;          /* noise band half-width in MAD_n (3) */
	double rebaseline_min_days; /* span a FROZEN series' re-baseline window needs instead of
	                               min_days (the requested runs of issue 17 are measured
	                               within hours); negative: min_days (the default's -1) */
} pw_baseline_params;

void pw_baseline_params_default(pw_baseline_params *p, bool gpu_class);

/* One point of a series as the baseliner sees it. */
typedef struct pw_baseline_point {
	double value;        /* in the series' unit */
	int64_t ts_us;       /* unix microseconds of the run */
	uint64_t chipset;    /* a hash of the chip-set name; only equality matters */
} pw_baseline_point;

/* A computed baseline: what is stored, cached and published. */
typedef struct pw_baseline_value {
	uint64_t version;    /* 1, 2, …; increases with every new baseline of the series */
	double median;
	double mad_n;        /* normalised MAD, series unit */
	double band_lo, band_hi; /* median ∓ band_k·mad_n */
	double sigma_rel;    /* mad_n / |median|: the series' relative noise */
	size_t n;            /* points it was computed from */
	size_t n_chipsets;
	int64_t window_start_us, window_end_us;
} pw_baseline_value;

/* What one input did; main.c persists and publishes each. */
typedef enum pw_baseline_event_kind {
	PW_BASELINE_EV_NONE = 0,
	PW_BASELINE_EV_UPDATED,      /* a new baseline version (state ACTIVE) */
	PW_BASELINE_EV_QUARANTINED,  /* σ too high: infra-health alert */
	PW_BASELINE_EV_OUTLIER,      /* a 5–10σ point: infra-health alert, kept out */
	PW_BASELINE_EV_FROZEN,       /* a fleet change froze the series */
	PW_BASELINE_EV_UNFROZEN,     /* the re-baseline after a freeze completed */
	PW_BASELINE_EV_EXCURSION,    /* an outlier continuing an excursion: kept out, no alert */
} pw_baseline_event_kind;

typedef struct pw_baseline_event {
	pw_baseline_event_kind kind;
	double z;            /* for OUTLIER and EXCURSION: (value − median) / mad_n */
} pw_baseline_event;

/*
 * The state of one series. Caller-owned; pw_baseline_series_init allocates
 * the window (max_window points) once, pw_baseline_series_release frees it.
 */
typedef struct pw_baseline_series {
	pw_baseline_params params;
	pw_baseline_state state;
	pw_baseline_value current;   /* valid when has_baseline */
	bool has_baseline;
	char freeze_reason[128];
	char freeze_event[64];
	/* the newest excursion: its side (+1 above the median, −1 below, 0 none)
	 * and the measurement times of its first and last outliers */
	int excursion;
	int64_t excursion_first_us, excursion_last_us;
	/* the window, a ring of the most recent points, and its values in order */
	pw_baseline_point *ring;
	size_t ring_head, ring_len;
	double *sorted;              /* the ring_len values of the ring, ascending */
} pw_baseline_series;

pw_status pw_baseline_series_init(pw_baseline_series *s, const pw_baseline_params *p);
void pw_baseline_series_release(pw_baseline_series *s);

/*
 * Feeds one point. Writes at most two events into ev (caller provides room
 * for 2) and their count into nev. Non-finite values are PW_ERR_INVALID.
 */
pw_status pw_baseline_series_add(pw_baseline_series *s, const pw_baseline_point *pt,
                                 pw_baseline_event *ev, size_t *nev);

/*
 * A fleet change selected this series: freeze it, drop the stored baseline
 * and the window so that the re-baseline uses only later points. event_id and
 * reason are copied (truncated to their fields). Returns true when the series
 * was not already frozen by the same event (so the caller publishes once).
 */
bool pw_baseline_series_freeze(pw_baseline_series *s, const char *event_id, const char *reason);

/*
 * A FROZEN series whose window, re-filled from stored samples, is already
 * complete (the runs its re-baseline asked for were all stored before it was
 * loaded, so none of them arrives as a new point): decides as pw_baseline_series_add
 * does after a point — UNFROZEN and UPDATED (or QUARANTINED) into ev (room
 * for 2). Nothing for a series not frozen or a window still short.
 */
pw_status pw_baseline_series_settle(pw_baseline_series *s, pw_baseline_event *ev, size_t *nev);

/* Empties the window and ends an excursion (the state and current baseline
 * are untouched). */
void pw_baseline_series_clear_window(pw_baseline_series *s);

/*
 * Appends pt to the window without deciding anything: no baseline is
 * computed, no event raised, the state is untouched. For the restart path,
 * which re-fills the window from stored samples and restores state and
 * current from the stored baseline itself.
 */
void pw_baseline_series_push_quiet(pw_baseline_series *s, const pw_baseline_point *pt);

/*
 * Restart path: the newest point folded in before the restart, measured at
 * ts_us, was kept out as an outlier of value `value`; the excursion it
 * belonged to goes on (the next outlier on its side with no in-band window
 * point between raises no new alert). Needs the stored baseline.
 */
void pw_baseline_series_resume_excursion(pw_baseline_series *s, double value, int64_t ts_us);

/* Points in the window now, and what the window still lacks (for `series show`). */
size_t pw_baseline_series_window_len(const pw_baseline_series *s);
void pw_baseline_series_describe_need(const pw_baseline_series *s, char *buf, size_t len);

#endif
