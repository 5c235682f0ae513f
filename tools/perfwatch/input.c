/*
 * input.c: reading the number and run files the statistics commands take, with
 * errors that name the file and line, and small JSON helpers.
 */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void pw_cli_vec_release(pw_cli_vec *vec)
{
	free(vec->v);
	vec->v = NULL;
	vec->n = vec->cap = 0;
}

static int vec_push(pw_cli_vec *vec, double x)
{
	if (vec->n == vec->cap) {
		size_t cap = vec->cap ? vec->cap * 2 : 64;
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

/*
 * Reads path line by line; each non-blank, non-comment line's tokens are passed
 * to on_line. Shared by both file shapes.
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
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	int rc = 0;
	*nlines = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
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
	if (rc == 0 && *nlines == 0) {
		fprintf(stderr, "perfwatch: %s:%zu: empty file: no numbers\n", path, lineno);
		rc = -1;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

static int tokens_into(pw_cli_vec *vec, char *line, size_t lineno, const char *path,
                       bool one_only)
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
			fprintf(stderr, "perfwatch: %s:%zu: \"%s\": %s\n", path, lineno, tok, why);
			return -1;
		}
		if (vec_push(vec, x) != 0) {
			fprintf(stderr, "perfwatch: %s:%zu: out of memory\n", path, lineno);
			return -1;
		}
		count++;
	}
	return 0;
}

static int on_number_line(void *ctx, char *line, size_t lineno, const char *path)
{
	return tokens_into(ctx, line, lineno, path, true);
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
	return tokens_into(run, line, lineno, path, false);
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
