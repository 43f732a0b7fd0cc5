// SPDX-License-Identifier: GPL-2.0
/*
 * itrace-fuzz ops on file descriptors: events of intel_pt and of other
 * PMUs, trace fds (valid and not), ioctl(), poll(), read(), close(), and
 * fds passed between the workers with SCM_RIGHTS.
 *
 * Expected errnos: Documentation/userspace-api/itrace.rst, "Errors".
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <linux/hw_breakpoint.h>

#include "fuzz.h"

/*
 * The core PMU ("cpu": PERF_TYPE_HARDWARE, HW_CACHE, RAW) only with -c.
 * The guest's emulated perfmon (tools/testing/itrace/qemu/README.md,
 * "Perfmon") has counters that never count and no RDPMC: an event on one
 * of them makes x86_perf_event_update() execute RDPMC in the kernel, which
 * TCG answers with #UD, an Oops.
 */
static bool core_pmu_type(unsigned int type)
{
	int i;

	if (type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE ||
	    type == PERF_TYPE_RAW)
		return true;
	for (i = 0; i < sh->nr_pmus; i++)
		if (sh->pmus[i].type == (int)type &&
		    !strcmp(sh->pmus[i].name, "cpu"))
			return true;
	return false;
}

/* Is type an itrace PMU's?  op_open_other()'s random type may be one. */
static bool itrace_pmu_type(unsigned int type)
{
	int i;

	for (i = 0; i < sh->nr_pmus; i++)
		if (sh->pmus[i].type == (int)type && sh->pmus[i].itrace)
			return true;
	return false;
}

static const struct pmu_info *pick_pmu(struct ctx *c, bool itrace)
{
	int i, start = rnd(&c->rng, MAX_PMUS);

	for (i = 0; i < sh->nr_pmus; i++) {
		const struct pmu_info *pi = &sh->pmus[(start + i) % sh->nr_pmus];

		if (pi->itrace == itrace &&
		    (sh->core_pmu || !core_pmu_type(pi->type)))
			return pi;
	}
	return NULL;
}

/* A pid for an event or prlimit(): self, a thread, another worker, ... */
static pid_t pick_target(struct ctx *c)
{
	int i, k;

	switch (rnd(&c->rng, 6)) {
	case 0:
		return 0;
	case 1:
		return getpid();
	case 2:		/* a thread of this worker, or another worker's */
	case 3:
		k = rnd(&c->rng, NR_TARGETS);
		for (i = 0; i < NR_TARGETS; i++) {
			pid_t pid = sh->targets[(k + i) % NR_TARGETS].pid;

			if (pid)
				return pid;
		}
		return 0;
	case 4:
		k = rnd(&c->rng, MAX_KIDS);
		return c->p->kids[k] ? c->p->kids[k] : 1;
	default:
		return one_in(&c->rng, 2) ? 1 : 0x3ffffff0;	/* init, none */
	}
}

static unsigned int pick_attr_size(struct ctx *c)
{
	static const unsigned int sizes[] = {
		0, PERF_ATTR_SIZE_VER0, PERF_ATTR_SIZE_VER5,
		PERF_ATTR_SIZE_VER7, PERF_ATTR_SIZE_VER8, 144, 160, 4096,
	};

	if (!one_in(&c->rng, 8))
		return sizeof(struct perf_event_attr);
	return sizes[rnd(&c->rng, ARRAY_SIZE(sizes))];
}

/* Room for attr.size up to 4096: the bytes past the struct are zero. */
union attr_buf {
	struct perf_event_attr attr;
	char raw[4096];
};

static void add_event(struct ctx *c, int fd, unsigned int flags)
{
	obj_add(c->p, OBJ_EVENT, fd, flags, event_id(fd));
}

