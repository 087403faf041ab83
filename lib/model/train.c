/*
 * train.c - a training run (train.h).
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
 * Under mpirun, N ranks train one model (dist.h): every rank makes the
 * targets and mixup of the whole micro-batch where it holds it whole and
 * runs the model on its share, and --batch stays the global micro-batch,
 * so a run's options mean the same on any number of ranks.  Rank 0 alone
 * validates, writes checkpoints, --log and messages.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "clock.h"
#include "evaluate.h"
#include "fileio.h"
#include "hash.h"
#include "mixup.h"
#include "pe.h"
#include "pe_conv.h"
#include "posmap.h"
#include "rng.h"
#include "train.h"
#include "vitfit.h"

enum { DRAW_DROPOUT = 1, DRAW_MIXUP = 2, DRAW_SHUFFLE = 3 };	/* rng stream kinds */

/* Stream keys a model keeps for vit-eval, flops and shuffle-eval. */
static const char *const kept_keys[] = {
	"CLASSES", "CLASS", "MEAN", "STD", "CHANNELS", "PATCH", "GRID", "SIZE",
	"POS", "CLSPOS", "SOURCE", "HISTORY",
};

static volatile sig_atomic_t stop_sig;

static int save(struct train *r, struct err *e);

/* "msg" for the user (printf format), through the command's ui. */
static void __attribute__((format(printf, 2, 3)))
warn(const struct train *r, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	r->ui.warn(buf);
}

/* e set to "PATH: strerror(errno)" (as die_errno says it); returns -1. */
static int
err_errno(struct err *e, const char *path)
{
	return err_set(e, "%s: %s", path, strerror(errno));
}

/* The generator of one use (kind) at one micro-batch: it depends only on
 * the seed and the micro-batch's index, not on threads or restarts. */
static void
draw(struct rng *r, uint64_t seed, int kind, int64_t micro)
{
	rng_seed(r, seed, (uint64_t)kind << 56 ^ (uint64_t)micro);
}

/* Set key to the whole number or double at p (train_meta_num). */
static int
meta_num(struct vt *s, const char *key, int isint, const void *p, struct err *e)
{
	if (train_meta_num(s, key, isint, p) < 0)
		return err_set(e, "%s", s->err.msg);
	return 0;
}

/* The input file opened anew beside the pass under way, its header read
 * into s: for what it holds, not for training. */
static FILE *
reopen_input(const struct train *r, struct vt *s, struct err *e)
{
	const char *name;
	FILE *fp = open_in(r->o.input, &name, e);

	if (fp == NULL)
		return NULL;
	vt_init(s);
	if (vt_read_header(s, fp, name) < 0) {
		err_set(e, "%s", s->err.msg);
		vt_free(s);
		if (fp != stdin)
			fclose(fp);
		return NULL;
	}
	return fp;
}

/* The records of the input file, which declares none (vtool cat joins
 * streams without RECORDS): an epoch is a pass over them; -1 with e. */
static int64_t
count_records(const struct train *r, struct err *e)
{
	struct vt s;
	FILE *fp = reopen_input(r, &s, e);
	int64_t n = 0;
	int rc;

	if (fp == NULL)
		return -1;
	for (int i = 0; i < s.nfield; i++)
		vt_skip(&s, i);
	while ((rc = vt_read_record(&s)) == 1)
		n++;
	if (rc < 0)
		n = err_set(e, "%s", s.err.msg);
	vt_free(&s);
	fclose(fp);
	return n;
}

/*
 * What identifies the training input, TRAIN_INPUT: its records an epoch,
 * a hash of its header (fields, shapes and keys but HISTORY, which names
 * the commands that made it) and, of a file, of its first 16 records.
 * --resume on another input (the test set for the training set) is
 * refused; a pipe's records cannot be read twice, so its text has no
 * "first" and only the rest is compared.
 */
static int
fingerprint(const struct train *r, char *out, size_t len, struct err *e)
{
	uint64_t h = FNV1A_INIT, f = h;
	const struct vt *s = &r->s;
	int n = snprintf(out, len, "records=%lld", (long long)r->E);

	for (int i = 0; i < s->nfield; i++) {
		h = fnv1a(h, s->field[i].name, strlen(s->field[i].name) + 1);
		h = fnv1a(h, &s->field[i].dtype, sizeof s->field[i].dtype);
		h = fnv1a(h, s->field[i].dim, (size_t)s->field[i].rank * sizeof *s->field[i].dim);
	}
	for (int i = 0; i < s->nmeta; i++)
		if (strcmp(s->meta[i].key, "HISTORY") != 0) {
			h = fnv1a(h, s->meta[i].key, strlen(s->meta[i].key) + 1);
			h = fnv1a(h, s->meta[i].val, strlen(s->meta[i].val) + 1);
		}
	n += snprintf(out + n, len - (size_t)n, " header=%016llx", (unsigned long long)h);
	if (r->stream)
		return 0;
	struct vt t;
	FILE *fp = reopen_input(r, &t, e);

	if (fp == NULL)
		return -1;
	for (int k = 0; k < 16 && vt_read_record(&t) == 1; k++)
		for (int i = 0; i < t.nfield; i++)
			f = fnv1a(f, t.field[i].data, t.field[i].nbytes);
	vt_free(&t);
	fclose(fp);
	snprintf(out + n, len - (size_t)n, " first=%016llx", (unsigned long long)f);
	return 0;
}

