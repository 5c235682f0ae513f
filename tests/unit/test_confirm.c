/*
 * test_confirm.c: the confirmation rerun's decision (common/pw_confirm.h)
 * against values worked out by hand: the worked example's +8.2% point
 * (3.90 -> 4.22 ms at z 20.5) and reruns that reproduce it or not, the
 * band's edges, even counts, the other side, NaN and degenerate inputs.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "pw_confirm.h"

#define EPS 1e-12

/* 3.90 ms, point 4.22 ms at z 20.5: σ = 0.32 / 20.5 = 0.0156097560975610,
 * k 5: band 3.90 ∓ 0.0780487804878049 = [3.8219512195121951, 3.9780487804878049] */
static pw_confirm_band worked(void)
{
	pw_confirm_band b;
	cr_assert_eq(pw_confirm_band_of(3.90, 4.22, 20.5, 0.02, 5.0, &b), PW_OK);
	return b;
}

Test(confirm, band_from_z)
{
	pw_confirm_band b = worked();
	cr_assert_float_eq(b.sigma, 0.0156097560975610, EPS);
	cr_assert_float_eq(b.lo, 3.8219512195121951, EPS);
	cr_assert_float_eq(b.hi, 3.9780487804878049, EPS);
	cr_assert_eq(b.side, 1);
}

Test(confirm, band_from_mad_when_z_is_zero)
{
	pw_confirm_band b;
	/* σ = mad 0.02: band [3.80, 4.00]; 3.70 is below it */
	cr_assert_eq(pw_confirm_band_of(3.90, 3.70, 0.0, 0.02, 5.0, &b), PW_OK);
	cr_assert_float_eq(b.lo, 3.80, EPS);
	cr_assert_float_eq(b.hi, 4.00, EPS);
	cr_assert_eq(b.side, -1);
}

Test(confirm, reproduced_regression)
{
	pw_confirm_band b = worked();
	double x[] = {4.21, 4.23, 4.19, 4.25, 4.22}, w[10];
	pw_confirm_result r;
	cr_assert_eq(pw_confirm_decide(&b, x, 5, true, w, &r), PW_OK);
	cr_assert_eq(r.n, 5);
	cr_assert_float_eq(r.median, 4.22, EPS); /* sorted 4.19 4.21 4.22 4.23 4.25 */
	cr_assert(r.reproduced);
	cr_assert(r.regression);
	/* the same shift on a higher-is-better metric is an improvement */
	cr_assert_eq(pw_confirm_decide(&b, x, 5, false, w, &r), PW_OK);
	cr_assert(r.reproduced);
	cr_assert_not(r.regression);
}

Test(confirm, one_slow_rerun_is_not_a_reproduction)
{
	pw_confirm_band b = worked();
	double x[] = {3.91, 3.89, 3.90, 4.30, 3.92}, w[10];
	pw_confirm_result r;
	cr_assert_eq(pw_confirm_decide(&b, x, 5, true, w, &r), PW_OK);
	cr_assert_float_eq(r.median, 3.91, EPS); /* sorted 3.89 3.90 3.91 3.92 4.30 */
	cr_assert_not(r.reproduced);
	cr_assert_not(r.regression);
}

Test(confirm, even_count_median_and_edges)
{
	pw_confirm_band b = worked();
	double w[8];
	pw_confirm_result r;
	/* (3.97 + 4.00) / 2 = 3.985 > 3.97805 */
	double x[] = {3.95, 4.00, 4.01, 3.97};
	cr_assert_eq(pw_confirm_decide(&b, x, 4, true, w, &r), PW_OK);
	cr_assert_float_eq(r.median, 3.985, EPS);
	cr_assert(r.reproduced);
	/* (3.95 + 3.97) / 2 = 3.96, inside */
	double y[] = {3.95, 3.96, 3.97, 3.94};
	cr_assert_eq(pw_confirm_decide(&b, y, 4, true, w, &r), PW_OK);
	cr_assert_float_eq(r.median, 3.955, EPS);
	cr_assert_not(r.reproduced);
	/* exactly on the edge is not beyond it */
	double e = b.hi;
	cr_assert_eq(pw_confirm_decide(&b, &e, 1, true, w, &r), PW_OK);
	cr_assert_not(r.reproduced);
}

