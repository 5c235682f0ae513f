/*
 * sanitizer_canary.c: a program that dies of the sanitizer report asked
 * for, built only in a sanitizer build. tests/integration/run.sh runs it
 * once per kind before the tests, to show that a report in any process is
 * seen (a died.<pid> mark and the report's text in PW_SANITIZER_DIR): a
 * check that cannot see a report would pass every test.
 *
 *   sanitizer_canary asan|ubsan|leak
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: sanitizer_canary asan|ubsan|leak\n");
		return 2;
	}
	volatile int big = INT_MAX, one = 1;
	if (strcmp(argv[1], "asan") == 0) {
		char *p = malloc(8);
		volatile size_t i = 8;
		p[i] = 'x'; /* heap-buffer-overflow */
		free(p);
	} else if (strcmp(argv[1], "ubsan") == 0) {
		printf("%d\n", big + one); /* signed integer overflow */
	} else if (strcmp(argv[1], "leak") == 0) {
		void *volatile p = malloc(64);
		p = NULL; /* lost at exit */
		(void)p;
	} else {
		fprintf(stderr, "sanitizer_canary: unknown kind \"%s\"\n", argv[1]);
		return 2;
	}
	return 0;
}
