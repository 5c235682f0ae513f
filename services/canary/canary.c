/*
 * canary.c: the canary's decisions (canary.h).
 */
#include "canary.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const metric_names[PW_CANARY_NMETRICS] = {"tpot", "ttft", "goodput"};

const char *pw_canary_metric_name(pw_canary_metric m)
{
	return (unsigned)m < PW_CANARY_NMETRICS ? metric_names[m] : "unknown";
}

bool pw_canary_metric_parse(const char *s, pw_canary_metric *out)
{
	for (int i = 0; s && i < PW_CANARY_NMETRICS; i++)
		if (strcmp(s, metric_names[i]) == 0) {
			*out = (pw_canary_metric)i;
			return true;
		}
	return false;
}

pw_compare_direction pw_canary_metric_direction(pw_canary_metric m)
{
	return m == PW_CANARY_GOODPUT ? PW_COMPARE_HIGHER_IS_BETTER : PW_COMPARE_LOWER_IS_BETTER;
}

const char *pw_canary_decision_name(pw_canary_decision d)
{
	switch (d) {
	case PW_CANARY_HOLD: return "HOLD";
	case PW_CANARY_PROMOTE: return "PROMOTE";
	case PW_CANARY_ROLLBACK: return "ROLLBACK";
	}
	return "unknown";
}

void pw_canary_params_default(pw_canary_params *p)
{
	memset(p, 0, sizeof *p);
	p->alpha = 0.05;
	p->mde_tpu_pct = 1.0;
	p->mde_gpu_pct = 2.0;
	p->tolerance_frac = PW_CS_TOLERANCE_FRAC;
	p->pilot_windows = 12;
	p->horizon_us = 48LL * 3600 * 1000000;
}

pw_status pw_canary_params_family_mde(pw_canary_params *p, const char *spec, char *errbuf,
                                      size_t errlen)
{
	p->nfamily_mde = 0;
	const char *s = spec ? spec : "";
	while (*s) {
		while (*s == ' ' || *s == ',')
			s++;
		if (!*s)
			break;
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		const char *eq = memchr(s, '=', len);
		if (!eq)
			return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
			               "canary.mde.families: \"%.*s\" is not family=percent", (int)(len > 60 ? 60 : len), s);
		size_t flen = (size_t)(eq - s);
		while (flen && s[flen - 1] == ' ')
			flen--;
		if (flen == 0 || flen > PW_CANARY_NAME_MAX || memchr(s, '/', flen))
			return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
			               "canary.mde.families: family \"%.*s\" is empty, longer than %d bytes or holds '/'",
			               (int)(flen > 60 ? 60 : flen), s, PW_CANARY_NAME_MAX);
		char num[64];
		size_t nlen = (size_t)(s + len - (eq + 1));
		if (nlen >= sizeof num)
			return pw_fail(PW_ERR_CONFIG, errbuf, errlen, "canary.mde.families: the percent of \"%.*s\" is too long",
			               (int)flen, s);
		memcpy(num, eq + 1, nlen);
		num[nlen] = 0;
		char *e;
		double v = strtod(num, &e);
		while (*e == ' ')
			e++;
		if (e == num || *e || !isfinite(v) || v <= 0 || v > 100)
			return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
			               "canary.mde.families: \"%s\" for family \"%.*s\" is not a percent in (0, 100]", num,
			               (int)flen, s);
		if (p->nfamily_mde == PW_CANARY_FAMILY_MDE_MAX)
			return pw_fail(PW_ERR_CONFIG, errbuf, errlen, "canary.mde.families: more than %d families",
			               PW_CANARY_FAMILY_MDE_MAX);
		pw_canary_family_mde *fm = &p->family_mde[p->nfamily_mde++];
		memcpy(fm->family, s, flen);
		fm->family[flen] = 0;
		fm->mde_pct = v;
		s += len;
	}
	return PW_OK;
}

double pw_canary_mde_pct(const pw_canary_params *p, const char *family, bool gpu)
{
	for (size_t i = 0; family && i < p->nfamily_mde; i++)
		if (strcmp(p->family_mde[i].family, family) == 0)
			return p->family_mde[i].mde_pct;
	return gpu ? p->mde_gpu_pct : p->mde_tpu_pct;
}

void pw_canary_family_release(pw_canary_family *f)
{
	if (!f)
		return;
	for (int i = 0; i < PW_CANARY_NMETRICS; i++)
		pw_cs_free(f->m[i].cs);
	memset(f, 0, sizeof *f);
}

