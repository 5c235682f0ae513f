/*
 * test_labeled_suite.c: runs every labeled pattern of labeled_suite.c through
 * the default changepoint detector and the default classifier and requires
 * every answer to be as labeled; prints the score.
 *
 * The detector sees the series of run medians (what the watcher stores each
 * night); the classifier sees the runs themselves. A case counts as labeled
 * only when both answers are right. A second test holds E-divisive to the same
 * changepoint labels. The first also holds the findings `perfwatch
 * changepoints` prints (the steps pw_drift_decide keeps, and a drift) to them.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pw_changepoint.h"
#include "pw_classify.h"
#include "pw_drift.h"

/* The unit-test build compiles one file per test; the generator comes in here. */
#include "labeled_suite.c"

#define MAX_CPS 64

static bool cps_as_labeled(const ls_spec *sp, const pw_changepoint *cps, size_t k, char *why,
                           size_t len)
{
	if (sp->cp_kind == LS_CP_DRIFT) {
		if (k == 0) {
			snprintf(why, len, "drift: no changepoint reported");
			return false;
		}
		for (size_t j = 0; j < k; j++)
			if ((cps[j].after > cps[j].before ? 1 : -1) != sp->cp_sign[0]) {
				snprintf(why, len, "drift: changepoint at %zu goes the wrong way", cps[j].index);
				return false;
			}
		return true;
	}
	if (k != sp->ncp) {
		snprintf(why, len, "%zu changepoint(s), expected %zu%s", k, sp->ncp,
		         k ? " (first at" : "");
		if (k) {
			size_t used = strlen(why);
			for (size_t j = 0; j < k && used + 24 < len; j++)
				used += (size_t)snprintf(why + used, len - used, " %zu:%+.2f%%", cps[j].index,
				                         100.0 * cps[j].rel_change);
			snprintf(why + used, len - used, ")");
		}
		return false;
	}
	for (size_t j = 0; j < k; j++) {
		size_t want = sp->cp_at[j], got = cps[j].index;
		size_t dist = got > want ? got - want : want - got;
		int sign = cps[j].after > cps[j].before ? 1 : -1;
		if (dist > sp->tol || sign != sp->cp_sign[j]) {
			snprintf(why, len, "changepoint %zu at %zu (%+.2f%%), expected %zu±%zu sign %d", j,
			         got, 100.0 * cps[j].rel_change, want, sp->tol, sp->cp_sign[j]);
			return false;
		}
	}
	return true;
}

/*
 * The findings after the step-or-drift decision (pw_drift_decide, what
 * `perfwatch changepoints` prints) for the detector's answer cps[0..k):
 * every pattern labeled with steps keeps exactly its labeled steps and shows
 * no drift; the drift patterns are at most one finding, a drift in the
 * labeled direction (slow_drift_tiny, below any minimum effect, may show
 * nothing; the detector's labels accept it too).
 */
static bool findings_as_labeled(const ls_spec *sp, const double *series, const pw_changepoint *cps,
                                size_t k, char *why, size_t len)
{
	pw_changepoint kept[MAX_CPS];
	bool keep[MAX_CPS];
	size_t nk = 0;
	pw_drift d;
	cr_assert_eq(pw_drift_decide(series, sp->n, cps, k, NULL, &d, keep), PW_OK);
	for (size_t j = 0; j < k; j++)
		if (keep[j])
			kept[nk++] = cps[j];
	if (sp->cp_kind == LS_CP_DRIFT) {
		snprintf(why, len, "drift found %d (%+.2f%%), %zu steps kept", d.found, d.total_pct, nk);
		return nk == 0 && (!d.found || (d.rate > 0.0 ? 1 : -1) == sp->cp_sign[0]);
	}
	if (d.found) {
		snprintf(why, len, "a drift of %+.2f%% from %zu", d.total_pct, d.start);
		return false;
	}
	return cps_as_labeled(sp, kept, nk, why, len);
}

