/*
 * attr_door.c: the attributor's door on perf.alerts.v1 and
 * perf.bisections.v1 (attr_door.h).
 */
#include "attr_door.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pw_alert_followup.h"
#include "pw_input.h"

#define R_DECODE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED
#define R_MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
#define R_INCONSISTENT PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT

static bool set(const char *s)
{
	return s && s[0];
}

static size_t len_of(const char *s)
{
	return s ? strlen(s) : 0;
}

static bool key_complete(const Perfwatch__V1__SeriesKey *s)
{
	return s && set(s->model) && set(s->hlo_fingerprint) && set(s->platform) && set(s->config) &&
	       set(s->metric);
}

static pw_attr_input refuse(Perfwatch__V1__DlqReason *reason, Perfwatch__V1__DlqReason r, char *detail,
                            size_t dlen, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static pw_attr_input refuse(Perfwatch__V1__DlqReason *reason, Perfwatch__V1__DlqReason r, char *detail,
                            size_t dlen, const char *fmt, ...)
{
	*reason = r;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, dlen, fmt, ap);
	va_end(ap);
	return PW_ATTR_INPUT_DEAD;
}

/* The wire form and the protobuf: the message, or NULL with *reason and detail. */
static void *decode(const ProtobufCMessageDescriptor *desc, const void *payload, size_t len,
                    Perfwatch__V1__DlqReason *reason, char *detail, size_t dlen)
{
	if (!payload || len == 0) {
		refuse(reason, R_DECODE, detail, dlen, "empty payload");
		return NULL;
	}
	char why[256];
	if (pw_input_check_wire(desc, payload, len, why, sizeof why) != PW_OK) {
		refuse(reason, R_INVALID, detail, dlen, "%s: %s", desc->name, why);
		return NULL;
	}
	void *m = protobuf_c_message_unpack(desc, NULL, len, payload);
	if (!m)
		refuse(reason, R_DECODE, detail, dlen, "payload is not a %s", desc->name);
	return m;
}

int64_t pw_attr_cl_number(const char *cl)
{
	if (!cl || strncmp(cl, "cl/", 3) != 0)
		return 0;
	char *end;
	long long v = strtoll(cl + 3, &end, 10);
	return (*end == 0 || *end == '@') && v > 0 ? v : 0;
}

/* A time of a baseline window: 0 (unset) or in 1970..2200. */
static bool time_ok(int64_t us)
{
	return us >= 0 && us <= PW_ATTR_TIME_MAX_US;
}

