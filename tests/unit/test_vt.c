/* test_vt.c - the stream reader and writer: round trips and malformed input. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "vt.h"

/* Bytes of a whole stream held in memory. */
struct buf {
	char	*p;
	size_t	 n;
};

static int64_t dims1[1] = { VT_ANY }, dims2[2] = { VT_ANY, 3 };

/* Fill field i of s with a pattern that depends on rec and the element. */
static void
fill(struct vt *s, int i, int rec)
{
	struct vt_field *f = &s->field[i];

	for (int64_t e = 0; e < f->count; e++) {
		double v = rec * 1000 + e * 3 + i;
		switch (f->dtype) {
		case VT_U8: ((uint8_t *)f->data)[e] = (uint8_t)v; break;
		case VT_I8: ((int8_t *)f->data)[e] = (int8_t)(-(int)v); break;
		case VT_U16: ((uint16_t *)f->data)[e] = (uint16_t)v; break;
		case VT_I32: ((int32_t *)f->data)[e] = -(int32_t)v; break;
		case VT_I64: ((int64_t *)f->data)[e] = (int64_t)v << 33; break;
		case VT_F32: ((float *)f->data)[e] = (float)(v * 0.5); break;
		case VT_F64: ((double *)f->data)[e] = v / 7.0; break;
		}
	}
}

/* Write nrec records with every dtype, per-record dims varying with the record. */
static struct buf
make_stream(int nrec, int align, int declare)
{
	struct buf b = { 0 };
	FILE *fp = open_memstream(&b.p, &b.n);
	struct vt s;
	int64_t fixed[3] = { 2, 3, 4 };

	vt_init(&s);
	s.align = align;
	if (declare)
		s.records = nrec;
	vt_add_field(&s, "u8", VT_U8, 2, dims2);
	vt_add_field(&s, "i8", VT_I8, 1, fixed);
	vt_add_field(&s, "u16", VT_U16, 3, fixed);
	vt_add_field(&s, "i32", VT_I32, 0, NULL);
	vt_add_field(&s, "i64", VT_I64, 1, dims1);
	vt_add_field(&s, "f32", VT_F32, 2, dims2);
	vt_add_field(&s, "f64", VT_F64, 2, fixed);
	vt_meta_add(&s, "CLASS", "0 zero");
	vt_meta_add(&s, "CLASS", "1 one");
	vt_meta_set(&s, "GRID", "7x7");
	vt_write_header(&s, fp, "mem");
	for (int r = 0; r < nrec; r++) {
		int64_t a[2] = { r % 4, 3 }, c[1] = { 5 + r };
		vt_set_shape(&s, 0, a);
		vt_set_shape(&s, 4, c);
		a[0] = r + 1;
		vt_set_shape(&s, 5, a);
		for (int i = 0; i < s.nfield; i++)
			fill(&s, i, r);
		if (vt_write_record(&s) != 0)
			printf("# write: %s\n", s.err.msg);
	}
	fclose(fp);
	vt_free(&s);
	return b;
}

/* Read b back; returns records read and leaves the error in e ("" for none). */
static int
read_all(const char *p, size_t n, int verify, struct err *e)
{
	FILE *fp = fmemopen((void *)p, n ? n : 1, "rb");
	struct vt s, ref;
	int r, rec = 0, bad = 0;

	if (n == 0) {		/* fmemopen refuses size 0: read nothing */
		getc(fp);
	}
	vt_init(&s);
	vt_init(&ref);
	e->msg[0] = '\0';
	if (vt_read_header(&s, fp, "input") == -1) {
		err_set(e, "%s", s.err.msg);
		rec = -1;
		goto out;
	}
	vt_copy_header(&ref, &s);
	while ((r = vt_read_record(&s)) == 1) {
		if (verify) {
			for (int i = 0; i < s.nfield; i++) {
				vt_set_shape(&ref, i, s.field[i].shape);
				fill(&ref, i, rec);
				if (memcmp(ref.field[i].data, s.field[i].data, s.field[i].nbytes) ||
				    ((uintptr_t)s.field[i].data & 63))
					bad++;
			}
		}
		rec++;
	}
	if (r == -1) {
		err_set(e, "%s", s.err.msg);
		rec = -1 - rec;
	} else if (bad)
		err_set(e, "%d fields differ", bad);
out:
	fclose(fp);
	vt_free(&s);
	vt_free(&ref);
	return rec;
}

