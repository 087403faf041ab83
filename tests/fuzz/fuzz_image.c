/* fuzz_image.c - the PNG and JPEG readers (by magic bytes). */
#include "fuzz.h"
#include "image.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_path(data, size);
	struct image im = { 0 };
	struct err e;

	if (path != NULL)
		image_load(path, &im, &e);
	image_free(&im);
	return 0;
}
