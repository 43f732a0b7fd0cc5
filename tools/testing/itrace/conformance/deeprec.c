// SPDX-License-Identifier: GPL-2.0
/*
 * Recursion 100 deep: far deeper than the 64-entry stack PT
 * uses for return compression, so most returns need a TIP of their own.
 */
#include "conf.h"

KNOWN long down(long n)
{
	if (n == 0)
		return 0;
	return n + down(n - 1);
}

int main(void)
{
	long s = 0;
	int i;

	for (i = 0; i < 1; i++)
		s += down(100);
	say("deeprec\n");
	return s != 5050;
}
