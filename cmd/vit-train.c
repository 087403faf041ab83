/*
 * vit-train - train a ViT classifier on a stream of patch, pos and label
 * records with AdamW, warmup + cosine learning rate, label smoothing,
 * clipping, gradient accumulation and mixup; checkpoints that resume
 * bitwise identically.
 *
 * Epochs and the schedule's length.  An epoch is EPOCH_RECORDS records
 * when the stream declares it, else RECORDS, else the whole input.  The
 * run trains --epochs epochs (default: all the input holds); a file
 * operand that runs out is read again from its start; a stream (stdin, a
 * FIFO: no regular file) is read once, and its end ends the run.
 * Batches never straddle an epoch boundary, so an epoch of E records is
 * ceil(E / (batch * accum)) optimizer steps, and the cosine schedule spans
 * epochs times that, or --steps when given (which also stops the run).
 *
 * Randomness (initialization, dropout, mixup) is drawn from rng streams
 * keyed by the seed and the micro-batch index, and the checkpoint records
 * the step and the input position, so a resumed run repeats exactly what
 * the uninterrupted one would have done.
 *
 * Under mpirun, N ranks train one model (lib/model/dist.h): every rank
 * makes the targets and mixup of the whole micro-batch where it holds it
 * whole and runs the model on its share, and --batch stays the global
 * micro-batch, so a run's options mean the same on any number of ranks.
 * Rank 0 alone validates, writes checkpoints, --log and messages.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adamw.h"
#include "batch.h"
#include "checkpoint.h"
#include "cli.h"
#include "cliopt.h"
#include "dist.h"
#include "evaluate.h"
#include "mixup.h"
#include "pe.h"
#include "pe_conv.h"
#include "posmap.h"
#include "rng.h"
#include "trainopt.h"
#include "vit.h"
#include "vitfit.h"
#include "vt.h"

enum { DRAW_DROPOUT = 1, DRAW_MIXUP = 2, DRAW_SHUFFLE = 3 };	/* rng stream kinds */

/* img_s is records over the wall time of the last RATE_WINDOW seconds of
 * steps (or since the start), or of the last RATE_MARKS steps when they
 * took less: one step's rate swings with the input pipe's buffering and a
 * short last batch. */
#define RATE_WINDOW	1.0
#define RATE_MARKS	256

