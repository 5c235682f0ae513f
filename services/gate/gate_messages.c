/*
 * gate_messages.c: GateVerdict and Alert messages of an evaluated release.
 * See gate_messages.h; the field meanings are proto/perfwatch/v1/gate.proto's
 * and alert.proto's comments.
 */
#include "gate_messages.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pw_topics.h"

#define GATE_SCOPE_MAX 16

static double finite_or_zero(double x)
{
	return isfinite(x) ? x : 0.0;
}

static Perfwatch__V1__Tier tier_proto(pw_gate_tier t)
{
	return t == PW_GATE_TIER_TOP ? PERFWATCH__V1__TIER__TIER_TOP : PERFWATCH__V1__TIER__TIER_TAIL;
}

static bool alert_worthy(pw_gate_outcome o)
{
	return o == PW_GATE_OUT_BLOCKING || o == PW_GATE_OUT_P1 || o == PW_GATE_OUT_INVESTIGATE;
}

static char *fmt(pw_gate_release *r, const char *f, ...) __attribute__((format(printf, 2, 3)));

static char *fmt(pw_gate_release *r, const char *f, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, f);
	vsnprintf(buf, sizeof buf, f, ap);
	va_end(ap);
	return pw_gate_release_strdup(r, buf);
}

/* The series as artifact 3 names it in a scope list: model/platform/config. */
static char *scope_name(pw_gate_release *r, size_t i, bool with_delta)
{
	const pw_gate_series_meta *m = &r->meta[i];
	if (with_delta)
		return fmt(r, "%s/%s/%s/%s: %+.1f%%", m->model, m->platform, m->config, m->metric,
		           finite_or_zero(r->sr[i].cmp.delta_pct));
	return fmt(r, "%s/%s/%s/%s", m->model, m->platform, m->config, m->metric);
}

