/*
 * sim_scenario.c: the parser of simulator scenario files (*.scn).
 *
 * The format is one directive a line, `directive [value ...] [key=value ...]`,
 * '#' to the end of the line a comment, values with spaces in double quotes;
 * scenarios/README.md is its reference. The parser only fills a
 * pw_sim_scenario (sim_model.h); pw_sim_new turns that into a world. Every
 * error names the file and line.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_model.h"

#define MAX_TOKENS 48
#define US_PER_DAY (86400LL * 1000000LL)

typedef struct tok {
	char *key;   /* NULL for a bare word */
	char *value;
} tok;

typedef struct parser {
	pw_sim_scenario *sc;
	const char *file;
	int line;
	bool have_start;
	char *errbuf;
	size_t errlen;
} parser;

#define PERR(ps, ...)                                                                   \
	do {                                                                             \
		char m_[256];                                                            \
		snprintf(m_, sizeof m_, __VA_ARGS__);                                    \
		return pw_fail(PW_ERR_INVALID, (ps)->errbuf, (ps)->errlen, "%s:%d: %s",  \
		               (ps)->file, (ps)->line, m_);                              \
	} while (0)

/* Appends one zeroed element to *arr (elements of size sz); returns it or NULL. */
static void *push(void *arrp, size_t *n, size_t sz)
{
	void **arr = arrp;
	void *na = realloc(*arr, (*n + 1) * sz);
	if (!na)
		return NULL;
	*arr = na;
	void *e = (char *)na + *n * sz;
	memset(e, 0, sz);
	(*n)++;
	return e;
}

/* Splits line in place into tokens; returns the count or -1 on an unterminated quote. */
static int tokenize(char *line, tok *t, int max)
{
	int n = 0;
	char *p = line;
	for (;;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			break;
		if (n == max)
			return -2;
		char *start = p, *out = p;
		char *eq = NULL;
		while (*p && !isspace((unsigned char)*p)) {
			if (*p == '"') {
				p++;
				while (*p && *p != '"')
					*out++ = *p++;
				if (*p != '"')
					return -1;
				p++;
				continue;
			}
			if (*p == '=' && !eq) {
				*out = '\0';
				eq = ++out;
				p++;
				continue;
			}
			*out++ = *p++;
		}
		bool more = *p != '\0';
		*out = '\0';
		if (eq) {
			t[n].key = start;
			t[n].value = eq;
		} else {
			t[n].key = NULL;
			t[n].value = start;
		}
		n++;
		if (!more)
			break;
		p++;
	}
	return n;
}

static pw_status parse_double(parser *ps, const char *key, const char *v, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(d))
		PERR(ps, "%s=\"%s\" is not a finite number", key, v);
	*out = d;
	return PW_OK;
}

