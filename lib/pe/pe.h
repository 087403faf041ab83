/*
 * pe.h - the position encodings of the ViT: a parsed spec (struct pe: the
 * encoding's descriptor, lib/pe/pe_method.h, its options and the model's
 * shape), and the engine of the rotary ones.
 *
 * An encoding either adds a table to the tokens (abs, sincos, ape: its
 * descriptor's struct pe_table; the model's position stage,
 * lib/model/posenc.h, reads it) or rotates queries and keys.  A rotary
 * one is R(p) = exp(sum_i p_i A_i) for a token position p[axes] and
 * skew-symmetric generators A_i, block-diagonal with blocks of size b
 * (b divides head_dim), optionally in an orthogonal basis of its own
 * (R = P B(p) P^T); the encodings differ in the structure imposed on the
 * A_i and in what is learnable.  One "generator set" holds the A_i of one
 * (layer, head); sharing maps many (layer, head) pairs to one set.
 *
 * Call pattern of a training step (the engine):
 *
 *	pe_parse(&pe, "liere:8", head_dim, axes, heads, layers, "none");
 *	pe_work_init(&w, &pe, T);                   once, allocates
 *	w.f32 = 1;                                  float, as the engine
 *	pe_init_params(&pe, &ini, params);          once, seeded
 *	pe_rotations(&pe, &w, params, T, pos, R);   per step, all sets
 *	  per layer l, head h:  s = pe_set(&pe, l, h); for the batch q[B][T][dim]
 *	    pe_apply_batch(&pe, B, T, pe_R(&pe, R, s, T), q + h*hd, T*dim, dim,
 *	        q + h*hd, T*dim, dim)               (and k; or pe_apply per image)
 *	  backward, per layer/head:
 *	    pe_apply_batch_backward(... R_s, q_in, dq_rot, dq_in, dR_s)
 *	pe_rotations_backward(&pe, &w, params, T, pos, R, dR, dparams);  per step
 *
 * R depends only on positions and parameters, not on the image, so it is
 * computed once per step and applied to every image; dL/dR is summed over
 * the images by pe_apply_batch_backward and turned into dL/dparams once.
 *
 * Conventions.  A 2x2 generator block with upper entry u is [[0, u],
 * [-u, 0]], so exp of it is [[cos u, sin u], [-sin u, cos u]]; RoPE's
 * rotation of a pair (x0, x1) by angle f is the upper entry u = -f.
 * Positions are pos[T][axes], axes ordered (y, x) or (t, y, x) as in the
 * stream's pos field.  A CLS token is the engine's business: give it a pos
 * row (CLSPOS y,x) or leave its row out of pe_apply (CLSPOS none).
 *
 * Functions that can fail return 0 or -1 and leave a message in pe->err or
 * the workspace's err; none of them exits.  Nothing here allocates except
 * pe_work_init; pe_rotations and pe_rotations_backward thread with OpenMP
 * (call them from serial code), the pe_apply functions are serial (call
 * them from the engine's own parallel loops, e.g. over heads).
 */
#ifndef PE_H
#define PE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct vt;
struct rays;
struct pe_method;

#define PE_FIELD	"pe.params"	/* f32 [nparam] in skewgen files and checkpoints;
					   methods without parameters may omit it */
#define PE_MAXDIM	1024		/* largest head_dim */
#define PE_MAXHEADS	4096		/* most heads, and most layers */
#define PE_OPTBYTES	32		/* an encoding's options, at most */

/* Generator sets: one per (layer, head), per layer (shared by its heads),
 * per head (shared by the layers) or one for all; the model's too
 * (vit_config.share). */
enum pe_share { PE_SHARE_NONE, PE_SHARE_HEADS, PE_SHARE_LAYERS, PE_SHARE_ALL };

