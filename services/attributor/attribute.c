/*
 * attribute.c: the attributor's decisions (attribute.h), pure functions of
 * two sides' runs.
 *
 * Order of work in pw_attr_compute: aggregate each op over a side's repeats
 * (median, and the spread that is its own noise), join the sides on op name,
 * classify and sort by |Δ|; sum kernels and take wall medians; diff the
 * representative runs' HLO texts per computation (Myers) and read the
 * declined-fusion cap from the after text; group ops into families by the
 * computation that holds them (by name stem without HLO); set the added HBM
 * bytes against the achieved bandwidth (the roofline term) and the measured
 * wall change, residual unmassaged; place the config against the platform's
 * ridge from its MFU and HBM utilisation; explain (or not) each clean series;
 * name an owner.
 */
#include "attribute.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small strings ------------------------------------------------------------- */

typedef struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
} sbuf;

__attribute__((format(printf, 2, 3))) static void sb_printf(sbuf *b, const char *fmt, ...)
{
	if (b->oom)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		size_t room = b->cap - b->len;
		int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->p && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t want = b->len + (size_t)n + 1, nc = b->cap ? b->cap : 256;
		while (nc < want)
			nc *= 2;
		char *q = realloc(b->p, nc);
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = nc;
	}
}

/* The built string (never NULL unless out of memory); the builder is emptied. */
static char *sb_take(sbuf *b)
{
	if (b->oom) {
		free(b->p);
		*b = (sbuf){0};
		return NULL;
	}
	char *s = b->p ? b->p : strdup("");
	*b = (sbuf){0};
	return s;
}

static char *xstrdup(const char *s)
{
	return strdup(s ? s : "");
}

/* 1234567.4 -> "1,234,567"; with sign: "+2" / "-2,016" */
static const char *num(double v, bool sign, char *buf, size_t len)
{
	char raw[48];
	if (!isfinite(v)) {
		snprintf(buf, len, "—");
		return buf;
	}
	double r = round(v);
	if (r == 0)
		r = 0; /* no "-0" */
	snprintf(raw, sizeof raw, "%.0f", fabs(r));
	size_t n = strlen(raw), o = 0;
	if (r < 0 && o + 1 < len)
		buf[o++] = '-';
	else if (sign && o + 1 < len)
		buf[o++] = '+';
	for (size_t i = 0; i < n && o + 2 < len; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = raw[i];
	}
	buf[o] = 0;
	return buf;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of v[0..n) (reorders v); NaN when n == 0. */
static double median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Sample variance; 0 for n < 2. */
static double variance(const double *v, size_t n)
{
	if (n < 2)
		return 0;
	double m = 0, s = 0;
	for (size_t i = 0; i < n; i++)
		m += v[i];
	m /= (double)n;
	for (size_t i = 0; i < n; i++)
		s += (v[i] - m) * (v[i] - m);
	return s / (double)(n - 1);
}

/* ---- names -------------------------------------------------------------------- */

const char *pw_attr_change_name(pw_attr_change c)
{
	switch (c) {
	case PW_ATTR_UNCHANGED: return "unchanged";
	case PW_ATTR_CHANGED: return "changed";
	case PW_ATTR_REMOVED: return "removed";
	case PW_ATTR_NEW: return "new";
	}
	return "unknown";
}

const char *pw_attr_status_name(pw_attr_status s)
{
	switch (s) {
	case PW_ATTR_OK: return "ok";
	case PW_ATTR_NO_OP_TABLE: return "no_op_table";
	case PW_ATTR_NO_RUNS: return "no_runs";
	}
	return "unknown";
}

/* "fusion.1423a" -> "fusion.1423": the name without letters after its last digits. */
static void name_stem(const char *name, char *out, size_t len)
{
	size_t n = strlen(name);
	size_t e = n;
	while (e > 0 && isalpha((unsigned char)name[e - 1]))
		e--;
	if (e == 0 || e == n || !isdigit((unsigned char)name[e - 1]))
		e = n;
	snprintf(out, len, "%.*s", (int)e, name);
}

/* ---- Myers line diff ------------------------------------------------------------ */

#define DIFF_MAX_D 4096 /* beyond this many edits, a computation is shown as replaced whole */

long pw_attr_line_diff(const char *const *a, size_t na, const char *const *b, size_t nb,
                       char *ops)
{
	long n = (long)na, m = (long)nb, max = n + m;
	long dlim = max < DIFF_MAX_D ? max : DIFF_MAX_D;
	/* trace[d] holds V for k = -d..d (2d+1 entries), kept for the walk back */
	long **trace = calloc((size_t)dlim + 1, sizeof *trace);
	long *v = calloc((size_t)(2 * dlim + 3), sizeof *v);
	long count = -1, dfound = -1;
	if (!trace || !v)
		goto out;
	long off = dlim + 1;
	v[off + 1] = 0;
	for (long d = 0; d <= dlim && dfound < 0; d++) {
		for (long k = -d; k <= d; k += 2) {
			long x;
			if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
				x = v[off + k + 1];
			else
				x = v[off + k - 1] + 1;
			long y = x - k;
			while (x < n && y < m && strcmp(a[x], b[y]) == 0)
				x++, y++;
			v[off + k] = x;
			if (x >= n && y >= m) {
				dfound = d;
				break;
			}
		}
		trace[d] = malloc((size_t)(2 * d + 1) * sizeof **trace);
		if (!trace[d])
			goto out;
		memcpy(trace[d], &v[off - d], (size_t)(2 * d + 1) * sizeof *v);
	}
	if (dfound < 0) {
		/* too many edits: everything out, everything in */
		count = 0;
		for (long i = 0; i < n; i++)
			ops[count++] = '-';
		for (long j = 0; j < m; j++)
			ops[count++] = '+';
		goto out;
	}
	/* walk back from (n, m), writing ops from the end */
	long total = 0;
	{
		long x = n, y = m;
		char *rev = malloc((size_t)(max > 0 ? max : 1));
		if (!rev)
			goto out;
		for (long d = dfound; d > 0; d--) {
			long *pv = trace[d - 1]; /* V of d-1, indexed k + (d-1) */
			long k = x - y;
			long pk;
			if (k == -d || (k != d && pv[k - 1 + (d - 1)] < pv[k + 1 + (d - 1)]))
				pk = k + 1;
			else
				pk = k - 1;
			long px = pv[pk + (d - 1)], py = px - pk;
			while (x > px && y > py) {
				rev[total++] = '=';
				x--, y--;
			}
			if (x == px)
				rev[total++] = '+', y--;
			else
				rev[total++] = '-', x--;
		}
		while (x > 0 && y > 0) {
			rev[total++] = '=';
			x--, y--;
		}
		for (long i = 0; i < total; i++)
			ops[i] = rev[total - 1 - i];
		free(rev);
		count = total;
	}
out:
	if (trace)
		for (long d = 0; d <= dlim; d++)
			free(trace[d]);
	free(trace);
	free(v);
	return count;
}

/* ---- HLO texts: lines and computations --------------------------------------------- */

typedef struct hlo_comp {
	char name[96];          /* "layer.attn", or "" for the module header */
	const char **lines;     /* pointers into the owned copy */
	size_t nlines;
} hlo_comp;

typedef struct hlo_doc {
	char *text;             /* owned copy, lines NUL-split */
	const char **lines;     /* every line, in order */
	const char **header;    /* non-empty lines outside any computation */
	size_t nlines;
	hlo_comp *comps;        /* comps[0] is the module header */
	size_t ncomps;
} hlo_doc;

static void hlo_doc_release(hlo_doc *d)
{
	free(d->text);
	free(d->lines);
	free(d->header);
	free(d->comps);
	*d = (hlo_doc){0};
}

/* "%layer.attn {" -> "layer.attn"; false when the line opens no computation. */
static bool comp_open(const char *line, char *name, size_t len)
{
	const char *p = line;
	while (*p == ' ')
		p++;
	if (*p != '%')
		return false;
	size_t l = strlen(p);
	if (l < 3 || p[l - 1] != '{')
		return false;
	const char *e = p + 1;
	while (*e && *e != ' ' && *e != '{')
		e++;
	snprintf(name, len, "%.*s", (int)(e - p - 1), p + 1);
	return true;
}

static pw_status hlo_parse(const char *text, hlo_doc *d)
{
	*d = (hlo_doc){0};
	d->text = strdup(text ? text : "");
	if (!d->text)
		return PW_ERR_NOMEM;
	size_t cap = 1;
	for (const char *c = d->text; *c; c++)
		cap += *c == '\n';
	d->lines = calloc(cap, sizeof *d->lines);
	d->header = calloc(cap, sizeof *d->header);
	d->comps = calloc(cap + 1, sizeof *d->comps);
	if (!d->lines || !d->header || !d->comps) {
		hlo_doc_release(d);
		return PW_ERR_NOMEM;
	}
	char *p = d->text;
	while (*p) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		d->lines[d->nlines++] = p;
		if (!nl)
			break;
		p = nl + 1;
	}
	hlo_comp *cur = NULL, *header = &d->comps[d->ncomps++];
	header->name[0] = 0;
	header->lines = d->header;
	for (size_t i = 0; i < d->nlines; i++) {
		const char *l = d->lines[i];
		char nm[96];
		if (!cur && comp_open(l, nm, sizeof nm)) {
			cur = &d->comps[d->ncomps++];
			snprintf(cur->name, sizeof cur->name, "%s", nm);
			cur->lines = &d->lines[i];
			cur->nlines = 1;
		} else if (cur) {
			cur->nlines++;
			if (strcmp(l, "}") == 0)
				cur = NULL;
		} else if (l[0]) {
			d->header[header->nlines++] = l;
		}
	}
	return PW_OK;
}

