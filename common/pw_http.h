/*
 * pw_http.h: the small HTTP server every service runs for probes and metrics.
 *
 * A pw_http is a libevent (evhttp) server with its own event_base on its own
 * thread, so that a service's Kafka loop never blocks a scrape and the other
 * way round. It serves:
 *   GET /healthz  200 "ok" while the process lives;
 *   GET /readyz   200 "ready" when the readiness callback says so, else 503
 *                 with the callback's reason;
 *   GET /metrics  the pw_metrics.h registry in the text format 0.0.4;
 *   any path registered with pw_http_handle(), e.g. JSON for the CLI;
 *   any path registered with pw_http_handle_form(), which also takes POST
 *   (an HTML form's application/x-www-form-urlencoded body);
 *   404 for anything else, 405 for methods other than GET and HEAD (and
 *   POST on a form's path).
 * It binds to 127.0.0.1 unless told otherwise (see
 * pw_http_listen_from_config() for the http.listen / http.port keys of
 * pw_config.h). Request headers and bodies are capped; connections idle for
 * more than 10 s are closed. A connection whose request is not complete
 * 15 s after it was accepted (or after its previous answer) is ended, however
 * slowly it keeps sending; at 128 open connections a new one ends the oldest
 * still waiting for its request (so slow clients cannot keep a quick one
 * out, nor use up the process's descriptors, which Kafka and PostgreSQL
 * need): see pw_http_opts.
 *
 * Life cycle, all from one thread (the service's main): pw_http_new() binds
 * the socket, pw_http_handle() adds handlers, pw_http_start() starts the
 * thread, pw_http_stop() ends it, pw_http_free() releases everything. Every
 * callback runs on the HTTP thread and must be safe against the service's
 * other threads (read atomics, take a lock). The server thread blocks every
 * signal, so signals reach the service's own threads and a client hanging up
 * cannot raise SIGPIPE.
 */
#ifndef PW_HTTP_H
#define PW_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "pw_config.h"
#include "pw_metrics.h"
#include "pw_status.h"

/* Registered handlers per server, at most. */
#define PW_HTTP_MAX_HANDLERS 32

typedef struct pw_http pw_http;

/*
 * Readiness: returns true when ready; otherwise writes why (one line, e.g.
 * "kafka: no partitions assigned") into reason, which holds reasonlen bytes.
 */
typedef bool (*pw_http_ready_fn)(void *arg, char *reason, size_t reasonlen);

/*
 * What a handler answers. status starts at 200 and content_type at
 * "application/json"; content_type must point to storage that outlives the
 * call (a string literal). The handler writes its body into body, which
 * pw_http owns.
 */
typedef struct pw_http_reply {
	int status;
	const char *content_type;
	FILE *body;
} pw_http_reply;

/*
 * An extra GET handler. path is the request's path without the query, query
 * the raw text after '?' (NULL when there is none; see pw_http_query_get()).
 */
typedef void (*pw_http_handler_fn)(void *arg, const char *path, const char *query,
                                   pw_http_reply *reply);

/*
 * A request to a form handler. Every string is NUL-terminated and valid for
 * the call only. A POST's body is at most PW_HTTP_MAX_FORM_BODY bytes and
 * holds no NUL byte (else the server answers 413 or 400 itself).
 */
#define PW_HTTP_MAX_FORM_BODY 8192
typedef struct pw_http_request {
	const char *method;       /* "GET", "HEAD" or "POST" */
	const char *path;         /* without the query */
	const char *query;        /* the raw text after '?', NULL when there is none */
	const char *body;         /* POST: the body ("" when empty); "" for GET and HEAD */
	size_t body_len;
	const char *content_type; /* the Content-Type header, "" when absent */
	const char *origin;       /* the Origin header, "" when absent */
} pw_http_request;

/*
 * A form handler: GET and HEAD show (HEAD gets GET's headers without the
 * body, and a handler must not change state on either), POST acts. Read the
 * body's fields with pw_http_form_param.
 */
typedef void (*pw_http_form_fn)(void *arg, const pw_http_request *req, pw_http_reply *reply);

