// SPDX-License-Identifier: GPL-2.0
/*
 * pdec: a libipt block decoder whose work is done ahead, in worker threads
 * (pdec.h says what it is for).
 *
 * A worker decodes a task, [its PSB, the next task's PSB), making the
 * calls the timeline makes (timeline.c, stream_run()): a sync, then
 * events while one is pending, the next block otherwise, a sync after an
 * error; it logs each call's status and result, and the decoder's time
 * and offset after it.  It decodes on past the next task's PSB, by
 * PD_OVERLAP calls, so that the caller finds there the point where the
 * next log takes over.
 *
 * That point (the anchor): a decoder synchronized at a PSB reports the
 * status updates of its PSB+ (the core:bus ratio, the execution mode at
 * the FUP's IP...) before any block; a decoder that runs through that PSB
 * reports the same updates, some of them after the blocks that lead up to
 * the FUP's IP.  From the last of them on, both have the same state: the
 * last IP is the FUP's, the TNT and IP caches start empty, and no RET
 * after a PSB is compressed against a CALL before it (Intel SDM Vol. 3C,
 * "Intel Processor Trace": "only RETs that correspond to CALLs which have
 * been seen since the last PSB packet may be compressed").  The caller
 * moves into the next log when its decoder, log or libipt, reports the
 * anchor, equal in status, offset, time and content.  (A trace of other
 * code than ran can seem to compress a RET against a CALL before the PSB:
 * the decode that ran through the PSB has that CALL on libipt's stack,
 * the next task's does not.  Only then can the two differ.)
 *
 * Blocks: libipt ends a block at more places (instructions that are no
 * branch) the first time it decodes code than once its block cache knows
 * the code, so where blocks end, and the decoder's time after them,
 * depend on what was decoded before, in which thread.  pdec_next() joins
 * such a block to the blocks that follow it, with or without a pool: the
 * caller sees the same blocks and times whatever the history.
 *
 * Where the caller calls what the log has not (set_image() of another
 * image, after an exec; a sync where the decode went on), or a log ends
 * before the next one takes over, a libipt decoder is made, given the
 * log's image and the log's calls again up to that point, and serves the
 * caller until a later task's anchor comes; the tasks after that point
 * are decoded again with the new image.
 *
 * The caller's thread is one of the jobs: while it waits for the task
 * it needs, it decodes a task queued after it (wait_task()).
 *
 * Locking: the pool's mutex guards its queue, its spare logs and each
 * task's state; a task's log is written by the one thread that took it
 * off the queue, while T_RUNNING (in a copy, stored back at the end), and
 * read by the caller's thread only once T_DONE (the mutex orders the
 * two); a task's cancel flag is an atomic the worker polls.  All other
 * pdec state is the caller's thread's.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itrace.h"
#include "pdec.h"

/* Calls a task makes past the next task's PSB, for the anchor. */
#define PD_OVERLAP	256
/*
 * Trace bytes per task (at least: tasks begin at PSBs), and the least
 * run worth cutting; ITRACE_DECODE_TASK and ITRACE_DECODE_MIN override
 * them (tests cut small traces).
 */
#define PD_TASK_BYTES	(16 << 10)
#define PD_MIN_BYTES	(64 << 10)
/*
 * Take-overs by libipt after which a run is decoded without tasks (if
 * they are more than a PD_MAX_LIVES-th of the joins).
 */
#define PD_MAX_LIVES	4
/*
 * Set (to anything but 0) in the environment: the workers ask libipt for
 * the time after every block and stop the decode where it differs from
 * the time they would have kept (log_block(); the tests set it).
 */
#define PD_CHECK_TIME	"ITRACE_DECODE_CHECK_TIME"

enum pd_op { PD_SYNC, PD_NEXT, PD_EVENT };

/* A call's result and the decoder's time and offset after it. */
struct pd_ent {
	uint8_t		op;		/* enum pd_op */
	int		status;		/* what the call returned */
	int		time_ret, off_ret;
	uint32_t	lost_mtc, lost_cyc;
	uint64_t	tsc, offset;	/* pt_blk_time(), pt_blk_get_offset() after it */
	union {
		struct pt_block	b;
		struct pt_event	ev;
	} u;
};

/*
 * The log keeps a call in 32 bytes: a block's fields; its time and
 * offset only when they changed (most blocks read no packet), an event
 * and the bytes of a truncated instruction in arrays of their own.
 */
#define PD_F_STATE	1	/* the next pd_st is the state after this call */
#define PD_F_TRUNC	2	/* pt_block.truncated: the next pd_raw */
#define PD_F_SPEC	4	/* pt_block.speculative */

struct pd_rec {
	uint64_t	ip, end_ip;
	int32_t		status, isid;
	uint16_t	ninsn;
	uint8_t		op, iclass, mode, flags;
};

struct pd_st {
	uint64_t	tsc, offset;
	uint32_t	lost_mtc, lost_cyc;
	int32_t		time_ret, off_ret;
};

struct pd_raw {
	uint8_t		raw[pt_max_insn_size];
	uint8_t		size;
};

struct pd_log {
	struct pd_rec	*rec;
	struct pd_st	*st;
	struct pt_event	*ev;
	struct pd_raw	*raw;
	size_t		nr_rec, nr_st, nr_ev, nr_raw;
	size_t		cap_rec, cap_st, cap_ev, cap_raw;
};

/* A place in a log: the next record, state, event, raw bytes. */
struct pd_pos {
	size_t		rec, st, ev, raw;
};

enum pd_state { T_NEW, T_QUEUED, T_RUNNING, T_DONE };

struct pd_task {
	struct pdec	*pd;
	uint64_t	start, end;	/* its PSB; the next task's (the last: the end) */
	bool		first, last;	/* first: syncs forward from the run's start */
	bool		queued;		/* handed out; its log is or will be made */
	struct pt_image	*image;		/* the worker's copy of orig */
	struct pt_image	*orig;		/* the caller's image when it was queued */
	struct pd_log	log;
	struct pd_ent	anchor;		/* anchor(): its call, */
	struct pd_pos	after;		/* and the place after it */
	enum pd_state	state;		/* pool->lock */
	int		cancel;		/* atomic: stop early, nobody will read it */
	bool		nomem;		/* its log was given up: no memory */
	struct pd_task	*qnext;		/* pool->lock */
};

