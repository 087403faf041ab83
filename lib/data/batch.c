/*
 * batch.c - stream records to float batches.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "order.h"

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

/* Per-channel mean[] and std[] from the values m, d and c of MEAN, STD and
 * CHANNELS (NULL: 0, 1, and as many channels as MEAN or STD list); whose
 * names their owner in messages ("" or "the model's ").  The channel
 * count, or -1 with s->err. */
static int
norm_values(struct vt *s, const char *whose, const char *m, const char *d,
    const char *c, float *mean, float *std)
{
	int nm = 1, nd = 1, channels;

	mean[0] = 0;
	std[0] = 1;
	if (m != NULL && (nm = parse_list(m, mean, BATCH_MAXCHANNELS)) < 0)
		return vt_error(s, "bad %sMEAN '%s'", whose, m);
	if (d != NULL && (nd = parse_list(d, std, BATCH_MAXCHANNELS)) < 0)
		return vt_error(s, "bad %sSTD '%s'", whose, d);
	channels = nm > nd ? nm : nd;
	if (c != NULL) {
		int64_t n;
		if (vt_parse_int(c, NULL, 1, BATCH_MAXCHANNELS, &n) < 0)
			return vt_error(s, "bad CHANNELS '%s'", c);
		channels = (int)n;
	}
	if ((nm != 1 && nm != channels) || (nd != 1 && nd != channels))
		return vt_error(s, "%sMEAN and STD need 1 or %d values", whose, channels);
	for (int i = channels - 1; i >= 0; i--) {
		mean[i] = mean[nm == 1 ? 0 : i];
		std[i] = std[nd == 1 ? 0 : i];
		if (!(std[i] > 0))
			return vt_error(s, "%sSTD must be positive", whose);
	}
	return channels;
}

/* The per-channel scale and shift of u8 values for MEAN, STD and CHANNELS
 * values m, d and c (see norm_values). */
static int
normalization(struct batch_reader *br, struct vt *s, const char *m,
    const char *d, const char *c)
{
	float mean[BATCH_MAXCHANNELS], std[BATCH_MAXCHANNELS];

	if ((br->channels = norm_values(s, "", m, d, c, mean, std)) < 0)
		return -1;
	for (int i = 0; i < br->channels; i++) {
		br->scale[i] = 1 / (255 * std[i]);
		br->shift[i] = -mean[i] / std[i];
	}
	return 0;
}

/* batch_open with the MEAN, STD and CHANNELS values m, d and c. */
static int
open_norm(struct batch_reader *br, struct vt *s, int P, int A, int classes,
    int need_label, const char *m, const char *d, const char *c)
{
	const char *n;
	int64_t k;

	memset(br, 0, sizeof *br);
	br->s = s;
	br->ipatch = vt_find(s, "patch");
	br->ipos = vt_find(s, "pos");
	br->ilabel = vt_find(s, "label");
	br->isource = vt_find(s, "source");
	br->icls = vt_find(s, "clspos");
	if (br->ipatch < 0)
		return vt_error(s, "no field 'patch'");
	if (br->ipos < 0)
		return vt_error(s, "no field 'pos': make positions with posgen");
	if (need_label && br->ilabel < 0)
		return vt_error(s, "no field 'label'");
	struct vt_field *f = &s->field[br->ipatch];
	if (f->rank != 2 || (f->dtype != VT_U8 && f->dtype != VT_F32))
		return vt_error(s, "field 'patch' must be u8 or f32 [tokens][values]");
	if (P <= 0)
		P = f->dim[1] > 0 && f->dim[1] <= INT32_MAX ? (int)f->dim[1] : 0;
	if (P <= 0)
		return vt_error(s, "field 'patch' needs a fixed number of values per token");
	if (f->dim[1] != VT_ANY && f->dim[1] != P)
		return vt_error(s, "patches have %lld values, the model takes %d",
		    (long long)f->dim[1], P);
	f = &s->field[br->ipos];
	if (f->rank != 2 || f->dtype != VT_F32)
		return vt_error(s, "field 'pos' must be f32 [tokens][axes]");
	if (A <= 0)
		A = f->dim[1] > 0 && f->dim[1] <= 16 ? (int)f->dim[1] : 0;
	if (A <= 0)
		return vt_error(s, "field 'pos' needs a fixed number of axes");
	if (f->dim[1] != VT_ANY && f->dim[1] != A)
		return vt_error(s, "positions have %lld axes, the model takes %d",
		    (long long)f->dim[1], A);
	if (br->icls >= 0) {
		f = &s->field[br->icls];
		if (f->rank != 1 || f->dtype != VT_F32 || f->dim[0] != A)
			return vt_error(s, "field 'clspos' must be f32 [%d]", A);
	}
	if (br->ilabel >= 0) {
		f = &s->field[br->ilabel];
		if (f->rank != 0 || f->dtype != VT_I32)
			return vt_error(s, "field 'label' must be an i32 scalar");
	}
	if (br->isource >= 0) {
		f = &s->field[br->isource];
		if (f->rank != 1 || f->dtype != VT_U8)
			return vt_error(s, "field 'source' must be u8 [*] text");
		/* refused before it is read, kept or not (shuffle-eval skips it) */
		vt_limit(s, br->isource, BATCH_MAXSOURCE);
	}
	if (classes <= 0 && (n = vt_meta(s, "CLASSES")) != NULL) {
		if (vt_parse_int(n, NULL, 1, INT_MAX, &k) < 0)
			return vt_error(s, "bad CLASSES '%.20s'", n);
		classes = (int)k;
	}
	br->P = P;
	br->A = A;
	br->need_label = need_label;
	br->classes = classes;
	if (normalization(br, s, m, d, c) < 0)
		return -1;
	if (P % br->channels != 0)
		return vt_error(s, "%d values per token is not a multiple of %d channels",
		    P, br->channels);
	return 0;
}

