/*
 * pw_metrics.c: the Prometheus registry and its text exposition writer.
 *
 * Implements pw_metrics.h. The registry is a list of families under one
 * mutex; each family keeps its series in creation order under its own
 * mutex, found by a hash of the (normalised) label values. Updates from a
 * service's worker threads and rendering on the pw_http.c thread therefore
 * only ever contend per family. Values are doubles as Prometheus has them;
 * histogram buckets are kept per bucket and summed when written.
 */
#include "pw_metrics.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DROPPED_NAME "perfwatch_metrics_series_dropped_total"

static const double default_buckets[] = {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};

typedef struct series {
	char **values;    /* one per label, normalised, owned */
	uint64_t hash;
	double value;     /* counter, gauge */
	uint64_t *counts; /* histogram: nbuckets + 1 (the last is +Inf), not cumulative */
	double sum;
	uint64_t count;
} series;

struct pw_metric {
	pw_metric_type type;
	char *name, *help;
	char **labels;
	size_t nlabels;
	double *buckets;
	size_t nbuckets;
	size_t max_series;
	pw_metrics *reg;
	pthread_mutex_t mu;
	series **series;
	size_t nseries, capseries;
};

struct pw_metrics {
	pthread_mutex_t mu;
	pw_metric **fams;
	size_t nfams, capfams;
	atomic_ullong dropped;
};

/* ---- names and values --------------------------------------------------- */

static bool valid_metric_name(const char *s)
{
	if (!s || !*s || strncmp(s, "__", 2) == 0)
		return false;
	for (const char *p = s; *p; p++) {
		bool alpha = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
		             *p == ':';
		if (!alpha && !(p != s && *p >= '0' && *p <= '9'))
			return false;
	}
	return true;
}

