// SPDX-License-Identifier: GPL-2.0
/*
 * The threads, processes and address spaces of a recording, and the
 * decode of its buffers in time order.
 *
 * A recording by `itrace record` (file version 2) has one buffer per CPU
 * (or one for a task with --no-inherit) and a sideband whose records all
 * carry a sample_id (pid, tid, time, cpu).  It tells:
 *  - the address spaces: a process has one from its fork (a copy of its
 *    parent's mappings) or from before the recording (the synthesized
 *    mappings of -p and -a), and a new one at each exec (COMM with
 *    PERF_RECORD_MISC_COMM_EXEC); each gets the MMAP2 records of its time,
 *    in its own libipt image and symbol table (the file sections are
 *    shared through one image section cache);
 *  - who wrote which bytes of a buffer: with per-task events (a command,
 *    -p, -t) the kernel ends an output transaction whenever the task is
 *    switched out (and at each PMI), and its PERF_RECORD_AUX says which
 *    bytes the task wrote: exact, whatever the timing packets; with
 *    CPU-wide events (-a, -C) the trace runs through context switches and
 *    the PERF_RECORD_SWITCH_CPU_WIDE records say who ran from when, which
 *    is matched with the time of the trace (TSC, MTC, CYC; the TIME
 *    section converts TSC to perf time).
 * The owner is looked up where the trace (re)starts: at every TIP.PGE
 * (libipt's ptev_enabled: a task is switched in, or returns to user mode
 * in a user-only trace), after a sync at a PSB, and at a CR3 change (PIP,
 * traces with kernel mode: an exec).  The thread is taken at the offset
 * of the PGE (per-task) or its time (CPU-wide); the address space by time.
 *
 * Each buffer is a continuous packet stream (the decoder state carries
 * over a switch-out and the next switch-in; on real hardware no PSB need
 * come between), so each buffer keeps one decoder per run of contiguous
 * bytes, and the decoders take turns: one goes on until its trace passes
 * to another thread, then the buffer whose next piece is the oldest goes
 * on.  So a thread that moves between CPUs is decoded in the order it
 * ran, and its decoder state (the branch waiting for its target, the
 * call depth) goes with it.
 *
 * Recordings without sample ids (version 1, perf.data, the host
 * simulator's) have one address space that holds every mapping and one
 * thread, as before.
 */
#include <errno.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "itrace.h"
#include "itrace-file.h"
#include "pdec.h"
#include "perf-event.h"
#include "sym.h"
#include "timeline.h"

#define NO_TIME		UINT64_MAX
#define TL_HASH		256

struct tl_owner {
	uint64_t		end;	/* the chunk ends before this offset */
	uint64_t		time;	/* when it ended (the task was switched out) */
	struct tl_thread	*th;
};

struct tl_switch {
	uint64_t		time;
	struct tl_thread	*th;	/* runs from time on */
	bool			out;	/* a switch-out record (th: the next task) */
};

struct tl_buf {
	uint32_t		idx;
	struct tl_owner		*own;
	size_t			nr_own, cap_own;
	struct tl_switch	*sw;
	size_t			nr_sw, cap_sw;
	uint64_t		*splits;	/* offsets where trace stopped and resumed */
	size_t			nr_splits, cap_splits;
};

struct timeline {
	struct itrace_data	*d;
	const char		*name;
	const struct tl_ops	*ops;
	void			*ctx;
	uint64_t		sample_type;
	bool			ids;		/* records carry pid, tid, time */
	bool			per_cpu, cpu_wide;
	bool			by_thread;	/* itrace_data.bufs_by_thread */
	bool			sw_owner;	/* perf.data: switches refine the owners */
	struct pt_image_section_cache *iscache;
	struct tl_aspace	**as;		/* every address space */
	size_t			nr_as, cap_as;
	struct tl_thread	*th_hash[TL_HASH];
	struct tl_thread	**th;
	size_t			nr_th, cap_th;
	struct tl_thread	*legacy;	/* the one thread of a recording without ids */
	struct tl_buf		*bufs;
	size_t			nr_bufs;
	size_t			nr_losses;
	uint64_t		first_time;
	bool			ready;		/* tl_done() ran: new ones are done at once */
	unsigned int		only_snapshot;	/* decode only this one (0: all) */
	bool			user_only;	/* tl_user_only() */
	/* tl_sync_switch(): __switch_to and __perf_event_task_sched_out, 0: off */
	uint64_t		switch_ip, ptss_ip;
	unsigned int		jobs;		/* tl_jobs() */
	struct pdec_pool	*pool;		/* tl_decode()'s block decoders' */
	uint64_t		look_pkts;	/* packets lookahead_tsc() read */
	uint64_t		looks;		/* and how often it was asked */
};

/* ---- threads, address spaces ---------------------------------------- */

static struct tl_thread *thread_get(struct timeline *tl, uint32_t pid, uint32_t tid)
{
	struct tl_thread **h = &tl->th_hash[tid % TL_HASH], *t;

	for (t = *h; t; t = t->hnext)
		if (t->tid == tid) {
			if (pid && pid != (uint32_t)-1)
				t->pid = pid;
			return t;
		}
	t = calloc(1, sizeof(*t));
	if (!t)
		itrace_oom();
	t->pid = pid == (uint32_t)-1 ? tid : pid;
	t->tid = tid;
	t->hnext = *h;
	*h = t;
	tl->th = itrace_grow(tl->th, &tl->cap_th, tl->nr_th, sizeof(*tl->th), 16);
	tl->th[tl->nr_th++] = t;
	return t;
}

static struct tl_aspace *aspace_new(struct timeline *tl, uint32_t pid, uint64_t start)
{
	struct tl_aspace *as = calloc(1, sizeof(*as)), **pp;
	size_t i;

	if (!as)
		itrace_oom();
	as->pid = pid;
	as->start = start;
	as->im.iscache = tl->iscache;
	as->im.image = pt_image_alloc("itrace");
	as->st = sym_new();
	if (!as->im.image || !as->st)
		itrace_oom();
	tl->ops->init_aspace(tl->ctx, as);
	if (tl->ready)
		sym_done(as->st);
	/* keep each pid's generations in order of start */
	for (i = 0; i < tl->nr_as; i++) {
		if (tl->as[i]->pid != pid)
			continue;
		for (pp = &tl->as[i]; *pp && (*pp)->start <= start; pp = &(*pp)->next)
			;
		as->next = *pp;
		*pp = as;
		/* not a head: not in tl->as; still freed through the chain */
		return as;
	}
	tl->as = itrace_grow(tl->as, &tl->cap_as, tl->nr_as, sizeof(*tl->as), 16);
	tl->as[tl->nr_as++] = as;
	return as;
}

/* The head of pid's generations, NULL if none. */
static struct tl_aspace *aspace_head(struct timeline *tl, uint32_t pid)
{
	size_t i;

	for (i = 0; i < tl->nr_as; i++)
		if (tl->as[i]->pid == pid)
			return tl->as[i];
	return NULL;
}

/* pid's address space at time (NO_TIME: the newest); created empty if none. */
static struct tl_aspace *aspace_at(struct timeline *tl, uint32_t pid, uint64_t time)
{
	struct tl_aspace *as, *best;

	if (!tl->ids)
		pid = 0;
	as = aspace_head(tl, pid);
	if (!as)
		return aspace_new(tl, pid, 0);
	for (best = as; as; as = as->next)
		if (time == NO_TIME || as->start <= time)
			best = as;
	return best;
}

static void add_map(struct timeline *tl, struct tl_aspace *as, const struct pev *ev)
{
	as->maps = itrace_grow(as->maps, &as->cap_maps, as->nr_maps, sizeof(*as->maps), 16);
	as->maps[as->nr_maps++] = ev->raw;
	tl->ops->add_map(tl->ctx, as, ev);
}

/* A new process at time: a copy of its parent's address space then. */
static void fork_aspace(struct timeline *tl, uint32_t pid, uint32_t ppid, uint64_t time)
{
	struct tl_aspace *parent = aspace_head(tl, ppid) ? aspace_at(tl, ppid, time) : NULL;
	struct tl_aspace *as = aspace_new(tl, pid, time);
	size_t i;

	for (i = 0; parent && i < parent->nr_maps; i++) {
		struct pev_iter it;
		struct pev ev;
		char err[64];
		uint16_t size;

		memcpy(&size, parent->maps[i] + 6, sizeof(size));
		pev_iter_init(&it, parent->maps[i], size);
		if (pev_next(&it, &ev, err, sizeof(err)) > 0)
			add_map(tl, as, &ev);
	}
}

