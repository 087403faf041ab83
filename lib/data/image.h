/*
 * image.h - u8 pixels as vitpipe's readers and transforms pass them: a clip
 * of t frames of h x w pixels with c channels, stored [t][h][w][c]
 * (channels innermost, rows top to bottom).  A still image has t = 1.
 *
 * A function that fails returns -1 with a message naming the file in its
 * struct err (err.h).
 */
#ifndef IMAGE_H
#define IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define IMAGE_MAXSIDE	65536		/* largest height, width or frame count */
#define IMAGE_MAXBYTES	(1LL << 31)	/* largest clip in memory */

struct image {
	int	 t, h, w, c;
	uint8_t	*px;			/* [t][h][w][c] */
	size_t	 cap;			/* bytes allocated at px */
};

/* Give im the shape t x h x w x c, reusing its buffer when large enough
 * (the bytes already there are kept, as by realloc); 0, or -1 when the
 * size is absurd or memory is short. */
int	 image_alloc(struct image *im, int t, int h, int w, int c);
/* Free im's pixels and zero it. */
void	 image_free(struct image *im);
/* Bytes of one frame (h * w * c). */
size_t	 image_frame_bytes(const struct image *im);
/* Convert im in place to c channels (1: ITU-R 601 luma, 3: grey repeated);
 * 0, or -1 for counts other than 1 and 3 or short memory. */
int	 image_set_channels(struct image *im, int c);
enum image_kind { IMAGE_NONE, IMAGE_PNG, IMAGE_JPEG };

/* The still image format whose magic bytes begin the n bytes at m (the
 * only test of "is this an image file" in vitpipe): an enum image_kind. */
int	 image_magic(const unsigned char *m, size_t n);
/* image_magic of the file at path: an enum image_kind, or -1 with errno
 * when it cannot be opened or read. */
int	 image_file_kind(const char *path);
/* Decode the PNG or JPEG file at path (told apart by image_magic) into
 * im with 1 (grey) or 3 (RGB) channels; 0, or -1 with e. */
int	 image_load(const char *path, struct image *im, struct err *e);
/* Decode the PNG file at path (any bit depth, palette, alpha dropped). */
int	 image_png_load(const char *path, struct image *im, struct err *e);
/* Decode the JPEG file at path; a warning (truncated data) is an error. */
int	 image_jpeg_load(const char *path, struct image *im, struct err *e);

#endif
