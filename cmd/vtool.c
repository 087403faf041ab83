/*
 * vtool - look into vitpipe streams, cut and join them, and convert them to
 * and from NumPy .npy arrays (vtool(1)), the header's keys, ALIGN and '*'
 * dims kept in DIR/header.json beside the arrays; and checkpoints to and
 * from safetensors files under timm's names (lib/model/timm.h).
 */
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "atomicfile.h"
#include "checkpoint.h"
#include "cli.h"
#include "cliopt.h"
#include "json.h"
#include "npy.h"
#include "safetensors.h"
#include "text.h"
#include "timm.h"
#include "vt.h"
#include "vtcopy.h"
#include "vtjson.h"

#define MAXIN	1024		/* streams for cat, arrays for from-npy */
#define HEADER_JSON "header.json"	/* to-npy's sidecar in DIR */

struct opts {
	long long	 lines;		/* head: records to keep */
	int		 align;		/* from-npy: ALIGN of the stream */
	int		 ragged;	/* to-npy: '*' fields flat + shapes */
	int		 force;		/* binary output to a terminal */
	const char	*meta[MAXIN];	/* from-npy: KEY=VALUE */
	int		 nmeta;
	const char	*shapes[MAXIN];	/* from-npy: NAME=SHAPES.npy */
	int		 nshapes;
	const char	*header;	/* from-npy: --header FILE */
	int		 no_header;	/* from-npy: --no-header */
	int		 set_align;
	struct timm_opts timm;		/* from-safetensors: the import's options */
	int		 list;		/* from-safetensors: print the mapping */
	char		**args;		/* operands after the subcommand */
	int		 nargs;
};

enum { OPT_RAGGED = CLI_OPT_LONG, OPT_ALIGN, OPT_META, OPT_SHAPES, OPT_HEADER,
	OPT_NO_HEADER, OPT_CLASSES, OPT_GRID, OPT_HEADS, OPT_SEED, OPT_IGNORE_UNKNOWN,
	OPT_LIST, OPT_FORCE };

/* The options of more than one subcommand. */
#define OPTION_FORCE	{ "force", OPT_FORCE, NULL, "write even to a terminal" }
#define OPTION_META	{ "meta", OPT_META, "KEY=VALUE", \
	"a header line KEY VALUE (repeatable)" }
#define OPTIONS_END	{ NULL, 0, NULL, NULL }

static const struct cli_opt no_opts[] = { OPTIONS_END };

static const struct cli_opt head_opts[] = {
	{ "lines", 'n', "N", "records to keep (default 10)" },
	OPTION_FORCE,
	OPTIONS_END
};

static const struct cli_opt cat_opts[] = { OPTION_FORCE, OPTIONS_END };

static const struct cli_opt to_npy_opts[] = {
	{ "ragged", OPT_RAGGED, NULL, "write '*' fields flat with NAME.shapes.npy" },
	OPTIONS_END
};

static const struct cli_opt from_npy_opts[] = {
	{ "align", OPT_ALIGN, "N", "ALIGN of the stream (default 64)" },
	OPTION_META,
	{ "shapes", OPT_SHAPES, "NAME=S.npy", "NAME's array is flat, S.npy [N][rank] its "
	    "records' shapes (as to-npy --ragged writes)" },
	{ "header", OPT_HEADER, "FILE",
	    "the keys from FILE, not the first array's " HEADER_JSON },
	{ "no-header", OPT_NO_HEADER, NULL, "no " HEADER_JSON ", only --meta keys" },
	OPTION_FORCE,
	OPTIONS_END
};

static const struct cli_opt to_safetensors_opts[] = { OPTION_FORCE, OPTIONS_END };

static const struct cli_opt from_safetensors_opts[] = {
	{ "classes", OPT_CLASSES, "N", "a new head of N classes (seeded) when the file's "
	    "has another number or none" },
	{ "grid", OPT_GRID, "HxW", "the token grid of the streams; the position table "
	    "is resampled to it (default: its own)" },
	{ "heads", OPT_HEADS, "N", "attention heads (default: dim / 64)" },
	{ "seed", OPT_SEED, "N", "seed of a new head (default 1)" },
	{ "ignore-unknown", OPT_IGNORE_UNKNOWN, NULL,
	    "skip the tensors it has no place for" },
	{ "list", OPT_LIST, NULL, "print what becomes of every tensor" },
	OPTION_META,
	OPTION_FORCE,
	OPTIONS_END
};

