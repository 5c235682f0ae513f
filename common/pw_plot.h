/*
 * pw_plot.h: one series drawn as an SVG picture — its points, its noise
 * band, its changepoints and its fleet-change marks — for on-call, who would
 * rather look than read.
 *
 * `perfwatch series plot` (tools/perfwatch/cmd_plot.c) and the pager's triage
 * page (services/pager/triage.c) read the series from PostgreSQL into a
 * pw_plot_series and call pw_plot_svg; the function is pure (a FILE in,
 * nothing else touched), so tests/unit/test_plot.c checks the structure
 * of what it writes. Time runs left to right in UTC days; the value axis is
 * labelled with the series' unit. Every element has a class (point, band,
 * median, changepoint, fleet-change, axis, tick, label) so that a stylesheet
 * or a test can find it. Everything is borrowed for the call only.
 */
#ifndef PW_PLOT_H
#define PW_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pw_status.h"

typedef struct pw_plot_point {
	int64_t ts_us; /* unix microseconds the run finished */
	double value;  /* in the series' unit */
} pw_plot_point;

/*
 * A level shift: a vertical line between the last clean and the first shifted
 * point (at the first shifted one when the last clean is unknown, 0),
 * labelled with its CL range.
 */
typedef struct pw_plot_changepoint {
	int64_t ts_us;           /* the first shifted point */
	int64_t last_clean_us;   /* the last clean point, or 0 */
	const char *cl_lo;       /* last clean CL, e.g. "cl/7841885" */
	const char *cl_hi;       /* first shifted CL, e.g. "cl/7841923" */
	double delta_pct;        /* percent */
	bool regression;
	const char *annotation;  /* "none", "infra" or "frozen" */
} pw_plot_changepoint;

/* A fleet change that selected the series: a dashed vertical line. */
typedef struct pw_plot_mark {
	int64_t ts_us;
	const char *event_id;
} pw_plot_mark;

typedef struct pw_plot_series {
	const char *title;   /* the series key */
	const char *unit;    /* e.g. "ms" */
	const pw_plot_point *points;
	size_t npoints;
	bool has_band;       /* the latest baseline: median ± 3·MAD_n */
	double band_lo, band_hi, median;
	const pw_plot_changepoint *changepoints;
	size_t nchangepoints;
	const pw_plot_mark *marks;
	size_t nmarks;
} pw_plot_series;

/*
 * Writes a complete SVG document (width × height pixels, each at least 320 ×
 * 200) to out. PW_ERR_INSUFFICIENT when there are no points, PW_ERR_INVALID
 * for a non-finite value or band, or too small a picture, PW_ERR_IO when
 * writing fails; the reason in errbuf.
 */
pw_status pw_plot_svg(FILE *out, const pw_plot_series *s, int width, int height, char *errbuf,
                      size_t errlen);

/*
 * An x–y chart of a few lines (bench/bench_plan.c's chip-hours against
 * catalogue size): linear axes with nice ticks, each line's points joined
 * and marked, a legend. Elements carry classes (axis, tick, line, point,
 * legend, label) as above.
 */
typedef struct pw_plot_xy_point {
	double x, y;
} pw_plot_xy_point;

typedef struct pw_plot_xy_line {
	const char *name;
	const pw_plot_xy_point *points; /* in increasing x */
	size_t npoints;
	bool dashed;
} pw_plot_xy_line;

typedef struct pw_plot_xy {
	const char *title, *x_label, *y_label;
	const pw_plot_xy_line *lines;
	size_t nlines;
} pw_plot_xy;

/* As pw_plot_svg: PW_ERR_INSUFFICIENT without points, PW_ERR_INVALID for a non-finite value or too small a picture, PW_ERR_IO. */
pw_status pw_plot_xy_svg(FILE *out, const pw_plot_xy *c, int width, int height, char *errbuf,
                         size_t errlen);

/*
 * The production canary's evidence (docs/canary.md, docs/pager.md): one
 * confidence sequence of a (rollout, family, metric) over its tested windows
 * — per window the estimate and its interval as pw_cs_result reports them
 * (percent, canary vs baseline) — with the no-change line, the tolerance
 * (REGRESSION once the whole interval is beyond it) and the MDE
 * (NO_REGRESSION once it is all within it) on the regression's side (below 0
 * when higher is better), and the deciding window. Elements: one
 * line.cs-interval and one circle.cs-effect per point (data-window its
 * window; an interval cut at the picture's edge — very wide, or open: −100 or
 * +inf — is line.cs-interval.open), polyline.cs-estimate, line.cs-zero,
 * line.cs-tolerance, line.cs-mde, line.cs-decision.
 */
typedef struct pw_plot_cs_point {
	uint32_t window;                   /* the metric's windows so far, pilot included (1, 2, ...) */
	double effect_pct, lo_pct, hi_pct; /* pw_cs_result's */
} pw_plot_cs_point;

typedef struct pw_plot_cs {
	const char *title;
	const pw_plot_cs_point *points; /* in increasing window */
	size_t npoints;
	double tolerance_pct, mde_pct;  /* the bounds the decision used, > 0 */
	bool higher_is_better;          /* goodput: a regression is negative */
	uint32_t decided_window;        /* 0: none */
} pw_plot_cs;

/* As pw_plot_svg: PW_ERR_INSUFFICIENT without points, PW_ERR_INVALID for a non-finite estimate, a NaN
 * bound, lo > hi, non-finite bounds of the decision or too small a picture, PW_ERR_IO. */
pw_status pw_plot_cs_svg(FILE *out, const pw_plot_cs *c, int width, int height, char *errbuf, size_t errlen);

#endif
