/*
 * image_png.c - PNG decoding through libpng's simplified API, which
 * expands palettes, reduces 16-bit samples and strips alpha for us.
 */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
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
	int deep = (pi.format & PNG_FORMAT_FLAG_LINEAR) != 0;	/* 16-bit samples */
	int n = c + alpha;
	/* Alpha is read and dropped, as PIL's convert("RGB") in torchvision's
	 * loader does (libpng would composite in linear light).  16-bit files
	 * are read as they are and scaled by 255/65535 (libpng's 8-bit output
	 * would re-encode them as sRGB). */
	pi.format = (c == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY) |
	    (alpha ? PNG_FORMAT_FLAG_ALPHA : 0) | (deep ? PNG_FORMAT_FLAG_LINEAR : 0);
	uint16_t *wide = NULL;
	if (pi.width > IMAGE_MAXSIDE || pi.height > IMAGE_MAXSIDE ||
	    image_alloc(im, 1, (int)pi.height, (int)pi.width, n) < 0 ||
	    (deep && !(wide = malloc(sizeof *wide * (size_t)pi.width * pi.height * n)))) {
		snprintf(err, IMAGE_ERRLEN, "%s: PNG: absurd size %ux%u", path,
		    pi.width, pi.height);
		png_image_free(&pi);
		return -1;
	}
	if (!png_image_finish_read(&pi, NULL, deep ? (void *)wide : im->px, 0, NULL)) {
		snprintf(err, IMAGE_ERRLEN, "%s: PNG: %s", path, pi.message);
		png_image_free(&pi);
		free(wide);
		return -1;
	}
	png_image_free(&pi);
	size_t npx = (size_t)im->h * im->w;
	for (size_t i = 0; i < npx; i++)	/* forwards: in place */
		for (int k = 0; k < c; k++) {
			if (!deep) {
				im->px[i * c + k] = im->px[i * n + k];
				continue;
			}
			/* libpng premultiplies linear samples by alpha: undo it. */
			uint32_t v = wide[i * n + k], a = alpha ? wide[i * n + c] : 65535;
			v = a ? (v * 65535u + a / 2) / a : 0;
			v = v > 65535 ? 65535 : v;
			im->px[i * c + k] = (uint8_t)((v * 255 + 32767) / 65535);
		}
	im->c = c;
	free(wide);
	return 0;
}
