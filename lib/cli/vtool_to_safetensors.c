/* vtool_to_safetensors.c - vtool to-safetensors: a checkpoint's weights under timm's names (vtool.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "safetensors.h"
#include "timm.h"
#include "cli.h"
#include "vtool.h"

void
vtool_to_safetensors(const struct vtool_opts *o, int argc, char *argv[])
{
	struct vt ck;
	struct vit *m;
	struct st st;
	struct err e;

	if (o->nargs != 1)
		usage_error("to-safetensors: give one checkpoint");
	cli_binary_stdout(o->force);
	if ((m = ckpt_load(o->args[0], &ck, 1, 0, 0, &e)) == NULL)
		die("%s", e.msg);
	st_init(&st);
	if (timm_export(m, &ck, &st, &e) < 0)
		die("%s: %s", o->args[0], e.msg);
	if (st_write(&st, stdout, "stdout") < 0)
		die("%s", st.err.msg);
	st_free(&st);
	vit_destroy(m);
	vt_free(&ck);
}

