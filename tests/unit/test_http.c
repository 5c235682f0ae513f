/*
 * test_http.c: unit tests of the probe and metrics server (common/pw_http.c).
 *
 * Each test starts a server on an ephemeral 127.0.0.1 port and talks to it
 * with a tiny blocking HTTP/1.0 client over a raw socket: /healthz, /readyz
 * in both states, /metrics against the registry's own rendering, 404, 405,
 * an extra handler with a query string, oversized requests, clients that
 * reset the connection in the middle of a large response, and the clean
 * stop and free that ASan checks for leaks. Also the http.listen parsing of
 * pw_http_listen_from_config() and pw_http_query_get().
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "pw_config.h"
#include "pw_http.h"
#include "pw_metrics.h"

typedef struct response {
	int status;
	char *head; /* status line and headers, each ending "\r\n"; malloc'd */
	char *body; /* malloc'd */
	size_t body_len;
} response;

static void response_release(response *r)
{
	free(r->head);
	free(r->body);
}

/* A socket connected to 127.0.0.1:port whose reads give up after 5 s. */
static int connect_local(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert(fd >= 0);
	struct timeval tv = {.tv_sec = 5};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	return fd;
}

/* Sends raw (a whole request) to 127.0.0.1:port and reads until the server closes. */
static response roundtrip(int port, const char *raw, size_t rawlen)
{
	response r = {0};
	int fd = connect_local(port);
	for (size_t off = 0; off < rawlen;) {
		ssize_t n = send(fd, raw + off, rawlen - off, MSG_NOSIGNAL);
		if (n <= 0)
			break; /* the server may close early on an oversized request */
		off += (size_t)n;
	}
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (len + 1024 > cap)
			buf = realloc(buf, cap *= 2);
		ssize_t n = recv(fd, buf + len, cap - len - 1, 0);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	char *sep = strstr(buf, "\r\n\r\n");
	cr_assert_not_null(sep, "no complete response: \"%s\"", buf);
	sep[2] = '\0'; /* the head keeps the line end of its last header */
	r.head = strdup(buf);
	r.body_len = len - (size_t)(sep + 4 - buf);
	r.body = malloc(r.body_len + 1);
	memcpy(r.body, sep + 4, r.body_len);
	r.body[r.body_len] = '\0';
	cr_assert_eq(sscanf(r.head, "HTTP/1.%*d %d", &r.status), 1, "%s", r.head);
	free(buf);
	return r;
}

static response get(int port, const char *method, const char *path)
{
	char req[1024];
	int n = snprintf(req, sizeof req, "%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", method, path);
	return roundtrip(port, req, (size_t)n);
}

/* Requests path and checks the status and, unless body is NULL, the whole body. */
static void expect(int port, const char *method, const char *path, int status, const char *body)
{
	response r = get(port, method, path);
	cr_assert_eq(r.status, status, "%s %s: %s", method, path, r.head);
	if (body)
		cr_assert_str_eq(r.body, body, "%s %s", method, path);
	response_release(&r);
}

typedef struct readiness {
	atomic_bool ready;
} readiness;

static bool ready_cb(void *arg, char *reason, size_t len)
{
	readiness *r = arg;
	if (atomic_load(&r->ready))
		return true;
	snprintf(reason, len, "kafka: no partitions assigned yet");
	return false;
}

static void echo_handler(void *arg, const char *path, const char *query, pw_http_reply *reply)
{
	int *calls = arg;
	(*calls)++;
	char name[64];
	pw_status st = pw_http_query_get(query, "name", name, sizeof name);
	if (st != PW_OK) {
		reply->status = 400;
		fprintf(reply->body, "{\"error\":\"missing name\"}");
		return;
	}
	fprintf(reply->body, "{\"path\":\"%s\",\"name\":\"%s\"}", path, name);
}

typedef struct fixture {
	pw_metrics *reg;
	pw_metric *counter;
	readiness rd;
	int calls;
	pw_http *http;
	int port;
} fixture;

