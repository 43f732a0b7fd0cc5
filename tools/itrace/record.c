// SPDX-License-Identifier: GPL-2.0
/*
 * itrace record: trace a command, processes or CPUs with Intel PT through
 * the itrace trace fd and save trace + sideband into one itrace.data file.
 *
 * Targets and events:
 *  - a command (default): fork it, blocked on a pipe; one intel_pt event
 *    per online CPU on it, with attr.inherit, so its threads and children
 *    write into the buffer of the CPU they run on (a per-task event with
 *    inherit on all CPUs at once cannot have a trace fd mapping: one
 *    buffer would serialize every CPU); disabled, enable_on_exec; then let
 *    it exec.  --no-inherit: one event on the command alone, any CPU.
 *  - -p PID / -t TID: the same per-CPU events on each existing thread,
 *    enabled at once; the events of the other threads on a CPU write into
 *    the first one's buffer (PERF_EVENT_IOC_SET_OUTPUT).  The mappings the
 *    processes already have are synthesized from /proc as MMAP2 records.
 *  - -a / -C CPUS: one CPU-wide event per CPU (pid -1).
 * Every event has the sideband a decoder needs to give each byte of trace
 * its thread: MMAP2, COMM, FORK/EXIT, context switches, and the sample_id
 * (tid, time, cpu) of every record; its PERF_RECORD_AUX records say which
 * bytes of the buffer each task wrote while it was switched in.
 *
 * While the targets run, the rings are drained when poll() says they are
 * ready (watermark, stop, perf stream wake-ups), and once at the end;
 * signals come through a signalfd: SIGCHLD (the command exited),
 * SIGINT/SIGTERM (end the recording: the command gets SIGTERM, as perf
 * does), SIGUSR2 (--snapshot: take one).
 */
#include <cpuid.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <linux/hw_breakpoint.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itrace.h"
#include "itrace-file.h"
#include "events.h"
#include "filter.h"
#include "kcore.h"
#include "perf-event.h"
#include "record.h"
#include "sym.h"

#ifndef PERF_FLAG_FD_ITRACE
#define PERF_FLAG_FD_ITRACE	BIT(4)
#endif

#define PT_SYSFS	"/sys/bus/event_source/devices/intel_pt"
#define BTS_SYSFS	"/sys/bus/event_source/devices/intel_bts"
#define PERF_PAGES	128	/* sideband ring: 128 data pages per buffer */
/*
 * poll() timeout while the targets run.  The drains come from the kernel's
 * wake-ups (the watermark, a stop, the sideband ring half full, POLLHUP at
 * exit), not from this timer: draining on a timer copies trace below the
 * watermark while the target runs, and the reader then takes the CPU from
 * it (with a 20 ms timer that drained, the workload of `make bench`'s tfd
 * step ran 2.2x as long as under perf record when the buffer held the
 * whole trace).  A timeout only checks for a stalled trace,
 * restart_stalled().
 */
#define STALL_MS	100
/* After SIGTERM, the command has this long to exit before SIGKILL. */
#define TERM_GRACE_MS	10000

#define SAMPLE_ID_TYPE	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			    int group_fd, unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
}

static int read_sysfs_int(const char *path, long *val)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%li", val) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* caps/NAME of intel_pt: the driver prints them in hex; -1 if absent. */
static long pt_cap(const char *name)
{
	char path[256];
	unsigned long v;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), PT_SYSFS "/caps/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%lx", &v) == 1;
	fclose(f);
	return ok ? (long)v : -1;
}

/* format/NAME: "config:13" or "config:14-17": the bits, or -1 if absent. */
static int pt_format(const char *name, int *lo, int *hi)
{
	char path[256], buf[64];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), PT_SYSFS "/format/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = 0;
	if (fgets(buf, sizeof(buf), f))
		n = sscanf(buf, "config:%d-%d", lo, hi);
	fclose(f);
	if (n == 1)
		*hi = *lo;
	if (n < 1 || *lo < 0 || *hi > 63 || *hi < *lo)
		return -1;
	return 0;
}

static int pt_set(uint64_t *config, const char *name, uint64_t val)
{
	int lo, hi;

	if (pt_format(name, &lo, &hi))
		return -1;
	if (hi - lo < 63 && val >> (hi - lo + 1))
		return -1;
	*config |= val << lo;
	return 0;
}

struct ropts {
	const char	*path;
	unsigned long	pages;
	int		snapshot;
	int		kernel;
	int		no_inherit;
	int		timing;		/* TSC, MTC */
	int		cyc;
	int		all_cpus;	/* -a */
	const char	*cpu_list;	/* -C */
	const char	*pids;		/* -p */
	const char	*tids;		/* -t */
	const char	*filter;
	double		duration;	/* seconds, 0: none */
	int		kcore;		/* copy the kernel text to PATH.kcore */
	const char	*snap_on;	/* --snapshot-on SYMBOL[@FILE] */
	const char	*event;		/* -e EVENT: sample it, with trace */
	uint64_t	period;		/* -c */
	uint64_t	freq;		/* -F */
	unsigned long	sample_trace;	/* --sample-trace BYTES */
	int		pages_set;	/* -m given */
	int		quiet;
	int		bts;		/* --pmu intel_bts */
	char		**cmd;
};

/*
 * The intel_pt config: "pt" and "branch" (BranchEn; the driver takes it
 * only with "pt", the RTIT_CTL pass-through: the bits are used as given,
 * as perf's default does), and the timing the PMU offers unless
 * --no-timing: "tsc" (TSC packets in every PSB+), "mtc" with mtc_period 3
 * (MTC every 2^3 crystal clocks: perf's default) where caps/mtc says so,
 * "cyc" (cycle counts, --cyc) where caps/psb_cyc does.  *what says which.
 */
static uint64_t pt_config(const struct ropts *o, char *what, size_t len)
{
	uint64_t config = 0;
	long periods;
	int lo, hi, mtc_period = 3;

	if (pt_set(&config, "branch", 1))
		config |= 1ULL << 13;
	pt_set(&config, "pt", 1);
	snprintf(what, len, "branches");
	if (!o->timing)
		return config;
	if (!pt_set(&config, "tsc", 1))
		snprintf(what + strlen(what), len - strlen(what), ", TSC");
	if (pt_cap("mtc") > 0 && !pt_format("mtc", &lo, &hi)) {
		periods = pt_cap("mtc_periods");
		if (periods > 0 && !(periods & (1L << mtc_period)))
			mtc_period = __builtin_ctzl(periods);
		if (!pt_set(&config, "mtc", 1) && !pt_set(&config, "mtc_period", mtc_period))
			snprintf(what + strlen(what), len - strlen(what), ", MTC (period %d)",
				 mtc_period);
	}
	if (o->cyc) {
		if (pt_cap("psb_cyc") > 0 && !pt_set(&config, "cyc", 1))
			snprintf(what + strlen(what), len - strlen(what), ", CYC");
		else
			fprintf(stderr,
				"itrace: warning: --cyc: this intel_pt has no CYC packets\n");
	}
	return config;
}

void itrace_cpu_ident(struct itrace_file_header *hdr)
{
	unsigned int eax, ebx, ecx, edx, family, model;

	if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
		return;
	/* "GenuineIntel" = ebx "Genu", edx "ineI", ecx "ntel" */
	if (ebx == 0x756e6547 && edx == 0x49656e69 && ecx == 0x6c65746e)
		hdr->cpu_vendor = ITRACE_CPU_INTEL;
	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
		return;
	family = (eax >> 8) & 0xf;
	model = (eax >> 4) & 0xf;
	if (family == 0xf)
		family += (eax >> 20) & 0xff;
	if (family == 0x6 || family >= 0xf)
		model += ((eax >> 16) & 0xf) << 4;
	hdr->cpu_family = family;
	hdr->cpu_model = model;
	hdr->cpu_stepping = eax & 0xf;
}

/* Our own [vdso]: the same kernel maps the same image into every process. */
int itrace_read_vdso(uint8_t **buf, size_t *size)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	unsigned long lo, hi;
	char line[512];
	FILE *f;

	*buf = NULL;
	*size = 0;
	if (!base)
		return -1;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "[vdso]"))
			continue;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == base) {
			*buf = malloc(hi - lo);
			if (*buf) {
				memcpy(*buf, (void *)lo, hi - lo);
				*size = hi - lo;
			}
		}
		break;
	}
	fclose(f);
	return *buf ? 0 : -1;
}

/* ---- CPUs and threads ------------------------------------------------ */

/* "0-3,5" into a sorted list without duplicates; -1 on a syntax error. */
static int parse_cpu_list(const char *s, int **cpus, size_t *nr)
{
	uint8_t seen[4096] = { 0 };
	const char *p = s;
	size_t n = 0, i;

	*cpus = NULL;
	*nr = 0;
	while (*p) {
		char *end;
		long a, b;

		if (!isdigit((unsigned char)*p))
			return -1;
		a = strtol(p, &end, 10);
		b = a;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -1;
			b = strtol(end + 1, &end, 10);
		}
		if (a < 0 || b < a || b >= (long)sizeof(seen))
			return -1;
		for (; a <= b; a++)
			seen[a] = 1;
		if (*end == ',')
			end++;
		else if (*end && *end != '\n')
			return -1;
		p = *end == '\n' ? end + 1 : end;
	}
	for (i = 0; i < sizeof(seen); i++)
		n += seen[i];
	if (!n)
		return -1;
	*cpus = malloc(n * sizeof(**cpus));
	if (!*cpus)
		return -1;
	for (i = 0; i < sizeof(seen); i++)
		if (seen[i])
			(*cpus)[(*nr)++] = i;
	return 0;
}

static int online_cpus(int **cpus, size_t *nr)
{
	char buf[1024];
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int ok;

	if (!f) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		snprintf(buf, sizeof(buf), "0-%ld", n > 0 ? n - 1 : 0);
	} else {
		ok = !!fgets(buf, sizeof(buf), f);
		fclose(f);
		if (!ok)
			return -1;
	}
	return parse_cpu_list(buf, cpus, nr);
}

struct target {
	pid_t	pid, tid;
};

static int add_target(struct target **t, size_t *nr, pid_t pid, pid_t tid)
{
	struct target *n = realloc(*t, (*nr + 1) * sizeof(*n));

	if (!n)
		return -1;
	*t = n;
	n[*nr].pid = pid;
	n[(*nr)++].tid = tid;
	return 0;
}

/* The process a thread belongs to (Tgid of /proc/TID/status), -1 if gone. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[256];
	pid_t tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* -p PID,... (every thread of each) or -t TID,... into targets */
