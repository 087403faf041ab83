/*
 * vtool - look into vitpipe streams, cut and join them, and convert them to
 * and from NumPy .npy arrays (vtool(1)).
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomicfile.h"
#include "cli.h"
#include "npy.h"
#include "vt.h"
#include "vtcopy.h"

#define MAXIN	1024		/* streams for cat, arrays for from-npy */

struct opts {
	const char	*cmd;		/* info head cat to-npy from-npy */
	long long	 lines;		/* head: records to keep */
	int		 align;		/* from-npy: ALIGN of the stream */
	int		 ragged;	/* to-npy: '*' fields flat + shapes */
	int		 force;		/* binary output to a terminal */
	const char	*meta[MAXIN];	/* from-npy: KEY=VALUE */
	int		 nmeta;
	const char	*shapes[MAXIN];	/* from-npy: NAME=SHAPES.npy */
	int		 nshapes;
	int		 set_lines, set_align;
	char		**args;		/* operands after the subcommand */
	int		 nargs;
};

static void
usage(void)
{
	printf("usage: %s info [FILE]\n"
	    "       %s head [-n N] [FILE]\n"
	    "       %s cat [FILE...]\n"
	    "       %s to-npy [--ragged] DIR [FILE]\n"
	    "       %s from-npy [--align N] [--meta KEY=VALUE]... [--shapes NAME=S.npy]...\n"
	    "                NAME=FILE.npy...\n"
	    "Inspect, cut, join and convert vitpipe streams (FILE '-' or none: stdin).\n"
	    "  info        fields, dtypes, shapes, metadata and the record count\n"
	    "  head        the first N records (default 10) as a stream\n"
	    "  cat         streams with identical fields, one after the other\n"
	    "  to-npy      every field to DIR/NAME.npy, records along the first axis\n"
	    "  from-npy    arrays with the same first dimension to records\n"
	    "  -n, --lines N     head: records to keep\n"
	    "  --ragged          to-npy: write '*' fields flat with NAME.shapes.npy\n"
	    "  --align N         from-npy: ALIGN of the stream (default 64)\n"
	    "  --meta KEY=VALUE  from-npy: a header line KEY VALUE (repeatable)\n"
	    "  --shapes NAME=S.npy  from-npy: NAME's array is flat, S.npy [N][rank]\n"
	    "                    its records' shapes (as to-npy --ragged writes)\n"
	    "  --force           write a stream even to a terminal\n"
	    "  --help, --version\n", progname, progname, progname, progname, progname);
	exit(0);
}

