/*
 * pw_classify.h: is the newest run of a series REGRESSED, IMPROVED or
 * UNCHANGED against its recent history? The LNT-style per-run verdict.
 *
 * The changepoint detector (pw_changepoint.h) localises level shifts once they
 * have persisted for a few points; this classifier answers the question LNT's
 * reports ask about every new run, and is built around that thread's failure
 * modes (docs/changepoints.md maps each rule to one): it compares the newest
 * run with a robust model of a lookback window (median and MAD_n of all
 * samples, the minimum distance to the nearest earlier sample or run), demands
 * a minimum relative effect, and errs towards false negatives. Medians, MADs
 * and Mann–Whitney come from pw_stats.h. Pure function of its inputs.
 */
#ifndef PW_CLASSIFY_H
#define PW_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "pw_status.h"

typedef enum pw_cls_verdict {
	PW_CLS_UNCHANGED = 0,
	PW_CLS_REGRESSED,
	PW_CLS_IMPROVED,
} pw_cls_verdict;

typedef struct pw_cls_params {
	bool higher_is_better; /* false: lower is better (latency, step time) */
	size_t lookback;       /* history runs before the newest considered; 20 */
	size_t min_history;    /* fewer history runs than this: the few-history rule; 5 */
	double min_effect;     /* |median change| / |history median| must reach this; 0.01 */
	size_t multi_min;      /* a run with >= this many samples is judged on its own; 3 */
	double alpha;          /* multi-sample: Mann–Whitney two-sided p <= alpha; 0.01 */
	size_t confirm;        /* sparse runs: newest runs that must all agree; 1 (the first) */
	double band_k;         /* sparse runs: each outside median ± band_k·σ_res; 6 */
	double near_k;         /* sparse runs: nearest earlier sample > near_k·σ_res away; 3 */
	/* Appended 2026-12 (issue 17). σ_res is the MAD_n of the history's
	 * residuals about its Theil–Sen line, so a trending history does not
	 * widen its own band. */
	double trend_k;        /* a trend over the window > trend_k·σ_res is a drift; 6 */
	double few_effect;     /* 1..min_history−1 earlier runs: |change| must reach this; 0.2 */
	double few_gap_k;      /* ...and lie beyond every earlier run by > few_gap_k × their range; 3 */
	double multi_band_k;   /* multi-sample: median beyond ± multi_band_k standard errors; 3 */
	/* A rare mode can be absent from the lookback window (an 80/20 mode is
	 * missing from 20 runs 1.2% of the time): runs before the window, up to
	 * mode_lookback runs back, show whether the newest level is one the
	 * series keeps returning to. */
	size_t mode_lookback;  /* runs searched for a known mode, window included; 60 (<= lookback: off) */
	size_t mode_min;       /* earlier visits to the newest level, alternating with the window's; 3 */
} pw_cls_params;

/* Fills p with the defaults above. */
void pw_cls_params_default(pw_cls_params *p);

/* One run: its samples (borrowed for the call). */
typedef struct pw_cls_run {
	const double *v;
	size_t n;
} pw_cls_run;

typedef struct pw_cls_result {
	pw_cls_verdict verdict;
	double delta_pct;    /* (median(newest) − median(history)) / |median(history)| × 100 */
	double p;            /* Mann–Whitney p for multi-sample runs, NaN otherwise */
	double hist_median;  /* median of the history's samples */
	double hist_noise;   /* MAD_n of the history's samples */
	size_t hist_runs;    /* history runs used */
	double hist_resid_noise; /* σ_res: MAD_n of residuals about the Theil–Sen line (sparse) */
	double trend_pct;    /* Theil–Sen slope × window length / |median| × 100 (sparse) */
	bool drift;          /* fired because the window trends and the newest run continues it */
	char reason[256];    /* one line, for humans */
} pw_cls_result;

/*
 * Classifies runs[nruns − 1] against the runs before it (oldest first).
 * params NULL means the defaults. Allocates one workspace per call (the
 * samples of the lookback window). PW_ERR_INSUFFICIENT when nruns == 0,
 * PW_ERR_INVALID on an empty run, a non-finite sample or bad params,
 * PW_ERR_NOMEM. Too little history is not an error: UNCHANGED, said so in
 * reason.
 */
pw_status pw_classify(const pw_cls_params *params, const pw_cls_run *runs, size_t nruns,
                      pw_cls_result *out, char *errbuf, size_t errlen);

/* "REGRESSED", "IMPROVED" or "UNCHANGED". */
const char *pw_cls_verdict_name(pw_cls_verdict v);

#endif
