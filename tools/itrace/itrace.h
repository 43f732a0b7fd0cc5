/* SPDX-License-Identifier: GPL-2.0 */
#ifndef ITRACE_H
#define ITRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct itrace_data;
struct itrace_file_header;
struct pt_config;
struct pt_event;
struct pt_image;
struct pt_insn;
struct pt_insn_decoder;
struct symtab;

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
	const char	*kernel;	/* --kernel: ELF image of the kernel */
};

/* Returns 0, 1 on decode errors (after printing everything it could). */
int itrace_decode(struct itrace_data *d, const struct decode_opts *o, FILE *out);

int cmd_record(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_core(int argc, char **argv);

/* ---- shared by decode and core (decode.c) ---- */

/* What a walk over one run of trace reports. */
struct pt_walk_ops {
	void (*insn)(void *ctx, const struct pt_insn *in);
	void (*event)(void *ctx, struct pt_insn_decoder *dec, const struct pt_event *ev);
	/* err: the libipt error; then the decoder resyncs at the next PSB */
	void (*error)(void *ctx, struct pt_insn_decoder *dec, int err, uint64_t last_ip);
};

/* A decoder configuration for trace [trace, trace + size) of that CPU. */
void itrace_pt_config(struct pt_config *cfg, const uint8_t *trace, size_t size,
		      uint32_t vendor, uint32_t family, uint32_t model, uint32_t stepping);
/* Decode from the first PSB to the end: 0, 1 if there is no PSB, <0 on ENOMEM. */
int itrace_pt_walk(const struct pt_config *cfg, struct pt_image *image,
		   const struct pt_walk_ops *ops, void *ctx);
/*
 * Map file offset pgoff of path at [addr, addr + len) in the image and the
 * symbol table: 0, 1 if the file holds nothing there, -errno if it cannot be read.
 */
int itrace_image_add(struct pt_image *image, struct symtab *st, const char *name,
		     const char *path, uint64_t addr, uint64_t len, uint64_t pgoff);
/* Write buf to a new temporary file, its name in path: 0 or -errno. */
int itrace_tmp_image(const void *buf, size_t size, char *path, size_t len);
const char *itrace_base_name(const char *path);
void itrace_cpu_ident(struct itrace_file_header *hdr);
/* A copy of this process's [vdso] image (malloc'd). */
int itrace_read_vdso(unsigned char **buf, size_t *size);

#endif
