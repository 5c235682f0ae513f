/*
 * gate_policy.c: readiness, waivers, reported outcomes and the summary line
 * of the release gate. See gate_policy.h; the statistics are gate_eval.c's.
 */
#include "gate_policy.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pw_gate_outcome_name(pw_gate_outcome o)
{
	switch (o) {
	case PW_GATE_OUT_BLOCKING: return "blocking";
	case PW_GATE_OUT_P1: return "p1";
	case PW_GATE_OUT_PASS: return "pass";
	case PW_GATE_OUT_VALIDATED_WIN: return "validated_win";
	case PW_GATE_OUT_FROZEN: return "frozen";
	case PW_GATE_OUT_QUARANTINED: return "quarantined";
	case PW_GATE_OUT_INSUFFICIENT_DATA: return "insufficient_data";
	case PW_GATE_OUT_INVESTIGATE: return "investigate";
	case PW_GATE_OUT_TREND: return "trend";
	case PW_GATE_OUT_WAIVED: return "waived";
	case PW_GATE_OUT_UNDER_POWERED: return "under_powered";
	}
	return "unknown";
}

int pw_gate_outcome_parse(const char *s)
{
	for (int o = PW_GATE_OUT_BLOCKING; o <= PW_GATE_OUT_UNDER_POWERED; o++)
		if (s && strcmp(s, pw_gate_outcome_name((pw_gate_outcome)o)) == 0)
			return o;
	return 0;
}

pw_gate_outcome pw_gate_family_outcome(pw_gate_family_verdict v)
{
	switch (v) {
	case PW_GATE_FAMILY_PASS: return PW_GATE_OUT_PASS;
	case PW_GATE_FAMILY_VALIDATED_WIN: return PW_GATE_OUT_VALIDATED_WIN;
	case PW_GATE_FAMILY_WAIVED: return PW_GATE_OUT_WAIVED;
	case PW_GATE_FAMILY_FROZEN: return PW_GATE_OUT_FROZEN;
	case PW_GATE_FAMILY_INSUFFICIENT_DATA: return PW_GATE_OUT_INSUFFICIENT_DATA;
	case PW_GATE_FAMILY_P1: return PW_GATE_OUT_P1;
	case PW_GATE_FAMILY_BLOCKING: return PW_GATE_OUT_BLOCKING;
	}
	return PW_GATE_OUT_PASS;
}

pw_gate_outcome pw_gate_series_outcome(const pw_gate_policy *policy,
                                       const pw_gate_series_input *in,
                                       const pw_gate_series_result *r,
                                       const pw_gate_family_result *f)
{
	switch (r->verdict) {
	case PW_GATE_SERIES_WITHIN_NOISE: return PW_GATE_OUT_PASS;
	case PW_GATE_SERIES_TREND: return PW_GATE_OUT_TREND;
	case PW_GATE_SERIES_WIN_SHORTFALL: return PW_GATE_OUT_TREND;
	case PW_GATE_SERIES_INVESTIGATE: return PW_GATE_OUT_INVESTIGATE;
	case PW_GATE_SERIES_VALIDATED_WIN: return PW_GATE_OUT_VALIDATED_WIN;
	case PW_GATE_SERIES_FROZEN: return PW_GATE_OUT_FROZEN;
	case PW_GATE_SERIES_QUARANTINED: return PW_GATE_OUT_QUARANTINED;
	case PW_GATE_SERIES_BASELINING: return PW_GATE_OUT_INSUFFICIENT_DATA;
	case PW_GATE_SERIES_INSUFFICIENT_DATA: return PW_GATE_OUT_INSUFFICIENT_DATA;
	case PW_GATE_SERIES_UNDER_POWERED: return PW_GATE_OUT_UNDER_POWERED;
	case PW_GATE_SERIES_REGRESSED: break;
	case PW_GATE_SERIES_NUMERICS_CHANGED:
		return f->verdict == PW_GATE_FAMILY_WAIVED ? PW_GATE_OUT_WAIVED : PW_GATE_OUT_BLOCKING;
	}
	bool alone = in->tier == PW_GATE_TIER_TOP && r->worse_pct >= policy->blocking_top_pct;
	bool by_aggregate = f->unwaived == PW_GATE_FAMILY_BLOCKING && f->n_blocking == 0;
	if (f->verdict == PW_GATE_FAMILY_WAIVED)
		return PW_GATE_OUT_WAIVED;
	return alone || by_aggregate ? PW_GATE_OUT_BLOCKING : PW_GATE_OUT_P1;
}


