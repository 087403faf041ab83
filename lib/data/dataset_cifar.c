/*
 * dataset_cifar.c - the CIFAR-10 and CIFAR-100 binary formats: records of
 * a label byte (CIFAR-100: coarse then fine label byte) and 3072 pixel
 * bytes, the red, green and blue 32x32 planes, row-major.  Records are
 * read from the file when they are needed, as [32][32][3] (source.c), so
 * memory does not grow with the file: only the labels are held.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source.h"

#define CIFAR_SIDE	32
#define CIFAR_PIXELS	(3 * CIFAR_SIDE * CIFAR_SIDE)

/* Class names from the text file beside the data, when it is there. */
static int
cifar_names(struct source *s, const char *first, const char *file, struct err *e)
{
	char *dup = strdup(first), path[4096];
	if (!dup)
		return -1;
	snprintf(path, sizeof path, "%s/%s", dirname(dup), file);
	free(dup);
	if (access(path, R_OK) != 0)
		return 0;
	int nclass = s->nclass;
	if (source_read_classes(s, path, e) < 0)
		return -1;
	if (s->nclass != nclass) {
		err_set(e, "%.400s: %d class names, want %d", path,
		    s->nclass, nclass);
		return -1;
	}
	return 0;
}

static int
cifar_file(struct source *s, const char *path, int hundred, int coarse, struct err *e)
{
	int rec = CIFAR_PIXELS + 1 + hundred;
	FILE *fp = fopen(path, "rb");
	struct stat st;
	if (!fp || fstat(fileno(fp), &st) < 0) {
		err_set(e, "%s: %s", path, strerror(errno));
		if (fp)
			fclose(fp);
		return -1;
	}
	if (st.st_size == 0 || st.st_size % rec != 0 || st.st_size / rec > SOURCE_MAXN - s->n) {
		err_set(e, "%s: %lld bytes is not a whole number of "
		    "%d-byte CIFAR-%d records (truncated, or not CIFAR-%d?)", path,
		    (long long)st.st_size, rec, hundred ? 100 : 10, hundred ? 100 : 10);
		fclose(fp);
		return -1;
	}
	int64_t n = st.st_size / rec, n0 = s->n;
	int32_t *label = realloc(s->label, (size_t)(n0 + n) * sizeof *label);
	if (!label) {
		err_set(e, "%s: out of memory", path);
		fclose(fp);
		return -1;
	}
	s->label = label;
	/* The labels now (patchify's subsets need them), the pixels when
	 * their record is read (source_get). */
	uint8_t buf[CIFAR_PIXELS + 2];
	for (int64_t i = 0; i < n; i++) {
		if (fread(buf, 1, (size_t)rec, fp) != (size_t)rec) {
			err_set(e, "%s: record %lld: truncated", path,
			    (long long)i);
			fclose(fp);
			return -1;
		}
		int l = buf[hundred && !coarse ? 1 : 0];
		if (l >= s->nclass) {
			err_set(e, "%s: record %lld: label %d out of "
			    "range (%d classes)", path, (long long)i, l, s->nclass);
			fclose(fp);
			return -1;
		}
		s->label[n0 + i] = l;
	}
	int fd = dup(fileno(fp));
	fclose(fp);
	s->pitch = rec;
	s->skip = 1 + hundred;
	if (fd < 0 || source_add_recfile(s, path, n0, fd, 0) < 0) {
		err_set(e, "%s: %s", path, fd < 0 ? strerror(errno) :
		    "out of memory");
		return -1;
	}
	s->n = n0 + n;
	return 0;
}

int
cifar_load(struct source *s, char *const *paths, int npaths, int hundred,
    int coarse, struct err *e)
{
	s->kind = SOURCE_MEM;
	s->t = 1, s->h = s->w = CIFAR_SIDE, s->c = 3;
	s->planar = 1;
	s->nclass = !hundred ? 10 : coarse ? 20 : 100;
	snprintf(s->what, sizeof s->what, "%s", !hundred ? "cifar10" :
	    coarse ? "cifar100-coarse" : "cifar100");
	for (int i = 0; i < npaths; i++)
		if (cifar_file(s, paths[i], hundred, coarse, e) < 0)
			return -1;
	return cifar_names(s, paths[0], !hundred ? "batches.meta.txt" :
	    coarse ? "coarse_label_names.txt" : "fine_label_names.txt", e);
}
