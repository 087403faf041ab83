/*
 * skewgen - generator parameters of a position encoding, seeded, as a
 * single-record container (field pe.params and the PE header keys that
 * vit-train checkpoints carry too), or extracted from a checkpoint with
 * --from; see skewgen(1).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cliopt.h"
#include "pe.h"
#include "shapeopt.h"
#include "vt.h"

struct opts {
	char		 pe[sizeof ((struct pe *)0)->spec];	/* --pe spec */
	int		 head_dim, axes, heads, layers;
	const char	*share;
	struct pe_init	 init;
	const char	*from;		/* --from CHECKPOINT */
	const char	*out;		/* -o FILE, else stdout */
	int		 expand;	/* --expand: also pe.generators */
};

static const char *const init_names[] = { "default", "uniform", "normal", "zeros" };
static const char *const mult_names[] = { "default", "ones", "normal" };

enum { OPT_HEADS = CLI_OPT_LONG, OPT_LAYERS, OPT_SHARE, OPT_INIT, OPT_SCALE,
	OPT_STD, OPT_THETA, OPT_MULTIPLIERS, OPT_EXPAND, OPT_FROM };

/* Not const: main fills in --pe's help, the registry's rotary encodings. */
static struct cli_opt options[] = {
	{ "pe", 'p', "SPEC", NULL },
	{ "head-dim", 'd', "N", "head dimension (default 64)" },
	{ "axes", 'a', "N", "position axes, 1 .. 3 (default 2)" },
	SHAPE_OPT_HEADS(OPT_HEADS, "default 1"),
	{ "layers", OPT_LAYERS, "N", "layers (default 1)" },
	{ "share", OPT_SHARE, "WHAT", "none (default), heads, layers or all" },
	{ "init", OPT_INIT, "KIND", "default, uniform, normal or zeros" },
	{ "scale", OPT_SCALE, "S", "uniform: entries in [0, S) (default 2 pi)" },
	{ "std", OPT_STD, "S", "normal: standard deviation" },
	{ "theta", OPT_THETA, "T", "rope-mixed / riemann frequency base" },
	{ "multipliers", OPT_MULTIPLIERS, "M", "comrope-ld's: ones or normal (default: normal for\n"
	    "--init default, else ones)" },
	{ "seed", 's', "N", "seed (default 1)" },
	{ "expand", OPT_EXPAND, NULL, "also write the generator matrices (pe.generators)" },
	{ "from", OPT_FROM, "FILE", "copy the generators of a checkpoint or generator file" },
	{ "output", 'o', "FILE", "write FILE atomically instead of stdout" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd command = {
	"--pe SPEC [options]\n       skewgen --from CHECKPOINT [-o FILE]",
	"Write the generator parameters of a position encoding (field pe.params,\n"
	"header keys PE SHARE HEAD_DIM AXES HEADS LAYERS) as one record.",
	options, NULL
};

/* Index of arg among names[first .. n - 1], else a usage error: opt wants
 * the names in want. */
static int
pick(const char *opt, const char *arg, const char *const *names, int first, int n,
    const char *want)
{
	for (int k = first; k < n; k++)
		if (strcmp(arg, names[k]) == 0)
			return k;
	usage_error("%s %s: want %s", opt, arg, want);
}

/* Write s (one record in its fields) to o->out or stdout. */
static void
emit(const struct opts *o, struct vt *s)
{
	if (o->out) {
		if (vt_save(s, o->out) == -1)
			die("%s", s->err.msg);
		return;
	}
	cli_binary_stdout(0);
	s->records = 1;
	if (vt_write_header(s, stdout, "stdout") == -1 || vt_write_record(s) == -1)
		die("%s", s->err.msg);
	cli_close_out(stdout, "stdout");
}

/*
 * Field pe.generators f32 [nset][axes][nblock][b][b]: the A_i.  Also
 * written when there are no parameters (rope-axial, none, zeros), which
 * then have no pe.params field and would have an empty record.  With a
 * basis (pe.h) they are the generators in it, and pe.basis f32
 * [nset][head_dim][head_dim] the P: A_i = P G_i P^T.
 */
static void
add_generators(const struct pe *pe, const float *params, struct vt *out)
{
	if (pe->basis) {
		int64_t d = pe->head_dim;
		struct pe_work w;
		int b = vt_add_field(out, "pe.basis", VT_F32, 3, (int64_t[]){ pe->nset, d, d });
		if (b < 0 || pe_work_init(&w, pe, 1) == -1)
			die("%s", b < 0 ? out->err.msg : w.err.msg);
		pe_bases(pe, &w, params, out->field[b].data);
		pe_work_free(&w);
	}
	int64_t per = (int64_t)pe->axes * pe->nblock * pe->block * pe->block;
	int g = vt_add_field(out, "pe.generators", VT_F32, 5, (int64_t[]){ pe->nset, pe->axes,
	    pe->nblock, pe->block, pe->block });
	double *G = malloc(sizeof *G * per);

	if (g < 0 || !G)
		die("%s", g < 0 ? out->err.msg : "out of memory");
	for (int s = 0; s < pe->nset; s++) {
		float *gs = (float *)out->field[g].data + s * per;
		pe_generators(pe, params + s * pe->set_params, G);
		for (int64_t e = 0; e < per; e++)
			gs[e] = (float)G[e];
	}
	free(G);
}

/*
 * out with the PE keys and, when the method has parameters, the field
 * pe.params (an empty field would make an empty record); returns where
 * the parameters go.
 */
static float *
start(const struct pe *pe, struct vt *out)
{
	static float none[1];
	int i = -1;

	vt_init(out);
	if ((pe->nparam && (i = vt_add_field(out, PE_FIELD, VT_F32, 1, (int64_t[]){ pe->nparam })) < 0) ||
	    pe_meta_write(pe, out) == -1)
		die("%s", out->err.msg);
	return i < 0 ? none : out->field[i].data;
}

/* pe.params of a checkpoint or generator file, with its PE keys. */
static void
extract(const struct opts *o, int argc, char *argv[])
{
	struct vt in, out;
	struct pe pe;
	const float *params;

	if (vt_load_with(&in, o->from, pe_generators_only, NULL) == -1)
		die("%s", in.err.msg);
	if ((params = pe_load_params(&pe, &in)) == NULL)
		die("%s", pe.err.msg);
	float *p = start(&pe, &out);
	if (pe.nparam)
		memcpy(p, params, sizeof(float) * pe.nparam);
	else
		add_generators(&pe, params, &out);
	for (int k = 0; k < in.nmeta; k++)
		if (strcmp(in.meta[k].key, "HISTORY") == 0 && vt_meta_add(&out, "HISTORY", in.meta[k].val) == -1)
			die("%s", out.err.msg);
	if (vt_history(&out, argc, argv) == -1)
		die("%s", out.err.msg);
	emit(o, &out);
	vt_free(&in);
	vt_free(&out);
}

static void
generate(struct opts *o, int argc, char *argv[])
{
	struct pe pe;
	struct vt out;
	char v[128];

	if (pe_parse(&pe, o->pe, o->head_dim, o->axes, o->heads, o->layers, o->share) == -1)
		usage_error("%s", pe.err.msg);
	if (!pe.rotary)
		usage_error("--pe %s is not a rotary encoding: it has no generators", pe.spec);
	float *params = start(&pe, &out);
	if (pe_init_params(&pe, &o->init, params) == -1)
		usage_error("%s", pe.err.msg);	/* the options' combination */
	int n = snprintf(v, sizeof v, "%s seed=%llu", init_names[o->init.kind],
	    (unsigned long long)o->init.seed);
	if (o->init.kind == PE_INIT_NORMAL)
		n += snprintf(v + n, sizeof v - n, " std=%g", o->init.std);
	if (o->init.kind == PE_INIT_UNIFORM && o->init.scale > 0)
		n += snprintf(v + n, sizeof v - n, " scale=%g", o->init.scale);
	if (o->init.theta > 0)
		n += snprintf(v + n, sizeof v - n, " theta=%g", o->init.theta);
	if (o->init.multipliers != PE_MULT_DEFAULT)
		snprintf(v + n, sizeof v - n, " multipliers=%s", mult_names[o->init.multipliers]);
	if (vt_meta_set(&out, "INIT", v) == -1)
		die("%s", out.err.msg);
	if (o->expand || pe.nparam == 0)
		add_generators(&pe, params, &out);
	if (vt_history(&out, argc, argv) == -1)
		die("%s", out.err.msg);
	emit(o, &out);
	vt_free(&out);
}

int
main(int argc, char *argv[])
{
	struct opts o = { .head_dim = 64, .axes = 2, .heads = 1, .layers = 1, .share = "none",
	    .init = { .kind = PE_INIT_DEFAULT, .seed = 1 } };
	char pes[512];
	int c, shaped = 0, given_pe = 0;

	cli_init(argc, argv);
	pe_list(pes, sizeof pes, ", ", 1, 1, 23);	/* 23: the help column */
	options[0].help = pes;
	while ((c = cli_getopt(argc, argv, &command)) != -1) {
		switch (c) {
		case 'p': cli_opt_pe(optarg, o.pe, sizeof o.pe); given_pe = shaped = 1; break;
		case 'd': o.head_dim = (int)cli_int("--head-dim", optarg, 1, PE_MAXDIM); shaped = 1; break;
		case 'a': o.axes = (int)cli_int("--axes", optarg, 1, 3); shaped = 1; break;
		case OPT_HEADS: o.heads = shape_opt("heads", optarg); shaped = 1; break;
		case OPT_LAYERS: o.layers = shape_opt("layers", optarg); shaped = 1; break;
		case OPT_SHARE: o.share = pe_share_name(cli_opt_share(optarg)); shaped = 1; break;
		case OPT_INIT:
			o.init.kind = pick("--init", optarg, init_names, 0, 4,
			    "default, uniform, normal or zeros");
			shaped = 1;
			break;
		case OPT_SCALE: o.init.scale = cli_num("--scale", optarg, 1e-300, 1e300); shaped = 1; break;
		case OPT_STD: o.init.std = cli_num("--std", optarg, 1e-300, 1e300); shaped = 1; break;
		case OPT_THETA: o.init.theta = cli_num("--theta", optarg, 1e-300, 1e300); shaped = 1; break;
		case OPT_MULTIPLIERS:
			o.init.multipliers = pick("--multipliers", optarg, mult_names,
			    PE_MULT_ONES, PE_MULT_NORMAL + 1, "ones or normal");
			shaped = 1;
			break;
		case 's': o.init.seed = cli_opt_seed(optarg); shaped = 1; break;
		case OPT_EXPAND: o.expand = 1; shaped = 1; break;
		case OPT_FROM: o.from = optarg; break;
		case 'o': o.out = optarg; break;
		}
	}
	if (optind < argc)
		usage_error("unexpected operand '%s'", argv[optind]);
	if (o.from && shaped)
		usage_error("--from copies a file's generators: no --pe or other shape options");
	if (!o.from && !given_pe)
		usage_error("say --pe SPEC (or --from CHECKPOINT)");
	if (o.init.kind == PE_INIT_NORMAL && o.init.std == 0)
		usage_error("--init normal needs --std");
	if (o.init.std > 0 && o.init.kind != PE_INIT_NORMAL)
		usage_error("--std applies to --init normal");
	if (o.init.scale > 0 && o.init.kind != PE_INIT_UNIFORM)
		usage_error("--scale applies to --init uniform");
	if (o.from)
		extract(&o, argc, argv);
	else
		generate(&o, argc, argv);
	return 0;
}
