/*
 * watch_door.c: the doors of the watcher's input topics (watch_door.h).
 */
#include "watch_door.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pw_input.h"
#include "watch.h"

Perfwatch__V1__DlqReason pw_watch_point_decode(const void *payload, size_t len,
                                               Perfwatch__V1__SeriesPoint **out, bool *skip,
                                               char *detail, size_t detail_len)
{
	*out = NULL;
	*skip = false;
	ProtobufCMessage *m;
	Perfwatch__V1__DlqReason r = pw_input_decode(&perfwatch__v1__series_point__descriptor, payload,
	                                             len, &m, detail, detail_len);
	if (r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return r;
	Perfwatch__V1__SeriesPoint *p = (Perfwatch__V1__SeriesPoint *)m;
	if (!p->build || p->build->kind != PERFWATCH__V1__BUILD_KIND__BUILD_KIND_NIGHTLY ||
	    p->bisect_job_id[0] || p->rebaseline_job_id[0]) {
		/* a re-baseline run (issue 17) is not a nightly of the trend: the
		 * baseliner takes it into its window, the changepoint path does not */
		*skip = true;
	} else if (!p->series_key[0] || !isfinite(p->value) || !p->build->build_id[0]) {
		snprintf(detail, detail_len, "%s",
		         !isfinite(p->value) ? "point value is not finite"
		                             : "point has no series key or build id");
		perfwatch__v1__series_point__free_unpacked(p, NULL);
		return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	}
	*out = p;
	return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED;
}

Perfwatch__V1__DlqReason pw_watch_fleet_decode(const void *payload, size_t len,
                                               Perfwatch__V1__FleetChangeEvent **out, char *detail,
                                               size_t detail_len)
{
	*out = NULL;
	ProtobufCMessage *m;
	Perfwatch__V1__DlqReason r = pw_input_decode(&perfwatch__v1__fleet_change_event__descriptor,
	                                             payload, len, &m, detail, detail_len);
	if (r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return r;
	Perfwatch__V1__FleetChangeEvent *fc = (Perfwatch__V1__FleetChangeEvent *)m;
	const char *why = NULL;
	if (!fc->event_id[0] || fc->occurred_unix_us == 0)
		why = "fleet change has no event id or time";
	else if (!fc->n_platforms && !fc->n_chip_sets && !fc->n_cells && !fc->n_firmware &&
	         !fc->n_harness_versions && !fc->fleet_wide)
		why = "fleet change has no selector and would select every series; set fleet_wide to "
		      "mean that";
	if (why) {
		snprintf(detail, detail_len, "%s", why);
		perfwatch__v1__fleet_change_event__free_unpacked(fc, NULL);
		return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
	}
	*out = fc;
	return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED;
}

Perfwatch__V1__DlqReason pw_watch_baseline_decode(const void *payload, size_t len,
                                                  Perfwatch__V1__Baseline **out, bool *skip,
                                                  char *detail, size_t detail_len)
{
	*out = NULL;
	*skip = false;
	ProtobufCMessage *m;
	Perfwatch__V1__DlqReason r = pw_input_decode(&perfwatch__v1__baseline__descriptor, payload,
	                                             len, &m, detail, detail_len);
	if (r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return r;
	Perfwatch__V1__Baseline *b = (Perfwatch__V1__Baseline *)m;
	if (len == 0) { /* a compaction tombstone: no state to set */
		*skip = true;
		*out = b;
		return r;
	}
	size_t key_len = strlen(b->series_key), event_len = strlen(b->freeze_event_id);
	/* no state would read as "not frozen" and thaw a frozen series; a state
	 * this build does not know is no better a guess */
	if (!key_len || b->state == PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_UNSPECIFIED) {
		snprintf(detail, detail_len, "%s",
		         !key_len ? "baseline has no series key" : "baseline has no state");
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD;
	} else if (key_len >= PW_SERIES_KEY_MAX) {
		snprintf(detail, detail_len, "baseline series key is %zu bytes, over the limit of %d",
		         key_len, PW_SERIES_KEY_MAX - 1);
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	} else if (!protobuf_c_enum_descriptor_get_value(&perfwatch__v1__baseline_state__descriptor,
	                                                 (int)b->state)) {
		snprintf(detail, detail_len, "baseline state %d is not a BaselineState this build knows",
		         (int)b->state);
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	} else if (event_len >= PW_WATCH_EVENT_LEN) {
		/* the baseliner takes event ids of at most 63 bytes; a longer one would be
		 * cut to name another event in the changepoints it annotates */
		snprintf(detail, detail_len, "baseline freeze_event_id is %zu bytes, over the limit of %d",
		         event_len, PW_WATCH_EVENT_LEN - 1);
		r = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE;
	}
	if (r != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) {
		perfwatch__v1__baseline__free_unpacked(b, NULL);
		return r;
	}
	*out = b;
	return r;
}
