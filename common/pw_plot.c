/*
 * pw_plot.c: the SVG writer behind `perfwatch series plot`. See pw_plot.h;
 * cmd_plot.c gathers the data, this file only lays it out: a time axis in
 * UTC days with date ticks, a value axis with "nice" ticks in the unit, the
 * band as a rectangle behind the points, changepoints and fleet changes as
 * vertical lines with their labels, a legend line under the title.
 */
#include "pw_plot.h"

#include <math.h>
#include <string.h>
#include <time.h>

#define DAY_US (86400.0 * 1e6)

typedef struct layout {
	double x0, x1, y0, y1;     /* plot area in pixels: left, right, top, bottom */
	double t_lo, t_hi;         /* time range, unix microseconds */
	double v_lo, v_hi;         /* value range */
} layout;

static double px_x(const layout *l, double t)
{
	return l->x0 + (t - l->t_lo) / (l->t_hi - l->t_lo) * (l->x1 - l->x0);
}

static double px_y(const layout *l, double v)
{
	return l->y1 - (v - l->v_lo) / (l->v_hi - l->v_lo) * (l->y1 - l->y0);
}

/* Text content or attribute value, XML-escaped. */
static void esc(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\t')
				fputc(*s, out);
		}
	}
}

static void day_name(double t_us, char *buf, size_t len)
{
	time_t t = (time_t)floor(t_us / 1e6);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || strftime(buf, len, "%Y-%m-%d", &tm) == 0)
		snprintf(buf, len, "?");
}

/* A step of 1, 2, 2.5 or 5 × 10^k near range/target. */
static double nice_step(double range, int target, int *decimals)
{
	double raw = range / target;
	double mag = pow(10.0, floor(log10(raw)));
	double norm = raw / mag, step;
	int extra = 0;
	if (norm < 1.5)
		step = 1;
	else if (norm < 2.25)
		step = 2;
	else if (norm < 3.5) {
		step = 2.5;
		extra = 1;
	} else if (norm < 7.5)
		step = 5;
	else
		step = 10;
	step *= mag;
	int d = (int)-floor(log10(step) + 1e-9) + extra;
	*decimals = d < 0 ? 0 : d > 9 ? 9 : d;
	return step;
}

static void widen(double *lo, double *hi, double v)
{
	if (v < *lo)
		*lo = v;
	if (v > *hi)
		*hi = v;
}

static void axes(FILE *out, const layout *l, const pw_plot_series *s)
{
	fprintf(out,
	        "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
	        "fill=\"none\" stroke=\"#999\"/>\n",
	        l->x0, l->y0, l->x1 - l->x0, l->y1 - l->y0);
	fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
	             "stroke=\"#333\"/>\n", l->x0, l->y1, l->x1, l->y1);
	fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
	             "stroke=\"#333\"/>\n", l->x0, l->y0, l->x0, l->y1);

	/* value ticks */
	int dec = 0;
	double step = nice_step(l->v_hi - l->v_lo, 6, &dec);
	for (double v = ceil(l->v_lo / step) * step; v <= l->v_hi + step * 1e-9; v += step) {
		double y = px_y(l, v);
		fprintf(out, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		             "stroke=\"#eee\"/>\n", l->x0, y, l->x1, y);
		fprintf(out, "<text class=\"tick-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
		             "font-size=\"11\">%.*f</text>\n", l->x0 - 6, y + 4, dec, v);
	}
	/* day ticks at UTC midnights, at most one per ~90 px */
	static const int steps[] = {1, 2, 7, 14, 28, 56, 91, 182, 364, 728};
	double days = (l->t_hi - l->t_lo) / DAY_US;
	int max_ticks = (int)((l->x1 - l->x0) / 90.0);
	if (max_ticks < 2)
		max_ticks = 2;
	int dstep = steps[sizeof steps / sizeof steps[0] - 1];
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
		if (days / steps[i] <= max_ticks) {
			dstep = steps[i];
			break;
		}
	for (double t = ceil(l->t_lo / DAY_US) * DAY_US; t <= l->t_hi; t += dstep * DAY_US) {
		double x = px_x(l, t);
		char d[16];
		day_name(t, d, sizeof d);
		fprintf(out, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		             "stroke=\"#eee\"/>\n", x, l->y0, x, l->y1);
		if (x - 32 >= 0 && x + 32 <= l->x1 + 20) /* a label the canvas cannot hold is left out */
			fprintf(out, "<text class=\"tick-label\" x=\"%.1f\" y=\"%.1f\" "
			             "text-anchor=\"middle\" font-size=\"11\">%s</text>\n",
			        x, l->y1 + 16, d);
	}
	/* axis labels with the unit and the time base */
	fprintf(out, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
	             "font-size=\"12\">nightly run, UTC date</text>\n",
	        (l->x0 + l->x1) / 2, l->y1 + 36);
	const char *metric = s->title ? strrchr(s->title, '/') : NULL;
	fprintf(out, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
	             "font-size=\"12\" transform=\"rotate(-90 %.1f %.1f)\">",
	        16.0, (l->y0 + l->y1) / 2, 16.0, (l->y0 + l->y1) / 2);
	esc(out, metric ? metric + 1 : "value");
	fputs(" (", out);
	esc(out, s->unit && *s->unit ? s->unit : "no unit");
	fputs(")</text>\n", out);
}

