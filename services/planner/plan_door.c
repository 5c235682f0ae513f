/*
 * plan_door.c: the planner's door (plan_door.h).
 */
#include "plan_door.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfwatch/v1/compiler.pb-c.h"
#include "perfwatch/v1/plan.pb-c.h"
#include "pw_input.h"
#include "pw_roofline.h"
#include "pw_topics.h"

#define R_MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
#define R_INCONSISTENT PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT

pw_planner_kind pw_planner_topic_kind(const char *topic)
{
	if (!topic)
		return 0;
	if (strcmp(topic, PW_TOPIC_CATALOGUE) == 0)
		return PW_PLANNER_CATALOGUE;
	if (strcmp(topic, PW_TOPIC_CAPACITY) == 0)
		return PW_PLANNER_CAPACITY;
	if (strcmp(topic, PW_TOPIC_SWEEPS) == 0)
		return PW_PLANNER_SWEEP;
	if (strcmp(topic, PW_TOPIC_COMPILER_CLS) == 0)
		return PW_PLANNER_CL;
	return 0;
}

static const ProtobufCMessageDescriptor *desc_of(pw_planner_kind k)
{
	switch (k) {
	case PW_PLANNER_CATALOGUE: return &perfwatch__v1__catalogue_model__descriptor;
	case PW_PLANNER_CAPACITY: return &perfwatch__v1__platform_capacity__descriptor;
	case PW_PLANNER_SWEEP: return &perfwatch__v1__sweep__descriptor;
	case PW_PLANNER_CL: return &perfwatch__v1__compiler_cl__descriptor;
	}
	return NULL;
}

const char *pw_planner_kind_type(pw_planner_kind k)
{
	const ProtobufCMessageDescriptor *d = desc_of(k);
	return d ? d->name : "unknown";
}

int64_t pw_planner_cl_number(const char *cl)
{
	if (!cl || strncmp(cl, "cl/", 3) != 0 || cl[3] < '0' || cl[3] > '9')
		return 0;
	char *end;
	long long v = strtoll(cl + 3, &end, 10);
	return *end == 0 && v > 0 ? v : 0;
}

bool pw_planner_day_parse(const char *s, int32_t *day)
{
	int y, m, d;
	char tail;
	if (!s || strlen(s) != 10 || sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3 || y < 1970 ||
	    y > 2200 || m < 1 || m > 12 || d < 1 || d > 31)
		return false;
	struct tm tm = {.tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d};
	time_t t = timegm(&tm);
	struct tm back;
	if (t == (time_t)-1 || !gmtime_r(&t, &back) || back.tm_mday != d || back.tm_mon != m - 1)
		return false; /* 2026-02-30 */
	*day = (int32_t)(t / 86400);
	return true;
}

static pw_planner_input refuse(Perfwatch__V1__DlqReason *reason, Perfwatch__V1__DlqReason r,
                               char *detail, size_t dlen, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static pw_planner_input refuse(Perfwatch__V1__DlqReason *reason, Perfwatch__V1__DlqReason r,
                               char *detail, size_t dlen, const char *fmt, ...)
{
	*reason = r;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, dlen, fmt, ap);
	va_end(ap);
	return PW_PLANNER_DEAD;
}

/* A name: set, at most PW_PLANNER_NAME_MAX bytes, no '/'. 0 when fine, else the reason. */
static Perfwatch__V1__DlqReason name_bad(const char *s)
{
	if (!s || !s[0])
		return R_MISSING;
	if (strlen(s) > PW_PLANNER_NAME_MAX || strchr(s, '/'))
		return R_INVALID;
	return PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED;
}

#define CHECK_NAME(field, value)                                                                    \
	do {                                                                                            \
		Perfwatch__V1__DlqReason r_ = name_bad(value);                                              \
		if (r_)                                                                                     \
			return refuse(reason, r_, detail, dlen,                                                 \
			              r_ == R_MISSING ? "%s is empty" : "%s is longer than 200 bytes or holds '/'", \
			              field);                                                                   \
	} while (0)