static pw_status parse_u64(parser *ps, const char *key, const char *v, uint64_t *out)
{
	char *end;
	*out = 0; /* written on every path: callers read it only after PW_OK, which -O3 cannot see */
	errno = 0;
	unsigned long long u = strtoull(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-')
		PERR(ps, "%s=\"%s\" is not a non-negative integer", key, v);
	*out = u;
	return PW_OK;
}

static pw_status parse_cl(parser *ps, const char *key, const char *v, int64_t *out)
{
	const char *d = strncmp(v, "cl/", 3) == 0 ? v + 3 : v;
	uint64_t u;
	pw_status st = parse_u64(ps, key, d, &u);
	if (st != PW_OK)
		return st;
	if (u == 0 || u > INT64_MAX)
		PERR(ps, "%s=\"%s\" is not a CL", key, v);
	*out = (int64_t)u;
	return PW_OK;
}

/* "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM[:SS]Z" to unix µs. */
static pw_status parse_time(parser *ps, const char *key, const char *v, int64_t *out)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	int y, mo, d, h = 0, mi = 0, s = 0, n = 0;
	if (sscanf(v, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3)
		PERR(ps, "%s=\"%s\" is not a date (YYYY-MM-DD)", key, v);
	const char *rest = v + n;
	if (*rest) {
		int m2 = 0;
		if (sscanf(rest, "T%2d:%2d%n", &h, &mi, &m2) != 2)
			PERR(ps, "%s=\"%s\" is not YYYY-MM-DDTHH:MM[:SS]Z", key, v);
		rest += m2;
		if (*rest == ':') {
			int m3 = 0;
			if (sscanf(rest, ":%2d%n", &s, &m3) != 1)
				PERR(ps, "%s=\"%s\" has bad seconds", key, v);
			rest += m3;
		}
		if (strcmp(rest, "Z") != 0)
			PERR(ps, "%s=\"%s\" must end in Z (UTC)", key, v);
	}
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
		PERR(ps, "%s=\"%s\" is out of range", key, v);
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	time_t t = timegm(&tm);
	*out = (int64_t)t * 1000000LL;
	return PW_OK;
}

static pw_status parse_day(parser *ps, const char *key, const char *v, int *day)
{
	if (!ps->have_start)
		PERR(ps, "%s given before the \"start\" line", key);
	int64_t t;
	pw_status st = parse_time(ps, key, v, &t);
	if (st != PW_OK)
		return st;
	int64_t dd = t - ps->sc->start_unix_us;
	if (dd < 0)
		PERR(ps, "%s=%s is before the scenario start", key, v);
	*day = (int)(dd / US_PER_DAY);
	return PW_OK;
}

static pw_status copy_str(parser *ps, const char *key, const char *v, char *dst, size_t len)
{
	if (strlen(v) >= len)
		PERR(ps, "%s=\"%s\" is longer than %zu characters", key, v, len - 1);
	memcpy(dst, v, strlen(v) + 1);
	return PW_OK;
}

/* A selector key (model, platform, config, phase): true when the token was one. */
static bool sel_key(parser *ps, const tok *t, pw_sim_selector *sel, pw_status *st)
{
	*st = PW_OK;
	if (strcmp(t->key, "model") == 0)
		*st = copy_str(ps, t->key, t->value, sel->model, sizeof sel->model);
	else if (strcmp(t->key, "platform") == 0)
		*st = copy_str(ps, t->key, t->value, sel->platform, sizeof sel->platform);
	else if (strcmp(t->key, "config") == 0)
		*st = copy_str(ps, t->key, t->value, sel->config, sizeof sel->config);
	else if (strcmp(t->key, "phase") == 0) {
		if (strcmp(t->value, "decode") != 0 && strcmp(t->value, "prefill") != 0) {
			*st = pw_fail(PW_ERR_INVALID, ps->errbuf, ps->errlen,
			              "%s:%d: phase=\"%s\" is neither decode nor prefill", ps->file,
			              ps->line, t->value);
			return true;
		}
		*st = copy_str(ps, t->key, t->value, sel->phase, sizeof sel->phase);
	} else
		return false;
	return true;
}

static pw_status parse_metric(parser *ps, const char *key, const char *v, int *out)
{
	int m = pw_sim_metric_find(v);
	if (m < 0)
		PERR(ps, "%s=\"%s\" is not a metric of §3.2", key, v);
	*out = m;
	return PW_OK;
}

/* "name:kind[:number]" */
static pw_status parse_opdef(parser *ps, const char *key, char *v, pw_sim_opdef *o, bool number)
{
	char *save = NULL;
	char *name = strtok_r(v, ":", &save);
	char *kind = strtok_r(NULL, ":", &save);
	char *num = strtok_r(NULL, ":", &save);
	if (!name || !kind || (number && !num) || (!number && num))
		PERR(ps, "%s: op \"%s\" is not name:kind%s", key, v, number ? ":number" : "");
	pw_status st = copy_str(ps, key, name, o->name, sizeof o->name);
	if (st == PW_OK)
		st = copy_str(ps, key, kind, o->kind, sizeof o->kind);
	if (st == PW_OK && number) {
		st = parse_double(ps, key, num, &o->us);
		if (st == PW_OK && o->us < 0)
			PERR(ps, "%s: op \"%s\" has a negative number", key, name);
	}
	return st;
}

/* A comma list of op definitions into arr (capacity cap). */
static pw_status parse_oplist(parser *ps, const char *key, char *v, pw_sim_opdef *arr,
                              size_t cap, size_t *n)
{
	char *save = NULL;
	*n = 0;
	for (char *item = strtok_r(v, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (*n == cap)
			PERR(ps, "%s: more than %zu ops", key, cap);
		pw_status st = parse_opdef(ps, key, item, &arr[*n], true);
		if (st != PW_OK)
			return st;
		(*n)++;
	}
	if (*n == 0)
		PERR(ps, "%s is empty", key);
	return PW_OK;
}

static pw_status need_words(parser *ps, const char *dir, int nt, int min)
{
	if (nt < min)
		PERR(ps, "\"%s\" needs a value", dir);
	return PW_OK;
}

#define UNKNOWN_KEY(ps, dir, t) PERR(ps, "\"%s\" has no key \"%s\"", dir, (t)->key ? (t)->key : (t)->value)

static pw_status line_scalar(parser *ps, const char *dir, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_status st = need_words(ps, dir, nt, 2);
	if (st != PW_OK)
		return st;
	const char *v = t[1].value;
	uint64_t u;
	if (t[1].key)
		PERR(ps, "\"%s\" takes a plain value", dir);
	if (strcmp(dir, "seed") == 0)
		return parse_u64(ps, dir, v, &sc->seed);
	if (strcmp(dir, "start") == 0) {
		st = parse_time(ps, dir, v, &sc->start_unix_us);
		ps->have_start = st == PW_OK;
		return st;
	}
	if (strcmp(dir, "days") == 0 || strcmp(dir, "nightly_repeats") == 0 ||
	    strcmp(dir, "chipset_rotation") == 0) {
		if ((st = parse_u64(ps, dir, v, &u)) != PW_OK)
			return st;
		if (u == 0 || u > 3650)
			PERR(ps, "%s=%s is out of range 1..3650", dir, v);
		if (strcmp(dir, "days") == 0)
			sc->days = (int)u;
		else if (strcmp(dir, "nightly_repeats") == 0)
			sc->nightly_repeats = (uint32_t)u;
		else if (u > 4)
			PERR(ps, "chipset_rotation=%s exceeds the 4 sets of a cell", v);
		else
			sc->chipset_rotation = (uint32_t)u;
		return PW_OK;
	}
	if (strcmp(dir, "outlier_rate") == 0) {
		if ((st = parse_double(ps, dir, v, &sc->outlier_rate)) != PW_OK)
			return st;
		if (sc->outlier_rate < 0 || sc->outlier_rate > 0.5)
			PERR(ps, "outlier_rate=%s is out of range 0..0.5", v);
		return PW_OK;
	}
	PERR(ps, "unknown directive \"%s\"", dir);
}

static pw_status line_list(parser *ps, const char *dir, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	char(**arr)[PW_SIM_NAME_MAX];
	size_t *n;
	if (strcmp(dir, "models") == 0) {
		arr = &sc->models;
		n = &sc->nmodel_names;
	} else if (strcmp(dir, "platforms") == 0) {
		arr = &sc->platforms;
		n = &sc->nplatform_names;
	} else {
		arr = &sc->configs;
		n = &sc->nconfig_names;
	}
	for (int i = 1; i < nt; i++) {
		if (t[i].key)
			PERR(ps, "\"%s\" lists names, not key=value", dir);
		if (strcmp(dir, "models") == 0) {
			pw_sim_model_spec m;
			if (!pw_sim_model_builtin(t[i].value, &m))
				PERR(ps, "unknown model \"%s\" (built-in models only; scale adds synthetic ones)",
				     t[i].value);
		} else if (strcmp(dir, "platforms") == 0) {
			if (!pw_sim_platform_find(t[i].value))
				PERR(ps, "unknown platform \"%s\"", t[i].value);
		} else {
			pw_sim_config c;
			char e[160];
			if (pw_sim_config_parse(t[i].value, &c, e, sizeof e) != PW_OK)
				PERR(ps, "%s", e);
		}
		char(*slot)[PW_SIM_NAME_MAX] = push(arr, n, PW_SIM_NAME_MAX);
		if (!slot)
			return PW_ERR_NOMEM;
		pw_status st = copy_str(ps, dir, t[i].value, *slot, PW_SIM_NAME_MAX);
		if (st != PW_OK)
			return st;
	}
	return PW_OK;
}

static pw_status line_effect(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_sim_effect *e = push(&sc->effects, &sc->neffects, sizeof *e);
	if (!e)
		return PW_ERR_NOMEM;
	e->upstream = -1;
	e->metric = -1;
	bool have_cl = false, have_pct = false;
	pw_status st;
	for (int i = 1; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, "effect", &t[i]);
		if (sel_key(ps, &t[i], &e->sel, &st)) {
			if (st != PW_OK)
				return st;
		} else if (strcmp(t[i].key, "cl") == 0) {
			if ((st = parse_cl(ps, "cl", t[i].value, &e->cl)) != PW_OK)
				return st;
			have_cl = true;
		} else if (strcmp(t[i].key, "requires") == 0) {
			char *save = NULL;
			for (char *c = strtok_r(t[i].value, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
				if (e->nrequires == PW_SIM_MAX_REQUIRES)
					PERR(ps, "requires: more than %d CLs", PW_SIM_MAX_REQUIRES);
				if ((st = parse_cl(ps, "requires", c, &e->requires[e->nrequires++])) != PW_OK)
					return st;
			}
		} else if (strcmp(t[i].key, "upstream") == 0) {
			uint64_t u;
			if ((st = parse_u64(ps, "upstream", t[i].value, &u)) != PW_OK)
				return st;
			e->upstream = (int64_t)u;
		} else if (strcmp(t[i].key, "metric") == 0) {
			if ((st = parse_metric(ps, "metric", t[i].value, &e->metric)) != PW_OK)
				return st;
		} else if (strcmp(t[i].key, "pct") == 0) {
			if ((st = parse_double(ps, "pct", t[i].value, &e->pct)) != PW_OK)
				return st;
			if (e->pct <= -90 || e->pct > 1000)
				PERR(ps, "pct=%s is out of range (-90, 1000]", t[i].value);
			have_pct = true;
		} else if (strcmp(t[i].key, "bytes_pct") == 0) {
			if ((st = parse_double(ps, "bytes_pct", t[i].value, &e->bytes_pct)) != PW_OK)
				return st;
		} else if (strcmp(t[i].key, "numerics") == 0) {
			if (strcmp(t[i].value, "changed") != 0)
				PERR(ps, "numerics=%s: the only value is \"changed\"", t[i].value);
			e->numerics = true;
		} else {
			UNKNOWN_KEY(ps, "effect", &t[i]);
		}
	}
	if (!have_cl || !have_pct)
		PERR(ps, "\"effect\" needs cl= and pct=");
	return PW_OK;
}

/* vmem_cap=BYTES of an opsplit: a positive byte count. */
static pw_status opsplit_vmem_cap(parser *ps, const char *v, double *out)
{
	char *end;
	double d = strtod(v, &end);
	if (end == v || *end || !(d > 0) || d > 1e12)
		PERR(ps, "\"opsplit\" vmem_cap must be a positive byte count, not \"%s\"", v);
	*out = d;
	return PW_OK;
}

static pw_status line_opsplit(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_sim_opsplit *s = push(&sc->splits, &sc->nsplits, sizeof *s);
	if (!s)
		return PW_ERR_NOMEM;
	pw_status st;
	for (int i = 1; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, "opsplit", &t[i]);
		if (sel_key(ps, &t[i], &s->sel, &st)) {
			if (st != PW_OK)
				return st;
		} else if (strcmp(t[i].key, "cl") == 0) {
			if ((st = parse_cl(ps, "cl", t[i].value, &s->cl)) != PW_OK)
				return st;
		} else if (strcmp(t[i].key, "op") == 0) {
			if ((st = copy_str(ps, "op", t[i].value, s->op, sizeof s->op)) != PW_OK)
				return st;
		} else if (strcmp(t[i].key, "into") == 0) {
			if ((st = parse_oplist(ps, "into", t[i].value, s->into, PW_SIM_MAX_SPLIT,
			                       &s->ninto)) != PW_OK)
				return st;
		} else if (strcmp(t[i].key, "vmem_cap") == 0) {
			if ((st = opsplit_vmem_cap(ps, t[i].value, &s->vmem_cap)) != PW_OK)
				return st;
		} else {
			UNKNOWN_KEY(ps, "opsplit", &t[i]);
		}
	}
	if (!s->cl || !s->op[0] || !s->ninto)
		PERR(ps, "\"opsplit\" needs cl=, op= and into=");
	return PW_OK;
}

static pw_status line_opnames(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_sim_opnames *o = push(&sc->opnames, &sc->nopnames, sizeof *o);
	if (!o)
		return PW_ERR_NOMEM;
	pw_status st;
	for (int i = 1; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, "opnames", &t[i]);
		pw_sim_opdef *d = NULL;
		if (strcmp(t[i].key, "model") == 0) {
			if ((st = copy_str(ps, "model", t[i].value, o->model, sizeof o->model)) != PW_OK)
				return st;
			continue;
		}
		if (strcmp(t[i].key, "attention") == 0)
			d = &o->attention;
		else if (strcmp(t[i].key, "gemm") == 0)
			d = &o->gemm;
		else if (strcmp(t[i].key, "collective") == 0)
			d = &o->collective;
		else
			UNKNOWN_KEY(ps, "opnames", &t[i]);
		if ((st = parse_opdef(ps, t[i].key, t[i].value, d, false)) != PW_OK)
			return st;
	}
	if (!o->model[0])
		PERR(ps, "\"opnames\" needs model=");
	return PW_OK;
}

