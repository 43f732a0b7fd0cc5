// SPDX-License-Identifier: GPL-2.0
/* Recursion: fib(10).  Expectation: fib.expect. */
#include <stdio.h>
#include "progs.h"

KNOWN long fib(long n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

int main(void)
{
	printf("fib(10) = %ld\n", fib(10));
	return 0;
}
