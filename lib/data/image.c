/*
 * image.c - the u8 clip buffer shared by readers and transforms (image.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

int
image_alloc(struct image *im, int t, int h, int w, int c)
{
	if (t < 1 || h < 1 || w < 1 || c < 1 || t > IMAGE_MAXSIDE ||
	    h > IMAGE_MAXSIDE || w > IMAGE_MAXSIDE || c > 4)
		return -1;
	int64_t n = (int64_t)t * h * w * c;	/* < 2^50: no overflow */
	if (n > IMAGE_MAXBYTES)
		return -1;
	if ((size_t)n > im->cap) {
		uint8_t *p = realloc(im->px, (size_t)n);
		if (!p)
			return -1;
		im->px = p;
		im->cap = (size_t)n;
	}
	im->t = t, im->h = h, im->w = w, im->c = c;
	return 0;
}

void
image_free(struct image *im)
{
	free(im->px);
	memset(im, 0, sizeof *im);
}

size_t
image_frame_bytes(const struct image *im)
{
	return (size_t)im->h * im->w * im->c;
}

int
image_set_channels(struct image *im, int c)
{
	size_t n = (size_t)im->t * im->h * im->w;
	if (c == im->c)
		return 0;
	if (c == 1 && im->c == 3) {
		/* Fixed-point 0.299 R + 0.587 G + 0.114 B, rounded (as PIL's "L"). */
		for (size_t i = 0; i < n; i++) {
			const uint8_t *s = im->px + 3 * i;
			im->px[i] = (uint8_t)((19595 * s[0] + 38470 * s[1] + 7471 * s[2] + 32768) >> 16);
		}
		im->c = 1;
		return 0;
	}
	if (c == 3 && im->c == 1) {
		int old = im->c;
		if (image_alloc(im, im->t, im->h, im->w, 3) < 0) {
			im->c = old;
			return -1;
		}
		for (size_t i = n; i-- > 0;)	/* backwards: in place */
			im->px[3 * i] = im->px[3 * i + 1] = im->px[3 * i + 2] = im->px[i];
		return 0;
	}
	return -1;
}

int
image_magic(const unsigned char *m, size_t n)
{
	if (n >= 8 && memcmp(m, "\x89PNG\r\n\x1a\n", 8) == 0)
		return IMAGE_PNG;
	if (n >= 3 && memcmp(m, "\xff\xd8\xff", 3) == 0)
		return IMAGE_JPEG;
	return IMAGE_NONE;
}

int
image_file_kind(const char *path)
{
	unsigned char m[8];
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return -1;
	size_t got = fread(m, 1, sizeof m, fp);
	int bad = ferror(fp);
	fclose(fp);
	if (bad) {
		errno = EIO;
		return -1;
	}
	return image_magic(m, got);
}

int
image_load(const char *path, struct image *im, struct err *e)
{
	switch (image_file_kind(path)) {
	case IMAGE_PNG:
		return image_png_load(path, im, e);
	case IMAGE_JPEG:
		return image_jpeg_load(path, im, e);
	case IMAGE_NONE:
		err_set(e, "%s: not a PNG or JPEG image", path);
		return -1;
	default:
		err_set(e, "%s: %s", path, strerror(errno));
		return -1;
	}
}
