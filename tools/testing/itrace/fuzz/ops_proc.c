// SPDX-License-Identifier: GPL-2.0
/*
 * itrace-fuzz ops on processes: work to trace, fork(), execve(), threads,
 * RLIMIT_ITRACE on this and other processes, crashing children whose core
 * dumps (to files and to core_pattern pipes) must carry the documented
 * NT_ITRACE notes, and the sysfs and sysctl files of itrace and perf.
 */
#define _GNU_SOURCE

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/itrace.h>

#include "fuzz.h"

volatile long bp_target;

/* A loop with a data-dependent branch, a system call now and then. */
void spin(unsigned long n)
{
	volatile unsigned long sum = 0;
	unsigned long i;

	for (i = 0; !n || i < n; i++) {
		if (i % 3)
			sum += i;
		else
			sum ^= i;
		if (!(i & 4095)) {
			syscall(SYS_getppid);
			bp_target++;
		}
	}
}

void op_spin(struct ctx *c)
{
	unsigned long n = 1000 + rnd(&c->rng, one_in(&c->rng, 8) ? 2000000 :
							       100000);

	say(c, "%lu", n);
	spin(n);
	if (one_in(&c->rng, 8))
		sched_yield();
	done(c, 0);
}

void op_fork(struct ctx *c)
{
	uint64_t budget = 10 + rnd(&c->rng, 150);
	pid_t pid;

	say(c, "budget %llu", (unsigned long long)budget);
	pid = spawn_child(c, budget, false);
	done(c, err_of(pid));
}

void op_exec(struct ctx *c)
{
	uint64_t budget = 10 + rnd(&c->rng, 100);
	pid_t pid;

	say(c, "budget %llu", (unsigned long long)budget);
	pid = spawn_child(c, budget, true);
	done(c, err_of(pid));
}

static long prlimit_raw(pid_t pid, int res, const struct rlimit *new,
			struct rlimit *old)
{
	/* glibc's RLIMIT_NLIMITS predates RLIMIT_ITRACE: the syscall */
	return syscall(SYS_prlimit64, pid, res, new, old);
}

/* Bytes of trace per thread: mostly small, now and then up to 1 GiB. */
static rlim_t pick_itrace(struct ctx *c, bool small)
{
	unsigned int r = rnd(&c->rng, 100);
	long psz = page_size();

	if (r < 15)
		return 0;
	if (r < 22)
		return RLIM_INFINITY;
	if (r < 30)
		return 1;
	if (r < 40)
		return psz - 1 + rnd(&c->rng, 3);
	if (r < 50)
		return 5 * psz + 1;
	if (r < 75 || small)
		return 1 + rnd(&c->rng, 256 << 10);
	if (r < 88)
		return 1 + rnd(&c->rng, 4 << 20);
	if (r < 93)
		return 1 + rnd(&c->rng, 64 << 20);
	if (r < 95)
		return ITRACE_DUMP_MAX;
	if (r < 97)
		return ITRACE_DUMP_MAX + 1;
	return rnd64(&c->rng);
}

/*
 * prlimit(RLIMIT_ITRACE) of this process, a thread of it, another worker,
 * a child, init or nobody at all.  Documented: the soft limit above the
 * hard one, or above 1 GiB (but RLIM_INFINITY, which keeps no trace), is
 * EINVAL; 0 and RLIM_INFINITY always succeed.
 */
