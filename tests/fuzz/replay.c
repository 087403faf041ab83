/*
 * replay.c - main for a fuzz harness outside libFuzzer: each file operand
 * through LLVMFuzzerTestOneInput once (the corpora, in make test).  Exit 0
 * when every input returned; a crash, hang or blow-up is the caller's to
 * see (tests/sh/fuzz_replay.sh runs it under limits).
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

int
main(int argc, char *argv[])
{
	for (int i = 1; i < argc; i++) {
		FILE *fp = fopen(argv[i], "rb");
		unsigned char *buf = NULL;
		long n;

		if (fp == NULL || fseek(fp, 0, SEEK_END) < 0 || (n = ftell(fp)) < 0 ||
		    fseek(fp, 0, SEEK_SET) < 0 || (buf = malloc((size_t)n + 1)) == NULL ||
		    fread(buf, 1, (size_t)n, fp) != (size_t)n) {
			perror(argv[i]);
			return 1;
		}
		fclose(fp);
		LLVMFuzzerTestOneInput(buf, (size_t)n);
		free(buf);
	}
	return 0;
}
