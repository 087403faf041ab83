/*
 * vtjson.c - header.json written from a stream's header and read back
 * into one (vtjson.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "vtjson.h"

/* The reader's state: the text for messages, the header being filled. */
struct rd {
	struct json j;
	const char *text;
	struct vt *h;
};

/* The JSON cursor's own error. */
static int
bad_json(struct rd *r)
{
	return err_set(&r->h->err, "%s", r->j.err.msg);
}

/* A field's "dims": [16, "*", ...] into dims; their count, or -1. */
static int
read_dims(struct rd *r, const char *name, int64_t *dims)
{
	int rank = 0, more;

	for (more = json_begin(&r->j, '['); more == 1; more = json_next(&r->j, ']')) {
		char star[2];
		double v;

		if (rank == VT_MAXRANK)
			return err_set(&r->h->err, "field '%s': more than %d dims", name, VT_MAXRANK);
		if (json_peek(&r->j) == '"') {
			if (json_string(&r->j, star, sizeof star) < 0 || strcmp(star, "*"))
				return err_set(&r->h->err, "field '%s': a dim is a number or \"*\"", name);
			dims[rank++] = VT_ANY;
		} else if (json_number(&r->j, &v) < 0)
			return bad_json(r);
		else if (!(v >= 0 && v <= (double)INT64_MAX / 2) || v != (double)(int64_t)v)
			return err_set(&r->h->err, "field '%s': bad dim %g", name, v);
		else
			dims[rank++] = (int64_t)v;
	}
	return more < 0 ? bad_json(r) : rank;
}

/* A field ({"dtype": "u8", "dims": ["*", 16]}) into the header. */
static int
read_field(struct rd *r, const char *name)
{
	char key[32], dt[32] = "";
	int64_t dims[VT_MAXRANK];
	int rank = 0, more;

	for (more = json_begin(&r->j, '{'); more == 1; more = json_next(&r->j, '}')) {
		if (json_string(&r->j, key, sizeof key) < 0 || json_expect(&r->j, ':') < 0)
			return bad_json(r);
		if (strcmp(key, "dtype") == 0) {
			if (json_string(&r->j, dt, sizeof dt) < 0)
				return bad_json(r);
		} else if (strcmp(key, "dims") == 0) {
			if ((rank = read_dims(r, name, dims)) < 0)
				return -1;
		} else if (json_skip(&r->j) < 0)
			return bad_json(r);
	}
	if (more < 0)
		return bad_json(r);
	/* declared, not given a buffer: the header is a description, and its
	 * dims (up to a record's 4 GiB) the file's say */
	if (vt_declare_field(r->h, name, vt_dtype_parse(dt), rank, dims) < 0)
		return -1;
	return 0;
}

/* "fields": {NAME: FIELD, ...}, or "meta": [[KEY, VALUE], ...]. */
static int
read_list(struct rd *r, int fields)
{
	char key[VT_MAXLINE], val[VT_MAXLINE];
	int more;

	for (more = json_begin(&r->j, fields ? '{' : '['); more == 1;
	    more = json_next(&r->j, fields ? '}' : ']')) {
		if (fields) {
			if (json_string(&r->j, key, sizeof key) < 0 ||
			    json_expect(&r->j, ':') < 0)
				return bad_json(r);
			if (read_field(r, key) < 0)
				return -1;
			continue;
		}
		if (json_expect(&r->j, '[') < 0 || json_string(&r->j, key, sizeof key) < 0 ||
		    json_expect(&r->j, ',') < 0 || json_string(&r->j, val, sizeof val) < 0 ||
		    json_expect(&r->j, ']') < 0)
			return bad_json(r);
		if (vt_meta_add(r->h, key, val) < 0)
			return -1;
	}
	return more < 0 ? bad_json(r) : 0;
}

/* header.json's object into r->h (vt_json_read): 0, or -1 with r->h's
 * error, which vt_json_read says the byte of. */
