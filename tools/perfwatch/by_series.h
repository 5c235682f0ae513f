/*
 * by_series.h: many series in one file for `perfwatch classify` and
 * `perfwatch changepoints` (--by-series). See by_series.c for the format.
 */
#ifndef PW_CLI_BY_SERIES_H
#define PW_CLI_BY_SERIES_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"

#define PW_CLI_LINE_MAX 65536
#define PW_CLI_NAME_MAX 512
#define PW_CLI_SERIES_RUNS_MAX 1000000

/*
 * Called once per series with its runs (borrowed for the call, oldest
 * first); returns PW_CLI_EXIT_OK to go on, else the exit code to stop with.
 */
typedef int (*pw_cli_series_fn)(const char *name, pw_cli_vec *runs, size_t nruns, void *ctx);

/*
 * Reads path ("-" for stdin) and calls fn per series. Returns
 * PW_CLI_EXIT_OK, PW_CLI_EXIT_USAGE after "perfwatch: FILE:LINE: reason" on
 * bad input (series before it were already reported), PW_CLI_EXIT_FAIL on
 * out of memory, or fn's code.
 */
int pw_cli_read_by_series(const char *path, pw_cli_series_fn fn, void *ctx);

/* Removes flag from argv if present (shifting the rest) and says whether it was. */
bool pw_cli_take_flag(int *argc, char **argv, const char *flag);

/* Prints s as a JSON string. */
void pw_cli_json_string(FILE *out, const char *s);

#endif