static void
open_stream(struct vt *s, const char *path)
{
	const char *name;
	FILE *fp = cli_open_in(path, &name);

	vt_init(s);
	if (vt_read_header(s, fp, name) < 0)
		die("%s", s->err);
}

static int
next_record(struct vt *s)
{
	int r = vt_read_record(s);

	if (r < 0)
		die("%s", s->err);
	return r;
}

static void
close_stream(struct vt *s)
{
	if (s->fp != stdin)
		fclose(s->fp);
	vt_free(s);
}

/* Write the record just read into s to o (same fields). */
static void
write_record(struct vt *o, struct vt *s)
{
	if (vt_copy_record(o, s) < 0 || vt_write_record(o) < 0)
		die("%s", o->err);
}

static void
begin_output(struct vt *o, int argc, char *argv[], int force)
{
	cli_binary_stdout(force);
	if (vt_history(o, argc, argv) < 0 || vt_write_header(o, stdout, "stdout") < 0)
		die("%s", o->err);
}

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

/* Text from the input to stdout, its control characters escaped. */
static void
put_text(const char *s)
{
	text_put(stdout, s, strlen(s));
}

static void
cmd_info(const struct opts *o, int argc, char *argv[])
{
	struct vt s;
	static int64_t lo[VT_MAXFIELDS][VT_MAXRANK], hi[VT_MAXFIELDS][VT_MAXRANK];
	double bytes = 0;

	if (o->nargs > 1)
		usage_error("info: one input at most");
	open_stream(&s, o->nargs ? o->args[0] : NULL);
	while (next_record(&s) == 1)
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
	put_text(s.name);
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
		put_text(s.meta[i].val);
		putchar('\n');
	}
	close_stream(&s);
}

static void
cmd_head(const struct opts *o, int argc, char *argv[])
{
	struct vt s, out;

	if (o->nargs > 1)
		usage_error("head: one input at most");
	open_stream(&s, o->nargs ? o->args[0] : NULL);
	vt_init(&out);
	if (vt_copy_header(&out, &s) < 0)
		die("%s", out.err);
	if (out.records >= 0 && out.records > o->lines)
		out.records = o->lines;
	begin_output(&out, argc, argv, o->force);
	while (s.recno < o->lines && next_record(&s) == 1)
		write_record(&out, &s);
	if (out.records >= 0 && out.recno < out.records)
		die("%s: stream ended after %lld of %lld records", s.name,
		    (long long)out.recno, (long long)out.records);
	close_stream(&s);
	vt_free(&out);
}

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

static void
cmd_cat(const struct opts *o, int argc, char *argv[])
{
	static struct vt in[MAXIN];
	struct vt out;
	int n = o->nargs ? o->nargs : 1, stdin_used = 0;
	char why[256];

	if (n > MAXIN)
		usage_error("cat: more than %d inputs", MAXIN);
	for (int i = 0; i < o->nargs; i++)
		if (strcmp(o->args[i], "-") == 0 && stdin_used++)
			usage_error("cat: stdin given twice");
	for (int i = 0; i < n; i++) {
		open_stream(&in[i], o->nargs ? o->args[i] : "-");
		if (i && !same_fields(&in[0], &in[i], why, sizeof why))
			die("%s: fields differ from %s: %s", in[i].name, in[0].name, why);
	}
	vt_init(&out);
	if (vt_copy_header(&out, &in[0]) < 0)
		die("%s", out.err);
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
	begin_output(&out, argc, argv, o->force);
	for (int i = 0; i < n; i++) {
		while (next_record(&in[i]) == 1)
			write_record(&out, &in[i]);
		close_stream(&in[i]);
	}
	vt_free(&out);
}

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

/* DIR/header.json: what the arrays do not hold of s's header, its ALIGN,
 * its fields' dtypes and dims ('*' too) and its keys in order, repeated
 * ones included:
 *   {"align": 64, "fields": {"patch": {"dtype": "u8", "dims": ["*", 16]}},
 *    "meta": [["GRID", "7x7"], ["CLASS", "0 cat"]]} */
