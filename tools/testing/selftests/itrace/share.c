// SPDX-License-Identifier: GPL-2.0
/*
 * The trace fd shared and combined:
 *
 *  - passed over a unix socket (SCM_RIGHTS) to another process, which maps
 *    it, in stop mode and in overwrite mode, and reads the trace of a third
 *    process that the sender traces;
 *  - PERF_EVENT_IOC_SET_OUTPUT: an itrace event with a trace fd mapping
 *    cannot be redirected (EINVAL); other events may write their records
 *    into its buffer; an itrace event redirected into another event's
 *    buffer maps its trace into that buffer's AUX pages;
 *  - attr.inherit: a per-task inherited event has no trace fd mapping
 *    (EINVAL), a per-task event on one CPU with inherit does.
 *
 * Needs intel_pt; skipped without it.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <linux/perf_event.h>

#include "../kselftest_harness.h"
#include "itrace_test.h"

#define CHILD_ENV	"ITRACE_SHARE_CHILD"

#define RB_PAGES	8	/* perf stream */
#define STOP_PAGES	256	/* stop mode: holds the whole trace */
#define OVW_PAGES	4	/* overwrite mode: wraps */
#define ITERS		"30000"	/* indirect calls of the traced program */

static void __attribute__((constructor)) traced_child(void)
{
	const char *env = getenv(CHILD_ENV);

	if (!env)
		return;
	indirect_calls(strtoul(env, NULL, 0));
	_exit(0);
}

static void pt_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = pt_type();
	attr->disabled = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
}

static int open_dummy_self(void)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= PERF_TYPE_SOFTWARE,
		.config		= PERF_COUNT_SW_DUMMY,
		.disabled	= 1,
		.exclude_kernel	= 1,
		.comm		= 1,
	};

	return sys_perf_event_open(&attr, 0, -1, -1, 0);
}

static void *map_fd(int fd, size_t pages, int prot)
{
	return mmap(NULL, pages * page_size(), prot, MAP_SHARED, fd, 0);
}

static int send_fd(int sock, int fd)
{
	char c = 'f';
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = {
		.msg_iov	= &iov,
		.msg_iovlen	= 1,
		.msg_control	= u.buf,
		.msg_controllen	= sizeof(u.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));

	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = {
		.msg_iov	= &iov,
		.msg_iovlen	= 1,
		.msg_control	= u.buf,
		.msg_controllen	= sizeof(u.buf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));

	return fd;
}

/* What the receiving process saw */
struct seen {
	int			err;		/* errno of mmap(), 0 if mapped */
	int			ioctl_err;	/* errno of IOC_DISABLE/ENABLE */
	unsigned long long	head, size;
	int			psb_at;		/* first PSB, -1 if none */
};

/*
 * The receiver: gets a trace fd, maps it with @prot, says so, waits until
 * the traced program is done, and reports what the mapping holds.
 */
static void receiver(int sock, int prot, size_t pages)
{
	struct perf_event_mmap_page *pg;
	struct seen s = { .psb_at = -1 };
	unsigned char *data;
	int tfd;
	char c;

	tfd = recv_fd(sock);
	if (tfd < 0)
		_exit(10);
	pg = map_fd(tfd, 1 + pages, prot);
	if (pg == MAP_FAILED) {
		s.err = errno;
		write(sock, &s, sizeof(s));
		_exit(0);
	}
	/* ioctl works through the received fd too (the event is disabled) */
	if (ioctl(tfd, PERF_EVENT_IOC_DISABLE, 0))
		s.ioctl_err = errno;
	if (write(sock, &s, sizeof(s)) != sizeof(s))
		_exit(11);

	/* The traced program has exited */
	if (read(sock, &c, 1) != 1)
		_exit(12);
	s.head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	s.size = pg->data_size;
	data = (unsigned char *)pg + pg->data_offset;
	s.psb_at = find_psb(data, s.size);
	if (write(sock, &s, sizeof(s)) != sizeof(s))
		_exit(13);
	_exit(0);
}

/*
 * This process traces a child program; the trace fd goes over a unix
 * socket to a second child, which maps it and reads the trace. The sender
 * closes its trace fd before the receiver maps it.
 */
