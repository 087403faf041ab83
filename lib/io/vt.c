/* vt.c - reader and writer of the vitpipe tensor stream (see vt.h, vitpipe(5)). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "atomicfile.h"
#include "vt.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vitpipe streams are little-endian; this host is not (add byte swapping)"
#endif

#define VT_MAXDIM	(1LL << 40)	/* largest single dim accepted */

static const struct {
	const char	*name;
	size_t		 size;
} dtypes[VT_NDTYPE] = {
	[VT_U8] = { "u8", 1 }, [VT_I8] = { "i8", 1 }, [VT_U16] = { "u16", 2 },
	[VT_I32] = { "i32", 4 }, [VT_I64] = { "i64", 8 }, [VT_F32] = { "f32", 4 },
	[VT_F64] = { "f64", 8 },
};

int
vt_error(struct vt *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(&s->err, fmt, ap);
	va_end(ap);
	return err_prefix(&s->err, "%s", s->name ? s->name : "stream");
}

size_t
vt_dtype_size(int dtype)
{
	return dtype >= 0 && dtype < VT_NDTYPE ? dtypes[dtype].size : 0;
}

const char *
vt_dtype_name(int dtype)
{
	return dtype >= 0 && dtype < VT_NDTYPE ? dtypes[dtype].name : "?";
}

int
vt_dtype_parse(const char *name)
{
	for (int i = 0; i < VT_NDTYPE; i++)
		if (strcmp(name, dtypes[i].name) == 0)
			return i;
	return -1;
}

void
vt_init(struct vt *s)
{
	memset(s, 0, sizeof(*s));
	s->align = VT_ALIGN;
	s->records = -1;
	s->maxbytes = VT_MAXRECORD;
}

void
vt_free(struct vt *s)
{
	for (int i = 0; i < s->nfield; i++)
		if (!s->field[i].lent)
			free(s->field[i].data);
	for (int i = 0; i < s->nmeta; i++) {
		free(s->meta[i].key);
		free(s->meta[i].val);
	}
	free(s->field);
	free(s->meta);
	vt_init(s);
}

static size_t
pad(size_t n, int align)
{
	return (align - n % align) % align;
}

/* Element count of shape[rank] times size, or -1 past limit. */
static int64_t
payload_bytes(int rank, const int64_t *shape, size_t size, int64_t limit, int64_t *count)
{
	int64_t c = 1;

	for (int k = 0; k < rank; k++) {
		if (shape[k] < 0 || shape[k] > VT_MAXDIM)
			return -1;
		if (shape[k] != 0 && c > limit / shape[k])
			return -1;
		c *= shape[k];
	}
	if (c > limit / (int64_t)size)
		return -1;
	*count = c;
	return c * (int64_t)size;
}

/* Make room for nbytes at f->data, 64-byte aligned, keeping its first
 * keep bytes. */
static int
reserve(struct vt *s, struct vt_field *f, size_t nbytes, size_t keep)
{
	size_t want = nbytes + pad(nbytes, 64);
	void *p;

	if (want == 0)
		want = 64;
	if (f->skip || (f->data && f->cap >= want))
		return 0;
	if (f->lent)
		return vt_error(s, "field '%s': %zu bytes do not fit the %zu lent", f->name,
		    nbytes, f->cap);
	if ((p = aligned_alloc(64, want)) == NULL)
		return vt_error(s, "field '%s': out of memory for %zu bytes", f->name, nbytes);
	if (keep > 0)
		memcpy(p, f->data, keep);
	free(f->data);
	f->data = p;
	f->cap = want;
	return 0;
}

/*
 * Read f's payload into its buffer, which grows as the bytes arrive (to
 * twice what has come, from 1 MiB) up to the size the header declares: a
 * record that declares more than the input holds takes memory in
 * proportion to the input, and ends as truncated.  0, or -1 short with
 * *got the bytes read.
 */
