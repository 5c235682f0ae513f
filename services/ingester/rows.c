/*
 * rows.c: COPY encodings, SHA-256 and message packing for the ingester
 * (contract in rows.h). The column lists here and the tables of
 * migrations/0002_runs.sql must agree; store.c's staging tables are created
 * LIKE the real ones, so a mismatch fails the first COPY loudly.
 */
#include "rows.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "validate.h"

/* ---- SHA-256 ------------------------------------------------------------------- */

/*
 * libcrypto's SHA-256: it uses the CPU's SHA extensions where there are any,
 * and a portable C version hashed every payload at ~8% of the ingester's CPU
 * (perf, bench/ingest.sh). The digest is fetched once per process.
 */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

void pw_sha256(const void *data, size_t n, uint8_t out[32])
{
	pthread_once(&sha256_once, sha256_fetch);
	unsigned int len = 0;
	if (!sha256_md || !EVP_Digest(data, n, out, &len, sha256_md, NULL) || len != 32)
		abort(); /* libcrypto without SHA-256 cannot tell redeliveries apart */
}

/* ---- names ---------------------------------------------------------------------- */

const char *pw_ingest_build_kind_name(int kind)
{
	static const char *const n[] = {"unspecified", "nightly", "rc", "bisect", "release"};
	return kind >= 0 && kind < 5 ? n[kind] : "unspecified";
}

const char *pw_ingest_family_name(int family)
{
	static const char *const n[] = {"unspecified", "tpu_v5e", "tpu_v6e", "tpu_ironwood",
	                                "gpu_h100", "gpu_b200", "simulator"};
	return family >= 0 && family < 7 ? n[family] : "unspecified";
}

const char *pw_ingest_phase_name(int phase)
{
	static const char *const n[] = {"unspecified", "prefill", "decode", "mixed", "training"};
	return phase >= 0 && phase < 5 ? n[phase] : "unspecified";
}

const char *pw_ingest_dtype_name(int dtype)
{
	static const char *const n[] = {"unspecified", "bf16", "int8", "fp8", "fp16", "fp32"};
	return dtype >= 0 && dtype < 6 ? n[dtype] : "unspecified";
}

const char *pw_ingest_load_mode_name(int mode)
{
	static const char *const n[] = {"unspecified", "open_loop", "closed_loop"};
	return mode >= 0 && mode < 3 ? n[mode] : "unspecified";
}

pw_status pw_ingest_series_key(char *buf, size_t len, const Perfwatch__V1__RunResult *run,
                               const char *metric)
{
	/* model/fingerprint/platform/config/metric, built by hand: called for
	 * every sample several times, where snprintf showed in the profile */
	const Perfwatch__V1__RunKey *k = run->key;
	const char *part[5] = {k->model, k->hlo_fingerprint, k->platform->name, k->config->name,
	                       metric};
	size_t at = 0;
	for (int i = 0; i < 5; i++) {
		size_t n = strlen(part[i]);
		if (at + n + 1 > len)
			return PW_ERR_INVALID;
		memcpy(buf + at, part[i], n);
		at += n;
		buf[at++] = i < 4 ? '/' : '\0';
	}
	return PW_OK;
}

/* ---- rows ------------------------------------------------------------------------ */

const char pw_ingest_run_columns[] =
	"run_id, repeat_index, model, model_rev, hlo_fingerprint, build_id, build_kind, compiler_cl, "
	"compiler_cl_number, release_id, platform, platform_family, chips, config, phase, batch, "
	"seq_len, dtype, geometry_matched, firmware, chip_set, cell, harness_version, runtime_env, "
	"host_cpuset, reserved_neighbors, warmup_discarded_s, compile_cache_hits, "
	"compile_cache_total, allocator_steady_s, load_mode, arrival_rate_rps, trace_mix, seed, "
	"measure_window_s, started_at, finished_at, wall_step_us, roofline_predicted_step_us, "
	"achieved_hbm_bw_tb_s, achieved_bw_fraction, hlo_text, trace_uri, hlo_uri, bisect_job_id, "
	"payload_sha256, kafka_partition, kafka_offset, numerics_fingerprint";

