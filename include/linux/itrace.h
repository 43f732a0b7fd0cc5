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
 * AUX pages of the event's buffer; see kernel/events/itrace.c. The same
 * PMUs keep each thread's newest trace for core dumps (RLIMIT_ITRACE,
 * kernel/events/itrace_rlimit.c and itrace_coredump.c).
 */
#ifndef _LINUX_ITRACE_H
#define _LINUX_ITRACE_H

#include <linux/perf_event.h>
#include <linux/resource.h>
#include <uapi/linux/itrace.h>

struct coredump_params;
struct itrace_coredump;
struct itrace_proc;
struct signal_struct;
struct task_struct;

/*
 * What an itrace PMU's driver does beyond trace fds, in struct
 * itrace_pmu_ops::features:
 *
 * ITRACE_PMU_KEVENTS: its events may be kernel-owned trace events, which
 *	keep trace for RLIMIT_ITRACE core dumps and PERF_SAMPLE_ITRACE
 *	(pmu::snapshot_aux()); the trace they keep is fit for the user they
 *	are made for. Without it the PMU serves neither (EOPNOTSUPP).
 * ITRACE_PMU_SECONDARY: with ITRACE_PMU_KEVENTS, serves core dumps by
 *	default only while no other such PMU is registered (intel_bts beside
 *	intel_pt: a trace without timing, at a memory store per branch).
 */
#define ITRACE_PMU_KEVENTS	BIT(0)
#define ITRACE_PMU_SECONDARY	BIT(1)

/**
 * struct itrace_pmu_ops - what the itrace core asks of an itrace PMU
 * @features: ITRACE_PMU_* flags
 * @record_size: for a trace of fixed-size records, the bytes of one record:
 *	a core-dump note cut short for RLIMIT_CORE keeps whole records; 0 for
 *	a byte stream a decoder synchronizes on (Intel PT's PSB)
 * @note_info: fill in what a decoder needs to know about the trace of
 *	@event in an NT_ITRACE note: the CPU identification and the clock
 *	and config parameters of struct itrace_note (cpu_*, tsc_ctc_*,
 *	nom_freq, mtc_freq, ...), which are 0 before the call. May be NULL.
 *	Called in process context, may sleep.
 * @dump_trace: for a trace the core cannot write into a core dump as the
 *	buffer holds it (records that carry kernel addresses, padding left
 *	by wraps): rewrite, in place, the trace of the stopped kernel-owned
 *	event @event in its AUX buffer @aux_priv (what pmu::setup_aux()
 *	returned), which itrace_kevent_stop() found to end at @head (an
 *	offset in bytes into the buffer) and to have @wrapped, so that
 *	the buffer holds it from offset 0, oldest first, with nothing its
 *	user may not see. Returns the bytes it then holds. May be NULL: the
 *	trace is written as it is. Called in process context, may sleep; the
 *	buffer is the core dump's alone, and is freed after it.
 */
struct itrace_pmu_ops {
	unsigned int	features;
	unsigned int	record_size;
	void		(*note_info)(struct perf_event *event,
				     struct itrace_note *note);
	unsigned long	(*dump_trace)(struct perf_event *event, void *aux_priv,
				      unsigned long head, bool wrapped);
};

/**
 * struct itrace_rlimit_tx - a change of RLIMIT_ITRACE in progress
 * @proc: the process's RLIMIT_ITRACE state, which holds the change and
 *	whose mutex is held from itrace_rlimit_begin() to itrace_rlimit_end();
 *	NULL if the change has nothing to do
 *
 * Between itrace_rlimit_begin() and itrace_rlimit_end() do_prlimit()
 * changes the limit itself; see kernel/sys.c.
 */
struct itrace_rlimit_tx {
	struct itrace_proc	*proc;
};

#ifdef CONFIG_PERF_EVENTS

int itrace_pmu_register(struct pmu *pmu, const struct itrace_pmu_ops *ops);
void itrace_pmu_unregister(struct pmu *pmu);
bool itrace_aux_counts_wraps(struct perf_event *event);
void itrace_aux_publish(struct perf_output_handle *handle, unsigned long head);
void itrace_aux_lost(struct perf_output_handle *handle);

int itrace_rlimit_begin(struct task_struct *tsk,
			const struct rlimit *new_rlim,
			struct itrace_rlimit_tx *tx);
void itrace_rlimit_end(struct task_struct *tsk, struct itrace_rlimit_tx *tx,
		       int err);
void itrace_task_fork(struct task_struct *p, u64 clone_flags);
void itrace_task_exec(struct task_struct *tsk);
void itrace_task_exit(struct task_struct *tsk);
void itrace_signal_free(struct signal_struct *sig);

struct itrace_coredump *itrace_coredump_prepare(struct task_struct *tsk);
size_t itrace_coredump_desc_size(const struct itrace_coredump *cd);
size_t itrace_coredump_trace_size(const struct itrace_coredump *cd);
void itrace_coredump_clamp(struct itrace_coredump *cd, size_t trace_max);
int itrace_coredump_write(struct coredump_params *cprm,
			  struct itrace_coredump *cd);
void itrace_coredump_free(struct itrace_coredump *cd);

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

static inline int itrace_pmu_register(struct pmu *pmu,
				      const struct itrace_pmu_ops *ops)
{
	return -ENODEV;
}

static inline void itrace_pmu_unregister(struct pmu *pmu) { }

static inline bool itrace_aux_counts_wraps(struct perf_event *event)
{
	return false;
}

static inline void itrace_aux_publish(struct perf_output_handle *handle,
				      unsigned long head)
{
}

static inline void itrace_aux_lost(struct perf_output_handle *handle) { }

static inline int itrace_rlimit_begin(struct task_struct *tsk,
				      const struct rlimit *new_rlim,
				      struct itrace_rlimit_tx *tx)
{
	/* No itrace PMU: a size is refused, 0 and RLIM_INFINITY keep none */
	return new_rlim->rlim_cur && new_rlim->rlim_cur != RLIM_INFINITY ?
	       -ENODEV : 0;
}

static inline void itrace_rlimit_end(struct task_struct *tsk,
				     struct itrace_rlimit_tx *tx, int err) { }
static inline void itrace_task_fork(struct task_struct *p, u64 clone_flags) { }
static inline void itrace_task_exec(struct task_struct *tsk) { }
static inline void itrace_task_exit(struct task_struct *tsk) { }
static inline void itrace_signal_free(struct signal_struct *sig) { }

static inline struct itrace_coredump *
itrace_coredump_prepare(struct task_struct *tsk)
{
	return NULL;
}

static inline size_t itrace_coredump_desc_size(const struct itrace_coredump *cd)
{
	return 0;
}

static inline size_t
itrace_coredump_trace_size(const struct itrace_coredump *cd)
{
	return 0;
}

static inline void itrace_coredump_clamp(struct itrace_coredump *cd,
					 size_t trace_max) { }

static inline int itrace_coredump_write(struct coredump_params *cprm,
					struct itrace_coredump *cd)
{
	return 0;
}

static inline void itrace_coredump_free(struct itrace_coredump *cd) { }

#endif /* CONFIG_PERF_EVENTS */

#endif /* _LINUX_ITRACE_H */
