/*
 * test_ingest_validate.c: the ingester's validation (services/ingester/validate.h)
 * on a table of bad runs, each with the DlqReason it must get.
 *
 * The good run is a real one: the simulator (tools/simulator) makes a
 * worked-example run and packs it as the fleet would publish it. Each case
 * decodes it, breaks one thing in a shallow copy and checks the verdict, so a
 * case fails if validation lets its defect through or blames the wrong
 * reason. Every run of every shipped scenario must pass.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_model.h"
#include "sim_proto.h"
#include "validate.h"

#define NOW_US 1780000000000000LL /* 2026-05-28T20:26:40Z: after every scenario run used here */

static char errbuf[512];

static pw_sim *world(const char *name)
{
	const char *data = getenv("PW_TEST_DATA");
	char path[1024];
	snprintf(path, sizeof path, "%s/../../tools/simulator/scenarios/%s.scn",
	         data ? data : "tests/data", name);
	pw_sim_scenario *sc = NULL;
	cr_assert_eq(pw_sim_scenario_load(path, &sc, errbuf, sizeof errbuf), PW_OK, "%s", errbuf);
	pw_sim *w = NULL;
	cr_assert_eq(pw_sim_new(&w, sc, NULL, errbuf, sizeof errbuf), PW_OK, "%s", errbuf);
	pw_sim_scenario_free(sc);
	return w;
}

/* A decoded good run and shallow copies of its parts that a case may change. */
typedef struct fixture {
	Perfwatch__V1__RunResult *orig; /* owned by protobuf-c, freed at the end */
	Perfwatch__V1__RunResult run;
	Perfwatch__V1__RunKey key;
	Perfwatch__V1__CompilerBuild cb;
	Perfwatch__V1__Platform pl;
	Perfwatch__V1__Config cf;
	Perfwatch__V1__MetricSample ms[80];
	Perfwatch__V1__MetricSample *msp[80];
	Perfwatch__V1__OpTiming ot[80];
	Perfwatch__V1__OpTiming *otp[80];
	char big[5000];
} fixture;

static uint8_t *good_payload;
static size_t good_len;
static int64_t good_started;

