/*
 * flops - parameters and multiply-accumulates of a ViT, per component, for
 * one or several position encodings (flops(1)).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cliopt.h"
#include "flops.h"
#include "pe.h"
#include "shapeopt.h"
#include "vit.h"
#include "vt.h"

#define MAXPE	32

struct opts {
	struct vit_config c;
	const char	*model;		/* checkpoint, or NULL */
	char		*pes[MAXPE];	/* --pe arguments */
	int		 npes;
	int		 tokens;	/* patch tokens, 0: the grid's */
	int		 batch;		/* records sharing positions */
	int		 patch[3], npatch, channels;
	int		 count;		/* enum flops_count */
	int		 json;
	int		 shaped;	/* an option that --model would give */
};

/* Keys: first the options whose values --model gives. */
enum { OPT_PRESET = CLI_OPT_LONG, OPT_DIM, OPT_DEPTH, OPT_HEADS, OPT_MLP,
	OPT_CLASSES, OPT_PATCH, OPT_CHANNELS, OPT_GRID, OPT_SHARE, OPT_LOCALITY,
	OPT_POOL, OPT_CLS_ROTATE, OPT_TOKENS, OPT_PE, OPT_COUNT, OPT_BATCH,
	OPT_MODEL, OPT_JSON };

static char pe_help[512];	/* --pe's, with the registered encodings */

