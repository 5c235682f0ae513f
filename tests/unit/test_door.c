/*
 * test_door.c: the checks every service makes on input before anything else
 * sees it (common/pw_input.h), the dead letter that always fits perf.dlq.v1
 * (common/pw_dlq.h), and the ingester's door (services/ingester/validate.h)
 * on the hostile runs of issue 19: NUL inside a key string, invalid UTF-8,
 * a 1 MB model name, a 200-byte model name whose series key is too long.
 *
 * Each case fails on the code before its fix: the NUL was cut silently by
 * protobuf-c, the 1 MB run's DeadLetter was over the topic's 1 MB cap, the
 * long series key was accepted by the ingester and dropped by the baseliner.
 */
#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "perfwatch/v1/dlq.pb-c.h"
#include "perfwatch/v1/fleet.pb-c.h"
#include "perfwatch/v1/series.pb-c.h"
#include "pw_dlq.h"
#include "pw_input.h"
#include "sim_model.h"
#include "sim_proto.h"
#include "validate.h"

#define NOW_US 1780000000000000LL

/* The worked example's run, packed as the fleet publishes it; caller frees. */
static Perfwatch__V1__RunResult *good_run(uint8_t **payload, size_t *len)
{
	char path[1024], err[256];
	const char *data = getenv("PW_TEST_DATA");
	snprintf(path, sizeof path, "%s/../../tools/simulator/scenarios/worked-example.scn",
	         data ? data : "tests/data");
	pw_sim_scenario *sc = NULL;
	cr_assert_eq(pw_sim_scenario_load(path, &sc, err, sizeof err), PW_OK, "%s", err);
	pw_sim *w = NULL;
	cr_assert_eq(pw_sim_new(&w, sc, NULL, err, sizeof err), PW_OK, "%s", err);
	pw_sim_scenario_free(sc);
	size_t si;
	cr_assert_eq(pw_sim_series_find(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8", &si), PW_OK);
	pw_sim_build b;
	pw_sim_build_at(&b, PW_SIM_BUILD_RC, "xla-rc-2026-06-17", 7841923);
	pw_sim_run r;
	cr_assert_eq(pw_sim_run_make(w, si, &b, "t1-00412", 3, NOW_US - 86400000000LL, NULL, &r),
	             PW_OK);
	cr_assert_eq(pw_sim_proto_run(w, &r, payload, len), PW_OK);
	pw_sim_free(w);
	Perfwatch__V1__RunResult *run = perfwatch__v1__run_result__unpack(NULL, *len, *payload);
	cr_assert_not_null(run);
	return run;
}

/* Packs run with its model replaced by model. */
static uint8_t *pack_with_model(Perfwatch__V1__RunResult *run, const char *model, size_t *len)
{
	char *keep = run->key->model;
	run->key->model = (char *)model;
	*len = perfwatch__v1__run_result__get_packed_size(run);
	uint8_t *buf = malloc(*len);
	cr_assert_not_null(buf);
	perfwatch__v1__run_result__pack(run, buf);
	run->key->model = keep;
	return buf;
}

/* Replaces the first occurrence of the byte string from[0..n) in buf by to (same length). */
static void patch(uint8_t *buf, size_t len, const char *from, const char *to)
{
	size_t n = strlen(from);
	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(buf + i, from, n) == 0) {
			memcpy(buf + i, to, n);
			return;
		}
	cr_assert_fail("\"%s\" not in the payload", from);
}

Test(door, utf8_checks)
{
	cr_assert(pw_input_utf8_ok("chat-8b", 7));
	cr_assert(pw_input_utf8_ok("caf\xc3\xa9", 5));
	cr_assert_not(pw_input_utf8_ok("chat\0evil", 9));
	cr_assert_not(pw_input_utf8_ok("f-bad\377utf", 9));
	cr_assert_not(pw_input_utf8_ok("\xc0\xaf", 2));     /* overlong '/' */
	cr_assert_not(pw_input_utf8_ok("\xed\xa0\x80", 3)); /* surrogate */
	cr_assert_not(pw_input_utf8_ok("\xc3", 1));         /* cut short */
}

Test(door, nul_inside_a_key_string_is_refused_not_cut)
{
	uint8_t *good;
	size_t glen, len;
	Perfwatch__V1__RunResult *run = good_run(&good, &glen);
	uint8_t *buf = pack_with_model(run, "chat-8bXevil", &len);
	patch(buf, len, "chat-8bXevil", "chat-8b\0evil");
	/* what protobuf-c alone makes of it: the key silently shortened */
	Perfwatch__V1__RunResult *cut = perfwatch__v1__run_result__unpack(NULL, len, buf);
	cr_assert_str_eq(cut->key->model, "chat-8b");
	perfwatch__v1__run_result__free_unpacked(cut, NULL);

	char detail[512];
	pw_ingest_limits lim;
	pw_ingest_limits_default(&lim, NOW_US);
	Perfwatch__V1__RunResult *out = NULL;
	cr_assert_eq(pw_ingest_decode(buf, len, &lim, &out, detail, sizeof detail),
	             PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE);
	cr_assert_null(out);
	cr_assert_str_eq(detail, "field \"key.model\" contains a NUL byte");

	/* the same for a run id: two ids that differ after a NUL no longer collide */
	cr_assert_eq(pw_input_check_wire(&perfwatch__v1__run_result__descriptor, buf, len, detail,
	                                 sizeof detail),
	             PW_ERR_INVALID);
	free(buf);
	perfwatch__v1__run_result__free_unpacked(run, NULL);
	free(good);
}

Test(door, invalid_utf8_in_a_fleet_change_is_refused_at_the_door)
{
	Perfwatch__V1__FleetChangeEvent fc = PERFWATCH__V1__FLEET_CHANGE_EVENT__INIT;
	fc.event_id = "f-bad\377utf";
	fc.occurred_unix_us = NOW_US;
	fc.kind = PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_FIRMWARE;
	char *plat[] = {"v6e-4"};
	fc.platforms = plat;
	fc.n_platforms = 1;
	uint8_t buf[256];
	size_t len = perfwatch__v1__fleet_change_event__pack(&fc, buf);
	char err[512];
	cr_assert_eq(pw_input_check_wire(&perfwatch__v1__fleet_change_event__descriptor, buf, len,
	                                 err, sizeof err),
	             PW_ERR_INVALID);
	cr_assert_str_eq(err, "field \"event_id\" is not valid UTF-8");
	/* a repeated selector with a NUL */
	fc.event_id = "f-ok";
	char *bad[] = {"v6e-4", "cellXone"};
	fc.cells = bad;
	fc.n_cells = 2;
	len = perfwatch__v1__fleet_change_event__pack(&fc, buf);
	patch(buf, len, "cellXone", "cell\0one");
	cr_assert_eq(pw_input_check_wire(&perfwatch__v1__fleet_change_event__descriptor, buf, len,
	                                 err, sizeof err),
	             PW_ERR_INVALID);
	cr_assert_str_eq(err, "field \"cells\" contains a NUL byte");
	/* clean: passes; malformed bytes are left to unpack */
	fc.n_cells = 0;
	len = perfwatch__v1__fleet_change_event__pack(&fc, buf);
	cr_assert_eq(pw_input_check_wire(&perfwatch__v1__fleet_change_event__descriptor, buf, len,
	                                 err, sizeof err),
	             PW_OK);
	cr_assert_eq(pw_input_check_wire(&perfwatch__v1__fleet_change_event__descriptor, buf, len / 2,
	                                 err, sizeof err),
	             PW_OK);
}

Test(door, a_key_part_over_its_one_limit_is_refused_by_the_ingester)
{
	uint8_t *good;
	size_t glen, len;
	Perfwatch__V1__RunResult *run = good_run(&good, &glen);
	char model[201];
	memset(model, 'm', 200);
	model[200] = '\0';
	uint8_t *buf = pack_with_model(run, model, &len);
	char detail[512];
	pw_ingest_limits lim;
	pw_ingest_limits_default(&lim, NOW_US);
	Perfwatch__V1__RunResult *out = NULL;
	cr_assert_eq(pw_ingest_decode(buf, len, &lim, &out, detail, sizeof detail),
	             PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE, "%s", detail);
	cr_assert(strstr(detail, "key.model") && strstr(detail, "over the cap of 100"), "%s", detail);
	free(buf);
	/* PW_KEY_MODEL_MAX bytes fit (pw_limits.h; every reader takes it: test_key_limits.c) */
	model[PW_KEY_MODEL_MAX] = '\0';
	buf = pack_with_model(run, model, &len);
	cr_assert_eq(pw_ingest_decode(buf, len, &lim, &out, detail, sizeof detail), PW_DLQ_NONE,
	             "%s", detail);
	perfwatch__v1__run_result__free_unpacked(out, NULL);
	free(buf);
	perfwatch__v1__run_result__free_unpacked(run, NULL);
	free(good);
}

Test(door, a_dead_letter_of_a_1mb_run_fits_the_topic)
{
	uint8_t *good;
	size_t glen, len;
	Perfwatch__V1__RunResult *run = good_run(&good, &glen);
	size_t big = 1u << 20;
	char *model = malloc(big + 1);
	memset(model, 'm', big);
	model[big] = '\0';
	uint8_t *buf = pack_with_model(run, model, &len);
	cr_assert_gt(len, big);
	char detail[512];
	pw_ingest_limits lim;
	pw_ingest_limits_default(&lim, NOW_US);
	Perfwatch__V1__RunResult *out = NULL;
	pw_dlq_reason r = pw_ingest_decode(buf, len, &lim, &out, detail, sizeof detail);
	cr_assert_eq(r, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE, "%s", detail);

	pw_dlq_source src = {.service = "ingester", .payload_type = "perfwatch.v1.RunResult",
	                     .topic = "perf.runs.v1", .partition = 2, .offset = 12345,
	                     .key = model, .keylen = 4000, .payload = buf, .len = len};
	uint8_t *dl;
	size_t dlen;
	cr_assert_eq(pw_dlq_pack(&src, r, detail, NOW_US, &dl, &dlen), PW_OK);
	/* perf.dlq.v1's messages are capped at 1 MB (message.max.bytes) */
	cr_assert_lt(dlen, PW_DLQ_PAYLOAD_KEEP + 4096);
	Perfwatch__V1__DeadLetter *d = perfwatch__v1__dead_letter__unpack(NULL, dlen, dl);
	cr_assert_not_null(d);
	cr_assert(d->payload_truncated);
	cr_assert_eq(d->original_payload_length, len);
	cr_assert_eq(d->original_payload.len, PW_DLQ_PAYLOAD_KEEP);
	cr_assert_eq(memcmp(d->original_payload.data, buf, PW_DLQ_PAYLOAD_KEEP), 0);
	uint8_t sha[32];
	unsigned sl = 0;
	cr_assert(EVP_Digest(buf, len, sha, &sl, EVP_sha256(), NULL));
	cr_assert_eq(d->original_payload_sha256.len, 32);
	cr_assert_eq(memcmp(d->original_payload_sha256.data, sha, 32), 0);
	cr_assert(d->key_truncated);
	cr_assert_eq(d->original_key_length, 4000);
	cr_assert_eq(d->original_key.len, PW_DLQ_KEY_KEEP);
	cr_assert_eq(d->offset, 12345);
	cr_assert_eq(d->partition, 2);
	cr_assert_str_eq(d->source_topic, "perf.runs.v1");
	perfwatch__v1__dead_letter__free_unpacked(d, NULL);
	free(dl);

	/* a detail that quotes bad input stays valid, capped UTF-8 */
	char longdetail[3000];
	memset(longdetail, 'x', sizeof longdetail);
	memcpy(longdetail, "bad \xff byte ", 11);
	longdetail[sizeof longdetail - 1] = '\0';
	src.len = 10;
	cr_assert_eq(pw_dlq_pack(&src, r, longdetail, NOW_US, &dl, &dlen), PW_OK);
	d = perfwatch__v1__dead_letter__unpack(NULL, dlen, dl);
	cr_assert(d->detail_truncated);
	cr_assert_eq(strlen(d->detail), PW_DLQ_DETAIL_KEEP);
	cr_assert(pw_input_utf8_ok(d->detail, strlen(d->detail)));
	cr_assert_not(d->payload_truncated);
	cr_assert_eq(d->original_payload.len, 10);
	perfwatch__v1__dead_letter__free_unpacked(d, NULL);
	free(dl);

	free(buf);
	free(model);
	perfwatch__v1__run_result__free_unpacked(run, NULL);
	free(good);
}
