// SPDX-License-Identifier: GPL-2.0
/*
 * itrace record: trace a command in user mode with Intel PT through the
 * itrace trace fd and save trace + sideband into one itrace.data file.
 *
 * Sequence: fork the child, which blocks on a pipe; open the intel_pt event
 * on it (disabled, enable_on_exec), map its perf stream, derive and map the
 * trace fd; then let the child exec.  While it runs, both rings are drained
 * when poll() says they are ready, and after it exits a last time.
 */
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itrace.h"
#include "itrace-file.h"
#include "perf-event.h"
#include "record.h"

#ifndef PERF_FLAG_FD_ITRACE
#define PERF_FLAG_FD_ITRACE	BIT(4)
#endif

#define PT_SYSFS	"/sys/bus/event_source/devices/intel_pt"
#define PERF_PAGES	64	/* sideband ring: 64 data pages */
/*
 * poll() timeout while CMD runs.  The drains come from the kernel's
 * wake-ups (the watermark, a stop, the sideband ring half full, POLLHUP at
 * exit), not from this timer: draining on a timer copies trace below the
 * watermark while CMD runs, and the reader then takes the CPU from the
 * traced task (with a 20 ms timer that drained, the workload of
 * `make bench`'s tfd step ran 2.2x as long as under perf record when the
 * buffer held the whole trace).  A timeout only checks for a stalled trace,
 * restart_stalled().
 */
#define STALL_MS	100

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

/* format/branch reads "config:13": return the bit, or 13 if unreadable. */
static int pt_format_bit(const char *name, int dflt)
{
	char path[256], buf[64];
	FILE *f;
	int bit;

	snprintf(path, sizeof(path), PT_SYSFS "/format/%s", name);
	f = fopen(path, "r");
	if (!f)
		return dflt;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "config:%d", &bit) != 1 ||
	    bit < 0 || bit > 63)
		bit = dflt;
	fclose(f);
	return bit;
}

/*
 * BranchEn ("branch", config:13).  The driver takes BranchEn only together
 * with "pt" (config:0, RTIT_CTL_PASSTHROUGH: the user's bits are used as
 * they are, as perf's default "pt,branch" does); kernels without "pt" in
 * the format directory take BranchEn alone.
 */
static uint64_t pt_config(void)
{
	uint64_t config = 1ULL << pt_format_bit("branch", 13);
	int pt = pt_format_bit("pt", -1);

	if (pt >= 0)
		config |= 1ULL << pt;
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
void scan_perf(struct recorder *rec, const uint8_t *p, size_t len)
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
		case PERF_RECORD_LOST:
			fprintf(stderr,
				"itrace: warning: the kernel lost sideband records (perf stream full)\n");
			break;
		case PERF_RECORD_ITRACE_LOST:
			/* size: bytes dropped, 0 = unknown */
			rec->lost = 1;
			rec->nr_lost++;
			rec->nr_itrace_lost++;
			rec->lost_bytes += ev.aux.size;
			break;
		case PERF_RECORD_AUX:
			if (ev.aux.flags & PERF_AUX_FLAG_TRUNCATED) {
				rec->lost = 1;
				rec->nr_lost++;
				rec->nr_aux_truncated++;
			}
			break;
		}
	}
}