static int
read_payload(struct vt *s, struct vt_field *f, size_t *got)
{
	size_t n = f->nbytes;

	*got = 0;
	do {
		size_t to = *got < (1 << 19) ? 1 << 20 : 2 * *got;
		if (to > n)
			to = n;
		if (reserve(s, f, to, *got) == -1)
			return -2;
		*got += fread((char *)f->data + *got, 1, to - *got, s->fp);
		if (*got < to)
			return -1;
	} while (*got < n);
	return 0;
}

/* Grow *arr (of *cap elements of size) to hold n; 0 or -1. */
static int
grow(struct vt *s, void *arr, int *cap, int n, size_t size)
{
	void *p;
	int c = *cap ? *cap : 4;

	if (n <= *cap)
		return 0;
	while (c < n)
		c *= 2;
	if ((p = realloc(*(void **)arr, (size_t)c * size)) == NULL)
		return vt_error(s, "out of memory");
	*(void **)arr = p;
	*cap = c;
	return 0;
}

static int shape_field(struct vt *, int, const int64_t *, long long, int);
static int add_field(struct vt *, const char *, int, int, const int64_t *,
    int);
static size_t fixed_bytes(const struct vt *);

static int
valid_name(const char *p, size_t max)
{
	size_t n = 0;

	for (; *p; p++, n++)
		if (!isalnum((unsigned char)*p) && !strchr("_.-:/[]", *p))
			return 0;
	return n > 0 && n <= max;
}

int
vt_add_field(struct vt *s, const char *name, int dtype, int rank, const int64_t *dim)
{
	return add_field(s, name, dtype, rank, dim, 1);
}

int
vt_declare_field(struct vt *s, const char *name, int dtype, int rank, const int64_t *dim)
{
	return add_field(s, name, dtype, rank, dim, 0);
}

/* vt_add_field; its buffer made now (alloc 1: a stream to write) or by the
 * first record read that needs it (0: a header read). */
static int
add_field(struct vt *s, const char *name, int dtype, int rank,
    const int64_t *dim, int alloc)
{
	struct vt_field *f;
	int dyn = 0;

	if (!valid_name(name, VT_MAXNAME))
		return vt_error(s, "bad field name '%.40s'", name);
	if (vt_find(s, name) >= 0)
		return vt_error(s, "field '%s' declared twice", name);
	if (vt_dtype_size(dtype) == 0)
		return vt_error(s, "field '%s': unknown dtype", name);
	if (rank < 0 || rank > VT_MAXRANK)
		return vt_error(s, "field '%s': rank %d is not in 0..%d", name, rank, VT_MAXRANK);
	if (s->nfield >= VT_MAXFIELDS)
		return vt_error(s, "more than %d fields", VT_MAXFIELDS);
	for (int k = 0; k < rank; k++) {
		if (dim[k] == VT_ANY)
			dyn++;
		else if (dim[k] < 0 || dim[k] > VT_MAXDIM)
			return vt_error(s, "field '%s': dim %d (%lld) out of range", name, k,
			    (long long)dim[k]);
	}
	if (s->ndyn + dyn > VT_MAXDYN)
		return vt_error(s, "field '%s': more than %d per-record dims in all", name, VT_MAXDYN);
	if (grow(s, &s->field, &s->fieldcap, s->nfield + 1, sizeof(*s->field)) == -1)
		return -1;
	f = &s->field[s->nfield];
	memset(f, 0, sizeof(*f));
	strcpy(f->name, name);
	f->dtype = dtype;
	f->rank = rank;
	for (int k = 0; k < rank; k++)
		f->dim[k] = f->shape[k] = dim[k];
	s->nfield++;
	s->ndyn += dyn;
	if (dyn == 0 && shape_field(s, s->nfield - 1, dim, 0, alloc) == -1) {
		s->nfield--;
		return -1;
	}
	return s->nfield - 1;
}

int
vt_find(const struct vt *s, const char *name)
{
	for (int i = 0; i < s->nfield; i++)
		if (strcmp(s->field[i].name, name) == 0)
			return i;
	return -1;
}