static const hlo_comp *comp_find(const hlo_doc *d, const char *name)
{
	for (size_t i = 0; i < d->ncomps; i++)
		if (strcmp(d->comps[i].name, name) == 0)
			return &d->comps[i];
	return NULL;
}

static bool comp_equal(const hlo_comp *a, const hlo_comp *b)
{
	if (!a || !b || a->nlines != b->nlines)
		return false;
	for (size_t i = 0; i < a->nlines; i++)
		if (strcmp(a->lines[i], b->lines[i]) != 0)
			return false;
	return true;
}

/* One unified-diff hunk set of computation a -> b into out. */
static void diff_comp(sbuf *out, const hlo_comp *a, const hlo_comp *b, const char *name,
                      const char *la, const char *lb, int context)
{
	static const char *const none[1] = {""};
	const char *const *al = a ? a->lines : none;
	const char *const *bl = b ? b->lines : none;
	size_t na = a ? a->nlines : 0, nb = b ? b->nlines : 0;
	char *ops = malloc(na + nb + 1);
	if (!ops) {
		out->oom = true;
		return;
	}
	long nops = pw_attr_line_diff(al, na, bl, nb, ops);
	if (nops < 0) {
		free(ops);
		out->oom = true;
		return;
	}
	sb_printf(out, "--- %s  %s\n+++ %s  %s\n", la, name[0] ? name : "(module)", lb,
	          name[0] ? name : "(module)");
	/* hunks: runs of changes with `context` equal lines around them */
	long i = 0;
	size_t ia = 0, ib = 0; /* line positions before op i */
	while (i < nops) {
		if (ops[i] == '=') {
			i++, ia++, ib++;
			continue;
		}
		long start = i, back = 0;
		while (start > 0 && ops[start - 1] == '=' && back < context)
			start--, back++;
		long end = i;
		for (;;) {
			while (end < nops && ops[end] != '=')
				end++;
			long eq = end;
			while (eq < nops && ops[eq] == '=')
				eq++;
			if (eq < nops && eq - end <= 2L * context)
				end = eq;
			else {
				end = end + context < nops ? end + context : nops;
				if (end > eq)
					end = eq;
				break;
			}
		}
		size_t sa = ia - (size_t)back, sbb = ib - (size_t)back, ca = 0, cb = 0;
		for (long j = start; j < end; j++) {
			ca += ops[j] != '+';
			cb += ops[j] != '-';
		}
		sb_printf(out, "@@ -%zu,%zu +%zu,%zu @@\n", sa + 1, ca, sbb + 1, cb);
		size_t xa = sa, xb = sbb;
		for (long j = start; j < end; j++) {
			if (ops[j] == '=') {
				sb_printf(out, " %s\n", al[xa]);
				xa++, xb++;
			} else if (ops[j] == '-') {
				sb_printf(out, "-%s\n", al[xa++]);
			} else {
				sb_printf(out, "+%s\n", bl[xb++]);
			}
		}
		/* advance the positions to `end` */
		for (long j = i; j < end; j++) {
			ia += ops[j] != '+';
			ib += ops[j] != '-';
		}
		i = end;
	}
	free(ops);
}

