/*
 * fuzz.h - what the fuzz harnesses share.  Each tests/fuzz/fuzz_*.c is one
 * reader behind the libFuzzer entry point LLVMFuzzerTestOneInput, driven
 * by clang's libFuzzer (make fuzz) or AFL++, and replayed over the
 * committed corpora by replay.c (make test: tests/sh/fuzz_replay.sh).
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int	 LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A path naming a file that holds data[size] (one memory file, rewritten
 * at each call), for the readers that open a path; NULL on failure. */
static inline const char *
fuzz_path(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		if ((fd = memfd_create("fuzz", 0)) < 0)
			return NULL;
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		return NULL;
	return path;
}

#endif