Test(labeled_suite, every_pattern_as_labeled)
{
	size_t nspecs;
	const ls_spec *specs = ls_specs(&nspecs);
	cr_assert_geq(nspecs, 40, "the suite must hold at least 40 patterns");

	pw_cp_detector *det = NULL;
	char err[256];
	cr_assert_eq(pw_cp_detector_new(NULL, 1000, &det, err, sizeof err), PW_OK, "%s", err);
	pw_changepoint cps[MAX_CPS];
	size_t ok = 0, findings_ok = 0;
	for (size_t i = 0; i < nspecs; i++) {
		const ls_spec *sp = &specs[i];
		ls_case c;
		cr_assert_eq(ls_case_generate(sp, &c), 0);

		size_t k = 0;
		cr_assert_eq(pw_cp_detect(det, c.series, sp->n, cps, MAX_CPS, &k, err, sizeof err),
		             PW_OK, "%s: %s", sp->name, err);
		char why[512] = "";
		bool cp_ok = cps_as_labeled(sp, cps, k < MAX_CPS ? k : MAX_CPS, why, sizeof why);
		char fwhy[512] = "";
		if (findings_as_labeled(sp, c.series, cps, k < MAX_CPS ? k : MAX_CPS, fwhy, sizeof fwhy))
			findings_ok++;
		else
			fprintf(stderr, "labeled suite (findings): %s: %s\n", sp->name, fwhy);

		pw_cls_run *runs = malloc(sp->n * sizeof *runs);
		cr_assert_not_null(runs);
		for (size_t r = 0; r < sp->n; r++) {
			runs[r].v = c.samples + r * sp->spr;
			runs[r].n = sp->spr;
		}
		pw_cls_params cp;
		pw_cls_params_default(&cp);
		cp.higher_is_better = sp->higher_is_better;
		pw_cls_result res;
		cr_assert_eq(pw_classify(&cp, runs, sp->n, &res, err, sizeof err), PW_OK, "%s: %s",
		             sp->name, err);
		bool cls_ok = res.verdict == sp->verdict;
		free(runs);
		ls_case_release(&c);

		if (cp_ok && cls_ok) {
			ok++;
			continue;
		}
		if (!cp_ok)
			fprintf(stderr, "labeled suite: %s: changepoints: %s\n", sp->name, why);
		if (!cls_ok)
			fprintf(stderr, "labeled suite: %s: classify: %s, expected %s (%s)\n", sp->name,
			        pw_cls_verdict_name(res.verdict), pw_cls_verdict_name(sp->verdict),
			        res.reason);
	}
	pw_cp_detector_free(det);
	printf("labeled suite: %zu/%zu as labeled\n", ok, nspecs);
	printf("labeled suite (findings): %zu/%zu as labeled\n", findings_ok, nspecs);
	fflush(stdout);
	cr_assert_eq(ok, nspecs, "labeled suite: %zu/%zu as labeled", ok, nspecs);
	cr_assert_eq(findings_ok, nspecs, "labeled suite (findings): %zu/%zu as labeled", findings_ok,
	             nspecs);
}

/*
 * The same changepoint labels for E-divisive (199 permutations, fixed seed)
 * behind the same level-shift filter: the two detectors must agree on every
 * pattern, so choosing either does not change what the watcher reports.
 */
Test(labeled_suite, edivisive_changepoints_as_labeled, .timeout = 120)
{
	size_t nspecs;
	const ls_spec *specs = ls_specs(&nspecs);
	pw_cp_params p;
	pw_cp_params_default(&p);
	p.method = PW_CP_EDIVISIVE;
	pw_cp_detector *det = NULL;
	char err[256];
	cr_assert_eq(pw_cp_detector_new(&p, 1000, &det, err, sizeof err), PW_OK, "%s", err);
	pw_changepoint cps[MAX_CPS];
	size_t ok = 0;
	for (size_t i = 0; i < nspecs; i++) {
		const ls_spec *sp = &specs[i];
		ls_case c;
		cr_assert_eq(ls_case_generate(sp, &c), 0);
		size_t k = 0;
		cr_assert_eq(pw_cp_detect(det, c.series, sp->n, cps, MAX_CPS, &k, err, sizeof err),
		             PW_OK, "%s: %s", sp->name, err);
		char why[512] = "";
		if (cps_as_labeled(sp, cps, k < MAX_CPS ? k : MAX_CPS, why, sizeof why))
			ok++;
		else
			fprintf(stderr, "labeled suite (E-divisive): %s: %s\n", sp->name, why);
		ls_case_release(&c);
	}
	pw_cp_detector_free(det);
	printf("labeled suite (E-divisive): %zu/%zu changepoints as labeled\n", ok, nspecs);
	fflush(stdout);
	cr_assert_eq(ok, nspecs, "labeled suite (E-divisive): %zu/%zu as labeled", ok, nspecs);
}
