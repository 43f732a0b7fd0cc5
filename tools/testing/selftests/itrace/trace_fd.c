// SPDX-License-Identifier: GPL-2.0
/*
 * The itrace trace fd: perf_event_open(NULL, -1, -1, event_fd,
 * PERF_FLAG_FD_ITRACE) and the mapping of the trace through it.
 *
 * Tests that need an itrace PMU use intel_pt and are skipped when
 * /sys/bus/event_source/devices/intel_pt does not exist.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <poll.h>
#include <sched.h>

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <linux/capability.h>
#include <linux/perf_event.h>

#include "../kselftest_harness.h"
#include "itrace_test.h"

/* Set in the environment of the traced child, see traced_child(). */
#define CHILD_ENV	"ITRACE_SELFTEST_CHILD"

#define RB_PAGES	8	/* perf stream: 1 + RB_PAGES pages */
#define TRACE_PAGES	256	/* trace: 1 + TRACE_PAGES pages */

static int trace_fd_open(int event_fd)
{
	return sys_perf_event_open(NULL, -1, -1, event_fd, PERF_FLAG_FD_ITRACE);
}

/*
 * The traced program: re-executed as this binary with CHILD_ENV set, it
 * runs a loop with a data-dependent branch and exits before the harness.
 */
static unsigned long branchy(unsigned long n)
{
	unsigned long i, sum = 0;

	for (i = 0; !n || i < n; i++) {
		if (i % 3)
			sum += i;
		else
			sum ^= i;
		/* keep the loop and its branch */
		asm volatile("" : "+r" (sum));
	}

	return sum;
}

static void __attribute__((constructor)) traced_child(void)
{
	const char *env = getenv(CHILD_ENV);
	unsigned long n;

	if (!env)
		return;

	/* CHILD_ENV is "1" or the number of iterations, 0 for forever */
	n = strtoul(env, NULL, 0);
	if (n == 1)
		n = 1000;
	_exit(branchy(n) ? 0 : 1);
}

static void pt_attr(struct perf_event_attr *attr, int type)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->disabled = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
}

static void *map_fd(int fd, size_t pages, int prot, off_t offset)
{
	return mmap(NULL, pages * page_size(), prot, MAP_SHARED, fd, offset);
}

TEST(software_event_einval)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= PERF_TYPE_SOFTWARE,
		.config		= PERF_COUNT_SW_DUMMY,
		.disabled	= 1,
		.exclude_kernel	= 1,
	};
	int fd;

	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (fd < 0)
		SKIP(return, "no software event: %s", strerror(errno));

	EXPECT_EQ(-1, trace_fd_open(fd));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST(bad_event_fd_ebadf)
{
	int pipefd[2];

	EXPECT_EQ(-1, trace_fd_open(-1));
	EXPECT_EQ(EBADF, errno);

	/* Not open */
	EXPECT_EQ(-1, trace_fd_open(INT_MAX));
	EXPECT_EQ(EBADF, errno);

	/* Not a perf event */
	ASSERT_EQ(0, pipe(pipefd));
	EXPECT_EQ(-1, trace_fd_open(pipefd[0]));
	EXPECT_EQ(EBADF, errno);
	close(pipefd[0]);
	close(pipefd[1]);
}

struct pt_event {
	int		type;	/* of intel_pt */
	int		fd;	/* the event */
	int		tfd;	/* its trace fd */
	void		*rb;	/* its perf stream */
	__u32		watermark; /* attr.aux_watermark for start_child() */
};

/* An intel_pt event of this task, its perf stream not yet mapped. */
FIXTURE(pt)
{
	struct pt_event	ev;
};

FIXTURE_SETUP(pt)
{
	struct perf_event_attr attr;

	self->ev.fd = -1;
	self->ev.tfd = -1;
	self->ev.rb = MAP_FAILED;

	self->ev.type = pt_type();
	if (self->ev.type < 0)
		SKIP(return, NO_PT);

	pt_attr(&attr, self->ev.type);
	self->ev.fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, self->ev.fd) TH_LOG("intel_pt event: %s", strerror(errno));
}

FIXTURE_TEARDOWN(pt)
{
	if (self->ev.rb != MAP_FAILED)
		munmap(self->ev.rb, (1 + RB_PAGES) * page_size());
	if (self->ev.tfd >= 0)
		close(self->ev.tfd);
	if (self->ev.fd >= 0)
		close(self->ev.fd);
}

/* Map the perf stream and open the trace fd. */
static void pt_map_rb(struct __test_metadata *_metadata, struct pt_event *ev)
{
	ev->rb = map_fd(ev->fd, 1 + RB_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, ev->rb);
	ev->tfd = trace_fd_open(ev->fd);
	ASSERT_LE(0, ev->tfd) TH_LOG("trace fd: %s", strerror(errno));
}

