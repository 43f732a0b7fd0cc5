/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Crashing programs with known control flow for the RLIMIT_ITRACE tests
 * (tools/testing/itrace/guest/coredump.sh): each sets its own per-thread
 * trace limit first, as a program that wants its last branches in its
 * core dump would.  Environment: CRASH_ITRACE=BYTES (default 65536; 0 =
 * off), CRASH_ITRACE=keep: leave the limit as inherited.
 */
#ifndef ITRACE_CRASH_H
#define ITRACE_CRASH_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "progs.h"

#ifndef RLIMIT_ITRACE
#define RLIMIT_ITRACE	16
#endif

/* NULL, but the compiler cannot know it and drop the crash */
static int *volatile crash_null;

/* prlimit64 directly: the C library may not pass an unknown resource on */
static inline int set_itrace_limit(pid_t pid, unsigned long long bytes)
{
	unsigned long long lim[2] = { bytes, bytes };
	unsigned long long old[2];

	if (syscall(SYS_prlimit64, pid, RLIMIT_ITRACE, NULL, old) == 0 && old[1] > bytes)
		lim[1] = old[1];
	return syscall(SYS_prlimit64, pid, RLIMIT_ITRACE, lim, NULL);
}

static inline void crash_setup(void)
{
	const char *v = getenv("CRASH_ITRACE");
	unsigned long long bytes = v ? strtoull(v, NULL, 0) : 65536;

	if (v && !strcmp(v, "keep"))
		return;
	if (set_itrace_limit(0, bytes))
		fprintf(stderr, "crash: prlimit(RLIMIT_ITRACE, %llu): %s\n", bytes,
			strerror(errno));
}

#endif
