// SPDX-License-Identifier: GPL-2.0
/*
 * Intel BTS through a trace fd (stop mode), the first part of intel_bts
 * with itrace.
 *
 *  - the records of a traced loop, 24 bytes each ({ from, to, flags }):
 *    exactly one per indirect call to each target, every "from" a user
 *    address (user-only tracing filters by the branch's source);
 *  - a small buffer fills: the trace stops with one PERF_RECORD_ITRACE_LOST
 *    at data_head, and the reader's drain and ENABLE resume it, several
 *    times;
 *  - overwrite mode (a read-only mapping) counts every byte: data_head is
 *    whole laps of the buffer plus the newest lap, consistent with the
 *    records of the same loop in stop mode to within a lap, and the
 *    newest lap holds the loop's records;
 *  - core dumps: served when sysfs selects intel_bts (intel_pt is the
 *    default); the notes are tested in rlimit_itrace;
 *  - PERF_SAMPLE_ITRACE with itrace_sample_type intel_bts: whole records
 *    without kernel addresses, the newest one the sampled page fault;
 *  - mainline's PERF_SAMPLE_AUX with an intel_bts group leader.
 *
 * Needs intel_bts (the emulated CPU's "+ds") and root: BTS asks for
 * kernel tracing permission even for user-only events. Skipped otherwise.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <linux/perf_event.h>

#include "../kselftest_harness.h"
#include "itrace_test.h"

#define BTS_DIR		"/sys/bus/event_source/devices/intel_bts"
#define PT_DIR		"/sys/bus/event_source/devices/intel_pt"
#define RB_PAGES	16	/* perf stream */
#define BIG_PAGES	256	/* 1 MiB of records: the loop fits */
#define LOOP_CALLS	5000
#define STOP_PAGES	2	/* a buffer that fills quickly */
#define STOPS		4	/* stop and resume this many times */
#define STOP_SECONDS	60

/* One BTS record (SDM "Branch Trace Store", 64-bit DS format) */
struct bts_record {
	__u64	from;
	__u64	to;
	__u64	flags;
};

/* A user-only intel_bts event on this thread, its stream and trace fd */
FIXTURE(bts) {
	struct perf_event_mmap_page	*rb;
	int				fd, tfd;
};

FIXTURE_SETUP(bts)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.disabled	= 1,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
	};
	int type = bts_type(), err;

	self->fd = -1;
	self->tfd = -1;
	self->rb = MAP_FAILED;
	if (type < 0)
		SKIP(return, NO_BTS);
	if (geteuid())
		SKIP(return, "intel_bts needs kernel tracing permission: run as root");
	attr.type = type;
	/* one AUX chunk: records from the start of the buffer, no padding */
	attr.aux_watermark = BIG_PAGES * page_size();
	self->fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, self->fd) TH_LOG("intel_bts event: %s", strerror(errno));
	err = stream_and_trace_fd(self->fd, RB_PAGES, &self->rb, &self->tfd);
	ASSERT_EQ(0, err) TH_LOG("stream or trace fd: %s", strerror(-err));
}

FIXTURE_TEARDOWN(bts)
{
	if (self->tfd >= 0)
		close(self->tfd);
	if (self->rb != MAP_FAILED)
		munmap(self->rb, (1 + RB_PAGES) * page_size());
	if (self->fd >= 0)
		close(self->fd);
}

static int is_user(__u64 addr)
{
	return addr < (1ULL << 47);
}

/*
 * The loop's records in a stop-mode buffer that holds them all: each
 * indirect call is one record to its target, and user-only tracing keeps
 * the records whose source is in user mode (a system call's entry, with
 * its kernel target, included).
 */
