/*
 * fuzz_seeds.c: writes the seed corpus of fuzz_wire (bench/fuzz/corpus/
 * fuzz_wire): for each message type fuzz_wire knows, a well-formed message
 * with its selector byte in front. RunResults, FleetChangeEvents, a
 * GateRequest and CompilerCls come from the simulator (the worked example);
 * alerts and a bisection that the bisector's and the attributor's doors take,
 * and a changepoint, a gate verdict with a waived series and an attribution
 * that the baseliner's and the pager's doors take, are built field by field,
 * a CanaryWindow comes from pw-sim canary's scenario and its chat-8b ROLLBACK is built
 * field by field for the pager's door; the other types are filled from their
 * descriptors (every string, number, enum, sub-message and two elements of
 * every list), so the fuzzer starts from messages that reach every field's
 * decoder.
 *
 *   fuzz_seeds SCENARIO.scn OUTDIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/attribution.pb-c.h"
#include "perfwatch/v1/baseline.pb-c.h"
#include "perfwatch/v1/bisect.pb-c.h"
#include "perfwatch/v1/canary.pb-c.h"
#include "perfwatch/v1/changepoint.pb-c.h"
#include "perfwatch/v1/compiler.pb-c.h"
#include "perfwatch/v1/dlq.pb-c.h"
#include "perfwatch/v1/fleet.pb-c.h"
#include "perfwatch/v1/gate.pb-c.h"
#include "perfwatch/v1/page.pb-c.h"
#include "perfwatch/v1/run.pb-c.h"
#include "perfwatch/v1/series.pb-c.h"
#include "sim_model.h"
#include "sim_proto.h"

/* The selectors of fuzz_wire.c's types[], in its order. */
enum { S_RUN, S_POINT, S_FLEET, S_GATE, S_BASELINE, S_ALERT, S_BISECTION, S_CL, S_JOB, S_PAGE,
       S_TRIAGE, S_DLQ, S_CHANGEPOINT, S_GATE_VERDICT, S_ATTRIBUTION, S_CANARY, S_ROLLOUT };

static const char *outdir;
static int nwritten;

static void put(int sel, const char *name, const uint8_t *buf, size_t len)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%02d-%s", outdir, sel, name);
	FILE *f = fopen(path, "wb");
	if (!f) {
		fprintf(stderr, "fuzz_seeds: cannot write %s\n", path);
		exit(1);
	}
	uint8_t s = (uint8_t)sel;
	fwrite(&s, 1, 1, f);
	fwrite(buf, 1, len, f);
	fclose(f);
	nwritten++;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p) {
		fprintf(stderr, "fuzz_seeds: out of memory\n");
		exit(1);
	}
	return p;
}

static ProtobufCMessage *fill(const ProtobufCMessageDescriptor *d, int depth);

/* One value of field f at p. */
static void fill_value(const ProtobufCFieldDescriptor *f, void *p, int depth, int k)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING: {
		static const char *const s[] = {"chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms",
		                                "cl/7841917"};
		*(char **)p = strdup(s[k % 2]);
		break;
	}
	case PROTOBUF_C_TYPE_BYTES: {
		ProtobufCBinaryData *b = p;
		b->data = (uint8_t *)strdup("\x01\x02\x03");
		b->len = 3;
		break;
	}
	case PROTOBUF_C_TYPE_MESSAGE:
		*(ProtobufCMessage **)p = fill(f->descriptor, depth + 1);
		break;
	case PROTOBUF_C_TYPE_ENUM: {
		const ProtobufCEnumDescriptor *e = f->descriptor;
		*(int *)p = e->n_values > 1 ? e->values[1 + k % (e->n_values - 1)].value : 0;
		break;
	}
	case PROTOBUF_C_TYPE_BOOL:
		*(protobuf_c_boolean *)p = 1;
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		*(double *)p = 4.22 + k;
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		*(float *)p = 0.5f;
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		*(int64_t *)p = 1781654400000000LL + k;
		break;
	default: /* the 32-bit integers */
		*(int32_t *)p = 7 + k;
		break;
	}
}

static size_t value_size(const ProtobufCFieldDescriptor *f)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE: return sizeof(ProtobufCMessage *);
	case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_DOUBLE: return sizeof(double);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64: return 8;
	default: return 4;
	}
}