static bool valid_label_name(const char *s)
{
	return valid_metric_name(s) && !strchr(s, ':');
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Length of the valid UTF-8 sequence at p (of at most n bytes), 0 if invalid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	if (p[0] < 0x80)
		return 1;
	size_t len;
	uint32_t cp, min;
	if ((p[0] & 0xe0) == 0xc0) {
		len = 2, cp = p[0] & 0x1f, min = 0x80;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3, cp = p[0] & 0x0f, min = 0x800;
	} else if ((p[0] & 0xf8) == 0xf0) {
		len = 4, cp = p[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* True when s is valid UTF-8 of at most PW_METRICS_MAX_VALUE bytes. */
static bool value_is_normal(const char *s)
{
	size_t n = strlen(s);
	if (n > PW_METRICS_MAX_VALUE)
		return false;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq((const unsigned char *)s + i, n - i);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

/*
 * A malloc'd copy of s with invalid bytes replaced by U+FFFD, cut at a
 * character boundary to at most PW_METRICS_MAX_VALUE bytes; NULL on NOMEM.
 */
static char *value_normalise(const char *s)
{
	size_t n = strlen(s), w = 0;
	char *out = malloc(PW_METRICS_MAX_VALUE + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq((const unsigned char *)s + i, n - i);
		const char *src = s + i;
		size_t emit = k;
		if (!k) {
			src = "\xef\xbf\xbd";
			emit = 3;
			k = 1;
		}
		if (w + emit > PW_METRICS_MAX_VALUE)
			break;
		memcpy(out + w, src, emit);
		w += emit;
		i += k;
	}
	out[w] = '\0';
	return out;
}

static uint64_t hash_values(const char *const *v, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		for (const unsigned char *p = (const unsigned char *)v[i]; *p; p++)
			h = (h ^ *p) * 1099511628211ull;
		h = (h ^ 0xff) * 1099511628211ull;
	}
	return h;
}

/* Writes v as Prometheus reads it: shortest round-trip text, NaN, +Inf, -Inf. */
static void format_value(char *buf, size_t len, double v)
{
	if (isnan(v)) {
		snprintf(buf, len, "NaN");
	} else if (isinf(v)) {
		snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
	} else {
		snprintf(buf, len, "%.15g", v);
		if (strtod(buf, NULL) != v)
			snprintf(buf, len, "%.17g", v);
	}
}

/* ---- registry ----------------------------------------------------------- */

pw_metrics *pw_metrics_new(void)
{
	pw_metrics *reg = calloc(1, sizeof *reg);
	if (!reg)
		return NULL;
	if (pthread_mutex_init(&reg->mu, NULL) != 0) {
		free(reg);
		return NULL;
	}
	atomic_init(&reg->dropped, 0);
	return reg;
}

static void series_free(series *s, size_t nlabels)
{
	if (!s)
		return;
	for (size_t i = 0; s->values && i < nlabels; i++)
		free(s->values[i]);
	free(s->values);
	free(s->counts);
	free(s);
}

static void family_free(pw_metric *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nseries; i++)
		series_free(m->series[i], m->nlabels);
	free(m->series);
	for (size_t i = 0; m->labels && i < m->nlabels; i++)
		free(m->labels[i]);
	free(m->labels);
	free(m->buckets);
	free(m->name);
	free(m->help);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

void pw_metrics_free(pw_metrics *reg)
{
	if (!reg)
		return;
	for (size_t i = 0; i < reg->nfams; i++)
		family_free(reg->fams[i]);
	free(reg->fams);
	pthread_mutex_destroy(&reg->mu);
	free(reg);
}

/* The names a family owns: its own, and for a histogram name_bucket/_sum/_count. */
static size_t family_names(pw_metric_type type, const char *name, char out[4][256])
{
	snprintf(out[0], 256, "%s", name);
	if (type != PW_METRIC_HISTOGRAM)
		return 1;
	snprintf(out[1], 256, "%s_bucket", name);
	snprintf(out[2], 256, "%s_sum", name);
	snprintf(out[3], 256, "%s_count", name);
	return 4;
}

static bool names_clash(pw_metric_type ta, const char *a, pw_metric_type tb, const char *b)
{
	char na[4][256], nb[4][256];
	size_t ka = family_names(ta, a, na), kb = family_names(tb, b, nb);
	for (size_t i = 0; i < ka; i++)
		for (size_t j = 0; j < kb; j++)
			if (strcmp(na[i], nb[j]) == 0)
				return true;
	return false;
}

/* True when a family of this type and name would clash with one registered. */
static bool name_taken(const pw_metrics *reg, pw_metric_type type, const char *name)
{
	if (names_clash(type, name, PW_METRIC_COUNTER, DROPPED_NAME))
		return true;
	for (size_t i = 0; i < reg->nfams; i++)
		if (names_clash(type, name, reg->fams[i]->type, reg->fams[i]->name))
			return true;
	return false;
}

pw_metric *pw_metrics_find(pw_metrics *reg, pw_metric_type type, const char *name)
{
	pw_metric *found = NULL;
	pthread_mutex_lock(&reg->mu);
	for (size_t i = 0; i < reg->nfams && !found; i++)
		if (reg->fams[i]->type == type && strcmp(reg->fams[i]->name, name) == 0)
			found = reg->fams[i];
	pthread_mutex_unlock(&reg->mu);
	return found;
}

static pw_status check_def(pw_metric_type type, const pw_metric_def *def, size_t *nlabels,
                           char *errbuf, size_t errlen)
{
	if ((int)type < PW_METRIC_COUNTER || type > PW_METRIC_HISTOGRAM)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "unknown metric type %d", (int)type);
	if (!valid_metric_name(def->name) || strlen(def->name) > 200)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "invalid metric name \"%s\"",
		               def->name ? def->name : "(null)");
	if (type == PW_METRIC_COUNTER && !ends_with(def->name, "_total"))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "counter name \"%s\" does not end in \"_total\"", def->name);
	size_t n = 0;
	for (; def->labels && def->labels[n]; n++) {
		const char *l = def->labels[n];
		if (n == PW_METRICS_MAX_LABELS)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "metric \"%s\" has more than %d labels", def->name,
			               PW_METRICS_MAX_LABELS);
		if (!valid_label_name(l))
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "invalid label name \"%s\" for metric \"%s\"", l, def->name);
		if (type == PW_METRIC_HISTOGRAM && strcmp(l, "le") == 0)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "histogram \"%s\" must not have a label \"le\"", def->name);
		for (size_t j = 0; j < n; j++)
			if (strcmp(def->labels[j], l) == 0)
				return pw_fail(PW_ERR_INVALID, errbuf, errlen,
				               "label \"%s\" repeated for metric \"%s\"", l, def->name);
	}
	*nlabels = n;
	if (type == PW_METRIC_HISTOGRAM && def->buckets) {
		if (def->nbuckets == 0 || def->nbuckets > PW_METRICS_MAX_BUCKETS)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "histogram \"%s\" needs 1 to %d buckets", def->name,
			               PW_METRICS_MAX_BUCKETS);
		for (size_t i = 0; i < def->nbuckets; i++)
			if (!isfinite(def->buckets[i]) || (i > 0 && def->buckets[i] <= def->buckets[i - 1]))
				return pw_fail(PW_ERR_INVALID, errbuf, errlen,
				               "histogram \"%s\": buckets must be finite and increasing",
				               def->name);
	}
	return PW_OK;
}

