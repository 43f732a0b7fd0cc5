// SPDX-License-Identifier: GPL-2.0
/* Intel BTS decode: the flow between branch records (bts.h). */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bts.h"
#include "itrace.h"

#define BTS_CACHE	4096		/* decoded instructions, direct mapped */
#define BTS_MAX_WALK	4194304		/* instructions between two records */

struct bts_cached {
	uint64_t		ip;
	const void		*image;	/* whose address space: its pt_image */
	uint8_t			size;	/* 0: empty */
	uint8_t			iclass;
	bool			is32;	/* decoded in 32-bit mode */
	uint8_t			raw[15];
};

struct bts_walker {
	const struct bts_ops	*ops;
	void			*ctx;
	struct bts_ild		*ild;
	struct bts_cached	cache[BTS_CACHE];
};

struct bts_ild {
	struct pt_encoder	*enc;
	struct pt_insn_decoder	*dec;
	struct pt_image		*image;
	uint8_t			trace[64];
	uint8_t			raw[15];
	size_t			n;
	uint64_t		ip;
};

/* The image's memory: the bytes of the instruction being decoded. */
static int ild_read(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip,
		    void *ctx)
{
	struct bts_ild *l = ctx;
	size_t at;

	if (ip < l->ip || ip - l->ip >= l->n)
		return -pte_nomap;
	at = ip - l->ip;
	if (size > l->n - at)
		size = l->n - at;
	memcpy(buf, l->raw + at, size);
	return size;
}

/*
 * Write the trace: PSB, MODE.Exec (64-bit, or 32-bit if is32), PSBEND,
 * TIP.PGE ip; its size, or a libipt error.
 */
static int ild_trace(struct bts_ild *l, uint64_t ip, bool is32)
{
	struct pt_packet p[4];
	uint64_t off = 0;
	int i, err;

	memset(p, 0, sizeof(p));
	p[0].type = ppt_psb;
	p[1].type = ppt_mode;
	p[1].payload.mode.leaf = pt_mol_exec;
	p[1].payload.mode.bits.exec.csl = !is32;
	p[1].payload.mode.bits.exec.csd = is32;
	p[2].type = ppt_psbend;
	p[3].type = ppt_tip_pge;
	p[3].payload.ip.ipc = pt_ipc_full;
	p[3].payload.ip.ip = ip;
	err = pt_enc_sync_set(l->enc, 0);
	for (i = 0; !err && i < 4; i++)
		err = pt_enc_next(l->enc, &p[i]) < 0 ? -pte_nosync : 0;
	if (err)
		return err;
	pt_enc_get_offset(l->enc, &off);
	return off;
}

/* libipt's length decoder: an encoder, a decoder and an image that reads raw. */
struct bts_ild *bts_ild_new(void)
{
	struct bts_ild *l = calloc(1, sizeof(*l));
	struct pt_config cfg;
	int size;

	if (!l)
		return NULL;
	pt_config_init(&cfg);
	cfg.begin = l->trace;
	cfg.end = l->trace + sizeof(l->trace);
	l->enc = pt_alloc_encoder(&cfg);
	l->image = pt_image_alloc("ild");
	if (!l->enc || !l->image || pt_image_set_callback(l->image, ild_read, l) < 0)
		goto fail;
	size = ild_trace(l, 0x1000, false);
	if (size <= 0)
		goto fail;
	/* every trace has the same length: a TIP.PGE with a full IP */
	cfg.end = l->trace + size;
	l->dec = pt_insn_alloc_decoder(&cfg);
	if (!l->dec || pt_insn_set_image(l->dec, l->image) < 0)
		goto fail;
	return l;
fail:
	bts_ild_free(l);
	return NULL;
}

/* Free what bts_ild_new() made (NULL: nothing). */
void bts_ild_free(struct bts_ild *l)
{
	if (!l)
		return;
	if (l->dec)
		pt_insn_free_decoder(l->dec);
	if (l->image)
		pt_image_free(l->image);
	if (l->enc)
		pt_free_encoder(l->enc);
	free(l);
}

