/* vtool_head.c - vtool head: the first records of a stream (vtool.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vtcopy.h"
#include "vtool.h"

void
vtool_head(const struct vtool_opts *o, int argc, char *argv[])
{
	struct vt s, out;

	if (o->nargs > 1)
		usage_error("head: one input at most");
	vtool_open(&s, o->nargs ? o->args[0] : NULL);
	vt_init(&out);
	if (vt_copy_header(&out, &s) < 0)
		die("%s", out.err.msg);
	if (out.records >= 0 && out.records > o->lines)
		out.records = o->lines;
	vtool_begin_output(&out, argc, argv, o->force);
	while (s.recno < o->lines && vtool_next(&s) == 1)
		vtool_write_record(&out, &s);
	if (out.records >= 0 && out.recno < out.records)
		die("%s: stream ended after %lld of %lld records", s.name,
		    (long long)out.recno, (long long)out.records);
	vtool_close(&s);
	vt_free(&out);
}

