/* fuzz_cifar.c - a CIFAR-10 file (a multiple of 3073 bytes) or else a
 * CIFAR-100 one, and its first and last records. */
#include "fuzz.h"
#include "source.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_path(data, size);
	char *paths[1] = { (char *)path };
	struct source s = { 0 };
	struct image im = { 0 };
	struct err e;
	char name[SOURCE_NAMELEN];

	if (path != NULL && cifar_load(&s, paths, 1, size % 3073 != 0, 0, &e) == 0 &&
	    s.n > 0) {
		source_get(&s, 0, &im, name, &e);
		source_get(&s, s.n - 1, &im, name, &e);
	}
	image_free(&im);
	source_free(&s);
	return 0;
}
