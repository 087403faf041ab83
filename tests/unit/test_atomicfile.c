/* test_atomicfile.c - a replaced file is either old or new, never partial. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomicfile.h"
#include "test.h"

static int
content_is(const char *path, const char *want)
{
	char buf[64] = "";
	FILE *fp = fopen(path, "r");

	if (!fp)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	return strcmp(buf, want) == 0;
}

/* Entries of dir whose names hold ".tmp." (atomic_open's temporaries). */
static int
temporaries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += strstr(e->d_name, ".tmp.") != NULL;
	closedir(d);
	return n;
}

/* A child that opens a temporary for path and is killed (SIGKILL, as
 * kill -9 during a checkpoint) when hold is 0, or waits alive for its
 * parent to close fd; its pid. */
static pid_t
writer(const char *path, int hold, int *fd)
{
	int p[2], q[2];
	char c;

	if (pipe(p) == -1 || pipe(q) == -1)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		struct atomicfile a;
		close(p[0]);
		close(q[1]);
		if (atomic_open(&a, path) == 0)
			fputs("half", a.fp), fflush(a.fp);
		write(p[1], "x", 1);
		if (!hold)
			raise(SIGKILL);
		read(q[0], &c, 1);	/* until the parent closes its end */
		_exit(0);
	}
	close(p[1]);
	close(q[0]);
	read(p[0], &c, 1);
	close(p[0]);
	if (!hold)
		waitpid(pid, NULL, 0);
	*fd = q[1];
	return pid;
}

/* The temporaries a killed writer left are removed by the next
 * atomic_open of the same path; a live writer's, of this host or (its lock
 * held) of another, are kept, and so are other files' and names not made
 * by atomic_open. */
static void
stale_temporaries(const char *dir)
{
	char path[64], other[64], name[128];
	struct atomicfile a;
	int fd, hold;

	snprintf(path, sizeof path, "%s/m.vt", dir);
	snprintf(other, sizeof other, "%s/n.vt", dir);
	pid_t live = writer(path, 1, &hold);
	pid_t dead = writer(path, 0, &fd);
	close(fd);
	CHECK(live > 0 && dead > 0 && temporaries(dir) == 2,
	    "a killed writer left its temporary beside a live one's");
	writer(other, 0, &fd);
	close(fd);
	/* As another host's live writer: a PID not running here, locked. */
	snprintf(name, sizeof name, "%s.tmp.%ld.remote", path, (long)dead);
	int lk = open(name, O_CREAT | O_WRONLY, 0600);
	CHECK(lk >= 0 && flock(lk, LOCK_EX) == 0, "a locked temporary of a gone PID");
	snprintf(name, sizeof name, "%s.tmp.abcdef", path);
	close(open(name, O_CREAT | O_WRONLY, 0600));
	CHECK(temporaries(dir) == 5, "five temporaries before the next run");
	CHECK(atomic_open(&a, path) == 0, "the next run opens");
	CHECK(temporaries(dir) == 5, "its own, the live ones, the other file's and the "
	    "foreign one are there, the killed writer's is gone");
	fputs("whole", a.fp);
	CHECK(atomic_commit(&a) == 0 && content_is(path, "whole"), "and commits");
	CHECK(temporaries(dir) == 4, "the live writers' temporaries are kept");
	close(hold);
	waitpid(live, NULL, 0);
	close(lk);
}

/* Links are followed, FIFOs and devices written in place: nothing but a
 * regular file is ever replaced (issue: -o /dev/full turned the device
 * into a file, -o LINK replaced the link). */
