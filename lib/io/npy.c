/*
 * npy.c - NumPy .npy reading and writing (see npy.h).
 *
 * The header is a Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * parsed here by looking up its three keys; anything else in it is ignored.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "atomicfile.h"
#include "npy.h"
#include "vt.h"

#define NPY_MAXHDR	(1L << 20)	/* a sane bound on the dict's length */

/* Map a descr such as "<f4" to a vt dtype and whether to swap bytes. */
static int
parse_descr(const char *d, int *dtype, int *swap)
{
	static const struct { const char *code; int dtype; } map[] = {
		{ "u1", VT_U8 }, { "b1", VT_U8 }, { "i1", VT_I8 }, { "u2", VT_U16 },
		{ "i4", VT_I32 }, { "i8", VT_I64 }, { "f4", VT_F32 }, { "f8", VT_F64 },
	};
	char order = d[0];
	if (order != '<' && order != '>' && order != '|' && order != '=')
		return -1;
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(d + 1, map[i].code) == 0) {
			*dtype = map[i].dtype;
			*swap = order == '>' && vt_dtype_size(*dtype) > 1;
			return 0;
		}
	return -1;
}

/* Pointer just past "'key':" in the dict, or NULL. */
static const char *
find_key(const char *dict, const char *key)
{
	char pat[32];
	snprintf(pat, sizeof pat, "'%s'", key);
	const char *p = strstr(dict, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	while (isspace((unsigned char)*p))
		p++;
	if (*p != ':')
		return NULL;
	p++;
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

static int
parse_dict(struct npy *h, const char *dict, const char *name, struct err *e)
{
	const char *p = find_key(dict, "descr");
	char descr[16];
	size_t n = 0;
	if (!p || *p != '\'')
		return err_set(e, "%s: %s", name, "bad .npy header (no 'descr')");
	for (p++; *p && *p != '\'' && n < sizeof descr - 1; p++)
		descr[n++] = *p;
	descr[n] = 0;
	if (*p != '\'' || parse_descr(descr, &h->dtype, &h->swap) < 0) {
		err_set(e, "%s: unsupported .npy dtype '%s' "
		    "(want u1 i1 u2 i4 i8 f4 f8 or bool)", name, descr);
		return -1;
	}
	h->elsize = vt_dtype_size(h->dtype);
	p = find_key(dict, "fortran_order");
	if (!p || (strncmp(p, "False", 5) && strncmp(p, "True", 4)))
		return err_set(e, "%s: %s", name, "bad .npy header (no 'fortran_order')");
	if (*p == 'T')
		return err_set(e, "%s: %s", name, "Fortran-order .npy arrays are not supported");
	p = find_key(dict, "shape");
	if (!p || *p != '(')
		return err_set(e, "%s: %s", name, "bad .npy header (no 'shape')");
	h->rank = 0;
	h->count = 1;
	/* A Python tuple of plain decimal integers, as NumPy writes and reads
	 * it: "()", "(3,)", "(3, 4)"; "(3)" is an int and "04" no literal. */
	for (p++;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (*p == ')' && h->rank == 0)
			break;
		if (!isdigit((unsigned char)*p) || (p[0] == '0' && isdigit((unsigned char)p[1])))
			return err_set(e, "%s: %s", name, "bad .npy header (shape)");
		if (h->rank == NPY_MAXRANK)
			return err_set(e, "%s: %s", name, "too many dimensions in .npy shape");
		errno = 0;
		char *end;
		long long d = strtoll(p, &end, 10);
		if (errno || d < 0)
			return err_set(e, "%s: %s", name, "bad .npy header (shape)");
		h->shape[h->rank++] = d;
		if (d && h->count > INT64_MAX / d / (int64_t)h->elsize)
			return err_set(e, "%s: %s", name, "absurd .npy shape (size overflows)");
		h->count *= d;
		for (p = end; isspace((unsigned char)*p); p++)
			;
		if (*p == ',') {
			for (p++; isspace((unsigned char)*p); p++)
				;
			if (*p == ')')
				break;
			continue;
		}
		if (*p != ')' || h->rank == 1)
			return err_set(e, "%s: %s", name, "bad .npy header (shape)");
		break;
	}
	return 0;
}

int
npy_read_header(struct npy *h, FILE *fp, const char *name, struct err *e)
{
	unsigned char pre[12];
	memset(h, 0, sizeof *h);
	if (fread(pre, 1, 8, fp) != 8 || memcmp(pre, "\x93NUMPY", 6))
		return err_set(e, "%s: %s", name, "not a .npy file (bad magic)");
	int major = pre[6];
	size_t len;
	if (major == 1) {
		if (fread(pre + 8, 1, 2, fp) != 2)
			return err_set(e, "%s: %s", name, "truncated .npy header");
		len = pre[8] | (size_t)pre[9] << 8;
	} else if (major == 2 || major == 3) {
		if (fread(pre + 8, 1, 4, fp) != 4)
			return err_set(e, "%s: %s", name, "truncated .npy header");
		len = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
	} else
		return err_set(e, "%s: %s", name, "unsupported .npy format version");
	if (len > NPY_MAXHDR)
		return err_set(e, "%s: %s", name, "absurd .npy header length");
	char *dict = malloc(len + 1);
	if (!dict)
		return err_set(e, "%s: %s", name, "out of memory");
	if (fread(dict, 1, len, fp) != len) {
		free(dict);
		return err_set(e, "%s: %s", name, "truncated .npy header");
	}
	dict[len] = 0;
	int rc = parse_dict(h, dict, name, e);
	free(dict);
	h->offset = ftell(fp);
	return rc;
}

static void
swap_bytes(void *buf, int64_t n, size_t size)
{
	unsigned char *b = buf;
	for (int64_t i = 0; i < n; i++, b += size)
		for (size_t j = 0; j < size / 2; j++) {
			unsigned char t = b[j];
			b[j] = b[size - 1 - j];
			b[size - 1 - j] = t;
		}
}

int
npy_read(const struct npy *h, FILE *fp, const char *name, int64_t first,
    int64_t n, void *dst, struct err *e)
{
	if (first < 0 || n < 0 || first > h->count || n > h->count - first)
		return err_set(e, "%s: %s", name, "read past the end of the array");
	long pos = h->offset + (long)(first * (int64_t)h->elsize);
	if (ftell(fp) != pos && fseek(fp, pos, SEEK_SET) != 0)
		return err_set(e, "%s: %s", name, "cannot seek (truncated?)");
	if (fread(dst, h->elsize, (size_t)n, fp) != (size_t)n)
		return err_set(e, "%s: %s", name, ferror(fp) ? "read error" : "truncated .npy data");
	if (h->swap)
		swap_bytes(dst, n, h->elsize);
	return 0;
}

int
npy_load(const char *path, struct npy *h, void **data, struct err *e)
{
	FILE *fp = fopen(path, "rb");
	*data = NULL;
	if (!fp) {
		err_set(e, "%s: %s", path, strerror(errno));
		return -1;
	}
	int rc = npy_read_header(h, fp, path, e);
	if (rc == 0) {
		*data = malloc(h->count ? (size_t)h->count * h->elsize : 1);
		if (!*data)
			rc = err_set(e, "%s: %s", path, "out of memory for the array");
		else if ((rc = npy_read(h, fp, path, 0, h->count, *data, e)) < 0) {
			free(*data);
			*data = NULL;
		}
	}
	fclose(fp);
	return rc;
}

int
npy_write_header(FILE *fp, int dtype, int rank, const int64_t *shape)
{
	static const char *code[VT_NDTYPE] = {
		[VT_U8] = "|u1", [VT_I8] = "|i1", [VT_U16] = "<u2", [VT_I32] = "<i4",
		[VT_I64] = "<i8", [VT_F32] = "<f4", [VT_F64] = "<f8",
	};
	if (dtype < 0 || dtype >= VT_NDTYPE || rank < 0 || rank > NPY_MAXRANK) {
		errno = EINVAL;
		return -1;
	}
	char dict[512];
	int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
	    code[dtype]);
	for (int i = 0; i < rank; i++)
		n += snprintf(dict + n, sizeof dict - n, "%lld%s", (long long)shape[i],
		    rank == 1 || i < rank - 1 ? ", " : "");
	if (rank == 1)
		n -= 1;		/* "(5,)" */
	n += snprintf(dict + n, sizeof dict - n, "), }");
	/* As numpy's np.save, byte for byte: room for the first dim to grow to
	 * 21 digits (so a writer can fix it up in place), then spaces and '\n'
	 * to the next 64-byte boundary (a whole 64 more when already there). */
	if (rank > 0)
		n += snprintf(dict + n, sizeof dict - n, "%*s",
		    21 - snprintf(NULL, 0, "%lld", (long long)shape[0]), "");
	int major = 10 + n + 1 + 64 > 65535 ? 2 : 1;
	int pre = major == 1 ? 10 : 12;
	int len = n + 1 + 64 - (pre + n + 1) % 64;
	unsigned char p[12] = { 0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)major, 0,
		len & 255, (len >> 8) & 255, (len >> 16) & 255, (len >> 24) & 255 };
	if (fwrite(p, 1, pre, fp) != (size_t)pre || fwrite(dict, 1, n, fp) != (size_t)n)
		return -1;
	for (int i = n; i < len - 1; i++)
		if (putc(' ', fp) == EOF)
			return -1;
	return putc('\n', fp) == EOF ? -1 : 0;
}

int
npy_save(const char *path, int dtype, int rank, const int64_t *shape,
    const void *data, struct err *e)
{
	struct atomicfile a;
	int64_t count = 1;
	for (int i = 0; i < rank; i++)
		count *= shape[i];
	if (atomic_open(&a, path) < 0) {
		err_set(e, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (npy_write_header(a.fp, dtype, rank, shape) < 0 ||
	    fwrite(data, vt_dtype_size(dtype), (size_t)count, a.fp) != (size_t)count) {
		err_set(e, "%s: %s", path, strerror(errno));
		atomic_abort(&a);
		return -1;
	}
	if (atomic_commit(&a) < 0) {
		err_set(e, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
