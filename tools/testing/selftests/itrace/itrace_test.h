/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the itrace kselftests.
 */
#ifndef ITRACE_TEST_H
#define ITRACE_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <linux/perf_event.h>

#define NOBODY		65534	/* uid and gid of the unprivileged tests */
#define PT_TYPE_FILE	"/sys/bus/event_source/devices/intel_pt/type"
#define NO_PT		"no intel_pt PMU (" PT_TYPE_FILE " is missing)"
#define BTS_TYPE_FILE	"/sys/bus/event_source/devices/intel_bts/type"
#define NO_BTS		"no intel_bts PMU (" BTS_TYPE_FILE " is missing)"

/* PSB, the packet where a decoder synchronizes: 16 bytes 02 82 02 82 ... */
#define PSB_LEN		16

/* Whether the PSB_LEN bytes at @p are a PSB packet. */
static inline int is_psb(const void *p)
{
	const unsigned char *b = p;
	int i;

	for (i = 0; i < PSB_LEN; i++)
		if (b[i] != (i & 1 ? 0x82 : 0x02))
			return 0;
	return 1;
}

/* The offset of the first PSB in @len bytes at @buf, or -1 if none. */
static inline long find_psb(const void *buf, size_t len)
{
	const unsigned char *b = buf;
	size_t i;

	for (i = 0; i + PSB_LEN <= len; i++)
		if (is_psb(b + i))
			return i;
	return -1;
}

static inline int sys_perf_event_open(struct perf_event_attr *attr,
				      pid_t pid, int cpu, int group_fd,
				      unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

static inline long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/* The PMU type in sysfs file @path, or -1 if there is none. */
static inline int pmu_type(const char *path)
{
	FILE *f = fopen(path, "r");
	int type;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);

	return type;
}

/* The PMU type of intel_pt, or -1 if there is none. */
static inline int pt_type(void)
{
	return pmu_type(PT_TYPE_FILE);
}

/* The PMU type of intel_bts, or -1 if there is none. */
static inline int bts_type(void)
{
	return pmu_type(BTS_TYPE_FILE);
}

/* Read a file into buf (at most size - 1 bytes); -errno on error. */
static inline int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);

	return n < 0 ? n : 0;
}

/* Write str to a file in one write(); 0 or -errno. */
static inline int write_file(const char *path, const char *str)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, str, strlen(str));
	if (n < 0)
		n = -errno;
	close(fd);

	return n < 0 ? n : 0;
}

/* Run @fn in a child process; its return value is the exit status. */
static inline int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(fn());
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Drop root; changing credentials makes the process non-dumpable, which
 * would leave it without an RLIMIT_ITRACE trace (rlimit_itrace.c,
 * nondumpable_no_trace): undo that.
 */
static inline int become_nobody(void)
{
	if (setgid(NOBODY) || setuid(NOBODY))
		return -1;
	return prctl(PR_SET_DUMPABLE, 1);
}

/*
 * Fork a child that waits for a byte on a pipe and then executes this test
 * binary again, with the environment variable @env set to @value (the
 * test's traced program runs in it, see CHILD_ENV in each test).  With
 * @norandom, under personality(ADDR_NO_RANDOMIZE): the same addresses at
 * every run, so that the trace has the same size (a TIP packet's length
 * depends on the upper IP bytes it shares with the previous one).
 *
 * The caller opens its event on the returned pid, enable_on_exec, and then
 * writes one byte to *@go (the pipe's write end) to let the child exec;
 * closing *@go instead makes the child exit with status 2.  Returns the
 * child's pid, or -1 with errno set.
 */
static inline pid_t fork_self_child(const char *env, const char *value,
				    int norandom, int *go)
{
	char exe[PATH_MAX], c;
	int p[2];
	ssize_t n;
	pid_t pid;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -1;
	exe[n] = '\0';
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (!pid) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(2);
		setenv(env, value, 1);
		if (norandom)
			personality(ADDR_NO_RANDOMIZE);
		execl(exe, exe, (char *)NULL);
		_exit(3);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

/*
 * Map the perf stream of event @fd (1 + @rb_pages pages, read-write) and
 * open a trace fd of the event: what a trace fd mapping needs first.
 * Return: 0 with *@rb and *@tfd set, or -errno of the mmap() or of
 * perf_event_open(PERF_FLAG_FD_ITRACE) with *@rb MAP_FAILED and *@tfd -1
 * (nothing is left mapped or open).
 */
static inline int stream_and_trace_fd(int fd, long rb_pages,
				      struct perf_event_mmap_page **rb,
				      int *tfd)
{
	size_t len = (1 + rb_pages) * page_size();
	int err;

	*tfd = -1;
	*rb = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*rb == MAP_FAILED)
		return -errno;
	*tfd = sys_perf_event_open(NULL, -1, -1, fd, PERF_FLAG_FD_ITRACE);
	if (*tfd < 0) {
		err = -errno;
		munmap(*rb, len);
		*rb = MAP_FAILED;
		return err;
	}
	return 0;
}