TEST_F(pt, attr_not_null_einval)
{
	struct perf_event_attr attr;

	pt_attr(&attr, self->ev.type);
	EXPECT_EQ(-1, sys_perf_event_open(&attr, -1, -1, self->ev.fd,
					  PERF_FLAG_FD_ITRACE));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(pt, pid_not_minus_one_einval)
{
	EXPECT_EQ(-1, sys_perf_event_open(NULL, 0, -1, self->ev.fd,
					  PERF_FLAG_FD_ITRACE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, sys_perf_event_open(NULL, getpid(), -1, self->ev.fd,
					  PERF_FLAG_FD_ITRACE));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(pt, cpu_not_minus_one_einval)
{
	EXPECT_EQ(-1, sys_perf_event_open(NULL, -1, 0, self->ev.fd,
					  PERF_FLAG_FD_ITRACE));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(pt, other_flags_einval)
{
	static const unsigned long other[] = {
		PERF_FLAG_FD_NO_GROUP, PERF_FLAG_FD_OUTPUT, PERF_FLAG_PID_CGROUP,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(other); i++) {
		EXPECT_EQ(-1, sys_perf_event_open(NULL, -1, -1, self->ev.fd,
						  PERF_FLAG_FD_ITRACE | other[i]))
			TH_LOG("flags %#lx", other[i]);
		EXPECT_EQ(EINVAL, errno);
	}
}

TEST_F(pt, cloexec)
{
	int tfd, fl;

	tfd = sys_perf_event_open(NULL, -1, -1, self->ev.fd,
				  PERF_FLAG_FD_ITRACE | PERF_FLAG_FD_CLOEXEC);
	ASSERT_LE(0, tfd);
	fl = fcntl(tfd, F_GETFD);
	EXPECT_TRUE(fl & FD_CLOEXEC);
	close(tfd);

	self->ev.tfd = trace_fd_open(self->ev.fd);
	ASSERT_LE(0, self->ev.tfd);
	fl = fcntl(self->ev.tfd, F_GETFD);
	EXPECT_FALSE(fl & FD_CLOEXEC);
}

TEST_F(pt, trace_fd_is_not_an_event_ebadf)
{
	self->ev.tfd = trace_fd_open(self->ev.fd);
	ASSERT_LE(0, self->ev.tfd);
	EXPECT_EQ(-1, trace_fd_open(self->ev.tfd));
	EXPECT_EQ(EBADF, errno);
}

TEST_F(pt, mmap_before_event_einval)
{
	self->ev.tfd = trace_fd_open(self->ev.fd);
	ASSERT_LE(0, self->ev.tfd);
	EXPECT_EQ(MAP_FAILED, map_fd(self->ev.tfd, 1 + TRACE_PAGES,
				     PROT_READ | PROT_WRITE, 0));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(pt, mmap_offset_einval)
{
	pt_map_rb(_metadata, &self->ev);
	EXPECT_EQ(MAP_FAILED, map_fd(self->ev.tfd, 1 + TRACE_PAGES,
				     PROT_READ | PROT_WRITE, page_size()));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(pt, mmap_size_einval)
{
	static const size_t pages[] = { 1, 1 + 3, 1 + 6, TRACE_PAGES };
	unsigned int i;

	pt_map_rb(_metadata, &self->ev);
	for (i = 0; i < ARRAY_SIZE(pages); i++) {
		EXPECT_EQ(MAP_FAILED, map_fd(self->ev.tfd, pages[i],
					     PROT_READ | PROT_WRITE, 0))
			TH_LOG("%zu pages", pages[i]);
		EXPECT_EQ(EINVAL, errno);
	}
}

TEST_F(pt, mmap_private_einval)
{
	pt_map_rb(_metadata, &self->ev);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, (1 + TRACE_PAGES) * page_size(),
				   PROT_READ, MAP_PRIVATE, self->ev.tfd, 0));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(pt, second_mapping_ebusy)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	void *trace;
	int tfd2;

	pt_map_rb(_metadata, &self->ev);
	trace = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, trace);

	/* Through the same trace fd */
	EXPECT_EQ(MAP_FAILED, map_fd(self->ev.tfd, 1 + TRACE_PAGES,
				     PROT_READ | PROT_WRITE, 0));
	EXPECT_EQ(EBUSY, errno);

	/* Through another trace fd of the same event */
	tfd2 = trace_fd_open(self->ev.fd);
	ASSERT_LE(0, tfd2);
	EXPECT_EQ(MAP_FAILED, map_fd(tfd2, 1 + TRACE_PAGES, PROT_READ, 0));
	EXPECT_EQ(EBUSY, errno);

	/* Once unmapped, the trace can be mapped again, in the other mode */
	ASSERT_EQ(0, munmap(trace, len));
	trace = map_fd(tfd2, 1 + TRACE_PAGES, PROT_READ, 0);
	ASSERT_NE(MAP_FAILED, trace);
	EXPECT_EQ(0, munmap(trace, len));
	close(tfd2);
}

/* Map the AUX area of the event fd at aux_offset, the classic way. */
static void *map_classic_aux(struct perf_event_mmap_page *rb, int fd,
			     size_t pages)
{
	rb->aux_offset = (1 + RB_PAGES) * page_size();
	rb->aux_size = pages * page_size();

	return map_fd(fd, pages, PROT_READ | PROT_WRITE, rb->aux_offset);
}

TEST_F(pt, classic_aux_then_trace_ebusy)
{
	void *aux;

	pt_map_rb(_metadata, &self->ev);
	aux = map_classic_aux(self->ev.rb, self->ev.fd, TRACE_PAGES);
	ASSERT_NE(MAP_FAILED, aux) TH_LOG("AUX mmap: %s", strerror(errno));

	EXPECT_EQ(MAP_FAILED, map_fd(self->ev.tfd, 1 + TRACE_PAGES,
				     PROT_READ | PROT_WRITE, 0));
	EXPECT_EQ(EBUSY, errno);

	EXPECT_EQ(0, munmap(aux, TRACE_PAGES * page_size()));
}

TEST_F(pt, trace_then_classic_aux_ebusy)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	void *trace, *aux;

	pt_map_rb(_metadata, &self->ev);
	trace = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, trace);

	EXPECT_EQ(MAP_FAILED, map_classic_aux(self->ev.rb, self->ev.fd, TRACE_PAGES));
	EXPECT_EQ(EBUSY, errno);

	/* Once the trace is unmapped, the classic AUX area maps again. */
	ASSERT_EQ(0, munmap(trace, len));
	aux = map_classic_aux(self->ev.rb, self->ev.fd, TRACE_PAGES);
	ASSERT_NE(MAP_FAILED, aux);
	EXPECT_EQ(0, munmap(aux, TRACE_PAGES * page_size()));
}

TEST_F(pt, user_page)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	struct perf_event_mmap_page *pg, *rb;

	pt_map_rb(_metadata, &self->ev);
	pg = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, pg);

	EXPECT_EQ(page_size(), pg->data_offset);
	EXPECT_EQ(TRACE_PAGES * page_size(), pg->data_size);
	EXPECT_EQ(0, pg->data_head);
	EXPECT_EQ(0, pg->data_tail);
	EXPECT_EQ(0, pg->aux_offset);
	EXPECT_EQ(0, pg->aux_size);
	EXPECT_TRUE(pg->cap_bit0_is_deprecated != 0);
	EXPECT_EQ(0, pg->index);

	/* The same layout as the event's user page, which has no AUX area */
	rb = self->ev.rb;
	EXPECT_EQ(rb->size, pg->size);
	EXPECT_EQ(rb->version, pg->version);
	EXPECT_EQ(rb->compat_version, pg->compat_version);
	EXPECT_EQ(0, rb->aux_size);

	/* The reader writes data_tail. */
	pg->data_tail = 0;

	EXPECT_EQ(0, munmap(pg, len));
}

