// SPDX-License-Identifier: GPL-2.0
/*
 * REP string instructions: one instruction for PT however many iterations
 * (single-stepping traps once per iteration: sstep writes it once).
 */
#include "conf.h"

static char a[4096], b[4096];

KNOWN void copy(char *d, const char *s, unsigned long n)
{
	asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

KNOWN void fill(char *d, int c, unsigned long n)
{
	asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
}

int main(void)
{
	int i;

	for (i = 0; i < 4; i++) {
		fill(a, 'x' + i, 10 * (i + 1));
		copy(b, a, 10 * (i + 1));
	}
	say("rep\n");
	return !(b[0] == 'x' + 3 && b[39] == 'x' + 3);
}