/*
 * Sum of the sizes of the PERF_RECORD_AUX records in the event's perf
 * stream, or -1 if it is malformed or the records do not follow each other
 * (each aux_offset the sum of the sizes before it).
 */
static inline long long aux_record_bytes(struct perf_event_mmap_page *rb)
{
	unsigned long long head = __atomic_load_n(&rb->data_head,
						  __ATOMIC_ACQUIRE);
	unsigned char *data = (unsigned char *)rb + rb->data_offset;
	unsigned long long pos = rb->data_tail;
	long long bytes = 0;

	/* Few records: the stream must not have wrapped. */
	if (head > rb->data_size)
		return -1;

	while (pos < head) {
		struct perf_event_header *hdr = (void *)(data + pos);
		struct {
			struct perf_event_header hdr;
			__u64 aux_offset, aux_size, flags;
		} *aux = (void *)hdr;

		if (hdr->size < sizeof(*hdr) || pos + hdr->size > head)
			return -1;
		if (hdr->type == PERF_RECORD_AUX) {
			if (aux->aux_offset != (unsigned long long)bytes)
				return -1;
			bytes += aux->aux_size;
		}
		pos += hdr->size;
	}

	return bytes;
}

/* Two targets for indirect_calls(), emitted since their address is taken */
static inline void callee0(void)
{
	asm volatile("");
}

static inline void callee1(void)
{
	asm volatile("");
}

/*
 * The traced programs' loop: @n indirect calls (0: without end) to two
 * functions in turn, a TIP packet each, the same control flow at every run.
 */
static inline void indirect_calls(unsigned long n)
{
	static void (* const fn[2])(void) = { callee0, callee1 };
	unsigned long i;

	for (i = 0; !n || i < n; i++) {
		void (*f)(void) = fn[i & 1];

		/* the compiler no longer knows f: an indirect call */
		asm volatile("" : "+r" (f));
		f();
	}
}

/* PERF_RECORD_ITRACE_LOST without sample_id (attr.sample_id_all is 0) */
struct itrace_lost {
	struct perf_event_header	hdr;
	__u64				offset;
	__u64				size;
};

struct stop_state {
	unsigned long long	last_lost;	/* offset of the last record */
	int			lost;		/* ITRACE_LOST records */
	int			truncated;	/* AUX records with TRUNCATED */
	int			bad;		/* malformed or misplaced */
};

/*
 * Read the new records of the perf stream (which may wrap) and release
 * them. Each ITRACE_LOST must be at the trace's data_head: a stopped
 * trace does not move until the reader lets it.
 */
static inline void read_stream(struct perf_event_mmap_page *rb,
			       struct perf_event_mmap_page *pg,
			       struct stop_state *st)
{
	unsigned long long head = __atomic_load_n(&rb->data_head,
						  __ATOMIC_ACQUIRE);
	unsigned char *data = (unsigned char *)rb + rb->data_offset;
	unsigned long long pos = rb->data_tail, size = rb->data_size;

	while (pos < head) {
		unsigned char rec[64];
		struct perf_event_header *hdr = (void *)rec;
		struct itrace_lost *lost = (void *)rec;
		__u64 flags;
		size_t i;

		for (i = 0; i < sizeof(*hdr); i++)
			rec[i] = data[(pos + i) % size];
		if (hdr->size < sizeof(*hdr) || pos + hdr->size > head) {
			st->bad++;
			break;
		}
		for (i = 0; i < hdr->size && i < sizeof(rec); i++)
			rec[i] = data[(pos + i) % size];

		if (hdr->type == PERF_RECORD_ITRACE_LOST) {
			if (hdr->size != sizeof(*lost) || lost->size ||
			    lost->offset != __atomic_load_n(&pg->data_head,
							    __ATOMIC_ACQUIRE) ||
			    (st->lost && lost->offset <= st->last_lost))
				st->bad++;
			st->last_lost = lost->offset;
			st->lost++;
		} else if (hdr->type == PERF_RECORD_AUX) {
			memcpy(&flags, rec + sizeof(*hdr) + 16, sizeof(flags));
			if (flags & PERF_AUX_FLAG_TRUNCATED)
				st->truncated++;
		}
		pos += hdr->size;
	}
	/* Pairs with the kernel's read of data_tail: we are done reading. */
	__atomic_store_n(&rb->data_tail, pos, __ATOMIC_RELEASE);
}

#endif /* ITRACE_TEST_H */
