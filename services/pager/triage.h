/*
 * triage.h: the pager's triage page — what on-call opens from a page.
 *
 * GET /triage?page=<id>&action=view|true|false&exp=<unix>&sig=<hex>, served
 * on the service's HTTP thread (pw_http.h, loopback unless http.listen says
 * otherwise). The link is signed with HMAC-SHA256 under pager.triage_key
 * (payload.c's pw_link_sign) and expires; a tampered, expired or malformed
 * link gets a 403 page and changes nothing. "view" shows the page's
 * artifact-3 payload, the series plot (common/pw_plot.c, the one
 * `perfwatch series plot` draws), the op diff and HLO diff of the
 * attribution, the bisection log, and the two verdict buttons (true / false
 * regression) with an owner choice; each button is its own signed link.
 * "true" / "false" record the verdict: a triage_verdict_log row (the signed
 * link plus owner is its action token: a replayed click records nothing),
 * triage_verdicts upserted (the latest wins) and a TriageVerdict in the
 * outbox for perf.triage.v1 (the runtime publishes it after the next tick),
 * in one transaction on the HTTP thread's own PostgreSQL connection.
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
 * expiring ttl after now_s, into buf. PW_ERR_INVALID when it does not fit.
 */
pw_status pager_triage_url(const pager_triage *t, const char *page_id, const char *action, int64_t now_s,
                           char *buf, size_t len, char *errbuf, size_t errlen);

/* Frees what init made; safe on a zeroed or released struct. */
void pager_triage_release(pager_triage *t);

#endif