struct pdec_pool {
	pthread_mutex_t	lock;
	pthread_cond_t	work, done;
	struct pd_task	*head;		/* queued tasks, oldest first */
	struct pd_log	*spare;		/* logs' memory for the next tasks */
	size_t		nr_spare, cap_spare;
	pthread_t	*th;
	unsigned int	nr, want;	/* workers made, to make */
	bool		started, stop;
	uint64_t	task_bytes, min_bytes;
	bool		check_time;	/* PD_CHECK_TIME */
	struct pdec_stats stats;	/* the caller's thread */
};

struct pdec {
	struct pdec_pool *pool;
	struct pt_config cfg;
	struct pt_image	*image;		/* the caller's */
	struct pt_block_decoder *live;	/* NULL while a log serves */
	struct pd_task	*tasks;
	size_t		nr_tasks;
	size_t		cur;		/* the task whose log serves */
	bool		ready;		/* its log is complete */
	struct pd_pos	pos;		/* its next call */
	struct pd_st	st;		/* the state as of pos */
	size_t		join;		/* the next task that may take over */
	size_t		joins, lives;	/* logs joined, libipt taking over */
	size_t		queued;		/* tasks [0, queued) were handed out */
	bool		started;	/* the first sync was made */
	struct pd_st	view;		/* the state after the caller's last call */
	bool		has_view;
	bool		view_st;	/* ... is st (next_from_log() gave the call) */
	/*
	 * next_from_log()'s window: the current log's records from pos.rec
	 * to fast_end, its states from pos.st, and the offset from which
	 * the next task may take over.  Set there; emptied by the entry
	 * points that move pos (the general path of pdec_next(),
	 * pdec_event(), pdec_sync_forward()) and by release() of any log.
	 */
	const struct pd_rec *fast_rec, *fast_end;
	const struct pd_st *fast_st;
	uint64_t	fast_join;
	bool		view_live;	/* no pool: the decoder's own state is it */
	struct pd_ent	held;		/* the block after a joined one, not given yet */
	bool		has_held;
};

/* ---- logs ------------------------------------------------------------- */

/*
 * Logs are written in worker threads, which must not exit the process: a
 * log that cannot grow is given up whole (run_task()), and so the
 * functions that add to it return NULL or false then, whatever they have
 * written so far.
 *
 * The log's next record and its next state, room made for them; NULL: none.
 */
static inline struct pd_rec *rec_next(struct pd_log *l)
{
	struct pd_rec *p = l->rec;

	if (l->nr_rec == l->cap_rec) {
		p = itrace_try_grow(p, &l->cap_rec, l->nr_rec, sizeof(*p), 1024);
		if (!p)
			return NULL;
		l->rec = p;
	}
	return &p[l->nr_rec++];
}

static inline struct pd_st *st_next(struct pd_log *l)
{
	struct pd_st *p = l->st;

	if (l->nr_st == l->cap_st) {
		p = itrace_try_grow(p, &l->cap_st, l->nr_st, sizeof(*p), 1024);
		if (!p)
			return NULL;
		l->st = p;
	}
	return &p[l->nr_st++];
}

/* A record for a call that left the decoder in state n (kept if it changed). */
static struct pd_rec *log_rec(struct pd_log *l, enum pd_op op, int status,
			      const struct pd_st *n)
{
	struct pd_rec *r = rec_next(l);
	struct pd_st *s;

	if (!r)
		return NULL;
	*r = (struct pd_rec){ .op = op, .status = status };
	if (!l->nr_st || memcmp(n, &l->st[l->nr_st - 1], sizeof(*n))) {
		s = st_next(l);
		if (!s)
			return NULL;
		*s = *n;
		r->flags |= PD_F_STATE;
	}
	return r;
}

static bool rec_block(struct pd_log *l, struct pd_rec *r, const struct pt_block *b)
{
	r->ip = b->ip;
	r->end_ip = b->end_ip;
	r->isid = b->isid;
	r->ninsn = b->ninsn;
	r->iclass = b->iclass;
	r->mode = b->mode;
	if (b->speculative)
		r->flags |= PD_F_SPEC;
	if (b->truncated) {
		r->flags |= PD_F_TRUNC;
		if (l->nr_raw == l->cap_raw) {
			struct pd_raw *p = itrace_try_grow(l->raw, &l->cap_raw, l->nr_raw,
							   sizeof(*p), 1024);

			if (!p)
				return false;
			l->raw = p;
		}
		memcpy(l->raw[l->nr_raw].raw, b->raw, sizeof(b->raw));
		l->raw[l->nr_raw++].size = b->size;
	}
	return true;
}

static bool log_add(struct pd_log *l, const struct pd_ent *e)
{
	const struct pd_st n = { .tsc = e->tsc, .offset = e->offset, .lost_mtc = e->lost_mtc,
				 .lost_cyc = e->lost_cyc, .time_ret = e->time_ret,
				 .off_ret = e->off_ret };
	struct pd_rec *r = log_rec(l, e->op, e->status, &n);

	if (!r)
		return false;
	if (e->op == PD_EVENT) {
		if (l->nr_ev == l->cap_ev) {
			struct pt_event *p = itrace_try_grow(l->ev, &l->cap_ev, l->nr_ev,
							     sizeof(*p), 1024);

			if (!p)
				return false;
			l->ev = p;
		}
		l->ev[l->nr_ev++] = e->u.ev;
	} else if (e->op == PD_NEXT) {
		return rec_block(l, r, &e->u.b);
	}
	return true;
}

