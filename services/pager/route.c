/*
 * route.c: the "pager.*" configuration, the §8 routing of one finding and
 * the false-page budget. See pager.h.
 */
#include "pager.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const pw_conf_key keys[] = {
	{.name = "pager.page_min_pct", .type = PW_CONF_DOUBLE, .def = "3", .min = 0, .max = 100,
	 .help = "a watcher shift on a top-20 series at least this large (percent) pages (§8: >= 3%)"},
	{.name = "pager.ticket_min_pct", .type = PW_CONF_DOUBLE, .def = "1", .min = 0, .max = 100,
	 .help = "a shift at least this large (percent) that passed its MDE files a P1 ticket (§8: 1-3%)"},
	{.name = "pager.budget_per_week", .type = PW_CONF_DOUBLE, .def = "5", .min = 0, .max = 1000,
	 .help = "false-page budget: pages per rolling week fleet-wide not confirmed true"},
	{.name = "pager.budget_pressure", .type = PW_CONF_DOUBLE, .def = "0.6", .min = 0, .max = 1,
	 .help = "fraction of the budget used from which a page says the budget is under pressure"},
	{.name = "pager.budget_override_spend_pct", .type = PW_CONF_DOUBLE, .def = "1", .min = 0,
	 .max = 100,
	 .help = "over budget, a finding still pages when its spend-weighted impact is at least this (percent of fleet)"},
	{.name = "pager.incident_window", .type = PW_CONF_DURATION_MS, .def = "72h", .min = 60000,
	 .max = 2592000000.0,
	 .help = "a late correlated finding joins an open incident up to this long after its last part"},
	{.name = "pager.rollout.max_age", .type = PW_CONF_DURATION_MS, .def = "24h", .min = 60000,
	 .max = 2592000000.0,
	 .help = "a canary ROLLBACK consumed later than this after the canary recorded it is stored, not paged "
	         "(a deployment first reading perf.rollouts.v1 from its start)"},
	{.name = "pager.route.triage", .type = PW_CONF_STRING, .def = "ml-perf-triage",
	 .help = "the perf-triage rotation: first touch on every page"},
	{.name = "pager.route.compiler", .type = PW_CONF_STRING, .def = "xla-compiler",
	 .help = "the compiler team: validated wins and compiler-owned tickets"},
	{.name = "pager.route.model", .type = PW_CONF_STRING, .def = "model-owners",
	 .help = "model teams: model-owned tickets"},
	{.name = "pager.route.infra", .type = PW_CONF_STRING, .def = "perf-infra",
	 .help = "infra: harness, baseline and fleet-health findings (never the compiler rotation)"},
	{.name = "pager.owner.compiler_prefixes", .type = PW_CONF_STRING, .def = "xla,compiler",
	 .help = "owner hints starting with one of these (comma-separated) are compiler-owned"},
	{.name = "pager.owner.model_prefixes", .type = PW_CONF_STRING, .def = "model",
	 .help = "owner hints starting with one of these (comma-separated) are model-owned"},
	{.name = "pager.owner.infra_prefixes", .type = PW_CONF_STRING, .def = "infra",
	 .help = "owner hints starting with one of these (comma-separated) are infra-owned"},
};

const pw_conf_key *pw_pager_config_keys(size_t *n)
{
	*n = sizeof keys / sizeof keys[0];
	return keys;
}

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

void pw_pager_params_default(pw_pager_params *p)
{
	memset(p, 0, sizeof *p);
	p->page_min_pct = 3;
	p->ticket_min_pct = 1;
	p->budget_per_week = 5;
	p->budget_pressure = 0.6;
	p->budget_override_spend_pct = 1;
	p->incident_window_us = 72LL * 3600 * 1000000;
	p->rollout_max_age_us = 24LL * 3600 * 1000000;
	copy(p->route_triage, sizeof p->route_triage, "ml-perf-triage");
	copy(p->route_compiler, sizeof p->route_compiler, "xla-compiler");
	copy(p->route_model, sizeof p->route_model, "model-owners");
	copy(p->route_infra, sizeof p->route_infra, "perf-infra");
	copy(p->compiler_owner_prefixes, sizeof p->compiler_owner_prefixes, "xla,compiler");
	copy(p->model_owner_prefixes, sizeof p->model_owner_prefixes, "model");
	copy(p->infra_owner_prefixes, sizeof p->infra_owner_prefixes, "infra");
}

