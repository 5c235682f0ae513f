/*
 * test_plot.c: the structure of `perfwatch series plot`'s SVG
 * (common/pw_plot.c): a well-formed document with one circle per
 * point, the noise band, one line and one CL-range label per changepoint,
 * one dashed line and label per fleet change, axis labels with the unit and
 * UTC dates, escaped text, and the refusals (no points, NaN, tiny canvas).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pw_plot.h"

#define DAY_US (86400LL * 1000000LL)
#define T0_US (1777636800LL * 1000000LL) /* 2026-05-01T12:00:00Z */

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Every element opened is closed in order; returns the number of elements, -1 when unbalanced. */
static int well_formed(const char *doc)
{
	char stack[64][32];
	int depth = 0, elements = 0;
	for (const char *p = doc; (p = strchr(p, '<'));) {
		const char *end = strchr(p, '>');
		if (!end)
			return -1;
		if (p[1] == '?' || p[1] == '!') {
			p = end + 1;
			continue;
		}
		bool closing = p[1] == '/';
		bool self = end[-1] == '/';
		const char *name = p + (closing ? 2 : 1);
		size_t len = strcspn(name, " />");
		if (len == 0 || len >= 32)
			return -1;
		if (closing) {
			if (depth == 0 || strncmp(stack[depth - 1], name, len) != 0 ||
			    stack[depth - 1][len] != '\0')
				return -1;
			depth--;
		} else {
			elements++;
			if (!self) {
				if (depth == 64)
					return -1;
				memcpy(stack[depth], name, len);
				stack[depth][len] = '\0';
				depth++;
			}
		}
		/* text between tags must not hold a raw '&' that starts no entity */
		p = end + 1;
	}
	return depth == 0 ? elements : -1;
}

static char *render(const pw_plot_series *s, int w, int h, pw_status *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	char err[256] = "";
	*st = pw_plot_svg(f, s, w, h, err, sizeof err);
	fclose(f);
	return buf;
}

Test(plot, worked_example_has_points_band_changepoint_and_fleet_mark)
{
	enum { N = 56 };
	pw_plot_point pts[N];
	for (int i = 0; i < N; i++) {
		pts[i].ts_us = T0_US + (long long)i * DAY_US;
		pts[i].value = (i >= 47 ? 4.22 : 3.90) + 0.01 * ((i * 7) % 5 - 2);
	}
	pw_plot_changepoint cp = {.ts_us = T0_US + 47 * DAY_US, .cl_lo = "cl/7841885",
	                          .cl_hi = "cl/7841923", .delta_pct = 8.2, .regression = true,
	                          .annotation = "none"};
	pw_plot_mark mark = {.ts_us = T0_US + 33 * DAY_US - 2 * 3600000000LL,
	                     .event_id = "fc-2026-06-03-0007"};
	pw_plot_series s = {.title = "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms",
	                    .unit = "ms", .points = pts, .npoints = N, .has_band = true,
	                    .median = 3.90, .band_lo = 3.90 - 3 * 0.017, .band_hi = 3.90 + 3 * 0.017,
	                    .changepoints = &cp, .nchangepoints = 1, .marks = &mark, .nmarks = 1};
	pw_status st;
	char *svg = render(&s, 960, 420, &st);
	cr_assert_eq(st, PW_OK);
	cr_assert(strncmp(svg, "<?xml", 5) == 0);
	cr_assert(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\"420\"") != NULL);
	cr_assert_gt(well_formed(svg), N, "document is not well formed");
	cr_assert_eq(count(svg, "<circle class=\"point\""), N);
	cr_assert_eq(count(svg, "<rect class=\"band\""), 1);
	cr_assert_eq(count(svg, "<line class=\"median\""), 1);
	cr_assert_eq(count(svg, "<line class=\"changepoint\""), 1);
	cr_assert(strstr(svg, ">cl/7841885..cl/7841923</text>") != NULL, "CL range label");
	cr_assert(strstr(svg, "+8.2% regression") != NULL);
	cr_assert_eq(count(svg, "<line class=\"fleet-change\""), 1);
	cr_assert(strstr(svg, ">fc-2026-06-03-0007</text>") != NULL);
	cr_assert(strstr(svg, ">tpot_p50_ms (ms)</text>") != NULL, "value axis names metric and unit");
	cr_assert(strstr(svg, ">nightly run, UTC date</text>") != NULL);
	cr_assert(strstr(svg, ">2026-06-17</text>") != NULL || strstr(svg, ">2026-06-19</text>") != NULL ||
	          strstr(svg, ">2026-06-12</text>") != NULL, "date ticks");
	cr_assert(strstr(svg, ">2026-05-") != NULL, "the first month is labelled");
	cr_assert(strstr(svg, ">3.90</text>") != NULL || strstr(svg, ">3.9</text>") != NULL ||
	          strstr(svg, ">4.00</text>") != NULL, "value ticks in the unit's scale");
	/* the changepoint line sits between the points of 06-16 and 06-17 */
	const char *l = strstr(svg, "<line class=\"changepoint\" x1=\"");
	double x = strtod(l + strlen("<line class=\"changepoint\" x1=\""), NULL);
	cr_assert(x > 70 && x < 940, "x %.1f inside the plot", x);
	size_t len = strlen(svg);
	cr_assert(strcmp(svg + len - 7, "</svg>\n") == 0);
	free(svg);
}