static void
write_header_json(const char *dir, const struct vt *s)
{
	struct atomicfile a;
	char *path;

	if (asprintf(&path, "%s/" HEADER_JSON, dir) < 0)
		die("out of memory");
	if (atomic_open(&a, path) < 0)
		die_errno("%s", path);
	fprintf(a.fp, "{\"align\": %d,\n \"fields\": {", s->align);
	for (int i = 0; i < s->nfield; i++) {
		const struct vt_field *f = &s->field[i];
		fprintf(a.fp, "%s\n  ", i ? "," : "");
		json_put_string(a.fp, f->name);
		fprintf(a.fp, ": {\"dtype\": \"%s\", \"dims\": [", vt_dtype_name(f->dtype));
		for (int k = 0; k < f->rank; k++)
			fprintf(a.fp, f->dim[k] == VT_ANY ? "%s\"*\"" : "%s%lld", k ? ", " : "",
			    (long long)f->dim[k]);
		fprintf(a.fp, "]}");
	}
	fprintf(a.fp, "},\n \"meta\": [");
	for (int i = 0; i < s->nmeta; i++) {
		fprintf(a.fp, "%s\n  [", i ? "," : "");
		json_put_string(a.fp, s->meta[i].key);
		fprintf(a.fp, ", ");
		json_put_string(a.fp, s->meta[i].val);
		fprintf(a.fp, "]");
	}
	fprintf(a.fp, "]}\n");
	if (ferror(a.fp) || atomic_commit(&a) < 0)
		die_errno("%s", path);
	free(path);
}

/* Whether a field of this dtype and dims is text: bytes of one '*' dim. */
static int
is_text(int dtype, int rank, const int64_t *dim)
{
	return dtype == VT_U8 && rank == 1 && dim[0] == VT_ANY;
}

static void
cmd_to_npy(const struct opts *o, int argc, char *argv[])
{
	struct vt s;
	struct npyout *data[VT_MAXFIELDS], *shapes[VT_MAXFIELDS];
	int64_t first[VT_MAXFIELDS][VT_MAXRANK];
	int flat[VT_MAXFIELDS], r;
	const char *dir;

	if (o->nargs < 1 || o->nargs > 2)
		usage_error("to-npy: give a directory and at most one input");
	dir = o->args[0];
	open_stream(&s, o->nargs > 1 ? o->args[1] : NULL);
	for (int i = 0; i < s.nfield; i++)
		if (strchr(s.field[i].name, '/'))
			die("%s: field '%s': a name with '/' cannot be a file name", s.name,
			    s.field[i].name);
	if (mkdir(dir, 0777) < 0 && errno != EEXIST)
		die_errno("%s", dir);
	r = next_record(&s);
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
		flat[i] = flat[i] && (o->ragged || is_text(f->dtype, f->rank, f->dim));
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
		die_npy("%s", s.err);
	for (int i = 0; i < nnpyout; i++)
		npy_end(&npyouts[i]);
	write_header_json(dir, &s);
	close_stream(&s);
}

/* The --meta lines into out: the first KEY=... of a key replaces the lines
 * out had of it (header.json's, the checkpoint's), the others add to it. */
static void
add_meta(const struct opts *o, struct vt *out)
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
			usage_error("--meta: %s", out->err);
		free(kv);
	}
}

/* Read header.json at path (as write_header_json writes it) into h: its
 * ALIGN, fields and keys.  0, or -1 when there is no such file and
 * missing_ok. */
static int
read_header_json(const char *path, struct vt *h, int missing_ok)
{
	FILE *fp = fopen(path, "rb");
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	int rc;

	if (fp == NULL && errno == ENOENT && missing_ok)
		return -1;
	if (fp == NULL)
		die_errno("%s", path);
	do {
		if (len > VT_MAXHEADER * 2)
			die("%s: longer than %ld bytes", path, VT_MAXHEADER * 2);
		if (len + 65537 > cap) {	/* doubled: no copy per 64 KiB */
			cap = 2 * (len + 65537);
			if ((text = realloc(text, cap)) == NULL)
				die("out of memory");
		}
		len += n = fread(text + len, 1, 65536, fp);
	} while (n > 0);
	if (ferror(fp))
		die_errno("%s", path);
	fclose(fp);
	text[len] = '\0';
	rc = vt_json_read(h, text, len);
	free(text);
	if (rc < 0)
		die("%s: %s", path, h->err);
	h->name = path;
	return 0;
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
	char err[NPY_ERRLEN];
	int64_t total = 0;

	if (npy_load(spath, &sh, &data, err) < 0)
		die("%s", err);
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

	if (i < 0 || !is_text(h->field[i].dtype, h->field[i].rank, h->field[i].dim) ||
	    n < 4 || strcmp(path + n - 4, ".npy") != 0)
		return NULL;
	if (asprintf(&spec, "%s=%.*s.shapes.npy", name, (int)(n - 4), path) < 0)
		die("out of memory");
	if (access(strchr(spec, '=') + 1, F_OK) == 0)
		return spec;
	free(spec);
	return NULL;
}

