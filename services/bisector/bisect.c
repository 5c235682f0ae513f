/*
 * bisect.c: the bisector's decisions (bisect.h): the event plan, the step
 * judgement with the statistics core (pw_stats Mann-Whitney and medians),
 * and the state machine from a range to a verified culprit.
 */
#include "bisect.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pw_stats.h"

void pw_bisect_config_init(pw_bisect_config *cfg)
{
	cfg->repeats = 3;
	cfg->endpoint_repeats = 5;
	cfg->max_repeats = 12;
	cfg->build_budget = 40;
	cfg->roll_budget = 24;
	cfg->alpha = 0.05;
	cfg->tolerance = 0.35;
	cfg->min_effect_pct = 1.0;
}

const char *pw_bisect_cl_name(int64_t cl, int64_t upstream_k, char *buf, size_t len)
{
	if (upstream_k >= 0)
		snprintf(buf, len, "cl/%lld@%lld", (long long)cl, (long long)upstream_k);
	else
		snprintf(buf, len, "cl/%lld", (long long)cl);
	return buf;
}

const char *pw_bisect_purpose_name(pw_bisect_purpose p)
{
	switch (p) {
	case PW_BISECT_STEP: return "step";
	case PW_BISECT_VERIFY_ADJACENT: return "verify_adjacent";
	case PW_BISECT_VERIFY_CHERRY_PICK: return "verify_cherry_pick";
	case PW_BISECT_PAIRWISE: return "pairwise";
	case PW_BISECT_ENDPOINT: return "endpoint";
	case PW_BISECT_ROLL_STEP: return "roll_step";
	}
	return "unspecified";
}

const char *pw_bisect_outcome_name(pw_bisect_outcome o)
{
	switch (o) {
	case PW_BISECT_PENDING: return "pending";
	case PW_BISECT_CLEAN: return "clean";
	case PW_BISECT_REGRESSED: return "regressed";
	case PW_BISECT_INCONCLUSIVE: return "inconclusive";
	}
	return "unspecified";
}

const char *pw_bisect_status_name(pw_bisect_status s)
{
	switch (s) {
	case PW_BISECT_RUNNING: return "running";
	case PW_BISECT_VERIFYING: return "verifying";
	case PW_BISECT_DONE: return "done";
	case PW_BISECT_ESCALATED_PAIRWISE: return "escalated_pairwise";
	case PW_BISECT_FAILED: return "failed";
	}
	return "unspecified";
}

const char *pw_bisect_confidence_name(pw_bisect_confidence c)
{
	switch (c) {
	case PW_BISECT_UNVERIFIED: return "unverified";
	case PW_BISECT_ADJACENT_ONLY: return "adjacent_only";
	case PW_BISECT_VERIFIED_BOTH_SIDES: return "verified_both_sides";
	case PW_BISECT_INTERACTION: return "interaction";
	}
	return "unspecified";
}

/* ---- judgement ------------------------------------------------------------ */

void pw_bisect_level(const double *x, size_t n, double *median, double *spread)
{
	double work[PW_BISECT_MAX_SAMPLES];
	double lo = x[0], hi = x[0];
	for (size_t i = 1; i < n; i++) {
		if (x[i] < lo)
			lo = x[i];
		if (x[i] > hi)
			hi = x[i];
	}
	*spread = (hi - lo) / 2;
	if (n > PW_BISECT_MAX_SAMPLES || pw_stats_median(x, n, work, median) != PW_OK)
		*median = (lo + hi) / 2; /* not reached: callers keep n <= the cap */
}

static double mwu_p(const double *x, size_t n, const double *y, size_t m)
{
	double work[4 * PW_BISECT_MAX_SAMPLES];
	pw_mwu_result r;
	if (pw_stats_mann_whitney(x, n, y, m, PW_ALT_TWO_SIDED, PW_MWU_AUTO, work, &r) != PW_OK)
		return 1.0;
	return r.p;
}

