/* fuzz_idx.c - IDX images (plain or gzip), and their first and last
 * records. */
#include "fuzz.h"
#include "source.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_path(data, size);
	struct source s = { 0 };
	struct image im = { 0 };
	struct err e;
	char name[SOURCE_NAMELEN];

	if (path != NULL && idx_load(&s, path, NULL, &e) == 0 && s.n > 0) {
		source_get(&s, 0, &im, name, &e);
		source_get(&s, s.n - 1, &im, name, &e);
	}
	image_free(&im);
	source_free(&s);
	return 0;
}
