// SPDX-License-Identifier: GPL-2.0
/*
 * crashexec BYTES PROG [ARGS...]: set RLIMIT_ITRACE to BYTES, then exec
 * PROG with CRASH_ITRACE=keep, so the trace in PROG's core dump comes from
 * the limit inherited across execve.
 */
#include "crash.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: crashexec BYTES PROG [ARGS...]\n");
		return 2;
	}
	if (set_itrace_limit(0, strtoull(argv[1], NULL, 0))) {
		perror("crashexec: prlimit(RLIMIT_ITRACE)");
		return 1;
	}
	setenv("CRASH_ITRACE", "keep", 1);
	execv(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
