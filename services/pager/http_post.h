/*
 * http_post.h: the pager's one outbound HTTP call — a blocking POST of a
 * small body to an http:// URL (Alertmanager's /api/v2/alerts, the generic
 * and the ticket webhooks), with a deadline.
 *
 * The pager's delivery tick (main.c) is the only caller; it retries with
 * backoff, so this does one attempt and says how it went. No TLS: the
 * receivers are on the cluster network or loopback (a TLS receiver sits
 * behind Alertmanager, which speaks TLS itself). The reply is read up to a
 * cap and only its status line is kept.
 */
#ifndef PW_PAGER_HTTP_POST_H
#define PW_PAGER_HTTP_POST_H

#include <stddef.h>

#include "pw_status.h"

/*
 * POSTs body (len bytes, content type ctype) to url ("http://host[:port]/path")
 * with an optional extra header line (no CRLF, may be NULL), within
 * timeout_ms for the whole exchange. *http_status gets the reply's status
 * (0 when none came). PW_OK on a 2xx reply; PW_ERR_INVALID for a URL that
 * is not http://; PW_ERR_UNAVAILABLE when the receiver cannot be reached or
 * answered non-2xx; PW_ERR_TIMEOUT past the deadline; the reason in errbuf.
 */
pw_status pager_http_post(const char *url, const char *ctype, const char *body, size_t len,
                          const char *extra_header, int timeout_ms, int *http_status,
                          char *errbuf, size_t errlen);

#endif
