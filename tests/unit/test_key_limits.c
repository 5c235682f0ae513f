/*
 * test_key_limits.c: one limit per series-key part (common/pw_limits.h),
 * enforced once at the ingester, accepted by every later reader of the key.
 *
 * A property over the key's parts: the worked example's run from the
 * simulator gets a model and an HLO fingerprint at their maxima
 * (PW_KEY_MODEL_MAX, PW_KEY_HLO_FINGERPRINT_MAX bytes, in ASCII and in 2-,
 * 3- and 4-byte UTF-8 characters) or at seeded lengths up to 60 bytes past them,
 * the longest platform and config the ingester's grammar admits and its own
 * metrics. Whatever the ingester's door (pw_ingest_decode) accepts forms
 * series keys that every reader's door must accept too: the baseliner's and
 * the watcher's point doors, the bisector's, the attributor's and the
 * pager's alert doors, and GET /api/baseline's query parameter (the
 * baseliner's key buffer); and the ingester refuses (oversize) exactly the
 * parts over their limits: the limit is enforced there, once.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr_door.h"
#include "baseliner.h"
#include "bisect_msg.h"
#include "pager_msg.h"
#include "pw_http.h"
#include "pw_limits.h"
#include "series_table.h"
#include "sim_model.h"
#include "sim_proto.h"
#include "validate.h"
#include "watch_door.h"
#include "wire_messages.h"

#define R_OK_ PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED
#define R_OVERSIZE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE
#define NOW_US 1780000000000000LL

static char errbuf[512];

/* The worked example's run as the fleet publishes it (decoded: the caller frees it). */
static Perfwatch__V1__RunResult *good_run(void)
{
	const char *data = getenv("PW_TEST_DATA");
	char path[1024];
	snprintf(path, sizeof path, "%s/../../tools/simulator/scenarios/worked-example.scn", data ? data : "tests/data");
	pw_sim_scenario *sc = NULL;
	cr_assert_eq(pw_sim_scenario_load(path, &sc, errbuf, sizeof errbuf), PW_OK, "%s", errbuf);
	pw_sim *w = NULL;
	cr_assert_eq(pw_sim_new(&w, sc, NULL, errbuf, sizeof errbuf), PW_OK, "%s", errbuf);
	pw_sim_scenario_free(sc);
	size_t si;
	cr_assert_eq(pw_sim_series_find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8", &si), PW_OK);
	pw_sim_build b;
	pw_sim_build_at(&b, PW_SIM_BUILD_NIGHTLY, "xla-nightly-2026-05-27", 7841885);
	pw_sim_run r;
	cr_assert_eq(pw_sim_run_make(w, si, &b, "t1-00412", 0, NOW_US - 86400000000LL, NULL, &r), PW_OK);
	uint8_t *buf;
	size_t len;
	cr_assert_eq(pw_sim_proto_run(w, &r, &buf, &len), PW_OK);
	pw_sim_free(w);
	Perfwatch__V1__RunResult *run = perfwatch__v1__run_result__unpack(NULL, len, buf);
	free(buf);
	cr_assert_not_null(run);
	return run;
}

/* characters of 1 to 4 bytes a key part may hold ('/' and control characters may not) */
static const char *const glyphs[] = {"a", "7", "-", ".", ":", "_", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* n bytes of glyphs into out (n + 1 bytes): glyph g throughout, or seeded ones (g < 0); ends not blank */
static void part_of(char *out, size_t n, int g, uint64_t *s)
{
	size_t at = 0;
	while (at < n) {
		const char *c = glyphs[g >= 0 ? (size_t)g : rnd(s) % (sizeof glyphs / sizeof glyphs[0])];
		size_t k = strlen(c);
		if (at + k > n)
			c = "x", k = 1;
		memcpy(out + at, c, k);
		at += k;
	}
	out[n] = '\0';
}

/* What every reader's door says of series key key (parts k): cr_expect on each. */
static void every_reader_accepts(const Perfwatch__V1__SeriesKey *k, const char *key)
{
	char detail[512];
	wire_point_parts p;
	wire_point_init(&p);
	p.key = *k;
	wire_rekey_point(&p);
	cr_assert_str_eq(p.series_key, key);
	wire_buf b = wire_pack(&p.sp.base);
	Perfwatch__V1__SeriesPoint *sp = NULL;
	Perfwatch__V1__DlqReason r = pw_baseliner_point_decode(b.p, b.n, &sp, detail, sizeof detail);
	cr_expect_eq(r, R_OK_, "baseliner point door refuses a %zu-byte key: %s", strlen(key), detail);
	if (sp)
		perfwatch__v1__series_point__free_unpacked(sp, NULL);
	sp = NULL;
	bool skip = false;
	r = pw_watch_point_decode(b.p, b.n, &sp, &skip, detail, sizeof detail);
	cr_expect_eq(r, R_OK_, "watcher point door refuses a %zu-byte key: %s", strlen(key), detail);
	if (sp)
		perfwatch__v1__series_point__free_unpacked(sp, NULL);
	free(b.p);

	wire_alert_parts a;
	wire_alert_init(&a);
	a.key = *k;
	wire_rekey_alert(&a);
	b = wire_pack(&a.al.base);
	Perfwatch__V1__Alert *al = NULL;
	Perfwatch__V1__DlqReason reason = R_OK_;
	pw_bisect_input bi = pw_bisect_alert_decode(b.p, b.n, &al, &reason, detail, sizeof detail);
	cr_expect_eq(bi, PW_BISECT_INPUT_ACCEPT, "bisector alert door: %d for a %zu-byte key: %s", bi, strlen(key),
	             detail);
	if (al)
		perfwatch__v1__alert__free_unpacked(al, NULL);
	al = NULL;
	pw_attr_before bf;
	pw_attr_input ai = pw_attr_alert_decode(b.p, b.n, &al, &bf, &reason, detail, sizeof detail);
	cr_expect_eq(ai, PW_ATTR_INPUT_ACCEPT, "attributor alert door: %d for a %zu-byte key: %s", ai, strlen(key),
	             detail);
	if (al)
		perfwatch__v1__alert__free_unpacked(al, NULL);
	pw_pager_part pt;
	Perfwatch__V1__GateVerdict *gv = NULL;
	r = pw_pager_door(PW_PAGER_IN_ALERT, b.p, b.n, &pt, &gv, detail, sizeof detail);
	cr_expect_eq(r, R_OK_, "pager alert door refuses a %zu-byte key: %s", strlen(key), detail);
	free(b.p);

	/* GET /api/baseline?series=KEY, percent-encoded, into the baseliner's key buffer */
	char query[8 + 3 * PW_SERIES_KEY_MAX], got[PW_ST_KEY_MAX];
	size_t q = (size_t)snprintf(query, sizeof query, "series=");
	for (const unsigned char *c = (const unsigned char *)key; *c; c++)
		q += (size_t)snprintf(query + q, sizeof query - q, "%%%02X", *c);
	cr_expect_eq(pw_http_query_param(query, "series", got, sizeof got, detail, sizeof detail), PW_OK,
	             "/api/baseline refuses a %zu-byte key: %s", strlen(key), detail);
	cr_expect_str_eq(got, key);
}

/*
 * Sets the run's model and fingerprint, the longest platform and config the grammar admits,
 * repacks it and runs the ingester's door; on acceptance, every key it forms through every reader.
 * Returns the ingester's reason.
 */
static Perfwatch__V1__DlqReason through_all(Perfwatch__V1__RunResult *run, const char *model, const char *hlo)
{
	/* borrowed for the pack: the run's own strings are put back for its free */
	char *own[4] = {run->key->model, run->key->hlo_fingerprint, run->key->platform->name, run->key->config->name};
	run->key->model = (char *)model;
	run->key->hlo_fingerprint = (char *)hlo;
	uint32_t chips;
	int family;
	run->key->platform->name = "ironwood-256";
	cr_assert(pw_ingest_platform_known(run->key->platform->name, &chips, &family));
	run->key->platform->chips = chips;
	run->key->platform->family = (Perfwatch__V1__PlatformFamily)family;
	run->key->config->name = "training.B65536.s16777216.fp16";
	run->key->config->phase = PERFWATCH__V1__PHASE__PHASE_TRAINING;
	run->key->config->batch = 65536;
	run->key->config->seq_len = 16777216;
	run->key->config->dtype = PERFWATCH__V1__DTYPE__DTYPE_FP16;
	wire_buf b = wire_pack(&run->base);
	run->key->model = own[0];
	run->key->hlo_fingerprint = own[1];
	run->key->platform->name = own[2];
	run->key->config->name = own[3];
	pw_ingest_limits lim;
	pw_ingest_limits_default(&lim, NOW_US);
	Perfwatch__V1__RunResult *in = NULL;
	char detail[512];
	Perfwatch__V1__DlqReason r = pw_ingest_decode(b.p, b.n, &lim, &in, detail, sizeof detail);
	free(b.p);
	if (r != R_OK_) {
		cr_log_info("ingester: %s", detail);
		return r;
	}
	for (size_t i = 0; i < in->n_metrics; i++) {
		Perfwatch__V1__SeriesKey k = PERFWATCH__V1__SERIES_KEY__INIT;
		k.model = in->key->model;
		k.hlo_fingerprint = in->key->hlo_fingerprint;
		k.platform = in->key->platform->name;
		k.config = in->key->config->name;
		k.metric = in->metrics[i]->name;
		char key[1024];
		wire_key_join(key, sizeof key, &k);
		cr_expect_lt(strlen(key), (size_t)PW_SERIES_KEY_MAX);
		every_reader_accepts(&k, key);
	}
	perfwatch__v1__run_result__free_unpacked(in, NULL);
	return r;
}

Test(key_limits, every_part_at_its_maximum_passes_every_reader)
{
	Perfwatch__V1__RunResult *run = good_run();
	char model[PW_KEY_MODEL_MAX + 64], hlo[PW_KEY_HLO_FINGERPRINT_MAX + 64];
	uint64_t s = 1;
	/* each glyph throughout, both parts at their maxima */
	for (int g = 0; g < (int)(sizeof glyphs / sizeof glyphs[0]); g++) {
		part_of(model, PW_KEY_MODEL_MAX, g, &s);
		part_of(hlo, PW_KEY_HLO_FINGERPRINT_MAX, g, &s);
		cr_expect_eq(through_all(run, model, hlo), R_OK_, "glyph %d at the maxima refused by the ingester", g);
	}
	/*
	 * mixed glyphs at seeded lengths up to 60 bytes past the maxima: what the ingester takes
	 * passes every reader (through_all), and it takes exactly the parts within their limits
	 */
	s = 20260618;
	for (int i = 0; i < 300; i++) {
		size_t mn = i % 4 == 0 ? PW_KEY_MODEL_MAX : 1 + rnd(&s) % (PW_KEY_MODEL_MAX + 60);
		size_t hn = i % 3 == 0 ? PW_KEY_HLO_FINGERPRINT_MAX : 1 + rnd(&s) % (PW_KEY_HLO_FINGERPRINT_MAX + 60);
		part_of(model, mn, -1, &s);
		part_of(hlo, hn, -1, &s);
		bool within = mn <= PW_KEY_MODEL_MAX && hn <= PW_KEY_HLO_FINGERPRINT_MAX;
		cr_expect_eq(through_all(run, model, hlo), within ? R_OK_ : R_OVERSIZE,
		             "case %d (model %zu, fingerprint %zu bytes)", i, mn, hn);
	}
	perfwatch__v1__run_result__free_unpacked(run, NULL);
}

Test(key_limits, one_byte_more_in_a_part_is_refused_at_the_ingester)
{
	Perfwatch__V1__RunResult *run = good_run();
	char model[PW_KEY_MODEL_MAX + 2], hlo[PW_KEY_HLO_FINGERPRINT_MAX + 2];
	uint64_t s = 1;
	part_of(model, PW_KEY_MODEL_MAX + 1, 0, &s);
	part_of(hlo, PW_KEY_HLO_FINGERPRINT_MAX, 0, &s);
	cr_expect_eq(through_all(run, model, hlo), R_OVERSIZE);
	part_of(model, PW_KEY_MODEL_MAX, 0, &s);
	part_of(hlo, PW_KEY_HLO_FINGERPRINT_MAX + 1, 0, &s);
	cr_expect_eq(through_all(run, model, hlo), R_OVERSIZE);
	perfwatch__v1__run_result__free_unpacked(run, NULL);
}