pw_bisect_outcome pw_bisect_judge(const double *x, size_t n, const double *clean, size_t nc,
                                  const double *regressed, size_t nr, double alpha,
                                  double tolerance, pw_bisect_verdict *out)
{
	double mx, sx, mc, sc, mr, sr;
	pw_bisect_level(x, n, &mx, &sx);
	pw_bisect_level(clean, nc, &mc, &sc);
	pw_bisect_level(regressed, nr, &mr, &sr);
	double pc = mwu_p(x, n, clean, nc), pr = mwu_p(x, n, regressed, nr);
	double pos = mr != mc ? (mx - mc) / (mr - mc) : NAN;
	pw_bisect_outcome o = PW_BISECT_INCONCLUSIVE;
	if (isfinite(pos)) {
		if (pr < alpha && fabs(pos) <= tolerance)
			o = PW_BISECT_CLEAN;
		else if (pc < alpha && fabs(pos - 1) <= tolerance)
			o = PW_BISECT_REGRESSED;
	}
	if (out) {
		out->outcome = o;
		out->median = mx;
		out->spread = sx;
		out->n = (uint32_t)n;
		out->p_clean = pc;
		out->p_regressed = pr;
	}
	return o;
}

/* ---- the event ------------------------------------------------------------ */

int pw_bisect_metric_rank(const char *metric)
{
	static const struct {
		const char *name;
		int rank;
	} ranks[] = {
		{"tpot_p50_ms", 0}, {"ttft_p50_ms", 0}, {"prefill_compute_ms", 0},
		{"goodput_tok_s_chip", 1}, {"tpot_p99_ms", 2}, {"ttft_p99_ms", 2},
		{"mfu", 3}, {"hbm_bw_util", 3}, {"cost_per_mtok_usd", 4},
	};
	for (size_t i = 0; metric && i < sizeof ranks / sizeof ranks[0]; i++)
		if (strcmp(metric, ranks[i].name) == 0)
			return ranks[i].rank;
	return 3;
}

double pw_bisect_score(double delta_abs, double noise)
{
	if (!isfinite(delta_abs) || isnan(noise))
		return 0;
	double s = noise > 0 ? fabs(delta_abs) / noise : (delta_abs != 0 ? PW_BISECT_SCORE_SATURATION : 0);
	return isfinite(s) && s < PW_BISECT_SCORE_SATURATION ? s : PW_BISECT_SCORE_SATURATION;
}

pw_status pw_bisect_event_plan(const pw_bisect_finding *f, size_t n, pw_bisect_event *out)
{
	if (n == 0)
		return PW_ERR_INVALID;
	size_t best = 0;
	double best_score = -1, best_pct = -1;
	int best_rank = 1 << 20;
	for (size_t i = 0; i < n; i++) {
		if (f[i].hi != f[0].hi || f[i].hi <= f[i].lo)
			return PW_ERR_INVALID;
		double s = pw_bisect_score(f[i].delta_abs, f[i].noise);
		double pct = isfinite(f[i].delta_pct) ? fabs(f[i].delta_pct) : 0;
		int rank = pw_bisect_metric_rank(f[i].metric);
		if (rank < best_rank || (rank == best_rank && (s > best_score || (s == best_score && pct > best_pct)))) {
			best_score = s;
			best_pct = pct;
			best_rank = rank;
			best = i;
		}
	}
	const pw_bisect_finding *t = &f[best];
	out->target = best;
	out->score = best_score;
	out->rank = best_rank;
	out->pct = best_pct;
	out->lo = t->lo;
	out->hi = t->hi;
	out->narrowed = false;
	if (t->cp_hi > t->cp_lo && t->cp_lo >= t->lo && t->cp_hi <= t->hi &&
	    (t->cp_lo > t->lo || t->cp_hi < t->hi)) {
		out->lo = t->cp_lo;
		out->hi = t->cp_hi;
		out->narrowed = true;
	}
	return PW_OK;
}

/* ---- the state machine ----------------------------------------------------- */

static const pw_bisect_cl *cl_find(const pw_bisect *b, int64_t cl)
{
	for (size_t i = 0; i < b->ncls; i++)
		if (b->cls[i].number == cl)
			return &b->cls[i];
	return NULL;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, c = *(const int64_t *)y;
	return (a > c) - (a < c);
}

/* The search list over (lo, hi]: flagged CLs (or every CL) then hi itself. */
static void list_build(pw_bisect *b, int64_t lo, int64_t hi, bool every)
{
	b->nlist = 0;
	if (every) {
		for (int64_t c = lo + 1; c <= hi && b->nlist < b->cap; c++)
			b->list[b->nlist++] = c;
	} else {
		for (size_t i = 0; i < b->nflagged; i++)
			if (b->flagged[i] > lo && b->flagged[i] < hi)
				b->list[b->nlist++] = b->flagged[i];
		b->list[b->nlist++] = hi;
	}
	b->a = -1;
	b->b = (long)b->nlist - 1;
}