static int list_targets(const char *list, bool threads, struct target **t, size_t *nr)
{
	char *copy = strdup(list), *tok, *save = NULL, *end;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long id = strtol(tok, &end, 10);
		char path[64];
		struct dirent *de;
		DIR *dir;

		if (*end || id <= 0 || id > INT32_MAX) {
			fprintf(stderr, "itrace: %s %s: not a process id\n", threads ? "-t" : "-p",
				tok);
			goto bad;
		}
		if (threads) {
			pid_t pid = tgid_of(id);

			if (pid < 0) {
				fprintf(stderr, "itrace: -t %ld: no such thread\n", id);
				goto bad;
			}
			if (add_target(t, nr, pid, id))
				goto bad;
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%ld/task", id);
		dir = opendir(path);
		if (!dir || tgid_of(id) != id) {
			fprintf(stderr, "itrace: -p %ld: no such process%s\n", id,
				dir ? " (a thread: use -t)" : "");
			if (dir)
				closedir(dir);
			goto bad;
		}
		while ((de = readdir(dir))) {
			long tid = strtol(de->d_name, &end, 10);

			if (*end || tid <= 0)
				continue;
			if (add_target(t, nr, id, tid)) {
				closedir(dir);
				goto bad;
			}
		}
		closedir(dir);
	}
	free(copy);
	return 0;
bad:
	free(copy);
	return -1;
}

/* ---- the rings ------------------------------------------------------- */

static int ring_map(struct ring *r, int fd, size_t pages, int writable)
{
	long psz = sysconf(_SC_PAGESIZE);
	int prot = PROT_READ | (writable ? PROT_WRITE : 0);

	r->map_size = (1 + pages) * psz;
	r->base = mmap(NULL, r->map_size, prot, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -1;
	}
	r->pg = r->base;
	r->writable = writable;
	/* data_offset/data_size are set by the kernel; 0 = old layout */
	r->data = (uint8_t *)r->base + (r->pg->data_offset ? r->pg->data_offset : (uint64_t)psz);
	r->size = r->pg->data_size ? r->pg->data_size : pages * psz;
	r->tail = 0;
	return 0;
}

/* React to records of the perf stream that matter while recording. */
void scan_perf(struct recorder *rec, struct rbuf *b, const uint8_t *p, size_t len)
{
	struct pev_iter it;
	struct pev ev;
	char err[128];

	pev_iter_init(&it, p, len);
	while (pev_next(&it, &ev, err, sizeof(err)) > 0) {
		if (pev_short(&ev))
			continue;
		switch (ev.type) {
		case PERF_RECORD_COMM:
			if (ev.misc & PERF_RECORD_MISC_COMM_EXEC)
				rec->exec_seen = 1;
			break;
		case PERF_RECORD_SAMPLE:
			rec->nr_samples++;
			break;
		case PERF_RECORD_LOST:
			if (!rec->sb_lost)
				fprintf(stderr,
					"itrace: warning: the kernel lost %s records (perf stream of buffer %u full)\n",
					rec->samples ? "sample and sideband" : "sideband", b->idx);
			rec->sb_lost = 1;
			rec->nr_lost_records += ev.lost.lost;
			break;
		case PERF_RECORD_ITRACE_LOST:
			/* size: bytes dropped, 0 = unknown */
			b->lost = 1;
			rec->nr_lost++;
			b->nr_itrace_lost++;
			b->lost_bytes += ev.aux.size;
			break;
		case PERF_RECORD_AUX:
			if (ev.aux.flags & PERF_AUX_FLAG_TRUNCATED) {
				b->lost = 1;
				rec->nr_lost++;
				b->nr_aux_truncated++;
			}
			break;
		}
	}
}

/* Copy [tail, head) of a ring to the file, then release it to the kernel. */
int ring_drain(struct recorder *rec, struct rbuf *b, struct ring *r, uint32_t type)
{
	/* acquire: the data we copy below is at least as new as data_head */
	uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t len = head - r->tail, start, first;
	uint8_t *lin;

	if (!len)
		return 0;
	if (len > r->size) {
		/* cannot happen with a writable mapping: the kernel stops */
		fprintf(stderr, "itrace: %s ring %u overrun (head %llu tail %llu size %llu)\n",
			r->name, b->idx, (unsigned long long)head,
			(unsigned long long)r->tail, (unsigned long long)r->size);
		r->tail = head - r->size;
		len = r->size;
	}
	if (type == ITRACE_SEC_PERF) {
		/* one linear copy, for scan_perf() to read records across the end */
		start = r->tail % r->size;
		first = len < r->size - start ? len : r->size - start;
		lin = malloc(len);
		if (!lin)
			return -1;
		memcpy(lin, r->data + start, first);
		memcpy(lin + first, r->data, len - first);
		scan_perf(rec, b, lin, len);
		if (itrace_write_buf_section2(rec->out, type, b->idx, r->tail, lin, len, NULL, 0)) {
			free(lin);
			return -1;
		}
		free(lin);
	} else {
		/*
		 * Stop mode: give the space back an eighth of the buffer at a
		 * time, as soon as each piece is written out, not after the
		 * whole copy: a reader that shares the CPU with the traced
		 * task may be switched out in the middle of a long write, and
		 * the driver restarts a stopped trace (and places its next
		 * STOP marker) from the data_tail it finds then.
		 */
		uint64_t step = r->writable && r->size >= 8 ? r->size / 8 : len;

		while (len) {
			uint64_t n = len < step ? len : step;

			start = r->tail % r->size;
			first = n < r->size - start ? n : r->size - start;
			if (itrace_write_buf_section2(rec->out, type, b->idx, r->tail,
						      r->data + start, first, r->data, n - first))
				return -1;
			rec->trace_bytes += n;
			b->trace_bytes += n;
			r->tail += n;
			len -= n;
			if (r->writable)
				__atomic_store_n(&r->pg->data_tail, r->tail, __ATOMIC_RELEASE);
		}
		return 0;
	}
	r->tail = head;
	/*
	 * Release: our reads of the data above complete before the kernel
	 * sees the space as free (pairs with its read of data_tail before it
	 * writes).  A read-only (overwrite) mapping has no tail to move.
	 */
	if (r->writable)
		__atomic_store_n(&r->pg->data_tail, head, __ATOMIC_RELEASE);
	return 0;
}

/* PERF_EVENT_IOC_ENABLE (or DISABLE) on every event of b. */
static void buf_ioctl(struct rbuf *b, unsigned long req)
{
	size_t i;

	for (i = 0; i < b->nr_fds; i++)
		ioctl(b->fds[i], req, 0);
	if (!b->nr_fds && b->fd >= 0)
		ioctl(b->fd, req, 0);
}

static int drain_buf(struct recorder *rec, struct rbuf *b)
{
	uint64_t full;

	if (!b->perf.pg)
		return 0;
	if (ring_drain(rec, b, &b->perf, ITRACE_SEC_PERF))
		return -1;
	if (rec->snapshot || rec->sideband_only || !b->trace.pg)
		return 0;
	full = __atomic_load_n(&b->trace.pg->data_head, __ATOMIC_ACQUIRE) - b->trace.tail;
	if (ring_drain(rec, b, &b->trace, ITRACE_SEC_TRACE))
		return -1;
	/*
	 * Stop mode: trace stopped when the buffer filled and resumes only
	 * after data_tail moved and the event is enabled again.
	 */
	if ((b->lost || full >= b->trace.size) && rec->exec_seen) {
		buf_ioctl(b, PERF_EVENT_IOC_ENABLE);
		b->nr_enables++;
		b->lost = 0;
	}
	return 0;
}

static int drain_all(struct recorder *rec)
{
	size_t i;

	for (i = 0; i < rec->nr_bufs; i++)
		if (drain_buf(rec, &rec->bufs[i]))
			return -1;
	return 0;
}

/*
 * poll() timed out with the trace fd in stop mode.  A drain and one
 * PERF_EVENT_IOC_ENABLE restart a stopped trace wherever the task runs
 * (Documentation/userspace-api/itrace.rst, "The read protocol (stop
 * mode)"); this is only the safety net for a wake-up that never came.  So
 * when data_head has not moved since the last timeout, drain and enable
 * again; enabling an enabled event does nothing.  While the trace moves,
 * nothing is done, so that trace below the watermark is not copied while
 * the traced task runs.  Returns 0, or -1 on a write error.
 */
int restart_stalled(struct recorder *rec, struct rbuf *b)
{
	uint64_t head;

	if (b->tfd < 0 || rec->snapshot || rec->sideband_only || !rec->exec_seen)
		return 0;
	head = __atomic_load_n(&b->trace.pg->data_head, __ATOMIC_ACQUIRE);
	if (head != b->stall_head) {
		b->stall_head = head;
		return 0;
	}
	if (drain_buf(rec, b))
		return -1;
	buf_ioctl(b, PERF_EVENT_IOC_ENABLE);
	b->nr_stall_enables++;
	return 0;
}

/*
 * Snapshot: the read-only buffer holds the newest data_size bytes, the
 * oldest at data_head % data_size, and data_head counts every byte ever
 * written (DESIGN.md section 4).  Save what was written since the last
 * snapshot, at most the buffer: [max(snap_head, head - size), head).  A
 * snapshot that follows the previous one without a wrap in between
 * continues its stream; otherwise the trace in between was overwritten
 * and the decoder starts again at the first PSB.
 */
int drain_snapshot(struct recorder *rec, struct rbuf *b)
{
	struct ring *r = &b->trace;
	uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t lo = head > r->size ? head - r->size : 0, start, n, first;

	if (lo < b->snap_head)
		lo = b->snap_head;
	if (head <= lo)
		return 0;
	n = head - lo;
	start = lo % r->size;
	first = n < r->size - start ? n : r->size - start;
	if (itrace_write_buf_section2(rec->out, ITRACE_SEC_TRACE, b->idx, lo, r->data + start,
				      first, r->data, n - first))
		return -1;
	b->snap_head = head;
	b->trace_bytes += n;
	rec->trace_bytes += n;
	return 0;
}

/* perf time now, from the clock the kernel stamps records with. */
static uint64_t perf_time_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * One snapshot of every buffer: stop the events (the driver publishes
 * data_head when it stops), copy, start them again.  The marker before
 * the trace says which snapshot the chunks belong to.
 */
static int take_snapshot(struct recorder *rec, uint32_t reason, bool restart)
{
	struct itrace_snapshot s = { .index = rec->nr_snaps + 1, .reason = reason };
	size_t i;
	int ret = 0;

	for (i = 0; i < rec->nr_bufs; i++)
		buf_ioctl(&rec->bufs[i], PERF_EVENT_IOC_DISABLE);
	s.time = perf_time_now();
	rec->nr_snaps++;
	if (itrace_write_section(rec->out, ITRACE_SEC_SNAPSHOT, 0, &s, sizeof(s)))
		ret = -1;
	for (i = 0; i < rec->nr_bufs && !ret; i++)
		if (rec->bufs[i].trace.pg && drain_snapshot(rec, &rec->bufs[i]))
			ret = -1;
	if (restart)
		for (i = 0; i < rec->nr_bufs; i++)
			buf_ioctl(&rec->bufs[i], PERF_EVENT_IOC_ENABLE);
	return ret;
}