static series *series_new(const pw_metric *m, const char *const *values, uint64_t hash)
{
	series *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->hash = hash;
	if (m->nlabels > 0) {
		s->values = calloc(m->nlabels, sizeof *s->values);
		if (!s->values)
			goto fail;
		for (size_t i = 0; i < m->nlabels; i++)
			if (!(s->values[i] = strdup(values[i])))
				goto fail;
	}
	if (m->type == PW_METRIC_HISTOGRAM) {
		s->counts = calloc(m->nbuckets + 1, sizeof *s->counts);
		if (!s->counts)
			goto fail;
	}
	return s;
fail:
	series_free(s, m->nlabels);
	return NULL;
}

pw_status pw_metrics_register(pw_metrics *reg, pw_metric_type type, const pw_metric_def *def,
                              pw_metric **out, char *errbuf, size_t errlen)
{
	*out = NULL;
	size_t nlabels = 0;
	pw_status st = check_def(type, def, &nlabels, errbuf, errlen);
	if (st != PW_OK)
		return st;

	pw_metric *m = calloc(1, sizeof *m);
	if (!m)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	if (pthread_mutex_init(&m->mu, NULL) != 0) {
		free(m);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "could not create a mutex");
	}
	m->type = type;
	m->reg = reg;
	m->nlabels = nlabels;
	m->max_series = def->max_series ? def->max_series : PW_METRICS_DEFAULT_MAX_SERIES;
	m->name = strdup(def->name);
	m->help = strdup(def->help ? def->help : "");
	if (!m->name || !m->help)
		goto fail_nomem;
	if (nlabels > 0) {
		m->labels = calloc(nlabels, sizeof *m->labels);
		if (!m->labels)
			goto fail_nomem;
		for (size_t i = 0; i < nlabels; i++)
			if (!(m->labels[i] = strdup(def->labels[i])))
				goto fail_nomem;
	}
	if (type == PW_METRIC_HISTOGRAM) {
		const double *b = def->buckets ? def->buckets : default_buckets;
		m->nbuckets = def->buckets ? def->nbuckets
		                           : sizeof default_buckets / sizeof default_buckets[0];
		m->buckets = malloc(m->nbuckets * sizeof *m->buckets);
		if (!m->buckets)
			goto fail_nomem;
		memcpy(m->buckets, b, m->nbuckets * sizeof *m->buckets);
	}
	if (nlabels == 0) {
		/* the one series exists from the start, so that it shows as 0 */
		m->series = calloc(1, sizeof *m->series);
		if (!m->series || !(m->series[0] = series_new(m, NULL, hash_values(NULL, 0))))
			goto fail_nomem;
		m->nseries = m->capseries = 1;
	}

	pthread_mutex_lock(&reg->mu);
	if (name_taken(reg, type, def->name)) {
		pthread_mutex_unlock(&reg->mu);
		st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "metric \"%s\" is already registered",
		             def->name);
		goto fail;
	}
	if (reg->nfams == reg->capfams) {
		size_t cap = reg->capfams ? reg->capfams * 2 : 16;
		pw_metric **grown = realloc(reg->fams, cap * sizeof *grown);
		if (!grown) {
			pthread_mutex_unlock(&reg->mu);
			goto fail_nomem;
		}
		reg->fams = grown;
		reg->capfams = cap;
	}
	reg->fams[reg->nfams++] = m;
	pthread_mutex_unlock(&reg->mu);
	*out = m;
	return PW_OK;

fail_nomem:
	st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory registering metric \"%s\"",
	             def->name);
fail:
	family_free(m);
	return st;
}

