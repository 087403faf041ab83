/*
 * test_json.c - JSON strings written with their escapes and read back;
 * the cursor over arrays and objects, \u escapes with surrogate pairs,
 * skipping any value, and malformed texts refused with a message.
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "test.h"

/* A cursor over the NUL-ended text t. */
static struct json
over(const char *t)
{
	return (struct json){ .p = t, .end = t + strlen(t) };
}

int
main(void)
{
	char *buf = NULL, s[64];
	size_t len;
	FILE *fp = open_memstream(&buf, &len);

	json_put_string(fp, "a\"b\\c\nd\x01 é");
	fclose(fp);
	CHECK(strcmp(buf, "\"a\\\"b\\\\c\\u000ad\\u0001 é\"") == 0,
	    "written: quotes, backslashes, control characters escaped, UTF-8 as is: %s", buf);
	struct json j = over(buf);
	CHECK(json_string(&j, s, sizeof s) == 0 && strcmp(s, "a\"b\\c\nd\x01 é") == 0,
	    "... and read back the same");
	free(buf);

	j = over(" \"\\u00e9\\ud83d\\ude00\\/\\t\" ");
	CHECK(json_string(&j, s, sizeof s) == 0 && strcmp(s, "é\xf0\x9f\x98\x80/\t") == 0,
	    "\\u escapes to UTF-8, a surrogate pair to one 4-byte character");
	CHECK(json_peek(&j) == 0, "then the end of the text");

	/* [1, "two", {"x": [null, true, false, -2.5e3]}, {}, []] */
	j = over("[1, \"two\", {\"x\": [null, true, false, -2.5e3]}, {}, []] ");
	double v = 0;
	int more = json_begin(&j, '['), n = 0;
	CHECK(more == 1 && json_number(&j, &v) == 0 && v == 1, "an array, its first number");
	while ((more = json_next(&j, ']')) == 1 && json_skip(&j) == 0)
		n++;
	CHECK(more == 0 && n == 4 && json_peek(&j) == 0, "json_skip passes a string, objects "
	    "and arrays of every kind, empty ones too (%d of 4, %s)", n, j.err.msg);
	j = over("{}");
	CHECK(json_begin(&j, '{') == 0 && json_peek(&j) == 0, "an empty object: json_begin 0");

	static const char *const bad[] = {
		"\"abc", "\"a\\q\"", "\"\\ud83d\"", "\"\\ude00\"", "\"\\u0000\"", "\"a\nb\"",
		"[1 2]", "{\"a\" 1}", "[tru]", "[-]",
		/* numbers JSON's grammar refuses, though strtod takes them */
		"[1.]", "[.5]", "[01]", "[0x10]", "[1e]", "[+1]", "[-inf]", "[nan]", "[1e999]",
	};
	int refused = 0;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		j = over(bad[i]);
		j.err.msg[0] = '\0';
		refused += json_skip(&j) == -1 && j.err.msg[0] != '\0';
	}
	CHECK(refused == (int)(sizeof bad / sizeof *bad), "malformed texts refused with a "
	    "message (%d of %zu)", refused, sizeof bad / sizeof *bad);
	j = over("\"abcdefgh\"");
	CHECK(json_string(&j, s, 8) == -1 && strstr(j.err.msg, "longer than 7 bytes"),
	    "a string longer than the buffer: %s", j.err.msg);
	/* a value is skipped whatever its length, which no buffer bounds */
	char *big = malloc(100003);
	memset(big, 'x', 100003);
	big[0] = big[100001] = '"';
	big[100002] = '\0';
	j = over(big);
	CHECK(json_skip(&j) == 0 && json_peek(&j) == 0, "a string of 100000 bytes skipped: %s",
	    j.err.msg);
	free(big);
	/* vit-train's log: printf's nan and inf, when asked for */
	j = over("[nan, -inf, inf, -0.5e-3, 2E+2]");
	j.nonfinite = 1;
	double w[5];
	n = 0;
	for (more = json_begin(&j, '['); more == 1 && json_number(&j, &w[n++]) == 0;
	    more = json_next(&j, ']'))
		;
	CHECK(more == 0 && n == 5 && isnan(w[0]) && w[1] == -INFINITY && w[2] == INFINITY &&
	    w[3] == -0.5e-3 && w[4] == 200, "nan, -inf and inf with nonfinite (%s)", j.err.msg);
	char deep[200];
	memset(deep, '[', sizeof deep - 1);
	deep[sizeof deep - 1] = '\0';
	j = over(deep);
	CHECK(json_skip(&j) == -1 && strstr(j.err.msg, "nested"), "199 open brackets: refused, "
	    "no deep recursion: %s", j.err.msg);
	return test_done();
}
