// SPDX-License-Identifier: GPL-2.0
/*
 * Overwrite mode (a read-only trace fd mapping) counts every byte: a
 * deterministic program that writes many times the buffer size of trace
 * is traced twice, once into a stop-mode buffer of 1 MiB that never fills
 * (the reference: data_head there is the number of bytes written) and once
 * in overwrite mode into a small buffer. It checks that
 *
 *  - data_head of the small buffer counts every byte, wraps included: it
 *    is many buffer sizes, and within a quarter of one buffer size of the
 *    reference (the two runs, without ASLR, differ only by the packets
 *    around interrupts: tens of bytes), so a single lost or extra wrap
 *    fails;
 *  - the driver saw each wrap: two PMIs per lap (intel_pt: INT on the ToPA
 *    entry that holds the middle of the buffer and on the last one);
 *  - the newest buffer-full, from data_head % data_size on, decodes with a
 *    libipt packet walk from its first PSB to its end without error;
 *  - a read-only 1 + 1 page mapping fails with EINVAL (one page has no
 *    second chunk to count wraps at), a writable one still maps;
 *  - the classic AUX area at aux_offset keeps mainline's overwrite mode:
 *    aux_head is a position in the buffer, and no PMI is taken;
 *  - PERF_SAMPLE_AUX of a trace fd's overwrite buffer gives whole samples,
 *    of a writable AUX buffer (stop mode, classic) empty ones;
 *  - data_head advances while the traced task runs (the counting
 *    interrupts publish it), never goes back;
 *  - with PMIs that come later than a lap (the emulator's
 *    intel-pt-pmi-delay), the hardware stops rather than lap the buffer
 *    and each gap has its PERF_RECORD_ITRACE_LOST.
 *
 * Needs intel_pt; skipped without it.
 */
#define _GNU_SOURCE

#include <errno.h>
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

#include <linux/perf_event.h>

#include <intel-pt.h>

#include "../kselftest_harness.h"
#include "itrace_test.h"

#define PT_CAPS		"/sys/bus/event_source/devices/intel_pt/caps"
#define CHILD_ENV	"ITRACE_OVERWRITE_CHILD"

#define RB_PAGES	16	/* perf stream */
#define REF_PAGES	256	/* the reference: 1 MiB, never full */
#define SMALL_PAGES	4	/* overwrite mode: wraps many times */
/*
 * A writable buffer: the group stops when it is full, so the samples
 * are those taken while it fills; large enough for some at the 100 us
 * period of sample_aux() however fast the emulator fills it.
 */
#define WRITABLE_PAGES	64
#define ITERS		"60000"	/* indirect calls of the traced program */
#define MIN_LAPS	8	/* the trace is at least this many buffers */

/*
 * The traced program: a fixed number of indirect calls to two functions in
 * turn (a TIP packet each), the same control flow at every run.
 */
static void __attribute__((constructor)) traced_child(void)
{
	const char *env = getenv(CHILD_ENV);

	if (!env)
		return;
	indirect_calls(strtoul(env, NULL, 0));
	_exit(0);
}

/* PMIs taken so far, all CPUs: the "PMI:" line of /proc/interrupts */
static long long pmi_count(void)
{
	char line[4096], *p, *end;
	long long sum = -1, v;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, "PMI:", 4))
			continue;
		sum = 0;
		for (p += 4; ; p = end) {
			v = strtoll(p, &end, 10);
			if (end == p)
				break;
			sum += v;
		}
		break;
	}
	fclose(f);

	return sum;
}

struct run {
	unsigned long long	head;	/* data_head after the program exited */
	unsigned long long	size;	/* data_size */
	long long		pmis;	/* PMIs taken meanwhile */
	int			lost;	/* PERF_RECORD_ITRACE_LOST records */
	unsigned char		*newest; /* the buffer, oldest byte first */
};

