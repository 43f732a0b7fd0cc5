// SPDX-License-Identifier: GPL-2.0
/*
 * The user-mode part of a user+kernel Intel PT trace (record -k, perf
 * record -e intel_pt//) as the trace of user-mode tracing would hold it,
 * so that a decoder without the kernel's code follows every user-mode
 * instruction: without it, libipt stops at the first kernel instruction
 * (no memory there) and resumes only at the next PSB, and the user-mode
 * code run in between is lost.
 *
 * It works on packets, with libipt's packet decoder, and never looks at
 * code.  The mode is the one of the packets' IPs (bit 63: kernel):
 *  - a TIP, TIP.PGE or FUP into the kernel (a system call, an interrupt
 *    or exception after its FUP) becomes a TIP.PGD with the IP suppressed,
 *    as CPL filtering writes it (IA32_RTIT_CTL.OS = 0, SDM Vol. 3C 33.2.2,
 *    "PacketEn"); a TIP back to user mode (SYSRET, IRET) becomes a
 *    TIP.PGE at its target;
 *  - in user mode every packet is kept; IP packets are written again with
 *    their whole address (sext-48) since the last-IP compression state
 *    (SDM "IP Compression") changes when the kernel's packets go;
 *  - of the kernel's packets, those that do not depend on the mode stay:
 *    PSB+, timing (TSC, MTC, TMA, CYC, CBR), PIP (the context switches:
 *    the decoder learns the new CR3 from them), OVF (a loss), STOP;
 *  - a MODE.Exec outside PSB+ binds to the IP packet after it, and goes
 *    with it;
 *  - a packet libipt cannot parse is copied, with what follows it up to
 *    the next PSB, as it is: the decoder reports it where it was.
 * A TNT packet never spans a TIP, so no branch of one mode is counted in
 * the other.  The offsets of the cut trace map back to the trace's by
 * ucut_offset().
 */
#include <intel-pt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ucut.h"

struct cutter {
	struct ucut		*c;
	const uint8_t		*in;
	struct pt_encoder	*enc;
	uint8_t			scratch[16];	/* one packet, re-encoded */
	uint64_t		last;		/* last IP (decompression) */
	bool			user;		/* user-mode packets being written */
	bool			in_psb;
	bool			ovf;		/* after an OVF: the next FUP tells the mode */
	bool			have_mode;	/* a MODE.Exec waiting for its IP packet */
	uint64_t		mode_off;
	int			mode_len;
};

static bool is_kernel(uint64_t ip)
{
	return ip >> 63;
}

/**
 * ucut_last_ip() - the IP of an IP packet
 * @last: the last IP (of the last IP packet with one, 0 after a PSB)
 * @p:    the packet's IP payload
 *
 * Return: the IP, by last-IP decompression (SDM Vol. 3C, "IP Compression");
 * @last if the IP is suppressed.
 */
uint64_t ucut_last_ip(uint64_t last, const struct pt_packet_ip *p)
{
	switch (p->ipc) {
	case pt_ipc_update_16:
		return (last & ~0xffffULL) | (p->ip & 0xffffULL);
	case pt_ipc_update_32:
		return (last & ~0xffffffffULL) | (p->ip & 0xffffffffULL);
	case pt_ipc_sext_48:
		return (uint64_t)((int64_t)(p->ip << 16) >> 16);
	case pt_ipc_update_48:
		return (last & ~0xffffffffffffULL) | (p->ip & 0xffffffffffffULL);
	case pt_ipc_full:
		return p->ip;
	default:
		return last;
	}
}