/* Copy [tail, head) of a ring to the file, then release it to the kernel. */
int ring_drain(struct recorder *rec, struct ring *r, uint32_t type)
{
	/* acquire: the data we copy below is at least as new as data_head */
	uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t len = head - r->tail, start, first;
	uint8_t *lin;

	if (!len)
		return 0;
	if (len > r->size) {
		/* cannot happen with a writable mapping: the kernel stops */
		fprintf(stderr, "itrace: %s ring overrun (head %llu tail %llu size %llu)\n",
			r->name, (unsigned long long)head,
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
		scan_perf(rec, lin, len);
		if (itrace_write_section(rec->out, type, r->tail, lin, len)) {
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
			if (itrace_write_section2(rec->out, type, r->tail, r->data + start,
						  first, r->data, n - first))
				return -1;
			rec->trace_bytes += n;
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

static int drain_all(struct recorder *rec)
{
	uint64_t full;

	if (ring_drain(rec, &rec->perf, ITRACE_SEC_PERF))
		return -1;
	if (rec->snapshot || rec->sideband_only)
		return 0;
	full = __atomic_load_n(&rec->trace.pg->data_head, __ATOMIC_ACQUIRE) - rec->trace.tail;
	if (ring_drain(rec, &rec->trace, ITRACE_SEC_TRACE))
		return -1;
	/*
	 * Stop mode: trace stopped when the buffer filled and resumes only
	 * after data_tail moved and the event is enabled again.
	 */
	if ((rec->lost || full >= rec->trace.size) && rec->exec_seen) {
		ioctl(rec->fd, PERF_EVENT_IOC_ENABLE, 0);
		rec->nr_enables++;
		rec->lost = 0;
	}
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
int restart_stalled(struct recorder *rec)
{
	uint64_t head;

	if (rec->tfd < 0 || rec->snapshot || rec->sideband_only || !rec->exec_seen)
		return 0;
	head = __atomic_load_n(&rec->trace.pg->data_head, __ATOMIC_ACQUIRE);
	if (head != rec->stall_head) {
		rec->stall_head = head;
		return 0;
	}
	if (drain_all(rec))
		return -1;
	ioctl(rec->fd, PERF_EVENT_IOC_ENABLE, 0);
	rec->nr_stall_enables++;
	return 0;
}

/*
 * Snapshot: the read-only buffer holds the newest data_size bytes, the
 * oldest at data_head % data_size.  The whole buffer is saved from there
 * even when data_head < data_size: a kernel that reports data_head as an
 * offset inside the buffer (as mainline's AUX overwrite mode does) may have
 * wrapped, and bytes never written are zero, which is PT's PAD packet.
 */
int drain_snapshot(struct recorder *rec)
{
	struct ring *r = &rec->trace;
	uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t start = head % r->size;

	if (itrace_write_section2(rec->out, ITRACE_SEC_TRACE,
				  head >= r->size ? head - r->size : 0,
				  r->data + start, r->size - start, r->data, start))
		return -1;
	rec->trace_bytes += head < r->size ? head : r->size;
	return 0;
}

/*
 * Sleep until a ring has something to read or ms milliseconds passed: the
 * trace fd is readable in stop mode at the watermark (a quarter of the
 * buffer, cmd_record()) and when the trace stopped on a full buffer, the
 * event fd at the perf stream's wake-ups (half its ring).  Trace below the
 * watermark wakes nobody: it is read at the next wake-up or after CMD
 * exits.  Returns 1 if a ring is readable, 0 on the timeout; sets *hup
 * once the traced task has exited (POLLHUP), so that the caller waits for
 * it instead of polling again at once.
 */
static int wait_ready(struct recorder *rec, int ms, int *hup)
{
	struct pollfd p[2] = {
		{ .fd = rec->fd, .events = POLLIN },
		{ .fd = rec->tfd, .events = POLLIN },
	};
	int n = rec->tfd >= 0 && !rec->snapshot ? 2 : 1, i;

	if (poll(p, n, ms) <= 0)
		return 0;
	for (i = 0; i < n; i++)
		if (p[i].revents & POLLHUP)
			*hup = 1;
	return 1;
}

static int write_out(struct recorder *rec)
{
	if (ferror(rec->out)) {
		fprintf(stderr, "itrace: write error on %s\n", rec->path);
		return -1;
	}
	return 0;
}

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

static void usage_record(FILE *f)
{
	fprintf(f,
		"usage: itrace record [-o FILE] [-m PAGES] [--snapshot] [-k] -- CMD [ARGS...]\n"
		"  -o FILE      output file (default itrace.data)\n"
		"  -m PAGES     trace buffer pages, a power of two (default 1024)\n"
		"  --snapshot   overwrite mode: keep only the newest trace\n"
		"  -k, --kernel trace kernel mode too (needs perf_event_paranoid <= 1,\n"
		"               CAP_PERFMON or root)\n");
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output",   required_argument, NULL, 'o' },
		{ "pages",    required_argument, NULL, 'm' },
		{ "snapshot", no_argument,       NULL, 's' },
		{ "kernel",   no_argument,       NULL, 'k' },
		{ "help",     no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct recorder rec = { .path = "itrace.data", .fd = -1, .tfd = -1 };
	struct perf_event_attr attr;
	struct itrace_file_header hdr;
	unsigned long pages = 1024;
	int go[2], ep[2], c, status, child_err = 0, ret = 1, kernel = 0;
	int hup = 0, ready = 1;
	long pmu_type;
	uint8_t *vdso;
	size_t vdso_size;
	pid_t pid;
	char *end;

	rec.perf.name = "perf";
	rec.trace.name = "trace";
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:m:kh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			rec.path = optarg;
			break;
		case 'm':
			pages = strtoul(optarg, &end, 0);
			if (*end || !pages || (pages & (pages - 1))) {
				fprintf(stderr, "itrace: -m %s: not a power of two\n", optarg);
				return 2;
			}
			break;
		case 's':
			rec.snapshot = 1;
			break;
		case 'k':
			kernel = 1;
			break;
		case 'h':
			usage_record(stdout);
			return 0;
		default:
			usage_record(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage_record(stderr);
		return EXIT_USAGE;
	}

	/*
	 * Test hook for hosts without Intel PT: record only the sideband of
	 * a software dummy event, to check the perf stream side of record.
	 */
	rec.sideband_only = !!getenv("ITRACE_RECORD_SIDEBAND_ONLY");
	if (rec.sideband_only) {
		pmu_type = PERF_TYPE_SOFTWARE;
	} else if (access(PT_SYSFS, F_OK)) {
		fprintf(stderr,
			"itrace: no intel_pt PMU (%s missing): this CPU or kernel has no Intel PT\n",
			PT_SYSFS);
		return 1;
	}
	if (!rec.sideband_only && read_sysfs_int(PT_SYSFS "/type", &pmu_type)) {
		fprintf(stderr, "itrace: cannot read %s/type: %s\n", PT_SYSFS, strerror(errno));
		return 1;
	}

	if (pipe2(go, O_CLOEXEC) || pipe2(ep, O_CLOEXEC)) {
		perror("itrace: pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("itrace: fork");
		return 1;
	}
	if (!pid) {
		char b;
		int e;

		close(go[1]);
		close(ep[0]);
		/* wait until the parent has set up tracing (or died) */
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		execvp(argv[optind], argv + optind);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = pmu_type;
	attr.config = rec.sideband_only ? PERF_COUNT_SW_DUMMY : pt_config();
	attr.exclude_kernel = !kernel;
	attr.exclude_hv = 1;
	attr.disabled = 1;
	attr.enable_on_exec = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	attr.task = 1;
	attr.sample_id_all = 1;
	/*
	 * MMAP2 records carry the file's build-id (Linux 5.12+), so that
	 * decode can tell a file rebuilt since from the one that ran.
	 */
	attr.build_id = 1;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	/*
	 * Stop mode: wake the reader (the trace fd's POLLIN) when a quarter
	 * of the buffer is full rather than the kernel's default half, as
	 * perf record does for its AUX area, so that it drains while three
	 * quarters are still free.
	 */
	if (!rec.snapshot) {
		uint64_t wm = (uint64_t)pages * sysconf(_SC_PAGESIZE) / 4;

		attr.aux_watermark = wm > UINT32_MAX ? UINT32_MAX : wm;
	}

	rec.fd = perf_event_open(&attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (rec.fd < 0 && kernel && (errno == EACCES || errno == EPERM)) {
		report_kernel_denied(errno);
		goto kill_child;
	}
	if (rec.fd < 0) {
		fprintf(stderr,
			"itrace: perf_event_open(intel_pt, type %ld, config 0x%llx): %s%s\n",
			pmu_type, (unsigned long long)attr.config, strerror(errno),
			errno == EACCES || errno == EPERM ?
			" (check /proc/sys/kernel/perf_event_paranoid or run as root)" : "");
		goto kill_child;
	}
	if (ring_map(&rec.perf, rec.fd, PERF_PAGES, 1)) {
		fprintf(stderr, "itrace: mmap of the event's perf stream: %s\n", strerror(errno));
		goto kill_child;
	}
	if (rec.sideband_only)
		goto mapped;
	rec.tfd = perf_event_open(NULL, -1, -1, rec.fd, PERF_FLAG_FD_ITRACE);
	if (rec.tfd < 0) {
		fprintf(stderr,
			"itrace: cannot get the trace fd (perf_event_open with PERF_FLAG_FD_ITRACE): %s%s\n",
			strerror(errno), errno == EINVAL ?
			" (kernel without itrace trace fd support?)" : "");
		goto kill_child;
	}
	if (ring_map(&rec.trace, rec.tfd, pages, !rec.snapshot)) {
		fprintf(stderr, "itrace: mmap of the trace fd (%lu + 1 pages, %s): %s%s\n",
			pages, rec.snapshot ? "read-only" : "read-write", strerror(errno),
			errno == EPERM || errno == ENOMEM ?
			" (locked memory limit? try a smaller -m)" : "");
		goto kill_child;
	}
mapped:
	rec.out = fopen(rec.path, "wb");
	if (!rec.out) {
		fprintf(stderr, "itrace: %s: %s\n", rec.path, strerror(errno));
		goto kill_child;
	}
	itrace_header_init(&hdr);
	hdr.page_size = sysconf(_SC_PAGESIZE);
	hdr.flags = rec.snapshot ? ITRACE_FLAG_SNAPSHOT : 0;
	itrace_cpu_ident(&hdr);
	hdr.pmu_type = pmu_type;
	hdr.trace_pages = pages;
	hdr.config = attr.config;
	hdr.pid = pid;
	itrace_write_header(rec.out, &hdr);
	itrace_write_section(rec.out, ITRACE_SEC_ATTR, 0, &attr, sizeof(attr));
	{
		size_t n = 0;
		char *cl;

		for (c = optind; c < argc; c++)
			n += strlen(argv[c]) + 1;
		cl = malloc(n);
		if (cl) {
			n = 0;
			for (c = optind; c < argc; c++) {
				size_t len = strlen(argv[c]) + 1;

				memcpy(cl + n, argv[c], len);
				n += len;
			}
			itrace_write_section(rec.out, ITRACE_SEC_CMDLINE, 0, cl, n);
			free(cl);
		}
	}
	if (!itrace_read_vdso(&vdso, &vdso_size)) {
		itrace_write_section(rec.out, ITRACE_SEC_VDSO, 0, vdso, vdso_size);
		free(vdso);
	} else {
		fprintf(stderr, "itrace: warning: cannot read [vdso]; vdso code will not decode\n");
	}
	if (write_out(&rec))
		goto kill_child;

	/* let the child exec: enable_on_exec starts the trace */
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (write(go[1], "x", 1) != 1) {
		perror("itrace: releasing the child");
		goto kill_child;
	}
	close(go[1]);
	go[1] = -1;
	if (read(ep[0], &child_err, sizeof(child_err)) == sizeof(child_err)) {
		fprintf(stderr, "itrace: cannot execute %s: %s\n", argv[optind],
			strerror(child_err));
		waitpid(pid, &status, 0);
		goto out;
	}
	close(ep[0]);

	for (;;) {
		pid_t w = waitpid(pid, &status, hup ? 0 : WNOHANG);

		if (w == pid)
			break;
		if (w < 0) {
			perror("itrace: waitpid");
			goto out;
		}
		if (ready ? drain_all(&rec) : restart_stalled(&rec))
			break;
		ready = wait_ready(&rec, STALL_MS, &hup);
	}
	/* The event was scheduled out for the last time at exit. */
	if (drain_all(&rec) ||
	    (rec.snapshot && !rec.sideband_only && drain_snapshot(&rec)))
		goto werr;
	itrace_write_section(rec.out, ITRACE_SEC_END, 0, NULL, 0);
	if (fflush(rec.out) || write_out(&rec))
		goto werr;

	if (WIFSIGNALED(status))
		fprintf(stderr, "itrace: %s killed by signal %d\n", argv[optind], WTERMSIG(status));
	if (rec.nr_lost)
		fprintf(stderr,
			"itrace: warning: trace lost: %lu PERF_RECORD_ITRACE_LOST (%llu bytes counted), %lu PERF_RECORD_AUX truncated, %lu restarts; try a larger -m\n",
			rec.nr_itrace_lost, (unsigned long long)rec.lost_bytes,
			rec.nr_aux_truncated, rec.nr_enables);
	fprintf(stderr, "itrace: recorded %llu bytes of trace to %s\n",
		(unsigned long long)rec.trace_bytes, rec.path);
	if (!rec.trace_bytes && !rec.sideband_only)
		fprintf(stderr, "itrace: warning: the trace is empty\n");
	ret = 0;
	goto out;

werr:
	fprintf(stderr, "itrace: write error on %s: %s\n", rec.path, strerror(errno));
	goto out;
kill_child:
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
out:
	if (rec.out && fclose(rec.out) && !ret) {
		fprintf(stderr, "itrace: %s: %s\n", rec.path, strerror(errno));
		ret = 1;
	}
	if (rec.trace.base)
		munmap(rec.trace.base, rec.trace.map_size);
	if (rec.perf.base)
		munmap(rec.perf.base, rec.perf.map_size);
	if (rec.tfd >= 0)
		close(rec.tfd);
	if (rec.fd >= 0)
		close(rec.fd);
	return ret;
}