static int count_lost(struct perf_event_mmap_page *rb)
{
	unsigned long long head = __atomic_load_n(&rb->data_head,
						  __ATOMIC_ACQUIRE);
	unsigned char *data = (unsigned char *)rb + rb->data_offset;
	unsigned long long pos = rb->data_tail, size = rb->data_size;
	struct perf_event_header h;
	int lost = 0;

	while (pos < head) {
		memcpy(&h, data + pos % size, sizeof(h));
		if (h.size < sizeof(h))
			return -1;
		if (h.type == PERF_RECORD_ITRACE_LOST)
			lost++;
		pos += h.size;
	}

	return lost;
}

/*
 * Trace ITERS indirect calls of a child into a trace fd mapping @pages
 * long, with @prot; fills @r once the child has exited.
 */
static void trace_run(struct __test_metadata *_metadata, int prot,
		      size_t pages, struct run *r)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.disabled	= 1,
		.enable_on_exec	= 1,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
	};
	struct perf_event_mmap_page *rb, *pg;
	unsigned long long start;
	unsigned char *data;
	int fd, tfd, go, status, err;
	long long pmis;
	pid_t pid;

	attr.type = pt_type();
	/* the same trace size at every run: no ASLR */
	pid = fork_self_child(CHILD_ENV, ITERS, 1, &go);
	ASSERT_LE(0, pid);

	fd = sys_perf_event_open(&attr, pid, -1, -1, 0);
	if (fd < 0)
		kill(pid, SIGKILL);
	ASSERT_LE(0, fd) TH_LOG("intel_pt event: %s", strerror(errno));
	err = stream_and_trace_fd(fd, RB_PAGES, &rb, &tfd);
	if (err)
		kill(pid, SIGKILL);
	ASSERT_EQ(0, err) TH_LOG("stream or trace fd: %s", strerror(-err));
	pg = mmap(NULL, (1 + pages) * page_size(), prot, MAP_SHARED, tfd, 0);
	if (pg == MAP_FAILED)
		kill(pid, SIGKILL);
	ASSERT_NE(MAP_FAILED, pg) TH_LOG("trace mmap: %s", strerror(errno));

	pmis = pmi_count();
	ASSERT_EQ(1, write(go, "g", 1));
	close(go);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	r->pmis = pmi_count() - pmis;

	/* The child exited: the event is scheduled out, data_head final */
	r->head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	r->size = pg->data_size;
	r->lost = count_lost(rb);

	r->newest = malloc(r->size);
	ASSERT_NE(NULL, r->newest);
	data = (unsigned char *)pg + pg->data_offset;
	start = r->head % r->size;
	memcpy(r->newest, data + start, r->size - start);
	memcpy(r->newest + r->size - start, data, start);

	munmap(pg, (1 + pages) * page_size());
	munmap(rb, (1 + RB_PAGES) * page_size());
	close(tfd);
	close(fd);
}

/*
 * Walk the packets of @len bytes from the first PSB to the end; return the
 * offset of that PSB, or -1 if there is none or the walk fails before the
 * end. With @cuts, a packet that does not decode is where a ToPA stop cut
 * the output off (SDM "ToPA STOP"): the walk goes on from the next PSB
 * and counts it in *@cuts.
 */
static long walk_from_psb(struct __test_metadata *_metadata,
			  unsigned char *buf, size_t len, int *cuts)
{
	struct pt_packet_decoder *dec;
	struct pt_config config;
	struct pt_packet pkt;
	size_t start, off;
	long first;
	int ret;

	first = find_psb(buf, len);
	if (first < 0) {
		TH_LOG("no PSB in %zu bytes", len);
		return -1;
	}
	start = first;

	pt_config_init(&config);
	config.begin = buf;
	config.end = buf + len;
	dec = pt_pkt_alloc_decoder(&config);
	if (!dec)
		return -1;

	off = start;
	ret = pt_pkt_sync_set(dec, start);
	while (!ret && off < len) {
		ret = pt_pkt_next(dec, &pkt, sizeof(pkt));
		if (ret >= 0 && (pkt.type == ppt_ovf || pkt.type == ppt_invalid)) {
			TH_LOG("packet type %d at %zu", pkt.type, off);
			ret = -pte_bad_opc;
		}
		if (ret < 0 && cuts) {
			uint64_t at;

			ret = pt_pkt_sync_forward(dec);
			if (ret < 0 || pt_pkt_get_sync_offset(dec, &at) < 0)
				break;
			TH_LOG("cut at %zu, on from the PSB at %llu", off,
			       (unsigned long long)at);
			(*cuts)++;
			off = at;
			continue;
		}
		if (ret < 0)
			break;
		off += pkt.size;
		ret = 0;
	}
	pt_pkt_free_decoder(dec);

	/* The trace stopped before the copy: it ends with a whole packet. */
	if (off != len) {
		TH_LOG("walk from %zu stopped at %zu of %zu: %s", start, off,
		       len, ret < 0 ? pt_errstr(pt_errcode(ret)) : "past end");
		return -1;
	}

	return start;
}

