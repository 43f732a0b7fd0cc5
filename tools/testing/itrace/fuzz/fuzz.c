// SPDX-License-Identifier: GPL-2.0
/*
 * itrace-fuzz: random sequences over the itrace uAPI, as root and as an
 * unprivileged user, in several processes and threads at once.  This file
 * is the supervisor: it prepares the machine, runs the workers' lives,
 * watches the kernel log and prints the summary.  See README.
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "fuzz.h"

struct shared *sh;

/* What the supervisor changes on the machine, and gives back at the end. */
static const char * const saved_files[] = {
	"/proc/sys/kernel/core_pattern",
	"/proc/sys/kernel/perf_event_paranoid",
	"/proc/sys/kernel/perf_event_mlock_kb",
	"/proc/sys/fs/suid_dumpable",
};

static char saved[ARRAY_SIZE(saved_files)][256];

/* Kernel reports, the patterns of scripts/kernel-health.sh. */
static const char * const kernel_reports[] = {
	"WARNING: ", "BUG: ", "Oops", "KASAN", "UBSAN",
	"possible recursive locking", "possible circular locking",
	"inconsistent lock state", "suspicious RCU usage",
	"unreferenced object", "Kernel panic", "general protection fault",
	"blocked for more than", "sleeping function called from invalid",
	"turning off the locking correctness validator",
	"invoked oom-killer",
};

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

const char *errname(int err)
{
	static const struct { int err; const char *name; } names[] = {
		{ 0, "ok" }, { EPERM, "EPERM" }, { ENOENT, "ENOENT" },
		{ ESRCH, "ESRCH" }, { EINTR, "EINTR" }, { EIO, "EIO" },
		{ E2BIG, "E2BIG" }, { EBADF, "EBADF" }, { ECHILD, "ECHILD" },
		{ EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" },
		{ EACCES, "EACCES" }, { EFAULT, "EFAULT" },
		{ EBUSY, "EBUSY" }, { EEXIST, "EEXIST" }, { ENODEV, "ENODEV" },
		{ EINVAL, "EINVAL" }, { ENFILE, "ENFILE" },
		{ EMFILE, "EMFILE" }, { ENOTTY, "ENOTTY" }, { EFBIG, "EFBIG" },
		{ ENOSPC, "ENOSPC" }, { ESPIPE, "ESPIPE" }, { EPIPE, "EPIPE" },
		{ ERANGE, "ERANGE" },
		{ ENODATA, "ENODATA" }, { EOVERFLOW, "EOVERFLOW" },
		{ ENOTSOCK, "ENOTSOCK" }, { EOPNOTSUPP, "EOPNOTSUPP" },
		{ ECONNREFUSED, "ECONNREFUSED" }, { ETIMEDOUT, "ETIMEDOUT" },
		{ EDEADLK, "EDEADLK" }, { ENXIO, "ENXIO" },
	};
	static __thread char buf[16];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].err == err)
			return names[i].name;
	snprintf(buf, sizeof(buf), "errno%d", err);
	return buf;
}

static void logline(struct ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void logline(struct ctx *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	uint64_t ms = now_ms();

	if (c->logfd < 0)
		return;
	n = snprintf(buf, sizeof(buf), "%llu.%03llu %d.%d.%d.%d #%llu ",
		     (unsigned long long)ms / 1000,
		     (unsigned long long)ms % 1000, c->p->worker, c->p->life,
		     (int)getpid(), c->tno, (unsigned long long)c->n);
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(c->logfd, buf, n) < 0) {
		close(c->logfd);
		c->logfd = -1;
	}
}

/* Describe the op about to run; it goes to the log before it runs. */
void say(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->what, sizeof(c->what), fmt, ap);
	va_end(ap);
	logline(c, "%s %s", ops[c->op].name, c->what);
}

static void count(struct ctx *c, int err)
{
	__atomic_add_fetch(&sh->op_errno[c->op][err < MAX_ERRNO ? err : 0], 1,
			   __ATOMIC_RELAXED);
}

/* An op's outcome that nothing documents either way. */
void done(struct ctx *c, int err)
{
	count(c, err);
	logline(c, "= %s", errname(err));
}

