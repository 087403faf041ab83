/*
 * test_batch.c - stream records to float batches: u8 scaling with MEAN and
 * STD per channel, batches that end where the token count changes or at
 * the asked-for size, the grid read off positions, skipping, bad labels;
 * a model's normalization for a stream that declares none and refusal of
 * another one (batch_open_model); source texts and CLS positions kept per
 * record.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "test.h"

enum {
	NO_NORM = 1,	/* no MEAN and STD */
	SOURCE = 2,	/* field source: "rec R" then R x's */
	NO_POS = 4,	/* no field pos */
	NEWLINE = 8,	/* record 1's source has a newline */
	CLS = 16,	/* field clspos [2]: (r, -r) */
	CLS3 = 32,	/* ... of 3 values */
	CLSNAN = 64,	/* ... NaN in record 2's */
};

/* A stream of n records of 3-channel 1x2 patches (P = 6) on a 2x3 grid,
 * the last ones on a 2x2 grid; label i % 4 (or bad_label at record 2). */
static char *
make(size_t *len, int n, int small_from, int bad_label, int flags)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	struct vt st, *s = &st;

	vt_init(s);
	vt_add_field(s, "patch", VT_U8, 2, (int64_t[]){ VT_ANY, 6 });
	vt_add_field(s, flags & NO_POS ? "where" : "pos", VT_F32, 2,
	    (int64_t[]){ VT_ANY, 2 });
	vt_add_field(s, "label", VT_I32, 0, NULL);
	vt_add_field(s, flags & SOURCE ? "source" : "other", VT_U8, 1,
	    (int64_t[]){ VT_ANY });
	if (flags & (CLS | CLS3 | CLSNAN))
		vt_add_field(s, "clspos", VT_F32, 1, (int64_t[]){ flags & CLS3 ? 3 : 2 });
	if (!(flags & NO_NORM)) {
		vt_meta_set(s, "MEAN", "0.5,0.25,0");
		vt_meta_set(s, "STD", "0.5,0.25,2");
	}
	vt_meta_set(s, "CLASSES", "4");
	vt_write_header(s, fp, "mem");
	for (int r = 0; r < n; r++) {
		int64_t T = r >= small_from ? 4 : 6, W = r >= small_from ? 2 : 3;
		vt_set_shape(s, 0, (int64_t[]){ T, 6 });
		vt_set_shape(s, 1, (int64_t[]){ T, 2 });
		uint8_t *p = s->field[0].data;
		float *q = s->field[1].data;
		for (int64_t i = 0; i < T * 6; i++)
			p[i] = (uint8_t)(r * 10 + i);
		for (int64_t t = 0; t < T; t++) {
			q[2 * t] = (float)(t / W);
			q[2 * t + 1] = (float)(t % W) * 0.5f;
		}
		*(int32_t *)s->field[2].data = r == 2 ? bad_label : r % 4;
		char src[64];
		int len = snprintf(src, sizeof src, "rec %d%s%.*s", r,
		    r == 1 && flags & NEWLINE ? "\n" : " ", r, "xxxxxxxxxxxxxxxx");
		vt_set_shape(s, 3, (int64_t[]){ len });
		memcpy(s->field[3].data, src, (size_t)len);
		if (flags & (CLS | CLSNAN)) {
			float *c = s->field[4].data;
			c[0] = (float)r;
			c[1] = r == 2 && flags & CLSNAN ? NAN : (float)-r;
		}
		vt_write_record(s);
	}
	fclose(fp);
	vt_free(s);
	return buf;
}

/* A stream made by make() and read back. */
struct mem {
	char	*buf;
	FILE	*fp;
	struct vt s;
};

static int
mem_open(struct mem *m, int n, int small_from, int bad_label, int flags)
{
	size_t len;

	m->buf = make(&len, n, small_from, bad_label, flags);
	m->fp = fmemopen(m->buf, len, "rb");
	vt_init(&m->s);
	return vt_read_header(&m->s, m->fp, "mem");
}

static void
mem_close(struct mem *m)
{
	vt_free(&m->s);
	fclose(m->fp);
	free(m->buf);
}

