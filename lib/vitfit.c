/*
 * vitfit.c - fit a model to a batch: capacity and token grid.
 */
#include <stdio.h>
#include <string.h>

#include "vitfit.h"

int
vit_reserve(struct vit **m, int B, int T, char *err, size_t errlen)
{
	struct vit *old = *m, *new;

	if (B <= old->maxB && T <= old->maxT)
		return 0;
	new = vit_create(&old->c, B > old->maxB ? B : old->maxB,
	    T > old->maxT ? T : old->maxT, 0, err, errlen);
	if (new == NULL)
		return -1;
	size_t bytes = old->nparam * sizeof(float);
	memcpy(new->param, old->param, bytes);
	memcpy(new->grad, old->grad, bytes);
	memcpy(new->adam_m, old->adam_m, bytes);
	memcpy(new->adam_v, old->adam_v, bytes);
	vit_destroy(old);
	*m = new;
	return 0;
}

int
vit_fit(struct vit **m, struct batch *b, char *err, size_t errlen)
{
	int grid[VIT_MAXAXES];

	if (vit_reserve(m, b->n, b->T, err, errlen) < 0)
		return -1;
	if (batch_grid(b, grid) == 0) {
		if (vit_set_grid(*m, grid) == 0)
			return 0;
	} else if (strcmp((*m)->c.pe, "none") == 0)
		return 0;
	snprintf(err, errlen, "record %lld: the positions of its %d tokens are "
	    "not a grid the model can take", (long long)b->first + 1, b->T);
	return -1;
}
