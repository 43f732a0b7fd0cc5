// SPDX-License-Identifier: GPL-2.0
/*
 * itrace core: the last branches of every thread before a crash, from the
 * NT_ITRACE notes that RLIMIT_ITRACE puts in an ELF core dump.
 *
 * The core is read with libelf.  The address space comes from the core
 * itself: NT_FILE names the mapped files (read from their paths, under
 * --sysroot), executable PT_LOAD segments with contents (the vdso,
 * anonymous code) are read from the core.  A core without NT_FILE (other
 * writers than Linux) has its modules found by libdwfl; file text that the
 * core leaves out (gdb's gcore) is executable by the file's own headers.
 * Each thread's trace is decoded on its own with libipt; what cannot be
 * decoded (a missing file, a decode error at some trace offset) is said in
 * the report, never left out.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <elfutils/libdwfl.h>
#include <getopt.h>
#include <limits.h>
#include <intel-pt.h>
#include <linux/itrace.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/procfs.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <unistd.h>

#include "bts.h"
#include "itrace.h"
#include "json.h"
#include "sym.h"

/* Linux 6.12 + this series: RLIMIT_CORE cut the older trace (decode from its first PSB) */
#ifndef BIT
#define BIT(nr)			(1UL << (nr))
#endif
#ifndef ITRACE_NOTE_CLAMPED
#define ITRACE_NOTE_CLAMPED	BIT(3)
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#define CORE_NOTE_NAME	"CORE"	/* the owner of Linux's core notes */
#define GDB_NOTE_NAME	"GDB"	/* the owner of gdb's own notes in gcore's cores */
#define NO_PSB		"no PSB in the trace: nothing to decode"

#define CORE_DEFAULT_N	16
/* Trace decoded first, from the last PSB before it; doubled until the tail is full. */
#define CORE_WINDOW	(16 << 10)
#define MAX_STACK	4096	/* call stack depth kept */
#define NR_ERR_MSGS	4
#define MSG_LEN		256

enum ent_kind { E_INSN, E_CALL, E_RET, E_JUMP, E_JCC, E_SYSCALL, E_FAR,
		E_ERROR, E_OVERFLOW, E_RESUMED };

static const char * const ent_name[] = {
	[E_INSN] = "insn", [E_CALL] = "call", [E_RET] = "ret", [E_JUMP] = "jmp",
	[E_JCC] = "jcc", [E_SYSCALL] = "syscall", [E_FAR] = "far",
	[E_ERROR] = "error", [E_OVERFLOW] = "overflow", [E_RESUMED] = "resumed",
};

/* One line of the tail: a branch, an instruction, or a hole in the trace. */
struct ent {
	enum ent_kind	kind;
	enum ent_kind	cls;		/* E_INSN: its branch class */
	uint64_t	ip;
	uint64_t	to;		/* branch target; 0: unknown */
	uint64_t	off;		/* trace offset of an error or overflow */
	int		err;		/* E_ERROR: a walk's error (-pte_*, ITRACE_ERR_STALL) */
	const char	*msg;		/* E_ERROR: what happened, if not err */
	uint8_t		size;
	uint8_t		raw[15];
};

enum end_how { END_NONE, END_ASYNC, END_SYSCALL };

struct core_thread {
	uint32_t	tid;
	int		cursig;
	uint64_t	rip;
	bool		have_si;
	int		sig_no, sig_code;
	uint64_t	sig_addr;
	bool		has_note;
	struct itrace_note note;
	const uint8_t	*trace;
	char		bad[MSG_LEN];	/* malformed note: why */

	/* decoding */
	struct ent	*ring;
	uint64_t	nr_ents;	/* pushed, the ring keeps the last n */
	uint64_t	insns, errors;
	char		errmsg[NR_ERR_MSGS][MSG_LEN];
	bool		pend;		/* a branch waiting for its target */
	struct ent	pend_ent;
	struct pt_insn	last;
	bool		have_last;
	bool		lost_end;	/* decode errors after the last instruction */
	enum end_how	how;
	uint64_t	end_ip;
	int		walk;		/* itrace_pt_walk()'s result */
	bool		bts;		/* an intel_bts trace: records */
	uint64_t	from;		/* trace offset the decode started at */
	uint64_t	hidden;		/* branches in the dynamic linker left out */

	/* the call stack as the trace saw it: calls minus returns */
	uint64_t	stack[MAX_STACK];	/* the call instructions, outermost first */
	unsigned int	depth;			/* frames kept */
	uint64_t	dropped;		/* older frames beyond MAX_STACK */
	uint64_t	unmatched;		/* returns past the first call seen */
	uint64_t	rip_start;		/* rip: ld.so's tail stays if it crashed there */
};

/* An NT_FILE entry, or a PT_LOAD segment of a module libdwfl found */
struct core_map {
	uint64_t	start, end, pgoff;
	const char	*name;		/* the path in the process; libdwfl's: module name */
	char		*path;		/* libdwfl's: the file it read (malloc'd) */
	bool		nofile;		/* libdwfl's: a module without a file */
	bool		exec;		/* libdwfl's: an executable segment of the file */
	int		err;		/* nofile: why, an errno or 0 */
	const char	*why;		/* nofile: why, in words, or NULL */
};

struct core {
	const char	*path;
	size_t		size;		/* of the file */
	Elf		*elf;		/* libelf's view of it */
	GElf_Phdr	*ph;		/* its program headers */
	size_t		phnum;
	struct core_thread *th;
	size_t		nr_th;
	struct core_map	*maps;
	size_t		nr_maps;
	uint64_t	vdso, entry, interp;	/* AT_SYSINFO_EHDR, AT_ENTRY, AT_BASE */
	uint64_t	execfn;		/* AT_EXECFN: the program's path in its memory */
	char		**names;	/* module names of libdwfl's maps */
	size_t		nr_names;
	char		exe[PATH_MAX];	/* the program's file libdwfl was given */
	const char	*sysroot;	/* --sysroot, for libdwfl's modules */
	char		psname[17];	/* NT_PRPSINFO pr_fname */
	uint32_t	pid;		/* NT_PRPSINFO pr_pid; 0 if none */
	bool		by_gdb;		/* written by gdb's gcore (a "GDB" note) */
};

struct core_opts {
	const char	*exe;
	const char	*sysroot;
	bool		insn, json, all;
	unsigned long	n;
};

/* What the image lacks: files that could not be read. */
struct missing {
	char		*path;
	int		err;
	const char	*why;		/* instead of strerror(err) */
};

struct ctx {
	struct core		*c;
	const struct core_opts	*o;
	struct symtab		*st;
	struct itrace_image	im;
	const char		*exe;		/* module name of the program */
	const char		*interp;	/* NT_FILE name of the dynamic linker */
	int			vdso_fd;
	char			vdso_path[64];
	bool			no_demangle;
	struct missing		*miss;
	size_t			nr_miss;
	struct core_thread	*t;		/* being decoded */
	FILE			*out;
};

/* ---- the ELF core ---------------------------------------------------- */

static struct core_thread *new_thread(struct core *c)
{
	struct core_thread *n = realloc(c->th, (c->nr_th + 1) * sizeof(*n));

	if (!n)
		return NULL;
	c->th = n;
	memset(&n[c->nr_th], 0, sizeof(*n));
	return &n[c->nr_th++];
}

/* NT_FILE: 0, -1 malformed, -ENOMEM */
static int parse_file_note(struct core *c, const uint8_t *d, uint64_t n)
{
	uint64_t count, page, i;
	const char *name, *end = (const char *)d + n;

	if (n < 16)
		return -1;
	memcpy(&count, d, 8);
	memcpy(&page, d + 8, 8);
	if (count > (n - 16) / 24)
		return -1;
	c->maps = calloc(count ? count : 1, sizeof(*c->maps));
	if (!c->maps)
		return -ENOMEM;
	name = (const char *)d + 16 + count * 24;
	for (i = 0; i < count; i++) {
		struct core_map *m = &c->maps[i];
		size_t len;

		if (name >= end)
			return -1;
		len = strnlen(name, end - name);
		if (name + len >= end)
			return -1;
		memcpy(&m->start, d + 16 + i * 24, 8);
		memcpy(&m->end, d + 24 + i * 24, 8);
		memcpy(&m->pgoff, d + 32 + i * 24, 8);
		m->pgoff *= page;
		m->name = name;
		name += len + 1;
	}
	c->nr_maps = count;
	return 0;
}

/* NT_AUXV, the descriptor at file offset off: libelf reads it as auxv_t. */
static void parse_auxv(struct core *c, uint64_t off, uint64_t n)
{
	Elf_Data *d = elf_getdata_rawchunk(c->elf, off, n, ELF_T_AUXV);
	GElf_auxv_t av;
	int i;

	for (i = 0; d && gelf_getauxv(d, i, &av); i++) {
		if (av.a_type == AT_NULL)
			break;
		if (av.a_type == AT_SYSINFO_EHDR)
			c->vdso = av.a_un.a_val;
		else if (av.a_type == AT_ENTRY)
			c->entry = av.a_un.a_val;
		else if (av.a_type == AT_BASE)
			c->interp = av.a_un.a_val;
		else if (av.a_type == AT_EXECFN)
			c->execfn = av.a_un.a_val;
	}
}

