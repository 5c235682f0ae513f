/*
 * triage.h: the pager's triage page — what on-call opens from a page.
 *
 * Served on the service's HTTP thread (pw_http.h, loopback unless
 * http.listen says otherwise) as a form handler on /triage:
 *
 *   GET or HEAD /triage?page=<id>&action=view|true|false&exp=<unix>&sig=<hex>
 *     [&owner=<owner>&by=<triager>]
 *     A link signed with HMAC-SHA256 under pager.triage_key over every
 *     parameter a verdict records (payload.c's pw_link_sign_with: an owner
 *     or triager added or changed is a tampered link); it expires. A
 *     tampered, expired or malformed link gets a 403 page, a signed link to
 *     a page that does not exist a 404. Otherwise the page: the artifact-3
 *     payload, the series plot (common/pw_plot.c, the one
 *     `perfwatch series plot` draws), the op diff and HLO diff of the
 *     attribution, the bisection log, and the verdict form (owner, the
 *     triager's name, true / false regression). GET and HEAD never change
 *     state: a chat tool previewing a link fetches it, a HEAD probes it; a
 *     true/false link only proposes its verdict on the page.
 *
 *   POST /triage (the form, application/x-www-form-urlencoded)
 *     page, exp, nonce, outcome, owner, by, and the verdict token of exactly
 *     that (page, outcome, owner) with the CSRF token bound to it, both
 *     minted by the page (pw_verdict_sign, pw_csrf_sign). by is validated
 *     (pw_triager_ok: 400 otherwise), a token that does not match its fields
 *     or a CSRF token that does not match its token is refused (403). The
 *     verdict: a triage_verdict_log row (the verdict token is its action
 *     token: a replayed post records nothing), triage_verdicts upserted (the
 *     latest wins) and a TriageVerdict in the outbox for perf.triage.v1 (the
 *     runtime publishes it after the next tick), in one transaction on the
 *     HTTP thread's own PostgreSQL connection.
 *
 * Every refusal counts in perfwatch_pager_triage_refused_total{reason}
 * (malformed, tampered, expired, csrf, invalid_by, not_found).
 */
#ifndef PW_PAGER_TRIAGE_H
#define PW_PAGER_TRIAGE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_service.h"

typedef struct pager_triage {
	unsigned char key[512];
	size_t keylen;
	char base_url[512]; /* no trailing slash */
	int64_t ttl_s;
	const pw_log *lg;
	pw_pg *pg;          /* the HTTP thread's connection, under mu */
	pthread_mutex_t mu;
	bool mu_ready;
	pw_metric *m_verdicts; /* perfwatch_pager_triage_verdicts_total{outcome} */
	pw_metric *m_refused;  /* perfwatch_pager_triage_refused_total{reason} */
} pager_triage;

/*
 * Reads pager.triage_key (required, at least 16 bytes), pager.triage.base_url
 * and pager.triage.link_ttl, and opens the HTTP thread's PostgreSQL
 * connection (pg.dsn). PW_ERR_CONFIG for a missing or short key.
 */
pw_status pager_triage_init(pager_triage *t, pw_service *svc, char *errbuf, size_t errlen);

/* Registers the metrics and the /triage handler (before the server starts). */
pw_status pager_triage_register(pager_triage *t, pw_metrics *reg, pw_http *http, char *errbuf, size_t errlen);

/*
 * The absolute signed link of page_id for action ("view", "true", "false"),
 * expiring ttl after now_s, into buf (pw_link_path under the base URL).
 * PW_ERR_INVALID when it does not fit.
 */
pw_status pager_triage_url(const pager_triage *t, const char *page_id, const char *action, int64_t now_s,
                           char *buf, size_t len, char *errbuf, size_t errlen);

/* Frees what init made; safe on a zeroed or released struct. */
void pager_triage_release(pager_triage *t);

#endif