TEST_F(pt, ioctl)
{
	pt_map_rb(_metadata, &self->ev);
	EXPECT_EQ(0, ioctl(self->ev.tfd, PERF_EVENT_IOC_ENABLE, 0));
	EXPECT_EQ(0, ioctl(self->ev.tfd, PERF_EVENT_IOC_DISABLE, 0));
	EXPECT_EQ(-1, ioctl(self->ev.tfd, PERF_EVENT_IOC_RESET, 0));
	EXPECT_EQ(ENOTTY, errno);
}

/* A moved mapping still holds the trace; a partial munmap() fails. */
TEST_F(pt, mremap_and_split)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	struct perf_event_mmap_page *pg;
	char *trace, *to;

	pt_map_rb(_metadata, &self->ev);
	trace = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, trace);

	EXPECT_EQ(-1, munmap(trace + len - page_size(), page_size()));
	EXPECT_EQ(EINVAL, errno);

	to = mmap(NULL, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, to);
	to += len;	/* away from the old place */
	pg = mremap(trace, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	ASSERT_EQ((void *)to, (void *)pg);
	EXPECT_EQ(TRACE_PAGES * page_size(), pg->data_size);

	/* Still mapped, through the new place only */
	EXPECT_EQ(MAP_FAILED, map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ, 0));
	EXPECT_EQ(EBUSY, errno);
	ASSERT_EQ(0, munmap(pg, len));

	trace = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ, 0);
	ASSERT_NE(MAP_FAILED, trace);
	EXPECT_EQ(0, munmap(trace, len));
	munmap(to - len, len);
}

/* The trace mapping keeps the event's buffer, as an AUX mapping does. */
TEST_F(pt, munmap_perf_stream_first)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	struct perf_event_mmap_page *pg;

	pt_map_rb(_metadata, &self->ev);
	pg = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, pg);

	ASSERT_EQ(0, munmap(self->ev.rb, (1 + RB_PAGES) * page_size()));
	self->ev.rb = MAP_FAILED;
	EXPECT_EQ(TRACE_PAGES * page_size(), pg->data_size);
	EXPECT_EQ(0, munmap(pg, len));

	/* Both map again, in order. */
	self->ev.rb = map_fd(self->ev.fd, 1 + RB_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, self->ev.rb);
	pg = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, pg);
	EXPECT_EQ(0, munmap(pg, len));
}

/* VmPin of this process, in kB */
static long vm_pinned_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);

	return kb;
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long val;

	if (!f)
		return LONG_MIN;
	if (fscanf(f, "%ld", &val) != 1)
		val = LONG_MIN;
	fclose(f);

	return val;
}

/* What munmap() of the trace uncharges is what mmap() charged. */
TEST_F(pt, accounting_balanced)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	long pinned, pinned_mapped;
	void *trace;

	pt_map_rb(_metadata, &self->ev);
	pinned = vm_pinned_kb();
	ASSERT_LE(0, pinned);

	trace = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, trace);
	pinned_mapped = vm_pinned_kb();
	EXPECT_LE(pinned, pinned_mapped);
	TH_LOG("VmPin %ld kB, %ld kB with the trace mapped", pinned,
	       pinned_mapped);
	ASSERT_EQ(0, munmap(trace, len));
	EXPECT_EQ(pinned, vm_pinned_kb());

	/* Again, so that a leak of the user's perf_mlock would show as EPERM */
	trace = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, trace);
	EXPECT_EQ(pinned_mapped, vm_pinned_kb());
	ASSERT_EQ(0, munmap(trace, len));
}

static int drop_cap_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);

	return syscall(SYS_capset, &hdr, data);
}

/* Over perf_event_mlock_kb and RLIMIT_MEMLOCK without CAP_IPC_LOCK */
TEST_F(pt, over_mlock_limit_eperm)
{
	long mlock_kb, limit_pages, pages = 1;
	struct rlimit rl = { 0, 0 };
	void *trace;

	mlock_kb = read_long("/proc/sys/kernel/perf_event_mlock_kb");
	if (mlock_kb == LONG_MIN)
		SKIP(return, "no /proc/sys/kernel/perf_event_mlock_kb");
	if (read_long("/proc/sys/kernel/perf_event_paranoid") < 0)
		SKIP(return, "perf_event_paranoid < 0: no locked memory limit");

	pt_map_rb(_metadata, &self->ev);

	/* More pages than the user's allowance on all online CPUs */
	limit_pages = mlock_kb * 1024 / page_size() *
		      sysconf(_SC_NPROCESSORS_ONLN);
	while (pages <= limit_pages)
		pages *= 2;

	ASSERT_EQ(0, drop_cap_ipc_lock());
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));

	trace = map_fd(self->ev.tfd, 1 + pages, PROT_READ | PROT_WRITE, 0);
	EXPECT_EQ(MAP_FAILED, trace) TH_LOG("%ld pages mapped", pages);
	EXPECT_EQ(EPERM, errno);
	if (trace != MAP_FAILED)
		munmap(trace, (1 + pages) * page_size());
}

