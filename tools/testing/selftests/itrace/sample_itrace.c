// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_SAMPLE_ITRACE: the newest bytes of the task's instruction trace in
 * every sample of an event of any PMU, from a trace event the kernel makes
 * and owns (Documentation/userspace-api/itrace.rst).
 *
 *  - the errors: sizes, types, attr sizes, config4, permissions, mlock;
 *  - samples of a software event carry the trace, PSB and all;
 *  - samples of an execute breakpoint on a function two callers reach:
 *    each trace, decoded with libipt, ends at the breakpoint, entered by a
 *    call from one of the two call sites, as often as the program calls;
 *  - inherited into threads and forks, whose samples carry their own;
 *  - a user's own intel_pt event on the task wins: meanwhile size 0, and
 *    the trace comes back as soon as it is disabled or closed;
 *  - a user's stopped CPU-wide trace keeps the PMU, also restarted in
 *    place;
 *  - a sampled event closed while it samples, and a 10 kHz load of
 *    10 s.
 *
 * Needs intel_pt; skipped without it.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include <intel-pt.h>

#include "../kselftest_harness.h"
#include "itrace_test.h"

#define RB_PAGES	512		/* perf stream: ~500 samples of 4 KiB */
#define SAMPLE_SIZE	4096		/* trace bytes per sample */
#define SAMPLE_MAX	(60 * 1024)	/* ITRACE_SAMPLE_MAX */
#define MLOCK_KB	"/proc/sys/kernel/perf_event_mlock_kb"
#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"

/*
 * A page-fault event sampling the trace every @period faults: page faults
 * come when the program says, unlike timers (a test kernel without high
 * resolution timers samples a timer at most once a tick).
 */
static void sample_attr(struct perf_event_attr *attr, __u64 period)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_PAGE_FAULTS;
	attr->sample_period = period;
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			    PERF_SAMPLE_ITRACE;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->disabled = 1;
	attr->itrace_sample_type = pt_type();
	attr->itrace_sample_size = SAMPLE_SIZE;
}

static int open_attr(struct perf_event_attr *attr, pid_t pid)
{
	return sys_perf_event_open(attr, pid, -1, -1, 0);
}

/*
 * @n page faults: a byte written to each of @n fresh pages, with branchy
 * user-mode work before each, a few KiB of trace.
 */