pw_status pw_pager_params_from_config(const pw_config *cfg, pw_pager_params *p, char *errbuf,
                                      size_t errlen)
{
	pw_pager_params_default(p);
	p->page_min_pct = pw_config_get_double(cfg, "pager.page_min_pct");
	p->ticket_min_pct = pw_config_get_double(cfg, "pager.ticket_min_pct");
	p->budget_per_week = pw_config_get_double(cfg, "pager.budget_per_week");
	p->budget_pressure = pw_config_get_double(cfg, "pager.budget_pressure");
	p->budget_override_spend_pct = pw_config_get_double(cfg, "pager.budget_override_spend_pct");
	p->incident_window_us = pw_config_get_duration_ms(cfg, "pager.incident_window") * 1000;
	p->rollout_max_age_us = pw_config_get_duration_ms(cfg, "pager.rollout.max_age") * 1000;
	copy(p->route_triage, sizeof p->route_triage, pw_config_get_str(cfg, "pager.route.triage"));
	copy(p->route_compiler, sizeof p->route_compiler, pw_config_get_str(cfg, "pager.route.compiler"));
	copy(p->route_model, sizeof p->route_model, pw_config_get_str(cfg, "pager.route.model"));
	copy(p->route_infra, sizeof p->route_infra, pw_config_get_str(cfg, "pager.route.infra"));
	copy(p->compiler_owner_prefixes, sizeof p->compiler_owner_prefixes,
	     pw_config_get_str(cfg, "pager.owner.compiler_prefixes"));
	copy(p->model_owner_prefixes, sizeof p->model_owner_prefixes,
	     pw_config_get_str(cfg, "pager.owner.model_prefixes"));
	copy(p->infra_owner_prefixes, sizeof p->infra_owner_prefixes,
	     pw_config_get_str(cfg, "pager.owner.infra_prefixes"));
	if (p->ticket_min_pct > p->page_min_pct)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
		               "pager.ticket_min_pct (%g) must not exceed pager.page_min_pct (%g)",
		               p->ticket_min_pct, p->page_min_pct);
	if (strcmp(p->route_infra, p->route_compiler) == 0)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
		               "pager.route.infra must differ from pager.route.compiler (\"%s\"): infra-health never pages the compiler rotation",
		               p->route_infra);
	return PW_OK;
}

const char *pw_find_verdict_name(pw_find_verdict v)
{
	static const char *const names[] = {"unspecified", "blocking", "p1", "pass",
	                                    "validated_win", "frozen", "quarantined",
	                                    "insufficient_data", "investigate", "trend", "waived"};
	return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "unspecified";
}

const char *pw_action_name(pw_action a)
{
	switch (a) {
	case PW_ACT_PAGE: return "page";
	case PW_ACT_TICKET: return "ticket";
	case PW_ACT_INFO: return "info";
	case PW_ACT_QUEUE: break;
	}
	return "queue";
}

const char *pw_owner_name(pw_owner o)
{
	switch (o) {
	case PW_OWNER_COMPILER: return "compiler";
	case PW_OWNER_MODEL: return "model";
	case PW_OWNER_INFRA: return "infra";
	case PW_OWNER_UNSPECIFIED: break;
	}
	return "unspecified";
}

const char *pw_severity_name(pw_severity s)
{
	switch (s) {
	case PW_SEV_CRITICAL: return "critical";
	case PW_SEV_HIGH: return "high";
	case PW_SEV_INFO: break;
	}
	return "info";
}

/* Whether hint starts with one of the comma-separated prefixes. */
static bool hint_has_prefix(const char *hint, const char *prefixes)
{
	const char *s = prefixes;
	while (*s) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n > 0 && strncmp(hint, s, n) == 0)
			return true;
		if (!e)
			break;
		s = e + 1;
	}
	return false;
}

