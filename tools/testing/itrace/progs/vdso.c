// SPDX-License-Identifier: GPL-2.0
/*
 * Code in the [vdso]: clock_gettime() runs in the vdso, whose image the
 * recording carries.  Expectation: vdso.expect; decoding it at all (no
 * error) shows the vdso image was found.
 */
#include <stdio.h>
#include <time.h>
#include "progs.h"

KNOWN long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

int main(void)
{
	long t0 = now_ns(), t1 = now_ns(), t2 = now_ns();

	printf("monotonic: %s\n", t0 <= t1 && t1 <= t2 ? "ok" : "went backwards");
	return 0;
}
