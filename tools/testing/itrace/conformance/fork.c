// SPDX-License-Identifier: GPL-2.0
/*
 * fork(): children that compute and exit; the parent (the traced and
 * stepped process: children are neither) waits for each.  No pid is
 * printed or compared: its digits would change the path through printf.
 */
#include <unistd.h>
#include <sys/wait.h>
#include "conf.h"

KNOWN int work(int n)
{
	int s = 0;

	while (n--)
		s += n & 3;
	return s;
}

int main(void)
{
	int i, st, ok = 0;

	for (i = 0; i < 2; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid)
			_exit(work(20 * (i + 1)) & 0x7f);
		if (waitpid(pid, &st, 0) == pid && WIFEXITED(st))
			ok += WEXITSTATUS(st) == (work(20 * (i + 1)) & 0x7f);
	}
	say("fork\n");
	return ok != 2;
}
