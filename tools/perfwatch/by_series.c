/*
 * by_series.c: the many-series input of `perfwatch classify --by-series` and
 * `perfwatch changepoints --by-series`: CSV with a series column, so that a
 * user with thousands of series runs one process instead of one per series.
 *
 * Each line is SERIES,SAMPLES: the series name (no comma), a comma, then
 * the run's samples separated by spaces or tabs (changepoints: one number).
 * A series' lines are consecutive and oldest first; blank lines and lines
 * starting with '#' are skipped. A line is at most PW_CLI_LINE_MAX bytes and
 * a series at most PW_CLI_SERIES_RUNS_MAX runs, so the memory held is
 * bounded by one series.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "by_series.h"

static void release_runs(pw_cli_vec *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		pw_cli_vec_release(&runs[i]);
}

static int push(pw_cli_vec *v, double x)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 4;
		double *p = realloc(v->v, cap * sizeof *p);
		if (!p)
			return -1;
		v->v = p;
		v->cap = cap;
	}
	v->v[v->n++] = x;
	return 0;
}

int pw_cli_read_by_series(const char *path, pw_cli_series_fn fn, void *ctx)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	if (!f) {
		fprintf(stderr, "perfwatch: could not open \"%s\": %s\n", path, strerror(errno));
		return PW_CLI_EXIT_USAGE;
	}
	int rc = PW_CLI_EXIT_OK;
	char *line = malloc(PW_CLI_LINE_MAX + 2);
	char name[PW_CLI_NAME_MAX + 1] = "";
	pw_cli_vec *runs = NULL;
	size_t nruns = 0, cap = 0, lineno = 0, groups = 0;
	if (!line) {
		rc = PW_CLI_EXIT_FAIL;
		goto out;
	}
	for (;;) {
		bool eof = !fgets(line, PW_CLI_LINE_MAX + 2, f);
		size_t len = eof ? 0 : strlen(line);
		if (!eof) {
			lineno++;
			if (len > PW_CLI_LINE_MAX && line[len - 1] != '\n') {
				fprintf(stderr, "perfwatch: %s:%zu: line longer than %d bytes\n", path, lineno,
				        PW_CLI_LINE_MAX);
				rc = PW_CLI_EXIT_USAGE;
				goto out;
			}
			while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
				line[--len] = '\0';
			if (len == 0 || line[0] == '#')
				continue;
		}
		char *comma = eof ? NULL : strchr(line, ',');
		if (!eof && (!comma || comma == line || (size_t)(comma - line) > PW_CLI_NAME_MAX)) {
			fprintf(stderr, "perfwatch: %s:%zu: expected SERIES,SAMPLES (a name of 1 to %d "
			                "bytes, a comma, the samples)\n",
			        path, lineno, PW_CLI_NAME_MAX);
			rc = PW_CLI_EXIT_USAGE;
			goto out;
		}
		bool same = !eof && nruns > 0 && (size_t)(comma - line) == strlen(name) &&
		            memcmp(line, name, strlen(name)) == 0;
		if (!same && nruns > 0) {
			rc = fn(name, runs, nruns, ctx);
			release_runs(runs, nruns);
			nruns = 0;
			groups++;
			if (rc != PW_CLI_EXIT_OK)
				goto out;
		}
		if (eof)
			break;
		if (!same) {
			memcpy(name, line, (size_t)(comma - line));
			name[comma - line] = '\0';
		}
		if (nruns == PW_CLI_SERIES_RUNS_MAX) {
			fprintf(stderr, "perfwatch: %s:%zu: series \"%s\" has more than %d runs\n", path,
			        lineno, name, PW_CLI_SERIES_RUNS_MAX);
			rc = PW_CLI_EXIT_USAGE;
			goto out;
		}
		if (nruns == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			pw_cli_vec *p = realloc(runs, ncap * sizeof *p);
			if (!p) {
				rc = PW_CLI_EXIT_FAIL;
				goto out;
			}
			runs = p;
			cap = ncap;
		}
		pw_cli_vec *run = &runs[nruns++];
		memset(run, 0, sizeof *run);
		char *s = comma + 1, *end;
		for (;;) {
			while (*s == ' ' || *s == '\t')
				s++;
			if (!*s)
				break;
			errno = 0;
			double x = strtod(s, &end);
			if (end == s || errno == ERANGE || !isfinite(x) ||
			    (*end && *end != ' ' && *end != '\t')) {
				fprintf(stderr, "perfwatch: %s:%zu: not a finite number: \"%s\"\n", path, lineno,
				        s);
				rc = PW_CLI_EXIT_USAGE;
				goto out;
			}
			if (push(run, x) != 0) {
				rc = PW_CLI_EXIT_FAIL;
				goto out;
			}
			s = end;
		}
		if (run->n == 0) {
			fprintf(stderr, "perfwatch: %s:%zu: no samples for series \"%s\"\n", path, lineno,
			        name);
			rc = PW_CLI_EXIT_USAGE;
			goto out;
		}
	}
	if (groups == 0) {
		fprintf(stderr, "perfwatch: %s: no series\n", path);
		rc = PW_CLI_EXIT_USAGE;
	}
out:
	if (rc == PW_CLI_EXIT_FAIL)
		fprintf(stderr, "perfwatch: %s: out of memory\n", path);
	release_runs(runs, nruns);
	free(runs);
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

bool pw_cli_take_flag(int *argc, char **argv, const char *flag)
{
	for (int i = 1; i < *argc; i++)
		if (strcmp(argv[i], flag) == 0) {
			memmove(&argv[i], &argv[i + 1], (size_t)(*argc - i) * sizeof *argv);
			(*argc)--;
			return true;
		}
	return false;
}

void pw_cli_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}
