/*
 * randaugment.c - the 14 operations of torchvision's RandAugment on u8
 * clips, with torchvision's arithmetic: blends are computed in float,
 * clamped and truncated; greys are 0.2989 R + 0.587 G + 0.114 B truncated.
 */
#include <math.h>
#include <string.h>

#include "randaugment.h"

static const char *names[RA_NOPS] = {
	"Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate",
	"Brightness", "Color", "Contrast", "Sharpness", "Posterize", "Solarize",
	"AutoContrast", "Equalize",
};

const char *
ra_name(int op)
{
	return op >= 0 && op < RA_NOPS ? names[op] : "?";
}

double
ra_magnitude(int op, int m, int h, int w)
{
	double f = (double)m / (RA_BINS - 1);	/* linspace(0, max, 31)[m] = max * f */
	switch (op) {
	case RA_SHEAR_X: case RA_SHEAR_Y:
		return 0.3 * f;
	case RA_TRANSLATE_X:
		return 150.0 / 331 * w * f;
	case RA_TRANSLATE_Y:
		return 150.0 / 331 * h * f;
	case RA_ROTATE:
		return 30 * f;
	case RA_BRIGHTNESS: case RA_COLOR: case RA_CONTRAST: case RA_SHARPNESS:
		return 0.9 * f;
	case RA_POSTERIZE:	/* 8 - round(m / 7.5): 8 bits down to 4 */
		return 8 - nearbyint(m / ((RA_BINS - 1) / 4.0));
	case RA_SOLARIZE:
		return 255 * (1 - f);
	default:
		return 0;
	}
}

int
ra_signed(int op)
{
	return op >= RA_SHEAR_X && op <= RA_SHARPNESS;
}

static uint8_t
clamp_u8(float v)
{
	return (uint8_t)(v <= 0 ? 0 : v >= 255 ? 255 : v);	/* truncates, as .to(uint8) */
}

/*
 * Geometric operations: out(X, Y) = in(a X + b Y + c, d X + e Y + f) at
 * pixel centres (X = x + 0.5), nearest pixel, black outside.
 */
static int
warp(struct image *im, struct image *tmp, const double m[6])
{
	if (image_alloc(tmp, im->t, im->h, im->w, im->c) < 0)
		return -1;
	int c = im->c;
	for (int f = 0; f < im->t; f++) {
		const uint8_t *src = im->px + (size_t)f * image_frame_bytes(im);
		uint8_t *dst = tmp->px + (size_t)f * image_frame_bytes(im);
		for (int y = 0; y < im->h; y++)
			for (int x = 0; x < im->w; x++) {
				double X = x + 0.5, Y = y + 0.5;
				double sx = floor(m[0] * X + m[1] * Y + m[2]);
				double sy = floor(m[3] * X + m[4] * Y + m[5]);
				uint8_t *o = dst + ((size_t)y * im->w + x) * c;
				if (sx < 0 || sy < 0 || sx >= im->w || sy >= im->h)
					memset(o, 0, (size_t)c);
				else
					memcpy(o, src + ((size_t)sy * im->w + (size_t)sx) * c, (size_t)c);
			}
	}
	struct image t = *im;
	*im = *tmp;
	*tmp = t;
	return 0;
}

static uint8_t
grey(const uint8_t *p, int c)
{
	return c == 1 ? p[0] : (uint8_t)(0.2989f * p[0] + 0.587f * p[1] + 0.114f * p[2]);
}

/* Blend each frame with its "degenerate" version d: f img + (1 - f) d. */
static void
blend(uint8_t *px, const uint8_t *d, size_t n, float f)
{
	for (size_t i = 0; i < n; i++)
		px[i] = clamp_u8(f * px[i] + (1 - f) * d[i]);
}

static int
enhance(struct image *im, struct image *tmp, int op, float factor)
{
	int c = im->c, h = im->h, w = im->w;
	size_t fb = image_frame_bytes(im);
	if (op == RA_COLOR && c == 1)
		return 0;
	if (op == RA_SHARPNESS && (h <= 2 || w <= 2))
		return 0;
	if (image_alloc(tmp, 1, h, w, c) < 0)
		return -1;
	for (int f = 0; f < im->t; f++) {
		uint8_t *px = im->px + (size_t)f * fb, *d = tmp->px;
		if (op == RA_BRIGHTNESS)
			memset(d, 0, fb);
		else if (op == RA_COLOR)
			for (size_t i = 0; i < fb; i += c)
				d[i] = d[i + 1] = d[i + 2] = grey(px + i, c);
		else if (op == RA_CONTRAST) {
			double sum = 0;
			for (size_t i = 0; i < fb; i += c)
				sum += grey(px + i, c);
			float mean = (float)(sum / ((double)h * w));
			for (size_t i = 0; i < fb; i++)	/* blend with a float mean */
				px[i] = clamp_u8(factor * px[i] + (1 - factor) * mean);
			continue;
		} else {	/* Sharpness: 3x3 smoothing, kernel 1 1 1 / 1 5 1 / 1 1 1 over 13, edges kept */
			memcpy(d, px, fb);
			for (int y = 1; y < h - 1; y++)
				for (int x = 1; x < w - 1; x++)
					for (int k = 0; k < c; k++) {
						int s = 0;
						for (int dy = -1; dy <= 1; dy++)
							for (int dx = -1; dx <= 1; dx++)
								s += px[((size_t)(y + dy) * w + x + dx) * c + k];
						s += 4 * px[((size_t)y * w + x) * c + k];
						d[((size_t)y * w + x) * c + k] = (uint8_t)nearbyintf(s / 13.0f);
					}
		}
		blend(px, d, fb, factor);
	}
	return 0;
}

