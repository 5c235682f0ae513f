/*
 * payload.c: the artifact-3 alert payload of an incident, as JSON, and the
 * HMAC-SHA256 signed, expiring triage links. See pager.h.
 */
#include "pager.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "pw_log.h"

static void jstr(FILE *out, const char *s)
{
	if (!s || !*s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	pw_json_escape(out, s);
	fputc('"', out);
}

static void jnum(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.6g", v);
	else
		fputs("null", out);
}

pw_status pw_payload_write(FILE *out, const pw_incident *inc, const pw_route *route,
                           bool budget_pressure)
{
	const pw_finding *f = &inc->primary;
	fputs("{\"alert_id\":", out);
	jstr(out, f->alert_id);
	fputs(",\"incident_id\":", out);
	jstr(out, inc->incident_id);
	fputs(",\"series\":{\"model\":", out);
	jstr(out, f->model);
	fputs(",\"hlo_fingerprint\":", out);
	jstr(out, f->hlo_fingerprint);
	fputs(",\"platform\":", out);
	jstr(out, f->platform);
	fputs(",\"config\":", out);
	jstr(out, f->config);
	fputs(",\"metric\":", out);
	jstr(out, f->metric);
	fputs("},\"baseline\":{\"median\":", out);
	jnum(out, f->base_median);
	fputs(",\"mad\":", out);
	jnum(out, f->base_mad);
	fprintf(out, ",\"n\":%u,\"window\":", f->base_n);
	jstr(out, f->base_window);
	fputs("},\"observed\":{\"median\":", out);
	jnum(out, f->obs_median);
	fprintf(out, ",\"n\":%u,\"release\":", f->obs_n);
	jstr(out, f->obs_release[0] ? f->obs_release : f->release_id);
	fputs("},\"delta\":{", out);
	if (f->abs_unit[0]) {
		fputs("\"abs_", out);
		pw_json_escape(out, f->abs_unit);
		fputs("\":", out);
	} else {
		fputs("\"abs\":", out); /* unit unknown */
	}
	jnum(out, f->delta_abs);
	fputs(",\"pct\":", out);
	jnum(out, f->delta_pct);
	fputs(",\"z_robust\":", out);
	jnum(out, f->z_robust);
	fputs(",\"fdr_q\":", out);
	jnum(out, f->fdr_q);
	fputs("},\"effect_gate\":{\"mde_pct\":", out);
	jnum(out, f->mde_pct);
	fprintf(out, ",\"passed_min_effect\":%s}", f->passed_min_effect ? "true" : "false");

	fputs(",\"scope\":{\"correlated_series\":[", out);
	size_t k = 0;
	for (size_t i = 0; i < f->n_correlated; i++, k++) {
		if (k)
			fputc(',', out);
		jstr(out, f->correlated[i]);
	}
	for (size_t i = 0; i < inc->n_scope; i++) {
		bool dup = false;
		for (size_t j = 0; j < f->n_correlated; j++)
			dup |= strcmp(f->correlated[j], inc->scope[i]) == 0;
		if (dup)
			continue;
		if (k++)
			fputc(',', out);
		jstr(out, inc->scope[i]);
	}
	fputs("],\"clean_series\":[", out);
	for (size_t i = 0; i < f->n_clean; i++) {
		if (i)
			fputc(',', out);
		jstr(out, f->clean[i]);
	}
	fputs("]},\"changepoint\":", out);
	if (f->cl_lo[0] || f->nightly[0]) {
		fputs("{\"nightly\":", out);
		jstr(out, f->nightly);
		fputs(",\"cl_range\":[", out);
		jstr(out, f->cl_lo);
		fputc(',', out);
		jstr(out, f->cl_hi);
		fprintf(out, "],\"n_cls\":%u}", f->n_cls);
	} else {
		fputs("null", out);
	}
	fputs(",\"bisection\":", out);
	if (f->bisect_status[0]) {
		fputs("{\"status\":", out);
		jstr(out, f->bisect_status);
		fputs(",\"culprit\":", out);
		jstr(out, f->culprit);
		fprintf(out, ",\"verified_adjacent_clean\":%s,\"cherry_pick_reproduced\":%s}",
		        f->verified_adjacent_clean ? "true" : "false",
		        f->cherry_pick_reproduced ? "true" : "false");
	} else {
		fputs("null", out);
	}
	fputs(",\"artifacts\":{\"op_diff\":", out);
	jstr(out, f->op_diff);
	fputs(",\"hlo_diff\":", out);
	jstr(out, f->hlo_diff);
	fputs(",\"trace_before\":", out);
	jstr(out, f->trace_before);
	fputs(",\"trace_after\":", out);
	jstr(out, f->trace_after);
	fputs("},\"verdict\":", out);
	if (f->verdict == PW_FV_NONE) {
		fputs("null", out);
	} else {
		char v[32];
		snprintf(v, sizeof v, "%s", pw_find_verdict_name(f->verdict));
		for (char *c = v; *c; c++)
			*c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
		jstr(out, v);
	}
	fputs(",\"owner_hint\":", out);
	jstr(out, f->owner_hint);
	fputs(",\"owner\":", out);
	jstr(out, pw_owner_name(route->owner));
	fputs(",\"page\":", out);
	jstr(out, route->action == PW_ACT_QUEUE ? "" : route->route);
	fputs(",\"action\":", out);
	jstr(out, pw_action_name(route->action));
	fputs(",\"severity\":", out);
	jstr(out, pw_severity_name(route->severity));
	fprintf(out, ",\"budget_pressure\":%s,\"alert_ids\":[", budget_pressure ? "true" : "false");
	for (size_t i = 0; i < inc->n_members; i++) {
		if (i)
			fputc(',', out);
		jstr(out, inc->members[i]);
	}
	fputs("]}", out);
	return ferror(out) ? PW_ERR_IO : PW_OK;
}

char *pw_payload_json(const pw_incident *inc, const pw_route *route, bool budget_pressure)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	pw_status st = pw_payload_write(m, inc, route, budget_pressure);
	if (fclose(m) != 0 || st != PW_OK) {
		free(buf);
		return NULL;
	}
	return buf;
}