pw_status pw_bisect_init(pw_bisect *b, const pw_bisect_config *cfg, int64_t lo, int64_t hi,
                         const pw_bisect_cl *cls, size_t ncls)
{
	memset(b, 0, sizeof *b);
	if (cfg)
		b->cfg = *cfg;
	else
		pw_bisect_config_init(&b->cfg);
	const pw_bisect_config *c = &b->cfg;
	if (hi <= lo || lo <= 0 || c->repeats < 1 || c->endpoint_repeats < 1 ||
	    c->max_repeats < c->repeats || c->max_repeats > PW_BISECT_MAX_SAMPLES / 2 ||
	    c->endpoint_repeats > PW_BISECT_MAX_SAMPLES / 2 || c->build_budget < 4 ||
	    !(c->alpha > 0 && c->alpha < 1) || !(c->tolerance > 0 && c->tolerance < 0.5) ||
	    !(c->min_effect_pct >= 0))
		return PW_ERR_INVALID;
	b->lo = lo;
	b->hi = hi;
	b->cls = cls;
	b->ncls = ncls;
	b->cap = (size_t)(hi - lo) + 1;
	b->list = malloc(b->cap * sizeof *b->list);
	b->flagged = malloc(b->cap * sizeof *b->flagged);
	if (!b->list || !b->flagged) {
		pw_bisect_release(b);
		return PW_ERR_NOMEM;
	}
	for (size_t i = 0; i < ncls; i++)
		if (cls[i].flagged && cls[i].number > lo && cls[i].number <= hi &&
		    b->nflagged < b->cap)
			b->flagged[b->nflagged++] = cls[i].number;
	qsort(b->flagged, b->nflagged, sizeof *b->flagged, cmp_i64);
	size_t k = 0; /* duplicates out */
	for (size_t i = 0; i < b->nflagged; i++)
		if (k == 0 || b->flagged[k - 1] != b->flagged[i])
			b->flagged[k++] = b->flagged[i];
	b->nflagged = k;
	list_build(b, lo, hi, false);
	b->phase = PW_BISECT_PH_ENDPOINTS;
	b->status = PW_BISECT_RUNNING;
	b->confidence = PW_BISECT_UNVERIFIED;
	b->culprit_upstream = -1;
	return PW_OK;
}

void pw_bisect_release(pw_bisect *b)
{
	if (!b)
		return;
	free(b->list);
	free(b->flagged);
	b->list = b->flagged = NULL;
	b->nlist = b->nflagged = b->cap = 0;
}

/* Pairs in search order: the candidate's pairs first, then the rest, (i < j). */
static bool pair_at(const pw_bisect *b, size_t idx, int64_t out[2])
{
	size_t m = b->nflagged < PW_BISECT_MAX_FLAGGED ? b->nflagged : PW_BISECT_MAX_FLAGGED;
	long ci = -1;
	for (size_t i = 0; i < m; i++)
		if (b->flagged[i] == b->culprit)
			ci = (long)i;
	size_t k = 0;
	if (ci >= 0)
		for (size_t i = 0; i < m; i++) {
			if ((long)i == ci)
				continue;
			if (k++ == idx) {
				out[0] = b->flagged[i < (size_t)ci ? i : (size_t)ci];
				out[1] = b->flagged[i < (size_t)ci ? (size_t)ci : i];
				return true;
			}
		}
	for (size_t i = 0; i < m; i++)
		for (size_t j = i + 1; j < m; j++) {
			if ((long)i == ci || (long)j == ci)
				continue;
			if (k++ == idx) {
				out[0] = b->flagged[i];
				out[1] = b->flagged[j];
				return true;
			}
		}
	return false;
}

static bool alone_clean(const pw_bisect *b, int64_t cl)
{
	for (size_t i = 0; i < b->nalone; i++)
		if (b->alone_clean[i] == cl)
			return true;
	return false;
}

