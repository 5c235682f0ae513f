/*
 * test_gate_policy.c: the release gate's decisions around the statistics
 * (services/gate/gate_policy.c): reported outcomes of series and families,
 * the waiting rule, waiver matching and resolution (an expired waiver covers
 * nothing), the whole two-pass decision, and the summary line that names
 * blocking families and the series that lacked data. tests/unit/test_gate_eval.c
 * covers pw_gate_evaluate itself.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate_eval.h"
#include "gate_config.h"
#include "gate_policy.h"

#define HOUR_US INT64_C(3600000000)

static double noise(uint64_t *state)
{
	double sum = 0.0;
	for (int i = 0; i < 12; i++) {
		*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
		sum += (double)(*state >> 11) / 9007199254740992.0;
	}
	return sum - 6.0;
}

typedef struct rel {
	pw_gate_family_input fam[4];
	size_t nfam;
	pw_gate_series_input s[16];
	double base[16][30], cand[16][5];
	size_t ns;
	pw_gate_series_result sr[16];
	pw_gate_family_result fr[4];
	pw_gate_release_result rr;
	pw_gate_outcome out[16];
	size_t waiver_of[4];
	pw_gate_policy pol;
	uint64_t rng;
} rel;

static void rel_init(rel *r)
{
	memset(r, 0, sizeof *r);
	r->rng = 42;
	pw_gate_policy_default(&r->pol);
}

static size_t fam(rel *r, const char *name, double share)
{
	r->fam[r->nfam] = (pw_gate_family_input){.name = name, .spend_share = share};
	return r->nfam++;
}

static size_t ser(rel *r, const char *key, size_t f, pw_gate_tier tier, double level, double shift,
                  size_t n_cand)
{
	size_t i = r->ns++;
	pw_gate_series_input *s = &r->s[i];
	for (size_t k = 0; k < 30; k++)
		r->base[i][k] = level * (1.0 + 0.004 * noise(&r->rng));
	for (size_t k = 0; k < 5; k++)
		r->cand[i][k] = level * (1.0 + shift) * (1.0 + 0.004 * noise(&r->rng));
	*s = (pw_gate_series_input){.series = key, .family = f, .tier = tier,
	                            .direction = PW_COMPARE_LOWER_IS_BETTER,
	                            .state = PW_GATE_STATE_ACTIVE, .base = r->base[i], .n_base = 30,
	                            .cand = r->cand[i], .n_cand = n_cand};
	return i;
}

static void decide(rel *r, const pw_gate_waiver *w, size_t nw, int64_t now)
{
	char err[256];
	cr_assert_eq(pw_gate_decide(&r->pol, r->fam, r->nfam, r->s, r->ns, w, nw, now, r->sr, r->fr,
	                            &r->rr, r->out, r->waiver_of, err, sizeof err),
	             PW_OK, "%s", err);
}

Test(gate_policy, outcome_names_round_trip)
{
	for (int o = PW_GATE_OUT_BLOCKING; o <= PW_GATE_OUT_WAIVED; o++)
		cr_assert_eq(pw_gate_outcome_parse(pw_gate_outcome_name((pw_gate_outcome)o)), o);
	cr_assert_str_eq(pw_gate_outcome_name(PW_GATE_OUT_VALIDATED_WIN), "validated_win");
	cr_assert_eq(pw_gate_outcome_parse("BLOCKING"), 0);
	cr_assert_eq(pw_gate_outcome_parse(NULL), 0);
	cr_assert_eq(pw_gate_family_outcome(PW_GATE_FAMILY_BLOCKING), PW_GATE_OUT_BLOCKING);
	cr_assert_eq(pw_gate_family_outcome(PW_GATE_FAMILY_INSUFFICIENT_DATA),
	             PW_GATE_OUT_INSUFFICIENT_DATA);
}

Test(gate_policy, series_outcomes_follow_section_8)
{
	rel r;
	rel_init(&r);
	size_t big = fam(&r, "chat-8b", 0.078);
	size_t small = fam(&r, "small", 0.01);
	size_t b64 = ser(&r, "chat-8b/h/v6e-4/decode.B64/tpot", big, PW_GATE_TIER_TOP, 3.9, 0.082, 5);
	size_t two = ser(&r, "chat-8b/h/v6e-4/decode.B8/tpot", big, PW_GATE_TIER_TOP, 1.6, 0.02, 5);
	size_t p1 = ser(&r, "small/h/v6e-4/decode/tpot", small, PW_GATE_TIER_TOP, 2.0, 0.02, 5);
	size_t noisy = ser(&r, "small/h/v5e-8/decode/tpot", small, PW_GATE_TIER_TOP, 2.0, 0.0, 5);
	size_t win = ser(&r, "small/h/v5e-8/prefill/ttft", small, PW_GATE_TIER_TOP, 9.0, 0.0, 5);
	r.s[win].has_expected = true;
	r.s[win].expected_pct = -4.0;
	size_t base = ser(&r, "small/h/v5e-8/other/ttft", small, PW_GATE_TIER_TOP, 9.0, 0.0, 5);
	r.s[base].state = PW_GATE_STATE_BASELINING;
	decide(&r, NULL, 0, 0);
	/* ≥ 3% on a top-tier series blocks; a 2% series of a blocking family is P1 */
	cr_assert_eq(r.out[b64], PW_GATE_OUT_BLOCKING);
	cr_assert_eq(r.out[two], PW_GATE_OUT_P1);
	cr_assert_eq(r.out[p1], PW_GATE_OUT_P1);
	cr_assert_eq(r.fr[small].verdict, PW_GATE_FAMILY_P1);
	cr_assert_eq(r.out[noisy], PW_GATE_OUT_PASS);
	cr_assert_eq(r.out[win], PW_GATE_OUT_TREND, "shortfall: %s",
	             pw_gate_outcome_name(r.out[win]));
	cr_assert_eq(r.out[base], PW_GATE_OUT_INSUFFICIENT_DATA);

	/* a family with nothing but baselining series is short of data, not frozen */
	rel b;
	rel_init(&b);
	size_t nf = fam(&b, "new", 0.01);
	size_t ns = ser(&b, "new/h/p/c/m", nf, PW_GATE_TIER_TOP, 2.0, 0.0, 5);
	b.s[ns].state = PW_GATE_STATE_BASELINING;
	decide(&b, NULL, 0, 0);
	cr_assert_eq(b.fr[nf].verdict, PW_GATE_FAMILY_INSUFFICIENT_DATA);

	/* the same 2% on half the fleet's spend blocks on the aggregate: BLOCKING */
	r.fam[small].spend_share = 0.6;
	decide(&r, NULL, 0, 0);
	cr_assert_eq(r.fr[small].verdict, PW_GATE_FAMILY_BLOCKING);
	cr_assert_eq(r.out[p1], PW_GATE_OUT_BLOCKING);
}

