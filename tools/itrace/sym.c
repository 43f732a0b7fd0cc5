// SPDX-License-Identifier: GPL-2.0
/* Symbols of the traced address space, through elfutils' libdwfl. */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <libiberty/demangle.h>
#include <search.h>

#include "itrace.h"
#include "sym.h"

#define NR_CACHE	4096

struct ksym {
	uint64_t	addr;
	char		*name;
};

/* Synthesized PLT entry names of one module: "printf@plt". */
struct plt_ent {
	uint64_t	addr;		/* ELF address of the entry */
	uint64_t	size;		/* 16; 8 in a .plt.got without IBT */
	char		*name;
};

struct plt_tab {
	struct plt_ent	*ents;		/* sorted by addr */
	size_t		nr;
};

/*
 * The allocated sections of one module, as dwfl_module_address_section()
 * keeps them (by address, then in file order), without the DWARF that it
 * loads first: that decompresses every debug section of the module.
 */
struct sec_ent {
	uint64_t	start, end;	/* run-time addresses */
	uint64_t	size;
	const char	*name;		/* in the module's ELF file */
};

/*
 * The symbol libdwfl gives for an address depends only on which of the
 * module's symbols begin at or below it and end above it, and on the
 * section it is in (elfutils, __libdwfl_addrsym()): so it is the same for
 * every address strictly between two consecutive bounds, the addresses
 * where a symbol or a section of the module begins or ends; on a bound
 * too, unless a sizeless or absolute symbol has its value there (those
 * match only where they are).  dwfl_module_addrinfo() reads the whole
 * symbol table at each call; the answer is kept per gap between bounds.
 */
struct brk_res {
	const char	*name;		/* as sym_lookup() gives it; NULL: not known yet */
	uint64_t	value, size;	/* the symbol's */
};

/* A bound; exact: the value of a sizeless or absolute symbol. */
struct brk {
	uint64_t	at;
	bool		exact;
};

/*
 * What is kept of one module: its PLT entries (plt_lookup()), its
 * sections (sec_lookup()), its bounds (brk_gap()).
 */
struct mod_tab {
	Dwfl_Module	*mod;
	struct plt_tab	plt;
	bool		have_plt;
	struct sec_ent	*ents;		/* the sections */
	size_t		nr;
	bool		have_secs;
	struct brk	*b;		/* the bounds, sorted, each once */
	struct brk_res	*res;		/* res[i]: for [b[i].at, b[i + 1].at) */
	size_t		nr_b;
	bool		have_brks;
};

/* A demangled name, by the address of the mangled one (stable in libdwfl). */
struct dname {
	const char	*mangled;
	char		*name;
};

struct symtab {
	Dwfl		*dwfl;
	struct mod_tab	*mods;
	size_t		nr_mods;
	bool		no_gaps;	/* ITRACE_NO_SYM_GAPS: libdwfl for each (tests) */
	void		*dnames;	/* tsearch() tree of struct dname */
	int		demangle;
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
	st->demangle = 1;
	st->no_gaps = !!getenv("ITRACE_NO_SYM_GAPS");
	return st;
}

void sym_set_demangle(struct symtab *st, int on)
{
	st->demangle = on;
}

static int cmp_dname(const void *a, const void *b)
{
	const struct dname *x = a, *y = b;

	return x->mangled < y->mangled ? -1 : x->mangled > y->mangled;
}

/* The C++ demangled form of name, or name itself. */
static const char *demangled(struct symtab *st, const char *name)
{
	struct dname key = { .mangled = name }, *d, **found;
	char *m;
	int n;

	if (!st->demangle || name[0] != '_' || name[1] != 'Z')
		return name;
	found = tfind(&key, &st->dnames, cmp_dname);
	if (found)
		return (*found)->name;
	d = calloc(1, sizeof(*d));
	if (!d)
		return name;
	n = sym_name_len(name);
	m = strndup(name, n);
	d->mangled = name;
	/* libiberty's demangler, as binutils and perf show C++ names */
	d->name = m ? cplus_demangle(m, DMGL_PARAMS | DMGL_ANSI) : NULL;
	if (d->name && n < (int)strlen(name)) {
		/* keep the symbol version: "_ZNSo3putEc@@GLIBCXX_3.4" */
		char *v;

		if (asprintf(&v, "%s%s", d->name, name + n) >= 0) {
			free(d->name);
			d->name = v;
		}
	}
	free(m);
	if (!d->name)
		d->name = strdup(name);
	if (!d->name || !tsearch(d, &st->dnames, cmp_dname)) {
		free(d->name);
		free(d);
		return name;
	}
	return d->name;
}