struct vt_field *
vt_get(struct vt *s, const char *name)
{
	int i = vt_find(s, name);

	return i < 0 ? NULL : &s->field[i];
}

/* Whether field i's dims are all fixed in the header. */
static int
fixed(const struct vt_field *f)
{
	for (int k = 0; k < f->rank; k++)
		if (f->dim[k] == VT_ANY)
			return 0;
	return 1;
}

/* Payload bytes of the record's fields other than i that are already
 * known when i is shaped: those before it (shaped in field order, as the
 * reader does and writers should) and the fixed ones after it. */
static int64_t
other_bytes(const struct vt *s, int i)
{
	int64_t n = 0;

	for (int j = 0; j < s->nfield; j++)
		if (j != i && (j < i || fixed(&s->field[j])))
			n += (int64_t)s->field[j].nbytes;
	return n;
}

/* Set field i's shape; rec names the record in messages (0: the header).
 * The limit s->maxbytes is on the whole record (vitpipe(5)), so what the
 * other fields take is subtracted from what this one may have.  alloc 0:
 * the buffer is left to the read of the payload (read_payload). */
static int
shape_field(struct vt *s, int i, const int64_t *shape, long long rec,
    int alloc)
{
	struct vt_field *f = &s->field[i];
	int64_t bytes, count, others = other_bytes(s, i);
	char where[40] = "";

	if (rec > 0)
		snprintf(where, sizeof(where), "record %lld: ", rec);
	for (int k = 0; k < f->rank; k++)
		if (f->dim[k] != VT_ANY && shape[k] != f->dim[k])
			return vt_error(s, "%sfield '%s': dim %d is %lld, header says %lld", where,
			    f->name, k, (long long)shape[k], (long long)f->dim[k]);
	bytes = others > s->maxbytes ? -1 : payload_bytes(f->rank, shape,
	    vt_dtype_size(f->dtype), s->maxbytes - others, &count);
	if (bytes < 0)
		return vt_error(s, "%sfield '%s': record too large (limit %lld bytes a record)",
		    where, f->name, (long long)s->maxbytes);
	if (f->limit > 0 && (size_t)bytes > f->limit)
		return vt_error(s, "%sfield '%s' is %lld bytes, more than %zu", where, f->name,
		    (long long)bytes, f->limit);
	if (alloc && reserve(s, f, bytes, 0) == -1)
		return -1;
	for (int k = 0; k < f->rank; k++)
		f->shape[k] = shape[k];
	f->count = count;
	f->nbytes = bytes;
	return 0;
}

int
vt_set_shape(struct vt *s, int i, const int64_t *shape)
{
	return shape_field(s, i, shape, (long long)s->recno + 1, 1);
}

void
vt_lend(struct vt *s, int i, void *data)
{
	struct vt_field *f = &s->field[i];

	if (!f->lent)
		free(f->data);
	f->data = data;
	f->cap = f->nbytes;
	f->lent = 1;
}

void
vt_limit(struct vt *s, int i, size_t max)
{
	s->field[i].limit = max;
}

void
vt_skip(struct vt *s, int i)
{
	struct vt_field *f = &s->field[i];

	if (!f->lent)
		free(f->data);
	f->data = NULL;
	f->cap = 0;
	f->lent = 0;
	f->skip = 1;
}

static int
meta_append(struct vt *s, const char *key, const char *val)
{
	struct vt_meta *m;
	size_t line = strlen(key) + strlen(val) + 2;

	/* a reader reads no longer header: memory stops here too (an import's
	 * metadata of millions of lines) */
	if (s->metabytes + line > (size_t)VT_MAXHEADER)
		return vt_error(s, "metadata over %ld bytes: longer than a header may be",
		    VT_MAXHEADER);
	if (grow(s, &s->meta, &s->metacap, s->nmeta + 1, sizeof(*s->meta)) == -1)
		return -1;
	m = &s->meta[s->nmeta];
	if ((m->key = strdup(key)) == NULL || (m->val = strdup(val)) == NULL) {
		free(m->key);
		return vt_error(s, "out of memory");
	}
	s->nmeta++;
	s->metabytes += line;
	return 0;
}