static int
read_object(struct rd *r)
{
	struct vt *h = r->h;
	char name[VT_MAXLINE];
	int more;

	for (more = json_begin(&r->j, '{'); more == 1; more = json_next(&r->j, '}')) {
		double v;

		if (json_string(&r->j, name, sizeof name) < 0 || json_expect(&r->j, ':') < 0)
			return bad_json(r);
		if (strcmp(name, "align") == 0) {
			if (json_number(&r->j, &v) < 0)
				return bad_json(r);
			/* in range before any conversion: 1e300 and NaN too */
			if (!(v >= 1 && v <= VT_MAXALIGN) || v != (int)v || ((int)v & ((int)v - 1)))
				return err_set(&h->err, "align %g is not a power of two up to %d",
				    v, VT_MAXALIGN);
			h->align = (int)v;
		} else if (strcmp(name, "fields") == 0 || strcmp(name, "meta") == 0) {
			if (read_list(r, name[0] == 'f') < 0)
				return -1;
		} else if (json_skip(&r->j) < 0)
			return bad_json(r);
	}
	if (more < 0)
		return bad_json(r);
	if (json_peek(&r->j) != 0)
		return err_set(&h->err, "text after the object");
	return 0;
}

int
vt_json_read(struct vt *h, const char *text, size_t len)
{
	struct rd r = { .j = { .p = text, .end = text + len }, .text = text, .h = h };

	vt_init(h);
	h->align = 0;
	if (read_object(&r) < 0)	/* the byte where reading stopped */
		return err_prefix(&h->err, "byte %ld", (long)(r.j.p - text));
	return 0;
}

int
vt_json_write(FILE *fp, const struct vt *s)
{
	fprintf(fp, "{\"align\": %d,\n \"fields\": {", s->align);
	for (int i = 0; i < s->nfield; i++) {
		const struct vt_field *f = &s->field[i];
		fprintf(fp, "%s\n  ", i ? "," : "");
		json_put_string(fp, f->name);
		fprintf(fp, ": {\"dtype\": \"%s\", \"dims\": [", vt_dtype_name(f->dtype));
		for (int k = 0; k < f->rank; k++)
			fprintf(fp, f->dim[k] == VT_ANY ? "%s\"*\"" : "%s%lld", k ? ", " : "",
			    (long long)f->dim[k]);
		fprintf(fp, "]}");
	}
	fprintf(fp, "},\n \"meta\": [");
	for (int i = 0; i < s->nmeta; i++) {
		fprintf(fp, "%s\n  [", i ? "," : "");
		json_put_string(fp, s->meta[i].key);
		fprintf(fp, ", ");
		json_put_string(fp, s->meta[i].val);
		fprintf(fp, "]");
	}
	fprintf(fp, "]}\n");
	return ferror(fp) ? -1 : 0;
}

int
vt_json_load(const char *path, struct vt *h, int missing_ok, struct err *e)
{
	FILE *fp = fopen(path, "rb");
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	int rc;

	if (fp == NULL && errno == ENOENT && missing_ok)
		return 1;
	if (fp == NULL)
		return err_set(e, "%s: %s", path, strerror(errno));
	do {
		if (len > VT_MAXHEADER * 2) {
			rc = err_set(e, "%s: longer than %ld bytes", path, VT_MAXHEADER * 2);
			goto out;
		}
		if (len + 65537 > cap) {	/* doubled: no copy per 64 KiB */
			char *t = realloc(text, cap = 2 * (len + 65537));
			if (t == NULL) {
				rc = err_set(e, "out of memory");
				goto out;
			}
			text = t;
		}
		len += n = fread(text + len, 1, 65536, fp);
	} while (n > 0);
	if (ferror(fp)) {
		rc = err_set(e, "%s: %s", path, strerror(errno));
		goto out;
	}
	text[len] = '\0';
	if ((rc = vt_json_read(h, text, len)) < 0)
		err_set(e, "%s: %s", path, h->err.msg);
	else
		h->name = path;
out:
	free(text);
	fclose(fp);
	return rc;
}