/* pw_gate_wait_decide at now with deadline, settle and catch-up bounds; missing may be NULL */
static pw_gate_wait wait_at(const rel *r, size_t nfam, size_t ns, int64_t now, int64_t deadline,
                            int64_t settle, int64_t catchup, bool named, size_t *missing)
{
	pw_gate_wait_clock c = {now, deadline, settle, catchup, named, 0};
	pw_gate_wait_state st;
	pw_gate_wait w = pw_gate_wait_decide(&r->pol, nfam, r->s, ns, &c, &st);
	if (missing)
		*missing = st.missing;
	return w;
}

Test(gate_policy, waiting_rule)
{
	rel r;
	rel_init(&r);
	size_t f = fam(&r, "f", 0.1);
	size_t a = ser(&r, "f/h/p/c/m", f, PW_GATE_TIER_TOP, 1.0, 0.0, 5);
	size_t b = ser(&r, "f/h/p/c2/m", f, PW_GATE_TIER_TAIL, 1.0, 0.0, 3);
	size_t missing = 99;
	/* the tail series needs 5 by default */
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 10, 20, 0, 0, false, &missing), PW_GATE_WAIT_MORE);
	cr_assert_eq(missing, 1);
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 20, 20, 0, 0, false, NULL), PW_GATE_WAIT_DEADLINE);
	/* §4.5's 3 repeats for the tail tier */
	r.pol.min_candidate_tail_n = 3;
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 10, 20, 0, 0, false, &missing), PW_GATE_WAIT_READY);
	cr_assert_eq(missing, 0);
	/* frozen series are not waited for */
	r.s[a].n_cand = 0;
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 10, 20, 0, 0, false, NULL), PW_GATE_WAIT_MORE);
	r.s[a].state = PW_GATE_STATE_FROZEN;
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 10, 20, 0, 0, false, NULL), PW_GATE_WAIT_READY);
	/* a baselining series short of candidate runs is waited for until the
	 * deadline (its candidates have not arrived); with its runs, while the
	 * baseliner may catch up (settling), not after */
	r.s[a].state = PW_GATE_STATE_BASELINING;
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 10, 20, 15, 0, false, &missing), PW_GATE_WAIT_MORE);
	cr_assert_eq(missing, 1);
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 15, 20, 15, 0, false, NULL), PW_GATE_WAIT_MORE);
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 20, 20, 15, 0, false, NULL), PW_GATE_WAIT_DEADLINE);
	r.s[a].n_cand = 5;
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 10, 20, 15, 0, false, &missing), PW_GATE_WAIT_MORE);
	cr_assert_eq(missing, 1);
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 15, 20, 15, 0, false, NULL), PW_GATE_WAIT_READY);
	r.s[a].n_cand = 0;
	r.s[a].state = PW_GATE_STATE_FROZEN;
	/* a series whose baseline is behind (the baseliner restarting) is waited
	 * for until the catch-up bound, then tested on what there is; a frozen
	 * one is not gated, so not waited for */
	r.s[b].baseline_behind = true;
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 10, 20, 0, 18, false, &missing), PW_GATE_WAIT_MORE);
	cr_assert_eq(missing, 1);
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 18, 20, 0, 18, false, NULL), PW_GATE_WAIT_READY);
	r.s[a].baseline_behind = true;
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 10, 20, 0, 18, false, &missing), PW_GATE_WAIT_MORE);
	cr_assert_eq(missing, 1, "the frozen series is not waited for");
	r.s[a].baseline_behind = r.s[b].baseline_behind = false;
	/* and the tail series with 3 runs is tested, not insufficient */
	decide(&r, NULL, 0, 0);
	cr_assert(r.sr[b].tested);
	/* a family without any series is waited for only while settling when the
	 * request named no families (every spend weight is one), until the
	 * deadline when the request named it; then decided as short of data,
	 * never as a pass */
	cr_assert_eq(wait_at(&r, 2, r.ns, 10, 20, 15, 0, false, NULL), PW_GATE_WAIT_MORE);
	cr_assert_eq(wait_at(&r, 2, r.ns, 15, 20, 15, 0, false, NULL), PW_GATE_WAIT_READY);
	cr_assert_eq(wait_at(&r, 2, r.ns, 15, 20, 15, 0, true, &missing), PW_GATE_WAIT_MORE);
	cr_assert_eq(missing, 1);
	cr_assert_eq(wait_at(&r, 2, r.ns, 20, 20, 15, 0, true, NULL), PW_GATE_WAIT_DEADLINE);
	/* issue 19: a release with no candidate run at all (it does not exist, or
	 * the ingester is stalled) waits for its deadline, not for the settle time */
	cr_assert_eq(wait_at(&r, 1, 0, 10, 20, 15, 0, false, &missing), PW_GATE_WAIT_MORE);
	cr_assert_eq(missing, 1);
	cr_assert_eq(wait_at(&r, 1, 0, 15, 20, 15, 0, false, NULL), PW_GATE_WAIT_MORE);
	cr_assert_eq(wait_at(&r, 1, 0, 20, 20, 15, 0, false, NULL), PW_GATE_WAIT_DEADLINE);
	size_t bn = r.s[b].n_cand;
	r.s[b].n_cand = 0; /* a is frozen: no candidate run anywhere */
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 15, 20, 15, 0, false, NULL), PW_GATE_WAIT_MORE);
	r.s[b].n_cand = bn;
	rel e;
	rel_init(&e);
	size_t ef = fam(&e, "unmeasured", 0.05);
	decide(&e, NULL, 0, 0);
	cr_assert_eq(e.fr[ef].verdict, PW_GATE_FAMILY_INSUFFICIENT_DATA);
	cr_assert_eq(e.rr.verdict, PW_GATE_FAMILY_INSUFFICIENT_DATA);
	char buf[256];
	pw_gate_summary(buf, sizeof buf, &e.pol, e.fam, e.fr, e.nfam, e.s, e.sr, e.ns, &e.rr);
	cr_assert_str_eq(buf, "INSUFFICIENT_DATA: unmeasured has no measured series");
}

/*
 * The early decision after an ingester stall: the ingester stopped, the
 * request arrives (deadline 300 s ahead), the ingester resumes after the
 * settle time (gate.min_wait) and its first runs land: the families' series
 * exist, some with their candidate runs, none with a baseline yet (the
 * baseliner has not seen them). The old rule waited for baselining series
 * and families without series only while settling, so this was READY and
 * decided INSUFFICIENT_DATA ("2 families, 0 tests"), four minutes before the
 * deadline. It waits now until every series has its runs and its baseline,
 * and the same data then gives BLOCKING.
 */
