/*
 * vtcopy.h - pass records through a filter: the output stream was made
 * with vt_copy_header from the input and then had fields appended.
 */
#ifndef VTCOPY_H
#define VTCOPY_H

struct vt;

/* Give dst's first src->nfield fields the shapes and payloads of src's
 * current record, lent (no copy, no allocation): valid until src reads
 * again.  0, or -1 with dst->err. */
int	 vt_copy_record(struct vt *dst, const struct vt *src);

#endif
