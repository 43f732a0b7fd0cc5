/* SPDX-License-Identifier: GPL-2.0 */
/* itrace record: ring buffer reading, shared with the unit tests. */
#ifndef ITRACE_RECORD_H
#define ITRACE_RECORD_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ring {
	const char	*name;
	void		*base;		/* mapping, page 0 = user page */
	size_t		map_size;
	struct perf_event_mmap_page *pg;
	uint8_t		*data;
	uint64_t	size;
	uint64_t	tail;		/* our copy of data_tail */
	int		writable;
};

/*
 * One buffer of the recording: a perf stream and a trace, mapped from the
 * event that owns them (one per CPU, or one per-task event with
 * --no-inherit), and every event whose output goes there (the other
 * threads of -p/-t on that CPU, redirected with PERF_EVENT_IOC_SET_OUTPUT).
 */
struct rbuf {
	uint32_t	idx;		/* buffer number in the file: the CPU */
	int		cpu;		/* -1: a per-task event on any CPU */
	int		fd;		/* the event that owns the buffer */
	int		tfd;		/* its trace fd */
	int		*fds;		/* every event writing here, fd first */
	size_t		nr_fds;
	struct ring	perf;
	struct ring	trace;
	int		lost;		/* loss records seen since the last drain */
	unsigned long	nr_itrace_lost;	/* PERF_RECORD_ITRACE_LOST records */
	uint64_t	lost_bytes;	/* sum of their size fields (0: unknown) */
	unsigned long	nr_aux_truncated; /* PERF_RECORD_AUX with TRUNCATED */
	unsigned long	nr_enables;	/* PERF_EVENT_IOC_ENABLE after a stop */
	unsigned long	nr_stall_enables; /* ... after a timeout, trace still */
	uint64_t	stall_head;	/* data_head at the last timeout */
	uint64_t	snap_head;	/* data_head at the last snapshot */
	uint64_t	trace_bytes;
};

struct recorder {
	FILE		*out;
	const char	*path;
	struct rbuf	*bufs;
	size_t		nr_bufs;
	int		exec_seen;	/* tracing started (enable_on_exec) */
	int		snapshot;
	int		sideband_only;	/* test hook: no PT, dummy event */
	unsigned long	nr_lost;	/* losses: ITRACE_LOST + truncated AUX */
	unsigned int	nr_snaps;
	uint64_t	trace_bytes;
	int		sb_lost;	/* PERF_RECORD_LOST seen */
	int		samples;	/* record -e: samples with trace, no trace fd */
	unsigned long	nr_samples;	/* PERF_RECORD_SAMPLE records */
	uint64_t	nr_lost_records; /* records the kernel lost (PERF_RECORD_LOST) */
};

/* React to loss and exec records in a piece of buffer b's perf stream. */
void scan_perf(struct recorder *rec, struct rbuf *b, const uint8_t *p, size_t len);
/* Copy [data_tail, data_head) of a ring of b to the file as a section of type. */
int ring_drain(struct recorder *rec, struct rbuf *b, struct ring *r, uint32_t type);
/* On a poll() timeout: drain and enable again if b's trace did not move. */
int restart_stalled(struct recorder *rec, struct rbuf *b);
/*
 * Overwrite mode: save b's trace written since its last snapshot (at most
 * the buffer), oldest byte first.
 */
int drain_snapshot(struct recorder *rec, struct rbuf *b);

#endif