static int cmp_plt(const void *a, const void *b)
{
	const struct plt_ent *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * The GOT slot an x86-64 PLT entry jumps through: the first
 * "jmp *disp32(%rip)" (ff 25, after an endbr64 and a bnd prefix if any)
 * in its n bytes.  0 if there is none.
 */
static uint64_t plt_slot(const uint8_t *p, size_t n, uint64_t addr)
{
	size_t i;
	int32_t disp;

	for (i = 0; i + 6 <= n; i++) {
		if (p[i] != 0xff || p[i + 1] != 0x25)
			continue;
		memcpy(&disp, p + i + 2, 4);
		return addr + i + 6 + (int64_t)disp;
	}
	return 0;
}

/*
 * The name of the symbol whose relocation writes the GOT slot at slot; an
 * IRELATIVE one (an ifunc of the file itself) has none and is named as
 * perf names it, "*ABS*+0xADDEND", in buf.
 */
static const char *slot_symbol(Elf *elf, uint64_t slot, char *buf, size_t len)
{
	Elf_Scn *rscn = NULL, *symscn;
	Elf_Data *rd, *sd;
	GElf_Shdr rsh, ssh;
	size_t i, nr;

	while ((rscn = elf_nextscn(elf, rscn))) {
		if (!gelf_getshdr(rscn, &rsh) || rsh.sh_type != SHT_RELA || !rsh.sh_entsize)
			continue;
		symscn = elf_getscn(elf, rsh.sh_link);
		rd = elf_getdata(rscn, NULL);
		if (!symscn || !rd || !gelf_getshdr(symscn, &ssh))
			continue;
		sd = elf_getdata(symscn, NULL);
		nr = rsh.sh_size / rsh.sh_entsize;
		for (i = 0; sd && i < nr; i++) {
			GElf_Rela r;
			GElf_Sym sym;

			if (!gelf_getrela(rd, i, &r) || r.r_offset != slot)
				continue;
			if (!GELF_R_SYM(r.r_info)) {
				snprintf(buf, len, "*ABS*+0x%llx", (unsigned long long)r.r_addend);
				return buf;
			}
			if (!gelf_getsym(sd, GELF_R_SYM(r.r_info), &sym))
				return NULL;
			return elf_strptr(elf, ssh.sh_link, sym.st_name);
		}
	}
	return NULL;
}

static int plt_add(struct plt_tab *t, size_t *cap, uint64_t addr, uint64_t size,
		   const char *sym)
{
	struct plt_ent *n;

	if (t->nr == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		n = realloc(t->ents, *cap * sizeof(*n));
		if (!n)
			return -1;
		t->ents = n;
	}
	t->ents[t->nr].addr = addr;
	t->ents[t->nr].size = size;
	if (asprintf(&t->ents[t->nr].name, "%.*s@plt", sym_name_len(sym), sym) < 0)
		return -1;
	t->nr++;
	return 0;
}

/* Name every entry of .plt, .plt.sec and .plt.got by its relocation's symbol. */
static void plt_build(struct plt_tab *t, Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, cap = 0;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name, *sym;
		char abs[32];
		Elf_Data *data;
		uint64_t a, slot, step;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strcmp(name, ".plt") && strcmp(name, ".plt.sec") &&
			      strcmp(name, ".plt.got")))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		/* 16-byte entries; .plt.got has 8-byte ones without IBT */
		step = sh.sh_entsize == 8 ? 8 : 16;
		for (a = 0; a + step <= data->d_size; a += step) {
			slot = plt_slot((const uint8_t *)data->d_buf + a, step, sh.sh_addr + a);
			sym = slot ? slot_symbol(elf, slot, abs, sizeof(abs)) : NULL;
			/* a name lost would change the output silently */
			if (sym && *sym && plt_add(t, &cap, sh.sh_addr + a, step, sym))
				itrace_oom();
		}
	}
	if (t->nr)
		qsort(t->ents, t->nr, sizeof(*t->ents), cmp_plt);
}

