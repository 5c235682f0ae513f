/*
 * incident.c: grouping findings into incidents, one incident per event.
 * See pager.h. The rules are §8's: same release and model family, or the
 * same culprit, or overlapping CL ranges, or the same fleet change; a late
 * part joins the open incident instead of opening another.
 */
#include "pager.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

int64_t pw_cl_number(const char *cl)
{
	const char *s = cl;
	char *end;
	long long v;
	if (!s || !*s)
		return -1;
	if (strncmp(s, "cl/", 3) == 0)
		s += 3;
	if (*s < '0' || *s > '9')
		return -1;
	v = strtoll(s, &end, 10);
	return *end == '\0' && v >= 0 ? (int64_t)v : -1;
}

/* Severity order of verdicts for choosing the primary: larger is worse. */
static int verdict_rank(pw_find_verdict v)
{
	switch (v) {
	case PW_FV_BLOCKING: return 5;
	case PW_FV_P1: return 4;
	case PW_FV_INVESTIGATE: return 3;
	case PW_FV_NONE: return 2; /* an unverdicted watcher shift */
	case PW_FV_VALIDATED_WIN: return 1;
	default: return 0;
	}
}

/*
 * A win (an improvement, a validated win) is never part of a regression's
 * event: it is info to the compiler team or the win registry, never a page's
 * headline nor a member of its page. Parts (revision 0: bisection,
 * attribution, changepoint) take the polarity of the alert they belong to.
 */
static bool is_win(const pw_finding *f)
{
	return f->kind == PW_FIND_IMPROVEMENT || f->verdict == PW_FV_VALIDATED_WIN;
}

static bool is_member(const pw_incident *inc, const char *alert_id)
{
	for (size_t i = 0; i < inc->n_members; i++)
		if (strcmp(inc->members[i], alert_id) == 0)
			return true;
	return false;
}

bool pw_incident_matches(const pw_pager_params *p, const pw_incident *inc, const pw_finding *f)
{
	int64_t lo, hi;
	if (!inc->open)
		return false;
	if (f->alert_id[0] && is_member(inc, f->alert_id))
		return true;
	if (f->kind == PW_FIND_ROLLBACK || inc->primary.kind == PW_FIND_ROLLBACK)
		return false; /* a canary rollback is an event of its own, keyed by rollout and family */
	if (f->created_us - inc->last_us > p->incident_window_us)
		return false;
	if (f->revision > 0 && is_win(f) != is_win(&inc->primary))
		return false; /* a win and a regression sharing an RC's range are two events */
	if (f->revision > 0 && f->first_signal) /* the first sign of its family's event */
		return f->model[0] && strcmp(f->model, inc->family) == 0;
	if (f->revision > 0 && inc->primary.first_signal)
		return false; /* a confirmed finding opens its own; the first signals are folded into it */
	if (f->fleet_event_id[0] || inc->fleet_event_id[0])
		return strcmp(f->fleet_event_id, inc->fleet_event_id) == 0;
	if (f->release_id[0] && f->model[0] && strcmp(f->release_id, inc->release_id) == 0 &&
	    strcmp(f->model, inc->family) == 0)
		return true;
	if (f->culprit[0] && strcmp(f->culprit, inc->culprit) == 0)
		return true;
	lo = pw_cl_number(f->cl_lo);
	hi = pw_cl_number(f->cl_hi);
	if (lo >= 0 && hi > lo && inc->cl_lo >= 0 && inc->cl_hi > inc->cl_lo)
		return lo < inc->cl_hi && inc->cl_lo < hi; /* (lo, hi] ranges overlap */
	return false;
}

long pw_incident_find(const pw_pager_params *p, const pw_incident *incs, size_t n,
                      const pw_finding *f)
{
	/* a member's revision goes to its own incident first */
	for (size_t i = 0; i < n; i++)
		if (incs[i].open && f->alert_id[0] && is_member(&incs[i], f->alert_id))
			return (long)i;
	for (size_t i = 0; i < n; i++)
		if (pw_incident_matches(p, &incs[i], f))
			return (long)i;
	return -1;
}