static void legend(FILE *out, double x, double y)
{
	fprintf(out,
	        "<g class=\"legend\" font-size=\"11\">\n"
	        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#1f77b4\"/>"
	        "<text x=\"%.1f\" y=\"%.1f\">nightly point</text>\n"
	        "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"8\" fill=\"#1f77b4\" fill-opacity=\"0.15\"/>"
	        "<text x=\"%.1f\" y=\"%.1f\">noise band (median &#177; 3 MAD)</text>\n"
	        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" stroke-width=\"2\"/>"
	        "<text x=\"%.1f\" y=\"%.1f\">changepoint (CL range)</text>\n"
	        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ff7f0e\" stroke-dasharray=\"4 3\"/>"
	        "<text x=\"%.1f\" y=\"%.1f\">fleet change</text>\n"
	        "</g>\n",
	        x, y - 4, x + 8, y, x + 110, y - 8, x + 128, y, x + 330, y - 10, x + 330, y + 2,
	        x + 336, y, x + 480, y - 10, x + 480, y + 2, x + 486, y);
}

pw_status pw_plot_svg(FILE *out, const pw_plot_series *s, int width, int height, char *errbuf,
                      size_t errlen)
{
	if (width < 320 || height < 200)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "plot of %dx%d pixels: at least 320x200",
		               width, height);
	if (s->npoints == 0)
		return pw_fail(PW_ERR_INSUFFICIENT, errbuf, errlen, "series \"%s\" has no points to plot",
		               s->title ? s->title : "");
	layout l = {.x0 = 70, .x1 = width - 20, .y0 = 64, .y1 = height - 50};
	l.t_lo = l.t_hi = (double)s->points[0].ts_us;
	l.v_lo = l.v_hi = s->points[0].value;
	for (size_t i = 0; i < s->npoints; i++) {
		if (!isfinite(s->points[i].value))
			return pw_fail(PW_ERR_INVALID, errbuf, errlen, "point %zu of \"%s\" is not finite",
			               i, s->title ? s->title : "");
		widen(&l.t_lo, &l.t_hi, (double)s->points[i].ts_us);
		widen(&l.v_lo, &l.v_hi, s->points[i].value);
	}
	if (s->has_band) {
		if (!isfinite(s->band_lo) || !isfinite(s->band_hi) || !isfinite(s->median) ||
		    s->band_lo > s->band_hi)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen, "noise band of \"%s\" is invalid",
			               s->title ? s->title : "");
		widen(&l.v_lo, &l.v_hi, s->band_lo);
		widen(&l.v_lo, &l.v_hi, s->band_hi);
	}
	for (size_t i = 0; i < s->nchangepoints; i++)
		widen(&l.t_lo, &l.t_hi, (double)s->changepoints[i].ts_us);
	for (size_t i = 0; i < s->nmarks; i++)
		widen(&l.t_lo, &l.t_hi, (double)s->marks[i].ts_us);
	/* half a day of air at both ends; 8% above and below (a flat series gets ±1%) */
	l.t_lo -= DAY_US / 2;
	l.t_hi += DAY_US / 2;
	double span = l.v_hi - l.v_lo;
	if (!(span > 0.0))
		span = fabs(l.v_hi) > 0.0 ? fabs(l.v_hi) * 0.02 : 2.0;
	l.v_lo -= span * 0.08;
	l.v_hi += span * 0.08;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	             "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
	        width, height, width, height);
	fputs("<title>", out);
	esc(out, s->title);
	fputs("</title>\n", out);
	fprintf(out, "<rect class=\"background\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", width,
	        height);
	fprintf(out, "<text class=\"title\" x=\"%.1f\" y=\"22\" font-size=\"14\" "
	             "font-weight=\"bold\">", l.x0);
	esc(out, s->title);
	fputs("</text>\n", out);
	legend(out, l.x0, 44);
	axes(out, &l, s);

	fprintf(out, "<svg class=\"plot-area\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
	             "viewBox=\"%.1f %.1f %.1f %.1f\" overflow=\"hidden\">\n",
	        l.x0, l.y0, l.x1 - l.x0, l.y1 - l.y0, l.x0, l.y0, l.x1 - l.x0, l.y1 - l.y0);
	if (s->has_band) {
		double ya = px_y(&l, s->band_hi), yb = px_y(&l, s->band_lo), ym = px_y(&l, s->median);
		fprintf(out, "<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		             "fill=\"#1f77b4\" fill-opacity=\"0.15\"/>\n",
		        l.x0, ya, l.x1 - l.x0, yb - ya);
		fprintf(out, "<line class=\"median\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		             "stroke=\"#1f77b4\" stroke-dasharray=\"6 4\" stroke-opacity=\"0.7\"/>\n",
		        l.x0, ym, l.x1, ym);
	}
	for (size_t i = 0; i < s->nmarks; i++) {
		double x = px_x(&l, (double)s->marks[i].ts_us);
		fprintf(out, "<line class=\"fleet-change\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		             "stroke=\"#ff7f0e\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>\n",
		        x, l.y0, x, l.y1);
		fprintf(out, "<text class=\"fleet-change-label\" x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
		             "fill=\"#b35900\">", x + 3, l.y1 - 6 - 13.0 * (double)(i % 4));
		esc(out, s->marks[i].event_id);
		fputs("</text>\n", out);
	}
	for (size_t i = 0; i < s->nchangepoints; i++) {
		const pw_plot_changepoint *c = &s->changepoints[i];
		bool infra = c->annotation && strcmp(c->annotation, "none") != 0;
		const char *color = infra ? "#7f7f7f" : c->regression ? "#d62728" : "#2ca02c";
		double t = (double)c->ts_us;
		if (c->last_clean_us > 0 && c->last_clean_us < c->ts_us)
			t = ((double)c->last_clean_us + t) / 2.0;
		double x = px_x(&l, t);
		fprintf(out, "<line class=\"changepoint\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		             "stroke=\"%s\" stroke-width=\"2\"/>\n",
		        x, l.y0, x, l.y1, color);
		/* labels stack downwards so that neighbours do not overwrite each other */
		double y = l.y0 + 14 + 26.0 * (double)(i % 4);
		bool left = x > (l.x0 + l.x1) / 2;
		fprintf(out, "<text class=\"changepoint-label\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
		             "text-anchor=\"%s\" fill=\"%s\">",
		        left ? x - 4 : x + 4, y, left ? "end" : "start", color);
		esc(out, c->cl_lo);
		fputs("..", out);
		esc(out, c->cl_hi);
		fprintf(out, "</text>\n<text class=\"changepoint-label\" x=\"%.1f\" y=\"%.1f\" "
		             "font-size=\"10\" text-anchor=\"%s\" fill=\"%s\">%+.1f%% %s",
		        left ? x - 4 : x + 4, y + 12, left ? "end" : "start", color, c->delta_pct,
		        infra ? "" : c->regression ? "regression" : "improvement");
		if (infra)
			esc(out, c->annotation);
		fputs("</text>\n", out);
	}
	for (size_t i = 0; i < s->npoints; i++)
		fprintf(out, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"#1f77b4\"/>\n",
		        px_x(&l, (double)s->points[i].ts_us), px_y(&l, s->points[i].value));
	fputs("</svg>\n</svg>\n", out);
	if (ferror(out))
		return pw_fail(PW_ERR_IO, errbuf, errlen, "writing the plot of \"%s\" failed",
		               s->title ? s->title : "");
	return PW_OK;
}