static uint32_t budget_left(const pw_bisect *b)
{
	uint32_t used = b->builds - b->builds_roll;
	return used >= b->cfg.build_budget ? 0 : b->cfg.build_budget - used;
}

bool pw_bisect_next(const pw_bisect *b, pw_bisect_job *job)
{
	memset(job, 0, sizeof *job);
	job->step = b->steps;
	job->upstream_k = -1;
	job->repeats = b->cfg.repeats;
	switch (b->phase) {
	case PW_BISECT_PH_ENDPOINTS:
		job->purpose = PW_BISECT_ENDPOINT;
		job->cl = b->have_clean ? b->hi : b->lo;
		job->repeats = b->cfg.endpoint_repeats;
		break;
	case PW_BISECT_PH_SEARCH:
		job->purpose = PW_BISECT_STEP;
		job->cl = b->list[(b->a + b->b) / 2];
		break;
	case PW_BISECT_PH_VERIFY_ADJACENT:
		job->purpose = PW_BISECT_VERIFY_ADJACENT;
		job->cl = b->culprit - 1;
		break;
	case PW_BISECT_PH_VERIFY_PICK:
		job->purpose = PW_BISECT_VERIFY_CHERRY_PICK;
		job->base = b->lo;
		job->picks[0] = b->culprit;
		job->npicks = 1;
		break;
	case PW_BISECT_PH_PAIRWISE:
		job->purpose = PW_BISECT_PAIRWISE;
		job->base = b->lo;
		if (!pair_at(b, b->pair, job->picks))
			return false; /* not reached: apply ends the phase first */
		job->npicks = 2;
		break;
	case PW_BISECT_PH_PAIR_PARTNER:
		job->purpose = PW_BISECT_VERIFY_CHERRY_PICK;
		job->base = b->lo;
		job->picks[0] = alone_clean(b, b->pair_cls[0]) ? b->pair_cls[1] : b->pair_cls[0];
		job->npicks = 1;
		break;
	case PW_BISECT_PH_ROLL:
		job->purpose = PW_BISECT_ROLL_STEP;
		job->cl = b->culprit;
		job->upstream_k = (b->roll_a + b->roll_b) / 2;
		break;
	case PW_BISECT_PH_OVER:
		return false;
	}
	if (b->next_repeats) {
		job->repeats = b->next_repeats;
		job->rerun = true;
	}
	return true;
}

static void fail(pw_bisect *b, const char *fmt, const char *detail)
{
	b->phase = PW_BISECT_PH_OVER;
	b->status = PW_BISECT_FAILED;
	char both[3 * PW_BISECT_REASON_MAX];
	int k = snprintf(both, sizeof both, fmt, detail);
	if (k < 0)
		k = 0;
	size_t l = strlen(both);
	if (b->reason[0]) /* keep an earlier note after the reason */
		snprintf(both + l, sizeof both - l, "; %s", b->reason);
	l = strlen(both);
	if (l >= sizeof b->reason)
		l = sizeof b->reason - 1; /* truncated: the reason's cap */
	memcpy(b->reason, both, l);
	b->reason[l] = '\0';
}

void pw_bisect_give_up(pw_bisect *b, const char *why)
{
	if (b->phase == PW_BISECT_PH_OVER)
		return;
	fail(b, "%s", why ? why : "");
}

static void note(pw_bisect *b, const char *text)
{
	size_t l = strlen(b->reason);
	snprintf(b->reason + l, sizeof b->reason - l, "%s%s", l ? "; " : "", text);
}

/* Flagged CLs left in list(a, b], not counting a trailing unflagged hi. */
static uint32_t list_left(const pw_bisect *b)
{
	long n = b->b - b->a;
	if (!b->full_range && b->nlist && b->b == (long)b->nlist - 1) {
		const pw_bisect_cl *c = cl_find(b, b->list[b->b]);
		if (!c || !c->flagged)
			n--;
	}
	return n < 0 ? 0 : (uint32_t)n;
}