static void fixture_start(fixture *f)
{
	char err[256] = "";
	memset(f, 0, sizeof *f);
	atomic_init(&f->rd.ready, false);
	f->reg = pw_metrics_new();
	cr_assert_not_null(f->reg);
	cr_assert_eq(pw_metrics_counter(f->reg, "pw_http_test_total", "Test counter.",
	                                (const char *[]){"kind", NULL}, &f->counter, err, sizeof err),
	             PW_OK, "%s", err);
	pw_metric_inc(f->counter, (const char *[]){"a"});
	pw_http_opts opts = {.port = 0, .metrics = f->reg, .ready = ready_cb, .ready_arg = &f->rd};
	cr_assert_eq(pw_http_new(&opts, &f->http, err, sizeof err), PW_OK, "%s", err);
	cr_assert_eq(pw_http_handle(f->http, "/api/echo", echo_handler, &f->calls, err, sizeof err),
	             PW_OK, "%s", err);
	cr_assert_eq(pw_http_start(f->http, err, sizeof err), PW_OK, "%s", err);
	f->port = pw_http_port(f->http);
	cr_assert(f->port > 0 && f->port <= 65535);
}

static void fixture_stop(fixture *f)
{
	pw_http_stop(f->http);
	pw_http_free(f->http);
	pw_metrics_free(f->reg);
}

Test(http, probes_and_metrics)
{
	fixture f;
	fixture_start(&f);

	expect(f.port, "GET", "/healthz", 200, "ok\n");
	expect(f.port, "GET", "/readyz", 503, "not ready: kafka: no partitions assigned yet\n");
	atomic_store(&f.rd.ready, true);
	expect(f.port, "GET", "/readyz", 200, "ready\n");

	pw_metric_inc(f.counter, (const char *[]){"b"});
	response r = get(f.port, "GET", "/metrics");
	cr_assert_eq(r.status, 200);
	cr_assert_not_null(strstr(r.head, "\r\nContent-Type: text/plain; version=0.0.4\r\n"), "%s",
	                   r.head);
	char *want = NULL;
	cr_assert_eq(pw_metrics_render(f.reg, &want, NULL), PW_OK);
	cr_assert_str_eq(r.body, want);
	cr_assert_not_null(strstr(r.body, "pw_http_test_total{kind=\"b\"} 1\n"));
	free(want);
	response_release(&r);

	expect(f.port, "GET", "/metrics?debug=1", 200, NULL);
	expect(f.port, "GET", "/nope", 404, "not found\n");
	expect(f.port, "GET", "/healthz/", 404, NULL);
	expect(f.port, "POST", "/healthz", 405, "method not allowed\n");

	r = get(f.port, "HEAD", "/healthz");
	cr_assert_eq(r.status, 200);
	cr_assert_eq(r.body_len, 0);
	cr_assert_not_null(strstr(r.head, "\r\nContent-Length: 3\r\n"), "%s", r.head);
	response_release(&r);

	fixture_stop(&f);
}

Test(http, extra_handler)
{
	fixture f;
	fixture_start(&f);
	response r = get(f.port, "GET", "/api/echo?name=x%20y&other=1");
	cr_assert_eq(r.status, 200);
	cr_assert_not_null(strstr(r.head, "\r\nContent-Type: application/json\r\n"), "%s", r.head);
	cr_assert_str_eq(r.body, "{\"path\":\"/api/echo\",\"name\":\"x y\"}");
	response_release(&r);
	expect(f.port, "GET", "/api/echo", 400, "{\"error\":\"missing name\"}");
	cr_assert_eq(f.calls, 2);

	char err[256];
	cr_assert_eq(pw_http_handle(f.http, "/api/late", echo_handler, &f.calls, err, sizeof err),
	             PW_ERR_INVALID);
	cr_assert_str_eq(err, "cannot add HTTP handler \"/api/late\": server already started");
	cr_assert_eq(pw_http_start(f.http, err, sizeof err), PW_ERR_INVALID);
	fixture_stop(&f);
}