TEST(counts_every_byte)
{
	struct run ref = { 0 }, ovw = { 0 };
	unsigned long long diff, laps;
	long first;

	if (pt_type() < 0)
		SKIP(return, NO_PT);

	trace_run(_metadata, PROT_READ | PROT_WRITE, REF_PAGES, &ref);
	trace_run(_metadata, PROT_READ, SMALL_PAGES, &ovw);

	diff = ref.head > ovw.head ? ref.head - ovw.head : ovw.head - ref.head;
	laps = ovw.head / ovw.size;
	TH_LOG("reference (stop mode, %llu bytes): data_head %llu, %lld PMIs",
	       ref.size, ref.head, ref.pmis);
	TH_LOG("overwrite (%llu bytes): data_head %llu (%llu laps), %lld PMIs, off by %llu",
	       ovw.size, ovw.head, laps, ovw.pmis, diff);

	/* The reference holds the whole trace: never full, nothing lost */
	ASSERT_LT(ref.head, ref.size);
	ASSERT_EQ(0, ref.lost);
	ASSERT_LE(MIN_LAPS * ovw.size, ref.head);

	/* Every byte, wraps included: a wrap more or less is a buffer size */
	EXPECT_LE(MIN_LAPS * ovw.size, ovw.head);
	EXPECT_GT(ovw.size / 4, diff);
	EXPECT_EQ(0, ovw.lost);

	/* Two PMIs per lap: the driver saw each wrap */
	EXPECT_LE(2 * laps - 1, ovw.pmis);
	EXPECT_GE(2 * laps + 3, ovw.pmis);

	/* The newest buffer-full decodes from its first PSB to its end */
	first = walk_from_psb(_metadata, ovw.newest, ovw.size, NULL);
	EXPECT_LE(0, first);
	TH_LOG("newest data: first PSB at %ld of %llu", first, ovw.size);

	free(ref.newest);
	free(ovw.newest);
}

/*
 * A late PMI: the emulator's intel-pt-pmi-delay property holds each ToPA
 * PMI back for that many bytes of output, more than a lap of the small
 * buffer, so the interrupts that count the laps come too late. The
 * driver's STOP on the entry before its last look at the write position
 * makes the hardware stop rather than lap it: data_head never counts
 * more than was written, and each stretch the hardware did not write has
 * its PERF_RECORD_ITRACE_LOST. (Without that STOP, whole laps would go
 * uncounted and unreported.) The PMI that comes at the stop moves the
 * output past the STOP region and the trace goes on at once. The guest
 * boot that sets the property says so in ITRACE_PT_PMI_DELAY
 * (guest/pmi-delay.sh); skipped otherwise.
 */