static void
non_regular(const char *dir)
{
	char path[96], target[96], fifo[96], got[16] = "";
	struct atomicfile a;
	struct stat st;
	int p[2];

	snprintf(target, sizeof target, "%s/real", dir);
	snprintf(path, sizeof path, "%s/real/t", dir);
	CHECK(mkdir(target, 0777) == 0 && atomic_open(&a, path) == 0, "target made");
	fputs("target", a.fp);
	CHECK(atomic_commit(&a) == 0 && chmod(path, 0640) == 0, "target written");
	snprintf(path, sizeof path, "%s/link", dir);
	CHECK(symlink("real/t", path) == 0 && atomic_open(&a, path) == 0, "open a relative link");
	fputs("through", a.fp);
	CHECK(atomic_commit(&a) == 0, "commit through the link");
	snprintf(target, sizeof target, "%s/real/t", dir);
	CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode), "the link stays a link");
	CHECK(content_is(target, "through"), "its target is replaced");
	CHECK(stat(target, &st) == 0 && (st.st_mode & 07777) == 0640, "with the target's mode");
	snprintf(path, sizeof path, "%s/dangling", dir);
	snprintf(target, sizeof target, "%s/new", dir);
	CHECK(symlink(target, path) == 0 && atomic_open(&a, path) == 0, "open a dangling link");
	fputs("made", a.fp);
	CHECK(atomic_commit(&a) == 0 && content_is(target, "made") &&
	    lstat(path, &st) == 0 && S_ISLNK(st.st_mode), "its target is created, the link kept");
	snprintf(path, sizeof path, "%s/loop", dir);
	CHECK(symlink("loop", path) == 0 && atomic_open(&a, path) == -1 && errno == ELOOP,
	    "a link loop is an error");
	unlink(path);

	/* A FIFO: the reader gets the bytes, the FIFO stays. */
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	CHECK(mkfifo(fifo, 0666) == 0 && pipe(p) == 0, "a FIFO");
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(fifo, O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, got, sizeof got - 1);
		_exit(n == 4 && memcmp(got, "data", 4) == 0 ? 0 : 1);
	}
	int st2 = -1;
	CHECK(atomic_open(&a, fifo) == 0 && a.tmp == NULL, "a FIFO is opened itself");
	fputs("data", a.fp);
	CHECK(atomic_commit(&a) == 0, "and committed");
	CHECK(waitpid(pid, &st2, 0) == pid && WIFEXITED(st2) && WEXITSTATUS(st2) == 0,
	    "its reader got the bytes");
	CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO stays a FIFO");
	close(p[0]);
	close(p[1]);

	/* /dev/full: the write error is reported, the device stays. */
	if (access("/dev/full", W_OK) == 0) {
		CHECK(atomic_open(&a, "/dev/full") == 0 && a.tmp == NULL, "a device is opened itself");
		for (int i = 0; i < 10000; i++)
			fputs("0123456789", a.fp);
		errno = 0;
		CHECK(atomic_commit(&a) == -1 && errno == ENOSPC, "a full device fails the commit (%s)",
		    strerror(errno));
		CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode), "/dev/full stays a device");
	}
}

int
main(void)
{
	char dir[] = "/tmp/atomic-XXXXXX", path[64], cmd[96];
	struct atomicfile a;
	struct stat st;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/f", dir);
	CHECK(atomic_open(&a, path) == 0, "open");
	fputs("old", a.fp);
	CHECK(atomic_commit(&a) == 0 && content_is(path, "old"), "first commit");
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0444) == 0444, "mode is not mkstemp's 0600");
	CHECK(atomic_open(&a, path) == 0, "open again");
	fputs("new, half written", a.fp);
	fflush(a.fp);
	CHECK(content_is(path, "old"), "until commit, readers see the old file");
	atomic_abort(&a);
	CHECK(content_is(path, "old"), "abort keeps the old file");
	snprintf(cmd, sizeof(cmd), "test $(ls %s | wc -l) -eq 1", dir);
	CHECK(system(cmd) == 0, "abort leaves no temporary behind");
	atomic_open(&a, path);
	fputs("new", a.fp);
	CHECK(atomic_commit(&a) == 0 && content_is(path, "new"), "commit replaces");
	/* A commit whose rename fails (the target became a directory)
	 * reports the error and removes its temporary, as atomicfile.h
	 * promises. */
	snprintf(path, sizeof(path), "%s/d", dir);
	CHECK(atomic_open(&a, path) == 0 && mkdir(path, 0777) == 0 &&
	    temporaries(dir) == 1, "open, then a directory appears: one temporary");
	fputs("lost", a.fp);
	errno = 0;
	int rc = atomic_commit(&a);
	CHECK(rc == -1 && errno != 0, "commit over a directory fails (%s)",
	    strerror(errno));
	CHECK(temporaries(dir) == 0, "a failed commit leaves no temporary behind");
	snprintf(path, sizeof(path), "%s/missing/f", dir);
	CHECK(atomic_open(&a, path) == -1, "a missing directory is an error");
	errno = 0;
	CHECK(atomic_open(&a, dir) == -1 && errno == EISDIR, "a directory is refused (%s)",
	    strerror(errno));
	non_regular(dir);
	stale_temporaries(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) || test_done();
}
