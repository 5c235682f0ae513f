/*
 * validate.c: the checks of validate.h, in the order a run is read — size,
 * decode, identity, §2 key, where it ran, hygiene, time, metrics, ops.
 *
 * The first failing check decides the reason; its detail names the field.
 * The tables of known platforms and metrics here are the ingester's own
 * contract (the simulator's catalog is tested against them in
 * tests/unit/test_ingest_validate.c).
 */
#include "validate.h"

#include "pw_input.h"
#include "pw_limits.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R_OK_ PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED
#define R_DECODE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED
#define R_MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
#define R_INCONS PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT
#define R_OVERSIZE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE

#define US_PER_S 1000000LL

void pw_ingest_limits_default(pw_ingest_limits *lim, int64_t now_unix_us)
{
	lim->now_unix_us = now_unix_us;
	lim->max_future_us = 10 * 60 * US_PER_S;
	lim->max_age_us = 5LL * 366 * 86400 * US_PER_S;
	lim->max_payload = 4u << 20;
	lim->max_metrics = 64;
	lim->max_ops = 4096;
	lim->max_name = 200;
	lim->max_text = 4096;
	lim->max_hlo_text = 1u << 20;
	lim->max_repeat = 1000;
}

/* ---- tables ---------------------------------------------------------------- */

static const struct {
	const char *prefix;
	int family; /* perfwatch.v1.PlatformFamily */
} platform_families[] = {
	{"v5e", PERFWATCH__V1__PLATFORM_FAMILY__PLATFORM_FAMILY_TPU_V5E},
	{"v6e", PERFWATCH__V1__PLATFORM_FAMILY__PLATFORM_FAMILY_TPU_V6E},
	{"ironwood", PERFWATCH__V1__PLATFORM_FAMILY__PLATFORM_FAMILY_TPU_IRONWOOD},
	{"h100", PERFWATCH__V1__PLATFORM_FAMILY__PLATFORM_FAMILY_GPU_H100},
	{"b200", PERFWATCH__V1__PLATFORM_FAMILY__PLATFORM_FAMILY_GPU_B200},
};

bool pw_ingest_platform_known(const char *name, uint32_t *chips, int *family)
{
	for (size_t i = 0; i < sizeof platform_families / sizeof platform_families[0]; i++) {
		size_t n = strlen(platform_families[i].prefix);
		if (strncmp(name, platform_families[i].prefix, n) != 0 || name[n] != '-')
			continue;
		const char *d = name + n + 1;
		if (*d < '1' || *d > '9')
			return false;
		char *end;
		unsigned long c = strtoul(d, &end, 10);
		/* slices are powers of two up to a 256-chip pod slice */
		if (*end || c == 0 || c > 256 || (c & (c - 1)) != 0)
			return false;
		if (chips)
			*chips = (uint32_t)c;
		if (family)
			*family = platform_families[i].family;
		return true;
	}
	return false;
}

/* §3.2, in perfwatch.v1.Metric order, with the sane range of each unit. */
static const struct {
	const char *name, *unit;
	bool lower_better;
	double lo, hi;      /* inclusive range of a sane value */
	bool lo_open;       /* value must be > lo, not >= */
} metrics[] = {
	{"ttft_p50_ms", "ms", true, 0, 3.6e6, true},
	{"ttft_p99_ms", "ms", true, 0, 3.6e6, true},
	{"tpot_p50_ms", "ms", true, 0, 6.0e4, true},
	{"tpot_p99_ms", "ms", true, 0, 6.0e4, true},
	{"goodput_tok_s_chip", "tok/s/chip", false, 0, 1.0e7, false},
	{"mfu", "ratio", false, 0, 1.0, false},
	{"hbm_bw_util", "ratio", false, 0, 1.0, false},
	{"cost_per_mtok_usd", "usd/Mtok", true, 0, 1.0e5, true},
	{"prefill_compute_ms", "ms", true, 0, 3.6e6, true},
};
#define NMETRICS (sizeof metrics / sizeof metrics[0])

