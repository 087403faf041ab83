/*
 * test_text.c - text_put: control characters (C0, DEL, UTF-8's C1) as
 * \xHH, everything else, UTF-8 included, as it is; a NUL within the
 * length is text too.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "text.h"

/* text_put of s[n] as a string (malloc'd). */
static char *
put(const char *s, size_t n)
{
	char *buf = NULL;
	size_t len;
	FILE *fp = open_memstream(&buf, &len);

	text_put(fp, s, n);
	fclose(fp);
	return buf;
}

int
main(void)
{
	static const char esc[] = "a\033]0;owned\007b\rc\td\x7f";
	static const char utf8[] = "t-shirt \xc3\xa9 \xe2\x82\xac \xc2\xa0";
	static const char c1[] = "x\xc2\x9b" "31my\xc2";
	char *out;

	out = put(esc, sizeof esc - 1);
	CHECK(strcmp(out, "a\\x1b]0;owned\\x07b\\x0dc\\x09d\\x7f") == 0,
	    "ESC, BEL, CR, TAB, DEL escaped: %s", out);
	free(out);
	out = put(utf8, sizeof utf8 - 1);
	CHECK(strcmp(out, utf8) == 0, "UTF-8 (é, €, no-break space) as it is");
	free(out);
	out = put(c1, sizeof c1 - 1);
	CHECK(strcmp(out, "x\\xc2\\x9b31my\xc2") == 0,
	    "U+009B (CSI) escaped, a lone 0xc2 at the end kept: %s", out);
	free(out);
	out = put("a\0b", 3);
	CHECK(strcmp(out, "a\\x00b") == 0, "a NUL within the length: %s", out);
	free(out);
	return test_done();
}
