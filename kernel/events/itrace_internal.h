/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interfaces between the parts of the itrace core:
 *
 *	itrace.c		itrace PMUs and the trace fd
 *	itrace_sysfs.c		<pmu>/itrace/ in sysfs: the core-dump PMU
 *	itrace_kevent.c		kernel-owned trace events and their charge
 *	itrace_rlimit.c		RLIMIT_ITRACE: a trace per thread
 *	itrace_coredump.c	the NT_ITRACE note of each thread
 */
#ifndef _KERNEL_EVENTS_ITRACE_INTERNAL_H
#define _KERNEL_EVENTS_ITRACE_INTERNAL_H

#include <linux/itrace.h>
#include <linux/list.h>
#include <linux/mutex.h>

struct cred;
struct mem_cgroup;
struct user_struct;

/* itrace.c */
extern struct mutex itrace_pmus_lock;
struct pmu *itrace_first_pmu(void);
bool itrace_pmu_has(struct pmu *pmu, unsigned int features);
const struct itrace_pmu_ops *itrace_event_ops(struct perf_event *event);

/* itrace_sysfs.c */
int itrace_sysfs_add(struct pmu *pmu, const struct attribute_group ***saved);
void itrace_sysfs_remove(struct pmu *pmu, const struct attribute_group **saved);
void itrace_coredump_pmu_default(struct pmu *pmu, bool secondary);
void itrace_coredump_pmu_gone(struct pmu *pmu, struct pmu *next);
int itrace_coredump_pmu(u32 *type, u64 *config);

/**
 * struct itrace_kowner - who a kernel-owned trace event works for
 * @cred: the credentials of the task that asked for it: its user is
 *	charged for the buffer, and its permissions are those of the event
 * @memcg: the memory cgroup the buffer is charged to, or NULL
 * @can_lock: the asker had CAP_IPC_LOCK when it asked (decided once)
 */
struct itrace_kowner {
	const struct cred	*cred;
	struct mem_cgroup	*memcg;
	bool			can_lock;
};

/* itrace_kevent.c */
void itrace_kowner_init(struct itrace_kowner *owner);
void itrace_kowner_copy(struct itrace_kowner *dst,
			const struct itrace_kowner *src);
void itrace_kowner_put(struct itrace_kowner *owner);
int itrace_kevent_allowed(const struct perf_event_attr *attr,
			  struct task_struct *task);
int itrace_kevent_check_memory(unsigned long nr_pages);
void itrace_kevent_attr(struct perf_event_attr *attr, u32 type, u64 config);
struct perf_event *itrace_kevent_create(const struct itrace_kowner *owner,
					struct perf_event_attr *attr, int cpu,
					struct task_struct *task,
					unsigned long nr_pages);
void itrace_kevent_release(const struct itrace_kowner *owner,
			   struct perf_event *event);
struct perf_buffer *itrace_kevent_stop(struct perf_event *event,
				       unsigned long *head, bool *wrapped);
u64 itrace_kevent_pauses(struct perf_event *event);

/**
 * struct itrace_dump - a thread's trace for its core dump
 * @event: kernel-owned event, user mode only, overwrite-mode AUX buffer
 * @owner: who it works for (a copy of the process's itrace_proc::owner)
 * @task: the thread, while on a struct itrace_rlimit_tx (holds a reference)
 * @list: on a struct itrace_rlimit_tx, or on a list to free
 * @gen: the change of the limit that made it (itrace_proc::gen)
 */
struct itrace_dump {
	struct perf_event	*event;
	struct itrace_kowner	owner;
	struct task_struct	*task;
	struct list_head	list;
	u64			gen;
};

/* itrace_rlimit.c */
struct itrace_dump *itrace_dump_take_locked(struct task_struct *tsk);
void itrace_dump_destroy(struct itrace_dump *d);

#endif /* _KERNEL_EVENTS_ITRACE_INTERNAL_H */
