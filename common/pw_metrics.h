/*
 * pw_metrics.h: a small Prometheus registry of counters, gauges and histograms.
 *
 * A service's main() builds one pw_metrics, registers its metric families at
 * start-up and hands the registry to pw_http.h, which serves its text on
 * GET /metrics. A family has a fixed set of label names; the label values are
 * given with each update, and each distinct tuple of values is one series,
 * created on first use, up to a bounded number per family so that a bad
 * label (a run id, say) cannot grow the process without limit. Rendering
 * follows the Prometheus text exposition format 0.0.4 and passes
 * `promtool check metrics` for well-named families.
 *
 * Thread safety: registration, updates and rendering may come from any
 * thread (each family has its own mutex; the registry one for its list).
 * Handles stay valid until pw_metrics_free(), which must not race with any
 * other call.
 */
#ifndef PW_METRICS_H
#define PW_METRICS_H

#include <stddef.h>
#include <stdio.h>

#include "pw_status.h"

/* Series per family when pw_metric_def.max_series is 0. */
#define PW_METRICS_DEFAULT_MAX_SERIES 1000
/* Label names per family, and buckets per histogram, at most. */
#define PW_METRICS_MAX_LABELS 16
#define PW_METRICS_MAX_BUCKETS 64
/* Bytes of one label value kept, at most. */
#define PW_METRICS_MAX_VALUE 1024

typedef struct pw_metrics pw_metrics; /* the registry */
typedef struct pw_metric pw_metric;   /* one family, owned by its registry */

typedef enum pw_metric_type {
	PW_METRIC_COUNTER = 0,
	PW_METRIC_GAUGE,
	PW_METRIC_HISTOGRAM,
} pw_metric_type;

/*
 * What a family is. Everything is copied at registration.
 * name:       [a-zA-Z_:][a-zA-Z0-9_:]*; a counter's must end in "_total"
 *             (promtool insists), and no name may start with "__".
 * help:       one line; backslashes and newlines are escaped on output.
 * labels:     NULL or a NULL-terminated list of label names
 *             ([a-zA-Z_][a-zA-Z0-9_]*, not "__"-prefixed, not "le" for a
 *             histogram, no repeats), at most PW_METRICS_MAX_LABELS.
 * buckets:    histograms only: nbuckets finite upper bounds in increasing
 *             order (the +Inf bucket is implicit); NULL for Prometheus'
 *             defaults .005 .01 .025 .05 .1 .25 .5 1 2.5 5 10 (seconds).
 * max_series: 0 for PW_METRICS_DEFAULT_MAX_SERIES.
 */
typedef struct pw_metric_def {
	const char *name;
	const char *help;
	const char *const *labels;
	const double *buckets;
	size_t nbuckets;
	size_t max_series;
} pw_metric_def;

/* A new, empty registry; NULL when allocation fails. */
pw_metrics *pw_metrics_new(void);

/* Frees the registry and all its families; NULL is allowed. */
void pw_metrics_free(pw_metrics *reg);

/*
 * Registers a family and stores its handle (owned by reg) in *out. Returns
 * PW_ERR_INVALID with the reason in errbuf for a bad definition or a name
 * already registered, PW_ERR_NOMEM.
 */
pw_status pw_metrics_register(pw_metrics *reg, pw_metric_type type, const pw_metric_def *def,
                              pw_metric **out, char *errbuf, size_t errlen);

/*
 * The family registered under name with that type, or NULL: lets several
 * handles of one module (e.g. one pw_outbox per worker) share one family.
 */
pw_metric *pw_metrics_find(pw_metrics *reg, pw_metric_type type, const char *name);

/* Shorthands for pw_metrics_register() without buckets or series limit. */
pw_status pw_metrics_counter(pw_metrics *reg, const char *name, const char *help,
                             const char *const *labels, pw_metric **out, char *errbuf,
                             size_t errlen);
pw_status pw_metrics_gauge(pw_metrics *reg, const char *name, const char *help,
                           const char *const *labels, pw_metric **out, char *errbuf,
                           size_t errlen);
/* buckets as in pw_metric_def (NULL for the defaults). */
pw_status pw_metrics_histogram(pw_metrics *reg, const char *name, const char *help,
                               const char *const *labels, const double *buckets,
                               size_t nbuckets, pw_metric **out, char *errbuf, size_t errlen);

/*
 * Updates. values holds one label value per label name of the family, in
 * the same order (NULL when the family has no labels), e.g.
 *   pw_metric_inc(m, (const char *[]){"perf.runs.v1", "ok"});
 * Values are copied when a series is created. Any text is allowed: bytes
 * that are not valid UTF-8 become U+FFFD and a value is cut (at a character
 * boundary) after PW_METRICS_MAX_VALUE bytes, the same way on every call.
 * Each returns PW_OK, or PW_ERR_INVALID when the call does not fit the
 * family (wrong type; a counter decreased, NaN; a NULL value) or the family
 * already holds max_series series and this tuple is new (the update is then
 * dropped and counted in perfwatch_metrics_series_dropped_total), or
 * PW_ERR_NOMEM. Callers may ignore the status: a metric never fails a
 * service.
 */
pw_status pw_metric_inc(pw_metric *m, const char *const *values); /* counter, gauge: +1 */
pw_status pw_metric_add(pw_metric *m, const char *const *values,
                        double v); /* counter (v >= 0), gauge */
pw_status pw_metric_set(pw_metric *m, const char *const *values, double v); /* gauge */
pw_status pw_metric_observe(pw_metric *m, const char *const *values,
                            double v); /* histogram */

/*
 * Writes every family, in registration order and its series in creation
 * order, in the text exposition format 0.0.4: "# HELP", "# TYPE", one line
 * per sample; histograms as _bucket{le="..."} (cumulative, ending with
 * le="+Inf"), _sum and _count. A family with no labels shows one sample at
 * 0 before its first update; a labelled family shows none until its first
 * series. Ends with the registry's own counter
 * perfwatch_metrics_series_dropped_total. Returns PW_ERR_IO when writing
 * fails.
 */
pw_status pw_metrics_write(pw_metrics *reg, FILE *out);

/*
 * The same text in a malloc'd, NUL-terminated string that the caller frees;
 * its length without the NUL in *len (len may be NULL). PW_ERR_NOMEM.
 */
pw_status pw_metrics_render(pw_metrics *reg, char **text, size_t *len);

#endif
