// SPDX-License-Identifier: GPL-2.0
/*
 * A known call graph for the samples with trace (itrace record -e): target()
 * is called from three call sites, caller_a() every 3rd round, caller_b()
 * every 5th and caller_c() every 7th of ROUNDS rounds, so an execute
 * breakpoint on target() takes 35, 21 and 15 samples whose traces end at
 * target() and whose last call is from those callers; then toucher()
 * writes one byte to each of PAGES fresh pages: PAGES page faults at its
 * store, each after a conditional branch of the loop.  getppid() is called
 * CALLS_GETPPID times from syscaller(), for a tracepoint.  It prints what
 * it did, for the host to compare.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "progs.h"

#define ROUNDS		105
#define PAGES		32
#define CALLS_GETPPID	9

static volatile unsigned long sink;

KNOWN void target(int i)
{
	sink += i;
}

KNOWN void caller_a(int i)
{
	if (i % 3 == 0)
		target(i);
}

KNOWN void caller_b(int i)
{
	if (i % 5 == 0)
		target(i);
}

KNOWN void caller_c(int i)
{
	if (i % 7 == 0)
		target(i);
}

KNOWN void toucher(char *p, long n, long page)
{
	long k;

	for (k = 0; k < n; k++)
		p[k * page] = (char)k;
}

KNOWN void syscaller(int n)
{
	int i;

	for (i = 0; i < n; i++)
		sink += getppid();
}

int main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p;
	int i;

	for (i = 1; i <= ROUNDS; i++) {
		caller_a(i);
		caller_b(i);
		caller_c(i);
	}
	p = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	toucher(p, PAGES, page);
	syscaller(CALLS_GETPPID);
	printf("target caller_a %d caller_b %d caller_c %d\n", ROUNDS / 3, ROUNDS / 5, ROUNDS / 7);
	printf("toucher pages %d\n", PAGES);
	printf("syscaller getppid %d\n", CALLS_GETPPID);
	return 0;
}
