/* vtool_from_safetensors.c - vtool from-safetensors: timm's weights to a checkpoint (vtool.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include "checkpoint.h"
#include "safetensors.h"
#include "timm.h"
#include "cli.h"
#include "vtool.h"

/* The input as a file that can be read at any offset, and its size: a
 * pipe's bytes go to a temporary file first. */
static FILE *
seekable(FILE *fp, const char *name, uint64_t *size)
{
	struct stat st;
	char buf[1 << 16];
	size_t n;
	FILE *tmp;

	if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		return fp;
	}
	if ((tmp = tmpfile()) == NULL)
		die_errno("a temporary file for %s", name);
	while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
		if (fwrite(buf, 1, n, tmp) != n)
			die_errno("a temporary file for %s", name);
	if (ferror(fp))
		die_errno("%s", name);
	if (fflush(tmp) == EOF || fstat(fileno(tmp), &st) < 0)
		die_errno("a temporary file for %s", name);
	rewind(tmp);
	*size = (uint64_t)st.st_size;
	return tmp;
}

static const char *const fate_name[] = { "mapped", "skipped", "unknown", "misfit",
    "missing" };

/* --list: the model, then one line per tensor, "FATE NAME DTYPE[SHAPE]"
 * and where it goes or why not. */
static void
print_plan(const struct timm_plan *p)
{
	const struct vit_config *c = &p->m->c;

	printf("model dim %d depth %d heads %d mlp %d classes %d P %d axes %d grid ", c->dim,
	    c->depth, c->heads, c->mlp, c->classes, c->P, c->axes);
	for (int a = 0; a < c->axes; a++)
		printf("%s%d", a ? "x" : "", c->grid[a]);
	printf(" pe %s pool %s%s%s\n", c->pe, c->pool == VIT_POOL_CLS ? "cls" : "mean",
	    c->locality ? " locality" : "", p->new_head ? " new-head" : "");
	for (int i = 0; i < p->n; i++) {
		const struct timm_entry *e = &p->e[i];

		printf("%-8s", fate_name[e->fate]);
		if (e->t != NULL) {
			vtool_put_text(e->t->name);
			printf(" %s[", st_dtype_name(e->t->dtype));
			for (int k = 0; k < e->t->rank; k++)
				printf("%s%lld", k ? "," : "", (long long)e->t->shape[k]);
			printf("]");
		} else
			printf("%s", e->dst);
		if (e->fate == TIMM_MAPPED)
			printf(" -> %s (", e->dst);
		else
			printf(": ");
		vtool_put_text(e->why);	/* it may quote the file's names */
		fputs(e->fate == TIMM_MAPPED ? ")\n" : "\n", stdout);
	}
}

/* The entries of fates (a bit per fate) as "NAME (fate: why), ..." for a
 * one-line message, at most 4 in full. */
static char *
entries(const struct timm_plan *p, int fates, int with_why)
{
	char *msg = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&msg, &len);
	int n = 0;

	if (m == NULL)
		die("out of memory");
	for (int i = 0; i < p->n; i++) {
		const struct timm_entry *e = &p->e[i];
		if (!(fates >> e->fate & 1))
			continue;
		if (n++ == 4) {
			fprintf(m, " ...");
			break;
		}
		fprintf(m, "%s%s", n > 1 ? ", " : "", e->t ? e->t->name : e->dst);
		if (with_why)
			fprintf(m, " (%s: %s)", fate_name[e->fate], e->why);
	}
	if (fclose(m) != 0)
		die("out of memory");
	return msg;
}

void
vtool_from_safetensors(const struct vtool_opts *o, int argc, char *argv[])
{
	struct st st;
	struct timm_plan p;
	struct vt out;
	const char *name;
	uint64_t size;
	struct err e;
	char *msg;
	FILE *fp;

	if (o->nargs > 1)
		usage_error("from-safetensors: one input at most");
	if (!o->list)
		cli_binary_stdout(o->force);
	fp = seekable(cli_open_in(o->nargs ? o->args[0] : NULL, &name), name, &size);
	if (st_read_header(&st, fp, name, size) < 0)
		die("%s", st.err.msg);
	if (timm_plan(&p, &st, &o->timm, &e) < 0)
		die("%s: %s", name, e.msg);
	if (o->list) {
		print_plan(&p);
		if (p.nbad)
			die("%s: %d tensors cannot be mapped (above)", name, p.nbad);
		goto done;
	}
	int bad = 1 << TIMM_MISFIT | 1 << TIMM_MISSING |
	    (o->timm.ignore_unknown ? 0 : 1 << TIMM_UNKNOWN);
	if (p.nbad)
		die("%s: cannot map %d tensors: %s; --list shows every tensor's fate", name,
		    p.nbad, msg = entries(&p, bad, 1));
	/* What is left out besides a replaced head, said once. */
	for (int i = 0; i < p.n; i++)
		if (p.e[i].fate == TIMM_UNKNOWN || (p.e[i].fate == TIMM_SKIPPED &&
		    strncmp(p.e[i].t->name, "head.", 5) != 0)) {
			msg = entries(&p, 1 << TIMM_UNKNOWN | 1 << TIMM_SKIPPED, 0);
			cli_warn("%s: left out: %s (--list says why)", name, msg);
			free(msg);
			break;
		}
	if (timm_load(&p, &st, &e) < 0)
		die("%s", e.msg);
	vtool_add_meta(o, &p.keys);
	vt_init(&out);
	if (ckpt_describe(&out, p.m, &p.keys, 0, &e) < 0)
		die("%s: %s", name, e.msg);
	out.records = 1;	/* a single-record container, as vt_save writes */
	vtool_begin_output(&out, argc, argv, o->force);
	if (vt_write_record(&out) < 0)
		die("%s", out.err.msg);
	vt_free(&out);
done:
	timm_plan_free(&p);
	st_free(&st);
	if (fp != stdin)
		fclose(fp);
}