static void
cmd_from_npy(const struct opts *o, int argc, char *argv[])
{
	static struct npy h[MAXIN];
	static FILE *fp[MAXIN];
	static const char *path[MAXIN];
	static struct ragged rg[MAXIN];
	static int64_t fixed[MAXIN][VT_MAXRANK];	/* the arrays' dims */
	int used[MAXIN] = { 0 }, side = 0;
	struct vt out, hj;
	char err[NPY_ERRLEN];
	int n = o->nargs;
	int64_t nrec = -1;

	if (n < 1)
		usage_error("from-npy: give NAME=FILE.npy for each field");
	if (n > MAXIN)
		usage_error("from-npy: more than %d arrays", MAXIN);
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
			if (copy == NULL || asprintf(&hp, "%s/" HEADER_JSON, dirname(copy)) < 0)
				die("out of memory");
			side = read_header_json(hp, &hj, 1) == 0;
			free(hp);
			free(copy);
		}
		if ((fp[i] = fopen(path[i], "rb")) == NULL)
			die_errno("%s", path[i]);
		if (npy_read_header(&h[i], fp[i], path[i], err) < 0)
			die("%s", err);
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
			die("%s: %s", path[i], out.err);
	}
	for (int j = 0; j < o->nshapes; j++)
		if (!used[j])
			usage_error("--shapes %s: no field of that name", o->shapes[j]);
	for (int m = 0; side && m < hj.nmeta; m++)
		if (vt_meta_add(&out, hj.meta[m].key, hj.meta[m].val) < 0)
			die("%s", out.err);
	if (side && !o->set_align && hj.align)
		out.align = hj.align;
	if (side)
		vt_free(&hj);
	add_meta(o, &out);
	out.records = nrec;
	begin_output(&out, argc, argv, o->force);
	for (int64_t r = 0; r < out.records; r++) {
		for (int i = 0; i < n; i++) {
			struct vt_field *f = &out.field[i];
			int64_t first = r * f->count;

			if (rg[i].shape) {
				if (vt_set_shape(&out, i, rg[i].shape + r * rg[i].rank) < 0)
					die("%s", out.err);
				first = rg[i].at;
				rg[i].at += f->count;
			} else if (vt_set_shape(&out, i, fixed[i]) < 0)
				die("%s", out.err);
			if (npy_read(&h[i], fp[i], path[i], first, f->count, f->data, err) < 0)
				die("%s", err);
		}
		if (vt_write_record(&out) < 0)
			die("%s", out.err);
	}
	for (int i = 0; i < n; i++) {
		fclose(fp[i]);
		free(rg[i].shape);
	}
	vt_free(&out);
}

static void
cmd_to_safetensors(const struct opts *o, int argc, char *argv[])
{
	struct vt ck;
	struct vit *m;
	struct st st;
	char err[512];

	if (o->nargs != 1)
		usage_error("to-safetensors: give one checkpoint");
	cli_binary_stdout(o->force);
	if ((m = ckpt_load(o->args[0], &ck, 1, 0, 0, err, sizeof err)) == NULL)
		die("%s", err);
	st_init(&st);
	if (timm_export(m, &ck, &st, err, sizeof err) < 0)
		die("%s: %s", o->args[0], err);
	if (st_write(&st, stdout, "stdout") < 0)
		die("%s", st.err);
	st_free(&st);
	vit_destroy(m);
	vt_free(&ck);
}

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
			put_text(e->t->name);
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
		put_text(e->why);	/* it may quote the file's names */
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