pw_attr_input pw_attr_alert_decode(const void *payload, size_t len, Perfwatch__V1__Alert **out,
                                   pw_attr_before *before, Perfwatch__V1__DlqReason *reason, char *detail,
                                   size_t dlen)
{
	*out = NULL;
	*before = (pw_attr_before){0};
	detail[0] = 0;
	Perfwatch__V1__Alert *al = decode(&perfwatch__v1__alert__descriptor, payload, len, reason, detail, dlen);
	if (!al)
		return PW_ATTR_INPUT_DEAD;
	pw_attr_input in = PW_ATTR_INPUT_ACCEPT;
	const Perfwatch__V1__AlertBaseline *bl = al->baseline;
	const char *id = al->alert_id;
	if (pw_alert_is_follow_up(al)) {
		in = PW_ATTR_INPUT_FOLLOW_UP;
	} else if (al->kind != PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION ||
	           (al->source != PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_GATE &&
	            al->source != PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_WATCHER)) {
		in = PW_ATTR_INPUT_IGNORE; /* improvements, infra health and the baseliner's outliers */
	} else if (!set(id)) {
		in = refuse(reason, R_MISSING, detail, dlen, "alert has no alert_id");
	} else if (!key_complete(al->series) || !set(al->series_key)) {
		in = refuse(reason, R_MISSING, detail, dlen, "alert \"%.100s\" has an incomplete series key", id);
	} else if (!al->observed || !set(al->observed->release)) {
		in = refuse(reason, R_MISSING, detail, dlen, "alert \"%.100s\" names no observed build", id);
	} else if (strlen(id) > PW_ATTR_ID_MAX || strlen(al->series_key) > PW_SERIES_KEY_MAX - 1 ||
	           strlen(al->observed->release) > PW_ATTR_ID_MAX || (bl && len_of(bl->window) > PW_ATTR_ID_MAX)) {
		in = refuse(reason, R_INVALID, detail, dlen,
		            "alert \"%.100s\": alert_id, series key, observed or baseline build too long "
		            "(%zu, %zu, %zu, %zu bytes; at most %d, %d, %d, %d)",
		            id, strlen(id), strlen(al->series_key), strlen(al->observed->release),
		            bl ? len_of(bl->window) : 0, PW_ATTR_ID_MAX, PW_SERIES_KEY_MAX - 1, PW_ATTR_ID_MAX,
		            PW_ATTR_ID_MAX);
	} else if (!pw_input_series_key_matches(al->series_key, al->series)) {
		in = refuse(reason, R_INCONSISTENT, detail, dlen,
		            "alert \"%.100s\": series_key \"%.150s\" does not match its series", id, al->series_key);
	} else if (bl && (!time_ok(bl->window_start_unix_us) || !time_ok(bl->window_end_unix_us))) {
		in = refuse(reason, R_INVALID, detail, dlen,
		            "alert \"%.100s\": baseline window %" PRId64 "..%" PRId64 " us is not in 1970..2200", id,
		            bl->window_start_unix_us, bl->window_end_unix_us);
	} else if (bl && bl->window_start_unix_us > 0 && bl->window_end_unix_us > 0 &&
	           bl->window_end_unix_us <= bl->window_start_unix_us) {
		in = refuse(reason, R_INCONSISTENT, detail, dlen,
		            "alert \"%.100s\": baseline window ends (%" PRId64 ") before it starts (%" PRId64 ")", id,
		            bl->window_end_unix_us, bl->window_start_unix_us);
	} else if (bl && bl->window_start_unix_us > 0 && bl->window_end_unix_us > bl->window_start_unix_us) {
		before->window_start_us = bl->window_start_unix_us;
		before->window_end_us = bl->window_end_unix_us;
	} else if (al->changepoint && pw_attr_cl_number(al->changepoint->cl_range_lo) > 0) {
		before->max_cl = pw_attr_cl_number(al->changepoint->cl_range_lo);
	} else if (bl && set(bl->window)) {
		before->build_id = bl->window; /* the gate names the baseline release there */
	} else {
		in = refuse(reason, R_MISSING, detail, dlen,
		            "alert \"%.100s\" has no baseline window, changepoint range or baseline build", id);
	}
	/* what the attributor acts on is bounded: it is copied into its follow-up (pw_alert_followup.h) */
	if (in == PW_ATTR_INPUT_ACCEPT && !pw_alert_within_bounds(al, len, detail, dlen)) {
		*reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE;
		in = PW_ATTR_INPUT_DEAD;
	}
	if (in == PW_ATTR_INPUT_DEAD) {
		perfwatch__v1__alert__free_unpacked(al, NULL);
		*before = (pw_attr_before){0};
	} else {
		*out = al;
	}
	return in;
}

void pw_attr_culprit_steps(const Perfwatch__V1__Bisection *bs, const char **before, size_t *nb,
                           const char **after, size_t *na)
{
	int64_t culprit = pw_attr_cl_number(bs->culprit);
	*nb = *na = 0;
	for (size_t i = 0; i < bs->n_steps; i++) {
		const Perfwatch__V1__BisectStep *s = bs->steps[i];
		if (!set(s->job_id))
			continue;
		if (s->purpose == PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_VERIFY_ADJACENT ||
		    s->cl_number == culprit - 1) {
			if (before)
				before[*nb] = s->job_id;
			(*nb)++;
		} else if (s->cl_number == culprit &&
		           s->purpose != PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_VERIFY_CHERRY_PICK) {
			if (after)
				after[*na] = s->job_id;
			(*na)++;
		}
	}
}

/* Bytes of the text[] literal of the job ids of one side, at most (every byte escaped). */
static size_t side_bytes(const Perfwatch__V1__Bisection *bs, bool before_side)
{
	int64_t culprit = pw_attr_cl_number(bs->culprit);
	size_t n = 2;
	for (size_t i = 0; i < bs->n_steps; i++) {
		const Perfwatch__V1__BisectStep *s = bs->steps[i];
		if (!set(s->job_id))
			continue;
		bool b = s->purpose == PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_VERIFY_ADJACENT ||
		         s->cl_number == culprit - 1;
		bool a = !b && s->cl_number == culprit &&
		         s->purpose != PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_VERIFY_CHERRY_PICK;
		if (before_side ? b : a)
			n += 2 * strlen(s->job_id) + 3;
	}
	return n;
}

