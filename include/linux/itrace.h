/* SPDX-License-Identifier: GPL-2.0 */
/*
 * itrace: instruction flow tracing on top of the perf AUX area
 *
 * An itrace PMU is an AUX PMU (pmu::setup_aux, pmu::free_aux) whose trace
 * user space may also map through a trace fd derived from the event's fd:
 *
 *	tfd = perf_event_open(NULL, -1, -1, event_fd, PERF_FLAG_FD_ITRACE);
 *
 * The trace fd has its own user page (data_head, data_tail) and maps the
 * AUX pages of the event's buffer; see kernel/events/itrace.c.
 */
#ifndef _LINUX_ITRACE_H
#define _LINUX_ITRACE_H

#include <linux/perf_event.h>
#include <uapi/linux/itrace.h>

struct rlimit;
struct task_struct;

/**
 * struct itrace_rlimit_tx - a change of RLIMIT_ITRACE in progress
 * @dumps: the new trace of each thread, made by itrace_rlimit_begin()
 * @gen: generation of this change; older traces are dropped at the end
 * @change: false if the limit keeps its value
 *
 * Between itrace_rlimit_begin() and itrace_rlimit_end() do_prlimit()
 * changes the limit itself; see kernel/sys.c.
 */
struct itrace_rlimit_tx {
	struct list_head	dumps;
	u64			gen;
	bool			change;
};

#ifdef CONFIG_PERF_EVENTS

int itrace_pmu_register(struct pmu *pmu);
bool itrace_aux_counts_wraps(struct perf_event *event);
void itrace_aux_publish(struct perf_output_handle *handle, unsigned long head);
struct pmu *itrace_coredump_pmu(u64 *config);

struct perf_event *itrace_kevent_create(struct pmu *pmu, u64 config, int cpu,
					struct task_struct *task,
					unsigned long nr_pages);
void itrace_kevent_release(struct perf_event *event);
size_t itrace_kevent_size(struct perf_event *event);
size_t itrace_kevent_read(struct perf_event *event, void *buf, bool *wrapped);
u64 itrace_kevent_pauses(struct perf_event *event);

int itrace_rlimit_begin(struct task_struct *tsk,
			const struct rlimit *new_rlim,
			struct itrace_rlimit_tx *tx);
void itrace_rlimit_end(struct task_struct *tsk, struct itrace_rlimit_tx *tx,
		       int err);
void itrace_task_fork(struct task_struct *p);
void itrace_task_exec(struct task_struct *tsk);
void itrace_task_exit(struct task_struct *tsk);
void *itrace_core_note(struct task_struct *tsk, unsigned int *size);

/**
 * is_itrace_event() - can the event's trace be mapped through a trace fd
 * @event: a perf event
 *
 * Return: true if @event belongs to a PMU registered with
 * itrace_pmu_register().
 */
static inline bool is_itrace_event(struct perf_event *event)
{
	return event->pmu->capabilities & PERF_PMU_CAP_ITRACE_FD;
}

#else /* !CONFIG_PERF_EVENTS */

static inline int itrace_pmu_register(struct pmu *pmu)
{
	return -ENODEV;
}

static inline bool itrace_aux_counts_wraps(struct perf_event *event)
{
	return false;
}

static inline void itrace_aux_publish(struct perf_output_handle *handle,
				      unsigned long head)
{
}

static inline int itrace_rlimit_begin(struct task_struct *tsk,
				      const struct rlimit *new_rlim,
				      struct itrace_rlimit_tx *tx)
{
	return new_rlim->rlim_cur ? -ENODEV : 0;
}

static inline void itrace_rlimit_end(struct task_struct *tsk,
				     struct itrace_rlimit_tx *tx, int err) { }
static inline void itrace_task_fork(struct task_struct *p) { }
static inline void itrace_task_exec(struct task_struct *tsk) { }
static inline void itrace_task_exit(struct task_struct *tsk) { }

static inline void *itrace_core_note(struct task_struct *tsk,
				     unsigned int *size)
{
	return NULL;
}

#endif /* CONFIG_PERF_EVENTS */

#endif /* _LINUX_ITRACE_H */
