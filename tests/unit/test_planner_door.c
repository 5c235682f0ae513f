/*
 * test_planner_door.c: the planner's door (services/planner/plan_door.h,
 * pw_planner_door) on a table of hostile payloads per input — catalogue
 * entries, capacity, sweeps, CLs with op costs: the DlqReason and a detail
 * substring each refused one must get; what must pass, and the planner's own
 * republished CLs, which it lets by.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfwatch/v1/compiler.pb-c.h"
#include "perfwatch/v1/plan.pb-c.h"
#include "plan_door.h"
#include "wire_build.h"

#define R_OK_ PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED
#define R_DECODE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED
#define R_MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
#define R_INCONS PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT

typedef struct cat_parts {
	Perfwatch__V1__CatalogueModel m;
	Perfwatch__V1__CatalogueOp op[2], *ops[2];
	char *platforms[2], *configs[2];
} cat_parts;

typedef void (*cat_edit)(cat_parts *q);

static char long_name[300];

static wire_buf pack_cat(cat_edit edit)
{
	static cat_parts q;
	memset(&q, 0, sizeof q);
	perfwatch__v1__catalogue_model__init(&q.m);
	for (int i = 0; i < 2; i++) {
		perfwatch__v1__catalogue_op__init(&q.op[i]);
		q.ops[i] = &q.op[i];
	}
	q.op[0] = (Perfwatch__V1__CatalogueOp)PERFWATCH__V1__CATALOGUE_OP__INIT;
	q.op[0].op = "gemm";
	q.op[0].shape = "d4096";
	q.op[0].config = "decode.B64.s2048.int8";
	q.op[0].calls = 32;
	q.op[0].bytes = 250e6;
	q.op[0].flops = 32e9;
	q.op[1] = q.op[0];
	q.op[1].op = "attention_softmax_fused";
	q.op[1].shape = "h32kv8d128";
	q.op[1].config = "prefill.s8192.bf16";
	q.platforms[0] = "v6e-4";
	q.platforms[1] = "v5e-8";
	q.configs[0] = "decode.B64.s2048.int8";
	q.configs[1] = "prefill.s8192.bf16";
	q.m.model = "chat-8b";
	q.m.family = "chat";
	q.m.tier = "top";
	q.m.spend_share = 0.17;
	q.m.n_platforms = 2;
	q.m.platforms = q.platforms;
	q.m.n_configs = 2;
	q.m.configs = q.configs;
	q.m.hlo_fingerprint = "hlo:9f31c2ab";
	q.m.n_ops = 2;
	q.m.ops = q.ops;
	if (edit)
		edit(&q);
	wire_buf b = {0};
	b.n = perfwatch__v1__catalogue_model__get_packed_size(&q.m);
	b.p = malloc(b.n + 1);
	perfwatch__v1__catalogue_model__pack(&q.m, b.p);
	return b;
}

#define CEDIT(fn, stmt) \
	static void fn(cat_parts *q) { stmt; }
CEDIT(c_no_model, q->m.model = "")
CEDIT(c_slash_model, q->m.model = "chat/8b")
CEDIT(c_long_model, q->m.model = long_name)
CEDIT(c_no_fp, q->m.hlo_fingerprint = "")
CEDIT(c_bad_tier, q->m.tier = "gold")
CEDIT(c_spend_nan, q->m.spend_share = NAN)
CEDIT(c_spend_neg, q->m.spend_share = -0.1)
CEDIT(c_spend_big, q->m.spend_share = 1.5)
CEDIT(c_spend_inf, q->m.spend_share = INFINITY)
CEDIT(c_no_platforms, q->m.n_platforms = 0)
CEDIT(c_no_configs, q->m.n_configs = 0)
CEDIT(c_empty_platform, q->platforms[1] = "")
CEDIT(c_bad_config, (q->configs[1] = "train.s10.bf16", q->op[1].config = "train.s10.bf16"))
CEDIT(c_sql_config, q->configs[0] = "decode'; DROP TABLE perfwatch.plans;--")
CEDIT(c_no_ops, q->m.n_ops = 0)
CEDIT(c_op_empty, q->op[0].op = "")
CEDIT(c_op_config, q->op[0].config = "decode.B8.s2048.int8")
CEDIT(c_op_calls, q->op[0].calls = 0)
CEDIT(c_op_bytes_nan, q->op[1].bytes = NAN)
CEDIT(c_op_flops_neg, q->op[1].flops = -1)
CEDIT(c_op_bytes_inf, q->op[0].bytes = INFINITY)
CEDIT(c_many_ops, q->m.n_ops = PW_PLANNER_OPS_MAX + 1)
CEDIT(c_tail, (q->m.tier = "tail", q->m.spend_share = 0))

static void test_cat(cat_edit e, pw_planner_input want, Perfwatch__V1__DlqReason reason, const char *detail)
{
	static Perfwatch__V1__CatalogueOp many[PW_PLANNER_OPS_MAX + 1], *pmany[PW_PLANNER_OPS_MAX + 1];
	wire_buf b;
	if (e == c_many_ops) {
		/* 4,097 ops: packed from a real array */
		cat_parts *dummy = NULL;
		(void)dummy;
		for (size_t i = 0; i <= PW_PLANNER_OPS_MAX; i++) {
			many[i] = (Perfwatch__V1__CatalogueOp)PERFWATCH__V1__CATALOGUE_OP__INIT;
			many[i].op = "gemm";
			many[i].config = "decode.B64.s2048.int8";
			many[i].calls = 1;
			pmany[i] = &many[i];
		}
		Perfwatch__V1__CatalogueModel m = PERFWATCH__V1__CATALOGUE_MODEL__INIT;
		char *pl[] = {"v6e-4"}, *cf[] = {"decode.B64.s2048.int8"};
		m.model = "chat-8b";
		m.tier = "top";
		m.hlo_fingerprint = "hlo:1";
		m.n_platforms = 1;
		m.platforms = pl;
		m.n_configs = 1;
		m.configs = cf;
		m.n_ops = PW_PLANNER_OPS_MAX + 1;
		m.ops = pmany;
		b.n = perfwatch__v1__catalogue_model__get_packed_size(&m);
		b.p = malloc(b.n);
		perfwatch__v1__catalogue_model__pack(&m, b.p);
	} else {
		b = pack_cat(e);
	}
	ProtobufCMessage *out;
	Perfwatch__V1__DlqReason r;
	char d[512];
	pw_planner_input in = pw_planner_door(PW_PLANNER_CATALOGUE, b.p, b.n, &out, &r, d, sizeof d);
	cr_assert_eq(in, want, "got %d (%s: %s)", in, wire_reason_name(r), d);
	if (want == PW_PLANNER_DEAD) {
		cr_assert_eq(r, reason, "reason %s, detail \"%s\"", wire_reason_name(r), d);
		cr_assert(strstr(d, detail), "detail \"%s\" lacks \"%s\"", d, detail);
		cr_assert_null(out);
	} else {
		cr_assert_not_null(out);
		protobuf_c_message_free_unpacked(out, NULL);
	}
	free(b.p);
}

