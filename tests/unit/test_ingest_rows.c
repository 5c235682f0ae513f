/*
 * test_ingest_rows.c: the ingester's row and message encodings
 * (services/ingester/rows.h) without PostgreSQL or a broker.
 *
 * SHA-256 against the FIPS 180-4 example vectors; COPY text escaping, the
 * buffer's hard cap, timestamps and bytea; the rows of a real simulator run
 * (column counts must match the column lists the COPY statements name); the
 * SeriesPoint and DeadLetter payloads round-trip.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "pw_dlq.h"
#include "pw_topics.h"
#include "rows.h"
#include "sim_model.h"
#include "sim_proto.h"
#include "validate.h"

static void hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

Test(ingest_rows, sha256_vectors)
{
	struct {
		const char *in, *want;
	} v[] = {
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		uint8_t d[32];
		char h[65];
		pw_sha256(v[i].in, strlen(v[i].in), d);
		hex(d, 32, h);
		cr_assert_str_eq(h, v[i].want, "sha256(\"%s\")", v[i].in);
	}
	/* a million 'a': crosses many blocks */
	char *m = malloc(1000000);
	cr_assert_not_null(m);
	memset(m, 'a', 1000000);
	uint8_t d[32];
	char h[65];
	pw_sha256(m, 1000000, d);
	hex(d, 32, h);
	cr_assert_str_eq(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(m);
}

static char *text(pw_copybuf *b)
{
	static char out[4096];
	cr_assert_lt(b->len, sizeof out);
	memcpy(out, b->data, b->len);
	out[b->len] = '\0';
	return out;
}

Test(ingest_rows, copy_text_escaping_and_cap)
{
	pw_copybuf b;
	pw_copybuf_init(&b, 1 << 20);
	pw_copybuf_text(&b, "a\\b\tc\nd\re");
	cr_assert_str_eq(text(&b), "a\\\\b\\tc\\nd\\re");
	pw_copybuf_release(&b);

	pw_copybuf small;
	pw_copybuf_init(&small, 8);
	pw_copybuf_text(&small, "12345");
	cr_assert_eq(small.err, PW_OK);
	pw_copybuf_text(&small, "6789");
	cr_assert_eq(small.err, PW_ERR_INVALID, "the cap is hard");
	cr_assert_eq(small.len, 5);
	pw_copybuf_release(&small);
}

static size_t count_char(const char *s, size_t n, char c)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += s[i] == c;
	return k;
}

