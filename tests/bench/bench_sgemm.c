/*
 * bench_sgemm.c - the matrix backends (lib/nn/gemm.c), OpenBLAS and
 * oneDNN, side by side on the products of a training step of the
 * reference config R (dim 192, heads 3, mlp 768, batch 128 of 64 patches
 * + CLS: 8320 rows; the patch embedding 8192 rows of 48), each called as
 * the engine calls it: the forward and dx products in chunks of GEMM_CHUNK
 * rows (gemm_chunks), the weight gradients dY^T X cut by rows of the
 * result (gemm_rows), attention's 384 (record, head) products in batches
 * of 4 records' 3 heads (gemm_batch).  Every product runs at 1 and at
 * --threads threads (default every core) with each backend forced, and at
 * --threads also as one call threaded by the library itself, which the
 * engine never makes (for comparison with the libraries' own figures).
 *
 * The CPU may be shared: the backends take turns within each round (which
 * goes first alternates), --rounds rounds (default 7), and the table
 * gives each figure's median over the rounds and the ratio of the medians;
 * in parentheses the same ratio of GFLOP per second of this process's CPU
 * time, which time slices lost to other processes do not lower.
 *
 * --chunks instead times the block products of 4160 rows (one of two
 * threads' share at batch 128) cut into calls of m rows on one thread, as
 * gemm_chunks cuts them: each call packs the weight operand again, which
 * is what sets GEMM_CHUNK (nn.h).
 *
 * --precision bf16 instead times every product in fp32 (the default
 * backends) and in bf16 (lib/nn/bf16.c) as the engine calls them: the
 * table's columns are then fp32 and bf16, their ratio bf16's speed-up.
 * As in training, the activations and gradients arrive rounded by their
 * producers (vit.c's copies, linear.c's pinned dY): A of every block
 * product and X of dY^T X, untimed; the weights, the patch embedding's
 * operands and attention's are rounded by the products themselves.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include "cli.h"
#include "cliopt.h"
#include "median.h"
#include "nn.h"

enum { ROWS = 128 * 65, PATCHES = 128 * 64, ATT = 128 * 3, TOK = 65, HD = 64 };
enum how { CHUNKS, ROWSPLIT, ATTN };
enum { MAXROUND = 101 };

static const struct product {
	const char *name;
	enum how how;
	int	 ta, tb, M, N, K;
} prods[] = {
	{ "patch  X W^T", CHUNKS, 0, 1, PATCHES, 192, 48 },
	{ "qkv    X W^T", CHUNKS, 0, 1, ROWS, 576, 192 },
	{ "proj   X W^T", CHUNKS, 0, 1, ROWS, 192, 192 },
	{ "fc1    X W^T", CHUNKS, 0, 1, ROWS, 768, 192 },
	{ "fc2    X W^T", CHUNKS, 0, 1, ROWS, 192, 768 },
	{ "qkv    dY W", CHUNKS, 0, 0, ROWS, 192, 576 },
	{ "proj   dY W", CHUNKS, 0, 0, ROWS, 192, 192 },
	{ "fc1    dY W", CHUNKS, 0, 0, ROWS, 192, 768 },
	{ "fc2    dY W", CHUNKS, 0, 0, ROWS, 768, 192 },
	{ "patch  dY^T X", ROWSPLIT, 1, 0, 192, 48, PATCHES },
	{ "qkv    dY^T X", ROWSPLIT, 1, 0, 576, 192, ROWS },
	{ "proj   dY^T X", ROWSPLIT, 1, 0, 192, 192, ROWS },
	{ "fc1    dY^T X", ROWSPLIT, 1, 0, 768, 192, ROWS },
	{ "fc2    dY^T X", ROWSPLIT, 1, 0, 192, 768, ROWS },
	{ "att    Q K^T, dO V^T", ATTN, 0, 1, TOK, TOK, HD },
	{ "att    P V, dS K", ATTN, 0, 0, TOK, HD, TOK },
	{ "att    P^T dO, dS^T Q", ATTN, 1, 0, TOK, HD, TOK },
};
enum { NPROD = sizeof prods / sizeof prods[0] };

/* Operands for every product (the largest: fc1's output, fc2's input),
 * filled with small values. */
enum { SZ = ROWS * 768 };
static float *A, *B, *C;