struct opts {
	struct vit_config c;	/* sizes, encoding; P, axes, grid from the stream */
	const char *preset;
	int	 dim, depth, heads, mlp;	/* 0: the preset's */
	int	 classes;		/* 0: the stream's CLASSES */
	const char *generators;
	const char *init;	/* --init: the checkpoint to start from */
	const char *model_opt;	/* an option that shapes the model (not with --init) */
	struct train_opts t;	/* the options a checkpoint keeps (trainopt.h) */
	double	 progress;	/* seconds between log lines on a non-terminal */
	int	 threads;
	enum gemm_prec prec;
	int	 prec_given;	/* --precision given: else --resume keeps the run's */
	int	 bf16_sums;	/* --allreduce bf16 */
	int	 sums_given;	/* --allreduce given: else --resume keeps the run's */
	double	 timeout;	/* --timeout: seconds rank 0 waits for the others */
	int	 threads_given;	/* --threads given: else --resume keeps the run's */
	int	 force;		/* --force: --resume on another input */
	const char *val, *out, *log, *best, *input;
	int	 resume, no_out;
	int	 stream_positions;	/* --positions stream: as the stream has them */
	int	 positions_given;	/* --positions given (not with --init's map) */
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

/* Stream keys a model keeps for vit-eval, flops and shuffle-eval. */
static const char *const kept_keys[] = {
	"CLASSES", "CLASS", "MEAN", "STD", "CHANNELS", "PATCH", "GRID", "SIZE",
	"POS", "CLSPOS", "SOURCE", "HISTORY",
};

struct run {
	struct opts o;
	struct train_state st;	/* where the run stands (trainopt.h) */
	struct train_state at_step;	/* st when the step under way began */
	struct vit *m;
	struct vt s;		/* the training stream */
	FILE	*fp;		/* NULL: a stream, on a rank other than 0 */
	const char *name;
	int	 stream;	/* the input is read once (dist_stream) */
	struct batch_reader br;
	struct batch b;
	int64_t	 held;		/* records of the batch fetched into b but not
				   trained on; 0: none */
	struct dist d;		/* the ranks (rank 0 of 1 alone) */
	int64_t	 E;		/* records per epoch; 0: a whole pass */
	int64_t	 nepoch;	/* epochs to train; 0: until the input ends */
	struct vt meta;		/* the keys every checkpoint carries */
	int64_t	 saved_step;	/* step of the last checkpoint; -1: none */
	int	 extend;	/* --resume with more --epochs or --steps */
	int64_t	 since_best;	/* validations since the best one */
	double	 last_note;	/* when --progress last wrote */
	int64_t	 val_step;	/* step of the last validation; -1: none */
	double	 train_loss;	/* the last step's; NAN: none yet */
	double	 best_acc;	/* best validation top-1; -1: none yet */
	int64_t	 best_epoch;
	int	 threads;
	float	*target;	/* [batch][classes] */
	float	*logits;	/* [batch][classes] */
	int64_t	*perm;		/* [batch] mixup scratch */
	struct adamw adam;
	int	 log;		/* --log descriptor; -1: none */
	struct progress pr;
	struct rate {		/* step ends: (time, records seen) */
		double	 t[RATE_MARKS];
		int64_t	 seen[RATE_MARKS];
		int	 n;	/* marks made */
	} rate;
	double	 t_start;	/* when this process began training */
	int64_t	 seen_start;	/* records seen before */
	char	 positions[64];	/* the POSITIONS key: what the model sees */
};

static char pe_help[512];	/* --pe's, with the registered encodings */

static const struct cli_opt options[] = {
	/* the model */
	{ "preset", OPT_PRESET, "NAME", "tiny small base large cifar (tiny)" },
	{ "dim", OPT_DIM, "N", "embedding width (the preset's)" },
	{ "depth", OPT_DEPTH, "N", "blocks (the preset's)" },
	{ "heads", OPT_HEADS, "N", "attention heads (the preset's)" },
	{ "mlp", OPT_MLP, "N", "MLP hidden width (the preset's)" },
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
	char why[128];

	memset(o, 0, sizeof *o);
	vit_config_init(&o->c);
	o->preset = "tiny";
	train_defaults(&k);
	o->timeout = 300;
	n = snprintf(pe_help, sizeof pe_help, "position encoding (none):\n");
	pe_list(pe_help + n, sizeof pe_help - n, " ", 0, 0, 0);
	while ((c = cli_getopt(argc, argv, &command)) != -1) {
		switch (c) {
		case OPT_PRESET: o->preset = optarg; break;
		case OPT_DIM: o->dim = (int)cli_int("--dim", optarg, 1, 65536); break;
		case OPT_DEPTH: o->depth = (int)cli_int("--depth", optarg, 1, 1024); break;
		case OPT_HEADS: o->heads = (int)cli_int("--heads", optarg, 1, 65536); break;
		case OPT_MLP: o->mlp = (int)cli_int("--mlp", optarg, 1, 1 << 18); break;
		case OPT_PE: cli_opt_pe(optarg, o->c.pe, sizeof o->c.pe); break;
		case OPT_SHARE: o->c.share = cli_opt_share(optarg); break;
		case OPT_LOCALITY: o->c.locality = 1; break;
		case OPT_SIGMA: o->c.sigma = (float)cli_num("--sigma", optarg, 1e-6, 1e6); break;
		case OPT_POOL: o->c.pool = cli_opt_pool(optarg); break;
		case OPT_DROPOUT: o->c.dropout = (float)cli_num("--dropout", optarg, 0, 0.99); break;
		case OPT_EMB_DROPOUT: o->c.emb_dropout = (float)cli_num("--emb-dropout", optarg, 0, 0.99); break;
		case OPT_CLASSES: o->classes = (int)cli_int("--classes", optarg, 1, 1 << 20); break;
		case OPT_GENERATORS: o->generators = optarg; break;
		case OPT_POSITIONS:
			if (strcmp(optarg, "native") != 0 && strcmp(optarg, "stream") != 0)
				usage_error("--positions %s: want native or stream", optarg);
			o->stream_positions = strcmp(optarg, "stream") == 0;
			o->positions_given = 1;
			break;
		case OPT_THREADS:
			o->threads = cli_opt_threads(optarg);
			o->threads_given = 1;
			break;
		case OPT_PRECISION:
			o->prec = cli_opt_precision(optarg);
			o->prec_given = 1;
			break;
		case OPT_ALLREDUCE:
			o->bf16_sums = sums_arg(optarg);
			if (o->bf16_sums < 0)
				usage_error("--allreduce: '%s' is not fp32 or bf16", optarg);
			o->sums_given = 1;
			break;
		case OPT_TIMEOUT: o->timeout = cli_num("--timeout", optarg, 0, 1e9); break;
		case OPT_VAL: o->val = optarg; break;
		case OPT_PROGRESS: o->progress = cli_num("--progress", optarg, 0, 1e9); break;
		case OPT_BEST: o->best = optarg; break;
		case OPT_NO_OUT: o->no_out = 1; break;
		case OPT_INIT: o->init = optarg; break;
		case 'o': o->out = optarg; break;
		case OPT_RESUME: o->resume = 1; break;
		case OPT_FORCE: o->force = 1; break;
		case OPT_LOG: o->log = optarg; break;
		case OPT_NO_SHUFFLE: k.o.shuffle = 0; break;
		default:	/* the options a checkpoint keeps, by its rules */
			if ((e = train_key_of(option_name(c))) != NULL &&
			    train_key_parse(e, optarg, 1, &k, why, sizeof why) < 0)
				usage_error("--%s: '%s' is %s", e->opt, optarg, why);
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
	o->t = k.o;
	if (o->init != NULL && o->model_opt != NULL)
		usage_error("--%s: --init's checkpoint gives the model", o->model_opt);
	if (argc - optind > 1)
		usage_error("too many operands");
	o->input = optind < argc ? argv[optind] : NULL;
	if (o->resume && o->out == NULL)
		usage_error("--resume needs --out MODEL, the checkpoint to continue");
	if (vit_preset(&o->c, o->preset) < 0)
		usage_error("--preset: '%s' is not tiny, small, base, large or cifar", o->preset);
	if (o->dim)
		o->c.dim = o->dim;
	if (o->depth)
		o->c.depth = o->depth;
	if (o->heads)
		o->c.heads = o->heads;
	/* timm's ratio: the MLP follows --dim unless given */
	if (o->mlp)
		o->c.mlp = o->mlp;
	else if (o->dim)
		o->c.mlp = 4 * o->c.dim;
	if (o->c.dim % o->c.heads != 0)
		usage_error("--dim %d is not a multiple of --heads %d", o->c.dim, o->c.heads);
	/* The stream gives the axes: a spec no count of them takes is wrong. */
	int spec_ok = 0;
	for (int a = 1; a <= 3 && !spec_ok; a++)
		spec_ok = pe_parse(&pe, o->c.pe, o->c.dim / o->c.heads, a, o->c.heads,
		    o->c.depth, pe_share_name(o->c.share)) == 0;
	if (!spec_ok)
		usage_error("--pe: %s", pe.err);
	if (o->out != NULL && o->no_out)
		usage_error("--no-out and --out %s: give one", o->out);
	if (o->t.val_steps > 0 && o->val == NULL)
		usage_error("--val-steps needs --val FILE");
	if (o->t.save_steps > 0 && o->out == NULL)
		usage_error("--save-steps needs --out MODEL");
	if (o->best != NULL && o->val == NULL)
		usage_error("--best needs --val FILE to rank the models");
	if (o->t.patience > 0 && o->val == NULL)
		usage_error("--patience needs --val FILE to count validations by");
	/* A run without a model to show for it is a mistake, not a default. */
	if (o->out == NULL && !o->no_out)
		usage_error("no --out MODEL: the trained model would be lost (--no-out "
		    "trains without one)");
	model_path("--out", o->out);
	model_path("--best", o->best);
}

/* The generator of one use (kind) at one micro-batch: it depends only on
 * the seed and the micro-batch's index, not on threads or restarts. */
static void
draw(struct rng *r, uint64_t seed, int kind, int64_t micro)
{
	rng_seed(r, seed, (uint64_t)kind << 56 ^ (uint64_t)micro);
}

/* Set key to the whole number or double at p (train_meta_num). */
static void
meta_num(struct vt *s, const char *key, int isint, const void *p)
{
	if (train_meta_num(s, key, isint, p) < 0)
		die("%s", s->err);
}

/* The input file opened anew beside the pass under way, its header read
 * into s: for what it holds, not for training. */
static FILE *
reopen_input(const struct run *r, struct vt *s)
{
	const char *name;
	FILE *fp = cli_open_in(r->o.input, &name);

	vt_init(s);
	if (vt_read_header(s, fp, name) < 0)
		die("%s", s->err);
	return fp;
}

/* The records of the input file, which declares none (vtool cat joins
 * streams without RECORDS): an epoch is a pass over them. */
static int64_t
count_records(const struct run *r)
{
	struct vt s;
	FILE *fp = reopen_input(r, &s);
	int64_t n = 0;
	int rc;

	for (int i = 0; i < s.nfield; i++)
		vt_skip(&s, i);
	while ((rc = vt_read_record(&s)) == 1)
		n++;
	if (rc < 0)
		die("%s", s.err);
	vt_free(&s);
	fclose(fp);
	return n;
}

/* FNV-1a over n bytes, continuing from h. */
static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	for (const unsigned char *c = p; n-- > 0; c++)
		h = (h ^ *c) * 0x100000001b3ULL;
	return h;
}

/*
 * What identifies the training input, TRAIN_INPUT: its records an epoch,
 * a hash of its header (fields, shapes and keys but HISTORY, which names
 * the commands that made it) and, of a file, of its first 16 records.
 * --resume on another input (the test set for the training set) is
 * refused; a pipe's records cannot be read twice, so its text has no
 * "first" and only the rest is compared.
 */
static void
fingerprint(const struct run *r, char *out, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL, f = h;
	const struct vt *s = &r->s;
	int n = snprintf(out, len, "records=%lld", (long long)r->E);

	for (int i = 0; i < s->nfield; i++) {
		h = fnv(h, s->field[i].name, strlen(s->field[i].name) + 1);
		h = fnv(h, &s->field[i].dtype, sizeof s->field[i].dtype);
		h = fnv(h, s->field[i].dim, (size_t)s->field[i].rank * sizeof *s->field[i].dim);
	}
	for (int i = 0; i < s->nmeta; i++)
		if (strcmp(s->meta[i].key, "HISTORY") != 0) {
			h = fnv(h, s->meta[i].key, strlen(s->meta[i].key) + 1);
			h = fnv(h, s->meta[i].val, strlen(s->meta[i].val) + 1);
		}
	n += snprintf(out + n, len - (size_t)n, " header=%016llx", (unsigned long long)h);
	if (r->stream)
		return;
	struct vt t;
	FILE *fp = reopen_input(r, &t);

	for (int k = 0; k < 16 && vt_read_record(&t) == 1; k++)
		for (int i = 0; i < t.nfield; i++)
			f = fnv(f, t.field[i].data, t.field[i].nbytes);
	vt_free(&t);
	fclose(fp);
	snprintf(out + n, len - (size_t)n, " first=%016llx", (unsigned long long)f);
}

/* The word of fingerprint text p for key ("records="), into w[len]. */
static const char *
word_of(const char *p, const char *key, char *w, size_t len)
{
	const char *at = strstr(p, key);

	snprintf(w, len, "%.*s", at ? (int)strcspn(at, " ") : 0, at ? at : "");
	return w;
}

/* --resume: the input is the one the run trained on, or --force. */
static void
same_input(const struct run *r, const char *had)
{
	static const char *const words[] = { "records=", "header=", "first=" };
	char now[160], a[48], b[48];

	fingerprint(r, now, sizeof now);
	for (size_t k = 0; k < sizeof words / sizeof *words; k++) {
		word_of(now, words[k], a, sizeof a);
		word_of(had, words[k], b, sizeof b);
		/* records=0: a pipe that declares none, which says nothing */
		if (*a && *b && strcmp(a, b) != 0 && strcmp(a, "records=0") != 0 &&
		    strcmp(b, "records=0") != 0)
			die("--resume: %s is not the input the run trained on (%s, the run's %s): "
			    "give that input, or --force to train on this one", r->name, a, b);
	}
}

/* Open the input for pass r->st.pass (a file's next, a stream's only)
 * and check it.  Rank 0 opens it first, and the others open it only when
 * it is no stream, which they would take records from. */
static void
open_pass(struct run *r)
{
	if (r->fp != NULL) {
		fclose(r->fp);
		batch_close(&r->br);
		vt_free(&r->s);
		batch_free(&r->b);
	}
	r->fp = NULL;
	if (r->d.rank == 0)
		r->fp = cli_open_in(r->o.input, &r->name);
	r->stream = dist_stream(&r->d, r->fp);
	if (r->d.rank != 0 && !r->stream)
		r->fp = cli_open_in(r->o.input, &r->name);
	else if (r->d.rank != 0)	/* named as cli_open_in would */
		r->name = r->o.input != NULL && strcmp(r->o.input, "-") != 0 ?
		    r->o.input : "stdin";
	vt_init(&r->s);
	if (dist_read_header(&r->d, &r->s, r->fp, r->name) < 0)
		die("%s", r->s.err);
	int P = r->m ? r->m->c.P : 0, A = r->m ? r->m->c.axes : 0;
	int C = r->m ? r->m->c.classes : r->o.classes;
	if (batch_open(&r->br, &r->s, P, A, C, 1) < 0 ||
	    batch_alloc(&r->b, &r->br, (int)r->o.t.batch) < 0)
		die("%s", r->s.err);
	if (r->br.classes <= 0)
		die("%s: no CLASSES key: give --classes", r->name);
	if (r->br.icls >= 0)	/* an evaluation's augmentation (posgen --offset) */
		die("%s: per-record CLS positions (field 'clspos') are for "
		    "evaluation; train without posgen --offset", r->name);
	const char *e = vt_meta(&r->s, "EPOCH_RECORDS");
	char *end;
	r->E = r->s.records > 0 ? r->s.records : 0;
	if (e != NULL && ((r->E = strtoll(e, &end, 10)) < 1 || *end != '\0'))
		die("%s: bad EPOCH_RECORDS '%s'", r->name, e);
	if (r->E == 0 && !r->stream)
		r->E = count_records(r);
	r->st.inpass = 0;
	if (r->o.t.shuffle != 0 && r->fp != NULL) {
		struct rng g;

		draw(&g, (uint64_t)r->o.t.seed, DRAW_SHUFFLE, r->st.pass);
		if (batch_shuffle(&r->br, &g, r->E, r->o.t.shuffle) < 0)
			die("%s", r->s.err);
	} else if (r->o.t.shuffle == 0 && r->st.pass == 1 && !r->stream && r->d.rank == 0)
		cli_warn("%s: read again in the same order (--no-shuffle): every epoch "
		    "sees the records in one order", r->name);
}

/*
 * SIGINT or SIGTERM: the step under way ends, the checkpoint is written,
 * and the run exits 128 + the signal, saying how to go on.  A second
 * signal ends it at once (the handlers go back to the default).  One
 * process only: ranks would stop at different steps.
 */
static volatile sig_atomic_t stop_sig;

static void
on_stop(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	stop_sig = sig;
}

static void
catch_stop(void)
{
	struct sigaction sa = { .sa_handler = on_stop, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static void save(struct run *r);

/* Stop for stop_sig: in_step, the step under way is dropped (its records
 * are read again on --resume). */
static void
interrupted(struct run *r, int in_step)
{
	char cmd[1024];
	int n;

	if (in_step)
		r->st = r->at_step;
	progress_end(&r->pr);
	if (r->o.out == NULL)
		die("interrupted at step %lld; --no-out: nothing kept", (long long)r->st.step);
	if (r->saved_step != r->st.step)
		save(r);
	n = snprintf(cmd, sizeof cmd, "vit-train --resume -o %s", r->o.out);
	if (r->o.log != NULL)
		n += snprintf(cmd + n, sizeof cmd - (size_t)n, " --log %s", r->o.log);
	if (r->o.val != NULL && n < (int)sizeof cmd)
		n += snprintf(cmd + n, sizeof cmd - (size_t)n, " --val %s", r->o.val);
	if (r->o.best != NULL && n < (int)sizeof cmd)
		n += snprintf(cmd + n, sizeof cmd - (size_t)n, " --best %s", r->o.best);
	if (n < (int)sizeof cmd)
		snprintf(cmd + n, sizeof cmd - (size_t)n, " %s", r->o.input != NULL ?
		    r->o.input : "< INPUT");
	cli_warn("interrupted (%s) at step %lld: %s holds the run; continue with: %s",
	    stop_sig == SIGINT ? "SIGINT" : "SIGTERM", (long long)r->st.step, r->o.out, cmd);
	exit(128 + stop_sig);
}

/* Next micro-batch of up to max records (over all ranks; this rank's
 * share is in r->d): their number, 0 at the end of this pass. */
static int64_t
fetch(struct run *r, int64_t max)
{
	int64_t n = r->held;

	if (n > 0) {
		r->held = 0;
		return n;
	}
	if ((n = dist_next(&r->d, &r->br, &r->b, (int)max)) < 0) {
		if (stop_sig)	/* the data stage went with the same Ctrl-C */
			interrupted(r, 1);
		die("%s", r->s.err);
	}
	return n;
}

/* Records the next micro-batch may take: it ends at an epoch boundary. */
static int64_t
room(const struct run *r)
{
	int64_t max = r->o.t.batch;
	if (r->E > 0 && r->E - r->st.inpass % r->E < max)
		max = r->E - r->st.inpass % r->E;
	return max;
}

/* Unknown positions, used as given: a note when their spacing (the first
 * record's, per axis) is more than 4 times off the spacing of the
 * encoding's own convention on the model's grid, which would cripple it
 * (why: what is unknown of them). */
static void
spacing_note(const struct run *r, const struct vit_config *c, int native,
    const char *why)
{
	struct pe_conv own = { .kind = native, .axes = c->axes };
	double worst = 1, have = 0, want = 0;

	for (int a = 0; a < c->axes; a++)
		own.n0[a] = (double)(own.grid[a] = c->grid[a]);
	for (int a = 0; a < c->axes; a++) {
		double lo = INFINITY, hi = -INFINITY;
		for (int t = 0; t < r->b.T; t++) {
			double p = r->b.pos[(int64_t)t * c->axes + a];
			lo = p < lo ? p : lo;
			hi = p > hi ? p : hi;
		}
		if (c->grid[a] < 2)
			continue;
		double d = (hi - lo) / (c->grid[a] - 1), e = pe_conv_step(&own, a);
		double f = d > e ? d / e : e / d;
		if (!(f <= worst)) {
			worst = f;
			have = d;
			want = e;
		}
	}
	if (worst > 4)
		cli_warn("%s: %s; positions used as given, %.3g apart where %s "
		    "takes %s positions %.3g apart", r->name, why, have, c->pe,
		    pe_conv_name(native), want);
}

/* The positions the encoding sees (c->pos_scale, c->pos_shift) and the
 * POSITIONS key that says so: the stream's mapped into the encoding's own
 * convention when its POS names one of posgen's, as given with
 * --positions stream, for an encoding that reads none, or when the POS
 * key says nothing of them. */
static void
positions(struct run *r, struct vit_config *c)
{
	char why[512];
	int native;

	snprintf(r->positions, sizeof r->positions, "%s", r->o.stream_positions ?
	    "stream" : "given");
	if (r->o.stream_positions)
		return;
	int rc = posmap_native(c, vt_meta(&r->s, "POS"), vt_meta(&r->s, "GRID"),
	    &native, why, sizeof why);
	if (rc < 0)
		die("model: %s", why);
	if (rc == 0)
		snprintf(r->positions, sizeof r->positions, "native %s",
		    pe_conv_name(native));
	else if (why[0])
		spacing_note(r, c, native, why);
}

/* The most records of a batch this rank runs: its share (a model made
 * for them grows in vit_fit if need be). */
static int
share_cap(const struct run *r)
{
	return (int)((r->o.t.batch + r->d.size - 1) / r->d.size);
}

/* --init: the model of a checkpoint (vit-train's, or vtool
 * from-safetensors'), its weights, for this stream and these training
 * options (dropout too); a fresh optimizer. */
static void
init_model(struct run *r)
{
	struct vt ck;
	struct vit *m0;
	struct vit_config c;
	char err[512];

	if ((m0 = ckpt_load(r->o.init, &ck, 1, 0, 0, err, sizeof err)) == NULL)
		die("--init: %s", err);
	c = m0->c;
	if (c.P != r->br.P || c.axes != r->br.A)
		die("--init: %s takes %d values a token and %d position axes, %s has %d and %d",
		    r->o.init, c.P, c.axes, r->name, r->br.P, r->br.A);
	if (r->br.classes > 0 && r->br.classes != c.classes)
		die("--init: %s has %d classes, %s %d (vtool from-safetensors --classes gives "
		    "a model a new head)", r->o.init, c.classes, r->name, r->br.classes);
	c.dropout = r->o.c.dropout;
	c.emb_dropout = r->o.c.emb_dropout;
	const char *had = vt_meta(&ck, "POSITIONS");
	if (had == NULL)	/* an import: this stream's positions, as a new model's */
		positions(r, &c);
	else if (r->o.positions_given)
		die("--positions: %s maps its positions already (POSITIONS %s): "
		    "it was trained on them", r->o.init, had);
	else
		snprintf(r->positions, sizeof r->positions, "%s", had);
	int T = vit_grid_size(c.grid, c.axes);
	r->m = vit_create(&c, share_cap(r), T > r->b.T ? T : r->b.T,
	    (uint64_t)r->o.t.seed, err, sizeof err);
	if (r->m == NULL)
		die("model: %s", err);
	memcpy(r->m->param, m0->param, m0->nparam * sizeof *m0->param);
	vit_destroy(m0);
	vt_free(&ck);
}

/* The model's config from the options and the stream, its grid from the
 * GRID key or the first batch's positions. */
static void
build_model(struct run *r)
{
	struct vit_config *c = &r->o.c;
	char err[512];
	int64_t g[VIT_MAXAXES];
	int grid[VIT_MAXAXES];

	c->P = r->br.P;
	c->axes = r->br.A;
	c->classes = r->br.classes;
	if ((r->held = fetch(r, room(r))) == 0)
		die("%s: no records", r->name);
	if (r->o.init != NULL) {
		init_model(r);
		return;
	}
	const char *gk = vt_meta(&r->s, "GRID");
	int64_t cells = 1;
	if (gk != NULL && vt_parse_dims(gk, g, VIT_MAXAXES) == c->axes) {
		for (int a = 0; a < c->axes; a++)
			cells *= g[a];
	}
	if (gk != NULL && cells == r->b.T)
		for (int a = 0; a < c->axes; a++)
			c->grid[a] = (int)g[a];
	else if (batch_grid(&r->b, grid) == 0)
		memcpy(c->grid, grid, sizeof grid);
	else
		die("%s: record 1: positions are not a grid; no GRID key either", r->name);
	int cls = pe_conv_cls(vt_meta(&r->s, "CLSPOS"), c->axes, c->cls_pos, err,
	    sizeof err);
	if (cls < 0)
		die("%s: %s", r->name, err);
	c->cls_rotate = cls;
	positions(r, c);
	r->m = vit_create(c, share_cap(r), r->b.T, (uint64_t)r->o.t.seed, err,
	    sizeof err);
	if (r->m == NULL)
		die("model: %s", err);
	if (r->o.generators != NULL &&
	    ckpt_load_generators(r->m, r->o.generators, err, sizeof err) < 0)
		die("--generators: %s", err);
	/* what the preset and the options resolved to, for the one watching */
	if (r->d.rank == 0 && isatty(STDERR_FILENO))
		cli_warn("model: dim %d, depth %d, heads %d, mlp %d, --pe %s, %zu parameters",
		    c->dim, c->depth, c->heads, c->mlp, c->pe, r->m->nparam);
}

/* The keys every checkpoint of a fresh run carries: the stream's
 * descriptive keys, this command line, the training options. */
static void
fresh_meta(struct run *r, int argc, char *argv[])
{
	vt_init(&r->meta);
	for (int i = 0; i < r->s.nmeta; i++)
		for (size_t k = 0; k < sizeof kept_keys / sizeof *kept_keys; k++)
			if (strcmp(r->s.meta[i].key, kept_keys[k]) == 0 &&
			    vt_meta_add(&r->meta, r->s.meta[i].key, r->s.meta[i].val) < 0)
				die("%s", r->meta.err);
	char input[160];

	fingerprint(r, input, sizeof input);
	if (vt_history(&r->meta, argc, argv) < 0 ||
	    vt_meta_set(&r->meta, "POSITIONS", r->positions) < 0 ||
	    vt_meta_set(&r->meta, "TRAIN_INPUT", input) < 0 ||
	    train_keys_write(&r->meta, &(struct train_keys){ .o = r->o.t }, TRAIN_OPTS) < 0)
		die("%s", r->meta.err);
}

/* Steps the schedule spans. */
static int64_t
schedule_steps(const struct run *r)
{
	if (r->o.t.steps > 0)
		return r->o.t.steps;
	if (r->E <= 0 || r->nepoch <= 0)
		die("%s: declares %s: give --steps (or --epochs) for the schedule's "
		    "length", r->name, r->E <= 0 ? "neither EPOCH_RECORDS nor RECORDS" :
		    "no RECORDS");
	int64_t per = r->o.t.batch * r->o.t.accum;
	return r->nepoch * ((r->E + per - 1) / per);
}

/* Append a line to --log, formatted whole and written at once, unbuffered:
 * tail -f sees it when it is made, and a run killed at any moment leaves
 * whole lines. */
static void __attribute__((format(printf, 2, 3)))
log_line(const struct run *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (r->log < 0)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof buf)
		die("%s: a log line longer than %zu bytes", r->o.log, sizeof buf);
	if (cli_write_all(r->log, buf, (size_t)n) < 0)
		die_errno("%s", r->o.log);
}

/* "prog: message" on stderr, always (by rank 0 of several), after the
 * progress line (when there is one) is ended. */
static void __attribute__((format(printf, 2, 3)))
say(struct run *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (r->d.rank != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	progress_end(&r->pr);
	cli_warn("%s", buf);
}

/* Whether line (len bytes) is a whole --log line that a checkpoint at
 * step, last validated at val_step, accounts for. */
static int
log_kept(const char *line, size_t len, int64_t step, int64_t val_step)
{
	static const char head[] = "{\"step\":";
	const char *num = line + sizeof head - 1;
	char *end;

	if (len < sizeof head + 1 || strncmp(line, head, sizeof head - 1) != 0 ||
	    line[len - 1] != '\n' || line[len - 2] != '}')
		return 0;
	long long s = strtoll(num, &end, 10);
	if (end == num || *end != ',')
		return 0;
	return s <= (strstr(line, "\"val_acc\":") != NULL ? val_step : step);
}

/* Open --log, emptied for a fresh run.  A resumed run's is cut after its
 * last whole line that the checkpoint accounts for (training lines up to
 * its STEP, validations up to its VAL_STEP), dropping a half line and
 * what the lost steps wrote, then appended to: the file reads as one run.
 * Cut in place by ftruncate at that line's end, not rewritten: one call
 * that the next --resume repeats should it be lost, no copy of a long log,
 * and a reader following the file (tail -f) keeps following it. */
static void
open_log(struct run *r)
{
	const char *path = r->o.log;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	off_t keep = 0;
	long long dropped = 0;
	FILE *in;
	struct stat st;

	r->log = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
	    (r->o.resume ? 0 : O_TRUNC), 0666);
	if (r->log < 0 || fstat(r->log, &st) < 0)
		die_errno("%s", path);
	if (!r->o.resume || !S_ISREG(st.st_mode))
		return;		/* a pipe or terminal cannot be cut */
	if ((in = fopen(path, "r")) == NULL)
		die_errno("%s", path);
	while ((len = getline(&line, &cap, in)) > 0) {
		if (dropped == 0 && log_kept(line, (size_t)len, r->st.step, r->val_step))
			keep += len;
		else
			dropped++;
	}
	if (ferror(in))
		die_errno("%s", path);
	fclose(in);
	free(line);
	if (ftruncate(r->log, keep) < 0)
		die_errno("%s", path);
	if (dropped > 0)
		cli_warn("%s: %lld lines past the checkpoint's step %lld dropped", path,
		    dropped, (long long)r->st.step);
}

/* Write the model to path with where the run stands and its metrics in the
 * header: with the optimizer's moments (a checkpoint to resume) or without
 * (a model for vit-eval). */
static void
write_model(struct run *r, const char *path, int optimizer)
{
	char err[512];

	if (train_keys_write(&r->meta, &(struct train_keys){ .st = r->st }, TRAIN_STATE) < 0)
		die("%s", r->meta.err);
	meta_num(&r->meta, "TRAIN_THREADS", 1, &(int64_t){ r->threads });
	if (vt_meta_set(&r->meta, "TRAIN_PRECISION", r->o.prec == GEMM_BF16 ?
	    "bf16" : "fp32") < 0)
		die("%s", r->meta.err);
	meta_num(&r->meta, "TRAIN_RANKS", 1, &(int64_t){ r->d.size });
	if (vt_meta_set(&r->meta, "TRAIN_ALLREDUCE", r->o.bf16_sums ? "bf16" :
	    "fp32") < 0)
		die("%s", r->meta.err);
	if (!isnan(r->train_loss))
		meta_num(&r->meta, "TRAIN_LOSS", 0, &r->train_loss);
	if (ckpt_save(path, r->m, &r->meta, optimizer, err, sizeof err) < 0)
		die("%s", err);
}

/* Checkpoint to --out (rank 0), once every rank is found to hold the
 * same model. */
static void
save(struct run *r)
{
	char err[256];

	if (r->o.out == NULL)
		return;
	if (dist_same(&r->d, r->m, err, sizeof err) < 0)
		die("step %lld: %s", (long long)r->st.step, err);
	if (r->d.rank == 0)
		write_model(r, r->o.out, 1);
	r->saved_step = r->st.step;
}

/* Open the --val stream and check that the model can take it. */
static FILE *
open_val(struct run *r, struct vt *vs, struct batch_reader *vbr, const char **name)
{
	struct stat st;
	FILE *fp;

	/* It is read again at every validation: a pipe would be empty then
	 * (checked before opening, which would wait for a FIFO's writer). */
	if ((strcmp(r->o.val, "-") == 0 ? fstat(0, &st) : stat(r->o.val, &st)) == 0 &&
	    !S_ISREG(st.st_mode))
		die("--val: %s: not a regular file (it is read at every validation)",
		    r->o.val);
	if (strcmp(r->o.val, "-") != 0 && access(r->o.val, R_OK) != 0)
		die_errno("--val: %s", r->o.val);
	fp = cli_open_in(r->o.val, name);
	vt_init(vs);
	if (vt_read_header(vs, fp, *name) < 0 ||
	    batch_open_model(vbr, vs, &r->meta, r->m->c.P, r->m->c.axes,
	    r->m->c.classes, 1) < 0)
		die("--val: %s", vs->err);
	char why[512];
	if (r->st.step == 0 && pe_conv_check(vt_meta(&r->meta, "POS"), vt_meta(vs, "POS"),
	    why, sizeof why) < 0)
		cli_warn("--val: %s: %s", *name, why);
	return fp;
}

/* Accuracy and loss on the --val stream: logged, shown, kept in the
 * checkpoint's keys, and the model written to --best when it is the best
 * so far.  Top-5 only over more than 5 classes, where it says something. */
static void
validate(struct run *r)
{
	struct vt vs;
	struct batch_reader vbr;
	struct eval_out out = { 0 };
	struct eval_summary sum;
	char err[512], t5[64] = "";
	const char *name;
	FILE *fp;
	int top5 = r->m->c.classes > 5;
	long long step = r->st.step, epoch = r->st.epoch;

	if (r->d.rank != 0) {	/* the others go on to the next step's sums */
		r->val_step = r->st.step;
		return;
	}
	fp = open_val(r, &vs, &vbr, &name);

	if (evaluate(&r->m, &vbr, (int)r->o.t.batch, NULL, &out, err, sizeof err) < 0)
		die("--val: %s", err);
	r->val_step = r->st.step;
	if (eval_summarize(&out, 0, 0.95, 0, &sum) < 0)
		die("--val: %s: no records", name);
	if (top5)
		snprintf(t5, sizeof t5, ",\"val_top5\":%.6f", sum.top5.mean);
	log_line(r, "{\"step\":%lld,\"epoch\":%lld,\"val_acc\":%.6f%s,"
	    "\"val_loss\":%.6f}\n", step, epoch, sum.top1.mean, t5, sum.loss.mean);
	if (top5)
		snprintf(t5, sizeof t5, " top-5 %.2f%%", 100 * sum.top5.mean);
	say(r, "epoch %lld step %lld: val top-1 %.2f%%%s loss %.4f", epoch, step,
	    100 * sum.top1.mean, t5, sum.loss.mean);
	meta_num(&r->meta, "VAL_ACC", 0, &sum.top1.mean);
	if (top5)
		meta_num(&r->meta, "VAL_TOP5", 0, &sum.top5.mean);
	meta_num(&r->meta, "VAL_LOSS", 0, &sum.loss.mean);
	meta_num(&r->meta, "VAL_STEP", 1, &r->st.step);
	meta_num(&r->meta, "VAL_EPOCH", 1, &r->st.epoch);
	r->since_best++;
	if (sum.top1.mean > r->best_acc) {
		r->since_best = 0;
		r->best_acc = sum.top1.mean;
		r->best_epoch = r->st.epoch;
		meta_num(&r->meta, "BEST_VAL_ACC", 0, &r->best_acc);
		meta_num(&r->meta, "BEST_EPOCH", 1, &r->best_epoch);
		meta_num(&r->meta, "BEST_STEP", 1, &r->st.step);
		if (r->o.best != NULL)
			write_model(r, r->o.best, 0);
	}
	meta_num(&r->meta, "VAL_SINCE_BEST", 1, &r->since_best);
	eval_free(&out);
	vt_free(&vs);
	fclose(fp);
}

/* --patience validations have passed without a better top-1: the run
 * ends, its best model in --best. */
static int
out_of_patience(struct run *r)
{
	if (r->o.t.patience == 0 || r->since_best < r->o.t.patience)
		return 0;
	say(r, "no better val top-1 in %lld validations: stopping early (best %.2f%%, "
	    "epoch %lld)", (long long)r->since_best, 100 * r->best_acc,
	    (long long)r->best_epoch);
	return 1;
}

/* An epoch ended: validate and checkpoint when due. */
static void
epoch_end(struct run *r)
{
	r->st.epoch++;
	if (r->o.val != NULL && r->st.epoch % r->o.t.val_every == 0 &&
	    r->val_step != r->st.step)
		validate(r);
	if (r->st.epoch % r->o.t.save_every == 0)
		save(r);
}

/* Soft targets of the batch: one-hot labels with label smoothing. */
static void
targets(struct run *r, int n)
{
	int C = r->m->c.classes;
	float off = (float)(r->o.t.smoothing / C), on = (float)(1 - r->o.t.smoothing) + off;

	for (int i = 0; i < n; i++)
		for (int c = 0; c < C; c++)
			r->target[(int64_t)i * C + c] = c == r->b.label[i] ? on : off;
}

/* Stop at the step under way for why, something not finite, naming the
 * checkpoint of the last good weights: no checkpoint is written after
 * (ckpt_save refuses non-finite weights), so it holds them. */
static void
nonfinite(struct run *r, const char *why)
{
	if (r->saved_step >= 0)
		die("step %lld: %s: stopping; the last good checkpoint is %s "
		    "(step %lld)", (long long)r->st.step + 1, why, r->o.out,
		    (long long)r->saved_step);
	die("step %lld: %s: stopping%s", (long long)r->st.step + 1, why,
	    r->o.out ? "; no checkpoint was written yet" : "");
}

/* Mark the moment t when seen records in all have been trained on. */
static void
rate_mark(struct rate *q, double t, int64_t seen)
{
	q->t[q->n % RATE_MARKS] = t;
	q->seen[q->n % RATE_MARKS] = seen;
	q->n++;
}

/* A step ended at t with seen records in all: its img_s, the records over
 * the wall time since the newest mark at least RATE_WINDOW old (else the
 * oldest kept): reading the input, steps, validations and checkpoints. */
static double
rate_step(struct rate *q, double t, int64_t seen)
{
	int kept = q->n < RATE_MARKS ? q->n : RATE_MARKS, j = 0;

	for (int i = 1; i <= kept; i++) {
		j = (q->n - i) % RATE_MARKS;
		if (t - q->t[j] >= RATE_WINDOW)
			break;
	}
	double dt = t - q->t[j], v = dt > 0 ? (seen - q->seen[j]) / dt : 0;
	rate_mark(q, t, seen);
	return v;
}

/* One optimizer step over up to accum micro-batches; the records it took
 * (0: this pass of the input is over). */
static int64_t
train_step(struct run *r)
{
	const struct opts *o = &r->o;
	struct dist *d = &r->d;
	int64_t nstep = 0;
	int last = 0, C = r->m->c.classes;
	double lsum = 0;
	char err[512];

	d->comm = 0;
	r->at_step = r->st;
	vit_zero_grad(r->m);
	for (int64_t micro = 0; micro < o->t.accum; micro++) {
		int k = (int)fetch(r, room(r));	/* over all ranks */
		if (k == 0)
			break;
		int64_t idx = r->st.step * o->t.accum + micro;
		struct rng g;
		if (d->whole) {
			targets(r, k);
			if (o->t.mixup > 0) {
				draw(&g, (uint64_t)o->t.seed, DRAW_MIXUP, idx);
				mixup_batch(&g, o->t.mixup, r->b.x, (int64_t)r->b.T * r->b.P,
				    r->target, C, k, r->perm);
			}
		}
		if (dist_scatter(d, &r->b, r->target, C, err, sizeof err) < 0)
			die("%s: %s", r->name, err);
		nstep += k;
		r->st.inpass += k;
		r->st.seen += k;
		int end = micro == o->t.accum - 1 || (r->E > 0 && r->st.inpass % r->E == 0);
		int n = d->n;	/* this rank's share */
		if (n > 0) {
			struct batch v;
			dist_view(d, &r->b, &v);
			/* Keep grad = sum_j (n_j / n) g_j over the micro-batches so
			 * far, g_j the mean gradient of micro-batch j: a step's
			 * gradient is the mean over all its records whatever their
			 * split. */
			if (last != 0 && n != last)
				vit_scale_grad(r->m, (float)last / n);
			if (vit_fit(&r->m, &v, err, sizeof err) < 0)
				die("%s: %s", r->name, err);
			/* the micro-batches' dL/dR summed, through expm's adjoint once */
			vit_defer_rotation_grad(r->m, o->t.accum > 1);
			if (end)
				dist_arm(d, r->m, (float)n / nstep);
			r->m->first_record = d->lo;
			draw(&g, (uint64_t)o->t.seed, DRAW_DROPOUT, idx);
			float loss = vit_forward(r->m, v.x, v.pos, n, v.T,
			    r->target + (int64_t)d->at * C, r->logits, 1, rng_u64(&g));
			if (!isfinite(loss)) {
				snprintf(err, sizeof err, "the loss is %g", loss);
				nonfinite(r, err);
			}
			vit_backward(r->m);
			lsum += (double)loss * n;
			last = n;
		}
		if (end)
			break;
	}
	vit_grad_complete(r->m);
	if (nstep == 0)
		return 0;
	/* the mean over the step's records on every rank, summed */
	if (dist_reduce(d, r->m, (float)last / nstep, &lsum, err, sizeof err) < 0)
		die("%s", err);
	double norm = sqrt(vit_grad_sumsq(r->m));
	if (!isfinite(norm)) {
		snprintf(err, sizeof err, "the gradient norm is %g", norm);
		nonfinite(r, err);
	}
	grad_clip(r->m->grad, (int64_t)r->m->nparam, norm, o->t.clip);
	double lr = lr_schedule(r->st.step, r->st.total, o->t.warmup, o->t.lr, o->t.lr_min);
	for (int t = 0; t < r->m->ntensor; t++) {
		const struct vit_tensor *w = &r->m->tensor[t];
		adamw_update(&r->adam, r->m->param + w->off, r->m->grad + w->off,
		    r->m->adam_m + w->off, r->m->adam_v + w->off, (int64_t)w->n, lr,
		    w->decay ? o->t.wd : 0, r->st.step + 1);
	}
	/* a finite loss and gradient may still step past a float (--lr 1e6) */
	char why[256];
	if (vit_finite(r->m, 1, why, sizeof why) < 0) {
		snprintf(err, sizeof err, "after the update (learning rate %g), %s", lr, why);
		nonfinite(r, err);
	}
	r->st.step++;
	r->train_loss = lsum / nstep;

	double now = now_seconds(), img_s = rate_step(&r->rate, now, r->st.seen);
	double epoch = r->E > 0 ? r->st.epoch + (double)(r->st.inpass % r->E) / r->E
	    : (double)r->st.epoch;
	if (r->E > 0 && r->st.inpass % r->E == 0)
		epoch += 1;	/* epoch_end() comes next */
	char comm[128] = "";
	if (r->d.size > 1)
		snprintf(comm, sizeof comm, ",\"comm_s\":%.4f,\"allreduce_s\":%.4f,"
		    "\"exposed_s\":%.4f", r->d.comm, r->d.sums, r->d.exposed);
	log_line(r, "{\"step\":%lld,\"epoch\":%.4f,\"loss\":%.6f,\"lr\":%.6g,"
	    "\"img_s\":%.1f%s}\n", (long long)r->st.step, epoch, r->train_loss, lr,
	    img_s, comm);
	char msg[128];
	snprintf(msg, sizeof msg, "epoch %.2f loss %.4f %.0f img/s", epoch,
	    r->train_loss, img_s);
	progress_show(&r->pr, r->st.step, msg);
	/* a batch job's log: a whole line every --progress seconds */
	if (o->progress > 0 && !isatty(STDERR_FILENO) && now - r->last_note >= o->progress) {
		r->last_note = now;
		say(r, "step %lld of %lld, %s", (long long)r->st.step, (long long)r->st.total,
		    msg);
	}
	return nstep;
}

/* The run's last line on stderr: where it ended, the last step's loss,
 * the best validation, and this process's wall time and records per
 * second of it. */
static void
summary(struct run *r)
{
	double t = now_seconds() - r->t_start;
	char loss[64] = "", best[96] = "";

	if (!isnan(r->train_loss))
		snprintf(loss, sizeof loss, ", train loss %.4f", r->train_loss);
	if (r->o.val != NULL && r->best_acc >= 0)
		snprintf(best, sizeof best, ", best val top-1 %.2f%% (epoch %lld)",
		    100 * r->best_acc, (long long)r->best_epoch);
	say(r, "done: step %lld epoch %lld%s%s, %.1f s, %.0f img/s",
	    (long long)r->st.step, (long long)r->st.epoch, loss, best, t,
	    t > 0 ? (r->st.seen - r->seen_start) / t : 0);
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
same_options(struct run *r, const struct opts *want, const char *had_pos)
{
	const struct vit_config *c = &r->m->c;
	char a[64], b[64];

	for (const struct train_key *t = train_keys_table; t->key != NULL; t++) {
		if (t->part != TRAIN_OPTS)
			continue;
		const char *pw = (const char *)&want->t + t->off;
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
			snprintf(a, sizeof a, "dim %d depth %d heads %d mlp %d", want->c.dim,
			    want->c.depth, want->c.heads, want->c.mlp);
			snprintf(b, sizeof b, "dim %d depth %d heads %d mlp %d", c->dim, c->depth,
			    c->heads, c->mlp);
			same(option_name(shape[k]), strcmp(a, b) != 0, a, b);
		}
	if (given(want, OPT_PE)) {
		struct pe pe;
		int ok = pe_parse(&pe, want->c.pe, c->dim / c->heads, c->axes, c->heads,
		    c->depth, pe_share_name(c->share)) == 0;
		same("pe", !ok || strcmp(pe.spec, c->pe) != 0, want->c.pe, c->pe);
	}
	if (given(want, OPT_SHARE))
		same("share", want->c.share != c->share, pe_share_name(want->c.share),
		    pe_share_name(c->share));
	if (given(want, OPT_CLASSES)) {
		snprintf(a, sizeof a, "%d", want->classes);
		snprintf(b, sizeof b, "%d", c->classes);
		same("classes", want->classes != c->classes, a, b);
	}
	if (given(want, OPT_LOCALITY))
		same("locality", !c->locality, "", "no locality focusing");
	if (given(want, OPT_POOL))
		same("pool", want->c.pool != c->pool, want->c.pool ? "mean" : "cls",
		    c->pool ? "mean" : "cls");
	if (given(want, OPT_POSITIONS))
		same("positions", want->stream_positions != (strncmp(had_pos, "stream", 6) == 0),
		    want->stream_positions ? "stream" : "native", had_pos);
	static const struct { int opt; size_t off; } num[] = {
		{ OPT_SIGMA, offsetof(struct vit_config, sigma) },
		{ OPT_DROPOUT, offsetof(struct vit_config, dropout) },
		{ OPT_EMB_DROPOUT, offsetof(struct vit_config, emb_dropout) },
	};
	for (size_t k = 0; k < sizeof num / sizeof *num; k++) {
		float w = *(const float *)(const void *)((const char *)&want->c + num[k].off);
		float h = *(const float *)(const void *)((const char *)c + num[k].off);
		snprintf(a, sizeof a, "%.9g", w);
		snprintf(b, sizeof b, "%.9g", h);
		if (given(want, num[k].opt))
			same(option_name(num[k].opt), w != h, a, b);
	}
}

/* A stream, read once, ended before the epochs or steps asked for: the
 * checkpoint keeps the run, not marked done, and the exit says so. */
static void
ended_early(struct run *r)
{
	char want[64];

	if (stop_sig)
		interrupted(r, 0);
	if (r->o.t.steps > 0)
		snprintf(want, sizeof want, "step %lld of %lld", (long long)r->st.step,
		    (long long)r->o.t.steps);
	else
		snprintf(want, sizeof want, "%lld of %lld epochs", (long long)r->st.epoch,
		    (long long)r->nepoch);
	if (r->o.out != NULL && r->saved_step != r->st.step)
		save(r);
	progress_end(&r->pr);
	if (r->o.out != NULL)
		die("%s: ended after %s; %s holds the run, not finished (a file, not a pipe, "
		    "is read again)", r->name, want, r->o.out);
	die("%s: ended after %s (a file, not a pipe, is read again)", r->name, want);
}

/* Load the checkpoint at --out and put the run where it stopped. */
static void
resume(struct run *r)
{
	struct vt ck;
	char err[512];

	if ((r->m = ckpt_load(r->o.out, &ck, (int)r->o.t.batch, 0, 1, err,
	    sizeof err)) == NULL)
		die("--resume: %s", err);
	struct opts want = r->o;
	struct train_keys k;
	train_defaults(&k);
	k.o = r->o.t;
	k.o.shuffle = 0;	/* a checkpoint without TRAIN_SHUFFLE never shuffled */
	if (train_keys_read(&ck, r->o.out, &k, err, sizeof err) < 0)
		die("--resume: %s", err);
	r->o.t = k.o;
	same_options(r, &want, vt_meta(&ck, "POSITIONS") ? vt_meta(&ck, "POSITIONS") : "native");
	r->st = k.st;
	/* What it knew of its validations and loss, absent before the first */
	r->val_step = k.past.val_step;
	r->best_acc = k.past.best_acc;
	r->best_epoch = k.past.best_epoch;
	r->train_loss = k.past.loss;
	r->since_best = k.past.since_best;
	int64_t threads = k.past.threads, ranks = k.past.ranks;
	if (!r->o.threads_given && threads != r->threads)
		r->threads = cli_threads((int)threads);
	if (threads != r->threads && r->d.rank == 0)
		cli_warn("--resume: %d threads, the run began with %lld: the result "
		    "will not be bitwise the uninterrupted run's", r->threads,
		    (long long)threads);
	const char *prec = vt_meta(&ck, "TRAIN_PRECISION");
	if (prec != NULL && !r->o.prec_given)
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
	if (sums != NULL && !r->o.sums_given)
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
	vt_init(&r->meta);
	for (int i = 0; i < ck.nmeta; i++)
		if (vt_meta_add(&r->meta, ck.meta[i].key, ck.meta[i].val) < 0)
			die("%s", r->meta.err);
	vt_free(&ck);
	r->saved_step = r->st.step;
	r->st.done &= !r->extend;
	if (r->st.done) {
		if (r->d.rank == 0)
			cli_warn("%s: the run it holds is finished; nothing to do",
			    r->o.out);
		dist_end(&r->d);
		exit(0);
	}
}

int
main(int argc, char *argv[])
{
	struct run r;
	char err[256];

	cli_init(argc, argv);
	memset(&r, 0, sizeof r);
	parse(argc, argv, &r.o);
	r.threads = cli_threads(r.o.threads);
	if (dist_init(&r.d, err, sizeof err) < 0)
		die("%s", err);
	r.d.timeout = r.o.timeout;
	r.saved_step = -1;
	r.val_step = -1;
	r.train_loss = NAN;
	r.best_acc = -1;
	r.log = -1;
	adamw_defaults(&r.adam);

	if (r.o.resume)
		resume(&r);
	r.d.bf16 = r.o.bf16_sums;
	if (r.o.t.batch < r.d.size)
		usage_error("--batch %lld: fewer records than the %d ranks",
		    (long long)r.o.t.batch, r.d.size);
	if (r.o.t.patience > 0 && r.d.size > 1)	/* rank 0 alone validates */
		usage_error("--patience: one process only");
	r.t_start = r.last_note = now_seconds();
	r.seen_start = r.st.seen;
	rate_mark(&r.rate, r.t_start, r.seen_start);
	if (r.o.resume) {
		int64_t inpass = r.st.inpass;
		open_pass(&r);
		if (r.st.pass > 0 && r.stream)
			die("--resume: the run was reading its input file for the %lld. "
			    "time: give that file, not %s, which is read once",
			    (long long)r.st.pass + 1, r.name);
		const char *had = vt_meta(&r.meta, "TRAIN_INPUT");
		if (had != NULL && !r.o.force && r.d.rank == 0)
			same_input(&r, had);
		if (dist_skip(&r.d, &r.br, inpass) < 0)
			die("--resume: %s", r.s.err);
		r.st.inpass = inpass;
	} else {
		open_pass(&r);
		build_model(&r);
		fresh_meta(&r, argc, argv);
	}
	r.m->prec = r.o.prec;
	if (dist_same(&r.d, r.m, err, sizeof err) < 0)
		die("%s", err);
	r.adam.beta1 = r.o.t.beta1;
	r.adam.beta2 = r.o.t.beta2;
	r.adam.eps = r.o.t.eps;
	/* Without --epochs, --steps reads a file as often as it takes; else
	 * the epochs the input holds. */
	r.nepoch = r.o.t.epochs;
	if (r.nepoch == 0 && r.o.t.steps == 0 && r.E > 0 && r.s.records > 0)
		r.nepoch = (r.s.records + r.E - 1) / r.E;
	if (!r.o.resume || r.extend)
		r.st.total = schedule_steps(&r);
	if (r.o.val != NULL && r.d.rank == 0) {
		/* Bad --val input fails now, not after the first epoch. */
		struct vt vs;
		struct batch_reader vbr;
		const char *name;
		fclose(open_val(&r, &vs, &vbr, &name));
		vt_free(&vs);
	}
	int C = r.m->c.classes;
	r.target = malloc((size_t)r.o.t.batch * C * sizeof *r.target);
	r.logits = malloc((size_t)r.o.t.batch * C * sizeof *r.logits);
	r.perm = malloc((size_t)r.o.t.batch * sizeof *r.perm);
	if (r.target == NULL || r.logits == NULL || r.perm == NULL)
		die("out of memory");
	if (r.o.log != NULL && r.d.rank == 0)
		open_log(&r);

	progress_start(&r.pr, r.st.total);
	if (r.d.size == 1)
		catch_stop();
	for (;;) {
		if (stop_sig)
			interrupted(&r, 0);
		if (out_of_patience(&r))
			break;
		if (r.o.t.steps > 0 && r.st.step >= r.o.t.steps)
			break;
		if (r.nepoch > 0 && r.st.epoch >= r.nepoch)
			break;
		if (train_step(&r) > 0) {
			if (r.o.val != NULL && r.o.t.val_steps > 0 &&
			    r.st.step % r.o.t.val_steps == 0)
				validate(&r);
			if (r.E > 0 && r.st.inpass % r.E == 0)
				epoch_end(&r);
			if (r.o.t.save_steps > 0 && r.st.step % r.o.t.save_steps == 0 &&
			    r.saved_step != r.st.step)
				save(&r);
			continue;
		}
		/* This pass of the input is over. */
		if (r.st.inpass == 0)
			die("%s: no records", r.name);
		int partial = r.E == 0 || r.st.inpass % r.E != 0;
		r.st.pass++;
		r.st.inpass = 0;
		if (partial)
			epoch_end(&r);
		if (r.o.t.steps > 0 ? r.nepoch > 0 && r.st.epoch >= r.nepoch :
		    r.nepoch == 0 || r.st.epoch >= r.nepoch)
			break;
		if (r.stream)
			ended_early(&r);
		open_pass(&r);
	}
	progress_end(&r.pr);
	if (r.o.val != NULL && r.val_step != r.st.step)
		validate(&r);
	r.st.done = 1;
	save(&r);
	summary(&r);
	if (r.log >= 0 && close(r.log) < 0)
		die_errno("%s", r.o.log);
	free(r.target);
	free(r.logits);
	free(r.perm);
	batch_close(&r.br);
	batch_free(&r.b);
	vt_free(&r.s);
	vt_free(&r.meta);
	vit_destroy(r.m);
	if (r.fp != NULL && r.fp != stdin)
		fclose(r.fp);
	dist_end(&r.d);
	return 0;
}