static void widen_keys(pw_incident *inc, const pw_finding *f)
{
	int64_t lo = pw_cl_number(f->cl_lo), hi = pw_cl_number(f->cl_hi);
	if (!inc->release_id[0] && f->release_id[0])
		copy(inc->release_id, sizeof inc->release_id, f->release_id);
	if (!inc->family[0] && f->model[0])
		copy(inc->family, sizeof inc->family, f->model);
	if (!inc->culprit[0] && f->culprit[0])
		copy(inc->culprit, sizeof inc->culprit, f->culprit);
	if (!inc->fleet_event_id[0] && f->fleet_event_id[0])
		copy(inc->fleet_event_id, sizeof inc->fleet_event_id, f->fleet_event_id);
	if (lo >= 0 && hi > lo) {
		if (inc->cl_lo < 0 || inc->cl_hi <= inc->cl_lo) {
			inc->cl_lo = lo;
			inc->cl_hi = hi;
		} else { /* the narrowest range every member agrees with */
			if (lo > inc->cl_lo && lo < inc->cl_hi)
				inc->cl_lo = lo;
			if (hi < inc->cl_hi && hi > inc->cl_lo)
				inc->cl_hi = hi;
		}
	}
}

/* Records f's alert as a member (once; a gate alert's bit set); true when it is new. */
static bool add_member(pw_incident *inc, const pw_finding *f)
{
	for (size_t i = 0; i < inc->n_members; i++)
		if (strcmp(inc->members[i], f->alert_id) == 0) {
			if (f->from_gate && f->revision > 0)
				inc->gate_members |= UINT64_C(1) << i;
			return false;
		}
	if (!f->alert_id[0] || inc->n_members == PW_PAGER_MAX_MEMBERS)
		return false;
	if (f->from_gate && f->revision > 0)
		inc->gate_members |= UINT64_C(1) << inc->n_members;
	copy(inc->members[inc->n_members++], PW_PAGER_STR, f->alert_id);
	return true;
}

void pw_incident_open(pw_incident *inc, const char *incident_id, const pw_finding *f)
{
	memset(inc, 0, sizeof *inc);
	copy(inc->incident_id, sizeof inc->incident_id, incident_id);
	inc->open = true;
	inc->opened_us = inc->last_us = f->created_us;
	inc->cl_lo = inc->cl_hi = -1;
	inc->primary = *f;
	inc->spend_pct = f->spend_pct;
	add_member(inc, f);
	widen_keys(inc, f);
}

/*
 * The headline rank of a metric: the page leads with the user-facing median
 * latency (artifact 3 pages TPOT), then the tails, then throughput and cost,
 * which the gate raises alongside (cost/token moves with TPOT's inverse
 * goodput and would otherwise win on a larger percentage).
 */
static int metric_rank(const char *m)
{
	if (strncmp(m, "tpot_p50", 8) == 0 || strncmp(m, "ttft_p50", 8) == 0)
		return 3;
	if (strncmp(m, "tpot_", 5) == 0 || strncmp(m, "ttft_", 5) == 0)
		return 2;
	if (strncmp(m, "goodput", 7) == 0 || strncmp(m, "cost", 4) == 0)
		return 1;
	return 0;
}

static int sign(double d)
{
	return d > 0 ? 1 : d < 0 ? -1 : 0;
}

int pw_incident_headline_cmp(const pw_finding *a, const pw_finding *b)
{
	int c;
	if (is_win(a) != is_win(b))
		return is_win(a) ? -1 : 1; /* a regression leads; a win never heads a page */
	if (a->first_signal != b->first_signal)
		return a->first_signal ? -1 : 1; /* a confirmed finding leads its first signals */
	if ((c = verdict_rank(a->verdict) - verdict_rank(b->verdict)) != 0)
		return c;
	if (a->from_gate != b->from_gate)
		return a->from_gate ? 1 : -1;
	if ((c = metric_rank(a->metric) - metric_rank(b->metric)) != 0)
		return c;
	if ((c = sign(a->spend_pct - b->spend_pct)) != 0)
		return c;
	if ((c = sign(fabs(a->delta_pct) - fabs(b->delta_pct))) != 0)
		return c;
	/* equal on everything that matters: the same answer whatever came first */
	if ((c = strcmp(b->series_key, a->series_key)) != 0)
		return c;
	return strcmp(b->alert_id, a->alert_id);
}

/* Whether a heads the page before b. */
static bool worse(const pw_finding *a, const pw_finding *b)
{
	return pw_incident_headline_cmp(a, b) > 0;
}

#define FILL(field)                                                      \
	do {                                                             \
		if (!dst->field[0] && src->field[0])                     \
			copy(dst->field, sizeof dst->field, src->field); \
	} while (0)

/* 0 no owner hint, 1 the bisection's culprit owner, 2 an attribution's or the alert's own */
static int owner_rank(const pw_finding *f)
{
	return !f->owner_hint[0] ? 0 : f->owner_from_bisection ? 1 : 2;
}