/* len bytes of the cut trace that were at trace offset in_off: 0 or -1 (ENOMEM) */
static int put(struct cutter *k, const uint8_t *p, size_t len, uint64_t in_off)
{
	struct ucut *c = k->c;

	if (c->size + len > c->cap) {
		size_t cap = c->cap * 2 > c->size + len ? c->cap * 2 : c->size + len + 4096;
		uint8_t *b = realloc(c->bytes, cap);

		if (!b)
			return -1;
		c->bytes = b;
		c->cap = cap;
	}
	/* a new map entry where the distance to the trace's offsets changes */
	if (!c->nr_map || c->map[c->nr_map - 1].in + (c->size - c->map[c->nr_map - 1].out) !=
			  in_off) {
		if (c->nr_map == c->map_cap) {
			size_t n = c->map_cap ? c->map_cap * 2 : 256;
			struct ucut_map *m = realloc(c->map, n * sizeof(*m));

			if (!m)
				return -1;
			c->map = m;
			c->map_cap = n;
		}
		c->map[c->nr_map].out = c->size;
		c->map[c->nr_map].in = in_off;
		c->nr_map++;
	}
	memcpy(c->bytes + c->size, p, len);
	c->size += len;
	return 0;
}

static int copy(struct cutter *k, uint64_t off, int len)
{
	return put(k, k->in + off, len, off);
}

/* An IP packet of type at trace offset off, written with its whole IP. */
static int put_ip(struct cutter *k, enum pt_packet_type type, uint64_t ip, bool suppressed,
		  uint64_t off)
{
	struct pt_packet p;
	uint64_t n = 0;

	memset(&p, 0, sizeof(p));
	p.type = type;
	p.payload.ip.ipc = suppressed ? pt_ipc_suppressed : pt_ipc_sext_48;
	p.payload.ip.ip = suppressed ? 0 : ip & 0xffffffffffffULL;
	if (pt_enc_sync_set(k->enc, 0) < 0 || pt_enc_next(k->enc, &p) < 0 ||
	    pt_enc_get_offset(k->enc, &n) < 0)
		return -1;
	return put(k, k->scratch, n, off);
}

/* The MODE.Exec before the IP packet being handled: written if keep. */
static int flush_mode(struct cutter *k, bool keep)
{
	bool have = k->have_mode;

	k->have_mode = false;
	return have && keep ? copy(k, k->mode_off, k->mode_len) : 0;
}

static int ip_packet(struct cutter *k, const struct pt_packet *p, uint64_t off)
{
	bool suppressed = p->payload.ip.ipc == pt_ipc_suppressed;
	uint64_t ip = ucut_last_ip(k->last, &p->payload.ip);
	bool was = k->user;

	if (!suppressed)
		k->last = ip;
	switch (p->type) {
	case ppt_fup:
		/* in PSB+ and after an OVF: the current IP, and so the mode */
		if ((k->in_psb || k->ovf) && !suppressed)
			k->user = !is_kernel(ip);
		k->ovf = false;
		if (flush_mode(k, k->user))
			return -1;
		return k->user && (suppressed || !is_kernel(ip)) ?
		       put_ip(k, ppt_fup, ip, suppressed, off) : 0;
	case ppt_tip_pgd:
		k->user = false;
		if (flush_mode(k, was))
			return -1;
		return was ? put_ip(k, ppt_tip_pgd, ip, suppressed, off) : 0;
	default:
		break;
	}
	/* TIP, TIP.PGE */
	if (suppressed) {
		if (flush_mode(k, was))
			return -1;
		return was ? put_ip(k, p->type, ip, true, off) : 0;
	}
	k->user = !is_kernel(ip);
	if (flush_mode(k, k->user))
		return -1;
	if (was && !k->user) {
		k->c->entries++;
		return put_ip(k, ppt_tip_pgd, 0, true, off);
	}
	if (!was && k->user)
		return put_ip(k, ppt_tip_pge, ip, false, off);
	return k->user ? put_ip(k, p->type, ip, false, off) : 0;
}

