// SPDX-License-Identifier: GPL-2.0
/*
 * kcut: the user-mode part of a user+kernel recording (itrace record -k),
 * as the trace a user-only recording would hold, for decoding without the
 * kernel's code.
 *
 *   kcut IN.itrace OUT.itrace
 *
 * The running kernel's text is not vmlinux's (alternatives, static keys
 * patched at boot), so libipt walks kernel code only with a copy of the
 * live text (perf record --kcore's, which the conformance suite also
 * decodes through); kcut checks the user-mode part without any kernel
 * text.  It works on packets only, with libipt's packet decoder and
 * encoder, and never looks at code:
 *  - the mode comes from the IPs of the packets themselves (bit 63: kernel);
 *  - in user mode every packet is kept, IP packets re-encoded with their
 *    full address (sext-48), since the last-IP compression state changes
 *    when the kernel's packets go;
 *  - a TIP into the kernel (system call, interrupt after its FUP, fault)
 *    becomes TIP.PGD with the IP suppressed, what user-only tracing gives;
 *  - a TIP back to user mode (sysret, iret) becomes TIP.PGE at its target;
 *  - kernel-mode packets are dropped, PSB and PSBEND kept (no FUP inside);
 *  - a MODE.Exec outside PSB+ belongs to the IP packet after it (the far
 *    branch it binds to): kept before a TIP in user mode and before a
 *    TIP.PGE made of a return to user mode (a compat-mode program: the
 *    kernel runs in 64-bit mode, its user mode in 32-bit), dropped before
 *    a TIP into the kernel, as user-only tracing gives it.
 * A TNT packet never spans a TIP, so no branch of one mode is counted in
 * the other.  Every other section of the recording is copied unchanged.
 * itrace decode cuts a -k trace it has no kernel code for by the same
 * rules (tools/itrace/ucut.c; it keeps the kernel's timing packets and
 * PIPs too): verify.sh checks that its decode equals this copy's.
 * It reports how many packets it kept and the MODE.Exec packets it read
 * (64-, 32- and 16-bit).  Exit status 0, or 1 (bad input, a packet libipt
 * cannot parse, more than one contiguous run of trace).
 */
#include <intel-pt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itrace-file.h"
#include "ucut.h"

static int is_kernel(uint64_t ip)
{
	return ip >> 63;
}

struct out {
	struct pt_encoder *enc;
	unsigned long read, kept, pgd, pge;
	unsigned long modes[3];	/* MODE.Exec read: 16-, 32-, 64-bit */
	struct pt_packet mode;	/* a MODE.Exec waiting for its IP packet */
	int have_mode;
};

static int emit(struct out *o, const struct pt_packet *p)
{
	int err = pt_enc_next(o->enc, p);

	if (err < 0)
		fprintf(stderr, "kcut: encoding a packet of type %d: %s\n", p->type,
			pt_errstr(pt_errcode(err)));
	else
		o->kept++;
	return err < 0 ? -1 : 0;
}

/* The MODE.Exec before the IP packet being handled: emitted if @keep. */
static int flush_mode(struct out *o, int keep)
{
	int err = 0;

	if (o->have_mode && keep)
		err = emit(o, &o->mode);
	o->have_mode = 0;
	return err;
}

static int emit_ip(struct out *o, enum pt_packet_type type, uint64_t ip, int suppressed)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	p.payload.ip.ipc = suppressed ? pt_ipc_suppressed : pt_ipc_sext_48;
	p.payload.ip.ip = suppressed ? 0 : ip & 0xffffffffffffULL;
	return emit(o, &p);
}

