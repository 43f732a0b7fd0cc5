/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf_event records (struct perf_event_header + body), as the kernel
 * writes them into an event's perf stream and perf writes them into
 * perf.data: the one place that knows their layouts.  record, decode and
 * the perf.data reader and writer go through it; no other file reads a
 * record by raw offsets.
 */
#ifndef ITRACE_PERF_EVENT_H
#define ITRACE_PERF_EVENT_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef PERF_RECORD_ITRACE_LOST
#define PERF_RECORD_ITRACE_LOST	23	/* DESIGN.md section 4 */
#endif

/* Records perf (the tool) adds to perf.data, tools/perf/util/event.h. */
enum {
	PERF_RECORD_HEADER_ATTR		= 64,
	PERF_RECORD_HEADER_EVENT_TYPE	= 65,
	PERF_RECORD_HEADER_TRACING_DATA	= 66,
	PERF_RECORD_HEADER_BUILD_ID	= 67,
	PERF_RECORD_FINISHED_ROUND	= 68,
	PERF_RECORD_ID_INDEX		= 69,
	PERF_RECORD_AUXTRACE_INFO	= 70,
	PERF_RECORD_AUXTRACE		= 71,
	PERF_RECORD_AUXTRACE_ERROR	= 72,
	PERF_RECORD_THREAD_MAP		= 73,
	PERF_RECORD_CPU_MAP		= 74,
	PERF_RECORD_STAT_CONFIG		= 75,
	PERF_RECORD_STAT		= 76,
	PERF_RECORD_STAT_ROUND		= 77,
	PERF_RECORD_EVENT_UPDATE	= 78,
	PERF_RECORD_TIME_CONV		= 79,
	PERF_RECORD_HEADER_FEATURE	= 80,
	PERF_RECORD_COMPRESSED		= 81,
	PERF_RECORD_FINISHED_INIT	= 82,
};

#define PEV_BUILD_ID_MAX	20

/* One decoded record.  Pointers point into the buffer that holds it. */
struct pev {
	uint32_t	type;
	uint16_t	misc;
	uint16_t	size;
	size_t		pos;		/* offset of the record in the buffer */
	const uint8_t	*raw;		/* the record, header included */
	union {
		struct {		/* MMAP, MMAP2 */
			uint32_t	pid, tid;
			uint64_t	addr, len, pgoff;
			uint32_t	prot, flags;	/* MMAP: PROT_EXEC */
			uint8_t		build_id_size;	/* 0: none */
			const uint8_t	*build_id;
			const char	*name;		/* not NUL terminated */
			size_t		name_len;
		} mmap;
		struct {		/* COMM */
			uint32_t	pid, tid;
			const char	*name;
			size_t		name_len;
		} comm;
		struct {		/* FORK, EXIT */
			uint32_t	pid, ppid, tid, ptid;
		} task;
		struct {		/* AUX, ITRACE_LOST (flags 0) */
			uint64_t	offset, size, flags;
		} aux;
		struct {		/* ITRACE_START */
			uint32_t	pid, tid;
		} start;
		struct {		/* LOST */
			uint64_t	id, lost;
		} lost;
		struct {		/* SWITCH_CPU_WIDE: the task switched in or out */
			uint32_t	next_prev_pid, next_prev_tid;
		} sw;
		struct {		/* AUXTRACE (perf.data): data follows */
			uint64_t	size, offset, reference;
			uint32_t	idx, tid, cpu;
		} auxtrace;
	};
};

struct pev_iter {
	const uint8_t	*buf;
	size_t		len;
	size_t		pos;
	bool		perf_data;	/* perf.data: AUXTRACE carries data after it */
	uint64_t	cut;		/* perf.data: the last AUXTRACE's bytes cut off */
};

static inline void pev_iter_init(struct pev_iter *it, const void *buf, size_t len)
{
	it->buf = buf;
	it->len = len;
	it->pos = 0;
	it->perf_data = false;
	it->cut = 0;
}

