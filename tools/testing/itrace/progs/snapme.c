// SPDX-License-Identifier: GPL-2.0
/*
 * For record --snapshot: calls alpha() 3000 times, sends SIGUSR2 to its
 * parent (itrace record: a snapshot), waits a second, calls beta() 3000
 * times and exits (the last snapshot).  The first snapshot holds every
 * call of alpha(); the two together every call of each.
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "progs.h"

#define N	3000

static volatile long sink;

KNOWN void alpha(long i) { sink += i; }
KNOWN void beta(long i) { sink -= i; }

int main(void)
{
	struct timespec ts = { 1, 0 };
	long i;

	for (i = 0; i < N; i++)
		alpha(i);
	if (kill(getppid(), SIGUSR2)) {
		perror("snapme: kill");
		return 1;
	}
	nanosleep(&ts, NULL);
	for (i = 0; i < N; i++)
		beta(i);
	printf("alpha %d beta %d\n", N, N);
	return 0;
}
