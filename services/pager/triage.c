/*
 * triage.c: the triage page and the one-click verdict. See triage.h.
 *
 * Runs on the HTTP thread only; every database call goes through t->pg
 * under t->mu. The page is plain HTML with one inline SVG (the series plot)
 * and a few lines of script that put the chosen owner into the verdict
 * links; without script the links carry the routed owner.
 */
#include "triage.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* "/triage?page=..&action=..&exp=..&sig=.." (relative) into buf. */
static pw_status link_rel(const pager_triage *t, const char *page_id, const char *action, int64_t exp, char *buf,
                          size_t len)
{
	char sig[PW_LINK_SIG_HEX];
	if (!id_ok(page_id))
		return PW_ERR_INVALID;
	pw_status st = pw_link_sign(t->key, t->keylen, page_id, action, exp, sig);
	if (st != PW_OK)
		return st;
	int n = snprintf(buf, len, "/triage?page=%s&action=%s&exp=%lld&sig=%s", page_id, action, (long long)exp, sig);
	return n < 0 || (size_t)n >= len ? PW_ERR_INVALID : PW_OK;
}

pw_status pager_triage_url(const pager_triage *t, const char *page_id, const char *action, int64_t now_s,
                           char *buf, size_t len, char *errbuf, size_t errlen)
{
	char rel[512];
	if (link_rel(t, page_id, action, now_s + t->ttl_s, rel, sizeof rel) != PW_OK)
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
	      ".verdict a{display:inline-block;padding:.5em 1em;margin-right:1em;border:1px solid #333;"
	      "text-decoration:none;color:#000}#btn-true{background:#fdd}#btn-false{background:#dfd}"
	      ".banner{padding:.6em;background:#ffd;border:1px solid #cc9}</style></head><body>\n", f);
}