static pw_status line_pin(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_sim_pin *p = push(&sc->pins, &sc->npins, sizeof *p);
	if (!p)
		return PW_ERR_NOMEM;
	pw_status st;
	for (int i = 1; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, "pin", &t[i]);
		if (sel_key(ps, &t[i], &p->sel, &st)) {
			if (st != PW_OK)
				return st;
		} else if (strcmp(t[i].key, "step_ms") == 0) {
			if ((st = parse_double(ps, "step_ms", t[i].value, &p->step_ms)) != PW_OK)
				return st;
			if (p->step_ms <= 0)
				PERR(ps, "step_ms must be positive");
		} else if (strcmp(t[i].key, "chipset") == 0) {
			uint64_t u;
			if ((st = parse_u64(ps, "chipset", t[i].value, &u)) != PW_OK)
				return st;
			if (u < 1 || u > PW_SIM_CHIPSETS_PER_PLATFORM)
				PERR(ps, "chipset=%s is not 1..%d", t[i].value, PW_SIM_CHIPSETS_PER_PLATFORM);
			p->chipset = (uint32_t)u;
		} else if (strcmp(t[i].key, "ops") == 0) {
			if ((st = parse_oplist(ps, "ops", t[i].value, p->ops, PW_SIM_MAX_OPS, &p->nops)) !=
			    PW_OK)
				return st;
		} else {
			UNKNOWN_KEY(ps, "pin", &t[i]);
		}
	}
	return PW_OK;
}