static ProtobufCMessage *fill(const ProtobufCMessageDescriptor *d, int depth)
{
	ProtobufCMessage *m = xcalloc(1, d->sizeof_message);
	protobuf_c_message_init(d, m);
	if (depth > 3)
		return m;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
			continue;
		char *base = (char *)m;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = 2;
			void *arr = xcalloc(n, value_size(f));
			for (size_t k = 0; k < n; k++)
				fill_value(f, (char *)arr + k * value_size(f), depth, (int)k);
			*(size_t *)(base + f->quantifier_offset) = n;
			*(void **)(base + f->offset) = arr;
			continue;
		}
		fill_value(f, base + f->offset, depth, 0);
		if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset &&
		    f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE)
			*(protobuf_c_boolean *)(base + f->quantifier_offset) = 1;
	}
	return m;
}

static void put_filled(int sel, const char *name, const ProtobufCMessageDescriptor *d)
{
	ProtobufCMessage *m = fill(d, 0);
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = xcalloc(n, 1);
	protobuf_c_message_pack(m, buf);
	put(sel, name, buf, n);
	free(buf);
	protobuf_c_message_free_unpacked(m, NULL);
}

static void put_msg(int sel, const char *name, const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = xcalloc(n, 1);
	protobuf_c_message_pack(m, buf);
	put(sel, name, buf, n);
	free(buf);
}

#define SEED_NOW_US 1781740800000000LL
#define SEED_DAY_US 86400000000LL

/* the worked example's series (B64 TPOT): its key, and structured */
#define SEED_SERIES "chat-8b/hlo:9f31c2/v6e-4/decode.B64.s2048.int8/tpot_p50_ms"

static Perfwatch__V1__SeriesKey seed_key(void)
{
	Perfwatch__V1__SeriesKey key = PERFWATCH__V1__SERIES_KEY__INIT;
	key.model = "chat-8b";
	key.hlo_fingerprint = "hlo:9f31c2";
	key.platform = "v6e-4";
	key.config = "decode.B64.s2048.int8";
	key.metric = "tpot_p50_ms";
	return key;
}

/*
 * Alerts the bisector and the attributor take (the filled one has a
 * series_key that does not match its parts, so both doors refuse it early):
 * the gate's B64 TPOT regression of the worked example with all three
 * before sides, the watcher's with its changepoint range only, and the
 * baseliner's unconfirmed outlier (the bisector's confirm path).
 */
static void put_alerts(void)
{
	Perfwatch__V1__SeriesKey key = seed_key();
	Perfwatch__V1__AlertDelta delta = PERFWATCH__V1__ALERT_DELTA__INIT;
	Perfwatch__V1__AlertBaseline base = PERFWATCH__V1__ALERT_BASELINE__INIT;
	Perfwatch__V1__AlertObserved obs = PERFWATCH__V1__ALERT_OBSERVED__INIT;
	Perfwatch__V1__AlertChangepoint cp = PERFWATCH__V1__ALERT_CHANGEPOINT__INIT;
	Perfwatch__V1__Alert al = PERFWATCH__V1__ALERT__INIT;
	delta.abs = 0.32;
	delta.pct = 8.2;
	delta.z_robust = 18.8;
	base.mad = 0.017;
	base.median = 3.90;
	base.window_start_unix_us = SEED_NOW_US - 37 * SEED_DAY_US;
	base.window_end_unix_us = SEED_NOW_US - 2 * SEED_DAY_US;
	base.window = "xla-2026-06-10";
	obs.release = "xla-rc-2026-06-17";
	obs.median = 4.22;
	obs.n = 5;
	cp.cl_range_lo = "cl/7841885";
	cp.cl_range_hi = "cl/7841923";
	al.alert_id = "perfreg-2026-06-18-00412";
	al.revision = 1;
	al.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION;
	al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_GATE;
	al.created_unix_us = SEED_NOW_US;
	al.series_id = 412;
	al.series = &key;
	al.series_key = SEED_SERIES;
	al.delta = &delta;
	al.baseline = &base;
	al.observed = &obs;
	al.changepoint = &cp;
	al.summary = "chat-8b decode B64 TPOT +8.2%";
	put_msg(S_ALERT, "alert-gate", &al.base);

	al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_WATCHER;
	al.alert_id = "cp-chat-8b-7841923";
	base.window_start_unix_us = base.window_end_unix_us = 0;
	put_msg(S_ALERT, "alert-watcher", &al.base);

	al.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_BASELINER;
	al.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_UNCONFIRMED;
	al.alert_id = "outlier-chat-8b-00412";
	al.changepoint = NULL;
	al.point_run_id = "run-2026-06-17-00412";
	al.point_unix_us = SEED_NOW_US - SEED_DAY_US;
	put_msg(S_ALERT, "alert-unconfirmed", &al.base);
}