TEST(late_pmi_reports_lost_laps)
{
	const char *delay = getenv("ITRACE_PT_PMI_DELAY");
	struct run ref = { 0 }, ovw = { 0 };
	int cuts = 0;
	long first;

	if (pt_type() < 0)
		SKIP(return, NO_PT);
	if (!delay)
		SKIP(return, "needs intel-pt-pmi-delay (guest/pmi-delay.sh)");
	ASSERT_LT(SMALL_PAGES * page_size(), strtoul(delay, NULL, 0));

	trace_run(_metadata, PROT_READ | PROT_WRITE, REF_PAGES, &ref);
	trace_run(_metadata, PROT_READ, SMALL_PAGES, &ovw);
	TH_LOG("PMIs %s bytes late: reference data_head %llu", delay, ref.head);
	TH_LOG("overwrite (%llu bytes): data_head %llu, %d ITRACE_LOST, %lld PMIs",
	       ovw.size, ovw.head, ovw.lost, ovw.pmis);

	ASSERT_LT(ref.head, ref.size);
	ASSERT_EQ(0, ref.lost);
	ASSERT_LE(MIN_LAPS * ovw.size, ref.head);

	/* never more than was written; what was not, reported */
	EXPECT_GE(ref.head + ovw.size / 4, ovw.head);
	EXPECT_LT(0, ovw.lost);
	/* the hardware stopped: a lap at most per PMI, none uncounted */
	EXPECT_LE(ovw.head / ovw.size, ovw.pmis);

	/* the trace goes on after each stop: little more than the PMI's lag */
	EXPECT_LE(ref.head / 2, ovw.head);

	/*
	 * The newest data decodes from its first PSB to its end, but for
	 * packets a stop cut off, each followed by the restart's PSB.
	 */
	first = walk_from_psb(_metadata, ovw.newest, ovw.size, &cuts);
	EXPECT_LE(0, first);
	EXPECT_GE(ovw.lost, cuts);
	TH_LOG("newest data: first PSB at %ld, %d packets cut", first, cuts);

	free(ref.newest);
	free(ovw.newest);
}

static int open_pt_self(void)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= pt_type(),
		.disabled	= 1,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
	};

	return sys_perf_event_open(&attr, 0, -1, -1, 0);
}

/*
 * An intel_pt event on this process (disabled, user mode), its perf stream
 * mapped and its trace fd open: the tests below map the trace themselves.
 */
FIXTURE(self_pt)
{
	int	fd;	/* the event */
	int	tfd;	/* its trace fd */
	struct perf_event_mmap_page *rb;	/* its perf stream */
};

FIXTURE_SETUP(self_pt)
{
	int err;

	self->fd = -1;
	self->tfd = -1;
	self->rb = MAP_FAILED;
	if (pt_type() < 0)
		SKIP(return, NO_PT);

	self->fd = open_pt_self();
	ASSERT_LE(0, self->fd);
	err = stream_and_trace_fd(self->fd, RB_PAGES, &self->rb, &self->tfd);
	ASSERT_EQ(0, err) TH_LOG("stream or trace fd: %s", strerror(-err));
}