/* The search converged on list[b]: a culprit candidate, or nothing flagged reproduces. */
static void search_done(pw_bisect *b)
{
	int64_t clean_cl = b->a >= 0 ? b->list[b->a] : b->lo;
	int64_t cand = b->list[b->b];
	const pw_bisect_cl *c = cl_find(b, cand);
	if (!b->full_range && (!c || !c->flagged) && cand - clean_cl > 1) {
		char t[PW_BISECT_REASON_MAX];
		snprintf(t, sizeof t,
		         "no flagged CL reproduces in (cl/%lld, cl/%lld]: fell back to all %lld CLs",
		         (long long)clean_cl, (long long)cand, (long long)(cand - clean_cl));
		note(b, t);
		b->full_range = true;
		list_build(b, clean_cl, cand, true);
		b->b = (long)b->nlist - 1;
		if (b->nlist > 1)
			return; /* keep searching */
	}
	b->culprit = cand;
	b->status = PW_BISECT_VERIFYING;
	if (clean_cl == cand - 1) {
		/* culprit-1 was measured clean already (a step or the lo endpoint) */
		b->adjacent_clean = true;
		b->confidence = PW_BISECT_ADJACENT_ONLY;
		b->phase = PW_BISECT_PH_VERIFY_PICK;
	} else
		b->phase = PW_BISECT_PH_VERIFY_ADJACENT;
}

static void pick_done(pw_bisect *b)
{
	const pw_bisect_cl *c = cl_find(b, b->culprit);
	b->confidence = PW_BISECT_VERIFIED_BOTH_SIDES;
	if (c && c->upstream > 0) {
		b->phase = PW_BISECT_PH_ROLL;
		b->roll_a = 0;
		b->roll_b = (long)c->upstream;
		b->status = PW_BISECT_RUNNING;
		if (b->roll_b == 1) {
			b->culprit_upstream = 0;
			b->phase = PW_BISECT_PH_OVER;
			b->status = PW_BISECT_DONE;
		}
		return;
	}
	b->phase = PW_BISECT_PH_OVER;
	b->status = PW_BISECT_DONE;
}

static void count_build(pw_bisect *b, const pw_bisect_job *job)
{
	b->runs += job->repeats;
	if (job->rerun)
		return;
	b->builds++;
	switch (job->purpose) {
	case PW_BISECT_ENDPOINT:
	case PW_BISECT_STEP: b->builds_search++; break;
	case PW_BISECT_VERIFY_ADJACENT:
	case PW_BISECT_VERIFY_CHERRY_PICK: b->builds_verify++; break;
	case PW_BISECT_PAIRWISE: b->builds_pairwise++; break;
	case PW_BISECT_ROLL_STEP: b->builds_roll++; break;
	}
}

static bool job_equal(const pw_bisect_job *x, const pw_bisect_job *y)
{
	return x->step == y->step && x->purpose == y->purpose && x->cl == y->cl &&
	       x->upstream_k == y->upstream_k && x->base == y->base && x->npicks == y->npicks &&
	       x->picks[0] == y->picks[0] && x->picks[1] == y->picks[1] &&
	       x->repeats == y->repeats;
}