void op_prlimit(struct ctx *c)
{
	static const int any[] = { 0, EINVAL, EPERM, EACCES, ENODEV, ENOMEM,
				   ESRCH, -1 };
	struct rlimit old, new;
	pid_t pid = 0;
	int err, k;
	bool self;

	switch (rnd(&c->rng, 8)) {
	case 0:
	case 1:
	case 2:
		break;
	case 3:
		pid = getpid();
		break;
	case 4:		/* any worker's thread, this one's too */
		k = rnd(&c->rng, NR_TARGETS);
		pid = sh->targets[k].pid;
		break;
	case 5:
		pid = c->p->kids[rnd(&c->rng, MAX_KIDS)];
		break;
	case 6:
		pid = 1;
		break;
	default:
		pid = 0x3ffffff0;
		break;
	}
	self = !pid || pid == getpid();
	if (one_in(&c->rng, 8)) {
		say(c, "get pid %d", (int)pid);
		LOOSE(c, err_of(prlimit_raw(pid, RLIMIT_ITRACE, NULL, &old)),
		      0, ESRCH, EPERM);
		return;
	}
	new.rlim_cur = pick_itrace(c, !c->p->root);
	switch (rnd(&c->rng, 6)) {
	case 0:
		new.rlim_max = new.rlim_cur;
		break;
	case 1:
		new.rlim_max = pick_itrace(c, false);
		break;
	case 2:		/* keep the hard limit as it is */
		if (prlimit_raw(pid, RLIMIT_ITRACE, NULL, &old)) {
			say(c, "pid %d: get", (int)pid);
			done(c, errno);
			return;
		}
		new.rlim_max = old.rlim_max;
		break;
	default:
		new.rlim_max = RLIM_INFINITY;
		break;
	}
	say(c, "pid %d soft %llu hard %llu", (int)pid,
	    (unsigned long long)new.rlim_cur,
	    (unsigned long long)new.rlim_max);
	err = err_of(prlimit_raw(pid, RLIMIT_ITRACE, &new, NULL));
	if (!self) {
		expect(c, err, false, any);
	} else if (new.rlim_cur > new.rlim_max) {
		STRICT(c, err, EINVAL);
	} else if (new.rlim_cur > ITRACE_DUMP_MAX &&
		   new.rlim_cur != RLIM_INFINITY) {
		/* EPERM: raising the hard limit without CAP_SYS_RESOURCE */
		if (c->p->root)
			STRICT(c, err, EINVAL);
		else
			STRICT(c, err, EINVAL, EPERM);
	} else if (!new.rlim_cur || new.rlim_cur == RLIM_INFINITY) {
		if (c->p->root)
			STRICT(c, err, 0);
		else
			STRICT(c, err, 0, EPERM);
	} else {
		expect(c, err, false, any);
	}
}

/*
 * The rlimit idioms of programs that know nothing of RLIMIT_ITRACE, in a
 * child of their own: raise every soft limit to its hard limit, read the
 * limits back, restore them, set 0.
 */
void op_rlimit_idioms(struct ctx *c)
{
	static const int trace_errs[] = { 0, EPERM, EACCES, ENODEV, ENOMEM,
					  -1 };
	struct rlimit old[FUZZ_NLIMITS], r;
	int i, err, status;
	pid_t pid;

	say(c, "in a child");
	pid = fork();
	if (pid < 0) {
		done(c, errno);
		return;
	}
	if (pid) {
		waitpid(pid, &status, 0);
		done(c, WIFEXITED(status) ? 0 : EINTR);
		return;
	}
	for (i = 0; i < FUZZ_NLIMITS; i++)
		if (prlimit_raw(0, i, NULL, &old[i]))
			finding(c, "idioms: get", "getrlimit(%d): %s", i,
				errname(errno));
	for (i = 0; i < FUZZ_NLIMITS; i++) {
		rlim_t max = old[i].rlim_max;

		r.rlim_cur = max;
		r.rlim_max = max;
		err = err_of(prlimit_raw(0, i, &r, NULL));
		if (i != RLIMIT_ITRACE)
			continue;
		if (max == RLIM_INFINITY || !max)
			STRICT(c, err, 0);
		else if (max > ITRACE_DUMP_MAX)	/* a hard limit above 1 GiB */
			STRICT(c, err, EINVAL);
		else
			STRICT(c, err, 0, EPERM, EACCES, ENODEV, ENOMEM);
		if (err)
			continue;
		/* "getrlimit() returns the value as set, not rounded" */
		if (prlimit_raw(0, i, NULL, &r) || r.rlim_cur != max)
			finding(c, "idioms: read back",
				"RLIMIT_ITRACE set to %llu reads %llu",
				(unsigned long long)max,
				(unsigned long long)r.rlim_cur);
	}
	for (i = 0; i < FUZZ_NLIMITS; i++) {
		err = err_of(prlimit_raw(0, i, &old[i], NULL));
		if (i != RLIMIT_ITRACE)
			continue;
		if (old[i].rlim_cur == RLIM_INFINITY || !old[i].rlim_cur)
			STRICT(c, err, 0);
		else
			expect(c, err, true, trace_errs);
	}
	r.rlim_cur = 0;
	r.rlim_max = old[RLIMIT_ITRACE].rlim_max;
	STRICT(c, err_of(prlimit_raw(0, RLIMIT_ITRACE, &r, NULL)), 0);
	_exit(0);
}

