/*
 * trainlog.c - vit-train's --log read back (trainlog.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "trainlog.h"

const char *const tlog_keys[TLOG_NCURVE] = { "loss", "lr", "val_acc", "val_loss" };

static int
add(struct tlog_curve *c, double x, double y)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		double *px = realloc(c->x, cap * sizeof *px);
		if (px == NULL)
			return -1;
		c->x = px;
		double *py = realloc(c->y, cap * sizeof *py);
		if (py == NULL)
			return -1;
		c->y = py;
		c->cap = cap;
	}
	c->x[c->n] = x;
	c->y[c->n++] = y;
	return 0;
}

/* Whether a number comes next (nan and inf too). */
static int
number_next(struct json *j)
{
	int c = json_peek(j);
	const char *d = j->p + (c == '-');

	return c == '-' || isdigit(c) || strncmp(d, "nan", 3) == 0 ||
	    strncmp(d, "inf", 3) == 0;
}

/* Keep the point (x, y) of curve c from line n, unless no plot holds it:
 * then count it.  0, or -1 out of memory. */
static int
point(struct tlog *t, int c, double x, double y, long long n)
{
	if (fabs(x) <= TLOG_MAXSTEP && fabs(y) <= TLOG_MAXVALUE)
		return add(&t->c[c], x, y);
	if (t->skipped++ == 0)
		snprintf(t->skip_why, sizeof t->skip_why, "line %lld: %s %g", n,
		    fabs(x) > TLOG_MAXSTEP ? "step" : tlog_keys[c],
		    fabs(x) > TLOG_MAXSTEP ? x : y);
	return 0;
}

/* Line n, len bytes at line, into t's curves.  0, or -1 with j->err. */
static int
parse_line(struct tlog *t, const char *line, size_t len, long long n, struct json *j)
{
	double val[TLOG_NCURVE] = { 0 }, step = NAN, v;
	int have[TLOG_NCURVE] = { 0 }, hstep = 0, more;
	char key[4096];

	*j = (struct json){ .p = line, .end = line + len, .nonfinite = 1 };
	for (more = json_begin(j, '{'); more == 1; more = json_next(j, '}')) {
		if (json_string(j, key, sizeof key) < 0 || json_expect(j, ':') < 0)
			return -1;
		if (!number_next(j)) {
			if (json_skip(j) < 0)
				return -1;
			continue;
		}
		if (json_number(j, &v) < 0)
			return -1;
		if (strcmp(key, "step") == 0)
			step = v, hstep = 1;
		for (int c = 0; c < TLOG_NCURVE; c++)
			if (strcmp(key, tlog_keys[c]) == 0)
				val[c] = v, have[c] = 1;
	}
	if (more < 0)
		return -1;
	if (json_peek(j) != 0) {
		err_set(&j->err, "text after the object");
		return -1;
	}
	if (!hstep || !isfinite(step))
		return 0;
	for (int c = 0; c < TLOG_NCURVE; c++)
		if (have[c] && isfinite(val[c]) && (c != TLOG_LR || have[TLOG_LOSS]) &&
		    point(t, c, step, val[c], n) < 0) {
			err_set(&j->err, "out of memory");
			return -1;
		}
	return 0;
}

int
tlog_read(struct tlog *t, FILE *fp, const char *name)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long long n = 0;
	struct json j;
	int rc = 0;

	memset(t, 0, sizeof *t);
	while (rc == 0 && (len = getline(&line, &cap, fp)) != -1) {
		n++;
		if (strspn(line, " \t\r\n") == (size_t)len)
			continue;
		if (strlen(line) != (size_t)len) {
			err_set(&t->err, "%s:%lld: a NUL byte: not a vit-train log",
			    name, n);
			rc = -1;
		} else if (parse_line(t, line, (size_t)len, n, &j) < 0) {
			if (line[len - 1] != '\n') {
				t->partial = n;
				break;
			}
			err_set(&t->err, "%s:%lld: %s", name, n, j.err.msg);
			rc = -1;
		}
	}
	if (rc == 0 && ferror(fp)) {
		err_set(&t->err, "%s: %s", name, strerror(errno));
		rc = -1;
	}
	free(line);
	return rc;
}

void
tlog_free(struct tlog *t)
{
	for (int c = 0; c < TLOG_NCURVE; c++) {
		free(t->c[c].x);
		free(t->c[c].y);
	}
	memset(t, 0, sizeof *t);
}