/*
 * Fills dst's parts not yet known from src: the event's (changepoint,
 * bisection, culprit) from any finding of it; the series' own (artifacts,
 * owner hint) only when own — another series' attribution says who owns
 * that series, not the page's.
 */
static bool fill_parts_as(pw_finding *dst, const pw_finding *src, bool own)
{
	pw_finding before = *dst;
	FILL(nightly);
	if (!dst->cl_lo[0] && src->cl_lo[0]) {
		copy(dst->cl_lo, sizeof dst->cl_lo, src->cl_lo);
		copy(dst->cl_hi, sizeof dst->cl_hi, src->cl_hi);
		dst->n_cls = src->n_cls;
	}
	if (src->bisect_status[0] &&
	    (!dst->bisect_status[0] || (src->culprit[0] && !dst->culprit[0]) ||
	     strcmp(dst->bisect_status, "done") != 0)) {
		copy(dst->bisect_status, sizeof dst->bisect_status, src->bisect_status);
		if (src->culprit[0])
			copy(dst->culprit, sizeof dst->culprit, src->culprit);
		dst->verified_adjacent_clean = src->verified_adjacent_clean;
		dst->cherry_pick_reproduced = src->cherry_pick_reproduced;
	}
	FILL(culprit);
	if (own) {
		FILL(op_diff);
		FILL(hlo_diff);
		FILL(trace_before);
		FILL(trace_after);
		/* the first hint of the better source: an attribution's (who owns the
		 * regression) over the bisection's culprit owner (who wrote the CL),
		 * in whichever order they arrive — a restart replays the parts in the
		 * order stored, and two runs of one replay must page the same owner.
		 * A first signal's own hint ("needs-confirmation": its outlier is not
		 * confirmed yet) speaks of that outlier only, never of the confirmed
		 * finding that takes its place: live, the first signals' incident is
		 * folded into the confirmed one without changing its page; a restart
		 * replays the folded parts by id, the first signals before the gate's
		 * alert of the same series, which then heads with that hint kept */
		if (owner_rank(src) > owner_rank(dst) && (dst->first_signal || !src->first_signal)) {
			copy(dst->owner_hint, sizeof dst->owner_hint, src->owner_hint);
			dst->owner_from_bisection = src->owner_from_bisection;
		}
		FILL(hlo_fingerprint);
	}
	return memcmp(&before, dst, sizeof before) != 0;
}

static bool fill_parts(pw_finding *dst, const pw_finding *src)
{
	return fill_parts_as(dst, src, true);
}

static void scope_line(const pw_finding *f, char buf[PW_PAGER_STR])
{
	/* a line longer than buf is cut; the series prefix stays whole up to its length */
	int n = snprintf(buf, PW_PAGER_STR, "%.36s/%.36s/%.36s: %+.1f%%", f->model, f->platform, f->config,
	                 f->delta_pct);
	(void)n;
}

static bool same_series(const pw_finding *a, const pw_finding *b)
{
	return strcmp(a->series_key, b->series_key) == 0;
}

/* Same model, platform and config: the same line of the scope (metrics differ). */
static bool same_config(const pw_finding *a, const pw_finding *b)
{
	return strcmp(a->model, b->model) == 0 && strcmp(a->platform, b->platform) == 0 &&
	       strcmp(a->config, b->config) == 0;
}

static bool add_scope(pw_incident *inc, const pw_finding *f)
{
	char line[PW_PAGER_STR];
	if (same_series(f, &inc->primary) || (f->model[0] && same_config(f, &inc->primary)))
		return false; /* the primary's own config: its other metrics are not other series */
	/* one entry per model/platform/config: the prefix up to ':'; the primary's metric wins it */
	scope_line(f, line);
	size_t plen = (size_t)(strchr(line, ':') - line);
	bool headline = strcmp(f->metric, inc->primary.metric) == 0;
	for (size_t i = 0; i < inc->n_scope; i++)
		if (strncmp(inc->scope[i], line, plen + 1) == 0) {
			if (strcmp(inc->scope[i], line) == 0 || (!headline && inc->scope_headline[i]))
				return false;
			copy(inc->scope[i], PW_PAGER_STR, line);
			inc->scope_headline[i] = headline;
			return true;
		}
	if (inc->n_scope == PW_PAGER_MAX_SCOPE)
		return false;
	inc->scope_headline[inc->n_scope] = headline;
	copy(inc->scope[inc->n_scope++], PW_PAGER_STR, line);
	return true;
}