static void pass_over_socket(struct __test_metadata *_metadata, int prot,
			     size_t pages, struct seen *s,
			     long long *aux_bytes)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *rb;
	int sv[2], go, fd, tfd, status;
	pid_t traced, recv;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	traced = fork_self_child(CHILD_ENV, ITERS, 0, &go);
	ASSERT_LE(0, traced);

	recv = fork();
	ASSERT_LE(0, recv);
	if (recv == 0) {
		close(sv[0]);
		receiver(sv[1], prot, pages);
	}
	close(sv[1]);

	pt_attr(&attr);
	attr.enable_on_exec = 1;
	fd = sys_perf_event_open(&attr, traced, -1, -1, 0);
	ASSERT_LE(0, fd);
	rb = map_fd(fd, 1 + RB_PAGES, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, rb);
	tfd = sys_perf_event_open(NULL, -1, -1, fd, PERF_FLAG_FD_ITRACE);
	ASSERT_LE(0, tfd);
	ASSERT_EQ(0, send_fd(sv[0], tfd));
	close(tfd);

	/* Mapped by the receiver (or not) */
	ASSERT_EQ(sizeof(*s), read(sv[0], s, sizeof(*s)));
	if (!s->err) {
		ASSERT_EQ(1, write(go, "g", 1));
		ASSERT_EQ(traced, waitpid(traced, &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
		ASSERT_EQ(1, write(sv[0], "d", 1));
		ASSERT_EQ(sizeof(*s), read(sv[0], s, sizeof(*s)));
		*aux_bytes = aux_record_bytes(rb);
	} else {
		kill(traced, SIGKILL);
		waitpid(traced, NULL, 0);
	}
	close(go);
	ASSERT_EQ(recv, waitpid(recv, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("receiver status %#x", status);

	munmap(rb, (1 + RB_PAGES) * page_size());
	close(fd);
	close(sv[0]);
}

TEST(scm_rights_stop_mode)
{
	struct seen s = { 0 };
	long long aux = -1;

	if (pt_type() < 0)
		SKIP(return, NO_PT);

	pass_over_socket(_metadata, PROT_READ | PROT_WRITE, STOP_PAGES, &s,
			 &aux);
	TH_LOG("receiver: data_head %llu, PSB at %d; AUX records %lld bytes",
	       s.head, s.psb_at, aux);
	ASSERT_EQ(0, s.err) TH_LOG("receiver's mmap: %s", strerror(s.err));
	EXPECT_EQ(0, s.ioctl_err);
	EXPECT_EQ(STOP_PAGES * page_size(), s.size);
	EXPECT_LT(0, s.head);
	EXPECT_GT(s.size, s.head);
	/* A trace from its start: PSB at offset 0 */
	EXPECT_EQ(0, s.psb_at);
	/* The sender's perf stream describes the receiver's bytes */
	EXPECT_EQ((long long)s.head, aux);
}

TEST(scm_rights_overwrite_mode)
{
	struct seen s = { 0 };
	long long aux = -1;

	if (pt_type() < 0)
		SKIP(return, NO_PT);

	pass_over_socket(_metadata, PROT_READ, OVW_PAGES, &s, &aux);
	TH_LOG("receiver: data_head %llu of %llu, PSB at %d", s.head, s.size,
	       s.psb_at);
	ASSERT_EQ(0, s.err) TH_LOG("receiver's mmap: %s", strerror(s.err));
	EXPECT_EQ(0, s.ioctl_err);
	EXPECT_EQ(OVW_PAGES * page_size(), s.size);
	/* Wrapped, and counted */
	EXPECT_LT(2 * s.size, s.head);
	EXPECT_LE(0, s.psb_at);
}

/*
 * A trace fd mapping is charged to the user who maps it and refunded to
 * that same user, not to the owner of the perf stream: with an allowance
 * of exactly 1 + MLOCK_PAGES pages per CPU and no RLIMIT_MEMLOCK, another
 * user maps, unmaps and maps again the trace fd root passed to it, and a
 * mapping one page larger than the allowance fails (EPERM).
 */
#define MLOCK_PAGES	8
#define MLOCK_KB	"/proc/sys/kernel/perf_event_mlock_kb"

static int mapper(int sock)
{
	struct rlimit none = { 0, 0 };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	void *p;
	int tfd, i;

	tfd = recv_fd(sock);
	if (tfd < 0)
		return 10;
	if (setrlimit(RLIMIT_MEMLOCK, &none) || setgid(NOBODY) ||
	    setuid(NOBODY))
		return 11;
	/* each CPU's share of the allowance; all of it, three times */
	for (i = 0; i < 3; i++) {
		p = map_fd(tfd, 1 + MLOCK_PAGES * cpus, PROT_READ | PROT_WRITE);
		if (p == MAP_FAILED)
			return 20 + i;
		if (munmap(p, (1 + MLOCK_PAGES * cpus) * page_size()))
			return 30 + i;
	}
	/* beyond the allowance: the next power of two does not fit */
	p = map_fd(tfd, 1 + 2 * MLOCK_PAGES * cpus, PROT_READ | PROT_WRITE);
	if (p != MAP_FAILED || errno != EPERM)
		return 40;
	return 0;
}

TEST(mlock_charged_to_mapper)
{
	char saved[32], kb[32];
	struct perf_event_attr attr;
	int sv[2], fd, tfd, status;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	void *rb;
	pid_t pid;

	if (pt_type() < 0)
		SKIP(return, NO_PT);
	if (geteuid())
		SKIP(return, "needs root");
	if (cpus & (cpus - 1))
		SKIP(return, "the number of CPUs is not a power of two");
	ASSERT_EQ(0, read_file(MLOCK_KB, saved, sizeof(saved)));
	/* (1 + MLOCK_PAGES) pages per CPU, in KiB */
	snprintf(kb, sizeof(kb), "%ld\n",
		 (1 + MLOCK_PAGES) * page_size() / 1024);

	pt_attr(&attr);
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd);
	rb = map_fd(fd, 1 + RB_PAGES, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, rb);
	tfd = sys_perf_event_open(NULL, -1, -1, fd, PERF_FLAG_FD_ITRACE);
	ASSERT_LE(0, tfd);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));

	ASSERT_EQ(0, write_file(MLOCK_KB, kb));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		_exit(mapper(sv[1]));
	}
	close(sv[1]);
	EXPECT_EQ(0, send_fd(sv[0], tfd));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	write_file(MLOCK_KB, saved);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	close(sv[0]);
	close(tfd);
	munmap(rb, (1 + RB_PAGES) * page_size());
	close(fd);
}