/* ---- the sideband ---------------------------------------------------- */

static struct tl_buf *buf_get(struct timeline *tl, uint32_t idx)
{
	size_t i;

	for (i = 0; i < tl->nr_bufs; i++)
		if (tl->bufs[i].idx == idx)
			return &tl->bufs[i];
	tl->bufs = realloc(tl->bufs, (tl->nr_bufs + 1) * sizeof(*tl->bufs));
	if (!tl->bufs)
		itrace_oom();
	memset(&tl->bufs[tl->nr_bufs], 0, sizeof(*tl->bufs));
	tl->bufs[tl->nr_bufs].idx = idx;
	return &tl->bufs[tl->nr_bufs++];
}

/* The buffer a record's event wrote to: its CPU's, or the only one. */
static struct tl_buf *buf_of(struct timeline *tl, const struct pev_id *id)
{
	return buf_get(tl, tl->per_cpu || tl->cpu_wide ? id->cpu : 0);
}

struct rec {
	struct pev	ev;
	struct pev_id	id;
	size_t		n;		/* file order */
};

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->id.time != y->id.time)
		return x->id.time < y->id.time ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n;
}

static bool has_split(const struct tl_buf *b, uint64_t at)
{
	size_t i;

	for (i = 0; i < b->nr_splits; i++)
		if (b->splits[i] == at)
			return true;
	return false;
}

static void loss(struct timeline *tl, const struct rec *r)
{
	const struct pev *ev = &r->ev;
	uint64_t at = ev->type == PERF_RECORD_AUX ? ev->aux.offset + ev->aux.size : ev->aux.offset;
	struct tl_buf *b = buf_of(tl, &r->id);
	char cpu[32] = "";

	/* One stop may be told by both records: one gap. */
	if (has_split(b, at))
		return;
	if (tl->by_thread)
		snprintf(cpu, sizeof(cpu), " in buffer %u", b->idx);
	else if (tl->per_cpu || tl->cpu_wide)
		snprintf(cpu, sizeof(cpu), " on cpu %u", b->idx);
	if (ev->type == PERF_RECORD_AUX)
		fprintf(stderr, "itrace: %s: trace lost at trace offset 0x%llx%s (buffer full)\n",
			tl->name, (unsigned long long)at, cpu);
	else
		fprintf(stderr, "itrace: %s: trace lost at trace offset 0x%llx%s (%llu bytes%s)\n",
			tl->name, (unsigned long long)at, cpu, (unsigned long long)ev->aux.size,
			ev->aux.size ? "" : ", size unknown");
	tl->nr_losses++;
	b->splits = itrace_grow(b->splits, &b->cap_splits, b->nr_splits, sizeof(*b->splits), 16);
	b->splits[b->nr_splits++] = at;
}

static void handle(struct timeline *tl, const struct rec *r, bool *lost_warned)
{
	const struct pev *ev = &r->ev;
	const struct pev_id *id = &r->id;
	uint64_t time = tl->ids ? id->time : 0;
	struct tl_buf *b;
	struct tl_thread *th;

	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (!(ev->mmap.prot & PROT_EXEC))
			break;
		add_map(tl, tl->ids ? aspace_at(tl, ev->mmap.pid, NO_TIME) : aspace_at(tl, 0, 0),
			ev);
		break;
	case PERF_RECORD_COMM:
		th = thread_get(tl, ev->comm.pid, ev->comm.tid);
		th->traced = true;
		snprintf(th->comm, sizeof(th->comm), "%.*s", (int)ev->comm.name_len, ev->comm.name);
		if (tl->ids && (ev->misc & PERF_RECORD_MISC_COMM_EXEC))
			aspace_new(tl, ev->comm.pid, time);
		break;
	case PERF_RECORD_FORK:
		th = thread_get(tl, ev->task.pid, ev->task.tid);
		th->traced = true;
		if (tl->ids && ev->task.pid != ev->task.ppid)
			fork_aspace(tl, ev->task.pid, ev->task.ppid, time);
		if (!th->comm[0]) {
			struct tl_thread *p = thread_get(tl, -1, ev->task.ptid);

			memcpy(th->comm, p->comm, sizeof(th->comm));
		}
		break;
	case PERF_RECORD_ITRACE_START:
		th = thread_get(tl, ev->start.pid, ev->start.tid);
		th->traced = true;
		/*
		 * Per-task events: the trace of a CPU starts with this task
		 * (perf's intel_pt decoder takes it as the CPU's thread): the
		 * owner where no PERF_RECORD_AUX says one.
		 */
		if (!tl->ids || tl->cpu_wide)
			break;
		b = buf_of(tl, id);
		b->sw = itrace_grow(b->sw, &b->cap_sw, b->nr_sw, sizeof(*b->sw), 16);
		b->sw[b->nr_sw].time = time;
		b->sw[b->nr_sw].out = false;
		b->sw[b->nr_sw++].th = th;
		break;
	case PERF_RECORD_AUX:
		if (ev->aux.flags & PERF_AUX_FLAG_TRUNCATED)
			loss(tl, r);
		if (!tl->ids || (!ev->aux.size && !(ev->aux.flags & PERF_AUX_FLAG_OVERWRITE)))
			break;
		b = buf_of(tl, id);
		b->own = itrace_grow(b->own, &b->cap_own, b->nr_own, sizeof(*b->own), 16);
		b->own[b->nr_own].end = ev->aux.flags & PERF_AUX_FLAG_OVERWRITE ? ev->aux.offset :
					ev->aux.offset + ev->aux.size;
		b->own[b->nr_own].time = time;
		b->own[b->nr_own++].th = thread_get(tl, id->pid, id->tid);
		b->own[b->nr_own - 1].th->traced = true;
		break;
	case PERF_RECORD_ITRACE_LOST:
		loss(tl, r);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (!tl->ids)
			break;
		b = buf_of(tl, id);
		if (ev->misc & PERF_RECORD_MISC_SWITCH_OUT) {
			if (ev->type != PERF_RECORD_SWITCH_CPU_WIDE)
				break;
			/* the first record of a CPU: who ran until then */
			if (!b->nr_sw) {
				b->sw = itrace_grow(b->sw, &b->cap_sw, b->nr_sw,
						    sizeof(*b->sw), 16);
				b->sw[b->nr_sw].time = 0;
				b->sw[b->nr_sw].out = false;
				b->sw[b->nr_sw++].th = thread_get(tl, id->pid, id->tid);
			}
			th = thread_get(tl, ev->sw.next_prev_pid, ev->sw.next_prev_tid);
		} else {
			th = thread_get(tl, id->pid, id->tid);
		}
		b->sw = itrace_grow(b->sw, &b->cap_sw, b->nr_sw, sizeof(*b->sw), 16);
		b->sw[b->nr_sw].time = time;
		b->sw[b->nr_sw].out = ev->misc & PERF_RECORD_MISC_SWITCH_OUT;
		b->sw[b->nr_sw++].th = th;
		break;
	case PERF_RECORD_LOST:
		if (!*lost_warned)
			fprintf(stderr,
				"itrace: %s: warning: sideband records were lost while recording; mappings may be missing\n",
				tl->name);
		*lost_warned = true;
		break;
	default:
		break;
	}
}

static int cmp_owner(const void *a, const void *b)
{
	const struct tl_owner *x = a, *y = b;

	return x->end < y->end ? -1 : x->end > y->end;
}

