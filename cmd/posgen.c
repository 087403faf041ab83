/*
 * posgen - token positions (field pos) for a patch grid, under a named
 * convention, with ComRoPE's augmentations; see posgen(1).
 *
 * Reads a stream whose header has GRID and passes every record through
 * with pos added, or writes the positions of --grid on their own.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cliopt.h"
#include "pe_conv.h"
#include "rng.h"
#include "vt.h"
#include "vtcopy.h"

struct opts {
	const char	*grid;		/* --grid: build, don't read */
	int		 conv;		/* enum pe_conv_kind */
	const char	*n0;		/* --n0: LieRE's training grid */
	double		 lo, hi;	/* --range of the fixed convention */
	const char	*cls;		/* --cls: none, centre or coordinates */
	double		 perturb;	/* --perturb sigma, in patch sizes */
	double		 offset;	/* --offset rho */
	uint64_t	 seed;
	int64_t		 records;	/* --records, with --grid */
};

/* The grid and what every record shares. */
struct layout {
	struct pe_conv c;	/* the convention on the grid, (t,) y, x */
	int64_t	 T;		/* tokens */
	double	*base;		/* [T][axes]: unperturbed positions */
	double	 step[3];	/* patch size per axis, in position units */
	int	 hascls;	/* the CLS token has a position, cls */
	double	 cls[3];
};

enum { OPT_N0 = CLI_OPT_LONG, OPT_RANGE, OPT_CLS, OPT_PERTURB, OPT_OFFSET };

static const struct cli_opt options[] = {
	{ "grid", 'g', "DIMS", "build from this grid instead of reading a stream" },
	{ "convention", 'c', "NAME", "integer (RoPE-ViT), linspace (LieRE code: 0 .. n/n0,\n"
	    "default), centre (ComRoPE: (i + 0.5)/n), fixed" },
	{ "n0", OPT_N0, "DIMS", "linspace: the training grid (default: the grid)" },
	{ "range", OPT_RANGE, "LO,HI", "fixed: every axis from LO to HI (default 0,1)" },
	{ "cls", OPT_CLS, "WHAT", "CLS token: none (not rotated, default), centre,\n"
	    "or coordinates such as 0.5,0.5" },
	{ "perturb", OPT_PERTURB, "SIGMA", "ComRoPE perturbation: normal, std SIGMA patch sizes,\n"
	    "truncated to the patch" },
	{ "offset", OPT_OFFSET, "RHO", "add one normal(0, RHO^2) offset per axis to every\n"
	    "token of a record" },
	{ "seed", 's', "N", "seed of the augmentations (default 1)" },
	{ "records", 'n', "N", "with --grid: records to write (default 1)" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd command = {
	"[options] [FILE]\n       posgen --grid DIMS [options]",
	"Add token positions (field pos) to a patch stream whose header has GRID,\n"
	"or write the positions of the grid DIMS (7x7, 4x14x14).",
	options, NULL
};

/* Dims "7x7" (count must be axes, or 1 for every axis) into v[]. */
static void
parse_n0(const char *s, int axes, double *v)
{
	int64_t g[3];
	int n = vt_parse_dims(s, g, 3);

	if (n != axes && n != 1)
		usage_error("--n0 %s: want %d dims like the grid, or one number", s, axes);
	for (int a = 0; a < axes; a++)
		v[a] = (double)g[n == 1 ? 0 : a];
}

/* --cls into L->hascls, L->cls (the convention on its grid known). */
static void
cls_layout(const struct opts *o, struct layout *L)
{
	const struct pe_conv *c = &L->c;

	if (!o->cls || strcmp(o->cls, "none") == 0)
		return;
	L->hascls = 1;
	if (strcmp(o->cls, "centre") == 0 || strcmp(o->cls, "center") == 0) {
		for (int a = 0; a < c->axes; a++)
			L->cls[a] = (pe_conv_coord(c, a, 0) +
			    pe_conv_coord(c, a, c->grid[a] - 1)) / 2;
		return;
	}
	char *copy = strdup(o->cls), *save, *tok;
	int count = 0;
	if (copy == NULL)
		die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save), count++)
		if (count < c->axes)
			L->cls[count] = cli_num("--cls", tok, -1e9, 1e9);
	free(copy);
	if (count != c->axes)
		usage_error("--cls %s: want none, centre or %d coordinates", o->cls, c->axes);
}

