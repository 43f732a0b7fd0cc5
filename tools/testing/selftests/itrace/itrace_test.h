/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the itrace kselftests.
 */
#ifndef ITRACE_TEST_H
#define ITRACE_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <linux/perf_event.h>

#define NOBODY		65534	/* uid and gid of the unprivileged tests */
#define PT_TYPE_FILE	"/sys/bus/event_source/devices/intel_pt/type"

static inline int sys_perf_event_open(struct perf_event_attr *attr,
				      pid_t pid, int cpu, int group_fd,
				      unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

static inline long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/* The PMU type of intel_pt, or -1 if there is none. */
static inline int pt_type(void)
{
	FILE *f = fopen(PT_TYPE_FILE, "r");
	int type;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);

	return type;
}

/* Read a file into buf (at most size - 1 bytes); -errno on error. */
static inline int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);

	return n < 0 ? n : 0;
}

/* Write str to a file in one write(); 0 or -errno. */
static inline int write_file(const char *path, const char *str)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, str, strlen(str));
	if (n < 0)
		n = -errno;
	close(fd);

	return n < 0 ? n : 0;
}

/* Run @fn in a child process; its return value is the exit status. */
static inline int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(fn());
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Drop root; changing credentials makes the process non-dumpable, which
 * would leave it without an RLIMIT_ITRACE trace (rlimit_itrace.c,
 * nondumpable_no_trace): undo that.
 */
static inline int become_nobody(void)
{
	if (setgid(NOBODY) || setuid(NOBODY))
		return -1;
	return prctl(PR_SET_DUMPABLE, 1);
}

#endif /* ITRACE_TEST_H */