const char pw_ingest_sample_columns[] =
	"run_id, repeat_index, metric, series_id, value, unit, measured_at, build_id, build_kind, "
	"compiler_cl_number, chip_set, bisect_job_id, rebaseline_job_id";

const char pw_ingest_op_columns[] =
	"run_id, repeat_index, op_name, category, hlo_kind, exec_unit, calls, us_per_step, "
	"hbm_bytes_per_step";

/* the run row's 49 fields, in pw_ingest_run_columns order, with each column's binary type */
void pw_ingest_row_run(pw_copybuf *b, const Perfwatch__V1__RunResult *r, const uint8_t sha[32],
                       int32_t partition, int64_t offset)
{
	const Perfwatch__V1__RunKey *k = r->key;
	pw_copybin_row(b, 49);
	pw_copybin_text(b, r->run_id);
	pw_copybin_int4(b, (int32_t)r->repeat_index);
	pw_copybin_text(b, k->model);
	pw_copybin_text(b, k->model_rev);
	pw_copybin_text(b, k->hlo_fingerprint);
	pw_copybin_text(b, k->compiler->build_id);
	pw_copybin_text(b, pw_ingest_build_kind_name(k->compiler->kind));
	pw_copybin_text(b, k->compiler->cl);
	pw_copybin_int8(b, k->compiler->cl_number);
	pw_copybin_text(b, k->compiler->release_id);
	pw_copybin_text(b, k->platform->name);
	pw_copybin_text(b, pw_ingest_family_name(k->platform->family));
	pw_copybin_int4(b, (int32_t)k->platform->chips);
	pw_copybin_text(b, k->config->name);
	pw_copybin_text(b, pw_ingest_phase_name(k->config->phase));
	pw_copybin_int4(b, (int32_t)k->config->batch);
	pw_copybin_int4(b, (int32_t)k->config->seq_len);
	pw_copybin_text(b, pw_ingest_dtype_name(k->config->dtype));
	pw_copybin_bool(b, k->config->geometry_matched);
	pw_copybin_text(b, k->firmware);
	pw_copybin_text(b, r->chip_set);
	pw_copybin_text(b, r->cell);
	pw_copybin_text(b, r->harness_version);
	pw_copybin_text(b, r->runtime_env);
	pw_copybin_text(b, r->host_cpuset);
	pw_copybin_bool(b, r->reserved_neighbors);
	pw_copybin_float8(b, r->warmup_discarded_s);
	pw_copybin_int4(b, (int32_t)r->compile_cache_hits);
	pw_copybin_int4(b, (int32_t)r->compile_cache_total);
	pw_copybin_float8(b, r->allocator_steady_s);
	pw_copybin_text(b, pw_ingest_load_mode_name(r->load_mode));
	pw_copybin_float8(b, r->arrival_rate_rps);
	pw_copybin_text(b, r->trace_mix);
	pw_copybin_numeric_u64(b, r->seed);
	pw_copybin_float8(b, r->measure_window_s);
	pw_copybin_timestamptz(b, r->started_unix_us);
	pw_copybin_timestamptz(b, r->finished_unix_us);
	pw_copybin_float8(b, r->wall_step_us);
	pw_copybin_float8(b, r->roofline_predicted_step_us);
	pw_copybin_float8(b, r->achieved_hbm_bw_tb_s);
	pw_copybin_float8(b, r->achieved_bw_fraction);
	pw_copybin_text(b, r->hlo_text);
	pw_copybin_text(b, r->trace_uri);
	pw_copybin_text(b, r->hlo_uri);
	pw_copybin_text(b, r->bisect_job_id);
	pw_copybin_bytea(b, sha, 32);
	pw_copybin_int4(b, partition);
	pw_copybin_int8(b, offset);
	pw_copybin_text(b, r->numerics_fingerprint);
}

