/*
 * fuzz_seeds.c: writes the seed corpus of fuzz_wire (bench/fuzz/corpus/
 * fuzz_wire): for each message type fuzz_wire knows, a well-formed message
 * with its selector byte in front. RunResults, FleetChangeEvents, a
 * GateRequest and CompilerCls come from the simulator (the worked example);
 * the other types are filled field by field from their descriptors (every
 * string, number, enum, sub-message and two elements of every list), so the
 * fuzzer starts from messages that reach every field's decoder.
 *
 *   fuzz_seeds SCENARIO.scn OUTDIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/baseline.pb-c.h"
#include "perfwatch/v1/bisect.pb-c.h"
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
       S_TRIAGE, S_DLQ };

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
	printf("fuzz_seeds: %d seeds in %s\n", nwritten, outdir);
	return 0;
}