Test(gate_policy, an_ingester_stall_does_not_decide_early)
{
	rel r;
	rel_init(&r);
	size_t chat = fam(&r, "chat-8b", 0.078), moe = fam(&r, "rank-moe-110b", 0.05);
	const int64_t S = 1000000, settle = 30 * S, deadline = 300 * S, resumed = 64 * S;
	size_t missing;
	/* stalled: no series, no runs; past the settle time the named families hold it */
	cr_assert_eq(wait_at(&r, r.nfam, 0, resumed, deadline, settle, 600 * S, true, &missing),
	             PW_GATE_WAIT_MORE);
	cr_assert_eq(missing, 2);
	/* resumed: the series are there, B64 with 3 of its 5 runs, the others
	 * with theirs; the baseliner has seen none of them */
	size_t b64 = ser(&r, "chat-8b/h/v6e-4/decode.B64/tpot_p50_ms", chat, PW_GATE_TIER_TOP, 3.90,
	                 0.082, 3);
	size_t b8 = ser(&r, "chat-8b/h/v6e-4/decode.B8/tpot_p50_ms", chat, PW_GATE_TIER_TOP, 1.60,
	                0.074, 5);
	size_t pre = ser(&r, "chat-8b/h/v6e-4/prefill/ttft_p50_ms", chat, PW_GATE_TIER_TOP, 210, 0.0, 5);
	size_t m = ser(&r, "rank-moe-110b/h/v6e-16/decode.B32/tpot_p50_ms", moe, PW_GATE_TIER_TOP, 7.2,
	               0.031, 5);
	size_t all[] = {b64, b8, pre, m};
	for (size_t k = 0; k < 4; k++) {
		r.s[all[k]].state = PW_GATE_STATE_BASELINING;
		r.s[all[k]].baseline_behind = true;
	}
	pw_gate_wait_clock c = {resumed, deadline, settle, 600 * S, true, 0};
	pw_gate_wait_state st;
	cr_assert_eq(pw_gate_wait_decide(&r.pol, r.nfam, r.s, r.ns, &c, &st), PW_GATE_WAIT_MORE,
	             "decided 4 s after the ingester resumed");
	cr_assert_eq(st.short_runs, 1);
	cr_assert_eq(st.behind, 3);
	char text[256];
	pw_gate_wait_describe(text, sizeof text, &st, deadline, resumed);
	cr_assert_str_eq(text, "1 of 4 series short of candidate runs, 3 baselines behind "
	                       "(deadline in 3m56s)");
	/* B64's last runs arrive: still the baselines */
	r.s[b64].n_cand = 5;
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, resumed + S, deadline, settle, 600 * S, true, &missing),
	             PW_GATE_WAIT_MORE);
	cr_assert_eq(missing, 4);
	/* the baseliner has folded them: active, nothing missing, READY */
	for (size_t k = 0; k < 4; k++) {
		r.s[all[k]].state = PW_GATE_STATE_ACTIVE;
		r.s[all[k]].baseline_behind = false;
	}
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, resumed + 2 * S, deadline, settle, 600 * S, true,
	                     &missing),
	             PW_GATE_WAIT_READY);
	decide(&r, NULL, 0, 0);
	cr_assert_eq(r.rr.verdict, PW_GATE_FAMILY_BLOCKING);
	cr_assert_eq(r.fr[chat].verdict, PW_GATE_FAMILY_BLOCKING);
	cr_assert_eq(r.out[b64], PW_GATE_OUT_BLOCKING);
	cr_assert_eq(r.rr.n_tests, 4);
}

/* A release decided at its deadline lacking data is re-decided, as a new
 * evaluation, when late data arrives and is complete or stops moving. */
Test(gate_policy, late_data_redecides)
{
	rel r;
	rel_init(&r);
	size_t f = fam(&r, "f", 0.1);
	size_t a = ser(&r, "f/h/p/c/m", f, PW_GATE_TIER_TOP, 1.0, 0.0, 2);
	ser(&r, "f/h/p/c2/m", f, PW_GATE_TIER_TOP, 1.0, 0.0, 5);
	pw_gate_wait_clock late = pw_gate_wait_late_clock(1000, true, 0);
	pw_gate_wait_state at_deadline, now;
	cr_assert_eq(pw_gate_wait_decide(&r.pol, r.nfam, r.s, r.ns, &late, &at_deadline),
	             PW_GATE_WAIT_MORE, "the late clock has no deadline");
	cr_assert_eq(at_deadline.missing, 1);
	/* a complete decision is never re-decided */
	cr_assert_not(pw_gate_late_redecide(0, at_deadline.seen, &at_deadline, NULL));
	/* nothing new */
	cr_assert_not(pw_gate_late_redecide(1, at_deadline.seen, &at_deadline, &at_deadline));
	/* one more run: late data, still short and still moving at the first look */
	r.s[a].n_cand = 3;
	pw_gate_wait_decide(&r.pol, r.nfam, r.s, r.ns, &late, &now);
	cr_assert_eq(now.seen, at_deadline.seen + 1);
	cr_assert_not(pw_gate_late_redecide(1, at_deadline.seen, &now, NULL));
	cr_assert_not(pw_gate_late_redecide(1, at_deadline.seen, &now, &at_deadline));
	/* stopped moving: re-decide on what there is */
	pw_gate_wait_state same = now;
	cr_assert(pw_gate_late_redecide(1, at_deadline.seen, &now, &same));
	/* the same runs, but a baseline still catching up (missing moved): not yet */
	pw_gate_wait_state catching = now;
	catching.missing = now.missing + 1;
	cr_assert_not(pw_gate_late_redecide(1, at_deadline.seen, &now, &catching));
	/* complete: re-decide at once */
	r.s[a].n_cand = 5;
	pw_gate_wait_decide(&r.pol, r.nfam, r.s, r.ns, &late, &now);
	cr_assert_eq(now.missing, 0);
	cr_assert(pw_gate_late_redecide(1, at_deadline.seen, &now, NULL));
	/* a series whose baseline completes is late data too */
	r.s[a].state = PW_GATE_STATE_BASELINING;
	pw_gate_wait_decide(&r.pol, r.nfam, r.s, r.ns, &late, &at_deadline);
	r.s[a].state = PW_GATE_STATE_ACTIVE;
	pw_gate_wait_decide(&r.pol, r.nfam, r.s, r.ns, &late, &now);
	cr_assert_eq(now.seen, at_deadline.seen + 1);
	char text[128];
	pw_gate_wait_describe(text, sizeof text, &now, INT64_MAX, 0);
	cr_assert_str_eq(text, "complete");
	pw_gate_wait_state none = {.no_runs = true, .no_series = 2, .missing = 2};
	pw_gate_wait_describe(text, sizeof text, &none, 100 * 1000000, 162 * 1000000);
	cr_assert_str_eq(text, "no candidate run yet, 2 families without series "
	                       "(deadline passed 1m02s ago)");
}

/*
 * §4.5: the gate waits for what a series' noise needs when the request did
 * not say what was scheduled, and for what was scheduled when it did; a
 * series tested short of it is reported UNDER_POWERED (never PASS), counted
 * in the summary, and a GPU series is certified at 4% with the 1-4% band
 * declared the production canary's.
 */
