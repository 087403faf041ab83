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
	/* A commit whose rename fails (the target is a directory) reports
	 * the error and removes its temporary, as atomicfile.h promises. */
	snprintf(path, sizeof(path), "%s/d", dir);
	CHECK(mkdir(path, 0777) == 0 && atomic_open(&a, path) == 0 &&
	    temporaries(dir) == 1, "open beside a directory: one temporary");
	fputs("lost", a.fp);
	errno = 0;
	int rc = atomic_commit(&a);
	CHECK(rc == -1 && errno != 0, "commit over a directory fails (%s)",
	    strerror(errno));
	CHECK(temporaries(dir) == 0, "a failed commit leaves no temporary behind");
	snprintf(path, sizeof(path), "%s/missing/f", dir);
	CHECK(atomic_open(&a, path) == -1, "a missing directory is an error");
	stale_temporaries(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) || test_done();
}