static void touch_pages(long n)
{
	char *p = mmap(NULL, n * page_size(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long i, sum = 0;
	long k;

	if (p == MAP_FAILED)
		_exit(20);
	for (k = 0; k < n; k++) {
		for (i = 0; i < 2000; i++) {
			if ((i * 2654435761u) & 0x100)
				sum += i;
			else
				sum ^= i;
			asm volatile("" : "+r" (sum));
		}
		p[k * page_size()] = sum;
	}
	munmap(p, n * page_size());
}

/* Branchy user-mode work for @ms milliseconds of CPU time */
static void spin_ms(long ms)
{
	struct timespec t0, t;
	unsigned long i = 0, sum = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int j = 0; j < 1000; j++, i++) {
			if ((i * 2654435761u) & 0x100)
				sum += i;
			else
				sum ^= i;
			asm volatile("" : "+r" (sum));
		}
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* What the samples of a perf stream held */
struct samples {
	int	nr;		/* PERF_RECORD_SAMPLE records */
	int	with_trace;	/* ... whose trace size is not 0 */
	int	with_psb;	/* ... whose trace holds a PSB */
	int	bad;		/* malformed: sizes that do not add up */
	int	tids;		/* distinct tids with trace */
	pid_t	tid[64];
	int	lost;		/* PERF_RECORD_LOST records */
	__u64	max_size;
	char	map[128];	/* the first samples: T with trace, 0 without */
};

/*
 * Walk the samples of @rb (IP, TID, ITRACE): each record's size must be
 * the header, ip, pid/tid, the trace size word and the trace.
 */
static void read_samples(struct perf_event_mmap_page *rb, struct samples *s)
{
	unsigned char *data = (unsigned char *)rb + rb->data_offset;
	__u64 size, pos;
	static unsigned char rec[65536];
	__u64 head;

	/*
	 * The page faults of reading are samples too: take them before
	 * the look at data_head, so that they count in this window, not
	 * the next (map_rb() populates the ring)
	 */
	memset(rec, 0, sizeof(rec));
	memset(s, 0, sizeof(*s));
	head = __atomic_load_n(&rb->data_head, __ATOMIC_ACQUIRE);
	size = rb->data_size;
	pos = rb->data_tail;
	if (head - pos > size)
		pos = head - size;	/* wrapped: the newest records */
	while (pos < head) {
		struct perf_event_header hdr;
		__u64 off = pos % size, n, tsize;
		__u32 tid;
		int i;

		memcpy(&hdr, data + off, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || pos + hdr.size > head)
			break;
		for (n = 0; n < hdr.size; n++)
			rec[n] = data[(off + n) % size];
		pos += hdr.size;
		if (hdr.type == PERF_RECORD_LOST)
			s->lost++;
		if (hdr.type != PERF_RECORD_SAMPLE)
			continue;
		s->nr++;
		if (s->nr < (int)sizeof(s->map))
			s->map[s->nr - 1] = '0';
		/* header, ip, pid + tid, size */
		if (hdr.size < sizeof(hdr) + 8 + 8 + 8) {
			s->bad++;
			continue;
		}
		memcpy(&tid, rec + sizeof(hdr) + 8 + 4, 4);
		memcpy(&tsize, rec + sizeof(hdr) + 16, 8);
		if (tsize % 8 || hdr.size != sizeof(hdr) + 24 + tsize) {
			s->bad++;
			continue;
		}
		if (!tsize)
			continue;
		if (s->nr < (int)sizeof(s->map))
			s->map[s->nr - 1] = 'T';
		s->with_trace++;
		if (tsize > s->max_size)
			s->max_size = tsize;
		if (find_psb(rec + sizeof(hdr) + 24, tsize) >= 0)
			s->with_psb++;
		for (i = 0; i < s->tids && s->tid[i] != (pid_t)tid; i++)
			;
		if (i == s->tids && i < 64)
			s->tid[s->tids++] = tid;
	}
	rb->data_tail = head;
}

static struct perf_event_mmap_page *map_rb(int fd)
{
	void *p = mmap(NULL, (1 + RB_PAGES) * page_size(),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void unmap_rb(struct perf_event_mmap_page *rb)
{
	munmap(rb, (1 + RB_PAGES) * page_size());
}

/*
 * The program of the breakpoint test: target() is called from two call
 * sites, in caller_a() every third round and in caller_b() every fifth.
 */
#define ROUNDS		60
#define CALLS		(ROUNDS / 3 + ROUNDS / 5)

static __attribute__((noinline)) void target(void)
{
	asm volatile("");
}

static __attribute__((noinline)) void caller_a(int i)
{
	if (i % 3 == 0)
		target();
	asm volatile("");
}

static __attribute__((noinline)) void caller_b(int i)
{
	if (i % 5 == 0)
		target();
	asm volatile("");
}

static void breakpoint_program(void)
{
	int i;

	for (i = 1; i <= ROUNDS; i++) {
		caller_a(i);
		caller_b(i);
	}
}

/* The address of the call to target() in @fn's first 64 bytes, or 0 */
static unsigned long call_site(void (*fn)(int))
{
	const unsigned char *p = (const void *)fn;
	int i;

	for (i = 0; i < 64; i++) {
		int rel;

		if (p[i] != 0xe8)
			continue;
		memcpy(&rel, p + i + 1, 4);
		if ((unsigned long)(p + i + 5 + rel) == (unsigned long)target)
			return (unsigned long)(p + i);
	}
	return 0;
}

/*
 * This process's executable mappings, for libipt's image: the files, and
 * the vDSO through a memfd that holds a copy of it. Returns the number of
 * mappings added, or -1.
 */
static int add_self(struct pt_image *image)
{
	/* sections stay mapped: no mmap and munmap at every switch of file */
	static struct pt_image_section_cache *iscache;
	char line[512], path[256];
	unsigned long start, end, off;
	int nr = 0, fd, isid;
	char perm[8];
	FILE *f;

	if (!iscache) {
		iscache = pt_iscache_alloc("self");
		if (!iscache || pt_iscache_set_limit(iscache, 64 << 20) < 0)
			return -1;
	}
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %255s", &start, &end,
			   perm, &off, path) != 5 || perm[2] != 'x')
			continue;
		if (!strcmp(path, "[vdso]")) {
			fd = memfd_create("vdso", 0);
			if (fd < 0 ||
			    write(fd, (void *)start, end - start) != (ssize_t)(end - start))
				continue;
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			off = 0;
		} else if (path[0] != '/') {
			continue;
		}
		isid = pt_iscache_add_file(iscache, path, off, end - start,
					   start);
		if (isid >= 0 && !pt_image_add_cached(image, iscache, isid, NULL))
			nr++;
	}
	fclose(f);
	return nr;
}

/*
 * Decode a sample's trace from its first PSB: the address where the trace
 * ends (where tracing was last disabled by an exception or interrupt, or
 * the next instruction when the trace runs out) and the last call before
 * it. 0 or a negative libipt error.
 */
static int decode_sample(struct pt_image *image, const unsigned char *trace,
			 size_t len, unsigned long *end, unsigned long *call)
{
	struct pt_insn_decoder *dec;
	struct pt_config config;
	struct pt_insn insn;
	int status;

	pt_config_init(&config);
	config.begin = (uint8_t *)trace;
	config.end = (uint8_t *)trace + len;
	dec = pt_insn_alloc_decoder(&config);
	if (!dec)
		return -pte_nomem;
	pt_insn_set_image(dec, image);
	*end = *call = 0;
	status = pt_insn_sync_forward(dec);
	while (status >= 0) {
		while (status & pts_event_pending) {
			struct pt_event ev;

			status = pt_insn_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
			/* the breakpoint's #DB: FUP, TIP.PGD into the kernel */
			if (ev.type == ptev_async_disabled)
				*end = ev.variant.async_disabled.at;
		}
		if (status < 0)
			break;
		status = pt_insn_next(dec, &insn, sizeof(insn));
		if (status < 0)
			break;
		if (insn.iclass == ptic_call)
			*call = insn.ip;
		*end = insn.ip + insn.size;
	}
	pt_insn_free_decoder(dec);
	return status == -pte_eos ? 0 : status;
}

/*
 * An execute breakpoint on target(), a sample at each hit: every sample's
 * trace ends at target(), entered by a call from one of its two call sites,
 * and the samples come from each site as often as the program calls.
 */
TEST(breakpoint_samples_end_at_the_breakpoint)
{
	unsigned long site_a = call_site(caller_a), site_b = call_site(caller_b);
	struct perf_event_attr attr;
	struct perf_event_mmap_page *rb;
	struct pt_image *image;
	int fd, from_a = 0, from_b = 0, ended = 0, nr = 0, bad = 0;
	static unsigned char rec[65536];
	__u64 head, pos, size;
	unsigned char *data;

	if (pt_type() < 0)
		SKIP(return, NO_PT);
	ASSERT_NE(0, site_a);
	ASSERT_NE(0, site_b);

	sample_attr(&attr, 1);
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.config = 0;
	attr.bp_type = HW_BREAKPOINT_X;
	attr.bp_addr = (unsigned long)target;
	attr.bp_len = sizeof(long);
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ITRACE;
	attr.wakeup_events = 1;
	fd = open_attr(&attr, 0);
	ASSERT_LE(0, fd) TH_LOG("breakpoint event: %s", strerror(errno));
	rb = map_rb(fd);
	ASSERT_NE(NULL, rb);
	/* some trace before the first hit: PSB and all */
	spin_ms(5);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	breakpoint_program();
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_DISABLE, 0));

	image = pt_image_alloc("self");
	ASSERT_NE(NULL, image);
	ASSERT_LT(0, add_self(image));
	head = __atomic_load_n(&rb->data_head, __ATOMIC_ACQUIRE);
	size = rb->data_size;
	data = (unsigned char *)rb + rb->data_offset;
	ASSERT_GE(size, head) TH_LOG("the perf stream wrapped");
	for (pos = 0; pos < head;) {
		struct perf_event_header hdr;
		unsigned long end, call, ip;
		__u64 tsize, n;
		int err;

		memcpy(&hdr, data + pos, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || pos + hdr.size > head) {
			TH_LOG("malformed record at %llu: size %u",
			       (unsigned long long)pos, hdr.size);
			bad++;
			break;
		}
		for (n = 0; n < hdr.size; n++)
			rec[n] = data[(pos + n) % size];
		pos += hdr.size;
		if (hdr.type != PERF_RECORD_SAMPLE)
			continue;
		nr++;
		memcpy(&ip, rec + sizeof(hdr), 8);
		memcpy(&tsize, rec + sizeof(hdr) + 16, 8);
		if (ip != (unsigned long)target || !tsize) {
			if (!bad++)
				TH_LOG("sample ip %#lx (target() %p), %llu bytes of trace",
				       ip, target, (unsigned long long)tsize);
			continue;
		}
		err = decode_sample(image, rec + sizeof(hdr) + 24, tsize, &end,
				    &call);
		if (err) {
			if (!bad++)
				TH_LOG("sample %d: libipt: %s", nr,
				       pt_errstr(pt_errcode(err)));
			continue;
		}
		if (end != (unsigned long)target && ended == nr - 1 - bad)
			TH_LOG("sample %d: the trace ends at %#lx, not at target() %p",
			       nr, end, target);
		ended += end == (unsigned long)target;
		from_a += call == site_a;
		from_b += call == site_b;
	}
	TH_LOG("%d samples: %d end at target(), %d called from caller_a, %d from caller_b, %d bad",
	       nr, ended, from_a, from_b, bad);
	EXPECT_EQ(CALLS, nr);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(nr, ended);
	EXPECT_EQ(ROUNDS / 3, from_a);
	EXPECT_EQ(ROUNDS / 5, from_b);
	pt_image_free(image);
	unmap_rb(rb);
	close(fd);
}