static float *
filled(size_t n, int mod)
{
	float *p = aligned_alloc(64, sizeof(float) * n);
	if (p == NULL)
		die("out of memory");
	for (size_t i = 0; i < n; i++)
		p[i] = (float)(i % mod) * 1e-2f;
	return p;
}

/* op(X)'s leading dimension for a row-major X of r x c (op: t). */
#define LD(t, r, c)	((t) ? (r) : (c))

/* bf16 against fp32 (--precision bf16) instead of oneDNN against
 * OpenBLAS. */
static int bf16;

/* One product as the engine calls it with backend b (lib 0), or as one
 * call threaded by the library itself (lib 1); with bf16, column b 0 in
 * fp32 with the default backends, b 1 in bf16. */
static void
run(const struct product *p, enum gemm_backend b, int lib, int nthr)
{
	enum gemm_prec pr = bf16 && b == GEMM_ONEDNN ? GEMM_BF16 : GEMM_FP32;

	int lda = LD(p->ta, p->M, p->K), ldb = LD(p->tb, p->K, p->N);

	if (lib && b == GEMM_OPENBLAS) {
		openblas_set_num_threads(nthr);
		cblas_sgemm(CblasRowMajor, p->ta ? CblasTrans : CblasNoTrans,
		    p->tb ? CblasTrans : CblasNoTrans, p->M, p->N, p->K, 1.0f,
		    A, lda, B, ldb, 0.0f, C, p->N);
		return;
	}
	if (lib) {
		(void)dnnl_sgemm(p->ta ? 'T' : 'N', p->tb ? 'T' : 'N', p->M,
		    p->N, p->K, 1.0f, A, lda, B, ldb, 0.0f, C, p->N);
		return;
	}
	gemm_force(bf16 ? GEMM_AUTO : b);
	switch (p->how) {
	case CHUNKS:
		gemm_chunks(pr, p->tb, p->M, p->N, p->K, A, lda, B, ldb, NULL, C,
		    p->N, GEMM_CHUNK, NULL, NULL);
		break;
	case ROWSPLIT:
		gemm_rows(pr, p->ta, p->tb, p->M, p->N, p->K, 1.0f, A, lda, B, ldb,
		    0.0f, C, p->N);
		break;
	case ATTN: {
		/* a batch a chunk of 4 records' 3 heads, as attention.c (in
		 * bf16 on the fp32 operands' bits as if rounded: the products'
		 * time alone, attention's rounding apart) */
		size_t a = (size_t)p->M * p->K, bb = (size_t)p->K * p->N,
		    c = (size_t)p->M * p->N;
		struct gemm_batch g = { 4, 3, p->ta, p->tb, p->M, p->N, p->K,
		    lda, ldb, p->N, { 3 * a, a }, { 3 * bb, bb }, { 3 * c, c },
		    1.0f };
		int blas = gemm_solo_begin();
		#pragma omp parallel for schedule(dynamic, 1)
		for (int i = 0; i < ATT; i += 12)
			gemm_batch(pr, &g, A + i * a, B + i * bb, C + i * c);
		gemm_solo_end(blas);
		break;
	}
	}
}

static double
flops(const struct product *p)
{
	return 2.0 * p->M * p->N * p->K * (p->how == ATTN ? ATT : 1);
}

static double
cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The rounded copy of B that X of dY^T X has in training. */
static void *B16;

/* Round p's operands that their producers round in training (bf16 only):
 * not the patch embedding's (PATCHES rows), whose input is the batch's. */
static void
rounded(const struct product *p)
{
	if (p->how == ATTN || p->K == PATCHES || p->M == PATCHES)
		return;
	if (p->ta)
		gemm_bf16_pin(A, p->K, p->M, GEMM_CHUNK_BF16, NULL);
	else
		gemm_bf16_pin(A, p->M, p->K, GEMM_CHUNK_BF16, NULL);
	if (p->how == ROWSPLIT) {
		gemm_bf16_fill(B16, 0, p->N, B, p->N, p->K, p->N);
		if (gemm_bf16_twin(B, B16, p->K, p->N) < 0)
			die("no room for a rounded copy");
	}
}

static void
unrounded(void)
{
	gemm_bf16_unpin();
	gemm_bf16_untwin(B);
}

/* GFLOP/s of p, and in *cpu per CPU second: calls for at least 50 ms
 * after one untimed. */
