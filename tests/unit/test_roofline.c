/*
 * test_roofline.c: the shared cost model (common/pw_roofline.c) on the
 * seed's worked example (§6.3), the numbers written out here from the seed:
 * chat-8b decode B64 s̄2048 int8 on v6e-4 (4 × 1.64 TB/s × 0.65 = 4.26 TB/s);
 * per layer 250 MB of weights → 59 µs and 269 MB of KV → 63 µs; the score
 * matrix's round trip 33.6 MB × 32 layers = 1.07 GB → +252 µs = +6.5% of
 * 3.90 ms. The config parser's cases moved here with the parser from the
 * attributor's tests.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "pw_roofline.h"

static const pw_roofline_platform v6e4 = {"v6e-4", 4, 1640, 0.65, 256, 918, 1836};
static const pw_roofline_platform nobw = {"x", 4, 0, 0.65, 0, 918, 1836};

Test(roofline, config_names_parse)
{
	pw_roofline_config c;
	cr_assert_eq(pw_roofline_config_parse("decode.B64.s2048.int8", &c), PW_OK);
	cr_assert(c.decode && c.batch == 64 && c.seq_len == 2048 && c.int8);
	cr_assert_eq(pw_roofline_config_parse("prefill.s8192.bf16", &c), PW_OK);
	cr_assert(!c.decode && c.batch == 1 && c.seq_len == 8192 && !c.int8);
	cr_assert_eq(pw_roofline_config_parse("decode.B64.int8", &c), PW_ERR_INVALID);
	cr_assert_eq(pw_roofline_config_parse("train.s10.bf16", &c), PW_ERR_INVALID);
	cr_assert_eq(pw_roofline_config_parse("decode.Bx.s10.bf16", &c), PW_ERR_INVALID);
	cr_assert_eq(pw_roofline_config_parse("", &c), PW_ERR_INVALID);
	cr_assert_eq(pw_roofline_config_parse(NULL, &c), PW_ERR_INVALID);
}

Test(roofline, worked_example_layer_times)
{
	pw_roofline_config c;
	cr_assert_eq(pw_roofline_config_parse("decode.B64.s2048.int8", &c), PW_OK);
	/* 4 × 1640 GB/s × 0.65 = 4,264 GB/s */
	cr_assert_float_eq(pw_roofline_bw_tb_s(&v6e4), 4.264, 1e-9);
	/* GEMM block: 250 MB of int8 weights, 2·P_layer·B FLOPs (P_layer = 250e6): memory-bound, 58.6 µs */
	double gemm = pw_roofline_op_us(&v6e4, &c, 250e6, 2.0 * 250e6 * 64);
	cr_assert_float_eq(gemm, 250e6 / 4.264e12 * 1e6, 1e-6);
	cr_assert(gemm > 58 && gemm < 60, "%f", gemm);
	/* fused attention: KV 2·H_kv·d·s̄·B = 268,435,456 B a layer, 4·H·d·s̄·B FLOPs → 63 µs */
	double kv = 2.0 * 8 * 128 * 2048 * 64, fl = 4.0 * 32 * 128 * 2048 * 64;
	double att = pw_roofline_op_us(&v6e4, &c, kv, fl);
	cr_assert(att > 62 && att < 64, "%f", att);
	/* the split: + B·H·s̄·4 B written and read again */
	double s = 64.0 * 32 * 2048 * 4;
	double after = pw_roofline_op_us(&v6e4, &c, kv + 2 * s, fl);
	double delta32 = (after - att) * 32;
	cr_assert(delta32 > 250 && delta32 < 254, "%f", delta32); /* seed: +252 µs */
	cr_assert_float_eq(pw_roofline_bytes_us(2 * s * 32, 4.264), delta32, 1e-6);
}

Test(roofline, compute_bound_op_hides_bytes)
{
	pw_roofline_config c;
	cr_assert_eq(pw_roofline_config_parse("prefill.s8192.bf16", &c), PW_OK);
	/* a prefill GEMM of 2·P·s FLOPs on 250 MB of weights: 4.1 TFLOP over 4 × 918 TFLOP/s = 1,115 µs */
	double fl = 2.0 * 250e6 * 8192;
	double t = pw_roofline_op_us(&v6e4, &c, 250e6, fl);
	cr_assert_float_eq(t, fl / (4 * 918e12) * 1e6, 1e-6);
	/* 12.5% more bytes do not move it: the bytes hide under MXU time */
	cr_assert_float_eq(pw_roofline_op_us(&v6e4, &c, 250e6 * 1.125, fl), t, 1e-9);
}

Test(roofline, unknown_facts_are_nan)
{
	pw_roofline_config c;
	cr_assert_eq(pw_roofline_config_parse("decode.B8.s512.bf16", &c), PW_OK);
	cr_assert(isnan(pw_roofline_op_us(&nobw, &c, 1e6, 1e6)));
	cr_assert(isnan(pw_roofline_op_us(NULL, &c, 1e6, 1e6)));
	cr_assert(isnan(pw_roofline_op_us(&v6e4, &c, -1, 1e6)));
	cr_assert(isnan(pw_roofline_op_us(&v6e4, &c, NAN, 1e6)));
	cr_assert(isnan(pw_roofline_bytes_us(1e6, 0)));
	double ai, ridge;
	cr_assert(!pw_roofline_intensity(&v6e4, &c, NAN, 0.5, &ai, &ridge));
	cr_assert(pw_roofline_intensity(&v6e4, &c, 0.1, 0.5, &ai, &ridge));
	/* ridge = 918e12 / 1640e9 = 559.8 FLOP/B; AI = 0.1·918e12 / (0.5·1640e9) = 111.95 */
	cr_assert_float_eq(ridge, 918e12 / 1640e9, 1e-9);
	cr_assert_float_eq(ai, 0.1 * 918e12 / (0.5 * 1640e9), 1e-9);
}

Test(roofline, sanity_bound)
{
	/* 3.90 ms predicted; a 2.0 ms measurement with the same HLO is impossible: the harness */
	cr_assert(pw_roofline_suspect_harness(2000, 3900, false, 0.8));
	cr_assert(!pw_roofline_suspect_harness(2000, 3900, true, 0.8));  /* the compiler changed the program */
	cr_assert(!pw_roofline_suspect_harness(3200, 3900, false, 0.8)); /* within the bound */
	cr_assert(!pw_roofline_suspect_harness(4220, 3900, false, 0.8)); /* slower: a regression, not this */
	cr_assert(!pw_roofline_suspect_harness(NAN, 3900, false, 0.8));
	cr_assert(!pw_roofline_suspect_harness(2000, 0, false, 0.8));
	cr_assert(!pw_roofline_suspect_harness(2000, 3900, false, 1.5));
}