/* EINVAL for each malformed request, and the event works once fixed. */
TEST(errors_einval)
{
	struct perf_event_attr attr;
	int fd, sw;

	if (pt_type() < 0)
		SKIP(return, NO_PT);

	sample_attr(&attr, 1000000);
	attr.itrace_sample_size = 0;
	EXPECT_EQ(-1, open_attr(&attr, 0));
	EXPECT_EQ(EINVAL, errno);

	sample_attr(&attr, 1000000);
	attr.itrace_sample_size = SAMPLE_MAX + 1;
	EXPECT_EQ(-1, open_attr(&attr, 0));
	EXPECT_EQ(EINVAL, errno);

	/* not an itrace PMU, and no PMU at all */
	sample_attr(&attr, 1000000);
	attr.itrace_sample_type = PERF_TYPE_SOFTWARE;
	EXPECT_EQ(-1, open_attr(&attr, 0));
	EXPECT_EQ(EINVAL, errno);
	attr.itrace_sample_type = 0x7fffffff;
	EXPECT_EQ(-1, open_attr(&attr, 0));
	EXPECT_EQ(EINVAL, errno);

	/* the bit on an event of the itrace PMU itself */
	sample_attr(&attr, 0);
	attr.type = pt_type();
	attr.config = 0;
	EXPECT_EQ(-1, open_attr(&attr, 0));
	EXPECT_EQ(EINVAL, errno);

	/* attr too short to hold the fields */
	sample_attr(&attr, 1000000);
	attr.size = PERF_ATTR_SIZE_VER8;
	EXPECT_EQ(-1, open_attr(&attr, 0));
	EXPECT_EQ(EINVAL, errno);
	attr.size = PERF_ATTR_SIZE_VER9;
	EXPECT_EQ(-1, open_attr(&attr, 0));
	EXPECT_EQ(EINVAL, errno);

	/* mainline's config4 has no meaning here */
	sample_attr(&attr, 1000000);
	attr.config4 = 1;
	EXPECT_EQ(-1, open_attr(&attr, 0));
	EXPECT_EQ(EINVAL, errno);

	/* the fields without the bit */
	sample_attr(&attr, 1000000);
	attr.sample_type &= ~PERF_SAMPLE_ITRACE;
	EXPECT_EQ(-1, open_attr(&attr, 0));
	EXPECT_EQ(EINVAL, errno);

	/* fixed: it opens */
	sample_attr(&attr, 1000000);
	fd = open_attr(&attr, 0);
	EXPECT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	if (fd >= 0)
		close(fd);

	/* the old sizes of attr behave as before */
	memset(&attr, 0, sizeof(attr));
	attr.size = PERF_ATTR_SIZE_VER8;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.exclude_kernel = 1;
	sw = open_attr(&attr, 0);
	EXPECT_LE(0, sw);
	if (sw >= 0)
		close(sw);
}