static char *hlo_diff_docs(const hlo_doc *da, const hlo_doc *db, const char *la, const char *lb,
                           int context)
{
	sbuf out = {0};
	for (size_t i = 0; i < da->ncomps; i++) {
		const hlo_comp *a = &da->comps[i], *b = comp_find(db, a->name);
		if (!comp_equal(a, b))
			diff_comp(&out, a, b, a->name, la, lb, context);
	}
	for (size_t i = 0; i < db->ncomps; i++) {
		const hlo_comp *b = &db->comps[i];
		if (!comp_find(da, b->name))
			diff_comp(&out, NULL, b, b->name, la, lb, context);
	}
	return sb_take(&out);
}

char *pw_attr_hlo_diff(const char *before, const char *after, const char *before_label,
                       const char *after_label, int context)
{
	hlo_doc da, db;
	if (hlo_parse(before, &da) != PW_OK)
		return NULL;
	if (hlo_parse(after, &db) != PW_OK) {
		hlo_doc_release(&da);
		return NULL;
	}
	char *s = hlo_diff_docs(&da, &db, before_label ? before_label : "before",
	                        after_label ? after_label : "after", context < 0 ? 0 : context);
	hlo_doc_release(&da);
	hlo_doc_release(&db);
	return s;
}

/* The instructions of a document: name -> computation, sorted by name for bsearch. */
typedef struct hlo_inst {
	const char *name;     /* points into the document, after '%' */
	size_t len;
	const char *comp;     /* computation name */
	size_t line;          /* position in the document, for text order */
} hlo_inst;

typedef struct hlo_index {
	hlo_inst *v;
	size_t n;
} hlo_index;

static int cmp_inst(const void *a, const void *b)
{
	const hlo_inst *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* "  %name = ..." lines of every computation; PW_ERR_NOMEM. */
static pw_status hlo_index_build(const hlo_doc *d, hlo_index *ix)
{
	*ix = (hlo_index){0};
	if (!d)
		return PW_OK;
	ix->v = malloc((d->nlines ? d->nlines : 1) * sizeof *ix->v);
	if (!ix->v)
		return PW_ERR_NOMEM;
	size_t pos = 0;
	for (size_t c = 0; c < d->ncomps; c++) {
		const hlo_comp *k = &d->comps[c];
		if (!k->name[0])
			continue;
		for (size_t i = 1; i < k->nlines; i++, pos++) {
			const char *l = k->lines[i];
			while (*l == ' ')
				l++;
			if (*l != '%')
				continue;
			const char *e = l + 1;
			while (*e && *e != ' ' && *e != '=')
				e++;
			ix->v[ix->n++] = (hlo_inst){l + 1, (size_t)(e - l - 1), k->name, pos};
		}
	}
	qsort(ix->v, ix->n, sizeof *ix->v, cmp_inst);
	return PW_OK;
}

static const hlo_inst *hlo_index_find(const hlo_index *ix, const char *op)
{
	if (!ix->n)
		return NULL;
	hlo_inst key = {op, strlen(op), NULL, 0};
	return bsearch(&key, ix->v, ix->n, sizeof *ix->v, cmp_inst);
}

/* Reads "fusion declined: ... cap 1,572,864 B ..." from text: the line and the cap. */
static void cap_note(const char *text, char **note, double *cap)
{
	*note = NULL;
	*cap = 0;
	const char *p = text ? strstr(text, "fusion declined") : NULL;
	if (!p)
		return;
	const char *e = strchr(p, '\n');
	size_t n = e ? (size_t)(e - p) : strlen(p);
	*note = strndup(p, n);
	const char *c = strstr(p, "cap ");
	if (c && (size_t)(c - p) < n) {
		double v = 0;
		for (c += 4; *c && (isdigit((unsigned char)*c) || *c == ','); c++)
			if (*c != ',')
				v = v * 10 + (*c - '0');
		*cap = v;
	}
}

/* ---- the op join ------------------------------------------------------------------ */

typedef struct entry {
	const pw_attr_op *op;
	int side;               /* 0 before, 1 after */
} entry;

static int cmp_entry(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	int c = strcmp(x->op->name, y->op->name);
	return c ? c : x->side - y->side;
}

static int cmp_row(const void *a, const void *b)
{
	const pw_attr_row *x = a, *y = b;
	double dx = fabs(x->delta_us), dy = fabs(y->delta_us);
	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The representative run: wall nearest the side's median. */
static const pw_attr_run *representative(const pw_attr_side *s, double wall_median)
{
	const pw_attr_run *best = NULL;
	for (size_t i = 0; i < s->nruns; i++)
		if (!best || fabs(s->runs[i].wall_step_us - wall_median) <
		                     fabs(best->wall_step_us - wall_median))
			best = &s->runs[i];
	return best;
}

static double side_median(const pw_attr_side *s, size_t field, double *work, double *var)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nruns; i++) {
		const pw_attr_run *r = &s->runs[i];
		double v = field == 0 ? r->wall_step_us : field == 1 ? r->achieved_bw_tb_s
		         : field == 2 ? r->mfu : r->hbm_bw_util;
		if (isfinite(v) && (field == 2 || field == 3 || v > 0))
			work[n++] = v;
	}
	if (var)
		*var = variance(work, n) / (n ? (double)n : 1.0);
	return median(work, n);
}

/*
 * Copies into keep the runs of s that carry the same HLO text as the run
 * whose wall is nearest the side's median (runs without text are kept), and
 * points *out at them. Returns how many were left out.
 */
