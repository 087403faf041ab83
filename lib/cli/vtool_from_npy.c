/* vtool_from_npy.c - vtool from-npy: .npy arrays to a stream (vtool.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libgen.h>
#include "npy.h"
#include "vtjson.h"
#include "cli.h"
#include "vtool.h"

/* Read header.json at path into h: 0, or -1 when there is no such file
 * and missing_ok. */
static int
read_header_json(const char *path, struct vt *h, int missing_ok)
{
	struct err e;
	int rc = vt_json_load(path, h, missing_ok, &e);

	if (rc < 0)
		die("%s", e.msg);
	return -rc;
}

/* A field given flat with its records' shapes (--shapes). */
struct ragged {
	int64_t	*shape;		/* [n][rank] */
	int64_t	 n, at;		/* records; next element of the flat array */
	int	 rank;
};

/* Load the shapes of field name from spec "NAME=S.npy" into rg and set
 * dims[rank]: fixed where every record agrees, else VT_ANY; check that the
 * flat array h holds exactly their elements. */
static void
load_shapes(const char *spec, const struct npy *h, const char *path, struct ragged *rg,
    int64_t *dims)
{
	const char *spath = strchr(spec, '=') + 1;
	struct npy sh;
	void *data;
	struct err e;
	int64_t total = 0;

	if (npy_load(spath, &sh, &data, &e) < 0)
		die("%s", e.msg);
	if (sh.dtype != VT_I64 || sh.rank != 2 || sh.shape[1] > VT_MAXRANK)
		die("%s: shapes must be an int64 array [records][rank <= %d]", spath, VT_MAXRANK);
	if (h->rank != 1)
		die("%s: a field given with --shapes must be a flat (1-d) array", path);
	rg->shape = data;
	rg->n = sh.shape[0];
	rg->rank = (int)sh.shape[1];
	rg->at = 0;
	for (int k = 0; k < rg->rank; k++)
		dims[k] = rg->n ? rg->shape[k] : VT_ANY;
	for (int64_t r = 0; r < rg->n; r++) {
		int64_t count = 1, *s = rg->shape + r * rg->rank;

		for (int k = 0; k < rg->rank; k++) {
			if (s[k] < 0 || (s[k] && count > INT64_MAX / 16 / s[k]))
				die("%s: record %lld: bad shape", spath, (long long)r);
			count *= s[k];
			if (s[k] != dims[k])
				dims[k] = VT_ANY;
		}
		if (count > INT64_MAX / 16 - total)
			die("%s: shapes too large", spath);
		total += count;
	}
	if (total != h->count)
		die("%s: the shapes make %lld elements, %s has %lld", spath, (long long)total,
		    path, (long long)h->count);
}

/* The dims of field name that header.json h gives as '*' become VT_ANY in
 * dims[rank], when h's field has that rank and its other dims are these. */
static void
star_dims(const struct vt *h, const char *name, int rank, int64_t *dims)
{
	int i = vt_find(h, name);

	if (i < 0 || h->field[i].rank != rank)
		return;
	for (int k = 0; k < rank; k++)
		if (h->field[i].dim[k] != VT_ANY && h->field[i].dim[k] != dims[k])
			return;
	for (int k = 0; k < rank; k++)
		if (h->field[i].dim[k] == VT_ANY)
			dims[k] = VT_ANY;
}

/* "NAME=FILE.shapes.npy" for a text field of header.json h given as
 * FILE.npy, when to-npy wrote that file beside it; else NULL. */
static char *
text_shapes(const struct vt *h, const char *name, const char *path)
{
	int i = vt_find(h, name);
	size_t n = strlen(path);
	char *spec;

	if (i < 0 || !vtool_is_text(h->field[i].dtype, h->field[i].rank, h->field[i].dim) ||
	    n < 4 || strcmp(path + n - 4, ".npy") != 0)
		return NULL;
	if (asprintf(&spec, "%s=%.*s.shapes.npy", name, (int)(n - 4), path) < 0)
		die("out of memory");
	if (access(strchr(spec, '=') + 1, F_OK) == 0)
		return spec;
	free(spec);
	return NULL;
}

