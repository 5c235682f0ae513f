/*
 * sim_canary.h: the production canary's windows (§8 of the design) — a
 * canary arm on the new compiler release and a baseline arm on identical
 * traffic slices, one pair of window medians (TPOT, TTFT, goodput) every
 * window — as a plain function of the parameters, a seed and the window's
 * index.
 *
 * It is the model the canary's statistics are measured on
 * (bench/bench_canary.c, docs/canary.md §7) and the one pw-sim will publish
 * for a canary scenario. Like the rest of the simulator (sim_model.h) it never
 * calls rand() or reads the clock: every draw comes from a pw_sim_rng seeded
 * by hashing the seed with what is drawn (the window, the arm, the metric), so
 * window w's numbers do not depend on which windows were generated before it.
 *
 * The model, per window w and arm a (baseline or canary), all relative
 * effects multiplicative:
 * - diurnal load in [0, 1]: 0.5 + load_amp·cos(2π(hour − load_peak_hour)/24)
 *   plus a shared jitter, shared by both arms (same slices);
 * - the prefix-cache hit rate: a new level, uniform in [cache_lo, cache_hi],
 *   every cache_block_h hours, shared by both arms;
 * - level = tpot_ms·(1 + tpot_load_slope·(load − ½))·(1 + tpot_cache_slope·(½ − hit))
 *   (TTFT likewise with its own slopes: queueing and prefill recomputation);
 * - per-arm noise exp(σ_w·z), σ_w = sigma·(1 + 2·sigma_load·(load − ½)), so
 *   the peak is noisier; with arm_ar > 0 the arm's noise is AR(1) over windows
 *   (a replica's slowness persisting), else independent;
 * - a noisy neighbour: episodes on one arm, starting so that a fraction
 *   contam_frac of (window, arm) cells is hit, lasting contam_mean_windows on
 *   average (geometric, at most PW_SIM_CANARY_CONTAM_MAX windows), slowing the
 *   arm by a Pareto factor 1 + contam_min·U^(−1/contam_shape) (capped at 4×);
 * - the release's effect on the canary arm: TPOT × (1 + tpot_regression),
 *   TTFT × (1 + ttft_regression), and arm_bias, a persistent offset of the
 *   canary's replicas that the release did not cause (an unlucky chip set);
 * - goodput = goodput_tok_s_chip × (level TPOT / the arm's TPOT) × a small
 *   noise of its own: it falls as the arm's TPOT rises.
 */
#ifndef PW_SIM_CANARY_H
#define PW_SIM_CANARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PW_SIM_CANARY_BASELINE 0
#define PW_SIM_CANARY_CANARY 1
#define PW_SIM_CANARY_CONTAM_MAX 16

typedef struct pw_sim_canary_params {
	double window_s;       /* window length, seconds (300) */
	double start_hour;     /* local hour at the start of window 0 (9) */
	double tpot_ms, ttft_ms, goodput_tok_s_chip; /* levels at load ½, hit rate ½ */
	double load_amp, load_peak_hour, load_jitter;
	double tpot_load_slope, ttft_load_slope;
	double cache_block_h, cache_lo, cache_hi;
	double tpot_cache_slope, ttft_cache_slope;
	double sigma;          /* per-arm window noise of TPOT (log scale) at load ½ */
	double ttft_sigma;     /* the same for TTFT */
	double sigma_load;     /* heteroscedasticity: σ × (1 + 2·sigma_load·(load − ½)) */
	double arm_ar;         /* AR(1) coefficient of an arm's noise over windows, [0, 1) */
	double contam_frac, contam_mean_windows, contam_min, contam_shape;
	double tpot_regression, ttft_regression; /* the release's effect on the canary */
	double arm_bias;       /* persistent canary offset not caused by the release */
} pw_sim_canary_params;

/*
 * The defaults of a TPU family (gpu = false: σ 0.6% a window and arm, see
 * docs/canary.md §7 for why) or a GPU family (σ 2%), no regression, 3% of
 * cells hit by a noisy neighbour in episodes of 3 windows on average.
 */
void pw_sim_canary_params_init(pw_sim_canary_params *p, bool gpu);

typedef struct pw_sim_canary_window {
	uint32_t index;
	double hour;      /* hours since the start of window 0 */
	double load;      /* shared diurnal load, [0, 1] */
	double cache_hit; /* shared prefix-cache hit rate */
	double tpot_ms[2], ttft_ms[2], goodput_tok_s_chip[2]; /* [BASELINE], [CANARY] */
	bool noisy[2];    /* the arm was hit by a noisy neighbour in this window */
} pw_sim_canary_window;

/* Window `index` of the canary run `seed` under p. Pure: the same inputs, the same bits. */
void pw_sim_canary_window_make(const pw_sim_canary_params *p, uint64_t seed, uint32_t index,
                               pw_sim_canary_window *out);

/*
 * The canary scenario pw-sim canary publishes (docs/canary.md §8), its
 * benchmark (bench/bench_canary_service.c) and tests/unit/test_canary.c
 * run: a release rolling from xla-rc-2026-06-15 to xla-rc-2026-06-22 on
 * three families — chat-8b on TPU with +1% TPOT injected on the canary arm,
 * summarize-13b on TPU and chat-70b-gpu on GPU without — each from its own
 * seed, seed·1000 + its index.
 */
#define PW_SIM_CANARY_FAMILIES 3
#define PW_SIM_CANARY_RELEASE "xla-rc-2026-06-22"
#define PW_SIM_CANARY_PREVIOUS "xla-rc-2026-06-15"

typedef struct pw_sim_canary_family {
	const char *family;
	bool gpu;
	double tpot_regression;
} pw_sim_canary_family;

extern const pw_sim_canary_family pw_sim_canary_scenario[PW_SIM_CANARY_FAMILIES];

/* Family i's parameters: the kind's defaults with its regression. */
void pw_sim_canary_scenario_params(size_t i, pw_sim_canary_params *p);
/* Family i's seed in the run `seed`. */
uint64_t pw_sim_canary_scenario_seed(uint64_t seed, size_t i);

#endif