/* mod's entry in st->mods, made (empty) if it has none. */
static struct mod_tab *mod_tab(struct symtab *st, Dwfl_Module *mod)
{
	struct mod_tab *t;
	size_t i;

	for (i = 0; i < st->nr_mods; i++)
		if (st->mods[i].mod == mod)
			return &st->mods[i];
	t = realloc(st->mods, (st->nr_mods + 1) * sizeof(*t));
	if (!t)
		itrace_oom();
	st->mods = t;
	t = &st->mods[st->nr_mods++];
	memset(t, 0, sizeof(*t));
	t->mod = mod;
	return t;
}

/* The PLT entry holding ip (a run-time address) in mod: its name and start. */
static int plt_lookup(struct symtab *st, Dwfl_Module *mod, uint64_t ip, struct sym_info *si)
{
	struct mod_tab *m;
	struct plt_tab *t;
	GElf_Addr bias;
	Elf *elf;
	size_t lo, hi;

	elf = dwfl_module_getelf(mod, &bias);
	if (!elf)
		return -1;
	m = mod_tab(st, mod);
	t = &m->plt;
	if (!m->have_plt) {
		m->have_plt = true;
		plt_build(t, elf);
	}
	ip -= bias;
	lo = 0;
	hi = t->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->ents[mid].addr + t->ents[mid].size <= ip) {
			lo = mid + 1;
		} else if (t->ents[mid].addr > ip) {
			hi = mid;
		} else {
			si->name = t->ents[mid].name;
			si->start = t->ents[mid].addr + bias;
			si->end = si->start + t->ents[mid].size;
			return 0;
		}
	}
	return -1;
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
	st->paths[st->nr_paths] = strdup(path);
	if (!st->paths[st->nr_paths])
		return -1;
	st->nr_paths++;
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

static int cmp_sec(const void *a, const void *b)
{
	const struct sec_ent *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void sec_build(struct mod_tab *t, Dwfl_Module *mod)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;
	size_t shstrndx, cap = 0;
	GElf_Shdr sh;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) < 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		struct sec_ent *e;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			break;
		if (!(sh.sh_flags & SHF_ALLOC))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			break;
		if (t->nr == cap) {
			cap = cap ? 2 * cap : 32;
			e = realloc(t->ents, cap * sizeof(*e));
			if (!e)
				itrace_oom();
			t->ents = e;
		}
		e = &t->ents[t->nr++];
		e->start = sh.sh_addr + bias;
		e->end = e->start + sh.sh_size;
		e->size = sh.sh_size;
		e->name = name;
	}
	/* glibc's qsort() merges: sections at one address stay in file order */
	if (t->nr)
		qsort(t->ents, t->nr, sizeof(*t->ents), cmp_sec);
}

/*
 * No symbol at ip in mod: the section holding it, found as libdwfl's
 * dwfl_module_address_section() finds it (a section's end counts as in
 * it, unless the next one starts there).
 */
static int sec_lookup(struct symtab *st, Dwfl_Module *mod, uint64_t ip, struct sym_info *si)
{
	struct mod_tab *t = mod_tab(st, mod);
	size_t i, lo = 0, hi;

	if (!t->have_secs) {
		t->have_secs = true;
		sec_build(t, mod);
	}
	hi = t->nr;
	while (lo < hi) {
		i = (lo + hi) / 2;
		if (ip < t->ents[i].start) {
			hi = i;
		} else if (ip > t->ents[i].end) {
			lo = i + 1;
		} else {
			if (ip == t->ents[i].end && i + 1 < t->nr && ip == t->ents[i + 1].start)
				i++;
			si->name = t->ents[i].name;
			si->start = t->ents[i].start;
			si->end = si->start + t->ents[i].size;
			if (si->end <= ip)
				si->end = ip + 1;
			return 0;
		}
	}
	return -1;
}

