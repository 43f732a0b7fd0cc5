// SPDX-License-Identifier: GPL-2.0
/*
 * itrace: PERF_SAMPLE_ITRACE, the newest instruction trace in every sample
 *
 * An event of any PMU that asks for PERF_SAMPLE_ITRACE gets a kernel-owned
 * trace event of the itrace PMU attr.itrace_sample_type (config
 * attr.itrace_config) on the same task and CPU, in overwrite mode with a
 * buffer of attr.itrace_sample_size bytes rounded up to a power-of-two
 * number of pages; each of its inherited children gets one of its own when
 * it is made (perf_event_itrace_fork()). Each sample then carries the
 * newest bytes of that trace, copied in the sampled event's overflow path
 * through the PMU's pmu::snapshot_aux(), which never starts or stops the
 * PMU (kernel/events/core.c, perf_prepare_sample()).
 *
 * Unlike mainline's PERF_SAMPLE_AUX, the user builds no group and maps no
 * AUX area: the kernel owns the trace event (struct itrace_sampler). It is
 * made with the permission checks of a user's event (itrace_kevent.c),
 * charged to the user who opened the sampled event, traces what the
 * sampled event counts (its exclude_user, exclude_kernel and exclude_hv),
 * and yields its PMU: a user's own event of the PMU on that task or CPU
 * wins, and meanwhile the samples carry no trace (size 0).
 */

#include <linux/itrace.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "internal.h"
#include "itrace_internal.h"

/**
 * struct itrace_sampler - the trace behind a sampled event's samples
 * @trace: kernel-owned trace event, overwrite-mode AUX buffer
 * @owner: who it works for: the opener of the sampled event (shared by
 *	the samplers of its inherited children)
 * @release: frees it in process context once the sampled event is gone
 */
struct itrace_sampler {
	struct perf_event	*trace;
	struct itrace_kowner	owner;
	struct work_struct	release;
};

static void itrace_sampler_release(struct work_struct *work)
{
	struct itrace_sampler *s = container_of(work, struct itrace_sampler,
						release);

	itrace_kevent_release(&s->owner, s->trace);
	itrace_kowner_put(&s->owner);
	kfree(s);
}

/*
 * A trace event of @owner for @event on @task (or its CPU): the attributes
 * of @event's PERF_SAMPLE_ITRACE, its exclude bits, its CPU.
 */
static struct itrace_sampler *
itrace_sampler_create(struct perf_event *event, struct task_struct *task,
		      const struct itrace_kowner *owner)
{
	const struct perf_event_attr *sattr = &event->attr;
	unsigned long nr_pages;
	struct perf_event_attr attr;
	struct itrace_sampler *s;
	int ret;

	itrace_kevent_attr(&attr, sattr->itrace_sample_type,
			   sattr->itrace_config);
	attr.exclude_user = sattr->exclude_user;
	attr.exclude_kernel = sattr->exclude_kernel;
	attr.exclude_hv = sattr->exclude_hv;

	ret = itrace_kevent_allowed(&attr, task);
	if (ret)
		return ERR_PTR(ret);

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	itrace_kowner_copy(&s->owner, owner);
	INIT_WORK(&s->release, itrace_sampler_release);

	nr_pages = roundup_pow_of_two(DIV_ROUND_UP(sattr->itrace_sample_size,
						   PAGE_SIZE));
	s->trace = itrace_kevent_create(&s->owner, &attr, event->cpu, task,
					nr_pages);
	if (IS_ERR(s->trace)) {
		ret = PTR_ERR(s->trace);
		goto free;
	}
	/* Samples copy the trace through pmu::snapshot_aux() */
	if (!s->trace->pmu->snapshot_aux) {
		itrace_kevent_release(&s->owner, s->trace);
		ret = -EOPNOTSUPP;
		goto free;
	}
	perf_event_enable(s->trace);

	return s;

free:
	itrace_kowner_put(&s->owner);
	kfree(s);

	return ERR_PTR(ret);
}

