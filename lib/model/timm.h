/*
 * timm.h - a model's weights under the names and layouts of timm's
 * VisionTransformer (safetensors files), and such weights into a model.
 *
 *   vitpipe                     timm
 *   patch.w [D][P]              patch_embed.proj.weight [D, C, ph, pw] (a
 *                               conv: P = ph pw C values, channels last ->
 *                               C first; [D, C, pt, ph, pw] for tubelets)
 *   patch.b                     patch_embed.proj.bias
 *   cls [D]                     cls_token [1, 1, D]
 *   pos_embed [1+G][D]          pos_embed [1, 1+G, D] (CLS row first)
 *   blocks.L.ln1.w, .b          blocks.L.norm1.weight, .bias
 *   blocks.L.attn.qkv.w, .b     blocks.L.attn.qkv.weight [3D, D], .bias
 *   blocks.L.attn.proj.w, .b    blocks.L.attn.proj.weight, .bias
 *   blocks.L.attn.log_sigma     blocks.L.attn.log_sigma (vitpipe's own)
 *   blocks.L.ln2.w, .b          blocks.L.norm2.weight, .bias
 *   blocks.L.mlp.fc1.w, ...     blocks.L.mlp.fc1.weight, ...
 *   norm.w, norm.b              norm.weight, norm.bias
 *   head.w, head.b              head.weight [C, D], head.bias
 *   pe.params (rope-mixed,      rope.freqs [2, depth, heads, head_dim/2]:
 *     2 axes, share none)       timm's RotaryEmbeddingMixed, x first, the
 *                               angle's sign as timm's (u = -f)
 *   pe.params (the others)      pe.params [nset, set_params] (lib/pe/pe.h)
 *
 * Imported besides: layer scale (blocks.L.ls1.gamma, ls2.gamma, EVA's
 * gamma_1, gamma_2), folded into the projection it scales.  The metadata
 * of an export hold the checkpoint's header keys (VIT_*, PE, MEAN, STD,
 * CLASS ...; a repeated key's values joined by newlines), "format": "pt"
 * and "vitpipe": the version, which marks vitpipe's own exports.
 */
#ifndef TIMM_H
#define TIMM_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "safetensors.h"
#include "vit.h"
#include "vt.h"

#define TIMM_MARK	"vitpipe"	/* metadata key of vitpipe's exports */

/* Fill out (empty) with m's parameters under timm's names and layouts and
 * the header keys of ckpt (the checkpoint m was read from) as metadata.
 * Tensors whose layout differs are converted copies that st_free frees;
 * the others are lent from m.  0, or -1 with e. */
int	 timm_export(const struct vit *m, const struct vt *ckpt, struct st *out,
	    struct err *e);

/* What an import may change. */
struct timm_opts {
	int	 classes;		/* head outputs; 0: the file's */
	int	 heads;			/* 0: the metadata's, else dim / 64 */
	int	 ngrid;			/* 0, or the axes of grid */
	int	 grid[VIT_MAXAXES];	/* the token grid the model will see */
	int	 ignore_unknown;	/* names it does not know are skipped */
	uint64_t seed;			/* of a new head's initialisation */
};

enum timm_fate {
	TIMM_MAPPED,		/* into dst, converted as how says */
	TIMM_SKIPPED,		/* not needed (why): a buffer, a replaced head */
	TIMM_UNKNOWN,		/* no place in vitpipe's ViT (why) */
	TIMM_MISFIT,		/* a place, but not its shape (why) */
	TIMM_MISSING,		/* a model tensor no file tensor fills (t NULL) */
};

/* What becomes of one tensor of the file, or of a model tensor missing. */
struct timm_entry {
	const struct st_tensor *t;
	int	 fate;			/* enum timm_fate */
	int	 how;			/* the conversion (timm.c) */
	char	 dst[VIT_MAXNAME];	/* the model tensor (mapped, missing) */
	char	 why[384];		/* what is done, or why not */
};

/* An import planned from a file's header: the model, and every tensor's
 * fate. */
struct timm_plan {
	struct vit *m;			/* nbad: its tensor table alone
					   (vit_describe); else built,
					   parameters not read yet */
	struct vt keys;			/* header keys for its checkpoint */
	int	 vitpipe;		/* the file is vitpipe's export */
	int	 new_head;		/* head initialised from opts.seed */
	int	 src_grid[VIT_MAXAXES];	/* the position table's grid in the file */
	int	 n;
	struct timm_entry *e;		/* [n]: the file's tensors in order, then
					   the missing */
	int	 nbad;			/* misfit, missing, and unknown unless
					   ignored: the import cannot be done */
};

/* Plan the import of the weights whose header s holds: infer the model (its
 * config from the metadata of a vitpipe export, else from the shapes: dim
 * from cls_token, depth from the blocks, mlp from fc1, heads dim / 64,
 * classes from head, patch from the conv, abs when pos_embed, rope-mixed
 * when rope.freqs) and map every tensor.  0 with the plan (nbad may be
 * non-zero), or -1 with e when no model can be inferred; either way
 * timm_plan_free frees p. */
int	 timm_plan(struct timm_plan *p, const struct st *s,
	    const struct timm_opts *o, struct err *e);
/* Read the mapped tensors of s into p->m (nbad must be 0): copied,
 * converted, the position table resampled to the grid, layer scales
 * folded.  0, or -1 with e, which names the file (a value that is not
 * finite among them: st_read_f32). */
int	 timm_load(struct timm_plan *p, struct st *s, struct err *e);
/* Free p and its model. */
void	 timm_plan_free(struct timm_plan *p);

/* The position table tab[1+prod(from)][D] (CLS row first) resampled to
 * the grid to[axes] into out[1+prod(to)][D], axis by axis, as timm's
 * resample_abs_pos_embed does it (PyTorch's antialiased bicubic, a = -0.5,
 * align_corners false); the CLS row is copied.  0, or -1 when out of
 * memory. */
int	 timm_resample(const float *tab, const int *from, const int *to, int axes,
	    int D, float *out);

#endif