FIXTURE_TEARDOWN(self_pt)
{
	if (self->rb != MAP_FAILED)
		munmap(self->rb, (1 + RB_PAGES) * page_size());
	if (self->tfd >= 0)
		close(self->tfd);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(self_pt, read_only_one_page_einval)
{
	void *pg;

	EXPECT_EQ(MAP_FAILED, mmap(NULL, 2 * page_size(), PROT_READ,
				   MAP_SHARED, self->tfd, 0));
	EXPECT_EQ(EINVAL, errno);

	/* Stop mode keeps its one-page buffer */
	pg = mmap(NULL, 2 * page_size(), PROT_READ | PROT_WRITE, MAP_SHARED,
		  self->tfd, 0);
	EXPECT_NE(MAP_FAILED, pg);
	if (pg != MAP_FAILED)
		munmap(pg, 2 * page_size());

	/* Two pages of overwrite mode */
	pg = mmap(NULL, 3 * page_size(), PROT_READ, MAP_SHARED, self->tfd, 0);
	EXPECT_NE(MAP_FAILED, pg) TH_LOG("1 + 2 pages: %s", strerror(errno));
	if (pg != MAP_FAILED)
		munmap(pg, 3 * page_size());
}

/*
 * Counting the wraps needs ToPA tables of several output entries (an INT
 * in the middle of the buffer): without them (the first generation of
 * Intel PT, caps/topa_multiple_entries 0) a read-only mapping is ENOMEM,
 * with them it maps. Stop mode maps either way.
 */
TEST_F(self_pt, read_only_needs_multiple_entries)
{
	void *pg;
	char multi[8];

	ASSERT_EQ(0, read_file(PT_CAPS "/topa_multiple_entries", multi,
			       sizeof(multi)));

	pg = mmap(NULL, (1 + SMALL_PAGES) * page_size(), PROT_READ, MAP_SHARED,
		  self->tfd, 0);
	TH_LOG("topa_multiple_entries %c: read-only mapping %s", multi[0],
	       pg == MAP_FAILED ? strerror(errno) : "mapped");
	if (multi[0] == '0') {
		EXPECT_EQ(MAP_FAILED, pg);
		EXPECT_EQ(ENOMEM, errno);
	} else {
		EXPECT_NE(MAP_FAILED, pg);
	}
	if (pg != MAP_FAILED)
		munmap(pg, (1 + SMALL_PAGES) * page_size());

	pg = mmap(NULL, (1 + SMALL_PAGES) * page_size(),
		  PROT_READ | PROT_WRITE, MAP_SHARED, self->tfd, 0);
	EXPECT_NE(MAP_FAILED, pg) TH_LOG("stop mode: %s", strerror(errno));
	if (pg != MAP_FAILED)
		munmap(pg, (1 + SMALL_PAGES) * page_size());
}

/*
 * Mainline's own overwrite mode, the classic AUX area at aux_offset mapped
 * read-only (perf record -S): untouched by the series, aux_head stays a
 * position in the buffer and no PMI is taken.
 */
TEST(classic_aux_snapshot_unchanged)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.disabled	= 1,
		.enable_on_exec	= 1,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
	};
	size_t aux_len = SMALL_PAGES * page_size();
	struct perf_event_mmap_page *rb;
	int fd, go, status;
	unsigned long long head;
	long long pmis;
	void *aux;
	pid_t pid;

	if (pt_type() < 0)
		SKIP(return, NO_PT);
	attr.type = pt_type();

	pid = fork_self_child(CHILD_ENV, ITERS, 0, &go);
	ASSERT_LE(0, pid);

	fd = sys_perf_event_open(&attr, pid, -1, -1, 0);
	if (fd < 0)
		kill(pid, SIGKILL);
	ASSERT_LE(0, fd);
	rb = mmap(NULL, (1 + RB_PAGES) * page_size(), PROT_READ | PROT_WRITE,
		  MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, rb);
	rb->aux_offset = (1 + RB_PAGES) * page_size();
	rb->aux_size = aux_len;
	aux = mmap(NULL, aux_len, PROT_READ, MAP_SHARED, fd, rb->aux_offset);
	if (aux == MAP_FAILED)
		kill(pid, SIGKILL);
	ASSERT_NE(MAP_FAILED, aux);

	pmis = pmi_count();
	ASSERT_EQ(1, write(go, "g", 1));
	close(go);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	pmis = pmi_count() - pmis;

	head = __atomic_load_n(&rb->aux_head, __ATOMIC_ACQUIRE);
	TH_LOG("classic snapshot: aux_head %llu of %zu, %lld PMIs", head,
	       aux_len, pmis);
	EXPECT_LT(0, head);
	EXPECT_GE(aux_len, head);
	EXPECT_EQ(0, pmis);

	munmap(aux, aux_len);
	munmap(rb, (1 + RB_PAGES) * page_size());
	close(fd);
}

/*
 * PERF_SAMPLE_AUX: the PT event leads a group whose software clock samples
 * carry the newest AUX_SAMPLE bytes of its trace. sample_aux() runs such a
 * group on this thread until 16 samples' worth of records (or for 5 s)
 * and parses the samples, { header; u64 size; char data[size]; }: whole
 * ones carry all AUX_SAMPLE bytes, empty ones say size 0 in a record of
 * that size, anything else (or a record stream that does not parse to
 * data_head) is bad.
 */
#define AUX_SAMPLE	1024

struct aux_samples {
	int samples, whole, empty, bad;
};

