/*
 * first_signal.h: who owns the baseliner's outlier alert, the first signal
 * anyone gets of a shift (issue 17, seed §8: a mis-routed first alert is
 * where trust dies).
 *
 * A point beyond outlier_k·σ of its baseline is either an infrastructure
 * event or the first nightly of a real (compiler or model) shift; one point
 * cannot tell which. It is infra only when something infra-side explains it:
 *
 *   - a fleet change selecting the series took effect within overlap_us
 *     before the point (SIGNAL_CAUSE_FLEET_CHANGE);
 *   - the point ran in a different cell, firmware or harness version than
 *     the series' previous point (HARNESS_CHANGE; not the chip set, which a
 *     series rotates over by design: a baseline spans >= 3 of them, §4.2);
 *   - within window_us, outliers hit at least min_models distinct models on
 *     the same platform and chip set: a host-level event, since unrelated
 *     models do not share a compiler regression's fingerprint (FLEET_WIDE).
 *
 * Otherwise the cause is NONE_FOUND: the alert is "unconfirmed", owned by
 * the triage rotation for confirmation (a rerun or the next nightly), and
 * routed to neither infra nor the compiler team.
 *
 * The fleet-wide tracker keeps the last `cap` outliers; an outlier that
 * completes a fleet-wide group reclassifies the group's earlier members
 * (the caller republishes them at a higher revision). Pure, no I/O;
 * tests/unit/test_first_signal.c covers it.
 */
#ifndef PW_FIRST_SIGNAL_H
#define PW_FIRST_SIGNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "series_table.h"

typedef enum pw_signal_cause {
	PW_SIGNAL_UNSPECIFIED = 0,
	PW_SIGNAL_FLEET_CHANGE = 1,
	PW_SIGNAL_HARNESS_CHANGE = 2,
	PW_SIGNAL_FLEET_WIDE = 3,
	PW_SIGNAL_NONE_FOUND = 4,
} pw_signal_cause;

/* "fleet_change", "harness_change", "fleet_wide", "none_found" ("" for unspecified). */
const char *pw_signal_cause_name(pw_signal_cause c);

/* Whether a cause makes the signal infra-owned. */
bool pw_signal_cause_is_infra(pw_signal_cause c);

/*
 * The environment difference between the previous point (prev, NULL when
 * the series has none) and this one in cell, firmware or harness version,
 * as "harness perfbench-2.31 -> perfbench-2.32" into out; false (out empty)
 * when none differs or a side is unknown (empty).
 */
bool pw_signal_env_changed(const pw_point_env *prev, const pw_point_env *cur, char *out,
                           size_t outlen);

typedef struct pw_fleet_wide_params {
	size_t min_models;  /* distinct models on one platform/chip set (3) */
	int64_t window_us;  /* within this much measurement time (6 h) */
	size_t cap;         /* outliers remembered (4096) */
} pw_fleet_wide_params;

void pw_fleet_wide_params_default(pw_fleet_wide_params *p);

typedef struct pw_fw_entry {
	char group[2 * PW_ST_ENV_MAX + 2]; /* "platform|chip_set" */
	char model[128];
	int64_t ts_us;
	uint64_t tag;       /* the caller's handle of the outlier */
	bool fleet_wide;    /* already reported as a member of a fleet-wide group */
} pw_fw_entry;

typedef struct pw_fleet_wide {
	pw_fleet_wide_params p;
	pw_fw_entry *ring;
	size_t n, head;
} pw_fleet_wide;

/* NULL on no memory or cap/min_models 0. */
pw_fleet_wide *pw_fleet_wide_new(const pw_fleet_wide_params *p);
void pw_fleet_wide_free(pw_fleet_wide *t);

/*
 * Records an outlier of model on env's platform and chip set at ts_us under
 * tag. Returns the number of distinct models with an outlier in that group
 * within ±window_us of ts_us (this one included). When that reaches
 * min_models, every member of the group within the window that was not yet
 * reported is marked reported and its tag written to newly[0..cap) (this
 * outlier's own tag included), *nnewly their count; else *nnewly = 0.
 */
size_t pw_fleet_wide_add(pw_fleet_wide *t, const pw_point_env *env, const char *model,
                         int64_t ts_us, uint64_t tag, uint64_t *newly, size_t cap,
                         size_t *nnewly);

#endif
