/*
 * pw_roofline.h: the one cost model of perfwatch — platform facts, config
 * names, and the roofline over analytic bytes and FLOPs (seed §5 "pruning
 * with cost models", §6.3's consistency check).
 *
 * Two consumers, one implementation: the attributor sets added HBM bytes
 * against the achieved bandwidth and places a config against the platform's
 * ridge (services/attributor/attribute.c); the planner's pre-submit static
 * check times each op of a benchmark's HLO before and after a CL and calls
 * the CL perf-relevant for that benchmark when the step moves
 * (services/planner/plan.c). The sanity bound of §5 (a measurement far below
 * what the roofline allows, with no HLO change: suspect the harness) is here
 * too. Pure functions; nothing allocates.
 */
#ifndef PW_ROOFLINE_H
#define PW_ROOFLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "pw_status.h"

/* Platform facts (migration 0020 perfwatch.platforms). */
typedef struct pw_roofline_platform {
	const char *name;          /* "v6e-4" */
	uint32_t chips;
	double peak_hbm_gb_s_chip;
	double achieved_fraction;  /* measured share of peak HBM bandwidth, 0..1 */
	uint32_t mxu_lanes;        /* 0 for GPUs */
	double peak_tflops_bf16_chip, peak_tflops_int8_chip;
} pw_roofline_platform;

/* A config name parsed: "decode.B64.s2048.int8", "prefill.s8192.bf16". */
typedef struct pw_roofline_config {
	bool decode;               /* false: prefill */
	uint32_t batch;            /* 1 for prefill without B */
	uint32_t seq_len;
	bool int8;                 /* int8 or fp8 peak applies; else bf16 */
} pw_roofline_config;

/* PW_ERR_INVALID when name is not of that shape (phase, optional B, s, dtype). */
pw_status pw_roofline_config_parse(const char *name, pw_roofline_config *out);

/* Peak FLOP/s of one chip for the config's dtype. */
double pw_roofline_peak_flops(const pw_roofline_platform *p, const pw_roofline_config *c);

/* Achieved HBM bandwidth of the whole slice, TB/s: chips × peak × achieved fraction. */
double pw_roofline_bw_tb_s(const pw_roofline_platform *p);

/* Time to move `bytes` at bw_tb_s, µs; NaN when bw is not positive or bytes not finite. */
double pw_roofline_bytes_us(double bytes, double bw_tb_s);

/*
 * Arithmetic intensity and ridge, FLOP per HBM byte, from a run's MFU and
 * HBM utilisation (both ratios); false when anything needed is unknown.
 */
bool pw_roofline_intensity(const pw_roofline_platform *p, const pw_roofline_config *c, double mfu,
                           double hbm_util, double *ai, double *ridge);

/*
 * The roofline time of one op on the slice, µs: the larger of its bytes over
 * the achieved bandwidth and its FLOPs over the slice's peak for the
 * config's dtype (a memory-bound op is timed by its bytes, a compute-bound
 * one by its FLOPs; whatever the other costs hides under it). NaN when the
 * platform lacks bandwidth or peak facts or an input is negative.
 */
double pw_roofline_op_us(const pw_roofline_platform *p, const pw_roofline_config *c, double bytes,
                         double flops);

/*
 * §5's sanity bound: a measured step far below what the roofline allows
 * (measured < floor × predicted, floor in (0, 1], e.g. 0.8) with the
 * post-optimisation HLO unchanged means the harness skipped work, not that
 * the compiler won: true = suspect harness (infra-health). False when the
 * HLO changed (a real compiler decision), or an input is not finite/positive.
 */
bool pw_roofline_suspect_harness(double measured_us, double predicted_us, bool hlo_changed,
                                 double floor);

#endif
