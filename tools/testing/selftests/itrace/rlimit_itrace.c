// SPDX-License-Identifier: GPL-2.0
/*
 * RLIMIT_ITRACE: the newest user-mode trace of each thread in its process's
 * core dump, one NT_ITRACE note per thread (include/uapi/linux/itrace.h).
 *
 * The tests run as root: they set kernel.core_pattern, change users and
 * set the limits of other processes. Tests of the core note need an itrace
 * PMU (intel_pt) and are skipped without one.
 */
#define _GNU_SOURCE

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <linux/itrace.h>
#include <linux/perf_event.h>

#include <intel-pt.h>

#include "../kselftest_harness.h"
#include "itrace_test.h"

#ifndef RLIMIT_ITRACE
#define RLIMIT_ITRACE	16
#endif

#define PT_DIR		"/sys/bus/event_source/devices/intel_pt"
#define BTS_DIR		"/sys/bus/event_source/devices/intel_bts"
#define CORE_PATTERN	"/proc/sys/kernel/core_pattern"
#define CORE_DIR	"/tmp/itrace-rlimit"
#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define SUID_DUMPABLE	"/proc/sys/fs/suid_dumpable"
#define MAX_NOTES	64

static int prlimit_itrace(pid_t pid, const struct rlimit *new,
			  struct rlimit *old)
{
	/* glibc's RLIMIT_NLIMITS predates RLIMIT_ITRACE: use the syscall */
	return syscall(SYS_prlimit64, pid, RLIMIT_ITRACE, new, old);
}

static int set_itrace(rlim_t cur, rlim_t max)
{
	struct rlimit r = { .rlim_cur = cur, .rlim_max = max };

	return prlimit_itrace(0, &r, NULL);
}

static rlim_t get_itrace_cur(pid_t pid)
{
	struct rlimit r;

	if (prlimit_itrace(pid, NULL, &r))
		return (rlim_t)-2;
	return r.rlim_cur;
}

static bool have_pt(void)
{
	return access(PT_DIR, F_OK) == 0;
}

static int write_file_create(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Branchy user-mode work: a few KiB of trace per call. */
static void work(unsigned long n)
{
	unsigned long i, sum = 0;

	for (i = 0; i < n; i++) {
		if ((i * 2654435761u) & 0x100)
			sum += i;
		else
			sum ^= i;
		asm volatile("" : "+r" (sum));
	}
}

static __attribute__((noinline)) void crash(void)
{
	int *p = NULL;

	asm volatile("" : "+r" (p));
	*p = 1;
}

/* One note of a core file */
struct note {
	unsigned int type;
	char name[16];
	const unsigned char *desc;
	size_t descsz;
};

struct core {
	unsigned char *data;
	size_t size;
	struct note notes[MAX_NOTES];
	int nr;
};

static void core_free(struct core *c)
{
	free(c->data);
	c->data = NULL;
}

/* Read @path and index the notes of its PT_NOTE segments. 0 or -1. */
static int core_read(const char *path, struct core *c)
{
	const Elf64_Ehdr *eh;
	struct stat st;
	int fd, i;

	memset(c, 0, sizeof(*c));
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		return -1;
	c->size = st.st_size;
	c->data = malloc(c->size);
	if (!c->data || read(fd, c->data, c->size) != (ssize_t)c->size) {
		close(fd);
		return -1;
	}
	close(fd);

	eh = (const Elf64_Ehdr *)c->data;
	if (c->size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_type != ET_CORE)
		return -1;

	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)
			(c->data + eh->e_phoff + i * eh->e_phentsize);
		size_t off = ph->p_offset, end = off + ph->p_filesz;

		if (ph->p_type != PT_NOTE)
			continue;
		if (end > c->size)
			return -1;
		while (off + sizeof(Elf64_Nhdr) <= end) {
			const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(c->data + off);
			size_t name = off + sizeof(*nh);
			size_t desc = name + ((nh->n_namesz + 3) & ~3u);
			struct note *n;

			if (desc + nh->n_descsz > end || c->nr == MAX_NOTES)
				return -1;
			n = &c->notes[c->nr++];
			n->type = nh->n_type;
			snprintf(n->name, sizeof(n->name), "%.*s",
				 (int)nh->n_namesz, (const char *)c->data + name);
			n->desc = c->data + desc;
			n->descsz = nh->n_descsz;
			off = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

static int count_itrace(const struct core *c)
{
	int i, nr = 0;

	for (i = 0; i < c->nr; i++)
		nr += c->notes[i].type == NT_ITRACE &&
		      !strcmp(c->notes[i].name, ITRACE_NOTE_NAME);
	return nr;
}

static pid_t prstatus_pid(const struct note *n)
{
	/* struct elf_prstatus_common: siginfo (12), cursig + pad (4),
	 * sigpend, sighold (8 + 8), then pr_pid
	 */
	pid_t pid;

	memcpy(&pid, n->desc + 32, sizeof(pid));
	return pid;
}

/*
 * Run @fn in a child that sets RLIMIT_ITRACE to @bytes (unless 0), allows
 * a core dump and is expected to die of SIGSEGV; read its core.
 */
static int crash_child(void (*fn)(void *), void *arg, rlim_t bytes,
		       struct core *c, pid_t *pidp)
{
	struct rlimit core = { RLIM_INFINITY, RLIM_INFINITY };
	char path[64];
	int status, tries;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (setrlimit(RLIMIT_CORE, &core))
			_exit(100);
		if (bytes && set_itrace(bytes, RLIM_INFINITY))
			_exit(101);
		fn(arg);
		_exit(102);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV ||
	    !WCOREDUMP(status)) {
		fprintf(stderr, "# child status 0x%x\n", status);
		return -1;
	}
	*pidp = pid;
	snprintf(path, sizeof(path), CORE_DIR "/core.%d", pid);
	/* a core_pattern pipe helper may still be writing */
	for (tries = 0; core_read(path, c); tries++) {
		core_free(c);
		if (tries == 50)
			return -1;
		usleep(100000);
	}
	unlink(path);
	return 0;
}

static void work_then_crash(void *arg)
{
	work((unsigned long)arg);
	crash();
}

FIXTURE(rlimit) {
	char pattern[256];
	char paranoid[32];
	char suid_dumpable[32];
	char pt_dump[8];	/* intel_pt's itrace/coredump */
	char pt_dump_config[32];
};

FIXTURE_SETUP(rlimit)
{
	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, read_file(CORE_PATTERN, self->pattern, sizeof(self->pattern)));
	ASSERT_EQ(0, read_file(PARANOID, self->paranoid, sizeof(self->paranoid)));
	ASSERT_EQ(0, read_file(SUID_DUMPABLE, self->suid_dumpable,
			       sizeof(self->suid_dumpable)));
	mkdir(CORE_DIR, 0777);
	ASSERT_EQ(0, write_file(CORE_PATTERN, CORE_DIR "/core.%p"));
	/* tests of intel_bts notes select it */
	if (have_pt() &&
	    read_file(PT_DIR "/itrace/coredump", self->pt_dump,
		      sizeof(self->pt_dump)) == 0 && self->pt_dump[0] == '1')
		read_file(PT_DIR "/itrace/coredump_config", self->pt_dump_config,
			  sizeof(self->pt_dump_config));
}

