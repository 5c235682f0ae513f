/*
 * pw_http.c: the probe and metrics server on its own libevent thread.
 *
 * Implements pw_http.h. The event_base and evhttp are created and bound in
 * the caller's thread, then used only by the server thread until it has been
 * joined, so libevent needs no locking (no evthread_use_pthreads). The one
 * cross-thread signal, "stop", is a byte written to a socket pair whose read
 * end the loop watches. Responses are built per request from pw_metrics.c's
 * renderer or the service's handlers and freed with the request.
 */
#include "pw_http.h"
#include "pw_input.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>

#define PW_HTTP_MAX_HEADERS_SIZE 16384
#define PW_HTTP_MAX_BODY_SIZE PW_HTTP_MAX_FORM_BODY /* only form handlers take one (a POSTed form) */
#define PW_HTTP_TIMEOUT_S 10
#define PW_HTTP_REASON_MAX 512
#define PW_HTTP_DEFAULT_MAX_CONNS 128
#define PW_HTTP_DEFAULT_DEADLINE_MS 15000
#define PW_HTTP_SWEEP_MS 500

/*
 * Connections, tracked so that their number and the time a request may take
 * are bounded (evhttp 2.1 bounds neither: a client that sends one header
 * line every few seconds keeps a connection, and its descriptor, forever,
 * and enough of them would leave the service no descriptor for Kafka or
 * PostgreSQL). Each connection's bufferevent is made here (evhttp_set_bevcb)
 * and holds one reference of ours, so that it stays valid after evhttp
 * frees it; evhttp's bufferevent_free() clears its callbacks, which is how
 * a sweep tells a finished connection, whose reference (and descriptor,
 * BEV_OPT_CLOSE_ON_FREE) it then drops. A connection is ended by
 * shutdown(2) of its socket, never by closing it under evhttp: evhttp sees
 * the end of the stream and frees the connection itself.
 */
typedef struct conn {
	struct bufferevent *bev;
	int64_t since_ms; /* accepted, or its last request answered */
	bool ended;       /* shut down by us */
} conn;

typedef struct handler {
	char *path;
	pw_http_handler_fn fn;    /* a GET handler, or */
	pw_http_form_fn form_fn;  /* a form handler (GET, HEAD, POST) */
	void *arg;
} handler;

struct pw_http {
	struct event_base *base;
	struct evhttp *http;
	struct event *wake_ev;
	evutil_socket_t wake[2];
	pthread_t thread;
	bool started, joined;
	int port;
	pw_metrics *metrics;
	pw_http_ready_fn ready;
	void *ready_arg;
	handler handlers[PW_HTTP_MAX_HANDLERS];
	size_t nhandlers;
	/* the connections (HTTP thread only, but for pw_http_free after the join) */
	struct evconnlistener *listener;
	struct event *sweep_ev, *resume_ev;
	conn *conns;
	size_t nconns, capconns;
	size_t max_conns;
	int64_t deadline_ms;
	bool paused; /* the listener, at twice max_conns until a sweep */
	/* figures for tests (written on the HTTP thread) */
	_Atomic long ended_deadline, ended_evicted, open_now;
};

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Ends connection i: the peer and evhttp see the stream end. */
static void conn_end(pw_http *h, size_t i)
{
	evutil_socket_t fd = bufferevent_getfd(h->conns[i].bev);
	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);
	h->conns[i].ended = true;
}

/*
 * Drops the connections evhttp has freed; ends those whose request is not
 * complete within the deadline; resumes accepting when there is room again.
 */
static void conns_sweep(pw_http *h)
{
	int64_t now = mono_ms();
	for (size_t i = 0; i < h->nconns;) {
		bufferevent_data_cb rd = NULL, wr = NULL;
		bufferevent_event_cb ev = NULL;
		bufferevent_getcb(h->conns[i].bev, &rd, &wr, &ev, NULL);
		if (!rd && !wr && !ev) { /* freed by evhttp: ours is the last reference */
			bufferevent_decref(h->conns[i].bev);
			h->conns[i] = h->conns[--h->nconns];
			continue;
		}
		if (!h->conns[i].ended && now - h->conns[i].since_ms > h->deadline_ms) {
			conn_end(h, i);
			h->ended_deadline++;
		}
		i++;
	}
	h->open_now = (long)h->nconns;
	if (h->paused && h->nconns < 2 * h->max_conns && h->listener) {
		evconnlistener_enable(h->listener);
		h->paused = false;
	}
}