/* What a form handler saw, for form_handler below. */
typedef struct form_seen {
	int calls;
	char method[8], body[256], content_type[64], origin[64];
} form_seen;

static void form_echo(void *arg, const pw_http_request *req, pw_http_reply *reply)
{
	form_seen *s = arg;
	s->calls++;
	snprintf(s->method, sizeof s->method, "%s", req->method);
	snprintf(s->body, sizeof s->body, "%s", req->body);
	snprintf(s->content_type, sizeof s->content_type, "%s", req->content_type);
	snprintf(s->origin, sizeof s->origin, "%s", req->origin);
	char v[64] = "";
	pw_http_query_get(strcmp(req->method, "POST") == 0 ? req->body : req->query, "v", v, sizeof v);
	reply->content_type = "text/plain";
	fprintf(reply->body, "%s v=%s\n", req->method, v);
}

/*
 * A form handler takes GET, HEAD and POST (the body and its headers reach it);
 * other methods get 405 naming POST among the allowed; a GET-only path still
 * refuses POST; a body holding a NUL byte is refused before the handler.
 */
Test(http, form_handler)
{
	fixture f;
	fixture_start(&f);
	pw_http_stop(f.http);
	pw_http_free(f.http);
	char err[256];
	form_seen seen = {0};
	pw_http_opts opts = {.port = 0, .metrics = f.reg};
	cr_assert_eq(pw_http_new(&opts, &f.http, err, sizeof err), PW_OK, "%s", err);
	cr_assert_eq(pw_http_handle_form(f.http, "/form", form_echo, &seen, err, sizeof err), PW_OK, "%s", err);
	cr_assert_eq(pw_http_handle(f.http, "/api/echo", echo_handler, &f.calls, err, sizeof err), PW_OK, "%s", err);
	cr_assert_eq(pw_http_handle_form(f.http, "/form", form_echo, &seen, err, sizeof err), PW_ERR_INVALID);
	cr_assert_eq(pw_http_start(f.http, err, sizeof err), PW_OK, "%s", err);
	f.port = pw_http_port(f.http);

	expect(f.port, "GET", "/form?v=1", 200, "GET v=1\n");
	cr_expect_str_eq(seen.body, "");
	response r = get(f.port, "HEAD", "/form?v=2");
	cr_expect_eq(r.status, 200);
	cr_expect_eq(r.body_len, 0);
	cr_expect_str_eq(seen.method, "HEAD", "HEAD reaches the handler as HEAD (it must not act on it)");
	response_release(&r);
	const char post[] = "POST /form HTTP/1.0\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
	                    "Origin: http://127.0.0.1\r\nContent-Length: 11\r\n\r\nv=3&w=a%20b";
	r = roundtrip(f.port, post, sizeof post - 1);
	cr_expect_eq(r.status, 200, "%s", r.head);
	cr_expect_str_eq(r.body, "POST v=3\n");
	cr_expect_str_eq(seen.body, "v=3&w=a%20b");
	cr_expect_str_eq(seen.content_type, "application/x-www-form-urlencoded");
	cr_expect_str_eq(seen.origin, "http://127.0.0.1");
	response_release(&r);
	int calls = seen.calls;
	const char nul[] = "POST /form HTTP/1.0\r\nHost: x\r\nContent-Length: 3\r\n\r\nv\0x";
	r = roundtrip(f.port, nul, sizeof nul - 1);
	cr_expect_eq(r.status, 400, "%s", r.head);
	response_release(&r);
	cr_expect_eq(seen.calls, calls, "a body with a NUL byte never reaches the handler");
	r = get(f.port, "PUT", "/form");
	cr_expect_eq(r.status, 405);
	cr_expect_not_null(strstr(r.head, "\r\nAllow: GET, HEAD, POST\r\n"), "%s", r.head);
	response_release(&r);
	r = get(f.port, "POST", "/api/echo?name=x");
	cr_expect_eq(r.status, 405);
	cr_expect_not_null(strstr(r.head, "\r\nAllow: GET, HEAD\r\n"), "%s", r.head);
	response_release(&r);
	cr_expect_eq(f.calls, 0, "a GET handler never sees a POST");
	fixture_stop(&f);

	/* a form's fields: '+' is a space (as browsers encode it), %2B a plus; the query's checks hold */
	char v[32];
	cr_assert_eq(pw_http_form_param("by=alice+b%2Bc&x=1", "by", v, sizeof v, err, sizeof err), PW_OK);
	cr_expect_str_eq(v, "alice b+c");
	cr_assert_eq(pw_http_query_param("by=alice+b%2Bc", "by", v, sizeof v, err, sizeof err), PW_OK);
	cr_expect_str_eq(v, "alice+b+c", "a query keeps its '+'");
	cr_expect_eq(pw_http_form_param("by=a%00b", "by", v, sizeof v, err, sizeof err), PW_ERR_INVALID);
	cr_expect_eq(pw_http_form_param("x=1", "by", v, sizeof v, err, sizeof err), PW_ERR_NOT_FOUND);
}