/* Trace this process for a while through the trace fd; returns data_head. */
static unsigned long long trace_self(struct perf_event_mmap_page *pg, int tfd)
{
	unsigned long i, sum = 0;

	if (ioctl(tfd, PERF_EVENT_IOC_ENABLE, 0))
		return 0;
	for (i = 0; i < 1000; i++) {
		if (i & 1)
			sum += i;
		asm volatile("" : "+r" (sum));
	}
	if (ioctl(tfd, PERF_EVENT_IOC_DISABLE, 0))
		return 0;

	return __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
}

/*
 * fork() does not copy the mappings (VM_DONTCOPY, as perf's own): in the
 * child the trace and the perf stream are not mapped, and reading them
 * faults; the parent's go on working, and its trace keeps growing.
 */
TEST_F(pt, fork_does_not_copy_mappings)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	struct perf_event_mmap_page *pg;
	unsigned long long head;
	int status;
	pid_t pid;

	pt_map_rb(_metadata, &self->ev);
	pg = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, pg);
	head = trace_self(pg, self->ev.tfd);
	ASSERT_LT(0, head);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		unsigned char vec;

		/* mincore() fails with ENOMEM on an address not mapped */
		if (!mincore(pg, page_size(), &vec) || errno != ENOMEM)
			_exit(10);
		if (!mincore(self->ev.rb, page_size(), &vec) || errno != ENOMEM)
			_exit(11);
		/* Must fault */
		_exit(__atomic_load_n(&pg->data_head, __ATOMIC_RELAXED) ?
		      12 : 13);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status))
		TH_LOG("child exited with %d", WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		EXPECT_EQ(SIGSEGV, WTERMSIG(status));

	EXPECT_LT(head, trace_self(pg, self->ev.tfd));
	EXPECT_EQ(0, munmap(pg, len));
}

/*
 * The trace fd asks for nothing beyond the event: a user at
 * perf_event_paranoid 2 who may open a user-mode PT event of its own gets
 * its trace fd, maps it within its locked-memory allowance and traces;
 * kernel tracing and CPU-wide events stay EACCES, as perf_event_open()
 * says for any event.
 */
#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define TRACE_PAGES_USER 8	/* well within perf_event_mlock_kb */

static int unprivileged_child(void)
{
	struct perf_event_mmap_page *rb, *pg;
	struct perf_event_attr attr;
	int type = pt_type(), fd, tfd;

	if (become_nobody())
		return 2;
	pt_attr(&attr, type);
	/* First: an event of this task would make it EBUSY (exclusive PMU) */
	if (sys_perf_event_open(&attr, -1, 0, -1, 0) >= 0 || errno != EACCES)
		return 9;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (fd < 0)
		return 3;
	rb = map_fd(fd, 1 + RB_PAGES, PROT_READ | PROT_WRITE, 0);
	if (rb == MAP_FAILED)
		return 4;
	tfd = trace_fd_open(fd);
	if (tfd < 0)
		return 5;
	pg = map_fd(tfd, 1 + TRACE_PAGES_USER, PROT_READ | PROT_WRITE, 0);
	if (pg == MAP_FAILED)
		return 6;
	if (!trace_self(pg, tfd))
		return 7;

	attr.exclude_kernel = 0;
	if (sys_perf_event_open(&attr, 0, -1, -1, 0) >= 0 || errno != EACCES)
		return 8;

	return 0;
}

/* Not a fixture test: the fixture's event would make CPU-wide ones EBUSY */
TEST(unprivileged_trace_fd)
{
	char paranoid[32];

	if (pt_type() < 0)
		SKIP(return, NO_PT);
	if (geteuid())
		SKIP(return, "needs root to set perf_event_paranoid");
	ASSERT_EQ(0, read_file(PARANOID, paranoid, sizeof(paranoid)));
	ASSERT_EQ(0, write_file(PARANOID, "2\n"));
	EXPECT_EQ(0, in_child(unprivileged_child));
	EXPECT_EQ(0, write_file(PARANOID, paranoid));
}

/*
 * Trace this process between PERF_EVENT_IOC_ENABLE and _DISABLE issued on
 * the trace fd. A little trace, far below the default watermark (half the
 * buffer), does not make the trace fd readable.
 */
TEST_F(pt, trace_self_ioctl_poll)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	struct pollfd pfd = { .events = POLLIN };
	struct perf_event_mmap_page *pg;
	unsigned long long head;

	pt_map_rb(_metadata, &self->ev);
	pg = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, pg);

	pfd.fd = self->ev.tfd;
	EXPECT_EQ(0, poll(&pfd, 1, 0));

	head = trace_self(pg, self->ev.tfd);
	TH_LOG("data_head %llu", head);
	ASSERT_LT(0, head);
	ASSERT_GT(TRACE_PAGES * page_size() / 2, head);
	EXPECT_EQ(0, poll(&pfd, 1, 0));

	EXPECT_EQ(0, munmap(pg, len));
}

/* Reopen the fixture's event with attr.aux_watermark = @watermark. */
static void pt_reopen_watermark(struct __test_metadata *_metadata,
				struct pt_event *ev, __u32 watermark)
{
	struct perf_event_attr attr;

	close(ev->fd);
	pt_attr(&attr, ev->type);
	attr.aux_watermark = watermark;
	ev->fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, ev->fd) TH_LOG("intel_pt event: %s", strerror(errno));
}

#define POLL_WATERMARK	4096

/*
 * EPOLLIN exactly while at least attr.aux_watermark bytes are unread:
 * trace a little at a time until there are, then read part of it.
 */