/* ---- x–y chart ---------------------------------------------------------------------- */

static const char *const xy_colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e"};

/*
 * The frame of an x–y chart: the document's opening, the title, both axes
 * with "nice" ticks (the value range's top rounded up to a tick) and their
 * labels. Returns the layout the caller draws in; the caller closes </svg>.
 */
static layout xy_frame(FILE *out, int width, int height, const char *title, const char *x_label,
                       const char *y_label, double xlo, double xhi, double ylo, double yhi)
{
	int dec = 0;
	double ystep = nice_step(yhi - ylo, 6, &dec);
	yhi = ceil(yhi / ystep) * ystep;
	layout l = {70, width - 20.0, 50, height - 60.0, xlo, xhi, ylo, yhi};
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	             "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n", width, height, width, height);
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(out, "<text class=\"title\" x=\"%.1f\" y=\"20\" font-size=\"14\">", l.x0);
	esc(out, title);
	fputs("</text>\n", out);
	fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
	        l.x0, l.y1, l.x1, l.y1);
	fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
	        l.x0, l.y0, l.x0, l.y1);
	for (double v = ceil(l.v_lo / ystep) * ystep; v <= l.v_hi + ystep * 1e-9; v += ystep) {
		double y = px_y(&l, v);
		fprintf(out, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
		        l.x0, y, l.x1, y);
		fprintf(out, "<text class=\"tick-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">%.*f</text>\n",
		        l.x0 - 6, y + 4, dec, v);
	}
	int xdec = 0;
	double xstep = nice_step(xhi - xlo, 6, &xdec);
	for (double v = ceil(xlo / xstep) * xstep; v <= xhi + xstep * 1e-9; v += xstep) {
		double x = px_x(&l, v);
		fprintf(out, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
		        x, l.y0, x, l.y1);
		fprintf(out, "<text class=\"tick-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">%.*f</text>\n",
		        x, l.y1 + 16, xdec, v);
	}
	fprintf(out, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\">",
	        (l.x0 + l.x1) / 2, l.y1 + 36);
	esc(out, x_label);
	fputs("</text>\n", out);
	fprintf(out, "<text class=\"label\" x=\"16\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" "
	             "transform=\"rotate(-90 16 %.1f)\">", (l.y0 + l.y1) / 2, (l.y0 + l.y1) / 2);
	esc(out, y_label);
	fputs("</text>\n", out);
	return l;
}