/* The op found nothing to work on (no trace fd to map, say). */
void idle(struct ctx *c, const char *why)
{
	__atomic_add_fetch(&sh->op_idle[c->op], 1, __ATOMIC_RELAXED);
	logline(c, "%s (%s)", ops[c->op].name, why);
}

static void record(struct finding *tab, int *nr, const char *key,
		   const char *example)
{
	int i;

	for (i = 0; i < *nr; i++)
		if (!strcmp(tab[i].key, key)) {
			tab[i].count++;
			return;
		}
	if (*nr == MAX_FINDINGS)
		return;
	snprintf(tab[i].key, sizeof(tab[i].key), "%s", key);
	snprintf(tab[i].example, sizeof(tab[i].example), "%s", example);
	tab[i].count = 1;
	(*nr)++;
}

/* A finding listed in -k FILE (sh->lock held): count it. */
static bool known(const char *key, const char *line)
{
	int i;

	for (i = 0; i < sh->nr_known; i++) {
		if (strcmp(sh->known[i].key, key))
			continue;
		if (!sh->known_seen[i]++)
			dprintf(2, "itrace-fuzz: known finding: %s\n", line);
		return true;
	}
	return false;
}

/*
 * -k FILE: findings the kernel is known to have, one a line: the key (as
 * the summary prints it, "op: ERRNO" or "op tag: ERRNO"), a tab, the
 * reason.  They are counted and listed but do not fail the run.
 */
static void read_known(const char *path)
{
	char line[256], *tab;
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		exit(2);
	}
	while (fgets(line, sizeof(line), f) && sh->nr_known < MAX_KNOWN) {
		struct finding *k = &sh->known[sh->nr_known];

		line[strcspn(line, "\n")] = '\0';
		tab = strchr(line, '\t');
		if (line[0] == '#' || !tab)
			continue;
		*tab = '\0';
		snprintf(k->key, sizeof(k->key), "%s", line);
		snprintf(k->example, sizeof(k->example), "%s", tab + 1);
		sh->nr_known++;
	}
	fclose(f);
}

static void vfinding(struct ctx *c, bool note, const char *key,
		     const char *fmt, va_list ap)
{
	char msg[320], line[400];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (c) {
		snprintf(line, sizeof(line), "%s [%d.%d #%llu %s %s]", msg,
			 c->p->worker, c->p->life, (unsigned long long)c->n,
			 ops[c->op].name, c->what);
		__atomic_add_fetch(note ? &sh->op_notes[c->op] :
				   &sh->op_found[c->op], 1, __ATOMIC_RELAXED);
		logline(c, "%s %s", note ? "NOTE" : "FINDING", msg);
		if (!note)
			sh->keep[c->p->worker] = 1;
	} else {
		snprintf(line, sizeof(line), "%s", msg);
	}
	pthread_mutex_lock(&sh->lock);
	if (note) {
		record(sh->notes, &sh->nr_notes, key, line);
	} else if (known(key, line)) {
		/* listed with its reason in the summary; the run goes on */
	} else {
		record(sh->findings, &sh->nr_findings, key, line);
		dprintf(2, "itrace-fuzz: FINDING: %s\n", line);
	}
	pthread_mutex_unlock(&sh->lock);
}

/*
 * Something the uAPI document rules out happened: a documented errno that
 * did not come, a field with the wrong value, a signal that should have
 * come.  The run fails.
 */
void finding(struct ctx *c, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfinding(c, false, key, fmt, ap);
	va_end(ap);
}

/* Something worth a look that the document leaves open. */
void lognote(const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfinding(self_ctx(), true, key, fmt, ap);
	va_end(ap);
}

/* A finding of the supervisor's own: a life that died or hangs. */
static void sup_finding(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sup_finding(const char *key, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&sh->lock);
	record(sh->findings, &sh->nr_findings, key, msg);
	pthread_mutex_unlock(&sh->lock);
	printf("itrace-fuzz: FINDING: %s\n", msg);
}