/*
 * The next record: 1, 0 at the end, -1 if the record at it->pos is
 * malformed (a header that does not fit, a size smaller than the header or
 * beyond the buffer; err says which); the walk cannot go on after that.
 * A record too short for its type's body is returned with type set and
 * its body zero: callers see a record they may skip.
 */
int pev_next(struct pev_iter *it, struct pev *ev, char *err, size_t errlen);

/* A record's body too short for its type (body left zero by pev_next). */
bool pev_short(const struct pev *ev);

/* Name of a record type for messages ("MMAP2", or "type 99"). */
const char *pev_type_name(uint32_t type, char *buf, size_t len);

/*
 * The sample_id trailer of a record other than SAMPLE (attr.sample_id_all),
 * for the sample_type bits PERF_SAMPLE_TID, TIME, ID, STREAM_ID, CPU and
 * IDENTIFIER: the fields the record does not carry are 0.  Returns false
 * when the record is too short for the trailer (or is a SAMPLE).
 */
struct pev_id {
	uint32_t	pid, tid;
	uint64_t	time;
	uint64_t	id;
	uint32_t	cpu;
};

#define PEV_ID_SAMPLE_TYPES	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
				 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

bool pev_sample_id(const struct pev *ev, uint64_t sample_type, struct pev_id *id);
/* Bytes of the sample_id trailer for sample_type. */
size_t pev_id_size(uint64_t sample_type);

/*
 * A PERF_RECORD_SAMPLE of an event with sample_type: the fields itrace
 * reads, and the trace of PERF_SAMPLE_ITRACE (bit 25, after every mainline
 * field: { u64 size; char data[size]; }).  Returns 0, or -1 with a message
 * when the record does not hold what sample_type says, or sample_type has
 * a field of variable layout this reader cannot skip (READ, BRANCH_STACK,
 * REGS_*, STACK_USER, AUX).
 */
struct pev_sample {
	uint64_t	ip, time, addr, id, period;
	uint32_t	pid, tid, cpu;
	bool		has_itrace;	/* sample_type has PERF_SAMPLE_ITRACE */
	uint64_t	trace_size;
	const uint8_t	*trace;
};

/* The kernel's <linux/bits.h>, which user space does not have. */
#ifndef BIT_ULL
#define BIT_ULL(nr)			(1ULL << (nr))
#endif

/* sample_type bits newer than some systems' <linux/perf_event.h> */
#define PEV_SAMPLE_AUX			BIT_ULL(20)
#define PEV_SAMPLE_CGROUP		BIT_ULL(21)
#define PEV_SAMPLE_DATA_PAGE_SIZE	BIT_ULL(22)
#define PEV_SAMPLE_CODE_PAGE_SIZE	BIT_ULL(23)
#define PEV_SAMPLE_WEIGHT_STRUCT	BIT_ULL(24)
#define PEV_SAMPLE_ITRACE		BIT_ULL(25)	/* DESIGN.md section 4 */

int pev_sample_parse(const struct pev *ev, uint64_t sample_type, struct pev_sample *s,
		     char *err, size_t errlen);

/* Append a record to a growing buffer: 0, -1 out of memory. */
struct pev_buf {
	uint8_t		*buf;
	size_t		len, cap;
};

int pev_put(struct pev_buf *b, uint32_t type, uint16_t misc, const void *body, size_t len);
/* The same with the sample_id trailer of id for sample_type (record synthesis). */
int pev_put_id(struct pev_buf *b, uint32_t type, uint16_t misc, const void *body, size_t len,
	       uint64_t sample_type, const struct pev_id *id);
/* An MMAP2 record with the file name (and build id if build_id_size). */
int pev_put_mmap2(struct pev_buf *b, uint32_t pid, uint32_t tid, uint64_t addr, uint64_t len,
		  uint64_t pgoff, uint32_t prot, uint32_t flags, const uint8_t *build_id,
		  uint8_t build_id_size, const char *name);

#endif