static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conns_sweep(arg);
}

/* Paused: evhttp frees the ended connections in its next turns; look again soon. */
static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	pw_http *h = arg;
	conns_sweep(h);
	struct timeval soon = {.tv_sec = 0, .tv_usec = 20 * 1000};
	if (h->paused)
		event_add(h->resume_ev, &soon);
}

/*
 * evhttp's bufferevent for a new connection. At max_conns the oldest
 * connection still waiting for its request is ended, so that a crowd of
 * slow clients cannot keep a quick one out; at twice max_conns (ended ones
 * not yet freed) accepting pauses until evhttp has freed some (on_resume).
 */
static struct bufferevent *on_new_conn(struct event_base *base, void *arg)
{
	pw_http *h = arg;
	struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!bev)
		return NULL; /* evhttp makes its own, untracked */
	if (h->nconns >= h->max_conns)
		conns_sweep(h);
	if (h->nconns >= h->max_conns) {
		size_t oldest = h->nconns;
		for (size_t i = 0; i < h->nconns; i++)
			if (!h->conns[i].ended &&
			    (oldest == h->nconns || h->conns[i].since_ms < h->conns[oldest].since_ms))
				oldest = i;
		if (oldest < h->nconns) {
			conn_end(h, oldest);
			h->ended_evicted++;
		}
	}
	if (h->nconns == h->capconns) {
		size_t cap = h->capconns ? h->capconns * 2 : 64;
		conn *c = realloc(h->conns, cap * sizeof *c);
		if (!c)
			return bev; /* served, not tracked */
		h->conns = c;
		h->capconns = cap;
	}
	bufferevent_incref(bev);
	h->conns[h->nconns++] = (conn){.bev = bev, .since_ms = mono_ms()};
	h->open_now = (long)h->nconns;
	if (h->nconns >= 2 * h->max_conns && h->listener && !h->paused) {
		evconnlistener_disable(h->listener);
		h->paused = true;
		struct timeval soon = {.tv_sec = 0, .tv_usec = 20 * 1000};
		event_add(h->resume_ev, &soon);
	}
	return bev;
}

/* A request was read whole: its connection's deadline starts again. */
static void conn_answered(pw_http *h, struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
	for (size_t i = 0; bev && i < h->nconns; i++)
		if (h->conns[i].bev == bev) {
			h->conns[i].since_ms = mono_ms();
			return;
		}
}

static const char *reason_phrase(int code)
{
	switch (code) {
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	default: return code < 400 ? "OK" : "Error";
	}
}

static void reply_text(struct evhttp_request *req, int code, const char *content_type,
                       const char *body, size_t len)
{
	struct evkeyvalq *hdr = evhttp_request_get_output_headers(req);
	evhttp_add_header(hdr, "Content-Type", content_type);
	evhttp_add_header(hdr, "Cache-Control", "no-store");
	if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
		/* evhttp would send the body after all: announce its size only */
		char clen[32];
		snprintf(clen, sizeof clen, "%zu", len);
		evhttp_add_header(hdr, "Content-Length", clen);
		len = 0;
	}
	struct evbuffer *buf = evhttp_request_get_output_buffer(req);
	if (len > 0 && evbuffer_add(buf, body, len) != 0) {
		evhttp_send_error(req, 500, "Internal Server Error");
		return;
	}
	evhttp_send_reply(req, code, reason_phrase(code), NULL);
}

static void reply_plain(struct evhttp_request *req, int code, const char *body)
{
	reply_text(req, code, "text/plain; charset=utf-8", body, strlen(body));
}