static Perfwatch__V1__RunResult *sim_run(uint8_t **payload, size_t *len)
{
	const char *data = getenv("PW_TEST_DATA");
	char path[1024], err[256];
	snprintf(path, sizeof path, "%s/../../tools/simulator/scenarios/worked-example.scn",
	         data ? data : "tests/data");
	pw_sim_scenario *sc;
	cr_assert_eq(pw_sim_scenario_load(path, &sc, err, sizeof err), PW_OK, "%s", err);
	pw_sim *w;
	cr_assert_eq(pw_sim_new(&w, sc, NULL, err, sizeof err), PW_OK, "%s", err);
	pw_sim_scenario_free(sc);
	size_t si;
	cr_assert_eq(pw_sim_series_find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8", &si), PW_OK);
	pw_sim_build b;
	pw_sim_build_at(&b, PW_SIM_BUILD_NIGHTLY, "xla-nightly-2026-06-17", 7841923);
	pw_sim_run r;
	cr_assert_eq(pw_sim_run_make(w, si, &b, "t0-20260617-00000", 0, 1781658000000000LL, NULL, &r),
	             PW_OK);
	cr_assert_eq(pw_sim_proto_run(w, &r, payload, len), PW_OK);
	pw_sim_free(w);
	Perfwatch__V1__RunResult *run = perfwatch__v1__run_result__unpack(NULL, *len, *payload);
	cr_assert_not_null(run);
	return run;
}

/* One field of a binary COPY row: its bytes (NULL for a SQL null) and length. */
typedef struct bin_field {
	const unsigned char *p;
	uint32_t len;
} bin_field;

static uint64_t be(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* Parses PostgreSQL's binary COPY format written by pw_copybin_*: checks the
 * header, that every row has cols fields and the trailer ends the data;
 * returns the number of rows, fields row-major in f. */
static size_t bin_parse(const pw_copybuf *b, size_t cols, bin_field *f, size_t fmax)
{
	const unsigned char *p = (const unsigned char *)b->data, *end = p + b->len;
	cr_assert_geq(b->len, 19 + 2);
	cr_assert(memcmp(p, "PGCOPY\n\377\r\n\0", 11) == 0, "binary COPY signature");
	cr_assert_eq(be(p + 11, 4), 0);
	cr_assert_eq(be(p + 15, 4), 0);
	p += 19;
	size_t rows = 0, k = 0;
	for (;;) {
		cr_assert_leq(p + 2, end);
		uint64_t nf = be(p, 2);
		p += 2;
		if (nf == 0xffff)
			break;
		cr_assert_eq(nf, cols, "row %zu has %llu fields, want %zu", rows, (unsigned long long)nf, cols);
		for (size_t i = 0; i < cols; i++) {
			cr_assert_leq(p + 4, end);
			uint32_t len = (uint32_t)be(p, 4);
			p += 4;
			cr_assert_leq(p + len, end);
			cr_assert_lt(k, fmax);
			f[k].p = p;
			f[k].len = len;
			k++;
			p += len;
		}
		rows++;
	}
	cr_assert_eq(p, end, "data after the trailer");
	return rows;
}

Test(ingest_rows, rows_have_as_many_fields_as_their_column_lists)
{
	uint8_t *payload;
	size_t len;
	Perfwatch__V1__RunResult *run = sim_run(&payload, &len);
	pw_copybuf b;
	pw_copybuf_init(&b, 1 << 20);
	uint8_t sha[32];
	pw_sha256(payload, len, sha);
	pw_copybin_header(&b);
	pw_ingest_row_run(&b, run, sha, 7, 1234);
	pw_copybin_trailer(&b);
	size_t run_cols = count_char(pw_ingest_run_columns, strlen(pw_ingest_run_columns), ',') + 1;
	cr_assert_eq(run_cols, 49);
	bin_field rf[49];
	cr_assert_eq(bin_parse(&b, run_cols, rf, 49), 1);
#define FIELD_IS(i, s) (rf[i].len == strlen(s) && memcmp(rf[i].p, s, rf[i].len) == 0)
	cr_assert(FIELD_IS(0, "t0-20260617-00000"));
	cr_assert(FIELD_IS(6, "nightly") && FIELD_IS(7, "cl/7841923"));
	cr_assert_eq(rf[8].len, 8);
	cr_assert_eq(be(rf[8].p, 8), 7841923, "compiler_cl_number is an int8");
	cr_assert(FIELD_IS(11, "tpu_v6e") && FIELD_IS(13, "decode.B64.s2048.int8") &&
	          FIELD_IS(14, "decode") && FIELD_IS(17, "int8"));
	cr_assert_eq(rf[12].len, 4);
	cr_assert_eq(be(rf[12].p, 4), 4, "chips is an int4");
	cr_assert_eq(be(rf[15].p, 4), 64);
	cr_assert_eq(be(rf[16].p, 4), 2048);
	cr_assert_eq(rf[18].len, 1, "geometry_matched is a bool");
	cr_assert_eq((int64_t)be(rf[36].p, 8), run->finished_unix_us - 946684800000000LL);
	cr_assert_eq(rf[45].len, 32);
	cr_assert(memcmp(rf[45].p, sha, 32) == 0, "payload_sha256 is the raw digest");
	cr_assert_eq(rf[46].len, 4);
	cr_assert_eq(be(rf[46].p, 4), 7);
	cr_assert_eq(rf[47].len, 8);
	cr_assert_eq(be(rf[47].p, 8), 1234);
#undef FIELD_IS

	pw_copybuf_reset(&b);
	int64_t ids[16];
	for (size_t i = 0; i < run->n_metrics; i++)
		ids[i] = 100 + (int64_t)i;
	pw_copybin_header(&b);
	pw_ingest_rows_samples(&b, run, ids);
	pw_copybin_trailer(&b);
	size_t cols = count_char(pw_ingest_sample_columns, strlen(pw_ingest_sample_columns), ',') + 1;
	bin_field f[16 * 16];
	size_t rows = bin_parse(&b, cols, f, sizeof f / sizeof f[0]);
	cr_assert_eq(rows, run->n_metrics);
	/* row 2 (tpot_p50_ms): run id, repeat 0, metric, series id 102, value, unit ms, time */
	const bin_field *r2 = &f[2 * cols];
	cr_assert_eq(r2[0].len, strlen("t0-20260617-00000"));
	cr_assert(memcmp(r2[0].p, "t0-20260617-00000", r2[0].len) == 0);
	cr_assert_eq(r2[1].len, 4);
	cr_assert_eq(be(r2[1].p, 4), 0);
	cr_assert_eq(r2[2].len, strlen("tpot_p50_ms"));
	cr_assert(memcmp(r2[2].p, "tpot_p50_ms", r2[2].len) == 0);
	cr_assert_eq(r2[3].len, 8);
	cr_assert_eq(be(r2[3].p, 8), 102);
	uint64_t bits = be(r2[4].p, 8);
	double v;
	memcpy(&v, &bits, sizeof v);
	cr_assert_eq(v, run->metrics[2]->value);
	/* timestamptz: microseconds since 2000-01-01 00:00:00 UTC */
	cr_assert_eq((int64_t)be(r2[6].p, 8), run->finished_unix_us - 946684800000000LL);
	cr_assert_eq(cols, 13);
	cr_assert_eq(r2[12].len, 0, "rebaseline_job_id: empty on a nightly run asked by nobody");
	cr_assert_eq(r2[8].len, strlen("nightly"));
	cr_assert(memcmp(r2[8].p, "nightly", r2[8].len) == 0);
	cr_assert_eq((int64_t)be(r2[9].p, 8), 7841923);

	pw_copybuf_reset(&b);
	pw_copybin_header(&b);
	pw_ingest_rows_ops(&b, run);
	pw_copybin_trailer(&b);
	cols = count_char(pw_ingest_op_columns, strlen(pw_ingest_op_columns), ',') + 1;
	rows = bin_parse(&b, cols, f, sizeof f / sizeof f[0]);
	cr_assert_eq(rows, run->n_ops);
	bool found = false;
	for (size_t i = 0; i < rows; i++) {
		const bin_field *o = &f[i * cols];
		if (o[2].len == strlen("fusion.1423a") && memcmp(o[2].p, "fusion.1423a", o[2].len) == 0) {
			found = true;
			cr_assert(memcmp(o[3].p, "qk_scores", o[3].len) == 0);
			cr_assert(memcmp(o[5].p, "MXU", o[5].len) == 0);
			cr_assert_eq(be(o[6].p, 4), 32);
		}
	}
	cr_assert(found, "fusion.1423a is not among the op rows");
	pw_copybuf_release(&b);
	perfwatch__v1__run_result__free_unpacked(run, NULL);
	free(payload);
}

/*
 * numeric's binary form, as PostgreSQL's numeric_send writes it
 * (SELECT numeric_send(v::numeric(20,0))): ndigits, weight, sign, dscale,
 * then the base-10000 digits without trailing zeros.
 */
Test(ingest_rows, numeric_u64_matches_numeric_send)
{
	static const struct {
		uint64_t v;
		const char *hex;
	} cases[] = {
		{0, "0000000000000000"},
		{1, "0001000000000000" "0001"},
		{9999, "0001000000000000" "270f"},
		{10000, "0001000100000000" "0001"},
		{12345678, "0002000100000000" "04d2" "162e"},
		{100000000, "0001000200000000" "0001"},
		{18446744073709551615ULL, "0005000400000000" "0734" "1a58" "02e1" "03bb" "064f"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		pw_copybuf b;
		pw_copybuf_init(&b, 64);
		pw_copybin_numeric_u64(&b, cases[i].v);
		char hex[128] = {0};
		cr_assert_geq(b.len, 4);
		cr_assert_eq(be((const unsigned char *)b.data, 4), b.len - 4, "field length");
		for (size_t j = 4; j < b.len; j++)
			snprintf(hex + 2 * (j - 4), 3, "%02x", (unsigned char)b.data[j]);
		cr_assert_str_eq(hex, cases[i].hex, "numeric_send(%llu)", (unsigned long long)cases[i].v);
		pw_copybuf_release(&b);
	}
}

/* perf.runs.v1's key is every series key of the run without its metric: one
 * series' runs share a partition (pw_topics.h) */
Test(ingest_rows, runs_key_is_the_prefix_of_every_series_key_of_the_run)
{
	uint8_t *payload;
	size_t len;
	Perfwatch__V1__RunResult *run = sim_run(&payload, &len);
	char key[256], series[256];
	cr_assert(pw_runs_key(key, sizeof key, run->key->model, run->key->hlo_fingerprint,
	                      run->key->platform->name, run->key->config->name));
	cr_assert_str_eq(key, "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8");
	cr_assert_gt(run->n_metrics, 1);
	for (size_t i = 0; i < run->n_metrics; i++) {
		cr_assert_eq(pw_ingest_series_key(series, sizeof series, run, run->metrics[i]->name), PW_OK);
		size_t n = strlen(key);
		cr_assert(strncmp(series, key, n) == 0 && series[n] == '/' &&
		              strcmp(series + n + 1, run->metrics[i]->name) == 0,
		          "series \"%s\" is not \"%s/<metric>\"", series, key);
	}
	/* too small a buffer, or a part missing: false and an empty key */
	size_t n = strlen(key);
	cr_assert_not(pw_runs_key(key, n, run->key->model, run->key->hlo_fingerprint,
	                          run->key->platform->name, run->key->config->name));
	cr_assert_str_eq(key, "");
	cr_assert(pw_runs_key(key, n + 1, run->key->model, run->key->hlo_fingerprint,
	                      run->key->platform->name, run->key->config->name));
	cr_assert_not(pw_runs_key(key, sizeof key, run->key->model, NULL, "p", "c"));
	cr_assert_str_eq(key, "");
	cr_assert_not(pw_runs_key(key, 0, "m", "f", "p", "c"));
	perfwatch__v1__run_result__free_unpacked(run, NULL);
	free(payload);
}

Test(ingest_rows, point_and_dead_letter_round_trip)
{
	uint8_t *payload;
	size_t len;
	Perfwatch__V1__RunResult *run = sim_run(&payload, &len);
	char key[256];
	cr_assert_eq(pw_ingest_series_key(key, sizeof key, run, "tpot_p50_ms"), PW_OK);
	cr_assert_str_eq(key, "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms");
	cr_assert_eq(pw_ingest_series_key(key, 10, run, "tpot_p50_ms"), PW_ERR_INVALID);
	size_t ti = 0;
	while (strcmp(run->metrics[ti]->name, "goodput_tok_s_chip") != 0)
		ti++;
	uint8_t *buf;
	size_t n;
	cr_assert_eq(pw_ingest_series_key(key, sizeof key, run, run->metrics[ti]->name), PW_OK);
	cr_assert_eq(pw_ingest_point_pack(run, ti, 42, key, &buf, &n), PW_OK);
	Perfwatch__V1__SeriesPoint *p = perfwatch__v1__series_point__unpack(NULL, n, buf);
	cr_assert_not_null(p);
	cr_assert_eq(p->series_id, 42);
	cr_assert_str_eq(p->series_key, "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/goodput_tok_s_chip");
	cr_assert_str_eq(p->key->metric, "goodput_tok_s_chip");
	cr_assert_eq(p->direction, PERFWATCH__V1__METRIC_DIRECTION__METRIC_DIRECTION_HIGHER_IS_BETTER);
	cr_assert_eq(p->value, run->metrics[ti]->value);
	cr_assert_eq(p->measured_unix_us, run->finished_unix_us);
	cr_assert_str_eq(p->build->build_id, "xla-nightly-2026-06-17");
	cr_assert_str_eq(p->chip_set, run->chip_set);
	perfwatch__v1__series_point__free_unpacked(p, NULL);
	free(buf);
	cr_assert_eq(pw_ingest_point_pack(run, run->n_metrics, 1, key, &buf, &n), PW_ERR_INVALID);

	pw_dlq_source src = {"ingester", "perfwatch.v1.RunResult", "perf.runs.v1", 3, 77, "k", 1, payload, len};
	cr_assert_eq(pw_dlq_pack(&src, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE,
	                         "metric \"x\" has value NaN", 5, &buf, &n),
	             PW_OK);
	Perfwatch__V1__DeadLetter *d = perfwatch__v1__dead_letter__unpack(NULL, n, buf);
	cr_assert_not_null(d);
	cr_assert_eq(d->reason, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE);
	cr_assert_str_eq(d->source_topic, "perf.runs.v1");
	cr_assert_eq(d->partition, 3);
	cr_assert_eq(d->offset, 77);
	cr_assert_eq(d->original_payload.len, len);
	cr_assert_eq(memcmp(d->original_payload.data, payload, len), 0);
	cr_assert_str_eq(d->service, "ingester");
	perfwatch__v1__dead_letter__free_unpacked(d, NULL);
	free(buf);
	perfwatch__v1__run_result__free_unpacked(run, NULL);
	free(payload);
}
