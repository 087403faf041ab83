/* fuzz_stream.c - the stream reader: a header, then every record, as
 * patches and positions through the batch reader (vit-eval's, vit-train's)
 * when the stream has them, else as they are. */
#include "batch.h"
#include "fuzz.h"
#include "vt.h"

/* Every record of s as batches of up to 4. */
static void
batches(struct vt *s)
{
	struct batch_reader br;
	struct batch b;

	if (batch_open(&br, s, 0, 0, 0, 0) < 0) {
		while (vt_read_record(s) == 1)
			;
		return;
	}
	if (batch_alloc(&b, &br, 4) == 0)
		while (batch_next(&br, &b, 4) > 0)
			;
	batch_free(&b);
	batch_close(&br);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *fp = fmemopen((void *)data, size ? size : 1, "rb");
	struct vt s;

	if (fp == NULL)
		return 0;
	vt_init(&s);
	if (size && vt_read_header(&s, fp, "fuzz") == 0)
		batches(&s);
	vt_free(&s);
	fclose(fp);
	return 0;
}
