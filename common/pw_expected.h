/*
 * pw_expected.h: observed − expected, the test of a registered change (§4
 * follow-up, §9): a compiler team registers the change a CL is meant to
 * make to a series (an expected delta, percent of the metric's value), and
 * the measured change is judged against the registration, not against zero.
 *
 * One definition for both consumers. The gate (services/gate/gate_eval.c)
 * takes a release candidate's runs; the watcher (services/watcher/watch.c)
 * takes the nightly points of builds that include the registered CL. Both
 * take the registered change out of those values (pw_expected_remove: x /
 * (1 + expected/100)), compare what is left with the baseline
 * (pw_stats_compare, the code behind `perfwatch compare`), and decide with
 * pw_expected_classify. docs/statistics.md §4 has the reasoning.
 */
#ifndef PW_EXPECTED_H
#define PW_EXPECTED_H

#include <stdbool.h>
#include <stddef.h>

#include "pw_stats.h"
#include "pw_status.h"

/*
 * x with a registered change of expected_pct taken out: x / (1 +
 * expected_pct/100). NaN when 1 + expected_pct/100 is not positive (a change
 * of −100% or less has no inverse).
 */
double pw_expected_remove(double x, double expected_pct);

/* Whether expected_pct can be taken out (1 + expected_pct/100 > 0, finite). */
bool pw_expected_valid(double expected_pct);

/* The two comparisons of a registered series. */
typedef struct pw_expected_result {
	pw_compare_result raw;     /* the candidate against the baseline, as measured */
	pw_compare_result against; /* the candidate with the registration taken out: observed − expected */
	double excess_pct;         /* against.effect_pct: what moved beyond the registration */
} pw_expected_result;

/*
 * Compares cand with base as measured, and again with expected_pct taken out
 * of cand (adj: n_cand doubles of scratch; work as pw_stats_compare's).
 * PW_ERR_INVALID when expected_pct cannot be taken out; pw_stats_compare's
 * errors otherwise.
 */
pw_status pw_expected_compare(const double *base, size_t n_base, const double *cand,
                              size_t n_cand, double expected_pct, const pw_compare_opts *opts,
                              double *work, double *adj, pw_expected_result *out);

/* What a registered change did. */
typedef enum pw_expected_outcome {
	PW_EXPECTED_WITHIN_NOISE = 0, /* nothing moved beyond noise, the registration included */
	PW_EXPECTED_VALIDATED,        /* moved as registered: a validated win */
	PW_EXPECTED_SHORTFALL,        /* fell short of the registration without getting worse */
	PW_EXPECTED_REGRESSED,        /* fell short and got worse: a regression */
	PW_EXPECTED_OVERSHOOT,        /* better than registered beyond the filter: investigate (§9) */
} pw_expected_outcome;

/* "within_noise", "validated", "shortfall", "regressed", "overshoot". */
const char *pw_expected_outcome_name(pw_expected_outcome o);

/*
 * The rule (the gate's, docs/gate.md "Series verdicts"), from:
 *   significant       observed − expected differs from zero (the gate: its
 *                     BH q below the FDR level; the watcher: the detector
 *                     placed a shift, or the comparison's p below its alpha)
 *   raw_above         the measured change passed the effect filter
 *   raw_worse_pct     the measured change, percent, > 0 the worse way
 *   excess_worse_pct  observed − expected, percent, > 0 the worse way
 *   threshold_pct     the effect filter's threshold, percent
 * Not significant: validated when the measured change passed the filter the
 * better way, else within noise. Significant and worse than registered: a
 * regression when the measured change itself passed the filter the worse
 * way, else a shortfall. Significant and better than registered: an
 * overshoot beyond the threshold, else validated.
 */
pw_expected_outcome pw_expected_classify(bool significant, bool raw_above, double raw_worse_pct,
                                         double excess_worse_pct, double threshold_pct);

#endif
