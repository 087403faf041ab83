/*
 * test_gemm_refusal.c - a backend that cannot compute a shape: oneDNN's
 * calls are made to fail here (this file's dnnl_sgemm and
 * dnnl_primitive_execute stand in front of the library's while refuse is
 * set).  The planner then times OpenBLAS alone and keeps it, with right
 * results and no failure for the process; forced onto oneDNN, a product
 * leaves NaN and says why at gemm_failed.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <oneapi/dnnl/dnnl.h>

#include "gemm_plan.h"
#include "gemmref.h"
#include "nn.h"

static int refuse, refused;

dnnl_status_t
dnnl_sgemm(char ta, char tb, dnnl_dim_t M, dnnl_dim_t N, dnnl_dim_t K,
    float alpha, const float *A, dnnl_dim_t lda, const float *B,
    dnnl_dim_t ldb, float beta, float *C, dnnl_dim_t ldc)
{
	static dnnl_status_t (*real)(char, char, dnnl_dim_t, dnnl_dim_t,
	    dnnl_dim_t, float, const float *, dnnl_dim_t, const float *,
	    dnnl_dim_t, float, float *, dnnl_dim_t);

	if (refuse) {
		refused++;
		return dnnl_unimplemented;
	}
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "dnnl_sgemm");
	return real(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

dnnl_status_t
dnnl_primitive_execute(const_dnnl_primitive_t p, dnnl_stream_t s, int n,
    const dnnl_exec_arg_t *args)
{
	static dnnl_status_t (*real)(const_dnnl_primitive_t, dnnl_stream_t,
	    int, const dnnl_exec_arg_t *);

	if (refuse) {
		refused++;
		return dnnl_runtime_error;
	}
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "dnnl_primitive_execute");
	return real(p, s, n, args);
}

/* Whether the plan file at path holds a line with want and none with
 * "onednn". */
static int
plan_says(const char *path, const char *want)
{
	char line[256];
	int found = 0, other = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL) {
		found |= strstr(line, want) != NULL;
		other |= line[0] != '#' && strstr(line, "onednn") != NULL;
	}
	fclose(f);
	return found && !other;
}

/* Every element of c[n] NaN. */
static int
all_nan(const float *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isnan(c[i]))
			return 0;
	return 1;
}

int
main(void)
{
	enum { n0 = 4, n1 = 3, M = 65, N = 16, K = 65 };
	char dir[] = "/tmp/test_gemm_refusal.XXXXXX", path[64];
	struct rng r;
	struct err e = { "" };
	float *a, *b;
	size_t na, nb, nc = (size_t)n0 * n1 * M * N;

	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(path, sizeof path, "%s/plan", dir);
	CHECK(gemm_plan_open(path, &e) == 0, "a plan file opens (%s)", e.msg);
	rng_seed(&r, 17, 0);
	struct gemm_batch g = attn_batch(&r, 1, n0, n1, M, N, K, &a, &na, &b,
	    &nb);
	float *c = malloc(sizeof(float) * nc);

	/* planned: oneDNN fails its timing, OpenBLAS computes */
	refuse = 1;
	gemm_batch(GEMM_FP32, &g, a, b, c);
	CHECK(refused > 0, "the planner timed oneDNN's batch (%d refusals)",
	    refused);
	CHECK(batch_err(&g, a, b, c, NULL) <= 1,
	    "a batch oneDNN refuses is computed by OpenBLAS");
	CHECK(plan_says(path, "batch N T 65 16 65 openblas"),
	    "... and the plan keeps OpenBLAS for its shape");
	refused = 0;
	gemm_one(GEMM_FP32, 0, 0, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
	CHECK(refused > 0, "the planner timed oneDNN's sgemm (%d refusals)",
	    refused);
	CHECK(err_units(0, 0, M, N, K, 1.0f, a, K, b, N, 0.0f, c, c, N,
	    NULL) <= 1, "a product oneDNN refuses is computed by OpenBLAS");
	CHECK(plan_says(path, "one N N 65 16 65 openblas"),
	    "... and the plan keeps OpenBLAS for its shape");
	CHECK(gemm_failed(&e) == 0, "no failure is the process's (%s)", e.msg);

	/* forced: the product cannot run, and says so */
	gemm_force(GEMM_ONEDNN);
	gemm_one(GEMM_FP32, 0, 0, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
	CHECK(all_nan(c, (size_t)M * N), "an sgemm oneDNN refuses is NaN");
	CHECK(gemm_failed(&e) < 0 &&
	    strcmp(e.msg, "matrix product: oneDNN could not run an sgemm") == 0,
	    "... and gemm_failed says why: %s", e.msg);
	gemm_batch(GEMM_FP32, &g, a, b, c);
	CHECK(all_nan(c, nc), "a batch oneDNN refuses is NaN");
	refuse = 0;
	gemm_force(GEMM_AUTO);

	free(a); free(b); free(c);
	unlink(path);
	rmdir(dir);
	return test_done();
}
