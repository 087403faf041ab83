/*
 * nn.h - the layers of the ViT engine, each a forward/backward pair over
 * flat row-major float arrays (llm.c style).  N is the number of rows
 * (records x tokens).  Backward functions ADD into parameter gradients and
 * WRITE (overwrite) input gradients unless they say otherwise.
 *
 * Threading: one thread pool, OpenMP's.  Every large matrix product is cut
 * into row blocks of the result shared by the OpenMP threads, each block a
 * single-threaded call of a matrix library (gemm_rows).  Letting
 * OpenBLAS thread the big products from serial code measured 40% slower
 * here: its pool and OpenMP's spin-wait against each other on 2 cores
 * between every layer.  The per-(record, head) attention products use the
 * same scheme over (record, head) pairs, in bf16 over chunks of records
 * (attention.c); row-wise work runs in OpenMP loops.
 *
 * The matrix backend (gemm.c) is the one place that calls the libraries:
 * OpenBLAS (its own pthreads pool, held at one thread around the engine's
 * parallel regions) or oneDNN (built on OpenMP, libgomp's pool: inside a
 * region each call runs on its caller's thread).  Each shape of product
 * goes to the library that computed it faster here, timed at its first
 * product and kept in a plan file (gemm_plan.c, VITPIPE_PLAN), unless
 * VITPIPE_GEMM (read by cli_init) names one for all (vitpipe(7)).
 */
#ifndef NN_H
#define NN_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum gemm_backend { GEMM_AUTO, GEMM_OPENBLAS, GEMM_ONEDNN };
/* Kinds of product, each with its backend: one computed by its caller's
 * thread (gemm_one), cut into row blocks (gemm_rows: weight gradients,
 * bases), in chunks of rows (gemm_chunks: the layers' forward and
 * input-gradient products), a batch of small ones computed by its
 * caller's thread (gemm_batch: attention's, a chunk of records' heads). */
enum gemm_kind { GEMM_ONE, GEMM_ROWS, GEMM_CHUNKS, GEMM_BATCH };
/* A product's precision: fp32, or bf16 operands (rounded to nearest even)
 * with fp32 accumulation and an fp32 result (PyTorch autocast's matmul). */
enum gemm_prec { GEMM_FP32, GEMM_BF16 };
/* How this process computes bf16 products: not at all (the CPU has no
 * native bf16), natively (oneDNN's bf16 kernels: AVX512_BF16 or AMX), or
 * emulated (operands rounded to bf16, then multiplied in fp32: the same
 * numbers, slower than fp32; only when asked, with VITPIPE_BF16=emulate). */
enum gemm_bf16 { GEMM_BF16_NONE, GEMM_BF16_NATIVE, GEMM_BF16_EMULATED };

/* "auto", "openblas" or "onednn" -> its backend, or -1. */
int	 gemm_backend_parse(const char *name);
/* Whether every product so far ran: 0, or -1 with e (may be NULL) set to
 * why the first that could not did not ("matrix product: oneDNN has no
 * matmul for this shape", "... out of memory"); such a product's result
 * is NaN.  A caller of products checks it where it would stop. */
int	 gemm_failed(struct err *e);
/* "fp32" or "bf16" -> its enum gemm_prec, or -1. */
int	 gemm_prec_parse(const char *name);
/* The backend's name, as gemm_backend_parse takes it. */
const char *gemm_backend_name(enum gemm_backend b);
/* Every product by backend b from now on (GEMM_AUTO: each by its kind's
 * on this CPU); not while products run. */
void	 gemm_force(enum gemm_backend b);
/* The backend that computes fp32 products of kind k without a plan (bf16
 * products are oneDNN's). */
enum gemm_backend gemm_backend_of(enum gemm_kind k);
/* Plan fp32 products from now on (gemm_plan.c): each shape's backend is
 * the faster of the two timed at its first product, kept in and read from
 * the plan file path (made if absent); 0, or -1 with e set.  Not while
 * products run. */
int	 gemm_plan_open(const char *path, struct err *e);
/* The plan file's default name on this machine: "plan-" and a hash of the
 * CPU's model and the libraries' kernels, which the choices depend on. */