/* A done bisection of the worked example: culprit cl/7841917, verified on both sides. */
static void put_bisection(void)
{
	Perfwatch__V1__SeriesKey key = seed_key();
	static const struct {
		const char *job, *cl;
		int64_t n;
		Perfwatch__V1__BisectPurpose p;
	} steps[] = {
		{"bs-chat-8b-7841923-00", "cl/7841904", 7841904, PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_STEP},
		{"bs-chat-8b-7841923-04", "cl/7841917", 7841917, PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_STEP},
		{"bs-chat-8b-7841923-05", "cl/7841916", 7841916,
		 PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_VERIFY_ADJACENT},
		{"bs-chat-8b-7841923-06", "cl/7841917", 7841917,
		 PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_VERIFY_CHERRY_PICK},
	};
	enum { NSTEPS = sizeof steps / sizeof steps[0] };
	Perfwatch__V1__BisectStep st[NSTEPS], *stp[NSTEPS];
	for (size_t i = 0; i < NSTEPS; i++) {
		perfwatch__v1__bisect_step__init(&st[i]);
		st[i].index = (uint32_t)i;
		st[i].job_id = (char *)steps[i].job;
		st[i].cl = (char *)steps[i].cl;
		st[i].cl_number = steps[i].n;
		st[i].purpose = steps[i].p;
		st[i].median = 3.9;
		st[i].n = 3;
		stp[i] = &st[i];
	}
	Perfwatch__V1__Bisection bs = PERFWATCH__V1__BISECTION__INIT;
	bs.bisection_id = "bs-chat-8b-7841923";
	bs.alert_id = "perfreg-2026-06-18-00412";
	bs.series = &key;
	bs.series_key = SEED_SERIES;
	bs.range_lo = "cl/7841885";
	bs.range_lo_number = 7841885;
	bs.range_hi = "cl/7841923";
	bs.range_hi_number = 7841923;
	bs.n_cls = 38;
	bs.steps = stp;
	bs.n_steps = NSTEPS;
	bs.culprit = "cl/7841917";
	bs.culprit_title = "fusion: cap producer-consumer fusion VMEM footprint at 1.5MB";
	bs.culprit_owner = "xla-fusion";
	bs.confidence = PERFWATCH__V1__BISECTION_CONFIDENCE__BISECTION_CONFIDENCE_VERIFIED_BOTH_SIDES;
	bs.status = PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_DONE;
	bs.started_unix_us = SEED_NOW_US;
	bs.updated_unix_us = SEED_NOW_US + 3600000000LL;
	bs.metric = "tpot_p50_ms";
	bs.reason = "verified on both sides";
	put_msg(S_BISECTION, "bisection-done", &bs.base);
}

/*
 * The worked example's shift as the watcher reports it (provisional), the
 * release's verdict with that series waived, and the attributor's finding:
 * what the baseliner's accepted-shift doors and the pager's door take.
 */