static pw_status build_alert(pw_gate_release *r, size_t i, const char *page_route,
                             Perfwatch__V1__Alert **out)
{
	const pw_gate_series_input *in = &r->series[i];
	const pw_gate_series_result *s = &r->sr[i];
	const pw_gate_series_meta *m = &r->meta[i];
	pw_gate_outcome o = r->series_out[i];

	Perfwatch__V1__Alert *a = pw_gate_release_alloc(r, sizeof *a);
	Perfwatch__V1__SeriesKey *k = pw_gate_release_alloc(r, sizeof *k);
	Perfwatch__V1__AlertBaseline *b = pw_gate_release_alloc(r, sizeof *b);
	Perfwatch__V1__AlertObserved *ob = pw_gate_release_alloc(r, sizeof *ob);
	Perfwatch__V1__AlertDelta *d = pw_gate_release_alloc(r, sizeof *d);
	Perfwatch__V1__AlertEffectGate *e = pw_gate_release_alloc(r, sizeof *e);
	Perfwatch__V1__AlertScope *sc = pw_gate_release_alloc(r, sizeof *sc);
	char **corr = pw_gate_release_alloc(r, GATE_SCOPE_MAX * sizeof *corr);
	char **clean = pw_gate_release_alloc(r, GATE_SCOPE_MAX * sizeof *clean);
	if (!a || !k || !b || !ob || !d || !e || !sc || !corr || !clean)
		return PW_ERR_NOMEM;
	*a = (Perfwatch__V1__Alert)PERFWATCH__V1__ALERT__INIT;
	*k = (Perfwatch__V1__SeriesKey)PERFWATCH__V1__SERIES_KEY__INIT;
	*b = (Perfwatch__V1__AlertBaseline)PERFWATCH__V1__ALERT_BASELINE__INIT;
	*ob = (Perfwatch__V1__AlertObserved)PERFWATCH__V1__ALERT_OBSERVED__INIT;
	*d = (Perfwatch__V1__AlertDelta)PERFWATCH__V1__ALERT_DELTA__INIT;
	*e = (Perfwatch__V1__AlertEffectGate)PERFWATCH__V1__ALERT_EFFECT_GATE__INIT;
	*sc = (Perfwatch__V1__AlertScope)PERFWATCH__V1__ALERT_SCOPE__INIT;

	a->alert_id = fmt(r, "gate-%s-e%" PRIu32 "-s%" PRId64, r->release_id, r->evaluation,
	                  m->series_id);
	a->revision = 1;
	a->kind = o == PW_GATE_OUT_INVESTIGATE ? PERFWATCH__V1__ALERT_KIND__ALERT_KIND_IMPROVEMENT
	                                       : PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION;
	a->source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_GATE;
	a->created_unix_us = r->evaluated_us;
	a->series_id = m->series_id;
	a->series_key = (char *)m->key;
	pw_gate_key_parts parts;
	if (pw_gate_key_split(m->key, &parts) == PW_OK)
		k->hlo_fingerprint = pw_gate_release_strdup(r, parts.hlo);
	k->model = (char *)m->model;
	k->platform = (char *)m->platform;
	k->config = (char *)m->config;
	k->metric = (char *)m->metric;
	a->series = k;

	b->median = s->cmp.median_base;
	b->mad = s->cmp.mad_base;
	b->n = (uint32_t)in->n_base;
	b->version = (uint32_t)m->baseline_version;
	b->window_start_unix_us = m->window_start_us;
	b->window_end_unix_us = m->window_end_us;
	if (m->baseline_from_window && m->window_start_us && m->window_end_us) {
		time_t ws = (time_t)(m->window_start_us / 1000000), we = (time_t)(m->window_end_us / 1000000);
		struct tm a, z;
		gmtime_r(&ws, &a);
		gmtime_r(&we, &z);
		b->window = fmt(r, "%04d-%02d-%02d..%02d-%02d", a.tm_year + 1900, a.tm_mon + 1, a.tm_mday,
		                z.tm_mon + 1, z.tm_mday);
	} else {
		b->window = fmt(r, "%s", r->baseline_release);
	}
	a->baseline = b;
	ob->median = s->cmp.median_cand;
	ob->n = (uint32_t)in->n_cand;
	ob->release = (char *)r->candidate_build_id;
	a->observed = ob;
	d->abs = s->cmp.median_cand - s->cmp.median_base;
	d->abs_unit = (char *)m->unit;
	d->pct = s->cmp.delta_pct;
	d->z_robust = s->cmp.mad_base > 0.0 ? d->abs / s->cmp.mad_base : 0.0;
	d->fdr_q = s->q;
	a->delta = d;
	e->mde_pct = pw_gate_series_mde(&r->policy, in);
	e->two_sigma_pct = s->cmp.two_sigma_pct;
	e->passed_min_effect = s->cmp.effect_filter_passed;
	e->effect_pct = s->cmp.effect_pct; /* what passed_min_effect tested */
	e->practical_pct = s->cmp.practical_pct;
	e->noise_floor_pct = s->cmp.noise_floor_pct;
	e->threshold_pct = s->cmp.threshold_pct;
	a->effect_gate = e;
	char filter[160];
	pw_compare_filter_text(filter, sizeof filter, "effect", e->effect_pct,
	                       r->policy.practical_frac, e->practical_pct, r->policy.noise_k,
	                       e->noise_floor_pct);

	/* scope: the family's other moving series, and the ones that did not move */
	for (size_t j = 0; j < r->n_series; j++) {
		if (j == i || r->series[j].family != in->family)
			continue;
		pw_gate_outcome oj = r->series_out[j];
		if ((oj == PW_GATE_OUT_BLOCKING || oj == PW_GATE_OUT_P1 || oj == PW_GATE_OUT_WAIVED) &&
		    sc->n_correlated_series < GATE_SCOPE_MAX)
			corr[sc->n_correlated_series++] = scope_name(r, j, true);
		else if (oj == PW_GATE_OUT_PASS && sc->n_clean_series < GATE_SCOPE_MAX)
			clean[sc->n_clean_series++] = scope_name(r, j, false);
	}
	for (size_t j = 0; j < sc->n_correlated_series; j++)
		if (!corr[j])
			return PW_ERR_NOMEM;
	for (size_t j = 0; j < sc->n_clean_series; j++)
		if (!clean[j])
			return PW_ERR_NOMEM;
	sc->correlated_series = corr;
	sc->clean_series = clean;
	a->scope = sc;

	a->verdict = (Perfwatch__V1__Verdict)o;
	bool pages = (o == PW_GATE_OUT_BLOCKING || o == PW_GATE_OUT_P1) &&
	             in->tier == PW_GATE_TIER_TOP;
	a->routing = pages ? PERFWATCH__V1__ROUTING__ROUTING_PAGE : PERFWATCH__V1__ROUTING__ROUTING_QUEUE;
	a->page = pages ? (char *)page_route : "";
	a->owner_hint = "";
	a->release_id = (char *)r->release_id;
	a->summary = s->verdict == PW_GATE_SERIES_NUMERICS_CHANGED
	                 ? fmt(r, "%s %s: " PW_GATE_NUMERICS_REASON " (%+.2f%% on %s, numerics %s, "
	                          "baseline %s)",
	                       pw_gate_outcome_name(o), m->key, s->cmp.delta_pct,
	                       r->candidate_build_id, s->numerics.candidate, s->numerics.baseline)
	             : o == PW_GATE_OUT_INVESTIGATE
	                 ? fmt(r, "INVESTIGATE %s: unregistered improvement %+.2f%% on %s (q=%.2g)",
	                       m->key, s->cmp.delta_pct, r->candidate_build_id, s->q)
	                 : fmt(r, "%s %s: %+.2f%% on %s, %s, q=%.2g", pw_gate_outcome_name(o), m->key,
	                       s->cmp.delta_pct, r->candidate_build_id, filter, s->q);
	if (!a->alert_id || !b->window || !a->summary)
		return PW_ERR_NOMEM;
	*out = a;
	return PW_OK;
}