void op_open_pt(struct ctx *c)
{
	static __thread union attr_buf a;
	struct perf_event_attr *attr = &a.attr;
	const struct pmu_info *pi = pick_pmu(c, true);
	unsigned int flags = EV_ITRACE;
	unsigned long oflags = 0;
	int cpu = -1, group = -1, fd;
	pid_t pid = 0;
	struct obj o;

	if (!pi) {
		say(c, "(no itrace PMU)");
		done(c, ENODEV);
		return;
	}
	memset(&a, 0, sizeof(a));
	attr->type = pi->type;
	attr->size = pick_attr_size(c);
	/* mostly the default, or one format bit, now and then anything */
	switch (rnd(&c->rng, 10)) {
	case 0:
	case 1:
		attr->config = 1ULL << rnd(&c->rng, 64) & pi->config_mask;
		break;
	case 2:
		attr->config = rnd64(&c->rng) & pi->config_mask;
		break;
	case 3:
		if (one_in(&c->rng, 2))
			attr->config = rnd64(&c->rng);
		break;
	}
	attr->disabled = rnd(&c->rng, 2);
	attr->exclude_kernel = c->p->root ? rnd(&c->rng, 2) :
					    !one_in(&c->rng, 8);
	attr->exclude_hv = 1;
	attr->inherit = one_in(&c->rng, 6);
	attr->enable_on_exec = one_in(&c->rng, 8);
	attr->sample_id_all = rnd(&c->rng, 2);
	attr->aux_start_paused = one_in(&c->rng, 16);
	switch (rnd(&c->rng, 4)) {
	case 0:
		attr->aux_watermark = page_size() << rnd(&c->rng, 4);
		break;
	case 1:
		attr->aux_watermark = rnd(&c->rng, 1 << 20);
		break;
	}
	if (one_in(&c->rng, 16) && attr->size >= 144)
		/* config4 of PERF_ATTR_SIZE_VER9, which must be 0 */
		*(uint64_t *)(a.raw + 136) = rnd64(&c->rng) | 1;
	switch (rnd(&c->rng, 6)) {
	case 0:
	case 1:
		break;
	case 2:
		cpu = rnd(&c->rng, sh->nr_cpus + 1);
		flags |= EV_CPU;
		break;
	case 3:
		pid = -1;
		cpu = rnd(&c->rng, sh->nr_cpus);
		flags |= EV_CPU;
		break;
	default:
		pid = pick_target(c);
		break;
	}
	if (attr->inherit && cpu < 0)
		flags |= EV_INHERIT;
	if (one_in(&c->rng, 8) && obj_pick(c, K_EVENT, &o) >= 0)
		group = o.fd;
	if (one_in(&c->rng, 3))
		oflags |= PERF_FLAG_FD_CLOEXEC;
	say(c, "%s config 0x%llx size %u pid %d cpu %d group %d%s%s%s",
	    pi->name, (unsigned long long)attr->config, attr->size, (int)pid,
	    cpu, group, attr->inherit ? " inherit" : "",
	    attr->exclude_kernel ? "" : " kernel",
	    attr->disabled ? " disabled" : "");
	fd = sys_perf_event_open(attr, pid, cpu, group, oflags);
	LOOSE(c, err_of(fd), 0, EACCES, EBUSY, EINVAL, ENOENT, ESRCH, EPERM,
	      E2BIG, EOPNOTSUPP, ENOMEM, EMFILE, ENODEV, EBADF);
	if (fd >= 0)
		add_event(c, fd, flags);
}

void op_open_sw(struct ctx *c)
{
	static const unsigned long long configs[] = {
		PERF_COUNT_SW_DUMMY, PERF_COUNT_SW_CPU_CLOCK,
		PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_PAGE_FAULTS,
		PERF_COUNT_SW_CONTEXT_SWITCHES,
	};
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
	};
	int cpu = -1, group = -1, fd;
	pid_t pid = 0;
	struct obj o;

	attr.config = configs[rnd(&c->rng, ARRAY_SIZE(configs))];
	attr.disabled = rnd(&c->rng, 2);
	attr.exclude_kernel = c->p->root ? rnd(&c->rng, 2) : 1;
	attr.exclude_hv = 1;
	attr.inherit = one_in(&c->rng, 6);
	attr.sample_id_all = rnd(&c->rng, 2);
	attr.mmap = rnd(&c->rng, 2);
	attr.comm = rnd(&c->rng, 2);
	attr.task = one_in(&c->rng, 4);
	if (rnd(&c->rng, 2)) {
		attr.sample_period = 1000 + rnd(&c->rng, 200000);
		attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				   PERF_SAMPLE_TIME;
		attr.wakeup_events = rnd(&c->rng, 4);
	}
	/* a member of a trace event's group: samples with its trace */
	if (rnd(&c->rng, 2) && obj_pick_flags(c, K_EVENT, EV_ITRACE, &o) >= 0) {
		group = o.fd;
		if (attr.sample_period && rnd(&c->rng, 2)) {
			attr.sample_type |= PERF_SAMPLE_AUX;
			attr.aux_sample_size = page_size() << rnd(&c->rng, 4);
		}
		if (one_in(&c->rng, 4))
			attr.aux_pause = 1;
		else if (one_in(&c->rng, 4))
			attr.aux_resume = 1;
	}
	if (one_in(&c->rng, 4))
		cpu = rnd(&c->rng, sh->nr_cpus);
	say(c, "config %llu period %llu sample 0x%llx group %d cpu %d",
	    (unsigned long long)attr.config,
	    (unsigned long long)attr.sample_period,
	    (unsigned long long)attr.sample_type, group, cpu);
	fd = sys_perf_event_open(&attr, pid, cpu, group, 0);
	/* ENODEV: the leader is dead (its task exited, removed on exec) */
	LOOSE(c, err_of(fd), 0, EACCES, EINVAL, ENOMEM, EMFILE, EBADF, EBUSY,
	      ENODEV);
	if (fd >= 0)
		add_event(c, fd, EV_SW | (cpu >= 0 ? EV_CPU : 0) |
			  (attr.inherit && cpu < 0 ? EV_INHERIT : 0));
}