static int packet(struct cutter *k, const struct pt_packet *p, uint64_t off, int len)
{
	switch (p->type) {
	case ppt_psb:
		k->last = 0;
		k->in_psb = true;
		k->ovf = false;
		if (flush_mode(k, k->user))
			return -1;
		return copy(k, off, len);
	case ppt_psbend:
		k->in_psb = false;
		return copy(k, off, len);
	case ppt_fup:
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
		return ip_packet(k, p, off);
	case ppt_ovf:
		/* tracing resumes at the FUP that follows, or is off */
		k->have_mode = false;
		k->user = false;
		k->ovf = true;
		return copy(k, off, len);
	case ppt_mode:
		if (!k->in_psb && p->payload.mode.leaf == pt_mol_exec) {
			k->have_mode = true;
			k->mode_off = off;
			k->mode_len = len;
			return 0;
		}
		break;
	case ppt_pad:
		return 0;
	case ppt_tsc:
	case ppt_mtc:
	case ppt_tma:
	case ppt_cyc:
	case ppt_cbr:
	case ppt_pip:
	case ppt_vmcs:
	case ppt_stop:
		return copy(k, off, len);
	default:
		break;
	}
	/* TNT, MODE.TSX, PTWRITE, power events...: of the current mode */
	return k->user || k->in_psb ? copy(k, off, len) : 0;
}

/**
 * ucut_trace() - the user-mode part of a user+kernel Intel PT trace
 * @c:     the result: zeroed, or a previous result whose memory is reused;
 *         freed with ucut_free()
 * @trace: the trace: one contiguous run of packets
 * @size:  its size in bytes
 *
 * Writes the trace that tracing of user mode only would have written in
 * the same run (see the comment at the top of this file) to @c->bytes.
 *
 * Return: 0, or -1 when memory runs out (errno ENOMEM).
 */
int ucut_trace(struct ucut *c, const uint8_t *trace, size_t size)
{
	struct cutter k = { .c = c, .in = trace };
	struct pt_packet_decoder *dec;
	struct pt_config cfg;
	struct pt_packet p;
	uint64_t off = 0, next;
	int ret = -1, n;

	c->size = 0;
	c->nr_map = 0;
	c->entries = 0;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)trace;
	cfg.end = (uint8_t *)trace + size;
	dec = pt_pkt_alloc_decoder(&cfg);
	pt_config_init(&cfg);
	cfg.begin = k.scratch;
	cfg.end = k.scratch + sizeof(k.scratch);
	k.enc = pt_alloc_encoder(&cfg);
	if (!dec || !k.enc)
		goto out;
	/* bytes before the first PSB: as they are, the decoder skips them */
	if (pt_pkt_sync_forward(dec) < 0 || pt_pkt_get_offset(dec, &off) < 0)
		off = size;
	if (off && copy(&k, 0, off))
		goto out;
	while (off < size) {
		n = pt_pkt_next(dec, &p, sizeof(p));
		if (n == -pte_eos)
			break;
		if (n < 0) {
			/*
			 * As it is, up to the next PSB, where all starts again;
			 * to the end if libipt finds none after off (it finds
			 * a PSB that began before the bad packet, in its bytes).
			 */
			next = size;
			if (pt_pkt_sync_forward(dec) < 0 || pt_pkt_get_offset(dec, &next) < 0 ||
			    next <= off)
				next = size;
			if (copy(&k, off, next - off))
				goto out;
			k.user = false;
			k.in_psb = false;
			k.ovf = false;
			k.have_mode = false;
			k.last = 0;
			off = next;
			continue;
		}
		if (packet(&k, &p, off, n))
			goto out;
		off += n;
	}
	ret = 0;
out:
	if (k.enc)
		pt_free_encoder(k.enc);
	if (dec)
		pt_pkt_free_decoder(dec);
	return ret;
}

/**
 * ucut_offset() - the trace offset of an offset of the cut trace
 * @c:   the cut trace (ucut_trace())
 * @off: an offset into @c->bytes, in bytes
 *
 * Return: the offset in the trace ucut_trace() read of the byte at @off
 * (of a packet ucut_trace() wrote again, its start: the packet it came
 * from).
 */
uint64_t ucut_offset(const struct ucut *c, uint64_t off)
{
	size_t lo = 0, hi = c->nr_map;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->map[mid].out <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return off;
	return c->map[lo - 1].in + (off - c->map[lo - 1].out);
}

/**
 * ucut_free() - free what ucut_trace() allocated
 * @c: the cut trace; zeroed
 */
void ucut_free(struct ucut *c)
{
	free(c->bytes);
	free(c->map);
	memset(c, 0, sizeof(*c));
}