TEST_F(pt, poll_watermark)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	struct pollfd pfd = { .events = POLLIN };
	struct perf_event_mmap_page *pg;
	unsigned long long head = 0;
	int rounds = 0;

	pt_reopen_watermark(_metadata, &self->ev, POLL_WATERMARK);
	pt_map_rb(_metadata, &self->ev);
	pg = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, pg);
	pfd.fd = self->ev.tfd;

	while (head < POLL_WATERMARK && rounds++ < 1000) {
		EXPECT_EQ(0, poll(&pfd, 1, 0)) TH_LOG("data_head %llu", head);
		head = trace_self(pg, self->ev.tfd);
	}
	TH_LOG("data_head %llu after %d rounds", head, rounds);
	ASSERT_LE(POLL_WATERMARK, head);
	ASSERT_GT(TRACE_PAGES * page_size(), head);

	EXPECT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_EQ(POLLIN, pfd.revents);

	/* One byte short of the watermark unread: not readable */
	__atomic_store_n(&pg->data_tail, head - POLL_WATERMARK + 1,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(0, poll(&pfd, 1, 0));

	/* Exactly the watermark unread: readable (data_tail moves back) */
	__atomic_store_n(&pg->data_tail, head - POLL_WATERMARK,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(1, poll(&pfd, 1, 0));

	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
	EXPECT_EQ(0, poll(&pfd, 1, 0));

	EXPECT_EQ(0, munmap(pg, len));
}

/* Read-only (overwrite) mapping: there is no reader position, no EPOLLIN */
TEST_F(pt, poll_read_only_never_readable)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	struct pollfd pfd = { .events = POLLIN };
	struct perf_event_mmap_page *pg;
	unsigned long long head = 0;
	int rounds = 0;

	pt_reopen_watermark(_metadata, &self->ev, POLL_WATERMARK);
	pt_map_rb(_metadata, &self->ev);
	pg = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ, 0);
	ASSERT_NE(MAP_FAILED, pg);
	pfd.fd = self->ev.tfd;

	while (head < POLL_WATERMARK && rounds++ < 1000)
		head = trace_self(pg, self->ev.tfd);
	TH_LOG("data_head %llu after %d rounds", head, rounds);
	ASSERT_LE(POLL_WATERMARK, head);
	EXPECT_EQ(0, poll(&pfd, 1, 0));

	EXPECT_EQ(0, munmap(pg, len));
}

/* Not mapped: nothing to read, and the event is alive. */
TEST_F(pt, poll_unmapped)
{
	struct pollfd pfd = { .events = POLLIN };

	pt_map_rb(_metadata, &self->ev);
	pfd.fd = self->ev.tfd;
	EXPECT_EQ(0, poll(&pfd, 1, 0));
}

/* A CPU-wide event has a trace fd as well; trace this task on CPU 0. */
TEST_F(pt, trace_cpu_wide)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	struct perf_event_mmap_page *pg;
	struct perf_event_attr attr;
	unsigned long long head;
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));

	close(self->ev.fd);
	pt_attr(&attr, self->ev.type);
	self->ev.fd = sys_perf_event_open(&attr, -1, 0, -1, 0);
	if (self->ev.fd < 0 && (errno == EACCES || errno == EPERM))
		SKIP(return, "CPU-wide events not allowed: %s", strerror(errno));
	ASSERT_LE(0, self->ev.fd) TH_LOG("intel_pt event: %s", strerror(errno));

	pt_map_rb(_metadata, &self->ev);
	pg = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, pg);

	head = trace_self(pg, self->ev.tfd);
	TH_LOG("data_head %llu", head);
	ASSERT_LE(PSB_LEN, head);
	EXPECT_TRUE(is_psb((char *)pg + pg->data_offset));
	EXPECT_EQ(0, munmap(pg, len));
}

/* Each mapping of the trace is a stream of its own, from data_head 0. */
TEST_F(pt, remap_starts_afresh)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	struct perf_event_mmap_page *pg;
	unsigned long long head;
	int round;

	pt_map_rb(_metadata, &self->ev);
	for (round = 0; round < 3; round++) {
		pg = map_fd(self->ev.tfd, 1 + TRACE_PAGES,
			    PROT_READ | PROT_WRITE, 0);
		ASSERT_NE(MAP_FAILED, pg);
		EXPECT_EQ(0, pg->data_head);

		head = trace_self(pg, self->ev.tfd);
		TH_LOG("round %d: data_head %llu", round, head);
		ASSERT_LE(PSB_LEN, head);
		EXPECT_GE(pg->data_size, head);
		EXPECT_TRUE(is_psb((char *)pg + pg->data_offset));
		ASSERT_EQ(0, munmap(pg, len));
	}
}

/*
 * Map and unmap the trace while the event is enabled on this task: each
 * munmap() stops a live writer, each mapping is picked up when the event
 * is scheduled in again.
 */
TEST_F(pt, remap_while_tracing)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	struct perf_event_mmap_page *pg;
	unsigned long i, sum = 0;
	int round, traced = 0;

	pt_map_rb(_metadata, &self->ev);
	ASSERT_EQ(0, ioctl(self->ev.tfd, PERF_EVENT_IOC_ENABLE, 0));
	for (round = 0; round < 100; round++) {
		pg = map_fd(self->ev.tfd, 1 + TRACE_PAGES,
			    round & 1 ? PROT_READ : PROT_READ | PROT_WRITE, 0);
		ASSERT_NE(MAP_FAILED, pg);
		sched_yield();
		for (i = 0; i < 100; i++) {
			sum += i & 1;
			asm volatile("" : "+r" (sum));
		}
		if (__atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE))
			traced++;
		ASSERT_EQ(0, munmap(pg, len));
	}
	EXPECT_EQ(0, ioctl(self->ev.tfd, PERF_EVENT_IOC_DISABLE, 0));
	TH_LOG("%d of 100 mappings saw trace before munmap()", traced);

	/* Closing the event fd while enabled and mapped is fine too. */
	pg = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, pg);
	ASSERT_EQ(0, ioctl(self->ev.tfd, PERF_EVENT_IOC_ENABLE, 0));
	ASSERT_EQ(0, close(self->ev.fd));
	self->ev.fd = -1;
	sched_yield();
	ASSERT_EQ(0, munmap(pg, len));
}