pw_status pw_metrics_counter(pw_metrics *reg, const char *name, const char *help,
                             const char *const *labels, pw_metric **out, char *errbuf,
                             size_t errlen)
{
	pw_metric_def def = {.name = name, .help = help, .labels = labels};
	return pw_metrics_register(reg, PW_METRIC_COUNTER, &def, out, errbuf, errlen);
}

pw_status pw_metrics_gauge(pw_metrics *reg, const char *name, const char *help,
                           const char *const *labels, pw_metric **out, char *errbuf,
                           size_t errlen)
{
	pw_metric_def def = {.name = name, .help = help, .labels = labels};
	return pw_metrics_register(reg, PW_METRIC_GAUGE, &def, out, errbuf, errlen);
}

pw_status pw_metrics_histogram(pw_metrics *reg, const char *name, const char *help,
                               const char *const *labels, const double *buckets,
                               size_t nbuckets, pw_metric **out, char *errbuf, size_t errlen)
{
	pw_metric_def def = {.name = name, .help = help, .labels = labels, .buckets = buckets,
	                     .nbuckets = nbuckets};
	return pw_metrics_register(reg, PW_METRIC_HISTOGRAM, &def, out, errbuf, errlen);
}

/* ---- updates ------------------------------------------------------------ */

/*
 * Finds or creates the series of values; called with m->mu held. *st is
 * set when NULL is returned.
 */
static series *series_get(pw_metric *m, const char *const *values, pw_status *st)
{
	if (m->nlabels == 0)
		return m->series[0];
	if (!values) {
		*st = PW_ERR_INVALID;
		return NULL;
	}
	const char *norm[PW_METRICS_MAX_LABELS];
	char *owned[PW_METRICS_MAX_LABELS] = {0};
	series *found = NULL;
	*st = PW_OK;
	for (size_t i = 0; i < m->nlabels; i++) {
		if (!values[i]) {
			*st = PW_ERR_INVALID;
			goto out;
		}
		norm[i] = values[i];
		if (!value_is_normal(values[i])) {
			if (!(owned[i] = value_normalise(values[i]))) {
				*st = PW_ERR_NOMEM;
				goto out;
			}
			norm[i] = owned[i];
		}
	}
	uint64_t h = hash_values(norm, m->nlabels);
	for (size_t i = 0; i < m->nseries && !found; i++) {
		series *s = m->series[i];
		if (s->hash != h)
			continue;
		size_t j = 0;
		while (j < m->nlabels && strcmp(s->values[j], norm[j]) == 0)
			j++;
		if (j == m->nlabels)
			found = s;
	}
	if (found)
		goto out;
	if (m->nseries >= m->max_series) {
		atomic_fetch_add(&m->reg->dropped, 1);
		*st = PW_ERR_INVALID;
		goto out;
	}
	if (m->nseries == m->capseries) {
		size_t cap = m->capseries ? m->capseries * 2 : 8;
		series **grown = realloc(m->series, cap * sizeof *grown);
		if (!grown) {
			*st = PW_ERR_NOMEM;
			goto out;
		}
		m->series = grown;
		m->capseries = cap;
	}
	found = series_new(m, norm, h);
	if (!found) {
		*st = PW_ERR_NOMEM;
		goto out;
	}
	m->series[m->nseries++] = found;
out:
	for (size_t i = 0; i < m->nlabels; i++)
		free(owned[i]);
	return found;
}

static pw_status update(pw_metric *m, const char *const *values, double v, bool set)
{
	if (!m || isnan(v))
		return PW_ERR_INVALID;
	if (m->type == PW_METRIC_HISTOGRAM || (m->type == PW_METRIC_COUNTER && (set || v < 0)))
		return PW_ERR_INVALID;
	pw_status st = PW_OK;
	pthread_mutex_lock(&m->mu);
	series *s = series_get(m, values, &st);
	if (s) {
		if (set)
			s->value = v;
		else
			s->value += v;
	}
	pthread_mutex_unlock(&m->mu);
	return st;
}

pw_status pw_metric_inc(pw_metric *m, const char *const *values)
{
	return update(m, values, 1.0, false);
}

pw_status pw_metric_add(pw_metric *m, const char *const *values, double v)
{
	return update(m, values, v, false);
}

pw_status pw_metric_set(pw_metric *m, const char *const *values, double v)
{
	if (!m || m->type != PW_METRIC_GAUGE)
		return PW_ERR_INVALID;
	return update(m, values, v, true);
}