Test(confirm, the_other_side_is_not_a_reproduction)
{
	pw_confirm_band b = worked();
	double x[] = {3.70, 3.71, 3.69}, w[6];
	pw_confirm_result r;
	cr_assert_eq(pw_confirm_decide(&b, x, 3, true, w, &r), PW_OK);
	cr_assert_not(r.reproduced);
	/* a point below the band: reruns below reproduce it (an improvement of a latency) */
	pw_confirm_band lo;
	cr_assert_eq(pw_confirm_band_of(3.90, 3.60, -19.2, 0.02, 5.0, &lo), PW_OK);
	cr_assert_eq(lo.side, -1);
	cr_assert_eq(pw_confirm_decide(&lo, x, 3, true, w, &r), PW_OK);
	cr_assert(r.reproduced);
	cr_assert_not(r.regression);
}

Test(confirm, nan_skipped_and_degenerate_inputs)
{
	pw_confirm_band b = worked();
	double x[] = {NAN, 4.20, INFINITY, 4.24, 4.22}, w[10];
	pw_confirm_result r;
	cr_assert_eq(pw_confirm_decide(&b, x, 5, true, w, &r), PW_OK);
	cr_assert_eq(r.n, 3);
	cr_assert_float_eq(r.median, 4.22, EPS);
	double none[] = {NAN, NAN};
	cr_assert_eq(pw_confirm_decide(&b, none, 2, true, w, &r), PW_ERR_INVALID);
	cr_assert_eq(pw_confirm_decide(&b, x, 0, true, w, &r), PW_ERR_INVALID);
	pw_confirm_band z;
	/* a point inside its band is no outlier */
	cr_assert_eq(pw_confirm_band_of(3.90, 3.95, 3.2, 0.02, 5.0, &z), PW_ERR_INVALID);
	cr_assert_eq(pw_confirm_band_of(3.90, 4.22, 0.0, 0.0, 5.0, &z), PW_ERR_INVALID);
	cr_assert_eq(pw_confirm_band_of(NAN, 4.22, 20.0, 0.02, 5.0, &z), PW_ERR_INVALID);
	cr_assert_eq(pw_confirm_band_of(3.90, 4.22, 20.0, 0.02, 0.0, &z), PW_ERR_INVALID);
	cr_assert_eq(pw_confirm_decide(&z, x, 5, true, w, &r), PW_ERR_INVALID);
}

/*
 * Where the outlier's level began. Expected splits computed independently
 * with exact rational arithmetic (Python fractions: every k's two-segment
 * sum of squared deviations, the minimum, the later k on a tie).
 */
Test(confirm, shift_start_from_the_best_single_split)
{
	/* the worked example's chat-8b B64 HBM utilisation, 2026-06-12..06-19 on
	 * the dev stack: −1.4% from 06-17, 06-18 back inside by noise, the
	 * outlier 06-19; costs by k 1..7: 2.186e-4 2.242e-4 1.688e-4 1.242e-4
	 * 7.877e-5 1.315e-4 8.883e-5 -> k 5 (06-17), not 7 (the one-day range) */
	const double hbm[] = {0.64905, 0.64550, 0.65239, 0.64901, 0.64750, 0.64061, 0.64412, 0.63396};
	cr_assert_eq(pw_confirm_shift_start(hbm, 8), 5);
	/* a lone outlier after a flat week: the previous nightly to this one
	 * (cost 0.001 at k 7, 0.0522 at k 6) */
	const double lone[] = {3.90, 3.91, 3.89, 3.90, 3.92, 3.88, 3.90, 4.22};
	cr_assert_eq(pw_confirm_shift_start(lone, 8), 7);
	/* a shift three nightlies old when the alert came (cost 0.0004 at k 4) */
	const double late[] = {3.90, 3.91, 3.89, 3.90, 4.21, 4.23, 4.22};
	cr_assert_eq(pw_confirm_shift_start(late, 7), 4);
	/* two points: the second is the new level; fewer: 0 */
	const double two[] = {1.0, 2.0};
	cr_assert_eq(pw_confirm_shift_start(two, 2), 1);
	cr_assert_eq(pw_confirm_shift_start(two, 1), 0);
	cr_assert_eq(pw_confirm_shift_start(two, 0), 0);
	/* all equal: every split costs 0, the later k wins (the one-day range) */
	const double flat[] = {5.0, 5.0, 5.0, 5.0};
	cr_assert_eq(pw_confirm_shift_start(flat, 4), 3);
}

