// SPDX-License-Identifier: GPL-2.0
/*
 * Address filters (record --filter) in perf record's syntax
 * (tools/perf/Documentation/perf-record.txt, --filter):
 *
 *	filter|start|stop|tracestop START[/SIZE] [@FILE]
 *
 * several separated by commas or white space.  START and SIZE are numbers
 * or symbol names (NAME #N: the Nth symbol of that name in address order;
 * #0, #g, #G: the global one; '*': the whole file); a symbol as START
 * without SIZE stands for the symbol's extent.  Without @FILE the range is
 * in the kernel (addresses, /proc/kallsyms names).
 *
 * The kernel (perf_event_parse_addr_filter()) takes FILE's ranges as file
 * offsets and maps them onto every mapping of the file, so a symbol's
 * address is turned into the offset in the file of the segment that holds
 * it.  Intel PT supports ranges only ("filter", and "tracestop", the
 * kernel's "stop" with a size); "start" and "stop" single addresses are
 * refused here with a message, as the driver would refuse them.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filter.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

struct elf_sym {
	uint64_t	addr, size;
	bool		global;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* "name" or "name@VERSION" / "name@@VERSION" */
static bool name_is(const char *sym, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(sym, want, n) && (sym[n] == 0 || sym[n] == '@');
}

/*
 * Every symbol named name in path (.symtab, else .dynsym), sorted by
 * address; *nr of them.  Returns the array (malloc'd) or NULL with err.
 */
static struct elf_sym *find_syms_of(Elf *elf, const char *name, size_t *nr, bool objects)
{
	Elf_Scn *scn = NULL;
	struct elf_sym *v = NULL;
	int pass;

	*nr = 0;
	for (pass = 0; pass < 2 && !*nr; pass++) {
		Elf64_Word want = pass ? SHT_DYNSYM : SHT_SYMTAB;

		scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;
			size_t i, cnt;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want || !sh.sh_entsize)
				continue;
			data = elf_getdata(scn, NULL);
			if (!data)
				continue;
			cnt = sh.sh_size / sh.sh_entsize;
			for (i = 0; i < cnt; i++) {
				GElf_Sym s;
				const char *sn;
				struct elf_sym *nv;
				int type;

				if (!gelf_getsym(data, i, &s) || s.st_shndx == SHN_UNDEF ||
				    !s.st_value)
					continue;
				type = GELF_ST_TYPE(s.st_info);
				if (objects ? type != STT_OBJECT && type != STT_NOTYPE :
				    type != STT_FUNC && type != STT_NOTYPE && type != STT_GNU_IFUNC)
					continue;
				sn = elf_strptr(elf, sh.sh_link, s.st_name);
				if (!sn || !name_is(sn, name))
					continue;
				nv = realloc(v, (*nr + 1) * sizeof(*v));
				if (!nv) {
					free(v);
					*nr = 0;
					return NULL;
				}
				v = nv;
				v[*nr].addr = s.st_value;
				v[*nr].size = s.st_size;
				v[*nr].global = GELF_ST_BIND(s.st_info) != STB_LOCAL;
				(*nr)++;
			}
		}
	}
	if (*nr > 1)
		qsort(v, *nr, sizeof(*v), cmp_sym);
	return v;
}

/* Code symbols (functions) named name. */
static struct elf_sym *find_syms(Elf *elf, const char *name, size_t *nr)
{
	return find_syms_of(elf, name, nr, false);
}

/* The file offset of vaddr: the PT_LOAD segment that holds it. */
static int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -1;
}

/* Executable segments: [*lo, *hi) in file offsets. */
static int exec_extent(Elf *elf, uint64_t *lo, uint64_t *hi)
{
	size_t i, n;

	*lo = UINT64_MAX;
	*hi = 0;
	if (elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (ph.p_offset < *lo)
			*lo = ph.p_offset;
		if (ph.p_offset + ph.p_filesz > *hi)
			*hi = ph.p_offset + ph.p_filesz;
	}
	return *hi > *lo ? 0 : -1;
}

/* sel: -1 unique, 0 global, N the Nth in address order */
static int pick(const char *path, const char *name, int sel, struct elf_sym *v, size_t nr,
		struct elf_sym *out, char *err, size_t errlen)
{
	size_t i, g = 0, gi = 0;