pw_status pw_metric_observe(pw_metric *m, const char *const *values, double v)
{
	if (!m || m->type != PW_METRIC_HISTOGRAM || isnan(v))
		return PW_ERR_INVALID;
	pw_status st = PW_OK;
	pthread_mutex_lock(&m->mu);
	series *s = series_get(m, values, &st);
	if (s) {
		size_t b = 0;
		while (b < m->nbuckets && v > m->buckets[b])
			b++;
		s->counts[b]++;
		s->count++;
		s->sum += v;
	}
	pthread_mutex_unlock(&m->mu);
	return st;
}

/* ---- exposition --------------------------------------------------------- */

static void write_escaped(FILE *out, const char *s, bool quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else if (quote && *s == '"')
			fputs("\\\"", out);
		else
			fputc(*s, out);
	}
}

/* Writes {l1="v1",...[,le="x"]}, or nothing without labels and le. */
static void write_labels(FILE *out, const pw_metric *m, const series *s, const char *le)
{
	if (m->nlabels == 0 && !le)
		return;
	fputc('{', out);
	for (size_t i = 0; i < m->nlabels; i++) {
		fprintf(out, "%s%s=\"", i ? "," : "", m->labels[i]);
		write_escaped(out, s->values[i], true);
		fputc('"', out);
	}
	if (le)
		fprintf(out, "%sle=\"%s\"", m->nlabels ? "," : "", le);
	fputc('}', out);
}

static void write_family(FILE *out, const pw_metric *m)
{
	static const char *const type_names[] = {"counter", "gauge", "histogram"};
	fprintf(out, "# HELP %s ", m->name);
	write_escaped(out, m->help, false);
	fprintf(out, "\n# TYPE %s %s\n", m->name, type_names[m->type]);
	char num[64];
	for (size_t i = 0; i < m->nseries; i++) {
		const series *s = m->series[i];
		if (m->type != PW_METRIC_HISTOGRAM) {
			fputs(m->name, out);
			write_labels(out, m, s, NULL);
			format_value(num, sizeof num, s->value);
			fprintf(out, " %s\n", num);
			continue;
		}
		uint64_t cum = 0;
		for (size_t b = 0; b <= m->nbuckets; b++) {
			char le[64];
			if (b < m->nbuckets)
				format_value(le, sizeof le, m->buckets[b]);
			else
				snprintf(le, sizeof le, "+Inf");
			cum += s->counts[b];
			fprintf(out, "%s_bucket", m->name);
			write_labels(out, m, s, le);
			fprintf(out, " %" PRIu64 "\n", cum);
		}
		format_value(num, sizeof num, s->sum);
		fprintf(out, "%s_sum", m->name);
		write_labels(out, m, s, NULL);
		fprintf(out, " %s\n%s_count", num, m->name);
		write_labels(out, m, s, NULL);
		fprintf(out, " %" PRIu64 "\n", s->count);
	}
}

pw_status pw_metrics_write(pw_metrics *reg, FILE *out)
{
	pthread_mutex_lock(&reg->mu);
	for (size_t i = 0; i < reg->nfams; i++) {
		pw_metric *m = reg->fams[i];
		pthread_mutex_lock(&m->mu);
		write_family(out, m);
		pthread_mutex_unlock(&m->mu);
	}
	pthread_mutex_unlock(&reg->mu);
	fprintf(out,
	        "# HELP " DROPPED_NAME " Updates dropped because their metric family had reached "
	        "its series limit.\n"
	        "# TYPE " DROPPED_NAME " counter\n" DROPPED_NAME " %llu\n",
	        (unsigned long long)atomic_load(&reg->dropped));
	return ferror(out) ? PW_ERR_IO : PW_OK;
}

pw_status pw_metrics_render(pw_metrics *reg, char **text, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	*text = NULL;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		return PW_ERR_NOMEM;
	pw_status st = pw_metrics_write(reg, f);
	if (fclose(f) != 0 && st == PW_OK)
		st = PW_ERR_NOMEM;
	if (st != PW_OK) {
		free(buf);
		return st == PW_ERR_IO ? PW_ERR_NOMEM : st;
	}
	*text = buf;
	if (len)
		*len = n;
	return PW_OK;
}
