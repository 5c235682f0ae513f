/*
 * wire_messages.h: the worked example's good messages for the tests that run
 * doors (test_key_limits.c; the alert and point tables of test_attr_door.c,
 * test_bisect_door.c, test_pager_door.c and test_baseliner_door.c, which
 * clear what their service does not read): the B64 TPOT alert of the gate
 * with every before side, a nightly series point, and the production
 * canary's chat-8b ROLLBACK (test_pager_door.c, test_pager_rollback.c), each as a struct of
 * parts that a test edits before packing (wire_build.h's wire_pack).
 *
 * A parts struct holds its sub-messages and a buffer for the series key, so
 * that an edit of a key part followed by wire_rekey_* keeps series_key the
 * canonical join of series (which every door checks).
 */
#ifndef PW_TEST_WIRE_MESSAGES_H
#define PW_TEST_WIRE_MESSAGES_H

#include <stdio.h>
#include <string.h>

#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/canary.pb-c.h"
#include "perfwatch/v1/series.pb-c.h"
#include "wire_build.h"

#define WIRE_NOW_US 1781740800000000LL /* 2026-06-18T00:00:00Z */
#define WIRE_DAY_US 86400000000LL
#define WIRE_GOOD_ALERT "perfreg-2026-06-18-00412"
#define WIRE_GOOD_KEY "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"

typedef struct wire_alert_parts {
	Perfwatch__V1__Alert al;
	Perfwatch__V1__SeriesKey key;
	Perfwatch__V1__AlertDelta delta;
	Perfwatch__V1__AlertBaseline base;
	Perfwatch__V1__AlertObserved obs;
	Perfwatch__V1__AlertChangepoint cp;
	char series_key[1024];
} wire_alert_parts;

/* buf = the canonical series key of k (model/hlo_fingerprint/platform/config/metric) */
static inline char *wire_key_join(char *buf, size_t n, const Perfwatch__V1__SeriesKey *k)
{
	snprintf(buf, n, "%s/%s/%s/%s/%s", k->model, k->hlo_fingerprint, k->platform, k->config, k->metric);
	return buf;
}

/* series_key as the canonical join of key */
static inline void wire_rekey_alert(wire_alert_parts *q)
{
	q->al.series_key = wire_key_join(q->series_key, sizeof q->series_key, &q->key);
}

/* The gate's regression alert of the worked example: a baseline window, a changepoint range, a build. */
static inline void wire_alert_init(wire_alert_parts *q)
{
	memset(q, 0, sizeof *q);
	perfwatch__v1__alert__init(&q->al);
	perfwatch__v1__series_key__init(&q->key);
	perfwatch__v1__alert_delta__init(&q->delta);
	perfwatch__v1__alert_baseline__init(&q->base);
	perfwatch__v1__alert_observed__init(&q->obs);
	perfwatch__v1__alert_changepoint__init(&q->cp);
	q->key.model = "chat-8b";
	q->key.hlo_fingerprint = "hlo:9f31c2ab";
	q->key.platform = "v6e-4";
	q->key.config = "decode.B64.s2048.int8";
	q->key.metric = "tpot_p50_ms";
	q->delta.abs = 0.32;
	q->delta.abs_unit = "ms";
	q->delta.pct = 8.2;
	q->base.median = 3.90;
	q->base.mad = 0.017;
	q->base.window_start_unix_us = WIRE_NOW_US - 37 * WIRE_DAY_US;
	q->base.window_end_unix_us = WIRE_NOW_US - 2 * WIRE_DAY_US;
	q->base.window = "xla-2026-06-10";
	q->obs.release = "xla-rc-2026-06-17";
	q->obs.median = 4.22;
	q->obs.n = 5;
	q->cp.changepoint_id = "cp-00412";
	q->cp.cl_range_lo = "cl/7841885";
	q->cp.cl_range_hi = "cl/7841923";
	q->al.alert_id = WIRE_GOOD_ALERT;
	q->al.revision = 1;
	q->al.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION;
	q->al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_GATE;
	q->al.created_unix_us = WIRE_NOW_US;
	q->al.series_id = 412;
	q->al.series = &q->key;
	q->al.delta = &q->delta;
	q->al.baseline = &q->base;
	q->al.observed = &q->obs;
	q->al.changepoint = &q->cp;
	q->al.verdict = PERFWATCH__V1__VERDICT__VERDICT_BLOCKING;
	q->al.owner_hint = "xla-fusion";
	q->al.summary = "chat-8b decode B64 TPOT +8.2%";
	wire_rekey_alert(q);
}

typedef struct wire_point_parts {
	Perfwatch__V1__SeriesPoint sp;
	Perfwatch__V1__SeriesKey key;
	Perfwatch__V1__CompilerBuild cb;
	char series_key[1024];
} wire_point_parts;

static inline void wire_rekey_point(wire_point_parts *q)
{
	q->sp.series_key = wire_key_join(q->series_key, sizeof q->series_key, &q->key);
}

/* A nightly's TPOT point of the worked example's series. */
static inline void wire_point_init(wire_point_parts *q)
{
	memset(q, 0, sizeof *q);
	perfwatch__v1__series_key__init(&q->key);
	q->key.model = "chat-8b";
	q->key.hlo_fingerprint = "hlo:9f31c2ab";
	q->key.platform = "v6e-4";
	q->key.config = "decode.B64.s2048.int8";
	q->key.metric = "tpot_p50_ms";
	perfwatch__v1__compiler_build__init(&q->cb);
	q->cb.build_id = "xla-nightly-2026-06-16";
	q->cb.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_NIGHTLY;
	q->cb.cl = "cl/7841885";
	q->cb.cl_number = 7841885;
	perfwatch__v1__series_point__init(&q->sp);
	q->sp.series_id = 412;
	q->sp.key = &q->key;
	q->sp.run_id = "t1-00412";
	q->sp.repeat_index = 3;
	q->sp.build = &q->cb;
	q->sp.value = 3.91;
	q->sp.unit = "ms";
	q->sp.measured_unix_us = 1781568000000000LL;
	q->sp.chip_set = "pinned-7";
	q->sp.cell = "cell-mtv5-c12";
	q->sp.firmware = "tpufw-2026.05.2";
	q->sp.harness_version = "perfbench-2.31";
	wire_rekey_point(q);
}

/*
 * test_canary.sh's chat-8b decision (docs/canary.md §8): ROLLBACK on TPOT,
 * +1.113% [+0.501%, +2.231%] after 38 windows, to the N−1 artifact.
 */
static inline void wire_rollback_init(Perfwatch__V1__RolloutDecision *q)
{
	perfwatch__v1__rollout_decision__init(q);
	q->rollout_id = "rollout-xla-2026-06-22";
	q->family = "chat-8b";
	q->decision = PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_ROLLBACK;
	q->metric = PERFWATCH__V1__CANARY_METRIC__CANARY_METRIC_TPOT;
	q->effect_pct = 1.113;
	q->lo_pct = 0.501;
	q->hi_pct = 2.231;
	q->windows = 38;
	q->decided_window_start_unix_us = 1781870700000000LL;
	q->release = "xla-rc-2026-06-22";
	q->previous_release = "xla-rc-2026-06-15";
	q->rollback_artifact = "serving/chat-8b/xla-rc-2026-06-15.aot";
	q->decided_unix_us = 1781900000000000LL;
	q->alpha = 0.05;
	q->mde_pct = 1;
	q->tolerance_pct = 0.5;
	q->family_windows = 114;
}

#endif
