// SPDX-License-Identifier: GPL-2.0
/*
 * ptsim: a host stand-in for "itrace record" on machines without Intel PT.
 *
 *   ptsim [-R] [-T TSC0 [-M MTCFREQ] [-C]] -o FILE -- CMD [ARGS...]
 *   ptsim --bts -o FILE -- CMD [ARGS...]
 *   ptsim [-R|--bts] -c CORE [-w BYTES] [-t TRUTH] -- CMD [ARGS...]
 *
 * Runs CMD under ptrace, single-stepping every user instruction from the
 * first one after exec to exit, and writes what Intel PT would have recorded
 * (user mode, BranchEn; return compression as hardware does it, -R: none,
 * as with DisRETC) with libipt's encoder into
 * an itrace.data file, with MMAP2 sideband from /proc/PID/maps, the
 * [vdso] image and the attr of the intel_pt event simulated (user mode,
 * branch; the host's intel_pt PMU type, else PTSIM_PMU_TYPE).  Prints the
 * number of instructions executed (on stderr), the ground truth the
 * decoder must reproduce.
 *
 * -c: CMD is expected to die of a signal (SIGSEGV, SIGABRT, ...): the
 * trace ends there as on hardware (FUP + TIP.PGD at the faulting
 * instruction, or the TIP.PGD of the system call that raised it) and an
 * ELF core is written as Linux would with RLIMIT_ITRACE set (ptsim-core.c):
 * NT_PRSTATUS, NT_SIGINFO, NT_AUXV, NT_FILE, NT_ITRACE with a PSB every
 * 4 KiB; -w keeps only the newest BYTES of trace (flag WRAPPED); -t writes
 * the addresses of the last instructions executed, oldest first, and
 * "end ADDR" (the ground truth of the trace's tail).
 *
 * --bts: the trace is Intel BTS's instead (ITRACE_FLAG_BTS): a record
 * { from, to, flags 0 } for each taken branch (every unconditional one, a
 * conditional one when the next rip is not the instruction's end; class
 * and length from libipt, bts_ild()) and one { syscall, BTS_SIM_KENTRY } for each system call, as
 * a user-only BTS has them (no record of the return: the decoder resumes
 * after the syscall).  The trace starts with { BTS_SIM_KEXEC, first
 * instruction }, the return of execve that a user-only hardware trace does
 * not have (its flow starts at the first branch target), so that the
 * decoder can count every instruction.  Records never straddle a page: the
 * end of each page is zero padding, as in stop mode with one-page chunks.
 * With -c the core's NT_ITRACE note (PMU intel_bts) holds the records as
 * Linux writes them: no padding, kernel addresses 0, the fault a record
 * { faulting instruction, 0 }; -w keeps whole records.
 *
 * -T TSC0: timing packets as with TSCEn (and no MTC, CYC): a TSC packet in
 * every PSB+, a PSB+ every 4 KiB of trace; the time stamp counter starts
 * at TSC0 and counts PTSIM_TSC_PER_INSN per instruction stepped.  The
 * config has TSCEn (bit 10) and a TIME section converts TSC to perf time
 * as a 2 GHz TSC would: ns = TSC / 2 (time_mult 512, time_shift 10).
 *
 * -M MTCFREQ (with -T): MTC packets too, as with MTCEn and
 * IA32_RTIT_CTL.MTCFreq = MTCFREQ (0-15): the crystal clock (CTC) ticks
 * once per instruction (the TSC:crystal ratio, CPUID.15H EBX/EAX, is
 * PTSIM_TSC_PER_INSN/1, written in the TIME section); an MTC packet with
 * CTC[MTCFREQ+7:MTCFREQ] comes before the packets of the first
 * instruction after each 2^MTCFREQ CTC edge (pending TNT bits first), and
 * each PSB+ has a TMA with CTC[15:0] after its TSC (FastCounter 0: the
 * TSC at an instruction is a whole number of crystal clocks).
 *
 * -C (with -T): CYC packets too, as with CYCEn and CycThresh 0: the core
 * clock runs at the nominal ratio (the CBR of PSB+ is max_nonturbo_ratio,
 * the TIME section's nom_freq), one cycle a TSC tick, so each instruction
 * takes PTSIM_TSC_PER_INSN cycles; a CYC with the cycles since the last
 * one comes before each packet that carries timing (TNT, TIP, TIP.PGE,
 * TIP.PGD, FUP outside PSB+, MTC) and before each PSB, which the TSC in
 * its PSB+ restarts from.  The config has CYCEn (bit 1).
 *
 * Only what the test programs do is modelled: conditional and indirect
 * branches, returns, syscalls, a fatal signal; no signal handlers, no threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <intel-pt.h>
#include <linux/perf_event.h>
#include <elf.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/procfs.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itrace.h"
#include "itrace-file.h"
#include "bts.h"
#include "elfcore.h"
/* after itrace-file.h: its enum has the same ITRACE_CPU_* values */
#include <linux/itrace.h>