pw_status pw_canary_family_init(pw_canary_family *f, double alpha, double mde_pct, double tolerance_pct,
                                size_t pilot_windows, int64_t horizon_us)
{
	memset(f, 0, sizeof *f);
	if (horizon_us <= 0)
		return PW_ERR_INVALID;
	f->alpha = alpha;
	f->mde_pct = mde_pct;
	f->tolerance_pct = tolerance_pct;
	f->pilot_windows = pilot_windows;
	f->horizon_us = horizon_us;
	for (int i = 0; i < PW_CANARY_NMETRICS; i++) {
		pw_cs_opts o;
		pw_cs_opts_init(&o);
		o.direction = pw_canary_metric_direction((pw_canary_metric)i);
		o.alpha = alpha;
		o.mde_pct = mde_pct;
		o.tolerance_pct = tolerance_pct;
		o.pilot_windows = pilot_windows;
		pw_status st = pw_cs_new(&o, &f->m[i].cs);
		if (st != PW_OK) {
			pw_canary_family_release(f);
			return st;
		}
		pw_cs_current(f->m[i].cs, &f->m[i].last);
	}
	return PW_OK;
}

/* Decides f after a window of metric m at start_us, by the rule of canary.h. */
static void decide(pw_canary_family *f, pw_canary_metric m, int64_t start_us)
{
	const pw_canary_metric_state *ms = &f->m[m];
	if (ms->last.decision == PW_CS_REGRESSION) {
		f->decision = PW_CANARY_ROLLBACK;
		f->metric = m;
		f->decided = ms->last;
	} else {
		bool all = true;
		for (int i = 0; i < PW_CANARY_NMETRICS; i++)
			all = all && f->m[i].verdict == PW_CS_NO_REGRESSION;
		if (all) {
			f->decision = PW_CANARY_PROMOTE;
			f->metric = m;
			f->decided = ms->at_verdict;
		} else if (f->last_end_us - f->first_start_us >= f->horizon_us) {
			/* the least settled metric: the first without a verdict (by name order) */
			pw_canary_metric least = m;
			for (int i = PW_CANARY_NMETRICS - 1; i >= 0; i--)
				if (f->m[i].verdict != PW_CS_NO_REGRESSION)
					least = (pw_canary_metric)i;
			f->decision = PW_CANARY_HOLD;
			f->inconclusive = true;
			f->metric = least;
			f->decided = f->m[least].last;
		} else {
			return;
		}
	}
	f->final = true;
	f->decided_start_us = start_us;
}

pw_status pw_canary_family_add(pw_canary_family *f, pw_canary_metric m, int64_t start_us,
                               uint32_t window_s, double canary, double baseline, bool *decided)
{
	if (decided)
		*decided = false;
	if ((unsigned)m >= PW_CANARY_NMETRICS || start_us <= 0 || window_s == 0 || !isfinite(canary) ||
	    !isfinite(baseline) || canary <= 0 || baseline <= 0)
		return PW_ERR_INVALID;
	pw_canary_metric_state *ms = &f->m[m];
	if (ms->windows > 0 && start_us <= ms->last_start_us)
		return PW_ERR_CONFLICT;
	pw_cs_result r;
	pw_status st = pw_cs_add(ms->cs, canary, baseline, &r);
	if (st != PW_OK)
		return st;
	ms->last = r;
	ms->windows++;
	ms->last_start_us = start_us;
	if (ms->verdict == PW_CS_INSUFFICIENT_DATA &&
	    (r.decision == PW_CS_REGRESSION || r.decision == PW_CS_NO_REGRESSION)) {
		ms->verdict = r.decision;
		ms->at_verdict = r;
		ms->verdict_start_us = start_us;
	}
	int64_t end_us = start_us + (int64_t)window_s * 1000000;
	if (f->windows == 0 || start_us < f->first_start_us)
		f->first_start_us = start_us;
	if (end_us > f->last_end_us)
		f->last_end_us = end_us;
	f->windows++;
	if (!f->final) {
		decide(f, m, start_us);
		if (f->final && decided)
			*decided = true;
	}
	return PW_OK;
}

pw_canary_pin_action pw_canary_pin_step(const pw_canary_pin_state *s)
{
	if (s->decision_recorded)
		return PW_CANARY_PIN_NONE;
	if (s->pinned && !s->pin_expired)
		return PW_CANARY_PIN_HOLD;
	if (s->live && (!s->pinned || !s->live_is_recorded))
		return PW_CANARY_PIN_RECORD;
	return PW_CANARY_PIN_NONE;
}

const char *pw_canary_pin_action_name(pw_canary_pin_action a)
{
	switch (a) {
	case PW_CANARY_PIN_NONE: return "NONE";
	case PW_CANARY_PIN_RECORD: return "RECORD";
	case PW_CANARY_PIN_HOLD: return "HOLD";
	}
	return "?";
}
