// SPDX-License-Identifier: GPL-2.0
/* Stack overflow through recursion: recurse() calls itself, 4 KiB a frame. */
#include <limits.h>
#include "crash.h"

static volatile long depth = LONG_MAX;	/* never reached */

KNOWN long recurse(long n)
{
	volatile char frame[4096];

	frame[0] = (char)n;
	frame[sizeof(frame) - 1] = (char)n;
	if (n < depth)
		return recurse(n + 1) + frame[0];
	return frame[0];
}

int main(void)
{
	crash_setup();
	return (int)recurse(0);
}