/* Infra by what the finding is (infra health, a fleet change, a frozen or quarantined series), not by a hint. */
static bool infra_finding(const pw_finding *f)
{
	return f->kind == PW_FIND_INFRA_HEALTH || f->fleet_event_id[0] || f->verdict == PW_FV_QUARANTINED ||
	       f->verdict == PW_FV_FROZEN;
}

/* A culprit the bisector verified on both sides: the CL alone reproduces the shift on the clean base. */
static bool verified_culprit(const pw_finding *f)
{
	return f->culprit[0] && f->verified_adjacent_clean && f->cherry_pick_reproduced;
}

pw_owner pw_route_owner(const pw_pager_params *p, const pw_finding *f)
{
	if (infra_finding(f))
		return PW_OWNER_INFRA;
	/* a verified culprit CL is the compiler's whatever the attributor guessed from the op diff */
	if (verified_culprit(f) && !(f->owner_hint[0] && hint_has_prefix(f->owner_hint, p->model_owner_prefixes)))
		return PW_OWNER_COMPILER;
	if (f->owner_hint[0] && hint_has_prefix(f->owner_hint, p->infra_owner_prefixes))
		return PW_OWNER_INFRA;
	if (f->owner_hint[0] && hint_has_prefix(f->owner_hint, p->compiler_owner_prefixes))
		return PW_OWNER_COMPILER;
	if (f->owner_hint[0] && hint_has_prefix(f->owner_hint, p->model_owner_prefixes))
		return PW_OWNER_MODEL;
	if (f->culprit[0])
		return PW_OWNER_COMPILER; /* a verified culprit CL is a compiler change */
	return PW_OWNER_UNSPECIFIED;
}

static const char *owner_route(const pw_pager_params *p, pw_owner o)
{
	switch (o) {
	case PW_OWNER_COMPILER: return p->route_compiler;
	case PW_OWNER_MODEL: return p->route_model;
	case PW_OWNER_INFRA: return p->route_infra;
	case PW_OWNER_UNSPECIFIED: break;
	}
	return p->route_triage;
}

static void set(pw_route *r, pw_action a, pw_severity s, const char *route, const char *fmt,
                double pct)
{
	r->action = a;
	r->severity = s;
	copy(r->route, sizeof r->route, route);
	snprintf(r->reason, sizeof r->reason, fmt, pct);
}

