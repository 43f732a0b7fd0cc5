// SPDX-License-Identifier: GPL-2.0
/*
 * Stop mode under load: a reader thread drains a small trace fd buffer
 * (writable mapping) while the traced program runs, through many
 * fill/stop/drain/enable cycles. It checks that
 *
 *  - the bytes read add up to the final data_head exactly: nothing skipped,
 *    nothing read twice, nothing written over unread trace;
 *  - the event's perf stream has one PERF_RECORD_ITRACE_LOST per stop, at
 *    the data_head where the trace stopped;
 *  - the concatenated trace, walked packet by packet with libipt, breaks
 *    only at those offsets (where a cut packet may end a piece), and each
 *    piece after a stop starts with a PSB, as tracing resumes with PSB+.
 *
 * Needs intel_pt; skipped without it.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <linux/perf_event.h>

#include <intel-pt.h>

#include "../kselftest_harness.h"
#include "itrace_test.h"

#define CHILD_ENV	"ITRACE_STRESS_CHILD"

#define RB_PAGES	64	/* perf stream: AUX and ITRACE_LOST records */
#define TRACE_PAGES	2	/* trace: small, so that it fills quickly */
#define CYCLES		1000	/* fill/stop/drain/enable cycles */
#define MAX_SECONDS	50	/* give up after this long */
#define POLL_MS		1000	/* a stop not seen by then: enable again */

/*
 * The traced program, until killed: indirect calls to two functions in
 * turn, so that each call is a TIP packet (a few bytes) and the buffer
 * fills quickly even under emulation.
 */
static void __attribute__((constructor)) traced_child(void)
{
	if (!getenv(CHILD_ENV))
		return;
	indirect_calls(0);
}

struct reader {
	int				fd, tfd;
	struct perf_event_mmap_page	*rb, *pg;

	/* the trace read, concatenated */
	unsigned char			*trace;
	size_t				len, cap;

	/* offsets of the PERF_RECORD_ITRACE_LOST records, in order */
	unsigned long long		*lost;
	int				nr_lost, cap_lost;

	int				stops;	/* EPOLLIN and the trace stopped */
	int				kicks;	/* ENABLEs after a quiet poll */
	int				bad;	/* malformed or misplaced records */
	int				err;	/* errno of a failed call */
	char				why[128];
};

static int add_lost(struct reader *r, unsigned long long off)
{
	if (r->nr_lost == r->cap_lost) {
		int cap = r->cap_lost ? 2 * r->cap_lost : 1024;
		void *p = realloc(r->lost, cap * sizeof(*r->lost));

		if (!p)
			return -1;
		r->lost = p;
		r->cap_lost = cap;
	}
	r->lost[r->nr_lost++] = off;

	return 0;
}

/* Read the new records of the perf stream (which wraps) and release them */
static void drain_stream(struct reader *r)
{
	struct perf_event_mmap_page *rb = r->rb;
	unsigned long long head = __atomic_load_n(&rb->data_head,
						  __ATOMIC_ACQUIRE);
	unsigned char *data = (unsigned char *)rb + rb->data_offset;
	unsigned long long pos = rb->data_tail, size = rb->data_size;

	while (pos < head) {
		struct {
			struct perf_event_header	hdr;
			__u64				offset, size;
		} rec;
		size_t i;

		for (i = 0; i < sizeof(rec.hdr); i++)
			((unsigned char *)&rec)[i] = data[(pos + i) % size];
		if (rec.hdr.size < sizeof(rec.hdr) || pos + rec.hdr.size > head) {
			r->bad++;
			snprintf(r->why, sizeof(r->why), "bad record at %llu", pos);
			break;
		}
		if (rec.hdr.type == PERF_RECORD_ITRACE_LOST) {
			for (i = 0; i < sizeof(rec); i++)
				((unsigned char *)&rec)[i] =
					data[(pos + i) % size];
			if (rec.hdr.size != sizeof(rec) || rec.size ||
			    (r->nr_lost && rec.offset <= r->lost[r->nr_lost - 1])) {
				r->bad++;
				snprintf(r->why, sizeof(r->why),
					 "ITRACE_LOST size %u offset %llu after %llu",
					 rec.hdr.size, (unsigned long long)rec.offset,
					 r->nr_lost ? r->lost[r->nr_lost - 1] : 0);
			}
			if (add_lost(r, rec.offset))
				r->err = ENOMEM;
		}
		pos += rec.hdr.size;
	}
	/* Pairs with the kernel's read of data_tail: we are done reading */
	__atomic_store_n(&rb->data_tail, pos, __ATOMIC_RELEASE);
}

