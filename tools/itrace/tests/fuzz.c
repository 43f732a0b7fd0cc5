// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer targets for the parsers, with AddressSanitizer, UBSan and
 * LeakSanitizer (clang -fsanitize=fuzzer,address,undefined):
 *
 *   fuzz-decode: the input is an itrace.data file, decoded by the
 *     command itself (the file parser, the perf_event records of the
 *     sideband, libipt's decoders through our glue); its last byte picks
 *     the view.  With bit 4 of that byte, the flow, --stats or --summary
 *     is decoded with --jobs 1 and with 3 threads and a task at every PSB
 *     (pdec.c), and the two outputs and exit statuses must be the same.
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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "itrace.h"

#define NOROOT	"/nonexistent/itrace-fuzz-root"

#ifndef FUZZ_CORE
/* cmd_decode() with its standard output in *out (malloc'd), its status */
static int decode_to(char **argv, int argc, char **out, size_t *len)
{
	int mfd = memfd_create("itrace-fuzz-out", 0), saved, ret;
	off_t n;

	if (mfd < 0)
		abort();
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	if (saved < 0 || dup2(mfd, STDOUT_FILENO) < 0)
		abort();
	ret = cmd_decode(argc, argv);
	fflush(stdout);
	if (dup2(saved, STDOUT_FILENO) < 0)
		abort();
	close(saved);
	n = lseek(mfd, 0, SEEK_END);
	*out = malloc(n + 1);
	if (!*out || pread(mfd, *out, n, 0) != n)
		abort();
	*len = n;
	close(mfd);
	return ret;
}

/*
 * The same decode with --jobs 1 and with threads: the same output.  Each
 * run gets its own argv (getopt_long() permutes the one it is given).
 */
static void decode_both(char **args, int argc, const char *jobs)
{
	char *argv[16], *one, *more;
	size_t n1, n3;
	int r1, r3;

	memcpy(argv, args, argc * sizeof(*argv));
	argv[argc] = "--jobs";
	argv[argc + 1] = "1";
	argv[argc + 2] = NULL;
	r1 = decode_to(argv, argc + 2, &one, &n1);
	memcpy(argv, args, argc * sizeof(*argv));
	argv[argc + 1] = (char *)jobs;
	argv[argc] = "--jobs";
	setenv("ITRACE_DECODE_TASK", "1", 1);
	setenv("ITRACE_DECODE_MIN", "0", 1);
	r3 = decode_to(argv, argc + 2, &more, &n3);
	unsetenv("ITRACE_DECODE_TASK");
	unsetenv("ITRACE_DECODE_MIN");
	if (r1 != r3 || n1 != n3 || memcmp(one, more, n1)) {
		fprintf(stderr,
			"fuzz-decode: --jobs %s: exit %d, %zu bytes; --jobs 1: exit %d, %zu bytes\n",
			jobs, r3, n3, r1, n1);
		abort();
	}
	free(one);
	free(more);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = itrace_mem_image("itrace-fuzz", data, size, path, sizeof(path));
	const uint8_t sel = size ? data[size - 1] : 0;
	char *argv[12] = { NULL };
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
	if (sel & 16) {
		/*
		 * a view on blocks, --jobs 1 against threads: one worker
		 * (bit 5; the caller's thread takes tasks while it waits)
		 * or two
		 */
		if ((sel & 3) != 1)
			argv[argc++] = (sel & 3) == 0 ? "--stats" : "--summary";
		argv[argc++] = sel & 4 ? "--json" : "--no-demangle";
		argv[argc++] = path;
		decode_both(argv, argc, sel & 32 ? "2" : "3");
		close(fd);
		return 0;
	}
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
