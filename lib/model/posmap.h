/*
 * posmap.h - the positions a model's encoding sees: a stream's (posgen's
 * conventions, lib/pe/pe_conv.h) mapped into the encoding's own, and the
 * CLS token's, for training and for evaluation at any resolution.
 */
#ifndef POSMAP_H
#define POSMAP_H

#include "vit.h"

struct vt;

/* Set c->pos_scale and c->pos_shift so that the positions of a stream made
 * as pos (a POS value; grid: its GRID key, may be NULL) become those of c's
 * encoding's own convention on that stream's grid, a linspace one spanning
 * 0 .. 1 on c->grid (the training grid); *native: that convention.  0
 * mapped; 1 not (c unchanged): the encoding reads no positions (e's
 * message "") or pos names none of posgen's conventions (e says why); -1 a
 * bad spec, or a map no float holds (e says which). */
int	 posmap_native(struct vit_config *c, const char *pos, const char *grid,
	    int *native, struct err *e);
/* Fit c, the model of a checkpoint with keys ck, to the positions of
 * stream s before evaluating it: when it was trained on positions mapped
 * into its encoding's own convention (POSITIONS "native ..."), map s's
 * into it on s's grid (at another resolution, as the encoding's code
 * places the patches there); a CLS with a position takes s's CLSPOS
 * coordinates when s gives some.  0, or -1 with e. */
int	 posmap_stream(struct vit_config *c, const struct vt *ck,
	    const struct vt *s, struct err *e);

/* How far the positions c's encoding sees (c->pos_scale's) move per
 * cell of the training grid along each axis, step[A]: the spacing of the
 * training stream's positions, which checkpoint keys ck name (POS, GRID),
 * times c->pos_scale.  0, or -1 with e when ck names no convention of
 * posgen's (an imported model). */
int	 posmap_cell(const struct vit_config *c, const struct vt *ck, double *step,
	    struct err *e);

#endif
