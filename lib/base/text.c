/*
 * text.c - text from input written so that it cannot drive a terminal
 * (text.h).
 */
#include "text.h"

void
text_put(FILE *fp, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] == 0x7f)
			fprintf(fp, "\\x%02x", p[i]);
		else if (p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f) {
			/* a C1 control: U+009B is CSI to some terminals */
			fprintf(fp, "\\xc2\\x%02x", p[i + 1]);
			i++;
		} else
			putc(p[i], fp);
}
