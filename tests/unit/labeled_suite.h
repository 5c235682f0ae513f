/*
 * labeled_suite.h: the labeled regression patterns (after the 40 "favourite
 * regression patterns" of the LNT thread), generated with fixed seeds, each
 * with the answer the changepoint detector and the classifier must give.
 *
 * test_labeled_suite.c runs them all; docs/changepoints.md explains every
 * label, in particular the ones that are decisions (drift, a step at the very
 * end, an unconfirmed single point). The generator is plain C with its own
 * PRNG so the same seed gives the same series on every machine.
 */
#ifndef PW_LABELED_SUITE_H
#define PW_LABELED_SUITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_classify.h"

#define LS_MAX_STEPS 4
#define LS_MAX_SPIKES 6

/* What the changepoint detector must report. */
typedef enum ls_cp_expect {
	LS_CP_EXACT = 0, /* exactly the listed changepoints (maybe none), each within tol */
	LS_CP_DRIFT,     /* at least one changepoint, every one in the drift's direction */
} ls_cp_expect;

typedef struct ls_spec {
	const char *name;
	uint64_t seed;
	size_t n;      /* runs */
	size_t spr;    /* samples per run */
	double sigma;  /* noise, in % of the base level 100 */
	struct {
		size_t at;
		double pct;
	} steps[LS_MAX_STEPS]; /* level += pct from run `at` on */
	size_t nsteps;
	size_t noise_at;      /* from this run the noise is sigma2 (0: never) */
	double sigma2;
	double bimodal_p;     /* probability a sample is in the upper mode */
	double bimodal_gap;   /* distance of the upper mode, % */
	size_t spikes[LS_MAX_SPIKES]; /* runs shifted by spike_pct (a bad run) */
	size_t nspikes;
	double spike_pct;
	double drift_pct;     /* linear change over the whole series, % */
	double quantum;       /* values rounded to multiples of this (0: not) */
	size_t tail_runs;     /* the newest tail_runs runs are shifted by tail_pct */
	double tail_pct;
	bool tail_upper_mode; /* bimodal: the tail runs are forced into the upper mode instead */
	double newest_outlier_pct; /* one sample of the newest run shifted by this */
	bool higher_is_better;
	/* expectations */
	ls_cp_expect cp_kind;
	size_t ncp;
	size_t cp_at[LS_MAX_STEPS];
	int cp_sign[LS_MAX_STEPS]; /* +1: level goes up, −1: down */
	size_t tol;
	pw_cls_verdict verdict;
	const char *why;
} ls_spec;

/* One generated case: spec plus its data (owned; ls_case_release frees). */
typedef struct ls_case {
	const ls_spec *spec;
	double *samples;   /* n × spr, run-major */
	double *series;    /* n: each run's median, what the watcher stores nightly */
} ls_case;

/* The table of specs and its length. */
const ls_spec *ls_specs(size_t *n);

/* Generates spec's data; 0 on success, -1 on allocation failure. */
int ls_case_generate(const ls_spec *spec, ls_case *out);
void ls_case_release(ls_case *c);

#endif