static void
make_layout(const struct opts *o, const char *grid, const char *where, struct layout *L)
{
	struct pe_conv *c = &L->c;
	int64_t T = 1;

	memset(L, 0, sizeof *L);
	c->kind = o->conv;
	c->lo = o->lo;
	c->hi = o->hi;
	c->axes = vt_parse_dims(grid, c->grid, 3);
	if (c->axes < 1)
		die("%s: grid '%s': want dims like 7x7 or 4x14x14", where, grid);
	for (int a = 0; a < c->axes; a++) {
		if (c->grid[a] < 1 || c->grid[a] > (1 << 20))
			die("%s: grid '%s': dims must be 1 .. %d", where, grid, 1 << 20);
		T *= c->grid[a];
		if (T > (1 << 24))
			die("%s: grid '%s': more than %d tokens", where, grid, 1 << 24);
		c->n0[a] = (double)c->grid[a];
	}
	L->T = T;
	if (o->n0)
		parse_n0(o->n0, c->axes, c->n0);
	if ((L->base = malloc(sizeof *L->base * T * c->axes)) == NULL)
		die("out of memory");
	for (int64_t t = 0; t < T; t++) {
		int64_t r = t;
		for (int a = c->axes - 1; a >= 0; a--) {	/* x fastest */
			L->base[t * c->axes + a] = pe_conv_coord(c, a, r % c->grid[a]);
			r /= c->grid[a];
		}
	}
	for (int a = 0; a < c->axes; a++)
		L->step[a] = pe_conv_step(c, a);
	cls_layout(o, L);
}

/* pos for record number rec: base, perturbed, offset; and its CLS's
 * position, moved by the same offset (cls: NULL when not written). */
static void
fill_positions(const struct opts *o, const struct layout *L, int64_t rec, float *pos,
    float *cls)
{
	struct rng r;
	double off[3] = { 0, 0, 0 };

	rng_seed(&r, o->seed, (uint64_t)rec);
	if (o->offset > 0)
		for (int a = 0; a < L->c.axes; a++)
			off[a] = o->offset * rng_normal(&r);
	for (int64_t k = 0; k < L->T * L->c.axes; k++) {
		int a = (int)(k % L->c.axes);
		double z = 0;
		if (o->perturb > 0)		/* truncated to the patch */
			do
				z = o->perturb * rng_normal(&r);
			while (fabs(z) > 0.5);
		pos[k] = (float)(L->base[k] + z * L->step[a] + off[a]);
	}
	for (int a = 0; cls != NULL && a < L->c.axes; a++)
		cls[a] = (float)(L->cls[a] + off[a]);
}

/* The field clspos [axes] when records move a positioned CLS (--offset):
 * its index in s, or -1 when there is none. */
static int
add_clspos(const struct opts *o, const struct layout *L, struct vt *s)
{
	int i = -1;

	if (L->hascls && o->offset > 0 &&
	    (i = vt_add_field(s, "clspos", VT_F32, 1, (int64_t[]){ L->c.axes })) < 0)
		die("%s", s->err.msg);
	return i;
}

/* Header keys POS (the convention on its grid, then the augmentations)
 * and CLSPOS. */
static void
describe(const struct opts *o, const struct layout *L, struct vt *s)
{
	char v[512];
	int n = pe_conv_format(&L->c, v, sizeof v);

	if (o->perturb > 0)
		n += snprintf(v + n, sizeof v - n, " perturb=%g", o->perturb);
	if (o->offset > 0)
		n += snprintf(v + n, sizeof v - n, " offset=%g", o->offset);
	if (o->perturb > 0 || o->offset > 0)
		snprintf(v + n, sizeof v - n, " seed=%llu", (unsigned long long)o->seed);
	if (vt_meta_set(s, "POS", v) == -1)
		die("%s", s->err.msg);

	n = 0;
	for (int a = 0; L->hascls && a < L->c.axes; a++)
		n += snprintf(v + n, sizeof v - n, "%s%.9g", a ? "," : "", L->cls[a]);
	if (!L->hascls)
		snprintf(v, sizeof v, "none");
	if (vt_meta_set(s, "CLSPOS", v) == -1)
		die("%s", s->err.msg);
}

static void
build(const struct opts *o, int argc, char *argv[])
{
	struct layout L;
	struct vt out;
	int i;

	make_layout(o, o->grid, "--grid", &L);
	vt_init(&out);
	i = vt_add_field(&out, "pos", VT_F32, 2, (int64_t[]){ L.T, L.c.axes });
	if (i < 0 || vt_meta_set(&out, "GRID", o->grid) == -1)
		die("%s", out.err.msg);
	int ic = add_clspos(o, &L, &out);
	describe(o, &L, &out);
	out.records = o->records;
	if (vt_history(&out, argc, argv) == -1 || vt_write_header(&out, stdout, "stdout") == -1)
		die("%s", out.err.msg);
	for (int64_t r = 0; r < o->records; r++) {
		fill_positions(o, &L, r, out.field[i].data,
		    ic >= 0 ? out.field[ic].data : NULL);
		if (vt_write_record(&out) == -1)
			die("%s", out.err.msg);
	}
	vt_free(&out);
	free(L.base);
}

