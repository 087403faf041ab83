/*
 * npy.h - NumPy .npy files (format versions 1.0, 2.0 and 3.0): headers and
 * arrays of the dtypes vitpipe streams know (u1 i1 u2 i4 i8 f4 f8, any
 * byte order on reading; little-endian on writing), C order only.
 *
 * A function that fails returns -1 with a message such as
 * "x.npy: not a .npy file (bad magic)" in its struct err (err.h).
 */
#ifndef NPY_H
#define NPY_H

#include <stdint.h>
#include <stdio.h>

#include "err.h"

#define NPY_MAXRANK	8

struct npy {
	int	 dtype;			/* enum vt_dtype of the elements */
	int	 swap;			/* stored big-endian: bytes are swapped on reading */
	int	 rank;			/* 0 (scalar) .. NPY_MAXRANK */
	int64_t	 shape[NPY_MAXRANK];
	int64_t	 count;			/* product of shape (overflow-checked) */
	size_t	 elsize;		/* bytes per element */
	long	 offset;		/* where the data starts in the file */
};

/* Read and check the header at fp's current position, leaving fp at the
 * first data byte; refuses Fortran order, unknown dtypes and sizes whose
 * byte count overflows.  name is used in messages.  0, or -1 with e. */
int	 npy_read_header(struct npy *h, FILE *fp, const char *name, struct err *e);
/* Read n elements starting at element first into dst (native byte order),
 * seeking when first differs from the current position.  0, or -1 with e
 * ("truncated" when the file ends early). */
int	 npy_read(const struct npy *h, FILE *fp, const char *name, int64_t first,
	    int64_t n, void *dst, struct err *e);
/* Open path, read its header and the whole array into a new malloc'd buffer
 * (*data, to be freed); 0, or -1 with e. */
int	 npy_load(const char *path, struct npy *h, void **data, struct err *e);
/* Write a version 1.0 (or 2.0 when needed) header for a C-order
 * little-endian array of dtype and shape[rank], the bytes numpy.save writes
 * (padded to 64 bytes, with room for shape[0] to grow to 21 digits, so the
 * header can be rewritten in place once the first dim is known); the
 * caller then writes count elements.  0, or -1 (stdio error, errno set). */
int	 npy_write_header(FILE *fp, int dtype, int rank, const int64_t *shape);
/* Write a whole array (header and data) to path atomically.  0, or -1 with e. */
int	 npy_save(const char *path, int dtype, int rank, const int64_t *shape,
	    const void *data, struct err *e);

#endif