static void make_good(void)
{
	pw_sim *w = world("worked-example");
	size_t si;
	cr_assert_eq(pw_sim_series_find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8", &si), PW_OK);
	pw_sim_build b;
	pw_sim_build_at(&b, PW_SIM_BUILD_RC, "xla-rc-2026-06-17", 7841923);
	snprintf(b.release_id, sizeof b.release_id, "xla-rc-2026-06-17");
	pw_sim_run r;
	/* started a day before NOW_US */
	good_started = NOW_US - 86400000000LL;
	cr_assert_eq(pw_sim_run_make(w, si, &b, "t1-00412", 3, good_started, NULL, &r), PW_OK);
	cr_assert_eq(pw_sim_proto_run(w, &r, &good_payload, &good_len), PW_OK);
	pw_sim_free(w);
}

static void fixture_init(fixture *f)
{
	memset(f, 0, sizeof *f);
	f->orig = perfwatch__v1__run_result__unpack(NULL, good_len, good_payload);
	cr_assert_not_null(f->orig);
	f->run = *f->orig;
	f->key = *f->orig->key;
	f->cb = *f->orig->key->compiler;
	f->pl = *f->orig->key->platform;
	f->cf = *f->orig->key->config;
	f->key.compiler = &f->cb;
	f->key.platform = &f->pl;
	f->key.config = &f->cf;
	f->run.key = &f->key;
	cr_assert_leq(f->orig->n_metrics, 80);
	for (size_t i = 0; i < f->orig->n_metrics; i++) {
		f->ms[i] = *f->orig->metrics[i];
		f->msp[i] = &f->ms[i];
	}
	f->run.metrics = f->msp;
	for (size_t i = 0; i < f->orig->n_ops; i++) {
		f->ot[i] = *f->orig->ops[i];
		f->otp[i] = &f->ot[i];
	}
	f->run.ops = f->otp;
}

static void fixture_release(fixture *f)
{
	perfwatch__v1__run_result__free_unpacked(f->orig, NULL);
}

static pw_ingest_limits limits(void)
{
	pw_ingest_limits lim;
	pw_ingest_limits_default(&lim, NOW_US);
	return lim;
}

static int metric_at(fixture *f, const char *name)
{
	for (size_t i = 0; i < f->run.n_metrics; i++)
		if (strcmp(f->ms[i].name, name) == 0)
			return (int)i;
	cr_assert_fail("metric %s not in the good run", name);
	return -1;
}

/* ---- the cases ------------------------------------------------------------------------ */

static void m_no_run_id(fixture *f) { f->run.run_id = ""; }
static void m_long_run_id(fixture *f) { memset(f->big, 'r', 300); f->run.run_id = f->big; }
static void m_bad_utf8(fixture *f) { f->run.run_id = "t1-\xff\xfe-00412"; }
static void m_control_char(fixture *f) { f->key.model = "chat\x01-8b"; }
static void m_no_key(fixture *f) { f->run.key = NULL; }
static void m_no_model(fixture *f) { f->key.model = ""; }
static void m_slash_model(fixture *f) { f->key.model = "chat/8b"; }
static void m_no_fingerprint(fixture *f) { f->key.hlo_fingerprint = ""; }
static void m_slash_fingerprint(fixture *f) { f->key.hlo_fingerprint = "hlo:9f31/c2ab"; }
static void m_no_model_rev(fixture *f) { f->key.model_rev = ""; }
static void m_no_firmware(fixture *f) { f->key.firmware = ""; }
static void m_no_compiler(fixture *f) { f->key.compiler = NULL; }
static void m_no_build_id(fixture *f) { f->cb.build_id = ""; }
static void m_no_build_kind(fixture *f) { f->cb.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_UNSPECIFIED; }
static void m_unknown_build_kind(fixture *f) { f->cb.kind = (Perfwatch__V1__BuildKind)9; }
static void m_bad_cl(fixture *f) { f->cb.cl = "7841923"; }
static void m_cl_mismatch(fixture *f) { f->cb.cl_number = 7841922; }
static void m_bisect_without_job(fixture *f) { f->cb.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_BISECT; }
static void m_job_on_rc(fixture *f) { f->run.bisect_job_id = "bj-00412-03"; }
static void m_rebaseline_job_on_rc(fixture *f) { f->run.rebaseline_job_id = "rb-fc-1-00ff"; }
static void m_no_platform(fixture *f) { f->key.platform = NULL; }
static void m_unknown_platform(fixture *f) { f->pl.name = "tpu-v9-4"; }
static void m_odd_slice(fixture *f) { f->pl.name = "v6e-3"; f->pl.chips = 3; }
static void m_family_mismatch(fixture *f) { f->pl.family = PERFWATCH__V1__PLATFORM_FAMILY__PLATFORM_FAMILY_TPU_V5E; }
static void m_chips_mismatch(fixture *f) { f->pl.chips = 8; }
static void m_no_config(fixture *f) { f->key.config = NULL; }
static void m_bad_config_name(fixture *f) { f->cf.name = "decode-B64-s2048"; }
static void m_config_fields_disagree(fixture *f) { f->cf.batch = 8; }
static void m_config_phase_unset(fixture *f) { f->cf.phase = PERFWATCH__V1__PHASE__PHASE_UNSPECIFIED; }
static void m_no_chip_set(fixture *f) { f->run.chip_set = ""; }
static void m_no_metrics(fixture *f) { f->run.n_metrics = 0; }
static void m_unknown_metric(fixture *f) { f->ms[0].name = "tokens_per_banana"; }
static void m_metric_enum_mismatch(fixture *f) { f->ms[metric_at(f, "tpot_p50_ms")].metric = PERFWATCH__V1__METRIC__METRIC_MFU; }
static void m_wrong_unit(fixture *f) { f->ms[metric_at(f, "tpot_p50_ms")].unit = "s"; }
static void m_duplicate_metric(fixture *f) { f->ms[1] = f->ms[0]; }
static void m_nan(fixture *f) { f->ms[metric_at(f, "tpot_p50_ms")].value = NAN; }
static void m_inf(fixture *f) { f->ms[metric_at(f, "ttft_p99_ms")].value = INFINITY; }
static void m_neg_latency(fixture *f) { f->ms[metric_at(f, "tpot_p50_ms")].value = -3.9; }
static void m_zero_latency(fixture *f) { f->ms[metric_at(f, "ttft_p50_ms")].value = 0; }
static void m_ratio_over_one(fixture *f) { f->ms[metric_at(f, "mfu")].value = 1.7; }
static void m_absurd_latency(fixture *f) { f->ms[metric_at(f, "tpot_p50_ms")].value = 3.9e6; }
static void m_absurd_goodput(fixture *f) { f->ms[metric_at(f, "goodput_tok_s_chip")].value = 5e9; }
static void m_future(fixture *f)
{
	f->run.started_unix_us = NOW_US + 3600000000LL;
	f->run.finished_unix_us = f->run.started_unix_us + 900000000LL;
}
static void m_epoch(fixture *f) { f->run.started_unix_us = 1000; f->run.finished_unix_us = 900001000LL; }
static void m_millis_not_micros(fixture *f)
{
	f->run.started_unix_us /= 1000;
	f->run.finished_unix_us /= 1000;
}
static void m_no_start(fixture *f) { f->run.started_unix_us = 0; }
static void m_backwards(fixture *f) { f->run.finished_unix_us = f->run.started_unix_us - 1; }
static void m_too_many_metrics(fixture *f)
{
	for (size_t i = 0; i < 70; i++) {
		f->ms[i] = f->ms[0];
		f->msp[i] = &f->ms[i];
	}
	f->run.n_metrics = 70;
}
static void m_too_many_ops(fixture *f) { f->run.n_ops = 5000; }
static void m_op_nan(fixture *f) { f->ot[0].us_per_step = NAN; }
static void m_op_negative(fixture *f) { f->ot[1].us_per_step = -5; }
static void m_op_no_name(fixture *f) { f->ot[0].op_name = ""; }
static void m_op_duplicate(fixture *f) { f->ot[1].op_name = f->ot[0].op_name; }
static void m_cache_hits(fixture *f) { f->run.compile_cache_hits = f->run.compile_cache_total + 1; }
static void m_warmup_nan(fixture *f) { f->run.warmup_discarded_s = NAN; }
static void m_bw_fraction(fixture *f) { f->run.achieved_bw_fraction = 1.4; }
static void m_repeat(fixture *f) { f->run.repeat_index = 100000; }
static void m_hlo_text(fixture *f)
{
	static char huge[(1u << 20) + 10];
	memset(huge, 'h', sizeof huge - 1);
	huge[sizeof huge - 1] = '\0';
	f->run.hlo_text = huge;
}
static void m_load_mode(fixture *f) { f->run.load_mode = (Perfwatch__V1__LoadMode)7; }
/* §9 numerics fingerprints: 16 to 64 lower-case hex digits, an even count */
static void m_numerics_long(fixture *f)
{
	f->run.numerics_fingerprint =
		"3f9a1c0d5e7b2a463f9a1c0d5e7b2a463f9a1c0d5e7b2a463f9a1c0d5e7b2a4600"; /* 66 */
}
static void m_numerics_short(fixture *f) { f->run.numerics_fingerprint = "3f9a1c0d"; }
static void m_numerics_odd(fixture *f) { f->run.numerics_fingerprint = "3f9a1c0d5e7b2a463"; }
static void m_numerics_upper(fixture *f) { f->run.numerics_fingerprint = "3F9A1C0D5E7B2A46"; }
static void m_numerics_not_hex(fixture *f) { f->run.numerics_fingerprint = "sha256:3f9a1c0d5e7b"; }

static const struct {
	const char *what;
	void (*mutate)(fixture *);
	pw_dlq_reason want;
	const char *needle; /* the detail must name it */
} cases[] = {
	{"no run id", m_no_run_id, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "run_id"},
	{"run id over the cap", m_long_run_id, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE, "run_id"},
	{"invalid utf-8", m_bad_utf8, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "run_id"},
	{"control character", m_control_char, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "key.model"},
	{"no key", m_no_key, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "key"},
	{"no model", m_no_model, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "key.model"},
	{"'/' in model", m_slash_model, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "series key"},
	{"no fingerprint", m_no_fingerprint, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "hlo_fingerprint"},
	{"'/' in fingerprint", m_slash_fingerprint, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "hlo_fingerprint"},
	{"no model rev", m_no_model_rev, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "model_rev"},
	{"no firmware", m_no_firmware, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "firmware"},
	{"no compiler", m_no_compiler, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "compiler"},
	{"no build id", m_no_build_id, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "build_id"},
	{"build kind unspecified", m_no_build_kind, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "kind"},
	{"build kind unknown", m_unknown_build_kind, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "kind"},
	{"cl not cl/N", m_bad_cl, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "cl/<number>"},
	{"cl and cl_number disagree", m_cl_mismatch, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT, "cl_number"},
	{"bisect build without job id", m_bisect_without_job, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "bisect_job_id"},
	{"job id on an rc build", m_job_on_rc, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT, "bisect_job_id"},
	{"re-baseline job id on an rc build", m_rebaseline_job_on_rc, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT, "rebaseline_job_id"},
	{"no platform", m_no_platform, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "platform"},
	{"unknown platform", m_unknown_platform, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "tpu-v9-4"},
	{"slice not a power of two", m_odd_slice, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "v6e-3"},
	{"platform family disagrees", m_family_mismatch, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT, "family"},
	{"platform chips disagree", m_chips_mismatch, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT, "chips"},
	{"no config", m_no_config, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "config"},
	{"malformed config name", m_bad_config_name, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "decode-B64"},
	{"config fields disagree", m_config_fields_disagree, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT, "disagrees"},
	{"config phase unset", m_config_phase_unset, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "phase"},
	{"no chip set", m_no_chip_set, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "chip_set"},
	{"no metrics", m_no_metrics, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "no metrics"},
	{"unknown metric", m_unknown_metric, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "tokens_per_banana"},
	{"metric enum disagrees", m_metric_enum_mismatch, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT, "enum"},
	{"wrong unit", m_wrong_unit, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT, "unit"},
	{"metric twice", m_duplicate_metric, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT, "twice"},
	{"NaN value", m_nan, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "NaN"},
	{"infinite value", m_inf, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "infinite"},
	{"negative latency", m_neg_latency, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "sane range"},
	{"zero latency", m_zero_latency, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "ttft_p50_ms"},
	{"ratio over 1", m_ratio_over_one, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "mfu"},
	{"latency of an hour per token", m_absurd_latency, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "tpot_p50_ms"},
	{"goodput beyond physics", m_absurd_goodput, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "goodput"},
	{"timestamp in the future", m_future, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "future"},
	{"timestamp at the epoch", m_epoch, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "maximum age"},
	{"milliseconds, not microseconds", m_millis_not_micros, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "maximum age"},
	{"no start time", m_no_start, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "started_unix_us"},
	{"finished before started", m_backwards, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT, "before it started"},
	{"too many metrics", m_too_many_metrics, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE, "cap"},
	{"too many ops", m_too_many_ops, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE, "op timings"},
	{"op time NaN", m_op_nan, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "us_per_step"},
	{"op time negative", m_op_negative, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "us_per_step"},
	{"op without a name", m_op_no_name, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "op_name"},
	{"op twice", m_op_duplicate, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT, "twice"},
	{"cache hits over total", m_cache_hits, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT, "compile_cache"},
	{"warm-up NaN", m_warmup_nan, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "warmup"},
	{"bandwidth fraction over 1", m_bw_fraction, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "achieved_bw_fraction"},
	{"absurd repeat index", m_repeat, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "repeat_index"},
	{"hlo text over 1 MiB", m_hlo_text, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE, "hlo_text"},
	{"unknown load mode", m_load_mode, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "load_mode"},
	{"numerics fingerprint too long", m_numerics_long, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE, "numerics_fingerprint\" is 66 characters"},
	{"numerics fingerprint too short", m_numerics_short, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "numerics_fingerprint\" is 8 characters"},
	{"numerics fingerprint odd", m_numerics_odd, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "even count"},
	{"numerics fingerprint upper case", m_numerics_upper, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "at offset 1"},
	{"numerics fingerprint not hex", m_numerics_not_hex, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "lower-case hex"},
};

Test(ingest_validate, the_good_run_passes)
{
	make_good();
	pw_ingest_limits lim = limits();
	Perfwatch__V1__RunResult *run = NULL;
	char detail[256];
	pw_dlq_reason r = pw_ingest_decode(good_payload, good_len, &lim, &run, detail, sizeof detail);
	cr_assert_eq(r, PW_DLQ_NONE, "%s", detail);
	cr_assert_not_null(run);
	cr_assert_str_eq(run->key->config->name, "decode.B64.s2048.int8");
	cr_assert_eq(run->n_metrics, 8);
	cr_assert_geq(run->n_ops, 5);
	perfwatch__v1__run_result__free_unpacked(run, NULL);
	free(good_payload);
}

Test(ingest_validate, every_bad_run_gets_its_reason)
{
	make_good();
	cr_assert_geq(sizeof cases / sizeof cases[0], 20);
	pw_ingest_limits lim = limits();
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		fixture *f = malloc(sizeof *f);
		cr_assert_not_null(f);
		fixture_init(f);
		char detail[256] = "";
		cr_assert_eq(pw_ingest_validate(&f->run, &lim, detail, sizeof detail), PW_DLQ_NONE,
		             "the unmodified copy must pass: %s", detail);
		cases[i].mutate(f);
		pw_dlq_reason r = pw_ingest_validate(&f->run, &lim, detail, sizeof detail);
		cr_expect_eq(r, cases[i].want, "%s: got %s (%s), want %s", cases[i].what,
		             pw_dlq_reason_name(r), detail, pw_dlq_reason_name(cases[i].want));
		cr_expect(strstr(detail, cases[i].needle) != NULL, "%s: detail \"%s\" lacks \"%s\"",
		          cases[i].what, detail, cases[i].needle);
		fixture_release(f);
		free(f);
	}
	free(good_payload);
}