pw_status pw_bisect_apply(pw_bisect *b, const pw_bisect_job *job, const double *x, size_t n,
                          pw_bisect_verdict *out)
{
	pw_bisect_job due;
	if (!pw_bisect_next(b, &due) || !job_equal(&due, job) || n == 0 ||
	    n > PW_BISECT_MAX_SAMPLES / 2 || !pw_stats_all_finite(x, n))
		return PW_ERR_INVALID;
	pw_bisect_verdict v;
	memset(&v, 0, sizeof v);
	count_build(b, job);
	b->steps++;
	char name[48];
	bool ranged = false;

	if (b->phase == PW_BISECT_PH_ENDPOINTS) {
		double *dst = b->have_clean ? b->regressed : b->clean;
		memcpy(dst, x, n * sizeof *x);
		pw_bisect_level(x, n, &v.median, &v.spread);
		v.n = (uint32_t)n;
		v.outcome = b->have_clean ? PW_BISECT_REGRESSED : PW_BISECT_CLEAN;
		if (!b->have_clean) {
			b->nclean = n;
			b->have_clean = true;
			b->clean_level = v.median;
		} else {
			b->nregressed = n;
			b->have_regressed = true;
			b->regressed_level = v.median;
			double p = mwu_p(b->clean, b->nclean, b->regressed, b->nregressed);
			double eff = b->clean_level != 0
			                 ? 100 * fabs(b->regressed_level - b->clean_level) /
			                       fabs(b->clean_level)
			                 : 0;
			v.p_clean = p;
			if (!(p < b->cfg.alpha) || eff < b->cfg.min_effect_pct) {
				char d[PW_BISECT_REASON_MAX];
				snprintf(d, sizeof d,
				         "cl/%lld at %.4g and cl/%lld at %.4g (%.2f%%, Mann-Whitney p %.3g; "
				         "need p < %.3g and >= %.2f%%)",
				         (long long)b->lo, b->clean_level, (long long)b->hi,
				         b->regressed_level, eff, p, b->cfg.alpha, b->cfg.min_effect_pct);
				v.outcome = PW_BISECT_INCONCLUSIVE;
				fail(b, "range endpoints do not differ: %s", d);
			} else
				b->phase = PW_BISECT_PH_SEARCH;
		}
		goto done;
	}

	/* every other step is judged against the endpoints, accumulating re-runs */
	if (b->nacc + n > PW_BISECT_MAX_SAMPLES)
		return PW_ERR_INVALID; /* not reached: max_repeats <= half the cap */
	memcpy(b->acc + b->nacc, x, n * sizeof *x);
	b->nacc += n;
	pw_bisect_judge(b->acc, b->nacc, b->clean, b->nclean, b->regressed, b->nregressed,
	                b->cfg.alpha, b->cfg.tolerance, &v);
	if (v.outcome == PW_BISECT_INCONCLUSIVE) {
		uint32_t next = (uint32_t)b->nacc; /* doubling the total */
		if (b->nacc + next > b->cfg.max_repeats) {
			char d[PW_BISECT_REASON_MAX];
			snprintf(d, sizeof d, "%s %s (median %.4g between %.4g and %.4g after %zu runs)",
			         pw_bisect_purpose_name(job->purpose),
			         job->npicks ? "cherry-pick" : pw_bisect_cl_name(job->cl, job->upstream_k, name, sizeof name),
			         v.median, b->clean_level, b->regressed_level, b->nacc);
			fail(b, "inconclusive at the repeat bound: %s", d);
		} else
			b->next_repeats = next;
		goto done;
	}
	b->nacc = 0;
	b->next_repeats = 0;
	bool reg = v.outcome == PW_BISECT_REGRESSED;

	switch (b->phase) {
	case PW_BISECT_PH_SEARCH: {
		long k = (b->a + b->b) / 2;
		if (reg)
			b->b = k;
		else
			b->a = k;
		/* the log's "range → (lo, hi], n CLs" is the search's, also on its last step */
		v.range_lo = b->a >= 0 ? b->list[b->a] : b->lo;
		v.range_hi = b->list[b->b];
		v.range_n = list_left(b);
		ranged = true;
		if (b->b - b->a <= 1)
			search_done(b);
		break;
	}
	case PW_BISECT_PH_VERIFY_ADJACENT:
		if (!reg) {
			b->adjacent_clean = true;
			b->confidence = PW_BISECT_ADJACENT_ONLY;
			b->phase = PW_BISECT_PH_VERIFY_PICK;
		} else if (!b->full_range) {
			/* an unflagged CL before the candidate carries it: every CL of the gap */
			int64_t clean_cl = b->a >= 0 ? b->list[b->a] : b->lo;
			char t[PW_BISECT_REASON_MAX];
			snprintf(t, sizeof t,
			         "cl/%lld regressed before the flagged candidate cl/%lld: fell back to all "
			         "%lld CLs of (cl/%lld, cl/%lld]",
			         (long long)(b->culprit - 1), (long long)b->culprit,
			         (long long)(b->culprit - 1 - clean_cl), (long long)clean_cl,
			         (long long)(b->culprit - 1));
			note(b, t);
			b->full_range = true;
			list_build(b, clean_cl, b->culprit - 1, true);
			b->culprit = 0;
			b->status = PW_BISECT_RUNNING;
			b->phase = PW_BISECT_PH_SEARCH;
			if (b->nlist <= 1) /* the gap is one CL: it is the candidate */
				search_done(b);
		} else
			fail(b, "%s", "culprit-1 regressed after a search over every CL: the range's "
			              "measurements contradict each other");
		break;
	case PW_BISECT_PH_VERIFY_PICK:
		if (reg) {
			b->pick_reproduced = true;
			pick_done(b);
		} else {
			b->phase = PW_BISECT_PH_PAIRWISE;
			b->status = PW_BISECT_ESCALATED_PAIRWISE;
			b->pair = 0;
			b->alone_clean[0] = b->culprit;
			b->nalone = 1;
		}
		break;
	case PW_BISECT_PH_PAIRWISE:
		if (reg) {
			b->pair_cls[0] = job->picks[0];
			b->pair_cls[1] = job->picks[1];
			/* each CL of the pair not yet measured alone must be clean alone */
			b->phase = PW_BISECT_PH_PAIR_PARTNER;
		} else {
			b->pair++;
			int64_t pp[2];
			if (!pair_at(b, b->pair, pp)) {
				char d[64];
				snprintf(d, sizeof d, "cl/%lld", (long long)b->culprit);
				fail(b, "the candidate %s alone on the base does not reproduce and no pair of "
				        "the flagged CLs does",
				     d);
			}
		}
		break;
	case PW_BISECT_PH_PAIR_PARTNER:
		if (!reg) {
			if (b->nalone < 3)
				b->alone_clean[b->nalone++] = job->picks[0];
			if (alone_clean(b, b->pair_cls[0]) && alone_clean(b, b->pair_cls[1])) {
				b->confidence = PW_BISECT_INTERACTION;
				b->status = PW_BISECT_DONE;
				b->phase = PW_BISECT_PH_OVER;
				b->culprit = 0; /* neither CL is blamed alone */
			}
		} else {
			char d[64];
			snprintf(d, sizeof d, "cl/%lld", (long long)job->picks[0]);
			fail(b, "pair reproduced but its CL %s reproduces alone too, while the bisection "
			        "candidate does not",
			     d);
		}
		break;
	case PW_BISECT_PH_ROLL: {
		long k = (b->roll_a + b->roll_b) / 2;
		if (reg)
			b->roll_b = k;
		else
			b->roll_a = k;
		if (b->roll_b - b->roll_a <= 1) {
			b->culprit_upstream = b->roll_b - 1;
			b->phase = PW_BISECT_PH_OVER;
			b->status = PW_BISECT_DONE;
		}
		break;
	}
	case PW_BISECT_PH_ENDPOINTS:
	case PW_BISECT_PH_OVER:
		break;
	}

done:
	/* budgets: a bisection that still needs builds and has none left fails */
	if (b->phase != PW_BISECT_PH_OVER && !b->next_repeats) {
		if (b->phase == PW_BISECT_PH_ROLL) {
			if (b->builds_roll >= b->cfg.roll_budget) {
				b->phase = PW_BISECT_PH_OVER;
				b->status = PW_BISECT_DONE; /* the roll itself is verified */
				note(b, "roll lane budget exhausted: the upstream commit is not named");
			}
		} else if (budget_left(b) == 0) {
			char d[32];
			snprintf(d, sizeof d, "%u", b->cfg.build_budget);
			b->culprit = b->status == PW_BISECT_DONE ? b->culprit : 0;
			fail(b, "build budget of %s builds exhausted", d);
		}
	}
	if (ranged && b->phase != PW_BISECT_PH_SEARCH) {
		/* kept: the search step's own range */
	} else if (b->phase == PW_BISECT_PH_SEARCH || b->phase == PW_BISECT_PH_ENDPOINTS) {
		int64_t clean_cl = b->a >= 0 ? b->list[b->a] : b->lo;
		v.range_lo = b->phase == PW_BISECT_PH_SEARCH ? clean_cl : b->lo;
		v.range_hi = b->phase == PW_BISECT_PH_SEARCH ? b->list[b->b] : b->hi;
		v.range_n = b->phase == PW_BISECT_PH_SEARCH ? list_left(b) : (uint32_t)(b->hi - b->lo);
	} else if (b->phase == PW_BISECT_PH_ROLL) {
		v.range_lo = b->roll_a;
		v.range_hi = b->roll_b;
		v.range_n = (uint32_t)(b->roll_b - b->roll_a);
	} else if (b->culprit) {
		v.range_lo = b->culprit - 1;
		v.range_hi = b->culprit;
		v.range_n = 1;
	}
	if (b->status == PW_BISECT_FAILED && b->confidence != PW_BISECT_INTERACTION)
		b->culprit = 0; /* never a guessed culprit */
	if (out)
		*out = v;
	return PW_OK;
}
