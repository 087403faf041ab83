/*
 * vit.h - the Vision Transformer engine: a ViT classifier over token rows
 * x[B][T][P] with positions pos[B][T][A], every position encoding of the
 * papers in one backbone, forward and backward on the CPU.
 *
 * Model (pre-LayerNorm, DeiT/timm layout):
 *   h = x W_pe + b_pe                     patch embedding      [B][T][D]
 *   h = [cls; h] (+ abs/sincos table)     CLS first            [B][T+1][D]
 *   h = emb_dropout(h)
 *   depth x { h += drop(proj(attn(LN1(h))))
 *             h += drop(fc2(drop(gelu(fc1(LN2(h)))))) }
 *   z = LN(h); z = z[cls] or mean over all T+1 rows (--pool mean, as the
 *   LieRE reference code, CLS included); logits = z W_head + b_head.
 * GELU is the exact erf form (PyTorch's default).  Rotary encodings act on
 * q and k of every head: q' = R(p) q, k' = R(p) k (lib/pe/pe.h); locality
 * focusing multiplies the softmax weights by exp(-|p_m - p_n|^2/(2 s^2))
 * with one learnable s per layer and head (RiemannFormer eq. 22, no
 * renormalization); pairs involving an unpositioned CLS get factor 1.
 * Both see positions through the config's map, pos_scale p + pos_shift
 * per axis (vit-train: the stream's convention into the encoding's own).
 *
 * LayerNorm eps is 1e-6 (timm/DeiT).  The locality sigma is learned as
 * log sigma.  Under CLS pooling the last block computes attention, MLP and
 * residual for the CLS rows only (nothing reads the others but a probe,
 * vit_set_probe): same result, about 1/8 fewer operations at depth 6.
 *
 * All parameters, gradients and AdamW moments live in one arena; the tensor
 * table names every parameter tensor so optimizers and checkpoints iterate
 * over it: patch.w [D][P], patch.b, cls, pos_embed [1+G][D] (abs),
 * blocks.L.{ln1.w, ln1.b, attn.qkv.w [3D][D], attn.qkv.b, attn.proj.w,
 * attn.proj.b, attn.log_sigma [H] (locality), ln2.w, ln2.b, mlp.fc1.w
 * [M][D], mlp.fc1.b, mlp.fc2.w [D][M], mlp.fc2.b}, norm.w, norm.b, head.w
 * [C][D], head.b, and pe.params [nparam] in lib/pe/pe.h's layout (skewgen
 * files load into it).  Weights are PyTorch nn.Linear layout [out][in].
 * Activations are allocated once at vit_create for the largest batch and
 * token count; forward and backward never allocate.
 */
#ifndef VIT_H
#define VIT_H

#include <stddef.h>
#include <stdint.h>

#include "adamw.h"
#include "err.h"
#include "nn.h"

#define VIT_MAXAXES	3	/* position coordinates per token, at most (t, y, x) */
#define VIT_MAXRANK	4
#define VIT_MAXNAME	64
#define VIT_PESPEC	64

/* The largest model vit_config_check takes (its heads: pe_parse's,
 * PE_MAXHEADS); the shape options (lib/cli/shapeopt.h) refuse past them. */
#define VIT_MAXDIM	65536		/* width */
#define VIT_MAXDEPTH	1024		/* blocks */
#define VIT_MAXMLP	(1 << 18)	/* MLP hidden width */
#define VIT_MAXCLASSES	(1 << 20)	/* outputs of the head */

enum vit_pool { VIT_POOL_CLS, VIT_POOL_MEAN };

