/*
 * payload.c: the artifact-3 alert payload of an incident, as JSON, and the
 * HMAC-SHA256 signed, expiring triage links. See pager.h.
 */

#include "pager.h"

#include <inttypes.h>
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
	fputs("},\"canary\":", out);
	if (f->kind == PW_FIND_ROLLBACK) {
		/* the production canary's evidence (canary.proto RolloutDecision) */
		const pw_rollback *rb = &f->rollback;
		fputs("{\"decision\":\"ROLLBACK\",\"rollout_id\":", out);
		jstr(out, rb->rollout_id);
		fputs(",\"family\":", out);
		jstr(out, f->model);
		fputs(",\"metric\":", out);
		jstr(out, f->metric);
		fputs(",\"effect_pct\":", out);
		jnum(out, f->delta_pct);
		fputs(",\"lo_pct\":", out);
		jnum(out, rb->lo_pct);
		fputs(",\"hi_pct\":", out);
		jnum(out, rb->hi_pct);
		fprintf(out, ",\"windows\":%" PRIu32 ",\"family_windows\":%" PRIu32 ",\"decided_window_start_unix_us\":%" PRId64
		             ",\"release\":", rb->windows, rb->family_windows, rb->decided_window_start_us);
		jstr(out, f->release_id);
		fputs(",\"previous_release\":", out);
		jstr(out, rb->previous_release);
		fputs(",\"rollback_artifact\":", out);
		jstr(out, rb->artifact);
		fputs(",\"alpha\":", out);
		jnum(out, rb->alpha);
		fputs(",\"mde_pct\":", out);
		jnum(out, f->mde_pct);
		fputs(",\"tolerance_pct\":", out);
		jnum(out, rb->tolerance_pct);
		fputs("}", out);
	} else {
		fputs("null", out);
	}
	fputs(",\"verdict\":", out);
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

/* HMAC-SHA256 of msg[0..n) under key as 64 hex digits. */
static pw_status mac_hex(const unsigned char *key, size_t keylen, const char *msg, int n, char sig[PW_LINK_SIG_HEX])
{
	unsigned char mac[32];
	unsigned int maclen = 0;
	if (!key || keylen == 0 || n < 0 || (size_t)n >= 1024)
		return PW_ERR_INVALID;
	if (!HMAC(EVP_sha256(), key, (int)keylen, (const unsigned char *)msg, (size_t)n, mac, &maclen) ||
	    maclen != 32)
		return PW_ERR_INVALID;
	for (int i = 0; i < 32; i++)
		snprintf(sig + 2 * i, 3, "%02x", mac[i]);
	return PW_OK;
}

/* A signed field: present, and no newline (the fields' separator). */
static bool field_ok(const char *s)
{
	return s && *s && !strchr(s, '\n');
}

/* An optional signed field: absent, or no newline. */
static bool opt_ok(const char *s)
{
	return !s || !strchr(s, '\n');
}

static pw_link_check check_sig(const char *want, const char *sig, int64_t expires_unix, int64_t now_unix)
{
	if (CRYPTO_memcmp(want, sig, 64) != 0)
		return PW_LINK_TAMPERED;
	if (now_unix >= expires_unix)
		return PW_LINK_EXPIRED;
	return PW_LINK_OK;
}

pw_status pw_link_sign_with(const unsigned char *key, size_t keylen, const char *page_id, const char *action,
                            const char *owner, const char *by, int64_t expires_unix, char sig[PW_LINK_SIG_HEX])
{
	char msg[1024];
	int n;
	if (!field_ok(page_id) || !field_ok(action) || !opt_ok(owner) || !opt_ok(by))
		return PW_ERR_INVALID;
	if ((owner && *owner) || (by && *by))
		n = snprintf(msg, sizeof msg, "perfwatch-triage\n%s\n%s\n%lld\nowner=%s\nby=%s", page_id, action,
		             (long long)expires_unix, owner ? owner : "", by ? by : "");
	else
		n = snprintf(msg, sizeof msg, "perfwatch-triage\n%s\n%s\n%lld", page_id, action, (long long)expires_unix);
	return mac_hex(key, keylen, msg, n, sig);
}

pw_status pw_link_sign(const unsigned char *key, size_t keylen, const char *page_id,
                       const char *action, int64_t expires_unix, char sig[PW_LINK_SIG_HEX])
{
	return pw_link_sign_with(key, keylen, page_id, action, NULL, NULL, expires_unix, sig);
}