/* What a crashing child tells its parent before it crashes. */
struct crash_report {
	int err;		/* of its prlimit(RLIMIT_ITRACE) */
	int nr_tids;
	pid_t tids[MAX_THREADS];
};

static volatile int crash_now;
static int *volatile nowhere;

static void crash(int how)
{
	switch (how) {
	case 0:
		*nowhere = 0;
		break;
	case 1:
		abort();
	case 2:
		raise(SIGQUIT);
		break;
	default:
		__builtin_trap();
	}
	_exit(99);
}

static void *crash_thread(void *arg)
{
	pid_t *tid = arg;

	*tid = gettid();
	while (!crash_now)
		spin(10000);
	crash(crash_now - 1);
	return NULL;
}

static void crash_child(struct ctx *c, int wfd, rlim_t bytes, rlim_t core,
			int threads, int how, bool own_event)
{
	/* mostly the ELF headers and notes only: memory dumps are slow */
	static const char * const filters[] = {
		"0x10", "0x10", "0x10", "0x10", "0x10", "0x10", "0x10", "0x33",
	};
	struct rlimit r = { core, core };
	struct crash_report rep = { 0 };
	pthread_t t;
	int i, fd;

	setrlimit(RLIMIT_CORE, &r);
	fd = open("/proc/self/coredump_filter", O_WRONLY);
	if (fd >= 0) {
		const char *f = filters[rnd(&c->rng, ARRAY_SIZE(filters))];

		if (write(fd, f, strlen(f)) < 0)
			_exit(97);
		close(fd);
	}
	rep.tids[0] = gettid();
	for (i = 0; i < threads; i++)
		if (!pthread_create(&t, NULL, crash_thread, &rep.tids[i + 1]))
			rep.nr_tids++;
	rep.nr_tids++;
	while (1) {	/* the threads know their tids */
		for (i = 1; i < rep.nr_tids && rep.tids[i]; i++)
			;
		if (i == rep.nr_tids)
			break;
		usleep(1000);
	}
	if (own_event) {	/* a user's own PT event wins over the dump's */
		struct perf_event_attr attr = {
			.size = sizeof(attr),
			.exclude_kernel = 1,
			.exclude_hv = 1,
		};
		int k;

		for (k = 0; k < sh->nr_pmus; k++)
			if (sh->pmus[k].itrace)
				attr.type = sh->pmus[k].type;
		sys_perf_event_open(&attr, 0, -1, -1, 0);
	}
	/* 0 too: the worker's own limit would be inherited */
	r.rlim_cur = bytes;
	r.rlim_max = RLIM_INFINITY;
	rep.err = err_of(prlimit_raw(0, RLIMIT_ITRACE, &r, NULL));
	if (write(wfd, &rep, sizeof(rep)) != sizeof(rep))
		_exit(98);
	spin(20000 + rnd(&c->rng, 200000));
	if (threads && rnd(&c->rng, 2))
		crash_now = 1 + how;
	else
		crash(how);
	for (;;)
		pause();
}

static size_t itrace_buf_size(rlim_t bytes)
{
	size_t pages = (bytes + page_size() - 1) / page_size(), p2 = 1;

	while (p2 < pages)
		p2 <<= 1;
	return p2 * page_size();
}

/*
 * An intel_bts note holds whole 24-byte records { from, to, flags }, none
 * empty, and no kernel address: the core dump scrubs them to 0.
 */
#define USER_END	(1ULL << 47)	/* x86-64, 4-level paging */

static void check_bts_note(struct ctx *c, const unsigned char *trace,
			   uint64_t size)
{
	uint64_t i, rec[3];

	if (size % sizeof(rec)) {
		finding(c, "core: intel_bts note",
			"trace_size %llu, not whole records",
			(unsigned long long)size);
		return;
	}
	for (i = 0; i < size; i += sizeof(rec)) {
		memcpy(rec, trace + i, sizeof(rec));
		if ((!rec[0] && !rec[1]) || rec[0] >= USER_END ||
		    rec[1] >= USER_END) {
			finding(c, "core: intel_bts note",
				"record %llu: from %#llx to %#llx",
				(unsigned long long)(i / sizeof(rec)),
				(unsigned long long)rec[0],
				(unsigned long long)rec[1]);
			return;
		}
	}
}

/*
 * The NT_ITRACE notes of a core file.  Returns how many, or -1 if the
 * file is not a complete ELF core (a core limit cut it, say).
 */
