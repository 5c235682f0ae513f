/*
 * fuzz_cli_input.c: the perfwatch CLI's input files (tools/perfwatch/cli.h)
 * on arbitrary bytes: the input is written to a file and read both as a
 * file of numbers (pw_cli_read_numbers: compare, changepoints, classify)
 * and as a file of runs (pw_cli_read_runs: one run a line, samples split by
 * blanks or commas). What is accepted must be finite numbers, and at least
 * one; what is refused leaves nothing allocated. The bytes up to the first
 * NUL also go through the door of the ids and keys typed on the command line
 * (pw_cli_id_ok): what it accepts is at most the cap, valid UTF-8 without a
 * control character; what it refuses gets a reason of bounded length.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz.h"
#include "pw_input.h"
#include "pw_limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *arg = malloc(size + 1);
	if (!arg)
		return 0;
	memcpy(arg, data, size);
	arg[size] = '\0';
	char why[256];
	size_t n = strlen(arg);
	if (pw_cli_id_ok(arg, PW_ID_MAX, why, sizeof why)) {
		if (n == 0 || n > PW_ID_MAX || !pw_input_utf8_ok(arg, n))
			abort();
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)arg[i] < 0x20 || arg[i] == 0x7f)
				abort();
	} else if (!why[0] || strlen(why) >= sizeof why - 1) {
		abort();
	}
	free(arg);

	const char *path = pw_fuzz_file(data, size);
	if (!path)
		return 0;
	pw_cli_vec v = {0};
	if (pw_cli_read_numbers(path, &v) == 0) {
		if (v.n == 0)
			abort();
		for (size_t i = 0; i < v.n; i++)
			if (!isfinite(v.v[i]))
				abort();
	}
	pw_cli_vec_release(&v);

	pw_cli_vec *runs = NULL;
	size_t nruns = 0;
	if (pw_cli_read_runs(path, &runs, &nruns) == 0) {
		if (nruns == 0)
			abort();
		for (size_t r = 0; r < nruns; r++) {
			for (size_t i = 0; i < runs[r].n; i++)
				if (!isfinite(runs[r].v[i]))
					abort();
			pw_cli_vec_release(&runs[r]);
		}
		free(runs);
	}
	return 0;
}
