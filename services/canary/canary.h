/*
 * canary.h: the canary's decisions (docs/canary.md, "The canary service";
 * seed §8): per (rollout, family) one confidence sequence (pw_cs, pw_stats.h)
 * per metric — TPOT, TTFT, goodput — fed one window at a time, and the
 * family's decision made of them. Plain functions of the windows added, in
 * order; no broker, no database. canary_service.c feeds them live and, after
 * a restart, replays the stored windows through them in the order they were
 * taken (the state is a pure function of that sequence).
 *
 * The rule, evaluated after every window until the decision is final:
 *   ROLLBACK   as soon as any metric's sequence says REGRESSION (the whole
 *              interval above the tolerance);
 *   PROMOTE    once every metric has said NO_REGRESSION at some window (its
 *              interval wholly below the MDE; the first such window counts,
 *              as pw_stats.h says the caller acts on the first);
 *   HOLD       otherwise; after the horizon (first window's start to the
 *              last window's end) with neither, HOLD with inconclusive set,
 *              final: the data could not tell.
 * Both error bounds of pw_cs hold at every stopping time at once (Ville's
 * inequality is about the whole path), so a metric that cleared and later
 * says REGRESSION still rolls an undecided family back.
 *
 * Ownership: a pw_canary_family owns its sequences; _release frees them.
 */
#ifndef PW_CANARY_H
#define PW_CANARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_stats.h"
#include "pw_status.h"

typedef enum pw_canary_metric {
	PW_CANARY_TPOT = 0,
	PW_CANARY_TTFT,
	PW_CANARY_GOODPUT,
	PW_CANARY_NMETRICS,
} pw_canary_metric;

/* "tpot", "ttft", "goodput" (the stored names). */
const char *pw_canary_metric_name(pw_canary_metric m);
/* The stored name back; false when unknown. */
bool pw_canary_metric_parse(const char *s, pw_canary_metric *out);
/* Goodput is higher-is-better; TPOT and TTFT lower-is-better. */
pw_compare_direction pw_canary_metric_direction(pw_canary_metric m);

typedef enum pw_canary_decision {
	PW_CANARY_HOLD = 0,
	PW_CANARY_PROMOTE,
	PW_CANARY_ROLLBACK,
} pw_canary_decision;

/* "HOLD", "PROMOTE", "ROLLBACK". */
const char *pw_canary_decision_name(pw_canary_decision d);

#define PW_CANARY_FAMILY_MDE_MAX 64  /* per-family MDE overrides */
#define PW_CANARY_NAME_MAX 200       /* bytes of a rollout id, a family, a release, an artifact */

typedef struct pw_canary_family_mde {
	char family[PW_CANARY_NAME_MAX + 1];
	double mde_pct;
} pw_canary_family_mde;

/* The canary.* configuration as the decisions take it (docs/config.md). */
typedef struct pw_canary_params {
	double alpha;            /* 1 − the sequences' time-uniform coverage (0.05) */
	double mde_tpu_pct;      /* NO_REGRESSION bound of a TPU family (1) */
	double mde_gpu_pct;      /* ... of a GPU family (2: benchmarks certify 4%, §4.5) */
	double tolerance_frac;   /* REGRESSION bound as a fraction of the MDE (0.5) */
	size_t pilot_windows;    /* windows that set each sequence's scale (12: an hour) */
	int64_t horizon_us;      /* HOLD is final and inconclusive after this (48 h) */
	pw_canary_family_mde family_mde[PW_CANARY_FAMILY_MDE_MAX];
	size_t nfamily_mde;
} pw_canary_params;

void pw_canary_params_default(pw_canary_params *p);

/*
 * Parses "family=pct,family=pct" (spaces allowed around items; "" for none)
 * into p's overrides. PW_ERR_CONFIG with the reason in errbuf for a malformed
 * item, a percent outside (0, 100], a family over PW_CANARY_NAME_MAX bytes or
 * holding '/', or more than PW_CANARY_FAMILY_MDE_MAX items.
 */
pw_status pw_canary_params_family_mde(pw_canary_params *p, const char *spec, char *errbuf,
                                      size_t errlen);

/* The MDE a family runs with: its override, else its kind's. */
double pw_canary_mde_pct(const pw_canary_params *p, const char *family, bool gpu);

