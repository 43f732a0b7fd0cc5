// SPDX-License-Identifier: GPL-2.0
/* A fork child crashes with the limit it inherited: child_level1, child_level2. */
#include <sys/wait.h>
#include "crash.h"

KNOWN void child_level2(int *p)
{
	*p = 3;			/* NULL: SIGSEGV here */
}

KNOWN void child_level1(int *p)
{
	child_level2(p);
}

int main(void)
{
	int st;
	pid_t pid;

	crash_setup();
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		child_level1(crash_null);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	printf("child %d: %s %d\n", pid, WIFSIGNALED(st) ? "signal" : "exit",
	       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	return 0;
}
