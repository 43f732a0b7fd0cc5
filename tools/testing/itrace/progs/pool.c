// SPDX-License-Identifier: GPL-2.0
/*
 * A pool that creates and joins threads: 5 rounds of 3 threads; thread k
 * of round r calls work() (r + 1) * 100 + 10 * k times, 4650 calls in
 * all, each thread a new one.  Each thread prints "count TID work N".
 * Expectation: pool.expect.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "progs.h"

#define ROUNDS	5
#define NT	3

static volatile long sink;

KNOWN void work(long i)
{
	sink ^= i;
}

struct job {
	long	n;
	pid_t	tid;
};

static void *run(void *arg)
{
	struct job *j = arg;
	long i;

	j->tid = syscall(SYS_gettid);
	for (i = 0; i < j->n; i++)
		work(i);
	return NULL;
}

int main(void)
{
	struct job j[ROUNDS][NT];
	pthread_t t[NT];
	int r, k;

	for (r = 0; r < ROUNDS; r++) {
		for (k = 0; k < NT; k++) {
			j[r][k] = (struct job){ .n = (r + 1) * 100 + 10 * k };
			if (pthread_create(&t[k], NULL, run, &j[r][k])) {
				perror("pool: pthread_create");
				return 1;
			}
		}
		for (k = 0; k < NT; k++)
			pthread_join(t[k], NULL);
	}
	for (r = 0; r < ROUNDS; r++)
		for (k = 0; k < NT; k++)
			printf("count %d work %ld\n", j[r][k].tid, j[r][k].n);
	return 0;
}
