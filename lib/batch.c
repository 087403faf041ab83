/*
 * batch.c - stream records to float batches.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"

__attribute__((format(printf, 2, 3)))
static int
fail(struct vt *s, const char *fmt, ...)
{
	char msg[sizeof s->err - 64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(s->err, sizeof s->err, "%s: %s", s->name ? s->name : "input", msg);
	return -1;
}

/* Parse "v0,v1,..." into v[max]; the count, or -1. */
static int
parse_list(const char *str, float *v, int max)
{
	int n = 0;
	char *end;

	for (;;) {
		if (n == max)
			return -1;
		double d = strtod(str, &end);
		if (end == str || !isfinite(d))
			return -1;
		v[n++] = (float)d;
		if (*end == '\0')
			return n;
		if (*end != ',')
			return -1;
		str = end + 1;
	}
}

/* MEAN, STD and CHANNELS into per-channel scale and shift for u8 values. */
static int
normalization(struct batch_reader *br, struct vt *s)
{
	float mean[BATCH_MAXCHANNELS], std[BATCH_MAXCHANNELS];
	const char *m = vt_meta(s, "MEAN"), *d = vt_meta(s, "STD");
	const char *c = vt_meta(s, "CHANNELS");
	int nm = 1, nd = 1;

	mean[0] = 0;
	std[0] = 1;
	if (m != NULL && (nm = parse_list(m, mean, BATCH_MAXCHANNELS)) < 0)
		return fail(s, "bad MEAN '%s'", m);
	if (d != NULL && (nd = parse_list(d, std, BATCH_MAXCHANNELS)) < 0)
		return fail(s, "bad STD '%s'", d);
	br->channels = nm > nd ? nm : nd;
	if (c != NULL) {
		char *end;
		long n = strtol(c, &end, 10);
		if (*end != '\0' || n < 1 || n > BATCH_MAXCHANNELS)
			return fail(s, "bad CHANNELS '%s'", c);
		br->channels = (int)n;
	}
	if ((nm != 1 && nm != br->channels) || (nd != 1 && nd != br->channels))
		return fail(s, "MEAN and STD need 1 or %d values", br->channels);
	for (int i = 0; i < br->channels; i++) {
		float mi = mean[nm == 1 ? 0 : i], si = std[nd == 1 ? 0 : i];
		if (!(si > 0))
			return fail(s, "STD must be positive");
		br->scale[i] = 1 / (255 * si);
		br->shift[i] = -mi / si;
	}
	return 0;
}

int
batch_open(struct batch_reader *br, struct vt *s, int P, int A, int classes,
    int need_label)
{
	memset(br, 0, sizeof *br);
	br->s = s;
	br->ipatch = vt_find(s, "patch");
	br->ipos = vt_find(s, "pos");
	br->ilabel = vt_find(s, "label");
	if (br->ipatch < 0)
		return fail(s, "no field 'patch'");
	if (br->ipos < 0)
		return fail(s, "no field 'pos'");
	if (need_label && br->ilabel < 0)
		return fail(s, "no field 'label'");
	struct vt_field *f = &s->field[br->ipatch];
	if (f->rank != 2 || (f->dtype != VT_U8 && f->dtype != VT_F32))
		return fail(s, "field 'patch' must be u8 or f32 [tokens][values]");
	if (P <= 0)
		P = f->dim[1] > 0 && f->dim[1] <= INT32_MAX ? (int)f->dim[1] : 0;
	if (P <= 0)
		return fail(s, "field 'patch' needs a fixed number of values per token");
	if (f->dim[1] != VT_ANY && f->dim[1] != P)
		return fail(s, "patches have %lld values, the model takes %d",
		    (long long)f->dim[1], P);
	f = &s->field[br->ipos];
	if (f->rank != 2 || f->dtype != VT_F32)
		return fail(s, "field 'pos' must be f32 [tokens][axes]");
	if (A <= 0)
		A = f->dim[1] > 0 && f->dim[1] <= 16 ? (int)f->dim[1] : 0;
	if (A <= 0)
		return fail(s, "field 'pos' needs a fixed number of axes");
	if (f->dim[1] != VT_ANY && f->dim[1] != A)
		return fail(s, "positions have %lld axes, the model takes %d",
		    (long long)f->dim[1], A);
	if (br->ilabel >= 0) {
		f = &s->field[br->ilabel];
		if (f->rank != 0 || f->dtype != VT_I32)
			return fail(s, "field 'label' must be an i32 scalar");
	}
	if (classes <= 0 && vt_meta(s, "CLASSES") != NULL)
		classes = atoi(vt_meta(s, "CLASSES"));
	br->P = P;
	br->A = A;
	br->need_label = need_label;
	br->classes = classes;
	if (normalization(br, s) < 0)
		return -1;
	if (P % br->channels != 0)
		return fail(s, "%d values per token is not a multiple of %d channels",
		    P, br->channels);
	return 0;
}

int
batch_alloc(struct batch *b, const struct batch_reader *br, int cap)
{
	memset(b, 0, sizeof *b);
	b->P = br->P;
	b->A = br->A;
	b->cap = cap;
	b->label = malloc((size_t)cap * sizeof *b->label);
	return b->label != NULL ? 0 : -1;
}

