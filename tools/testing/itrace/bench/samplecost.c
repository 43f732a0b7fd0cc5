// SPDX-License-Identifier: GPL-2.0
/*
 * `make bench` (bench/sample.sh): the cost of PERF_SAMPLE_ITRACE.
 *
 *   samplecost faults itrace|aux|none N
 *	N page faults of this process, each one a sample of a page-fault
 *	event: with 4 KiB of trace by PERF_SAMPLE_ITRACE (the kernel's own
 *	trace event), with 4 KiB by mainline's PERF_SAMPLE_AUX (an intel_pt
 *	group leader whose AUX area is mapped read-only: overwrite mode), or
 *	with no trace. Prints "faults MODE ns=NS samples=S trace=T": NS the
 *	time of the N faults, T the samples that carry trace.
 *   samplecost count PROGRAM [ARG...]
 *	runs PROGRAM with its user-mode instructions counted; prints
 *	"count insns=N" after PROGRAM's own output.
 *   samplecost run itrace|none PERIOD PROGRAM [ARG...]
 *	runs PROGRAM sampled every PERIOD user-mode instructions, with or
 *	without 4 KiB of trace per sample; prints "run MODE samples=S
 *	trace=T" after PROGRAM's own output (its time, bench/work.c).
 *
 * The samples are read as they come (the perf stream is drained at its
 * watermark), as a tool would.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/perf_event.h>

#define TRACE_BYTES	4096
#define RB_PAGES	256
#define AUX_PAGES	16
#define PAGE		4096UL

static int pt_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/intel_pt/type", "r");
	int t = -1;

	if (f) {
		if (fscanf(f, "%d", &t) != 1)
			t = -1;
		fclose(f);
	}
	return t;
}

static int perf_open(struct perf_event_attr *a, pid_t pid, int group)
{
	return syscall(SYS_perf_event_open, a, pid, -1, group, 0);
}

static void die(const char *what)
{
	fprintf(stderr, "samplecost: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct stream {
	struct perf_event_mmap_page *pg;
	unsigned long long samples, trace;
	unsigned long long size_off;	/* of the trace size word, or 0 */
};

/* Count the samples in the stream and hand the space back. */
static void drain(struct stream *s)
{
	struct perf_event_mmap_page *pg = s->pg;
	unsigned long long head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	unsigned long long pos = pg->data_tail, size = pg->data_size;
	unsigned char *data = (unsigned char *)pg + pg->data_offset;

	while (pos < head) {
		struct perf_event_header h;
		unsigned long long tsize = 0;
		unsigned long long i;

		memcpy(&h, data + pos % size, sizeof(h));
		if (h.size < sizeof(h))
			break;
		if (h.type == PERF_RECORD_SAMPLE) {
			s->samples++;
			for (i = 0; s->size_off && i < 8; i++)
				((unsigned char *)&tsize)[i] =
					data[(pos + s->size_off + i) % size];
			s->trace += tsize != 0;
		}
		pos += h.size;
	}
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
}