/*
 * Parameter layout, per generator set (set_params floats each), sets
 * stored one after the other: params[nset][set_params].  "U[k]" is the
 * upper triangle of a b x b skew block, row-major over i < j
 * (k = b(b-1)/2 entries); the block is U - U^T.  nb = head_dim / b.
 *
 *   none, zeros, abs, sincos, ape, rope-axial   0 parameters
 *   liere:b       U[axes][nb][k]            generator A_i block j
 *   rope-mixed    U[axes][head_dim/2][1]    = liere:2, other init
 *   comrope-ap:b  U[nb][k]                  block j belongs to axis j % axes
 *   comrope-ld:b  U[nb][k], then scale[axes][nb]: A_i block j = scale[i][j] U_j
 *                 (option tied: each set keeps a copy of the scales its
 *                 layer's sets share, pe_tied)
 *   riemann       angle[head_dim/2], then w: pair j turns by p_g angle[j]
 *                 (g = pe_pair_axis), scale s^(sum_i p_i / 2),
 *                 s = e^w / (e^w + alpha)
 *   string        U[axes][head_dim/2][1] as rope-mixed, then S[d(d-1)/2]
 *                 (d = head_dim): R = P B P^T, B rope-mixed's rotation,
 *                 P = (I - S)(I + S)^-1 with S = S_up - S_up^T
 *   rope-nd       A[d(d-1)/2]: R = Q B Q^T, B rope-axial's, Q = exp(A)
 *
 * Pair groups (rope-axial, riemann): the head_dim/2 pairs are cut into
 * axes contiguous groups; group 0 is driven by the last axis (x), group 1
 * by the one before (y), group 2 by t.
 */
struct pe {
	const struct pe_method *method;	/* the encoding (lib/pe/NAME.c) */
	int	 block;		/* b: block size (2 for the rope-style methods) */
	int	 head_dim;	/* d, a multiple of b */
	int	 axes;		/* N: position coordinates, 1 .. 3 */
	int	 heads, layers;
	int	 share;		/* enum pe_share */
	int	 nblock;	/* d / b blocks per rotation */
	int	 nset;		/* generator sets stored (after sharing) */
	int64_t	 set_params;	/* learnable floats per set */
	int64_t	 nparam;	/* nset * set_params */
	int64_t	 rsize;		/* floats of one token's R: nblock * b * b */
	/* The encoding's options, its own struct that its descriptor's
	 * option table describes (pe_method.h); pe_option reads one by name. */
	union {
		double	 align;
		unsigned char bytes[PE_OPTBYTES];
	} opt;
	int	 rotary;	/* 0 for a table (abs, sincos, ape): nothing here
				   applies, R = I */
	int	 identity;	/* R = I always (none, zeros, abs, sincos, ape) */
	int	 orthogonal;	/* R^T R = I (all but riemann) */
	int	 commutes;	/* generators commute: R(x)^T R(y) = R(y - x) */
	int	 basis;		/* R = P B(x) P^T with a basis P per set (pe_bases);
				   pe_rotations makes B */
	char	 spec[96];	/* canonical spec: "liere:8", "rope-axial,theta=100" */
	struct err err;	/* why the last call that failed did */
};

/* Fill pe from a spec ("liere:8", "rope-axial,theta=10000", "riemann,
 * alpha=0.1,reflect", ...) and the model's shape; share is "none", "heads",
 * "layers" or "all" (NULL: none).  0, or -1 with pe->err. */
int	 pe_parse(struct pe *pe, const char *spec, int head_dim, int axes,
	    int heads, int layers, const char *share);
/* The value of pe's option name: a number, or 1 or 0 for a word that is
 * given or not; NaN when pe's encoding has no such option. */
double	 pe_option(const struct pe *pe, const char *name);
/* The registered encodings as a usage list into buf[len] (truncated):
 * "none zeros ... liere:B ..." or (full) their synopses with options,
 * "rope-axial[,theta=T]", joined by sep, the rotary ones only when
 * rotary_only; indent > 0: lines broken before column 80 for a list that
 * starts at column indent, the next lines indented as far. */
void	 pe_list(char *buf, size_t len, const char *sep, int full, int rotary_only,
	    int indent);
/* 1 when word, up to a ':' or ',', names a registered encoding ("liere:8",
 * "ape,official"); 0 for an option word ("official", "theta=10"). */
int	 pe_known(const char *word);
/* One or two specs of each encoding, comma-separated, as flops --pe all
 * compares them: "none,abs,...,liere:8,liere:64,...". */
void	 pe_examples(char *buf, size_t len);
/* The encoding whose weights timm keeps in tensor name ("pos_embed": abs),
 * or NULL. */