/**
 * itrace_sample_init() - the trace behind a new event's samples
 * @event: an event of perf_event_open() with PERF_SAMPLE_ITRACE, not yet
 *	installed in its context
 * @task: the task it counts, or NULL for a CPU-wide event
 *
 * Makes the kernel-owned trace event that @event's samples copy from,
 * owned by current, the opener; _free_event() lets it go
 * (itrace_sample_release()).
 *
 * Context: process context, perf_event_open().
 * Return: 0 on success;
 * -EINVAL if attr.itrace_sample_size is 0 or above ITRACE_SAMPLE_MAX, if
 * attr.itrace_sample_type is not the type of an itrace PMU, or if @event
 * itself is an event of an itrace PMU;
 * -EACCES or the LSM's error if current may not trace @task (and the
 * kernel, unless @event excludes it);
 * -EOPNOTSUPP if that PMU makes no kernel-owned events or cannot copy its
 * trace into samples (pmu::snapshot_aux());
 * -EPERM if the buffer exceeds current's perf_event_mlock_kb allowance
 * without CAP_IPC_LOCK, -ENOMEM, or the itrace PMU's error for the event.
 */
int itrace_sample_init(struct perf_event *event, struct task_struct *task)
{
	u32 size = event->attr.itrace_sample_size;
	struct itrace_kowner owner;
	struct itrace_sampler *s;

	if (!size || size > ITRACE_SAMPLE_MAX || is_itrace_event(event))
		return -EINVAL;

	itrace_kowner_init(&owner);
	s = itrace_sampler_create(event, task, &owner);
	itrace_kowner_put(&owner);
	if (IS_ERR(s))
		return PTR_ERR(s);

	/* Before the event can take a sample: it is not installed yet */
	event->itrace_sampler = s;

	return 0;
}

/**
 * itrace_sample_inherit() - the trace behind an inherited event's samples
 * @event: an inherited event with PERF_SAMPLE_ITRACE of a new child task,
 *	which has not run yet
 * @task: that child
 *
 * The child's samples get a trace event of their own, owned by the opener
 * of the parent event. When it cannot be made (memory, accounting, a
 * policy that changed), the child's samples carry no trace (size 0): fork
 * does not fail for it.
 *
 * Context: process context, the end of copy_process(); the caller holds a
 * reference to @event.
 */
void itrace_sample_inherit(struct perf_event *event, struct task_struct *task)
{
	struct itrace_sampler *parent = event->parent ?
					event->parent->itrace_sampler : NULL;
	struct itrace_sampler *s;

	if (!parent || event->itrace_sampler)
		return;

	s = itrace_sampler_create(event, task, &parent->owner);
	if (IS_ERR(s))
		return;

	/* Pairs with the READ_ONCE() of itrace_sample_trace(), maybe in NMI */
	smp_store_release(&event->itrace_sampler, s);
}

/**
 * itrace_sample_trace() - the trace event a sample copies from
 * @event: an event with PERF_SAMPLE_ITRACE
 *
 * Context: any, NMI included.
 * Return: the kernel-owned trace event, or NULL if @event has none.
 */
struct perf_event *itrace_sample_trace(struct perf_event *event)
{
	struct itrace_sampler *s = READ_ONCE(event->itrace_sampler);

	return s ? s->trace : NULL;
}

/**
 * itrace_sample_release() - let a dead event's trace event go
 * @event: an event being freed, which takes no sample any more
 *
 * The trace event is released (and its owner refunded) from a workqueue:
 * this runs where the event is freed, where the task's context may be
 * locked.
 *
 * Context: any, from the freeing of @event.
 */
void itrace_sample_release(struct perf_event *event)
{
	struct itrace_sampler *s = event->itrace_sampler;

	if (!s)
		return;

	event->itrace_sampler = NULL;
	schedule_work(&s->release);
}
