/* fuzz_stream.c - the stream reader: a header, then every record. */
#include "fuzz.h"
#include "vt.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *fp = fmemopen((void *)data, size ? size : 1, "rb");
	struct vt s;

	if (fp == NULL)
		return 0;
	vt_init(&s);
	if (size && vt_read_header(&s, fp, "fuzz") == 0)
		while (vt_read_record(&s) == 1)
			;
	vt_free(&s);
	fclose(fp);
	return 0;
}
