/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Address filters in perf record's syntax (--filter), resolved into the
 * string PERF_EVENT_IOC_SET_FILTER takes: file offsets, not addresses.
 */
#ifndef ITRACE_FILTER_H
#define ITRACE_FILTER_H

#include <stddef.h>
#include <stdint.h>

struct addr_filter {
	int		action;		/* FILTER_* */
	uint64_t	offset;		/* file offset, or kernel address */
	uint64_t	size;
	char		*file;		/* absolute path; NULL: the kernel */
	char		*what;		/* as the user wrote it, for messages */
};

enum {
	FILTER_FILTER,			/* trace only inside the range */
	FILTER_TRACESTOP,		/* stop the trace when entering it */
};

struct addr_filters {
	struct addr_filter *f;
	size_t		nr;
};

/*
 * Parse and resolve spec (perf's syntax: "filter|start|stop|tracestop
 * START[/SIZE] [@FILE]", several separated by commas or spaces; START and
 * SIZE numbers or symbols, '*' for a whole file).  A file without a
 * slash is looked up in PATH, as the command would be.  Returns 0, or -1
 * with a message in err.
 */
int addr_filters_parse(const char *spec, struct addr_filters *fs, char *err, size_t errlen);
/* The kernel's string ("filter 0xOFF/0xSIZE@FILE,..."), malloc'd. */
char *addr_filters_kernel(const struct addr_filters *fs);
void addr_filters_free(struct addr_filters *fs);
/* A program's absolute path: as given if it has a slash, else from PATH (malloc'd). */
char *find_file(const char *name);
/* Resolve a symbol of an ELF file to its runtime offset from the file's load base. */
int elf_symbol_vaddr(const char *path, const char *name, uint64_t *vaddr, uint64_t *size,
		     int *pie, char *err, size_t errlen);
/* The same for a data object (a variable), for data breakpoints. */
int elf_data_symbol_vaddr(const char *path, const char *name, uint64_t *vaddr, uint64_t *size,
			  int *pie, char *err, size_t errlen);

#endif