int pw_ingest_metric_index(const char *name)
{
	for (size_t i = 0; i < NMETRICS; i++)
		if (strcmp(metrics[i].name, name) == 0)
			return (int)i;
	return -1;
}

const char *pw_ingest_metric_unit(int index)
{
	return index >= 0 && (size_t)index < NMETRICS ? metrics[index].unit : "";
}

bool pw_ingest_metric_lower_is_better(int index)
{
	return index >= 0 && (size_t)index < NMETRICS && metrics[index].lower_better;
}

/* ---- helpers ------------------------------------------------------------------ */

static pw_dlq_reason fail(pw_dlq_reason r, char *detail, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static pw_dlq_reason fail(pw_dlq_reason r, char *detail, size_t len, const char *fmt, ...)
{
	if (detail && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(detail, len, fmt, ap);
		va_end(ap);
	}
	return r;
}

/*
 * Well-formed UTF-8 (pw_input_utf8_ok: no overlongs, no surrogates) without
 * control characters: PostgreSQL and COPY must take it verbatim. s is a C
 * string, so a NUL cannot be inside it (pw_input_check_wire refused a NUL on
 * the wire before the unpack); the control-character scan can look at every
 * byte, since a multi-byte sequence's bytes are all 0x80 or above.
 */
static bool text_ok(const char *s, bool allow_newlines)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && !(allow_newlines && (c == '\n' || c == '\t' || c == '\r'))) || c == 0x7f)
			return false;
	}
	return pw_input_utf8_ok(s, n);
}

/*
 * A field that identifies something: required or not, capped, clean, and '/'-free if a key part.
 * key_cap: 0 for a field that is no part of a series key (capped at lim->max_name), else the
 * part's own limit from pw_limits.h (PW_KEY_*_MAX), the one every reader of the key accepts.
 */
static pw_dlq_reason check_name(const char *field, const char *v, bool required, size_t key_cap,
                                const pw_ingest_limits *lim, char *detail, size_t len)
{
	bool key_part = key_cap > 0;
	size_t cap = key_part ? key_cap : lim->max_name;
	if (!v || !*v) {
		if (required)
			return fail(R_MISSING, detail, len, "field \"%s\" is empty", field);
		return R_OK_;
	}
	size_t n = strlen(v);
	if (n > cap)
		return fail(R_OVERSIZE, detail, len, "field \"%s\" is %zu bytes, over the cap of %zu",
		            field, n, cap);
	if (!text_ok(v, false))
		return fail(R_INVALID, detail, len,
		            "field \"%s\" is not printable UTF-8", field);
	if (key_part && strchr(v, '/'))
		return fail(R_INVALID, detail, len,
		            "field \"%s\" value \"%s\" contains '/', which a series key cannot hold",
		            field, v);
	if (key_part && (v[0] == ' ' || v[n - 1] == ' '))
		return fail(R_INVALID, detail, len, "field \"%s\" has surrounding blanks", field);
	return R_OK_;
}

static pw_dlq_reason check_text(const char *field, const char *v, size_t cap,
                                const pw_ingest_limits *lim, char *detail, size_t len)
{
	(void)lim;
	if (!v || !*v)
		return R_OK_;
	size_t n = strlen(v);
	if (n > cap)
		return fail(R_OVERSIZE, detail, len, "field \"%s\" is %zu bytes, over the cap of %zu",
		            field, n, cap);
	if (!text_ok(v, true))
		return fail(R_INVALID, detail, len, "field \"%s\" is not valid UTF-8 text", field);
	return R_OK_;
}

/*
 * RunResult.numerics_fingerprint (§9): empty (not computed), or 16 to 64
 * lower-case hex digits, an even count (8 to 32 bytes of digest). The gate
 * compares fingerprints as strings, so one digest must have one spelling.
 */