Test(gate_policy, power_per_series)
{
	rel r;
	rel_init(&r);
	size_t f = fam(&r, "f", 0.1);
	size_t g = ser(&r, "f/h/b200-8/c/m", f, PW_GATE_TIER_TOP, 1.0, 0.0, 5);
	size_t t = ser(&r, "f/h/v6e-4/c/m", f, PW_GATE_TIER_TOP, 1.0, 0.0, 5);
	r.s[g].gpu = true;
	r.s[g].required_n = 6;
	r.s[t].required_n = 5;
	size_t missing;
	/* no TierRepeats: wait for the 6 the GPU series needs */
	cr_assert_eq(pw_gate_series_wait_n(&r.pol, &r.s[g]), 6);
	cr_assert_eq(pw_gate_series_wait_n(&r.pol, &r.s[t]), 5);
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 10, 20, 0, 0, false, &missing), PW_GATE_WAIT_MORE);
	cr_assert_eq(missing, 1);
	/* the request scheduled 5: that is what is waited for */
	r.pol.top_n_requested = true;
	cr_assert_eq(pw_gate_series_wait_n(&r.pol, &r.s[g]), 5);
	cr_assert_eq(wait_at(&r, r.nfam, r.ns, 10, 20, 0, 0, false, &missing), PW_GATE_WAIT_READY);
	/* tested with 5: nothing significant, UNDER_POWERED, not PASS */
	decide(&r, NULL, 0, 0);
	cr_assert_eq(r.sr[g].verdict, PW_GATE_SERIES_UNDER_POWERED);
	cr_assert_eq(r.out[g], PW_GATE_OUT_UNDER_POWERED);
	cr_assert_str_eq(pw_gate_outcome_name(r.out[g]), "under_powered");
	cr_assert_eq(pw_gate_outcome_parse("under_powered"), PW_GATE_OUT_UNDER_POWERED);
	cr_assert_eq(r.out[t], PW_GATE_OUT_PASS);
	cr_assert_eq(r.fr[f].verdict, PW_GATE_FAMILY_PASS);
	char buf[512];
	pw_gate_summary(buf, sizeof buf, &r.pol, r.fam, r.fr, r.nfam, r.s, r.sr, r.ns, &r.rr);
	cr_assert_str_eq(buf, "PASS: 1 families, 2 tests, 0.00% fleet impact; 1 series under-powered "
	                      "(fewer candidate runs than their noise needs for the MDE); GPU series "
	                      "certified at MDE 4%: the 1-4% band is the production canary's");
}

/* The per-tier n table as pw-gate --power-table prints it. */
Test(gate_policy, power_table)
{
	pw_gate_policy p;
	pw_gate_policy_default(&p);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	cr_assert(out);
	cr_assert_eq(pw_gate_power_table(out, &p, 0.4, 2.0), PW_OK);
	fclose(out);
	cr_assert(strstr(text, "| top | TPU | 0.40% | 1.00% | 3.36 | 5 | 5 | - |\n"), "%s", text);
	cr_assert(strstr(text, "| tail | TPU | 0.40% | 3.00% | 0.37 | 5 | 5 | - |\n"), "%s", text);
	cr_assert(strstr(text, "| top | GPU | 2.00% | 4.00% | 5.25 | 5 | 6 | 1-4% |\n"), "%s", text);
	cr_assert(strstr(text, "| tail | GPU | 2.00% | 4.00% | 5.25 | 5 | 6 | 3-4% |\n"), "%s", text);
	cr_assert(strstr(text, "GPU at the top tier's own MDE 1.00%: 84.06 -> 85 runs"), "%s", text);
	free(text);
	cr_assert_eq(pw_gate_power_table(stdout, &p, 0.0, 2.0), PW_ERR_INVALID);
}

Test(gate_policy, key_split_and_waiver_matching)
{
	pw_gate_key_parts k;
	cr_assert_eq(pw_gate_key_split("chat-8b/hlo:1/v6e-4/decode.B64/tpot_p50_ms", &k), PW_OK);
	cr_assert_str_eq(k.model, "chat-8b");
	cr_assert_str_eq(k.hlo, "hlo:1");
	cr_assert_str_eq(k.platform, "v6e-4");
	cr_assert_str_eq(k.config, "decode.B64");
	cr_assert_str_eq(k.metric, "tpot_p50_ms");
	cr_assert_eq(pw_gate_key_split("a/b/c/d", &k), PW_ERR_INVALID);
	cr_assert_eq(pw_gate_key_split("a/b/c/d/e/f", &k), PW_ERR_INVALID);
	cr_assert_eq(pw_gate_key_split("a//c/d/e", &k), PW_ERR_INVALID);
	cr_assert_eq(pw_gate_key_split(NULL, &k), PW_ERR_INVALID);

	cr_assert_eq(pw_gate_key_split("chat-8b/hlo:1/v6e-4/decode.B64/tpot_p50_ms", &k), PW_OK);
	pw_gate_waiver w = {"wv", "chat-8b", "", "", "", 100};
	cr_assert(pw_gate_waiver_matches(&w, &k, 99));
	cr_assert_not(pw_gate_waiver_matches(&w, &k, 100), "expired at its expiry");
	w.platform = "v5e-8";
	cr_assert_not(pw_gate_waiver_matches(&w, &k, 0));
	w.platform = "v6e-4";
	w.metric = "tpot_p50_ms";
	cr_assert(pw_gate_waiver_matches(&w, &k, 0));
	w.model = "other";
	cr_assert_not(pw_gate_waiver_matches(&w, &k, 0));
}

Test(gate_policy, live_waiver_passes_expired_waiver_does_not)
{
	rel r;
	rel_init(&r);
	size_t moe = fam(&r, "rank-moe", 0.05);
	size_t chat = fam(&r, "chat-8b", 0.078);
	size_t m = ser(&r, "rank-moe/h/v6e-16/decode/tpot", moe, PW_GATE_TIER_TOP, 7.2, 0.031, 5);
	size_t c = ser(&r, "chat-8b/h/v6e-4/decode.B64/tpot", chat, PW_GATE_TIER_TOP, 3.9, 0.082, 5);
	int64_t now = 1000 * HOUR_US;
	pw_gate_waiver live = {"wv-live", "rank-moe", "", "", "", now + HOUR_US};
	pw_gate_waiver expired = {"wv-old", "rank-moe", "", "", "", now - HOUR_US};

	decide(&r, &expired, 1, now);
	cr_assert_eq(r.fr[moe].verdict, PW_GATE_FAMILY_BLOCKING);
	cr_assert_eq(r.out[m], PW_GATE_OUT_BLOCKING);
	cr_assert_eq(r.waiver_of[moe], SIZE_MAX);
	cr_assert_not(r.fam[moe].waived);

	pw_gate_waiver both[2] = {expired, live};
	decide(&r, both, 2, now);
	cr_assert_eq(r.fr[moe].verdict, PW_GATE_FAMILY_WAIVED);
	cr_assert_eq(r.fr[moe].unwaived, PW_GATE_FAMILY_BLOCKING);
	cr_assert_eq(r.waiver_of[moe], 1);
	cr_assert_eq(r.out[m], PW_GATE_OUT_WAIVED);
	/* a waiver for one family does not touch another */
	cr_assert_eq(r.fr[chat].verdict, PW_GATE_FAMILY_BLOCKING);
	cr_assert_eq(r.out[c], PW_GATE_OUT_BLOCKING);
	cr_assert_eq(r.rr.verdict, PW_GATE_FAMILY_BLOCKING);
	/* a decision starts from unwaived families every time */
	decide(&r, &expired, 1, now);
	cr_assert_eq(r.fr[moe].verdict, PW_GATE_FAMILY_BLOCKING);
}