FIXTURE_TEARDOWN(rlimit)
{
	if (self->pattern[0])
		write_file(CORE_PATTERN, self->pattern);
	if (self->paranoid[0])
		write_file(PARANOID, self->paranoid);
	if (self->suid_dumpable[0])
		write_file(SUID_DUMPABLE, self->suid_dumpable);
	if (self->pt_dump[0] == '1') {
		write_file(PT_DIR "/itrace/coredump", "1");
		write_file(PT_DIR "/itrace/coredump_config",
			   self->pt_dump_config);
	}
}

/* The fields of the "Max itrace size" line of /proc/self/limits */
static int proc_limits(char *soft, char *hard, char *unit)
{
	char buf[4096], *line;

	if (read_file("/proc/self/limits", buf, sizeof(buf)))
		return -1;
	line = strstr(buf, "Max itrace size ");
	if (!line)
		return -1;
	return sscanf(line + strlen("Max itrace size "), "%31s %31s %31s",
		      soft, hard, unit) == 3 ? 0 : -1;
}

/* The documented defaults: soft 0 (off), hard unlimited. */
TEST_F(rlimit, defaults_and_proc_limits)
{
	char soft[32], hard[32], unit[32];
	struct rlimit r;

	ASSERT_EQ(0, prlimit_itrace(0, NULL, &r));
	EXPECT_EQ(0, r.rlim_cur);
	EXPECT_EQ(RLIM_INFINITY, r.rlim_max);

	ASSERT_EQ(0, proc_limits(soft, hard, unit));
	EXPECT_STREQ("0", soft);
	EXPECT_STREQ("unlimited", hard);
	EXPECT_STREQ("bytes", unit);
}

/* The value set is the value read back, unrounded; 0 turns it off. */
TEST_F(rlimit, set_get)
{
	char soft[32], hard[32], unit[32];

	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, set_itrace(100000, RLIM_INFINITY));
	EXPECT_EQ(100000, get_itrace_cur(0));
	ASSERT_EQ(0, proc_limits(soft, hard, unit));
	EXPECT_STREQ("100000", soft);
	/* the same value again changes nothing */
	ASSERT_EQ(0, set_itrace(100000, RLIM_INFINITY));
	ASSERT_EQ(0, set_itrace(0, RLIM_INFINITY));
	EXPECT_EQ(0, get_itrace_cur(0));
}

/* Above 1 GiB (but RLIM_INFINITY): EINVAL, and nothing changes. */
TEST_F(rlimit, huge_values_einval)
{
	ASSERT_EQ(0, set_itrace(0, RLIM_INFINITY));
	EXPECT_EQ(-1, set_itrace((1UL << 30) + 1, RLIM_INFINITY));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, set_itrace(-4096UL, RLIM_INFINITY));
	EXPECT_EQ(EINVAL, errno);
	/* soft above hard, as for every limit */
	EXPECT_EQ(-1, set_itrace(8192, 4096));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, get_itrace_cur(0));
}

/*
 * An unprivileged user sets it within the hard limit, not above, and
 * cannot raise the hard limit.
 */
static int unprivileged_child(void)
{
	if (set_itrace(0, 1 << 20))
		return 1;
	if (become_nobody())
		return 2;
	if (set_itrace(65536, 1 << 20))
		return 3;
	if (get_itrace_cur(0) != 65536)
		return 4;
	if (!set_itrace(2 << 20, 2 << 20) || errno != EPERM)
		return 5;
	if (!set_itrace(2 << 20, 1 << 20) || errno != EINVAL)
		return 6;
	if (get_itrace_cur(0) != 65536)
		return 7;
	return 0;
}

TEST_F(rlimit, unprivileged)
{
	if (!have_pt())
		SKIP(return, NO_PT);
	EXPECT_EQ(0, in_child(unprivileged_child));
}

/*
 * Beyond the user's perf_event_mlock_kb allowance (516 KiB per CPU by
 * default): EPERM, as for an AUX mapping, and the limit stays.
 */
static int mlock_child(void)
{
	if (become_nobody())
		return 2;
	/* 64 MiB: far beyond 516 KiB per CPU */
	if (!set_itrace(64 << 20, RLIM_INFINITY) || errno != EPERM)
		return 3;
	if (get_itrace_cur(0) != 0)
		return 4;
	return 0;
}

TEST_F(rlimit, unprivileged_mlock_eperm)
{
	if (!have_pt())
		SKIP(return, NO_PT);
	EXPECT_EQ(0, in_child(mlock_child));
}

/* perf_event_paranoid 3 (no perf for users) gives EACCES, as perf does. */
static int paranoid_child(void)
{
	if (become_nobody())
		return 2;
	if (!set_itrace(65536, RLIM_INFINITY) || errno != EACCES)
		return 3;
	if (get_itrace_cur(0) != 0)
		return 4;
	return 0;
}

TEST_F(rlimit, paranoid_eacces)
{
	if (!have_pt())
		SKIP(return, NO_PT);
	if (write_file(PARANOID, "3\n"))
		SKIP(return, "kernel.perf_event_paranoid has no level 3");
	EXPECT_EQ(0, in_child(paranoid_child));
}