static const struct cli_opt options[] = {
	{ "preset", OPT_PRESET, "NAME", "tiny, small, base, large or cifar (default tiny)" },
	SHAPE_OPTS(OPT_DIM, "default: the preset's"),
	{ "classes", OPT_CLASSES, "N", "classifier outputs (default 10)" },
	{ "patch", OPT_PATCH, "PxP", "patch (or TxPxP tubelet) size (default 4x4)" },
	{ "channels", OPT_CHANNELS, "N", "image channels (default 3)" },
	{ "grid", OPT_GRID, "GxG", "token grid (default 8x8); sets the axes" },
	{ "tokens", OPT_TOKENS, "N", "patch tokens instead of the grid's product" },
	{ "pe", OPT_PE, "SPEC[,SPEC]", pe_help },
	{ "share", OPT_SHARE, "S", "rotary generators: none heads layers all (none)" },
	{ "locality", OPT_LOCALITY, NULL, "RiemannFormer locality focusing" },
	{ "pool", OPT_POOL, "cls|mean", "pooling before the head (default cls)" },
	{ "cls-rotate", OPT_CLS_ROTATE, NULL, "the CLS token has a position and is rotated" },
	{ "count", OPT_COUNT, "full|paper",
	    "counting convention (default full; see flops(1))" },
	{ "batch", OPT_BATCH, "N", "records sharing one position set (default 1)" },
	{ "model", OPT_MODEL, "FILE", "read the configuration from a vit-train checkpoint" },
	{ "json", OPT_JSON, NULL, "one JSON object instead of the table" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd command = {
	"[options]",
	"Parameters and multiply-accumulates of a ViT's forward pass, per component.",
	options, NULL
};

static char all_pes[512];	/* --pe all: pe_examples */

/* Whether spec is one of --pe all's encodings (and all was given). */
static int
in_all(const char *spec)
{
	size_t len = strlen(spec);

	for (const char *p = all_pes; (p = strstr(p, spec)) != NULL; p += len)
		if ((p == all_pes || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
			return 1;
	return 0;
}

/* Sizes like 4x4 or 2x16x16 into out[max], each 1..hi; returns how many. */
static int
parse_sizes(const char *opt, const char *arg, int *out, int max, int hi)
{
	int64_t g[VIT_MAXAXES > 3 ? VIT_MAXAXES : 3];
	int n = vt_parse_dims(arg, g, max);

	if (n < 1)
		usage_error("%s: '%s' is not a size like 8x8 or 4x7x7 (at most %d)", opt, arg, max);
	for (int i = 0; i < n; i++) {
		if (g[i] < 1 || g[i] > hi)
			usage_error("%s: '%s': sizes must be 1..%d", opt, arg, hi);
		out[i] = (int)g[i];
	}
	return n;
}

static void
parse_args(int argc, char *argv[], struct opts *o)
{
	struct vit_config *c = &o->c;
	int ch, n;

	memset(o, 0, sizeof *o);
	vit_config_init(c);
	o->patch[0] = o->patch[1] = 4;
	o->npatch = 2;
	o->channels = 3;
	o->batch = 1;
	n = snprintf(pe_help, sizeof pe_help, "encodings, or 'all':\n");
	pe_list(pe_help + n, sizeof pe_help - n, " ", 0, 0, 0);
	snprintf(pe_help + strlen(pe_help), sizeof pe_help - strlen(pe_help),
	    "\n(repeatable; default vit-train's or the checkpoint's)");
	while ((ch = cli_getopt(argc, argv, &command)) != -1) {
		if (ch >= OPT_PRESET && ch <= OPT_CLS_ROTATE)
			o->shaped = 1;
		switch (ch) {
		case OPT_PRESET:
			if (vit_preset(c, optarg) < 0)
				usage_error("--preset: unknown preset '%s' (tiny small base large cifar)", optarg);
			break;
		case OPT_DIM: c->dim = shape_opt("dim", optarg); break;
		case OPT_DEPTH: c->depth = shape_opt("depth", optarg); break;
		case OPT_HEADS: c->heads = shape_opt("heads", optarg); break;
		case OPT_MLP: c->mlp = shape_opt("mlp", optarg); break;
		case OPT_CLASSES: c->classes = shape_opt("classes", optarg); break;
		case OPT_CHANNELS: o->channels = cli_int("--channels", optarg, 1, 1024); break;
		case OPT_TOKENS: o->tokens = cli_int("--tokens", optarg, 1, 1 << 20); break;
		case OPT_PATCH: o->npatch = parse_sizes("--patch", optarg, o->patch, 3, 4096); break;
		case OPT_GRID: c->axes = parse_sizes("--grid", optarg, c->grid, VIT_MAXAXES, 65536); break;
		case OPT_PE:
			if (o->npes == MAXPE)
				usage_error("--pe: more than %d", MAXPE);
			if (strcmp(optarg, "all") == 0 && !all_pes[0])
				pe_examples(all_pes, sizeof all_pes);
			o->pes[o->npes++] = strcmp(optarg, "all") ? optarg : all_pes;
			break;
		case OPT_SHARE: c->share = cli_opt_share(optarg); break;
		case OPT_LOCALITY: c->locality = 1; break;
		case OPT_CLS_ROTATE: c->cls_rotate = 1; break;
		case OPT_POOL: c->pool = cli_opt_pool(optarg); break;
		case OPT_COUNT:
			if (strcmp(optarg, "full") && strcmp(optarg, "paper"))
				usage_error("--count: '%s' is not full or paper", optarg);
			o->count = strcmp(optarg, "paper") == 0 ? FLOPS_PAPER : FLOPS_FULL;
			break;
		case OPT_MODEL: o->model = optarg; break;
		case OPT_JSON: o->json = 1; break;
		case OPT_BATCH: o->batch = cli_int("--batch", optarg, 1, 1 << 20); break;
		}
	}
	if (optind < argc)
		usage_error("unexpected operand '%s'", argv[optind]);
	if (o->model && o->shaped)
		usage_error("--model: the model comes from the checkpoint; give only --tokens, --pe, --count, --batch or --json");
	if (!o->model && o->c.dim % o->c.heads != 0)	/* as vit-train says it */
		usage_error("--dim %d is not a multiple of --heads %d", o->c.dim, o->c.heads);
}

/* For vt_load_with: the keys alone. */
static int
keys_only(struct vt *s, void *unused)
{
	for (int i = 0; i < s->nfield; i++)
		vt_skip(s, i);
	return 0;
}

/* The configuration a checkpoint was trained with (its VIT_* keys). */
static void
load_model(struct opts *o)
{
	struct vt s;
	struct err e;

	if (vt_load_with(&s, o->model, keys_only, NULL) < 0)
		die("%s", s.err.msg);
	if (vit_config_load(&o->c, &s, &e) < 0)
		die("%s: %s", o->model, e.msg);
	vt_free(&s);
}

/* The encodings of every --pe, split at commas; a piece that names no
 * encoding (theta=10, reflect, tied, official) is an option of the spec
 * before it.  Returns the count; *buf holds the strings. */
static int
split_pes(const struct opts *o, const char **list, char **buf)
{
	size_t len = 1;
	char *p, *save = NULL;
	int n = 0;

	for (int i = 0; i < o->npes; i++)
		len += strlen(o->pes[i]) + 1;
	if (o->npes == 0)
		len += strlen(o->c.pe);
	if ((*buf = p = calloc(1, len)) == NULL)
		die("out of memory");
	for (int i = 0; i < o->npes; i++)
		p += sprintf(p, "%s%s", i ? "," : "", o->pes[i]);
	if (o->npes == 0)
		strcpy(p, o->c.pe);
	for (p = strtok_r(*buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		if (n > 0 && !pe_known(p)) {
			p[-1] = ',';	/* glue the option back onto its spec */
			continue;
		}
		if (n == MAXPE)
			usage_error("--pe: more than %d encodings", MAXPE);
		list[n++] = p;
	}
	if (n == 0)
		usage_error("--pe: no encoding given");
	for (int i = 0; i < n; i++)
		if (strlen(list[i]) >= VIT_PESPEC)
			usage_error("--pe: '%s' is too long", list[i]);
	return n;
}

static int
tokens_of(const struct opts *o)
{
	long long t = 1;
	int i;

	if (o->tokens)
		return o->tokens;
	for (i = 0; i < o->c.axes; i++)
		t *= o->c.grid[i];
	if (t > 1 << 20)
		usage_error("--grid: more than %d tokens", 1 << 20);
	return (int)t;
}

static void
count(const struct vit_config *c, int T, int batch, int conv, struct flops *f)
{
	struct err e;

	if (flops_model(c, T, batch, conv, f, &e) < 0)
		die("%s", e.msg);
}

static void
print_breakdown(const struct flops *f, double pct)
{
	int i;

	printf("%-30s %15s %18s\n", "component", "params", "MACs");
	for (i = 0; i < FLOPS_NPART; i++) {
		if (i >= FLOPS_PE_FIRST && f->params[i] == 0 && f->macs[i] == 0)
			continue;
		printf("%-30s %15.0f %18.0f\n", flops_part_title(i), f->params[i], f->macs[i]);
	}
	printf("%-30s %15.0f %18.0f  (%.3fG)\n", "total", f->params_total, f->macs_total,
	    f->macs_total / 1e9);
	printf("%-30s %15.0f %18.0f  (%+.3f%% MACs over abs)\n", "position encoding",
	    f->pe_params, f->pe_macs, pct);
}

static void
json_flops(const char *pe, const struct flops *f, double pct)
{
	int i;

	printf("{\"pe\":\"%s\",\"params\":%.0f,\"macs\":%.0f,\"pe_params\":%.0f,\"pe_macs\":%.0f,"
	    "\"over_abs_percent\":%.6f,\"components\":{", pe, f->params_total, f->macs_total,
	    f->pe_params, f->pe_macs, pct);
	for (i = 0; i < FLOPS_NPART; i++)
		printf("%s\"%s\":{\"params\":%.0f,\"macs\":%.0f}", i ? "," : "",
		    flops_part_name(i), f->params[i], f->macs[i]);
	printf("}}");
}

int
main(int argc, char *argv[])
{
	struct opts o;
	struct vit_config c, base;
	struct flops f[MAXPE], fa;
	double pct[MAXPE];
	char *pes;
	const char *list[MAXPE];
	int T, n = 0, m, i;

	cli_init(argc, argv);
	parse_args(argc, argv, &o);
	if (o.model)
		load_model(&o);
	if (!o.model) {
		o.c.P = o.channels;
		for (i = 0; i < o.npatch; i++)
			o.c.P *= o.patch[i];
	}
	T = tokens_of(&o);
	n = split_pes(&o, list, &pes);
	base = o.c;
	snprintf(base.pe, sizeof base.pe, "%s", pe_baseline());
	count(&base, T, o.batch, o.count, &fa);

	/* Count everything first: a bad encoding fails before any output;
	 * one of --pe all's that this model cannot take is left out, said. */
	for (i = m = 0; i < n; i++) {
		struct err e;
		c = o.c;
		snprintf(c.pe, sizeof c.pe, "%s", list[i]);
		if (flops_model(&c, T, o.batch, o.count, &f[m], &e) < 0) {
			if (!in_all(list[i]))	/* the user's spec: a usage error */
				usage_error("--pe %s: %s", list[i], e.msg);
			cli_warn("--pe all: %s left out: %s", list[i], e.msg);
			continue;
		}
		pct[m] = 100.0 * (f[m].macs_total - fa.macs_total) / fa.macs_total;
		list[m++] = list[i];
	}
	n = m;
	if (o.json)
		printf("{\"dim\":%d,\"depth\":%d,\"heads\":%d,\"mlp\":%d,\"classes\":%d,"
		    "\"patch_values\":%d,\"tokens\":%d,\"axes\":%d,\"share\":\"%s\","
		    "\"locality\":%s,\"batch\":%d,\"count\":\"%s\",\"encodings\":[", o.c.dim,
		    o.c.depth, o.c.heads, o.c.mlp, o.c.classes, o.c.P, T, o.c.axes,
		    pe_share_name(o.c.share), o.c.locality ? "true" : "false", o.batch,
		    o.count == FLOPS_PAPER ? "paper" : "full");
	else
		printf("ViT dim %d, depth %d, heads %d, mlp %d, classes %d; %d patch tokens + CLS, "
		    "%d values each, %d axes; share %s%s; batch %d; %s counting\n", o.c.dim,
		    o.c.depth, o.c.heads, o.c.mlp, o.c.classes, T, o.c.P, o.c.axes,
		    pe_share_name(o.c.share), o.c.locality ? ", locality" : "", o.batch,
		    o.count == FLOPS_PAPER ? "paper" : "full");
	if (!o.json && n > 1)
		printf("%-16s %15s %18s %10s %12s\n", "encoding", "params", "MACs", "GMACs", "vs abs");
	for (i = 0; i < n; i++) {
		if (o.json) {
			if (i)
				putchar(',');
			json_flops(list[i], &f[i], pct[i]);
		} else if (n > 1) {
			printf("%-16s %15.0f %18.0f %10.3f %+11.3f%%\n", list[i], f[i].params_total,
			    f[i].macs_total, f[i].macs_total / 1e9, pct[i]);
		} else {
			printf("encoding %s\n", list[i]);
			print_breakdown(&f[i], pct[i]);
		}
	}
	if (o.json)
		printf("]}\n");
	free(pes);
	cli_close_out(stdout, "stdout");
	return 0;
}