Test(http, oversized_request_is_refused)
{
	fixture f;
	fixture_start(&f);
	size_t n = 64 * 1024;
	char *req = malloc(n + 128);
	int k = snprintf(req, n + 128, "GET /healthz HTTP/1.0\r\nX-Big: ");
	memset(req + k, 'a', n);
	memcpy(req + k + n, "\r\n\r\n", 5);
	int fd = connect_local(f.port);
	(void)!send(fd, req, (size_t)k + n + 4, MSG_NOSIGNAL);
	char buf[256] = "";
	ssize_t got = recv(fd, buf, sizeof buf - 1, 0);
	close(fd);
	free(req);
	/* either an error status or a closed connection, never a 200 */
	if (got > 0)
		cr_assert(strncmp(buf, "HTTP/1.1 200", 12) != 0 && strncmp(buf, "HTTP/1.0 200", 12) != 0,
		          "%s", buf);
	expect(f.port, "GET", "/healthz", 200, "ok\n"); /* the server still answers */
	fixture_stop(&f);
}

Test(http, lifecycle_and_errors)
{
	char err[256];
	pw_http *h = NULL;
	pw_http_opts opts = {.host = "127.0.0.1", .port = 0};
	cr_assert_eq(pw_http_new(&opts, &h, err, sizeof err), PW_OK, "%s", err);
	int port = pw_http_port(h);

	/* the port is taken while h lives */
	pw_http *h2 = (pw_http *)&h2;
	pw_http_opts same = {.port = port};
	cr_assert_eq(pw_http_new(&same, &h2, err, sizeof err), PW_ERR_IO);
	cr_assert_null(h2);
	char want[128];
	snprintf(want, sizeof want, "could not listen on \"127.0.0.1\" port %d: ", port);
	cr_assert(strncmp(err, want, strlen(want)) == 0, "%s", err);

	pw_http_opts bad = {.port = 70000};
	cr_assert_eq(pw_http_new(&bad, &h2, err, sizeof err), PW_ERR_INVALID);

	cr_assert_eq(pw_http_handle(h, "nope", echo_handler, NULL, err, sizeof err), PW_ERR_INVALID);
	cr_assert_eq(pw_http_handle(h, "/healthz", echo_handler, NULL, err, sizeof err),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_http_handle(h, "/x", echo_handler, NULL, err, sizeof err), PW_OK);
	cr_assert_eq(pw_http_handle(h, "/x", echo_handler, NULL, err, sizeof err), PW_ERR_INVALID);
	/* without a registry, /metrics is an ordinary path */
	cr_assert_eq(pw_http_handle(h, "/metrics", echo_handler, NULL, err, sizeof err), PW_OK);

	/* never started: free alone is clean */
	pw_http_free(h);
	pw_http_free(NULL);

	/* started, no readiness callback: always ready; free stops it */
	cr_assert_eq(pw_http_new(&opts, &h, err, sizeof err), PW_OK, "%s", err);
	cr_assert_eq(pw_http_start(h, err, sizeof err), PW_OK, "%s", err);
	expect(pw_http_port(h), "GET", "/readyz", 200, "ready\n");
	expect(pw_http_port(h), "GET", "/metrics", 404, NULL);
	pw_http_stop(h);
	pw_http_stop(h); /* twice is harmless */
	pw_http_free(h);
}