#define TRACE_MAX	(64 << 20)
#define PSB_EVERY	4096	/* -c: bytes between PSBs, as PSBFreq would */
#define TRUTH_MAX	4096	/* -t: instructions kept */
#define PTSIM_TSC_PER_INSN	8	/* -T: TSC ticks per instruction */
#define PTSIM_CBR		20	/* -T: core:bus ratio, max_nonturbo_ratio */
/*
 * The simulated intel_pt's perf PMU type: the host's if it has intel_pt,
 * else this stand-in, above the types Linux gives the PMUs of a machine
 * (dynamic types count up from PERF_TYPE_MAX).
 */
#define PTSIM_PMU_TYPE	64
#define PT_SYSFS_TYPE	"/sys/bus/event_source/devices/intel_pt/type"

#define BTS_SIM_KEXEC	0xffffffff81000100ULL	/* "kernel" addresses of --bts */
#define BTS_SIM_KENTRY	0xffffffff81e00000ULL

enum kind { K_OTHER, K_COND, K_RET, K_CALL, K_INDIRECT_CALL, K_INDIRECT,
	    K_SYSCALL, K_FAR };

/* Return compression: hardware keeps the last 64 return addresses. */
#define RETSTACK	64

struct sim {
	struct pt_encoder *enc;
	uint8_t		*buf;
	unsigned int	tnt_bits;
	uint64_t	tnt;
	int		err;
	int		retcomp;
	uint64_t	ret[RETSTACK];
	unsigned int	ret_top, ret_n;
	int		tsc;		/* -T: TSC packets */
	uint64_t	tsc0;		/* the TSC of instruction 0 */
	int		mtc_freq;	/* -M: MTCFreq; -1: no MTC */
	uint64_t	mtc_last;	/* CTC >> mtc_freq of the last MTC */
	int		cyc;		/* -C: CYC packets */
	uint64_t	cyc_tsc;	/* -C: the TSC the last CYC (or TSC) counted to */
	uint64_t	insns;		/* instructions stepped so far */
	int		bts;		/* --bts: BTS records in bbuf */
	int		bts_note;	/* --bts -c: as in a core note */
	uint8_t		*bbuf;
	size_t		bts_len;
};

/*
 * --bts: append a record { from, to, 0 }, padding the page's end before
 * one that would straddle it; for a core note (-c) no padding, and kernel
 * addresses are 0, as Linux writes its NT_ITRACE notes.
 */
static void bts_rec(struct sim *s, uint64_t from, uint64_t to)
{
	uint64_t r[3] = { from, to, 0 };
	size_t room = 4096 - s->bts_len % 4096;

	if (s->bts_note) {
		r[0] = from >= BTS_KERNEL_START ? 0 : from;
		r[1] = to >= BTS_KERNEL_START ? 0 : to;
		room = sizeof(r);
	}
	if (room < sizeof(r)) {
		memset(s->bbuf + s->bts_len, 0, room);
		s->bts_len += room;
	}
	if (s->bts_len + sizeof(r) > TRACE_MAX) {
		s->err = 1;
		return;
	}
	memcpy(s->bbuf + s->bts_len, r, sizeof(r));
	s->bts_len += sizeof(r);
}

static void ret_push(struct sim *s, uint64_t addr)
{
	s->ret_top = (s->ret_top + 1) % RETSTACK;
	s->ret[s->ret_top] = addr;
	if (s->ret_n < RETSTACK)
		s->ret_n++;
}

static void emit(struct sim *s, struct pt_packet *p)
{
	if (pt_enc_next(s->enc, p) < 0)
		s->err = 1;
}

/* -T: the TSC at the instruction about to run (or running) */
static uint64_t tsc_of(const struct sim *s)
{
	return s->tsc0 + s->insns * PTSIM_TSC_PER_INSN;
}

/* -C: a CYC with the core cycles (TSC ticks) from the last one to this instruction */
static void cyc(struct sim *s)
{
	struct pt_packet p = { .type = ppt_cyc };
	uint64_t tsc = tsc_of(s);

	if (!s->cyc || tsc <= s->cyc_tsc)
		return;
	p.payload.cyc.value = tsc - s->cyc_tsc;
	emit(s, &p);
	s->cyc_tsc = tsc;
}

static void flush_tnt(struct sim *s)
{
	struct pt_packet p = { .type = ppt_tnt_8 };

	if (!s->tnt_bits)
		return;
	cyc(s);
	p.payload.tnt.bit_size = s->tnt_bits;
	p.payload.tnt.payload = s->tnt;
	emit(s, &p);
	s->tnt_bits = 0;
	s->tnt = 0;
}