static int core_notes(struct ctx *c, const char *path,
		      const struct crash_report *rep, rlim_t bytes)
{
	const Elf64_Ehdr *eh;
	struct stat st;
	char *core;
	int fd, i, n = 0;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)sizeof(*eh)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	core = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (core == MAP_FAILED)
		return -1;
	eh = (void *)core;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_type != ET_CORE ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) >
	    (uint64_t)st.st_size) {
		munmap(core, st.st_size);
		return -1;
	}
	for (i = 0; i < eh->e_phnum && n >= 0; i++) {
		const Elf64_Phdr *ph =
			(const Elf64_Phdr *)(core + eh->e_phoff) + i;
		uint64_t off = ph->p_offset, end = off + ph->p_filesz;

		if (ph->p_type != PT_NOTE)
			continue;
		if (end > (uint64_t)st.st_size) {
			n = -1;
			break;
		}
		while (off + sizeof(Elf64_Nhdr) <= end) {
			const Elf64_Nhdr *nh = (void *)(core + off);
			const char *name = (void *)(nh + 1);
			const struct itrace_note *in;
			uint64_t desc = off + sizeof(*nh) +
					((nh->n_namesz + 3) & ~3ULL);
			int k;

			off = desc + ((nh->n_descsz + 3ULL) & ~3ULL);
			if (off > end) {
				n = -1;
				break;
			}
			if (nh->n_type != NT_ITRACE || nh->n_namesz != 7 ||
			    memcmp(name, ITRACE_NOTE_NAME, 7))
				continue;
			n++;
			in = (void *)(core + desc);
			if (nh->n_descsz < sizeof(*in) ||
			    in->hdr_size < sizeof(*in) ||
			    (uint64_t)in->hdr_size + in->trace_size !=
			    nh->n_descsz || in->trace_size > in->buf_size) {
				finding(c, "core: NT_ITRACE sizes",
					"note descsz %u hdr_size %u trace_size %llu buf_size %llu",
					nh->n_descsz,
					in->hdr_size,
					(unsigned long long)in->trace_size,
					(unsigned long long)in->buf_size);
				continue;
			}
			if (bytes && bytes <= ITRACE_DUMP_MAX &&
			    in->buf_size != itrace_buf_size(bytes))
				finding(c, "core: NT_ITRACE buf_size",
					"buf_size %llu for RLIMIT_ITRACE %llu, want %zu",
					(unsigned long long)in->buf_size,
					(unsigned long long)bytes,
					itrace_buf_size(bytes));
			if (!strncmp(in->pmu_name, "intel_bts",
				     sizeof(in->pmu_name)))
				check_bts_note(c, (const unsigned char *)core +
					       desc + in->hdr_size, in->trace_size);
			for (k = 0; k < rep->nr_tids; k++)
				if ((pid_t)in->tid == rep->tids[k])
					break;
			if (k == rep->nr_tids)
				finding(c, "core: NT_ITRACE tid",
					"note of tid %u, not a thread of the process",
					in->tid);
		}
	}
	munmap(core, st.st_size);
	if (st.st_size >= CORE_SINK_MAX)
		return -1;
	return n;
}

/*
 * A child that sets RLIMIT_ITRACE, runs some threads and crashes; its core
 * goes where core_pattern says (a file, or our pipe sink).  "The ELF core
 * dump (to a file or a core_pattern pipe) writes one note per thread that
 * has a trace": all threads have one when the limit was set after they
 * started.
 */
