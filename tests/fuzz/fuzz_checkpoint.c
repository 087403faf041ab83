/* fuzz_checkpoint.c - ckpt_load, for evaluation and (odd sizes) to resume. */
#include "checkpoint.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_path(data, size);
	struct vt s;
	struct err e;

	if (path == NULL)
		return 0;
	vit_destroy(ckpt_load(path, &s, 2, 0, (int)(size & 1), &e));
	vt_free(&s);
	return 0;
}