/* An itrace event with its perf stream and its trace mapped, of this task */
FIXTURE(mapped)
{
	int	fd, tfd;
	void	*rb, *trace;
};

FIXTURE_SETUP(mapped)
{
	struct perf_event_attr attr;

	self->fd = -1;
	self->tfd = -1;
	self->rb = MAP_FAILED;
	self->trace = MAP_FAILED;
	if (pt_type() < 0)
		SKIP(return, NO_PT);

	pt_attr(&attr);
	self->fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, self->fd);
	self->rb = map_fd(self->fd, 1 + RB_PAGES, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, self->rb);
	self->tfd = sys_perf_event_open(NULL, -1, -1, self->fd,
					PERF_FLAG_FD_ITRACE);
	ASSERT_LE(0, self->tfd);
	self->trace = map_fd(self->tfd, 1 + STOP_PAGES,
			     PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, self->trace);
}

FIXTURE_TEARDOWN(mapped)
{
	if (self->trace != MAP_FAILED)
		munmap(self->trace, (1 + STOP_PAGES) * page_size());
	if (self->rb != MAP_FAILED)
		munmap(self->rb, (1 + RB_PAGES) * page_size());
	if (self->tfd >= 0)
		close(self->tfd);
	if (self->fd >= 0)
		close(self->fd);
}

static unsigned long long trace_some(int tfd, struct perf_event_mmap_page *pg)
{
	ioctl(tfd, PERF_EVENT_IOC_ENABLE, 0);
	indirect_calls(2000);
	ioctl(tfd, PERF_EVENT_IOC_DISABLE, 0);

	return __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
}

/*
 * The trace fd mapping counts as a mapping of the event, as its perf
 * stream does: neither may be redirected away from under it.
 */