/* A block's record into *b, but a truncated one's bytes (the log's pd_raw). */
static inline void rec_to_block(const struct pd_rec *r, struct pt_block *b)
{
	b->ip = r->ip;
	b->end_ip = r->end_ip;
	b->isid = r->isid;
	b->ninsn = r->ninsn;
	b->iclass = r->iclass;
	b->mode = r->mode;
	b->speculative = !!(r->flags & PD_F_SPEC);
	b->truncated = !!(r->flags & PD_F_TRUNC);
	b->size = 0;
}

/* The call at p, into *e, and p and *st past it (st: the state before it). */
static void log_get(const struct pd_log *l, struct pd_pos *p, struct pd_st *st,
		    struct pd_ent *e)
{
	const struct pd_rec *r = &l->rec[p->rec++];

	if (r->flags & PD_F_STATE)
		*st = l->st[p->st++];
	e->op = r->op;
	e->status = r->status;
	e->tsc = st->tsc;
	e->offset = st->offset;
	e->lost_mtc = st->lost_mtc;
	e->lost_cyc = st->lost_cyc;
	e->time_ret = st->time_ret;
	e->off_ret = st->off_ret;
	if (r->op == PD_EVENT) {
		e->u.ev = l->ev[p->ev++];
	} else if (r->op == PD_NEXT) {
		rec_to_block(r, &e->u.b);
		if (r->flags & PD_F_TRUNC) {
			memcpy(e->u.b.raw, l->raw[p->raw].raw, sizeof(e->u.b.raw));
			e->u.b.size = l->raw[p->raw++].size;
		}
	}
}

static void log_free(struct pd_log *l)
{
	free(l->rec);
	free(l->st);
	free(l->ev);
	free(l->raw);
	memset(l, 0, sizeof(*l));
}

/*
 * A block that ends at an instruction that is no branch, with nothing
 * pending: libipt goes on with the next instruction at the next call.
 * Whether it ends a block there depends on what its block cache held
 * (when code is first decoded, blocks end at more places), and so on the
 * decode's history; the caller gets the blocks that follow joined to it
 * (pdec_next()).
 */
static inline bool goes_on(int st, const struct pt_block *a)
{
	return st >= 0 && !(st & (pts_event_pending | pts_eos)) && a->ninsn &&
	       a->iclass == ptic_other;
}

/* ---- the workers ------------------------------------------------------ */

/* Fill in the decoder's time and offset after a call. */
static void ent_state(struct pd_ent *e, struct pt_block_decoder *dec, enum pd_op op, int st)
{
	e->op = op;
	e->status = st;
	e->time_ret = pt_blk_time(dec, &e->tsc, &e->lost_mtc, &e->lost_cyc);
	if (e->time_ret < 0) {
		e->tsc = 0;
		e->lost_mtc = 0;
		e->lost_cyc = 0;
	}
	e->off_ret = pt_blk_get_offset(dec, &e->offset);
	if (e->off_ret < 0)
		e->offset = 0;
}

/* One call, as stream_run() makes it; the result in *e. */
static int dec_call(struct pt_block_decoder *dec, enum pd_op op, struct pd_ent *e)
{
	int st;

	memset(&e->u, 0, sizeof(e->u));
	switch (op) {
	case PD_SYNC:
		st = pt_blk_sync_forward(dec);
		break;
	case PD_NEXT:
		st = pt_blk_next(dec, &e->u.b, sizeof(e->u.b));
		break;
	default:
		st = pt_blk_event(dec, &e->u.ev, sizeof(e->u.ev));
		break;
	}
	ent_state(e, dec, op, st);
	return st;
}

/* The call stream_run() makes after one that returned st. */
static enum pd_op next_op(int st)
{
	if (st < 0)
		return PD_SYNC;
	return st & pts_event_pending ? PD_EVENT : PD_NEXT;
}

/*
 * The anchor of t (the last status update of its first PSB+, else its
 * sync), and the place after it.  An empty log (given up) has none: a
 * failed sync, which try_join() passes by.
 */
static void find_anchor(struct pd_task *t)
{
	struct pd_pos p = { 0 };
	struct pd_st st = { 0 };

	if (!t->log.nr_rec) {
		t->anchor = (struct pd_ent){ .op = PD_SYNC, .status = -pte_nomem };
		t->after = p;
		return;
	}
	log_get(&t->log, &p, &st, &t->anchor);
	while (p.rec < t->log.nr_rec && t->log.rec[p.rec].op == PD_EVENT &&
	       t->log.ev[p.ev].status_update)
		log_get(&t->log, &p, &st, &t->anchor);
	t->after = p;
}

/*
 * A block into the log, the hot path of the workers (no struct pd_ent),
 * and the decoder's offset after it into *off.  False: no memory.
 */
static bool log_block(struct pd_log *l, struct pt_block_decoder *dec, int st,
		      const struct pt_block *b, uint64_t *off, bool check_time)
{
	const struct pd_st *a = &l->st[l->nr_st - 1];	/* the sync made one */
	uint32_t lost_mtc, lost_cyc;
	uint64_t offset, tsc;
	int off_ret, time_ret;
	struct pd_rec *r;
	struct pd_st *s;
	uint8_t flags = 0;
	bool unmoved;

	/*
	 * Locals, compared one by one: libipt writes them in 4-byte pieces,
	 * which a compare of a struct (memcmp(), or fields the compiler
	 * merges) loads 8 at a time, stalling on each (a load cannot span
	 * two stores in flight).
	 */
	off_ret = pt_blk_get_offset(dec, &offset);
	if (off_ret < 0)
		offset = 0;
	*off = offset;
	/*
	 * The time libipt gives after a call (pt_blk_time(): the query
	 * decoder's time at its last fetch of a TNT or TIP packet or of an
	 * event) changes only where the call fetched one: a packet moves the
	 * offset, an event is reported pending.  Else it is the last one,
	 * a third of the cost of a block's log when asked (PD_CHECK_TIME
	 * asks every time and stops the decode where the two differ).
	 */
	unmoved = st >= 0 && !(st & pts_event_pending) && offset == a->offset &&
		  off_ret == a->off_ret;
	if (unmoved && !check_time) {
		/* nothing changed: no state (most blocks) */
	} else {
		time_ret = pt_blk_time(dec, &tsc, &lost_mtc, &lost_cyc);
		if (time_ret < 0) {
			tsc = 0;
			lost_mtc = 0;
			lost_cyc = 0;
		}
		if (unmoved && (tsc != a->tsc || time_ret != a->time_ret ||
				lost_mtc != a->lost_mtc || lost_cyc != a->lost_cyc)) {
			fprintf(stderr, "itrace: %s: the time changed at offset %#" PRIx64
				" with no packet or event fetched\n", PD_CHECK_TIME, offset);
			abort();
		}
		if (offset != a->offset || tsc != a->tsc || off_ret != a->off_ret ||
		    time_ret != a->time_ret || lost_mtc != a->lost_mtc || lost_cyc != a->lost_cyc) {
			s = st_next(l);
			if (!s)
				return false;
			*s = (struct pd_st){ .tsc = tsc, .offset = offset, .lost_mtc = lost_mtc,
					     .lost_cyc = lost_cyc, .time_ret = time_ret,
					     .off_ret = off_ret };
			flags = PD_F_STATE;
		}
	}
	r = rec_next(l);
	if (!r)
		return false;
	*r = (struct pd_rec){ .op = PD_NEXT, .status = st, .flags = flags };
	return rec_block(l, r, b);
}