/* The state of one (rollout, family, metric) sequence. */
typedef struct pw_canary_metric_state {
	pw_cs *cs;
	pw_cs_result last;          /* after the latest window */
	size_t windows;
	int64_t last_start_us;      /* 0 before the first window */
	pw_cs_decision verdict;     /* the first REGRESSION or NO_REGRESSION; INSUFFICIENT_DATA: none yet */
	pw_cs_result at_verdict;
	int64_t verdict_start_us;
} pw_canary_metric_state;

/* One family of one rollout: its sequences and its decision. */
typedef struct pw_canary_family {
	pw_canary_metric_state m[PW_CANARY_NMETRICS];
	double alpha, mde_pct, tolerance_pct;
	size_t pilot_windows;
	int64_t horizon_us;
	size_t windows;             /* of every metric */
	int64_t first_start_us, last_end_us;
	pw_canary_decision decision;
	bool inconclusive;
	bool final;                 /* PROMOTE, ROLLBACK, or inconclusive HOLD */
	pw_canary_metric metric;    /* final: the metric that decided */
	pw_cs_result decided;       /* final: that metric's result at the decision */
	int64_t decided_start_us;   /* final: the window that decided */
} pw_canary_family;

/*
 * A family with no window yet, its sequences at these options (pw_cs_opts:
 * alpha, the MDE and tolerance in percent, the pilot's windows) and its
 * horizon. The service takes them from pw_canary_params for a new family
 * (pw_canary_mde_pct, tolerance_frac × MDE) and from the family's stored row
 * when it rebuilds one, so that a changed configuration never changes a
 * rollout under way. PW_ERR_INVALID when pw_cs refuses the options or the
 * horizon is not > 0, PW_ERR_NOMEM. On failure nothing is left to release;
 * on success pw_canary_family_release frees it.
 */
pw_status pw_canary_family_init(pw_canary_family *f, double alpha, double mde_pct, double tolerance_pct,
                                size_t pilot_windows, int64_t horizon_us);
void pw_canary_family_release(pw_canary_family *f);

/*
 * Adds one window of metric m (its start, its length in seconds, the two
 * arms' medians) and applies the rule above. *decided (may be NULL) is set
 * when this window made the decision final. A final family still takes
 * windows (the sequences go on, for the record) but its decision stays.
 * PW_ERR_INVALID for a value not finite and > 0, a start <= 0 or a length of
 * 0; PW_ERR_CONFLICT for a start not after the metric's last window (out of
 * order); PW_ERR_NOMEM. On any error the state is unchanged.
 */
pw_status pw_canary_family_add(pw_canary_family *f, pw_canary_metric m, int64_t start_us,
                               uint32_t window_s, double canary, double baseline, bool *decided);

/* ------------------------------------------------------------------ pins */

/*
 * Per-family version pinning (docs/canary.md "Pins"; seed §8 follow-up): a
 * gate waiver with pin set keeps its family on release N−1 while the others
 * take N. What the canary does with a window of a family, given the pin:
 *
 *   PW_CANARY_PIN_RECORD  record PINNED now (with the pin) and publish it:
 *                         a live pin, no decision recorded yet, and no pin
 *                         recorded or only an earlier pin that expired (a
 *                         new waiver pins the family again);
 *   PW_CANARY_PIN_HOLD    the pin recorded and not reported expired: the
 *                         window is taken, the sequences go on, but no
 *                         decision is recorded (a pinned family is never
 *                         promoted, nor rolled back: it does not run N);
 *                         also when the pin has passed but its expiry is not
 *                         reported yet, so that PIN_EXPIRED comes first;
 *   PW_CANARY_PIN_NONE    no pin in force: the rule of pw_canary_family_add
 *                         decides, and a decision it reached while the pin
 *                         held is recorded at the first window after it.
 *
 * A decision recorded before a pin arrived stands (NONE).
 */
typedef enum pw_canary_pin_action {
	PW_CANARY_PIN_NONE = 0,
	PW_CANARY_PIN_RECORD,
	PW_CANARY_PIN_HOLD,
} pw_canary_pin_action;

typedef struct pw_canary_pin_state {
	bool decision_recorded; /* the family's final decision is recorded */
	bool pinned;            /* a PINNED is recorded for the family */
	bool pin_expired;       /* ... and its expiry reported (PIN_EXPIRED) */
	bool live;              /* a pin of the family's release is in force now */
	bool live_is_recorded;  /* the live pin is the recorded one (same waiver) */
} pw_canary_pin_state;

pw_canary_pin_action pw_canary_pin_step(const pw_canary_pin_state *s);

/* "NONE", "RECORD", "HOLD". */
const char *pw_canary_pin_action_name(pw_canary_pin_action a);

#endif
