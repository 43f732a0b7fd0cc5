// SPDX-License-Identifier: GPL-2.0
/*
 * itrace: the NT_ITRACE note of each thread in an ELF core dump
 *
 * A thread's trace for RLIMIT_ITRACE (itrace_rlimit.c) goes into the core
 * dump as one note after the thread's register notes (fs/binfmt_elf.c):
 * a struct itrace_note, then the trace, oldest byte first (see
 * include/uapi/linux/itrace.h). The trace is written straight from the
 * event's buffer, with no copy: the dumping process is exiting, so its
 * threads' traces are taken from them when the dump starts, stopped, and
 * freed when it ends.
 *
 * The memory of the process comes first in value: binfmt_elf clamps the
 * notes (itrace_coredump_clamp()) so that the whole dump fits within
 * RLIMIT_CORE, keeping the newest trace of each thread.
 */

#include <linux/coredump.h>
#include <linux/itrace.h>
#include <linux/perf_event.h>
#include <linux/pid.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "internal.h"
#include "itrace_internal.h"

/**
 * struct itrace_coredump - a thread's NT_ITRACE note being dumped
 * @dump: the thread's trace, taken from it
 * @rb: its event's buffer, stopped
 * @note: the header of the note
 * @from: offset in the AUX buffer of the oldest byte to write
 * @record_size: bytes of a trace record, 0 for a byte stream
 *	(itrace_pmu_ops::record_size)
 */
struct itrace_coredump {
	struct itrace_dump	*dump;
	struct perf_buffer	*rb;
	struct itrace_note	note;
	unsigned long		from;
	unsigned int		record_size;
};

/**
 * itrace_coredump_prepare() - the NT_ITRACE note of a thread
 * @tsk: a thread of the dumping process: current, or one waiting for the
 *	dump to end (coredump_task_exit())
 *
 * Takes the thread's trace, stops it and fills in the note's header. A
 * PMU with itrace_pmu_ops::dump_trace makes its trace fit for the note
 * first (whole records, oldest first, no kernel address).
 *
 * Context: process context, the core dump's fill_note_info().
 * Return: the note, for itrace_coredump_free(); NULL if @tsk has no trace
 * or memory ran out.
 */
struct itrace_coredump *itrace_coredump_prepare(struct task_struct *tsk)
{
	const struct itrace_pmu_ops *ops;
	struct itrace_coredump *cd;
	struct itrace_note *n;
	unsigned long head;
	struct itrace_dump *d;
	bool wrapped;
	u64 pauses;

	d = itrace_dump_take_locked(tsk);
	if (!d)
		return NULL;

	cd = kzalloc(sizeof(*cd), GFP_KERNEL);
	if (!cd)
		goto destroy;

	cd->dump = d;
	cd->rb = itrace_kevent_stop(d->event, &head, &wrapped);
	if (!cd->rb)
		goto free;

	n = &cd->note;
	n->hdr_size = sizeof(*n);
	n->version = ITRACE_NOTE_VERSION;
	strscpy(n->pmu_name, d->event->pmu->name, sizeof(n->pmu_name));
	n->config = d->event->attr.config;
	n->buf_size = (u64)cd->rb->aux_nr_pages << PAGE_SHIFT;
	ops = itrace_event_ops(d->event);
	if (ops && ops->dump_trace) {
		cd->from = 0;
		n->trace_size = min_t(u64, n->buf_size,
				      ops->dump_trace(d->event,
						      cd->rb->aux_priv, head,
						      wrapped));
	} else {
		cd->from = wrapped ? head : 0;
		n->trace_size = wrapped ? n->buf_size : head;
	}
	cd->record_size = ops ? ops->record_size : 0;
	if (wrapped)
		n->flags |= ITRACE_NOTE_WRAPPED;
	pauses = itrace_kevent_pauses(d->event);
	if (pauses) {
		n->flags |= ITRACE_NOTE_PAUSED;
		n->pauses = pauses;
	}
	if (READ_ONCE(cd->rb->aux_truncated))
		n->flags |= ITRACE_NOTE_ERROR;
	n->tid = task_pid_vnr(tsk);
	if (ops && ops->note_info)
		ops->note_info(d->event, n);

	return cd;

free:
	kfree(cd);
destroy:
	itrace_dump_destroy(d);

	return NULL;
}

/**
 * itrace_coredump_desc_size() - bytes of a note's descriptor
 * @cd: from itrace_coredump_prepare(), or NULL
 *
 * Return: the header and the trace, in bytes; 0 for NULL.
 */
size_t itrace_coredump_desc_size(const struct itrace_coredump *cd)
{
	return cd ? cd->note.hdr_size + cd->note.trace_size : 0;
}

/**
 * itrace_coredump_trace_size() - bytes of trace in a note
 * @cd: from itrace_coredump_prepare(), or NULL
 *
 * Return: the trace the note holds, in bytes; 0 for NULL.
 */
size_t itrace_coredump_trace_size(const struct itrace_coredump *cd)
{
	return cd ? cd->note.trace_size : 0;
}

/**
 * itrace_coredump_clamp() - keep only the newest trace of a note
 * @cd: from itrace_coredump_prepare()
 * @trace_max: bytes of trace the note may hold at most
 *
 * For RLIMIT_CORE: the older trace is left out, and the note says so
 * (ITRACE_NOTE_CLAMPED); a decoder synchronizes on the first PSB. A trace
 * of records keeps whole ones.
 */
void itrace_coredump_clamp(struct itrace_coredump *cd, size_t trace_max)
{
	struct itrace_note *n = &cd->note;

	if (n->trace_size <= trace_max)
		return;

	if (cd->record_size)
		trace_max -= trace_max % cd->record_size;

	cd->from = (cd->from + n->trace_size - trace_max) & (n->buf_size - 1);
	n->trace_size = trace_max;
	n->flags |= ITRACE_NOTE_CLAMPED;
}

/**
 * itrace_coredump_write() - write a note's descriptor into the core dump
 * @cprm: the core dump
 * @cd: from itrace_coredump_prepare()
 *
 * Writes itrace_coredump_desc_size() bytes: the header, then the trace,
 * oldest byte first, from the event's buffer.
 *
 * Context: process context, the core dump's write_note_info().
 * Return: 1 on success, 0 if the dump failed (dump_emit()).
 */
int itrace_coredump_write(struct coredump_params *cprm,
			  struct itrace_coredump *cd)
{
	unsigned long mask = cd->note.buf_size - 1;
	unsigned long from = cd->from, len = cd->note.trace_size;

	if (!dump_emit(cprm, &cd->note, cd->note.hdr_size))
		return 0;

	while (len) {
		unsigned long off = offset_in_page(from);
		unsigned long n = min(len, PAGE_SIZE - off);

		if (!dump_emit(cprm, cd->rb->aux_pages[from >> PAGE_SHIFT] + off,
			       n))
			return 0;
		from = (from + n) & mask;
		len -= n;
	}

	return 1;
}

/**
 * itrace_coredump_free() - free a note and the thread's trace
 * @cd: from itrace_coredump_prepare(), or NULL
 *
 * Context: process context, the core dump's free_note_info().
 */
void itrace_coredump_free(struct itrace_coredump *cd)
{
	if (!cd)
		return;

	ring_buffer_put(cd->rb);
	itrace_dump_destroy(cd->dump);
	kfree(cd);
}
