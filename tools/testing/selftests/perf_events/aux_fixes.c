// SPDX-License-Identifier: GPL-2.0-only
/*
 * Regression tests for two AUX area bugs, on any PMU with an AUX area
 * and PERF_PMU_CAP_AUX_PAUSE (intel_pt):
 *
 * aux_pause_without_aux_event: an event that pauses AUX loses its AUX
 * event when the group leader is closed and goes into ERROR state; once
 * enabled again, its overflows must not WARN in perf_event_aux_pause().
 *
 * aux_mmap_refund: the AUX pages are refunded to the user they were
 * charged to, also when another user mapped the event's data pages.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/perf_event.h>

#include "../kselftest_harness.h"

#define AUX_PMU		"intel_pt"
#define TAINT_WARN	9	/* include/linux/panic.h: TAINT_WARN, 'W' */
#define NOBODY		65534

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid,
			       int cpu, int group_fd, unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/* Read one integer from a file; -1 with errno set if it cannot. */
static int read_long(const char *path, long *val)
{
	FILE *f = fopen(path, "r");
	int ret;

	if (!f)
		return -1;
	ret = fscanf(f, "%ld", val) == 1 ? 0 : -1;
	fclose(f);
	if (ret)
		errno = EINVAL;
	return ret;
}

static int write_long(const char *path, long val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", val) > 0 ? 0 : -1;
	if (fclose(f))
		ret = -1;
	return ret;
}

/* The perf type of the AUX PMU, or -1 if the machine has none. */
static int aux_pmu_type(void)
{
	long type;

	if (read_long("/sys/bus/event_source/devices/" AUX_PMU "/type", &type))
		return -1;
	return type;
}

static void aux_attr(struct perf_event_attr *attr, int type)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
}

