/*
 * fuzz_file.c: pw_fuzz_file (fuzz.h), one scratch file per process for the
 * targets whose parser reads a path (configuration files, the CLI's inputs).
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_path[64];
static int fuzz_fd = -1;

static void fuzz_file_remove(void)
{
	if (fuzz_fd >= 0) {
		close(fuzz_fd);
		unlink(fuzz_path);
	}
}

const char *pw_fuzz_file(const uint8_t *data, size_t size)
{
	if (fuzz_fd < 0) {
		snprintf(fuzz_path, sizeof fuzz_path, "/tmp/pw-fuzz-XXXXXX");
		fuzz_fd = mkstemp(fuzz_path);
		if (fuzz_fd < 0)
			return NULL;
		atexit(fuzz_file_remove);
	}
	if (ftruncate(fuzz_fd, 0) != 0)
		return NULL;
	size_t off = 0;
	while (off < size) {
		ssize_t n = pwrite(fuzz_fd, data + off, size - off, (off_t)off);
		if (n <= 0)
			return NULL;
		off += (size_t)n;
	}
	return fuzz_path;
}