/* An NT_ITRACE note: t->bad says what is wrong with it. */
static void parse_itrace_note(struct core_thread *t, const uint8_t *d, uint64_t n)
{
	struct itrace_note *h = &t->note;
	uint32_t hs = 0;

	t->has_note = true;
	if (n >= 4)
		memcpy(&hs, d, 4);
	if (n < 8) {
		snprintf(t->bad, sizeof(t->bad),
			 "NT_ITRACE note of %llu bytes is too short for its header",
			 (unsigned long long)n);
		return;
	}
	memcpy(&h->version, d + 4, 4);
	if (h->version != ITRACE_NOTE_VERSION) {
		snprintf(t->bad, sizeof(t->bad),
			 "NT_ITRACE note version %u is not supported (this itrace reads version %d)",
			 h->version, ITRACE_NOTE_VERSION);
		return;
	}
	if (hs < sizeof(*h)) {
		snprintf(t->bad, sizeof(t->bad),
			 "NT_ITRACE hdr_size %u is smaller than the version %d header (%zu bytes)",
			 hs, ITRACE_NOTE_VERSION, sizeof(*h));
		return;
	}
	if (hs > n) {
		snprintf(t->bad, sizeof(t->bad),
			 "NT_ITRACE hdr_size %u is beyond the note (%llu bytes)",
			 hs, (unsigned long long)n);
		return;
	}
	memcpy(h, d, sizeof(*h));
	h->pmu_name[sizeof(h->pmu_name) - 1] = 0;
	if (h->trace_size > n - hs) {
		snprintf(t->bad, sizeof(t->bad),
			 "NT_ITRACE trace_size %llu is beyond the note (%llu bytes after the %u-byte header)",
			 (unsigned long long)h->trace_size, (unsigned long long)(n - hs), hs);
		return;
	}
	t->trace = d + hs;
}

static struct core_thread *note_thread(struct core *c, struct core_thread *cur,
				       const uint8_t *d, uint64_t n)
{
	uint32_t tid;
	size_t i;

	if (n < offsetof(struct itrace_note, tid) + sizeof(tid))
		return cur;
	memcpy(&tid, d + offsetof(struct itrace_note, tid), sizeof(tid));
	for (i = 0; i < c->nr_th; i++)
		if (c->th[i].tid == tid && !c->th[i].has_note)
			return &c->th[i];
	return cur;
}

/* A note of owner "CORE" (desc at file offset off): 0, or -1 with err set. */
static int core_note(struct core *c, const GElf_Nhdr *nh, const uint8_t *desc, uint64_t off,
		     struct core_thread **cur, char *err, size_t errlen)
{
	int ret;

	switch (nh->n_type) {
	case NT_PRSTATUS: {
		struct elf_prstatus ps;
		struct core_thread *t;

		if (nh->n_descsz < sizeof(ps)) {
			snprintf(err, errlen, "NT_PRSTATUS of %u bytes, expected %zu",
				 nh->n_descsz, sizeof(ps));
			return -1;
		}
		memcpy(&ps, desc, sizeof(ps));
		t = new_thread(c);
		if (!t) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		t->tid = ps.pr_pid;
		t->cursig = ps.pr_cursig;
		t->rip = ps.pr_reg[offsetof(struct user_regs_struct, rip) / 8];
		*cur = t;
		break;
	}
	case NT_SIGINFO: {
		siginfo_t si;

		if (!*cur || nh->n_descsz < sizeof(si))
			break;
		memcpy(&si, desc, sizeof(si));
		(*cur)->have_si = true;
		(*cur)->sig_no = si.si_signo;
		(*cur)->sig_code = si.si_code;
		(*cur)->sig_addr = (uintptr_t)si.si_addr;
		break;
	}
	case NT_FILE:
		if (c->maps)
			break;
		ret = parse_file_note(c, desc, nh->n_descsz);
		if (ret == -ENOMEM) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		if (ret) {
			snprintf(err, errlen, "malformed NT_FILE note at file offset 0x%llx",
				 (unsigned long long)off);
			return -1;
		}
		break;
	case NT_AUXV:
		parse_auxv(c, off, nh->n_descsz);
		break;
	case NT_PRPSINFO: {
		struct elf_prpsinfo ps;

		if (nh->n_descsz >= sizeof(ps)) {
			memcpy(&ps, desc, sizeof(ps));
			c->pid = ps.pr_pid;
			snprintf(c->psname, sizeof(c->psname), "%.16s", ps.pr_fname);
		}
		break;
	}
	}
	return 0;
}

/* Why gelf_getnote() found no note at pos of the note segment p. */
static void bad_note(const GElf_Phdr *p, const Elf_Data *d, size_t pos, char *err,
		     size_t errlen)
{
	const GElf_Nhdr *nh = (const GElf_Nhdr *)((const char *)d->d_buf + pos);
	size_t align = d->d_type == ELF_T_NHDR8 ? 8 : 4;

	if (d->d_size - pos < sizeof(*nh))
		snprintf(err, errlen, "truncated note header at file offset 0x%llx",
			 (unsigned long long)(p->p_offset + pos));
	else if (sizeof(*nh) + ((nh->n_namesz + align - 1ULL) & ~(align - 1ULL)) +
		 nh->n_descsz <= d->d_size - pos)
		/* libelf wants the descriptor's padding in the segment */
		snprintf(err, errlen,
			 "note at file offset 0x%llx: the note segment ends before the padding of its %u-byte descriptor",
			 (unsigned long long)(p->p_offset + pos), nh->n_descsz);
	else
		snprintf(err, errlen,
			 "truncated note at file offset 0x%llx: name %u and descriptor %u bytes go beyond the note segment (%zu bytes left)",
			 (unsigned long long)(p->p_offset + pos), nh->n_namesz, nh->n_descsz,
			 d->d_size - pos);
}

/* The notes of the PT_NOTE segment p, as libelf's gelf_getnote() walks them. */
static int parse_notes(struct core *c, const GElf_Phdr *p, char *err, size_t errlen)
{
	/* Linux aligns core notes to 4 bytes; an 8-aligned segment has 8-byte padding */
	Elf_Data *d = elf_getdata_rawchunk(c->elf, p->p_offset, p->p_filesz,
					   p->p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
	struct core_thread *cur = NULL, *t;
	size_t pos = 0, next, name_at, desc_at;
	GElf_Nhdr nh;

	if (!d) {
		if (p->p_offset > c->size || p->p_filesz > c->size - p->p_offset)
			snprintf(err, errlen,
				 "note segment (0x%llx bytes at 0x%llx) goes beyond the end of the file (0x%zx bytes): truncated core",
				 (unsigned long long)p->p_filesz,
				 (unsigned long long)p->p_offset, c->size);
		else
			snprintf(err, errlen, "note segment at 0x%llx: %s",
				 (unsigned long long)p->p_offset, elf_errmsg(-1));
		return -1;
	}
	for (; pos < d->d_size; pos = next) {
		const char *name;
		const uint8_t *desc;

		next = gelf_getnote(d, pos, &nh, &name_at, &desc_at);
		if (!next) {
			bad_note(p, d, pos, err, errlen);
			return -1;
		}
		name = (const char *)d->d_buf + name_at;
		desc = (const uint8_t *)d->d_buf + desc_at;
		if (nh.n_namesz == sizeof(CORE_NOTE_NAME) &&
		    !memcmp(name, CORE_NOTE_NAME, nh.n_namesz)) {
			if (core_note(c, &nh, desc, p->p_offset + desc_at, &cur, err, errlen))
				return -1;
			continue;
		}
		/* gdb's gcore writes its target description (NT_GDB_TDESC) */
		if (nh.n_namesz == sizeof(GDB_NOTE_NAME) &&
		    !memcmp(name, GDB_NOTE_NAME, nh.n_namesz)) {
			c->by_gdb = true;
			continue;
		}
		if (nh.n_namesz != sizeof(ITRACE_NOTE_NAME) || nh.n_type != NT_ITRACE ||
		    memcmp(name, ITRACE_NOTE_NAME, sizeof(ITRACE_NOTE_NAME)))
			continue;
		if (!cur) {
			snprintf(err, errlen,
				 "NT_ITRACE note at file offset 0x%llx before any NT_PRSTATUS",
				 (unsigned long long)(p->p_offset + pos));
			return -1;
		}
		/* the thread it names, else the one it follows */
		t = note_thread(c, cur, desc, nh.n_descsz);
		if (t->has_note) {
			snprintf(err, errlen, "thread %u has two NT_ITRACE notes", t->tid);
			return -1;
		}
		parse_itrace_note(t, desc, nh.n_descsz);
	}
	return 0;
}

/* The ELF header and program headers through libelf, then the notes. */
static int core_parse(struct core *c, int fd, char *err, size_t errlen)
{
	GElf_Ehdr eh;
	uint64_t miss;
	size_t i;

	elf_version(EV_CURRENT);
	c->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!c->elf || elf_kind(c->elf) != ELF_K_ELF) {
		snprintf(err, errlen, "not an ELF file");
		return -1;
	}
	if (!gelf_getehdr(c->elf, &eh)) {
		snprintf(err, errlen, "bad or truncated ELF header: %s", elf_errmsg(-1));
		return -1;
	}
	if (gelf_getclass(c->elf) != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64) {
		snprintf(err, errlen, "not an x86-64 ELF file (class %u, data %u, machine %u)",
			 eh.e_ident[EI_CLASS], eh.e_ident[EI_DATA], eh.e_machine);
		return -1;
	}
	if (eh.e_type != ET_CORE) {
		snprintf(err, errlen, "not a core dump (ELF type %u, a core is %u)",
			 eh.e_type, ET_CORE);
		return -1;
	}
	/* libelf counts only the program headers the file holds */
	if (elf_getphdrnum(c->elf, &c->phnum) ||
	    (eh.e_phnum != PN_XNUM && c->phnum != eh.e_phnum)) {
		snprintf(err, errlen, "bad or truncated program headers (%u at 0x%llx)",
			 eh.e_phnum, (unsigned long long)eh.e_phoff);
		return -1;
	}
	c->ph = calloc(c->phnum ? c->phnum : 1, sizeof(*c->ph));
	if (!c->ph) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < c->phnum; i++) {
		if (!gelf_getphdr(c->elf, i, &c->ph[i])) {
			snprintf(err, errlen,
				 "bad or truncated program headers (%zu at 0x%llx): %s",
				 c->phnum, (unsigned long long)eh.e_phoff, elf_errmsg(-1));
			return -1;
		}
	}
	for (i = 0; i < c->phnum; i++)
		if (c->ph[i].p_type == PT_NOTE && parse_notes(c, &c->ph[i], err, errlen))
			return -1;
	/* a core cut short (a full disk, a crash while dumping): say what is gone */
	for (i = 0, miss = 0; i < c->phnum; i++) {
		const GElf_Phdr *p = &c->ph[i];

		if (p->p_type == PT_LOAD && p->p_offset + p->p_filesz > c->size)
			miss += p->p_offset >= c->size ? p->p_filesz :
				p->p_offset + p->p_filesz - c->size;
	}
	if (miss)
		fprintf(stderr,
			"itrace: %s: warning: cut short: %llu bytes of its memory segments are beyond the end of the file (%zu bytes); code there is missing\n",
			c->path, (unsigned long long)miss, c->size);
	if (!c->nr_th) {
		snprintf(err, errlen, "no NT_PRSTATUS note: not a Linux process core dump");
		return -1;
	}
	return 0;
}