/* The word of fingerprint text p for key ("records="), into w[len]. */
static const char *
word_of(const char *p, const char *key, char *w, size_t len)
{
	const char *at = strstr(p, key);

	snprintf(w, len, "%.*s", at ? (int)strcspn(at, " ") : 0, at ? at : "");
	return w;
}

/* --resume: the input is the one the run trained on (had). */
static int
same_input(const struct train *r, const char *had, struct err *e)
{
	static const char *const words[] = { "records=", "header=", "first=" };
	char now[160], a[48], b[48];

	if (fingerprint(r, now, sizeof now, e) < 0)
		return -1;
	for (size_t k = 0; k < sizeof words / sizeof *words; k++) {
		word_of(now, words[k], a, sizeof a);
		word_of(had, words[k], b, sizeof b);
		/* records=0: a pipe that declares none, which says nothing */
		if (*a && *b && strcmp(a, b) != 0 && strcmp(a, "records=0") != 0 &&
		    strcmp(b, "records=0") != 0)
			return err_set(e, "--resume: %s is not the input the run trained "
			    "on (%s, the run's %s): give that input, or --force to train "
			    "on this one", r->name, a, b);
	}
	return 0;
}

/* Open the input for pass r->st.pass (a file's next, a stream's only)
 * and check it.  Rank 0 opens it first, and the others open it only when
 * it is no stream, which they would take records from. */
static int
open_pass(struct train *r, struct err *e)
{
	if (r->fp != NULL) {
		fclose(r->fp);
		batch_close(&r->br);
		vt_free(&r->s);
		batch_free(&r->b);
	}
	r->fp = NULL;
	if (r->d.rank == 0 && (r->fp = open_in(r->o.input, &r->name, e)) == NULL)
		return -1;
	r->stream = dist_stream(&r->d, r->fp);
	if (r->d.rank != 0 && !r->stream) {
		if ((r->fp = open_in(r->o.input, &r->name, e)) == NULL)
			return -1;
	} else if (r->d.rank != 0)	/* named as open_in would */
		r->name = r->o.input != NULL && strcmp(r->o.input, "-") != 0 ?
		    r->o.input : "stdin";
	vt_init(&r->s);
	if (dist_read_header(&r->d, &r->s, r->fp, r->name) < 0)
		return err_set(e, "%s", r->s.err.msg);
	int P = r->m ? r->m->c.P : 0, A = r->m ? r->m->c.axes : 0;
	int C = r->m ? r->m->c.classes : r->o.classes;
	if (batch_open(&r->br, &r->s, P, A, C, 1) < 0 ||
	    batch_alloc(&r->b, &r->br, (int)r->o.t.batch) < 0)
		return err_set(e, "%s", r->s.err.msg);
	if (r->br.classes <= 0)
		return err_set(e, "%s: no CLASSES key: give --classes", r->name);
	if (r->br.icls >= 0)	/* an evaluation's augmentation (posgen --offset) */
		return err_set(e, "%s: per-record CLS positions (field 'clspos') are for "
		    "evaluation; train without posgen --offset", r->name);
	const char *ek = vt_meta(&r->s, "EPOCH_RECORDS");
	char *end;
	r->E = r->s.records > 0 ? r->s.records : 0;
	if (ek != NULL && ((r->E = strtoll(ek, &end, 10)) < 1 || *end != '\0'))
		return err_set(e, "%s: bad EPOCH_RECORDS '%s'", r->name, ek);
	if (r->E == 0 && !r->stream && (r->E = count_records(r, e)) < 0)
		return -1;
	r->st.inpass = 0;
	if (r->o.t.shuffle != 0 && r->fp != NULL) {
		struct rng g;

		draw(&g, (uint64_t)r->o.t.seed, DRAW_SHUFFLE, r->st.pass);
		if (batch_shuffle(&r->br, &g, r->E, r->o.t.shuffle) < 0)
			return err_set(e, "%s", r->s.err.msg);
	} else if (r->o.t.shuffle == 0 && r->st.pass == 1 && !r->stream && r->d.rank == 0)
		warn(r, "%s: read again in the same order (--no-shuffle): every epoch "
		    "sees the records in one order", r->name);
	return 0;
}

static void
on_stop(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	stop_sig = sig;
}

