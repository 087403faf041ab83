/* fuzz_video.c - the video reader (FFmpeg): 4 frames sampled. */
#include "fuzz.h"
#include "video.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_path(data, size);
	struct image im = { 0 };
	int64_t range[2];
	struct err e;

	if (path != NULL)
		video_load(path, 4, 0, &im, range, &e);
	image_free(&im);
	return 0;
}
