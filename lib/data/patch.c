/*
 * patch.c - cutting clips into patch tokens (see patch.h).  One row of a
 * patch (pw pixels of c channels) is contiguous in both the clip and the
 * token, so u8 tokens are built from memcpy's of pw * c bytes.
 */
#include <string.h>

#include "patch.h"

int64_t
patch_values(const struct image *im, int pt, int ph, int pw)
{
	return (int64_t)pt * ph * pw * im->c;
}

int
patch_fits(const struct image *im, int pt, int ph, int pw)
{
	return pt > 0 && ph > 0 && pw > 0 && im->t % pt == 0 && im->h % ph == 0 &&
	    im->w % pw == 0;
}

/* Calls row(dst_offset, src_pointer) for every patch row in token order. */
#define FOR_PATCH_ROWS(im, pt, ph, pw, BODY) do {				\
	int c_ = (im)->c, gt_ = (im)->t / (pt), gy_ = (im)->h / (ph), gx_ = (im)->w / (pw); \
	size_t rowlen_ = (size_t)(pw) * c_, o_ = 0;				\
	for (int ty = 0; ty < gt_; ty++)					\
	for (int py = 0; py < gy_; py++)					\
	for (int px = 0; px < gx_; px++)					\
	for (int dt = 0; dt < (pt); dt++)					\
	for (int dy = 0; dy < (ph); dy++, o_ += rowlen_) {			\
		const uint8_t *src_ = (im)->px + ((((size_t)ty * (pt) + dt) * (im)->h \
		    + (size_t)py * (ph) + dy) * (im)->w + (size_t)px * (pw)) * c_; \
		BODY;								\
	}									\
} while (0)

void
patch_u8(const struct image *im, int pt, int ph, int pw, uint8_t *out)
{
	FOR_PATCH_ROWS(im, pt, ph, pw, memcpy(out + o_, src_, rowlen_));
}

void
patch_f32(const struct image *im, int pt, int ph, int pw,
    const float (*lut)[256], float *out)
{
	FOR_PATCH_ROWS(im, pt, ph, pw,
	    for (size_t i = 0; i < rowlen_; i += c_)
		    for (int k = 0; k < c_; k++)
			    out[o_ + i + k] = lut[k][src_[i + k]]);
}