/*
 * Decode t into its log.  Out of memory, the log is given up (emptied,
 * t->nomem set): the caller's thread decodes that part itself, with
 * libipt (go_live()), as it does past any log's end.
 *
 * A log ends PD_OVERLAP calls past the next task's PSB, but never after a
 * block that goes on: the caller may run to the end of a log (when the
 * next task's log was given up, or its anchor is not met), and must not
 * be there in the middle of joining blocks, with part of a block in hand
 * that libipt, taking over, would give again as part of a longer one.
 */
static void run_task(struct pd_task *t)
{
	struct pt_block_decoder *dec = pt_blk_alloc_decoder(&t->pd->cfg);
	/*
	 * The log is built in a copy: the caller's thread reads the task
	 * (its start, its anchor) while it waits, and a counter written at
	 * every call in the same cache line would make both threads wait.
	 */
	struct pd_log l = t->log;
	const uint64_t end = t->end;
	const bool last = t->last;
	const bool check_time = t->pd->pool->check_time;
	struct pt_block b;
	struct pd_ent e;
	size_t past = 0;
	bool on = false;	/* the last call gave a block that goes on */
	uint64_t off;
	int st;

	if (!dec)
		goto nomem;
	pt_blk_set_image(dec, t->image);
	memset(&e.u, 0, sizeof(e.u));
	memset(&b, 0, sizeof(b));
	st = t->first ? pt_blk_sync_forward(dec) : pt_blk_sync_set(dec, t->start);
	ent_state(&e, dec, PD_SYNC, st);
	if (!log_add(&l, &e))
		goto nomem;
	off = e.offset;
	for (;;) {
		if (st == -pte_eos || (st >= 0 && !(st & pts_event_pending) && (st & pts_eos)))
			break;
		if (!last && off > end && ++past > PD_OVERLAP && !on)
			break;
		if (!(l.nr_rec & 1023) && __atomic_load_n(&t->cancel, __ATOMIC_RELAXED))
			break;
		if (next_op(st) == PD_NEXT) {
			/* as stream_run(): what an early error leaves is cleared */
			b.ip = 0;
			b.ninsn = 0;
			st = pt_blk_next(dec, &b, sizeof(b));
			if (!log_block(&l, dec, st, &b, &off, check_time))
				goto nomem;
			on = goes_on(st, &b);
			continue;
		}
		st = dec_call(dec, next_op(st), &e);
		if (!log_add(&l, &e))
			goto nomem;
		off = e.offset;
		on = false;
	}
out:
	pt_blk_free_decoder(dec);
	t->log = l;
	find_anchor(t);
	return;
nomem:
	/* its memory stays with the log, freed or reused as any log's */
	l.nr_rec = 0;
	l.nr_st = 0;
	l.nr_ev = 0;
	l.nr_raw = 0;
	t->nomem = true;
	goto out;
}

static void unqueue(struct pdec_pool *pool, struct pd_task *t);

/* pool->lock held: take t off the queue and decode it (the lock dropped meanwhile). */
static void run_queued(struct pdec_pool *pool, struct pd_task *t)
{
	unqueue(pool, t);
	t->state = T_RUNNING;
	pthread_mutex_unlock(&pool->lock);
	run_task(t);
	pthread_mutex_lock(&pool->lock);
	t->state = T_DONE;
}