static pw_status pack_into(pw_gate_release *r, const ProtobufCMessage *m, pw_gate_outbox_msg *msg,
                           const char *topic, const char *key)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = pw_gate_release_alloc(r, len + 1);
	if (!buf)
		return PW_ERR_NOMEM;
	protobuf_c_message_pack(m, buf);
	msg->topic = topic;
	msg->key = key;
	msg->payload = buf;
	msg->len = len;
	return PW_OK;
}

pw_status pw_gate_messages_build(pw_gate_release *r, const char *page_route, pw_gate_messages *out,
                              char *errbuf, size_t errlen)
{
	memset(out, 0, sizeof *out);
	size_t n_alerts = 0;
	for (size_t i = 0; i < r->n_series; i++)
		n_alerts += alert_worthy(r->series_out[i]);
	out->alerts = pw_gate_release_alloc(r, (n_alerts + 1) * sizeof *out->alerts);
	out->msgs = pw_gate_release_alloc(r, (n_alerts + 1) * sizeof *out->msgs);
	Perfwatch__V1__GateVerdict *v = pw_gate_release_alloc(r, sizeof *v);
	Perfwatch__V1__FamilyVerdict **fv =
	    pw_gate_release_alloc(r, (r->n_families + 1) * sizeof *fv);
	Perfwatch__V1__GateSeriesResult **sv =
	    pw_gate_release_alloc(r, (r->n_series + 1) * sizeof *sv);
	if (!out->alerts || !out->msgs || !v || !fv || !sv)
		goto nomem;

	for (size_t i = 0; i < r->n_series; i++) {
		if (!alert_worthy(r->series_out[i]))
			continue;
		Perfwatch__V1__Alert *a = NULL;
		if (build_alert(r, i, page_route, &a) != PW_OK)
			goto nomem;
		r->series_alert[i] = a->alert_id;
		out->alerts[out->n_alerts++] = a;
	}

	*v = (Perfwatch__V1__GateVerdict)PERFWATCH__V1__GATE_VERDICT__INIT;
	v->release_id = (char *)r->release_id;
	v->evaluation = r->evaluation;
	v->verdict = (Perfwatch__V1__Verdict)pw_gate_family_outcome(r->rr.verdict);
	v->candidate_build_id = (char *)r->candidate_build_id;
	v->baseline_release = (char *)r->baseline_release;
	v->tests = (uint32_t)r->rr.n_tests;
	v->fdr_q = r->policy.fdr_q;
	v->fleet_weighted_impact_pct = r->rr.aggregate_impact_pct;
	v->evaluated_unix_us = r->evaluated_us;
	v->summary = r->summary;
	for (size_t j = 0; j < r->n_families; j++) {
		Perfwatch__V1__FamilyVerdict *f = pw_gate_release_alloc(r, sizeof *f);
		if (!f)
			goto nomem;
		*f = (Perfwatch__V1__FamilyVerdict)PERFWATCH__V1__FAMILY_VERDICT__INIT;
		f->family = (char *)r->families[j].name;
		f->tier = tier_proto(r->family_tier[j]);
		f->verdict = (Perfwatch__V1__Verdict)pw_gate_family_outcome(r->fr[j].verdict);
		f->spend_share = r->families[j].spend_share;
		f->spend_weighted_impact_pct = r->fr[j].impact_pct;
		f->gated_series = (uint32_t)r->fr[j].n_tested;
		f->regressed_series = (uint32_t)r->fr[j].n_regressed;
		f->under_powered_series = (uint32_t)r->fr[j].n_under_powered;
		if (r->families[j].inherits_from && r->families[j].inherits_from[0]) {
			f->inherits_from = (char *)r->families[j].inherits_from;
			f->inherit_similarity = r->families[j].inherit_similarity;
		}
		f->verdict_inherited = r->fr[j].inherited;
		fv[j] = f;
	}
	v->families = fv;
	v->n_families = r->n_families;
	for (size_t i = 0; i < r->n_series; i++) {
		const pw_gate_series_input *in = &r->series[i];
		const pw_gate_series_result *s = &r->sr[i];
		Perfwatch__V1__GateSeriesResult *g = pw_gate_release_alloc(r, sizeof *g);
		if (!g)
			goto nomem;
		*g = (Perfwatch__V1__GateSeriesResult)PERFWATCH__V1__GATE_SERIES_RESULT__INIT;
		g->series_id = r->meta[i].series_id;
		g->series_key = (char *)r->meta[i].key;
		g->family = (char *)r->families[in->family].name;
		g->tier = tier_proto(in->tier);
		g->baseline_version = (uint32_t)r->meta[i].baseline_version;
		g->baseline_n = (uint32_t)in->n_base;
		g->candidate_n = (uint32_t)in->n_cand;
		g->unit = (char *)r->meta[i].unit;
		g->expected_delta_pct = in->has_expected ? in->expected_pct : 0.0;
		g->mde_pct = pw_gate_series_mde(&r->policy, in);
		g->tier_mde_pct = in->tier == PW_GATE_TIER_TOP ? r->policy.mde_top_pct
		                                               : r->policy.mde_tail_pct;
		g->required_n = (uint32_t)in->required_n;
		if (s->tested) {
			g->baseline_median = s->cmp.median_base;
			g->baseline_mad_n = s->cmp.mad_base;
			g->candidate_median = s->cmp.median_cand;
			g->u = s->cmp.mwu.u;
			g->p = s->cmp.mwu.p;
			g->welch_t = s->cmp.welch_ok ? s->cmp.welch.t : 0.0;
			g->welch_p = s->cmp.welch_ok ? s->cmp.welch.p : 0.0;
			g->q = s->q;
			g->delta_pct = s->cmp.delta_pct;
			g->two_sigma_pct = s->cmp.two_sigma_pct;
			g->effect_pct = s->cmp.effect_pct;
			g->excess_pct = in->has_expected ? s->excess_pct : 0.0;
			g->practical_pct = s->cmp.practical_pct;
			g->noise_floor_pct = s->cmp.noise_floor_pct;
			g->threshold_pct = s->cmp.threshold_pct;
			/* §9 faster-but-wrong check, strings borrowed from the release arena */
			g->numerics = (char *)pw_gate_numerics_name(s->numerics.state);
			if (s->numerics.baseline)
				g->baseline_numerics_fingerprint = (char *)s->numerics.baseline;
			if (s->numerics.candidate)
				g->candidate_numerics_fingerprint = (char *)s->numerics.candidate;
			if (s->verdict == PW_GATE_SERIES_NUMERICS_CHANGED)
				g->numerics_reason = (char *)PW_GATE_NUMERICS_REASON;
			g->effect_passed = pw_gate_series_effect_passed(in, s);
			if (s->q < r->policy.fdr_q) {
				double worse = in->has_expected
				                   ? (in->direction == PW_COMPARE_LOWER_IS_BETTER ? s->excess_pct
				                                                                  : -s->excess_pct)
				                   : s->worse_pct;
				g->direction = worse > 0.0 ? PERFWATCH__V1__SHIFT_DIRECTION__SHIFT_DIRECTION_REGRESSION
				                           : PERFWATCH__V1__SHIFT_DIRECTION__SHIFT_DIRECTION_IMPROVEMENT;
			}
		}
		g->verdict = (Perfwatch__V1__Verdict)r->series_out[i];
		g->waiver_id = (char *)r->series_waiver[i];
		g->alert_id = (char *)r->series_alert[i];
		sv[i] = g;
	}
	v->series = sv;
	v->n_series = r->n_series;
	if (r->n_drift > 0) {
		Perfwatch__V1__CompoundingDrift **dv =
		    pw_gate_release_alloc(r, r->n_drift * sizeof *dv);
		if (!dv)
			goto nomem;
		for (size_t k = 0; k < r->n_drift; k++) {
			const pw_gate_p1_ticket *t = &r->drift[k];
			Perfwatch__V1__CompoundingDrift *d = pw_gate_release_alloc(r, sizeof *d);
			if (!d)
				goto nomem;
			*d = (Perfwatch__V1__CompoundingDrift)PERFWATCH__V1__COMPOUNDING_DRIFT__INIT;
			d->ticket_id = t->ticket_id;
			d->series_id = t->series_id;
			d->series_key = (char *)t->series_key;
			d->found_release = (char *)t->found_release;
			d->found_unix_us = t->found_us;
			d->age_s = t->age_s;
			d->effect_pct = t->effect_pct;
			d->line = (char *)r->drift_line[k];
			dv[k] = d;
		}
		v->compounding_drift = dv;
		v->n_compounding_drift = r->n_drift;
	}

	if (pack_into(r, &v->base, &out->msgs[0], PW_TOPIC_GATE_VERDICTS, r->release_id) != PW_OK)
		goto nomem;
	out->n_msgs = 1;
	for (size_t k = 0; k < out->n_alerts; k++) {
		if (pack_into(r, &out->alerts[k]->base, &out->msgs[out->n_msgs], PW_TOPIC_ALERTS,
		              out->alerts[k]->series_key) != PW_OK)
			goto nomem;
		out->n_msgs++;
	}
	return PW_OK;

nomem:
	return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory building the messages of \"%s\"",
	               r->release_id);
}
