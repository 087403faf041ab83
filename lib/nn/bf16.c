/*
 * bf16.c - bf16 products (--precision bf16): operands rounded to bf16 here,
 * products by oneDNN's matmul primitive with fp32 accumulation and an fp32
 * result, as PyTorch's autocast computes a bf16 matmul.  oneDNN 2.6 has
 * bf16 matmul kernels only with AVX512_BF16 or AMX (and none at all below
 * AVX-512), so elsewhere bf16 products are refused, unless emulation is
 * asked for: then the rounded operands are multiplied by oneDNN's fp32
 * matmul, which gives the same numbers up to the order of the fp32 sums
 * (a product of two bf16 values is exact in fp32), more slowly than fp32.
 *
 * A primitive is made for one shape; each thread keeps the ones it used
 * last (its own: a primitive's scratchpad, stream and memory objects are
 * then never shared), made the first time a shape comes and reused every
 * step after.  Inside a parallel region a call runs on its thread alone
 * (as dnnl_sgemm in gemm.c), so the bits do not depend on the thread
 * count.
 *
 * The same primitives run gemm_batch's fp32 batches (onednn_batch), on
 * fp32 operands, any CPU.
 *
 * A product that cannot run (oneDNN refuses it, memory runs out) leaves
 * NaN in its result and its reason for gemm_failed: the library does not
 * end the process, its caller says why and stops (gemm_fail.c).
 */
#ifdef __AVX512BF16__
#include <immintrin.h>
#endif
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "gemm_fail.h"
#include "hugemem.h"
#include "nn.h"

static enum gemm_bf16 mode;
static int probed, emulate;
static dnnl_engine_t engine;
/* Has the CPU bf16 instructions, and oneDNN a bf16 matmul for them?  (On
 * AVX-512 without AVX512_BF16 oneDNN 2.6 makes one that emulates bf16:
 * that is refused.) */
static int
native(void)
{
	dnnl_memory_desc_t a, b, c;
	dnnl_dims_t d = { 16, 16 }, s = { 16, 1 };
	dnnl_matmul_desc_t md;
	dnnl_primitive_desc_t pd;

	if ((dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core_bf16) !=
	    dnnl_cpu_isa_avx512_core_bf16)
		return 0;
	dnnl_memory_desc_init_by_strides(&a, 2, d, dnnl_bf16, s);
	dnnl_memory_desc_init_by_strides(&b, 2, d, dnnl_bf16, s);
	dnnl_memory_desc_init_by_strides(&c, 2, d, dnnl_f32, s);
	if (dnnl_matmul_desc_init(&md, &a, &b, NULL, &c) != dnnl_success ||
	    dnnl_primitive_desc_create(&pd, &md, NULL, engine, NULL) !=
	    dnnl_success)
		return 0;
	dnnl_primitive_desc_destroy(pd);
	return 1;
}

/* The engine and how bf16 runs, found once (every pack asks). */
static void
probe(void)
{
	if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) {
		product_failed("no oneDNN CPU engine");
		mode = GEMM_BF16_NONE;	/* and no emulation: it needs one too */
		probed = 1;
		return;
	}
	mode = native() ? GEMM_BF16_NATIVE : emulate ? GEMM_BF16_EMULATED :
	    GEMM_BF16_NONE;
	probed = 1;
}

enum gemm_bf16
gemm_bf16_mode(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, probe);
	return mode;
}

/* Whether bf16 products cannot run here (and failure says why). */
static int
refused(void)
{
	if (gemm_bf16_mode() != GEMM_BF16_NONE)
		return 0;
	product_failed("this CPU has no native bf16 (AVX512_BF16 or AMX); "
	    "VITPIPE_BF16=emulate emulates it");
	return 1;
}

void
gemm_bf16_emulate(void)
{
	emulate = 1;
	if (probed && mode == GEMM_BF16_NONE)
		mode = GEMM_BF16_EMULATED;
}