static void map_stream(struct stream *s, int fd)
{
	s->pg = mmap(NULL, (1 + RB_PAGES) * PAGE, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_POPULATE, fd, 0);
	if (s->pg == MAP_FAILED)
		die("mmap");
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int faults(const char *mode, long n)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID,
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.disabled = 1,
	};
	struct perf_event_attr pt = {
		.size = sizeof(pt),
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.disabled = 1,
	};
	struct stream s = { 0 };
	int fd, leader = -1;
	long long t0, t1;
	long i, batch = 64;

	if (!strcmp(mode, "itrace")) {
		a.sample_type |= PERF_SAMPLE_ITRACE;
		a.itrace_sample_type = pt_type();
		a.itrace_sample_size = TRACE_BYTES;
	} else if (!strcmp(mode, "aux")) {
		struct perf_event_mmap_page *pg;

		pt.type = pt_type();
		leader = perf_open(&pt, 0, -1);
		if (leader < 0)
			die("intel_pt leader");
		pg = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
			  leader, 0);
		if (pg == MAP_FAILED)
			die("leader mmap");
		pg->aux_offset = 2 * PAGE;
		pg->aux_size = AUX_PAGES * PAGE;
		if (mmap(NULL, AUX_PAGES * PAGE, PROT_READ, MAP_SHARED, leader,
			 2 * PAGE) == MAP_FAILED)
			die("AUX mmap");
		a.sample_type |= PERF_SAMPLE_AUX;
		a.aux_sample_size = TRACE_BYTES;
		a.disabled = 0;
	} else if (strcmp(mode, "none")) {
		fprintf(stderr, "samplecost: faults itrace|aux|none N\n");
		return 2;
	}
	/* header, ip, pid + tid, then the size of the trace or AUX sample */
	if (strcmp(mode, "none"))
		s.size_off = sizeof(struct perf_event_header) + 16;
	fd = perf_open(&a, 0, leader);
	if (fd < 0)
		die("page-fault event");
	map_stream(&s, fd);
	if (ioctl(leader >= 0 ? leader : fd, PERF_EVENT_IOC_ENABLE, 0))
		die("enable");

	t0 = now_ns();
	for (i = 0; i < n; i += batch) {
		char *p = mmap(NULL, batch * PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		long k;

		if (p == MAP_FAILED)
			die("mmap");
		for (k = 0; k < batch; k++)
			p[k * PAGE] = 1;
		munmap(p, batch * PAGE);
		drain(&s);
	}
	t1 = now_ns();
	ioctl(leader >= 0 ? leader : fd, PERF_EVENT_IOC_DISABLE, 0);
	drain(&s);
	printf("faults %s ns=%lld samples=%llu trace=%llu\n", mode, t1 - t0,
	       s.samples, s.trace);
	return 0;
}

/* Run argv with an event on it, enable_on_exec; drain until it exits. */
static int run(struct perf_event_attr *a, char **argv, struct stream *s,
	       unsigned long long *count)
{
	int go[2], status, fd;
	pid_t pid;
	char c;

	if (pipe(go))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	a->disabled = 1;
	a->enable_on_exec = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	fd = perf_open(a, pid, -1);
	if (fd < 0) {
		kill(pid, SIGKILL);
		die("perf_event_open");
	}
	if (s)
		map_stream(s, fd);
	if (write(go[1], "g", 1) != 1)
		die("write");
	close(go[1]);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (s) {
			poll(&p, 1, 10);
			drain(s);
		}
		if (waitpid(pid, &status, s ? WNOHANG : 0) == pid)
			break;
	}
	if (s)
		drain(s);
	if (count && read(fd, count, sizeof(*count)) != sizeof(*count))
		die("read");
	close(fd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int main(int argc, char **argv)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_INSTRUCTIONS,
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "faults"))
		return faults(argv[2], atol(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "count")) {
		unsigned long long n = 0;
		int rc = run(&a, argv + 2, NULL, &n);

		printf("count insns=%llu\n", n);
		return rc;
	}
	if (argc >= 5 && !strcmp(argv[1], "run")) {
		struct stream s = { 0 };
		int rc;

		a.sample_period = strtoull(argv[3], NULL, 0);
		a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
		a.wakeup_watermark = RB_PAGES * PAGE / 2;
		if (!strcmp(argv[2], "itrace")) {
			s.size_off = sizeof(struct perf_event_header) + 16;
			a.sample_type |= PERF_SAMPLE_ITRACE;
			a.itrace_sample_type = pt_type();
			a.itrace_sample_size = TRACE_BYTES;
		} else if (strcmp(argv[2], "none")) {
			fprintf(stderr, "samplecost: run itrace|none PERIOD PROGRAM...\n");
			return 2;
		}
		a.watermark = 1;
		rc = run(&a, argv + 4, &s, NULL);
		printf("run %s samples=%llu trace=%llu\n", argv[2], s.samples,
		       s.trace);
		return rc;
	}
	fprintf(stderr, "usage: samplecost faults itrace|aux|none N | count PROGRAM... | run itrace|none PERIOD PROGRAM...\n");
	return 2;
}