void
train_catch_stop(void)
{
	struct sigaction sa = { .sa_handler = on_stop, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int
train_signal(void)
{
	return stop_sig;
}

/* Stop for stop_sig: in_step, the step under way is dropped (its records
 * are read again on --resume).  The checkpoint is written and the way to
 * go on said: TRAIN_STOPPED, or -1 with e. */
static int
interrupted(struct train *r, int in_step, struct err *e)
{
	char cmd[1024];
	int n;

	if (in_step)
		r->st = r->at_step;
	r->ui.end();
	if (r->o.out == NULL)
		return err_set(e, "interrupted at step %lld; --no-out: nothing kept",
		    (long long)r->st.step);
	if (r->saved_step != r->st.step && save(r, e) < 0)
		return -1;
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
	warn(r, "interrupted (%s) at step %lld: %s holds the run; continue with: %s",
	    stop_sig == SIGINT ? "SIGINT" : "SIGTERM", (long long)r->st.step, r->o.out, cmd);
	return TRAIN_STOPPED;
}

/* Next micro-batch of up to max records (over all ranks; this rank's
 * share is in r->d): their number, 0 at the end of this pass; -1 with e,
 * or TRAIN_STOPPED. */
static int64_t
fetch(struct train *r, int64_t max, struct err *e)
{
	int64_t n = r->held;

	if (n > 0) {
		r->held = 0;
		return n;
	}
	if ((n = dist_next(&r->d, &r->br, &r->b, (int)max)) < 0) {
		if (stop_sig)	/* the data stage went with the same Ctrl-C */
			return interrupted(r, 1, e);
		return err_set(e, "%s", r->s.err.msg);
	}
	return n;
}

/* Records the next micro-batch may take: it ends at an epoch boundary. */
static int64_t
room(const struct train *r)
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
spacing_note(const struct train *r, const struct vit_config *c, int native,
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
		double d = (hi - lo) / (c->grid[a] - 1), s = pe_conv_step(&own, a);
		double f = d > s ? d / s : s / d;
		if (!(f <= worst)) {
			worst = f;
			have = d;
			want = s;
		}
	}
	if (worst > 4)
		warn(r, "%s: %s; positions used as given, %.3g apart where %s "
		    "takes %s positions %.3g apart", r->name, why, have, c->pe,
		    pe_conv_name(native), want);
}

/* The positions the encoding sees (c->pos_scale, c->pos_shift) and the
 * POSITIONS key that says so: the stream's mapped into the encoding's own
 * convention when its POS names one of posgen's, as given with
 * --positions stream, for an encoding that reads none, or when the POS
 * key says nothing of them. */
static int
positions(struct train *r, struct vit_config *c, struct err *e)
{
	struct err why;
	int native;

	snprintf(r->positions, sizeof r->positions, "%s", r->o.stream_positions ?
	    "stream" : "given");
	if (r->o.stream_positions)
		return 0;
	int rc = posmap_native(c, vt_meta(&r->s, "POS"), vt_meta(&r->s, "GRID"),
	    &native, &why);
	if (rc < 0)
		return err_set(e, "model: %s", why.msg);
	if (rc == 0)
		snprintf(r->positions, sizeof r->positions, "native %s",
		    pe_conv_name(native));
	else if (why.msg[0])
		spacing_note(r, c, native, why.msg);
	return 0;
}

/* The most records of a batch this rank runs: its share (a model made
 * for them grows in vit_fit if need be). */
static int
share_cap(const struct train *r)
{
	return (int)((r->o.t.batch + r->d.size - 1) / r->d.size);
}

/* --init: the model of a checkpoint (vit-train's, or vtool
 * from-safetensors'), its weights, for this stream and these training
 * options (dropout too); a fresh optimizer. */
static int
init_model(struct train *r, struct err *e)
{
	struct vt ck;
	struct vit *m0;
	struct vit_config c;
	int rc = -1;

	if ((m0 = ckpt_load(r->o.init, &ck, 1, 0, 0, e)) == NULL)
		return err_prefix(e, "--init");
	c = m0->c;
	if (c.P != r->br.P || c.axes != r->br.A) {
		err_set(e, "--init: %s takes %d values a token and %d position axes, %s "
		    "has %d and %d", r->o.init, c.P, c.axes, r->name, r->br.P, r->br.A);
		goto out;
	}
	if (r->br.classes > 0 && r->br.classes != c.classes) {
		err_set(e, "--init: %s has %d classes, %s %d (vtool from-safetensors "
		    "--classes gives a model a new head)", r->o.init, c.classes, r->name,
		    r->br.classes);
		goto out;
	}
	c.dropout = r->o.c.dropout;
	c.emb_dropout = r->o.c.emb_dropout;
	const char *had = vt_meta(&ck, "POSITIONS");
	if (had == NULL) {	/* an import: this stream's positions, as a new model's */
		if (positions(r, &c, e) < 0)
			goto out;
	} else if (r->o.positions_given) {
		err_set(e, "--positions: %s maps its positions already (POSITIONS %s): "
		    "it was trained on them", r->o.init, had);
		goto out;
	} else
		snprintf(r->positions, sizeof r->positions, "%s", had);
	int T = vit_grid_size(c.grid, c.axes);
	r->m = vit_create(&c, share_cap(r), T > r->b.T ? T : r->b.T,
	    (uint64_t)r->o.t.seed, e);
	if (r->m == NULL) {
		err_prefix(e, "model");
		goto out;
	}
	memcpy(r->m->param, m0->param, m0->nparam * sizeof *m0->param);
	rc = 0;
out:
	vit_destroy(m0);
	vt_free(&ck);
	return rc;
}

/* The model's config from the options and the stream, its grid from the
 * GRID key or the first batch's positions. */
static int
build_model(struct train *r, struct err *e)
{
	struct vit_config *c = &r->o.c;
	int64_t g[VIT_MAXAXES];
	int grid[VIT_MAXAXES];

	c->P = r->br.P;
	c->axes = r->br.A;
	c->classes = r->br.classes;
	if ((r->held = fetch(r, room(r), e)) < 0)
		return (int)r->held;
	if (r->held == 0)
		return err_set(e, "%s: no records", r->name);
	if (r->o.init != NULL)
		return init_model(r, e);
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
		return err_set(e, "%s: record 1: positions are not a grid; no GRID key "
		    "either", r->name);
	int cls = pe_conv_cls(vt_meta(&r->s, "CLSPOS"), c->axes, c->cls_pos, e);
	if (cls < 0)
		return err_prefix(e, "%s", r->name);
	c->cls_rotate = cls;
	if (positions(r, c, e) < 0)
		return -1;
	r->m = vit_create(c, share_cap(r), r->b.T, (uint64_t)r->o.t.seed, e);
	if (r->m == NULL)
		return err_prefix(e, "model");
	if (r->o.generators != NULL &&
	    ckpt_load_generators(r->m, r->o.generators, e) < 0)
		return err_prefix(e, "--generators");
	/* what the preset and the options resolved to, for the one watching */
	if (r->d.rank == 0 && isatty(STDERR_FILENO))
		warn(r, "model: dim %d, depth %d, heads %d, mlp %d, --pe %s, %zu parameters",
		    c->dim, c->depth, c->heads, c->mlp, c->pe, r->m->nparam);
	return 0;
}

/* The keys every checkpoint of a fresh run carries: the stream's
 * descriptive keys, this command line, the training options. */
static int
fresh_meta(struct train *r, int argc, char *argv[], struct err *e)
{
	char input[160];

	vt_init(&r->meta);
	for (int i = 0; i < r->s.nmeta; i++)
		for (size_t k = 0; k < sizeof kept_keys / sizeof *kept_keys; k++)
			if (strcmp(r->s.meta[i].key, kept_keys[k]) == 0 &&
			    vt_meta_add(&r->meta, r->s.meta[i].key, r->s.meta[i].val) < 0)
				return err_set(e, "%s", r->meta.err.msg);
	if (fingerprint(r, input, sizeof input, e) < 0)
		return -1;
	if (vt_history(&r->meta, argc, argv) < 0 ||
	    vt_meta_set(&r->meta, "POSITIONS", r->positions) < 0 ||
	    vt_meta_set(&r->meta, "TRAIN_INPUT", input) < 0 ||
	    train_keys_write(&r->meta, &(struct train_keys){ .o = r->o.t }, TRAIN_OPTS) < 0)
		return err_set(e, "%s", r->meta.err.msg);
	return 0;
}

/* Steps the schedule spans; -1 with e. */
static int64_t
schedule_steps(const struct train *r, struct err *e)
{
	if (r->o.t.steps > 0)
		return r->o.t.steps;
	if (r->E <= 0 || r->nepoch <= 0)
		return err_set(e, "%s: declares %s: give --steps (or --epochs) for the "
		    "schedule's length", r->name, r->E <= 0 ?
		    "neither EPOCH_RECORDS nor RECORDS" : "no RECORDS");
	int64_t per = r->o.t.batch * r->o.t.accum;
	return r->nepoch * ((r->E + per - 1) / per);
}

/* Append a line to --log, formatted whole and written at once, unbuffered:
 * tail -f sees it when it is made, and a run killed at any moment leaves
 * whole lines. */
static int __attribute__((format(printf, 3, 4)))
log_line(const struct train *r, struct err *e, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (r->log < 0)
		return 0;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof buf)
		return err_set(e, "%s: a log line longer than %zu bytes", r->o.log,
		    sizeof buf);
	if (write_all(r->log, buf, (size_t)n) < 0)
		return err_errno(e, r->o.log);
	return 0;
}