void	 gemm_plan_name(char *buf, size_t size);
/* 0, or -1 with e set to why the plan file could not keep this process's
 * choices (they held for its own products). */
int	 gemm_plan_failed(struct err *e);
/* How bf16 products run here (probes oneDNN once). */
enum gemm_bf16 gemm_bf16_mode(void);
/* Emulate bf16 products where the CPU has no native bf16 (VITPIPE_BF16=
 * emulate, read by cli_init); not while products run. */
void	 gemm_bf16_emulate(void);
/* f rounded to bf16 (to nearest, ties to even; NaN stays NaN, a subnormal
 * becomes a zero of its sign, as the CPU's conversion makes them), as a
 * float. */
float	 gemm_bf16_round(float f);

/* Around a parallel loop whose iterations call gemm_one: keeps OpenBLAS
 * from starting its own threads inside it (returns what gemm_solo_end
 * restores). */
int	 gemm_solo_begin(void);
void	 gemm_solo_end(int saved);
/* A[rows][cols] (contiguous) rounded to bf16 once, from serial code, for
 * the bf16 products that follow and read it (or a block of it), until
 * gemm_bf16_unpin: an operand that two products share is not rounded
 * twice.  A must not change while pinned.  Where it cannot be kept the
 * products round their own; where A is twinned (below) they read the
 * twin's.  With part, the same pass leaves part[i][cols] the sums of A's
 * chunks of chunk rows (colsum_chunk's); 1 when it did, else 0 (nothing
 * rounded: A twinned, or gemm_failed says why). */
int	 gemm_bf16_pin(const float *A, int rows, int cols, int chunk,
	    float *part);
void	 gemm_bf16_unpin(void);
/* A16 is A[rows][cols]'s (contiguous) rounded copy, in A's layout with
 * elements of bf16's size here (2 native, 4 emulated), that A's producer
 * keeps up to date (gemm_bf16_fill): bf16 products read it where they
 * would round A or a block of it, until gemm_bf16_untwin(A).  From serial
 * code; 0, or -1 when the table of twins is full. */
int	 gemm_bf16_twin(const float *A, const void *A16, int rows, int cols);
void	 gemm_bf16_untwin(const float *A);
/* X[rows][cols] (rows ldx apart) rounded into the block at element off
 * of a rounded copy A16 whose rows are ld apart (gemm_bf16_twin's
 * layout), by the calling thread. */
void	 gemm_bf16_fill(void *A16, size_t off, int ld, const float *X,
	    int ldx, int rows, int cols);
/* Elements off .. off + n of a rounded copy A16 NaN: what a producer
 * leaves where its rows could not be made. */
void	 gemm_bf16_nan(void *A16, size_t off, size_t n);
/* Bytes of an element of a rounded copy: 2 (native bf16), 4 (emulated),
 * 0 (no bf16 products here). */
int	 gemm_bf16_size(void);
/* A batch of bf16 products on rounded operands (gemm_bf16_fill's
 * elements): for i < n0, j < n1, C_ij[M][N] = alpha op(A_ij) op(B_ij),
 * A_ij at A + i sa[0] + j sa[1] elements with rows lda apart (stored
 * K x M when ta), B_ij likewise (N x K when tb), C_ij at C + i sc[0] +
 * j sc[1], rows ldc apart.  oneDNN's fast kernels want each operand's
 * elements a permutation of a dense array. */
struct gemm_batch {
	int	 n0, n1, ta, tb, M, N, K, lda, ldb, ldc;
	size_t	 sa[2], sb[2], sc[2];
	float	 alpha;
};
/* g's products in precision p, by the calling thread alone (between
 * gemm_solo_begin and gemm_solo_end inside a region): in fp32 on A and B
 * (floats) by the forced backend or the plan's for g's shape, in bf16 on
 * rounded operands (gemm_bf16_fill's elements); NaN results where they
 * cannot run (gemm_failed says why). */
void	 gemm_batch(enum gemm_prec p, const struct gemm_batch *g,
	    const void *A, const void *B, float *C);
