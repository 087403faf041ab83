/*
 * trainopt.c - a vit-train run's header keys and their rules (trainopt.h).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trainopt.h"

#define BIG	(INT64_MAX / 2)		/* counts that never wrap when added */
#define O(f)	TRAIN_OPTS, TRAIN_INT, offsetof(struct train_opts, f)
#define D(f)	TRAIN_OPTS, TRAIN_NUM, offsetof(struct train_opts, f), 0, 0, 0
#define S(f)	TRAIN_STATE, TRAIN_INT, offsetof(struct train_state, f)
#define P(f)	TRAIN_PAST, TRAIN_INT, offsetof(struct train_past, f)
#define PD(f)	TRAIN_PAST, TRAIN_NUM, offsetof(struct train_past, f), 0, 0, 0

const struct train_key train_keys_table[] = {
	{ "TRAIN_LR", "lr", D(lr), 0, 1e6, 0 },
	{ "TRAIN_LR_MIN", "lr-min", D(lr_min), 0, 1e6, 0 },
	{ "TRAIN_WD", "wd", D(wd), 0, 1e6, 0 },
	{ "TRAIN_BETA1", "beta1", D(beta1), 0, 0.999999, 0 },
	{ "TRAIN_BETA2", "beta2", D(beta2), 0, 0.999999999, 0 },
	{ "TRAIN_EPS", "eps", D(eps), 1e-30, 1, 0 },
	{ "TRAIN_SMOOTHING", "smoothing", D(smoothing), 0, 1, 0 },
	{ "TRAIN_CLIP", "clip", D(clip), 0, 1e12, 0 },
	{ "TRAIN_MIXUP", "mixup", D(mixup), 0, 1e6, 0 },
	{ "TRAIN_WARMUP", "warmup", O(warmup), 0, BIG, 0, 0, 0, 0 },
	{ "TRAIN_ACCUM", "accum", O(accum), 1, 1 << 20, 1, 0, 0, 0 },
	{ "TRAIN_BATCH", "batch", O(batch), 1, 1 << 16, 1, 0, 0, 0 },
	{ "TRAIN_EPOCHS", "epochs", O(epochs), 1, BIG, 0, 0, 0, 0 },
	{ "TRAIN_STEPS", "steps", O(steps), 1, BIG, 0, 0, 0, 0 },
	{ "TRAIN_SEED", "seed", O(seed), 0, INT64_MAX, 0, 0, 0, 0 },
	{ "TRAIN_VAL_EVERY", "val-every", O(val_every), 1, BIG, 1, 0, 0, 0 },
	{ "TRAIN_VAL_STEPS", "val-steps", O(val_steps), 0, BIG, 0, 0, 0, 1 },
	{ "TRAIN_SAVE_EVERY", "save-every", O(save_every), 1, BIG, 1, 0, 0, 0 },
	{ "TRAIN_SAVE_STEPS", "save-steps", O(save_steps), 0, BIG, 0, 0, 0, 1 },
	/* -1 the default, 0 --no-shuffle */
	{ "TRAIN_SHUFFLE", "shuffle-buffer", O(shuffle), 1, 1 << 30, -1, 0, 0, 1 },
	{ "TRAIN_PATIENCE", "patience", O(patience), 0, BIG, 0, 0, 0, 1 },

	{ "STEP", NULL, S(step), 0, BIG, 0, 0, 0, 0 },
	{ "EPOCH", NULL, S(epoch), 0, BIG, 0, 0, 0, 0 },
	{ "PASS", NULL, S(pass), 0, BIG, 0, 0, 0, 0 },
	{ "PASS_RECORDS", NULL, S(inpass), 0, BIG, 0, 0, 0, 0 },
	{ "RECORDS_SEEN", NULL, S(seen), 0, BIG, 0, 0, 0, 0 },
	{ "TOTAL_STEPS", NULL, S(total), 0, BIG, 0, 0, 0, 0 },
	{ "DONE", NULL, S(done), 0, 1, 0, 0, 0, 0 },

	{ "TRAIN_THREADS", "threads", P(threads), 0, CLI_MAXTHREADS, 0, 0, 0, 0 },
	{ "TRAIN_RANKS", NULL, P(ranks), 1, INT32_MAX, 1, 0, 0, 1 },
	{ "TRAIN_PRECISION", "precision", TRAIN_PAST, TRAIN_PREC,
	    offsetof(struct train_past, prec), 0, 0, 0, 0, 0, 1 },
	{ "TRAIN_LOSS", NULL, PD(loss), -DBL_MAX, DBL_MAX, 1 },
	{ "VAL_STEP", NULL, P(val_step), 0, BIG, 0, 0, 0, 1 },
	{ "BEST_VAL_ACC", NULL, PD(best_acc), 0, 1, 1 },
	{ "BEST_EPOCH", NULL, P(best_epoch), 0, BIG, 0, 0, 0, 1 },
	{ "VAL_SINCE_BEST", NULL, P(since_best), 0, BIG, 0, 0, 0, 1 },
	{ NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
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
    struct train_keys *k, char *why, size_t len)
{
	void *p = slot(e, k);
	long long v;

	switch (e->type) {
	case TRAIN_INT:
		if (cli_parse_int(s, option ? e->min : e->kmin, e->max, &v, why, len) < 0)
			return -1;
		*(int64_t *)p = v;
		return 0;
	case TRAIN_NUM:
		return cli_parse_num(s, e->dmin, e->dmax, (double *)p, why, len);
	default:
		if ((*(int64_t *)p = cli_prec_parse(s)) >= 0)
			return 0;
		snprintf(why, len, "not fp32 or bf16");
		return -1;
	}
}

int
train_keys_read(const struct vt *ck, const char *path, struct train_keys *k,
    char *err, size_t errlen)
{
	char why[128];

	for (const struct train_key *e = train_keys_table; e->key != NULL; e++) {
		const char *v = vt_meta(ck, e->key);
		if (v == NULL && e->optional)
			continue;
		if (v == NULL) {
			snprintf(err, errlen, "%s: no %s key: not a vit-train checkpoint",
			    path, e->key);
			return -1;
		}
		if (train_key_parse(e, v, 0, k, why, sizeof why) < 0) {
			snprintf(err, errlen, "%s: %s %.40s%s: %s%s%s%s", path, e->key, v,
			    strlen(v) > 40 ? "..." : "", why, e->opt ? ", as --" : "",
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
