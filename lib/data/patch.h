/*
 * patch.h - a clip as patch tokens: the t x h x w grid is cut into
 * tubelets of pt x ph x pw pixels (pt = 1: 2D patches).  Tokens are in
 * row-major order over the grid (gt, gy, gx), time outermost; the values of
 * one token are in (dt, dy, dx, c) row-major order, channels innermost:
 * token count gt gy gx, values per token pt ph pw c (see vitpipe(5)).
 */
#ifndef PATCH_H
#define PATCH_H

#include "image.h"

/* Values per token for im cut into pt x ph x pw tubelets. */
int64_t	 patch_values(const struct image *im, int pt, int ph, int pw);
/* Whether im divides into pt x ph x pw tubelets. */
int	 patch_fits(const struct image *im, int pt, int ph, int pw);
/* Tokens of im as u8 into out[tokens][values]; im must fit. */
void	 patch_u8(const struct image *im, int pt, int ph, int pw, uint8_t *out);
/* Tokens of im as f32 through lut[c][v] (a normalized value per channel
 * and pixel value) into out[tokens][values]; im must fit. */
void	 patch_f32(const struct image *im, int pt, int ph, int pw,
	    const float (*lut)[256], float *out);

#endif