Test(ingest_validate, payload_level_rejections)
{
	make_good();
	pw_ingest_limits lim = limits();
	Perfwatch__V1__RunResult *run = (Perfwatch__V1__RunResult *)1;
	char detail[256];
	/* not protobuf at all */
	const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x02};
	cr_assert_eq(pw_ingest_decode(junk, sizeof junk, &lim, &run, detail, sizeof detail),
	             PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED);
	cr_assert_null(run);
	/* a truncated good run */
	cr_assert_eq(pw_ingest_decode(good_payload, good_len / 2, &lim, &run, detail, sizeof detail),
	             PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED);
	/* empty */
	cr_assert_eq(pw_ingest_decode(good_payload, 0, &lim, &run, detail, sizeof detail),
	             PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED);
	/* over the payload cap */
	lim.max_payload = good_len - 1;
	cr_assert_eq(pw_ingest_decode(good_payload, good_len, &lim, &run, detail, sizeof detail),
	             PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE);
	cr_assert(strstr(detail, "cap") != NULL);
	/* a message of another type decodes to a run without its key fields */
	Perfwatch__V1__DeadLetter dl = PERFWATCH__V1__DEAD_LETTER__INIT;
	dl.detail = "x";
	dl.source_topic = "perf.runs.v1";
	uint8_t buf[256];
	size_t n = perfwatch__v1__dead_letter__pack(&dl, buf);
	lim = limits();
	pw_dlq_reason r = pw_ingest_decode(buf, n, &lim, &run, detail, sizeof detail);
	cr_assert(r == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD ||
	          r == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED, "%s", pw_dlq_reason_name(r));
	cr_assert_null(run);
	free(good_payload);
}

