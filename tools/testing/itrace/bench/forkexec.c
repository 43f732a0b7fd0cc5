// SPDX-License-Identifier: GPL-2.0
/*
 * For `make bench`, in the guest: does a process that toggles
 * RLIMIT_ITRACE slow down fork() and execve() elsewhere on the machine?
 *
 *   forkexec THREADS BYTES ROUNDS REPS
 *
 * REPS times, in turn: ROUNDS fork+execve of /bin/true by this process,
 * timed one by one (CLOCK_MONOTONIC, fork to waitpid()), either alone
 * ("alone P99_NS"), or while another process with THREADS threads sets
 * its RLIMIT_ITRACE to BYTES and back to 0 as fast as it can ("beside
 * P99_NS"), or while the same process toggles RLIMIT_CORE instead ("busy
 * P99_NS": the other CPU as busy with prlimit() calls, no trace made; what
 * the neighbour costs without itrace). The toggling process is started
 * before each timed run and killed after it; it runs on the last CPU,
 * this one on CPU 0.
 */
#define _GNU_SOURCE

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define RLIMIT_ITRACE_NR	16

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *park(void *arg __attribute__((unused)))
{
	for (;;)
		pause();
	return NULL;
}

/* The process beside: THREADS threads, the limit toggled until killed */
static pid_t toggler(long threads, int resource, unsigned long bytes,
		     int cpu, int ready)
{
	struct rlimit on = { bytes, RLIM_INFINITY }, off = { 0, RLIM_INFINITY };
	unsigned long n = 0;
	pthread_t t;
	pid_t pid;
	long i;

	pid = fork();
	if (pid)
		return pid;
	pin(cpu);
	for (i = 1; i < threads; i++)
		if (pthread_create(&t, NULL, park, NULL))
			_exit(1);
	if (syscall(SYS_prlimit64, 0, resource, &on, NULL)) {
		perror("forkexec: prlimit");
		_exit(2);
	}
	if (write(ready, "r", 1) != 1)
		_exit(3);
	for (;; n++) {
		syscall(SYS_prlimit64, 0, resource, n & 1 ? &on : &off, NULL);
	}
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ROUNDS fork+exec, the 99th percentile of their times */
static uint64_t p99(unsigned long rounds, uint64_t *t)
{
	unsigned long i;
	int status;
	pid_t pid;

	for (i = 0; i < rounds; i++) {
		uint64_t t0 = now_ns();

		pid = fork();
		if (!pid) {
			execl("/bin/true", "true", NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || status) {
			fprintf(stderr, "forkexec: /bin/true failed\n");
			exit(1);
		}
		t[i] = now_ns() - t0;
	}
	qsort(t, rounds, sizeof(*t), cmp);
	return t[rounds * 99 / 100];
}

int main(int argc, char **argv)
{
	long threads, cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long bytes, rounds, reps, r;
	int p[2];
	uint64_t *t;
	char c;

	if (argc != 5) {
		fprintf(stderr, "usage: forkexec THREADS BYTES ROUNDS REPS\n");
		return 2;
	}
	threads = strtol(argv[1], NULL, 0);
	bytes = strtoul(argv[2], NULL, 0);
	rounds = strtoul(argv[3], NULL, 0);
	reps = strtoul(argv[4], NULL, 0);
	t = calloc(rounds, sizeof(*t));
	if (!t || !rounds || threads < 1)
		return 2;
	pin(0);

	for (r = 0; r < 3 * reps; r++) {
		static const char *const mode[] = { "alone", "beside", "busy" };
		pid_t pid = 0;

		if (r % 3) {
			if (pipe(p))
				return 1;
			pid = toggler(threads, r % 3 == 1 ? RLIMIT_ITRACE_NR :
				      RLIMIT_CORE, bytes, cpus - 1, p[1]);
			close(p[1]);
			if (pid < 0 || read(p[0], &c, 1) != 1) {
				fprintf(stderr, "forkexec: the toggler failed\n");
				return 1;
			}
			close(p[0]);
		}
		printf("%s %llu\n", mode[r % 3],
		       (unsigned long long)p99(rounds, t));
		fflush(stdout);
		if (pid) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
	}
	return 0;
}