/* An unprivileged user: kernel trace EACCES, beyond the allowance EPERM */
static int unprivileged_child(void)
{
	struct perf_event_attr attr;
	struct rlimit none = { 0, 0 };

	if (become_nobody() || setrlimit(RLIMIT_MEMLOCK, &none))
		return 1;
	sample_attr(&attr, 1000000);
	attr.exclude_kernel = 0;
	if (open_attr(&attr, 0) >= 0 || errno != EACCES)
		return 2;
	/* 60 KiB is 16 pages; the allowance is set to 8 KiB per CPU */
	sample_attr(&attr, 1000000);
	attr.itrace_sample_size = SAMPLE_MAX;
	if (open_attr(&attr, 0) >= 0 || errno != EPERM)
		return 3;
	/* within it: one page */
	attr.itrace_sample_size = 64;
	if (open_attr(&attr, 0) < 0)
		return 4;
	return 0;
}

TEST(errors_unprivileged)
{
	char mlock[32], paranoid[32];
	int ret;

	if (pt_type() < 0)
		SKIP(return, NO_PT);
	if (geteuid())
		SKIP(return, "needs root");
	if (sysconf(_SC_NPROCESSORS_ONLN) > 3)
		SKIP(return, "more CPUs than the allowance of the test fits");
	ASSERT_EQ(0, read_file(MLOCK_KB, mlock, sizeof(mlock)));
	ASSERT_EQ(0, read_file(PARANOID, paranoid, sizeof(paranoid)));
	ASSERT_EQ(0, write_file(MLOCK_KB, "8\n"));
	ASSERT_EQ(0, write_file(PARANOID, "2\n"));
	ret = in_child(unprivileged_child);
	write_file(MLOCK_KB, mlock);
	write_file(PARANOID, paranoid);
	EXPECT_EQ(0, ret);
}