void expect(struct ctx *c, int err, bool strict, const int *set)
{
	char key[64], list[128];
	int i, n = 0;

	for (i = 0; set[i] >= 0; i++)
		if (set[i] == err) {
			done(c, err);
			return;
		}
	count(c, err);
	list[0] = '\0';
	for (i = 0; set[i] >= 0 && n < (int)sizeof(list) - 16; i++)
		n += snprintf(list + n, sizeof(list) - n, "%s%s", i ? "," : "",
			      errname(set[i]));
	snprintf(key, sizeof(key), "%s%s%s: %s", ops[c->op].name,
		 c->tag ? " " : "", c->tag ?: "", errname(err));
	logline(c, "= %s (expected %s)", errname(err), list);
	if (strict)
		finding(c, key, "%s: %s where the uAPI says %s",
			ops[c->op].name, errname(err), list);
	else
		lognote(key, "%s: %s, not among %s", ops[c->op].name,
			errname(err), list);
}

int worker_sock_name(int worker, char *buf, size_t len)
{
	/* abstract: no file, and no permission check between users */
	return snprintf(buf, len, "%citrace-fuzz-%llx-%d", 0,
			(unsigned long long)sh->seed, worker);
}

/* Read sysfs for the PMUs, the itrace ones with their config bits. */
static void find_pmus(void)
{
	const char *base = "/sys/bus/event_source/devices";
	char path[512], buf[64];
	struct dirent *d;
	DIR *dir, *fmt;
	FILE *f;

	dir = opendir(base);
	if (!dir)
		return;
	while ((d = readdir(dir)) && sh->nr_pmus < MAX_PMUS) {
		struct pmu_info *pi = &sh->pmus[sh->nr_pmus];
		struct dirent *e;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/type", base, d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%d", &pi->type) != 1) {
			fclose(f);
			continue;
		}
		fclose(f);
		snprintf(pi->name, sizeof(pi->name), "%s", d->d_name);
		snprintf(path, sizeof(path), "%s/%s/itrace", base, d->d_name);
		pi->itrace = !access(path, F_OK);
		snprintf(path, sizeof(path), "%s/%s/format", base, d->d_name);
		fmt = opendir(path);
		while (fmt && (e = readdir(fmt))) {
			unsigned int lo, hi;
			char *p;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s/format/%s", base,
				 d->d_name, e->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (fgets(buf, sizeof(buf), f) &&
			    !strncmp(buf, "config:", 7)) {
				p = buf + 7;
				lo = strtoul(p, &p, 10);
				hi = *p == '-' ? strtoul(p + 1, NULL, 10) : lo;
				for (; lo <= hi && lo < 64; lo++)
					pi->config_mask |= 1ULL << lo;
			}
			fclose(f);
		}
		if (fmt)
			closedir(fmt);
		sh->nr_pmus++;
	}
	closedir(dir);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* The PMU that served core dumps when the fuzzer started (index), or -1 */
static int boot_dump_pmu = -1;

/* The path of PMU @j's itrace sysfs file @file */
static const char *dump_file(int j, const char *file, char *buf, size_t len)
{
	snprintf(buf, len, "/sys/bus/event_source/devices/%s/itrace/%s",
		 sh->pmus[j].name, file);
	return buf;
}

/* Select PMU @j for core dumps with config 0, as at boot */
static void select_dump_pmu(int j)
{
	char path[512];

	write_str(dump_file(j, "coredump", path, sizeof(path)), "1");
	write_str(dump_file(j, "coredump_config", path, sizeof(path)), "0");
}

/*
 * Which itrace PMUs serve core dumps: "EOPNOTSUPP the PMU makes no
 * kernel-owned trace events" when "1" is written to its coredump. The one
 * selected at the start (the boot's choice: intel_pt before intel_bts) is
 * selected again with config 0; restore_machine() does the same at the
 * end. All are read before any is written: a write moves the selection.
 */
static void probe_kevents(void)
{
	char path[512], val[8];
	int j, fd;
	ssize_t n;

	for (j = 0; j < sh->nr_pmus && boot_dump_pmu < 0; j++) {
		if (!sh->pmus[j].itrace)
			continue;
		fd = open(dump_file(j, "coredump", path, sizeof(path)), O_RDONLY);
		n = fd < 0 ? -1 : read(fd, val, sizeof(val) - 1);
		if (fd >= 0)
			close(fd);
		if (n > 0 && val[0] == '1')
			boot_dump_pmu = j;
	}
	for (j = 0; j < sh->nr_pmus; j++)
		if (sh->pmus[j].itrace)
			sh->pmus[j].kevents =
				write_str(dump_file(j, "coredump", path,
						    sizeof(path)), "1") != -EOPNOTSUPP;
	if (boot_dump_pmu >= 0)
		select_dump_pmu(boot_dump_pmu);
}