TEST_F(bts, records_of_a_loop)
{
	size_t len = (1 + BIG_PAGES) * page_size();
	struct perf_event_mmap_page *pg;
	unsigned long long head, i;
	long calls[2] = { 0, 0 }, kernel_to = 0, user_from = 0, bad = 0;
	const struct bts_record *r;

	pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->tfd, 0);
	ASSERT_NE(MAP_FAILED, pg) TH_LOG("mmap: %s", strerror(errno));

	ASSERT_EQ(0, ioctl(self->tfd, PERF_EVENT_IOC_ENABLE, 0));
	indirect_calls(LOOP_CALLS);
	ASSERT_EQ(0, ioctl(self->tfd, PERF_EVENT_IOC_DISABLE, 0));

	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	r = (const void *)((char *)pg + pg->data_offset);
	for (i = 0; i < head / sizeof(*r); i++) {
		if (!is_user(r[i].from) || !r[i].from || !r[i].to) {
			bad++;
			continue;
		}
		user_from++;
		if (!is_user(r[i].to))
			kernel_to++;
		if (r[i].to == (uintptr_t)callee0)
			calls[0]++;
		else if (r[i].to == (uintptr_t)callee1)
			calls[1]++;
	}
	TH_LOG("data_head %llu of %llu: %llu records, %ld calls to each target, %ld to the kernel",
	       head, pg->data_size, head / sizeof(*r), calls[0], kernel_to);
	EXPECT_EQ(0, head % sizeof(*r));
	EXPECT_LT(head, pg->data_size);
	EXPECT_EQ(LOOP_CALLS / 2, calls[0]);
	EXPECT_EQ(LOOP_CALLS / 2, calls[1]);
	EXPECT_EQ(0, bad);
	/* the loop's jcc, call and ret each time, at least */
	EXPECT_LE(3 * LOOP_CALLS, user_from);
	/* the DISABLE ioctl's system call: user source, kernel target */
	EXPECT_LE(1, kernel_to);

	EXPECT_EQ(0, munmap(pg, len));
}

/*
 * A 2-page buffer fills: tracing stops with one PERF_RECORD_ITRACE_LOST at
 * data_head, and resumes where it stopped once the reader has drained it
 * and enabled the event again, STOPS times.
 */
TEST_F(bts, stop_mode_itrace_lost)
{
	size_t len = (1 + STOP_PAGES) * page_size();
	struct perf_event_mmap_page *pg;
	struct stop_state st = { 0 };
	unsigned long long head;
	time_t t0 = time(NULL);
	int seen = 0;

	pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->tfd, 0);
	ASSERT_NE(MAP_FAILED, pg);

	ASSERT_EQ(0, ioctl(self->tfd, PERF_EVENT_IOC_ENABLE, 0));
	while (st.lost < STOPS && !st.bad &&
	       time(NULL) < t0 + STOP_SECONDS) {
		indirect_calls(2000);	/* more than the buffer holds */
		read_stream(self->rb, pg, &st);
		if (st.lost != seen) {
			/* Stopped: drain everything, then resume. */
			seen = st.lost;
			head = __atomic_load_n(&pg->data_head,
					       __ATOMIC_ACQUIRE);
			__atomic_store_n(&pg->data_tail, head,
					 __ATOMIC_RELEASE);
			ASSERT_EQ(0, ioctl(self->tfd, PERF_EVENT_IOC_ENABLE,
					   0));
		}
	}
	ASSERT_EQ(0, ioctl(self->tfd, PERF_EVENT_IOC_DISABLE, 0));
	read_stream(self->rb, pg, &st);
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);

	TH_LOG("%d ITRACE_LOST, %d AUX TRUNCATED, last at %llu, data_head %llu",
	       st.lost, st.truncated, st.last_lost, head);
	EXPECT_EQ(0, st.bad);
	EXPECT_LE(STOPS, st.lost);
	EXPECT_LE(1, st.truncated);
	/* each stop after a full drain: the buffer (less a record) was full */
	EXPECT_LE(st.lost * (pg->data_size - 2 * sizeof(struct bts_record)),
		  st.last_lost);

	EXPECT_EQ(0, munmap(pg, len));
}

