/* test_order.c - the shuffled record order (order.h): seeded, each block
 * a permutation, one key at a time, bounded by its buffer, and the same
 * for a file and for a pipe. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "order.h"
#include "test.h"

#define N	300

/* A stream file of N records: id i32, and tok u8 [T][2], T = 3 for
 * records [100, 160), else 2 (a run of another grid). */
static void
make(const char *path)
{
	FILE *fp = fopen(path, "wb");
	struct vt s;

	vt_init(&s);
	vt_add_field(&s, "id", VT_I32, 0, NULL);
	vt_add_field(&s, "tok", VT_U8, 2, (int64_t[]){ VT_ANY, 2 });
	vt_write_header(&s, fp, path);
	for (int r = 0; r < N; r++) {
		int64_t T = r >= 100 && r < 160 ? 3 : 2;
		*(int32_t *)s.field[0].data = r;
		vt_set_shape(&s, 1, (int64_t[]){ T, 2 });
		memset(s.field[1].data, r & 0xff, (size_t)T * 2);
		vt_write_record(&s);
	}
	fclose(fp);
	vt_free(&s);
}

/* The ids in the order's sequence, from the file or through a pipe; the
 * count, or -1. */
static int
read_order(const char *path, int pipe_it, uint64_t seed, int64_t block, int64_t buffer,
    int *id)
{
	FILE *fp;
	struct vt s;
	struct rng r;
	struct order *o;
	int n = 0, rc, p[2] = { -1, -1 };
	pid_t pid = -1;

	if (pipe_it) {
		if (pipe(p) == -1 || (pid = fork()) == -1)
			return -1;
		if (pid == 0) {
			close(p[0]);
			if (dup2(p[1], STDOUT_FILENO) == -1)
				_exit(1);
			execlp("cat", "cat", path, (char *)NULL);
			_exit(127);
		}
		close(p[1]);
		fp = fdopen(p[0], "rb");
	} else
		fp = fopen(path, "rb");
	vt_init(&s);
	if (fp == NULL || vt_read_header(&s, fp, path) < 0)
		return -1;
	rng_seed(&r, seed, 7);
	if ((o = order_open(&s, &r, block, buffer, 1)) == NULL)
		return -1;
	while ((rc = order_next(o, &s)) == 1) {
		int32_t v = *(int32_t *)s.field[0].data;
		int64_t T = s.field[1].shape[0];
		const uint8_t *t = s.field[1].data;
		/* a record's fields stay together */
		if (n >= N || T != (v >= 100 && v < 160 ? 3 : 2) || t[2 * T - 1] != (v & 0xff) ||
		    order_record(o) != v + 1)
			return -1;
		id[n++] = v;
	}
	order_free(o);
	vt_free(&s);
	fclose(fp);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return rc < 0 ? -1 : n;
}

/* Whether id[0 .. n) holds each of lo .. lo + n - 1 once. */
static int
is_permutation(const int *id, int n, int lo)
{
	char seen[N] = { 0 };

	for (int i = 0; i < n; i++) {
		if (id[i] < lo || id[i] >= lo + n || seen[id[i]])
			return 0;
		seen[id[i]] = 1;
	}
	return 1;
}

int
main(void)
{
	char path[] = "/tmp/order-XXXXXX";
	int fd = mkstemp(path), a[N], b[N], c[N], n, moved = 0, late = 0, mixed = 0;

	if (fd == -1)
		return 1;
	close(fd);
	make(path);

	/* blocks of 120 (an epoch), a buffer of 50 */
	n = read_order(path, 0, 1, 120, 50, a);
	CHECK(n == N, "a file: every record (%d)", n);
	CHECK(is_permutation(a, 120, 0) && is_permutation(a + 120, 120, 120) &&
	    is_permutation(a + 240, 60, 240), "each block of 120 is a permutation of its records");
	for (int i = 0; i < N; i++) {
		moved += a[i] != i;
		/* a record is drawn from the next 50 read, never read ahead */
		late += a[i] >= i + 50;
		mixed += i > 0 && (a[i] >= 100 && a[i] < 160) != (a[i - 1] >= 100 && a[i - 1] < 160) &&
		    !(i == 100 || i == 160);
	}
	CHECK(moved > N / 2, "the order is shuffled (%d of %d records moved)", moved, N);
	CHECK(late == 0, "the buffer bounds how far ahead a record comes (%d)", late);
	CHECK(mixed == 0, "records of another grid are not mixed in (%d changes)", mixed);
	n = read_order(path, 1, 1, 120, 50, b);
	CHECK(n == N && memcmp(a, b, sizeof a) == 0, "a pipe comes in the file's order");
	n = read_order(path, 0, 1, 120, 50, c);
	CHECK(n == N && memcmp(a, c, sizeof a) == 0, "the same seed, the same order");
	n = read_order(path, 0, 2, 120, 50, c);
	CHECK(n == N && memcmp(a, c, sizeof a) != 0, "another seed, another order");

	/* a file's default buffer is its block: any record may come first */
	n = read_order(path, 0, 3, -1, 0, a);
	CHECK(n == N && is_permutation(a, N, 0), "one block: a permutation of all");
	late = 0;
	for (int i = 160; i < 200; i++)
		late += a[i] >= i + 50;
	CHECK(late > 3, "a whole block's buffer draws from far ahead (%d of 40)", late);
	n = read_order(path, 1, 3, -1, 1, b);
	CHECK(n == N && is_permutation(b, N, 0), "a buffer of one: every record, once");
	for (int i = 0; i < N; i++)
		moved = i == 0 ? b[i] != i : moved + (b[i] != i);
	CHECK(moved == 0, "... in the stream's order");
	unlink(path);
	return test_done();
}