/*
 * A sample at each page fault of a child that touches NR_TOUCH pages: each
 * carries SAMPLE_SIZE bytes of trace holding a PSB.
 */
#define NR_TOUCH	100

TEST(samples_carry_trace)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *rb;
	struct samples s;
	int fd, status;
	pid_t pid;

	if (pt_type() < 0)
		SKIP(return, NO_PT);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		raise(SIGSTOP);
		touch_pages(NR_TOUCH);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
	sample_attr(&attr, 1);
	fd = open_attr(&attr, pid);
	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	rb = map_rb(fd);
	ASSERT_NE(NULL, rb);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	kill(pid, SIGCONT);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	read_samples(rb, &s);
	TH_LOG("%d samples, %d with trace (%d with a PSB), biggest %llu bytes",
	       s.nr, s.with_trace, s.with_psb, (unsigned long long)s.max_size);
	EXPECT_EQ(0, s.bad);
	EXPECT_EQ(0, s.lost);
	/* the touches, and the faults of exiting (stack, libc) */
	EXPECT_LE(NR_TOUCH, s.nr);
	/* every sample: nothing else holds the PMU */
	EXPECT_EQ(s.nr, s.with_trace);
	EXPECT_EQ(SAMPLE_SIZE, s.max_size);
	EXPECT_LE(NR_TOUCH, s.with_psb);
	unmap_rb(rb);
	close(fd);
}

/* Inherited into threads and a fork child: their samples carry trace. */
#define NR_THREADS	3

static void *touch_thread(void *arg)
{
	touch_pages(20);
	return NULL;
}

static void threads_and_fork(void)
{
	pthread_t t[NR_THREADS];
	pid_t child;
	int i;

	for (i = 0; i < NR_THREADS; i++)
		if (pthread_create(&t[i], NULL, touch_thread, NULL))
			_exit(10);
	child = fork();
	if (!child) {
		touch_pages(20);
		_exit(0);
	}
	touch_pages(20);
	for (i = 0; i < NR_THREADS; i++)
		pthread_join(t[i], NULL);
	waitpid(child, NULL, 0);
}