static size_t one_decision(const pw_attr_side *s, pw_attr_run *keep, pw_attr_side *out, double *work)
{
	const pw_attr_run *rep = representative(s, side_median(s, 0, work, NULL));
	const char *t = rep && rep->hlo_text ? rep->hlo_text : "";
	size_t n = 0;
	for (size_t i = 0; i < s->nruns; i++) {
		const char *u = s->runs[i].hlo_text ? s->runs[i].hlo_text : "";
		if (!t[0] || !u[0] || strcmp(t, u) == 0)
			keep[n++] = s->runs[i];
	}
	out->runs = keep;
	out->nruns = n;
	return s->nruns - n;
}

static bool has_ops(const pw_attr_side *s)
{
	for (size_t i = 0; i < s->nruns; i++)
		if (s->runs[i].nops > 0)
			return true;
	return false;
}

static pw_status join_ops(const pw_attr_side *b, const pw_attr_side *a, pw_attr_result *r)
{
	size_t n = 0;
	for (size_t i = 0; i < b->nruns; i++)
		n += b->runs[i].nops;
	for (size_t i = 0; i < a->nruns; i++)
		n += a->runs[i].nops;
	if (n == 0)
		return PW_OK;
	entry *e = malloc(n * sizeof *e);
	double *vb = malloc(n * sizeof *vb), *va = malloc(n * sizeof *va);
	double *xb = malloc(n * sizeof *xb), *xa = malloc(n * sizeof *xa);
	r->rows = calloc(n, sizeof *r->rows);
	if (!e || !vb || !va || !xb || !xa || !r->rows) {
		free(e), free(vb), free(va), free(xb), free(xa);
		return PW_ERR_NOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < b->nruns; i++)
		for (size_t j = 0; j < b->runs[i].nops; j++)
			e[k++] = (entry){&b->runs[i].ops[j], 0};
	for (size_t i = 0; i < a->nruns; i++)
		for (size_t j = 0; j < a->runs[i].nops; j++)
			e[k++] = (entry){&a->runs[i].ops[j], 1};
	qsort(e, n, sizeof *e, cmp_entry);
	pw_status st = PW_OK;
	for (size_t i = 0; i < n && st == PW_OK;) {
		size_t j = i, nb = 0, na = 0;
		const pw_attr_op *ob = NULL, *oa = NULL;
		while (j < n && strcmp(e[j].op->name, e[i].op->name) == 0) {
			if (e[j].side == 0) {
				vb[nb] = e[j].op->us_per_step;
				xb[nb++] = e[j].op->hbm_bytes_per_step;
				ob = e[j].op;
			} else {
				va[na] = e[j].op->us_per_step;
				xa[na++] = e[j].op->hbm_bytes_per_step;
				oa = e[j].op;
			}
			j++;
		}
		double varb = variance(vb, nb), vara = variance(va, na);
		if (nb < 2)
			varb = vara;
		if (na < 2)
			vara = varb;
		pw_attr_row *row = &r->rows[r->nrows++];
		const pw_attr_op *o = oa ? oa : ob;
		row->name = xstrdup(o->name);
		row->category = xstrdup(o->category);
		row->unit = xstrdup(o->unit);
		row->calls = o->calls;
		row->before_us = nb ? median(vb, nb) : 0;
		row->after_us = na ? median(va, na) : 0;
		row->before_bytes = nb ? median(xb, nb) : 0;
		row->after_bytes = na ? median(xa, na) : 0;
		row->delta_us = row->after_us - row->before_us;
		row->noise_us = (nb && na) ? sqrt(varb / (double)nb + vara / (double)na) : 0;
		char note[64];
		const char *u = row->unit;
		bool offmxu = u[0] && strcmp(u, "MXU") != 0 && strcmp(u, "TensorCore") != 0 &&
		              strcmp(u, "ICI") != 0 && strcmp(u, "NVLink") != 0;
		if (!nb) {
			row->change = PW_ATTR_NEW;
			snprintf(note, sizeof note, offmxu ? "NEW (%s)" : "NEW", u);
		} else if (!na) {
			row->change = PW_ATTR_REMOVED;
			snprintf(note, sizeof note, offmxu ? "REMOVED (%s)" : "REMOVED", u);
		} else {
			/* beyond 3 standard errors of the difference, and beyond 1% of the op (material) */
			double thr = fmax(3.0 * row->noise_us, 0.01 * fmax(row->before_us, row->after_us));
			if (fabs(row->delta_us) > thr) {
				row->change = PW_ATTR_CHANGED;
				if (row->noise_us > 0)
					snprintf(note, sizeof note, "CHANGED %+.1f%% (%.0fσ)",
					         row->before_us > 0 ? row->delta_us / row->before_us * 100 : 0,
					         fabs(row->delta_us) / row->noise_us);
				else
					snprintf(note, sizeof note, "CHANGED %+.1f%%",
					         row->before_us > 0 ? row->delta_us / row->before_us * 100 : 0);
			} else {
				row->change = PW_ATTR_UNCHANGED;
				snprintf(note, sizeof note, "unchanged");
			}
		}
		row->note = xstrdup(note);
		if (!row->name || !row->category || !row->unit || !row->note)
			st = PW_ERR_NOMEM;
		i = j;
	}
	free(e), free(vb), free(va), free(xb), free(xa);
	if (st == PW_OK)
		qsort(r->rows, r->nrows, sizeof *r->rows, cmp_row);
	return st;
}

/* ---- families ---------------------------------------------------------------------- */

typedef struct fam_ref {
	const char *key;
	size_t row;
	size_t order;          /* HLO text position of the op (after side, else before), or SIZE_MAX */
} fam_ref;

static int cmp_fam(const void *a, const void *b)
{
	const fam_ref *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	return (x->order > y->order) - (x->order < y->order);
}

