// SPDX-License-Identifier: GPL-2.0
/* Symbols of the traced address space, through elfutils' libdwfl. */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>

#include "sym.h"

#define NR_CACHE	4096

struct ksym {
	uint64_t	addr;
	char		*name;
};

struct symtab {
	Dwfl		*dwfl;
	char		**paths;	/* files already reported */
	size_t		nr_paths;
	struct ksym	*ksyms;		/* kallsyms text symbols, by address */
	size_t		nr_ksyms;
	struct sym_info	cache[NR_CACHE];	/* direct mapped by ip */
	uint64_t	cache_ip[NR_CACHE];
};

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

struct symtab *sym_new(void)
{
	struct symtab *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->dwfl = dwfl_begin(&callbacks);
	if (!st->dwfl) {
		free(st);
		return NULL;
	}
	dwfl_report_begin(st->dwfl);
	memset(st->cache_ip, 0xff, sizeof(st->cache_ip));
	return st;
}

/*
 * Load bias of an ET_DYN file from one mapping: the PT_LOAD segment holding
 * file offset pgoff gives vaddr = p_vaddr + (pgoff - p_offset), mapped at addr.
 */
static int load_bias(const char *path, uint64_t addr, uint64_t pgoff,
		     uint64_t *bias, int *is_dyn)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;
	GElf_Ehdr eh;
	size_t i, n;
	Elf *elf;

	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n))
		goto out;
	*is_dyn = eh.e_type == ET_DYN;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (pgoff + 0x1000 > ph.p_offset && pgoff < ph.p_offset + ph.p_filesz) {
			*bias = addr - ph.p_vaddr - pgoff + ph.p_offset;
			ret = 0;
			break;
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

int sym_add_mapping(struct symtab *st, const char *name, const char *path,
		    uint64_t addr, uint64_t len, uint64_t pgoff)
{
	uint64_t bias = 0;
	int is_dyn = 0;
	char **np;
	size_t i;

	(void)len;
	for (i = 0; i < st->nr_paths; i++)
		if (!strcmp(st->paths[i], path))
			return 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	if (load_bias(path, addr, pgoff, &bias, &is_dyn))
		return -1;
	if (!dwfl_report_elf(st->dwfl, name, path, -1, is_dyn ? bias : 0, true))
		return -1;
	np = realloc(st->paths, (st->nr_paths + 1) * sizeof(*np));
	if (!np)
		return -1;
	st->paths = np;
	st->paths[st->nr_paths++] = strdup(path);
	return 0;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int sym_add_kallsyms(struct symtab *st, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], name[256], type;
	unsigned long long addr;
	struct ksym *n;
	size_t cap = st->nr_ksyms;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		/* text symbols, global, local or weak */
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (st->nr_ksyms == cap) {
			cap = cap ? 2 * cap : 4096;
			n = realloc(st->ksyms, cap * sizeof(*n));
			if (!n)
				break;
			st->ksyms = n;
		}
		st->ksyms[st->nr_ksyms].addr = addr;
		st->ksyms[st->nr_ksyms].name = strdup(name);
		if (!st->ksyms[st->nr_ksyms].name)
			break;
		st->nr_ksyms++;
	}
	fclose(f);
	qsort(st->ksyms, st->nr_ksyms, sizeof(*st->ksyms), cmp_ksym);
	return st->nr_ksyms ? 0 : -1;
}

/*
 * The kallsyms symbol holding ip: the last one at or below it; it ends at
 * the next higher address (the last one is taken to be 1 byte long).
 */
static int ksym_lookup(struct symtab *st, uint64_t ip, struct sym_info *si)
{
	size_t lo = 0, hi = st->nr_ksyms, i;

	if (!st->nr_ksyms || ip < st->ksyms[0].addr)
		return -1;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->ksyms[mid].addr <= ip)
			lo = mid;
		else
			hi = mid;
	}
	si->name = st->ksyms[lo].name;
	si->module = "[kernel.kallsyms]";
	si->start = st->ksyms[lo].addr;
	si->end = si->start + 1;
	for (i = lo + 1; i < st->nr_ksyms; i++)
		if (st->ksyms[i].addr > si->start) {
			si->end = st->ksyms[i].addr;
			break;
		}
	if (si->end <= ip)
		si->end = ip + 1;
	return 0;
}

void sym_done(struct symtab *st)
{
	dwfl_report_end(st->dwfl, NULL, NULL);
}

void sym_lookup(struct symtab *st, uint64_t ip, struct sym_info *si)
{
	unsigned int h = (ip ^ (ip >> 12)) % NR_CACHE;
	Dwfl_Module *mod;
	GElf_Off off;
	GElf_Sym sym;
	const char *name = NULL, *mname = NULL;

	if (st->cache_ip[h] == ip) {
		*si = st->cache[h];
		return;
	}
	si->start = ip;
	si->end = ip + 1;
	si->name = NULL;
	si->module = "?";
	mod = dwfl_addrmodule(st->dwfl, ip);
	if (!mod && !ksym_lookup(st, ip, si)) {
		st->cache_ip[h] = ip;
		st->cache[h] = *si;
		return;
	}
	if (mod) {
		mname = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
		if (mname)
			si->module = mname;
		name = dwfl_module_addrinfo(mod, ip, &off, &sym, NULL, NULL, NULL);
	}
	if (!name && mod) {
		/* no symbol (PLT stubs...): name the section instead */
		Dwarf_Addr a = ip, bias;
		Elf_Scn *scn = dwfl_module_address_section(mod, &a, &bias);
		Elf *elf = dwfl_module_getelf(mod, &bias);
		size_t shstrndx;
		GElf_Shdr sh;

		if (scn && elf && gelf_getshdr(scn, &sh) && !elf_getshdrstrndx(elf, &shstrndx)) {
			si->name = elf_strptr(elf, shstrndx, sh.sh_name);
			si->start = ip - a;
			si->end = si->start + sh.sh_size;
			if (si->end <= ip)
				si->end = ip + 1;
		}
	}
	if (name) {
		si->name = name;
		si->start = ip - off;
		si->end = sym.st_size ? si->start + sym.st_size : ip + 1;
		if (si->end <= ip)
			si->end = ip + 1;
	}
	st->cache_ip[h] = ip;
	st->cache[h] = *si;
}

int sym_name_len(const char *name)
{
	const char *at = strchr(name, '@');

	return at && at != name ? (int)(at - name) : (int)strlen(name);
}

int sym_srcline(struct symtab *st, uint64_t ip, const char **file, int *line)
{
	Dwfl_Module *mod = dwfl_addrmodule(st->dwfl, ip);
	Dwfl_Line *l = mod ? dwfl_module_getsrc(mod, ip) : NULL;
	const char *f = l ? dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL) : NULL;

	if (!f || *line <= 0)
		return -1;
	*file = f;
	return 0;
}

void sym_free(struct symtab *st)
{
	size_t i;

	if (!st)
		return;
	dwfl_end(st->dwfl);
	for (i = 0; i < st->nr_paths; i++)
		free(st->paths[i]);
	free(st->paths);
	for (i = 0; i < st->nr_ksyms; i++)
		free(st->ksyms[i].name);
	free(st->ksyms);
	free(st);
}
