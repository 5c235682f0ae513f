/*
 * watch_door.c: the doors of the watcher's input topics (watch_door.h).
 */
#include "watch_door.h"

#include <math.h>
#include <stdio.h>

#include "pw_input.h"

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
