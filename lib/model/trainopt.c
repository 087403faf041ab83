/*
 * trainopt.c - a vit-train run's header keys and their rules (trainopt.h).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"
#include "parse.h"
#include "trainopt.h"

#define BIG	(INT64_MAX / 2)		/* counts that never wrap when added */
/* An option's key: a number in [lo, hi]; a whole number in [lo, hi], and
 * in a checkpoint from klo (the option's default below lo, as --epochs'
 * 0); old: older checkpoints may lack it. */
#define NUM(k, o, f, lo, hi)	{ .key = k, .opt = o, .part = TRAIN_OPTS, \
	.type = TRAIN_NUM, .off = offsetof(struct train_opts, f), .dmin = lo, .dmax = hi }
#define INT(k, o, f, lo, hi, klo, old)	{ .key = k, .opt = o, .part = TRAIN_OPTS, \
	.type = TRAIN_INT, .off = offsetof(struct train_opts, f), .min = lo, .max = hi, \
	.kmin = klo, .optional = old }
/* A count of the state, every one needed. */
#define STATE(k, f, hi)	{ .key = k, .part = TRAIN_STATE, .type = TRAIN_INT, \
	.off = offsetof(struct train_state, f), .max = hi }
/* What the run knew: a whole number in [lo, hi], or a number. */
#define PAST(k, o, f, lo, hi, old)	{ .key = k, .opt = o, .part = TRAIN_PAST, \
	.type = TRAIN_INT, .off = offsetof(struct train_past, f), .min = lo, .max = hi, \
	.kmin = lo, .optional = old }
#define PASTNUM(k, f, lo, hi)	{ .key = k, .part = TRAIN_PAST, .type = TRAIN_NUM, \
	.off = offsetof(struct train_past, f), .dmin = lo, .dmax = hi, .optional = 1 }

const struct train_key train_keys_table[] = {
	NUM("TRAIN_LR", "lr", lr, 0, 1e6),
	NUM("TRAIN_LR_MIN", "lr-min", lr_min, 0, 1e6),
	NUM("TRAIN_WD", "wd", wd, 0, 1e6),
	NUM("TRAIN_BETA1", "beta1", beta1, 0, 0.999999),
	NUM("TRAIN_BETA2", "beta2", beta2, 0, 0.999999999),
	NUM("TRAIN_EPS", "eps", eps, 1e-30, 1),
	NUM("TRAIN_SMOOTHING", "smoothing", smoothing, 0, 1),
	NUM("TRAIN_CLIP", "clip", clip, 0, 1e12),
	NUM("TRAIN_MIXUP", "mixup", mixup, 0, 1e6),
	INT("TRAIN_WARMUP", "warmup", warmup, 0, BIG, 0, 0),
	INT("TRAIN_ACCUM", "accum", accum, 1, 1 << 20, 1, 0),
	INT("TRAIN_BATCH", "batch", batch, 1, 1 << 16, 1, 0),
	INT("TRAIN_EPOCHS", "epochs", epochs, 1, BIG, 0, 0),
	INT("TRAIN_STEPS", "steps", steps, 1, BIG, 0, 0),
	INT("TRAIN_SEED", "seed", seed, 0, INT64_MAX, 0, 0),
	INT("TRAIN_VAL_EVERY", "val-every", val_every, 1, BIG, 1, 0),
	INT("TRAIN_VAL_STEPS", "val-steps", val_steps, 0, BIG, 0, 1),
	INT("TRAIN_SAVE_EVERY", "save-every", save_every, 1, BIG, 1, 0),
	INT("TRAIN_SAVE_STEPS", "save-steps", save_steps, 0, BIG, 0, 1),
	/* -1 the default, 0 --no-shuffle */
	INT("TRAIN_SHUFFLE", "shuffle-buffer", shuffle, 1, 1 << 30, -1, 1),
	INT("TRAIN_PATIENCE", "patience", patience, 0, BIG, 0, 1),

	STATE("STEP", step, BIG),
	STATE("EPOCH", epoch, BIG),
	STATE("PASS", pass, BIG),
	STATE("PASS_RECORDS", inpass, BIG),
	STATE("RECORDS_SEEN", seen, BIG),
	STATE("TOTAL_STEPS", total, BIG),
	STATE("DONE", done, 1),

	PAST("TRAIN_THREADS", "threads", threads, 0, TRAIN_MAXTHREADS, 0),
	PAST("TRAIN_RANKS", NULL, ranks, 1, INT32_MAX, 1),
	{ .key = "TRAIN_PRECISION", .opt = "precision", .part = TRAIN_PAST,
	    .type = TRAIN_PREC, .off = offsetof(struct train_past, prec), .optional = 1 },
	PASTNUM("TRAIN_LOSS", loss, -DBL_MAX, DBL_MAX),
	PAST("VAL_STEP", NULL, val_step, 0, BIG, 1),
	PASTNUM("BEST_VAL_ACC", best_acc, 0, 1),
	PAST("BEST_EPOCH", NULL, best_epoch, 0, BIG, 1),
	PAST("VAL_SINCE_BEST", NULL, since_best, 0, BIG, 1),
	{ .key = NULL }
};

