/*
 * dataset_idx.c - the IDX format of MNIST and Fashion-MNIST, gzip
 * compressed or not (zlib reads both): a magic of two zero bytes, the type
 * (0x08: unsigned byte, the only one data sets use) and the rank, then
 * the dims as big-endian u32, then the data row-major.  Records are read
 * when they are needed (source.c), from the file or, gzip-compressed, from
 * a temporary copy of its data: memory does not grow with the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "source.h"

struct idx {
	int	 rank;
	int64_t	 dim[4];
	int64_t	 count;
};

/* Open path and read its header; NULL with err on failure. */
static gzFile
idx_open(const char *path, struct idx *x, struct err *e)
{
	gzFile z = gzopen(path, "rb");
	unsigned char b[4];
	if (!z) {
		err_set(e, "%s: %s", path, errno ? strerror(errno) : "out of memory");
		return NULL;
	}
	if (gzread(z, b, 4) != 4 || b[0] || b[1] || b[3] < 1 || b[3] > 4) {
		err_set(e, "%s: not an IDX file (bad magic)", path);
		goto fail;
	}
	if (b[2] != 0x08) {
		err_set(e, "%s: IDX type 0x%02x not supported (want "
		    "0x08, unsigned byte)", path, b[2]);
		goto fail;
	}
	x->rank = b[3];
	x->count = 1;
	for (int i = 0; i < x->rank; i++) {
		if (gzread(z, b, 4) != 4) {
			err_set(e, "%s: truncated IDX header", path);
			goto fail;
		}
		x->dim[i] = (int64_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
		if (x->dim[i] == 0 || x->count > IMAGE_MAXBYTES * 64 / x->dim[i]) {
			err_set(e, "%s: absurd IDX dims", path);
			goto fail;
		}
		x->count *= x->dim[i];
	}
	return z;
fail:
	gzclose(z);
	return NULL;
}

/* Read exactly n bytes into dst, or (dst NULL) to the file fd, and make
 * sure the file ends there. */
static int
idx_read(gzFile z, const char *path, void *dst, int64_t n, int fd, struct err *e)
{
	unsigned char *p = dst, buf[1 << 16], extra;
	while (n > 0) {
		unsigned chunk = dst ? (n > (1 << 30) ? 1u << 30 : (unsigned)n) :
		    n > (int64_t)sizeof buf ? (unsigned)sizeof buf : (unsigned)n;
		int got = gzread(z, dst ? p : buf, chunk);
		if (got <= 0) {
			int code;
			const char *m = gzerror(z, &code);
			err_set(e, "%s: %s", path,
			    got == 0 || code == Z_BUF_ERROR ? "truncated IDX data" : m);
			return -1;
		}
		if (dst)
			p += got;
		else
			for (ssize_t w, done = 0; done < got; done += w)
				if ((w = write(fd, buf + done, (size_t)(got - done))) < 0) {
					err_set(e, "%s: temporary file: %s",
					    path, strerror(errno));
					return -1;
				}
		n -= got;
	}
	if (gzread(z, &extra, 1) != 0) {
		err_set(e, "%s: data after the IDX array (wrong dims?)", path);
		return -1;
	}
	return 0;
}

/* A descriptor of the images of z (header read, x), whose records are
 * then read when needed: the file itself when it is not compressed (its
 * size checked), else its data decompressed once to a deleted temporary
 * file in TMPDIR (else /tmp).  *off: where the data start.  -1 with err. */
static int
idx_records(gzFile z, const char *path, const struct idx *x, int64_t *off, struct err *e)
{
	int fd;
	*off = 4 + 4 * x->rank;
	if (gzdirect(z)) {
		struct stat st;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0) {
			err_set(e, "%s: %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		if (st.st_size != *off + x->count) {
			err_set(e, "%s: %s", path, st.st_size < *off + x->count ?
			    "truncated IDX data" : "data after the IDX array (wrong dims?)");
			close(fd);
			return -1;
		}
		return fd;
	}
	const char *dir = getenv("TMPDIR");
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s/patchify-idx.XXXXXX", dir && *dir ? dir : "/tmp");
	if ((fd = mkstemp(tmp)) < 0 || unlink(tmp) < 0) {
		err_set(e, "%.200s: temporary file in %.200s: %s", path,
		    dir && *dir ? dir : "/tmp", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*off = 0;
	if (idx_read(z, path, NULL, x->count, fd, e) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* "…images-idx3…" -> "…labels-idx1…", if that file exists. */
static char *
guess_labels(const char *images)
{
	const char *p = strstr(images, "images-idx3");
	if (!p)
		return NULL;
	char *l = strdup(images);
	if (!l)
		return NULL;
	memcpy(l + (p - images), "labels-idx1", 11);
	if (access(l, R_OK) == 0)
		return l;
	free(l);
	return NULL;
}

int
idx_load(struct source *s, const char *images, const char *labels, struct err *e)
{
	struct idx x, y;
	char *guess = labels ? NULL : guess_labels(images);
	gzFile z = idx_open(images, &x, e);
	int rc = -1;
	s->kind = SOURCE_MEM;
	snprintf(s->what, sizeof s->what, "idx");
	if (!z)
		goto out;
	if (x.rank < 3 || (x.rank == 4 && x.dim[3] != 1 && x.dim[3] != 3) ||
	    x.dim[0] > SOURCE_MAXN || x.dim[1] > IMAGE_MAXSIDE || x.dim[2] > IMAGE_MAXSIDE) {
		err_set(e, "%s: IDX images must be N x H x W [x C]", images);
		goto out;
	}
	int64_t off;
	int fd = idx_records(z, images, &x, &off, e);
	if (fd < 0)
		goto out;
	if (source_add_recfile(s, images, 0, fd, off) < 0) {
		err_set(e, "%s: out of memory", images);
		goto out;
	}
	gzclose(z);
	z = NULL;
	s->n = x.dim[0];
	s->t = 1, s->h = (int)x.dim[1], s->w = (int)x.dim[2];
	s->c = x.rank == 4 ? (int)x.dim[3] : 1;
	s->pitch = x.count / s->n;
	s->label = malloc((size_t)s->n * sizeof *s->label);
	if (!s->label) {
		err_set(e, "%s: out of memory", images);
		goto out;
	}
	if (!labels)
		labels = guess;
	if (!labels) {
		for (int64_t i = 0; i < s->n; i++)
			s->label[i] = -1;
		rc = 0;
		goto out;
	}
	if (!(z = idx_open(labels, &y, e)))
		goto out;
	if (y.rank != 1 || y.dim[0] != s->n) {
		err_set(e, "%s: %lld labels for %lld images in %s",
		    labels, (long long)(y.rank == 1 ? y.dim[0] : -1), (long long)s->n, images);
		goto out;
	}
	uint8_t *l = malloc((size_t)s->n);
	if (!l)
		err_set(e, "%s: out of memory", labels);
	else if (idx_read(z, labels, l, s->n, -1, e) == 0) {
		for (int64_t i = 0; i < s->n; i++)
			s->label[i] = l[i];
		rc = source_check_labels(s, labels, e);
	}
	free(l);
out:
	if (z)
		gzclose(z);
	free(guess);
	return rc;
}
