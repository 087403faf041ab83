/* fuzz_npy.c - .npy images through patchify's reader, and a record. */
#include "fuzz.h"
#include "source.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_path(data, size);
	struct source s = { 0 };
	struct image im = { 0 };
	struct err e;

	if (path != NULL && npy_source_load(&s, path, NULL, 0, &e) == 0 && s.n > 0)
		source_get(&s, s.n - 1, &im, NULL, &e);
	image_free(&im);
	source_free(&s);
	return 0;
}