static bool empty(const char *s)
{
	return !s || !*s;
}

pw_status pw_gate_waiver_check(const char *waiver_id, const char *model, const char *platform,
                               const char *config, const char *metric, bool release_wide,
                               int64_t expires_us, int64_t asked_us, char *errbuf,
                               size_t errlen)
{
	if (empty(model) && empty(platform) && empty(config) && empty(metric) && !release_wide)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "waiver \"%s\" has no selector (model, platform, config, metric) and "
		               "would waive the whole release; set release_wide to mean that",
		               waiver_id ? waiver_id : "");
	if (expires_us < 0 || expires_us > asked_us + PW_GATE_WAIVER_MAX_US)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "waiver \"%s\" expires more than 366 days after the request",
		               waiver_id ? waiver_id : "");
	return PW_OK;
}

pw_status pw_gate_pin_check(const char *waiver_id, bool pin, const char *model, bool release_wide,
                            const char *owner, int64_t expires_us, const char *signed_off_by,
                            const char *pin_release, const char *pin_artifact,
                            const char *release_id, char *errbuf, size_t errlen)
{
	const char *id = waiver_id ? waiver_id : "";
	if (!pin) {
		if (!empty(signed_off_by) || !empty(pin_artifact))
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "waiver \"%s\" has a pin sign-off or artifact but does not pin (set pin)",
			               id);
		return PW_OK;
	}
	if (empty(model) || release_wide)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "waiver \"%s\" pins to N-1 without naming the family (model selector); a pin "
		               "keeps one named family on N-1",
		               id);
	if (empty(owner) || expires_us <= 0)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "waiver \"%s\" pins \"%s\" to N-1 without an owner and an expiry", id, model);
	if (empty(signed_off_by))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "waiver \"%s\" pins \"%s\" to N-1 without a model-team sign-off "
		               "(pin_signed_off_by)",
		               id, model);
	if (empty(pin_release))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "waiver \"%s\" pins \"%s\" but names no N-1 release (pin_release, or the "
		               "request's baseline_release)",
		               id, model);
	if (release_id && strcmp(pin_release, release_id) == 0)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "waiver \"%s\" pins \"%s\" to \"%s\", the release under gate itself", id, model,
		               pin_release);
	return PW_OK;
}

pw_gate_wait pw_gate_wait_decide(const pw_gate_policy *policy, size_t n_families,
                                 const pw_gate_series_input *series, size_t n_series,
                                 const pw_gate_wait_clock *clock, pw_gate_wait_state *state)
{
	pw_gate_wait_state st = {.n_series = n_series};
	bool settling = clock->now_us < clock->settle_until_us;
	bool catching_up = clock->now_us < clock->catchup_until_us;
	size_t arrived = 0;
	for (size_t i = 0; i < n_series; i++) {
		const pw_gate_series_input *s = &series[i];
		bool gated = s->state == PW_GATE_STATE_ACTIVE || s->state == PW_GATE_STATE_BASELINING;
		arrived += s->n_cand;
		st.seen += (int64_t)s->n_cand + 1 + (s->state == PW_GATE_STATE_ACTIVE);
		if (gated && s->n_cand < pw_gate_series_wait_n(policy, s)) {
			st.short_runs++;
			st.planned_none += s->planned && s->n_cand == 0;
		}
		else if (gated && s->baseline_behind && catching_up)
			st.behind++;
		else if (s->state == PW_GATE_STATE_BASELINING && settling)
			st.baselining++;
	}
	if (settling || clock->families_named)
		for (size_t j = 0; j < n_families; j++) {
			bool any = false;
			for (size_t i = 0; i < n_series && !any; i++)
				any = series[i].family == j;
			st.no_series += !any;
		}
	st.planned_unmeasured = clock->planned_unmeasured;
	st.missing = st.short_runs + st.behind + st.baselining + st.no_series + st.planned_unmeasured;
	/* not one candidate run yet (an ingester stalled, or a release whose runs
	 * have not started, or that does not exist): nothing to decide on before
	 * the deadline */
	st.no_runs = arrived == 0;
	if (st.no_runs && st.missing == 0)
		st.missing = 1;
	if (state)
		*state = st;
	if (st.missing == 0)
		return PW_GATE_WAIT_READY;
	return clock->now_us >= clock->deadline_us ? PW_GATE_WAIT_DEADLINE : PW_GATE_WAIT_MORE;
}

