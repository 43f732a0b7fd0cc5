// SPDX-License-Identifier: GPL-2.0
/*
 * Four threads call tick() 1000, 2000, 3000 and 4000 times (10,000 calls
 * in all) and move to the next CPU (hop()) every 250 calls, so on an SMP
 * guest each thread's trace is written on every CPU in turn.  Each thread
 * prints its own counts: "count TID FUNCTION N", which the per-thread
 * check (scripts/threads-verify.sh) compares with the decoded trace.
 * Expectation: threads.expect.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "progs.h"

#define NT	4
#define HOP	250

static long ncpu;
static volatile long sink;

KNOWN void tick(long i)
{
	sink += i;
}

KNOWN void hop(long cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % ncpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

struct work {
	long	idx, n, hops;
	pid_t	tid;
};

static void *worker(void *arg)
{
	struct work *w = arg;
	long i;

	w->tid = syscall(SYS_gettid);
	for (i = 0; i < w->n; i++) {
		if (i % HOP == 0) {
			hop(w->idx + i / HOP);
			w->hops++;
		}
		tick(i);
	}
	return NULL;
}

int main(void)
{
	struct work w[NT];
	pthread_t t[NT];
	int i;

	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	for (i = 0; i < NT; i++) {
		w[i] = (struct work){ .idx = i, .n = 1000 * (i + 1) };
		if (pthread_create(&t[i], NULL, worker, &w[i])) {
			perror("threads: pthread_create");
			return 1;
		}
	}
	for (i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < NT; i++) {
		printf("count %d tick %ld\n", w[i].tid, w[i].n);
		printf("count %d hop %ld\n", w[i].tid, w[i].hops);
	}
	return 0;
}
