/* SPDX-License-Identifier: GPL-2.0 */
#ifndef ITRACE_H
#define ITRACE_H

#include <stddef.h>
#include <stdio.h>

struct itrace_data;
struct itrace_file_header;

enum decode_mode {
	DECODE_FLOW,		/* one line per call / return / jump between functions */
	DECODE_INSN,		/* one line per instruction */
	DECODE_SUMMARY,		/* human summary */
	DECODE_STATS,		/* machine readable counters (tests) */
	DECODE_SIDEBAND,	/* the perf stream's records */
};

struct decode_opts {
	enum decode_mode mode;
	const char	*name;		/* file name for messages */
};

/* Returns 0, 1 on decode errors (after printing everything it could). */
int itrace_decode(struct itrace_data *d, const struct decode_opts *o, FILE *out);

int cmd_record(int argc, char **argv);
int cmd_decode(int argc, char **argv);
void itrace_cpu_ident(struct itrace_file_header *hdr);
/* A copy of this process's [vdso] image (malloc'd). */
int itrace_read_vdso(unsigned char **buf, size_t *size);

#endif