const char *pw_link_check_text(pw_link_check c)
{
	switch (c) {
	case PW_LINK_OK: return "link valid";
	case PW_LINK_TAMPERED: return "this triage link's signature does not match: it was altered or signed with another key";
	case PW_LINK_EXPIRED: return "this triage link has expired: ask the pager for a fresh one";
	case PW_LINK_MALFORMED: break;
	}
	return "this triage link is malformed";
}

static pw_status link_mac(const unsigned char *key, size_t keylen, const char *page_id,
                          const char *action, int64_t expires_unix, unsigned char mac[32])
{
	char msg[512];
	unsigned int maclen = 0;
	if (!key || keylen == 0 || !page_id || !*page_id || !action)
		return PW_ERR_INVALID;
	/* '\n' cannot appear in a page id or action passed through a URL unescaped */
	int n = snprintf(msg, sizeof msg, "perfwatch-triage\n%s\n%s\n%lld", page_id, action,
	                 (long long)expires_unix);
	if (n < 0 || (size_t)n >= sizeof msg)
		return PW_ERR_INVALID;
	if (!HMAC(EVP_sha256(), key, (int)keylen, (const unsigned char *)msg, (size_t)n, mac,
	          &maclen) ||
	    maclen != 32)
		return PW_ERR_INVALID;
	return PW_OK;
}

pw_status pw_link_sign(const unsigned char *key, size_t keylen, const char *page_id,
                       const char *action, int64_t expires_unix, char sig[PW_LINK_SIG_HEX])
{
	unsigned char mac[32];
	pw_status st = link_mac(key, keylen, page_id, action, expires_unix, mac);
	if (st != PW_OK)
		return st;
	for (int i = 0; i < 32; i++)
		snprintf(sig + 2 * i, 3, "%02x", mac[i]);
	return PW_OK;
}

pw_link_check pw_link_verify(const unsigned char *key, size_t keylen, const char *page_id,
                             const char *action, int64_t expires_unix, const char *sig,
                             int64_t now_unix)
{
	char want[PW_LINK_SIG_HEX];
	if (!sig || strlen(sig) != 64 || !page_id || !*page_id)
		return PW_LINK_MALFORMED;
	if (pw_link_sign(key, keylen, page_id, action, expires_unix, want) != PW_OK)
		return PW_LINK_MALFORMED;
	if (CRYPTO_memcmp(want, sig, 64) != 0)
		return PW_LINK_TAMPERED;
	if (now_unix >= expires_unix)
		return PW_LINK_EXPIRED;
	return PW_LINK_OK;
}

pw_status pw_link_path(const unsigned char *key, size_t keylen, const char *page_id,
                       const char *action, int64_t expires_unix, char *buf, size_t len)
{
	char sig[PW_LINK_SIG_HEX];
	pw_status st = pw_link_sign(key, keylen, page_id, action, expires_unix, sig);
	if (st != PW_OK)
		return st;
	for (const char *c = page_id; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '-' || *c == '_' || *c == '.'))
			return PW_ERR_INVALID;
	int n = snprintf(buf, len, "/triage/%s?action=%s&exp=%lld&sig=%s", page_id, action,
	                 (long long)expires_unix, sig);
	return n < 0 || (size_t)n >= len ? PW_ERR_INVALID : PW_OK;
}