/* The event and the trace fd go away in either order, mapped or not. */
TEST_F(pt, close_event_fd_first)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	void *trace;

	pt_map_rb(_metadata, &self->ev);
	trace = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, trace);

	ASSERT_EQ(0, close(self->ev.fd));
	self->ev.fd = -1;
	ASSERT_EQ(0, munmap(self->ev.rb, (1 + RB_PAGES) * page_size()));
	self->ev.rb = MAP_FAILED;

	/* The trace fd still refers to the event. */
	EXPECT_EQ(0, ioctl(self->ev.tfd, PERF_EVENT_IOC_ENABLE, 0));
	EXPECT_EQ(0, ioctl(self->ev.tfd, PERF_EVENT_IOC_DISABLE, 0));

	EXPECT_EQ(0, munmap(trace, len));
	EXPECT_EQ(0, close(self->ev.tfd));
	self->ev.tfd = -1;
}

TEST_F(pt, close_trace_fd_first)
{
	size_t len = (1 + TRACE_PAGES) * page_size();
	struct perf_event_mmap_page *pg;

	pt_map_rb(_metadata, &self->ev);
	pg = map_fd(self->ev.tfd, 1 + TRACE_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, pg);

	/* The mapping outlives the fd. */
	ASSERT_EQ(0, close(self->ev.tfd));
	self->ev.tfd = -1;
	EXPECT_EQ(TRACE_PAGES * page_size(), pg->data_size);

	EXPECT_EQ(0, close(self->ev.fd));
	self->ev.fd = -1;
	EXPECT_EQ(0, munmap(pg, len));
}

/*
 * Trace a child from its exec() to its exit: pid = child, cpu = -1,
 * enable_on_exec. Returns the trace mapping, the child's exit status in
 * *status.
 */
static pid_t
start_child(struct __test_metadata *_metadata, struct pt_event *ev,
	    int prot, size_t pages, const char *iters,
	    struct perf_event_mmap_page **trace);

static struct perf_event_mmap_page *
trace_child(struct __test_metadata *_metadata, struct pt_event *ev, int prot,
	    int *status)
{
	struct perf_event_mmap_page *pg;
	pid_t pid;

	pid = start_child(_metadata, ev, prot, TRACE_PAGES, "1", &pg);
	ASSERT_EQ(pid, waitpid(pid, status, 0));

	return pg;
}

/*
 * Fork a child running traced_child() for @iters iterations ("0": until
 * killed), traced from its exec(): pid = child, cpu = -1, enable_on_exec,
 * a trace mapping of @pages pages with @prot in *@trace. Returns the
 * child's pid.
 */
static pid_t
start_child(struct __test_metadata *_metadata, struct pt_event *ev,
	    int prot, size_t pages, const char *iters,
	    struct perf_event_mmap_page **trace)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pg;
	int go;
	pid_t pid;

	pid = fork_self_child(CHILD_ENV, iters, 0, &go);
	ASSERT_LE(0, pid);

	/* The fixture's event is not used here. */
	close(ev->fd);
	pt_attr(&attr, ev->type);
	attr.enable_on_exec = 1;
	attr.aux_watermark = ev->watermark;
	ev->fd = sys_perf_event_open(&attr, pid, -1, -1, 0);
	if (ev->fd < 0)
		kill(pid, SIGKILL);
	ASSERT_LE(0, ev->fd) TH_LOG("intel_pt event: %s", strerror(errno));

	pt_map_rb(_metadata, ev);
	pg = map_fd(ev->tfd, 1 + pages, prot, 0);
	if (pg == MAP_FAILED)
		kill(pid, SIGKILL);
	ASSERT_NE(MAP_FAILED, pg) TH_LOG("trace mmap: %s", strerror(errno));
	*trace = pg;

	ASSERT_EQ(1, write(go, "g", 1));
	close(go);

	return pid;
}

TEST_F(pt, trace_child_writable)
{
	struct pollfd pfd = { .events = POLLIN };
	struct perf_event_mmap_page *pg;
	unsigned long long head;
	unsigned char *data;
	int status;

	pg = trace_child(_metadata, &self->ev, PROT_READ | PROT_WRITE, &status);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x", status);

	/* The traced task is gone: hang up. */
	pfd.fd = self->ev.tfd;
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_TRUE(pfd.revents & POLLHUP);

	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	TH_LOG("data_head %llu", head);
	ASSERT_LT(0, head);
	/* Stop mode: the trace never overwrites itself. */
	EXPECT_GE(pg->data_size, head);

	data = (unsigned char *)pg + pg->data_offset;
	ASSERT_LE(PSB_LEN, head);
	EXPECT_TRUE(is_psb(data))
		TH_LOG("trace starts %02x %02x %02x %02x, not a PSB",
		       data[0], data[1], data[2], data[3]);

	/* The event's perf stream has the AUX records of exactly that trace */
	EXPECT_EQ((long long)head, aux_record_bytes(self->ev.rb));

	/* The reader consumed it all. */
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);

	EXPECT_EQ(0, munmap(pg, (1 + TRACE_PAGES) * page_size()));
}

TEST_F(pt, trace_child_read_only)
{
	struct perf_event_mmap_page *pg;
	unsigned long long head;
	int status;

	pg = trace_child(_metadata, &self->ev, PROT_READ, &status);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x", status);

	EXPECT_EQ(TRACE_PAGES * page_size(), pg->data_size);
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	TH_LOG("data_head %llu", head);
	/*
	 * Overwrite mode: data_head is where the trace ends; counting
	 * the wraps too is not done yet.
	 */
	EXPECT_LT(0, head);

	EXPECT_EQ(0, munmap(pg, (1 + TRACE_PAGES) * page_size()));
}

#define STOP_PAGES	2	/* a trace buffer that fills quickly */
#define STOPS		4	/* stop and resume this many times */
#define STOP_TIMEOUT_MS	60000

/*
 * Stop mode: a 2-page buffer fills, tracing stops with exactly one
 * PERF_RECORD_ITRACE_LOST at the offset where the trace stopped (data_head),
 * and resumes there once the reader has drained and enabled the event.
 */