/* ---- sideband of what ran before the recording ----------------------- */

static int synth_comm(struct pev_buf *pb, pid_t pid, pid_t tid)
{
	struct pev_id id = { .pid = pid, .tid = tid };
	char path[64], comm[32] = "";
	uint8_t body[8 + 32];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(comm, sizeof(comm) - 1, f))
		comm[0] = 0;
	fclose(f);
	n = strcspn(comm, "\n");
	comm[n] = 0;
	memcpy(body, &pid, 4);
	memcpy(body + 4, &tid, 4);
	memcpy(body + 8, comm, n + 1);
	return pev_put_id(pb, PERF_RECORD_COMM, 0, body, 8 + n + 1, SAMPLE_ID_TYPE, &id);
}

/* The executable mappings of a process, as the kernel's MMAP2 records would be. */
static int synth_maps(struct pev_buf *pb, pid_t pid)
{
	struct pev_id id = { .pid = pid, .tid = pid };
	char path[64], line[4352];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && !ret) {
		unsigned long long lo, hi, off;
		char perms[8], name[4096] = "";
		uint8_t bid[PEV_BUILD_ID_MAX], *body;
		unsigned int maj, min;
		unsigned long ino;
		uint32_t prot, flags;
		int bn = 0, n;
		size_t nl, size;

		n = sscanf(line, "%llx-%llx %7s %llx %x:%x %lu %4095[^\n]", &lo, &hi, perms, &off,
			   &maj, &min, &ino, name);
		if (n < 7 || perms[2] != 'x')
			continue;
		if (n < 8)
			snprintf(name, sizeof(name), "//anon");
		prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		       PROT_EXEC;
		flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		if (name[0] == '/') {
			bn = sym_build_id(name, bid, sizeof(bid));
			if (bn < 0)
				bn = 0;
		}
		nl = strlen(name) + 1;
		size = 64 + nl;
		body = calloc(1, size);
		if (!body)
			break;
		memcpy(body, &pid, 4);
		memcpy(body + 4, &pid, 4);
		memcpy(body + 8, &lo, 8);
		hi -= lo;
		memcpy(body + 16, &hi, 8);
		memcpy(body + 24, &off, 8);
		if (bn) {
			body[32] = bn;
			memcpy(body + 36, bid, bn);
		} else {
			memcpy(body + 32, &maj, 4);
			memcpy(body + 36, &min, 4);
			memcpy(body + 40, &ino, 8);
		}
		memcpy(body + 56, &prot, 4);
		memcpy(body + 60, &flags, 4);
		memcpy(body + 64, name, nl);
		ret = pev_put_id(pb, PERF_RECORD_MMAP2,
				 PERF_RECORD_MISC_USER | (bn ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0),
				 body, size, SAMPLE_ID_TYPE, &id);
		free(body);
	}
	fclose(f);
	return ret;
}

/* COMM of each thread, MMAP2 of each process: pids (all of /proc if NULL). */
static int synth_sideband(struct recorder *rec, const struct target *t, size_t nr)
{
	struct pev_buf pb = { 0 };
	pid_t last = -1;
	size_t i;
	int ret = 0;

	if (!t) {
		DIR *d = opendir("/proc"), *td;
		struct dirent *de, *te;
		char path[64], *end;

		if (!d)
			return 0;
		while ((de = readdir(d)) && !ret) {
			long pid = strtol(de->d_name, &end, 10);

			if (*end || pid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%ld/task", pid);
			td = opendir(path);
			while (td && (te = readdir(td)) && !ret) {
				long tid = strtol(te->d_name, &end, 10);

				if (!*end && tid > 0)
					ret = synth_comm(&pb, pid, tid);
			}
			if (td)
				closedir(td);
			if (!ret)
				ret = synth_maps(&pb, pid);
		}
		closedir(d);
	} else {
		for (i = 0; i < nr && !ret; i++) {
			ret = synth_comm(&pb, t[i].pid, t[i].tid);
			if (!ret && t[i].pid != last)
				ret = synth_maps(&pb, t[i].pid);
			last = t[i].pid;
		}
	}
	if (!ret && pb.len)
		ret = itrace_write_buf_section2(rec->out, ITRACE_SEC_PERF, rec->bufs[0].idx,
						UINT64_MAX, pb.buf, pb.len, NULL, 0);
	free(pb.buf);
	return ret;
}

/* ---- messages -------------------------------------------------------- */

/*
 * perf_event_open() refused an event that traces kernel mode: say why.
 * Linux allows it with perf_event_paranoid <= 1, or to CAP_PERFMON (or
 * CAP_SYS_ADMIN) whatever the setting.
 */
static void report_kernel_denied(int err)
{
	long paranoid;

	fprintf(stderr, "itrace: -k: tracing kernel mode is not permitted: %s\n", strerror(err));
	if (read_sysfs_int("/proc/sys/kernel/perf_event_paranoid", &paranoid))
		fprintf(stderr,
			"itrace: cannot read /proc/sys/kernel/perf_event_paranoid; kernel tracing needs it <= 1, or CAP_PERFMON\n");
	else if (paranoid > 1)
		fprintf(stderr,
			"itrace: /proc/sys/kernel/perf_event_paranoid is %ld: kernel tracing needs <= 1, or CAP_PERFMON (root); without -k only user mode is traced\n",
			paranoid);
	else
		fprintf(stderr,
			"itrace: /proc/sys/kernel/perf_event_paranoid is %ld, which allows it: a security module or the PMU refused\n",
			paranoid);
}

static void report_open_error(const struct ropts *o, const struct perf_event_attr *attr,
			      pid_t pid, int cpu, int err)
{
	long paranoid = -1;

	if (o->kernel && (err == EACCES || err == EPERM)) {
		report_kernel_denied(err);
		return;
	}
	fprintf(stderr,
		"itrace: perf_event_open(intel_pt, type %u, config 0x%llx, pid %d, cpu %d): %s\n",
		attr->type, (unsigned long long)attr->config, pid, cpu, strerror(err));
	read_sysfs_int("/proc/sys/kernel/perf_event_paranoid", &paranoid);
	if ((err == EACCES || err == EPERM) && pid == -1)
		fprintf(stderr,
			"itrace: CPU-wide tracing (-a, -C) needs perf_event_paranoid <= 0 (it is %ld), or CAP_PERFMON (root)\n",
			paranoid);
	else if (err == EACCES || err == EPERM)
		fprintf(stderr,
			"itrace: check /proc/sys/kernel/perf_event_paranoid (%ld) or run as root; -p/-t need the right to ptrace the process\n",
			paranoid);
	else if (err == EBUSY)
		fprintf(stderr,
			"itrace: the CPU's trace unit is in use by another trace event (perf record -e intel_pt?)\n");
	else if (err == ESRCH)
		fprintf(stderr, "itrace: the thread %d exited\n", pid);
}

static void usage_record(FILE *f)
{
	fprintf(f,
		"usage: itrace record [OPTIONS] -- CMD [ARGS...]\n"
		"       itrace record [OPTIONS] -p PID | -t TID | -a | -C CPUS [-- CMD]\n"
		"  -o FILE         output file (default itrace.data; an existing one is\n"
		"                  kept as FILE.old)\n"
		"  -m PAGES        trace buffer pages per CPU, a power of two (default 1024)\n"
		"  -k, --kernel    trace kernel mode too (needs perf_event_paranoid <= 1,\n"
		"                  CAP_PERFMON or root)\n"
		"  --kcore         copy the running kernel text to FILE.kcore (root), which\n"
		"                  decode uses for the kernel part of a -k recording\n"
		"  --no-inherit    trace CMD's first thread only, not its threads and children\n"
		"  -p, --pid PID[,PID]   attach to running processes (every thread)\n"
		"  -t, --tid TID[,TID]   attach to running threads\n"
		"  -a, --all-cpus  every CPU, every process (perf_event_paranoid <= 0 or root)\n"
		"  -C, --cpu CPUS  these CPUs only (\"0,2-3\"), every process\n"
		"  --filter FILTER address filters, perf's syntax: filter|tracestop\n"
		"                  START[/SIZE] [@FILE], START and SIZE numbers or symbols\n"
		"                  (\"filter main @ /usr/bin/prog\"); up to caps/num_address_ranges\n"
		"  --duration SECS stop after SECS seconds (CMD, if still running, gets SIGTERM)\n"
		"  --no-timing     no TSC and MTC packets (default: on where the PMU has them)\n"
		"  --cyc           cycle-accurate timing (CYC packets)\n"
		"  --snapshot      overwrite mode: keep the newest trace; a snapshot at each\n"
		"                  SIGUSR2 and at the end, each decodable on its own\n"
		"  --snapshot-on SYMBOL[@FILE]  --snapshot, and one when the program first\n"
		"                  executes SYMBOL (a hardware breakpoint; FILE: the program)\n"
		"  -e, --event EVENT  sample EVENT, each sample with the newest trace of its\n"
		"                  thread (PERF_SAMPLE_ITRACE), instead of recording the whole\n"
		"                  trace: cpu-clock, task-clock, page-faults, instructions,\n"
		"                  cycles, branches, rHEX, mem:ADDR|SYMBOL[:x|r|w|rw][/LEN],\n"
		"                  SUBSYS:TRACEPOINT; read with itrace report\n"
		"  -c, --count N   -e: a sample every N events\n"
		"  -F, --freq HZ   -e: N samples a second (default: 1000 for clocks and\n"
		"                  counters; every event for the others)\n"
		"  --sample-trace BYTES  -e: trace bytes per sample (default 4096, a\n"
		"                  multiple of 8, at most 61440)\n"
		"  --pmu PMU       intel_pt (default) or intel_bts: Intel BTS branch records\n"
		"                  (not with --cyc, --no-timing, --filter, --kcore, nor -a, -C:\n"
		"                  no timestamps to split them by thread); with -e each\n"
		"                  sample holds the newest whole BTS records\n"
		"  -q, --quiet     no summary on stderr\n"
		"exit status: CMD's (killed by a signal: itrace ends by the same signal, as\n"
		"perf record does); without CMD 0; 1 recording failed, 2 usage, 126/127 CMD\n"
		"could not be run.  SIGINT, SIGTERM end the recording cleanly (CMD gets SIGTERM).\n");
}

/* ---- command --------------------------------------------------------- */

struct rstate {
	struct recorder	rec;
	struct ropts	o;
	struct perf_event_attr attr;
	struct addr_filters filters;
	char		*kfilter;	/* the filters in the kernel's syntax */
	int		*cpus;
	size_t		nr_cpus;
	struct target	*targets;
	size_t		nr_targets;
	int		*all_fds;	/* every event fd, for cleanup */
	size_t		nr_all;
	pid_t		child;		/* the command, -1: none */
	int		child_status;
	bool		child_done;
	int		go[2], ep[2];
	int		sfd;		/* signalfd */
	sigset_t	oldmask;
	int		stop_sig;	/* SIGINT/SIGTERM received */
	long		pmu_type;
	/* --snapshot-on: the breakpoint, its events and their rings */
	char		*snap_file;
	uint64_t	snap_vaddr;
	int		snap_pie;
	uint64_t	snap_addr;
	int		*bp_fds;
	struct ring	*bp_rings;
	size_t		nr_bp;
	bool		bp_hit;
	/* -e EVENT: the sampled events, writing into the buffers' streams */
	struct evspec	ev;
	union itrace_attr sattr;
	long		pt_type;	/* intel_pt or intel_bts: the PMU of the samples' trace */
	size_t		perf_pages;	/* data pages of each perf stream */
	size_t		nr_sampled;
};

static int add_fd(struct rstate *st, struct rbuf *b, int fd)
{
	int *n = realloc(st->all_fds, (st->nr_all + 1) * sizeof(*n));

	if (!n)
		return -1;
	st->all_fds = n;
	st->all_fds[st->nr_all++] = fd;
	if (!b)
		return 0;
	n = realloc(b->fds, (b->nr_fds + 1) * sizeof(*n));
	if (!n)
		return -1;
	b->fds = n;
	b->fds[b->nr_fds++] = fd;
	return 0;
}

/* A buffer for CPU cpu (-1: the per-task event of --no-inherit). */
static struct rbuf *new_buf(struct rstate *st, int cpu)
{
	struct recorder *rec = &st->rec;
	struct rbuf *n = realloc(rec->bufs, (rec->nr_bufs + 1) * sizeof(*n)), *b;

	if (!n)
		return NULL;
	rec->bufs = n;
	b = &rec->bufs[rec->nr_bufs++];
	memset(b, 0, sizeof(*b));
	b->idx = cpu < 0 ? 0 : cpu;
	b->cpu = cpu;
	b->fd = -1;
	b->tfd = -1;
	b->perf.name = "perf";
	b->trace.name = "trace";
	return b;
}

static struct rbuf *buf_of_cpu(struct rstate *st, int cpu)
{
	size_t i;

	for (i = 0; i < st->rec.nr_bufs; i++)
		if (st->rec.bufs[i].cpu == cpu)
			return &st->rec.bufs[i];
	return NULL;
}

/* Map b's perf stream and trace (the event fd is b->fd). */
static int map_buf(struct rstate *st, struct rbuf *b)
{
	struct ropts *o = &st->o;

	if (ring_map(&b->perf, b->fd, st->perf_pages, 1)) {
		fprintf(stderr, "itrace: mmap of the event's perf stream (cpu %d): %s\n", b->cpu,
			strerror(errno));
		return -1;
	}
	if (st->rec.sideband_only)
		return 0;
	b->tfd = perf_event_open(NULL, -1, -1, b->fd, PERF_FLAG_FD_ITRACE | PERF_FLAG_FD_CLOEXEC);
	if (b->tfd < 0) {
		fprintf(stderr,
			"itrace: cannot get the trace fd (perf_event_open with PERF_FLAG_FD_ITRACE): %s%s\n",
			strerror(errno), errno == EINVAL ?
			" (kernel without itrace trace fd support?)" : "");
		return -1;
	}
	if (ring_map(&b->trace, b->tfd, o->pages, !o->snapshot)) {
		fprintf(stderr, "itrace: mmap of the trace fd (cpu %d, %lu + 1 pages, %s): %s%s\n",
			b->cpu, o->pages, o->snapshot ? "read-only" : "read-write", strerror(errno),
			errno == EPERM || errno == ENOMEM ?
			" (locked memory limit, perf_event_mlock_kb? try a smaller -m)" : "");
		return -1;
	}
	return 0;
}

/*
 * One event on (pid, cpu): the first on a CPU owns that CPU's buffer and
 * maps it, the others write into it.  Filters are set on every event
 * (inherited events copy them).
 */
static int open_event(struct rstate *st, pid_t pid, int cpu)
{
	struct rbuf *b = buf_of_cpu(st, cpu);
	int fd = perf_event_open(&st->attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0 && errno == EINVAL && (st->attr.sample_type & PERF_SAMPLE_READ)) {
		/* before Linux 6.11: no PERF_SAMPLE_READ with inherit */
		fprintf(stderr,
			"itrace: warning: this kernel switches the contexts of a process's threads without a PERF_RECORD_AUX: decode gives such a thread's trace to the one before it\n");
		st->attr.sample_type &= ~PERF_SAMPLE_READ;
		fd = perf_event_open(&st->attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0) {
		report_open_error(&st->o, &st->attr, pid, cpu, errno);
		return -1;
	}
	if (st->kfilter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, st->kfilter)) {
		int e = errno;

		fprintf(stderr, "itrace: --filter: the kernel refused \"%s\": %s%s\n", st->kfilter,
			strerror(e), e == EOPNOTSUPP ?
			" (more ranges than the PMU has, or a kind it cannot do)" :
			e == ENOENT || e == EINVAL ? " (no such file, or a bad range)" : "");
		close(fd);
		return -1;
	}
	if (!b) {
		b = new_buf(st, cpu);
		if (!b) {
			close(fd);
			return -1;
		}
		b->fd = fd;
		if (add_fd(st, b, fd))
			return -1;
		return map_buf(st, b);
	}
	if (add_fd(st, b, fd))
		return -1;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, b->fd)) {
		fprintf(stderr,
			"itrace: PERF_EVENT_IOC_SET_OUTPUT (pid %d into cpu %d's buffer): %s\n",
			pid, cpu, strerror(errno));
		return -1;
	}
	return 0;
}

