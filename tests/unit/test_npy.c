/*
 * test_npy.c - lib/npy: round trips, files written by NumPy itself (big
 * endian, version 2.0), files NumPy must read back, and bad headers.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"
#include "test.h"
#include "vt.h"

static char dir[] = "/tmp/test_npy.XXXXXX";

static int
py(const char *script)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "cd %s && /usr/bin/python3 -c '%s'", dir, script);
	return system(cmd);
}

static void
write_bytes(const char *name, const void *p, size_t n)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *fp = fopen(path, "wb");
	fwrite(p, 1, n, fp);
	fclose(fp);
}

/* A version 1.0 file with header dict and nbytes zero bytes of data. */
static void
write_npy(const char *name, const char *dict, size_t nbytes)
{
	char buf[512] = "\x93NUMPY\x01\x00";
	size_t len = strlen(dict) + 1;
	buf[8] = (char)(len & 255), buf[9] = (char)(len >> 8);
	snprintf(buf + 10, sizeof buf - 10, "%s\n", dict);
	memset(buf + 10 + len, 0, nbytes);
	write_bytes(name, buf, 10 + len + nbytes);
}

/* Error text of loading name, or "" when it loads. */
static const char *
load_err(const char *name)
{
	static struct err e;
	char path[256];
	struct npy h;
	void *data;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	e.msg[0] = 0;
	if (npy_load(path, &h, &data, &e) == 0)
		free(data);
	return e.msg;
}

