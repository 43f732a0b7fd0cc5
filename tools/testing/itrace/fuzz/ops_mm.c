// SPDX-License-Identifier: GPL-2.0
/*
 * itrace-fuzz ops on mappings: the perf stream, the classic AUX area and
 * the trace fd's mapping in every mode and size, valid and not; partial
 * munmap(), mremap(), mprotect(), madvise(); garbage in the user pages;
 * reading the trace as a reader would.
 *
 * The rules: Documentation/userspace-api/itrace.rst, "The mapping" and
 * "Errors".  Mappings are touched with p->lock held, so that no thread of
 * the process unmaps them meanwhile.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/ioctl.h>
#include <sys/mman.h>

#include "fuzz.h"

#define PG	((size_t)page_size())

/* 2^n pages, mostly small */
static size_t pick_pages(struct ctx *c)
{
	static const unsigned int order[] = { 0, 0, 1, 1, 2, 3, 4, 5, 6, 8 };

	return 1UL << order[rnd(&c->rng, ARRAY_SIZE(order))];
}

static int pick_prot(struct ctx *c)
{
	switch (rnd(&c->rng, 8)) {
	case 0:
		return PROT_READ;
	case 1:
		return one_in(&c->rng, 2) ? PROT_NONE : PROT_READ | PROT_EXEC;
	default:
		return PROT_READ | PROT_WRITE;
	}
}

void op_mmap_rb(struct ctx *c)
{
	size_t len = (1 + pick_pages(c)) * PG;
	int prot = rnd(&c->rng, 4) ? PROT_READ | PROT_WRITE : PROT_READ;
	struct map m = { .kind = MAP_RB };
	struct obj o;
	void *addr;

	if (obj_pick(c, K_EVENT, &o) < 0) {
		idle(c, "no event");
		return;
	}
	if (one_in(&c->rng, 8))
		len += PG * (1 + rnd(&c->rng, 3));	/* not 1 + 2^n */
	say(c, "event %d len %zu prot %d", o.fd, len, prot);
	addr = mmap(NULL, len, prot, MAP_SHARED, o.fd, 0);
	LOOSE(c, addr == MAP_FAILED ? errno : 0, 0, EINVAL, EPERM, ENOMEM,
	      EBUSY, EBADF, ENODEV, EACCES);
	if (addr == MAP_FAILED)
		return;
	m.addr = addr;
	m.len = len;
	m.prot = prot;
	m.overwrite = !(prot & PROT_WRITE);
	m.id = o.id;
	m.fd = o.fd;
	map_add(c->p, &m);
}

/* The fd of event @id in our table, or -1; caller holds p->lock. */
static int event_fd_of(struct proc *p, uint64_t id, unsigned int kinds)
{
	int i;

	for (i = 0; id && i < MAX_OBJS; i++)
		if ((kinds & (1U << p->obj[i].kind)) && p->obj[i].id == id)
			return p->obj[i].fd;
	return -1;
}

/*
 * The classic AUX area at aux_offset of a perf stream: "mmap() of the
 * event fd at its aux_offset fails with EBUSY while a trace fd mapping
 * exists".
 */
void op_mmap_aux(struct ctx *c)
{
	struct proc *p = c->p;
	size_t pages = pick_pages(c);
	int prot = rnd(&c->rng, 3) ? PROT_READ | PROT_WRITE : PROT_READ;
	struct perf_event_mmap_page *up;
	struct map m = { .kind = MAP_AUX };
	int s, fd, err;
	bool busy;
	void *addr;

	pthread_mutex_lock(&p->lock);
	s = map_pick(c, M_RB);
	fd = s < 0 ? -1 : event_fd_of(p, p->map[s].id, K_EVENT);
	if (fd < 0 || !(p->map[s].prot & PROT_WRITE) ||
	    !(p->map[s].prot & PROT_READ)) {
		pthread_mutex_unlock(&p->lock);
		idle(c, "no writable perf stream");
		return;
	}
	up = (void *)p->map[s].addr;
	up->aux_offset = p->map[s].len;
	up->aux_size = pages * PG;
	busy = map_holds(p, p->map[s].id, M_TRACE);
	say(c, "event %d offset %zu pages %zu prot %d%s", fd, p->map[s].len,
	    pages, prot, busy ? " (trace mapped)" : "");
	addr = mmap(NULL, pages * PG, prot, MAP_SHARED, fd,
		    p->map[s].len);
	err = addr == MAP_FAILED ? errno : 0;
	m.id = p->map[s].id;
	pthread_mutex_unlock(&p->lock);
	if (busy)
		STRICT(c, err, EBUSY);
	else
		LOOSE(c, err, 0, EINVAL, EPERM, ENOMEM, EBUSY, EOPNOTSUPP,
		      EBADF, ENODEV);
	if (addr == MAP_FAILED)
		return;
	m.addr = addr;
	m.len = pages * PG;
	m.prot = prot;
	m.overwrite = !(prot & PROT_WRITE);
	m.fd = fd;
	map_add(p, &m);
}

