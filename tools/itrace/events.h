/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sampled events named as perf names them (record -e): the attr fields of
 * each, and the attr tail of PERF_SAMPLE_ITRACE (DESIGN.md section 4,
 * Documentation/userspace-api/itrace.rst), which the system's
 * <linux/perf_event.h> may not have.
 */
#ifndef ITRACE_EVENTS_H
#define ITRACE_EVENTS_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "perf-event.h"

#ifndef PERF_SAMPLE_ITRACE
#define PERF_SAMPLE_ITRACE	PEV_SAMPLE_ITRACE
#endif
#define ITRACE_ATTR_SIZE_VER10	160	/* PERF_ATTR_SIZE_VER10 */
#define ITRACE_ATTR_CONFIG4	136	/* __u64 config4: must be 0 */
#define ITRACE_ATTR_CONFIG	144	/* __u64 itrace_config */
#define ITRACE_ATTR_TYPE	152	/* __u32 itrace_sample_type */
#define ITRACE_ATTR_SIZE	156	/* __u32 itrace_sample_size */
/* A sample record is at most U16_MAX bytes: what is left for the trace. */
#define ITRACE_SAMPLE_MAX	(60 * 1024)

/* A perf_event_attr of PERF_ATTR_SIZE_VER10 bytes. */
union itrace_attr {
	struct perf_event_attr	a;
	uint8_t			raw[ITRACE_ATTR_SIZE_VER10];
};

void itrace_attr_set_sample(union itrace_attr *u, uint32_t pmu_type, uint64_t config,
			    uint32_t bytes);
/* From an ATTR section of size bytes: 0 if it is too short to say. */
uint32_t itrace_attr_sample_size(const uint8_t *attr, size_t size);

enum evspec_kind {
	EV_PLAIN,		/* type and config say it all */
	EV_BREAKPOINT,		/* mem:ADDR or mem:SYMBOL */
	EV_TRACEPOINT,		/* SUBSYS:NAME, its id from tracefs */
};

struct evspec {
	enum evspec_kind kind;
	uint32_t	type;		/* PERF_TYPE_* */
	uint64_t	config;
	uint32_t	bp_type;	/* HW_BREAKPOINT_* */
	uint32_t	bp_len;
	uint64_t	bp_addr;	/* mem:ADDR */
	char		sym[256];	/* mem:SYMBOL (empty: an address) */
	char		tp[256];	/* SUBSYS/NAME of a tracepoint */
	/* perf's default for the event: a frequency (Hz), else period 1 */
	unsigned int	def_freq;
};

/*
 * Parse EVENT: a software or hardware event by its perf name (cpu-clock,
 * task-clock, page-faults, minor-faults, major-faults, context-switches,
 * cpu-migrations, instructions, cycles, branches, branch-misses,
 * cache-references, cache-misses, bus-cycles, ref-cycles), a raw counter
 * rHEX, an execute or data breakpoint mem:ADDR|SYMBOL[:x|r|w|rw][/LEN],
 * or a tracepoint SUBSYS:NAME.  0, or -1 with a message in err.
 */
int evspec_parse(const char *spec, struct evspec *e, char *err, size_t errlen);
/*
 * A tracepoint's id from tracefs (/sys/kernel/tracing, else
 * /sys/kernel/debug/tracing): 0 and *id, or -1 with a message.
 */
int evspec_tracepoint_id(const char *tp, uint64_t *id, char *err, size_t errlen);

#endif
