/*
 * triage.c: the triage page and the one-click verdict. See triage.h.
 *
 * Runs on the HTTP thread only; every database call goes through t->pg
 * under t->mu. The page is plain HTML with one inline SVG (the series plot;
 * for a canary rollback, the deciding metric's confidence sequence,
 * recomputed from the canary's stored windows by the canary's own rule,
 * services/canary/canary.c over common/pw_stats.c) and one form, which needs no script: it carries a verdict token for each
 * outcome and owner it offers, and the browser posts the chosen pair.
 */
#include "triage.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "canary.h"
#include "pager.h"
#include "perfwatch/v1/page.pb-c.h"
#include "pw_time.h"
#include "pw_topics.h"
#include "pw_plot.h"

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

pw_status pager_triage_init(pager_triage *t, pw_service *svc, char *errbuf, size_t errlen)
{
	const pw_config *cfg = pw_service_config(svc);
	memset(t, 0, sizeof *t);
	t->lg = pw_service_log(svc);
	const char *key = pw_config_get_str(cfg, "pager.triage_key");
	size_t kl = strlen(key);
	if (kl < 16)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
		               "pager.triage_key is %s: set PW_PAGER_TRIAGE_KEY to a secret of at least 16 bytes "
		               "(it signs the triage links)", kl ? "shorter than 16 bytes" : "empty");
	if (kl > sizeof t->key)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen, "pager.triage_key is longer than %zu bytes", sizeof t->key);
	memcpy(t->key, key, kl);
	t->keylen = kl;
	t->ttl_s = pw_config_get_duration_ms(cfg, "pager.triage.link_ttl") / 1000;
	const char *base = pw_config_get_str(cfg, "pager.triage.base_url");
	if (base[0])
		copy(t->base_url, sizeof t->base_url, base);
	else {
		char host[256];
		int port = 0;
		pw_status st = pw_http_listen_from_config(cfg, host, sizeof host, &port, errbuf, errlen);
		if (st != PW_OK)
			return st;
		if (!host[0] || strcmp(host, "0.0.0.0") == 0)
			copy(host, sizeof host, "127.0.0.1");
		snprintf(t->base_url, sizeof t->base_url, "http://%s:%d", host, pw_http_port(pw_service_http(svc)));
	}
	size_t n = strlen(t->base_url);
	while (n > 0 && t->base_url[n - 1] == '/')
		t->base_url[--n] = 0;
	pw_status st = pw_pg_new(&t->pg, pw_config_get_str(cfg, "pg.dsn"), NULL, t->lg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (pthread_mutex_init(&t->mu, NULL) != 0)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "triage: mutex");
	t->mu_ready = true;
	return PW_OK;
}

void pager_triage_release(pager_triage *t)
{
	if (!t)
		return;
	pw_pg_free(t->pg);
	t->pg = NULL;
	if (t->mu_ready)
		pthread_mutex_destroy(&t->mu);
	t->mu_ready = false;
	memset(t->key, 0, sizeof t->key);
}

static bool id_ok(const char *s)
{
	if (!*s)
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
		      *c == '_' || *c == '.'))
			return false;
	return true;
}

pw_status pager_triage_url(const pager_triage *t, const char *page_id, const char *action, int64_t now_s,
                           char *buf, size_t len, char *errbuf, size_t errlen)
{
	char rel[512];
	if (pw_link_path(t->key, t->keylen, page_id, action, now_s + t->ttl_s, rel, sizeof rel) != PW_OK)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "cannot sign a triage link for page \"%s\"", page_id);
	int n = snprintf(buf, len, "%s%s", t->base_url, rel);
	if (n < 0 || (size_t)n >= len)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "triage link of page \"%s\" is too long", page_id);
	return PW_OK;
}

static void html(FILE *f, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
}

static void head(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", f);
	html(f, title);
	fputs("</title><style>body{font-family:sans-serif;margin:1.5em;max-width:70em}"
	      "pre{background:#f4f4f4;padding:.6em;overflow:auto}table{border-collapse:collapse}"
	      "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}"
	      ".verdict button{padding:.5em 1em;margin-right:1em;border:1px solid #333;color:#000}"
	      "#btn-true{background:#fdd}#btn-false{background:#dfd}"
	      ".banner{padding:.6em;background:#ffd;border:1px solid #cc9}</style></head><body>\n", f);
}

/* A refusal page (403 a bad signature or CSRF token, 400 a bad field, 404 no such page); counted by reason. */
static void refuse(pager_triage *t, pw_http_reply *rep, int status, const char *reason, const char *page,
                   const char *why)
{
	pw_metric_inc(t->m_refused, (const char *const[]){reason});
	pw_log_warn(t->lg, "triage request for page \"%.160s\" refused (%s): %s", page, reason, why);
	rep->status = status;
	rep->content_type = "text/html; charset=utf-8";
	head(rep->body, status == 404 ? "no such page" : "triage request refused");
	fprintf(rep->body, "<h1 id=\"refused\">%d: %s</h1>\n<p id=\"reason\">", status,
	        status == 404 ? "no such page" : status == 403 ? "triage link refused" : "triage request refused");
	html(rep->body, why);
	fputs("</p><p>Nothing was recorded. Open the newest link of the page, or ask the pager for a new one.</p>"
	      "</body></html>\n", rep->body);
}

static PGresult *q(pager_triage *t, const char *sql, int n, const char *const *v)
{
	char err[512];
	PGresult *r = NULL;
	if (pw_pg_exec(t->pg, sql, n, v, &r, err, sizeof err) != PW_OK) {
		pw_log_warn(t->lg, "triage: %s", err);
		return NULL;
	}
	return r;
}