static int
structural(const char *key)
{
	static const char *const keys[] = { "VITPIPE", "BYTEORDER", "ALIGN", "FIELD",
	    "RECORDS", "ENDHDR" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(key, keys[i]) == 0)
			return 1;
	return 0;
}

/* Whether s has a control character (C0 or DEL): none goes into a header
 * written here, whose values (class names, an import's metadata) are
 * printed to terminals. */
static int
has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

static int
check_meta(struct vt *s, const char *key, const char *val)
{
	if (!valid_name(key, 64) || structural(key))
		return vt_error(s, "bad metadata key '%.40s'", key);
	if (val && (has_control(val) || strlen(key) + strlen(val) + 2 > VT_MAXLINE))
		return vt_error(s, "metadata %s: value has a newline or another control "
		    "character, or is too long", key);
	return 0;
}

const char *
vt_meta(const struct vt *s, const char *key)
{
	for (int i = s->nmeta - 1; i >= 0; i--)
		if (strcmp(s->meta[i].key, key) == 0)
			return s->meta[i].val;
	return NULL;
}

int
vt_meta_set(struct vt *s, const char *key, const char *val)
{
	int j = 0;

	if (check_meta(s, key, val) == -1)
		return -1;
	for (int i = 0; i < s->nmeta; i++) {
		if (strcmp(s->meta[i].key, key) == 0) {
			s->metabytes -= strlen(s->meta[i].key) + strlen(s->meta[i].val) + 2;
			free(s->meta[i].key);
			free(s->meta[i].val);
		} else
			s->meta[j++] = s->meta[i];
	}
	s->nmeta = j;
	return val ? vt_meta_add(s, key, val) : 0;
}

int
vt_meta_add(struct vt *s, const char *key, const char *val)
{
	if (check_meta(s, key, val) == -1)
		return -1;
	return meta_append(s, key, val);
}

int
vt_history(struct vt *s, int argc, char *const argv[])
{
	char line[VT_MAXLINE - 16];
	size_t n = 0;

	line[0] = '\0';
	for (int i = 0; i < argc && n + 4 < sizeof(line); i++) {
		const char *a = argv[i];
		int plain = *a != '\0';
		for (const char *p = a; *p; p++)
			if (!isalnum((unsigned char)*p) && !strchr("-_=+.,/:@%", *p))
				plain = 0;
		if (i == 0 && strrchr(a, '/'))
			a = strrchr(a, '/') + 1;
		n += snprintf(line + n, sizeof(line) - n, plain ? "%s%s" : "%s'%s'",
		    i ? " " : "", a);
	}
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = ' ';
	return vt_meta_add(s, "HISTORY", line);
}

int
vt_copy_header(struct vt *dst, const struct vt *src)
{
	dst->align = src->align;
	dst->records = src->records;
	for (int i = 0; i < src->nfield; i++) {
		const struct vt_field *f = &src->field[i];
		if (add_field(dst, f->name, f->dtype, f->rank, f->dim, 0) < 0)
			return -1;
	}
	for (int i = 0; i < src->nmeta; i++)
		if (meta_append(dst, src->meta[i].key, src->meta[i].val) == -1)
			return -1;
	return 0;
}

/*
 * Header reading.  Reads byte by byte through stdio (buffered): no seek, so
 * pipes work, and nothing past the header padding is consumed.
 */

/* Read one line into buf; returns its length, -1 at EOF, -2 if too long. */
static int
read_line(FILE *fp, char *buf, size_t max, size_t *consumed)
{
	size_t n = 0;
	int c;

	while ((c = getc(fp)) != EOF) {
		(*consumed)++;
		if (c == '\n') {
			buf[n] = '\0';
			return (int)n;
		}
		if (n + 1 >= max)
			return -2;
		buf[n++] = (char)c;
	}
	return -1;
}