/* Page 0 of a new trace mapping, as "The mapping" describes it. */
static void check_user_page(struct ctx *c, struct perf_event_mmap_page *up,
			    size_t data_size)
{
	if (up->data_offset != PG || up->data_size != data_size)
		finding(c, "trace page 0: data_offset/data_size",
			"data_offset %llu data_size %llu, want %zu %zu",
			(unsigned long long)up->data_offset,
			(unsigned long long)up->data_size, PG, data_size);
	if (up->index || up->cap_user_rdpmc || up->cap_user_time ||
	    up->cap_user_time_zero || up->cap_user_time_short ||
	    up->cap_bit0 || !up->cap_bit0_is_deprecated)
		finding(c, "trace page 0: index/cap bits",
			"index %u capabilities 0x%llx, want 0 and only cap_bit0_is_deprecated",
			up->index,
			(unsigned long long)up->capabilities);
	if (up->aux_offset || up->aux_size || up->aux_head || up->aux_tail)
		finding(c, "trace page 0: aux fields",
			"aux_offset %llu aux_size %llu aux_head %llu aux_tail %llu, want 0",
			(unsigned long long)up->aux_offset,
			(unsigned long long)up->aux_size,
			(unsigned long long)up->aux_head,
			(unsigned long long)up->aux_tail);
}

void op_mmap_trace(struct ctx *c)
{
	struct proc *p = c->p;
	size_t pages = pick_pages(c), len = (1 + pages) * PG;
	int prot = pick_prot(c), slot, err;
	struct map m = { .kind = MAP_TRACE };
	bool busy, strict_inval;
	struct obj o;
	void *addr;

	slot = obj_pick(c, K_TFD, &o);
	if (slot < 0) {
		idle(c, "no trace fd");
		return;
	}
	/* with the lock held, our own mappings stay what they are */
	pthread_mutex_lock(&p->lock);
	busy = map_holds(p, o.id, M_TRACE | M_AUX);
	strict_inval = (o.flags & EV_INHERIT) ||
		       (!(prot & PROT_WRITE) && pages == 1);
	say(c, "tfd %d pages 1+%zu prot %d%s%s", o.fd, pages, prot,
	    busy ? " (AUX mapped)" : "", strict_inval ? " (invalid)" : "");
	if (!busy && !strict_inval)
		pthread_mutex_unlock(&p->lock);
	addr = mmap(NULL, len, prot, MAP_SHARED, o.fd, 0);
	err = addr == MAP_FAILED ? errno : 0;
	if (busy || strict_inval) {
		bool same = p->obj[slot].gen == o.gen;

		pthread_mutex_unlock(&p->lock);
		if (!same)
			done(c, err);
		else if (strict_inval)	/* inherit, or read-only 1 + 1 */
			STRICT(c, err, EINVAL);
		else
			STRICT(c, err, EBUSY);
	} else if (!obj_same(c, slot, &o)) {
		/*
		 * Another thread closed the trace fd (EBADF) or put a new
		 * file at its number: what was mapped, if anything, is not
		 * what the table says.
		 */
		done(c, err);
		if (addr != MAP_FAILED)
			munmap(addr, len);
		return;
	} else {
		LOOSE(c, err, 0, EINVAL, EBUSY, EPERM, ENOMEM, EOPNOTSUPP);
	}
	if (addr == MAP_FAILED)
		return;
	if (prot & PROT_READ)
		check_user_page(c, addr, pages * PG);
	m.addr = addr;
	m.len = len;
	m.prot = prot;
	m.overwrite = !(prot & PROT_WRITE);
	m.id = o.id;
	m.fd = o.fd;
	map_add(p, &m);
}