/* 0, or -errno of the sampling event's perf_event_open() or mmap() */
static int sample_aux(int fd, struct aux_samples *res)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= PERF_TYPE_SOFTWARE,
		.config		= PERF_COUNT_SW_TASK_CLOCK,
		.sample_period	= 100000,	/* ns of task clock */
		.sample_type	= PERF_SAMPLE_AUX,
		.aux_sample_size = AUX_SAMPLE,
		.exclude_kernel	= 1,
	};
	size_t len = (1 + 64) * page_size();
	struct perf_event_mmap_page *srb;
	unsigned long long pos, shead;
	time_t t0 = time(NULL);
	unsigned char *data;
	unsigned long i;
	int sfd, err = 0;

	memset(res, 0, sizeof(*res));
	sfd = sys_perf_event_open(&attr, 0, -1, fd, 0);
	if (sfd < 0)
		return -errno;
	srb = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);
	if (srb == MAP_FAILED) {
		err = -errno;
		close(sfd);
		return err;
	}

	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP))
		err = -errno;
	for (i = 0; !err && i < 20000; i++) {
		indirect_calls(10000);
		if (time(NULL) > t0 + 5 ||
		    __atomic_load_n(&srb->data_head, __ATOMIC_ACQUIRE) >
		    16 * (AUX_SAMPLE + 16))
			break;
	}
	if (ioctl(fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP) && !err)
		err = -errno;

	shead = __atomic_load_n(&srb->data_head, __ATOMIC_ACQUIRE);
	data = (unsigned char *)srb + srb->data_offset;
	for (pos = srb->data_tail; pos < shead && shead <= srb->data_size;) {
		struct perf_event_header *h = (void *)(data + pos);
		__u64 *size = (void *)(h + 1);

		if (h->size < sizeof(*h) || pos + h->size > shead)
			break;
		if (h->type == PERF_RECORD_SAMPLE) {
			res->samples++;
			if (*size == AUX_SAMPLE &&
			    h->size == sizeof(*h) + 8 + AUX_SAMPLE)
				res->whole++;
			else if (!*size && h->size == sizeof(*h) + 8)
				res->empty++;
			else
				res->bad++;
		}
		pos += h->size;
	}
	if (pos != shead)
		res->bad++;

	munmap(srb, len);
	close(sfd);
	return err;
}

/*
 * From a trace fd's overwrite buffer each sample has all AUX_SAMPLE bytes
 * (the driver's wrap-counting PMI does not disturb the copy), and
 * data_head still counts every byte.
 */
TEST(aux_sampling_of_trace_fd)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.disabled	= 1,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
	};
	struct perf_event_mmap_page *rb, *pg;
	struct aux_samples s;
	unsigned long long head;
	int fd, tfd, err;

	if (pt_type() < 0)
		SKIP(return, NO_PT);
	attr.type = pt_type();

	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd);
	err = stream_and_trace_fd(fd, RB_PAGES, &rb, &tfd);
	ASSERT_EQ(0, err) TH_LOG("stream or trace fd: %s", strerror(-err));
	pg = mmap(NULL, (1 + SMALL_PAGES) * page_size(), PROT_READ,
		  MAP_SHARED, tfd, 0);
	ASSERT_NE(MAP_FAILED, pg);

	err = sample_aux(fd, &s);
	ASSERT_EQ(0, err) TH_LOG("AUX sampling event: %s", strerror(-err));
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	TH_LOG("data_head %llu (%llu laps), %d samples, %d whole",
	       head, head / pg->data_size, s.samples, s.whole);
	EXPECT_LT(2 * pg->data_size, head);
	EXPECT_LT(0, s.samples);
	EXPECT_EQ(s.samples, s.whole);

	munmap(pg, (1 + SMALL_PAGES) * page_size());
	munmap(rb, (1 + RB_PAGES) * page_size());
	close(tfd);
	close(fd);
}

/*
 * A writable AUX buffer (a trace fd in stop mode, or the classic AUX area
 * mapped writable) belongs to its reader: the PMU fills it up to aux_tail
 * and interrupts at the watermark, and Intel PT's snapshot_aux() only
 * copies from an overwrite buffer. PERF_SAMPLE_AUX from such a buffer
 * gives samples of size 0, whole records, and no kernel warning (the
 * kernel-health check of every boot looks); the trace itself goes on.
 */
