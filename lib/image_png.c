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
	int alpha = (pi.format & PNG_FORMAT_FLAG_ALPHA) != 0;
	/* Alpha is read (8-bit sRGB, not premultiplied) and dropped, as PIL's
	 * convert("RGB") in torchvision's loader does: libpng would instead
	 * composite in linear light. */
	pi.format = (c == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY) | (alpha ? PNG_FORMAT_FLAG_ALPHA : 0);
	if (pi.width > IMAGE_MAXSIDE || pi.height > IMAGE_MAXSIDE ||
	    image_alloc(im, 1, (int)pi.height, (int)pi.width, c + alpha) < 0) {
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
	if (alpha) {
		size_t n = (size_t)im->h * im->w;
		for (size_t i = 0; i < n; i++)		/* forwards: in place */
			memmove(im->px + i * c, im->px + i * (c + 1), (size_t)c);
		im->c = c;
	}
	return 0;
}