static volatile long bp_target;

void op_open_other(struct ctx *c)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.disabled = 1,
	};
	const struct pmu_info *pi = pick_pmu(c, false);
	int fd;

	if (one_in(&c->rng, 3) || !pi) {
		attr.type = PERF_TYPE_BREAKPOINT;
		attr.bp_addr = (unsigned long)&bp_target;
		attr.bp_type = HW_BREAKPOINT_W;
		attr.bp_len = HW_BREAKPOINT_LEN_8;
		attr.sample_period = 1 + rnd(&c->rng, 100);
	} else if (one_in(&c->rng, 8)) {
		attr.type = rnd(&c->rng, 64);	/* maybe no PMU at all */
		attr.config = rnd(&c->rng, 16);
		if (!sh->core_pmu && core_pmu_type(attr.type))
			attr.type = PERF_TYPE_SOFTWARE;
	} else {
		attr.type = pi->type;
		attr.config = rnd64(&c->rng) & (pi->config_mask ?: 0xff);
	}
	say(c, "type %u config 0x%llx", attr.type,
	    (unsigned long long)attr.config);
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	LOOSE(c, err_of(fd), 0, ENOENT, EINVAL, EACCES, EOPNOTSUPP, ENODEV,
	      ENOSPC, EMFILE);
	if (fd >= 0)
		add_event(c, fd, attr.type == PERF_TYPE_SOFTWARE ? EV_SW :
			  itrace_pmu_type(attr.type) ? EV_ITRACE : 0);
}

static int trace_fd_open(int fd, unsigned long flags)
{
	return sys_perf_event_open(NULL, -1, -1, fd,
				   PERF_FLAG_FD_ITRACE | flags);
}

/* The trace fd of an event, valid or not as the event's PMU says. */
void op_tfd(struct ctx *c)
{
	unsigned long flags = one_in(&c->rng, 3) ? PERF_FLAG_FD_CLOEXEC : 0;
	struct obj o;
	int slot, fd, err;

	slot = obj_pick(c, K_EVENT, &o);
	if (slot < 0) {
		idle(c, "no event");
		return;
	}
	say(c, "event fd %d flags 0x%x%s", o.fd, o.flags,
	    flags ? " cloexec" : "");
	fd = trace_fd_open(o.fd, flags);
	err = err_of(fd);
	/*
	 * The slot unchanged after the call: o.fd was the event all along
	 * (op_close() frees a slot before it closes the fd).  Else another
	 * thread closed it and o.fd may be anything now: what fd is, is
	 * not known, so it is not kept.
	 */
	if (!obj_same(c, slot, &o)) {
		done(c, err);
		if (fd >= 0)
			close(fd);
		return;
	}
	if (o.flags & EV_ITRACE)
		STRICT(c, err, 0, EMFILE, ENFILE, ENOMEM);
	else	/* "the event's PMU does not support trace fds" */
		STRICT(c, err, EINVAL);
	if (fd >= 0)
		obj_add(c->p, OBJ_TFD, fd, o.flags, o.id);
}

