/* vtool_cat.c - vtool cat: streams of the same fields, one after the other (vtool.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vtcopy.h"
#include "vtool.h"

/* Fields of a and b agree in name, dtype and dims. */
static int
same_fields(const struct vt *a, const struct vt *b, char *why, size_t len)
{
	if (a->nfield != b->nfield) {
		snprintf(why, len, "%d fields, not %d", b->nfield, a->nfield);
		return 0;
	}
	for (int i = 0; i < a->nfield; i++) {
		const struct vt_field *f = &a->field[i], *g = &b->field[i];
		int same = strcmp(f->name, g->name) == 0 && f->dtype == g->dtype &&
		    f->rank == g->rank;

		for (int k = 0; same && k < f->rank; k++)
			same = f->dim[k] == g->dim[k];
		if (!same) {
			snprintf(why, len, "field %d is '%s' %s, not '%s' %s (or its dims differ)",
			    i + 1, g->name, vt_dtype_name(g->dtype), f->name, vt_dtype_name(f->dtype));
			return 0;
		}
	}
	return 1;
}

void
vtool_cat(const struct vtool_opts *o, int argc, char *argv[])
{
	static struct vt in[VTOOL_MAXIN];
	struct vt out;
	int n = o->nargs ? o->nargs : 1, stdin_used = 0;
	char why[256];

	if (n > VTOOL_MAXIN)
		usage_error("cat: more than %d inputs", VTOOL_MAXIN);
	for (int i = 0; i < o->nargs; i++)
		if (strcmp(o->args[i], "-") == 0 && stdin_used++)
			usage_error("cat: stdin given twice");
	for (int i = 0; i < n; i++) {
		vtool_open(&in[i], o->nargs ? o->args[i] : "-");
		if (i && !same_fields(&in[0], &in[i], why, sizeof why))
			die("%s: fields differ from %s: %s", in[i].name, in[0].name, why);
	}
	vt_init(&out);
	if (vt_copy_header(&out, &in[0]) < 0)
		die("%s", out.err.msg);
	for (int i = 1; i < n; i++) {
		out.records = out.records >= 0 && in[i].records >= 0 ?
		    out.records + in[i].records : -1;
		for (int m = 0; m < in[i].nmeta; m++) {
			const char *k = in[i].meta[m].key, *v = vt_meta(&in[0], k);

			if (strcmp(k, "HISTORY") && strcmp(k, "SOURCE") &&
			    strcmp(k, "EPOCH_RECORDS") && (!v || strcmp(v, vt_meta(&in[i], k))))
				cli_warn("%s: %s differs from %s's; keeping the first stream's",
				    in[i].name, k, in[0].name);
		}
	}
	vtool_begin_output(&out, argc, argv, o->force);
	for (int i = 0; i < n; i++) {
		while (vtool_next(&in[i]) == 1)
			vtool_write_record(&out, &in[i]);
		vtool_close(&in[i]);
	}
	vt_free(&out);
}

