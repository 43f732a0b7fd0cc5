// SPDX-License-Identifier: GPL-2.0
/*
 * ptloop: the baseline of `make bench`'s decode figures: a bare libipt
 * pt_insn loop over a recording (itrace.data or perf.data), with the image
 * built as itrace decode builds it (the sideband's executable mappings
 * through one image section cache, [vdso] from the recording), counting
 * instructions and nothing else.
 *
 *   ptloop [--block] FILE      prints "insns N errors E"
 */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "itrace.h"
#include "itrace-file.h"
#include "perf-event.h"

int main(int argc, char **argv)
{
	int block = argc > 2 && !strcmp(argv[1], "--block"), vdso_fd = -1;
	unsigned long long insns = 0, errors = 0;
	struct itrace_image im;
	struct itrace_data d;
	struct pev_iter it;
	struct pev ev;
	char err[512], vpath[64];
	size_t i;

	if (argc < 2 || itrace_read_any(argv[argc - 1], &d, NULL, err, sizeof(err)) ||
	    itrace_image_init(&im, "ptloop")) {
		fprintf(stderr, "usage: ptloop [--block] FILE%s%s\n", argc < 2 ? "" : ": ",
			argc < 2 ? "" : err);
		return 1;
	}
	pev_iter_init(&it, d.perf, d.perf_size);
	while (pev_next(&it, &ev, err, sizeof(err)) > 0) {
		char *name;

		if ((ev.type != PERF_RECORD_MMAP && ev.type != PERF_RECORD_MMAP2) ||
		    pev_short(&ev) || !(ev.mmap.prot & PROT_EXEC))
			continue;
		name = strndup(ev.mmap.name, ev.mmap.name_len);
		if (!strcmp(name, "[vdso]") && d.vdso_size && vdso_fd < 0)
			vdso_fd = itrace_mem_image("vdso", d.vdso, d.vdso_size, vpath,
						   sizeof(vpath));
		if (name[0] == '/' || (!strcmp(name, "[vdso]") && vdso_fd >= 0))
			itrace_image_add(&im, NULL, name, name[0] == '/' ? name : vpath,
					 ev.mmap.addr, ev.mmap.len, ev.mmap.pgoff);
		free(name);
	}
	for (i = 0; i < d.nr_segs; i++) {
		struct pt_config cfg;
		int st;

		itrace_pt_config(&cfg, d.trace + d.segs[i].buf_offset, d.segs[i].size,
				 d.hdr.cpu_vendor, d.hdr.cpu_family, d.hdr.cpu_model,
				 d.hdr.cpu_stepping);
		if (block) {
			struct pt_block_decoder *dec = pt_blk_alloc_decoder(&cfg);
			struct pt_block b;
			struct pt_event e;

			pt_blk_set_image(dec, im.image);
			for (st = pt_blk_sync_forward(dec); st != -pte_eos;) {
				if (st < 0) {
					errors++;
					st = pt_blk_sync_forward(dec);
					continue;
				}
				while (st & pts_event_pending)
					st = pt_blk_event(dec, &e, sizeof(e));
				if (st < 0)
					continue;
				st = pt_blk_next(dec, &b, sizeof(b));
				insns += b.ninsn;
			}
			pt_blk_free_decoder(dec);
		} else {
			struct pt_insn_decoder *dec = pt_insn_alloc_decoder(&cfg);
			struct pt_insn in;
			struct pt_event e;

			pt_insn_set_image(dec, im.image);
			for (st = pt_insn_sync_forward(dec); st != -pte_eos;) {
				if (st < 0) {
					errors++;
					st = pt_insn_sync_forward(dec);
					continue;
				}
				while (st & pts_event_pending)
					st = pt_insn_event(dec, &e, sizeof(e));
				if (st < 0)
					continue;
				st = pt_insn_next(dec, &in, sizeof(in));
				if (st >= 0)
					insns++;
			}
			pt_insn_free_decoder(dec);
		}
	}
	printf("insns %llu errors %llu\n", insns, errors);
	itrace_image_fini(&im);
	if (vdso_fd >= 0)
		close(vdso_fd);
	itrace_data_free(&d);
	return 0;
}