TEST_F(pt, stop_mode_itrace_lost)
{
	struct perf_event_mmap_page *pg;
	struct stop_state st = { 0 };
	unsigned long long head;
	int waited = 0, seen = 0;
	pid_t pid;

	pid = start_child(_metadata, &self->ev, PROT_READ | PROT_WRITE,
			  STOP_PAGES, "0", &pg);

	/* Each stop is resumed by one drain and one ENABLE, nothing else */
	while (st.lost < STOPS && !st.bad && waited < STOP_TIMEOUT_MS) {
		usleep(100 * 1000);
		waited += 100;
		read_stream(self->ev.rb, pg, &st);
		head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
		if (st.lost != seen) {
			/* Stopped: drain everything, then resume. */
			seen = st.lost;
			__atomic_store_n(&pg->data_tail, head,
					 __ATOMIC_RELEASE);
			ioctl(self->ev.tfd, PERF_EVENT_IOC_ENABLE, 0);
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	read_stream(self->ev.rb, pg, &st);

	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	TH_LOG("%d ITRACE_LOST, %d AUX TRUNCATED, last at %llu, data_head %llu, %d ms",
	       st.lost, st.truncated, st.last_lost, head, waited);
	EXPECT_EQ(0, st.bad);
	EXPECT_LE(STOPS, st.lost);
	/* Mainline's PERF_RECORD_AUX still says the trace was truncated */
	EXPECT_LE(1, st.truncated);
	/*
	 * Each stop after a full drain is at the end of the last ToPA region
	 * (a page here) that fits: at most a page short of a full buffer.
	 */
	EXPECT_LE(st.lost * (unsigned long long)(STOP_PAGES - 1) * page_size(),
		  head);

	EXPECT_EQ(0, munmap(pg, (1 + STOP_PAGES) * page_size()));
}

/*
 * poll() in stop mode, with a watermark of the whole buffer: the trace fd
 * becomes readable when the buffer is full, or when the trace stopped with
 * less than the watermark unread (the driver stops at the end of a region,
 * so some room can stay unused); it hangs up when the traced task is gone.
 */
/*
 * A stop lands where the buffer is full or one byte short of it: when the
 * traced task is switched out with exactly one byte left, perf's
 * perf_aux_output_begin() finds no room at switch-in (CIRC_SPACE() keeps
 * one byte free) and stops the trace there. The driver never starts into
 * that byte; freeing more room lets it run to the end of its region.
 */
static int stop_point(unsigned long long head, unsigned long long full)
{
	return head == full || head == full - 1;
}

TEST_F(pt, poll_stop_mode)
{
	unsigned long long head, size = STOP_PAGES * page_size();
	struct pollfd pfd = { .events = POLLIN };
	struct perf_event_mmap_page *pg;
	struct stop_state st = { 0 };
	int lost;
	pid_t pid;

	self->ev.watermark = size;
	pid = start_child(_metadata, &self->ev, PROT_READ | PROT_WRITE,
			  STOP_PAGES, "0", &pg);
	pfd.fd = self->ev.tfd;

	/*
	 * Woken by the full buffer, with one loss record at data_head (it
	 * was written before the wake-up).
	 */
	EXPECT_EQ(1, poll(&pfd, 1, STOP_TIMEOUT_MS));
	EXPECT_EQ(POLLIN, pfd.revents);
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	EXPECT_TRUE(stop_point(head, size)) TH_LOG("data_head %llu", head);
	read_stream(self->ev.rb, pg, &st);
	EXPECT_EQ(1, st.lost) {
		usleep(100 * 1000);
		read_stream(self->ev.rb, pg, &st);
		TH_LOG("data_head %llu; 100 ms later %llu, %d ITRACE_LOST",
		       head, __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE),
		       st.lost);
	}
	EXPECT_EQ(0, st.bad);

	/*
	 * Read 100 bytes and enable: 100 bytes of room are less than a region,
	 * so the trace stays stopped, with less than the watermark unread,
	 * and the trace fd stays readable. No second loss record. (Stopped
	 * one byte short, the region's last byte is room: the trace runs to
	 * the end of the buffer and stops there, one more loss record.)
	 */
	lost = head == size ? 1 : 2;
	__atomic_store_n(&pg->data_tail, 100, __ATOMIC_RELEASE);
	EXPECT_EQ(0, ioctl(self->ev.tfd, PERF_EVENT_IOC_ENABLE, 0));
	usleep(200 * 1000);
	EXPECT_EQ(size, __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE));
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_EQ(POLLIN, pfd.revents);
	read_stream(self->ev.rb, pg, &st);
	EXPECT_EQ(lost, st.lost);
	EXPECT_EQ(0, st.bad);

	/* Read it all: not readable; enable: full again, readable again */
	__atomic_store_n(&pg->data_tail, size, __ATOMIC_RELEASE);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	/* One ENABLE restarts it, wherever the task runs */
	EXPECT_EQ(0, ioctl(self->ev.tfd, PERF_EVENT_IOC_ENABLE, 0));
	EXPECT_EQ(1, poll(&pfd, 1, STOP_TIMEOUT_MS));
	EXPECT_EQ(POLLIN, pfd.revents);
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	EXPECT_TRUE(stop_point(head, 2 * size)) TH_LOG("data_head %llu", head);
	read_stream(self->ev.rb, pg, &st);
	EXPECT_EQ(lost + 1, st.lost);
	EXPECT_EQ(0, st.bad);

	/* The traced task is gone: EPOLLHUP alone, as on the event fd */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_EQ(POLLHUP, pfd.revents);

	EXPECT_EQ(0, munmap(pg, (1 + STOP_PAGES) * page_size()));
}

/*
 * Stop mode with the traced task alone on CPU 1 and the reader on CPU 0.
 * The task is never switched out, so after a stop nothing but the reader's
 * PERF_EVENT_IOC_ENABLE restarts the trace: the event stays active with its
 * PMU stopped, and perf's own disable of a stop waits for a sched-out. Each
 * drain and one ENABLE must make the buffer fill again, well within
 * RESTART_TIMEOUT_MS. Needs two CPUs.
 */