void op_crash(struct ctx *c)
{
	static const rlim_t cores[] = { RLIM_INFINITY, RLIM_INFINITY,
					RLIM_INFINITY, 0, 4096, 1 << 20 };
	static const rlim_t sizes[] = { 1, 4096, 65536, 1 << 20, 0,
					RLIM_INFINITY, 12345 };
	rlim_t core = cores[rnd(&c->rng, ARRAY_SIZE(cores))];
	rlim_t bytes = sizes[rnd(&c->rng, ARRAY_SIZE(sizes))];
	int threads = rnd(&c->rng, MAX_THREADS), how = rnd(&c->rng, 4);
	bool own_event = one_in(&c->rng, 4);
	struct crash_report rep = { .err = -1 };
	struct pollfd pfd;
	uint64_t t0;
	char path[128];
	int pfds[2], status, n, tries;
	bool shown = false;
	pid_t pid;

	say(c, "itrace %llu core %llu threads %d how %d%s",
	    (unsigned long long)bytes, (unsigned long long)core, threads, how,
	    own_event ? " own event" : "");
	if (pipe(pfds)) {
		done(c, errno);
		return;
	}
	pid = fork();
	if (pid < 0) {
		close(pfds[0]);
		close(pfds[1]);
		done(c, errno);
		return;
	}
	if (!pid) {
		close(pfds[0]);
		crash_child(c, pfds[1], bytes, core, threads, how, own_event);
	}
	close(pfds[1]);
	pfd.fd = pfds[0];
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 60000) != 1 ||
	    read(pfds[0], &rep, sizeof(rep)) != sizeof(rep)) {
		say(c, "child %d: no report in 60 s", (int)pid);
		rep.err = -1;
	}
	close(pfds[0]);
	t0 = now_ms();
	while (waitpid(pid, &status, WNOHANG) == 0) {
		/* the run is over: a dump may take long, SIGKILL ends it */
		if (sh->stop)
			kill(pid, SIGKILL);
		/* the supervisor (root) shows where it is, in run.log */
		if (!shown && now_ms() - t0 > 240000) {
			sh->show[c->p->worker] = pid;
			shown = true;
		}
		if (now_ms() - t0 > 300000) {
			finding(c, "crash: child does not die",
				"crashing child %d still there after 300 s",
				(int)pid);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			done(c, ETIMEDOUT);
			return;
		}
		usleep(5000);
	}
	__atomic_add_fetch(&sh->crashes, 1, __ATOMIC_RELAXED);
	done(c, rep.err > 0 ? rep.err : 0);
	if (!WIFSIGNALED(status)) {
		lognote("crash: exit", "crashing child ended with status 0x%x",
			status);
		return;
	}
	snprintf(path, sizeof(path), CORE_DIR "/core.%d", (int)pid);
	/* a core_pattern pipe helper may still be writing */
	for (tries = 0; access(path, F_OK) && tries < 200; tries++)
		usleep(10000);
	if (access(path, F_OK))
		return;
	__atomic_add_fetch(&sh->cores, 1, __ATOMIC_RELAXED);
	n = core_notes(c, path, &rep, rep.err ? 0 : bytes);
	unlink(path);
	if (n > 0)
		__atomic_add_fetch(&sh->itrace_notes, n, __ATOMIC_RELAXED);
	if (n < 0 || core != RLIM_INFINITY || !WCOREDUMP(status) || rep.err)
		return;
	if (bytes && bytes <= ITRACE_DUMP_MAX && n != rep.nr_tids)
		finding(c, "core: NT_ITRACE per thread",
			"%d NT_ITRACE notes for %d threads (RLIMIT_ITRACE %llu)",
			n, rep.nr_tids, (unsigned long long)bytes);
	if ((!bytes || bytes == RLIM_INFINITY) && n)
		finding(c, "core: NT_ITRACE without the limit",
			"%d NT_ITRACE notes, RLIMIT_ITRACE %llu", n,
			(unsigned long long)bytes);
}

static const struct pmu_info *itrace_sysfs(struct ctx *c, const char *file,
					    char *buf, size_t len)
{
	int i, k = rnd(&c->rng, MAX_PMUS);

	for (i = 0; i < sh->nr_pmus; i++) {
		const struct pmu_info *pi =
			&sh->pmus[(k + i) % sh->nr_pmus];

		if (!pi->itrace)
			continue;
		snprintf(buf, len,
			 "/sys/bus/event_source/devices/%s/itrace/%s",
			 pi->name, file);
		return pi;
	}
	return NULL;
}

/* An OBJ_SYSFS fd: of coredump_config (else coredump); of a PMU without
 * kernel-owned events, whose valid writes fail with EOPNOTSUPP */
#define SYSFS_CONFIG	1
#define SYSFS_NO_KEVENTS 2

/* How many itrace PMUs serve core dumps (one of them at a time) */
static int nr_kevents_pmus(void)
{
	int i, n = 0;

	for (i = 0; i < sh->nr_pmus; i++)
		n += sh->pmus[i].itrace && sh->pmus[i].kevents;
	return n;
}

static int write_fd(int fd, const char *s)
{
	return err_of(write(fd, s, strlen(s)));
}