static void tnt(struct sim *s, int taken)
{
	s->tnt = (s->tnt << 1) | !!taken;
	if (++s->tnt_bits == 6)
		flush_tnt(s);
}

static void ip_pkt(struct sim *s, enum pt_packet_type t, uint64_t ip, int suppress)
{
	struct pt_packet p = { .type = t };

	flush_tnt(s);
	cyc(s);
	p.payload.ip.ipc = suppress ? pt_ipc_suppressed : pt_ipc_sext_48;
	p.payload.ip.ip = ip;
	emit(s, &p);
}

/* -M: the crystal clock at the instruction about to run (one tick each) */
static uint64_t ctc_of(const struct sim *s)
{
	return s->tsc0 / PTSIM_TSC_PER_INSN + s->insns;
}

/* -M: an MTC if the CTC passed a 2^MTCFreq edge since the last one */
static void mtc(struct sim *s)
{
	struct pt_packet p = { .type = ppt_mtc };
	uint64_t period;

	if (s->mtc_freq < 0)
		return;
	period = ctc_of(s) >> s->mtc_freq;
	if (period == s->mtc_last)
		return;
	/* the edge is this instruction's CTC: the CYC counts up to it */
	flush_tnt(s);
	cyc(s);
	p.payload.mtc.ctc = period & 0xff;
	emit(s, &p);
	s->mtc_last = period;
}

/* PSB+; ip: the FUP of where tracing is, 0 while it is disabled */
static void psb(struct sim *s, uint64_t ip)
{
	struct pt_packet p = { .type = ppt_psb };

	flush_tnt(s);
	/* the cycles up to the TSC of PSB+, which the next CYC counts from */
	cyc(s);
	emit(s, &p);
	if (s->tsc) {
		memset(&p, 0, sizeof(p));
		p.type = ppt_tsc;
		p.payload.tsc.tsc = tsc_of(s);
		emit(s, &p);
		if (s->mtc_freq >= 0) {
			memset(&p, 0, sizeof(p));
			p.type = ppt_tma;
			p.payload.tma.ctc = ctc_of(s) & 0xffff;
			emit(s, &p);
			s->mtc_last = ctc_of(s) >> s->mtc_freq;
		}
		/* the core:bus ratio, as hardware has it in PSB+ with TSCEn */
		memset(&p, 0, sizeof(p));
		p.type = ppt_cbr;
		p.payload.cbr.ratio = PTSIM_CBR;
		emit(s, &p);
	}
	memset(&p, 0, sizeof(p));
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = 1;
	emit(s, &p);
	if (ip) {
		memset(&p, 0, sizeof(p));
		p.type = ppt_fup;
		p.payload.ip.ipc = pt_ipc_sext_48;
		p.payload.ip.ip = ip;
		emit(s, &p);
	}
	memset(&p, 0, sizeof(p));
	p.type = ppt_psbend;
	emit(s, &p);
	/* never compress a return whose call was before the PSB */
	s->ret_n = 0;
}

/* Just enough x86 decoding to find branches. */
static enum kind classify(const uint8_t *b, uint64_t ip, uint64_t *fall, int *rep)
{
	int i = 0;

	*rep = 0;
	for (;; i++) {
		switch (b[i]) {
		case 0xf2: case 0xf3:
			*rep = 1;
			continue;
		case 0x66: case 0x67: case 0x2e: case 0x3e: case 0x26:
		case 0x36: case 0x64: case 0x65: case 0xf0:
			continue;
		}
		break;
	}
	if (b[i] >= 0x40 && b[i] <= 0x4f)
		i++;
	switch (b[i]) {
	case 0x70 ... 0x7f:
	case 0xe0 ... 0xe3:
		*fall = ip + i + 2;
		return K_COND;
	case 0x0f:
		if (b[i + 1] >= 0x80 && b[i + 1] <= 0x8f) {
			*fall = ip + i + 6;
			return K_COND;
		}
		if (b[i + 1] == 0x05)
			return K_SYSCALL;
		return K_OTHER;
	case 0xc2: case 0xc3:
		return K_RET;
	case 0xe8:
		return K_CALL;
	case 0xca: case 0xcb: case 0xcf: case 0xcd: case 0xcc:
		return K_FAR;
	case 0xff:
		switch ((b[i + 1] >> 3) & 7) {
		case 2:
			return K_INDIRECT_CALL;
		case 4:
			return K_INDIRECT;
		case 3: case 5:
			return K_FAR;
		}
		return K_OTHER;
	}
	return K_OTHER;
}

#define MAX_VMAS	128

struct vma {
	uint64_t	lo, hi, off;
	uint32_t	flags;		/* PF_R, PF_W, PF_X */
	char		file[256];
	uint64_t	filesz, at;	/* -c: contents dumped, bytes and file offset */
};