/* perf_event_open() with PERF_FLAG_FD_ITRACE and one thing wrong. */
void op_tfd_bad(struct ctx *c)
{
	static const unsigned long other_flags[] = {
		PERF_FLAG_FD_NO_GROUP, PERF_FLAG_FD_OUTPUT,
		PERF_FLAG_PID_CGROUP,
	};
	struct perf_event_attr attr = { .size = sizeof(attr) };
	unsigned long flags = PERF_FLAG_FD_ITRACE;
	int slot, fd, err, want, gfd, pid = -1, cpu = -1;
	struct perf_event_attr *ap = NULL;
	struct obj o;
	unsigned int v = rnd(&c->rng, 9);

	slot = obj_pick(c, v == 7 ? K_TFD : K_EVENT, &o);
	if (slot < 0 && v < 5)
		v = 5;
	else if (slot < 0 && v == 7)
		v = 8;
	gfd = o.fd;
	want = EINVAL;
	switch (v) {
	case 0:
		ap = &attr;
		break;
	case 1:
		pid = one_in(&c->rng, 2) ? 0 : getpid();
		break;
	case 2:
		cpu = rnd(&c->rng, sh->nr_cpus);
		break;
	case 3:
		flags |= other_flags[rnd(&c->rng, ARRAY_SIZE(other_flags))];
		break;
	case 4:
		flags |= 1UL << (5 + rnd(&c->rng, 59));
		break;
	case 5:
		gfd = one_in(&c->rng, 2) ? -1 : INT_MAX;
		want = EBADF;
		break;
	case 6:
		gfd = 1 << 20;		/* above any RLIMIT_NOFILE */
		want = EBADF;
		break;
	case 7:				/* a trace fd is no event fd */
		want = EBADF;
		break;
	default:			/* an epoll fd is no perf event */
		gfd = c->p->epfd;
		want = EBADF;
		break;
	}
	say(c, "variant %u fd %d flags 0x%lx pid %d cpu %d attr %p", v, gfd,
	    flags, pid, cpu, (void *)ap);
	fd = sys_perf_event_open(ap, pid, cpu, gfd, flags);
	err = err_of(fd);
	if (v != 5 && v != 6 && v != 8 && !obj_same(c, slot, &o))
		done(c, err);
	else
		STRICT(c, err, want);
	if (fd >= 0)
		close(fd);
}

void op_close(struct ctx *c)
{
	struct obj o;

	if (obj_take(c, K_ANY, &o) < 0) {
		idle(c, "nothing open");
		return;
	}
	say(c, "fd %d kind %d", o.fd, o.kind);
	done(c, err_of(close(o.fd)));
}

/*
 * A duplicate of the object in slot, or -1: checked after the dup, so that
 * a thread that closed o->fd meanwhile (and something else that took the
 * number) cannot give the table a file of another kind under o's name.
 */
static int dup_same(struct ctx *c, int slot, const struct obj *o, bool cloexec)
{
	int fd = cloexec ? fcntl(o->fd, F_DUPFD_CLOEXEC, 0) : dup(o->fd);

	if (fd >= 0 && !obj_same(c, slot, o)) {
		close(fd);
		errno = EBADF;	/* closed by another thread, as far as we know */
		return -1;
	}
	return fd;
}

void op_dup(struct ctx *c)
{
	struct obj o;
	int fd, slot;

	slot = obj_pick(c, K_ANY, &o);
	if (slot < 0) {
		idle(c, "nothing open");
		return;
	}
	say(c, "fd %d kind %d", o.fd, o.kind);
	fd = dup_same(c, slot, &o, !one_in(&c->rng, 2));
	done(c, err_of(fd));
	if (fd >= 0)
		obj_add(c->p, o.kind, fd, o.flags, o.id);
}

static const char * const filters[] = {
	"filter 0x1000/0x1000@/bin/busybox",
	"start 0x400000/0x100@/bin/busybox",
	"stop 0x1000/0x10@/no/such/file",
	"filter 0/0x1000",
	"filter 0xffffffff81000000/0x1000",
	"tracestop 0x0/0x0@/proc/self/exe",
	"filter garbage",
	"",
};