int
vt_parse_int(const char *str, char **end, int64_t lo, int64_t hi, int64_t *out)
{
	char *e;
	long long v;

	if (!isdigit((unsigned char)str[*str == '-' && lo < 0]))
		return -1;
	errno = 0;
	v = strtoll(str, &e, 10);
	if (errno || (end == NULL && *e) || v < lo || v > hi)
		return -1;
	if (end != NULL)
		*end = e;
	*out = v;
	return 0;
}

static int
parse_field(struct vt *s, char *args, int lineno)
{
	char *name, *dt, *tok, *save;
	int64_t dim[VT_MAXRANK];
	int rank = 0, dtype;

	name = strtok_r(args, " ", &save);
	dt = strtok_r(NULL, " ", &save);
	if (name == NULL || dt == NULL)
		return vt_error(s, "header line %d: FIELD needs a name and a dtype", lineno);
	if ((dtype = vt_dtype_parse(dt)) < 0)
		return vt_error(s, "header line %d: field '%.40s': unknown dtype '%.20s'", lineno,
		    name, dt);
	while ((tok = strtok_r(NULL, " ", &save)) != NULL) {
		if (rank == VT_MAXRANK)
			return vt_error(s, "header line %d: field '%.40s': more than %d dims",
			    lineno, name, VT_MAXRANK);
		if (strcmp(tok, "*") == 0)
			dim[rank++] = VT_ANY;
		else if (vt_parse_int(tok, NULL, 0, VT_MAXDIM, &dim[rank++]) == -1)
			return vt_error(s, "header line %d: field '%.40s': bad dim '%.20s'", lineno,
			    name, tok);
	}
	return add_field(s, name, dtype, rank, dim, 0) < 0 ? -1 : 0;
}

/* More records of no bytes than VT_MAXEMPTY, which readers refuse: a
 * stream of them is work without data. */
static int
too_many_empty(struct vt *s)
{
	if (s->ndyn == 0 && fixed_bytes(s) == 0 && s->records > VT_MAXEMPTY)
		return vt_error(s, "RECORDS %lld of no bytes: more than %lld", (long long)s->records,
		    (long long)VT_MAXEMPTY);
	return 0;
}

int
vt_read_header(struct vt *s, FILE *fp, const char *name)
{
	char line[VT_MAXLINE];
	size_t consumed = 0;
	int n, lineno = 1, have_order = 0, have_align = 0;

	int64_t maxbytes = s->maxbytes;

	vt_free(s);
	s->maxbytes = maxbytes;
	s->fp = fp;
	s->name = name;
	n = read_line(fp, line, sizeof(line), &consumed);
	if (n == -1 && consumed == 0)
		return vt_error(s, "empty input, expected a vitpipe stream");
	if (n < 0 || strncmp(line, "VITPIPE ", 8) != 0)
		return vt_error(s, "not a vitpipe stream (bad magic)");
	if (strcmp(line, VT_MAGIC) != 0)
		return vt_error(s, "unsupported stream version '%.20s' (this reader knows %s)",
		    line + 8, VT_MAGIC);
	for (;;) {
		char *val;

		lineno++;
		if (consumed > (size_t)VT_MAXHEADER)
			return vt_error(s, "header longer than %ld bytes", VT_MAXHEADER);
		n = read_line(fp, line, sizeof(line), &consumed);
		if (n == -1)
			return vt_error(s, "header truncated at line %d (no ENDHDR)", lineno);
		if (n == -2)
			return vt_error(s, "header line %d longer than %d bytes", lineno, VT_MAXLINE);
		if (n == 0 || line[0] == '#')
			continue;
		if (memchr(line, '\0', n))
			return vt_error(s, "header line %d: NUL byte", lineno);
		if (strcmp(line, "ENDHDR") == 0)
			break;
		if ((val = strchr(line, ' ')) == NULL)
			return vt_error(s, "header line %d: '%.40s' has no value", lineno, line);
		*val++ = '\0';
		if (strcmp(line, "BYTEORDER") == 0) {
			if (strcmp(val, "little") != 0)
				return vt_error(s, "header line %d: BYTEORDER %.20s is not supported",
				    lineno, val);
			have_order = 1;
		} else if (strcmp(line, "ALIGN") == 0) {
			int64_t a;
			if (vt_parse_int(val, NULL, 1, VT_MAXALIGN, &a) == -1 || (a & (a - 1)))
				return vt_error(s, "header line %d: ALIGN must be a power of two "
				    "in 1..%d", lineno, VT_MAXALIGN);
			s->align = (int)a;
			have_align = 1;
		} else if (strcmp(line, "RECORDS") == 0) {
			if (vt_parse_int(val, NULL, 0, INT64_MAX / 2, &s->records) == -1)
				return vt_error(s, "header line %d: bad RECORDS '%.20s'", lineno, val);
		} else if (strcmp(line, "FIELD") == 0) {
			if (parse_field(s, val, lineno) == -1)
				return -1;
		} else if (strcmp(line, "VITPIPE") == 0) {
			return vt_error(s, "header line %d: a second magic line", lineno);
		} else if (!valid_name(line, 64)) {
			return vt_error(s, "header line %d: bad key '%.40s'", lineno, line);
		} else if (meta_append(s, line, val) == -1)
			return -1;
	}
	if (!have_order)
		return vt_error(s, "header has no BYTEORDER");
	if (!have_align)
		return vt_error(s, "header has no ALIGN");
	if (s->nfield == 0)
		return vt_error(s, "header declares no FIELD");
	if (too_many_empty(s) == -1)
		return -1;
	for (size_t k = pad(consumed, s->align); k > 0; k--) {
		int c = getc(fp);
		if (c == EOF)
			return vt_error(s, "header padding truncated");
		if (c != '\n')
			return vt_error(s, "header padding is not newlines");
	}
	return 0;
}

