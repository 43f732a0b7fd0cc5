/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Intel BTS (Branch Trace Store) traces: the instruction flow rebuilt from
 * the branch records and the code of the traced image (bts.c).
 *
 * A BTS trace is a sequence of 24-byte records { u64 from; u64 to; u64
 * flags; }, one per taken branch, interrupt or exception (Intel SDM Vol. 3B,
 * "Branch Trace Store", 64-bit DS format): from is the branch instruction
 * (an exception: the faulting instruction; an interrupt: the next one to
 * run), to its target.  Not-taken conditional branches give no record, so
 * the instructions between the to of one record and the from of the next
 * are found by walking the code, instruction by instruction (the lengths and
 * classes from libipt's instruction decoder, bts_ild()).  Addresses of the upper half are the
 * kernel's, as is 0 (the core dump's NT_ITRACE notes turn kernel addresses
 * into 0): a record into it is an entry (system call, interrupt,
 * exception), one out of it a return to user mode; kernel code is never
 * walked.  All-zero bytes are padding (stop mode: up to 23 bytes at the end
 * of a physically contiguous chunk; overwrite mode: the zeroed tail of the
 * buffer).
 */
#ifndef ITRACE_BTS_H
#define ITRACE_BTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct itrace_image;
struct pt_insn;

#define BTS_RECORD_SIZE		24
#define BTS_KERNEL_START	0xffff800000000000ULL

/* A user-mode address of a record (0: a kernel one a core dump removed) */
static inline bool bts_user_addr(uint64_t ip)
{
	return ip && ip < BTS_KERNEL_START;
}

struct bts_record {
	uint64_t	from, to, flags;
};

/* Where a thread's flow stands between two records. */
struct bts_pos {
	uint64_t	ip;		/* the next instruction it runs */
	bool		have;		/* ip is known */
	bool		in_kernel;	/* it entered the kernel at the last record */
};

struct bts_ops {
	/* one instruction of the flow, in the order they ran */
	void (*insn)(void *ctx, const struct pt_insn *in);
	/*
	 * A record into (entry: an interrupt or exception; a system call is
	 * its instruction) or out of (return) the kernel, at trace offset off.
	 */
	void (*kernel)(void *ctx, uint64_t off, uint64_t from, uint64_t to, bool entry);
	/*
	 * The flow cannot be followed to the record at off (lost records, a
	 * wrapped buffer, a record cut short): why; the flow resumes at the
	 * record's target.  last_ip: the last instruction known to have run.
	 */
	void (*gap)(void *ctx, uint64_t off, uint64_t last_ip, const char *why);
	/*
	 * The kernel resumed the thread elsewhere than its entry left it (a
	 * signal handler, sigreturn, exec): the flow from there cannot reach
	 * the record at off.  BTS records of user mode hold nothing of the
	 * return (a record's CPL filter is its source's), so this is no loss:
	 * the flow goes on at the record's source, at; what ran between the
	 * return and at is not known.
	 */
	void (*resume)(void *ctx, uint64_t off, uint64_t at);
};

struct bts_walker;
struct bts_ild;

/*
 * libipt's instruction length decoder, which it does not export, through
 * its instruction decoder: a trace of one PSB+ and a TIP.PGE at the
 * instruction, whose bytes the decoder's image reads from raw.  NULL when
 * out of memory.
 */
struct bts_ild *bts_ild_new(void);
void bts_ild_free(struct bts_ild *l);
/*
 * The length of the instruction at raw (n bytes, at ip; 64-bit code, or
 * 32-bit if is32) and *iclass; 0 if invalid.
 */
int bts_ild(struct bts_ild *l, const uint8_t *raw, size_t n, uint64_t ip, bool is32,
	    int *iclass);

/* A walker calling ops with ctx; NULL (with a message) when out of memory. */
struct bts_walker *bts_walker_new(const struct bts_ops *ops, void *ctx);
void bts_walker_free(struct bts_walker *w);

/*
 * The record r at trace offset off, in the address space of image im, for
 * the thread whose flow is at pos: the instructions from pos to r->from,
 * then pos moves to r->to (or past the kernel entry).
 */
void bts_record(struct bts_walker *w, const struct itrace_image *im, struct bts_pos *pos,
		uint64_t off, const struct bts_record *r);

enum bts_item {
	BTS_ITEM_RECORD,	/* *r is a record */
	BTS_ITEM_PAD,		/* padding */
	BTS_ITEM_CUT,		/* a record cut short: the end of the bytes */
};

/*
 * The item at p (avail bytes of trace at stream offset off; page_size: the
 * recording's): its kind, and in *len the bytes it takes.
 */
enum bts_item bts_next(const uint8_t *p, size_t avail, uint64_t off, uint32_t page_size,
		       struct bts_record *r, size_t *len);

#endif
