// SPDX-License-Identifier: GPL-2.0
/*
 * Branch-dense user-mode work for the ToPA PMI checks: ITERS iterations
 * (default 1000000) of a loop with calls, returns and conditional
 * branches, traced into a buffer far smaller than the trace.
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void step(unsigned long i)
{
	if (i & 1)
		sink += i;
	else
		sink ^= i;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	unsigned long i;

	for (i = 0; i < n; i++)
		step(i);
	printf("pmi-spin %lu %lu\n", n, sink);
	return 0;
}