/* ---- the address space ----------------------------------------------- */

/* The PT_LOAD segment (libelf's copy of its phdr) that holds addr. */
static const GElf_Phdr *load_at(const struct core *c, uint64_t addr)
{
	size_t i;

	for (i = 0; i < c->phnum; i++)
		if (c->ph[i].p_type == PT_LOAD && addr >= c->ph[i].p_vaddr &&
		    addr - c->ph[i].p_vaddr < c->ph[i].p_memsz)
			return &c->ph[i];
	return NULL;
}

/* The NUL-terminated string at addr in the core's memory, or NULL. */
static const char *core_string(const struct core *c, uint64_t addr)
{
	const GElf_Phdr *p = load_at(c, addr);
	uint64_t at = p ? addr - p->p_vaddr : 0;
	Elf_Data *d;

	if (!p || at >= p->p_filesz)
		return NULL;
	d = elf_getdata_rawchunk(c->elf, p->p_offset + at,
				 p->p_filesz - at < PATH_MAX ? p->p_filesz - at : PATH_MAX,
				 ELF_T_BYTE);
	if (!d || !memchr(d->d_buf, 0, d->d_size))
		return NULL;
	return d->d_buf;
}

/* ---- modules of a core without NT_FILE (gdb's gcore may write none) --- */

static const char *mod_sysroot;		/* --sysroot, for find_elf() */

/* A module's file: by its name under --sysroot, else as libdwfl finds it */
static int find_elf(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	char path[PATH_MAX];
	int fd;

	if (mod_sysroot && name[0] == '/') {
		snprintf(path, sizeof(path), "%s%s", mod_sysroot, name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			*file_name = strdup(path);
			if (*file_name)
				return fd;
			close(fd);
		}
	}
	return dwfl_build_id_find_elf(mod, ud, name, base, file_name, elfp);
}

static int add_map(struct core *c, uint64_t start, uint64_t end, uint64_t pgoff,
		   const char *name, const char *path)
{
	struct core_map *n = realloc(c->maps, (c->nr_maps + 1) * sizeof(*n));

	if (!n)
		return -1;
	c->maps = n;
	n += c->nr_maps;
	*n = (struct core_map){ .start = start, .end = end, .pgoff = pgoff, .name = name };
	if (path) {
		n->path = strdup(path);
		if (!n->path)
			return -1;
	}
	c->nr_maps++;
	return 0;
}

/* The len bytes at addr in the core's memory, or NULL if it lacks them. */
static const void *core_bytes(const struct core *c, uint64_t addr, size_t len)
{
	const GElf_Phdr *p = load_at(c, addr);
	Elf_Data *d;

	if (!p || addr - p->p_vaddr > p->p_filesz || p->p_filesz - (addr - p->p_vaddr) < len)
		return NULL;
	d = elf_getdata_rawchunk(c->elf, p->p_offset + addr - p->p_vaddr, len, ELF_T_BYTE);
	return d ? d->d_buf : NULL;
}

/* A file's GNU build-id, where its bytes are loaded, and PT_DYNAMIC's vaddr */
struct elf_id {
	uint8_t		id[64];
	size_t		len;		/* 0: no build-id note in a PT_NOTE */
	GElf_Addr	id_vaddr;
	GElf_Addr	dyn_vaddr;	/* 0: no PT_DYNAMIC */
};

static void elf_id(Elf *elf, struct elf_id *e)
{
	size_t i, n, off, name, desc;
	Elf_Data *d;
	GElf_Phdr ph;
	GElf_Nhdr nh;

	memset(e, 0, sizeof(*e));
	if (elf_getphdrnum(elf, &n))
		return;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph))
			continue;
		if (ph.p_type == PT_DYNAMIC)
			e->dyn_vaddr = ph.p_vaddr;
		if (ph.p_type != PT_NOTE || e->len)
			continue;
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz,
					 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		for (off = 0; d && (off = gelf_getnote(d, off, &nh, &name, &desc)) > 0; ) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + name, "GNU", 4) ||
			    !nh.n_descsz || nh.n_descsz > sizeof(e->id))
				continue;
			memcpy(e->id, (char *)d->d_buf + desc, nh.n_descsz);
			e->len = nh.n_descsz;
			e->id_vaddr = ph.p_vaddr + desc;
			break;
		}
	}
}

/*
 * A module libdwfl read from a file outside --sysroot: libdwfl opens the
 * names of the dynamic linker's list itself, checking them against the
 * build-ids the core's memory holds, if it holds them.  The file under
 * the sysroot is the one the user means: take it, loaded where the
 * dynamic linker put it (its PT_DYNAMIC at the l_ld libdwfl placed the
 * other at), if the build-id the core's memory holds there, if any, is
 * its own.  Else the module has no file, and *m says why.
 * Returns the sysroot's file, open (elf_end() and close(*fd)), or NULL.
 */
static Elf *sysroot_module(const struct core *c, Elf *elf, const char *file, Dwarf_Addr *bias,
			   char *alt, size_t size, int *fd, struct core_map *m)
{
	struct elf_id was, is;
	const void *mem;
	Elf *e;

	snprintf(alt, size, "%s%s", c->sysroot, file);
	*fd = open(alt, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		m->err = errno;
		return NULL;
	}
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		m->why = "not an ELF file";
		goto fail;
	}
	elf_id(elf, &was);
	elf_id(e, &is);
	if (was.len == is.len && !memcmp(was.id, is.id, is.len))
		return e;
	/* the build-id libdwfl checked the other file against, if it could */
	mem = was.len ? core_bytes(c, *bias + was.id_vaddr, was.len) : NULL;
	if (mem && !memcmp(mem, was.id, was.len)) {
		m->why = "another build-id than the core's memory holds for it";
		goto fail;
	}
	if (!was.dyn_vaddr || !is.dyn_vaddr) {
		m->why = "another build than the core's list names, and no PT_DYNAMIC to place by";
		goto fail;
	}
	*bias += was.dyn_vaddr - is.dyn_vaddr;
	mem = is.len ? core_bytes(c, *bias + is.id_vaddr, is.len) : NULL;
	if (mem && memcmp(mem, is.id, is.len)) {
		m->why = "another build-id than the core's memory holds for it";
		goto fail;
	}
	return e;
fail:
	elf_end(e);
	close(*fd);
	return NULL;
}

/*
 * One module libdwfl found: the PT_LOAD segments of its file where they
 * are mapped, as NT_FILE would have named them; without a file, its
 * address range, so that the report names what is missing.
 */