pw_gate_wait_clock pw_gate_wait_late_clock(int64_t now_us, bool families_named,
                                           size_t planned_unmeasured)
{
	return (pw_gate_wait_clock){.now_us = now_us, .deadline_us = INT64_MAX,
	                            .settle_until_us = INT64_MIN, .catchup_until_us = INT64_MAX,
	                            .families_named = families_named,
	                            .planned_unmeasured = planned_unmeasured};
}

bool pw_gate_late_redecide(size_t decided_lacking, int64_t decided_seen,
                           const pw_gate_wait_state *now, const pw_gate_wait_state *prev)
{
	if (decided_lacking == 0 || now->seen <= decided_seen)
		return false;
	return now->missing == 0 ||
	       (prev && now->seen == prev->seen && now->missing == prev->missing);
}

/* "4m58s", "2h03m", "3d04h" of a duration in microseconds (>= 0). */
static void fmt_duration(char *buf, size_t len, int64_t us)
{
	int64_t s = us / 1000000;
	if (s < 3600)
		snprintf(buf, len, "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%" PRId64 "h%02" PRId64 "m", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, len, "%" PRId64 "d%02" PRId64 "h", s / 86400, s % 86400 / 3600);
}

int64_t pw_gate_next_poll_ms(size_t prev_missing, size_t missing, int64_t prev_interval_ms,
                             int64_t min_ms, int64_t max_ms)
{
	if (prev_missing == SIZE_MAX || prev_missing != missing || prev_interval_ms < min_ms)
		return min_ms;
	int64_t next = prev_interval_ms * 2;
	return next > max_ms ? (max_ms > min_ms ? max_ms : min_ms) : next;
}

size_t pw_gate_screen(pw_gate_series_input *series, size_t n_series, double *work)
{
	size_t n = 0;
	for (size_t i = 0; i < n_series; i++) {
		double median;
		if (series[i].n_base == 0 ||
		    pw_stats_median(series[i].base, series[i].n_base, work, &median) != PW_OK)
			continue;
		if (median == 0.0) {
			series[i].n_base = 0;
			n++;
		}
	}
	return n;
}

pw_status pw_gate_key_split(const char *key, pw_gate_key_parts *out)
{
	char *dst[5] = {out->model, out->hlo, out->platform, out->config, out->metric};
	memset(out, 0, sizeof *out);
	const char *p = key ? key : "";
	for (int i = 0; i < 5; i++) {
		const char *end = i < 4 ? strchr(p, '/') : p + strlen(p);
		if (!end)
			return PW_ERR_INVALID;
		size_t n = (size_t)(end - p);
		if (n == 0 || n >= sizeof out->model || (i == 4 && strchr(p, '/')))
			return PW_ERR_INVALID;
		memcpy(dst[i], p, n);
		dst[i][n] = '\0';
		p = end + (i < 4);
	}
	return PW_OK;
}

static bool selector_ok(const char *sel, const char *value)
{
	return !sel || !*sel || strcmp(sel, value) == 0;
}