/* Read n bytes; 0 ok, -1 short (with *got the count read). */
static int
read_exact(FILE *fp, void *buf, size_t n, size_t *got)
{
	*got = fread(buf, 1, n, fp);
	return *got == n ? 0 : -1;
}

/* Skip n padding bytes, which must be zero. */
static int
skip_pad(struct vt *s, size_t n, const char *what)
{
	unsigned char z[VT_MAXALIGN];
	size_t got;

	if (n == 0)
		return 0;
	if (read_exact(s->fp, z, n, &got) == -1)
		return vt_error(s, "record %lld: %s padding truncated", (long long)s->recno + 1, what);
	for (size_t i = 0; i < n; i++)
		if (z[i] != 0)
			return vt_error(s, "record %lld: %s padding is not zero (misframed stream?)",
			    (long long)s->recno + 1, what);
	return 0;
}

/* Read past n payload bytes in pieces, keeping none; 0, -1 short. */
static int
read_past(FILE *fp, size_t n, size_t *got)
{
	unsigned char buf[1 << 16];

	for (*got = 0; *got < n; ) {
		size_t k = n - *got < sizeof buf ? n - *got : sizeof buf, g;
		int rc = read_exact(fp, buf, k, &g);
		*got += g;
		if (rc == -1)
			return -1;
	}
	return 0;
}

/* Bytes of a record whose fields are all fixed (ndyn == 0). */
static size_t
fixed_bytes(const struct vt *s)
{
	size_t n = 0;

	for (int i = 0; i < s->nfield; i++)
		n += s->field[i].nbytes;
	return n;
}