static void save_machine(void)
{
	size_t i;
	int fd;
	ssize_t n;

	for (i = 0; i < ARRAY_SIZE(saved_files); i++) {
		fd = open(saved_files[i], O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, saved[i], sizeof(saved[i]) - 1);
		saved[i][n > 0 ? n : 0] = '\0';
		close(fd);
	}
}

static void restore_machine(void)
{
	struct rlimit off = { 0, RLIM_INFINITY };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(saved_files); i++)
		if (saved[i][0])
			write_str(saved_files[i], saved[i]);
	/* ops set init's RLIMIT_ITRACE too */
	syscall(SYS_prlimit64, 1, RLIMIT_ITRACE, &off, NULL);
	/* the core-dump PMU of the start, with config 0 */
	if (boot_dump_pmu >= 0)
		select_dump_pmu(boot_dump_pmu);
}

/*
 * core_pattern pipe helper: "itrace-fuzz --core-sink DIR PID UID" keeps
 * up to CORE_SINK_MAX bytes of the core in DIR/core.PID (owned by UID, so
 * that the crashed process's parent may remove it), drops the rest.
 */
int core_sink(int argc, char **argv)
{
	char path[512], tmp[512], buf[65536];
	size_t kept = 0;
	ssize_t n;
	int fd;

	if (argc < 5)
		return 2;
	snprintf(path, sizeof(path), "%s/core.%s", argv[2], argv[3]);
	snprintf(tmp, sizeof(tmp), "%s/.sink.%s", argv[2], argv[3]);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	while ((n = read(0, buf, sizeof(buf))) > 0) {
		if (fd >= 0 && kept < CORE_SINK_MAX &&
		    write(fd, buf, n) == n)
			kept += n;
	}
	if (fd < 0)
		return 1;
	if (fchown(fd, atoi(argv[4]), -1))
		return 1;
	close(fd);
	return rename(tmp, path) ? 1 : 0;
}

static int kmsg_fd = -1;
static int kernel_reports_seen;

/* New kernel log lines that are reports: log them, keep the lives' logs */
static void watch_kmsg(void)
{
	char buf[8192];
	ssize_t n;
	size_t i;
	int w;

	while (kmsg_fd >= 0 && (n = read(kmsg_fd, buf, sizeof(buf) - 1)) != 0) {
		char *msg;

		if (n < 0) {
			if (errno == EPIPE)	/* overwritten: go on */
				continue;
			break;
		}
		buf[n] = '\0';
		msg = strchr(buf, ';');
		if (!msg)
			continue;
		msg++;
		msg[strcspn(msg, "\n")] = '\0';
		for (i = 0; i < ARRAY_SIZE(kernel_reports); i++)
			if (strstr(msg, kernel_reports[i]))
				break;
		if (i == ARRAY_SIZE(kernel_reports))
			continue;
		if (kernel_reports_seen++ < 20)
			printf("itrace-fuzz: kernel report at %.1f s: %s\n",
			       now_ms() / 1000.0, msg);
		for (w = 0; w < MAX_WORKERS; w++)
			sh->keep[w] = 1;
	}
}

/* Whether process @p is one of ours: this binary runs in it. */
static bool ours(pid_t p)
{
	char path[64], exe[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)p);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		return false;
	exe[n] = '\0';
	return !strcmp(exe, sh->exe);
}

/*
 * The kernel stacks of a process (@pid), of a process group (-@pid), or of
 * every process of this binary (0), the core_pattern pipe sinks included,
 * for a life or a crashing child that does not go on: to @fd, with each
 * task's state.
 */
