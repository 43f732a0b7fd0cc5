// SPDX-License-Identifier: GPL-2.0
/*
 * itrace decode: rebuild the instruction flow of a recording with libipt.
 *
 * The image is built from the executable mappings of the perf stream
 * (MMAP/MMAP2; [vdso] from the bytes saved in the file).  Every contiguous
 * segment of trace gets its own pt_insn decoder.  Decode errors are
 * reported with their trace offset, the decoder resynchronizes at the next
 * PSB and the command exits non-zero: there is never a silent gap.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <intel-pt.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "itrace.h"
#include "itrace-file.h"
#include "sym.h"

#ifndef PERF_RECORD_ITRACE_LOST
#define PERF_RECORD_ITRACE_LOST	23
#endif

#define NR_KEEP		8	/* flow lines kept for the summary */
#define NR_PROG		40	/* calls into the program kept for it */
#define LINE_MAX_LEN	256

struct fstat {
	char		*key;		/* name, or module:name outside the program */
	uint64_t	start;
	uint64_t	insns, calls, taken, not_taken, syscalls;
};

enum pending { P_NONE, P_COND, P_CALL, P_RET, P_JUMP };

struct dstate {
	const struct decode_opts *o;
	FILE		*out;
	struct itrace_data *d;
	struct symtab	*st;
	struct pt_image	*image;
	char		*exe;		/* module name of the program */
	char		vdso_path[64];

	/* totals */
	uint64_t	insns, cond, taken, not_taken, calls, rets, jumps;
	uint64_t	syscalls, gaps, errors, far;
	uint64_t	kernel_insns;	/* at addresses of the upper half */

	/* per function, open addressing */
	struct fstat	*fs;
	size_t		nr_fs, cap_fs;

	/* current function */
	struct sym_info	cur;
	struct fstat	*cur_fs;
	int		have_cur;

	/* branch waiting for the next IP */
	enum pending	pend;
	uint64_t	pend_next;	/* address of the next instruction */
	struct fstat	*pend_fs;
	struct sym_info	pend_from;
	int		depth;

	/* stream offsets where trace stopped and resumed (loss records) */
	uint64_t	*splits;
	size_t		nr_splits;

	/* flow lines for the summary */
	char		first[NR_KEEP][LINE_MAX_LEN];
	char		last[NR_KEEP][LINE_MAX_LEN];
	uint64_t	nr_lines;
	char		prog[NR_PROG][LINE_MAX_LEN];	/* calls into the program */
	uint64_t	nr_prog;
	uint64_t	seg_base;	/* stream offset of the current segment */
};

/* ---- per-function counters ------------------------------------------- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static struct fstat *fs_get(struct dstate *s, const char *key, uint64_t start)
{
	size_t i;

	if (2 * (s->nr_fs + 1) > s->cap_fs) {
		size_t ncap = s->cap_fs ? 2 * s->cap_fs : 1024, j;
		struct fstat *n = calloc(ncap, sizeof(*n));

		if (!n) {
			fprintf(stderr, "itrace: out of memory\n");
			exit(1);
		}
		for (j = 0; j < s->cap_fs; j++) {
			if (!s->fs[j].key)
				continue;
			i = hash_str(s->fs[j].key) & (ncap - 1);
			while (n[i].key)
				i = (i + 1) & (ncap - 1);
			n[i] = s->fs[j];
		}
		free(s->fs);
		s->fs = n;
		s->cap_fs = ncap;
	}
	i = hash_str(key) & (s->cap_fs - 1);
	while (s->fs[i].key) {
		if (!strcmp(s->fs[i].key, key))
			return &s->fs[i];
		i = (i + 1) & (s->cap_fs - 1);
	}
	s->fs[i].key = strdup(key);
	s->fs[i].start = start;
	s->nr_fs++;
	return &s->fs[i];
}

static int in_exe(struct dstate *s, const struct sym_info *si)
{
	return s->exe && !strcmp(si->module, s->exe);
}

static struct fstat *fs_of(struct dstate *s, const struct sym_info *si)
{
	char key[LINE_MAX_LEN];

	if (si->name && in_exe(s, si))
		snprintf(key, sizeof(key), "%.*s", sym_name_len(si->name), si->name);
	else if (si->name)
		snprintf(key, sizeof(key), "%s:%.*s", si->module, sym_name_len(si->name), si->name);
	else
		snprintf(key, sizeof(key), "%s:[unknown]", si->module);
	return fs_get(s, key, si->start);
}

/* ---- output ---------------------------------------------------------- */

static void fmt_sym(struct dstate *s, char *buf, size_t len, uint64_t ip,
		    const struct sym_info *si)
{
	const char *mod = in_exe(s, si) || !si->module ? "" : si->module;
	const char *sep = *mod ? " [" : "", *end = *mod ? "]" : "";

	if (!si->name)
		snprintf(buf, len, "0x%llx%s%s%s", (unsigned long long)ip, sep, mod, end);
	else if (ip != si->start)
		snprintf(buf, len, "%.*s+0x%llx%s%s%s", sym_name_len(si->name), si->name,
			 (unsigned long long)(ip - si->start), sep, mod, end);
	else
		snprintf(buf, len, "%.*s%s%s%s", sym_name_len(si->name), si->name, sep, mod, end);
}