/* The mappings of pid, as /proc/PID/maps has them; returns how many. */
static size_t read_vmas(pid_t pid, struct vma *v, size_t max)
{
	char path[64], line[512], perms[8];
	size_t n = 0;
	FILE *m;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	m = fopen(path, "r");
	while (m && n < max && fgets(line, sizeof(line), m)) {
		struct vma *a = &v[n];

		a->file[0] = 0;
		if (sscanf(line, "%lx-%lx %4s %lx %*s %*s %255s", &a->lo, &a->hi, perms,
			   &a->off, a->file) < 4 || !strcmp(a->file, "[vsyscall]"))
			continue;
		a->flags = (perms[0] == 'r' ? PF_R : 0) | (perms[1] == 'w' ? PF_W : 0) |
			   (perms[2] == 'x' ? PF_X : 0);
		n++;
	}
	if (m)
		fclose(m);
	return n;
}

static int write_maps(FILE *f, pid_t pid)
{
	static struct vma v[MAX_VMAS];
	size_t i, nv = read_vmas(pid, v, MAX_VMAS);
	uint8_t rec[256 + 128];

	for (i = 0; i < nv; i++) {
		struct perf_event_header h = { .type = PERF_RECORD_MMAP2 };
		uint32_t pt[2] = { pid, pid }, pf[2] = { PROT_READ | PROT_EXEC, MAP_PRIVATE };
		uint64_t r[3] = { v[i].lo, v[i].hi - v[i].lo, v[i].off };
		size_t flen = (strlen(v[i].file) + 1 + 7) & ~7UL;

		if (!(v[i].flags & PF_X) || !v[i].file[0])
			continue;
		h.size = 72 + flen;
		memset(rec, 0, h.size);
		memcpy(rec, &h, sizeof(h));
		memcpy(rec + 8, pt, 8);
		memcpy(rec + 16, r, 24);
		memcpy(rec + 64, pf, 8);
		memcpy(rec + 72, v[i].file, strlen(v[i].file) + 1);
		itrace_write_section(f, ITRACE_SEC_PERF, 0, rec, h.size);
	}
	return nv ? 0 : -1;
}

/*
 * The header's PMU and config and an ATTR section of what is simulated:
 * intel_pt of user mode, BranchEn ("branch", bit 13), DisRETC ("noretcomp",
 * bit 11) with -R, TSCEn (bit 10) with -T, MTCEn and MTCFreq with -M, CYCEn
 * (bit 1, CycThresh 0) with -C; the sideband has no sample_id.
 */
static void sim_event(struct itrace_file_header *hdr, struct perf_event_attr *a, int retcomp,
		      int tsc, int mtc_freq, int cyc)
{
	FILE *t = fopen(PT_SYSFS_TYPE, "r");
	unsigned int type;

	hdr->pmu_type = PTSIM_PMU_TYPE;
	if (t && fscanf(t, "%u", &type) == 1)
		hdr->pmu_type = type;
	if (t)
		fclose(t);
	hdr->config = 1ULL << 13 | (retcomp ? 0 : 1ULL << 11) | (tsc ? 1ULL << 10 : 0);
	/* MTCEn (bit 9), MTCFreq (bits 17:14) */
	if (mtc_freq >= 0)
		hdr->config |= 1ULL << 9 | (uint64_t)mtc_freq << 14;
	if (cyc)
		hdr->config |= 1ULL << 1;
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = hdr->pmu_type;
	a->config = hdr->config;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->task = 1;
}

/* ---- -c: an ELF core as Linux writes it with RLIMIT_ITRACE ---------- */

struct nbuf {
	uint8_t		*p;
	size_t		len;
};

static void add_note(struct nbuf *nb, const char *name, uint32_t type,
		     const void *desc, size_t size)
{
	Elf64_Nhdr h = { strlen(name) + 1, size, type };
	size_t nsz = (h.n_namesz + 3) & ~3UL, dsz = (size + 3) & ~3UL;
	uint8_t *n = realloc(nb->p, nb->len + sizeof(h) + nsz + dsz);

	if (!n)
		exit(1);
	nb->p = n;
	n += nb->len;
	memset(n, 0, sizeof(h) + nsz + dsz);
	memcpy(n, &h, sizeof(h));
	memcpy(n + sizeof(h), name, h.n_namesz);
	memcpy(n + sizeof(h) + nsz, desc, size);
	nb->len += sizeof(h) + nsz + dsz;
}

static size_t read_all(const char *path, uint8_t *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n, got = 0;

	if (fd < 0)
		return 0;
	while ((size_t)got < len && (n = read(fd, buf + got, len - got)) > 0)
		got += n;
	close(fd);
	return got;
}