Test(planner_door, catalogue_table)
{
	memset(long_name, 'm', sizeof long_name - 1);
	struct {
		cat_edit e;
		pw_planner_input want;
		Perfwatch__V1__DlqReason r;
		const char *detail;
	} t[] = {
		{NULL, PW_PLANNER_ACCEPT, R_OK_, ""},
		{c_tail, PW_PLANNER_ACCEPT, R_OK_, ""},
		{c_no_model, PW_PLANNER_DEAD, R_MISSING, "model is empty"},
		{c_slash_model, PW_PLANNER_DEAD, R_INVALID, "model is longer"},
		{c_long_model, PW_PLANNER_DEAD, R_INVALID, "model is longer"},
		{c_no_fp, PW_PLANNER_DEAD, R_MISSING, "hlo_fingerprint"},
		{c_bad_tier, PW_PLANNER_DEAD, R_INVALID, "tier \"gold\""},
		{c_spend_nan, PW_PLANNER_DEAD, R_INVALID, "spend_share nan"},
		{c_spend_neg, PW_PLANNER_DEAD, R_INVALID, "spend_share -0.1"},
		{c_spend_big, PW_PLANNER_DEAD, R_INVALID, "spend_share 1.5"},
		{c_spend_inf, PW_PLANNER_DEAD, R_INVALID, "spend_share inf"},
		{c_no_platforms, PW_PLANNER_DEAD, R_MISSING, "no platforms"},
		{c_no_configs, PW_PLANNER_DEAD, R_MISSING, "no configs"},
		{c_empty_platform, PW_PLANNER_DEAD, R_MISSING, "platforms[] is empty"},
		{c_bad_config, PW_PLANNER_DEAD, R_INVALID, "config \"train.s10.bf16\""},
		{c_sql_config, PW_PLANNER_DEAD, R_INVALID, "DROP TABLE"},
		{c_no_ops, PW_PLANNER_DEAD, R_MISSING, "no ops"},
		{c_op_empty, PW_PLANNER_DEAD, R_MISSING, "ops[0].op is empty"},
		{c_op_config, PW_PLANNER_DEAD, R_INCONS, "ops[0].config \"decode.B8.s2048.int8\""},
		{c_op_calls, PW_PLANNER_DEAD, R_INVALID, "calls 0"},
		{c_op_bytes_nan, PW_PLANNER_DEAD, R_INVALID, "bytes nan"},
		{c_op_flops_neg, PW_PLANNER_DEAD, R_INVALID, "flops -1"},
		{c_op_bytes_inf, PW_PLANNER_DEAD, R_INVALID, "bytes inf"},
		{c_many_ops, PW_PLANNER_DEAD, R_INVALID, "4097 ops exceed"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		test_cat(t[i].e, t[i].want, t[i].r, t[i].detail);
}

/* raw bytes: not a message, a NUL in a string, invalid UTF-8, a length past the end */
Test(planner_door, wire_damage_every_kind)
{
	static const pw_planner_kind kinds[] = {PW_PLANNER_CATALOGUE, PW_PLANNER_CAPACITY, PW_PLANNER_SWEEP, PW_PLANNER_CL};
	for (size_t k = 0; k < 4; k++) {
		ProtobufCMessage *out;
		Perfwatch__V1__DlqReason r;
		char d[512];
		/* an empty payload is an empty message: its key is missing */
		cr_assert_eq(pw_planner_door(kinds[k], "", 0, &out, &r, d, sizeof d), PW_PLANNER_DEAD);
		cr_assert_eq(r, R_MISSING, "%s: %s", wire_reason_name(r), d);
		wire_buf b = {0};
		wire_past_end(&b, 1);
		cr_assert_eq(pw_planner_door(kinds[k], b.p, b.n, &out, &r, d, sizeof d), PW_PLANNER_DEAD);
		cr_assert_eq(r, R_DECODE, "%s", d);
		free(b.p);
		b = (wire_buf){0};
		wire_ld(&b, 1, "chat\0-8b", 8);
		cr_assert_eq(pw_planner_door(kinds[k], b.p, b.n, &out, &r, d, sizeof d), PW_PLANNER_DEAD);
		cr_assert_eq(r, R_INVALID, "%s", d);
		cr_assert(strstr(d, "NUL"), "%s", d);
		free(b.p);
		b = (wire_buf){0};
		wire_ld(&b, 1, "chat\xff\xfe", 6);
		cr_assert_eq(pw_planner_door(kinds[k], b.p, b.n, &out, &r, d, sizeof d), PW_PLANNER_DEAD);
		cr_assert_eq(r, R_INVALID, "%s", d);
		free(b.p);
	}
}

static pw_planner_input door_cap(const char *platform, double ch, double sigma, Perfwatch__V1__DlqReason *r,
                                 char *d, size_t dl)
{
	Perfwatch__V1__PlatformCapacity c = PERFWATCH__V1__PLATFORM_CAPACITY__INIT;
	c.platform = (char *)platform;
	c.chip_hours_per_week = ch;
	c.sigma_pct = sigma;
	uint8_t buf[512];
	size_t n = perfwatch__v1__platform_capacity__pack(&c, buf);
	ProtobufCMessage *out;
	pw_planner_input in = pw_planner_door(PW_PLANNER_CAPACITY, buf, n, &out, r, d, dl);
	if (out)
		protobuf_c_message_free_unpacked(out, NULL);
	return in;
}

Test(planner_door, capacity_table)
{
	struct {
		const char *platform;
		double ch, sigma;
		pw_planner_input want;
		Perfwatch__V1__DlqReason r;
		const char *detail;
	} t[] = {
		{"v6e-4", 1500, 0, PW_PLANNER_ACCEPT, R_OK_, ""},
		{"b200-8", 900, 2, PW_PLANNER_ACCEPT, R_OK_, ""},
		{"", 1500, 0, PW_PLANNER_DEAD, R_MISSING, "platform is empty"},
		{"v6e/4", 1500, 0, PW_PLANNER_DEAD, R_INVALID, "platform is longer"},
		{"v6e-4", 0, 0, PW_PLANNER_DEAD, R_INVALID, "chip_hours_per_week 0"},
		{"v6e-4", -10, 0, PW_PLANNER_DEAD, R_INVALID, "chip_hours_per_week -10"},
		{"v6e-4", NAN, 0, PW_PLANNER_DEAD, R_INVALID, "chip_hours_per_week nan"},
		{"v6e-4", INFINITY, 0, PW_PLANNER_DEAD, R_INVALID, "chip_hours_per_week inf"},
		{"v6e-4", 1e9, 0, PW_PLANNER_DEAD, R_INVALID, "chip_hours_per_week 1e+09"},
		{"v6e-4", 1500, -1, PW_PLANNER_DEAD, R_INVALID, "sigma_pct -1"},
		{"v6e-4", 1500, NAN, PW_PLANNER_DEAD, R_INVALID, "sigma_pct nan"},
		{"v6e-4", 1500, 1000, PW_PLANNER_DEAD, R_INVALID, "sigma_pct 1000"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		Perfwatch__V1__DlqReason r;
		char d[512];
		pw_planner_input in = door_cap(t[i].platform, t[i].ch, t[i].sigma, &r, d, sizeof d);
		cr_assert_eq(in, t[i].want, "case %zu: %s", i, d);
		if (in == PW_PLANNER_DEAD) {
			cr_assert_eq(r, t[i].r, "case %zu: %s", i, wire_reason_name(r));
			cr_assert(strstr(d, t[i].detail), "case %zu: \"%s\" lacks \"%s\"", i, d, t[i].detail);
		}
	}
}

Test(planner_door, sweep_table)
{
	struct {
		const char *id;
		int kind;
		const char *release, *head, *day;
		pw_planner_input want;
		Perfwatch__V1__DlqReason r;
		const char *detail;
	} t[] = {
		{"rc-2026-06-15", 2, "xla-rc-2026-06-15", "cl/7841833", "2026-06-15", PW_PLANNER_ACCEPT, R_OK_, ""},
		{"nightly-2026-06-17", 1, "xla-nightly", "cl/7841923", "2026-06-17", PW_PLANNER_ACCEPT, R_OK_, ""},
		{"", 1, "x", "cl/1", "2026-06-17", PW_PLANNER_DEAD, R_MISSING, "sweep_id is empty"},
		{"s", 0, "x", "cl/1", "2026-06-17", PW_PLANNER_DEAD, R_MISSING, "kind 0"},
		{"s", 9, "x", "cl/1", "2026-06-17", PW_PLANNER_DEAD, R_INVALID, "kind 9"},
		{"s", 1, "", "cl/1", "2026-06-17", PW_PLANNER_DEAD, R_MISSING, "release is empty"},
		{"s", 1, "x", "", "2026-06-17", PW_PLANNER_DEAD, R_MISSING, "cl_head"},
		{"s", 1, "x", "7841923", "2026-06-17", PW_PLANNER_DEAD, R_INVALID, "is not cl/N"},
		{"s", 1, "x", "cl/-5", "2026-06-17", PW_PLANNER_DEAD, R_INVALID, "is not cl/N"},
		{"s", 1, "x", "cl/12x", "2026-06-17", PW_PLANNER_DEAD, R_INVALID, "is not cl/N"},
		{"s", 1, "x", "cl/1", "", PW_PLANNER_DEAD, R_MISSING, "day"},
		{"s", 1, "x", "cl/1", "2026-02-30", PW_PLANNER_DEAD, R_INVALID, "2026-02-30"},
		{"s", 1, "x", "cl/1", "17/06/2026", PW_PLANNER_DEAD, R_INVALID, "is not a date"},
		{"s", 1, "x", "cl/1", "1969-12-31", PW_PLANNER_DEAD, R_INVALID, "is not a date"},
		{"s", 1, "x", "cl/1", "2026-06-17'--", PW_PLANNER_DEAD, R_INVALID, "is not a date"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		Perfwatch__V1__Sweep s = PERFWATCH__V1__SWEEP__INIT;
		s.sweep_id = (char *)t[i].id;
		s.kind = (Perfwatch__V1__SweepKind)t[i].kind;
		s.release = (char *)t[i].release;
		s.cl_head = (char *)t[i].head;
		s.day = (char *)t[i].day;
		uint8_t buf[1024];
		size_t n = perfwatch__v1__sweep__pack(&s, buf);
		ProtobufCMessage *out;
		Perfwatch__V1__DlqReason r;
		char d[512];
		pw_planner_input in = pw_planner_door(PW_PLANNER_SWEEP, buf, n, &out, &r, d, sizeof d);
		cr_assert_eq(in, t[i].want, "case %zu: %s", i, d);
		if (in == PW_PLANNER_DEAD) {
			cr_assert_eq(r, t[i].r, "case %zu: %s", i, wire_reason_name(r));
			cr_assert(strstr(d, t[i].detail), "case %zu: \"%s\" lacks \"%s\"", i, d, t[i].detail);
		} else {
			protobuf_c_message_free_unpacked(out, NULL);
		}
	}
}

Test(planner_door, cl_table)
{
	struct {
		const char *cl;
		int64_t n;
		const char *op, *phase;
		double bf, ff;
		const char *checked_by;
		pw_planner_input want;
		Perfwatch__V1__DlqReason r;
		const char *detail;
	} t[] = {
		{"cl/7841917", 7841917, "attention_softmax_fused", "decode", 1.125, 1, "", PW_PLANNER_ACCEPT, R_OK_, ""},
		{"cl/7841917", 7841917, NULL, NULL, 0, 0, "", PW_PLANNER_ACCEPT, R_OK_, ""},
		{"cl/7841917", 7841917, "gemm", "", 1, 1, "planner", PW_PLANNER_IGNORE, R_OK_, ""},
		{"", 0, NULL, NULL, 0, 0, "", PW_PLANNER_DEAD, R_MISSING, "cl is empty"},
		{"7841917", 7841917, NULL, NULL, 0, 0, "", PW_PLANNER_DEAD, R_INVALID, "is not cl/N"},
		{"cl/7841917", 7841916, NULL, NULL, 0, 0, "", PW_PLANNER_DEAD, R_INCONS, "disagree"},
		{"cl/1", 1, "", "", 1, 1, "", PW_PLANNER_DEAD, R_MISSING, "op_costs[0].op is empty"},
		{"cl/1", 1, "gemm", "train", 1, 1, "", PW_PLANNER_DEAD, R_INVALID, "phase \"train\""},
		{"cl/1", 1, "gemm", "", 0, 1, "", PW_PLANNER_DEAD, R_INVALID, "factors 0, 1"},
		{"cl/1", 1, "gemm", "", -1, 1, "", PW_PLANNER_DEAD, R_INVALID, "factors -1"},
		{"cl/1", 1, "gemm", "", 1, NAN, "", PW_PLANNER_DEAD, R_INVALID, "factors 1, nan"},
		{"cl/1", 1, "gemm", "", INFINITY, 1, "", PW_PLANNER_DEAD, R_INVALID, "factors inf"},
		{"cl/1", 1, "gemm", "", 1e7, 1, "", PW_PLANNER_DEAD, R_INVALID, "factors 1e+07"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		Perfwatch__V1__CompilerCl c = PERFWATCH__V1__COMPILER_CL__INIT;
		Perfwatch__V1__ClOpCost oc = PERFWATCH__V1__CL_OP_COST__INIT, *poc = &oc;
		c.cl = (char *)t[i].cl;
		c.cl_number = t[i].n;
		c.perf_checked_by = (char *)t[i].checked_by;
		if (t[i].op) {
			oc.op = (char *)t[i].op;
			oc.phase = (char *)t[i].phase;
			oc.bytes_factor = t[i].bf;
			oc.flops_factor = t[i].ff;
			c.n_op_costs = 1;
			c.op_costs = &poc;
		}
		uint8_t buf[1024];
		size_t n = perfwatch__v1__compiler_cl__pack(&c, buf);
		ProtobufCMessage *out;
		Perfwatch__V1__DlqReason r;
		char d[512];
		pw_planner_input in = pw_planner_door(PW_PLANNER_CL, buf, n, &out, &r, d, sizeof d);
		cr_assert_eq(in, t[i].want, "case %zu: %s", i, d);
		if (in == PW_PLANNER_DEAD) {
			cr_assert_eq(r, t[i].r, "case %zu: %s", i, wire_reason_name(r));
			cr_assert(strstr(d, t[i].detail), "case %zu: \"%s\" lacks \"%s\"", i, d, t[i].detail);
		} else {
			protobuf_c_message_free_unpacked(out, NULL);
		}
	}
}

Test(planner_door, topics_and_days)
{
	cr_assert_eq(pw_planner_topic_kind("perf.catalogue.v1"), PW_PLANNER_CATALOGUE);
	cr_assert_eq(pw_planner_topic_kind("perf.sweeps.v1"), PW_PLANNER_SWEEP);
	cr_assert_eq(pw_planner_topic_kind("perf.runs.v1"), 0);
	cr_assert_str_eq(pw_planner_kind_type(PW_PLANNER_CAPACITY), "perfwatch.v1.PlatformCapacity");
	int32_t d;
	cr_assert(pw_planner_day_parse("2026-06-17", &d));
	cr_assert_eq(d, 20621);
	cr_assert(pw_planner_day_parse("2024-02-29", &d));
	cr_assert(!pw_planner_day_parse("2026-13-01", &d));
	cr_assert_eq(pw_planner_cl_number("cl/7841917"), 7841917);
	cr_assert_eq(pw_planner_cl_number("cl/"), 0);
}