Test(gate_policy, narrow_waiver_covers_only_what_it_names)
{
	rel r;
	rel_init(&r);
	size_t chat = fam(&r, "chat-8b", 0.078);
	ser(&r, "chat-8b/h/v6e-4/decode.B64/tpot", chat, PW_GATE_TIER_TOP, 3.9, 0.082, 5);
	size_t b8 = ser(&r, "chat-8b/h/v6e-4/decode.B8/tpot", chat, PW_GATE_TIER_TOP, 1.6, 0.074, 5);
	int64_t now = 1000 * HOUR_US;
	pw_gate_waiver only_b64 = {"wv", "", "v6e-4", "decode.B64", "", now + HOUR_US};
	decide(&r, &only_b64, 1, now);
	cr_assert_eq(r.fr[chat].verdict, PW_GATE_FAMILY_BLOCKING, "B8 is not waived");
	pw_gate_waiver platform = {"wv2", "", "v6e-4", "", "", now + HOUR_US};
	decide(&r, &platform, 1, now);
	cr_assert_eq(r.fr[chat].verdict, PW_GATE_FAMILY_WAIVED);
	cr_assert_eq(r.out[b8], PW_GATE_OUT_WAIVED);
	pw_gate_waiver other_model = {"wv3", "rank-moe", "", "", "", now + HOUR_US};
	decide(&r, &other_model, 1, now);
	cr_assert_eq(r.fr[chat].verdict, PW_GATE_FAMILY_BLOCKING);
}

Test(gate_policy, summary_names_blocking_families_and_lacking_series)
{
	rel r;
	rel_init(&r);
	size_t chat = fam(&r, "chat-8b", 0.078);
	ser(&r, "chat-8b/h/v6e-4/decode.B64/tpot", chat, PW_GATE_TIER_TOP, 3.9, 0.082, 5);
	ser(&r, "chat-8b/h/v6e-4/decode.B8/tpot", chat, PW_GATE_TIER_TOP, 1.6, 0.074, 5);
	decide(&r, NULL, 0, 0);
	char buf[512];
	pw_gate_summary(buf, sizeof buf, &r.pol, r.fam, r.fr, r.nfam, r.s, r.sr, r.ns, &r.rr);
	cr_assert(strncmp(buf, "BLOCKING: chat-8b (2 series, 0.", 31) == 0, "%s", buf);

	rel_init(&r);
	size_t tiny = fam(&r, "tiny-1b", 0.001);
	ser(&r, "tiny-1b/h/v5e-8/decode/tpot", tiny, PW_GATE_TIER_TAIL, 0.9, 0.0, 2);
	decide(&r, NULL, 0, 0);
	pw_gate_summary(buf, sizeof buf, &r.pol, r.fam, r.fr, r.nfam, r.s, r.sr, r.ns, &r.rr);
	cr_assert_str_eq(buf, "INSUFFICIENT_DATA: lacks data: tiny-1b/h/v5e-8/decode/tpot (2/5 runs)");

	/* a short buffer is cut, terminated and marked */
	char small[24];
	pw_gate_summary(small, sizeof small, &r.pol, r.fam, r.fr, r.nfam, r.s, r.sr, r.ns, &r.rr);
	cr_assert_eq(strlen(small), sizeof small - 1);
	cr_assert_str_eq(small + sizeof small - 4, "...");

	rel_init(&r);
	size_t q = fam(&r, "quiet", 0.1);
	ser(&r, "quiet/h/p/c/m", q, PW_GATE_TIER_TOP, 2.0, 0.0, 5);
	decide(&r, NULL, 0, 0);
	pw_gate_summary(buf, sizeof buf, &r.pol, r.fam, r.fr, r.nfam, r.s, r.sr, r.ns, &r.rr);
	cr_assert_str_eq(buf, "PASS: 1 families, 1 tests, 0.00% fleet impact");
}

Test(gate_policy, configuration_table_builds_and_gives_the_policy)
{
	size_t n = 0;
	const pw_conf_key *keys = pw_gate_config_keys(&n);
	cr_assert_gt(n, 5);
	char err[256] = "";
	pw_config *cfg = pw_config_new("gate", keys, n, err, sizeof err);
	cr_assert_not_null(cfg, "%s", err);
	pw_gate_policy p, d;
	memset(&p, 0, sizeof p); /* the padding after the bools: memcmp below */
	memset(&d, 0, sizeof d);
	pw_gate_policy_from_config(cfg, &p);
	pw_gate_policy_default(&d);
	cr_assert_eq(memcmp(&p, &d, sizeof p), 0, "the table's defaults are the design's");
	char *env[] = {"PW_GATE_BLOCKING_TOP_PCT=2.5", "PW_GATE_MIN_CANDIDATE_TAIL_N=3", NULL};
	cr_assert_eq(pw_config_load_env(cfg, env, err, sizeof err), PW_OK, "%s", err);
	pw_gate_policy_from_config(cfg, &p);
	cr_assert_float_eq(p.blocking_top_pct, 2.5, 1e-12);
	cr_assert_eq(p.min_candidate_tail_n, 3);
	char *bad[] = {"PW_GATE_FDR_Q=2", NULL};
	cr_assert_eq(pw_config_load_env(cfg, bad, err, sizeof err), PW_ERR_CONFIG);
	pw_config_free(cfg);
}

Test(gate_policy, polling_backs_off_while_nothing_arrives)
{
	cr_assert_eq(pw_gate_next_poll_ms(SIZE_MAX, 10, 0, 250, 2000), 250);
	cr_assert_eq(pw_gate_next_poll_ms(10, 10, 250, 250, 2000), 500);
	cr_assert_eq(pw_gate_next_poll_ms(10, 10, 1000, 250, 2000), 2000);
	cr_assert_eq(pw_gate_next_poll_ms(10, 10, 2000, 250, 2000), 2000);
	cr_assert_eq(pw_gate_next_poll_ms(10, 9, 2000, 250, 2000), 250, "runs arrived");
	cr_assert_eq(pw_gate_next_poll_ms(3, 3, 100, 250, 200), 250, "cap below the floor");
}

Test(gate_policy, zero_baseline_median_is_screened_not_fatal)
{
	rel r;
	rel_init(&r);
	size_t f = fam(&r, "f", 0.1);
	size_t ok = ser(&r, "f/h/p/c/m", f, PW_GATE_TIER_TOP, 2.0, 0.05, 5);
	size_t zero = ser(&r, "f/h/p/c/zero", f, PW_GATE_TIER_TOP, 0.0, 0.0, 5);
	char err[256];
	/* unscreened, the release cannot be decided at all */
	cr_assert_neq(pw_gate_evaluate(&r.pol, r.fam, r.nfam, r.s, r.ns, r.sr, r.fr, &r.rr, err,
	                               sizeof err),
	              PW_OK);
	double work[30];
	cr_assert_eq(pw_gate_screen(r.s, r.ns, work), 1);
	cr_assert_eq(r.s[zero].n_base, 0);
	cr_assert_eq(r.s[ok].n_base, 30);
	decide(&r, NULL, 0, 0);
	cr_assert_eq(r.out[zero], PW_GATE_OUT_INSUFFICIENT_DATA);
	cr_assert_eq(r.out[ok], PW_GATE_OUT_BLOCKING);
	cr_assert_eq(pw_gate_screen(r.s, r.ns, work), 0, "screening twice changes nothing");
}