Test(http, stop_with_idle_connection_open)
{
	fixture f;
	fixture_start(&f);
	int fd = connect_local(f.port);
	(void)!send(fd, "GET /hea", 8, MSG_NOSIGNAL); /* a request left half-sent */
	usleep(50 * 1000);
	fixture_stop(&f);
	close(fd);
}

Test(http, client_resetting_mid_response)
{
	fixture f;
	fixture_start(&f);
	/* a /metrics body of some MB, so the server is still writing when the client resets */
	pw_metric *big;
	pw_metric_def def = {.name = "pw_http_test_big", .help = "Big.",
	                     .labels = (const char *[]){"v", NULL}, .max_series = 4000};
	cr_assert_eq(pw_metrics_register(f.reg, PW_METRIC_GAUGE, &def, &big, NULL, 0), PW_OK);
	char value[PW_METRICS_MAX_VALUE + 1];
	memset(value, 'v', PW_METRICS_MAX_VALUE);
	value[PW_METRICS_MAX_VALUE] = '\0';
	for (int i = 0; i < 4000; i++) {
		snprintf(value, 8, "%07d", i);
		value[7] = 'v';
		pw_metric_set(big, (const char *[]){value}, i);
	}
	for (int i = 0; i < 5; i++) {
		int fd = connect_local(f.port);
		static const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
		(void)!send(fd, req, sizeof req - 1, MSG_NOSIGNAL);
		char first[1024];
		(void)!recv(fd, first, sizeof first, 0); /* the server has begun to write */
		struct linger lg = {.l_onoff = 1, .l_linger = 0}; /* close with a reset */
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
		close(fd);
	}
	expect(f.port, "GET", "/healthz", 200, "ok\n");
	fixture_stop(&f);
}

static pw_config *config_with(const char *listen, const char *port)
{
	char err[256];
	pw_config *cfg = pw_config_new("t", NULL, 0, err, sizeof err);
	cr_assert_not_null(cfg, "%s", err);
	if (listen)
		cr_assert_eq(pw_config_set(cfg, "http.listen", listen, "test", err, sizeof err), PW_OK);
	if (port)
		cr_assert_eq(pw_config_set(cfg, "http.port", port, "test", err, sizeof err), PW_OK);
	return cfg;
}