static void serve_readyz(pw_http *h, struct evhttp_request *req)
{
	char reason[PW_HTTP_REASON_MAX] = "";
	if (!h->ready || h->ready(h->ready_arg, reason, sizeof reason)) {
		reply_plain(req, 200, "ready\n");
		return;
	}
	reason[sizeof reason - 1] = '\0';
	char body[PW_HTTP_REASON_MAX + 32];
	snprintf(body, sizeof body, "not ready: %s\n", reason[0] ? reason : "(no reason given)");
	reply_plain(req, 503, body);
}

static void serve_metrics(pw_http *h, struct evhttp_request *req)
{
	char *text = NULL;
	size_t len = 0;
	if (pw_metrics_render(h->metrics, &text, &len) != PW_OK) {
		reply_plain(req, 500, "could not render metrics\n");
		return;
	}
	reply_text(req, 200, "text/plain; version=0.0.4", text, len);
	free(text);
}

/* The form request of req: its body copied NUL-terminated into *copy (caller frees). */
static bool form_request(struct evhttp_request *req, const char *path, const char *query, pw_http_request *fr,
                         char **copy)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const char *ct = evhttp_find_header(in, "Content-Type"), *origin = evhttp_find_header(in, "Origin");
	enum evhttp_cmd_type m = evhttp_request_get_command(req);
	struct evbuffer *b = evhttp_request_get_input_buffer(req);
	size_t n = m == EVHTTP_REQ_POST && b ? evbuffer_get_length(b) : 0;
	*copy = malloc(n + 1);
	if (!*copy)
		return false;
	if (n > 0)
		evbuffer_copyout(b, *copy, n);
	(*copy)[n] = '\0';
	*fr = (pw_http_request){.method = m == EVHTTP_REQ_POST ? "POST" : m == EVHTTP_REQ_HEAD ? "HEAD" : "GET",
	                        .path = path, .query = query, .body = *copy, .body_len = n,
	                        .content_type = ct ? ct : "", .origin = origin ? origin : ""};
	return true;
}

static void serve_handler(const handler *hd, struct evhttp_request *req, const char *path,
                          const char *query)
{
	char *body = NULL, *form = NULL;
	size_t len = 0;
	pw_http_request fr;
	pw_http_reply reply = {.status = 200, .content_type = "application/json"};
	if (hd->form_fn && !form_request(req, path, query, &fr, &form)) {
		reply_plain(req, 500, "out of memory\n");
		return;
	}
	if (form && memchr(form, 0, fr.body_len)) {
		free(form);
		reply_plain(req, 400, "the request body holds a NUL byte\n");
		return;
	}
	reply.body = open_memstream(&body, &len);
	if (!reply.body) {
		free(form);
		reply_plain(req, 500, "out of memory\n");
		return;
	}
	if (hd->form_fn)
		hd->form_fn(hd->arg, &fr, &reply);
	else
		hd->fn(hd->arg, path, query, &reply);
	free(form);
	if (fclose(reply.body) != 0) {
		free(body);
		reply_plain(req, 500, "out of memory\n");
		return;
	}
	int code = reply.status >= 100 && reply.status <= 599 ? reply.status : 500;
	reply_text(req, code, reply.content_type ? reply.content_type : "application/json", body,
	           len);
	free(body);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	pw_http *h = arg;
	conn_answered(h, req);
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	const char *query = uri ? evhttp_uri_get_query(uri) : NULL;
	if (!path || !*path)
		path = "/";
	enum evhttp_cmd_type method = evhttp_request_get_command(req);
	const handler *hd = NULL;
	for (size_t i = 0; i < h->nhandlers; i++)
		if (strcmp(path, h->handlers[i].path) == 0)
			hd = &h->handlers[i];
	bool form = hd && hd->form_fn;
	if (method != EVHTTP_REQ_GET && method != EVHTTP_REQ_HEAD && !(form && method == EVHTTP_REQ_POST)) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", form ? "GET, HEAD, POST" : "GET, HEAD");
		reply_plain(req, 405, "method not allowed\n");
		return;
	}

	if (strcmp(path, "/healthz") == 0) {
		reply_plain(req, 200, "ok\n");
		return;
	}
	if (strcmp(path, "/readyz") == 0) {
		serve_readyz(h, req);
		return;
	}
	if (strcmp(path, "/metrics") == 0 && h->metrics) {
		serve_metrics(h, req);
		return;
	}
	if (hd) {
		serve_handler(hd, req, path, query);
		return;
	}
	reply_plain(req, 404, "not found\n");
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	pw_http *h = arg;
	char buf[16];
	while (recv(fd, buf, sizeof buf, 0) > 0)
		;
	event_base_loopbreak(h->base);
}