pw_status pw_plot_xy_svg(FILE *out, const pw_plot_xy *c, int width, int height, char *errbuf,
                         size_t errlen)
{
	if (width < 320 || height < 200)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "picture %dx%d is smaller than 320x200", width, height);
	double xlo = INFINITY, xhi = -INFINITY, ylo = 0, yhi = -INFINITY;
	size_t npts = 0;
	for (size_t i = 0; i < c->nlines; i++)
		for (size_t k = 0; k < c->lines[i].npoints; k++) {
			const pw_plot_xy_point *p = &c->lines[i].points[k];
			if (!isfinite(p->x) || !isfinite(p->y))
				return pw_fail(PW_ERR_INVALID, errbuf, errlen, "line \"%s\": point %zu is not finite",
				               c->lines[i].name ? c->lines[i].name : "", k);
			widen(&xlo, &xhi, p->x);
			widen(&ylo, &yhi, p->y);
			npts++;
		}
	if (npts == 0)
		return pw_fail(PW_ERR_INSUFFICIENT, errbuf, errlen, "no points to plot");
	if (xhi == xlo)
		xhi = xlo + 1;
	if (yhi == ylo)
		yhi = ylo + 1;
	layout l = xy_frame(out, width, height, c->title, c->x_label, c->y_label, xlo, xhi, ylo, yhi);
	for (size_t i = 0; i < c->nlines; i++) {
		const pw_plot_xy_line *ln = &c->lines[i];
		const char *col = xy_colors[i % (sizeof xy_colors / sizeof xy_colors[0])];
		fprintf(out, "<polyline class=\"line\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
		        col, ln->dashed ? " stroke-dasharray=\"6 4\"" : "");
		for (size_t k = 0; k < ln->npoints; k++)
			fprintf(out, "%s%.1f,%.1f", k ? " " : "", px_x(&l, ln->points[k].x), px_y(&l, ln->points[k].y));
		fputs("\"/>\n", out);
		for (size_t k = 0; k < ln->npoints; k++)
			fprintf(out, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>%g, %.0f</title></circle>\n",
			        px_x(&l, ln->points[k].x), px_y(&l, ln->points[k].y), col, ln->points[k].x, ln->points[k].y);
		double lx = l.x0 + 10 + 260.0 * (double)i, ly = 38;
		fprintf(out, "<g class=\"legend\" font-size=\"11\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		             "stroke=\"%s\" stroke-width=\"2\"%s/><text x=\"%.1f\" y=\"%.1f\">",
		        lx, ly - 4, lx + 18, ly - 4, col, ln->dashed ? " stroke-dasharray=\"6 4\"" : "", lx + 24, ly);
		esc(out, ln->name);
		fputs("</text></g>\n", out);
	}
	fputs("</svg>\n", out);
	if (ferror(out))
		return pw_fail(PW_ERR_IO, errbuf, errlen, "writing the picture failed");
	return PW_OK;
}