/* prlimit() on another process sets that process's limit. */
TEST_F(rlimit, prlimit_other_process)
{
	struct rlimit r = { 65536, RLIM_INFINITY };
	int p[2], status;
	pid_t pid;
	char c;

	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(1);
		_exit(get_itrace_cur(0) == 65536 ? 0 : 2);
	}
	close(p[0]);
	EXPECT_EQ(0, prlimit_itrace(pid, &r, NULL));
	EXPECT_EQ(65536, get_itrace_cur(pid));
	ASSERT_EQ(1, write(p[1], "x", 1));
	close(p[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* An intel_pt event of the user's own, user mode only, disabled. */
static int open_pt(pid_t pid, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	attr.type = pt_type();
	if (attr.type == (__u32)-1)
		return -1;
	return sys_perf_event_open(&attr, pid, cpu, -1, 0);
}

/*
 * Map @fd's perf stream and 16 pages of AUX at aux_offset (mainline's
 * layout). Returns the user page, or NULL.
 */
static struct perf_event_mmap_page *map_aux(int fd)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *up;
	void *aux;

	up = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (up == MAP_FAILED)
		return NULL;
	up->aux_offset = 2 * pg;
	up->aux_size = 16 * pg;
	aux = mmap(NULL, 16 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   2 * pg);
	return aux == MAP_FAILED ? NULL : up;
}

/* The NT_ITRACE note of thread @tid, or NULL */
static const struct itrace_note *find_note(const struct core *c, pid_t tid)
{
	int i;

	for (i = 0; i < c->nr; i++) {
		const struct note *nt = &c->notes[i];
		const struct itrace_note *n = (const void *)nt->desc;

		if (nt->type == NT_ITRACE && !strcmp(nt->name, ITRACE_NOTE_NAME) &&
		    nt->descsz >= sizeof(*n) && (pid_t)n->tid == tid)
			return n;
	}
	return NULL;
}

/*
 * Walk the packets of a note's trace with libipt from its first PSB and
 * follow the last IP (SDM Vol. 3C, "IP Compression"): return the number of
 * packets whose IP is outside user space (a kernel address), or -1 if the
 * walk fails before the end; *nr_ips counts the IPs seen.
 */
static int kernel_ips(const unsigned char *trace, size_t len, int *nr_ips)
{
	const uint64_t user_end = 1ull << 47;
	struct pt_packet_decoder *dec;
	struct pt_config config;
	struct pt_packet pkt;
	uint64_t last = 0, at = 0;
	int ret, bad = 0;

	*nr_ips = 0;
	pt_config_init(&config);
	config.begin = (uint8_t *)trace;
	config.end = (uint8_t *)trace + len;
	dec = pt_pkt_alloc_decoder(&config);
	if (!dec)
		return -1;
	ret = pt_pkt_sync_forward(dec);
	while (ret >= 0) {
		ret = pt_pkt_next(dec, &pkt, sizeof(pkt));
		if (ret < 0)
			break;
		if (pkt.type == ppt_psb) {
			last = 0;
			continue;
		}
		if (pkt.type != ppt_tip && pkt.type != ppt_tip_pge &&
		    pkt.type != ppt_tip_pgd && pkt.type != ppt_fup)
			continue;
		switch (pkt.payload.ip.ipc) {
		case pt_ipc_suppressed:
			continue;
		case pt_ipc_update_16:
			last = (last & ~0xffffull) | (pkt.payload.ip.ip & 0xffff);
			break;
		case pt_ipc_update_32:
			last = (last & ~0xffffffffull) |
			       (pkt.payload.ip.ip & 0xffffffff);
			break;
		case pt_ipc_update_48:
			last = (last & ~0xffffffffffffull) |
			       (pkt.payload.ip.ip & 0xffffffffffffull);
			break;
		case pt_ipc_sext_48:
			last = (uint64_t)((int64_t)(pkt.payload.ip.ip << 16) >> 16);
			break;
		case pt_ipc_full:
			last = pkt.payload.ip.ip;
			break;
		}
		(*nr_ips)++;
		bad += last >= user_end;
	}
	if (ret != -pte_eos)
		pt_pkt_get_offset(dec, &at);
	pt_pkt_free_decoder(dec);
	/* the end of the trace may cut its last packet, nothing else */
	if (ret != -pte_eos && len - at > 32)
		return -1;
	return bad;
}

/* Check the NT_ITRACE note of thread @tid in @c; returns its header. */
static const struct itrace_note *check_note(struct __test_metadata *_metadata,
					    const struct core *c, pid_t tid,
					    unsigned long buf_size)
{
	const struct itrace_note *n = NULL;
	pid_t thread = 0;
	int i, ips;

	for (i = 0; i < c->nr; i++) {
		const struct note *nt = &c->notes[i];

		if (nt->type == NT_PRSTATUS && !strcmp(nt->name, "CORE")) {
			thread = prstatus_pid(nt);
			continue;
		}
		if (nt->type != NT_ITRACE || strcmp(nt->name, ITRACE_NOTE_NAME))
			continue;
		/* the note follows the register notes of its own thread */
		n = (const struct itrace_note *)nt->desc;
		if ((pid_t)n->tid != tid)
			continue;
		EXPECT_EQ(tid, thread);
		EXPECT_LE(sizeof(*n), nt->descsz);
		EXPECT_EQ(sizeof(*n), n->hdr_size);
		EXPECT_EQ(ITRACE_NOTE_VERSION, n->version);
		EXPECT_STREQ("intel_pt", n->pmu_name);
		EXPECT_EQ(buf_size, n->buf_size);
		EXPECT_EQ(nt->descsz, n->hdr_size + n->trace_size);
		EXPECT_LE(n->trace_size, n->buf_size);
		EXPECT_NE(0, n->trace_size);
		EXPECT_EQ(ITRACE_CPU_INTEL, n->cpu_vendor);
		EXPECT_EQ(6, n->cpu_family);
		if (!(n->flags & ITRACE_NOTE_WRAPPED))
			EXPECT_TRUE(is_psb(nt->desc + n->hdr_size));
		EXPECT_TRUE(find_psb(nt->desc + n->hdr_size, n->trace_size) >= 0);
		/* user mode only: no kernel address anywhere in the note */
		EXPECT_EQ(0, kernel_ips(nt->desc + n->hdr_size, n->trace_size,
					&ips));
		EXPECT_LT(0, ips);
		return n;
	}
	return NULL;
}

/* A crash with the limit set: one note, decodable from its start. */
TEST_F(rlimit, core_note)
{
	const struct itrace_note *n;
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, crash_child(work_then_crash, (void *)100, 65536, &c, &pid));
	EXPECT_EQ(1, count_itrace(&c));
	n = check_note(_metadata, &c, pid, 65536);
	ASSERT_NE(NULL, n);
	EXPECT_EQ(0, n->flags & ITRACE_NOTE_WRAPPED);
	core_free(&c);
}

/* Non-aligned sizes round up to a power-of-two number of pages. */
TEST_F(rlimit, core_note_rounding)
{
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, crash_child(work_then_crash, (void *)10, 5 * 4096 + 1, &c, &pid));
	ASSERT_NE(NULL, check_note(_metadata, &c, pid, 8 * 4096));
	core_free(&c);
	ASSERT_EQ(0, crash_child(work_then_crash, (void *)10, 1, &c, &pid));
	ASSERT_NE(NULL, check_note(_metadata, &c, pid, 4096));
	core_free(&c);
}