/* issue 19, item 4: one unscoped waiver waived the whole release, with expiry INT64_MAX */
Test(gate_policy, an_unscoped_or_endless_waiver_is_refused)
{
	const int64_t now = 1780000000000000LL, day = 86400LL * 1000000;
	char why[256];
	cr_assert_eq(pw_gate_waiver_check("wv-1", "", "", "", "", false, now + day, now, why,
	                                  sizeof why),
	             PW_ERR_INVALID);
	cr_assert(strstr(why, "has no selector") && strstr(why, "release_wide"), "%s", why);
	cr_assert_eq(pw_gate_waiver_check("wv-1", NULL, NULL, NULL, NULL, false, now + day, now, why,
	                                  sizeof why),
	             PW_ERR_INVALID);
	/* said so: accepted */
	cr_assert_eq(pw_gate_waiver_check("wv-1", "", "", "", "", true, now + day, now, why,
	                                  sizeof why),
	             PW_OK);
	/* scoped: accepted */
	cr_assert_eq(pw_gate_waiver_check("wv-2", "chat-70b", "", "", "", false, now + day, now, why,
	                                  sizeof why),
	             PW_OK);
	/* expiry INT64_MAX, or over 366 days: refused, scoped or not */
	cr_assert_eq(pw_gate_waiver_check("wv-3", "chat-70b", "", "", "", false, INT64_MAX, now, why,
	                                  sizeof why),
	             PW_ERR_INVALID);
	cr_assert(strstr(why, "366 days"), "%s", why);
	cr_assert_eq(pw_gate_waiver_check("wv-3", "chat-70b", "", "", "", true, now + 367 * day, now,
	                                  why, sizeof why),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_gate_waiver_check("wv-3", "chat-70b", "", "", "", false, now + 366 * day, now,
	                                  why, sizeof why),
	             PW_OK);
	/* an expired one is valid input (it just does not apply) */
	cr_assert_eq(pw_gate_waiver_check("wv-4", "code-34b", "", "", "", false, now - day, now, why,
	                                  sizeof why),
	             PW_OK);
}

/*
 * A benchmark the plan of the candidate's sweep lists is missing until its
 * runs arrive, not absent from the release: a planned series without a
 * candidate run is waited for until the deadline and then lacks data, named
 * as planned; a planned benchmark never measured (no series yet) is waited
 * for too and keeps its family from PASS. Without the planned counts the
 * same release is READY and PASSes on the series that arrived.
 */
Test(gate_policy, planned_but_missing_is_missing)
{
	const int64_t S = 1000000, deadline = 3600 * S;
	rel r;
	rel_init(&r);
	size_t chat = fam(&r, "chat-8b", 0.078);
	ser(&r, "chat-8b/h/v6e-4/decode.B64/tpot_p50_ms", chat, PW_GATE_TIER_TOP, 3.9, 0.0, 5);
	size_t v5e = ser(&r, "chat-8b/h/v5e-8/decode.B64/tpot_p50_ms", chat, PW_GATE_TIER_TOP, 5.1, 0.0, 0);
	r.s[v5e].planned = true;
	pw_gate_wait_clock c = {10 * S, deadline, 0, 0, true, 0};
	pw_gate_wait_state st;
	cr_assert_eq(pw_gate_wait_decide(&r.pol, r.nfam, r.s, r.ns, &c, &st), PW_GATE_WAIT_MORE);
	cr_assert_eq(st.short_runs, 1);
	cr_assert_eq(st.planned_none, 1);
	char text[256];
	pw_gate_wait_describe(text, sizeof text, &st, INT64_MAX, 0);
	cr_assert_str_eq(text, "1 of 2 series short of candidate runs (1 planned, none arrived)");
	c.now_us = deadline;
	cr_assert_eq(pw_gate_wait_decide(&r.pol, r.nfam, r.s, r.ns, &c, &st), PW_GATE_WAIT_DEADLINE);
	decide(&r, NULL, 0, deadline);
	cr_assert_eq(r.fr[chat].verdict, PW_GATE_FAMILY_INSUFFICIENT_DATA);
	cr_assert_eq(r.fr[chat].n_planned_missing, 1);
	cr_assert_eq(r.out[v5e], PW_GATE_OUT_INSUFFICIENT_DATA);
	char buf[512];
	pw_gate_summary(buf, sizeof buf, &r.pol, r.fam, r.fr, r.nfam, r.s, r.sr, r.ns, &r.rr);
	cr_assert_str_eq(buf, "INSUFFICIENT_DATA: lacks data: chat-8b/h/v5e-8/decode.B64/tpot_p50_ms "
	                      "(0/5 runs, planned)");

	/* a baselining planned series without runs is named as planned too */
	r.s[v5e].state = PW_GATE_STATE_BASELINING;
	decide(&r, NULL, 0, deadline);
	cr_assert_eq(r.fr[chat].verdict, PW_GATE_FAMILY_INSUFFICIENT_DATA);
	cr_assert_eq(r.fr[chat].n_planned_missing, 1);
	pw_gate_summary(buf, sizeof buf, &r.pol, r.fam, r.fr, r.nfam, r.s, r.sr, r.ns, &r.rr);
	cr_assert_str_eq(buf, "INSUFFICIENT_DATA: chat-8b: 1 planned series without a candidate run "
	                      "(chat-8b/h/v5e-8/decode.B64/tpot_p50_ms)");

	/* the v5e-8 runs arrive: complete, PASS */
	r.s[v5e].state = PW_GATE_STATE_ACTIVE;
	r.s[v5e].n_cand = 5;
	c.now_us = 10 * S;
	cr_assert_eq(pw_gate_wait_decide(&r.pol, r.nfam, r.s, r.ns, &c, &st), PW_GATE_WAIT_READY);
	decide(&r, NULL, 0, 10 * S);
	cr_assert_eq(r.fr[chat].verdict, PW_GATE_FAMILY_PASS);
	cr_assert_eq(r.fr[chat].n_planned_missing, 0);

	/* two planned benchmarks never measured: waited for, then the family cannot PASS */
	r.fam[chat].planned_unmeasured = 2;
	c.planned_unmeasured = 2;
	cr_assert_eq(pw_gate_wait_decide(&r.pol, r.nfam, r.s, r.ns, &c, &st), PW_GATE_WAIT_MORE);
	cr_assert_eq(st.missing, 2);
	pw_gate_wait_describe(text, sizeof text, &st, deadline, 10 * S);
	cr_assert_str_eq(text, "2 planned benchmarks never measured (deadline in 59m50s)");
	pw_gate_wait_clock late = pw_gate_wait_late_clock(10 * S, true, 2);
	cr_assert_eq(pw_gate_wait_decide(&r.pol, r.nfam, r.s, r.ns, &late, &st), PW_GATE_WAIT_MORE,
	             "a release decided without them is watched for them");
	cr_assert_eq(st.missing, 2);
	decide(&r, NULL, 0, deadline);
	cr_assert_eq(r.fr[chat].verdict, PW_GATE_FAMILY_INSUFFICIENT_DATA);
	cr_assert_eq(r.fr[chat].n_planned_missing, 2);
	pw_gate_summary(buf, sizeof buf, &r.pol, r.fam, r.fr, r.nfam, r.s, r.sr, r.ns, &r.rr);
	cr_assert_str_eq(buf, "INSUFFICIENT_DATA: chat-8b: 2 planned benchmarks never measured");
}