static pw_planner_input catalogue(const Perfwatch__V1__CatalogueModel *m, Perfwatch__V1__DlqReason *reason,
                                  char *detail, size_t dlen)
{
	CHECK_NAME("model", m->model);
	if (!m->hlo_fingerprint || !m->hlo_fingerprint[0])
		return refuse(reason, R_MISSING, detail, dlen, "model \"%s\": hlo_fingerprint is empty", m->model);
	if (!m->tier || (strcmp(m->tier, "top") != 0 && strcmp(m->tier, "tail") != 0))
		return refuse(reason, R_INVALID, detail, dlen, "model \"%s\": tier \"%s\" is not top or tail",
		              m->model, m->tier ? m->tier : "");
	if (!isfinite(m->spend_share) || m->spend_share < 0 || m->spend_share > 1)
		return refuse(reason, R_INVALID, detail, dlen, "model \"%s\": spend_share %g is not in 0..1",
		              m->model, m->spend_share);
	if (m->n_platforms == 0 || m->n_configs == 0)
		return refuse(reason, R_MISSING, detail, dlen, "model \"%s\": no %s", m->model,
		              m->n_platforms == 0 ? "platforms" : "configs");
	if (m->n_platforms > PW_PLANNER_LIST_MAX || m->n_configs > PW_PLANNER_LIST_MAX ||
	    m->n_ops > PW_PLANNER_OPS_MAX)
		return refuse(reason, R_INVALID, detail, dlen,
		              "model \"%s\": %zu platforms, %zu configs, %zu ops exceed the caps (%d, %d, %d)",
		              m->model, m->n_platforms, m->n_configs, m->n_ops, PW_PLANNER_LIST_MAX,
		              PW_PLANNER_LIST_MAX, PW_PLANNER_OPS_MAX);
	for (size_t i = 0; i < m->n_platforms; i++)
		CHECK_NAME("platforms[]", m->platforms[i]);
	for (size_t i = 0; i < m->n_configs; i++) {
		pw_roofline_config c;
		if (pw_roofline_config_parse(m->configs[i], &c) != PW_OK)
			return refuse(reason, R_INVALID, detail, dlen, "model \"%s\": config \"%s\" is not decode.B<n>.s<n>.<dtype> or prefill.s<n>.<dtype>",
			              m->model, m->configs[i]);
	}
	if (m->n_ops == 0)
		return refuse(reason, R_MISSING, detail, dlen, "model \"%s\": no ops (the per-op signature is empty)", m->model);
	for (size_t i = 0; i < m->n_ops; i++) {
		const Perfwatch__V1__CatalogueOp *o = m->ops[i];
		if (!o->op || !o->op[0])
			return refuse(reason, R_MISSING, detail, dlen, "model \"%s\": ops[%zu].op is empty", m->model, i);
		bool known = false;
		for (size_t k = 0; k < m->n_configs && !known; k++)
			known = o->config && strcmp(o->config, m->configs[k]) == 0;
		if (!known)
			return refuse(reason, R_INCONSISTENT, detail, dlen, "model \"%s\": ops[%zu].config \"%s\" is not one of its configs",
			              m->model, i, o->config ? o->config : "");
		if (o->calls == 0 || !isfinite(o->bytes) || !isfinite(o->flops) || o->bytes < 0 || o->flops < 0)
			return refuse(reason, R_INVALID, detail, dlen,
			              "model \"%s\": ops[%zu] \"%s\" has calls %u, bytes %g, flops %g (calls > 0, finite costs >= 0)",
			              m->model, i, o->op, o->calls, o->bytes, o->flops);
	}
	return PW_PLANNER_ACCEPT;
}

static pw_planner_input capacity(const Perfwatch__V1__PlatformCapacity *c, Perfwatch__V1__DlqReason *reason,
                                 char *detail, size_t dlen)
{
	CHECK_NAME("platform", c->platform);
	if (!isfinite(c->chip_hours_per_week) || c->chip_hours_per_week <= 0 || c->chip_hours_per_week > 1e8)
		return refuse(reason, R_INVALID, detail, dlen, "platform \"%s\": chip_hours_per_week %g is not in (0, 1e8]",
		              c->platform, c->chip_hours_per_week);
	if (!isfinite(c->sigma_pct) || c->sigma_pct < 0 || c->sigma_pct > 100)
		return refuse(reason, R_INVALID, detail, dlen, "platform \"%s\": sigma_pct %g is not in 0..100",
		              c->platform, c->sigma_pct);
	return PW_PLANNER_ACCEPT;
}

static pw_planner_input sweep(const Perfwatch__V1__Sweep *s, Perfwatch__V1__DlqReason *reason, char *detail,
                              size_t dlen)
{
	CHECK_NAME("sweep_id", s->sweep_id);
	if (s->kind != PERFWATCH__V1__SWEEP_KIND__SWEEP_KIND_NIGHTLY && s->kind != PERFWATCH__V1__SWEEP_KIND__SWEEP_KIND_RC)
		return refuse(reason, s->kind == 0 ? R_MISSING : R_INVALID, detail, dlen,
		              "sweep \"%s\": kind %d is not nightly or rc", s->sweep_id, (int)s->kind);
	if (!s->release || !s->release[0])
		return refuse(reason, R_MISSING, detail, dlen, "sweep \"%s\": release is empty", s->sweep_id);
	if (strlen(s->release) > PW_PLANNER_NAME_MAX)
		return refuse(reason, R_INVALID, detail, dlen, "sweep \"%s\": release is longer than 200 bytes", s->sweep_id);
	if (pw_planner_cl_number(s->cl_head) <= 0)
		return refuse(reason, s->cl_head && s->cl_head[0] ? R_INVALID : R_MISSING, detail, dlen,
		              "sweep \"%s\": cl_head \"%s\" is not cl/N", s->sweep_id, s->cl_head ? s->cl_head : "");
	int32_t day;
	if (!pw_planner_day_parse(s->day, &day))
		return refuse(reason, s->day && s->day[0] ? R_INVALID : R_MISSING, detail, dlen,
		              "sweep \"%s\": day \"%s\" is not a date YYYY-MM-DD in 1970..2200", s->sweep_id,
		              s->day ? s->day : "");
	return PW_PLANNER_ACCEPT;
}