void dump_tasks(pid_t pid, int fd)
{
	char path[300], buf[4096], state[64];
	struct dirent *d, *t;
	DIR *proc, *task;
	ssize_t n;
	FILE *f;
	int sfd;

	proc = opendir("/proc");
	while (proc && (d = readdir(proc))) {
		pid_t p = atoi(d->d_name);

		if (p <= 0 || p == getpid())
			continue;
		if (pid > 0 && p != pid)
			continue;
		if (pid < 0 && getpgid(p) != -pid)
			continue;
		if (!pid && !ours(p))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", p);
		task = opendir(path);
		while (task && (t = readdir(task))) {
			if (t->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%s/status",
				 p, t->d_name);
			state[0] = '\0';
			f = fopen(path, "r");
			while (f && fgets(state, sizeof(state), f))
				if (!strncmp(state, "State:", 6))
					break;
			if (f)
				fclose(f);
			state[strcspn(state, "\n")] = '\0';
			snprintf(path, sizeof(path), "/proc/%d/task/%s/stack",
				 p, t->d_name);
			sfd = open(path, O_RDONLY);
			if (sfd < 0)
				continue;
			n = read(sfd, buf, sizeof(buf) - 1);
			close(sfd);
			buf[n > 0 ? n : 0] = '\0';
			snprintf(path, sizeof(path), "/proc/%d/cmdline", p);
			sfd = open(path, O_RDONLY);
			n = sfd < 0 ? 0 : read(sfd, path, sizeof(path) - 1);
			if (sfd >= 0)
				close(sfd);
			path[n > 0 ? n : 0] = '\0';
			while (--n > 0)
				if (!path[n])
					path[n] = ' ';
			dprintf(fd, "itrace-fuzz: task %d/%s %s (%s):\n%s", p,
				t->d_name, state, path, buf);
		}
		if (task)
			closedir(task);
	}
	if (proc)
		closedir(proc);
}

/* The blocked tasks, the locks held, what the CPUs run: to the kernel log */
static void sysrq_dump(void)
{
	write_str("/proc/sysrq-trigger", "w");
	write_str("/proc/sysrq-trigger", "d");
	write_str("/proc/sysrq-trigger", "l");
}

static void clean_cores(void)
{
	char path[300];
	struct dirent *d;
	DIR *dir = opendir(CORE_DIR);
	int n = 0;

	while (dir && (d = readdir(dir))) {
		if (strncmp(d->d_name, "core.", 5) &&
		    strncmp(d->d_name, ".sink.", 6))
			continue;
		snprintf(path, sizeof(path), CORE_DIR "/%s", d->d_name);
		if (!unlink(path))
			n++;
	}
	if (dir)
		closedir(dir);
	if (n)
		printf("itrace-fuzz: removed %d core files no crash op read\n",
		       n);
}

static uint64_t life_seed(uint64_t seed, int w, int l)
{
	return splitmix64(seed ^ splitmix64(((uint64_t)w << 32) | l));
}

static const char usage_text[] =
	"usage: itrace-fuzz [-s SEED] [-t SECONDS] [-w WORKERS] [-o LOGDIR]\n"
	"                   [-L WORKER:LIFE [-N OPS]] [-x] [-c] [-O OP,...]\n"
	"                   [-k KNOWN]\n"
	"  -s SEED      the run's seed (default: from the clock); it is printed\n"
	"  -t SECONDS   how long to run (default 600)\n"
	"  -w WORKERS   worker processes, even ones root, odd ones nobody\n"
	"               (default 4, at most 8)\n"
	"  -o LOGDIR    where each life's op log goes (default " FUZZ_DIR "/log);\n"
	"               kept for lives with a finding or a kernel report\n"
	"  -L W:L       replay only life L of worker W of the run of SEED\n"
	"  -N OPS       with -L: stop that life after OPS ops\n"
	"  -x           with -L: keep the log whatever happens\n"
	"  -c           open events of the core PMU (cpu) too: the emulated\n"
	"               perfmon has no RDPMC, so their counters oops the kernel\n"
	"  -O OP,...    run only these ops (names as in the summary)\n"
	"  -k KNOWN     findings known to the kernel's maintainers (key, tab,\n"
	"               reason, a line each): listed, but the run passes\n";

static void __attribute__((noreturn)) bad_usage(void)
{
	fputs(usage_text, stderr);
	exit(2);
}

