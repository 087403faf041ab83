/*
 * evalin.h - a checkpoint's model and the stream to run it on, opened as
 * vit-eval and vit-probe open them: the stream's patches, positions and
 * normalization checked against the checkpoint's, its positions mapped
 * into the encoding's convention on its grid.  Failures die (cli.h).
 */
#ifndef EVALIN_H
#define EVALIN_H

#include <stdio.h>

#include "batch.h"
#include "vit.h"
#include "vt.h"

struct eval_input {
	struct vt ck;		/* the checkpoint's keys */
	struct vit *m;		/* its model, for forward passes alone */
	struct vt s;		/* the stream, its header read */
	struct batch_reader br;	/* over s, labels as it has them */
	FILE	*fp;
	const char *name;	/* the stream's, for messages */
};

/* Load the checkpoint at model for batches of up to batch records and
 * open the stream at path (NULL or "-": stdin, not a terminal) for it;
 * warn where the stream's position convention is not the model's
 * training stream's, or a position table is resampled to its grid. */
void	 eval_input_open(struct eval_input *in, const char *model, const char *path,
	    int batch);
/* Free what eval_input_open made, and close the stream. */
void	 eval_input_close(struct eval_input *in);

#endif