static void
autocontrast(struct image *im)
{
	int c = im->c;
	size_t fb = image_frame_bytes(im);
	for (int f = 0; f < im->t; f++) {
		uint8_t *px = im->px + (size_t)f * fb;
		for (int k = 0; k < c; k++) {
			int lo = 255, hi = 0;
			for (size_t i = k; i < fb; i += c) {
				lo = px[i] < lo ? px[i] : lo;
				hi = px[i] > hi ? px[i] : hi;
			}
			if (hi == lo)
				continue;
			float scale = 255.0f / (hi - lo);
			for (size_t i = k; i < fb; i += c)
				px[i] = clamp_u8((px[i] - lo) * scale);
		}
	}
}

/* PIL's ImageOps.equalize per channel, as torchvision's _scale_channel. */
static void
equalize(struct image *im)
{
	int c = im->c;
	size_t fb = image_frame_bytes(im);
	for (int f = 0; f < im->t; f++) {
		uint8_t *px = im->px + (size_t)f * fb;
		for (int k = 0; k < c; k++) {
			int64_t hist[256] = { 0 }, total = 0, last = 0;
			for (size_t i = k; i < fb; i += c)
				hist[px[i]]++;
			for (int v = 0; v < 256; v++)
				if (hist[v]) {
					total += hist[v];
					last = hist[v];
				}
			int64_t step = (total - last) / 255;
			if (step == 0)
				continue;
			uint8_t lut[256];
			int64_t cum = 0;
			for (int v = 0; v < 256; v++) {
				int64_t l = (cum + step / 2) / step;	/* lut shifted by one */
				lut[v] = (uint8_t)(l > 255 ? 255 : l);
				cum += hist[v];
			}
			for (size_t i = k; i < fb; i += c)
				px[i] = lut[px[i]];
		}
	}
}

int
ra_apply(struct image *im, struct image *tmp, int op, double mag)
{
	size_t n = (size_t)im->t * image_frame_bytes(im);
	switch (op) {
	case RA_SHEAR_X:	/* x' = x + s y about the top-left corner */
		return warp(im, tmp, (double[6]){ 1, mag, 0, 0, 1, 0 });
	case RA_SHEAR_Y:
		return warp(im, tmp, (double[6]){ 1, 0, 0, mag, 1, 0 });
	case RA_TRANSLATE_X:	/* whole pixels, as torchvision's int(magnitude) */
		return warp(im, tmp, (double[6]){ 1, 0, -trunc(mag), 0, 1, 0 });
	case RA_TRANSLATE_Y:
		return warp(im, tmp, (double[6]){ 1, 0, 0, 0, 1, -trunc(mag) });
	case RA_ROTATE: {	/* counter-clockwise on screen about the centre */
		double a = mag * M_PI / 180, co = cos(a), si = sin(a);
		double cx = im->w / 2.0, cy = im->h / 2.0;
		return warp(im, tmp, (double[6]){ co, -si, cx - co * cx + si * cy,
		    si, co, cy - si * cx - co * cy });
	}
	case RA_BRIGHTNESS: case RA_COLOR: case RA_CONTRAST: case RA_SHARPNESS:
		return enhance(im, tmp, op, (float)(1 + mag));
	case RA_POSTERIZE: {
		uint8_t mask = (uint8_t)(0xff << (8 - (int)mag));
		for (size_t i = 0; i < n; i++)
			im->px[i] &= mask;
		return 0;
	}
	case RA_SOLARIZE:
		for (size_t i = 0; i < n; i++)
			if (im->px[i] >= mag)
				im->px[i] = 255 - im->px[i];
		return 0;
	case RA_AUTOCONTRAST:
		autocontrast(im);
		return 0;
	case RA_EQUALIZE:
		equalize(im);
		return 0;
	default:
		return 0;
	}
}

int
randaugment(struct image *im, struct image *tmp, int n, int m, struct rng *r)
{
	for (int i = 0; i < n; i++) {
		int op = (int)rng_below(r, RA_NOPS);
		double mag = ra_magnitude(op, m, im->h, im->w);
		if (ra_signed(op) && rng_below(r, 2))
			mag = -mag;
		if (ra_apply(im, tmp, op, mag) < 0)
			return -1;
	}
	return 0;
}
