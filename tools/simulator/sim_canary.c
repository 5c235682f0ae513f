/*
 * sim_canary.c: the canary scenario's windows (sim_canary.h), each a function
 * of (params, seed, window) only.
 *
 * Every random quantity has its own generator, seeded from the run's seed and
 * the quantity's identity (stream name, arm, window or block), so that a
 * window can be made alone: the AR(1) noise is a truncated moving average of
 * per-window draws and a noisy-neighbour episode is found by looking back at
 * the windows that could have started one.
 */
#include "sim_canary.h"

#include <math.h>
#include <stddef.h>

#include "sim_rng.h"

void pw_sim_canary_params_init(pw_sim_canary_params *p, bool gpu)
{
	p->window_s = 300.0;
	p->start_hour = 9.0;
	p->tpot_ms = gpu ? 11.5 : 3.9; /* §6.3's chat-8b on v6e-4 decode; a GPU family's level */
	p->ttft_ms = gpu ? 310.0 : 180.0;
	p->goodput_tok_s_chip = gpu ? 2400.0 : 4100.0;
	p->load_amp = 0.35;
	p->load_peak_hour = 20.0;
	p->load_jitter = 0.02;
	p->tpot_load_slope = 0.30; /* batch occupancy: +30% TPOT from trough to peak */
	p->ttft_load_slope = 0.80; /* queueing */
	p->cache_block_h = 2.0;
	p->cache_lo = 0.30;
	p->cache_hi = 0.70;
	p->tpot_cache_slope = 0.05;
	p->ttft_cache_slope = 0.60;  /* a miss recomputes the prefix */
	p->sigma = gpu ? 0.02 : 0.006;
	p->ttft_sigma = gpu ? 0.04 : 0.015;
	p->sigma_load = 0.25;
	p->arm_ar = 0.0;
	p->contam_frac = 0.03;
	p->contam_mean_windows = 3.0;
	p->contam_min = 0.03;
	p->contam_shape = 1.5;
	p->tpot_regression = 0.0;
	p->ttft_regression = 0.0;
	p->arm_bias = 0.0;
}

enum { STREAM_LOAD = 1, STREAM_CACHE, STREAM_CACHE_PHASE, STREAM_NOISE, STREAM_CONTAM };

/* A generator for (seed, stream, a, b): one per drawn thing. */
static void stream_rng(pw_sim_rng *r, uint64_t seed, uint64_t stream, uint64_t a, uint64_t b)
{
	uint64_t h = pw_sim_hash_u64(PW_SIM_HASH_INIT, seed);
	h = pw_sim_hash_u64(h, stream);
	h = pw_sim_hash_u64(h, a);
	h = pw_sim_hash_u64(h, b);
	pw_sim_rng_init(r, h);
}

/* The standard normal drawn for (arm, metric) at window w (w may precede 0). */
static double arm_draw(uint64_t seed, int arm, int metric, int64_t w)
{
	pw_sim_rng r;
	stream_rng(&r, seed, STREAM_NOISE, (uint64_t)(arm * 16 + metric), (uint64_t)w);
	return pw_sim_rng_normal(&r);
}

/*
 * The arm's unit-variance noise at window w: independent draws, or with
 * φ = arm_ar an AR(1) process written as its moving average
 * √(1 − φ²)·Σ_j φ^j z_{w−j}, truncated where φ^j < 1e-4 and rescaled to unit
 * variance.
 */
static double arm_noise(const pw_sim_canary_params *p, uint64_t seed, int arm, int metric,
                        int64_t w)
{
	double phi = p->arm_ar;
	if (!(phi > 0.0))
		return arm_draw(seed, arm, metric, w);
	double sum = 0.0, weight = 1.0, norm = 0.0;
	for (int j = 0; j < 256 && weight >= 1e-4; j++) {
		sum += weight * arm_draw(seed, arm, metric, w - j);
		norm += weight * weight;
		weight *= phi;
	}
	return sum / sqrt(norm);
}

/*
 * The noisy neighbour's slowdown factor on an arm at window w (1 when none):
 * an episode may have started at any of the PW_SIM_CANARY_CONTAM_MAX windows
 * up to w; the worst covering w counts.
 */
