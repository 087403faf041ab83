/*
 * augment.h - the random geometric training augmentations of torchvision
 * (RandomCrop with padding, RandomResizedCrop, RandomHorizontalFlip,
 * RandomErasing), on whole clips: every frame gets the same parameters.
 * All randomness comes from the caller's generator, so a record's result
 * depends only on its stream.  dst must not be src.
 */
#ifndef AUGMENT_H
#define AUGMENT_H

#include "image.h"
#include "rng.h"

/* RandomCrop(h x w, padding=pad): zero-pad every side by pad and keep a
 * uniformly placed h x w window.  0, or -1 (short memory). */
int	 aug_crop_pad(const struct image *src, struct image *dst, int h, int w,
	    int pad, struct rng *r);
/* RandomResizedCrop to h x w: area fraction uniform in [smin, smax],
 * aspect w/h log-uniform in [3/4, 4/3], 10 tries, else the centre crop of
 * clamped aspect; resampled by image_resize.  0, or -1. */
int	 aug_rrc(const struct image *src, struct image *dst, int h, int w,
	    double smin, double smax, struct rng *r);
/* Mirror left-right with probability 1/2. */
void	 aug_hflip(struct image *im, struct rng *r);
/* RandomErasing with probability p: a box of area fraction uniform in
 * [0.02, 0.33] and aspect h/w log-uniform in [0.3, 3.3] (10 tries) filled
 * with fill[c] in every frame. */
void	 aug_erase(struct image *im, double p, const uint8_t *fill, struct rng *r);

#endif