/* "prog: message" on stderr, always (by rank 0 of several), after the
 * progress line (when there is one) is ended. */
static void __attribute__((format(printf, 2, 3)))
say(const struct train *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (r->d.rank != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	r->ui.end();
	r->ui.warn(buf);
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
static int
open_log(struct train *r, struct err *e)
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
		return err_errno(e, path);
	if (!r->o.resume || !S_ISREG(st.st_mode))
		return 0;	/* a pipe or terminal cannot be cut */
	if ((in = fopen(path, "r")) == NULL)
		return err_errno(e, path);
	while ((len = getline(&line, &cap, in)) > 0) {
		if (dropped == 0 && log_kept(line, (size_t)len, r->st.step, r->val_step))
			keep += len;
		else
			dropped++;
	}
	int bad = ferror(in);
	fclose(in);
	free(line);
	if (bad)
		return err_errno(e, path);
	if (ftruncate(r->log, keep) < 0)
		return err_errno(e, path);
	if (dropped > 0)
		warn(r, "%s: %lld lines past the checkpoint's step %lld dropped", path,
		    dropped, (long long)r->st.step);
	return 0;
}

/* Write the model to path with where the run stands and its metrics in the
 * header: with the optimizer's moments (a checkpoint to resume) or without
 * (a model for vit-eval). */
static int
write_model(struct train *r, const char *path, int optimizer, struct err *e)
{
	if (train_keys_write(&r->meta, &(struct train_keys){ .st = r->st }, TRAIN_STATE) < 0 ||
	    meta_num(&r->meta, "TRAIN_THREADS", 1, &(int64_t){ r->threads }, e) < 0 ||
	    vt_meta_set(&r->meta, "TRAIN_PRECISION", r->o.prec == GEMM_BF16 ?
	    "bf16" : "fp32") < 0 ||
	    meta_num(&r->meta, "TRAIN_RANKS", 1, &(int64_t){ r->d.size }, e) < 0 ||
	    vt_meta_set(&r->meta, "TRAIN_ALLREDUCE", r->o.bf16_sums ? "bf16" :
	    "fp32") < 0 ||
	    (!isnan(r->train_loss) &&
	    meta_num(&r->meta, "TRAIN_LOSS", 0, &r->train_loss, e) < 0))
		return err_set(e, "%s", r->meta.err.msg);
	if (ckpt_save(path, r->m, &r->meta, optimizer, e) < 0)
		return -1;
	return 0;
}

/* Checkpoint to --out (rank 0), once every rank is found to hold the
 * same model. */
static int
save(struct train *r, struct err *e)
{
	if (r->o.out == NULL)
		return 0;
	if (dist_same(&r->d, r->m, e) < 0)
		return err_prefix(e, "step %lld", (long long)r->st.step);
	if (r->d.rank == 0 && write_model(r, r->o.out, 1, e) < 0)
		return -1;
	r->saved_step = r->st.step;
	return 0;
}

/* Open the --val stream and check that the model can take it: NULL with
 * e on failure. */
static FILE *
open_val(struct train *r, struct vt *vs, struct batch_reader *vbr, const char **name,
    struct err *e)
{
	struct stat st;
	FILE *fp;

	/* It is read again at every validation: a pipe would be empty then
	 * (checked before opening, which would wait for a FIFO's writer). */
	if ((strcmp(r->o.val, "-") == 0 ? fstat(0, &st) : stat(r->o.val, &st)) == 0 &&
	    !S_ISREG(st.st_mode)) {
		err_set(e, "--val: %s: not a regular file (it is read at every "
		    "validation)", r->o.val);
		return NULL;
	}
	if (strcmp(r->o.val, "-") != 0 && access(r->o.val, R_OK) != 0) {
		err_errno(e, r->o.val);
		err_prefix(e, "--val");
		return NULL;
	}
	if ((fp = open_in(r->o.val, name, e)) == NULL)
		return NULL;
	vt_init(vs);
	if (vt_read_header(vs, fp, *name) < 0 ||
	    batch_open_model(vbr, vs, &r->meta, r->m->c.P, r->m->c.axes,
	    r->m->c.classes, 1) < 0) {
		err_set(e, "--val: %s", vs->err.msg);
		vt_free(vs);
		if (fp != stdin)
			fclose(fp);
		return NULL;
	}
	struct err why;
	if (r->st.step == 0 && pe_conv_check(vt_meta(&r->meta, "POS"), vt_meta(vs, "POS"),
	    &why) < 0)
		warn(r, "--val: %s: %s", *name, why.msg);
	return fp;
}

/* Accuracy and loss on the --val stream: logged, shown, kept in the
 * checkpoint's keys, and the model written to --best when it is the best
 * so far.  Top-5 only over more than 5 classes, where it says something. */
static int
validate(struct train *r, struct err *e)
{
	struct vt vs;
	struct batch_reader vbr;
	struct eval_out out = { 0 };
	struct eval_summary sum;
	char t5[64] = "";
	const char *name;
	FILE *fp;
	int top5 = r->m->c.classes > 5, rc = -1;
	long long step = r->st.step, epoch = r->st.epoch;

	if (r->d.rank != 0) {	/* the others go on to the next step's sums */
		r->val_step = r->st.step;
		return 0;
	}
	if ((fp = open_val(r, &vs, &vbr, &name, e)) == NULL)
		return -1;
	if (evaluate(&r->m, &vbr, (int)r->o.t.batch, NULL, &out, e) < 0) {
		err_prefix(e, "--val");
		goto out;
	}
	r->val_step = r->st.step;
	if (eval_summarize(&out, 0, 0.95, 0, &sum) < 0) {
		err_set(e, "--val: %s: no records", name);
		goto out;
	}
	if (top5)
		snprintf(t5, sizeof t5, ",\"val_top5\":%.6f", sum.top5.mean);
	if (log_line(r, e, "{\"step\":%lld,\"epoch\":%lld,\"val_acc\":%.6f%s,"
	    "\"val_loss\":%.6f}\n", step, epoch, sum.top1.mean, t5, sum.loss.mean) < 0)
		goto out;
	if (top5)
		snprintf(t5, sizeof t5, " top-5 %.2f%%", 100 * sum.top5.mean);
	say(r, "epoch %lld step %lld: val top-1 %.2f%%%s loss %.4f", epoch, step,
	    100 * sum.top1.mean, t5, sum.loss.mean);
	r->since_best++;
	if (meta_num(&r->meta, "VAL_ACC", 0, &sum.top1.mean, e) < 0 ||
	    (top5 && meta_num(&r->meta, "VAL_TOP5", 0, &sum.top5.mean, e) < 0) ||
	    meta_num(&r->meta, "VAL_LOSS", 0, &sum.loss.mean, e) < 0 ||
	    meta_num(&r->meta, "VAL_STEP", 1, &r->st.step, e) < 0 ||
	    meta_num(&r->meta, "VAL_EPOCH", 1, &r->st.epoch, e) < 0)
		goto out;
	if (sum.top1.mean > r->best_acc) {
		r->since_best = 0;
		r->best_acc = sum.top1.mean;
		r->best_epoch = r->st.epoch;
		if (meta_num(&r->meta, "BEST_VAL_ACC", 0, &r->best_acc, e) < 0 ||
		    meta_num(&r->meta, "BEST_EPOCH", 1, &r->best_epoch, e) < 0 ||
		    meta_num(&r->meta, "BEST_STEP", 1, &r->st.step, e) < 0 ||
		    (r->o.best != NULL && write_model(r, r->o.best, 0, e) < 0))
			goto out;
	}
	rc = meta_num(&r->meta, "VAL_SINCE_BEST", 1, &r->since_best, e);
out:
	eval_free(&out);
	vt_free(&vs);
	fclose(fp);
	return rc;
}

/* --patience validations have passed without a better top-1: the run
 * ends, its best model in --best. */
static int
out_of_patience(const struct train *r)
{
	if (r->o.t.patience == 0 || r->since_best < r->o.t.patience)
		return 0;
	say(r, "no better val top-1 in %lld validations: stopping early (best %.2f%%, "
	    "epoch %lld)", (long long)r->since_best, 100 * r->best_acc,
	    (long long)r->best_epoch);
	return 1;
}

/* An epoch ended: validate and checkpoint when due. */
static int
epoch_end(struct train *r, struct err *e)
{
	r->st.epoch++;
	if (r->o.val != NULL && r->st.epoch % r->o.t.val_every == 0 &&
	    r->val_step != r->st.step && validate(r, e) < 0)
		return -1;
	if (r->st.epoch % r->o.t.save_every == 0)
		return save(r, e);
	return 0;
}

/* Soft targets of the batch: one-hot labels with label smoothing. */
static void
targets(struct train *r, int n)
{
	int C = r->m->c.classes;
	float off = (float)(r->o.t.smoothing / C), on = (float)(1 - r->o.t.smoothing) + off;

	for (int i = 0; i < n; i++)
		for (int c = 0; c < C; c++)
			r->target[(int64_t)i * C + c] = c == r->b.label[i] ? on : off;
}

/* Stop at the step under way for why, something not finite, naming the
 * checkpoint of the last good weights: no checkpoint is written after
 * (ckpt_save refuses non-finite weights), so it holds them.  -1. */
static int
nonfinite(const struct train *r, const char *why, struct err *e)
{
	if (r->saved_step >= 0)
		return err_set(e, "step %lld: %s: stopping; the last good checkpoint is "
		    "%s (step %lld)", (long long)r->st.step + 1, why, r->o.out,
		    (long long)r->saved_step);
	return err_set(e, "step %lld: %s: stopping%s", (long long)r->st.step + 1, why,
	    r->o.out ? "; no checkpoint was written yet" : "");
}

/* Mark the moment t when seen records in all have been trained on. */
static void
rate_mark(struct train_rate *q, double t, int64_t seen)
{
	q->t[q->n % TRAIN_RATE_MARKS] = t;
	q->seen[q->n % TRAIN_RATE_MARKS] = seen;
	q->n++;
}

/* A step ended at t with seen records in all: its img_s, the records over
 * the wall time since the newest mark at least TRAIN_RATE_WINDOW old (else
 * the oldest kept): reading the input, steps, validations and
 * checkpoints. */
static double
rate_step(struct train_rate *q, double t, int64_t seen)
{
	int kept = q->n < TRAIN_RATE_MARKS ? q->n : TRAIN_RATE_MARKS, j = 0;

	for (int i = 1; i <= kept; i++) {
		j = (q->n - i) % TRAIN_RATE_MARKS;
		if (t - q->t[j] >= TRAIN_RATE_WINDOW)
			break;
	}
	double dt = t - q->t[j], v = dt > 0 ? (seen - q->seen[j]) / dt : 0;
	rate_mark(q, t, seen);
	return v;
}

/* One optimizer step over up to accum micro-batches; the records it took
 * (0: this pass of the input is over), -1 with e, or TRAIN_STOPPED. */
static int64_t
train_step(struct train *r, struct err *e)
{
	const struct train_cfg *o = &r->o;
	struct dist *d = &r->d;
	int64_t nstep = 0;
	int last = 0, C = r->m->c.classes;
	double lsum = 0;
	char why[256];

	d->comm = 0;
	r->at_step = r->st;
	vit_zero_grad(r->m);
	for (int64_t micro = 0; micro < o->t.accum; micro++) {
		int64_t k = fetch(r, room(r), e);	/* over all ranks */
		if (k <= 0) {
			if (k < 0)
				return k;
			break;
		}
		int64_t idx = r->st.step * o->t.accum + micro;
		struct rng g;
		if (d->whole) {
			targets(r, (int)k);
			if (o->t.mixup > 0) {
				draw(&g, (uint64_t)o->t.seed, DRAW_MIXUP, idx);
				mixup_batch(&g, o->t.mixup, r->b.x, (int64_t)r->b.T * r->b.P,
				    r->target, C, (int)k, r->perm);
			}
		}
		if (dist_scatter(d, &r->b, r->target, C, e) < 0)
			return err_prefix(e, "%s", r->name);
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
			if (vit_fit(&r->m, &v, e) < 0)
				return err_prefix(e, "%s", r->name);
			/* the micro-batches' dL/dR summed, through expm's adjoint once */
			vit_defer_rotation_grad(r->m, o->t.accum > 1);
			if (end)
				dist_arm(d, r->m, (float)n / nstep);
			r->m->first_record = d->lo;
			draw(&g, (uint64_t)o->t.seed, DRAW_DROPOUT, idx);
			float loss = vit_forward(r->m, v.x, v.pos, n, v.T,
			    r->target + (int64_t)d->at * C, r->logits, 1, rng_u64(&g));
			if (gemm_failed(e) < 0)	/* a product's NaN: say why */
				return -1;
			if (!isfinite(loss)) {
				snprintf(why, sizeof why, "the loss is %g", loss);
				return nonfinite(r, why, e);
			}
			vit_backward(r->m);
			if (gemm_failed(e) < 0)
				return -1;
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
	if (dist_reduce(d, r->m, (float)last / nstep, &lsum, e) < 0)
		return -1;
	double norm = sqrt(vit_grad_sumsq(r->m));
	if (!isfinite(norm)) {
		snprintf(why, sizeof why, "the gradient norm is %g", norm);
		return nonfinite(r, why, e);
	}
	double lr = lr_schedule(r->st.step, r->st.total, o->t.warmup, o->t.lr, o->t.lr_min);
	/* a finite loss and gradient may still step past a float (--lr 1e6):
	 * the step says so, vit_finite then finds where */
	struct err bad;
	char after[sizeof bad.msg + 64];
	if (adamw_step(&r->adam, r->m->param, r->m->grad, r->m->adam_m,
	    r->m->adam_v, r->seg, r->m->ntensor, grad_clip_scale(norm, o->t.clip),
	    lr, o->t.wd, r->st.step + 1) < 0 &&
	    vit_finite(r->m, 1, &bad) < 0) {
		snprintf(after, sizeof after, "after the update (learning rate %g), %s",
		    lr, bad.msg);
		return nonfinite(r, after, e);
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
	if (log_line(r, e, "{\"step\":%lld,\"epoch\":%.4f,\"loss\":%.6f,\"lr\":%.6g,"
	    "\"img_s\":%.1f%s}\n", (long long)r->st.step, epoch, r->train_loss, lr,
	    img_s, comm) < 0)
		return -1;
	char msg[128];
	snprintf(msg, sizeof msg, "epoch %.2f loss %.4f %.0f img/s", epoch,
	    r->train_loss, img_s);
	r->ui.show(r->st.step, msg);
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
summary(const struct train *r)
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

/* A stream, read once, ended before the epochs or steps asked for: the
 * checkpoint keeps the run, not marked done, and the error says so. */
static int
ended_early(struct train *r, struct err *e)
{
	char want[64];

	if (stop_sig)
		return interrupted(r, 0, e);
	if (r->o.t.steps > 0)
		snprintf(want, sizeof want, "step %lld of %lld", (long long)r->st.step,
		    (long long)r->o.t.steps);
	else
		snprintf(want, sizeof want, "%lld of %lld epochs", (long long)r->st.epoch,
		    (long long)r->nepoch);
	if (r->o.out != NULL && r->saved_step != r->st.step && save(r, e) < 0)
		return -1;
	r->ui.end();
	if (r->o.out != NULL)
		return err_set(e, "%s: ended after %s; %s holds the run, not finished (a "
		    "file, not a pipe, is read again)", r->name, want, r->o.out);
	return err_set(e, "%s: ended after %s (a file, not a pipe, is read again)",
	    r->name, want);
}

void
train_init(struct train *r, const struct train_cfg *o, const struct train_ui *ui,
    int threads, const struct dist *d)
{
	memset(r, 0, sizeof *r);
	r->o = *o;
	r->ui = *ui;
	r->threads = threads;
	r->d = *d;
	r->saved_step = -1;
	r->val_step = -1;
	r->train_loss = NAN;
	r->best_acc = -1;
	r->log = -1;
	adamw_defaults(&r->adam);
}

/* The clock and the rate start: what this process trains is timed. */
static void
start_clock(struct train *r)
{
	r->t_start = r->last_note = now_seconds();
	r->seen_start = r->st.seen;
	rate_mark(&r->rate, r->t_start, r->seen_start);
}

int
train_fresh(struct train *r, int argc, char *argv[], struct err *e)
{
	start_clock(r);
	if (open_pass(r, e) < 0 || build_model(r, e) < 0 ||
	    fresh_meta(r, argc, argv, e) < 0)
		return -1;
	return 0;
}

int
train_load(struct train *r, struct vt *ck, struct train_keys *k, struct err *e)
{
	if ((r->m = ckpt_load(r->o.out, ck, (int)r->o.t.batch, 0, 1, e)) == NULL)
		return err_prefix(e, "--resume");
	if (train_keys_read(ck, r->o.out, k, e) < 0) {
		vt_free(ck);
		return err_prefix(e, "--resume");
	}
	return 0;
}

int
train_restore(struct train *r, const struct vt *ck, const struct train_keys *k,
    struct err *e)
{
	r->st = k->st;
	/* What it knew of its validations and loss, absent before the first */
	r->val_step = k->past.val_step;
	r->best_acc = k->past.best_acc;
	r->best_epoch = k->past.best_epoch;
	r->train_loss = k->past.loss;
	r->since_best = k->past.since_best;
	vt_init(&r->meta);
	for (int i = 0; i < ck->nmeta; i++)
		if (vt_meta_add(&r->meta, ck->meta[i].key, ck->meta[i].val) < 0)
			return err_set(e, "%s", r->meta.err.msg);
	r->saved_step = r->st.step;
	r->st.done &= !r->extend;
	return 0;
}

int
train_reopen(struct train *r, int force, struct err *e)
{
	int64_t inpass = r->st.inpass;

	start_clock(r);
	if (open_pass(r, e) < 0)
		return -1;
	if (r->st.pass > 0 && r->stream)
		return err_set(e, "--resume: the run was reading its input file for the "
		    "%lld. time: give that file, not %s, which is read once",
		    (long long)r->st.pass + 1, r->name);
	const char *had = vt_meta(&r->meta, "TRAIN_INPUT");
	if (had != NULL && !force && r->d.rank == 0 && same_input(r, had, e) < 0)
		return -1;
	if (dist_skip(&r->d, &r->br, inpass) < 0)
		return err_set(e, "--resume: %s", r->s.err.msg);
	r->st.inpass = inpass;
	return 0;
}

int
train_start(struct train *r, struct err *e)
{
	r->m->prec = r->o.prec;
	r->d.bf16 = r->o.bf16_sums;
	if (dist_same(&r->d, r->m, e) < 0)
		return -1;
	r->adam.beta1 = r->o.t.beta1;
	r->adam.beta2 = r->o.t.beta2;
	r->adam.eps = r->o.t.eps;
	/* Without --epochs, --steps reads a file as often as it takes; else
	 * the epochs the input holds. */
	r->nepoch = r->o.t.epochs;
	if (r->nepoch == 0 && r->o.t.steps == 0 && r->E > 0 && r->s.records > 0)
		r->nepoch = (r->s.records + r->E - 1) / r->E;
	if ((!r->o.resume || r->extend) && (r->st.total = schedule_steps(r, e)) < 0)
		return -1;
	if (r->o.val != NULL && r->d.rank == 0) {
		/* Bad --val input fails now, not after the first epoch. */
		struct vt vs;
		struct batch_reader vbr;
		const char *name;
		FILE *fp = open_val(r, &vs, &vbr, &name, e);
		if (fp == NULL)
			return -1;
		fclose(fp);
		vt_free(&vs);
	}
	int C = r->m->c.classes;
	r->target = malloc((size_t)r->o.t.batch * C * sizeof *r->target);
	r->logits = malloc((size_t)r->o.t.batch * C * sizeof *r->logits);
	r->perm = malloc((size_t)r->o.t.batch * sizeof *r->perm);
	r->seg = vit_segments(r->m);
	if (r->target == NULL || r->logits == NULL || r->perm == NULL || r->seg == NULL)
		return err_set(e, "out of memory");
	if (r->o.log != NULL && r->d.rank == 0)
		return open_log(r, e);
	return 0;
}

int
train_run(struct train *r, struct err *e)
{
	int64_t n;

	for (;;) {
		if (stop_sig)
			return interrupted(r, 0, e);
		if (out_of_patience(r))
			break;
		if (r->o.t.steps > 0 && r->st.step >= r->o.t.steps)
			break;
		if (r->nepoch > 0 && r->st.epoch >= r->nepoch)
			break;
		if ((n = train_step(r, e)) < 0)
			return (int)n;
		if (n > 0) {
			if (r->o.val != NULL && r->o.t.val_steps > 0 &&
			    r->st.step % r->o.t.val_steps == 0 && validate(r, e) < 0)
				return -1;
			if (r->E > 0 && r->st.inpass % r->E == 0 && epoch_end(r, e) < 0)
				return -1;
			if (r->o.t.save_steps > 0 && r->st.step % r->o.t.save_steps == 0 &&
			    r->saved_step != r->st.step && save(r, e) < 0)
				return -1;
			continue;
		}
		/* This pass of the input is over. */
		if (r->st.inpass == 0)
			return err_set(e, "%s: no records", r->name);
		int partial = r->E == 0 || r->st.inpass % r->E != 0;
		r->st.pass++;
		r->st.inpass = 0;
		if (partial && epoch_end(r, e) < 0)
			return -1;
		if (r->o.t.steps > 0 ? r->nepoch > 0 && r->st.epoch >= r->nepoch :
		    r->nepoch == 0 || r->st.epoch >= r->nepoch)
			break;
		if (r->stream)
			return ended_early(r, e);
		if (open_pass(r, e) < 0)
			return -1;
	}
	r->ui.end();
	if (r->o.val != NULL && r->val_step != r->st.step && validate(r, e) < 0)
		return -1;
	r->st.done = 1;
	if (save(r, e) < 0)
		return -1;
	summary(r);
	if (r->log >= 0 && close(r->log) < 0) {
		r->log = -1;
		return err_errno(e, r->o.log);
	}
	r->log = -1;
	return 0;
}

void
train_free(struct train *r)
{
	free(r->target);
	free(r->logits);
	free(r->perm);
	free(r->seg);
	batch_close(&r->br);
	batch_free(&r->b);
	vt_free(&r->s);
	vt_free(&r->meta);
	vit_destroy(r->m);
	if (r->fp != NULL && r->fp != stdin)
		fclose(r->fp);
	if (r->log >= 0)
		close(r->log);
}