struct vit_config {
	int	 dim;			/* D: model width */
	int	 depth;			/* transformer blocks */
	int	 heads;			/* H: attention heads, D % H == 0 */
	int	 mlp;			/* M: hidden width of the MLP */
	int	 classes;		/* C: outputs of the head */
	int	 P;			/* input values per token (patch size) */
	int	 axes;			/* A: coordinates per position, 1..VIT_MAXAXES */
	int	 pool;			/* enum vit_pool */
	char	 pe[VIT_PESPEC];	/* a spec of pe.h: "liere:8", "none" (the
					   encodings: lib/pe/all.c) */
	int	 share;			/* enum pe_share (pe.h): rotary generators per layer/head */
	float	 dropout;		/* after attention proj, GELU and fc2 */
	float	 emb_dropout;		/* after the embedding (+ position table) */
	int	 locality;		/* 1: RiemannFormer locality focusing */
	float	 sigma;			/* locality: initial sigma (position units) */
	int	 grid[VIT_MAXAXES];	/* training token grid [A] (abs, sincos) */
	int	 cls_rotate;		/* 1: CLS has position cls_pos (rotated, used by
					   locality); 0: CLS unrotated, no position */
	float	 cls_pos[VIT_MAXAXES];	/* [A] */
	int	 pos_per_record;	/* 1: records of a batch may have different
					   positions (augmented): rotations are kept
					   for every record (memory: maxB times) */
	float	 pos_scale[VIT_MAXAXES];	/* [A]: the positions the encoding and */
	float	 pos_shift[VIT_MAXAXES];	/* locality see, scale * pos + shift
					   (CLS's too; vit-train's --positions);
					   1 and 0: as given */
};

struct vit_tensor {
	char	 name[VIT_MAXNAME];	/* "blocks.3.attn.qkv.w", "pe.params", ... */
	size_t	 off;			/* first element in param/grad/adam_m/adam_v */
	size_t	 n;			/* elements */
	int	 rank;
	int	 shape[VIT_MAXRANK];
	int	 decay;			/* 1: weight decay applies (matrices only) */
};

struct vit_state;			/* activations and scratch (vit.c) */

/* What a probe (vit_set_probe) is shown of block layer's attention in a
 * forward: B records of T1 tokens (CLS first), H heads of hd. */
struct vit_probe {
	int	 layer;
	int	 B, T1, H, hd;
	/* The rows whose dot products, over sqrt(hd), are the scores: q and
	 * k as attention takes them, turned by the rotary encodings (a basis
	 * encoding's B(x) P^T q, whose products are q^T R(x)^T R(y) k's);
	 * head h of token t of record b at q + (b * T1 + t) * ld + h * hd,
	 * k alike. */
	const float *q, *k;
	int	 ld;
	/* [B][H][T1][T1], a query's row of keys: the weights that multiply v,
	 * the softmax times the locality factor under c.locality. */
	const float *w;
};

struct vit {
	struct vit_config c;
	size_t	 nparam;
	float	*param;			/* [nparam] 64-byte aligned, all four in one arena */
	float	*grad;			/* [nparam] accumulated by vit_backward */
	float	*adam_m;		/* [nparam] optimizer state, zero at create */
	float	*adam_v;		/* [nparam]; the three NULL when infer */
	int	 infer;			/* made by vit_create_infer */
	int	 ntensor;
	struct vit_tensor *tensor;	/* [ntensor] in arena order */
	int	 maxB, maxT;		/* capacity: batch, patch tokens (no CLS) */
	int64_t	 rotations_made;	/* forwards that computed R (not reused) */
	/* A batch that is one process's share of a larger one (data-parallel
	 * training, lib/model/dist.h): the index there of its first record,
	 * by which each record draws its dropout masks as in the whole (0:
	 * the batch is whole). */
	int	 first_record;
	/* The precision of the linear layers' and attention's products
	 * (vit_create: GEMM_FP32; GEMM_BF16 where gemm_bf16_mode allows):
	 * parameters, gradients, sums and the position encodings stay fp32. */
	enum gemm_prec prec;
	/* NULL, or called by vit_backward as soon as the gradient of block l
	 * is complete (the last block's with the final norm's and the
	 * head's), l = depth - 1 down to 0: a data-parallel trainer sends it
	 * while the blocks below run. */
	void	(*grad_ready)(void *arg, int l);
	void	*grad_arg;
	/* NULL, or called by vit_forward after each block's attention
	 * (vit_set_probe). */
	void	(*probe)(void *arg, const struct vit_probe *p);
	void	*probe_arg;
	struct err err;			/* why the last vit_forward returned NaN */
	struct vit_state *st;
};