/* The loop's bytes of records in stop mode, mapping and unmapping the trace */
static long long stop_mode_bytes(int tfd)
{
	size_t len = (1 + BIG_PAGES) * page_size();
	struct perf_event_mmap_page *pg;
	long long head = -1;

	pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, tfd, 0);
	if (pg == MAP_FAILED)
		return -1;
	if (!ioctl(tfd, PERF_EVENT_IOC_ENABLE, 0)) {
		indirect_calls(LOOP_CALLS);
		if (!ioctl(tfd, PERF_EVENT_IOC_DISABLE, 0))
			head = __atomic_load_n(&pg->data_head,
					       __ATOMIC_ACQUIRE);
	}
	munmap(pg, len);

	return head;
}

/*
 * Overwrite mode: the driver takes a PMI BTS_SAFETY_MARGIN (4080) bytes
 * before the end of the buffer, zeroes the rest, counts it and goes on
 * from the start. So data_head is L whole laps plus the newest lap's
 * records, and the loop's R bytes of records (measured in stop mode) are
 * L laps of at least "size - 16 - 4080" and at most "size - 16" bytes each
 * (the buffer holds whole 24-byte records), plus the newest lap, give or
 * take the records of the interrupts of each run: with 64 KiB a lap more
 * or less does not fit. The newest lap, from the start
 * of the buffer to data_head % size, holds the loop's calls in turn.
 */
#define OVW_PAGES	16
#define ENTRIES_SLACK	32	/* interrupts: records that differ between runs */

TEST_F(bts, overwrite_counts_every_byte)
{
	size_t len = (1 + OVW_PAGES) * page_size();
	unsigned long long head, laps, pos, size, i, lo, hi;
	struct perf_event_mmap_page *pg;
	struct stop_state st = { 0 };
	long calls[2] = { 0, 0 }, bad = 0;
	const struct bts_record *r;
	long long ref;

	ref = stop_mode_bytes(self->tfd);
	ASSERT_LT(0, ref);

	pg = mmap(NULL, len, PROT_READ, MAP_SHARED, self->tfd, 0);
	ASSERT_NE(MAP_FAILED, pg) TH_LOG("read-only mapping: %s",
					 strerror(errno));
	ASSERT_EQ(0, ioctl(self->tfd, PERF_EVENT_IOC_ENABLE, 0));
	indirect_calls(LOOP_CALLS);
	ASSERT_EQ(0, ioctl(self->tfd, PERF_EVENT_IOC_DISABLE, 0));
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	read_stream(self->rb, pg, &st);

	size = pg->data_size;
	laps = head / size;
	pos = head % size;
	lo = laps * (size - 16 - 4080) + pos;
	hi = laps * (size - 16) + pos;
	r = (const void *)((char *)pg + pg->data_offset);
	for (i = 0; i < pos / sizeof(*r); i++) {
		if (!is_user(r[i].from) || !r[i].to)
			bad++;
		else if (r[i].to == (uintptr_t)callee0)
			calls[0]++;
		else if (r[i].to == (uintptr_t)callee1)
			calls[1]++;
	}
	TH_LOG("stop mode: %lld bytes of records", ref);
	TH_LOG("overwrite: data_head %llu = %llu laps of %llu + %llu",
	       head, laps, size, pos);
	TH_LOG("newest lap: %llu records, calls %ld and %ld; %d ITRACE_LOST",
	       pos / sizeof(*r), calls[0], calls[1], st.lost);
	/*
	 * The two runs of the loop differ by their interrupts, a record each
	 * (seen: one more in overwrite mode with every lap at the minimum)
	 */
	EXPECT_LE(lo, (unsigned long long)ref + ENTRIES_SLACK * sizeof(*r));
	EXPECT_GE(hi + ENTRIES_SLACK * sizeof(*r), (unsigned long long)ref);
	EXPECT_LE(4, laps);
	EXPECT_EQ(0, pos % sizeof(*r));
	EXPECT_EQ(0, bad);
	EXPECT_LE(100, calls[0] + calls[1]);
	EXPECT_GE(1, labs(calls[0] - calls[1]));
	EXPECT_EQ(0, st.lost);
	EXPECT_EQ(0, st.bad);

	EXPECT_EQ(0, munmap(pg, len));
}