/* Decode the instruction at raw: a trace that enables at ip, one step of the decoder. */
int bts_ild(struct bts_ild *l, const uint8_t *raw, size_t n, uint64_t ip, bool is32,
	    int *iclass)
{
	struct pt_insn in;
	struct pt_event ev;
	int status;

	if (!n)
		return 0;
	if (n > sizeof(l->raw))
		n = sizeof(l->raw);
	memcpy(l->raw, raw, n);
	l->n = n;
	l->ip = ip;
	if (ild_trace(l, ip, is32) <= 0)
		return 0;
	status = pt_insn_sync_set(l->dec, 0);
	while (status >= 0 && (status & pts_event_pending))
		status = pt_insn_event(l->dec, &ev, sizeof(ev));
	if (status < 0)
		return 0;
	memset(&in, 0, sizeof(in));
	/* a branch then fails for want of trace: the instruction is filled in */
	pt_insn_next(l->dec, &in, sizeof(in));
	if (in.ip != ip || !in.size || in.size > n)
		return 0;
	*iclass = in.iclass;
	return in.size;
}

/* A walker calling ops with ctx; NULL (with a message) when out of memory. */
struct bts_walker *bts_walker_new(const struct bts_ops *ops, void *ctx)
{
	struct bts_walker *w = calloc(1, sizeof(*w));

	if (w)
		w->ild = bts_ild_new();
	if (!w || !w->ild) {
		fprintf(stderr, "itrace: out of memory\n");
		free(w);
		return NULL;
	}
	w->ops = ops;
	w->ctx = ctx;
	return w;
}

/* Free a walker (NULL: nothing). */
void bts_walker_free(struct bts_walker *w)
{
	if (!w)
		return;
	bts_ild_free(w->ild);
	free(w);
}

/* The instruction at ip of image im into *in: true, or false if there is no code. */
static bool insn_at(struct bts_walker *w, const struct itrace_image *im, uint64_t ip,
		    struct pt_insn *in)
{
	struct bts_cached *c = &w->cache[(ip ^ (ip >> 12)) % BTS_CACHE];
	int iclass = ptic_other;
	bool is32 = false;
	uint8_t raw[15];
	int n, len;

	if (c->size && c->ip == ip && c->image == im->image)
		goto found;
	if (ip >= BTS_KERNEL_START)
		return false;	/* never the kernel's code */
	/* the mode from the file: a BTS trace has no MODE.Exec */
	n = itrace_image_read_mode(im, raw, sizeof(raw), ip, &is32);
	if (n <= 0)
		return false;
	len = bts_ild(w->ild, raw, n, ip, is32, &iclass);
	if (len <= 0 || len > n)
		return false;
	c->ip = ip;
	c->image = im->image;
	c->size = len;
	c->iclass = iclass;
	c->is32 = is32;
	memcpy(c->raw, raw, len);
found:
	memset(in, 0, sizeof(*in));
	in->ip = ip;
	in->size = c->size;
	in->iclass = (enum pt_insn_class)c->iclass;
	in->mode = c->is32 ? ptem_32bit : ptem_64bit;
	memcpy(in->raw, c->raw, c->size);
	return true;
}

/*
 * From ip, do the instructions reach to?  Only not-taken conditional
 * branches and other instructions may come before it: any other branch
 * would have made a record.  Returns NULL, or why not (in buf).
 */
static const char *reaches(struct bts_walker *w, const struct itrace_image *im, uint64_t ip,
			   uint64_t to, char *buf, size_t len)
{
	struct pt_insn in;
	unsigned int n;

	for (n = 0; n < BTS_MAX_WALK; n++) {
		if (!insn_at(w, im, ip, &in)) {
			snprintf(buf, len,
				 "no code at 0x%llx on the way from the last record to 0x%llx",
				 (unsigned long long)ip, (unsigned long long)to);
			return buf;
		}
		if (ip == to)
			return NULL;
		if (in.iclass != ptic_other && in.iclass != ptic_cond_jump) {
			snprintf(buf, len,
				 "branch at 0x%llx not recorded on the way to the record's 0x%llx (records lost?)",
				 (unsigned long long)ip, (unsigned long long)to);
			return buf;
		}
		ip += in.size;
	}
	snprintf(buf, len, "0x%llx not reached in %u instructions", (unsigned long long)to, n);
	return buf;
}

