/*
 * trainlog.h - vit-train's --log read back (vit-plot): JSON lines, one
 * object each.  A line with "step" and "loss" is a training point (its
 * "lr" too), one with "step" and "val_acc" a validation point (its
 * "val_loss" too); other keys, and lines without a step, are ignored.
 * Besides JSON, nan and inf are read, as printf writes them for a diverged
 * run: such a value is no point.  A point that no plot can hold, its step
 * past TLOG_MAXSTEP or its value past TLOG_MAXVALUE (either way), is
 * skipped and counted.
 */
#ifndef TRAINLOG_H
#define TRAINLOG_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"

#define TLOG_MAXSTEP	1e15	/* whole steps all exact, and step + 1 > step */
#define TLOG_MAXVALUE	1e300	/* gnuplot's ranges around it overflow no double */

enum { TLOG_LOSS, TLOG_LR, TLOG_VAL, TLOG_VLOSS, TLOG_NCURVE };

/* The keys of the curves, in enum order: "loss", "lr", "val_acc", "val_loss". */
extern const char *const tlog_keys[TLOG_NCURVE];

struct tlog_curve {
	double	*x, *y;		/* [n]: step, value, in file order */
	size_t	 n, cap;
};

struct tlog {
	struct tlog_curve c[TLOG_NCURVE];
	long long partial;	/* the number of a partial last line (no
				   newline: a run still writing, or killed)
				   that was not a whole object, skipped; 0:
				   none */
	long long skipped;	/* points skipped: no plot holds them */
	char	 skip_why[128];	/* the first one: "line 3: step 1e+308" */
	struct err err;
};

/* Read the log at fp (name in messages) into t: 0, or -1 with t->err
 * naming the file and line ("run.jsonl:7: ',' expected") of a line that
 * is no JSON object (but a partial last line), or holds a NUL.  Memory in
 * proportion to its bytes.  tlog_free frees t either way. */
int	 tlog_read(struct tlog *t, FILE *fp, const char *name);
void	 tlog_free(struct tlog *t);

#endif
