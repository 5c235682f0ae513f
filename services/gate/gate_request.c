/*
 * gate_request.c: the door of perf.gate.requests.v1 (gate_request.h).
 */
#include "gate_request.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "gate_policy.h"
#include "pw_input.h"

static bool nonempty(const char *s)
{
	return s && *s;
}

static bool str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool waiver_same(const Perfwatch__V1__Waiver *a, const Perfwatch__V1__Waiver *b)
{
	return str_eq(a->model, b->model) && str_eq(a->platform, b->platform) &&
	       str_eq(a->config, b->config) && str_eq(a->metric, b->metric) &&
	       str_eq(a->owner, b->owner) && str_eq(a->approved_by, b->approved_by) &&
	       str_eq(a->reason, b->reason) && a->expires_unix_us == b->expires_unix_us &&
	       a->release_wide == b->release_wide && a->pin == b->pin &&
	       str_eq(a->pin_release, b->pin_release) && str_eq(a->pin_artifact, b->pin_artifact) &&
	       str_eq(a->pin_signed_off_by, b->pin_signed_off_by);
}

const char *pw_gate_pin_release(const Perfwatch__V1__GateRequest *req, const Perfwatch__V1__Waiver *w)
{
	if (!w->pin)
		return "";
	return nonempty(w->pin_release) ? w->pin_release
	                                : (req->baseline_release ? req->baseline_release : "");
}

pw_status pw_gate_request_check(const Perfwatch__V1__GateRequest *req, double default_fdr_q,
                                int64_t now_us, char *errbuf, size_t errlen)
{
	if (!nonempty(req->release_id))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "gate request has no release_id");
	if (strlen(req->release_id) >= PW_GATE_RELEASE_ID_MAX)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "release_id \"%.40s...\" is too long",
		               req->release_id);
	if (req->evaluation < 1)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "gate request \"%s\" has evaluation 0 (1-based)", req->release_id);
	if (!req->candidate || !nonempty(req->candidate->build_id))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "gate request \"%s\" has no candidate build", req->release_id);
	if (!nonempty(req->baseline_release))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "gate request \"%s\" has no baseline_release", req->release_id);
	double fdr = req->fdr_q == 0.0 ? default_fdr_q : req->fdr_q;
	if (!(fdr > 0.0 && fdr < 1.0))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "gate request \"%s\": fdr_q %g is not in (0, 1)", req->release_id, fdr);
	for (size_t i = 0; i < req->n_tiers; i++) {
		const Perfwatch__V1__TierRepeats *t = req->tiers[i];
		if ((t->tier != PERFWATCH__V1__TIER__TIER_TOP &&
		     t->tier != PERFWATCH__V1__TIER__TIER_TAIL) ||
		    t->n < 1 || !(t->mde_pct > 0.0) || !isfinite(t->mde_pct))
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "gate request \"%s\": tier repeats %zu need a tier, n >= 1 and "
			               "mde_pct > 0",
			               req->release_id, i);
	}
	for (size_t i = 0; i < req->n_waivers; i++) {
		const Perfwatch__V1__Waiver *w = req->waivers[i];
		if (!nonempty(w->waiver_id) || !nonempty(w->owner) || !nonempty(w->reason) ||
		    w->expires_unix_us == 0)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "gate request \"%s\": waiver %zu needs an id, an owner, a reason "
			               "and an expiry",
			               req->release_id, i);
		/* from the later of the request's time and the gate's clock (a replay
		 * of an old request carries its old time) */
		int64_t asked = now_us;
		if (req->requested_unix_us > asked)
			asked = req->requested_unix_us;
		char why[256];
		if (pw_gate_waiver_check(w->waiver_id, w->model, w->platform, w->config, w->metric,
		                         w->release_wide, w->expires_unix_us, asked, why,
		                         sizeof why) != PW_OK)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen, "gate request \"%s\": %s",
			               req->release_id, why);
		if (pw_gate_pin_check(w->waiver_id, w->pin, w->model, w->release_wide, w->owner,
		                      w->expires_unix_us, w->pin_signed_off_by,
		                      pw_gate_pin_release(req, w), w->pin_artifact, req->release_id,
		                      why, sizeof why) != PW_OK)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen, "gate request \"%s\": %s",
			               req->release_id, why);
	}
	/* one id, one waiver: the same id twice in a request must mean the same
	 * waiver (an id names a waiver of its release, docs/gate.md) */
	for (size_t i = 0; i < req->n_waivers; i++)
		for (size_t j = i + 1; j < req->n_waivers; j++)
			if (strcmp(req->waivers[i]->waiver_id, req->waivers[j]->waiver_id) == 0 &&
			    !waiver_same(req->waivers[i], req->waivers[j]))
				return pw_fail(PW_ERR_INVALID, errbuf, errlen,
				               "gate request \"%s\": waiver \"%s\" is given twice with "
				               "different content",
				               req->release_id, req->waivers[i]->waiver_id);
	for (size_t i = 0; i < req->n_expected_wins; i++) {
		const Perfwatch__V1__ExpectedWin *e = req->expected_wins[i];
		if (!nonempty(e->series_key) || !isfinite(e->expected_delta_pct) ||
		    !(e->expected_delta_pct > -100.0))
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "gate request \"%s\": expected win %zu needs a series key and a "
			               "delta above -100%%",
			               req->release_id, i);
	}

	return PW_OK;
}

Perfwatch__V1__DlqReason pw_gate_request_decode(const void *payload, size_t len,
                                                double default_fdr_q, int64_t now_us,
                                                Perfwatch__V1__GateRequest **out, char *detail,
                                                size_t detail_len)
{
	*out = NULL;
	ProtobufCMessage *m;
	Perfwatch__V1__DlqReason r = pw_input_decode(&perfwatch__v1__gate_request__descriptor, payload,
	                                             len, &m, detail, detail_len);
	if (r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return r;
	Perfwatch__V1__GateRequest *req = (Perfwatch__V1__GateRequest *)m;
	if (pw_gate_request_check(req, default_fdr_q, now_us, detail, detail_len) != PW_OK) {
		perfwatch__v1__gate_request__free_unpacked(req, NULL);
		return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	}
	*out = req;
	return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED;
}