bool pw_gate_waiver_matches(const pw_gate_waiver *w, const pw_gate_key_parts *k, int64_t now_us)
{
	return now_us < w->expires_unix_us && selector_ok(w->model, k->model) &&
	       selector_ok(w->platform, k->platform) && selector_ok(w->config, k->config) &&
	       selector_ok(w->metric, k->metric);
}

static bool failing_series(pw_gate_series_verdict v)
{
	return v == PW_GATE_SERIES_REGRESSED || v == PW_GATE_SERIES_NUMERICS_CHANGED ||
	       v == PW_GATE_SERIES_INSUFFICIENT_DATA ||
	       v == PW_GATE_SERIES_BASELINING;
}

static bool waiver_covers(const pw_gate_waiver *w, int64_t now_us, size_t fam,
                          const pw_gate_family_input *family, const pw_gate_series_input *series,
                          const pw_gate_series_result *results, size_t n_series)
{
	if (now_us >= w->expires_unix_us || !selector_ok(w->model, family->name))
		return false;
	size_t failing = 0;
	for (size_t i = 0; i < n_series; i++) {
		if (series[i].family != fam || !failing_series(results[i].verdict))
			continue;
		failing++;
		pw_gate_key_parts k;
		if (pw_gate_key_split(series[i].series, &k) != PW_OK) {
			/* a key we cannot read matches only a waiver with no selectors */
			if ((w->platform && *w->platform) || (w->config && *w->config) ||
			    (w->metric && *w->metric))
				return false;
			continue;
		}
		strcpy(k.model, family->name);
		if (!pw_gate_waiver_matches(w, &k, now_us))
			return false;
	}
	if (failing == 0)
		return !(w->platform && *w->platform) && !(w->config && *w->config) &&
		       !(w->metric && *w->metric);
	return true;
}

size_t pw_gate_waivers_resolve(const pw_gate_waiver *w, size_t nw, int64_t now_us,
                               const pw_gate_family_input *families, size_t n_families,
                               const pw_gate_series_input *series,
                               const pw_gate_series_result *results, size_t n_series,
                               const pw_gate_family_result *family_results, bool *waived,
                               size_t *waiver_of)
{
	size_t n = 0;
	for (size_t j = 0; j < n_families; j++) {
		waived[j] = false;
		waiver_of[j] = SIZE_MAX;
		pw_gate_family_verdict v = family_results[j].unwaived;
		if (v == PW_GATE_FAMILY_PASS || v == PW_GATE_FAMILY_VALIDATED_WIN)
			continue;
		for (size_t k = 0; k < nw; k++) {
			if (waiver_covers(&w[k], now_us, j, &families[j], series, results, n_series)) {
				waived[j] = true;
				waiver_of[j] = k;
				n++;
				break;
			}
		}
	}
	return n;
}

pw_status pw_gate_decide(const pw_gate_policy *policy, pw_gate_family_input *families,
                         size_t n_families, const pw_gate_series_input *series, size_t n_series,
                         const pw_gate_waiver *w, size_t nw, int64_t now_us,
                         pw_gate_series_result *series_out, pw_gate_family_result *family_out,
                         pw_gate_release_result *release, pw_gate_outcome *outcomes,
                         size_t *waiver_of, char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	bool *waived = calloc(n_families + 1, sizeof *waived);
	if (!waived)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory deciding %zu families",
		               n_families);
	for (size_t j = 0; j < n_families; j++)
		families[j].waived = false;
	st = pw_gate_evaluate(policy, families, n_families, series, n_series, series_out, family_out,
	                      release, errbuf, errlen);
	if (st != PW_OK)
		goto out;
	size_t n_waived = pw_gate_waivers_resolve(w, nw, now_us, families, n_families, series,
	                                          series_out, n_series, family_out, waived, waiver_of);
	if (n_waived > 0) {
		for (size_t j = 0; j < n_families; j++)
			families[j].waived = waived[j];
		st = pw_gate_evaluate(policy, families, n_families, series, n_series, series_out,
		                      family_out, release, errbuf, errlen);
		if (st != PW_OK)
			goto out;
	}
	for (size_t i = 0; i < n_series; i++)
		outcomes[i] = pw_gate_series_outcome(policy, &series[i], &series_out[i],
		                                     &family_out[series[i].family]);
