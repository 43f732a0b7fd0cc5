// SPDX-License-Identifier: GPL-2.0
/*
 * Wall time of a command, for `make bench` in the guest (busybox's date
 * has no nanoseconds):
 *
 *   stopwatch FILE CMD [ARGS...]
 *
 * runs CMD with its stdin, stdout and stderr, and writes one line
 * "wall_ns=NANOSECONDS rc=STATUS" to FILE (CLOCK_MONOTONIC from before
 * fork() to after waitpid(); STATUS is CMD's exit status, 128 + the signal
 * if it was killed, 127 if it could not be run).  Exits with STATUS.
 */
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	long long t0, t1;
	int status, rc;
	FILE *f;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: stopwatch FILE CMD [ARGS...]\n");
		return 2;
	}
	f = fopen(argv[1], "w");
	if (!f) {
		fprintf(stderr, "stopwatch: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		perror("stopwatch: fork");
		return 2;
	}
	if (!pid) {
		fclose(f);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "stopwatch: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("stopwatch: waitpid");
		return 2;
	}
	t1 = now_ns();
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	fprintf(f, "wall_ns=%lld rc=%d\n", t1 - t0, rc);
	if (fclose(f)) {
		fprintf(stderr, "stopwatch: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	return rc;
}