const char *pe_by_timm(const char *tensor);
/* The encoding flops compares every other with (abs: DeiT's ViT). */
const char *pe_baseline(void);
/* Rows of pe's learned table for the training grid G[axes], and its
 * tensor name in *name; 0 (name NULL) without a learned table. */
int64_t	 pe_table_rows(const struct pe *pe, const int *G, const char **name);
/* Name of a share mode ("heads"). */
const char *pe_share_name(int share);
/* enum pe_share of "none", "heads", "layers" or "all", or -1. */
int	 pe_share_parse(const char *name);
/* The generator set that layer l, head h use: 0 .. nset-1. */
int	 pe_set(const struct pe *pe, int layer, int head);
/* Tied parameters (comrope-ld,tied): the floats [*off, *off + n) of every
 * set, n returned (0: none), hold one value per group of sets that share
 * a layer: every set of a layer without sharing, all sets with --share
 * layers.  Each set keeps a copy, equal in all of its group; the gradient
 * of each copy is the group's sum, so an optimizer keeps them equal. */
int64_t	 pe_tied(const struct pe *pe, int64_t *off);
/* The first set of set's group of tied parameters (set itself when none). */
int	 pe_tie_first(const struct pe *pe, int set);
/* The floats of nparam that are copies of tied ones (0: none): nparam less
 * this is what the encoding learns. */
int64_t	 pe_tied_copies(const struct pe *pe);
/* Group of pair j (0 .. axes-1): the head_dim/2 pairs cut into axes
 * contiguous groups, sizes as equal as they can be. */
int	 pe_pair_group(const struct pe *pe, int pair);
/* Axis that drives pair j in rope-axial and riemann: group 0 the last
 * axis (x), group 1 the one before (y), group 2 t. */
int	 pe_pair_axis(const struct pe *pe, int pair);
/* RoPE frequency of pair j: theta^(-k / K) for the k-th of K pairs in its
 * group (RoPE-ViT's 1 / theta^(4k / d) in 2D). */
double	 pe_pair_freq(const struct pe *pe, int pair, double theta);

/* Initialisation of the learnable parameters. */
enum pe_init_kind {
	PE_INIT_DEFAULT,	/* the method's own: see pe_init_params */
	PE_INIT_UNIFORM,	/* every entry uniform in [0, scale) */
	PE_INIT_NORMAL,		/* every entry normal(0, std) */
	PE_INIT_ZEROS		/* generators 0 (R = I): ComRoPE fine-tuning */
};
/* comrope-ld's scales (multipliers). */
enum pe_mult {
	PE_MULT_DEFAULT,	/* the init's: normal(0, 1) for PE_INIT_DEFAULT, else 1 */
	PE_MULT_ONES,		/* 1 */
	PE_MULT_NORMAL		/* normal(0, 1), the official code's */
};
struct pe_init {
	int	 kind;		/* enum pe_init_kind */
	double	 scale;		/* UNIFORM: upper end (default 2 pi) */
	double	 std;		/* NORMAL: standard deviation */
	double	 theta;		/* rope-mixed/riemann frequency base; 0: the
				   method's (10 for rope-mixed, pe->theta) */
	int	 multipliers;	/* enum pe_mult: comrope-ld only */
	uint64_t seed;
};
/* Seeded initialisation of params[nparam].  Defaults: liere U uniform in
 * [0, 2 pi) (LieRE reference README); comrope U the upper entries of
 * P - P^T for P of normal(0, 1) entries, and comrope-ld scales normal(0,
 * 1) (the official code, Longin-Yu/ComRoPE; UNIFORM, NORMAL and ZEROS
 * leave the scales 1 unless ini->multipliers says otherwise), tied scales
 * those of their group's first set;
 * rope-mixed per Heo et al.: pair k of a group has magnitude
 * theta^(-k / group size), theta = 10, group g along direction u_g of a
 * random orthonormal frame per set (2D: a random angle and its
 * perpendicular); riemann angles the rope-axial frequencies, w = 0.
 * Each set draws from rng stream set, so the values do not depend on
 * nset's split or the thread count.  0, or -1 with pe->err. */
int	 pe_init_params(struct pe *pe, const struct pe_init *ini,
	    float *params /* [nparam] */);