/* mmap() of a trace fd with one thing wrong: EINVAL, or ENOMEM. */
void op_mmap_bad(struct ctx *c)
{
	/* trace pages that are no power of two */
	static const unsigned int odd[] = { 0, 3, 5, 6, 7, 9, 12, 15, 17 };
	size_t len = (1 + pick_pages(c)) * PG;
	int flags = MAP_SHARED, prot = PROT_READ | PROT_WRITE, slot, err;
	unsigned int v = rnd(&c->rng, 6);
	off_t off = 0;
	struct obj o;
	void *addr;
	int want = EINVAL;

	slot = obj_pick(c, K_TFD, &o);
	if (slot < 0) {
		idle(c, "no trace fd");
		return;
	}
	switch (v) {
	case 0:
		flags = MAP_PRIVATE;
		break;
	case 1:
		off = PG * (1 + rnd(&c->rng, 16));
		break;
	case 2:		/* not 1 + 2^n pages */
		len = (1 + odd[rnd(&c->rng, ARRAY_SIZE(odd))]) * PG;
		break;
	case 3:		/* overwrite mode needs two regions */
		len = 2 * PG;
		prot = PROT_READ;
		break;
	case 4:		/* "the size is absurd (more than INT_MAX pages)" */
		len = (1 + (1UL << (31 + rnd(&c->rng, 4)))) * PG;
		want = (o.flags & EV_INHERIT) ? EINVAL : ENOMEM;
		break;
	default:
		len = 0;
		break;
	}
	say(c, "tfd %d variant %u len %zu prot %d flags 0x%x off %lld", o.fd,
	    v, len, prot, flags, (long long)off);
	addr = mmap(NULL, len, prot, flags, o.fd, off);
	err = addr == MAP_FAILED ? errno : 0;
	if (!obj_same(c, slot, &o))
		done(c, err);
	else
		STRICT(c, err, want);
	if (addr != MAP_FAILED)
		munmap(addr, len);
}

static void map_drop(struct proc *p, int s)
{
	p->map[s].kind = MAP_FREE;
}

void op_munmap(struct ctx *c)
{
	struct proc *p = c->p;
	int s, err;

	pthread_mutex_lock(&p->lock);
	s = map_pick(c, M_ANY);
	if (s < 0) {
		pthread_mutex_unlock(&p->lock);
		idle(c, "nothing mapped");
		return;
	}
	say(c, "kind %d %p len %zu", p->map[s].kind, p->map[s].addr,
	    p->map[s].len);
	err = err_of(munmap(p->map[s].addr, p->map[s].len));
	if (!err)
		map_drop(p, s);
	pthread_mutex_unlock(&p->lock);
	STRICT(c, err, 0);
}

/* "a partial munmap() fails with EINVAL" for the trace fd's mapping */
void op_munmap_part(struct ctx *c)
{
	struct proc *p = c->p;
	size_t off, len;
	int s, err;
	bool trace;

	pthread_mutex_lock(&p->lock);
	s = map_pick(c, M_ANY);
	if (s < 0 || p->map[s].len < 2 * PG) {
		pthread_mutex_unlock(&p->lock);
		idle(c, "no mapping of two pages");
		return;
	}
	off = PG * rnd(&c->rng, p->map[s].len / PG);
	len = PG * (1 + rnd(&c->rng, (p->map[s].len - off) / PG));
	if (!off && len == p->map[s].len)
		len -= PG;
	trace = p->map[s].kind == MAP_TRACE;
	say(c, "kind %d len %zu: [%zu, +%zu)", p->map[s].kind, p->map[s].len,
	    off, len);
	err = err_of(munmap(p->map[s].addr + off, len));
	if (!err) {	/* split: the rest goes too */
		munmap(p->map[s].addr, p->map[s].len);
		map_drop(p, s);
	}
	pthread_mutex_unlock(&p->lock);
	if (trace)
		STRICT(c, err, EINVAL);
	else
		LOOSE(c, err, 0, EINVAL);
}