	if (!nr)
		return fail(err, errlen, "%s: no symbol %s", path, name);
	if (sel > 0) {
		if ((size_t)sel > nr)
			return fail(err, errlen, "%s: %s #%d: there are only %zu symbols %s",
				    path, name, sel, nr, name);
		*out = v[sel - 1];
		return 0;
	}
	for (i = 0; i < nr; i++)
		if (v[i].global) {
			g++;
			gi = i;
		}
	if (sel == 0) {
		if (g != 1)
			return fail(err, errlen, "%s: %zu global symbols %s", path, g, name);
		*out = v[gi];
		return 0;
	}
	/* the same symbol may be in .symtab twice (an alias): one address */
	for (i = 1; i < nr; i++)
		if (v[i].addr != v[0].addr)
			return fail(err, errlen,
				    "%s: %zu symbols %s: say which with %s #N (N-th in address order) or %s #g (the global one)",
				    path, nr, name, name, name);
	*out = v[0];
	return 0;
}

/* A symbol's extent when it has no size: up to the next symbol. */
static uint64_t next_sym_after(Elf *elf, uint64_t addr)
{
	Elf_Scn *scn = NULL;
	uint64_t best = UINT64_MAX;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, cnt;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		cnt = data ? sh.sh_size / sh.sh_entsize : 0;
		for (i = 0; i < cnt; i++) {
			GElf_Sym s;

			if (gelf_getsym(data, i, &s) && s.st_shndx != SHN_UNDEF &&
			    s.st_value > addr && s.st_value < best)
				best = s.st_value;
		}
	}
	return best;
}

/* "name", "name #N", "name#g": split off the selector */
static int split_sel(char *name, int *sel, char *err, size_t errlen)
{
	char *h = strchr(name, '#'), *end;
	long n;

	*sel = -1;
	if (!h)
		return 0;
	*h++ = 0;
	while (name[0] && name[strlen(name) - 1] == ' ')
		name[strlen(name) - 1] = 0;
	if (!strcmp(h, "g") || !strcmp(h, "G") || !strcmp(h, "0")) {
		*sel = 0;
		return 0;
	}
	n = strtol(h, &end, 10);
	if (*end || n < 1 || n > 1000000)
		return fail(err, errlen, "bad symbol index #%s (a number from 1, or g)", h);
	*sel = n;
	return 0;
}

static int is_number(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-')
		return 0;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !*end && !errno;
}

struct elf_file {
	int	fd;
	Elf	*elf;
	uint64_t size;
};

static int elf_open(const char *path, struct elf_file *ef, char *err, size_t errlen)
{
	GElf_Ehdr eh;
	struct stat st;

	elf_version(EV_CURRENT);
	ef->elf = NULL;
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(ef->fd, &st) || !S_ISREG(st.st_mode)) {
		close(ef->fd);
		return fail(err, errlen, "%s: not a regular file", path);
	}
	ef->size = st.st_size;
	ef->elf = elf_begin(ef->fd, ELF_C_READ, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF || !gelf_getehdr(ef->elf, &eh)) {
		if (ef->elf)
			elf_end(ef->elf);
		close(ef->fd);
		return fail(err, errlen, "%s: not an ELF file", path);
	}
	return 0;
}

static void elf_close(struct elf_file *ef)
{
	elf_end(ef->elf);
	close(ef->fd);
}

static int symbol_vaddr(const char *path, const char *name, uint64_t *vaddr, uint64_t *size,
			int *pie, bool data, char *err, size_t errlen)
{
	struct elf_file ef;
	struct elf_sym *v, s;
	char *nm = strdup(name);
	size_t nr;
	GElf_Ehdr eh;
	int sel, ret = -1;

	if (!nm)
		return fail(err, errlen, "out of memory");
	if (split_sel(nm, &sel, err, errlen) || elf_open(path, &ef, err, errlen)) {
		free(nm);
		return -1;
	}
	v = find_syms_of(ef.elf, nm, &nr, data);
	if (!pick(path, nm, sel, v, nr, &s, err, errlen)) {
		*vaddr = s.addr;
		*size = s.size;
		*pie = gelf_getehdr(ef.elf, &eh) && eh.e_type == ET_DYN;
		ret = 0;
	}
	free(v);
	free(nm);
	elf_close(&ef);
	return ret;
}

int elf_symbol_vaddr(const char *path, const char *name, uint64_t *vaddr, uint64_t *size,
		     int *pie, char *err, size_t errlen)
{
	return symbol_vaddr(path, name, vaddr, size, pie, false, err, errlen);
}

int elf_data_symbol_vaddr(const char *path, const char *name, uint64_t *vaddr, uint64_t *size,
			  int *pie, char *err, size_t errlen)
{
	return symbol_vaddr(path, name, vaddr, size, pie, true, err, errlen);
}

