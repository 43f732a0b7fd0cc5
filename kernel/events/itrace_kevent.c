// SPDX-License-Identifier: GPL-2.0
/*
 * itrace: kernel-owned trace events
 *
 * The features that keep a trace without a user-space reader (RLIMIT_ITRACE
 * core dumps; PERF_SAMPLE_ITRACE) make trace events the kernel owns: user
 * mode only unless asked otherwise, an overwrite-mode AUX buffer that keeps
 * the newest trace, no perf stream, no mapping. Such an event works for
 * the task that asked for it (struct itrace_kowner):
 *
 * - it gets the permission checks perf_event_open() would make for that
 *   task (itrace_kevent_allowed());
 * - its buffer is charged to that task's user, like the part of an AUX
 *   mapping within perf_event_mlock_kb: there is no mm to charge pinned
 *   memory to. Beyond the allowance only with CAP_IPC_LOCK (or
 *   perf_event_paranoid -1), and even then one user's kernel-owned
 *   buffers and mappings stay within an eighth of RAM; a buffer larger
 *   than half of the memory available fails with ENOMEM. The pages are
 *   allocated without retrying hard or waking the OOM killer, and charged
 *   to the asker's memory cgroup;
 * - it yields its PMU to every user's event (perf_event_create_kernel_trace()).
 */

#include <linux/cred.h>
#include <linux/itrace.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/security.h>

#include "internal.h"
#include "itrace_internal.h"

#ifdef CONFIG_MEMCG
static struct mem_cgroup *itrace_memcg_get(struct mem_cgroup *memcg)
{
	if (memcg)
		css_get(&memcg->css);

	return memcg;
}
#else
static struct mem_cgroup *itrace_memcg_get(struct mem_cgroup *memcg)
{
	return NULL;
}
#endif

/**
 * itrace_kowner_init() - a kernel-owned event works for current
 * @owner: filled in; itrace_kowner_put() drops it
 *
 * Takes current's credentials and memory cgroup, and decides once whether
 * current may lock memory beyond the perf allowance (CAP_IPC_LOCK), so
 * that later forks and execs, which charge the same owner, audit nothing.
 *
 * Context: process context.
 */
void itrace_kowner_init(struct itrace_kowner *owner)
{
	owner->cred = get_current_cred();
	owner->memcg = current->mm ? get_mem_cgroup_from_mm(current->mm) : NULL;
	owner->can_lock = capable(CAP_IPC_LOCK);
}

/**
 * itrace_kowner_copy() - another reference to the same owner
 * @dst: filled in
 * @src: an owner from itrace_kowner_init()
 */
void itrace_kowner_copy(struct itrace_kowner *dst,
			const struct itrace_kowner *src)
{
	dst->cred = get_cred(src->cred);
	dst->memcg = itrace_memcg_get(src->memcg);
	dst->can_lock = src->can_lock;
}

/**
 * itrace_kowner_put() - drop an owner
 * @owner: from itrace_kowner_init() or itrace_kowner_copy(); may be all 0
 *
 * Context: any; callers from RCU callbacks included (free_signal_struct()).
 */
void itrace_kowner_put(struct itrace_kowner *owner)
{
	if (owner->cred)
		put_cred(owner->cred);
	mem_cgroup_put(owner->memcg);
	owner->cred = NULL;
	owner->memcg = NULL;
}

/**
 * itrace_kevent_allowed() - may current have a trace event made for it
 * @attr: the event it would get
 * @task: the task it would trace
 *
 * The checks perf_event_open() makes for a user's event: the LSM, kernel
 * tracing permission unless @attr excludes the kernel, ptrace access to a
 * task of another process; and perf_event_paranoid above 2, a level some
 * distributions define ("no perf for users"), refuses without
 * CAP_SYS_ADMIN. Capabilities are checked without an audit record: fork
 * and exec check again for each new thread or program.
 *
 * Context: process context.
 * Return: 0, -EACCES, or the LSM's error.
 */
int itrace_kevent_allowed(const struct perf_event_attr *attr,
			  struct task_struct *task)
{
	int ret;

