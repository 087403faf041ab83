/* order.c - records in a seeded random order: a shuffle buffer in front
 * of a pipe, or the same draws made over the index of a seekable file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "order.h"

/* A record held in the buffer: each read field's shape, then its bytes. */
struct slot {
	unsigned char	*p;
	size_t		 len, cap;
	int64_t		 recno;		/* its number in the stream, from 1 */
	int64_t		 key;		/* its group's key */
};

/*
 * The buffer holds records of one block and one group: a record of
 * another key (a grid of another size) waits until the buffer is empty,
 * and the block count starts again after block records.  A file's order
 * is these draws made over record numbers (plan), a pipe's over records
 * (draw), so that both come in the same order.
 */
struct order {
	struct rng	 r;
	int64_t		 block;		/* records of a block; -1: one block */
	int		 group;		/* field whose first dim is the key; -1 */
	/* a seekable file: record perm[k] is the k-th delivered */
	int64_t		*off, *key, *perm, n, k;
	/* a pipe: records held in slot[0 .. held), at most cap; pending: one
	   of another key waits in slot[held] */
	struct slot	*slot;
	int64_t		 cap, held, inblock;
	int		 pending, eof;
	size_t		 bytes;		/* held in all */
	int64_t		 last;		/* the last delivered's number, from 1 */
};

/* The group key of the record in s's fields. */
static int64_t
key_of(const struct order *o, const struct vt *s)
{
	return o->group >= 0 ? s->field[o->group].shape[0] : 0;
}

/* Where each record of s starts, and its key, read from here to the end. */
static int
index_file(struct order *o, struct vt *s)
{
	int64_t cap = 0;
	off_t at;
	int rc;

	for (;;) {
		if ((at = ftello(s->fp)) < 0)
			return vt_error(s, "cannot tell where a record starts");
		if ((rc = vt_read_record(s)) <= 0)
			break;
		if (o->n == cap) {
			cap = cap ? 2 * cap : 4096;
			int64_t *p = realloc(o->off, (size_t)cap * sizeof *p);
			int64_t *q = p ? realloc(o->key, (size_t)cap * sizeof *q) : NULL;
			if (p != NULL)
				o->off = p;
			if (q == NULL)
				return vt_error(s, "out of memory for the record index");
			o->key = q;
		}
		o->key[o->n] = key_of(o, s);
		o->off[o->n++] = at;
	}
	s->recno = 0;
	return rc;
}

/* The order of the n indexed records: draw's choices made over their
 * numbers.  A buffer of cap <= 0 holds a whole block, which costs a file
 * nothing and makes each block (of one key) a uniform permutation. */
static int
plan(struct order *o, struct vt *s, int64_t cap)
{
	int64_t *pool, held = 0, next = 0, inblock = 0;

	if (cap <= 0 || cap > o->n)
		cap = o->n ? o->n : 1;
	o->perm = malloc((size_t)(o->n ? o->n : 1) * sizeof *o->perm);
	pool = malloc((size_t)cap * sizeof *pool);
	if (o->perm == NULL || pool == NULL) {
		free(pool);
		return vt_error(s, "out of memory for the record order");
	}
	for (int64_t k = 0; k < o->n; k++) {
		if (held == 0 && inblock == o->block)
			inblock = 0;
		while (next < o->n && held < cap && inblock != o->block &&
		    (held == 0 || o->key[next] == o->key[pool[0]]))
			pool[held++] = next++, inblock++;
		int64_t j = (int64_t)rng_below(&o->r, (uint64_t)held);
		o->perm[k] = pool[j];
		pool[j] = pool[--held];
	}
	free(pool);
	return 0;
}

struct order *
order_open(struct vt *s, const struct rng *r, int64_t block, int64_t buffer, int group)
{
	struct order *o = calloc(1, sizeof *o);
	struct stat st;

	if (o == NULL) {
		vt_error(s, "out of memory");
		return NULL;
	}
	o->r = *r;
	o->block = block > 0 ? block : -1;
	o->group = group;
	if (fstat(fileno(s->fp), &st) == 0 && S_ISREG(st.st_mode) && ftello(s->fp) >= 0) {
		off_t start = ftello(s->fp);
		if (index_file(o, s) < 0 || plan(o, s, buffer) < 0 ||
		    fseeko(s->fp, start, SEEK_SET) != 0) {
			order_free(o);
			return NULL;
		}
		return o;
	}
	o->cap = buffer > 0 ? buffer : ORDER_BUFFER;
	/* one slot more, for a record that waits for its group */
	if ((o->slot = calloc((size_t)o->cap + 1, sizeof *o->slot)) == NULL) {
		vt_error(s, "out of memory for the shuffle buffer");
		free(o);
		return NULL;
	}
	return o;
}

