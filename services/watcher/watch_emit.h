/*
 * watch_emit.h: what the watcher says about a shift and whom a fleet change
 * concerns — the pure functions between watch.h's events and the wire.
 *
 * watch.h decides that a series shifted; this module turns a pw_watch_event
 * into the Changepoint (changepoint.proto) and Alert (alert.proto) messages
 * the watcher publishes and the text the perfwatch.changepoints and
 * perfwatch.alerts rows hold, matches FleetChangeEvent selectors
 * (fleet.proto) against the environment of a series' latest point, and
 * orders points so that a redelivered or reloaded point is recognised.
 * services/watcher/main.c and watch_store.c call these; nothing here touches a
 * broker or a database, so tests/unit/test_watcher_emit.c covers all of it.
 */
#ifndef PW_WATCH_EMIT_H
#define PW_WATCH_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/changepoint.pb-c.h"
#include "perfwatch/v1/fleet.pb-c.h"
#include "watch.h"

#define PW_WATCH_KEY_LEN 512
#define PW_WATCH_FIELD_LEN 128

/* Where a series' latest point ran: what fleet-change selectors look at. */
typedef struct pw_watch_env {
	char platform[PW_WATCH_FIELD_LEN];
	char chip_set[PW_WATCH_FIELD_LEN];
	char cell[PW_WATCH_FIELD_LEN];
	char firmware[PW_WATCH_FIELD_LEN];
	char harness[PW_WATCH_FIELD_LEN];
} pw_watch_env;

/*
 * A fleet change's selectors, borrowed from a FleetChangeEvent: an empty
 * list matches anything; every non-empty list must hold the env's value
 * (AND across lists, OR within one), as fleet.proto says.
 */
typedef struct pw_watch_selectors {
	char *const *platforms;
	size_t n_platforms;
	char *const *chip_sets;
	size_t n_chip_sets;
	char *const *cells;
	size_t n_cells;
	char *const *firmware;
	size_t n_firmware;
	char *const *harness;
	size_t n_harness;
} pw_watch_selectors;

/* Points the selectors at ev's lists (borrowed: ev must outlive sel). */
void pw_watch_selectors_from_proto(pw_watch_selectors *sel,
                                   const Perfwatch__V1__FleetChangeEvent *ev);

/* Whether the change selects a series whose latest point ran in env. */
bool pw_watch_selectors_match(const pw_watch_selectors *sel, const pw_watch_env *env);

/*
 * The order of a series' points: by measured time, then run id, then repeat
 * index. The watcher appends a point only when it is later than the last one
 * appended, which makes Kafka redeliveries and points already reloaded from
 * perfwatch.samples no-ops (and drops a point that arrives out of order:
 * counted, see docs/watcher.md).
 */
typedef struct pw_watch_point_key {
	int64_t ts_us;
	char run_id[PW_WATCH_FIELD_LEN];
	uint32_t repeat_index;
} pw_watch_point_key;

int pw_watch_point_key_cmp(const pw_watch_point_key *a, const pw_watch_point_key *b);

/* What the messages need to know about the series besides the event. */
typedef struct pw_watch_info {
	int64_t series_id;
	const char *series_key; /* "model/hlo/platform/config/metric", borrowed */
	const char *unit;       /* borrowed */
} pw_watch_info;

/*
 * "YYYY-MM-DD" (UTC) of unix microseconds ts_us into out (at least 11 bytes).
 */
void pw_watch_format_day(int64_t ts_us, char *out, size_t outlen);

/*
 * CLs in (last clean, first shifted]: the difference of the builds' CL
 * numbers (0 when they are not increasing). Nightly head CLs are numbered
 * consecutively in the CL history, so this is the size of the range the
 * bisector searches (38 for cl/7841885..cl/7841923).
 */
uint32_t pw_watch_n_cls(const pw_watch_event *ev);

/* The alert's revision: 2 for PELT's confirmation or the withdrawal of a provisional shift, else 1. */
uint32_t pw_watch_alert_revision(const pw_watch_event *ev);

/* The alert's kind, verdict and their perfwatch.alerts text. */
Perfwatch__V1__AlertKind pw_watch_alert_kind(const pw_watch_event *ev);
Perfwatch__V1__Verdict pw_watch_verdict(const pw_watch_event *ev);
const char *pw_watch_alert_kind_name(Perfwatch__V1__AlertKind k);
const char *pw_watch_verdict_name(Perfwatch__V1__Verdict v);

/*
 * The two messages of one event, with the storage their strings point to.
 * pw_watch_msgs_build fills m from ev and info; the messages borrow strings
 * from m itself, from ev and from info (which must outlive m's use) and
 * allocate nothing, so there is nothing to release. page_route (borrowed)
 * is the receiver named in Alert.page when the event pages.
 */
typedef struct pw_watch_msgs {
	Perfwatch__V1__Changepoint cp;
	Perfwatch__V1__SeriesKey cp_key;
	Perfwatch__V1__Alert alert;
	Perfwatch__V1__SeriesKey alert_key;
	Perfwatch__V1__AlertBaseline baseline;
	Perfwatch__V1__AlertObserved observed;
	Perfwatch__V1__AlertDelta delta;
	Perfwatch__V1__AlertChangepoint alert_cp;
	char changepoint_id[PW_WATCH_KEY_LEN + PW_WATCH_BUILD_LEN + 2];
	char alert_id[PW_WATCH_BUILD_LEN + 48];
	char day[16];
	char parts[5][PW_WATCH_FIELD_LEN]; /* the series key split at '/' */
	char summary[768];
} pw_watch_msgs;

void pw_watch_msgs_build(pw_watch_msgs *m, const pw_watch_event *ev, const pw_watch_info *info,
                         const char *page_route, int64_t now_us);

#endif