static int write_core(const char *path, pid_t pid, int memfd, const char *cmd,
		      const struct user_regs_struct *regs, const siginfo_t *si,
		      const uint8_t *trace, uint64_t size, uint64_t keep, int bts)
{
	static struct vma v[MAX_VMAS];
	static uint8_t aux[4096];
	struct nbuf nb = { 0 }, fb = { 0 };
	struct itrace_file_header id;
	struct elf_prstatus ps = { 0 };
	struct elf_prpsinfo pi = { 0 };
	struct itrace_note *note;
	uint64_t count = 0, pg = 4096, pos, nv = 0, i, e[3];
	char mpath[64];
	Elf64_Ehdr eh = { 0 };
	const char *b = strrchr(cmd, '/');
	FILE *f;
	size_t auxn;

	ps.pr_info.si_signo = si->si_signo;
	ps.pr_cursig = si->si_signo;
	ps.pr_pid = pid;
	ps.pr_ppid = getpid();
	memcpy(&ps.pr_reg, regs, sizeof(ps.pr_reg));
	add_note(&nb, "CORE", NT_PRSTATUS, &ps, sizeof(ps));
	snprintf(pi.pr_fname, sizeof(pi.pr_fname), "%s", b ? b + 1 : cmd);
	pi.pr_pid = pid;
	add_note(&nb, "CORE", NT_PRPSINFO, &pi, sizeof(pi));
	add_note(&nb, "CORE", NT_SIGINFO, si, sizeof(*si));
	snprintf(mpath, sizeof(mpath), "/proc/%d/auxv", pid);
	auxn = read_all(mpath, aux, sizeof(aux));
	add_note(&nb, "CORE", NT_AUXV, aux, auxn);

	nv = read_vmas(pid, v, MAX_VMAS);
	/* NT_FILE: count, page size, (start, end, offset in pages)..., names */
	for (i = 0; i < nv; i++)
		count += v[i].file[0] == '/';
	fb.p = calloc(1, 16 + count * 24);
	memcpy(fb.p, &count, 8);
	memcpy(fb.p + 8, &pg, 8);
	fb.len = 16;
	for (i = 0; i < nv; i++) {
		if (v[i].file[0] != '/')
			continue;
		e[0] = v[i].lo;
		e[1] = v[i].hi;
		e[2] = v[i].off / pg;
		memcpy(fb.p + fb.len, e, 24);
		fb.len += 24;
	}
	for (i = 0; i < nv; i++) {
		size_t l = strlen(v[i].file) + 1;

		if (v[i].file[0] != '/')
			continue;
		fb.p = realloc(fb.p, fb.len + l);
		memcpy(fb.p + fb.len, v[i].file, l);
		fb.len += l;
	}
	add_note(&nb, "CORE", NT_FILE, fb.p, fb.len);
	free(fb.p);

	/* the trace: the newest 'keep' bytes if asked, a wrapped buffer */
	note = calloc(1, sizeof(*note) + size);
	note->hdr_size = sizeof(*note);
	note->version = ITRACE_NOTE_VERSION;
	snprintf(note->pmu_name, sizeof(note->pmu_name), bts ? "intel_bts" : "intel_pt");
	note->config = bts ? 0 : 1 | 1 << 13;	/* pt, branch */
	note->buf_size = 4096;
	while (note->buf_size < size)
		note->buf_size *= 2;
	if (bts)		/* whole records: the newest that fit */
		keep -= keep % BTS_RECORD_SIZE;
	if (keep && keep < size) {
		trace += size - keep;
		size = keep;
		note->buf_size = keep;
		note->flags |= ITRACE_NOTE_WRAPPED;
	}
	note->trace_size = size;
	note->tid = pid;
	itrace_cpu_ident(&id);
	note->cpu_vendor = id.cpu_vendor;
	note->cpu_family = id.cpu_family;
	note->cpu_model = id.cpu_model;
	note->cpu_stepping = id.cpu_stepping;
	memcpy(note + 1, trace, size);
	add_note(&nb, ITRACE_NOTE_NAME, NT_ITRACE, note, sizeof(*note) + size);
	free(note);

	/* PT_NOTE, then one PT_LOAD per mapping; anonymous memory and the vdso dumped */
	pos = sizeof(eh) + (1 + nv) * sizeof(Elf64_Phdr) + nb.len;
	pos = (pos + 4095) & ~4095UL;
	for (i = 0; i < nv; i++) {
		v[i].filesz = 0;
		if (v[i].file[0] == '/' || !strcmp(v[i].file, "[vvar]") || !(v[i].flags & PF_R))
			continue;
		v[i].filesz = v[i].hi - v[i].lo;
		v[i].at = pos;
		pos += v[i].filesz;
	}
	f = fopen(path, "wb");
	if (!f)
		return -1;
	elfcore_ehdr(&eh, 1 + nv);
	fwrite(&eh, sizeof(eh), 1, f);
	{
		Elf64_Phdr ph = { .p_type = PT_NOTE, .p_offset = sizeof(eh) +
				  (1 + nv) * sizeof(Elf64_Phdr), .p_filesz = nb.len, .p_align = 4 };

		fwrite(&ph, sizeof(ph), 1, f);
	}
	for (i = 0; i < nv; i++) {
		Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = v[i].flags,
				  .p_offset = v[i].filesz ? v[i].at : 0, .p_vaddr = v[i].lo,
				  .p_filesz = v[i].filesz, .p_memsz = v[i].hi - v[i].lo,
				  .p_align = 4096 };

		fwrite(&ph, sizeof(ph), 1, f);
	}
	fwrite(nb.p, nb.len, 1, f);
	free(nb.p);
	for (i = 0; i < nv; i++) {
		uint8_t *buf;

		if (!v[i].filesz)
			continue;
		buf = calloc(1, v[i].filesz);
		if (pread(memfd, buf, v[i].filesz, v[i].lo) < 0)
			memset(buf, 0, v[i].filesz);
		fseek(f, v[i].at, SEEK_SET);
		fwrite(buf, v[i].filesz, 1, f);
		free(buf);
	}
	return fclose(f);
}

