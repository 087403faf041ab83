/*
 * safetensors.c - safetensors files in and out (safetensors.h).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "safetensors.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data are little-endian; this host is not (add byte swapping)"
#endif

static const struct {
	const char *name;
	int	 size;
} dtypes[ST_NDTYPE] = {
	[ST_BOOL] = { "BOOL", 1 }, [ST_U8] = { "U8", 1 }, [ST_I8] = { "I8", 1 },
	[ST_F8_E5M2] = { "F8_E5M2", 1 }, [ST_F8_E4M3] = { "F8_E4M3", 1 },
	[ST_I16] = { "I16", 2 }, [ST_U16] = { "U16", 2 }, [ST_F16] = { "F16", 2 },
	[ST_BF16] = { "BF16", 2 }, [ST_I32] = { "I32", 4 }, [ST_U32] = { "U32", 4 },
	[ST_F32] = { "F32", 4 }, [ST_F64] = { "F64", 8 }, [ST_I64] = { "I64", 8 },
	[ST_U64] = { "U64", 8 },
};

int
st_error(struct st *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(&s->err, fmt, ap);
	va_end(ap);
	return err_prefix(&s->err, "%s", s->name ? s->name : "safetensors");
}

void
st_init(struct st *s)
{
	memset(s, 0, sizeof *s);
}

void
st_free(struct st *s)
{
	for (int i = 0; i < s->ntensor; i++) {
		free(s->tensor[i].name);
		if (s->tensor[i].owned)
			free((void *)s->tensor[i].data);
	}
	for (int i = 0; i < s->nmeta; i++) {
		free(s->meta[i].key);
		free(s->meta[i].val);
	}
	free(s->tensor);
	free(s->meta);
	st_init(s);
}

const char *
st_dtype_name(int dtype)
{
	return dtype >= 0 && dtype < ST_NDTYPE ? dtypes[dtype].name : "?";
}

const struct st_tensor *
st_find(const struct st *s, const char *name)
{
	for (int i = 0; i < s->ntensor; i++)
		if (strcmp(s->tensor[i].name, name) == 0)
			return &s->tensor[i];
	return NULL;
}

const char *
st_meta(const struct st *s, const char *key)
{
	for (int i = 0; i < s->nmeta; i++)
		if (strcmp(s->meta[i].key, key) == 0)
			return s->meta[i].val;
	return NULL;
}

/* A new tensor entry named name, zeroed; NULL when out of memory. */
static struct st_tensor *
new_tensor(struct st *s, const char *name)
{
	if (s->ntensor == s->tcap) {
		int cap = s->tcap ? 2 * s->tcap : 64;
		void *p = realloc(s->tensor, sizeof *s->tensor * cap);
		if (p == NULL)
			return NULL;
		s->tensor = p;
		s->tcap = cap;
	}
	struct st_tensor *t = &s->tensor[s->ntensor];
	memset(t, 0, sizeof *t);
	if ((t->name = strdup(name)) == NULL)
		return NULL;
	s->ntensor++;
	return t;
}

int
st_meta_add(struct st *s, const char *key, const char *val)
{
	if (s->nmeta == s->mcap) {
		int cap = s->mcap ? 2 * s->mcap : 16;
		void *p = realloc(s->meta, sizeof *s->meta * cap);
		if (p == NULL)
			return st_error(s, "out of memory");
		s->meta = p;
		s->mcap = cap;
	}
	struct st_meta *m = &s->meta[s->nmeta];
	m->key = strdup(key);
	m->val = strdup(val);
	if (m->key == NULL || m->val == NULL) {
		free(m->key);
		free(m->val);
		return st_error(s, "out of memory");
	}
	s->nmeta++;
	return 0;
}

