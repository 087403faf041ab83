/*
 * bench_attention.c - the attention core of one block of config R (128
 * records of 65 tokens, 3 heads of 64; q, k, v as the model keeps them,
 * rows of 3 x 192) forward and backward, fp32 and bf16, on the OpenMP
 * threads (OMP_NUM_THREADS, 2 if unset), median of 20 after 5 warm-up
 * passes: ms a block, the GFLOP/s of its products, ms a training step
 * of config R's 6 blocks, and a hash of the outputs (two builds that print
 * the same hash compute the same bits).  bf16 runs twice: attention
 * rounding q, k and v into each chunk itself (as it does after a
 * rotation), then from their rounded copy, writing only its output's
 * ("from copies": as training runs it for encodings without a rotation,
 * the copy made by the qkv product's epilogue).  Arguments: fp32 or bf16
 * runs that precision only (for perf record); exp takes the experiments'
 * backbone instead (64 records, 4 heads of 16, 4 blocks).  The figures
 * behind doc/performance.md's attention section.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "median.h"
#include "nn.h"

enum { T = 65, WARM = 5, RUNS = 20 };

static float *
filled(size_t n, unsigned seed)
{
	float *x = malloc(sizeof *x * n);
	if (x == NULL) {
		fprintf(stderr, "bench_attention: out of memory\n");
		exit(1);
	}
	srand(seed);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)rand() / RAND_MAX - 0.5f;
	return x;
}

/* h, the FNV-1a hash so far, on n floats' bytes */
static uint64_t
fnv(uint64_t h, const float *x, size_t n)
{
	const unsigned char *c = (const unsigned char *)x;
	for (size_t i = 0; i < n * sizeof *x; i++)
		h = (h ^ c[i]) * 1099511628211u;
	return h;
}

int
main(int argc, char **argv)
{
	const char *prec = NULL;
	int exp = 0;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "exp") == 0)
			exp = 1;
		else
			prec = argv[i];
	const int B = exp ? 64 : 128, H = exp ? 4 : 3, HD = exp ? 16 : 64;
	const int D = H * HD, LD = 3 * D, DEPTH = exp ? 4 : 6;
	int nthr = getenv("OMP_NUM_THREADS") ? omp_get_max_threads() : 2;
	size_t n = (size_t)B * T * LD, no = (size_t)B * T * D;
	float *qkv = filled(n, 1), *dout = filled(no, 2), *dqkv = filled(n, 3);
	float *out = filled(no, 4), *P = filled((size_t)B * H * T * T, 5);
	float *scr = filled((size_t)nthr * 2 * T * T, 6);
	float *partial = filled((size_t)B * H, 7);
	/* the products: q k^T and W v forward; dW, dv, dq, dk backward */
	double flop = 2.0 * B * H * T * T * HD;

	omp_set_num_threads(nthr);
	/* variant 0 fp32, 1 bf16, 2 bf16 from copies */
	for (int p = 0; p < 3; p++) {
		struct attn a = { .B = B, .T = T, .Tq = T, .H = H, .hd = HD,
		    .ldqk = LD, .ldv = LD, .nthr = nthr, .scratch = scr,
		    .prec = p ? GEMM_BF16 : GEMM_FP32 };
		double f[RUNS], b[RUNS];
		struct err e;
		char *qkvc = NULL, *outc = NULL;

		if (prec != NULL && strcmp(prec, p ? "bf16" : "fp32") != 0)
			continue;
		if (p && gemm_bf16_mode() == GEMM_BF16_NONE) {
			printf("attention bf16: this CPU has no native bf16\n");
			break;
		}
		if (p == 2) {
			size_t z = (size_t)gemm_bf16_size();
			qkvc = malloc(n * z);
			outc = malloc(no * z);
			if (qkvc == NULL || outc == NULL) {
				fprintf(stderr, "bench_attention: out of memory\n");
				return 1;
			}
			gemm_bf16_fill(qkvc, 0, LD, qkv, LD, B * T, LD);
			a.qkvc = qkvc;
			a.outc = outc;
		}
		for (int i = 0; i < WARM + RUNS; i++) {
			double t0 = omp_get_wtime();
			attention_forward(&a, out, P, qkv, qkv + D, qkv + 2 * D,
			    NULL);
			double t1 = omp_get_wtime();
			attention_backward(&a, dqkv, dqkv + D, dqkv + 2 * D, NULL,
			    partial, dout, P, qkv, qkv + D, qkv + 2 * D, NULL);
			double t2 = omp_get_wtime();
			if (i >= WARM) {
				f[i - WARM] = t1 - t0;
				b[i - WARM] = t2 - t1;
			}
		}
		if (gemm_failed(&e) < 0) {
			fprintf(stderr, "bench_attention: %s\n", e.msg);
			return 1;
		}
		double fm = median(f, RUNS), bm = median(b, RUNS);
		/* the output: out, or its copy's bytes */
		uint64_t h = outc != NULL ? fnv(14695981039346656037u,
		    (const float *)outc, no * gemm_bf16_size() / sizeof(float)) :
		    fnv(14695981039346656037u, out, no);
		h = fnv(h, dqkv, n);
		printf("attention %s, %s block, %d threads: forward %.2f ms "
		    "(%.0f GFLOP/s), backward %.2f ms (%.0f GFLOP/s); %.1f ms of "
		    "a training step's %d blocks (outputs %016llx)\n",
		    (const char *[]){ "fp32", "bf16", "bf16 from copies" }[p],
		    exp ? "experiments'" : "config R's", nthr,
		    fm * 1e3, 2 * flop / fm / 1e9, bm * 1e3, 4 * flop / bm / 1e9,
		    (fm + bm) * DEPTH * 1e3, DEPTH, (unsigned long long)h);
		free(qkvc);
		free(outc);
	}
	free(qkv); free(dout); free(dqkv); free(out); free(P); free(scr);
	free(partial);
	return 0;
}
