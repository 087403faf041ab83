/*
 * vtool - look into vitpipe streams, cut and join them, and convert them to
 * and from NumPy .npy arrays (vtool(1)), the header's keys, ALIGN and '*'
 * dims kept in DIR/header.json beside the arrays; and checkpoints to and
 * from safetensors files under timm's names (lib/model/timm.h).  The
 * options are here; each subcommand is a file of lib/cli (vtool.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cliopt.h"
#include "shapeopt.h"
#include "vtool.h"


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
	    "the keys from FILE, not the first array's " VTOOL_HEADER_JSON },
	{ "no-header", OPT_NO_HEADER, NULL, "no " VTOOL_HEADER_JSON ", only --meta keys" },
	OPTION_FORCE,
	OPTIONS_END
};

static const struct cli_opt to_safetensors_opts[] = { OPTION_FORCE, OPTIONS_END };

static const struct cli_opt from_safetensors_opts[] = {
	{ "classes", OPT_CLASSES, "N", "a new head of N classes (seeded) when the file's "
	    "has another number or none" },
	{ "grid", OPT_GRID, "HxW", "the token grid of the streams; the position table "
	    "is resampled to it (default: its own)" },
	SHAPE_OPT_HEADS(OPT_HEADS, "default: dim / 64"),
	{ "seed", OPT_SEED, "N", "seed of a new head (default 1)" },
	{ "ignore-unknown", OPT_IGNORE_UNKNOWN, NULL,
	    "skip the tensors it has no place for" },
	{ "list", OPT_LIST, NULL, "print what becomes of every tensor" },
	OPTION_META,
	OPTION_FORCE,
	OPTIONS_END
};

static const struct sub {
	const char *name;
	void	(*run)(const struct vtool_opts *o, int argc, char *argv[]);
	struct cli_cmd cmd;	/* about in lines of 59
				   columns (vtool --help indents them by 20) */
} subs[] = {
	{ "info", vtool_info, { "info [FILE]",
	    "fields, dtypes, shapes, metadata and the record count", no_opts, NULL } },
	{ "head", vtool_head, { "head [-n N] [FILE]",
	    "the first N records (default 10) as a stream", head_opts, NULL } },
	{ "cat", vtool_cat, { "cat [FILE...]",
	    "streams with identical fields, one after the other", cat_opts, NULL } },
	{ "to-npy", vtool_to_npy, { "to-npy [--ragged] DIR [FILE]",
	    "every field to DIR/NAME.npy, records along the first axis,\n"
	    "and the header's keys to DIR/" VTOOL_HEADER_JSON, to_npy_opts, NULL } },
	{ "from-npy", vtool_from_npy, {
	    "from-npy [--align N] [--meta KEY=VALUE]...\n"
	    "                [--shapes NAME=S.npy]... [--header FILE | --no-header]\n"
	    "                NAME=FILE.npy...",
	    "arrays with the same first dimension to records, with the\n"
	    "keys of " VTOOL_HEADER_JSON " beside the first array, if there is one",
	    from_npy_opts, NULL } },
	{ "to-safetensors", vtool_to_safetensors, { "to-safetensors CKPT",
	    "a checkpoint's weights as a safetensors file under timm's\n"
	    "names, its keys in __metadata__", to_safetensors_opts, NULL } },
	{ "from-safetensors", vtool_from_safetensors, {
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
parse_args(int argc, char *argv[], struct vtool_opts *o)
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
			if (o->nmeta == VTOOL_MAXIN)
				usage_error("--meta: more than %d", VTOOL_MAXIN);
			if (!strchr(optarg, '=') || optarg[0] == '=')
				usage_error("--meta: '%s' is not KEY=VALUE", optarg);
			o->meta[o->nmeta++] = optarg;
			break;
		case OPT_SHAPES:
			if (o->nshapes == VTOOL_MAXIN)
				usage_error("--shapes: more than %d", VTOOL_MAXIN);
			if (!strchr(optarg, '=') || optarg[0] == '=')
				usage_error("--shapes: '%s' is not NAME=SHAPES.npy", optarg);
			o->shapes[o->nshapes++] = optarg;
			break;
		case OPT_FORCE: o->force = 1; break;
		case OPT_HEADER: o->header = optarg; break;
		case OPT_NO_HEADER: o->no_header = 1; break;
		case OPT_CLASSES: o->timm.classes = shape_opt("classes", optarg); break;
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
		case OPT_HEADS: o->timm.heads = shape_opt("heads", optarg); break;
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
	struct vtool_opts o;
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