#define RESTART_TIMEOUT_MS	5000

TEST_F(pt, stop_mode_enable_restarts_other_cpu)
{
	unsigned long long head, last = 0, size = STOP_PAGES * page_size();
	struct pollfd pfd = { .events = POLLIN };
	struct perf_event_mmap_page *pg;
	struct stop_state st = { 0 };
	cpu_set_t old, one;
	int round, n;
	pid_t pid;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU online");
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(old), &old));
	CPU_ZERO(&one);
	CPU_SET(1, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));

	/* The child inherits CPU 1; the reader then moves to CPU 0. */
	self->ev.watermark = size;
	pid = start_child(_metadata, &self->ev, PROT_READ | PROT_WRITE,
			  STOP_PAGES, "0", &pg);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	EXPECT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	pfd.fd = self->ev.tfd;

	for (round = 0; round < STOPS; round++) {
		n = poll(&pfd, 1, round ? RESTART_TIMEOUT_MS : STOP_TIMEOUT_MS);
		head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
		EXPECT_EQ(1, n) TH_LOG("stop %d: none after %d ms (data_head %llu)",
				       round, round ? RESTART_TIMEOUT_MS :
				       STOP_TIMEOUT_MS, head);
		if (n != 1)
			break;
		EXPECT_EQ(POLLIN, pfd.revents);
		/* A stop after a full drain: at most a region short of full */
		EXPECT_LE(last + (STOP_PAGES - 1) * page_size(), head);
		last = head;
		read_stream(self->ev.rb, pg, &st);
		__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
		EXPECT_EQ(0, ioctl(self->ev.tfd, PERF_EVENT_IOC_ENABLE, 0));
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	read_stream(self->ev.rb, pg, &st);
	TH_LOG("%d stops, %d ITRACE_LOST, data_head %llu", round, st.lost,
	       __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE));
	EXPECT_EQ(0, st.bad);
	EXPECT_LE(STOPS, st.lost);
	EXPECT_EQ(0, sched_setaffinity(0, sizeof(old), &old));
	EXPECT_EQ(0, munmap(pg, (1 + STOP_PAGES) * page_size()));
}

/* Trace @n iterations of branchy() of our own; then data_head. */
static unsigned long long self_run(int tfd, struct perf_event_mmap_page *pg,
				   unsigned long n)
{
	ioctl(tfd, PERF_EVENT_IOC_ENABLE, 0);
	branchy(n);
	ioctl(tfd, PERF_EVENT_IOC_DISABLE, 0);

	return __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
}

/*
 * Stop mode never writes past data_tail + data_size, even when the room
 * left ends less than a page beyond the page of data_head and neither is
 * page aligned (the driver must put its STOP at the end of the region of
 * data_head; it put it a lap further, behind data_head, and the trace
 * overwrote unread data until the PMI of the next region boundary).
 *
 * With a 2-page buffer stopped at a page boundary P: data_tail = P - 4095
 * leaves 4096 bytes of room, so the trace runs; stop it after a little at
 * P + x (0 < x < 4096) by DISABLE, then ENABLE: the room is 4096 - x bytes,
 * ending one byte into the next page. The trace must stop at the end of the
 * page of P + x.
 *
 * The test traces itself, a known loop between ENABLE and DISABLE, so the
 * amount of trace is its own to choose, not the scheduler's.
 */
TEST_F(pt, stop_mode_room_ends_in_next_page)
{
	unsigned long long head, tail, p, size = STOP_PAGES * page_size();
	unsigned long long psz = page_size();
	struct perf_event_mmap_page *pg;
	unsigned long n = 1000;
	int tries = 0, i;

	pt_map_rb(_metadata, &self->ev);
	pg = map_fd(self->ev.tfd, 1 + STOP_PAGES, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, pg) TH_LOG("trace mmap: %s", strerror(errno));

	/*
	 * The first stop: the buffer is full. Stopped one byte short of it
	 * (see stop_point()), free a page: it runs to the next page boundary.
	 */
	tail = 0;
	head = self_run(self->ev.tfd, pg, 0x10000);
	while ((head < size || head % psz) && tries++ < 100) {
		if (head - tail == size - 1) {
			tail += psz;
			__atomic_store_n(&pg->data_tail, tail,
					 __ATOMIC_RELEASE);
		}
		head = self_run(self->ev.tfd, pg, 0x10000);
	}
	ASSERT_EQ(0, head % psz) TH_LOG("data_head %llu", head);
	ASSERT_LE(size, head);

	/* Room for one page: a short run ends at P + x */
	p = head;
	tail = p - psz + 1;
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	for (tries = 0; tries < 40; tries++) {
		head = self_run(self->ev.tfd, pg, n);
		if (head != p)
			break;
		n *= 2;		/* too short to write any trace */
	}
	ASSERT_LT(p, head) TH_LOG("no trace after %lu iterations", n);
	ASSERT_LT(head, p + psz)
		TH_LOG("%lu iterations filled the page: make the first run shorter",
		       n);
	TH_LOG("tail %llu, head %llu after %lu iterations", tail, head, n);

	/*
	 * Resume with 4096 - x bytes of room, ending one byte into the next
	 * page, until it stops; once stopped, one byte of room is too little
	 * to start again.
	 */
	for (i = 0; i < 50 && head < p + psz; i++)
		head = self_run(self->ev.tfd, pg, 0x10000);
	EXPECT_GE(size, head - tail)
		TH_LOG("data_head %llu, data_tail %llu: %llu bytes overwritten",
		       head, tail, head - tail - size);
	EXPECT_EQ(p + psz, head);

	EXPECT_EQ(0, munmap(pg, (1 + STOP_PAGES) * page_size()));
}

TEST_HARNESS_MAIN
