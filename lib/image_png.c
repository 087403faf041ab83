/*
 * image_png.c - PNG decoding through libpng's simplified API, which
 * expands palettes, reduces 16-bit samples and strips alpha for us.
 */
#include <png.h>
#include <stdio.h>
#include <string.h>

#include "image.h"

int
image_png_load(const char *path, struct image *im, char *err)
{
	png_image pi;
	memset(&pi, 0, sizeof pi);
	pi.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_file(&pi, path)) {
		snprintf(err, IMAGE_ERRLEN, "%s: PNG: %s", path, pi.message);
		png_image_free(&pi);
		return -1;
	}
	int c = pi.format & PNG_FORMAT_FLAG_COLOR ? 3 : 1;
	/* Alpha is composited onto black (background NULL): what a viewer of
	 * the RGB planes sees, and the usual choice of data set loaders. */
	pi.format = c == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
	if (pi.width > IMAGE_MAXSIDE || pi.height > IMAGE_MAXSIDE ||
	    image_alloc(im, 1, (int)pi.height, (int)pi.width, c) < 0) {
		snprintf(err, IMAGE_ERRLEN, "%s: PNG: absurd size %ux%u", path,
		    pi.width, pi.height);
		png_image_free(&pi);
		return -1;
	}
	if (!png_image_finish_read(&pi, NULL, im->px, 0, NULL)) {
		snprintf(err, IMAGE_ERRLEN, "%s: PNG: %s", path, pi.message);
		png_image_free(&pi);
		return -1;
	}
	png_image_free(&pi);
	return 0;
}
