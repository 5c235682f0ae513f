/*
 * fuzz_cli_input.c: the perfwatch CLI's input files (tools/perfwatch/cli.h)
 * on arbitrary bytes: the input is written to a file and read both as a
 * file of numbers (pw_cli_read_numbers: compare, changepoints, classify)
 * and as a file of runs (pw_cli_read_runs: one run a line, samples split by
 * blanks or commas). What is accepted must be finite numbers, and at least
 * one; what is refused leaves nothing allocated.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