out:
	free(waived);
	return st;
}

/* A bounded appender: keeps the text NUL-terminated and marks truncation. */
typedef struct sbuf {
	char *buf;
	size_t len, used;
	bool cut;
} sbuf;

static void sb_printf(sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(sbuf *sb, const char *fmt, ...)
{
	if (sb->cut || sb->len == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(sb->buf + sb->used, sb->len - sb->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sb->len - sb->used) {
		sb->cut = true;
		if (sb->len >= 4)
			strcpy(sb->buf + sb->len - 4, "...");
		return;
	}
	sb->used += (size_t)n;
}

static const char *upper_name(pw_gate_outcome o)
{
	switch (o) {
	case PW_GATE_OUT_BLOCKING: return "BLOCKING";
	case PW_GATE_OUT_P1: return "P1";
	case PW_GATE_OUT_PASS: return "PASS";
	case PW_GATE_OUT_VALIDATED_WIN: return "VALIDATED_WIN";
	case PW_GATE_OUT_FROZEN: return "FROZEN";
	case PW_GATE_OUT_QUARANTINED: return "QUARANTINED";
	case PW_GATE_OUT_INSUFFICIENT_DATA: return "INSUFFICIENT_DATA";
	case PW_GATE_OUT_INVESTIGATE: return "INVESTIGATE";
	case PW_GATE_OUT_TREND: return "TREND";
	case PW_GATE_OUT_WAIVED: return "WAIVED";
	case PW_GATE_OUT_UNDER_POWERED: return "UNDER_POWERED";
	}
	return "UNKNOWN";
}

void pw_gate_summary(char *buf, size_t len, const pw_gate_policy *policy,
                     const pw_gate_family_input *families, const pw_gate_family_result *fr,
                     size_t n_families, const pw_gate_series_input *series,
                     const pw_gate_series_result *sr, size_t n_series,
                     const pw_gate_release_result *release)
{
	sbuf sb = {buf, len, 0, false};
	if (len)
		buf[0] = '\0';
	pw_gate_outcome overall = pw_gate_family_outcome(release->verdict);
	sb_printf(&sb, "%s:", upper_name(overall));
	size_t named = 0;
	for (size_t j = 0; j < n_families; j++) {
		pw_gate_outcome o = pw_gate_family_outcome(fr[j].verdict);
		if ((o == PW_GATE_OUT_BLOCKING || o == PW_GATE_OUT_P1) && fr[j].inherited)
			sb_printf(&sb, "%s %s%s (through %s)", named ? ";" : "",
			          o == PW_GATE_OUT_P1 && overall != PW_GATE_OUT_P1 ? "P1 " : "",
			          families[j].name, families[j].inherits_from);
		else if ((o == PW_GATE_OUT_BLOCKING || o == PW_GATE_OUT_P1) && fr[j].n_numerics_changed)
			/* §9: a win that is not one; its Δ is an improvement, no fleet impact */
			sb_printf(&sb, "%s %s (%zu series, %.2f%% fleet; %zu series " PW_GATE_NUMERICS_REASON
			          ")", named ? ";" : "", families[j].name, fr[j].n_regressed,
			          fr[j].impact_pct, fr[j].n_numerics_changed);
		else if (o == PW_GATE_OUT_BLOCKING || o == PW_GATE_OUT_P1)
			sb_printf(&sb, "%s %s%s (%zu series, %.2f%% fleet)", named ? ";" : "",
			          o == PW_GATE_OUT_P1 && overall != PW_GATE_OUT_P1 ? "P1 " : "",
			          families[j].name, fr[j].n_regressed, fr[j].impact_pct);
		else if (o == PW_GATE_OUT_WAIVED)
			sb_printf(&sb, "%s %s waived (would be %s)", named ? ";" : "", families[j].name,
			          upper_name(pw_gate_family_outcome(fr[j].unwaived)));
		else
			continue;
		named++;
	}
	for (size_t j = 0; j < n_families; j++) {
		if (fr[j].n_series != 0 || fr[j].inherited)
			continue;
		sb_printf(&sb, "%s %s has no measured series", named ? ";" : "", families[j].name);
		named++;
	}
	/* what the plan of the candidate's sweep lists and did not arrive: missing,
	 * not absent from the release (docs/gate.md, "Planned runs"), per family,
	 * before the list of series lacking data (which names the active ones) */
	size_t planned = 0;
	for (size_t j = 0; j < n_families; j++) {
		size_t k = 0;
		const char *first = NULL;
		for (size_t i = 0; i < n_series; i++) {
			bool gated = series[i].state == PW_GATE_STATE_ACTIVE ||
			             series[i].state == PW_GATE_STATE_BASELINING;
			if (series[i].family != j || !series[i].planned || !gated || series[i].n_cand != 0 ||
			    sr[i].verdict == PW_GATE_SERIES_INSUFFICIENT_DATA)
				continue;
			first = first ? first : series[i].series;
			k++;
		}
		if (k)
			sb_printf(&sb, "%s %s: %zu planned series without a candidate run (%s%s)",
			          named || planned ? ";" : "", families[j].name, k, first, k > 1 ? ", ..." : "");
		planned += k > 0;
		if (families[j].planned_unmeasured)
			sb_printf(&sb, "%s %s: %zu planned benchmark%s never measured",
			          named || planned ? ";" : "", families[j].name, families[j].planned_unmeasured,
			          families[j].planned_unmeasured == 1 ? "" : "s");
		planned += families[j].planned_unmeasured > 0;
	}
	size_t lacking = 0;
	for (size_t i = 0; i < n_series; i++) {
		if (sr[i].verdict != PW_GATE_SERIES_INSUFFICIENT_DATA)
			continue;
		size_t need = pw_gate_series_min_n(policy, &series[i]);
		if (lacking == 0)
			sb_printf(&sb, "%s lacks data:", named || planned ? ";" : "");
		if (series[i].n_base < policy->min_baseline_n)
			sb_printf(&sb, "%s %s (baseline %zu/%zu runs)", lacking ? "," : "",
			          series[i].series, series[i].n_base, policy->min_baseline_n);
		else
			sb_printf(&sb, "%s %s (%zu/%zu runs%s)", lacking ? "," : "", series[i].series,
			          series[i].n_cand, need, series[i].planned ? ", planned" : "");
		lacking++;
	}
	if (named == 0 && lacking == 0 && planned == 0)
		sb_printf(&sb, " %zu families, %zu tests, %.2f%% fleet impact", n_families,
		          release->n_tests, release->aggregate_impact_pct);
	/* the plan's inheritances (docs/gate.md, "Inherited verdicts") */
	for (size_t j = 0; j < n_families; j++)
		if (families[j].inherits_from && families[j].inherits_from[0])
			sb_printf(&sb, "; %s inherits from %s, similarity %.2f%s", families[j].name,
			          families[j].inherits_from, families[j].inherit_similarity,
			          fr[j].inherited     ? ""
			          : fr[j].n_with_runs ? " (decided on its own runs)"
			                              : " (representative not gated)");
	/* what the verdict cannot say: series tested with too few runs, and the
	 * band a GPU benchmark does not certify (§4.5) */
	size_t under = 0, gpu = 0;
	double gpu_low = policy->mde_gpu_pct;
	for (size_t i = 0; i < n_series; i++) {
		under += sr[i].verdict == PW_GATE_SERIES_UNDER_POWERED;
		if (sr[i].tested && series[i].gpu) {
			gpu++;
			double tier = series[i].tier == PW_GATE_TIER_TOP ? policy->mde_top_pct
			                                                 : policy->mde_tail_pct;
			gpu_low = tier < gpu_low ? tier : gpu_low;
		}
	}
	if (under)
		sb_printf(&sb, "; %zu series under-powered (fewer candidate runs than their noise "
		          "needs for the MDE)", under);
	if (gpu && gpu_low < policy->mde_gpu_pct)
		sb_printf(&sb, "; GPU series certified at MDE %g%%: the %g-%g%% band is the production "
		          "canary's", policy->mde_gpu_pct, gpu_low, policy->mde_gpu_pct);
}

pw_status pw_gate_power_table(FILE *out, const pw_gate_policy *policy, double tpu_sigma_pct,
                              double gpu_sigma_pct)
{
	double factor;
	if (!(tpu_sigma_pct > 0.0) || !(gpu_sigma_pct > 0.0) ||
	    pw_stats_power_n(1.0, 1.0, PW_POWER_ALPHA, PW_POWER_TARGET, false, &factor) != PW_OK)
		return PW_ERR_INVALID;
	fprintf(out, "Power per tier (§4.5): n = max(floor, ceil(%.2f*(sigma/MDE)^2)), "
	             "alpha %g two-sided, power %g (pw_stats_required_n)\n\n",
	        factor, PW_POWER_ALPHA, PW_POWER_TARGET);
	fprintf(out, "| tier | platform | sigma (norm) | MDE | %.2f*(sigma/MDE)^2 | floor | required n | "
	             "band the production canary owns |\n|---|---|---|---|---|---|---|---|\n",
	        factor);
	for (int gpu = 0; gpu < 2; gpu++)
		for (int t = 0; t < 2; t++) {
			pw_gate_series_input in = {.tier = t ? PW_GATE_TIER_TAIL : PW_GATE_TIER_TOP,
			                           .gpu = gpu};
			double sigma = gpu ? gpu_sigma_pct : tpu_sigma_pct;
			double tier_mde = t ? policy->mde_tail_pct : policy->mde_top_pct;
			double mde = pw_gate_series_mde(policy, &in);
			size_t floor_n = pw_gate_series_min_n(policy, &in);
			unsigned n;
			double real;
			if (pw_stats_power_n(sigma, mde, PW_POWER_ALPHA, PW_POWER_TARGET, false, &real) !=
			        PW_OK ||
			    pw_stats_required_n(sigma, mde, PW_POWER_ALPHA, PW_POWER_TARGET,
			                        (unsigned)floor_n, &n) != PW_OK)
				return PW_ERR_INVALID;
			char band[64] = "-";
			if (mde > tier_mde)
				snprintf(band, sizeof band, "%g-%g%%", tier_mde, mde);
			fprintf(out, "| %s | %s | %.2f%% | %.2f%% | %.2f | %zu | %u | %s |\n",
			        t ? "tail" : "top", gpu ? "GPU" : "TPU", sigma, mde, real, floor_n, n, band);
		}
	double real;
	unsigned n;
	if (pw_stats_power_n(gpu_sigma_pct, policy->mde_top_pct, PW_POWER_ALPHA, PW_POWER_TARGET,
	                     false, &real) == PW_OK &&
	    pw_stats_required_n(gpu_sigma_pct, policy->mde_top_pct, PW_POWER_ALPHA, PW_POWER_TARGET,
	                        (unsigned)policy->min_candidate_n, &n) == PW_OK)
		fprintf(out, "\nGPU at the top tier's own MDE %.2f%%: %.2f -> %u runs a series, not "
		             "affordable: GPU series are certified at %.2f%%, and the band below is the "
		             "production canary's (big N from live traffic).\n",
		        policy->mde_top_pct, real, n, policy->mde_gpu_pct);
	fprintf(out, "Each series' own n comes from its own sigma (its baseline's MAD_n/median) and is "
	             "published with its baseline (Baseline.required_n_top, required_n_tail); a series "
	             "tested with fewer candidate runs and nothing significant is UNDER_POWERED.\n");
	return PW_OK;
}

void pw_gate_wait_describe(char *buf, size_t len, const pw_gate_wait_state *st,
                           int64_t deadline_us, int64_t now_us)
{
	sbuf sb = {buf, len, 0, false};
	if (len)
		buf[0] = '\0';
	if (st->missing == 0) {
		sb_printf(&sb, "complete");
		return;
	}
	const char *sep = "";
	if (st->no_runs) {
		sb_printf(&sb, "no candidate run yet");
		sep = ", ";
	}
	if (st->short_runs) {
		sb_printf(&sb, "%s%zu of %zu series short of candidate runs", sep, st->short_runs,
		          st->n_series);
		if (st->planned_none)
			sb_printf(&sb, " (%zu planned, none arrived)", st->planned_none);
		sep = ", ";
	}
	if (st->behind) {
		sb_printf(&sb, "%s%zu baseline%s behind", sep, st->behind, st->behind == 1 ? "" : "s");
		sep = ", ";
	}
	if (st->baselining) {
		sb_printf(&sb, "%s%zu series baselining", sep, st->baselining);
		sep = ", ";
	}
	if (st->no_series) {
		sb_printf(&sb, "%s%zu famil%s without series", sep, st->no_series,
		          st->no_series == 1 ? "y" : "ies");
		sep = ", ";
	}
	if (st->planned_unmeasured)
		sb_printf(&sb, "%s%zu planned benchmark%s never measured", sep, st->planned_unmeasured,
		          st->planned_unmeasured == 1 ? "" : "s");
	if (deadline_us == INT64_MAX)
		return;
	char d[32];
	fmt_duration(d, sizeof d, now_us < deadline_us ? deadline_us - now_us : now_us - deadline_us);
	sb_printf(&sb, now_us < deadline_us ? " (deadline in %s)" : " (deadline passed %s ago)", d);
}

/* ------------------------------------------------------------------ P1 tickets */

bool pw_gate_p1_files(pw_gate_outcome o, const pw_gate_series_result *r)
{
	return o == PW_GATE_OUT_P1 && r && r->tested && r->verdict == PW_GATE_SERIES_REGRESSED &&
	       r->worse_pct > 0.0;
}

size_t pw_gate_drift_select(const char *release_id, int64_t requested_us, pw_gate_p1_ticket *t,
                            size_t n, const int64_t *series_ids, size_t n_series)
{
	size_t kept = 0;
	for (size_t k = 0; k < n; k++) {
		if (!t[k].found_release || strcmp(t[k].found_release, release_id) == 0 ||
		    t[k].found_us >= requested_us)
			continue;
		bool gated = false;
		for (size_t i = 0; i < n_series && !gated; i++)
			gated = series_ids[i] == t[k].series_id;
		if (!gated)
			continue;
		pw_gate_p1_ticket d = t[k];
		d.age_s = (requested_us - d.found_us) / 1000000;
		t[kept++] = d;
	}
	return kept;
}

void pw_gate_drift_line(char *buf, size_t len, const pw_gate_p1_ticket *t)
{
	char age[32];
	fmt_duration(age, sizeof age, t->age_s * 1000000);
	snprintf(buf, len,
	         "WARN compounding drift: P1-%" PRId64 " %s (%+.1f%%) open since %s, %s, due by this RC",
	         t->ticket_id, t->series_key ? t->series_key : "", t->effect_pct,
	         t->found_release ? t->found_release : "", age);
}

void pw_gate_drift_summary(char *buf, size_t len, const pw_gate_p1_ticket *t, size_t n)
{
	if (n == 0 || len == 0)
		return;
	size_t used = strnlen(buf, len - 1);
	buf[used] = '\0';
	sbuf sb = {.buf = buf, .len = len, .used = used};
	sb_printf(&sb, "; WARN compounding drift: %zu open P1 ticket%s from earlier releases (", n,
	          n == 1 ? "" : "s");
	for (size_t k = 0; k < n; k++)
		sb_printf(&sb, "%sP1-%" PRId64, k ? ", " : "", t[k].ticket_id);
	sb_printf(&sb, ")");
}
