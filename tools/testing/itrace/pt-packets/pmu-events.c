// SPDX-License-Identifier: GPL-2.0
/*
 * Hardware counter events through perf_event_open(2) on the emulated CPU
 * (pmu.sh runs it in the guest as root and as an unprivileged user, and
 * scans the kernel log afterwards), TAP on stdout:
 *  - a raw event (PERF_TYPE_RAW 0xc0, user mode) opened, enabled, read,
 *    disabled and closed: the RDPMC that used to be #UD;
 *  - a cache event (L1D write accesses): it opens, and counts 0, what the
 *    model documents for the events it does not count;
 *  - branch-misses beside branches in one group: it opens, also as a
 *    sampling event, and counts 0 of the branches (the CPU does not
 *    speculate); cache-references and cache-misses, which CPUID.0AH:EBX
 *    says are not available, fail with ENOENT;
 *  - instructions in user mode read by the task itself with RDPMC through
 *    the event's mmap page: exactly the instructions between two reads;
 *  - more events than counters: the kernel multiplexes them.
 * Every event excludes the kernel, as an unprivileged user must at
 * perf_event_paranoid 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int n, failed;

static void __attribute__((format(printf, 2, 3))) ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", cond ? "" : "not ", ++n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failed |= !cond;
}

static int open_event(uint32_t type, uint64_t config, uint64_t format)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.read_format = format;
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

/* 10000 instructions of user code. */
static void work(void)
{
	asm volatile(".rept 10000\nnop\n.endr");
}

static void raw_event(void)
{
	uint64_t v = 0;
	ssize_t r;
	int fd = open_event(PERF_TYPE_RAW, 0xc0, 0);

	ok(fd >= 0, "raw event 0xc0 (INST_RETIRED.ANY_P), user mode: opened (%s)",
	   fd < 0 ? strerror(errno) : "ok");
	if (fd < 0)
		return;
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	work();
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	r = read(fd, &v, sizeof(v));
	ok(r == sizeof(v) && v >= 10000 && v < 11000,
	   "raw event 0xc0: 10000 instructions of work and the ioctl's return: %llu",
	   (unsigned long long)v);
	close(fd);
}

static void cache_event(void)
{
	uint64_t v = ~0ULL;
	ssize_t r;
	int fd = open_event(PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1D |
			    PERF_COUNT_HW_CACHE_OP_WRITE << 8 |
			    PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16, 0);

	ok(fd >= 0, "cache event L1-dcache-stores: opened (%s)",
	   fd < 0 ? strerror(errno) : "ok");
	if (fd < 0)
		return;
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	work();
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	r = read(fd, &v, sizeof(v));
	ok(r == sizeof(v) && v == 0,
	   "cache event L1-dcache-stores (a model-specific event the CPU does not count): reads 0: %llu",
	   (unsigned long long)v);
	close(fd);
}

/* 1000 conditional branches, half of them taken, alternating. */
static void branchy(void)
{
	unsigned int i, x = 0;

	for (i = 0; i < 1000; i++)
		asm volatile("test $1, %1\n\tjz 1f\n\tinc %0\n1:" : "+r"(x) : "r"(i));
}

static void branch_misses(void)
{
	struct perf_event_attr attr;
	struct { uint64_t nr, v[2]; } g = { 0 };
	uint64_t v = ~0ULL;
	ssize_t r;
	int lead, fd, i;

	lead = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
			  PERF_FORMAT_GROUP);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_BRANCH_MISSES;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = lead < 0 ? -1 : syscall(SYS_perf_event_open, &attr, 0, -1, lead, 0);
	ok(lead >= 0 && fd >= 0, "branch-misses in a group with branches: opened (%s)",
	   fd < 0 ? strerror(errno) : "ok");
	if (fd >= 0) {
		ioctl(lead, PERF_EVENT_IOC_ENABLE, 0);
		branchy();
		ioctl(lead, PERF_EVENT_IOC_DISABLE, 0);
		r = read(lead, &g, sizeof(g));
		ok(r == sizeof(g) && g.nr == 2 && g.v[0] >= 1000 && g.v[1] == 0,
		   "branch-misses: 0 of the branches of 1000 taken and not-taken Jcc: %llu of %llu",
		   (unsigned long long)g.v[1], (unsigned long long)g.v[0]);
		close(fd);
	}
	if (lead >= 0)
		close(lead);

	/* As perf record --aux-sample samples it: a period, an overflow never comes. */
	attr.disabled = 1;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_IP;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	ok(fd >= 0, "branch-misses, sample_period 1: opened (%s)",
	   fd < 0 ? strerror(errno) : "ok");
	if (fd >= 0) {
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		branchy();
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		r = read(fd, &v, sizeof(v));
		ok(r == sizeof(v) && v == 0, "branch-misses, sampling: counted 0: %llu",
		   (unsigned long long)v);
		close(fd);
	}

	for (i = 0; i < 2; i++) {
		uint64_t c = i ? PERF_COUNT_HW_CACHE_MISSES : PERF_COUNT_HW_CACHE_REFERENCES;
		const char *name = i ? "cache-misses" : "cache-references";

		fd = open_event(PERF_TYPE_HARDWARE, c, 0);
		ok(fd < 0 && errno == ENOENT,
		   "%s (not available in CPUID.0AH:EBX): ENOENT (%s)", name,
		   fd < 0 ? strerror(errno) : "opened");
		if (fd >= 0)
			close(fd);
	}
}