/* One line of the function-level flow. */
static void flow_line(struct dstate *s, const char *what, uint64_t ip,
		      const struct sym_info *si)
{
	char sym[LINE_MAX_LEN - 64], line[LINE_MAX_LEN];
	int indent = s->depth < 0 ? 0 : (s->depth > 30 ? 30 : s->depth);

	/* only the flow and the summary show lines: not worth formatting */
	if (s->o->mode != DECODE_FLOW && s->o->mode != DECODE_SUMMARY) {
		s->nr_lines++;
		return;
	}
	fmt_sym(s, sym, sizeof(sym), ip, si);
	snprintf(line, sizeof(line), "%10llu %-7s %*s%s",
		 (unsigned long long)s->insns, what, 2 * indent, "", sym);
	if (s->nr_lines < NR_KEEP)
		memcpy(s->first[s->nr_lines], line, sizeof(line));
	memcpy(s->last[s->nr_lines % NR_KEEP], line, sizeof(line));
	s->nr_lines++;
	if (in_exe(s, si) && (!strcmp(what, "call") || !strcmp(what, "syscall"))) {
		if (s->nr_prog < NR_PROG)
			memcpy(s->prog[s->nr_prog], line, sizeof(line));
		s->nr_prog++;
	}
	if (s->o->mode == DECODE_FLOW)
		fprintf(s->out, "%s\n", line);
}

static void note(struct dstate *s, const char *what, uint64_t ip)
{
	struct sym_info si = { .name = "", .module = "", .start = ip };

	if (ip)
		sym_lookup(s->st, ip, &si);
	flow_line(s, what, ip, &si);
}

static const char *iclass_name(enum pt_insn_class c)
{
	switch (c) {
	case ptic_call:		return "call";
	case ptic_return:	return "ret";
	case ptic_jump:		return "jmp";
	case ptic_cond_jump:	return "jcc";
	case ptic_far_call:	return "far-call";
	case ptic_far_return:	return "far-ret";
	case ptic_far_jump:	return "far-jmp";
	case ptic_ptwrite:	return "ptwrite";
	case ptic_other:	return "";
	default:		return "?";
	}
}

/* ---- the instruction flow -------------------------------------------- */

/* The previous instruction was a branch: next_ip tells where it went. */
static void resolve(struct dstate *s, uint64_t next_ip)
{
	struct sym_info t;

	switch (s->pend) {
	case P_NONE:
		return;
	case P_COND:
		if (next_ip == s->pend_next) {
			s->not_taken++;
			s->pend_fs->not_taken++;
		} else {
			s->taken++;
			s->pend_fs->taken++;
		}
		break;
	case P_CALL:
		sym_lookup(s->st, next_ip, &t);
		fs_of(s, &t)->calls++;
		s->depth++;
		flow_line(s, "call", next_ip, &t);
		break;
	case P_RET:
		sym_lookup(s->st, next_ip, &t);
		s->depth--;
		flow_line(s, "return", next_ip, &t);
		break;
	case P_JUMP:
		if (next_ip >= s->pend_from.start && next_ip < s->pend_from.end)
			break;
		sym_lookup(s->st, next_ip, &t);
		if (t.name && s->pend_from.name && t.start == s->pend_from.start)
			break;
		flow_line(s, "jump", next_ip, &t);
		break;
	}
	s->pend = P_NONE;
}

/* A system call: SYSCALL, SYSENTER, or INT 0x80 (32-bit programs). */
static int is_syscall(const struct pt_insn *in)
{
	if (in->size < 2)
		return 0;
	return (in->raw[0] == 0x0f && (in->raw[1] == 0x05 || in->raw[1] == 0x34)) ||
	       (in->raw[0] == 0xcd && in->raw[1] == 0x80);
}

static void on_insn(void *ctx, const struct pt_insn *in)
{
	struct dstate *s = ctx;

	if (s->pend)
		resolve(s, in->ip);
	if (!s->have_cur || in->ip < s->cur.start || in->ip >= s->cur.end) {
		sym_lookup(s->st, in->ip, &s->cur);
		s->cur_fs = fs_of(s, &s->cur);
		s->have_cur = 1;
	}
	s->insns++;
	s->cur_fs->insns++;
	if (in->ip >> 63)
		s->kernel_insns++;

	if (s->o->mode == DECODE_INSN) {
		char sym[LINE_MAX_LEN];
		uint8_t i;

		fmt_sym(s, sym, sizeof(sym), in->ip, &s->cur);
		fprintf(s->out, "%10llu %016llx %-40s ", (unsigned long long)s->insns,
			(unsigned long long)in->ip, sym);
		for (i = 0; i < in->size; i++)
			fprintf(s->out, "%02x", in->raw[i]);
		fprintf(s->out, " %s\n", iclass_name(in->iclass));
	}

	switch (in->iclass) {
	case ptic_cond_jump:
		s->cond++;
		s->pend = P_COND;
		s->pend_next = in->ip + in->size;
		s->pend_fs = s->cur_fs;
		break;
	case ptic_call:
		s->calls++;
		s->pend = P_CALL;
		break;
	case ptic_return:
		s->rets++;
		s->pend = P_RET;
		break;
	case ptic_jump:
		s->jumps++;
		s->pend = P_JUMP;
		s->pend_from = s->cur;
		break;
	case ptic_far_call:
	case ptic_far_return:
	case ptic_far_jump:
		s->far++;
		if (is_syscall(in)) {
			s->syscalls++;
			s->cur_fs->syscalls++;
			flow_line(s, "syscall", in->ip, &s->cur);
		}
		break;
	default:
		break;
	}
}