static uint64_t parse_ops(char *list)
{
	uint64_t mask = 0;
	char *name;
	int i;

	while ((name = strsep(&list, ","))) {
		for (i = 0; i < nr_ops; i++)
			if (!strcmp(ops[i].name, name))
				break;
		if (i == nr_ops) {
			fprintf(stderr, "itrace-fuzz: no op %s\n", name);
			exit(2);
		}
		mask |= 1ULL << i;
	}
	return mask;
}

struct slot {
	pid_t pid;
	int life;
	uint64_t started;
	uint64_t killed;	/* when we killed it for being stuck */
	char log[300];
};

/*
 * A life whose actors made no op for 400 s (a crash op waits up to 300 s
 * for its child's core dump), or that does not end
 * when the run does: report it, show where its tasks are, kill it.  One
 * that does not die either is given up on.
 */
static void check_stuck(struct slot *s, int w, uint64_t t, bool late)
{
	uint64_t last = sh->progress[w];

	if (s->killed) {
		if (t - s->killed < 60000)
			return;
		sup_finding("unkillable life",
			    "life %d:%d (pid %d) did not die of SIGKILL in 60 s",
			    w, s->life, (int)s->pid);
		fflush(stdout);
		dump_tasks(-s->pid, 1);
		sysrq_dump();
		s->pid = 0;
		return;
	}
	if (!late && (last >= t || t - last < 400000))
		return;
	sup_finding("stuck life", "life %d:%d made no op for %llu s%s, log %s",
		    w, s->life, (unsigned long long)(last < t ? t - last : 0) / 1000,
		    late ? " and did not end with the run" : "", s->log);
	sh->keep[w] = 1;
	fflush(stdout);
		dump_tasks(-s->pid, 1);
		sysrq_dump();
	kill(-s->pid, SIGKILL);
	s->killed = t;
}

static void start_life(struct slot *s, int w, const char *logdir,
		       uint64_t budget)
{
	uint64_t seed = life_seed(sh->seed, w, s->life);
	uid_t uid = w & 1 ? NOBODY : 0;

	/* a directory of op logs, one per process and thread of the life */
	snprintf(s->log, sizeof(s->log), "%s/w%d-l%d", logdir, w, s->life);
	if ((mkdir(s->log, 0755) && errno != EEXIST) || chown(s->log, uid, uid))
		perror(s->log);
	sh->keep[w] = 0;
	sh->progress[w] = now_ms();
	fflush(stdout);
	s->pid = fork();
	if (s->pid < 0) {
		perror("fork");
		exit(1);
	}
	if (!s->pid) {
		setpgid(0, 0);
		if (kmsg_fd >= 0)
			close(kmsg_fd);
		life_main(w, s->life, seed, uid, s->log, budget);
		_exit(0);
	}
	setpgid(s->pid, s->pid);
	s->started = now_ms();
	printf("itrace-fuzz: life %d:%d uid %d seed 0x%016llx pid %d (replay -s 0x%llx -L %d:%d)\n",
	       w, s->life, (int)uid,
	       (unsigned long long)seed, (int)s->pid,
	       (unsigned long long)sh->seed, w, s->life);
}

static void remove_dir(const char *path)
{
	char file[600];
	struct dirent *d;
	DIR *dir = opendir(path);

	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, d->d_name);
		unlink(file);
	}
	if (dir)
		closedir(dir);
	rmdir(path);
}

static void end_life(struct slot *s, int w, int status, bool keep_log)
{
	bool bad = !WIFEXITED(status) || WEXITSTATUS(status);

	if (bad && !s->killed)
		sup_finding("life ended badly",
			    "life %d:%d (pid %d) ended with status 0x%x, log %s",
			    w, s->life, (int)s->pid, status, s->log);
	if (!bad && !sh->keep[w] && !keep_log)
		remove_dir(s->log);
	else
		printf("itrace-fuzz: kept %s\n", s->log);
	s->pid = 0;
	s->killed = 0;
	s->life++;
}

