// SPDX-License-Identifier: GPL-2.0
/*
 * ptsim: a host stand-in for "itrace record" on machines without Intel PT.
 *
 *   ptsim [-R] -o FILE -- CMD [ARGS...]
 *
 * Runs CMD under ptrace, single-stepping every user instruction from the
 * first one after exec to exit, and writes what Intel PT would have recorded
 * (user mode, BranchEn; return compression as hardware does it, -R: none,
 * as with DisRETC) with libipt's encoder into
 * an itrace.data file, with MMAP2 sideband from /proc/PID/maps and the
 * [vdso] image.  Prints the number of instructions executed (on stderr), the ground
 * truth the decoder must reproduce.
 *
 * Only what the test programs do is modelled: conditional and indirect
 * branches, returns, syscalls; no signals, no threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <intel-pt.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itrace.h"
#include "itrace-file.h"

#define TRACE_MAX	(64 << 20)

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
};

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

static void flush_tnt(struct sim *s)
{
	struct pt_packet p = { .type = ppt_tnt_8 };

	if (!s->tnt_bits)
		return;
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
	p.payload.ip.ipc = suppress ? pt_ipc_suppressed : pt_ipc_sext_48;
	p.payload.ip.ip = ip;
	emit(s, &p);
}

static void psb(struct sim *s)
{
	struct pt_packet p = { .type = ppt_psb };

	emit(s, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = 1;
	emit(s, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_psbend;
	emit(s, &p);
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

static int write_maps(FILE *f, pid_t pid)
{
	char path[64], line[4096], file[4096], perms[8];
	unsigned long lo, hi, off;
	uint8_t rec[4096 + 128];
	FILE *m;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	m = fopen(path, "r");
	if (!m)
		return -1;
	while (fgets(line, sizeof(line), m)) {
		struct perf_event_header h = { .type = PERF_RECORD_MMAP2 };
		uint32_t pt[2] = { pid, pid }, pf[2] = { PROT_READ | PROT_EXEC, MAP_PRIVATE };
		uint64_t v[3];
		size_t flen;

		file[0] = 0;
		if (sscanf(line, "%lx-%lx %4s %lx %*s %*s %4095s", &lo, &hi, perms, &off, file) < 4)
			continue;
		if (perms[2] != 'x' || !file[0])
			continue;
		flen = (strlen(file) + 1 + 7) & ~7UL;
		h.size = 72 + flen;
		memset(rec, 0, h.size);
		v[0] = lo;
		v[1] = hi - lo;
		v[2] = off;
		memcpy(rec, &h, sizeof(h));
		memcpy(rec + 8, pt, 8);
		memcpy(rec + 16, v, 24);
		memcpy(rec + 64, pf, 8);
		memcpy(rec + 72, file, strlen(file) + 1);
		itrace_write_section(f, ITRACE_SEC_PERF, 0, rec, h.size);
	}
	fclose(m);
	return 0;
}

int main(int argc, char **argv)
{
	struct itrace_file_header hdr;
	struct user_regs_struct regs;
	struct pt_config cfg;
	struct sim s = { 0 };
	long ret;
	const char *out = NULL;
	uint64_t insns = 0, off = 0;
	uint8_t *vdso;
	size_t vdso_size;
	int status, memfd, pending_pge = 0, argi = 1;
	char mempath[64];
	FILE *f;
	pid_t pid;

	s.retcomp = 1;
	if (argi < argc && !strcmp(argv[argi], "-R")) {
		s.retcomp = 0;
		argi++;
	}
	if (argc > argi + 1 && !strcmp(argv[argi], "-o")) {
		out = argv[argi + 1];
		argi += 2;
	}
	if (argi < argc && !strcmp(argv[argi], "--"))
		argi++;
	if (!out || argi >= argc) {
		fprintf(stderr, "usage: ptsim [-R] -o FILE -- CMD [ARGS...]\n");
		return 2;
	}

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

	ptrace(PTRACE_GETREGS, pid, NULL, &regs);
	psb(&s);
	ip_pkt(&s, ppt_tip_pge, regs.rip, 0);

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
			insns++;	/* the exit_group syscall */
			ip_pkt(&s, ppt_tip_pgd, 0, 1);
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
		insns++;
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
			break;
		}
		if (pending_pge) {
			ip_pkt(&s, ppt_tip_pge, regs.rip, 0);
			pending_pge = 0;
		}
	}
	flush_tnt(&s);
	if (s.err) {
		fprintf(stderr, "ptsim: encoder error (trace larger than %d bytes?)\n", TRACE_MAX);
		return 1;
	}
	pt_enc_get_offset(s.enc, &off);

	f = fopen(out, "wb");
	if (!f) {
		perror(out);
		return 1;
	}
	itrace_header_init(&hdr);
	hdr.page_size = sysconf(_SC_PAGESIZE);
	itrace_cpu_ident(&hdr);
	hdr.pid = pid;
	itrace_write_header(f, &hdr);
	itrace_write_section(f, ITRACE_SEC_CMDLINE, 0, argv[argi], strlen(argv[argi]) + 1);
	if (!itrace_read_vdso(&vdso, &vdso_size)) {
		itrace_write_section(f, ITRACE_SEC_VDSO, 0, vdso, vdso_size);
		free(vdso);
	}
	write_maps(f, pid);
	itrace_write_section(f, ITRACE_SEC_TRACE, 0, s.buf, off);
	itrace_write_section(f, ITRACE_SEC_END, 0, NULL, 0);
	if (fclose(f)) {
		perror(out);
		return 1;
	}
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	waitpid(pid, &status, 0);
	fprintf(stderr, "%llu\n", (unsigned long long)insns);
	return 0;
}