static void *server_main(void *arg)
{
	pw_http *h = arg;
	event_base_dispatch(h->base);
	return NULL;
}

pw_status pw_http_new(const pw_http_opts *opts, pw_http **out, char *errbuf, size_t errlen)
{
	pw_status st;
	*out = NULL;
	const char *host = opts->host ? opts->host : "127.0.0.1";
	if (opts->port < 0 || opts->port > 65535)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "invalid HTTP port %d", opts->port);

	pw_http *h = calloc(1, sizeof *h);
	if (!h)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	h->wake[0] = h->wake[1] = -1;
	h->metrics = opts->metrics;
	h->ready = opts->ready;
	h->ready_arg = opts->ready_arg;
	h->max_conns = opts->max_conns > 0 ? opts->max_conns : PW_HTTP_DEFAULT_MAX_CONNS;
	h->deadline_ms = opts->request_deadline_ms > 0 ? opts->request_deadline_ms
	                                               : PW_HTTP_DEFAULT_DEADLINE_MS;

	h->base = event_base_new();
	if (!h->base) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "could not create an event base");
		goto fail;
	}
	if (evutil_socketpair(AF_UNIX, SOCK_STREAM, 0, h->wake) != 0 ||
	    evutil_make_socket_nonblocking(h->wake[0]) != 0 ||
	    evutil_make_socket_nonblocking(h->wake[1]) != 0 ||
	    evutil_make_socket_closeonexec(h->wake[0]) != 0 ||
	    evutil_make_socket_closeonexec(h->wake[1]) != 0) {
		st = pw_fail(PW_ERR_IO, errbuf, errlen, "could not create the HTTP wake-up socket: %s",
		             evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
		goto fail;
	}
	h->wake_ev = event_new(h->base, h->wake[0], EV_READ | EV_PERSIST, on_wake, h);
	if (!h->wake_ev || event_add(h->wake_ev, NULL) != 0) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "could not add the HTTP wake-up event");
		goto fail;
	}
	h->http = evhttp_new(h->base);
	if (!h->http) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "could not create the HTTP server");
		goto fail;
	}
	/* other methods reach on_request only to be answered 405 (evhttp itself says 501) */
	evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
	                                        EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	                                        EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
	evhttp_set_max_headers_size(h->http, PW_HTTP_MAX_HEADERS_SIZE);
	evhttp_set_max_body_size(h->http, PW_HTTP_MAX_BODY_SIZE);
	evhttp_set_timeout(h->http, PW_HTTP_TIMEOUT_S);
	evhttp_set_gencb(h->http, on_request, h);
	evhttp_set_bevcb(h->http, on_new_conn, h);
	h->sweep_ev = event_new(h->base, -1, EV_PERSIST, on_sweep, h);
	struct timeval sweep_tv = {.tv_sec = 0, .tv_usec = PW_HTTP_SWEEP_MS * 1000};
	h->resume_ev = evtimer_new(h->base, on_resume, h);
	if (!h->sweep_ev || !h->resume_ev || event_add(h->sweep_ev, &sweep_tv) != 0) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "could not add the HTTP sweep timer");
		goto fail;
	}

	errno = 0;
	struct evhttp_bound_socket *sock =
		evhttp_bind_socket_with_handle(h->http, host, (ev_uint16_t)opts->port);
	if (!sock) {
		int e = errno;
		st = pw_fail(PW_ERR_IO, errbuf, errlen, "could not listen on \"%s\" port %d: %s", host,
		             opts->port, e ? strerror(e) : "address not usable");
		goto fail;
	}
	h->listener = evhttp_bound_socket_get_listener(sock);
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof ss;
	if (getsockname(evhttp_bound_socket_get_fd(sock), (struct sockaddr *)&ss, &sslen) != 0) {
		st = pw_fail(PW_ERR_IO, errbuf, errlen, "could not read the bound HTTP port: %s",
		             strerror(errno));
		goto fail;
	}
	if (ss.ss_family == AF_INET6)
		h->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	else
		h->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	*out = h;
	return PW_OK;