/* The series plot: nightly points (all points when the series has no nightlies), the band, changepoints. */
static void plot(pager_triage *t, FILE *f, const char *series_key)
{
	PGresult *rs = NULL, *rp = NULL, *rb = NULL, *rc = NULL;
	pw_plot_point *pts = NULL;
	pw_plot_changepoint *cps = NULL;
	rs = q(t, "SELECT series_id::text, unit FROM perfwatch.series WHERE series_key = $1", 1,
	       (const char *const[]){series_key});
	if (!rs || PQntuples(rs) != 1) {
		fputs("<p>(no stored points for this series)</p>\n", f);
		goto out;
	}
	const char *id = PQgetvalue(rs, 0, 0);
	rp = q(t, "SELECT (extract(epoch FROM measured_at) * 1e6)::bigint, value FROM ("
	          "SELECT measured_at, value FROM perfwatch.samples WHERE series_id = $1::bigint"
	          "  AND (build_kind = 'nightly' OR NOT EXISTS (SELECT 1 FROM perfwatch.samples s2"
	          "       WHERE s2.series_id = $1::bigint AND s2.build_kind = 'nightly'))"
	          " ORDER BY measured_at DESC LIMIT 400) p ORDER BY measured_at",
	       1, (const char *const[]){id});
	if (!rp || PQntuples(rp) == 0) {
		fputs("<p>(no stored points for this series)</p>\n", f);
		goto out;
	}
	size_t n = (size_t)PQntuples(rp);
	pts = calloc(n, sizeof *pts);
	if (!pts)
		goto out;
	for (size_t i = 0; i < n; i++) {
		pts[i].ts_us = strtoll(PQgetvalue(rp, (int)i, 0), NULL, 10);
		pts[i].value = strtod(PQgetvalue(rp, (int)i, 1), NULL);
	}
	pw_plot_series s = {.title = series_key, .unit = PQgetvalue(rs, 0, 1), .points = pts, .npoints = n};
	rb = q(t, "SELECT median, band_lo, band_hi FROM perfwatch.latest_baselines WHERE series_id = $1::bigint", 1,
	       (const char *const[]){id});
	if (rb && PQntuples(rb) == 1 && !PQgetisnull(rb, 0, 1)) {
		s.has_band = true;
		s.median = strtod(PQgetvalue(rb, 0, 0), NULL);
		s.band_lo = strtod(PQgetvalue(rb, 0, 1), NULL);
		s.band_hi = strtod(PQgetvalue(rb, 0, 2), NULL);
	}
	rc = q(t, "SELECT (extract(epoch FROM shift_at) * 1e6)::bigint, last_clean_cl, first_shifted_cl, delta_pct,"
	          " direction = 'regression', annotation FROM perfwatch.changepoints WHERE series_id = $1::bigint"
	          " ORDER BY shift_at LIMIT 16",
	       1, (const char *const[]){id});
	if (rc && PQntuples(rc) > 0 && (cps = calloc((size_t)PQntuples(rc), sizeof *cps))) {
		for (int i = 0; i < PQntuples(rc); i++) {
			cps[i].ts_us = strtoll(PQgetvalue(rc, i, 0), NULL, 10);
			cps[i].cl_lo = PQgetvalue(rc, i, 1);
			cps[i].cl_hi = PQgetvalue(rc, i, 2);
			cps[i].delta_pct = strtod(PQgetvalue(rc, i, 3), NULL);
			cps[i].regression = PQgetvalue(rc, i, 4)[0] == 't';
			cps[i].annotation = PQgetvalue(rc, i, 5);
		}
		s.changepoints = cps;
		s.nchangepoints = (size_t)PQntuples(rc);
	}
	char err[256];
	fputs("<div id=\"plot\">", f);
	if (pw_plot_svg(f, &s, 900, 320, err, sizeof err) != PW_OK) {
		fputs("<p>(plot: ", f);
		html(f, err);
		fputs(")</p>", f);
	}
	fputs("</div>\n", f);
out:
	free(cps);
	free(pts);
	PQclear(rc);
	PQclear(rb);
	PQclear(rp);
	PQclear(rs);
}

/*
 * The canary's evidence of a rollback page: the family's decision as pw-canary
 * stored it, and the deciding metric's confidence sequence over its windows up
 * to the decision, recomputed by replaying the family's stored windows in
 * their order through pw_canary_family_add with the family's stored options
 * (what pw-canary does after a restart: the same numbers, bit for bit), drawn
 * by pw_plot_cs_svg. The recomputed decision is checked against the stored one.
 */