/* Copy [data_tail, data_head) of the trace and release it */
static int drain_trace(struct reader *r)
{
	struct perf_event_mmap_page *pg = r->pg;
	unsigned long long head = __atomic_load_n(&pg->data_head,
						  __ATOMIC_ACQUIRE);
	unsigned long long tail = pg->data_tail, size = pg->data_size;
	unsigned char *data = (unsigned char *)pg + pg->data_offset;

	if (head - tail > size) {
		r->bad++;
		snprintf(r->why, sizeof(r->why),
			 "overrun: data_head %llu data_tail %llu", head, tail);
		return -1;
	}
	if (tail != r->len) {
		r->bad++;
		snprintf(r->why, sizeof(r->why), "data_tail %llu, read %zu",
			 tail, r->len);
		return -1;
	}
	while (r->len + (head - tail) > r->cap) {
		void *p = realloc(r->trace, r->cap ? 2 * r->cap : 1 << 20);

		if (!p) {
			r->err = ENOMEM;
			return -1;
		}
		r->trace = p;
		r->cap = r->cap ? 2 * r->cap : 1 << 20;
	}
	for (; tail < head; tail++)
		r->trace[r->len++] = data[tail % size];
	/* Our reads above complete before the kernel may write there again */
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);

	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);

	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The reader thread: the watermark is the whole buffer, so the trace fd
 * becomes readable when the trace stopped; drain both buffers, enable.
 */
static void *reader_thread(void *arg)
{
	struct reader *r = arg;
	struct pollfd pfd = { .fd = r->tfd, .events = POLLIN };
	double end = now() + MAX_SECONDS;

	while (r->stops < CYCLES && !r->bad && !r->err && now() < end) {
		int n = poll(&pfd, 1, POLL_MS);

		if (n < 0) {
			r->err = errno;
			break;
		}
		if (n && (pfd.revents & ~POLLIN)) {
			r->bad++;
			snprintf(r->why, sizeof(r->why), "revents %#x",
				 pfd.revents);
			break;
		}
		drain_stream(r);
		if (drain_trace(r))
			break;
		if (n)
			r->stops++;
		else
			r->kicks++;	/* see the TH_LOG in the test */
		if (ioctl(r->tfd, PERF_EVENT_IOC_ENABLE, 0)) {
			r->err = errno;
			break;
		}
	}

	return NULL;
}

/*
 * Walk the packets of the trace with libipt. A piece ends at each lost
 * offset (the trace stopped there, maybe inside a packet) and the next
 * starts there with a PSB. Returns the number of places where the walk
 * broke anywhere else, or found an overflow; *pieces counts the pieces.
 */
static int walk_trace(struct __test_metadata *_metadata, struct reader *r,
		      int *pieces)
{
	struct pt_config config;
	struct pt_packet_decoder *dec;
	static const unsigned char psb[2] = { 0x02, 0x82 };
	int i, breaks = 0;

	pt_config_init(&config);
	config.begin = r->trace;
	config.end = r->trace + r->len;
	dec = pt_pkt_alloc_decoder(&config);
	if (!dec)
		return -1;

	*pieces = 0;
	for (i = 0; i <= r->nr_lost; i++) {
		unsigned long long start = i ? r->lost[i - 1] : 0;
		unsigned long long end = i < r->nr_lost ? r->lost[i] : r->len;
		unsigned long long off = start;
		struct pt_packet pkt;
		int ret;

		if (start == end)
			continue;
		(*pieces)++;
		if (end > r->len || memcmp(r->trace + start, psb, sizeof(psb))) {
			TH_LOG("piece at %llu: no PSB", start);
			breaks++;
			continue;
		}
		ret = pt_pkt_sync_set(dec, start);
		while (!ret && off < end) {
			ret = pt_pkt_next(dec, &pkt, sizeof(pkt));
			if (ret < 0)
				break;
			if (pkt.type == ppt_ovf) {
				TH_LOG("overflow packet at %llu", off);
				breaks++;
			}
			off += pkt.size;
			ret = 0;
		}
		/*
		 * The walk reaches the end exactly, or the stop cut the last
		 * packet: it failed or ran past the end in the last packet.
		 */
		if (off < end && ret < 0) {
			uint64_t at = 0;

			pt_pkt_get_offset(dec, &at);
			if (i == r->nr_lost || end - off > 32) {
				TH_LOG("piece %llu-%llu: %s at %llu",
				       start, end, pt_errstr(pt_errcode(ret)),
				       (unsigned long long)at);
				breaks++;
			}
		}
	}
	pt_pkt_free_decoder(dec);

	return breaks;
}

