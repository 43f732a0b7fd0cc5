// SPDX-License-Identifier: GPL-2.0
/*
 * CPU-bound workload for `make bench`: calls, indirect calls, data-dependent
 * conditional branches and loops, no system calls inside the timed part.
 *
 *   work [ROUNDS [CPU [THREADS]]]
 *
 * With CPU (>= 0), it first moves itself to that CPU alone
 * (sched_setaffinity), so a reader pinned elsewhere never shares its CPU.
 * With THREADS, that many threads share the rounds (the bench of itrace
 * record's per-CPU buffers, tfd.sh TFD_MODE=threads); the time is from
 * their creation to the last join.
 * prints one line "work rounds=R ns=NANOSECONDS sum=S", NANOSECONDS being
 * the guest's CLOCK_MONOTONIC around the work (under TCG the guest clock
 * follows host time).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static __thread unsigned long seed = 12345;

static NOINLINE unsigned long rnd(void)
{
	seed = seed * 6364136223846793005UL + 1442695040888963407UL;
	return seed >> 33;
}

static NOINLINE long op_add(long a, long b)
{
	return a + b;
}

static NOINLINE long op_xor(long a, long b)
{
	return a ^ b;
}

static NOINLINE long op_sub(long a, long b)
{
	return a - b;
}

static NOINLINE long op_mix(long a, long b)
{
	return (a << 3) ^ (b >> 2);
}

static long (*const ops[4])(long, long) = { op_add, op_xor, op_sub, op_mix };

static NOINLINE long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static NOINLINE long branches(int n)
{
	long s = 0;
	int i;

	for (i = 0; i < n; i++) {
		unsigned long r = rnd();

		if (r & 1)
			s += r;
		else
			s -= i;
		if ((r & 6) == 6)
			s ^= r >> 4;
	}
	return s;
}

static NOINLINE long indirect(int n)
{
	long s = 1;
	int i;

	for (i = 0; i < n; i++)
		s = ops[rnd() & 3](s, i);
	return s;
}

static NOINLINE long loops(int n)
{
	static __thread long a[256];
	long s = 0;
	int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < 256; j++) {
			a[j] += j ^ i;
			s += a[j];
		}
	return s;
}

static void *run(void *arg)
{
	long rounds = (long)arg, r, sum = 0;

	for (r = 0; r < rounds; r++) {
		sum += fib(12);
		sum += branches(200);
		sum += indirect(200);
		sum += loops(2);
	}
	return (void *)sum;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1000, sum = 0;
	int i, nt = argc > 3 ? atoi(argv[3]) : 0;
	pthread_t t[64];
	struct timespec t0, t1;
	void *ret;

	if (nt < 0 || nt > 64) {
		fprintf(stderr, "work: 0 to 64 threads\n");
		return 1;
	}
	if (argc > 2 && atoi(argv[2]) >= 0) {
		int cpu = atoi(argv[2]);
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("work: sched_setaffinity");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!nt) {
		sum = (long)run((void *)rounds);
	} else {
		for (i = 0; i < nt; i++)
			if (pthread_create(&t[i], NULL, run, (void *)(rounds / nt))) {
				perror("work: pthread_create");
				return 1;
			}
		for (i = 0; i < nt; i++) {
			pthread_join(t[i], &ret);
			sum += (long)ret;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("work rounds=%ld ns=%lld sum=%ld\n", rounds,
	       (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec), sum);
	return 0;
}
