// SPDX-License-Identifier: GPL-2.0
/*
 * vDSO calls that run in the [vdso] (at a fixed address without ASLR), no
 * system call: time(), getcpu() and clock_getres().  Not clock_gettime()
 * or gettimeofday(): their seqcount loop retries whenever a timer tick
 * updated the vDSO data meanwhile, and a single step takes longer than a
 * tick in the guest (TCG, debug kernel), so stepped they never finish --
 * vdso_hres.c in the README.  Their decode is covered by ../progs/vdso.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <time.h>
#include "conf.h"

int main(void)
{
	struct timespec ts;
	unsigned int cpu;
	int i, ok = 0;

	for (i = 0; i < 3; i++) {
		ok += time(NULL) > 0;
		ok += getcpu(&cpu, NULL) == 0;
		ok += clock_getres(CLOCK_MONOTONIC, &ts) == 0;
	}
	say("vdsocall\n");
	return ok != 9;
}
