/*
 * test_baseline_cache.c: the baseline record and the cache's decision
 * (common/pw_baseline.h, pw_baseline_cache.h) without a server.
 *
 * The cache-aside reader serves a Redis entry only when its cache version is
 * at least the current one: a stale entry (an older version, or the active
 * state of a version that has since been frozen in place) is never a hit,
 * whatever else Redis says. The reads against real servers, the stale entry
 * put there on purpose and Redis stopped, are tests/integration/
 * test_baseline_cache.sh.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "pw_baseline_cache.h"

Test(baseline_cache, versions_order_states_of_one_version_and_versions)
{
	cr_assert_eq(pw_baseline_cache_version_of(0, PW_BASELINE_ACTIVE), 0, "no baseline");
	uint64_t v7a = pw_baseline_cache_version_of(7, PW_BASELINE_ACTIVE);
	uint64_t v7q = pw_baseline_cache_version_of(7, PW_BASELINE_QUARANTINED);
	uint64_t v7f = pw_baseline_cache_version_of(7, PW_BASELINE_FROZEN);
	uint64_t v8a = pw_baseline_cache_version_of(8, PW_BASELINE_ACTIVE);
	cr_assert_eq(v7a, v7q, "a version is created active or quarantined, never both");
	cr_assert_gt(v7f, v7a, "a freeze in place replaces the active state of its version");
	cr_assert_gt(v8a, v7f, "the next version replaces a frozen one");
	uint64_t enc = (uint64_t)PW_BASELINE_CACHE_ENCODING << PW_BASELINE_CACHE_ENCODING_SHIFT;
	cr_assert_eq(v7a, enc + 29);
	cr_assert_eq(v7f, enc + 30);
}

Test(baseline_cache, an_entry_cached_without_the_required_n_is_never_served)
{
	/* an entry put before the power fields (migration 0044) were cached had
	 * cache version version·4 + 1 (+ 2 frozen): served as a hit, it would give
	 * the gate a required n of 0 where PostgreSQL holds the published one */
	for (uint32_t v = 1; v <= 1000; v += 37) {
		uint64_t old_active = (uint64_t)v * 4u + 1u, old_frozen = (uint64_t)v * 4u + 2u;
		for (int s = 0; s < 4; s++) {
			uint64_t cur = pw_baseline_cache_version_of(v, (pw_baseline_state)s);
			cr_assert_eq(pw_baseline_cache_judge(true, true, true, old_active, cur),
			             PW_BASELINE_STALE, "v%u: the old active entry", v);
			cr_assert_eq(pw_baseline_cache_judge(true, true, true, old_frozen, cur),
			             PW_BASELINE_STALE, "v%u: the old frozen entry", v);
		}
	}
	/* the largest version of the old encoding is still older than version 1 */
	cr_assert_lt((uint64_t)UINT32_MAX * 4u + 2u,
	             pw_baseline_cache_version_of(1, PW_BASELINE_ACTIVE));
}

Test(baseline_cache, judge_never_serves_an_older_entry)
{
	uint64_t cur = pw_baseline_cache_version_of(12, PW_BASELINE_ACTIVE);
	for (uint32_t v = 1; v <= 20; v++)
		for (int s = 0; s < 4; s++) {
			uint64_t cv = pw_baseline_cache_version_of(v, (pw_baseline_state)s);
			pw_baseline_outcome o = pw_baseline_cache_judge(true, true, true, cv, cur);
			cr_assert_eq(o == PW_BASELINE_HIT, cv >= cur, "v%u state %d: %s", v, s,
			             pw_baseline_outcome_name(o));
			if (cv < cur)
				cr_assert_eq(o, PW_BASELINE_STALE);
		}
	/* the active entry of a version frozen since */
	cr_assert_eq(pw_baseline_cache_judge(true, true, true,
	                                     pw_baseline_cache_version_of(12, PW_BASELINE_ACTIVE),
	                                     pw_baseline_cache_version_of(12, PW_BASELINE_FROZEN)),
	             PW_BASELINE_STALE);
	/* a series PostgreSQL holds no baseline of: nothing cached is ever served */
	cr_assert_eq(pw_baseline_cache_judge(true, true, true, 99, 0), PW_BASELINE_STALE);
}

