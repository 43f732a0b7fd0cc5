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

#ifdef CONFIG_PERF_EVENTS

int itrace_pmu_register(struct pmu *pmu);
struct pmu *itrace_coredump_pmu(u64 *config);

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

#endif /* CONFIG_PERF_EVENTS */

#endif /* _LINUX_ITRACE_H */
