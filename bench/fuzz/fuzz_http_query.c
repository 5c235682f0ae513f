/*
 * fuzz_http_query.c: the HTTP query-string parser every service's API uses
 * (pw_http_query_param / pw_http_query_get, common/pw_http.h) on arbitrary
 * bytes. Input: byte 0 picks the output buffer's size (1..256), then the
 * parameter name up to the first NUL, then the query string. An accepted
 * value must hold no NUL, be valid UTF-8 and fit its buffer; a refusal must
 * say why.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pw_http.h"
#include "pw_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t outlen = (size_t)data[0] + 1;
	const char *rest = (const char *)data + 1;
	size_t rest_len = size - 1;
	const char *nul = memchr(rest, '\0', rest_len);
	if (!nul)
		return 0;
	char *name = strndup(rest, (size_t)(nul - rest));
	char *query = strndup(nul + 1, rest_len - (size_t)(nul + 1 - rest));
	char *out = malloc(outlen);
	char err[256] = "";
	if (!name || !query || !out)
		goto done;
	pw_status st = pw_http_query_param(query, name, out, outlen, err, sizeof err);
	if (st == PW_OK) {
		size_t n = strnlen(out, outlen);
		if (n == outlen || !pw_input_utf8_ok(out, n))
			abort();
	} else if (err[0] == '\0')
		abort();
done:
	free(out);
	free(query);
	free(name);
	return 0;
}