/*
 * Core dumps: intel_bts serves them when sysfs selects it, not by default
 * where intel_pt is there (ITRACE_PMU_SECONDARY); selecting it moves the
 * selection. (The notes are tested in rlimit_itrace.)
 */
TEST(core_dumps_on_request)
{
	bool pt = access(PT_DIR, F_OK) == 0;
	char sel[8], cfg[32];

	if (bts_type() < 0)
		SKIP(return, NO_BTS);
	if (geteuid())
		SKIP(return, "needs root (sysfs writes)");

	EXPECT_EQ(0, read_file(BTS_DIR "/itrace/coredump", sel, sizeof(sel)));
	EXPECT_EQ(pt ? '0' : '1', sel[0]);
	if (pt)
		ASSERT_EQ(0, read_file(PT_DIR "/itrace/coredump_config", cfg,
				       sizeof(cfg)));
	EXPECT_EQ(0, write_file(BTS_DIR "/itrace/coredump", "1"));
	EXPECT_EQ(0, read_file(BTS_DIR "/itrace/coredump", sel, sizeof(sel)));
	EXPECT_EQ('1', sel[0]);
	EXPECT_EQ(0, write_file(BTS_DIR "/itrace/coredump_config", "0"));
	EXPECT_EQ(-EINVAL, write_file(BTS_DIR "/itrace/coredump_config",
				      "zz"));
	if (pt) {
		EXPECT_EQ(0, read_file(PT_DIR "/itrace/coredump", sel,
				       sizeof(sel)));
		EXPECT_EQ('0', sel[0]);
		/* back to the boot's choice */
		EXPECT_EQ(0, write_file(PT_DIR "/itrace/coredump", "1"));
		EXPECT_EQ(0, write_file(PT_DIR "/itrace/coredump_config", cfg));
		EXPECT_EQ(0, read_file(BTS_DIR "/itrace/coredump", sel,
				       sizeof(sel)));
		EXPECT_EQ('0', sel[0]);
	}
}

#define NR_FAULTS	32
#define SAMPLE_SIZE	4096	/* 170 records and 16 bytes of padding */
#define SAMPLE_RB_PAGES	128	/* perf stream: room for ~120 samples */

