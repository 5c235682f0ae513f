/*
 * watch_door.h: the doors of the watcher's input topics — what it checks of
 * a SeriesPoint (perf.points.v1), a FleetChangeEvent (perf.fleet-changes.v1)
 * and a Baseline (perf.baselines.v1, of which it reads only series_key,
 * state and freeze_event_id) before anything else sees them — as plain
 * functions of the payload (no broker, no database), so that tables of
 * hostile messages can test them (tests/unit/test_watch_door.c).
 * watch_service.c calls them for every consumed message and dead-letters
 * what they refuse with the reason and detail they give.
 */
#ifndef PW_WATCH_DOOR_H
#define PW_WATCH_DOOR_H

#include <stdbool.h>
#include <stddef.h>

#include "perfwatch/v1/baseline.pb-c.h"
#include "perfwatch/v1/dlq.pb-c.h"
#include "perfwatch/v1/fleet.pb-c.h"
#include "perfwatch/v1/series.pb-c.h"

/*
 * One perf.points.v1 payload: the wire form (no NUL, valid UTF-8 in any
 * string: pw_input_check_wire) -> INVALID_VALUE; the decode ->
 * DECODE_FAILED; a point of any build but a nightly, or of a bisection job,
 * is not the watcher's (*skip set, the point handed back, no dead letter);
 * a nightly point needs a series key, a finite value and a build id ->
 * INVALID_VALUE. Returns PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED with
 * *out the point (freed by the caller with
 * perfwatch__v1__series_point__free_unpacked), or the dead letter's reason
 * with *out NULL and the detail in detail.
 */
Perfwatch__V1__DlqReason pw_watch_point_decode(const void *payload, size_t len,
                                               Perfwatch__V1__SeriesPoint **out, bool *skip,
                                               char *detail, size_t detail_len);

/*
 * One perf.fleet-changes.v1 payload: the wire form -> INVALID_VALUE; the
 * decode -> DECODE_FAILED; an event id and a time -> MISSING_FIELD; a
 * selector, or fleet_wide set (an event with no selector would select every
 * series) -> MISSING_FIELD. Returns as pw_watch_point_decode (free with
 * perfwatch__v1__fleet_change_event__free_unpacked).
 */
Perfwatch__V1__DlqReason pw_watch_fleet_decode(const void *payload, size_t len,
                                               Perfwatch__V1__FleetChangeEvent **out, char *detail,
                                               size_t detail_len);

/*
 * One perf.baselines.v1 payload: the wire form -> INVALID_VALUE; the decode ->
 * DECODE_FAILED; a zero-length payload is a compaction tombstone (*skip set,
 * the empty message handed back, no dead letter); a series key and a state
 * -> MISSING_FIELD; a key of at most PW_SERIES_KEY_MAX - 1 bytes, a state
 * this build knows and a freeze_event_id of at most PW_WATCH_EVENT_LEN - 1
 * bytes -> INVALID_VALUE. The numbers (median, n, version, times) are not the
 * watcher's and pass as they come. Returns as pw_watch_point_decode (free
 * with perfwatch__v1__baseline__free_unpacked).
 */
Perfwatch__V1__DlqReason pw_watch_baseline_decode(const void *payload, size_t len,
                                                  Perfwatch__V1__Baseline **out, bool *skip,
                                                  char *detail, size_t detail_len);

#endif