static void
test_round_trips(void)
{
	struct err e;
	int aligns[] = { 1, 8, 64, 4096 };

	for (size_t a = 0; a < sizeof(aligns) / sizeof(aligns[0]); a++)
		for (int declare = 0; declare < 2; declare++) {
			struct buf b = make_stream(9, aligns[a], declare);
			int n = read_all(b.p, b.n, 1, &e);
			CHECK(n == 9 && e.msg[0] == '\0',
			    "round trip, every dtype, '*' dims, ALIGN %d, RECORDS %s (%d: %s)",
			    aligns[a], declare ? "declared" : "absent", n, e.msg);
			CHECK(aligns[a] == 1 || b.n % aligns[a] == 0,
			    "ALIGN %d: stream length %zu is a multiple", aligns[a], b.n);
			free(b.p);
		}
}

static void
test_header(void)
{
	struct buf b = make_stream(1, 64, 0);
	FILE *fp = fmemopen(b.p, b.n, "rb");
	struct vt s;
	char *end = strstr(b.p, "ENDHDR\n");

	vt_init(&s);
	CHECK(vt_read_header(&s, fp, "mem") == 0, "header reads");
	CHECK(s.nfield == 7 && s.ndyn == 3, "7 fields, 3 '*' dims");
	CHECK(vt_meta(&s, "GRID") && strcmp(vt_meta(&s, "GRID"), "7x7") == 0, "GRID kept");
	CHECK(vt_meta(&s, "CLASS") && strcmp(vt_meta(&s, "CLASS"), "1 one") == 0,
	    "repeated key: last value wins in vt_meta");
	{
		size_t h = end ? (size_t)(end - b.p) + 7 : 0, nl = 0;
		while (h && h + nl < b.n && b.p[h + nl] == '\n')
			nl++;
		CHECK(h && strncmp(b.p, "VITPIPE 1\n", 10) == 0 && memchr(b.p, 0, h) == NULL &&
		    nl == (64 - h % 64) % 64,
		    "header is text from the magic to ENDHDR, newline-padded to 64 bytes");
	}
	CHECK(vt_get(&s, "f32") && vt_get(&s, "f32")->dim[0] == VT_ANY &&
	    vt_get(&s, "f32")->dim[1] == 3, "FIELD f32 * 3 parsed");
	fclose(fp);
	vt_meta_set(&s, "GRID", NULL);
	CHECK(vt_meta(&s, "GRID") == NULL, "meta removed");
	CHECK(vt_meta_set(&s, "BAD KEY", "x") == -1, "key with a space refused");
	CHECK(vt_meta_set(&s, "FIELD", "x") == -1, "structural key refused as metadata");
	CHECK(vt_meta_add(&s, "NOTE", "a\nb") == -1, "newline in a value refused");
	vt_free(&s);
	free(b.p);
}

static void
test_unknown_keys_and_comments(void)
{
	const char *text = "VITPIPE 1\n# a comment\nBYTEORDER little\nFUTURE_KEY what ever\n"
	    "ALIGN 1\nFIELD x u8 2\n\nENDHDR\nab";
	struct err e;

	CHECK(read_all(text, strlen(text), 0, &e) == 1,
	    "unknown keys, comments and blank lines are ignored (%s)", e.msg);
}

static void
test_big_record(void)
{
	struct buf b = { 0 };
	FILE *fp = open_memstream(&b.p, &b.n);
	struct vt s, r;
	int64_t d[2] = { 1024, 4096 };
	float *x;
	int ok;

	vt_init(&s);
	vt_add_field(&s, "big", VT_F32, 2, d);		/* 16 MiB */
	x = s.field[0].data;
	for (int64_t i = 0; i < d[0] * d[1]; i++)
		x[i] = (float)i;
	vt_write_header(&s, fp, "mem");
	vt_write_record(&s);
	vt_write_record(&s);
	fclose(fp);
	fp = fmemopen(b.p, b.n, "rb");
	vt_init(&r);
	ok = vt_read_header(&r, fp, "mem") == 0 && vt_read_record(&r) == 1 &&
	    vt_read_record(&r) == 1 && vt_read_record(&r) == 0 &&
	    memcmp(r.field[0].data, x, 16 << 20) == 0;
	CHECK(ok, "16 MiB records round trip (%s)", r.err.msg);
	fclose(fp);
	r.maxbytes = 1 << 20;
	fp = fmemopen(b.p, b.n, "rb");
	CHECK(vt_read_header(&r, fp, "mem") == -1 && strstr(r.err.msg, "too large"),
	    "a record over the reader's limit is refused before allocating (%s)", r.err.msg);
	fclose(fp);
	vt_free(&r);
	vt_free(&s);
	free(b.p);
}

