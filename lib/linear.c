/*
 * linear.c - fully connected layer, PyTorch weight layout w[No][Ni]: one
 * sgemm over all rows of the batch for each product.
 */
#include <cblas.h>
#include <string.h>

#include "nn.h"

void
linear_forward(float *y /* [N][No] */, const float *x /* [N][Ni] */,
    const float *w /* [No][Ni] */, const float *b /* [No] or NULL */,
    int N, int Ni, int No)
{
	float beta = 0.0f;
	if (b != NULL) {
		#pragma omp parallel for
		for (int n = 0; n < N; n++)
			memcpy(y + (size_t)n * No, b, sizeof(float) * No);
		beta = 1.0f;
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, No, Ni,
	    1.0f, x, Ni, w, Ni, beta, y, No);
}

void
linear_backward(float *dx /* [N][Ni] or NULL */, float *dw /* [No][Ni] */,
    float *db /* [No] or NULL */, const float *dy /* [N][No] */,
    const float *x /* [N][Ni] */, const float *w /* [No][Ni] */,
    int N, int Ni, int No)
{
	if (dx != NULL)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, Ni, No,
		    1.0f, dy, No, w, Ni, 0.0f, dx, Ni);
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, No, Ni, N,
	    1.0f, dy, No, x, Ni, 1.0f, dw, Ni);
	if (db != NULL) {
		/* column sums in row blocks: sequential over n keeps the
		 * summation order fixed whatever the thread count */
		#pragma omp parallel for
		for (int j0 = 0; j0 < No; j0 += 64) {
			int j1 = j0 + 64 < No ? j0 + 64 : No;
			for (int n = 0; n < N; n++) {
				const float *r = dy + (size_t)n * No;
				for (int j = j0; j < j1; j++)
					db[j] += r[j];
			}
		}
	}
}