static pw_status line_cl(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_status st = need_words(ps, "cl", nt, 2);
	if (st != PW_OK)
		return st;
	if (t[1].key)
		PERR(ps, "\"cl\" starts with the CL, e.g. cl cl/7841917 title=\"...\"");
	pw_sim_cl_note *n = push(&sc->notes, &sc->nnotes, sizeof *n);
	if (!n)
		return PW_ERR_NOMEM;
	if ((st = parse_cl(ps, "cl", t[1].value, &n->cl)) != PW_OK)
		return st;
	for (int i = 2; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, "cl", &t[i]);
		if (strcmp(t[i].key, "author") == 0)
			st = copy_str(ps, "author", t[i].value, n->author, sizeof n->author);
		else if (strcmp(t[i].key, "title") == 0)
			st = copy_str(ps, "title", t[i].value, n->title, sizeof n->title);
		else if (strcmp(t[i].key, "upstream") == 0) {
			uint64_t u;
			st = parse_u64(ps, "upstream", t[i].value, &u);
			if (st == PW_OK && (u == 0 || u > 1000000))
				PERR(ps, "upstream=%s is out of range 1..1000000", t[i].value);
			n->upstream = (uint32_t)u;
		} else
			UNKNOWN_KEY(ps, "cl", &t[i]);
		if (st != PW_OK)
			return st;
	}
	return PW_OK;
}

static pw_status line_flagged(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_sim_flag_range *f = push(&sc->flags, &sc->nflags, sizeof *f);
	if (!f)
		return PW_ERR_NOMEM;
	pw_status st;
	for (int i = 1; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, "flagged", &t[i]);
		if (strcmp(t[i].key, "from") == 0)
			st = parse_cl(ps, "from", t[i].value, &f->from);
		else if (strcmp(t[i].key, "to") == 0)
			st = parse_cl(ps, "to", t[i].value, &f->to);
		else if (strcmp(t[i].key, "cls") == 0) {
			char *save = NULL;
			st = PW_OK;
			for (char *c = strtok_r(t[i].value, ",", &save); c && st == PW_OK;
			     c = strtok_r(NULL, ",", &save)) {
				int64_t *slot = push(&f->cls, &f->ncls, sizeof *slot);
				if (!slot)
					return PW_ERR_NOMEM;
				st = parse_cl(ps, "cls", c, slot);
			}
		} else
			UNKNOWN_KEY(ps, "flagged", &t[i]);
		if (st != PW_OK)
			return st;
	}
	if (!f->from || !f->to || f->to < f->from)
		PERR(ps, "\"flagged\" needs from= <= to=");
	for (size_t k = 0; k < f->ncls; k++)
		if (f->cls[k] < f->from || f->cls[k] > f->to)
			PERR(ps, "flagged CL %lld is outside from..to", (long long)f->cls[k]);
	return PW_OK;
}