FIXTURE(stress)
{
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
}

/* MAX_SECONDS of cycles at most, then the checks */
TEST_F_TIMEOUT(stress, stop_mode, MAX_SECONDS + 60)
{
	struct perf_event_attr attr = { 0 };
	struct reader r = { 0 };
	unsigned long long head;
	int type, go, status, pieces = 0, breaks;
	double t0;
	pthread_t th;
	pid_t pid;

	type = pt_type();
	if (type < 0)
		SKIP(return, "no intel_pt PMU");

	pid = fork_self_child(CHILD_ENV, "1", 0, &go);
	ASSERT_LE(0, pid);

	attr.size = sizeof(attr);
	attr.type = type;
	attr.disabled = 1;
	attr.enable_on_exec = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.aux_watermark = TRACE_PAGES * getpagesize();
	r.fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1, 0);
	if (r.fd < 0)
		kill(pid, SIGKILL);
	ASSERT_LE(0, r.fd) TH_LOG("intel_pt event: %s", strerror(errno));
	r.rb = mmap(NULL, (1 + RB_PAGES) * getpagesize(),
		    PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
	ASSERT_NE(MAP_FAILED, r.rb);
	r.tfd = syscall(SYS_perf_event_open, NULL, -1, -1, r.fd,
			PERF_FLAG_FD_ITRACE);
	ASSERT_LE(0, r.tfd) TH_LOG("trace fd: %s", strerror(errno));
	r.pg = mmap(NULL, (1 + TRACE_PAGES) * getpagesize(),
		    PROT_READ | PROT_WRITE, MAP_SHARED, r.tfd, 0);
	ASSERT_NE(MAP_FAILED, r.pg);

	t0 = now();
	ASSERT_EQ(0, pthread_create(&th, NULL, reader_thread, &r));
	ASSERT_EQ(1, write(go, "g", 1));
	close(go);
	ASSERT_EQ(0, pthread_join(th, NULL));

	/* Stop the program, then read what is left */
	ioctl(r.tfd, PERF_EVENT_IOC_DISABLE, 0);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	drain_stream(&r);
	drain_trace(&r);
	head = __atomic_load_n(&r.pg->data_head, __ATOMIC_ACQUIRE);

	TH_LOG("%d stops, %d ITRACE_LOST, %d quiet polls, %zu bytes read, data_head %llu, %.1f s",
	       r.stops, r.nr_lost, r.kicks, r.len, head, now() - t0);
	EXPECT_EQ(0, r.err) TH_LOG("%s", strerror(r.err));
	EXPECT_EQ(0, r.bad) TH_LOG("%s", r.why);
	EXPECT_LE(CYCLES, r.stops);
	EXPECT_EQ(head, r.len);
	/*
	 * One record per stop. A stop the reader found only after a quiet
	 * poll still has its record, and the program may stop once more
	 * after the reader's last ENABLE.
	 */
	EXPECT_LE(r.stops, r.nr_lost);
	EXPECT_GE(r.stops + r.kicks + 1, r.nr_lost);

	breaks = walk_trace(_metadata, &r, &pieces);
	TH_LOG("%d pieces between the ITRACE_LOST offsets", pieces);
	EXPECT_EQ(0, breaks);
	EXPECT_LE(r.nr_lost, pieces);

	munmap(r.pg, (1 + TRACE_PAGES) * getpagesize());
	munmap(r.rb, (1 + RB_PAGES) * getpagesize());
	close(r.tfd);
	close(r.fd);
	free(r.trace);
	free(r.lost);
}

TEST_HARNESS_MAIN