/* More trace than the buffer: the newest buf_size bytes, WRAPPED. */
TEST_F(rlimit, core_note_wrapped)
{
	const struct itrace_note *n;
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, crash_child(work_then_crash, (void *)100000, 8192, &c, &pid));
	n = check_note(_metadata, &c, pid, 8192);
	ASSERT_NE(NULL, n);
	EXPECT_EQ(ITRACE_NOTE_WRAPPED, n->flags & ITRACE_NOTE_WRAPPED);
	EXPECT_EQ(8192, n->trace_size);
	core_free(&c);
}

/* Without the limit, or after lowering it to 0: no note. */
static void set_then_clear_then_crash(void *arg)
{
	if (set_itrace(65536, RLIM_INFINITY) || set_itrace(0, RLIM_INFINITY))
		_exit(103);
	work_then_crash(arg);
}

TEST_F(rlimit, no_limit_no_note)
{
	struct core c;
	pid_t pid;

	ASSERT_EQ(0, crash_child(work_then_crash, (void *)100, 0, &c, &pid));
	EXPECT_EQ(0, count_itrace(&c));
	EXPECT_LT(0, c.nr);
	core_free(&c);
	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, crash_child(set_then_clear_then_crash, (void *)100, 0, &c, &pid));
	EXPECT_EQ(0, count_itrace(&c));
	core_free(&c);
}

/* Every thread has its note, after its own registers. */
#define NR_THREADS 3
static pthread_barrier_t barrier;
static pid_t tids[NR_THREADS + 1];

static void *thread_fn(void *arg)
{
	tids[(long)arg] = gettid();
	work(200);
	pthread_barrier_wait(&barrier);
	for (;;)
		pause();
	return NULL;
}

static void threads_then_crash(void *arg)
{
	pthread_t t;
	long i;

	pthread_barrier_init(&barrier, NULL, NR_THREADS + 1);
	for (i = 1; i <= NR_THREADS; i++)
		if (pthread_create(&t, NULL, thread_fn, (void *)i))
			_exit(104);
	pthread_barrier_wait(&barrier);
	tids[0] = gettid();
	work_then_crash(arg);
}

TEST_F(rlimit, core_note_threads)
{
	struct core c;
	pid_t pid;
	int i, nr_pr = 0;

	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, crash_child(threads_then_crash, (void *)100, 16384, &c, &pid));
	EXPECT_EQ(NR_THREADS + 1, count_itrace(&c));
	for (i = 0; i < c.nr; i++) {
		if (c.notes[i].type == NT_PRSTATUS) {
			pid_t tid = prstatus_pid(&c.notes[i]);

			nr_pr++;
			EXPECT_NE(NULL, check_note(_metadata, &c, tid, 16384));
		}
	}
	EXPECT_EQ(NR_THREADS + 1, nr_pr);
	core_free(&c);
}

/* A fork child has a trace of its own. */
static void fork_then_crash(void *arg)
{
	struct core c;
	pid_t pid;

	/* the grandchild crashes; report its result through our exit */
	if (crash_child(work_then_crash, arg, 0, &c, &pid))
		_exit(110);
	if (count_itrace(&c) != 1)
		_exit(111);
	core_free(&c);
	crash();
}

TEST_F(rlimit, core_note_fork_child)
{
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, crash_child(fork_then_crash, (void *)100, 32768, &c, &pid));
	EXPECT_NE(NULL, check_note(_metadata, &c, pid, 32768));
	core_free(&c);
}

/* The limit survives execve() of a dumpable program; the trace restarts. */
static void exec_then_crash(void *arg)
{
	execl("/proc/self/exe", "rlimit_itrace", "--crash", NULL);
	_exit(105);
}

TEST_F(rlimit, core_note_after_exec)
{
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, crash_child(exec_then_crash, NULL, 65536, &c, &pid));
	EXPECT_NE(NULL, check_note(_metadata, &c, pid, 65536));
	core_free(&c);
}

/* A process made non-dumpable keeps its limit but has no trace. */
static void nondumpable_then_crash(void *arg)
{
	if (prctl(PR_SET_DUMPABLE, 0))
		_exit(106);
	if (get_itrace_cur(0) != 65536)
		_exit(107);
	/* the next change rechecks dumpability and makes no trace */
	if (set_itrace(131072, RLIM_INFINITY))
		_exit(108);
	if (prctl(PR_SET_DUMPABLE, 1))
		_exit(109);
	work_then_crash(arg);
}

TEST_F(rlimit, nondumpable_no_trace)
{
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, crash_child(nondumpable_then_crash, (void *)100, 65536, &c, &pid));
	EXPECT_EQ(0, count_itrace(&c));
	core_free(&c);
}

/*
 * A user's own PT event on a thread with the limit set wins: it opens (no
 * EBUSY) and traces; the core-dump trace pauses meanwhile, and its note
 * says so.
 */
static void own_event_then_crash(void *arg)
{
	struct perf_event_mmap_page *up;
	int fd;

	work(100);
	fd = open_pt(0, -1);
	if (fd < 0)
		_exit(120);
	up = map_aux(fd);
	if (!up || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
		_exit(121);
	work(1000);
	/* disabling writes the trace out and moves aux_head */
	if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0))
		_exit(122);
	if (!__atomic_load_n(&up->aux_head, __ATOMIC_ACQUIRE))
		_exit(123);
	close(fd);
	work_then_crash(arg);
}

TEST_F(rlimit, own_event_wins_per_task)
{
	const struct itrace_note *n;
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, crash_child(own_event_then_crash, (void *)100, 65536, &c, &pid));
	n = check_note(_metadata, &c, pid, 65536);
	ASSERT_NE(NULL, n);
	EXPECT_EQ(ITRACE_NOTE_PAUSED, n->flags & ITRACE_NOTE_PAUSED);
	EXPECT_LT(0, n->pauses);
	core_free(&c);
}

/*
 * A user's intel_bts event beside the core-dump trace, on a CPU where PT
 * cannot run beside BTS (no lbr_pt_coexist, as the emulated Kaby Lake):
 * the BTS event opens (no EBUSY because of the kernel-owned PT event) and
 * traces, and the core-dump trace pauses meanwhile, which its note says.
 * Two user events still exclude each other as on that part: a PT event
 * beside the BTS event fails with EBUSY.
 */