Test(plot, text_is_escaped_and_a_flat_series_still_has_a_scale)
{
	pw_plot_point pts[3] = {{T0_US, 5.0}, {T0_US + DAY_US, 5.0}, {T0_US + 2 * DAY_US, 5.0}};
	pw_plot_changepoint cp = {.ts_us = T0_US + DAY_US, .cl_lo = "cl/<1>", .cl_hi = "cl/&2",
	                          .delta_pct = -0.7, .regression = false, .annotation = "infra"};
	pw_plot_series s = {.title = "m/h/p/c<&>/tok_s", .unit = "tok/s/chip", .points = pts,
	                    .npoints = 3, .changepoints = &cp, .nchangepoints = 1};
	pw_status st;
	char *svg = render(&s, 640, 300, &st);
	cr_assert_eq(st, PW_OK);
	cr_assert_gt(well_formed(svg), 3);
	cr_assert(strstr(svg, "c&lt;&amp;&gt;") != NULL);
	cr_assert(strstr(svg, "cl/&lt;1&gt;..cl/&amp;2") != NULL);
	cr_assert(strstr(svg, "c<&>") == NULL);
	cr_assert(strstr(svg, "infra") != NULL, "an infra step is labelled as such");
	cr_assert_eq(count(svg, "<rect class=\"band\""), 0, "no baseline, no band");
	cr_assert(strstr(svg, "nan") == NULL && strstr(svg, "inf\"") == NULL, "finite coordinates");
	free(svg);
}

Test(plot, refuses_no_points_nan_and_a_tiny_canvas)
{
	pw_plot_series s = {.title = "x", .unit = "ms"};
	pw_status st;
	char *svg = render(&s, 640, 300, &st);
	cr_assert_eq(st, PW_ERR_INSUFFICIENT);
	free(svg);
	pw_plot_point bad[2] = {{T0_US, 1.0}, {T0_US + DAY_US, NAN}};
	s.points = bad;
	s.npoints = 2;
	svg = render(&s, 640, 300, &st);
	cr_assert_eq(st, PW_ERR_INVALID);
	free(svg);
	bad[1].value = 2.0;
	svg = render(&s, 100, 300, &st);
	cr_assert_eq(st, PW_ERR_INVALID);
	free(svg);
	s.has_band = true;
	s.band_lo = 2.0;
	s.band_hi = 1.0;
	s.median = 1.5;
	svg = render(&s, 640, 300, &st);
	cr_assert_eq(st, PW_ERR_INVALID, "band upside down");
	free(svg);
}