static pw_status families(pw_attr_result *r, const hlo_doc *hb, const hlo_doc *ha)
{
	/* family key: the computation holding the op (after side first), else the name stem */
	hlo_index ib = {0}, ia = {0};
	char **key = calloc(r->nrows ? r->nrows : 1, sizeof *key);
	fam_ref *ref = calloc(r->nrows ? r->nrows : 1, sizeof *ref);
	pw_status st = PW_ERR_NOMEM;
	if (!key || !ref || hlo_index_build(hb, &ib) != PW_OK || hlo_index_build(ha, &ia) != PW_OK)
		goto out;
	st = PW_OK;
	for (size_t i = 0; i < r->nrows && st == PW_OK; i++) {
		const hlo_inst *in = NULL;
		if (r->rows[i].change != PW_ATTR_REMOVED)
			in = hlo_index_find(&ia, r->rows[i].name);
		if (!in)
			in = hlo_index_find(&ib, r->rows[i].name);
		char stem[128];
		if (in)
			snprintf(stem, sizeof stem, "%%%s", in->comp);
		else
			name_stem(r->rows[i].name, stem, sizeof stem);
		key[i] = strdup(stem);
		if (!key[i])
			st = PW_ERR_NOMEM;
		ref[i] = (fam_ref){key[i], i, in ? in->line : SIZE_MAX};
	}
	if (st != PW_OK)
		goto out;
	/* group by key; the family with the largest |Σ Δ| */
	qsort(ref, r->nrows, sizeof *ref, cmp_fam);
	double total = 0, best = -1;
	size_t bs = 0, be = 0;
	for (size_t i = 0; i < r->nrows;) {
		size_t j = i;
		double d = 0;
		while (j < r->nrows && strcmp(ref[j].key, ref[i].key) == 0)
			d += r->rows[ref[j++].row].delta_us;
		total += fabs(d);
		if (fabs(d) > best) {
			best = fabs(d);
			bs = i;
			be = j;
			r->top_family_delta_us = d;
		}
		i = j;
	}
	if (be > bs) {
		/* name it by the ops it lost (fusion.1423); members: lost → gained (text order), then kept */
		sbuf lost = {0}, gained = {0}, kept = {0}, mem = {0};
		for (size_t i = bs; i < be; i++) {
			const pw_attr_row *w = &r->rows[ref[i].row];
			sbuf *t = w->change == PW_ATTR_REMOVED ? &lost : w->change == PW_ATTR_NEW ? &gained : &kept;
			sb_printf(t, "%s%s", t->len ? ", " : "", w->name);
		}
		if (lost.len)
			sb_printf(&mem, "%s → %s", lost.p, gained.len ? gained.p : "(nothing)");
		else if (gained.len)
			sb_printf(&mem, "new: %s", gained.p);
		if (kept.len)
			sb_printf(&mem, "%s%s", mem.len ? "; " : "", kept.p);
		const char *k = ref[bs].key;
		r->top_family = lost.len ? strdup(lost.p) : strdup(k[0] == '%' ? k + 1 : k);
		r->top_family_members = sb_take(&mem);
		r->top_family_share = total > 0 ? best / total : 0;
		free(lost.p), free(gained.p), free(kept.p);
		if (!r->top_family || !r->top_family_members)
			st = PW_ERR_NOMEM;
	}
	for (size_t i = 0; i < r->nrows && st == PW_OK; i++) {
		r->rows[i].family = strdup(key[i][0] == '%' ? key[i] + 1 : key[i]);
		if (!r->rows[i].family)
			st = PW_ERR_NOMEM;
	}
out:
	if (key)
		for (size_t i = 0; i < r->nrows; i++)
			free(key[i]);
	free(key);
	free(ref);
	free(ib.v);
	free(ia.v);
	return st;
}

/* ---- roofline, selectivity, owner ----------------------------------------------------- */

static void roofline(pw_attr_result *r, const pw_attr_side *b, const pw_attr_context *ctx,
                     double *work)
{
	pw_attr_config cfg;
	bool have_cfg = ctx && ctx->config && pw_roofline_config_parse(ctx->config, &cfg) == PW_OK;
	const pw_attr_platform *p = ctx ? ctx->platform : NULL;
	bool bytes_known = false;
	double sb = 0, sa = 0;
	uint32_t calls = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		bytes_known |= r->rows[i].before_bytes > 0 || r->rows[i].after_bytes > 0;
		sb += r->rows[i].before_bytes;
		sa += r->rows[i].after_bytes;
		if (r->rows[i].family && r->top_family && r->rows[i].calls > calls &&
		    r->rows[i].change != PW_ATTR_UNCHANGED)
			calls = r->rows[i].calls;
	}
	r->added_bytes = bytes_known ? sa - sb : NAN;
	double bw = side_median(b, 1, work, NULL);
	if (isfinite(bw) && bw > 0) {
		r->bw_tb_s = bw;
		snprintf(r->bw_source, sizeof r->bw_source, "before runs");
	} else if (p) {
		r->bw_tb_s = pw_roofline_bw_tb_s(p);
		snprintf(r->bw_source, sizeof r->bw_source, "platform table");
	} else {
		r->bw_tb_s = NAN;
		snprintf(r->bw_source, sizeof r->bw_source, "unknown");
	}
	r->measured_us = r->wall_after_us - r->wall_before_us;
	r->measured_pct = r->wall_before_us > 0 ? r->measured_us / r->wall_before_us * 100 : NAN;
	double mfu = side_median(b, 2, work, NULL), util = side_median(b, 3, work, NULL);
	r->intensity = r->ridge = NAN;
	r->bound_known = have_cfg && pw_roofline_intensity(p, &cfg, mfu, util, &r->intensity, &r->ridge);
	r->memory_bound = r->bound_known && r->intensity < r->ridge;
	double term = pw_roofline_bytes_us(r->added_bytes, r->bw_tb_s);
	/* the bandwidth term counts where bandwidth binds; on the compute side it hides under MXU time */
	r->predicted_us = (r->bound_known && !r->memory_bound && isfinite(term)) ? 0 : term;
	r->predicted_pct = r->wall_before_us > 0 ? r->predicted_us / r->wall_before_us * 100 : NAN;
	r->residual_us = r->measured_us - r->predicted_us;

	sbuf e = {0};
	char n1[32], n2[32];
	if (r->bound_known)
		sb_printf(&e, "%s: arithmetic intensity %.0f FLOP/B %s ridge %s FLOP/B (%s)",
		          r->memory_bound ? "memory-bound" : "compute-bound", r->intensity,
		          r->memory_bound ? "<" : ">", num(r->ridge, false, n1, sizeof n1),
		          p ? p->name : "?");
	else
		sb_printf(&e, "bound unknown: no MFU / HBM utilisation or platform facts for the before runs");
	if (isfinite(r->added_bytes)) {
		sb_printf(&e, "; Δbytes/step %+.2f GB", r->added_bytes / 1e9);
		if (calls > 1)
			sb_printf(&e, " (%.1f MB × %u calls)", r->added_bytes / calls / 1e6, calls);
		if (isfinite(term))
			sb_printf(&e, " ÷ %.2f TB/s (%s) = %+.0f µs", r->bw_tb_s, r->bw_source, term);
		if (r->bound_known && !r->memory_bound)
			sb_printf(&e, ", hidden under MXU time: predicted %+.0f µs", r->predicted_us);
	} else {
		sb_printf(&e, "; no per-op HBM bytes: no bandwidth term");
	}
	if (isfinite(r->predicted_us))
		sb_printf(&e, "; predicted %+.1f%%, measured %s µs (%+.1f%%), residual %s µs", r->predicted_pct,
		          num(r->measured_us, true, n1, sizeof n1), r->measured_pct,
		          num(r->residual_us, true, n2, sizeof n2));
	if (r->hlo_cap_note && r->hlo_cap_note[0])
		sb_printf(&e, "; %s", r->hlo_cap_note);
	r->roofline_explanation = sb_take(&e);
}

