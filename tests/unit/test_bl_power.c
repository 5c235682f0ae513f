/*
 * test_bl_power.c: the power per tier the baseliner publishes with every
 * baseline (§4.5; services/baseliner/baseliner_store.c,
 * pw_baseline_record_power): the candidate runs a release needs on the
 * series to certify each tier's MDE at the series' own noise, from
 * pw_stats_required_n (common/pw_stats.h), and that they travel in the
 * Baseline message (perf.baselines.v1, the Redis cache) unchanged.
 * Expected n: scipy, 2·(norm.ppf(0.975) + norm.ppf(0.9))²·(σ/MDE)² rounded
 * up, floored at 5 (tests/unit/test_stats.c, required_n, quotes the values).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "baseliner_store.h"

static pw_baseline_record record(double sigma_pct, bool gpu, uint32_t version)
{
	pw_baseline_record r;
	memset(&r, 0, sizeof r);
	snprintf(r.series_key, sizeof r.series_key, "chat-8b/hlo:1/%s/decode.B64/tpot_p50_ms",
	         gpu ? "b200-8" : "v6e-4");
	r.series_id = 7;
	r.version = version;
	r.state = PW_BASELINE_ACTIVE;
	r.median = 3.9;
	r.sigma_pct = sigma_pct;
	r.gpu_class = gpu;
	pw_baseline_record_power(&r);
	return r;
}

Test(bl_power, required_n_per_tier_at_the_series_noise)
{
	/* TPU, σ 0.4%: 3.36 at 1%, 0.37 at 3%: the floor, 5, for both */
	pw_baseline_record r = record(0.4, false, 3);
	cr_assert_eq(r.mde_top_pct, 1.0);
	cr_assert_eq(r.mde_tail_pct, 3.0);
	cr_assert_eq(r.required_n_top, 5);
	cr_assert_eq(r.required_n_tail, 5);
	/* a noisier TPU series, σ 0.489%: 5.025 at 1% -> 6 */
	r = record(0.489, false, 3);
	cr_assert_eq(r.required_n_top, 6);
	cr_assert_eq(r.required_n_tail, 5);
	/* GPU, σ 2%: certified at 4% on both tiers, 5.25 -> 6 ("MDE 4% at n = 6") */
	r = record(2.0, true, 3);
	cr_assert_eq(r.mde_top_pct, 4.0);
	cr_assert_eq(r.mde_tail_pct, 4.0);
	cr_assert_eq(r.required_n_top, 6);
	cr_assert_eq(r.required_n_tail, 6);
	/* GPU, σ 2.2% (a p99 metric): 6.357 -> 7 */
	r = record(2.2, true, 3);
	cr_assert_eq(r.required_n_top, 7);
	/* no baseline yet (a freeze of a baselining series): nothing published */
	r = record(0.4, false, 0);
	cr_assert_eq(r.required_n_top, 0);
	cr_assert_eq(r.required_n_tail, 0);
}

Test(bl_power, published_with_the_baseline)
{
	pw_baseline_record r = record(2.0, true, 4), back;
	uint8_t *buf = NULL;
	size_t len = 0;
	cr_assert_eq(pw_baseline_record_pack(&r, &buf, &len), PW_OK);
	cr_assert_eq(pw_baseline_record_unpack(buf, len, &back), PW_OK);
	free(buf);
	cr_assert_eq(back.required_n_top, 6);
	cr_assert_eq(back.required_n_tail, 6);
	cr_assert_eq(back.mde_top_pct, 4.0);
	cr_assert_eq(back.mde_tail_pct, 4.0);
	cr_assert(back.gpu_class);
}