struct timeline *tl_new(struct itrace_data *d, const char *name, const struct tl_ops *ops,
			void *ctx)
{
	struct timeline *tl = calloc(1, sizeof(*tl));
	struct rec *recs = NULL;
	size_t nr = 0, cap = 0, i;
	struct pev_iter it;
	bool lost_warned = false;
	char err[256];
	int r;

	if (!tl)
		itrace_oom();
	tl->d = d;
	tl->name = name;
	tl->ops = ops;
	tl->ctx = ctx;
	tl->sample_type = itrace_sample_type(d);
	tl->ids = (tl->sample_type & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME)) ==
		  (PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
	/* buffers by thread (perf.data): keyed as per-CPU ones, by the sample ids' CPU */
	tl->per_cpu = (d->hdr.flags & ITRACE_FLAG_PER_CPU) || d->bufs_by_thread;
	tl->by_thread = d->bufs_by_thread;
	tl->cpu_wide = d->hdr.flags & ITRACE_FLAG_CPU_WIDE;
	tl->sw_owner = d->is_perf_data && tl->ids && !tl->cpu_wide && tl_has_time(tl);
	tl->iscache = pt_iscache_alloc("itrace");
	if (!tl->iscache || pt_iscache_set_limit(tl->iscache, ITRACE_ISCACHE_LIMIT) < 0)
		itrace_oom();
	if (!tl->ids) {
		tl->legacy = thread_get(tl, d->hdr.pid, d->hdr.pid);
		aspace_new(tl, 0, 0);
	}

	pev_iter_init(&it, d->perf, d->perf_size);
	for (;;) {
		recs = itrace_grow(recs, &cap, nr, sizeof(*recs), 16);
		r = pev_next(&it, &recs[nr].ev, err, sizeof(err));
		if (r <= 0)
			break;
		if (pev_short(&recs[nr].ev))
			continue;
		if (!tl->ids || !pev_sample_id(&recs[nr].ev, tl->sample_type, &recs[nr].id))
			memset(&recs[nr].id, 0, sizeof(recs[nr].id));
		recs[nr].n = nr;
		nr++;
	}
	if (r < 0)
		fprintf(stderr, "itrace: %s: sideband: %s\n", name, err);
	if (tl->ids)
		qsort(recs, nr, sizeof(*recs), cmp_rec);
	for (i = 0; i < nr; i++) {
		if (!tl->first_time && recs[i].id.time)
			tl->first_time = recs[i].id.time;
		handle(tl, &recs[i], &lost_warned);
	}
	free(recs);
	for (i = 0; i < tl->nr_bufs; i++)
		if (tl->bufs[i].nr_own > 1)
			qsort(tl->bufs[i].own, tl->bufs[i].nr_own, sizeof(*tl->bufs[i].own),
			      cmp_owner);
	if (r < 0)
		tl->nr_losses++;	/* counted as an error by the caller */
	return tl;
}

static void free_aspace(struct tl_aspace *as)
{
	while (as) {
		struct tl_aspace *next = as->next;

		/* the section cache is the timeline's, freed by tl_free() */
		as->im.iscache = NULL;
		itrace_image_fini(&as->im);
		sym_free(as->st);
		free(as->maps);
		free(as);
		as = next;
	}
}

void tl_free(struct timeline *tl)
{
	size_t i;

	if (!tl)
		return;
	for (i = 0; i < tl->nr_as; i++)
		free_aspace(tl->as[i]);
	free(tl->as);
	for (i = 0; i < tl->nr_th; i++)
		free(tl->th[i]);
	free(tl->th);
	for (i = 0; i < tl->nr_bufs; i++) {
		free(tl->bufs[i].own);
		free(tl->bufs[i].sw);
		free(tl->bufs[i].splits);
	}
	free(tl->bufs);
	/* the images refer to the cache's sections: they went first */
	if (tl->iscache)
		pt_iscache_free(tl->iscache);
	free(tl);
}

void tl_walk_aspaces(struct timeline *tl, tl_aspace_fn_t fn, void *arg)
{
	size_t i;
	struct tl_aspace *as;

	for (i = 0; i < tl->nr_as; i++)
		for (as = tl->as[i]; as; as = as->next)
			fn(arg, as);
}

static void done_one(void *arg, struct tl_aspace *as)
{
	sym_done(as->st);
}

void tl_done(struct timeline *tl)
{
	tl_walk_aspaces(tl, done_one, NULL);
	tl->ready = true;
}

bool tl_has_threads(const struct timeline *tl)
{
	return tl->ids;
}

size_t tl_nr_losses(const struct timeline *tl)
{
	return tl->nr_losses;
}

bool tl_has_time(const struct timeline *tl)
{
	return tl->d->has_time && (tl->d->time.flags & ITRACE_TIME_ZERO);
}

uint64_t tl_first_time(const struct timeline *tl)
{
	return tl->first_time;
}

/* perf's tsc_to_perf_time() (tools/perf/util/tsc.c) */
uint64_t tl_tsc_to_ns(const struct timeline *tl, uint64_t tsc)
{
	const struct itrace_time *t = &tl->d->time;
	uint64_t quot, rem;

	if (!tl_has_time(tl))
		return 0;
	quot = tsc >> t->time_shift;
	rem = tsc & ((1ULL << t->time_shift) - 1);
	return t->time_zero + quot * t->time_mult + ((rem * t->time_mult) >> t->time_shift);
}

void tl_only_snapshot(struct timeline *tl, unsigned int n)
{
	tl->only_snapshot = n;
}

void tl_user_only(struct timeline *tl)
{
	tl->user_only = true;
}

void tl_jobs(struct timeline *tl, unsigned int jobs)
{
	tl->jobs = jobs;
}

uint64_t tl_run_offset(const struct tl_run *r, uint64_t off)
{
	return r->offset + (r->cut ? ucut_offset(r->cut, off) : off);
}

void tl_pt_config(const struct timeline *tl, struct pt_config *cfg)
{
	const struct itrace_data *d = tl->d;

	/* IA32_RTIT_CTL.MTCFreq, bits 17:14, as in attr.config */
	cfg->mtc_freq = (d->hdr.config >> 14) & 0xf;
	if (d->has_time) {
		cfg->nom_freq = d->time.nom_freq;
		cfg->cpuid_0x15_eax = d->time.tsc_ratio_den;
		cfg->cpuid_0x15_ebx = d->time.tsc_ratio_num;
	}
}

