/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who ran where: the threads, processes and address spaces of a recording,
 * from its sideband, and the decode of its buffers in time order, each
 * byte of trace given to the thread that wrote it (timeline.c).
 */
#ifndef ITRACE_TIMELINE_H
#define ITRACE_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bts.h"
#include "itrace.h"
#include "ucut.h"

struct itrace_data;
struct pev;
struct pt_image;
struct pt_image_section_cache;
struct pdec;
struct symtab;
struct timeline;

/* An address space: a process between a fork or exec and the next exec. */
struct tl_aspace {
	uint32_t		pid;
	uint64_t		start;		/* perf time it began; 0: before the recording */
	struct itrace_image	im;		/* its image (the cache is shared) */
	struct symtab		*st;
	const uint8_t		**maps;		/* its MMAP records, for a fork's copy */
	size_t			nr_maps, cap_maps;
	struct tl_aspace	*next;		/* the same pid's next one */
	uint64_t		cr3;		/* its CR3 (kernel traces), 0: unknown */
};

struct tl_thread {
	uint32_t		pid, tid;
	char			comm[17];
	void			*priv;		/* the decoder's state of this thread */
	struct tl_thread	*hnext;
	uint64_t		cr3;		/* the last CR3 it ran with (kernel traces) */
	struct bts_pos		bts;		/* a BTS trace: where its flow stands */
	bool			traced;		/* its own records say the events follow it */
};

/* How a decode run starts (the first of a buffer, or after a discontinuity). */
enum tl_run_kind {
	TL_RUN_FIRST,		/* the buffer's first */
	TL_RUN_GAP,		/* bytes missing before it */
	TL_RUN_LOST,		/* after a loss record in contiguous bytes */
	TL_RUN_SNAPSHOT,	/* a snapshot that does not continue the previous */
};

struct tl_run {
	uint32_t	buf;		/* buffer (CPU) */
	uint64_t	offset;		/* stream offset of its first byte */
	uint64_t	expect;		/* where the previous run ended */
	const uint8_t	*bytes;
	size_t		size;
	uint32_t	snapshot;
	enum tl_run_kind kind;
	/* tl_user_only(): the user-mode part decoded, its offsets by cut */
	const struct ucut *cut;
};

struct tl_ops {
	/* a new address space (its symbol table's settings, the kernel's code) */
	void (*init_aspace)(void *ctx, struct tl_aspace *as);
	/* an MMAP/MMAP2 (executable) record, for address space as */
	void (*add_map)(void *ctx, struct tl_aspace *as, const struct pev *ev);
	/* from here on the decoded instructions are th's, in as, on cpu (-1: unknown) */
	void (*switch_to)(void *ctx, struct tl_thread *th, struct tl_aspace *as, int cpu);
	/* a run begins; then the walk callbacks; then end_run */
	void (*begin_run)(void *ctx, const struct tl_run *run);
	void (*end_run)(void *ctx, const struct tl_run *run, int walk_status);
	/*
	 * the decoder of the current run, for time and offset queries
	 * (tl_run_offset() of run: the decoders' offsets in the trace)
	 */
	void (*decoder)(void *ctx, struct pt_insn_decoder *insn, struct pdec *blk,
			const struct tl_run *run);
};

/*
 * Read the sideband of d: threads, address spaces (ops->add_map called for
 * every mapping of each), loss points.  Messages name the recording name.
 */
struct timeline *tl_new(struct itrace_data *d, const char *name, const struct tl_ops *ops,
			void *ctx);
void tl_free(struct timeline *tl);
/* After all mappings are added (sym_done of every symbol table). */
void tl_done(struct timeline *tl);
/* pid's address space at perf time (created empty if it has none). */
struct tl_aspace *tl_aspace_of(struct timeline *tl, uint32_t pid, uint64_t time);
/* Call fn for every address space. */
typedef void (*tl_aspace_fn_t)(void *arg, struct tl_aspace *as);
void tl_walk_aspaces(struct timeline *tl, tl_aspace_fn_t fn, void *arg);
/* The recording knows its threads (sample ids); loss points counted. */
bool tl_has_threads(const struct timeline *tl);
size_t tl_nr_losses(const struct timeline *tl);
/* Time: the recording can convert TSC to perf time; the conversion. */
bool tl_has_time(const struct timeline *tl);
uint64_t tl_tsc_to_ns(const struct timeline *tl, uint64_t tsc);
/* The perf time of the first record of the recording (0 if none). */
uint64_t tl_first_time(const struct timeline *tl);
/* Decode only the trace of snapshot n (1, 2, ...; 0: all). */
void tl_only_snapshot(struct timeline *tl, unsigned int n);
/*
 * Decode the user-mode part of a user+kernel trace only (ucut.c): for
 * a decode without the kernel's code.
 */
void tl_user_only(struct timeline *tl);
/*
 * Decode with jobs threads (pdec.c): the block decoders' runs cut at PSBs
 * and decoded ahead; 0 or 1: in the caller's thread only.  The output is
 * the same either way.
 */
void tl_jobs(struct timeline *tl, unsigned int jobs);
/* The trace offset of offset off of a decoder of run r. */
uint64_t tl_run_offset(const struct tl_run *r, uint64_t off);
/* Apply libipt's timing configuration of the recording to a decoder config. */
void tl_pt_config(const struct timeline *tl, struct pt_config *cfg);
/*
 * The thread of a trace that runs through a context switch (an inherited
 * event of clone contexts in a perf.data, or a CPU-wide recording)
 * changes where the kernel's trace enters __switch_to (switch_ip), as
 * perf's Intel PT decoder has it, instead of at the time of the switch
 * record; ptss_ip: __perf_event_task_sched_out, which writes that record.
 * For recordings of kernel mode with the kernel's code and symbols, before
 * tl_decode().  No effect if either address is 0, or on other recordings.
 */
void tl_sync_switch(struct timeline *tl, uint64_t switch_ip, uint64_t ptss_ip);
/* Every thread, in order of tid; *nr of them. */
struct tl_thread **tl_threads(struct timeline *tl, size_t *nr);
/* The thread the first MMAP went to, the program (NULL if none). */

/*
 * Decode every buffer, each with one decoder per run of contiguous trace,
 * in time order across buffers: a buffer's decoder yields when its trace
 * passes to another thread, and the buffer whose next piece is the oldest
 * goes on.  blk: the block decoder (else the instruction decoder).
 * Returns 0, or -1 when a decoder cannot be allocated.
 */
int tl_decode(struct timeline *tl, const struct pt_walk_ops *insn_ops,
	      const struct blk_walk_ops *blk_ops, bool blk, void *ctx);

/*
 * The same for a BTS recording (ITRACE_FLAG_BTS): each buffer's records
 * through a bts_walker, the thread of each record from the PERF_RECORD_AUX
 * records (per-task recordings), the buffers one after another (BTS records
 * have no time).  The decoder callback gets NULL decoders.  Returns 0, or -1
 * when the walker cannot be made (no capstone).
 */
int tl_decode_bts(struct timeline *tl, const struct bts_ops *ops, void *ctx);

#endif