int
order_seeks(const struct order *o)
{
	return o->perm != NULL;
}

/* The record in s's fields into slot q. */
static int
keep(const struct order *o, struct slot *q, struct vt *s)
{
	size_t len = 0;

	for (int i = 0; i < s->nfield; i++)
		if (!s->field[i].skip)
			len += (size_t)s->field[i].rank * sizeof(int64_t) + s->field[i].nbytes;
	if (len > q->cap) {
		unsigned char *p = realloc(q->p, len);
		if (p == NULL)
			return vt_error(s, "out of memory for the shuffle buffer");
		q->p = p;
		q->cap = len;
	}
	q->len = 0;
	for (int i = 0; i < s->nfield; i++) {
		struct vt_field *f = &s->field[i];
		if (f->skip)
			continue;
		memcpy(q->p + q->len, f->shape, (size_t)f->rank * sizeof(int64_t));
		q->len += (size_t)f->rank * sizeof(int64_t);
		memcpy(q->p + q->len, f->data, f->nbytes);
		q->len += f->nbytes;
	}
	q->recno = s->recno;
	q->key = key_of(o, s);
	return 0;
}

/* Slot q's record into s's fields. */
static int
restore(const struct slot *q, struct vt *s)
{
	size_t at = 0;

	for (int i = 0; i < s->nfield; i++) {
		struct vt_field *f = &s->field[i];
		int64_t shape[VT_MAXRANK];
		if (f->skip)
			continue;
		memcpy(shape, q->p + at, (size_t)f->rank * sizeof(int64_t));
		at += (size_t)f->rank * sizeof(int64_t);
		if (vt_set_shape(s, i, shape) < 0)
			return -1;
		memcpy(f->data, q->p + at, f->nbytes);
		at += f->nbytes;
	}
	return 0;
}

/* Draw the next record from the buffer, topped up from the stream within
 * its block and group: an epoch's records are not mixed with the next
 * epoch's, and a bad tail in a later epoch leaves the earlier ones whole. */
static int
draw(struct order *o, struct vt *s)
{
	if (o->held == 0 && o->inblock == o->block)
		o->inblock = 0;
	if (o->held == 0 && o->pending) {
		o->pending = 0;
		o->bytes += o->slot[o->held++].len;
		o->inblock++;
	}
	while (!o->eof && !o->pending && o->held < o->cap && o->inblock != o->block &&
	    (o->held == 0 || o->bytes < ORDER_BUFFER_BYTES)) {
		int rc = vt_read_record(s);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			o->eof = 1;
			break;
		}
		if (keep(o, &o->slot[o->held], s) < 0)
			return -1;
		if (o->held > 0 && o->slot[o->held].key != o->slot[0].key) {
			o->pending = 1;
			break;
		}
		o->bytes += o->slot[o->held++].len;
		o->inblock++;
	}
	if (o->held == 0)
		return 0;
	int64_t j = (int64_t)rng_below(&o->r, (uint64_t)o->held);
	struct slot t = o->slot[j];
	if (restore(&t, s) < 0)
		return -1;
	o->last = t.recno;
	o->bytes -= t.len;
	/* the slots stay a permutation: the drawn one's buffer goes to the
	 * last held place (before a waiting record), for reuse */
	o->slot[j] = o->slot[--o->held];
	o->slot[o->held] = t;
	if (o->pending) {
		struct slot w = o->slot[o->held + 1];
		o->slot[o->held + 1] = o->slot[o->held];
		o->slot[o->held] = w;
	}
	return 1;
}

int
order_next(struct order *o, struct vt *s)
{
	if (o->perm == NULL)
		return draw(o, s);
	if (o->k == o->n)
		return 0;
	if (fseeko(s->fp, o->off[o->perm[o->k]], SEEK_SET) != 0)
		return vt_error(s, "cannot seek to a record");
	s->recno = o->perm[o->k++];	/* messages name the record read */
	o->last = s->recno + 1;
	return vt_read_record(s);
}

int64_t
order_record(const struct order *o)
{
	return o->last;
}

void
order_free(struct order *o)
{
	if (o == NULL)
		return;
	for (int64_t i = 0; o->slot != NULL && i <= o->cap; i++)
		free(o->slot[i].p);
	free(o->slot);
	free(o->off);
	free(o->key);
	free(o->perm);
	free(o);
}
