/*
 * train.h - a training run (vit-train(1)): the input read in passes and
 * epochs, the optimizer step over micro-batches (and ranks, dist.h),
 * validation, checkpoints, the --log lines, resuming, and stopping on a
 * signal.  The command gives it its options (struct train_cfg) and the
 * ways to speak to the user (struct train_ui), and prints its errors.
 *
 * Randomness (initialization, dropout, mixup, the shuffle) is drawn from
 * rng streams keyed by the seed and the micro-batch's index, and a
 * checkpoint records the step and the input position, so a resumed run
 * repeats exactly what the uninterrupted one would have done.
 *
 * Every function that can fail returns -1 with e set ("context: reason",
 * the command prints it after its name), or TRAIN_STOPPED when SIGINT or
 * SIGTERM stopped the run (train_catch_stop): the checkpoint is written
 * and the way to go on said; the command exits 128 + train_signal().
 */
#ifndef TRAIN_H
#define TRAIN_H

#include <stdint.h>
#include <stdio.h>

#include "adamw.h"
#include "batch.h"
#include "dist.h"
#include "err.h"
#include "trainopt.h"
#include "vit.h"
#include "vt.h"

#define TRAIN_STOPPED	(-2)

/* img_s is records over the wall time of the last TRAIN_RATE_WINDOW
 * seconds of steps (or since the start), or of the last TRAIN_RATE_MARKS
 * steps when they took less: one step's rate swings with the input
 * pipe's buffering and a short last batch. */
#define TRAIN_RATE_WINDOW	1.0
#define TRAIN_RATE_MARKS	256

/* The run's options, as the command's parsed them. */
struct train_cfg {
	struct vit_config c;	/* sizes, encoding; P, axes, grid from the stream */
	int	 classes;	/* 0: the stream's CLASSES */
	const char *generators;	/* initial pe.params, or NULL */
	const char *init;	/* the checkpoint to start from, or NULL */
	struct train_opts t;	/* the options a checkpoint keeps */
	double	 progress;	/* seconds between log lines on a non-terminal */
	enum gemm_prec prec;
	int	 bf16_sums;	/* the ranks' sums in bf16 */
	const char *val, *out, *log, *best, *input;	/* NULL: none; input
				   NULL or "-": stdin */
	int	 resume;	/* continue the run checkpointed in out */
	int	 stream_positions;	/* the stream's positions as given */
	int	 positions_given;	/* either way, said (not with --init's map) */
};

/* How the run speaks, the command's: a message ("prog: msg" on stderr),
 * and the progress line (drawn on a terminal) shown and ended. */
struct train_ui {
	void	(*warn)(const char *msg);
	void	(*show)(int64_t step, const char *msg);
	void	(*end)(void);
};

struct train {
	struct train_cfg o;
	struct train_ui ui;
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
	struct adamw_seg *seg;	/* [m->ntensor] the arena's stretches */
	int	 log;		/* --log descriptor; -1: none */
	struct train_rate {	/* step ends: (time, records seen) */
		double	 t[TRAIN_RATE_MARKS];
		int64_t	 seen[TRAIN_RATE_MARKS];
		int	 n;	/* marks made */
	} rate;
	double	 t_start;	/* when this process began training */
	int64_t	 seen_start;	/* records seen before */
	char	 positions[64];	/* the POSITIONS key: what the model sees */
};

/* r zeroed, with o, ui, threads and the started d: no model yet. */
void	 train_init(struct train *r, const struct train_cfg *o,
	    const struct train_ui *ui, int threads, const struct dist *d);
/* A fresh run: the input's first pass opened, the model made from the
 * options and the stream (--init, --generators), the keys every
 * checkpoint carries (argv is the command line, for HISTORY). */
int	 train_fresh(struct train *r, int argc, char *argv[], struct err *e);
/* The checkpoint at o.out read for --resume: the model, its keys in *ck
 * (vt_free it) and in k (which holds the defaults it lacks). */
int	 train_load(struct train *r, struct vt *ck, struct train_keys *k,
	    struct err *e);
/* Put r where the checkpoint ck, read into k, left the run, its keys kept
 * for the checkpoints to come: then r->st.done says whether the run is
 * finished. */
int	 train_restore(struct train *r, const struct vt *ck, const struct train_keys *k,
	    struct err *e);
/* The input of a resumed run opened at the record where it stopped, and
 * checked to be the run's (unless force). */
int	 train_reopen(struct train *r, int force, struct err *e);
/* Ready to train, model made or resumed: the schedule laid out, --val
 * checked, --log opened (a resumed run's cut at its checkpoint). */
int	 train_start(struct train *r, struct err *e);
/* Train to the end (epochs, steps, patience, the input's end), validate
 * and checkpoint last, and say the summary: 0, -1, or TRAIN_STOPPED. */
int	 train_run(struct train *r, struct err *e);
/* Free what r holds (the ranks stay, dist_end). */
void	 train_free(struct train *r);

/* From now on SIGINT and SIGTERM stop the run at the end of the step under
 * way (train_run returns TRAIN_STOPPED); a second signal ends it at once.
 * One process only: ranks would stop at different steps. */
void	 train_catch_stop(void);
/* The signal that stopped the run, or 0. */
int	 train_signal(void);

#endif