TEST(inherited_into_threads_and_forks)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *rb;
	struct samples s;
	int fd, status;
	pid_t pid;

	if (pt_type() < 0)
		SKIP(return, NO_PT);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		cpu_set_t cpu0;

		/* all of them on CPU 0, where the event samples */
		CPU_ZERO(&cpu0);
		CPU_SET(0, &cpu0);
		if (sched_setaffinity(0, sizeof(cpu0), &cpu0))
			_exit(11);
		raise(SIGSTOP);
		threads_and_fork();
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
	sample_attr(&attr, 1);
	attr.inherit = 1;
	/* inherited events write into the parent's buffer: one CPU each */
	fd = sys_perf_event_open(&attr, pid, 0, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	rb = map_rb(fd);
	ASSERT_NE(NULL, rb);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	kill(pid, SIGCONT);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	read_samples(rb, &s);
	TH_LOG("%d samples, %d with trace from %d threads", s.nr,
	       s.with_trace, s.tids);
	EXPECT_EQ(0, s.bad);
	/* the parent, 3 threads and the fork child each have a trace */
	EXPECT_EQ(NR_THREADS + 2, s.tids);
	EXPECT_LE(5 * 20, s.with_trace);
	EXPECT_EQ(s.nr, s.with_trace);
	unmap_rb(rb);
	close(fd);
}

/*
 * A user's own intel_pt event on the task wins: it opens (no EBUSY) and
 * meanwhile the samples carry no trace; from the moment it is disabled or
 * closed, they do again (no context switch needed).
 */
TEST(own_pt_event_wins)
{
	struct perf_event_attr attr, pt = {
		.size = sizeof(pt),
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.disabled = 1,
	};
	struct samples s, won, disabled, again;
	struct perf_event_mmap_page *rb;
	void *ptrb, *aux;
	__u64 aux_head;
	int fd, ptfd;

	if (pt_type() < 0)
		SKIP(return, NO_PT);
	sample_attr(&attr, 1);
	fd = open_attr(&attr, 0);
	ASSERT_LE(0, fd);
	rb = map_rb(fd);
	ASSERT_NE(NULL, rb);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	touch_pages(20);
	read_samples(rb, &s);
	EXPECT_LE(20, s.with_trace);

	/* the user's own trace of this task, classic AUX mapping */
	pt.type = pt_type();
	ptfd = sys_perf_event_open(&pt, 0, -1, -1, 0);
	ASSERT_LE(0, ptfd) TH_LOG("own intel_pt event: %s", strerror(errno));
	ptrb = mmap(NULL, 2 * page_size(), PROT_READ | PROT_WRITE, MAP_SHARED,
		    ptfd, 0);
	ASSERT_NE(MAP_FAILED, ptrb);
	((struct perf_event_mmap_page *)ptrb)->aux_offset = 2 * page_size();
	((struct perf_event_mmap_page *)ptrb)->aux_size = 16 * page_size();
	aux = mmap(NULL, 16 * page_size(), PROT_READ, MAP_SHARED, ptfd,
		   2 * page_size());
	ASSERT_NE(MAP_FAILED, aux);
	/* as perf does: enabled once its AUX area is there */
	ASSERT_EQ(0, ioctl(ptfd, PERF_EVENT_IOC_ENABLE, 0));
	read_samples(rb, &s);
	/*
	 * Each window's samples are taken at its end, before anything else
	 * may fault (and sample): the logs and checks come after all four.
	 */
	touch_pages(20);
	read_samples(rb, &won);

	/*
	 * disabled, the user's event gives the PMU back at once (and, in
	 * mainline's overwrite mode, publishes its aux_head only now)
	 */
	ASSERT_EQ(0, ioctl(ptfd, PERF_EVENT_IOC_DISABLE, 0));
	aux_head = __atomic_load_n(&((struct perf_event_mmap_page *)ptrb)->aux_head,
				   __ATOMIC_ACQUIRE);
	touch_pages(20);
	read_samples(rb, &disabled);

	/* enabled again, it wins again */
	ASSERT_EQ(0, ioctl(ptfd, PERF_EVENT_IOC_ENABLE, 0));
	touch_pages(20);
	read_samples(rb, &again);

	/* closed while it runs (the mappings hold it open): the same */
	munmap(aux, 16 * page_size());
	munmap(ptrb, 2 * page_size());
	close(ptfd);
	touch_pages(20);
	read_samples(rb, &s);

	TH_LOG("with the user's event: %d samples, %d with trace: %s", won.nr,
	       won.with_trace, won.map);
	TH_LOG("the user's event disabled: %d samples, %d with trace: %s",
	       disabled.nr, disabled.with_trace, disabled.map);
	TH_LOG("enabled again: %d samples, %d with trace: %s", again.nr,
	       again.with_trace, again.map);
	TH_LOG("after it: %d samples, %d with trace: %s", s.nr, s.with_trace,
	       s.map);
	EXPECT_EQ(0, won.bad + disabled.bad + again.bad + s.bad);
	EXPECT_LE(20, won.nr);
	EXPECT_EQ(0, won.with_trace);
	EXPECT_NE(0, aux_head);
	EXPECT_LE(20, disabled.nr);
	EXPECT_EQ(disabled.nr, disabled.with_trace);
	EXPECT_LE(20, again.nr);
	EXPECT_EQ(0, again.with_trace);
	EXPECT_LE(20, s.nr);
	EXPECT_EQ(s.nr, s.with_trace);
	unmap_rb(rb);
	close(fd);
}