/* Buffers of the calling thread for its rounded operands */
#define GEMM_BF16_BUFFERS 2
/* The calling thread's buffer slot (< GEMM_BF16_BUFFERS), at least n
 * bytes, kept (grown, never shrunk) for its next call; NULL when memory
 * runs out or (gemm_bf16_buffer) bf16 products cannot run here
 * (gemm_failed says why). */
void	*gemm_buffer(int slot, size_t n);
void	*gemm_bf16_buffer(int slot, size_t n);

/* Where a step's time goes (worktime.c): the thread seconds of each kind
 * of work while timing is on.  Products include any rounding of their own
 * operands; roundings are those of shared operands (gemm_bf16_pin, a
 * product's weights); attention is attention_forward's and _backward's
 * whole team. */
enum work { WORK_PRODUCT, WORK_EPILOGUE, WORK_ROUNDING, WORK_ATTENTION,
	WORK_KINDS };
/* Timing on (the sums zeroed) or off (the sums kept). */
void	 work_timing(int on);
/* A start for work_end: now, or 0 while timing is off. */
double	 work_begin(void);
/* Kind k's sum += (now - t0) x team (the threads the work held: 1 in a
 * region's thread, all from serial code); nothing for t0 0. */
void	 work_end(enum work k, double t0, int team);
/* Each kind's thread seconds since timing was turned on. */
void	 work_times(double t[WORK_KINDS]);

/* C[M][N] = alpha op(A) op(B) + beta C, as cblas_sgemm (row-major), in
 * precision p, computed by the calling thread alone: inside a parallel
 * region, between gemm_solo_begin and gemm_solo_end. */
void	 gemm_one(enum gemm_prec p, int transa, int transb, int M, int N,
	    int K, float alpha, const float *A, int lda, const float *B,
	    int ldb, float beta, float *C, int ldc);

/* C[M][N] = alpha op(A) op(B) + beta C, as cblas_sgemm (row-major), in
 * precision p, with the rows of C split across the OpenMP threads (see
 * above); the same bits on any thread count, with either backend. */
void	 gemm_rows(enum gemm_prec p, int transa, int transb, int M, int N,
	    int K, float alpha, const float *A, int lda, const float *B,
	    int ldb, float beta, float *C, int ldc);

/*
 * A row epilogue: ep(arg, r0, n) runs on rows [r0, r0 + n) of a product
 * right after they are computed, in the thread that computed them, while
 * they are still in cache (bias + GELU, dropout + residual + LayerNorm,
 * ...).  Products with epilogues are cut into fixed chunks of rows that do
 * not depend on the thread count (same bits on any), handed out to the
 * OpenMP threads dynamically (a preempted thread holds up no one), each
 * chunk a single-threaded call of the backend.
 *
 * Every OpenBLAS call packs the whole weight operand again, so fp32
 * chunks are long; the outputs then sit in L3 rather than L2 for the
 * epilogue, which costs it less than the packing saves
 * (doc/performance.md).  In bf16 the weights are rounded once a product,
 * not once a call, so chunks are short: a chunk's rows stay in L2 for
 * the epilogue (256 rows of 768 floats: 768 KiB).
 */
/* c: the chunk's rows r0 .. r0 + n of C (rows ldc apart), or, where C is
 * NULL, the same rows in the thread's buffer, which the epilogue takes
 * what it needs from (c NULL there: the rows could not be computed,
 * gemm_failed says why, and the epilogue marks its outputs NaN). */
typedef void rows_fn(void *arg, float *c, int r0, int n);
#define GEMM_CHUNK	2048	/* rows per chunk in fp32 */
#define GEMM_CHUNK_BF16	256	/* ... in bf16 */
_Static_assert(GEMM_CHUNK_BF16 <= GEMM_CHUNK,
    "room for chunks' shares is sized by the shorter chunk");

/* Rows per chunk of products in precision p. */
static inline int
gemm_chunk(enum gemm_prec p)
{
	return p == GEMM_BF16 ? GEMM_CHUNK_BF16 : GEMM_CHUNK;
}

