/* vtool_info.c - vtool info: a stream's fields, shapes, keys and records (vtool.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vtool.h"

static void
print_dims(const struct vt_field *f, const int64_t *dims)
{
	putchar('[');
	for (int k = 0; k < f->rank; k++) {
		if (k)
			putchar(',');
		if (dims[k] == VT_ANY)
			putchar('*');
		else
			printf("%lld", (long long)dims[k]);
	}
	putchar(']');
}

void
vtool_info(const struct vtool_opts *o, int argc, char *argv[])
{
	struct vt s;
	static int64_t lo[VT_MAXFIELDS][VT_MAXRANK], hi[VT_MAXFIELDS][VT_MAXRANK];
	double bytes = 0;

	if (o->nargs > 1)
		usage_error("info: one input at most");
	vtool_open(&s, o->nargs ? o->args[0] : NULL);
	while (vtool_next(&s) == 1)
		for (int i = 0; i < s.nfield; i++) {
			struct vt_field *f = &s.field[i];
			for (int k = 0; k < f->rank; k++) {
				if (s.recno == 1 || f->shape[k] < lo[i][k])
					lo[i][k] = f->shape[k];
				if (s.recno == 1 || f->shape[k] > hi[i][k])
					hi[i][k] = f->shape[k];
			}
			bytes += f->nbytes;
		}
	printf("stream   ");
	vtool_put_text(s.name);
	printf("\nalign    %d\nrecords  %lld", s.align, (long long)s.recno);
	if (s.records >= 0)
		printf(" (declared %lld)", (long long)s.records);
	printf("\npayload  %.0f bytes\n", bytes);
	for (int i = 0; i < s.nfield; i++) {
		struct vt_field *f = &s.field[i];
		int var = 0;

		printf("field    %s %s ", f->name, vt_dtype_name(f->dtype));
		print_dims(f, f->dim);
		for (int k = 0; k < f->rank; k++)
			var |= f->dim[k] == VT_ANY;
		if (var && s.recno > 0) {
			printf(" shapes [");
			for (int k = 0; k < f->rank; k++) {
				printf("%s%lld", k ? "," : "", (long long)lo[i][k]);
				if (hi[i][k] != lo[i][k])
					printf("..%lld", (long long)hi[i][k]);
			}
			putchar(']');
		}
		putchar('\n');
	}
	for (int i = 0; i < s.nmeta; i++) {
		printf("meta     %s ", s.meta[i].key);
		vtool_put_text(s.meta[i].val);
		putchar('\n');
	}
	vtool_close(&s);
}