/* The plan records that rank-x inherits chat-8b's verdict (similarity 0.98,
 * docs/planner.md "Clustering"): without runs of its own rank-x is decided
 * through chat-8b, and the summary says so; with runs of its own it is
 * decided on them; without the inheritance it has no data. */
/* Family f of r inherits its verdict from family rep (named name), similarity 0.98. */
static void inherit(rel *r, size_t f, const char *name, size_t rep)
{
	r->fam[f].inherits_from = name;
	r->fam[f].inherit_similarity = 0.98;
	r->fam[f].representative = rep;
}

Test(gate_policy, inheritor_without_runs_follows_its_representative)
{
	rel r;
	rel_init(&r);
	size_t chat = fam(&r, "chat-8b", 0.078);
	size_t rank = fam(&r, "rank-x", 0.004);
	ser(&r, "chat-8b/h/v6e-4/decode.B64/tpot", chat, PW_GATE_TIER_TOP, 3.9, 0.082, 5);
	ser(&r, "chat-8b/h/v6e-4/decode.B8/tpot", chat, PW_GATE_TIER_TOP, 1.6, 0.074, 5);
	inherit(&r, rank, "chat-8b", chat);
	decide(&r, NULL, 0, 0);
	cr_assert_eq(r.fr[chat].verdict, PW_GATE_FAMILY_BLOCKING);
	cr_assert_eq(r.fr[rank].verdict, PW_GATE_FAMILY_BLOCKING);
	cr_assert(r.fr[rank].inherited);
	cr_assert(!r.fr[chat].inherited);
	char buf[512];
	pw_gate_summary(buf, sizeof buf, &r.pol, r.fam, r.fr, r.nfam, r.s, r.sr, r.ns, &r.rr);
	cr_assert(strncmp(buf, "BLOCKING: chat-8b (2 series, 0.", 31) == 0, "%s", buf);
	cr_assert(strstr(buf, "% fleet); rank-x (through chat-8b); rank-x inherits from chat-8b, "
	                      "similarity 0.98") != NULL,
	          "%s", buf);
	cr_assert_null(strstr(buf, "rank-x has no measured series"), "%s", buf);

	/* the representative passes: so does the inheritor, not INSUFFICIENT_DATA */
	rel_init(&r);
	chat = fam(&r, "chat-8b", 0.078);
	rank = fam(&r, "rank-x", 0.004);
	ser(&r, "chat-8b/h/v6e-4/decode.B64/tpot", chat, PW_GATE_TIER_TOP, 3.9, 0.0, 5);
	inherit(&r, rank, "chat-8b", chat);
	decide(&r, NULL, 0, 0);
	cr_assert_eq(r.fr[rank].verdict, PW_GATE_FAMILY_PASS);
	cr_assert_eq(r.rr.verdict, PW_GATE_FAMILY_PASS);
	pw_gate_summary(buf, sizeof buf, &r.pol, r.fam, r.fr, r.nfam, r.s, r.sr, r.ns, &r.rr);
	cr_assert_str_eq(buf, "PASS: 2 families, 1 tests, 0.00% fleet impact; rank-x inherits from "
	                      "chat-8b, similarity 0.98");

	/* runs of its own decide: rank-x quiet while chat-8b regresses */
	size_t own = ser(&r, "rank-x/h/v6e-4/decode.B64/tpot", rank, PW_GATE_TIER_TAIL, 2.0, 0.0, 5);
	for (size_t k = 0; k < 5; k++)
		r.cand[0][k] *= 1.082;
	decide(&r, NULL, 0, 0);
	cr_assert_eq(r.fr[chat].verdict, PW_GATE_FAMILY_BLOCKING);
	cr_assert_eq(r.fr[rank].verdict, PW_GATE_FAMILY_PASS);
	cr_assert(!r.fr[rank].inherited);
	cr_assert_eq(r.out[own], PW_GATE_OUT_PASS);
	pw_gate_summary(buf, sizeof buf, &r.pol, r.fam, r.fr, r.nfam, r.s, r.sr, r.ns, &r.rr);
	cr_assert(strstr(buf, "; rank-x inherits from chat-8b, similarity 0.98 (decided on its own "
	                      "runs)") != NULL,
	          "%s", buf);

	/* the representative not among the release's families: no decision */
	r.ns = 1;
	r.fam[rank].representative = SIZE_MAX;
	decide(&r, NULL, 0, 0);
	cr_assert_eq(r.fr[rank].verdict, PW_GATE_FAMILY_INSUFFICIENT_DATA);
	pw_gate_summary(buf, sizeof buf, &r.pol, r.fam, r.fr, r.nfam, r.s, r.sr, r.ns, &r.rr);
	cr_assert(strstr(buf, "rank-x has no measured series; ") != NULL, "%s", buf);
	cr_assert(strstr(buf, "similarity 0.98 (representative not gated)") != NULL, "%s", buf);

	/* no inheritance recorded: a family without series has no data */
	r.fam[rank].inherits_from = NULL;
	r.fam[rank].representative = chat;
	decide(&r, NULL, 0, 0);
	cr_assert_eq(r.fr[rank].verdict, PW_GATE_FAMILY_INSUFFICIENT_DATA);
	cr_assert(!r.fr[rank].inherited);
}

