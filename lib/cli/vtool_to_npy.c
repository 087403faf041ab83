/* vtool_to_npy.c - vtool to-npy: a stream's fields to .npy arrays and header.json (vtool.h). */
#include <sys/stat.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicfile.h"
#include "npy.h"
#include "vtjson.h"
#include "cli.h"
#include "vtool.h"

/* One .npy being written: the records' payloads after a header whose
 * first dim is fixed up at the end (np.save leaves room for that). */
struct npyout {
	struct atomicfile a;
	int	 dtype, rank;
	int64_t	 shape[NPY_MAXRANK];
	int	 open;
};

static struct npyout npyouts[2 * VT_MAXFIELDS];
static int nnpyout;

static void
abort_npy(void)
{
	for (int i = 0; i < nnpyout; i++)
		if (npyouts[i].open)
			atomic_abort(&npyouts[i].a);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
die_npy(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	abort_npy();
	die("%s", msg);
}

static struct npyout *
npy_begin(const char *dir, const char *name, const char *suffix, int dtype, int rank,
    const int64_t *dims)
{
	struct npyout *n = &npyouts[nnpyout++];
	char *path;

	if (asprintf(&path, "%s/%s%s.npy", dir, name, suffix) < 0)
		die_npy("out of memory");
	if (atomic_open(&n->a, path) < 0)
		die_npy("%s: %s", path, strerror(errno));
	free(path);
	n->open = 1;
	n->dtype = dtype;
	n->rank = rank + 1;
	n->shape[0] = 0;
	if (rank > 0)
		memcpy(n->shape + 1, dims, rank * sizeof *dims);
	if (npy_write_header(n->a.fp, dtype, n->rank, n->shape) < 0)
		die_npy("%s: %s", n->a.path, strerror(errno));
	return n;
}

static void
npy_put(struct npyout *n, const void *data, size_t bytes, int64_t rows)
{
	if (bytes && fwrite(data, 1, bytes, n->a.fp) != bytes)
		die_npy("%s: %s", n->a.path, strerror(errno));
	n->shape[0] += rows;
}

static void
npy_end(struct npyout *n)
{
	if (fflush(n->a.fp) == EOF || fseek(n->a.fp, 0, SEEK_SET) < 0 ||
	    npy_write_header(n->a.fp, n->dtype, n->rank, n->shape) < 0)
		die_npy("%s: %s", n->a.path, strerror(errno));
	n->open = 0;
	if (atomic_commit(&n->a) < 0)
		die_npy("%s: %s", n->a.path, strerror(errno));
}

/* DIR/header.json: what the arrays do not hold of s's header (vtjson.h). */
static void
write_header_json(const char *dir, const struct vt *s)
{
	struct atomicfile a;
	char *path;

	if (asprintf(&path, "%s/" VTOOL_HEADER_JSON, dir) < 0)
		die("out of memory");
	if (atomic_open(&a, path) < 0)
		die_errno("%s", path);
	if (vt_json_write(a.fp, s) < 0 || atomic_commit(&a) < 0)
		die_errno("%s", path);
	free(path);
}

void
vtool_to_npy(const struct vtool_opts *o, int argc, char *argv[])
{
	struct vt s;
	struct npyout *data[VT_MAXFIELDS], *shapes[VT_MAXFIELDS];
	int64_t first[VT_MAXFIELDS][VT_MAXRANK];
	int flat[VT_MAXFIELDS], r;
	const char *dir;

	if (o->nargs < 1 || o->nargs > 2)
		usage_error("to-npy: give a directory and at most one input");
	dir = o->args[0];
	vtool_open(&s, o->nargs > 1 ? o->args[1] : NULL);
	for (int i = 0; i < s.nfield; i++)
		if (strchr(s.field[i].name, '/'))
			die("%s: field '%s': a name with '/' cannot be a file name", s.name,
			    s.field[i].name);
	if (mkdir(dir, 0777) < 0 && errno != EEXIST)
		die_errno("%s", dir);
	r = vtool_next(&s);
	for (int i = 0; i < s.nfield; i++) {
		struct vt_field *f = &s.field[i];
		int64_t rank1 = f->rank;

		flat[i] = 0;
		for (int k = 0; k < f->rank; k++) {
			flat[i] |= f->dim[k] == VT_ANY;
			/* No record: '*' dims become 0. */
			first[i][k] = r ? f->shape[k] : f->dim[k] == VT_ANY ? 0 : f->dim[k];
		}
		/* A text field (bytes of one '*' dim, as patchify's source) is
		 * flat with its shapes always: its records' lengths differ by
		 * nature. */
		flat[i] = flat[i] && (o->ragged || vtool_is_text(f->dtype, f->rank, f->dim));
		if (f->rank + 1 > NPY_MAXRANK && !flat[i])
			die("%s: field '%s' has %d dims; .npy holds %d with the record axis",
			    s.name, f->name, f->rank, NPY_MAXRANK);
		if (flat[i]) {
			data[i] = npy_begin(dir, f->name, "", f->dtype, 0, NULL);
			shapes[i] = npy_begin(dir, f->name, ".shapes", VT_I64, 1, &rank1);
		} else
			data[i] = npy_begin(dir, f->name, "", f->dtype, f->rank, first[i]);
	}
	for (; r == 1; r = vt_read_record(&s)) {
		for (int i = 0; i < s.nfield; i++) {
			struct vt_field *f = &s.field[i];

			if (flat[i]) {
				npy_put(data[i], f->data, f->nbytes, f->count);
				npy_put(shapes[i], f->shape, f->rank * sizeof(int64_t), 1);
				continue;
			}
			if (memcmp(f->shape, first[i], f->rank * sizeof(int64_t)))
				die_npy("%s: record %lld: field '%s' changes shape (%lldx... vs "
				    "%lldx... in record 1); use --ragged", s.name,
				    (long long)s.recno, f->name, (long long)f->shape[0],
				    (long long)first[i][0]);
			npy_put(data[i], f->data, f->nbytes, 1);
		}
	}
	if (r < 0)
		die_npy("%s", s.err.msg);
	for (int i = 0; i < nnpyout; i++)
		npy_end(&npyouts[i]);
	write_header_json(dir, &s);
	vtool_close(&s);
}