Test(http, listen_from_config)
{
	static const struct {
		const char *listen, *port;
		pw_status st;
		const char *host;
		int want_port;
	} cases[] = {
		{NULL, "9105", PW_OK, "127.0.0.1", 9105},
		{"0.0.0.0:8080", "9105", PW_OK, "0.0.0.0", 8080},
		{"localhost", NULL, PW_OK, "localhost", 0},
		{"[::1]:9000", NULL, PW_OK, "::1", 9000},
		{"[::1]", "7", PW_OK, "::1", 7},
		{"::1", "7", PW_OK, "::1", 7},
		{"host:", NULL, PW_ERR_CONFIG, NULL, 0},
		{":80", NULL, PW_ERR_CONFIG, NULL, 0},
		{"h:99999", NULL, PW_ERR_CONFIG, NULL, 0},
		{"[::1", NULL, PW_ERR_CONFIG, NULL, 0},
		{"[::1]x", NULL, PW_ERR_CONFIG, NULL, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		pw_config *cfg = config_with(cases[i].listen, cases[i].port);
		char host[64] = "", err[256] = "";
		int port = -1;
		pw_status st = pw_http_listen_from_config(cfg, host, sizeof host, &port, err, sizeof err);
		cr_expect_eq(st, cases[i].st, "case %zu: %s", i, err);
		if (st == PW_OK && cases[i].st == PW_OK) {
			cr_expect_str_eq(host, cases[i].host, "case %zu", i);
			cr_expect_eq(port, cases[i].want_port, "case %zu", i);
		}
		pw_config_free(cfg);
	}
	pw_config *cfg = config_with("nohost:1", NULL);
	char host[4], err[256];
	int port;
	cr_assert_eq(pw_http_listen_from_config(cfg, host, sizeof host, &port, err, sizeof err),
	             PW_ERR_CONFIG);
	pw_config_free(cfg);
	cfg = config_with("h:x", NULL);
	cr_assert_eq(pw_http_listen_from_config(cfg, host, sizeof host, &port, err, sizeof err),
	             PW_ERR_CONFIG);
	cr_assert_str_eq(err, "invalid value for configuration key \"http.listen\" (test): \"h:x\" "
	                      "is not host, host:port or [v6addr]:port");
	pw_config_free(cfg);
}

Test(http, query_get)
{
	char v[8];
	cr_assert_eq(pw_http_query_get("a=1&b=x%2By", "b", v, sizeof v), PW_OK);
	cr_assert_str_eq(v, "x+y");
	cr_assert_eq(pw_http_query_get("a=1&B=2", "b", v, sizeof v), PW_ERR_NOT_FOUND);
	cr_assert_eq(pw_http_query_get(NULL, "b", v, sizeof v), PW_ERR_NOT_FOUND);
	cr_assert_eq(pw_http_query_get("b=12345678", "b", v, sizeof v), PW_ERR_INVALID);
	cr_assert_eq(pw_http_query_get("a=1", "a", v, sizeof v), PW_OK);
	cr_assert_str_eq(v, "1");
}

/* issue 19: %00 shortened the key, invalid UTF-8 reached PostgreSQL, a long key was "missing" */
Test(http, query_param_refuses_nul_bad_utf8_and_says_too_long)
{
	char v[16], why[256];
	cr_assert_eq(pw_http_query_param("series=chat-8b%00evil", "series", v, sizeof v, why,
	                                 sizeof why),
	             PW_ERR_INVALID);
	cr_assert_str_eq(why, "query parameter series contains a NUL byte");
	cr_assert_eq(pw_http_query_param("series=f-bad%FFutf", "series", v, sizeof v, why, sizeof why),
	             PW_ERR_INVALID);
	cr_assert_str_eq(why, "query parameter series is not valid UTF-8");
	cr_assert_eq(pw_http_query_param("series=0123456789abcdefXYZ", "series", v, sizeof v, why,
	                                 sizeof why),
	             PW_ERR_INVALID);
	cr_assert_str_eq(why, "query parameter series is too long (19 bytes, at most 15)");
	cr_assert_eq(pw_http_query_param("a=1", "series", v, sizeof v, why, sizeof why),
	             PW_ERR_NOT_FOUND);
	cr_assert_str_eq(why, "missing query parameter series");
	cr_assert_eq(pw_http_query_param("a=1&series=caf%C3%A9+x", "series", v, sizeof v, why,
	                                 sizeof why),
	             PW_OK);
	cr_assert_str_eq(v, "caf\xc3\xa9+x");
	/* the old entry point refuses the NUL too */
	cr_assert_eq(pw_http_query_get("series=a%00b", "series", v, sizeof v), PW_ERR_INVALID);
}

/* --- the connection guard: request deadline, connection limit, descriptors ---------------- */

static pw_http *guarded_server(size_t max_conns, long deadline_ms, int *port)
{
	char err[256] = "";
	pw_http *h = NULL;
	pw_http_opts opts = {.max_conns = max_conns, .request_deadline_ms = deadline_ms};
	cr_assert_eq(pw_http_new(&opts, &h, err, sizeof err), PW_OK, "%s", err);
	cr_assert_eq(pw_http_start(h, err, sizeof err), PW_OK, "%s", err);
	*port = pw_http_port(h);
	return h;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* true when the server ended fd's connection (EOF or reset) within wait_ms */
static bool ended_within(int fd, int wait_ms)
{
	struct timeval tv = {.tv_sec = wait_ms / 1000, .tv_usec = (wait_ms % 1000) * 1000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	char buf[512];
	ssize_t n;
	while ((n = recv(fd, buf, sizeof buf, 0)) > 0)
		;
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

static int open_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 4096; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			n++;
	return n;
}

/* A client that sends a header line every 200 ms, never the end, is cut at the deadline. */
Test(http, slow_request_ended_at_its_deadline)
{
	int port;
	pw_http *h = guarded_server(0, 1000, &port);
	int fd = connect_local(port);
	const char *start = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
	cr_assert_eq(send(fd, start, strlen(start), MSG_NOSIGNAL), (ssize_t)strlen(start));
	int64_t t0 = now_ms();
	bool ended = false;
	for (int i = 0; i < 25 && !ended; i++) { /* 5 s of trickling at most */
		usleep(200 * 1000);
		if (send(fd, "X-Slow: 1\r\n", 11, MSG_NOSIGNAL) != 11)
			ended = true;
		else if (ended_within(fd, 1))
			ended = true;
	}
	int64_t took = now_ms() - t0;
	close(fd);
	cr_assert(ended, "a request trickled in for 5 s was not ended");
	cr_assert(took >= 900 && took < 3000, "ended after %lld ms; the deadline is 1000 ms",
	          (long long)took);
	cr_assert_geq(pw_http_conn_stats_get(h).ended_deadline, 1);
	/* a quick request is not touched by the deadline */
	expect(port, "GET", "/healthz", 200, "ok\n");
	pw_http_free(h);
}

/* Past max_conns slow connections, a quick client is still answered at once. */
Test(http, slow_crowd_does_not_keep_a_quick_client_out)
{
	int port;
	pw_http *h = guarded_server(8, 60000, &port);
	int slow[40];
	const char *start = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
	for (int i = 0; i < 40; i++) {
		slow[i] = connect_local(port);
		cr_assert_eq(send(slow[i], start, strlen(start), MSG_NOSIGNAL), (ssize_t)strlen(start));
	}
	usleep(300 * 1000);
	for (int round = 0; round < 5; round++) {
		int64_t t0 = now_ms();
		expect(port, "GET", "/healthz", 200, "ok\n");
		cr_assert_lt(now_ms() - t0, 1000, "a quick request took %lld ms among slow ones",
		             (long long)(now_ms() - t0));
	}
	/* the oldest slow ones were ended to make room; at most 8 are left open */
	int still = 0;
	for (int i = 0; i < 40; i++) {
		if (!ended_within(slow[i], 20))
			still++;
		close(slow[i]);
	}
	pw_http_conn_stats cs = pw_http_conn_stats_get(h);
	cr_assert_leq(still, 8, "%d slow connections still open, the limit is 8", still);
	cr_assert_geq(cs.ended_evicted, 32, "%ld ended to make room", cs.ended_evicted);
	pw_http_free(h);
}

/* Connections come and go by the thousand: no descriptor is kept. */
Test(http, connections_release_their_descriptors)
{
	int port;
	pw_http *h = guarded_server(0, 0, &port);
	expect(port, "GET", "/healthz", 200, "ok\n");
	usleep(700 * 1000); /* a sweep */
	int before = open_fds();
	for (int i = 0; i < 1000; i++) {
		if (i % 2)
			expect(port, "GET", "/healthz", 200, "ok\n");
		else
			close(connect_local(port)); /* a client that hangs up at once */
	}
	usleep(1200 * 1000); /* evhttp frees, the sweep drops the last reference */
	int after = open_fds();
	cr_assert_leq(after, before + 2, "%d descriptors open before, %d after 1000 connections", before,
	              after);
	pw_http_conn_stats cs = pw_http_conn_stats_get(h);
	cr_assert_leq(cs.open_now, 2, "%ld connections still tracked", cs.open_now);
	pw_http_free(h);
}