static void
cmd_from_safetensors(const struct opts *o, int argc, char *argv[])
{
	struct st st;
	struct timm_plan p;
	struct vt out;
	const char *name;
	uint64_t size;
	char err[512], *msg;
	FILE *fp;

	if (o->nargs > 1)
		usage_error("from-safetensors: one input at most");
	if (!o->list)
		cli_binary_stdout(o->force);
	fp = seekable(cli_open_in(o->nargs ? o->args[0] : NULL, &name), name, &size);
	if (st_read_header(&st, fp, name, size) < 0)
		die("%s", st.err);
	if (timm_plan(&p, &st, &o->timm, err, sizeof err) < 0)
		die("%s: %s", name, err);
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
	if (timm_load(&p, &st, err, sizeof err) < 0)
		die("%s", err);
	add_meta(o, &p.keys);
	vt_init(&out);
	if (ckpt_describe(&out, p.m, &p.keys, 0, err, sizeof err) < 0)
		die("%s: %s", name, err);
	out.records = 1;	/* a single-record container, as vt_save writes */
	begin_output(&out, argc, argv, o->force);
	if (vt_write_record(&out) < 0)
		die("%s", out.err);
	vt_free(&out);
done:
	timm_plan_free(&p);
	st_free(&st);
	if (fp != stdin)
		fclose(fp);
}

static const struct sub {
	const char *name;
	void	(*run)(const struct opts *o, int argc, char *argv[]);
	struct cli_cmd cmd;	/* about in lines of 59
				   columns (vtool --help indents them by 20) */
} subs[] = {
	{ "info", cmd_info, { "info [FILE]",
	    "fields, dtypes, shapes, metadata and the record count", no_opts, NULL } },
	{ "head", cmd_head, { "head [-n N] [FILE]",
	    "the first N records (default 10) as a stream", head_opts, NULL } },
	{ "cat", cmd_cat, { "cat [FILE...]",
	    "streams with identical fields, one after the other", cat_opts, NULL } },
	{ "to-npy", cmd_to_npy, { "to-npy [--ragged] DIR [FILE]",
	    "every field to DIR/NAME.npy, records along the first axis,\n"
	    "and the header's keys to DIR/" HEADER_JSON, to_npy_opts, NULL } },
	{ "from-npy", cmd_from_npy, {
	    "from-npy [--align N] [--meta KEY=VALUE]...\n"
	    "                [--shapes NAME=S.npy]... [--header FILE | --no-header]\n"
	    "                NAME=FILE.npy...",
	    "arrays with the same first dimension to records, with the\n"
	    "keys of " HEADER_JSON " beside the first array, if there is one",
	    from_npy_opts, NULL } },
	{ "to-safetensors", cmd_to_safetensors, { "to-safetensors CKPT",
	    "a checkpoint's weights as a safetensors file under timm's\n"
	    "names, its keys in __metadata__", to_safetensors_opts, NULL } },
	{ "from-safetensors", cmd_from_safetensors, {
	    "from-safetensors [--classes N] [--grid HxW] [--heads N] [--seed N]\n"
	    "                [--ignore-unknown] [--list] [--meta KEY=VALUE]... [FILE]",
	    "weights of timm's ViT or of to-safetensors to a checkpoint",
	    from_safetensors_opts, NULL } },
};
#define NSUB	(sizeof subs / sizeof subs[0])

/* vtool's own --help: every subcommand's synopsis and what it does. */
static struct cli_cmd top = { NULL, NULL, no_opts,
	"Options after a subcommand; 'vtool SUBCOMMAND --help' lists them." };

static void
top_help(void)
{
	char *syn, *about;
	size_t len;
	FILE *fp;

	if ((fp = open_memstream(&syn, &len)) == NULL)
		die_errno("open_memstream");
	for (size_t i = 0; i < NSUB; i++) {
		if (i > 0)
			fprintf(fp, "\n       %s ", progname);
		fprintf(fp, "%s", subs[i].cmd.synopsis);
	}
	fclose(fp);
	if ((fp = open_memstream(&about, &len)) == NULL)
		die_errno("open_memstream");
	fprintf(fp, "Inspect, cut, join and convert vitpipe streams (FILE '-' or none: stdin).");
	for (size_t i = 0; i < NSUB; i++) {
		fprintf(fp, "\n  %-18s", subs[i].name);
		for (const char *c = subs[i].cmd.about; *c; c++)
			if (*c == '\n')
				fprintf(fp, "\n%20s", "");
			else
				fputc(*c, fp);
	}
	fclose(fp);
	top.synopsis = syn;
	top.about = about;
}