/*
 * The itrace sysfs files: "only root writes them (the files are mode 0644,
 * and a write also needs CAP_SYS_ADMIN)".  Writes through an fd that root
 * opened and passed on (SCM_RIGHTS) come here too.
 */
void op_sysfs(struct ctx *c)
{
	static const char * const bad_dump[] = {
		"0", "2", "yes", "-1", "11", "", "4294967296", "1 1",
	};
	static const char * const bad_config[] = {
		"zz", "0xg", "", "-", "1 2",
	};
	unsigned int v = rnd(&c->rng, 8);
	const char *file = v < 2 || v == 7 ? "coredump" : "coredump_config";
	const struct pmu_info *pi;
	char path[256], val[64];
	struct obj o;
	int fd, err;

	c->tag = file;
	if (v == 7 && obj_pick(c, K_SYSFS, &o) >= 0) {
		/* a passed fd: the writer needs CAP_SYS_ADMIN */
		snprintf(val, sizeof(val), "%s",
			 o.flags & SYSFS_CONFIG ? "0" : "1");
		say(c, "write %s through fd %d (%s)", val, o.fd,
		    o.flags & SYSFS_CONFIG ? "coredump_config" : "coredump");
		err = write_fd(o.fd, val);
		if (!c->p->root)
			STRICT(c, err, EPERM, EINVAL);
		else if (o.flags & SYSFS_NO_KEVENTS)
			STRICT(c, err, EOPNOTSUPP);
		else
			LOOSE(c, err, 0, EINVAL, EBADF);
		c->tag = NULL;
		return;
	}
	pi = itrace_sysfs(c, file, path, sizeof(path));
	if (!pi) {
		idle(c, "no itrace PMU");
		c->tag = NULL;
		return;
	}
	switch (v) {
	case 0:
	case 7:
		snprintf(val, sizeof(val), "1");
		break;
	case 1:
		snprintf(val, sizeof(val), "%s",
			 bad_dump[rnd(&c->rng, ARRAY_SIZE(bad_dump))]);
		break;
	case 2:
		snprintf(val, sizeof(val), "%s",
			 bad_config[rnd(&c->rng, ARRAY_SIZE(bad_config))]);
		break;
	case 3:		/* more than 64 bits */
		snprintf(val, sizeof(val), "0x1%016llx",
			 (unsigned long long)rnd64(&c->rng));
		break;
	case 4:
		snprintf(val, sizeof(val), "0x%llx",
			 (unsigned long long)(rnd64(&c->rng) &
					      sh->pmus[0].config_mask));
		break;
	case 5:
		snprintf(val, sizeof(val), "%s", rnd(&c->rng, 2) ? "0" : "0x0");
		break;
	default:
		snprintf(val, sizeof(val), "%llx",
			 (unsigned long long)rnd64(&c->rng));
		break;
	}
	say(c, "%s <- \"%s\"", path, val);
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		/* "EACCES open() for writing by a user other than root" */
		if (c->p->root)
			STRICT(c, errno, 0);
		else
			STRICT(c, errno, EACCES);
		c->tag = NULL;
		return;
	}
	if (!*val)	/* an empty write reaches no store() */
		err = 0;
	else
		err = write_fd(fd, val);
	switch (v) {
	case 0:
		/* "EOPNOTSUPP the PMU makes no kernel-owned trace events" */
		STRICT(c, err, pi->kevents ? 0 : EOPNOTSUPP);
		break;
	case 5:
		/*
		 * config 0: "EINVAL ... this PMU does not serve core dumps"
		 * when another that can is selected (by another worker)
		 */
		if (!pi->kevents)
			STRICT(c, err, EOPNOTSUPP);
		else if (nr_kevents_pmus() == 1)
			STRICT(c, err, 0);
		else
			LOOSE(c, err, 0, EINVAL);
		break;
	case 1:		/* "coredump: anything but 1" */
		if (*val)
			STRICT(c, err, EINVAL);
		else
			done(c, err);
		break;
	case 2:		/* "not a hexadecimal number" */
		if (*val)
			STRICT(c, err, EINVAL);
		else
			done(c, err);
		break;
	case 3:		/* "more than 64 bits": not a number of 64 bits */
		STRICT(c, err, EINVAL);
		break;
	default:	/* a config the PMU may reject */
		if (pi->kevents)
			LOOSE(c, err, 0, EINVAL, ENOMEM);
		else
			STRICT(c, err, EOPNOTSUPP);
		break;
	}
	c->tag = NULL;
	if (v == 7 || (one_in(&c->rng, 4) && c->p->root))
		obj_add(c->p, OBJ_SYSFS, fd,
			(strcmp(file, "coredump") ? SYSFS_CONFIG : 0) |
			(pi->kevents ? 0 : SYSFS_NO_KEVENTS), 0);
	else
		close(fd);
}