void op_ioctl_tfd(struct ctx *c)
{
	static const unsigned long not_tfd[] = {
		PERF_EVENT_IOC_REFRESH, PERF_EVENT_IOC_RESET,
		PERF_EVENT_IOC_PERIOD, PERF_EVENT_IOC_SET_OUTPUT,
		PERF_EVENT_IOC_SET_FILTER, PERF_EVENT_IOC_ID,
		PERF_EVENT_IOC_SET_BPF, PERF_EVENT_IOC_PAUSE_OUTPUT,
		PERF_EVENT_IOC_QUERY_BPF, PERF_EVENT_IOC_MODIFY_ATTRIBUTES,
		0x5401 /* TCGETS */,
	};
	uint64_t buf[32] = { 0 };
	unsigned long cmd, arg = 0;
	int slot, ret, err;
	struct obj o;
	bool valid;

	slot = obj_pick(c, K_TFD, &o);
	if (slot < 0) {
		idle(c, "no trace fd");
		return;
	}
	switch (rnd(&c->rng, 6)) {
	case 0:
	case 1:
		cmd = PERF_EVENT_IOC_ENABLE;
		break;
	case 2:
		cmd = PERF_EVENT_IOC_DISABLE;
		break;
	case 3:
		cmd = _IO('$', 12 + rnd(&c->rng, 200));
		break;
	default:
		cmd = not_tfd[rnd(&c->rng, ARRAY_SIZE(not_tfd))];
		break;
	}
	valid = cmd == PERF_EVENT_IOC_ENABLE || cmd == PERF_EVENT_IOC_DISABLE;
	if (valid)
		arg = one_in(&c->rng, 3) ? PERF_IOC_FLAG_GROUP : 0;
	else
		arg = one_in(&c->rng, 2) ? (unsigned long)buf : rnd(&c->rng, 8);
	say(c, "tfd %d cmd 0x%lx arg 0x%lx", o.fd, cmd, arg);
	ret = ioctl(o.fd, cmd, arg);
	err = err_of(ret);
	if (!obj_same(c, slot, &o))
		done(c, err);
	else if (valid)	/* "act on the event exactly as on the event fd" */
		STRICT(c, err, 0);
	else		/* "any request but ... ENABLE and ... DISABLE" */
		STRICT(c, err, ENOTTY);
}

void op_ioctl_event(struct ctx *c)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_BREAKPOINT,
		.bp_type = HW_BREAKPOINT_W,
		.bp_len = HW_BREAKPOINT_LEN_8,
		.bp_addr = (unsigned long)&bp_target,
	};
	uint64_t val = 0;
	unsigned long cmd, arg = 0;
	struct obj o;

	if (obj_pick(c, K_EVENT, &o) < 0) {
		idle(c, "no event");
		return;
	}
	switch (rnd(&c->rng, 10)) {
	case 0:
	case 1:
		cmd = PERF_EVENT_IOC_ENABLE;
		arg = one_in(&c->rng, 3) ? PERF_IOC_FLAG_GROUP : 0;
		break;
	case 2:
		cmd = PERF_EVENT_IOC_DISABLE;
		arg = one_in(&c->rng, 3) ? PERF_IOC_FLAG_GROUP : 0;
		break;
	case 3:
		cmd = PERF_EVENT_IOC_RESET;
		break;
	case 4:
		cmd = PERF_EVENT_IOC_REFRESH;
		arg = rnd(&c->rng, 3);
		break;
	case 5:
		cmd = PERF_EVENT_IOC_PERIOD;
		val = rnd(&c->rng, 2) ? rnd(&c->rng, 100000) : rnd64(&c->rng);
		arg = (unsigned long)&val;
		break;
	case 6:
		cmd = PERF_EVENT_IOC_ID;
		arg = (unsigned long)&val;
		break;
	case 7:
		cmd = PERF_EVENT_IOC_PAUSE_OUTPUT;
		arg = rnd(&c->rng, 2);
		break;
	case 8:
		cmd = PERF_EVENT_IOC_SET_FILTER;
		arg = (unsigned long)filters[rnd(&c->rng, ARRAY_SIZE(filters))];
		break;
	default:
		cmd = PERF_EVENT_IOC_MODIFY_ATTRIBUTES;
		arg = (unsigned long)&attr;
		break;
	}
	say(c, "event %d cmd 0x%lx arg 0x%lx", o.fd, cmd, arg);
	done(c, err_of(ioctl(o.fd, cmd, arg)));
}

