/*
 * input.c: reading the number and run files the statistics commands take, with
 * errors that name the file and line, and small JSON helpers.
 */
#include <errno.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pw_input.h"

void pw_cli_vec_release(pw_cli_vec *vec)
{
	free(vec->v);
	vec->v = NULL;
	vec->n = vec->cap = 0;
}

static int vec_push(pw_cli_vec *vec, double x)
{
	if (vec->n == vec->cap) {
		size_t cap = vec->cap ? vec->cap * 2 : 8;
		double *v = realloc(vec->v, cap * sizeof *v);
		if (!v)
			return -1;
		vec->v = v;
		vec->cap = cap;
	}
	vec->v[vec->n++] = x;
	return 0;
}

/* Parses one token as a finite double; on failure writes why into why. */
static int parse_finite(const char *tok, double *x, const char **why)
{
	char *end;
	errno = 0;
	double v = strtod(tok, &end);
	if (end == tok || *end != '\0') {
		*why = "not a number";
		return -1;
	}
	if (isnan(v)) {
		*why = "NaN is not a measurement";
		return -1;
	}
	if (isinf(v) || errno == ERANGE) {
		*why = "infinite or out of range";
		return -1;
	}
	*x = v;
	return 0;
}

/* Shows at most 40 bytes of a bad token: a 1 GB line is not echoed. */
static void quote_token(FILE *out, const char *tok)
{
	size_t n = strlen(tok);
	fprintf(out, "\"%.*s%s\"", (int)(n > 40 ? 40 : n), tok, n > 40 ? "..." : "");
}

bool pw_cli_id_ok(const char *s, size_t max, char *why, size_t whylen)
{
	size_t n = strlen(s);
	const char *bad = NULL;
	if (n == 0)
		bad = "is empty";
	else if (n > max)
		bad = "is too long";
	else if (!pw_input_utf8_ok(s, n))
		bad = "is not valid UTF-8";
	else
		for (size_t i = 0; i < n && !bad; i++)
			if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
				bad = "contains a control character";
	if (!bad)
		return true;
	char shown[4 * 40 + 1];
	size_t k = 0;
	for (size_t i = 0; i < n && i < 40; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			shown[k++] = (char)c;
		else
			k += (size_t)snprintf(shown + k, sizeof shown - k, "\\x%02x", c);
	}
	shown[k] = '\0';
	snprintf(why, whylen, "\"%s%s\" (%zu bytes, at most %zu) %s", shown, n > 40 ? "..." : "", n, max, bad);
	return false;
}

int pw_cli_check_id(const char *what, const char *s, size_t max)
{
	char why[256];
	if (pw_cli_id_ok(s, max, why, sizeof why))
		return -1;
	fprintf(stderr, "perfwatch: %s %s\n", what, why);
	return PW_CLI_EXIT_USAGE;
}

/*
 * Reads path line by line; each non-blank, non-comment line's tokens are passed
 * to on_line. Shared by both file shapes. Bounded: a line is at most
 * PW_CLI_LINE_MAX bytes, a file at most PW_CLI_LINES_MAX lines (the numbers
 * themselves are capped by vec_push at PW_CLI_VALUES_MAX); a directory or a
 * NUL byte is a clear error.
 */
