/* SPDX-License-Identifier: GPL-2.0 */
/* The ELF header of an x86-64 core file, for the tests that write one. */
#ifndef ITRACE_TESTS_ELFCORE_H
#define ITRACE_TESTS_ELFCORE_H

#include <elf.h>
#include <string.h>

/*
 * elfcore_ehdr() - fill @eh for an ET_CORE file of @phnum program headers
 * that follow it directly (e_phoff = sizeof(*eh)).
 */
static inline void elfcore_ehdr(Elf64_Ehdr *eh, unsigned int phnum)
{
	memset(eh, 0, sizeof(*eh));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_CORE;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = phnum;
}

#endif