static void *worker(void *arg)
{
	struct pdec_pool *pool = arg;

	pthread_mutex_lock(&pool->lock);
	for (;;) {
		struct pd_task *t;

		while (!pool->head && !pool->stop)
			pthread_cond_wait(&pool->work, &pool->lock);
		if (pool->stop)
			break;
		t = pool->head;
		run_queued(pool, t);
		pthread_cond_broadcast(&pool->done);
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

static uint64_t env_bytes(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return def;
	n = strtoull(v, &end, 0);
	return *end ? def : n;
}

struct pdec_pool *pdec_pool_new(unsigned int jobs)
{
	struct pdec_pool *pool;

	if (jobs < 2)
		return NULL;
	jobs--;		/* the caller's thread is one */
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		itrace_oom();
	pool->th = calloc(jobs, sizeof(*pool->th));
	if (!pool->th)
		itrace_oom();
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->work, NULL);
	pthread_cond_init(&pool->done, NULL);
	pool->task_bytes = env_bytes("ITRACE_DECODE_TASK", PD_TASK_BYTES);
	pool->min_bytes = env_bytes("ITRACE_DECODE_MIN", PD_MIN_BYTES);
	pool->check_time = env_bytes(PD_CHECK_TIME, 0) != 0;
	pool->want = jobs;
	return pool;
}

/* The workers, made when a run is first cut into tasks: false if none. */
static bool pool_start(struct pdec_pool *pool)
{
	if (!pool->started) {
		pool->started = true;
		for (pool->nr = 0; pool->nr < pool->want; pool->nr++)
			if (pthread_create(&pool->th[pool->nr], NULL, worker, pool))
				break;
	}
	return pool->nr > 0;
}

void pdec_pool_free(struct pdec_pool *pool)
{
	unsigned int i;

	if (!pool)
		return;
	pthread_mutex_lock(&pool->lock);
	pool->stop = true;
	pthread_cond_broadcast(&pool->work);
	pthread_mutex_unlock(&pool->lock);
	for (i = 0; i < pool->nr; i++)
		pthread_join(pool->th[i], NULL);
	pthread_cond_destroy(&pool->done);
	pthread_cond_destroy(&pool->work);
	pthread_mutex_destroy(&pool->lock);
	while (pool->nr_spare)
		log_free(&pool->spare[--pool->nr_spare]);
	free(pool->spare);
	free(pool->th);
	free(pool);
}

void pdec_get_stats(const struct pdec_pool *pool, struct pdec_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (pool)
		*st = pool->stats;
}

/* ---- tasks ------------------------------------------------------------ */

/* pool->lock held: take t off the queue if it is on it. */
static void unqueue(struct pdec_pool *pool, struct pd_task *t)
{
	struct pd_task **p;

	for (p = &pool->head; *p; p = &(*p)->qnext) {
		if (*p == t) {
			*p = t->qnext;
			t->state = T_NEW;
			return;
		}
	}
}

/* The window of next_from_log() from where the log serves now; false: none. */
static bool fast_window(struct pdec *pd)
{
	const struct pd_task *t;

	if (pd->has_held || pd->live || !pd->ready)
		return false;
	t = &pd->tasks[pd->cur];
	if (pd->pos.rec >= t->log.nr_rec)
		return false;
	pd->fast_rec = &t->log.rec[pd->pos.rec];
	pd->fast_end = &t->log.rec[t->log.nr_rec];
	pd->fast_st = &t->log.st[pd->pos.st];
	pd->fast_join = pd->join < pd->nr_tasks ? pd->tasks[pd->join].start : UINT64_MAX;
	return true;
}

/* The window is gone: pos moved, or a log it may be in was released. */
static inline void no_window(struct pdec *pd)
{
	pd->fast_rec = NULL;
	pd->fast_end = NULL;
}

/* Forget t's work: off the queue, or stopped and waited for; log freed. */
static void release(struct pdec *pd, struct pd_task *t)
{
	struct pdec_pool *pool = pd->pool;

	no_window(pd);	/* it may be t's log */
	pthread_mutex_lock(&pool->lock);
	if (t->state == T_QUEUED)
		unqueue(pool, t);
	if (t->state == T_RUNNING) {
		__atomic_store_n(&t->cancel, 1, __ATOMIC_RELAXED);
		while (t->state == T_RUNNING)
			pthread_cond_wait(&pool->done, &pool->lock);
	}
	t->state = T_NEW;
	if (t->nomem)
		pool->stats.nomem++;
	t->nomem = false;
	/* the memory of its log serves another task */
	if (t->log.cap_rec && pool->nr_spare < 4 * pool->nr) {
		pool->spare = itrace_grow(pool->spare, &pool->cap_spare, pool->nr_spare,
					  sizeof(*pool->spare), 16);
		pool->spare[pool->nr_spare++] = t->log;
		memset(&t->log, 0, sizeof(t->log));
	}
	pthread_mutex_unlock(&pool->lock);
	if (t->image)
		pt_image_free(t->image);
	t->image = NULL;
	log_free(&t->log);
	t->cancel = 0;
	t->queued = false;
}

/*
 * Hand t to the workers with a copy of the caller's image: libipt's
 * images are not for two threads (a lookup moves the section it finds to
 * the front), the sections and their cache are.
 */
static void queue(struct pdec *pd, struct pd_task *t)
{
	struct pdec_pool *pool = pd->pool;
	struct pd_task **p;

	t->image = pt_image_alloc(NULL);
	if (!t->image || (pd->image && pt_image_copy(t->image, pd->image) < 0))
		itrace_oom();
	t->orig = pd->image;
	t->qnext = NULL;
	t->queued = true;
	pool->stats.tasks++;
	pthread_mutex_lock(&pool->lock);
	if (pool->nr_spare) {
		t->log = pool->spare[--pool->nr_spare];
		t->log.nr_rec = 0;
		t->log.nr_st = 0;
		t->log.nr_ev = 0;
		t->log.nr_raw = 0;
	}
	for (p = &pool->head; *p; p = &(*p)->qnext)
		;
	*p = t;
	t->state = T_QUEUED;
	pthread_cond_signal(&pool->work);
	pthread_mutex_unlock(&pool->lock);
}

/*
 * Keep the tasks after the current one in work: 2 per thread ahead (the
 * caller's thread takes queued tasks while it waits).
 */
static void refill(struct pdec *pd)
{
	size_t lim = (pd->join > pd->cur ? pd->join : pd->cur + 1) + 2 * (pd->pool->nr + 1);

	if (lim > pd->nr_tasks)
		lim = pd->nr_tasks;
	/* tasks between the current one and the next to join were dropped */
	if (pd->queued > pd->cur && pd->queued < pd->join)
		pd->queued = pd->join;
	for (; pd->queued < lim; pd->queued++)
		if (!pd->tasks[pd->queued].queued)
			queue(pd, &pd->tasks[pd->queued]);
}

/* Wait until t's log is complete; run it here if no worker took it yet. */
static void wait_task(struct pdec *pd, struct pd_task *t)
{
	struct pdec_pool *pool = pd->pool;

	if (!t->queued)
		queue(pd, t);
	pthread_mutex_lock(&pool->lock);
	if (t->state == T_QUEUED)
		run_queued(pool, t);
	/*
	 * While a worker decodes t, this thread decodes a task queued after
	 * it rather than wait: the caller's thread is one of the jobs.
	 */
	while (t->state == T_RUNNING) {
		struct pd_task *u = pool->head;

		if (!u) {
			pthread_cond_wait(&pool->done, &pool->lock);
			continue;
		}
		run_queued(pool, u);
		pool->stats.helped++;
	}
	pthread_mutex_unlock(&pool->lock);
}

/*
 * Cut the run at PSBs into tasks of at least pool->task_bytes.  Fewer
 * than two: no tasks (the run is decoded inline).
 */
static void make_tasks(struct pdec *pd)
{
	const uint64_t size = pd->cfg.end - pd->cfg.begin;
	struct pt_packet_decoder *pk;
	uint64_t last = 0, off;
	size_t cap = 0;
	bool seen = false;

	if (size < pd->pool->min_bytes)
		return;
	pk = pt_pkt_alloc_decoder(&pd->cfg);
	if (!pk)
		itrace_oom();
	while (pt_pkt_sync_forward(pk) >= 0 && pt_pkt_get_sync_offset(pk, &off) >= 0) {
		struct pt_packet p;

		if (!seen || off - last >= pd->pool->task_bytes) {
			pd->tasks = itrace_grow(pd->tasks, &cap, pd->nr_tasks, sizeof(*pd->tasks),
						64);
			memset(&pd->tasks[pd->nr_tasks], 0, sizeof(*pd->tasks));
			pd->tasks[pd->nr_tasks].pd = pd;
			pd->tasks[pd->nr_tasks].start = seen ? off : 0;
			pd->tasks[pd->nr_tasks].first = !seen;
			pd->nr_tasks++;
			last = off;
			seen = true;
		}
		/* past this PSB: the next sync looks beyond it */
		if (pt_pkt_next(pk, &p, sizeof(p)) < 0)
			break;
	}
	pt_pkt_free_decoder(pk);
	if (pd->nr_tasks < 2 || !pool_start(pd->pool)) {
		free(pd->tasks);
		pd->tasks = NULL;
		pd->nr_tasks = 0;
		return;
	}
	for (size_t i = 0; i < pd->nr_tasks; i++) {
		pd->tasks[i].last = i + 1 == pd->nr_tasks;
		pd->tasks[i].end = pd->tasks[i].last ? size : pd->tasks[i + 1].start;
	}
}

/* ---- serving the caller ----------------------------------------------- */

static bool same_event(const struct pt_event *a, const struct pt_event *b)
{
	if (a->type != b->type || a->status_update != b->status_update ||
	    a->ip_suppressed != b->ip_suppressed || a->has_tsc != b->has_tsc ||
	    (a->has_tsc && a->tsc != b->tsc))
		return false;
	switch (a->type) {
	case ptev_exec_mode:
		return a->variant.exec_mode.ip == b->variant.exec_mode.ip &&
		       a->variant.exec_mode.mode == b->variant.exec_mode.mode;
	case ptev_paging:
		return a->variant.paging.cr3 == b->variant.paging.cr3 &&
		       a->variant.paging.non_root == b->variant.paging.non_root;
	case ptev_async_paging:
		return a->variant.async_paging.cr3 == b->variant.async_paging.cr3 &&
		       a->variant.async_paging.ip == b->variant.async_paging.ip;
	case ptev_tsx:
		return a->variant.tsx.ip == b->variant.tsx.ip &&
		       a->variant.tsx.speculative == b->variant.tsx.speculative &&
		       a->variant.tsx.aborted == b->variant.tsx.aborted;
	case ptev_cbr:
		return a->variant.cbr.ratio == b->variant.cbr.ratio;
	case ptev_enabled:
		return a->variant.enabled.ip == b->variant.enabled.ip;
	default:
		return false;
	}
}

/* The same call with the same result and decoder state after it. */
static bool same_ent(const struct pd_ent *a, const struct pd_ent *b)
{
	if (a->op != b->op || a->status != b->status || a->offset != b->offset ||
	    a->off_ret != b->off_ret || a->time_ret != b->time_ret || a->tsc != b->tsc ||
	    a->lost_mtc != b->lost_mtc || a->lost_cyc != b->lost_cyc)
		return false;
	return a->op != PD_EVENT || same_event(&a->u.ev, &b->u.ev);
}

/*
 * After a call that left the decoder as e says: the next task's log takes
 * over at its anchor; tasks whose anchor is behind are dropped.
 */
static void try_join(struct pdec *pd, const struct pd_ent *e)
{
	while (pd->join < pd->nr_tasks) {
		struct pd_task *n = &pd->tasks[pd->join];

		if (e->offset < n->start)
			return;
		wait_task(pd, n);
		/*
		 * A sync that failed is no anchor: where libipt's next sync
		 * lands after it depends on how it got there.
		 */
		if (n->anchor.status < 0 || e->offset > n->anchor.offset) {
			release(pd, n);
			pd->join++;
			continue;
		}
		if (!same_ent(e, &n->anchor))
			return;
		if (pd->live) {
			pt_blk_free_decoder(pd->live);
			pd->live = NULL;
		} else {
			release(pd, &pd->tasks[pd->cur]);
		}
		pd->cur = pd->join++;
		pd->ready = true;	/* wait_task(n) above */
		pd->pos = n->after;
		pd->st = (struct pd_st){ .tsc = n->anchor.tsc, .offset = n->anchor.offset,
					 .lost_mtc = n->anchor.lost_mtc,
					 .lost_cyc = n->anchor.lost_cyc,
					 .time_ret = n->anchor.time_ret,
					 .off_ret = n->anchor.off_ret };
		pd->pool->stats.joined++;
		pd->joins++;
		refill(pd);
		return;
	}
}

static inline bool joins(const struct pt_block *a, const struct pt_block *c)
{
	return c->ninsn && c->isid == a->isid && c->mode == a->mode &&
	       c->speculative == a->speculative && a->ninsn + c->ninsn <= UINT16_MAX;
}

/*
 * The next item of a log from p, not beyond end: a call, or a block and
 * the blocks joined to it as pdec_next() joins them, into *e.
 */
static void log_item(const struct pd_log *l, struct pd_pos *p, struct pd_st *st,
		     const struct pd_pos *end, struct pd_ent *e)
{
	log_get(l, p, st, e);
	while (e->op == PD_NEXT && goes_on(e->status, &e->u.b) && p->rec < end->rec &&
	       l->rec[p->rec].op == PD_NEXT) {
		struct pd_pos q = *p;
		struct pd_st qs = *st;
		struct pd_ent c;

		log_get(l, &q, &qs, &c);
		if (!joins(&e->u.b, &c.u.b))
			break;
		*p = q;
		*st = qs;
		c.u.b.ip = e->u.b.ip;
		c.u.b.ninsn += e->u.b.ninsn;
		*e = c;
	}
}

/*
 * The log cannot serve the next call: a libipt decoder takes over where
 * the caller is, the current log's calls made again with its image.
 * libipt may end blocks elsewhere this time (its block cache knows more
 * code now): the log is gone through as pdec_next() joins blocks, and
 * libipt's blocks are taken until they hold the same instructions.
 */
static void go_live(struct pdec *pd)
{
	struct pd_task *t = &pd->tasks[pd->cur];
	struct pd_pos p = { 0 };
	struct pd_st st = { 0 };
	struct pd_ent e, l;

	pd->live = pt_blk_alloc_decoder(&pd->cfg);
	if (!pd->live)
		itrace_oom();
	pt_blk_set_image(pd->live, t->orig);
	while (p.rec < pd->pos.rec) {
		bool first = !p.rec;
		unsigned int n = 0;
		int ret;

		log_item(&t->log, &p, &st, &pd->pos, &l);
		if (first && !t->first) {
			ret = pt_blk_sync_set(pd->live, t->start);
			ent_state(&e, pd->live, PD_SYNC, ret);
		} else if (l.op != PD_NEXT) {
			ret = dec_call(pd->live, l.op, &e);
		} else {
			do {
				ret = dec_call(pd->live, PD_NEXT, &e);
				n += e.u.b.ninsn;
			} while (n < l.u.b.ninsn && goes_on(ret, &e.u.b));
			/*
			 * The log's last block, held by pdec_next(), ends where
			 * libipt's does not: libipt's block has it and more,
			 * which pdec_next() joins to it anyway.
			 */
			if (n > l.u.b.ninsn && p.rec == pd->pos.rec && pd->has_held &&
			    e.u.b.ip == pd->held.u.b.ip) {
				pd->held = e;
				break;
			}
			if (n != l.u.b.ninsn || e.u.b.end_ip != l.u.b.end_ip)
				ret = INT32_MIN;
		}
		if (ret != l.status || e.offset != l.offset) {
			fprintf(stderr,
				"itrace: internal error: libipt decoded differently the second time (offset %#llx)\n",
				(unsigned long long)l.offset);
			break;
		}
	}
	release(pd, t);
	if (pd->join <= pd->cur)
		pd->join = pd->cur + 1;
	pd->pool->stats.live++;
	/*
	 * Each take-over decodes part of a task again, in the caller's
	 * thread: where they come often (a CPU's trace that changes address
	 * spaces at every context switch), the rest of the run is decoded
	 * there, without tasks.
	 */
	if (++pd->lives >= PD_MAX_LIVES && pd->lives * PD_MAX_LIVES > pd->joins) {
		size_t i;

		for (i = pd->join; i < pd->nr_tasks; i++)
			release(pd, &pd->tasks[i]);
		pd->join = pd->nr_tasks;
		pd->queued = pd->nr_tasks;
	}
}

/* The next call's result, from the log or from libipt, into *e. */
static void fetch(struct pdec *pd, enum pd_op op, struct pd_ent *e)
{
	if (!pd->pool) {
		dec_call(pd->live, op, e);
		return;
	}
	if (!pd->live) {
		struct pd_task *t = &pd->tasks[pd->cur];

		if (!pd->ready) {
			wait_task(pd, t);
			pd->ready = true;
		}
		if (pd->pos.rec < t->log.nr_rec && t->log.rec[pd->pos.rec].op == op) {
			log_get(&t->log, &pd->pos, &pd->st, e);
			try_join(pd, e);
			return;
		}
		go_live(pd);
	}
	dec_call(pd->live, op, e);
	try_join(pd, e);
}

/* What the caller is given, and what its time and offset queries answer. */
static int deliver(struct pdec *pd, const struct pd_ent *e)
{
	pd->view.tsc = e->tsc;
	pd->view.offset = e->offset;
	pd->view.lost_mtc = e->lost_mtc;
	pd->view.lost_cyc = e->lost_cyc;
	pd->view.time_ret = e->time_ret;
	pd->view.off_ret = e->off_ret;
	pd->has_view = true;
	pd->view_st = false;
	return e->status;
}

struct pdec *pdec_new(struct pdec_pool *pool, const struct pt_config *cfg)
{
	struct pdec *pd = calloc(1, sizeof(*pd));

	if (!pd)
		itrace_oom();
	pd->pool = pool;
	pd->cfg = *cfg;
	/* blocks that span a direct branch in one history would not in another */
	pd->cfg.flags.variant.block.end_on_call = 1;
	pd->cfg.flags.variant.block.end_on_jump = 1;
	if (!pool) {
		pd->live = pt_blk_alloc_decoder(&pd->cfg);
		if (!pd->live) {
			free(pd);
			return NULL;
		}
	}
	return pd;
}

void pdec_free(struct pdec *pd)
{
	size_t i;

	if (!pd)
		return;
	for (i = 0; i < pd->nr_tasks; i++) {
		release(pd, &pd->tasks[i]);
		log_free(&pd->tasks[i].log);
	}
	free(pd->tasks);
	if (pd->live)
		pt_blk_free_decoder(pd->live);
	free(pd);
}

int pdec_set_image(struct pdec *pd, struct pt_image *image)
{
	size_t i;

	if (image == pd->image && (pd->live || !pd->started))
		return 0;
	if (!pd->pool || !pd->started) {
		pd->image = image;
		return pd->live ? pt_blk_set_image(pd->live, image) : 0;
	}
	if (image == pd->image)
		return 0;
	if (!pd->live)
		go_live(pd);
	pd->image = image;
	/* what was decoded ahead with the old image is decoded again */
	for (i = pd->join; i < pd->queued; i++)
		release(pd, &pd->tasks[i]);
	if (pd->queued > pd->join)
		pd->queued = pd->join;
	refill(pd);
	return pt_blk_set_image(pd->live, image);
}

int pdec_sync_forward(struct pdec *pd)
{
	struct pd_ent e;

	if (!pd->started && pd->pool) {
		make_tasks(pd);
		if (!pd->nr_tasks) {
			pd->live = pt_blk_alloc_decoder(&pd->cfg);
			if (!pd->live)
				itrace_oom();
			pt_blk_set_image(pd->live, pd->image);
		} else {
			pd->join = 1;
			refill(pd);
		}
	}
	pd->started = true;
	pd->has_held = false;
	no_window(pd);
	if (!pd->pool) {
		pd->view_live = true;
		return pt_blk_sync_forward(pd->live);
	}
	fetch(pd, PD_SYNC, &e);
	return deliver(pd, &e);
}

/*
 * Without a pool, libipt's decoder serves the caller itself, and its
 * time and offset answer the caller's queries, but while a block is held
 * (the state after the block given is kept then).
 */
static int serial_next(struct pdec *pd, struct pt_block *b)
{
	struct pt_block c;
	int st, cst;

	pd->view_live = true;
	if (pd->has_held) {
		*b = pd->held.u.b;
		pd->has_held = false;
		st = pd->held.status;
	} else {
		st = pt_blk_next(pd->live, b, sizeof(*b));
	}
	while (goes_on(st, b)) {
		struct pd_ent now;

		ent_state(&now, pd->live, PD_NEXT, st);
		memset(&c, 0, sizeof(c));
		cst = pt_blk_next(pd->live, &c, sizeof(c));
		if (!joins(b, &c)) {
			pd->held.u.b = c;
			pd->held.status = cst;
			pd->has_held = true;
			deliver(pd, &now);
			pd->view_live = false;
			break;
		}
		c.ip = b->ip;
		c.ninsn += b->ninsn;
		*b = c;
		st = cst;
	}
	return st;
}

/*
 * The common case of pdec_next() from a log, without a struct pd_ent (its
 * copies cost more than the rest): the next call is a block that ends at
 * a branch (or with something pending), with no task to join before it.
 * False: the general path serves.  Only what changes at every block is
 * read and written (pos and st stay as the general path needs them).
 */
static inline bool next_from_log(struct pdec *pd, struct pt_block *b, int *status)
{
	const struct pd_rec *r = pd->fast_rec;
	const struct pd_st *n;

	if (!r) {
		if (!fast_window(pd))
			return false;
		r = pd->fast_rec;
	} else if (r == pd->fast_end) {
		return false;	/* the log's end: the general path waits or joins */
	}
	if (r->op != PD_NEXT || (r->flags & PD_F_TRUNC))
		return false;
	n = r->flags & PD_F_STATE ? pd->fast_st : &pd->st;
	if (n->offset >= pd->fast_join)
		return false;
	rec_to_block(r, b);
	if (goes_on(r->status, b))
		return false;
	/*
	 * Without a branch on PD_F_STATE, which about a fifth of the blocks
	 * have, in no order a predictor could learn: without it, n is
	 * &pd->st, copied onto itself.
	 */
	pd->st = *n;
	pd->pos.st += r->flags & PD_F_STATE;
	pd->fast_st += r->flags & PD_F_STATE;
	pd->pos.rec++;
	pd->fast_rec = r + 1;
	pd->has_view = true;
	pd->view_st = true;
	*status = r->status;
	return true;
}

int pdec_next(struct pdec *pd, struct pt_block *b)
{
	struct pd_ent a, c;
	int st;

	if (!pd->pool)
		return serial_next(pd, b);
	if (next_from_log(pd, b, &st))
		return st;
	no_window(pd);

	if (pd->has_held) {
		a = pd->held;
		pd->has_held = false;
	} else {
		fetch(pd, PD_NEXT, &a);
	}
	while (goes_on(a.status, &a.u.b)) {
		fetch(pd, PD_NEXT, &c);
		if (!joins(&a.u.b, &c.u.b)) {
			pd->held = c;
			pd->has_held = true;
			break;
		}
		c.u.b.ip = a.u.b.ip;
		c.u.b.ninsn += a.u.b.ninsn;
		a = c;
	}
	*b = a.u.b;
	return deliver(pd, &a);
}

int pdec_event(struct pdec *pd, struct pt_event *ev)
{
	struct pd_ent e;

	if (!pd->pool) {
		pd->has_held = false;
		pd->view_live = true;
		return pt_blk_event(pd->live, ev, sizeof(*ev));
	}
	pd->has_held = false;
	no_window(pd);
	fetch(pd, PD_EVENT, &e);
	*ev = e.u.ev;
	return deliver(pd, &e);
}

int pdec_time(struct pdec *pd, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc)
{
	const struct pd_st *v;

	if (pd->view_live)
		return pt_blk_time(pd->live, tsc, lost_mtc, lost_cyc);
	if (!pd->has_view)
		return -pte_no_time;
	v = pd->view_st ? &pd->st : &pd->view;
	*tsc = v->tsc;
	*lost_mtc = v->lost_mtc;
	*lost_cyc = v->lost_cyc;
	return v->time_ret;
}

int pdec_get_offset(struct pdec *pd, uint64_t *offset)
{
	const struct pd_st *v;

	if (pd->view_live)
		return pt_blk_get_offset(pd->live, offset);
	if (!pd->has_view)
		return -pte_nosync;
	v = pd->view_st ? &pd->st : &pd->view;
	*offset = v->offset;
	return v->off_ret;
}
