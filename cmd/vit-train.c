/*
 * vit-train - train a ViT classifier on a stream of patch, pos and label
 * records with AdamW, warmup + cosine learning rate, label smoothing,
 * clipping, gradient accumulation and mixup; checkpoints that resume
 * bitwise identically.  The options and their checks against a resumed
 * run's are here; the run itself is lib/model/train.h's.
 */
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cliopt.h"
#include "pe.h"
#include "shapeopt.h"
#include "train.h"

struct opts {
	struct train_cfg run;	/* what the run takes (train.h) */
	const char *preset;
	int	 dim, depth, heads, mlp;	/* 0: the preset's */
	const char *model_opt;	/* an option that shapes the model (not with --init) */
	int	 threads;
	int	 prec_given;	/* --precision given: else --resume keeps the run's */
	int	 sums_given;	/* --allreduce given: else --resume keeps the run's */
	double	 timeout;	/* --timeout: seconds rank 0 waits for the others */
	int	 threads_given;	/* --threads given: else --resume keeps the run's */
	int	 force;		/* --force: --resume on another input */
	int	 no_out;
	const char *fixed;	/* an option --resume cannot take */
	uint64_t given;		/* bit k - CLI_OPT_LONG: option k given; bit 63: --batch */
};

/* Keys of the options without a short letter: first those that shape the
 * model (--init gives it), last those --resume takes (the rest the
 * checkpoint fixes). */
enum { OPT_PRESET = CLI_OPT_LONG, OPT_DIM, OPT_DEPTH, OPT_HEADS, OPT_MLP, OPT_PE,
	OPT_SHARE, OPT_LOCALITY, OPT_SIGMA, OPT_POOL, OPT_CLASSES, OPT_GENERATORS,
	OPT_DROPOUT, OPT_EMB_DROPOUT, OPT_POSITIONS, OPT_INIT, OPT_LR, OPT_LR_MIN,
	OPT_WD, OPT_BETA1, OPT_BETA2, OPT_EPS, OPT_WARMUP, OPT_SMOOTHING, OPT_CLIP,
	OPT_ACCUM, OPT_MIXUP, OPT_EPOCHS, OPT_STEPS, OPT_SEED, OPT_VAL_EVERY,
	OPT_VAL_STEPS, OPT_SAVE_EVERY, OPT_SAVE_STEPS, OPT_NO_SHUFFLE, OPT_SHUFFLE_BUFFER,
	OPT_PATIENCE,
	OPT_THREADS,
	OPT_PRECISION, OPT_ALLREDUCE, OPT_TIMEOUT, OPT_PROGRESS, OPT_VAL,
	OPT_BEST, OPT_NO_OUT, OPT_RESUME, OPT_FORCE, OPT_LOG };

static char pe_help[512];	/* --pe's, with the registered encodings */