	if (sysctl_perf_event_paranoid > 2 &&
	    !ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
		return -EACCES;

	ret = security_perf_event_open(PERF_SECURITY_OPEN);
	if (ret)
		return ret;

	if (!attr->exclude_kernel) {
		ret = perf_allow_kernel();
		if (ret)
			return ret;
	}

	if (task && !same_thread_group(task, current) &&
	    !ptrace_may_access(task, PTRACE_MODE_READ_REALCREDS))
		return -EACCES;

	return 0;
}

/**
 * itrace_kevent_check_memory() - could the machine give @nr_pages
 * @nr_pages: pages of kernel-owned trace buffers about to be made
 *
 * Context: any.
 * Return: 0, or -ENOMEM if @nr_pages exceed half of the memory available
 * now (si_mem_available()): such a request would leave the rest of the
 * machine to the OOM killer.
 */
int itrace_kevent_check_memory(unsigned long nr_pages)
{
	long avail = si_mem_available();

	return avail > 0 && nr_pages <= (unsigned long)avail / 2 ? 0 : -ENOMEM;
}

/* The most one user's kernel-owned trace buffers and mappings may lock */
static unsigned long itrace_user_max_pages(void)
{
	return totalram_pages() / 8;
}

/*
 * Charge @nr_pages to @owner's user: see the top of this file. Returns 0,
 * -EPERM beyond what the user may lock, or -ENOMEM.
 */
static int itrace_charge(const struct itrace_kowner *owner,
			 unsigned long nr_pages)
{
	struct user_struct *user = owner->cred->user;
	unsigned long limit, locked;
	int ret;

	ret = itrace_kevent_check_memory(nr_pages);
	if (ret)
		return ret;

	limit = sysctl_perf_event_mlock >> (PAGE_SHIFT - 10);
	limit *= num_online_cpus();

	locked = atomic_long_add_return(nr_pages, &user->perf_mlock);
	if (locked > limit &&
	    ((perf_is_paranoid() && !owner->can_lock) ||
	     locked > itrace_user_max_pages())) {
		atomic_long_sub(nr_pages, &user->perf_mlock);
		return -EPERM;
	}

	return 0;
}

static void itrace_uncharge(const struct itrace_kowner *owner,
			    unsigned long nr_pages)
{
	atomic_long_sub(nr_pages, &owner->cred->user->perf_mlock);
}

/**
 * itrace_kevent_attr() - the attributes of a kernel-owned trace event
 * @attr: filled in
 * @type: perf_event_attr::type of an itrace PMU
 * @config: perf_event_attr::config of the event
 *
 * A disabled event of user mode only; the caller may change the exclude_*
 * bits before itrace_kevent_create().
 */
void itrace_kevent_attr(struct perf_event_attr *attr, u32 type, u64 config)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = type;
	attr->size = sizeof(*attr);
	attr->config = config;
	attr->disabled = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
}

/**
 * itrace_kevent_create() - create a kernel-owned trace event
 * @owner: who it works for, charged for its buffer
 * @attr: its attributes, from itrace_kevent_attr()
 * @cpu: the CPU to trace, or -1 with @task
 * @task: the task to trace, or NULL for a CPU-wide event on @cpu
 * @nr_pages: size of its buffer in pages, a power of two
 *
 * The event traces into an overwrite-mode AUX buffer of @nr_pages that
 * keeps the newest trace; perf_event_enable() starts it. It yields the
 * PMU: a user's own event of the PMU on the same task or CPU never fails
 * with EBUSY because of it, and wins when both want to run; the
 * kernel-owned event then pauses (itrace_kevent_pauses()). The caller
 * makes the permission checks (itrace_kevent_allowed()).
 *
 * Context: process context, may sleep.
 * Return: the event; ERR_PTR(-EINVAL) if its type is no itrace PMU (also
 * when there is no such PMU) or @nr_pages is not a power of two,
 * -EOPNOTSUPP if the PMU makes no kernel-owned events (ITRACE_PMU_KEVENTS),
 * -EPERM or
 * -ENOMEM (see itrace_charge()), -ESRCH if @task exits, or the PMU's error
 * for the event.
 */