void
batch_free(struct batch *b)
{
	free(b->x);
	free(b->pos);
	free(b->label);
	free(b->scratch);
	memset(b, 0, sizeof *b);
}

/* Room for cap records of T tokens. */
static int
batch_reserve(struct batch *b, int64_t T)
{
	if (T <= b->tcap)
		return 0;
	size_t nx, np;
	if (__builtin_mul_overflow((size_t)b->cap * (size_t)T, (size_t)b->P * sizeof(float), &nx) ||
	    __builtin_mul_overflow((size_t)b->cap * (size_t)T, (size_t)b->A * sizeof(float), &np))
		return -1;
	float *x = realloc(b->x, nx), *pos;
	if (x == NULL)
		return -1;
	b->x = x;
	if ((pos = realloc(b->pos, np)) == NULL)
		return -1;
	b->pos = pos;
	if ((x = realloc(b->scratch, (size_t)T * sizeof *x)) == NULL)
		return -1;
	b->scratch = x;
	b->tcap = T;
	return 0;
}

/* Return 0 when every v[n] is finite. */
static int
nonfinite(const float *v, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return 1;
	return 0;
}

/* Check the held record and copy it into slot b->n. */
static int
take(struct batch_reader *br, struct batch *b)
{
	struct vt *s = br->s;
	struct vt_field *fp = &s->field[br->ipatch], *fq = &s->field[br->ipos];
	long long rec = (long long)br->delivered + 1;	/* 1-based, as vt.c */
	int64_t T = fp->shape[0];

	if (T < 1 || T > INT32_MAX)
		return fail(s, "record %lld: %lld tokens", rec, (long long)T);
	if (fp->shape[1] != br->P)
		return fail(s, "record %lld: patches have %lld values, the model takes %d",
		    rec, (long long)fp->shape[1], br->P);
	if (fq->shape[0] != T || fq->shape[1] != br->A)
		return fail(s, "record %lld: 'pos' is [%lld][%lld], wanted [%lld][%d]",
		    rec, (long long)fq->shape[0], (long long)fq->shape[1],
		    (long long)T, br->A);
	if (nonfinite(fq->data, fq->count))
		return fail(s, "record %lld: 'pos' holds NaN or Inf", rec);
	int32_t label = -1;
	if (br->ilabel >= 0) {
		label = *(int32_t *)s->field[br->ilabel].data;
		if ((label < 0 && (label != -1 || br->need_label)) ||
		    (br->classes > 0 && label >= br->classes))
			return fail(s, "record %lld: label %d out of range [0, %d)",
			    rec, label, br->classes);
	}
	if (b->n == 0) {
		if (batch_reserve(b, T) < 0)
			return fail(s, "record %lld: out of memory for %lld tokens",
			    rec, (long long)T);
		b->T = (int)T;
	}
	int64_t nv = T * br->P;
	float *x = b->x + (int64_t)b->n * nv;
	if (fp->dtype == VT_F32) {
		if (nonfinite(fp->data, nv))
			return fail(s, "record %lld: 'patch' holds NaN or Inf", rec);
		memcpy(x, fp->data, (size_t)nv * sizeof *x);
	} else {
		const uint8_t *u = fp->data;
		int C = br->channels;
		for (int64_t i = 0; i < nv; i++)
			x[i] = u[i] * br->scale[i % C] + br->shift[i % C];
	}
	memcpy(b->pos + (int64_t)b->n * T * br->A, fq->data,
	    (size_t)(T * br->A) * sizeof(float));
	b->label[b->n] = label;
	return 0;
}

int
batch_next(struct batch_reader *br, struct batch *b, int max)
{
	b->n = 0;
	b->first = br->delivered;
	while (b->n < max) {
		if (!br->held) {
			if (br->eof)
				break;
			int r = vt_read_record(br->s);
			if (r < 0)
				return -1;
			if (r == 0) {
				br->eof = 1;
				break;
			}
			br->held = 1;
		}
		if (b->n > 0 && br->s->field[br->ipatch].shape[0] != b->T)
			break;
		if (take(br, b) < 0)
			return -1;
		br->held = 0;
		br->delivered++;
		b->n++;
	}
	return b->n;
}

static int
cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

int
batch_grid(struct batch *b, int *grid)
{
	int64_t cells = 1;

	for (int a = 0; a < b->A; a++) {
		for (int t = 0; t < b->T; t++)
			b->scratch[t] = b->pos[(int64_t)t * b->A + a];
		qsort(b->scratch, (size_t)b->T, sizeof *b->scratch, cmp_float);
		int n = 1;
		for (int t = 1; t < b->T; t++)
			n += b->scratch[t] != b->scratch[t - 1];
		grid[a] = n;
		if ((cells *= n) > b->T)
			return -1;
	}
	return cells == b->T ? 0 : -1;
}

int
batch_skip(struct batch_reader *br, int64_t n)
{
	for (; n > 0; n--) {
		if (!br->held) {
			int r = br->eof ? 0 : vt_read_record(br->s);
			if (r < 0)
				return -1;
			if (r == 0)
				return fail(br->s, "stream ended after %lld records",
				    (long long)br->delivered);
		}
		br->held = 0;
		br->delivered++;
	}
	return 0;
}