typedef struct pw_http_opts {
	const char *host;         /* "127.0.0.1" when NULL; copied */
	int port;                 /* 0 picks a free port; see pw_http_port() */
	pw_metrics *metrics;      /* borrowed, must outlive the server; NULL: /metrics is 404 */
	pw_http_ready_fn ready;   /* NULL: always ready */
	void *ready_arg;
	size_t max_conns;         /* open connections before the oldest waiting one is ended; 0: 128 */
	long request_deadline_ms; /* a request not complete this long is ended; 0: 15000 */
} pw_http_opts;

/*
 * The connection guard's figures (for tests): connections open now (ended
 * ones count until evhttp has freed them), ended for their deadline, ended
 * to make room. Read from any thread.
 */
typedef struct pw_http_conn_stats {
	long open_now, ended_deadline, ended_evicted;
} pw_http_conn_stats;
pw_http_conn_stats pw_http_conn_stats_get(const pw_http *h);

/*
 * Creates the server and binds its socket, so that "address in use" shows
 * here, in the caller's thread. Stores the handle in *out. Returns
 * PW_ERR_INVALID for a bad port, PW_ERR_IO when binding fails, PW_ERR_NOMEM;
 * the reason is in errbuf.
 */
pw_status pw_http_new(const pw_http_opts *opts, pw_http **out, char *errbuf, size_t errlen);

/*
 * Serves GET path (exact match, e.g. "/api/series"; copied) with fn. Only
 * before pw_http_start(). Returns PW_ERR_INVALID for a path not starting
 * with '/', one already served, too many handlers, or a started server;
 * PW_ERR_NOMEM.
 */
pw_status pw_http_handle(pw_http *h, const char *path, pw_http_handler_fn fn, void *arg,
                         char *errbuf, size_t errlen);

/*
 * Serves GET, HEAD and POST of path with fn, as pw_http_handle does GET;
 * other methods get 405 with "Allow: GET, HEAD, POST". Same errors.
 */
pw_status pw_http_handle_form(pw_http *h, const char *path, pw_http_form_fn fn, void *arg, char *errbuf,
                              size_t errlen);

/* Starts the server thread. PW_ERR_INVALID if already started, PW_ERR_IO. */
pw_status pw_http_start(pw_http *h, char *errbuf, size_t errlen);

/* The port the server is bound to (the real one when opts.port was 0). */
int pw_http_port(const pw_http *h);

/*
 * Stops the thread and waits for it: the loop is woken through a socket pair
 * and exits; open connections are closed by pw_http_free(). Does nothing
 * when not started. A stopped server cannot be started again.
 */
void pw_http_stop(pw_http *h);

/* Stops the server if needed and frees it; NULL is allowed. */
void pw_http_free(pw_http *h);

/*
 * Reads http.listen ("host", "host:port" or "[v6addr]:port") and http.port
 * from cfg into host (hostlen bytes) and *port: a port in http.listen wins.
 * Returns PW_ERR_CONFIG for a malformed address or a host too long.
 */
pw_status pw_http_listen_from_config(const pw_config *cfg, char *host, size_t hostlen,
                                     int *port, char *errbuf, size_t errlen);

/*
 * Finds name in a query string "a=1&b=x%20y" and writes its decoded value
 * into out. Returns PW_ERR_NOT_FOUND when absent, PW_ERR_INVALID when the
 * query is malformed or the value does not fit in outlen bytes.
 */
pw_status pw_http_query_get(const char *query, const char *name, char *out, size_t outlen);

/*
 * pw_http_query_get with the reason in errbuf, for a 400 reply:
 * PW_ERR_NOT_FOUND "missing query parameter NAME"; PW_ERR_INVALID when the
 * decoded value holds a NUL byte (%00), is not valid UTF-8, or is too long
 * for outlen ("query parameter NAME is too long (N bytes, at most M)").
 * The first NAME=value pair counts; '+' stays '+' (as before).
 */
pw_status pw_http_query_param(const char *query, const char *name, char *out, size_t outlen,
                              char *errbuf, size_t errlen);

/*
 * pw_http_query_param for an application/x-www-form-urlencoded body (a
 * POSTed form): the same checks, and '+' is a space, as browsers encode it.
 */
pw_status pw_http_form_param(const char *body, const char *name, char *out, size_t outlen, char *errbuf,
                             size_t errlen);

#endif
