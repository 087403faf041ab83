/*
 * augment.c - random crops, flips and erasing (see augment.h); the draws
 * follow torchvision's get_params so the distributions are the same.
 */
#include <math.h>
#include <string.h>

#include "augment.h"
#include "resize.h"

int
aug_crop_pad(const struct image *src, struct image *dst, int h, int w, int pad,
    struct rng *r)
{
	int64_t sy = (int64_t)src->h + 2 * pad - h, sx = (int64_t)src->w + 2 * pad - w;
	int y0 = sy > 0 ? (int)rng_below(r, (uint64_t)sy + 1) : (int)(sy / 2);
	int x0 = sx > 0 ? (int)rng_below(r, (uint64_t)sx + 1) : (int)(sx / 2);
	return image_crop(src, y0 - pad, x0 - pad, dst, h, w);
}

static double
uniform(struct rng *r, double lo, double hi)
{
	return lo + (hi - lo) * rng_uniform(r);
}

int
aug_rrc(const struct image *src, struct image *dst, int h, int w, double smin,
    double smax, struct rng *r)
{
	const double rmin = 3.0 / 4, rmax = 4.0 / 3;
	double area = (double)src->h * src->w;
	for (int t = 0; t < 10; t++) {
		double a = area * uniform(r, smin, smax);
		double ratio = exp(uniform(r, log(rmin), log(rmax)));
		int cw = (int)lround(sqrt(a * ratio)), ch = (int)lround(sqrt(a / ratio));
		if (cw > 0 && cw <= src->w && ch > 0 && ch <= src->h) {
			int y0 = (int)rng_below(r, (uint64_t)(src->h - ch) + 1);
			int x0 = (int)rng_below(r, (uint64_t)(src->w - cw) + 1);
			return image_resize(src, y0, x0, ch, cw, dst, h, w);
		}
	}
	double in = (double)src->w / src->h;
	int cw = src->w, ch = src->h;
	if (in < rmin)
		ch = (int)lround(cw / rmin);
	else if (in > rmax)
		cw = (int)lround(ch * rmax);
	return image_resize(src, (src->h - ch) / 2, (src->w - cw) / 2, ch, cw, dst, h, w);
}

void
aug_hflip(struct image *im, struct rng *r)
{
	if (rng_uniform(r) >= 0.5)
		return;
	int c = im->c;
	for (int f = 0; f < im->t; f++)
		for (int y = 0; y < im->h; y++) {
			uint8_t *row = im->px + ((size_t)f * im->h + y) * im->w * c;
			for (int a = 0, b = im->w - 1; a < b; a++, b--)
				for (int k = 0; k < c; k++) {
					uint8_t t = row[a * c + k];
					row[a * c + k] = row[b * c + k];
					row[b * c + k] = t;
				}
		}
}

void
aug_erase(struct image *im, double p, const uint8_t *fill, struct rng *r)
{
	if (rng_uniform(r) >= p)
		return;
	double area = (double)im->h * im->w;
	for (int t = 0; t < 10; t++) {
		double a = area * uniform(r, 0.02, 0.33);
		double ratio = exp(uniform(r, log(0.3), log(3.3)));
		int eh = (int)lround(sqrt(a * ratio)), ew = (int)lround(sqrt(a / ratio));
		if (!(eh < im->h && ew < im->w))
			continue;
		int y0 = (int)rng_below(r, (uint64_t)(im->h - eh) + 1);
		int x0 = (int)rng_below(r, (uint64_t)(im->w - ew) + 1);
		int c = im->c;
		for (int f = 0; f < im->t; f++)
			for (int y = y0; y < y0 + eh; y++) {
				uint8_t *o = im->px + (((size_t)f * im->h + y) * im->w + x0) * c;
				for (int x = 0; x < ew; x++)
					memcpy(o + (size_t)x * c, fill, (size_t)c);
			}
		return;
	}
}