pw_attr_input pw_attr_bisection_decode(const void *payload, size_t len, Perfwatch__V1__Bisection **out,
                                       Perfwatch__V1__DlqReason *reason, char *detail, size_t dlen)
{
	*out = NULL;
	detail[0] = 0;
	Perfwatch__V1__Bisection *bs =
		decode(&perfwatch__v1__bisection__descriptor, payload, len, reason, detail, dlen);
	if (!bs)
		return PW_ATTR_INPUT_DEAD;
	pw_attr_input in = PW_ATTR_INPUT_ACCEPT;
	const char *id = bs->bisection_id;
	size_t longest_job = 0, nb = 0, na = 0;
	for (size_t i = 0; i < bs->n_steps; i++)
		if (len_of(bs->steps[i]->job_id) > longest_job)
			longest_job = len_of(bs->steps[i]->job_id);
	if (!set(bs->culprit) || bs->status != PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_DONE) {
		in = PW_ATTR_INPUT_IGNORE; /* not (yet) a culprit: nothing to attribute */
	} else if (!set(id)) {
		in = refuse(reason, R_MISSING, detail, dlen, "bisection has no bisection_id");
	} else if (!set(bs->alert_id)) {
		in = refuse(reason, R_MISSING, detail, dlen, "bisection \"%.100s\" names no alert", id);
	} else if (!key_complete(bs->series) || !set(bs->series_key)) {
		in = refuse(reason, R_MISSING, detail, dlen, "bisection \"%.100s\" has an incomplete series key", id);
	} else if (pw_attr_cl_number(bs->culprit) <= 0) {
		in = refuse(reason, R_INVALID, detail, dlen, "bisection \"%.100s\" has culprit \"%.40s\", not cl/N", id,
		            bs->culprit);
	} else if (strlen(id) > PW_ATTR_ID_MAX || strlen(bs->alert_id) > PW_ATTR_ID_MAX ||
	           strlen(bs->series_key) > PW_SERIES_KEY_MAX - 1 || bs->n_steps > PW_ATTR_STEPS_MAX ||
	           longest_job > PW_ATTR_ID_MAX) {
		in = refuse(reason, R_INVALID, detail, dlen,
		            "bisection \"%.100s\": ids of %zu, %zu, %zu bytes, %zu steps, a job id of %zu bytes "
		            "(at most %d, %d, %d bytes, %d steps, %d bytes)",
		            id, strlen(id), strlen(bs->alert_id), strlen(bs->series_key), bs->n_steps, longest_job,
		            PW_ATTR_ID_MAX, PW_ATTR_ID_MAX, PW_SERIES_KEY_MAX - 1, PW_ATTR_STEPS_MAX, PW_ATTR_ID_MAX);
	} else if (!pw_input_series_key_matches(bs->series_key, bs->series)) {
		in = refuse(reason, R_INCONSISTENT, detail, dlen,
		            "bisection \"%.100s\": series_key \"%.150s\" does not match its series", id, bs->series_key);
	} else if ((pw_attr_culprit_steps(bs, NULL, &nb, NULL, &na), nb == 0 || na == 0)) {
		in = refuse(reason, R_INCONSISTENT, detail, dlen,
		            "bisection \"%.100s\" has no step at %s culprit-1 or at the culprit with a job id", id,
		            bs->culprit);
	} else if (side_bytes(bs, true) > PW_ATTR_JOB_IDS_MAX || side_bytes(bs, false) > PW_ATTR_JOB_IDS_MAX) {
		in = refuse(reason, R_INVALID, detail, dlen,
		            "bisection \"%.100s\": the job ids of a side take %zu and %zu bytes (at most %d)", id,
		            side_bytes(bs, true), side_bytes(bs, false), PW_ATTR_JOB_IDS_MAX);
	}
	if (in == PW_ATTR_INPUT_DEAD)
		perfwatch__v1__bisection__free_unpacked(bs, NULL);
	else
		*out = bs;
	return in;
}
