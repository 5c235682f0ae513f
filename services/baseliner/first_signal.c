/*
 * first_signal.c: the cause of an outlier and the fleet-wide tracker. See
 * first_signal.h.
 */
#include "first_signal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pw_signal_cause_name(pw_signal_cause c)
{
	switch (c) {
	case PW_SIGNAL_FLEET_CHANGE: return "fleet_change";
	case PW_SIGNAL_HARNESS_CHANGE: return "harness_change";
	case PW_SIGNAL_FLEET_WIDE: return "fleet_wide";
	case PW_SIGNAL_NONE_FOUND: return "none_found";
	case PW_SIGNAL_UNSPECIFIED: break;
	}
	return "";
}

bool pw_signal_cause_is_infra(pw_signal_cause c)
{
	return c == PW_SIGNAL_FLEET_CHANGE || c == PW_SIGNAL_HARNESS_CHANGE ||
	       c == PW_SIGNAL_FLEET_WIDE;
}

bool pw_signal_env_changed(const pw_point_env *prev, const pw_point_env *cur, char *out,
                           size_t outlen)
{
	if (outlen)
		out[0] = '\0';
	if (!prev || !cur)
		return false;
	/* not the chip set: a series rotates over >= 3 of them by design (§4.2) */
	const struct {
		const char *name, *a, *b;
	} f[] = {
		{"cell", prev->cell, cur->cell},
		{"firmware", prev->firmware, cur->firmware},
		{"harness", prev->harness_version, cur->harness_version},
	};
	size_t used = 0;
	bool any = false;
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		/* an unknown value on either side is not evidence of a change */
		if (!f[i].a[0] || !f[i].b[0] || strcmp(f[i].a, f[i].b) == 0)
			continue;
		any = true;
		if (used < outlen) {
			int w = snprintf(out + used, outlen - used, "%s%s %s -> %s", used ? ", " : "",
			                 f[i].name, f[i].a, f[i].b);
			if (w > 0)
				used += (size_t)w;
		}
	}
	return any;
}

void pw_fleet_wide_params_default(pw_fleet_wide_params *p)
{
	p->min_models = 3;
	p->window_us = 6LL * 3600 * 1000000;
	p->cap = 4096;
}

pw_fleet_wide *pw_fleet_wide_new(const pw_fleet_wide_params *p)
{
	if (!p || p->cap == 0 || p->min_models == 0 || p->window_us < 0)
		return NULL;
	pw_fleet_wide *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->p = *p;
	t->ring = calloc(p->cap, sizeof *t->ring);
	if (!t->ring) {
		free(t);
		return NULL;
	}
	return t;
}

void pw_fleet_wide_free(pw_fleet_wide *t)
{
	if (!t)
		return;
	free(t->ring);
	free(t);
}

static bool within(int64_t a, int64_t b, int64_t w)
{
	return (a > b ? a - b : b - a) <= w;
}

size_t pw_fleet_wide_add(pw_fleet_wide *t, const pw_point_env *env, const char *model,
                         int64_t ts_us, uint64_t tag, uint64_t *newly, size_t cap,
                         size_t *nnewly)
{
	*nnewly = 0;
	pw_fw_entry *e = &t->ring[t->head];
	memset(e, 0, sizeof *e);
	snprintf(e->group, sizeof e->group, "%s|%s", env->platform, env->chip_set);
	snprintf(e->model, sizeof e->model, "%s", model ? model : "");
	e->ts_us = ts_us;
	e->tag = tag;
	t->head = (t->head + 1) % t->p.cap;
	if (t->n < t->p.cap)
		t->n++;

	/* distinct models of the group within the window: O(n²) over a small ring
	 * slice is fine at the outlier rate (a handful a night) */
	size_t distinct = 0;
	for (size_t i = 0; i < t->n; i++) {
		const pw_fw_entry *a = &t->ring[i];
		if (strcmp(a->group, e->group) != 0 || !within(a->ts_us, ts_us, t->p.window_us))
			continue;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++) {
			const pw_fw_entry *b = &t->ring[j];
			seen = strcmp(b->group, e->group) == 0 && within(b->ts_us, ts_us, t->p.window_us) &&
			       strcmp(b->model, a->model) == 0;
		}
		distinct += !seen;
	}
	if (distinct < t->p.min_models)
		return distinct;
	for (size_t i = 0; i < t->n; i++) {
		pw_fw_entry *a = &t->ring[i];
		if (a->fleet_wide || strcmp(a->group, e->group) != 0 ||
		    !within(a->ts_us, ts_us, t->p.window_us))
			continue;
		a->fleet_wide = true;
		if (*nnewly < cap)
			newly[(*nnewly)++] = a->tag;
	}
	return distinct;
}