fail:
	pw_http_free(h);
	return st;
}

static pw_status handle_add(pw_http *h, const char *path, pw_http_handler_fn fn, pw_http_form_fn form_fn,
                            void *arg, char *errbuf, size_t errlen)
{
	if (h->started)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "cannot add HTTP handler \"%s\": server already started", path);
	if (!path || path[0] != '/' || (!fn && !form_fn))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "invalid HTTP handler path \"%s\"",
		               path ? path : "(null)");
	if (strcmp(path, "/healthz") == 0 || strcmp(path, "/readyz") == 0 ||
	    (strcmp(path, "/metrics") == 0 && h->metrics))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "HTTP path \"%s\" is built in", path);
	for (size_t i = 0; i < h->nhandlers; i++)
		if (strcmp(h->handlers[i].path, path) == 0)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "HTTP path \"%s\" already has a handler", path);
	if (h->nhandlers == PW_HTTP_MAX_HANDLERS)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "more than %d HTTP handlers",
		               PW_HTTP_MAX_HANDLERS);
	char *copy = strdup(path);
	if (!copy)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	h->handlers[h->nhandlers++] = (handler){.path = copy, .fn = fn, .form_fn = form_fn, .arg = arg};
	return PW_OK;
}

pw_status pw_http_handle(pw_http *h, const char *path, pw_http_handler_fn fn, void *arg,
                         char *errbuf, size_t errlen)
{
	return handle_add(h, path, fn, NULL, arg, errbuf, errlen);
}

pw_status pw_http_handle_form(pw_http *h, const char *path, pw_http_form_fn fn, void *arg, char *errbuf,
                              size_t errlen)
{
	return handle_add(h, path, NULL, fn, arg, errbuf, errlen);
}

pw_status pw_http_start(pw_http *h, char *errbuf, size_t errlen)
{
	if (h->started)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "HTTP server already started");
	/*
	 * The server thread takes no signals: they are main()'s to handle, and a
	 * blocked SIGPIPE makes a write to a client that hung up fail with EPIPE
	 * instead of ending the process.
	 */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&h->thread, NULL, server_main, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return pw_fail(PW_ERR_IO, errbuf, errlen, "could not start the HTTP thread: %s",
		               strerror(rc));
	h->started = true;
	return PW_OK;
}

int pw_http_port(const pw_http *h)
{
	return h->port;
}

void pw_http_stop(pw_http *h)
{
	if (!h || !h->started || h->joined)
		return;
	/* the loop drains the socket; retry only if it is momentarily full */
	while (send(h->wake[1], "x", 1, MSG_NOSIGNAL) < 0 && (errno == EINTR || errno == EAGAIN))
		;
	pthread_join(h->thread, NULL);
	h->joined = true;
}

void pw_http_free(pw_http *h)
{
	if (!h)
		return;
	pw_http_stop(h);
	if (h->http)
		evhttp_free(h->http); /* frees every connection */
	for (size_t i = 0; i < h->nconns; i++)
		bufferevent_decref(h->conns[i].bev);
	free(h->conns);
	if (h->sweep_ev)
		event_free(h->sweep_ev);
	if (h->resume_ev)
		event_free(h->resume_ev);
	if (h->wake_ev)
		event_free(h->wake_ev);
	for (int i = 0; i < 2; i++)
		if (h->wake[i] >= 0)
			evutil_closesocket(h->wake[i]);
	if (h->base)
		event_base_free(h->base);
	for (size_t i = 0; i < h->nhandlers; i++)
		free(h->handlers[i].path);
	free(h);
}

/* Parses a decimal port 0..65535 that fills s entirely. */
static bool parse_port(const char *s, int *port)
{
	if (!*s)
		return false;
	long v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (*p - '0');
		if (v > 65535)
			return false;
	}
	*port = (int)v;
	return true;
}