Test(baseline_cache, judge_outcomes_without_an_entry)
{
	cr_assert_eq(pw_baseline_cache_judge(false, false, false, 0, 5), PW_BASELINE_UNCACHED);
	cr_assert_eq(pw_baseline_cache_judge(true, false, false, 0, 5), PW_BASELINE_FALLBACK);
	cr_assert_eq(pw_baseline_cache_judge(true, true, false, 0, 5), PW_BASELINE_MISS);
	cr_assert_str_eq(pw_baseline_outcome_name(PW_BASELINE_HIT), "hit");
	cr_assert_str_eq(pw_baseline_outcome_name(PW_BASELINE_MISS), "miss");
	cr_assert_str_eq(pw_baseline_outcome_name(PW_BASELINE_STALE), "stale");
	cr_assert_str_eq(pw_baseline_outcome_name(PW_BASELINE_FALLBACK), "fallback");
	cr_assert_str_eq(pw_baseline_outcome_name(PW_BASELINE_UNCACHED), "uncached");
}

Test(baseline_cache, record_round_trips_through_its_wire_form)
{
	pw_baseline_record r, back;
	memset(&r, 0, sizeof r);
	r.series_id = 4242;
	snprintf(r.series_key, sizeof r.series_key, "chat-8b/hlo:a1/v6e-4/decode.B64/tpot_p50_ms");
	r.version = 17;
	r.state = PW_BASELINE_FROZEN;
	r.median = 3.9;
	r.mad_n = 0.0162;
	r.band_lo = 3.85;
	r.band_hi = 3.95;
	r.sigma = 0.0162;
	r.sigma_pct = 0.415;
	r.platform_norm_sigma_pct = 0.4;
	r.n = 30;
	r.days = 35;
	r.chip_sets = 3;
	r.window_start_us = 1778544000000000;
	r.window_end_us = 1781568000000000;
	snprintf(r.unit, sizeof r.unit, "ms");
	snprintf(r.build_id, sizeof r.build_id, "xla-nightly-2026-06-16");
	snprintf(r.freeze_reason, sizeof r.freeze_reason, "recabling: row 7");
	snprintf(r.freeze_event_id, sizeof r.freeze_event_id, "fc-2026-06-03-0007");
	r.computed_us = 1781568000123456;
	r.required_n_top = 37;
	r.required_n_tail = 9;
	r.mde_top_pct = 1.0;
	r.mde_tail_pct = 3.0;
	r.gpu_class = true;
	uint8_t *buf = NULL;
	size_t len = 0;
	cr_assert_eq(pw_baseline_record_pack(&r, &buf, &len), PW_OK);
	cr_assert_eq(pw_baseline_record_unpack(buf, len, &back), PW_OK);
	free(buf);
	cr_assert_eq(memcmp(&r, &back, sizeof r), 0, "every field comes back");
	cr_assert_eq(back.required_n_top, 37, "the required n is cached with the baseline");
	cr_assert_eq(back.required_n_tail, 9);
	cr_assert(back.gpu_class);
	cr_assert_eq(pw_baseline_cache_version(&back),
	             ((uint64_t)PW_BASELINE_CACHE_ENCODING << PW_BASELINE_CACHE_ENCODING_SHIFT) +
	                 17 * 4 + 2);
	static const uint8_t junk[] = {0xff, 0xff, 0xff, 0x0f};
	cr_assert_eq(pw_baseline_record_unpack(junk, sizeof junk, &back), PW_ERR_INVALID);
	char key[PW_BASELINE_CACHE_KEY_MAX];
	pw_baseline_cache_key(key, sizeof key, r.series_key);
	cr_assert_str_eq(key, "baseline:chat-8b/hlo:a1/v6e-4/decode.B64/tpot_p50_ms");
}

Test(baseline_cache, states_by_name)
{
	static const char *const names[] = {"baselining", "active", "frozen", "quarantined"};
	for (int s = 0; s < 4; s++) {
		cr_assert_str_eq(pw_baseline_state_name((pw_baseline_state)s), names[s]);
		cr_assert_eq(pw_baseline_state_parse(names[s]), (pw_baseline_state)s);
	}
	cr_assert_eq(pw_baseline_state_parse("bogus"), PW_BASELINE_BASELINING);
}