static void bts_event_then_crash(void *arg)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.disabled	= 1,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
	};
	size_t len = (1 + 16) * page_size();
	struct perf_event_mmap_page *rb, *pg;
	int fd, tfd;

	work(100);
	attr.type = bts_type();
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (fd < 0)
		_exit(errno == EBUSY ? 130 : 131);
	if (open_pt(0, -1) >= 0 || errno != EBUSY)
		_exit(132);
	if (stream_and_trace_fd(fd, 4, &rb, &tfd))
		_exit(133);
	pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, tfd, 0);
	if (pg == MAP_FAILED)
		_exit(134);
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
		_exit(135);
	work(1000);
	if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0))
		_exit(136);
	/* BTS records of the work above */
	if (__atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE) < 1000 * 24)
		_exit(137);
	munmap(pg, len);
	munmap(rb, (1 + 4) * page_size());
	close(tfd);
	close(fd);
	work_then_crash(arg);
}

TEST_F(rlimit, bts_event_beside_core_trace)
{
	const struct itrace_note *n;
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	if (bts_type() < 0)
		SKIP(return, NO_BTS);
	/* child exit 130: the BTS event got EBUSY; 132: the PT event did not */
	ASSERT_EQ(0, crash_child(bts_event_then_crash, (void *)100, 65536, &c,
				 &pid));
	n = check_note(_metadata, &c, pid, 65536);
	ASSERT_NE(NULL, n);
	EXPECT_EQ(ITRACE_NOTE_PAUSED, n->flags & ITRACE_NOTE_PAUSED);
	EXPECT_LT(0, n->pauses);
	core_free(&c);
}

/* Without a user's event in the way, the trace never pauses. */
TEST_F(rlimit, no_pause_alone)
{
	const struct itrace_note *n;
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, crash_child(work_then_crash, (void *)1000, 65536, &c, &pid));
	n = check_note(_metadata, &c, pid, 65536);
	ASSERT_NE(NULL, n);
	EXPECT_EQ(0, n->flags & ITRACE_NOTE_PAUSED);
	EXPECT_EQ(0, n->pauses);
	core_free(&c);
}

/*
 * CPU-wide PT events and traced processes coexist both ways round:
 * mainline's exclusive PMU rule would give EBUSY to whichever came second.
 */
TEST_F(rlimit, cpu_wide_event_coexists)
{
	int p[2], fd, status;
	pid_t pid;
	char c;

	if (!have_pt())
		SKIP(return, NO_PT);
	/* a CPU-wide event first, then the limit */
	fd = open_pt(-1, 0);
	ASSERT_LE(0, fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(set_itrace(65536, RLIM_INFINITY) ? errno : 0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(fd);

	/* the limit first, then a CPU-wide event */
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(p[1]);
		if (set_itrace(65536, RLIM_INFINITY))
			_exit(1);
		_exit(read(p[0], &c, 1) == 0 ? 0 : 2);
	}
	close(p[0]);
	usleep(100000);
	fd = open_pt(-1, 0);
	EXPECT_LE(0, fd);
	if (fd >= 0)
		close(fd);
	close(p[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* A user's CPU-wide event wins too: it traces, the thread's trace pauses. */
static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		_exit(140);
}

static void pinned_work_then_crash(void *arg)
{
	pin_cpu0();
	work_then_crash(arg);
}

TEST_F(rlimit, cpu_wide_event_wins)
{
	struct perf_event_mmap_page *up;
	const struct itrace_note *n;
	struct core c;
	pid_t pid;
	int fd;

	if (!have_pt())
		SKIP(return, NO_PT);
	fd = open_pt(-1, 0);
	ASSERT_LE(0, fd);
	up = map_aux(fd);
	ASSERT_NE(NULL, up);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	ASSERT_EQ(0, crash_child(pinned_work_then_crash, (void *)1000, 65536, &c, &pid));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_DISABLE, 0));
	EXPECT_NE(0, __atomic_load_n(&up->aux_head, __ATOMIC_ACQUIRE));
	/*
	 * One CPU, held by the user's event all along: the note is there and
	 * says the trace paused; it may hold no trace at all.
	 */
	n = find_note(&c, pid);
	ASSERT_NE(NULL, n);
	EXPECT_EQ(ITRACE_NOTE_PAUSED, n->flags & ITRACE_NOTE_PAUSED);
	EXPECT_LT(0, n->pauses);
	core_free(&c);
	close(fd);
}

/*
 * A root's pinned cgroup event of the PMU keeps it when a task whose
 * kernel-owned trace event holds the PMU moves into its cgroup: the
 * kernel-owned event gives the PMU up (mainline would put the pinned
 * event in error state, where read() returns 0).
 */
#define CGROUP_ROOT	"/sys/fs/cgroup"
#define CGROUP_DIR	CGROUP_ROOT "/itrace-test"

static void move_then_crash(void *arg)
{
	char pid[32];

	/* traced, on CPU 0, the PMU held by this thread's trace event */
	pin_cpu0();
	work(1000);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (write_file(CGROUP_DIR "/cgroup.procs", pid))
		_exit(141);
	work_then_crash(arg);
}

TEST_F(rlimit, cgroup_pinned_event_keeps_pmu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.pinned = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	struct perf_event_mmap_page *up;
	const struct itrace_note *n;
	unsigned long long count;
	int cg, fd;
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	if (access(CGROUP_ROOT "/cgroup.procs", F_OK) &&
	    mount("none", CGROUP_ROOT, "cgroup2", 0, NULL))
		SKIP(return, "no cgroup2 at " CGROUP_ROOT);
	/*
	 * The root gives its children the implicit perf_event controller
	 * once its controls are first applied: enable one, as an init does.
	 */
	ASSERT_EQ(0, write_file(CGROUP_ROOT "/cgroup.subtree_control",
				"+memory"));
	ASSERT_TRUE(!mkdir(CGROUP_DIR, 0755) || errno == EEXIST);
	cg = open(CGROUP_DIR, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, cg);
	attr.type = pt_type();
	fd = sys_perf_event_open(&attr, cg, 0, -1, PERF_FLAG_PID_CGROUP);
	ASSERT_LE(0, fd) TH_LOG("cgroup intel_pt event: %s", strerror(errno));
	up = map_aux(fd);
	ASSERT_NE(NULL, up);

	ASSERT_EQ(0, crash_child(move_then_crash, (void *)1000, 65536, &c, &pid));
	/* still running, not in error state: read() gives the count */
	EXPECT_EQ(sizeof(count), read(fd, &count, sizeof(count)));
	EXPECT_NE(0, __atomic_load_n(&up->aux_head, __ATOMIC_ACQUIRE));
	/* the thread's trace paused while the cgroup's event held the PMU */
	n = find_note(&c, pid);
	ASSERT_NE(NULL, n);
	EXPECT_EQ(ITRACE_NOTE_PAUSED, n->flags & ITRACE_NOTE_PAUSED);
	core_free(&c);
	close(fd);
	close(cg);
	rmdir(CGROUP_DIR);
}

/* core_pattern pipes get the same notes as files. */
#define PIPE_SCRIPT	CORE_DIR "/pipe.sh"

TEST_F(rlimit, core_note_pipe)
{
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, write_file_create(PIPE_SCRIPT, "#!/bin/sh\ncat > "
				       CORE_DIR "/core.$1\n"));
	ASSERT_EQ(0, chmod(PIPE_SCRIPT, 0755));
	ASSERT_EQ(0, write_file(CORE_PATTERN, "|" PIPE_SCRIPT " %p"));
	ASSERT_EQ(0, crash_child(work_then_crash, (void *)100, 65536, &c, &pid));
	EXPECT_EQ(1, count_itrace(&c));
	EXPECT_NE(NULL, check_note(_metadata, &c, pid, 65536));
	core_free(&c);
	unlink(PIPE_SCRIPT);
}

