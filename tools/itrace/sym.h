/* SPDX-License-Identifier: GPL-2.0 */
/* Address to symbol for the traced address space (elfutils libdwfl). */
#ifndef ITRACE_SYM_H
#define ITRACE_SYM_H

#include <stdint.h>

struct symtab;

struct sym_info {
	const char	*name;		/* NULL: no symbol covers the address */
	const char	*module;	/* short module name, never NULL */
	uint64_t	start;		/* symbol start (or the address itself) */
	uint64_t	end;		/* one past the end; start + 1 if unknown */
};

struct symtab *sym_new(void);
/* One executable mapping: file offset pgoff mapped at [addr, addr + len). */
int sym_add_mapping(struct symtab *st, const char *name, const char *path,
		    uint64_t addr, uint64_t len, uint64_t pgoff);
/*
 * Kernel text symbols from a kallsyms file ("ADDR TYPE NAME" lines, as
 * /proc/kallsyms and perf's kcore_dir/kallsyms), for addresses no ELF file
 * covers; module "[kernel.kallsyms]".  0, or -1 (unreadable, no symbol).
 */
int sym_add_kallsyms(struct symtab *st, const char *path);
void sym_done(struct symtab *st);
/*
 * The address of the kernel's function name (a kallsyms text symbol, or
 * a global STT_FUNC of an ELF file in the upper half): 0, or -1 if there
 * is none, or more than one address has that name.  After sym_done().
 */
int sym_find_kernel(struct symtab *st, const char *name, uint64_t *addr);
void sym_lookup(struct symtab *st, uint64_t ip, struct sym_info *si);
void sym_free(struct symtab *st);
/* Length of a symbol name without its version ("memcpy@@GLIBC_2.14"). */
int sym_name_len(const char *name);
/* Source file and line of ip from the debug info; -1 if there is none. */
/* The GNU build-id of an ELF file: its length (at most max), -1 if none. */
int sym_build_id(const char *path, uint8_t *id, size_t max);
/* C++ names demangled (the default) or not. */
void sym_set_demangle(struct symtab *st, int on);
int sym_srcline(struct symtab *st, uint64_t ip, const char **file, int *line);

#endif
