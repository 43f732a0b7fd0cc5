/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the itrace kselftests.
 */
#ifndef ITRACE_TEST_H
#define ITRACE_TEST_H

#include <stdio.h>
#include <unistd.h>

#include <sys/syscall.h>
#include <sys/types.h>

#include <linux/perf_event.h>

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

#endif /* ITRACE_TEST_H */