/*
 * A set-user-ID program is not dumpable: execve() into it drops the trace,
 * and with fs.suid_dumpable = 2 its core has no note.
 */
#define SUID_COPY	CORE_DIR "/suid-crash"

static void exec_suid_then_crash(void *arg)
{
	if (become_nobody())
		_exit(130);
	if (set_itrace(65536, RLIM_INFINITY))
		_exit(131);
	execl(SUID_COPY, "suid-crash", "--crash", NULL);
	_exit(132);
}

TEST_F(rlimit, setuid_program_no_trace)
{
	char cmd[256];
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe " SUID_COPY, getpid());
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, chown(SUID_COPY, 0, 0));
	ASSERT_EQ(0, chmod(SUID_COPY, 04755));
	ASSERT_EQ(0, write_file(SUID_DUMPABLE, "2\n"));
	ASSERT_EQ(0, crash_child(exec_suid_then_crash, NULL, 0, &c, &pid));
	EXPECT_EQ(0, count_itrace(&c));
	core_free(&c);
	unlink(SUID_COPY);
}

/*
 * The rlimit idioms of programs that know nothing of RLIMIT_ITRACE keep
 * working and start no trace: raising every soft limit to its hard limit
 * (RLIM_INFINITY, which keeps no trace), restoring the saved limits, and
 * setting 0, with or without an itrace PMU.
 */
static void idioms_then_crash(void *arg)
{
	struct rlimit saved[RLIM_NLIMITS + 1], r;
	int i;

	/* glibc's RLIM_NLIMITS is 16: the kernel's has one more */
	for (i = 0; i <= RLIMIT_ITRACE; i++)
		if (syscall(SYS_prlimit64, 0, i, NULL, &saved[i]))
			_exit(150);
	for (i = 0; i <= RLIMIT_ITRACE; i++) {
		r.rlim_cur = saved[i].rlim_max;
		r.rlim_max = saved[i].rlim_max;
		if (syscall(SYS_prlimit64, 0, i, &r, NULL))
			_exit(151);
	}
	if (get_itrace_cur(0) != RLIM_INFINITY)
		_exit(152);
	for (i = 0; i <= RLIMIT_ITRACE; i++)
		if (syscall(SYS_prlimit64, 0, i, &saved[i], NULL))
			_exit(153);
	if (set_itrace(0, RLIM_INFINITY) || set_itrace(0, 0))
		_exit(154);
	/* RLIM_INFINITY: the limit reads back, no trace is kept */
	if (set_itrace(0, RLIM_INFINITY) ||
	    set_itrace(RLIM_INFINITY, RLIM_INFINITY) ||
	    get_itrace_cur(0) != RLIM_INFINITY)
		_exit(155);
	work_then_crash(arg);
}

TEST_F(rlimit, idioms_infinity_keeps_none)
{
	struct core c;
	pid_t pid;

	ASSERT_EQ(0, crash_child(idioms_then_crash, (void *)100, 0, &c, &pid));
	EXPECT_EQ(0, count_itrace(&c));
	core_free(&c);
}

/*
 * The trace works for the uids that set the limit: after setuid() to
 * another user, the program that user executes is not traced (nor charged
 * to anyone), even though it is dumpable.
 */
static void setuid_exec_then_crash(void *arg)
{
	if (setgid(NOBODY) || setuid(NOBODY))
		_exit(160);
	if (get_itrace_cur(0) != 65536)
		_exit(161);
	execl("/proc/self/exe", "rlimit_itrace", "--crash", NULL);
	_exit(162);
}

TEST_F(rlimit, other_uid_no_trace)
{
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	/* the executed program is dumpable: nobody writes its core */
	ASSERT_EQ(0, chmod(CORE_DIR, 01777));
	ASSERT_EQ(0, crash_child(setuid_exec_then_crash, NULL, 65536, &c, &pid));
	EXPECT_EQ(0, count_itrace(&c));
	EXPECT_LT(0, c.nr);
	core_free(&c);
}

/*
 * A launcher that is not dumpable sets the limit and executes a dumpable
 * program: the program is traced. guest/check.sh runs this test alone,
 * first thing after boot, when no process has ever set the limit (the
 * kernel's fork and exec hooks were once left off on this path).
 */
static void launch_then_crash(void *arg)
{
	if (prctl(PR_SET_DUMPABLE, 0))
		_exit(190);
	if (set_itrace(65536, RLIM_INFINITY))
		_exit(191);
	execl("/proc/self/exe", "rlimit_itrace", "--crash", NULL);
	_exit(192);
}

TEST_F(rlimit, launcher_nondumpable_exec)
{
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, crash_child(launch_then_crash, NULL, 0, &c, &pid));
	EXPECT_EQ(1, count_itrace(&c));
	EXPECT_NE(NULL, check_note(_metadata, &c, pid, 65536));
	core_free(&c);
}

/* Changing the size restarts the trace without a pause. */
static void resize_then_crash(void *arg)
{
	work(200);
	if (set_itrace(131072, RLIM_INFINITY))
		_exit(170);
	work(200);
	if (set_itrace(65536, RLIM_INFINITY))
		_exit(171);
	work_then_crash(arg);
}