bool pw_incident_add(pw_incident *inc, const pw_finding *f)
{
	bool changed = false;
	if (f->created_us > inc->last_us)
		inc->last_us = f->created_us;
	/* a first signal joining a confirmed event is recorded as its member; the page does not change */
	bool quiet = f->first_signal && !inc->primary.first_signal;
	if (add_member(inc, f))
		changed = !quiet;
	if (f->spend_pct > inc->spend_pct)
		inc->spend_pct = f->spend_pct;
	widen_keys(inc, f);
	if (strcmp(f->alert_id, inc->primary.alert_id) == 0) {
		if (f->revision > 0 && f->revision >= inc->primary.revision) {
			pw_finding old = inc->primary;
			inc->primary = *f;
			fill_parts(&inc->primary, &old); /* keep parts the new revision lacks */
			changed = true;
		} else {
			/* a part (revision 0: bisection, attribution) or an older revision */
			changed |= fill_parts(&inc->primary, f);
		}
	} else if (worse(f, &inc->primary) && same_series(f, &inc->primary)) {
		pw_finding old = inc->primary;
		inc->primary = *f;
		fill_parts(&inc->primary, &old);
		changed = true;
	} else if (worse(f, &inc->primary)) {
		pw_finding old = inc->primary;
		inc->primary = *f;
		fill_parts_as(&inc->primary, &old, false); /* the event's parts; old's owner and artifacts are its own */
		add_scope(inc, &old);
		/* the new primary's own entry, if any, leaves the scope */
		char line[PW_PAGER_STR];
		scope_line(f, line);
		size_t plen = (size_t)(strchr(line, ':') - line);
		for (size_t i = 0; i < inc->n_scope; i++)
			if (strncmp(inc->scope[i], line, plen + 1) == 0) {
				memmove(inc->scope[i], inc->scope[i + 1],
				        (inc->n_scope - i - 1) * sizeof inc->scope[0]);
				memmove(&inc->scope_headline[i], &inc->scope_headline[i + 1],
				        (inc->n_scope - i - 1) * sizeof inc->scope_headline[0]);
				inc->n_scope--;
				break;
			}
		changed = true;
	} else if (f->first_signal && !inc->primary.first_signal) {
		/* a member of the event, nothing of the page's content */
	} else {
		if (same_series(f, &inc->primary) || f->kind == inc->primary.kind)
			changed |= fill_parts_as(&inc->primary, f, same_series(f, &inc->primary));
		if (f->kind == inc->primary.kind && f->passed_min_effect)
			changed |= add_scope(inc, f);
	}
	/* clean series the detectors named, once each */
	for (size_t i = 0; i < f->n_clean; i++) {
		bool have = false;
		for (size_t j = 0; j < inc->primary.n_clean; j++)
			have |= strcmp(inc->primary.clean[j], f->clean[i]) == 0;
		if (!have && inc->primary.n_clean < PW_PAGER_MAX_SCOPE) {
			copy(inc->primary.clean[inc->primary.n_clean++], PW_PAGER_STR, f->clean[i]);
			changed = true;
		}
	}
	if (inc->culprit[0] && !inc->primary.culprit[0]) {
		copy(inc->primary.culprit, sizeof inc->primary.culprit, inc->culprit);
		changed = true;
	}
	return changed;
}

bool pw_incident_same_event(const pw_incident *a, const pw_incident *b)
{
	if (!a->open || !b->open || a == b)
		return false;
	if (is_win(&a->primary) != is_win(&b->primary))
		return false;
	if (a->primary.kind == PW_FIND_ROLLBACK || b->primary.kind == PW_FIND_ROLLBACK)
		return false; /* a canary rollback is never folded into a benchmark event, nor one into it */
	if (a->primary.first_signal || b->primary.first_signal) /* first signals of a family: one event */
		return a->family[0] && strcmp(a->family, b->family) == 0;
	if (a->fleet_event_id[0] || b->fleet_event_id[0])
		return strcmp(a->fleet_event_id, b->fleet_event_id) == 0;
	if (a->release_id[0] && a->family[0] && strcmp(a->release_id, b->release_id) == 0 &&
	    strcmp(a->family, b->family) == 0)
		return true;
	if (a->culprit[0] && strcmp(a->culprit, b->culprit) == 0)
		return true;
	if (a->cl_lo >= 0 && a->cl_hi > a->cl_lo && b->cl_lo >= 0 && b->cl_hi > b->cl_lo)
		return a->cl_lo < b->cl_hi && b->cl_lo < a->cl_hi;
	return false;
}

