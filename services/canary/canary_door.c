/*
 * canary_door.c: the canary's door (canary_door.h).
 */
#include "canary_door.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "canary.h"
#include "pw_input.h"
#include "pw_time.h"

#define R_MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
#define R_INCONSISTENT PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT
#define R_OK PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED

static Perfwatch__V1__DlqReason refuse(Perfwatch__V1__DlqReason r, char *detail, size_t dlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static Perfwatch__V1__DlqReason refuse(Perfwatch__V1__DlqReason r, char *detail, size_t dlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, dlen, fmt, ap);
	va_end(ap);
	return r;
}

/* A required name: set, at most PW_CANARY_NAME_MAX bytes, and without '/' when key is true. */
static Perfwatch__V1__DlqReason name(const char *field, const char *s, bool key, char *detail, size_t dlen)
{
	if (!s || !s[0])
		return refuse(R_MISSING, detail, dlen, "canary window needs %s (it is empty)", field);
	size_t n = strlen(s);
	if (n > PW_CANARY_NAME_MAX)
		return refuse(R_INVALID, detail, dlen, "%s of %zu bytes is too long (the cap is %d)", field, n,
		              PW_CANARY_NAME_MAX);
	if (key && strchr(s, '/'))
		return refuse(R_INVALID, detail, dlen, "%s \"%s\" holds '/' (the key joins rollout and family with it)",
		              field, s);
	return R_OK;
}

static Perfwatch__V1__DlqReason check(const Perfwatch__V1__CanaryWindow *w, char *detail, size_t dlen)
{
	Perfwatch__V1__DlqReason r;
	if ((r = name("rollout_id", w->rollout_id, true, detail, dlen)) != R_OK ||
	    (r = name("family", w->family, true, detail, dlen)) != R_OK ||
	    (r = name("family_kind", w->family_kind, false, detail, dlen)) != R_OK ||
	    (r = name("release", w->release, false, detail, dlen)) != R_OK ||
	    (r = name("artifact", w->artifact, false, detail, dlen)) != R_OK ||
	    (r = name("previous_release", w->previous_release, false, detail, dlen)) != R_OK ||
	    (r = name("previous_artifact", w->previous_artifact, false, detail, dlen)) != R_OK)
		return r;
	if (strcmp(w->family_kind, "tpu") != 0 && strcmp(w->family_kind, "gpu") != 0)
		return refuse(R_INVALID, detail, dlen, "family \"%s\": family_kind \"%s\" is not tpu or gpu", w->family,
		              w->family_kind);
	if (strcmp(w->release, w->previous_release) == 0)
		return refuse(R_INCONSISTENT, detail, dlen,
		              "family \"%s\": release and previous_release are both \"%s\" (nothing to compare)",
		              w->family, w->release);
	if (w->metric == PERFWATCH__V1__CANARY_METRIC__CANARY_METRIC_UNSPECIFIED)
		return refuse(R_MISSING, detail, dlen, "family \"%s\": metric is unspecified", w->family);
	if (w->metric < PERFWATCH__V1__CANARY_METRIC__CANARY_METRIC_TPOT ||
	    w->metric > PERFWATCH__V1__CANARY_METRIC__CANARY_METRIC_GOODPUT)
		return refuse(R_INVALID, detail, dlen, "family \"%s\": metric %d is not a CanaryMetric this build knows",
		              w->family, (int)w->metric);
	const char *m = pw_canary_metric_name((pw_canary_metric)(w->metric - 1));
	if (w->window_start_unix_us <= 0 || w->window_start_unix_us > PW_TIME_MAX_US)
		return refuse(R_INVALID, detail, dlen,
		              "family \"%s\" %s: window_start_unix_us %lld is not after 1970 and before the year 10000",
		              w->family, m, (long long)w->window_start_unix_us);
	if (w->window_s == 0 || w->window_s > PW_CANARY_WINDOW_S_MAX)
		return refuse(R_INVALID, detail, dlen, "family \"%s\" %s: window_s %u is not in 1..%d", w->family, m,
		              w->window_s, PW_CANARY_WINDOW_S_MAX);
	if (!isfinite(w->canary_value) || w->canary_value <= 0)
		return refuse(R_INVALID, detail, dlen, "family \"%s\" %s: canary_value %g is not a finite number > 0",
		              w->family, m, w->canary_value);
	if (!isfinite(w->baseline_value) || w->baseline_value <= 0)
		return refuse(R_INVALID, detail, dlen, "family \"%s\" %s: baseline_value %g is not a finite number > 0",
		              w->family, m, w->baseline_value);
	if (w->canary_replicas == 0 || w->baseline_replicas == 0)
		return refuse(R_INVALID, detail, dlen, "family \"%s\" %s: %u canary and %u baseline replicas (each arm needs one)",
		              w->family, m, w->canary_replicas, w->baseline_replicas);
	if (!isfinite(w->canary_fraction) || w->canary_fraction <= 0 || w->canary_fraction >= 1)
		return refuse(R_INVALID, detail, dlen, "family \"%s\" %s: canary_fraction %g is not in (0, 1)", w->family, m,
		              w->canary_fraction);
	return R_OK;
}

Perfwatch__V1__DlqReason pw_canary_window_decode(const uint8_t *buf, size_t len,
                                                 Perfwatch__V1__CanaryWindow **out, char *detail,
                                                 size_t dlen)
{
	*out = NULL;
	if (dlen)
		detail[0] = 0;
	ProtobufCMessage *m = NULL;
	Perfwatch__V1__DlqReason r =
		pw_input_decode(&perfwatch__v1__canary_window__descriptor, buf, len, &m, detail, dlen);
	if (r != R_OK)
		return r;
	Perfwatch__V1__CanaryWindow *w = (Perfwatch__V1__CanaryWindow *)m;
	if ((r = check(w, detail, dlen)) != R_OK) {
		perfwatch__v1__canary_window__free_unpacked(w, NULL);
		return r;
	}
	*out = w;
	return R_OK;
}

bool pw_canary_key(char *buf, size_t len, const char *rollout_id, const char *family)
{
	int n = snprintf(buf, len, "%s/%s", rollout_id ? rollout_id : "", family ? family : "");
	if (n < 0 || (size_t)n >= len) {
		if (len)
			buf[0] = 0;
		return false;
	}
	return true;
}
