// SPDX-License-Identifier: GPL-2.0
/* perf_event record layouts (include/uapi/linux/perf_event.h); see perf-event.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "perf-event.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#ifndef fallthrough
#define fallthrough	__attribute__((__fallthrough__))
#endif

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A NUL terminated (or record-long) string at offset off of the record. */
static void get_str(const struct pev *ev, size_t off, const char **s, size_t *len)
{
	*s = (const char *)ev->raw + off;
	*len = strnlen(*s, ev->size - off);
}

/* Minimum record size for the body the parser reads, per type. */
static size_t body_min(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_MMAP:		return 40;
	case PERF_RECORD_MMAP2:		return 72;
	case PERF_RECORD_COMM:		return 16;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:		return 24;
	case PERF_RECORD_AUX:		return 32;
	case PERF_RECORD_ITRACE_LOST:	return 24;
	case PERF_RECORD_ITRACE_START:	return 16;
	case PERF_RECORD_SWITCH_CPU_WIDE: return 16;
	case PERF_RECORD_LOST:		return 24;
	case PERF_RECORD_AUXTRACE:	return 48;
	default:			return 8;
	}
}

bool pev_short(const struct pev *ev)
{
	return ev->size < body_min(ev->type);
}

int pev_next(struct pev_iter *it, struct pev *ev, char *err, size_t errlen)
{
	struct perf_event_header h;
	const uint8_t *r;

	if (it->pos >= it->len)
		return 0;
	if (it->len - it->pos < sizeof(h))
		return fail(err, errlen, "truncated perf record header at offset 0x%zx", it->pos);
	r = it->buf + it->pos;
	memcpy(&h, r, sizeof(h));
	if (h.size < sizeof(h) || h.size > it->len - it->pos)
		return fail(err, errlen, "bad perf record (type %u size %u) at offset 0x%zx",
			    h.type, h.size, it->pos);
	memset(ev, 0, sizeof(*ev));
	ev->type = h.type;
	ev->misc = h.misc;
	ev->size = h.size;
	ev->pos = it->pos;
	ev->raw = r;
	it->pos += h.size;
	if (h.type == PERF_RECORD_AUXTRACE && it->perf_data && h.size >= 48) {
		/* perf.data: the trace bytes follow the record */
		uint64_t n = get64(r + 8);

		/* a file cut short in the last one: what is there (it->cut says) */
		if (n > it->len - it->pos) {
			it->cut = n - (it->len - it->pos);
			n = it->len - it->pos;
		}
		it->pos += n;
	}
	if (pev_short(ev))
		return 1;

	switch (h.type) {
	case PERF_RECORD_MMAP:
		ev->mmap.pid = get32(r + 8);
		ev->mmap.tid = get32(r + 12);
		ev->mmap.addr = get64(r + 16);
		ev->mmap.len = get64(r + 24);
		ev->mmap.pgoff = get64(r + 32);
		ev->mmap.prot = PROT_READ | PROT_EXEC;
		if (h.misc & PERF_RECORD_MISC_MMAP_DATA)
			ev->mmap.prot = PROT_READ;
		get_str(ev, 40, &ev->mmap.name, &ev->mmap.name_len);
		break;
	case PERF_RECORD_MMAP2:
		ev->mmap.pid = get32(r + 8);
		ev->mmap.tid = get32(r + 12);
		ev->mmap.addr = get64(r + 16);
		ev->mmap.len = get64(r + 24);
		ev->mmap.pgoff = get64(r + 32);
		if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			ev->mmap.build_id_size = r[40] > PEV_BUILD_ID_MAX ?
						 PEV_BUILD_ID_MAX : r[40];
			ev->mmap.build_id = r + 44;
		}
		ev->mmap.prot = get32(r + 64);
		ev->mmap.flags = get32(r + 68);
		get_str(ev, 72, &ev->mmap.name, &ev->mmap.name_len);
		break;
	case PERF_RECORD_COMM:
		ev->comm.pid = get32(r + 8);
		ev->comm.tid = get32(r + 12);
		get_str(ev, 16, &ev->comm.name, &ev->comm.name_len);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		ev->task.pid = get32(r + 8);
		ev->task.ppid = get32(r + 12);
		ev->task.tid = get32(r + 16);
		ev->task.ptid = get32(r + 20);
		break;
	case PERF_RECORD_AUX:
		ev->aux.flags = get64(r + 24);
		fallthrough;
	case PERF_RECORD_ITRACE_LOST:
		ev->aux.offset = get64(r + 8);
		ev->aux.size = get64(r + 16);
		break;
	case PERF_RECORD_ITRACE_START:
		ev->start.pid = get32(r + 8);
		ev->start.tid = get32(r + 12);
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		ev->sw.next_prev_pid = get32(r + 8);
		ev->sw.next_prev_tid = get32(r + 12);
		break;
	case PERF_RECORD_LOST:
		ev->lost.id = get64(r + 8);
		ev->lost.lost = get64(r + 16);
		break;
	case PERF_RECORD_AUXTRACE:
		ev->auxtrace.size = get64(r + 8) - (it->perf_data ? it->cut : 0);
		ev->auxtrace.offset = get64(r + 16);
		ev->auxtrace.reference = get64(r + 24);
		ev->auxtrace.idx = get32(r + 32);
		ev->auxtrace.tid = get32(r + 36);
		ev->auxtrace.cpu = get32(r + 40);
		break;
	default:
		break;
	}
	return 1;
}