static int read_lines(const char *path, int (*on_line)(void *ctx, char *line, size_t lineno,
                                                      const char *path),
                      void *ctx, size_t *nlines)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	if (!f) {
		fprintf(stderr, "perfwatch: %s: cannot open: %s\n", path, strerror(errno));
		return -1;
	}
	struct stat sb;
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "perfwatch: %s: is a directory, not a file of numbers\n", path);
		if (f != stdin)
			fclose(f);
		return -1;
	}
	char *line = malloc(PW_CLI_LINE_MAX + 1);
	if (!line) {
		fprintf(stderr, "perfwatch: %s: out of memory\n", path);
		if (f != stdin)
			fclose(f);
		return -1;
	}
	size_t lineno = 0;
	int rc = 0, c = 0;
	*nlines = 0;
	while (c != EOF) {
		size_t len = 0;
		bool nul = false;
		while ((c = getc_unlocked(f)) != EOF && c != '\n') {
			if (len == PW_CLI_LINE_MAX) {
				fprintf(stderr, "perfwatch: %s:%zu: line is longer than %d bytes\n", path,
				        lineno + 1, PW_CLI_LINE_MAX);
				rc = -1;
				goto out;
			}
			nul |= c == '\0';
			line[len++] = (char)c;
		}
		if (c == EOF && len == 0)
			break;
		if (ferror(f)) {
			fprintf(stderr, "perfwatch: %s: read error: %s\n", path, strerror(errno));
			rc = -1;
			goto out;
		}
		lineno++;
		if (lineno > PW_CLI_LINES_MAX) {
			fprintf(stderr, "perfwatch: %s: more than %d lines\n", path, PW_CLI_LINES_MAX);
			rc = -1;
			goto out;
		}
		if (nul) {
			fprintf(stderr, "perfwatch: %s:%zu: line contains a NUL byte\n", path, lineno);
			rc = -1;
			goto out;
		}
		line[len] = '\0';
		while (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		char *p = line + strspn(line, " \t");
		if (*p == '\0' || *p == '#')
			continue;
		if (on_line(ctx, p, lineno, path) != 0) {
			rc = -1;
			break;
		}
		(*nlines)++;
	}
	if (ferror(f)) {
		fprintf(stderr, "perfwatch: %s: read error: %s\n", path, strerror(errno));
		rc = -1;
	}
	if (rc == 0 && *nlines == 0) {
		fprintf(stderr, "perfwatch: %s:%zu: empty file: no numbers\n", path, lineno);
		rc = -1;
	}
out:
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

static int tokens_into(pw_cli_vec *vec, size_t *total, char *line, size_t lineno,
                       const char *path, bool one_only)
{
	char *save = NULL;
	size_t count = 0;
	for (char *tok = strtok_r(line, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
		double x;
		const char *why;
		if (one_only && count == 1) {
			fprintf(stderr, "perfwatch: %s:%zu: more than one number on the line\n", path,
			        lineno);
			return -1;
		}
		if (parse_finite(tok, &x, &why) != 0) {
			fprintf(stderr, "perfwatch: %s:%zu: ", path, lineno);
			quote_token(stderr, tok);
			fprintf(stderr, ": %s\n", why);
			return -1;
		}
		if (*total >= PW_CLI_VALUES_MAX) {
			fprintf(stderr, "perfwatch: %s:%zu: more than %d numbers\n", path, lineno,
			        PW_CLI_VALUES_MAX);
			return -1;
		}
		if (vec_push(vec, x) != 0) {
			fprintf(stderr, "perfwatch: %s:%zu: out of memory\n", path, lineno);
			return -1;
		}
		(*total)++;
		count++;
	}
	if (count == 0) { /* separators only, e.g. "," (found by bench/fuzz/fuzz_cli_input) */
		fprintf(stderr, "perfwatch: %s:%zu: no number on the line\n", path, lineno);
		return -1;
	}
	return 0;
}

static int on_number_line(void *ctx, char *line, size_t lineno, const char *path)
{
	pw_cli_vec *vec = ctx;
	size_t total = vec->n;
	return tokens_into(vec, &total, line, lineno, path, true);
}

int pw_cli_read_numbers(const char *path, pw_cli_vec *out)
{
	size_t n;
	memset(out, 0, sizeof *out);
	if (read_lines(path, on_number_line, out, &n) != 0) {
		pw_cli_vec_release(out);
		return -1;
	}
	return 0;
}

typedef struct runs_ctx {
	pw_cli_vec *runs;
	size_t n, cap;
	size_t total; /* numbers over every run */
} runs_ctx;

static int on_run_line(void *vctx, char *line, size_t lineno, const char *path)
{
	runs_ctx *ctx = vctx;
	if (ctx->n == ctx->cap) {
		size_t cap = ctx->cap ? ctx->cap * 2 : 64;
		pw_cli_vec *r = realloc(ctx->runs, cap * sizeof *r);
		if (!r) {
			fprintf(stderr, "perfwatch: %s:%zu: out of memory\n", path, lineno);
			return -1;
		}
		ctx->runs = r;
		ctx->cap = cap;
	}
	pw_cli_vec *run = &ctx->runs[ctx->n];
	memset(run, 0, sizeof *run);
	ctx->n++;
	if (tokens_into(run, &ctx->total, line, lineno, path, false) != 0)
		return -1;
	if (run->n && run->n < run->cap) { /* a file of short runs holds what it read, not 8 each */
		double *v = realloc(run->v, run->n * sizeof *v);
		if (v) {
			run->v = v;
			run->cap = run->n;
		}
	}
	return 0;
}

int pw_cli_read_runs(const char *path, pw_cli_vec **runs, size_t *nruns)
{
	runs_ctx ctx = {0};
	size_t n;
	int rc = read_lines(path, on_run_line, &ctx, &n);
	if (rc != 0) {
		for (size_t i = 0; i < ctx.n; i++)
			pw_cli_vec_release(&ctx.runs[i]);
		free(ctx.runs);
		*runs = NULL;
		*nruns = 0;
		return -1;
	}
	*runs = ctx.runs;
	*nruns = ctx.n;
	return 0;
}

void pw_cli_json_number(FILE *out, double x)
{
	if (isfinite(x))
		fprintf(out, "%.10g", x);
	else
		fputs("null", out);
}

int pw_cli_parse_direction(const char *s)
{
	if (s && strcmp(s, "lower") == 0)
		return 0;
	if (s && strcmp(s, "higher") == 0)
		return 1;
	fprintf(stderr, "perfwatch: --direction must be \"lower\" or \"higher\", not \"%s\"\n",
	        s ? s : "");
	return -1;
}

static int direction_file_usage(const char *cmd, const char *file_word, const char *msg)
{
	fprintf(stderr, "perfwatch: %s: %s\n", cmd, msg);
	fprintf(stderr, "usage: perfwatch %s [--direction lower|higher] %s\n", cmd, file_word);
	return PW_CLI_EXIT_USAGE;
}

int pw_cli_parse_direction_file(int argc, char **argv, const char *file_word, int *higher,
                                const char **path)
{
	const char *cmd = argv[0];
	char msg[64];
	*higher = 0;
	*path = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--direction") == 0) {
			if (i + 1 >= argc)
				return direction_file_usage(cmd, file_word, "--direction needs a value");
			*higher = pw_cli_parse_direction(argv[++i]);
			if (*higher < 0)
				return PW_CLI_EXIT_USAGE;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			printf("usage: perfwatch %s [--direction lower|higher] %s\n", cmd, file_word);
			return PW_CLI_EXIT_OK;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			return direction_file_usage(cmd, file_word, "unknown option");
		} else if (*path) {
			snprintf(msg, sizeof msg, "one %s file only", file_word);
			return direction_file_usage(cmd, file_word, msg);
		} else {
			*path = argv[i];
		}
	}
	if (!*path) {
		snprintf(msg, sizeof msg, "missing %s", file_word);
		return direction_file_usage(cmd, file_word, msg);
	}
	return -1;
}

int pw_cli_parse_period(int argc, char **argv, const char *what, const char *opt,
                        bool (*valid)(const char *), const char *form, void (*usage)(FILE *),
                        const char **value, bool *text)
{
	*value = NULL;
	*text = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], opt) == 0 && i + 1 < argc) {
			*value = argv[++i];
		} else if (strcmp(argv[i], "--text") == 0) {
			*text = true;
		} else if (strcmp(argv[i], "--json") == 0) {
			*text = false;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return PW_CLI_EXIT_OK;
		} else {
			fprintf(stderr, "perfwatch: %s: unknown argument \"%s\"\n", what, argv[i]);
			usage(stderr);
			return PW_CLI_EXIT_USAGE;
		}
	}
	if (*value && !valid(*value)) {
		fprintf(stderr, "perfwatch: %s: %s \"%s\" is not %s\n", what, opt + 2, *value, form);
		return PW_CLI_EXIT_USAGE;
	}
	return -1;
}

bool pw_cli_day_ok(const char *s)
{
	return strlen(s) == 10 && s[4] == '-' && s[7] == '-' && strspn(s, "0123456789-") == 10;
}