static void put_accepted_shift(void)
{
	Perfwatch__V1__SeriesKey key = seed_key();

	Perfwatch__V1__Changepoint cp = PERFWATCH__V1__CHANGEPOINT__INIT;
	cp.changepoint_id = "chat-8b/hlo:9f31c2/v6e-4/decode.B64.s2048.int8/tpot_p50_ms@xla-nightly-2026-06-17";
	cp.series_id = 412;
	cp.series_key = SEED_SERIES;
	cp.key = &key;
	cp.day = "2026-06-17";
	cp.shift_unix_us = SEED_NOW_US - SEED_DAY_US;
	cp.last_clean_build_id = "xla-nightly-2026-06-16";
	cp.last_clean_cl = "cl/7841885";
	cp.last_clean_cl_number = 7841885;
	cp.first_shifted_build_id = "xla-nightly-2026-06-17";
	cp.first_shifted_cl = "cl/7841923";
	cp.first_shifted_cl_number = 7841923;
	cp.n_cls = 38;
	cp.level_before = 3.90;
	cp.level_after = 4.22;
	cp.unit = "ms";
	cp.delta_pct = 8.2;
	cp.annotation = PERFWATCH__V1__CHANGEPOINT_ANNOTATION__CHANGEPOINT_ANNOTATION_NONE;
	cp.detected_unix_us = SEED_NOW_US;
	cp.stage = PERFWATCH__V1__CHANGEPOINT_STAGE__CHANGEPOINT_STAGE_PROVISIONAL;
	cp.points_after = 3;
	put_msg(S_CHANGEPOINT, "changepoint-provisional", &cp.base);

	Perfwatch__V1__GateSeriesResult waived = PERFWATCH__V1__GATE_SERIES_RESULT__INIT;
	waived.series_id = 412;
	waived.series_key = SEED_SERIES;
	waived.family = "chat-8b";
	waived.verdict = PERFWATCH__V1__VERDICT__VERDICT_WAIVED;
	waived.waiver_id = "wv-2026-06-18-01";
	waived.baseline_median = 3.90;
	waived.candidate_median = 4.22;
	waived.unit = "ms";
	Perfwatch__V1__GateSeriesResult *rows[1] = {&waived};
	Perfwatch__V1__FamilyVerdict fam = PERFWATCH__V1__FAMILY_VERDICT__INIT;
	fam.family = "chat-8b";
	fam.verdict = PERFWATCH__V1__VERDICT__VERDICT_WAIVED;
	Perfwatch__V1__FamilyVerdict *fams[1] = {&fam};
	Perfwatch__V1__GateVerdict v = PERFWATCH__V1__GATE_VERDICT__INIT;
	v.release_id = "xla-rc-2026-06-17";
	v.evaluation = 2;
	v.verdict = PERFWATCH__V1__VERDICT__VERDICT_PASS;
	v.candidate_build_id = "xla-rc-2026-06-17";
	v.baseline_release = "xla-2026-06-10";
	v.families = fams;
	v.n_families = 1;
	v.series = rows;
	v.n_series = 1;
	v.evaluated_unix_us = SEED_NOW_US;
	v.summary = "PASS: chat-8b (1 series waived)";
	put_msg(S_GATE_VERDICT, "gate-verdict-waived", &v.base);

	Perfwatch__V1__Attribution at = PERFWATCH__V1__ATTRIBUTION__INIT;
	at.alert_id = "perfreg-2026-06-18-00412";
	at.series_key = SEED_SERIES;
	at.series = &key;
	at.before_build_id = "xla-2026-06-10";
	at.after_build_id = "xla-rc-2026-06-17";
	at.top_op_family = "fusion.1423";
	at.top_op_family_share = 0.83;
	at.created_unix_us = SEED_NOW_US + 3600000000LL;
	at.status = "ok";
	at.owner_hint = "compiler";
	at.source = "alert";
	put_msg(S_ATTRIBUTION, "attribution-ok", &at.base);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: fuzz_seeds SCENARIO.scn OUTDIR\n");
		return 2;
	}
	outdir = argv[2];
	char err[512];
	pw_sim_scenario *sc = NULL;
	pw_sim *w = NULL;
	if (pw_sim_scenario_load(argv[1], &sc, err, sizeof err) != PW_OK ||
	    pw_sim_new(&w, sc, NULL, err, sizeof err) != PW_OK) {
		fprintf(stderr, "fuzz_seeds: %s\n", err);
		return 1;
	}
	pw_sim_scenario_free(sc);
	uint8_t *buf;
	size_t len;
	char name[64];

	/* runs: the first three series at the first nightly */
	pw_sim_build b;
	pw_sim_build_at(&b, PW_SIM_BUILD_NIGHTLY, "xla-nightly-seed", pw_sim_nightly_cl(w, 0));
	for (size_t s = 0; s < 3 && s < pw_sim_series_count(w); s++) {
		pw_sim_run run;
		snprintf(name, sizeof name, "seed-%zu", s);
		if (pw_sim_run_make(w, s, &b, name, (uint32_t)s, pw_sim_start_us(w) + 3600000000LL, NULL,
		                    &run) != PW_OK ||
		    pw_sim_proto_run(w, &run, &buf, &len) != PW_OK)
			return 1;
		snprintf(name, sizeof name, "run-%zu", s);
		put(S_RUN, name, buf, len);
		free(buf);
	}
	for (size_t i = 0; i < 3 && i < pw_sim_fleet_count(w); i++) {
		if (pw_sim_proto_fleet(pw_sim_fleet_at(w, i), &buf, &len) != PW_OK)
			return 1;
		snprintf(name, sizeof name, "fleet-%zu", i);
		put(S_FLEET, name, buf, len);
		free(buf);
	}
	for (size_t i = 0; i < pw_sim_releases_count(w); i++) {
		const pw_sim_release *rel = pw_sim_release_at(w, i);
		if (rel->kind != PW_SIM_BUILD_RC)
			continue;
		if (pw_sim_proto_gate(w, rel, pw_sim_start_us(w), &buf, &len) != PW_OK)
			return 1;
		put(S_GATE, "gate-rc", buf, len);
		free(buf);
		break;
	}
	int64_t from, to;
	pw_sim_cl_span(w, &from, &to);
	for (int64_t cl = to; cl > to - 2 && cl >= from; cl--) {
		if (pw_sim_proto_cl(w, cl, &buf, &len) != PW_OK)
			continue;
		snprintf(name, sizeof name, "cl-%lld", (long long)cl);
		put(S_CL, name, buf, len);
		free(buf);
	}
	pw_sim_free(w);

	put_alerts();
	put_bisection();
	put_accepted_shift();
	put_filled(S_RUN, "run-filled", &perfwatch__v1__run_result__descriptor);
	put_filled(S_POINT, "point-filled", &perfwatch__v1__series_point__descriptor);
	put_filled(S_FLEET, "fleet-filled", &perfwatch__v1__fleet_change_event__descriptor);
	put_filled(S_GATE, "gate-filled", &perfwatch__v1__gate_request__descriptor);
	put_filled(S_BASELINE, "baseline-filled", &perfwatch__v1__baseline__descriptor);
	put_filled(S_ALERT, "alert-filled", &perfwatch__v1__alert__descriptor);
	put_filled(S_BISECTION, "bisection-filled", &perfwatch__v1__bisection__descriptor);
	put_filled(S_CL, "cl-filled", &perfwatch__v1__compiler_cl__descriptor);
	put_filled(S_JOB, "job-filled", &perfwatch__v1__bisect_job__descriptor);
	put_filled(S_PAGE, "page-filled", &perfwatch__v1__page__descriptor);
	put_filled(S_TRIAGE, "triage-filled", &perfwatch__v1__triage_verdict__descriptor);
	put_filled(S_DLQ, "dlq-filled", &perfwatch__v1__dead_letter__descriptor);
	put_filled(S_CHANGEPOINT, "changepoint-filled", &perfwatch__v1__changepoint__descriptor);
	put_filled(S_GATE_VERDICT, "gate-verdict-filled", &perfwatch__v1__gate_verdict__descriptor);
	put_filled(S_ATTRIBUTION, "attribution-filled", &perfwatch__v1__attribution__descriptor);
	/* a live window of pw-sim canary's scenario, which the canary's door takes */
	pw_sim_canary_params cp;
	pw_sim_canary_scenario_params(0, &cp);
	pw_sim_canary_window cwin;
	pw_sim_canary_window_make(&cp, pw_sim_canary_scenario_seed(1, 0), 40, &cwin);
	if (pw_sim_proto_canary_window("rollout-xla-rc-2026-06-22", 0, &cwin, 0, 1782130800000000LL, &buf, &len) != PW_OK)
		exit(1);
	put(S_CANARY, "canary-window", buf, len);
	free(buf);
	put_filled(S_CANARY, "canary-window-filled", &perfwatch__v1__canary_window__descriptor);
	/* the canary's ROLLBACK of that scenario (docs/canary.md §8), which the pager's door takes */
	Perfwatch__V1__RolloutDecision rd = PERFWATCH__V1__ROLLOUT_DECISION__INIT;
	rd.rollout_id = "rollout-xla-rc-2026-06-22";
	rd.family = "chat-8b";
	rd.decision = PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_ROLLBACK;
	rd.metric = PERFWATCH__V1__CANARY_METRIC__CANARY_METRIC_TPOT;
	rd.effect_pct = 1.113;
	rd.lo_pct = 0.501;
	rd.hi_pct = 2.231;
	rd.windows = 38;
	rd.decided_window_start_unix_us = 1782141900000000LL;
	rd.release = "xla-rc-2026-06-22";
	rd.previous_release = "xla-rc-2026-06-15";
	rd.rollback_artifact = "serving/chat-8b/xla-rc-2026-06-15.aot";
	rd.decided_unix_us = 1782142000000000LL;
	rd.alpha = 0.05;
	rd.mde_pct = 1;
	rd.tolerance_pct = 0.5;
	rd.family_windows = 114;
	len = perfwatch__v1__rollout_decision__get_packed_size(&rd);
	if (!(buf = malloc(len ? len : 1)))
		exit(1);
	perfwatch__v1__rollout_decision__pack(&rd, buf);
	put(S_ROLLOUT, "rollout-rollback", buf, len);
	free(buf);
	put_filled(S_ROLLOUT, "rollout-filled", &perfwatch__v1__rollout_decision__descriptor);
	printf("fuzz_seeds: %d seeds in %s\n", nwritten, outdir);
	return 0;
}
