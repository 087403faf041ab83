/*
 * evalin.c - open a checkpoint and a stream for it.
 */
#include <stdio.h>
#include <string.h>

#include "checkpoint.h"
#include "cli.h"
#include "evalin.h"
#include "pe_conv.h"
#include "posmap.h"

/* A position table read at a grid other than the training one is
 * resampled: correct, but a choice the user should see once. */
static void
table_note(const struct vit *m, const char *grid, const char *name)
{
	char had[64] = "";
	int64_t g[VIT_MAXAXES];
	int n = 0, same = 1;

	if (!vit_has_table(m) || grid == NULL || vt_parse_dims(grid, g, VIT_MAXAXES) != m->c.axes)
		return;
	for (int a = 0; a < m->c.axes; a++) {
		same &= g[a] == m->c.grid[a];
		n += snprintf(had + n, sizeof had - (size_t)n, "%s%d", a ? "x" : "", m->c.grid[a]);
	}
	if (!same)
		cli_warn("%s: grid %s, the model's %s: its position table (--pe %s) is "
		    "interpolated to it", name, grid, had, m->c.pe);
}

void
eval_input_open(struct eval_input *in, const char *model, const char *path, int batch)
{
	struct err e;
	struct vit *m;

	if ((in->m = m = ckpt_load(model, &in->ck, batch, 0, 0, &e)) == NULL)
		die("%s", e.msg);
	vt_init(&in->s);
	in->fp = cli_open_in(path, &in->name);
	if (vt_read_header(&in->s, in->fp, in->name) < 0)
		die("%s", in->s.err.msg);
	if (batch_open_model(&in->br, &in->s, &in->ck, m->c.P, m->c.axes, m->c.classes, 0) < 0)
		die("%s", in->s.err.msg);
	if (posmap_stream(&m->c, &in->ck, &in->s, &e) < 0)
		die("%s: %s", in->name, e.msg);
	if (pe_conv_check(vt_meta(&in->ck, "POS"), vt_meta(&in->s, "POS"), &e) < 0)
		cli_warn("%s: %s", in->name, e.msg);
	table_note(m, vt_meta(&in->s, "GRID"), in->name);
}

void
eval_input_close(struct eval_input *in)
{
	batch_close(&in->br);
	vit_destroy(in->m);
	vt_free(&in->s);
	vt_free(&in->ck);
	if (in->fp != stdin)
		fclose(in->fp);
}