/*
 * PERF_EVENT_IOC_SET_OUTPUT: "An event whose trace is mapped through a
 * trace fd cannot be redirected to another buffer, nor back to its own
 * with -1: EINVAL".
 */
void op_set_output(struct ctx *c)
{
	struct proc *p = c->p;
	struct obj o, to;
	int slot, err, target = -1;
	bool mapped;

	slot = obj_pick(c, K_EVENT, &o);
	if (slot < 0) {
		idle(c, "no event");
		return;
	}
	if (rnd(&c->rng, 3) && obj_pick(c, K_EVENT, &to) >= 0)
		target = to.fd;
	pthread_mutex_lock(&p->lock);
	mapped = map_holds(p, o.id, M_TRACE);
	if (!mapped)
		pthread_mutex_unlock(&p->lock);
	say(c, "event %d -> %d%s", o.fd, target,
	    mapped ? " (its trace is mapped)" : "");
	/* a long: the kernel compares the argument with -1UL */
	err = err_of(ioctl(o.fd, PERF_EVENT_IOC_SET_OUTPUT, (long)target));
	/* both events' mappings now show one buffer: see garbled_now() */
	if (!err && target >= 0 && o.id && to.id) {
		__atomic_store_n(&sh->alias[o.id % GARBLE_SLOTS], to.id,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&sh->alias[to.id % GARBLE_SLOTS], o.id,
				 __ATOMIC_RELEASE);
	}
	if (mapped) {
		bool same = p->obj[slot].gen == o.gen;

		pthread_mutex_unlock(&p->lock);
		if (same)
			STRICT(c, err, EINVAL);
		else
			done(c, err);
	} else {
		LOOSE(c, err, 0, EINVAL, EBADF, EBUSY);
	}
}

/*
 * poll() of a trace fd: EPOLLHUP alone, or EPOLLIN | EPOLLRDNORM, or
 * nothing; nothing in overwrite mode.
 */
static void check_revents(struct ctx *c, short rev, bool overwrite)
{
	if (rev & ~(POLLIN | POLLRDNORM | POLLHUP))
		finding(c, "poll: trace fd events",
			"poll of a trace fd gave 0x%x", rev);
	else if ((rev & POLLHUP) && rev != POLLHUP)
		finding(c, "poll: HUP with others",
			"poll of a trace fd gave POLLHUP with 0x%x", rev);
	else if (overwrite && (rev & POLLIN))
		finding(c, "poll: IN in overwrite mode",
			"poll of an overwrite-mode trace fd gave 0x%x", rev);
}

void op_poll(struct ctx *c)
{
	struct proc *p = c->p;
	struct pollfd pfd;
	bool overwrite = false, locked = false;
	int slot, ret, i;
	struct obj o;

	slot = obj_pick(c, rnd(&c->rng, 3) ? K_TFD : K_EVENT, &o);
	if (slot < 0) {
		idle(c, "nothing to poll");
		return;
	}
	pfd.fd = o.fd;
	pfd.events = POLLIN | POLLOUT | POLLPRI | POLLRDNORM;
	/* while we hold its read-only mapping, the trace is in overwrite mode */
	if (o.kind == OBJ_TFD && o.id && one_in(&c->rng, 2)) {
		pthread_mutex_lock(&p->lock);
		locked = true;
		for (i = 0; i < MAX_MAPS; i++)
			if (p->map[i].kind == MAP_TRACE &&
			    p->map[i].id == o.id && p->map[i].overwrite)
				overwrite = true;
	}
	say(c, "fd %d kind %d%s", o.fd, o.kind,
	    overwrite ? " (overwrite mode)" : "");
	ret = poll(&pfd, 1, locked ? 0 : rnd(&c->rng, 5));
	if (locked) {
		if (p->obj[slot].gen != o.gen)
			overwrite = false;
		pthread_mutex_unlock(&p->lock);
	}
	done(c, err_of(ret));
	if (ret == 1 && o.kind == OBJ_TFD && obj_same(c, slot, &o))
		check_revents(c, pfd.revents, overwrite);
}

void op_epoll(struct ctx *c)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET }, out[4];
	struct obj o;
	int n, err = 0;

	if (obj_pick(c, K_TFD | K_EVENT, &o) >= 0) {
		ev.data.fd = o.fd;
		err = err_of(epoll_ctl(c->p->epfd, rnd(&c->rng, 2) ?
				       EPOLL_CTL_ADD : EPOLL_CTL_DEL,
				       o.fd, &ev));
	}
	say(c, "fd %d ctl %s", o.fd, errname(err));
	n = epoll_wait(c->p->epfd, out, 4, rnd(&c->rng, 3));
	done(c, err_of(n));
}

