/* SPDX-License-Identifier: GPL-2.0 */
/* itrace record: ring buffer reading, shared with the unit tests. */
#ifndef ITRACE_RECORD_H
#define ITRACE_RECORD_H

#include <linux/perf_event.h>
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

struct recorder {
	FILE		*out;
	const char	*path;
	int		fd;		/* event fd */
	int		tfd;		/* trace fd */
	struct ring	perf;
	struct ring	trace;
	int		exec_seen;
	int		lost;		/* loss records seen since last drain */
	unsigned long	nr_lost;	/* losses: ITRACE_LOST + truncated AUX */
	unsigned long	nr_itrace_lost;	/* PERF_RECORD_ITRACE_LOST records */
	uint64_t	lost_bytes;	/* sum of their size fields (0: unknown) */
	unsigned long	nr_aux_truncated; /* PERF_RECORD_AUX with TRUNCATED */
	unsigned long	nr_enables;	/* PERF_EVENT_IOC_ENABLE after a stop */
	unsigned long	nr_stall_enables; /* ... after a timeout, trace still */
	uint64_t	stall_head;	/* data_head at the last timeout */
	int		snapshot;
	int		sideband_only;	/* test hook: no PT, dummy event */
	uint64_t	trace_bytes;
};

/* React to loss and exec records in a piece of the perf stream. */
void scan_perf(struct recorder *rec, const uint8_t *p, size_t len);
/* Copy [data_tail, data_head) of a ring to the file as a section of type. */
int ring_drain(struct recorder *rec, struct ring *r, uint32_t type);
/* On a poll() timeout: drain and enable again if the trace did not move. */
int restart_stalled(struct recorder *rec);
/* Overwrite mode: save the whole trace buffer, oldest byte first. */
int drain_snapshot(struct recorder *rec);

#endif