/* perf's sysctls, and where core dumps go. */
void op_sysctl(struct ctx *c)
{
	static const char * const paranoid[] = {
		"-1", "0", "1", "2", "2", "2", "3",
	};
	static const char * const mlock_kb[] = {
		"0", "8", "64", "516", "516", "4096", "65536",
	};
	char val[300];
	const char *path;
	int fd, err;

	switch (rnd(&c->rng, 6)) {
	case 0:
		path = "/proc/sys/kernel/perf_event_paranoid";
		snprintf(val, sizeof(val), "%s",
			 paranoid[rnd(&c->rng, ARRAY_SIZE(paranoid))]);
		break;
	case 1:
		path = "/proc/sys/kernel/perf_event_mlock_kb";
		snprintf(val, sizeof(val), "%s",
			 mlock_kb[rnd(&c->rng, ARRAY_SIZE(mlock_kb))]);
		break;
	case 2:
		path = "/proc/sys/fs/suid_dumpable";
		snprintf(val, sizeof(val), "%d", (int)rnd(&c->rng, 3));
		break;
	case 3:
		path = "/proc/sys/kernel/core_pipe_limit";
		snprintf(val, sizeof(val), "%d", (int)rnd(&c->rng, 3));
		break;
	default:
		path = "/proc/sys/kernel/core_pattern";
		if (rnd(&c->rng, 2))
			snprintf(val, sizeof(val), CORE_DIR "/core.%%p");
		else
			snprintf(val, sizeof(val), "|%s --core-sink " CORE_DIR
				 " %%p %%u", sh->exe);
		break;
	}
	say(c, "%s <- %s", path, val);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0) {
		LOOSE(c, errno, EACCES, EPERM);
		return;
	}
	err = write_fd(fd, val);
	close(fd);
	LOOSE(c, err, 0, EINVAL, EPERM);
}

const struct op ops[] = {
	{ "open_pt",		op_open_pt,		10 },
	{ "open_sw",		op_open_sw,		4 },
	{ "open_other",		op_open_other,		2 },
	{ "tfd",		op_tfd,			10 },
	{ "tfd_bad",		op_tfd_bad,		3 },
	{ "close",		op_close,		8 },
	{ "dup",		op_dup,			2 },
	{ "ioctl_tfd",		op_ioctl_tfd,		5 },
	{ "ioctl_event",	op_ioctl_event,		5 },
	{ "set_output",		op_set_output,		2 },
	{ "poll",		op_poll,		4 },
	{ "epoll",		op_epoll,		1 },
	{ "read_write",		op_rw,			2 },
	{ "scm_send",		op_scm_send,		2 },
	{ "scm_recv",		op_scm_recv,		3 },
	{ "mmap_rb",		op_mmap_rb,		8 },
	{ "mmap_aux",		op_mmap_aux,		2 },
	{ "mmap_trace",		op_mmap_trace,		10 },
	{ "mmap_bad",		op_mmap_bad,		3 },
	{ "munmap",		op_munmap,		6 },
	{ "munmap_part",	op_munmap_part,		2 },
	{ "mremap",		op_mremap,		2 },
	{ "mprotect",		op_mprotect,		1 },
	{ "madvise",		op_madvise,		2 },
	{ "garbage",		op_garbage,		3 },
	{ "poke_trace",		op_poke_trace,		1 },
	{ "drain",		op_drain,		8 },
	{ "spin",		op_spin,		8 },
	{ "fork",		op_fork,		2 },
	{ "exec",		op_exec,		1 },
	{ "reap",		op_reap,		2 },
	{ "thread",		op_thread,		2 },
	{ "prlimit",		op_prlimit,		5 },
	{ "rlimit_idioms",	op_rlimit_idioms,	1 },
	{ "crash",		op_crash,		1 },
	{ "sysfs",		op_sysfs,		1 },
	{ "sysctl",		op_sysctl,		1 },
};

const int nr_ops = ARRAY_SIZE(ops);
_Static_assert(ARRAY_SIZE(ops) <= 64, "sh->op_* have room for 64 ops");