/*
 * A hypervisor that emulates an instruction (KVM: CPUID) may lose the
 * single-step trap after it, so that the next instruction runs too: seen
 * as a step from ip that lands past the next one, at fall.  True if the
 * instruction at fall is no branch and rip is within its length: it ran,
 * and the trace needs nothing for it.
 */
static int skipped_step(int memfd, uint64_t fall, uint64_t rip)
{
	uint8_t b[16] = { 0 };
	uint64_t next = 0;
	int rep;

	if (rip <= fall || rip - fall > 15 || pread(memfd, b, sizeof(b), fall) <= 0)
		return 0;
	return classify(b, fall, &next, &rep) == K_OTHER && !rep;
}

int main(int argc, char **argv)
{
	struct itrace_file_header hdr;
	struct perf_event_attr attr;
	struct user_regs_struct regs;
	struct pt_config cfg;
	struct sim s = { 0 };
	struct bts_ild *ild = NULL;
	long ret;
	const char *out = NULL, *core = NULL, *truth = NULL;
	uint64_t insns = 0, off = 0, psb_at = 0, keep = 0, i;
	static uint64_t tips[TRUTH_MAX];
	siginfo_t si = { 0 };
	uint8_t *vdso;
	size_t vdso_size;
	int status, memfd, pending_pge = 0, argi = 1;
	char mempath[64];
	FILE *f;
	pid_t pid;

	s.retcomp = 1;
	s.mtc_freq = -1;
	for (; argi < argc && argv[argi][0] == '-' && strcmp(argv[argi], "--"); argi++) {
		if (!strcmp(argv[argi], "-R")) {
			s.retcomp = 0;
		} else if (!strcmp(argv[argi], "--bts")) {
			s.bts = 1;
		} else if (argi + 1 < argc && !strcmp(argv[argi], "-o")) {
			out = argv[++argi];
		} else if (argi + 1 < argc && !strcmp(argv[argi], "-c")) {
			core = argv[++argi];
		} else if (argi + 1 < argc && !strcmp(argv[argi], "-t")) {
			truth = argv[++argi];
		} else if (argi + 1 < argc && !strcmp(argv[argi], "-T")) {
			s.tsc = 1;
			s.tsc0 = strtoull(argv[++argi], NULL, 0);
		} else if (argi + 1 < argc && !strcmp(argv[argi], "-M")) {
			char *end;
			long f = strtol(argv[++argi], &end, 10);

			/* 16: not an MTCFreq, a usage error below */
			s.mtc_freq = *end || f < 0 || f > 15 ? 16 : f;
		} else if (!strcmp(argv[argi], "-C")) {
			s.cyc = 1;
		} else if (argi + 1 < argc && !strcmp(argv[argi], "-w")) {
			keep = strtoull(argv[++argi], NULL, 0);
		} else {
			break;
		}
	}
	if (argi < argc && !strcmp(argv[argi], "--"))
		argi++;
	if (!!out == !!core || argi >= argc || s.mtc_freq > 15 ||
	    (s.mtc_freq >= 0 && (!s.tsc || s.tsc0 % PTSIM_TSC_PER_INSN)) ||
	    (s.cyc && (!s.tsc || s.bts))) {
		fprintf(stderr,
			"usage: ptsim [-R] [-T TSC0 [-M MTCFREQ] [-C]] -o FILE -- CMD [ARGS...]\n"
			"       ptsim --bts -o FILE -- CMD [ARGS...]\n"
			"       ptsim [-R|--bts] -c CORE [-w BYTES] [-t TRUTH] -- CMD [ARGS...]\n"
			"(-M: 0 to 15, with -T; TSC0 a multiple of %d; -C: with -T)\n",
			PTSIM_TSC_PER_INSN);
		return 2;
	}
	s.cyc_tsc = s.tsc0;
	s.bts_note = s.bts && core;

	pid = fork();
	if (!pid) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execvp(argv[argi], argv + argi);
		perror("ptsim: exec");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		fprintf(stderr, "ptsim: %s did not stop after exec\n", argv[argi]);
		return 1;
	}
	ptrace(PTRACE_SETOPTIONS, pid, NULL, PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL);
	snprintf(mempath, sizeof(mempath), "/proc/%d/mem", pid);
	memfd = open(mempath, O_RDONLY);
	if (memfd < 0) {
		perror(mempath);
		return 1;
	}

	s.buf = malloc(TRACE_MAX);
	pt_config_init(&cfg);
	cfg.begin = s.buf;
	cfg.end = s.buf + TRACE_MAX;
	s.enc = pt_alloc_encoder(&cfg);
	if (!s.buf || !s.enc)
		return 1;

	if (s.bts) {
		ild = bts_ild_new();
		s.bbuf = malloc(TRACE_MAX);
		if (!ild || !s.bbuf) {
			fprintf(stderr, "ptsim: out of memory\n");
			return 1;
		}
	}
	ptrace(PTRACE_GETREGS, pid, NULL, &regs);
	psb(&s, 0);
	ip_pkt(&s, ppt_tip_pge, regs.rip, 0);
	if (s.bts)
		bts_rec(&s, BTS_SIM_KEXEC, regs.rip);

	for (;;) {
		uint64_t ip = regs.rip, fall = 0;
		uint8_t b[16] = { 0 };
		enum kind k;
		int rep;

		if (pread(memfd, b, sizeof(b), ip) <= 0) {
			fprintf(stderr, "ptsim: cannot read code at 0x%llx\n",
				(unsigned long long)ip);
			return 1;
		}
		k = classify(b, ip, &fall, &rep);
		pt_enc_get_offset(s.enc, &off);
		s.insns = insns;
		if ((core || s.tsc) && off - psb_at >= PSB_EVERY) {
			psb(&s, pending_pge ? 0 : ip);
			psb_at = off;
		}
		mtc(&s);
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) ||
		    waitpid(pid, &status, 0) != pid) {
			perror("ptsim: single step");
			return 1;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			fprintf(stderr, "ptsim: child ended without an exit stop\n");
			return 1;
		}
		if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
			if (pending_pge)
				ip_pkt(&s, ppt_tip_pge, ip, 0);
			insns++;	/* the exit_group syscall */
			ip_pkt(&s, ppt_tip_pgd, 0, 1);
			if (s.bts)
				bts_rec(&s, ip, BTS_SIM_KENTRY);
			if (core) {
				fprintf(stderr, "ptsim: %s exited, no crash\n", argv[argi]);
				return 1;
			}
			break;
		}
		if (core && WSTOPSIG(status) != SIGTRAP) {
			/* the fatal signal: the instruction at ip did not complete */
			if (!pending_pge) {
				ip_pkt(&s, ppt_fup, ip, 0);
				ip_pkt(&s, ppt_tip_pgd, 0, 1);
				/* the exception: from the faulting instruction */
				if (s.bts)
					bts_rec(&s, ip, BTS_SIM_KENTRY);
			}
			ptrace(PTRACE_GETREGS, pid, NULL, &regs);
			ptrace(PTRACE_GETSIGINFO, pid, NULL, &si);
			break;
		}
		if (WSTOPSIG(status) != SIGTRAP) {
			fprintf(stderr, "ptsim: unexpected signal %d at 0x%llx\n",
				WSTOPSIG(status), (unsigned long long)ip);
			return 1;
		}
		ptrace(PTRACE_GETREGS, pid, NULL, &regs);
		if (pending_pge) {
			ip_pkt(&s, ppt_tip_pge, ip, 0);
			pending_pge = 0;
		}
		if (rep && regs.rip == ip)
			continue;	/* one more iteration of a rep string insn */
		tips[insns % TRUTH_MAX] = ip;
		insns++;
		if (s.bts) {
			int ic, len = bts_ild(ild, b, sizeof(b), ip, false, &ic);

			if (!len) {
				fprintf(stderr,
					"ptsim: libipt cannot decode 0x%llx: %02x %02x %02x %02x %02x %02x\n",
					(unsigned long long)ip, b[0], b[1], b[2], b[3], b[4],
					b[5]);
				return 1;
			}
			/* an unconditional branch is taken, even to the next instruction */
			if (k == K_SYSCALL)
				bts_rec(&s, ip, BTS_SIM_KENTRY);
			else if (ic != ptic_other && ic != ptic_cond_jump)
				bts_rec(&s, ip, regs.rip);
			else if (regs.rip != ip + len &&
				 !(b[0] == 0x0f && b[1] == 0xa2 &&
				   skipped_step(memfd, ip + 2, regs.rip)))
				bts_rec(&s, ip, regs.rip);
		}
		switch (k) {
		case K_COND:
			tnt(&s, regs.rip != fall);
			break;
		case K_CALL:
		case K_INDIRECT_CALL:
			if (k == K_INDIRECT_CALL)
				ip_pkt(&s, ppt_tip, regs.rip, 0);
			if (s.retcomp) {
				/* the return address the call pushed */
				errno = 0;
				ret = ptrace(PTRACE_PEEKDATA, pid, (void *)regs.rsp, NULL);
				if (errno)
					return 1;
				ret_push(&s, ret);
			}
			break;
		case K_RET:
			if (s.retcomp && s.ret_n && s.ret[s.ret_top] == regs.rip) {
				tnt(&s, 1);	/* compressed: a taken bit */
				s.ret_top = (s.ret_top + RETSTACK - 1) % RETSTACK;
				s.ret_n--;
				break;
			}
			ip_pkt(&s, ppt_tip, regs.rip, 0);
			break;
		case K_INDIRECT:
			ip_pkt(&s, ppt_tip, regs.rip, 0);
			break;
		case K_SYSCALL:
			/* user-only trace: disabled into the kernel, enabled after */
			ip_pkt(&s, ppt_tip_pgd, 0, 1);
			pending_pge = 1;
			break;
		case K_FAR:
			fprintf(stderr, "ptsim: far transfer at 0x%llx not modelled\n",
				(unsigned long long)ip);
			return 1;
		default:
			/* CPUID: 0f a2, the one instruction seen to do it */
			if (b[0] == 0x0f && b[1] == 0xa2 && regs.rip != ip + 2 &&
			    skipped_step(memfd, ip + 2, regs.rip)) {
				tips[insns % TRUTH_MAX] = ip + 2;
				insns++;
			}
			break;
		}
	}
	flush_tnt(&s);
	if (s.err) {
		fprintf(stderr, "ptsim: encoder error (trace larger than %d bytes?)\n", TRACE_MAX);
		return 1;
	}
	pt_enc_get_offset(s.enc, &off);

	if (core) {
		if (write_core(core, pid, memfd, argv[argi], &regs, &si,
			       s.bts ? s.bbuf : s.buf, s.bts ? s.bts_len : off, keep, s.bts)) {
			perror(core);
			return 1;
		}
		f = truth ? fopen(truth, "w") : NULL;
		for (i = insns > TRUTH_MAX ? insns - TRUTH_MAX : 0; f && i < insns; i++)
			fprintf(f, "0x%llx\n", (unsigned long long)tips[i % TRUTH_MAX]);
		if (f) {
			fprintf(f, "end 0x%llx\n", (unsigned long long)regs.rip);
			fclose(f);
		}
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fprintf(stderr, "%llu\n", (unsigned long long)insns);
		return 0;
	}

	f = fopen(out, "wb");
	if (!f) {
		perror(out);
		return 1;
	}
	itrace_header_init(&hdr);
	hdr.page_size = sysconf(_SC_PAGESIZE);
	itrace_cpu_ident(&hdr);
	hdr.pid = pid;
	sim_event(&hdr, &attr, s.retcomp, s.tsc, s.mtc_freq, s.cyc);
	if (s.bts)
		hdr.flags |= ITRACE_FLAG_BTS;
	itrace_write_header(f, &hdr);
	itrace_write_section(f, ITRACE_SEC_CMDLINE, 0, argv[argi], strlen(argv[argi]) + 1);
	itrace_write_section(f, ITRACE_SEC_ATTR, 0, &attr, sizeof(attr));
	if (s.tsc) {
		struct itrace_time t = { .time_mult = 512, .time_shift = 10,
					 .flags = ITRACE_TIME_ZERO,
					 .nom_freq = PTSIM_CBR };

		if (s.mtc_freq >= 0) {
			/* CPUID.15H: TSC = crystal clock * EBX / EAX */
			t.tsc_ratio_den = 1;
			t.tsc_ratio_num = PTSIM_TSC_PER_INSN;
		}

		itrace_write_section(f, ITRACE_SEC_TIME, 0, &t, sizeof(t));
	}
	if (!itrace_read_vdso(&vdso, &vdso_size)) {
		itrace_write_section(f, ITRACE_SEC_VDSO, 0, vdso, vdso_size);
		free(vdso);
	}
	write_maps(f, pid);
	if (s.bts)
		itrace_write_section(f, ITRACE_SEC_TRACE, 0, s.bbuf, s.bts_len);
	else
		itrace_write_section(f, ITRACE_SEC_TRACE, 0, s.buf, off);
	itrace_write_section(f, ITRACE_SEC_END, 0, NULL, 0);
	bts_ild_free(ild);
	free(s.bbuf);
	if (fclose(f)) {
		perror(out);
		return 1;
	}
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	waitpid(pid, &status, 0);
	fprintf(stderr, "%llu\n", (unsigned long long)insns);
	return 0;
}