static void canary_evidence(pager_triage *t, FILE *f, const char *rollout, const char *family)
{
	const char *const key[] = {rollout, family};
	PGresult *rf = NULL, *rw = NULL;
	pw_plot_cs_point *pts = NULL;
	pw_canary_family fam;
	bool fam_ok = false;
	rf = q(t, "SELECT alpha, mde_pct, tolerance_pct, pilot_windows, horizon_s, decision, coalesce(metric, ''),"
	          " effect_pct, lo_pct, hi_pct, coalesce(decision_windows, 0), coalesce(rollback_artifact, ''), release,"
	          " previous_release, family_kind, to_char(decided_at, 'YYYY-MM-DD HH24:MI:SS \"UTC\"')"
	          " FROM perfwatch.canary_families WHERE rollout_id = $1 AND family = $2",
	       2, key);
	if (!rf || PQntuples(rf) != 1) {
		fputs("<p>(the canary's windows of this rollout are not stored in this database)</p>\n", f);
		goto out;
	}
	pw_canary_metric dm;
	if (!pw_canary_metric_parse(PQgetvalue(rf, 0, 6), &dm)) {
		fputs("<p>(the canary recorded no deciding metric)</p>\n", f);
		goto out;
	}
	uint32_t dwin = (uint32_t)strtoul(PQgetvalue(rf, 0, 10), NULL, 10);
	fputs("<table id=\"canary-evidence\">\n<tr><th>rollout</th><td id=\"canary-rollout\">", f);
	html(f, rollout);
	fputs("</td></tr>\n<tr><th>family</th><td id=\"canary-family\">", f);
	html(f, family);
	fputs(" (", f);
	html(f, PQgetvalue(rf, 0, 14));
	fputs(")</td></tr>\n<tr><th>decision</th><td id=\"canary-decision\">", f);
	html(f, PQgetvalue(rf, 0, 5));
	fputs(" at ", f);
	html(f, PQgetvalue(rf, 0, 15));
	fputs("</td></tr>\n<tr><th>metric</th><td id=\"canary-metric\">", f);
	html(f, PQgetvalue(rf, 0, 6));
	fprintf(f, "</td></tr>\n<tr><th>effect</th><td id=\"canary-effect\">%+.3f%% [%+.3f%%, %+.3f%%]</td></tr>\n"
	           "<tr><th>windows</th><td id=\"canary-windows\">%u</td></tr>\n<tr><th>release N / N−1</th><td>",
	        strtod(PQgetvalue(rf, 0, 7), NULL), strtod(PQgetvalue(rf, 0, 8), NULL), strtod(PQgetvalue(rf, 0, 9), NULL),
	        dwin);
	html(f, PQgetvalue(rf, 0, 12));
	fputs(" / ", f);
	html(f, PQgetvalue(rf, 0, 13));
	fputs("</td></tr>\n<tr><th>rolled back to</th><td id=\"canary-artifact\">", f);
	html(f, PQgetvalue(rf, 0, 11));
	fprintf(f, "</td></tr>\n<tr><th>alpha, MDE, tolerance</th><td>%g, %g%%, %g%%</td></tr>\n</table>\n",
	        strtod(PQgetvalue(rf, 0, 0), NULL), strtod(PQgetvalue(rf, 0, 1), NULL), strtod(PQgetvalue(rf, 0, 2), NULL));

	if (pw_canary_family_init(&fam, strtod(PQgetvalue(rf, 0, 0), NULL), strtod(PQgetvalue(rf, 0, 1), NULL),
	                          strtod(PQgetvalue(rf, 0, 2), NULL), strtoul(PQgetvalue(rf, 0, 3), NULL, 10),
	                          strtoll(PQgetvalue(rf, 0, 4), NULL, 10) * 1000000) != PW_OK) {
		fputs("<p>(the family's stored options are refused by the confidence sequence)</p>\n", f);
		goto out;
	}
	fam_ok = true;
	rw = q(t, "SELECT metric, (extract(epoch FROM window_start) * 1e6)::bigint, window_s, canary_value, baseline_value"
	          " FROM perfwatch.canary_windows WHERE rollout_id = $1 AND family = $2 ORDER BY seq",
	       2, key);
	size_t n = rw ? (size_t)PQntuples(rw) : 0, np = 0;
	if (n == 0 || !(pts = calloc(n, sizeof *pts))) {
		fputs("<p>(no stored windows)</p>\n", f);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		pw_canary_metric m;
		if (!pw_canary_metric_parse(PQgetvalue(rw, (int)i, 0), &m) ||
		    pw_canary_family_add(&fam, m, strtoll(PQgetvalue(rw, (int)i, 1), NULL, 10),
		                         (uint32_t)strtoul(PQgetvalue(rw, (int)i, 2), NULL, 10),
		                         strtod(PQgetvalue(rw, (int)i, 3), NULL), strtod(PQgetvalue(rw, (int)i, 4), NULL),
		                         NULL) != PW_OK)
			continue; /* pw-canary stored only windows it took: nothing is refused here */
		const pw_canary_metric_state *ms = &fam.m[dm];
		if (m != dm || ms->last.n_tested == 0 || (dwin && ms->windows > dwin))
			continue;
		pts[np++] = (pw_plot_cs_point){(uint32_t)ms->windows, ms->last.effect_pct, ms->last.lo_pct, ms->last.hi_pct};
	}
	bool same = fam.final && fam.metric == dm && np > 0 && pts[np - 1].window == dwin &&
	            fabs(pts[np - 1].effect_pct - strtod(PQgetvalue(rf, 0, 7), NULL)) < 1e-9 &&
	            fabs(pts[np - 1].lo_pct - strtod(PQgetvalue(rf, 0, 8), NULL)) < 1e-9 &&
	            fabs(pts[np - 1].hi_pct - strtod(PQgetvalue(rf, 0, 9), NULL)) < 1e-9;
	fprintf(f, "<p id=\"canary-recomputed\" data-same=\"%s\">The %s sequence recomputed from %zu stored windows "
	           "of the family: %zu tested windows up to the decision%s.</p>\n",
	        same ? "true" : "false", PQgetvalue(rf, 0, 6), n, np,
	        same ? ", ending on the stored decision's effect and interval" : "; <b>it differs from the stored decision</b>");
	char title[600], err[256];
	snprintf(title, sizeof title, "%.200s %s, rollout %.200s: estimate and %g%% confidence sequence per window", family,
	         PQgetvalue(rf, 0, 6), rollout, 100 * (1 - strtod(PQgetvalue(rf, 0, 0), NULL)));
	pw_plot_cs c = {.title = title, .points = pts, .npoints = np, .tolerance_pct = fam.tolerance_pct,
	                .mde_pct = fam.mde_pct, .higher_is_better = pw_canary_metric_direction(dm) == PW_COMPARE_HIGHER_IS_BETTER,
	                .decided_window = dwin};
	fputs("<div id=\"canary-plot\">", f);
	if (pw_plot_cs_svg(f, &c, 900, 340, err, sizeof err) != PW_OK) {
		fputs("<p>(plot: ", f);
		html(f, err);
		fputs(")</p>", f);
	}
	fputs("</div>\n", f);
out:
	if (fam_ok)
		pw_canary_family_release(&fam);
	free(pts);
	PQclear(rw);
	PQclear(rf);
}

