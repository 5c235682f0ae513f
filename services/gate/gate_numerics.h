/*
 * gate_numerics.h: the "faster but wrong" check of the release gate (§9).
 *
 * An improvement the gate would report (an unregistered one, INVESTIGATE, or
 * a registered one it confirms, VALIDATED_WIN) is only a win when the
 * candidate computes what the baseline computed. Each run may carry a
 * numerics fingerprint (RunResult.numerics_fingerprint: a digest of the
 * model's outputs on a fixed evaluation set, stable for a model, config and
 * compiler build unless the numerics change). gate_eval.c calls
 * pw_gate_numerics_check with the fingerprints of the runs whose samples the
 * series was tested on; a mismatch turns the win into a blocking series.
 * Pure: no I/O, no allocation.
 */
#ifndef PW_GATE_NUMERICS_H
#define PW_GATE_NUMERICS_H

#include <stddef.h>

typedef enum pw_gate_numerics {
	PW_GATE_NUMERICS_NOT_CHECKED = 0, /* no baseline fingerprint (none carried, or a tie),
	                                   * or a candidate run lacks one and none of the others
	                                   * differs: no claim either way */
	PW_GATE_NUMERICS_MATCH,           /* every candidate run carries the baseline's */
	PW_GATE_NUMERICS_MISMATCH,        /* a candidate run's fingerprint is not the baseline's:
	                                   * "numerics changed: faster but wrong" */
} pw_gate_numerics;

typedef struct pw_gate_numerics_result {
	pw_gate_numerics state;
	const char *baseline;  /* the baseline's fingerprint: the one most baseline runs carry
	                        * (a window may end after the change landed in a nightly);
	                        * NULL when none carries one or two lead equally; borrowed */
	const char *candidate; /* MISMATCH: the first candidate fingerprint that differs;
	                        * else the first a candidate run carries; NULL when none */
} pw_gate_numerics_result;

/* "not_checked", "match", "mismatch": the text of GateSeriesResult.numerics. */
const char *pw_gate_numerics_name(pw_gate_numerics n);

/*
 * Compares the fingerprints of the candidate's runs (cand, n_cand entries)
 * with the baseline's (base, n_base). A NULL array, a NULL entry or "" is a
 * run without a fingerprint. The baseline's fingerprint is the one most of its
 * runs carry. MISMATCH as soon as one candidate fingerprint differs from it
 * (whatever the other runs carry: that difference is a fact); MATCH only when
 * every candidate run carries it; NOT_CHECKED otherwise. O(n_base² + n_cand)
 * string compares (a baseline holds tens of runs).
 */
pw_gate_numerics_result pw_gate_numerics_check(const char *const *base, size_t n_base,
                                               const char *const *cand, size_t n_cand);

/* The reason text of a mismatch: "numerics changed: faster but wrong". */
#define PW_GATE_NUMERICS_REASON "numerics changed: faster but wrong"

#endif