static int add_module(Dwfl_Module *mod, void **ud, const char *modname, Dwarf_Addr low,
		      void *arg)
{
	struct core *c = arg;
	const char *file = NULL;
	Dwarf_Addr bias = 0, high = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias), *own = NULL;
	struct core_map why = { 0 };
	char *name, **names, alt[PATH_MAX];
	GElf_Phdr ph;
	size_t i, n = 0;
	bool nofile;
	int fd = -1, ret = DWARF_CB_ABORT;

	dwfl_module_info(mod, NULL, NULL, &high, NULL, NULL, &file, NULL);
	/* the vdso and what only the core's memory holds: read from the core */
	if (low == c->vdso || (modname[0] == '[' && (!elf || !file)))
		return DWARF_CB_OK;
	names = realloc(c->names, (c->nr_names + 1) * sizeof(*names));
	if (!names)
		return DWARF_CB_ABORT;
	c->names = names;
	nofile = !elf || !file || elf_getphdrnum(elf, &n);
	if (!nofile && c->sysroot && file[0] == '/' && strcmp(file, c->exe) &&
	    strncmp(file, c->sysroot, strlen(c->sysroot))) {
		own = sysroot_module(c, elf, file, &bias, alt, sizeof(alt), &fd, &why);
		elf = own;
		file = alt;
		nofile = !own || elf_getphdrnum(own, &n);
	}
	/* the program without its file: named by the path tried */
	name = strdup(nofile && c->exe[0] && c->entry >= low && c->entry < high ? c->exe :
		      why.err || why.why ? alt : modname);
	if (!name)
		goto out;
	c->names[c->nr_names++] = name;
	if (nofile) {
		if (add_map(c, low, high, 0, name, NULL))
			goto out;
		c->maps[c->nr_maps - 1].nofile = true;
		c->maps[c->nr_maps - 1].err = why.err;
		c->maps[c->nr_maps - 1].why = why.why;
		ret = DWARF_CB_OK;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		if (add_map(c, bias + ph.p_vaddr, bias + ph.p_vaddr + ph.p_filesz, ph.p_offset,
			    name, file))
			goto out;
		c->maps[c->nr_maps - 1].exec = ph.p_flags & PF_X;
	}
	ret = DWARF_CB_OK;
out:
	if (own) {
		elf_end(own);
		close(fd);
	}
	return ret;
}

/*
 * A core without NT_FILE: libdwfl finds the modules from what its memory
 * holds (the dynamic linker's list, ELF headers, build-ids), the program
 * by --exe, else by AT_EXECFN (under --sysroot).  0, or -1 out of memory.
 */
static int core_modules(struct core *c, const struct core_opts *o)
{
	static const Dwfl_Callbacks cb = {
		.find_elf	= find_elf,
		.find_debuginfo	= dwfl_standard_find_debuginfo,
	};
	const char *execfn = c->execfn ? core_string(c, c->execfn) : NULL;
	Dwfl *dwfl;
	int ret = 0;

	if (o->exe)
		snprintf(c->exe, sizeof(c->exe), "%s", o->exe);
	else if (execfn)
		snprintf(c->exe, sizeof(c->exe), "%s%s", o->sysroot && execfn[0] == '/' ?
			 o->sysroot : "", execfn);
	mod_sysroot = o->sysroot;
	c->sysroot = o->sysroot;
	dwfl = dwfl_begin(&cb);
	if (!dwfl)
		return -1;
	dwfl_report_begin(dwfl);
	if (dwfl_core_file_report(dwfl, c->elf, c->exe[0] ? c->exe : NULL) < 0)
		fprintf(stderr, "itrace: warning: %s: no modules found in the core: %s\n",
			c->path, dwfl_errmsg(-1));
	dwfl_report_end(dwfl, NULL, NULL);
	if (dwfl_getmodules(dwfl, add_module, c, 0))
		ret = -1;
	dwfl_end(dwfl);
	return ret;
}

static void add_missing(struct ctx *x, const char *path, int err, const char *why);

/*
 * Is the file's mapping at file offset pgoff executable, by the file's
 * own program headers?  For an NT_FILE entry without a core segment: gdb's
 * gcore leaves out file-backed text it did not change.  An unreadable
 * file: yes, so that the report names it.
 */
static bool file_exec(const char *path, uint64_t pgoff)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	bool ret = fd < 0;
	GElf_Phdr ph;
	size_t i, n;

	if (elf && !elf_getphdrnum(elf, &n)) {
		for (i = 0; i < n && !ret; i++)
			ret = gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD &&
			      (ph.p_flags & PF_X) && pgoff + 4096 > ph.p_offset &&
			      pgoff < ph.p_offset + ph.p_filesz;
	}
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* A module libdwfl found in the core but no file of */
static void missing_module(struct ctx *x, const struct core_map *m)
{
	const char *name = m->name;

	if (m->err || m->why)
		add_missing(x, name, m->err, m->why);
	else if (strcmp(name, x->c->exe))
		add_missing(x, name, 0, "no file found by its path in the core or its build-id");
	else if (access(name, F_OK))
		add_missing(x, name, errno, NULL);
	else
		add_missing(x, name, 0,
			    "not the program of the core (not ELF or another build-id)");
}

static void add_missing(struct ctx *x, const char *path, int err, const char *why)
{
	struct missing *n;
	size_t i;

	for (i = 0; i < x->nr_miss; i++)
		if (!strcmp(x->miss[i].path, path))
			return;
	n = realloc(x->miss, (x->nr_miss + 1) * sizeof(*n));
	if (!n)
		return;
	x->miss = n;
	n += x->nr_miss;
	*n = (struct missing){ .path = strdup(path), .err = err, .why = why };
	if (n->path)
		x->nr_miss++;
}

/* The program: the file mapped at the entry point, else the first one. */
static const char *exe_file(const struct core *c)
{
	size_t i;

	for (i = 0; i < c->nr_maps; i++)
		if (c->entry >= c->maps[i].start && c->entry < c->maps[i].end)
			return c->maps[i].name;
	return c->nr_maps ? c->maps[0].name : NULL;
}

/*
 * Is mapping @m of the program (file offset m->pgoff at m->start) file
 * pages of a PT_LOAD segment of @e (of @n), executable if the core's
 * segment there is, at load bias *bias if @have_bias, else at the one it
 * sets?  (relro splits a segment's mapping: a mapping may start inside
 * one, and two segments may share a file page.)
 */
static bool exe_map_fits(const struct core *c, Elf *e, size_t n, const struct core_map *m,
			 uint64_t *bias, bool have_bias)
{
	const GElf_Phdr *seg = load_at(c, m->start);
	uint64_t b, pg = 0xfff;
	GElf_Phdr ph;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD ||
		    m->pgoff < (ph.p_offset & ~pg) ||
		    m->pgoff >= ((ph.p_offset + ph.p_filesz + pg) & ~pg))
			continue;
		b = m->start - ((ph.p_vaddr & ~pg) + m->pgoff - (ph.p_offset & ~pg));
		if ((!have_bias || b == *bias) &&
		    (!seg || !(seg->p_flags & PF_X) == !(ph.p_flags & PF_X))) {
			*bias = b;
			return true;
		}
	}
	return false;
}

/*
 * Is --exe (@path) another build than the program @exe of the core?  Each
 * of the program's mappings must fit it (exe_map_fits()), all at the load
 * bias of the first; and its build-id note, where that bias loads it,
 * must be the bytes the core has there, if it has them (Linux dumps the
 * first page of each ELF mapping, where the note usually is).  Returns why not the
 * program, or NULL (it is, or nothing tells).
 */