/* Every truncation of a valid stream is an error, except at record boundaries. */
static void
test_truncation(void)
{
	struct buf b = make_stream(3, 64, 0), bd = make_stream(3, 64, 1);
	struct err e;
	size_t bounds[4], nb = 0, hdr = strstr(b.p, "ENDHDR\n") - b.p + 7;
	int bad = 0, clean = 0;

	hdr += (64 - hdr % 64) % 64;
	/* Find record boundaries by writing 0..3 records. */
	for (int r = 0; r <= 3; r++) {
		struct buf t = make_stream(r, 64, 0);
		bounds[nb++] = t.n;
		free(t.p);
	}
	for (size_t cut = 0; cut <= b.n; cut++) {
		int n = read_all(b.p, cut, 0, &e), boundary = 0;
		for (size_t k = 0; k < nb; k++)
			boundary |= cut == bounds[k];
		if (boundary)
			clean += n >= 0;
		else if (n >= 0 || e.msg[0] == '\0' || strncmp(e.msg, "input: ", 7) != 0)
			bad++;
	}
	CHECK(bad == 0, "every cut of a 3-record stream (%zu cuts) inside the header or a "
	    "record is an error with a message", b.n);
	CHECK(clean == 4, "cuts at record boundaries end cleanly without RECORDS");
	bad = 0;
	for (size_t cut = hdr; cut < bd.n; cut++)
		if (read_all(bd.p, cut, 0, &e) >= 0)
			bad++;
	CHECK(bad == 0, "with RECORDS declared, any cut after the header is an error");
	read_all(b.p, bounds[2] + 70, 0, &e);
	CHECK(strstr(e.msg, "record 3") != NULL, "message names the record: %s", e.msg);
	free(b.p);
	free(bd.p);
}

/* One malformed input: its text, the substring its message must contain. */
struct bad {
	const char *what, *text, *msg;
	size_t len;	/* 0: strlen(text) */
};