static void op_diff(pager_triage *t, FILE *f, const char *page_id)
{
	PGresult *ra = q(t, "SELECT a.alert_id, a.top_op_family, round(a.predicted_delta_pct::numeric, 2),"
	                    " round(a.measured_delta_pct::numeric, 2), round(a.residual_us::numeric, 0), a.hlo_diff"
	                    " FROM perfwatch.attributions a JOIN perfwatch.page_alerts pa USING (alert_id)"
	                    ""
	                    " WHERE pa.page_id = $1 ORDER BY abs(a.measured_delta_pct) DESC NULLS LAST LIMIT 1",
	                 1, (const char *const[]){page_id});
	fputs("<h2>Op diff</h2>\n<div id=\"opdiff\">", f);
	if (!ra || PQntuples(ra) == 0) {
		fputs("<p>(no attribution yet)</p></div>\n", f);
		PQclear(ra);
		return;
	}
	fputs("<p>alert ", f);
	html(f, PQgetvalue(ra, 0, 0));
	fputs(": top op family <b>", f);
	html(f, PQgetvalue(ra, 0, 1));
	fprintf(f, "</b>, predicted %s%%, measured %s%%, residual %s µs</p>\n", PQgetvalue(ra, 0, 2),
	        PQgetvalue(ra, 0, 3), PQgetvalue(ra, 0, 4));
	PGresult *ro = q(t, "SELECT op_name, change, calls, round(before_us::numeric, 1), round(after_us::numeric, 1),"
	                    " round(delta_us::numeric, 1) FROM perfwatch.attribution_ops WHERE alert_id = $1"
	                    " ORDER BY rank LIMIT 12",
	                 1, (const char *const[]){PQgetvalue(ra, 0, 0)});
	fputs("<table><tr><th>op</th><th>change</th><th>calls</th><th>before µs</th><th>after µs</th><th>Δ µs</th></tr>\n",
	      f);
	for (int i = 0; ro && i < PQntuples(ro); i++) {
		fputs("<tr>", f);
		for (int c = 0; c < 6; c++) {
			fputs("<td>", f);
			html(f, PQgetvalue(ro, i, c));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n<h3>HLO diff</h3><pre id=\"hlodiff\">", f);
	html(f, PQgetvalue(ra, 0, 5));
	fputs("</pre></div>\n", f);
	PQclear(ro);
	PQclear(ra);
}

static void bisection_log(pager_triage *t, FILE *f, const char *page_id)
{
	PGresult *rb = q(t, "SELECT b.bisection_id, b.range_lo, b.range_hi, b.n_cls, b.status, b.culprit, b.culprit_owner,"
	                    " b.confidence, b.unit, b.started_at FROM perfwatch.bisections b"
	                    " WHERE b.alert_id IN (SELECT alert_id FROM perfwatch.page_alerts WHERE page_id = $1)"
	                    "    OR b.culprit <> '' AND b.culprit = (SELECT p.payload->'bisection'->>'culprit'"
	                    "                                         FROM perfwatch.pages p WHERE p.page_id = $1)"
	                    " ORDER BY (b.status = 'done') DESC, b.started_at DESC LIMIT 1",
	                 1, (const char *const[]){page_id});
	fputs("<h2>Bisection log</h2>\n<pre id=\"bisectlog\">", f);
	if (!rb || PQntuples(rb) == 0) {
		fputs("(no bisection yet)</pre>\n", f);
		PQclear(rb);
		return;
	}
	fprintf(f, "%s: range %s..%s (%s CLs), status %s\n", PQgetvalue(rb, 0, 0), PQgetvalue(rb, 0, 1),
	        PQgetvalue(rb, 0, 2), PQgetvalue(rb, 0, 3), PQgetvalue(rb, 0, 4));
	PGresult *rs = q(t, "SELECT to_char(coalesce(finished_at, started_at) - $2::timestamptz, 'HH24:MI'), purpose, cl,"
	                    " coalesce(round(median::numeric, 2)::text, '…'), coalesce(round(spread::numeric, 2)::text, ''),"
	                    " upper(outcome), range_lo, range_hi, coalesce(range_n_cls::text, '')"
	                    " FROM perfwatch.bisection_steps WHERE bisection_id = $1 ORDER BY step_index",
	                 2, (const char *const[]){PQgetvalue(rb, 0, 0), PQgetvalue(rb, 0, 9)});
	for (int i = 0; rs && i < PQntuples(rs); i++) {
		char line[768];
		snprintf(line, sizeof line, "[%s] %-18s build xla @ %s … %s %s ±%s → %s", PQgetvalue(rs, i, 0),
		         PQgetvalue(rs, i, 1), PQgetvalue(rs, i, 2), PQgetvalue(rb, 0, 8), PQgetvalue(rs, i, 3),
		         PQgetvalue(rs, i, 4), PQgetvalue(rs, i, 5));
		html(f, line);
		if (PQgetvalue(rs, i, 6)[0]) {
			snprintf(line, sizeof line, "  range → (%s, %s], %s CLs", PQgetvalue(rs, i, 6), PQgetvalue(rs, i, 7),
			         PQgetvalue(rs, i, 8));
			html(f, line);
		}
		fputc('\n', f);
	}
	if (PQgetvalue(rb, 0, 5)[0]) {
		char line[512];
		snprintf(line, sizeof line, "culprit = %s (author: %s) · confidence: %s", PQgetvalue(rb, 0, 5),
		         PQgetvalue(rb, 0, 6), PQgetvalue(rb, 0, 7));
		html(f, line);
		fputc('\n', f);
	}
	fputs("</pre>\n", f);
	PQclear(rs);
	PQclear(rb);
}

static const char *outcome_name(bool truth)
{
	return truth ? "true_regression" : "false_regression";
}

/* Records one verdict; *recorded false when this exact click was recorded before. */
static pw_status record(pager_triage *t, const char *page_id, bool truth, const char *owner, const char *by,
                        const char *token, bool *recorded, char *errbuf, size_t errlen)
{
	int64_t now = pw_now_us();
	pw_status st = pw_pg_begin(t->pg, errbuf, errlen);
	PGresult *r = NULL;
	*recorded = false;
	if (st != PW_OK)
		return st;
	char nowbuf[32];
	snprintf(nowbuf, sizeof nowbuf, "%" PRId64, now);
	const char *v[] = {page_id, outcome_name(truth), owner, by, nowbuf, token};
	st = pw_pg_exec(t->pg,
	                "INSERT INTO perfwatch.triage_verdict_log (page_id, outcome, routed_to, triager, decided_at,"
	                " action_token) VALUES ($1, $2, $3, $4, to_timestamp($5::double precision / 1e6), $6)"
	                " ON CONFLICT (action_token) DO NOTHING RETURNING id",
	                6, v, &r, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	bool fresh = PQntuples(r) == 1;
	PQclear(r);
	r = NULL;
	if (fresh) {
		st = pw_pg_exec(t->pg,
		                "INSERT INTO perfwatch.triage_verdicts (page_id, outcome, routed_to, triager, decided_at)"
		                " VALUES ($1, $2, $3, $4, to_timestamp($5::double precision / 1e6))"
		                " ON CONFLICT (page_id) DO UPDATE SET outcome = EXCLUDED.outcome,"
		                "  routed_to = EXCLUDED.routed_to, triager = EXCLUDED.triager, decided_at = EXCLUDED.decided_at"
		                " WHERE triage_verdicts.decided_at <= EXCLUDED.decided_at",
		                5, v, NULL, errbuf, errlen);
		if (st != PW_OK)
			goto fail;
		Perfwatch__V1__TriageVerdict tv = PERFWATCH__V1__TRIAGE_VERDICT__INIT;
		tv.page_id = (char *)page_id;
		tv.outcome = truth ? PERFWATCH__V1__TRIAGE_OUTCOME__TRIAGE_OUTCOME_TRUE_REGRESSION
		                   : PERFWATCH__V1__TRIAGE_OUTCOME__TRIAGE_OUTCOME_FALSE_REGRESSION;
		tv.routed_to = strcmp(owner, "compiler") == 0 ? PERFWATCH__V1__TRIAGE_OWNER__TRIAGE_OWNER_COMPILER
		               : strcmp(owner, "model") == 0  ? PERFWATCH__V1__TRIAGE_OWNER__TRIAGE_OWNER_MODEL
		               : strcmp(owner, "infra") == 0  ? PERFWATCH__V1__TRIAGE_OWNER__TRIAGE_OWNER_INFRA
		                                              : PERFWATCH__V1__TRIAGE_OWNER__TRIAGE_OWNER_UNSPECIFIED;
		tv.triager = (char *)by;
		tv.note = (char *)"";
		tv.decided_unix_us = now;
		uint8_t buf[1024];
		size_t len = perfwatch__v1__triage_verdict__get_packed_size(&tv);
		if (len > sizeof buf) {
			st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "triage verdict too large");
			goto fail;
		}
		perfwatch__v1__triage_verdict__pack(&tv, buf);
		char ref[600];
		snprintf(ref, sizeof ref, "triage:%s:%" PRId64, page_id, now);
		if ((st = pw_outbox_add(t->pg, "pager", ref, PW_TOPIC_TRIAGE, page_id, buf, len, errbuf, errlen)) != PW_OK)
			goto fail;
	}
	if ((st = pw_pg_commit(t->pg, errbuf, errlen)) != PW_OK)
		return st;
	*recorded = fresh;
	return PW_OK;
fail:
	PQclear(r);
	pw_pg_rollback(t->pg, NULL, 0);
	return st;
}

/*
 * The verdict form: the owner (the routed one, or the link's, chosen), the
 * triager, one button per outcome. For each outcome and owner the page mints
 * the verdict token of exactly that choice and its CSRF token
 * (pw_verdict_sign, pw_csrf_sign: t_<outcome>_<owner>, c_<outcome>_<owner>),
 * under a nonce of this showing: the POST carries the chosen pair, so every
 * field that changes what is recorded is signed, the form needs no script,
 * and a token records one verdict once.
 */
static bool form(pager_triage *t, FILE *f, const char *page_id, int64_t exp, const char *owner, const char *proposed)
{
	static const char *const owners[] = {"compiler", "model", "infra", "unspecified"};
	static const char *const outcomes[] = {"true", "false"};
	unsigned char raw[16];
	char nonce[33];
	if (RAND_bytes(raw, sizeof raw) != 1)
		return false;
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(nonce + 2 * i, 3, "%02x", raw[i]);
	fputs("<form id=\"verdict\" class=\"verdict\" method=\"post\" action=\"/triage\">\n", f);
	fprintf(f, "<input type=\"hidden\" name=\"page\" value=\"%s\"><input type=\"hidden\" name=\"exp\" value=\"%lld\">"
	           "<input type=\"hidden\" name=\"nonce\" value=\"%s\">\n",
	        page_id, (long long)exp, nonce);
	for (size_t o = 0; o < 2; o++)
		for (size_t w = 0; w < 4; w++) {
			char tok[PW_LINK_SIG_HEX], csrf[PW_LINK_SIG_HEX];
			if (pw_verdict_sign(t->key, t->keylen, page_id, outcomes[o], owners[w], exp, nonce, tok) != PW_OK ||
			    pw_csrf_sign(t->key, t->keylen, tok, csrf) != PW_OK)
				return false;
			fprintf(f, "<input type=\"hidden\" name=\"t_%s_%s\" value=\"%s\"><input type=\"hidden\" name=\"c_%s_%s\" "
			           "value=\"%s\">\n", outcomes[o], owners[w], tok, outcomes[o], owners[w], csrf);
		}
	fputs("<label>owner <select id=\"owner\" name=\"owner\">", f);
	for (size_t w = 0; w < 4; w++)
		fprintf(f, "<option%s>%s</option>", strcmp(owners[w], owner) == 0 ? " selected" : "", owners[w]);
	fputs("</select></label>\n<label>your name <input id=\"by\" name=\"by\" maxlength=\"64\" "
	      "pattern=\"[A-Za-z0-9][A-Za-z0-9._@+\\-]{0,63}\" placeholder=\"login or e-mail\"></label>\n", f);
	fprintf(f, "<button id=\"btn-true\" type=\"submit\" name=\"outcome\" value=\"true\"%s>True regression</button>"
	           "<button id=\"btn-false\" type=\"submit\" name=\"outcome\" value=\"false\"%s>False regression</button>\n"
	           "</form>\n",
	        strcmp(proposed, "true") == 0 ? " autofocus" : "", strcmp(proposed, "false") == 0 ? " autofocus" : "");
	return true;
}

/* Whether page_id is a page (*exists); false when the database could not say. */
static bool page_exists(pager_triage *t, const char *page_id, bool *exists)
{
	PGresult *r = q(t, "SELECT 1 FROM perfwatch.pages WHERE page_id = $1", 1, (const char *const[]){page_id});
	if (!r)
		return false;
	*exists = PQntuples(r) == 1;
	PQclear(r);
	return true;
}

/*
 * The page: summary, current verdict, the verdict form (whose tokens expire
 * with exp), plot, op diff, bisection log, payload. proposed is the outcome a
 * one-click link proposed ("" for a view link); owner the one preselected
 * ("" for the routed owner).
 */
static void view(pager_triage *t, FILE *f, const char *page_id, const char *banner, int64_t exp, const char *proposed,
                 const char *owner)
{
	PGresult *r = q(t, "SELECT summary, severity, route, jsonb_pretty(payload), payload->'series'->>'model',"
	                   " payload->>'alert_id', coalesce(tv.outcome, ''), coalesce(tv.routed_to, ''),"
	                   " to_char(p.created_at, 'YYYY-MM-DD HH24:MI:SS \"UTC\"'), p.budget_pressure,"
	                   " coalesce((SELECT series_key FROM perfwatch.alerts a WHERE a.alert_id = p.payload->>'alert_id'),"
	                   "  concat_ws('/', p.payload->'series'->>'model', p.payload->'series'->>'hlo_fingerprint',"
	                   "   p.payload->'series'->>'platform', p.payload->'series'->>'config', p.payload->'series'->>'metric')),"
	                   " p.resolved_at IS NOT NULL, (SELECT owner FROM perfwatch.pager_incidents i"
	                   "                              WHERE i.incident_id = p.incident_id),"
	                   " p.payload->'canary'->>'rollout_id', p.payload->'canary'->>'family'"
	                   " FROM perfwatch.pages p LEFT JOIN perfwatch.triage_verdicts tv USING (page_id)"
	                   " WHERE p.page_id = $1",
	                1, (const char *const[]){page_id});
	if (!r || PQntuples(r) != 1) { /* (gone since the caller looked) */
		head(f, "page not found");
		fputs("<h1>page not found</h1></body></html>\n", f);
		PQclear(r);
		return;
	}
	head(f, PQgetvalue(r, 0, 0));
	fputs("<h1 id=\"summary\">", f);
	html(f, PQgetvalue(r, 0, 0));
	fputs("</h1>\n", f);
	if (banner) {
		fputs("<p class=\"banner\" id=\"recorded\">", f);
		html(f, banner);
		fputs("</p>\n", f);
	}
	fprintf(f, "<p>page <code id=\"page-id\">%s</code> · severity %s · route ", page_id, PQgetvalue(r, 0, 1));
	html(f, PQgetvalue(r, 0, 2));
	fputs(" · raised ", f);
	html(f, PQgetvalue(r, 0, 8));
	if (PQgetvalue(r, 0, 9)[0] == 't')
		fputs(" · <b>false-page budget under pressure</b>", f);
	if (PQgetvalue(r, 0, 11)[0] == 't')
		fputs(" · resolved", f);
	fputs("</p>\n<p>current verdict: <b id=\"current-verdict\">", f);
	html(f, PQgetvalue(r, 0, 6)[0] ? PQgetvalue(r, 0, 6) : "none yet");
	if (PQgetvalue(r, 0, 7)[0]) {
		fputs("</b>, owner <b id=\"current-owner\">", f);
		html(f, PQgetvalue(r, 0, 7));
	}
	fputs("</b></p>\n", f);

	const char *routed = owner && owner[0] ? owner : PQgetvalue(r, 0, 12)[0] ? PQgetvalue(r, 0, 12) : "unspecified";
	if (proposed[0]) {
		fprintf(f, "<p class=\"banner\" id=\"proposed\">This link proposes: %s regression, owner ",
		        strcmp(proposed, "true") == 0 ? "true" : "false");
		html(f, routed);
		fputs(". Nothing is recorded until you press its button.</p>\n", f);
	}
	if (!form(t, f, page_id, exp, routed, proposed))
		fputs("<p>(the verdict form could not be made: no random bytes)</p>\n", f);
	if (!PQgetisnull(r, 0, 13)) {
		fputs("<h2>Canary evidence</h2>\n", f);
		canary_evidence(t, f, PQgetvalue(r, 0, 13), PQgetvalue(r, 0, 14));
	} else if (fputs("<h2>Series</h2>\n", f), !PQgetisnull(r, 0, 10))
		plot(t, f, PQgetvalue(r, 0, 10));
	else
		fputs("<p>(the alert's series is not stored)</p>\n", f);
	op_diff(t, f, page_id);
	bisection_log(t, f, page_id);
	fputs("<h2>Alert payload</h2>\n<pre id=\"payload\">", f);
	html(f, PQgetvalue(r, 0, 3));
	fputs("</pre>\n</body></html>\n", f);
	PQclear(r);
}

/* A field of the link's query (form false) or of the posted form into out; "" when absent, false when
 * malformed (too long, NUL, bad UTF-8). */
static bool field_of(const char *from, bool form, const char *name, char *out, size_t len)
{
	pw_status st = form ? pw_http_form_param(from, name, out, len, NULL, 0)
	                    : pw_http_query_param(from, name, out, len, NULL, 0);
	if (st == PW_ERR_NOT_FOUND)
		out[0] = 0;
	return st == PW_OK || st == PW_ERR_NOT_FOUND;
}

static bool field(const char *query, const char *name, char *out, size_t len)
{
	return field_of(query, false, name, out, len);
}

static bool form_field(const char *body, const char *name, char *out, size_t len)
{
	return field_of(body, true, name, out, len);
}

static bool digits(const char *s, long long *v)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return false;
	*v = strtoll(s, &end, 10);
	return *end == 0;
}

