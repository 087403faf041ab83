/*
 * dist.h - data-parallel training over MPI: one model trained by the N
 * processes (ranks) that an MPI launcher (mpirun) starts, each on its
 * share of every global batch; their gradients summed by allreduce in
 * buckets of one transformer block each, sent while the blocks below run
 * their backward, so that every rank takes the same optimizer step.
 *
 * A global batch of m records, planned as max (batch_next's), is cut in
 * N contiguous shares in stream order, rank r's the records [r max / N,
 * (r + 1) max / N) that are there: N ranks at batch B train on exactly
 * the records one process at batch B does.  The input is a regular file,
 * which every rank reads whole (each reads every record of a batch, to
 * know where the batch ends, and trains on its share), or a stream (stdin,
 * a FIFO, anything else that is no regular file), which rank 0 alone reads,
 * sending each rank its share; the first batch goes whole to every rank,
 * as the model's grid comes from it.
 *
 * Alone (no launcher) a process is rank 0 of 1 and makes no MPI call at
 * all: Open MPI's singleton start forks a daemon and takes a third of a
 * second.
 *
 * A rank waiting for the others polls with sleeps rather than spin in MPI
 * (which takes a core from a producer on the same host).  The waits for
 * the gradient sums, and rank 0's for the records it sends, are bounded
 * (d->timeout), so that a lost host or link ends the run, naming the
 * ranks that do not answer; a wait for rank 0's stream is not (a stream
 * may pause).
 */
#ifndef DIST_H
#define DIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "batch.h"
#include "err.h"
#include "vit.h"
#include "vt.h"

struct dist_state;		/* MPI's side (dist.c) */

struct dist {
	int	 rank, size;	/* 0 and 1 alone */
	/* the last global batch (dist_next) */
	int64_t	 m;		/* its records */
	int	 whole;		/* 1: b holds all of them, else the share alone */
	int	 lo, n;		/* the share: records [lo, lo + n) of the batch */
	int	 at;		/* the share's first record in b: lo, or 0 */
	double	 comm;		/* seconds in MPI calls since the caller zeroed it */
	/* the last step's gradient sums (dist_reduce) */
	double	 sums;		/* seconds from the first started to all done */
	double	 exposed;	/* of those, seconds waited after the backward */
	/* set by the caller after dist_init */
	double	 timeout;	/* seconds rank 0 waits for the others (the
				   others, in the sums, twice as long) before
				   it ends the run: 0, never */
	int	 bf16;		/* the sums on the wire in bf16 */
	struct dist_state *st;
};

/* Start MPI when an MPI launcher started this process (mpirun sets
 * OMPI_COMM_WORLD_SIZE, Slurm's srun PMIX_RANK or PMI_RANK), else be rank
 * 0 of 1.  0, or -1 with e. */
int	 dist_init(struct dist *d, struct err *e);
/* Stop MPI: every rank, after its last collective call. */
void	 dist_end(struct dist *d);

/* Whether the input is a stream, read once and by rank 0 alone: fp,
 * opened by rank 0 (the others' is not looked at), is stdin or no regular
 * file (a FIFO, a character device), which a second reader would take
 * records from, or find on rank 0's host only.  Every rank calls it
 * before it opens the input: the others open a regular file, never a
 * stream. */
int	 dist_stream(struct dist *d, FILE *fp);
/* Read the header of the input fp (name for messages), after
 * dist_stream: every rank from its own file, or, from a stream and with
 * other ranks, rank 0, sending it to the others (their fp is not looked
 * at), which then get their records from rank 0 too.  0, or -1 with
 * s->err. */
int	 dist_read_header(struct dist *d, struct vt *s, FILE *fp,
	    const char *name);
/* batch_skip by every rank that reads the input.  0 or -1. */
int	 dist_skip(struct dist *d, struct batch_reader *br, int64_t n);
/* The next global batch, of up to max records (the same max on every
 * rank), as batch_next makes it: its record count m (0 at the input's
 * end), with b holding it whole or (d->whole 0) this rank's share, to
 * come from dist_scatter.  -1 with br->s->err. */
int64_t	 dist_next(struct dist *d, struct batch_reader *br, struct batch *b,
	    int max);
/* After targets[m][C] (and mixup) were made for the whole batch where it
 * is whole: rank 0 sends each rank that holds its share alone that share
 * of b and of target, into its b and target.  0, or -1 with e. */
int	 dist_scatter(struct dist *d, struct batch *b, float *target, int C,
	    struct err *e);
/* v = this rank's share of the batch in b (pointers into b's arrays). */
void	 dist_view(const struct dist *d, const struct batch *b, struct batch *v);

/* The next vit_backward on m is of the step's last micro-batch: it sends
 * each block's gradient, times scale, as soon as it is complete. */
void	 dist_arm(struct dist *d, struct vit *m, float scale);
/* End of a step: m->grad (complete: vit_grad_complete) times scale,
 * summed over the ranks (what dist_arm did not send yet is sent now), and
 * *lsum summed; then m->grad is the same on every rank, and d->sums and
 * d->exposed say how long the sums took.  With d->bf16 each bucket goes
 * over the wire rounded to bf16, summed in bf16 hop by hop.  Alone:
 * m->grad times scale.  0, or -1 with e. */
int	 dist_reduce(struct dist *d, struct vit *m, float scale, double *lsum,
	    struct err *e);
/* Whether every rank holds the same parameters and moments, bit for bit:
 * 0, or -1 with e. */
int	 dist_same(struct dist *d, const struct vit *m, struct err *e);

#endif