/* Per-call scratch, sized once; calls keep no state between them (the
 * backward pass is given the forward's R).  Tokens at exact multiples of
 * another token's position (grids) share one exponential:
 * R(m p) = R(p)^m; comrope-ap and comrope-ld need none (a closed form from
 * one eigendecomposition per block and call, lib/pe/pe_scaled.c). */
struct pe_work {
	int	 maxT;		/* most tokens per call */
	int	 nthread;	/* OpenMP threads it was sized for */
	int64_t	 thread_doubles;
	double	*scratch;	/* [nthread][thread_doubles]: double, or a
				   double block and floats (backward) */
	double	*gen;		/* [nset][axes][nblock][b][b]: generators */
	double	*dgen;		/* [nset][axes][nblock][b(b-1)/2]: their gradient
				   (upper-triangle form) */
	struct rays *rays;	/* tokens grouped by exact multiples (rays.h) */
	float	*tied;		/* [nset][pe_tied]: the backward's copy of dparams' */
	int	 f32;		/* 0 (pe_work_init's): pe_rotations works in
				   double, R exact to float rounding; 1: blocks
				   of a multiple of 16 in float, like float32
				   autograd, twice as fast, and blocks of 4, 8,
				   12 and 16 in float 16 at a time (the
				   engine's) */
	struct err err;	/* why pe_work_init failed */
};
/* Size w for pe and up to maxT tokens per call (the only allocation).
 * 0, or -1 with w->err. */
int	 pe_work_init(struct pe_work *w, const struct pe *pe, int maxT);
/* Free what pe_work_init allocated; safe on a zeroed or freed w. */
void	 pe_work_free(struct pe_work *w);

/* R[set][t] for every set and token: R[nset][T][nblock][b][b], row-major
 * blocks, float (computed in double, or in float with w->f32).
 * T <= w->maxT. */
void	 pe_rotations(const struct pe *pe, struct pe_work *w,
	    const float *params /* [nparam] */, int T,
	    const float *pos /* [T][axes] */, float *R /* [nset][T][rsize] */);
/* dparams += dL/dparams given R, what pe_rotations made from the same
 * params and pos, and dR = dL/dR.  Blocks wider than 2 in float (the
 * forward's R stands in for the powers along rays).  Deterministic: the
 * sum over tokens runs in token order whatever the thread count. */
void	 pe_rotations_backward(const struct pe *pe, struct pe_work *w,
	    const float *params /* [nparam] */, int T,
	    const float *pos /* [T][axes] */, const float *R /* [nset][T][rsize] */,
	    const float *dR /* [nset][T][rsize] */,
	    float *dparams /* [nparam], accumulated */);
/* The generator matrices A_i of one set, G[axes][nblock][b][b]: block j
 * of A_i at G + (i * nblock + j) * b * b.  Riemann: the rotation part's
 * (no scale); none, zeros, abs, sincos, ape: zeros. */
void	 pe_generators(const struct pe *pe,
	    const float *params /* [set_params] */, double *G);
/* Rotation frequencies a set turns a token by per axis: nblock * (b / 2),
 * pe_nfreq. */
int	 pe_nfreq(const struct pe *pe);
/* The rotation frequencies of one set, freq[axes][pe_nfreq], each axis's
 * ascending: the omega >= 0 of the eigenvalues +-i omega of every block of
 * A_i (pe_generators'; an odd block's 0 left out), by which R(p) turns the
 * planes of that block as p_i grows, in radians per unit of p_i.  All 0
 * for an encoding without rotation (pe->identity).  0, or -1 with pe->err
 * (no memory, or a generator that is not finite). */
int	 pe_frequencies(struct pe *pe, const float *params /* [set_params] */,
	    double *freq);
/*
 * An encoding with a basis (pe->basis) rotates by R(p) = P B(p) P^T: B(p)
 * is what pe_rotations makes (its blocks, rsize floats a token) and P an
 * orthogonal [head_dim][head_dim] matrix per set, made from the parameters
 * once a step.  Where only dot products of rotated rows are read, as in
 * attention, (R(x) q)^T R(y) k = (B(x) P^T q)^T B(y) P^T k: P^T then B
 * applied to q and k gives the same scores, and no dense R is made.
 */