int
vt_read_record(struct vt *s)
{
	long long rec = (long long)s->recno + 1;
	int c;

	if (s->records >= 0 && s->recno >= s->records) {
		if ((c = getc(s->fp)) != EOF)
			return vt_error(s, "data after the %lld records the header declares",
			    (long long)s->records);
		return 0;
	}
	/* A clean end is EOF exactly at a record boundary.  A record of no
	 * bytes at all (only empty fields) cannot be told from the end: it
	 * exists only where RECORDS says so. */
	if (s->ndyn == 0 && fixed_bytes(s) == 0) {
		if (s->records < 0)
			return 0;
	} else if ((c = getc(s->fp)) == EOF) {
		if (ferror(s->fp))
			return vt_error(s, "record %lld: read error: %s", rec, strerror(errno));
		if (s->records >= 0)
			return vt_error(s, "stream ended after %lld of %lld records",
			    (long long)s->recno, (long long)s->records);
		return 0;
	} else
		ungetc(c, s->fp);
	if (s->ndyn > 0) {
		int64_t dyn[VT_MAXDYN], shape[VT_MAXRANK];
		size_t got, want = (size_t)s->ndyn * 8;
		int j = 0;

		if (read_exact(s->fp, dyn, want, &got) == -1)
			return vt_error(s, "record %lld: shape preamble truncated", rec);
		if (skip_pad(s, pad(want, s->align), "preamble") == -1)
			return -1;
		for (int i = 0; i < s->nfield; i++)	/* the last record's: not this one's */
			if (!fixed(&s->field[i]))
				s->field[i].nbytes = 0;
		for (int i = 0; i < s->nfield; i++) {
			struct vt_field *f = &s->field[i];
			int has = 0;
			for (int k = 0; k < f->rank; k++) {
				shape[k] = f->dim[k];
				if (f->dim[k] == VT_ANY) {
					shape[k] = dyn[j++];
					has = 1;
					if (shape[k] < 0 || shape[k] > VT_MAXDIM)
						return vt_error(s, "record %lld: field '%s': dim %d "
						    "is %lld", rec, f->name, k, (long long)shape[k]);
				}
			}
			if (has && shape_field(s, i, shape, rec, 0) == -1)
				return -1;
		}
	}
	for (int i = 0; i < s->nfield; i++) {
		struct vt_field *f = &s->field[i];
		size_t got;

		int rc;

		if (f->lent && f->nbytes > f->cap)
			return vt_error(s, "record %lld: field '%s': %zu bytes do not fit "
			    "the %zu lent", rec, f->name, f->nbytes, f->cap);
		rc = f->skip ? read_past(s->fp, f->nbytes, &got) : f->lent ?
		    read_exact(s->fp, f->data, f->nbytes, &got) :
		    read_payload(s, f, &got);
		if (rc == -2)
			return -1;
		if (rc == -1)
			return vt_error(s, "record %lld: field '%s' truncated (%zu of %zu bytes)",
			    rec, f->name, got, f->nbytes);
		if (skip_pad(s, pad(f->nbytes, s->align), "field") == -1)
			return -1;
	}
	s->recno++;
	return 1;
}

/*
 * Writing.
 */

static int
put(struct vt *s, const void *buf, size_t n)
{
	if (n && fwrite(buf, 1, n, s->fp) != n)
		return vt_error(s, "write error: %s", strerror(errno));
	return 0;
}

static int
put_pad(struct vt *s, size_t n)
{
	static const unsigned char zero[VT_MAXALIGN];

	return put(s, zero, pad(n, s->align));
}

int
vt_write_header(struct vt *s, FILE *fp, const char *name)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int rc;

	s->fp = fp;
	s->name = name;
	s->recno = 0;
	if (s->nfield == 0)
		return vt_error(s, "no fields to write");
	if (too_many_empty(s) == -1)
		return -1;
	if ((m = open_memstream(&buf, &len)) == NULL)
		return vt_error(s, "out of memory");
	fprintf(m, "%s\nBYTEORDER little\nALIGN %d\n", VT_MAGIC, s->align);
	if (s->records >= 0)
		fprintf(m, "RECORDS %lld\n", (long long)s->records);
	for (int i = 0; i < s->nfield; i++) {
		struct vt_field *f = &s->field[i];
		fprintf(m, "FIELD %s %s", f->name, vt_dtype_name(f->dtype));
		for (int k = 0; k < f->rank; k++)
			if (f->dim[k] == VT_ANY)
				fputs(" *", m);
			else
				fprintf(m, " %lld", (long long)f->dim[k]);
		fputc('\n', m);
	}
	for (int i = 0; i < s->nmeta; i++)
		fprintf(m, "%s %s\n", s->meta[i].key, s->meta[i].val);
	fputs("ENDHDR\n", m);
	for (size_t k = pad(ftell(m), s->align); k > 0; k--)
		fputc('\n', m);
	if (fclose(m) == EOF) {
		free(buf);
		return vt_error(s, "out of memory");
	}
	if (len > (size_t)VT_MAXHEADER) {
		free(buf);
		return vt_error(s, "a header of %zu bytes: longer than %ld", len, VT_MAXHEADER);
	}
	rc = put(s, buf, len);
	free(buf);
	return rc;
}