Test(ingest_validate, every_simulated_run_of_every_scenario_passes)
{
	const char *names[] = {"worked-example", "quiet-week", "recabling", "registered-win",
	                       "two-cl-interaction", "llvm-roll"};
	pw_ingest_limits lim = limits();
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		pw_sim *w = world(names[k]);
		pw_sim_cursor c;
		pw_sim_cursor_init(&c, w);
		pw_sim_event ev;
		size_t runs = 0;
		while (pw_sim_cursor_next(&c, &ev) == PW_OK) {
			if (ev.kind != PW_SIM_EV_RUN)
				continue;
			/* sample every 7th run to keep the test quick */
			if (runs++ % 7)
				continue;
			uint8_t *buf;
			size_t len;
			cr_assert_eq(pw_sim_proto_run(w, &ev.run, &buf, &len), PW_OK);
			lim.now_unix_us = ev.run.finished_unix_us + 3600000000LL;
			Perfwatch__V1__RunResult *run;
			char detail[256];
			pw_dlq_reason r = pw_ingest_decode(buf, len, &lim, &run, detail, sizeof detail);
			cr_assert_eq(r, PW_DLQ_NONE, "%s run %s/%u: %s", names[k], ev.run.run_id,
			             ev.run.repeat, detail);
			perfwatch__v1__run_result__free_unpacked(run, NULL);
			free(buf);
		}
		cr_assert_gt(runs, 0);
		pw_sim_free(w);
	}
	/* and the catalogs agree */
	for (size_t i = 0; i < pw_sim_platforms_count; i++) {
		uint32_t chips;
		int fam;
		cr_assert(pw_ingest_platform_known(pw_sim_platforms[i].name, &chips, &fam), "%s",
		          pw_sim_platforms[i].name);
		cr_assert_eq(chips, pw_sim_platforms[i].chips);
		cr_assert_eq(fam, pw_sim_platforms[i].family);
	}
	for (int m = 0; m < PW_SIM_METRIC_COUNT; m++) {
		int mi = pw_ingest_metric_index(pw_sim_metric_name(m));
		cr_assert_eq(mi, m);
		cr_assert_str_eq(pw_ingest_metric_unit(mi), pw_sim_metric_unit(m));
		cr_assert_eq(pw_ingest_metric_lower_is_better(mi), pw_sim_metric_lower_is_better(m));
	}
}