/* P[nset][head_dim][head_dim] of every set, float (made in double); these
 * three for an encoding with a basis alone. */
void	 pe_bases(const struct pe *pe, struct pe_work *w,
	    const float *params /* [nparam] */, float *P);
/* dparams += dL/dparams through the bases given dP = dL/dP
 * [nset][head_dim][head_dim], in double; deterministic. */
void	 pe_bases_backward(const struct pe *pe, struct pe_work *w,
	    const float *params /* [nparam] */, const float *dP,
	    float *dparams /* [nparam], accumulated */);
/* The dense rotations R[set][t] = P[set] B[set][t] P[set]^T,
 * [nset][T][head_dim][head_dim], from pe_rotations' B and pe_bases' P
 * (rotgen, tests). */
void	 pe_compose(const struct pe *pe, struct pe_work *w, int T,
	    const float *P, const float *B /* [nset][T][rsize] */, float *R);

/* One set's rotations inside R from pe_rotations: [T][rsize]. */
static inline float *
pe_R(const struct pe *pe, float *R, int set, int T)
{
	return R + (int64_t)set * T * pe->rsize;
}

/* y[t] = R[t] x[t] for t < T: rows of head_dim floats at strides ldx, ldy
 * (a head of a [T][dim] matrix: x + h * head_dim, ld dim).  y may be x. */
void	 pe_apply(const struct pe *pe, int T, const float *R /* [T][rsize] */,
	    const float *x /* [T][ldx] */, int ldx,
	    float *y /* [T][ldy] */, int ldy);
/* Backward of pe_apply: dx[t] = R[t]^T dy[t] (dx may be dy) and
 * dR[t] += dy[t] x[t]^T blockwise. */
void	 pe_apply_backward(const struct pe *pe, int T,
	    const float *R /* [T][rsize] */,
	    const float *x /* [T][ldx]: pe_apply's input */, int ldx,
	    const float *dy /* [T][lddy] */, int lddy,
	    float *dx /* [T][lddx] */, int lddx,
	    float *dR /* [T][rsize], accumulated */);
/* pe_apply for nimg images at once, image i's rows at x + i * xs (e.g. a
 * head of a [nimg][T][dim] batch: xs = T * dim, ldx = dim).  Each block of
 * R is used for every image while it is in cache: much faster than one
 * image at a time for large blocks.  y may be x. */
void	 pe_apply_batch(const struct pe *pe, int nimg, int T,
	    const float *R /* [T][rsize] */,
	    const float *x /* [nimg][xs]: rows [T][ldx] */, int64_t xs, int ldx,
	    float *y /* [nimg][ys]: rows [T][ldy] */, int64_t ys, int ldy);
/* Backward of pe_apply_batch: dx = R^T dy per image (dx may be dy),
 * dR[t] += sum over images of dy x^T. */
void	 pe_apply_batch_backward(const struct pe *pe, int nimg, int T,
	    const float *R /* [T][rsize] */,
	    const float *x /* [nimg][xs]: rows [T][ldx] */, int64_t xs, int ldx,
	    const float *dy /* [nimg][dys]: rows [T][lddy] */, int64_t dys, int lddy,
	    float *dx /* [nimg][dxs]: rows [T][lddx] */, int64_t dxs, int lddx,
	    float *dR /* [T][rsize], accumulated */);

/* Header keys of generator files and checkpoints: PE, SHARE, HEAD_DIM,
 * AXES, HEADS, LAYERS.  0 or -1 (s->err). */
int	 pe_meta_write(const struct pe *pe, struct vt *s);
/* pe from those keys of s; 0, or -1 with pe->err ("no PE key: not a
 * generator file or checkpoint"). */
int	 pe_meta_read(struct pe *pe, const struct vt *s);

/* The parameters held in a loaded generator file or checkpoint s: pe
 * from its header keys and its field pe.params, f32 [nparam] (which may
 * be absent when nparam is 0).  NULL with pe->err when either is missing
 * or they disagree. */
const float *pe_load_params(struct pe *pe, struct vt *s);
/* For vt_load_with: read a file's keys and its field PE_FIELD alone. */
int	 pe_generators_only(struct vt *s, void *unused);

#endif