/* "it can be moved with mremap() but not split" */
void op_mremap(struct ctx *c)
{
	struct proc *p = c->p;
	unsigned int v = rnd(&c->rng, 4);
	size_t len, nlen;
	void *to = NULL, *res;
	int s, err, kind;

	pthread_mutex_lock(&p->lock);
	s = map_pick(c, M_ANY);
	if (s < 0) {
		pthread_mutex_unlock(&p->lock);
		idle(c, "nothing mapped");
		return;
	}
	kind = p->map[s].kind;
	len = p->map[s].len;
	nlen = len;
	say(c, "kind %d len %zu variant %u", kind, len, v);
	switch (v) {
	case 0:		/* move it, whole */
		to = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
		if (to == MAP_FAILED) {
			pthread_mutex_unlock(&p->lock);
			done(c, ENOMEM);
			return;
		}
		res = mremap(p->map[s].addr, len, len,
			     MREMAP_MAYMOVE | MREMAP_FIXED, to);
		break;
	case 1:		/* grow */
		nlen = len + PG;
		res = mremap(p->map[s].addr, len, nlen, MREMAP_MAYMOVE);
		break;
	case 2:		/* shrink: a partial unmap */
		if (len < 2 * PG) {
			pthread_mutex_unlock(&p->lock);
			done(c, 0);
			return;
		}
		nlen = len - PG;
		res = mremap(p->map[s].addr, len, nlen, 0);
		break;
	default:	/* a second mapping of the same pages */
		res = mremap(p->map[s].addr, 0, len, MREMAP_MAYMOVE);
		break;
	}
	err = res == MAP_FAILED ? errno : 0;
	if (res != MAP_FAILED) {
		if (v == 3) {		/* keep the first, drop the copy */
			munmap(res, len);
		} else if (v == 2) {	/* split: all of it goes */
			munmap(p->map[s].addr, len);
			map_drop(p, s);
		} else {
			p->map[s].addr = res;
			p->map[s].len = nlen;
		}
	} else if (to && to != MAP_FAILED) {
		munmap(to, len);
	}
	pthread_mutex_unlock(&p->lock);
	if (kind == MAP_TRACE && v == 0)
		STRICT(c, err, 0);
	else if (kind == MAP_TRACE && v == 2)
		STRICT(c, err, EINVAL);
	else
		LOOSE(c, err, 0, EINVAL, EFAULT, ENOMEM);
	if (!err && kind == MAP_TRACE && (v == 1 || v == 3))
		lognote("mremap: trace mapping grown",
			"mremap() variant %u of a trace mapping succeeded", v);
}

void op_mprotect(struct ctx *c)
{
	static const int prots[] = {
		PROT_READ, PROT_READ | PROT_WRITE, PROT_NONE,
		PROT_READ | PROT_EXEC,
	};
	struct proc *p = c->p;
	int prot = prots[rnd(&c->rng, ARRAY_SIZE(prots))], s, err;
	size_t len;
	bool part;

	pthread_mutex_lock(&p->lock);
	s = map_pick(c, M_ANY);
	if (s < 0) {
		pthread_mutex_unlock(&p->lock);
		idle(c, "nothing mapped");
		return;
	}
	len = p->map[s].len;
	part = len > PG && one_in(&c->rng, 4);
	say(c, "kind %d prot %d -> %d%s", p->map[s].kind, p->map[s].prot,
	    prot, part ? " (first page)" : "");
	err = err_of(mprotect(p->map[s].addr, part ? PG : len, prot));
	if (!err && part) {	/* split: all of it goes */
		munmap(p->map[s].addr, len);
		map_drop(p, s);
	} else if (!err) {
		p->map[s].prot = prot;
	}
	pthread_mutex_unlock(&p->lock);
	LOOSE(c, err, 0, EACCES, EINVAL);
}

void op_madvise(struct ctx *c)
{
	static const int advice[] = {
		MADV_DONTNEED, MADV_DOFORK, MADV_DONTFORK, MADV_DODUMP,
		MADV_DONTDUMP, MADV_WILLNEED, MADV_COLD, MADV_PAGEOUT,
		MADV_WIPEONFORK, MADV_KEEPONFORK, MADV_REMOVE,
		MADV_POPULATE_READ, MADV_POPULATE_WRITE, MADV_FREE,
	};
	struct proc *p = c->p;
	int adv = advice[rnd(&c->rng, ARRAY_SIZE(advice))], s, err;
	size_t len;

	pthread_mutex_lock(&p->lock);
	s = map_pick(c, M_ANY);
	if (s < 0) {
		pthread_mutex_unlock(&p->lock);
		idle(c, "nothing mapped");
		return;
	}
	len = p->map[s].len;
	say(c, "kind %d advice %d", p->map[s].kind, adv);
	err = err_of(madvise(p->map[s].addr, len, adv));
	if (!err && adv == MADV_DOFORK)
		p->map[s].dofork = true;
	if (!err && adv == MADV_DONTFORK)
		p->map[s].dofork = false;
	pthread_mutex_unlock(&p->lock);
	LOOSE(c, err, 0, EINVAL, EFAULT, EPERM, EACCES, ENOMEM, EAGAIN, ENODEV,
	      EOPNOTSUPP);
}