static const char *exe_mismatch(const struct core *c, const char *path, const char *exe)
{
	const char *why = NULL;
	bool have_bias = false;
	uint64_t bias = 0;
	struct elf_id is;
	const void *mem;
	size_t k, n;
	Elf *e;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;	/* reported where the image is built */
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && !elf_getphdrnum(e, &n)) {
		for (k = 0; !why && k < c->nr_maps; k++) {
			const struct core_map *m = &c->maps[k];

			if (m->nofile || strcmp(m->name, exe))
				continue;
			if (!exe_map_fits(c, e, n, m, &bias, have_bias)) {
				why = "its segments are not where the core maps the program";
				break;
			}
			if (have_bias)
				continue;
			/* the bias known, the build-id first: the stronger word */
			have_bias = true;
			elf_id(e, &is);
			mem = is.len ? core_bytes(c, bias + is.id_vaddr, is.len) : NULL;
			if (mem && memcmp(mem, is.id, is.len))
				why = "another build-id than the core's memory holds for it";
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return why;
}

/*
 * --exe against the program @exe: refused (reported missing) if it is not
 * the core's; then none of its code or symbols is used.
 */
static bool exe_refused(struct ctx *x, const char *exe)
{
	const char *why = exe_mismatch(x->c, x->o->exe, exe);

	if (why)
		add_missing(x, x->o->exe, 0, why);
	return why;
}

static void build_image(struct ctx *x)
{
	const struct core *c = x->c;
	const char *exe = exe_file(c);
	size_t i, k;
	bool exe_bad;
	int err;

	x->exe = exe ? itrace_base_name(exe) : NULL;
	exe_bad = x->o->exe && exe && exe_refused(x, exe);
	for (k = 0; c->interp && k < c->nr_maps; k++)
		if (c->interp >= c->maps[k].start && c->interp < c->maps[k].end)
			x->interp = c->maps[k].name;
	for (k = 0; k < c->nr_maps; k++) {
		const struct core_map *m = &c->maps[k];
		const GElf_Phdr *p = load_at(c, m->start);
		char path[4096];

		if (m->nofile) {
			missing_module(x, m);
			continue;
		}
		if (x->o->exe && exe && !strcmp(m->name, exe)) {
			if (exe_bad)
				continue;
			snprintf(path, sizeof(path), "%s", x->o->exe);
		} else if (m->path) {
			snprintf(path, sizeof(path), "%s", m->path);
		} else {
			snprintf(path, sizeof(path), "%s%s", x->o->sysroot ? x->o->sysroot : "",
				 m->name);
		}
		/* the core's segment says; gdb's gcore may leave file text out */
		if (p ? !(p->p_flags & PF_X) : m->path ? !m->exec : !file_exec(path, m->pgoff))
			continue;
		err = itrace_image_add(&x->im, x->st, itrace_base_name(m->name), path,
				       m->start, m->end - m->start, m->pgoff);
		if (err < 0)
			add_missing(x, path, -err, NULL);
	}
	/* what memory held, where the core has it: the vdso, anonymous code */
	for (i = 0; i < c->phnum; i++) {
		const GElf_Phdr *p = &c->ph[i];
		Elf_Data *d;

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X) || !p->p_filesz)
			continue;
		/* NULL: the segment's contents are not all in the file */
		d = elf_getdata_rawchunk(c->elf, p->p_offset, p->p_filesz, ELF_T_BYTE);
		if (!d)
			continue;
		err = itrace_image_add_section(&x->im, c->path, p->p_offset, p->p_filesz,
					       p->p_vaddr);
		if (err < 0)
			fprintf(stderr, "itrace: warning: %s: segment at 0x%llx: %s\n", c->path,
				(unsigned long long)p->p_vaddr, pt_errstr(pt_errcode(err)));
		if (p->p_vaddr != c->vdso || x->vdso_fd >= 0)
			continue;
		x->vdso_fd = itrace_mem_image("itrace-vdso", d->d_buf, d->d_size,
					      x->vdso_path, sizeof(x->vdso_path));
		if (x->vdso_fd < 0 || sym_add_mapping(x->st, "[vdso]", x->vdso_path, p->p_vaddr,
						      p->p_filesz, 0))
			fprintf(stderr, "itrace: warning: no symbols for the vdso\n");
	}
	sym_done(x->st);
}

/* ---- decoding: keep the last n branches or instructions -------------- */

/* Is ip in the dynamic linker (the file mapped at AT_BASE)? */
static bool in_interp(const struct ctx *x, uint64_t ip)
{
	size_t i;

	if (!x->interp)
		return false;
	for (i = 0; i < x->c->nr_maps; i++)
		if (ip >= x->c->maps[i].start && ip < x->c->maps[i].end &&
		    !strcmp(x->c->maps[i].name, x->interp))
			return true;
	return false;
}

/* A line that is no instruction or branch: an error, an overflow, a resume. */
static bool is_mark(const struct ent *e)
{
	return e->kind == E_ERROR || e->kind == E_OVERFLOW || e->kind == E_RESUMED;
}

/* What a mark says. */
static const char *mark_msg(const struct ent *e)
{
	if (e->kind == E_OVERFLOW)
		return "hardware lost trace";
	return e->msg ? e->msg : itrace_errstr(e->err);
}

static void push(struct ctx *x, const struct ent *e)
{
	struct core_thread *t = x->t;

	/*
	 * Lazy binding: the first call through a PLT entry runs the dynamic
	 * linker's resolver (dozens of branches) before the function.  Its
	 * branches inside ld.so are left out of the tail, counted; the jump
	 * into it and the one out of it to the function stay.  --all keeps
	 * them all.
	 */
	if (!x->o->all && !is_mark(e) && in_interp(x, e->ip) &&
	    (!e->to || in_interp(x, e->to)) && !in_interp(x, t->rip_start)) {
		t->hidden++;
		return;
	}
	t->ring[t->nr_ents++ % x->o->n] = *e;
}

/* The call stack as the trace saw it: a call pushes, a return pops. */
static void track_stack(struct core_thread *t, const struct pt_insn *in, enum ent_kind k)
{
	if (k == E_CALL) {
		if (t->depth == MAX_STACK) {
			memmove(t->stack, t->stack + 1, (MAX_STACK - 1) * sizeof(t->stack[0]));
			t->depth--;
			t->dropped++;
		}
		t->stack[t->depth++] = in->ip;
	} else if (k == E_RET) {
		if (t->depth)
			t->depth--;
		else
			t->unmatched++;
	}
}

static void resolve(struct ctx *x, uint64_t to)
{
	struct core_thread *t = x->t;

	if (!t->pend)
		return;
	t->pend = false;
	if (t->pend_ent.kind == E_JCC && to == t->pend_ent.ip + t->pend_ent.size)
		return;		/* not taken */
	t->pend_ent.to = to;
	push(x, &t->pend_ent);
}

static enum ent_kind kind_of(const struct pt_insn *in)
{
	switch (in->iclass) {
	case ptic_call:
		return E_CALL;
	case ptic_return:
		return E_RET;
	case ptic_jump:
		return E_JUMP;
	case ptic_cond_jump:
		return E_JCC;
	case ptic_far_call:
	case ptic_far_return:
	case ptic_far_jump:
		return itrace_is_syscall(in->raw, in->size) ? E_SYSCALL : E_FAR;
	default:
		return E_INSN;
	}
}

static void tail_insn(void *ctx, struct pt_insn_decoder *dec, const struct pt_insn *in)
{
	struct ctx *x = ctx;
	struct core_thread *t = x->t;
	struct ent e = { .kind = kind_of(in), .ip = in->ip, .size = in->size };

	resolve(x, in->ip);
	track_stack(t, in, e.kind);
	t->insns++;
	t->last = *in;
	t->have_last = true;
	t->lost_end = false;
	t->how = END_NONE;
	memcpy(e.raw, in->raw, sizeof(e.raw));
	if (x->o->insn) {
		e.cls = e.kind;
		e.kind = E_INSN;
		push(x, &e);
	} else if (e.kind != E_INSN) {
		t->pend = true;
		t->pend_ent = e;
	}
}

static void tail_event(void *ctx, struct pt_insn_decoder *dec, const struct pt_event *ev)
{
	struct ctx *x = ctx;
	struct core_thread *t = x->t;
	struct ent e = { .kind = E_OVERFLOW };

	switch (ev->type) {
	case ptev_async_disabled:
		/* an interrupt or fault: the instruction at 'at' did not complete */
		resolve(x, ev->variant.async_disabled.at);
		t->how = END_ASYNC;
		t->end_ip = ev->variant.async_disabled.at;
		break;
	case ptev_disabled:
		if (t->have_last && kind_of(&t->last) == E_SYSCALL) {
			t->how = END_SYSCALL;
			t->end_ip = t->last.ip;
		}
		break;
	case ptev_overflow:
		t->pend = false;
		pt_insn_get_offset(dec, &e.off);
		e.off += t->from;
		e.ip = ev->variant.overflow.ip;
		push(x, &e);
		t->errors++;
		break;
	default:
		break;
	}
}

static void tail_error(void *ctx, struct pt_insn_decoder *dec, int err, uint64_t last_ip)
{
	struct ctx *x = ctx;
	struct core_thread *t = x->t;
	struct ent e = { .kind = E_ERROR, .ip = last_ip, .err = err };

	pt_insn_get_offset(dec, &e.off);
	e.off += t->from;
	t->pend = false;
	t->how = END_NONE;
	t->lost_end = true;
	if (t->errors < NR_ERR_MSGS)
		snprintf(t->errmsg[t->errors], MSG_LEN,
			 "decode error at trace offset 0x%llx (last ip 0x%llx): %s",
			 (unsigned long long)e.off, (unsigned long long)last_ip,
			 itrace_errstr(err));
	t->errors++;
	push(x, &e);
}

/* Offset of the last PSB at or before limit in buf, or 0. */
static uint64_t psb_before(const uint8_t *buf, uint64_t limit)
{
	static const uint8_t psb[16] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	};
	uint64_t i;

	for (i = limit + 1; i-- > 0;)
		if (!memcmp(buf + i, psb, sizeof(psb)))
			return i;
	return 0;
}

static void reset_thread(struct core_thread *t, unsigned long n)
{
	memset(t->ring, 0, n * sizeof(*t->ring));
	t->nr_ents = 0;
	t->insns = 0;
	t->errors = 0;
	t->hidden = 0;
	t->pend = false;
	t->have_last = false;
	t->lost_end = false;
	t->how = END_NONE;
	t->end_ip = 0;
	t->depth = 0;
	t->dropped = 0;
	t->unmatched = 0;
}

/*
 * Decode only what the report shows: from the last PSB before the newest
 * CORE_WINDOW bytes; when that gives fewer than n entries, from twice as
 * far back, until the tail is full or the whole trace was decoded.  The
 * call stack comes from the same decode: frames entered before it are not
 * seen (the report says from where it decoded).
 */