int
main(void)
{
	struct err e;
	char path[256];
	struct npy h;
	void *data;
	if (!mkdtemp(dir))
		return 1;

	/* Round trip through our writer, then NumPy reads the same files. */
	float f[6] = { 1.5f, -2, 3, 4e-8f, 5, 6 };
	int64_t shape[2] = { 2, 3 }, one = 5;
	int32_t iv[5] = { 1, -2, 3, 1 << 30, 0 };
	snprintf(path, sizeof path, "%s/f.npy", dir);
	CHECK(npy_save(path, VT_F32, 2, shape, f, &e) == 0, "save f32 (2,3)");
	CHECK(npy_load(path, &h, &data, &e) == 0, "load it back: %s", e.msg);
	CHECK(h.dtype == VT_F32 && h.rank == 2 && h.shape[0] == 2 && h.shape[1] == 3 &&
	    h.count == 6 && h.offset % 64 == 0, "shape, dtype, 64-byte aligned data");
	CHECK(memcmp(data, f, sizeof f) == 0, "values survive");
	free(data);
	snprintf(path, sizeof path, "%s/i.npy", dir);
	CHECK(npy_save(path, VT_I32, 1, &one, iv, &e) == 0, "save i32 (5,)");
	snprintf(path, sizeof path, "%s/s.npy", dir);
	CHECK(npy_save(path, VT_F64, 0, NULL, &(double){ 2.5 }, &e) == 0, "save a scalar");
	CHECK(py("import numpy as np\n"
	    "a = np.load(\"f.npy\"); assert a.dtype == np.float32 and a.shape == (2, 3)\n"
	    "assert a.tolist() == [[1.5, -2, 3], [np.float32(4e-8), 5, 6]]\n"
	    "b = np.load(\"i.npy\"); assert b.shape == (5,) and b.tolist() == [1, -2, 3, 1 << 30, 0]\n"
	    "assert np.load(\"s.npy\").shape == () and np.load(\"s.npy\") == 2.5\n") == 0,
	    "NumPy reads what npy_save writes");

	/* Written by NumPy: big-endian, a version 2.0 header, uint16, bool. */
	CHECK(py("import numpy as np\n"
	    "np.save(\"be.npy\", (np.arange(12).reshape(3, 4) - 5).astype(\">i4\"))\n"
	    "f = open(\"v2.npy\", \"wb\"); np.lib.format.write_array(f, np.arange(7, dtype=np.uint16), version=(2, 0)); f.close()\n"
	    "np.save(\"b.npy\", np.array([True, False, True]))\n"
	    "np.save(\"c.npy\", np.zeros(3, np.complex64))\n"
	    "np.save(\"fo.npy\", np.asfortranarray(np.zeros((2, 3))))\n") == 0, "NumPy writes test files");
	snprintf(path, sizeof path, "%s/be.npy", dir);
	CHECK(npy_load(path, &h, &data, &e) == 0 && h.swap && h.dtype == VT_I32, "big-endian i4: %s", e.msg);
	CHECK(data && ((int32_t *)data)[0] == -5 && ((int32_t *)data)[11] == 6, "bytes swapped");
	free(data);
	snprintf(path, sizeof path, "%s/v2.npy", dir);
	CHECK(npy_load(path, &h, &data, &e) == 0 && h.dtype == VT_U16 && h.count == 7 &&
	    ((uint16_t *)data)[6] == 6, "version 2.0 header, u2: %s", e.msg);
	free(data);
	snprintf(path, sizeof path, "%s/b.npy", dir);
	CHECK(npy_load(path, &h, &data, &e) == 0 && h.dtype == VT_U8 &&
	    ((uint8_t *)data)[2] == 1, "bool as u8");
	free(data);

	/* npy_read seeks to an element range. */
	snprintf(path, sizeof path, "%s/f.npy", dir);
	FILE *fp = fopen(path, "rb");
	float two[2];
	CHECK(npy_read_header(&h, fp, path, &e) == 0 && npy_read(&h, fp, path, 3, 2, two, &e) == 0 &&
	    two[0] == 4e-8f && two[1] == 5, "npy_read of elements 3..4");
	CHECK(npy_read(&h, fp, path, 5, 2, two, &e) == -1, "npy_read past the end refused");
	fclose(fp);

	/* Bad files: clean errors naming the file. */
	CHECK(strstr(load_err("c.npy"), "unsupported .npy dtype '<c8'") != NULL, "complex refused: %s", load_err("c.npy"));
	CHECK(strstr(load_err("fo.npy"), "Fortran") != NULL, "Fortran order refused");
	CHECK(strstr(load_err("none.npy"), "none.npy: No such file") != NULL, "missing file");
	write_bytes("magic.npy", "\x93NUMPX\x01\x00\x10\x00{}", 12);
	CHECK(strstr(load_err("magic.npy"), "bad magic") != NULL, "wrong magic");
	write_bytes("short.npy", "\x93NUMPY\x01\x00\x40\x00{'descr'", 18);
	CHECK(strstr(load_err("short.npy"), "truncated .npy header") != NULL, "truncated header");
	write_npy("trunc.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", 60);
	CHECK(strstr(load_err("trunc.npy"), "truncated .npy data") != NULL, "truncated data: %s", load_err("trunc.npy"));
	write_npy("huge.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4000000000000, 4000000), }", 8);
	CHECK(strstr(load_err("huge.npy"), "absurd") != NULL, "absurd shape: %s", load_err("huge.npy"));
	/* The shape is a Python tuple of plain integers, or the header is
	 * refused, as NumPy refuses it. */
	static const char *const badshape[] = {
		"(,0000164,7 4, 1)", "(7 4,)", "(,3)", "(3,,4)", "(04,)", "(3)", "(3, 4,,)", "(-1,)",
	};
	for (size_t i = 0; i < sizeof badshape / sizeof *badshape; i++) {
		char dict[128];
		snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", badshape[i]);
		write_npy("bad.npy", dict, 64);
		CHECK(strstr(load_err("bad.npy"), "bad .npy header (shape)") != NULL, "shape %s refused: %s",
		    badshape[i], load_err("bad.npy"));
	}
	static const char *const goodshape[] = { "()", "(4,)", "( 2 ,2 )", "(1, 4,)", "(0, 4)" };
	static const int64_t goodcount[] = { 1, 4, 4, 4, 0 };
	for (size_t i = 0; i < sizeof goodshape / sizeof *goodshape; i++) {
		char dict[128];
		snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", goodshape[i]);
		write_npy("good.npy", dict, 16);
		snprintf(path, sizeof path, "%s/good.npy", dir);
		void *d = NULL;
		CHECK(npy_load(path, &h, &d, &e) == 0 && h.count == goodcount[i], "shape %s read: %s",
		    goodshape[i], e.msg);
		free(d);
	}
	write_bytes("ver.npy", "\x93NUMPY\x09\x00\x10\x00{}", 12);
	CHECK(strstr(load_err("ver.npy"), "version") != NULL, "unknown version");

	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return test_done();
}