void
train_defaults(struct train_keys *k)
{
	memset(k, 0, sizeof *k);
	k->o.lr = 1e-3;
	k->o.wd = 0.05;
	k->o.beta1 = 0.9;
	k->o.beta2 = 0.999;
	k->o.eps = 1e-8;
	k->o.accum = 1;
	k->o.batch = 64;
	k->o.seed = 1;
	k->o.val_every = 1;
	k->o.save_every = 1;
	k->o.shuffle = -1;
	k->past.ranks = 1;
	k->past.prec = -1;
	k->past.loss = NAN;
	k->past.val_step = -1;
	k->past.best_acc = -1;
}

const struct train_key *
train_key_of(const char *opt)
{
	for (const struct train_key *e = train_keys_table; e->key != NULL; e++)
		if (e->part == TRAIN_OPTS && strcmp(e->opt, opt) == 0)
			return e;
	return NULL;
}

/* Where e's value lies in k. */
static void *
slot(const struct train_key *e, const struct train_keys *k)
{
	const void *base = e->part == TRAIN_OPTS ? (const void *)&k->o :
	    e->part == TRAIN_STATE ? (const void *)&k->st : (const void *)&k->past;

	return (char *)base + e->off;
}

int
train_key_parse(const struct train_key *e, const char *s, int option,
    struct train_keys *k, struct err *why)
{
	void *p = slot(e, k);
	long long v;

	switch (e->type) {
	case TRAIN_INT:
		if (parse_int(s, option ? e->min : e->kmin, e->max, &v, why) < 0)
			return -1;
		*(int64_t *)p = v;
		return 0;
	case TRAIN_NUM:
		return parse_num(s, e->dmin, e->dmax, (double *)p, why);
	default:
		if ((*(int64_t *)p = gemm_prec_parse(s)) >= 0)
			return 0;
		return err_set(why, "not fp32 or bf16");
	}
}

int
train_keys_read(const struct vt *ck, const char *path, struct train_keys *k,
    struct err *er)
{
	struct err why;

	for (const struct train_key *e = train_keys_table; e->key != NULL; e++) {
		const char *v = vt_meta(ck, e->key);
		if (v == NULL && e->optional)
			continue;
		if (v == NULL) {
			err_set(er, "%s: no %s key: not a vit-train checkpoint",
			    path, e->key);
			return -1;
		}
		if (train_key_parse(e, v, 0, k, &why) < 0) {
			err_set(er, "%s: %s %.40s%s: %s%s%s%s", path, e->key, v,
			    strlen(v) > 40 ? "..." : "", why.msg, e->opt ? ", as --" : "",
			    e->opt ? e->opt : "", e->opt ? " takes" : "");
			return -1;
		}
	}
	return 0;
}

int
train_meta_num(struct vt *s, const char *key, int isint, const void *p)
{
	char buf[64];

	if (isint)
		snprintf(buf, sizeof buf, "%lld", (long long)*(const int64_t *)p);
	else {
		double v = *(const double *)p;
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(buf, sizeof buf, "%.*g", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
	}
	return vt_meta_set(s, key, buf);
}

int
train_keys_write(struct vt *s, const struct train_keys *k, int part)
{
	for (const struct train_key *e = train_keys_table; e->key != NULL; e++)
		if (e->part == part &&
		    train_meta_num(s, e->key, e->type == TRAIN_INT, slot(e, k)) < 0)
			return -1;
	return 0;
}