static long cut(const uint8_t *in, size_t size, uint8_t *buf, size_t bufsize,
		struct out *o)
{
	struct pt_config cfg;
	struct pt_packet_decoder *dec;
	struct pt_packet p;
	uint64_t last = 0, ip;
	uint64_t off = 0;
	int user = 0, in_psb = 0, err;
	long ret = -1;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)in;
	cfg.end = (uint8_t *)in + size;
	dec = pt_pkt_alloc_decoder(&cfg);
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + bufsize;
	o->enc = pt_alloc_encoder(&cfg);
	if (!dec || !o->enc) {
		fprintf(stderr, "kcut: out of memory\n");
		goto out;
	}
	err = pt_pkt_sync_forward(dec);
	if (err < 0) {
		fprintf(stderr, "kcut: no PSB in the trace\n");
		goto out;
	}
	for (;;) {
		pt_pkt_get_offset(dec, &off);
		err = pt_pkt_next(dec, &p, sizeof(p));
		if (err == -pte_eos)
			break;
		if (err < 0) {
			fprintf(stderr, "kcut: packet at trace offset 0x%llx: %s\n",
				(unsigned long long)off, pt_errstr(pt_errcode(err)));
			goto out;
		}
		o->read++;
		switch (p.type) {
		case ppt_psb:
			last = 0;
			in_psb = 1;
			err = flush_mode(o, user);
			if (!err)
				err = emit(o, &p);
			break;
		case ppt_psbend:
			in_psb = 0;
			err = emit(o, &p);
			break;
		case ppt_fup:
		case ppt_tip:
		case ppt_tip_pge:
		case ppt_tip_pgd: {
			int suppressed = p.payload.ip.ipc == pt_ipc_suppressed;

			ip = ucut_last_ip(last, &p.payload.ip);
			if (!suppressed)
				last = ip;
			if (p.type == ppt_fup) {
				/* in PSB+: the current IP, and so the mode */
				if (in_psb && !suppressed)
					user = !is_kernel(ip);
				err = flush_mode(o, user);
				if (!err && user)
					err = emit_ip(o, ppt_fup, ip, suppressed);
			} else if (p.type == ppt_tip_pgd) {
				err = flush_mode(o, user);
				if (!err && user)
					err = emit_ip(o, ppt_tip_pgd, ip, suppressed);
				user = 0;
			} else if (suppressed) {
				err = flush_mode(o, user);
				if (!err && user)
					err = emit_ip(o, p.type, ip, 1);
			} else if (user && is_kernel(ip)) {
				err = flush_mode(o, 0);
				if (!err)
					err = emit_ip(o, ppt_tip_pgd, 0, 1);
				o->pgd++;
				user = 0;
			} else if (!user && !is_kernel(ip)) {
				err = flush_mode(o, 1);
				if (!err)
					err = emit_ip(o, ppt_tip_pge, ip, 0);
				if (p.type == ppt_tip)
					o->pge++;
				user = 1;
			} else {
				err = flush_mode(o, user);
				if (!err && user)
					err = emit_ip(o, p.type, ip, 0);
			}
			break;
		}
		case ppt_pad:
			break;
		case ppt_mode:
			if (p.payload.mode.leaf == pt_mol_exec)
				o->modes[p.payload.mode.bits.exec.csl ? 2 :
					 p.payload.mode.bits.exec.csd ? 1 : 0]++;
			if (!in_psb && p.payload.mode.leaf == pt_mol_exec) {
				o->have_mode = 1;
				o->mode = p;
				break;
			}
			/* fall through */
		default:
			/* MODE, TNT, timing...: their mode is the current one */
			if (user || in_psb)
				err = emit(o, &p);
			break;
		}
		if (err < 0)
			goto out;
	}
	ret = pt_enc_get_offset(o->enc, &off) < 0 ? -1 : (long)off;
out:
	if (o->enc)
		pt_free_encoder(o->enc);
	if (dec)
		pt_pkt_free_decoder(dec);
	return ret;
}

int main(int argc, char **argv)
{
	struct itrace_data d;
	struct out o = { 0 };
	char err[512];
	uint8_t *buf;
	size_t bufsize;
	long n;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: kcut IN.itrace OUT.itrace\n");
		return 2;
	}
	if (itrace_read_file(argv[1], &d, err, sizeof(err))) {
		fprintf(stderr, "kcut: %s\n", err);
		return 1;
	}
	if (d.nr_segs != 1) {
		fprintf(stderr, "kcut: %s: %zu runs of trace; only one (no loss) is handled\n",
			argv[1], d.nr_segs);
		return 1;
	}
	/* re-encoded IPs grow: at most 7 bytes from 3 (TIP of update-16) */
	bufsize = d.segs[0].size * 3 + 4096;
	buf = malloc(bufsize);
	if (!buf) {
		fprintf(stderr, "kcut: out of memory\n");
		return 1;
	}
	n = cut(d.trace + d.segs[0].buf_offset, d.segs[0].size, buf, bufsize, &o);
	if (n < 0)
		return 1;
	f = fopen(argv[2], "wb");
	if (!f) {
		perror(argv[2]);
		return 1;
	}
	itrace_write_header(f, &d.hdr);
	if (d.cmdline_size)
		itrace_write_section(f, ITRACE_SEC_CMDLINE, 0, d.cmdline, d.cmdline_size);
	if (d.vdso_size)
		itrace_write_section(f, ITRACE_SEC_VDSO, 0, d.vdso, d.vdso_size);
	itrace_write_section(f, ITRACE_SEC_PERF, 0, d.perf, d.perf_size);
	itrace_write_section(f, ITRACE_SEC_TRACE, 0, buf, n);
	itrace_write_section(f, ITRACE_SEC_END, 0, NULL, 0);
	if (fclose(f)) {
		perror(argv[2]);
		return 1;
	}
	fprintf(stderr,
		"kcut: %zu bytes of trace -> %ld: %lu of %lu packets kept, MODE.Exec read: %lu 64-bit, %lu 32-bit, %lu 16-bit; %lu entries to and %lu returns from the kernel\n",
		d.segs[0].size, n, o.kept, o.read, o.modes[2], o.modes[1], o.modes[0],
		o.pgd, o.pge);
	itrace_data_free(&d);
	free(buf);
	return 0;
}