TEST_F(rlimit, resize_no_pause)
{
	const struct itrace_note *n;
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	ASSERT_EQ(0, crash_child(resize_then_crash, (void *)100, 32768, &c, &pid));
	n = check_note(_metadata, &c, pid, 65536);
	ASSERT_NE(NULL, n);
	EXPECT_EQ(0, n->flags & ITRACE_NOTE_PAUSED);
	EXPECT_EQ(0, n->pauses);
	core_free(&c);
}

/*
 * RLIMIT_CORE too small for the memory and the trace: the memory is
 * written whole, the trace is clamped to what is left (its newest bytes,
 * ITRACE_NOTE_CLAMPED).
 */
static rlim_t core_limit;

static void limited_then_crash(void *arg)
{
	struct rlimit core = { core_limit, RLIM_INFINITY };

	if (core_limit && setrlimit(RLIMIT_CORE, &core))
		_exit(180);
	work_then_crash(arg);
}

/* Whether every PT_LOAD of @c is in the file, whole. */
static bool loads_whole(const struct core *c, int *nr)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)c->data;
	int i;

	*nr = 0;
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)
			(c->data + eh->e_phoff + i * eh->e_phentsize);

		if (ph->p_type != PT_LOAD)
			continue;
		(*nr)++;
		if (ph->p_offset + ph->p_filesz > c->size)
			return false;
	}
	return true;
}

TEST_F(rlimit, core_limit_clamps_trace)
{
	const struct itrace_note *n;
	size_t size_without;
	int loads, loads_without;
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	/* the same crash without the limit: the size of its core */
	core_limit = 0;
	ASSERT_EQ(0, crash_child(limited_then_crash, (void *)300000, 0, &c, &pid));
	ASSERT_TRUE(loads_whole(&c, &loads_without));
	size_without = c.size;
	core_free(&c);

	/* 1 MiB of trace would not fit: 16 KiB of room and some slack */
	core_limit = size_without + 16384 + 8192;
	ASSERT_EQ(0, crash_child(limited_then_crash, (void *)300000, 1 << 20,
				 &c, &pid));
	EXPECT_LE(c.size, core_limit);
	EXPECT_TRUE(loads_whole(&c, &loads));
	EXPECT_EQ(loads_without, loads);
	n = find_note(&c, pid);
	ASSERT_NE(NULL, n);
	EXPECT_EQ(ITRACE_NOTE_CLAMPED, n->flags & ITRACE_NOTE_CLAMPED);
	EXPECT_LT(0, n->trace_size);
	EXPECT_GE(16384 + 8192, n->trace_size);
	EXPECT_LE(0, find_psb((const char *)n + n->hdr_size, n->trace_size));
	core_free(&c);
}

/*
 * Root is bounded too: buffers the machine cannot give fail with ENOMEM
 * before anything is allocated, and one user's buffers stay within an
 * eighth of RAM (EPERM beyond), CAP_IPC_LOCK or not. Nobody is killed.
 */
#define BIG_EACH	(64UL << 20)