static pw_status selectivity(pw_attr_result *r, const pw_attr_context *ctx)
{
	if (!ctx || ctx->nclean == 0)
		return PW_OK;
	r->selectivity = calloc(ctx->nclean, sizeof *r->selectivity);
	if (!r->selectivity)
		return PW_ERR_NOMEM;
	pw_attr_config mine;
	bool mine_ok = ctx->config && pw_roofline_config_parse(ctx->config, &mine) == PW_OK;
	for (size_t i = 0; i < ctx->nclean; i++) {
		const pw_attr_clean *c = &ctx->clean[i];
		pw_attr_selectivity *s = &r->selectivity[r->nselectivity++];
		sbuf why = {0};
		pw_attr_config cc;
		bool cfg_ok = c->config && pw_roofline_config_parse(c->config, &cc) == PW_OK;
		double ai, ridge;
		char n1[32], n2[32], n3[32];
		if (c->moved) {
			sb_printf(&why, "unexplained: listed clean but moved; not selectivity");
		} else if (cfg_ok && !cc.decode && mine_ok && mine.decode) {
			if (pw_roofline_intensity(c->platform, &cc, c->mfu, c->hbm_bw_util, &ai, &ridge) && ai > ridge) {
				s->explained = true;
				sb_printf(&why, "prefill compute-bound: intensity %s FLOP/B > ridge %s FLOP/B; the added bytes hide under MXU time",
				          num(ai, false, n1, sizeof n1), num(ridge, false, n2, sizeof n2));
			} else {
				sb_printf(&why, "unexplained: prefill not shown compute-bound (intensity %s)",
				          pw_roofline_intensity(c->platform, &cc, c->mfu, c->hbm_bw_util, &ai, &ridge)
				                  ? num(ai, false, n1, sizeof n1) : "unknown");
			}
		} else if (cfg_ok && cc.decode && c->platform && c->platform->mxu_lanes > 0 &&
		           r->vmem_cap_bytes > 0) {
			double tile = (double)c->platform->mxu_lanes * cc.seq_len * 4.0;
			if (tile <= r->vmem_cap_bytes) {
				s->explained = true;
				sb_printf(&why, "tile %u·%u·4 B = %s B ≤ cap %s B → stays fused",
				          c->platform->mxu_lanes, cc.seq_len, num(tile, false, n1, sizeof n1),
				          num(r->vmem_cap_bytes, false, n2, sizeof n2));
			} else {
				sb_printf(&why, "unexplained: tile %u·%u·4 B = %s B > cap %s B yet it did not move",
				          c->platform->mxu_lanes, cc.seq_len, num(tile, false, n1, sizeof n1),
				          num(r->vmem_cap_bytes, false, n3, sizeof n3));
			}
		} else {
			sb_printf(&why, "unexplained: no tile or roofline argument separates it from the alerting series");
		}
		s->label = xstrdup(c->label);
		s->reason = sb_take(&why);
		if (!s->label || !s->reason)
			return PW_ERR_NOMEM;
	}
	return PW_OK;
}

static pw_status owner(pw_attr_result *r, const pw_attr_context *ctx)
{
	const pw_attr_run *b = r->before_run, *a = r->after_run;
	sbuf w = {0};
	const char *hint;
	const char *fb = b && b->fingerprint ? b->fingerprint : "";
	const char *fa = a && a->fingerprint ? a->fingerprint : "";
	const char *fleet = ctx && ctx->fleet_change && ctx->fleet_change[0] ? ctx->fleet_change : NULL;
	bool harness = b && a && b->harness && a->harness && b->harness[0] && a->harness[0] &&
	               strcmp(b->harness, a->harness) != 0;
	if (fb[0] && fa[0] && strcmp(fb, fa) != 0) {
		hint = "model";
		sb_printf(&w, "HLO fingerprint changed (%s → %s): the model's program changed", fb, fa);
	} else if (r->hlo_changed) {
		hint = "compiler";
		sb_printf(&w, "same HLO fingerprint %s in, different post-optimisation decisions (build %s → %s)",
		          fb, b ? b->build_id : "?", a ? a->build_id : "?");
		if (r->hlo_cap_note && r->hlo_cap_note[0])
			sb_printf(&w, "; %s", r->hlo_cap_note);
		if (fleet)
			sb_printf(&w, "; a fleet change overlaps too: %s", fleet);
	} else if (fleet) {
		hint = "infra";
		sb_printf(&w, "fleet change overlaps: %s; %s", fleet,
		          r->hlo_known ? "post-optimisation HLO unchanged" : "no HLO text to compare");
	} else if (harness) {
		hint = "infra";
		sb_printf(&w, "harness changed (%s → %s)", b->harness, a->harness);
	} else if (r->hlo_known) {
		hint = "infra";
		sb_printf(&w, "post-optimisation HLO unchanged and the measured %+.0f µs is far from the roofline's %+.0f µs: suspect the harness first",
		          r->measured_us, isfinite(r->predicted_us) ? r->predicted_us : 0.0);
	} else {
		bool moved = false;
		for (size_t i = 0; i < r->nrows; i++)
			moved |= r->rows[i].change != PW_ATTR_UNCHANGED;
		hint = moved ? "compiler" : "infra";
		sb_printf(&w, moved ? "no HLO text to compare; ops moved between builds %s → %s"
		                    : "no HLO text to compare and no op moved beyond its noise",
		          b ? b->build_id : "?", a ? a->build_id : "?");
	}
	snprintf(r->owner_hint, sizeof r->owner_hint, "%s", hint);
	r->owner_reason = sb_take(&w);
	return r->owner_reason ? PW_OK : PW_ERR_NOMEM;
}