static void setup_attr(struct rstate *st, uint64_t config)
{
	struct perf_event_attr *a = &st->attr;
	struct ropts *o = &st->o;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = st->pmu_type;
	a->config = st->rec.sideband_only ? PERF_COUNT_SW_DUMMY : config;
	a->exclude_kernel = !o->kernel;
	a->exclude_hv = 1;
	a->disabled = 1;
	a->enable_on_exec = st->child >= 0 && !o->all_cpus && !o->cpu_list;
	a->inherit = !o->no_inherit;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->context_switch = 1;
	a->sample_id_all = 1;
	/*
	 * MMAP2 records carry the file's build-id (Linux 5.12+), so that
	 * decode can tell a file rebuilt since from the one that ran.
	 */
	a->build_id = 1;
	a->sample_type = SAMPLE_ID_TYPE;
	/*
	 * Inherited per-task events: PERF_SAMPLE_READ (the event takes no
	 * samples, so it adds nothing to any record) makes the kernel switch
	 * their contexts the slow way (ctx->nr_no_switch_fast, Linux 6.11+):
	 * without it, threads of one process whose contexts are clones swap
	 * contexts at a switch without stopping the trace, and no
	 * PERF_RECORD_AUX says where one thread's trace ends and the next's
	 * begins.  With it, each switch-out ends an output transaction.
	 */
	if (a->inherit && !o->all_cpus && !o->cpu_list)
		a->sample_type |= PERF_SAMPLE_READ;
	/*
	 * Stop mode: wake the reader (the trace fd's POLLIN) when a quarter
	 * of the buffer is full rather than the kernel's default half, as
	 * perf record does for its AUX area, so that it drains while three
	 * quarters are still free.
	 */
	if (st->rec.samples) {
		/* samples fill the perf stream: wake the reader at a quarter */
		a->watermark = 1;
		a->wakeup_watermark = st->perf_pages * sysconf(_SC_PAGESIZE) / 4;
	} else if (!o->snapshot) {
		uint64_t wm = (uint64_t)o->pages * sysconf(_SC_PAGESIZE) / 4;

		a->aux_watermark = wm > UINT32_MAX ? UINT32_MAX : wm;
	}
}

static int open_events(struct rstate *st)
{
	struct ropts *o = &st->o;
	size_t i, c;

	if (o->all_cpus || o->cpu_list) {
		for (c = 0; c < st->nr_cpus; c++)
			if (open_event(st, -1, st->cpus[c]))
				return -1;
		return 0;
	}
	if (st->child >= 0 && o->no_inherit)
		return open_event(st, st->child, -1);
	if (st->child >= 0 && add_target(&st->targets, &st->nr_targets, st->child, st->child))
		return -1;
	for (i = 0; i < st->nr_targets; i++)
		for (c = 0; c < st->nr_cpus; c++)
			if (open_event(st, st->targets[i].tid, st->cpus[c]))
				return -1;
	return 0;
}

/* ---- --snapshot-on SYMBOL ------------------------------------------- */

/*
 * SYMBOL[@FILE]: the file (FILE, else the command from PATH, else the
 * attached process's /proc/PID/exe) and the symbol's address in it.  A
 * position independent program's address is known once it is mapped.
 */
static int snap_resolve(struct rstate *st, const char *spec, bool data)
{
	const char *at = strchr(spec, '@');
	char *sym = at ? strndup(spec, at - spec) : strdup(spec), err[512];
	uint64_t size;
	int ret = -1;

	if (!sym || !*sym) {
		fprintf(stderr, "itrace: --snapshot-on '%s': SYMBOL[@FILE]\n", spec);
		goto out;
	}
	if (at) {
		st->snap_file = find_file(at + 1);
	} else if (st->o.cmd) {
		st->snap_file = find_file(st->o.cmd[0]);
	} else if (st->nr_targets) {
		char exe[64];

		snprintf(exe, sizeof(exe), "/proc/%d/exe", st->targets[0].pid);
		st->snap_file = realpath(exe, NULL);
	}
	if (!st->snap_file) {
		fprintf(stderr, "itrace: %s: cannot find the program%s%s: %s\n", spec,
			at ? " " : "", at ? at + 1 : "", strerror(errno));
		goto out;
	}
	if (data)
		ret = elf_data_symbol_vaddr(st->snap_file, sym, &st->snap_vaddr, &size,
					    &st->snap_pie, err, sizeof(err));
	else
		ret = elf_symbol_vaddr(st->snap_file, sym, &st->snap_vaddr, &size,
				       &st->snap_pie, err, sizeof(err));
	if (ret) {
		ret = -1;
		fprintf(stderr, "itrace: %s: %s\n", spec, err);
		goto out;
	}
	st->snap_addr = st->snap_vaddr;
	ret = 0;
out:
	free(sym);
	return ret;
}

/* A PIE's load address in pid: where its mapping at file offset 0 starts. */
static int snap_relocate(struct rstate *st, pid_t pid)
{
	char path[64], line[4352], name[4096];
	unsigned long long lo, hi, off;
	FILE *f;
	int found = 0;

	if (!st->snap_pie)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f) && !found)
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095[^\n]",
			   &lo, &hi, &off, name) == 4 &&
		    !off && !strcmp(name, st->snap_file)) {
			st->snap_addr = lo + st->snap_vaddr;
			found = 1;
		}
	if (f)
		fclose(f);
	if (!found)
		fprintf(stderr, "itrace: %s is not mapped in process %d\n",
			st->snap_file, pid);
	return found ? 0 : -1;
}