pw_status pw_http_listen_from_config(const pw_config *cfg, char *host, size_t hostlen,
                                     int *port, char *errbuf, size_t errlen)
{
	const char *listen = pw_config_get_str(cfg, "http.listen");
	if (!listen || !*listen)
		listen = "127.0.0.1";
	*port = (int)pw_config_get_int(cfg, "http.port");
	const char *h = listen, *portpart = NULL;
	size_t hlen;
	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');
		if (!close || (close[1] != '\0' && close[1] != ':'))
			goto malformed;
		h = listen + 1;
		hlen = (size_t)(close - h);
		if (close[1] == ':')
			portpart = close + 2;
	} else {
		const char *colon = strchr(listen, ':');
		if (colon && !strchr(colon + 1, ':')) {
			hlen = (size_t)(colon - listen);
			portpart = colon + 1;
		} else {
			hlen = strlen(listen); /* a name, an IPv4 address or a bare IPv6 address */
		}
	}
	if (hlen == 0)
		goto malformed;
	if (portpart && !parse_port(portpart, port))
		goto malformed;
	if (hlen >= hostlen)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen, "http.listen host \"%s\" is too long",
		               listen);
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	return PW_OK;

malformed:
	return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
	               "invalid value for configuration key \"http.listen\" (%s): \"%s\" is not "
	               "host, host:port or [v6addr]:port",
	               pw_config_source(cfg, "http.listen"), listen);
}

/* A field of a query (plus_is_space false: '+' stays '+') or of a form body (true: '+' is a space). */
static pw_status field_param(const char *query, const char *name, bool plus_is_space, char *out, size_t outlen,
                             char *errbuf, size_t errlen)
{
	if (!query)
		return pw_fail(PW_ERR_NOT_FOUND, errbuf, errlen, "missing query parameter %s", name);
	size_t nl = strlen(name);
	/* the raw pairs: a decoded value's length is known, so a %00 is seen */
	for (const char *p = query; *p;) {
		const char *end = strchr(p, '&');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
			char *raw = strndup(p + nl + 1, n - nl - 1);
			if (!raw)
				return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
			size_t dn = 0;
			char *v = evhttp_uridecode(raw, plus_is_space, &dn);
			free(raw);
			if (!v)
				return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
			pw_status st = PW_OK;
			if (memchr(v, 0, dn))
				st = pw_fail(PW_ERR_INVALID, errbuf, errlen,
				             "query parameter %s contains a NUL byte", name);
			else if (!pw_input_utf8_ok(v, dn))
				st = pw_fail(PW_ERR_INVALID, errbuf, errlen,
				             "query parameter %s is not valid UTF-8", name);
			else if (dn >= outlen)
				st = pw_fail(PW_ERR_INVALID, errbuf, errlen,
				             "query parameter %s is too long (%zu bytes, at most %zu)", name,
				             dn, outlen - 1);
			else
				memcpy(out, v, dn + 1);
			free(v);
			return st;
		}
		p += n;
		if (*p == '&')
			p++;
	}
	return pw_fail(PW_ERR_NOT_FOUND, errbuf, errlen, "missing query parameter %s", name);
}

pw_status pw_http_query_param(const char *query, const char *name, char *out, size_t outlen,
                              char *errbuf, size_t errlen)
{
	return field_param(query, name, false, out, outlen, errbuf, errlen);
}

pw_status pw_http_form_param(const char *body, const char *name, char *out, size_t outlen, char *errbuf,
                             size_t errlen)
{
	return field_param(body, name, true, out, outlen, errbuf, errlen);
}

pw_status pw_http_query_get(const char *query, const char *name, char *out, size_t outlen)
{
	return pw_http_query_param(query, name, out, outlen, NULL, 0);
}

pw_http_conn_stats pw_http_conn_stats_get(const pw_http *h)
{
	return (pw_http_conn_stats){.open_now = h->open_now,
	                            .ended_deadline = h->ended_deadline,
	                            .ended_evicted = h->ended_evicted};
}