static const struct cli_opt options[] = {
	/* the model */
	{ "preset", OPT_PRESET, "NAME", "tiny small base large cifar (tiny)" },
	SHAPE_OPTS(OPT_DIM, "the preset's"),
	{ "pe", OPT_PE, "SPEC", pe_help },
	{ "share", OPT_SHARE, "MODE", "none heads layers all (none)" },
	{ "locality", OPT_LOCALITY, NULL, "RiemannFormer locality focusing" },
	{ "sigma", OPT_SIGMA, "S", "its initial sigma (1)" },
	{ "pool", OPT_POOL, "cls|mean", "what the head reads (cls)" },
	{ "dropout", OPT_DROPOUT, "P", "dropout in the blocks (0)" },
	{ "emb-dropout", OPT_EMB_DROPOUT, "P", "dropout after the embedding (0)" },
	{ "classes", OPT_CLASSES, "N", "outputs (the stream's CLASSES)" },
	{ "generators", OPT_GENERATORS, "FILE", "initial pe.params from skewgen" },
	{ "init", OPT_INIT, "FILE", "start from the model and weights of checkpoint FILE" },
	{ "positions", OPT_POSITIONS, "native|stream", "the stream's positions "
	    "mapped into the encoding's own convention, or as given (native)" },
	/* the optimizer */
	{ "lr", OPT_LR, "X", "peak learning rate (1e-3)" },
	{ "lr-min", OPT_LR_MIN, "X", "learning rate at the end of the cosine (0)" },
	{ "wd", OPT_WD, "X", "weight decay (0.05)" },
	{ "beta1", OPT_BETA1, "X", "AdamW's beta1 (0.9)" },
	{ "beta2", OPT_BETA2, "X", "AdamW's beta2 (0.999)" },
	{ "eps", OPT_EPS, "X", "AdamW's epsilon (1e-8)" },
	{ "warmup", OPT_WARMUP, "STEPS", "linear warmup (0)" },
	{ "smoothing", OPT_SMOOTHING, "X", "label smoothing (0)" },
	{ "clip", OPT_CLIP, "X", "clip the gradient's global norm (0: never)" },
	{ "accum", OPT_ACCUM, "N", "micro-batches per step (1)" },
	{ "mixup", OPT_MIXUP, "ALPHA", "mixup with Beta(ALPHA, ALPHA) (0: off)" },
	/* the run */
	{ "batch", 'b', "N", "records per micro-batch (64)" },
	{ "epochs", OPT_EPOCHS, "N", "epochs (all the input holds; a file is re-read)" },
	{ "steps", OPT_STEPS, "N", "optimizer steps: stop there, schedule length" },
	{ "seed", OPT_SEED, "N", "seed of every random draw (1)" },
	{ "no-shuffle", OPT_NO_SHUFFLE, NULL, "train in the input's order (default: a file "
	    "in a new\nrandom order each epoch, a pipe through a shuffle buffer)" },
	{ "shuffle-buffer", OPT_SHUFFLE_BUFFER, "N", "records the shuffle draws from (a file:\n"
	    "its epoch's; a pipe: 10000)" },
	{ "threads", OPT_THREADS, "N", "threads (0: all cores)" },
	{ "progress", OPT_PROGRESS, "SECONDS", "a line on stderr every SECONDS when it is no\n"
	    "terminal (0: none)" },
	{ "precision", OPT_PRECISION, "fp32|bf16",
	    "the products' precision (fp32; bf16: bf16 operands, fp32 sums)" },
	{ "allreduce", OPT_ALLREDUCE, "fp32|bf16", "the ranks' gradient sums on the wire\n"
	    "(fp32; bf16: half the bytes)" },
	{ "timeout", OPT_TIMEOUT, "SECONDS", "ranks that do not answer for SECONDS end\n"
	    "the run (300; 0: never)" },
	{ "val", OPT_VAL, "FILE", "held-out stream evaluated every --val-every epochs" },
	{ "val-every", OPT_VAL_EVERY, "N", "epochs between validations (1)" },
	{ "val-steps", OPT_VAL_STEPS, "N", "also validate every N optimizer steps (0: never)" },
	{ "patience", OPT_PATIENCE, "N", "stop after N validations without a better top-1\n"
	    "(0: never)" },
	{ "out", 'o', "MODEL", "checkpoint every --save-every epochs and at the end" },
	{ "save-every", OPT_SAVE_EVERY, "N", "epochs between checkpoints (1)" },
	{ "save-steps", OPT_SAVE_STEPS, "N",
	    "also checkpoint every N optimizer steps (0: never)" },
	{ "best", OPT_BEST, "FILE", "the model of the best --val top-1 so far" },
	{ "no-out", OPT_NO_OUT, NULL, "train without -o (benchmarks): the model is lost" },
	{ "resume", OPT_RESUME, NULL, "continue the run checkpointed in MODEL" },
	{ "force", OPT_FORCE, NULL, "--resume on an input other than the run's" },
	{ "log", OPT_LOG, "FILE", "JSON lines: step, epoch, loss, lr, img_s, val_acc" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd command = {
	"[options] -o MODEL [STREAM]",
	"Train a ViT classifier on a stream of patch, pos and label records.",
	options, NULL
};

/* The key of the option called name. */
static int
option_key(const char *name)
{
	const struct cli_opt *p = options;

	while (strcmp(p->name, name) != 0)
		p++;
	return p->key;
}

/* The long name of the option of key. */
static const char *
option_name(int key)
{
	const struct cli_opt *p = options;

	while (p->key != key)
		p++;
	return p->name;
}

/* A checkpoint is rewritten during training and read back to resume: a
 * FIFO or a device (-o /dev/full) cannot be one.  Said before training,
 * not after it; a link to a file is fine (its target is replaced). */
static void
model_path(const char *opt, const char *path)
{
	struct stat st;

	if (path != NULL && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		die("%s %s: not a regular file; a checkpoint is rewritten during training "
		    "and read back by --resume", opt, path);
}

/* --allreduce's word: 1 bf16, 0 fp32, -1 neither. */
static int
sums_arg(const char *arg)
{
	return strcmp(arg, "bf16") == 0 ? 1 : strcmp(arg, "fp32") == 0 ? 0 : -1;
}

static void
parse(int argc, char *argv[], struct opts *o)
{
	int c, n;
	struct pe pe;
	struct train_keys k;
	const struct train_key *e;
	struct err why;

	memset(o, 0, sizeof *o);
	vit_config_init(&o->run.c);
	o->preset = "tiny";
	train_defaults(&k);
	o->timeout = 300;
	n = snprintf(pe_help, sizeof pe_help, "position encoding (none):\n");
	pe_list(pe_help + n, sizeof pe_help - n, " ", 0, 0, 0);
	while ((c = cli_getopt(argc, argv, &command)) != -1) {
		switch (c) {
		case OPT_PRESET: o->preset = optarg; break;
		case OPT_DIM: o->dim = shape_opt("dim", optarg); break;
		case OPT_DEPTH: o->depth = shape_opt("depth", optarg); break;
		case OPT_HEADS: o->heads = shape_opt("heads", optarg); break;
		case OPT_MLP: o->mlp = shape_opt("mlp", optarg); break;
		case OPT_PE: cli_opt_pe(optarg, o->run.c.pe, sizeof o->run.c.pe); break;
		case OPT_SHARE: o->run.c.share = cli_opt_share(optarg); break;
		case OPT_LOCALITY: o->run.c.locality = 1; break;
		case OPT_SIGMA: o->run.c.sigma = (float)cli_num("--sigma", optarg, 1e-6, 1e6); break;
		case OPT_POOL: o->run.c.pool = cli_opt_pool(optarg); break;
		case OPT_DROPOUT: o->run.c.dropout = (float)cli_num("--dropout", optarg, 0, 0.99); break;
		case OPT_EMB_DROPOUT: o->run.c.emb_dropout = (float)cli_num("--emb-dropout", optarg, 0, 0.99); break;
		case OPT_CLASSES: o->run.classes = shape_opt("classes", optarg); break;
		case OPT_GENERATORS: o->run.generators = optarg; break;
		case OPT_POSITIONS:
			if (strcmp(optarg, "native") != 0 && strcmp(optarg, "stream") != 0)
				usage_error("--positions %s: want native or stream", optarg);
			o->run.stream_positions = strcmp(optarg, "stream") == 0;
			o->run.positions_given = 1;
			break;
		case OPT_THREADS:
			o->threads = cli_opt_threads(optarg);
			o->threads_given = 1;
			break;
		case OPT_PRECISION:
			o->run.prec = cli_opt_precision(optarg);
			o->prec_given = 1;
			break;
		case OPT_ALLREDUCE:
			o->run.bf16_sums = sums_arg(optarg);
			if (o->run.bf16_sums < 0)
				usage_error("--allreduce: '%s' is not fp32 or bf16", optarg);
			o->sums_given = 1;
			break;
		case OPT_TIMEOUT: o->timeout = cli_num("--timeout", optarg, 0, 1e9); break;
		case OPT_VAL: o->run.val = optarg; break;
		case OPT_PROGRESS: o->run.progress = cli_num("--progress", optarg, 0, 1e9); break;
		case OPT_BEST: o->run.best = optarg; break;
		case OPT_NO_OUT: o->no_out = 1; break;
		case OPT_INIT: o->run.init = optarg; break;
		case 'o': o->run.out = optarg; break;
		case OPT_RESUME: o->run.resume = 1; break;
		case OPT_FORCE: o->force = 1; break;
		case OPT_LOG: o->run.log = optarg; break;
		case OPT_NO_SHUFFLE: k.o.shuffle = 0; break;
		default:	/* the options a checkpoint keeps, by its rules */
			if ((e = train_key_of(option_name(c))) != NULL &&
			    train_key_parse(e, optarg, 1, &k, &why) < 0)
				usage_error("--%s: '%s' is %s", e->opt, optarg, why.msg);
		}
		if (c != 'o' && c < OPT_THREADS && o->fixed == NULL)
			o->fixed = option_name(c);
		if (c == 'b' || (c >= CLI_OPT_LONG && c < OPT_THREADS))
			o->given |= 1ULL << (c == 'b' ? 63 : c - CLI_OPT_LONG);
		if (c == OPT_NO_SHUFFLE)	/* both say TRAIN_SHUFFLE */
			o->given |= 1ULL << (OPT_SHUFFLE_BUFFER - CLI_OPT_LONG);
		if (c >= OPT_PRESET && c <= OPT_GENERATORS && o->model_opt == NULL)
			o->model_opt = option_name(c);
	}
	o->run.t = k.o;
	if (o->run.init != NULL && o->model_opt != NULL)
		usage_error("--%s: --init's checkpoint gives the model", o->model_opt);
	if (argc - optind > 1)
		usage_error("too many operands");
	o->run.input = optind < argc ? argv[optind] : NULL;
	if (o->run.resume && o->run.out == NULL)
		usage_error("--resume needs --out MODEL, the checkpoint to continue");
	if (vit_preset(&o->run.c, o->preset) < 0)
		usage_error("--preset: '%s' is not tiny, small, base, large or cifar", o->preset);
	if (o->dim)
		o->run.c.dim = o->dim;
	if (o->depth)
		o->run.c.depth = o->depth;
	if (o->heads)
		o->run.c.heads = o->heads;
	/* timm's ratio: the MLP follows --dim unless given */
	if (o->mlp)
		o->run.c.mlp = o->mlp;
	else if (o->dim)
		o->run.c.mlp = 4 * o->run.c.dim;
	if (o->run.c.dim % o->run.c.heads != 0)
		usage_error("--dim %d is not a multiple of --heads %d", o->run.c.dim, o->run.c.heads);
	/* The stream gives the axes: a spec no count of them takes is wrong. */
	int spec_ok = 0;
	for (int a = 1; a <= 3 && !spec_ok; a++)
		spec_ok = pe_parse(&pe, o->run.c.pe, o->run.c.dim / o->run.c.heads, a, o->run.c.heads,
		    o->run.c.depth, pe_share_name(o->run.c.share)) == 0;
	if (!spec_ok)
		usage_error("--pe: %s", pe.err.msg);
	if (o->run.out != NULL && o->no_out)
		usage_error("--no-out and --out %s: give one", o->run.out);
	if (o->run.t.val_steps > 0 && o->run.val == NULL)
		usage_error("--val-steps needs --val FILE");
	if (o->run.t.save_steps > 0 && o->run.out == NULL)
		usage_error("--save-steps needs --out MODEL");
	if (o->run.best != NULL && o->run.val == NULL)
		usage_error("--best needs --val FILE to rank the models");
	if (o->run.t.patience > 0 && o->run.val == NULL)
		usage_error("--patience needs --val FILE to count validations by");
	/* A run without a model to show for it is a mistake, not a default. */
	if (o->run.out == NULL && !o->no_out)
		usage_error("no --out MODEL: the trained model would be lost (--no-out "
		    "trains without one)");
	model_path("--out", o->run.out);
	model_path("--best", o->run.best);
}


static int
given(const struct opts *o, int key)
{
	return (o->given >> (key == 'b' ? 63 : key - CLI_OPT_LONG)) & 1;
}

/* A value of a given option against the checkpoint's, which wins. */
static void
same(const char *opt, int differ, const char *want, const char *had)
{
	if (differ)
		usage_error("--%s %s: the checkpoint's run has %s; --resume keeps it",
		    opt, want, had);
}

/*
 * --resume with the options the run began with (the original command and
 * --resume): those equal to the checkpoint's are fine, a real difference
 * is refused naming both.  More --epochs or --steps than the run had
 * extend it: the cosine is laid out again over the new length from the
 * step reached, so a finished run decays once more.
 */
static void
same_options(struct train *r, const struct opts *want, const char *had_pos)
{
	const struct vit_config *c = &r->m->c;
	char a[64], b[64];

	for (const struct train_key *t = train_keys_table; t->key != NULL; t++) {
		if (t->part != TRAIN_OPTS)
			continue;
		const char *pw = (const char *)&want->run.t + t->off;
		char *ph = (char *)&r->o.t + t->off;
		int opt = option_key(t->opt);
		if (!given(want, opt))
			continue;
		if (t->type == TRAIN_INT) {
			int64_t w = *(const int64_t *)pw, *h = (int64_t *)(void *)ph;
			if ((opt == OPT_EPOCHS || opt == OPT_STEPS) && w > *h) {
				*h = w;
				r->extend = 1;
				continue;
			}
			snprintf(a, sizeof a, "%lld", (long long)w);
			snprintf(b, sizeof b, "%lld", (long long)*h);
			same(t->opt, w != *h, a, b);
		} else {
			double w = *(const double *)pw, h = *(const double *)(void *)ph;
			snprintf(a, sizeof a, "%.17g", w);
			snprintf(b, sizeof b, "%.17g", h);
			same(t->opt, w != h, a, b);
		}
	}
	static const int shape[] = { OPT_PRESET, OPT_DIM, OPT_DEPTH, OPT_HEADS, OPT_MLP };
	for (size_t k = 0; k < sizeof shape / sizeof *shape; k++)
		if (given(want, shape[k])) {
			snprintf(a, sizeof a, "dim %d depth %d heads %d mlp %d", want->run.c.dim,
			    want->run.c.depth, want->run.c.heads, want->run.c.mlp);
			snprintf(b, sizeof b, "dim %d depth %d heads %d mlp %d", c->dim, c->depth,
			    c->heads, c->mlp);
			same(option_name(shape[k]), strcmp(a, b) != 0, a, b);
		}
	if (given(want, OPT_PE)) {
		struct pe pe;
		int ok = pe_parse(&pe, want->run.c.pe, c->dim / c->heads, c->axes, c->heads,
		    c->depth, pe_share_name(c->share)) == 0;
		same("pe", !ok || strcmp(pe.spec, c->pe) != 0, want->run.c.pe, c->pe);
	}
	if (given(want, OPT_SHARE))
		same("share", want->run.c.share != c->share, pe_share_name(want->run.c.share),
		    pe_share_name(c->share));
	if (given(want, OPT_CLASSES)) {
		snprintf(a, sizeof a, "%d", want->run.classes);
		snprintf(b, sizeof b, "%d", c->classes);
		same("classes", want->run.classes != c->classes, a, b);
	}
	if (given(want, OPT_LOCALITY))
		same("locality", !c->locality, "", "no locality focusing");
	if (given(want, OPT_POOL))
		same("pool", want->run.c.pool != c->pool, want->run.c.pool ? "mean" : "cls",
		    c->pool ? "mean" : "cls");
	if (given(want, OPT_POSITIONS))
		same("positions", want->run.stream_positions != (strncmp(had_pos, "stream", 6) == 0),
		    want->run.stream_positions ? "stream" : "native", had_pos);
	static const struct { int opt; size_t off; } num[] = {
		{ OPT_SIGMA, offsetof(struct vit_config, sigma) },
		{ OPT_DROPOUT, offsetof(struct vit_config, dropout) },
		{ OPT_EMB_DROPOUT, offsetof(struct vit_config, emb_dropout) },
	};
	for (size_t k = 0; k < sizeof num / sizeof *num; k++) {
		float w = *(const float *)(const void *)((const char *)&want->run.c + num[k].off);
		float h = *(const float *)(const void *)((const char *)c + num[k].off);
		snprintf(a, sizeof a, "%.9g", w);
		snprintf(b, sizeof b, "%.9g", h);
		if (given(want, num[k].opt))
			same(option_name(num[k].opt), w != h, a, b);
	}
}

/* --resume: the run checkpointed in --out, its options against those
 * given, the threads, precision and sums it ran with unless given anew. */
static void
resume(struct train *r, struct opts *o)
{
	struct vt ck;
	struct train_keys k;
	struct err e;

	train_defaults(&k);
	k.o = r->o.t;
	k.o.shuffle = 0;	/* a checkpoint without TRAIN_SHUFFLE never shuffled */
	if (train_load(r, &ck, &k, &e) < 0)
		die("%s", e.msg);
	r->o.t = k.o;
	same_options(r, o, vt_meta(&ck, "POSITIONS") ? vt_meta(&ck, "POSITIONS") : "native");
	int64_t threads = k.past.threads, ranks = k.past.ranks;
	if (!o->threads_given && threads != r->threads)
		r->threads = cli_threads((int)threads);
	if (threads != r->threads && r->d.rank == 0)
		cli_warn("--resume: %d threads, the run began with %lld: the result "
		    "will not be bitwise the uninterrupted run's", r->threads,
		    (long long)threads);
	const char *prec = vt_meta(&ck, "TRAIN_PRECISION");
	if (prec != NULL && !o->prec_given)
		r->o.prec = cli_opt_precision(prec);
	if (prec != NULL && strcmp(prec, r->o.prec == GEMM_BF16 ? "bf16" :
	    "fp32") != 0 && r->d.rank == 0)
		cli_warn("--resume: --precision %s, the run began with %s: "
		    "the result will not be bitwise the uninterrupted run's",
		    r->o.prec == GEMM_BF16 ? "bf16" : "fp32", prec);
	const char *sums = vt_meta(&ck, "TRAIN_ALLREDUCE");
	if (sums != NULL && sums_arg(sums) < 0)
		die("--resume: %s: TRAIN_ALLREDUCE '%s' is not fp32 or bf16",
		    r->o.out, sums);
	if (sums != NULL && !o->sums_given)
		r->o.bf16_sums = sums_arg(sums);
	if (sums != NULL && sums_arg(sums) != r->o.bf16_sums && r->d.rank == 0)
		cli_warn("--resume: --allreduce %s, the run began with %s: the "
		    "result will not be bitwise the uninterrupted run's",
		    r->o.bf16_sums ? "bf16" : "fp32", sums);
	/* the same batches, their sums in another order */
	if (ranks != r->d.size && r->d.rank == 0)
		cli_warn("--resume: %d ranks, the run began with %lld: the result "
		    "will not be bitwise the uninterrupted run's", r->d.size,
		    (long long)ranks);
	if (train_restore(r, &ck, &k, &e) < 0)
		die("%s", e.msg);
	vt_free(&ck);
	if (r->st.done) {
		if (r->d.rank == 0)
			cli_warn("%s: the run it holds is finished; nothing to do",
			    r->o.out);
		dist_end(&r->d);
		exit(0);
	}
}

/* The run's ways to speak: messages and the progress line on stderr. */
static struct progress pr;

static void
ui_warn(const char *msg)
{
	cli_warn("%s", msg);
}

static void
ui_show(int64_t step, const char *msg)
{
	progress_show(&pr, step, msg);
}

static void
ui_end(void)
{
	progress_end(&pr);
}

int
main(int argc, char *argv[])
{
	static const struct train_ui ui = { ui_warn, ui_show, ui_end };
	struct opts o;
	struct train r;
	struct dist d;
	struct err e;
	int threads, rc;

	cli_init(argc, argv);
	parse(argc, argv, &o);
	threads = cli_threads(o.threads);
	if (dist_init(&d, &e) < 0)
		die("%s", e.msg);
	d.timeout = o.timeout;
	train_init(&r, &o.run, &ui, threads, &d);
	if (o.run.resume)
		resume(&r, &o);
	if (r.o.t.batch < r.d.size)
		usage_error("--batch %lld: fewer records than the %d ranks",
		    (long long)r.o.t.batch, r.d.size);
	if (r.o.t.patience > 0 && r.d.size > 1)	/* rank 0 alone validates */
		usage_error("--patience: one process only");
	if ((o.run.resume ? train_reopen(&r, o.force, &e) :
	    train_fresh(&r, argc, argv, &e)) < 0 || train_start(&r, &e) < 0)
		die("%s", e.msg);
	progress_start(&pr, r.st.total);
	if (r.d.size == 1)
		train_catch_stop();
	if ((rc = train_run(&r, &e)) == TRAIN_STOPPED)
		exit(128 + train_signal());
	if (rc < 0)
		die("%s", e.msg);
	train_free(&r);
	dist_end(&r.d);
	return 0;
}
