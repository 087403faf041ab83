/* test_err.c - struct err: a message set, context put before it on the way
 * up, a message longer than the buffer cut and terminated, NULL allowed. */
#include <string.h>

#include "err.h"
#include "test.h"

int
main(void)
{
	struct err e;
	char big[2000];

	CHECK(err_set(&e, "dim %d: not a multiple of %d", 30, 4) == -1 &&
	    strcmp(e.msg, "dim 30: not a multiple of 4") == 0, "err_set formats and returns -1 (%s)", e.msg);
	CHECK(err_prefix(&e, "%s", "m.vt") == -1 && err_prefix(&e, "VIT_DIM") == -1 &&
	    strcmp(e.msg, "VIT_DIM: m.vt: dim 30: not a multiple of 4") == 0,
	    "err_prefix puts context before the message (%s)", e.msg);
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	err_set(&e, "%s", big);
	CHECK(strlen(e.msg) == sizeof e.msg - 1, "a long message is cut, terminated");
	err_prefix(&e, "ctx");
	CHECK(strncmp(e.msg, "ctx: xxx", 8) == 0 && strlen(e.msg) == sizeof e.msg - 1,
	    "context before a full message: kept, the tail cut");
	CHECK(err_set(NULL, "x") == -1 && err_prefix(NULL, "y") == -1, "a NULL err is allowed");
	return test_done();
}
