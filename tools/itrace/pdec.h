/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A libipt block decoder whose work is done ahead, in threads (pdec.c).
 *
 * The trace of a run is cut at PSBs into tasks, each decoded by a worker
 * thread from its PSB on, with the calls the caller would make (sync,
 * next block, event); the caller's calls are answered from those logs,
 * one task after the other.  The Intel SDM makes each PSB+ a point where
 * decode can start anew (no compressed RET returns to a CALL before it),
 * so the log of the task that runs across the next PSB and the log of
 * the next task agree from that PSB+'s last status update on: that is
 * where the caller moves from one log to the next.  A caller that calls
 * differently from the logs (another image: an exec; a sync the decode
 * did not make) gets a libipt decoder brought to the same point, until
 * a later task's log agrees again.
 */
#ifndef ITRACE_PDEC_H
#define ITRACE_PDEC_H

#include <intel-pt.h>
#include <stdint.h>

struct pdec_pool;
struct pdec;

/*
 * pdec_pool_new() - threads for a decode with @jobs threads: @jobs - 1
 * workers, made when a run is first cut into tasks, and the caller's,
 * which decodes queued tasks too while it waits.  The size of a task and
 * the least run worth cutting: ITRACE_DECODE_TASK, ITRACE_DECODE_MIN
 * (bytes; for tests).
 * Returns the pool, or NULL when @jobs < 2 (then decoders made with a
 * NULL pool decode as libipt does, in the caller's thread; so do runs
 * when no worker thread could be made).
 */
struct pdec_pool *pdec_pool_new(unsigned int jobs);
void pdec_pool_free(struct pdec_pool *pool);

/*
 * pdec_new() - a block decoder for the trace of @cfg (its bytes must stay
 * until pdec_free()), worked ahead by @pool (NULL: inline).  Its blocks
 * end at every call and jump (libipt's end_on_call and end_on_jump, set
 * whatever @cfg says): where libipt's blocks go on through a direct
 * branch depends on what its block cache holds, which the threads'
 * decodes fill in another order than one thread's.
 * Returns NULL when libipt cannot make a decoder (out of memory).
 */
struct pdec *pdec_new(struct pdec_pool *pool, const struct pt_config *cfg);
void pdec_free(struct pdec *pd);

/* As pt_blk_set_image(), pt_blk_sync_forward(), pt_blk_next(), ... */
int pdec_set_image(struct pdec *pd, struct pt_image *image);
int pdec_sync_forward(struct pdec *pd);
int pdec_next(struct pdec *pd, struct pt_block *b);
int pdec_event(struct pdec *pd, struct pt_event *ev);
int pdec_time(struct pdec *pd, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc);
int pdec_get_offset(struct pdec *pd, uint64_t *offset);

/* What the decode did: runs of tasks served from logs, and the rest. */
struct pdec_stats {
	uint64_t	tasks;		/* tasks decoded ahead */
	uint64_t	joined;		/* the caller moved into a task's log */
	uint64_t	live;		/* a libipt decoder had to take over */
	uint64_t	helped;		/* tasks the caller's thread decoded ahead */
	uint64_t	nomem;		/* logs given up for want of memory */
};

void pdec_get_stats(const struct pdec_pool *pool, struct pdec_stats *st);

#endif
