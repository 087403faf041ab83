/*
 * vitreserve.c - rebuild a model with room for larger batches.
 */
#include <string.h>

#include "vitreserve.h"

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
