// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer targets for the parsers, with AddressSanitizer, UBSan and
 * LeakSanitizer (clang -fsanitize=fuzzer,address,undefined):
 *
 *   fuzz-decode: the input is an itrace.data file, decoded by the
 *     command itself (the file parser, the perf_event records of the
 *     sideband, libipt's decoders through our glue); its first byte picks
 *     the view.
 *   fuzz-core: the input is an ELF core dump, reported by itrace core
 *     (ELF and note parsing, NT_ITRACE notes, the trace decode).
 *
 * The input goes to a memfd, named by its /proc/self/fd path.  Files the
 * input names are looked up under a directory that does not exist, so a
 * run reads nothing but its input.  Built and run by
 * `make -C tools/itrace fuzz` (FUZZ_SECONDS per target), from make check.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "itrace.h"

#define NOROOT	"/nonexistent/itrace-fuzz-root"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = itrace_mem_image("itrace-fuzz", data, size, path, sizeof(path));
	const uint8_t sel = size ? data[size - 1] : 0;
	char *argv[8] = { NULL };
	int argc = 0;

	if (fd < 0)
		return 0;
#ifdef FUZZ_CORE
	argv[argc++] = "core";
	argv[argc++] = "--sysroot";
	argv[argc++] = NOROOT;
	argv[argc++] = sel & 1 ? "--json" : "-n";
	argv[argc++] = sel & 1 ? "--insn" : "3";
	argv[argc++] = path;
	cmd_core(argc, argv);
#else
	if (sel & 8) {
		/* report of samples (record -e), each sample; others: usage */
		argv[argc++] = "report";
		argv[argc++] = "--samples";
		argv[argc++] = "--sysroot";
		argv[argc++] = NOROOT;
		argv[argc++] = sel & 4 ? "--json" : "-n3";
		argv[argc++] = "--no-progress";
		argv[argc++] = path;
		cmd_report(argc, argv);
		fflush(stdout);
		close(fd);
		return 0;
	}
	argv[argc++] = "decode";
	argv[argc++] = "--no-progress";
	argv[argc++] = "--sysroot";
	argv[argc++] = NOROOT;
	argv[argc++] = (sel & 3) == 0 ? "--stats" : (sel & 3) == 1 ? "--insn" :
		       (sel & 3) == 2 ? "--sideband" : "--summary";
	argv[argc++] = sel & 4 ? "--json" : "--no-demangle";
	argv[argc++] = path;
	cmd_decode(argc, argv);
#endif
	fflush(stdout);
	close(fd);
	return 0;
}