static void
parse_args(int argc, char *argv[], struct opts *o)
{
	static const struct option lo[] = {
		{ "lines", required_argument, NULL, 'n' },
		{ "ragged", no_argument, NULL, 'r' },
		{ "align", required_argument, NULL, 'a' },
		{ "meta", required_argument, NULL, 'm' },
		{ "shapes", required_argument, NULL, 's' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const cmds[] = { "info", "head", "cat", "to-npy", "from-npy" };
	int ch;
	size_t i;

	memset(o, 0, sizeof *o);
	o->lines = 10;
	o->align = VT_ALIGN;
	while ((ch = getopt_long(argc, argv, "n:", lo, NULL)) != -1) {
		switch (ch) {
		case 'n':
			o->lines = cli_int("--lines", optarg, 0, INT64_MAX / 2);
			o->set_lines = 1;
			break;
		case 'r': o->ragged = 1; break;
		case 'a':
			o->align = cli_int("--align", optarg, 1, VT_MAXALIGN);
			if (o->align & (o->align - 1))
				usage_error("--align: %d is not a power of two", o->align);
			o->set_align = 1;
			break;
		case 'm':
			if (o->nmeta == MAXIN)
				usage_error("--meta: more than %d", MAXIN);
			if (!strchr(optarg, '=') || optarg[0] == '=')
				usage_error("--meta: '%s' is not KEY=VALUE", optarg);
			o->meta[o->nmeta++] = optarg;
			break;
		case 's':
			if (o->nshapes == MAXIN)
				usage_error("--shapes: more than %d", MAXIN);
			if (!strchr(optarg, '=') || optarg[0] == '=')
				usage_error("--shapes: '%s' is not NAME=SHAPES.npy", optarg);
			o->shapes[o->nshapes++] = optarg;
			break;
		case 'f': o->force = 1; break;
		case 'h': usage(); break;
		case 'V': cli_version(); break;
		default: usage_error("unknown option");
		}
	}
	if (optind == argc)
		usage_error("no subcommand (info, head, cat, to-npy, from-npy)");
	o->cmd = argv[optind];
	o->args = argv + optind + 1;
	o->nargs = argc - optind - 1;
	for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (strcmp(o->cmd, cmds[i]) == 0)
			break;
	if (i == sizeof cmds / sizeof cmds[0])
		usage_error("unknown subcommand '%s'", o->cmd);
	if (o->set_lines && strcmp(o->cmd, "head"))
		usage_error("-n is for head");
	if (o->ragged && strcmp(o->cmd, "to-npy"))
		usage_error("--ragged is for to-npy");
	if ((o->set_align || o->nmeta || o->nshapes) && strcmp(o->cmd, "from-npy"))
		usage_error("--align, --meta and --shapes are for from-npy");
}

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

static void
cmd_info(const struct opts *o)
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
	printf("stream   %s\nalign    %d\nrecords  %lld", s.name, s.align, (long long)s.recno);
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
	for (int i = 0; i < s.nmeta; i++)
		printf("meta     %s %s\n", s.meta[i].key, s.meta[i].val);
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
				warnx("%s: %s differs from %s's; keeping the first stream's",
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

static void
cmd_to_npy(const struct opts *o)
{
	struct vt s;
	struct npyout *data[VT_MAXFIELDS], *shapes[VT_MAXFIELDS];
	int64_t first[VT_MAXFIELDS][VT_MAXRANK];
	int var[VT_MAXFIELDS], r;
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

		var[i] = 0;
		for (int k = 0; k < f->rank; k++) {
			var[i] |= f->dim[k] == VT_ANY;
			/* No record: '*' dims become 0. */
			first[i][k] = r ? f->shape[k] : f->dim[k] == VT_ANY ? 0 : f->dim[k];
		}
		if (f->rank + 1 > NPY_MAXRANK && !(o->ragged && var[i]))
			die("%s: field '%s' has %d dims; .npy holds %d with the record axis",
			    s.name, f->name, f->rank, NPY_MAXRANK);
		if (o->ragged && var[i]) {
			data[i] = npy_begin(dir, f->name, "", f->dtype, 0, NULL);
			shapes[i] = npy_begin(dir, f->name, ".shapes", VT_I64, 1, &rank1);
		} else
			data[i] = npy_begin(dir, f->name, "", f->dtype, f->rank, first[i]);
	}
	for (; r == 1; r = vt_read_record(&s)) {
		for (int i = 0; i < s.nfield; i++) {
			struct vt_field *f = &s.field[i];

			if (o->ragged && var[i]) {
				npy_put(data[i], f->data, f->nbytes, f->count);
				npy_put(shapes[i], f->shape, f->rank * sizeof(int64_t), 1);
				continue;
			}
			if (var[i] && memcmp(f->shape, first[i], f->rank * sizeof(int64_t)))
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
	close_stream(&s);
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

static void
cmd_from_npy(const struct opts *o, int argc, char *argv[])
{
	static struct npy h[MAXIN];
	static FILE *fp[MAXIN];
	static const char *path[MAXIN];
	static struct ragged rg[MAXIN];
	int used[MAXIN] = { 0 };
	struct vt out;
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
		if ((fp[i] = fopen(path[i], "rb")) == NULL)
			die_errno("%s", path[i]);
		if (npy_read_header(&h[i], fp[i], path[i], err) < 0)
			die("%s", err);
		for (j = 0; j < o->nshapes; j++)
			if (strncmp(o->shapes[j], name, strlen(name)) == 0 &&
			    o->shapes[j][strlen(name)] == '=')
				break;
		if (j < o->nshapes) {
			used[j] = 1;
			load_shapes(o->shapes[j], &h[i], path[i], &rg[i], dims);
			records = rg[i].n;
			rank = rg[i].rank;
		} else {
			if (h[i].rank < 1)
				die("%s: a 0-d array has no record axis", path[i]);
			records = h[i].shape[0];
			rank = h[i].rank - 1;
			memcpy(dims, h[i].shape + 1, rank * sizeof *dims);
		}
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
	for (int m = 0; m < o->nmeta; m++) {
		char *kv = strdup(o->meta[m]), *eq;

		if (!kv)
			die("out of memory");
		eq = strchr(kv, '=');
		*eq = 0;
		if (vt_meta_add(&out, kv, eq + 1) < 0)
			usage_error("--meta: %s", out.err);
		free(kv);
	}
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
			}
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

int
main(int argc, char *argv[])
{
	struct opts o;
	char **orig;

	cli_init(argc, argv);
	/* getopt permutes argv; HISTORY records the command as typed. */
	if ((orig = malloc((argc + 1) * sizeof *orig)) == NULL)
		die("out of memory");
	memcpy(orig, argv, (argc + 1) * sizeof *orig);
	parse_args(argc, argv, &o);
	if (strcmp(o.cmd, "info") == 0)
		cmd_info(&o);
	else if (strcmp(o.cmd, "head") == 0)
		cmd_head(&o, argc, orig);
	else if (strcmp(o.cmd, "cat") == 0)
		cmd_cat(&o, argc, orig);
	else if (strcmp(o.cmd, "to-npy") == 0)
		cmd_to_npy(&o);
	else
		cmd_from_npy(&o, argc, orig);
	free(orig);
	cli_close_out(stdout, "stdout");
	return 0;
}