static void
filter(const struct opts *o, const char *path, int argc, char *argv[])
{
	struct layout L;
	struct vt in, out;
	const char *name, *grid;
	FILE *fp = cli_open_in(path, &name);
	int i, r, patch;

	vt_init(&in);
	if (vt_read_header(&in, fp, name) == -1)
		die("%s", in.err.msg);
	if ((grid = vt_meta(&in, "GRID")) == NULL)
		die("%s: no GRID in the header: say the grid with --grid", name);
	if (vt_find(&in, "pos") >= 0)
		die("%s: the stream already has a pos field (POS %s)", name,
		    vt_meta(&in, "POS") ? vt_meta(&in, "POS") : "?");
	make_layout(o, grid, name, &L);
	patch = vt_find(&in, "patch");
	vt_init(&out);
	if (vt_copy_header(&out, &in) == -1 ||
	    (i = vt_add_field(&out, "pos", VT_F32, 2, (int64_t[]){ L.T, L.c.axes })) < 0)
		die("%s", out.err.msg);
	if (vt_find(&in, "clspos") >= 0)
		die("%s: the stream already has a clspos field", name);
	int ic = add_clspos(o, &L, &out);
	describe(o, &L, &out);
	if (vt_history(&out, argc, argv) == -1 || vt_write_header(&out, stdout, "stdout") == -1)
		die("%s", out.err.msg);
	while ((r = vt_read_record(&in)) == 1) {
		if (patch >= 0 && in.field[patch].rank > 0 && in.field[patch].shape[0] != L.T)
			die("%s: record %lld: %lld patch tokens, but GRID %s has %lld", name,
			    (long long)in.recno, (long long)in.field[patch].shape[0], grid, (long long)L.T);
		if (vt_copy_record(&out, &in) == -1)
			die("%s", out.err.msg);
		fill_positions(o, &L, in.recno - 1, out.field[i].data,
		    ic >= 0 ? out.field[ic].data : NULL);
		if (vt_write_record(&out) == -1)
			die("%s", out.err.msg);
	}
	if (r == -1)
		die("%s", in.err.msg);
	if (fp != stdin)
		fclose(fp);
	vt_free(&in);
	vt_free(&out);
	free(L.base);
}

int
main(int argc, char *argv[])
{
	struct opts o = { .conv = PE_CONV_LINSPACE, .hi = 1, .seed = 1, .records = 1 };
	int c, nrecords = 0;

	cli_init(argc, argv);
	while ((c = cli_getopt(argc, argv, &command)) != -1) {
		switch (c) {
		case 'g':
			o.grid = optarg;
			break;
		case 'c':
			if ((o.conv = pe_conv_parse_name(optarg)) < 0)
				usage_error("--convention %s: want integer, linspace, centre or fixed", optarg);
			break;
		case OPT_N0:
			o.n0 = optarg;
			break;
		case OPT_RANGE: {
			char *comma = strchr(optarg, ',');
			if (!comma)
				usage_error("--range %s: want LO,HI", optarg);
			*comma = '\0';
			o.lo = cli_num("--range", optarg, -1e9, 1e9);
			o.hi = cli_num("--range", comma + 1, -1e9, 1e9);
			if (!(o.hi > o.lo))
				usage_error("--range: HI must be above LO");
			break;
		}
		case OPT_CLS:
			o.cls = optarg;
			break;
		case OPT_PERTURB:
			o.perturb = cli_num("--perturb", optarg, 0, 100);
			break;
		case OPT_OFFSET:
			o.offset = cli_num("--offset", optarg, 0, 1e6);
			break;
		case 's':
			o.seed = cli_opt_seed(optarg);
			break;
		case 'n':
			o.records = cli_int("--records", optarg, 1, 1LL << 40);
			nrecords = 1;
			break;
		}
	}
	if (o.n0 && o.conv != PE_CONV_LINSPACE)
		usage_error("--n0 applies to --convention linspace");
	if (o.grid) {
		int64_t g[3];
		int n = vt_parse_dims(o.grid, g, 3);
		for (int a = 0; a < n; a++)
			if (g[a] < 1 || g[a] > (1 << 20))
				n = -1;
		if (n < 1)
			usage_error("--grid %s: want dims like 7x7 or 4x14x14, each 1 .. %d",
			    o.grid, 1 << 20);
	}
	if (o.grid && argc - optind > 0)
		usage_error("--grid builds positions: no input FILE");
	if (!o.grid && nrecords)
		usage_error("--records applies to --grid");
	if (argc - optind > 1)
		usage_error("one input FILE at most");
	cli_binary_stdout(0);
	if (o.grid)
		build(&o, argc, argv);
	else
		filter(&o, optind < argc ? argv[optind] : NULL, argc, argv);
	cli_close_out(stdout, "stdout");
	return 0;
}