static double
gflops(const struct product *p, enum gemm_backend b, int lib, int nthr,
    double *cpu)
{
	int n = 0, pre = bf16 && b == GEMM_ONEDNN && !lib;
	double g;

	cli_threads(nthr);
	if (pre)
		rounded(p);
	run(p, b, lib, nthr);
	double t0 = now_seconds(), c0 = cpu_seconds(), t;
	do {
		run(p, b, lib, nthr);
		n++;
	} while ((t = now_seconds() - t0) < 0.05);
	*cpu = flops(p) * n / (cpu_seconds() - c0) / 1e9;
	g = flops(p) * n / t / 1e9;
	if (pre)
		unrounded();
	return g;
}

/* Column k of a product's figures at threads t: the engine's call with
 * OpenBLAS, oneDNN, then (at --threads) the libraries' own threads; wall
 * GFLOP/s and per CPU second. */
enum { NCOL = 4 };
static double fig[NPROD][2][NCOL][MAXROUND], cfig[NPROD][2][NCOL][MAXROUND];

static void
products(int nthr, int rounds)
{
	int nt = nthr > 1 ? 2 : 1;

	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < NPROD; i++)
			for (int ti = 0; ti < nt; ti++)
				for (int lib = 0; lib < (ti ? 2 : 1); lib++)
					for (int k = 0; k < 2; k++) {
						int o = (k + r) % 2;	/* who goes first alternates */
						if (lib && (prods[i].how == ATTN || bf16))
							continue;
						int c = 2 * lib + o;
						fig[i][ti][c][r] = gflops(&prods[i],
						    o ? GEMM_ONEDNN : GEMM_OPENBLAS, lib,
						    ti ? nthr : 1, &cfig[i][ti][c][r]);
					}
	printf("# medians of %d rounds, GFLOP/s; ratio %s (per CPU "
	    "second)\n# %-22s %-14s %3s  %8s %7s %12s  %20s %7s %12s\n", rounds,
	    bf16 ? "bf16 / fp32" : "oneDNN / OpenBLAS", "product", "M x N x K",
	    "thr", bf16 ? "fp32" : "OpenBLAS", bf16 ? "bf16" : "oneDNN", "ratio",
	    bf16 ? "" : "own threads: OpenBLAS", bf16 ? "" : "oneDNN",
	    bf16 ? "" : "ratio");
	for (int i = 0; i < NPROD; i++) {
		const struct product *p = &prods[i];
		char shape[32];
		snprintf(shape, sizeof shape, "%dx%dx%d", p->M, p->N, p->K);
		for (int ti = 0; ti < nt; ti++) {
			double m[NCOL], mc[NCOL];
			int ncol = ti && p->how != ATTN && !bf16 ? 4 : 2;
			for (int k = 0; k < ncol; k++) {
				m[k] = median(fig[i][ti][k], rounds);
				mc[k] = median(cfig[i][ti][k], rounds);
			}
			printf("%-24s %-14s %3d  %8.1f %7.1f %5.2f (%4.2f)",
			    ti ? "" : p->name, ti ? "" : shape, ti ? nthr : 1, m[0],
			    m[1], m[1] / m[0], mc[1] / mc[0]);
			if (ncol == 4)
				printf("  %20.1f %7.1f %5.2f (%4.2f)", m[2], m[3],
				    m[3] / m[2], mc[3] / mc[2]);
			printf("\n");
		}
	}
}

/* GFLOP/s of the block products on 4160 rows in calls of m rows, one
 * thread, each backend (turns as above, medians). */
