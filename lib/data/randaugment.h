/*
 * randaugment.h - RandAugment(N, M) as torchvision.transforms.RandAugment
 * defines it: N operations drawn uniformly (with replacement) from 14,
 * each at magnitude bin M of 31 (0..30), geometric ones with nearest
 * sampling and black fill.  Every frame of a clip gets the same operation
 * and magnitude.  The table of magnitudes is in patchify(1).
 */
#ifndef RANDAUGMENT_H
#define RANDAUGMENT_H

#include "image.h"
#include "rng.h"

#define RA_BINS	31		/* magnitudes 0..30 */

enum ra_op {
	RA_IDENTITY, RA_SHEAR_X, RA_SHEAR_Y, RA_TRANSLATE_X, RA_TRANSLATE_Y,
	RA_ROTATE, RA_BRIGHTNESS, RA_COLOR, RA_CONTRAST, RA_SHARPNESS,
	RA_POSTERIZE, RA_SOLARIZE, RA_AUTOCONTRAST, RA_EQUALIZE, RA_NOPS
};

/* Name of op ("ShearX"), or "?". */
const char *ra_name(int op);
/* Magnitude of op at bin m (unsigned; pixels for translations of an image
 * h x w, degrees for Rotate, bits for Posterize, threshold for Solarize). */
double	 ra_magnitude(int op, int m, int h, int w);
/* Whether op's magnitude takes a random sign. */
int	 ra_signed(int op);
/* Apply op with signed magnitude mag to im, using tmp as scratch (the
 * result is left in im).  0, or -1 (short memory). */
int	 ra_apply(struct image *im, struct image *tmp, int op, double mag);
/* N random operations at magnitude bin M; 0, or -1 (short memory). */
int	 randaugment(struct image *im, struct image *tmp, int n, int m, struct rng *r);

#endif