static int open_bp(struct rstate *st, pid_t pid, int cpu, bool on_exec)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_BREAKPOINT,
		.bp_type = HW_BREAKPOINT_X, .bp_addr = st->snap_addr, .bp_len = sizeof(long),
		.sample_period = 1, .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.wakeup_events = 1, .exclude_kernel = 1, .exclude_hv = 1,
		.inherit = !st->o.no_inherit, .disabled = on_exec, .enable_on_exec = on_exec,
	};
	size_t n = st->nr_bp;
	int fd = perf_event_open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	int *nf;
	struct ring *nr;

	if (fd < 0) {
		fprintf(stderr,
			"itrace: --snapshot-on: the breakpoint at 0x%llx (pid %d, cpu %d): %s\n",
			(unsigned long long)st->snap_addr, pid, cpu, strerror(errno));
		return -1;
	}
	nf = realloc(st->bp_fds, (n + 1) * sizeof(*nf));
	nr = nf ? realloc(st->bp_rings, (n + 1) * sizeof(*nr)) : NULL;
	if (nf)
		st->bp_fds = nf;
	if (nr)
		st->bp_rings = nr;
	if (!nf || !nr) {
		close(fd);
		return -1;
	}
	memset(&st->bp_rings[n], 0, sizeof(*nr));
	st->bp_rings[n].name = "breakpoint";
	st->bp_fds[n] = fd;
	st->nr_bp++;
	if (ring_map(&st->bp_rings[n], fd, 1, 1)) {
		fprintf(stderr, "itrace: --snapshot-on: mmap of the breakpoint's ring: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

/* The breakpoint on every thread the trace follows (the command: its CPUs). */
static int open_breakpoints(struct rstate *st, bool on_exec)
{
	size_t i, c;

	if (st->child >= 0 && st->o.no_inherit)
		return open_bp(st, st->child, -1, on_exec);
	if (st->child >= 0) {
		for (c = 0; c < st->nr_cpus; c++)
			if (open_bp(st, st->child, st->cpus[c], on_exec))
				return -1;
		return 0;
	}
	for (i = 0; i < st->nr_targets; i++)
		for (c = 0; c < st->nr_cpus; c++)
			if (open_bp(st, st->targets[i].tid, st->cpus[c], false))
				return -1;
	return 0;
}

/* A breakpoint ring has a sample: the symbol ran.  Snapshot, once. */
static int check_breakpoints(struct rstate *st)
{
	size_t i;
	bool hit = false;

	for (i = 0; i < st->nr_bp; i++) {
		struct ring *r = &st->bp_rings[i];
		uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);

		if (head != r->tail)
			hit = true;
		r->tail = head;
		__atomic_store_n(&r->pg->data_tail, head, __ATOMIC_RELEASE);
	}
	if (!hit || st->bp_hit)
		return 0;
	st->bp_hit = true;
	for (i = 0; i < st->nr_bp; i++)
		ioctl(st->bp_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (!st->o.quiet)
		fprintf(stderr, "itrace: %s reached: snapshot %u\n", st->o.snap_on,
			st->rec.nr_snaps + 1);
	return take_snapshot(&st->rec, ITRACE_SNAP_SYMBOL, true);
}

/* ---- -e EVENT: samples with trace (PERF_SAMPLE_ITRACE) ------------- */

/*
 * The sampled event: EVENT as perf names it, sampled every -c events or
 * -F times a second (perf's default for the event otherwise: a frequency
 * for clocks and counters, every event for the others), each sample with
 * the ip, tid, time, cpu, period and the newest --sample-trace bytes of
 * the thread's trace, from an intel_pt event the kernel makes for it (and
 * for each inherited copy); with --pmu intel_bts, an intel_bts event, whose
 * samples hold the newest whole BTS records.  It writes into the perf stream of its CPU's
 * buffer, whose dummy event carries the sideband.
 */
static void setup_sampled(struct rstate *st, bool on_exec)
{
	struct perf_event_attr *a = &st->sattr.a;
	struct ropts *o = &st->o;

	memset(&st->sattr, 0, sizeof(st->sattr));
	a->type = st->ev.type;
	a->config = st->ev.config;
	if (st->ev.kind == EV_BREAKPOINT) {
		a->bp_type = st->ev.bp_type;
		a->bp_addr = st->ev.sym[0] ? st->snap_addr : st->ev.bp_addr;
		a->bp_len = st->ev.bp_len;
	}
	if (o->freq) {
		a->freq = 1;
		a->sample_freq = o->freq;
	} else if (o->period) {
		a->sample_period = o->period;
	} else if (st->ev.def_freq) {
		a->freq = 1;
		a->sample_freq = st->ev.def_freq;
	} else {
		a->sample_period = 1;
	}
	a->sample_type = PERF_SAMPLE_IP | SAMPLE_ID_TYPE | PERF_SAMPLE_PERIOD;
	a->sample_id_all = 1;
	a->exclude_kernel = !o->kernel;
	a->exclude_hv = 1;
	a->inherit = !o->no_inherit;
	a->disabled = on_exec;
	a->enable_on_exec = on_exec;
	itrace_attr_set_sample(&st->sattr, st->pt_type, 0, o->sample_trace);
}

static void report_sampled_error(struct rstate *st, pid_t pid, int cpu, int err)
{
	fprintf(stderr,
		"itrace: perf_event_open(-e %s with PERF_SAMPLE_ITRACE, pid %d, cpu %d): %s\n",
		st->o.event, pid, cpu, strerror(err));
	if (err == EINVAL || err == E2BIG)
		fprintf(stderr,
			"itrace: the kernel may lack PERF_SAMPLE_ITRACE (attr size 160), or refuses this event or --sample-trace %lu\n",
			st->o.sample_trace);
	else if (err == ENOENT || err == EOPNOTSUPP)
		fprintf(stderr, "itrace: this CPU or kernel does not have the event %s\n",
			st->o.event);
	else if (err == EACCES)
		fprintf(stderr,
			"itrace: check /proc/sys/kernel/perf_event_paranoid or run as root (-k needs <= 1)\n");
	else if (err == EPERM)
		fprintf(stderr,
			"itrace: the trace buffers exceed the locked memory allowance (perf_event_mlock_kb); a smaller --sample-trace?\n");
	else if (err == ENOSPC)
		fprintf(stderr, "itrace: no free debug register for the breakpoint\n");
	else if (err == EBUSY && st->o.bts)
		fprintf(stderr,
			"itrace: the BTS hardware is taken (an intel_pt or LBR event of this CPU model excludes intel_bts)\n");
}

static int open_sampled(struct rstate *st, pid_t pid, int cpu)
{
	struct rbuf *b = buf_of_cpu(st, cpu);
	int fd = perf_event_open(&st->sattr.a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0) {
		report_sampled_error(st, pid, cpu, errno);
		return -1;
	}
	if (add_fd(st, NULL, fd))
		return -1;
	st->nr_sampled++;
	if (b && ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, b->fd)) {
		fprintf(stderr,
			"itrace: PERF_EVENT_IOC_SET_OUTPUT (-e %s into cpu %d's buffer): %s\n",
			st->o.event, cpu, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The sampled event on the command, one per CPU (or one: --no-inherit):
 * before its exec, enabled by it; or after it (a PIE's breakpoint, its
 * address known now), enabled at once.  The attr was set up before the
 * file's ATTR was written; only these fields change.
 */
static int open_sampled_all(struct rstate *st, bool on_exec)
{
	struct perf_event_attr *a = &st->sattr.a;
	size_t c;

	a->disabled = on_exec;
	a->enable_on_exec = on_exec;
	if (st->ev.kind == EV_BREAKPOINT && st->ev.sym[0])
		a->bp_addr = st->snap_addr;
	if (st->o.no_inherit)
		return open_sampled(st, st->child, -1);
	for (c = 0; c < st->nr_cpus; c++)
		if (open_sampled(st, st->child, st->cpus[c]))
			return -1;
	return 0;
}

/* -e EVENT: parse it, resolve what can be resolved before the command runs. */
static int sample_resolve(struct rstate *st)
{
	char err[512];

	if (evspec_parse(st->o.event, &st->ev, err, sizeof(err))) {
		fprintf(stderr, "itrace: %s\n", err);
		return -1;
	}
	if (st->ev.kind == EV_TRACEPOINT &&
	    evspec_tracepoint_id(st->ev.tp, &st->ev.config, err, sizeof(err))) {
		fprintf(stderr, "itrace: -e %s: %s\n", st->o.event, err);
		return -1;
	}
	if (st->ev.kind == EV_BREAKPOINT && st->ev.sym[0] &&
	    snap_resolve(st, st->ev.sym, st->ev.bp_type != HW_BREAKPOINT_X))
		return -1;
	setup_sampled(st, true);
	return 0;
}

/* The TIME section: TSC to perf time, and the clock ratios MTC needs. */
static int write_time(struct rstate *st)
{
	struct perf_event_mmap_page *pg = st->rec.bufs[0].perf.pg;
	struct itrace_time t = { 0 };
	unsigned int num = 0, den = 0;
	long v;
	FILE *f;

	if (pg->cap_user_time_zero) {
		t.time_zero = pg->time_zero;
		t.time_mult = pg->time_mult;
		t.time_shift = pg->time_shift;
		t.flags |= ITRACE_TIME_ZERO;
	}
	f = fopen(PT_SYSFS "/tsc_art_ratio", "r");
	if (!f)
		f = fopen(PT_SYSFS "/caps/tsc_art_ratio", "r");
	if (f) {
		if (fscanf(f, "%u:%u", &num, &den) == 2) {
			t.tsc_ratio_num = num;
			t.tsc_ratio_den = den;
		}
		fclose(f);
	}
	if (!read_sysfs_int(PT_SYSFS "/max_nonturbo_ratio", &v) ||
	    !read_sysfs_int(PT_SYSFS "/caps/max_nonturbo_ratio", &v))
		t.nom_freq = v;
	return itrace_write_section(st->rec.out, ITRACE_SEC_TIME, 0, &t, sizeof(t));
}

static int write_preamble(struct rstate *st, uint32_t flags)
{
	struct recorder *rec = &st->rec;
	struct itrace_file_header hdr;
	uint8_t *vdso;
	size_t vdso_size, n = 0;
	char *cl;
	int c;

	itrace_header_init(&hdr);
	hdr.page_size = sysconf(_SC_PAGESIZE);
	hdr.flags = flags;
	itrace_cpu_ident(&hdr);
	hdr.pmu_type = st->pmu_type;
	hdr.trace_pages = st->o.pages;
	hdr.config = st->attr.config;
	if (rec->samples) {
		/* the PMU and config of the samples' trace; the ATTR: the sampled event's */
		hdr.pmu_type = st->pt_type;
		hdr.trace_pages = 0;
		hdr.config = 0;
	}
	hdr.pid = st->child >= 0 ? st->child : st->nr_targets ? st->targets[0].pid : 0;
	itrace_write_header(rec->out, &hdr);
	if (rec->samples) {
		itrace_write_section(rec->out, ITRACE_SEC_ATTR, 0, &st->sattr, sizeof(st->sattr));
		itrace_write_section(rec->out, ITRACE_SEC_EVENT, 0, st->o.event,
				     strlen(st->o.event));
	} else {
		itrace_write_section(rec->out, ITRACE_SEC_ATTR, 0, &st->attr, sizeof(st->attr));
	}
	if (st->o.cmd) {
		for (c = 0; st->o.cmd[c]; c++)
			n += strlen(st->o.cmd[c]) + 1;
		cl = malloc(n);
		if (cl) {
			n = 0;
			for (c = 0; st->o.cmd[c]; c++) {
				size_t len = strlen(st->o.cmd[c]) + 1;

				memcpy(cl + n, st->o.cmd[c], len);
				n += len;
			}
			itrace_write_section(rec->out, ITRACE_SEC_CMDLINE, 0, cl, n);
			free(cl);
		}
	}
	if (!itrace_read_vdso(&vdso, &vdso_size)) {
		itrace_write_section(rec->out, ITRACE_SEC_VDSO, 0, vdso, vdso_size);
		free(vdso);
	} else {
		fprintf(stderr, "itrace: warning: cannot read [vdso]; vdso code will not decode\n");
	}
	if (write_time(st))
		return -1;
	if (st->o.all_cpus || st->o.cpu_list)
		return synth_sideband(&st->rec, NULL, 0);
	if (st->child < 0)
		return synth_sideband(&st->rec, st->targets, st->nr_targets);
	return ferror(rec->out) ? -1 : 0;
}

/* An existing FILE becomes FILE.old, as perf keeps perf.data.old. */
static int keep_old(const char *path)
{
	struct stat sb;
	char *old;
	int ret = 0;

	if (stat(path, &sb) || !S_ISREG(sb.st_mode) || !sb.st_size)
		return 0;
	if (asprintf(&old, "%s.old", path) < 0)
		return -1;
	if (rename(path, old)) {
		fprintf(stderr, "itrace: cannot keep the old %s as %s: %s\n", path, old,
			strerror(errno));
		ret = -1;
	}
	free(old);
	return ret;
}

/* Fork the command, blocked until the events are set up (or we die). */
static int fork_command(struct rstate *st)
{
	if (pipe2(st->go, O_CLOEXEC) || pipe2(st->ep, O_CLOEXEC)) {
		perror("itrace: pipe");
		return -1;
	}
	st->child = fork();
	if (st->child < 0) {
		perror("itrace: fork");
		return -1;
	}
	if (!st->child) {
		char b;
		int e;

		close(st->go[1]);
		close(st->ep[0]);
		sigprocmask(SIG_SETMASK, &st->oldmask, NULL);
		signal(SIGPIPE, SIG_DFL);
		/* wait until the parent has set up tracing (or died) */
		if (read(st->go[0], &b, 1) != 1)
			_exit(127);
		/* --snapshot-on a PIE: stop after the exec (SIGTRAP), for its address */
		if (b == 't' && ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(127);
		execvp(st->o.cmd[0], st->o.cmd);
		e = errno;
		if (write(st->ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(st->go[0]);
	close(st->ep[1]);
	st->go[0] = -1;
	st->ep[1] = -1;
	return 0;
}

/* Release the command; 0, or the (positive) errno of its exec. */
static int start_command(struct rstate *st)
{
	int child_err = 0;

	if (write(st->go[1], st->snap_pie ? "t" : "x", 1) != 1) {
		child_err = errno ? errno : EPIPE;
		perror("itrace: releasing the command");
		return child_err;
	}
	close(st->go[1]);
	st->go[1] = -1;
	if (read(st->ep[0], &child_err, sizeof(child_err)) != sizeof(child_err))
		child_err = 0;
	close(st->ep[0]);
	st->ep[0] = -1;
	return child_err;
}

static void reap_child(struct rstate *st, int flags)
{
	int status;

	if (st->child < 0 || st->child_done)
		return;
	if (waitpid(st->child, &status, flags) == st->child &&
	    (WIFEXITED(status) || WIFSIGNALED(status))) {
		st->child_status = status;
		st->child_done = true;
	}
}

/* SIGTERM to the command, as perf record does when it ends first; SIGKILL after a while. */
static void end_child(struct rstate *st)
{
	int waited = 0;

	if (st->child < 0 || st->child_done)
		return;
	kill(st->child, SIGTERM);
	while (!st->child_done && waited < TERM_GRACE_MS) {
		reap_child(st, WNOHANG);
		if (st->child_done)
			break;
		drain_all(&st->rec);
		usleep(10000);
		waited += 10;
	}
	if (!st->child_done) {
		fprintf(stderr, "itrace: %s did not end %d s after SIGTERM: SIGKILL\n",
			st->o.cmd[0], TERM_GRACE_MS / 1000);
		kill(st->child, SIGKILL);
		reap_child(st, 0);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Read pending signals; returns -1 on a write error (snapshot). */
static int handle_signals(struct rstate *st)
{
	struct signalfd_siginfo si;

	while (read(st->sfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			reap_child(st, WNOHANG);
			break;
		case SIGINT:
		case SIGTERM:
		case SIGHUP:
			if (!st->stop_sig)
				st->stop_sig = si.ssi_signo;
			break;
		case SIGUSR2:
			if (st->rec.snapshot && !st->rec.sideband_only &&
			    take_snapshot(&st->rec, ITRACE_SNAP_SIGNAL, true))
				return -1;
			if (st->rec.snapshot && !st->o.quiet)
				fprintf(stderr, "itrace: snapshot %u\n", st->rec.nr_snaps);
			break;
		}
	}
	return 0;
}

/*
 * The recording loop: until the command exits (with a command), every
 * event fd hung up (-p, -t: the targets exited), a signal or --duration.
 */
static int record_loop(struct rstate *st)
{
	struct recorder *rec = &st->rec;
	size_t nfd = 1 + 2 * st->rec.nr_bufs + st->nr_all + st->nr_bp, i, n;
	struct pollfd *p = calloc(nfd, sizeof(*p));
	double deadline = st->o.duration > 0 ? now_s() + st->o.duration : 0;
	int ready = 1, ret = 0;

	if (!p)
		return -1;
	p[0].fd = st->sfd;
	p[0].events = POLLIN;
	/* the buffers' owners (readable) first, then every event (hang-up only) */
	n = 1;
	for (i = 0; i < rec->nr_bufs; i++) {
		p[n].fd = rec->bufs[i].fd;
		p[n++].events = POLLIN;
		p[n].fd = rec->snapshot ? -1 : rec->bufs[i].tfd;
		p[n++].events = POLLIN;
	}
	for (i = 0; i < st->nr_all; i++) {
		p[n].fd = st->all_fds[i];
		p[n++].events = 0;
	}
	for (i = 0; i < st->nr_bp; i++) {
		p[n].fd = st->bp_fds[i];
		p[n++].events = POLLIN;
	}
	nfd = n;
	for (;;) {
		int ms = STALL_MS, live = 0, r;

		if (handle_signals(st) || (st->nr_bp && check_breakpoints(st))) {
			ret = -1;
			break;
		}
		if (st->stop_sig || (st->child >= 0 && st->child_done))
			break;
		if (deadline) {
			double left = deadline - now_s();

			if (left <= 0)
				break;
			if (left * 1000 < ms)
				ms = left * 1000 + 1;
		}
		if (ready) {
			if (drain_all(rec)) {
				ret = -1;
				break;
			}
		} else {
			for (i = 0; i < rec->nr_bufs; i++)
				if (restart_stalled(rec, &rec->bufs[i])) {
					ret = -1;
					break;
				}
			if (ret)
				break;
		}
		r = poll(p, nfd, ms);
		ready = r > 0;
		for (i = 1; i < nfd; i++) {
			if (p[i].revents & (POLLHUP | POLLERR))
				p[i].fd = -1;	/* gone: do not spin on it */
			if (p[i].fd >= 0 && p[i].events == 0)
				live++;
			/* the breakpoint fired: the check above sees it; no spin */
			if (i >= n - st->nr_bp && (p[i].revents & POLLIN) && st->bp_hit)
				p[i].fd = -1;
		}
		/* -p, -t: every target has exited */
		if (st->child < 0 && !st->o.all_cpus && !st->o.cpu_list && !live)
			break;
	}
	free(p);
	return ret;
}

static void print_summary(struct rstate *st)
{
	struct recorder *rec = &st->rec;
	unsigned long il = 0, tr = 0, en = 0;
	uint64_t lb = 0;
	size_t i, nr = 0;

	for (i = 0; i < rec->nr_bufs; i++) {
		struct rbuf *b = &rec->bufs[i];

		il += b->nr_itrace_lost;
		tr += b->nr_aux_truncated;
		en += b->nr_enables;
		lb += b->lost_bytes;
		nr += b->nr_itrace_lost || b->nr_aux_truncated;
	}
	/* per CPU where it was lost, then the sum (the line scripts read) */
	for (i = 0; nr && rec->nr_bufs > 1 && i < rec->nr_bufs; i++) {
		struct rbuf *b = &rec->bufs[i];

		if (b->nr_itrace_lost || b->nr_aux_truncated)
			fprintf(stderr,
				"itrace: warning: trace lost on cpu %d: %lu PERF_RECORD_ITRACE_LOST (%llu bytes counted), %lu PERF_RECORD_AUX truncated, %lu restarts\n",
				b->cpu, b->nr_itrace_lost, (unsigned long long)b->lost_bytes,
				b->nr_aux_truncated, b->nr_enables);
	}
	if (rec->nr_lost)
		fprintf(stderr,
			"itrace: warning: trace lost: %lu PERF_RECORD_ITRACE_LOST (%llu bytes counted), %lu PERF_RECORD_AUX truncated, %lu restarts; try a larger -m\n",
			il, (unsigned long long)lb, tr, en);
	if (st->o.quiet)
		return;
	if (rec->samples) {
		fprintf(stderr,
			"itrace: recorded %lu samples of %s (up to %lu bytes of trace each) from %zu buffer%s to %s\n",
			rec->nr_samples, st->o.event, st->o.sample_trace, rec->nr_bufs,
			rec->nr_bufs == 1 ? "" : "s", rec->path);
		if (rec->nr_lost_records)
			fprintf(stderr,
				"itrace: warning: the kernel lost %llu records (samples or sideband): a larger -m?\n",
				(unsigned long long)rec->nr_lost_records);
		if (!rec->nr_samples)
			fprintf(stderr, "itrace: warning: no samples\n");
		return;
	}
	fprintf(stderr, "itrace: recorded %llu bytes of trace from %zu buffer%s%s to %s",
		(unsigned long long)rec->trace_bytes, rec->nr_bufs, rec->nr_bufs == 1 ? "" : "s",
		rec->nr_bufs && rec->bufs[0].cpu >= 0 ? " (one per CPU)" : "", rec->path);
	if (rec->snapshot)
		fprintf(stderr, ", %u snapshot%s", rec->nr_snaps, rec->nr_snaps == 1 ? "" : "s");
	fputc('\n', stderr);
	if (!rec->trace_bytes && !rec->sideband_only)
		fprintf(stderr, "itrace: warning: the trace is empty\n");
}

static int parse_record_opts(int argc, char **argv, struct ropts *o)
{
	enum { O_NO_INHERIT = 256, O_FILTER, O_DURATION, O_NO_TIMING, O_CYC, O_KCORE,
	       O_SNAP_ON, O_SAMPLE_TRACE, O_PMU };
	static const struct option opts[] = {
		{ "output",	required_argument, NULL, 'o' },
		{ "pages",	required_argument, NULL, 'm' },
		{ "mmap-pages",	required_argument, NULL, 'm' },
		{ "snapshot",	no_argument,	   NULL, 's' },
		{ "kernel",	no_argument,	   NULL, 'k' },
		{ "no-inherit",	no_argument,	   NULL, O_NO_INHERIT },
		{ "pid",	required_argument, NULL, 'p' },
		{ "tid",	required_argument, NULL, 't' },
		{ "all-cpus",	no_argument,	   NULL, 'a' },
		{ "cpu",	required_argument, NULL, 'C' },
		{ "filter",	required_argument, NULL, O_FILTER },
		{ "duration",	required_argument, NULL, O_DURATION },
		{ "no-timing",	no_argument,	   NULL, O_NO_TIMING },
		{ "cyc",	no_argument,	   NULL, O_CYC },
		{ "kcore",	no_argument,	   NULL, O_KCORE },
		{ "snapshot-on", required_argument, NULL, O_SNAP_ON },
		{ "event",	required_argument, NULL, 'e' },
		{ "count",	required_argument, NULL, 'c' },
		{ "freq",	required_argument, NULL, 'F' },
		{ "sample-trace", required_argument, NULL, O_SAMPLE_TRACE },
		{ "quiet",	no_argument,	   NULL, 'q' },
		{ "pmu",	required_argument, NULL, O_PMU },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->path = "itrace.data";
	o->pages = 1024;
	o->timing = 1;
	o->sample_trace = 4096;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:m:kp:t:aC:e:c:F:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->path = optarg;
			break;
		case 'm':
			o->pages = strtoul(optarg, &end, 0);
			if (*end || !o->pages || (o->pages & (o->pages - 1)) ||
			    o->pages > (1UL << 24)) {
				fprintf(stderr, "itrace: -m %s: not a power of two (pages)\n",
					optarg);
				return EXIT_USAGE;
			}
			o->pages_set = 1;
			break;
		case 'e':
			o->event = optarg;
			break;
		case 'c':
		case 'F': {
			unsigned long long v = strtoull(optarg, &end, 0);

			if (*end || !v || *optarg == '-') {
				fprintf(stderr, "itrace: -%c %s: a positive number\n", c, optarg);
				return EXIT_USAGE;
			}
			if (c == 'c')
				o->period = v;
			else
				o->freq = v;
			break;
		}
		case O_SAMPLE_TRACE:
			o->sample_trace = strtoul(optarg, &end, 0);
			if (*end || *optarg == '-' || !o->sample_trace || o->sample_trace % 8 ||
			    o->sample_trace > ITRACE_SAMPLE_MAX) {
				fprintf(stderr,
					"itrace: --sample-trace %s: bytes, a multiple of 8 from 8 to %d\n",
					optarg, ITRACE_SAMPLE_MAX);
				return EXIT_USAGE;
			}
			break;
		case 's':
			o->snapshot = 1;
			break;
		case 'k':
			o->kernel = 1;
			break;
		case O_NO_INHERIT:
			o->no_inherit = 1;
			break;
		case 'p':
			o->pids = optarg;
			break;
		case 't':
			o->tids = optarg;
			break;
		case 'a':
			o->all_cpus = 1;
			break;
		case 'C':
			o->cpu_list = optarg;
			break;
		case O_FILTER:
			o->filter = optarg;
			break;
		case O_DURATION:
			o->duration = strtod(optarg, &end);
			if (*end || !(o->duration > 0) || o->duration > 1e7) {
				fprintf(stderr, "itrace: --duration %s: not a number of seconds\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case O_NO_TIMING:
			o->timing = 0;
			break;
		case O_CYC:
			o->cyc = 1;
			break;
		case O_KCORE:
			o->kcore = 1;
			break;
		case O_SNAP_ON:
			o->snap_on = optarg;
			o->snapshot = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case O_PMU:
			if (strcmp(optarg, "intel_pt") && strcmp(optarg, "intel_bts")) {
				fprintf(stderr,
					"itrace: --pmu %s: intel_pt or intel_bts\n", optarg);
				return EXIT_USAGE;
			}
			o->bts = !strcmp(optarg, "intel_bts");
			break;
		case 'h':
			usage_record(stdout);
			return -1;
		default:
			usage_record(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		o->cmd = argv + optind;
	if (o->cyc && !o->timing) {
		fprintf(stderr, "itrace: --cyc and --no-timing exclude each other\n");
		return EXIT_USAGE;
	}
	if (o->bts && (o->cyc || !o->timing || o->filter || o->kcore)) {
		fprintf(stderr,
			"itrace: --pmu intel_bts: %s is for Intel PT (BTS records have no timing packets or address filters, and its decode never reads kernel code)\n",
			o->cyc ? "--cyc" : !o->timing ? "--no-timing" : o->filter ? "--filter" :
			"--kcore");
		return EXIT_USAGE;
	}
	if ((o->pids || o->tids) && (o->cmd || o->all_cpus || o->cpu_list)) {
		fprintf(stderr,
			"itrace: -p/-t attach to running threads: no command, -a or -C with them\n");
		return EXIT_USAGE;
	}
	if (o->pids && o->tids) {
		fprintf(stderr, "itrace: -p and -t: one or the other\n");
		return EXIT_USAGE;
	}
	if (!o->cmd && !o->pids && !o->tids && !o->all_cpus && !o->cpu_list) {
		usage_record(stderr);
		return EXIT_USAGE;
	}
	if (o->snap_on && (o->all_cpus || o->cpu_list)) {
		fprintf(stderr,
			"itrace: --snapshot-on: a symbol of a program, not of every process (-a, -C)\n");
		return EXIT_USAGE;
	}
	if ((o->period || o->freq) && !o->event) {
		fprintf(stderr, "itrace: -c/-F: the period of -e EVENT's samples\n");
		return EXIT_USAGE;
	}
	if (o->period && o->freq) {
		fprintf(stderr, "itrace: -c and -F: one or the other\n");
		return EXIT_USAGE;
	}
	if (o->event && (!o->cmd || o->pids || o->tids || o->all_cpus || o->cpu_list)) {
		fprintf(stderr,
			"itrace: -e: samples of a command (-- CMD); -p, -t, -a, -C are not supported with it yet\n");
		return EXIT_USAGE;
	}
	/*
	 * A BTS record is { from, to, flags }: no time, no thread.  Per-task
	 * events end an output transaction at each switch-out, so their
	 * PERF_RECORD_AUX records say which bytes each thread wrote; a
	 * CPU-wide event runs through context switches, and nothing could
	 * split its records by thread (perf refuses it too: "intel_bts does
	 * not support per-cpu recording").  -e is refused above.
	 */
	if (o->bts && !o->event && (o->all_cpus || o->cpu_list)) {
		fprintf(stderr,
			"itrace: --pmu intel_bts: %s: BTS records have no timestamps, so a CPU-wide trace cannot be split by thread; record a command (-- CMD) or threads (-p, -t) instead\n",
			o->all_cpus ? "-a" : "-C");
		return EXIT_USAGE;
	}
	if (o->event && (o->snapshot || o->filter || o->kcore || o->cyc)) {
		fprintf(stderr,
			"itrace: -e: --snapshot, --snapshot-on, --filter, --kcore, --cyc are for the whole trace, not samples\n");
		return EXIT_USAGE;
	}
	if (o->no_inherit && (o->all_cpus || o->cpu_list)) {
		fprintf(stderr, "itrace: --no-inherit: CPU-wide events (-a, -C) inherit nothing\n");
		return EXIT_USAGE;
	}
	return 0;
}

/* Exit as the command did: its status, or the signal that killed it (perf's rule). */
static int exit_like(int status, int sig)
{
	struct rlimit no_core = { 0, 0 };
	sigset_t set;

	if (!sig && WIFSIGNALED(status))
		sig = WTERMSIG(status);
	if (!sig)
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	fflush(stdout);
	fflush(stderr);
	/* the command's crash, not ours: no core file of itrace */
	setrlimit(RLIMIT_CORE, &no_core);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	return 128 + sig;
}

static void cleanup(struct rstate *st)
{
	struct recorder *rec = &st->rec;
	size_t i;

	for (i = 0; i < rec->nr_bufs; i++) {
		struct rbuf *b = &rec->bufs[i];

		if (b->trace.base)
			munmap(b->trace.base, b->trace.map_size);
		if (b->perf.base)
			munmap(b->perf.base, b->perf.map_size);
		if (b->tfd >= 0)
			close(b->tfd);
		free(b->fds);
	}
	for (i = 0; i < st->nr_all; i++)
		close(st->all_fds[i]);
	for (i = 0; i < 2; i++) {
		if (st->go[i] >= 0)
			close(st->go[i]);
		if (st->ep[i] >= 0)
			close(st->ep[i]);
	}
	if (st->sfd >= 0)
		close(st->sfd);
	free(rec->bufs);
	free(st->all_fds);
	free(st->cpus);
	free(st->targets);
	free(st->kfilter);
	addr_filters_free(&st->filters);
	for (i = 0; i < st->nr_bp; i++) {
		if (st->bp_rings[i].base)
			munmap(st->bp_rings[i].base, st->bp_rings[i].map_size);
		close(st->bp_fds[i]);
	}
	free(st->bp_fds);
	free(st->bp_rings);
	free(st->snap_file);
	sigprocmask(SIG_SETMASK, &st->oldmask, NULL);
}

int cmd_record(int argc, char **argv)
{
	struct rstate *st = calloc(1, sizeof(*st));
	struct recorder *rec;
	struct ropts *o;
	char err[512], what[128];
	uint64_t config = 0;
	uint32_t flags = 0;
	sigset_t mask;
	int ret, sig = 0, status = 0, exec_err;
	long nr_ranges;

	if (!st) {
		fprintf(stderr, "itrace: out of memory\n");
		return 1;
	}
	rec = &st->rec;
	o = &st->o;
	st->child = -1;
	st->sfd = -1;
	st->go[0] = -1;
	st->go[1] = -1;
	st->ep[0] = -1;
	st->ep[1] = -1;
	sigprocmask(SIG_SETMASK, NULL, &st->oldmask);
	ret = parse_record_opts(argc, argv, o);
	if (ret) {
		free(st);
		return ret < 0 ? 0 : ret;
	}
	ret = 1;
	rec->path = o->path;
	rec->snapshot = o->snapshot;
	rec->exec_seen = 1;

	/*
	 * Test hook for hosts without Intel PT: record only the sideband of
	 * a software dummy event, to check the perf stream side of record.
	 */
	rec->sideband_only = !!getenv("ITRACE_RECORD_SIDEBAND_ONLY");
	if (rec->sideband_only) {
		st->pmu_type = PERF_TYPE_SOFTWARE;
		snprintf(what, sizeof(what), "sideband only");
	} else if (o->bts) {
		if (read_sysfs_int(BTS_SYSFS "/type", &st->pmu_type)) {
			fprintf(stderr,
				"itrace: no intel_bts PMU (%s/type: %s): this CPU or kernel has no Intel BTS\n",
				BTS_SYSFS, strerror(errno));
			goto out;
		}
		if (o->event) {
			/* samples with BTS records: as for intel_pt below */
			st->pt_type = st->pmu_type;
			st->pmu_type = PERF_TYPE_SOFTWARE;
			rec->sideband_only = 1;
			rec->samples = 1;
			snprintf(what, sizeof(what), "samples of %s with %lu bytes of BTS records",
				 o->event, o->sample_trace);
		} else {
			snprintf(what, sizeof(what), "BTS branch records");
		}
	} else if (access(PT_SYSFS, F_OK)) {
		fprintf(stderr,
			"itrace: no intel_pt PMU (%s missing): this CPU or kernel has no Intel PT\n",
			PT_SYSFS);
		goto out;
	} else if (read_sysfs_int(PT_SYSFS "/type", &st->pmu_type)) {
		fprintf(stderr, "itrace: cannot read %s/type: %s\n", PT_SYSFS, strerror(errno));
		goto out;
	} else if (o->event) {
		/* samples: a dummy event per buffer carries the sideband */
		st->pt_type = st->pmu_type;
		st->pmu_type = PERF_TYPE_SOFTWARE;
		rec->sideband_only = 1;
		rec->samples = 1;
		snprintf(what, sizeof(what), "samples of %s with %lu bytes of trace", o->event,
			 o->sample_trace);
	} else {
		config = pt_config(o, what, sizeof(what));
	}
	st->perf_pages = !rec->samples ? PERF_PAGES : o->pages_set ? o->pages : 256;
	if (o->event && sample_resolve(st)) {
		ret = EXIT_USAGE;
		goto out;
	}

	/* everything that can be checked before anything runs */
	if (o->cpu_list) {
		int *online;
		size_t nr_online, i, j;

		if (parse_cpu_list(o->cpu_list, &st->cpus, &st->nr_cpus)) {
			fprintf(stderr, "itrace: -C %s: not a CPU list (\"0,2-3\")\n", o->cpu_list);
			ret = EXIT_USAGE;
			goto out;
		}
		if (!online_cpus(&online, &nr_online)) {
			for (i = 0; i < st->nr_cpus; i++) {
				for (j = 0; j < nr_online && online[j] != st->cpus[i]; j++)
					;
				if (j == nr_online) {
					fprintf(stderr, "itrace: -C %s: CPU %d is not online\n",
						o->cpu_list, st->cpus[i]);
					free(online);
					ret = EXIT_USAGE;
					goto out;
				}
			}
			free(online);
		}
	} else if (online_cpus(&st->cpus, &st->nr_cpus)) {
		fprintf(stderr, "itrace: cannot read the online CPUs\n");
		goto out;
	}
	if (o->filter) {
		if (addr_filters_parse(o->filter, &st->filters, err, sizeof(err))) {
			fprintf(stderr, "itrace: %s\n", err);
			ret = EXIT_USAGE;
			goto out;
		}
		nr_ranges = -1;
		if (!rec->sideband_only &&
		    read_sysfs_int(PT_SYSFS "/nr_addr_filters", &nr_ranges) == 0 &&
		    (size_t)nr_ranges < st->filters.nr) {
			fprintf(stderr,
				"itrace: --filter: %zu ranges, but this intel_pt has %ld (nr_addr_filters)\n",
				st->filters.nr, nr_ranges);
			ret = EXIT_USAGE;
			goto out;
		}
		st->kfilter = addr_filters_kernel(&st->filters);
		if (!st->kfilter) {
			fprintf(stderr, "itrace: out of memory\n");
			goto out;
		}
		if (rec->sideband_only) {
			free(st->kfilter);	/* a dummy event takes no filter */
			st->kfilter = NULL;
		}
	}
	if ((o->pids && list_targets(o->pids, false, &st->targets, &st->nr_targets)) ||
	    (o->tids && list_targets(o->tids, true, &st->targets, &st->nr_targets))) {
		ret = EXIT_USAGE;
		goto out;
	}

	if (o->snap_on && snap_resolve(st, o->snap_on, false)) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (o->snap_on && st->nr_targets && snap_relocate(st, st->targets[0].pid)) {
		ret = EXIT_USAGE;
		goto out;
	}

	/* signals arrive through a signalfd; the command gets them back */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	st->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (st->sfd < 0) {
		perror("itrace: signalfd");
		goto out;
	}
	signal(SIGPIPE, SIG_IGN);

	if (o->cmd && fork_command(st))
		goto out;
	setup_attr(st, config);
	if (open_events(st))
		goto kill_child;
	/* a position independent command's breakpoint waits for its exec */
	if (rec->samples && !st->snap_pie && open_sampled_all(st, st->child >= 0))
		goto kill_child;
	/* a position independent command's breakpoint waits for its exec */
	if (o->snap_on && !st->snap_pie && open_breakpoints(st, st->child >= 0))
		goto kill_child;
	if (st->child >= 0 && !o->all_cpus && !o->cpu_list)
		rec->exec_seen = 0;	/* enable_on_exec starts the trace */

	if (keep_old(rec->path))
		goto kill_child;
	/* the kernel text as it is with the events open (static keys) */
	if (o->kcore) {
		char *dir;

		if (asprintf(&dir, "%s.kcore", rec->path) < 0)
			goto kill_child;
		if (kcore_copy(dir, err, sizeof(err))) {
			fprintf(stderr, "itrace: --kcore: %s\n", err);
			free(dir);
			goto kill_child;
		}
		free(dir);
	}
	rec->out = fopen(rec->path, "wb");
	if (!rec->out) {
		fprintf(stderr, "itrace: %s: %s\n", rec->path, strerror(errno));
		goto kill_child;
	}
	if (o->snapshot)
		flags |= ITRACE_FLAG_SNAPSHOT;
	if (o->bts)
		flags |= ITRACE_FLAG_BTS;
	if (rec->samples)
		flags |= ITRACE_FLAG_SAMPLES;
	if (rec->nr_bufs && rec->bufs[0].cpu >= 0)
		flags |= ITRACE_FLAG_PER_CPU;
	if (o->all_cpus || o->cpu_list)
		flags |= ITRACE_FLAG_CPU_WIDE;
	if (write_preamble(st, flags) || ferror(rec->out)) {
		fprintf(stderr, "itrace: write error on %s\n", rec->path);
		goto kill_child;
	}
	if (!o->quiet)
		fprintf(stderr, "itrace: tracing %s%s on %zu CPU%s (%s)%s%s\n",
			o->kernel ? "user and kernel mode" : "user mode",
			o->all_cpus || o->cpu_list ? ", every process" :
			o->no_inherit ? ", first thread only" : ", threads and children",
			st->nr_cpus, st->nr_cpus == 1 ? "" : "s", what,
			st->kfilter ? ", filter " : "", st->kfilter ? st->kfilter : "");

	/* go: the command runs (enable_on_exec), or the events are enabled */
	if (st->child < 0 || o->all_cpus || o->cpu_list) {
		size_t i;

		for (i = 0; i < st->nr_all; i++)
			ioctl(st->all_fds[i], PERF_EVENT_IOC_ENABLE, 0);
	}
	if (st->child >= 0) {
		exec_err = start_command(st);
		if (exec_err) {
			fprintf(stderr, "itrace: cannot execute %s: %s\n", o->cmd[0],
				strerror(exec_err));
			reap_child(st, 0);
			status = (exec_err == ENOENT ? 127 : 126) << 8;
			st->child_status = status;
		} else if (st->snap_pie) {
			/* stopped by ptrace after its exec: the address, then go */
			int ok = waitpid(st->child, &status, 0) == st->child &&
				 WIFSTOPPED(status) &&
				 !snap_relocate(st, st->child) &&
				 !(rec->samples ? open_sampled_all(st, false) :
				   open_breakpoints(st, false));

			if (ptrace(PTRACE_DETACH, st->child, NULL, NULL) || !ok) {
				if (ok)
					perror("itrace: ptrace(PTRACE_DETACH)");
				goto kill_child;
			}
		}
	}

	if (!st->child_done && record_loop(st))
		goto werr;
	/* the command ends first (perf's order): SIGTERM if it still runs */
	end_child(st);
	if (st->child < 0 || o->all_cpus || o->cpu_list) {
		size_t i;

		for (i = 0; i < st->nr_all; i++)
			ioctl(st->all_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	}
	/* the events were scheduled out for the last time */
	if (drain_all(rec) ||
	    (o->snapshot && !rec->sideband_only && take_snapshot(rec, ITRACE_SNAP_EXIT, false)))
		goto werr;
	itrace_write_section(rec->out, ITRACE_SEC_END, 0, NULL, 0);
	if (fflush(rec->out) || ferror(rec->out))
		goto werr;
	if (fclose(rec->out)) {
		rec->out = NULL;
		goto werr;
	}
	rec->out = NULL;

	if (st->child >= 0 && WIFSIGNALED(st->child_status) && !o->quiet)
		fprintf(stderr, "itrace: %s killed by signal %d (%s)\n", o->cmd[0],
			WTERMSIG(st->child_status), strsignal(WTERMSIG(st->child_status)));
	if (st->stop_sig && !o->quiet)
		fprintf(stderr, "itrace: recording ended by signal %d (%s)\n", st->stop_sig,
			strsignal(st->stop_sig));
	print_summary(st);
	status = st->child >= 0 ? st->child_status : 0;
	sig = st->child >= 0 ? 0 : st->stop_sig;
	cleanup(st);
	free(st);
	return exit_like(status, sig);

werr:
	fprintf(stderr, "itrace: write error on %s: %s\n", rec->path, strerror(errno));
kill_child:
	if (st->child > 0 && !st->child_done) {
		kill(st->child, SIGKILL);
		reap_child(st, 0);
	}
out:
	if (rec->out)
		fclose(rec->out);
	cleanup(st);
	free(st);
	return ret;
}