static int decode_thread(struct ctx *x, struct core_thread *t)
{
	static const struct pt_walk_ops ops = {
		.insn = tail_insn, .event = tail_event, .error = tail_error,
	};
	uint64_t size = t->note.trace_size, window = CORE_WINDOW;
	struct pt_config cfg;

	t->ring = calloc(x->o->n, sizeof(*t->ring));
	if (!t->ring)
		return -1;
	x->t = t;
	t->rip_start = t->rip;
	for (;;) {
		t->from = size > window + 16 ? psb_before(t->trace, size - window - 16) : 0;
		reset_thread(t, x->o->n);
		itrace_pt_config(&cfg, t->trace + t->from, size - t->from, t->note.cpu_vendor,
				 t->note.cpu_family, t->note.cpu_model, t->note.cpu_stepping);
		/* timing packets (MTC, CYC, TMA) of a trace with TSC or MTC on */
		cfg.mtc_freq = t->note.mtc_freq;
		cfg.nom_freq = t->note.nom_freq;
		cfg.cpuid_0x15_eax = t->note.tsc_ctc_den;
		cfg.cpuid_0x15_ebx = t->note.tsc_ctc_num;
		t->walk = itrace_pt_walk(&cfg, x->im.image, &ops, x);
		if (t->pend)		/* the trace ends on a branch */
			resolve(x, t->how == END_ASYNC ? t->end_ip : 0);
		if (t->how == END_NONE && t->have_last)
			t->end_ip = t->last.ip;
		if (t->walk < 0 || !t->from || t->nr_ents >= x->o->n)
			break;
		window *= 2;
	}
	return t->walk < 0 ? -1 : 0;
}

/* ---- intel_bts notes: records { from, to, flags }, oldest first -------- */

static void bts_tail_insn(void *ctx, const struct pt_insn *in)
{
	tail_insn(ctx, NULL, in);
}

/* An interrupt or exception (a system call is in the flow already) */
static void bts_tail_kernel(void *ctx, uint64_t off, uint64_t from, uint64_t to, bool entry)
{
	struct ctx *x = ctx;
	struct core_thread *t = x->t;

	if (!entry)
		return;
	/* the instruction at from did not complete */
	resolve(x, from);
	t->how = END_ASYNC;
	t->end_ip = from;
}

/* Back from the kernel where BTS does not say (bts.h): a mark, no error. */
static void bts_tail_resume(void *ctx, uint64_t off, uint64_t at)
{
	struct ctx *x = ctx;
	struct core_thread *t = x->t;
	struct ent e = {
		.kind = E_RESUMED, .ip = at, .off = off,
		.msg = "back from the kernel where BTS does not record (a signal handler?)",
	};

	/* a system call that went elsewhere (sigreturn, exec) ran: where to is not known */
	resolve(x, 0);
	t->how = END_NONE;
	push(x, &e);
}

static void bts_tail_gap(void *ctx, uint64_t off, uint64_t last_ip, const char *why)
{
	struct ctx *x = ctx;
	struct core_thread *t = x->t;
	struct ent e = {
		.kind = E_ERROR, .ip = last_ip, .off = off,
		.msg = "the code does not lead to this BTS record",
	};

	t->pend = false;
	t->how = END_NONE;
	t->lost_end = true;
	if (t->errors < NR_ERR_MSGS)
		snprintf(t->errmsg[t->errors], MSG_LEN,
			 "gap at trace offset 0x%llx (last ip 0x%llx): %s",
			 (unsigned long long)off, (unsigned long long)last_ip, why);
	t->errors++;
	push(x, &e);
}

/*
 * As decode_thread(), for the whole records of an intel_bts note, which
 * need no synchronization: from the record CORE_WINDOW bytes before the
 * end, then twice as far back, until the tail is full.
 */
static int decode_bts_thread(struct ctx *x, struct core_thread *t)
{
	static const struct bts_ops ops = {
		.insn = bts_tail_insn, .kernel = bts_tail_kernel, .gap = bts_tail_gap,
		.resume = bts_tail_resume,
	};
	uint64_t size = t->note.trace_size - t->note.trace_size % BTS_RECORD_SIZE;
	uint64_t window = CORE_WINDOW, off;
	struct bts_walker *w;
	struct bts_record r;
	struct bts_pos pos;

	t->ring = calloc(x->o->n, sizeof(*t->ring));
	w = bts_walker_new(&ops, x);
	if (!t->ring || !w) {
		bts_walker_free(w);
		return -1;
	}
	x->t = t;
	t->rip_start = t->rip;
	for (;;) {
		t->from = size > window ? size - window : 0;
		t->from -= t->from % BTS_RECORD_SIZE;
		reset_thread(t, x->o->n);
		memset(&pos, 0, sizeof(pos));
		for (off = t->from; off < size; off += BTS_RECORD_SIZE) {
			memcpy(&r, t->trace + off, sizeof(r));
			bts_record(w, &x->im, &pos, off, &r);
		}
		/* a thread in a system call: its trace ends with it */
		if (t->how == END_NONE && t->have_last &&
		    kind_of(&t->last) == E_SYSCALL) {
			t->how = END_SYSCALL;
			t->end_ip = t->last.ip;
		}
		if (t->pend)		/* the trace ends on a branch */
			resolve(x, t->how == END_ASYNC ? t->end_ip : 0);
		if (t->how == END_NONE && t->have_last)
			t->end_ip = t->last.ip;
		if (!t->from || t->nr_ents >= x->o->n)
			break;
		window *= 2;
	}
	bts_walker_free(w);
	return 0;
}

/* ---- output ---------------------------------------------------------- */

/* "name+0xoff [module]" (the module outside the program), or "?" */
static void print_sym(struct ctx *x, uint64_t ip)
{
	struct sym_info si;
	bool other;

	sym_lookup(x->st, ip, &si);
	other = si.module && strcmp(si.module, "?") && (!x->exe || strcmp(si.module, x->exe));
	if (!si.name)
		fprintf(x->out, "?");
	else if (ip != si.start)
		fprintf(x->out, "%.*s+0x%llx", sym_name_len(si.name), si.name,
			(unsigned long long)(ip - si.start));
	else
		fprintf(x->out, "%.*s", sym_name_len(si.name), si.name);
	if (other)
		fprintf(x->out, " [%s]", si.module);
}

/* "0x401136 main+0x10 (crash.c:30)" */
static void print_loc(struct ctx *x, uint64_t ip)
{
	const char *file;
	int line;

	if (!ip) {
		fprintf(x->out, "?");
		return;
	}
	fprintf(x->out, "0x%llx ", (unsigned long long)ip);
	print_sym(x, ip);
	if (!sym_srcline(x->st, ip, &file, &line))
		fprintf(x->out, " (%s:%d)", itrace_base_name(file), line);
}

static const char * const cls_name[] = {
	[E_INSN] = "", [E_CALL] = "call", [E_RET] = "ret", [E_JUMP] = "jmp",
	[E_JCC] = "jcc", [E_SYSCALL] = "syscall", [E_FAR] = "far",
};

static const char *ent_kind(const struct ent *e)
{
	return e->kind == E_INSN ? cls_name[e->cls] : ent_name[e->kind];
}

static void print_ent(struct ctx *x, const struct ent *e)
{
	unsigned int i;

	if (is_mark(e)) {
		fprintf(x->out, "    [%s at trace offset 0x%llx: %s]\n", ent_name[e->kind],
			(unsigned long long)e->off, mark_msg(e));
		return;
	}
	fprintf(x->out, "    %-7s ", ent_kind(e));
	print_loc(x, e->ip);
	if (e->kind == E_INSN) {
		fprintf(x->out, "  ");
		for (i = 0; i < e->size; i++)
			fprintf(x->out, "%02x", e->raw[i]);
		fprintf(x->out, "\n");
		return;
	}
	fprintf(x->out, " -> ");
	print_loc(x, e->to);
	fprintf(x->out, "\n");
}

static struct json_object *json_ent(struct ctx *x, const struct ent *e)
{
	struct json_object *o = json_object_new_object();
	const char *msg;

	if (is_mark(e)) {
		json_object_object_add(o, "kind", json_object_new_string(ent_name[e->kind]));
		json_object_object_add(o, "offset", json_object_new_uint64(e->off));
		msg = e->kind == E_OVERFLOW ? "trace overflow" : mark_msg(e);
		json_object_object_add(o, "message", json_object_new_string(msg));
		return o;
	}
	json_object_object_add(o, "kind", json_object_new_string(ent_kind(e)));
	json_object_object_add(o, "at", jloc(x->st, e->ip));
	if (e->kind == E_INSN) {
		char hex[2 * sizeof(e->raw) + 1];
		unsigned int i;

		for (i = 0; i < e->size; i++)
			snprintf(hex + 2 * i, 3, "%02x", e->raw[i]);
		hex[2 * e->size] = 0;
		json_object_object_add(o, "bytes", json_object_new_string(hex));
	} else {
		json_object_object_add(o, "to", e->to ? jloc(x->st, e->to) : NULL);
	}
	return o;
}

