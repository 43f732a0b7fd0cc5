// SPDX-License-Identifier: GPL-2.0
/*
 * A fork + exec chain: the program calls a() 100 times and forks; the
 * child calls b() 200 times and executes the program again ("stage2"),
 * which calls c() 300 times, forks, and its child executes it once more
 * ("stage3"), which calls d() 400 times.  Each process prints "count PID
 * FUNCTION N" (one thread each: tid = pid).  Expectation: forkexec.expect.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "progs.h"

static volatile long sink;

KNOWN void a(long i) { sink += i; }
KNOWN void b(long i) { sink += 2 * i; }
KNOWN void c(long i) { sink += 3 * i; }
KNOWN void d(long i) { sink += 4 * i; }

static void calls(void (*f)(long), const char *name, long n)
{
	long i;

	for (i = 0; i < n; i++)
		f(i);
	printf("count %d %s %ld\n", getpid(), name, n);
	fflush(stdout);
}

/* fork; the child runs child() (if given) then executes self with arg */
static int spawn(void (*child)(void), const char *arg)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("forkexec: fork");
		return 1;
	}
	if (!pid) {
		if (child)
			child();
		execl("/proc/self/exe", "forkexec", arg, (char *)NULL);
		perror("forkexec: exec");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return 0;
}

static void child_b(void)
{
	calls(b, "b", 200);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "stage3")) {
		calls(d, "d", 400);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "stage2")) {
		calls(c, "c", 300);
		return spawn(NULL, "stage3");
	}
	calls(a, "a", 100);
	return spawn(child_b, "stage2");
}