TEST_F(mapped, set_output_of_mapped_event_einval)
{
	int other = open_dummy_self();
	void *orb;

	ASSERT_LE(0, other);
	orb = map_fd(other, 1 + RB_PAGES, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, orb);

	/* The perf stream and the trace are mapped */
	EXPECT_EQ(-1, ioctl(self->fd, PERF_EVENT_IOC_SET_OUTPUT, other));
	EXPECT_EQ(EINVAL, errno);

	/* Only the trace is mapped: still EINVAL */
	ASSERT_EQ(0, munmap(self->rb, (1 + RB_PAGES) * page_size()));
	self->rb = MAP_FAILED;
	EXPECT_EQ(-1, ioctl(self->fd, PERF_EVENT_IOC_SET_OUTPUT, other));
	EXPECT_EQ(EINVAL, errno);
	/* -1 as a long: "no output event" */
	EXPECT_EQ(-1, ioctl(self->fd, PERF_EVENT_IOC_SET_OUTPUT, -1L));
	EXPECT_EQ(EINVAL, errno);

	/* And the trace keeps working */
	EXPECT_LT(0, trace_some(self->tfd, self->trace));

	/* SET_OUTPUT is an ioctl of the event fd, not of the trace fd */
	EXPECT_EQ(-1, ioctl(self->tfd, PERF_EVENT_IOC_SET_OUTPUT, other));
	EXPECT_EQ(ENOTTY, errno);

	munmap(orb, (1 + RB_PAGES) * page_size());
	close(other);
}

/* Another (non-AUX) event writes its records into the itrace buffer */
TEST_F(mapped, set_output_into_itrace_event)
{
	struct perf_event_mmap_page *rb = self->rb;
	int other = open_dummy_self();
	unsigned long long before;

	ASSERT_LE(0, other);
	EXPECT_EQ(0, ioctl(other, PERF_EVENT_IOC_SET_OUTPUT, self->fd));

	before = __atomic_load_n(&rb->data_head, __ATOMIC_ACQUIRE);
	ioctl(other, PERF_EVENT_IOC_ENABLE, 0);
	EXPECT_EQ(0, prctl(PR_SET_NAME, "itrace-share"));
	ioctl(other, PERF_EVENT_IOC_DISABLE, 0);
	/* Its COMM record went into the itrace event's perf stream */
	EXPECT_LT(before, __atomic_load_n(&rb->data_head, __ATOMIC_ACQUIRE));

	/* The trace is not disturbed */
	EXPECT_LT(0, trace_some(self->tfd, self->trace));
	close(other);
}

/*
 * An itrace event redirected into another event's buffer: its trace fd
 * maps the AUX pages of that buffer, which the other event's fd can then
 * not map at aux_offset. When the trace is unmapped the event leaves the
 * buffer (as after the last mmap() of any redirected event).
 */
TEST(set_output_then_trace_fd)
{
	struct perf_event_mmap_page *orb, *pg;
	struct perf_event_attr attr;
	int fd, tfd, other;

	if (pt_type() < 0)
		SKIP(return, NO_PT);

	other = open_dummy_self();
	ASSERT_LE(0, other);
	orb = map_fd(other, 1 + RB_PAGES, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, orb);

	pt_attr(&attr);
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd);
	tfd = sys_perf_event_open(NULL, -1, -1, fd, PERF_FLAG_FD_ITRACE);
	ASSERT_LE(0, tfd);

	/* Not redirected, not mapped: no buffer */
	EXPECT_EQ(MAP_FAILED, map_fd(tfd, 1 + STOP_PAGES,
				     PROT_READ | PROT_WRITE));
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, other));
	pg = map_fd(tfd, 1 + STOP_PAGES, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, pg) TH_LOG("trace mmap: %s", strerror(errno));

	/* The other event's buffer has its AUX pages now */
	orb->aux_offset = (1 + RB_PAGES) * page_size();
	orb->aux_size = STOP_PAGES * page_size();
	EXPECT_EQ(MAP_FAILED, mmap(NULL, orb->aux_size, PROT_READ, MAP_SHARED,
				   other, orb->aux_offset));
	EXPECT_EQ(EBUSY, errno);

	/* The trace is written; its AUX records go to the other's stream */
	EXPECT_LT(0, trace_some(tfd, pg));
	EXPECT_EQ((long long)pg->data_head, aux_record_bytes(orb));

	/* Unmapped: the event left the buffer, no trace mapping now */
	ASSERT_EQ(0, munmap(pg, (1 + STOP_PAGES) * page_size()));
	EXPECT_EQ(MAP_FAILED, map_fd(tfd, 1 + STOP_PAGES,
				     PROT_READ | PROT_WRITE));
	EXPECT_EQ(EINVAL, errno);

	close(tfd);
	close(fd);
	munmap(orb, (1 + RB_PAGES) * page_size());
	close(other);
}