static int cmp_brk(const void *a, const void *b)
{
	const struct brk *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

static void brk_add(struct mod_tab *t, size_t *cap, uint64_t at, bool exact)
{
	t->b = itrace_grow(t->b, cap, t->nr_b, sizeof(*t->b), 1024);
	t->b[t->nr_b].at = at;
	t->b[t->nr_b++].exact = exact;
}

/* The bounds of the sections of elf (at bias). */
static void brk_sections(struct mod_tab *t, size_t *cap, Elf *elf, GElf_Addr bias)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) && gelf_getshdr(scn, &sh)) {
		brk_add(t, cap, sh.sh_addr + bias, false);
		brk_add(t, cap, sh.sh_addr + bias + sh.sh_size, false);
	}
}

/*
 * mod's bounds: its symbols' values and ends, the sections of its files
 * (the main one, whose sections libdwfl finds an address in, and those
 * of the symbol tables).
 */
static void brk_build(struct mod_tab *t, Dwfl_Module *mod)
{
	int i, nr = dwfl_module_getsymtab(mod);
	GElf_Addr bias;
	Elf *last = dwfl_module_getelf(mod, &bias);
	size_t cap = 0, k, n;

	if (last)
		brk_sections(t, &cap, last, bias);
	for (i = 1; i < nr; i++) {
		GElf_Addr addr;
		GElf_Word shndx;
		GElf_Sym sym;
		Elf *elf = NULL;

		if (!dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, &bias))
			continue;
		/* a table's symbols come in a row; a bound added twice is kept once */
		if (elf && elf != last) {
			last = elf;
			brk_sections(t, &cap, elf, bias);
		}
		brk_add(t, &cap, addr, !sym.st_size || shndx >= SHN_LORESERVE);
		if (sym.st_size)
			brk_add(t, &cap, addr + sym.st_size, false);
	}
	if (!t->nr_b)
		return;
	qsort(t->b, t->nr_b, sizeof(*t->b), cmp_brk);
	for (k = 1, n = 1; k < t->nr_b; k++) {
		if (t->b[k].at == t->b[n - 1].at)
			t->b[n - 1].exact |= t->b[k].exact;
		else
			t->b[n++] = t->b[k];
	}
	t->nr_b = n;
	t->res = calloc(n, sizeof(*t->res));
	if (!t->res)
		itrace_oom();
}

/*
 * The gap of mod's bounds that holds ip (at its first address, unless
 * that bound is exact), NULL if none.
 */
static struct brk_res *brk_gap(struct symtab *st, Dwfl_Module *mod, uint64_t ip)
{
	struct mod_tab *t = mod_tab(st, mod);
	size_t i, lo = 0, hi;

	if (!t->have_brks) {
		t->have_brks = true;
		brk_build(t, mod);
	}
	if (!t->nr_b || ip < t->b[0].at || ip >= t->b[t->nr_b - 1].at)
		return NULL;
	/* the last bound at or below ip */
	hi = t->nr_b;
	while (hi - lo > 1) {
		i = lo + (hi - lo) / 2;
		if (t->b[i].at <= ip)
			lo = i;
		else
			hi = i;
	}
	return t->b[lo].at == ip && t->b[lo].exact ? NULL : &t->res[lo];
}

struct find_arg {
	const char	*name;
	uint64_t	addr;
	int		found;		/* 1: one address, -1: more than one */
};

static void found(struct find_arg *a, uint64_t addr)
{
	if (a->found && a->addr != addr)
		a->found = -1;
	else if (!a->found)
		a->found = 1;
	a->addr = addr;
}

