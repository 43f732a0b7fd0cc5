// SPDX-License-Identifier: GPL-2.0
/*
 * execve(): the traced process replaces itself with exec2 (in the same
 * directory, no C library); the trace and the single-step both follow the
 * process through exec to exec2's exit.
 */
#include <unistd.h>
#include "conf.h"

extern char **environ;

KNOWN long work(int n)
{
	long s = 0;

	while (n--)
		s += n % 7;
	return s;
}

/*
 * The length of @s, a byte at a time: libc's strlen() takes other branches
 * for other alignments of the string, and argv[0]'s alignment follows the
 * size of the environment, which is not the same under perf record, itrace
 * record and the single-stepper.
 */
KNOWN size_t length(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

int main(int argc, char **argv)
{
	char path[4096], *args[] = { path, NULL };
	size_t i, n = length(argv[0]);

	(void)argc;
	if (n < 5 || n >= sizeof(path))
		return 1;
	for (i = 0; i <= n; i++) {
		path[i] = argv[0][i];
		asm volatile("" ::: "memory");	/* not a memcpy() call */
	}
	path[n] = '2';		/* ".../exec" -> ".../exec2" */
	path[n + 1] = 0;
	work(20);
	execve(path, args, environ);
	return 1;
}