/* C[M][N] = A[M][K] op(B) (+ bias[N] on every row when bias is not NULL),
 * in precision p (the bias added in fp32), in chunks of chunk rows, ep
 * (may be NULL) on each as above.  In bf16 C may be NULL when ep is not:
 * each chunk's rows are made in the thread's gemm_bf16_buffer slot 0 for
 * ep alone, and no memory holds C. */
void	 gemm_chunks(enum gemm_prec p, int transb, int M, int N, int K,
	    const float *A, int lda, const float *B, int ldb, const float *bias,
	    float *C, int ldc, int chunk, rows_fn *ep, void *arg);

/* Width of the column strips that sums over rows run in parallel (each
 * strip's rows in order: the same bits for any thread count): at most
 * 256 (wide strips stream whole runs of each row; see linear.c), an even
 * number of strips so that two threads share even D = 192. */
#define STRIP_MAX	256
static inline int
col_strip(int D)
{
	int n = 2 * ((D + 2 * STRIP_MAX - 1) / (2 * STRIP_MAX));
	return ((D + n - 1) / n + 15) & ~15;
}

/* The products of a linear layer in precision p (gemm_prec); biases and
 * sums stay fp32. */
/* y[N][No] = x[N][Ni] w[No][Ni]^T + b[No] (b may be NULL). */
void	 linear_forward(enum gemm_prec p, float *y, const float *x,
	    const float *w, const float *b, int N, int Ni, int No);
/* linear_forward in chunks of chunk rows with the row epilogue ep (y as
 * gemm_chunks's C). */
void	 linear_forward_ep(enum gemm_prec p, float *y, const float *x,
	    const float *w, const float *b, int N, int Ni, int No, int chunk,
	    rows_fn *ep, void *arg);
/* dx[N][Ni] = dy w (dx may be NULL); dw[No][Ni] += dy^T x; db[No] += sum dy. */
void	 linear_backward(enum gemm_prec p, float *dx, float *dw, float *db,
	    const float *dy, const float *x, const float *w, int N, int Ni,
	    int No);
/* linear_backward with dx in chunks of chunk rows and the row epilogue ep
 * on them (which must not write dy or x); in bf16 dy is rounded once for
 * both products, and dx may be NULL with ep given: its rows are made for
 * ep alone (gemm_chunks's C NULL).  With part (and dx or ep), the shares
 * of b's gradient: part[i][No] the sums of dy's chunks as colsum_chunk
 * makes them, by the pass that rounds dy or else by dx's chunks. */
void	 linear_backward_ep(enum gemm_prec p, float *dx, float *dw, float *db,
	    float *part, const float *dy, const float *x, const float *w, int N,
	    int Ni, int No, int chunk, rows_fn *ep, void *arg);
/* dx[N][Ni] = dy w in chunks of chunk rows with the row epilogue ep. */
void	 linear_backward_dx(enum gemm_prec p, float *dx, const float *dy,
	    const float *w, int N, int Ni, int No, int chunk, rows_fn *ep,
	    void *arg);
/* acc[D] += the sum of x[N][D]'s rows, in row order per column (the same
 * bits for any thread count). */
void	 colsum_add(float *acc, const float *x, int N, int D);
/* part[r0 / chunk][w] = the sums of x[n][w]'s rows (colsum_add's order):
 * the share of rows r0 .. r0 + n of a matrix summed in chunks of chunk
 * rows. */
void	 colsum_chunk(float *part, int chunk, int w, const float *x, int r0,
	    int n);

#define LN_EPS	1e-6f		/* timm/DeiT ViT LayerNorm epsilon */
/* y[N][D] = (x - mean) * rstd * g + b; mean[N], rstd[N] kept for backward. */
void	 layernorm_forward(float *y, float *mean, float *rstd, const float *x,
	    const float *g, const float *b, int N, int D);
/* dx[N][D] += d/dx (accumulates: the residual stream); dg, db += (both
 * NULL: the rows only, as in a row epilogue; see layernorm_params). */
void	 layernorm_backward(float *dx, float *dg, float *db, const float *dy,
	    const float *x, const float *mean, const float *rstd, const float *g,
	    int N, int D);