static void decode_error(void *ctx, struct pt_insn_decoder *dec, int err, uint64_t ip)
{
	struct dstate *s = ctx;
	uint64_t off = 0;
	struct sym_info si;
	char sym[LINE_MAX_LEN];

	pt_insn_get_offset(dec, &off);
	sym_lookup(s->st, ip, &si);
	fmt_sym(s, sym, sizeof(sym), ip, &si);
	fprintf(stderr,
		"itrace: %s: decode error at trace offset 0x%llx (after %llu instructions, last ip %s): %s\n",
		s->o->name, (unsigned long long)(s->seg_base + off),
		(unsigned long long)s->insns, sym, pt_errstr(pt_errcode(err)));
	s->errors++;
	s->pend = P_NONE;
	s->have_cur = 0;
	flow_line(s, "[error]", ip, &si);
}

static void on_event(void *ctx, struct pt_insn_decoder *dec, const struct pt_event *ev)
{
	struct dstate *s = ctx;
	uint64_t off = 0;

	switch (ev->type) {
	case ptev_overflow:
		pt_insn_get_offset(dec, &off);
		fprintf(stderr,
			"itrace: %s: trace overflow (hardware lost trace) at trace offset 0x%llx\n",
			s->o->name, (unsigned long long)(s->seg_base + off));
		s->gaps++;
		s->pend = P_NONE;
		note(s, "[overflow]", ev->variant.overflow.ip);
		break;
	case ptev_enabled:
		if (!s->nr_lines)
			note(s, "start", ev->variant.enabled.ip);
		if (s->o->mode == DECODE_INSN)
			fprintf(s->out, "           [enabled at 0x%llx]\n",
				(unsigned long long)ev->variant.enabled.ip);
		break;
	case ptev_disabled:
	case ptev_async_disabled:
		if (s->o->mode == DECODE_INSN)
			fprintf(s->out, "           [disabled]\n");
		break;
	default:
		break;
	}
}

void itrace_pt_config(struct pt_config *cfg, const uint8_t *trace, size_t size,
		      uint32_t vendor, uint32_t family, uint32_t model, uint32_t stepping)
{
	pt_config_init(cfg);
	cfg->begin = (uint8_t *)trace;
	cfg->end = cfg->begin + size;
	if (vendor == ITRACE_CPU_INTEL) {
		cfg->cpu.vendor = pcv_intel;
		cfg->cpu.family = family;
		cfg->cpu.model = model;
		cfg->cpu.stepping = stepping;
		if (pt_cpu_errata(&cfg->errata, &cfg->cpu) < 0)
			memset(&cfg->errata, 0, sizeof(cfg->errata));
	}
}

int itrace_pt_walk(const struct pt_config *cfg, struct pt_image *image,
		   const struct pt_walk_ops *ops, void *ctx)
{
	struct pt_insn_decoder *dec = pt_insn_alloc_decoder(cfg);
	uint64_t last_ip = 0;
	struct pt_event ev;
	struct pt_insn in;
	int status;

	if (!dec)
		return -pte_nomem;
	pt_insn_set_image(dec, image);
	status = pt_insn_sync_forward(dec);
	if (status == -pte_eos) {
		pt_insn_free_decoder(dec);
		return 1;
	}
	while (status != -pte_eos) {
		if (status < 0) {
			ops->error(ctx, dec, status, last_ip);
			status = pt_insn_sync_forward(dec);
			continue;
		}
		while (status & pts_event_pending) {
			status = pt_insn_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
			ops->event(ctx, dec, &ev);
		}
		if (status < 0)
			continue;
		if (status & pts_eos)
			break;
		memset(&in, 0, sizeof(in));
		status = pt_insn_next(dec, &in, sizeof(in));
		if (status < 0) {
			if (status == -pte_eos)
				break;
			/* in.ip is set when the instruction itself failed */
			if (in.ip)
				last_ip = in.ip;
			continue;
		}
		last_ip = in.ip;
		ops->insn(ctx, &in);
	}
	pt_insn_free_decoder(dec);
	return 0;
}

