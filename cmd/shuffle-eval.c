/*
 * shuffle-eval - how much a model relies on where its patches are: the
 * accuracy on a stream, then with the patch contents of every record
 * permuted (positions and CLS left in place) over K seeded trials, and the
 * relative drop (the LieRE paper's Table 3).  The evaluation is lib's
 * evaluate(); this file only permutes, before each forward.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "checkpoint.h"
#include "cli.h"
#include "cliopt.h"
#include "evaluate.h"
#include "pe_conv.h"
#include "posmap.h"
#include "rng.h"
#include "vit.h"
#include "vt.h"
#include "vtcopy.h"

struct opts {
	int	 trials;	/* K */
	uint64_t seed;
	int	 frames;	/* --axis t: permute whole frames */
	int	 batch;
	int	 threads;
	enum gemm_prec prec;
	int	 json;
	int	 header;	/* table: print the column line */
	long long emit;		/* >= 0: write trial emit's shuffled stream */
	int	 force;
	const char *spill_dir;	/* where a pipe's records are kept */
	long long spill_max;	/* MiB they may take */
	const char *model;
	const char *input;
};

/* What the permuting hook needs; scratch grows with the token count. */
struct shuffler {
	const struct opts *o;
	int	 trial;		/* -1: leave the batch alone */
	int64_t	*perm;		/* [cap] */
	unsigned char *tmp;	/* [tmpcap] one record's rows */
	int64_t	 cap;
	size_t	 tmpcap;
	struct err err;		/* why a batch was not shuffled */
};

enum { OPT_SEED = CLI_OPT_LONG, OPT_AXIS, OPT_EMIT, OPT_THREADS, OPT_PRECISION,
	OPT_JSON, OPT_NO_HEADER, OPT_FORCE, OPT_SPILL_DIR, OPT_SPILL_MAX };

