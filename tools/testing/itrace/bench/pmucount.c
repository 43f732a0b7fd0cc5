// SPDX-License-Identifier: GPL-2.0
/*
 * pmucount PROG [ARGS...]: run PROG with the emulated CPU's counters
 * counting it, user and kernel mode, from its exec to its exit, as
 * `perf stat` would (instructions, branches, cycles, ref-cycles; inherited
 * by its threads), without perf's start-up; then print
 * "pmucount instructions=N branches=N cycles=N ref-cycles=N" on stderr.
 * For `make bench` (bench/pmu.sh): the workload's time with counters
 * counting against its time without.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static const struct { uint64_t config; const char *name; } ev[] = {
		{ PERF_COUNT_HW_INSTRUCTIONS, "instructions" },
		{ PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branches" },
		{ PERF_COUNT_HW_CPU_CYCLES, "cycles" },
		{ PERF_COUNT_HW_REF_CPU_CYCLES, "ref-cycles" },
	};
	int go[2], fd[4], i, status;
	pid_t pid;
	char c;

	if (argc < 2) {
		fprintf(stderr, "usage: pmucount PROG [ARGS...]\n");
		return 2;
	}
	if (pipe(go))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	close(go[0]);
	for (i = 0; i < 4; i++) {
		struct perf_event_attr attr;

		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = ev[i].config;
		attr.disabled = 1;
		attr.enable_on_exec = 1;
		attr.inherit = 1;
		fd[i] = syscall(SYS_perf_event_open, &attr, pid, -1, -1, 0);
		if (fd[i] < 0) {
			perror(ev[i].name);
			return 1;
		}
	}
	if (write(go[1], "g", 1) != 1 || waitpid(pid, &status, 0) != pid)
		return 1;
	fprintf(stderr, "pmucount");
	for (i = 0; i < 4; i++) {
		uint64_t v = 0;

		if (read(fd[i], &v, sizeof(v)) != sizeof(v))
			return 1;
		fprintf(stderr, " %s=%llu", ev[i].name, (unsigned long long)v);
	}
	fprintf(stderr, "\n");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