/* ---- compute -------------------------------------------------------------------------- */

void pw_attr_result_release(pw_attr_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nrows; i++) {
		pw_attr_row *w = &r->rows[i];
		free(w->name), free(w->category), free(w->unit), free(w->note), free(w->family);
	}
	free(r->rows);
	for (size_t i = 0; i < r->nselectivity; i++)
		free(r->selectivity[i].label), free(r->selectivity[i].reason);
	free(r->selectivity);
	free(r->status_detail), free(r->kernel_wall_note), free(r->top_family);
	free(r->top_family_members), free(r->hlo_diff), free(r->hlo_cap_note);
	free(r->roofline_explanation), free(r->owner_reason);
	free(r->owned_runs[0]), free(r->owned_runs[1]);
	*r = (pw_attr_result){0};
}

pw_status pw_attr_compute(const pw_attr_side *before, const pw_attr_side *after,
                          const pw_attr_context *ctx, pw_attr_result *out)
{
	static const pw_attr_side empty = {0};
	pw_attr_result *r = out;
	*r = (pw_attr_result){0};
	const pw_attr_side *b = before ? before : &empty, *a = after ? after : &empty;
	size_t nmax = b->nruns > a->nruns ? b->nruns : a->nruns;
	double *work = malloc((nmax ? nmax : 1) * sizeof *work);
	hlo_doc hb = {0}, ha = {0};
	pw_attr_run *fb = NULL, *fa = NULL;
	pw_status st = PW_ERR_NOMEM;
	if (!work)
		goto fail;
	/* each side is one set of compiler decisions: runs whose HLO differs from the representative's are left out */
	fb = calloc(b->nruns ? b->nruns : 1, sizeof *fb);
	fa = calloc(a->nruns ? a->nruns : 1, sizeof *fa);
	if (!fb || !fa)
		goto fail;
	pw_attr_side sb_, sa_;
	r->before_dropped = one_decision(b, fb, &sb_, work);
	r->after_dropped = one_decision(a, fa, &sa_, work);
	b = &sb_;
	a = &sa_;
	r->nbefore = b->nruns;
	r->nafter = a->nruns;
	double var_b = 0, var_a = 0;
	r->wall_before_us = side_median(b, 0, work, &var_b);
	r->wall_after_us = side_median(a, 0, work, &var_a);
	r->before_run = representative(b, r->wall_before_us);
	r->after_run = representative(a, r->wall_after_us);

	sbuf d = {0};
	if (b->nruns == 0 || a->nruns == 0) {
		r->status = PW_ATTR_NO_RUNS;
		sb_printf(&d, "no runs on the %s side: nothing to diff",
		          b->nruns == 0 && a->nruns == 0 ? "before and after" : b->nruns == 0 ? "before" : "after");
	} else if (!has_ops(b) || !has_ops(a)) {
		r->status = PW_ATTR_NO_OP_TABLE;
		sb_printf(&d, "the %s runs carry no op table: no per-op diff (wall %s only)",
		          !has_ops(b) && !has_ops(a) ? "before and after" : !has_ops(b) ? "before" : "after",
		          "step times compared");
	}
	if (!(r->status_detail = sb_take(&d)))
		goto fail;
	if (r->status == PW_ATTR_OK && (st = join_ops(b, a, r)) != PW_OK)
		goto fail;
	st = PW_ERR_NOMEM;
	for (size_t i = 0; i < r->nrows; i++) {
		r->kernel_before_us += r->rows[i].before_us;
		r->kernel_after_us += r->rows[i].after_us;
	}
	{
		sbuf k = {0};
		char n1[32], n2[32];
		double kd = r->kernel_after_us - r->kernel_before_us;
		double wd = r->wall_after_us - r->wall_before_us;
		double wnoise = sqrt(var_b + var_a);
		r->kernel_wall_differ = r->nrows > 0 && isfinite(wd) &&
		                        fabs(kd - wd) > fmax(3.0 * wnoise, 0.01 * r->wall_before_us);
		if (r->nrows == 0)
			sb_printf(&k, "no kernel times");
		else if (r->kernel_wall_differ)
			sb_printf(&k, "kernel-time Δ %s µs ≠ wall Δ %s µs: kernels overlap (DMA, VPU work under MXU time); the wall clock is the step, the kernels say where it went",
			          num(kd, true, n1, sizeof n1), num(wd, true, n2, sizeof n2));
		else
			sb_printf(&k, "kernel-time Δ %s µs ≈ wall Δ %s µs", num(kd, true, n1, sizeof n1),
			          num(wd, true, n2, sizeof n2));
		if (!(r->kernel_wall_note = sb_take(&k)))
			goto fail;
	}

	/* HLO: the representative runs' texts */
	const char *tb = r->before_run && r->before_run->hlo_text ? r->before_run->hlo_text : "";
	const char *ta = r->after_run && r->after_run->hlo_text ? r->after_run->hlo_text : "";
	r->hlo_known = tb[0] && ta[0];
	if (tb[0] && hlo_parse(tb, &hb) != PW_OK)
		goto fail;
	if (ta[0] && hlo_parse(ta, &ha) != PW_OK)
		goto fail;
	if (r->hlo_known) {
		r->hlo_changed = strcmp(tb, ta) != 0;
		char lb[160], la[160];
		snprintf(lb, sizeof lb, "%s %s", r->before_run->build_id ? r->before_run->build_id : "before",
		         r->before_run->fingerprint ? r->before_run->fingerprint : "");
		snprintf(la, sizeof la, "%s %s", r->after_run->build_id ? r->after_run->build_id : "after",
		         r->after_run->fingerprint ? r->after_run->fingerprint : "");
		r->hlo_diff = r->hlo_changed ? hlo_diff_docs(&hb, &ha, lb, la, 1) : strdup("");
	} else {
		r->hlo_diff = strdup("");
	}
	if (!r->hlo_diff)
		goto fail;
	cap_note(ta, &r->hlo_cap_note, &r->vmem_cap_bytes);
	if (!r->hlo_cap_note && !(r->hlo_cap_note = strdup("")))
		goto fail;
	if ((st = families(r, tb[0] ? &hb : NULL, ta[0] ? &ha : NULL)) != PW_OK)
		goto fail;
	st = PW_ERR_NOMEM;
	roofline(r, b, ctx, work);
	if (!r->roofline_explanation)
		goto fail;
	if ((st = selectivity(r, ctx)) != PW_OK)
		goto fail;
	if ((st = owner(r, ctx)) != PW_OK)
		goto fail;
	if (!r->top_family && (!(r->top_family = strdup("")) || !(r->top_family_members = strdup(""))))
		goto fail;
	hlo_doc_release(&hb);
	hlo_doc_release(&ha);
	free(work);
	r->owned_runs[0] = fb;
	r->owned_runs[1] = fa;
	return PW_OK;
fail:
	hlo_doc_release(&hb);
	hlo_doc_release(&ha);
	free(work);
	free(fb);
	free(fa);
	pw_attr_result_release(r);
	return st == PW_OK ? PW_ERR_NOMEM : st;
}