static const char *sig_name(int sig)
{
	static char buf[16];
	const char *a = sig > 0 ? sigabbrev_np(sig) : NULL;

	snprintf(buf, sizeof(buf), "SIG%s", a ? a : "?");
	return buf;
}

/* Signals whose siginfo has the faulting address */
static bool fault_sig(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

/* The signal of a thread's NT_SIGINFO, else of its NT_PRSTATUS. */
static int thread_sig(const struct core_thread *t)
{
	return t->have_si ? t->sig_no : t->cursig;
}

/*
 * Did the process crash: the first thread's signal is one whose default
 * action dumps core (signal(7)); the kernel writes the thread that dumps
 * first.  gdb's gcore writes the signal the process stopped with: SIGSTOP
 * when gdb attached, SIGTRAP at a breakpoint or a step, SIGINT at ^C: not
 * a crash, but for a fault it stopped at.
 */
static bool core_crashed(const struct core *c)
{
	static const int core_sigs[] = {
		SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGXCPU, SIGXFSZ,
		SIGSYS,
	};
	int sig = c->nr_th ? thread_sig(&c->th[0]) : 0;
	size_t i;

	if (c->by_gdb && sig == SIGTRAP)
		return false;
	for (i = 0; sig && i < ARRAY_SIZE(core_sigs); i++)
		if (sig == core_sigs[i])
			return true;
	return false;
}

/* How the end of the trace relates to NT_PRSTATUS's rip. */
static const char *rip_check(const struct core_thread *t)
{
	if (t->how == END_ASYNC)
		return t->end_ip == t->rip ? "= NT_PRSTATUS rip" : "!= NT_PRSTATUS rip";
	if (t->how == END_SYSCALL)
		return t->end_ip + t->last.size == t->rip ?
			"in a system call; NT_PRSTATUS rip is the next instruction" :
			"in a system call; != NT_PRSTATUS rip";
	if (t->have_last && t->lost_end)
		return "the last instruction decoded: the trace after it could not be decoded";
	if (t->have_last)
		return "the trace ends after it without a disable; NT_PRSTATUS rip not compared";
	return "nothing decoded";
}

static bool rip_ok(const struct core_thread *t)
{
	return (t->how == END_ASYNC && t->end_ip == t->rip) ||
	       (t->how == END_SYSCALL && t->end_ip + t->last.size == t->rip);
}

static const char * const flag_names[] = { "wrapped", "paused", "error", "clamped" };
#define NR_FLAGS	ARRAY_SIZE(flag_names)

static void print_flags(FILE *f, uint32_t flags)
{
	unsigned int i, n = 0;

	for (i = 0; i < NR_FLAGS; i++)
		if (flags & (1U << i))
			fprintf(f, "%s%s", n++ ? "," : "", flag_names[i]);
	if (flags >> NR_FLAGS)
		fprintf(f, "%sunknown 0x%x", n++ ? "," : "", flags & ~((1U << NR_FLAGS) - 1));
	if (!n)
		fprintf(f, "none");
}

static const char *end_how(const struct core_thread *t)
{
	return t->how == END_ASYNC ? "fault" : t->how == END_SYSCALL ? "syscall" :
	       t->lost_end ? "decode-error" : t->have_last ? "trace-end" : "none";
}

static struct json_object *json_thread(struct ctx *x, struct core_thread *t, bool crashed)
{
	const struct itrace_note *h = &t->note;
	uint64_t i, n = t->nr_ents < x->o->n ? t->nr_ents : x->o->n;
	int sig = thread_sig(t);
	struct json_object *o = json_object_new_object(), *tr, *a, *e;
	unsigned int k;

	json_object_object_add(o, "tid", json_object_new_int64(t->tid));
	json_object_object_add(o, "crashed", json_object_new_boolean(crashed));
	json_object_object_add(o, "signal", json_object_new_int(sig));
	json_object_object_add(o, "signal_name", json_object_new_string(sig_name(sig)));
	if (t->have_si)
		json_object_object_add(o, "si_code", json_object_new_int(t->sig_code));
	if (t->have_si && fault_sig(sig))
		json_object_object_add(o, "si_addr", jaddr(t->sig_addr));
	json_object_object_add(o, "rip", jloc(x->st, t->rip));
	if (!t->has_note || t->bad[0]) {
		json_object_object_add(o, "trace", NULL);
		if (t->bad[0])
			json_object_object_add(o, "note_error", jstr(t->bad));
		return o;
	}
	tr = json_object_new_object();
	json_object_object_add(tr, "bytes", json_object_new_uint64(h->trace_size));
	json_object_object_add(tr, "buf_size", json_object_new_uint64(h->buf_size));
	a = json_object_new_array();
	for (k = 0; k < NR_FLAGS; k++)
		if (h->flags & (1U << k))
			json_object_array_add(a, json_object_new_string(flag_names[k]));
	json_object_object_add(tr, "flags", a);
	json_object_object_add(tr, "flags_value", json_object_new_int64(h->flags));
	json_object_object_add(tr, "pmu", jstr(h->pmu_name));
	json_object_object_add(tr, "config", jaddr(h->config));
	json_object_object_add(tr, "pauses", json_object_new_uint64(h->pauses));
	json_object_object_add(tr, "decoded_from", json_object_new_uint64(t->from));
	json_object_object_add(o, "trace", tr);
	json_object_object_add(o, "decoded_insns", json_object_new_uint64(t->insns));
	a = json_object_new_array();
	for (i = 0; i < t->errors && i < NR_ERR_MSGS; i++)
		json_object_array_add(a, jstr(t->errmsg[i]));
	if (t->walk == 1)
		json_object_array_add(a, json_object_new_string(NO_PSB));
	json_object_object_add(o, "errors", a);
	json_object_object_add(o, "nr_errors", json_object_new_uint64(t->errors));
	json_object_object_add(o, "hidden_ld_so", json_object_new_uint64(t->hidden));
	a = json_object_new_array();
	for (i = t->nr_ents - n; i < t->nr_ents; i++)
		json_object_array_add(a, json_ent(x, &t->ring[i % x->o->n]));
	json_object_object_add(o, x->o->insn ? "insns" : "branches", a);
	e = json_object_new_object();
	json_object_object_add(e, "how", json_object_new_string(end_how(t)));
	json_object_object_add(e, "at", t->have_last || t->how ? jloc(x->st, t->end_ip) : NULL);
	json_object_object_add(e, "matches_rip", json_object_new_boolean(rip_ok(t)));
	json_object_object_add(o, "end", e);
	a = json_object_new_array();
	for (k = t->depth; k-- > 0;)
		json_object_array_add(a, jloc(x->st, t->stack[k]));
	json_object_object_add(o, "stack", a);
	json_object_object_add(o, "stack_complete",
			       json_object_new_boolean(!t->from && !t->dropped));
	return o;
}

/* The call stack at the end of the trace, innermost first: the call sites. */
static void print_stack(struct ctx *x, struct core_thread *t)
{
	unsigned int k;

	fprintf(x->out, "  call stack from the trace (calls not yet returned, innermost first):\n");
	if (t->have_last || t->how) {
		fprintf(x->out, "    #0  ");
		print_loc(x, t->end_ip);
		fprintf(x->out, "\n");
	}
	for (k = t->depth; k-- > 0;) {
		fprintf(x->out, "    #%-2u ", t->depth - k);
		print_loc(x, t->stack[k]);
		fprintf(x->out, "\n");
	}
	if (t->from || t->dropped)
		fprintf(x->out, "    ... older frames: calls before trace offset 0x%llx (%s)\n",
			(unsigned long long)t->from, t->dropped ? "deeper than kept" :
			"not decoded; the trace before it may have them");
}

static void print_thread(struct ctx *x, struct core_thread *t, bool crashed)
{
	const struct itrace_note *h = &t->note;
	uint64_t i, n = t->nr_ents < x->o->n ? t->nr_ents : x->o->n;
	FILE *f = x->out;
	int sig = thread_sig(t);

	fprintf(f, "thread %u: signal %d %s", t->tid, sig, sig_name(sig));
	if (t->have_si && fault_sig(sig))
		fprintf(f, " (code %d, addr 0x%llx)", t->sig_code, (unsigned long long)t->sig_addr);
	else if (t->have_si)
		fprintf(f, " (code %d)", t->sig_code);
	fprintf(f, "%s\n  rip ", crashed ? ", the crashing thread" : "");
	print_loc(x, t->rip);
	fprintf(f, "\n");
	if (!t->has_note) {
		fprintf(f, "  trace: none (no NT_ITRACE note: RLIMIT_ITRACE was 0?)\n");
		return;
	}
	if (t->bad[0]) {
		fprintf(f, "  trace: unusable: %s\n", t->bad);
		return;
	}
	fprintf(f, "  trace: %llu bytes (buffer %llu), flags ", (unsigned long long)h->trace_size,
		(unsigned long long)h->buf_size);
	print_flags(f, h->flags);
	fprintf(f, ", %s config 0x%llx\n", h->pmu_name, (unsigned long long)h->config);
	if (h->flags & ITRACE_NOTE_PAUSED)
		fprintf(f, "  paused %llu times: the trace has gaps\n",
			(unsigned long long)h->pauses);
	if (h->flags & ITRACE_NOTE_ERROR)
		fprintf(f, "  the PMU reported lost trace\n");
	if (h->flags & ITRACE_NOTE_CLAMPED)
		fprintf(f, "  RLIMIT_CORE cut the older trace: decoded from its first %s\n",
			t->bts ? "record" : "PSB");
	if (t->walk == 1)
		fprintf(f, "  no PSB in the trace: nothing to decode\n");
	fprintf(f, "  decoded %llu instructions, %llu errors\n", (unsigned long long)t->insns,
		(unsigned long long)t->errors);
	if (t->from)
		fprintf(f, "  (from trace offset 0x%llx: the last %llu bytes hold the %lu %s)\n",
			(unsigned long long)t->from,
			(unsigned long long)(h->trace_size - t->from), x->o->n,
			x->o->insn ? "instructions" : "branches");
	for (i = 0; i < t->errors && i < NR_ERR_MSGS; i++)
		fprintf(f, "  %s\n", t->errmsg[i]);
	fprintf(f, "  last %llu %s, oldest first:\n", (unsigned long long)n,
		x->o->insn ? "instructions" : "branches");
	for (i = t->nr_ents - n; i < t->nr_ents; i++)
		print_ent(x, &t->ring[i % x->o->n]);
	if (t->have_last || t->how) {
		fprintf(f, "  %s ", crashed ? "crash:" : "end:  ");
		print_loc(x, t->end_ip);
		fprintf(f, "  %s\n", rip_check(t));
	}
	if (t->hidden)
		fprintf(f, "  (%llu %s in the dynamic linker (its start-up, lazy binding) %s)\n",
			(unsigned long long)t->hidden, x->o->insn ? "instructions" : "branches",
			"left out; --all shows them");
	if (t->have_last || t->how)
		print_stack(x, t);
}

static uint32_t core_pid(const struct core *c)
{
	return c->pid ? c->pid : c->th[0].tid;
}

static const char *miss_why(const struct missing *m)
{
	return m->why ? m->why : strerror(m->err);
}

static void print_report(struct ctx *x)
{
	const struct core *c = x->c;
	size_t i, with = 0;
	FILE *f = x->out;

	for (i = 0; i < c->nr_th; i++)
		with += c->th[i].has_note && !c->th[i].bad[0];
	if (x->o->json) {
		struct json_object *doc = jdoc("itrace-core"), *a;

		json_object_object_add(doc, "core", jstr(c->path));
		json_object_object_add(doc, "pid", json_object_new_int64(core_pid(c)));
		json_object_object_add(doc, "exe", x->exe ? jstr(x->exe) : NULL);
		json_object_object_add(doc, "threads_with_trace", json_object_new_uint64(with));
		a = json_object_new_array();
		for (i = 0; i < x->nr_miss; i++) {
			struct json_object *m = json_object_new_object();

			json_object_object_add(m, "path", jstr(x->miss[i].path));
			json_object_object_add(m, "error", jstr(miss_why(&x->miss[i])));
			json_object_array_add(a, m);
		}
		json_object_object_add(doc, "missing", a);
		a = json_object_new_array();
		for (i = 0; i < c->nr_th; i++)
			json_object_array_add(a, json_thread(x, &c->th[i],
							     i == 0 && core_crashed(c)));
		json_object_object_add(doc, "threads", a);
		jprint(f, doc, 1);
		json_object_put(doc);
		return;
	}
	fprintf(f, "core %s: pid %u (%s), %zu thread%s, %zu with trace\n", c->path, core_pid(c),
		x->exe ? x->exe : c->psname[0] ? c->psname : "?", c->nr_th,
		c->nr_th == 1 ? "" : "s", with);
	for (i = 0; i < x->nr_miss; i++)
		fprintf(f, "missing: %s: %s (code there cannot be decoded)\n", x->miss[i].path,
			miss_why(&x->miss[i]));
	for (i = 0; i < c->nr_th; i++)
		print_thread(x, &c->th[i], i == 0 && core_crashed(c));
}

/* ---- the command ----------------------------------------------------- */

static void usage_core(FILE *f)
{
	fprintf(f,
		"usage: itrace core [--exe PATH] [--sysroot DIR] [--insn] [--json] [--all] [-n N] CORE\n"
		"  the last N (default %d) branches of each thread before the crash, oldest\n"
		"  first, and the call stack the trace saw, from the NT_ITRACE notes of an ELF\n"
		"  core dump (RLIMIT_ITRACE)\n"
		"  --exe PATH     the program's ELF file, if not at its path in the core\n"
		"  --sysroot DIR  read the mapped files under DIR\n"
		"  --insn         the last N instructions instead of branches\n"
		"  --json         one JSON document (tools/itrace/itrace.schema.json)\n"
		"  --all          keep the dynamic linker's lazy-binding branches in the tail\n"
		"  --no-demangle  C++ symbols as they are in the ELF file\n"
		"  exit status: 0 report printed (decode problems are in it), 1 unusable\n"
		"  core or malformed NT_ITRACE note, 2 usage\n", CORE_DEFAULT_N);
}

static int run_core(struct ctx *x)
{
	struct core *c = x->c;
	size_t i;
	int ret = 0;

	x->st = sym_new();
	if (!x->st || itrace_image_init(&x->im, "core")) {
		fprintf(stderr, "itrace: out of memory\n");
		return 1;
	}
	sym_set_demangle(x->st, !x->no_demangle);
	if (!c->nr_maps && core_modules(c, x->o)) {
		fprintf(stderr, "itrace: out of memory\n");
		return 1;
	}
	build_image(x);
	for (i = 0; i < c->nr_th; i++) {
		struct core_thread *t = &c->th[i];

		if (t->bad[0]) {
			fprintf(stderr, "itrace: %s: thread %u: %s\n", c->path, t->tid, t->bad);
			ret = 1;
			continue;
		}
		if (!t->has_note)
			continue;
		if (t->note.tid != t->tid)
			fprintf(stderr,
				"itrace: %s: warning: NT_ITRACE note of tid %u follows NT_PRSTATUS of %u\n",
				c->path, t->note.tid, t->tid);
		t->bts = !strcmp(t->note.pmu_name, "intel_bts");
		if (!t->bts && strcmp(t->note.pmu_name, "intel_pt")) {
			snprintf(t->bad, sizeof(t->bad),
				 "trace of PMU '%s': only intel_pt and intel_bts are decoded",
				 t->note.pmu_name);
			continue;
		}
		if (t->bts ? decode_bts_thread(x, t) : decode_thread(x, t)) {
			fprintf(stderr, "itrace: out of memory\n");
			return 1;
		}
	}
	print_report(x);
	return ret;
}

int cmd_core(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "exe",     required_argument, NULL, 'e' },
		{ "sysroot", required_argument, NULL, 'r' },
		{ "insn",    no_argument,       NULL, 'i' },
		{ "json",    no_argument,       NULL, 'j' },
		{ "all",     no_argument,       NULL, 'a' },
		{ "no-demangle", no_argument,   NULL, 'D' },
		{ "help",    no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct core_opts o = { .n = CORE_DEFAULT_N };
	struct core c = { 0 };
	struct ctx x = { .c = &c, .o = &o, .out = stdout, .vdso_fd = -1 };
	char err[512], *end;
	struct stat sb;
	size_t i;
	int fd, ch, ret;
	bool no_demangle = false;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "hn:", opts, NULL)) != -1) {
		switch (ch) {
		case 'e':
			o.exe = optarg;
			break;
		case 'r':
			o.sysroot = optarg;
			break;
		case 'i':
			o.insn = true;
			break;
		case 'j':
			o.json = true;
			break;
		case 'a':
			o.all = true;
			break;
		case 'D':
			no_demangle = true;
			break;
		case 'n':
			errno = 0;
			o.n = strtoul(optarg, &end, 0);
			if (errno || *end || !o.n || o.n > 1000000) {
				fprintf(stderr, "itrace: -n wants a number from 1 to 1000000\n");
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage_core(stdout);
			return 0;
		default:
			usage_core(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		usage_core(stderr);
		return EXIT_USAGE;
	}
	c.path = argv[optind];
	fd = open(c.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb)) {
		fprintf(stderr, "itrace: %s: %s\n", c.path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	c.size = sb.st_size;
	if (core_parse(&c, fd, err, sizeof(err))) {
		fprintf(stderr, "itrace: %s: %s\n", c.path, err);
		ret = 1;
	} else {
		x.no_demangle = no_demangle;
		ret = run_core(&x);
	}
	if (fflush(stdout))
		ret = 1;
	if (x.vdso_fd >= 0)
		close(x.vdso_fd);
	itrace_image_fini(&x.im);
	sym_free(x.st);
	for (i = 0; i < x.nr_miss; i++)
		free(x.miss[i].path);
	free(x.miss);
	for (i = 0; i < c.nr_th; i++)
		free(c.th[i].ring);
	free(c.th);
	for (i = 0; i < c.nr_maps; i++)
		free(c.maps[i].path);
	free(c.maps);
	for (i = 0; i < c.nr_names; i++)
		free(c.names[i]);
	free(c.names);
	free(c.ph);
	elf_end(c.elf);
	close(fd);
	return ret;
}
