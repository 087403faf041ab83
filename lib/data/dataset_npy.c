/*
 * dataset_npy.c - images and volumes stored as NumPy arrays, with labels in
 * a second array (see source.h for the shapes and value ranges taken).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npy.h"
#include "source.h"
#include "vt.h"

#define CHUNK	(1 << 20)	/* elements converted at a time */

/* One element of dtype at p as a double. */
static double
elem(const void *p, int dtype)
{
	switch (dtype) {
	case VT_U8: return *(const uint8_t *)p;
	case VT_I8: return *(const int8_t *)p;
	case VT_U16: return *(const uint16_t *)p;
	case VT_I32: return *(const int32_t *)p;
	case VT_I64: return (double)*(const int64_t *)p;
	case VT_F32: return *(const float *)p;
	default: return *(const double *)p;
	}
}

/* Convert n elements to pixel bytes; -1 at the first out of range. */
static int64_t
to_pixels(const void *src, int dtype, int64_t n, uint8_t *dst)
{
	size_t es = vt_dtype_size(dtype);
	int fl = dtype == VT_F32 || dtype == VT_F64;
	for (int64_t i = 0; i < n; i++) {
		double v = elem((const char *)src + i * es, dtype);
		if (fl)
			v *= 255;
		if (!(v >= 0 && v <= 255))	/* NaN too */
			return i;
		dst[i] = (uint8_t)lrint(v);
	}
	return -1;
}

static int
read_pixels(struct source *s, const char *path, struct err *e)
{
	struct npy h;
	FILE *fp = fopen(path, "rb");
	void *buf = NULL;
	int rc = -1;
	if (!fp) {
		err_set(e, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (npy_read_header(&h, fp, path, e) < 0)
		goto out;
	int64_t *d = h.shape;
	int chan = h.rank == 4 && (d[3] == 1 || d[3] == 3) && !s->temporal;
	if (h.rank == 4 && !chan)
		s->temporal = 1;
	if (h.rank == 3 && !s->temporal)
		s->t = 1, s->h = (int)d[1], s->w = (int)d[2], s->c = 1;
	else if (h.rank == 4 && chan)
		s->t = 1, s->h = (int)d[1], s->w = (int)d[2], s->c = (int)d[3];
	else if (h.rank == 4)
		s->t = (int)d[1], s->h = (int)d[2], s->w = (int)d[3], s->c = 1;
	else if (h.rank == 5 && (d[4] == 1 || d[4] == 3)) {
		s->temporal = 1;
		s->t = (int)d[1], s->h = (int)d[2], s->w = (int)d[3], s->c = (int)d[4];
	} else {
		err_set(e, "%s: want images (N,H,W[,C]) or volumes "
		    "(N,D,H,W[,C]) with C 1 or 3, got rank %d", path, h.rank);
		goto out;
	}
	for (int i = 0; i < h.rank; i++)
		if (d[i] < 1 || d[i] > (i ? IMAGE_MAXSIDE : SOURCE_MAXN)) {
			err_set(e, "%s: absurd shape (dim %d is %lld)",
			    path, i, (long long)d[i]);
			goto out;
		}
	if (h.count / d[0] > IMAGE_MAXBYTES) {
		err_set(e, "%s: absurd record size", path);
		goto out;
	}
	/* The data must be there before it is allocated for: a 146-byte file
	 * may declare 46 GB. */
	struct stat st;
	if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_size < h.offset ||
	    (uint64_t)(st.st_size - h.offset) / h.elsize < (uint64_t)h.count)) {
		err_set(e, "%s: the header declares %lld elements, the "
		    "file holds %lld", path, (long long)h.count, st.st_size < h.offset ?
		    0LL : (long long)((st.st_size - h.offset) / (off_t)h.elsize));
		goto out;
	}
	s->n = d[0];
	s->data = malloc((size_t)h.count);
	buf = malloc(CHUNK * h.elsize);
	if (!s->data || !buf) {
		err_set(e, "%s: out of memory for the array", path);
		goto out;
	}
	for (int64_t i = 0; i < h.count; i += CHUNK) {
		int64_t n = h.count - i < CHUNK ? h.count - i : CHUNK, bad;
		void *dst = h.dtype == VT_U8 ? (void *)(s->data + i) : buf;
		if (npy_read(&h, fp, path, i, n, dst, e) < 0)
			goto out;
		if (h.dtype != VT_U8 && (bad = to_pixels(buf, h.dtype, n, s->data + i)) >= 0) {
			err_set(e, "%s: element %lld out of range (want "
			    "0..255, or 0..1 for floats)", path, (long long)(i + bad));
			goto out;
		}
	}
	rc = 0;
out:
	free(buf);
	fclose(fp);
	return rc;
}

static int
read_labels(struct source *s, const char *path, struct err *e)
{
	struct npy h;
	void *data;
	if (npy_load(path, &h, &data, e) < 0)
		return -1;
	int rc = -1;
	if (h.rank != 1 || h.shape[0] != s->n)
		err_set(e, "%s: want %lld labels (shape (N,)), got %s%lld",
		    path, (long long)s->n, h.rank == 1 ? "" : "rank ",
		    (long long)(h.rank == 1 ? h.shape[0] : h.rank));
	else if (h.dtype == VT_F32 || h.dtype == VT_F64)
		err_set(e, "%s: labels must be integers", path);
	else if (!(s->label = malloc((size_t)s->n * sizeof *s->label)))
		err_set(e, "%s: out of memory", path);
	else {
		rc = 0;
		for (int64_t i = 0; i < s->n; i++) {
			double v = elem((char *)data + i * h.elsize, h.dtype);
			if (v < -1 || v > INT32_MAX) {
				err_set(e, "%s: label %lld is %.0f", path,
				    (long long)i, v);
				rc = -1;
				break;
			}
			s->label[i] = (int32_t)v;
		}
	}
	free(data);
	return rc < 0 ? -1 : source_check_labels(s, path, e);
}

int
npy_source_load(struct source *s, const char *data, const char *labels,
    int volume, struct err *e)
{
	s->kind = SOURCE_MEM;
	s->temporal = volume;
	snprintf(s->what, sizeof s->what, "npy");
	if (source_add_memfile(s, data, 0) < 0) {
		err_set(e, "%s: out of memory", data);
		return -1;
	}
	if (read_pixels(s, data, e) < 0)
		return -1;
	if (labels)
		return read_labels(s, labels, e);
	if (!(s->label = malloc((size_t)s->n * sizeof *s->label))) {
		err_set(e, "%s: out of memory", data);
		return -1;
	}
	for (int64_t i = 0; i < s->n; i++)
		s->label[i] = -1;
	return 0;
}