static void
test_malformed(void)
{
	static struct bad cases[] = {
		{ "empty input", "", "empty input", 0 },
		{ "bad magic", "P7\nWIDTH 1\n", "bad magic", 0 },
		{ "binary garbage", "\x89PNG\r\n\x1a\n\0\0\0", "bad magic", 11 },
		{ "future version", "VITPIPE 2\n", "unsupported stream version", 0 },
		{ "no ENDHDR", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD x u8 1\n", "no ENDHDR", 0 },
		{ "no BYTEORDER", "VITPIPE 1\nALIGN 1\nFIELD x u8 1\nENDHDR\n", "no BYTEORDER", 0 },
		{ "big-endian", "VITPIPE 1\nBYTEORDER big\n", "not supported", 0 },
		{ "no ALIGN", "VITPIPE 1\nBYTEORDER little\nFIELD x u8 1\nENDHDR\n", "no ALIGN", 0 },
		{ "ALIGN not a power of 2", "VITPIPE 1\nBYTEORDER little\nALIGN 48\n", "power of two", 0 },
		{ "ALIGN too large", "VITPIPE 1\nBYTEORDER little\nALIGN 65536\n", "power of two", 0 },
		{ "no FIELD", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nENDHDR\n", "no FIELD", 0 },
		{ "unknown dtype", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD x f16 2\n", "unknown dtype", 0 },
		{ "negative dim", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD x u8 -2\n", "bad dim", 0 },
		{ "non-numeric dim", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD x u8 2x\n", "bad dim", 0 },
		{ "overflowing dim", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD x u8 99999999999999999999\n", "bad dim", 0 },
		{ "overflowing product", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD x f64 1099511627776 1099511627776\n", "too large", 0 },
		{ "oversized field", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD x f32 1099511627776\n", "too large", 0 },
		{ "too many dims", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD x u8 1 1 1 1 1 1 1 1 1\n", "more than 8 dims", 0 },
		{ "duplicate field", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD x u8 1\nFIELD x u8 1\n", "declared twice", 0 },
		{ "bad field name", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD x\"y u8 1\n", "bad field name", 0 },
		{ "FIELD without dtype", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD x\n", "needs a name and a dtype", 0 },
		{ "key without value", "VITPIPE 1\nBYTEORDER\n", "has no value", 0 },
		{ "bad RECORDS", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nRECORDS -3\n", "bad RECORDS", 0 },
		{ "NUL in header", "VITPIPE 1\nGRID 7\0x7\n", "NUL byte", 21 },
		{ "second magic", "VITPIPE 1\nVITPIPE 1\n", "second magic", 0 },
		{ "padding not newlines", "VITPIPE 1\nBYTEORDER little\nALIGN 64\nFIELD x u8 1\nENDHDR\nXXXXXXXXXX", "padding", 0 },
		{ "absurd per-record dim", NULL, "dim 0 is", 0 },
		{ "nonzero field padding", NULL, "padding is not zero", 0 },
		{ "more records than declared", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nRECORDS 1\nFIELD x u8 1\nENDHDR\nab", "data after the 1 records", 0 },
		{ "fewer records than declared", "VITPIPE 1\nBYTEORDER little\nALIGN 1\nRECORDS 3\nFIELD x u8 1\nENDHDR\nab", "ended after 2 of 3", 0 },
		{ "long header line", NULL, "longer than", 0 },
	};
	struct err e;
	size_t n;

	/* A '*' dim of -5 in the preamble. */
	{
		static char t[200];
		const char *h = "VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD x u8 *\nENDHDR\n";
		int64_t d = -5;
		n = strlen(h);
		memcpy(t, h, n);
		memcpy(t + n, &d, 8);
		cases[26].text = t;
		cases[26].len = n + 8;
	}
	/* A field followed by garbage where its zero padding should be. */
	{
		static char t[200];
		const char *h = "VITPIPE 1\nBYTEORDER little\nALIGN 8\nFIELD x u8 3\nENDHDR\n";
		n = strlen(h);
		memcpy(t, h, n);
		memset(t + n, '\n', 8 - n % 8);
		n += 8 - n % 8;
		memcpy(t + n, "abcXXXXX", 8);
		cases[27].text = t;
		cases[27].len = n + 8;
	}
	{
		static char t[VT_MAXLINE + 40];
		memcpy(t, "VITPIPE 1\nNOTE ", 15);
		memset(t + 15, 'a', VT_MAXLINE + 10);
		t[VT_MAXLINE + 25] = '\n';
		cases[30].text = t;
		cases[30].len = VT_MAXLINE + 26;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bad *c = &cases[i];
		int r = read_all(c->text, c->len ? c->len : strlen(c->text), 0, &e);
		CHECK(r < 0 && strstr(e.msg, c->msg) && strncmp(e.msg, "input: ", 7) == 0,
		    "malformed: %s -> \"%s\"", c->what, e.msg);
	}
}

static void
test_garbage(void)
{
	/* Random bytes after a valid header: errors or clean ends, never a crash. */
	struct buf b = make_stream(2, 64, 0);
	size_t hdr = strstr(b.p, "ENDHDR\n") - b.p + 7;
	struct err e;
	int crashes = 0;

	hdr += (64 - hdr % 64) % 64;
	srand(7);
	for (int t = 0; t < 200; t++) {
		char *c = malloc(b.n);
		memcpy(c, b.p, b.n);
		for (size_t i = hdr; i < b.n; i++)
			if (rand() % 16 == 0)
				c[i] = (char)rand();
		int r = read_all(c, b.n, 0, &e);
		if (r < 0 && e.msg[0] == '\0')
			crashes++;
		free(c);
	}
	CHECK(crashes == 0, "200 randomly corrupted streams: every failure has a message");
	free(b.p);
}

/* vt_load_with's prepare: field "big" read past, "w" read into arg. */
static int
prepare(struct vt *s, void *arg)
{
	vt_skip(s, vt_find(s, "big"));
	vt_lend(s, vt_find(s, "w"), arg);
	return 0;
}

/* vt_load_with reads past a skipped field, larger than its piece,
 * checking it whole (a container cut inside it is an error), and reads a
 * lent field into the caller's array. */
static void
test_load_with(struct vt *s, const char *path)
{
	int64_t n = 100000;
	struct vt r;
	struct stat st;
	float w[12];

	vt_add_field(s, "big", VT_F32, 1, &n);
	memset(vt_get(s, "big")->data, 0, sizeof(float) * n);
	*(int64_t *)vt_get(s, "step")->data = 43;
	CHECK(vt_save(s, path) == 0, "vt_save with a field of 400 kB (%s)", s->err.msg);
	struct vt_field *big = NULL;
	CHECK(vt_load_with(&r, path, prepare, w) == 0 && (big = vt_get(&r, "big")) != NULL &&
	    big->data == NULL && big->skip && big->nbytes == sizeof(float) * n &&
	    r.field[0].data == w && memcmp(w, s->field[0].data, 48) == 0 &&
	    *(int64_t *)vt_get(&r, "step")->data == 43,
	    "vt_load_with: a field read into the caller's array, one read past with no data (%s)", r.err.msg);
	vt_free(&r);
	CHECK(stat(path, &st) == 0 && truncate(path, st.st_size - 4000) == 0, "cut the container");
	CHECK(vt_load_with(&r, path, prepare, w) == -1 && strstr(r.err.msg, "field 'big' truncated"),
	    "a container cut inside a field read past: %s", r.err.msg);
	vt_free(&r);
}

/* A lent payload is written as it is and never freed (vt_free of this
 * stack array would abort). */
static void
test_lend(const char *path)
{
	float x[6] = { 1, -2, 3.5f, 0, 1e-3f, 7 };
	int64_t n = 6;
	struct vt s, r;

	vt_init(&s);
	int i = vt_add_field(&s, "x", VT_F32, 1, &n);
	vt_lend(&s, i, x);
	CHECK(vt_save(&s, path) == 0 && s.field[i].data == x, "vt_save of a lent field (%s)", s.err.msg);
	vt_free(&s);
	CHECK(vt_load(&r, path) == 0 && memcmp(r.field[0].data, x, sizeof x) == 0,
	    "the lent payload reads back (%s)", r.err.msg);
	vt_free(&r);
}

static void
test_save_load(void)
{
	char dir[] = "/tmp/vt-test-XXXXXX", path[64];
	struct vt s, r;
	int64_t d[2] = { 3, 4 };

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/ckpt.vt", dir);
	vt_init(&s);
	vt_add_field(&s, "w", VT_F32, 2, d);
	vt_add_field(&s, "step", VT_I64, 0, NULL);
	for (int i = 0; i < 12; i++)
		((float *)s.field[0].data)[i] = i * 0.25f;
	*(int64_t *)s.field[1].data = 42;
	vt_meta_set(&s, "PE", "liere:8");
	CHECK(vt_save(&s, path) == 0, "vt_save (%s)", s.err.msg);
	CHECK(vt_load(&r, path) == 0 && r.records == 1 &&
	    memcmp(r.field[0].data, s.field[0].data, 48) == 0 &&
	    *(int64_t *)vt_get(&r, "step")->data == 42 && strcmp(vt_meta(&r, "PE"), "liere:8") == 0,
	    "vt_load reads back what vt_save wrote (%s)", r.err.msg);
	vt_free(&r);
	test_load_with(&s, path);
	test_lend(path);
	snprintf(path, sizeof(path), "%s/none", dir);
	CHECK(vt_load(&r, path) == -1 && strstr(r.err.msg, "No such file"), "missing file: %s", r.err.msg);
	vt_free(&r);
	snprintf(path, sizeof(path), "%s/no-dir/x.vt", dir);
	CHECK(vt_save(&s, path) == -1, "save into a missing directory fails: %s", s.err.msg);
	vt_free(&s);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0, "clean up");
}

/* Records of no bytes exist where RECORDS declares them, and only there. */
static void
test_empty_records(void)
{
	const char *declared = "VITPIPE 1\nBYTEORDER little\nALIGN 1\nRECORDS 3\n"
	    "FIELD e f32 0\nENDHDR\n";
	const char *open_ended = "VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD e f32 0 4\nENDHDR\n";
	struct err e;

	CHECK(read_all(declared, strlen(declared), 0, &e) == 3,
	    "3 declared records of no bytes read as 3 (%s)", e.msg);
	CHECK(read_all(open_ended, strlen(open_ended), 0, &e) == 0,
	    "without RECORDS, empty records end the stream (no endless loop)");
}

/* Writers refuse what readers refuse (issue 39): more RECORDS of no bytes
 * than VT_MAXEMPTY, metadata past VT_MAXHEADER (refused as it is added,
 * before it takes memory), a header past VT_MAXHEADER. */
static void
test_writer_limits(void)
{
	struct vt s;
	int64_t zero[1] = { 0 }, one[1] = { 1 };
	char *val = malloc(VT_MAXLINE), name[32];
	FILE *fp = tmpfile();
	int n = 0, i;

	vt_init(&s);
	vt_add_field(&s, "e", VT_U8, 1, zero);
	s.records = VT_MAXEMPTY + 1;
	CHECK(vt_write_header(&s, fp, "tmp") == -1 && strstr(s.err.msg, "of no bytes") &&
	    ftell(fp) == 0, "RECORDS %lld of no bytes: not written (%s)",
	    (long long)s.records, s.err.msg);
	vt_free(&s);

	memset(val, 'v', VT_MAXLINE - 8);
	val[VT_MAXLINE - 8] = '\0';
	vt_add_field(&s, "x", VT_U8, 1, one);
	while (vt_meta_add(&s, "K", val) == 0)
		n++;
	CHECK(strstr(s.err.msg, "longer than a header may be") &&
	    s.metabytes <= (size_t)VT_MAXHEADER && n > 4000,
	    "metadata past %ld bytes refused as it is added, after %d lines (%s)",
	    VT_MAXHEADER, n, s.err.msg);
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof name, "field_with_a_long_name_%d", i);
		vt_add_field(&s, name, VT_U8, 1, one);
	}
	CHECK(vt_write_header(&s, fp, "tmp") == -1 && strstr(s.err.msg, "longer than") &&
	    ftell(fp) == 0, "a header past %ld bytes: not written (%s)", VT_MAXHEADER, s.err.msg);
	vt_meta_set(&s, "K", NULL);
	CHECK(s.metabytes == 0 && vt_write_header(&s, fp, "tmp") == 0,
	    "... and written once its keys are removed");
	vt_free(&s);
	free(val);
	fclose(fp);
}

static void
test_parse_dims(void)
{
	int64_t g[4], v = 0;
	char *end;

	CHECK(vt_parse_int("4294967328", NULL, 0, INT32_MAX, &v) == -1 &&
	    vt_parse_int("99999999999999999999", NULL, 0, INT64_MAX, &v) == -1 &&
	    vt_parse_int("-5", NULL, 0, 9, &v) == -1 && vt_parse_int(" 5", NULL, 0, 9, &v) == -1 &&
	    vt_parse_int("+5", NULL, 0, 9, &v) == -1 && vt_parse_int("5 ", NULL, 0, 9, &v) == -1 &&
	    vt_parse_int("", NULL, 0, 9, &v) == -1, "vt_parse_int: out of range, signs, "
	    "spaces, nothing: refused, never wrapped");
	CHECK(vt_parse_int("-5", NULL, -9, 9, &v) == 0 && v == -5 &&
	    vt_parse_int("12,3", &end, 0, 99, &v) == 0 && v == 12 && *end == ',',
	    "vt_parse_int: a sign where lo < 0; digits up to end");

	CHECK(vt_parse_dims("4x7x7", g, 4) == 3 && g[0] == 4 && g[2] == 7, "4x7x7");
	CHECK(vt_parse_dims("28", g, 4) == 1 && g[0] == 28, "28");
	CHECK(vt_parse_dims("7x", g, 4) == -1 && vt_parse_dims("0x3", g, 4) == -1 &&
	    vt_parse_dims("1x2x3x4x5", g, 4) == -1 && vt_parse_dims("", g, 4) == -1 &&
	    vt_parse_dims("-3x3", g, 4) == -1, "bad grids refused");
}

int
main(void)
{
	test_round_trips();
	test_header();
	test_unknown_keys_and_comments();
	test_big_record();
	test_truncation();
	test_malformed();
	test_garbage();
	test_save_load();
	test_empty_records();
	test_writer_limits();
	test_parse_dims();
	return test_done();
}
