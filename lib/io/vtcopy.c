/* vtcopy.c - pass the current record of one stream to another (vtcopy.h). */
#include <stdlib.h>

#include "vt.h"
#include "vtcopy.h"

/* dst's fields point at src's buffers: a filter's records cost no copy,
 * and a header declaring a huge field costs dst nothing until its bytes
 * have arrived in src. */
int
vt_copy_record(struct vt *dst, const struct vt *src)
{
	for (int i = 0; i < src->nfield; i++) {
		const struct vt_field *f = &src->field[i];
		struct vt_field *d = &dst->field[i];

		if (f->data != NULL) {
			if (!d->lent)
				free(d->data);
			d->data = f->data;
			d->cap = f->cap;
			d->lent = 1;
		}
		if (vt_set_shape(dst, i, f->shape) == -1)
			return -1;
	}
	return 0;
}