/* START (and SIZE) in a file: offsets.  start_is_sym tells if SIZE may be omitted. */
static int resolve_file(struct addr_filter *f, const char *start, const char *size,
			char *err, size_t errlen)
{
	struct elf_file ef;
	struct elf_sym *v = NULL, s;
	uint64_t num, end, lo, hi;
	char *nm = NULL;
	size_t nr;
	int sel, ret = -1;

	if (elf_open(f->file, &ef, err, errlen))
		return -1;
	if (!strcmp(start, "*")) {
		if (size) {
			fail(err, errlen, "%s: '*' takes no size", f->what);
			goto out;
		}
		if (exec_extent(ef.elf, &lo, &hi)) {
			fail(err, errlen, "%s: no executable segment", f->file);
			goto out;
		}
		f->offset = lo;
		f->size = hi - lo;
		ret = 0;
		goto out;
	}
	if (is_number(start, &num)) {
		f->offset = num;
		if (!size) {
			fail(err, errlen,
			     "%s: a range needs a size (START/SIZE) when START is a number",
			     f->what);
			goto out;
		}
	} else {
		nm = strdup(start);
		if (!nm || split_sel(nm, &sel, err, errlen))
			goto out;
		v = find_syms(ef.elf, nm, &nr);
		if (pick(f->file, nm, sel, v, nr, &s, err, errlen))
			goto out;
		if (vaddr_to_offset(ef.elf, s.addr, &f->offset)) {
			fail(err, errlen, "%s: symbol %s at 0x%llx is in no loaded segment",
			     f->file, nm, (unsigned long long)s.addr);
			goto out;
		}
		if (!s.size) {
			end = next_sym_after(ef.elf, s.addr);
			s.size = end == UINT64_MAX ? 0 : end - s.addr;
		}
		f->size = s.size;
		free(v);
		v = NULL;
		free(nm);
		nm = NULL;
	}
	if (size) {
		if (is_number(size, &num)) {
			f->size = num;
		} else {
			/* SIZE a symbol: up to that symbol's end */
			nm = strdup(size);
			if (!nm || split_sel(nm, &sel, err, errlen))
				goto out;
			v = find_syms(ef.elf, nm, &nr);
			if (pick(f->file, nm, sel, v, nr, &s, err, errlen))
				goto out;
			if (vaddr_to_offset(ef.elf, s.addr, &end)) {
				fail(err, errlen, "%s: symbol %s is in no loaded segment",
				     f->file, nm);
				goto out;
			}
			if (end + s.size <= f->offset) {
				fail(err, errlen, "%s: %s ends before the start", f->what, nm);
				goto out;
			}
			f->size = end + s.size - f->offset;
		}
	}
	if (!f->size) {
		fail(err, errlen, "%s: the range is empty (size 0)", f->what);
		goto out;
	}
	if (f->offset >= ef.size || f->size > ef.size - f->offset) {
		fail(err, errlen, "%s: 0x%llx/0x%llx goes beyond the end of %s (%llu bytes)",
		     f->what, (unsigned long long)f->offset, (unsigned long long)f->size, f->file,
		     (unsigned long long)ef.size);
		goto out;
	}
	ret = 0;
out:
	free(v);
	free(nm);
	elf_close(&ef);
	return ret;
}

/* A kernel symbol from /proc/kallsyms: address, and the distance to the next. */
static int kernel_symbol(const char *name, uint64_t *addr, uint64_t *size, char *err,
			 size_t errlen)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long long a, best = 0;
	char line[512], t, n[256];
	int found = 0;

	if (!f)
		return fail(err, errlen, "/proc/kallsyms: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &t, n) != 3)
			continue;
		if (found == 1 && a > *addr) {
			best = a;
			found = 2;
			break;
		}
		if (!found && !strcmp(n, name) && a) {
			*addr = a;
			found = 1;
		}
	}
	fclose(f);
	if (!found)
		return fail(err, errlen,
			    "no kernel symbol %s in /proc/kallsyms (%s)", name,
			    "or its addresses are hidden: kptr_restrict");
	*size = found == 2 ? best - *addr : 0;
	return 0;
}

static int resolve_kernel(struct addr_filter *f, const char *start, const char *size,
			  char *err, size_t errlen)
{
	uint64_t num;

	if (is_number(start, &num)) {
		f->offset = num;
		f->size = 0;
	} else if (kernel_symbol(start, &f->offset, &f->size, err, errlen)) {
		return -1;
	}
	if (size && !is_number(size, &f->size))
		return fail(err, errlen, "%s: a kernel range's size must be a number", f->what);
	if (!f->size)
		return fail(err, errlen, "%s: the range is empty (give START/SIZE)", f->what);
	return 0;
}