/*
 * Is there a PERF_RECORD_AUX of trace written by @pid in the perf stream?
 * The event has sample_id_all with PERF_SAMPLE_TID: the record ends with
 * the pid and tid of the task whose (inherited) event wrote the trace.
 */
static bool aux_record_of(struct perf_event_mmap_page *rb, pid_t pid)
{
	unsigned long long head = __atomic_load_n(&rb->data_head,
						  __ATOMIC_ACQUIRE);
	unsigned char *data = (unsigned char *)rb + rb->data_offset;
	unsigned long long pos = rb->data_tail;

	while (pos < head && head <= rb->data_size) {
		struct {
			struct perf_event_header hdr;
			__u64 aux_offset, aux_size, flags;
			__u32 pid, tid;
		} *rec = (void *)(data + pos);

		if (rec->hdr.size < sizeof(rec->hdr))
			return false;
		if (rec->hdr.type == PERF_RECORD_AUX &&
		    rec->hdr.size >= sizeof(*rec) && rec->aux_size &&
		    rec->pid == (__u32)pid)
			return true;
		pos += rec->hdr.size;
	}

	return false;
}

/* A per-task inherited event: one buffer for all children, no mapping */
TEST(inherit_per_task_einval)
{
	struct perf_event_mmap_page *rb, *pg;
	struct perf_event_attr attr;
	unsigned long long head;
	int fd, tfd, status;
	cpu_set_t cpus;
	pid_t pid;

	if (pt_type() < 0)
		SKIP(return, NO_PT);

	pt_attr(&attr);
	attr.inherit = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("inherited intel_pt event: %s",
				strerror(errno));
	/* As mainline: the event fd cannot be mapped either */
	EXPECT_EQ(MAP_FAILED, map_fd(fd, 1 + RB_PAGES,
				     PROT_READ | PROT_WRITE));
	EXPECT_EQ(EINVAL, errno);

	tfd = sys_perf_event_open(NULL, -1, -1, fd, PERF_FLAG_FD_ITRACE);
	ASSERT_LE(0, tfd);
	EXPECT_EQ(MAP_FAILED, map_fd(tfd, 1 + STOP_PAGES,
				     PROT_READ | PROT_WRITE));
	EXPECT_EQ(EINVAL, errno);
	close(tfd);
	close(fd);

	/* Per task on one CPU, inherited: mapped, and children trace into it */
	attr.inherit = 1;
	attr.sample_id_all = 1;
	attr.sample_type = PERF_SAMPLE_TID;
	fd = sys_perf_event_open(&attr, 0, 0, -1, 0);
	ASSERT_LE(0, fd);
	rb = map_fd(fd, 1 + RB_PAGES, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, rb);
	tfd = sys_perf_event_open(NULL, -1, -1, fd, PERF_FLAG_FD_ITRACE);
	ASSERT_LE(0, tfd);
	pg = map_fd(tfd, 1 + STOP_PAGES, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, pg) TH_LOG("%s", strerror(errno));

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));
	ASSERT_EQ(0, ioctl(tfd, PERF_EVENT_IOC_ENABLE, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		indirect_calls(5000);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, ioctl(tfd, PERF_EVENT_IOC_DISABLE, 0));
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	TH_LOG("inherited on CPU 0: data_head %llu", head);
	EXPECT_LT(0, head);
	/* The child's own (inherited) event wrote trace into this buffer */
	EXPECT_TRUE(aux_record_of(rb, pid));
	munmap(pg, (1 + STOP_PAGES) * page_size());
	munmap(rb, (1 + RB_PAGES) * page_size());
	close(tfd);
	close(fd);
}

TEST_HARNESS_MAIN