static void refuse(pw_http_reply *rep, const char *why)
{
	rep->status = 403;
	rep->content_type = "text/html; charset=utf-8";
	head(rep->body, "triage link refused");
	fputs("<h1 id=\"refused\">403: triage link refused</h1>\n<p id=\"reason\">", rep->body);
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

static void view(pager_triage *t, FILE *f, const char *page_id, const char *banner)
{
	PGresult *r = q(t, "SELECT summary, severity, route, jsonb_pretty(payload), payload->'series'->>'model',"
	                   " payload->>'alert_id', coalesce(tv.outcome, ''), coalesce(tv.routed_to, ''),"
	                   " to_char(p.created_at, 'YYYY-MM-DD HH24:MI:SS \"UTC\"'), p.budget_pressure,"
	                   " coalesce((SELECT series_key FROM perfwatch.alerts a WHERE a.alert_id = p.payload->>'alert_id'),"
	                   "  concat_ws('/', p.payload->'series'->>'model', p.payload->'series'->>'hlo_fingerprint',"
	                   "   p.payload->'series'->>'platform', p.payload->'series'->>'config', p.payload->'series'->>'metric')),"
	                   " p.resolved_at IS NOT NULL, (SELECT owner FROM perfwatch.pager_incidents i"
	                   "                              WHERE i.incident_id = p.incident_id)"
	                   " FROM perfwatch.pages p LEFT JOIN perfwatch.triage_verdicts tv USING (page_id)"
	                   " WHERE p.page_id = $1",
	                1, (const char *const[]){page_id});
	if (!r || PQntuples(r) != 1) {
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

	/* the buttons: each a signed link; the owner choice is appended by the script */
	int64_t exp = (int64_t)time(NULL) + t->ttl_s;
	char lt[512], lf[512];
	const char *owner = PQgetvalue(r, 0, 12);
	if (link_rel(t, page_id, "true", exp, lt, sizeof lt) == PW_OK &&
	    link_rel(t, page_id, "false", exp, lf, sizeof lf) == PW_OK) {
		fputs("<div class=\"verdict\"><label>owner <select id=\"owner\">", f);
		static const char *const owners[] = {"compiler", "model", "infra", "unspecified"};
		for (int i = 0; i < 4; i++)
			fprintf(f, "<option%s>%s</option>", strcmp(owners[i], owner) == 0 ? " selected" : "", owners[i]);
		const char *o = owner[0] ? owner : "unspecified";
		fputs("</select></label>\n<a id=\"btn-true\" href=\"", f);
		html(f, lt);
		fprintf(f, "&amp;owner=%s\">True regression</a><a id=\"btn-false\" href=\"", o);
		html(f, lf);
		fprintf(f, "&amp;owner=%s\">False regression</a></div>\n", o);
		fputs("<script>for (const id of ['btn-true', 'btn-false']) {"
		      " const a = document.getElementById(id);"
		      " a.addEventListener('click', () => { a.href = a.href.replace(/&owner=[a-z]*/, '&owner=' +"
		      " document.getElementById('owner').value); }); }</script>\n",
		      f);
	}
	fputs("<h2>Series</h2>\n", f);
	if (!PQgetisnull(r, 0, 10))
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

static void on_triage(void *arg, const char *path, const char *query, pw_http_reply *rep)
{
	pager_triage *t = arg;
	(void)path;
	char page[160] = "", action[16] = "", exps[24] = "", sig[80] = "", owner[24] = "unspecified", by[128] = "";
	if (!query || pw_http_query_get(query, "page", page, sizeof page) != PW_OK ||
	    pw_http_query_get(query, "action", action, sizeof action) != PW_OK ||
	    pw_http_query_get(query, "exp", exps, sizeof exps) != PW_OK ||
	    pw_http_query_get(query, "sig", sig, sizeof sig) != PW_OK) {
		pw_metric_inc(t->m_refused, (const char *const[]){"malformed"});
		refuse(rep, pw_link_check_text(PW_LINK_MALFORMED));
		return;
	}
	pw_http_query_get(query, "owner", owner, sizeof owner);
	if (pw_http_query_get(query, "by", by, sizeof by) != PW_OK || !by[0])
		copy(by, sizeof by, "triage-link");
	char *end;
	long long exp = strtoll(exps, &end, 10);
	pw_link_check c = *end || !id_ok(page) ? PW_LINK_MALFORMED
	                                       : pw_link_verify(t->key, t->keylen, page, action, exp, sig, (int64_t)time(NULL));
	bool truth = strcmp(action, "true") == 0;
	if (c == PW_LINK_OK && !truth && strcmp(action, "false") != 0 && strcmp(action, "view") != 0)
		c = PW_LINK_MALFORMED;
	if (c == PW_LINK_OK && strcmp(owner, "compiler") != 0 && strcmp(owner, "model") != 0 &&
	    strcmp(owner, "infra") != 0 && strcmp(owner, "unspecified") != 0)
		c = PW_LINK_MALFORMED;
	if (c != PW_LINK_OK) {
		static const char *const why[] = {"ok", "tampered", "expired", "malformed"};
		pw_metric_inc(t->m_refused, (const char *const[]){why[c]});
		pw_log_warn(t->lg, "triage link for page \"%s\" (%s) refused: %s", page, action, pw_link_check_text(c));
		refuse(rep, pw_link_check_text(c));
		return;
	}
	rep->content_type = "text/html; charset=utf-8";
	pthread_mutex_lock(&t->mu);
	char banner[256] = "";
	if (strcmp(action, "view") != 0) {
		char token[200], err[512];
		bool recorded = false;
		snprintf(token, sizeof token, "%s:%s", sig, owner);
		pw_status st = record(t, page, truth, owner, by, token, &recorded, err, sizeof err);
		if (st != PW_OK) {
			pthread_mutex_unlock(&t->mu);
			pw_log_warn(t->lg, "triage verdict for page \"%s\" not recorded: %s", page, err);
			rep->status = st == PW_ERR_PG ? 404 : 503;
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
		snprintf(banner, sizeof banner, "%s: %s regression, owner %s", recorded ? "recorded" : "already recorded",
		         truth ? "true" : "false", owner);
	}
	view(t, rep->body, page, banner[0] ? banner : NULL);
	pthread_mutex_unlock(&t->mu);
}

pw_status pager_triage_register(pager_triage *t, pw_metrics *reg, pw_http *http, char *errbuf, size_t errlen)
{
	pw_status st = pw_metrics_counter(reg, "perfwatch_pager_triage_verdicts_total",
	                                  "triage verdicts recorded, by outcome (true_regression, false_regression)",
	                                  (const char *const[]){"outcome", NULL}, &t->m_verdicts, errbuf, errlen);
	if (st == PW_OK)
		st = pw_metrics_counter(reg, "perfwatch_pager_triage_refused_total",
		                        "triage links refused, by reason (tampered, expired, malformed)",
		                        (const char *const[]){"reason", NULL}, &t->m_refused, errbuf, errlen);
	if (st == PW_OK)
		st = pw_http_handle(http, "/triage", on_triage, t, errbuf, errlen);
	return st;
}
