// SPDX-License-Identifier: GPL-2.0
/* Loops with known branch outcomes.  Expectation: loop.expect. */
#include <stdio.h>
#include "progs.h"

#define N 1000

long data[N];
long hits;

/* one conditional branch: the bottom of the do-while, 1000 times */
KNOWN long loop_sum(void)
{
	long s = 0, i = 0;

	do {
		s += data[i];
		i++;
	} while (i < N);
	return s;
}

KNOWN void hit(void)
{
	hits++;
}

/* i = 0, 3, ..., 999: 334 multiples of 3 */
KNOWN void count3(void)
{
	long i;

	for (i = 0; i < N; i++)
		if (data[i] % 3 == 0)
			hit();
}

int main(void)
{
	long i;

	for (i = 0; i < N; i++)
		data[i] = i;
	printf("sum = %ld\n", loop_sum());
	count3();
	printf("multiples of 3 = %ld\n", hits);
	return 0;
}