static int cmp_tid(const void *a, const void *b)
{
	const struct tl_thread *x = *(struct tl_thread * const *)a;
	const struct tl_thread *y = *(struct tl_thread * const *)b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

struct tl_thread **tl_threads(struct timeline *tl, size_t *nr)
{
	if (tl->nr_th > 1)
		qsort(tl->th, tl->nr_th, sizeof(*tl->th), cmp_tid);
	*nr = tl->nr_th;
	return tl->th;
}

/* ---- the decode ------------------------------------------------------ */

struct tl_stream {
	struct timeline		*tl;
	struct tl_buf		*b;
	struct tl_run		*runs;
	size_t			nr_runs, cur;
	bool			open;		/* runs[cur] is being decoded */
	struct pt_insn_decoder	*idec;
	struct pdec		*bdec;		/* the block decoder (pdec.c) */
	int			status;
	uint64_t		last_ip;
	uint64_t		nomap_ip;	/* where -pte_nomap was, 0: unknown */
	struct itrace_stall	stall;		/* instructions without trace read */
	struct tl_thread	*th;
	struct tl_aspace	*as;
	uint64_t		key;		/* when its next piece ran */
	bool			done;
	uint64_t		look_from;	/* lookahead_tsc() reads from here */
	size_t			chunk;		/* the PERF_RECORD_AUX piece it is in */
	uint64_t		sw_next;	/* sw_owner: the time of its next switch */
	uint64_t		sw_tsc;		/* the decoder's TSC switch_due() last saw */
	struct ucut		cut;		/* tl_user_only(): runs[cur]'s user part */
	/*
	 * tl_sync_switch(): the perf time of the last call into
	 * __perf_event_task_sched_out (NO_TIME: none since the trace
	 * restarted), and a CR3 change (PIP) seen after it, for the next
	 * thread.  last_class: the class of the last instruction (block end).
	 */
	uint64_t		ss_time;
	bool			ss_paging;
	uint64_t		ss_cr3;
	enum pt_insn_class	last_class;
	/*
	 * The event (a TIP.PGE, a PIP) at which the trace passed to another
	 * thread: given to the caller when the stream runs again, after the
	 * pieces of other streams that ran before it.
	 */
	struct pt_event		held;
	bool			has_held;
};

struct tl_dec {
	struct timeline		*tl;
	const struct pt_walk_ops *iops;
	const struct blk_walk_ops *bops;
	bool			blk;
	void			*ctx;
	struct tl_stream	*active;	/* whose thread the caller has loaded */
};

/* The chunk of b that holds offset o: its index, or nr_own if beyond. */
static size_t owner_idx(const struct tl_buf *b, uint64_t o)
{
	size_t lo = 0, hi = b->nr_own;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (b->own[mid].end > o)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The index of b's first context switch after time t (b->nr_sw if none). */
static size_t switch_after(const struct tl_buf *b, uint64_t t)
{
	size_t lo = 0, hi = b->nr_sw;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (b->sw[mid].time <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct tl_thread *switch_owner(const struct tl_buf *b, uint64_t time)
{
	size_t i;

	if (!b || !b->nr_sw)
		return NULL;
	i = switch_after(b, time);
	return b->sw[i ? i - 1 : 0].th;
}

/* The time of b's first context switch after time t, NO_TIME if none. */
static uint64_t next_switch(const struct tl_buf *b, uint64_t t)
{
	size_t i;

	if (!b || !b->nr_sw)
		return NO_TIME;
	i = switch_after(b, t);
	return i < b->nr_sw ? b->sw[i].time : NO_TIME;
}

/* The thread and time of stream offset o (per-task recordings). */
static struct tl_thread *offset_owner(struct tl_stream *s, uint64_t o, uint64_t *time,
				      size_t *chunk)
{
	const struct tl_buf *b = s->b;
	size_t i;

	if (!b || !b->nr_own)
		return NULL;
	i = owner_idx(b, o);
	if (i == b->nr_own)
		i--;		/* after the last switch-out: its task still */
	*time = b->own[i].time;
	*chunk = i;
	return b->own[i].th;
}

/*
 * The latest time chunk (of offset_owner()) of b can have begun: the end
 * of the chunk before it; 0 for the first (or no chunk).  The address
 * space then is the oldest the chunk's trace can run in: its thread may
 * exec within it.
 */
static uint64_t chunk_start(const struct tl_buf *b, size_t chunk)
{
	return chunk != SIZE_MAX && chunk ? b->own[chunk - 1].time : 0;
}

/* The CPU a stream's trace ran on, -1 if the recording does not say. */
static int stream_cpu(const struct tl_stream *s, uint32_t buf)
{
	return (s->tl->per_cpu && !s->tl->by_thread) || s->tl->cpu_wide ? (int)buf : -1;
}

static void set_image(struct tl_dec *x, struct tl_stream *s, struct tl_aspace *as)
{
	if (s->idec)
		pt_insn_set_image(s->idec, as->im.image);
	if (s->bdec)
		pdec_set_image(s->bdec, as->im.image);
}

/* Make s's thread the caller's current one (another stream ran meanwhile). */
static void activate(struct tl_dec *x, struct tl_stream *s)
{
	if (x->active == s || !s->th)
		return;
	x->active = s;
	x->tl->ops->switch_to(x->ctx, s->th, s->as, stream_cpu(s, s->runs[0].buf));
}

/* Make th, in address space as, the thread of s and the caller's current one. */
static void set_owner(struct tl_dec *x, struct tl_stream *s, struct tl_thread *th,
		      struct tl_aspace *as)
{
	if (as != s->as)
		set_image(x, s, as);
	s->th = th;
	s->as = as;
	x->active = s;
	x->tl->ops->switch_to(x->ctx, th, as, stream_cpu(s, s->runs[0].buf));
}

static bool dec_time(struct tl_stream *s, uint64_t *tsc);

/*
 * The time of the task that a TIP.PGE starts: a TIP.PGE may carry a stale
 * time.  Hardware sends timing packets while the traced task is out of
 * context too (MTC with TriggerEn), so a TIP.PGE after a stay in the
 * kernel is timed; an emulator that can only tell time where it writes a
 * packet sends a PSB+ with a fresh TSC at the next branch instead
 * (tools/testing/itrace/qemu/README.md), which libipt may not have applied
 * when it reports the TIP.PGE.  Between a TIP.PGE and the next TIP.PGD one
 * task runs, so any TSC there tells which.  The packets are read
 * from @from (the decoder's offset at the previous look: before this TIP.PGE)
 * to the first TSC after the last TIP.PGE at or before now (the decoder's
 * offset), not beyond the TIP.PGD that follows.  Returns true with it.
 */
static bool scan_tsc(const uint8_t *bytes, size_t size, uint64_t from, uint64_t now,
		     uint64_t *tsc, bool *decided, uint64_t *pkts)
{
	struct pt_packet_decoder *pd;
	struct pt_packet p;
	struct pt_config cfg;
	uint64_t off, val = 0;
	bool in = false, have = false;
	int after = 0;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)bytes;
	cfg.end = (uint8_t *)bytes + size;
	pd = pt_pkt_alloc_decoder(&cfg);
	if (!pd)
		return false;
	if (pt_pkt_sync_set(pd, from) < 0) {
		pt_pkt_free_decoder(pd);
		return false;
	}
	while (pt_pkt_get_offset(pd, &off) >= 0 && pt_pkt_next(pd, &p, sizeof(p)) >= 0) {
		(*pkts)++;
		/* from now on: this task's packets, a few of them */
		if (off >= now && (have || !in || ++after > 256))
			break;
		switch (p.type) {
		case ppt_tip_pge:
			if (off >= now)
				goto out;
			in = true;	/* the last TIP.PGE before now so far */
			have = false;
			*decided = true;
			break;
		case ppt_tip_pgd:
		case ppt_ovf:
			if (off >= now)
				goto out;
			in = false;
			have = false;
			*decided = true;
			break;
		case ppt_tsc:
			if (in && !have) {
				val = p.payload.tsc.tsc;
				have = true;
			}
			break;
		default:
			break;
		}
	}
out:
	pt_pkt_free_decoder(pd);
	if (have && in)
		*tsc = val;
	return have && in;
}

/*
 * The packets from @from on are read once in all, but the TIP.PGE is
 * mostly near now: the read begins at the last PSB between @from and now
 * (packets are known to begin there; the search for it reads no byte
 * before @from), from @from only if there is none or if none of TIP.PGE,
 * TIP.PGD or OVF comes between that PSB and now.
 */
static bool lookahead_tsc(const uint8_t *bytes, size_t size, uint64_t from, uint64_t now,
			  uint64_t *tsc, uint64_t *pkts)
{
	struct pt_packet_decoder *pd;
	struct pt_config cfg;
	uint64_t psb = 0;
	bool decided = false, ret;

	if (from >= size || from > now)
		return false;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)bytes + from;
	cfg.end = (uint8_t *)bytes + (now < size ? now : size);
	pd = pt_pkt_alloc_decoder(&cfg);
	if (pd && (pt_pkt_sync_backward(pd) < 0 || pt_pkt_get_sync_offset(pd, &psb) < 0))
		psb = 0;
	pt_pkt_free_decoder(pd);
	if (psb > 0) {
		ret = scan_tsc(bytes, size, from + psb, now, tsc, &decided, pkts);
		if (decided)
			return ret;
	}
	return scan_tsc(bytes, size, from, now, tsc, &decided, pkts);
}

/*
 * A per-task trace with kernel mode: the address space by the CR3 the
 * thread runs with (PIP).  An address space learns its CR3 when user-mode
 * code runs in it (stream_run()): the kernel borrows other page tables
 * for a while at times (text_poke()'s temporary mm, ...).  A CR3 that none
 * of the process's address spaces has, once the current one knows its
 * own: an exec (exec_mmap() switches CR3 before the COMM record is
 * written) if one follows, or a borrowed one that the next PIP leaves
 * again; so go to the next one, and come back when a known CR3 comes
 * back.  NULL: nothing known, take the address space by time.
 */
static struct tl_aspace *cr3_aspace(struct timeline *tl, struct tl_stream *s,
				    struct tl_thread *th, bool paging)
{
	struct tl_aspace *as, *cur = s->th == th ? s->as : NULL;

	for (as = aspace_head(tl, th->pid); as; as = as->next)
		if (as->cr3 == th->cr3)
			return as;
	/* the current one does not know its CR3 yet: time decides */
	if (!cur || cur->pid != th->pid || !cur->cr3)
		return NULL;
	return paging && cur->next ? cur->next : cur;
}

/*
 * The trace enables (TIP.PGE) at user-mode ip, the entry point of a
 * program or of the dynamic linker, where user mode begins after an exec,
 * and as has no entry point there: the first newer address space of as's
 * process, begun before the chunk ended (end), that has.  NULL: none.
 * This is what tells an exec that time does not (a trace without timing
 * packets, or one whose last time lies before the exec's sideband) when
 * as maps code at ip too: two non-PIE programs.  (Where as maps nothing
 * at ip, libipt fails there before it reports the TIP.PGE: pt_exec().)
 * Without time, a program that execs itself stays in as.
 */
static struct tl_aspace *entry_aspace(struct tl_aspace *as, uint64_t ip, uint64_t end)
{
	if ((ip >> 63) || itrace_image_is_entry(&as->im, ip))
		return NULL;
	for (as = as->next; as && as->start <= end; as = as->next)
		if (itrace_image_is_entry(&as->im, ip))
			return as;
	return NULL;
}

/*
 * Where the trace (re)starts: at decoder offset off of the current run,
 * at TSC tsc if have_tsc.  paging: a CR3 change (PIP) to cr3.  pge_ip: the
 * IP of the TIP.PGE it restarts with, 0 if none.  want: the thread, known
 * from the trace itself (sync_switch()); NULL: looked up.
 * Returns true when the thread changed (the stream yields).
 */
static bool check_owner(struct tl_dec *x, struct tl_stream *s, uint64_t off, bool have_tsc,
			uint64_t tsc, bool paging, uint64_t cr3, uint64_t pge_ip,
			struct tl_thread *want)
{
	struct timeline *tl = x->tl;
	uint64_t o = tl_run_offset(&s->runs[s->cur], off), t = NO_TIME, ct = NO_TIME;
	size_t chunk = SIZE_MAX;
	struct tl_thread *th = NULL;
	struct tl_aspace *as;
	bool changed;

	if (tl_has_time(tl)) {
		const struct tl_run *r = &s->runs[s->cur];
		const uint8_t *bytes = r->cut ? r->cut->bytes : r->bytes;
		size_t size = r->cut ? r->cut->size : r->size;
		uint64_t now = 0, ahead = 0;

		if (dec_time(s, &now) && (!have_tsc || now > tsc)) {
			tsc = now;
			have_tsc = true;
		}
		if (!paging) {
			tl->looks++;
			if (lookahead_tsc(bytes, size, s->look_from, off, &ahead, &tl->look_pkts) &&
			    (!have_tsc || ahead > tsc)) {
				tsc = ahead;
				have_tsc = true;
			}
		}
		if (have_tsc)
			t = tl_tsc_to_ns(tl, tsc);
	}
	if (want) {
		th = want;
	} else if (!tl->ids) {
		th = tl->legacy;
	} else if (tl->cpu_wide) {
		if (t != NO_TIME)
			th = switch_owner(s->b, t);
	} else {
		th = offset_owner(s, o, &ct, &chunk);
		/*
		 * perf record's events of threads whose contexts are clones
		 * (threads of a process, a parent and its children) go on
		 * through a switch from one to the other (no PERF_RECORD_AUX
		 * there: itrace record's PERF_SAMPLE_READ is what prevents
		 * it), so a chunk may hold several threads' trace: the
		 * context switches at the trace's time tell whose.
		 */
		bool by_switch = tl->sw_owner && t != NO_TIME;

		/* no PERF_RECORD_AUX: the ITRACE_START and switches of the CPU */
		if (by_switch || !th) {
			struct tl_thread *sth = switch_owner(s->b, t != NO_TIME ? t : 0);

			if (!th || (by_switch && sth && sth->traced))
				th = sth;
		}
	}
	if (!th)
		th = s->th ? s->th : tl->legacy ? tl->legacy : thread_get(tl, 0, 0);
	if (paging)
		th->cr3 = cr3;
	if (tl->ids && !tl->cpu_wide && th->cr3 && (paging || th == s->th))
		as = cr3_aspace(tl, s, th, paging);
	else
		as = NULL;
	if (!as) {
		/*
		 * No time: the oldest the chunk can run in (chunk_start());
		 * an exec within it moves on (entry_aspace(), pt_exec()).
		 */
		as = aspace_at(tl, th->pid, t != NO_TIME ? t :
					    chunk != SIZE_MAX ? chunk_start(s->b, chunk) : ct);
		/* never back to an older one within a thread's run */
		if (th == s->th && s->as && s->as->pid == as->pid && as->start < s->as->start)
			as = s->as;
	}
	if (pge_ip && chunk != SIZE_MAX && th == s->th) {
		struct tl_aspace *nas = entry_aspace(as, pge_ip, s->b->own[chunk].time);

		if (nas)
			as = nas;
	}
	s->look_from = off;
	if (tl->sw_owner && t != NO_TIME)
		s->sw_next = next_switch(s->b, t);
	/* a new chunk of the same thread: others' may come first */
	if (chunk != s->chunk && s->chunk != SIZE_MAX && chunk != SIZE_MAX && th == s->th) {
		s->chunk = chunk;
		s->key = ct;
		if (as != s->as)
			set_owner(x, s, th, as);
		return true;
	}
	if (chunk != SIZE_MAX)
		s->chunk = chunk;
	if (th == s->th && as == s->as)
		return false;
	changed = th != s->th;
	set_owner(x, s, th, as);
	/*
	 * The order of the pieces: per-task, by the time each ended (one
	 * thread's never overlap, so its own come in order); CPU-wide, by
	 * the time each began (all of them are switch times).
	 */
	if (changed && tl->cpu_wide)
		s->key = t != NO_TIME ? t : s->key;
	else if (changed)
		s->key = ct != NO_TIME ? ct : t != NO_TIME ? t : s->key;
	return changed;
}

/* Split a buffer's segments into runs: contiguous bytes, cut at the loss points. */
static void make_runs(struct timeline *tl, struct tl_stream *s, uint32_t buf)
{
	struct itrace_data *d = tl->d;
	struct tl_buf *b = NULL;
	uint64_t expect = 0;
	uint32_t snap = 0;
	size_t i, k, nr = 0, cap = 0;
	bool first = true;

	for (i = 0; i < tl->nr_bufs; i++)
		if (tl->bufs[i].idx == buf)
			b = &tl->bufs[i];
	s->b = b;
	for (i = 0; i < d->nr_segs; i++) {
		const struct itrace_segment *seg = &d->segs[i];
		uint64_t pos = seg->stream_offset, end = seg->stream_offset + seg->size;
		enum tl_run_kind kind;

		if (seg->buf_idx != buf ||
		    (tl->only_snapshot && seg->snapshot != tl->only_snapshot))
			continue;
		if (first)
			kind = TL_RUN_FIRST;
		else if (pos == expect)
			kind = TL_RUN_LOST;	/* joined below unless a split */
		else if (seg->snapshot != snap)
			kind = TL_RUN_SNAPSHOT;
		else
			kind = TL_RUN_GAP;
		if (!first && pos == expect && nr &&
		    s->runs[nr - 1].bytes + s->runs[nr - 1].size == d->trace + seg->buf_offset &&
		    !(b && has_split(b, pos))) {
			/* continues the previous run (a snapshot that did not wrap) */
			s->runs[nr - 1].size += seg->size;
		} else {
			s->runs = itrace_grow(s->runs, &cap, nr, sizeof(*s->runs), 16);
			s->runs[nr] = (struct tl_run){
				.buf = buf, .offset = pos, .expect = expect,
				.bytes = d->trace + seg->buf_offset, .size = seg->size,
				.snapshot = seg->snapshot, .kind = kind,
			};
			nr++;
		}
		first = false;
		snap = seg->snapshot;
		expect = end;
	}
	/* cut the runs at the loss points inside them */
	for (i = 0; b && i < nr; i++)
		for (k = 0; k < b->nr_splits; k++) {
			struct tl_run *r = &s->runs[i];
			uint64_t at = b->splits[k], rend = r->offset + r->size;

			if (at <= r->offset || at >= rend)
				continue;
			s->runs = itrace_grow(s->runs, &cap, nr, sizeof(*s->runs), 16);
			memmove(&s->runs[i + 2], &s->runs[i + 1], (nr - i - 1) * sizeof(*s->runs));
			r = &s->runs[i];
			s->runs[i + 1] = *r;
			s->runs[i + 1].offset = at;
			s->runs[i + 1].expect = at;
			s->runs[i + 1].bytes = r->bytes + (at - r->offset);
			s->runs[i + 1].size = rend - at;
			s->runs[i + 1].kind = TL_RUN_LOST;
			r->size = at - r->offset;
			nr++;
		}
	s->nr_runs = nr;
}

static void close_run(struct tl_dec *x, struct tl_stream *s, int walk)
{
	activate(x, s);
	x->tl->ops->end_run(x->ctx, &s->runs[s->cur], walk);
	if (s->idec)
		pt_insn_free_decoder(s->idec);
	pdec_free(s->bdec);
	s->idec = NULL;
	s->bdec = NULL;
	s->open = false;
	s->runs[s->cur].cut = NULL;	/* s->cut's memory serves the next run */
	s->cur++;
}

static uint64_t dec_offset(struct tl_stream *s)
{
	uint64_t off = 0;

	if (s->idec)
		pt_insn_get_offset(s->idec, &off);
	else
		pdec_get_offset(s->bdec, &off);
	return off;
}

static bool dec_time(struct tl_stream *s, uint64_t *tsc)
{
	uint32_t lost_mtc, lost_cyc;

	if (s->idec)
		return pt_insn_time(s->idec, tsc, &lost_mtc, &lost_cyc) >= 0;
	return pdec_time(s->bdec, tsc, &lost_mtc, &lost_cyc) >= 0;
}

static int dec_sync(struct tl_stream *s)
{
	return s->idec ? pt_insn_sync_forward(s->idec) : pdec_sync_forward(s->bdec);
}

/* After a sync: whose trace is it? */
static bool owner_after_sync(struct tl_dec *x, struct tl_stream *s)
{
	uint64_t tsc = 0;
	bool have = dec_time(s, &tsc);

	s->ss_time = NO_TIME;
	s->ss_paging = false;
	s->last_class = ptic_other;
	return check_owner(x, s, dec_offset(s), have, tsc, false, 0, 0, NULL);
}

/* Open the stream's next run: -1 on ENOMEM, 0 opened, 1 none left. */
static int open_run(struct tl_dec *x, struct tl_stream *s)
{
	struct timeline *tl = x->tl;
	const struct itrace_file_header *h = &tl->d->hdr;
	struct tl_run *r;
	struct pt_config cfg;

	for (;;) {
		if (s->cur >= s->nr_runs) {
			s->done = true;
			return 1;
		}
		r = &s->runs[s->cur];
		if (tl->user_only) {
			if (ucut_trace(&s->cut, r->bytes, r->size))
				itrace_oom();
			r->cut = &s->cut;
		}
		if (r->cut)
			itrace_pt_config(&cfg, s->cut.bytes, s->cut.size, h->cpu_vendor,
					 h->cpu_family, h->cpu_model, h->cpu_stepping);
		else
			itrace_pt_config(&cfg, r->bytes, r->size, h->cpu_vendor, h->cpu_family,
					 h->cpu_model, h->cpu_stepping);
		tl_pt_config(tl, &cfg);
		/*
		 * The flow shows every call and every jump out of a function:
		 * blocks must end at them (libipt otherwise follows direct
		 * ones inside a block).
		 */
		cfg.flags.variant.block.end_on_call = 1;
		cfg.flags.variant.block.end_on_jump = 1;
		if (x->blk)
			s->bdec = pdec_new(tl->pool, &cfg);
		else
			s->idec = pt_insn_alloc_decoder(&cfg);
		if (!s->bdec && !s->idec)
			return -1;
		/*
		 * Whose trace the run starts with, before its first sync, and
		 * the oldest address space it may start in (chunk_start()):
		 * the owner found at a sync only moves on to a newer one
		 * (check_owner()), never back.
		 */
		if (!s->as) {
			uint64_t t = NO_TIME;
			size_t chunk = SIZE_MAX;
			struct tl_thread *th = tl->ids && !tl->cpu_wide ?
					       offset_owner(s, r->offset, &t, &chunk) :
					       tl->legacy;

			/* CPU-wide, or no PERF_RECORD_AUX: the CPU's first */
			if (!th && tl->ids)
				th = switch_owner(s->b, 0);

			s->th = th ? th : thread_get(tl, 0, 0);
			s->as = aspace_at(tl, s->th->pid, chunk_start(s->b, chunk));
			s->chunk = chunk;
		}
		set_image(x, s, s->as);
		x->active = s;
		tl->ops->switch_to(x->ctx, s->th, s->as, stream_cpu(s, r->buf));
		tl->ops->begin_run(x->ctx, r);
		tl->ops->decoder(x->ctx, s->idec, s->bdec, r);
		s->open = true;
		s->last_ip = 0;
		s->look_from = 0;
		s->status = dec_sync(s);
		if (s->status == -pte_eos) {
			close_run(x, s, 1);
			continue;
		}
		return 0;
	}
}

/* User-mode code runs: the CR3 of the thread is its address space's. */
static inline void learn_cr3(struct tl_stream *s, uint64_t ip)
{
	if (!(ip >> 63) && s->th && s->th->cr3 && s->as && !s->as->cr3 &&
	    !s->tl->cpu_wide && s->as->pid == s->th->pid)
		s->as->cr3 = s->th->cr3;
}

/*
 * sw_owner: the trace has passed the time of the next context switch of
 * its CPU.  perf record's events of threads with cloned contexts go on
 * through such a switch with no TIP.PGE (a trace of kernel mode too), so
 * the owner is looked up when the decoder's time (its last timing packet)
 * is past it.  Returns true when the thread changed (the stream yields).
 */
static bool switch_due(struct tl_dec *x, struct tl_stream *s)
{
	struct tl_thread *th;
	uint64_t tsc, t;

	/*
	 * The decoder's time moves at timing packets only: at the same TSC
	 * the answer is the last one (sw_next only ever moves past it).
	 * Within a context switch the trace has entered, the thread changes
	 * at __switch_to instead (sync_switch()).
	 */
	if (s->ss_time != NO_TIME || !dec_time(s, &tsc) || tsc == s->sw_tsc)
		return false;
	s->sw_tsc = tsc;
	t = tl_tsc_to_ns(s->tl, tsc);
	if (t < s->sw_next)
		return false;
	/*
	 * Only to another thread of the same process: a switch to another
	 * process changes CR3 (a PIP, where the owner is looked up at once),
	 * which the decoder's time, as late as its last timing packet, may
	 * only see later.
	 */
	th = switch_owner(s->b, t);
	if (!th || !th->traced || th == s->th || !s->th || th->pid != s->th->pid) {
		s->sw_next = next_switch(s->b, t);
		return false;
	}
	s->sw_next = NO_TIME;
	return check_owner(x, s, dec_offset(s), true, tsc, false, 0, 0, NULL);
}

/*
 * tl_sync_switch(): the instruction at ip, reached by a near CALL or JMP,
 * is the first of __perf_event_task_sched_out or of __switch_to.  As perf's
 * Intel PT decoder does when it has kernel code and the CPU's context
 * switches ("sync_switch", tools/perf/util/intel-pt.c), the trace of a
 * task switched out without a stop of the trace (an inherited event of
 * clone contexts, or a CPU-wide one) is the next task's from the first
 * instruction of __switch_to on.  The switch-out record is written in
 * __perf_event_task_sched_out, so it is the first one of the CPU at or
 * after the decoder's time at the call into it; a CR3 change (PIP) in
 * between is the next task's too.  Returns true when the thread changed
 * (before the instruction at ip is given to the caller).
 */
static bool sync_switch(struct tl_dec *x, struct tl_stream *s, uint64_t ip)
{
	const struct tl_buf *b = s->b;
	uint64_t tsc, t = s->ss_time;
	bool paging = s->ss_paging;
	size_t i;

	if (ip == x->tl->ptss_ip) {
		if (dec_time(s, &tsc)) {
			s->ss_time = tl_tsc_to_ns(x->tl, tsc);
			s->ss_paging = false;
		}
		return false;
	}
	s->ss_time = NO_TIME;
	s->ss_paging = false;
	if (t == NO_TIME || !b)
		return false;
	for (i = t ? switch_after(b, t - 1) : 0; i < b->nr_sw && !b->sw[i].out; i++)
		;
	if (i == b->nr_sw)
		return false;
	return check_owner(x, s, dec_offset(s), false, 0, paging, s->ss_cr3, 0, b->sw[i].th);
}

/*
 * The trace (re)starts (ev: ptev_enabled) or changes CR3 (ev: a PIP, as
 * ptev_paging or ptev_async_paging): whose is it?  Returns true when the
 * thread changed (the stream yields).
 */
static bool restart(struct tl_dec *x, struct tl_stream *s, const struct pt_event *ev)
{
	bool paging = ev->type != ptev_enabled;
	uint64_t cr3 = ev->type == ptev_paging ? ev->variant.paging.cr3 :
		       ev->variant.async_paging.cr3;
	struct tl_thread *th = s->th;
	uint64_t armed = s->ss_time, tsc;
	bool changed;

	if (paging && armed != NO_TIME) {
		/* in a context switch: the next task's (sync_switch()) */
		s->ss_paging = true;
		s->ss_cr3 = cr3;
		return false;
	}
	s->ss_time = NO_TIME;
	changed = check_owner(x, s, dec_offset(s), ev->has_tsc, ev->tsc, paging,
			      paging ? cr3 : 0, paging ? 0 : ev->variant.enabled.ip, NULL);
	/*
	 * The kernel stopped and restarted the trace inside the context
	 * switch it is making (seen in __perf_event_task_sched_out(): a
	 * TIP.PGD, a PERF_RECORD_AUX, then a TIP.PGE in kernel code of the
	 * same task, before any switch record of the CPU): the switch is
	 * still to come.
	 */
	if (!paging && armed != NO_TIME && s->th == th && (ev->variant.enabled.ip >> 63) &&
	    dec_time(s, &tsc) && next_switch(s->b, armed) > tl_tsc_to_ns(x->tl, tsc))
		s->ss_time = armed;
	else
		s->ss_paging = false;
	return changed;
}

/*
 * A PIP in PSB+ (a status update: SDM 33.3.7 puts one there while
 * ContextEn with IA32_RTIT_CTL.OS) tells the CR3 the thread runs with, not
 * a change of it: nothing restarts.  A per-task thread that had no CR3
 * yet (its trace began after its last CR3 write) learns it, for its
 * address spaces to learn theirs (learn_cr3()); one that had another, its
 * last CR3 change was lost (an overflow).
 */
static void psb_cr3(struct tl_stream *s, uint64_t cr3)
{
	if (s->th && s->tl->ids && !s->tl->cpu_wide && s->ss_time == NO_TIME)
		s->th->cr3 = cr3;
}

/*
 * tl_sync_switch() on: the instruction (block) at ip is next, c its class
 * (of its last instruction).  Returns true when the thread changed.
 */
static inline bool sync_step(struct tl_dec *x, struct tl_stream *s, uint64_t ip,
			     enum pt_insn_class c)
{
	bool changed = false;

	/* reached by the near CALL or JMP that was the last instruction */
	if ((ip == x->tl->switch_ip || ip == x->tl->ptss_ip) &&
	    (s->last_class == ptic_call || s->last_class == ptic_jump))
		changed = sync_switch(x, s, ip);
	s->last_class = c;
	return changed;
}

/*
 * A thread may exec within a chunk with nothing in its trace to say when:
 * BTS records carry no time, and a PT trace's time is that of its last
 * timing packet, which can lie before the exec's sideband (exec_mmap()
 * switches CR3 before the COMM record is written, and the return to user
 * mode follows soon after).  ip, a user-mode address, is not mapped in as:
 * the first newer address space of as's process, begun before the chunk
 * ended (end; NO_TIME: no bound), that maps it.  NULL: none, or ip is
 * mapped in as after all, or a kernel address.
 */
static struct tl_aspace *exec_aspace(struct tl_aspace *as, uint64_t ip, uint64_t end)
{
	uint8_t byte;
	bool is32;

	if (!as || (ip >> 63) || itrace_image_read_mode(&as->im, &byte, 1, ip, &is32) > 0)
		return NULL;
	for (as = as->next; as && (end == NO_TIME || as->start <= end); as = as->next)
		if (itrace_image_read_mode(&as->im, &byte, 1, ip, &is32) > 0)
			return as;
	return NULL;
}

/*
 * The decoder found no code at ip (-pte_nomap) in a per-task trace: if the
 * thread exec'd within its chunk (exec_aspace()), it moves on to its new
 * address space.  Returns true when it did: decode from ip again.
 */
static bool pt_exec(struct tl_dec *x, struct tl_stream *s, uint64_t ip)
{
	struct tl_aspace *as;

	if (!s->th || !s->b || s->chunk == SIZE_MAX || x->tl->cpu_wide)
		return false;
	as = exec_aspace(s->as, ip, s->b->own[s->chunk].time);
	if (as)
		set_owner(x, s, s->th, as);
	return as;
}

/*
 * Decode s until its trace passes to another thread (true: yield) or it
 * ends (false, s->done).  The walk is itrace_pt_walk()'s (or the same with blocks),
 * with a check of the owner at every place the trace restarts.
 */
static int stream_run(struct tl_dec *x, struct tl_stream *s)
{
	const bool sync = x->tl->switch_ip != 0;
	struct pt_event ev;
	int ret;

	activate(x, s);
	if (s->open)
		x->tl->ops->decoder(x->ctx, s->idec, s->bdec, &s->runs[s->cur]);
	if (s->has_held) {
		s->has_held = false;
		if (s->idec)
			x->iops->event(x->ctx, s->idec, &s->held);
		else
			x->bops->event(x->ctx, s->bdec, &s->held);
	}
	for (;;) {
		bool yield = false;

		if (!s->open) {
			ret = open_run(x, s);
			if (ret)
				return ret < 0 ? -1 : 0;
			if (s->status >= 0 && owner_after_sync(x, s))
				return 0;
		}
		if (s->status == -pte_eos) {
			close_run(x, s, 0);
			continue;
		}
		if (s->status < 0) {
			if (s->status == -pte_nomap && s->nomap_ip && pt_exec(x, s, s->nomap_ip)) {
				s->nomap_ip = 0;
				s->status = 0;
				continue;
			}
			if (s->idec)
				x->iops->error(x->ctx, s->idec, s->status, s->last_ip);
			else
				x->bops->error(x->ctx, s->bdec, s->status, s->last_ip);
			s->status = dec_sync(s);
			if (s->status >= 0 && owner_after_sync(x, s))
				return 0;
			continue;
		}
		while (s->status & pts_event_pending) {
			s->status = s->idec ? pt_insn_event(s->idec, &ev, sizeof(ev)) :
					      pdec_event(s->bdec, &ev);
			if (s->status < 0)
				break;
			/* the next instruction is not reached by the last one's branch */
			s->last_class = ptic_other;
			if (ev.type == ptev_async_paging && ev.status_update) {
				psb_cr3(s, ev.variant.async_paging.cr3);
			} else if ((ev.type == ptev_enabled || ev.type == ptev_paging ||
				    ev.type == ptev_async_paging) && restart(x, s, &ev)) {
				/* the new thread's, once its turn comes */
				s->held = ev;
				s->has_held = true;
				return 0;
			}
			if (s->idec)
				x->iops->event(x->ctx, s->idec, &ev);
			else
				x->bops->event(x->ctx, s->bdec, &ev);
		}
		if (s->status < 0)
			continue;
		if (s->status & pts_eos) {
			close_run(x, s, 0);
			continue;
		}
		if (yield)
			return 0;
		/*
		 * The hot loop: instructions (blocks) until an event, the end
		 * or an error, which the loop above handles.  pt_insn_next()
		 * and pt_blk_next() zero what they return on most errors, not
		 * on all (an early -pte_no_enable): the fields read after an
		 * error are cleared here.
		 */
		if (s->idec) {
			struct pt_insn in;

			do {
				in.ip = 0;
				s->status = pt_insn_next(s->idec, &in, sizeof(in));
				if (s->status < 0) {
					/* in.ip is set when the instruction itself failed */
					if (in.ip)
						s->last_ip = in.ip;
					s->nomap_ip = s->status == -pte_nomap ? in.ip : 0;
					s->last_class = ptic_other;
					break;
				}
				s->last_ip = in.ip;
				learn_cr3(s, in.ip);
				if (sync)
					yield |= sync_step(x, s, in.ip, in.iclass);
				x->iops->insn(x->ctx, s->idec, &in);
				if (itrace_stall_due(&s->stall, 1) &&
				    itrace_stalled(&s->stall, dec_offset(s))) {
					s->status = ITRACE_ERR_STALL;
					break;
				}
				if (s->sw_next != NO_TIME && switch_due(x, s))
					yield = true;
			} while (!yield && !(s->status & (pts_event_pending | pts_eos)));
		} else {
			struct pt_block b;

			do {
				b.ninsn = 0;
				b.ip = 0;
				s->status = pdec_next(s->bdec, &b);
				/* b.ip: where the empty block's decode failed */
				if (s->status == -pte_nomap)
					s->nomap_ip = b.ninsn ? 0 : b.ip;
				/* a block may end in an error: its instructions did execute */
				if (b.ninsn) {
					s->last_ip = b.end_ip;
					learn_cr3(s, b.ip);
					/* blocks end at CALL and JMP (open_run()) */
					if (sync)
						yield |= sync_step(x, s, b.ip, s->status < 0 ?
								   ptic_other : b.iclass);
					x->bops->block(x->ctx, s->bdec, &b, s->status);
					if (s->status >= 0 &&
					    itrace_stall_due(&s->stall, b.ninsn) &&
					    itrace_stalled(&s->stall, dec_offset(s))) {
						s->status = ITRACE_ERR_STALL;
						break;
					}
				} else {
					s->last_class = ptic_other;
				}
				if (s->sw_next != NO_TIME && s->status >= 0 && switch_due(x, s))
					yield = true;
			} while (!yield && s->status >= 0 &&
				 !(s->status & (pts_event_pending | pts_eos)));
		}
		if (yield)
			return 0;
	}
}

int tl_decode(struct timeline *tl, const struct pt_walk_ops *insn_ops,
	      const struct blk_walk_ops *blk_ops, bool blk, void *ctx)
{
	struct tl_dec x = { .tl = tl, .iops = insn_ops, .bops = blk_ops, .blk = blk, .ctx = ctx };
	struct tl_stream *s = NULL;
	uint32_t *bufs = NULL;
	size_t nr = 0, i, k;
	int ret = 0;

	/* one stream per buffer that has trace, in buffer order */
	for (i = 0; i < tl->d->nr_segs; i++) {
		uint32_t b = tl->d->segs[i].buf_idx;

		for (k = 0; k < nr && bufs[k] != b; k++)
			;
		if (k < nr)
			continue;
		bufs = realloc(bufs, (nr + 1) * sizeof(*bufs));
		if (!bufs)
			itrace_oom();
		bufs[nr++] = b;
	}
	s = calloc(nr ? nr : 1, sizeof(*s));
	if (!s)
		itrace_oom();
	if (blk)
		tl->pool = pdec_pool_new(tl->jobs);
	for (i = 0; i < nr; i++) {
		s[i].tl = tl;
		s[i].chunk = SIZE_MAX;
		s[i].sw_next = NO_TIME;
		s[i].ss_time = NO_TIME;
		make_runs(tl, &s[i], bufs[i]);
		/* the first piece's time: its first chunk's, or its first switch */
		if (s[i].b && s[i].b->nr_own && s[i].nr_runs) {
			size_t o = owner_idx(s[i].b, s[i].runs[0].offset);

			s[i].key = s[i].b->own[o < s[i].b->nr_own ? o : 0].time;
		} else if (s[i].b && s[i].b->nr_sw) {
			s[i].key = s[i].b->sw[0].time;
		}
	}
	for (;;) {
		struct tl_stream *next = NULL;

		for (i = 0; i < nr; i++)
			if (!s[i].done && (!next || s[i].key < next->key))
				next = &s[i];
		if (!next)
			break;
		if (stream_run(&x, next) < 0) {
			ret = -1;
			break;
		}
	}
	for (i = 0; i < nr; i++) {
		if (s[i].idec)
			pt_insn_free_decoder(s[i].idec);
		pdec_free(s[i].bdec);
		ucut_free(&s[i].cut);
		free(s[i].runs);
	}
	if (getenv("ITRACE_DECODE_STATS")) {
		struct pdec_stats st;

		fprintf(stderr, "itrace: time look-ahead: %llu packets read in %llu looks\n",
			(unsigned long long)tl->look_pkts, (unsigned long long)tl->looks);
		if (tl->pool) {
			pdec_get_stats(tl->pool, &st);
			fprintf(stderr,
				"itrace: parallel decode: %llu tasks, %llu joined, %llu live, %llu by the caller's thread, %llu given up for want of memory\n",
				(unsigned long long)st.tasks, (unsigned long long)st.joined,
				(unsigned long long)st.live, (unsigned long long)st.helped,
				(unsigned long long)st.nomem);
		}
	}
	pdec_pool_free(tl->pool);
	tl->pool = NULL;
	free(s);
	free(bufs);
	return ret;
}

void tl_sync_switch(struct timeline *tl, uint64_t switch_ip, uint64_t ptss_ip)
{
	/* the switch-out records are found by the trace's time */
	if (!switch_ip || !ptss_ip || !tl->ids || !tl_has_time(tl) ||
	    !(tl->sw_owner || tl->cpu_wide))
		return;
	tl->switch_ip = switch_ip;
	tl->ptss_ip = ptss_ip;
}

struct tl_aspace *tl_aspace_of(struct timeline *tl, uint32_t pid, uint64_t time)
{
	return aspace_at(tl, pid, time);
}

/* ---- BTS ------------------------------------------------------------- */

/* Make th, in address space as, the thread of BTS stream s. */
static void bts_switch(struct tl_dec *x, struct tl_stream *s, struct tl_thread *th,
		       struct tl_aspace *as)
{
	if (th != s->th || as != s->as)
		set_owner(x, s, th, as);
}

/*
 * BTS records carry no time: a thread that execs within a chunk is seen
 * by its code.  ip, a user-mode address of a record, is not in s's
 * address space: go on to the one exec_aspace() finds, if any.
 */
static void bts_exec(struct tl_dec *x, struct tl_stream *s, uint64_t ip, uint64_t end)
{
	struct tl_aspace *as = exec_aspace(s->as, ip, end);

	if (as)
		bts_switch(x, s, s->th, as);
}

/* Decode the runs of one buffer's BTS records. */
static void bts_stream(struct tl_dec *x, struct tl_stream *s, struct bts_walker *w,
		       const struct bts_ops *ops)
{
	struct timeline *tl = x->tl;
	uint32_t page_size = tl->d->hdr.page_size;
	size_t i, pos, len;

	for (i = 0; i < s->nr_runs; i++) {
		const struct tl_run *r = &s->runs[i];
		struct tl_thread *th = NULL;
		uint64_t t = NO_TIME;
		size_t chunk = SIZE_MAX;
		struct bts_record rec;

		if (tl->ids && !tl->cpu_wide)
			th = offset_owner(s, r->offset, &t, &chunk);
		else if (tl->ids)
			th = switch_owner(s->b, 0);
		else
			th = tl->legacy;
		if (!th)
			th = thread_get(tl, 0, 0);
		bts_switch(x, s, th, aspace_at(tl, th->pid,
					       chunk != SIZE_MAX ? chunk_start(s->b, chunk) : t));
		tl->ops->begin_run(x->ctx, r);
		tl->ops->decoder(x->ctx, NULL, NULL, NULL);
		/* after a discontinuity no thread's flow position holds */
		if (r->kind != TL_RUN_FIRST)
			s->th->bts.have = false;
		for (pos = 0; pos < r->size; pos += len) {
			uint64_t off = r->offset + pos;
			enum bts_item it = bts_next(r->bytes + pos, r->size - pos, off, page_size,
						    &rec, &len);

			if (it == BTS_ITEM_PAD)
				continue;
			if (it == BTS_ITEM_CUT) {
				char why[96];

				snprintf(why, sizeof(why),
					 "a BTS record cut short: %zu of its %d bytes at the end of the trace",
					 len, BTS_RECORD_SIZE);
				ops->gap(x->ctx, off, s->th->bts.have ? s->th->bts.ip : 0, why);
				continue;
			}
			if (tl->ids && !tl->cpu_wide && s->b && s->b->nr_own) {
				size_t c;
				uint64_t end;

				th = offset_owner(s, off, &end, &c);
				if (th && c != chunk) {
					chunk = c;
					t = end;
					bts_switch(x, s, th, aspace_at(tl, th->pid,
								       chunk_start(s->b, c)));
				}
			}
			/* user code where the thread's address space has none */
			if (s->as->next && (bts_user_addr(rec.from) || bts_user_addr(rec.to)))
				bts_exec(x, s, bts_user_addr(rec.from) ? rec.from : rec.to, t);
			bts_record(w, &s->as->im, &s->th->bts, off, &rec);
		}
		tl->ops->end_run(x->ctx, r, 0);
	}
}

/* Decode every buffer of a BTS recording, one after another (timeline.h). */
int tl_decode_bts(struct timeline *tl, const struct bts_ops *ops, void *ctx)
{
	struct tl_dec x = { .tl = tl, .ctx = ctx };
	struct bts_walker *w = bts_walker_new(ops, ctx);
	struct tl_stream s;
	size_t i, k;

	if (!w)
		return -1;
	/* one stream per buffer that has trace, in the order they first come */
	for (i = 0; i < tl->d->nr_segs; i++) {
		uint32_t b = tl->d->segs[i].buf_idx;

		for (k = 0; k < i && tl->d->segs[k].buf_idx != b; k++)
			;
		if (k < i)
			continue;
		memset(&s, 0, sizeof(s));
		s.tl = tl;
		s.chunk = SIZE_MAX;
		s.sw_next = NO_TIME;
		make_runs(tl, &s, b);
		bts_stream(&x, &s, w, ops);
		free(s.runs);
	}
	bts_walker_free(w);
	return 0;
}