/* dg[D] += sum of dy * xhat, db[D] += sum of dy over the N rows. */
void	 layernorm_params(float *dg, float *db, const float *dy, const float *x,
	    const float *mean, const float *rstd, int N, int D);

/* y[n] = x * Phi(x), the exact erf GELU, over n values, and g[n] =
 * GELU'(x) unless g is NULL (y or g may equal x). */
void	 gelu_forward(float *y, float *g, const float *x, size_t n);
/* dx[n] = dy * g, g = GELU'(x) as gelu_forward made it (dx may equal dy). */
void	 gelu_backward(float *dx, const float *dy, const float *g, size_t n);

/* Inverted dropout of rows: for each of R records (rows of len floats each
 * record's block), y = x * mask, mask 0 or 1/(1-p) drawn from stream
 * (seed, first + record, site), stored in mask[R][len].  first: the batch
 * index of the first record.  p == 0: y = x, mask unused. */
void	 dropout_forward(float *y, float *mask, const float *x, float p,
	    int R, size_t len, uint64_t seed, uint64_t site, int first);
/* dx = dy * mask (in place allowed). */
void	 dropout_backward(float *dx, const float *dy, const float *mask, float p,
	    size_t n);

/* Mean over rows of softmax cross-entropy of logits[B][C] against target
 * probabilities[B][C]; prob[B][C] keeps the softmax for backward. */
float	 xent_forward(float *prob, const float *logits, const float *target,
	    int B, int C);
/* dlogits[B][C] = (prob * sum(target) - target) / B. */
void	 xent_backward(float *dlogits, const float *prob, const float *target,
	    int B, int C);

/*
 * Multi-head attention core on one batch: for record b and head h,
 *   P = softmax(q k^T / sqrt(hd)),  W = P * Omega,  out = W v,
 * for the first Tq of the T query rows of each record (Tq = 1: the CLS
 * row only, when nothing else of the last block is used),
 * Omega[m][n] = exp(-dist2[m][n] / (2 sigma_h^2)), sigma_h = exp(logsig[h])
 * (locality focusing; logsig NULL: Omega = 1).  q, k are rows of stride
 * ldqk, v rows of stride ldv, each head's hd columns at offset h*hd; out is
 * [B][Tq][H*hd].  dist2 is [T][T] for the batch, or [B][T][T] when
 * dist_per_record.  scratch holds nthr * 2 * T * T floats (locality's).
 */
struct attn {
	int	 B, T, H, hd;
	int	 Tq;		/* query rows per record, 1 .. T */
	int	 ldqk, ldv;
	const float *dist2;	/* [T][T] or [B][T][T], or NULL */
	int	 dist_per_record;
	int	 nthr;		/* OpenMP threads, each with its scratch */
	float	*scratch;	/* [nthr][3][T][T] */
	enum gemm_prec prec;	/* of its products (scores, weighted sums) */
	void	*outc;		/* out's rounded copy (gemm_bf16_twin),
				   kept by attention_forward in bf16 in place
				   of out, which it then leaves; or NULL */
	const void *qkvc;	/* in bf16, q, k and v rounded where q, k
				   and v are the thirds of one array's rows
				   (ldqk == ldv, k at q + H hd, v at
				   k + H hd), in its layout; or NULL:
				   attention rounds its own */
};
/* P[B][H][Tq][T] kept for backward (NULL: not kept); out[B][Tq][H*hd]. */
void	 attention_forward(const struct attn *a, float *out, float *P,
	    const float *q, const float *k, const float *v, const float *logsig);
/* W[B][H][Tq][T] = P o Omega, the weights by which attention_forward
 * multiplied v under locality (logsig): P its softmax; W may be P. */
void	 attention_weights(const struct attn *a, float *W, const float *P,
	    const float *logsig);
/* dq (Tq rows), dk, dv (T rows) written from dout[B][Tq][H*hd]; dlogsig[H]
 * += (when logsig is not NULL; partial[B][H] is scratch). */
void	 attention_backward(const struct attn *a, float *dq, float *dk,
	    float *dv, float *dlogsig, float *partial, const float *dout,
	    const float *P, const float *q, const float *k, const float *v,
	    const float *logsig);

#endif