static void spin_ms(long ms)
{
	struct timespec start, now;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000 +
		 (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

TEST(aux_pause_without_aux_event)
{
	struct perf_event_attr attr;
	long tainted;
	__u64 count = 0;
	int type, leader, sib;

	type = aux_pmu_type();
	if (type < 0)
		SKIP(return, "no " AUX_PMU " PMU");
	ASSERT_EQ(0, read_long("/proc/sys/kernel/tainted", &tainted));
	if (tainted & (1L << TAINT_WARN))
		SKIP(return, "the kernel has WARNed before: taint W set");

	aux_attr(&attr, type);
	leader = sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (leader < 0 && (errno == EACCES || errno == EPERM))
		SKIP(return, "no permission to open " AUX_PMU ": %s",
		     strerror(errno));
	ASSERT_LE(0, leader) TH_LOG("open " AUX_PMU ": %s", strerror(errno));

	/* A sampling sibling that pauses the leader's trace on overflow */
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = 100000;	/* ns: 100 us */
	attr.aux_pause = 1;
	sib = sys_perf_event_open(&attr, 0, -1, leader, 0);
	ASSERT_LE(0, sib) TH_LOG("open the aux_pause sibling: %s",
				 strerror(errno));
	spin_ms(5);

	/* The AUX event goes away: the sibling is put into ERROR */
	ASSERT_EQ(0, close(leader));
	EXPECT_EQ(0, read(sib, &count, sizeof(count)))
		TH_LOG("the sibling is not in ERROR state");

	/* Enabled again, it overflows with no AUX event to pause */
	ASSERT_EQ(0, ioctl(sib, PERF_EVENT_IOC_ENABLE, 0));
	spin_ms(50);
	ASSERT_EQ((ssize_t)sizeof(count), read(sib, &count, sizeof(count)));
	EXPECT_LE(10 * attr.sample_period, count)
		TH_LOG("the sibling counted %llu ns: too few overflows",
		       (unsigned long long)count);
	ASSERT_EQ(0, close(sib));

	ASSERT_EQ(0, read_long("/proc/sys/kernel/tainted", &tainted));
	EXPECT_EQ(0, tainted & (1L << TAINT_WARN))
		TH_LOG("the kernel WARNed (see dmesg)");
}

/*
 * Map and unmap @rounds times @aux_pages AUX pages of @fd at @aux_off as
 * user nobody with RLIMIT_MEMLOCK 0, so that any charge beyond the
 * perf_event_mlock_kb allowance fails with EPERM. Exits with 0, or with
 * the round that failed.
 */
static void __attribute__((noreturn))
map_as_nobody(int fd, off_t aux_off, size_t aux_size, int rounds)
{
	struct rlimit rl = { 0, 0 };
	int i;

	if (setrlimit(RLIMIT_MEMLOCK, &rl) ||
	    setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY)) {
		perror("aux_mmap_refund: become nobody");
		_exit(255);
	}
	for (i = 1; i <= rounds; i++) {
		void *p = mmap(NULL, aux_size, PROT_READ | PROT_WRITE,
			       MAP_SHARED, fd, aux_off);

		if (p == MAP_FAILED) {
			fprintf(stderr, "aux_mmap_refund: round %d of %d: mmap: %s\n",
				i, rounds, strerror(errno));
			_exit(i);
		}
		if (munmap(p, aux_size)) {
			perror("aux_mmap_refund: munmap");
			_exit(255);
		}
	}
	_exit(0);
}

#define MLOCK_KB	"/proc/sys/kernel/perf_event_mlock_kb"
#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"

FIXTURE(aux_mmap)
{
	long	mlock_kb;
	long	paranoid;
	int	fd;
	void	*base;
	size_t	base_size;
};

FIXTURE_SETUP(aux_mmap)
{
	self->fd = -1;
	self->base = MAP_FAILED;
	self->mlock_kb = -1;
	self->paranoid = -2;
	if (geteuid())
		SKIP(return, "needs root: changes sysctls and its uid");
	ASSERT_EQ(0, read_long(MLOCK_KB, &self->mlock_kb));
	ASSERT_EQ(0, read_long(PARANOID, &self->paranoid));
}

FIXTURE_TEARDOWN(aux_mmap)
{
	if (self->base != MAP_FAILED)
		munmap(self->base, self->base_size);
	if (self->fd >= 0)
		close(self->fd);
	if (self->mlock_kb >= 0)
		EXPECT_EQ(0, write_long(MLOCK_KB, self->mlock_kb));
	if (self->paranoid >= -1)
		EXPECT_EQ(0, write_long(PARANOID, self->paranoid));
}

TEST_F(aux_mmap, refund)
{
	long page = sysconf(_SC_PAGESIZE);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct perf_event_mmap_page *up;
	struct perf_event_attr attr;
	const long aux_pages = 8, mlock_kb = 128;
	long limit_pages;
	int type, rounds, status;
	pid_t pid;

	type = aux_pmu_type();
	if (type < 0)
		SKIP(return, "no " AUX_PMU " PMU");

	/*
	 * Each user may lock mlock_kb per online CPU of perf buffers; past
	 * that, RLIMIT_MEMLOCK applies unless perf is not paranoid (-1).
	 */
	ASSERT_EQ(0, write_long(MLOCK_KB, mlock_kb));
	if (self->paranoid < 0)
		ASSERT_EQ(0, write_long(PARANOID, 0));
	limit_pages = mlock_kb * 1024 / page * cpus;
	ASSERT_LE(aux_pages, limit_pages);
	rounds = limit_pages / aux_pages + 2;

	/* root opens the event and maps its data pages */
	aux_attr(&attr, type);
	attr.disabled = 1;
	self->fd = sys_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open " AUX_PMU ": %s", strerror(errno));
	self->base_size = 2 * page;
	self->base = mmap(NULL, self->base_size, PROT_READ | PROT_WRITE,
			  MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->base) TH_LOG("mmap: %s", strerror(errno));
	up = self->base;
	up->aux_offset = self->base_size;
	up->aux_size = aux_pages * page;

	/*
	 * nobody maps and unmaps the AUX pages more than it may at once.
	 * (perf mappings are VM_DONTCOPY: the child does not have @up.)
	 */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		map_as_nobody(self->fd, self->base_size, aux_pages * page,
			      rounds);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status))
		TH_LOG("the child was killed by signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("round %d of %d failed: the AUX pages were not refunded to nobody",
		       WEXITSTATUS(status), rounds);
}

TEST_HARNESS_MAIN