static void
chunks(int rounds)
{
	/* K, N, W transposed: qkv, proj, fc1, fc2; fc2's, fc1's, qkv's dx */
	static const int shape[][3] = { { 192, 576, 1 }, { 192, 192, 1 },
	    { 192, 768, 1 }, { 768, 192, 1 }, { 192, 768, 0 }, { 768, 192, 0 },
	    { 576, 192, 0 } };
	static const int rows[] = { 256, 512, 1024, 2048, 4160 };
	enum { M = 4160, NS = sizeof shape / sizeof *shape,
	    NR = sizeof rows / sizeof *rows };
	static double g[NS][NR][2][MAXROUND];

	for (int r = 0; r < rounds; r++)
		for (int s = 0; s < NS; s++)
			for (int i = 0; i < NR; i++)
				for (int k = 0; k < 2; k++) {
					int o = (k + r) % 2;
					struct product p = { "", CHUNKS, 0, shape[s][2], M,
					    shape[s][1], shape[s][0] };
					gemm_force(o ? GEMM_ONEDNN : GEMM_OPENBLAS);
					cli_threads(1);
					double t0 = now_seconds(), t;
					int n = 0;
					do {
						gemm_chunks(GEMM_FP32, p.tb, M, p.N, p.K, A, p.K, B,
						    p.tb ? p.K : p.N, NULL, C, p.N, rows[i], NULL,
						    NULL);
						n++;
					} while ((t = now_seconds() - t0) < 0.05);
					g[s][i][o][r] = flops(&p) * n / t / 1e9;
				}
	printf("# block products, %d rows in calls of m rows, 1 thread, GFLOP/s "
	    "(medians of %d rounds)\n#   K    N  W^T  backend     m=256   m=512  "
	    "m=1024  m=2048  m=4160\n", M, rounds);
	for (int s = 0; s < NS; s++)
		for (int o = 0; o < 2; o++) {
			printf("%5d %4d %4s  %-8s", shape[s][0], shape[s][1],
			    shape[s][2] ? "yes" : "no", o ? "oneDNN" : "OpenBLAS");
			for (int i = 0; i < NR; i++)
				printf("  %6.1f", median(g[s][i][o], rounds));
			printf("\n");
		}
}

int
main(int argc, char *argv[])
{
	enum { OPT_ROUNDS = CLI_OPT_LONG, OPT_THREADS, OPT_CHUNKS,
	    OPT_PRECISION };
	static const struct cli_opt opts[] = {
		{ "rounds", OPT_ROUNDS, "N", "rounds, the backends taking turns "
		    "in each (7)" },
		{ "threads", OPT_THREADS, "N", "the larger thread count (0: every "
		    "core)" },
		{ "chunks", OPT_CHUNKS, NULL, "the chunk-size table instead, one "
		    "thread" },
		{ "precision", OPT_PRECISION, "fp32|bf16", "bf16: each product in "
		    "bf16 against fp32 (fp32:\nthe backends against each other)" },
		{ NULL, 0, NULL, NULL }
	};
	static const struct cli_cmd cmd = { "[--rounds N] [--threads N] "
	    "[--chunks | --precision P]", "Time OpenBLAS and oneDNN on the reference ViT's "
	    "products, as the engine calls them.", opts, NULL };
	int rounds = 7, nthr = 0, ch, part = 0;

	cli_init(argc, argv);
	while ((ch = cli_getopt(argc, argv, &cmd)) != -1)
		switch (ch) {
		case OPT_ROUNDS:
			rounds = (int)cli_int("--rounds", optarg, 1, MAXROUND);
			break;
		case OPT_THREADS: nthr = cli_opt_threads(optarg); break;
		case OPT_CHUNKS: part = 1; break;
		case OPT_PRECISION:
			bf16 = cli_opt_precision(optarg) == GEMM_BF16;
			break;
		}
	if (optind < argc)
		usage_error("too many operands");
	if (part && bf16)
		usage_error("--chunks times fp32 products only");
	nthr = cli_threads(nthr);
	A = filled(SZ, 7);
	B = filled(SZ, 5);
	C = filled(SZ, 3);
	if (bf16 && (B16 = aligned_alloc(64, sizeof(float) * SZ)) == NULL)
		die("out of memory");
	const dnnl_version_t *v = dnnl_version();
	printf("# OpenBLAS's %s kernels, oneDNN %d.%d.%d%s; %d threads\n",
	    openblas_get_corename(), v->major, v->minor, v->patch,
	    v->cpu_runtime == DNNL_RUNTIME_OMP ? " on OpenMP" : "", nthr);
	printf("# VITPIPE_GEMM=%s: attention's batches by %s, row blocks by %s, "
	    "chunks by %s\n", getenv("VITPIPE_GEMM") ? getenv("VITPIPE_GEMM") :
	    "auto", gemm_backend_name(gemm_backend_of(GEMM_BATCH)),
	    gemm_backend_name(gemm_backend_of(GEMM_ROWS)),
	    gemm_backend_name(gemm_backend_of(GEMM_CHUNKS)));
	if (part)
		chunks(rounds);
	else
		products(nthr, rounds);
	free(A);
	free(B);
	free(C);
	return 0;
}