int
vt_write_record(struct vt *s)
{
	if (s->ndyn > 0) {
		int64_t dyn[VT_MAXDYN];
		int j = 0;

		for (int i = 0; i < s->nfield; i++)
			for (int k = 0; k < s->field[i].rank; k++)
				if (s->field[i].dim[k] == VT_ANY)
					dyn[j++] = s->field[i].shape[k];
		for (int i = 0; i < s->nfield; i++)
			if (s->field[i].data == NULL)
				return vt_error(s, "record %lld: field '%s' has no shape set",
				    (long long)s->recno + 1, s->field[i].name);
		if (put(s, dyn, j * 8) == -1 || put_pad(s, j * 8) == -1)
			return -1;
	}
	for (int i = 0; i < s->nfield; i++) {
		struct vt_field *f = &s->field[i];
		if (put(s, f->data, f->nbytes) == -1 || put_pad(s, f->nbytes) == -1)
			return -1;
	}
	s->recno++;
	return 0;
}

int
vt_load(struct vt *s, const char *path)
{
	return vt_load_with(s, path, NULL, NULL);
}

int
vt_load_with(struct vt *s, const char *path,
    int (*prepare)(struct vt *s, void *arg), void *arg)
{
	FILE *fp;
	int rc;

	vt_init(s);
	s->name = path;
	if ((fp = fopen(path, "rb")) == NULL)
		return vt_error(s, "%s", strerror(errno));
	rc = vt_read_header(s, fp, path);
	if (rc == 0 && prepare != NULL)
		rc = prepare(s, arg);
	if (rc == 0) {
		rc = vt_read_record(s);
		if (rc == 0)
			rc = vt_error(s, "no record (expected a single-record container)");
		else if (rc == 1)
			rc = getc(fp) == EOF ? 0 :
			    vt_error(s, "more than one record (expected a single-record container)");
	}
	fclose(fp);
	s->fp = NULL;
	return rc;
}

int
vt_save(struct vt *s, const char *path)
{
	struct atomicfile a;
	int64_t records = s->records;

	if (atomic_open(&a, path) == -1) {
		s->name = path;
		return vt_error(s, "%s", strerror(errno));
	}
	s->records = 1;
	if (vt_write_header(s, a.fp, path) == -1 || vt_write_record(s) == -1) {
		s->records = records;
		atomic_abort(&a);
		return -1;
	}
	s->records = records;
	s->fp = NULL;
	if (atomic_commit(&a) == -1)
		return vt_error(s, "%s", strerror(errno));
	return 0;
}

int
vt_parse_dims(const char *str, int64_t *g, int max)
{
	int n = 0;

	while (*str) {
		char *end;

		if (n == max || vt_parse_int(str, &end, 1, INT32_MAX, &g[n++]) == -1)
			return -1;
		if (*end == 'x' && end[1])
			end++;
		else if (*end)
			return -1;
		str = end;
	}
	return n ? n : -1;
}

const char *
vt_shape_str(const int64_t *dims, int rank, char *buf, size_t len)
{
	size_t n = snprintf(buf, len, "[");

	for (int k = 0; k < rank && n < len; k++)
		n += dims[k] == VT_ANY ? snprintf(buf + n, len - n, "%s*", k ? "," : "") :
		    snprintf(buf + n, len - n, "%s%lld", k ? "," : "", (long long)dims[k]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
	return buf;
}