static int
by_string(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names at base (n of them, each the first member of a struct of size
 * bytes) unique, checked by sorting, not pairwise: a header of 100 MB has
 * millions.  0, or -1 naming the first repeated one as what. */
static int
unique_names(struct st *s, const void *base, int n, size_t size, const char *what)
{
	const char **name = malloc(sizeof *name * (n ? n : 1));
	int rc = 0;

	if (name == NULL)
		return st_error(s, "out of memory");
	for (int i = 0; i < n; i++)
		name[i] = *(char *const *)((const char *)base + (size_t)i * size);
	qsort(name, n, sizeof *name, by_string);
	for (int i = 1; i < n && rc == 0; i++)
		if (strcmp(name[i - 1], name[i]) == 0)
			rc = st_error(s, "%s '%s' twice", what, name[i]);
	free(name);
	return rc;
}

/* ---- reading ---- */

/* The header's text and a cursor over it, for messages with the byte. */
struct hdr {
	struct st *s;
	struct json j;
	const char *text;
	char	*buf;			/* scratch for strings: as long as the text */
	size_t	 buflen;
};

static int
bad_json(struct hdr *h)
{
	return st_error(h->s, "header byte %ld: %s", (long)(h->j.p - h->text), h->j.err.msg);
}

/* A whole number in 0 .. 2^53 (doubles hold them exactly). */
static int
read_uint(struct hdr *h, const char *what, uint64_t *v)
{
	double d;

	if (json_number(&h->j, &d) < 0)
		return bad_json(h);
	if (!(d >= 0 && d <= 9007199254740992.0) || d != (double)(uint64_t)d)
		return st_error(h->s, "%s: %g is not a whole number of 0 .. 2^53", what, d);
	*v = (uint64_t)d;
	return 0;
}

/* "__metadata__": an object of strings. */
static int
read_metadata(struct hdr *h)
{
	int more;

	for (more = json_begin(&h->j, '{'); more == 1; more = json_next(&h->j, '}')) {
		char *key;

		if (json_string(&h->j, h->buf, h->buflen) < 0 || json_expect(&h->j, ':') < 0)
			return bad_json(h);
		if ((key = strdup(h->buf)) == NULL)
			return st_error(h->s, "out of memory");
		if (json_peek(&h->j) != '"') {
			st_error(h->s, "%s: '%s' is not a string (the format's metadata are "
			    "strings)", ST_METADATA, key);
			free(key);
			return -1;
		}
		int rc = json_string(&h->j, h->buf, h->buflen) < 0 ? bad_json(h) :
		    st_meta_add(h->s, key, h->buf);
		free(key);
		if (rc < 0)
			return -1;
	}
	if (more < 0)
		return bad_json(h);
	return unique_names(h->s, h->s->meta, h->s->nmeta, sizeof *h->s->meta,
	    ST_METADATA ": metadata key");
}

/* One tensor's entry {"dtype": .., "shape": [..], "data_offsets": [b, e]}
 * into t; its sizes are checked against the buffer's length. */
static int
read_entry(struct hdr *h, struct st_tensor *t)
{
	struct st *s = h->s;
	int more, seen = 0;
	uint64_t size = 0;

	for (more = json_begin(&h->j, '{'); more == 1; more = json_next(&h->j, '}')) {
		char key[16];
		int k;

		if (json_string(&h->j, key, sizeof key) < 0 || json_expect(&h->j, ':') < 0)
			return bad_json(h);
		if (strcmp(key, "dtype") == 0) {
			if (json_string(&h->j, key, sizeof key) < 0)
				return bad_json(h);
			for (t->dtype = 0; t->dtype < ST_NDTYPE; t->dtype++)
				if (strcmp(key, dtypes[t->dtype].name) == 0)
					break;
			if (t->dtype == ST_NDTYPE)
				return st_error(s, "tensor '%s': unknown dtype '%s'", t->name, key);
			k = 1;
		} else if (strcmp(key, "shape") == 0) {
			int dim;
			for (dim = json_begin(&h->j, '['); dim == 1; dim = json_next(&h->j, ']')) {
				uint64_t d;
				if (t->rank == ST_MAXRANK)
					return st_error(s, "tensor '%s': more than %d dims", t->name,
					    ST_MAXRANK);
				if (read_uint(h, t->name, &d) < 0)
					return -1;
				t->shape[t->rank++] = (int64_t)d;
			}
			if (dim < 0)
				return bad_json(h);
			k = 2;
		} else if (strcmp(key, "data_offsets") == 0) {
			if (json_expect(&h->j, '[') < 0)
				return bad_json(h);
			if (read_uint(h, t->name, &t->begin) < 0)
				return -1;
			if (json_expect(&h->j, ',') < 0)
				return bad_json(h);
			if (read_uint(h, t->name, &t->end) < 0)
				return -1;
			if (json_expect(&h->j, ']') < 0)
				return bad_json(h);
			k = 4;
		} else {
			if (json_skip(&h->j) < 0)
				return bad_json(h);
			continue;
		}
		if (seen & k)
			return st_error(s, "tensor '%s': '%s' twice", t->name, key);
		seen |= k;
	}
	if (more < 0)
		return bad_json(h);
	if (seen != 7)
		return st_error(s, "tensor '%s': wants dtype, shape and data_offsets", t->name);
	/* Its bytes, bounded by the buffer's at every step: no overflow. */
	size = dtypes[t->dtype].size;
	t->count = 1;
	for (int k = 0; k < t->rank; k++) {
		uint64_t d = (uint64_t)t->shape[k];
		if (d != 0 && size > s->data_len / d)
			return st_error(s, "tensor '%s': its shape needs more bytes than the file's "
			    "%llu of data", t->name, (unsigned long long)s->data_len);
		size *= d;
		t->count *= (int64_t)d;
	}
	if (t->begin > t->end || t->end > s->data_len)
		return st_error(s, "tensor '%s': data_offsets [%llu, %llu] outside the %llu bytes "
		    "of data", t->name, (unsigned long long)t->begin,
		    (unsigned long long)t->end, (unsigned long long)s->data_len);
	if (t->end - t->begin != size)
		return st_error(s, "tensor '%s': its dtype %s and shape make %llu bytes, its "
		    "data_offsets span %llu", t->name, dtypes[t->dtype].name,
		    (unsigned long long)size, (unsigned long long)(t->end - t->begin));
	return 0;
}

static int
by_offset(const void *a, const void *b)
{
	const struct st_tensor *x = *(struct st_tensor *const *)a, *y = *(struct st_tensor *const *)b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Names unique; the spans, in order, tile [0, data_len) (an empty one
 * where the one before it ends, as the reference reader has it). */
static int
check_layout(struct st *s)
{
	struct st_tensor **ord;
	uint64_t at = 0;
	int rc = 0;

	if (s->ntensor == 0)
		return s->data_len == 0 ? 0 :
		    st_error(s, "%llu bytes of data, but no tensor", (unsigned long long)s->data_len);
	if (unique_names(s, s->tensor, s->ntensor, sizeof *s->tensor, "tensor") < 0)
		return -1;
	if ((ord = malloc(sizeof *ord * s->ntensor)) == NULL)
		return st_error(s, "out of memory");
	for (int i = 0; i < s->ntensor; i++)
		ord[i] = &s->tensor[i];
	qsort(ord, s->ntensor, sizeof *ord, by_offset);
	for (int i = 0; i < s->ntensor && rc == 0; i++) {
		if (ord[i]->begin != at)
			rc = st_error(s, "tensor '%s': data_offsets [%llu, %llu] %s the tensors "
			    "before it end (%llu): the data must be covered exactly, without holes "
			    "or overlaps", ord[i]->name, (unsigned long long)ord[i]->begin,
			    (unsigned long long)ord[i]->end, ord[i]->begin > at ? "leave a hole "
			    "after where" : "overlap where", (unsigned long long)at);
		at = ord[i]->end;
	}
	if (rc == 0 && at != s->data_len)
		rc = st_error(s, "the tensors end at byte %llu of the data, the file at %llu: the "
		    "data must be covered exactly", (unsigned long long)at,
		    (unsigned long long)s->data_len);
	free(ord);
	return rc;
}

int
st_read_header(struct st *s, FILE *fp, const char *name, uint64_t size)
{
	unsigned char len8[8];
	uint64_t n = 0;
	struct hdr h = { .s = s };
	char *text;
	int more, rc = -1, seen_meta = 0;

	st_init(s);
	s->fp = fp;
	s->name = name;
	if (size < 8 || fread(len8, 1, 8, fp) != 8)
		return st_error(s, "shorter than the 8-byte header length: not a safetensors file");
	for (int i = 7; i >= 0; i--)
		n = n << 8 | len8[i];
	if (n > size - 8)
		return st_error(s, "header length %llu, but the file has %llu bytes after it: "
		    "not a safetensors file, or truncated", (unsigned long long)n,
		    (unsigned long long)(size - 8));
	if (n > ST_MAXHEADER)
		return st_error(s, "header length %llu is over the format's %ld bytes",
		    (unsigned long long)n, ST_MAXHEADER);
	s->data_at = 8 + n;
	s->data_len = size - 8 - n;
	if ((text = malloc(n + 1)) == NULL || (h.buf = malloc(n + 1)) == NULL) {
		free(text);
		return st_error(s, "out of memory");
	}
	if (fread(text, 1, n, fp) != n) {
		st_error(s, "header: %s", ferror(fp) ? "read error" : "truncated");
		goto out;
	}
	text[n] = '\0';
	if (memchr(text, '\0', n) != NULL) {
		st_error(s, "a NUL byte in the header: not a safetensors file");
		goto out;
	}
	if (n == 0 || text[0] != '{') {
		st_error(s, "the header does not start with '{': not a safetensors file");
		goto out;
	}
	h.text = text;
	h.buflen = n + 1;
	h.j = (struct json){ .p = text, .end = text + n };
	for (more = json_begin(&h.j, '{'); more == 1; more = json_next(&h.j, '}')) {
		struct st_tensor *t;

		if (json_string(&h.j, h.buf, h.buflen) < 0 || json_expect(&h.j, ':') < 0) {
			bad_json(&h);
			goto out;
		}
		if (strcmp(h.buf, ST_METADATA) == 0) {
			if (seen_meta++) {
				st_error(s, "%s twice", ST_METADATA);
				goto out;
			}
			if (read_metadata(&h) < 0)
				goto out;
			continue;
		}
		if (strlen(h.buf) > ST_MAXNAME) {
			st_error(s, "a tensor name longer than %d bytes", ST_MAXNAME);
			goto out;
		}
		if ((t = new_tensor(s, h.buf)) == NULL) {
			st_error(s, "out of memory");
			goto out;
		}
		if (read_entry(&h, t) < 0)
			goto out;
	}
	if (more < 0) {
		bad_json(&h);
		goto out;
	}
	if (json_peek(&h.j) != 0) {
		st_error(s, "header byte %ld: text after the object", (long)(h.j.p - text));
		goto out;
	}
	rc = check_layout(s);
out:
	free(text);
	free(h.buf);
	return rc;
}

/* IEEE half to float, subnormals, infinities and NaN included. */
static float
half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, e = h >> 10 & 0x1f, m = h & 0x3ff, u;
	float f;

	if (e == 0x1f)
		u = sign | 0x7f800000 | m << 13;
	else if (e != 0)
		u = sign | (e + 112) << 23 | m << 13;
	else if (m == 0)
		u = sign;
	else {
		/* m 2^-24: normalize, one exponent step per shift */
		for (e = 113; !(m & 0x400); e--)
			m <<= 1;
		u = sign | e << 23 | (m & 0x3ff) << 13;
	}
	memcpy(&f, &u, sizeof f);
	return f;
}

/* Whether the values v of t, read as floats, are all finite: weights
 * are, and a NaN (or an F64 beyond a float) would make every output NaN. */
static int
all_finite(struct st *s, const struct st_tensor *t, const float *v)
{
	for (int64_t i = 0; i < t->count; i++)
		if (!isfinite(v[i]))
			return st_error(s, "tensor '%s': element %lld is %g%s", t->name, (long long)i,
			    isnan(v[i]) ? NAN : v[i], t->dtype == ST_F64 && isinf(v[i]) ?
			    " as a float" : "");
	return 0;
}

int
st_read_f32(struct st *s, const struct st_tensor *t, float *dst)
{
	unsigned char buf[1 << 16];
	int esize = dtypes[t->dtype].size;
	int64_t done = 0, chunk = (int64_t)sizeof buf / esize;

	if (t->dtype != ST_F32 && t->dtype != ST_F16 && t->dtype != ST_BF16 &&
	    t->dtype != ST_F64)
		return st_error(s, "tensor '%s': dtype %s, not a floating type (F32, F16, BF16, "
		    "F64)", t->name, dtypes[t->dtype].name);
	if (fseeko(s->fp, (off_t)(s->data_at + t->begin), SEEK_SET) < 0)
		return st_error(s, "tensor '%s': cannot seek", t->name);
	if (t->dtype == ST_F32) {
		if (fread(dst, sizeof *dst, (size_t)t->count, s->fp) != (size_t)t->count)
			return st_error(s, "tensor '%s': %s", t->name, ferror(s->fp) ? "read error" :
			    "truncated");
		return all_finite(s, t, dst);
	}
	while (done < t->count) {
		int64_t n = t->count - done < chunk ? t->count - done : chunk;

		if (fread(buf, (size_t)esize, (size_t)n, s->fp) != (size_t)n)
			return st_error(s, "tensor '%s': %s", t->name, ferror(s->fp) ? "read error" :
			    "truncated");
		for (int64_t i = 0; i < n; i++) {
			uint16_t h;
			uint32_t u;
			double d;

			switch (t->dtype) {
			case ST_F16:
				memcpy(&h, buf + 2 * i, 2);
				dst[done + i] = half_to_float(h);
				break;
			case ST_BF16:
				memcpy(&h, buf + 2 * i, 2);
				u = (uint32_t)h << 16;
				memcpy(&dst[done + i], &u, 4);
				break;
			default:
				memcpy(&d, buf + 8 * i, 8);
				dst[done + i] = (float)d;
			}
		}
		done += n;
	}
	return all_finite(s, t, dst);
}

/* ---- writing ---- */

int
st_add_f32(struct st *s, const char *name, int rank, const int64_t *shape,
    const float *data, int owned)
{
	struct st_tensor *t;

	if (rank < 0 || rank > ST_MAXRANK)
		return st_error(s, "tensor '%s': rank %d", name, rank);
	if (st_find(s, name) != NULL)
		return st_error(s, "tensor '%s' twice", name);
	if ((t = new_tensor(s, name)) == NULL)
		return st_error(s, "out of memory");
	t->dtype = ST_F32;
	t->rank = rank;
	t->count = 1;
	for (int k = 0; k < rank; k++) {
		t->shape[k] = shape[k];
		t->count *= shape[k];
	}
	t->data = data;
	t->owned = owned;
	return 0;
}

int
st_write(struct st *s, FILE *fp, const char *name)
{
	char *json = NULL;
	size_t len = 0;
	uint64_t at = 0;
	unsigned char len8[8];
	FILE *m = open_memstream(&json, &len);

	s->name = name;
	if (m == NULL)
		return st_error(s, "out of memory");
	if (unique_names(s, s->meta, s->nmeta, sizeof *s->meta, ST_METADATA ": metadata key") < 0) {
		fclose(m);
		free(json);
		return -1;
	}
	putc('{', m);
	if (s->nmeta > 0) {
		json_put_string(m, ST_METADATA);
		fputs(":{", m);
		for (int i = 0; i < s->nmeta; i++) {
			if (i)
				putc(',', m);
			json_put_string(m, s->meta[i].key);
			putc(':', m);
			json_put_string(m, s->meta[i].val);
		}
		putc('}', m);
	}
	for (int i = 0; i < s->ntensor; i++) {
		struct st_tensor *t = &s->tensor[i];

		t->begin = at;
		t->end = at += (uint64_t)t->count * dtypes[t->dtype].size;
		if (i || s->nmeta > 0)
			putc(',', m);
		json_put_string(m, t->name);
		fprintf(m, ":{\"dtype\":\"%s\",\"shape\":[", dtypes[t->dtype].name);
		for (int k = 0; k < t->rank; k++)
			fprintf(m, "%s%lld", k ? "," : "", (long long)t->shape[k]);
		fprintf(m, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)t->begin,
		    (unsigned long long)t->end);
	}
	putc('}', m);
	/* Spaces to a multiple of 8: the data start aligned. */
	while (ftell(m) % 8 != 0)
		putc(' ', m);
	if (fclose(m) != 0) {
		free(json);
		return st_error(s, "out of memory");
	}
	for (int i = 0; i < 8; i++)
		len8[i] = (unsigned char)((uint64_t)len >> 8 * i);
	int ok = fwrite(len8, 1, 8, fp) == 8 && fwrite(json, 1, len, fp) == len;
	free(json);
	for (int i = 0; ok && i < s->ntensor; i++) {
		const struct st_tensor *t = &s->tensor[i];
		ok = fwrite(t->data, sizeof(float), (size_t)t->count, fp) == (size_t)t->count;
	}
	return ok ? 0 : st_error(s, "write error: %s", strerror(errno));
}
