// SPDX-License-Identifier: GPL-2.0
/*
 * A known loop that runs until it is killed (or for ARG1 rounds): each
 * round calls a() once and b() twice.  For the tests that attach to a
 * running program (record -p) and that end a recording with SIGTERM; it
 * writes its pid to ARG2 once it runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "progs.h"

static volatile long sink;

KNOWN void a(long i) { sink += i; }
KNOWN void b(long i) { sink ^= i; }

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 0, i;

	if (argc > 2) {
		FILE *f = fopen(argv[2], "w");

		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f)) {
			perror("spin: pid file");
			return 1;
		}
	}
	for (i = 0; !rounds || i < rounds; i++) {
		a(i);
		b(i);
		b(i + 1);
	}
	printf("rounds %ld\n", i);
	return 0;
}