int
batch_open(struct batch_reader *br, struct vt *s, int P, int A, int classes,
    int need_label)
{
	return open_norm(br, s, P, A, classes, need_label, vt_meta(s, "MEAN"),
	    vt_meta(s, "STD"), vt_meta(s, "CHANNELS"));
}

/* Whether the normalizations (m, d) and (km, kd) of s's channels agree,
 * to the digits a header keeps.  1, 0, or -1 with s->err. */
static int
same_norm(struct vt *s, const char *m, const char *d, const char *km,
    const char *kd, const char *c)
{
	float mean[2][BATCH_MAXCHANNELS], std[2][BATCH_MAXCHANNELS];
	int n = norm_values(s, "", m, d, c, mean[0], std[0]);

	if (n < 0 || norm_values(s, "the model's ", km, kd, c, mean[1], std[1]) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (fabsf(mean[0][i] - mean[1][i]) > 1e-6f * fmaxf(1, fabsf(mean[1][i])) ||
		    fabsf(std[0][i] - std[1][i]) > 1e-6f * std[1][i])
			return 0;
	return 1;
}

int
batch_open_model(struct batch_reader *br, struct vt *s, const struct vt *ck,
    int P, int A, int classes, int need_label)
{
	const char *m = vt_meta(s, "MEAN"), *d = vt_meta(s, "STD");
	const char *km = vt_meta(ck, "MEAN"), *kd = vt_meta(ck, "STD");
	const char *c = vt_meta(s, "CHANNELS"), *n = vt_meta(s, "CLASSES");
	int64_t k;

	/* Labels of another class count are another task's: the model would
	 * score them against outputs that mean something else. */
	if (n != NULL && (vt_parse_int(n, NULL, 1, INT_MAX, &k) < 0 || k != classes))
		return vt_error(s, "CLASSES %.20s, the model has %d classes", n, classes);
	if (c == NULL)
		c = vt_meta(ck, "CHANNELS");
	if (m == NULL && d == NULL)
		return open_norm(br, s, P, A, classes, need_label, km, kd, c);
	int same = same_norm(s, m, d, km, kd, c);
	if (same < 0)
		return -1;
	if (!same)
		return vt_error(s, "MEAN %s STD %s differ from the model's MEAN %s STD %s, "
		    "its training stream's",
		    m ? m : "0", d ? d : "1", km ? km : "0", kd ? kd : "1");
	return open_norm(br, s, P, A, classes, need_label, m, d, c);
}

int
batch_alloc(struct batch *b, const struct batch_reader *br, int cap)
{
	memset(b, 0, sizeof *b);
	b->P = br->P;
	b->A = br->A;
	b->cap = cap;
	b->label = malloc((size_t)cap * sizeof *b->label);
	if (br->isource >= 0)
		b->source_at = malloc((size_t)cap * sizeof *b->source_at);
	if (br->icls >= 0)
		b->cls = malloc((size_t)cap * b->A * sizeof *b->cls);
	return b->label != NULL && (br->isource < 0 || b->source_at != NULL) &&
	    (br->icls < 0 || b->cls != NULL) ? 0 : -1;
}

void
batch_free(struct batch *b)
{
	free(b->x);
	free(b->pos);
	free(b->label);
	free(b->cls);
	free(b->scratch);
	free(b->source);
	free(b->source_at);
	memset(b, 0, sizeof *b);
}

int
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

/* Append the held record's source text to b's, for slot b->n. */
static int
take_source(struct batch_reader *br, struct batch *b, long long rec)
{
	struct vt_field *f = &br->s->field[br->isource];
	size_t n = (size_t)f->count, at = b->n ? b->source_at[b->n - 1] +
	    strlen(b->source + b->source_at[b->n - 1]) + 1 : 0;

	if (memchr(f->data, '\0', n) || memchr(f->data, '\n', n))
		return vt_error(br->s, "record %lld: 'source' holds a NUL or newline byte", rec);
	if (at + n + 1 > b->source_cap) {
		size_t cap = b->source_cap ? b->source_cap : 1024;
		while (cap < at + n + 1)
			cap *= 2;
		char *p = realloc(b->source, cap);
		if (p == NULL)
			return vt_error(br->s, "record %lld: out of memory", rec);
		b->source = p;
		b->source_cap = cap;
	}
	memcpy(b->source + at, f->data, n);
	b->source[at + n] = '\0';
	b->source_at[b->n] = at;
	return 0;
}

const char *
batch_source(const struct batch *b, int i)
{
	return b->source_at != NULL ? b->source + b->source_at[i] : NULL;
}

/* Check the held record and copy it into slot b->n. */
static int
take(struct batch_reader *br, struct batch *b)
{
	struct vt *s = br->s;
	struct vt_field *fp = &s->field[br->ipatch], *fq = &s->field[br->ipos];
	/* 1-based, as vt.c: the stream's number, whatever the order */
	long long rec = br->order ? (long long)order_record(br->order) :
	    (long long)br->delivered + 1;
	int64_t T = fp->shape[0];

	if (T < 1 || T > INT32_MAX)
		return vt_error(s, "record %lld: %lld tokens", rec, (long long)T);
	if (fp->shape[1] != br->P)
		return vt_error(s, "record %lld: patches have %lld values, the model takes %d",
		    rec, (long long)fp->shape[1], br->P);
	if (fq->shape[0] != T || fq->shape[1] != br->A)
		return vt_error(s, "record %lld: 'pos' is [%lld][%lld], wanted [%lld][%d]",
		    rec, (long long)fq->shape[0], (long long)fq->shape[1],
		    (long long)T, br->A);
	if (nonfinite(fq->data, fq->count))
		return vt_error(s, "record %lld: 'pos' holds NaN or Inf", rec);
	int32_t label = -1;
	if (br->ilabel >= 0) {
		label = *(int32_t *)s->field[br->ilabel].data;
		if ((label < 0 && (label != -1 || br->need_label)) ||
		    (br->classes > 0 && label >= br->classes))
			return vt_error(s, "record %lld: label %d out of range [0, %d)",
			    rec, label, br->classes);
	}
	if (b->n == 0) {
		if (batch_reserve(b, T) < 0)
			return vt_error(s, "record %lld: out of memory for %lld tokens",
			    rec, (long long)T);
		b->T = (int)T;
	}
	int64_t nv = T * br->P;
	float *x = b->x + (int64_t)b->n * nv;
	if (fp->dtype == VT_F32) {
		if (nonfinite(fp->data, nv))
			return vt_error(s, "record %lld: 'patch' holds NaN or Inf", rec);
		memcpy(x, fp->data, (size_t)nv * sizeof *x);
	} else {
		const uint8_t *u = fp->data;
		int C = br->channels;
		for (int64_t i = 0; i < nv; i++)
			x[i] = u[i] * br->scale[i % C] + br->shift[i % C];
	}
	memcpy(b->pos + (int64_t)b->n * T * br->A, fq->data,
	    (size_t)(T * br->A) * sizeof(float));
	if (br->icls >= 0) {
		const float *c = s->field[br->icls].data;
		if (nonfinite(c, br->A))
			return vt_error(s, "record %lld: 'clspos' holds NaN or Inf", rec);
		memcpy(b->cls + (int64_t)b->n * br->A, c, (size_t)br->A * sizeof(float));
	}
	b->label[b->n] = label;
	return br->isource >= 0 ? take_source(br, b, rec) : 0;
}

/* The next record, in the stream's order or batch_shuffle's. */
static int
next_record(struct batch_reader *br)
{
	return br->order != NULL ? order_next(br->order, br->s) : vt_read_record(br->s);
}

int
batch_shuffle(struct batch_reader *br, const struct rng *r, int64_t block, int64_t buffer)
{
	order_free(br->order);
	if ((br->order = order_open(br->s, r, block, buffer, br->ipatch)) == NULL)
		return -1;
	return order_seeks(br->order);
}

void
batch_close(struct batch_reader *br)
{
	order_free(br->order);
	br->order = NULL;
}

int
batch_next(struct batch_reader *br, struct batch *b, int max)
{
	b->n = 0;
	b->first = br->delivered;
	while (b->n < max && (br->limit == 0 || br->delivered < br->limit)) {
		if (!br->held) {
			if (br->eof)
				break;
			int r = next_record(br);
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
			int r = br->eof ? 0 : next_record(br);
			if (r < 0)
				return -1;
			if (r == 0)
				return vt_error(br->s, "stream ended after %lld records",
				    (long long)br->delivered);
		}
		br->held = 0;
		br->delivered++;
	}
	return 0;
}
