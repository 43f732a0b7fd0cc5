// SPDX-License-Identifier: GPL-2.0
/*
 * Returns within the return-compression stack's 64 entries: recursion 40
 * deep, where every return is a compressed one (a TNT bit, no TIP), and a
 * call chain that returns by a non-matching path (a ret to an address that
 * is not the call's, via a pushed return address) which PT must report
 * with a TIP despite compression.
 */
#include "conf.h"

KNOWN long up(long n)
{
	return n ? 1 + up(n - 1) : 0;
}

KNOWN long tramp(void)
{
	long r;

	/* push a return address of our own, then ret to it: not the caller's */
	asm volatile("lea 1f(%%rip), %0\n\tpush %0\n\tret\n1:" : "=r"(r) : : "memory");
	return 7;
}

int main(void)
{
	long s = 0;
	int i;

	for (i = 0; i < 3; i++)
		s += up(40) + tramp();
	say("retcomp\n");
	return s != 141;
}