pw_status pw_plot_cs_svg(FILE *out, const pw_plot_cs *c, int width, int height, char *errbuf, size_t errlen)
{
	if (width < 320 || height < 200)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "picture %dx%d is smaller than 320x200", width, height);
	if (c->npoints == 0)
		return pw_fail(PW_ERR_INSUFFICIENT, errbuf, errlen, "no tested window to plot");
	if (!isfinite(c->tolerance_pct) || !isfinite(c->mde_pct))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "tolerance or MDE is not finite");
	double sgn = c->higher_is_better ? -1 : 1; /* a regression's side */
	double ylo = 0, yhi = 0, big = 0;
	widen(&ylo, &yhi, sgn * c->tolerance_pct);
	widen(&ylo, &yhi, sgn * c->mde_pct);
	for (size_t i = 0; i < c->npoints; i++) {
		const pw_plot_cs_point *p = &c->points[i];
		if (!isfinite(p->effect_pct) || isnan(p->lo_pct) || isnan(p->hi_pct) || p->lo_pct > p->hi_pct)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen, "window %u: effect or interval not a number", p->window);
		widen(&ylo, &yhi, p->effect_pct);
		if (fabs(p->effect_pct) > big)
			big = fabs(p->effect_pct);
	}
	/* the first tested windows' intervals are wide (or open: −100 or +inf); the picture keeps
	 * what the decision reads and cuts the rest at its edge */
	double cap = 4 * fmax(c->mde_pct, big);
	for (size_t i = 0; i < c->npoints; i++) {
		const pw_plot_cs_point *p = &c->points[i];
		if (p->lo_pct > -100 && fabs(p->lo_pct) <= cap)
			widen(&ylo, &yhi, p->lo_pct);
		if (isfinite(p->hi_pct) && fabs(p->hi_pct) <= cap)
			widen(&ylo, &yhi, p->hi_pct);
	}
	/* half a window of room on both sides, so that the first and the deciding window's intervals show */
	double xlo = c->points[0].window - 0.5, xhi = c->points[c->npoints - 1].window + 0.5;
	double pad = (yhi - ylo) * 0.05 + 1e-9;
	layout l = xy_frame(out, width, height, c->title, "window of the metric (5 min each, pilot included)",
	                    "canary vs baseline, %", xlo, xhi, ylo - pad, yhi + pad);
	double x0 = px_x(&l, xlo), x1 = px_x(&l, xhi);
	const struct {
		const char *cls, *color, *name, *label;
		double v;
	} hl[] = {
		{"cs-zero", "#333", "no change", "", 0},
		{"cs-tolerance", "#d62728", "tolerance: REGRESSION once the interval is all beyond it", "tolerance",
		 sgn * c->tolerance_pct},
		{"cs-mde", "#2ca02c", "MDE: NO_REGRESSION once the interval is all within it", "MDE", sgn * c->mde_pct},
	};
	for (size_t i = 0; i < sizeof hl / sizeof hl[0]; i++) {
		double y = px_y(&l, hl[i].v);
		fprintf(out, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"%s>"
		             "<title>", hl[i].cls, x0, y, x1, y, hl[i].color, i ? " stroke-dasharray=\"6 4\"" : "");
		esc(out, hl[i].name);
		fprintf(out, " (%+.2f%%)</title></line>\n", hl[i].v);
		if (hl[i].label[0])
			fprintf(out, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">%s %+.2f%%</text>\n",
			        x1 - 110, y - 4, hl[i].color, hl[i].label, hl[i].v);
	}
	if (c->decided_window) {
		double x = px_x(&l, c->decided_window);
		fprintf(out, "<line class=\"cs-decision\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#9467bd\" "
		             "stroke-dasharray=\"2 3\"/>\n<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
		             "text-anchor=\"end\">decided at window %u</text>\n",
		        x, l.y0, x, l.y1, x - 4, l.y0 + 12, c->decided_window);
	}
	double lo_edge = l.v_lo, hi_edge = l.v_hi;
	for (size_t i = 0; i < c->npoints; i++) {
		const pw_plot_cs_point *p = &c->points[i];
		bool open_lo = p->lo_pct < lo_edge, open_hi = p->hi_pct > hi_edge;
		double x = px_x(&l, p->window);
		fprintf(out, "<line class=\"cs-interval%s\" data-window=\"%u\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		             "y2=\"%.1f\" stroke=\"#1f77b4\" stroke-opacity=\"0.6\" stroke-width=\"2\"/>\n",
		        open_lo || open_hi ? " open" : "", p->window, x, px_y(&l, open_lo ? lo_edge : p->lo_pct), x,
		        px_y(&l, open_hi ? hi_edge : p->hi_pct));
	}
	fputs("<polyline class=\"cs-estimate\" fill=\"none\" stroke=\"#111\" stroke-width=\"1\" points=\"", out);
	for (size_t i = 0; i < c->npoints; i++)
		fprintf(out, "%s%.1f,%.1f", i ? " " : "", px_x(&l, c->points[i].window), px_y(&l, c->points[i].effect_pct));
	fputs("\"/>\n", out);
	for (size_t i = 0; i < c->npoints; i++) {
		const pw_plot_cs_point *p = &c->points[i];
		char lo[32], hi[32]; /* a side not bounded yet (−100: a ratio of 0, or +inf) says so */
		snprintf(lo, sizeof lo, p->lo_pct > -100 ? "%+.3f%%" : "unbounded", p->lo_pct);
		snprintf(hi, sizeof hi, isfinite(p->hi_pct) ? "%+.3f%%" : "unbounded", p->hi_pct);
		fprintf(out, "<circle class=\"cs-effect\" data-window=\"%u\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"#111\">"
		             "<title>window %u: %+.3f%% [%s, %s]</title></circle>\n",
		        p->window, px_x(&l, p->window), px_y(&l, p->effect_pct), p->window, p->effect_pct, lo, hi);
	}
	fputs("</svg>\n", out);
	if (ferror(out))
		return pw_fail(PW_ERR_IO, errbuf, errlen, "writing the picture failed");
	return PW_OK;
}