static pw_status line_release(parser *ps, const char *dir, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_sim_release *r = push(&sc->releases, &sc->nreleases, sizeof *r);
	if (!r)
		return PW_ERR_NOMEM;
	r->kind = strcmp(dir, "rc") == 0 ? PW_SIM_BUILD_RC : PW_SIM_BUILD_RELEASE;
	r->repeats = 5; /* §4.5: 5 repeats on T1 */
	r->day = -1;
	pw_status st = PW_OK;
	for (int i = 1; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, dir, &t[i]);
		if (strcmp(t[i].key, "id") == 0)
			st = copy_str(ps, "id", t[i].value, r->id, sizeof r->id);
		else if (strcmp(t[i].key, "base") == 0 && r->kind == PW_SIM_BUILD_RC)
			st = copy_str(ps, "base", t[i].value, r->base, sizeof r->base);
		else if (strcmp(t[i].key, "cl") == 0)
			st = parse_cl(ps, "cl", t[i].value, &r->cl);
		else if (strcmp(t[i].key, "day") == 0)
			st = parse_day(ps, "day", t[i].value, &r->day);
		else if (strcmp(t[i].key, "repeats") == 0) {
			uint64_t u;
			st = parse_u64(ps, "repeats", t[i].value, &u);
			if (st == PW_OK && u > 100)
				PERR(ps, "repeats=%s is out of range 0..100", t[i].value);
			r->repeats = (uint32_t)u;
		} else
			UNKNOWN_KEY(ps, dir, &t[i]);
		if (st != PW_OK)
			return st;
	}
	if (!r->id[0] || !r->cl || r->day < 0)
		PERR(ps, "\"%s\" needs id=, cl= and day=", dir);
	return PW_OK;
}

/* The rc declared above that the line's rc= names, or NULL. */
static pw_sim_release *rc_named(pw_sim_scenario *sc, const tok *t, int nt)
{
	const char *rc = NULL;
	for (int i = 1; i < nt; i++)
		if (t[i].key && strcmp(t[i].key, "rc") == 0)
			rc = t[i].value;
	for (size_t i = 0; rc && i < sc->nreleases; i++)
		if (strcmp(sc->releases[i].id, rc) == 0 && sc->releases[i].kind == PW_SIM_BUILD_RC)
			return &sc->releases[i];
	return NULL;
}

static pw_status line_expect(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_sim_release *r = rc_named(sc, t, nt);
	if (!r)
		PERR(ps, "\"expect\" needs rc= naming an rc declared above");
	pw_sim_expect *e = push(&r->expects, &r->nexpects, sizeof *e);
	if (!e)
		return PW_ERR_NOMEM;
	e->metric = -1;
	bool have_pct = false;
	pw_status st;
	for (int i = 1; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, "expect", &t[i]);
		if (strcmp(t[i].key, "rc") == 0)
			continue;
		if (sel_key(ps, &t[i], &e->sel, &st)) {
			if (st != PW_OK)
				return st;
		} else if (strcmp(t[i].key, "metric") == 0) {
			if ((st = parse_metric(ps, "metric", t[i].value, &e->metric)) != PW_OK)
				return st;
		} else if (strcmp(t[i].key, "cl") == 0) {
			if ((st = parse_cl(ps, "cl", t[i].value, &e->cl)) != PW_OK)
				return st;
		} else if (strcmp(t[i].key, "pct") == 0) {
			if ((st = parse_double(ps, "pct", t[i].value, &e->pct)) != PW_OK)
				return st;
			have_pct = true;
		} else {
			UNKNOWN_KEY(ps, "expect", &t[i]);
		}
	}
	if (e->metric < 0 || !have_pct)
		PERR(ps, "\"expect\" needs metric= and pct=");
	return PW_OK;
}

/* "+30d", "-1h", "+90m", "+600s": a signed duration in µs. */
static pw_status parse_rel(parser *ps, const char *key, const char *v, int64_t *out)
{
	char *end;
	errno = 0;
	long long n = strtoll(v + 1, &end, 10);
	int64_t unit = 0;
	if (strcmp(end, "d") == 0)
		unit = US_PER_DAY;
	else if (strcmp(end, "h") == 0)
		unit = 3600LL * 1000000LL;
	else if (strcmp(end, "m") == 0)
		unit = 60LL * 1000000LL;
	else if (strcmp(end, "s") == 0)
		unit = 1000000LL;
	if (errno || end == v + 1 || !unit || n < 0 || n > 36500LL * 86400LL)
		PERR(ps, "%s=\"%s\" is not +N or -N with a unit d, h, m or s", key, v);
	*out = (v[0] == '-' ? -n : n) * unit;
	return PW_OK;
}

/*
 * waiver rc=ID id=WV [model=M] [platform=P] [config=C] [metric=NAME]
 *        owner=O [approved_by=A] reason="..." expires=TIME|+N{d,h,m,s}|-N{d,h,m,s}
 */
static pw_status line_waiver(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_sim_release *r = rc_named(sc, t, nt);
	if (!r)
		PERR(ps, "\"waiver\" needs rc= naming an rc declared above");
	pw_sim_waiver *w = push(&r->waivers, &r->nwaivers, sizeof *w);
	if (!w)
		return PW_ERR_NOMEM;
	bool have_exp = false;
	pw_status st = PW_OK;
	for (int i = 1; i < nt && st == PW_OK; i++) {
		const char *k = t[i].key, *v = t[i].value;
		if (!k)
			UNKNOWN_KEY(ps, "waiver", &t[i]);
		if (strcmp(k, "rc") == 0)
			continue;
		if (strcmp(k, "id") == 0)
			st = copy_str(ps, k, v, w->id, sizeof w->id);
		else if (strcmp(k, "model") == 0)
			st = copy_str(ps, k, v, w->model, sizeof w->model);
		else if (strcmp(k, "platform") == 0)
			st = copy_str(ps, k, v, w->platform, sizeof w->platform);
		else if (strcmp(k, "config") == 0)
			st = copy_str(ps, k, v, w->config, sizeof w->config);
		else if (strcmp(k, "metric") == 0) {
			int m;
			st = parse_metric(ps, k, v, &m);
			if (st == PW_OK)
				st = copy_str(ps, k, v, w->metric, sizeof w->metric);
		} else if (strcmp(k, "owner") == 0)
			st = copy_str(ps, k, v, w->owner, sizeof w->owner);
		else if (strcmp(k, "approved_by") == 0)
			st = copy_str(ps, k, v, w->approved_by, sizeof w->approved_by);
		else if (strcmp(k, "reason") == 0)
			st = copy_str(ps, k, v, w->reason, sizeof w->reason);
		else if (strcmp(k, "expires") == 0) {
			w->expires_rel = v[0] == '+' || v[0] == '-';
			st = w->expires_rel ? parse_rel(ps, k, v, &w->expires_rel_us)
			                    : parse_time(ps, k, v, &w->expires_unix_us);
			have_exp = st == PW_OK;
		} else
			UNKNOWN_KEY(ps, "waiver", &t[i]);
	}
	if (st != PW_OK)
		return st;
	/* the gate dead-letters a waiver without these */
	if (!w->id[0] || !w->owner[0] || !w->reason[0] || !have_exp)
		PERR(ps, "\"waiver\" needs id=, owner=, reason= and expires=");
	for (size_t i = 0; i + 1 < r->nwaivers; i++)
		if (strcmp(r->waivers[i].id, w->id) == 0)
			PERR(ps, "waiver id \"%s\" is used twice", w->id);
	return PW_OK;
}