int
main(void)
{
	struct mem m;
	struct vt *s = &m.s;
	struct batch_reader br;
	struct batch b;
	int grid[2];

	CHECK(mem_open(&m, 7, 5, 2, 0) == 0, "header");
	CHECK(batch_open(&br, s, 0, 0, 0, 1) == 0, "batch_open: %s", s->err.msg);
	CHECK(br.P == 6 && br.A == 2 && br.classes == 4 && br.channels == 3,
	    "P 6, A 2, 4 classes, 3 channels from the header");
	CHECK(batch_alloc(&b, &br, 4) == 0, "batch_alloc");
	CHECK(batch_next(&br, &b, 3) == 3 && b.T == 6, "a batch of the 3 asked for");
	/* record 1, value 4 (channel 1): (14/255 - 0.25) / 0.25 */
	CHECK_CLOSE(b.x[6 * 6 + 4], (14 / 255.0 - 0.25) / 0.25, 1e-6, "u8 scaled by MEAN/STD of channel 1");
	CHECK_CLOSE(b.x[6 * 6 + 5], (15 / 255.0 - 0) / 2, 1e-6, "channel 2");
	CHECK_CLOSE(b.x[0], (0 / 255.0 - 0.5) / 0.5, 1e-6, "channel 0");
	CHECK(b.label[1] == 1 && b.label[2] == 2, "labels");
	CHECK(b.pos[6 * 2 + 5] == 1.0f, "positions copied");
	CHECK(batch_grid(&b, grid) == 0 && grid[0] == 2 && grid[1] == 3, "grid 2x3 from positions");
	CHECK(batch_next(&br, &b, 4) == 2 && b.first == 3, "the 2x2 grid ends the batch early");
	CHECK(batch_next(&br, &b, 4) == 2 && b.T == 4, "then the 2 small records");
	CHECK(batch_grid(&b, grid) == 0 && grid[0] == 2 && grid[1] == 2, "grid 2x2");
	CHECK(batch_next(&br, &b, 4) == 0, "end of stream");
	CHECK(batch_source(&b, 0) == NULL, "no field source: no source texts");
	batch_free(&b);
	mem_close(&m);

	/* The source texts of a batch, each its record's, in two batches. */
	mem_open(&m, 7, 5, 2, SOURCE);
	CHECK(batch_open(&br, s, 0, 0, 0, 0) == 0, "batch_open with a source field: %s", s->err.msg);
	batch_alloc(&b, &br, 4);
	int right = 0;
	for (int n, r = 0; (n = batch_next(&br, &b, 4)) > 0; r += n)
		for (int i = 0; i < n; i++) {
			char want[64];
			snprintf(want, sizeof want, "rec %d %.*s", r + i, r + i, "xxxxxxxx");
			right += batch_source(&b, i) && strcmp(batch_source(&b, i), want) == 0;
		}
	CHECK(right == 7, "%d of 7 records with their source text", right);
	batch_free(&b);
	mem_close(&m);
	mem_open(&m, 3, 9, 2, SOURCE | NEWLINE);
	batch_open(&br, s, 0, 0, 0, 0);
	batch_alloc(&b, &br, 4);
	CHECK(batch_next(&br, &b, 4) == -1 && strstr(s->err.msg, "record 2: 'source' holds a NUL or newline"),
	    "a newline in a source text: %s", s->err.msg);
	batch_free(&b);
	mem_close(&m);

	/* A model's normalization: adopted by a stream that declares none,
	 * refused when the stream's differs, accepted when the same values
	 * are written otherwise. */
	struct vt ck;
	vt_init(&ck);
	vt_meta_set(&ck, "MEAN", "0.5,0.25,0");
	vt_meta_set(&ck, "STD", "0.5,0.25,2");
	mem_open(&m, 2, 9, 0, NO_NORM);
	CHECK(batch_open_model(&br, s, &ck, 6, 2, 4, 0) == 0, "no MEAN/STD: %s", s->err.msg);
	batch_alloc(&b, &br, 4);
	CHECK(batch_next(&br, &b, 4) == 2 && fabs(b.x[36 + 4] - (14 / 255.0 - 0.25) / 0.25) < 1e-6 &&
	    fabs(b.x[36 + 5] - 15 / 255.0 / 2) < 1e-6,
	    "no MEAN/STD: the model's normalization, per channel");
	batch_free(&b);
	mem_close(&m);
	mem_open(&m, 2, 9, 0, 0);
	vt_meta_set(&ck, "MEAN", "0.5,0.25,0.0000000001");
	vt_meta_set(&ck, "STD", "0.50,0.25,2e0");
	CHECK(batch_open_model(&br, s, &ck, 6, 2, 4, 0) == 0, "the same MEAN/STD written otherwise: %s",
	    s->err.msg);
	vt_meta_set(&ck, "STD", "0.5");
	CHECK(batch_open_model(&br, s, &ck, 6, 2, 4, 0) == -1 &&
	    strstr(s->err.msg, "mem: MEAN 0.5,0.25,0 STD 0.5,0.25,2 differ from the model's MEAN "
	    "0.5,0.25,0.0000000001 STD 0.5"), "another STD refused: %s", s->err.msg);
	vt_free(&ck);
	vt_init(&ck);
	CHECK(batch_open_model(&br, s, &ck, 6, 2, 4, 0) == -1 &&
	    strstr(s->err.msg, "the model's MEAN 0 STD 1"), "a model without MEAN/STD: 0 and 1: %s",
	    s->err.msg);
	mem_close(&m);
	mem_open(&m, 2, 9, 0, NO_NORM);
	CHECK(batch_open_model(&br, s, &ck, 6, 2, 4, 0) == 0, "neither has MEAN/STD: %s", s->err.msg);
	vt_free(&ck);
	mem_close(&m);

	/* CLS positions, one per record (posgen --offset); NaN and a wrong
	 * size refused */
	mem_open(&m, 3, 9, 0, CLS);
	batch_open(&br, s, 0, 0, 0, 0);
	batch_alloc(&b, &br, 4);
	CHECK(batch_next(&br, &b, 4) == 3 && b.cls != NULL && b.cls[2] == 1 && b.cls[3] == -1 &&
	    b.cls[4] == 2 && b.cls[5] == -2, "clspos: each record's CLS position");
	batch_free(&b);
	mem_close(&m);
	mem_open(&m, 3, 9, 0, CLSNAN);
	batch_open(&br, s, 0, 0, 0, 0);
	batch_alloc(&b, &br, 4);
	CHECK(batch_next(&br, &b, 4) == -1 && strstr(s->err.msg, "record 3: 'clspos' holds NaN"),
	    "a NaN CLS position: %s", s->err.msg);
	batch_free(&b);
	mem_close(&m);
	mem_open(&m, 1, 9, 0, CLS3);
	CHECK(batch_open(&br, s, 0, 0, 0, 0) == -1 && strstr(s->err.msg, "'clspos' must be f32 [2]"),
	    "clspos of 3 values for 2 axes: %s", s->err.msg);
	mem_close(&m);
	mem_open(&m, 1, 9, 0, 0);
	batch_open(&br, s, 0, 0, 0, 0);
	batch_alloc(&b, &br, 4);
	CHECK(batch_next(&br, &b, 4) == 1 && b.cls == NULL, "no clspos: no CLS positions");
	batch_free(&b);
	mem_close(&m);

	mem_open(&m, 1, 9, 0, NO_POS);
	CHECK(batch_open(&br, s, 6, 2, 4, 1) == -1 &&
	    strstr(s->err.msg, "no field 'pos': make positions with posgen"), "no pos: %s", s->err.msg);
	mem_close(&m);

	/* A label out of range, found after skipping two records. */
	mem_open(&m, 4, 9, 4, 0);
	batch_open(&br, s, 6, 2, 0, 1);
	batch_alloc(&b, &br, 4);
	CHECK(batch_skip(&br, 2) == 0 && br.delivered == 2, "skip 2 records");
	CHECK(batch_next(&br, &b, 4) == -1 && strstr(s->err.msg, "record 3: label 4 out of range"),
	    "label 4 of 4 classes: %s", s->err.msg);
	batch_free(&b);
	mem_close(&m);

	/* The model's sizes must match the stream's. */
	mem_open(&m, 1, 9, 0, 0);
	CHECK(batch_open(&br, s, 12, 2, 4, 1) == -1 && strstr(s->err.msg, "6 values, the model takes 12"),
	    "P mismatch: %s", s->err.msg);
	CHECK(batch_open(&br, s, 6, 3, 4, 1) == -1, "axes mismatch: %s", s->err.msg);
	mem_close(&m);
	return test_done();
}
