// SPDX-License-Identifier: GPL-2.0
/* itrace: record and decode instruction flow traces (Intel PT). */
#include <stdio.h>
#include <string.h>

#include "itrace.h"

static void print_usage(void)
{
	fprintf(stderr,
		"usage: itrace record [-o FILE] [-m PAGES] [--snapshot] [-k] -- CMD [ARGS...]\n"
		"       itrace decode [--insn | --summary | --stats | --sideband] [FILE]\n"
		"       itrace core [--exe PATH] [--sysroot DIR] [--insn] [--json] [-n N] CORE\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_usage();
		return 2;
	}
	if (!strcmp(argv[1], "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "decode"))
		return cmd_decode(argc - 1, argv + 1);
	if (!strcmp(argv[1], "core"))
		return cmd_core(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		print_usage();
		return 0;
	}
	fprintf(stderr, "itrace: unknown command '%s'\n", argv[1]);
	print_usage();
	return 2;
}