static pw_planner_input cl(const Perfwatch__V1__CompilerCl *c, Perfwatch__V1__DlqReason *reason, char *detail,
                           size_t dlen)
{
	if (c->perf_checked_by && strcmp(c->perf_checked_by, "planner") == 0)
		return PW_PLANNER_IGNORE;
	if (!c->cl || !c->cl[0])
		return refuse(reason, R_MISSING, detail, dlen, "cl is empty");
	int64_t n = pw_planner_cl_number(c->cl);
	if (n <= 0)
		return refuse(reason, R_INVALID, detail, dlen, "cl \"%.200s\" is not cl/N", c->cl);
	if (c->cl_number != n)
		return refuse(reason, R_INCONSISTENT, detail, dlen, "cl \"%s\" and cl_number %lld disagree", c->cl,
		              (long long)c->cl_number);
	if (c->n_op_costs > PW_PLANNER_COSTS_MAX)
		return refuse(reason, R_INVALID, detail, dlen, "cl \"%s\": %zu op costs exceed the cap %d", c->cl,
		              c->n_op_costs, PW_PLANNER_COSTS_MAX);
	for (size_t i = 0; i < c->n_op_costs; i++) {
		const Perfwatch__V1__ClOpCost *o = c->op_costs[i];
		if (!o->op || !o->op[0])
			return refuse(reason, R_MISSING, detail, dlen, "cl \"%s\": op_costs[%zu].op is empty", c->cl, i);
		if (o->phase && o->phase[0] && strcmp(o->phase, "decode") != 0 && strcmp(o->phase, "prefill") != 0)
			return refuse(reason, R_INVALID, detail, dlen, "cl \"%s\": op_costs[%zu].phase \"%s\" is not decode, prefill or empty",
			              c->cl, i, o->phase);
		if (!isfinite(o->bytes_factor) || !isfinite(o->flops_factor) || o->bytes_factor <= 0 ||
		    o->flops_factor <= 0 || o->bytes_factor > 1e6 || o->flops_factor > 1e6)
			return refuse(reason, R_INVALID, detail, dlen,
			              "cl \"%s\": op_costs[%zu] \"%s\" has factors %g, %g (each in (0, 1e6])", c->cl, i,
			              o->op, o->bytes_factor, o->flops_factor);
		if (o->platform && strlen(o->platform) > PW_PLANNER_NAME_MAX)
			return refuse(reason, R_INVALID, detail, dlen, "cl \"%s\": op_costs[%zu].platform is longer than 200 bytes", c->cl, i);
	}
	return PW_PLANNER_ACCEPT;
}

pw_planner_input pw_planner_door(pw_planner_kind kind, const void *payload, size_t len,
                                 ProtobufCMessage **out, Perfwatch__V1__DlqReason *reason,
                                 char *detail, size_t dlen)
{
	*out = NULL;
	*reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED;
	if (dlen)
		detail[0] = 0;
	const ProtobufCMessageDescriptor *d = desc_of(kind);
	if (!d)
		return refuse(reason, R_INVALID, detail, dlen, "not a planner input");
	ProtobufCMessage *m = NULL;
	*reason = pw_input_decode(d, payload, len, &m, detail, dlen);
	if (*reason != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return PW_PLANNER_DEAD;
	pw_planner_input r = PW_PLANNER_DEAD;
	switch (kind) {
	case PW_PLANNER_CATALOGUE: r = catalogue((const void *)m, reason, detail, dlen); break;
	case PW_PLANNER_CAPACITY: r = capacity((const void *)m, reason, detail, dlen); break;
	case PW_PLANNER_SWEEP: r = sweep((const void *)m, reason, detail, dlen); break;
	case PW_PLANNER_CL: r = cl((const void *)m, reason, detail, dlen); break;
	}
	if (r == PW_PLANNER_DEAD) {
		protobuf_c_message_free_unpacked(m, NULL);
		return r;
	}
	*out = m;
	return r;
}
