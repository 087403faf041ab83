/*
 * resize.c - separable antialiased resampling and cropping of clips, and
 * of any array along one axis: the one resampler of vitpipe (patchify's
 * images, timm's position tables).
 *
 * Output i of an axis reduced by a factor f (input length / output
 * length) is centred at input coordinate (i + 0.5) f and weighs the inputs
 * within support * max(f, 1) of it by the filter, stretched by max(f, 1)
 * (antialiasing), the weights normalized to sum 1: PIL's resampling, and
 * torchvision's and PyTorch's with antialias=True.  The filters: PIL's
 * "bilinear" (a triangle, support 1) and its bicubic (Keys' cubic with
 * a = -0.5, support 2).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "resize.h"

/* The weights of every output of one axis. */
struct taps {
	int	*lo;		/* [out] first input index */
	int	*n;		/* [out] number of taps */
	double	*w;		/* [out][maxn] weights */
	float	*wf;		/* the same in float (single), or NULL */
	int	 maxn;
};

/* PIL's bilinear filter: a triangle of support 1. */
static double
triangle(double x)
{
	return x < 1 ? 1 - x : 0;
}

/* PIL's (and PyTorch's antialiased) bicubic filter, a = -0.5, support 2. */
static double
cubic(double x)
{
	const double a = -0.5;

	if (x < 1)
		return ((a + 2) * x - (a + 3)) * x * x + 1;
	if (x < 2)
		return (((x - 5) * x + 8) * x - 4) * a;
	return 0;
}

static const struct filter {
	double	(*k)(double);	/* of |x|, x in units of the stretched filter */
	double	 support;
} filters[] = {
	[RESAMPLE_BILINEAR] = { triangle, 1 },
	[RESAMPLE_BICUBIC] = { cubic, 2 },
};

/* The taps of out outputs from the len inputs at origin of an axis of
 * size inputs.  single: each filter value rounded to float before the
 * sum (the image path's float weights, wf).  0, or -1 (no memory). */
static int
taps_make(struct taps *t, int origin, int len, int size, int out,
    enum resample_filter kind, int single)
{
	const struct filter *fl = &filters[kind];
	double f = (double)len / out, ss = f > 1 ? f : 1, reach = fl->support * ss;

	t->maxn = (int)ceil(reach) * 2 + 1;
	t->lo = malloc(sizeof(int) * out);
	t->n = malloc(sizeof(int) * out);
	t->w = malloc(sizeof(double) * out * t->maxn);
	t->wf = single ? malloc(sizeof(float) * out * t->maxn) : NULL;
	if (!t->lo || !t->n || !t->w || (single && !t->wf))
		return -1;
	for (int i = 0; i < out; i++) {
		double c = origin + (i + 0.5) * f;
		int lo = (int)floor(c - reach), hi = (int)ceil(c + reach);
		lo = lo < 0 ? 0 : lo;
		hi = hi > size ? size : hi;
		double *w = t->w + (size_t)i * t->maxn, sum = 0;
		int n = 0;
		for (int j = lo; j < hi && n < t->maxn; j++) {
			w[n] = fl->k(fabs((j + 0.5 - c) / ss));
			if (single)
				w[n] = (float)w[n];
			sum += w[n++];
		}
		if (sum <= 0) {		/* a region of zero width: take the nearest */
			w[0] = 1, n = 1, sum = 1;
			lo = (int)c < size ? (int)c : size - 1;
		}
		for (int k = 0; k < n; k++) {
			w[k] /= sum;
			if (single)
				t->wf[(size_t)i * t->maxn + k] = (float)w[k];
		}
		t->lo[i] = lo;
		t->n[i] = n;
	}
	return 0;
}

static void
taps_free(struct taps *t)
{
	free(t->lo);
	free(t->n);
	free(t->w);
	free(t->wf);
}

void
resize_shorter(int h, int w, int s, int *oh, int *ow)
{
	if (h <= w) {
		*oh = s;
		*ow = (int)((int64_t)w * s / h);
	} else {
		*ow = s;
		*oh = (int)((int64_t)h * s / w);
	}
	*oh = *oh < 1 ? 1 : *oh;
	*ow = *ow < 1 ? 1 : *ow;
}

