/*
 * accept.h: when a level shift is accepted as the series' new normal
 * (issue 17, "Accepted shifts"), as pure functions.
 *
 * The baseliner keeps a shift out of its window (outliers and excursions,
 * baseline.h), which is right while the shift is news: the gate compares
 * releases against the level before it. Once the shift has shipped and held,
 * every later release would block on it again. The watcher's changepoint
 * (changepoint.proto) names the shift; the baseliner tracks it and, when
 * `accept_after_nightlies` nightlies measured at or after its first shifted
 * point exist and the newest of them still sit at the shifted level, accepts
 * it: the series re-baselines from the first shifted point on (baseliner.c,
 * as a fleet-change freeze does). When the newest nightlies are back at the
 * old level the shift was fixed and nothing is accepted.
 */
#ifndef PW_ACCEPT_H
#define PW_ACCEPT_H

#include <stddef.h>
#include <stdint.h>

#include "perfwatch/v1/changepoint.pb-c.h"
#include "pw_status.h"

/* nightlies of the newest end whose median tells held from fixed */
#define PW_ACCEPT_NEWEST 3

/* What a changepoint message asks of the baseliner. */
typedef enum pw_accept_cp_action {
	PW_ACCEPT_CP_IGNORE = 0, /* infra (the fleet change freezes it), frozen, or a drift */
	PW_ACCEPT_CP_TRACK,      /* a software shift (provisional or confirmed): wait for it to hold */
	PW_ACCEPT_CP_WITHDRAW,   /* the watcher withdrew it: stop tracking */
} pw_accept_cp_action;

pw_accept_cp_action pw_accept_cp_action_of(Perfwatch__V1__ChangepointStage stage,
                                           Perfwatch__V1__ChangepointAnnotation annotation);

typedef enum pw_accept_verdict {
	PW_ACCEPT_WAIT = 0, /* fewer than after_nightlies nightlies since the shift */
	PW_ACCEPT_HELD,     /* enough nightlies, the newest still shifted: accept */
	PW_ACCEPT_FIXED,    /* enough nightlies, the newest back at the old level */
} pw_accept_verdict;

/*
 * nightlies: nightly points measured at or after the first shifted point
 * (that point included); newest[0..nnewest): the values of the newest of
 * them (up to PW_ACCEPT_NEWEST, any order). The shift held when their median
 * is nearer level_after than level_before. after_nightlies 0 never accepts
 * (WAIT). Non-finite levels are WAIT.
 */
pw_accept_verdict pw_accept_decide(double level_before, double level_after, size_t nightlies,
                                   const double *newest, size_t nnewest,
                                   uint32_t after_nightlies);

/*
 * The accept id of a shift of series_key first seen in build
 * first_shifted_build: "acc-<16 hex digits>", FNV-1a 64 of the run
 * configuration (the key up to its last '/') and the build. The metrics of
 * one run configuration that shifted in one build share it, and with it one
 * re-baseline job (pw_bstore_rebaseline_job_id). PW_ERR_INVALID when buf is
 * shorter than 21 bytes.
 */
pw_status pw_accept_id(const char *series_key, const char *first_shifted_build, char *buf,
                       size_t len);

#endif