static pw_status line_fleet(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_sim_fleet_change *f = push(&sc->fleet, &sc->nfleet, sizeof *f);
	if (!f)
		return PW_ERR_NOMEM;
	bool have_at = false;
	pw_status st = PW_OK;
	for (int i = 1; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, "fleet_change", &t[i]);
		if (strcmp(t[i].key, "id") == 0)
			st = copy_str(ps, "id", t[i].value, f->id, sizeof f->id);
		else if (strcmp(t[i].key, "kind") == 0)
			st = copy_str(ps, "kind", t[i].value, f->kind, sizeof f->kind);
		else if (strcmp(t[i].key, "platform") == 0)
			st = copy_str(ps, "platform", t[i].value, f->platform, sizeof f->platform);
		else if (strcmp(t[i].key, "cell") == 0)
			st = copy_str(ps, "cell", t[i].value, f->cell, sizeof f->cell);
		else if (strcmp(t[i].key, "description") == 0)
			st = copy_str(ps, "description", t[i].value, f->description,
			              sizeof f->description);
		else if (strcmp(t[i].key, "at") == 0) {
			st = parse_time(ps, "at", t[i].value, &f->at_unix_us);
			have_at = st == PW_OK;
		} else if (strcmp(t[i].key, "pct") == 0)
			st = parse_double(ps, "pct", t[i].value, &f->pct);
		else
			UNKNOWN_KEY(ps, "fleet_change", &t[i]);
		if (st != PW_OK)
			return st;
	}
	if (!f->id[0] || !f->kind[0] || !have_at)
		PERR(ps, "\"fleet_change\" needs id=, kind= and at=");
	return PW_OK;
}

static pw_status line_model_rev(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_sim_model_rev *r = push(&sc->revs, &sc->nrevs, sizeof *r);
	if (!r)
		return PW_ERR_NOMEM;
	r->day = 0;
	pw_status st = PW_OK;
	for (int i = 1; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, "model_rev", &t[i]);
		if (strcmp(t[i].key, "model") == 0)
			st = copy_str(ps, "model", t[i].value, r->model, sizeof r->model);
		else if (strcmp(t[i].key, "rev") == 0)
			st = copy_str(ps, "rev", t[i].value, r->rev, sizeof r->rev);
		else if (strcmp(t[i].key, "fingerprint") == 0) {
			st = copy_str(ps, "fingerprint", t[i].value, r->fingerprint, sizeof r->fingerprint);
			if (st == PW_OK && strchr(r->fingerprint, '/'))
				PERR(ps, "fingerprint may not contain '/'");
		} else if (strcmp(t[i].key, "day") == 0)
			st = parse_day(ps, "day", t[i].value, &r->day);
		else if (strcmp(t[i].key, "pct") == 0)
			st = parse_double(ps, "pct", t[i].value, &r->pct);
		else
			UNKNOWN_KEY(ps, "model_rev", &t[i]);
		if (st != PW_OK)
			return st;
	}
	if (!r->model[0] || !r->rev[0])
		PERR(ps, "\"model_rev\" needs model= and rev=");
	return PW_OK;
}

static pw_status line_noise(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_sim_noise_mod *n = push(&sc->noise, &sc->nnoise, sizeof *n);
	if (!n)
		return PW_ERR_NOMEM;
	pw_status st;
	for (int i = 1; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, "noise", &t[i]);
		if (sel_key(ps, &t[i], &n->sel, &st)) {
			if (st != PW_OK)
				return st;
		} else if (strcmp(t[i].key, "factor") == 0) {
			if ((st = parse_double(ps, "factor", t[i].value, &n->factor)) != PW_OK)
				return st;
			if (n->factor <= 0 || n->factor > 50)
				PERR(ps, "factor=%s is out of range (0, 50]", t[i].value);
		} else if (strcmp(t[i].key, "bimodal_pct") == 0) {
			if ((st = parse_double(ps, "bimodal_pct", t[i].value, &n->bimodal_pct)) != PW_OK)
				return st;
			if (n->bimodal_pct < 0 || n->bimodal_pct > 50)
				PERR(ps, "bimodal_pct=%s is out of range 0..50", t[i].value);
		} else {
			UNKNOWN_KEY(ps, "noise", &t[i]);
		}
	}
	return PW_OK;
}