TEST(aux_sampling_of_writable_buffer_is_empty)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.disabled	= 1,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
	};
	size_t aux_len = WRITABLE_PAGES * page_size();
	struct perf_event_mmap_page *rb, *pg;
	struct aux_samples s;
	int fd, tfd, classic, err;
	void *aux;

	if (pt_type() < 0)
		SKIP(return, NO_PT);
	attr.type = pt_type();

	for (classic = 0; classic < 2; classic++) {
		fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
		ASSERT_LE(0, fd);
		rb = mmap(NULL, (1 + RB_PAGES) * page_size(),
			  PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, rb);
		if (classic) {
			tfd = -1;
			rb->aux_offset = (1 + RB_PAGES) * page_size();
			rb->aux_size = aux_len;
			aux = mmap(NULL, aux_len, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, rb->aux_offset);
			ASSERT_NE(MAP_FAILED, aux);
			pg = rb;
		} else {
			tfd = sys_perf_event_open(NULL, -1, -1, fd,
						  PERF_FLAG_FD_ITRACE);
			ASSERT_LE(0, tfd);
			aux = NULL;
			pg = mmap(NULL, (1 + WRITABLE_PAGES) * page_size(),
				  PROT_READ | PROT_WRITE, MAP_SHARED, tfd, 0);
			ASSERT_NE(MAP_FAILED, pg);
		}

		err = sample_aux(fd, &s);
		ASSERT_EQ(0, err) TH_LOG("AUX sampling event: %s",
					 strerror(-err));
		TH_LOG("%s: %d samples, %d empty, %d bad; %s %llu",
		       classic ? "classic AUX area" : "trace fd stop mode",
		       s.samples, s.empty, s.bad,
		       classic ? "aux_head" : "data_head",
		       classic ? pg->aux_head : pg->data_head);
		EXPECT_LT(0, s.samples);
		EXPECT_EQ(s.samples, s.empty);
		EXPECT_EQ(0, s.bad);
		EXPECT_LT(0, classic ? pg->aux_head : pg->data_head);

		if (aux)
			munmap(aux, aux_len);
		else
			munmap(pg, (1 + WRITABLE_PAGES) * page_size());
		munmap(rb, (1 + RB_PAGES) * page_size());
		if (tfd >= 0)
			close(tfd);
		close(fd);
	}
}

/* Voluntary and involuntary context switches of this thread so far */
static long context_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;

	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/*
 * data_head follows the trace while the traced task runs: the interrupts
 * that count the wraps publish the count. The test traces itself and
 * looks at data_head between stretches of work; an advance seen without a
 * context switch in between (which would end the transaction and publish
 * anyway) can only come from those interrupts. It must never go back, and
 * the final value, after DISABLE, is at least the last one seen.
 */
TEST_F(self_pt, data_head_while_running)
{
	struct perf_event_mmap_page *pg;
	unsigned long long head, last = 0;
	int steps = 0, quiet = 0, back = 0;
	long csw, last_csw;
	time_t t0 = time(NULL);

	pg = mmap(NULL, (1 + SMALL_PAGES) * page_size(), PROT_READ,
		  MAP_SHARED, self->tfd, 0);
	ASSERT_NE(MAP_FAILED, pg);

	last_csw = context_switches();
	ASSERT_LE(0, last_csw);
	ASSERT_EQ(0, ioctl(self->tfd, PERF_EVENT_IOC_ENABLE, 0));
	/* Until 8 quiet advances and 4 laps, or for 10 s at most */
	while (time(NULL) < t0 + 10) {
		indirect_calls(1000);
		head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
		csw = context_switches();
		if (head < last)
			back++;
		if (head > last) {
			steps++;
			if (csw == last_csw)
				quiet++;
		}
		last = head;
		last_csw = csw;
		if (quiet >= 8 && head >= 4 * pg->data_size)
			break;
	}
	ASSERT_EQ(0, ioctl(self->tfd, PERF_EVENT_IOC_DISABLE, 0));
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);

	TH_LOG("%d advances of data_head, %d without a context switch",
	       steps, quiet);
	TH_LOG("last seen %llu, final %llu (%llu laps)",
	       last, head, head / pg->data_size);
	EXPECT_LE(8, quiet);
	EXPECT_EQ(0, back);
	EXPECT_LE(last, head);
	EXPECT_LE(4 * pg->data_size, head);

	munmap(pg, (1 + SMALL_PAGES) * page_size());
}

TEST_HARNESS_MAIN