/* Give the instructions [ip, to) (and to itself if with_to) to the caller. */
static void emit(struct bts_walker *w, const struct itrace_image *im, uint64_t ip, uint64_t to,
		 bool with_to)
{
	struct pt_insn in;

	while (insn_at(w, im, ip, &in)) {
		if (ip == to && !with_to)
			break;
		w->ops->insn(w->ctx, &in);
		if (ip == to)
			break;
		ip += in.size;
	}
}

/* One record: the flow up to its source, then its target (bts.h). */
void bts_record(struct bts_walker *w, const struct itrace_image *im, struct bts_pos *pos,
		uint64_t off, const struct bts_record *r)
{
	/* 0: a kernel address a core dump removed (no user code is at 0) */
	bool from_k = !bts_user_addr(r->from);
	bool to_k = !bts_user_addr(r->to);
	struct pt_insn in;
	char why[160];
	const char *err;
	bool ran;

	if (from_k) {
		/* kernel code: never walked; a return to user mode resumes there */
		if (!to_k) {
			w->ops->kernel(w->ctx, off, r->from, r->to, false);
			pos->ip = r->to;
			pos->have = true;
			pos->in_kernel = false;
		}
		return;
	}
	if (pos->have) {
		/*
		 * A branch (or a system call, a trap) ran; an instruction
		 * that is none (an interrupt's next one, an exception's
		 * faulting one) did not yet.  Nor did a branch whose record
		 * goes into the kernel other than as a system call or trap:
		 * an exception at it (a call whose push faults), or an
		 * interrupt before it.
		 */
		ran = insn_at(w, im, r->from, &in) &&
		      (to_k ? in.iclass == ptic_far_call : in.iclass != ptic_other);
		err = reaches(w, im, pos->ip, r->from, why, sizeof(why));
		if (!err) {
			emit(w, im, pos->ip, r->from, ran);
		} else if (pos->in_kernel) {
			/* back from the kernel elsewhere: on at this record */
			w->ops->resume(w->ctx, off, r->from);
			emit(w, im, r->from, r->from, ran);
		} else {
			w->ops->gap(w->ctx, off, pos->ip, err);
		}
	}
	/* else: where the trace starts, or after a gap: from the target on */
	if (to_k) {
		/* back after it: past a system call or trap, else at from */
		pos->ip = r->from;
		if (insn_at(w, im, r->from, &in) && in.iclass == ptic_far_call)
			pos->ip += in.size;
		else	/* a system call is in the flow already: it is its own entry */
			w->ops->kernel(w->ctx, off, r->from, r->to, true);
		pos->have = true;
		pos->in_kernel = true;
		return;
	}
	pos->ip = r->to;
	pos->have = true;
	pos->in_kernel = false;
}

/* A canonical x86-64 address: bits 63 to 47 all the same. */
static bool canonical(uint64_t a)
{
	return !(a >> 47) || (a >> 47) == 0x1ffff;
}

/* The record or padding at p (bts.h). */
enum bts_item bts_next(const uint8_t *p, size_t avail, uint64_t off, uint32_t page_size,
		       struct bts_record *r, size_t *len)
{
	size_t i, to_page = page_size ? page_size - off % page_size : BTS_RECORD_SIZE;
	size_t n = to_page < BTS_RECORD_SIZE ? to_page : BTS_RECORD_SIZE;
	bool zero = true;

	for (i = 0; i < avail && i < n && zero; i++)
		zero = !p[i];
	if (zero && avail >= BTS_RECORD_SIZE && n < BTS_RECORD_SIZE) {
		/*
		 * Zeroes to the end of the page: the padding at the end of a
		 * chunk, unless they are the low bytes of a record that goes
		 * on into the next page (one of the same chunk): padding
		 * read as a record has a from of 0 or not canonical.
		 */
		memcpy(r, p, sizeof(*r));
		zero = !r->from || !canonical(r->from) || !canonical(r->to);
	}
	if (zero) {
		*len = n < avail ? n : avail;
		return BTS_ITEM_PAD;
	}
	if (avail < BTS_RECORD_SIZE) {
		*len = avail;
		return BTS_ITEM_CUT;
	}
	memcpy(r, p, sizeof(*r));
	*len = BTS_RECORD_SIZE;
	return BTS_ITEM_RECORD;
}