static pw_status line_outlier(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_sim_transient *o = push(&sc->transients, &sc->ntransients, sizeof *o);
	if (!o)
		return PW_ERR_NOMEM;
	pw_status st;
	bool have_day = false;
	o->sigma = 8.0;
	for (int i = 1; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, "outlier", &t[i]);
		if (sel_key(ps, &t[i], &o->sel, &st)) {
			if (st != PW_OK)
				return st;
		} else if (strcmp(t[i].key, "day") == 0) {
			if ((st = parse_day(ps, "day", t[i].value, &o->day)) != PW_OK)
				return st;
			have_day = true;
		} else if (strcmp(t[i].key, "sigma") == 0) {
			if ((st = parse_double(ps, "sigma", t[i].value, &o->sigma)) != PW_OK)
				return st;
			if (o->sigma <= 0 || o->sigma > 100)
				PERR(ps, "sigma=%s is out of range (0, 100]", t[i].value);
		} else {
			UNKNOWN_KEY(ps, "outlier", &t[i]);
		}
	}
	if (!have_day)
		PERR(ps, "\"outlier\" needs day=");
	return PW_OK;
}

static pw_status line_history(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_status st = PW_OK;
	bool have_day = false;
	for (int i = 1; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, "history", &t[i]);
		uint64_t u;
		if (strcmp(t[i].key, "anchor_day") == 0) {
			st = parse_day(ps, "anchor_day", t[i].value, &sc->anchor_day);
			have_day = st == PW_OK;
		} else if (strcmp(t[i].key, "anchor_cl") == 0)
			st = parse_cl(ps, "anchor_cl", t[i].value, &sc->anchor_cl);
		else if (strcmp(t[i].key, "per_day") == 0) {
			st = parse_u64(ps, "per_day", t[i].value, &u);
			if (st == PW_OK && (u == 0 || u > 100000))
				PERR(ps, "per_day=%s is out of range 1..100000", t[i].value);
			sc->cls_per_day = (uint32_t)u;
		} else if (strcmp(t[i].key, "flag_rate") == 0) {
			st = parse_double(ps, "flag_rate", t[i].value, &sc->flag_rate);
			if (st == PW_OK && (sc->flag_rate < 0 || sc->flag_rate > 1))
				PERR(ps, "flag_rate=%s is out of range 0..1", t[i].value);
		} else
			UNKNOWN_KEY(ps, "history", &t[i]);
		if (st != PW_OK)
			return st;
	}
	if (!have_day || !sc->anchor_cl)
		PERR(ps, "\"history\" needs anchor_day= and anchor_cl=");
	return PW_OK;
}

static pw_status line_scale(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	for (int i = 1; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, "scale", &t[i]);
		uint64_t u;
		pw_status st = parse_u64(ps, t[i].key, t[i].value, &u);
		if (st != PW_OK)
			return st;
		if (u > 100000)
			PERR(ps, "%s=%s is too large", t[i].key, t[i].value);
		if (strcmp(t[i].key, "models") == 0)
			sc->nmodels = u;
		else if (strcmp(t[i].key, "platforms") == 0)
			sc->nplatforms = u;
		else if (strcmp(t[i].key, "configs") == 0)
			sc->nconfigs = u;
		else
			UNKNOWN_KEY(ps, "scale", &t[i]);
	}
	return PW_OK;
}

