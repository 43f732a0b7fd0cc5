// SPDX-License-Identifier: GPL-2.0
/* Indirect calls through a table.  Expectation: fptr.expect. */
#include <stdio.h>
#include "progs.h"

typedef long (*op_fn)(long);

KNOWN long op_add(long x) { return x + 3; }
KNOWN long op_sub(long x) { return x - 1; }
KNOWN long op_mul(long x) { return x * 2; }

op_fn ops[] = { op_add, op_sub, op_mul };

/* volatile: the compiler cannot turn the indirect call into a direct one */
op_fn volatile *table = ops;

KNOWN long apply(long i, long x)
{
	return table[i % 3](x);
}

int main(void)
{
	long i, x = 1;

	for (i = 0; i < 30; i++)
		x = apply(i, x) & 0xffff;
	printf("x = %ld\n", x);
	return 0;
}