static pw_dlq_reason check_numerics_fingerprint(const char *v, char *detail, size_t len)
{
	if (!v || !*v)
		return R_OK_;
	size_t n = strlen(v);
	if (n < PW_NUMERICS_FP_MIN || n > PW_NUMERICS_FP_MAX || n % 2)
		return fail(n > PW_NUMERICS_FP_MAX ? R_OVERSIZE : R_INVALID, detail, len,
		            "field \"numerics_fingerprint\" is %zu characters, not an even count "
		            "from %d to %d (lower-case hex digest)",
		            n, PW_NUMERICS_FP_MIN, PW_NUMERICS_FP_MAX);
	for (size_t i = 0; i < n; i++)
		if (!((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f')))
			return fail(R_INVALID, detail, len,
			            "field \"numerics_fingerprint\" has %s at offset %zu: "
			            "only lower-case hex digits 0-9a-f are allowed",
			            (unsigned char)v[i] < 0x20 || (unsigned char)v[i] >= 0x7f
			                ? "a non-printable byte" : "a character outside 0-9a-f",
			            i);
	return R_OK_;
}

static pw_dlq_reason check_num(const char *field, double v, double lo, double hi, char *detail,
                               size_t len)
{
	if (!isfinite(v))
		return fail(R_INVALID, detail, len, "field \"%s\" is %s", field,
		            isnan(v) ? "NaN" : "infinite");
	if (v < lo || v > hi)
		return fail(R_INVALID, detail, len, "field \"%s\" value %g is outside [%g, %g]", field,
		            v, lo, hi);
	return R_OK_;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

#define CHECK(expr)                        \
	do {                               \
		pw_dlq_reason r_ = (expr); \
		if (r_ != R_OK_)           \
			return r_;         \
	} while (0)

static bool parse_uint(const char *s, uint64_t *out)
{
	if (*s < '0' || *s > '9')
		return false;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || (s[0] == '0' && s[1]))
		return false;
	*out = v;
	return true;
}

/*
 * "<phase>[.B<batch>].s<len>.<dtype>": decode (and mixed, training) carry a
 * batch; prefill may omit it (batch 1).
 */
static pw_dlq_reason check_config(const Perfwatch__V1__Config *c, char *detail, size_t len)
{
	char buf[256];
	if (strlen(c->name) >= sizeof buf)
		return fail(R_OVERSIZE, detail, len, "config name is too long");
	strcpy(buf, c->name);
	char *parts[6];
	int n = 0;
	for (char *save = NULL, *t = strtok_r(buf, ".", &save); t; t = strtok_r(NULL, ".", &save)) {
		if (n == 6)
			break;
		parts[n++] = t;
	}
	static const char *const phases[] = {"", "prefill", "decode", "mixed", "training"};
	static const char *const dtypes[] = {"", "bf16", "int8", "fp8", "fp16", "fp32"};
	int phase = 0, dtype = 0;
	uint64_t batch = 1, seq = 0;
	if (n < 3 || n > 4)
		goto bad;
	for (int i = 1; i < 5; i++)
		if (strcmp(parts[0], phases[i]) == 0)
			phase = i;
	if (!phase)
		goto bad;
	if (n == 4) {
		if (parts[1][0] != 'B' || !parse_uint(parts[1] + 1, &batch) || batch == 0 ||
		    batch > 65536)
			goto bad;
	} else if (phase != PERFWATCH__V1__PHASE__PHASE_PREFILL) {
		goto bad;
	}
	const char *sp = parts[n - 2];
	if (sp[0] != 's' || !parse_uint(sp + 1, &seq) || seq == 0 || seq > (1u << 24))
		goto bad;
	for (int i = 1; i < 6; i++)
		if (strcmp(parts[n - 1], dtypes[i]) == 0)
			dtype = i;
	if (!dtype)
		goto bad;
	if (c->phase == PERFWATCH__V1__PHASE__PHASE_UNSPECIFIED)
		return fail(R_MISSING, detail, len, "field \"key.config.phase\" is unspecified");
	if ((int)c->phase != phase || c->seq_len != seq || (int)c->dtype != dtype ||
	    (c->batch != batch && !(n == 3 && c->batch == 0)))
		return fail(R_INCONS, detail, len,
		            "config \"%s\" disagrees with its fields (phase %d, batch %u, seq_len %u, dtype %d)",
		            c->name, (int)c->phase, c->batch, c->seq_len, (int)c->dtype);
	return R_OK_;
bad:
	return fail(R_INVALID, detail, len,
	            "config \"%s\" is not <phase>[.B<batch>].s<len>.<dtype>", c->name);
}

/* ---- the checks ----------------------------------------------------------------- */

pw_dlq_reason pw_ingest_validate(const Perfwatch__V1__RunResult *run, const pw_ingest_limits *lim,
                                 char *detail, size_t len)
{
	/* identity */
	CHECK(check_name("run_id", run->run_id, true, 0, lim, detail, len));
	if (run->repeat_index > lim->max_repeat)
		return fail(R_INVALID, detail, len, "field \"repeat_index\" value %u is over %u",
		            run->repeat_index, lim->max_repeat);

	/* the §2 key */
	const Perfwatch__V1__RunKey *k = run->key;
	if (!k)
		return fail(R_MISSING, detail, len, "field \"key\" is missing");
	CHECK(check_name("key.model", k->model, true, PW_KEY_MODEL_MAX, lim, detail, len));
	CHECK(check_name("key.model_rev", k->model_rev, true, 0, lim, detail, len));
	CHECK(check_name("key.hlo_fingerprint", k->hlo_fingerprint, true, PW_KEY_HLO_FINGERPRINT_MAX, lim, detail,
	                 len));
	CHECK(check_name("key.firmware", k->firmware, true, 0, lim, detail, len));

	const Perfwatch__V1__CompilerBuild *b = k->compiler;
	if (!b)
		return fail(R_MISSING, detail, len, "field \"key.compiler\" is missing");
	CHECK(check_name("key.compiler.build_id", b->build_id, true, 0, lim, detail, len));
	CHECK(check_name("key.compiler.cl", b->cl, true, 0, lim, detail, len));
	CHECK(check_name("key.compiler.release_id", b->release_id, false, 0, lim, detail, len));
	if (b->kind == PERFWATCH__V1__BUILD_KIND__BUILD_KIND_UNSPECIFIED)
		return fail(R_MISSING, detail, len, "field \"key.compiler.kind\" is unspecified");
	if ((int)b->kind < 1 || (int)b->kind > 4)
		return fail(R_INVALID, detail, len, "field \"key.compiler.kind\" value %d is unknown",
		            (int)b->kind);
	uint64_t cln;
	if (strncmp(b->cl, "cl/", 3) != 0 || !parse_uint(b->cl + 3, &cln) || cln == 0 ||
	    cln > INT64_MAX)
		return fail(R_INVALID, detail, len, "field \"key.compiler.cl\" value \"%s\" is not cl/<number>",
		            b->cl);
	if (b->cl_number != (int64_t)cln)
		return fail(R_INCONS, detail, len,
		            "field \"key.compiler.cl_number\" %lld disagrees with cl \"%s\"",
		            (long long)b->cl_number, b->cl);
	bool bisect = b->kind == PERFWATCH__V1__BUILD_KIND__BUILD_KIND_BISECT;
	CHECK(check_name("bisect_job_id", run->bisect_job_id, bisect, 0, lim, detail, len));
	if (!bisect && run->bisect_job_id && *run->bisect_job_id)
		return fail(R_INCONS, detail, len,
		            "field \"bisect_job_id\" is set on a build of kind %d, not bisect",
		            (int)b->kind);
	/* a re-baseline run (issue 17) measures the series' nightly on the changed fleet */
	CHECK(check_name("rebaseline_job_id", run->rebaseline_job_id, false, 0, lim, detail, len));
	if (run->rebaseline_job_id && *run->rebaseline_job_id &&
	    b->kind != PERFWATCH__V1__BUILD_KIND__BUILD_KIND_NIGHTLY &&
	    b->kind != PERFWATCH__V1__BUILD_KIND__BUILD_KIND_RELEASE)
		return fail(R_INCONS, detail, len,
		            "field \"rebaseline_job_id\" is set on a build of kind %d, not nightly or "
		            "release", (int)b->kind);

	const Perfwatch__V1__Platform *p = k->platform;
	if (!p)
		return fail(R_MISSING, detail, len, "field \"key.platform\" is missing");
	CHECK(check_name("key.platform.name", p->name, true, PW_KEY_PLATFORM_MAX, lim, detail, len));
	uint32_t chips;
	int family;
	if (!pw_ingest_platform_known(p->name, &chips, &family))
		return fail(R_INVALID, detail, len,
		            "platform \"%s\" is not a known platform (v5e-N, v6e-N, ironwood-N, h100-N, b200-N)",
		            p->name);
	if ((int)p->family != family)
		return fail(R_INCONS, detail, len,
		            "platform \"%s\" disagrees with its family %d", p->name, (int)p->family);
	if (p->chips != chips)
		return fail(R_INCONS, detail, len, "platform \"%s\" disagrees with chips %u", p->name,
		            p->chips);

	const Perfwatch__V1__Config *c = k->config;
	if (!c)
		return fail(R_MISSING, detail, len, "field \"key.config\" is missing");
	CHECK(check_name("key.config.name", c->name, true, PW_KEY_CONFIG_MAX, lim, detail, len));
	CHECK(check_config(c, detail, len));
	/* every series key the run forms fits PW_SERIES_KEY_MAX: each part is within its own
	 * PW_KEY_*_MAX (checked above and with the metrics), and pw_limits.h asserts that the
	 * parts at their maxima fit */

	/* where it ran */
	CHECK(check_name("chip_set", run->chip_set, true, 0, lim, detail, len));
	CHECK(check_name("cell", run->cell, false, 0, lim, detail, len));
	CHECK(check_name("harness_version", run->harness_version, true, 0, lim, detail, len));
	CHECK(check_text("runtime_env", run->runtime_env, lim->max_text, lim, detail, len));
	CHECK(check_text("host_cpuset", run->host_cpuset, lim->max_name, lim, detail, len));
	CHECK(check_text("trace_mix", run->trace_mix, lim->max_text, lim, detail, len));
	CHECK(check_text("trace_uri", run->trace_uri, lim->max_text, lim, detail, len));
	CHECK(check_text("hlo_uri", run->hlo_uri, lim->max_text, lim, detail, len));
	CHECK(check_text("hlo_text", run->hlo_text, lim->max_hlo_text, lim, detail, len));
	CHECK(check_numerics_fingerprint(run->numerics_fingerprint, detail, len));

	/* hygiene */
	CHECK(check_num("warmup_discarded_s", run->warmup_discarded_s, 0, 86400, detail, len));
	CHECK(check_num("allocator_steady_s", run->allocator_steady_s, 0, 86400, detail, len));
	CHECK(check_num("arrival_rate_rps", run->arrival_rate_rps, 0, 1e7, detail, len));
	CHECK(check_num("measure_window_s", run->measure_window_s, 0, 7 * 86400, detail, len));
	if (run->compile_cache_hits > run->compile_cache_total)
		return fail(R_INCONS, detail, len,
		            "compile_cache_hits %u exceeds compile_cache_total %u",
		            run->compile_cache_hits, run->compile_cache_total);
	if ((int)run->load_mode < 0 || (int)run->load_mode > 2)
		return fail(R_INVALID, detail, len, "field \"load_mode\" value %d is unknown",
		            (int)run->load_mode);

	/* time */
	if (run->started_unix_us == 0)
		return fail(R_MISSING, detail, len, "field \"started_unix_us\" is not set");
	if (run->finished_unix_us == 0)
		return fail(R_MISSING, detail, len, "field \"finished_unix_us\" is not set");
	if (run->started_unix_us > lim->now_unix_us + lim->max_future_us ||
	    run->finished_unix_us > lim->now_unix_us + lim->max_future_us)
		return fail(R_INVALID, detail, len, "run \"%s\" is timestamped in the future",
		            run->run_id);
	if (run->started_unix_us < lim->now_unix_us - lim->max_age_us)
		return fail(R_INVALID, detail, len,
		            "run \"%s\" started at %lld us, older than the maximum age", run->run_id,
		            (long long)run->started_unix_us);
	if (run->finished_unix_us < run->started_unix_us)
		return fail(R_INCONS, detail, len, "run \"%s\" finished before it started", run->run_id);
	if (run->finished_unix_us - run->started_unix_us > 7 * 86400 * US_PER_S)
		return fail(R_INVALID, detail, len, "run \"%s\" lasted more than 7 days", run->run_id);

	/* step-level measurements */
	CHECK(check_num("wall_step_us", run->wall_step_us, 0, 3.6e9, detail, len));
	CHECK(check_num("roofline_predicted_step_us", run->roofline_predicted_step_us, 0, 3.6e9,
	                detail, len));
	CHECK(check_num("achieved_hbm_bw_tb_s", run->achieved_hbm_bw_tb_s, 0, 1e4, detail, len));
	CHECK(check_num("achieved_bw_fraction", run->achieved_bw_fraction, 0, 1, detail, len));

	/* metrics */
	if (run->n_metrics == 0)
		return fail(R_MISSING, detail, len, "run \"%s\" has no metrics", run->run_id);
	if (run->n_metrics > lim->max_metrics)
		return fail(R_OVERSIZE, detail, len, "run has %zu metrics, over the cap of %zu",
		            run->n_metrics, lim->max_metrics);
	bool seen[NMETRICS] = {false};
	for (size_t i = 0; i < run->n_metrics; i++) {
		const Perfwatch__V1__MetricSample *m = run->metrics[i];
		CHECK(check_name("metrics.name", m->name, true, PW_KEY_METRIC_MAX, lim, detail, len));
		int mi = pw_ingest_metric_index(m->name);
		if (mi < 0)
			return fail(R_INVALID, detail, len, "metric \"%s\" is not a metric of §3.2", m->name);
		if (seen[mi])
			return fail(R_INCONS, detail, len, "metric \"%s\" appears twice", m->name);
		seen[mi] = true;
		if ((int)m->metric != mi + 1)
			return fail(R_INCONS, detail, len, "metric \"%s\" carries enum %d, not %d", m->name,
			            (int)m->metric, mi + 1);
		if (strcmp(m->unit, metrics[mi].unit) != 0)
			return fail(R_INCONS, detail, len, "metric \"%s\" has unit \"%s\", not \"%s\"",
			            m->name, m->unit, metrics[mi].unit);
		if (!isfinite(m->value))
			return fail(R_INVALID, detail, len, "metric \"%s\" has value %s", m->name,
			            isnan(m->value) ? "NaN" : "infinite");
		bool low = metrics[mi].lo_open ? m->value <= metrics[mi].lo : m->value < metrics[mi].lo;
		if (low || m->value > metrics[mi].hi)
			return fail(R_INVALID, detail, len,
			            "metric \"%s\" value %g is outside the sane range %s%g, %g] %s", m->name,
			            m->value, metrics[mi].lo_open ? "(" : "[", metrics[mi].lo,
			            metrics[mi].hi, metrics[mi].unit);
	}

	/* ops */
	if (run->n_ops > lim->max_ops)
		return fail(R_OVERSIZE, detail, len, "run has %zu op timings, over the cap of %zu",
		            run->n_ops, lim->max_ops);
	for (size_t i = 0; i < run->n_ops; i++) {
		const Perfwatch__V1__OpTiming *o = run->ops[i];
		CHECK(check_name("ops.op_name", o->op_name, true, 0, lim, detail, len));
		CHECK(check_name("ops.category", o->category, false, 0, lim, detail, len));
		CHECK(check_name("ops.hlo_kind", o->hlo_kind, false, 0, lim, detail, len));
		CHECK(check_name("ops.unit", o->unit, false, 0, lim, detail, len));
		if (!isfinite(o->us_per_step) || o->us_per_step < 0 || o->us_per_step > 3.6e9)
			return fail(R_INVALID, detail, len, "op \"%s\" has us_per_step %g", o->op_name,
			            o->us_per_step);
		if (!isfinite(o->hbm_bytes_per_step) || o->hbm_bytes_per_step < 0)
			return fail(R_INVALID, detail, len, "op \"%s\" has hbm_bytes_per_step %g",
			            o->op_name, o->hbm_bytes_per_step);
		if (o->calls > 10000000)
			return fail(R_INVALID, detail, len, "op \"%s\" has %u calls", o->op_name, o->calls);
	}
	/* op names are a key of op_timings: unique within the run (pairwise for few, sorted for many) */
	if (run->n_ops > 1) {
		if (run->n_ops <= 64) {
			for (size_t i = 0; i < run->n_ops; i++)
				for (size_t j = i + 1; j < run->n_ops; j++)
					if (strcmp(run->ops[i]->op_name, run->ops[j]->op_name) == 0)
						return fail(R_INCONS, detail, len, "op \"%s\" appears twice",
						            run->ops[i]->op_name);
		} else {
			const char **names = malloc(run->n_ops * sizeof *names);
			if (!names)
				return fail(PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED, detail,
				            len, "out of memory checking op names");
			for (size_t i = 0; i < run->n_ops; i++)
				names[i] = run->ops[i]->op_name;
			qsort(names, run->n_ops, sizeof *names, cmp_str);
			for (size_t i = 1; i < run->n_ops; i++)
				if (strcmp(names[i - 1], names[i]) == 0) {
					pw_dlq_reason r = fail(R_INCONS, detail, len, "op \"%s\" appears twice",
					                       names[i]);
					free(names);
					return r;
				}
			free(names);
		}
	}
	if (detail && len)
		detail[0] = '\0';
	return R_OK_;
}

pw_dlq_reason pw_ingest_decode(const void *payload, size_t len, const pw_ingest_limits *lim,
                               Perfwatch__V1__RunResult **out, char *detail, size_t detail_len)
{
	*out = NULL;
	if (len > lim->max_payload)
		return fail(R_OVERSIZE, detail, detail_len, "payload of %zu bytes is over the cap of %zu",
		            len, lim->max_payload);
	if (!payload || len == 0)
		return fail(R_DECODE, detail, detail_len, "payload is empty");
	char why[512];
	if (pw_input_check_wire(&perfwatch__v1__run_result__descriptor, payload, len, why,
	                        sizeof why) != PW_OK)
		return fail(R_INVALID, detail, detail_len, "%s", why);
	Perfwatch__V1__RunResult *run =
		perfwatch__v1__run_result__unpack(NULL, len, (const uint8_t *)payload);
	if (!run)
		return fail(R_DECODE, detail, detail_len,
		            "payload of %zu bytes is not a perfwatch.v1.RunResult", len);
	pw_dlq_reason r = pw_ingest_validate(run, lim, detail, detail_len);
	if (r != R_OK_) {
		perfwatch__v1__run_result__free_unpacked(run, NULL);
		return r;
	}
	*out = run;
	return R_OK_;
}