int
image_crop(const struct image *src, int y0, int x0, struct image *dst, int h, int w)
{
	int c = src->c;
	if (image_alloc(dst, src->t, h, w, c) < 0)
		return -1;
	int xa = x0 < 0 ? -x0 : 0;				/* first column inside */
	int xb = x0 + w > src->w ? src->w - x0 : w;		/* one past the last */
	for (int f = 0; f < src->t; f++)
		for (int y = 0; y < h; y++) {
			uint8_t *o = dst->px + (((size_t)f * h + y) * w) * c;
			int sy = y0 + y;
			if (sy < 0 || sy >= src->h || xb <= xa) {
				memset(o, 0, (size_t)w * c);
				continue;
			}
			const uint8_t *s = src->px + (((size_t)f * src->h + sy) * src->w + x0 + xa) * c;
			memset(o, 0, (size_t)xa * c);
			memcpy(o + (size_t)xa * c, s, (size_t)(xb - xa) * c);
			memset(o + (size_t)xb * c, 0, (size_t)(w - xb) * c);
		}
	return 0;
}

int
image_resize(const struct image *src, int y0, int x0, int rh, int rw,
    struct image *dst, int h, int w)
{
	if (rh == h && rw == w)
		return image_crop(src, y0, x0, dst, h, w);
	if (image_alloc(dst, src->t, h, w, src->c) < 0)
		return -1;
	struct taps ty = { 0 }, tx = { 0 };
	int c = src->c, rc = -1;
	float *tmp = NULL;
	if (taps_make(&ty, y0, rh, src->h, h, RESAMPLE_BILINEAR, 1) < 0 ||
	    taps_make(&tx, x0, rw, src->w, w, RESAMPLE_BILINEAR, 1) < 0)
		goto out;
	/* Rows of the source the vertical taps reach. */
	int r0 = ty.lo[0], r1 = ty.lo[h - 1] + ty.n[h - 1];
	tmp = malloc(sizeof(float) * (size_t)(r1 - r0) * w * c);	/* [r1-r0][w][c] */
	if (!tmp)
		goto out;
	for (int f = 0; f < src->t; f++) {
		const uint8_t *frame = src->px + (size_t)f * image_frame_bytes(src);
		for (int y = r0; y < r1; y++) {
			const uint8_t *row = frame + (size_t)y * src->w * c;
			float *o = tmp + ((size_t)(y - r0) * w) * c;
			for (int x = 0; x < w; x++) {
				const float *wt = tx.wf + (size_t)x * tx.maxn;
				const uint8_t *s = row + (size_t)tx.lo[x] * c;
				for (int k = 0; k < c; k++) {
					float acc = 0;
					for (int j = 0; j < tx.n[x]; j++)
						acc += wt[j] * s[j * c + k];
					o[x * c + k] = acc;
				}
			}
		}
		uint8_t *out = dst->px + (size_t)f * image_frame_bytes(dst);
		for (int y = 0; y < h; y++) {
			const float *wt = ty.wf + (size_t)y * ty.maxn;
			const float *s = tmp + ((size_t)(ty.lo[y] - r0) * w) * c;
			uint8_t *o = out + (size_t)y * w * c;
			for (int i = 0; i < w * c; i++) {
				float acc = 0;
				for (int j = 0; j < ty.n[y]; j++)
					acc += wt[j] * s[(size_t)j * w * c + i];
				int v = (int)lrintf(acc);
				o[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
			}
		}
	}
	rc = 0;
out:
	taps_free(&ty);
	taps_free(&tx);
	free(tmp);
	return rc;
}

int
resample_axis(const double *src, double *dst, int in, int out, size_t outer,
    size_t inner, enum resample_filter kind)
{
	struct taps t = { 0 };

	if (taps_make(&t, 0, in, in, out, kind, 0) < 0) {
		taps_free(&t);
		return -1;
	}
	for (size_t o = 0; o < outer; o++)
		for (int i = 0; i < out; i++) {
			const double *w = t.w + (size_t)i * t.maxn;
			const double *s = src + (o * in + t.lo[i]) * inner;
			double *d = dst + (o * out + i) * inner;
			memset(d, 0, inner * sizeof *d);
			for (int j = 0; j < t.n[i]; j++)
				for (size_t k = 0; k < inner; k++)
					d[k] += w[j] * s[j * inner + k];
		}
	taps_free(&t);
	return 0;
}
