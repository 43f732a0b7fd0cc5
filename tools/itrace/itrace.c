// SPDX-License-Identifier: GPL-2.0
/* itrace: record and decode instruction flow traces (Intel PT). */
#include <stdio.h>
#include <string.h>

#include <intel-pt.h>

#include "itrace.h"

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: itrace record [-o FILE] [-m PAGES] [--snapshot] [-k] -- CMD [ARGS...]\n"
		"       itrace record -e EVENT [-c N | -F HZ] [--sample-trace BYTES] -- CMD [ARGS...]\n"
		"       itrace decode [--insn | --summary | --stats | --sideband] [--json]\n"
		"                     [--tid TIDS] [--time START,STOP] [--snapshot N]\n"
		"                     [--kernel KERNEL] [--sysroot DIR] [--exe PATH] [FILE | -]\n"
		"       itrace report [--json] [--kernel KERNEL] [--sysroot DIR] [--exe PATH] [FILE | -]\n"
		"       itrace report [--samples] [-n N] [--path N] [--top N] [--json] FILE\n"
		"       itrace core [--exe PATH] [--sysroot DIR] [--insn] [--json] [-n N]\n"
		"                   [--all] CORE\n"
		"       itrace convert -o OUT.data [--buildid-dir DIR | -N] [FILE | -]\n"
		"       itrace --version\n"
		"`itrace COMMAND --help` describes a command; man itrace, itrace-record,\n"
		"itrace-decode, itrace-report, itrace-core, itrace-convert.\n"
		"exit status: 0 done, 1 unusable input, 2 usage, 3 decoded with errors\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "decode"))
		return cmd_decode(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "core"))
		return cmd_core(argc - 1, argv + 1);
	if (!strcmp(argv[1], "convert"))
		return cmd_convert(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		print_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("itrace %s (libipt %u.%u.%u)\n", ITRACE_VERSION, pt_library_version().major,
		       pt_library_version().minor, pt_library_version().patch);
		return 0;
	}
	fprintf(stderr, "itrace: unknown command '%s'\n", argv[1]);
	print_usage(stderr);
	return EXIT_USAGE;
}