/* Fill c with defaults: tiny preset, P 48, 2 axes, 10 classes, pool cls,
 * pe "none", share none, no dropout, no locality, sigma 1, grid 8x8 (one
 * per axis), CLS unrotated at 0, positions as given (scale 1, shift 0). */
void	 vit_config_init(struct vit_config *c);
/* Set dim/depth/heads/mlp from a preset: tiny small base large cifar.
 * 0, or -1 for an unknown name. */
int	 vit_preset(struct vit_config *c, const char *name);
/* enum vit_pool of "cls" or "mean", or -1. */
int	 vit_pool_parse(const char *name);
/* Check c; 0, or -1 with a reason in e. */
int	 vit_config_check(const struct vit_config *c, struct err *e);

struct vt;
/* Store c as header keys of s ("VIT_DIM 192", "VIT_PE liere:8", ...), for
 * checkpoints.  0 or -1. */
int	 vit_config_save(const struct vit_config *c, struct vt *s);
/* Read c back from keys written by vit_config_save; 0, or -1 with e. */
int	 vit_config_load(struct vit_config *c, const struct vt *s,
	    struct err *e);

/* The parameter tensors of a model of c as vit_create lays them out in
 * its arena (the same code, run without building anything), in order,
 * each passed to fn, which returns 0 to go on; *nparam: the arena's
 * floats, when it returns 0.  0, fn's first non-zero, or -1 with e on
 * a bad config. */
int	 vit_layout(const struct vit_config *c,
	    int (*fn)(void *arg, const struct vit_tensor *t), void *arg,
	    size_t *nparam, struct err *e);
/* The most floats of a fixed table (sincos's [1+G][D]) a model may hold
 * beyond its parameter count: 4 MiB.  No file carries the table. */
#define VIT_MAXFIXED	((size_t)1 << 20)
/* A model of c with its tensor table and nparam but no arrays, to plan
 * what fills it before anything is built (the timm import); only
 * vit_find_tensor and vit_destroy take it.  NULL with e. */
struct vit *vit_describe(const struct vit_config *c, struct err *e);
/* Build a model for batches up to maxB records of up to maxT patch tokens,
 * parameters initialized from seed (truncated normal std 0.02 for weights,
 * zero biases, unit LayerNorm gains, position encodings as lib/pe/pe.h).
 * NULL with a reason in e on a bad config (a fixed table of more floats
 * than its parameters and VIT_MAXFIXED too) or no memory. */
struct vit *vit_create(const struct vit_config *c, int maxB, int maxT,
	    uint64_t seed, struct err *e);
/* The same for forward passes alone (evaluation): no gradient, optimizer
 * or backward memory, and one block's activations for all blocks (depth
 * times less); the same logits and loss, bit for bit; vit_forward
 * refuses training, and vit_backward has nothing to do.  Parameters zero,
 * for the caller to load (ckpt_load). */
struct vit *vit_create_infer(const struct vit_config *c, int maxB, int maxT,
	    struct err *e);
void	 vit_destroy(struct vit *m);

/* The stretches of m's arena for adamw_step, a tensor each, decayed where
 * the tensor takes weight decay (malloc'd; NULL: out of memory). */
struct adamw_seg *vit_segments(const struct vit *m);
/* 0 when every parameter of m (and with moments its AdamW moments, if it
 * has them) is finite; else -1 with e naming the first tensor that holds
 * a NaN or infinity, and where ("tensor 'head.w' holds nan (element 3 of
 * 32)"). */
int	 vit_finite(const struct vit *m, int moments, struct err *e);
/* The tensor called name, or NULL. */
const struct vit_tensor *vit_find_tensor(const struct vit *m, const char *name);
/* Grid [A] of the tokens of the following forwards (abs and sincos tables
 * are interpolated when it differs from c.grid); T must equal its product.
 * Default: c.grid.  0, or -1 if it does not fit. */
