// SPDX-License-Identifier: GPL-2.0
/*
 * A thread that moves itself from CPU to CPU while it is traced: HOPS times
 * it binds itself to the next online CPU (round robin; always CPU 0 on a
 * one-CPU guest) and runs spin() there, so on an SMP guest its trace is
 * written on every CPU in turn and must still decode as one flow.
 * Expectation: migrate.expect.  Prints "moves M" (how many times
 * sched_getcpu() changed), which the SMP run of `make check` checks.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <unistd.h>
#include "progs.h"

#define HOPS	16
#define N	1000

/* one conditional branch, the loop bottom: taken N - 1 times */
KNOWN long spin(long seed)
{
	long s = seed, i = 0;

	do {
		s = s * 31 + i;
		i++;
	} while (i < N);
	return s;
}

KNOWN int hop(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

int main(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), s = 0;
	int h, cpu, last = -1, moves = 0;

	if (ncpu < 1 || ncpu > CPU_SETSIZE) {
		fprintf(stderr, "migrate: %ld CPUs online\n", ncpu);
		return 1;
	}
	for (h = 0; h < HOPS; h++) {
		if (hop(h % ncpu)) {
			perror("migrate: sched_setaffinity");
			return 1;
		}
		cpu = sched_getcpu();
		if (last >= 0 && cpu != last)
			moves++;
		last = cpu;
		s = spin(s);
	}
	printf("cpus %ld moves %d sum %ld\n", ncpu, moves, s);
	return 0;
}
