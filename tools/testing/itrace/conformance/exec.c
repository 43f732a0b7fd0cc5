// SPDX-License-Identifier: GPL-2.0
/*
 * execve(): the traced process replaces itself with exec2 (in the same
 * directory, no C library); the trace and the single-step both follow the
 * process through exec to exec2's exit.
 */
#include <string.h>
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

int main(int argc, char **argv)
{
	char path[4096], *args[] = { path, NULL };
	size_t n = strlen(argv[0]);

	(void)argc;
	if (n < 5 || n >= sizeof(path))
		return 1;
	memcpy(path, argv[0], n + 1);
	path[n] = '2';		/* ".../exec" -> ".../exec2" */
	path[n + 1] = 0;
	work(20);
	execve(path, args, environ);
	return 1;
}