static void summary(uint64_t ms)
{
	uint64_t notes = 0, found = 0, idle = 0;
	int i, e, known = 0;

	printf("\nitrace-fuzz: %-16s %9s  outcomes\n", "op", "calls");
	for (i = 0; i < nr_ops; i++) {
		uint64_t calls = 0;
		char line[1024];
		int n = 0;

		calls = sh->op_idle[i];
		for (e = 0; e < MAX_ERRNO; e++)
			calls += sh->op_errno[i][e];
		if (sh->op_idle[i])
			n += snprintf(line + n, sizeof(line) - n, " idle %llu",
				      (unsigned long long)sh->op_idle[i]);
		for (e = 0; e < MAX_ERRNO && n < 900; e++)
			if (sh->op_errno[i][e])
				n += snprintf(line + n, sizeof(line) - n,
					      " %s %llu", errname(e),
					      (unsigned long long)sh->op_errno[i][e]);
		line[n] = '\0';
		if (!calls)
			continue;
		printf("itrace-fuzz: %-16s %9llu %s%s\n", ops[i].name,
		       (unsigned long long)calls, line,
		       sh->op_found[i] ? "  FINDINGS" : "");
		notes += sh->op_notes[i];
		idle += sh->op_idle[i];
		found += sh->op_found[i];
	}
	printf("itrace-fuzz: crashes %llu, cores read %llu, NT_ITRACE notes %llu\n",
	       (unsigned long long)sh->crashes, (unsigned long long)sh->cores,
	       (unsigned long long)sh->itrace_notes);
	for (i = 0; i < sh->nr_notes; i++)
		printf("itrace-fuzz: note (%u times): %s\n", sh->notes[i].count,
		       sh->notes[i].example);
	for (i = 0; i < sh->nr_known; i++)
		if (sh->known_seen[i])
			printf("itrace-fuzz: known finding \"%s\" (%u times): %s\n",
			       sh->known[i].key, sh->known_seen[i],
			       sh->known[i].example);
	for (i = 0; i < sh->nr_findings; i++)
		printf("itrace-fuzz: FINDING (%u times): %s\n",
		       sh->findings[i].count, sh->findings[i].example);
	printf("itrace-fuzz: seed 0x%016llx: %llu ops (%llu idle) in %.0f s, ",
	       (unsigned long long)sh->seed, (unsigned long long)sh->ops,
	       (unsigned long long)idle, ms / 1000.0);
	for (i = 0; i < sh->nr_known; i++)
		known += sh->known_seen[i] ? 1 : 0;
	printf("%d findings (and %d known), %llu notes, %d kernel reports\n",
	       sh->nr_findings, known, (unsigned long long)notes,
	       kernel_reports_seen);
	(void)found;
}

