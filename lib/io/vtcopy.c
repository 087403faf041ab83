/* vtcopy.c - copy the current record of one stream into another (vtcopy.h). */
#include <string.h>

#include "vt.h"
#include "vtcopy.h"

int
vt_copy_record(struct vt *dst, const struct vt *src)
{
	for (int i = 0; i < src->nfield; i++) {
		const struct vt_field *f = &src->field[i];
		if (vt_set_shape(dst, i, f->shape) == -1)
			return -1;
		if (f->nbytes)
			memcpy(dst->field[i].data, f->data, f->nbytes);
	}
	return 0;
}