/*
 * A user's CPU-wide trace that stopped (its stop-mode trace fd buffer
 * full, not read) keeps the PMU of its CPU: the kernel's trace event of a
 * task sampled there does not take it when the task comes in (samples of
 * size 0), and restarting the user's event in place
 * (PERF_EVENT_IOC_SET_FILTER stops and starts it) finds the hardware its
 * own: no WRMSR to a tracing PT, no kernel report (the runner scans the
 * log).
 */
TEST(stopped_cpu_wide_event_keeps_pmu)
{
	struct perf_event_attr attr, pt = {
		.size = sizeof(pt),
		.exclude_hv = 1,
		.disabled = 1,
	};
	struct perf_event_mmap_page *rb, *prb, *tpg;
	struct samples s, restarted;
	int fd, ptfd, tfd, status;
	cpu_set_t cpu0;
	pid_t pid;

	if (pt_type() < 0)
		SKIP(return, NO_PT);
	if (geteuid())
		SKIP(return, "CPU-wide tracing of the kernel needs root");
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu0), &cpu0));

	pt.type = pt_type();
	ptfd = sys_perf_event_open(&pt, -1, 0, -1, 0);
	ASSERT_LE(0, ptfd) TH_LOG("CPU-wide intel_pt: %s", strerror(errno));
	prb = mmap(NULL, 2 * page_size(), PROT_READ | PROT_WRITE, MAP_SHARED,
		   ptfd, 0);
	ASSERT_NE(MAP_FAILED, prb);
	tfd = sys_perf_event_open(NULL, -1, -1, ptfd, PERF_FLAG_FD_ITRACE);
	ASSERT_LE(0, tfd);
	/* stop mode, two pages: full at once, and never read */
	tpg = mmap(NULL, 3 * page_size(), PROT_READ | PROT_WRITE, MAP_SHARED,
		   tfd, 0);
	ASSERT_NE(MAP_FAILED, tpg);
	ASSERT_EQ(0, ioctl(ptfd, PERF_EVENT_IOC_ENABLE, 0));
	spin_ms(20);

	/* a task of CPU 0 whose samples want trace */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		raise(SIGSTOP);
		touch_pages(20);
		raise(SIGSTOP);
		touch_pages(20);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
	sample_attr(&attr, 1);
	fd = open_attr(&attr, pid);
	ASSERT_LE(0, fd);
	rb = map_rb(fd);
	ASSERT_NE(NULL, rb);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	kill(pid, SIGCONT);
	ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
	read_samples(rb, &s);

	/* the user's event stopped and started in place, the task runs on */
	EXPECT_EQ(0, ioctl(ptfd, PERF_EVENT_IOC_SET_FILTER,
			   "filter 0xffffffff81000000/0x1000"))
		TH_LOG("SET_FILTER: %s", strerror(errno));
	kill(pid, SIGCONT);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	read_samples(rb, &restarted);

	TH_LOG("beside a stopped trace: %d samples, %d with trace; after the restart: %d, %d",
	       s.nr, s.with_trace, restarted.nr, restarted.with_trace);
	EXPECT_LE(20, s.nr);
	EXPECT_EQ(0, s.with_trace);
	EXPECT_LE(20, restarted.nr);
	EXPECT_EQ(0, restarted.with_trace);

	unmap_rb(rb);
	close(fd);
	munmap(tpg, 3 * page_size());
	munmap(prb, 2 * page_size());
	close(tfd);
	close(ptfd);
}

/*
 * Sampled events closed while they sample, over and over, with a sample
 * at every page fault of a child that faults as fast as it can (a few
 * thousand a second under emulation, far more on hardware), for a few
 * seconds: the kernel stays healthy (the runner scans its log), the
 * records stay well formed.
 */