/* The worked example's band [3.8219512195121951, 3.9780487804878049], σ 0.0156097560975610, k 5:
 * k·σ = 0.0780487804878049. A finding confirmed at 4.22 ms. */
Test(confirm, a_later_outlier_at_the_confirmed_level_joins_the_finding)
{
	pw_confirm_band b = worked();
	/* the next nightlies at the shifted level, either side of it */
	cr_assert(pw_confirm_joins_finding(&b, 4.22, 4.22));
	cr_assert(pw_confirm_joins_finding(&b, 4.25, 4.22));
	cr_assert(pw_confirm_joins_finding(&b, 4.19, 4.22));
	/* the edges: 4.22 ∓ 0.0780487804878049 */
	cr_assert(pw_confirm_joins_finding(&b, 4.29804878, 4.22));
	cr_assert_not(pw_confirm_joins_finding(&b, 4.2981, 4.22));
	cr_assert(pw_confirm_joins_finding(&b, 4.14195122, 4.22));
	cr_assert_not(pw_confirm_joins_finding(&b, 4.1419, 4.22));
}

Test(confirm, a_second_step_beyond_the_level_is_a_new_change)
{
	pw_confirm_band b = worked();
	/* a staircase: 3.90 -> 4.22 confirmed, then 4.55: 0.33 ms beyond the level (21 σ) */
	cr_assert_not(pw_confirm_joins_finding(&b, 4.55, 4.22));
}

Test(confirm, a_finding_the_baseline_has_moved_to_is_closed)
{
	/* the shift accepted: the baseline is 4.22 now (band 4.22 ∓ 0.078), a new outlier at 4.40
	 * above it; the finding's level 4.22 is inside the new band, so nothing is joined */
	pw_confirm_band b;
	cr_assert_eq(pw_confirm_band_of(4.22, 4.40, 0.18 / 0.0156097560975610, 0.02, 5.0, &b), PW_OK);
	cr_assert_not(pw_confirm_joins_finding(&b, 4.40, 4.22));
	cr_assert_not(pw_confirm_joins_finding(&b, 4.24, 4.22));
}

Test(confirm, a_finding_on_the_other_side_is_not_joined)
{
	/* an improvement to 3.60 was confirmed; the outlier at 4.22 is above the band */
	pw_confirm_band b = worked();
	cr_assert_not(pw_confirm_joins_finding(&b, 4.22, 3.60));
	/* and below: an outlier at 3.62 joins the 3.60 finding */
	pw_confirm_band lo;
	cr_assert_eq(pw_confirm_band_of(3.90, 3.62, -0.28 / 0.0156097560975610, 0.02, 5.0, &lo), PW_OK);
	cr_assert(pw_confirm_joins_finding(&lo, 3.62, 3.60));
	cr_assert_not(pw_confirm_joins_finding(&lo, 3.62, 4.22));
}

Test(confirm, joins_nothing_on_bad_values)
{
	pw_confirm_band b = worked();
	cr_assert_not(pw_confirm_joins_finding(&b, NAN, 4.22));
	cr_assert_not(pw_confirm_joins_finding(&b, 4.22, NAN));
	cr_assert_not(pw_confirm_joins_finding(&b, 4.22, INFINITY));
	cr_assert_not(pw_confirm_joins_finding(NULL, 4.22, 4.22));
	pw_confirm_band none = {0};
	cr_assert_not(pw_confirm_joins_finding(&none, 4.22, 4.22));
}