/* f's bits rounded to bf16's (to nearest, ties to even) in the top 16;
 * a NaN stays a NaN (quiet) and a subnormal becomes a zero of its sign:
 * the CPU's own conversion (vcvtneps2bf16, round_row), bit for bit.  Its
 * bf16 products (vdpbf16ps, AMX) read subnormal operands as zeros
 * anyway. */
static inline uint32_t
rounded(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	if ((u & 0x7f800000u) == 0)
		return u & 0x80000000u;
	return (u & 0x7fffffffu) > 0x7f800000u ? u | 0x400000u :
	    u + 0x7fffu + ((u >> 16) & 1);
}

float
gemm_bf16_round(float f)
{
	uint32_t u = rounded(f) & 0xffff0000u;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* A primitive for one shape (a batch of n0 x n1 products, operand (i, j)
 * at i s?[0] + j s?[1] elements, where n0 n1 > 1), and the memory objects
 * it runs on. */
struct mm {
	int	 ta, tb, M, N, K, lda, ldb, ldc;
	int	 f32;		/* fp32 operands (gemm_batch's), not rounded ones */
	float	 alpha, beta;
	int	 n0, n1;
	size_t	 sa[2], sb[2], sc[2];
	dnnl_primitive_t prim;
	dnnl_memory_t a, b, c, pad;
	size_t	 padsz;
};

/* Shapes a thread keeps: a bf16 training step of config R uses about 50. */
#define MM_KEEP	128

/* A thread's primitives (the oldest replaced first), stream and buffers. */
struct thr {
	struct mm mm[MM_KEEP];
	int	 n, next;
	dnnl_stream_t stream;
	void	*buf[3 + GEMM_BF16_BUFFERS];	/* operands A and B, scratchpad,
						   gemm_bf16_buffer's */
	size_t	 cap[3 + GEMM_BF16_BUFFERS];
};
static _Thread_local struct thr *me;

/* The calling thread's state, or NULL (product_failed said why). */
static struct thr *
thread_state(void)
{
	struct thr *t;

	if (me != NULL)
		return me;
	if ((t = calloc(1, sizeof *t)) == NULL) {
		product_failed("out of memory");
		return NULL;
	}
	gemm_bf16_mode();
	if (dnnl_stream_create(&t->stream, engine, dnnl_stream_default_flags) !=
	    dnnl_success) {
		free(t);
		product_failed("no oneDNN stream");
		return NULL;
	}
	return me = t;
}

/* The thread's buffer i, at least n bytes (grown, never shrunk), or NULL
 * (product_failed said why). */
static void *
buffer(struct thr *t, int i, size_t n)
{
	if (n > t->cap[i]) {
		free(t->buf[i]);
		t->cap[i] = 0;
		t->buf[i] = aligned_alloc(64, (n + 63) / 64 * 64);
		if (t->buf[i] == NULL) {
			product_failed("out of memory");
			return NULL;
		}
		t->cap[i] = n;
	}
	return t->buf[i];
}

/* s[cols] rounded into d[cols], as bf16 (nat) or as bf16's value in an
 * fp32 (emulated). */
static inline void
round_row(void *d, int nat, const float *s, int cols)
{
	if (nat) {
		uint16_t *o = d;
		int c = 0;
#ifdef __AVX512BF16__
		/* the CPU's conversion: rounded's bits, 32 an instruction */
		for (; c + 32 <= cols; c += 32) {
			__m512bh h = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(s + c + 16),
			    _mm512_loadu_ps(s + c));
			_mm512_storeu_si512(o + c, (__m512i)h);
		}
#endif
		#pragma omp simd
		for (int k = c; k < cols; k++)
			o[k] = (uint16_t)(rounded(s[k]) >> 16);
	} else {
		uint32_t *o = d;
		#pragma omp simd
		for (int c = 0; c < cols; c++)
			o[c] = rounded(s[c]) & 0xffff0000u;
	}
}

/* Row r of dst[][ldd] (elements of size 2 when nat, else 4). */
static inline void *
row(void *dst, int nat, int r, int ldd)
{
	return (char *)dst + (size_t)r * ldd * (nat ? 2 : 4);
}