/* An executable's path: as given if it has a slash, else from PATH. */
char *find_file(const char *name)
{
	const char *path = getenv("PATH");
	char *p, *dir, *save = NULL, *copy, *res = NULL;

	if (strchr(name, '/'))
		return realpath(name, NULL);
	copy = strdup(path ? path : "/usr/bin:/bin");
	if (!copy)
		return NULL;
	for (dir = strtok_r(copy, ":", &save); dir && !res; dir = strtok_r(NULL, ":", &save)) {
		if (asprintf(&p, "%s/%s", *dir ? dir : ".", name) < 0)
			break;
		if (!access(p, R_OK))
			res = realpath(p, NULL);
		free(p);
	}
	free(copy);
	return res ? res : realpath(name, NULL);
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* A token up to one of stop (or white space): malloc'd */
static char *token(const char **s, const char *stop)
{
	const char *b = *s, *e = b;
	char *t;

	while (*e && !strchr(stop, *e) && *e != ' ' && *e != '\t')
		e++;
	/* "name #2": the selector belongs to the symbol */
	if (*skip_ws(e) == '#' && *e != '#') {
		e = skip_ws(e);
		while (*e && !strchr(stop, *e) && *e != ' ' && *e != '\t')
			e++;
	}
	t = strndup(b, e - b);
	*s = e;
	return t;
}

int addr_filters_parse(const char *spec, struct addr_filters *fs, char *err, size_t errlen)
{
	const char *s = spec;

	memset(fs, 0, sizeof(*fs));
	for (;;) {
		struct addr_filter f = { 0 }, *nf;
		const char *b;
		char *act = NULL, *start = NULL, *size = NULL, *file = NULL;
		int r;

		s = skip_ws(s);
		while (*s == ',' || *s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		b = s;
		act = token(&s, ",/@");
		s = skip_ws(s);
		if (!strcmp(act, "filter")) {
			f.action = FILTER_FILTER;
		} else if (!strcmp(act, "tracestop")) {
			f.action = FILTER_TRACESTOP;
		} else if (!strcmp(act, "start") || !strcmp(act, "stop")) {
			free(act);
			addr_filters_free(fs);
			return fail(err, errlen,
				    "--filter: '%s': intel_pt takes address ranges only: 'filter' (trace inside) and 'tracestop' (stop on entry), not single-address start/stop",
				    b);
		} else {
			fail(err, errlen,
			     "--filter: '%s': expected filter|tracestop START[/SIZE] [@FILE]", b);
			free(act);
			addr_filters_free(fs);
			return -1;
		}
		free(act);
		start = token(&s, ",/@");
		s = skip_ws(s);
		if (*s == '/') {
			s = skip_ws(s + 1);
			size = token(&s, ",@");
			s = skip_ws(s);
		}
		if (*s == '@') {
			s = skip_ws(s + 1);
			file = token(&s, ",");
		}
		f.what = strndup(b, s - b);
		if (!start || !*start || (size && !*size) || (file && !*file)) {
			fail(err, errlen,
			     "--filter: '%s': expected filter|tracestop START[/SIZE] [@FILE]",
			     f.what ? f.what : b);
			r = -1;
		} else if (file) {
			f.file = find_file(file);
			if (!f.file)
				r = fail(err, errlen, "--filter: '%s': %s: %s", f.what, file,
					 strerror(errno));
			else
				r = resolve_file(&f, start, size, err, errlen);
		} else {
			r = resolve_kernel(&f, start, size, err, errlen);
		}
		free(start);
		free(size);
		free(file);
		if (r) {
			char tmp[512];

			if (strncmp(err, "--filter", 8)) {
				snprintf(tmp, sizeof(tmp), "--filter: %s", err);
				snprintf(err, errlen, "%s", tmp);
			}
			free(f.file);
			free(f.what);
			addr_filters_free(fs);
			return -1;
		}
		nf = realloc(fs->f, (fs->nr + 1) * sizeof(*nf));
		if (!nf) {
			free(f.file);
			free(f.what);
			addr_filters_free(fs);
			return fail(err, errlen, "out of memory");
		}
		fs->f = nf;
		fs->f[fs->nr++] = f;
	}
	if (!fs->nr)
		return fail(err, errlen, "--filter: no filter in '%s'", spec);
	return 0;
}

char *addr_filters_kernel(const struct addr_filters *fs)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	for (i = 0; i < fs->nr; i++) {
		const struct addr_filter *f = &fs->f[i];

		fprintf(m, "%s%s 0x%llx/0x%llx%s%s", i ? "," : "",
			f->action == FILTER_TRACESTOP ? "stop" : "filter",
			(unsigned long long)f->offset, (unsigned long long)f->size,
			f->file ? "@" : "", f->file ? f->file : "");
	}
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

void addr_filters_free(struct addr_filters *fs)
{
	size_t i;

	for (i = 0; i < fs->nr; i++) {
		free(fs->f[i].file);
		free(fs->f[i].what);
	}
	free(fs->f);
	memset(fs, 0, sizeof(*fs));
}
