/*
 * fuzz.h: what the fuzz targets of bench/fuzz share.
 *
 * Each fuzz_*.c defines LLVMFuzzerTestOneInput, the libFuzzer entry point.
 * Built with clang and -fsanitize=fuzzer (`make fuzz`, PW_FUZZ=ON) it is a
 * libFuzzer program for long runs; built with the ordinary compiler it links
 * replay.c instead, a main that runs the entry point once on every file of
 * the folders it is given: the seed corpus replayed under ASan + UBSan as a
 * unit test (ctest -L unit, fuzz_smoke_*).
 */
#ifndef PW_FUZZ_H
#define PW_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Writes data to a file of this process (created once, truncated each call)
 * and returns its path, for the parsers that read a path. NULL when the file
 * cannot be written (the target then skips the input).
 */
const char *pw_fuzz_file(const uint8_t *data, size_t size);

#endif
