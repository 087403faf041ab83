/*
 * trainopt.h - a vit-train run as its checkpoints keep it, in one table of
 * header keys and their rules: the training options (TRAIN_LR ...
 * TRAIN_PATIENCE, each the value of an option, --lr ... --patience), where
 * the run stands (STEP, EPOCH, PASS, PASS_RECORDS, ...) and what it knew
 * (TRAIN_THREADS, TRAIN_PRECISION, TRAIN_LOSS, VAL_STEP, BEST_*).  An
 * option is parsed by its key's rule, and --resume reads every key by the
 * same, so a checkpoint whose keys were edited or broken is refused, its
 * file and key named, as the option would be.
 */
#ifndef TRAINOPT_H
#define TRAINOPT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "vt.h"

/* The most threads a run takes (--threads, TRAIN_THREADS). */
#define TRAIN_MAXTHREADS	1024

/* The training options (defaults: train_defaults). */
struct train_opts {
	double	 lr, lr_min, wd, beta1, beta2, eps;
	double	 smoothing, clip, mixup;
	int64_t	 warmup, accum, batch;
	int64_t	 epochs, steps;	/* 0: all the input holds; no step limit */
	int64_t	 seed;
	int64_t	 val_every, val_steps, save_every, save_steps;
	int64_t	 shuffle;	/* the shuffle buffer, records (order.h); -1:
				   a file's epoch, a pipe's 10000; 0: the
				   input's order (--no-shuffle) */
	int64_t	 patience;	/* validations without a better top-1 that end
				   the run; 0: never */
};

/* Where the run stands, written at every checkpoint. */
struct train_state {
	int64_t	 step;		/* optimizer steps done */
	int64_t	 epoch;		/* epochs completed */
	int64_t	 pass;		/* reading of the input (a file is re-read) */
	int64_t	 inpass;	/* records consumed in this pass */
	int64_t	 seen;		/* records consumed in all */
	int64_t	 total;		/* steps the schedule spans */
	int64_t	 done;		/* 1: the run finished */
};

/* What the run knew besides; each may be absent (the default stays). */
struct train_past {
	int64_t	 threads;	/* TRAIN_THREADS (needed) */
	int64_t	 ranks;		/* TRAIN_RANKS; 1 */
	int64_t	 prec;		/* TRAIN_PRECISION, an enum gemm_prec; -1: absent */
	double	 loss;		/* TRAIN_LOSS, the last step's; NAN: none yet */
	int64_t	 val_step;	/* VAL_STEP, of the last validation; -1: none */
	double	 best_acc;	/* BEST_VAL_ACC; -1: none yet */
	int64_t	 best_epoch;	/* BEST_EPOCH */
	int64_t	 since_best;	/* VAL_SINCE_BEST */
};

struct train_keys {
	struct train_opts o;
	struct train_state st;
	struct train_past past;
};

enum train_part { TRAIN_OPTS, TRAIN_STATE, TRAIN_PAST };
enum train_type { TRAIN_INT, TRAIN_NUM, TRAIN_PREC };

struct train_key {
	const char *key;	/* the header key */
	const char *opt;	/* its option's long name, or NULL */
	int	 part;		/* enum train_part: off is in that struct */
	int	 type;		/* enum train_type; int64_t, double, or a
				   precision's name (an int64_t) */
	size_t	 off;
	int64_t	 min, max;	/* TRAIN_INT: the option's range */
	int64_t	 kmin;		/* ... and a checkpoint's least value (below
				   min: the option's default, as --epochs' 0) */
	double	 dmin, dmax;	/* TRAIN_NUM: the range */
	int	 optional;	/* older checkpoints lack it */
};

/* Every key, options first, then the state, then the past; NULL-keyed at
 * the end. */
extern const struct train_key train_keys_table[];

/* The defaults of a fresh run (vit-train(1)): k's options, a state at
 * step 0, the past absent. */
void	 train_defaults(struct train_keys *k);
/* The key of option opt (a long name, "lr"), or NULL. */
const struct train_key *train_key_of(const char *opt);
/* Set k's value in k from text s by k's rule (the option's: kmin not
 * allowed when option is 1, as a command line has it): 0, or -1 with the
 * rule s breaks in why ("not a whole number in [1, 1048576]"). */
int	 train_key_parse(const struct train_key *e, const char *s, int option,
	    struct train_keys *k, struct err *why);
/* Read every key of checkpoint ck (path names it) into k, which holds
 * the defaults for the optional keys it lacks: 0, or -1 with e naming
 * the file, the key, its value and the rule ("m.vt: TRAIN_ACCUM 0: not a
 * whole number in [1, 1048576], as --accum takes"). */
int	 train_keys_read(const struct vt *ck, const char *path, struct train_keys *k,
	    struct err *e);
/* Set every key of part (TRAIN_OPTS or TRAIN_STATE) of k in s, in the
 * fewest digits that read back as the same value.  0, or -1 with s->err. */
int	 train_keys_write(struct vt *s, const struct train_keys *k, int part);
/* Set key in s to the whole number or double at p (isint), in the fewest
 * digits that read back as the same double (0.05, not
 * 0.050000000000000003).  0, or -1 with s->err. */
int	 train_meta_num(struct vt *s, const char *key, int isint, const void *p);

#endif