int
gemm_bf16_size(void)
{
	enum gemm_bf16 how = gemm_bf16_mode();
	return how == GEMM_BF16_NATIVE ? 2 : how == GEMM_BF16_EMULATED ? 4 : 0;
}

void
bf16_round(void *dst, int ldd, const float *A, int lda, int rows, int cols)
{
	int nat = gemm_bf16_mode() == GEMM_BF16_NATIVE;

	for (int r = 0; r < rows; r++)
		round_row(row(dst, nat, r, ldd), nat, A + (size_t)r * lda, cols);
}

const void *
bf16_pack(int slot, const float *A, int rows, int cols, int ld)
{
	enum gemm_bf16 how = gemm_bf16_mode();
	int nat = how == GEMM_BF16_NATIVE;
	size_t n = (size_t)rows * cols;
	struct thr *t;
	void *dst;

	if (refused())
		return NULL;
	if ((t = thread_state()) == NULL ||
	    (dst = buffer(t, slot, n * (nat ? 2 : 4))) == NULL)
		return NULL;

	bf16_round(dst, cols, A, ld, rows, cols);
	return dst;
}

/* The process's shared operand: one matrix packed for many products. */
static void *shared;
static size_t shared_cap;

const void *
bf16_pack_all(const float *A, int rows, int cols, int chunk, float *part)
{
	enum gemm_bf16 how = gemm_bf16_mode();
	int nat = how == GEMM_BF16_NATIVE;
	size_t n = (size_t)rows * cols * (nat ? 2 : 4);

	if (refused())
		return NULL;
	if (n > shared_cap) {
		free(shared);
		shared_cap = 0;
		/* a gradient of every row: streamed as activations are */
		if ((shared = huge_alloc(n)) == NULL) {
			product_failed("out of memory");
			return NULL;
		}
		shared_cap = n;
	}
	/* a chunk's rows are still in cache for their sums */
	#pragma omp parallel for schedule(dynamic, 1)
	for (int r0 = 0; r0 < rows; r0 += chunk) {
		int m = rows - r0 < chunk ? rows - r0 : chunk;
		for (int r = r0; r < r0 + m; r++)
			round_row(row(shared, nat, r, cols), nat,
			    A + (size_t)r * cols, cols);
		if (part != NULL)
			colsum_chunk(part, chunk, cols, A + (size_t)r0 * cols, r0,
			    m);
	}
	return shared;
}

/* A primitive for this shape: C = alpha A B (oneDNN's output scale) + beta C
 * (its sum post-op), operands in bf16_pack's layout (transposes as
 * strides), its scratchpad the caller's.  0, or -1 (product_failed said
 * why). */
