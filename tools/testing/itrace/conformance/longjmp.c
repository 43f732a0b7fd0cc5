// SPDX-License-Identifier: GPL-2.0
/* setjmp/longjmp out of a deep call chain, and sigsetjmp/siglongjmp. */
#include <setjmp.h>
#include "conf.h"

static jmp_buf env;
static sigjmp_buf senv;

KNOWN void dive(int n)
{
	if (n < 0)
		return;
	if (n == 0)
		longjmp(env, 7);
	dive(n - 1);
}

KNOWN void sdive(int n)
{
	if (n < 0)
		return;
	if (n == 0)
		siglongjmp(senv, 3);
	sdive(n - 1);
}

int main(void)
{
	volatile int jumps = 0, i;

	for (i = 0; i < 5; i++) {
		int r = setjmp(env);

		if (!r)
			dive(i * 3);
		else
			jumps += r;
	}
	for (i = 0; i < 2; i++) {
		if (!sigsetjmp(senv, 1))
			sdive(20);
		else
			jumps++;
	}
	say("longjmp\n");
	return jumps != 37;
}
