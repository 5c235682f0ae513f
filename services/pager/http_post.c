/*
 * http_post.c: a blocking HTTP/1.1 POST with a deadline. See http_post.h.
 */
#define _GNU_SOURCE
#include "http_post.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pw_status.h"

static long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for events on fd until the deadline; 1 ready, 0 timeout, -1 error. */
static int wait_fd(int fd, short events, long long deadline)
{
	for (;;) {
		long long left = deadline - mono_ms();
		if (left <= 0)
			return 0;
		struct pollfd p = {.fd = fd, .events = events};
		int r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		return r < 0 ? -1 : r;
	}
}

static pw_status send_all(int fd, const char *buf, size_t len, long long deadline, char *errbuf,
                          size_t errlen)
{
	while (len > 0) {
		int r = wait_fd(fd, POLLOUT, deadline);
		if (r == 0)
			return pw_fail(PW_ERR_TIMEOUT, errbuf, errlen, "sending the request timed out");
		ssize_t n = r < 0 ? -1 : send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (r > 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "sending the request failed: %s",
			               strerror(errno));
		}
		buf += n;
		len -= (size_t)n;
	}
	return PW_OK;
}

pw_status pager_http_post(const char *url, const char *ctype, const char *body, size_t len,
                          const char *extra_header, int timeout_ms, int *http_status,
                          char *errbuf, size_t errlen)
{
	char host[256], port[16] = "80";
	const char *path;
	*http_status = 0;
	if (!url || strncmp(url, "http://", 7) != 0)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "url \"%s\" is not http://host[:port]/path",
		               url ? url : "");
	const char *h = url + 7;
	const char *slash = strchr(h, '/');
	size_t hl = slash ? (size_t)(slash - h) : strlen(h);
	path = slash ? slash : "/";
	if (hl == 0 || hl >= sizeof host)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "url \"%s\" has no usable host", url);
	memcpy(host, h, hl);
	host[hl] = 0;
	char *colon = strrchr(host, ':');
	if (colon) {
		snprintf(port, sizeof port, "%s", colon + 1);
		*colon = 0;
	}
	long long deadline = mono_ms() + (timeout_ms > 0 ? timeout_ms : 5000);
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	int gr = getaddrinfo(host, port, &hints, &ai);
	if (gr != 0)
		return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "resolving \"%s\": %s", host,
		               gai_strerror(gr));
	int fd = -1;
	pw_status st = PW_ERR_UNAVAILABLE;
	char *req = NULL;
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS && wait_fd(fd, POLLOUT, deadline) > 0) {
			int err = 0;
			socklen_t el = sizeof err;
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0)
				break;
			errno = err;
		}
		pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "connecting to %s:%s: %s", host, port,
		        strerror(errno ? errno : ETIMEDOUT));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return PW_ERR_UNAVAILABLE;
	int n = asprintf(&req,
	                 "POST %s HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
	                 "User-Agent: perfwatch-pager\r\n%s%sConnection: close\r\n\r\n",
	                 path, host, port, ctype, len, extra_header ? extra_header : "",
	                 extra_header ? "\r\n" : "");
	if (n < 0) {
		st = PW_ERR_NOMEM;
		req = NULL;
		goto out;
	}
	if ((st = send_all(fd, req, (size_t)n, deadline, errbuf, errlen)) != PW_OK ||
	    (st = send_all(fd, body, len, deadline, errbuf, errlen)) != PW_OK)
		goto out;
	/* the status line is all we keep; the rest is read (capped) and dropped */
	char reply[1024];
	size_t got = 0;
	for (;;) {
		int r = wait_fd(fd, POLLIN, deadline);
		if (r == 0) {
			st = pw_fail(PW_ERR_TIMEOUT, errbuf, errlen, "no reply from %s:%s within %d ms", host,
			             port, timeout_ms);
			goto out;
		}
		ssize_t k = r < 0 ? -1 : recv(fd, reply + got, sizeof reply - 1 - got, 0);
		if (k < 0 && r > 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
		if (got == sizeof reply - 1 || memchr(reply, '\n', got))
			break;
	}
	reply[got] = 0;
	int code = 0;
	if (sscanf(reply, "HTTP/%*d.%*d %d", &code) != 1) {
		st = pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "no HTTP status line from %s:%s", host, port);
		goto out;
	}
	*http_status = code;
	if (code < 200 || code > 299) {
		char *eol = strpbrk(reply, "\r\n");
		if (eol)
			*eol = 0;
		st = pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "%s:%s answered \"%.80s\"", host, port, reply);
		goto out;
	}
	st = PW_OK;
out:
	free(req);
	close(fd);
	return st;
}