/* The subcommand of argv and its options into o. */
static const struct sub *
parse_args(int argc, char *argv[], struct opts *o)
{
	const struct sub *sub;
	int64_t g[VIT_MAXAXES];
	int c, first = 1;

	/* Before the subcommand only --help and --version. */
	if (argc > 1 && argv[1][0] == '-') {
		top_help();
		cli_getopt(2, argv, &top);
		first = optind;
		free((char *)top.synopsis);
		free((char *)top.about);
	}
	if (first >= argc) {
		char names[128];
		size_t n = 0;
		for (size_t i = 0; i < NSUB; i++)
			n += snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "",
			    subs[i].name);
		usage_error("no subcommand (%s)", names);
	}
	for (sub = subs; sub < subs + NSUB && strcmp(argv[first], sub->name); sub++)
		;
	if (sub == subs + NSUB)
		usage_error("unknown subcommand '%s'", argv[first]);
	memset(o, 0, sizeof *o);
	o->lines = 10;
	o->align = VT_ALIGN;
	o->timm.seed = 1;
	optind = 0;	/* a new scan, of the words from the subcommand on */
	while ((c = cli_getopt(argc - first, argv + first, &sub->cmd)) != -1)
		switch (c) {
		case 'n': o->lines = cli_int("--lines", optarg, 0, INT64_MAX / 2); break;
		case OPT_RAGGED: o->ragged = 1; break;
		case OPT_ALIGN:
			o->align = cli_int("--align", optarg, 1, VT_MAXALIGN);
			if (o->align & (o->align - 1))
				usage_error("--align: %d is not a power of two", o->align);
			o->set_align = 1;
			break;
		case OPT_META:
			if (o->nmeta == MAXIN)
				usage_error("--meta: more than %d", MAXIN);
			if (!strchr(optarg, '=') || optarg[0] == '=')
				usage_error("--meta: '%s' is not KEY=VALUE", optarg);
			o->meta[o->nmeta++] = optarg;
			break;
		case OPT_SHAPES:
			if (o->nshapes == MAXIN)
				usage_error("--shapes: more than %d", MAXIN);
			if (!strchr(optarg, '=') || optarg[0] == '=')
				usage_error("--shapes: '%s' is not NAME=SHAPES.npy", optarg);
			o->shapes[o->nshapes++] = optarg;
			break;
		case OPT_FORCE: o->force = 1; break;
		case OPT_HEADER: o->header = optarg; break;
		case OPT_NO_HEADER: o->no_header = 1; break;
		case OPT_CLASSES: o->timm.classes = (int)cli_int("--classes", optarg, 1, 1 << 20); break;
		case OPT_GRID:
			o->timm.ngrid = vt_parse_dims(optarg, g, VIT_MAXAXES);
			for (int a = 0; a < o->timm.ngrid; a++)
				if (g[a] < 1 || g[a] > 1 << 16)
					o->timm.ngrid = -1;
			if (o->timm.ngrid < 1)
				usage_error("--grid: want HxW (or TxHxW), got '%s'", optarg);
			for (int a = 0; a < o->timm.ngrid; a++)
				o->timm.grid[a] = (int)g[a];
			break;
		case OPT_HEADS: o->timm.heads = (int)cli_int("--heads", optarg, 1, 65536); break;
		case OPT_SEED: o->timm.seed = cli_opt_seed(optarg); break;
		case OPT_IGNORE_UNKNOWN: o->timm.ignore_unknown = 1; break;
		case OPT_LIST: o->list = 1; break;
		}
	if (o->header && o->no_header)
		usage_error("--header and --no-header do not go together");
	o->args = argv + first + optind;
	o->nargs = argc - first - optind;
	return sub;
}

int
main(int argc, char *argv[])
{
	const struct sub *sub;
	struct opts o;
	char **orig;

	cli_init(argc, argv);
	/* getopt permutes argv; HISTORY records the command as typed. */
	if ((orig = malloc((argc + 1) * sizeof *orig)) == NULL)
		die("out of memory");
	memcpy(orig, argv, (argc + 1) * sizeof *orig);
	sub = parse_args(argc, argv, &o);
	sub->run(&o, argc, orig);
	free(orig);
	cli_close_out(stdout, "stdout");
	return 0;
}