static int
make(struct mm *m, dnnl_data_type_t dt)
{
	dnnl_memory_desc_t ma, mb, mc;
	/* a batch's two leading dimensions, then the matrices' */
	int nd = m->n0 * m->n1 > 1 ? 4 : 2, o = nd - 2;
	dnnl_dims_t da = { m->n0, m->n1 }, db = { m->n0, m->n1 };
	dnnl_dims_t dc = { m->n0, m->n1 };
	dnnl_dims_t sa = { m->sa[0], m->sa[1] }, sb = { m->sb[0], m->sb[1] };
	dnnl_dims_t sc = { m->sc[0], m->sc[1] };
	da[o] = m->M, da[o + 1] = m->K, db[o] = m->K, db[o + 1] = m->N;
	dc[o] = m->M, dc[o + 1] = m->N;
	sa[o] = m->ta ? 1 : m->lda, sa[o + 1] = m->ta ? m->lda : 1;
	sb[o] = m->tb ? 1 : m->ldb, sb[o + 1] = m->tb ? m->ldb : 1;
	sc[o] = m->ldc, sc[o + 1] = 1;
	dnnl_matmul_desc_t md;
	dnnl_primitive_attr_t attr;
	dnnl_post_ops_t po = NULL;
	dnnl_primitive_desc_t pd;
	int ok;

	dnnl_memory_desc_init_by_strides(&ma, nd, da, dt, sa);
	dnnl_memory_desc_init_by_strides(&mb, nd, db, dt, sb);
	dnnl_memory_desc_init_by_strides(&mc, nd, dc, dnnl_f32, sc);
	ok = dnnl_matmul_desc_init(&md, &ma, &mb, NULL, &mc) == dnnl_success &&
	    dnnl_primitive_attr_create(&attr) == dnnl_success;
	if (!ok) {
		product_failed("oneDNN refused a matmul");
		return -1;
	}
	dnnl_primitive_attr_set_scratchpad_mode(attr,
	    dnnl_scratchpad_mode_user);
	if (m->alpha != 1.0f)
		dnnl_primitive_attr_set_output_scales(attr, 1, 0, &m->alpha);
	if (m->beta != 0.0f) {
		dnnl_post_ops_create(&po);
		dnnl_post_ops_append_sum(po, m->beta);
		dnnl_primitive_attr_set_post_ops(attr, po);
		dnnl_post_ops_destroy(po);
	}
	ok = dnnl_primitive_desc_create(&pd, &md, attr, engine, NULL) ==
	    dnnl_success;
	dnnl_primitive_attr_destroy(attr);
	if (!ok) {
		product_failed("oneDNN has no matmul for this shape");
		return -1;
	}
	const dnnl_memory_desc_t *mp = dnnl_primitive_desc_query_md(pd,
	    dnnl_query_scratchpad_md, 0);
	m->padsz = dnnl_memory_desc_get_size(mp);
	ok = dnnl_primitive_create(&m->prim, pd) == dnnl_success &&
	    dnnl_memory_create(&m->a, &ma, engine, DNNL_MEMORY_NONE) ==
	    dnnl_success &&
	    dnnl_memory_create(&m->b, &mb, engine, DNNL_MEMORY_NONE) ==
	    dnnl_success &&
	    dnnl_memory_create(&m->c, &mc, engine, DNNL_MEMORY_NONE) ==
	    dnnl_success &&
	    dnnl_memory_create(&m->pad, mp, engine, DNNL_MEMORY_NONE) ==
	    dnnl_success;
	dnnl_primitive_desc_destroy(pd);
	if (!ok) {
		product_failed("oneDNN could not make a matmul");
		return -1;
	}
	return 0;
}

static void
unmake(struct mm *m)
{
	dnnl_primitive_destroy(m->prim);
	dnnl_memory_destroy(m->a);
	dnnl_memory_destroy(m->b);
	dnnl_memory_destroy(m->c);
	dnnl_memory_destroy(m->pad);
}

/* Whether primitive a computes shape b (b's objects not made). */
static int
same_shape(const struct mm *a, const struct mm *b)
{
	return a->ta == b->ta && a->tb == b->tb && a->f32 == b->f32 &&
	    a->M == b->M &&
	    a->N == b->N && a->K == b->K && a->lda == b->lda &&
	    a->ldb == b->ldb && a->ldc == b->ldc && a->alpha == b->alpha &&
	    a->beta == b->beta && a->n0 == b->n0 && a->n1 == b->n1 &&
	    (a->n0 * a->n1 == 1 ||
	    (a->sa[0] == b->sa[0] && a->sa[1] == b->sa[1] &&
	    a->sb[0] == b->sb[0] && a->sb[1] == b->sb[1] &&
	    a->sc[0] == b->sc[0] && a->sc[1] == b->sc[1]));
}

/* The thread's primitive for shape s (its objects not made), made if it
 * has none; NULL (fail said why). */
static struct mm *
primitive(struct thr *t, const struct mm *s)
{
	for (int i = 0; i < t->n; i++)
		if (same_shape(&t->mm[i], s))
			return &t->mm[i];
	struct mm *m = &t->mm[t->next];
	if (t->n == MM_KEEP)
		unmake(m);
	else
		t->n++;
	t->next = (t->next + 1) % MM_KEEP;
	*m = *s;
	if (make(m, mode == GEMM_BF16_NATIVE && !s->f32 ? dnnl_bf16 :
	    dnnl_f32) < 0) {
		unmake(m);	/* what was made of it (oneDNN takes NULLs) */
		*m = (struct mm){ .M = -1 };	/* matches no shape */
		return NULL;
	}
	return m;
}