static pw_status line_matrix(parser *ps, tok *t, int nt)
{
	pw_sim_scenario *sc = ps->sc;
	pw_sim_matrix *m = push(&sc->matrix, &sc->nmatrix, sizeof *m);
	if (!m)
		return PW_ERR_NOMEM;
	pw_status st;
	for (int i = 1; i < nt; i++) {
		if (!t[i].key)
			UNKNOWN_KEY(ps, "matrix", &t[i]);
		if (strcmp(t[i].key, "model") == 0) {
			if ((st = copy_str(ps, "model", t[i].value, m->model, sizeof m->model)) != PW_OK)
				return st;
		} else if (strcmp(t[i].key, "platforms") == 0) {
			char *save = NULL;
			for (char *p = strtok_r(t[i].value, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
				if (m->nplatforms == 8)
					PERR(ps, "matrix: more than 8 platforms");
				if (!pw_sim_platform_find(p))
					PERR(ps, "unknown platform \"%s\"", p);
				if ((st = copy_str(ps, "platforms", p, m->platforms[m->nplatforms++],
				                   PW_SIM_NAME_MAX)) != PW_OK)
					return st;
			}
		} else {
			UNKNOWN_KEY(ps, "matrix", &t[i]);
		}
	}
	if (!m->model[0] || !m->nplatforms)
		PERR(ps, "\"matrix\" needs model= and platforms=");
	return PW_OK;
}

static pw_status parse_line(parser *ps, char *line)
{
	tok t[MAX_TOKENS];
	int nt = tokenize(line, t, MAX_TOKENS);
	if (nt == -1)
		PERR(ps, "unterminated quote");
	if (nt == -2)
		PERR(ps, "more than %d words", MAX_TOKENS);
	if (nt == 0)
		return PW_OK;
	if (t[0].key)
		PERR(ps, "a line starts with a directive, not \"%s=\"", t[0].key);
	const char *dir = t[0].value;
	pw_sim_scenario *sc = ps->sc;
	if (strcmp(dir, "scenario") == 0) {
		pw_status st = need_words(ps, dir, nt, 2);
		if (st != PW_OK)
			return st;
		if ((st = copy_str(ps, dir, t[1].value, sc->name, sizeof sc->name)) != PW_OK)
			return st;
		for (int i = 2; i < nt; i++) {
			if (!t[i].key || strcmp(t[i].key, "description") != 0)
				UNKNOWN_KEY(ps, dir, &t[i]);
			if ((st = copy_str(ps, "description", t[i].value, sc->description,
			                   sizeof sc->description)) != PW_OK)
				return st;
		}
		return PW_OK;
	}
	if (strcmp(dir, "models") == 0 || strcmp(dir, "platforms") == 0 ||
	    strcmp(dir, "configs") == 0)
		return line_list(ps, dir, t, nt);
	if (strcmp(dir, "effect") == 0)
		return line_effect(ps, t, nt);
	if (strcmp(dir, "opsplit") == 0)
		return line_opsplit(ps, t, nt);
	if (strcmp(dir, "opnames") == 0)
		return line_opnames(ps, t, nt);
	if (strcmp(dir, "pin") == 0)
		return line_pin(ps, t, nt);
	if (strcmp(dir, "cl") == 0)
		return line_cl(ps, t, nt);
	if (strcmp(dir, "flagged") == 0)
		return line_flagged(ps, t, nt);
	if (strcmp(dir, "release") == 0 || strcmp(dir, "rc") == 0)
		return line_release(ps, dir, t, nt);
	if (strcmp(dir, "expect") == 0)
		return line_expect(ps, t, nt);
	if (strcmp(dir, "waiver") == 0)
		return line_waiver(ps, t, nt);
	if (strcmp(dir, "fleet_change") == 0)
		return line_fleet(ps, t, nt);
	if (strcmp(dir, "model_rev") == 0)
		return line_model_rev(ps, t, nt);
	if (strcmp(dir, "noise") == 0)
		return line_noise(ps, t, nt);
	if (strcmp(dir, "outlier") == 0)
		return line_outlier(ps, t, nt);
	if (strcmp(dir, "history") == 0)
		return line_history(ps, t, nt);
	if (strcmp(dir, "scale") == 0)
		return line_scale(ps, t, nt);
	if (strcmp(dir, "matrix") == 0)
		return line_matrix(ps, t, nt);
	return line_scalar(ps, dir, t, nt);
}

static int fleet_cmp(const void *a, const void *b)
{
	const pw_sim_fleet_change *x = a, *y = b;
	return (x->at_unix_us > y->at_unix_us) - (x->at_unix_us < y->at_unix_us);
}

pw_status pw_sim_scenario_parse(const char *text, const char *name, pw_sim_scenario **out,
                                char *errbuf, size_t errlen)
{
	*out = NULL;
	pw_sim_scenario *sc = calloc(1, sizeof *sc);
	char *copy = strdup(text);
	if (!sc || !copy) {
		free(sc);
		free(copy);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	}
	/* defaults */
	snprintf(sc->name, sizeof sc->name, "unnamed");
	sc->seed = 1;
	sc->days = 7;
	sc->nightly_repeats = 1;
	sc->outlier_rate = 0.01;
	sc->chipset_rotation = 3;
	sc->anchor_cl = 7840000;
	sc->cls_per_day = 38;
	sc->flag_rate = 0.24; /* §6.3: the cost model keeps 9 of 38 */
	parser ps = {sc, name ? name : "scenario", 0, false, errbuf, errlen};
	pw_status st = PW_OK;
	/* split by hand: strtok_r would merge empty lines and miscount them */
	char *p = copy;
	while (p) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		ps.line++;
		st = parse_line(&ps, p);
		if (st == PW_ERR_NOMEM)
			pw_fail(st, errbuf, errlen, "out of memory");
		if (st != PW_OK)
			break;
		p = nl ? nl + 1 : NULL;
	}
	free(copy);
	if (st == PW_OK && !ps.have_start)
		st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "%s: no \"start\" line", ps.file);
	if (st != PW_OK) {
		pw_sim_scenario_free(sc);
		return st;
	}
	if (sc->nfleet > 1)
		qsort(sc->fleet, sc->nfleet, sizeof *sc->fleet, fleet_cmp);
	*out = sc;
	return PW_OK;
}

pw_status pw_sim_scenario_load(const char *path, pw_sim_scenario **out, char *errbuf,
                               size_t errlen)
{
	*out = NULL;
	FILE *f = fopen(path, "rb");
	if (!f)
		return pw_fail(PW_ERR_IO, errbuf, errlen, "could not open scenario \"%s\": %s", path,
		               strerror(errno));
	char *buf = NULL;
	size_t len = 0, cap = 0;
	pw_status st = PW_OK;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			size_t ncap = cap ? cap * 2 : 8192;
			if (ncap > (1u << 24)) {
				st = pw_fail(PW_ERR_INVALID, errbuf, errlen,
				             "scenario \"%s\" is larger than 16 MB", path);
				goto done;
			}
			char *nb = realloc(buf, ncap);
			if (!nb) {
				st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
				goto done;
			}
			buf = nb;
			cap = ncap;
		}
		size_t r = fread(buf + len, 1, 4096, f);
		len += r;
		if (r < 4096) {
			if (ferror(f)) {
				st = pw_fail(PW_ERR_IO, errbuf, errlen, "could not read scenario \"%s\"",
				             path);
				goto done;
			}
			break;
		}
	}
	buf[len] = '\0';
	st = pw_sim_scenario_parse(buf, path, out, errbuf, errlen);
done:
	free(buf);
	fclose(f);
	return st;
}

void pw_sim_scenario_free(pw_sim_scenario *sc)
{
	if (!sc)
		return;
	free(sc->models);
	free(sc->platforms);
	free(sc->configs);
	free(sc->matrix);
	free(sc->effects);
	free(sc->splits);
	free(sc->opnames);
	free(sc->pins);
	free(sc->notes);
	for (size_t i = 0; i < sc->nflags; i++)
		free(sc->flags[i].cls);
	free(sc->flags);
	for (size_t i = 0; i < sc->nreleases; i++) {
		free(sc->releases[i].expects);
		free(sc->releases[i].waivers);
	}
	free(sc->releases);
	free(sc->fleet);
	free(sc->revs);
	free(sc->noise);
	free(sc->transients);
	free(sc);
}
