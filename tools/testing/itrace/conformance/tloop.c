// SPDX-License-Identifier: GPL-2.0
/* Tight loops: a two-instruction countdown and a nested loop. */
#include "conf.h"

KNOWN long countdown(long n)
{
	asm volatile("1: dec %0; jnz 1b" : "+r"(n));
	return n;
}

KNOWN long nested(int n)
{
	long s = 0;
	int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			s += j;
	return s;
}

int main(void)
{
	long r = countdown(200) + nested(20);

	say("tloop\n");
	return r != 1140;
}
