/*
 * xent.c - softmax cross-entropy against soft targets (label smoothing and
 * mixup are the caller's: they only change the target rows).
 */
#include <math.h>

#include "nn.h"

float
xent_forward(float *prob /* [B][C] */, const float *logits /* [B][C] */,
    const float *target /* [B][C] or NULL */, int B, int C)
{
	double loss = 0;
	for (int b = 0; b < B; b++) {
		const float *l = logits + (size_t)b * C;
		float *p = prob + (size_t)b * C;
		float mx = l[0];
		for (int c = 1; c < C; c++)
			mx = l[c] > mx ? l[c] : mx;
		double s = 0;
		for (int c = 0; c < C; c++)
			s += exp((double)l[c] - mx);
		double lse = mx + log(s);
		for (int c = 0; c < C; c++) {
			p[c] = (float)exp(l[c] - lse);
			if (target != NULL)
				loss -= target[(size_t)b * C + c] * (l[c] - lse);
		}
	}
	return (float)(loss / B);
}

void
xent_backward(float *dlogits /* [B][C] */, const float *prob /* [B][C] */,
    const float *target /* [B][C] */, int B, int C)
{
	for (int b = 0; b < B; b++) {
		const float *p = prob + (size_t)b * C, *t = target + (size_t)b * C;
		float *d = dlogits + (size_t)b * C;
		float st = 0;
		for (int c = 0; c < C; c++)
			st += t[c];
		for (int c = 0; c < C; c++)
			d[c] = (p[c] * st - t[c]) / B;
	}
}
