/*
 * test_canary_door.c: the canary's door (services/canary/canary_door.h,
 * pw_canary_window_decode) on a table of hostile CanaryWindows from
 * perf.canary.v1: the DlqReason and a detail substring each refused one must
 * get, and what must pass with its rollout id unchanged; then random
 * mutations of the good window (door_table.h). What needs the stored windows
 * (out of order, a redelivery with other numbers) is the service's, checked
 * by tests/integration/test_canary.sh.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "canary_door.h"
#include "door_table.h"
#include "pw_time.h"

#define R_OK_ PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED
#define R_DECODE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED
#define R_MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
#define R_INCONS PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT
#define METRIC(m) PERFWATCH__V1__CANARY_METRIC__CANARY_METRIC_##m

#define GOOD_ROLLOUT "rollout-xla-rc-2026-06-22"

typedef struct win_parts {
	Perfwatch__V1__CanaryWindow w;
} win_parts;

static char id_200[201];

static wire_buf pack_win(door_edit_fn edit)
{
	static win_parts q;
	memset(&q, 0, sizeof q);
	perfwatch__v1__canary_window__init(&q.w);
	q.w.rollout_id = GOOD_ROLLOUT;
	q.w.family = "chat-8b";
	q.w.family_kind = "tpu";
	q.w.release = "xla-rc-2026-06-22";
	q.w.artifact = "serving/chat-8b/xla-rc-2026-06-22.aot";
	q.w.previous_release = "xla-rc-2026-06-15";
	q.w.previous_artifact = "serving/chat-8b/xla-rc-2026-06-15.aot";
	q.w.metric = METRIC(TPOT);
	q.w.window_start_unix_us = 1782118800000000LL;
	q.w.window_s = 300;
	q.w.canary_value = 3.94;
	q.w.baseline_value = 3.90;
	q.w.canary_replicas = 2;
	q.w.baseline_replicas = 2;
	q.w.canary_fraction = 0.03125;
	q.w.source = "pw-sim:canary";
	if (edit)
		edit(&q);
	return wire_pack(&q.w.base);
}

#define WEDIT(fn, stmt) DOOR_EDIT(fn, win_parts *q = p, stmt)
WEDIT(w_no_rollout, q->w.rollout_id = "")
WEDIT(w_no_family, q->w.family = "")
WEDIT(w_no_kind, q->w.family_kind = "")
WEDIT(w_no_release, q->w.release = "")
WEDIT(w_no_artifact, q->w.artifact = "")
WEDIT(w_no_prev, q->w.previous_release = "")
WEDIT(w_no_prev_artifact, q->w.previous_artifact = "")
WEDIT(w_slash_rollout, q->w.rollout_id = "r/1")
WEDIT(w_slash_family, q->w.family = "chat/8b")
WEDIT(w_rollout_200, q->w.rollout_id = (char *)memset(id_200, 'r', 200))
WEDIT(w_rollout_201, q->w.rollout_id = (char *)wire_letters('r', 201))
WEDIT(w_artifact_60k, q->w.previous_artifact = (char *)wire_letters('a', 60000))
WEDIT(w_kind_cpu, q->w.family_kind = "cpu")
WEDIT(w_kind_upper, q->w.family_kind = "TPU")
WEDIT(w_gpu, (q->w.family_kind = "gpu", q->w.family = "chat-70b-gpu"))
WEDIT(w_same_release, q->w.previous_release = "xla-rc-2026-06-22")
WEDIT(w_metric_unspec, q->w.metric = METRIC(UNSPECIFIED))
WEDIT(w_metric_99, q->w.metric = (Perfwatch__V1__CanaryMetric)99)
WEDIT(w_metric_neg, q->w.metric = (Perfwatch__V1__CanaryMetric)-1)
WEDIT(w_goodput, (q->w.metric = METRIC(GOODPUT), q->w.canary_value = 4100, q->w.baseline_value = 4120))
WEDIT(w_start_0, q->w.window_start_unix_us = 0)
WEDIT(w_start_neg, q->w.window_start_unix_us = -300000000)
WEDIT(w_start_max, q->w.window_start_unix_us = INT64_MAX)
WEDIT(w_start_last, q->w.window_start_unix_us = PW_TIME_MAX_US)
WEDIT(w_len_0, q->w.window_s = 0)
WEDIT(w_len_day, q->w.window_s = PW_CANARY_WINDOW_S_MAX)
WEDIT(w_len_over, q->w.window_s = PW_CANARY_WINDOW_S_MAX + 1)
WEDIT(w_canary_nan, q->w.canary_value = NAN)
WEDIT(w_canary_inf, q->w.canary_value = INFINITY)
WEDIT(w_canary_0, q->w.canary_value = 0)
WEDIT(w_canary_negz, q->w.canary_value = -0.0)
WEDIT(w_base_neg, q->w.baseline_value = -3.9)
WEDIT(w_base_ninf, q->w.baseline_value = -INFINITY)
WEDIT(w_base_tiny, q->w.baseline_value = 5e-324)
WEDIT(w_no_canary_replicas, q->w.canary_replicas = 0)
WEDIT(w_no_baseline_replicas, q->w.baseline_replicas = 0)
WEDIT(w_fraction_0, q->w.canary_fraction = 0)
WEDIT(w_fraction_1, q->w.canary_fraction = 1)
WEDIT(w_fraction_nan, q->w.canary_fraction = NAN)
WEDIT(w_sql_family, q->w.family = "chat'); DROP TABLE perfwatch.canary_windows;--%s%n")
WEDIT(w_no_source, q->w.source = "")
WIRE_APPEND_STR(w_nul_family, 2, "chat-8b\0evil")
WIRE_APPEND_STR(w_ff_artifact, 7, "serving/\377")
WIRE_APPEND_STR(w_second_rollout, 1, "rollout-second")
static void w_value_varint(wire_buf *b) { wire_int(b, 11, 4); }
static void w_metric_ld(wire_buf *b) { wire_ld(b, 8, "TPOT", 4); }

#define NOT_WIN "payload is not a perfwatch.v1.CanaryWindow"
#define NEEDS "canary window needs "
static const door_case wcases[] = {
	{"the good window (TPOT)", NULL, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	DOOR_COMMON_CASES(R_MISSING, NEEDS "rollout_id", NOT_WIN),
	{"canary_value with the varint wire type", NULL, w_value_varint, NULL, 0, 0, R_DECODE, NOT_WIN, 0, 0, 0},
	{"metric as a string", NULL, w_metric_ld, NULL, 0, 0, R_DECODE, NOT_WIN, 0, 0, 0},
	/* every required field missing in turn */
	{"no rollout_id", w_no_rollout, NULL, NULL, 0, 0, R_MISSING, NEEDS "rollout_id", 0, 0, 0},
	{"no family", w_no_family, NULL, NULL, 0, 0, R_MISSING, NEEDS "family", 0, 0, 0},
	{"no family_kind", w_no_kind, NULL, NULL, 0, 0, R_MISSING, NEEDS "family_kind", 0, 0, 0},
	{"no release", w_no_release, NULL, NULL, 0, 0, R_MISSING, NEEDS "release", 0, 0, 0},
	{"no artifact", w_no_artifact, NULL, NULL, 0, 0, R_MISSING, NEEDS "artifact", 0, 0, 0},
	{"no previous_release", w_no_prev, NULL, NULL, 0, 0, R_MISSING, NEEDS "previous_release", 0, 0, 0},
	{"no previous_artifact (nothing to roll back to)", w_no_prev_artifact, NULL, NULL, 0, 0, R_MISSING,
	 NEEDS "previous_artifact", 0, 0, 0},
	{"metric unspecified", w_metric_unspec, NULL, NULL, 0, 0, R_MISSING, "metric is unspecified", 0, 0, 0},
	/* names */
	{"'/' in rollout_id", w_slash_rollout, NULL, NULL, 0, 0, R_INVALID, "rollout_id \"r/1\" holds '/'", 0, 0, 0},
	{"'/' in family", w_slash_family, NULL, NULL, 0, 0, R_INVALID, "family \"chat/8b\" holds '/'", 0, 0, 0},
	{"rollout_id of 200 bytes (the cap)", w_rollout_200, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 200},
	{"rollout_id of 201 bytes", w_rollout_201, NULL, NULL, 0, 0, R_INVALID,
	 "rollout_id of 201 bytes is too long (the cap is 200)", 0, 0, 0},
	{"previous_artifact of 60 kB", w_artifact_60k, NULL, NULL, 0, 0, R_INVALID,
	 "previous_artifact of 60000 bytes is too long", 0, 0, 0},
	{"family_kind cpu", w_kind_cpu, NULL, NULL, 0, 0, R_INVALID, "family_kind \"cpu\" is not tpu or gpu", 0, 0, 0},
	{"family_kind TPU (case matters)", w_kind_upper, NULL, NULL, 0, 0, R_INVALID, "\"TPU\" is not tpu or gpu", 0, 0, 0},
	{"a GPU family", w_gpu, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"the same release on both arms", w_same_release, NULL, NULL, 0, 0, R_INCONS,
	 "release and previous_release are both \"xla-rc-2026-06-22\"", 0, 0, 0},
	/* metric */
	{"metric 99", w_metric_99, NULL, NULL, 0, 0, R_INVALID, "metric 99 is not a CanaryMetric this build knows", 0, 0, 0},
	{"metric -1", w_metric_neg, NULL, NULL, 0, 0, R_INVALID, "metric -1 is not a CanaryMetric", 0, 0, 0},
	{"goodput", w_goodput, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	/* time and length */
	{"window start 0", w_start_0, NULL, NULL, 0, 0, R_INVALID, "window_start_unix_us 0 is not after 1970", 0, 0, 0},
	{"window start before 1970", w_start_neg, NULL, NULL, 0, 0, R_INVALID, "window_start_unix_us -300000000", 0, 0, 0},
	{"window start INT64_MAX", w_start_max, NULL, NULL, 0, 0, R_INVALID, "before the year 10000", 0, 0, 0},
	{"window start 9999-12-31T23:59:59.999999Z (the last time stored)", w_start_last, NULL, NULL, 0, 0, R_OK_, NULL, 0,
	 0, 0},
	{"window of 0 s", w_len_0, NULL, NULL, 0, 0, R_INVALID, "window_s 0 is not in 1..86400", 0, 0, 0},
	{"window of a day (the cap)", w_len_day, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"window of a day and a second", w_len_over, NULL, NULL, 0, 0, R_INVALID, "window_s 86401", 0, 0, 0},
	/* values */
	{"canary_value NaN", w_canary_nan, NULL, NULL, 0, 0, R_INVALID, "canary_value nan is not a finite number > 0", 0, 0,
	 0},
	{"canary_value +inf", w_canary_inf, NULL, NULL, 0, 0, R_INVALID, "canary_value inf", 0, 0, 0},
	{"canary_value 0", w_canary_0, NULL, NULL, 0, 0, R_INVALID, "canary_value 0 is not", 0, 0, 0},
	{"canary_value -0 (packed as absent: 0)", w_canary_negz, NULL, NULL, 0, 0, R_INVALID, "canary_value 0 is not", 0, 0, 0},
	{"baseline_value negative", w_base_neg, NULL, NULL, 0, 0, R_INVALID, "baseline_value -3.9 is not", 0, 0, 0},
	{"baseline_value -inf", w_base_ninf, NULL, NULL, 0, 0, R_INVALID, "baseline_value -inf", 0, 0, 0},
	{"baseline_value the smallest subnormal (finite, > 0)", w_base_tiny, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"no canary replica", w_no_canary_replicas, NULL, NULL, 0, 0, R_INVALID, "0 canary and 2 baseline replicas", 0, 0,
	 0},
	{"no baseline replica", w_no_baseline_replicas, NULL, NULL, 0, 0, R_INVALID, "2 canary and 0 baseline replicas", 0,
	 0, 0},
	{"canary_fraction 0", w_fraction_0, NULL, NULL, 0, 0, R_INVALID, "canary_fraction 0 is not in (0, 1)", 0, 0, 0},
	{"canary_fraction 1 (no baseline left)", w_fraction_1, NULL, NULL, 0, 0, R_INVALID, "canary_fraction 1 is not", 0, 0,
	 0},
	{"canary_fraction NaN", w_fraction_nan, NULL, NULL, 0, 0, R_INVALID, "canary_fraction nan", 0, 0, 0},
	/* NUL and UTF-8 */
	{"NUL inside family", NULL, w_nul_family, NULL, 0, 0, R_INVALID, "\"family\" contains a NUL byte", 0, 0, 0},
	{"0xff in previous_artifact", NULL, w_ff_artifact, NULL, 0, 0, R_INVALID, "\"previous_artifact\" is not valid UTF-8",
	 0, 0, 0},
	/* let through, unchanged */
	{"SQL and printf metacharacters in family (data)", w_sql_family, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"no source (optional)", w_no_source, NULL, NULL, 0, 0, R_OK_, NULL, 0, 0, 0},
	{"rollout_id twice: the last counts", NULL, w_second_rollout, NULL, 0, 0, R_OK_, "rollout-second", 0, 0, 0},
};

DOOR_FN(win_door, Perfwatch__V1__CanaryWindow, pw_canary_window_decode)

static const char *win_rollout(const ProtobufCMessage *m)
{
	return ((const Perfwatch__V1__CanaryWindow *)m)->rollout_id;
}

Test(canary_door, every_hostile_window_gets_its_reason)
{
	door_cases_run("canary perf.canary.v1", DOOR_TABLE(wcases), pack_win, GOOD_ROLLOUT, win_door, win_rollout);
}

Test(canary_door, mutations_of_the_good_window)
{
	wire_buf good = pack_win(NULL);
	door_mutations("canary perf.canary.v1", &good, win_door, 20000, 20260622);
	free(good.p);
}

Test(canary_door, key_joins_rollout_and_family)
{
	char key[32];
	cr_assert(pw_canary_key(key, sizeof key, "r1", "chat-8b"));
	cr_assert_str_eq(key, "r1/chat-8b");
	cr_assert(!pw_canary_key(key, 8, "r1", "chat-8b"));
	cr_assert_str_eq(key, "");
}