static int find_in_module(Dwfl_Module *mod, void **userdata, const char *mname,
			  Dwarf_Addr base, void *arg)
{
	struct find_arg *a = arg;
	int i, nr = dwfl_module_getsymtab(mod);
	const char *name;
	GElf_Addr addr;
	GElf_Sym sym;

	(void)userdata;
	(void)mname;
	(void)base;
	for (i = 1; i < nr; i++) {
		name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		if (name && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
		    GELF_ST_BIND(sym.st_info) == STB_GLOBAL && (addr >> 63) &&
		    !strcmp(name, a->name))
			found(a, addr);
	}
	return DWARF_CB_OK;
}

int sym_find_kernel(struct symtab *st, const char *name, uint64_t *addr)
{
	struct find_arg a = { .name = name };
	size_t i;

	for (i = 0; i < st->nr_ksyms; i++)
		if (!strcmp(st->ksyms[i].name, name))
			found(&a, st->ksyms[i].addr);
	dwfl_getmodules(st->dwfl, find_in_module, &a, 0);
	if (a.found != 1)
		return -1;
	*addr = a.addr;
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
	struct brk_res *gap = NULL;

	/*
	 * An empty slot has no module (every lookup sets one, "?" at
	 * least): its cache_ip, ~0, is also an address a crafted trace can
	 * ask for.
	 */
	if (st->cache_ip[h] == ip && st->cache[h].module) {
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
		gap = st->no_gaps ? NULL : brk_gap(st, mod, ip);
		if (gap && gap->name) {
			si->name = gap->name;
			si->start = gap->value;
			si->end = gap->size ? gap->value + gap->size : ip + 1;
			if (si->end <= ip)
				si->end = ip + 1;
			st->cache_ip[h] = ip;
			st->cache[h] = *si;
			return;
		}
		name = dwfl_module_addrinfo(mod, ip, &off, &sym, NULL, NULL, NULL);
	}
	if (!name && mod && !plt_lookup(st, mod, ip, si)) {
		st->cache_ip[h] = ip;
		st->cache[h] = *si;
		return;
	}
	if (!name && mod)
		/* no symbol (PLT stubs...): name the section instead */
		sec_lookup(st, mod, ip, si);
	if (name) {
		si->name = demangled(st, name);
		si->start = ip - off;
		si->end = sym.st_size ? si->start + sym.st_size : ip + 1;
		if (si->end <= ip)
			si->end = ip + 1;
		if (gap)
			*gap = (struct brk_res){ .name = si->name, .value = si->start,
						 .size = sym.st_size };
	}
	st->cache_ip[h] = ip;
	st->cache[h] = *si;
}

int sym_name_len(const char *name)
{
	const char *at = strchr(name, '@');

	/* "memcpy@@GLIBC_2.14" and "memcpy@GLIBC_2.2.5", not "printf@plt" */
	if (!at || at == name || !strcmp(at, "@plt"))
		return (int)strlen(name);
	return (int)(at - name);
}

int sym_build_id(const char *path, uint8_t *id, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), n = -1;
	const void *p;
	ssize_t len;
	Elf *elf;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf) {
		len = dwelf_elf_gnu_build_id(elf, &p);
		if (len > 0) {
			n = len > (ssize_t)max ? (int)max : (int)len;
			memcpy(id, p, n);
		}
		elf_end(elf);
	}
	close(fd);
	return n;
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
	for (i = 0; i < st->nr_mods; i++) {
		size_t k;

		for (k = 0; k < st->mods[i].plt.nr; k++)
			free(st->mods[i].plt.ents[k].name);
		free(st->mods[i].plt.ents);
		free(st->mods[i].ents);
		free(st->mods[i].b);
		free(st->mods[i].res);
	}
	free(st->mods);
	while (st->dnames) {
		struct dname *d = *(struct dname **)st->dnames;

		tdelete(d, &st->dnames, cmp_dname);
		free(d->name);
		free(d);
	}
	for (i = 0; i < st->nr_paths; i++)
		free(st->paths[i]);
	free(st->paths);
	for (i = 0; i < st->nr_ksyms; i++)
		free(st->ksyms[i].name);
	free(st->ksyms);
	free(st);
}