void pw_route_decide(const pw_pager_params *p, const pw_finding *f, pw_route *out)
{
	double mag = fabs(f->delta_pct);
	memset(out, 0, sizeof *out);
	out->owner = pw_route_owner(p, f);

	/* the production canary rolled a family back (§8): the serving pointer flipped to N−1
	 * already; the triage rotation confirms it and routes the fix, at once */
	if (f->kind == PW_FIND_ROLLBACK) {
		set(out, PW_ACT_PAGE, PW_SEV_CRITICAL, p->route_triage,
		    "canary ROLLBACK (%+.2f%%): critical page to the triage rotation", f->delta_pct);
		return;
	}

	/* infra health, fleet changes, frozen and quarantined series, and a nightly shift
	 * the attributor calls infra's: info to infra. An infra owner hint on the gate's
	 * release verdict does not make it info: the page still goes to the triage
	 * rotation (never the compiler's), which routes it to infra. */
	if (infra_finding(f) || (out->owner == PW_OWNER_INFRA && !f->from_gate)) {
		set(out, PW_ACT_INFO, PW_SEV_INFO, p->route_infra,
		    "infra-owned (fleet change or infra health, %.1f%%): infra, never the compiler rotation",
		    f->delta_pct);
		return;
	}
	if (f->first_signal) {
		set(out, PW_ACT_QUEUE, PW_SEV_INFO, p->route_triage,
		    "unconfirmed first signal (%+.1f%%): queued for confirmation (a rerun or the next nightly), pages nobody",
		    f->delta_pct);
		return;
	}
	switch (f->verdict) {
	case PW_FV_BLOCKING:
		set(out, PW_ACT_PAGE, PW_SEV_CRITICAL, p->route_triage,
		    "BLOCKING (%+.1f%%): critical page to the triage rotation", f->delta_pct);
		return;
	case PW_FV_P1:
		set(out, PW_ACT_TICKET, PW_SEV_HIGH, owner_route(p, out->owner),
		    "P1 (%+.1f%%): ticket filed with its artifacts", f->delta_pct);
		return;
	case PW_FV_VALIDATED_WIN:
		out->owner = PW_OWNER_COMPILER;
		set(out, PW_ACT_INFO, PW_SEV_INFO, p->route_compiler,
		    "validated win (%+.1f%%): info to the compiler team", f->delta_pct);
		return;
	case PW_FV_INVESTIGATE:
		set(out, PW_ACT_TICKET, PW_SEV_HIGH, p->route_triage,
		    "unexplained significant movement (%+.1f%%): ticket to investigate", f->delta_pct);
		return;
	case PW_FV_PASS:
	case PW_FV_TREND:
	case PW_FV_WAIVED:
	case PW_FV_INSUFFICIENT_DATA:
		set(out, PW_ACT_QUEUE, PW_SEV_INFO, p->route_triage,
		    "trend / sub-MDE / waived (%+.1f%%): queued, pages nobody", f->delta_pct);
		return;
	default:
		break;
	}
	/* No release verdict: a watcher shift, judged by its size and tier. */
	if (f->kind == PW_FIND_IMPROVEMENT) {
		set(out, PW_ACT_QUEUE, PW_SEV_INFO, p->route_triage,
		    "unverdicted improvement (%+.1f%%): queued for the win registry", f->delta_pct);
		return;
	}
	if (!f->passed_min_effect || mag < p->ticket_min_pct) {
		set(out, PW_ACT_QUEUE, PW_SEV_INFO, p->route_triage,
		    "sub-MDE shift (%+.1f%%): queued, pages nobody", f->delta_pct);
		return;
	}
	if (!f->top_tier) {
		set(out, PW_ACT_QUEUE, PW_SEV_INFO, p->route_triage,
		    "tail-tier shift (%+.1f%%): queued, pages nobody", f->delta_pct);
		return;
	}
	if (mag >= p->page_min_pct) {
		set(out, PW_ACT_PAGE, PW_SEV_HIGH, p->route_triage,
		    "top-tier nightly shift (%+.1f%%): page to the triage rotation", f->delta_pct);
		return;
	}
	set(out, PW_ACT_TICKET, PW_SEV_HIGH, owner_route(p, out->owner),
	    "top-tier nightly shift (%+.1f%%) below the page threshold: ticket", f->delta_pct);
}

bool pw_rollback_stale(const pw_pager_params *p, const pw_finding *f, int64_t now_us)
{
	return f->kind == PW_FIND_ROLLBACK && f->created_us > 0 && now_us - f->created_us > p->rollout_max_age_us;
}

double pw_budget_used(const pw_budget_usage *u)
{
	uint32_t t = u->true_pages < u->delivered ? u->true_pages : u->delivered;
	return (double)(u->delivered - t);
}

void pw_budget_decide(const pw_pager_params *p, const pw_budget_usage *u, const pw_finding *f,
                      pw_budget_decision *out)
{
	memset(out, 0, sizeof *out);
	out->used = pw_budget_used(u);
	if (out->used + 1 <= p->budget_per_week) {
		out->page = true;
		out->pressure = out->used + 1 >= p->budget_pressure * p->budget_per_week;
		snprintf(out->reason, sizeof out->reason, "within budget: %.0f of %.0f used%s", out->used,
		         p->budget_per_week, out->pressure ? ", under pressure" : "");
		return;
	}
	if (f->spend_pct >= p->budget_override_spend_pct) {
		out->page = true;
		out->pressure = true;
		snprintf(out->reason, sizeof out->reason,
		         "over budget (%.0f of %.0f used) but spend impact %.2f%% >= %.2f%%: paged, budget under pressure",
		         out->used, p->budget_per_week, f->spend_pct, p->budget_override_spend_pct);
		return;
	}
	snprintf(out->reason, sizeof out->reason,
	         "over budget (%.0f of %.0f used), spend impact %.2f%% < %.2f%%: queued", out->used,
	         p->budget_per_week, f->spend_pct, p->budget_override_spend_pct);
}