/* ---- the report --------------------------------------------------------------------- */

char *pw_attr_render(const pw_attr_result *r)
{
	sbuf o = {0};
	char n1[32], n2[32], n3[32];
	sb_printf(&o, "status: %s%s%s\n", pw_attr_status_name(r->status),
	          r->status_detail && r->status_detail[0] ? " — " : "",
	          r->status_detail ? r->status_detail : "");
	if (r->before_dropped || r->after_dropped)
		sb_printf(&o, "left out: %zu before and %zu after runs whose post-optimisation HLO differs from their side's\n",
		          r->before_dropped, r->after_dropped);
	if (r->before_run && r->after_run)
		sb_printf(&o, "before: %s (%zu run(s), shown %s r%u)   after: %s (%zu run(s), shown %s r%u)\n",
		          r->before_run->build_id, r->nbefore, r->before_run->run_id,
		          r->before_run->repeat_index, r->after_run->build_id, r->nafter,
		          r->after_run->run_id, r->after_run->repeat_index);
	sb_printf(&o, "\nper-op timing diff (op table join, sorted by |Δ|)\n");
	sb_printf(&o, "%-40s %5s %15s %15s %10s  %s\n", "op", "calls", "before µs/step",
	          "after µs/step", "Δ µs", "note");
	for (size_t i = 0; i < r->nrows; i++) {
		const pw_attr_row *w = &r->rows[i];
		char label[128];
		if (w->category[0])
			snprintf(label, sizeof label, "%s (%s)", w->name, w->category);
		else
			snprintf(label, sizeof label, "%s", w->name);
		sb_printf(&o, "%-40s %5u %15s %15s %10s  %s\n", label, w->calls,
		          w->change == PW_ATTR_NEW ? "—" : num(w->before_us, false, n1, sizeof n1),
		          w->change == PW_ATTR_REMOVED ? "—" : num(w->after_us, false, n2, sizeof n2),
		          num(w->delta_us, true, n3, sizeof n3), w->note);
	}
	sb_printf(&o, "%-40s %5s %15s %15s %10s\n", "kernel-time sum", "",
	          num(r->kernel_before_us, false, n1, sizeof n1),
	          num(r->kernel_after_us, false, n2, sizeof n2),
	          num(r->kernel_after_us - r->kernel_before_us, true, n3, sizeof n3));
	sb_printf(&o, "%-40s %5s %15s %15s %10s\n", "wall step time", "",
	          num(r->wall_before_us, false, n1, sizeof n1), num(r->wall_after_us, false, n2, sizeof n2),
	          num(r->wall_after_us - r->wall_before_us, true, n3, sizeof n3));
	sb_printf(&o, "%s\n", r->kernel_wall_note ? r->kernel_wall_note : "");
	if (r->top_family && r->top_family[0])
		sb_printf(&o, "delta concentrates in %s (%s): %s µs, %.0f%% of the per-family |Δ|\n",
		          r->top_family, r->top_family_members, num(r->top_family_delta_us, true, n1, sizeof n1),
		          r->top_family_share * 100);
	sb_printf(&o, "\nHLO diff (post-optimisation, changed computations only)\n");
	if (!r->hlo_known)
		sb_printf(&o, "(no HLO text on %s)\n", "one side or both");
	else if (!r->hlo_changed)
		sb_printf(&o, "(identical post-optimisation HLO)\n");
	else
		sb_printf(&o, "%s", r->hlo_diff);
	sb_printf(&o, "\nconsistency check\n");
	if (isfinite(r->added_bytes))
		sb_printf(&o, "Δbytes/step   = %.2f GB\n", r->added_bytes / 1e9);
	if (isfinite(r->predicted_us))
		sb_printf(&o, "Δt (BW term)  = %.2f GB ÷ %.2f TB/s = %s µs = %+.1f%% of %s µs\n",
		          r->added_bytes / 1e9, r->bw_tb_s, num(r->predicted_us, true, n1, sizeof n1),
		          r->predicted_pct, num(r->wall_before_us, false, n2, sizeof n2));
	sb_printf(&o, "measured      = %s µs (%+.1f%%)", num(r->measured_us, true, n1, sizeof n1),
	          r->measured_pct);
	if (isfinite(r->residual_us))
		sb_printf(&o, " → residual %s µs (reported as measured, not fitted)",
		          num(r->residual_us, false, n2, sizeof n2));
	sb_printf(&o, "\nbound         : %s\n", r->roofline_explanation ? r->roofline_explanation : "");
	for (size_t i = 0; i < r->nselectivity; i++)
		sb_printf(&o, "%-14s: %s %s\n", r->selectivity[i].label,
		          r->selectivity[i].explained ? "explained ✔" : "UNEXPLAINED ✘", r->selectivity[i].reason);
	sb_printf(&o, "owner hint    : %s — %s\n", r->owner_hint, r->owner_reason ? r->owner_reason : "");
	return sb_take(&o);
}
