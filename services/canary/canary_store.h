/*
 * canary_store.h: the canary's PostgreSQL side (migration 0052): a
 * family's row locked for the window being taken, the stored windows read
 * back (a redelivered one, the replay that rebuilds a family), and the
 * writes of one window's transaction — the window, its metric's state, the
 * family's state and, when this window decided, the decision with its
 * outbox row on perf.rollouts.v1. Every statement is its SQL then its
 * parameters (pw_pg_params); nothing here decides anything.
 *
 * Times are unix microseconds in C and timestamptz in PostgreSQL, converted
 * exactly ('epoch' + n microseconds; extract(epoch ...) as numeric).
 */
#ifndef PW_CANARY_STORE_H
#define PW_CANARY_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "canary.h"
#include "perfwatch/v1/canary.pb-c.h"
#include "pw_pg.h"
#include "pw_status.h"

#define PW_CANARY_PIN_TEXT_MAX 1000 /* bytes kept of a pin's id, owner, sign-off, release, artifact */

/* A pin: a gate waiver with pin set (perfwatch.waivers, migration 0053). */
typedef struct canary_pin {
	char release_id[PW_CANARY_PIN_TEXT_MAX + 1]; /* N: the release the waiver came with */
	char waiver_id[PW_CANARY_PIN_TEXT_MAX + 1];
	char family[PW_CANARY_PIN_TEXT_MAX + 1];
	char pin_release[PW_CANARY_PIN_TEXT_MAX + 1]; /* N−1 */
	char pin_artifact[PW_CANARY_PIN_TEXT_MAX + 1];
	char owner[PW_CANARY_PIN_TEXT_MAX + 1];
	char signed_off_by[PW_CANARY_PIN_TEXT_MAX + 1];
	int64_t expires_us;
} canary_pin;

/* A family's stored row, as canary_store_family_lock reads it. */
typedef struct canary_family_row {
	int64_t windows;
	bool final;
	char family_kind[8];
	/* what the family's first window said (at most PW_CANARY_NAME_MAX bytes each) */
	char release[PW_CANARY_NAME_MAX + 1], previous_release[PW_CANARY_NAME_MAX + 1],
		previous_artifact[PW_CANARY_NAME_MAX + 1];
	double alpha, mde_pct, tolerance_pct;
	int64_t pilot_windows, horizon_s;
	/* its pin (migration 0053): a PINNED recorded, its expiry reported, by which waiver */
	bool pinned, pin_expired;
	char pin_waiver_id[PW_CANARY_PIN_TEXT_MAX + 1];
} canary_family_row;

/*
 * In the caller's open transaction: creates the family's row from window w
 * with these options when it is new, then locks it (FOR UPDATE: one writer
 * per family, whichever instance holds its partition) and reads it.
 */
pw_status canary_store_family_lock(pw_pg *pg, const Perfwatch__V1__CanaryWindow *w, double alpha,
                                   double mde_pct, double tolerance_pct, int64_t pilot_windows,
                                   int64_t horizon_s, canary_family_row *out, char *errbuf,
                                   size_t errlen);

/* The stored window of w's key: *found, and when found its values and length. */
pw_status canary_store_window_get(pw_pg *pg, const Perfwatch__V1__CanaryWindow *w, bool *found,
                                  double *canary, double *baseline, uint32_t *window_s, char *errbuf,
                                  size_t errlen);

/*
 * Feeds f (initialised, empty) every stored window of (rollout_id, family)
 * in the order they were taken (seq). *n the windows fed.
 */
pw_status canary_store_replay(pw_pg *pg, const char *rollout_id, const char *family, pw_canary_family *f,
                              int64_t *n, char *errbuf, size_t errlen);

/* Inserts window w as the family's seq-th. */
pw_status canary_store_window_put(pw_pg *pg, const Perfwatch__V1__CanaryWindow *w, int64_t seq, char *errbuf,
                                  size_t errlen);

/* Writes metric m's state after the window (upsert). */
pw_status canary_store_metric_put(pw_pg *pg, const char *rollout_id, const char *family, pw_canary_metric m,
                                  const pw_canary_metric_state *s, char *errbuf, size_t errlen);

/*
 * Writes the family's counts and, when decided (this window made f final),
 * its decision with rollback_artifact (ROLLBACK only; else NULL) and the
 * packed RolloutDecision into the outbox (service, topic perf.rollouts.v1,
 * key rollout_id/family, ref the same). A decision already recorded is
 * never overwritten (the update is guarded by NOT final).
 */
pw_status canary_store_family_put(pw_pg *pg, const char *service, const char *rollout_id, const char *family,
                                  const pw_canary_family *f, bool decided, const char *rollback_artifact,
                                  const void *packed, size_t len, char *errbuf, size_t errlen);

/*
 * The pin in force now (expiry after PostgreSQL's now()) for family of
 * release: *found, and when found the pin (the latest-expiring one; ties by
 * waiver id).
 */
pw_status canary_store_pin_live(pw_pg *pg, const char *release, const char *family, bool *found, canary_pin *out,
                                char *errbuf, size_t errlen);

/*
 * In the window's transaction: records PINNED for (rollout_id, family) with
 * pin (artifact: the one the family stays on) unless a decision is recorded,
 * and the packed RolloutDecision in the outbox (key rollout_id/family).
 * *recorded false when the guard found the family decided.
 */
pw_status canary_store_pin_put(pw_pg *pg, const char *service, const char *rollout_id, const char *family,
                               const canary_pin *pin, const char *artifact, const void *packed, size_t len,
                               bool *recorded, char *errbuf, size_t errlen);

/* Up to max pins whose expiry passed and is not reported yet, oldest first; *n of them. */
pw_status canary_store_pins_expired(pw_pg *pg, canary_pin *out, size_t max, size_t *n, char *errbuf,
                                    size_t errlen);

/* Pins in force now (every release), for the gauge. */
pw_status canary_store_pins_live_count(pw_pg *pg, int64_t *n, char *errbuf, size_t errlen);

/*
 * In the caller's transaction: claims the report of pin's expiry
 * (perfwatch.pin_expiries; *claimed false when it was reported before) and
 * ends the PINNED of every rollout of its family and release pinned by it;
 * *rollouts the result (rollout_id, release, previous_release,
 * pinned_artifact per row; the caller PQclears it), NULL when not claimed.
 */
pw_status canary_store_pin_expire(pw_pg *pg, const canary_pin *pin, bool *claimed, PGresult **rollouts,
                                  char *errbuf, size_t errlen);

/* Writes one packed RolloutDecision into the outbox (perf.rollouts.v1, key rollout_id/family, ref ref). */
pw_status canary_store_rollout_out(pw_pg *pg, const char *service, const char *rollout_id, const char *family,
                                   const char *ref, const void *packed, size_t len, char *errbuf, size_t errlen);

#endif