int	 vit_set_grid(struct vit *m, const int *grid);
/* Tokens of a grid g[A]: the product of its sides. */
int	 vit_grid_size(const int *g, int A);
/* 1 when every record's positions pos[B][T][A] equal the first's; 0 for
 * augmented ones (posgen --perturb, --offset), which need pos_per_record
 * in rotary models. */
int	 vit_shared_positions(const float *pos, int B, int T, int A);
/* 1 when the model adds a position table (abs, sincos), whose tokens must
 * fill a grid; 0 when it takes positions of any layout. */
int	 vit_has_table(const struct vit *m);
/* Rotation matrices of blocks of 16 and more in float (exact 0, the
 * default: as float32 autograd, twice as fast) or in double, exact to
 * float rounding (exact 1: a loss smooth enough for finite differences). */
void	 vit_exact_rotations(struct vit *m, int exact);

/* Run the model on x[B][T][P] with positions pos[B][T][A] (NULL only for
 * encodings that use none), write logits[B][C], and return the mean over
 * the batch of the cross-entropy against target[B][C] probabilities (0 if
 * target is NULL).  training: dropout on, masks from (seed, record), so the
 * result does not depend on the thread count.  Rotations: once for the
 * batch when all records share positions, else per record (needs
 * c.pos_per_record); the last call's are reused, bit for bit the same,
 * when neither the position-encoding parameters nor the positions changed
 * (the batches of an evaluation, the micro-batches of a step).  NaN with
 * m->err on a batch that does not fit (sizes, grid, differing positions
 * without pos_per_record). */
float	 vit_forward(struct vit *m, const float *x, const float *pos, int B,
	    int T, const float *target, float *logits, int training,
	    uint64_t seed);
/* Show fn(arg, p) every block's attention in the forwards that follow
 * (fn NULL: none, the default), all rows of every block computed: with
 * CLS pooling the last block then computes the patch rows too, which the
 * logits do not read (the same logits, but for the products' rounding).
 * A model that keeps no weights (vit_create_infer's, or under locality)
 * gets room for one block's here.  0, or -1 with e. */
int	 vit_set_probe(struct vit *m, void (*fn)(void *arg, const struct vit_probe *p),
	    void *arg, struct err *e);
/* The CLS positions cls[B][A] of the records of the forwards that follow
 * (a stream's 'clspos': posgen --offset moves a positioned CLS with its
 * record's patches), or NULL (the default): c.cls_pos for all.  Read only
 * when c.cls_rotate or c.locality; the pointer is kept, not the floats. */
void	 vit_set_cls_positions(struct vit *m, const float *cls);
/* Add the gradient of the last forward's loss to m->grad (needs target and
 * a model of vit_create). */
void	 vit_backward(struct vit *m);
/* on 1: vit_backward sums dL/dR over the calls that share their forwards'
 * rotations (the micro-batches of one optimizer step, with shared
 * positions) and takes the sum through the exponential's adjoint once, in
 * vit_grad_complete, which must then come before m->grad is read.  0 (the
 * default) completes it at once, as does turning deferral off. */
void	 vit_defer_rotation_grad(struct vit *m, int on);
/* Complete m->grad with a deferred rotation gradient, if any. */
void	 vit_grad_complete(struct vit *m);
/* Zero m->grad, a deferred rotation gradient included. */
void	 vit_zero_grad(struct vit *m);
/* The squared norm of m->grad with each tied parameter once (its copies,
 * pe_tied, left out): the norm PyTorch's clip_grad_norm_ takes. */
double	 vit_grad_sumsq(const struct vit *m);
/* dL/dx [B][T][P] of the last vit_backward. */
const float *vit_dx(const struct vit *m);

/* Floating-point operations of one forward over B records of T tokens as
 * the engine runs it (matrix products and attention; a training step is
 * about 3x). */
double	 vit_flops(const struct vit_config *c, int B, int T);

#endif