/* §8 "1-3% on gated series: P1 bug auto-filed": what files a ticket and what does not. */
Test(gate_policy, p1_filing_rule)
{
	rel r;
	rel_init(&r);
	size_t top = fam(&r, "top", 0.05);
	size_t blk = fam(&r, "blk", 0.05);
	size_t tail = fam(&r, "tail", 0.01);
	size_t wv = fam(&r, "waived", 0.02);
	/* top tier (MDE 1%, filter max(0.7%, 2 SE)), sigma 0.4%, 30 x 5 runs */
	size_t sub = ser(&r, "top/h/v6e-4/a/tpot", top, PW_GATE_TIER_TOP, 2.0, 0.003, 5);
	size_t two = ser(&r, "top/h/v6e-4/b/tpot", top, PW_GATE_TIER_TOP, 2.0, 0.02, 5);
	size_t faster = ser(&r, "top/h/v6e-4/c/tpot", top, PW_GATE_TIER_TOP, 2.0, -0.02, 5);
	size_t frozen = ser(&r, "top/h/v5e-8/b/tpot", top, PW_GATE_TIER_TOP, 2.0, 0.02, 5);
	r.s[frozen].state = PW_GATE_STATE_FROZEN;
	size_t baselining = ser(&r, "top/h/v5e-8/c/tpot", top, PW_GATE_TIER_TOP, 2.0, 0.02, 5);
	r.s[baselining].state = PW_GATE_STATE_BASELINING;
	size_t five = ser(&r, "blk/h/v6e-4/b/tpot", blk, PW_GATE_TIER_TOP, 2.0, 0.05, 5);
	/* tail tier (MDE 3%, filter 2.1%): 1.5% is below it; 5% does not block alone */
	size_t tail_small = ser(&r, "tail/h/v6e-4/a/tpot", tail, PW_GATE_TIER_TAIL, 2.0, 0.015, 5);
	size_t tail_big = ser(&r, "tail/h/v6e-4/b/tpot", tail, PW_GATE_TIER_TAIL, 2.0, 0.05, 5);
	size_t waived = ser(&r, "waived/h/v6e-4/b/tpot", wv, PW_GATE_TIER_TOP, 2.0, 0.02, 5);
	int64_t now = 1000 * HOUR_US;
	pw_gate_waiver w = {"wv-1", "waived", "", "", "", now + HOUR_US};
	decide(&r, &w, 1, now);

	cr_assert_eq(r.out[two], PW_GATE_OUT_P1, "%s", pw_gate_outcome_name(r.out[two]));
	cr_assert(pw_gate_p1_files(r.out[two], &r.sr[two]), "2%% on a gated top-tier series files");
	cr_assert_eq(r.fr[top].verdict, PW_GATE_FAMILY_P1);

	cr_assert_neq(r.out[sub], PW_GATE_OUT_P1);
	cr_assert_not(pw_gate_p1_files(r.out[sub], &r.sr[sub]), "0.3%% is below the filter");
	cr_assert_eq(r.out[five], PW_GATE_OUT_BLOCKING);
	cr_assert_not(pw_gate_p1_files(r.out[five], &r.sr[five]), ">= 3%% blocks, it is no P1");
	cr_assert_eq(r.out[faster], PW_GATE_OUT_INVESTIGATE);
	cr_assert_not(pw_gate_p1_files(r.out[faster], &r.sr[faster]), "an improvement files nothing");
	cr_assert_eq(r.out[frozen], PW_GATE_OUT_FROZEN);
	cr_assert_not(pw_gate_p1_files(r.out[frozen], &r.sr[frozen]), "a frozen series is not gated");
	cr_assert_eq(r.out[baselining], PW_GATE_OUT_INSUFFICIENT_DATA);
	cr_assert_not(pw_gate_p1_files(r.out[baselining], &r.sr[baselining]));
	cr_assert_neq(r.out[tail_small], PW_GATE_OUT_P1);
	cr_assert_not(pw_gate_p1_files(r.out[tail_small], &r.sr[tail_small]),
	              "1.5%% is below a tail series' filter (2.1%%)");
	cr_assert_eq(r.out[tail_big], PW_GATE_OUT_P1, "%s", pw_gate_outcome_name(r.out[tail_big]));
	cr_assert(pw_gate_p1_files(r.out[tail_big], &r.sr[tail_big]),
	          "a tail regression past its filter is the gate's P1 (tail series never block alone)");
	cr_assert_eq(r.out[waived], PW_GATE_OUT_WAIVED);
	cr_assert_not(pw_gate_p1_files(r.out[waived], &r.sr[waived]), "a waived regression files nothing");

	/* the rule needs the tested regression behind the outcome, not the label alone */
	pw_gate_series_result untested = {.verdict = PW_GATE_SERIES_REGRESSED, .worse_pct = 2.0};
	cr_assert_not(pw_gate_p1_files(PW_GATE_OUT_P1, &untested));
	cr_assert_not(pw_gate_p1_files(PW_GATE_OUT_P1, NULL));
	pw_gate_series_result better = r.sr[two];
	better.worse_pct = -2.0;
	cr_assert_not(pw_gate_p1_files(PW_GATE_OUT_P1, &better));
}

/* §8 "must resolve before next RC (no compounding drift)": which open tickets the next RC reports. */
Test(gate_policy, open_p1_of_an_earlier_release_is_compounding_drift)
{
	int64_t rc1 = 1000 * HOUR_US, rc2 = rc1 + 7 * 24 * HOUR_US + 2 * HOUR_US;
	pw_gate_p1_ticket t[] = {
	    {.ticket_id = 7, .series_id = 11, .series_key = "chat-8b/h/v6e-4/b/tpot_p50_ms",
	     .found_release = "rc-1", .found_us = rc1, .effect_pct = 2.1},
	    /* the same release re-decided: its own ticket is no drift */
	    {.ticket_id = 8, .series_id = 12, .series_key = "chat-8b/h/v6e-4/c/tpot_p50_ms",
	     .found_release = "rc-2", .found_us = rc2, .effect_pct = 1.8},
	    /* a series this release does not gate */
	    {.ticket_id = 9, .series_id = 99, .series_key = "gone/h/v6e-4/c/tpot_p50_ms",
	     .found_release = "rc-1", .found_us = rc1, .effect_pct = 1.5},
	    /* filed by a release requested after this one */
	    {.ticket_id = 10, .series_id = 13, .series_key = "chat-8b/h/v6e-4/d/tpot_p50_ms",
	     .found_release = "rc-3", .found_us = rc2 + HOUR_US, .effect_pct = 1.2},
	    {.ticket_id = 11, .series_id = 13, .series_key = "chat-8b/h/v6e-4/d/tpot_p50_ms",
	     .found_release = "rc-0", .found_us = rc1 - 24 * HOUR_US, .effect_pct = 1.4},
	};
	int64_t ids[] = {11, 12, 13};
	size_t n = pw_gate_drift_select("rc-2", rc2, t, 5, ids, 3);
	cr_assert_eq(n, 2);
	cr_assert_eq(t[0].ticket_id, 7);
	cr_assert_eq(t[0].age_s, (7 * 24 + 2) * 3600);
	cr_assert_eq(t[1].ticket_id, 11);
	cr_assert_eq(t[1].age_s, (8 * 24 + 2) * 3600);

	char line[256];
	pw_gate_drift_line(line, sizeof line, &t[0]);
	cr_assert_str_eq(line, "WARN compounding drift: P1-7 chat-8b/h/v6e-4/b/tpot_p50_ms (+2.1%) "
	                       "open since rc-1, 7d02h, due by this RC");
	char sum[128] = "P1: chat-8b (1 series, 0.10% fleet)";
	pw_gate_drift_summary(sum, sizeof sum, t, n);
	cr_assert_str_eq(sum, "P1: chat-8b (1 series, 0.10% fleet); WARN compounding drift: 2 open "
	                      "P1 tickets from earlier releases (P1-7, P1-11)");
	char none[32] = "PASS";
	pw_gate_drift_summary(none, sizeof none, t, 0);
	cr_assert_str_eq(none, "PASS");
	char small[40] = "PASS: 3 families";
	pw_gate_drift_summary(small, sizeof small, t, n);
	cr_assert_eq(strlen(small), sizeof small - 1);
	cr_assert_str_eq(small + sizeof small - 4, "...");
}