int main(int argc, char **argv)
{
	int workers = 4, only_w = -1, only_l = -1, opt, w, status, shmfd;
	const char *logdir = FUZZ_DIR "/log";
	struct slot slot[MAX_WORKERS] = {};
	uint64_t seconds = 600, budget = 0, start, deadline, last = 0;
	bool keep_log = false, have_seed = false;
	char *end;
	ssize_t n;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "--core-sink"))
		return core_sink(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "--child"))
		return child_main(argc, argv);

	shmfd = memfd_create("itrace-fuzz", 0);
	shm_fd = shmfd;
	if (shmfd < 0 || ftruncate(shmfd, sizeof(*sh))) {
		perror("memfd");
		return 1;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED,
		  shmfd, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	{
		pthread_mutexattr_t a;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
		pthread_mutex_init(&sh->lock, &a);
	}
	sh->op_mask = ~0ULL;
	while ((opt = getopt(argc, argv, "s:t:w:o:L:N:xcO:k:")) != -1) {
		switch (opt) {
		case 's':
			sh->seed = strtoull(optarg, &end, 0);
			if (*end)
				bad_usage();
			have_seed = true;
			break;
		case 't':
			seconds = strtoull(optarg, NULL, 0);
			break;
		case 'w':
			workers = atoi(optarg);
			if (workers < 1 || workers > MAX_WORKERS)
				bad_usage();
			break;
		case 'o':
			logdir = optarg;
			break;
		case 'L':
			if (sscanf(optarg, "%d:%d", &only_w, &only_l) != 2 ||
			    only_w < 0 || only_w >= MAX_WORKERS || only_l < 0)
				bad_usage();
			break;
		case 'N':
			budget = strtoull(optarg, NULL, 0);
			break;
		case 'x':
			keep_log = true;
			break;
		case 'c':
			sh->core_pmu = 1;
			break;
		case 'O':
			sh->op_mask = parse_ops(optarg);
			break;
		case 'k':
			read_known(optarg);
			break;
		default:
			bad_usage();
		}
	}
	if (!have_seed)
		sh->seed = splitmix64(now_ms() ^ ((uint64_t)getpid() << 40) ^
				      (uint64_t)time(NULL));
	if (geteuid()) {
		fputs("itrace-fuzz: run as root (it drops to nobody for half the workers)\n",
		      stderr);
		return 2;
	}
	n = readlink("/proc/self/exe", sh->exe, sizeof(sh->exe) - 1);
	sh->exe[n > 0 ? n : 0] = '\0';
	sh->nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	find_pmus();
	probe_kevents();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("itrace-fuzz: seed 0x%016llx, %llu s, %d workers, %d CPUs; "
	       "replay with -s 0x%016llx (FUZZ_SEED=0x%016llx)\n",
	       (unsigned long long)sh->seed, (unsigned long long)seconds,
	       workers, sh->nr_cpus, (unsigned long long)sh->seed,
	       (unsigned long long)sh->seed);
	for (w = 0; w < sh->nr_pmus; w++)
		printf("itrace-fuzz: pmu %s type %d%s%s config mask 0x%llx\n",
		       sh->pmus[w].name, sh->pmus[w].type,
		       sh->pmus[w].itrace ? " itrace" : "",
		       sh->pmus[w].kevents ? " coredump" : "",
		       (unsigned long long)sh->pmus[w].config_mask);
	{
		char msg[160];

		snprintf(msg, sizeof(msg), "itrace-fuzz: seed 0x%016llx\n",
			 (unsigned long long)sh->seed);
		write_str("/dev/kmsg", msg);
	}

	mkdir(FUZZ_DIR, 0755);
	mkdir(CORE_DIR, 01777);
	chmod(CORE_DIR, 01777);
	mkdir(logdir, 0777);
	chmod(logdir, 0777);
	save_machine();
	write_str("/proc/sys/kernel/core_pattern", CORE_DIR "/core.%p");
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGPIPE, SIG_IGN);
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);

	start = now_ms();
	deadline = start + seconds * 1000;
	if (only_w >= 0) {
		slot[only_w].life = only_l;
		start_life(&slot[only_w], only_w, logdir, budget);
	} else {
		for (w = 0; w < workers; w++)
			start_life(&slot[w], w, logdir, 0);
	}

	for (;;) {
		uint64_t t = now_ms();
		int running = 0;

		watch_kmsg();
		if (t >= deadline && !sh->stop) {
			sh->stop = 1;
			printf("itrace-fuzz: time is up, stopping\n");
		}
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (w = 0; w < MAX_WORKERS; w++)
				if (slot[w].pid == pid)
					break;
			if (w == MAX_WORKERS)
				continue;	/* an orphan of a life */
			end_life(&slot[w], w, status, keep_log);
			if (!sh->stop && only_w < 0)
				start_life(&slot[w], w, logdir, 0);
		}
		for (w = 0; w < MAX_WORKERS; w++) {
			if (!slot[w].pid)
				continue;
			running++;
			if (sh->show[w]) {
				printf("itrace-fuzz: life %d:%d waits for pid %d:\n",
				       w, slot[w].life, (int)sh->show[w]);
				fflush(stdout);
				dump_tasks(sh->show[w], 1);
				printf("itrace-fuzz: all tasks of itrace-fuzz:\n");
				fflush(stdout);
				dump_tasks(0, 1);
				sysrq_dump();
				sh->show[w] = 0;
			}
			check_stuck(&slot[w], w, t, sh->stop && t > deadline + 90000);
		}
		if (!running && (sh->stop || only_w >= 0))
			break;
		if (t - last >= 30000) {
			last = t;
			printf("itrace-fuzz: %.0f s: %llu ops, %d findings\n",
			       (t - start) / 1000.0,
			       (unsigned long long)sh->ops, sh->nr_findings);
		}
		usleep(100000);
	}
	/* orphans of the lives, and cores of processes that were no crash op's */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	clean_cores();
	watch_kmsg();
	restore_machine();
	summary(now_ms() - start);
	return sh->nr_findings || kernel_reports_seen ? 1 : 0;
}
