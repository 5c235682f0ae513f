/*
 * bisect_log.c: artifact 4's bisection log from stored bisection state
 * (bisect_log.h).
 */
#include "bisect_log.h"

#include <ctype.h>
#include <string.h>

void pw_bisect_log_step_from(pw_bisect_log_step *s, const pw_bisect_job *job,
                             const pw_bisect_verdict *v, int64_t t_us)
{
	memset(s, 0, sizeof *s);
	s->purpose = job->purpose;
	pw_bisect_cl_name(job->npicks ? job->base : job->cl, job->upstream_k, s->cl, sizeof s->cl);
	for (size_t i = 0; i < job->npicks && i < 2; i++)
		pw_bisect_cl_name(job->picks[i], -1, s->picks[i], sizeof s->picks[i]);
	s->npicks = job->npicks;
	s->median = v->median;
	s->spread = v->spread;
	s->n = v->n;
	s->outcome = v->outcome;
	s->finished_us = t_us;
	s->range_lo = v->range_lo;
	s->range_hi = v->range_hi;
	s->range_n = v->range_n;
}

static void stamp(FILE *out, int64_t started, int64_t t)
{
	int64_t s = t > started ? (t - started) / 1000000 : 0;
	fprintf(out, "[%02lld:%02lld] ", (long long)(s / 60), (long long)(s % 60));
}

static void upper(const char *in, char *out, size_t len)
{
	size_t i = 0;
	for (; in[i] && i + 1 < len; i++)
		out[i] = (char)toupper((unsigned char)in[i]);
	out[i] = '\0';
}

static void dashes(const char *in, char *out, size_t len)
{
	size_t i = 0;
	for (; in[i] && i + 1 < len; i++)
		out[i] = in[i] == '_' ? '-' : in[i];
	out[i] = '\0';
}

void pw_bisect_log_render(FILE *out, const pw_bisect_log_head *h, const pw_bisect_log_step *steps,
                          size_t n)
{
	const char *metric = h->metric && *h->metric ? h->metric : "value";
	stamp(out, h->started_us, h->started_us);
	fprintf(out, "range cl/%lld..cl/%lld (%u CLs); cost-model filter → %u perf-relevant\n",
	        (long long)h->lo, (long long)h->hi, h->n_cls, h->n_flagged);
	for (size_t i = 0; i < n; i++) {
		const pw_bisect_log_step *s = &steps[i];
		char oc[32];
		upper(pw_bisect_outcome_name(s->outcome), oc, sizeof oc);
		stamp(out, h->started_us, s->finished_us ? s->finished_us : h->started_us);
		if (s->outcome == PW_BISECT_PENDING) {
			fprintf(out, "%s %s%s%s … pending (%s)\n", pw_bisect_purpose_name(s->purpose), s->cl,
			        s->npicks ? " + " : "", s->npicks ? s->picks[0] : "",
			        pw_bisect_purpose_name(s->purpose));
			continue;
		}
		switch (s->purpose) {
		case PW_BISECT_ENDPOINT:
			fprintf(out, "endpoint %s … %.2f ±%.2f (n=%u) → %s (%s level)\n", s->cl, s->median,
			        s->spread, s->n, oc, i == 0 ? "before" : "after");
			break;
		case PW_BISECT_STEP:
			fprintf(out, "build xla @ %s … %s %.2f ±%.2f (n=%u) → %-12s range → (%lld, %lld], %u CL%s\n",
			        s->cl, metric, s->median, s->spread, s->n, oc, (long long)s->range_lo,
			        (long long)s->range_hi, s->range_n, s->range_n == 1 ? "" : "s");
			break;
		case PW_BISECT_VERIFY_ADJACENT:
			fprintf(out, "verify: %s → %.2f ±%.2f %s %s\n", s->cl, s->median, s->spread, oc,
			        s->outcome == PW_BISECT_CLEAN ? "✔" : "✘");
			break;
		case PW_BISECT_VERIFY_CHERRY_PICK:
			fprintf(out, "verify: cherry-pick %s alone on %s → %.2f ±%.2f %s %s\n", s->picks[0],
			        s->cl, s->median, s->spread,
			        s->outcome == PW_BISECT_REGRESSED ? "REPRODUCED" : oc,
			        s->outcome == PW_BISECT_REGRESSED ? "✔" : "✘");
			break;
		case PW_BISECT_PAIRWISE:
			fprintf(out, "pairwise: %s + %s on %s → %.2f ±%.2f %s\n", s->picks[0], s->picks[1],
			        s->cl, s->median, s->spread,
			        s->outcome == PW_BISECT_REGRESSED ? "REPRODUCED" : oc);
			break;
		case PW_BISECT_ROLL_STEP:
			fprintf(out, "roll lane: build %s … %s %.2f ±%.2f → %-12s commits (%lld, %lld], %u left\n",
			        s->cl, metric, s->median, s->spread, oc, (long long)s->range_lo,
			        (long long)s->range_hi, s->range_n);
			break;
		}
	}
	char conf[32];
	dashes(pw_bisect_confidence_name(h->confidence), conf, sizeof conf);
	stamp(out, h->started_us, h->finished_us ? h->finished_us : h->started_us);
	if (h->status == PW_BISECT_FAILED) {
		fprintf(out, "FAILED after %u builds: %s (no culprit)\n", h->builds,
		        h->reason ? h->reason : "");
		return;
	}
	if (h->confidence == PW_BISECT_INTERACTION) {
		fprintf(out, "interaction = %s + %s (each clean alone, regressed together) · confidence: %s\n",
		        h->interacting[0] ? h->interacting[0] : "?",
		        h->interacting[1] ? h->interacting[1] : "?", conf);
	} else if (h->culprit && *h->culprit && h->status == PW_BISECT_DONE) {
		fprintf(out, "culprit = %s \"%s\" (author: %s) · confidence: %s\n", h->culprit,
		        h->culprit_title ? h->culprit_title : "", h->culprit_owner ? h->culprit_owner : "",
		        conf);
		if (h->culprit_upstream && *h->culprit_upstream) {
			stamp(out, h->started_us, h->finished_us ? h->finished_us : h->started_us);
			fprintf(out, "inside the roll: upstream commit %s\n", h->culprit_upstream);
		}
	} else {
		char st[32];
		upper(pw_bisect_status_name(h->status), st, sizeof st);
		fprintf(out, "%s after %u builds\n", st, h->builds);
		return;
	}
	if (h->reason && *h->reason) {
		stamp(out, h->started_us, h->finished_us ? h->finished_us : h->started_us);
		fprintf(out, "note: %s\n", h->reason);
	}
	stamp(out, h->started_us, h->finished_us ? h->finished_us : h->started_us);
	fprintf(out, "%u builds\n", h->builds);
}