static void decode_segment(struct dstate *s, const struct itrace_segment *seg)
{
	static const struct pt_walk_ops ops = {
		.insn = on_insn,
		.event = on_event,
		.error = decode_error,
	};
	const struct itrace_file_header *h = &s->d->hdr;
	struct pt_config cfg;
	int ret;

	itrace_pt_config(&cfg, s->d->trace + seg->buf_offset, seg->size, h->cpu_vendor,
			 h->cpu_family, h->cpu_model, h->cpu_stepping);
	s->seg_base = seg->stream_offset;
	ret = itrace_pt_walk(&cfg, s->image, &ops, s);
	if (ret < 0) {
		fprintf(stderr, "itrace: cannot allocate the libipt decoder\n");
		s->errors++;
	} else if (ret > 0) {
		fprintf(stderr,
			"itrace: %s: no PSB in %zu bytes of trace at offset 0x%llx: nothing to decode\n",
			s->o->name, seg->size, (unsigned long long)seg->stream_offset);
		s->errors++;
	}
	/* a branch at the very end of the trace has no known outcome */
	s->pend = P_NONE;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Trace on both sides of a loss point is decoded by separate decoders: the
 * bytes are contiguous in the buffer, the packet stream is not.  The gap
 * itself was counted with its loss record.
 */
static void decode_split(struct dstate *s, const struct itrace_segment *seg)
{
	struct itrace_segment part = *seg;
	uint64_t end = seg->stream_offset + seg->size;
	size_t i;

	for (i = 0; i < s->nr_splits; i++) {
		uint64_t at = s->splits[i];

		if (at <= part.stream_offset || at >= end)
			continue;
		part.size = at - part.stream_offset;
		decode_segment(s, &part);
		part.buf_offset += part.size;
		part.stream_offset = at;
		part.size = end - at;
		s->depth = 0;
		s->have_cur = 0;
		note(s, "[lost]", 0);
	}
	decode_segment(s, &part);
}

/* ---- sideband: the address space ------------------------------------- */

const char *itrace_base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

int itrace_tmp_image(const void *buf, size_t size, char *path, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	int fd, err = 0;

	snprintf(path, len, "%.40s/itrace-image-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, size) != (ssize_t)size)
		err = errno ? -errno : -EIO;
	close(fd);
	if (err) {
		unlink(path);
		path[0] = 0;
	}
	return err;
}

int itrace_image_add(struct pt_image *image, struct symtab *st, const char *name,
		     const char *path, uint64_t addr, uint64_t len, uint64_t pgoff)
{
	struct stat sb;
	int err;

	if (stat(path, &sb))
		return -errno;
	if ((uint64_t)sb.st_size <= pgoff)
		return 1;
	if (len > (uint64_t)sb.st_size - pgoff)
		len = sb.st_size - pgoff;
	err = pt_image_add_file(image, path, pgoff, len, NULL, addr);
	if (err < 0)
		fprintf(stderr, "itrace: warning: %s at 0x%llx: %s\n", path,
			(unsigned long long)addr, pt_errstr(pt_errcode(err)));
	if (sym_add_mapping(st, name, path, addr, len, pgoff))
		fprintf(stderr, "itrace: warning: no symbols for %s\n", path);
	return 0;
}

static void add_mapping(struct dstate *s, const char *file, uint64_t addr,
			uint64_t len, uint64_t pgoff)
{
	const char *path = file, *name = itrace_base_name(file);
	int err;

	if (!strcmp(file, "[vdso]")) {
		if (!s->d->vdso_size) {
			fprintf(stderr,
				"itrace: warning: [vdso] mapped but not saved in the file\n");
			return;
		}
		if (!s->vdso_path[0]) {
			err = itrace_tmp_image(s->d->vdso, s->d->vdso_size, s->vdso_path,
					       sizeof(s->vdso_path));
			if (err) {
				fprintf(stderr, "itrace: cannot write the vdso image to %s: %s\n",
					s->vdso_path, strerror(-err));
				return;
			}
		}
		path = s->vdso_path;
		name = "[vdso]";
	} else if (file[0] != '/') {
		return;		/* //anon, [uprobes]...: no file to decode from */
	}
	err = itrace_image_add(s->image, s->st, name, path, addr, len, pgoff);
	if (err < 0)
		fprintf(stderr, "itrace: warning: %s: %s (code there cannot be decoded)\n",
			path, strerror(-err));
	if (err)
		return;
	if (!s->exe)
		s->exe = strdup(name);
}

/*
 * --kernel FILE: the kernel's code for a recording made with record -k, at
 * the addresses it ran at (the kernel runs unrelocated: no KASLR).  FILE is
 *  - the kernel's ELF image (vmlinux, ET_EXEC): its executable PT_LOAD
 *    segments at their link addresses, with its symbols; code the kernel
 *    patched at boot (alternatives, static keys, jump labels) differs;
 *  - an ELF core file of kernel memory (ET_CORE) such as /proc/kcore or the
 *    copy of its text perf record --kcore makes: every PT_LOAD segment with
 *    contents at its p_vaddr, the text as it ran; symbols from a file
 *    "kallsyms" beside it, if there is one (perf's kcore_dir has it);
 *  - a directory perf record --kcore wrote: its kcore_dir/kcore.
 * Returns 0, or -1 when FILE is none of these or holds no code.
 */
static int add_kernel(struct dstate *s, const char *path)
{
	size_t i, nr = 0, added = 0;
	char *kcore = NULL;
	struct stat sb;
	GElf_Ehdr eh;
	GElf_Phdr ph;
	Elf *elf;
	int fd, core = 0;

	if (!stat(path, &sb) && S_ISDIR(sb.st_mode)) {
		if (asprintf(&kcore, "%s/kcore_dir/kcore", path) < 0) {
			fprintf(stderr, "itrace: out of memory\n");
			return -1;
		}
		path = kcore;
	}
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "itrace: --kernel %s: %s\n", path, strerror(errno));
		free(kcore);
		return -1;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (fstat(fd, &sb) || !elf || elf_kind(elf) != ELF_K_ELF ||
	    !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nr)) {
		fprintf(stderr, "itrace: --kernel %s: not an ELF file\n", path);
		nr = 0;
	} else {
		core = eh.e_type == ET_CORE;
	}
	for (i = 0; i < nr; i++) {
		int err;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		if (!core) {
			if ((ph.p_flags & PF_X) &&
			    !itrace_image_add(s->image, s->st, itrace_base_name(path), path,
					      ph.p_vaddr, ph.p_filesz, ph.p_offset))
				added++;
			continue;
		}
		/* a core: contents only as far as the file goes */
		if (ph.p_offset >= (uint64_t)sb.st_size)
			continue;
		if (ph.p_filesz > (uint64_t)sb.st_size - ph.p_offset)
			ph.p_filesz = sb.st_size - ph.p_offset;
		err = pt_image_add_file(s->image, path, ph.p_offset, ph.p_filesz, NULL,
					ph.p_vaddr);
		if (err < 0)
			fprintf(stderr, "itrace: warning: %s at 0x%llx: %s\n", path,
				(unsigned long long)ph.p_vaddr, pt_errstr(pt_errcode(err)));
		else
			added++;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	if (!added && nr)
		fprintf(stderr, "itrace: --kernel %s: no %s\n", path,
			core ? "PT_LOAD segment with contents" : "executable segment");
	if (added && core) {
		const char *slash = strrchr(path, '/');
		char *ksyms = NULL;

		if (asprintf(&ksyms, "%.*skallsyms", slash ? (int)(slash - path + 1) : 0,
			     path) >= 0 && !access(ksyms, R_OK) && sym_add_kallsyms(s->st, ksyms))
			fprintf(stderr, "itrace: warning: %s: no text symbols\n", ksyms);
		free(ksyms);
	}
	free(kcore);
	return added ? 0 : -1;
}

/* Is @split already a known discontinuity of the trace? */
static bool has_split(const struct dstate *s, uint64_t split)
{
	size_t i;

	for (i = 0; i < s->nr_splits; i++)
		if (s->splits[i] == split)
			return true;
	return false;
}

/* Walk the perf stream: mappings, losses. */
static int scan_sideband(struct dstate *s)
{
	const uint8_t *p = s->d->perf;
	size_t len = s->d->perf_size, pos = 0;

	while (pos < len) {
		struct perf_event_header h;
		uint64_t v[3], split, *ns;

		if (len - pos < sizeof(h)) {
			fprintf(stderr,
				"itrace: %s: truncated perf record at sideband offset 0x%zx\n",
				s->o->name, pos);
			return -1;
		}
		memcpy(&h, p + pos, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - pos) {
			fprintf(stderr,
				"itrace: %s: bad perf record (type %u size %u) at sideband offset 0x%zx\n",
				s->o->name, h.type, h.size, pos);
			return -1;
		}
		switch (h.type) {
		case PERF_RECORD_MMAP:	/* hdr, pid, tid, addr, len, pgoff, filename */
			if (h.size <= 40 || (h.misc & PERF_RECORD_MISC_MMAP_DATA))
				break;
			memcpy(v, p + pos + 16, sizeof(v));
			add_mapping(s, strndupa((const char *)p + pos + 40, h.size - 40),
				    v[0], v[1], v[2]);
			break;
		/* MMAP2: ..., maj/min/ino or build id, prot, flags, filename */
		case PERF_RECORD_MMAP2: {
			uint32_t prot;

			if (h.size <= 72)
				break;
			memcpy(v, p + pos + 16, sizeof(v));
			memcpy(&prot, p + pos + 64, sizeof(prot));
			if (!(prot & PROT_EXEC))
				break;
			add_mapping(s, strndupa((const char *)p + pos + 72, h.size - 72),
				    v[0], v[1], v[2]);
			break;
		}
		case PERF_RECORD_LOST:
			fprintf(stderr,
				"itrace: %s: warning: sideband records were lost while recording; mappings may be missing\n",
				s->o->name);
			break;
		case PERF_RECORD_ITRACE_LOST:
		case PERF_RECORD_AUX:
			if (h.size < sizeof(h) + 24)
				break;
			memcpy(v, p + pos + sizeof(h), sizeof(v));
			if (h.type == PERF_RECORD_AUX && !(v[2] & PERF_AUX_FLAG_TRUNCATED))
				break;
			/*
			 * ITRACE_LOST: trace stopped and resumed at offset.
			 * AUX TRUNCATED: the buffer filled after the data it
			 * reports; what follows was written after a gap.
			 */
			split = h.type == PERF_RECORD_AUX ? v[0] + v[1] : v[0];
			/* One stop may be told by both records: one gap. */
			if (has_split(s, split))
				break;
			if (h.type == PERF_RECORD_AUX)
				fprintf(stderr,
					"itrace: %s: trace lost at trace offset 0x%llx (buffer full)\n",
					s->o->name, (unsigned long long)split);
			else
				fprintf(stderr,
					"itrace: %s: trace lost at trace offset 0x%llx (%llu bytes%s)\n",
					s->o->name, (unsigned long long)split,
					(unsigned long long)v[1], v[1] ? "" : ", size unknown");
			s->gaps++;
			ns = realloc(s->splits, (s->nr_splits + 1) * sizeof(*ns));
			if (ns) {
				s->splits = ns;
				s->splits[s->nr_splits++] = split;
			}
			break;
		default:
			break;
		}
		pos += h.size;
	}
	return 0;
}

/* One line per record of the perf stream. */
static int dump_sideband(struct itrace_data *d, const char *name, FILE *out)
{
	const uint8_t *p = d->perf;
	size_t len = d->perf_size, pos = 0;

	while (pos < len) {
		struct perf_event_header h;
		const uint8_t *r = p + pos;
		uint32_t u[4];
		uint64_t v[3];

		if (len - pos < sizeof(h))
			break;
		memcpy(&h, r, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - pos) {
			fprintf(stderr,
				"itrace: %s: bad perf record (type %u size %u) at sideband offset 0x%zx\n",
				name, h.type, h.size, pos);
			return 1;
		}
		fprintf(out, "%8zx ", pos);
		memset(u, 0, sizeof(u));
		memcpy(u, r + 8, h.size >= 24 ? 16 : h.size - 8);
		switch (h.type) {
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2: {
			size_t fo = h.type == PERF_RECORD_MMAP ? 40 : 72;
			uint32_t prot = 0;

			if (h.size <= fo)
				goto other;
			memcpy(v, r + 16, sizeof(v));
			if (h.type == PERF_RECORD_MMAP2)
				memcpy(&prot, r + 64, sizeof(prot));
			fprintf(out, "%s pid %u tid %u 0x%llx-0x%llx pgoff 0x%llx %c%c%c %s\n",
				h.type == PERF_RECORD_MMAP ? "MMAP " : "MMAP2", u[0], u[1],
				(unsigned long long)v[0], (unsigned long long)(v[0] + v[1]),
				(unsigned long long)v[2],
				h.type == PERF_RECORD_MMAP || (prot & PROT_READ) ? 'r' : '-',
				prot & PROT_WRITE ? 'w' : '-',
				h.type == PERF_RECORD_MMAP || (prot & PROT_EXEC) ? 'x' : '-',
				strndupa((const char *)r + fo, h.size - fo));
			break;
		}
		case PERF_RECORD_COMM:
			if (h.size <= 16)
				goto other;
			fprintf(out, "COMM%s pid %u tid %u %s\n",
				h.misc & PERF_RECORD_MISC_COMM_EXEC ? " exec" : "", u[0], u[1],
				strndupa((const char *)r + 16, h.size - 16));
			break;
		case PERF_RECORD_EXIT:
		case PERF_RECORD_FORK:
			fprintf(out, "%s pid %u ppid %u tid %u\n",
				h.type == PERF_RECORD_EXIT ? "EXIT" : "FORK", u[0], u[1], u[2]);
			break;
		case PERF_RECORD_LOST:
			fprintf(out, "LOST (sideband records lost)\n");
			break;
		case PERF_RECORD_ITRACE_START:
			fprintf(out, "ITRACE_START pid %u tid %u\n", u[0], u[1]);
			break;
		case PERF_RECORD_ITRACE_LOST:
		case PERF_RECORD_AUX:
			if (h.size < 32)
				goto other;
			memcpy(v, r + 8, sizeof(v));
			fprintf(out, "%s offset 0x%llx size %llu flags 0x%llx\n",
				h.type == PERF_RECORD_AUX ? "AUX" : "ITRACE_LOST",
				(unsigned long long)v[0], (unsigned long long)v[1],
				h.type == PERF_RECORD_AUX ? (unsigned long long)v[2] : 0ULL);
			break;
		default:
other:
			fprintf(out, "type %u misc 0x%x size %u\n", h.type, h.misc, h.size);
			break;
		}
		pos += h.size;
	}
	return 0;
}

/* ---- reports --------------------------------------------------------- */

static int cmp_fs(const void *a, const void *b)
{
	const struct fstat *x = a, *y = b;

	if (!x->key || !y->key)
		return !x->key - !y->key;
	return strcmp(x->key, y->key);
}

static void print_stats(struct dstate *s)
{
	size_t i;

	fprintf(s->out, "total insns %llu\n", (unsigned long long)s->insns);
	fprintf(s->out, "total cond %llu\n", (unsigned long long)s->cond);
	fprintf(s->out, "total taken %llu\n", (unsigned long long)s->taken);
	fprintf(s->out, "total not_taken %llu\n", (unsigned long long)s->not_taken);
	fprintf(s->out, "total calls %llu\n", (unsigned long long)s->calls);
	fprintf(s->out, "total returns %llu\n", (unsigned long long)s->rets);
	fprintf(s->out, "total syscalls %llu\n", (unsigned long long)s->syscalls);
	fprintf(s->out, "total gaps %llu\n", (unsigned long long)s->gaps);
	fprintf(s->out, "total errors %llu\n", (unsigned long long)s->errors);
	fprintf(s->out, "total kernel_insns %llu\n", (unsigned long long)s->kernel_insns);
	if (s->fs)
		qsort(s->fs, s->cap_fs, sizeof(*s->fs), cmp_fs);
	for (i = 0; i < s->nr_fs; i++) {
		const struct fstat *f = &s->fs[i];

		fprintf(s->out, "insns %s %llu\n", f->key, (unsigned long long)f->insns);
		if (f->calls)
			fprintf(s->out, "calls %s %llu\n", f->key, (unsigned long long)f->calls);
		if (f->taken + f->not_taken)
			fprintf(s->out, "cond %s %llu\n", f->key,
				(unsigned long long)(f->taken + f->not_taken));
		if (f->taken)
			fprintf(s->out, "taken %s %llu\n", f->key, (unsigned long long)f->taken);
		if (f->not_taken)
			fprintf(s->out, "not_taken %s %llu\n", f->key,
				(unsigned long long)f->not_taken);
		if (f->syscalls)
			fprintf(s->out, "syscalls %s %llu\n", f->key,
				(unsigned long long)f->syscalls);
	}
}

static int cmp_calls(const void *a, const void *b)
{
	const struct fstat *x = *(struct fstat * const *)a, *y = *(struct fstat * const *)b;

	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(x->key, y->key);
}

static void print_summary(struct dstate *s)
{
	struct fstat **v = calloc(s->nr_fs + 1, sizeof(*v));
	size_t i, n = 0, other = 0;
	uint64_t k;
	const char *c;

	fprintf(s->out, "itrace decode summary: %s\n", s->o->name);
	if (s->d->cmdline) {
		fprintf(s->out, "  command:      ");
		for (c = s->d->cmdline; c < s->d->cmdline + s->d->cmdline_size; c += strlen(c) + 1)
			fprintf(s->out, " %s", c);
		fprintf(s->out, "\n");
	}
	fprintf(s->out, "  cpu:           %s family %u model %u stepping %u\n",
		s->d->hdr.cpu_vendor == ITRACE_CPU_INTEL ? "GenuineIntel" : "unknown",
		s->d->hdr.cpu_family, s->d->hdr.cpu_model, s->d->hdr.cpu_stepping);
	fprintf(s->out, "  trace:         %zu bytes in %zu segment(s)%s\n", s->d->trace_size,
		s->d->nr_segs, s->d->hdr.flags & ITRACE_FLAG_SNAPSHOT ? ", snapshot" : "");
	if (s->kernel_insns)
		fprintf(s->out, "  instructions:  %llu (%llu in kernel mode)\n",
			(unsigned long long)s->insns, (unsigned long long)s->kernel_insns);
	else
		fprintf(s->out, "  instructions:  %llu (user mode)\n",
			(unsigned long long)s->insns);
	fprintf(s->out,
		"  branches:      %llu conditional (%llu taken, %llu not taken), %llu calls, %llu returns, %llu jumps, %llu syscalls\n",
		(unsigned long long)s->cond, (unsigned long long)s->taken,
		(unsigned long long)s->not_taken, (unsigned long long)s->calls,
		(unsigned long long)s->rets, (unsigned long long)s->jumps,
		(unsigned long long)s->syscalls);
	fprintf(s->out, "  gaps:          %llu%s\n", (unsigned long long)s->gaps,
		s->gaps ? "  (TRACE LOST)" : "");
	fprintf(s->out, "  decode errors: %llu%s\n", (unsigned long long)s->errors,
		s->errors ? "  (SEE ABOVE)" : "");

	for (i = 0; v && i < s->cap_fs; i++)
		if (s->fs[i].key && !strchr(s->fs[i].key, ':') && s->fs[i].insns)
			v[n++] = &s->fs[i];
		else if (s->fs[i].key)
			other++;
	if (v && n)
		qsort(v, n, sizeof(*v), cmp_calls);
	fprintf(s->out, "  functions of %s (%zu more elsewhere; calls = call instructions that\n"
		"  entered the function, taken/not-taken = its conditional branches):\n",
		s->exe ? s->exe : "?", other);
	fprintf(s->out, "    %10s %12s %10s %10s %8s  %s\n",
		"calls", "insns", "taken", "not-taken", "syscalls", "function");
	for (i = 0; i < n; i++)
		fprintf(s->out, "    %10llu %12llu %10llu %10llu %8llu  %s\n",
			(unsigned long long)v[i]->calls, (unsigned long long)v[i]->insns,
			(unsigned long long)v[i]->taken, (unsigned long long)v[i]->not_taken,
			(unsigned long long)v[i]->syscalls, v[i]->key);
	free(v);

	fprintf(s->out, "  calls and syscalls in %s, in order (%llu%s):\n", s->exe ? s->exe : "?",
		(unsigned long long)s->nr_prog, s->nr_prog > NR_PROG ? ", the first shown" : "");
	for (k = 0; k < s->nr_prog && k < NR_PROG; k++)
		fprintf(s->out, "    %s\n", s->prog[k]);
	fprintf(s->out, "  flow (%llu lines; `itrace decode` prints all), first lines:\n",
		(unsigned long long)s->nr_lines);
	for (k = 0; k < s->nr_lines && k < NR_KEEP; k++)
		fprintf(s->out, "    %s\n", s->first[k]);
	if (s->nr_lines > NR_KEEP) {
		fprintf(s->out, "    ...\n  last lines:\n");
		k = s->nr_lines > 2 * NR_KEEP ? s->nr_lines - NR_KEEP : NR_KEEP;
		for (; k < s->nr_lines; k++)
			fprintf(s->out, "    %s\n", s->last[k % NR_KEEP]);
	}
}

int itrace_decode(struct itrace_data *d, const struct decode_opts *o, FILE *out)
{
	struct dstate *s = calloc(1, sizeof(*s));
	uint64_t expect = 0;
	size_t i;
	int ret = 1;

	if (!s)
		return 1;
	if (o->mode == DECODE_SIDEBAND) {
		free(s);
		return dump_sideband(d, o->name, out);
	}
	s->o = o;
	s->out = out;
	s->d = d;
	s->st = sym_new();
	s->image = pt_image_alloc("itrace");
	if (!s->st || !s->image) {
		fprintf(stderr, "itrace: out of memory\n");
		goto out;
	}
	if (scan_sideband(s))
		s->errors++;
	if (o->kernel && add_kernel(s, o->kernel)) {
		ret = 2;
		goto out;
	}
	sym_done(s->st);
	if (s->nr_splits)
		qsort(s->splits, s->nr_splits, sizeof(*s->splits), cmp_u64);
	if (!s->exe)
		fprintf(stderr, "itrace: %s: warning: no executable mapping in the sideband\n",
			o->name);
	if (!d->trace_size) {
		fprintf(stderr, "itrace: %s: the file holds no trace\n", o->name);
		s->errors++;
	}

	for (i = 0; i < d->nr_segs; i++) {
		const struct itrace_segment *seg = &d->segs[i];

		if (seg->stream_offset != expect &&
		    !(i == 0 && (d->hdr.flags & ITRACE_FLAG_SNAPSHOT))) {
			fprintf(stderr,
				"itrace: %s: gap in the trace: bytes 0x%llx-0x%llx missing\n",
				o->name, (unsigned long long)expect,
				(unsigned long long)seg->stream_offset);
			s->gaps++;
			s->depth = 0;
			s->have_cur = 0;
			note(s, "[gap]", 0);
		}
		decode_split(s, seg);
		expect = seg->stream_offset + seg->size;
	}

	if (o->mode == DECODE_SUMMARY)
		print_summary(s);
	else if (o->mode == DECODE_STATS)
		print_stats(s);
	ret = s->errors ? 1 : 0;
out:
	if (s->vdso_path[0])
		unlink(s->vdso_path);
	if (s->image)
		pt_image_free(s->image);
	sym_free(s->st);
	for (i = 0; i < s->cap_fs; i++)
		free(s->fs[i].key);
	free(s->fs);
	free(s->exe);
	free(s->splits);
	free(s);
	return ret;
}

static void usage_decode(void)
{
	fprintf(stderr,
		"usage: itrace decode [--insn | --summary | --stats | --sideband] [--kernel KERNEL] [FILE]\n"
		"  (default)   function-level flow: one line per call, return, jump\n"
		"              between functions and syscall\n"
		"  --insn      every instruction: address, symbol+offset, bytes, class\n"
		"  --summary   counts, calls per function, first and last flow lines\n"
		"  --stats     machine readable counters (used by the tests)\n"
		"  --sideband  the recorded perf stream records (MMAP2, COMM...)\n"
		"  --kernel KERNEL  kernel code for a recording made with record -k\n"
		"              (kernel without KASLR): vmlinux, or the running text as an\n"
		"              ELF core (/proc/kcore, perf record --kcore's kcore_dir/kcore,\n"
		"              or that perf.data directory)\n"
		"  FILE        default itrace.data\n");
}

int cmd_decode(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "insn",    no_argument, NULL, 'i' },
		{ "summary", no_argument, NULL, 's' },
		{ "stats",   no_argument, NULL, 'S' },
		{ "sideband", no_argument, NULL, 'b' },
		{ "kernel",  required_argument, NULL, 'k' },
		{ "help",    no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct decode_opts o = { .mode = DECODE_FLOW };
	struct itrace_data d;
	char err[512];
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o.mode = DECODE_INSN;
			break;
		case 's':
			o.mode = DECODE_SUMMARY;
			break;
		case 'S':
			o.mode = DECODE_STATS;
			break;
		case 'b':
			o.mode = DECODE_SIDEBAND;
			break;
		case 'k':
			o.kernel = optarg;
			break;
		default:
			usage_decode();
			return c == 'h' ? 0 : 2;
		}
	}
	if (argc - optind > 1) {
		usage_decode();
		return 2;
	}
	o.name = optind < argc ? argv[optind] : "itrace.data";
	if (itrace_read_file(o.name, &d, err, sizeof(err))) {
		fprintf(stderr, "itrace: %s\n", err);
		return 1;
	}
	ret = itrace_decode(&d, &o, stdout);
	itrace_data_free(&d);
	if (fflush(stdout))
		ret = 1;
	return ret;
}