static double contam_factor(const pw_sim_canary_params *p, uint64_t seed, int arm, int64_t w)
{
	double mean_len = p->contam_mean_windows < 1.0 ? 1.0 : p->contam_mean_windows;
	double start_p = p->contam_frac / mean_len;
	if (!(start_p > 0.0))
		return 1.0;
	double f = 1.0;
	for (int64_t s = w - PW_SIM_CANARY_CONTAM_MAX + 1; s <= w; s++) {
		pw_sim_rng r;
		stream_rng(&r, seed, STREAM_CONTAM, (uint64_t)arm, (uint64_t)s);
		if (pw_sim_rng_uniform(&r) >= start_p)
			continue;
		int64_t len = 1;
		if (mean_len > 1.0) {
			double u = 1.0 - pw_sim_rng_uniform(&r); /* (0, 1] */
			double extra = floor(log(u) / log(1.0 - 1.0 / mean_len));
			len = extra >= PW_SIM_CANARY_CONTAM_MAX ? PW_SIM_CANARY_CONTAM_MAX
			                                        : 1 + (int64_t)extra;
		}
		double u = 1.0 - pw_sim_rng_uniform(&r);
		double mag = 1.0 + p->contam_min * pow(u, -1.0 / p->contam_shape);
		if (mag > 4.0)
			mag = 4.0;
		if (s + len > w && mag > f)
			f = mag;
	}
	return f;
}

void pw_sim_canary_window_make(const pw_sim_canary_params *p, uint64_t seed, uint32_t index,
                               pw_sim_canary_window *out)
{
	pw_sim_rng r;
	double hours = (double)index * p->window_s / 3600.0;
	double hour_of_day = p->start_hour + hours;
	out->index = index;
	out->hour = hours;

	stream_rng(&r, seed, STREAM_LOAD, index, 0);
	double load = 0.5 + p->load_amp * cos(2.0 * M_PI * (hour_of_day - p->load_peak_hour) / 24.0) +
	              p->load_jitter * pw_sim_rng_normal(&r);
	load = load < 0.0 ? 0.0 : (load > 1.0 ? 1.0 : load);
	out->load = load;

	stream_rng(&r, seed, STREAM_CACHE_PHASE, 0, 0);
	double phase = pw_sim_rng_uniform(&r) * p->cache_block_h;
	uint64_t block = (uint64_t)floor((hours + phase) / p->cache_block_h);
	stream_rng(&r, seed, STREAM_CACHE, block, 0);
	double hit = p->cache_lo + (p->cache_hi - p->cache_lo) * pw_sim_rng_uniform(&r);
	out->cache_hit = hit;

	double tpot_level = p->tpot_ms * (1.0 + p->tpot_load_slope * (load - 0.5)) *
	                    (1.0 + p->tpot_cache_slope * (0.5 - hit));
	double ttft_level = p->ttft_ms * (1.0 + p->ttft_load_slope * (load - 0.5)) *
	                    (1.0 + p->ttft_cache_slope * (0.5 - hit));
	double noise_scale = 1.0 + 2.0 * p->sigma_load * (load - 0.5);
	for (int arm = 0; arm < 2; arm++) {
		double f = contam_factor(p, seed, arm, index);
		double tpot = tpot_level * f *
		              exp(p->sigma * noise_scale * arm_noise(p, seed, arm, 0, index));
		double ttft = ttft_level * f *
		              exp(p->ttft_sigma * noise_scale * arm_noise(p, seed, arm, 1, index));
		if (arm == PW_SIM_CANARY_CANARY) {
			tpot *= (1.0 + p->tpot_regression) * (1.0 + p->arm_bias);
			ttft *= (1.0 + p->ttft_regression) * (1.0 + p->arm_bias);
		}
		double goodput = p->goodput_tok_s_chip * (tpot_level / tpot) *
		                 exp(0.5 * p->sigma * arm_noise(p, seed, arm, 2, index));
		out->tpot_ms[arm] = tpot;
		out->ttft_ms[arm] = ttft;
		out->goodput_tok_s_chip[arm] = goodput;
		out->noisy[arm] = f > 1.0;
	}
}

const pw_sim_canary_family pw_sim_canary_scenario[PW_SIM_CANARY_FAMILIES] = {
	{"chat-8b", false, 0.01},
	{"summarize-13b", false, 0.0},
	{"chat-70b-gpu", true, 0.0},
};

void pw_sim_canary_scenario_params(size_t i, pw_sim_canary_params *p)
{
	pw_sim_canary_params_init(p, pw_sim_canary_scenario[i].gpu);
	p->tpot_regression = pw_sim_canary_scenario[i].tpot_regression;
}

uint64_t pw_sim_canary_scenario_seed(uint64_t seed, size_t i)
{
	return seed * 1000 + i;
}