/* NR_FAULTS page faults, each after a loop of taken branches */
static void fault_pages(void)
{
	char *p = mmap(NULL, NR_FAULTS * page_size(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long i, sum = 0;
	int k;

	if (p == MAP_FAILED)
		_exit(20);
	for (k = 0; k < NR_FAULTS; k++) {
		for (i = 0; i < 300; i++) {
			if ((i * 2654435761u) & 0x100)
				sum += i;
			else
				sum ^= i;
			asm volatile("" : "+r" (sum));
		}
		p[k * page_size()] = sum;
	}
	_exit(0);
}

/* A child that stops, then runs fault_pages() when continued; or -1 */
static pid_t stopped_faulter(void)
{
	pid_t pid = fork();
	int status;

	if (!pid) {
		raise(SIGSTOP);
		fault_pages();
	}
	if (pid < 0 || waitpid(pid, &status, WUNTRACED) != pid)
		return -1;
	return pid;
}

/*
 * The @size bytes of BTS trace of a sample at @t: whole records, then
 * zeros. Returns the newest non-empty record and its offset in *last;
 * adds to *bad the non-zero bytes after the last whole record and, with
 * @user_only, the records with a kernel address.
 */
static struct bts_record sample_records(const unsigned char *t, __u64 size,
					bool user_only, int *bad, __u64 *last)
{
	struct bts_record r;
	__u64 i;

	*last = 0;
	for (i = 0; i + sizeof(r) <= size; i += sizeof(r)) {
		memcpy(&r, t + i, sizeof(r));
		if (!r.from && !r.to)
			continue;
		if (user_only)
			*bad += !is_user(r.from) || !is_user(r.to);
		*last = i;
	}
	for (; i < size; i++)
		*bad += t[i] != 0;
	memcpy(&r, t + *last, sizeof(r));
	return r;
}

/*
 * PERF_SAMPLE_ITRACE of intel_bts on a user-mode page-fault event: every
 * sample holds SAMPLE_SIZE bytes, whole records (the last 16 bytes
 * padding), none with a kernel address; the newest record is the fault:
 * from the sample's IP, to 0 (the kernel's entry, removed). No permission
 * to trace the kernel is needed: the sampled event excludes it.
 */
TEST(samples_end_at_the_fault)
{
	struct perf_event_attr attr = {
		.size			= sizeof(attr),
		.type			= PERF_TYPE_SOFTWARE,
		.config			= PERF_COUNT_SW_PAGE_FAULTS,
		.sample_period		= 1,
		.sample_type		= PERF_SAMPLE_IP | PERF_SAMPLE_TID |
					  PERF_SAMPLE_ITRACE,
		.exclude_kernel		= 1,
		.exclude_hv		= 1,
		.disabled		= 1,
		.itrace_sample_size	= SAMPLE_SIZE,
	};
	size_t len = (1 + SAMPLE_RB_PAGES) * page_size();
	int fd, status, nr = 0, bad = 0, at_fault = 0, full = 0;
	struct perf_event_mmap_page *rb;
	unsigned char *data, rec[16384];
	__u64 head, pos;
	pid_t pid;

	if (bts_type() < 0)
		SKIP(return, NO_BTS);
	attr.itrace_sample_type = bts_type();
	pid = stopped_faulter();
	ASSERT_LT(0, pid);
	fd = sys_perf_event_open(&attr, pid, -1, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	rb = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, rb);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	kill(pid, SIGCONT);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	data = (unsigned char *)rb + rb->data_offset;
	head = __atomic_load_n(&rb->data_head, __ATOMIC_ACQUIRE);
	ASSERT_GE(rb->data_size, head) TH_LOG("the stream wrapped");
	for (pos = 0; pos < head; ) {
		struct perf_event_header hdr;
		__u64 ip, tsize, i, last;
		struct bts_record r;

		memcpy(&hdr, data + pos % rb->data_size, sizeof(hdr));
		ASSERT_LE(sizeof(hdr), hdr.size);
		ASSERT_GE(sizeof(rec), hdr.size);
		for (i = 0; i < hdr.size; i++)
			rec[i] = data[(pos + i) % rb->data_size];
		pos += hdr.size;
		if (hdr.type != PERF_RECORD_SAMPLE)
			continue;
		nr++;
		/* header, ip, pid + tid, size, trace */
		memcpy(&ip, rec + sizeof(hdr), 8);
		memcpy(&tsize, rec + sizeof(hdr) + 16, 8);
		if (hdr.size != sizeof(hdr) + 24 + tsize || tsize != SAMPLE_SIZE) {
			bad++;
			continue;
		}
		r = sample_records(rec + sizeof(hdr) + 24, tsize, true, &bad,
				   &last);
		at_fault += r.from == ip && r.to == 0;
		full += last == SAMPLE_SIZE / sizeof(r) * sizeof(r) - sizeof(r);
	}
	TH_LOG("%d samples, %d end at the fault, %d full of records",
	       nr, at_fault, full);
	EXPECT_EQ(0, bad);
	EXPECT_LE(NR_FAULTS, nr);
	EXPECT_EQ(nr, at_fault);
	/* the loop before each fault gives 300 records: the sample is full */
	EXPECT_LE(NR_FAULTS, full);
	munmap(rb, len);
	close(fd);
}

/*
 * Mainline's PERF_SAMPLE_AUX with a user's intel_bts event leading the
 * group (classic AUX area, read-only: overwrite mode): each page-fault
 * sample carries all aux_sample_size bytes, the newest whole records then
 * zeros, and the last record is the fault with its kernel target (a
 * user's BTS event has kernel tracing permission: nothing is removed). No
 * kernel warning (perf_aux_sample_output() warns when a PMU copies more
 * than the alignment short of the size; the health check of the boot
 * looks).
 */
TEST(aux_sampling_of_bts_leader)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.disabled	= 1,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
	};
	struct perf_event_attr sattr = {
		.size		= sizeof(attr),
		.type		= PERF_TYPE_SOFTWARE,
		.config		= PERF_COUNT_SW_PAGE_FAULTS,
		.sample_period	= 1,
		.sample_type	= PERF_SAMPLE_IP | PERF_SAMPLE_AUX,
		.aux_sample_size = SAMPLE_SIZE,
		.exclude_kernel	= 1,
	};
	size_t len = (1 + RB_PAGES) * page_size(), aux_len = 16 * page_size();
	size_t slen = (1 + SAMPLE_RB_PAGES) * page_size();
	struct perf_event_mmap_page *rb, *srb;
	int fd, sfd, status, nr = 0, bad = 0, at_fault = 0;
	unsigned char *data;
	__u64 head, pos;
	void *aux;
	pid_t pid;

	if (bts_type() < 0)
		SKIP(return, NO_BTS);
	if (geteuid())
		SKIP(return, "intel_bts needs kernel tracing permission: run as root");
	attr.type = bts_type();
	pid = stopped_faulter();
	ASSERT_LT(0, pid);
	fd = sys_perf_event_open(&attr, pid, -1, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("intel_bts event: %s", strerror(errno));
	rb = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, rb);
	rb->aux_offset = len;
	rb->aux_size = aux_len;
	aux = mmap(NULL, aux_len, PROT_READ, MAP_SHARED, fd, len);
	ASSERT_NE(MAP_FAILED, aux) TH_LOG("AUX area: %s", strerror(errno));
	sfd = sys_perf_event_open(&sattr, pid, -1, fd, 0);
	ASSERT_LE(0, sfd) TH_LOG("AUX sampling event: %s", strerror(errno));
	srb = mmap(NULL, slen, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);
	ASSERT_NE(MAP_FAILED, srb);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	kill(pid, SIGCONT);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));

	data = (unsigned char *)srb + srb->data_offset;
	head = __atomic_load_n(&srb->data_head, __ATOMIC_ACQUIRE);
	ASSERT_GE(srb->data_size, head) TH_LOG("the stream wrapped");
	for (pos = 0; pos < head; ) {
		struct perf_event_header hdr;
		__u64 ip, size, last;
		struct bts_record r;

		memcpy(&hdr, data + pos, sizeof(hdr));
		ASSERT_LE(sizeof(hdr), hdr.size);
		ASSERT_GE(head, pos + hdr.size);
		if (hdr.type != PERF_RECORD_SAMPLE) {
			pos += hdr.size;
			continue;
		}
		nr++;
		/* header, ip, size, data */
		memcpy(&ip, data + pos + sizeof(hdr), 8);
		memcpy(&size, data + pos + sizeof(hdr) + 8, 8);
		if (size != SAMPLE_SIZE ||
		    hdr.size != sizeof(hdr) + 16 + SAMPLE_SIZE) {
			bad++;
			pos += hdr.size;
			continue;
		}
		r = sample_records(data + pos + sizeof(hdr) + 16, size, false,
				   &bad, &last);
		at_fault += r.from == ip && !is_user(r.to);
		pos += hdr.size;
	}
	TH_LOG("%d samples, %d end at the fault", nr, at_fault);
	EXPECT_EQ(0, bad);
	EXPECT_LE(NR_FAULTS, nr);
	EXPECT_EQ(nr, at_fault);
	munmap(srb, slen);
	close(sfd);
	munmap(aux, aux_len);
	munmap(rb, len);
	close(fd);
}

TEST_HARNESS_MAIN
