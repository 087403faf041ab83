/*
 * resize.h - geometry of whole clips: resampling and cropping, applied to
 * every frame alike; and the resampling of any array along an axis.
 */
#ifndef RESIZE_H
#define RESIZE_H

#include <stddef.h>

#include "image.h"

/* The filters (resize.c): PIL's antialiased bilinear and bicubic. */
enum resample_filter { RESAMPLE_BILINEAR, RESAMPLE_BICUBIC };

/* Resample the rectangle of rh x rw pixels at (y0, x0) of every frame of
 * src (inside it) to h x w in dst, with an antialiased bilinear filter (a
 * triangle widened by the reduction factor, as PIL and torchvision's
 * antialias=True); a rectangle of size h x w is copied exactly.  dst must
 * not be src.  0, or -1 (absurd size or short memory). */
int	 image_resize(const struct image *src, int y0, int x0, int rh, int rw,
	    struct image *dst, int h, int w);
/* Copy the h x w rectangle at (y0, x0) of every frame of src into dst;
 * parts outside src (negative or large offsets: padding) are zeros.  dst
 * must not be src.  0, or -1. */
int	 image_crop(const struct image *src, int y0, int x0, struct image *dst,
	    int h, int w);
/* src[outer][in][inner] resampled along its middle axis into
 * dst[outer][out][inner] with filter kind, antialiased (a reduction
 * widens the filter), as PIL and PyTorch's antialiased interpolation
 * weigh it.  0, or -1 (no memory). */
int	 resample_axis(const double *src, double *dst, int in, int out, size_t outer,
	    size_t inner, enum resample_filter kind);
/* Output size of resizing an h x w image so its shorter side is s. */
void	 resize_shorter(int h, int w, int s, int *oh, int *ow);

#endif