/* Every result of shape m at C all NaN: a product that could not run. */
static void
nan_fill(const struct mm *m, float *C)
{
	for (int i = 0; i < m->n0; i++)
		for (int j = 0; j < m->n1; j++)
			nan_matrix(C + i * m->sc[0] + j * m->sc[1], m->M, m->N,
			    m->ldc);
}

/* The products of shape s on A, B (rounded) into C, by the calling thread. */
static void
run(const struct mm *s, const void *A, const void *B, float *C)
{
	struct thr *t = A && B ? thread_state() : NULL;
	struct mm *m = t ? primitive(t, s) : NULL;
	void *pad = m ? buffer(t, 2, m->padsz) : NULL;

	/* product_failed has said why */
	if (pad == NULL && (m == NULL || m->padsz > 0)) {
		nan_fill(s, C);
		return;
	}
	dnnl_exec_arg_t args[4] = {
		{ DNNL_ARG_SRC, m->a }, { DNNL_ARG_WEIGHTS, m->b },
		{ DNNL_ARG_DST, m->c }, { DNNL_ARG_SCRATCHPAD, m->pad },
	};

	dnnl_memory_set_data_handle(m->a, (void *)A);
	dnnl_memory_set_data_handle(m->b, (void *)B);
	dnnl_memory_set_data_handle(m->c, C);
	dnnl_memory_set_data_handle(m->pad, pad);
	/* as gemm.c's dnnl_sgemm: one thread inside a parallel region */
	if (omp_get_level() > 0 && omp_get_max_threads() > 1)
		omp_set_num_threads(1);
	if (dnnl_primitive_execute(m->prim, t->stream, 4, args) !=
	    dnnl_success) {
		product_failed("oneDNN could not run a matmul");
		nan_fill(s, C);
		return;
	}
	dnnl_stream_wait(t->stream);
}

void
bf16_product(int transa, int transb, int M, int N, int K, float alpha,
    const void *A, int lda, const void *B, int ldb, float beta, float *C,
    int ldc)
{
	struct mm s = { .ta = transa, .tb = transb, .M = M, .N = N, .K = K,
	    .lda = lda, .ldb = ldb, .ldc = ldc, .alpha = alpha, .beta = beta,
	    .n0 = 1, .n1 = 1 };

	run(&s, A, B, C);
}

/* g's products as one matmul primitive, fp32 operands (f32) or rounded. */
static void
batch(const struct gemm_batch *g, int f32, const void *A, const void *B,
    float *C)
{
	struct mm s = { .ta = g->ta, .tb = g->tb, .M = g->M, .N = g->N,
	    .K = g->K, .lda = g->lda, .ldb = g->ldb, .ldc = g->ldc,
	    .f32 = f32, .alpha = g->alpha, .n0 = g->n0, .n1 = g->n1,
	    .sa = { g->sa[0], g->sa[1] }, .sb = { g->sb[0], g->sb[1] },
	    .sc = { g->sc[0], g->sc[1] } };

	run(&s, A, B, C);
}

void
bf16_batch(const struct gemm_batch *g, const void *A, const void *B,
    float *C)
{
	batch(g, 0, refused() ? NULL : A, B, C);	/* NULL: NaN results */
}

void
onednn_batch(const struct gemm_batch *g, const float *A, const float *B,
    float *C)
{
	batch(g, 1, A, B, C);
}

void *
gemm_buffer(int slot, size_t n)
{
	struct thr *t = thread_state();

	return t != NULL ? buffer(t, 3 + slot, n) : NULL;
}

void *
gemm_bf16_buffer(int slot, size_t n)
{
	return refused() ? NULL : gemm_buffer(slot, n);
}