const char *pev_type_name(uint32_t type, char *buf, size_t len)
{
	static const char * const names[] = {
		[PERF_RECORD_MMAP] = "MMAP", [PERF_RECORD_LOST] = "LOST",
		[PERF_RECORD_COMM] = "COMM", [PERF_RECORD_EXIT] = "EXIT",
		[PERF_RECORD_THROTTLE] = "THROTTLE", [PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
		[PERF_RECORD_FORK] = "FORK", [PERF_RECORD_READ] = "READ",
		[PERF_RECORD_SAMPLE] = "SAMPLE", [PERF_RECORD_MMAP2] = "MMAP2",
		[PERF_RECORD_AUX] = "AUX", [PERF_RECORD_ITRACE_START] = "ITRACE_START",
		[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
		[PERF_RECORD_SWITCH] = "SWITCH", [PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
		[PERF_RECORD_NAMESPACES] = "NAMESPACES", [PERF_RECORD_KSYMBOL] = "KSYMBOL",
		[PERF_RECORD_BPF_EVENT] = "BPF_EVENT", [PERF_RECORD_CGROUP] = "CGROUP",
		[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
		[PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
		[PERF_RECORD_ITRACE_LOST] = "ITRACE_LOST",
	};

	if (type < ARRAY_SIZE(names) && names[type])
		return names[type];
	switch (type) {
	case PERF_RECORD_AUXTRACE_INFO:	return "AUXTRACE_INFO";
	case PERF_RECORD_AUXTRACE:	return "AUXTRACE";
	case PERF_RECORD_TIME_CONV:	return "TIME_CONV";
	case PERF_RECORD_FINISHED_ROUND: return "FINISHED_ROUND";
	case PERF_RECORD_FINISHED_INIT:	return "FINISHED_INIT";
	case PERF_RECORD_HEADER_ATTR:	return "HEADER_ATTR";
	case PERF_RECORD_ID_INDEX:	return "ID_INDEX";
	}
	snprintf(buf, len, "type %u", type);
	return buf;
}

size_t pev_id_size(uint64_t t)
{
	return 8 * (!!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
		    !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
		    !!(t & PERF_SAMPLE_IDENTIFIER));
}

/*
 * The trailer is at the end of the record, in this order
 * (include/uapi/linux/perf_event.h, struct sample_id).
 */
bool pev_sample_id(const struct pev *ev, uint64_t t, struct pev_id *id)
{
	size_t n = pev_id_size(t), body = body_min(ev->type);
	const uint8_t *p;

	memset(id, 0, sizeof(*id));
	if (ev->type == PERF_RECORD_SAMPLE || ev->size < n + (body > 8 ? body : 8))
		return false;
	p = ev->raw + ev->size - n;
	if (t & PERF_SAMPLE_TID) {
		id->pid = get32(p);
		id->tid = get32(p + 4);
		p += 8;
	}
	if (t & PERF_SAMPLE_TIME) {
		id->time = get64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_ID) {
		id->id = get64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_STREAM_ID)
		p += 8;
	if (t & PERF_SAMPLE_CPU) {
		id->cpu = get32(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		id->id = get64(p);
	return true;
}

int pev_put_id(struct pev_buf *b, uint32_t type, uint16_t misc, const void *body, size_t len,
	       uint64_t t, const struct pev_id *id)
{
	size_t pad = (len + 7) & ~(size_t)7, n = pev_id_size(t), i = pad;
	uint8_t *r = calloc(1, pad + n);
	int ret;

	if (!r)
		return -1;
	memcpy(r, body, len);
	if (t & PERF_SAMPLE_TID) {
		memcpy(r + i, &id->pid, 4);
		memcpy(r + i + 4, &id->tid, 4);
		i += 8;
	}
	if (t & PERF_SAMPLE_TIME) {
		memcpy(r + i, &id->time, 8);
		i += 8;
	}
	if (t & PERF_SAMPLE_ID) {
		memcpy(r + i, &id->id, 8);
		i += 8;
	}
	if (t & PERF_SAMPLE_STREAM_ID)
		i += 8;
	if (t & PERF_SAMPLE_CPU) {
		memcpy(r + i, &id->cpu, 4);
		i += 8;
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		memcpy(r + i, &id->id, 8);
	ret = pev_put(b, type, misc, r, pad + n);
	free(r);
	return ret;
}

int pev_put(struct pev_buf *b, uint32_t type, uint16_t misc, const void *body, size_t len)
{
	struct perf_event_header h = { .type = type, .misc = misc };
	size_t size = sizeof(h) + ((len + 7) & ~(size_t)7);

	if (size > UINT16_MAX)
		return -1;
	if (b->len + size > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 4096;
		uint8_t *n;

		while (cap < b->len + size)
			cap *= 2;
		n = realloc(b->buf, cap);
		if (!n)
			return -1;
		b->buf = n;
		b->cap = cap;
	}
	h.size = size;
	memcpy(b->buf + b->len, &h, sizeof(h));
	memcpy(b->buf + b->len + sizeof(h), body, len);
	memset(b->buf + b->len + sizeof(h) + len, 0, size - sizeof(h) - len);
	b->len += size;
	return 0;
}

int pev_put_mmap2(struct pev_buf *b, uint32_t pid, uint32_t tid, uint64_t addr, uint64_t len,
		  uint64_t pgoff, uint32_t prot, uint32_t flags, const uint8_t *build_id,
		  uint8_t build_id_size, const char *name)
{
	size_t n = strlen(name) + 1, size = 64 + n;
	uint8_t *body = calloc(1, size);
	uint16_t misc = 0;
	int ret;

	if (!body)
		return -1;
	memcpy(body, &pid, 4);
	memcpy(body + 4, &tid, 4);
	memcpy(body + 8, &addr, 8);
	memcpy(body + 16, &len, 8);
	memcpy(body + 24, &pgoff, 8);
	if (build_id_size) {
		if (build_id_size > PEV_BUILD_ID_MAX)
			build_id_size = PEV_BUILD_ID_MAX;
		body[32] = build_id_size;
		memcpy(body + 36, build_id, build_id_size);
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	}
	memcpy(body + 56, &prot, 4);
	memcpy(body + 60, &flags, 4);
	memcpy(body + 64, name, n);
	ret = pev_put(b, PERF_RECORD_MMAP2, misc | PERF_RECORD_MISC_USER, body, size);
	free(body);
	return ret;
}

/* Reading the fields of a sample: a cursor that notes when it runs out. */
struct scur {
	const uint8_t	*p, *end;
	bool		out;		/* a field went beyond the record */
};

static uint64_t scur64(struct scur *c)
{
	uint64_t v;

	if (c->end - c->p < 8) {
		c->out = true;
		c->p = c->end;
		return 0;
	}
	v = get64(c->p);
	c->p += 8;
	return v;
}

static void scur_skip(struct scur *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n) {
		c->out = true;
		c->p = c->end;
		return;
	}
	c->p += n;
}

int pev_sample_parse(const struct pev *ev, uint64_t st, struct pev_sample *s,
		     char *err, size_t errlen)
{
	const uint64_t unsupported = PERF_SAMPLE_READ | PERF_SAMPLE_BRANCH_STACK |
				     PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
				     PERF_SAMPLE_REGS_INTR | PEV_SAMPLE_AUX;
	/* one u64 each, in the kernel's order (perf_output_sample()) */
	const uint64_t after_raw[] = {
		PERF_SAMPLE_WEIGHT | PEV_SAMPLE_WEIGHT_STRUCT, PERF_SAMPLE_DATA_SRC,
		PERF_SAMPLE_TRANSACTION, PERF_SAMPLE_PHYS_ADDR, PEV_SAMPLE_CGROUP,
		PEV_SAMPLE_DATA_PAGE_SIZE, PEV_SAMPLE_CODE_PAGE_SIZE,
	};
	struct scur c = { ev->raw + sizeof(struct perf_event_header), ev->raw + ev->size, false };
	uint64_t v;
	size_t i;

	memset(s, 0, sizeof(*s));
	if (st & unsupported)
		return fail(err, errlen, "sample_type 0x%llx has fields this reader cannot skip",
			    (unsigned long long)st);
	if (st & PERF_SAMPLE_IDENTIFIER)
		s->id = scur64(&c);
	if (st & PERF_SAMPLE_IP)
		s->ip = scur64(&c);
	if (st & PERF_SAMPLE_TID) {
		v = scur64(&c);
		s->pid = (uint32_t)v;		/* little endian: pid first */
		s->tid = (uint32_t)(v >> 32);
	}
	if (st & PERF_SAMPLE_TIME)
		s->time = scur64(&c);
	if (st & PERF_SAMPLE_ADDR)
		s->addr = scur64(&c);
	if (st & PERF_SAMPLE_ID)
		s->id = scur64(&c);
	if (st & PERF_SAMPLE_STREAM_ID)
		scur64(&c);
	if (st & PERF_SAMPLE_CPU)
		s->cpu = (uint32_t)scur64(&c);
	if (st & PERF_SAMPLE_PERIOD)
		s->period = scur64(&c);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		v = scur64(&c);
		scur_skip(&c, v > UINT64_MAX / 8 ? UINT64_MAX : v * 8);
	}
	if (st & PERF_SAMPLE_RAW) {
		/* u32 size, then the data: the whole padded to 8 bytes */
		if (c.end - c.p < 4) {
			c.out = true;
		} else {
			v = get32(c.p);
			scur_skip(&c, 4 + v);
		}
	}
	for (i = 0; i < ARRAY_SIZE(after_raw); i++)
		if (st & after_raw[i])
			scur64(&c);
	if (st & PEV_SAMPLE_ITRACE) {
		s->has_itrace = true;
		s->trace_size = scur64(&c);
		if (!c.out && s->trace_size > (uint64_t)(c.end - c.p))
			return fail(err, errlen,
				    "sample at offset %zu: trace size %llu beyond the record (%zu bytes left)",
				    ev->pos, (unsigned long long)s->trace_size,
				    (size_t)(c.end - c.p));
		s->trace = c.p;
		scur_skip(&c, s->trace_size);
	}
	if (c.out)
		return fail(err, errlen,
			    "sample at offset %zu: %u bytes are too short for sample_type 0x%llx",
			    ev->pos, ev->size, (unsigned long long)st);
	return 0;
}