static const struct cli_opt options[] = {
	{ "trials", 'k', "K", "shuffled trials (default 5)" },
	{ "seed", OPT_SEED, "S", "seed of the permutations (default 1)" },
	{ "axis", OPT_AXIS, "all|t",
	    "shuffle every token (default) or whole frames only (video)" },
	{ "emit", OPT_EMIT, "K", "write trial K's shuffled stream instead (no MODEL)" },
	{ "batch", 'b', "N", "records per forward pass (default 64)" },
	{ "threads", OPT_THREADS, "N", "threads (0: all cores)" },
	{ "precision", OPT_PRECISION, "fp32|bf16",
	    "the products' precision (fp32; bf16: bf16 operands, fp32 sums)" },
	{ "json", OPT_JSON, NULL, "one JSON object instead of the table row" },
	{ "no-header", OPT_NO_HEADER, NULL, "the table row without its column line" },
	{ "force", OPT_FORCE, NULL, "--emit: write the stream even to a terminal" },
	{ "spill-dir", OPT_SPILL_DIR, "D",
	    "keep a pipe's records in D (default $TMPDIR, else /tmp)" },
	{ "spill-max", OPT_SPILL_MAX, "M", "at most M MiB of them (default 8192)" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd command = {
	"[options] MODEL [STREAM]\n"
	"       shuffle-eval --emit K [options] [STREAM]",
	"Accuracy of MODEL (a vit-train checkpoint) on a stream, then with the patches\n"
	"of every record shuffled (positions and CLS in place) over K seeded trials:\n"
	"before, after (mean and standard deviation) and the relative drop in percent.",
	options, NULL
};

static void
parse(int argc, char *argv[], struct opts *o)
{
	int c, ops, evalopt = 0;

	*o = (struct opts){ .trials = 5, .seed = 1, .batch = 64, .header = 1, .emit = -1,
	    .spill_max = 8192 };
	o->spill_dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	while ((c = cli_getopt(argc, argv, &command)) != -1)
		switch (c) {
		case 'k': o->trials = (int)cli_int("--trials", optarg, 1, 100000); evalopt = 1; break;
		case OPT_SEED: o->seed = cli_opt_seed(optarg); break;
		case OPT_AXIS:
			if (strcmp(optarg, "all") && strcmp(optarg, "t"))
				usage_error("--axis: '%s' is not all or t", optarg);
			o->frames = strcmp(optarg, "t") == 0;
			break;
		case OPT_EMIT: o->emit = cli_int("--emit", optarg, 0, INT32_MAX); break;
		case 'b': o->batch = (int)cli_int("--batch", optarg, 1, 1 << 16); evalopt = 1; break;
		case OPT_THREADS: o->threads = cli_opt_threads(optarg); evalopt = 1; break;
		case OPT_PRECISION:
			o->prec = cli_opt_precision(optarg);
			evalopt = 1;
			break;
		case OPT_JSON: o->json = 1; evalopt = 1; break;
		case OPT_NO_HEADER: o->header = 0; evalopt = 1; break;
		case OPT_FORCE: o->force = 1; break;
		case OPT_SPILL_DIR: o->spill_dir = optarg; evalopt = 1; break;
		case OPT_SPILL_MAX: o->spill_max = cli_int("--spill-max", optarg, 1, 1LL << 40); evalopt = 1; break;
		}
	ops = argc - optind;
	if (o->emit >= 0) {
		if (evalopt)
			usage_error("--emit writes a stream: -k, --batch, --threads, --json, --no-header "
			    "and --spill-* do not apply");
		if (ops > 1)
			usage_error("--emit takes one STREAM at most (and no MODEL)");
		o->input = ops ? argv[optind] : NULL;
		return;
	}
	if (o->force)
		usage_error("--force is for --emit");
	if (ops < 1)
		usage_error("no MODEL");
	if (ops > 2)
		usage_error("too many operands");
	o->model = argv[optind];
	o->input = ops == 2 ? argv[optind + 1] : NULL;
}

/* The units that move for a record of T tokens at pos[T][A]: T single
 * tokens, or with --axis t the frames, runs of tokens sharing their first
 * coordinate (time outermost).  Sets *units and *run (tokens per unit). */
static int
units_of(const struct opts *o, const float *pos, int T, int A, int *units, int *run,
    struct err *e)
{
	int f = 1;

	*units = T;
	*run = 1;
	if (!o->frames)
		return 0;
	if (A < 3)
		return err_set(e, "--axis t needs positions (t, y, x), these have %d axes", A);
	for (int t = 1; t < T; t++)
		f += pos[(int64_t)t * A] != pos[(int64_t)(t - 1) * A];
	for (int t = 0; t < T && T % f == 0; t++)
		if (pos[(int64_t)t * A] != pos[(int64_t)(t - t % (T / f)) * A])
			f = 0;
	if (f == 0 || T % f)
		return err_set(e, "--axis t: the %d tokens are not whole frames in time order", T);
	*units = f;
	*run = T / f;
	return 0;
}

/* Permute the units of record rec (stream index) for trial k in place:
 * rows[T][rowbytes], unit u of the result is unit perm[u] of the input.
 * The permutation depends on (seed, k, rec) only. */
static int
shuffle_record(struct shuffler *sh, unsigned char *rows, size_t rowbytes, int units,
    int run, int64_t rec)
{
	struct rng trial, r;
	size_t unit = (size_t)run * rowbytes, need = unit * units;

	if (units > sh->cap) {
		int64_t *p = realloc(sh->perm, (size_t)units * sizeof *p);
		if (p == NULL)
			return -1;
		sh->perm = p;
		sh->cap = units;
	}
	if (need > sh->tmpcap) {
		unsigned char *p = realloc(sh->tmp, need);
		if (p == NULL)
			return -1;
		sh->tmp = p;
		sh->tmpcap = need;
	}
	rng_seed(&trial, sh->o->seed, (uint64_t)sh->trial);
	rng_split(&trial, (uint64_t)rec, &r);
	for (int u = 0; u < units; u++)
		sh->perm[u] = u;
	rng_shuffle(&r, sh->perm, units);
	memcpy(sh->tmp, rows, need);
	for (int u = 0; u < units; u++)
		memcpy(rows + u * unit, sh->tmp + sh->perm[u] * unit, unit);
	return 0;
}

/* evaluate()'s hook: shuffle every record of the batch for this trial. */
static void
shuffle_batch(void *ctx, struct batch *b)
{
	struct shuffler *sh = ctx;
	size_t rowbytes = (size_t)b->P * sizeof *b->x;

	if (sh->trial < 0 || sh->err.msg[0])
		return;
	for (int i = 0; i < b->n; i++) {
		int units, run;
		float *x = b->x + (int64_t)i * b->T * b->P;

		if (units_of(sh->o, b->pos + (int64_t)i * b->T * b->A, b->T, b->A, &units, &run,
		    &sh->err) < 0)
			return;
		if (shuffle_record(sh, (unsigned char *)x, rowbytes, units, run, b->first + i) < 0) {
			err_set(&sh->err, "out of memory");
			return;
		}
	}
}

/* The stream again from its start: a file is rewound; stdin or a pipe was
 * spilled to a temporary file by open_input. */
static void
rewind_input(FILE *fp, struct vt *s, const char *name)
{
	if (fseeko(fp, 0, SEEK_SET) < 0)
		die_errno("%s: cannot rewind", name);
	vt_free(s);
	vt_init(s);
	if (vt_read_header(s, fp, name) < 0)
		die("%s", s->err.msg);
}

/* The fields the passes read (batch.h): the others are not kept. */
static int
needed(const char *field)
{
	return strcmp(field, "patch") == 0 || strcmp(field, "pos") == 0 ||
	    strcmp(field, "label") == 0;
}

/* Copy the records of s, a stream from a pipe whose header is read, to a
 * new stream of its needed fields in a deleted temporary file of
 * o->spill_dir, at most o->spill_max MiB; that file, at its start. */
static FILE *
spill(const struct opts *o, struct vt *s, const char *name)
{
	char path[4096];
	struct vt out;
	FILE *fp;
	int fd, r, k[VT_MAXFIELDS], n = 0;

	if (snprintf(path, sizeof path, "%s/shuffle-eval.XXXXXX", o->spill_dir) >=
	    (int)sizeof path)
		die("--spill-dir: %s: name too long", o->spill_dir);
	if ((fd = mkstemp(path)) < 0 || unlink(path) < 0 || (fp = fdopen(fd, "w+b")) == NULL)
		die_errno("--spill-dir: %s: temporary file for %s", o->spill_dir, name);
	vt_init(&out);
	out.align = s->align;
	out.records = s->records;
	for (int i = 0; i < s->nfield; i++) {
		const struct vt_field *f = &s->field[i];
		if (!needed(f->name)) {
			vt_skip(s, i);
			continue;
		}
		if (vt_add_field(&out, f->name, f->dtype, f->rank, f->dim) < 0)
			die("%s", out.err.msg);
		k[n++] = i;
	}
	for (int i = 0; i < s->nmeta; i++)
		if (vt_meta_add(&out, s->meta[i].key, s->meta[i].val) < 0)
			die("%s", out.err.msg);
	if (vt_write_header(&out, fp, path) < 0)
		die("%s", out.err.msg);
	while ((r = vt_read_record(s)) == 1) {
		for (int j = 0; j < n; j++) {
			const struct vt_field *f = &s->field[k[j]];
			if (vt_set_shape(&out, j, f->shape) < 0)
				die("%s", out.err.msg);
			memcpy(out.field[j].data, f->data, f->nbytes);
		}
		if (vt_write_record(&out) < 0)
			die("--spill-dir: %s", out.err.msg);
		if (ftello(fp) > o->spill_max << 20)
			die("%s: record %lld: more than --spill-max %lld MiB to keep for the "
			    "trials: give the stream as a file, or a larger --spill-max",
			    name, (long long)s->recno, o->spill_max);
	}
	if (r < 0)
		die("%s", s->err.msg);
	if (fflush(fp) == EOF || ferror(fp))
		die_errno("--spill-dir: %s: temporary file for %s", o->spill_dir, name);
	vt_free(&out);
	return fp;
}

/* The stream, for K + 1 passes: a file as it is, stdin or a pipe spilled
 * once its header is read and found to suit the model of checkpoint ck. */
static FILE *
open_input(const struct opts *o, const struct vit *m, const struct vt *ck,
    const char **name)
{
	FILE *fp = cli_open_in(o->input, name), *tmp;
	struct batch_reader br;
	struct vt s;

	if (fseeko(fp, 0, SEEK_SET) == 0)
		return fp;
	vt_init(&s);
	if (vt_read_header(&s, fp, *name) < 0 ||
	    batch_open_model(&br, &s, ck, m->c.P, m->c.axes, m->c.classes, 1) < 0)
		die("%s", s.err.msg);
	tmp = spill(o, &s, *name);
	vt_free(&s);
	if (fp != stdin)
		fclose(fp);
	return tmp;
}

/* --emit: the stream with trial k's permutation applied to every record. */
static void
emit(const struct opts *o, int argc, char *argv[])
{
	struct vt s, out;
	struct shuffler sh = { .o = o, .trial = (int)o->emit };
	const char *name;
	FILE *fp = cli_open_in(o->input, &name);
	int ip, ipos, r;
	struct err e;

	vt_init(&s);
	if (vt_read_header(&s, fp, name) < 0)
		die("%s", s.err.msg);
	ip = vt_find(&s, "patch");
	ipos = vt_find(&s, "pos");
	if (ip < 0 || ipos < 0 || s.field[ip].rank != 2 || s.field[ipos].rank != 2 ||
	    s.field[ipos].dtype != VT_F32)
		die("%s: needs fields patch [T][P] and pos f32 [T][A]", name);
	vt_init(&out);
	if (vt_copy_header(&out, &s) < 0 || vt_history(&out, argc, argv) < 0)
		die("%s", out.err.msg);
	cli_binary_stdout(o->force);
	if (vt_write_header(&out, stdout, "stdout") < 0)
		die("%s", out.err.msg);
	while ((r = vt_read_record(&s)) == 1) {
		struct vt_field *p = &s.field[ip], *q = &s.field[ipos];
		int units, run;

		if (p->shape[0] != q->shape[0])
			die("%s: record %lld: %lld patches but %lld positions", name,
			    (long long)s.recno, (long long)p->shape[0], (long long)q->shape[0]);
		if (units_of(o, q->data, (int)p->shape[0], (int)q->shape[1], &units, &run,
		    &e) < 0)
			die("%s: record %lld: %s", name, (long long)s.recno, e.msg);
		if (shuffle_record(&sh, p->data, (size_t)p->shape[1] * vt_dtype_size(p->dtype),
		    units, run, s.recno - 1) < 0)
			die("out of memory");
		if (vt_copy_record(&out, &s) < 0 || vt_write_record(&out) < 0)
			die("%s", out.err.msg);
	}
	if (r < 0)
		die("%s", s.err.msg);
	free(sh.perm);
	free(sh.tmp);
	vt_free(&out);
	vt_free(&s);
}

/* Top-1 accuracy of one pass over the stream (trial -1: unshuffled) by the
 * model *m of checkpoint keys ck. */
static double
pass(struct vit **m, const struct vt *ck, FILE *fp, struct vt *s, const char *name,
    struct shuffler *sh, int trial, int64_t *records)
{
	struct batch_reader br;
	struct eval_out out = { 0 };
	struct eval_summary sum;
	struct eval_hooks hooks = { shuffle_batch, NULL, sh };
	struct err e;

	rewind_input(fp, s, name);
	if (batch_open_model(&br, s, ck, (*m)->c.P, (*m)->c.axes, (*m)->c.classes, 1) < 0)
		die("%s", s->err.msg);
	if (posmap_stream(&(*m)->c, ck, s, &e) < 0)
		die("%s: %s", name, e.msg);
	sh->trial = trial;
	if (evaluate(m, &br, sh->o->batch, &hooks, &out, &e) < 0)
		die("%s", e.msg);
	if (sh->err.msg[0])
		die("%s: %s", name, sh->err.msg);
	if (eval_summarize(&out, 0, 0.95, 0, &sum) < 0)
		die("%s: no labelled records", name);
	*records = sum.n;
	eval_free(&out);
	return sum.top1.mean;
}

int
main(int argc, char *argv[])
{
	struct opts o;
	struct vt ms, s;
	struct vit *m;
	struct shuffler sh = { 0 };
	const char *name;
	double before, *after, mean = 0, sd = 0, lo = INFINITY, hi = -INFINITY, drop;
	int64_t n;
	struct err e;
	FILE *fp;

	cli_init(argc, argv);
	parse(argc, argv, &o);
	sh.o = &o;
	if (o.emit >= 0) {
		emit(&o, argc, argv);
		cli_close_out(stdout, "stdout");
		return 0;
	}
	cli_threads(o.threads);
	if ((m = ckpt_load(o.model, &ms, o.batch, 0, 0, &e)) == NULL)
		die("%s", e.msg);
	m->prec = o.prec;
	fp = open_input(&o, m, &ms, &name);
	vt_init(&s);
	if ((after = calloc((size_t)o.trials, sizeof *after)) == NULL)
		die("out of memory");
	before = pass(&m, &ms, fp, &s, name, &sh, -1, &n);
	if (pe_conv_check(vt_meta(&ms, "POS"), vt_meta(&s, "POS"), &e) < 0)
		cli_warn("%s: %s", name, e.msg);
	for (int k = 0; k < o.trials; k++) {
		after[k] = pass(&m, &ms, fp, &s, name, &sh, k, &n);
		mean += after[k] / o.trials;
		lo = fmin(lo, after[k]);
		hi = fmax(hi, after[k]);
	}
	for (int k = 0; k < o.trials; k++)
		sd += (after[k] - mean) * (after[k] - mean);
	sd = o.trials > 1 ? sqrt(sd / (o.trials - 1)) : 0;
	drop = before > 0 ? 100 * (before - mean) / before : 0;
	if (o.json) {
		printf("{\"records\":%lld,\"trials\":%d,\"axis\":\"%s\",\"seed\":%llu,"
		    "\"before\":%.6f,\"after\":{\"mean\":%.6f,\"sd\":%.6f,\"min\":%.6f,\"max\":%.6f,"
		    "\"trials\":[", (long long)n, o.trials, o.frames ? "t" : "all",
		    (unsigned long long)o.seed, before, mean, sd, lo, hi);
		for (int k = 0; k < o.trials; k++)
			printf("%s%.6f", k ? "," : "", after[k]);
		printf("]},\"drop_percent\":%.4f}\n", drop);
	} else {
		if (o.header)
			printf("%-8s %8s %8s %8s %8s %8s  %s\n", "records", "before", "after", "sd",
			    "drop%", "trials", "model");
		printf("%-8lld %8.2f %8.2f %8.2f %8.2f %8d  %s\n", (long long)n, 100 * before,
		    100 * mean, 100 * sd, drop, o.trials, o.model);
	}
	cli_close_out(stdout, "stdout");
	free(after);
	free(sh.perm);
	free(sh.tmp);
	vit_destroy(m);
	vt_free(&s);
	vt_free(&ms);
	fclose(fp);
	return 0;
}