struct garbage {
	struct perf_event_mmap_page *up;
	unsigned int variant;
	uint64_t val;
};

static void write_garbage(struct ctx *c, void *arg)
{
	struct garbage *g = arg;
	struct perf_event_mmap_page *up = g->up;
	uint64_t *q = (void *)up;
	size_t i;

	switch (g->variant) {
	case 0:
	case 1:
		up->data_tail = g->val;
		break;
	case 2:
		up->data_head = g->val;
		break;
	case 3:
		up->aux_tail = g->val;
		up->aux_head = rnd64(&c->rng);
		break;
	case 4:
		up->data_offset = g->val;
		up->data_size = rnd64(&c->rng);
		break;
	default:
		for (i = 0; i < PG / 8; i++)
			q[i] = rnd64(&c->rng);
	}
}

/* Garbage into a writable user page: head, tail, AUX fields, or all. */
void op_garbage(struct ctx *c)
{
	struct proc *p = c->p;
	struct garbage g = {
		.variant = rnd(&c->rng, 6),
		.val = rnd64(&c->rng),
	};
	int s, fd, sig;
	bool strict;

	pthread_mutex_lock(&p->lock);
	s = map_pick(c, M_RB | M_TRACE);
	if (s < 0 || (p->map[s].prot & (PROT_READ | PROT_WRITE)) !=
		     (PROT_READ | PROT_WRITE)) {
		pthread_mutex_unlock(&p->lock);
		idle(c, "no writable user page");
		return;
	}
	g.up = (void *)p->map[s].addr;
	/* small steps around the head, or anything */
	if (rnd(&c->rng, 2))
		g.val = g.up->data_head + rnd(&c->rng, 1 << 16) - (1 << 15);
	say(c, "kind %d variant %u value 0x%llx", p->map[s].kind, g.variant,
	    (unsigned long long)g.val);
	strict = p->map[s].kind == MAP_TRACE && !p->map[s].overwrite;
	sig = guarded(c, write_garbage, &g);
	p->map[s].garbled = true;
	garbled_now(p->map[s].id);
	__atomic_store_n(&sh->garbage_vals[__atomic_fetch_add(&sh->garbage_n, 1,
							      __ATOMIC_RELAXED) %
					   GARBAGE_VALS],
			 g.val, __ATOMIC_RELEASE);
	fd = event_fd_of(p, p->map[s].id, K_TFD | K_EVENT);
	pthread_mutex_unlock(&p->lock);
	done(c, sig ? EFAULT : 0);
	if (sig && strict)	/* "Only page 0 may be written" */
		finding(c, "garbage: page 0 faults",
			"writing page 0 of a stop-mode trace mapping got signal %d",
			sig);
	/* let the kernel act on it */
	if (fd >= 0 && rnd(&c->rng, 2))
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

static void poke(struct ctx *c, void *arg)
{
	*(volatile char *)arg = 1;
}

/* "in a writable mapping, a write to a trace page gets SIGBUS" */
void op_poke_trace(struct ctx *c)
{
	struct proc *p = c->p;
	size_t off;
	int s, sig;

	pthread_mutex_lock(&p->lock);
	s = map_pick(c, M_TRACE);
	if (s < 0 || p->map[s].overwrite ||
	    p->map[s].prot != (PROT_READ | PROT_WRITE)) {
		pthread_mutex_unlock(&p->lock);
		idle(c, "no stop-mode trace mapping");
		return;
	}
	off = PG * (1 + rnd(&c->rng, p->map[s].len / PG - 1));
	say(c, "write at +%zu of %zu", off, p->map[s].len);
	sig = guarded(c, poke, p->map[s].addr + off);
	pthread_mutex_unlock(&p->lock);
	done(c, sig ? EFAULT : 0);
	if (sig != SIGBUS)
		finding(c, "poke: no SIGBUS",
			"a write to a trace page gave signal %d, not SIGBUS",
			sig);
}

/* Read the bytes of a ring [tail, head) modulo size, as readers do. */
static void copy_ring(char *dst, const char *data, uint64_t size,
		      uint64_t tail, uint64_t len)
{
	uint64_t off = tail % size, n = len;

	if (n > size - off)
		n = size - off;
	memcpy(dst, data + off, n);
	memcpy(dst + n, data, len - n);
}

/* Garbage in its user page, from us or from another mapper of the buffer */
static bool map_garbled(const struct map *m)
{
	return m->garbled || garbles_of(m->id) != m->garbles;
}

/* The records of a perf stream: sizes, and ITRACE_LOST's fields. */
static void walk_stream(struct ctx *c, void *arg)
{
	struct map *m = arg;
	struct perf_event_mmap_page *up = (void *)m->addr;
	uint64_t head = __atomic_load_n(&up->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = up->data_tail, size = m->len - PG;
	const char *data = m->addr + PG;

	if (map_garbled(m) || head - tail > size)
		goto out;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;

		copy_ring((char *)&h, data, size, tail, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || tail + h.size > head) {
			/*
			 * garbage written meanwhile by another mapper, or a
			 * head or tail that is a value garbage wrote
			 */
			if (map_garbled(m) || garbage_value(head) ||
			    (tail && garbage_value(tail)))
				break;
			finding(c, "perf stream: bad record",
				"record type %u size %u at %llu of head %llu",
				h.type, h.size, (unsigned long long)tail,
				(unsigned long long)head);
			break;
		}
		/* "misc is 0", offset and size follow the header */
		if (h.type == PERF_RECORD_ITRACE_LOST && (h.misc || h.size < 24))
			finding(c, "ITRACE_LOST: header",
				"PERF_RECORD_ITRACE_LOST misc %u size %u",
				h.misc, h.size);
		tail += h.size;
	}
out:
	__atomic_store_n(&up->data_tail, head, __ATOMIC_RELEASE);
}

/* The trace as a reader copies it: [data_tail, data_head), or all of it. */
static void read_trace(struct ctx *c, void *arg)
{
	static __thread char buf[1 << 16];
	struct map *m = arg;
	struct perf_event_mmap_page *up = (void *)m->addr;
	uint64_t head, tail, size = m->len - PG, n = 0, k;

	head = __atomic_load_n(&up->data_head, __ATOMIC_ACQUIRE);
	tail = m->overwrite ? head - (head < size ? head : size) :
			      up->data_tail;
	if (!map_garbled(m) && !m->overwrite && head - tail > size)
		finding(c, "stop mode: head - tail > size",
			"data_head %llu data_tail %llu data_size %llu",
			(unsigned long long)head, (unsigned long long)tail,
			(unsigned long long)size);
	while (!map_garbled(m) && tail + n < head && n < size) {
		k = head - tail - n;
		if (k > sizeof(buf))
			k = sizeof(buf);
		copy_ring(buf, m->addr + PG, size, tail + n, k);
		n += k;
	}
	if (!m->overwrite && (m->prot & PROT_WRITE))
		__atomic_store_n(&up->data_tail,
				 map_garbled(m) ? head : tail + n,
				 __ATOMIC_RELEASE);
}

void op_drain(struct ctx *c)
{
	struct proc *p = c->p;
	bool overwrite, rb;
	struct map *m;
	int s, fd, sig = 0;

	pthread_mutex_lock(&p->lock);
	s = map_pick(c, M_RB | M_TRACE);
	if (s < 0 || !(p->map[s].prot & PROT_READ)) {
		pthread_mutex_unlock(&p->lock);
		idle(c, "no readable mapping");
		return;
	}
	m = &p->map[s];
	overwrite = m->overwrite;
	rb = m->kind == MAP_RB;
	say(c, "kind %d len %zu%s%s", m->kind, m->len,
	    overwrite ? " overwrite" : "", m->garbled ? " garbled" : "");
	if (!rb)
		sig = guarded(c, read_trace, m);
	else if (m->prot & PROT_WRITE)
		sig = guarded(c, walk_stream, m);
	fd = event_fd_of(p, m->id, K_TFD | K_EVENT);
	pthread_mutex_unlock(&p->lock);
	done(c, sig ? EFAULT : 0);
	if (sig) {
		finding(c, "drain: reading faults",
			"reading a readable mapping got signal %d", sig);
		return;
	}
	/* "A reader therefore enables the event after each drain" */
	if (fd >= 0 && !overwrite && !rb)
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}
