// SPDX-License-Identifier: GPL-2.0
/*
 * For `make bench`, in the guest: what RLIMIT_ITRACE costs.
 *
 *   rlimit BYTES ROUNDS REPS COREDIR
 *
 * run:  a child runs the workload (ROUNDS rounds of branchy work) with
 *       RLIMIT_ITRACE unset, then set to BYTES, alternating, REPS each;
 *       one line "run_off NS" / "run_on NS" per run (CLOCK_MONOTONIC
 *       around the workload only).
 * dump: a child touches 4 MiB, sets the limit (or not), runs the
 *       workload (enough trace to fill 1 MiB) and crashes; the time from
 *       the fault to the end of waitpid() (the core dump is written in
 *       between) and the core size, "dump_off NS BYTES" / "dump_on NS BYTES", REPS each,
 *       alternating.  COREDIR is where core_pattern writes core.PID.
 */
#define _GNU_SOURCE

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define RLIMIT_ITRACE_NR	16

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static unsigned long work(unsigned long rounds)
{
	unsigned long i, j, sum = 0;

	for (i = 0; i < rounds; i++)
		for (j = 0; j < 100; j++) {
			if ((i * j * 2654435761u) & 0x80)
				sum += j;
			else
				sum ^= i;
			__asm__ volatile("" : "+r" (sum));
		}
	return sum;
}

static void set_limit(unsigned long bytes)
{
	struct rlimit r = { bytes, RLIM_INFINITY };

	if (syscall(SYS_prlimit64, 0, RLIMIT_ITRACE_NR, &r, NULL)) {
		perror("prlimit64(RLIMIT_ITRACE)");
		_exit(2);
	}
}

/* Shared with the parent: the child's timestamps. */
static volatile uint64_t *shared;

static int run(unsigned long bytes, unsigned long rounds, int dump)
{
	struct rlimit core = { RLIM_INFINITY, RLIM_INFINITY };
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (bytes)
			set_limit(bytes);
		if (dump) {
			char *mem = malloc(4 << 20);

			if (!mem)
				_exit(4);
			memset(mem, 1, 4 << 20);
			/*
			 * The 4 MiB must be in the core: without this the
			 * compiler drops malloc() and memset() (mem[0] is
			 * known), and the core was 0.45 MB.
			 */
			__asm__ volatile("" : : "r" (mem) : "memory");
			setrlimit(RLIMIT_CORE, &core);
			work(rounds);
			shared[0] = now_ns();
			*(volatile int *)(uintptr_t)mem[0] = 0;	/* 0x01010101 */
			_exit(3);
		}
		shared[0] = now_ns();
		work(rounds);
		shared[1] = now_ns();
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (dump) {
		shared[1] = now_ns();
		if (!WIFSIGNALED(status) || !WCOREDUMP(status)) {
			fprintf(stderr, "rlimit: no core dump (status 0x%x)\n", status);
			return -1;
		}
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "rlimit: workload failed (status 0x%x)\n", status);
		return -1;
	}
	return pid;
}

int main(int argc, char **argv)
{
	unsigned long bytes, rounds;
	const char *dir;
	int reps, i, k;

	if (argc != 5) {
		fprintf(stderr, "usage: rlimit BYTES ROUNDS REPS COREDIR\n");
		return 2;
	}
	bytes = strtoul(argv[1], NULL, 0);
	rounds = strtoul(argv[2], NULL, 0);
	reps = atoi(argv[3]);
	dir = argv[4];
	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return 2;

	run(0, rounds, 0);	/* warm up */
	for (i = 0; i < 2 * reps; i++) {
		int on = (i & 1) ^ ((i >> 1) & 1);

		if (run(on ? bytes : 0, rounds, 0) < 0)
			return 1;
		printf("run_%s %llu\n", on ? "on" : "off",
		       (unsigned long long)(shared[1] - shared[0]));
	}
	for (i = 0; i < 2 * reps; i++) {
		int on = (i & 1) ^ ((i >> 1) & 1);
		char path[4096];
		struct stat st;
		pid_t pid;

		pid = run(on ? bytes : 0, rounds, 1);
		if (pid < 0)
			return 1;
		snprintf(path, sizeof(path), "%s/core.%d", dir, pid);
		/* a pipe helper may still be writing: wait for a stable size */
		for (k = 0; k < 50 && stat(path, &st); k++)
			usleep(100000);
		if (k == 50) {
			fprintf(stderr, "rlimit: no %s\n", path);
			return 1;
		}
		printf("dump_%s %llu %lld\n", on ? "on" : "off",
		       (unsigned long long)(shared[1] - shared[0]),
		       (long long)st.st_size);
		unlink(path);
	}
	return 0;
}
