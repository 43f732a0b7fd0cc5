// SPDX-License-Identifier: GPL-2.0
/*
 * Can this machine count instructions in hardware?  Opens, on itself, the
 * event that upstream's perf_events/remove_on_exec opens in its fixture
 * (PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, sampling, inherit,
 * remove_on_exec, sigtrap).  Exit status 0 if it can; otherwise 1, with
 * the reason on stdout, one line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sys/syscall.h>

#include <linux/perf_event.h>

int main(void)
{
	struct perf_event_attr attr = {
		.type		= PERF_TYPE_HARDWARE,
		.size		= sizeof(attr),
		.config		= PERF_COUNT_HW_INSTRUCTIONS,
		.sample_period	= 1000,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
		.disabled	= 1,
		.inherit	= 1,
		.remove_on_exec	= 1,
		.sigtrap	= 1,
	};
	int fd;

	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		printf("no hardware instruction counter: perf_event_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS): %s\n",
		       strerror(errno));
		return 1;
	}
	close(fd);
	printf("hardware instruction counter: yes\n");
	return 0;
}