/* User-space RDPMC through the event's mmap page (cap_user_rdpmc). */
static void self_monitor(void)
{
	struct perf_event_mmap_page *pg;
	uint32_t idx, lo0, hi0, lo1, hi1;
	uint64_t delta, v = 0;
	ssize_t r;
	int fd = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0);

	ok(fd >= 0, "instructions, user mode: opened (%s)", fd < 0 ? strerror(errno) : "ok");
	if (fd < 0)
		return;
	pg = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
	ok(pg != MAP_FAILED, "instructions: mmap of the event's page");
	if (pg == MAP_FAILED) {
		close(fd);
		return;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	idx = pg->index;
	ok(pg->cap_user_rdpmc && idx, "cap_user_rdpmc, counter index %u (%s counter)",
	   idx, idx > 0x40000000 ? "fixed" : "general-purpose");
	if (pg->cap_user_rdpmc && idx) {
		/* RDPMC, 2 MOVs, 1000 NOPs between the two reads: 1003. */
		asm volatile("rdpmc\n"
			     "mov %%eax, %0\n"
			     "mov %%edx, %1\n"
			     ".rept 1000\nnop\n.endr\n"
			     "rdpmc\n"
			     : "=&r" (lo0), "=&r" (hi0), "=a" (lo1), "=d" (hi1)
			     : "c" (idx - 1));
		delta = ((lo1 | (uint64_t)hi1 << 32) - (lo0 | (uint64_t)hi0 << 32)) &
			((1ULL << pg->pmc_width) - 1);
		ok(delta == 1003,
		   "RDPMC at CPL 3: exactly the 1003 instructions between two reads: %llu",
		   (unsigned long long)delta);
		ok(pg->pmc_width == 48, "pmc_width 48: %u", pg->pmc_width);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	r = read(fd, &v, sizeof(v));
	ok(r == sizeof(v) && v > 1003,
	   "instructions: read() after the RDPMCs: %llu", (unsigned long long)v);
	munmap(pg, sysconf(_SC_PAGESIZE));
	close(fd);
}

/* More events than the 4 general-purpose and 3 fixed counters. */
static void multiplex(void)
{
	static const struct { uint32_t type; uint64_t config; const char *name; } ev[] = {
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions" },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles" },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "ref-cycles" },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branches" },
		{ PERF_TYPE_RAW, 0xc0, "r00c0" },
		{ PERF_TYPE_RAW, 0xc4, "r00c4" },
		{ PERF_TYPE_RAW, 0x3c, "r003c" },
		{ PERF_TYPE_RAW, 0x13c, "r013c" },
		{ PERF_TYPE_RAW, 0x1c4, "r01c4" },
		{ PERF_TYPE_RAW, 0xc0, "r00c0" },
		{ PERF_TYPE_RAW, 0xc4, "r00c4" },
	};
	enum { N = sizeof(ev) / sizeof(ev[0]) };
	uint64_t fmt = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	struct { uint64_t value, enabled, running; } r[N];
	int fd[N], i, j, opened = 0, read_ok = 0, muxed = 0;

	for (i = 0; i < N; i++) {
		fd[i] = open_event(ev[i].type, ev[i].config, fmt);
		opened += fd[i] >= 0;
	}
	ok(opened == N, "multiplexing: %d of %d events opened", opened, N);
	for (i = 0; i < N; i++)
		if (fd[i] >= 0)
			ioctl(fd[i], PERF_EVENT_IOC_ENABLE, 0);
	for (j = 0; j < 3000; j++)
		work();
	for (i = 0; i < N; i++) {
		if (fd[i] < 0)
			continue;
		ioctl(fd[i], PERF_EVENT_IOC_DISABLE, 0);
		if (read(fd[i], &r[i], sizeof(r[i])) == sizeof(r[i]) && r[i].enabled) {
			read_ok++;
			muxed += r[i].running < r[i].enabled;
			printf("# %s: %llu, running %llu of %llu ns\n", ev[i].name,
			       (unsigned long long)r[i].value,
			       (unsigned long long)r[i].running,
			       (unsigned long long)r[i].enabled);
		}
		close(fd[i]);
	}
	ok(read_ok == opened, "multiplexing: every event read, time enabled > 0");
	ok(muxed > 0, "multiplexing: %d events ran only part of the time", muxed);
}

int main(void)
{
	raw_event();
	cache_event();
	branch_misses();
	self_monitor();
	multiplex();
	printf("1..%d\n", n);
	return failed;
}