void pw_ingest_rows_samples(pw_copybuf *b, const Perfwatch__V1__RunResult *r,
                            const int64_t *series_ids)
{
	const Perfwatch__V1__CompilerBuild *c = r->key->compiler;
	const char *kind = pw_ingest_build_kind_name(c->kind);
	for (size_t i = 0; i < r->n_metrics; i++) {
		const Perfwatch__V1__MetricSample *m = r->metrics[i];
		pw_copybin_row(b, 13);
		pw_copybin_text(b, r->run_id);
		pw_copybin_int4(b, (int32_t)r->repeat_index);
		pw_copybin_text(b, m->name);
		pw_copybin_int8(b, series_ids[i]);
		pw_copybin_float8(b, m->value);
		pw_copybin_text(b, m->unit);
		pw_copybin_timestamptz(b, r->finished_unix_us);
		pw_copybin_text(b, c->build_id);
		pw_copybin_text(b, kind);
		pw_copybin_int8(b, (int64_t)c->cl_number);
		pw_copybin_text(b, r->chip_set);
		pw_copybin_text(b, r->bisect_job_id);
		pw_copybin_text(b, r->rebaseline_job_id);
	}
}

void pw_ingest_rows_ops(pw_copybuf *b, const Perfwatch__V1__RunResult *r)
{
	for (size_t i = 0; i < r->n_ops; i++) {
		const Perfwatch__V1__OpTiming *o = r->ops[i];
		pw_copybin_row(b, 9);
		pw_copybin_text(b, r->run_id);
		pw_copybin_int4(b, (int32_t)r->repeat_index);
		pw_copybin_text(b, o->op_name);
		pw_copybin_text(b, o->category);
		pw_copybin_text(b, o->hlo_kind);
		pw_copybin_text(b, o->unit);
		pw_copybin_int4(b, (int32_t)o->calls);
		pw_copybin_float8(b, o->us_per_step);
		pw_copybin_float8(b, o->hbm_bytes_per_step);
	}
}

/* ---- messages ----------------------------------------------------------------------- */

pw_status pw_ingest_point_pack(const Perfwatch__V1__RunResult *r, size_t i, int64_t series_id,
                               const char *series_key, uint8_t **out, size_t *len)
{
	*out = NULL;
	if (i >= r->n_metrics || !series_key)
		return PW_ERR_INVALID;
	const Perfwatch__V1__MetricSample *m = r->metrics[i];
	Perfwatch__V1__SeriesKey sk = PERFWATCH__V1__SERIES_KEY__INIT;
	sk.model = r->key->model;
	sk.hlo_fingerprint = r->key->hlo_fingerprint;
	sk.platform = r->key->platform->name;
	sk.config = r->key->config->name;
	sk.metric = m->name;
	Perfwatch__V1__SeriesPoint p = PERFWATCH__V1__SERIES_POINT__INIT;
	p.series_id = series_id;
	p.series_key = (char *)series_key;
	p.key = &sk;
	p.run_id = r->run_id;
	p.repeat_index = r->repeat_index;
	p.model_rev = r->key->model_rev;
	p.build = r->key->compiler;
	p.value = m->value;
	p.unit = m->unit;
	p.metric = m->metric;
	int mi = pw_ingest_metric_index(m->name);
	p.direction = pw_ingest_metric_lower_is_better(mi)
	                      ? PERFWATCH__V1__METRIC_DIRECTION__METRIC_DIRECTION_LOWER_IS_BETTER
	                      : PERFWATCH__V1__METRIC_DIRECTION__METRIC_DIRECTION_HIGHER_IS_BETTER;
	p.measured_unix_us = r->finished_unix_us;
	p.chip_set = r->chip_set;
	p.cell = r->cell;
	p.firmware = r->key->firmware;
	p.harness_version = r->harness_version;
	p.bisect_job_id = r->bisect_job_id;
	p.rebaseline_job_id = r->rebaseline_job_id;
	size_t n = perfwatch__v1__series_point__get_packed_size(&p);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return PW_ERR_NOMEM;
	*len = perfwatch__v1__series_point__pack(&p, buf);
	*out = buf;
	return PW_OK;
}
