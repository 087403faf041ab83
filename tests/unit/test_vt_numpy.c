/*
 * test_vt_numpy.c - the pure-NumPy reader printed in vitpipe(5) reads what
 * the C writer writes: every dtype, '*' dims, several ALIGN values.  The
 * reader is taken from the man page itself, so the page cannot go stale.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "vt.h"

int
main(void)
{
	char dir[] = "/tmp/vtnp-XXXXXX", path[128], cmd[4096];
	int aligns[] = { 1, 16, 64, 4096 };
	FILE *want;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/want.txt", dir);
	want = fopen(path, "w");
	for (size_t a = 0; a < sizeof(aligns) / sizeof(aligns[0]); a++) {
		struct vt s;
		FILE *fp;
		int64_t any[2] = { VT_ANY, 2 }, fix[2] = { 2, 3 };

		vt_init(&s);
		s.align = aligns[a];
		for (int d = 0; d < VT_NDTYPE; d++) {
			char name[16];
			snprintf(name, sizeof(name), "%s_%s", d % 2 ? "var" : "fix",
			    vt_dtype_name(d));
			vt_add_field(&s, name, d, 2, d % 2 ? any : fix);
		}
		vt_add_field(&s, "label", VT_I32, 0, NULL);
		vt_meta_set(&s, "GRID", "7x7");
		snprintf(path, sizeof(path), "%s/s%d.vt", dir, aligns[a]);
		fp = fopen(path, "wb");
		vt_write_header(&s, fp, path);
		for (int r = 0; r < 3; r++) {
			for (int i = 0; i < s.nfield; i++) {
				struct vt_field *f = &s.field[i];
				int64_t shape[2] = { r + 1, 2 };
				if (f->rank && f->dim[0] == VT_ANY)
					vt_set_shape(&s, i, shape);
				fprintf(want, "%d %d %s %s", aligns[a], r, f->name,
				    vt_dtype_name(f->dtype));
				for (int k = 0; k < f->rank; k++)
					fprintf(want, "%s%lld", k ? "," : " ", (long long)f->shape[k]);
				if (f->rank == 0)
					fputs(" -", want);
				fputc(' ', want);
				for (size_t b = 0; b < f->nbytes; b++) {
					((unsigned char *)f->data)[b] = (unsigned char)(r * 31 + i * 7 + b * 13);
					fprintf(want, "%02x", ((unsigned char *)f->data)[b]);
				}
				fputc('\n', want);
			}
			vt_write_record(&s);
		}
		fclose(fp);
		vt_free(&s);
	}
	fclose(want);
	snprintf(cmd, sizeof(cmd),
	    "sed -n '/^# vtread.py begin/,/^# vtread.py end/p' man/man5/vitpipe.5 | "
	    "sed 's/\\\\e/\\\\/g' > %s/vtread.py && cd %s && /usr/bin/python3 - <<'PY'\n"
	    "import numpy as np\n"
	    "from vtread import vtread\n"
	    "want = [l.split() for l in open('want.txt')]\n"
	    "got = []\n"
	    "for a in (1, 16, 64, 4096):\n"
	    "    head, recs = vtread(open(f's{a}.vt', 'rb'))\n"
	    "    assert head['GRID'] == ['7x7'], head\n"
	    "    for r, rec in enumerate(recs):\n"
	    "        for name, arr in rec.items():\n"
	    "            shape = ','.join(map(str, arr.shape)) or '-'\n"
	    "            got.append([str(a), str(r), name, arr.dtype.str, shape, arr.tobytes().hex()])\n"
	    "dt = dict(u8='|u1', i8='|i1', u16='<u2', i32='<i4', i64='<i8', f32='<f4', f64='<f8')\n"
	    "want = [[w[0], w[1], w[2], dt[w[3]], w[4], w[5] if len(w) > 5 else ''] for w in want]\n"
	    "bad = [(w, g) for w, g in zip(want, got) if w != g]\n"
	    "assert len(want) == len(got) and not bad, (len(want), len(got), bad[:2])\n"
	    "print(f'{len(got)} field payloads match')\n"
	    "import io\n"
	    "e = b'VITPIPE 1\\nBYTEORDER little\\nALIGN 1\\nRECORDS 3\\nFIELD e f32 0\\nENDHDR\\n'\n"
	    "assert len(list(vtread(io.BufferedReader(io.BytesIO(e)))[1])) == 3, 'empty records'\n"
	    "PY", dir, dir);
	CHECK(system(cmd) == 0, "the NumPy reader in vitpipe(5) reads C-written streams "
	    "(every dtype, '*' dims, ALIGN 1/16/64/4096, declared empty records)");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) || test_done();
}
