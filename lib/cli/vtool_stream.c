/* vtool_stream.c - what vtool's subcommands share: streams in and out, text, --meta (vtool.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "text.h"
#include "vtcopy.h"
#include "vtool.h"

void
vtool_open(struct vt *s, const char *path)
{
	const char *name;
	FILE *fp = cli_open_in(path, &name);

	vt_init(s);
	if (vt_read_header(s, fp, name) < 0)
		die("%s", s->err.msg);
}

int
vtool_next(struct vt *s)
{
	int r = vt_read_record(s);

	if (r < 0)
		die("%s", s->err.msg);
	return r;
}

void
vtool_close(struct vt *s)
{
	if (s->fp != stdin)
		fclose(s->fp);
	vt_free(s);
}

/* Write the record just read into s to o (same fields). */
void
vtool_write_record(struct vt *o, struct vt *s)
{
	if (vt_copy_record(o, s) < 0 || vt_write_record(o) < 0)
		die("%s", o->err.msg);
}

void
vtool_begin_output(struct vt *o, int argc, char *argv[], int force)
{
	cli_binary_stdout(force);
	if (vt_history(o, argc, argv) < 0 || vt_write_header(o, stdout, "stdout") < 0)
		die("%s", o->err.msg);
}

/* Text from the input to stdout, its control characters escaped. */
void
vtool_put_text(const char *s)
{
	text_put(stdout, s, strlen(s));
}

/* Whether a field of this dtype and dims is text: bytes of one '*' dim. */
int
vtool_is_text(int dtype, int rank, const int64_t *dim)
{
	return dtype == VT_U8 && rank == 1 && dim[0] == VT_ANY;
}

/* The --meta lines into out: the first KEY=... of a key replaces the lines
 * out had of it (header.json's, the checkpoint's), the others add to it. */
void
vtool_add_meta(const struct vtool_opts *o, struct vt *out)
{
	for (int m = 0; m < o->nmeta; m++) {
		char *kv = strdup(o->meta[m]), *eq;
		int first = 1;

		if (!kv)
			die("out of memory");
		eq = strchr(kv, '=');
		*eq = 0;
		for (int k = 0; k < m; k++)
			first &= strncmp(o->meta[k], kv, eq - kv) || o->meta[k][eq - kv] != '=';
		if ((first && vt_meta_set(out, kv, NULL) < 0) || vt_meta_add(out, kv, eq + 1) < 0)
			usage_error("--meta: %s", out->err.msg);
		free(kv);
	}
}