void
vtool_from_npy(const struct vtool_opts *o, int argc, char *argv[])
{
	static struct npy h[VTOOL_MAXIN];
	static FILE *fp[VTOOL_MAXIN];
	static const char *path[VTOOL_MAXIN];
	static struct ragged rg[VTOOL_MAXIN];
	static int64_t fixed[VTOOL_MAXIN][VT_MAXRANK];	/* the arrays' dims */
	int used[VTOOL_MAXIN] = { 0 }, side = 0;
	struct vt out, hj;
	struct err e;
	int n = o->nargs;
	int64_t nrec = -1;

	if (n < 1)
		usage_error("from-npy: give NAME=FILE.npy for each field");
	if (n > VTOOL_MAXIN)
		usage_error("from-npy: more than %d arrays", VTOOL_MAXIN);
	vt_init(&out);
	out.align = o->align;
	for (int i = 0; i < n; i++) {
		char *eq = strchr(o->args[i], '='), name[VT_MAXNAME + 1];
		int64_t dims[VT_MAXRANK], records;
		int rank, j;

		if (!eq || eq == o->args[i] || !eq[1])
			usage_error("from-npy: '%s' is not NAME=FILE.npy", o->args[i]);
		if (eq - o->args[i] > VT_MAXNAME)
			usage_error("from-npy: '%s': name longer than %d bytes", o->args[i], VT_MAXNAME);
		snprintf(name, sizeof name, "%.*s", (int)(eq - o->args[i]), o->args[i]);
		path[i] = eq + 1;
		if (i == 0 && o->header)
			side = read_header_json(o->header, &hj, 0) == 0;
		else if (i == 0 && !o->no_header) {
			char *copy = strdup(path[0]), *hp;
			if (copy == NULL || asprintf(&hp, "%s/" VTOOL_HEADER_JSON, dirname(copy)) < 0)
				die("out of memory");
			side = read_header_json(hp, &hj, 1) == 0;
			free(hp);
			free(copy);
		}
		if ((fp[i] = fopen(path[i], "rb")) == NULL)
			die_errno("%s", path[i]);
		if (npy_read_header(&h[i], fp[i], path[i], &e) < 0)
			die("%s", e.msg);
		for (j = 0; j < o->nshapes; j++)
			if (strncmp(o->shapes[j], name, strlen(name)) == 0 &&
			    o->shapes[j][strlen(name)] == '=')
				break;
		char *auto_spec = NULL;
		if (j == o->nshapes && side)
			auto_spec = text_shapes(&hj, name, path[i]);
		if (j < o->nshapes || auto_spec != NULL) {
			if (j < o->nshapes)
				used[j] = 1;
			load_shapes(auto_spec ? auto_spec : o->shapes[j], &h[i], path[i],
			    &rg[i], dims);
			free(auto_spec);
			records = rg[i].n;
			rank = rg[i].rank;
		} else {
			if (h[i].rank < 1)
				die("%s: a 0-d array has no record axis", path[i]);
			records = h[i].shape[0];
			rank = h[i].rank - 1;
			memcpy(dims, h[i].shape + 1, rank * sizeof *dims);
		}
		memcpy(fixed[i], dims, rank * sizeof *dims);
		if (side)
			star_dims(&hj, name, rank, dims);
		if (nrec >= 0 && records != nrec)
			die("%s: %lld records, but %s has %lld", path[i], (long long)records,
			    path[0], (long long)nrec);
		nrec = records;
		if (vt_add_field(&out, name, h[i].dtype, rank, dims) < 0)
			die("%s: %s", path[i], out.err.msg);
	}
	for (int j = 0; j < o->nshapes; j++)
		if (!used[j])
			usage_error("--shapes %s: no field of that name", o->shapes[j]);
	for (int m = 0; side && m < hj.nmeta; m++)
		if (vt_meta_add(&out, hj.meta[m].key, hj.meta[m].val) < 0)
			die("%s", out.err.msg);
	if (side && !o->set_align && hj.align)
		out.align = hj.align;
	if (side)
		vt_free(&hj);
	vtool_add_meta(o, &out);
	out.records = nrec;
	vtool_begin_output(&out, argc, argv, o->force);
	for (int64_t r = 0; r < out.records; r++) {
		for (int i = 0; i < n; i++) {
			struct vt_field *f = &out.field[i];
			int64_t first = r * f->count;

			if (rg[i].shape) {
				if (vt_set_shape(&out, i, rg[i].shape + r * rg[i].rank) < 0)
					die("%s", out.err.msg);
				first = rg[i].at;
				rg[i].at += f->count;
			} else if (vt_set_shape(&out, i, fixed[i]) < 0)
				die("%s", out.err.msg);
			if (npy_read(&h[i], fp[i], path[i], first, f->count, f->data, &e) < 0)
				die("%s", e.msg);
		}
		if (vt_write_record(&out) < 0)
			die("%s", out.err.msg);
	}
	for (int i = 0; i < n; i++) {
		fclose(fp[i]);
		free(rg[i].shape);
	}
	vt_free(&out);
}