static void fault_forever(void)
{
	for (;;)
		touch_pages(64);
}

TEST(close_while_sampling_under_load)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *rb;
	struct samples s;
	int fd, i, status, total = 0;
	pid_t pid;

	if (pt_type() < 0)
		SKIP(return, NO_PT);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		fault_forever();
		_exit(0);
	}
	for (i = 0; i < 20; i++) {
		sample_attr(&attr, 1);
		attr.disabled = 0;
		fd = open_attr(&attr, pid);
		ASSERT_LE(0, fd);
		if (i & 1) {
			usleep(20000);
			close(fd);
			continue;
		}
		rb = map_rb(fd);
		ASSERT_NE(NULL, rb);
		usleep(250000);
		read_samples(rb, &s);
		EXPECT_EQ(0, s.bad);
		total += s.nr;
		close(fd);
		unmap_rb(rb);
	}
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	TH_LOG("%d samples in 10 windows of 250 ms", total);
	EXPECT_LT(100, total);
}

/*
 * A 10 kHz load for 10 s: a child's user-mode instructions sampled (the
 * CPU's PMU) at the period that gives 10,000 samples a second at its
 * unsampled speed, 4 KiB of trace in each, the stream drained as it
 * fills; every record well formed, every sample with its trace, and the
 * kernel healthy (the runner scans its log). Skipped without a PMU that
 * counts instructions.
 */
TEST(sampling_load_10khz_10s)
{
	struct perf_event_attr count = {
		.size = sizeof(count),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_INSTRUCTIONS,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	struct perf_event_mmap_page *rb;
	struct perf_event_attr attr;
	long long total = 0, traced = 0, bad = 0, lost = 0;
	unsigned long long n0 = 0, n1 = 0, period;
	struct timespec t0, t;
	int fd, status;
	pid_t pid;

	if (pt_type() < 0)
		SKIP(return, NO_PT);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		for (;;)
			spin_ms(1000);
	}
	fd = sys_perf_event_open(&count, pid, -1, -1, 0);
	if (fd < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		SKIP(return, "no instructions counter");
	}
	ASSERT_EQ(sizeof(n0), read(fd, &n0, sizeof(n0)));
	usleep(200000);
	ASSERT_EQ(sizeof(n1), read(fd, &n1, sizeof(n1)));
	close(fd);
	period = (n1 - n0) * 5 / 10000;	/* per 200 ms: 10 kHz */
	if (period < 1000)
		period = 1000;

	sample_attr(&attr, period);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	attr.disabled = 0;
	fd = open_attr(&attr, pid);
	ASSERT_LE(0, fd) TH_LOG("instructions sampling: %s", strerror(errno));
	rb = map_rb(fd);
	ASSERT_NE(NULL, rb);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct samples s;

		usleep(20000);
		read_samples(rb, &s);
		total += s.nr;
		traced += s.with_trace;
		bad += s.bad;
		lost += s.lost;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 10);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	unmap_rb(rb);
	close(fd);
	TH_LOG("period %llu instructions (%llu a second unsampled)",
	       period, (n1 - n0) * 5);
	TH_LOG("%lld samples in 10 s, %lld with trace, %lld PERF_RECORD_LOST",
	       total, traced, lost);
	EXPECT_EQ(0, bad);
	EXPECT_LT(1000, total);
	EXPECT_EQ(total, traced);
}

/*
 * Under emulation a sample's copy of the trace takes long enough for perf
 * to lower kernel.perf_event_max_sample_rate to almost nothing: the tests
 * run without that throttle, and put the settings back.
 */
#define MAX_RATE	"/proc/sys/kernel/perf_event_max_sample_rate"
#define MAX_PERCENT	"/proc/sys/kernel/perf_cpu_time_max_percent"

int main(int argc, char **argv)
{
	char rate[32] = "", percent[32] = "";
	int ret;

	if (!geteuid() && !read_file(MAX_RATE, rate, sizeof(rate)) &&
	    !read_file(MAX_PERCENT, percent, sizeof(percent))) {
		write_file(MAX_PERCENT, "0\n");
		write_file(MAX_RATE, "100000\n");
	}
	ret = test_harness_run(argc, argv);
	if (percent[0]) {
		write_file(MAX_RATE, rate);
		write_file(MAX_PERCENT, percent);
	}
	return ret;
}
