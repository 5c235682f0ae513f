/*
 * replay.c: the main of a fuzz target built without libFuzzer (fuzz.h):
 * runs LLVMFuzzerTestOneInput once on every regular file of each folder (or
 * file) named on the command line, in name order, and says how many it ran.
 * A crash, a sanitizer report or a leak ends the process as it would under
 * libFuzzer; exit 1 when a path cannot be read or nothing ran.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path, size_t *ran)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return -1;
	}
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	size_t k;
	while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "replay: out of memory reading %s\n", path);
		return -1;
	}
	/* an exact-size copy, so that ASan sees a read past the input's end */
	uint8_t *in = malloc(n ? n : 1);
	if (!in) {
		free(buf);
		return -1;
	}
	memcpy(in, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(in, n);
	free(in);
	(*ran)++;
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	size_t ran = 0;
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		struct stat sb;
		if (stat(argv[i], &sb) != 0) {
			fprintf(stderr, "replay: cannot read %s\n", argv[i]);
			rc = 1;
			continue;
		}
		if (!S_ISDIR(sb.st_mode)) {
			if (run_file(argv[i], &ran) != 0)
				rc = 1;
			continue;
		}
		struct dirent **names = NULL;
		int n = scandir(argv[i], &names, NULL, by_name);
		if (n < 0) {
			fprintf(stderr, "replay: cannot list %s\n", argv[i]);
			rc = 1;
			continue;
		}
		for (int j = 0; j < n; j++) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", argv[i], names[j]->d_name);
			if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && run_file(path, &ran) != 0)
				rc = 1;
			free(names[j]);
		}
		free(names);
	}
	printf("replay: %zu inputs\n", ran);
	return rc == 0 && ran > 0 ? 0 : 1;
}