/* read() and write() of a trace fd: "not supported (EINVAL)". */
void op_rw(struct ctx *c)
{
	char buf[4096];
	size_t len = rnd(&c->rng, sizeof(buf));
	bool wr = rnd(&c->rng, 2);
	struct obj o;
	int slot, err;

	slot = obj_pick(c, rnd(&c->rng, 4) ? K_TFD : K_EVENT, &o);
	if (slot < 0) {
		idle(c, "nothing to read");
		return;
	}
	memset(buf, 0, sizeof(buf));
	say(c, "%s fd %d kind %d len %zu", wr ? "write" : "read", o.fd,
	    o.kind, len);
	err = err_of(wr ? write(o.fd, buf, len) : read(o.fd, buf, len));
	if (o.kind == OBJ_TFD && obj_same(c, slot, &o))
		STRICT(c, err, EINVAL);
	else
		done(c, err);
}

/* What travels with the fds: their kinds, flags and event ids. */
struct scm_desc {
	int n;
	struct {
		int kind;
		unsigned int flags;
		uint64_t id;
	} d[3];
};

void op_scm_send(struct ctx *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char cbuf[CMSG_SPACE(3 * sizeof(int))];
	struct scm_desc desc = { 0 };
	struct iovec iov = { &desc, sizeof(desc) };
	struct msghdr msg = {
		.msg_name = &sa, .msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf,
	};
	struct cmsghdr *cm;
	int fds[3], i, n, to, s, err, slot;
	struct obj o;

	/*
	 * Duplicates are sent, each checked to be the object its slot names
	 * (dup_same()): the receiver takes the kinds in desc for the truth.
	 */
	n = 1 + rnd(&c->rng, 3);
	for (i = 0; i < n;) {
		slot = obj_pick(c, K_ANY, &o);
		if (slot < 0)
			break;
		fds[i] = dup_same(c, slot, &o, true);
		if (fds[i] < 0) {
			n--;
			continue;
		}
		desc.d[i].kind = o.kind;
		desc.d[i].flags = o.flags;
		desc.d[i].id = o.id;
		i++;
	}
	desc.n = i;
	to = rnd(&c->rng, MAX_WORKERS);
	msg.msg_namelen = offsetof(struct sockaddr_un, sun_path) +
			  worker_sock_name(to, sa.sun_path, sizeof(sa.sun_path));
	if (desc.n) {
		msg.msg_controllen = CMSG_SPACE(desc.n * sizeof(int));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(desc.n * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, desc.n * sizeof(int));
	} else {
		msg.msg_control = NULL;
	}
	say(c, "%d fds to worker %d", desc.n, to);
	s = c->p->sock >= 0 ? c->p->sock :
		socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	err = err_of(sendmsg(s, &msg, MSG_DONTWAIT));
	if (s != c->p->sock)
		close(s);
	for (i = 0; i < desc.n; i++)
		close(fds[i]);
	LOOSE(c, err, 0, EAGAIN, ECONNREFUSED, EBADF, ENOENT, ENOBUFS,
	      ETOOMANYREFS);
}

void op_scm_recv(struct ctx *c)
{
	char cbuf[CMSG_SPACE(8 * sizeof(int))];
	struct scm_desc desc = { 0 };
	struct iovec iov = { &desc, sizeof(desc) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	int flags = MSG_DONTWAIT | (rnd(&c->rng, 2) ? MSG_CMSG_CLOEXEC : 0);
	struct cmsghdr *cm;
	ssize_t n;
	int i, k;

	say(c, "sock %d", c->p->sock);
	n = recvmsg(c->p->sock, &msg, flags);
	LOOSE(c, err_of(n), 0, EAGAIN, EBADF);
	if (n < 0)
		return;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		int *fds = (int *)CMSG_DATA(cm);

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k; i++) {
			if (i < desc.n && i < 3 && n == sizeof(desc))
				obj_add(c->p, desc.d[i].kind, fds[i],
					desc.d[i].flags, desc.d[i].id);
			else
				close(fds[i]);
		}
	}
}