static const char *const check_reason[] = {"ok", "tampered", "expired", "malformed"};

/*
 * GET and HEAD of a signed link: the page and its verdict form, never a
 * change of state (a chat tool's link preview fetches the link, a HEAD
 * probes it). Every parameter of the link that a verdict records (action,
 * owner, by) is under its signature.
 */
static void on_show(pager_triage *t, const pw_http_request *req, pw_http_reply *rep)
{
	char page[160], action[16], exps[24], sig[80], owner[24], by[72];
	long long exp = 0;
	if (!req->query || !field(req->query, "page", page, sizeof page) || !field(req->query, "action", action, sizeof action) ||
	    !field(req->query, "exp", exps, sizeof exps) || !field(req->query, "sig", sig, sizeof sig) ||
	    !field(req->query, "owner", owner, sizeof owner) || !field(req->query, "by", by, sizeof by) || !id_ok(page) ||
	    !digits(exps, &exp) ||
	    (strcmp(action, "view") != 0 && strcmp(action, "true") != 0 && strcmp(action, "false") != 0)) {
		refuse(t, rep, 403, "malformed", req->query ? page : "", pw_link_check_text(PW_LINK_MALFORMED));
		return;
	}
	pw_link_check c = pw_link_verify_with(t->key, t->keylen, page, action, owner, by, exp, sig, (int64_t)time(NULL));
	if (c == PW_LINK_OK && ((owner[0] && !pw_triage_owner_ok(owner)) || (by[0] && !pw_triager_ok(by))))
		c = PW_LINK_MALFORMED; /* signed, but not what a link may carry */
	if (c != PW_LINK_OK) {
		refuse(t, rep, 403, check_reason[c], page, pw_link_check_text(c));
		return;
	}
	pthread_mutex_lock(&t->mu);
	bool exists = false;
	if (!page_exists(t, page, &exists)) {
		pthread_mutex_unlock(&t->mu);
		rep->status = 503;
		rep->content_type = "text/plain; charset=utf-8";
		fputs("the page's database is not reachable: try again\n", rep->body);
		return;
	}
	if (!exists) {
		pthread_mutex_unlock(&t->mu);
		refuse(t, rep, 404, "not_found", page, "this link is signed, but the pager has no such page");
		return;
	}
	rep->content_type = "text/html; charset=utf-8";
	view(t, rep->body, page, NULL, exp, strcmp(action, "view") == 0 ? "" : action, owner);
	pthread_mutex_unlock(&t->mu);
}

