/*
 * test.h - checks for the C unit tests.  Each check prints "ok - what" or
 * "not ok - what" (read by tests/run.sh); test_done() returns the exit code.
 */
#ifndef TEST_H
#define TEST_H

#include <math.h>
#include <stdio.h>

static int test_failed;

#define CHECK(cond, ...) do {						\
	int ok_ = !!(cond);						\
	printf(ok_ ? "ok - " : "not ok - ");				\
	printf(__VA_ARGS__);						\
	if (!ok_) { printf("  [%s:%d: %s]", __FILE__, __LINE__, #cond); test_failed++; } \
	printf("\n");							\
} while (0)

/* |a - b| <= tol * max(1, |b|), with the values shown on failure. */
#define CHECK_CLOSE(a, b, tol, ...) do {				\
	double a_ = (a), b_ = (b), t_ = (tol) * fmax(1.0, fabs(b_));	\
	int ok_ = fabs(a_ - b_) <= t_;					\
	printf(ok_ ? "ok - " : "not ok - ");				\
	printf(__VA_ARGS__);						\
	if (!ok_) { printf("  [%s:%d: %.9g vs %.9g, tol %.3g]", __FILE__, __LINE__, a_, b_, t_); test_failed++; } \
	printf("\n");							\
} while (0)

/* max and min that keep a NaN (fmax and fmin drop it): a worst error
 * taken with these is NaN, and fails its check, if any error was NaN. */
static inline double maxn(double a, double b) { return a > b || isnan(a) ? a : b; }
static inline double minn(double a, double b) { return a < b || isnan(a) ? a : b; }

static inline int test_done(void) { return test_failed ? 1 : 0; }

#endif