static void *park(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

static unsigned long mem_available(void)
{
	char buf[4096], *p;

	if (read_file("/proc/meminfo", buf, sizeof(buf)))
		return 0;
	p = strstr(buf, "MemAvailable:");
	return p ? strtoul(p + strlen("MemAvailable:"), NULL, 10) << 10 : 0;
}

static int big_child(void)
{
	unsigned long ram = sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
	unsigned long nr = ram / 8 / BIG_EACH + 1, i;
	pthread_t t;

	/* all of them within half of the memory available, or no test */
	if (2 * nr * BIG_EACH >= mem_available())
		return 10;
	for (i = 1; i < nr; i++)
		if (pthread_create(&t, NULL, park, NULL))
			return 1;
	/* 1 GiB per thread: more than the machine has */
	if (!set_itrace(1UL << 30, RLIM_INFINITY) || errno != ENOMEM)
		return 2;
	/* each fits, all of them are above an eighth of RAM */
	if (!set_itrace(BIG_EACH, RLIM_INFINITY) || errno != EPERM)
		return 3;
	if (get_itrace_cur(0) != 0)
		return 4;
	return 0;
}

TEST_F(rlimit, root_bounded_no_oom)
{
	int ret;

	if (!have_pt())
		SKIP(return, NO_PT);
	ret = in_child(big_child);
	if (ret == 10)
		SKIP(return, "less memory available than the test needs");
	EXPECT_EQ(0, ret);
}

/*
 * intel_bts serving core dumps (selected in sysfs: intel_pt is the default
 * where both exist). Its note holds whole 24-byte records { from, to,
 * flags }, oldest first, none empty, and no kernel address: entries to the
 * kernel (the fault, system calls, interrupts) end at 0.
 */
struct bts_record {
	uint64_t from, to, flags;
};

static const uint64_t bts_user_end = 1ull << 47;	/* 4-level paging */

static bool select_bts_dumps(void)
{
	char sel[8];

	return write_file(BTS_DIR "/itrace/coredump", "1") == 0 &&
	       read_file(BTS_DIR "/itrace/coredump", sel, sizeof(sel)) == 0 &&
	       sel[0] == '1';
}

static void syscall_then_crash(void *arg)
{
	work((unsigned long)arg);
	syscall(SYS_getppid);
	crash();
}

/*
 * Check the records of a BTS note: whole, none empty, user addresses or 0;
 * the newest is the fault in crash(), the one before it the branch there.
 * Returns the number of records whose target is 0 (entries to the kernel).
 */
static int check_bts_note(struct __test_metadata *_metadata,
			  const struct itrace_note *n)
{
	const unsigned char *trace = (const unsigned char *)n + n->hdr_size;
	size_t i, nr = n->trace_size / sizeof(struct bts_record);
	uint64_t crash_at = (uintptr_t)crash;
	struct bts_record r, prev;
	int bad = 0, entries = 0;

	EXPECT_STREQ("intel_bts", n->pmu_name);
	EXPECT_EQ(ITRACE_CPU_INTEL, n->cpu_vendor);
	EXPECT_EQ(0, n->trace_size % sizeof(struct bts_record));
	EXPECT_LE(2, nr);
	if (nr < 2)
		return -1;
	for (i = 0; i < nr; i++) {
		memcpy(&r, trace + i * sizeof(r), sizeof(r));
		bad += (!r.from && !r.to) || r.from >= bts_user_end ||
		       r.to >= bts_user_end;
		entries += !r.to;
	}
	EXPECT_EQ(0, bad);
	memcpy(&r, trace + (nr - 1) * sizeof(r), sizeof(r));
	/* the store that faults, a few bytes into crash() */
	EXPECT_LE(crash_at, r.from);
	EXPECT_GT(crash_at + 32, r.from);
	EXPECT_EQ(0, r.to);
	/*
	 * Before it, the call into crash(); between the two, an interrupt
	 * taken in crash() (a timer tick at its first instruction) leaves a
	 * record {an address in crash() up to the store, 0} (SDM: "the
	 * interrupted next instruction"): skip those.
	 */
	for (i = nr - 1; i-- > 0;) {
		memcpy(&prev, trace + i * sizeof(prev), sizeof(prev));
		if (prev.to || prev.from < crash_at || prev.from > r.from)
			break;
		TH_LOG("an entry to the kernel in crash() before the fault, at %#llx",
		       (unsigned long long)prev.from);
	}
	EXPECT_EQ(crash_at, prev.to);
	if (_metadata->exit_code) {
		TH_LOG("crash() at %#llx; the last records, oldest first:",
		       (unsigned long long)crash_at);
		for (i = nr > 6 ? nr - 6 : 0; i < nr; i++) {
			memcpy(&r, trace + i * sizeof(r), sizeof(r));
			TH_LOG("  %zu: from %#llx to %#llx flags %#llx", i,
			       (unsigned long long)r.from, (unsigned long long)r.to,
			       (unsigned long long)r.flags);
		}
	}
	return entries;
}

/* A crash with intel_bts selected: whole records, the crash last. */
TEST_F(rlimit, bts_core_note)
{
	const struct itrace_note *n;
	struct core c;
	pid_t pid;

	if (bts_type() < 0)
		SKIP(return, NO_BTS);
	ASSERT_TRUE(select_bts_dumps());
	ASSERT_EQ(0, crash_child(syscall_then_crash, (void *)100, 65536, &c,
				 &pid));
	EXPECT_EQ(1, count_itrace(&c));
	n = find_note(&c, pid);
	ASSERT_NE(NULL, n);
	EXPECT_EQ(65536, n->buf_size);
	EXPECT_EQ(0, n->flags & (ITRACE_NOTE_WRAPPED | ITRACE_NOTE_CLAMPED));
	/* the loop's 100 iterations: a taken branch each at least */
	EXPECT_LE(100 * sizeof(struct bts_record), n->trace_size);
	/* the system call and the fault, at least */
	EXPECT_LE(2, check_bts_note(_metadata, n));
	core_free(&c);
}

/*
 * More records than the buffer holds: the newest lap, oldest first, every
 * slot a record (8 KiB hold 341).
 */
TEST_F(rlimit, bts_core_note_wrapped)
{
	const struct itrace_note *n;
	struct core c;
	pid_t pid;

	if (bts_type() < 0)
		SKIP(return, NO_BTS);
	ASSERT_TRUE(select_bts_dumps());
	ASSERT_EQ(0, crash_child(work_then_crash, (void *)100000, 8192, &c,
				 &pid));
	n = find_note(&c, pid);
	ASSERT_NE(NULL, n);
	EXPECT_EQ(ITRACE_NOTE_WRAPPED, n->flags & ITRACE_NOTE_WRAPPED);
	EXPECT_EQ(8192 / 24 * 24, n->trace_size);
	EXPECT_LE(1, check_bts_note(_metadata, n));
	core_free(&c);
}

/* RLIMIT_CORE cuts a BTS note at a record boundary, keeping the newest. */
TEST_F(rlimit, bts_core_limit_clamps_records)
{
	const struct itrace_note *n;
	size_t size_without;
	struct core c;
	int loads;
	pid_t pid;

	if (bts_type() < 0)
		SKIP(return, NO_BTS);
	ASSERT_TRUE(select_bts_dumps());
	core_limit = 0;
	ASSERT_EQ(0, crash_child(limited_then_crash, (void *)300000, 0, &c,
				 &pid));
	size_without = c.size;
	core_free(&c);

	core_limit = size_without + 16384 + 8192;
	ASSERT_EQ(0, crash_child(limited_then_crash, (void *)300000, 1 << 20,
				 &c, &pid));
	EXPECT_LE(c.size, core_limit);
	EXPECT_TRUE(loads_whole(&c, &loads));
	n = find_note(&c, pid);
	ASSERT_NE(NULL, n);
	EXPECT_EQ(ITRACE_NOTE_CLAMPED, n->flags & ITRACE_NOTE_CLAMPED);
	EXPECT_GE(16384 + 8192, n->trace_size);
	EXPECT_LE(1, check_bts_note(_metadata, n));
	core_free(&c);
}

/*
 * The other way round: a user's intel_pt event beside a core-dump trace of
 * intel_bts opens (no EBUSY because of the kernel-owned BTS event, which
 * gives way to it) and traces; the BTS trace pauses meanwhile, which its
 * note says, and goes on once the PT event is gone.
 */
static void pt_event_then_crash(void *arg)
{
	size_t len = (1 + 16) * page_size();
	struct perf_event_mmap_page *rb, *pg;
	int fd, tfd;

	work(100);
	fd = open_pt(0, -1);
	if (fd < 0)
		_exit(errno == EBUSY ? 140 : 141);
	if (stream_and_trace_fd(fd, 4, &rb, &tfd))
		_exit(142);
	pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, tfd, 0);
	if (pg == MAP_FAILED)
		_exit(143);
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
		_exit(144);
	work(1000);
	if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0))
		_exit(145);
	if (!__atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE))
		_exit(146);
	munmap(pg, len);
	munmap(rb, (1 + 4) * page_size());
	close(tfd);
	close(fd);
	/* the BTS trace goes on at the next sched-in */
	usleep(10000);
	work_then_crash(arg);
}

TEST_F(rlimit, pt_event_beside_bts_core_trace)
{
	const struct itrace_note *n;
	struct core c;
	pid_t pid;

	if (!have_pt())
		SKIP(return, NO_PT);
	if (bts_type() < 0)
		SKIP(return, NO_BTS);
	ASSERT_TRUE(select_bts_dumps());
	/* child exit 140: the PT event got EBUSY; 146: it traced nothing */
	ASSERT_EQ(0, crash_child(pt_event_then_crash, (void *)100, 65536, &c,
				 &pid));
	n = find_note(&c, pid);
	ASSERT_NE(NULL, n);
	EXPECT_EQ(ITRACE_NOTE_PAUSED, n->flags & ITRACE_NOTE_PAUSED);
	EXPECT_LT(0, n->pauses);
	EXPECT_LE(1, check_bts_note(_metadata, n));
	core_free(&c);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--crash")) {
		work(100);
		crash();
	}
	return test_harness_run(argc, argv);
}