/*
 * POST of the verdict form: the outcome and owner chosen, with the verdict
 * token the page minted for exactly that choice and its CSRF token, and the
 * triager's name. Recorded once per token; nothing else changes state.
 */
static void on_verdict(pager_triage *t, const pw_http_request *req, pw_http_reply *rep)
{
	char page[160], exps[24], nonce[40], outcome[8], owner[24], by[72], tok[80], csrf[80], name[48];
	long long exp = 0;
	const char *b = req->body;
	if (strncmp(req->content_type, "application/x-www-form-urlencoded", 33) != 0) {
		refuse(t, rep, 400, "malformed", "", "the verdict is a form post (application/x-www-form-urlencoded)");
		return;
	}
	if (!form_field(b, "page", page, sizeof page) || !form_field(b, "exp", exps, sizeof exps) ||
	    !form_field(b, "nonce", nonce, sizeof nonce) || !form_field(b, "outcome", outcome, sizeof outcome) ||
	    !form_field(b, "owner", owner, sizeof owner) || !id_ok(page) || !digits(exps, &exp) || strlen(nonce) != 32 ||
	    (strcmp(outcome, "true") != 0 && strcmp(outcome, "false") != 0) || !pw_triage_owner_ok(owner)) {
		refuse(t, rep, 400, "malformed", page, "the verdict form is incomplete or malformed");
		return;
	}
	if (!form_field(b, "by", by, sizeof by) || (by[0] && !pw_triager_ok(by))) {
		refuse(t, rep, 400, "invalid_by", page,
		       "\"your name\" must be a login or an e-mail address: 1 to 64 of letters, digits and . _ @ + -");
		return;
	}
	snprintf(name, sizeof name, "t_%s_%s", outcome, owner);
	bool have_tok = form_field(b, name, tok, sizeof tok);
	snprintf(name, sizeof name, "c_%s_%s", outcome, owner);
	bool have_csrf = form_field(b, name, csrf, sizeof csrf);
	pw_link_check c = !have_tok || !have_csrf ? PW_LINK_MALFORMED
	                                          : pw_verdict_verify(t->key, t->keylen, page, outcome, owner, exp, nonce, tok,
	                                                              (int64_t)time(NULL));
	if (c != PW_LINK_OK) {
		refuse(t, rep, 403, check_reason[c], page,
		       c == PW_LINK_TAMPERED ? "the verdict's token does not match its page, outcome and owner: nothing recorded"
		                             : pw_link_check_text(c));
		return;
	}
	if (!pw_csrf_verify(t->key, t->keylen, tok, csrf)) {
		refuse(t, rep, 403, "csrf", page, "the form's CSRF token does not match its verdict token");
		return;
	}
	if (!by[0])
		copy(by, sizeof by, "triage-page");
	bool truth = strcmp(outcome, "true") == 0, exists = false;
	pthread_mutex_lock(&t->mu);
	if (page_exists(t, page, &exists) && !exists) {
		pthread_mutex_unlock(&t->mu);
		refuse(t, rep, 404, "not_found", page, "the pager has no such page");
		return;
	}
	char err[512], banner[256];
	bool recorded = false;
	pw_status st = record(t, page, truth, owner, by, tok, &recorded, err, sizeof err);
	if (st != PW_OK) {
		pthread_mutex_unlock(&t->mu);
		pw_log_warn(t->lg, "triage verdict for page \"%s\" not recorded: %s", page, err);
		rep->status = 503;
		rep->content_type = "text/html; charset=utf-8";
		head(rep->body, "verdict not recorded");
		fputs("<h1>verdict not recorded</h1><p>", rep->body);
		html(rep->body, err);
		fputs("</p></body></html>\n", rep->body);
		return;
	}
	if (recorded) {
		pw_metric_inc(t->m_verdicts, (const char *const[]){outcome_name(truth)});
		pw_log_info(t->lg, "triage verdict for page %s: %s, owner %s, by %s", page, outcome_name(truth), owner, by);
	}
	snprintf(banner, sizeof banner, "%s: %s regression, owner %s, by %s", recorded ? "recorded" : "already recorded",
	         outcome, owner, by);
	rep->content_type = "text/html; charset=utf-8";
	view(t, rep->body, page, banner, exp, "", owner);
	pthread_mutex_unlock(&t->mu);
}

static void on_triage(void *arg, const pw_http_request *req, pw_http_reply *rep)
{
	pager_triage *t = arg;
	if (strcmp(req->method, "POST") == 0)
		on_verdict(t, req, rep);
	else
		on_show(t, req, rep);
}

pw_status pager_triage_register(pager_triage *t, pw_metrics *reg, pw_http *http, char *errbuf, size_t errlen)
{
	pw_status st = pw_metrics_counter(reg, "perfwatch_pager_triage_verdicts_total",
	                                  "triage verdicts recorded, by outcome (true_regression, false_regression)",
	                                  (const char *const[]){"outcome", NULL}, &t->m_verdicts, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_counter(reg, "perfwatch_pager_triage_refused_total",
		                        "triage requests refused, by reason (tampered, expired, malformed, csrf, invalid_by, "
		                        "not_found)",
		                        (const char *const[]){"reason", NULL}, &t->m_refused, errbuf, errlen);
	if (st == PW_OK)
		st = pw_http_handle_form(http, "/triage", on_triage, t, errbuf, errlen);
	return st;
}
