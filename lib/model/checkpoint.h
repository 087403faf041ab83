/*
 * checkpoint.h - a model in one single-record vitpipe container: the
 * configuration as header keys (vit_config_save's VIT_* keys, and PE,
 * SHARE, HEAD_DIM, AXES, HEADS, LAYERS as skewgen files have them), every
 * parameter tensor as a field of its own name ("pe.params", ...), and, for
 * training checkpoints, the AdamW moments as fields "adam.m" and "adam.v"
 * [nparam].  Written with vt_save, so a reader sees the old file or the
 * new one, never a part.
 */
#ifndef CHECKPOINT_H
#define CHECKPOINT_H

#include <stddef.h>

#include "err.h"
#include "vit.h"
#include "vt.h"

#define CKPT_ADAM_M	"adam.m"
#define CKPT_ADAM_V	"adam.v"

/* Save m to path atomically: the metadata of extra (may be NULL) first,
 * then the config keys, the tensors and, when optimizer, the moments.
 * 0, or -1 with a message in e; a model with a weight (or written
 * moment) that is not finite is never written (ckpt_describe). */
int	 ckpt_save(const char *path, const struct vit *m, const struct vt *extra,
	    int optimizer, struct err *e);
/* Describe m in the empty s as ckpt_save writes it: extra's keys, the
 * config keys, the tensors (lent from m) and, when optimizer, the moments;
 * for a caller that writes s itself (to stdout).  0, or -1 with e, a
 * weight or written moment that is not finite among them (vit_finite). */
int	 ckpt_describe(struct vt *s, const struct vit *m, const struct vt *extra,
	    int optimizer, struct err *e);
/* Read the container at path into s (its keys stay there for the caller;
 * its fields are lent to the model or were read past) and build the model
 * it describes for batches up to maxB records of maxT tokens (0: its
 * training grid's), the parameters read straight into it: with resume, a
 * model to train on (vit_create) and the moments; else one for forward
 * passes alone (vit_create_infer), and the moments are read past, never
 * held.  Before anything is built, every tensor of the model the keys
 * describe (and with resume each moment) must have a field of exactly its
 * dtype and shape, and the fields must be in the file: a checkpoint costs
 * the memory of the bytes it carries, plus its batch's activations.  NULL
 * with a message in e (a field that does not fit: its name, its shape
 * and the model's; a weight or read moment that is not finite), s then
 * freed. */
struct vit *ckpt_load(const char *path, struct vt *s, int maxB, int maxT,
	    int resume, struct err *e);
/* Copy the f32 field of s called name into tensor name of m, checking its
 * element count.  0, or -1 with e. */
int	 ckpt_copy_tensor(struct vit *m, struct vt *s, const char *name,
	    struct err *e);

/* Set m's tensor pe.params from the skewgen file at path, whose keys PE,
 * SHARE, HEAD_DIM, AXES, HEADS and LAYERS must be the model's, and whose
 * values must be finite.  0, or -1 with e. */
int	 ckpt_load_generators(struct vit *m, const char *path, struct err *e);

#endif