struct perf_event *itrace_kevent_create(const struct itrace_kowner *owner,
					struct perf_event_attr *attr, int cpu,
					struct task_struct *task,
					unsigned long nr_pages)
{
	struct mem_cgroup *old_memcg;
	struct perf_event *event;
	int ret;

	if (!nr_pages || !is_power_of_2(nr_pages) || nr_pages > INT_MAX)
		return ERR_PTR(-EINVAL);

	ret = itrace_charge(owner, nr_pages);
	if (ret)
		return ERR_PTR(ret);

	event = perf_event_create_kernel_trace(attr, cpu, task);
	if (IS_ERR(event)) {
		if (PTR_ERR(event) == -ENOENT)
			event = ERR_PTR(-EINVAL);
		goto uncharge;
	}

	ret = -EINVAL;
	if (!is_itrace_event(event))
		goto release;
	ret = -EOPNOTSUPP;
	if (!itrace_pmu_has(event->pmu, ITRACE_PMU_KEVENTS))
		goto release;

	/* The AUX pages go to the owner's memory cgroup (__GFP_ACCOUNT). */
	old_memcg = set_active_memcg(owner->memcg);
	ret = perf_event_alloc_kernel_aux(event, nr_pages, true);
	set_active_memcg(old_memcg);
	if (ret)
		goto release;

	return event;

release:
	perf_event_release_kernel(event);
	event = ERR_PTR(ret);
uncharge:
	itrace_uncharge(owner, nr_pages);

	return event;
}

/**
 * itrace_kevent_release() - stop and free a kernel-owned trace event
 * @owner: the owner it was made for, whose charge is refunded
 * @event: from itrace_kevent_create()
 *
 * Context: process context, may sleep.
 */
void itrace_kevent_release(const struct itrace_kowner *owner,
			   struct perf_event *event)
{
	struct perf_buffer *rb = ring_buffer_get(event);
	unsigned long nr_pages = 0;

	if (rb) {
		nr_pages = rb->aux_nr_pages;
		ring_buffer_put(rb);
	}

	perf_event_release_kernel_aux(event);
	itrace_uncharge(owner, nr_pages);
}

/**
 * itrace_kevent_pauses() - how often a kernel-owned trace event paused
 * @event: from itrace_kevent_create()
 *
 * Return: the number of times its task ran on while another event held
 * its PMU: its trace has a gap for each.
 */
u64 itrace_kevent_pauses(struct perf_event *event)
{
	return perf_event_yield_pauses(event);
}

/* Has anything been written to [@from, @to) of the AUX buffer? */
static bool itrace_aux_written(struct perf_buffer *rb, unsigned long from,
			       unsigned long to)
{
	while (from < to) {
		unsigned long off = offset_in_page(from);
		unsigned long n = min(to - from, PAGE_SIZE - off);

		if (memchr_inv(rb->aux_pages[from >> PAGE_SHIFT] + off, 0, n))
			return true;
		from += n;
	}

	return false;
}

/**
 * itrace_kevent_stop() - stop a kernel-owned trace event for a reader
 * @event: from itrace_kevent_create()
 * @head: set to the offset in the buffer where the PMU stopped writing
 * @wrapped: set if the buffer wrapped: the trace starts at @head, older
 *	trace was overwritten and a decoder synchronizes on the first PSB;
 *	else it starts at offset 0 and ends at @head
 *
 * Disables @event (perf_event_enable() restarts it). The AUX buffer is in
 * overwrite mode, where the driver reports only the offset it writes at;
 * pages start zeroed and hardware trace never ends in a run of zero bytes
 * (PAD) as long as the buffer, so trace after that offset means the
 * buffer wrapped.
 *
 * Context: process context, may sleep.
 * Return: the event's buffer, with a reference for ring_buffer_put(), or
 * NULL if it has none. Its AUX pages stay while the event is disabled.
 */
struct perf_buffer *itrace_kevent_stop(struct perf_event *event,
				       unsigned long *head, bool *wrapped)
{
	struct perf_buffer *rb;
	unsigned long size;

	*head = 0;
	*wrapped = false;

	/* Synchronous: the PMU has written out where it stopped. */
	perf_event_disable(event);

	rb = ring_buffer_get(event);
	if (!rb)
		return NULL;

	size = (unsigned long)rb->aux_nr_pages << PAGE_SHIFT;
	if (!size) {
		ring_buffer_put(rb);
		return NULL;
	}

	*head = READ_ONCE(rb->aux_head) & (size - 1);
	*wrapped = itrace_aux_written(rb, *head, size);

	return rb;
}