bool pw_incident_absorb(pw_incident *dst, pw_incident *src)
{
	bool changed = pw_incident_add(dst, &src->primary);
	bool quiet = src->primary.first_signal && !dst->primary.first_signal;
	for (size_t i = 0; i < src->n_members; i++)
		if (!is_member(dst, src->members[i]) && dst->n_members < PW_PAGER_MAX_MEMBERS) {
			if (src->gate_members >> i & 1)
				dst->gate_members |= UINT64_C(1) << dst->n_members;
			copy(dst->members[dst->n_members++], PW_PAGER_STR, src->members[i]);
			changed |= !quiet;
		}
	if (src->spend_pct > dst->spend_pct)
		dst->spend_pct = src->spend_pct;
	for (size_t i = 0; i < src->n_scope && !quiet; i++) {
		size_t plen = strcspn(src->scope[i], ":");
		char own[PW_PAGER_STR];
		scope_line(&dst->primary, own);
		bool have = strncmp(own, src->scope[i], plen + 1) == 0;
		for (size_t j = 0; j < dst->n_scope && !have; j++)
			have = strncmp(dst->scope[j], src->scope[i], plen + 1) == 0;
		if (!have && dst->n_scope < PW_PAGER_MAX_SCOPE) {
			dst->scope_headline[dst->n_scope] = src->scope_headline[i];
			copy(dst->scope[dst->n_scope++], PW_PAGER_STR, src->scope[i]);
			changed = true;
		}
	}
	if (src->opened_us < dst->opened_us && !quiet)
		dst->opened_us = src->opened_us;
	src->open = false;
	return changed;
}

void pw_incident_dedup_key(const pw_incident *inc, char *buf, size_t len)
{
	if (inc->fleet_event_id[0])
		snprintf(buf, len, "fleet/%s", inc->fleet_event_id);
	else if (inc->release_id[0])
		snprintf(buf, len, "%s/%s", inc->release_id, inc->family);
	else if (inc->culprit[0])
		snprintf(buf, len, "%s", inc->culprit);
	else if (inc->cl_lo >= 0)
		snprintf(buf, len, "cl/%lld..cl/%lld", (long long)inc->cl_lo, (long long)inc->cl_hi);
	else
		snprintf(buf, len, "%s", inc->primary.series_key);
}

/* "tpot_p50_ms" → "TPOT": the metric's first word, upper case. */
static void metric_short(const char *metric, char *buf, size_t len)
{
	size_t i = 0;
	for (; metric[i] && metric[i] != '_' && i + 1 < len; i++)
		buf[i] = (char)(metric[i] >= 'a' && metric[i] <= 'z' ? metric[i] - 32 : metric[i]);
	buf[i] = '\0';
}

void pw_rollback_incident_id(const pw_rollback *rb, char buf[PW_PAGER_STR])
{
	/* "pg-" replaces "inc-" in the page id: the id leaves room for the page's own prefix */
	int n = snprintf(buf, PW_PAGER_STR, "inc-rollback-%s-%s", rb->rollout_id, rb->family);
	if (n > 0 && n < PW_PAGER_STR - 8)
		return;
	uint64_t h = 1469598103934665603ULL; /* FNV-1a, 64 bits */
	for (const char *parts[] = {rb->rollout_id, "/", rb->family}, **p = parts; p < parts + 3; p++)
		for (const unsigned char *c = (const unsigned char *)*p; *c; c++)
			h = (h ^ *c) * 1099511628211ULL;
	snprintf(buf, PW_PAGER_STR, "inc-rollback-%.40s-%.40s-%016" PRIx64, rb->rollout_id, rb->family, h);
}

void pw_incident_summary(const pw_incident *inc, char *buf, size_t len)
{
	const pw_finding *f = &inc->primary;
	char m[32];
	char verdict[32];
	metric_short(f->metric, m, sizeof m);
	if (f->kind == PW_FIND_ROLLBACK) {
		const pw_rollback *rb = &f->rollback;
		snprintf(buf, len, "canary ROLLBACK %s %s %+.2f%% [%+.2f%%, %+.2f%%] after %" PRIu32 " windows, to %s",
		         f->model, m, f->delta_pct, rb->lo_pct, rb->hi_pct, rb->windows, rb->artifact);
		return;
	}
	snprintf(verdict, sizeof verdict, "%s", pw_find_verdict_name(f->verdict));
	for (char *c = verdict; *c; c++)
		*c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
	int n = snprintf(buf, len, "%s %s %s %+.1f%% %s", f->model, f->platform, m, f->delta_pct,
	                 f->verdict == PW_FV_NONE ? "SHIFT" : verdict);
	if (n > 0 && (size_t)n < len && f->culprit[0])
		snprintf(buf + n, len - (size_t)n, ", culprit %s", f->culprit);
}