pw_link_check pw_link_verify_with(const unsigned char *key, size_t keylen, const char *page_id, const char *action,
                                  const char *owner, const char *by, int64_t expires_unix, const char *sig,
                                  int64_t now_unix)
{
	char want[PW_LINK_SIG_HEX];
	if (!sig || strlen(sig) != 64 ||
	    pw_link_sign_with(key, keylen, page_id, action, owner, by, expires_unix, want) != PW_OK)
		return PW_LINK_MALFORMED;
	return check_sig(want, sig, expires_unix, now_unix);
}

pw_link_check pw_link_verify(const unsigned char *key, size_t keylen, const char *page_id,
                             const char *action, int64_t expires_unix, const char *sig,
                             int64_t now_unix)
{
	return pw_link_verify_with(key, keylen, page_id, action, NULL, NULL, expires_unix, sig, now_unix);
}

static bool id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
	       c == '.';
}

pw_status pw_link_path(const unsigned char *key, size_t keylen, const char *page_id,
                       const char *action, int64_t expires_unix, char *buf, size_t len)
{
	char sig[PW_LINK_SIG_HEX];
	if (!page_id || !*page_id)
		return PW_ERR_INVALID;
	for (const char *c = page_id; *c; c++)
		if (!id_char(*c))
			return PW_ERR_INVALID;
	pw_status st = pw_link_sign(key, keylen, page_id, action, expires_unix, sig);
	if (st != PW_OK)
		return st;
	int n = snprintf(buf, len, "/triage?page=%s&action=%s&exp=%lld&sig=%s", page_id, action,
	                 (long long)expires_unix, sig);
	return n < 0 || (size_t)n >= len ? PW_ERR_INVALID : PW_OK;
}

pw_status pw_verdict_sign(const unsigned char *key, size_t keylen, const char *page_id, const char *outcome,
                          const char *owner, int64_t expires_unix, const char *nonce, char sig[PW_LINK_SIG_HEX])
{
	char msg[1024];
	if (!field_ok(page_id) || !field_ok(outcome) || !field_ok(owner) || !field_ok(nonce))
		return PW_ERR_INVALID;
	int n = snprintf(msg, sizeof msg, "perfwatch-triage-verdict\n%s\n%s\n%s\n%lld\n%s", page_id, outcome, owner,
	                 (long long)expires_unix, nonce);
	return mac_hex(key, keylen, msg, n, sig);
}

pw_link_check pw_verdict_verify(const unsigned char *key, size_t keylen, const char *page_id, const char *outcome,
                                const char *owner, int64_t expires_unix, const char *nonce, const char *sig,
                                int64_t now_unix)
{
	char want[PW_LINK_SIG_HEX];
	if (!sig || strlen(sig) != 64 ||
	    pw_verdict_sign(key, keylen, page_id, outcome, owner, expires_unix, nonce, want) != PW_OK)
		return PW_LINK_MALFORMED;
	return check_sig(want, sig, expires_unix, now_unix);
}

pw_status pw_csrf_sign(const unsigned char *key, size_t keylen, const char *token, char csrf[PW_LINK_SIG_HEX])
{
	char msg[1024];
	if (!field_ok(token))
		return PW_ERR_INVALID;
	int n = snprintf(msg, sizeof msg, "perfwatch-triage-csrf\n%s", token);
	return mac_hex(key, keylen, msg, n, csrf);
}

bool pw_csrf_verify(const unsigned char *key, size_t keylen, const char *token, const char *csrf)
{
	char want[PW_LINK_SIG_HEX];
	return csrf && strlen(csrf) == 64 && pw_csrf_sign(key, keylen, token, want) == PW_OK &&
	       CRYPTO_memcmp(want, csrf, 64) == 0;
}

bool pw_triage_owner_ok(const char *owner)
{
	static const char *const owners[] = {"compiler", "model", "infra", "unspecified"};
	for (size_t i = 0; owner && i < sizeof owners / sizeof owners[0]; i++)
		if (strcmp(owner, owners[i]) == 0)
			return true;
	return false;
}

bool pw_triager_ok(const char *by)
{
	size_t n = by ? strlen(by) : 0;
	if (n == 0 || n > 64 || !((by[0] >= 'a' && by[0] <= 'z') || (by[0] >= 'A' && by[0] <= 'Z') ||
	                          (by[0] >= '0' && by[0] <= '9')))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!id_char(by[i]) && by[i] != '@' && by[i] != '+')
			return false;
	return true;
}
